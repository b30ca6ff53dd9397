#!/usr/bin/env bash
# tests/metrics.sh BUILD_DIR SOURCE_DIR
#
# sf-exec --metrics and sf-launch --metrics-base (docs/running.md, "Metrics"):
#   usage:      a malformed --metrics address exits 2 with its message; an address in use exits 1
#               before any operator opens (no output file); sf-launch --metrics-base 0 exits 2,
#               and so does --metrics-base with --via slurm (not supported yet);
#   promtool:   scrapes taken every 0.2 s while a parallel job with --stats and checkpoints runs
#               (a Beacon at a fixed rate through a region of Filters, beside a slow second Beacon),
#               each accepted by `promtool check metrics` (the format, HELP and TYPE, names), and
#               holding the families the run must have (operators, queues, latency, checkpoints);
#   series:     the last of those scrapes has each family with its exact type, sample names and
#               label names (the latency and checkpoint duration histograms, the checkpoint bytes,
#               the Merge waits); the sink's latency histogram has _bucket, _sum and _count, its _count
#               is its +Inf bucket and its mean (_sum / _count) lies within its non-empty buckets;
#   exact:      over those scrapes every counter only grows and never exceeds its final value;
#               some scrape saw the first Beacon part-way; once its branch has ended (the second
#               Beacon keeps the job running) a scrape holds its final counts, which equal the
#               computed ones (N out of the Beacon, N/3 kept over the Filter's replicas, N/3 into
#               the sink) and the --stats-json figures of the run;
#   wait:       a keyed region (sf_jitter, partitioned by v = seq % 8) where key 3 sleeps 3 ms a
#               tuple, beside the same region without the sleep, one job with a Merge thread per
#               region (--merge-threads) and one with hosted Merges: in both, every scrape is accepted
#               by promtool, each Merge's wait lies between its channels' largest and their sum, the
#               skewed region waited at least a quarter of the key's sleep (375 x 3 ms) more than the
#               even one, and one channel of it was waited for 90 % of its wait at least;
#   ckpt:       the run's graph (its first Beacon only) with a checkpoint every 0.2 s, killed
#               (SIGKILL) right after a scrape that saw checkpoint 3 complete:
#               sf_checkpoint_last_snapshot_bytes equals the sizes of that checkpoint's .snap files
#               left on disk; sf_checkpoint_duration_seconds is a histogram with cumulative
#               buckets, +Inf = _count = sf_checkpoints_completed_total, and its mean and the last
#               duration lie within the buckets that hold them;
#   process:    the process_* metrics of Prometheus's client libraries, while a job runs, each of
#               3 scrapes bracketed by reads of /proc/PID (stat, fd, limits) in Python: the CPU
#               seconds between the two reads, the start time (btime + starttime) equal, resident
#               and virtual bytes within 10 % of them, open fds between them (one more: the scrape's
#               connection), max fds the soft limit; promtool accepts each scrape;
#   prometheus: a real Prometheus server (scrape interval 1 s, storage in a scratch directory, on a
#               free loopback port) scrapes the two executors of a job started with sf-launch
#               --metrics-base, with the scrape configuration of docs/running.md; its HTTP API
#               (/api/v1/query) returns sf_operator_tuples_out_total for host h0 and host h1, with
#               the graph's name as job; with checkpoints every 0.3 s, sf_checkpoints_completed_total
#               of both hosts and sf_checkpoint_duration_seconds of h0 only (the coordinator);
#               PromQL's histogram_quantile over sf_checkpoint_duration_seconds_bucket gives h0's
#               median checkpoint within the buckets, process_resident_memory_bytes and
#               process_start_time_seconds both hosts' (over 1 MB; started within the last 2 min);
#               sf-launch printed each executor's address once;
#   http:       while a job runs, GET / and /live.json and HEAD /metrics answer 200 with their
#               content types, another path 404, POST 405;
#   live:       the live view at / in headless Chromium (tests/tools/devtools.py drives it over the
#               DevTools protocol) while a job with a Beacon at 2000/s runs: looked at twice, 2 s
#               apart, the page polled again, its counts and rates changed, the Beacon's rate
#               shown is within 25 % of the one /metrics gives over the same time and of 2000/s,
#               every operator and edge is drawn; a screenshot is saved as
#               BUILD_DIR/test-artifacts/metrics-live-view.png.
# Skips (77) when promtool or prometheus is missing (Debian's package `prometheus`); the live case
# says SKIP when chromium is (Debian's `chromium`).
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec sf-launch || exit 1
B=$build/bin
for tool in promtool prometheus curl python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "skip: $tool is not installed (Debian: apt-get install prometheus curl python3)" >&2
    exit 77
  fi
done

trap sf_stop_all EXIT
trap 'exit 130' INT TERM
sf_mktemp work sf-metrics || exit 1
SF_WORK=$work
SF_CASE_WIDTH=12
t_start=$(sf_now)

# wait_for SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds (0) or time runs out (1)
wait_for() {
  local limit=$1 i
  shift
  for ((i = 0; i < limit * 10; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}

# ---- usage ----

d=$work/usage
mkdir -p "$d"
sf_hosts_graph "$d/g.xml" usage 10 "" out.csv
ok=1
for bad in 127.0.0.1 :9100 127.0.0.1:0 127.0.0.1:65536 ::1:9100 '[::1]' 127.0.0.1:9x; do
  (cd "$d" && "$B/sf-exec" --metrics "$bad" g.xml) >"$d/bad.log" 2>&1
  st=$?
  if [[ $st != 2 || $(head -n 1 "$d/bad.log") != "sf-exec: --metrics must be HOST:PORT "*"got '$bad'" ]]; then
    sf_bad usage "--metrics '$bad': exit $st, expected 2 and the message" "$d/bad.log"
    ok=0
  fi
done
# a listener on a port the kernel chooses (the port written to holder.port), kept for 30 s
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1])
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1]); time.sleep(30)' "$d/holder.port" &
holder=$!
held() { [[ -s $d/holder.port ]]; }
wait_for 5 held || { echo "error: the port holder did not start" >&2; exit 1; }
P0=$(cat "$d/holder.port")
(cd "$d" && "$B/sf-exec" --metrics "127.0.0.1:$P0" g.xml) >"$d/inuse.log" 2>&1
st=$?
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
if [[ $st != 1 ]] || ! grep -q "^sf-exec: error: cannot serve metrics at '127.0.0.1:$P0': the address is already in use$" "$d/inuse.log"; then
  sf_bad usage "an address in use: exit $st, expected 1 and the message" "$d/inuse.log"
  ok=0
