#!/usr/bin/env bash
# tests/event_time.sh BUILD_DIR SOURCE_DIR [QUERY...]
#
# Event time end to end: the NEXMark-style queries of tests/eventtime/ (time windows, lateness,
# sessions, stacking on window_end(), running) against an independent oracle.
#
# First tests/eventtime/oracle_selftest.py checks the oracle on inputs worked out by hand. Then,
# for every query (or the named ones), in a scratch directory:
#   1. python3 tests/eventtime/gen.py writes data/bids.csv (seeded; out-of-order rows within and
#      beyond the lateness, gaps that leave windows empty), and data/bids2.csv for a query with a
#      second source (the example graphs/bidders.xml reads its own input, graphs/data/bids.csv);
#   2. python3 tests/eventtime/oracle.py writes the expected output and the late count of each
#      time-window Aggregate (and checks the graph's windows, lateness and ticks are the ones it
#      assumes); the data must make late tuples where the query expects them;
#   3. sf-exec runs the graph as written; its output file must equal the oracle's byte for byte
#      and the `late` field of each time-window Aggregate in --stats-json the oracle's count;
#   4. for widths 2 and 4, sf-xform --width W --explain rewrites it, sf-exec runs the rewrite:
#      the same bytes, the same late counts (summed over replicas), and --explain must put each
#      operator of EXPLAIN_EXPECT below in a parallel region or not, as listed.
#
# One OK/FAIL line per case; a failure keeps the work directory and prints its path. Exits 1 if a
# case failed, 77 (skipped) without python3.
#
# Environment: SF_EVENT_ROWS (rows per input, default 30000), SF_EVENT_SEED (default 20),
# SF_RUN_TIMEOUT (seconds per sf-exec run, default 120), SF_KEEP=1 keeps every work directory.
set -uo pipefail

# ---------------------------------------------------------------------------------------------
# What sf-xform --explain must decide, QUERY:OPERATOR:parallel|serial: keyed time windows are
# replicated (their emissions at a tick are ordered by key, docs/design.md, rule 5), stacked ones
# joined by a shuffle; a time window without partitionBy and a fan-in stay serial.
EXPLAIN_EXPECT=(
  hot_items:counts:parallel       # hopping time, keyed on auction
  hot_items:hottest:parallel      # tumbling time, keyed on wend: shuffled from counts' region
  highest_bid:highest:serial      # a time window without partitionBy: state unknown (rule 2)
  highest_keyed:perAuction:parallel # the same in two keyed stages: tumbling time on auction,
  highest_keyed:highest:parallel  # then on wend (the window's end): shuffled from perAuction's
  sessions:sessions:parallel      # session time, keyed on bidder
  bidder_windows:people:parallel  # a stateless Filter (ticks cross its region)
  bidder_windows:perBidder:parallel # tumbling time, keyed on bidder, in the Filter's region
  daily:dayOf:parallel            # a stateless Functor
  daily:perDay:parallel           # running, keyed on day: selectivity one, no emission at ticks
  merged_sites:people:serial      # a time-ordered fan-in of two streams: serial (rule 1)
  merged_sites:perAuction:parallel # tumbling time, keyed on auction
  bidders:people:parallel         # graphs/bidders.xml: a stateless Filter
  bidders:perBidder:parallel      # tumbling time, keyed on bidder
)
# ---------------------------------------------------------------------------------------------

