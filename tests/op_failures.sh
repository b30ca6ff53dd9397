#!/usr/bin/env bash
# tests/op_failures.sh BUILD_DIR SOURCE_DIR
#
# An operator that takes the process down fails the job: a non-zero exit (never 0 for a job that
# did not complete), one line of sf-exec's naming the operator, no file left in out/ (the sink's
# temporary file removed), and under sf-launch the host of that operator named. The graphs: a
# Beacon `src` feeding a Custom operator `quit` (a test operator of tests/ops/failing.c, failing
# at its 5000th tuple) feeding a FileSink `out` writing out/x.csv. Cases:
#   exit:   sf_exit_at calls exit(0): exit 1, "sf-exec: error: operator 'quit': called exit(0)
#           before the job completed";
#   segv, abort: sf_segv_at (a store through a null pointer), sf_abort_at (abort()): the process
#           still ends by that signal (exit 139, 134), after "sf-exec: error: operator 'quit':
#           crashed with SIGSEGV" (SIGABRT);
#   fork-exit: sf_fork_exit_at forks a child that calls exit(0): the child neither speaks for the
#           job nor removes its files; the job completes (exit 0, nothing printed, every tuple);
#   keep-twice, keep-foreign, keep-emit: sf_keep_misuse (tests/ops/keep.c) releases a kept tuple
#           twice, releases the input tuple it never kept, emits a kept tuple it released: exit 1,
#           "sf-exec: error: operator 'quit': sf_tuple_release: the tuple was already released"
#           (and the like), sf-exec never crashing;
#   spin:   sf_spin_at loops forever in process; SIGINT (sf-exec --stop-grace 1): exit 130 once
#           the grace is over, "sf-exec: error: interrupted by SIGINT; operator 'quit' did not
#           return within 1 s: stopped", no file in out/;
#   spin-open: the same loop in open (the main thread): SIGINT, then SIGINT every 0.2 s until it
#           ends: the same line and status (a signal after the grace ends it from the handler);
#   launch-exit, launch-segv: the same operator on h1 of two executors (src and out on h0) under
#           tools/sf-launch: exit 1 within 20 s, the summary names host 'h1' with that line, no file
#           in out/, no executor left;
#   launch-blame: stub executors (tools/sf-launch --exec): h0 fails first, naming a broken edge
#           from host 'h1', and h1 then fails with an error naming no other host: sf-launch names
#           h1, whichever it reaped first;
#   launch-late: a stub h1 exits 1 while a child of it still holds its output and writes the error
#           line 0.5 s later: sf-launch's reason for h1 is that line;
#   launch-both: stub executors h0 and h1 both fail at the same moment, ten times: each time the
#           summary gives their error lines as reasons (not "exit status 1");
#   launch-spin: sf_spin_at on h1, SIGINT to sf-launch: h1 names the operator once its default
#           grace (5 s) is over and exits 130, before sf-launch would kill it (10 s): sf-launch exits
#           130 within 9 s, no "killed it" line, no file in out/, no executor left.
#   budget: a Dedup of 1000000 keys with sf-exec --max-state-memory 1M fails when its table of
#           12288 keys would double: exit 1, "sf-exec: error: operator 'd': out of memory (keyed
#           state over --max-state-memory 1048576 bytes; this operator holds 12288 keys)", no file
#           in out/; budget-ok: 20000 keys within 1G complete; budget-usage: "12X" is a usage error
#           (exit 2, exact message); budget-launch: sf-launch --max-state-memory 1M passes it on, and
#           the Dedup on h1 fails the same way, h1 named;
#   oom:    no budget, but ulimit -v at the executor's measured size plus 224 MiB: the table's
#           growth to 8 Mi buckets cannot be allocated: exit 1, "sf-exec: error: operator 'd': out
#           of memory (8388608 buckets)", no file in out/ (skipped under sanitizers).
# sf-launch runs with TMPDIR in the work directory (its logs there, out of other jobs' reach).
# Sanitizers install their own handlers for the fatal signals: segv and abort are skipped under
# them. ThreadSanitizer defers a signal until its thread next calls into the C library, which a
# thread spinning in a loop never does: spin-open (the main thread alone spins) is skipped there. Every case prints one line, OK or FAIL with what was expected; failures keep the work
# directory. Environment: SF_KEEP=1 keeps the work directory.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec || exit 1
B=$build/bin
launch=$src/tools/sf-launch

