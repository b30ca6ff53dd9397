#!/usr/bin/env bash
# tests/bench/tbb.sh [BUILD_DIR]: sf-exec against Intel TBB's parallel_pipeline on the Work graph.
# The in-process peer. Intel TBB's parallel_pipeline (a serial_in_order
# source, a parallel Work stage, a serial_in_order CSV sink, 256 tuples per token; tests/bench/tbb/)
# against sf-exec on the same Work graph at 1, 20, 200 and 2000 rounds per tuple, one thread against
# width 1 and two against width 2; min(SF_BENCH_N, 400000000 / rounds) tuples; every output is
# checked identical to sf-exec's at width 1. Built only when libtbb-dev is installed; SF_BENCH_TBB=0
# skips it.
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"

[ "${SF_BENCH_TBB:-1}" != 0 ] || bench_skip "SF_BENCH_TBB=0"
[ -x "$bin/sf-bench-tbb-work" ] ||
  bench_skip "sf-bench-tbb-work is not built (apt-get install libtbb-dev, then rerun tools/setup.sh)"
echo "6. Work graph: sf-exec against TBB parallel_pipeline (256 tuples per token), outputs identical,"
echo "   median of $RUNS alternating runs; ratio = TBB's time / sf's (above 1: sf is faster)"
printf '   %-6s %-8s %9s %9s %6s   %9s %9s %6s   %s\n' rounds tuples "sf w1 s" "tbb 1 s" ratio "sf w2 s" "tbb 2 s" ratio "sf speed-up w2/w1"
for k in 1 20 200 2000; do
  tn=$((400000000 / k)); [ "$tn" -gt "$N" ] && tn=$N
  work_graph "$tn" "$k" out/tw1.csv >tw-1.xml
  work_graph "$tn" "$k" out/tw2.csv >tw-2.xml
  "$bin/sf-xform" -w 1 tw-1.xml -o tw1.xml
  "$bin/sf-xform" -w 2 tw-2.xml -o tw2.xml
  bench_alternate -c 'bench_same out/tw2.csv out/tw1.csv "sf width 2"; bench_same out/tbb1.csv out/tw1.csv "TBB 1 thread"
    bench_same out/tbb2.csv out/tw1.csv "TBB 2 threads"' \
    '"$bin/sf-exec" tw1.xml' '"$bin/sf-exec" tw2.xml' \
    '"$bin/sf-bench-tbb-work" "$tn" "$k" 1 out/tbb1.csv' '"$bin/sf-bench-tbb-work" "$tn" "$k" 2 out/tbb2.csv'
  s1=${bench_med[0]} s2=${bench_med[1]} b1=${bench_med[2]} b2=${bench_med[3]}
  printf '   %-6s %-8s %9s %9s %5sx   %9s %9s %5sx   %s\n' "$k" "$tn" "$s1" "$b1" "$(ratio "$b1" "$s1")" \
    "$s2" "$b2" "$(ratio "$b2" "$s2")" "$(ratio "$s1" "$s2")"
  bench_figure "w1.k$k" "$(mrate "$tn" "$s1")" "$(mrate "$tn" "$b1")" "M tuples/s" \
    "Work graph, $k rounds, $tn tuples: sf width 1 against TBB on 1 thread"
  bench_figure "w2.k$k" "$(mrate "$tn" "$s2")" "$(mrate "$tn" "$b2")" "M tuples/s" \
    "Work graph, $k rounds, $tn tuples: sf width 2 against TBB on 2 threads"
  bench_figure "speedup.k$k" "$(mrate "$tn" "$s2")" "$(mrate "$tn" "$s1")" "M tuples/s" \
    "Work graph, $k rounds, $tn tuples: sf width 2 against width 1"
done
bench_end
