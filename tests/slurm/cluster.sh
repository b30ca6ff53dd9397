# tests/slurm/cluster.sh: a real single-node Slurm for the tests (source it; it defines functions
# only). It installs nothing: tools/test.sh has tools/setup.sh install Debian's slurm-wlm and munge.
#
#   sf_slurm_start DIR [NODES]
#                        starts munged, slurmctld and slurmd as root, everything of theirs in DIR
#                        (a fresh directory: munge key and socket, slurm.conf, pid, log and state
#                        files), on nonstandard ports; one node, this host (hostname -s), with its
#                        CPUs (nproc) and oversubscription, so that more tasks than CPUs can run
#                        (srun --overcommit); no accounting, no cgroups. With NODES > 1, that many
#                        nodes sfn1 ... sfnN all on this host (one slurmd each, slurmd -N, each on
#                        its own port: Slurm's "multiple slurmd"), one CPU each. It exports SLURM_CONF (the
#                        clients srun, salloc, sinfo, squeue and scontrol read it) and
#                        SF_SLURM_MUNGE_SOCKET, and returns once sinfo shows the node idle.
#                        Returns 77 with "SKIP: ..." on stdout when Slurm cannot run here (not
#                        root, a program missing, a daemon that does not start), 1 on other errors.
#   sf_slurm_stop        stops the daemons sf_slurm_start started (SIGTERM, then SIGKILL after 5 s,
#                        each by the pid it recorded). Safe to call twice, and when nothing started;
#                        meant for the caller's EXIT trap.
#   sf_slurm_logs        prints the daemons' logs' last lines (for a failure's message).
#
# Run directly (bash tests/slurm/cluster.sh DIR [NODES]), it starts the cluster, prints the SLURM_CONF to
# export, and keeps it up until interrupted: for trying srun and salloc by hand.

SF_SLURM_DIR=""
SF_SLURM_PIDFILES=()

sf_slurm_skip() { echo "SKIP: $*"; return 77; }

