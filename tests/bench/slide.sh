#!/usr/bin/env bash
# tests/bench/slide.sh [BUILD_DIR]: sliding-window Aggregates at window sizes 1 to 1000.
# Sliding windows. An Aggregate over `sliding W` windows of 100
# keys computing every aggregate function of ints, at W = 1, 10, 100 and 1000 (tuples/s should not
# fall with W), and an avg of fractional doubles, the one aggregate still folded again per tuple
# (O(W)); a Filter behind keeps 0.1 % of the rows. SF_BENCH_SLIDE_N tuples (default 1000000); the
# four window sizes of each run alternately, against W = 1.
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"

SN=${SF_BENCH_SLIDE_N:-1000000}
slide_graph() { # W SETS
  cat <<XML
$header
  <schema name="In"><attr name="k" type="int"/><attr name="v" type="int"/><attr name="x" type="double"/></schema>
  <schema name="Out"><attr name="k" type="int"/><attr name="n" type="int"/><attr name="a" type="double"/><attr name="b" type="int"/></schema>
  <operator name="src" kind="Beacon">
    <output stream="A" schema="In"/>
    <param name="count">$SN</param>
    <set attr="k">seq % 100</set>
    <set attr="v">rand(seq) % 1000</set>
    <set attr="x">double(rand(seq) % 1000) * 0.1</set>
  </operator>
  <operator name="win" kind="Aggregate">
    <input stream="A"/>
    <output stream="B" schema="Out"/>
    <param name="partitionBy">k</param>
    <param name="window">sliding $1</param>
    $2
  </operator>
  <operator name="rare" kind="Filter">
    <input stream="B"/>
    <output stream="C" schema="Out"/>
    <param name="where">n % 997 == 3</param>
  </operator>
  <operator name="sink" kind="FileSink">
    <input stream="C"/>
    <param name="file">out/slide.csv</param>
  </operator>
</graph>
XML
}
every_agg='<set attr="n">count() + sum(v) + min(v) + max(v) + first(v) + last(v)</set><set attr="a">avg(v) + sum(double(v))</set><set attr="b">0</set>'
avg_x='<set attr="n">0</set><set attr="a">avg(x)</set><set attr="b">0</set>'
sizes=(1 10 100 1000)
echo "sliding windows: Aggregate over 100 keys, $SN tuples (then a Filter keeping 0.1 %), median of $RUNS alternating runs"
for kind in ints double; do
  cmds=()
  for w in "${sizes[@]}"; do
    if [ $kind = ints ]; then slide_graph "$w" "$every_agg"; else slide_graph "$w" "$avg_x"; fi >"slide-$kind-$w.xml"
    cmds+=("\"\$bin/sf-exec\" slide-$kind-$w.xml")
  done
  bench_alternate "${cmds[@]}"
  t_w1=${bench_med[0]}
  for i in "${!sizes[@]}"; do
    w=${sizes[i]} t=${bench_med[i]}
    if [ $kind = ints ]; then
      what="every aggregate of ints"
      printf '   count, sum, avg, min, max, first, last of ints, W = %-4s %8ss  %s  (%s the time of W = 1)\n' \
        "$w" "$t" "$(rate "$SN" "$t")" "$(ratio "$t" "$t_w1")"
    else
      what="avg of fractional doubles"
      printf '   avg of fractional doubles (folded again),  W = %-4s %8ss  %s  (%s the time of W = 1)\n' \
        "$w" "$t" "$(rate "$SN" "$t")" "$(ratio "$t" "$t_w1")"
    fi
    base=-; [ "$w" = 1 ] || base=$(mrate "$SN" "$t_w1")
    bench_figure "$kind.w$w" "$(mrate "$SN" "$t")" "$base" "M tuples/s" \
      "sliding $w over 100 keys, $SN tuples: $what$([ "$w" = 1 ] || echo ", against W = 1")"
  done
done
bench_end