elif [[ -e $d/out.csv ]]; then
  sf_bad usage "an address in use: the sink wrote out.csv" "$d/inuse.log"
  ok=0
fi
bash "$src/tools/sf-launch" --metrics-base 0 "$d/g.xml" >"$d/launch.log" 2>&1
st=$?
if [[ $st != 2 ]] || ! grep -q "^sf-launch: --metrics-base" "$d/launch.log"; then
  sf_bad usage "sf-launch --metrics-base 0: exit $st, expected 2" "$d/launch.log"
  ok=0
fi
"$build/bin/sf-xform" --hosts "h0=127.0.0.1:7001,h1=127.0.0.1:7002" "$d/g.xml" -o "$d/gh.xml" >/dev/null 2>&1
bash "$src/tools/sf-launch" --via slurm --metrics-base 9000 "$d/gh.xml" >"$d/slurm.log" 2>&1
st=$?
want="sf-launch: --metrics-base does not work with --via slurm yet (a step's tasks share one command line)"
if [[ $st != 2 || $(head -n 1 "$d/slurm.log") != "$want" ]]; then
  sf_bad usage "sf-launch --via slurm --metrics-base: exit $st, expected 2 and: $want" "$d/slurm.log"
  ok=0
fi
((ok)) && sf_ok usage "7 malformed addresses exit 2, an address in use exits 1 before any output, --metrics-base 0 and with --via slurm exit 2"

# ---- promtool and exact: one process, scraped while it runs ----

N=3000
d=$work/run
mkdir -p "$d/scrapes"
cat >"$d/seq.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="metrics_run">
  <schema name="N">
    <attr name="n" type="int"/>
  </schema>
  <operator name="nums" kind="Beacon">
    <output stream="Nums" schema="N"/>
    <param name="count">$N</param>
    <param name="rate">2500</param>
    <set attr="n">seq</set>
  </operator>
  <operator name="keep" kind="Filter">
    <input stream="Nums"/>
    <output stream="Kept" schema="N"/>
    <param name="where">n % 3 == 0</param>
  </operator>
  <operator name="out" kind="FileSink">
    <input stream="Kept"/>
    <param name="file">out.csv</param>
  </operator>
  <operator name="slow" kind="Beacon">
    <output stream="Slow" schema="N"/>
    <param name="count">12</param>
    <param name="rate">4</param>
    <set attr="n">seq</set>
  </operator>
  <operator name="slow_out" kind="FileSink">
    <input stream="Slow"/>
    <param name="file">slow.csv</param>
  </operator>
</graph>
EOF
"$B/sf-xform" -w 2 -o "$d/par.xml" "$d/seq.xml" >"$d/xform.log" 2>&1 ||
  { echo "error: sf-xform failed:" >&2; cat "$d/xform.log" >&2; exit 1; }
sf_next_ports 1 || exit 1
MPORT=$P0
(cd "$d" && exec timeout -k 5 60 "$B/sf-exec" --metrics "127.0.0.1:$MPORT" --stats --stats-interval 10 \
  --stats-json stats.json --checkpoint-dir ck --checkpoint-interval 0.3 par.xml) >"$d/exec.log" 2>&1 &
exec_pid=$!
k=0
while kill -0 "$exec_pid" 2>/dev/null; do
  if curl -sf -o "$d/scrapes/$k.tmp" "http://127.0.0.1:$MPORT/metrics" 2>/dev/null; then
    mv "$d/scrapes/$k.tmp" "$d/scrapes/$(printf '%04d' "$k").txt"
    k=$((k + 1))
  fi
  sleep 0.2
done
wait "$exec_pid"
st=$?
rm -f "$d/scrapes/"*.tmp
if [[ $st != 0 ]]; then
  sf_bad promtool "sf-exec exited $st" "$d/exec.log"
else
  bad=0 n=0
  for f in "$d/scrapes/"*.txt; do
    [[ -e $f ]] || continue
    n=$((n + 1))
    if ! promtool check metrics <"$f" >"$f.lint" 2>&1 || [[ ! -s $f ]]; then
      sf_bad promtool "promtool check metrics refused $(basename "$f")" "$f.lint" "$f"
      bad=1
      break
    fi
  done
  families="sf_operator_tuples_in_total sf_operator_tuples_out_total sf_queue_batches sf_queue_capacity_batches
    sf_queue_blocked_seconds_total
    sf_sink_latency_seconds sf_checkpoints_completed_total sf_checkpoint_duration_seconds
    sf_checkpoint_snapshot_bytes_total sf_executor_uptime_seconds sf_executor_threads_running"
  last=$(ls "$d/scrapes/"*.txt 2>/dev/null | tail -n 1)
  for fam in $families; do
    ((bad)) && break
    if ! grep -q "^# TYPE $fam " "$last"; then
      sf_bad promtool "the last scrape has no family $fam" "$last"
      bad=1
    fi
  done
  if ((!bad && n < 5)); then
    sf_bad promtool "only $n scrapes while the job ran (expected at least 5)" "$d/exec.log"
    bad=1
  fi
  ((bad)) || sf_ok promtool "$n scrapes while the job ran, each accepted by promtool check metrics, with the families of a parallel run"

  # series: the last scrape's families have their exact types, sample names and label names
  if python3 - "$last" >"$d/series.log" 2>&1 <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
