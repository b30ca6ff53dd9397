/* backend_slurm.c: executors as the tasks of one Slurm job step (launch.h), `--via slurm`.
 *
 * prepare: the allocation is the one sf-launch runs in (SLURM_JOB_ID, SLURM_JOB_NODELIST: inside
 * salloc or sbatch), else one made here with `salloc --no-shell --ntasks=N --overcommit` and
 * released (scancel) when sf-launch exits.  Its nodes (`scontrol show hostnames`) take the graph's
 * hosts in order, host i on node i mod NODES; a host's address becomes its node's NodeAddr
 * (`scontrol show node`) with the graph's port, the next port up when an earlier host of the same
 * node has it or, on a node that is this machine, something listens there; every executor is told
 * every address (hosts_changed: --hosts).
 *
 * start: the core starts executors one by one, but a Slurm step starts all its tasks at once.  So
 * start(i) makes host i's stand-in, a child of sf-launch (STAND-IN below) and its output pipe, and
 * the last host's start launches the step: a keeper process (KEEPER), not sf-launch's child (the
 * core reaps every child it has), in a session of its own (a Ctrl-C at the terminal reaches
 * sf-launch and the stand-ins, never srun, which would print a status instead), runs
 *
 *     SLURM_HOSTFILE=NODES srun --jobid=J --ntasks=N --distribution=arbitrary --overlap --label
 *         --kill-on-bad-exit=0 --wait=0 [--overcommit] sh -c TASK sf-slurm ARGS...
 *
 * (task k on the node of host k; --overcommit when a node has more hosts than the allocation has
 * CPUs there: without it the step is refused, or waits for good).  srun's standard input carries
 * every host's secrets (launch_secrets_text, one after the other), broadcast to every task (Slurm
 * has no per-task input but a file); the task's shell (TASK) skips the blocks of the hosts before
 * its own (SLURM_PROCID), keeps its own in its environment, never on a command line, and runs
 * sf-exec --host NAME ... </dev/null, then prints "MARKER status RC" (MARKER is random per launch).
 * The keeper splits srun's labelled output ("K: ...") into each host's pipe and turns the status
 * line into the stand-in's exit status.
 *
 * STAND-IN (one per host, what the core sees as the executor): waits for a byte from the keeper
 * ('S': the step started; 'X' and a status: the executor ended) and exits with that status.  A
 * SIGINT or SIGTERM it gets is passed to the keeper (before the step started it just exits
 * 128 + N), which sends it once to the whole step (`scancel --signal=SIG J.STEP`: the core only
 * ever signals every executor together).  A stand-in killed (SIGKILL, the core's kill after
 * SF_LAUNCH_KILL_AFTER s) closes its pipe to the keeper, which then kills the step.
 *
 * KEEPER states: STARTING (srun runs, no task said its step yet; a signal asked for waits, SIGKILL
 * kills srun) -> RUNNING (the step's id known from a task's "MARKER start J.S"; signals go through
 * scancel; a task's status line ends its stand-in at once (but the last one's, held until srun
 * ended: once every stand-in ended the step is over), so the core sees each executor's end
 * when it happens; a task srun says was killed ("task 1: Killed": its shell, so no status line
 * will come) is a lost host at once) -> ENDED (srun exited: every host still without a status
 * gets 137 and an error line saying its task ended without it: lost; when no task ever started,
 * status 1 and srun's own error).  When Slurm itself cancelled the step (a time limit, a node
 * failure, scancel from outside; not our own scancel --signal=TERM, which slurmstepd reports in
 * the same words), every host not yet ended is lost, even one whose executor then drained to exit
 * 0 on Slurm's SIGTERM: its output is incomplete.  sf-launch gone (its pipe to the keeper closed)
 * kills the step too, and cancels the allocation when sf-launch made it.
 *
 * Secrets: every task's memory and Slurm's I/O forwarding (not encrypted, unlike ssh) see every
 * host's key; on a network that is not trusted, run with TLS material of your own or not at all. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "sf-launch"

/* ---- the task's shell: $1 MARKER, $2 1 with TLS, $3 N, then N host names, sf-exec, the work
 * directory, and sf-exec's arguments but --host NAME ---- */
static const char task_script[] =
    "m=$1 tls=$2 n=$3; shift 3\n"
    "i=0 me=\n"
    "while [ $i -lt $n ]; do [ $i = \"$SLURM_PROCID\" ] && me=$1; i=$((i + 1)); shift; done\n"
    "exe=$1 wd=$2; shift 2\n"
    "if [ -z \"$me\" ]; then echo \"error: Slurm task '$SLURM_PROCID' has no host (of $n)\"; echo \"$m status 1\"; exit 1; fi\n"
    "pem() { v=; while IFS= read -r l; do v=\"$v$l\n\"; case $l in -----END*) break ;; esac; done; printf %s \"$v\"; }\n"
    "k=0\n"
    "while [ $k -le $SLURM_PROCID ]; do\n"
    "  IFS= read -r SF_TOKEN || { echo \"error: host '$me': no secrets on the standard input\"; echo \"$m status 1\"; exit 1; }\n"
    "  if [ $tls = 1 ]; then SF_TLS_CA=$(pem); SF_TLS_CERT=$(pem); SF_TLS_KEY=$(pem); fi\n"
    "  k=$((k + 1))\n"
    "done\n"
    "export SF_TOKEN\n"
    "[ $tls = 1 ] && export SF_TLS_CA SF_TLS_CERT SF_TLS_KEY\n"
    "cd \"$wd\" || { echo \"error: host '$me': cannot enter '$wd' on $(hostname)\"; echo \"$m status 1\"; exit 1; }\n"
    "echo \"$m start $SLURM_JOB_ID.$SLURM_STEP_ID\"\n"
    "trap : INT TERM\n"
    "\"$exe\" --host \"$me\" \"$@\" </dev/null\n"
    "rc=$?\n"
    "echo \"$m status $rc\"\n"
    "exit $rc\n";

