#!/usr/bin/env bash
# tests/nexmark.sh BUILD_DIR SOURCE_DIR [QUERY...]
#
# NEXMark-style queries written with built-in operators only (tests/nexmark/QUERY.xml: joins, a
# lookup, string, regular-expression and time functions, `in`, lets, FileSource columns="subset")
# against an independent oracle, tests/nexmark/oracle.py (docs/language.md in Python, with the
# event-time pieces of tests/eventtime/oracle.py).
#   1. python3 tests/nexmark/gen.py writes one seeded event stream (persons, auctions, bids, some
#      rows out of order) as persons.csv, auctions.csv, bids.csv and events.csv (all kinds in one
#      file, with a `kind` column), and q13's side table side.csv, into data/, shared by every
#      query;
#   2. for every query (or the named ones): oracle.py writes the expected output, the late count
#      of each Join and time window and the peak kept tuples of each Join (and checks that the
#      graph's parameters are the ones it assumes); the data must make late tuples where
#      MUST_BE_LATE says;
#   3. sf-exec runs the graph as written: its output equals the oracle's byte for byte, the `late`
#      of each Join and time window in --stats-json the oracle's, and the `kept_peak` (the most
#      tuples kept at once) of each Join too;
#   4. for widths 2 and 4 (SF_WIDTHS), sf-xform --width W --explain rewrites it, and --explain
#      must say for each operator of EXPLAIN_EXPECT what is listed there (above width 1); sf-exec
#      runs the rewrite: the same bytes, the same late counts (summed over the replicas);
#   5. the queries of DISTRIBUTED (q7: a Join fed by a serial time window; q8: a Join shuffled
#      into a Dedup; q20: a Join and a Filter) also run at width 3 on three executors (sf-xform
#      --hosts, tools/sf-launch: gRPC with mutual TLS on loopback): the same bytes.
# A query whose graph this build refuses because a function it calls does not exist (yet) is
# reported SKIP, not run.
#
# One OK/FAIL/SKIP line per case; a failure keeps the work directory and prints its path. Exits 1
# if a case failed, 77 (skipped) without python3.
#
# Environment: SF_NEXMARK_EVENTS (events, default 40000), SF_NEXMARK_SEED (default 7), SF_WIDTHS
# (the widths of step 4, default "2 4"), SF_RUN_TIMEOUT (seconds per sf-exec run, default 60
# here), SF_KEEP=1 keeps every work directory.
set -uo pipefail

# ---------------------------------------------------------------------------------------------
# What sf-xform --explain must decide, QUERY:OPERATOR:parallel|serial|join. `join`: the Join is
# replicated with both sides entering through one Split hashed on the `on` attributes
# (docs/language.md, "Join"); `parallel`: in a region of the width asked for (stateless Filters and
# Functors, keyed Dedups).
EXPLAIN_EXPECT=(
  q3:westPersons:parallel    # Filter on kind and state
  q3:category10:parallel     # Filter on kind and category
  q3:bySeller:join           # interval Join, person id = seller
  q7:maxPrice:serial         # a time window without partitionBy (one window for all bids)
  q7:highest:join            # interval Join of the bids with their window's maximum
  q8:sameHour:join           # tumbling Join, person id = seller
  q8:firstPerHour:parallel   # Dedup on (id, wstart): shuffled from the Join's region
  q20:withAuction:join       # interval Join with where and lateness, auction id
  q20:category10:parallel    # Filter after the Join, in its region
  q10:dates:parallel         # Functor with a let and the date functions
  q13:keyOf:parallel         # Functor computing the side table's key
  q13:side:parallel          # Lookup: stateless, every replica reads the table
  q14:band:parallel          # Filter with a let
  q14:classify:parallel      # Functor, hour(), in and replace()
  q21:bids:parallel          # Filter on kind
  q21:channelIds:parallel    # Functor with lets, lower, regex_extract and where
  q22:web:parallel           # Filter with starts_with
  q22:dirs:parallel          # Functor with split_part
)
# The Joins and time windows whose input must make late tuples (so that dropping them is tested);
# every other one is expected to have as many as the oracle says, which may be none.
declare -A MUST_BE_LATE=([q7]="maxPrice highest" [q8]="sameHour" [q20]="withAuction")
QUERIES=(q3 q7 q8 q10 q13 q14 q20 q21 q22)
DISTRIBUTED=(q7 q8 q20)
read -r -a WIDTHS <<<"${SF_WIDTHS:-2 4}"
# ---------------------------------------------------------------------------------------------

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
  echo "nexmark: skipped: python3 is missing (the data generator and the oracle need it)"
  exit 77
