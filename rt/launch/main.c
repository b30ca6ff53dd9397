/* main.c: sf-launch, the supervisor of a distributed job: one sf-exec per host of a (rewritten)
 * graph, started through a backend (launch.h), their output prefixed per host, failures named,
 * the job restarted from its checkpoints (--restart).  `usage_text` below is the specification.
 *
 * One process, one thread, one event loop (wait_all): poll(2) over a signalfd carrying
 * SIGCHLD, SIGINT and SIGTERM (blocked otherwise, so no signal handler ever runs) and over every
 * executor's output pipe; timers (the grace before the others are stopped, the kill after a
 * stop, the wait for the last output) are the poll's timeout.  Every executor is one Exec record.
 *
 * An executor's states (Exec.state), for one attempt:
 *
 *   IDLE ---start---> RUNNING ---exit---> ENDED
 *                        |                  ^
 *                 stop_all (SIGINT,         |
 *                  SIGTERM) v               |
 *                     STOPPING ---exit------+   (also SIGKILL from kill_rest, Exec.killed)
 *
 *   A start that fails (the backend could not run it) goes from IDLE to ENDED at once, status
 *   127, its reason the backend's message.  ENDED records the status as a shell shows it (N, or
 *   128 + signal), and the first line of its output containing "error:" (Exec.why).  Its pipe
 *   may stay open after its exit (a process it started holds it): the attempt's end waits for
 *   every pipe's end at most DRAIN_MS.
 *
 * The job's states (L.phase), across attempts:
 *
 *   STARTING   executors being started, in the graph's order; a SIGINT now starts no more
 *              -> RUNNING
 *   RUNNING    every executor started, none failed -> COMPLETED (all ended 0), FAILING (one
 *              failed), ABORTING (SIGINT), DRAINING (SIGTERM)
 *   FAILING    the first failure seen; the others get their moment (SF_LAUNCH_GRACE, or
 *              SF_LAUNCH_SETTLE with a restart left; none when the first was killed by a signal
 *              and a restart is left), then are stopped with SIGINT and killed SF_LAUNCH_KILL_AFTER
 *              s later -> RESTARTING (a restart left, not interrupted, not draining) or FAILED
 *   ABORTING   every executor sent SIGINT (killed SF_LAUNCH_KILL_AFTER s later) -> exit 130
 *   DRAINING   every executor sent SIGTERM (no time limit; SIGINT -> ABORTING) -> COMPLETED, or
 *              FAILED (no restart after a drain)
 *   RESTARTING every executor of the attempt ended; a fresh token, --restore, STARTING again
 *   COMPLETED  exit 0 (checkpoints removed); FAILED exit 1 (the host at fault named)
 *
 * Which host is named for a failure (blame()) and why (describe()) follow the rules of
 * usage_text, the same as the shell script this program replaced. */
#include "args.h"
#include "k8s.h"
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: sf-launch [options] GRAPH.xml\n"
    "       sf-launch --emit kubernetes [options] DIR GRAPH.xml\n"
    "\n"
    "Starts one sf-exec per host of GRAPH (as written by sf-xform --hosts ...) and waits for all.\n"
    "\n"
    "options:\n"
    "  --workdir DIR          run the executors in DIR (default: the current directory); relative file\n"
    "                         paths of the graph resolve there\n"
    "  --via local|ssh|slurm  how every executor is started: a process here, through --ssh, or as a\n"
    "                         task of a Slurm job step (default: here for a host whose address is on\n"
    "                         this machine, through --ssh for any other)\n"
    "  --ssh CMD              command to reach a host that is not this machine (default: ssh); it is\n"
    "                         called as: CMD ADDRESS 'shell command'\n"
    "  --exec PATH            the sf-exec to run (default: $SF_EXEC, else the one next to sf-launch, then\n"
    "                         the first in PATH)\n"
    "  --connect-timeout MS   how long executors wait for each other (default 10000)\n"
    "  --batch N              tuples per batch, between threads and between hosts (default 256 between\n"
    "                         threads, 1024 per message between hosts)\n"
    "  --stats                pass --stats to every executor\n"
    "  --metrics-base PORT    executor I (0, 1, ... in the graph's host order) serves Prometheus metrics\n"
    "                         and its live view at 127.0.0.1:PORT+I (sf-exec --metrics), on its own\n"
    "                         machine: one page per executor; each address is printed once at the start\n"
    "  --accept-unterminated  pass --accept-unterminated to every executor (read a CSV input's last row\n"
    "                         even without its line end)\n"
    "  --max-state-memory BYTES  pass --max-state-memory to every executor: its keyed state (Functor,\n"
    "                         Aggregate, Dedup) may take at most BYTES (K, M, G: 2^10, 2^20, 2^30)\n"
    "  --insecure-plaintext   no TLS between the executors (the token and the tuples travel in clear);\n"
    "                         for development on loopback addresses only\n"
    "  --hosts SPEC           NAME=HOST:PORT[,NAME=HOST:PORT...]: these hosts of GRAPH are at these\n"
    "                         addresses for this launch (passed to every executor; a host is started\n"
    "                         here or through --ssh by its new address); how a failed machine is\n"
    "                         replaced: launch again with --hosts and --restore\n"
    "  --checkpoint-dir DIR   every executor takes consistent checkpoints into DIR; a relative DIR is\n"
    "                         taken from sf-launch's current directory (not --workdir) and passed as an\n"
    "                         absolute path, the same for every executor (machines other than this one\n"
    "                         need it at that path, on a shared file system); the checkpoints are\n"
    "                         removed once the job completed (exit 0), by sf-exec --remove-checkpoints:\n"
    "                         only what sf-exec wrote there (DIR's other files stay). DIR is this\n"
    "                         job's only: its executors lock it (DIR/LOCK), another job is refused\n"
    "  --checkpoint-interval S  seconds between checkpoints (default 1; decimals allowed, 0.01 to 86400)\n"
    "  --restart N            restart a failed job up to N times (default 0; needs --checkpoint-dir).\n"
    "                         A failure is an executor that ends non-zero or is killed by a signal\n"
    "                         (kill -9, a crash, a lost link), unless sf-launch stopped it or it ended\n"
    "                         on SIGINT; Ctrl-C and SIGTERM to sf-launch never restart. The others are\n"
    "                         then stopped (SIGINT; killed after SF_LAUNCH_KILL_AFTER s): at once after\n"
    "                         a kill, SF_LAUNCH_SETTLE s (0.2) after an error exit, so that the one whose\n"
    "                         death it reports is seen first; and\n"
    "                         every executor starts again with --restore, from the latest complete\n"
    "                         checkpoint, with a fresh token (the same TLS material). Each restart\n"
    "                         prints two lines on stderr (the first is one line):\n"
    "                           sf-launch: restart K of N: host 'H' failed (WHY); restarting every\n"
    "                             executor from the latest complete checkpoint\n"
    "                           sf-launch: restart K of N: restarted in S.SSS s\n"
    "                         S.SSS: seconds from noticing the failure to every executor started again.\n"
    "                         Once N restarts are used, a failure ends the job as without --restart\n"
    "                         (exit 1), followed by \"sf-launch: no restart left (N of N used)\".\n"
    "  --restore              the first start too continues from the latest complete checkpoint in\n"
    "                         --checkpoint-dir (a job that failed earlier; none there: from the start)\n"
    "  --emit kubernetes      start nothing: write the job's Kubernetes manifests into DIR (new or\n"
    "                         empty) for kubectl apply -k DIR: the graph, a Secret with the token and\n"
    "                         TLS material, a headless Service, a shared volume claim for the\n"
    "                         checkpoints, one Pod per host (docs/running.md, \"Kubernetes\")\n"
    "  --image IMAGE          with --emit: the pods' image, with sf-exec on its PATH (default:\n"
    "                         streamfission:latest)\n"
    "  --job NAME             with --emit: the job's name in the objects' names (default: GRAPH's file\n"
    "                         name without .xml)\n"
    "  -h, --help             show this help\n"
    "\n"
    "The host named as failed is one killed by a signal sf-launch did not send, else the first to end\n"
    "non-zero, unless its error names another host that failed with an error naming no other host (a\n"
    "broken edge from the one at fault: that one is named); its reason is its first error line, else\n"
    "\"killed by SIGNAME\" or \"exit status N\". Without a restart left, the other executors get\n"
    "SF_LAUNCH_GRACE seconds (3) to fail on their own before they are stopped (SIGINT; killed after\n"
    "SF_LAUNCH_KILL_AFTER s, default 10).\n"
    "\n"
    "exit status: 0 when every executor completed (also after SIGTERM, which drains the job), 1 when\n"
    "one failed (named on stderr) and no restart was left, or when the job could not start (a graph\n"
    "without hosts, no sf-exec or sf-certs, ...), 2 bad usage, 130 when interrupted (SIGINT)\n";

