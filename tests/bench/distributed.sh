#!/usr/bin/env bash
# tests/bench/distributed.sh [BUILD_DIR]: two executors on loopback against one process and the raw gRPC ceiling.
# A cheap pipeline (a Beacon on executor a; a Filter keeping
# 0.1 % and a FileSink on executor b) over two executors on loopback under tools/sf-launch, at batch
# sizes 16, 64, 256 and 1024, against the same graph in one process, and against the raw ceiling:
# a minimal gRPC core streaming loop of protobuf-c batches of the same tuples between two processes
# (tests/bench/grpc_ceiling.c) at 256 and 1024 tuples per message. SF_BENCH_N tuples; every
# two-executor output is checked identical to the one-process output.
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"

[ -x "$bin/sf-bench-grpc-ceiling" ] || bench_skip "sf-bench-grpc-ceiling is not built"
DN=$N
p1=$((20000 + RANDOM % 20000)); p2=$((p1 + 1))
hosts="<host name=\"a\" address=\"127.0.0.1:$p1\"/><host name=\"b\" address=\"127.0.0.1:$p2\"/>"
# one graph per run kind, differing only in the output file, so that every output can be compared
cheap_graph "$DN" "$hosts" ' host="a"' ' host="b"' out/dist_one.csv >dist-one.xml
batches=(16 64 256 1024)
cmds=('"$bin/sf-exec" dist-one.xml') check=""
for b in "${batches[@]}"; do
  cheap_graph "$DN" "$hosts" ' host="a"' ' host="b"' "out/dist_$b.csv" >"dist-$b.xml"
  cmds+=("\"\$top/tools/sf-launch\" --exec \"\$bin/sf-exec\" --batch $b dist-$b.xml")
  check+="bench_same out/dist_$b.csv out/dist_one.csv 'two executors at batch $b'; "
done
cmds+=('"$bin/sf-bench-grpc-ceiling" "$DN" 256' '"$bin/sf-bench-grpc-ceiling" "$DN" 1024')
bench_alternate -c "$check" "${cmds[@]}"
t_one=${bench_med[0]}
echo "5. Beacon on executor a, a Filter keeping 0.1 % and a FileSink on executor b (loopback), $DN tuples,"
echo "   median of $RUNS alternating runs"
printf '   one process               %8ss  %s\n' "$t_one" "$(rate "$DN" "$t_one")"
best_dist="" best_b=""
declare -A t_batch
for i in "${!batches[@]}"; do
  b=${batches[i]} t=${bench_med[i + 1]}
  printf '   two executors, batch %-5s %8ss  %s\n' "$b" "$t" "$(rate "$DN" "$t")"
  bench_figure "batch$b" "$(mrate "$DN" "$t")" "$(mrate "$DN" "$t_one")" "M tuples/s" \
    "Beacon; Filter + FileSink, $DN tuples: two executors at batch $b against one process"
  t_batch[$b]=$t
  if [ -z "$best_dist" ] || awk -v a="$t" -v b="$best_dist" 'BEGIN { exit !(a < b) }'; then best_dist=$t; best_b=$b; fi
done
t_ceil256=${bench_med[5]} t_ceil1024=${bench_med[6]}
case $best_b in
  256) t_ceil=$t_ceil256 ;;
  1024) t_ceil=$t_ceil1024 ;;
  *) bench_alternate '"$bin/sf-bench-grpc-ceiling" "$DN" "$best_b"'; t_ceil=${bench_med[0]} ;;
esac
printf '   raw gRPC ceiling, %-4s/msg %8ss  %s\n' "$best_b" "$t_ceil" "$(rate "$DN" "$t_ceil")"
printf '   best two-executor run (batch %s) reaches %s of the ceiling and %s of one process\n' "$best_b" \
  "$(percent "$t_ceil" "$best_dist")" "$(percent "$t_one" "$best_dist")"
bench_figure ceiling "$(mrate "$DN" "$best_dist")" "$(mrate "$DN" "$t_ceil")" "M tuples/s" \
  "the best two-executor run (batch $best_b) against the raw gRPC loop, $best_b per message"
if [ "$best_b" != 256 ]; then
  printf '   raw gRPC ceiling, 256 /msg %8ss  %s: batch 256 reaches %s of it\n' "$t_ceil256" \
    "$(rate "$DN" "$t_ceil256")" "$(percent "$t_ceil256" "${t_batch[256]}")"
fi
bench_figure ceiling256 "$(mrate "$DN" "${t_batch[256]}")" "$(mrate "$DN" "$t_ceil256")" "M tuples/s" \
  "two executors at batch 256 against the raw gRPC loop, 256 per message"
bench_end
