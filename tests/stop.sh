#!/usr/bin/env bash
# tests/stop.sh BUILD_DIR SOURCE_DIR
#
# A job stops when asked, from any state, and says why. Every case runs sf-exec (or sf-launch) on a
# small graph written here (Beacon or FileSource -> stateless Functor -> FileSink), at width 1 and
# at width 2 (sf-xform -w 2: the Functor runs in two channels), sends it a signal and requires:
# exit within a time limit (a hang is a failure, never a stuck suite), the exact error line, and no
# file left in the output directory, temporary or not. Cases:
#   sink:  the FileSink writes into a FIFO whose reader holds it open but never reads (the pipe is
#          full, the sink's write would block forever): SIGINT and SIGHUP stop the job (SIGTERM
#          would drain it, and a stalled sink never drains);
#   sink-open: the FIFO has no reader at all (opening it waits): SIGINT stops the job;
#   sink-fifo: a reader that reads slowly gets exactly the bytes the sink writes to a file;
#   source: a FileSource reads a FIFO whose writer wrote 2 MiB of rows, then idles: SIGINT
#          and SIGHUP stop the job; source-open: no writer ever opens the FIFO: SIGINT stops it;
#   drain: the same, with SIGTERM: the job drains, every row written reaches out/x.csv, exit 0;
#   source-live: rows written to a FIFO are read as they come (the stats show them while the
#          writer holds the FIFO open), and the job ends with exit 0 when the writer closes it;
#   threads: SIGUSR1, SIGINT or SIGHUP sent (sf-tgkill) to one thread of a width-3 executor whose
#          threads mostly wait on full queues, each thread in turn: the job stops (a handler that
#          ran on a thread holding a queue's lock used to deadlock it);
#   signal: each signal that ends a process by default and is sent to ask for an end (SIGHUP,
#          SIGQUIT, SIGUSR1, SIGALRM, ...) stops the job like SIGINT: no temporary file is left;
#   signal-TERM: SIGTERM drains the same job instead: exit 0, nothing printed, and out/x.csv
#          holds the rows from id 0 on without a gap;
#   ignored: SIGHUP ignored when sf-exec started (nohup) stays ignored; SIGINT still stops it;
#   sigpipe: a FIFO's reader that goes away makes the sink fail with EPIPE, named;
#   stats-json: --stats-json to a path that cannot be written (missing directory, a directory)
#          fails the job at once (its Beacon is unbounded), exit 1, naming the path;
#   launch-usage: sf-launch --batch 0 and other bad numbers are usage errors (exit 2);
#   launch: Ctrl-C (SIGINT to sf-launch's process group) while h0's sink waits on a stalled FIFO:
#          sf-launch exits 130 within 8 s and no executor is left;
#   launch-kill: executors that ignore SIGINT are killed SF_LAUNCH_KILL_AFTER (1) s later;
#   launch-drain: SIGTERM to sf-launch drains both executors: exit 0, the rows from id 0 on
#          without a gap, each once; launch-drain-abort: a drain has no time limit (executors that
#          ignore SIGTERM still run 2 s later, KILL_AFTER 1), and Ctrl-C then aborts it: exit 130.
# The exit status of a stopped executor is 128 + the signal's number (130 for SIGINT); SIGTERM
# drains (docs/language.md, "Stopping: drain and abort"): the job ends as if its sources' input
# had ended, exit 0.
# Every case prints one line, OK or FAIL with what was expected; failures keep the work directory.
#
# sf-exec is started through `env --default-signal`: a background job of a non-interactive shell
# starts with SIGINT ignored, and an executor keeps a signal that was ignored when it started.
# Environment: SF_KEEP=1 keeps the work directory.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec sf-tgkill || exit 1
B=$build/bin
launch=$src/tools/sf-launch

trap sf_stop_all EXIT
trap 'exit 130' INT TERM

sf_mktemp work sf-stop || exit 1