samples = {}  # name -> [(labels dict, value)]
for name, labels, value in re.findall(r"^([a-z_]+)\{(.*)\} (\S+)$", text, re.M):
    samples.setdefault(name, []).append((dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', labels)), float(value)))
OP = ["job", "host", "operator", "replica", "kind"]
# family: (type, {sample name: label names})
want = {
    "sf_sink_latency_seconds": ("histogram", {"sf_sink_latency_seconds_bucket": OP + ["le"],
                                              "sf_sink_latency_seconds_sum": OP,
                                              "sf_sink_latency_seconds_count": OP}),
    "sf_checkpoint_duration_seconds": ("histogram", {"sf_checkpoint_duration_seconds_bucket": ["job", "host", "le"],
                                                     "sf_checkpoint_duration_seconds_sum": ["job", "host"],
                                                     "sf_checkpoint_duration_seconds_count": ["job", "host"]}),
    "sf_checkpoint_last_snapshot_bytes": ("gauge", {"sf_checkpoint_last_snapshot_bytes": ["job", "host"]}),
    "sf_checkpoint_snapshot_bytes_total": ("counter", {"sf_checkpoint_snapshot_bytes_total": ["job", "host"]}),
    "sf_region_merge_wait_seconds_total": ("counter", {"sf_region_merge_wait_seconds_total": OP + ["region"]}),
    "sf_region_merge_channel_wait_seconds_total": ("counter", {
        "sf_region_merge_channel_wait_seconds_total": OP + ["region", "channel"]}),
}
errors = []
for fam, (typ, names) in want.items():
    if types.get(fam) != typ:
        errors.append("%s: TYPE %s, expected %s" % (fam, types.get(fam), typ))
    for name, labels in names.items():
        got = samples.get(name, [])
        if not got:
            errors.append("no sample %s" % name)
        for l, _ in got:
            if sorted(l) != sorted(labels):
                errors.append("%s has labels %s, expected %s" % (name, sorted(l), sorted(labels)))
                break
# the sink's latency: _count is the +Inf bucket, and the mean (_sum / _count) lies between the
# lower bound of the first bucket that holds a tuple and the upper bound of the last one
def one(name, **want):
    got = [v for l, v in samples.get(name, []) if all(l.get(k) == w for k, w in want.items())]
    return got[0] if len(got) == 1 else None
cnt, tot = one("sf_sink_latency_seconds_count", operator="out"), one("sf_sink_latency_seconds_sum", operator="out")
buckets = sorted((float(l["le"]), v) for l, v in samples.get("sf_sink_latency_seconds_bucket", []) if l.get("operator") == "out")
if cnt is None or tot is None or not buckets:
    errors.append("no latency histogram of the sink 'out'")
elif cnt <= 0 or buckets[-1] != (float("inf"), cnt):
    errors.append("sink 'out': _count %g, +Inf bucket %s" % (cnt, buckets[-1]))
else:
    lo = max([0.0] + [le for le, v in buckets if v == 0])
    hi = min(le for le, v in buckets if v == cnt)
    mean = tot / cnt
    if not lo <= mean <= hi:
        errors.append("sink 'out': mean latency %g s outside its buckets [%g, %g]" % (mean, lo, hi))
    print("sink 'out': %d latencies, mean %.6f s within [%g, %g]" % (cnt, mean, lo, hi))
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF
  then
    sf_ok series "$(grep -v '^error' "$d/series.log" | tr '\n' ';' | sed 's/;$//'); types and labels as documented"
  else
    sf_bad series "the families' types, names or labels are not the documented ones" "$d/series.log" "$last"
  fi

  # exact: every counter grows, none exceeds its final value; the first Beacon seen part-way;
  # once its branch ended, the scrapes hold the computed counts and the --stats-json ones
  if python3 - "$d/scrapes" "$d/stats.json" "$N" >"$d/exact.log" 2>&1 <<'EOF'
import glob, json, re, sys
scrapes, stats_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
sample = re.compile(r'^([a-z_]+)\{(.*)\} (\S+)$')
label = re.compile(r'([a-z_]+)="((?:[^"\\]|\\.)*)"')
runs = []
for f in sorted(glob.glob(scrapes + "/*.txt")):
    vals = {}
    for line in open(f):
        m = sample.match(line.rstrip("\n"))
        if m:
            labels = tuple(sorted(label.findall(m.group(2))))
            vals[(m.group(1), labels)] = float(m.group(3))
    runs.append((f, vals))
def get(vals, name, **want):
    """sum of the samples of name whose labels include want"""
    return sum(v for (nm, labels), v in vals.items()
               if nm == name and all(dict(labels).get(k) == w for k, w in want.items()))
kept = len([i for i in range(n) if i % 3 == 0])
errors = []
# counters only grow
for (f0, a), (f1, b) in zip(runs, runs[1:]):
    for key, v in a.items():
        if key[0].endswith("_total") and key in b and b[key] < v:
            errors.append("%s fell from %g to %g between %s and %s" % (key, v, b[key], f0, f1))
out = [get(v, "sf_operator_tuples_out_total", operator="nums") for _, v in runs]
if not any(0 < x < n for x in out):
    errors.append("no scrape saw the Beacon part-way: %s" % out)
if any(x > n for x in out):
    errors.append("a scrape saw more than %d tuples out of the Beacon: %s" % (n, out))
# the first Beacon's branch complete while the second Beacon still runs
final = [v for _, v in runs if get(v, "sf_operator_tuples_in_total", operator="out") == kept
         and get(v, "sf_operator_tuples_out_total", operator="nums") == n
         and get(v, "sf_operator_tuples_out_total", operator="slow") < 12]
if not final:
    errors.append("no scrape saw the first Beacon's branch complete while the second one still ran")
else:
    v = final[-1]
    figures = {
        "nums out": (get(v, "sf_operator_tuples_out_total", operator="nums"), n),
        "keep in (over its replicas)": (get(v, "sf_operator_tuples_in_total", operator="keep"), n),
        "keep out (over its replicas)": (get(v, "sf_operator_tuples_out_total", operator="keep"), kept),
        "out in": (get(v, "sf_operator_tuples_in_total", operator="out"), kept),
    }
    for what, (got, want) in figures.items():
        if got != want:
            errors.append("%s: %g in the last scrape, expected %d" % (what, got, want))
    ops = json.load(open(stats_path))["operators"]
    for o in ops:
        name = o["name"]
        base = o.get("origin", name) if re.match(r".*\[\d+\]$", name) else name
        replica = re.match(r".*\[(\d+)\]$", name)
        want = {"operator": base, "replica": replica.group(1) if replica else "0"}
        if base in ("slow", "slow_out"):
            continue  # still running at that scrape
        for key, metric in (("in", "sf_operator_tuples_in_total"), ("out", "sf_operator_tuples_out_total")):
            got = get(v, metric, **want)
            if got != o[key]:
                errors.append("%s %s: %g scraped, %d in --stats-json" % (name, key, got, o[key]))
    print("final scrape: " + ", ".join("%s %g" % (k, g) for k, (g, _) in figures.items()))
print("%d scrapes, Beacon out over them: %s" % (len(runs), " ".join("%d" % x for x in out)))
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF
  then
    sf_ok exact "$(grep '^final scrape' "$d/exact.log"); counters monotonic over $n scrapes; = --stats-json"
  else
    sf_bad exact "the scraped counts are not the computed ones" "$d/exact.log"
  fi
fi

# ---- wait: a region's Merge waiting for a slow channel, with and without a thread of its own ----

# two keyed regions side by side (sf_jitter of libsf_test_ops.so, partitioned by v = seq % 8, no
# sleep but for key 3 in the skewed one: SLOW_US per tuple), and a third Beacon that keeps the job
# running once both are done, so a scrape sees their final figures
WN=3000 WRATE=2000 SLOW_US=3000
d=$work/wait
mkdir -p "$d"
wait_region() { # NAME SLOW_LAST
  cat <<EOF
  <operator name="${1}_src" kind="Beacon">
    <output stream="${1}_in" schema="T"/>
    <param name="count">$WN</param>
    <param name="rate">$WRATE</param>
    <set attr="id">seq</set>
    <set attr="v">seq % 8</set>
  </operator>
  <operator name="$1" kind="Custom">
    <input stream="${1}_in"/>
    <output stream="${1}_done" schema="T"/>
    <library path="libsf_test_ops.so" symbol="sf_jitter"/>
    <model state="partitioned" keys="v" selectivity="one" forwards="*"/>
    <param name="maxus">0</param>$2
  </operator>
  <operator name="${1}_out" kind="FileSink">
    <input stream="${1}_done"/>
    <param name="file">$1.csv</param>
  </operator>
EOF
}
{
  echo '<?xml version="1.0" encoding="UTF-8"?>'
  echo '<graph xmlns="urn:streamfission:graph:1" name="metrics_wait">'
  echo '  <schema name="T"><attr name="id" type="int"/><attr name="v" type="int"/></schema>'
  wait_region even ""
  wait_region skew "
    <param name=\"slow_last\">3:$SLOW_US</param>"
  cat <<EOF
  <operator name="tail" kind="Beacon">
    <output stream="tail_in" schema="T"/>
    <param name="count">6</param>
    <param name="rate">1</param>
    <set attr="id">seq</set>
    <set attr="v">0</set>
  </operator>
  <operator name="tail_out" kind="FileSink">
    <input stream="tail_in"/>
    <param name="file">tail.csv</param>
  </operator>
</graph>
EOF
} >"$d/seq.xml"
"$B/sf-xform" -w 2 -o "$d/par.xml" "$d/seq.xml" >"$d/xform.log" 2>&1 ||
  { echo "error: sf-xform failed:" >&2; cat "$d/xform.log" >&2; exit 1; }
sf_next_ports 1 || exit 1
WPORT=$P0
for mode in hosted threads; do
  opt=()
  [[ $mode == threads ]] && opt=(--merge-threads)
  mkdir -p "$d/$mode"
  (cd "$d/$mode" && exec timeout -k 5 60 "$B/sf-exec" "${opt[@]}" --metrics "127.0.0.1:$WPORT" ../par.xml) \
    >"$d/$mode/exec.log" 2>&1 &
  wpid=$!
  k=0
  while kill -0 "$wpid" 2>/dev/null; do
    if curl -sf -o "$d/$mode/$k.tmp" "http://127.0.0.1:$WPORT/metrics" 2>/dev/null; then
      mv "$d/$mode/$k.tmp" "$d/$mode/$(printf '%04d' "$k").txt"
      k=$((k + 1))
    fi
    sleep 0.2
  done
  wait "$wpid"
  echo $? >"$d/$mode/status"
  rm -f "$d/$mode/"*.tmp
done
if python3 - "$d" "$WN" "$SLOW_US" >"$d/wait.log" 2>&1 <<'EOF'
import glob, re, subprocess, sys
d, n, slow_us = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# each region's Merge, from the parallel graph: the region of the replicas of 'even' and 'skew'
par = open(d + "/par.xml").read()
region = {origin: r for r, origin in re.findall(r'<operator name="(r\d+)\.merge" kind="Merge"[^>]*origin="(\w+)"', par)}
sample = re.compile(r'^([a-z_]+)\{(.*)\} (\S+)$')
label = re.compile(r'([a-z_]+)="((?:[^"\\]|\\.)*)"')
errors, report = [], []
for mode in ("hosted", "threads"):
    if open("%s/%s/status" % (d, mode)).read().strip() != "0":
        errors.append("%s: sf-exec failed" % mode)
        continue
    scrapes = sorted(glob.glob("%s/%s/*.txt" % (d, mode)))
    for f in scrapes:
        lint = subprocess.run(["promtool", "check", "metrics"], stdin=open(f), capture_output=True, text=True)
        if lint.returncode != 0:
            errors.append("%s: promtool refused %s: %s" % (mode, f, lint.stdout + lint.stderr))
            break
    # the last scrape in which both regions had delivered everything
    final = None
    for f in scrapes:
        vals = []
        for line in open(f):
            m = sample.match(line.rstrip("\n"))
            if m:
                vals.append((m.group(1), dict(label.findall(m.group(2))), float(m.group(3))))
        done = [v for name, l, v in vals if name == "sf_operator_tuples_in_total" and l["operator"] in ("even_out", "skew_out")]
        if done == [n, n]:
            final = vals
    if final is None:
        errors.append("%s: no scrape saw both regions complete (%d scrapes)" % (mode, len(scrapes)))
        continue
    fig = {}
    for which in ("even", "skew"):
        r = region.get(which)
        total = [v for name, l, v in final if name == "sf_region_merge_wait_seconds_total" and l.get("region") == r]
        chans = {l["channel"]: v for name, l, v in final
                 if name == "sf_region_merge_channel_wait_seconds_total" and l.get("region") == r}
        if len(total) != 1 or sorted(chans) != ["0", "1"]:
            errors.append("%s: region %s (%s): wait samples %s, channels %s" % (mode, r, which, total, sorted(chans)))
            continue
        t = total[0]
        # a stall counts for every channel that had nothing during it, and for one at least
        if not max(chans.values()) - 1e-6 <= t <= sum(chans.values()) + 1e-6:
            errors.append("%s: region %s: total %g outside [max, sum] of its channels %s" % (mode, r, t, chans))
        fig[which] = (t, chans)
        report.append("%s %s %s %.3f s (channels %s)" % (mode, which, r, t,
                      " ".join("%s %.3f" % kv for kv in sorted(chans.items()))))
    if len(fig) == 2:
        (te, _), (ts, cs) = fig["even"], fig["skew"]
        # key 3 (an eighth of the tuples) sleeps SLOW_US each: the skewed Merge waits for its channel
        # at least a quarter of that more than the even one, and that channel is the one waited for
        least = n / 8 * slow_us / 1e6 / 4
        if ts - te < least:
            errors.append("%s: the skewed region waited %.3f s, the even one %.3f s: expected %.3f s more" % (mode, ts, te, least))
        if max(cs.values()) < 0.9 * ts:
            errors.append("%s: no channel of the skewed region was waited for most of its wait: %s" % (mode, cs))
print("; ".join(report))
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF
then
  sf_ok wait "$(head -n 1 "$d/wait.log"); every scrape accepted by promtool"
else
  sf_bad wait "the merge wait does not show the slow channel" "$d/wait.log" "$d/hosted/exec.log" "$d/threads/exec.log"
fi

# ---- ckpt: the checkpoints' durations and the newest one's size, against its files ----

# the run's graph without its second Beacon (a checkpoint completes once every source has passed
# its position) and with a longer first one, a checkpoint every 0.2 s, killed (SIGKILL) at once
# after a scrape that saw checkpoint 3 or later complete: its directory keeps the two newest ones
d=$work/ckpt
mkdir -p "$d"
sed -e '/<operator name="slow" kind="Beacon">/,$d' -e 's|<param name="count">[0-9]*</param>|<param name="count">20000</param>|' \
  "$work/run/seq.xml" >"$d/seq.xml"
echo '</graph>' >>"$d/seq.xml"
"$B/sf-xform" -w 2 -o "$d/par.xml" "$d/seq.xml" >"$d/xform.log" 2>&1 ||
  { echo "error: sf-xform failed:" >&2; cat "$d/xform.log" >&2; exit 1; }
sf_next_ports 1 || exit 1
CPORT=$P0
# (no timeout(1) between: the signals below are for sf-exec itself; the loop bounds the run)
(cd "$d" && exec "$B/sf-exec" --metrics "127.0.0.1:$CPORT" --checkpoint-dir ck \
  --checkpoint-interval 0.2 par.xml) >"$d/exec.log" 2>&1 &
cpid=$!
seen=0
for ((k = 0; k < 100; k++)); do
  # the scrape's newest checkpoint must still be on disk when the job stops: two newer ones
  # completing in between would have removed it (a slow, sanitized run), so it stops the job,
  # looks, and lets it go on when that happened
  if curl -sf -o "$d/m.txt" "http://127.0.0.1:$CPORT/metrics" 2>/dev/null &&
     last=$(awk '/^sf_checkpoint_last_completed\{/ { print $NF }' "$d/m.txt") && ((last >= 3)); then
    kill -STOP "$cpid" 2>/dev/null
    if [[ -f $d/ck/ckpt-$last/MANIFEST ]]; then
      kill -KILL "$cpid" 2>/dev/null
      seen=1
      break
    fi
    kill -CONT "$cpid" 2>/dev/null
  fi
  sleep 0.1
done
kill -KILL "$cpid" 2>/dev/null
wait "$cpid" 2>/dev/null
if ((!seen)); then
  sf_bad ckpt "no scrape saw checkpoint 3 complete" "$d/exec.log" "$d/m.txt"
elif python3 - "$d/m.txt" "$d/ck" >"$d/ckpt.log" 2>&1 <<'EOF'
import os, re, subprocess, sys
scrape, ck = sys.argv[1], sys.argv[2]
text = open(scrape).read()
def get(name, extra=""):
    m = re.findall(r'^%s\{job="metrics_run",host=""%s\} (\S+)$' % (name, extra), text, re.M)
    return float(m[0]) if len(m) == 1 else None
errors = []
lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
if lint.returncode != 0:
    errors.append("promtool: " + lint.stdout + lint.stderr)
if "# TYPE sf_checkpoint_duration_seconds histogram" not in text or "# TYPE sf_checkpoint_last_snapshot_bytes gauge" not in text:
    errors.append("sf_checkpoint_duration_seconds is no histogram, or sf_checkpoint_last_snapshot_bytes no gauge")
last = int(get("sf_checkpoint_last_completed"))
size = get("sf_checkpoint_last_snapshot_bytes")
files = os.path.join(ck, "ckpt-%d" % last)
want = sum(os.path.getsize(os.path.join(files, f)) for f in os.listdir(files) if f.endswith(".snap"))
if size != want:
    errors.append("checkpoint %d: sf_checkpoint_last_snapshot_bytes %s, its .snap files hold %d bytes" % (last, size, want))
# the histogram: cumulative buckets, +Inf = _count = every completion (one process times each one),
# the mean within the buckets, the last duration in a bucket that holds one
les = re.findall(r'^sf_checkpoint_duration_seconds_bucket\{job="metrics_run",host="",le="([^"]+)"\} (\S+)$', text, re.M)
buckets = [(float(le), float(v)) for le, v in les]
count, total = get("sf_checkpoint_duration_seconds_count"), get("sf_checkpoint_duration_seconds_sum")
done, lastdur = get("sf_checkpoints_completed_total"), get("sf_checkpoint_last_duration_seconds")
if [le for le, _ in buckets] != sorted(le for le, _ in buckets) or buckets[-1][0] != float("inf"):
    errors.append("the buckets' bounds are not increasing up to +Inf: %s" % les)
elif any(a[1] > b[1] for a, b in zip(buckets, buckets[1:])):
    errors.append("the buckets are not cumulative: %s" % les)
elif not buckets[-1][1] == count == done or count < 3:
    errors.append("+Inf bucket %g, _count %s, completed %s: expected equal, at least 3" % (buckets[-1][1], count, done))
else:
    lo = max([0.0] + [le for le, v in buckets if v == 0])
    hi = min(le for le, v in buckets if v == count)
    if not lo <= total / count <= hi or not lo <= lastdur <= hi:
        errors.append("mean %g or last %g outside the buckets that hold them [%g, %g]" % (total / count, lastdur, lo, hi))
    print("checkpoint %d: %d bytes in its .snap files and in the gauge; %d durations, mean %.3f s, in [%g, %g]" %
          (last, want, count, total / count, lo, hi))
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF
then
  sf_ok ckpt "$(head -n 1 "$d/ckpt.log")"
else
  sf_bad ckpt "the checkpoints' figures are not right" "$d/ckpt.log" "$d/m.txt"
fi

# ---- process: the process_* metrics, against /proc/PID read around each scrape ----

d=$work/process
mkdir -p "$d"
sf_next_ports 1 || exit 1
PPORT=$P0
(cd "$d" && exec "$B/sf-exec" --metrics "127.0.0.1:$PPORT" ../ckpt/par.xml) >"$d/exec.log" 2>&1 &
proc_pid=$!
up() { curl -sf -o /dev/null "http://127.0.0.1:$PPORT/metrics"; }
wait_for 10 up
if python3 - "$proc_pid" "$PPORT" >"$d/process.log" 2>&1 <<'EOF'
import os, re, subprocess, sys, time, urllib.request
pid, port = sys.argv[1], sys.argv[2]
tick, page = os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
btime = int(re.search(r"^btime (\d+)$", open("/proc/stat").read(), re.M).group(1))
def proc():
    f = open("/proc/%s/stat" % pid).read()
    v = f[f.rindex(")") + 2:].split()  # from the 3rd field on
    return {"cpu": (int(v[11]) + int(v[12])) / tick, "start": btime + int(v[19]) / tick,
            "vsize": int(v[20]), "rss": int(v[21]) * page, "fds": len(os.listdir("/proc/%s/fd" % pid))}
limit = int(re.search(r"^Max open files\s+(\d+)", open("/proc/%s/limits" % pid).read(), re.M).group(1))
errors, shown = [], ""
for k in range(3):
    a = proc()
    text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port).read().decode()
    b = proc()
    lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    if lint.returncode != 0:
        errors.append("promtool: " + lint.stdout + lint.stderr)
    m = {name: float(v) for name, v in re.findall(r'^(process_[a-z_]+)\{job="metrics_run",host=""\} (\S+)$', text, re.M)}
    for name, typ in (("process_cpu_seconds_total", "counter"), ("process_start_time_seconds", "gauge"),
                      ("process_resident_memory_bytes", "gauge"), ("process_virtual_memory_bytes", "gauge"),
                      ("process_open_fds", "gauge"), ("process_max_fds", "gauge")):
        if name not in m or "# TYPE %s %s\n" % (name, typ) not in text:
            errors.append("no %s %s with labels job and host" % (typ, name))
    if errors:
        break
    checks = [
        ("CPU seconds", a["cpu"] - 0.005 <= m["process_cpu_seconds_total"] <= b["cpu"] + 0.005, a["cpu"], b["cpu"], m["process_cpu_seconds_total"]),
        ("start time", abs(m["process_start_time_seconds"] - a["start"]) <= 0.005, a["start"], b["start"], m["process_start_time_seconds"]),
        ("resident bytes", 0.9 * min(a["rss"], b["rss"]) <= m["process_resident_memory_bytes"] <= 1.1 * max(a["rss"], b["rss"]), a["rss"], b["rss"], m["process_resident_memory_bytes"]),
        ("virtual bytes", 0.9 * min(a["vsize"], b["vsize"]) <= m["process_virtual_memory_bytes"] <= 1.1 * max(a["vsize"], b["vsize"]), a["vsize"], b["vsize"], m["process_virtual_memory_bytes"]),
        # the scrape's own connection is open while it is rendered
        ("open fds", min(a["fds"], b["fds"]) <= m["process_open_fds"] <= max(a["fds"], b["fds"]) + 1, a["fds"], b["fds"], m["process_open_fds"]),
        ("max fds", m["process_max_fds"] == limit, limit, limit, m["process_max_fds"]),
    ]
    for what, ok, lo, hi, got in checks:
        if not ok:
            errors.append("scrape %d: %s %g, /proc says %g before and %g after" % (k, what, got, lo, hi))
    shown = "cpu %.2f s, started %.2f, rss %d, vsize %d, fds %d of %d" % tuple(m[n] for n in (
        "process_cpu_seconds_total", "process_start_time_seconds", "process_resident_memory_bytes",
        "process_virtual_memory_bytes", "process_open_fds", "process_max_fds"))
    time.sleep(0.3)
print("last of 3 scrapes: " + shown)
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF
then
  sf_ok process "$(head -n 1 "$d/process.log"); each within what /proc/PID said just before and after"
else
  sf_bad process "the process metrics are not /proc's" "$d/process.log" "$d/exec.log"
fi
kill "$proc_pid" 2>/dev/null
wait "$proc_pid" 2>/dev/null

# ---- prometheus: a real server scraping two executors of sf-launch ----

d=$work/prom
mkdir -p "$d/out" "$d/tsdb"
sf_next_ports 5 || exit 1 # consecutive: the executors', Prometheus's, the two metrics ports
EP0=$P0 EP1=$P1 PROM=$P2 MBASE=$P3
sf_hosts_graph "$d/seq.xml" metrics_prom 0 500 out/out.csv
"$B/sf-xform" --hosts "h0=127.0.0.1:$EP0,h1=127.0.0.1:$EP1" "$d/seq.xml" -o "$d/par.xml" >"$d/xform.log" 2>&1 ||
  { echo "error: sf-xform failed:" >&2; cat "$d/xform.log" >&2; exit 1; }
# the scrape configuration of docs/running.md, at this test's ports
cat >"$d/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: sf
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$MBASE', '127.0.0.1:$((MBASE + 1))']
EOF
(exec setsid prometheus --config.file="$d/prometheus.yml" --storage.tsdb.path="$d/tsdb" \
  --web.listen-address="127.0.0.1:$PROM" >"$d/prometheus.log" 2>&1) &
prom_pid=$!
SF_GROUPS+=("$prom_pid")
ready() { curl -sf "http://127.0.0.1:$PROM/-/ready" >/dev/null 2>&1; }
if ! wait_for 20 ready; then
  if ! kill -0 "$prom_pid" 2>/dev/null; then
    echo "skip: prometheus does not start here:" >&2
    tail -n 5 "$d/prometheus.log" >&2
    exit 77
  fi
  sf_bad prometheus "prometheus was not ready within 20 s" "$d/prometheus.log"
else
  (cd "$d" && exec setsid timeout -k 5 60 bash "$src/tools/sf-launch" --exec "$B/sf-exec" --insecure-plaintext \
    --metrics-base "$MBASE" --checkpoint-dir "$d/ck" --checkpoint-interval 0.3 par.xml) >"$d/launch.log" 2>&1 &
  launch_pid=$!
  SF_GROUPS+=("$launch_pid")
  # both hosts' sf_operator_tuples_out_total, through the query API
  query() {
    curl -sf -G "http://127.0.0.1:$PROM/api/v1/query" --data-urlencode 'query=sf_operator_tuples_out_total' \
      >"$d/query.json" 2>/dev/null &&
      python3 - "$d/query.json" >"$d/query.txt" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
series = [(s["metric"].get("host"), s["metric"].get("operator"), s["metric"].get("job"), float(s["value"][1]))
          for s in r["data"]["result"]]
for s in sorted(series):
    print("host %s operator %s job %s value %g" % s)
hosts = {h for h, op, job, v in series if job == "metrics_prom" and v > 0 and op in ("src", "calc")}
sys.exit(0 if r["status"] == "success" and hosts == {"h0", "h1"} else 1)
EOF
  }
  if wait_for 25 query; then
    sf_ok prometheus "prometheus scraped both executors: $(grep -E 'operator (src|calc)' "$d/query.txt" | sed 's/ job .* value / = /' | tr '\n' ';' | sed 's/;$//')"
  else
    sf_bad prometheus "prometheus's query API did not return sf_operator_tuples_out_total of h0 and h1" \
      "$d/query.json" "$d/query.txt" "$d/launch.log" "$d/prometheus.log"
  fi
  # the checkpoints between hosts: both count completions, the coordinator (h0, the source's) times them
  ckpts() {
    curl -sf -G "http://127.0.0.1:$PROM/api/v1/query" \
      --data-urlencode 'query={__name__=~"sf_checkpoints_completed_total|sf_checkpoint_duration_seconds_count"} > 0' \
      >"$d/ckpt.json" 2>/dev/null &&
      python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["data"]["result"]
got = sorted("%s %s %s" % (s["metric"]["__name__"], s["metric"].get("host"), s["value"][1]) for s in r)
print("; ".join(got))
names = {(s["metric"]["__name__"], s["metric"].get("host")) for s in r}
sys.exit(0 if names == {("sf_checkpoints_completed_total", "h0"), ("sf_checkpoints_completed_total", "h1"),
                        ("sf_checkpoint_duration_seconds_count", "h0")} else 1)' "$d/ckpt.json" >"$d/ckpt.txt"
  }
  if wait_for 10 ckpts; then
    sf_ok checkpoints "through prometheus: $(cat "$d/ckpt.txt")"
  else
    sf_bad checkpoints "expected completions on h0 and h1 and durations on h0 only" "$d/ckpt.txt" "$d/ckpt.json"
  fi
  # PromQL over the histograms and the process metrics: the checkpoints' median duration on h0 (a
  # number within the buckets), both executors' resident memory and start time
  promql() {
    local q k
    : >"$d/promql.txt"
    for k in 0 1 2; do
      q=('histogram_quantile(0.5, sf_checkpoint_duration_seconds_bucket)' 'process_resident_memory_bytes'
         'process_start_time_seconds')
      curl -sf -G "http://127.0.0.1:$PROM/api/v1/query" --data-urlencode "query=${q[k]}" >"$d/promql$k.json" 2>/dev/null ||
        return 1
    done
    python3 - "$d" "$(date +%s)" >"$d/promql.txt" <<'EOF'
import json, math, sys
d, now = sys.argv[1], float(sys.argv[2])
res = [json.load(open("%s/promql%d.json" % (d, k)))["data"]["result"] for k in range(3)]
val = [{s["metric"].get("host"): float(s["value"][1]) for s in r if s["metric"].get("job") == "metrics_prom"} for r in res]
print("median checkpoint %s s on h0; resident %s; started %s s ago" % (
    "%.3f" % val[0]["h0"] if "h0" in val[0] else "-",
    ", ".join("%s %d MB" % (h, v / 1e6) for h, v in sorted(val[1].items())),
    ", ".join("%s %.0f" % (h, now - v) for h, v in sorted(val[2].items()))))
ok = (list(val[0]) == ["h0"] and 0.005 <= val[0]["h0"] <= 60 and sorted(val[1]) == ["h0", "h1"] and
      all(v > 1e6 for v in val[1].values()) and sorted(val[2]) == ["h0", "h1"] and
      all(0 <= now - v < 120 for v in val[2].values()))
sys.exit(0 if ok else 1)
EOF
  }
  if wait_for 10 promql; then
    sf_ok promql "through prometheus: $(cat "$d/promql.txt")"
  else
    sf_bad promql "expected the median checkpoint duration of h0, the memory and start time of h0 and h1" \
      "$d/promql.txt" "$d/promql0.json" "$d/promql1.json" "$d/promql2.json"
  fi
  lines=$(grep -c "metrics at http://127.0.0.1:" "$d/launch.log")
  a0="http://127.0.0.1:$MBASE" a1="http://127.0.0.1:$((MBASE + 1))"
  if [[ $lines != 2 ]] || ! grep -qxF "sf-launch: host 'h0': metrics at $a0/metrics, live view at $a0/" "$d/launch.log" ||
     ! grep -qxF "sf-launch: host 'h1': metrics at $a1/metrics, live view at $a1/" "$d/launch.log"; then
    sf_bad prometheus "sf-launch did not print each executor's address once ($lines lines)" "$d/launch.log"
  else
    sf_ok launch "sf-launch printed both executors' metrics addresses once"
  fi
  kill -INT -- "-$launch_pid" 2>/dev/null
  wait "$launch_pid" 2>/dev/null
fi
kill -TERM -- "-$prom_pid" 2>/dev/null
wait "$prom_pid" 2>/dev/null

# ---- live: the page at / in headless Chromium while a job runs ----

d=$work/live
mkdir -p "$d/out" "$d/profile"
R=2000
# (the job outlasts Chromium's start on a loaded machine, and is stopped once the page was read)
sed -e "s|<param name=\"count\">200000</param>|<param name=\"count\">$((R * 80))</param><param name=\"rate\">$R</param>|" \
  -e 's|<param name="iterations">2000</param>|<param name="iterations">200</param>|' \
  "$src/graphs/work.xml" >"$d/seq.xml"
"$B/sf-xform" -w 2 -o "$d/par.xml" "$d/seq.xml" >"$d/xform.log" 2>&1 ||
  { echo "error: sf-xform failed:" >&2; cat "$d/xform.log" >&2; exit 1; }
nops=$(grep -c '<operator ' "$d/par.xml")
chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $chromium ]]; then
  echo "live         SKIP  chromium is not installed (Debian: apt-get install chromium)"
