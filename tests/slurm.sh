#!/usr/bin/env bash
# tests/slurm.sh BUILD_DIR SOURCE_DIR
#
# sf-launch --via slurm on a real Slurm: tests/slurm/cluster.sh starts munged, slurmctld and slurmd
# (Debian's slurm-wlm and munge, which tools/test.sh installs) in a scratch directory, one node (this
# machine, two CPUs here) with oversubscription, and stops them at exit, on failure too (trap).
#
# The job is graphs/work.xml made slow (a Beacon of 100,000 jobs at 20,000 a second: 5 s; Work of 200
# rounds), rewritten by sf-xform -w 3 onto h0, h1 and h2 at three free loopback ports: three
# executors, with TLS (the job's own CA and certificates). Cases:
#   cluster     the node is up and idle, and a step of three tasks runs on its two CPUs
#               (srun --overcommit -n 3 -N 1 --label): three labelled lines, one per task, each
#               with the task's SLURM_PROCID and the job's SLURM_JOB_NODELIST (this node)
#   allocation  sf-launch --via slurm outside any allocation: it makes one (its line "sf-launch:
#               slurm: job J: h0 on NODE (ADDRESS), ..." names the job and where each host went;
#               h1's port is taken on this node by a listener, so h1 gets another, and h2 one of
#               its own), exit 0, the output byte-identical to sf-exec's run of the un-rewritten
#               graph, and the job is over once sf-launch exited (released, not left running)
#   tasks       inside `salloc -n 3 --overcommit` (more tasks than CPUs), with --checkpoint-dir and
#               --restart 2: while it runs squeue shows one step of the job, named sf-exec, and each
#               executor's environment says it is a task of that step (SLURM_JOB_ID the job's,
#               SLURM_STEP_ID, SLURM_PROCID 0, 1, 2 for h0, h1, h2); and no process's command
#               line holds the job's token (read from an executor's SF_TOKEN) or a private key
#   restart     then h1's executor is killed (SIGKILL) once a checkpoint is complete: "sf-launch:
#               restart 1 of 2: host 'h1' failed (killed by SIGKILL); ...", every executor restores,
#               exit 0, output byte-identical, no executor left
#   step-kill   Slurm's own kill of the step (scancel J.S, as a time limit or a failed node would):
#               handled like a lost host, restarted (--restart 1), exit 0, output byte-identical
#   task-kill   the shell of h1's task (sf-exec's parent in the step) killed with SIGKILL, its
#               sf-exec left running: "host 'h1' failed (error: host 'h1': its Slurm task was
#               killed (SIGKILL): lost)" at once, restarted, exit 0, output byte-identical
#   hosts14     the graph at width 14 on h0 ... h13 (the paper's host count): 14 tasks of one step
#               on the two CPUs (srun labels them " 0:" to "13:"), exit 0, output byte-identical
#   interrupt   SIGINT to sf-launch (inside salloc, --restart 2) once the executors run: exit 130,
#               "sf-launch: interrupted; stopped every executor", no executor and no step left
#   drain       SIGTERM instead: exit 0, no restart, and the output a prefix of the full one (the
#               sources stopped early, what they read reached the sink)
#   nodes       then the cluster is started again with two nodes sfn1, sfn2 on this machine (one
#               slurmd each, Slurm's "multiple slurmd"), and the job runs in salloc -N 2 -n 3
#               --overcommit: h0 on sfn1, h1 on sfn2, h2 on sfn1 (the job line, and each executor's
#               SLURMD_NODENAME), h1 killed, one restart, output byte-identical. When the two
#               nodes cannot start, this case alone is skipped (said so)
#
# Needs root (slurmd runs as root): without it, or without Slurm's programs, or when a daemon does
# not start, it prints "SKIP: ..." and exits 77. SF_LAUNCH: the sf-launch to test (default
# BUILD_DIR/bin/sf-launch). SF_KEEP=1 keeps the work directory.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
source "$src/tests/slurm/cluster.sh"
sf_need_bins "$build" sf-xform sf-exec sf-tcp || exit 1
B=$build/bin
launch=${SF_LAUNCH:-$B/sf-launch}
[[ -x $launch ]] || { echo "error: $launch is missing or not executable (build first)" >&2; exit 1; }
SF_CASE_WIDTH=12
t_start=$(sf_now)

