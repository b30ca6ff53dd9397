#!/usr/bin/env bash
# tests/recovery_launch.sh BUILD_DIR SOURCE_DIR
#
# sf-launch's side of recovery: --checkpoint-dir, --checkpoint-interval, --restart, --restore and
# --hosts. The job is graphs/work.xml made slow: a Beacon of 60,000 jobs at 20,000 a second (3 s),
# a Work operator of 200 rounds and a Functor, rewritten by sf-xform -w 2 onto h0 and h1 (two free
# loopback ports, --insecure-plaintext), checkpoints every 0.2 s. Cases:
#   usage:       bad values and missing --checkpoint-dir: exit 2 and exactly sf-launch's two lines
#                (the message, then "Try 'sf-launch --help' for more information.");
#   complete:    sf-launch run from a directory other than --workdir with a relative --checkpoint-dir:
#                the checkpoints go there (not under --workdir), exit 0, the output is the
#                sequential run's, and no ckpt-N or REQUEST is left in the directory, while
#                another tool's ckpt-backup/important.db and ckpt-list.txt there stay;
#   committed:   a job that left h0's commit record (h0 holds the sinks) but not h1's: the
#                restore says on both that the job had completed, runs nothing, changes nothing;
#   restart:     --restart 2, h1's executor killed (SIGKILL) once checkpoint 3 is complete: exactly
#                "sf-launch: restart 1 of 2: host 'h1' failed (killed by SIGKILL); restarting every
#                executor from the latest complete checkpoint", then "sf-launch: restart 1 of 2:
#                restarted in S s", both executors say "sf-exec: restored checkpoint K" (K at least
#                the checkpoint complete before the kill), exit 0, no checkpoint left, no executor
#                left; restart-output: that run's output is byte-identical to sf-exec's on the
#                un-rewritten graph; restart-tls, restart-tls-output: the same with TLS (the job's
#                TLS material serves the restarted executors too);
#   restart-0:   --restart 0 (with --checkpoint-dir) and the same kill: exit 1, the error line names
#                h1 ("sf-launch: error: host 'h1' failed: killed by SIGKILL"), no restart line, the
#                checkpoints stay (the job did not complete);
#   replace:     that failed job launched again with --restore and --hosts moving h1 to a new port:
#                h1's executor listens there, both restore, exit 0, output byte-identical;
#   used-up:     --restart 1 and h1 killed twice: one restart, then exit 1 naming h1 and "sf-launch:
#                no restart left (1 of 1 used)";
#   interrupt:   --restart 2 and Ctrl-C (SIGINT to the process group): exit 130, no restart;
#   drain:       --restart 2 and SIGTERM: the job drains, exit 0, no restart;
#   blame:       a stand-in executor: h0 ends with an error, h1 is killed 50 ms later: h1 is named.
# The restart time (from noticing the failure to every executor started again) is printed with the
# restart case. Every run is under `timeout`. Environment: SF_KEEP=1 keeps the work directory.
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
trap 'exit 130' INT TERM

sf_mktemp work sf-recovery-launch || exit 1
SF_WORK=$work
SF_CASE_WIDTH=18
t_start=$(sf_now)
TRY="Try 'sf-launch --help' for more information."

# ---- the graph and the sequential run's output ----

sed -e 's|<param name="count">200000</param>|<param name="count">60000</param><param name="rate">20000</param>|' \
  -e 's|<param name="iterations">2000</param>|<param name="iterations">200</param>|' \
  "$src/graphs/work.xml" >"$work/seq.xml"
grep -q '"rate">20000<' "$work/seq.xml" || { echo "error: graphs/work.xml is not as expected" >&2; exit 1; }
mkdir -p "$work/ref/out"
if ! sf_exec_in "$build" "$work/ref" "$work/seq.xml" "$work/ref/exec.log"; then
  echo "error: the sequential run failed:" >&2
  cat "$work/ref/exec.log" >&2
  exit 1
fi

# make_case DIR: DIR/par.xml on h0 and h1 (fresh ports P0 and P1, kept in DIR/ports), DIR/out
make_case() {
  local dir=$1
  mkdir -p "$dir/out"
  sf_next_ports 2 || exit 1
  echo "$P0 $P1" >"$dir/ports"
  "$B/sf-xform" -w 2 --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$work/seq.xml" -o "$dir/par.xml" \
    >"$dir/xform.log" 2>&1 || { echo "error: sf-xform failed:" >&2; cat "$dir/xform.log" >&2; exit 1; }
}