trap sf_stop_all EXIT
ulimit -c 0 # the crashes of the cases dump no core
trap 'exit 130' INT TERM

sf_mktemp work sf-opfail || exit 1

SF_WORK=$work
SF_CASE_WIDTH=13
t_start=$(sf_now)

# make_graph FILE SYMBOL [H0 H1]: FILE, src -> quit (SYMBOL of libsf_test_ops.so) -> out; with H0
# and H1, src and out are placed on host H0, quit on H1 (host attributes, for sf-xform --hosts).
# quit gets the parameters in $OP_PARAMS too (XML); with SINK_FIRST=1 out is declared (so opened)
# before quit.
OP_PARAMS=""
SINK_FIRST=0
make_graph() {
  local file=$1 sym=$2 h0=${3:-} h1=${4:-} at0="" at1="" sink
  [[ -n $h0 ]] && at0=" host=\"$h0\"" && at1=" host=\"$h1\""
  mkdir -p "$(dirname "$file")/out"
  sink="<operator name=\"out\" kind=\"FileSink\"$at0>
    <input stream=\"Out\"/>
    <param name=\"file\">out/x.csv</param>
  </operator>"
  cat >"$file" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="opfail">
  <schema name="T">
    <attr name="id" type="int"/>
    <attr name="v"  type="int"/>
  </schema>
  <operator name="src" kind="Beacon"$at0>
    <output stream="Ticks" schema="T"/>
    <param name="count">0</param>
    <set attr="id">seq</set>
    <set attr="v">seq % 7</set>
  </operator>
  $( ((SINK_FIRST)) && echo "$sink")
  <operator name="quit" kind="Custom"$at1>
    <input stream="Ticks"/>
    <output stream="Out" schema="T"/>
    <param name="at">5000</param>$OP_PARAMS
    <library path="libsf_test_ops.so" symbol="$sym"/>
  </operator>
  $( ((SINK_FIRST)) || echo "$sink")
</graph>
EOF
}

# out_files DIR: the files in DIR/out, hidden ones included, one line (empty when none)
out_files() { find "$1/out" -mindepth 1 -printf '%P ' 2>/dev/null; }

