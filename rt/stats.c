/* stats.c: per-operator counts while the job runs (--stats) and at its end, as text or as JSON
 * (--stats-json), and at each sink the latency of its tuples from their source (with --stats every
 * source stamps its tuples, Item.born, and the stamp travels with what is computed from them). The counters themselves are the operators' n_in and n_out (count_one in
 * flow.c); this file only reads them. */
#include "exec_priv.h"

#include <errno.h>
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
  atomic_ullong *c = &l->count[bucket_of(ns > 0 ? (uint64_t)ns / 1000 : 0)];
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
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
  fprintf(f, ",\n  \"ok\": %s,\n  \"seconds\": %.3f,\n  \"peak_rss_kib\": %ld,\n  \"operators\": [\n",
          ok ? "true" : "false", t, peak_rss_kib());
  bool first = true;
  for (int i = 0; i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (!n->local) continue;
    unsigned long long in = atomic_load(&n->inst.n_in), out = atomic_load(&n->inst.n_out);
    fprintf(f, "%s    {\"name\": ", first ? "" : ",\n");
    json_string(f, n->op->name);
    fprintf(f, ", \"kind\": \"%s\", \"in\": %llu, \"out\": %llu, \"in_per_s\": %.1f, \"out_per_s\": %.1f",
            kind_name(n->op->kind), in, out, t > 0 ? in / t : 0.0, t > 0 ? out / t : 0.0);
    if (skips_lines(n)) fprintf(f, ", \"skipped\": %llu", (unsigned long long)atomic_load(&n->inst.n_skipped));
    if (n->latency && latency_quantile(n->latency, 0.5) >= 0)
      fprintf(f, ", \"latency_us\": {\"p50\": %.0f, \"p99\": %.0f, \"p99_9\": %.0f}", latency_quantile(n->latency, 0.5),
              latency_quantile(n->latency, 0.99), latency_quantile(n->latency, 0.999));
    fputc('}', f);
    first = false;
  }
  fprintf(f, "\n  ]\n}\n");
  if (direct) return fclose(f) == 0 ? 0 : -1;
  fchmod(fileno(f), 0644);
  if (fclose(f) != 0 || rename(tmp, path) != 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}