else
  sf_next_ports 2 || exit 1
  LPORT=$P0 DPORT=$P1
  (cd "$d" && exec timeout -k 5 90 "$B/sf-exec" --metrics "127.0.0.1:$LPORT" par.xml) >"$d/exec.log" 2>&1 &
  live_pid=$!
  up() { curl -sf -o /dev/null "http://127.0.0.1:$LPORT/live.json"; }
  wait_for 10 up
  (exec setsid "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --remote-debugging-port="$DPORT" \
    --remote-allow-origins='*' --user-data-dir="$d/profile" --window-size=1400,650 "http://127.0.0.1:$LPORT/" \
    >"$d/chromium.log" 2>&1) &
  chrome_pid=$!
  SF_GROUPS+=("$chrome_pid")
  devtools() { python3 "$src/tests/tools/devtools.py" "$DPORT" "$@"; }
  # the page's state: its polls, each row's rates and counts, what its picture holds
  state='JSON.stringify({polls: +document.body.dataset.polls,
    rows: Object.fromEntries([...document.querySelectorAll("#stats tbody tr")].map(r =>
      [r.dataset.op, {rates: r.dataset.rates.split(" ").filter(x => x).map(Number),
                      outs: r.dataset.outs.split(" ").map(Number)}])),
    ops: document.querySelectorAll("#graph g[data-op]").length,
    edges: document.querySelectorAll("#graph path.edge").length})'
  polled() { local p; p=$(devtools eval "+document.body.dataset.polls" 2>/dev/null) && [[ $p =~ ^[0-9]+$ ]] && ((p >= 2)); }
  scrape_src() { # FILE: the uptime and the Beacon's tuples out, from /metrics
    curl -sf "http://127.0.0.1:$LPORT/metrics" | awk '
      /^sf_executor_uptime_seconds/ { t = $NF }
      /^sf_operator_tuples_out_total.*operator="jobs"/ { n = $NF }
      END { print t, n }' >"$1"
  }
  # the server's answers: the three paths, HEAD, another path, another method
  code() { curl -s -o /dev/null -w '%{http_code} %{content_type};' "$@" 2>/dev/null; }
  u=http://127.0.0.1:$LPORT
  http=$(code "$u/")$(code "$u/live.json")$(code --head "$u/metrics")$(code "$u/nowhere")$(code -X POST -d x "$u/metrics")
  want="200 text/html; charset=utf-8;200 application/json;200 text/plain; version=0.0.4; charset=utf-8;"
  want+="404 text/plain; charset=utf-8;405 text/plain; charset=utf-8;"
  if [[ $http == "$want" ]]; then
    sf_ok http "GET / and /live.json, HEAD /metrics: 200 with their types; another path 404, POST 405"
  else
    echo "$http" >"$d/http.txt"
    sf_bad http "expected '$want'" "$d/http.txt"
  fi
  if ! wait_for 30 polled; then
    sf_bad live "the page did not poll /live.json twice within 30 s" "$d/chromium.log" "$d/exec.log"
  else
    # each look retried (a busy machine: the browser or the server may be slow to answer once)
    look() { # N: /metrics then the page's state, into mN and pageN.json
      local k
      for k in 1 2 3; do
        scrape_src "$d/m$1" && devtools eval "$state" >"$d/page$1.json" 2>>"$d/devtools.log" &&
          [[ -s $d/page$1.json && -s $d/m$1 ]] && return 0
        sleep 0.3
      done
      return 1
    }
    look 1
    sleep 2
    look 2
    for k in 1 2 3; do curl -sf "http://127.0.0.1:$LPORT/live.json" >"$d/live.json" && [[ -s $d/live.json ]] && break; sleep 0.3; done
    mkdir -p "$build/test-artifacts"
    shot=$build/test-artifacts/metrics-live-view.png
    devtools screenshot "$shot"
    if python3 - "$d" "$R" "$nops" "$shot" >"$d/live.log" 2>&1 <<'EOF'