# wait_exit PID SECONDS: waits for PID (a child of this shell) to end; sets ST to its exit status,
# or to "timeout" (and kills it). Not in a $(...) subshell: only this shell can wait for its children.
wait_exit() {
  local pid=$1 limit=$2 end
  end=$(awk -v n="$(sf_now)" -v l="$limit" 'BEGIN { printf "%.3f", n + l }')
  while kill -0 "$pid" 2>/dev/null; do
    if awk -v n="$(sf_now)" -v e="$end" 'BEGIN { exit !(n > e) }'; then
      kill -KILL -- "-$pid" 2>/dev/null
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

# check CASE DIR LOG STATUS TEXT WHAT: the run exited with STATUS, LOG is exactly TEXT, and DIR/out
# is empty.
check() {
  local c=$1 dir=$2 log=$3 want=$4 text=$5 what=$6
  if [[ $ST == timeout ]]; then
    sf_bad "$c" "$what: still running when its time ran out" "$log"
  elif [[ $ST != "$want" ]]; then
    sf_bad "$c" "$what: exit status $ST, expected $want" "$log"
  elif [[ $(cat "$log") != "$text" ]]; then
    sf_bad "$c" "$what: its output is not exactly '$text'" "$log"
  elif [[ -n $(out_files "$dir") ]]; then
    sf_bad "$c" "$what: files left in out/: $(out_files "$dir")" "$log"
  else
    sf_ok "$c" "$what: exit $ST, '$text'"
  fi
}

# run_exec CASE SYMBOL STATUS TEXT WHAT [ARGS...]: sf-exec ARGS on the one-process graph of SYMBOL.
run_exec() {
  local c=$1 sym=$2 want=$3 text=$4 what=$5
  shift 5
  local d=$work/$c
  make_graph "$d/g.xml" "$sym"
  (cd "$d" && exec timeout -k 5 60 "$B/sf-exec" "$@" g.xml) >"$d/exec.log" 2>&1 &
  wait_exit $! 70
  check "$c" "$d" "$d/exec.log" "$want" "$text" "$what"
}

# ---- one process ----
run_exec exit sf_exit_at 1 "sf-exec: error: operator 'quit': called exit(0) before the job completed" \
  "exit(0) in process"
if [[ -n ${SF_SANITIZE:-} ]]; then
  echo "segv, abort: skipped (sanitizers handle SIGSEGV and SIGABRT themselves)"
else
  run_exec segv sf_segv_at 139 "sf-exec: error: operator 'quit': crashed with SIGSEGV" "a null pointer's store"
  run_exec abort sf_abort_at 134 "sf-exec: error: operator 'quit': crashed with SIGABRT" "abort() in process"
fi

# fork-exit: a child the operator forks calls exit(0): that child's end is no failure of the job,
# which completes (exit 0, nothing printed, every tuple in out/x.csv)
d=$work/fork-exit
make_graph "$d/g.xml" sf_fork_exit_at
sed -i 's|<param name="count">0</param>|<param name="count">20000</param>|' "$d/g.xml"
(cd "$d" && exec timeout -k 5 60 "$B/sf-exec" g.xml) >"$d/exec.log" 2>&1 &
wait_exit $! 70
if [[ $ST != 0 || -s $d/exec.log ]]; then
  sf_bad fork-exit "exit status $ST, expected 0 and nothing printed" "$d/exec.log"
elif ! cmp -s "$d/out/x.csv" <(echo id,v; seq 0 19999 | awk '{ print $1 "," $1 % 7 }'); then
  sf_bad fork-exit "out/x.csv is not every tuple" "$d/exec.log"
else
  sf_ok fork-exit "a child of the operator calls exit(0): the job completes, every tuple written"
fi

# ---- kept tuples misused (op.h ABI version 4): a clear error naming the operator, exit 1 ----
# keep-twice: sf_keep_misuse releases a kept tuple twice; keep-foreign: releases the input tuple,
# never kept; keep-emit: emits a kept tuple it released
run_keep() {
  OP_PARAMS="
    <param name=\"how\">$2</param>"
  run_exec "$1" sf_keep_misuse 1 "sf-exec: error: operator 'quit': $3" "$4"
  OP_PARAMS=""
}
run_keep keep-twice twice "sf_tuple_release: the tuple was already released" "a kept tuple released twice"
run_keep keep-foreign foreign \
  "sf_tuple_release: the tuple is not one this operator kept (a handle from sf_tuple_retain)" \
  "the input tuple released, never kept"
run_keep keep-emit emit "sf_emit_kept: the tuple was already released" "a released tuple emitted"

# ---- an operator that does not return ----
# wait_file FILE SECONDS: waits until FILE exists; 1 when it did not within SECONDS
wait_file() {
  local i
  for ((i = 0; i < $2 * 20; i++)); do
    [[ -e $1 ]] && return 0
    sleep 0.05
  done
  return 1
}
# run_spin CASE IN AGAIN WHAT: sf-exec --stop-grace 1 on the graph of sf_spin_at (spinning in IN:
# process or open), SIGINT once it spins; with AGAIN=1 SIGINT again every 0.2 s until it ends (the
# main thread spins: only a signal after the grace ends it). Exit 130 within 10 s, naming quit.
run_spin() {
  local c=$1 in=$2 again=$3 what=$4
  local d=$work/$c
  OP_PARAMS="
    <param name=\"in\">$in</param>
    <param name=\"mark\">$d/spinning</param>"
  SINK_FIRST=1 make_graph "$d/g.xml" sf_spin_at
  OP_PARAMS=""
  (cd "$d" && exec env --default-signal=INT "$B/sf-exec" --stop-grace 1 g.xml) >"$d/exec.log" 2>&1 &
  local pid=$!
  wait_file "$d/spinning" 30 || { kill -KILL "$pid"; wait "$pid"; sf_bad "$c" "$what: it never spun" "$d/exec.log"; return; }
  kill -INT "$pid"
  if ((again)); then
    local i
    for ((i = 0; i < 50; i++)); do
      sleep 0.2
      kill -INT "$pid" 2>/dev/null || break
    done
  fi
  wait_exit "$pid" 10
  check "$c" "$d" "$d/exec.log" 130 \
    "sf-exec: error: interrupted by SIGINT; operator 'quit' did not return within 1 s: stopped" "$what"
}
run_spin spin process 0 "Ctrl-C, process spinning"
if [[ ${SF_SANITIZE:-} == *thread* ]]; then
  echo "spin-open: skipped (ThreadSanitizer defers the signals of a thread that only spins)"
else
  run_spin spin-open open 1 "Ctrl-C twice, open spinning"
fi

# ---- under sf-launch ----
# run_launch CASE SYMBOL TEXT WHAT: the two-host graph of SYMBOL under sf-launch; the summary line
# must be TEXT, within 20 s (the operator fails at once: without the fix the other host was named,
# 20 s later).
run_launch() {
  local c=$1 sym=$2 text=$3 what=$4
  local d=$work/$c
  make_graph "$d/seq.xml" "$sym" h0 h1
  sf_next_ports 2 || exit 1
  "$B/sf-xform" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$d/seq.xml" -o "$d/g.xml" >"$d/xform.log" 2>&1 || {
    sf_bad "$c" "sf-xform failed" "$d/xform.log"
    return
  }
  (cd "$d" && export TMPDIR=$work && exec setsid bash "$launch" --insecure-plaintext --exec "$B/sf-exec" --workdir "$d" "$d/g.xml") \
    >"$d/launch.log" 2>&1 &
  local pid=$!
  SF_GROUPS+=("$pid")
  wait_exit "$pid" 20
  local got left
  got=$(grep '^sf-launch: error:' "$d/launch.log")
  left=$(pgrep -f -- "sf-exec --host .*$d/g.xml" | tr '\n' ' ')
  if [[ $ST == timeout ]]; then
    sf_bad "$c" "$what: sf-launch still ran after 20 s" "$d/launch.log"
  elif [[ $ST != 1 ]]; then
    sf_bad "$c" "$what: sf-launch exited $ST, expected 1" "$d/launch.log"
  elif [[ $got != "$text" ]]; then
    sf_bad "$c" "$what: its error line is not '$text'" "$d/launch.log"
  elif [[ -n $left ]]; then
    sf_bad "$c" "$what: executors still running: $left" "$d/launch.log"
  elif [[ -n $(out_files "$d") ]]; then
    sf_bad "$c" "$what: files left in out/: $(out_files "$d")" "$d/launch.log"
  else
    sf_ok "$c" "$what: exit 1, '$text'"
  fi
}
run_launch launch-exit sf_exit_at \
  "sf-launch: error: host 'h1' failed: sf-exec: error: operator 'quit': called exit(0) before the job completed" \
  "exit(0) on h1"
