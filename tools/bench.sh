#!/usr/bin/env bash
# tools/bench.sh [BUILD_DIR]: benchmarks that print figures, each against a baseline measured in the
# same run (no timed assertions: the machine is shared and noisy). Builds first if needed.
#   1. chain: Beacon -> Functor -> Filter -> FileSink, tuples/s of sf-exec against a hand-written C
#      program doing the same work on the same data (the output files are checked identical);
#   2. scaling: a CPU-bound Work region at width 1 and width 2 (speed-up; the limit here is 2.0);
#   3. merge cost: the same cheap region with a roundrobin merge and with a seqpulse merge;
#   4. memory: peak resident memory of a 10 million tuple run;
#   5. distribution: a cheap pipeline split across two executors on loopback at several batch
#      sizes, against the same pipeline in one process, and against the raw ceiling: a minimal gRPC
#      core streaming loop of protobuf-c batches of the same tuples between two processes.
#   6. the in-process peer: Intel TBB's parallel_pipeline (serial_in_order source, parallel Work
#      stage, serial_in_order CSV sink; tests/bench/tbb/) against sf-exec on the same Work graph at
#      1, 20, 200 and 2000 rounds, one thread against width 1 and two against width 2 (outputs
#      checked identical); built only when libtbb-dev is installed (SF_BENCH_TBB=0 skips it);
#   7. transformer scale: `sf-xform -w 4 --explain --dot` on generated graphs of 10,000 and
#      100,000 operators (forests of chains of Functor, Filter, keyed Aggregate, Work and stateful
#      Functor with FileSink taps, tests/bench/biggraph.c) against `xmllint --noout --schema
#      schema/graph.xsd` on the same files: time and peak memory ratios, and how time grows;
#   sliding windows: an Aggregate with every aggregate function over `sliding W` windows of 100
#      keys at W = 1, 10, 100, 1000 (tuples/s should not fall with W), and an avg of fractional
#      doubles, the one aggregate still folded again per tuple (O(W));
#   expressions: ns per tuple of the chain's six expressions evaluated by the tree walker
#      (expr_eval) and by the compiled form the operators run (code_eval), same run, same values;
#   latency: tuples at a fixed rate (50,000/s for SF_BENCH_LAT_SECONDS, default 5 s) stamped after
#      the source (sf_stamp, tests/ops/latency.c) through a width-2 Filter region (seqpulse merge) to a
#      sink measuring now - stamp (sf_latency): p50, p99, p99.9 and max in one process and over two
#      executors on loopback, each the run with the median p99 of SF_BENCH_RUNS; the baseline is the
#      same process with --batch 1 (every item its own batch: no wait for a batch at all);
#   checkpoints: the recovery test's graph at width 2 without checkpoints and with one every 1 s and
#      0.1 s (overhead); kill -9 half way and --restore (time to restored, time of the rest); snapshot
#      bytes per key of a keyed Aggregate and a Dedup over 1,000,000 keys;
#   keys: peak memory, bytes per key and tuples/s of a keyed Aggregate and a Dedup over 10 M
#      distinct keys (SF_BENCH_KEYS), against the same graphs over 100 keys;
#   number text: ns per value of the double and int formatters (xform/number.c) against the printf
#      and strtod formatter they replaced, on the same values in the same run (texts checked equal).
# Environment: SF_BENCH_N (tuples for 1, 3 and 5; default 5000000), SF_BENCH_RUNS (best of; default 3),
# SF_BENCH_SLIDE_N (tuples of the sliding windows; default 1000000), SF_BENCH_KEYS (distinct keys;
# default 10000000), SF_BENCH_ONLY=merge, xform, slide, eval, latency, ckpt or keys (run only
# section 3 or 7, the sliding windows, the expressions, the latency, the checkpoints or the keys).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-${SF_BUILD:-$top/build}}" && pwd)
[ -x "$build/bin/sf-exec" ] || "$top/tools/setup.sh"
bin=$build/bin
N=${SF_BENCH_N:-5000000}
RUNS=${SF_BENCH_RUNS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/sf-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out"
cd "$work"

now_ns() { date +%s%N; }
# best_of CMD...: runs CMD $RUNS times, prints the best wall time in seconds
best_of() {
  local best=""
  for _ in $(seq "$RUNS"); do
    local t0 t1
    t0=$(now_ns)
    "$@" >/dev/null
    t1=$(now_ns)
    local d=$((t1 - t0))
    if [ -z "$best" ] || [ "$d" -lt "$best" ]; then best=$d; fi
  done
  awk -v ns="$best" 'BEGIN { printf "%.3f", ns / 1e9 }'
}
# best_of_one CMD...: seconds of one run of CMD (best_of with one run)
best_of_one() { RUNS=1 best_of "$@"; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.2f M tuples/s", n / s / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

header='<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="bench">'

chain_graph() { # N FILE [HOSTS-ATTRS]
  cat <<XML
$header
  <schema name="In"><attr name="k" type="int"/><attr name="v" type="int"/><attr name="x" type="double"/></schema>
  <schema name="Out"><attr name="k" type="int"/><attr name="y" type="int"/><attr name="z" type="double"/></schema>
  ${3:-}
  <operator name="src" kind="Beacon"${4:-}>
    <output stream="A" schema="In"/>
    <param name="count">$1</param>
    <set attr="k">seq % 100</set>
    <set attr="v">rand(seq) % 1000</set>
    <set attr="x">double(seq) * 0.5</set>
  </operator>
  <operator name="f" kind="Functor"${5:-}>
    <input stream="A"/>
    <output stream="B" schema="Out"/>
    <set attr="y">v * 3 + k</set>
    <set attr="z">x / 2.0</set>
  </operator>
  <operator name="keep" kind="Filter"${5:-}>
    <input stream="B"/>
    <output stream="C" schema="Out"/>
    <param name="where">y % 7 != 0</param>
  </operator>
  <operator name="sink" kind="FileSink"${5:-}>
    <input stream="C"/>
    <param name="file">$2</param>
  </operator>
</graph>
XML
}

# ---- 7. transformer scale (a function: SF_BENCH_ONLY=xform runs it alone) ----
# measure NAME CMD...: runs CMD once under /usr/bin/time and keeps in NAME_wall and NAME_cpu the best
# wall and user+system seconds so far, in NAME_rss the largest peak resident KiB (unset them first).
# The transformer and xmllint are run alternately, so that both meet the same load on a shared machine.
measure() {
  local name=$1 wall user sys cpu kib best
  shift
  /usr/bin/time -o times.txt -f '%e %U %S %M' "$@" >/dev/null 2>&1 || { echo "bench: failed: $*" >&2; exit 1; }
  read -r wall user sys kib <times.txt
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  best=${name}_wall
  if [ -z "${!best:-}" ] || awk -v a="$wall" -v b="${!best}" 'BEGIN { exit !(a < b) }'; then printf -v "$best" '%s' "$wall"; fi
  best=${name}_cpu
  if [ -z "${!best:-}" ] || awk -v a="$cpu" -v b="${!best}" 'BEGIN { exit !(a < b) }'; then printf -v "$best" '%s' "$cpu"; fi
  best=${name}_rss
  if [ -z "${!best:-}" ] || [ "$kib" -gt "${!best}" ]; then printf -v "$best" '%s' "$kib"; fi
}

xform_bench() {
  [ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing (tools/setup.sh installs package time)" >&2; exit 1; }
  command -v xmllint >/dev/null || { echo "bench: xmllint is missing (package libxml2-utils)" >&2; exit 1; }
  echo "7. sf-xform -w 4 --explain --dot on generated graphs, against xmllint --noout --schema on the same file"
  printf '   %-9s %-9s %10s %10s %7s %10s %10s %7s %11s %11s %7s\n' operators bytes "xform s" "xmllint s" ratio \
    "xform cpu" "lint cpu" ratio "xform KiB" "lint KiB" ratio
  local n
  for n in 10000 100000; do
    "$bin/sf-bench-biggraph" "$n" >"big$n.xml"
    "$bin/sf-xform" --check "big$n.xml" || { echo "bench: the generated graph of $n operators is refused" >&2; exit 1; }
    unset xf_wall xf_cpu xf_rss xl_wall xl_cpu xl_rss
    for _ in $(seq "$RUNS"); do
      measure xf "$bin/sf-xform" -w 4 --explain --dot "big$n.dot" -o "big$n.out.xml" "big$n.xml"
      measure xl xmllint --noout --schema "$top/schema/graph.xsd" "big$n.xml"
    done
    printf '   %-9s %-9s %10s %10s %6sx %10s %10s %6sx %11s %11s %6sx\n' "$n" "$(stat -c %s "big$n.xml")" \
      "$xf_wall" "$xl_wall" "$(ratio "$xf_wall" "$xl_wall")" "$xf_cpu" "$xl_cpu" "$(ratio "$xf_cpu" "$xl_cpu")" \
      "$xf_rss" "$xl_rss" "$(ratio "$xf_rss" "$xl_rss")"
    printf -v "wall_$n" '%s' "$xf_wall"
    printf -v "cpu_$n" '%s' "$xf_cpu"
    rm -f "big$n.dot" "big$n.out.xml"
  done
  printf '   100k/10k: time %sx (wall), %sx (cpu); linear is 10 (targets: time <= 3x xmllint, growth <= 12, memory <= 3x)\n' \
    "$(ratio "$wall_100000" "$wall_10000")" "$(ratio "$cpu_100000" "$cpu_10000")"
}

# ---- sliding windows: the rate against the window size (a function: SF_BENCH_ONLY=slide) ----
slide_bench() {
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
  echo
  every_agg='<set attr="n">count() + sum(v) + min(v) + max(v) + first(v) + last(v)</set><set attr="a">avg(v) + sum(double(v))</set><set attr="b">0</set>'
  echo "sliding windows: Aggregate over 100 keys, $SN tuples (then a Filter keeping 0.1 %)"
  for w in 1 10 100 1000; do
    slide_graph "$w" "$every_agg" > slide.xml
    t=$(best_of "$bin/sf-exec" slide.xml)
    [ "$w" = 1 ] && t_w1=$t
    printf '   count, sum, avg, min, max, first, last of ints, W = %-4s %8ss  %s  (%s the time of W = 1)\n' \
      "$w" "$t" "$(rate "$SN" "$t")" "$(ratio "$t" "$t_w1")"
  done
  for w in 1 10 100 1000; do
    slide_graph "$w" '<set attr="n">0</set><set attr="a">avg(x)</set><set attr="b">0</set>' > slide.xml
    t=$(best_of "$bin/sf-exec" slide.xml)
    [ "$w" = 1 ] && t_w1=$t
    printf '   avg of fractional doubles (folded again),  W = %-4s %8ss  %s  (%s the time of W = 1)\n' \
      "$w" "$t" "$(rate "$SN" "$t")" "$(ratio "$t" "$t_w1")"
  done
}

# ---- expressions: the compiled form against the tree walker (a function: SF_BENCH_ONLY=eval) ----
eval_bench() {
  echo
  echo "expressions: the chain's six (Beacon, Functor, Filter), 2000000 tuples, values checked identical"
  "$bin/sf-bench-eval" 2000000 "$RUNS" | sed 's/^/   /'
}

# ---- checkpoints: their cost, recovery time and size (a function: SF_BENCH_ONLY=ckpt) ----
ckpt_bench() {
  local CN=${SF_BENCH_CKPT_N:-3000000} g=$top/tests/recovery/ckpt.xml
  sed "s/COUNT/$CN/" "$g" > ckpt-seq.xml
  "$bin/sf-xform" -w 2 ckpt-seq.xml -o ckpt.xml
  echo
  echo "checkpoints: tests/recovery/ckpt.xml at width 2, two sources of $CN tuples (fan-in, Dedup, windows, shuffle)"
  local t0 t1 t_ck1 t_ck01
  t0=$(best_of "$bin/sf-exec" ckpt.xml)
  t_ck1=$(best_of "$bin/sf-exec" --checkpoint-dir ck --checkpoint-interval 1 ckpt.xml)
  t_ck01=$(best_of "$bin/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.1 ckpt.xml)
  printf '   no checkpoints            %8ss  %s\n' "$t0" "$(rate $((2 * CN)) "$t0")"
  printf '   a checkpoint every 1 s    %8ss  %s  overhead %s\n' "$t_ck1" "$(rate $((2 * CN)) "$t_ck1")" \
    "$(awk -v a="$t_ck1" -v b="$t0" 'BEGIN { printf "%+.1f %%", 100 * (a / b - 1) }')"
  printf '   a checkpoint every 0.1 s  %8ss  %s  overhead %s\n' "$t_ck01" "$(rate $((2 * CN)) "$t_ck01")" \
    "$(awk -v a="$t_ck01" -v b="$t0" 'BEGIN { printf "%+.1f %%", 100 * (a / b - 1) }')"
  # recovery: killed after about half the run, then restored; the restore's time to its first
  # restored line (reading and checking the checkpoint, reopening the sink) and to the end
  local best_r="" best_total="" i
  for i in $(seq "$RUNS"); do
    rm -rf ck out.csv .out.csv.tmp.*
    "$bin/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.2 ckpt.xml & local pid=$!
    sleep "$(awk -v t="$t0" 'BEGIN { printf "%.2f", t / 2 }')"
    kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null || true
    local k0 k1 k2
    k0=$(now_ns)
    "$bin/sf-exec" --checkpoint-dir ck --restore ckpt.xml 2>&1 >/dev/null | while read -r line; do
      case $line in "sf-exec: restored checkpoint"*) now_ns > restored.ns ;; esac
    done
    k2=$(now_ns)
    [ -f restored.ns ] || { echo "   (run $i: no checkpoint was complete at the kill)"; continue; }
    k1=$(cat restored.ns); rm -f restored.ns
    local r=$((k1 - k0)) total=$((k2 - k0))
    if [ -z "$best_r" ] || [ "$r" -lt "$best_r" ]; then best_r=$r; best_total=$total; fi
  done
  [ -n "$best_r" ] && printf '   kill -9 at half way, then --restore: restored in %s s (the rest of the job took %s s)\n' \
    "$(awk -v n="$best_r" 'BEGIN { printf "%.3f", n / 1e9 }')" "$(awk -v n="$best_total" -v r="$best_r" 'BEGIN { printf "%.3f", (n - r) / 1e9 }')"
  # the same on three executors under sf-launch --restart: from the kill of h1 to every executor
  # having restored the checkpoint (sf-launch notices, stops the others, starts them all again)
  local port=$((30000 + RANDOM % 20000))
  "$bin/sf-xform" -w 2 --hosts "h0=127.0.0.1:$port,h1=127.0.0.1:$((port + 1)),h2=127.0.0.1:$((port + 2))" \
    ckpt-seq.xml -o ckpt-dist.xml
  local best_d=""
  for i in $(seq "$RUNS"); do
    rm -rf ck out.csv launch.log
    bash "$top/tools/sf-launch" --exec "$bin/sf-exec" --insecure-plaintext --checkpoint-dir ck \
      --checkpoint-interval 0.2 --restart 1 ckpt-dist.xml > launch.log 2>&1 & local lp=$!
    sleep "$(awk -v t="$t0" 'BEGIN { printf "%.2f", t / 2 + 1 }')"
    local victim
    victim=$(pgrep -f -- "sf-exec --host h1 .*ckpt-dist.xml" | head -n 1)
    [ -n "$victim" ] || { wait $lp || true; continue; }
    local kd=$(now_ns) restored=""
    kill -KILL "$victim"
    while kill -0 $lp 2>/dev/null; do
      if [ "$(grep -c "sf-exec: restored checkpoint" launch.log)" -ge 3 ]; then restored=$(now_ns); break; fi
      sleep 0.005
    done
    wait $lp || true
    [ -n "$restored" ] || { echo "   (distributed run $i: no checkpoint restored)"; continue; }
    local dd=$((restored - kd))
    if [ -z "$best_d" ] || [ "$dd" -lt "$best_d" ]; then best_d=$dd; fi
  done
  [ -n "$best_d" ] && printf '   three executors, kill -9 of h1 half way: every executor restored %s s after the kill (sf-launch --restart)\n' \
    "$(awk -v n="$best_d" 'BEGIN { printf "%.3f", n / 1e9 }')"
  # size per key: one keyed Aggregate over K keys, checkpointed once every key exists
  local K=${SF_BENCH_CKPT_KEYS:-1000000}
  cat > keys.xml <<XML
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
  "$bin/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.5 keys.xml 2>/dev/null & local kp=$!
  local last=""
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
    printf '   %s keys: Aggregate (tumbling, sum) %s bytes/key, Dedup %s bytes/key (the last checkpoint of the run)\n' "$K" \
      "$(awk -v b="$(stat -c %s ck-keep/agg.snap)" -v k="$K" 'BEGIN { printf "%.1f", b / k }')" \
      "$(awk -v b="$(stat -c %s ck-keep/dedup.snap)" -v k="$K" 'BEGIN { printf "%.1f", b / k }')"
  fi
}

# ---- 3. merge cost: roundrobin vs seqpulse on the same region (a function: SF_BENCH_ONLY=merge) ----
merge_bench() {
  cat > merge.xml <<XML
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
  grep -q '<param name="order">roundrobin</param>' merge_rr.xml || { echo "merge: expected a roundrobin merge" >&2; exit 1; }
  sed -e 's|<param name="order">roundrobin</param>|<param name="order">seqpulse</param>|' \
      -e 's|<param name="pulse">0</param>|<param name="pulse">128</param>|' merge_rr.xml > merge_sp.xml
  # the two alternate, round after round (at least 7), so that both meet the same load; the figure is
  # the median of the rounds' ratios (a run of this region varies by more than the 3 % looked for)
  "$bin/sf-exec" merge_rr.xml && cp out/merge.csv out/merge_rr.csv
  local t_rr="" t_sp="" ratios=() a b
  for _ in $(seq $((RUNS > 7 ? RUNS : 7))); do
    a=$(best_of_one "$bin/sf-exec" merge_rr.xml)
    b=$(best_of_one "$bin/sf-exec" merge_sp.xml)
    cmp -s out/merge.csv out/merge_rr.csv || { echo "merge: seqpulse output differs" >&2; exit 1; }
    ratios+=("$(ratio "$b" "$a")")
    if [ -z "$t_rr" ] || awk -v x="$a" -v y="$t_rr" 'BEGIN { exit !(x < y) }'; then t_rr=$a; fi
    if [ -z "$t_sp" ] || awk -v x="$b" -v y="$t_sp" 'BEGIN { exit !(x < y) }'; then t_sp=$b; fi
  done
  echo "3. merge cost: one cheap Functor region at width 2, $N tuples, ${#ratios[@]} alternating rounds"
  printf '   roundrobin merge  %8ss  %s (best)\n' "$t_rr" "$(rate "$N" "$t_rr")"
  printf '   seqpulse merge    %8ss  %s (best)\n' "$t_sp" "$(rate "$N" "$t_sp")"
  printf '   seqpulse costs %s the time of roundrobin (median of the rounds; best against best %s)\n\n' \
    "$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')" \
    "$(ratio "$t_sp" "$t_rr")"
}

# ---- keys: memory and rate with many distinct keys (a function: SF_BENCH_ONLY=keys) ----
# A keyed Aggregate (tumbling windows of 1000 per key, so every key's state stays) and a Dedup,
# each alone behind a Beacon of 2K tuples over K distinct keys (every key seen twice), against the
# same graph over 100 keys: bytes per key = (peak resident memory - the 100-key run's) / K. A Filter
# drops what they emit (10 M rows against 100), so that only the keys differ between the runs.
keys_graph() { # KEYS TUPLES OPERATOR(agg|dedup)
  local op
  if [ "$3" = agg ]; then
    op='<operator name="agg" kind="Aggregate"><input stream="A"/><output stream="B" schema="Out"/>
    <param name="partitionBy">k</param><param name="window">tumbling 1000</param><set attr="s">sum(v)</set></operator>'
  else
    op='<operator name="dedup" kind="Dedup"><input stream="A"/><output stream="B" schema="In"/>
    <param name="partitionBy">k</param></operator>'
  fi
  cat <<XML
$header
  <schema name="In"><attr name="k" type="int"/><attr name="v" type="int"/></schema>
  <schema name="Out"><attr name="k" type="int"/><attr name="s" type="int"/></schema>
  <operator name="src" kind="Beacon">
    <output stream="A" schema="In"/>
    <param name="count">$2</param>
    <set attr="k">rand(seq % $1)</set>
    <set attr="v">seq % 1000</set>
  </operator>
  $op
  <operator name="none" kind="Filter"><input stream="B"/><output stream="C" schema="$([ "$3" = agg ] && echo Out || echo In)"/>
    <param name="where">k == -1</param></operator>
  <operator name="out" kind="FileSink"><input stream="C"/><param name="file">/dev/null</param></operator>
</graph>
XML
}

keys_bench() {
  local K=${SF_BENCH_KEYS:-10000000} op keys wall kib base_kib base_wall
  echo "keys: a keyed Aggregate and a Dedup over $K distinct keys, $((2 * K)) tuples, against 100 keys"
  for op in agg dedup; do
    for keys in 100 "$K"; do
      keys_graph "$keys" $((2 * K)) $op >keys-$op-$keys.xml
      /usr/bin/time -o times.txt -f '%e %M' "$bin/sf-exec" keys-$op-$keys.xml || { echo "bench: keys $op failed" >&2; exit 1; }
      read -r wall kib <times.txt
      if [ "$keys" = 100 ]; then
        base_kib=$kib base_wall=$wall
      else
        printf '   %-9s %s keys: %s M tuples/s (100 keys: %s), peak %s MiB (100 keys: %s MiB): %s bytes per key\n' \
          "$([ $op = agg ] && echo Aggregate || echo Dedup)" "$K" \
          "$(awk -v n=$((2 * K)) -v t="$wall" 'BEGIN { printf "%.2f", n / t / 1e6 }')" \
          "$(awk -v n=$((2 * K)) -v t="$base_wall" 'BEGIN { printf "%.2f", n / t / 1e6 }')" $((kib / 1024)) \
          $((base_kib / 1024)) "$(awk -v a="$kib" -v b="$base_kib" -v k="$K" 'BEGIN { printf "%.0f", (a - b) * 1024 / k }')"
      fi
    done
  done
}

case "${SF_BENCH_ONLY:-}" in
  ckpt) ckpt_bench; exit 0 ;;
  keys) keys_bench; exit 0 ;;
  merge) merge_bench; exit 0 ;;
  xform) xform_bench; exit 0 ;;
  slide) slide_bench; exit 0 ;;
  eval) eval_bench; exit 0 ;;