# start_launch DIR LOG [ARGS...]: sf-launch ARGS DIR/par.xml in DIR, under a time limit, in a process
# group of its own like a terminal's foreground job, with --insecure-plaintext unless TLS is set;
# output to LOG; sets PID.
start_launch() {
  local dir=$1 log=$2 plain=(--insecure-plaintext)
  shift 2
  [[ -n ${TLS:-} ]] && plain=()
  (cd "$dir" && exec setsid env --default-signal=INT timeout -k 30 90 bash "$launch" --exec "$B/sf-exec" \
    --workdir "$dir" "${plain[@]}" "$@" "$dir/par.xml") >"$log" 2>&1 &
  PID=$!
  SF_GROUPS+=("$PID")
}

# wait_exit PID SECONDS: waits for PID (a child of this shell) to end; sets ST to its exit status,
# or to "timeout" (and kills its process group).
wait_exit() {
  local pid=$1 limit=$2 end
  end=$(awk -v n="$(sf_now)" -v l="$limit" 'BEGIN { printf "%.3f", n + l }')
  while kill -0 "$pid" 2>/dev/null; do
    if awk -v n="$(sf_now)" -v e="$end" 'BEGIN { exit !(n > e) }'; then
      kill -KILL -- "-$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      ST=timeout
      return
    fi
    sleep 0.05
  done
  wait "$pid" 2>/dev/null
  ST=$?
}

# exec_pid DIR HOST: the pid of the executor of HOST running DIR/par.xml (none: returns 1)
exec_pid() { pgrep -f -- "sf-exec --host $2 .*$1/par.xml" | head -n 1 | grep .; }

# wait_for SECONDS COMMAND...: runs COMMAND every 50 ms until it succeeds (0) or time runs out (1)
wait_for() {
  local limit=$1 i
  shift
  for ((i = 0; i < limit * 20; i++)); do
    "$@" && return 0
    sleep 0.05
  done
  return 1
}

# complete_ckpt DIR: prints the number of the newest complete checkpoint in DIR (a MANIFEST)
complete_ckpt() {
  local m
  m=$(find "$1" -mindepth 2 -maxdepth 2 -path '*/ckpt-*/MANIFEST' 2>/dev/null |
      sed 's|.*/ckpt-\([0-9]*\)/MANIFEST|\1|' | sort -n | tail -n 1)
  [[ -n $m ]] && echo "$m"
}
has_ckpt() { complete_ckpt "$1" >/dev/null; }

# leftovers DIR: the checkpoints and request left in DIR (empty when none)
leftovers() { (cd "$1" 2>/dev/null && find . -maxdepth 1 \( -regex '\./ckpt-[1-9][0-9]*' -o -name REQUEST \) -printf '%P ' ); }

# executors_left DIR: pids of executors still running DIR/par.xml
executors_left() { pgrep -f -- "sf-exec --host .*$1/par.xml" | tr '\n' ' '; }

# kill_h1 DIR: waits (10 s) until h1 runs and checkpoint 3 is complete in DIR/ck (the job is well
# under way), then kills h1's executor with SIGKILL; sets KILLED_AFTER (the newest complete
# checkpoint then) and KILLED_PID; 1 if that never happened
ckpt3() { local k; k=$(complete_ckpt "$1") && ((k >= 3)); }
kill_h1() {
  local dir=$1 p
  wait_for 10 exec_pid "$dir" h1 >/dev/null && wait_for 10 ckpt3 "$dir/ck" || return 1
  p=$(exec_pid "$dir" h1) || return 1
  KILLED_AFTER=$(complete_ckpt "$dir/ck")
  kill -KILL "$p"
  KILLED_PID=$p
}

# sf_lines LOG: sf-launch's own lines of LOG
sf_lines() { grep '^sf-launch:' "$1"; }