if [[ -z ${SF_SANITIZE:-} ]]; then
  run_launch launch-segv sf_segv_at \
    "sf-launch: error: host 'h1' failed: sf-exec: error: operator 'quit': crashed with SIGSEGV" "SIGSEGV on h1"
fi

# ---- launch-blame: the host whose error names the other one is not the cause ----
d=$work/launch-blame
make_graph "$d/seq.xml" sf_exit_at h0 h1
sf_next_ports 2 || exit 1
"$B/sf-xform" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$d/seq.xml" -o "$d/g.xml" >"$d/xform.log" 2>&1
cat >"$d/stub" <<EOF
#!/usr/bin/env bash
# h0 fails at once naming a broken edge from h1; h1 fails once h0 is gone, naming no other host
[[ \$1 == --list-hosts ]] && exec "$B/sf-exec" "\$@"
if [[ \$2 == h0 ]]; then
  echo "sf-exec: error: host 'h0': edge 'Out>out/0' from host 'h1' (ipv4:127.0.0.1:1) failed: the stream broke"
  echo \$\$ >"$d/h0.pid"
  exit 1
fi
until [[ -s "$d/h0.pid" ]] && ! kill -0 "\$(cat "$d/h0.pid")" 2>/dev/null; do sleep 0.02; done
sleep 0.2
echo "sf-exec: error: operator 'quit': called exit(0) before the job completed"
exit 1
EOF
chmod +x "$d/stub"
(cd "$d" && export TMPDIR=$work && exec setsid bash "$launch" --insecure-plaintext --exec "$d/stub" --workdir "$d" "$d/g.xml") >"$d/launch.log" 2>&1 &
pid=$!
SF_GROUPS+=("$pid")
wait_exit "$pid" 20
want="sf-launch: error: host 'h1' failed: sf-exec: error: operator 'quit': called exit(0) before the job completed"
got=$(grep '^sf-launch: error:' "$d/launch.log")
if [[ $ST != 1 ]]; then
  sf_bad launch-blame "sf-launch exited $ST, expected 1" "$d/launch.log"