esac

echo "StreamFission benchmarks ($(nproc) CPUs, best of $RUNS runs, $(date -u +%F))"
echo

# ---- latency: source to sink at a fixed input rate (a function: SF_BENCH_ONLY=latency) ----
latency_graph() { # COUNT HOSTS-XML SRC-HOST SINK-HOST
  cat <<XML
$header
  <schema name="T"><attr name="id" type="int"/><attr name="v" type="int"/><attr name="t" type="int"/></schema>
  $2
  <operator name="src" kind="Beacon"$3>
    <output stream="A" schema="T"/>
    <param name="count">$1</param>
    <param name="rate">50000</param>
    <set attr="id">seq</set>
    <set attr="v">rand(seq) % 1000</set>
    <set attr="t">0</set>
  </operator>
  <operator name="stamp" kind="Custom" parallel="no"$3>
    <input stream="A"/>
    <output stream="B" schema="T"/>
    <library path="libsf_test_ops.so" symbol="sf_stamp"/>
    <model state="none" selectivity="one" forwards="*"/>
  </operator>
  <operator name="keep" kind="Filter">
    <input stream="B"/>
    <output stream="C" schema="T"/>
    <param name="where">v % 4 != 0</param>
  </operator>
  <operator name="sink" kind="Custom"$4>
    <input stream="C"/>
    <library path="libsf_test_ops.so" symbol="sf_latency"/>
    <param name="report">out/latency.txt</param>
  </operator>
</graph>
XML
}
latency_bench() {
  local secs=${SF_BENCH_LAT_SECONDS:-5} p1 p2 mode
  local count=$((secs * 50000))
  p1=$((20000 + RANDOM % 20000)); p2=$((p1 + 1))
  latency_graph "$count" "" "" "" >lat.xml
  "$bin/sf-xform" -w 2 lat.xml -o lat1.xml
  latency_graph "$count" "<host name=\"a\" address=\"127.0.0.1:$p1\"/><host name=\"b\" address=\"127.0.0.1:$p2\"/>" \
    ' host="a"' ' host="b"' >latd.xml
  "$bin/sf-xform" -w 2 latd.xml -o lat2.xml
  echo "latency: $count tuples at 50,000/s, Beacon -> stamp -> Filter (3 in 4 kept) at width 2 (seqpulse merge) -> sink;"
  echo "   microseconds from the stamp to the sink, the run with the median p99 of $RUNS"
  printf '   %-28s %10s %10s %10s %10s\n' "" p50 p99 p99.9 max
  for mode in batch1 one two; do
    : >lat_runs.txt
    for _ in $(seq "$RUNS"); do
      if [ $mode = batch1 ]; then
        "$bin/sf-exec" --batch 1 lat1.xml
      elif [ $mode = one ]; then
        "$bin/sf-exec" lat1.xml
      else
        "$top/tools/sf-launch" --exec "$bin/sf-exec" lat2.xml >/dev/null
      fi
      cat out/latency.txt >>lat_runs.txt
    done
    sort -n -k3 lat_runs.txt | awk -v m="$mode" -v r="$RUNS" 'NR == int((r + 1) / 2) {
      name = m == "batch1" ? "one process, --batch 1" : m == "one" ? "one process" : "two executors (loopback)"
      printf "   %-28s %10s %10s %10s %10s\n", name, $2, $3, $4, $5 }'
  done
}
if [ "${SF_BENCH_ONLY:-}" = latency ]; then
  latency_bench
  exit 0