# ---- usage ----
d=$work/usage
make_case "$d"
# usage_case WHAT MESSAGE ARGS...: sf-launch ARGS exits 2 with exactly MESSAGE and the Try line
usage_case() {
  local what=$1 msg=$2 out st
  shift 2
  out=$(cd "$d" && timeout -k 5 30 bash "$launch" --exec "$B/sf-exec" "$@" 2>&1 >/dev/null)
  st=$?
  if [[ $st != 2 ]]; then
    printf '%s\n' "$out" >"$d/usage.log"
    sf_bad usage "$what: exit status $st, expected 2" "$d/usage.log"
    return 1
  elif [[ $out != "sf-launch: $msg"$'\n'"$TRY" ]]; then
    printf '%s\n' "$out" >"$d/usage.log"
    sf_bad usage "$what: expected 'sf-launch: $msg'" "$d/usage.log"
    return 1
  fi
}
usage_ok=1
usage_case "interval 0" "--checkpoint-interval must be a number of seconds from 0.01 to 86400, got '0'" \
  --checkpoint-dir ck --checkpoint-interval 0 par.xml || usage_ok=0
usage_case "interval 0.005" "--checkpoint-interval must be a number of seconds from 0.01 to 86400, got '0.005'" \
  --checkpoint-dir ck --checkpoint-interval 0.005 par.xml || usage_ok=0
usage_case "interval 86401" "--checkpoint-interval must be a number of seconds from 0.01 to 86400, got '86401'" \
  --checkpoint-dir ck --checkpoint-interval 86401 par.xml || usage_ok=0
usage_case "interval x" "--checkpoint-interval must be a number of seconds from 0.01 to 86400, got '1s'" \
  --checkpoint-dir ck --checkpoint-interval 1s par.xml || usage_ok=0
usage_case "restart -1" "--restart must be an integer from 0 to 1000, got '-1'" \
  --checkpoint-dir ck --restart -1 par.xml || usage_ok=0
usage_case "restart x" "--restart must be an integer from 0 to 1000, got 'two'" \
  --checkpoint-dir ck --restart two par.xml || usage_ok=0
usage_case "restart, no dir" "--restart needs --checkpoint-dir" --restart 2 par.xml || usage_ok=0
usage_case "restart 0, no dir" "--restart needs --checkpoint-dir" --restart 0 par.xml || usage_ok=0
usage_case "interval, no dir" "--checkpoint-interval needs --checkpoint-dir" \
  --checkpoint-interval 0.5 par.xml || usage_ok=0
usage_case "restore, no dir" "--restore needs --checkpoint-dir" --restore par.xml || usage_ok=0
usage_case "dir, no value" "option '--checkpoint-dir' needs an argument" par.xml --checkpoint-dir || usage_ok=0
usage_case "dir empty" "--checkpoint-dir needs a directory, got ''" --checkpoint-dir "" par.xml || usage_ok=0
usage_case "hosts syntax" "--hosts takes NAME=HOST:PORT[,NAME=HOST:PORT...], got 'h1=127.0.0.1'" \
  --hosts h1=127.0.0.1 par.xml || usage_ok=0
usage_case "hosts unknown" "--hosts names host 'h9', which the graph does not declare" \
  --hosts h1=127.0.0.1:1,h9=127.0.0.1:2 par.xml || usage_ok=0
((usage_ok)) && sf_ok usage "14 bad command lines: exit 2, exact messages"

# ---- complete: a relative --checkpoint-dir is sf-launch's current directory's ----
d=$work/complete
make_case "$d"
mkdir -p "$d/cwd/ck/ckpt-backup" # another tool's files next to sf's names: they stay
echo db >"$d/cwd/ck/ckpt-backup/important.db"
echo list >"$d/cwd/ck/ckpt-list.txt"
(cd "$d/cwd" && exec setsid timeout -k 5 90 bash "$launch" --exec "$B/sf-exec" --workdir "$d" --insecure-plaintext \
  --checkpoint-dir ck --checkpoint-interval 0.2 --restart 1 "$d/par.xml") >"$d/launch.log" 2>&1 &
PID=$!
SF_GROUPS+=("$PID")
seen=no
wait_for 20 has_ckpt "$d/cwd/ck" && seen=yes
wait_exit "$PID" 60
if [[ $ST != 0 ]]; then
  sf_bad complete "sf-launch exited $ST, expected 0" "$d/launch.log"
elif [[ $seen != yes ]]; then
  sf_bad complete "no complete checkpoint ever appeared in the current directory's ck/" "$d/launch.log"
elif [[ -e $d/ck ]]; then
  sf_bad complete "a checkpoint directory appeared under --workdir ($d/ck)" "$d/launch.log"