elif [[ $got != "$want" ]]; then
  sf_bad launch-blame "its error line is not '$want'" "$d/launch.log"
else
  sf_ok launch-blame "h0 failed first naming h1's edge, h1 then with an error of its own: h1 named"
fi

# ---- launch-late: an executor's last line reaches its log after it ended ----
# (its output goes through a sed and a tee, which a child of the stub keeps open a moment longer:
# sf-launch must read the reason once they are done, not "exit status 1")
d=$work/launch-late
mkdir -p "$d"
cp "$work/launch-blame/g.xml" "$d/g.xml"
cat >"$d/stub" <<EOF
#!/usr/bin/env bash
[[ \$1 == --list-hosts ]] && exec "$B/sf-exec" "\$@"
[[ \$2 == h0 ]] && exit 0
( sleep 0.5; echo "sf-exec: error: operator 'quit': late" ) &
exit 1
EOF
chmod +x "$d/stub"
(cd "$d" && export TMPDIR=$work && exec setsid bash "$launch" --insecure-plaintext --exec "$d/stub" --workdir "$d" "$d/g.xml") \
  >"$d/launch.log" 2>&1 &
pid=$!
SF_GROUPS+=("$pid")
wait_exit "$pid" 20
want="sf-launch: error: host 'h1' failed: sf-exec: error: operator 'quit': late"
got=$(grep '^sf-launch: error:' "$d/launch.log")
if [[ $ST != 1 ]]; then
  sf_bad launch-late "sf-launch exited $ST, expected 1" "$d/launch.log"
elif [[ $got != "$want" ]]; then
  sf_bad launch-late "its error line is not '$want'" "$d/launch.log"
else
  sf_ok launch-late "h1's error line came 0.5 s after it exited: named as its reason"
fi

# ---- launch-both: two executors failing at the same moment both keep their reasons ----
# (ten times: the first failure starts a `sleep` that the second one's end kills at once, and a
# child killed before its exec used to run sf-launch's EXIT trap, which removed the logs)
d=$work/launch-both
mkdir -p "$d"
cp "$work/launch-blame/g.xml" "$d/g.xml"
cat >"$d/stub" <<EOF
#!/usr/bin/env bash
[[ \$1 == --list-hosts ]] && exec "$B/sf-exec" "\$@"
: >"$d/ready.\$2"
until [[ -e "$d/ready.h0" && -e "$d/ready.h1" ]]; do sleep 0.01; done
echo "sf-exec: error: operator 'x' on \$2: failed"
exit 1
EOF
chmod +x "$d/stub"
lost=0
for ((k = 0; k < 10; k++)); do
  rm -f "$d"/ready.*
  (cd "$d" && export TMPDIR=$work && exec setsid bash "$launch" --insecure-plaintext --exec "$d/stub" --workdir "$d" "$d/g.xml") \
    >"$d/launch.log" 2>&1 &
  pid=$!
  SF_GROUPS+=("$pid")
  wait_exit "$pid" 20
  grep -q "exit status" "$d/launch.log" && lost=$((lost + 1))
done
if ((lost)); then
  sf_bad launch-both "$lost of 10 runs gave 'exit status 1' instead of the executors' error lines" "$d/launch.log"
else
  sf_ok launch-both "both executors failing at once: their reasons named, 10 runs of 10"
fi

# ---- launch-spin: SIGINT to sf-launch while h1's operator spins: h1 ends itself after its grace
# (5 s), before sf-launch would kill it (10 s) ----
d=$work/launch-spin
OP_PARAMS="
    <param name=\"mark\">$d/spinning</param>"
make_graph "$d/seq.xml" sf_spin_at h0 h1
OP_PARAMS=""
sf_next_ports 2 || exit 1
"$B/sf-xform" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$d/seq.xml" -o "$d/g.xml" >"$d/xform.log" 2>&1
(cd "$d" && export TMPDIR=$work && exec setsid env --default-signal=INT bash "$launch" --insecure-plaintext --exec "$B/sf-exec" --workdir "$d" \
  "$d/g.xml") >"$d/launch.log" 2>&1 &