fi

# ---- 1. chain against hand-written C ----
chain_graph "$N" out/chain.csv > chain.xml
t_sf=$(best_of "$bin/sf-exec" chain.xml)
t_c=$(best_of "$bin/sf-bench-baseline-chain" "$N" out/baseline.csv)
cmp -s out/chain.csv out/baseline.csv || { echo "chain: outputs differ from the baseline's" >&2; exit 1; }
echo "1. chain Beacon->Functor->Filter->FileSink, $N tuples (outputs identical)"
printf '   sf-exec          %8ss  %s\n' "$t_sf" "$(rate "$N" "$t_sf")"
printf '   hand-written C   %8ss  %s\n' "$t_c" "$(rate "$N" "$t_c")"
printf '   sf-exec reaches %s of the hand-written program'"'"'s rate\n\n' "$(awk -v a="$t_c" -v b="$t_sf" 'BEGIN { printf "%.0f %%", 100 * a / b }')"

# ---- 2. Work region at width 1 and 2 ----
WN=${SF_BENCH_WORK_N:-200000}
cat > work.xml <<XML
$header
  <schema name="Job"><attr name="id" type="int"/><attr name="cost" type="int"/></schema>
  <operator name="jobs" kind="Beacon">
    <output stream="Jobs" schema="Job"/>
    <param name="count">$WN</param>
    <set attr="id">seq</set>
    <set attr="cost">rand(seq) % 100</set>
  </operator>
  <operator name="burn" kind="Work">
    <input stream="Jobs"/>
    <output stream="Done" schema="Job"/>
    <param name="iterations">2000</param>
  </operator>
  <operator name="sink" kind="FileSink">
    <input stream="Done"/>
    <param name="file">out/work.csv</param>
  </operator>