#define PROG "sf-launch"
#define LINE_BYTES 65536 /* an output line longer than this is cut into lines of this length */
#define DRAIN_MS 5000    /* how long the end of an attempt waits for the executors' last output */

typedef enum { EX_IDLE, EX_RUNNING, EX_STOPPING, EX_ENDED } ExState;

typedef struct Exec {
  int host;                /* index in Launch.job.hosts */
  const LaunchBackend *via;
  ExState state;
  pid_t pid;
  int out;                 /* its output pipe, -1 once at its end */
  char *line;              /* the output line being read (LINE_BYTES) */
  size_t len;
  char *why;               /* its first output line containing "error:" (this attempt) */
  int status;              /* ENDED: N, or 128 + the signal */
  bool stopped;            /* sf-launch sent it SIGINT or SIGTERM */
  bool killed;             /* sf-launch killed it (SIGKILL after SF_LAUNCH_KILL_AFTER) */
} Exec;

typedef enum { PH_STARTING, PH_RUNNING, PH_FAILING, PH_ABORTING, PH_DRAINING, PH_RESTARTING } Phase;

static struct {
  LaunchJob job;
  const LaunchBackend *via; /* --via, NULL: by address */
  Exec *ex;                 /* one per host */
  char **extra;             /* sf-exec's options for every executor */
  int nextra;
  LaunchSecrets secrets;    /* the token and the CA certificate (the same for every host) */
  char **certs, **keys;     /* each host's certificate and key (PEM), NULL with plaintext */
  char token[49];
  char *ckpt_dir;
  int restart_max, attempt;
  bool restore;
  int metrics_base;         /* --metrics-base: executor i serves metrics at 127.0.0.1:base+i (0: none) */
  int sigfd;
  bool out_broken; /* our stdout is gone: the executors' output is dropped */
  /* the attempt */
  Phase phase;
  bool interrupted, drained;
  int stop_sig;
  int remaining;
  int first;               /* the first host to fail, -1 */
  bool restartable;
  long long t_failed_us;
  long long grace_at, kill_at; /* monotonic ms, 0: none */
  const char *kill_after_text;
  double grace_s, settle_s, kill_after_s;
} L;

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static long long now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static _Noreturn void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void die_usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, PROG ": ");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  args_try_help(PROG);
}

static _Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, PROG ": error: ");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(1);
}

static void *xmalloc(size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (!p) abort();
  return p;
}

static void add_extra(const char *arg) {
  L.extra = realloc(L.extra, (size_t)(L.nextra + 2) * sizeof *L.extra);
  L.extra[L.nextra++] = strdup(arg);
  L.extra[L.nextra] = NULL;
}

/* ---- paths ---- */

/* PATH made absolute (from the current directory) and normalised without following links
 * (realpath -m -s) */
static char *absolute_lexical(const char *path) {
  char cwd[PATH_MAX];
  char *full;
  if (path[0] == '/') {
    full = strdup(path);
  } else {
    if (!getcwd(cwd, sizeof cwd)) return NULL;
    full = xmalloc(strlen(cwd) + strlen(path) + 2);
    sprintf(full, "%s/%s", cwd, path);
  }
  char *out = xmalloc(strlen(full) + 2);
  size_t n = 0;
  for (char *p = full; *p;) {
    while (*p == '/') p++;
    if (!*p) break;
    char *e = p;
    while (*e && *e != '/') e++;
    size_t len = (size_t)(e - p);
    if (len == 1 && p[0] == '.') {
    } else if (len == 2 && p[0] == '.' && p[1] == '.') {
      while (n > 0 && out[n - 1] != '/') n--;
      if (n > 0) n--;
    } else {
      out[n++] = '/';
      memcpy(out + n, p, len);
      n += len;
    }
    p = e;
  }
  if (n == 0) out[n++] = '/';
  out[n] = 0;
  free(full);
  return out;
}

/* the directory DIR as an absolute path (cd DIR && pwd), NULL when it is not one */
static char *absolute_dir(const char *dir) {
  char *r = realpath(dir, NULL);
  struct stat st;
  if (!r || stat(r, &st) < 0 || !S_ISDIR(st.st_mode)) {
    free(r);
    return NULL;
  }
  return r;
}