import json, sys
d, rate, nops, shot = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
p1, p2 = (json.loads(json.load(open("%s/page%d.json" % (d, k)))) for k in (1, 2))
(t1, n1), (t2, n2) = (map(float, open("%s/m%d" % (d, k)).read().split()) for k in (1, 2))
edges = len(json.load(open(d + "/live.json"))["edges"])
metrics_rate = (n2 - n1) / (t2 - t1)
errors = []
if p2["polls"] <= p1["polls"]:
    errors.append("the page did not poll between the two looks (%d, %d)" % (p1["polls"], p2["polls"]))
a, b = p1["rows"].get("jobs"), p2["rows"].get("jobs")
if not a or not b or not b["rates"]:
    errors.append("no rate shown for the Beacon 'jobs'")
else:
    if b["outs"][-1] <= a["outs"][-1]:
        errors.append("the counts shown did not change: %s then %s" % (a["outs"], b["outs"]))
    if b["rates"] == a["rates"]:
        errors.append("the rates shown did not change: %s" % b["rates"])
    shown = b["rates"][-1]
    if abs(shown - metrics_rate) > 0.25 * metrics_rate:
        errors.append("the page shows %.0f/s for 'jobs', /metrics %.0f/s" % (shown, metrics_rate))
    if abs(shown - rate) > 0.25 * rate:
        errors.append("the page shows %.0f/s for 'jobs', its rate is %.0f/s" % (shown, rate))
    print("jobs: page %.0f/s, /metrics %.0f/s (Beacon rate %.0f); rates shown %s then %s" %
          (shown, metrics_rate, rate, a["rates"], b["rates"]))
if p2["ops"] != nops or p2["edges"] != edges:
    errors.append("the picture has %d operators and %d edges, the graph %d and %d" % (p2["ops"], p2["edges"], nops, edges))
png = open(shot, "rb").read()
if png[:8] != b"\x89PNG\r\n\x1a\n" or len(png) < 10000:
    errors.append("the screenshot %s is no picture (%d bytes)" % (shot, len(png)))
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF
    then
      sf_ok live "headless Chromium: $(head -n 1 "$d/live.log"); $nops operators drawn; screenshot $shot"
    else
      sf_bad live "the live view is not right" "$d/live.log" "$d/page1.json" "$d/page2.json" "$d/live.json" "$d/devtools.log"
    fi
  fi
  kill -TERM -- "-$chrome_pid" 2>/dev/null
  wait "$chrome_pid" 2>/dev/null
  kill "$live_pid" 2>/dev/null
  wait "$live_pid" 2>/dev/null
fi

echo "metrics: $SF_PASSED passed, $SF_FAILED failed in $(sf_elapsed "$t_start" "$(sf_now)") s"
((SF_FAILED == 0))
