#!/usr/bin/env bash
# tests/bench/nexmark.sh [BUILD_DIR]: NEXMark-style queries, sequential against sf-xform -w 2.
# One Beacon generates a NEXMark-like event stream in the benchmark's proportions: of every 50
# events 1 is a new person, 3 are new auctions and 46 are bids (kind 0, 1, 2 in one schema, the
# unused fields empty or 0). Each query is a graph over that stream that the language can express
# today (no joins, no event-time windows; issue 20 and 21 add those):
#   q0 pass-through of the bids; q1 currency conversion (price * 89 / 100); q2 selection of the
#   bids of every 123rd auction, projected; q3 persons in OR, ID or CA, projected; q5 bids per
#   auction, tumbling windows of 10 (count, max, avg); q6 a bidder's mean over its last 10 bids
#   (sliding); q11 the first bid of each bidder on each auction (Dedup); q14 bids in daytime hours
#   with a price band (Functor with ?:, Filter; an "hour" is 1000 events here).
# Each query runs as written (sequential), as rewritten by `sf-xform -w 2`, and as rewritten by
# `sf-xform -w 2 --profile STATS` where STATS is what `sf-exec --stats-json` measured in one
# untimed sequential run of the query before (so that each region gets the width its measured
# costs pay for, or stays serial), the three alternately, outputs checked byte-identical. Figures
# per query: its -w 2 rate against the sequential rate (the ratio is the speed-up), the same with
# --profile, and its peak resident memory at -w 2 against sequential (peak_rss_kib of sf-exec
# --stats-json, the median of the same runs); then the median speed-up over the queries, plain and
# with --profile. SF_BENCH_NEX_N events (default 1000000).
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"

EN=${SF_BENCH_NEX_N:-1000000}

# The event stream: schema Event and the generator; every query's graph begins with it.
events() { # N SCHEMAS: the header, schema Event and the query's SCHEMAS, then the generator
  cat <<XML
$header
  <schema name="Event">
    <attr name="kind" type="int"/>
    <attr name="id" type="int"/>
    <attr name="name" type="string"/>
    <attr name="state" type="string"/>
    <attr name="category" type="int"/>
    <attr name="auction" type="int"/>
    <attr name="bidder" type="int"/>
    <attr name="price" type="int"/>
    <attr name="ts" type="int"/>
  </schema>
$2
  <operator name="gen" kind="Beacon">
    <output stream="Events" schema="Event"/>
    <param name="count">$1</param>
    <set attr="kind">seq % 50 == 0 ? 0 : (seq % 50 &lt; 4 ? 1 : 2)</set>
    <set attr="id">seq % 50 == 0 ? seq / 50 : (seq % 50 &lt; 4 ? (seq / 50) * 3 + seq % 50 - 1 : 0)</set>
    <set attr="name">seq % 50 == 0 ? "person" + str(seq / 50) : ""</set>
    <set attr="state">seq % 50 == 0 ? substr("ORIDCAWANYTXAZ", (rand(seq) % 7) * 2, 2) : ""</set>
    <set attr="category">seq % 50 != 0 &amp;&amp; seq % 50 &lt; 4 ? 10 + rand(seq + 1) % 5 : 0</set>
    <set attr="auction">seq % 50 &gt;= 4 ? rand(seq + 2) % (1 + (seq / 50) * 3) : 0</set>
    <set attr="bidder">seq % 50 &gt;= 4 ? rand(seq + 3) % (1 + seq / 50) : 0</set>
    <set attr="price">seq % 50 &gt;= 4 ? 100 + rand(seq + 4) % 10000 : 0</set>
    <set attr="ts">seq * 20</set>
  </operator>
XML
}
bids() { # NAME: a Filter of the bids, from Events to Bids
  cat <<XML
  <operator name="$1" kind="Filter">
    <input stream="Events"/>
    <output stream="Bids" schema="Event"/>
    <param name="where">kind == 2</param>
  </operator>
XML
}
sink() { # STREAM FILE
  printf '  <operator name="out" kind="FileSink">\n    <input stream="%s"/>\n    <param name="file">%s</param>\n  </operator>\n</graph>\n' "$1" "$2"
}

