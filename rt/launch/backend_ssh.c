/* backend_ssh.c: an executor on another machine through --ssh CMD (default ssh), called as
 * CMD ADDRESS 'shell command'; the secrets travel on its standard input (launch.h). */
#include "launch.h"

#include <stdlib.h>
#include <string.h>

static int ssh_start(const LaunchJob *job, const LaunchStart *s, LaunchProc *p) {
  int k;
  char **argv = launch_ssh_words(job, 2, &k);
  argv[k] = launch_address_host(job->hosts[s->host].address);
  argv[k + 1] = launch_remote_command(job, s);
  char *input = launch_secrets_text(s->secrets);
  int rc = launch_spawn(argv, NULL, NULL, input, p);
  memset(input, 0, strlen(input));
  free(input);
  for (int i = 0; argv[i]; i++) free(argv[i]);
  free(argv);
  return rc;
}

const LaunchBackend launch_ssh = {.name = "ssh", .prepare = NULL, .start = ssh_start};
