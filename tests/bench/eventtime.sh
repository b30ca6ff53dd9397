#!/usr/bin/env bash
# tests/bench/eventtime.sh [BUILD_DIR]: the event-time queries sequentially and at width 2, and a time window's memory per key.
# The NEXMark-style event-time queries of tests/eventtime (hot items: a hopping count per auction
# stacked under a tumbling maximum; highest bid per window, serial and in two keyed stages;
# sessions per bidder; windows per bidder; running per-day statistics with count_distinct), on
# SF_BENCH_ET_ROWS bids (default 1000000, tests/eventtime/gen.py, seed 20): events per second
# sequentially (the baseline) and rewritten by sf-xform -w 2, alternating (bench_alternate), the
# outputs byte-identical; and the peak resident memory of each (--stats-json, one run each).
# Then the memory a keyed window keeps per key: SF_BENCH_ET_KEYS (default 500000) keys each seen
# once by a `running` Aggregate and by a `tumbling time` one whose windows all stay open until
# the end (sum and count, also with each key seen ten times: a window keeps no rows; then min and
# max, first and last, avg and count, arg_max and arg_min: each pair of aggregate functions
# apart), peak memory less that of the same graph with one key, divided by the keys; and with
# count_distinct over 10 distinct values per key.
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"
command -v python3 >/dev/null || bench_skip "python3 is missing (the bids come from tests/eventtime/gen.py)"

ROWS=${SF_BENCH_ET_ROWS:-1000000}
KEYS=${SF_BENCH_ET_KEYS:-500000}
mkdir -p data
python3 "$top/tests/eventtime/gen.py" --rows "$ROWS" --seed 20 -o data/bids.csv

rss_of() { sed -n 's/.*"peak_rss_kib": \([0-9]*\).*/\1/p' "$1"; }

echo "1. event-time queries, $ROWS bids: sequential against sf-xform -w 2"
for q in hot_items highest_bid highest_keyed sessions bidder_windows daily; do
  g=$top/tests/eventtime/$q.xml
  "$bin/sf-xform" -w 2 "$g" -o "$q.w2.xml"
  mkdir -p seq par
  (cd seq && mkdir -p out && ln -sfn ../data data)
  (cd par && mkdir -p out && ln -sfn ../data data)
  bench_alternate -c 'bench_same par/out/$q.csv seq/out/$q.csv "$q at width 2"' \
    '(cd seq && "$bin/sf-exec" "$g")' '(cd par && "$bin/sf-exec" "$work/$q.w2.xml")'
  s1=${bench_med[0]} s2=${bench_med[1]}
  (cd seq && "$bin/sf-exec" --stats-json ../"$q.seq.json" "$g")
  (cd par && "$bin/sf-exec" --stats-json ../"$q.w2.json" "$work/$q.w2.xml")
  m1=$(rss_of "$q.seq.json") m2=$(rss_of "$q.w2.json")
  printf '   %-15s sequential %8s   width 2 %8s   x%s   peak %6d / %6d KiB\n' "$q" "$(rate "$ROWS" "$s1")" \
    "$(rate "$ROWS" "$s2")" "$(ratio "$s1" "$s2")" "$m1" "$m2"
  bench_figure "$q" "$(mrate "$ROWS" "$s2")" "$(mrate "$ROWS" "$s1")" "M events/s" \
    "event-time query $q, $ROWS bids: sf-xform -w 2 against the sequential graph"
  bench_figure "$q.memory" "$(awk -v k="$m2" 'BEGIN { printf "%.1f", k / 1024 }')" \
    "$(awk -v k="$m1" 'BEGIN { printf "%.1f", k / 1024 }')" MiB \
    "peak memory of event-time query $q, $ROWS bids: width 2 against sequential (one run each)"
  rm -rf seq par
done

# keys_graph KEYS REPS WINDOW SETS: a Beacon of KEYS * REPS tuples, each key (k = seq % KEYS) REPS
# times with v = its repetition (REPS distinct values), time = seq, into an Aggregate keyed on k with
# WINDOW and the sets, to a sink of nothing (a Filter drops everything)
keys_graph() {
  cat <<EOF
$header
  <schema name="In"><attr name="k" type="int"/><attr name="t" type="int"/><attr name="v" type="int"/></schema>
  <schema name="Out"><attr name="k" type="int"/><attr name="a" type="int"/><attr name="b" type="int"/></schema>
  <operator name="src" kind="Beacon"><output stream="S" schema="In"/>
    <param name="count">$(($1 * $2))</param><param name="time">t</param><param name="tick">1000000000</param>
    <set attr="k">seq % $1</set><set attr="t">seq</set><set attr="v">seq / $1</set>
  </operator>
  <operator name="agg" kind="Aggregate"><input stream="S"/><output stream="A" schema="Out"/>
    <param name="partitionBy">k</param><param name="window">$3</param>$4
  </operator>
  <operator name="none" kind="Filter"><input stream="A"/><output stream="B" schema="Out"/>
    <param name="where">a &lt; 0</param></operator>
  <operator name="out" kind="FileSink"><input stream="B"/><param name="file">out/keys.csv</param></operator>
</graph>
EOF
}

echo "2. memory per key, $KEYS keys (peak resident memory less that of one key, over the keys)"
sums='<set attr="a">sum(v)</set><set attr="b">count()</set>'
minmax='<set attr="a">min(v)</set><set attr="b">max(v)</set>'
firstlast='<set attr="a">first(v)</set><set attr="b">last(v)</set>'
avg='<set attr="a">int(avg(v))</set><set attr="b">count()</set>'
args='<set attr="a">arg_max(v, t)</set><set attr="b">arg_min(v, t)</set>'
distinct='<set attr="a">count_distinct(v)</set><set attr="b">max(v)</set>'
tw='tumbling time 2000000000'
for c in "running:1:running:$sums" "tumbling:1:$tw:$sums" "tumbling10:10:$tw:$sums" "minmax:1:$tw:$minmax" "firstlast:1:$tw:$firstlast" \
  "avg:1:$tw:$avg" "args:1:$tw:$args" "distinct:10:$tw:$distinct"; do
  IFS=: read -r name reps window sets <<<"$c"
  keys_graph "$KEYS" "$reps" "$window" "$sets" >"k$name.xml"
  keys_graph 1 "$reps" "$window" "$sets" >"k$name.1.xml"
  "$bin/sf-exec" --stats-json "k$name.json" "k$name.xml"
  "$bin/sf-exec" --stats-json "k$name.1.json" "k$name.1.xml"
  per=$(awk -v a="$(rss_of "k$name.json")" -v b="$(rss_of "k$name.1.json")" -v n="$KEYS" \
    'BEGIN { printf "%.0f", (a - b) * 1024 / n }')
  printf '   %-9s (%s, %s per key) %6s bytes/key\n' "$name" "$window" "$reps" "$per"
  bench_figure "bytes.$name" "$per" - bytes/key \
    "memory per key of a keyed Aggregate ($window, $KEYS keys each seen $reps times; peak RSS less one key's)"
done
bench_end