fi
sf_need_bins "$build" sf-xform sf-exec || exit 1
[[ $# -gt 0 ]] && QUERIES=("$@")

nx=$src/tests/nexmark
events=${SF_NEXMARK_EVENTS:-40000}
seed=${SF_NEXMARK_SEED:-7}
timeout=${SF_RUN_TIMEOUT:-60}
export SF_CASE_WIDTH=22
echo "nexmark: $events events, seed $seed"

sf_mktemp SF_WORK sf-nexmark || exit 1
top=$SF_WORK
if ! python3 "$nx/gen.py" --events "$events" --seed "$seed" -o "$top/data" >"$top/gen.log" 2>&1; then
  sf_bad "data" "gen.py failed" "$top/gen.log"
  exit 1
fi
sf_ok "data" "$(($(wc -l <"$top/data/events.csv") - 1)) events: $(($(wc -l <"$top/data/persons.csv") - 1)) persons, $(($(wc -l <"$top/data/auctions.csv") - 1)) auctions, $(($(wc -l <"$top/data/bids.csv") - 1)) bids"

sf_skip() { # CASE WHAT
  printf '%-*s SKIP  %s\n' "$SF_CASE_WIDTH" "$1" "$2"
}

# late_check STATS ORACLE_LATE: each Join and time window the oracle counted has, in sf-exec's
# --stats-json, a `late` field (summed over its replicas NAME[c]) equal to the oracle's count.
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
    if any("late" not in e for e in entries):
        print("    no 'late' field in the stats of '%s'" % op); bad = 1; continue
    got = sum(e["late"] for e in entries)
    if got != n:
        print("    %s: late %d, the oracle counts %d" % (op, got, n)); bad = 1
sys.exit(bad)
PY
}

# kept_check STATS ORACLE_KEPT: each Join the oracle counted has, in a sequential run's
# --stats-json, a `kept_peak` equal to the most tuples the oracle's Join kept at once.
kept_check() {
  python3 - "$1" "$2" <<'PY'
import json, sys
stats = {e["name"]: e for e in json.load(open(sys.argv[1]))["operators"]}
bad = 0
for op, n in sorted(json.load(open(sys.argv[2])).items()):
    got = stats.get(op, {}).get("kept_peak")
    if got != n:
        print("    %s: kept_peak %s, the oracle keeps at most %d" % (op, got, n)); bad = 1
sys.exit(bad)
PY
}

# explain_check QUERY WIDTH EXPLAIN: each QUERY:OP:WANT of EXPLAIN_EXPECT holds in the --explain
# text. Prints what differs; returns 1 then.
explain_check() {
  local q=$1 width=$2 file=$3 entry op want got rc=0
  for entry in "${EXPLAIN_EXPECT[@]}"; do
    [[ ${entry%%:*} == "$q" ]] || continue
    op=${entry#*:}
    want=${op#*:}
    op=${op%%:*}
    if grep -Eq "^.*:[0-9]+: $op: parallel in region r[0-9]+ \(width $width, split hash on '[^']*'.*: its two sides enter through one Split" "$file"; then
      got="join"
    elif grep -Eq "^.*:[0-9]+: $op: parallel in region r[0-9]+ \(width ${width}[,)]" "$file"; then
      got=parallel
    elif grep -Eq "^.*:[0-9]+: $op: not parallelized" "$file"; then
      got=serial
    else
      got="not mentioned (or another width)"
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
  (cd "$1" && timeout -k 5 "$timeout" "$build/bin/sf-exec" --stats-json "$3" "$2") >"$4" 2>&1
}

t_start=$(sf_now)
for q in "${QUERIES[@]}"; do
  graph=$nx/$q.xml
  SF_WORK=$top/$q
  mkdir -p "$SF_WORK/expected" "$SF_WORK/out"
  w=$SF_WORK
  ln -s ../data "$w/data"
  if [[ ! -f $graph ]]; then
    sf_bad "$q" "no such query (tests/nexmark/$q.xml)"
    continue
  fi
  if ! "$build/bin/sf-xform" --check "$graph" >/dev/null 2>"$w/check.log"; then
    if grep -q "error: unknown function '" "$w/check.log"; then
      sf_skip "$q" "this build has no $(grep -o "unknown function '[a-z_]*'" "$w/check.log" | head -n 1 | cut -d' ' -f3-)"
    else
      sf_bad "$q" "sf-xform --check refuses the graph" "$w/check.log"
    fi
    continue
  fi

  # 2: the oracle's output
  if ! (cd "$w" && python3 "$nx/oracle.py" "$q" data "expected/$q.csv" --late oracle-late.json --kept oracle-kept.json \
    --graph "$graph") \
    >"$w/oracle.log" 2>&1; then
    sf_bad "$q oracle" "oracle.py failed" "$w/oracle.log"
    continue
  fi
  nrows=$(($(wc -l <"$w/expected/$q.csv") - 1))
  problem=""
  for op in ${MUST_BE_LATE[$q]:-}; do
    python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])).get(sys.argv[2], 0) == 0)' \
      "$w/oracle-late.json" "$op" || problem="the input makes no late tuple for '$op'"
  done
  if [[ -n $problem ]]; then
    sf_bad "$q data" "$problem"
  elif [[ $nrows -lt 50 ]]; then
    sf_bad "$q data" "the oracle expects only $nrows rows"
  else
    counted=$(tr -d '{}"\n' <"$w/oracle-late.json")
    sf_ok "$q data" "$nrows rows expected${counted:+; late: $counted}"
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
  if ! report=$(late_check "$w/stats-seq.json" "$w/oracle-late.json"); then
    sf_bad "$q sequential late" "late counts differ (stats $w/stats-seq.json)"
    printf '%s\n' "$report"
  fi
  if [[ $(tr -d '{}\n' <"$w/oracle-kept.json") != "" ]]; then
    if report=$(kept_check "$w/stats-seq.json" "$w/oracle-kept.json"); then
      sf_ok "$q sequential kept" "--stats-json kept_peak equals the oracle's: $(tr -d '{}"\n' <"$w/oracle-kept.json")"
    else
      sf_bad "$q sequential kept" "kept_peak differs (stats $w/stats-seq.json)"
      printf '%s\n' "$report"
    fi
  fi
  mv "$w/out" "$w/out-seq"

  # 4: rewritten at widths 2 and 4
  for width in "${WIDTHS[@]}"; do
    par=$w/par-w$width.xml
    if ! "$build/bin/sf-xform" --width "$width" --explain "$graph" -o "$par" 2>"$w/explain-w$width.txt"; then
      sf_bad "$q width $width" "sf-xform failed" "$w/explain-w$width.txt"
      continue
    fi
    # (width 1 makes no region: nothing to check)
    if ((width > 1)) && ! report=$(explain_check "$q" "$width" "$w/explain-w$width.txt"); then
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
    elif ! report=$(sf_compare_dirs "$w/expected" "$w/out"); then
      sf_bad "$q width $width" "differs from the oracle (graph $par, actual $w/out-w$width)"
      printf '%s\n' "$report"
    elif ! report=$(late_check "$w/stats-w$width.json" "$w/oracle-late.json"); then
      sf_bad "$q width $width" "late counts differ (stats $w/stats-w$width.json)"
      printf '%s\n' "$report"
    else
      sf_ok "$q width $width" "equals the oracle$( ((width > 1)) && echo ", --explain as listed") (${secs}s)"
    fi
    mv "$w/out" "$w/out-w$width"
  done

  # 5: on three executors
  [[ " ${DISTRIBUTED[*]} " == *" $q "* ]] || continue
  mkdir "$w/out"
  if ! sf_next_ports 3 ||
    ! "$build/bin/sf-xform" -w 3 --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1,h2=127.0.0.1:$P2" "$graph" \
      -o "$w/dist.xml" 2>"$w/xform-dist.log"; then
    sf_bad "$q 3 executors" "sf-xform --hosts failed" "$w/xform-dist.log"
    continue
  fi
  t0=$(sf_now)
  if ! timeout -k 5 120 bash "$src/tools/sf-launch" --exec "$build/bin/sf-exec" --workdir "$w" "$w/dist.xml" \
    >"$w/dist.log" 2>&1; then
    sf_bad "$q 3 executors" "sf-launch on three executors failed" "$w/dist.log"
  elif ! report=$(sf_compare_dirs "$w/expected" "$w/out"); then
    sf_bad "$q 3 executors" "differs from the oracle (graph $w/dist.xml, actual $w/out-dist)"
    printf '%s\n' "$report"
  else
    sf_ok "$q 3 executors" "equals the oracle at width 3 on 3 executors ($(sf_elapsed "$t0" "$(sf_now)")s)"
  fi
  mv "$w/out" "$w/out-dist"
done

echo "nexmark: $SF_PASSED passed, $SF_FAILED failed, $(sf_elapsed "$t_start" "$(sf_now)")s"
[[ $SF_FAILED -eq 0 ]]
