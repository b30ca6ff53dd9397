#!/usr/bin/env bash
# tests/join.sh BUILD_DIR SOURCE_DIR
#
# The Join operator against an independent expected output (tests/join/gen.py: the rules of
# docs/language.md, "Joins", in Python). Each case is a graph of two FileSources with event time,
# a Join and a FileSink, with its own window (interval with negative, zero and positive bounds;
# tumbling time), lateness, `where`, one or two key pairs, tick period and inputs out of time
# order. Cases 0-3 are written by hand (matches at exactly LOWER and UPPER, keys on one side only,
# ties in time between the sides, a side that ends first, late tuples), the rest random.
#   1. sf-exec runs the graph as written: the FileSink's file equals expected.csv byte for byte,
#      and the Join's `late` and `kept_peak` in --stats-json equal the expected counts (what the
#      window bounds memory to);
#   2. sf-xform --width W --explain rewrites it (W = 2, 4), which must replicate the Join (one
#      Split of both sides, hashed on each side's `on` attributes; a seqpulse Merge), and sf-exec
#      runs the rewrite: the same bytes and late counts (summed over the replicas);
#   3. every 8th case also runs at width 3 on three executors (sf-xform --hosts, tools/sf-launch:
#      gRPC with mutual TLS on loopback): the same bytes.
# One OK/FAIL line per case. Environment: SF_JOIN_CASES (default 40).
set -uo pipefail
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
. "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec || exit 2
command -v python3 >/dev/null || { echo "join: python3 is missing: skipped"; exit 77; }
trap sf_cleanup EXIT
sf_mktemp work sf-join
cases=${SF_JOIN_CASES:-40}

late_of() { # STATS_JSON: the sum of the `late` fields of the Join's entries (replicas included)
  python3 - "$1" <<'PY'
import json, sys
ops = json.load(open(sys.argv[1]))["operators"]
print(sum(o.get("late", 0) for o in ops if o["kind"] == "Join"))
PY
}

for ((c = 0; c < cases; c++)); do
  SF_WORK=$work/c$c
  mkdir -p "$SF_WORK"
  if ! python3 "$src/tests/join/gen.py" "$c" "$SF_WORK" 2>"$SF_WORK/gen.log"; then
    sf_bad "case-$c" "gen.py failed" "$SF_WORK/gen.log"
    continue
  fi
  want_late=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["j"])' "$SF_WORK/late.json")
  window=$(grep -o '<param name="window">[^<]*' "$SF_WORK/j.xml" | sed 's/.*>//')
  lateness=$(grep -o '<param name="lateness">[^<]*' "$SF_WORK/j.xml" | sed 's/.*>//')
  what="$window${lateness:+ lateness $lateness}, $(($(wc -l <"$SF_WORK/expected.csv") - 1)) matches, $want_late late"
  if ! (cd "$SF_WORK" && timeout 60 "$build/bin/sf-exec" --stats-json st.json j.xml) >"$SF_WORK/run.log" 2>&1; then
    sf_bad "case-$c" "$what: sf-exec failed" "$SF_WORK/run.log"
    continue
  fi
  if ! cmp -s "$SF_WORK/out.csv" "$SF_WORK/expected.csv"; then
    diff "$SF_WORK/expected.csv" "$SF_WORK/out.csv" >"$SF_WORK/diff.txt"
    sf_bad "case-$c" "$what: out.csv differs from expected.csv" "$SF_WORK/diff.txt"
    continue
  fi
  want_peak=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kept_peak"])' "$SF_WORK/late.json")
  got_peak=$(python3 -c 'import json,sys; print([o for o in json.load(open(sys.argv[1]))["operators"] if o["kind"] == "Join"][0]["kept_peak"])' "$SF_WORK/st.json")
  if [[ $got_peak != "$want_peak" ]]; then
    sf_bad "case-$c" "$what: kept_peak $got_peak, expected $want_peak (the window bounds what is kept)" "$SF_WORK/run.log"
    continue
  fi
  got_late=$(late_of "$SF_WORK/st.json")
  if [[ $got_late != "$want_late" ]]; then
    sf_bad "case-$c" "$what: late $got_late, expected $want_late" "$SF_WORK/run.log"
    continue
  fi
  bad=""
  for w in 2 4; do
    if ! "$build/bin/sf-xform" --width "$w" --explain "$SF_WORK/j.xml" >"$SF_WORK/w$w.xml" 2>"$SF_WORK/xform$w.log"; then
      bad="sf-xform --width $w failed"
      break
    fi
    mv "$SF_WORK/out.csv" "$SF_WORK/out1.csv"
    if ! (cd "$SF_WORK" && timeout 60 "$build/bin/sf-exec" --stats-json st$w.json "w$w.xml") >"$SF_WORK/run$w.log" 2>&1; then
      bad="sf-exec on the rewrite at width $w failed"
      break
    fi
    if ! cmp -s "$SF_WORK/out.csv" "$SF_WORK/expected.csv"; then
      bad="width $w: out.csv differs from expected.csv"
      break
    fi
    if [[ $(late_of "$SF_WORK/st$w.json") != "$want_late" ]]; then
      bad="width $w: late $(late_of "$SF_WORK/st$w.json"), expected $want_late"
      break
    fi
  done
  if [[ -z $bad ]] && ! grep -q ": j: parallel in region r1 (width 4, split hash on 'k'" "$SF_WORK/xform4.log"; then
    bad="sf-xform --explain does not put the Join in a region of width 4"
  fi
  # every 8th case: also on three executors (sf-launch, gRPC with mutual TLS), width 3
  dist=""
  if [[ -z $bad ]] && ((c % 8 == 0)); then
    dist="; on 3 executors too"
    w=d
    if ! sf_next_ports 3 ||
      ! "$build/bin/sf-xform" -w 3 --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1,h2=127.0.0.1:$P2" "$SF_WORK/j.xml" \
        >"$SF_WORK/d.xml" 2>"$SF_WORK/xformd.log"; then
      bad="sf-xform --hosts failed"
    else
      rm -f "$SF_WORK/out.csv"
      if ! timeout -k 5 120 bash "$src/tools/sf-launch" --exec "$build/bin/sf-exec" --workdir "$SF_WORK" "$SF_WORK/d.xml" \
        >"$SF_WORK/rund.log" 2>&1; then
        bad="sf-launch on three executors failed"
      elif ! cmp -s "$SF_WORK/out.csv" "$SF_WORK/expected.csv"; then
        bad="three executors: out.csv differs from expected.csv"
      fi
    fi
  fi
  if [[ -n $bad ]]; then
    sf_bad "case-$c" "$what: $bad" "$SF_WORK/run$w.log" "$SF_WORK/xform$w.log"
    continue
  fi
  sf_ok "case-$c" "$what; replicated at widths 2 and 4 the same$dist"
done
echo "join: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED == 0 ]]