on_exit() {
  local rc=$?
  sf_slurm_stop
  sf_stop_all
  return $rc
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# a run inside some other Slurm job (a CI runner under sbatch) must not hand its job to ours
for v in $(compgen -e | grep '^SLURM_'); do unset "$v"; done
sf_mktemp SF_WORK sf-slurm || exit 1
sf_slurm_start "$SF_WORK/slurm"
rc=$?
if [[ $rc -ne 0 ]]; then
  [[ $rc -eq 77 ]] && exit 77
  echo "error: cannot start Slurm"
  sf_slurm_logs
  exit 1
fi
node=$(hostname -s)

# cluster: three tasks of one step on two CPUs
out=$SF_WORK/cluster.out
if timeout -k 5 30 srun --overcommit -N 1 -n 3 --label \
     sh -c 'echo "task $SLURM_PROCID of $SLURM_NTASKS on $SLURM_JOB_NODELIST"' >"$out" 2>&1 </dev/null &&
   [[ $(LC_ALL=C sort "$out") == "0: task 0 of 3 on $node"$'\n'"1: task 1 of 3 on $node"$'\n'"2: task 2 of 3 on $node" ]]; then
  sf_ok cluster "three tasks of one step on $(nproc) CPUs (srun --overcommit -n 3)"
else
  sf_bad cluster "srun --overcommit -n 3 did not run three tasks on '$node'" "$out"
fi

# ---- the graph, the sequential run ----
work=$SF_WORK
sed -e 's|<param name="count">200000</param>|<param name="count">100000</param><param name="rate">20000</param>|' \
  -e 's|<param name="iterations">2000</param>|<param name="iterations">200</param>|' \
  "$src/graphs/work.xml" >"$work/seq.xml"
grep -q '"rate">20000<' "$work/seq.xml" || { echo "error: graphs/work.xml is not as expected" >&2; exit 1; }
mkdir -p "$work/ref/out"
if ! sf_exec_in "$build" "$work/ref" "$work/seq.xml" "$work/ref/exec.log"; then
  echo "error: the sequential run failed:" >&2
  cat "$work/ref/exec.log" >&2
  exit 1
fi

# make_case DIR: DIR/par.xml on h0, h1, h2 (fresh loopback ports), DIR/out
make_case() {
  local dir=$1
  mkdir -p "$dir/out"
  sf_next_ports 3 || exit 1
  "$B/sf-xform" -w 3 --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1,h2=127.0.0.1:$P2" "$work/seq.xml" \
    -o "$dir/par.xml" >"$dir/xform.log" 2>&1 ||
    { echo "error: sf-xform failed:" >&2; cat "$dir/xform.log" >&2; exit 1; }
}

# start_launch DIR LOG [salloc ARGS... --] [sf-launch ARGS...]: sf-launch --via slurm on DIR/par.xml
# in DIR, under a time limit, in a process group of its own, output to LOG; sets PID. With a first
# argument "salloc", everything up to "--" is salloc's and sf-launch runs inside that allocation.
start_launch() {
  local dir=$1 log=$2 pre=()
  shift 2
  if [[ ${1:-} == salloc ]]; then
    while [[ $1 != -- ]]; do pre+=("$1"); shift; done
    shift
  fi
  (cd "$dir" && exec setsid timeout -k 10 60 \
    "${pre[@]}" "$launch" --via slurm --exec "$B/sf-exec" --workdir "$dir" "$@" "$dir/par.xml") >"$log" 2>&1 &
  PID=$!
  SF_GROUPS+=("$PID")
}

# wait_exit PID SECONDS: waits for PID (a child of this shell); ST is its exit status, or "timeout"
wait_exit() {
  local pid=$1 i
  for ((i = 0; i < $2 * 20; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL -- "-$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    ST=timeout
    return
  fi
  wait "$pid" 2>/dev/null
  ST=$?
}

# exec_pids DIR [HOST]: pids of the executors (of HOST) running DIR/par.xml, one a line
exec_pids() {
  ps -eo pid=,args= | awk -v g="$1/par.xml" -v h="${2:-}" \
    '$2 ~ /\/sf-exec$/ && $3 == "--host" && (h == "" || $4 == h) && $NF == g { print $1 }'
}

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
sf_port_free_not() { ! sf_port_free "$1"; }
three_running() { [[ $(exec_pids "$1" | wc -l) == 3 ]]; }
# has_ckpt DIR: a checkpoint is complete in DIR (its MANIFEST)
has_ckpt() { [[ -n $(find "$1" -mindepth 2 -maxdepth 2 -path '*/ckpt-*/MANIFEST' 2>/dev/null) ]]; }

# same_output CASE DIR: DIR/out is the sequential run's (else a FAIL line; 1)
same_output() {
  local diffs
  if ! diffs=$(sf_compare_dirs "$work/ref/out" "$2/out"); then
    echo "$diffs" >"$2/diff.log"
    sf_bad "$1" "output differs from the sequential run's" "$2/diff.log"
    return 1
  fi
}

# ---- allocation: sf-launch makes its own ----
d=$work/allocation
make_case "$d"
"$B/sf-tcp" listen "$P1" >/dev/null 2>&1 & # h1's port is taken on this node: h1 moves up
squatter=$!
wait_for 5 sf_port_free_not "$P1"
t0=$(sf_now)
start_launch "$d" "$d/launch.log"
wait_exit "$PID" 45
t1=$(sf_now)
kill "$squatter" 2>/dev/null
wait "$squatter" 2>/dev/null
job=$(sed -n 's/^sf-launch: slurm: job \([0-9]*\): h0 on .*/\1/p' "$d/launch.log" | head -n 1)
moved=$(sed -n "s/^sf-launch: slurm: job $job: h0 on $node (127\.0\.0\.1:$P0), h1 on $node (127\.0\.0\.1:\([0-9]*\)), h2 on $node (127\.0\.0\.1:\([0-9]*\))\$/\1 \2/p" "$d/launch.log")
if [[ $ST != 0 ]]; then
  sf_bad allocation "sf-launch exited $ST, expected 0" "$d/launch.log"
elif [[ -z $job || -z $moved ]]; then
  sf_bad allocation "no line 'sf-launch: slurm: job J: h0 on $node (127.0.0.1:$P0), h1 on $node (...), h2 ...'" "$d/launch.log"
elif [[ ${moved% *} == "$P1" || ${moved% *} == "${moved#* }" ]]; then
  sf_bad allocation "h1 and h2 at ports '$moved': h1's graph port $P1 was taken, and two hosts of one node need two ports" "$d/launch.log"
elif [[ -n $(squeue -h -j "$job" -t PD,R 2>/dev/null) ]]; then
  sf_bad allocation "job $job still there after sf-launch exited: $(squeue -h -j "$job" 2>&1)" "$d/launch.log"
elif same_output allocation "$d"; then
  sf_ok allocation "its own allocation (job $job), released at exit; h1 off its taken port $P1 to ${moved% *}; output identical ($(sf_elapsed "$t0" "$t1") s)"
fi

# ---- tasks, restart: inside salloc, h1's executor killed ----
d=$work/restart
make_case "$d"
start_launch "$d" "$d/launch.log" salloc -n 3 --overcommit --job-name=sf-test -- \
  --checkpoint-dir ck --checkpoint-interval 0.2 --restart 2
if ! wait_for 20 three_running "$d" || ! wait_for 10 has_ckpt "$d/ck"; then
  sf_bad tasks "three executors with a complete checkpoint did not show within 30 s" "$d/launch.log"
  wait_exit "$PID" 1
else
  steps=$(squeue -h -s -o '%i %j' 2>&1)
  job=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$d/launch.log")
  why=""
  for i in 0 1 2; do
    p=$(exec_pids "$d" "h$i" | head -n 1)
    env_of=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -E '^SLURM_(JOB_ID|STEP_ID|PROCID)=' | LC_ALL=C sort | tr '\n' ' ')
    step=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^SLURM_STEP_ID=//p')
    [[ $env_of == "SLURM_JOB_ID=$job SLURM_PROCID=$i SLURM_STEP_ID=$step " && -n $step ]] ||
      why="h$i's executor (pid $p) has '$env_of', expected SLURM_JOB_ID=$job SLURM_PROCID=$i and a SLURM_STEP_ID"
    [[ -z $why && $steps == *"$job.$step sf-exec"* ]] ||
      why=${why:-"squeue shows no step $job.$step named sf-exec: '$steps'"}
  done
  # no secret on any command line: the job's token (from an executor's environment) and a key
  token=$(tr '\0' '\n' <"/proc/$(exec_pids "$d" h0 | head -n 1)/environ" 2>/dev/null | sed -n 's/^SF_TOKEN=//p')
  [[ -n $token ]] || why=${why:-"h0's executor has no SF_TOKEN in its environment"}
  # h1 is killed now, before the scan of every command line (seconds under load, and the job lasts
  # 5 s): the scan then covers the restarted executors too
  killed=$(exec_pids "$d" h1 | head -n 1)
  kill -KILL "$killed"
  (umask 077 && printf '%s\nPRIVATE KEY\n' "$token" >"$d/secrets.pat") # not on grep's own command line
  for c in /proc/[0-9]*/cmdline; do
    [[ -z $why ]] || break
    if tr '\0' ' ' 2>/dev/null <"$c" | grep -qF -f "$d/secrets.pat"; then
      why="a command line holds a secret: $c ($(tr '\0' ' ' 2>/dev/null <"$c" | cut -c1-80))"
    fi
  done
  rm -f "$d/secrets.pat"
  if [[ -n $why ]]; then
    sf_bad tasks "$why" "$d/launch.log"
  else
    sf_ok tasks "three executors, tasks 0-2 of step $job.$step (squeue: one step, sf-exec), on $(nproc) CPUs; no secret on a command line"
  fi
  wait_exit "$PID" 45
  want="sf-launch: restart 1 of 2: host 'h1' failed (killed by SIGKILL); restarting every executor from the latest complete checkpoint"
  restored=$(grep -c "^\[h[012]\] sf-exec: restored checkpoint [0-9]* from '$d/ck'$" "$d/launch.log")
  if [[ $ST != 0 ]]; then
    sf_bad restart "sf-launch exited $ST, expected 0 after one restart" "$d/launch.log"
  elif ! grep -qxF "$want" "$d/launch.log"; then
    sf_bad restart "no line '$want'" "$d/launch.log"
  elif ! grep -q '^sf-launch: restart 1 of 2: restarted in [0-9]*\.[0-9]\{3\} s$' "$d/launch.log"; then
    sf_bad restart "no line 'sf-launch: restart 1 of 2: restarted in S s'" "$d/launch.log"
  elif [[ $restored != 3 ]]; then
    sf_bad restart "expected all three executors to restore, $restored did" "$d/launch.log"
  elif [[ -n $(exec_pids "$d") ]]; then
    sf_bad restart "executors still running after sf-launch exited: $(exec_pids "$d" | tr '\n' ' ')" "$d/launch.log"
  elif same_output restart "$d"; then
    sf_ok restart "h1 killed, one restart ($(sed -n 's/^sf-launch: restart 1 of 2: restarted in \(.*\) s$/\1/p' "$d/launch.log") s), all restored, output identical"
  fi
fi

# ---- step-kill: Slurm kills the step ----
d=$work/step-kill
make_case "$d"
start_launch "$d" "$d/launch.log" salloc -n 3 --overcommit --job-name=sf-test -- \
  --checkpoint-dir ck --checkpoint-interval 0.2 --restart 1
if ! wait_for 20 three_running "$d" || ! wait_for 10 has_ckpt "$d/ck"; then
  sf_bad step-kill "three executors with a complete checkpoint did not show within 30 s" "$d/launch.log"
  wait_exit "$PID" 1
else
  p=$(exec_pids "$d" h0 | head -n 1)
  step=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^SLURM_STEP_ID=//p')
  job=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^SLURM_JOB_ID=//p')
  scancel "$job.$step"
  wait_exit "$PID" 45
  restored=$(grep -c "^\[h[012]\] sf-exec: restored checkpoint [0-9]* from '$d/ck'$" "$d/launch.log")
  if [[ $ST != 0 ]]; then
    sf_bad step-kill "sf-launch exited $ST, expected 0 after one restart" "$d/launch.log"
  elif ! grep -q "^sf-launch: restart 1 of 1: host 'h[012]' failed (error: host 'h[012]': Slurm ended its step (STEP $job\.$step ON $node CANCELLED AT .*): lost); restarting" "$d/launch.log"; then
    sf_bad step-kill "no line 'sf-launch: restart 1 of 1: host 'H' failed (error: host 'H': Slurm ended its step (STEP $job.$step ON $node CANCELLED AT ...): lost); ...'" "$d/launch.log"
  elif [[ $restored != 3 ]]; then
    sf_bad step-kill "expected all three executors to restore, $restored did" "$d/launch.log"
  elif same_output step-kill "$d"; then
    sf_ok step-kill "scancel $job.$step: a lost host, one restart, output identical"
  fi
fi

# ---- task-kill: the task's shell killed, not the executor ----
d=$work/task-kill
make_case "$d"
start_launch "$d" "$d/launch.log" salloc -n 3 --overcommit --job-name=sf-test -- \
  --checkpoint-dir ck --checkpoint-interval 0.2 --restart 1
if ! wait_for 20 three_running "$d" || ! wait_for 10 has_ckpt "$d/ck"; then
  sf_bad task-kill "three executors with a complete checkpoint did not show within 30 s" "$d/launch.log"
  wait_exit "$PID" 1
else
  p=$(exec_pids "$d" h1 | head -n 1)
  shell=$(ps -o ppid= -p "$p" | tr -d ' ')
  kill -KILL "$shell"
  wait_exit "$PID" 45
  want="sf-launch: restart 1 of 1: host 'h1' failed (error: host 'h1': its Slurm task was killed (SIGKILL): lost); restarting every executor from the latest complete checkpoint"
  if [[ $ST != 0 ]]; then
    sf_bad task-kill "sf-launch exited $ST, expected 0 after one restart" "$d/launch.log"
  elif ! grep -qxF "$want" "$d/launch.log"; then
    sf_bad task-kill "no line '$want'" "$d/launch.log"
  elif [[ -n $(exec_pids "$d") ]]; then
    sf_bad task-kill "executors still running after sf-launch exited: $(exec_pids "$d" | tr '\n' ' ')" "$d/launch.log"
  elif same_output task-kill "$d"; then
    sf_ok task-kill "h1's task shell killed: a lost host, one restart, output identical"
  fi
fi

# ---- hosts14: 14 tasks on two CPUs ----
d=$work/hosts14
mkdir -p "$d/out"
sf_next_ports 14 || exit 1
spec=""
for ((i = 0; i < 14; i++)); do
  v=P$i
  spec+="${spec:+,}h$i=127.0.0.1:${!v}"
done
"$B/sf-xform" -w 14 --hosts "$spec" "$work/seq.xml" -o "$d/par.xml" >"$d/xform.log" 2>&1 ||
  { echo "error: sf-xform failed:" >&2; cat "$d/xform.log" >&2; exit 1; }
t0=$(sf_now)
start_launch "$d" "$d/launch.log" salloc -n 14 --overcommit --job-name=sf-test --
wait_exit "$PID" 45
t1=$(sf_now)
placed=$(grep -o "h[0-9]* on $node (127\.0\.0\.1:[0-9]*)" "$d/launch.log" | wc -l)
if [[ $ST != 0 ]]; then
  sf_bad hosts14 "sf-launch exited $ST, expected 0" "$d/launch.log"
elif [[ $placed != 14 ]]; then
  sf_bad hosts14 "the job line places $placed hosts, expected 14" "$d/launch.log"
elif same_output hosts14 "$d"; then
  sf_ok hosts14 "14 executors, tasks of one step on $(nproc) CPUs: output identical ($(sf_elapsed "$t0" "$t1") s)"
fi

# ---- interrupt, drain: sf-launch's own SIGINT and SIGTERM reach the tasks ----
# signal_case CASE SIGNAL: sf-launch in salloc, SIGNAL to it once the three executors run; sets ST
signal_case() {
  local d=$work/$1 sa lp
  make_case "$d"
  start_launch "$d" "$d/launch.log" salloc -n 3 --overcommit --job-name=sf-test -- \
    --checkpoint-dir ck --checkpoint-interval 0.2 --restart 2
  # once a checkpoint is complete every executor has its signal handlers: a SIGTERM that comes
  # while one is still starting (reading its graph; slow under the sanitizers) ends it by the
  # signal's default action, a failure rather than a drain
  if ! wait_for 20 three_running "$d" || ! wait_for 20 has_ckpt "$d/ck"; then
    ST=none
    return
  fi
  # $PID is timeout (setsid and env exec); its child salloc, and salloc's child sf-launch itself
  # (the stand-ins are sf-launch's children, the keeper is nobody's here)
  sa=$(ps -eo pid=,ppid=,comm= | awk -v g="$PID" '$2 == g && $3 == "salloc" { print $1 }')
  lp=$(ps -eo pid=,ppid=,comm= | awk -v g="$sa" '$2 == g && $3 == "sf-launch" { print $1 }')
  [[ -n $sa && -n $lp ]] || { echo "    (no salloc or sf-launch under pid $PID)"; ST=none; return; }
  kill "-$2" "$lp"
  wait_exit "$PID" 30
}
signal_case interrupt INT
d=$work/interrupt
if [[ $ST == none ]]; then
  sf_bad interrupt "three executors (under salloc, under pid $PID) did not show within 20 s" "$d/launch.log"
elif [[ $ST != 130 ]]; then
  sf_bad interrupt "sf-launch exited $ST after SIGINT, expected 130" "$d/launch.log"
elif ! grep -qx "sf-launch: interrupted; stopped every executor" "$d/launch.log"; then
  sf_bad interrupt "no line 'sf-launch: interrupted; stopped every executor'" "$d/launch.log"
elif grep -q "restart" "$d/launch.log"; then
  sf_bad interrupt "a restart after SIGINT" "$d/launch.log"
elif [[ -n $(exec_pids "$d") || -n $(squeue -h -s -n sf-exec 2>/dev/null) ]]; then
  sf_bad interrupt "executors or a step left: $(exec_pids "$d" | tr '\n' ' ') $(squeue -h -s 2>&1)" "$d/launch.log"
else
  sf_ok interrupt "SIGINT: every task stopped (scancel --signal), exit 130, nothing left"
fi
signal_case drain TERM
d=$work/drain
got=$(wc -c <"$d/out/work_results.csv" 2>/dev/null || echo 0)
if [[ $ST == none ]]; then
  sf_bad drain "three executors (under salloc, under pid $PID) did not show within 20 s" "$d/launch.log"
elif [[ $ST != 0 ]]; then
  sf_bad drain "sf-launch exited $ST after SIGTERM, expected 0" "$d/launch.log"
elif [[ -n $(grep -v '^salloc: ' "$d/launch.log" | grep -v '^sf-launch: slurm: job ') ]]; then
  sf_bad drain "sf-launch printed more than its job line (a restart? a lost host?)" "$d/launch.log"
elif ((got == 0)) || ! cmp -s <(head -c "$got" "$work/ref/out/work_results.csv") "$d/out/work_results.csv"; then
  sf_bad drain "the output ($got bytes) is not a prefix of the full run's" "$d/launch.log"
elif [[ -n $(exec_pids "$d") ]]; then
  sf_bad drain "executors left: $(exec_pids "$d" | tr '\n' ' ')" "$d/launch.log"
else
  sf_ok drain "SIGTERM: drained, exit 0, the output a prefix of the full one ($got of $(wc -c <"$work/ref/out/work_results.csv") bytes)"
fi

# ---- nodes: two Slurm nodes, hosts onto them in order ----
sf_slurm_stop
sf_slurm_start "$work/slurm2" 2 >"$work/slurm2.out" 2>&1 # not in a subshell: it exports, records pids
rc=$?
if [[ $rc -ne 0 ]]; then
  printf '%-*s SKIP  %s\n' "$SF_CASE_WIDTH" nodes "two nodes on this machine do not start: $(tr '\n' ' ' <"$work/slurm2.out")"
else
  d=$work/nodes
  make_case "$d"
  # h0's port is taken: it moves up to h1's, which h1 (on the other node, but at the same
  # address) must then not take as well (it did: both listened at P1, and neither could start)
  "$B/sf-tcp" listen "$P0" >/dev/null 2>&1 &
  squatter=$!
  wait_for 5 sf_port_free_not "$P0"
  start_launch "$d" "$d/launch.log" salloc -N 2 -n 3 --overcommit --job-name=sf-test -- \
    --checkpoint-dir ck --checkpoint-interval 0.2 --restart 1
  if ! wait_for 20 three_running "$d" || ! wait_for 10 has_ckpt "$d/ck"; then
    sf_bad nodes "three executors with a complete checkpoint did not show within 30 s" "$d/launch.log"
    wait_exit "$PID" 1
  else
    on=""
    for i in 0 1 2; do
      p=$(exec_pids "$d" "h$i" | head -n 1)
      on+="h$i:$(tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | sed -n 's/^SLURMD_NODENAME=//p') "
    done
    p=$(exec_pids "$d" h1 | head -n 1)
    kill -KILL "$p"
    wait_exit "$PID" 45
    if [[ $ST != 0 ]]; then
      sf_bad nodes "sf-launch exited $ST, expected 0 after one restart" "$d/launch.log"
    elif ! ports=$(sed -n 's/^sf-launch: slurm: job [0-9]*: h0 on sfn1 (127\.0\.0\.1:\([0-9]*\)), h1 on sfn2 (127\.0\.0\.1:\([0-9]*\)), h2 on sfn1 (127\.0\.0\.1:\([0-9]*\))$/\1 \2 \3/p' "$d/launch.log") ||
      [[ -z $ports ]]; then
      sf_bad nodes "no line 'sf-launch: slurm: job J: h0 on sfn1 (127.0.0.1:P), h1 on sfn2 (...), h2 on sfn1 (...)'" "$d/launch.log"
    elif [[ $(tr ' ' '\n' <<<"$ports" | sort -u | wc -l) != 3 || ${ports%% *} == "$P0" ]]; then
      sf_bad nodes "ports '$ports': not three different ones, or h0 at its taken port $P0" "$d/launch.log"
    elif [[ $on != "h0:sfn1 h1:sfn2 h2:sfn1 " ]]; then
      sf_bad nodes "the executors ran on '$on', expected h0:sfn1 h1:sfn2 h2:sfn1" "$d/launch.log"
    elif ! grep -q "^sf-launch: restart 1 of 1: host 'h1' failed (killed by SIGKILL)" "$d/launch.log"; then
      sf_bad nodes "no restart naming h1" "$d/launch.log"
    elif same_output nodes "$d"; then
      sf_ok nodes "two nodes: h0, h2 on sfn1 and h1 on sfn2 (SLURMD_NODENAME) at ports $ports (h0's $P0 taken), h1 killed, restarted, output identical"
    fi
  fi
  kill "$squatter" 2>/dev/null
  wait "$squatter" 2>/dev/null
fi

echo "slurm: $SF_PASSED passed, $SF_FAILED failed ($(sf_elapsed "$t_start" "$(sf_now)") s)"
[[ $SF_FAILED -eq 0 ]]