sf_slurm_start() { # DIR [NODES]
  local dir=$1 nnodes=${2:-1} p node cpus port i n nodes_conf="" names=""
  PATH=$PATH:/usr/sbin:/sbin
  [[ $(id -u) == 0 ]] || { sf_slurm_skip "Slurm's slurmd must run as root (this is uid $(id -u))"; return; }
  for p in munged slurmctld slurmd srun sinfo scontrol squeue; do
    command -v "$p" >/dev/null 2>&1 ||
      { sf_slurm_skip "no '$p' (Debian's slurm-wlm and munge; tools/test.sh installs them)"; return; }
  done
  SF_SLURM_DIR=$dir
  mkdir -p "$dir/munge" "$dir/ctld" "$dir/spool" "$dir/log" || return 1
  chmod 0700 "$dir/munge"
  # munged insists on a key only its owner can read, 32 bytes or more
  head -c 1024 /dev/urandom >"$dir/munge/munge.key" && chmod 0400 "$dir/munge/munge.key" || return 1
  SF_SLURM_MUNGE_SOCKET=$dir/munge/munge.socket
  export SF_SLURM_MUNGE_SOCKET
  munged --force --socket="$SF_SLURM_MUNGE_SOCKET" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" >"$dir/log/munged.out" 2>&1 ||
    { sf_slurm_skip "munged does not start: $(tail -n 1 "$dir/log/munged.out")"; return; }
  SF_SLURM_PIDFILES+=("$dir/munge/munged.pid")

  node=$(hostname -s)
  cpus=$(nproc)
  # ports nobody listens on (slurmctld's and each slurmd's), apart from the usual 6817/6818
  for i in $(seq 50); do
    port=$((64100 + RANDOM % 1000)) # above the executor ports of lib.sh (to 64000) and the ephemeral ones
    ss -Htln "sport >= :$port and sport <= :$((port + nnodes))" 2>/dev/null | grep -q . || break
  done
  if ((nnodes == 1)); then
    nodes_conf="NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN"
    names=$node
  else
    for ((n = 1; n <= nnodes; n++)); do
      nodes_conf+="NodeName=sfn$n NodeHostname=$node NodeAddr=127.0.0.1 Port=$((port + n)) CPUs=1 State=UNKNOWN"$'\n'
      names+="${names:+,}sfn$n"
    done
  fi
  cat >"$dir/slurm.conf" <<CONF
# made by tests/slurm/cluster.sh: one node, this machine, for the tests
ClusterName=sftest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SF_SLURM_MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
MinJobAge=10
PlugStackConfig=$dir/plugstack.conf
$nodes_conf
PartitionName=sftest Nodes=$names Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
  : >"$dir/plugstack.conf"
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF" -i >"$dir/log/slurmctld.out" 2>&1 ||
    { sf_slurm_skip "slurmctld does not start: $(tail -n 1 "$dir/log/slurmctld.out")"; return; }
  sf_slurm_wait_pid "$dir/slurmctld.pid" && SF_SLURM_PIDFILES+=("$dir/slurmctld.pid")
  for n in ${names//,/ }; do
    slurmd -f "$SLURM_CONF" -N "$n" >"$dir/log/slurmd-$n.out" 2>&1 ||
      { sf_slurm_skip "slurmd does not start for node '$n': $(tail -n 1 "$dir/log/slurmd-$n.out")"; return; }
    sf_slurm_wait_pid "$dir/slurmd-$n.pid" && SF_SLURM_PIDFILES+=("$dir/slurmd-$n.pid")
  done
  # the nodes register, and the controller calls them idle
  for i in $(seq 300); do
    [[ $(sinfo -h -N -o %T 2>/dev/null | sort -u) == idle ]] && return 0
    sleep 0.1
  done
  sf_slurm_skip "the Slurm nodes '$names' are not idle after 30 s (sinfo: $(sinfo -h -N -o '%N %T' 2>&1 | tr '\n' ' ')); $(sf_slurm_logs | tail -n 3 | tr '\n' ' ')"
}

sf_slurm_wait_pid() { # PIDFILE: waits up to 5 s for a daemon's pid file
  local i
  for i in $(seq 50); do
    [[ -s $1 ]] && return 0
    sleep 0.1
  done
  return 1
}

sf_slurm_stop() {
  local f pid i
  for f in "${SF_SLURM_PIDFILES[@]}"; do
    pid=$(cat "$f" 2>/dev/null) && [[ $pid =~ ^[0-9]+$ ]] && kill -TERM "$pid" 2>/dev/null
  done
  for f in "${SF_SLURM_PIDFILES[@]}"; do
    pid=$(cat "$f" 2>/dev/null) && [[ $pid =~ ^[0-9]+$ ]] || continue
    for i in $(seq 50); do
      sf_slurm_alive "$pid" || break
      sleep 0.1
    done
    sf_slurm_alive "$pid" && kill -KILL "$pid" 2>/dev/null
  done
  SF_SLURM_PIDFILES=()
  return 0
}

# sf_slurm_alive PID: the process runs (a zombie does not: it ended, its parent did not reap it)
sf_slurm_alive() {
  local state
  read -r _ _ state _ <"/proc/$1/stat" 2>/dev/null || return 1
  [[ $state != Z ]]
}

sf_slurm_logs() {
  local f
  for f in "$SF_SLURM_DIR"/log/*; do
    [[ -s $f ]] || continue
    echo "--- $f"
    tail -n 20 "$f"
  done
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 DIR [NODES]" >&2
    exit 2
  fi
  mkdir -p "$1" && dir=$(cd "$1" && pwd) || exit 2
  trap sf_slurm_stop EXIT
  trap 'exit 130' INT TERM
  sf_slurm_start "$dir" "${2:-1}" || { rc=$?; sf_slurm_logs >&2; exit $rc; }
  echo "Slurm is up: export SLURM_CONF=$SLURM_CONF (Ctrl-C stops it)"
  while :; do sleep 3600 & wait $!; done
fi