/* FILE with its directory made absolute */
static char *absolute_file(const char *file) {
  const char *slash = strrchr(file, '/');
  char *dir = slash ? strndup(file, slash == file ? 1 : (size_t)(slash - file)) : strdup(".");
  char *adir = absolute_dir(dir);
  free(dir);
  if (!adir) return NULL;
  const char *base = slash ? slash + 1 : file;
  char *r = xmalloc(strlen(adir) + strlen(base) + 2);
  sprintf(r, "%s%s%s", adir, strcmp(adir, "/") ? "/" : "", base);
  free(adir);
  return r;
}

static bool executable(const char *path) { return path && *path && access(path, X_OK) == 0; }

/* the directory of this program (/proc/self/exe), "" when unknown */
static char *self_dir(void) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return strdup("");
  buf[n] = 0;
  char *slash = strrchr(buf, '/');
  if (slash) *slash = 0;
  return strdup(buf);
}

/* NAME in PATH, NULL when not there */
static char *in_path(const char *name) {
  const char *path = getenv("PATH");
  if (!path) return NULL;
  char *copy = strdup(path), *save = NULL, *found = NULL;
  for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    char *c = xmalloc(strlen(d) + strlen(name) + 2);
    sprintf(c, "%s/%s", d, name);
    struct stat st;
    if (stat(c, &st) == 0 && S_ISREG(st.st_mode) && access(c, X_OK) == 0) {
      found = c;
      break;
    }
    free(c);
  }
  free(copy);
  return found;
}

/* ---- running a helper program to its end ---- */

/* ARGV with stdin /dev/null; its stdout into *OUT when OUT (else inherited), its stderr into
 * *ERR when ERR (else inherited); its status as a shell shows it */
static int run_capture(char *const *argv, char **out, char **err) {
  int po[2] = {-1, -1}, pe[2] = {-1, -1};
  if ((out && pipe2(po, O_CLOEXEC) < 0) || (err && pipe2(pe, O_CLOEXEC) < 0)) die("pipe: %s", strerror(errno));
  pid_t pid = fork();
  if (pid < 0) die("fork: %s", strerror(errno));
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    if (out) dup2(po[1], 1);
    if (err) dup2(pe[1], 2);
    execvp(argv[0], argv);
    fprintf(stderr, PROG ": error: cannot run '%s': %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  if (out) close(po[1]);
  if (err) close(pe[1]);
  size_t cap[2] = {0, 0}, len[2] = {0, 0};
  char *buf[2] = {NULL, NULL};
  struct pollfd fds[2] = {{out ? po[0] : -1, POLLIN, 0}, {err ? pe[0] : -1, POLLIN, 0}};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || !fds[i].revents) continue;
      if (len[i] + 4096 + 1 > cap[i]) {
        cap[i] = (cap[i] + 4096) * 2;
        buf[i] = realloc(buf[i], cap[i]);
      }
      ssize_t n = read(fds[i].fd, buf[i] + len[i], cap[i] - len[i] - 1);
      if (n > 0) {
        len[i] += (size_t)n;
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
      }
    }
  }
  for (int i = 0; i < 2; i++) {
    if (!buf[i]) buf[i] = xmalloc(1);
    buf[i][len[i]] = 0;
  }
  if (out) *out = buf[0]; else free(buf[0]);
  if (err) *err = buf[1]; else free(buf[1]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- hosts ---- */

/* NAME=HOST:PORT[,NAME=HOST:PORT...]: each NAME without '=' or ',', each address holding a ':'
 * and not ending with one */
static bool hosts_spec_ok(const char *spec) {
  const char *p = spec;
  for (;;) {
    const char *item = p;
    while (*p && *p != '=' && *p != ',') p++;
    if (p == item || *p != '=') return false;
    const char *addr = ++p;
    while (*p && *p != ',') p++;
    const char *colon = memchr(addr, ':', (size_t)(p - addr));
    if (!colon || p == addr || p[-1] == ':') return false;
    if (!*p) return true;
    p++;
  }
}

/* the address's host part is this machine: 127.*, localhost, ::1, or an address of an interface */
static bool is_local(const char *address) {
  char *h = launch_address_host(address);
  size_t n = strlen(h);
  if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
    memmove(h, h + 1, n - 2);
    h[n - 2] = 0;
  }
  bool local = !strncmp(h, "127.", 4) || !strcmp(h, "localhost") || !strcmp(h, "::1");
  struct ifaddrs *ifs = NULL;
  if (!local && getifaddrs(&ifs) == 0) {
    for (struct ifaddrs *i = ifs; i && !local; i = i->ifa_next) {
      if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6)) continue;
      char text[NI_MAXHOST];
      socklen_t len = i->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
      if (getnameinfo(i->ifa_addr, len, text, sizeof text, NULL, 0, NI_NUMERICHOST) != 0) continue;
      char *pct = strchr(text, '%'); /* fe80::1%eth0: ip(8) shows it without its scope */
      if (pct) *pct = 0;
      local = !strcmp(text, h);
    }
    freeifaddrs(ifs);
  }
  free(h);
  return local;
}

static const LaunchBackend *backend_of(int host) {
  if (L.via) return L.via;
  return is_local(L.job.hosts[host].address) ? &launch_local : &launch_ssh;
}

/* ---- secrets ---- */