SF_WORK=$work
SF_CASE_WIDTH=14
t_start=$(sf_now)

# ---- graphs ----

# make_graph DIR WIDTH SOURCE SINK_FILE: DIR/g.xml, a source, a Functor 'calc', a FileSink writing
# SINK_FILE (relative to DIR); SOURCE is `beacon` (unbounded, as fast as it goes), `beacon:COUNT`,
# `beacon:COUNT:RATE` (tuples per second) or `file:PATH` (a FileSource). WIDTH 2 rewrites it with
# sf-xform -w 2.
make_graph() {
  local dir=$1 width=$2 source=$3 sink=$4 src_xml
  mkdir -p "$dir/out"
  case $source in
    beacon*)
      local count rate="" spec=${source#beacon}
      spec=${spec#:}
      count=${spec%%:*}
      [[ $spec == *:* ]] && rate="<param name=\"rate\">${spec#*:}</param>"
      src_xml="<operator name=\"src\" kind=\"Beacon\">
    <output stream=\"Ticks\" schema=\"T\"/>
    <param name=\"count\">${count:-0}</param>$rate
    <set attr=\"id\">seq</set>
    <set attr=\"v\">rand(seq) % 1000</set>
  </operator>" ;;
    file:*)
      src_xml="<operator name=\"src\" kind=\"FileSource\">
    <output stream=\"Ticks\" schema=\"T\"/>
    <param name=\"file\">${source#file:}</param>
  </operator>" ;;
  esac
  cat >"$dir/seq.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="stop">
  <schema name="T">
    <attr name="id" type="int"/>
    <attr name="v"  type="int"/>
  </schema>
  $src_xml
  <operator name="calc" kind="Functor">
    <input stream="Ticks"/>
    <output stream="Calced" schema="T"/>
    <set attr="v">v * 2 + 1</set>
  </operator>
  <operator name="out" kind="FileSink">
    <input stream="Calced"/>
    <param name="file">$sink</param>
  </operator>
</graph>
EOF
  if [[ $width == 1 ]]; then
    cp "$dir/seq.xml" "$dir/g.xml"
  elif ! "$B/sf-xform" -w "$width" "$dir/seq.xml" -o "$dir/g.xml" >"$dir/xform.log" 2>&1; then
    echo "error: sf-xform failed on the test graph:" >&2
    cat "$dir/xform.log" >&2
    exit 1
  fi
}

# ---- processes ----

# start_exec DIR [ARGS...]: starts sf-exec ARGS DIR/g.xml in DIR (log DIR/exec.log); sets PID.
start_exec() {
  local dir=$1
  shift
  (cd "$dir" && exec env --default-signal=INT,QUIT "$B/sf-exec" "$@" "$dir/g.xml") >"$dir/exec.log" 2>&1 &
  PID=$!
  wait_caught "$PID"
}