pid=$!
SF_GROUPS+=("$pid")
if ! wait_file "$d/spinning" 30; then
  sf_bad launch-spin "h1's operator never spun" "$d/launch.log"
else
  kill -INT "$pid" # sf-launch alone (a Ctrl-C to the group would stop the seds prefixing the lines)
  wait_exit "$pid" 9 # sf-launch kills what still runs 10 s after its SIGINT
  want="[h1] sf-exec: error: interrupted by SIGINT; operator 'quit' did not return within 5 s: stopped"
  left=$(pgrep -f -- "sf-exec --host .*$d/g.xml" | tr '\n' ' ')
  if [[ $ST == timeout ]]; then
    sf_bad launch-spin "sf-launch still ran 9 s after its SIGINT" "$d/launch.log"
  elif [[ $ST != 130 ]]; then
    sf_bad launch-spin "sf-launch exited $ST, expected 130" "$d/launch.log"
  elif ! grep -qxF -- "$want" "$d/launch.log"; then
    sf_bad launch-spin "no line '$want'" "$d/launch.log"
  elif grep -q "killed it" "$d/launch.log"; then
    sf_bad launch-spin "sf-launch had to kill an executor" "$d/launch.log"
  elif [[ -n $left ]]; then
    sf_bad launch-spin "executors still running: $left" "$d/launch.log"
  elif [[ -n $(out_files "$d") ]]; then
    sf_bad launch-spin "files left in out/: $(out_files "$d")" "$d/launch.log"
  else
    sf_ok launch-spin "SIGINT, h1's operator spinning: h1 names it after 5 s, exit 130"
  fi
fi

# ---- keyed state out of memory ----
# make_dedup FILE COUNT KEY [H0 H1]: FILE, a Beacon of COUNT tuples (0: unbounded) -> Dedup `d` by
# KEY -> FileSink out/x.csv; with H0 and H1, d is placed on H1 (not replicated), the others on H0.
make_dedup() {
  local file=$1 count=$2 key=$3 at0="" at1=""
  [[ -n ${4:-} ]] && at0=" host=\"$4\"" && at1=" host=\"$5\" parallel=\"no\""
  mkdir -p "$(dirname "$file")/out"
  cat >"$file" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="budget">
  <schema name="T">
    <attr name="id" type="int"/>
    <attr name="v"  type="int"/>
  </schema>
  <operator name="src" kind="Beacon"$at0>
    <output stream="Ticks" schema="T"/>
    <param name="count">$count</param>
    <set attr="id">seq</set>
    <set attr="v">seq % 7</set>
  </operator>
  <operator name="d" kind="Dedup"$at1>
    <input stream="Ticks"/>
    <output stream="Out" schema="T"/>
    <param name="partitionBy">$key</param>
  </operator>
  <operator name="out" kind="FileSink"$at0>
    <input stream="Out"/>
    <param name="file">out/x.csv</param>
  </operator>
</graph>
EOF
}

# budget: 1 MiB of keyed state; the table of 12288 keys (a quarter of its 16384 buckets free)
# cannot double: the job fails there, naming d
d=$work/budget
make_dedup "$d/g.xml" 1000000 id
(cd "$d" && exec timeout -k 5 60 "$B/sf-exec" --max-state-memory 1M g.xml) >"$d/exec.log" 2>&1 &
wait_exit $! 70
check budget "$d" "$d/exec.log" 1 \
  "sf-exec: error: operator 'd': out of memory (keyed state over --max-state-memory 1048576 bytes; this operator holds 12288 keys)" \
  "Dedup of 1000000 keys, --max-state-memory 1M"

# budget-ok: the same job with a budget it stays within completes
d=$work/budget-ok
make_dedup "$d/g.xml" 20000 id
(cd "$d" && exec timeout -k 5 60 "$B/sf-exec" --max-state-memory 1G g.xml) >"$d/exec.log" 2>&1 &
wait_exit $! 70
if [[ $ST != 0 || -s $d/exec.log ]]; then
  sf_bad budget-ok "--max-state-memory 1G, 20000 keys: exit status $ST, expected 0 and no output" "$d/exec.log"