static void new_token(void) {
  unsigned char raw[24];
  size_t got = 0;
  while (got < sizeof raw) {
    ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("cannot read random bytes for the job token: %s", strerror(errno));
    got += (size_t)n;
  }
  for (size_t i = 0; i < sizeof raw; i++) sprintf(L.token + 2 * i, "%02x", raw[i]);
  L.secrets.token = L.token;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  size_t cap = 4096, len = 0;
  char *b = xmalloc(cap);
  size_t n;
  while ((n = fread(b + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (len + 1 == cap) b = realloc(b, cap *= 2);
  }
  fclose(f);
  b[len] = 0;
  return b;
}

/* The job's TLS material: tools/sf-certs makes a CA and one certificate and key per host in a
 * directory of our own (mode 700), which is read into memory and removed at once. */
static void make_tls(void) {
  int n = L.job.nhosts;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (!strcasecmp(L.job.hosts[i].name, L.job.hosts[j].name))
        die("host names that differ only in case (like '%s') cannot have TLS certificates of their own",
            L.job.hosts[j].name);
  char *dir = self_dir();
  char *certs = xmalloc(strlen(dir) + 16);
  sprintf(certs, "%s/sf-certs", dir);
  free(dir);
  if (!executable(certs)) {
    free(certs);
    certs = in_path("sf-certs");
  }
  if (!certs) die("cannot find sf-certs (it belongs next to sf-launch)");
  const char *tmp = getenv("TMPDIR");
  char *tmpl = xmalloc(strlen(tmp && *tmp ? tmp : "/tmp") + 32);
  sprintf(tmpl, "%s/sf-launch.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(tmpl)) die("cannot make a temporary directory in '%s': %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
  char *tls = xmalloc(strlen(tmpl) + 8);
  sprintf(tls, "%s/tls", tmpl);
  char **argv = xmalloc((size_t)(n + 3) * sizeof *argv);
  argv[0] = certs;
  argv[1] = tls;
  for (int i = 0; i < n; i++) argv[i + 2] = L.job.hosts[i].name;
  /* its output goes to our stderr */
  int saved = dup(1);
  dup2(2, 1);
  int rc = run_capture(argv, NULL, NULL);
  dup2(saved, 1);
  close(saved);
  free(argv);
  bool ok = rc == 0;
  if (ok) {
    size_t len = strlen(tls) + 300;
    char *path = xmalloc(len);
    snprintf(path, len, "%s/ca.crt", tls);
    L.secrets.ca = read_file(path);
    ok = L.secrets.ca != NULL;
    free(path);
  }
  char **certs_of = L.certs = xmalloc((size_t)n * sizeof *certs_of);
  char **keys_of = L.keys = xmalloc((size_t)n * sizeof *keys_of);
  for (int i = 0; ok && i < n; i++) {
    size_t len = strlen(tls) + strlen(L.job.hosts[i].name) + 16;
    char *path = xmalloc(len);
    snprintf(path, len, "%s/%s.crt", tls, L.job.hosts[i].name);
    certs_of[i] = read_file(path);
    snprintf(path, len, "%s/%s.key", tls, L.job.hosts[i].name);
    keys_of[i] = read_file(path);
    ok = certs_of[i] && keys_of[i];
    free(path);
  }
  char *rm[] = {"rm", "-rf", "--", tmpl, NULL};
  run_capture(rm, NULL, NULL);
  free(tls);
  free(tmpl);
  free(certs);
  if (!ok) die("cannot make the job's TLS certificates (or use --insecure-plaintext on loopback)");
}

/* ---- output ---- */

static void out_write(const char *text, size_t len) {
  while (len > 0 && !L.out_broken) {
    ssize_t n = write(1, text, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      struct pollfd p = {1, POLLOUT, 0};
      poll(&p, 1, 100);
      continue;
    }
    if (n <= 0) {
      L.out_broken = true;
      return;
    }
    text += n;
    len -= (size_t)n;
  }
}

/* one line of E's output (without its line end): "[HOST] LINE" on stdout; the first with "error:"
 * is E's reason */
static void out_line(Exec *e, const char *line, size_t len) {
  const char *name = L.job.hosts[e->host].name;
  size_t nlen = strlen(name);
  char *buf = xmalloc(nlen + len + 4);
  buf[0] = '[';
  memcpy(buf + 1, name, nlen);
  buf[nlen + 1] = ']';
  buf[nlen + 2] = ' ';
  memcpy(buf + nlen + 3, line, len);
  buf[nlen + 3 + len] = '\n';
  out_write(buf, nlen + len + 4);
  if (!e->why && memmem(line, len, "error:", 6)) e->why = strndup(line, len);
  free(buf);
}

/* reads what E's pipe holds; at its end (or when FINAL, all there is), the last partial line too */
static void read_output(Exec *e, bool final) {
  for (int reads = 0; e->out >= 0; reads++) {
    if (reads == 16 && !final) return; /* one that floods its output lets the others be heard */
    ssize_t n = read(e->out, e->line + e->len, LINE_BYTES - e->len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && !final) return;
    if (n <= 0) {
      close(e->out);
      e->out = -1;
      break;
    }
    size_t start = 0, end = e->len + (size_t)n;
    for (size_t i = e->len; i < end; i++) {
      if (e->line[i] == '\n') {
        out_line(e, e->line + start, i - start);
        start = i + 1;
      }
    }
    if (start == 0 && end == LINE_BYTES) { /* a line longer than LINE_BYTES: cut */
      out_line(e, e->line, end);
      start = end;
    }
    memmove(e->line, e->line + start, end - start);
    e->len = end - start;
  }
  if (e->len > 0) {
    out_line(e, e->line, e->len);
    e->len = 0;
  }
}

/* ---- the attempt ---- */

static const char *sig_name(int sig) {
  static char buf[32];
  const char *n = sigabbrev_np(sig);
  if (n) snprintf(buf, sizeof buf, "SIG%s", n);
  else snprintf(buf, sizeof buf, "signal %d", sig);
  return buf;
}

static bool by_signal(int status) { return status > 128 && status < 160; }

/* why E ended: its own error line, else its status */
static char *describe(const Exec *e) {
  char buf[64];
  if (e->why) return strdup(e->why);
  if (by_signal(e->status)) {
    const char *n = sigabbrev_np(e->status - 128);
    if (n) snprintf(buf, sizeof buf, "killed by SIG%s", n);
    else snprintf(buf, sizeof buf, "killed by signal %d", e->status - 128);
  } else {
    snprintf(buf, sizeof buf, "exit status %d", e->status);
  }
  return strdup(buf);
}

/* E's error line names no other host of the graph */
static bool own_failure(const Exec *e) {
  char *why = describe(e);
  bool own = true;
  for (int i = 0; i < L.job.nhosts && own; i++) {
    if (i == e->host) continue;
    size_t len = strlen(L.job.hosts[i].name) + 16;
    char *pat = xmalloc(len);
    snprintf(pat, len, "host '%s'", L.job.hosts[i].name);
    if (strstr(why, pat)) own = false;
    free(pat);
  }
  free(why);
  return own;
}

static void stop_all(int sig) {
  L.stop_sig = sig;
  for (int i = 0; i < L.job.nhosts; i++) {
    Exec *e = &L.ex[i];
    if (e->state != EX_RUNNING && e->state != EX_STOPPING) continue;
    kill(e->pid, sig);
    e->stopped = true;
    e->state = EX_STOPPING;
  }
}

static void start_kill_timer(void) {
  if (!L.kill_at) L.kill_at = now_ms() + (long long)(L.kill_after_s * 1000);
}

static void kill_rest(void) {
  for (int i = 0; i < L.job.nhosts; i++) {
    Exec *e = &L.ex[i];
    if (e->state != EX_RUNNING && e->state != EX_STOPPING) continue;
    fprintf(stderr, PROG ": host '%s' did not stop within %s s of %s; killed it\n", L.job.hosts[i].name,
            L.kill_after_text, sig_name(L.stop_sig));
    e->killed = true;
    kill(e->pid, SIGKILL);
  }
}

static void on_interrupt(void) {
  L.interrupted = true;
  L.phase = PH_ABORTING;
  stop_all(SIGINT);
  start_kill_timer();
}

static void on_drain(void) {
  if (L.interrupted) return;
  L.drained = true;
  if (L.phase != PH_FAILING) L.phase = PH_DRAINING;
  stop_all(SIGTERM);
}

/* E ended with STATUS: the failure rules of usage_text */
static void ended(Exec *e, int status) {
  e->state = EX_ENDED;
  e->status = status;
  L.remaining--;
  if (status == 0 || L.first >= 0 || L.interrupted) return;
  L.first = e->host;
  L.t_failed_us = now_us();
  /* one that ended on SIGINT was asked to stop (a Ctrl-C reaches the whole process group, maybe
   * before sf-launch saw its own): no restart then */
  L.restartable = !L.drained && status != 130 && L.attempt < L.restart_max;
  if (L.phase != PH_DRAINING) L.phase = PH_FAILING;
  if (L.remaining == 0) return;
  if (L.restartable && by_signal(status)) { /* killed: the cause itself, nothing to wait for */
    stop_all(SIGINT);
    start_kill_timer();
  } else {
    /* one that ends with an error mostly saw another die (a broken edge): the others get a
     * moment to end on their own; short with a restart left, so that the one that died is not
     * stopped by us before its death is seen (its SIGKILL would read as our SIGINT) */
    L.grace_at = now_ms() + (long long)((L.restartable ? L.settle_s : L.grace_s) * 1000);
  }
}

static void reap(void) {
  int st;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
    for (int i = 0; i < L.job.nhosts; i++) {
      Exec *e = &L.ex[i];
      if ((e->state == EX_RUNNING || e->state == EX_STOPPING) && e->pid == pid) {
        ended(e, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        break;
      }
    }
  }
}

/* what the signalfd holds: our own signals and the executors' ends */
static void read_signals(void) {
  struct signalfd_siginfo si;
  while (read(L.sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
    if (si.ssi_signo == SIGINT) on_interrupt();
    else if (si.ssi_signo == SIGTERM) on_drain();
  }
  reap(); /* SIGCHLD, or one merged into another's */
}

static void start_one(Exec *e) {
  int i = e->host;
  int nargs = L.nextra + 8;
  char **args = xmalloc((size_t)nargs * sizeof *args);
  char metrics[32];
  int k = 0;
  args[k++] = "--host";
  args[k++] = L.job.hosts[i].name;
  for (int j = 0; j < L.nextra; j++) args[k++] = L.extra[j];
  if (L.metrics_base) {
    snprintf(metrics, sizeof metrics, "127.0.0.1:%d", L.metrics_base + i);
    args[k++] = "--metrics";
    args[k++] = metrics;
  }
  if (L.restore || L.attempt > 0) args[k++] = "--restore";
  args[k++] = (char *)L.job.graph;
  args[k] = NULL;
  LaunchSecrets s = {.token = L.token};
  if (!L.job.plaintext) {
    s.ca = L.secrets.ca;
    s.cert = L.certs[i];
    s.key = L.keys[i];
  }
  LaunchStart st = {.host = i, .args = args, .secrets = &s};
  LaunchProc p = {-1, -1};
  free(e->why);
  e->why = NULL;
  e->stopped = e->killed = false;
  e->len = 0;
  /* a failed start's reason is its message, caught from our stderr */
  char errbuf[1024] = "";
  FILE *mem = fmemopen(errbuf, sizeof errbuf - 1, "w");
  FILE *saved = stderr;
  if (mem) stderr = mem;
  int rc = e->via->start(&L.job, &st, &p);
  if (mem) {
    fclose(mem);
    stderr = saved;
  }
  free(args);
  if (rc < 0) { /* said as it was; its first line is the host's reason */
    fputs(errbuf, stderr);
    e->state = EX_RUNNING; /* counted, then ended at once */
    L.remaining++;
    e->why = strndup(errbuf, strcspn(errbuf, "\n"));
    if (!*e->why) {
      free(e->why);
      e->why = strdup("sf-launch: error: could not start it");
    }
    ended(e, 127);
    return;
  }
  e->pid = p.pid;
  e->out = p.out;
  e->state = EX_RUNNING;
  L.remaining++;
}

static void start_all(void) {
  L.phase = PH_STARTING;
  for (int i = 0; i < L.job.nhosts; i++) {
    struct pollfd pf = {L.sigfd, POLLIN, 0};
    if (poll(&pf, 1, 0) > 0) read_signals();
    if (L.interrupted) break; /* interrupted while starting: start no more */
    start_one(&L.ex[i]);
  }
  if (L.drained) stop_all(SIGTERM); /* SIGTERM while starting: the later ones drain too */
  if (L.phase == PH_STARTING) L.phase = PH_RUNNING;
}

static int poll_timeout(long long deadline) {
  long long next = deadline;
  if (L.grace_at && (!next || L.grace_at < next)) next = L.grace_at;
  if (L.kill_at && (!next || L.kill_at < next)) next = L.kill_at;
  if (!next) return -1;
  long long d = next - now_ms();
  return d < 0 ? 0 : d > INT_MAX ? INT_MAX : (int)d;
}

/* Waits for every executor started; then for their output (at most DRAIN_MS; not after Ctrl-C) */
static void wait_all(void) {
  int n = L.job.nhosts;
  struct pollfd *fds = xmalloc((size_t)(n + 1) * sizeof *fds);
  long long drain_until = 0;
  for (;;) {
    if (L.remaining == 0) {
      L.grace_at = L.kill_at = 0;
      if (!drain_until) drain_until = now_ms() + (L.interrupted ? 0 : DRAIN_MS);
      bool open = false;
      for (int i = 0; i < n; i++) open |= L.ex[i].out >= 0;
      if (!open || now_ms() >= drain_until) break;
    }
    int k = 0;
    fds[k++] = (struct pollfd){L.sigfd, POLLIN, 0};
    for (int i = 0; i < n; i++)
      if (L.ex[i].out >= 0) fds[k++] = (struct pollfd){L.ex[i].out, POLLIN, 0};
    int r = poll(fds, (nfds_t)k, poll_timeout(drain_until));
    if (r < 0 && errno != EINTR) die("poll: %s", strerror(errno));
    /* output first: what an executor printed before it ended is read before its end */
    for (int i = 0; i < n; i++)
      if (L.ex[i].out >= 0) read_output(&L.ex[i], false);
    read_signals();
    long long t = now_ms();
    if (L.grace_at && t >= L.grace_at) { /* the others had their moment */
      L.grace_at = 0;
      stop_all(SIGINT);
      start_kill_timer();
    }
    if (L.kill_at && t >= L.kill_at) { /* stopped, and some did not stop in time */
      L.kill_at = 0;
      kill_rest();
    }
  }
  for (int i = 0; i < n; i++) /* what is there now, and no more */
    if (L.ex[i].out >= 0) {
      fcntl(L.ex[i].out, F_SETFL, fcntl(L.ex[i].out, F_GETFL) | O_NONBLOCK);
      read_output(&L.ex[i], false);
      if (L.ex[i].out >= 0) {
        if (L.ex[i].len) out_line(&L.ex[i], L.ex[i].line, L.ex[i].len);
        L.ex[i].len = 0;
        close(L.ex[i].out);
        L.ex[i].out = -1;
      }
    }
  free(fds);
}

/* the host at fault: the rules of usage_text */
static int blame(void) {
  int failed = L.first, n = L.job.nhosts;
  if (failed < 0) return -1;
  if (!by_signal(L.ex[failed].status)) { /* one killed by a signal that was not ours is the cause */
    for (int i = 0; i < n; i++) {
      Exec *e = &L.ex[i];
      if (e->state != EX_ENDED || !by_signal(e->status)) continue;
      int sig = e->status - 128;
      if (sig == SIGINT || sig == SIGTERM || (sig == SIGKILL && e->killed)) continue;
      failed = i;
      break;
    }
  }
  /* else one whose error names no other host, when the first's names one (a broken edge) */
  if (!by_signal(L.ex[failed].status) && !own_failure(&L.ex[failed])) {
    for (int i = 0; i < n; i++) {
      Exec *e = &L.ex[i];
      if (i == failed || e->state != EX_ENDED || e->status == 0 || e->status == 130 || e->status == 143 || e->killed)
        continue;
      if (own_failure(e)) {
        failed = i;
        break;
      }
    }
  }
  return failed;
}

static void run_attempt(void) {
  for (int i = 0; i < L.job.nhosts; i++) L.ex[i].state = EX_IDLE;
  L.first = -1;
  L.restartable = false;
  L.grace_at = L.kill_at = 0;
  L.stop_sig = SIGINT;
  L.remaining = 0;
  start_all();
  if (L.attempt > 0 && !L.interrupted) {
    long long us = now_us() - L.t_failed_us;
    fprintf(stderr, PROG ": restart %d of %d: restarted in %lld.%03lld s\n", L.attempt, L.restart_max,
            us / 1000000, us / 1000 % 1000);
  }
  wait_all();
}

/* ---- the end ---- */

/* The job completed: its checkpoints are obsolete; sf-exec --remove-checkpoints removes them
 * (only what sf-exec wrote) where the directory is seen: here, or else on the first host reached
 * through ssh (a shared file system). */
static void remove_checkpoints(void) {
  char *args[] = {(char *)L.job.exec_path, "--checkpoint-dir", L.ckpt_dir, "--remove-checkpoints",
                  (char *)L.job.graph, NULL};
  struct stat st;
  if (stat(L.ckpt_dir, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (run_capture(args, NULL, NULL) != 0)
      fprintf(stderr, PROG ": warning: the checkpoints in '%s' were not removed\n", L.ckpt_dir);
    return;
  }
  for (int i = 0; i < L.job.nhosts; i++) {
    if (backend_of(i) != &launch_ssh) continue;
    char *cmd = strdup("cd ");
    launch_shell_quote(&cmd, L.job.workdir);
    for (int j = 0; args[j]; j++) {
      cmd = realloc(cmd, strlen(cmd) + 5);
      strcat(cmd, j ? " " : " && ");
      launch_shell_quote(&cmd, args[j]);
    }
    int k;
    char **argv = launch_ssh_words(&L.job, 2, &k);
    argv[k] = launch_address_host(L.job.hosts[i].address);
    argv[k + 1] = cmd;
    if (run_capture(argv, NULL, NULL) != 0)
      fprintf(stderr, PROG ": warning: the checkpoints in '%s' on host '%s' were not removed\n", L.ckpt_dir,
              L.job.hosts[i].name);
    for (int j = 0; argv[j]; j++) free(argv[j]);
    free(argv);
    break;
  }
}

static double env_seconds(const char *name, double dflt, const char **text) {
  const char *v = getenv(name);
  char *end;
  double s = v && *v ? strtod(v, &end) : 0;
  if (!v || !*v || *end || !(s >= 0)) {
    if (text) *text = NULL;
    return dflt;
  }
  if (text) *text = v;
  return s;
}

/* ---- options ---- */

/* --emit kubernetes DIR: the job written down for a cluster (k8s.c) instead of run. Pods start
 * when the cluster schedules them and pulls their image, so unless --connect-timeout says
 * otherwise they wait 5 minutes for each other, not 10 s. */
static int emit_kubernetes(const char *dir, const char *image, const char *job_name, const char *ckpt_interval) {
  char *name = NULL;
  if (!job_name) { /* the graph file's name without .xml */
    const char *base = strrchr(L.job.graph, '/');
    name = strdup(base ? base + 1 : L.job.graph);
    size_t n = strlen(name);
    if (n > 4 && !strcmp(name + n - 4, ".xml")) name[n - 4] = 0;
  }
  bool timeout_given = false;
  for (int i = 0; i < L.nextra; i++) timeout_given |= !strcmp(L.extra[i], "--connect-timeout");
  if (!timeout_given) {
    add_extra("--connect-timeout");
    add_extra("300000");
  }
  K8sJob kj = {
    .graph_path = L.job.graph,
    .job = job_name ? job_name : name,
    .image = image ? image : "streamfission:latest",
    .hosts = L.job.hosts,
    .nhosts = L.job.nhosts,
    .ca = L.secrets.ca,
    .certs = L.certs,
    .keys = L.keys,
    .token = L.token,
    .checkpoint_interval = ckpt_interval,
    .exec_args = (const char *const *)L.extra,
    .nexec_args = L.nextra,
  };
  char err[1024];
  int rc = k8s_emit(dir, &kj, err, sizeof err);
  free(name);
  if (rc < 0) {
    fprintf(stderr, PROG ": error: --emit kubernetes: %s\n", err);
    return 1;
  }
  return 0;
}

static const char *need_arg(int argc, char **argv, int i) {
  if (i + 1 >= argc) die_usage("option '%s' needs an argument", argv[i]);
  return argv[i + 1];
}

int main(int argc, char **argv) {
  const char *workdir = NULL, *exec_path = getenv("SF_EXEC"), *graph = NULL, *hosts_spec = NULL;
  const char *ckpt_dir = NULL, *ckpt_interval = NULL, *restart = NULL;
  const char *emit = NULL, *emit_dir = NULL, *image = NULL, *job_name = NULL;
  L.job.ssh_cmd = "ssh";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    long v;
    char num[32];
    if (!strcmp(a, "--workdir")) {
      workdir = need_arg(argc, argv, i++);
    } else if (!strcmp(a, "--ssh")) {
      L.job.ssh_cmd = need_arg(argc, argv, i++);
    } else if (!strcmp(a, "--via")) {
      const char *via = need_arg(argc, argv, i++);
      const LaunchBackend *all[] = {&launch_local, &launch_ssh, &launch_slurm};
      L.via = NULL;
      for (size_t j = 0; j < sizeof all / sizeof *all; j++)
        if (!strcmp(via, all[j]->name)) L.via = all[j];
      if (!L.via) die_usage("--via takes local, ssh or slurm, got '%s'", via);
    } else if (!strcmp(a, "--exec")) {
      exec_path = need_arg(argc, argv, i++);
    } else if (!strcmp(a, "--connect-timeout") || !strcmp(a, "--batch")) {
      const char *val = need_arg(argc, argv, i++);
      bool batch = !strcmp(a, "--batch");
      if (!args_int(PROG, a, val, 1, batch ? 65536 : 3600000, &v)) args_try_help(PROG);
      snprintf(num, sizeof num, "%ld", v);
      add_extra(a);
      add_extra(num);
    } else if (!strcmp(a, "--stats") || !strcmp(a, "--accept-unterminated")) {
      add_extra(a);
    } else if (!strcmp(a, "--metrics-base")) {
      if (!args_int(PROG, a, need_arg(argc, argv, i++), 1, 65535, &v)) args_try_help(PROG);
      L.metrics_base = (int)v;
    } else if (!strcmp(a, "--max-state-memory")) {
      const char *val = need_arg(argc, argv, i++);
      uint64_t bytes;
      if (!args_bytes(PROG, a, val, &bytes)) args_try_help(PROG);
      add_extra(a);
      add_extra(val);
    } else if (!strcmp(a, "--insecure-plaintext")) {
      L.job.plaintext = true;
      add_extra(a);
    } else if (!strcmp(a, "--hosts")) {
      hosts_spec = need_arg(argc, argv, i++);
      if (!hosts_spec_ok(hosts_spec))
        die_usage("--hosts takes NAME=HOST:PORT[,NAME=HOST:PORT...], got '%s'", hosts_spec);
    } else if (!strcmp(a, "--checkpoint-dir")) {
      ckpt_dir = need_arg(argc, argv, i++);
      if (!*ckpt_dir) die_usage("--checkpoint-dir needs a directory, got ''");
    } else if (!strcmp(a, "--checkpoint-interval")) {
      ckpt_interval = need_arg(argc, argv, i++);
      double s;
      if (!args_seconds(PROG, a, ckpt_interval, &s)) args_try_help(PROG);
    } else if (!strcmp(a, "--restart")) {
      restart = need_arg(argc, argv, i++);
      if (!args_int(PROG, a, restart, 0, 1000, &v)) args_try_help(PROG);
      L.restart_max = (int)v;
    } else if (!strcmp(a, "--restore")) {
      L.restore = true;
    } else if (!strcmp(a, "--emit")) {
      emit = need_arg(argc, argv, i++);
      if (strcmp(emit, "kubernetes")) die_usage("--emit takes kubernetes, got '%s'", emit);
    } else if (!strcmp(a, "--image")) {
      image = need_arg(argc, argv, i++);
    } else if (!strcmp(a, "--job")) {
      job_name = need_arg(argc, argv, i++);
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage_text, stdout);
      return 0;
    } else if (a[0] == '-') {
      die_usage("unknown option '%s'", a);
    } else {
      if (emit && !emit_dir && !graph) {
        emit_dir = a;
        continue;
      }
      if (graph) die_usage("more than one graph file given ('%s')", a);
      graph = a;
    }
  }
  if (emit) {
    /* DIR GRAPH: with one word only, it is the graph and DIR is missing */
    if (emit_dir && !graph) graph = emit_dir, emit_dir = NULL;
    if (!emit_dir) die_usage("--emit kubernetes needs a directory and a graph: --emit kubernetes DIR GRAPH.xml");
    if (L.job.plaintext) die_usage("--emit kubernetes: --insecure-plaintext is refused: the pod network is not loopback");
    const char *alone[] = {workdir ? "--workdir" : NULL, L.via ? "--via" : NULL, ckpt_dir ? "--checkpoint-dir" : NULL,
                           restart ? "--restart" : NULL, L.restore ? "--restore" : NULL,
                           L.metrics_base ? "--metrics-base" : NULL};
    for (size_t k = 0; k < sizeof alone / sizeof *alone; k++)
      if (alone[k])
        die_usage("--emit kubernetes: %s is not for Kubernetes (the pods run in the volume's work/, with "
                  "--checkpoint-dir on it and --restore; the kubelet restarts them)", alone[k]);
  } else if (image || job_name) {
    die_usage("%s needs --emit kubernetes", image ? "--image" : "--job");
  }
  if (!graph) die_usage("no graph file given");
  if (!ckpt_dir && !emit) { /* as sf-exec says it */
    if (ckpt_interval) die_usage("--checkpoint-interval needs --checkpoint-dir");
    if (restart) die_usage("--restart needs --checkpoint-dir");
    if (L.restore) die_usage("--restore needs --checkpoint-dir");
  }
  if (ckpt_dir) {
    /* one absolute path for every executor, whatever --workdir is (each runs there) */
    L.ckpt_dir = absolute_lexical(ckpt_dir);
    if (!L.ckpt_dir) die_usage("bad --checkpoint-dir");
    add_extra("--checkpoint-dir");
    add_extra(L.ckpt_dir);
    if (ckpt_interval) {
      add_extra("--checkpoint-interval");
      add_extra(ckpt_interval);
    }
  }
  if (access(graph, R_OK) != 0) die("cannot read '%s'", graph);
  char *wd = absolute_dir(workdir ? workdir : ".");
  if (!wd) die("work directory '%s' does not exist", workdir ? workdir : ".");
  char *agraph = absolute_file(graph);
  if (!agraph) die("cannot read '%s'", graph);
  L.job.graph = agraph;
  L.job.workdir = wd;

  char *exe = NULL;
  if (exec_path && *exec_path) {
    exe = strdup(exec_path);
  } else {
    char *dir = self_dir();
    exe = xmalloc(strlen(dir) + 16);
    sprintf(exe, "%s/sf-exec", dir);
    free(dir);
    if (!executable(exe)) {
      free(exe);
      exe = in_path("sf-exec");
    }
  }
  if (!executable(exe)) die("cannot find sf-exec (use --exec)");
  char *aexe = absolute_file(exe); /* as checked: from the current directory */
  if (!aexe) die("cannot find sf-exec (use --exec)");
  free(exe);
  L.job.exec_path = aexe;

  /* our signals come through the signalfd; one ignored when we started stays ignored (as a
   * shell's trap could not catch it) */
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  struct sigaction old;
  if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaddset(&mask, SIGINT);
  if (sigaction(SIGTERM, NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaddset(&mask, SIGTERM);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  signal(SIGPIPE, SIG_IGN);
  L.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (L.sigfd < 0) die("signalfd: %s", strerror(errno));

  /* the graph's hosts (name address), at the addresses --hosts gives them */
  char *hosts = NULL;
  if (hosts_spec) {
    char *largv[] = {aexe, "--list-hosts", "--hosts", (char *)hosts_spec, agraph, NULL};
    char *err = NULL;
    int rc = run_capture(largv, &hosts, &err);
    if (rc == 2) { /* --hosts names a host the graph does not have: a usage error */
      for (char *line = strtok(err, "\n"); line; line = strtok(NULL, "\n"))
        if (!strncmp(line, "sf-exec: ", 9) && strncmp(line + 9, "Try ", 4)) die_usage("%s", line + 9);
      die_usage("%s", "");
    }
    if (*err) fputs(err, stderr);
    free(err);
    if (rc != 0) return 1;
    L.job.hosts_changed = true;
  } else {
    char *largv[] = {aexe, "--list-hosts", agraph, NULL};
    if (run_capture(largv, &hosts, NULL) != 0) return 1;
  }
  for (char *save = NULL, *line = strtok_r(hosts, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *sp = strchr(line, ' ');
    if (!sp || sp == line) continue;
    L.job.hosts = realloc(L.job.hosts, (size_t)(L.job.nhosts + 1) * sizeof *L.job.hosts);
    L.job.hosts[L.job.nhosts].name = strndup(line, (size_t)(sp - line));
    L.job.hosts[L.job.nhosts].address = strdup(sp + 1);
    L.job.nhosts++;
  }
  free(hosts);
  if (L.job.nhosts == 0)
    die("'%s' names no hosts; run it with sf-exec, or rewrite it with sf-xform --hosts", agraph);
  L.job.hosts_changed = false;
  /* a Slurm step's tasks all get one command line (backend_slurm.c), and --metrics differs per
   * executor: not yet (each task could take base + SLURM_PROCID) */
  if (L.metrics_base && L.via == &launch_slurm)
    die_usage("--metrics-base does not work with --via slurm yet (a step's tasks share one command line)");
  if (L.metrics_base && L.metrics_base + L.job.nhosts - 1 > 65535)
    die_usage("--metrics-base %d leaves no port for the last of the %d executors (at most %d)", L.metrics_base,
              L.job.nhosts, 65536 - L.job.nhosts);

  new_token();
  if (!L.job.plaintext) make_tls();
  if (emit) return emit_kubernetes(emit_dir, image, job_name, ckpt_interval);

  /* the backends' preparations (each once), which may re-address hosts */
  const LaunchBackend *used[3] = {0};
  int nused = 0;
  L.ex = xmalloc((size_t)L.job.nhosts * sizeof *L.ex);
  for (int i = 0; i < L.job.nhosts; i++) {
    const LaunchBackend *b = backend_of(i);
    L.ex[i] = (Exec){.host = i, .via = b, .out = -1, .line = xmalloc(LINE_BYTES)};
    bool seen = false;
    for (int j = 0; j < nused; j++) seen |= used[j] == b;
    if (!seen) used[nused++] = b;
  }
  for (int j = 0; j < nused; j++)
    if (used[j]->prepare && used[j]->prepare(&L.job) < 0) return 1;
  if (L.job.hosts_changed) { /* every executor is told every address */
    size_t len = 1;
    for (int i = 0; i < L.job.nhosts; i++) len += strlen(L.job.hosts[i].name) + strlen(L.job.hosts[i].address) + 2;
    char *spec = xmalloc(len);
    for (int i = 0; i < L.job.nhosts; i++) {
      if (i) strcat(spec, ",");
      strcat(spec, L.job.hosts[i].name);
      strcat(spec, "=");
      strcat(spec, L.job.hosts[i].address);
    }
    add_extra("--hosts");
    add_extra(spec);
    free(spec);
  } else if (hosts_spec) {
    add_extra("--hosts");
    add_extra(hosts_spec);
  }

  L.grace_s = env_seconds("SF_LAUNCH_GRACE", 3, NULL);
  L.settle_s = env_seconds("SF_LAUNCH_SETTLE", 0.2, NULL);
  L.kill_after_s = env_seconds("SF_LAUNCH_KILL_AFTER", 10, &L.kill_after_text);
  if (!L.kill_after_text) L.kill_after_text = "10";
  L.stop_sig = SIGINT;

  for (int i = 0; L.metrics_base && i < L.job.nhosts; i++) /* the same at every restart */
    fprintf(stderr, PROG ": host '%s': metrics at http://127.0.0.1:%d/metrics, live view at http://127.0.0.1:%d/%s\n",
            L.job.hosts[i].name, L.metrics_base + i, L.metrics_base + i,
            backend_of(i) != &launch_local ? " (on its machine)" : "");

  int failed;
  for (;;) {
    run_attempt();
    if (L.interrupted) {
      fprintf(stderr, PROG ": interrupted; stopped every executor\n");
      return 130;
    }
    failed = blame();
    if (failed < 0 || !L.restartable || L.drained) break;
    char *why = describe(&L.ex[failed]);
    fprintf(stderr,
            PROG ": restart %d of %d: host '%s' failed (%s); restarting every executor from the latest complete "
                 "checkpoint\n",
            L.attempt + 1, L.restart_max, L.job.hosts[failed].name, why);
    free(why);
    L.attempt++;
    L.phase = PH_RESTARTING;
    new_token(); /* an executor of the failed run still alive somewhere cannot join the new one */
  }
  if (failed >= 0) {
    char *why = describe(&L.ex[failed]);
    fprintf(stderr, PROG ": error: host '%s' failed: %s\n", L.job.hosts[failed].name, why);
    free(why);
    for (int i = 0; i < L.job.nhosts; i++) {
      if (i == failed || L.ex[i].state != EX_ENDED || L.ex[i].status == 0) continue;
      why = describe(&L.ex[i]);
      fprintf(stderr, PROG ": host '%s' stopped too: %s\n", L.job.hosts[i].name, why);
      free(why);
    }
    if (L.restart_max > 0 && L.attempt == L.restart_max)
      fprintf(stderr, PROG ": no restart left (%d of %d used)\n", L.attempt, L.restart_max);
    return 1;
  }
  if (L.ckpt_dir) remove_checkpoints();
  return 0;
}
