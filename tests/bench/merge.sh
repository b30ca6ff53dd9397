#!/usr/bin/env bash
# tests/bench/merge.sh [BUILD_DIR]: a seqpulse merge against a roundrobin merge.
# The cost of a seqpulse merge against a roundrobin merge, on the
# same region of one cheap Functor at width 2 (SF_BENCH_N tuples), in at least 7 alternating
# rounds; the figure is the median of the rounds' ratios (one run of this region varies by more
# than the few per cent looked for). The outputs are checked identical after every round.
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"

cat >merge.xml <<XML
$header
  <schema name="In"><attr name="k" type="int"/><attr name="v" type="int"/></schema>
  <operator name="src" kind="Beacon">
    <output stream="A" schema="In"/>
    <param name="count">$N</param>
    <set attr="k">seq % 100</set>
    <set attr="v">seq</set>
  </operator>
  <operator name="f" kind="Functor">
    <input stream="A"/>
    <output stream="B" schema="In"/>
    <set attr="v">v * 3 + k</set>
  </operator>
  <operator name="keep" kind="Filter">
    <input stream="B"/>
    <output stream="C" schema="In"/>
    <param name="where">v % 1000 == 0</param>
  </operator>
</graph>
XML
# a region of one cheap Functor; the sink-side Filter stays outside it (the Functor alone is the region)
sed -i 's|<operator name="keep" kind="Filter">|<operator name="keep" kind="Filter" parallel="no">|' merge.xml
sed -i 's|</graph>|  <operator name="sink" kind="FileSink">\n    <input stream="C"/>\n    <param name="file">out/merge.csv</param>\n  </operator>\n</graph>|' merge.xml
"$bin/sf-xform" -w 2 merge.xml -o merge_rr.xml
grep -q '<param name="order">roundrobin</param>' merge_rr.xml || bench_die "expected a roundrobin merge"
sed -e 's|<param name="order">roundrobin</param>|<param name="order">seqpulse</param>|' \
    -e 's|<param name="pulse">0</param>|<param name="pulse">128</param>|' merge_rr.xml >merge_sp.xml
"$bin/sf-exec" merge_rr.xml && cp out/merge.csv out/merge_rr.csv
rounds=$((RUNS > 7 ? RUNS : 7))
bench_alternate -r "$rounds" -c 'bench_same out/merge.csv out/merge_rr.csv "seqpulse merge"' \
  '"$bin/sf-exec" merge_rr.xml' '"$bin/sf-exec" merge_sp.xml'
read -r -a rr <<<"${bench_times[0]}"
read -r -a sp <<<"${bench_times[1]}"
ratios=()
for i in "${!rr[@]}"; do ratios+=("$(ratio "${sp[i]}" "${rr[i]}")"); done
cost=$(bench_median "${ratios[@]}")
echo "3. merge cost: one cheap Functor region at width 2, $N tuples, $rounds alternating rounds"
printf '   roundrobin merge  %8ss  %s (median; best %ss)\n' "${bench_med[0]}" "$(rate "$N" "${bench_med[0]}")" "${bench_best[0]}"
printf '   seqpulse merge    %8ss  %s (median; best %ss)\n' "${bench_med[1]}" "$(rate "$N" "${bench_med[1]}")" "${bench_best[1]}"
printf '   seqpulse costs %s the time of roundrobin (median of the rounds; best against best %s)\n' \
  "$cost" "$(ratio "${bench_best[1]}" "${bench_best[0]}")"
bench_figure rate "$(mrate "$N" "${bench_med[1]}")" "$(mrate "$N" "${bench_med[0]}")" "M tuples/s" \
  "one cheap Functor region at width 2, $N tuples: seqpulse merge against roundrobin, $rounds rounds"
bench_figure cost "$cost" - x \
  "the seqpulse merge's time over roundrobin's, median of $rounds rounds' ratios"
bench_end
