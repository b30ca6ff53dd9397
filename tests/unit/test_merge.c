/* test_merge.c: the ordered merges of the executor (rt/order.c; rt/ops/split.c,
 * rt/ops/merge.c) restore the sequential order whatever the channels do.
 *
 * Every graph here exists twice: sequential, and parallel, either written by hand in the rewritten
 * form (Split and Merge operators with region and channel attributes, as sf-xform emits them) or
 * produced by the transformer's library calls. Inside the regions, sf_jitter (tests/ops/jitter.c,
 * libsf_test_ops.so) sleeps a pseudo-random time per tuple, different with every seed, so the
 * channels race and their outputs reach the Merge in ever different interleavings. Each parallel
 * run's CSV must equal the sequential run's byte for byte, and the sequential run's must equal the
 * text worked out here in C from the source's formulas.
 *
 * Cases: roundrobin, seq and seqpulse merges (Filters that drop everything in some channels, pulse
 * periods 1, 7, 128 and 0), shuffles between differently keyed regions, the final punctuation
 * reaching a merge from the channels in every order (steered with sf_jitter's slow_last), batches
 * of 1 and 3 items with queues of one batch (back-pressure, flush before wait), empty inputs
 * through every merge kind, and fan-in (an operator whose input lists two streams).
 *
 * Every case runs again with a checkpoint every 10 ms ("checkpoints"): the barriers must not change
 * a byte, nor hold anything up, and the completed jobs leave no checkpoint behind.
 *
 * A watchdog fails a run that does not finish within RUN_TIMEOUT_S seconds (a deadlock) and names
 * it; $SF_TEST_MERGE_TIMEOUT (seconds) overrides that, to attach a debugger to a hung run. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_helper.h"
#include "rt.h"
#include "sf.h"
#include "value.h"
/* where libsf_test_ops.so is built (tests/ops/CMakeLists.txt passes the exact directory) */
#ifndef SF_TEST_OPS_DIR
#define SF_TEST_OPS_DIR SF_BINARY_DIR "/lib/streamfission"
#endif

enum { RUN_TIMEOUT_S = 10 };

/* ---- the temporary directory each test runs in ---- */

static char tmpdir[64];
static bool have_tmpdir;

/* Removes the directory and its files (absolute paths: a job may still be running when a test
 * fails). A failing test's process ends at once, without its teardown: the failures below call
 * this first. */
static void remove_tmpdir(void) {
  if (!have_tmpdir) return;
  have_tmpdir = false;
  DIR *d = opendir(tmpdir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
        char path[sizeof tmpdir + 256];
        snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
        unlink(path);
      }
    closedir(d);
  }
  rmdir(tmpdir);
}

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/sf-test-merge-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
  have_tmpdir = true;
  ck_assert_int_eq(chdir(tmpdir), 0);
  setenv("SF_LIBRARY_PATH", SF_TEST_OPS_DIR, 1);
}

static void teardown(void) {
  if (chdir("/") != 0) return;
  remove_tmpdir();
}

/* The "checkpoints" case runs the same tests with a checkpoint every 10 ms: barriers cross every
 * merge and fan-in while the channels race, and the output must not change by a byte. */
static bool with_checkpoints;
static void setup_checkpoints(void) {
  setup();
  with_checkpoints = true;
}
static void teardown_checkpoints(void) {
  with_checkpoints = false;
  teardown();
}

/* ---- text ---- */

/* printf into a new malloc'd string */
static char *strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *strf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  ck_assert_int_ge(vasprintf(&s, fmt, ap), 0);
  va_end(ap);
  return s;
}

/* A growing string written through a FILE. */
typedef struct Text {
  char *s;
  size_t n;
  FILE *f;
} Text;

static void text_open(Text *t) {
  t->s = NULL;
  t->n = 0;
  t->f = open_memstream(&t->s, &t->n);
  ck_assert_ptr_nonnull(t->f);
}

static char *text_close(Text *t) {
  fclose(t->f);
  return t->s;
}

/* Writes tmpl to f with every "@NAME@" whose NAME is one of names[] replaced by the matching vals[]
 * (other '@' are copied as they are). */
