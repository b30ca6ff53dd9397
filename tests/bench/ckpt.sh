#!/usr/bin/env bash
# tests/bench/ckpt.sh [BUILD_DIR]: checkpoint overhead, time to restore, snapshot bytes per key.
# Checkpoints. The recovery test's graph (tests/recovery/ckpt.xml:
# two Beacons of SF_BENCH_CKPT_N tuples, default 3000000; fan-in, Dedup, windows, a shuffle) at
# width 2 without checkpoints and with one every 1 s and every 0.1 s, run alternately (the
# overhead); killed with kill -9 half way and restored with --restore, in one process and on three
# executors under sf-launch --restart (the time to restored); and the snapshot bytes per key of a
# keyed Aggregate and a Dedup over SF_BENCH_CKPT_KEYS keys (default 1000000).
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"

CN=${SF_BENCH_CKPT_N:-3000000}
sed "s/COUNT/$CN/" "$top/tests/recovery/ckpt.xml" >ckpt-seq.xml
"$bin/sf-xform" -w 2 ckpt-seq.xml -o ckpt.xml
echo "checkpoints: tests/recovery/ckpt.xml at width 2, two sources of $CN tuples (fan-in, Dedup, windows, shuffle),"
echo "   median of $RUNS alternating runs"
bench_alternate '"$bin/sf-exec" ckpt.xml' \
  '"$bin/sf-exec" --checkpoint-dir ck --checkpoint-interval 1 ckpt.xml' \
  '"$bin/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.1 ckpt.xml'
t0=${bench_med[0]} t_ck1=${bench_med[1]} t_ck01=${bench_med[2]}
overhead() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f %%", 100 * (a / b - 1) }'; }
printf '   no checkpoints            %8ss  %s\n' "$t0" "$(rate $((2 * CN)) "$t0")"
printf '   a checkpoint every 1 s    %8ss  %s  overhead %s\n' "$t_ck1" "$(rate $((2 * CN)) "$t_ck1")" "$(overhead "$t_ck1" "$t0")"
printf '   a checkpoint every 0.1 s  %8ss  %s  overhead %s\n' "$t_ck01" "$(rate $((2 * CN)) "$t_ck01")" "$(overhead "$t_ck01" "$t0")"
what="ckpt.xml at width 2, 2 x $CN tuples"
bench_figure interval1 "$(mrate $((2 * CN)) "$t_ck1")" "$(mrate $((2 * CN)) "$t0")" "M tuples/s" \
  "$what: a checkpoint every 1 s against none"
bench_figure interval0.1 "$(mrate $((2 * CN)) "$t_ck01")" "$(mrate $((2 * CN)) "$t0")" "M tuples/s" \
  "$what: a checkpoint every 0.1 s against none"

seconds() { awk -v ns="$1" 'BEGIN { printf "%.3f", ns / 1e9 }'; }
# recovery: killed after about half the run, then restored; the restore's time to its first
# restored line (reading and checking the checkpoint, reopening the sink) and to the end
restored=() rest=()
for i in $(seq "$RUNS"); do
  rm -rf ck out.csv .out.csv.tmp.*
  "$bin/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.2 ckpt.xml & pid=$!
  sleep "$(awk -v t="$t0" 'BEGIN { printf "%.2f", t / 2 }')"
  kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null || true
  k0=$(now_ns)
  "$bin/sf-exec" --checkpoint-dir ck --restore ckpt.xml 2>&1 >/dev/null | while read -r line; do
    case $line in "sf-exec: restored checkpoint"*) now_ns >restored.ns ;; esac
  done
  k2=$(now_ns)
  [ -f restored.ns ] || { echo "   (run $i: no checkpoint was complete at the kill)"; continue; }
  k1=$(cat restored.ns); rm -f restored.ns
  restored+=("$(seconds $((k1 - k0)))") rest+=("$(seconds $((k2 - k1)))")