elif [[ -n $(leftovers "$d/cwd/ck") ]]; then
  sf_bad complete "left in the checkpoint directory after exit 0: $(leftovers "$d/cwd/ck")" "$d/launch.log"
elif [[ $(cat "$d/cwd/ck/ckpt-backup/important.db" "$d/cwd/ck/ckpt-list.txt" 2>&1) != $'db\nlist' ]]; then
  sf_bad complete "the cleanup removed files sf did not write (ckpt-backup/important.db, ckpt-list.txt)" "$d/launch.log"
elif [[ -n $(sf_lines "$d/launch.log") ]]; then
  sf_bad complete "sf-launch printed something" "$d/launch.log"
elif ! diffs=$(sf_compare_dirs "$work/ref/out" "$d/out"); then
  echo "$diffs" >"$d/diff.log"
  sf_bad complete "output differs from the sequential run's" "$d/diff.log"
else
  sf_ok complete "relative --checkpoint-dir in sf-launch's directory; exit 0, output identical, checkpoints removed, other files kept"
fi

# ---- committed: the executor holding the sinks committed, the other one did not ----
# A job whose cleanup fails (a foreign ckpt-999999 planted while it runs) leaves every host's
# commit record; with h1's removed (as if h1 had died before writing it: it holds no sink), the
# job is still complete, since h0's sinks committed once all their inputs had ended. The restore
# must say so on both executors, run nothing and change no output. (Before the rule looked at the
# sinks' hosts only, it re-ran the job from the beginning here, while the same state restored at
# a width that gave h1 no operator said it had completed.)
d=$work/committed
make_case "$d"
start_launch "$d" "$d/launch.log" --checkpoint-dir ck --checkpoint-interval 0.2
wait_for 20 has_ckpt "$d/ck" && mkdir "$d/ck/ckpt-999999" && echo other >"$d/ck/ckpt-999999/other.bin"
wait_exit "$PID" 60
want="sf-launch: warning: the checkpoints in '$d/ck' were not removed"
if [[ $ST != 0 || $(sf_lines "$d/launch.log") != "$want" ]]; then
  sf_bad committed "the run: exit $ST, expected 0 and only '$want'" "$d/launch.log"
elif [[ ! -f $d/ck/host-h0.commit || ! -f $d/ck/host-h1.commit ]]; then
  sf_bad committed "the run left no commit record of h0 or of h1: $(ls "$d/ck" | tr '\n' ' ')" "$d/launch.log"
else
  cp -r "$d/out" "$d/out-run"
  rm -r "$d/ck/ckpt-999999" "$d/ck/host-h1.commit"
  start_launch "$d" "$d/restore.log" --restore --checkpoint-dir ck --checkpoint-interval 0.2
  wait_exit "$PID" 60
  done_line="sf-exec: the job in '$d/ck' had completed (every sink committed its output): nothing to restore"
  got=$(sort "$d/restore.log")
  if [[ $ST != 0 || $got != "$(printf '[h0] %s\n[h1] %s' "$done_line" "$done_line")" ]]; then
    sf_bad committed "the restore: exit $ST, expected 0 and only '$done_line' from h0 and from h1" "$d/restore.log"
  elif ! diffs=$(sf_compare_dirs "$d/out-run" "$d/out"); then
    echo "$diffs" >"$d/diff.log"
    sf_bad committed "the restore changed the output" "$d/diff.log"
  elif [[ -n $(ls -A "$d/ck") ]]; then
    sf_bad committed "the restore left in ck: $(ls -A "$d/ck" | tr '\n' ' ')" "$d/restore.log"
  else
    sf_ok committed "h0 (the sinks) committed, h1 did not: the restore says the job had completed, output unchanged"
  fi
fi