static void subst(FILE *f, const char *tmpl, const char *const *names, const char *const *vals, int n) {
  for (const char *p = tmpl; *p;) {
    if (*p == '@') {
      const char *end = strchr(p + 1, '@');
      int i = 0;
      for (; end && i < n; i++)
        if ((size_t)(end - p - 1) == strlen(names[i]) && !strncmp(p + 1, names[i], (size_t)(end - p - 1))) break;
      if (end && i < n) {
        fputs(vals[i], f);
        p = end + 1;
        continue;
      }
    }
    fputc(*p++, f);
  }
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  ck_assert_int_eq(fclose(f), 0);
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* Fails naming `what` and the first line where got and want differ. */
static void assert_same(const char *got, const char *want, const char *what) {
  if (!strcmp(got, want)) return;
  int line = 1;
  const char *g = got, *w = want;
  while (*g && *g == *w) {
    if (*g == '\n') line++;
    g++, w++;
  }
  while (g > got && g[-1] != '\n') g--, w--;
  int gl = (int)strcspn(g, "\n"), wl = (int)strcspn(w, "\n");
  remove_tmpdir();
  ck_abort_msg("%s: output differs from the sequential one at line %d: got '%.*s', want '%.*s' (%d lines, want %d)",
               what, line, gl, g, wl, w, count_lines(got), count_lines(want));
}

/* ---- the source and the values it generates ---- */

/* Every graph reads stream A of schema T: v = 0, 1, 2, ... (unique: sf_jitter's sleep and
 * slow_last use it); k and w, two keys of 13 and 10 values; h, a skewed key (70% of the tuples
 * have h = 0). The same formulas in C give the expected outputs. */
static int64_t key_k(int64_t v) { return (v * v + v / 3) % 13; }
static int64_t key_w(int64_t v) { return (v * 7 + v / 5) % 10; }
static int64_t key_h(int64_t v) { return v % 10 < 7 ? 0 : v % 7 + 1; }

#define SCHEMAS                                                                                                   \
  "<schema name=\"T\"><attr name=\"v\" type=\"int\"/><attr name=\"k\" type=\"int\"/><attr name=\"w\" "          \
  "type=\"int\"/><attr name=\"h\" type=\"int\"/></schema>\n"                                                      \
  "<schema name=\"TN\"><attr name=\"v\" type=\"int\"/><attr name=\"k\" type=\"int\"/><attr name=\"w\" "         \
  "type=\"int\"/><attr name=\"h\" type=\"int\"/><attr name=\"n\" type=\"int\"/></schema>\n"                      \
  "<schema name=\"TS\"><attr name=\"v\" type=\"int\"/><attr name=\"k\" type=\"int\"/><attr name=\"w\" "         \
  "type=\"int\"/><attr name=\"h\" type=\"int\"/><attr name=\"n\" type=\"int\"/><attr name=\"s\" "               \
  "type=\"int\"/></schema>\n"

#define SETS                                                                                                      \
  "<set attr=\"v\">seq</set><set attr=\"k\">(seq * seq + seq / 3) % 13</set>"                                    \
  "<set attr=\"w\">(seq * 7 + seq / 5) % 10</set><set attr=\"h\">seq % 10 &lt; 7 ? 0 : seq % 7 + 1</set>"

/* A Beacon of n tuples producing stream A (n > 0: Beacon's count 0 means unbounded). */
static char *beacon(int n) {
  return strf("<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"T\"/>"
              "<param name=\"count\">%d</param>%s</operator>\n", n, SETS);
}

/* An empty stream A: a FileSource reading a header-only file. */
static char *empty_source(void) {
  write_text("empty.csv", "v,k,w,h\n");
  return strf("<operator name=\"src\" kind=\"FileSource\"><output stream=\"A\" schema=\"T\"/>"
              "<param name=\"file\">empty.csv</param><param name=\"format\">csv</param></operator>\n");
}

#define SINK(stream)                                                                                              \
  "<operator name=\"out\" kind=\"FileSink\"><input stream=\"" stream "\"/>"                                       \
  "<param name=\"file\">out.csv</param><param name=\"format\">csv</param></operator>\n"

#define MODEL_JITTER "<model state=\"none\" selectivity=\"one\" forwards=\"*\" punct=\"none\"/>"
#define LIB_JITTER "<library path=\"libsf_test_ops.so\" symbol=\"sf_jitter\"/>"

/* An sf_jitter operator of a channel template (below): seed @SEED@, extra sleeps @SLOW@. */
#define JITTER(name, in, out, schema, maxus)                                                                      \
  "<operator name=\"" name "@C@\" kind=\"Custom\"@R@><input stream=\"" in "\"/>"                                  \
  "<output stream=\"" out "\" schema=\"" schema "\"/><param name=\"seed\">@SEED@</param>"                         \
  "<param name=\"maxus\">" maxus "</param>@SLOW@" MODEL_JITTER LIB_JITTER "</operator>\n"

/* ---- expected outputs, worked out in C ---- */

static void put_t(FILE *f, int64_t v) {
  fprintf(f, "%lld,%lld,%lld,%lld", (long long)v, (long long)key_k(v), (long long)key_w(v), (long long)key_h(v));
}

typedef bool (*Pred)(int64_t v);

/* The CSV of the tuples v in [0, n) for which keep(v) (all when keep is NULL). */
static char *expect_t(int n, Pred keep) {
  Text t;
  text_open(&t);
  fputs("v,k,w,h\n", t.f);
  for (int64_t v = 0; v < n; v++)
    if (!keep || keep(v)) {
      put_t(t.f, v);
      fputc('\n', t.f);
    }
  return text_close(&t);
}

/* COUNT_BY_KEY(x): Functor "cnt" partitioned on x, n = how many tuples of its key so far. */
#define COUNT_BY_KEY(x, in, out)                                                                                  \
  "<operator name=\"cnt@C@\" kind=\"Functor\"@R@><input stream=\"" in "\"/><output stream=\"" out                 \
  "\" schema=\"TN\"/><param name=\"partitionBy\">" x "</param><state name=\"c\" type=\"int\" init=\"0\">"         \
  "c + 1</state><set attr=\"n\">c</set></operator>\n"

static char *expect_count_by(int n, int64_t (*key)(int64_t)) {
  Text t;
  text_open(&t);
  fputs("v,k,w,h,n\n", t.f);
  int64_t count[16] = {0};
  for (int64_t v = 0; v < n; v++) {
    put_t(t.f, v);
    fprintf(t.f, ",%lld\n", (long long)++count[key(v)]);
  }
  return text_close(&t);
}

/* The shuffle's two keyed, selective Functors: "a" partitioned on k (c counts the key's tuples,
 * passes when c % 3 != 1, n = c), then "b" partitioned on w (m sums the key's n, passes when
 * m % 4 != 1, s = m). */
#define FUNCTOR_A(in, out)                                                                                        \
  "<operator name=\"a@C@\" kind=\"Functor\"@R@><input stream=\"" in "\"/><output stream=\"" out                   \
  "\" schema=\"TN\"/><param name=\"partitionBy\">k</param><param name=\"where\">c % 3 != 1</param>"                \
  "<state name=\"c\" type=\"int\" init=\"0\">c + 1</state><set attr=\"n\">c</set></operator>\n"
#define FUNCTOR_B(in, out)                                                                                        \
  "<operator name=\"b@C@\" kind=\"Functor\"@R@><input stream=\"" in "\"/><output stream=\"" out                   \
  "\" schema=\"TS\"/><param name=\"partitionBy\">w</param><param name=\"where\">m % 4 != 1</param>"                \
  "<state name=\"m\" type=\"int\" init=\"0\">m + n</state><set attr=\"s\">m</set></operator>\n"

static char *expect_ab(int n) {
  Text t;
  text_open(&t);
  fputs("v,k,w,h,n,s\n", t.f);
  int64_t c[16] = {0}, m[16] = {0};
  for (int64_t v = 0; v < n; v++) {
    int64_t cn = ++c[key_k(v)];
    if (cn % 3 == 1) continue;
    int64_t mw = m[key_w(v)] += cn;
    if (mw % 4 == 1) continue;
    put_t(t.f, v);
    fprintf(t.f, ",%lld,%lld\n", (long long)cn, (long long)mw);
  }
  return text_close(&t);
}

/* ---- graphs: sequential, and parallel written by hand ---- */

/* One channel (or the sequential chain) of a region from a template: operator names end in @C@,
 * operators carry @R@ (their region and channel attributes), the chain reads @IN@ and writes
 * @OUT@, sf_jitter gets @SEED@ and @SLOW@. */
static void put_chain(FILE *f, const char *tmpl, const char *region, int channel, const char *in,
                      const char *out, int seed, const char *slow) {
  char c[32] = "", r[96] = "", s[32], slowp[512] = "";
  if (channel >= 0) {
    snprintf(c, sizeof c, "[%d]", channel);
    snprintf(r, sizeof r, " region=\"%s\" channel=\"%d\"", region, channel);
  }
  snprintf(s, sizeof s, "%d", seed * 1000 + (channel >= 0 ? channel : 0));
  if (slow && *slow) snprintf(slowp, sizeof slowp, "<param name=\"slow_last\">%s</param>", slow);
  const char *names[] = {"C", "R", "IN", "OUT", "SEED", "SLOW"};
  const char *vals[] = {c, r, in, out, s, slowp};
  subst(f, tmpl, names, vals, 6);
}

static void put_split(FILE *f, const char *name, const char *region, int channel, const char *in, const char *out,
                      const char *schema, int width, const char *strategy, const char *keys, bool keep, int pulse) {
  fprintf(f, "<operator name=\"%s\" kind=\"Split\" region=\"%s\"", name, region);
  if (channel >= 0) fprintf(f, " channel=\"%d\"", channel);
  fprintf(f, "><input stream=\"%s\"/>", in);
  for (int c = 0; c < width; c++) fprintf(f, "<output stream=\"%s[%d]\" schema=\"%s\"/>", out, c, schema);
  fprintf(f, "<param name=\"strategy\">%s</param>", strategy);
  if (!strcmp(strategy, "hash")) fprintf(f, "<param name=\"keys\">%s</param>", keys);
  fprintf(f, "<param name=\"sequence\">%s</param><param name=\"pulse\">%d</param></operator>\n",
          keep ? "keep" : "assign", pulse);
}

/* A Merge reading the streams printf(in_fmt, c, fixed) (or (fixed, c) when fixed_first) for c < width. */
static void put_merge(FILE *f, const char *name, const char *region, int channel, const char *in_fmt,
                      int fixed, bool fixed_first, int width, const char *out, const char *schema, const char *order) {
  fprintf(f, "<operator name=\"%s\" kind=\"Merge\" region=\"%s\"", name, region);
  if (channel >= 0) fprintf(f, " channel=\"%d\"", channel);
  fputs(">", f);
  for (int c = 0; c < width; c++) {
    fputs("<input stream=\"", f);
    if (fixed_first) fprintf(f, in_fmt, fixed, c);
    else fprintf(f, in_fmt, c, fixed);
    fputs("\"/>", f);
  }
  fprintf(f, "<output stream=\"%s\" schema=\"%s\"/><param name=\"order\">%s</param></operator>\n", out, schema, order);
}

static void put_head(FILE *f) {
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graph xmlns=\"urn:streamfission:graph:1\" name=\"t\">\n" SCHEMAS,
        f);
}

