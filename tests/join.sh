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
#   4. kill-N and shuffle-N kill runs with checkpoints and restore them at another width, and
#      shuffle-dist-N runs a shuffle, fanin-dist-N a Join fanned in with another source, on three
#      executors with checkpoints (below).
# One OK/FAIL line per case. Environment: SF_JOIN_CASES (default 40), SF_JOIN_KILL_RUNS (12),
# SF_JOIN_SHUFFLE_RUNS (6), SF_JOIN_SHUFFLE_DIST_RUNS (3), SF_JOIN_FANIN_RUNS (2).
set -uo pipefail
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
. "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec sf-randgraph || exit 2
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
# kill-N: checkpoints through the time-ordered merge of a Join's sides (docs/design.md, "Checkpoints
# of a time-ordered fan-in"). A longer random case (SF_JOIN_KILL_ROWS rows a side), at width W (1:
# the Join serial, merging its sides itself; 2-4: replicated, the region's Split merging them) with
# a checkpoint every 20 ms, is killed with SIGKILL at a random moment of its run and restored with
# --restore at width W2 (another replicated width, or 1 when W is 1): the output must equal
# expected.csv byte for byte. At least one case must restore from a checkpoint (not only start
# again), or the cut is not tested.
kill_rows=${SF_JOIN_KILL_ROWS:-150000}
kill_runs=${SF_JOIN_KILL_RUNS:-12}
SF_WORK=$work/kill
mkdir -p "$SF_WORK"
restored=0
if ! python3 "$src/tests/join/gen.py" 6 "$SF_WORK" "$kill_rows" 2>"$SF_WORK/gen.log"; then
  sf_bad "kill" "gen.py failed" "$SF_WORK/gen.log"