elif ! cmp -s "$d/out/x.csv" <(echo id,v; seq 0 19999 | awk '{ print $1 "," $1 % 7 }'); then
  sf_bad budget-ok "--max-state-memory 1G, 20000 keys: out/x.csv is not every tuple" "$d/exec.log"
else
  sf_ok budget-ok "--max-state-memory 1G, 20000 keys: completes, every tuple written"
fi

# budget-usage: a malformed size is a usage error
d=$work/budget-usage
mkdir -p "$d"
"$B/sf-exec" --max-state-memory 12X "$work/budget/g.xml" >"$d/exec.log" 2>&1
ST=$?
check budget-usage "$d" "$d/exec.log" 2 \
  "sf-exec: --max-state-memory must be a number of bytes from 1 to 2^62, with K, M or G for 2^10, 2^20, 2^30, got '12X'" \
  "--max-state-memory 12X"

# budget-launch: sf-launch passes it to every executor; d is on h1
d=$work/budget-launch
make_dedup "$d/seq.xml" 0 id h0 h1
sf_next_ports 2 || exit 1
"$B/sf-xform" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$d/seq.xml" -o "$d/g.xml" >"$d/xform.log" 2>&1
(cd "$d" && export TMPDIR=$work && exec setsid bash "$launch" --insecure-plaintext --max-state-memory 1M --exec "$B/sf-exec" \
  --workdir "$d" "$d/g.xml") >"$d/launch.log" 2>&1 &
pid=$!
SF_GROUPS+=("$pid")
wait_exit "$pid" 30
want="sf-launch: error: host 'h1' failed: sf-exec: error: operator 'd': out of memory (keyed state over --max-state-memory 1048576 bytes; this operator holds 12288 keys)"
got=$(grep '^sf-launch: error:' "$d/launch.log")
if [[ $ST != 1 ]]; then
  sf_bad budget-launch "sf-launch exited $ST, expected 1" "$d/launch.log"
elif [[ $got != "$want" ]]; then
  sf_bad budget-launch "its error line is not '$want'" "$d/launch.log"
elif [[ -n $(out_files "$d") ]]; then
  sf_bad budget-launch "files left in out/: $(out_files "$d")" "$d/launch.log"
else
  sf_ok budget-launch "sf-launch --max-state-memory 1M: h1's Dedup fails, h1 named"
fi

# oom: no budget, but an address-space limit (ulimit -v) that the table's growth from 4 Mi to
# 8 Mi buckets (a 128 MiB calloc) passes and its keys (32 bytes each, 4 MiB arena blocks) do not:
# the executor's own size (measured on the same graph keyed by v: 7 keys) plus 224 MiB, the
# middle of the window from 40 to 72 times 4 Mi bytes where that growth is the first allocation
# to fail. The job fails naming d, exit 1, its temporary file removed.
if [[ -n ${SF_SANITIZE:-} ]]; then
  echo "oom: skipped (sanitizers reserve address space of their own)"
else
  d=$work/oom
  make_dedup "$d/base.xml" 0 v
  make_dedup "$d/g.xml" 0 id
  (cd "$d" && exec "$B/sf-exec" --stats-interval 0.2 base.xml) >"$d/base.log" 2>&1 &
  pid=$!
  base=""
  for ((i = 0; i < 300; i++)); do # until its second stats line: every thread runs
    sleep 0.1
    (($(grep -c . "$d/base.log") >= 2)) || continue
    base=$(sed -n 's/^VmSize:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status")
    break
  done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -f "$d"/out/.x.csv.tmp.*
  if [[ -z $base ]]; then
    sf_bad oom "the baseline job never got going" "$d/base.log"
  else
    (cd "$d" && ulimit -v $((base + 224 * 1024)) && exec timeout -k 5 120 "$B/sf-exec" g.xml) >"$d/exec.log" 2>&1 &
    wait_exit $! 130
    check oom "$d" "$d/exec.log" 1 "sf-exec: error: operator 'd': out of memory (8388608 buckets)" \
      "ulimit -v of $base kB + 224 MiB, unbounded Dedup"
  fi
fi

echo "op_failures: $SF_PASSED passed, $SF_FAILED failed in $(sf_elapsed "$t_start" "$(sf_now)") s"
[[ $SF_FAILED == 0 ]]