/* One parallel region between stream A and the sink's stream Z. */
typedef struct Region1 {
  const char *chain;    /* channel template, @IN@ -> @OUT@ */
  const char *schema;   /* of @OUT@ */
  const char *strategy; /* roundrobin or hash */
  const char *keys;     /* hash keys */
  int pulse;            /* Split's pulse period */
  const char *order;    /* Merge's order */
} Region1;

/* The graph: source, then r's chain sequentially (width 0) or as width channels, then the sink.
 * slow[c] (slow may be NULL) is channel c's slow_last. */
static char *graph_region(const char *source, const Region1 *r, int width, int seed, char *const *slow) {
  Text t;
  text_open(&t);
  put_head(t.f);
  fputs(source, t.f);
  if (width == 0) {
    put_chain(t.f, r->chain, NULL, -1, "A", "Z", seed, NULL);
  } else {
    put_split(t.f, "r1.split", "r1", -1, "A", "A.r1", "T", width, r->strategy, r->keys, false, r->pulse);
    for (int c = 0; c < width; c++) {
      char in[32], out[32];
      snprintf(in, sizeof in, "A.r1[%d]", c);
      snprintf(out, sizeof out, "Z[%d]", c);
      put_chain(t.f, r->chain, "r1", c, in, out, seed, slow ? slow[c] : NULL);
    }
    put_merge(t.f, "r1.merge", "r1", -1, "Z[%d]", 0, false, width, "Z", r->schema, r->order);
  }
  fputs(SINK("Z") "</graph>\n", t.f);
  return text_close(&t);
}

/* Two regions joined by a shuffle: chain1 (A -> M, keyed on keys1) and chain2 (M -> Z, keyed on
 * keys2). */
typedef struct Shuffle {
  const char *chain1, *schema1, *keys1;
  const char *chain2, *schema2, *keys2;
  int pulse;
} Shuffle;

/* Sequential when n == 0; else n upstream and m downstream channels. slow1[i] (slow1 may be NULL)
 * is upstream channel i's slow_last. */
static char *graph_shuffle(const char *source, const Shuffle *s, int n, int m, int seed, char *const *slow1) {
  Text t;
  text_open(&t);
  put_head(t.f);
  fputs(source, t.f);
  if (n == 0) {
    put_chain(t.f, s->chain1, NULL, -1, "A", "M", seed, NULL);
    put_chain(t.f, s->chain2, NULL, -1, "M", "Z", seed + 1, NULL);
  } else {
    put_split(t.f, "r1.split", "r1", -1, "A", "A.r1", "T", n, "hash", s->keys1, false, s->pulse);
    for (int i = 0; i < n; i++) {
      char in[32], out[32], name[32];
      snprintf(in, sizeof in, "A.r1[%d]", i);
      snprintf(out, sizeof out, "M[%d]", i);
      put_chain(t.f, s->chain1, "r1", i, in, out, seed, slow1 ? slow1[i] : NULL);
      snprintf(name, sizeof name, "r1.split[%d]", i);
      put_split(t.f, name, "r1", i, out, out, s->schema1, m, "hash", s->keys2, true, s->pulse);
    }
    for (int j = 0; j < m; j++) {
      char name[32], mid[32], out[32];
      snprintf(name, sizeof name, "r2.merge[%d]", j);
      snprintf(mid, sizeof mid, "M.r2[%d]", j);
      put_merge(t.f, name, "r2", j, "M[%d][%d]", j, false, n, mid, s->schema1, "seqpulse");
      snprintf(out, sizeof out, "Z[%d]", j);
      put_chain(t.f, s->chain2, "r2", j, mid, out, seed + 1, NULL);
    }
    put_merge(t.f, "r2.merge", "r2", -1, "Z[%d]", 0, false, m, "Z", s->schema2, "seqpulse");
  }
  fputs(SINK("Z") "</graph>\n", t.f);
  return text_close(&t);
}

/* ---- graphs through the transformer ---- */

/* What sf-xform -w width writes for the graph xml (on one local host), with the pulse period
 * `pulse` (< 0: the transformer's default). */
static char *xform(const char *xml, int width, int pulse) {
  write_text("in.xml", xml);
  Graph *g = unit_graph_file("in.xml");
  static Host local = {"local", "127.0.0.1:7470", 0};
  static Host *hosts[] = {&local};
  graph_analyze(g);
  Fission *f = fission_regions(g, width);
  if (pulse >= 0) f->pulse = pulse;
  Graph *p = fission_rewrite(f);
  p->hosts = hosts;
  p->nhosts = 1;
  Diag d;
  diag_init(&d, "in.xml", stderr);
  int errors = graph_place(p, &d);
  diag_flush(&d, DIAG_BY_PLACE);
  ck_assert_int_eq(errors, 0);
  Text t;
  text_open(&t);
  ck_assert_int_eq(graph_emit_xml(p, t.f), 0);
  char *out = text_close(&t);
  p->hosts = NULL;
  p->nhosts = 0;
  graph_free(p);
  graph_free(g);
  unlink("in.xml");
  return out;
}

/* ---- running ---- */

typedef struct Watch {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
  const char *what;
  int timeout; /* seconds */
} Watch;

