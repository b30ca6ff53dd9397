/* main.c: sf-xform, the fission transformer. The driver is the table of contents: parse, check,
 * analyze, regions, rewrite, place, emit. Exit status: 0 success, 1 bad input, 2 bad usage.
 * Nothing is written unless the whole run succeeds; files are written atomically. */
#include "profile.h"
#include "sf.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
    "usage: sf-xform [options] GRAPH.xml\n"
    "\n"
    "Validates a StreamFission graph, finds the operators that can safely run as several copies and\n"
    "writes the parallel graph (XML) to standard output or -o FILE.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE     write the parallel graph to FILE (atomically) instead of stdout\n"
    "  -w, --width N         channels per parallel region (default: number of hosts, or of CPUs\n"
    "                        with one host); an operator's width attribute sets its region's\n"
    "                        width (the smallest wins), width=\"1\" keeps it serial\n"
    "      --hosts SPEC      hosts to place on: name=addr:port[,name=addr:port...] or @FILE with\n"
    "                        one entry per line (default: the graph's hosts, or local=" "127.0.0.1:7470)\n"
    "      --check           validate only (schema, references, types); write nothing else\n"
    "      --dot FILE        write a Graphviz picture of the parallel graph\n"
    "      --dot-input FILE  write a Graphviz picture of the input graph\n"
    "      --explain         say on stderr, per operator, what was parallelized and why not,\n"
    "                        and per region its estimated speed-up and what bounds it\n"
    "      --profile FILE    choose each region's width from the costs sf-exec --stats-json\n"
    "                        measured (FILE): the widest that still pays, up to -w and the\n"
    "                        cores or hosts; a region no width pays for stays serial\n"
    "      --dump PASS       print the graph after PASS (check, rewrite, place; regions: the\n"
    "                        decisions) on stdout and stop\n"
    "      --time-passes     say on stderr how long each pass took (wall and CPU seconds)\n"
    "  -h, --help            show this help\n"
    "  -V, --version         show the version\n"
    "\n"
    "exit status: 0 success, 1 bad input, 2 bad usage\n";

typedef struct Options {
  const char *input;     /* graph file */
  const char *output;    /* -o FILE or NULL for stdout */
  int width;             /* -w N, 0 when not given */
  const char *hosts;     /* --hosts SPEC */
  bool check_only;       /* --check */
  const char *dot;       /* --dot FILE */
  const char *dot_input; /* --dot-input FILE */
  bool explain;          /* --explain */
  const char *dump;      /* --dump PASS */
  bool time_passes;      /* --time-passes */
  const char *profile;   /* --profile FILE */
} Options;

static _Noreturn void usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "sf-xform: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'sf-xform --help' for more information.\n");
  exit(EXIT_USAGE);
}

static void parse_options(int argc, char **argv, Options *o) {
  static const struct option longs[] = {
    {"output", required_argument, 0, 'o'}, {"width", required_argument, 0, 'w'},
    {"hosts", required_argument, 0, 'H'},  {"check", no_argument, 0, 'c'},
    {"dot", required_argument, 0, 'd'},    {"dot-input", required_argument, 0, 'i'},
    {"explain", no_argument, 0, 'e'},      {"dump", required_argument, 0, 'D'},
    {"help", no_argument, 0, 'h'},         {"version", no_argument, 0, 'V'},
    {"time-passes", no_argument, 0, 'T'},  {"profile", required_argument, 0, 'P'},
    {0, 0, 0, 0},
  };
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":o:w:hV", longs, NULL)) != -1) {
    switch (c) {
    case 'o': o->output = optarg; break;
    case 'w': {
      char *end;
      errno = 0;
      long v = strtol(optarg, &end, 10);
      if (errno || *end || v < 1 || v > 1024) usage_error("width must be an integer from 1 to 1024, got '%s'", optarg);
      o->width = (int)v;
      break;
    }
    case 'H': o->hosts = optarg; break;
    case 'c': o->check_only = true; break;
    case 'd': o->dot = optarg; break;
    case 'i': o->dot_input = optarg; break;
    case 'e': o->explain = true; break;
    case 'T': o->time_passes = true; break;
    case 'P': o->profile = optarg; break;
    case 'D':
      if (strcmp(optarg, "check") && strcmp(optarg, "regions") && strcmp(optarg, "rewrite") && strcmp(optarg, "place"))
        usage_error("unknown pass '%s' for --dump (check, regions, rewrite, place)", optarg);
      o->dump = optarg;
      break;
    case 'h': fputs(usage_text, stdout); exit(0);
    case 'V': printf("sf-xform %s\n", SF_VERSION); exit(0);
    case ':': usage_error("option '%s' needs an argument", argv[optind - 1]);
    default: usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind == argc) usage_error("%s", "no graph file given");
  if (optind + 1 < argc) usage_error("more than one graph file given ('%s')", argv[optind + 1]);
  o->input = argv[optind];
}

