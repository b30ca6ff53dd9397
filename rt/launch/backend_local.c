/* backend_local.c: an executor as a process of this machine, in --workdir, the token and TLS
 * material in its environment (launch.h). */
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NAME=VALUE, VALUE without its trailing line ends (as the shell's $(cat FILE) gave it) */
static char *env_entry(const char *name, const char *value) {
  size_t len = strlen(value);
  while (len > 0 && value[len - 1] == '\n') len--;
  size_t n = strlen(name) + 1 + len + 1;
  char *e = malloc(n);
  snprintf(e, n, "%s=%.*s", name, (int)len, value);
  return e;
}

static int local_start(const LaunchJob *job, const LaunchStart *s, LaunchProc *p) {
  int nargs = 0;
  while (s->args[nargs]) nargs++;
  char **argv = calloc((size_t)nargs + 2, sizeof *argv);
  argv[0] = (char *)job->exec_path;
  for (int i = 0; i < nargs; i++) argv[i + 1] = s->args[i];
  char *env[5] = {0};
  int k = 0;
  env[k++] = env_entry("SF_TOKEN", s->secrets->token);
  if (s->secrets->ca) {
    env[k++] = env_entry("SF_TLS_CA", s->secrets->ca);
    env[k++] = env_entry("SF_TLS_CERT", s->secrets->cert);
    env[k++] = env_entry("SF_TLS_KEY", s->secrets->key);
  }
  int rc = launch_spawn(argv, env, job->workdir, NULL, p);
  for (int i = 0; i < k; i++) {
    memset(env[i], 0, strlen(env[i])); /* the key leaves this process's memory with the child */
    free(env[i]);
  }
  free(argv);
  return rc;
}

const LaunchBackend launch_local = {.name = "local", .prepare = NULL, .start = local_start};