static void *watchdog(void *arg) {
  Watch *w = arg;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += w->timeout;
  pthread_mutex_lock(&w->mu);
  while (!w->done)
    if (pthread_cond_timedwait(&w->cv, &w->mu, &until) == ETIMEDOUT && !w->done) {
      fprintf(stderr, "test_merge: %s did not finish within %d s (deadlock?)\n", w->what, w->timeout);
      remove_tmpdir();
      ck_abort_msg("%s did not finish within %d s (deadlock?)", w->what, w->timeout);
    }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* Runs the graph xml with batches of `batch` items and queues of `qb` batches (0: defaults);
 * expects success and returns the text of out.csv (which is removed). */
static char *run(const char *xml, int batch, int qb, const char *what) {
  write_text("g.xml", xml);
  Graph *g = unit_graph_file("g.xml");
  char *log = NULL;
  size_t loglen = 0;
  FILE *logf = open_memstream(&log, &loglen);
  ExecOptions o = {.graph_path = "g.xml", .batch = batch, .queue_batches = qb, .log = logf};
  if (with_checkpoints) {
    o.checkpoint_dir = "ck";
    o.checkpoint_interval = 0.01;
  }
  const char *env = getenv("SF_TEST_MERGE_TIMEOUT");
  Watch w = {.what = what, .timeout = env && atoi(env) > 0 ? atoi(env) : RUN_TIMEOUT_S};
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, watchdog, &w), 0);
  int rc = exec_run(g, &o);
  pthread_mutex_lock(&w.mu);
  w.done = true;
  pthread_cond_signal(&w.cv);
  pthread_mutex_unlock(&w.mu);
  pthread_join(th, NULL);
  fclose(logf);
  graph_free(g);
  if (rc != 0) remove_tmpdir();
  ck_assert_msg(rc == 0, "%s: exec_run failed: %s", what, log);
  free(log);
  char *out = unit_read_file("out.csv", NULL);
  ck_assert_msg(out != NULL, "%s: no output file", what);
  unlink("out.csv");
  unlink("g.xml");
  if (with_checkpoints) /* the completed job removed its checkpoints: the directory is empty */
    ck_assert_msg(rmdir("ck") == 0, "%s: the checkpoint directory: %s", what, strerror(errno));
  return out;
}

/* Runs xml and compares its output with want. */
static void expect(const char *xml, int batch, int qb, const char *want, const char *what) {
  char *got = run(xml, batch, qb, what);
  assert_same(got, want, what);
  free(got);
}

/* The sequential graph's output, which must be `want` (worked out in C; NULL: not known). */
static char *run_sequential(const char *xml, const char *want, const char *what) {
  char *out = run(xml, 0, 0, what);
  if (want) assert_same(out, want, what);
  return out;
}

static void assert_contains(const char *text, const char *needle, const char *what) {
  ck_assert_msg(strstr(text, needle) != NULL, "%s: the parallel graph has no '%s'", what, needle);
}

/* The channel tuple v goes to with a hash Split on the int attribute whose value is key(v). */
static int hash_channel(int64_t key, int width) {
  Value val = value_int(key);
  return sf_key_channel(value_hash(&val, SF_HASH_SEED), width);
}

/* ---- roundrobin ---- */

#define CHAIN_RR JITTER("j", "@IN@", "J@C@", "T", "150") \
  "<operator name=\"burn@C@\" kind=\"Work\"@R@><input stream=\"J@C@\"/><output stream=\"@OUT@\" schema=\"T\"/>" \
  "<param name=\"iterations\">20</param></operator>\n"

static const Region1 region_rr = {CHAIN_RR, "T", "roundrobin", NULL, 0, "roundrobin"};

START_TEST(test_roundrobin_jitter) {
  enum { N = 500 };
  char *src = beacon(N), *want = expect_t(N, NULL);
  char *seq_xml = graph_region(src, &region_rr, 0, 1, NULL);
  char *seq = run_sequential(seq_xml, want, "roundrobin, sequential");
  for (int width = 2; width <= 4; width++)
    for (int seed = 1; seed <= 3; seed++) {
      char *xml = graph_region(src, &region_rr, width, seed, NULL);
      char *what = strf("roundrobin, width %d, seed %d", width, seed);
      expect(xml, 0, 0, seq, what);
      free(what);
      free(xml);
    }
  /* the same through the transformer */
  for (int width = 2; width <= 4; width += 2) {
    char *xml = xform(seq_xml, width, -1), *what = strf("roundrobin via sf-xform, width %d", width);
    assert_contains(xml, "<param name=\"order\">roundrobin</param>", what);
    expect(xml, 0, 0, seq, what);
    free(what);
    free(xml);
  }
  free(seq);
  free(seq_xml);
  free(want);
  free(src);
}
END_TEST

/* ---- seq ---- */

#define CHAIN_SEQ_K JITTER("j", "@IN@", "J@C@", "T", "150") COUNT_BY_KEY("k", "J@C@", "@OUT@")
#define CHAIN_SEQ_H JITTER("j", "@IN@", "J@C@", "T", "150") COUNT_BY_KEY("h", "J@C@", "@OUT@")

static const Region1 region_seq_k = {CHAIN_SEQ_K, "TN", "hash", "k", 0, "seq"};
static const Region1 region_seq_h = {CHAIN_SEQ_H, "TN", "hash", "h", 0, "seq"};

START_TEST(test_seq_jitter) {
  enum { N = 500 };
  char *src = beacon(N);
  const Region1 *regions[] = {&region_seq_k, &region_seq_h};
  int64_t (*keys[])(int64_t) = {key_k, key_h};
  for (int r = 0; r < 2; r++) {
    char *want = expect_count_by(N, keys[r]);
    char *seq_xml = graph_region(src, regions[r], 0, 1, NULL);
    char *seq = run_sequential(seq_xml, want, "seq, sequential");
    for (int width = 2; width <= 4; width++)
      for (int seed = 1; seed <= 2; seed++) {
        char *xml = graph_region(src, regions[r], width, seed, NULL);
        char *what = strf("seq on %s, width %d, seed %d", regions[r]->keys, width, seed);
        expect(xml, 0, 0, seq, what);
        free(what);
        free(xml);
      }
    char *xml = xform(seq_xml, 3, -1), *what = strf("seq on %s via sf-xform", regions[r]->keys);
    assert_contains(xml, "<param name=\"order\">seq</param>", what);
    expect(xml, 0, 0, seq, what);
    free(what);
    free(xml);
    free(seq);
    free(seq_xml);
    free(want);
  }
  free(src);
}
END_TEST

/* ---- seqpulse: channels that drop everything ---- */

#define CHAIN_FILTER(pred) JITTER("j", "@IN@", "J@C@", "T", "100") \
  "<operator name=\"keep@C@\" kind=\"Filter\"@R@><input stream=\"J@C@\"/><output stream=\"@OUT@\" schema=\"T\"/>" \
  "<param name=\"where\">" pred "</param></operator>\n"

static bool only_k0(int64_t v) { return key_k(v) == 0; }
static bool k_below_3(int64_t v) { return key_k(v) < 3; }
static bool v_mod_3(int64_t v) { return v % 3 == 0; }
static bool h_zero(int64_t v) { return key_h(v) == 0; }
static bool h_nonzero(int64_t v) { return key_h(v) != 0; }

typedef struct FilterCase {
  const char *chain;
  Pred pred;
  const char *name;
} FilterCase;

static const FilterCase filter_cases[] = {
    {CHAIN_FILTER("k == 0"), only_k0, "k == 0"},
    {CHAIN_FILTER("k &lt; 3"), k_below_3, "k < 3"},
    {CHAIN_FILTER("v % 3 == 0"), v_mod_3, "v % 3 == 0"},
};