query() { # Q N FILE: the graph of query Q
  local q=$1 n=$2 f=$3 schemas=
  case $q in
  q1) schemas='<schema name="Euro"><attr name="auction" type="int"/><attr name="bidder" type="int"/><attr name="price" type="int"/><attr name="ts" type="int"/></schema>' ;;
  q2) schemas='<schema name="AP"><attr name="auction" type="int"/><attr name="price" type="int"/></schema>' ;;
  q3) schemas='<schema name="P"><attr name="name" type="string"/><attr name="state" type="string"/><attr name="id" type="int"/></schema>' ;;
  q5) schemas='<schema name="Hot"><attr name="auction" type="int"/><attr name="bids" type="int"/><attr name="top" type="int"/><attr name="mean" type="double"/></schema>' ;;
  q6) schemas='<schema name="Mean"><attr name="bidder" type="int"/><attr name="mean" type="double"/></schema>' ;;
  q14) schemas='<schema name="Band"><attr name="auction" type="int"/><attr name="price" type="int"/><attr name="band" type="string"/><attr name="hour" type="int"/></schema>' ;;
  esac
  events "$n" "$schemas"
  case $q in
  q0) bids bids; sink Bids "$f" ;;
  q1) bids bids
      cat <<XML
  <operator name="euro" kind="Functor">
    <input stream="Bids"/>
    <output stream="Euros" schema="Euro"/>
    <set attr="price">price * 89 / 100</set>
  </operator>
XML
      sink Euros "$f" ;;
  q2) cat <<XML
  <operator name="some" kind="Filter">
    <input stream="Events"/>
    <output stream="Some" schema="Event"/>
    <param name="where">kind == 2 &amp;&amp; auction % 123 == 0</param>
  </operator>
  <operator name="project" kind="Functor">
    <input stream="Some"/>
    <output stream="Picked" schema="AP"/>
  </operator>
XML
      sink Picked "$f" ;;
  q3) cat <<XML
  <operator name="west" kind="Filter">
    <input stream="Events"/>
    <output stream="West" schema="Event"/>
    <param name="where">kind == 0 &amp;&amp; (state == "OR" || state == "ID" || state == "CA")</param>
  </operator>
  <operator name="project" kind="Functor">
    <input stream="West"/>
    <output stream="People" schema="P"/>
  </operator>
XML
      sink People "$f" ;;
  q5) bids bids
      cat <<XML
  <operator name="hot" kind="Aggregate">
    <input stream="Bids"/>
    <output stream="Hots" schema="Hot"/>
    <param name="partitionBy">auction</param>
    <param name="window">tumbling 10</param>
    <set attr="bids">count()</set>
    <set attr="top">max(price)</set>
    <set attr="mean">avg(price)</set>
  </operator>
XML
      sink Hots "$f" ;;
  q6) bids bids
      cat <<XML
  <operator name="means" kind="Aggregate">
    <input stream="Bids"/>
    <output stream="Means" schema="Mean"/>
    <param name="partitionBy">bidder</param>
    <param name="window">sliding 10</param>
    <set attr="mean">avg(price)</set>
  </operator>
XML
      sink Means "$f" ;;
  q11) bids bids
      cat <<XML
  <operator name="first" kind="Dedup">
    <input stream="Bids"/>
    <output stream="Firsts" schema="Event"/>
    <param name="partitionBy">bidder auction</param>
  </operator>
XML
      sink Firsts "$f" ;;
  q14) bids bids
      cat <<XML
  <operator name="band" kind="Functor">
    <input stream="Bids"/>
    <output stream="Banded" schema="Band"/>
    <set attr="band">price &lt; 1000 ? "low" : (price &lt; 5000 ? "mid" : "high")</set>
    <set attr="hour">ts / 20000 % 24</set>
  </operator>
  <operator name="day" kind="Filter">
    <input stream="Banded"/>
    <output stream="Daytime" schema="Band"/>
    <param name="where">hour &gt;= 8 &amp;&amp; hour &lt; 20</param>
  </operator>
XML
      sink Daytime "$f" ;;
  esac
}