# wait_caught PID: waits (at most 10 s) until PID catches SIGINT, that is until sf-exec installed its
# handlers, or ends. A signal sent before that kills it by default while it still loads the graph;
# on a busy machine "sleep 0.5" was not always enough (exit 130 and no message).
wait_caught() {
  local pid=$1 i mask
  for ((i = 0; i < 200; i++)); do
    mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
    [[ -z $mask ]] && return 0 # it ended
    (((16#$mask >> 1) & 1)) && return 0
    sleep 0.05
  done
}

# wait_exit PID SECONDS: waits for PID (a child of this shell) to end; sets ST to its exit status,
# or to "timeout" (and kills it). Not in a $(...) subshell: only this shell can wait for its children.
wait_exit() {
  local pid=$1 limit=$2 end
  end=$(awk -v n="$(sf_now)" -v l="$limit" 'BEGIN { printf "%.3f", n + l }')
  while kill -0 "$pid" 2>/dev/null; do
    if awk -v n="$(sf_now)" -v e="$end" 'BEGIN { exit !(n > e) }'; then
      kill -KILL "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      ST=timeout
      return
    fi
    sleep 0.05
  done
  wait "$pid" 2>/dev/null
  ST=$?
}

# out_files DIR: the files in DIR/out, hidden ones included, one line (empty when none)
out_files() { find "$1/out" -mindepth 1 -printf '%P ' 2>/dev/null; }

# check_stopped CASE DIR STATUS MESSAGE [WHAT]: the executor of DIR exited with STATUS, its last
# line is MESSAGE, and DIR/out is empty.
check_stopped() {
  local c=$1 dir=$2 want=$3 msg=$4 what=${5:-}
  local last
  last=$(tail -n 1 "$dir/exec.log")
  if [[ $ST == timeout ]]; then
    sf_bad "$c" "$what: still running when its time ran out" "$dir/exec.log"
  elif [[ $ST != "$want" ]]; then
    sf_bad "$c" "$what: exit status $ST, expected $want" "$dir/exec.log"
  elif [[ $last != "$msg" ]]; then
    sf_bad "$c" "$what: last line '$last', expected '$msg'" "$dir/exec.log"
  elif [[ -n $(out_files "$dir") ]]; then
    sf_bad "$c" "$what: files left in out/: $(out_files "$dir")" "$dir/exec.log"
  else
    sf_ok "$c" "$what: exit $ST, '$msg'"
  fi
}

# ---- sink: a FileSink blocked on a FIFO nobody reads ----
for width in 1 2; do
  for sig in INT HUP; do
    d=$work/sink-w$width-$sig
    make_graph "$d" "$width" beacon out.fifo
    mkfifo "$d/out.fifo"
    sleep 60 <"$d/out.fifo" & # opens the FIFO for reading, never reads
    reader=$!
    start_exec "$d"
    sleep 1 # the pipe fills in a few milliseconds; the sink then waits in write
    kill -"$sig" "$PID"
    wait_exit "$PID" 5
    kill "$reader" 2>/dev/null
    wait "$reader" 2>/dev/null
    rm -f "$d/out.fifo"
    check_stopped "sink-w$width" "$d" $((128 + $(kill -l $sig))) "sf-exec: error: interrupted by SIG$sig" "SIG$sig while the sink waits for a reader"
  done
done

# ---- sink-open: a FileSink waiting for a FIFO's reader to open it ----
for width in 1 2; do
  d=$work/sink-open-w$width
  make_graph "$d" "$width" beacon out.fifo
  mkfifo "$d/out.fifo"
  start_exec "$d"
  sleep 0.5
  kill -INT "$PID"
  wait_exit "$PID" 5
  rm -f "$d/out.fifo"
  check_stopped "sink-open-w$width" "$d" 130 "sf-exec: error: interrupted by SIGINT" "SIGINT while the sink waits for a reader to open the FIFO"
done

# ---- sink-fifo: what a FIFO's reader gets is the file a FileSink writes, byte for byte ----
for width in 1 2; do
  d=$work/sink-fifo-w$width
  make_graph "$d" "$width" beacon:300000 out/want.csv
  if ! sf_exec_in "$build" "$d" "$d/g.xml" "$d/want.log"; then
    sf_bad "sink-fifo-w$width" "the run writing a file failed" "$d/want.log"
    continue
  fi
  sed -i 's|out/want.csv|out.fifo|' "$d/g.xml"
  mkfifo "$d/out.fifo"
  # the reader reads slowly at first: the sink finds the pipe full and must wait for room
  (sleep 0.5; exec cat) <"$d/out.fifo" >"$d/got.csv" &
  reader=$!
  start_exec "$d"
  wait_exit "$PID" 60
  wait "$reader"
  if [[ $ST != 0 ]]; then
    sf_bad "sink-fifo-w$width" "writing into the FIFO: exit status $ST, expected 0" "$d/exec.log"
  elif ! cmp -s "$d/out/want.csv" "$d/got.csv"; then
    sf_bad "sink-fifo-w$width" "the FIFO's reader got other bytes than the file: $(cmp "$d/out/want.csv" "$d/got.csv" 2>&1)"
  else
    sf_ok "sink-fifo-w$width" "the FIFO's reader got the file's $(wc -c <"$d/got.csv") bytes"
  fi
done

# ---- source: a FileSource reading a FIFO whose writer is idle ----
for width in 1 2; do
  for sig in INT HUP TERM; do
    d=$work/source-w$width-$sig
    make_graph "$d" "$width" file:in.fifo out/x.csv
    mkfifo "$d/in.fifo"
    # more than 1 MiB, then nothing: the source has read its header and waits in the middle
    (printf 'id,v\n'; seq 1 200000 | sed 's/.*/&,&/'; exec sleep 60) >"$d/in.fifo" &
    writer=$!
    start_exec "$d"
    sleep 1
    kill -"$sig" "$PID"
    wait_exit "$PID" 5
    kill "$writer" 2>/dev/null
    wait "$writer" 2>/dev/null
    rm -f "$d/in.fifo"
    if [[ $sig != TERM ]]; then
      check_stopped "source-w$width" "$d" $((128 + $(kill -l $sig))) "sf-exec: error: interrupted by SIG$sig" "SIG$sig while the source waits for its writer"
    elif [[ $ST != 0 ]]; then
      sf_bad "drain-w$width" "SIGTERM while the source waits: exit status $ST, expected 0" "$d/exec.log"
    elif [[ -s $d/exec.log ]]; then
      sf_bad "drain-w$width" "SIGTERM: sf-exec printed something" "$d/exec.log"
    elif ! cmp -s "$d/out/x.csv" <(printf 'id,v\n'; seq 1 200000 | awk '{ print $1 "," $1 * 2 + 1 }'); then
      sf_bad "drain-w$width" "SIGTERM: out/x.csv is not the 200000 rows written" "$d/exec.log"
    else
      sf_ok "drain-w$width" "SIGTERM while the source waits: every row written is in out/x.csv, exit 0"
    fi
  done
done

# ---- source-open: a FileSource reading a FIFO that no writer opened ----
for width in 1 2; do
  d=$work/source-open-w$width
  make_graph "$d" "$width" file:in.fifo out/x.csv
  mkfifo "$d/in.fifo"
  start_exec "$d"
  sleep 0.5
  kill -INT "$PID"
  wait_exit "$PID" 5
  rm -f "$d/in.fifo"
  check_stopped "source-open-w$width" "$d" 130 "sf-exec: error: interrupted by SIGINT" "SIGINT while the source waits for a writer to open the FIFO"
done

# ---- source-live: rows written to a FIFO flow at once, not once 1 MiB has come ----
for width in 1 2; do
  d=$work/source-live-w$width
  make_graph "$d" "$width" file:in.fifo out/x.csv
  mkfifo "$d/in.fifo"
  start_exec "$d" --stats-interval 0.1
  (printf 'id,v\n1,10\n2,20\n3,30\n'; exec sleep 60) >"$d/in.fifo" & # then holds the FIFO open
  writer=$!
  seen=""
  for ((i = 0; i < 50; i++)); do # 5 s
    if grep -qE '^  src +FileSource +in +0  out +3  ' "$d/exec.log"; then
      seen=yes
      break
    fi
    sleep 0.1
  done
  kill "$writer" 2>/dev/null # the end of the input
  wait "$writer" 2>/dev/null
  wait_exit "$PID" 5
  rm -f "$d/in.fifo"
  want=$'id,v\n1,21\n2,41\n3,61'
  if [[ -z $seen ]]; then
    sf_bad "source-live-w$width" "the source had not read the 3 rows 5 s after they were written" "$d/exec.log"
  elif [[ $ST != 0 ]]; then
    sf_bad "source-live-w$width" "exit status $ST after the writer closed, expected 0" "$d/exec.log"
  elif [[ $(cat "$d/out/x.csv") != "$want" ]]; then
    sf_bad "source-live-w$width" "out/x.csv is not the 3 rows" "$d/out/x.csv"
  else
    sf_ok "source-live-w$width" "3 rows read while the writer held the FIFO open, then exit 0 at its end"
  fi
done

# ---- threads: a stop signal sent to one thread of the executor, each thread in turn ----
# Width 3, queues of one batch of 8 tuples: the threads are mostly waiting for room or for input,
# holding a group's lock when they look whether the job is stopping.
d=$work/threads
make_graph "$d" 3 beacon out/x.csv
sigs=(USR1 INT HUP)
for round in 0 1 2; do
  sig=${sigs[round]}
  for k in 0 1 2 3 4 5 6 7; do
    rm -rf "$d/out" && mkdir "$d/out"
    start_exec "$d" --queue 1 --batch 8
    sleep 0.3
    tids=($(ls "/proc/$PID/task" 2>/dev/null | sort -n))
    if ((k >= ${#tids[@]})); then
      kill -KILL "$PID" 2>/dev/null
      wait "$PID" 2>/dev/null
      continue
    fi
    name=$(cat "/proc/$PID/task/${tids[k]}/comm" 2>/dev/null)
    if [[ ${SF_SANITIZE:-} == *thread* && $k != 0 && $name == sf-exec ]]; then
      # ThreadSanitizer's own background thread (the executor names each of its threads 'sf ...'):
      # TSan blocks the signals there, the kernel leaves one sent to it pending for good
      echo "threads: SIG$sig to thread $k of ${#tids[@]} ('$name'): skipped (ThreadSanitizer's thread)"
      kill -KILL "$PID" 2>/dev/null
      wait "$PID" 2>/dev/null
      continue
    fi
    "$B/sf-tgkill" "$(kill -l "$sig")" "$PID" "${tids[k]}"
    wait_exit "$PID" 5
    check_stopped "threads" "$d" $((128 + $(kill -l $sig))) "sf-exec: error: interrupted by SIG$sig" "SIG$sig to thread $k of ${#tids[@]} ('$name')"
  done
done

# ---- signals: every signal that ends a process by default and asks for an end stops a job cleanly ----
for sig in HUP INT QUIT USR1 USR2 ALRM VTALRM PROF XCPU IO PWR; do
  d=$work/signal-$sig
  make_graph "$d" 2 beacon:0:20000 out/x.csv
  start_exec "$d"
  for ((i = 0; i < 50; i++)); do # the sink's temporary file is there: data flows
    [[ -n $(out_files "$d") ]] && break
    sleep 0.1
  done
  sleep 0.2
  kill -"$sig" "$PID"
  wait_exit "$PID" 5
  check_stopped "signal" "$d" $((128 + $(kill -l $sig))) "sf-exec: error: interrupted by SIG$sig" "SIG$sig while the sink writes its temporary file"
done

# ---- signal-TERM: SIGTERM drains the same job ----
d=$work/signal-TERM
make_graph "$d" 2 beacon:0:20000 out/x.csv
start_exec "$d"
for ((i = 0; i < 50; i++)); do
  [[ -n $(out_files "$d") ]] && break
  sleep 0.1
done
sleep 0.2
kill -TERM "$PID"
wait_exit "$PID" 5
n=$(($(wc -l <"$d/out/x.csv" 2>/dev/null || echo 1) - 1))
if [[ $ST != 0 ]]; then
  sf_bad signal-TERM "SIGTERM: exit status $ST, expected 0 (a drain)" "$d/exec.log"
elif [[ -s $d/exec.log ]]; then
  sf_bad signal-TERM "SIGTERM: sf-exec printed something" "$d/exec.log"
elif ((n < 1)) || ! awk -F, 'NR > 1 && $1 != NR - 2 { exit 1 }' "$d/out/x.csv"; then
  sf_bad signal-TERM "SIGTERM: out/x.csv does not hold ids 0, 1, 2, ... without a gap" "$d/out/x.csv"
else
  sf_ok signal-TERM "SIGTERM drains: exit 0, $n rows from id 0 without a gap"
fi

# ---- ignored: a signal ignored when the executor started (nohup) stays ignored ----
d=$work/ignored
make_graph "$d" 2 beacon:0:20000 out/x.csv
(cd "$d" && exec env --ignore-signal=HUP --default-signal=INT "$B/sf-exec" "$d/g.xml") >"$d/exec.log" 2>&1 &
PID=$!
sleep 0.5
kill -HUP "$PID"
sleep 0.5
if ! kill -0 "$PID" 2>/dev/null; then
  wait "$PID"
  sf_bad ignored "sf-exec started with SIGHUP ignored ended on SIGHUP (status $?)" "$d/exec.log"
else
  kill -INT "$PID"
  wait_exit "$PID" 5
  check_stopped "ignored" "$d" 130 "sf-exec: error: interrupted by SIGINT" "SIGHUP ignored from the start, then SIGINT"
fi

# ---- sigpipe: a FIFO's reader that goes away is a write error of the sink, not a death ----
d=$work/sigpipe
make_graph "$d" 1 beacon out.fifo
mkfifo "$d/out.fifo"
head -c 100000 <"$d/out.fifo" >/dev/null &
reader=$!
start_exec "$d"
wait_exit "$PID" 10
wait "$reader"
rm -f "$d/out.fifo"
check_stopped "sigpipe" "$d" 1 "sf-exec: error: operator 'out': cannot write 'out.fifo': Broken pipe" "the FIFO's reader exits after 100 kB"

# ---- stats-json: a file --stats-json cannot write fails the job before it runs ----
for target in missing/s.json out; do
  d=$work/stats-json-${target%%/*}
  make_graph "$d" 1 beacon out/x.csv # unbounded: the job ends only if it never starts
  start_exec "$d" --stats-json "$target"
  wait_exit "$PID" 5
  case $target in
    missing/*) why="No such file or directory" ;;
    *) why="Is a directory" ;;
  esac
  check_stopped "stats-json" "$d" 1 "sf-exec: error: cannot write '$target': $why" "--stats-json $target"
done

# ---- launch-usage: sf-launch refuses what sf-exec would refuse, as a usage error ----
for args in "--batch 0" "--batch 65537" "--connect-timeout 1x"; do
  read -r opt val <<<"$args"
  case $opt in
    --batch) range="1 to 65536" ;;
    *) range="1 to 3600000" ;;
  esac
  want="sf-launch: $opt must be an integer from $range, got '$val'"
  got=$(bash "$launch" --exec "$B/sf-exec" "$opt" "$val" "$work/none.xml" 2>&1)
  st=$?
  if [[ $st != 2 ]]; then
    sf_bad launch-usage "sf-launch $args: exit status $st, expected 2"
  elif [[ $got != "$want"$'\n'"Try 'sf-launch --help' for more information." ]]; then
    sf_bad launch-usage "sf-launch $args printed '$got', expected '$want' and the help hint"
  else
    sf_ok launch-usage "sf-launch $args: exit 2, '$want'"
  fi
done

# ---- launch: Ctrl-C stops sf-launch and its executors while a sink waits on a stalled FIFO ----
# make_hosts_graph DIR: DIR/g.xml: an unbounded Beacon on h0, a Functor on h1, back to a FileSink on
# h0 writing out.fifo (two loopback ports)
make_hosts_graph() {
  local dir=$1
  mkdir -p "$dir/out"
  sf_hosts_graph "$dir/seq.xml" stop 0 "" out.fifo
  sf_next_ports 2 || exit 1
  "$B/sf-xform" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$dir/seq.xml" -o "$dir/g.xml" >"$dir/xform.log" 2>&1 || {
    echo "error: sf-xform failed on the hosts graph:" >&2
    cat "$dir/xform.log" >&2
    exit 1
  }
}
# start_launch DIR [ENV=VALUE...]: sf-launch --exec $EXEC on DIR/g.xml in a process group of its
# own, like a terminal's foreground job (SIGINT not ignored); log DIR/launch.log; sets PID.
start_launch() {
  local dir=$1
  shift
  (cd "$dir" && exec setsid env --default-signal=INT "$@" bash "$launch" --exec "$EXEC" --workdir "$dir" "$dir/g.xml") \
    >"$dir/launch.log" 2>&1 &
  PID=$!
  SF_GROUPS+=("$PID")
}

d=$work/launch
make_hosts_graph "$d"
mkfifo "$d/out.fifo"
sleep 60 <"$d/out.fifo" & # opens the FIFO for reading, never reads
reader=$!
EXEC=$B/sf-exec
start_launch "$d"
for ((i = 0; i < 100; i++)); do # both executors run
  [[ $(pgrep -f -- "sf-exec --host h[01] .*$d/g.xml" | wc -l) == 2 ]] && break
  sleep 0.1
done
sleep 1 # the pipe is full, h0's sink waits
kill -INT -- "-$PID" # Ctrl-C: the terminal signals the whole foreground process group
wait_exit "$PID" 8
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
left=$(pgrep -f -- "sf-exec --host .*$d/g.xml" | tr '\n' ' ')
last=$(tail -n 1 "$d/launch.log")
if [[ $ST == timeout ]]; then
  sf_bad launch "sf-launch still ran 8 s after Ctrl-C" "$d/launch.log"
elif [[ $ST != 130 ]]; then
  sf_bad launch "sf-launch exited $ST after Ctrl-C, expected 130" "$d/launch.log"
elif [[ $last != "sf-launch: interrupted; stopped every executor" ]]; then
  sf_bad launch "last line '$last'" "$d/launch.log"
elif [[ -n $left ]]; then
  sf_bad launch "executors still running after sf-launch exited: $left" "$d/launch.log"
elif [[ -n $(out_files "$d") ]]; then
  sf_bad launch "files left in out/: $(out_files "$d")" "$d/launch.log"
else
  sf_ok launch "Ctrl-C while h0's sink waits on a stalled FIFO: exit 130, '$last'"
fi
rm -f "$d/out.fifo"

# ---- launch-kill: an executor that ignores SIGTERM is killed SF_LAUNCH_KILL_AFTER s after it ----
d=$work/launch-kill
make_hosts_graph "$d"
cat >"$d/stubborn" <<EOF
#!/usr/bin/env bash
# an executor that never stops on SIGINT or SIGTERM (it answers --list-hosts like sf-exec)
[[ \$1 == --list-hosts ]] && exec "$B/sf-exec" "\$@"
trap '' TERM INT
echo "stubborn \$*"
while :; do sleep 0.2; done
EOF
chmod +x "$d/stubborn"
EXEC=$d/stubborn
start_launch "$d" SF_LAUNCH_KILL_AFTER=1
for ((i = 0; i < 100; i++)); do # both executors run
  [[ $(grep -c '^\[h[01]\] stubborn' "$d/launch.log") == 2 ]] && break
  sleep 0.1
done
kill -INT -- "-$PID"
wait_exit "$PID" 6
want="sf-launch: host 'h0' did not stop within 1 s of SIGINT; killed it
sf-launch: host 'h1' did not stop within 1 s of SIGINT; killed it
sf-launch: interrupted; stopped every executor"
got=$(grep '^sf-launch:' "$d/launch.log" | LC_ALL=C sort)
left=$(pgrep -f -- "stubborn --host" | tr '\n' ' ')
if [[ $ST == timeout ]]; then
  sf_bad launch-kill "sf-launch still ran 6 s after Ctrl-C (kill after 1 s)" "$d/launch.log"
elif [[ $ST != 130 ]]; then
  sf_bad launch-kill "sf-launch exited $ST, expected 130" "$d/launch.log"
elif [[ $got != "$(LC_ALL=C sort <<<"$want")" ]]; then
  sf_bad launch-kill "sf-launch's lines are not the expected ones" "$d/launch.log"
elif [[ -n $left ]]; then
  sf_bad launch-kill "executors still running: $left" "$d/launch.log"
else
  sf_ok launch-kill "executors that ignore SIGINT killed 1 s after it; exit 130"
fi

# ---- launch-drain: SIGTERM to sf-launch drains every executor ----
d=$work/launch-drain
mkdir -p "$d/out"
sf_hosts_graph "$d/seq.xml" drain 0 5000 out/x.csv
sf_next_ports 2 || exit 1
"$B/sf-xform" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$d/seq.xml" -o "$d/g.xml" >"$d/xform.log" 2>&1 || exit 1
EXEC=$B/sf-exec
start_launch "$d"
for ((i = 0; i < 100; i++)); do # rows flow: the sink's temporary file is there
  [[ -n $(out_files "$d") ]] && break
  sleep 0.1
done
sleep 1
kill -TERM "$PID"
wait_exit "$PID" 10
left=$(pgrep -f -- "sf-exec --host .*$d/g.xml" | tr '\n' ' ')
n=$(($(wc -l <"$d/out/x.csv" 2>/dev/null || echo 1) - 1))
if [[ $ST != 0 ]]; then
  sf_bad launch-drain "sf-launch exited $ST after SIGTERM, expected 0" "$d/launch.log"
elif [[ -n $left ]]; then
  sf_bad launch-drain "executors still running after sf-launch exited: $left" "$d/launch.log"
elif ((n < 1)) || ! awk -F, 'NR > 1 && $1 != NR - 2 { exit 1 }' "$d/out/x.csv"; then
  sf_bad launch-drain "out/x.csv does not hold ids 0, 1, 2, ... without a gap" "$d/launch.log"
else
  sf_ok launch-drain "SIGTERM drains both executors: exit 0, $n rows from id 0 without a gap"
fi

# ---- launch-drain-abort: no time limit on a drain; Ctrl-C aborts it ----
d=$work/launch-drain-abort
make_hosts_graph "$d"
cp "$work/launch-kill/stubborn" "$d/stubborn"
EXEC=$d/stubborn
start_launch "$d" SF_LAUNCH_KILL_AFTER=1
for ((i = 0; i < 100; i++)); do
  [[ $(grep -c '^\[h[01]\] stubborn' "$d/launch.log") == 2 ]] && break
  sleep 0.1
done
kill -TERM "$PID"
sleep 2
if ! kill -0 "$PID" 2>/dev/null; then
  wait "$PID"
  sf_bad launch-drain-abort "sf-launch ended 2 s into a drain (status $?): a drain has no time limit" "$d/launch.log"
else
  kill -INT -- "-$PID"
  wait_exit "$PID" 6
  left=$(pgrep -f -- "$d/stubborn --host" | tr '\n' ' ')
  if [[ $ST != 130 ]]; then
    sf_bad launch-drain-abort "Ctrl-C during a drain: exit $ST, expected 130" "$d/launch.log"
  elif [[ -n $left ]]; then
    sf_bad launch-drain-abort "executors still running: $left" "$d/launch.log"
  else
    sf_ok launch-drain-abort "a drain waits (2 s, no kill); Ctrl-C then aborts it: exit 130"
  fi
fi

echo "stop: $SF_PASSED passed, $SF_FAILED failed in $(sf_elapsed "$t_start" "$(sf_now)") s"
[[ $SF_FAILED == 0 ]]
