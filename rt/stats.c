/* stats.c: per-operator counts while the job runs (--stats) and at its end, as text or as JSON
 * (--stats-json), and at each sink the latency of its tuples from their source (with --stats every
 * source stamps its tuples, Item.born, and the stamp travels with what is computed from them). The counters themselves are the operators' n_in and n_out (count_one in
 * flow.c); this file only reads them. With either option it also samples the CPU time of each
 * operator's own callbacks (the profile, below), which `sf-xform --profile` reads. */
#include "exec_priv.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

double stats_seconds(const Exec *x) {
  const struct timespec *t0 = &x->started;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static long peak_rss_kib(void) {
  struct rusage ru;
  return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* ---- the profile: CPU time per operator, sampled ----
 *
 * Timing every delivery would cost two clock reads (~30 ns each here) per operator per tuple, as
 * much as a cheap operator itself. So an operator times one delivery in PROF_EVERY of those it gets
 * and, inside a timed one, every nested delivery (the consumers on direct edges that rt_emit calls at once): a delivery's own time
 * is its elapsed time less the nested timed ones (and the clock reads themselves). An operator's
 * cpu_ns is then the mean of its samples times its deliveries. Samples longer than 32 times the
 * median of the operator's samples are left out of the mean: they are a thread that was preempted or
 * waited for room in a full queue, not the operator's work.
 *
 * The thread's CPU time (CLOCK_THREAD_CPUTIME_ID, read once when it ends) is exact; what it holds
 * beyond its operators' samples (a source's own loop, which is one call and never sampled; a driver
 * taking batches from queues and ordering them) is given to the operator that drives the thread (its
 * source, or the operator fed by its queues). When the samples add up to more than the thread's CPU
 * time (a loaded machine: wall time is not CPU time), they are scaled down to it. */

enum { PROF_TRIM = 5 /* samples over 2^5 = 32 times the median are left out */ };

static int64_t prof_self_ns;             /* what timing adds to an empty delivery's own time (plan) */
static int64_t prof_kid_ns;              /* and to its caller's, beyond the delivery's elapsed time (plan) */
_Thread_local int prof_depth;            /* timed deliveries in progress (exec_priv.h) */
static _Thread_local int64_t prof_nested;/* ns of the timed deliveries nested in the current one */

static inline int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A timed delivery starts, *saved keeping the caller's nested time. */
static inline void prof_begin(int64_t *saved, int64_t *t0) {
  *saved = prof_nested;
  prof_nested = 0;
  prof_depth++;
  *t0 = mono_ns();
}

static inline void prof_end(struct Prof *p, int64_t saved, int64_t t0) {
  int64_t el = mono_ns() - t0;
  int64_t self = el - prof_nested - prof_self_ns;
  if (self < 0) self = 0;
  int b = self ? 64 - __builtin_clzll((uint64_t)self) : 0;
  p->n[b]++;
  p->ns[b] += (uint64_t)self;
  prof_nested = saved + el + prof_kid_ns; /* the caller's: this one, its timing included */
  prof_depth--;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* What timing itself costs, the medians of empty deliveries timed as prof_deliver times them: an
 * empty one's own time (prof_self_ns), and what one empty nested one adds to its caller beyond
 * its elapsed time (prof_kid_ns), so that both measure 0. */
static void prof_calibrate(void) {
  enum { TRIES = 255 };
  int64_t self[TRIES], kid[TRIES];
  struct Prof outer, inner;
  prof_self_ns = prof_kid_ns = 0;
  for (int i = 0; i < TRIES; i++) {
    int64_t s0, t0, s1, t1;
    memset(&outer, 0, sizeof outer);
    memset(&inner, 0, sizeof inner);
    prof_begin(&s0, &t0);
    prof_begin(&s1, &t1);
    prof_end(&inner, s1, t1);
    prof_end(&outer, s0, t0);
    int64_t inner_self = 0, outer_self = 0;
    for (int b = 0; b < PROF_BUCKETS; b++) {
      inner_self += (int64_t)inner.ns[b];
      outer_self += (int64_t)outer.ns[b];
    }
    self[i] = inner_self;          /* with prof_self_ns 0: the empty one's raw own time */
    kid[i] = outer_self - self[i]; /* with prof_kid_ns 0: the caller's time less its own empty part */
  }
  prof_nested = 0;
  qsort(self, TRIES, sizeof *self, cmp_i64);
  qsort(kid, TRIES, sizeof *kid, cmp_i64);
  prof_self_ns = self[TRIES / 2];
  prof_kid_ns = kid[TRIES / 2];
}

struct Prof *stats_prof_new(Exec *x) {
  if (!x->o->stats && !x->o->stats_json) return NULL;
  static bool calibrated;
  if (!calibrated) {
    prof_calibrate();
    calibrated = true;
  }
  struct Prof *p = arena_alloc(x->arena, sizeof *p);
  memset(p, 0, sizeof *p);
  return p;
}

int prof_deliver(Node *n, int slot, const Item *it) {
  int64_t saved, t0;
  prof_begin(&saved, &t0);
  int rc = node_deliver_now(n, slot, it);
  prof_end(n->prof, saved, t0);
  return rc;
}

int prof_deliver_run(Node *n, int slot, Item *items, int k) {
  int64_t saved, t0;
  prof_begin(&saved, &t0);
  int rc = deliver_run_now(n, slot, items, k);
  prof_end(n->prof, saved, t0);
  return rc;
}

int prof_deliver_tuple(Node *n, int slot, uint64_t seq, uint64_t src, int64_t born, Tuple *t) {
  Item it;
  it.kind = ITEM_TUPLE;
  it.keylen = 0;
  it.seq = seq;
  it.src = src;
  it.born = born;
  it.t = t;
  return prof_deliver(n, slot, &it);
}

int64_t stats_thread_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The sampled estimate of n's own time: its deliveries times their trimmed mean. */
static double prof_estimate(const Node *n) {
  const struct Prof *p = n->prof;
  if (!p) return 0;
  uint64_t total = 0, seen = 0, cnt = 0;
  double ns = 0;
  for (int b = 0; b < PROF_BUCKETS; b++) total += p->n[b];
  if (total == 0) return 0;
  int median = 0;
  for (; median < PROF_BUCKETS; median++)
    if ((seen += p->n[median]) * 2 >= total) break;
  for (int b = 0; b < PROF_BUCKETS && b <= median + PROF_TRIM; b++) {
    cnt += p->n[b];
    ns += (double)p->ns[b];
  }
  return cnt ? ns / (double)cnt * (double)p->calls : 0;
}

/* Every local operator's CPU ns (by node index) and, per group, the thread's: as the top says. */
static double *prof_cpu(Exec *x) {
  double *cpu = calloc((size_t)x->nnodes + 1, sizeof *cpu);
  if (!cpu) return NULL;
  for (int i = 0; i < x->nnodes; i++)
    if (x->nodes[i].local) cpu[i] = prof_estimate(&x->nodes[i]);
  for (int gi = 0; gi < x->groups.n; gi++) {
    Group *g = x->groups.items[gi];
    double sum = 0;
    for (int i = 0; i < x->nnodes; i++)
      if (x->nodes[i].local && x->nodes[i].group == g) sum += cpu[i];
    if (g->cpu_ns <= 0) continue; /* not measured: the samples stand */
    double thread = (double)g->cpu_ns;
    Node *driver = g->source ? g->source : g->entry;
    if (sum > thread) {
      for (int i = 0; i < x->nnodes; i++)
        if (x->nodes[i].local && x->nodes[i].group == g) cpu[i] *= thread / sum;
    } else if (driver) {
      cpu[driver - x->nodes] += thread - sum;
    }
  }
  return cpu;
}

static int usable_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* ---- latency ---- */

/* The bucket of a latency of us microseconds: below LATENCY_SUB one per microsecond, then
 * LATENCY_SUB per power of two. */
static int bucket_of(uint64_t us) {
  if (us < LATENCY_SUB) return (int)us;
  int p = 63 - __builtin_clzll(us);                 /* us in [2^p, 2^(p+1)) */
  int sub = (int)((us >> (p - 4)) & (LATENCY_SUB - 1)); /* the 4 bits after the leading one */
  int b = (p - 3) * LATENCY_SUB + sub;
  return b < LATENCY_BUCKETS ? b : LATENCY_BUCKETS - 1;
}

/* The largest latency (us) of bucket b. */
static double bucket_top(int b) {
  if (b < LATENCY_SUB) return b;
  int p = b / LATENCY_SUB + 3, sub = b % LATENCY_SUB;
  return (double)(((uint64_t)(LATENCY_SUB + sub + 1) << (p - 4)) - 1);
}

void latency_record(Latency *l, int64_t born) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - born;
  uint64_t d = ns > 0 ? (uint64_t)ns : 0;
  atomic_ullong *c = &l->count[bucket_of(d / 1000)];
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
  /* the sum for --metrics' histogram: an addition beside the clock read, on a line the sink's
   * thread alone writes */
  atomic_store_explicit(&l->sum_ns, atomic_load_explicit(&l->sum_ns, memory_order_relaxed) + d, memory_order_relaxed);
}

double latency_quantile(const Latency *l, double q) {
  unsigned long long total = 0, seen = 0;
  for (int b = 0; b < LATENCY_BUCKETS; b++) total += atomic_load_explicit(&l->count[b], memory_order_relaxed);
  if (total == 0) return -1;
  unsigned long long want = (unsigned long long)(q * (double)total);
  if (want >= total) want = total - 1;
  for (int b = 0; b < LATENCY_BUCKETS; b++) {
    seen += atomic_load_explicit(&l->count[b], memory_order_relaxed);
    if (seen > want) return bucket_top(b);
  }
  return bucket_top(LATENCY_BUCKETS - 1);
}

/* "  latency p50 2.111 ms p99 4.511 ms p99.9 5.823 ms" for a sink that saw a tuple, else nothing. */
static void print_latency(FILE *f, const Node *n) {
  if (!n->latency || latency_quantile(n->latency, 0.5) < 0) return;
  static const double qs[] = { 0.5, 0.99, 0.999 };
  static const char *names[] = { "p50", "p99", "p99.9" };
  fprintf(f, "  latency");
  for (int i = 0; i < 3; i++) fprintf(f, " %s %.3f ms", names[i], latency_quantile(n->latency, qs[i]) / 1000.0);
}

/* An operator's current tick, once it has seen one: the stats show how far event time has got. */
static void print_tick(FILE *f, const Node *n, bool json) {
  int64_t t = atomic_load_explicit(&n->inst.cur_tick, memory_order_relaxed);
  if (t == TICK_NONE) return;
  if (t == TICK_FINAL)
    fprintf(f, json ? ", \"tick\": \"final\"" : "  tick final");
  else
    fprintf(f, json ? ", \"tick\": %lld" : "  tick %lld", (long long)t);
}

/* A time-window Aggregate: its stats say how many late tuples it dropped, 0 included. */
static bool counts_late(const Node *n) {
  WindowSpec w;
  return op_time_window(n->op, &w) || n->op->kind == KIND_JOIN;
}

/* A source with onerror="skip": its stats say how many malformed lines it dropped. */
static bool skips_lines(const Node *n) {
  const char *onerror = n->inst.impl && !n->op->ninputs ? op_param(n->op, "onerror") : NULL;
  return onerror && !strcmp(onerror, "skip");
}

void stats_print(Exec *x, bool final) {
  double t = stats_seconds(x);
  fprintf(x->log, "sf-exec: stats %s at %.1f s, peak memory %ld KiB\n", final ? "summary" : "so far", t,
          peak_rss_kib());
  for (int i = 0; i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (!n->local) continue;
    unsigned long long in = atomic_load(&n->inst.n_in), out = atomic_load(&n->inst.n_out);
    fprintf(x->log, "  %-24s %-10s in %12llu  out %12llu  %12.0f in/s  %12.0f out/s", n->op->name,
            kind_name(n->op->kind), in, out, t > 0 ? in / t : 0.0, t > 0 ? out / t : 0.0);
    if (skips_lines(n)) fprintf(x->log, "  skipped %llu", (unsigned long long)atomic_load(&n->inst.n_skipped));
    if (counts_late(n)) fprintf(x->log, "  late %llu", (unsigned long long)atomic_load(&n->inst.n_late));
    if (n->op->kind == KIND_JOIN)
      fprintf(x->log, "  kept peak %llu (%llu KiB)", (unsigned long long)atomic_load(&n->inst.kept_peak),
              (unsigned long long)atomic_load(&n->inst.kept_peak_bytes) / 1024);
    print_tick(x->log, n, false);
    print_latency(x->log, n);
    fputc('\n', x->log);
  }
  fflush(x->log);
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

int stats_check_json(const char *path) {
  struct stat st;
  bool exists = stat(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    return -1;
  }
  if (exists && !S_ISREG(st.st_mode)) return access(path, W_OK);
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int fd = mkstemp(tmp);
  if (fd < 0) return -1;
  close(fd);
  unlink(tmp);
  return 0;
}

int stats_write_json(Exec *x, const char *path, bool ok) {
  char tmp[PATH_MAX];
  struct stat st;
  bool direct = stat(path, &st) == 0 && !S_ISREG(st.st_mode); /* /dev/stdout, a pipe: never replaced */
  snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
  int fd = direct ? -1 : mkstemp(tmp);
  FILE *f = direct ? fopen(path, "w") : fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) return -1;
  double t = stats_seconds(x);
  fprintf(f, "{\n  \"graph\": ");
  json_string(f, x->g->name ? x->g->name : "");
  fprintf(f, ",\n  \"host\": ");
  json_string(f, x->o->host ? x->o->host : "");
  fprintf(f, ",\n  \"ok\": %s,\n  \"seconds\": %.3f,\n  \"peak_rss_kib\": %ld,\n  \"cores\": %d,\n  \"operators\": [\n",
          ok ? "true" : "false", t, peak_rss_kib(), usable_cores());
  double *cpu = prof_cpu(x);
  bool first = true;
  for (int i = 0; i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (!n->local) continue;
    unsigned long long in = atomic_load(&n->inst.n_in), out = atomic_load(&n->inst.n_out);
    fprintf(f, "%s    {\"name\": ", first ? "" : ",\n");
    json_string(f, n->op->name);
    fprintf(f, ", \"kind\": \"%s\"", kind_name(n->op->kind));
    if (n->op->origin) { /* a replica, Split or Merge of sf-xform: the operator it comes from */
      fprintf(f, ", \"origin\": ");
      json_string(f, n->op->origin);
    }
    fprintf(f, ", \"in\": %llu, \"out\": %llu, \"in_per_s\": %.1f, \"out_per_s\": %.1f", in, out,
            t > 0 ? in / t : 0.0, t > 0 ? out / t : 0.0);
    if (skips_lines(n)) fprintf(f, ", \"skipped\": %llu", (unsigned long long)atomic_load(&n->inst.n_skipped));
    if (counts_late(n)) fprintf(f, ", \"late\": %llu", (unsigned long long)atomic_load(&n->inst.n_late));
    if (n->op->kind == KIND_JOIN)
      fprintf(f, ", \"kept_peak\": %llu, \"kept_peak_bytes\": %llu", (unsigned long long)atomic_load(&n->inst.kept_peak),
              (unsigned long long)atomic_load(&n->inst.kept_peak_bytes));
    print_tick(f, n, true);
    if (n->latency && latency_quantile(n->latency, 0.5) >= 0)
      fprintf(f, ", \"latency_us\": {\"p50\": %.0f, \"p99\": %.0f, \"p99_9\": %.0f}", latency_quantile(n->latency, 0.5),
              latency_quantile(n->latency, 0.99), latency_quantile(n->latency, 0.999));
    if (cpu) {
      unsigned long long most = in > out ? in : out;
      fprintf(f, ", \"cpu_ns\": %.0f, \"ns_per_tuple\": %.1f", cpu[i], most ? cpu[i] / (double)most : 0.0);
    }
    fputc('}', f);
    first = false;
  }
  fprintf(f, "\n  ],\n  \"threads\": [\n");
  for (int gi = 0; gi < x->groups.n; gi++) {
    Group *g = x->groups.items[gi];
    Node *driver = g->source ? g->source : g->entry;
    fprintf(f, "%s    {\"name\": ", gi ? ",\n" : "");
    json_string(f, driver ? driver->op->name : "");
    fprintf(f, ", \"cpu_ns\": %lld, ", (long long)g->cpu_ns);
    if (g->hosted) fputs("\"hosted\": true, ", f); /* no thread: its pumps on its channels' threads */
    fputs("\"operators\": [", f);
    bool one = true;
    for (int i = 0; i < x->nnodes; i++) {
      if (!x->nodes[i].local || x->nodes[i].group != g) continue;
      if (!one) fputs(", ", f);
      json_string(f, x->nodes[i].op->name);
      one = false;
    }
    fputs("]}", f);
  }
  fprintf(f, "\n  ]\n}\n");
  free(cpu);
  if (direct) return fclose(f) == 0 ? 0 : -1;
  fchmod(fileno(f), 0644);
  if (fclose(f) != 0 || rename(tmp, path) != 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}