queries=(q0 q1 q2 q3 q5 q6 q11 q14)
speedups=() profiled=()
# peak_mib FILE: the peak resident memory an sf-exec --stats-json file reports, in MiB
peak_mib() {
  local kib
  kib=$(sed -n 's/.*"peak_rss_kib": \([0-9]*\).*/\1/p' "$1")
  [ -n "$kib" ] || bench_die "no peak_rss_kib in $1"
  awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }'
}
# slower_count RATIO...: how many ratios are below 0.95
slower_count() {
  local s n=0
  for s in "$@"; do awk -v s="$s" 'BEGIN { exit !(s < 0.95) }' && n=$((n + 1)); done
  echo "$n"
}
echo "NEXMark-style queries over $EN events (1 person, 3 auctions, 46 bids in 50), sequential against"
echo "sf-xform -w 2, plain and with --profile of a sequential run's --stats-json (outputs identical),"
echo "median of $RUNS alternating runs; peak resident memory (sf-exec --stats-json), median of the same"
echo "runs; 'serial' counts the regions --profile kept serial, of all the plain -w 2 graph has"
printf '   %-5s %10s %10s %9s %10s %9s %7s %10s %9s %9s\n' query sequential "-w 2" speed-up "--profile" speed-up serial \
  "rows out" "MiB seq" "MiB -w 2"
for q in "${queries[@]}"; do
  query "$q" "$EN" "out/$q-seq.csv" >"$q-seq.xml"
  query "$q" "$EN" "out/$q-par.csv" >"$q-orig.xml"
  "$bin/sf-xform" -w 2 "$q-orig.xml" -o "$q-par.xml"
  # the profile: one sequential run, untimed, measuring each operator's CPU per tuple
  "$bin/sf-exec" --stats-json "$q-profile.json" "$q-seq.xml" >/dev/null || bench_die "$q: the profiling run failed"
  query "$q" "$EN" "out/$q-prof.csv" >"$q-porig.xml"
  "$bin/sf-xform" -w 2 --profile "$q-profile.json" "$q-porig.xml" -o "$q-prof.xml"
  regions=$(grep -c '<operator [^>]*kind="Split"' "$q-par.xml" || true)
  kept=$((regions - $(grep -c '<operator [^>]*kind="Split"' "$q-prof.xml" || true)))
  mem_seq=() mem_par=()
  bench_alternate -c "bench_same out/$q-par.csv out/$q-seq.csv '$q at -w 2'; bench_same out/$q-prof.csv out/$q-seq.csv '$q at -w 2 --profile'; mem_seq+=(\$(peak_mib $q-seq.json)); mem_par+=(\$(peak_mib $q-par.json))" \
    "\"\$bin/sf-exec\" --stats-json $q-seq.json $q-seq.xml" "\"\$bin/sf-exec\" --stats-json $q-par.json $q-par.xml" \
    "\"\$bin/sf-exec\" $q-prof.xml"
  t1=${bench_med[0]} t2=${bench_med[1]} t3=${bench_med[2]}
  s=$(ratio "$t1" "$t2") p=$(ratio "$t1" "$t3")
  speedups+=("$s")
  profiled+=("$p")
  m1=$(bench_median "${mem_seq[@]}") m2=$(bench_median "${mem_par[@]}")
  printf '   %-5s %9ss %9ss %9s %9ss %9s %7s %10s %9s %9s\n' "$q" "$t1" "$t2" "$s" "$t3" "$p" "$kept/$regions" \
    "$(($(wc -l <"out/$q-seq.csv") - 1))" "$m1" "$m2"
  bench_figure "$q" "$(mrate "$EN" "$t2")" "$(mrate "$EN" "$t1")" "M events/s" \
    "NEXMark-style $q, $EN events: sf-xform -w 2 against the sequential graph (the ratio is the speed-up)"
  bench_figure "$q.profile" "$(mrate "$EN" "$t3")" "$(mrate "$EN" "$t1")" "M events/s" \
    "NEXMark-style $q, $EN events: sf-xform -w 2 --profile (a sequential run's --stats-json) against the sequential graph; $kept of $regions regions kept serial"
  bench_figure "$q.memory" "$m2" "$m1" MiB \
    "NEXMark-style $q, $EN events: peak resident memory at -w 2 against sequential (sf-exec --stats-json, median of the runs)"
done
med=$(bench_median "${speedups[@]}") pmed=$(bench_median "${profiled[@]}")
slower=$(slower_count "${speedups[@]}") pslower=$(slower_count "${profiled[@]}")
echo "   median speed-up $med; $slower of ${#queries[@]} queries slower than 0.95 at -w 2"
echo "   with --profile: median speed-up $pmed; $pslower of ${#queries[@]} queries slower than 0.95"
bench_figure median "${med}x" - - \
  "NEXMark-style queries: median speed-up of -w 2 over sequential, $slower of ${#queries[@]} below 0.95"
bench_figure median.profile "${pmed}x" - - \
  "NEXMark-style queries: median speed-up of -w 2 --profile over sequential, $pslower of ${#queries[@]} below 0.95"
bench_end