# The input of each query: gen.py's options after --rows and --seed. daily's spans a week of
# epoch milliseconds (steps of 12 s, gaps of hours) from 2025-12-01 00:00 UTC; the others a
# clock stepping 50 ms on average, 5% of rows up to 1.5 s behind it, 0.2% 15-30 s behind.
declare -A GEN_ARGS=(
  [hot_items]=""
  [highest_bid]=""
  [highest_keyed]=""
  [sessions]=""
  [bidder_windows]=""
  [merged_sites]="--end 2400000 --calm-after 2100000"
  [bidders]="" # not generated: the example's own input (EXAMPLES)
  [daily]="--start 1764547200000 --step 12000 --gap-prob 0.001 --gap-min 3600000 --gap-max 7200000"
)
# The time-window Aggregates whose input must make late tuples (so that dropping them is tested);
# every other time-window Aggregate of a query is expected to have none (the oracle says so too).
declare -A MUST_BE_LATE=(
  [hot_items]="counts"
  [highest_bid]="highest"
  [highest_keyed]="perAuction"
  [sessions]="sessions"
  [bidder_windows]="perBidder"
  [merged_sites]="perAuction"
  [bidders]="perBidder"
  [daily]=""
)
# The second input (data/bids2.csv, seed + 1) of the queries with two sources. merged_sites's two
# sites end within a gap (<= 60 s) of 2400 s and have no row out of order in their last 300 s, so
# that its output does not depend on when the fan-in stops waiting for a site whose only item
# left is its final tick (the literal rule, which the oracle follows, keeps waiting until every
# input is at its final tick; an implementation that lets a site at its final tick count as
# ended would tick sooner, but no row after that point is out of order, so none becomes late).
declare -A GEN2_ARGS=(
  [merged_sites]="--step 80 --end 2400000 --calm-after 2100000"
)
# Example graphs checked here too: QUERY -> "GRAPH INPUT OUTPUT" (paths in SOURCE_DIR, except
# OUTPUT, the file its sink writes in out/); the other queries are tests/eventtime/QUERY.xml
# on generated input, writing out/QUERY.csv.
declare -A EXAMPLES=(
  [bidders]="graphs/bidders.xml graphs/data/bids.csv bidders_windows.csv"
)
QUERIES=(hot_items highest_bid highest_keyed sessions bidder_windows daily merged_sites bidders)
WIDTHS=(2 4)

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR [QUERY...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
shift 2
source "$src/tests/lib.sh"
trap sf_cleanup EXIT

if ! command -v python3 >/dev/null 2>&1; then
  echo "event_time: skipped: python3 is missing (the data generator and the oracle need it)"
  exit 77
fi
sf_need_bins "$build" sf-xform sf-exec || exit 1
[[ $# -gt 0 ]] && QUERIES=("$@")

et=$src/tests/eventtime
rows=${SF_EVENT_ROWS:-30000}
seed=${SF_EVENT_SEED:-20}
export SF_CASE_WIDTH=30
echo "event_time: $rows rows per input, seed $seed"

sf_mktemp SF_WORK sf-event-time || exit 1
if python3 "$et/oracle_selftest.py" >"$SF_WORK/selftest.log" 2>&1; then
  sf_ok "oracle selftest" "$(grep -c ' OK ' "$SF_WORK/selftest.log") hand-worked cases"
else
  sf_bad "oracle selftest" "the oracle disagrees with a hand-worked case" "$SF_WORK/selftest.log"
  grep FAIL -A2 "$SF_WORK/selftest.log" | sed 's/^/    /'
fi

# late_check STATS ORACLE_LATE: every operator the oracle counted late tuples for has, in sf-exec's
# --stats-json, a `late` field (summed over its replicas NAME[c]) equal to the oracle's count.
# Prints what differs; returns 1 then.
late_check() {
  python3 - "$1" "$2" <<'PY'
import json, re, sys
stats = json.load(open(sys.argv[1]))["operators"]
want = json.load(open(sys.argv[2]))
bad = 0
for op, n in sorted(want.items()):
    entries = [e for e in stats if e["name"] == op or re.fullmatch(re.escape(op) + r"\[\d+\]", e["name"])]
    if not entries:
        print("    no entry for operator '%s' in the stats" % op); bad = 1; continue
    missing = [e["name"] for e in entries if "late" not in e]
    if missing:
        print("    no 'late' field in the stats of %s" % ", ".join(missing)); bad = 1; continue
    got = sum(e["late"] for e in entries)
    if got != n:
        print("    %s: late %d, the oracle counts %d" % (op, got, n)); bad = 1
sys.exit(bad)
PY
}

# explain_check QUERY EXPLAIN: each QUERY:OP of EXPLAIN_EXPECT is "parallel in region" or "not
# parallelized" in the --explain text as listed. Prints what differs; returns 1 then.
explain_check() {
  local q=$1 file=$2 entry op want got rc=0
  for entry in "${EXPLAIN_EXPECT[@]}"; do
    [[ ${entry%%:*} == "$q" ]] || continue
    op=${entry#*:}
    want=${op#*:}
    op=${op%%:*}
    if grep -Eq "^.*:[0-9]+: $op: parallel in region r[0-9]+" "$file"; then
      got=parallel
    elif grep -Eq "^.*:[0-9]+: $op: not parallelized" "$file"; then
      got=serial
    else
      got="not mentioned"
    fi
    if [[ $got != "$want" ]]; then
      echo "    $op: expected $want, --explain says: $got"
      grep -E "^.*:[0-9]+: $op: " "$file" | head -n 3 | sed 's/^/      | /'
      rc=1
    fi
  done
  return $rc
}

# run_exec DIR GRAPH STATS LOG: sf-exec GRAPH in DIR with --stats-json STATS, under a time limit.
run_exec() {
  (cd "$1" && timeout -k 5 "${SF_RUN_TIMEOUT:-120}" "$build/bin/sf-exec" --stats-json "$3" "$2") >"$4" 2>&1
}

t_start=$(sf_now)
for q in "${QUERIES[@]}"; do
  graph=$et/$q.xml input="" outfile=$q.csv
  if [[ -n ${EXAMPLES[$q]+x} ]]; then
    read -r graph input outfile <<<"${EXAMPLES[$q]}"
    graph=$src/$graph input=$src/$input
  fi
  if [[ ! -f $graph || -z ${GEN_ARGS[$q]+x} ]]; then
    SF_WORK="(none)"
    sf_bad "$q" "no such query (tests/eventtime/$q.xml and its entry in GEN_ARGS)"
    continue
  fi
  sf_mktemp SF_WORK "sf-event-$q" || exit 1
  w=$SF_WORK
  mkdir "$w/data" "$w/expected" "$w/out"

  # 1, 2: the input and the oracle's output
  # shellcheck disable=SC2086 # GEN_ARGS holds several options
  if [[ -n $input ]]; then
    cp "$input" "$w/data/bids.csv"
  elif ! python3 "$et/gen.py" --rows "$rows" --seed "$seed" ${GEN_ARGS[$q]} -o "$w/data/bids.csv" \
    >"$w/gen.log" 2>&1; then
    sf_bad "$q data" "gen.py failed" "$w/gen.log"
    continue
  fi
  input2=()
  if [[ -n ${GEN2_ARGS[$q]+x} ]]; then
    # shellcheck disable=SC2086 # GEN2_ARGS holds several options
    if ! python3 "$et/gen.py" --rows "$rows" --seed $((seed + 1)) ${GEN2_ARGS[$q]} -o "$w/data/bids2.csv" \
      >"$w/gen2.log" 2>&1; then
      sf_bad "$q data" "gen.py failed on the second input" "$w/gen2.log"
      continue
    fi
    input2=(--input2 data/bids2.csv)
  fi
  if ! (cd "$w" && python3 "$et/oracle.py" "$q" data/bids.csv "expected/$outfile" --late oracle-late.json \
    "${input2[@]}" --graph "$graph") >"$w/oracle.log" 2>&1; then
    sf_bad "$q oracle" "oracle.py failed" "$w/oracle.log"
    continue
  fi
  # shellcheck disable=SC2086 # MUST_BE_LATE holds a list of names
  problem=$(python3 - "$w/oracle-late.json" ${MUST_BE_LATE[$q]} <<'PY'
import json, sys
late = json.load(open(sys.argv[1]))
must = sys.argv[2:]
for op in must:
    if late.get(op, 0) == 0:
        print("the input makes no late tuple for '%s'" % op)
for op, n in late.items():
    if op not in must and n:
        print("'%s' has %d late tuples, none expected" % (op, n))
PY
  )
  nrows=$(($(wc -l <"$w/expected/$outfile") - 1))
  if [[ -n $problem ]]; then
    sf_bad "$q data" "$problem"
  elif [[ $nrows -lt 10 ]]; then
    sf_bad "$q data" "the oracle expects only $nrows rows"
  else
    counted=$(tr -d '{}"\n' <"$w/oracle-late.json")
    sf_ok "$q data" "$nrows rows expected; late: ${counted:-no time window}"
  fi

  # 3: the graph as written
  t0=$(sf_now)
  run_exec "$w" "$graph" "$w/stats-seq.json" "$w/seq.log"
  rc=$?
  secs=$(sf_elapsed "$t0" "$(sf_now)")
  if [[ $rc -ne 0 ]]; then
    sf_bad "$q sequential" "sf-exec exited $rc$([[ $rc == 124 ]] && echo " (timed out)")" "$w/seq.log"
    continue
  fi
  if report=$(sf_compare_dirs "$w/expected" "$w/out"); then
    sf_ok "$q sequential" "equals the oracle (${secs}s)"
  else
    sf_bad "$q sequential" "differs from the oracle (expected $w/expected, actual $w/out)"
    printf '%s\n' "$report"
  fi
  if report=$(late_check "$w/stats-seq.json" "$w/oracle-late.json"); then
    sf_ok "$q sequential late" "--stats-json late counts equal the oracle's"
  else
    sf_bad "$q sequential late" "late counts differ (stats $w/stats-seq.json)"
    printf '%s\n' "$report"
  fi
  mv "$w/out" "$w/out-seq"

  # 4: rewritten at widths 2 and 4
  for width in "${WIDTHS[@]}"; do
    par=$w/par-w$width.xml
    if ! "$build/bin/sf-xform" --width "$width" --explain "$graph" -o "$par" 2>"$w/explain-w$width.txt"; then
      sf_bad "$q width $width" "sf-xform failed" "$w/explain-w$width.txt"
      continue
    fi
    if report=$(explain_check "$q" "$w/explain-w$width.txt"); then
      sf_ok "$q width $width explain" "parallel and serial operators as EXPLAIN_EXPECT lists"
    else
      sf_bad "$q width $width explain" "--explain differs from EXPLAIN_EXPECT (see $w/explain-w$width.txt)"
      printf '%s\n' "$report"
    fi
    mkdir "$w/out"
    t0=$(sf_now)
    run_exec "$w" "$par" "$w/stats-w$width.json" "$w/par-w$width.log"
    rc=$?
    secs=$(sf_elapsed "$t0" "$(sf_now)")
    if [[ $rc -ne 0 ]]; then
      sf_bad "$q width $width" "sf-exec exited $rc$([[ $rc == 124 ]] && echo " (timed out)") on $par" \
        "$w/par-w$width.log"
      mv "$w/out" "$w/out-w$width"
      continue
    fi
    if report=$(sf_compare_dirs "$w/expected" "$w/out"); then
      sf_ok "$q width $width" "equals the oracle (${secs}s)"
    else
      sf_bad "$q width $width" "differs from the oracle (graph $par, actual $w/out-w$width)"
      printf '%s\n' "$report"
    fi
    if report=$(late_check "$w/stats-w$width.json" "$w/oracle-late.json"); then
      sf_ok "$q width $width late" "late counts equal the oracle's"
    else
      sf_bad "$q width $width late" "late counts differ (stats $w/stats-w$width.json)"
      printf '%s\n' "$report"
    fi
    mv "$w/out" "$w/out-w$width"
  done
done

echo "event_time: $SF_PASSED passed, $SF_FAILED failed, $(sf_elapsed "$t_start" "$(sf_now)")s"
[[ $SF_FAILED -eq 0 ]]
