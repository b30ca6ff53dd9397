#!/usr/bin/env bash
# tests/bench/chain.sh [BUILD_DIR]: sf-exec against hand-written C on a four-operator chain.
# Beacon -> Functor -> Filter -> FileSink, tuples/s of sf-exec
# against a hand-written C program doing the same work on the same data (tests/bench/baseline_chain.c);
# the output files are checked identical. SF_BENCH_N tuples (default 5000000).
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"

chain_graph "$N" out/chain.csv >chain.xml
bench_alternate -c 'bench_same out/chain.csv out/baseline.csv "hand-written C"' \
  '"$bin/sf-exec" chain.xml' '"$bin/sf-bench-baseline-chain" "$N" out/baseline.csv'
t_sf=${bench_med[0]} t_c=${bench_med[1]}
echo "1. chain Beacon->Functor->Filter->FileSink, $N tuples (outputs identical), median of $RUNS alternating runs"
printf '   sf-exec          %8ss  %s\n' "$t_sf" "$(rate "$N" "$t_sf")"
printf '   hand-written C   %8ss  %s\n' "$t_c" "$(rate "$N" "$t_c")"
printf '   sf-exec reaches %s of the hand-written program'"'"'s rate\n' "$(percent "$t_c" "$t_sf")"
bench_figure rate "$(mrate "$N" "$t_sf")" "$(mrate "$N" "$t_c")" "M tuples/s" \
  "chain Beacon -> Functor -> Filter -> FileSink, $N tuples: sf-exec against hand-written C"
bench_end