# ---- restart: h1 killed once, restarted from the latest complete checkpoint; restart-tls: the same
# with TLS (the job's TLS material serves the restarted executors too) ----
# restart_case CASE: the restart case in $work/CASE
restart_case() {
  local c=$1 d=$work/$1 want line1 line2 nlines restored k secs left diffs
  make_case "$d"
  start_launch "$d" "$d/launch.log" --checkpoint-dir ck --checkpoint-interval 0.2 --restart 2
  if ! kill_h1 "$d"; then
    sf_bad "$c" "h1 did not run with checkpoint 3 complete within 10 s" "$d/launch.log"
    wait_exit "$PID" 1
  else
    wait_exit "$PID" 60
    want="sf-launch: restart 1 of 2: host 'h1' failed (killed by SIGKILL); restarting every executor from the latest complete checkpoint"
    line1=$(sf_lines "$d/launch.log" | sed -n 1p)
    line2=$(sf_lines "$d/launch.log" | sed -n 2p)
    nlines=$(sf_lines "$d/launch.log" | wc -l)
    restored=$(grep -c "^\[h[01]\] sf-exec: restored checkpoint [0-9]* from '$d/ck'$" "$d/launch.log")
    k=$(sed -n "s/^\[h0\] sf-exec: restored checkpoint \([0-9]*\) from .*/\1/p" "$d/launch.log" | head -n 1)
    secs=$(sed -n 's/^sf-launch: restart 1 of 2: restarted in \([0-9]*\.[0-9]\{3\}\) s$/\1/p' "$d/launch.log")
    left=$(executors_left "$d")
    if [[ $ST != 0 ]]; then
      sf_bad "$c" "sf-launch exited $ST, expected 0 after one restart" "$d/launch.log"
    elif [[ $line1 != "$want" ]]; then
      sf_bad "$c" "first line '$line1', expected '$want'" "$d/launch.log"
    elif [[ -z $secs || $nlines != 2 ]]; then
      sf_bad "$c" "expected exactly one more line, 'sf-launch: restart 1 of 2: restarted in S.SSS s', got '$line2' ($nlines lines)" "$d/launch.log"
    elif [[ $restored != 2 ]] || ((k < KILLED_AFTER)); then
      sf_bad "$c" "expected both executors to restore checkpoint $KILLED_AFTER or later" "$d/launch.log"
    elif pgrep -f -- "sf-exec --host h1 .*$d/par.xml" | grep -qx "$KILLED_PID"; then
      sf_bad "$c" "the killed executor still runs" "$d/launch.log"
    elif [[ -n $left ]]; then
      sf_bad "$c" "executors still running after sf-launch exited: $left" "$d/launch.log"
    elif [[ -n $(leftovers "$d/ck") ]]; then
      sf_bad "$c" "left in the checkpoint directory after exit 0: $(leftovers "$d/ck")" "$d/launch.log"
    else
      sf_ok "$c" "h1 killed after checkpoint $KILLED_AFTER; restored $k; exit 0; restarted in $secs s"
    fi
    if ! diffs=$(sf_compare_dirs "$work/ref/out" "$d/out"); then
      echo "$diffs" >"$d/diff.log"
      sf_bad "$c-output" "the output after the restart differs from the sequential run's" "$d/diff.log"
    else
      sf_ok "$c-output" "the output after the restart is the sequential run's, byte for byte"
    fi
  fi
}
restart_case restart
TLS=1 restart_case restart-tls

# ---- restart-0: no restart: the job fails naming h1; replace: launched again with --restore ----
d=$work/restart-0
make_case "$d"
start_launch "$d" "$d/launch.log" --checkpoint-dir ck --checkpoint-interval 0.2 --restart 0
if ! kill_h1 "$d"; then
  sf_bad restart-0 "h1 did not run with checkpoint 3 complete within 10 s" "$d/launch.log"
  wait_exit "$PID" 1
