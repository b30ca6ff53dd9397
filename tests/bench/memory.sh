#!/usr/bin/env bash
# tests/bench/memory.sh [BUILD_DIR]: peak resident memory of a long chain, in one thread and at width 2.
# Peak resident memory (sf-exec --stats-json) of the chain of
# SF_BENCH_MEM_N tuples (default 10000000) in one thread and at width 2: bounded queues keep it
# constant whatever the number of tuples. One run each.
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"

MN=${SF_BENCH_MEM_N:-10000000}
chain_graph "$MN" out/mem.csv >mem.xml
"$bin/sf-xform" -w 2 mem.xml -o mem2.xml
"$bin/sf-exec" --stats-json mem1.json mem.xml
"$bin/sf-exec" --stats-json mem2.json mem2.xml
rss1=$(sed -n 's/.*"peak_rss_kib": \([0-9]*\).*/\1/p' mem1.json)
rss2=$(sed -n 's/.*"peak_rss_kib": \([0-9]*\).*/\1/p' mem2.json)
{ [ -n "$rss1" ] && [ -n "$rss2" ]; } || bench_die "no peak_rss_kib in sf-exec --stats-json"
echo "4. peak resident memory, chain of $MN tuples"
printf '   one thread (width 1)  %6d KiB\n' "$rss1"
printf '   width 2               %6d KiB\n' "$rss2"
bench_figure width1 "$(awk -v k="$rss1" 'BEGIN { printf "%.1f", k / 1024 }')" - MiB \
  "peak memory, chain of $MN tuples, one thread (one run)"
bench_figure width2 "$(awk -v k="$rss2" 'BEGIN { printf "%.1f", k / 1024 }')" \
  "$(awk -v k="$rss1" 'BEGIN { printf "%.1f", k / 1024 }')" MiB \
  "peak memory, chain of $MN tuples: width 2 against one thread (one run)"
bench_end
