#!/usr/bin/env bash
# tests/bench/latency.sh [BUILD_DIR]: source-to-sink latency at a fixed rate, against --batch 1.
# Tuples at a fixed rate (50,000/s for SF_BENCH_LAT_SECONDS,
# default 5 s) stamped after the source (sf_stamp, tests/ops/latency.c) through a width-2 Filter
# region (seqpulse merge) to a sink measuring now - stamp (sf_latency): p50, p99, p99.9 and max in
# one process and over two executors on loopback, each the run with the median p99 of SF_BENCH_RUNS;
# the baseline is the same process with --batch 1 (every item its own batch: no wait for a batch
# at all). The three kinds of run alternate.
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"

latency_graph() { # COUNT HOSTS-XML SRC-HOST SINK-HOST
  cat <<XML
$header
  <schema name="T"><attr name="id" type="int"/><attr name="v" type="int"/><attr name="t" type="int"/></schema>
  $2
  <operator name="src" kind="Beacon"$3>
    <output stream="A" schema="T"/>
    <param name="count">$1</param>
    <param name="rate">50000</param>
    <set attr="id">seq</set>
    <set attr="v">rand(seq) % 1000</set>
    <set attr="t">0</set>
  </operator>
  <operator name="stamp" kind="Custom" parallel="no"$3>
    <input stream="A"/>
    <output stream="B" schema="T"/>
    <library path="libsf_test_ops.so" symbol="sf_stamp"/>
    <model state="none" selectivity="one" forwards="*"/>
  </operator>
  <operator name="keep" kind="Filter">
    <input stream="B"/>
    <output stream="C" schema="T"/>
    <param name="where">v % 4 != 0</param>
  </operator>
  <operator name="sink" kind="Custom"$4>
    <input stream="C"/>
    <library path="libsf_test_ops.so" symbol="sf_latency"/>
    <param name="report">out/latency.txt</param>
  </operator>
</graph>
XML
}
secs=${SF_BENCH_LAT_SECONDS:-5}
count=$((secs * 50000))
p1=$((20000 + RANDOM % 20000)); p2=$((p1 + 1))
latency_graph "$count" "" "" "" >lat.xml
"$bin/sf-xform" -w 2 lat.xml -o lat1.xml
latency_graph "$count" "<host name=\"a\" address=\"127.0.0.1:$p1\"/><host name=\"b\" address=\"127.0.0.1:$p2\"/>" \
  ' host="a"' ' host="b"' >latd.xml
"$bin/sf-xform" -w 2 latd.xml -o lat2.xml
: >lat_batch1.txt; : >lat_one.txt; : >lat_two.txt
bench_alternate \
  '"$bin/sf-exec" --batch 1 lat1.xml && cat out/latency.txt >>lat_batch1.txt' \
  '"$bin/sf-exec" lat1.xml && cat out/latency.txt >>lat_one.txt' \
  '"$top/tools/sf-launch" --exec "$bin/sf-exec" lat2.xml && cat out/latency.txt >>lat_two.txt'
echo "latency: $count tuples at 50,000/s, Beacon -> stamp -> Filter (3 in 4 kept) at width 2 (seqpulse merge) -> sink;"
echo "   microseconds from the stamp to the sink, the run with the median p99 of $RUNS (alternating)"
printf '   %-28s %10s %10s %10s %10s\n' "" p50 p99 p99.9 max
declare -A p
for mode in batch1 one two; do
  # the run with the median p99: N P50 P99 P999 MAX
  read -r _ p50 p99 p999 max < <(sort -n -k3 "lat_$mode.txt" | awk -v r="$RUNS" 'NR == int((r + 1) / 2)')
  [ -n "${max:-}" ] || bench_die "no latency report of the $mode runs"
  p[$mode.p50]=$p50 p[$mode.p99]=$p99 p[$mode.p999]=$p999 p[$mode.max]=$max
  case $mode in batch1) name="one process, --batch 1" ;; one) name="one process" ;; *) name="two executors (loopback)" ;; esac
  printf '   %-28s %10s %10s %10s %10s\n' "$name" "$p50" "$p99" "$p999" "$max"
done
for mode in one two; do
  where=$([ $mode = one ] && echo "one process" || echo "two executors on loopback")
  for q in p50 p99 p999 max; do
    bench_figure "$mode.$q" "${p[$mode.$q]}" "${p[batch1.$q]}" us \
      "latency at 50,000 tuples/s, $where, $q (the median-p99 run of $RUNS) against --batch 1"
  done
done
bench_end