START_TEST(test_seqpulse_filter_pulses) {
  enum { N = 400 };
  char *src = beacon(N);
  const int pulses[] = {1, 7, 128, 0};
  for (int f = 0; f < 3; f++) {
    const FilterCase *fc = &filter_cases[f];
    Region1 r = {fc->chain, "T", "hash", "k", 0, "seqpulse"};
    char *want = expect_t(N, fc->pred);
    char *seq_xml = graph_region(src, &r, 0, 1, NULL);
    char *seq = run_sequential(seq_xml, want, "seqpulse, sequential");
    for (int p = 0; p < 4; p++) {
      r.pulse = pulses[p];
      for (int width = 3; width <= 4; width++) {
        int seed = 1 + p + width;
        char *xml = graph_region(src, &r, width, seed, NULL);
        char *what = strf("seqpulse, where %s, pulse %d, width %d, seed %d", fc->name, r.pulse, width, seed);
        expect(xml, 0, 0, seq, what);
        free(what);
        free(xml);
      }
    }
    /* through the transformer, with its own pulse period and with others */
    for (int p = 0; p < 3; p++) {
      int pulse = p == 0 ? -1 : pulses[p - 1];
      char *xml = xform(seq_xml, 3, pulse), *what = strf("seqpulse, where %s, via sf-xform, pulse %d", fc->name, pulse);
      assert_contains(xml, "<param name=\"order\">seqpulse</param>", what);
      expect(xml, 0, 0, seq, what);
      free(what);
      free(xml);
    }
    free(seq);
    free(seq_xml);
    free(want);
  }
  free(src);
}
END_TEST

/* ---- shuffles ---- */

#define CHAIN_A JITTER("j1", "@IN@", "J1@C@", "T", "100") FUNCTOR_A("J1@C@", "@OUT@")
#define CHAIN_B JITTER("j2", "@IN@", "J2@C@", "TN", "100") FUNCTOR_B("J2@C@", "@OUT@")

static const Shuffle shuffle_ab = {CHAIN_A, "TN", "k", CHAIN_B, "TS", "w", 7};

START_TEST(test_shuffle_jitter) {
  enum { N = 600 };
  char *src = beacon(N), *want = expect_ab(N);
  char *seq_xml = graph_shuffle(src, &shuffle_ab, 0, 0, 1, NULL);
  char *seq = run_sequential(seq_xml, want, "shuffle, sequential");
  ck_assert_int_gt(count_lines(seq), 100);
  const int widths[][2] = {{2, 3}, {3, 2}, {3, 3}, {4, 2}, {1, 3}, {3, 1}};
  const int pulses[] = {1, 7, 128};
  for (int i = 0; i < 6; i++)
    for (int p = 0; p < 3; p++) {
      Shuffle s = shuffle_ab;
      s.pulse = pulses[p];
      int seed = 10 * i + p;
      char *xml = graph_shuffle(src, &s, widths[i][0], widths[i][1], seed, NULL);
      char *what = strf("shuffle %dx%d, pulse %d, seed %d", widths[i][0], widths[i][1], s.pulse, seed);
      expect(xml, 0, 0, seq, what);
      free(what);
      free(xml);
    }
  for (int width = 2; width <= 4; width++) {
    char *xml = xform(seq_xml, width, -1), *what = strf("shuffle via sf-xform, width %d", width);
    assert_contains(xml, "<param name=\"sequence\">keep</param>", what);
    expect(xml, 0, 0, seq, what);
    free(what);
    free(xml);
  }
  free(seq);
  free(seq_xml);
  free(want);
  free(src);
}
END_TEST

/* A shuffle whose upstream region is keyed on h after a Filter outside it kept h == 0 only: one
 * upstream channel gets every tuple, the others nothing but pulses and the final punctuation,
 * which their channel Splits must pass on to every downstream channel. */
#define CHAIN_H JITTER("j1", "@IN@", "J1@C@", "T", "60") COUNT_BY_KEY("h", "J1@C@", "@OUT@")

static const Shuffle shuffle_hw = {CHAIN_H, "TN", "h", CHAIN_B, "TS", "w", 7};

START_TEST(test_shuffle_idle_upstream_channels) {
  enum { N = 600 };
  char *src = strf("<operator name=\"src\" kind=\"Beacon\"><output stream=\"A0\" schema=\"T\"/>"
                   "<param name=\"count\">%d</param>%s</operator>\n"
                   "<operator name=\"h0\" kind=\"Filter\" parallel=\"no\"><input stream=\"A0\"/>"
                   "<output stream=\"A\" schema=\"T\"/><param name=\"where\">h == 0</param></operator>\n",
                   N, SETS);
  char *seq_xml = graph_shuffle(src, &shuffle_hw, 0, 0, 1, NULL);
  char *seq = run_sequential(seq_xml, NULL, "shuffle with idle upstream channels, sequential");
  ck_assert_int_gt(count_lines(seq), 100);
  const int widths[][2] = {{3, 2}, {2, 3}, {4, 4}};
  const int pulses[] = {1, 7, 128};
  for (int i = 0; i < 3; i++)
    for (int p = 0; p < 3; p++) {
      Shuffle s = shuffle_hw;
      s.pulse = pulses[p];
      char *xml = graph_shuffle(src, &s, widths[i][0], widths[i][1], i + p, NULL);
      char *what = strf("shuffle %dx%d with idle upstream channels, pulse %d", widths[i][0], widths[i][1], s.pulse);
      expect(xml, 0, 0, seq, what);
      free(what);
      free(xml);
    }
  char *xml = xform(seq_xml, 3, -1);
  assert_contains(xml, "<param name=\"sequence\">keep</param>", "shuffle with idle upstream channels via sf-xform");
  expect(xml, 0, 0, seq, "shuffle with idle upstream channels via sf-xform");
  free(xml);
  free(seq);
  free(seq_xml);
  free(src);
}
END_TEST

/* ---- the final punctuation reaching a merge from the channels in every order ---- */

/* For channel c (of 3) of a region where tuple v goes to channel chan(v): the slow_last text that
 * makes the channels finish in the order perm[0], perm[1], perm[2] (each one's last tuple sleeps
 * 0, 15 and 30 ms more). */
static void steer(int n, const int perm[3], int (*chan)(int64_t), char *slow[3]) {
  for (int c = 0; c < 3; c++) {
    int64_t last = -1;
    for (int64_t v = 0; v < n; v++)
      if (chan(v) == c) last = v;
    ck_assert_msg(last >= 0, "channel %d gets no tuple", c);
    int rank = perm[0] == c ? 0 : perm[1] == c ? 1 : 2;
    slow[c] = strf("%lld:%d", (long long)last, rank * 15000);
  }
}

static int chan_rr(int64_t v) { return (int)(v % 3); }
static int chan_hash_v(int64_t v) { return hash_channel(v, 3); }
static int chan_hash_k(int64_t v) { return hash_channel(key_k(v), 3); }

#define CHAIN_J JITTER("j", "@IN@", "@OUT@", "T", "30")