else
  for w in 1 2 3 4; do
    if [[ $w == 1 ]]; then cp "$SF_WORK/j.xml" "$SF_WORK/k1.xml"; else
      "$build/bin/sf-xform" -w "$w" "$SF_WORK/j.xml" >"$SF_WORK/k$w.xml" 2>/dev/null; fi
  done
  t0=$(sf_now)
  (cd "$SF_WORK" && "$build/bin/sf-exec" k2.xml) >/dev/null 2>&1
  full_ms=$(awk -v e="$(sf_elapsed "$t0" "$(sf_now)")" 'BEGIN { printf "%d", e * 1000 }')
  for ((i = 1; i <= kill_runs; i++)); do
    w=$((1 + RANDOM % 4))
    if [[ $w == 1 ]]; then w2=1; else w2=$((2 + RANDOM % 3)); fi
    ms=$((full_ms * (15 + RANDOM % 80) / 100 + 5))
    rm -rf "$SF_WORK/ck" "$SF_WORK/out.csv"
    (cd "$SF_WORK" && exec "$build/bin/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.02 "k$w.xml") \
      >"$SF_WORK/killed.log" 2>&1 &
    pid=$!
    sleep "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')"
    killed=0
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null && killed=1
    wait "$pid" 2>/dev/null
    what="width $w killed at $ms ms of $full_ms"
    if [[ $killed == 0 ]]; then
      cmp -s "$SF_WORK/out.csv" "$SF_WORK/expected.csv" && sf_ok "kill-$i" "width $w, finished before the kill at $ms ms" ||
        sf_bad "kill-$i" "width $w finished before the kill: out.csv differs" "$SF_WORK/killed.log"
      continue
    fi
    if ! (cd "$SF_WORK" && timeout 120 "$build/bin/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.02 --restore "k$w2.xml") \
      >"$SF_WORK/restore.log" 2>&1; then
      sf_bad "kill-$i" "$what: the restore at width $w2 failed" "$SF_WORK/restore.log"
      continue
    fi
    k=$(sed -n "s/^sf-exec: restored checkpoint \([0-9]*\) .*/\1/p" "$SF_WORK/restore.log")
    [[ -n $k ]] && restored=$((restored + 1))
    if [[ -n $k ]]; then what+=", restored at width $w2 (checkpoint $k)"; else
      what+=", restored at width $w2 (no checkpoint yet: from the beginning)"; fi
    if cmp -s "$SF_WORK/out.csv" "$SF_WORK/expected.csv"; then
      sf_ok "kill-$i" "$what"
    else
      sf_bad "kill-$i" "$what: out.csv differs from expected.csv" "$SF_WORK/restore.log"
    fi
  done
  if [[ $restored == 0 ]]; then
    sf_bad "kill" "no run was restored from a checkpoint (each was killed before its first one completed)"
  fi
fi

# shuffle-N: tests/join/shuffle.xml (a Join shuffled into an Aggregate keyed otherwise) at width 3
# with a checkpoint every 20 ms, killed at a random moment and restored at width 2 or 4, where the
# regions' Splits and Merges start afresh but for what the Join's Split recorded of its inputs at
# the cut: the output must equal the sequential run's byte for byte.
shuffle_runs=${SF_JOIN_SHUFFLE_RUNS:-6}
SF_WORK=$work/shuffle
mkdir -p "$SF_WORK/ref/out"
restored=0
for w in 2 3 4; do "$build/bin/sf-xform" -w "$w" "$src/tests/join/shuffle.xml" >"$SF_WORK/s$w.xml" 2>/dev/null; done
(cd "$SF_WORK/ref" && "$build/bin/sf-exec" "$src/tests/join/shuffle.xml") >"$SF_WORK/ref.log" 2>&1 ||
  sf_bad "shuffle" "the sequential run failed" "$SF_WORK/ref.log"
t0=$(sf_now)
(cd "$SF_WORK" && mkdir -p out && "$build/bin/sf-exec" s3.xml) >/dev/null 2>&1
full_ms=$(awk -v e="$(sf_elapsed "$t0" "$(sf_now)")" 'BEGIN { printf "%d", e * 1000 }')
for ((i = 1; i <= shuffle_runs; i++)); do
  w2=$((2 + 2 * (RANDOM % 2)))
  ms=$((full_ms * (30 + RANDOM % 65) / 100 + 5))
  rm -rf "$SF_WORK/ck" "$SF_WORK/out"
  mkdir -p "$SF_WORK/out"
  (cd "$SF_WORK" && exec "$build/bin/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.02 s3.xml) >"$SF_WORK/killed.log" 2>&1 &
  pid=$!
  sleep "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  what="width 3 killed at $ms ms of $full_ms"
  if ! (cd "$SF_WORK" && timeout 120 "$build/bin/sf-exec" --checkpoint-dir ck --restore "s$w2.xml") >"$SF_WORK/restore.log" 2>&1; then
    sf_bad "shuffle-$i" "$what: the restore at width $w2 failed" "$SF_WORK/restore.log"
    continue
  fi
  k=$(sed -n "s/^sf-exec: restored checkpoint \([0-9]*\) .*/\1/p" "$SF_WORK/restore.log")
  [[ -n $k ]] && restored=$((restored + 1)) && what+=", restored at width $w2 (checkpoint $k)"
  [[ -z $k ]] && what+=", restarted at width $w2 (no checkpoint)"
  if cmp -s "$SF_WORK/out/main.csv" "$SF_WORK/ref/out/main.csv"; then
    sf_ok "shuffle-$i" "$what"
  else
    sf_bad "shuffle-$i" "$what: out/main.csv differs from the sequential run's" "$SF_WORK/restore.log"
  fi
done
((restored > 0)) || sf_bad "shuffle" "no run was restored from a checkpoint (each was killed before its first one completed)"

# shuffle-dist: the same graph at width 2 on three executors with a checkpoint every 20 ms. A
# barrier leaves the Join's time-ordered merge with the checkpoint's position, and the shuffle
# Merge passes on one channel's pulse: neither may promise the executor downstream a position
# behind a tuple it has already sent ("sequence numbers went backwards" before).
shuffle_dist_runs=${SF_JOIN_SHUFFLE_DIST_RUNS:-3}
for ((i = 1; i <= shuffle_dist_runs; i++)); do
  if ! sf_next_ports 3 ||
    ! "$build/bin/sf-xform" -w 2 --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1,h2=127.0.0.1:$P2" \
      "$src/tests/join/shuffle.xml" >"$SF_WORK/d2.xml" 2>"$SF_WORK/xformd.log"; then
    sf_bad "shuffle-dist-$i" "sf-xform --hosts failed" "$SF_WORK/xformd.log"
    continue
  fi
  rm -rf "$SF_WORK/ck" "$SF_WORK/out"
  mkdir -p "$SF_WORK/out"
  if ! timeout -k 5 120 bash "$src/tools/sf-launch" --exec "$build/bin/sf-exec" --workdir "$SF_WORK" \
    --checkpoint-dir "$SF_WORK/ck" --checkpoint-interval 0.02 "$SF_WORK/d2.xml" >"$SF_WORK/rund.log" 2>&1; then
    sf_bad "shuffle-dist-$i" "width 2 on three executors, a checkpoint every 20 ms: sf-launch failed" "$SF_WORK/rund.log"
  elif ! cmp -s "$SF_WORK/out/main.csv" "$SF_WORK/ref/out/main.csv"; then
    sf_bad "shuffle-dist-$i" "width 2 on three executors: out/main.csv differs from the sequential run's" "$SF_WORK/rund.log"
  else
    sf_ok "shuffle-dist-$i" "width 2 on three executors with checkpoints, the same as the sequential run"
  fi
done

# fanin-dist-N: a Join's output fanned in by position with another source's stream, then hashed
# into a keyed Dedup, at width 3 on three executors with a checkpoint every 20 ms (sf-randgraph
# 20268203016, its Beacons at 200000 rows: kill_restore's graph 16 of seed 20261203). A barrier
# left the Join's time-ordered merge with the checkpoint's position as its place, ahead of the
# renumbered items after it: the fan-in let them follow it, and the executor downstream refused
# the edge ("sequence numbers went backwards", 3 of 4 runs before). The output must equal the
# sequential run's.
fanin_runs=${SF_JOIN_FANIN_RUNS:-2}
SF_WORK=$work/fanin
mkdir -p "$SF_WORK/tables" "$SF_WORK/ref/out"
if ! "$build/bin/sf-randgraph" --tables "$SF_WORK/tables" 20268203016 out >"$SF_WORK/g.xml" 2>"$SF_WORK/gen.log"; then
  sf_bad "fanin" "sf-randgraph 20268203016 failed" "$SF_WORK/gen.log"
else
  awk '/<operator / { beacon = /kind="Beacon"/ } beacon && /<param name="count">/ { sub(/>[0-9]+</, ">200000<") } { print }' \
    "$SF_WORK/g.xml" >"$SF_WORK/seq.xml"
  (cd "$SF_WORK/ref" && "$build/bin/sf-exec" ../seq.xml) >"$SF_WORK/ref.log" 2>&1 || sf_bad "fanin" "the sequential run failed" "$SF_WORK/ref.log"
  for ((i = 1; i <= fanin_runs; i++)); do
    if ! sf_next_ports 3 ||
      ! "$build/bin/sf-xform" -w 3 --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1,h2=127.0.0.1:$P2" "$SF_WORK/seq.xml" \
        >"$SF_WORK/d3.xml" 2>"$SF_WORK/xformd.log"; then
      sf_bad "fanin-dist-$i" "sf-xform --hosts failed" "$SF_WORK/xformd.log"
      continue
    fi
    rm -rf "$SF_WORK/ck" "$SF_WORK/run" && mkdir -p "$SF_WORK/run/out"
    if ! timeout -k 5 120 bash "$src/tools/sf-launch" --exec "$build/bin/sf-exec" --workdir "$SF_WORK/run" \
      --checkpoint-dir "$SF_WORK/ck" --checkpoint-interval 0.02 "$SF_WORK/d3.xml" >"$SF_WORK/rund.log" 2>&1; then
      sf_bad "fanin-dist-$i" "width 3 on three executors, a checkpoint every 20 ms: sf-launch failed" "$SF_WORK/rund.log"
    elif ! sf_compare_dirs "$SF_WORK/ref/out" "$SF_WORK/run/out" >"$SF_WORK/cmp.log" 2>&1; then
      sf_bad "fanin-dist-$i" "width 3 on three executors: the output differs from the sequential run's" "$SF_WORK/cmp.log"
    else
      sf_ok "fanin-dist-$i" "a Join fanned in with another source, width 3 on three executors with checkpoints: the sequential run's output"
    fi
  done
fi

echo "join: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED == 0 ]]
