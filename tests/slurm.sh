#!/usr/bin/env bash
# tests/slurm.sh BUILD_DIR SOURCE_DIR
#
# sf-launch --via slurm on a real Slurm: tests/slurm/cluster.sh starts munged, slurmctld and slurmd
# (Debian's slurm-wlm and munge, which tools/test.sh installs) in a scratch directory, one node (this
# machine) with oversubscription, and stops them at exit, on failure too (trap).
#
# Cases:
#   cluster     the node is up and idle, and a step of three tasks runs on its two CPUs
#               (srun --overcommit -n 3 -N 1 --label): three labelled lines, one per task, each
#               with the task's SLURM_PROCID and the job's SLURM_JOB_NODELIST (this node)
#
# Needs root (slurmd runs as root): without it, or without Slurm's programs, or when a daemon does
# not start, it prints "SKIP: ..." and exits 77.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
source "$src/tests/slurm/cluster.sh"

on_exit() {
  local rc=$?
  sf_slurm_stop
  sf_stop_all
  return $rc
}
trap on_exit EXIT
trap 'exit 130' INT TERM

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

echo "slurm: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED -eq 0 ]]