START_TEST(test_final_punctuation_orders) {
  enum { N = 90 };
  static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  char *src = beacon(N);
  const Region1 regions[] = {
      {CHAIN_J, "T", "roundrobin", NULL, 0, "roundrobin"},
      {CHAIN_J, "T", "hash", "v", 0, "seq"},
      {CHAIN_FILTER("k == 0"), "T", "hash", "k", 7, "seqpulse"},
      {CHAIN_FILTER("v % 3 == 0"), "T", "hash", "k", 0, "seqpulse"},
  };
  int (*chans[])(int64_t) = {chan_rr, chan_hash_v, chan_hash_k, chan_hash_k};
  Pred preds[] = {NULL, NULL, only_k0, v_mod_3};
  for (int r = 0; r < 4; r++) {
    char *want = expect_t(N, preds[r]);
    char *seq_xml = graph_region(src, &regions[r], 0, 1, NULL);
    char *seq = run_sequential(seq_xml, want, "final orders, sequential");
    for (int p = 0; p < 6; p++) {
      char *slow[3];
      steer(N, perms[p], chans[r], slow);
      char *xml = graph_region(src, &regions[r], 3, p, slow);
      char *what = strf("%s merge, channels finishing in the order %d %d %d", regions[r].order, perms[p][0],
                        perms[p][1], perms[p][2]);
      expect(xml, 0, 0, seq, what);
      free(what);
      free(xml);
      for (int c = 0; c < 3; c++) free(slow[c]);
    }
    free(seq);
    free(seq_xml);
    free(want);
  }
  /* a shuffle's channel merges: the upstream channels finish in every order */
  char *want = expect_ab(N * 4);
  char *big = beacon(N * 4);
  char *seq_xml = graph_shuffle(big, &shuffle_ab, 0, 0, 1, NULL);
  char *seq = run_sequential(seq_xml, want, "shuffle final orders, sequential");
  for (int p = 0; p < 6; p++) {
    char *slow[3];
    int n = N * 4;
    steer(n, perms[p], chan_hash_k, slow);
    char *xml = graph_shuffle(big, &shuffle_ab, 3, 2, p, slow);
    char *what = strf("shuffle 3x2, upstream channels finishing in the order %d %d %d", perms[p][0], perms[p][1],
                      perms[p][2]);
    expect(xml, 0, 0, seq, what);
    free(what);
    free(xml);
    for (int c = 0; c < 3; c++) free(slow[c]);
  }
  free(seq);
  free(seq_xml);
  free(want);
  free(big);
  free(src);
}
END_TEST

/* ---- small batches and queues: back-pressure, flush before wait ---- */

/* One region per loop index (the last index: a shuffle), run with batches of 1 and 3 items and
 * queues of one batch, at widths 2 and 4. Where a Filter passes one key only, the other channels
 * send nothing but pulses: the pulse period (up to 128 tuples) is far longer than what a channel
 * can buffer here, so the Split must not let its pulses wait behind a full queue. */
typedef struct SmallCase {
  Region1 r;
  Pred pred; /* which tuples pass (when not all) */
  bool all;  /* every tuple passes */
} SmallCase;

static const SmallCase small_cases[] = {
    {{CHAIN_J, "T", "roundrobin", NULL, 0, "roundrobin"}, NULL, true},
    {{CHAIN_J, "T", "hash", "h", 0, "seq"}, NULL, true},   /* skewed: 70% of the tuples on one channel */
    {{CHAIN_FILTER("k == 0"), "T", "hash", "k", 7, "seqpulse"}, only_k0, false},
    {{CHAIN_FILTER("k == 0"), "T", "hash", "k", 1, "seqpulse"}, only_k0, false},
    {{CHAIN_FILTER("h != 0"), "T", "hash", "h", 3, "seqpulse"}, h_nonzero, false},
    /* the pulse period (128) is longer than what the busy channel can buffer */
    {{CHAIN_FILTER("h == 0"), "T", "hash", "h", 128, "seqpulse"}, h_zero, false},
};
enum { NSMALL = sizeof small_cases / sizeof *small_cases };

START_TEST(test_small_queues) {
  enum { N = 400 };
  char *src = beacon(N);
  const int batches[] = {1, 3};
  if (_i == NSMALL) {
    char *want = expect_ab(N);
    char *seq_xml = graph_shuffle(src, &shuffle_ab, 0, 0, 1, NULL);
    char *seq = run_sequential(seq_xml, want, "small queues, shuffle, sequential");
    for (int b = 0; b < 2; b++) {
      const int pulses[] = {1, 7};
      for (int p = 0; p < 2; p++) {
        Shuffle s = shuffle_ab;
        s.pulse = pulses[p];
        char *xml = graph_shuffle(src, &s, 3, 2, b + p, NULL);
        char *what = strf("shuffle 3x2, pulse %d, batch %d, queues of 1 batch", s.pulse, batches[b]);
        expect(xml, batches[b], 1, seq, what);
        free(what);
        free(xml);
      }
    }
    free(seq);
    free(seq_xml);
    free(want);
    free(src);
    return;
  }
  const SmallCase *sc = &small_cases[_i];
  char *want = expect_t(N, sc->all ? NULL : sc->pred);
  char *seq_xml = graph_region(src, &sc->r, 0, 1, NULL);
  char *seq = run_sequential(seq_xml, want, "small queues, sequential");
  for (int b = 0; b < 2; b++)
    for (int width = 2; width <= 4; width += 2) {
      char *xml = graph_region(src, &sc->r, width, _i + b, NULL);
      char *what = strf("%s merge, split on %s, pulse %d, width %d, batch %d, queues of 1 batch", sc->r.order,
                        sc->r.keys ? sc->r.keys : "-", sc->r.pulse, width, batches[b]);
      expect(xml, batches[b], 1, seq, what);
      free(what);
      free(xml);
    }
  free(seq);
  free(seq_xml);
  free(want);
  free(src);
}
END_TEST

/* seqpulse without pulses: channels whose Filter drops everything send nothing until their final
 * punctuation, so the merge must hold the busy channel's output until then: slower, but it must
 * complete, with queues of one batch (_i == 0) and with the default queues when the busy channel
 * outputs more than they hold (_i == 1). */
START_TEST(test_seqpulse_without_pulses) {
  int n = _i == 0 ? 400 : 40000;
  const char *chain = _i == 0 ? CHAIN_FILTER("k == 0")
                              : "<operator name=\"keep@C@\" kind=\"Filter\"@R@><input stream=\"@IN@\"/>"
                                "<output stream=\"@OUT@\" schema=\"T\"/><param name=\"where\">k == 0</param>"
                                "</operator>\n";
  char *src = beacon(n), *want = expect_t(n, only_k0);
  Region1 r = {chain, "T", "hash", "k", 0, "seqpulse"};
  char *seq_xml = graph_region(src, &r, 0, 1, NULL);
  char *seq = run_sequential(seq_xml, want, "seqpulse, no pulses, sequential");
  for (int b = 0; b < 2; b++) {
    int batch = _i == 0 ? 1 + 2 * b : 0;
    char *xml = graph_region(src, &r, 3, b, NULL);
    char *what = strf("seqpulse, no pulses, %d tuples, where k == 0, width 3, batch %d, queue_batches %d", n,
                      batch, _i == 0 ? 1 : 8);
    expect(xml, batch, _i == 0 ? 1 : 0, seq, what);
    free(what);
    free(xml);
  }
  free(seq);
  free(seq_xml);
  free(want);
  free(src);
}
END_TEST