/* ---- --time-passes: one line per pass on stderr, the time since the previous mark ---- */
static bool timing;
static double mark_wall, mark_cpu;

static double now(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pass_done(const char *pass) {
  if (!timing) return;
  double wall = now(CLOCK_MONOTONIC), cpu = now(CLOCK_PROCESS_CPUTIME_ID);
  if (pass) fprintf(stderr, "sf-xform: time: %-8s %8.3f s wall %8.3f s cpu\n", pass, wall - mark_wall, cpu - mark_cpu);
  mark_wall = wall;
  mark_cpu = cpu;
}

/* ---- output, all or nothing ----
 * An output to a file is rendered into an unnamed file in the target's directory (O_TMPFILE):
 * it gets a name only when every output is ready, so a run that fails or dies leaves nothing
 * behind, and a large picture never has to sit in memory. Where the file system cannot do that,
 * and for standard output, the bytes wait in memory. Either way the files are put in place by
 * rename(2), so a reader sees the old file or the new one, never half of one. */

typedef struct Pending {
  const char *path; /* target, NULL for stdout */
  int fd;           /* the unnamed file holding the bytes, or -1: they are in data */
  char *data;       /* bytes to write (malloc'ed) */
  size_t len;       /* how many */
  size_t cap;       /* bytes allocated at data */
  char *iobuf;      /* the stdio buffer of the stream rendering it, while one is open */
} Pending;

typedef int (*EmitFn)(const Graph *, FILE *);

/* A stream into memory that grows by doubling with realloc: unlike open_memstream, which copies
 * and clears the whole buffer each time it grows, a large buffer is moved by the kernel (mremap). */
static ssize_t pending_write(void *cookie, const char *buf, size_t n) {
  Pending *p = cookie;
  size_t cap = p->cap ? p->cap : 1 << 16;
  while (cap - p->len < n) cap *= 2;
  if (cap != p->cap) {
    p->data = sf_xrealloc(p->data, cap);
    p->cap = cap;
  }
  memcpy(p->data + p->len, buf, n);
  p->len += n;
  return (ssize_t)n;
}

enum { IO_BUFFER = 1 << 20 };

/* Gives a stream rendering p a buffer of IO_BUFFER bytes (setvbuf without a buffer of its own
 * would keep glibc's few KiB: a 100 MB output took 25,000 writes) and no locking (one thread). */
static FILE *buffered(FILE *f, Pending *p) {
  p->iobuf = sf_xmalloc(IO_BUFFER);
  setvbuf(f, p->iobuf, _IOFBF, IO_BUFFER);
  __fsetlocking(f, FSETLOCKING_BYCALLER);
  return f;
}

/* fclose(f) for a stream made by buffered; returns fclose's result. */
static int close_buffered(FILE *f, Pending *p) {
  int rc = fclose(f);
  free(p->iobuf);
  p->iobuf = NULL;
  return rc;
}

/* A stream writing into p's buffer; p must stay where it is until the stream is closed. */
static FILE *pending_open(Pending *p) {
  FILE *mem = fopencookie(p, "w", (cookie_io_functions_t){ .write = pending_write });
  if (!mem) sf_die("cannot render output in memory");
  return buffered(mem, p);
}

/* An unnamed file (mode 0666 less the umask, as creat(2) gives) in the directory of a path that
 * names a regular file or nothing yet, that commit_outputs can link in place; -1 when there is
 * none to be had (then the output waits in memory and commit_outputs says what is wrong). */
static int unnamed_file_for(const char *path) {
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return -1; /* a device or a pipe */
  if (access("/proc/self/fd", X_OK) != 0) return -1;           /* linkat needs it */
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
  if (!dir) sf_die("out of memory");
  int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  free(dir);
  return fd;
}

/* Renders fn(g) for path (NULL: stdout) into p. Returns 0, or the errno of a failed write (then
 * nothing is kept). Says nothing: it may run on a thread of its own. */
static int render_quiet(Pending *p, const char *path, EmitFn fn, const Graph *g) {
  *p = (Pending){ .path = path, .fd = path ? unnamed_file_for(path) : -1 };
  if (p->fd < 0) {
    FILE *mem = pending_open(p);
    if (fn(g, mem) != 0 || close_buffered(mem, p) != 0) sf_die("cannot render output in memory");
    return 0;
  }
  int copy = dup(p->fd);
  FILE *f = copy >= 0 ? fdopen(copy, "w") : NULL;
  int rc = -1, err = errno;
  if (f) {
    rc = fn(g, buffered(f, p));
    err = errno;
    if (close_buffered(f, p) != 0 && rc == 0) rc = -1, err = errno;
  }
  if (rc == 0) return 0;
  close(p->fd);
  p->fd = -1;
  return err ? err : EIO;
}

static void say_cannot_write(const char *path, int err) {
  fprintf(stderr, "sf-xform: error: cannot write '%s': %s\n", path, strerror(err));
}

/* render_quiet, then says why it failed. Returns 0 or -1. */
static int render(Pending *p, const char *path, EmitFn fn, const Graph *g) {
  int err = render_quiet(p, path, fn, g);
  if (err) say_cannot_write(path, err);
  return err ? -1 : 0;
}

/* One output rendered on a thread of its own: render_quiet's arguments and its result. */
typedef struct RenderJob {
  Pending *p;
  const char *path;
  EmitFn fn;
  const Graph *g;
  int err;
} RenderJob;

static void *render_job(void *arg) {
  RenderJob *j = arg;
  j->err = render_quiet(j->p, j->path, j->fn, j->g);
  return NULL;
}

/* Renders the parallel graph and its picture side by side (each only reads the graph): the two
 * largest outputs, 200 MB at 100,000 operators. Returns 0 or -1 after saying what failed. */
static int render_parallel(const Options *o, const Graph *g, Pending *outs, int *nouts) {
  RenderJob xml = { &outs[(*nouts)++], o->output, graph_emit_xml, g, 0 };
  RenderJob dot = { o->dot ? &outs[(*nouts)++] : NULL, o->dot, graph_dot_parallel, g, 0 };
  pthread_t tid;
  bool threaded = o->dot && pthread_create(&tid, NULL, render_job, &dot) == 0;
  render_job(&xml);
  if (o->dot && !threaded) render_job(&dot);
  if (threaded) pthread_join(tid, NULL);
  if (xml.err) say_cannot_write(o->output, xml.err);
  if (dot.err) say_cannot_write(o->dot, dot.err);
  return xml.err || dot.err ? -1 : 0;
}

static void pending_free(Pending *p) {
  if (p->fd >= 0) close(p->fd);
  free(p->data);
}

/* Gives the unnamed file fd the name `tmp` (PATH.tmp.XXXXXX, the Xs replaced). Returns 0 or -1. */
static int link_unnamed(int fd, char *tmp) {
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  size_t n = strlen(tmp);
  for (int attempt = 0; attempt < 100; attempt++) {
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned long r = (unsigned long)random() ^ ((unsigned long)getpid() << 8);
    for (size_t k = n - 6; k < n; k++, r /= 62) tmp[k] = letters[r % 62];
    if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) return 0;
    if (errno != EEXIST) return -1;
  }
  return -1;
}