</graph>
XML
"$bin/sf-xform" -w 1 work.xml -o work1.xml
"$bin/sf-xform" -w 2 work.xml -o work2.xml
t1=$(best_of "$bin/sf-exec" work1.xml)
cp out/work.csv out/work1.csv
t2=$(best_of "$bin/sf-exec" work2.xml)
cmp -s out/work.csv out/work1.csv || { echo "work: width 2 output differs" >&2; exit 1; }
echo "2. CPU-bound Work region (2000 splitmix64 rounds per tuple), $WN tuples"
printf '   width 1   %8ss  %s\n' "$t1" "$(rate "$WN" "$t1")"
printf '   width 2   %8ss  %s\n' "$t2" "$(rate "$WN" "$t2")"
printf '   speed-up %s (limit 2.0 on this machine)\n\n' "$(ratio "$t1" "$t2")"

merge_bench

# ---- 4. memory for 10 million tuples ----
MN=10000000
chain_graph "$MN" out/mem.csv > mem.xml
"$bin/sf-xform" -w 2 mem.xml -o mem2.xml
"$bin/sf-exec" --stats-json mem1.json mem.xml
"$bin/sf-exec" --stats-json mem2.json mem2.xml
rss1=$(sed -n 's/.*"peak_rss_kib": \([0-9]*\).*/\1/p' mem1.json)
rss2=$(sed -n 's/.*"peak_rss_kib": \([0-9]*\).*/\1/p' mem2.json)
echo "4. peak resident memory, chain of $MN tuples"
printf '   one thread (width 1)  %6d KiB\n' "$rss1"
printf '   width 2               %6d KiB\n\n' "$rss2"

