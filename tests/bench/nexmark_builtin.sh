#!/usr/bin/env bash
# tests/bench/nexmark_builtin.sh [BUILD_DIR]: the built-in NEXMark-style queries, joins included, sequential against -w 2.
# The queries of tests/nexmark/ (q3, q7, q8 and q20 joins; q13 a lookup; q10, q14, q21, q22 string,
# regex and time functions; tests/nexmark.sh checks them against an oracle) over one event stream of
# SF_BENCH_NEXB_EVENTS events (default 1000000; tests/nexmark/gen.py, seed 7: 1 person, 3
# auctions and 46 bids in 50). Each query runs as written (the baseline) and rewritten by
# `sf-xform -w 2`, alternately (bench_alternate), outputs checked byte-identical. Figures per
# query: the tuples its sources read per second at -w 2 against sequential (the ratio is the
# speed-up), and the peak resident memory of each (peak_rss_kib of sf-exec --stats-json, the
# median of the same runs). For a Join, the report adds the tuples it kept at most (the
# `kept_peak` and `kept_peak_bytes` of its --stats-json entry, summed over the replicas at -w 2)
# when this sf-exec reports them. A query this build cannot check (a function it lacks) is left
# out, and the report says so.
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"
command -v python3 >/dev/null || bench_skip "python3 is missing (the events come from tests/nexmark/gen.py)"

EVENTS=${SF_BENCH_NEXB_EVENTS:-1000000}
python3 "$top/tests/nexmark/gen.py" --events "$EVENTS" --seed 7 -o data

# stat FILE WHAT: from an sf-exec --stats-json file, WHAT = in (the tuples the sources emitted),
# rss (peak_rss_kib), kept or kept_bytes (the Joins' kept_peak / kept_peak_bytes summed over
# their entries; - when there is none)
stat() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ops, what = d["operators"], sys.argv[2]
if what == "in":
    print(sum(o.get("out", 0) for o in ops if o["kind"] in ("FileSource", "Beacon", "SocketSource")))
elif what == "rss":
    print(d["peak_rss_kib"])
else:
    field = {"kept": "kept_peak", "kept_bytes": "kept_peak_bytes"}[what]
    joins = [o for o in ops if o["kind"] == "Join"]
    print(sum(o[field] for o in joins) if joins and all(field in o for o in joins) else "-")
PY
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

echo "built-in NEXMark-style queries over $EVENTS events (tests/nexmark), sequential against sf-xform -w 2"
echo "(outputs identical), median of $RUNS alternating runs; tuples/s counts the tuples the sources read;"
echo "peak resident memory and a Join's kept tuples (--stats-json) of the same runs"
printf '   %-4s %9s %12s %12s %8s %8s %8s %8s %10s %10s\n' query "rows in" "seq tup/s" "-w 2 tup/s" \
  speed-up "MiB seq" "MiB -w 2" "rows out" "kept seq" "kept -w 2"
left_out=()
for q in q3 q7 q8 q10 q13 q14 q20 q21 q22; do
  g=$top/tests/nexmark/$q.xml
  if ! "$bin/sf-xform" --check "$g" >/dev/null 2>"$q.check"; then
    left_out+=("$q ($(grep -o "unknown function '[a-z_]*'" "$q.check" | head -n 1 || echo "refused"))")
    continue
  fi
  "$bin/sf-xform" -w 2 "$g" -o "$q.w2.xml"
  rm -rf seq par
  for d in seq par; do mkdir -p "$d/out" && ln -sfn ../data "$d/data"; done
  mem1=() mem2=()
  bench_alternate -c 'bench_same par/out/$q.csv seq/out/$q.csv "$q at -w 2"; mem1+=($(stat seq.json rss)); mem2+=($(stat par.json rss))' \
    '(cd seq && "$bin/sf-exec" --stats-json ../seq.json "$g" 2>../seq.log)' \
    '(cd par && "$bin/sf-exec" --stats-json ../par.json "$work/$q.w2.xml" 2>../par.log)'
  s1=${bench_med[0]} s2=${bench_med[1]}
  n=$(stat seq.json in)
  m1=$(bench_median "${mem1[@]}") m2=$(bench_median "${mem2[@]}")
  k1=$(stat seq.json kept) k2=$(stat par.json kept)
  b1=$(stat seq.json kept_bytes) b2=$(stat par.json kept_bytes)
  grep -q 'kind="Join"' "$g" || { k1="" k2=""; }
  printf '   %-4s %9s %12.0f %12.0f %8s %8s %8s %8s %10s %10s\n' "$q" "$n" "$(awk -v n="$n" -v s="$s1" 'BEGIN { print n / s }')" \
    "$(awk -v n="$n" -v s="$s2" 'BEGIN { print n / s }')" "$(ratio "$s1" "$s2")" "$(mib "$m1")" "$(mib "$m2")" \
    "$(($(wc -l <seq/out/$q.csv) - 1))" "$k1" "$k2"
  bench_figure "$q" "$(mrate "$n" "$s2")" "$(mrate "$n" "$s1")" "M tuples/s" \
    "built-in NEXMark-style $q, $EVENTS events: sf-xform -w 2 against the sequential graph (tuples the sources read)"
  bench_figure "$q.memory" "$(mib "$m2")" "$(mib "$m1")" MiB \
    "built-in NEXMark-style $q, $EVENTS events: peak resident memory at -w 2 against sequential (median of the runs)"
  if [[ -n $k1 && $k1 != - ]]; then
    bench_figure "$q.kept" "$k2" "$k1" tuples \
      "built-in NEXMark-style $q, $EVENTS events: the Join's kept tuples at most, at -w 2 (summed over replicas) against sequential"
    [[ $b1 == - ]] || bench_figure "$q.kept_bytes" "$b2" "$b1" bytes \
      "built-in NEXMark-style $q, $EVENTS events: the Join's kept bytes at most, at -w 2 (summed over replicas) against sequential"
  fi
done
[[ ${#left_out[@]} -eq 0 ]] || echo "   left out, this build cannot check them: ${left_out[*]}"
echo "   kept: the Joins' kept_peak in --stats-json ('-': this sf-exec does not report it)"
bench_end