/* Writes every pending output: files through a temporary file renamed into place. On failure
 * removes what it wrote and returns -1. */
static int commit_outputs(Pending *outs, int n) {
  mode_t file_mask = umask(0);
  umask(file_mask);
  char **tmps = calloc((size_t)n, sizeof *tmps);
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    if (!outs[i].path) continue;
    struct stat st;
    if (outs[i].fd < 0 && stat(outs[i].path, &st) == 0 && !S_ISREG(st.st_mode)) {
      /* a device or a pipe (/dev/stdout, a FIFO): written as it is, never replaced */
      FILE *f = fopen(outs[i].path, "w");
      if (!f || fwrite(outs[i].data, 1, outs[i].len, f) != outs[i].len || fclose(f) != 0) {
        fprintf(stderr, "sf-xform: error: cannot write '%s': %s\n", outs[i].path, strerror(errno));
        rc = -1;
      }
      continue;
    }
    tmps[i] = sf_xmalloc(strlen(outs[i].path) + 16);
    sprintf(tmps[i], "%s.tmp.XXXXXX", outs[i].path);
    if (outs[i].fd >= 0) {
      if (link_unnamed(outs[i].fd, tmps[i]) != 0) {
        fprintf(stderr, "sf-xform: error: cannot write '%s': %s\n", outs[i].path, strerror(errno));
        free(tmps[i]);
        tmps[i] = NULL;
        rc = -1;
      }
      continue;
    }
    int fd = mkstemp(tmps[i]);
    if (fd >= 0) fchmod(fd, 0666 & ~file_mask); /* mkstemp makes 0600; give what creat(2) would */
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f || fwrite(outs[i].data, 1, outs[i].len, f) != outs[i].len || fclose(f) != 0) {
      fprintf(stderr, "sf-xform: error: cannot write '%s': %s\n", outs[i].path, strerror(errno));
      if (fd >= 0) unlink(tmps[i]);
      free(tmps[i]);
      tmps[i] = NULL;
      rc = -1;
    }
  }
  for (int i = 0; i < n; i++) {
    if (!tmps[i]) continue;
    if (rc == 0 && rename(tmps[i], outs[i].path) != 0) {
      fprintf(stderr, "sf-xform: error: cannot write '%s': %s\n", outs[i].path, strerror(errno));
      rc = -1;
    }
    if (rc != 0) unlink(tmps[i]);
    free(tmps[i]);
  }
  free(tmps);
  if (rc == 0)
    for (int i = 0; i < n; i++)
      if (!outs[i].path && fwrite(outs[i].data, 1, outs[i].len, stdout) != outs[i].len) rc = -1;
  if (rc == 0 && fflush(stdout) != 0) {
    fprintf(stderr, "sf-xform: error: cannot write to standard output: %s\n", strerror(errno));
    rc = -1;
  }
  return rc;
}