/* ---- empty inputs ---- */

START_TEST(test_empty_input) {
  const Region1 regions[] = {
      {CHAIN_RR, "T", "roundrobin", NULL, 0, "roundrobin"},
      {CHAIN_SEQ_K, "TN", "hash", "k", 0, "seq"},
      {CHAIN_FILTER("k == 0"), "T", "hash", "k", 7, "seqpulse"},
      {CHAIN_FILTER("k == 0"), "T", "roundrobin", NULL, 0, "seqpulse"},
  };
  const char *headers[] = {"v,k,w,h\n", "v,k,w,h,n\n", "v,k,w,h\n", "v,k,w,h\n"};
  for (int src_kind = 0; src_kind < 2; src_kind++) {
    /* an empty file, or a Beacon whose tuples a Filter in front of the region all drops (a
     * Beacon of count 0 would run forever: 0 means unbounded) */
    char *src = src_kind == 0 ? empty_source()
                              : strf("<operator name=\"src\" kind=\"Beacon\"><output stream=\"A0\" schema=\"T\"/>"
                                     "<param name=\"count\">50</param>%s</operator>\n"
                                     "<operator name=\"none\" kind=\"Filter\" parallel=\"no\"><input stream=\"A0\"/>"
                                     "<output stream=\"A\" schema=\"T\"/><param name=\"where\">v &lt; 0</param>"
                                     "</operator>\n", SETS);
    for (int r = 0; r < 4; r++) {
      char *seq_xml = graph_region(src, &regions[r], 0, 1, NULL);
      char *seq = run_sequential(seq_xml, headers[r], "empty, sequential");
      for (int width = 1; width <= 3; width++)
        for (int b = 0; b < 2; b++) {
          char *xml = graph_region(src, &regions[r], width, 1, NULL);
          char *what = strf("empty input (%s), %s merge, width %d%s", src_kind ? "filtered" : "file",
                            regions[r].order, width, b ? ", batch 1, queues of 1 batch" : "");
          expect(xml, b, b, seq, what);
          free(what);
          free(xml);
        }
      if (r < 3) {
        char *xml = xform(seq_xml, 3, -1), *what = strf("empty input, %s merge, via sf-xform", regions[r].order);
        expect(xml, 0, 0, seq, what);
        free(what);
        free(xml);
      }
      free(seq);
      free(seq_xml);
    }
    char *seq_xml = graph_shuffle(src, &shuffle_ab, 0, 0, 1, NULL);
    char *seq = run_sequential(seq_xml, "v,k,w,h,n,s\n", "empty, shuffle, sequential");
    for (int b = 0; b < 2; b++) {
      char *xml = graph_shuffle(src, &shuffle_ab, 2, 3, 1, NULL);
      char *what = strf("empty input, shuffle 2x3%s", b ? ", batch 1, queues of 1 batch" : "");
      expect(xml, b, b, seq, what);
      free(what);
      free(xml);
    }
    char *xml = xform(seq_xml, 3, -1);
    expect(xml, 0, 0, seq, "empty input, shuffle via sf-xform");
    free(xml);
    free(seq);
    free(seq_xml);
    free(src);
  }
}
END_TEST

/* ---- fan-in ---- */

/* Stream A through two jittered Filters (B: k even, C: v % 3 == 0) into one sink reading "B C":
 * by source position, ties (a tuple passing both) in the order the streams are listed. When
 * `listed_cb` the sink lists "C B". With `via_jitter`, the fan-in feeds a Custom operator (with two
 * input streams it is never replicated) and that one the sink. */
static char *fanin_graph(const char *source, bool listed_cb, bool via_jitter, int seed) {
  Text t;
  text_open(&t);
  put_head(t.f);
  fputs(source, t.f);
  const char *branch = JITTER("j@X@", "A", "J@X@", "T", "100")
      "<operator name=\"f@X@\" kind=\"Filter\"><input stream=\"J@X@\"/><output stream=\"@S@\" schema=\"T\"/>"
      "<param name=\"where\">@P@</param></operator>\n";
  char s1[16], s2[16], slowp[] = "";
  snprintf(s1, sizeof s1, "%d", seed * 10 + 1);
  snprintf(s2, sizeof s2, "%d", seed * 10 + 2);
  const char *names[] = {"X", "S", "P", "SEED", "C", "R", "SLOW"};
  const char *b1[] = {"1", "B", "k % 2 == 0", s1, "", "", slowp};
  const char *b2[] = {"2", "C", "v % 3 == 0", s2, "", "", slowp};
  subst(t.f, branch, names, b1, 7);
  subst(t.f, branch, names, b2, 7);
  const char *streams = listed_cb ? "C B" : "B C";
  if (via_jitter) {
    fprintf(t.f,
            "<operator name=\"both\" kind=\"Custom\"><input stream=\"%s\"/><output stream=\"D\" schema=\"T\"/>"
            "<param name=\"seed\">%d</param><param name=\"maxus\">50</param>" MODEL_JITTER LIB_JITTER
            "</operator>\n" SINK("D"),
            streams, seed);
  } else {
    fprintf(t.f,
            "<operator name=\"out\" kind=\"FileSink\"><input stream=\"%s\"/><param name=\"file\">out.csv</param>"
            "<param name=\"format\">csv</param></operator>\n",
            streams);
  }
  fputs("</graph>\n", t.f);
  return text_close(&t);
}

static char *expect_fanin(int n, bool listed_cb) {
  Text t;
  text_open(&t);
  fputs("v,k,w,h\n", t.f);
  for (int64_t v = 0; v < n; v++) {
    bool inb = key_k(v) % 2 == 0, inc = v % 3 == 0;
    for (int i = 0; i < 2; i++)
      if ((i == 0) != listed_cb ? inb : inc) {
        put_t(t.f, v);
        fputc('\n', t.f);
      }
  }
  return text_close(&t);
}

/* _i: bit 0, the sink lists "C B"; bit 1, through a Custom operator; bit 2, batches of 3 items and
 * queues of one batch. */