# ---- 5. two executors on loopback ----
cheap_graph() { # N HOSTS SRC-HOST-ATTR REST-HOST-ATTR: the chain's tuples, one cheap filter, few rows out
  cat <<XML
$header
  <schema name="In"><attr name="k" type="int"/><attr name="v" type="int"/><attr name="x" type="double"/></schema>
  $2
  <operator name="src" kind="Beacon"$3>
    <output stream="A" schema="In"/>
    <param name="count">$1</param>
    <set attr="k">seq % 100</set>
    <set attr="v">rand(seq) % 1000</set>
    <set attr="x">double(seq) * 0.5</set>
  </operator>
  <operator name="rare" kind="Filter"$4>
    <input stream="A"/>
    <output stream="B" schema="In"/>
    <param name="where">v == 7</param>
  </operator>
  <operator name="sink" kind="FileSink"$4>
    <input stream="B"/>
    <param name="file">out/dist.csv</param>
  </operator>
</graph>
XML
}
if [ -x "$bin/sf-bench-grpc-ceiling" ]; then
  DN=$N
  p1=$((20000 + RANDOM % 20000)); p2=$((p1 + 1))
  cheap_graph "$DN" "<host name=\"a\" address=\"127.0.0.1:$p1\"/><host name=\"b\" address=\"127.0.0.1:$p2\"/>" \
    ' host="a"' ' host="b"' > dist.xml
  t_one=$(best_of "$bin/sf-exec" dist.xml)
  cp out/dist.csv out/dist_one.csv
  echo "5. Beacon on executor a, a Filter keeping 0.1 % and a FileSink on executor b (loopback), $DN tuples"
  printf '   one process               %8ss  %s\n' "$t_one" "$(rate "$DN" "$t_one")"
  best_dist=""
  for b in 16 64 256 1024; do
    t=$(best_of "$top/tools/sf-launch" --exec "$bin/sf-exec" --batch "$b" dist.xml)
    cmp -s out/dist.csv out/dist_one.csv || { echo "distribution: output differs at batch $b" >&2; exit 1; }
    printf '   two executors, batch %-5s %8ss  %s\n' "$b" "$t" "$(rate "$DN" "$t")"
    [ "$b" = 256 ] && t_256=$t
    if [ -z "$best_dist" ] || awk -v a="$t" -v b="$best_dist" 'BEGIN { exit !(a < b) }'; then best_dist=$t; best_b=$b; fi
  done
  t_ceil=$(best_of "$bin/sf-bench-grpc-ceiling" "$DN" "$best_b")
  printf '   raw gRPC ceiling, %-4s/msg %8ss  %s\n' "$best_b" "$t_ceil" "$(rate "$DN" "$t_ceil")"
  printf '   best two-executor run (batch %s) reaches %s of the ceiling and %s of one process\n' "$best_b" \
    "$(awk -v a="$t_ceil" -v b="$best_dist" 'BEGIN { printf "%.0f %%", 100 * a / b }')" \
    "$(awk -v a="$t_one" -v b="$best_dist" 'BEGIN { printf "%.0f %%", 100 * a / b }')"
  if [ "$best_b" != 256 ]; then
    t_ceil256=$(best_of "$bin/sf-bench-grpc-ceiling" "$DN" 256)
    printf '   raw gRPC ceiling, 256 /msg %8ss  %s: batch 256 reaches %s of it\n' "$t_ceil256" "$(rate "$DN" "$t_ceil256")" \
      "$(awk -v a="$t_ceil256" -v b="$t_256" 'BEGIN { printf "%.0f %%", 100 * a / b }')"
  fi
