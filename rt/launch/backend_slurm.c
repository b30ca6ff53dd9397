/* backend_slurm.c: executors as tasks of a Slurm job step (launch.h). Not built in yet: --via
 * slurm is refused. */
#include "launch.h"

#include <stdio.h>

static int slurm_prepare(LaunchJob *job) {
  fprintf(stderr, "sf-launch: --via slurm: not built in\n");
  return -1;
}

static int slurm_start(const LaunchJob *job, const LaunchStart *s, LaunchProc *p) { return -1; }

const LaunchBackend launch_slurm = {.name = "slurm", .prepare = slurm_prepare, .start = slurm_start};