else
  wait_exit "$PID" 30
  first=$(sf_lines "$d/launch.log" | head -n 1)
  want="sf-launch: error: host 'h1' failed: killed by SIGKILL"
  if [[ $ST != 1 ]]; then
    sf_bad restart-0 "sf-launch exited $ST, expected 1" "$d/launch.log"
  elif [[ $first != "$want" ]]; then
    sf_bad restart-0 "first line '$first', expected '$want'" "$d/launch.log"
  elif grep -q "restart" "$d/launch.log"; then
    sf_bad restart-0 "a restart with --restart 0" "$d/launch.log"
  elif [[ -n $(executors_left "$d") ]]; then
    sf_bad restart-0 "executors still running after sf-launch exited: $(executors_left "$d")" "$d/launch.log"
  elif ! has_ckpt "$d/ck"; then
    sf_bad restart-0 "the checkpoints of the failed job are gone" "$d/launch.log"
  else
    sf_ok restart-0 "--restart 0: exit 1, '$first'"
    # replace: h1 on another port, the job continues from its checkpoint
    read -r _ p1 <"$d/ports"
    sf_next_ports 1 || exit 1
    newp=$P0
    start_launch "$d" "$d/replace.log" --checkpoint-dir ck --checkpoint-interval 0.2 --restore --hosts "h1=127.0.0.1:$newp"
    listened=no
    wait_for 10 eval "ss -Htln 'sport = :$newp' | grep -q ." && listened=yes
    wait_exit "$PID" 60
    restored=$(grep -c "^\[h[01]\] sf-exec: restored checkpoint [0-9]* from '$d/ck'$" "$d/replace.log")
    if [[ $ST != 0 ]]; then
      sf_bad replace "sf-launch --restore --hosts h1=127.0.0.1:$newp exited $ST, expected 0" "$d/replace.log"
    elif [[ $listened != yes ]]; then
      sf_bad replace "nothing listened on h1's new port $newp" "$d/replace.log"
    elif [[ $restored != 2 ]]; then
      sf_bad replace "expected both executors to restore a checkpoint" "$d/replace.log"
    elif [[ -n $(leftovers "$d/ck") ]]; then
      sf_bad replace "left in the checkpoint directory after exit 0: $(leftovers "$d/ck")" "$d/replace.log"
    elif ! diffs=$(sf_compare_dirs "$work/ref/out" "$d/out"); then
      echo "$diffs" >"$d/diff.log"
      sf_bad replace "restored on h1's new port, exit 0, but the output differs from the sequential run's" "$d/diff.log"
    else
      sf_ok replace "--restore --hosts h1=127.0.0.1:$newp (was $p1): exit 0, output identical"
    fi
  fi
fi

# ---- used-up: --restart 1, h1 killed twice ----
d=$work/used-up
make_case "$d"
start_launch "$d" "$d/launch.log" --checkpoint-dir ck --checkpoint-interval 0.2 --restart 1
restarted() { grep -q '^sf-launch: restart 1 of 1: restarted in' "$d/launch.log"; }
new_h1() { local p; p=$(exec_pid "$d" h1) && [[ $p != "$KILLED_PID" ]]; }
if ! kill_h1 "$d"; then
  sf_bad used-up "h1 did not run with checkpoint 3 complete within 10 s" "$d/launch.log"
  wait_exit "$PID" 1
elif ! wait_for 10 restarted || ! wait_for 10 new_h1; then
  sf_bad used-up "no restart within 10 s of the first kill" "$d/launch.log"
  wait_exit "$PID" 1
else
  # at once: under load the first kill can come late in the job, and a restart from a late
  # checkpoint may finish in less time than any pause here (seen: 0.3 s was too long)
  second=no
  p=$(exec_pid "$d" h1) && kill -KILL "$p" && second=yes
  wait_exit "$PID" 30
  want="sf-launch: restart 1 of 1: host 'h1' failed (killed by SIGKILL); restarting every executor from the latest complete checkpoint
sf-launch: error: host 'h1' failed: killed by SIGKILL
sf-launch: no restart left (1 of 1 used)"
  got=$(sf_lines "$d/launch.log" | grep -v -e '^sf-launch: restart 1 of 1: restarted in ' -e "^sf-launch: host 'h0' stopped too: ")
  if [[ $second != yes ]]; then
    sf_bad used-up "the restarted h1 was gone before the second kill" "$d/launch.log"
  elif [[ $ST != 1 ]]; then
    sf_bad used-up "sf-launch exited $ST, expected 1" "$d/launch.log"
  elif [[ $got != "$want" ]]; then
    sf_bad used-up "sf-launch's lines are not the expected ones" "$d/launch.log"
  elif [[ -n $(executors_left "$d") ]]; then
    sf_bad used-up "executors still running after sf-launch exited: $(executors_left "$d")" "$d/launch.log"
  else
    sf_ok used-up "killed twice with --restart 1: one restart, then exit 1 naming h1"
  fi
fi

# ---- interrupt: Ctrl-C never restarts ----
d=$work/interrupt
make_case "$d"
start_launch "$d" "$d/launch.log" --checkpoint-dir ck --checkpoint-interval 0.2 --restart 2
if ! wait_for 10 exec_pid "$d" h1 >/dev/null || ! wait_for 10 has_ckpt "$d/ck"; then
  sf_bad interrupt "h1 did not run with checkpoint 3 complete within 10 s" "$d/launch.log"
  wait_exit "$PID" 1
