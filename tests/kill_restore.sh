#!/usr/bin/env bash
# tests/kill_restore.sh BUILD_DIR SOURCE_DIR: kill -9 and --restore over random graphs and widths.
#
# Each run takes a random graph (`sf-randgraph GSEED`, its Beacons made SF_KILL_ROWS tuples long, a
# paced one at most two seconds' worth, so that a kill lands mid-stream), rewrites it with
# `sf-xform -w W1`, runs it with sf-exec (one process) with --checkpoint-dir and a short
# --checkpoint-interval, kills it with SIGKILL at a random moment, then runs `sf-exec --restore`
# on the graph rewritten at width W2 (W1 and W2 drawn apart from 1..4: narrower, wider or the
# same) to the end. The restore must exit 0, say exactly which
# checkpoint it took (the newest complete one when the job was killed: "sf-exec: restored checkpoint
# K from 'ck'", or "sf-exec: no complete checkpoint in 'ck': starting from the beginning"), write
# every output file byte for byte as the sequential run of the graph (computed once per graph,
# without checkpoints) did, leave no temporary file and no checkpoint. Checkpoints are taken every
# 0.02 s; a graph's calibration run (uninterrupted, width 2, its outputs checked too) counts how many
# complete (KMAX; they come as fast as barriers get through the queues, and stop when the sources
# end) and how far apart (GAP). The moment of a kill is counted in completed checkpoints (the MANIFEST
# files under ck/), not in seconds, so that it means the same on a fast and a slow machine: once
# checkpoint k is complete, plus a random delay below GAP; and whatever was planned, at once when the
# sinks' temporary files reach 90 % of the sequential output (when that is 256 KiB or more), so that
# the kill lands before the end. The kinds of run, by the run's number modulo 10:
#   0-5 kill:     killed a random delay after checkpoint k (1..KMAX) is complete;
#   6   early:    killed a random delay (below GAP) after the start: mostly before any checkpoint
#                 completed, so the restore starts from the beginning;
#   7   nockpt:   checkpoints every 60 s (none completes), killed at a random point of the
#                 sequential run's length: mid-stream, the sinks' temporary files half written;
#   8-9 twice:    killed after checkpoint k1, restored at W2 and killed again after k2 (0..KMAX)
#                 more checkpoints, restored at W3 to the end (the first restore must say it took
#                 k1, and lose nothing: the newest complete one at the second kill is k1 or newer).
# Runs 3, 23, 43, ... (a kill) run on three executors instead: sf-launch (loopback ports, plaintext,
# no --restart) of the graph rewritten with --hosts h0,h1,h2, one executor drawn at random killed
# with SIGKILL once the sinks' temporary files hold a random 5 to 50 % of the sequential output (or,
# when that is too small to tell, once checkpoint 1 is complete: three executors place checkpoints
# further ahead and complete the first ones late); sf-launch must fail naming it ("sf-launch: error:
# host 'h1' failed: killed by SIGKILL"), and `sf-launch --restore` at W2 must complete with every
# executor saying what it restored, as above, and the same outputs.
# A kill after the job decided to commit (its commit record ck/host-all.commit written, before
# its sinks renamed their files, or while it removed its checkpoints; on three executors, the
# ck/host-hN.commit of every executor holding a sink) must be restored with exactly "sf-exec: the
# job in 'ck' had completed (every sink committed its output): nothing to restore" (once per
# executor). On three executors some may have committed before the victim was killed without
# that: they restore as the others do.
# A run whose job ended before the kill is checked as a plain run (its outputs, nothing left) and
# counted apart. The counts at the end: how many were killed after a complete checkpoint (by the
# checkpoint's number), before any, after the commit (below), twice, finished before the kill, the
# directions of the width change, across a clash of names (with width hints, which regions exist
# depends on the width, so rN.split or rN.merge can be another region's at the other width: the
# restore matches them by where they sit), and how many restored correctly.
#
# Joins and Lookups: the graphs are made with `sf-randgraph --tables GRAPH_DIR/tables`, so some hold
# Lookups, others a Join or event-time windows (sf-randgraph's header); graph G with G % 5 == 1 is
# one with a Join, G % 5 == 2 one with event-time windows and G % 5 == 3 one with a Lookup (the
# first of the seeds SEED*1000+G+K*1000000, K = 0, 1, ..., that has one), so that every run of 3
# graphs or more has all three (else it fails). A Join serial when a
# checkpoint was taken cannot be restored replicated, nor the reverse (docs/language.md, "Merging
# by time"): a restore may then say "checkpoint K in 'ck' cannot be used (Join 'NAME' was serial
# when it was taken and is replicated now ...)" and take an older one, or start from the beginning,
# which gives the same outputs; such restores are counted.
#
# Randomness: SF_KILL_SEED (default: today's UTC date as YYYYMMDD, printed at the start) seeds
# everything: graph G of the run is `sf-randgraph SEED*1000+G` (but for the Join and Lookup graphs
# above), run I's widths and kill moment come from bash's RANDOM seeded with SEED*1000+I. SF_KILL_ONLY="I ..." does only those runs (to repeat a
# failure; the moment of a kill depends on timing too, so a repeat lands near, not at, it).
# SF_KILL_RUNS (default 100; 20 under sanitizers), SF_KILL_PER_GRAPH (runs per graph, default 4),
# SF_KILL_ROWS (the Beacons' length, default 200000; 50000 under sanitizers), SF_KEEP=1 keeps every
# work directory; a failing run's is always kept.
set -uo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
sf_need_bins "$build" sf-randgraph sf-xform sf-exec || exit 1
B=$build/bin