fi

# ---- 6. the TBB peer on the Work graph ----
work_graph() { # N ROUNDS FILE
  cat <<XML
$header
  <schema name="Job"><attr name="id" type="int"/><attr name="cost" type="int"/></schema>
  <operator name="jobs" kind="Beacon">
    <output stream="Jobs" schema="Job"/>
    <param name="count">$1</param>
    <set attr="id">seq</set>
    <set attr="cost">rand(seq) % 100</set>
  </operator>
  <operator name="burn" kind="Work">
    <input stream="Jobs"/>
    <output stream="Done" schema="Job"/>
    <param name="iterations">$2</param>
  </operator>
  <operator name="sink" kind="FileSink">
    <input stream="Done"/>
    <param name="file">$3</param>
  </operator>
</graph>
XML
}
if [ "${SF_BENCH_TBB:-1}" != 0 ] && [ -x "$bin/sf-bench-tbb-work" ]; then
  echo
  echo "6. Work graph: sf-exec against TBB parallel_pipeline (256 tuples per token), outputs identical;"
  echo "   ratio = TBB's time / sf's (above 1: sf is faster)"
  printf '   %-6s %-8s %9s %9s %6s   %9s %9s %6s   %s\n' rounds tuples "sf w1 s" "tbb 1 s" ratio "sf w2 s" "tbb 2 s" ratio "sf speed-up w2/w1"
  for k in 1 20 200 2000; do
    tn=$((400000000 / k)); [ "$tn" -gt "$N" ] && tn=$N
    work_graph "$tn" "$k" out/tw.csv > tw.xml
    "$bin/sf-xform" -w 1 tw.xml -o tw1.xml
    "$bin/sf-xform" -w 2 tw.xml -o tw2.xml
    s1=$(best_of "$bin/sf-exec" tw1.xml); cp out/tw.csv out/tw1.csv
    s2=$(best_of "$bin/sf-exec" tw2.xml); cmp -s out/tw.csv out/tw1.csv || { echo "tbb: sf width 2 output differs" >&2; exit 1; }
    b1=$(best_of "$bin/sf-bench-tbb-work" "$tn" "$k" 1 out/tbb.csv); cmp -s out/tbb.csv out/tw1.csv || { echo "tbb: TBB output differs" >&2; exit 1; }
    b2=$(best_of "$bin/sf-bench-tbb-work" "$tn" "$k" 2 out/tbb.csv); cmp -s out/tbb.csv out/tw1.csv || { echo "tbb: TBB output differs" >&2; exit 1; }
    printf '   %-6s %-8s %9s %9s %5sx   %9s %9s %5sx   %s\n' "$k" "$tn" "$s1" "$b1" "$(ratio "$b1" "$s1")" "$s2" "$b2" "$(ratio "$b2" "$s2")" "$(ratio "$s1" "$s2")"
  done
elif [ "${SF_BENCH_TBB:-1}" != 0 ]; then
  echo
  echo "6. skipped: sf-bench-tbb-work is not built (apt-get install libtbb-dev, then rerun tools/setup.sh)"
fi

slide_bench

# ---- number text: the formatters against the printf-based ones they replaced ----
echo
echo "number text: ns per value, old (snprintf %.*e + strtod; snprintf %lld) vs xform/number.c, 1000000 values each"
"$bin/sf-bench-number-format" 1000000 "$RUNS" | sed 's/^/   /'
echo
latency_bench
echo
xform_bench
eval_bench
ckpt_bench