else
  kill -INT -- "-$PID"
  wait_exit "$PID" 20
  if [[ $ST != 130 ]]; then
    sf_bad interrupt "sf-launch exited $ST after Ctrl-C, expected 130" "$d/launch.log"
  elif grep -q '^sf-launch: restart' "$d/launch.log"; then
    sf_bad interrupt "a restart after Ctrl-C" "$d/launch.log"
  elif [[ $(sf_lines "$d/launch.log" | tail -n 1) != "sf-launch: interrupted; stopped every executor" ]]; then
    sf_bad interrupt "last line not 'sf-launch: interrupted; stopped every executor'" "$d/launch.log"
  elif [[ -n $(executors_left "$d") ]]; then
    sf_bad interrupt "executors still running after sf-launch exited: $(executors_left "$d")" "$d/launch.log"
  else
    sf_ok interrupt "Ctrl-C with --restart 2: exit 130, no restart"
  fi
fi

# ---- drain: SIGTERM never restarts ----
d=$work/drain
make_case "$d"
start_launch "$d" "$d/launch.log" --checkpoint-dir ck --checkpoint-interval 0.2 --restart 2
if ! wait_for 10 exec_pid "$d" h1 >/dev/null || ! wait_for 10 has_ckpt "$d/ck"; then
  sf_bad drain "h1 did not run with checkpoint 3 complete within 10 s" "$d/launch.log"
  wait_exit "$PID" 1
else
  kill -TERM "$PID" # timeout passes it on to sf-launch
  wait_exit "$PID" 20
  if [[ $ST != 0 ]]; then
    sf_bad drain "sf-launch exited $ST after SIGTERM, expected 0" "$d/launch.log"
  elif grep -q '^sf-launch:' "$d/launch.log"; then
    sf_bad drain "sf-launch printed something (a restart?)" "$d/launch.log"
  elif [[ -n $(executors_left "$d") ]]; then
    sf_bad drain "executors still running after sf-launch exited: $(executors_left "$d")" "$d/launch.log"
  else
    sf_ok drain "SIGTERM with --restart 2: drained, exit 0, no restart"
  fi
fi

# ---- blame: the executor killed is named, also when another one ends first ----
# A stand-in executor (sf-launch --exec; sf-exec answers --list-hosts): h0 ends at once with a broken edge from h1, h1 is killed
# by SIGKILL 50 ms later. The host named must be h1 on the restart and on the failure after it.
# Before sf-launch waited a moment (SF_LAUNCH_SETTLE) after h0, it stopped h1 with SIGINT at once
# and named h0 (h1 then read as interrupted); under load that happened with real executors too.
d=$work/blame
make_case "$d"
{ echo '#!/usr/bin/env bash'; echo "[ \"\$1\" = --list-hosts ] && exec '$B/sf-exec' \"\$@\""; } >"$d/fake-exec"
cat >>"$d/fake-exec" <<'SH'
case " $* " in
  *" --host h0 "*) echo "sf-exec: error: host 'h0': edge 'x' from host 'h1' failed: the stream broke" >&2; exit 1 ;;
  *) sleep 0.05; kill -KILL $$ ;;
esac
SH
chmod +x "$d/fake-exec"
(cd "$d" && exec setsid timeout -k 10 30 bash "$launch" --exec "$d/fake-exec" --workdir "$d" --insecure-plaintext \
  --checkpoint-dir ck --restart 1 "$d/par.xml") >"$d/launch.log" 2>&1 &
PID=$!
SF_GROUPS+=("$PID")
wait_exit "$PID" 30
want1="sf-launch: restart 1 of 1: host 'h1' failed (killed by SIGKILL); restarting every executor from the latest complete checkpoint"
want2="sf-launch: error: host 'h1' failed: killed by SIGKILL"
if [[ $ST != 1 ]]; then
  sf_bad blame "sf-launch exited $ST, expected 1" "$d/launch.log"
elif ! grep -qxF "$want1" "$d/launch.log"; then
  sf_bad blame "no line '$want1'" "$d/launch.log"
elif ! grep -qxF "$want2" "$d/launch.log"; then
  sf_bad blame "no line '$want2'" "$d/launch.log"
else
  sf_ok blame "h0 ends first, h1 killed 50 ms later: h1 named twice"
fi

echo "recovery_launch: $SF_PASSED passed, $SF_FAILED failed in $(sf_elapsed "$t_start" "$(sf_now)") s"
[[ $SF_FAILED == 0 ]]