trap sf_stop_all EXIT
trap 'exit 130' INT TERM
sf_mktemp work sf-kill-restore || exit 1
SF_WORK=$work
SF_CASE_WIDTH=9

seed=${SF_KILL_SEED:-$(date -u +%Y%m%d)}
runs=${SF_KILL_RUNS:-100}
per_graph=${SF_KILL_PER_GRAPH:-4}
rows=${SF_KILL_ROWS:-200000}
iv=0.02 # the checkpoint interval (the coordinator looks every 20 ms: no use going below)
IV=$iv
DIST=0 AT_BYTES=0 # per run: on three executors; killed at this many bytes of output
if [[ -n ${SF_SANITIZE:-} ]]; then # several times slower: fewer and shorter runs
  runs=${SF_KILL_RUNS:-20}
  rows=${SF_KILL_ROWS:-50000}
fi
for v in seed runs per_graph rows; do
  if ! [[ ${!v} =~ ^[0-9]+$ ]] || [[ $v != seed && ${!v} == 0 ]]; then
    echo "error: SF_KILL_${v^^} must be a positive integer, got '${!v}'" >&2
    exit 2
  fi
done
seed=$((10#$seed)) # (a date or number with leading zeros is decimal all the same)
only=${SF_KILL_ONLY:-}
echo "kill_restore: seed $seed, $runs runs, $per_graph per graph, $rows rows; repeat with" \
  "SF_KILL_SEED=$seed bash $src/tests/kill_restore.sh $build $src"
t_start=$(sf_now)

# ---- graphs ----

# graph G (1, 2, ...) in $work/gG: seq.xml (the random graph with every Beacon SF_KILL_ROWS long),
# ref/out (its sequential run's outputs), secs (that run's seconds), wW.xml made on demand. A graph
# is prepared once; GRAPH_OK says whether it could be (else its runs are skipped, after a FAIL line).
declare -A prepared=() graph_seed=()
prepare_graph() { # G
  local g=$1 gd=$work/g$1 gseed=$((seed * 1000 + $1)) t0 t1 want="" k
  GD=$gd
  if [[ -n ${prepared[$g]:-} ]]; then
    GSEED=${graph_seed[$g]}
    GRAPH_OK=${prepared[$g]}
    return
  fi
  GRAPH_OK=0
  prepared[$g]=0
  mkdir -p "$gd/ref/out" "$gd/tables"
  ((g % 5 == 1)) && want=Join
  ((g % 5 == 2)) && want=windows
  ((g % 5 == 3)) && want=Lookup
  for ((k = 0; k < 100; k++)); do
    gseed=$((seed * 1000 + g + k * 1000000))
    if ! "$B/sf-randgraph" --tables "$gd/tables" "$gseed" out >"$gd/graph.xml" 2>"$gd/gen.log"; then
      GSEED=$gseed
      graph_seed[$g]=$gseed
      sf_bad "graph-$g" "sf-randgraph $gseed failed" "$gd/gen.log"
      return
    fi
    [[ -z $want ]] && break
    [[ $want == windows ]] && sed -n 2p "$gd/graph.xml" | grep -q 'features:.* windows' && break
    grep -q "<operator [^>]*kind=\"$want\"" "$gd/graph.xml" && break
  done
  GSEED=$gseed
  graph_seed[$g]=$gseed
  grep -q '<operator [^>]*kind="Join"' "$gd/graph.xml" && bump "graphs with a Join"
  grep -q '<operator [^>]*kind="Lookup"' "$gd/graph.xml" && bump "graphs with a Lookup"
  sed -n 2p "$gd/graph.xml" | grep -q 'features:.* windows' && bump "graphs with event-time windows"
  # only the Beacons' count changes (a FlatMap's count is an expression, and stays); a paced one
  # (rate R) gets at most 2 R, two seconds: at 10000 a second, 200000 rows made every run of its
  # graph last 20 s, and the script 8 minutes
  awk -v rows="$rows" '
    /<operator / { beacon = /kind="Beacon"/; n = 0; rate = 0 }
    beacon {
      line[++n] = $0
      if (match($0, /<param name="rate">[0-9]+</)) { r = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", r); rate = r + 0 }
      if (/<\/operator>/) {
        c = rows; if (rate > 0 && 2 * rate < c) c = 2 * rate
        for (i = 1; i <= n; i++) { if (line[i] ~ /<param name="count">/) sub(/>[0-9]+</, ">" c "<", line[i]); print line[i] }
        beacon = 0
      }
      next
    }
    { print }' "$gd/graph.xml" >"$gd/seq.xml"
  t0=$(sf_now)
  if ! (cd "$gd/ref" && timeout -k 5 300 "$B/sf-exec" ../seq.xml) >"$gd/ref.log" 2>&1; then
    sf_bad "graph-$g" "the sequential run of sf-randgraph $gseed (rows $rows) failed" "$gd/ref.log"
    return
  fi
  t1=$(sf_now)
  sf_elapsed "$t0" "$t1" >"$gd/secs"
  # how many checkpoints a whole run at width 2 completes (they come as fast as the barriers get
  # through the queues, and stop when the sources end): the kills are spread over that many
  calibrate "$g" || return
  GRAPH_OK=1
  prepared[$g]=1
}

# calibrate G: $GD/kmax, the newest checkpoint seen complete in an uninterrupted run at width 2 with
# checkpoints every IV s, and $GD/gap_ms, the milliseconds until it was seen over kmax (the time between two
# completions); its outputs must be the sequential run's (a plain run with checkpoints)
calibrate() {
  local g=$1 d=$GD/calibrate t0 t1 pid
  xformed 2 || return 1
  mkdir -p "$d/out"
  t0=$(sf_now)
  (cd "$d" && exec timeout -k 5 300 "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval "$IV" "$GD/w2.xml") \
    >"$d/run.log" 2>&1 &
  pid=$!
  local seen=0 t_seen=""
  while running "$pid"; do
    newest_complete "$d"
    ((NEWEST > seen)) && seen=$NEWEST && t_seen=$(sf_now)
    sleep 0.005
  done
  wait "$pid"
  ST=$?
  t1=$(sf_now)
  if [[ $ST != 0 ]]; then
    sf_bad "graph-$g" "sf-randgraph $GSEED at width 2 with checkpoints every $IV s exited $ST" "$d/run.log"
    return 1
  elif [[ -n $(not_late "$d/run.log") ]]; then
    sf_bad "graph-$g" "sf-randgraph $GSEED at width 2 with checkpoints every $IV s said something" "$d/run.log"
    return 1
  elif ! outputs_ok "$d"; then
    sf_bad "graph-$g" "sf-randgraph $GSEED at width 2 with checkpoints every $IV s: $WHY" "$d/run.log"
    return 1
  fi
  echo "$seen" >"$GD/kmax"
  awk -v a="$t0" -v b="${t_seen:-$t1}" -v k="$seen" 'BEGIN { printf "%d\n", (b - a) * 1000 / (k > 0 ? k : 1) }' >"$GD/gap_ms"
  # near_end's limit: 90 % of the output, when it is big enough to tell (else 0: never)
  local bytes
  bytes=$(cat "$GD"/ref/out/* | wc -c)
  echo $((bytes >= 262144 ? bytes * 9 / 10 : 0)) >"$GD/cap"
  sf_ok "graph-$g" "sf-randgraph $GSEED: sequential run $(cat "$GD/secs") s; at width 2 with checkpoints every $IV s $(sf_elapsed "$t0" "$t1") s, newest complete checkpoint seen $seen, outputs right"
  rm -rf "$d"
}

# not_late LOG: the lines of LOG but the warnings about late tuples a Join or a time window dropped
# (a Join graph's Beacons may go slightly out of time order), which every run of the graph gives
late_re="^sf-exec: warning: operator '[^']*': [0-9]+ late tuples? dropped "
# (and the note that a sink finished while another source still ran: checkpoints stop there)
sink_re="^sf-exec: operator '[^']*': the sink finished while other sources still run: no checkpoint is taken "
not_late() { grep -Ev "^(\[h[0-9]+\] )?(${late_re#^}|${sink_re#^})" "$1"; }

# xformed W: $GD/wW.xml, sf-xform -w W of the graph (1 when it could be made)
xformed() {
  local w=$1
  [[ -f $GD/w$w.xml ]] && return 0
  "$B/sf-xform" -w "$w" "$GD/seq.xml" -o "$GD/w$w.xml" 2>"$GD/xform-w$w.log" && return 0
  sf_bad "run-$I" "sf-xform -w $w of sf-randgraph $GSEED failed" "$GD/xform-w$w.log"
  return 1
}

# clash WA WB: the graphs at widths WA and WB give one name of a Split or Merge (rN.split, rN.merge,
# rN.split[K]: regions are numbered, and which regions exist depends on the width when operators
# carry width hints) to different operators (their origin): counted (the top of this file)
regions() { # W: the lines NAME=ORIGIN of wW.xml's Splits and Merges, cached
  [[ -f $GD/regions-w$1 ]] ||
    grep -o '<operator name="r[0-9]*\.\(split\|merge\)\(\[[0-9]*\]\)\?" kind="[A-Za-z]*"[^>]* origin="[^"]*"' "$GD/w$1.xml" |
    sed 's/^<operator name="\([^"]*\)".* origin="\([^"]*\)"$/\1=\2/' | LC_ALL=C sort >"$GD/regions-w$1"
  cat "$GD/regions-w$1"
}
clash() { # WA WB
  [[ $1 != "$2" ]] && [[ -n $(LC_ALL=C join -t = <(regions "$1") <(regions "$2") | awk -F = '$2 != $3') ]]
}

# ---- one sf-exec, killed ----

# newest_complete DIR: NEWEST is the highest K with DIR/ck/ckpt-K/MANIFEST (a complete
# checkpoint), or 0 (no subshell: it is polled)
newest_complete() {
  local m k
  NEWEST=0
  for m in "$1"/ck/ckpt-*/MANIFEST; do
    [[ -f $m ]] || continue
    k=${m%/MANIFEST}
    k=${k##*/ckpt-}
    [[ $k =~ ^[0-9]+$ ]] && ((k > NEWEST)) && NEWEST=$k
  done
}

# running PID: the process exists and has not ended (kill -0 also succeeds on a zombie)
running() {
  local st
  read -r _ _ st _ 2>/dev/null <"/proc/$1/stat" && [[ $st != Z ]]
}

# ms_sleep MS
ms_sleep() { sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }

# written DIR: WRITTEN, the bytes in the sinks' temporary files in DIR/out
written() {
  local n
  WRITTEN=0
  for n in $(stat -c %s -- "$1"/out/.*.sf-part 2>/dev/null); do WRITTEN=$((WRITTEN + n)); done
}

# near_end DIR: the sinks' temporary files in DIR/out hold CAP bytes or more (CAP 0: never), i.e.
# 90 % of the sequential run's output: the job is about to complete
near_end() {
  ((CAP > 0)) || return 1
  written "$1"
  ((WRITTEN >= CAP))
}

# killed_run DIR W INTERVAL AFTER DELAY_MS LOG [--restore]: sf-exec on wW.xml in DIR with checkpoints
# every INTERVAL s; once a checkpoint numbered AFTER or higher is complete (AFTER 0: at once), it
# waits DELAY_MS ms more and sends SIGKILL; but as soon as the output is near its end (near_end), it
# kills at once: the kill lands mid-stream even when the job goes faster than its calibration said.
# Sets ST (the exit status: 137 when the kill ended it), AT_KILL (the newest complete checkpoint
# when it died) and the moment in WHEN.
killed_run() {
  local d=$1 w=$2 iv=$3 after=$4 ms=$5 log=$6 pid end=0 deadline victim="" vpid=""
  NEWEST=0
  if [[ $DIST == 1 ]]; then
    (cd "$d" && exec setsid timeout -k 5 300 bash "$src/tools/sf-launch" --exec "$B/sf-exec" --insecure-plaintext \
      ${7:-} --checkpoint-dir ck --checkpoint-interval "$iv" "$d/par-w$w.xml") >"$log" 2>&1 &
    pid=$!
    SF_GROUPS+=("$pid")
  else
    (cd "$d" && exec "$B/sf-exec" ${7:-} --checkpoint-dir ck --checkpoint-interval "$iv" "$GD/w$w.xml") >"$log" 2>&1 &
    pid=$!
  fi
  # a checkpoint takes some ms: 5 ms polls see each one (a slow machine only makes them later)
  while ((after > 0)); do
    newest_complete "$d"
    ((NEWEST >= after)) && break
    near_end "$d" && end=1 && break
    running "$pid" || break
    sleep 0.005
  done
  NEWEST_SEEN=$NEWEST
  if ((!end && AT_BYTES > 0)); then
    # (three executors) at a point of the output rather than after a delay
    while running "$pid"; do
      written "$d"
      ((WRITTEN >= AT_BYTES)) && break
      sleep 0.003
    done
  elif ((!end)); then
    deadline=$((${EPOCHREALTIME//[.,]/} + ms * 1000))
    while ((${EPOCHREALTIME//[.,]/} < deadline)); do
      near_end "$d" && end=1 && break
      running "$pid" || break
      sleep 0.003
    done
  fi
  if [[ $DIST == 1 ]]; then
    # one executor, drawn at random, is killed; sf-launch (no --restart) then fails the job
    victim=h$((RANDOM % 3))
    vpid=$(pgrep -f -- "sf-exec --host $victim .*$d/par-w$w.xml" | head -n 1)
    [[ -n $vpid ]] && kill -KILL "$vpid" 2>/dev/null
    wait "$pid" 2>/dev/null
    ST=$?
    if [[ $ST == 1 && -n $vpid ]] &&
      [[ $(grep -m 1 '^sf-launch:' "$log") == "sf-launch: error: host '$victim' failed: killed by SIGKILL" ]]; then
      ST=137 # killed as planned, and said so
    fi
  else
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    ST=$?
  fi
  newest_complete "$d"
  AT_KILL=$NEWEST
  if ((AT_BYTES > 0)); then
    WHEN="when the output held $AT_BYTES bytes"
  elif ((after == 0)); then
    WHEN="$ms ms after the start"
  else
    WHEN="$ms ms after checkpoint $after was complete"
  fi
  if [[ $ST == 0 ]] || ((!end && after > 0 && NEWEST_SEEN < after)); then
    WHEN="to be killed $WHEN"
  elif ((end)); then
    WHEN="killed as its output reached 90 % (planned: $WHEN)"
  else
    WHEN="killed $WHEN"
  fi
  [[ -n $victim ]] && WHEN="$victim $WHEN"
  return 0
}

# expect_line AT_KILL: the line a restore must print
expect_line() {
  if (($1 > 0)); then
    echo "sf-exec: restored checkpoint $1 from 'ck'"
  else
    echo "sf-exec: no complete checkpoint in 'ck': starting from the beginning"
  fi
}

# done_line: what a restore says of a job that had completed (its commit record there)
done_line() { echo "sf-exec: the job in 'ck' had completed (every sink committed its output): nothing to restore"; }

# restore_log_ok LOG AT_KILL [PARTIAL]: LOG has the line saying what was restored, and
# besides it only warnings about checkpoints newer than the restored one that never completed (a
# kill while they were written), or about checkpoints of a Join at another parallelism, after
# which an older one or none is restored (JOIN_SKIP=1 says so); when the job had decided to commit (DONE, before_restore), LOG is
# that line alone. PARTIAL: the run was killed, and may have died before it said anything.
restore_log_ok() {
  local log=$1 k=$2 partial=${3:-} want line ok=0
  if [[ $DONE == 1 ]]; then
    want=$(done_line)
    ((DIST)) && want=$(for h in 0 1 2; do done_line; done)
    [[ $(cat "$log") == "$want" ]] && return 0
    WHY="the job had committed: expected only '$(done_line)'$( ((DIST)) && echo " from each executor"), got '$(tr '\n' '|' <"$log")'"
    return 1
  fi
  local skip="^sf-exec: warning: checkpoint ([0-9]+) in 'ck' cannot be used \\((.*)\\); trying an older one$"
  local jskip="^Join '[^']*' was (serial|replicated) when it was taken and is (serial|replicated) now "
  local gone="^cannot read '[^']*[.]snap': No such file or directory$"
  local restored="^sf-exec: restored checkpoint ([0-9]+) from 'ck'$" id why below=0
  want=$(expect_line "$k")
  JOIN_SKIP=0
  while IFS= read -r line; do
    if [[ $line == "$want" ]]; then
      ok=1
    elif [[ $line =~ $skip ]]; then
      id=${BASH_REMATCH[1]} why=${BASH_REMATCH[2]}
      if ((id > k)) && [[ $why == "no manifest: it never completed" ]]; then
        :
      elif ((id <= k)) && [[ $why =~ $jskip ]]; then
        # (a Join serial then and replicated now, or the reverse: an older one, or none)
        JOIN_SKIP=1 below=$id
      elif ((JOIN_SKIP && id < below)) && [[ $why =~ $gone || $why == "no manifest: it never completed" ]]; then
        # (older than the two newest complete: the killed run may have been removing it)
        :
      else
        WHY="unexpected line '$line' (expected '$want')"
        return 1
      fi
    elif ((JOIN_SKIP)) && [[ $line =~ $restored ]] && ((BASH_REMATCH[1] < below)); then
      ok=1
    elif ((JOIN_SKIP)) && [[ $line == "$(expect_line 0)" ]]; then
      ok=1
    elif [[ $line =~ $late_re || $line =~ $sink_re ]]; then
      :
    else
      WHY="unexpected line '$line' (expected '$want')"
      return 1
    fi
  done <"$log"
  if [[ $ok == 0 && -z $partial ]]; then
    WHY="no line '$want'"
    return 1
  fi
  return 0
}

# outputs_ok DIR: DIR/out equals the sequential run's (every file, byte for byte; no temporary file
# left), and no checkpoint is left in DIR/ck (the completed job removed them)
outputs_ok() {
  local d=$1 report left
  if ! report=$(sf_compare_dirs "$GD/ref/out" "$d/out"); then
    WHY="the outputs differ from the sequential run's:"$'\n'"$report"
    return 1
  fi
  left=$(cd "$d" && ls -d ck/ckpt-* 2>/dev/null | tr '\n' ' ')
  if [[ -n $left ]]; then
    WHY="the completed job left checkpoints: $left"
    return 1
  fi
  return 0
}

# decided DIR: the job had decided to commit (its commit record is there: on three executors,
# that of every executor holding a sink in DIR/par-w$W1.xml; the hosts of the sinks do not change
# with the width, and the others' records do not matter)
decided() {
  if ((DIST)); then
    local h
    for h in $(sed -n 's/.*<operator [^>]*kind="[A-Za-z]*Sink" host="\([^"]*\)".*/\1/p' "$1/par-w$W1.xml" | sort -u); do
      [[ -f $1/ck/host-$h.commit ]] || return 1
    done
  else
    [[ -f $1/ck/host-all.commit ]]
  fi
}

# before_restore K CKW W: what a restore at width W starting from checkpoints up to K written at
# width CKW must do: DONE (1: the job had decided to commit: the restore must say it had
# completed); a clash of names between the widths (clash) is counted, once per restore
before_restore() {
  DONE=0
  decided "$D" && DONE=1
  (($1 > 0)) && clash "$2" "$3" && bump "restored across a clash of Split or Merge names"
  return 0
}

# ---- the runs ----

declare -A count=()
bump() { count[$1]=$((${count[$1]:-0} + 1)); }
widths=(1 2 3 4)

# fail_run WHAT LOG...: the FAIL line with everything needed to repeat the run
fail_run() {
  local what=$1
  shift
  local how="$B/sf-exec --checkpoint-dir ck --checkpoint-interval $IV w$W1.xml, kill -9, then sf-exec --restore ..."
  ((DIST)) && how="bash $src/tools/sf-launch --exec $B/sf-exec --insecure-plaintext --checkpoint-dir ck --checkpoint-interval $IV par-w$W1.xml (sf-xform with --hosts), kill -9 of one executor, then sf-launch --restore ..."
  sf_bad "run-$I" "$DESC: $what"$'\n'"    repeat: SF_KILL_SEED=$seed SF_KILL_ONLY=$I bash $src/tests/kill_restore.sh $build $src"$'\n'"    by hand: $B/sf-randgraph --tables \$PWD/tables $GSEED out | (set rows to $rows in the Beacon's count) > seq.xml; $B/sf-xform -w W seq.xml -o wW.xml; mkdir out; $how (run dir $D)" "$@"
  sf_keep "$D"
  bump failed
}

# classify AT_KILL: the bucket of a first kill
classify() {
  if (($1 == 0)); then bump "killed before any checkpoint"
  elif (($1 <= 2)); then bump "killed after checkpoint 1-2"
  elif (($1 <= 5)); then bump "killed after checkpoint 3-5"
  else bump "killed after checkpoint 6+"
  fi
}

for ((I = 1; I <= runs; I++)); do
  [[ -n $only && " $only " != *" $I "* ]] && continue
  bump runs
  G=$(((I - 1) / per_graph + 1))
  prepare_graph "$G"
  if [[ $GRAPH_OK != 1 ]]; then
    bump failed
    continue
  fi
  RANDOM=$(((seed * 1000 + I) % 2147483647))
  W1=${widths[RANDOM % 4]}
  W2=${widths[RANDOM % 4]}
  W3=${widths[RANDOM % 4]}
  secs=$(cat "$GD/secs")
  kmax=$(cat "$GD/kmax")
  ((kmax < 1)) && kmax=1
  gap=$(cat "$GD/gap_ms")
  CAP=$(cat "$GD/cap")
  IV=$iv
  D=$work/run-$I
  mkdir -p "$D/out"
  for w in "$W1" "$W2" "$W3"; do xformed "$w" || continue 2; done
  kind=$((I % 10))
  DIST=0
  if ((I % 20 == 3)); then
    # on three executors (sf-launch, loopback, plaintext), both graphs on the same ports
    DIST=1
    bump "on 3 executors"
    sf_next_ports 3 || exit 1
    for w in "$W1" "$W2"; do
      if ! "$B/sf-xform" -w "$w" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1,h2=127.0.0.1:$P2" "$GD/seq.xml" \
        -o "$D/par-w$w.xml" 2>"$D/xform.log"; then
        sf_bad "run-$I" "sf-xform -w $w --hosts ... of sf-randgraph $GSEED failed" "$D/xform.log"
        continue 2
      fi
    done
  fi
  case $kind in
  [0-5]) what=kill after=$((1 + RANDOM % kmax)) ms=$((RANDOM % (gap + 1))) ;;
  6) what=early after=0 ms=$((RANDOM % (gap + 1))) ;;
  7) what=nockpt after=0 IV=60
     ms=$(awk -v s="$secs" -v r=$((RANDOM % 1000)) 'BEGIN { printf "%d", s * 1000 * (0.05 + 0.85 * r / 1000) }') ;;
  *) what=twice after=$((1 + RANDOM % kmax)) ms=$((RANDOM % (gap + 1))) ;;
  esac
  # three executors complete their first checkpoints later (placed further ahead, and coordinated
  # between hosts), often near the end: killed at a random point of the output (5 to 50 % of the
  # sequential run's) instead, when it is big enough to tell, else after the first checkpoint
  AT_BYTES=0
  if ((DIST)); then
    after=1 ms=0
    ((CAP > 0)) && after=0 AT_BYTES=$((CAP * (5 + RANDOM % 46) / 90))
  fi
  DESC="$what$( ((DIST)) && echo " on 3 executors"), graph sf-randgraph $GSEED (rows $rows), width $W1 -> $W2$([[ $what == twice ]] && echo " -> $W3"), interval $IV s"
  if ((W2 < W1)); then bump "restored narrower"; elif ((W2 > W1)); then bump "restored wider"; else bump "restored at the same width"; fi

  killed_run "$D" "$W1" "$IV" "$after" "$ms" "$D/run1.log"
  DESC+=", $WHEN (newest complete: $AT_KILL)"
  if [[ $ST == 0 ]]; then
    # the job ended before the kill: a plain run with checkpoints
    if ! outputs_ok "$D"; then fail_run "finished before the kill, but $WHY" "$D/run1.log"; continue; fi
    bump "finished before the kill"
    sf_ok "run-$I" "$DESC: finished before the kill, outputs right"
    [[ ${SF_KEEP:-0} == 1 ]] || rm -rf "$D"
    continue
  elif [[ $ST != 137 ]]; then
    fail_run "the run to be killed exited $ST on its own" "$D/run1.log"
    continue
  fi
  if decided "$D"; then
    bump "killed after the commit"
    DESC+=" after it had decided to commit its outputs"
  else
    classify "$AT_KILL"
  fi
  ckw=$W1 # the width of the run that wrote the newest checkpoint
  last=$W2
  if [[ $what == twice ]] && ! decided "$D"; then
    k1=$AT_KILL
    after2=$((RANDOM % (kmax + 1)))
    ms2=$((RANDOM % (gap + 1)))
    before_restore "$k1" "$W1" "$W2"
    killed_run "$D" "$W2" "$IV" $((after2 > 0 ? k1 + after2 : 0)) "$ms2" "$D/run2.log" --restore
    DESC+=", restored and $WHEN again (newest complete: $AT_KILL)"
    if [[ $ST == 0 ]]; then
      if ! restore_log_ok "$D/run2.log" "$k1"; then fail_run "the first restore (it finished): $WHY" "$D/run2.log"; continue; fi
      if ! outputs_ok "$D"; then fail_run "the first restore finished before the second kill, but $WHY" "$D/run2.log"; continue; fi
      bump "restored ok"
      bump "second kill too late"
      sf_ok "run-$I" "$DESC: the first restore finished first, outputs right"
      [[ ${SF_KEEP:-0} == 1 ]] || rm -rf "$D"
      continue
    elif [[ $ST != 137 ]]; then
      fail_run "the first restore exited $ST on its own" "$D/run2.log"
      continue
    elif ! restore_log_ok "$D/run2.log" "$k1" partial; then
      fail_run "the first restore: $WHY" "$D/run2.log"
      continue
    elif ((AT_KILL < k1 && !JOIN_SKIP)) && ! decided "$D"; then
      # (once the restore decided to commit, its cleanup removes the checkpoints before the
      # commit record: a kill in between leaves only the record, which the next restore finishes;
      # a kill after both went, before the process exited, finds the job complete)
      if outputs_ok "$D"; then
        bump "restored ok"
        bump "second kill too late"
        sf_ok "run-$I" "$DESC: the first restore had completed (its outputs committed, its checkpoints removed) when the kill came, outputs right"
        [[ ${SF_KEEP:-0} == 1 ]] || rm -rf "$D"
        continue
      fi
      fail_run "the first restore lost checkpoint $k1 (newest complete now $AT_KILL)" "$D/run2.log"
      continue
    fi
    bump "killed twice"
    if decided "$D"; then
      bump "killed after the commit"
      DESC+=" after it had decided to commit its outputs"
    fi
    ((AT_KILL > k1)) && ckw=$W2
    last=$W3
  fi
  before_restore "$AT_KILL" "$ckw" "$last"
  if ((DIST)); then
    (cd "$D" && exec setsid timeout -k 5 300 bash "$src/tools/sf-launch" --exec "$B/sf-exec" --insecure-plaintext \
      --restore --checkpoint-dir ck --checkpoint-interval "$IV" "$D/par-w$last.xml") >"$D/launch.log" 2>&1 &
    lpid=$!
    SF_GROUPS+=("$lpid")
    wait "$lpid"
    ST=$?
    # every executor says what it restored, as one sf-exec does (without its [hN] and the absolute DIR)
    sed -e 's/^\[h[0-9]\] //' -e "s|'$D/ck'|'ck'|g" "$D/launch.log" >"$D/restore.log"
  else
    (cd "$D" && timeout -k 5 300 "$B/sf-exec" --restore --checkpoint-dir ck --checkpoint-interval "$IV" "$GD/w$last.xml") \
      >"$D/restore.log" 2>&1
    ST=$?
  fi
  if [[ $ST != 0 ]]; then
    fail_run "the restore at width $last exited $ST$([[ $ST == 124 ]] && echo " (timed out)")" "$D/restore.log"
  elif ! restore_log_ok "$D/restore.log" "$AT_KILL"; then
    fail_run "the restore at width $last: $WHY" "$D/restore.log"
  elif ! outputs_ok "$D"; then
    fail_run "the restore at width $last: $WHY" "$D/restore.log"
  else
    ((${JOIN_SKIP:-0})) && bump "restored past a Join's checkpoint at another parallelism"
    bump "restored ok"
    sf_ok "run-$I" "$DESC: restored, outputs right"
    [[ ${SF_KEEP:-0} == 1 ]] || rm -rf "$D"
  fi
done

total=$(sf_elapsed "$t_start" "$(sf_now)")
echo "kill_restore: counts (seed $seed):"
for k in "killed after checkpoint 1-2" "killed after checkpoint 3-5" "killed after checkpoint 6+" \
  "killed before any checkpoint" "killed after the commit" "killed twice" "on 3 executors" "finished before the kill" \
  "second kill too late" "restored narrower" "restored wider" "restored at the same width" \
  "restored across a clash of Split or Merge names" "graphs with a Join" "graphs with a Lookup" "graphs with event-time windows" \
  "restored past a Join's checkpoint at another parallelism" "restored ok" failed; do
  printf '  %-62s %d\n' "$k" "${count[$k]:-0}"
done
echo "kill_restore: ${count[runs]:-0} runs, $SF_PASSED passed, $SF_FAILED failed, ${total}s (seed $seed)"
if [[ -z ${count[runs]:-} ]]; then
  echo "error: no run was done (SF_KILL_ONLY='$only' names none of runs 1 to $runs)" >&2
  exit 1
fi
# graphs 1, 2 and 3 were chosen with a Join, event-time windows and a Lookup: a run over 3 graphs
# or more has all three
if [[ -z $only ]] && ((${#prepared[@]} >= 3)) && ((${count[graphs with a Join]:-0} == 0 ||
  ${count[graphs with event-time windows]:-0} == 0 || ${count[graphs with a Lookup]:-0} == 0)); then
  echo "kill_restore: FAIL  ${#prepared[@]} graphs without a Join, without event-time windows or without a Lookup among them"
  exit 1
fi
[[ $SF_FAILED == 0 ]]
