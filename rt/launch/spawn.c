/* spawn.c: the helpers sf-launch's core lends its backends (launch.h): starting a process with its
 * output on a pipe, and the shell text that hands the secrets to a remote executor. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void append(char **buf, const char *text) {
  size_t have = *buf ? strlen(*buf) : 0, add = strlen(text);
  char *b = realloc(*buf, have + add + 1);
  if (!b) abort();
  memcpy(b + have, text, add + 1);
  *buf = b;
}

void launch_shell_quote(char **buf, const char *word) {
  append(buf, "'");
  for (const char *p = word; *p; p++) {
    if (*p == '\'') {
      append(buf, "'\\''");
    } else {
      char c[2] = {*p, 0};
      append(buf, c);
    }
  }
  append(buf, "'");
}

/* write all of LEN bytes (a pipe the child reads; EPIPE when it went away: the rest is dropped) */
static void write_all(int fd, const char *text, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, text, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text += n;
    len -= (size_t)n;
  }
}

int launch_spawn(char *const *argv, char *const *env, const char *cwd, const char *input, LaunchProc *p) {
  int out[2], st[2], in[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) < 0) goto fail;
  if (pipe2(st, O_CLOEXEC) < 0) {
    close(out[0]), close(out[1]);
    goto fail;
  }
  if (input && pipe2(in, O_CLOEXEC) < 0) {
    close(out[0]), close(out[1]), close(st[0]), close(st[1]);
    goto fail;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(out[0]), close(out[1]), close(st[0]), close(st[1]);
    if (input) close(in[0]), close(in[1]);
    goto fail;
  }
  if (pid == 0) {
    /* the child: what an executor started from a shell sees, its output on the pipe */
    sigset_t none;
    sigemptyset(&none);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int fd0 = input ? in[0] : open("/dev/null", O_RDONLY);
    int stage = 0; /* 0 stdin, 1 cwd, 2 exec */
    if (fd0 < 0 || dup2(fd0, 0) < 0 || dup2(out[1], 1) < 0 || dup2(out[1], 2) < 0) goto child_fail;
    stage = 1;
    if (cwd && chdir(cwd) < 0) goto child_fail;
    stage = 2;
    for (char *const *e = env; e && *e; e++) putenv(*e);
    execvp(argv[0], argv);
  child_fail:;
    int report[2] = {stage, errno};
    write_all(st[1], (const char *)report, sizeof report);
    _exit(127);
  }
  close(out[1]);
  close(st[1]);
  if (input) close(in[0]);
  int report[2];
  ssize_t n;
  do n = read(st[0], report, sizeof report);
  while (n < 0 && errno == EINTR);
  close(st[0]);
  if (n > 0) { /* the exec failed: the child said why and exits */
    waitpid(pid, NULL, 0);
    close(out[0]);
    if (input) close(in[1]);
    if (report[0] == 1)
      fprintf(stderr, "sf-launch: error: cannot run '%s' in '%s': %s\n", argv[0], cwd, strerror(report[1]));
    else
      fprintf(stderr, "sf-launch: error: cannot run '%s': %s\n", argv[0], strerror(report[1]));
    return -1;
  }
  if (input) {
    write_all(in[1], input, strlen(input));
    close(in[1]);
  }
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  p->pid = pid;
  p->out = out[0];
  return 0;
fail:
  fprintf(stderr, "sf-launch: error: cannot run '%s': %s\n", argv[0], strerror(errno));
  return -1;
}

char *launch_secrets_text(const LaunchSecrets *s) {
  char *t = NULL;
  append(&t, s->token);
  append(&t, "\n");
  if (s->ca) {
    append(&t, s->ca);
    append(&t, s->cert);
    append(&t, s->key);
  }
  return t;
}

char *launch_remote_command(const LaunchJob *job, const LaunchStart *s) {
  char *c = NULL;
  append(&c, "cd ");
  launch_shell_quote(&c, job->workdir);
  append(&c, " && IFS= read -r SF_TOKEN && export SF_TOKEN");
  if (!job->plaintext)
    append(&c, " && pem() { v=; while IFS= read -r l; do v=\"$v$l\n\"; case $l in -----END*) break ;; esac; done;"
               " printf %s \"$v\"; } && SF_TLS_CA=$(pem) && SF_TLS_CERT=$(pem) && SF_TLS_KEY=$(pem)"
               " && export SF_TLS_CA SF_TLS_CERT SF_TLS_KEY");
  append(&c, " && exec ");
  launch_shell_quote(&c, job->exec_path);
  for (char *const *a = s->args; *a; a++) {
    append(&c, " ");
    launch_shell_quote(&c, *a);
  }
  return c;
}

char **launch_ssh_words(const LaunchJob *job, int n, int *count) {
  int cap = n + 4, k = 0;
  char **w = calloc((size_t)cap + 1, sizeof *w);
  const char *p = job->ssh_cmd;
  while (*p) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    if (!*p) break;
    const char *e = p;
    while (*e && *e != ' ' && *e != '\t' && *e != '\n') e++;
    if (k + n + 1 > cap) {
      cap *= 2;
      w = realloc(w, ((size_t)cap + 1) * sizeof *w);
    }
    w[k++] = strndup(p, (size_t)(e - p));
    p = e;
  }
  for (int i = k; i <= k + n; i++) w[i] = NULL;
  if (count) *count = k;
  return w;
}

char *launch_address_host(const char *address) {
  const char *colon = strrchr(address, ':');
  return strndup(address, colon ? (size_t)(colon - address) : strlen(address));
}