/* ---- the launch's state ---- */
static struct {
  char *jobid;      /* the allocation */
  bool own_job;     /* made here: released at exit */
  char **node;      /* node of host i */
  bool overcommit;
  char marker[32];
  char tmpdir[256]; /* 0700: the node list srun reads */
  int parent_r;     /* the keeper's end of a pipe only sf-launch holds the other end of */
  int parent_w;
  /* the attempt being started */
  int started;      /* hosts start() has seen this attempt */
  char **rest;      /* sf-exec's arguments but --host NAME (every host's the same) */
  char *input;      /* every host's secrets, in order */
  int *out_w, *status_w, *ctrl_r;
} S = {.parent_r = -1, .parent_w = -1};

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) abort();
  return p;
}

static void append(char **buf, const char *text) {
  size_t have = *buf ? strlen(*buf) : 0, add = strlen(text);
  char *b = realloc(*buf, have + add + 1);
  if (!b) abort();
  memcpy(b + have, text, add + 1);
  *buf = b;
}

static void write_all(int fd, const char *text, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, text, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text += n;
    len -= (size_t)n;
  }
}

/* every descriptor from 3 up closed but the KEEP ones (a child that does not exec): close_range
 * over the gaps between them (one call each), else one close per descriptor */
static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
static void close_others(const int *keep, int nkeep) {
  int *k = xcalloc((size_t)nkeep + 1, sizeof *k);
  int n = 0;
  for (int j = 0; j < nkeep; j++)
    if (keep[j] >= 3) k[n++] = keep[j];
  qsort(k, (size_t)n, sizeof *k, cmp_int);
  unsigned from = 3;
  for (int j = 0; j <= n; j++) {
    unsigned to = j < n ? (unsigned)k[j] : ~0U; /* close [from, to) */
    if (to > from) {
      if (close_range(from, to - 1, 0) < 0) {
        long max = sysconf(_SC_OPEN_MAX);
        if (max < 0 || max > 65536) max = 65536;
        for (unsigned fd = from; fd < to && fd < (unsigned)max; fd++) close((int)fd);
      }
    }
    if (j < n) from = (unsigned)k[j] + 1;
  }
  free(k);
}