done
if [ ${#restored[@]} -gt 0 ]; then
  printf '   kill -9 at half way, then --restore: restored in %s s (the rest of the job took %s s; medians of %d)\n' \
    "$(bench_median "${restored[@]}")" "$(bench_median "${rest[@]}")" ${#restored[@]}
  bench_figure restore "$(bench_median "${restored[@]}")" - s \
    "$what, kill -9 half way: sf-exec --restore to restored, median of ${#restored[@]}"
fi
# the same on three executors under sf-launch --restart: from the kill of h1 to every executor
# having restored the checkpoint (sf-launch notices, stops the others, starts them all again)
port=$((30000 + RANDOM % 20000))
"$bin/sf-xform" -w 2 --hosts "h0=127.0.0.1:$port,h1=127.0.0.1:$((port + 1)),h2=127.0.0.1:$((port + 2))" \
  ckpt-seq.xml -o ckpt-dist.xml
dist=()
for i in $(seq "$RUNS"); do
  rm -rf ck out.csv launch.log
  # the graph by its full path: the executor to kill is found by its command line, this run's alone
  bash "$top/tools/sf-launch" --exec "$bin/sf-exec" --insecure-plaintext --checkpoint-dir ck \
    --checkpoint-interval 0.2 --restart 1 "$work/ckpt-dist.xml" >launch.log 2>&1 & lp=$!
  sleep "$(awk -v t="$t0" 'BEGIN { printf "%.2f", t / 2 + 1 }')"
  victim=$(pgrep -f -- "sf-exec --host h1 .*$work/ckpt-dist.xml" | head -n 1) || true
  [ -n "$victim" ] || { wait $lp || true; continue; }
  kd=$(now_ns) done_ns=""
  kill -KILL "$victim"
  while kill -0 $lp 2>/dev/null; do
    if [ "$(grep -c "sf-exec: restored checkpoint" launch.log)" -ge 3 ]; then done_ns=$(now_ns); break; fi
    sleep 0.005
  done
  wait $lp || true
  [ -n "$done_ns" ] || { echo "   (distributed run $i: no checkpoint restored)"; continue; }
  dist+=("$(seconds $((done_ns - kd)))")
done
if [ ${#dist[@]} -gt 0 ]; then
  printf '   three executors, kill -9 of h1 half way: every executor restored %s s after the kill (sf-launch --restart; median of %d)\n' \
    "$(bench_median "${dist[@]}")" ${#dist[@]}
  bench_figure restore_dist "$(bench_median "${dist[@]}")" - s \
    "$what, three executors: kill -9 of one to all restored (sf-launch --restart), median of ${#dist[@]}"
fi
# size per key: one keyed Aggregate and a Dedup over K keys, checkpointed once every key exists
K=${SF_BENCH_CKPT_KEYS:-1000000}
cat >keys.xml <<XML
$header
  <schema name="In"><attr name="k" type="int"/><attr name="v" type="int"/></schema>
  <schema name="Out"><attr name="k" type="int"/><attr name="s" type="int"/></schema>
  <operator name="src" kind="Beacon">
    <output stream="A" schema="In"/>
    <param name="count">$((3 * K))</param>
    <set attr="k">seq % $K</set>
    <set attr="v">rand(seq) % 1000</set>
  </operator>
  <operator name="agg" kind="Aggregate">
    <input stream="A"/>
    <output stream="B" schema="Out"/>
    <param name="partitionBy">k</param>
    <param name="window">tumbling 1000</param>
    <set attr="s">sum(v)</set>
  </operator>
  <operator name="dedup" kind="Dedup">
    <input stream="A"/>
    <output stream="C" schema="In"/>
    <param name="partitionBy">k</param>
  </operator>
  <operator name="out" kind="FileSink"><input stream="B"/><param name="file">/dev/null</param></operator>
  <operator name="out2" kind="FileSink"><input stream="C"/><param name="file">/dev/null</param></operator>
</graph>
XML
rm -rf ck
"$bin/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.5 keys.xml 2>/dev/null & kp=$!
last=""
while kill -0 $kp 2>/dev/null; do
  for m in ck/ckpt-*/MANIFEST; do [ -f "$m" ] && last=$(dirname "$m"); done
  rm -rf ck-last
  if [ -n "$last" ] && cp -r "$last" ck-last 2>/dev/null && [ -f ck-last/MANIFEST ] && [ -f ck-last/agg.snap ] &&
     [ -f ck-last/dedup.snap ]; then
    rm -rf ck-keep && mv ck-last ck-keep # a whole one (the job removes them when it completes)
  fi
  sleep 0.2
done
wait $kp 2>/dev/null || true
if [ -f ck-keep/agg.snap ]; then
  agg=$(awk -v b="$(stat -c %s ck-keep/agg.snap)" -v k="$K" 'BEGIN { printf "%.1f", b / k }')
  dedup=$(awk -v b="$(stat -c %s ck-keep/dedup.snap)" -v k="$K" 'BEGIN { printf "%.1f", b / k }')
  printf '   %s keys: Aggregate (tumbling, sum) %s bytes/key, Dedup %s bytes/key (the last checkpoint of the run)\n' \
    "$K" "$agg" "$dedup"
  bench_figure agg_snapshot "$agg" - bytes/key \
    "snapshot of a keyed Aggregate (tumbling, sum) over $K keys"
  bench_figure dedup_snapshot "$dedup" - bytes/key "snapshot of a Dedup over $K keys"
fi
bench_end