static int default_width(const Graph *g, int nhosts) {
  if (nhosts > 1) return nhosts;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return cpus > 1 ? (int)(cpus > 1024 ? 1024 : cpus) : 1;
}

/* Ends a pass: prints what it reported (warnings too) in `order` and says whether it found no error.
 * The driver stops at the first pass with errors, so every error counted is that pass's. */
static bool end_pass(Diag *d, DiagOrder order) {
  diag_flush(d, order);
  return d->nerrors == 0;
}

/* Runs every pass after parsing; what it builds is handed back in *parallel and outs for main to
 * free, whichever way it returns. Returns the exit status. */
static int run(const Options *o, Diag *d, Graph *g, Graph **parallel, Pending *outs, int *nouts) {
  graph_check(g, d);
  pass_done("check");
  if (!end_pass(d, DIAG_BY_PLACE)) return EXIT_INPUT;
  if (o->dump && !strcmp(o->dump, "check")) return graph_emit_xml(g, stdout) ? EXIT_INPUT : 0;

  Host **hosts = g->hosts;
  int nhosts = g->nhosts;
  if (o->hosts) {
    char err[512];
    if (hosts_parse(g, o->hosts, &hosts, &nhosts, err, sizeof err) < 0) {
      fprintf(stderr, "sf-xform: %s\nTry 'sf-xform --help' for more information.\n", err);
      return EXIT_USAGE;
    }
  }
  graph_check_pins(g, hosts, nhosts, d);
  if (!end_pass(d, DIAG_BY_PLACE)) return EXIT_INPUT;

  if (o->dot_input && render(&outs[(*nouts)++], o->dot_input, graph_dot_input, g) != 0)
    return EXIT_INPUT;
  if (o->dot_input) pass_done("dot-input");
  if (o->check_only) return commit_outputs(outs, *nouts) ? EXIT_INPUT : 0;

  graph_analyze(g);
  pass_done("analyze");
  Profile *prof = NULL;
  if (o->profile) {
    char err[4352];
    if (!(prof = profile_read(g->arena, o->profile, err, sizeof err))) {
      fprintf(stderr, "sf-xform: error: %s\n", err);
      return EXIT_INPUT;
    }
    pass_done("profile");
  }
  /* with a profile, what runs at once: the profile's cores on each host; and its widths: at most
   * the cores of one host, or the hosts. Without one the estimates assume a core per thread, so
   * that --explain says the same on every machine. */
  int cores = prof ? (nhosts > 1 ? nhosts : 1) * prof->cores : 0;
  int max = !prof ? 0 : nhosts > 1 ? nhosts : prof->cores;
  Fission *f = fission_regions_profiled(g, o->width ? o->width : default_width(g, nhosts), prof, max, cores);
  pass_done("regions");
  if (o->dump && !strcmp(o->dump, "regions")) {
    fission_explain(f, stdout);
    return 0;
  }
  if (o->explain) { /* stderr is unbuffered: one write, not one per piece of each line */
    Pending text = {0};
    FILE *mem = pending_open(&text);
    fission_explain(f, mem);
    if (close_buffered(mem, &text) != 0) sf_die("cannot render output in memory");
    fwrite(text.data, 1, text.len, stderr);
    free(text.data);
    pass_done("explain");
  }

  *parallel = fission_rewrite(f);
  pass_done("rewrite");
  if (o->dump && !strcmp(o->dump, "rewrite")) return graph_emit_xml(*parallel, stdout) ? EXIT_INPUT : 0;
  (*parallel)->hosts = hosts;
  (*parallel)->nhosts = nhosts;
  graph_place(*parallel, d);
  pass_done("place");
  if (!end_pass(d, DIAG_BY_PLACE)) return EXIT_INPUT;
  if (o->dump && !strcmp(o->dump, "place")) return graph_emit_xml(*parallel, stdout) ? EXIT_INPUT : 0;

  int rendered = render_parallel(o, *parallel, outs, nouts);
  pass_done("emit");
  if (rendered != 0) return EXIT_INPUT;
  int rc = commit_outputs(outs, *nouts) ? EXIT_INPUT : 0;
  pass_done("commit");
  return rc;
}

int main(int argc, char **argv) {
  Options o = {0};
  parse_options(argc, argv, &o);
  /* Arena blocks come from the heap, where the parsed document's memory is free again by the
   * time the parallel graph is built, rather than from fresh mappings the kernel must fill. */
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  /* No fast bins: the million small blocks of the parsed document, freed at once, are merged as
   * they are freed instead of all together by the next large free (0.2 s at 100,000 operators). */
  mallopt(M_MXFAST, 0);
  Diag d;
  diag_init(&d, o.input, stderr);
  timing = o.time_passes;
  pass_done(NULL);

  Graph *g = graph_parse_file(o.input, sf_schema_path(), &d);
  pass_done("parse");
  if (!end_pass(&d, DIAG_AS_REPORTED) || !g) return EXIT_INPUT;
  Graph *parallel = NULL;
  Pending outs[3];
  int nouts = 0;
  int rc = run(&o, &d, g, &parallel, outs, &nouts);
  for (int i = 0; i < nouts; i++) pending_free(&outs[i]);
  graph_free(parallel);
  graph_free(g);
  pass_done("free");
  return rc;
}
