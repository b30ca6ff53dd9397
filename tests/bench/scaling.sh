#!/usr/bin/env bash
# tests/bench/scaling.sh [BUILD_DIR]: a CPU-bound Work region at width 2 against width 1.
# A CPU-bound Work region (2000 splitmix64 rounds per tuple) at
# width 1 and width 2: the speed-up (its limit is the number of CPUs, at most 2.0 at width 2); the
# outputs are checked identical. SF_BENCH_WORK_N tuples (default 200000).
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"

WN=${SF_BENCH_WORK_N:-200000}
work_graph "$WN" 2000 out/work1.csv >work-1.xml
work_graph "$WN" 2000 out/work2.csv >work-2.xml
"$bin/sf-xform" -w 1 work-1.xml -o work1.xml
"$bin/sf-xform" -w 2 work-2.xml -o work2.xml
bench_alternate -c 'bench_same out/work2.csv out/work1.csv "width 2"' '"$bin/sf-exec" work1.xml' '"$bin/sf-exec" work2.xml'
t1=${bench_med[0]} t2=${bench_med[1]}
echo "2. CPU-bound Work region (2000 splitmix64 rounds per tuple), $WN tuples, median of $RUNS alternating runs"
printf '   width 1   %8ss  %s\n' "$t1" "$(rate "$WN" "$t1")"
printf '   width 2   %8ss  %s\n' "$t2" "$(rate "$WN" "$t2")"
printf '   speed-up %s (limit 2.0 on this machine)\n' "$(ratio "$t1" "$t2")"
bench_figure width2 "$(mrate "$WN" "$t2")" "$(mrate "$WN" "$t1")" "M tuples/s" \
  "Work region (2000 rounds), $WN tuples: width 2 against width 1 (the ratio is the speed-up)"
bench_end