START_TEST(test_fanin) {
  enum { N = 400 };
  bool listed_cb = _i & 1, via_jitter = _i & 2, small = _i & 4;
  int batch = small ? 3 : 0, qb = small ? 1 : 0;
  char *src = beacon(N);
  char *want = expect_fanin(N, listed_cb);
  char *seq_xml = fanin_graph(src, listed_cb, via_jitter, 1);
  char *seq = run_sequential(seq_xml, want, "fan-in, sequential");
  const char *q = small ? ", batch 3, queues of 1 batch" : "";
  /* the sequential graph again with other seeds: the same order every time */
  for (int seed = 2; seed <= 3; seed++) {
    char *xml = fanin_graph(src, listed_cb, via_jitter, seed);
    char *what = strf("fan-in %s%s, sequential, seed %d%s", listed_cb ? "C B" : "B C", via_jitter ? " via jitter" : "",
                      seed, q);
    expect(xml, batch, qb, seq, what);
    free(what);
    free(xml);
  }
  /* the branches parallelized by the transformer: seqpulse regions feeding the fan-in */
  for (int width = 2; width <= 4; width++) {
    char *in = fanin_graph(src, listed_cb, via_jitter, width);
    char *xml = xform(in, width, -1);
    char *what = strf("fan-in %s%s, width %d%s", listed_cb ? "C B" : "B C", via_jitter ? " via jitter" : "", width, q);
    assert_contains(xml, "region=\"r2\"", what);
    expect(xml, batch, qb, seq, what);
    free(what);
    free(xml);
    free(in);
  }
  free(seq);
  free(seq_xml);
  free(want);
  free(src);
}
END_TEST

/* A fan-in whose one input is a parallel region that outputs nothing for a long time (its Filter
 * drops everything), with the default batches and queues: the fan-in can only move on when that
 * region's Merge says how far its input has got. */
START_TEST(test_fanin_idle_branch) {
  enum { N = 20000 };
  char *xml = strf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graph xmlns=\"urn:streamfission:graph:1\" "
                   "name=\"t\">\n" SCHEMAS
                   "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"T\"/>"
                   "<param name=\"count\">%d</param>%s</operator>\n"
                   "<operator name=\"all\" kind=\"Filter\"><input stream=\"A\"/><output stream=\"B\" schema=\"T\"/>"
                   "<param name=\"where\">v &gt;= 0</param></operator>\n"
                   "<operator name=\"late\" kind=\"Filter\"><input stream=\"A\"/><output stream=\"C\" schema=\"T\"/>"
                   "<param name=\"where\">v == %d</param></operator>\n"
                   "<operator name=\"out\" kind=\"FileSink\"><input stream=\"B C\"/>"
                   "<param name=\"file\">out.csv</param><param name=\"format\">csv</param></operator>\n</graph>\n",
                   N, SETS, N - 1);
  Text t;
  text_open(&t);
  fputs("v,k,w,h\n", t.f);
  for (int64_t v = 0; v < N; v++) {
    for (int i = 0; i < (v == N - 1 ? 2 : 1); i++) {
      put_t(t.f, v);
      fputc('\n', t.f);
    }
  }
  char *want = text_close(&t);
  char *seq = run_sequential(xml, want, "fan-in with an idle branch, sequential");
  for (int width = 2; width <= 3; width++) {
    char *par = xform(xml, width, -1), *what = strf("fan-in with an idle branch, width %d", width);
    expect(par, 0, 0, seq, what);
    free(what);
    free(par);
  }
  free(seq);
  free(want);
  free(xml);
}
END_TEST

/* Two sources of different lengths, one of them jittered, into one sink: interleaved by position,
 * ties in listing order, the shorter one's end changes nothing. */
START_TEST(test_fanin_two_sources) {
  const char *body =
      "<operator name=\"s1\" kind=\"Beacon\"><output stream=\"A\" schema=\"T\"/><param name=\"count\">150</param>" SETS
      "</operator>\n"
      "<operator name=\"s2\" kind=\"Beacon\"><output stream=\"B0\" schema=\"T\"/><param name=\"count\">60</param>"
      "<set attr=\"v\">1000 + seq</set><set attr=\"k\">0</set><set attr=\"w\">0</set><set attr=\"h\">0</set>"
      "</operator>\n"
      "<operator name=\"j\" kind=\"Custom\"><input stream=\"B0\"/><output stream=\"B\" schema=\"T\"/>"
      "<param name=\"seed\">@SEED@</param><param name=\"maxus\">300</param>" MODEL_JITTER LIB_JITTER "</operator>\n"
      "<operator name=\"f\" kind=\"Filter\"><input stream=\"A\"/><output stream=\"C\" schema=\"T\"/>"
      "<param name=\"where\">k != 5</param></operator>\n"
      "<operator name=\"out\" kind=\"FileSink\"><input stream=\"C B\"/><param name=\"file\">out.csv</param>"
      "<param name=\"format\">csv</param></operator>\n";
  Text t;
  text_open(&t);
  fputs("v,k,w,h\n", t.f);
  for (int64_t i = 0; i < 150; i++) {
    if (key_k(i) != 5) {
      put_t(t.f, i);
      fputc('\n', t.f);
    }
    if (i < 60) fprintf(t.f, "%lld,0,0,0\n", (long long)(1000 + i));
  }
  char *want = text_close(&t);
  for (int seed = 1; seed <= 4; seed++) {
    char s[16];
    snprintf(s, sizeof s, "%d", seed);
    Text g;
    text_open(&g);
    put_head(g.f);
    const char *names[] = {"SEED"};
    const char *vals[] = {s};
    subst(g.f, body, names, vals, 1);
    fputs("</graph>\n", g.f);
    char *xml = text_close(&g);
    char *what = strf("fan-in of two sources, seed %d", seed);
    expect(xml, seed > 2 ? seed - 2 : 0, seed > 2 ? 1 : 0, want, what);
    free(what);
    char *par = xform(xml, 3, -1);
    what = strf("fan-in of two sources via sf-xform, seed %d", seed);
    expect(par, seed > 2 ? seed - 2 : 0, seed > 2 ? 1 : 0, want, what);
    free(what);
    free(par);
    free(xml);
  }
  free(want);
}
END_TEST

/* ---- the suite ---- */

static Suite *merge_suite(void) {
  Suite *s = suite_create("merge");
  TCase *tc = unit_case(s, "orders", setup, teardown, 60);
  tcase_add_test(tc, test_roundrobin_jitter);
  tcase_add_test(tc, test_seq_jitter);
  tcase_add_test(tc, test_seqpulse_filter_pulses);
  tcase_add_test(tc, test_shuffle_jitter);
  tcase_add_test(tc, test_shuffle_idle_upstream_channels);
  tcase_add_test(tc, test_final_punctuation_orders);
  tcase_add_loop_test(tc, test_small_queues, 0, NSMALL + 1);
  tcase_add_loop_test(tc, test_seqpulse_without_pulses, 0, 2);
  tcase_add_test(tc, test_empty_input);
  tcase_add_loop_test(tc, test_fanin, 0, 8);
  tcase_add_test(tc, test_fanin_idle_branch);
  tcase_add_test(tc, test_fanin_two_sources);
  TCase *ck = unit_case(s, "checkpoints", setup_checkpoints, teardown_checkpoints, 60);
  tcase_add_test(ck, test_roundrobin_jitter);
  tcase_add_test(ck, test_seq_jitter);
  tcase_add_test(ck, test_seqpulse_filter_pulses);
  tcase_add_test(ck, test_shuffle_jitter);
  tcase_add_loop_test(ck, test_small_queues, 0, NSMALL + 1);
  tcase_add_loop_test(ck, test_fanin, 0, 8);
  tcase_add_test(ck, test_fanin_two_sources);
  return s;
}

int main(void) {
  return unit_run(merge_suite());
}