static void child_signals(void) {
  sigset_t none;
  sigemptyset(&none);
  signal(SIGHUP, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGCHLD, SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Runs ARGV (PATH searched) with ENV added, INPUT on its stdin (NULL: /dev/null); its stdout in
 * *OUT (malloc'd, may be NULL), its stderr in *ERR (likewise).  Its exit status, or -1 when it
 * could not run (127 from the child). */
static int run_capture(char *const *argv, const char *env, char **out, char **err) {
  int po[2], pe[2];
  if (out) *out = NULL;
  if (err) *err = NULL;
  if (pipe2(po, O_CLOEXEC) < 0) return -1;
  if (pipe2(pe, O_CLOEXEC) < 0) {
    close(po[0]), close(po[1]);
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
    return -1;
  }
  if (pid == 0) {
    child_signals();
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0), dup2(po[1], 1), dup2(pe[1], 2);
    if (env) putenv((char *)env);
    execvp(argv[0], argv);
    dprintf(2, "cannot run '%s': %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(po[1]), close(pe[1]);
  char *bufs[2] = {NULL, NULL};
  size_t lens[2] = {0, 0};
  struct pollfd pf[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
  int open_n = 2;
  while (open_n > 0) {
    if (poll(pf, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int j = 0; j < 2; j++) {
      if (pf[j].fd < 0 || !pf[j].revents) continue;
      char tmp[4096];
      ssize_t n = read(pf[j].fd, tmp, sizeof tmp);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(pf[j].fd);
        pf[j].fd = -1;
        open_n--;
        continue;
      }
      char *b = realloc(bufs[j], lens[j] + (size_t)n + 1);
      if (!b) abort();
      memcpy(b + lens[j], tmp, (size_t)n);
      lens[j] += (size_t)n;
      b[lens[j]] = 0;
      bufs[j] = b;
    }
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (out) *out = bufs[0] ? bufs[0] : strdup("");
  else free(bufs[0]);
  if (err) *err = bufs[1] ? bufs[1] : strdup("");
  else free(bufs[1]);
  if (!WIFEXITED(st)) return 128 + WTERMSIG(st);
  return WEXITSTATUS(st) == 127 ? -1 : WEXITSTATUS(st);
}

/* the first line of TEXT (for a message), in a static buffer */
static const char *first_line(const char *text) {
  static char line[512];
  snprintf(line, sizeof line, "%.*s", (int)strcspn(text ? text : "", "\n"), text ? text : "");
  return line;
}

static void release_job(void) {
  if (!S.own_job || !S.jobid) return;
  char *argv[] = {"scancel", S.jobid, NULL};
  run_capture(argv, NULL, NULL, NULL);
  S.own_job = false;
}

static void remove_tmpdir(void) {
  if (!S.tmpdir[0]) return;
  char path[300];
  snprintf(path, sizeof path, "%s/nodes", S.tmpdir);
  unlink(path);
  rmdir(S.tmpdir);
  S.tmpdir[0] = 0;
}

static pid_t owner; /* sf-launch itself: its forked children must not release the job */
static void at_exit(void) {
  if (getpid() != owner) return;
  release_job();
  remove_tmpdir();
}

/* CPUs of node NODE (its index IDX in the job's list) in SLURM_JOB_CPUS_PER_NODE ("2(x3),1"); 0
 * when not known */
static int cpus_of(int idx) {
  const char *spec = getenv("SLURM_JOB_CPUS_PER_NODE");
  if (!spec || !*spec) return 0;
  int at = 0;
  const char *p = spec;
  while (*p) {
    char *end;
    long c = strtol(p, &end, 10);
    if (end == p) return 0;
    long times = 1;
    p = end;
    if (*p == '(') {
      if (p[1] != 'x') return 0;
      times = strtol(p + 2, &end, 10);
      if (*end != ')') return 0;
      p = end + 1;
    }
    if (idx < at + times) return (int)c;
    at += (int)times;
    if (*p == ',') p++;
    else if (*p) return 0;
  }
  return 0;
}

/* the value of KEY= in a line of `scontrol show node -o` (malloc'd), or NULL */
static char *field(const char *line, size_t len, const char *key) {
  size_t klen = strlen(key);
  for (size_t i = 0; i + klen < len; i++) {
    if ((i == 0 || line[i - 1] == ' ') && strncmp(line + i, key, klen) == 0) {
      size_t v = i + klen, e = v;
      while (e < len && line[e] != ' ' && line[e] != '\n') e++;
      return strndup(line + v, e - v);
    }
  }
  return NULL;
}

/* Something listens on ADDRESS:PORT, ADDRESS being one of this machine's (a node of the job can
 * be sf-launch's own): a bind there fails with EADDRINUSE.  Another machine's address cannot be
 * bound (EADDRNOTAVAIL): not known, so not taken. */
static bool port_taken_here(const char *address, int port) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
  struct addrinfo *res = NULL;
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  if (getaddrinfo(address, service, &hints, &res) != 0) return false;
  bool taken = false;
  for (struct addrinfo *ai = res; ai && !taken; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); /* as the executor binds */
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno == EADDRINUSE) taken = true;
    close(fd);
  }
  freeaddrinfo(res);
  return taken;
}

static int slurm_prepare(LaunchJob *job) {
  owner = getpid();
  atexit(at_exit);
  unsigned char rnd[8];
  if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) memset(rnd, 0x5a, sizeof rnd);
  int k = snprintf(S.marker, sizeof S.marker, "sf-slurm-");
  for (int i = 0; i < 8; i++) k += snprintf(S.marker + k, sizeof S.marker - (size_t)k, "%02x", rnd[i]);

  const char *jobid = getenv("SLURM_JOB_ID");
  char *nodelist = NULL;
  if (jobid && *jobid) {
    S.jobid = strdup(jobid);
    const char *nl = getenv("SLURM_JOB_NODELIST");
    if (nl && *nl) nodelist = strdup(nl);
  } else {
    /* an allocation of our own: one task per host, oversubscribing what Slurm gives (salloc
     * exits once it is granted; released at exit) */
    char ntasks[32];
    snprintf(ntasks, sizeof ntasks, "--ntasks=%d", job->nhosts);
    char *argv[] = {"salloc", "--no-shell", ntasks, "--overcommit", "--job-name=sf-launch", NULL};
    char *out, *err;
    fprintf(stderr, PROG ": slurm: no allocation (SLURM_JOB_ID): making one (salloc %s --overcommit)\n", ntasks);
    int rc = run_capture(argv, NULL, &out, &err);
    const char *g = err ? strstr(err, "Granted job allocation ") : NULL;
    if (rc != 0 || !g) {
      fprintf(stderr, PROG ": error: --via slurm: salloc failed: %s\n",
              rc < 0 ? "cannot run salloc (is Slurm installed?)" : first_line(err && *err ? err : out));
      free(out), free(err);
      return -1;
    }
    S.jobid = strndup(g + strlen("Granted job allocation "), strspn(g + strlen("Granted job allocation "), "0123456789"));
    S.own_job = true;
    free(out), free(err);
  }
  if (!nodelist) {
    char *argv[] = {"squeue", "-h", "-j", S.jobid, "-o", "%N", NULL};
    char *out, *err;
    int rc = run_capture(argv, NULL, &out, &err);
    if (rc != 0 || !out || !*first_line(out)) {
      fprintf(stderr, PROG ": error: --via slurm: cannot find the nodes of Slurm job %s: %s\n", S.jobid,
              rc < 0 ? "cannot run squeue" : first_line(err));
      free(out), free(err);
      return -1;
    }
    nodelist = strdup(first_line(out));
    free(out), free(err);
  }
  /* the nodes, in order */
  char *names;
  {
    char *argv[] = {"scontrol", "show", "hostnames", nodelist, NULL};
    char *err;
    int rc = run_capture(argv, NULL, &names, &err);
    if (rc != 0) {
      fprintf(stderr, PROG ": error: --via slurm: scontrol show hostnames '%s' failed: %s\n", nodelist,
              rc < 0 ? "cannot run scontrol" : first_line(err));
      free(names), free(err), free(nodelist);
      return -1;
    }
    free(err);
  }
  int nnodes = 0;
  char **nodes = NULL;
  for (char *save = NULL, *t = strtok_r(names, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
    nodes = realloc(nodes, (size_t)(nnodes + 1) * sizeof *nodes);
    if (!nodes) abort();
    nodes[nnodes++] = strdup(t);
  }
  free(names);
  if (nnodes == 0) {
    fprintf(stderr, PROG ": error: --via slurm: Slurm job %s has no nodes ('%s')\n", S.jobid, nodelist);
    free(nodelist);
    return -1;
  }
  /* their addresses (NodeAddr; the name when scontrol does not say) */
  char **addr = xcalloc((size_t)nnodes, sizeof *addr);
  {
    char *argv[] = {"scontrol", "show", "node", "-o", nodelist, NULL};
    char *out = NULL;
    if (run_capture(argv, NULL, &out, NULL) == 0) {
      for (char *line = out; line && *line;) {
        size_t len = strcspn(line, "\n");
        char *name = field(line, len, "NodeName="), *a = field(line, len, "NodeAddr=");
        for (int n = 0; n < nnodes && name && a; n++)
          if (!addr[n] && strcmp(nodes[n], name) == 0) addr[n] = strdup(a);
        free(name), free(a);
        line += len + (line[len] == '\n');
      }
    }
    free(out);
  }
  free(nodelist);
  /* hosts onto nodes in order; ports from the graph, the next one up where an earlier host of
   * the node has it */
  S.node = xcalloc((size_t)job->nhosts, sizeof *S.node);
  int *port = xcalloc((size_t)job->nhosts, sizeof *port);
  int *on = xcalloc((size_t)nnodes, sizeof *on);
  char *said = NULL;
  S.overcommit = S.own_job;
  for (int i = 0; i < job->nhosts; i++) {
    int n = i % nnodes;
    S.node[i] = strdup(nodes[n]);
    on[n]++;
    const char *colon = strrchr(job->hosts[i].address, ':');
    int p = colon ? atoi(colon + 1) : 0;
    if (p <= 0 || p > 65535) p = 7000;
    const char *a = addr[n] ? addr[n] : nodes[n];
    for (int tries = 0, clash = 1; clash && tries < 1000; tries++) {
      clash = 0;
      /* an earlier host at the same address: on this node, or on another node of that address
       * (two slurmd of one machine) */
      for (int j = 0; j < i; j++) {
        const char *aj = addr[j % nnodes] ? addr[j % nnodes] : nodes[j % nnodes];
        if (port[j] == p && (j % nnodes == n || strcmp(aj, a) == 0)) clash = 1;
      }
      if (!clash && port_taken_here(a, p)) clash = 1;
      if (clash) p = p == 65535 ? 1024 : p + 1;
    }
    port[i] = p;
    bool v6 = strchr(a, ':') != NULL;
    size_t len = strlen(a) + 16;
    char *address = malloc(len);
    snprintf(address, len, v6 ? "[%s]:%d" : "%s:%d", a, p);
    free(job->hosts[i].address);
    job->hosts[i].address = address;
    char part[512];
    snprintf(part, sizeof part, "%s%s on %s (%s)", i ? ", " : "", job->hosts[i].name, nodes[n], address);
    append(&said, part);
  }
  for (int n = 0; n < nnodes; n++) { /* CPUs not known: as if too few */
    int c = cpus_of(n);
    if (on[n] > 0 && (c == 0 || on[n] > c)) S.overcommit = true;
  }
  job->hosts_changed = true;
  fprintf(stderr, PROG ": slurm: job %s: %s\n", S.jobid, said);
  free(said);
  for (int n = 0; n < nnodes; n++) free(nodes[n]), free(addr[n]);
  free(nodes), free(addr), free(port), free(on);

  /* the list of nodes srun places the tasks by (arbitrary distribution), in a 0700 directory */
  snprintf(S.tmpdir, sizeof S.tmpdir, "%s", "/tmp/sf-launch-slurm.XXXXXX");
  const char *tmp = getenv("TMPDIR");
  if (tmp && *tmp && strlen(tmp) < 200) snprintf(S.tmpdir, sizeof S.tmpdir, "%s/sf-launch-slurm.XXXXXX", tmp);
  if (!mkdtemp(S.tmpdir)) {
    fprintf(stderr, PROG ": error: --via slurm: cannot make a temporary directory: %s\n", strerror(errno));
    S.tmpdir[0] = 0;
    return -1;
  }
  char path[300];
  snprintf(path, sizeof path, "%s/nodes", S.tmpdir);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, PROG ": error: --via slurm: cannot write '%s': %s\n", path, strerror(errno));
    return -1;
  }
  for (int i = 0; i < job->nhosts; i++) fprintf(f, "%s\n", S.node[i]);
  fclose(f);
  int pp[2];
  if (pipe2(pp, O_CLOEXEC) < 0) {
    fprintf(stderr, PROG ": error: --via slurm: pipe: %s\n", strerror(errno));
    return -1;
  }
  S.parent_r = pp[0];
  S.parent_w = pp[1];
  return 0;
}

/* ---- the stand-in ---- */
static volatile sig_atomic_t standin_sig;
static void standin_on_signal(int sig) { standin_sig = sig; }

static _Noreturn void standin(int status_r, int ctrl_w) {
  int keep[2] = {status_r, ctrl_w};
  close_others(keep, 2);
  child_signals();
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa = {.sa_handler = standin_on_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigset_t block, none;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigemptyset(&none);
  sigprocmask(SIG_BLOCK, &block, NULL);
  bool started = false;
  for (;;) {
    if (standin_sig) {
      int sig = standin_sig;
      standin_sig = 0;
      if (!started) _exit(128 + sig);
      unsigned char b = (unsigned char)sig;
      write_all(ctrl_w, (const char *)&b, 1);
    }
    struct pollfd pf = {status_r, POLLIN, 0};
    if (ppoll(&pf, 1, NULL, &none) < 0) continue; /* EINTR: a signal */
    unsigned char b[2];
    ssize_t n = read(status_r, b, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(137); /* the keeper is gone without a status */
    if (b[0] == 'S') {
      started = true;
    } else if (b[0] == 'X') {
      do n = read(status_r, b + 1, 1);
      while (n < 0 && errno == EINTR);
      _exit(n == 1 ? b[1] : 137);
    }
  }
}

/* ---- the keeper ---- */
typedef struct Line {
  char *buf;
  size_t len, cap;
} Line;

static void line_add(Line *l, const char *p, size_t n) {
  if (l->len + n + 1 > l->cap) {
    l->cap = (l->len + n + 1) * 2;
    l->buf = realloc(l->buf, l->cap);
    if (!l->buf) abort();
  }
  memcpy(l->buf + l->len, p, n);
  l->len += n;
  l->buf[l->len] = 0;
}

static struct {
  int n;
  int *out_w, *status_w, *ctrl_r;
  int *status; /* -1 until its line came */
  bool *told;   /* its stand-in has its status (it exited with it) */
  bool *standin_gone;
  char step[64];
  pid_t srun;
  bool sent[65];
  int pending[4];
  int npending;
  bool killed_by_us, cancelled;
  char *cancel_line;
  char *srun_error; /* srun's own last error line ("srun: error: Unable to create step ...") */
  char **names;
  bool ending;    /* srun ended: tell() tells at once, the last host too */
  char *held_msg; /* the last host's message, held with its status until srun ended */
} K;

static void keeper_say(const char *fmt, const char *a) {
  dprintf(2, PROG ": slurm: ");
  dprintf(2, fmt, a);
  dprintf(2, "\n");
}

static void keeper_signal_now(int sig) {
  if (sig < 1 || sig > 64 || K.sent[sig]) return;
  K.sent[sig] = true;
  if (sig == SIGKILL) K.killed_by_us = true;
  if (!K.step[0]) { /* the step not started yet: srun itself */
    kill(K.srun, sig == SIGKILL ? SIGKILL : SIGTERM);
    return;
  }
  char opt[32];
  snprintf(opt, sizeof opt, "--signal=%d", sig);
  char *argv[] = {"scancel", opt, K.step, NULL};
  char *err = NULL;
  int rc = run_capture(argv, NULL, NULL, &err);
  /* "Invalid job id specified": the step ended meanwhile, nothing left to signal */
  if (rc != 0 && !(err && strstr(err, "Invalid job id")))
    keeper_say("scancel failed: %s", rc < 0 ? "cannot run scancel" : first_line(err));
  free(err);
}

static void keeper_signal(int sig) {
  if (K.step[0] || sig == SIGKILL) {
    keeper_signal_now(sig);
  } else if (K.npending < 4) {
    K.pending[K.npending++] = sig;
  }
}

/* host I's stand-in exits with STATUS, after MSG (may be NULL) in its output: at once, so that
 * sf-launch sees an executor's end when it happens, not when the whole step ends; its output pipe
 * stays open until srun ends (the task's stderr comes apart, through srun's) */
static void tell(int i, int status, const char *msg) {
  if (K.told[i]) return;
  K.status[i] = status;
  int untold = 0;
  for (int j = 0; j < K.n; j++) untold += !K.told[j];
  if (untold == 1 && !K.ending) { /* the last: once srun ended, so that when every stand-in has */
    free(K.held_msg);            /* ended the step is over (before a restart or sf-launch's exit) */
    K.held_msg = msg ? strdup(msg) : NULL;
    return;
  }
  K.told[i] = true;
  if (msg) write_all(K.out_w[i], msg, strlen(msg));
  unsigned char x[2] = {'X', (unsigned char)status};
  write_all(K.status_w[i], (const char *)x, 2);
  close(K.status_w[i]);
  K.status_w[i] = -1;
}

/* host I's reason when Slurm itself ended the step (static) */
static const char *slurm_ended(int i) {
  static char msg[768];
  snprintf(msg, sizeof msg, "error: host '%s': Slurm ended its step (%s): lost\n", K.names[i],
           K.cancel_line ? K.cancel_line : "step cancelled");
  return msg;
}

/* "srun: error: NODE: task 1: Killed", "...: tasks 0,2-3: Terminated": a task's shell was killed,
 * so its status line will never come: those hosts are lost now (they are not when sf-launch
 * killed the step) */
static void tasks_killed(const char *line) {
  const char *p = strstr(line, ": task");
  if (!p || K.killed_by_us) return;
  p += 6;
  if (*p == 's') p++;
  while (*p == ' ') p++;
  while (*p >= '0' && *p <= '9') {
    char *end;
    long a = strtol(p, &end, 10), b = a;
    if (*end == '-') b = strtol(end + 1, &end, 10);
    for (long t = a; t <= b && t < K.n; t++) {
      if (t < 0 || K.told[t]) continue;
      char msg[256];
      snprintf(msg, sizeof msg, "error: host '%s': its Slurm task was killed (%s): lost\n", K.names[t],
               strstr(line, ": Killed") ? "SIGKILL" : "SIGTERM");
      tell((int)t, 137, K.cancelled ? slurm_ended((int)t) : msg);
    }
    p = end;
    if (*p == ',') p++;
  }
}

/* one line of srun's output (stdout or stderr): a task's, "K: text", else srun's own */
static void keeper_line(char *line, size_t len) {
  size_t i = 0;
  while (i < len && line[i] == ' ') i++;
  size_t d = i;
  while (i < len && line[i] >= '0' && line[i] <= '9') i++;
  if (i > d && i + 1 < len + 1 && i < len && line[i] == ':' && (i + 1 == len || line[i + 1] == ' ')) {
    int task = atoi(line + d);
    const char *text = line + i + (i + 1 < len ? 2 : 1);
    size_t tlen = len - (size_t)(text - line);
    size_t mlen = strlen(S.marker);
    if (task >= 0 && task < K.n) {
      if (tlen > mlen + 1 && strncmp(text, S.marker, mlen) == 0 && text[mlen] == ' ') {
        const char *what = text + mlen + 1;
        if (strncmp(what, "start ", 6) == 0 && !K.step[0]) {
          snprintf(K.step, sizeof K.step, "%.*s", (int)(tlen - mlen - 7), what + 6);
          for (int j = 0; j < K.npending; j++) keeper_signal_now(K.pending[j]);
          K.npending = 0;
        } else if (strncmp(what, "status ", 7) == 0) {
          if (K.cancelled && !K.killed_by_us) /* even a drain to 0 on Slurm's SIGTERM: cut short */
            tell(task, 137, slurm_ended(task));
          else
            tell(task, atoi(what + 7) & 0xff, NULL);
        }
        return;
      }
      const char *stars = strstr(text, "*** ");
      if (stars && strstr(text, "CANCELLED")) { /* slurmstepd's word on the step: said once */
        /* our own scancel --signal=TERM (a drain) reads so too, and only signals the tasks */
        if (K.sent[SIGTERM]) return;
        if (!K.cancel_line) dprintf(2, PROG ": slurm: %.*s\n", (int)tlen, text);
        K.cancelled = true;
        if (!K.cancel_line) {
          const char *e = strstr(stars + 4, " ***");
          K.cancel_line = strndup(stars + 4, e ? (size_t)(e - stars - 4) : strlen(stars + 4));
        }
        return;
      }
      char *copy = malloc(tlen + 1);
      memcpy(copy, text, tlen);
      copy[tlen] = '\n';
      write_all(K.out_w[task], copy, tlen + 1);
      free(copy);
      return;
    }
  }
  if ((strstr(line, "Job step aborted") || strstr(line, "forcing job termination") || strstr(line, "CANCELLED")) &&
      !K.sent[SIGTERM])
    K.cancelled = true;
  /* "srun: error: NODE: tasks 0-2: Exited with exit code 1", "...: task 1: Killed": the stand-ins
   * tell each executor's end, in the core's words */
  if (strncmp(line, "srun: error: ", 13) == 0 && strstr(line, ": task") &&
      (strstr(line, ": Exited with exit code ") || strstr(line, ": Killed") || strstr(line, ": Terminated"))) {
    if (!strstr(line, ": Exited with exit code ")) tasks_killed(line);
    return;
  }
  if (strstr(line, "error")) {
    free(K.srun_error);
    K.srun_error = strndup(line, len);
  }
  dprintf(2, PROG ": slurm: %.*s\n", (int)len, line);
}

static void keeper_read(int fd, Line *l, bool *open) {
  char tmp[8192];
  ssize_t n = read(fd, tmp, sizeof tmp);
  if (n < 0 && errno == EINTR) return;
  if (n <= 0) {
    if (l->len) keeper_line(l->buf, l->len);
    l->len = 0;
    *open = false;
    return;
  }
  line_add(l, tmp, (size_t)n);
  char *start = l->buf, *nl;
  while ((nl = memchr(start, '\n', l->len - (size_t)(start - l->buf)))) {
    *nl = 0;
    keeper_line(start, (size_t)(nl - start));
    start = nl + 1;
  }
  size_t rest = l->len - (size_t)(start - l->buf);
  memmove(l->buf, start, rest);
  l->len = rest;
}

static _Noreturn void keeper(const LaunchJob *job) {
  int n = job->nhosts;
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
    keeper_say("pipe: %s", strerror(errno));
    _exit(1);
  }
  {
    int nkeep = 3 * n + 7;
    int *keep = xcalloc((size_t)nkeep, sizeof *keep);
    int k = 0;
    for (int i = 0; i < n; i++) keep[k++] = S.out_w[i], keep[k++] = S.status_w[i], keep[k++] = S.ctrl_r[i];
    keep[k++] = S.parent_r;
    keep[k++] = in[0], keep[k++] = in[1], keep[k++] = out[0], keep[k++] = out[1];
    keep[k++] = err[0], keep[k++] = err[1];
    close_others(keep, k);
    free(keep);
  }
  child_signals();
  /* it ends when srun does: signals reach it as the stand-ins' messages, sf-launch's end as its
   * pipe's; one sent to it by name (pkill sf-launch) must not leave the step unwatched */
  signal(SIGPIPE, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  setsid();
  K.n = n;
  K.out_w = S.out_w, K.status_w = S.status_w, K.ctrl_r = S.ctrl_r;
  K.status = xcalloc((size_t)n, sizeof *K.status);
  K.told = xcalloc((size_t)n, sizeof *K.told);
  K.names = xcalloc((size_t)n, sizeof *K.names);
  for (int i = 0; i < n; i++) K.names[i] = job->hosts[i].name;
  K.standin_gone = xcalloc((size_t)n, sizeof *K.standin_gone);
  for (int i = 0; i < n; i++) K.status[i] = -1;

  /* srun's command line: no secret on it */
  int nrest = 0;
  while (S.rest[nrest]) nrest++;
  char **argv = xcalloc((size_t)(24 + n + nrest), sizeof *argv);
  int a = 0;
  char jobopt[64], ntasks[32], nstr[16];
  snprintf(jobopt, sizeof jobopt, "--jobid=%s", S.jobid);
  snprintf(ntasks, sizeof ntasks, "--ntasks=%d", n);
  snprintf(nstr, sizeof nstr, "%d", n);
  argv[a++] = "srun";
  argv[a++] = jobopt;
  argv[a++] = ntasks;
  argv[a++] = "--distribution=arbitrary";
  argv[a++] = "--overlap";
  argv[a++] = "--label";
  argv[a++] = "--kill-on-bad-exit=0";
  argv[a++] = "--wait=0";
  argv[a++] = "--job-name=sf-exec";
  if (S.overcommit) argv[a++] = "--overcommit";
  argv[a++] = "sh";
  argv[a++] = "-c";
  argv[a++] = (char *)task_script;
  argv[a++] = "sf-slurm";
  argv[a++] = S.marker;
  argv[a++] = job->plaintext ? "0" : "1";
  argv[a++] = nstr;
  for (int i = 0; i < n; i++) argv[a++] = job->hosts[i].name;
  argv[a++] = (char *)job->exec_path;
  argv[a++] = (char *)job->workdir;
  for (int i = 0; i < nrest; i++) argv[a++] = S.rest[i];
  argv[a] = NULL;
  char hostfile[320];
  snprintf(hostfile, sizeof hostfile, "SLURM_HOSTFILE=%s/nodes", S.tmpdir);

  pid_t pid = fork();
  if (pid < 0) {
    keeper_say("fork: %s", strerror(errno));
    _exit(1);
  }
  if (pid == 0) {
    child_signals();
    dup2(in[0], 0), dup2(out[1], 1), dup2(err[1], 2);
    putenv(hostfile);
    execvp(argv[0], argv);
    dprintf(2, "error: cannot run srun: %s\n", strerror(errno));
    _exit(127);
  }
  K.srun = pid;
  close(in[0]), close(out[1]), close(err[1]);
  write_all(in[1], S.input, strlen(S.input));
  memset(S.input, 0, strlen(S.input));
  close(in[1]);
  for (int i = 0; i < n; i++) write_all(K.status_w[i], "S", 1);

  Line lo = {0}, le = {0};
  bool oo = true, eo = true, parent = true;
  struct pollfd *pf = xcalloc((size_t)n + 3, sizeof *pf);
  while (oo || eo) {
    int m = 0;
    pf[m++] = (struct pollfd){oo ? out[0] : -1, POLLIN, 0};
    pf[m++] = (struct pollfd){eo ? err[0] : -1, POLLIN, 0};
    pf[m++] = (struct pollfd){parent ? S.parent_r : -1, POLLIN, 0};
    for (int i = 0; i < n; i++) pf[m++] = (struct pollfd){K.standin_gone[i] ? -1 : K.ctrl_r[i], POLLIN, 0};
    if (poll(pf, (nfds_t)m, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pf[0].revents) keeper_read(out[0], &lo, &oo);
    if (pf[1].revents) keeper_read(err[0], &le, &eo);
    if (pf[2].revents) { /* sf-launch is gone (killed: its atexit did not run): nobody waits */
      parent = false;
      keeper_signal(SIGKILL);
      release_job(); /* the allocation too, when sf-launch made it */
      remove_tmpdir();
    }
    for (int i = 0; i < n; i++) {
      if (!pf[3 + i].revents) continue;
      unsigned char b;
      ssize_t r = read(K.ctrl_r[i], &b, 1);
      if (r < 0 && errno == EINTR) continue;
      if (r == 1) {
        keeper_signal(b);
      } else { /* the stand-in ended: killed (SIGKILL), or it had its status */
        K.standin_gone[i] = true;
        if (K.status[i] < 0) keeper_signal(SIGKILL);
      }
    }
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  K.ending = true;
  bool slurm_kill = K.cancelled && !K.killed_by_us;
  for (int i = 0; i < n; i++) {
    int status = K.status[i];
    if (K.told[i]) { /* its stand-in ended already */
      close(K.out_w[i]);
      continue;
    }
    if (status < 0 || slurm_kill) {
      char msg[768];
      if (slurm_kill) {
        snprintf(msg, sizeof msg, "%s", slurm_ended(i));
      } else if (!K.step[0] && !K.killed_by_us) { /* no task ever started: srun's own failure */
        snprintf(msg, sizeof msg, "error: host '%s': Slurm did not start its task (%s)\n", job->hosts[i].name,
                 K.srun_error ? K.srun_error : "srun ended first");
        write_all(K.out_w[i], msg, strlen(msg));
        status = 1;
        goto told;
      } else
        snprintf(msg, sizeof msg, "error: host '%s': its Slurm task ended without the executor's status "
                 "(srun %s %d): lost\n", job->hosts[i].name, WIFEXITED(st) ? "exit status" : "killed by signal",
                 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
      if (!K.killed_by_us || slurm_kill) write_all(K.out_w[i], msg, strlen(msg));
      status = 137;
    }
  told:
    tell(i, status, !slurm_kill && K.status[i] == status ? K.held_msg : NULL);
    close(K.out_w[i]);
  }
  _exit(0);
}

/* ---- start ---- */
static void attempt_reset(int n) {
  if (S.out_w)
    for (int i = 0; i < n; i++) {
      if (S.out_w[i] >= 0) close(S.out_w[i]);
      if (S.status_w[i] >= 0) close(S.status_w[i]);
      if (S.ctrl_r[i] >= 0) close(S.ctrl_r[i]);
    }
  free(S.out_w), free(S.status_w), free(S.ctrl_r);
  S.out_w = xcalloc((size_t)n, sizeof *S.out_w);
  S.status_w = xcalloc((size_t)n, sizeof *S.status_w);
  S.ctrl_r = xcalloc((size_t)n, sizeof *S.ctrl_r);
  for (int i = 0; i < n; i++) S.out_w[i] = S.status_w[i] = S.ctrl_r[i] = -1;
  if (S.rest)
    for (int i = 0; S.rest[i]; i++) free(S.rest[i]);
  free(S.rest);
  S.rest = NULL;
  if (S.input) memset(S.input, 0, strlen(S.input));
  free(S.input);
  S.input = NULL;
  S.started = 0;
}

static int slurm_start(const LaunchJob *job, const LaunchStart *s, LaunchProc *p) {
  int n = job->nhosts;
  if (s->host == 0 || !S.out_w) attempt_reset(n);
  if (s->host != S.started) {
    fprintf(stderr, PROG ": error: --via slurm: hosts started out of order (host %d, expected %d)\n", s->host,
            S.started);
    return -1;
  }
  if (!s->args[0] || strcmp(s->args[0], "--host") != 0 || !s->args[1]) {
    fprintf(stderr, PROG ": error: --via slurm: unexpected executor arguments\n");
    return -1;
  }
  /* the arguments but --host NAME: the same for every host (one command line for the step) */
  int nrest = 0;
  while (s->args[2 + nrest]) nrest++;
  if (S.rest) {
    bool same = true;
    int j = 0;
    for (; S.rest[j] && same; j++) same = j < nrest && strcmp(S.rest[j], s->args[2 + j]) == 0;
    if (!same || j != nrest) {
      fprintf(stderr, PROG ": error: --via slurm: host '%s' has other executor arguments than the hosts "
              "before it (one step runs one command line)\n", job->hosts[s->host].name);
      return -1;
    }
    for (int i = 0; S.rest[i]; i++) free(S.rest[i]);
  }
  free(S.rest);
  S.rest = xcalloc((size_t)nrest + 1, sizeof *S.rest);
  for (int i = 0; i < nrest; i++) S.rest[i] = strdup(s->args[2 + i]);
  char *text = launch_secrets_text(s->secrets);
  append(&S.input, text);
  if (*text && text[strlen(text) - 1] != '\n') append(&S.input, "\n"); /* the next host's starts a line */
  memset(text, 0, strlen(text));
  free(text);

  int o[2], st[2], c[2];
  if (pipe2(o, O_CLOEXEC) < 0) goto fail;
  if (pipe2(st, O_CLOEXEC) < 0) {
    close(o[0]), close(o[1]);
    goto fail;
  }
  if (pipe2(c, O_CLOEXEC) < 0) {
    close(o[0]), close(o[1]), close(st[0]), close(st[1]);
    goto fail;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(o[0]), close(o[1]), close(st[0]), close(st[1]), close(c[0]), close(c[1]);
    goto fail;
  }
  if (pid == 0) standin(st[0], c[1]);
  close(st[0]), close(c[1]);
  S.out_w[s->host] = o[1];
  S.status_w[s->host] = st[1];
  S.ctrl_r[s->host] = c[0];
  fcntl(o[0], F_SETFL, fcntl(o[0], F_GETFL) | O_NONBLOCK);
  p->pid = pid;
  p->out = o[0];
  S.started++;

  if (S.started == n) { /* the last host: the step */
    pid_t mid = fork();
    if (mid < 0) goto fail_step;
    if (mid == 0) {
      if (fork() == 0) keeper(job);
      _exit(0);
    }
    while (waitpid(mid, NULL, 0) < 0 && errno == EINTR) {}
    for (int i = 0; i < n; i++) { /* the keeper's now */
      close(S.out_w[i]), close(S.status_w[i]), close(S.ctrl_r[i]);
      S.out_w[i] = S.status_w[i] = S.ctrl_r[i] = -1;
    }
    memset(S.input, 0, strlen(S.input));
  }
  return 0;
fail:
  fprintf(stderr, PROG ": error: --via slurm: %s\n", strerror(errno));
  return -1;
fail_step:
  fprintf(stderr, PROG ": error: --via slurm: cannot start the step: %s\n", strerror(errno));
  /* the stand-ins end when their pipes close */
  attempt_reset(n);
  return -1;
}

const LaunchBackend launch_slurm = {.name = "slurm", .prepare = slurm_prepare, .start = slurm_start};
