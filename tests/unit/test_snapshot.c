/* test_snapshot.c: checkpoints of the built-in operator kinds: OpKindImpl.snapshot and .restore of
 * rt/ops/ (Functor, Aggregate tumbling and sliding, Dedup, Beacon, FileSource, FileSink), keyed.c's
 * KeyTable snapshots with rt_owns_key, and the checkpointable calls of FileSource and SocketSource.
 * A FileSink's restore must touch no file but its own, whatever its snapshot says.
 *
 * An operator instance runs alone here, without an executor: this suite is linked with the
 * linker's --wrap for every call an operator makes into the executor (tests/CMakeLists.txt names
 * them), so __wrap_rt_emit records what the instance emits (a line "SRC SEQ: csv row" per tuple),
 * __wrap_rt_fail the failure, __wrap_rt_warn the warnings, __wrap_rt_owns_key decides which keys a
 * replica owns when a test says so (else the runtime's rt_owns_key answers), and the checkpoint
 * taken or restored and the newest complete one are the test's (ckpt_taking, ckpt_complete).
 *
 * The promise tested: an instance run over a prefix of its input, snapshotted, and a fresh
 * instance (opened the same way) restored from that snapshot and fed the rest emit together
 * exactly what one uninterrupted instance emits, byte for byte, src and seq included; for a
 * source, the snapshot is taken inside rt_emit of the tuple at the checkpoint's position, as the
 * executor does. A truncated, extended or corrupted snapshot fails the restore cleanly (an error,
 * no crash, nothing leaked: run it under ASan), and a restore at another width keeps exactly the
 * keys its replica owns, adding them from several old replicas' snapshots. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_helper.h"
#include "csv.h"
#include "ops/keyed.h"
#include "rt.h"
#include "sf.h"

/* ---- the executor's calls, as this suite answers them ---- */

static Buf emitted;            /* "SRC SEQ: row\n" per tuple (CR and LF in the row escaped) emitted since the last reset */
static int nemitted;           /* tuples emitted since the last reset */
static char failure[2048];     /* the first rt_fail since the last reset ("" when none) */
static Buf warnings;           /* every rt_warn, one per line */
static ExecOptions options;    /* what rt_options gives */
static bool stopping;          /* what rt_stopping says */
static bool draining;          /* what rt_draining says */
static int drain_after = -1;   /* >= 0: draining turns true once nemitted reaches it */
static OpInst *snap_op;        /* a source whose checkpoint is taken in rt_emit... */
static uint64_t snap_at;       /* ...of its tuple of this src... */
static Buf *snap_into;         /* ...into this buffer */
static bool snapped;           /* it was taken */
static int own_width;          /* > 0: rt_owns_key is true for keys hashing to own_channel mod own_width */
static int own_channel;
static uint64_t ckpt_taking;   /* what rt_checkpoint_taking says (the checkpoint taken or restored) */
static uint64_t ckpt_complete; /* what rt_checkpoint_complete says */
static bool restore_committed; /* what rt_restore_committed says */
static int emit_runs;          /* rt_emit_run calls since the last reset */
static int emit_fail_at;       /* which of them fails (from 1; 0: none) */

bool __real_rt_owns_key(const OpInst *op, const Value *vals, const int *slots, int nvals);

static void reset_output(void) {
  buf_reset(&emitted);
  nemitted = 0;
  emit_runs = emit_fail_at = 0;
  failure[0] = 0;
  buf_reset(&warnings);
}

/* Sources emit tuple by tuple here, as with checkpoints on (their runs are the executor's). */
int __wrap_rt_run_room(const OpInst *op) {
  (void)op;
  return 1;
}

int __wrap_rt_emit(OpInst *op, int port, Tuple *t) {
  ck_assert_int_eq(port, 0);
  ck_assert_ptr_nonnull(op->out_schema);
  ck_assert_int_eq(t->n, op->out_schema->nattrs);
  if (op == snap_op && !snapped && op->cur_src == snap_at) {
    snapped = true;
    ck_assert_msg(op->impl->snapshot(op, snap_into) == 0, "snapshot failed: %s", failure);
  }
  char head[64];
  snprintf(head, sizeof head, "%06llu %06llu: ", (unsigned long long)op->cur_src, (unsigned long long)op->cur_seq);
  buf_puts(&emitted, head);
  Buf row; /* one line per tuple: its line breaks escaped */
  buf_init(&row);
  csv_put_row(&row, t->v, t->n);
  for (size_t k = 0; k + 1 < row.n; k++) {
    if (row.p[k] == '\n') buf_puts(&emitted, "\\n");
    else if (row.p[k] == '\r') buf_puts(&emitted, "\\r");
    else buf_putc(&emitted, row.p[k]);
  }
  buf_putc(&emitted, '\n');
  buf_release(&row);
  tuple_unref(t);
  if (++nemitted == drain_after) draining = true;
  return 0;
}

/* A tuple emitted at a tick (a time window's) is recorded as rt_emit records one; ticks going on
 * are not recorded. */
int __wrap_rt_emit_keyed(OpInst *op, int port, Tuple *t, const unsigned char *key, uint32_t len) {
  (void)key;
  (void)len;
  return __wrap_rt_emit(op, port, t);
}

int __wrap_rt_emit_keyed_copy(OpInst *op, int port, Tuple *t, const void *key, size_t len) {
  (void)key;
  (void)len;
  return __wrap_rt_emit(op, port, t);
}

int __wrap_rt_emit_tick(OpInst *op, int port, int64_t t) {
  (void)op;
  (void)port;
  (void)t;
  return 0;
}

int __wrap_rt_fail(OpInst *op, const char *fmt, ...) {
  (void)op;
  if (!failure[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(failure, sizeof failure, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* A Split's items (rt_emit_item, rt_emit_run): "PORT KIND SEQ SRC" a line, into emitted too; the
 * emit_fail_at-th rt_emit_run call fails as a failing job's does. */

static void record_item(int port, const Item *it) {
  char line[96];
  snprintf(line, sizeof line, "%d %c %llu %llu\n", port, "tpwfgbx"[it->kind < 6 ? it->kind : 6],
           (unsigned long long)it->seq, (unsigned long long)it->src);
  buf_puts(&emitted, line);
  if (it->kind == ITEM_TUPLE) {
    tuple_unref(it->t);
    nemitted++;
  }
}

static bool idle_in_tick; /* the next tick's emit on output 0 waits: the thread's idle hook runs */

int __wrap_rt_emit_item(OpInst *op, int port, const Item *it) {
  ck_assert_int_lt(port, op->op->noutputs);
  record_item(port, it);
  if (idle_in_tick && it->kind == ITEM_TICK && port == 0) {
    idle_in_tick = false;
    op->impl->idle(op);
  }
  return 0;
}

int __wrap_rt_emit_run(OpInst *op, int port, Item *items, int n) {
  ck_assert_int_lt(port, op->op->noutputs);
  if (++emit_runs == emit_fail_at) {
    for (int i = 0; i < n; i++) tuple_unref(items[i].t);
    return -1;
  }
  for (int i = 0; i < n; i++) record_item(port, &items[i]);
  return 0;
}

uint64_t __wrap_rt_progress(const OpInst *op) {
  return op->cur_src;
}

void __wrap_rt_warn(OpInst *op, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  buf_puts(&warnings, op->op->name);
  buf_puts(&warnings, ": ");
  buf_puts(&warnings, msg);
  buf_putc(&warnings, '\n');
}

int __wrap_rt_eval_fail(OpInst *op, const char *what, const char *text, const Tuple *t, const char *err) {
  (void)t;
  return __wrap_rt_fail(op, "%s: %s in '%s'", what, err, text);
}

/* The channel of a key (its values) among `width`, as this suite routes tuples. */
static int key_channel(const Value *vals, int n, int width) {
  uint64_t h = SF_HASH_SEED;
  for (int k = 0; k < n; k++) h = value_hash(&vals[k], h);
  return sf_key_channel(h, width);
}

bool __wrap_rt_owns_key(const OpInst *op, const Value *vals, const int *slots, int nvals) {
  if (own_width <= 0) return __real_rt_owns_key(op, vals, slots, nvals);
  return key_channel(vals, nvals, own_width) == own_channel;
}

bool __wrap_rt_stopping(const OpInst *op) {
  (void)op;
  return stopping;
}

bool __wrap_rt_draining(const OpInst *op) {
  (void)op;
  return draining;
}

const ExecOptions *__wrap_rt_options(const OpInst *op) {
  (void)op;
  return &options;
}

uint64_t __wrap_rt_checkpoint_taking(const OpInst *op) {
  (void)op;
  return ckpt_taking;
}

uint64_t __wrap_rt_checkpoint_complete(const OpInst *op) {
  (void)op;
  return ckpt_complete;
}

bool __wrap_rt_restore_committed(const OpInst *op) {
  (void)op;
  return restore_committed;
}

void __wrap_rt_idle(OpInst *op) {
  (void)op;
}

int __wrap_rt_wait_fd_for(const OpInst *op, int fd, short events, int ms) {
  (void)op;
  if (stopping) return 0;
  struct pollfd p = {.fd = fd, .events = events};
  int rc = poll(&p, 1, ms);
  return rc < 0 ? -1 : rc == 0 ? 2 : 1;
}

/* Fails the test unless got is want, naming the first line where they differ (Check's messages
 * are short: never the whole texts). */
static void expect_text(const char *got, const char *want, const char *what) {
  if (!strcmp(got, want)) return;
  int line = 1;
  const char *g = got, *w = want;
  for (; *g && *g == *w; g++, w++)
    if (*g == '\n') line++;
  while (g > got && g[-1] != '\n') g--, w--;
  ck_abort_msg("%s: line %d is\n  %.200s\nexpected\n  %.200s", what, line, *g ? strtok(strdup(g), "\n") : "(nothing)",
               *w ? strtok(strdup(w), "\n") : "(nothing)");
}

/* ---- instances ---- */

static Graph *graph; /* the test's graph */
static int tick_every; /* > 0: a tick goes to the instance before every tick_every-th input */

static void setup(void) {
  buf_init(&emitted);
  buf_init(&warnings);
  reset_output();
  memset(&options, 0, sizeof options);
  stopping = draining = false;
  drain_after = -1;
  snap_op = NULL;
  snapped = false;
  own_width = 0;
  ckpt_taking = 1;
  ckpt_complete = 0;
  graph = NULL;
  tick_every = 0;
}

static char sink_dir[64]; /* the FileSink tests' directory ("" when none) */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static void teardown(void) {
  if (sink_dir[0]) nftw(sink_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  sink_dir[0] = 0;
  if (graph) graph_free(graph);
  buf_release(&emitted);
  buf_release(&warnings);
}

/* The graph whose <graph> element holds body (parsed and checked). */
static void use_graph(const char *body) {
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  fprintf(m, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graph xmlns=\"urn:streamfission:graph:1\" name=\"t\">\n"
             "%s</graph>\n", body);
  fclose(m);
  if (graph) graph_free(graph);
  graph = unit_graph_text(text);
  free(text);
}

/* Prepares i for the graph's operator `name` and opens it, which must succeed. */
static void inst_open(OpInst *i, const char *name) {
  memset(i, 0, sizeof *i);
  i->op = graph_find_op(graph, name);
  ck_assert_msg(i->op != NULL, "no operator '%s'", name);
  i->impl = rt_kind_impl(i->op->kind);
  ck_assert_ptr_nonnull(i->impl);
  i->in_schema = op_input_schema(i->op);
  i->out_schema = op_output_schema(i->op);
  i->graph_dir = ".";
  i->scratch = arena_new();
  ck_assert_msg(i->impl->open(i) == 0, "open of '%s' failed: %s", name, failure);
}

static void inst_close(OpInst *i, bool ok) {
  if (i->impl->close) i->impl->close(i, ok);
  arena_free(i->scratch);
  memset(i, 0, sizeof *i);
}

static void take_snapshot(OpInst *i, Buf *out) {
  ck_assert_ptr_nonnull(i->impl->snapshot);
  ck_assert_msg(i->impl->snapshot(i, out) == 0, "snapshot failed: %s", failure);
}

/* Restores i from the n bytes at p: the restore's result (failure says why when -1). */
static int restore_bytes(OpInst *i, const void *p, size_t n) {
  ck_assert_ptr_nonnull(i->impl->restore);
  SnapIn in = {.p = p, .n = n};
  return i->impl->restore(i, &in);
}

static void restore_ok(OpInst *i, const Buf *snap) {
  ck_assert_msg(restore_bytes(i, snap->p, snap->n) == 0, "restore failed: %s", failure);
}

/* ---- inputs of the transforming kinds ---- */

/* Every transforming operator reads schema In (IN_SCHEMA, with the other schemas first, then
 * IN_SOURCE), made by a Beacon the tests never run: its tuples
 * come from input(i) below, fed to process with seq = src = i. */
#define IN_SCHEMA                                                                                   \
  "<schema name=\"In\"><attr name=\"k\" type=\"int\"/><attr name=\"g\" type=\"string\"/>"         \
  "<attr name=\"x\" type=\"int\"/><attr name=\"d\" type=\"double\"/></schema>\n"
#define IN_SOURCE                                                                                   \
  "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"                     \
  "<param name=\"count\">1</param><set attr=\"k\">seq</set><set attr=\"g\">\"a\"</set>"            \
  "<set attr=\"x\">seq</set><set attr=\"d\">1.0</set></operator>\n"
#define SINK(S)                                                                                     \
  "<operator name=\"sink\" kind=\"FileSink\"><input stream=\"" S "\"/>"                           \
  "<param name=\"file\">/dev/null</param></operator>\n"

/* Input tuple i: a few keys k and g, ints whose sums pass 2^53 (but stay within an int64: an
 * overflow fails the job) and doubles of every sort (small integers, fractions, -0.0, huge values)
 * so that folds are not associative. */
static Tuple *input(int i) {
  static const char *groups[] = {"p", "q", "rr", "", "a longer group name, past a first buffer"};
  uint64_t r = (uint64_t)i * UINT64_C(0x9E3779B97F4A7C15) + 12345;
  r ^= r >> 29;
  r *= UINT64_C(0xBF58476D1CE4E5B9);
  r ^= r >> 32;
  Value v[4];
  v[0] = value_int((int64_t)(r % 5));
  const char *g = groups[(r >> 8) % 5];
  v[1] = value_string(g, strlen(g));
  v[2] = (r >> 16) % 7 == 0 ? value_int(INT64_MAX / 1024 - (int64_t)(r % 3)) : value_int((int64_t)(r >> 40) % 1000 - 500);
  double d;
  switch ((r >> 24) % 6) {
  case 0: d = (double)((int64_t)(r >> 44) % 100); break;
  case 1: d = (double)(r >> 40) / 7.0; break;
  case 2: d = -0.0; break;
  case 3: d = 1e300 * (double)((r >> 50) % 3); break;
  case 4: d = 0.1 * (double)((r >> 45) % 11); break;
  default: d = -(double)(r >> 33) / 3.0; break;
  }
  v[3] = value_double(d);
  return tuple_new(v, 4);
}

/* The channel of input i among width, its key being the input attributes at slots[0..nslots). */
static int input_channel(const Tuple *t, const int *slots, int nslots, int width) {
  Value key[4];
  for (int k = 0; k < nslots; k++) key[k] = t->v[slots[k]];
  return key_channel(key, nslots, width);
}

/* Feeds inputs from..to-1 to i (only those of `channel` among `width` when width > 0). */
/* The tick before input n (tick_every): they rise by 20 from -600. */
static int64_t tick_before(int n) {
  return -600 + 20 * (int64_t)n;
}

static void feed_routed(OpInst *i, int from, int to, const int *slots, int nslots, int width, int channel) {
  for (int n = from; n < to; n++) {
    if (tick_every > 0 && n % tick_every == 0) { /* every channel sees every tick */
      i->cur_seq = i->cur_src = (uint64_t)n;
      ck_assert_msg(i->impl->tick(i, 0, tick_before(n)) == 0, "tick before input %d failed: %s", n, failure);
    }
    Tuple *t = input(n);
    if (width > 0 && input_channel(t, slots, nslots, width) != channel) {
      tuple_unref(t);
      continue;
    }
    i->cur_seq = i->cur_src = (uint64_t)n;
    ck_assert_msg(i->impl->process(i, 0, t) == 0, "process of input %d failed: %s", n, failure);
    arena_reset(i->scratch);
  }
}

static void feed(OpInst *i, int from, int to) {
  feed_routed(i, from, to, NULL, 0, 0, 0);
}

static void finish(OpInst *i) {
  if (tick_every > 0) { /* the final tick, at a position after every input's */
    i->cur_seq = i->cur_src = 999999;
    ck_assert_msg(i->impl->tick(i, 0, INT64_MAX) == 0, "final tick failed: %s", failure);
  }
  if (i->impl->final) ck_assert_msg(i->impl->final(i) == 0, "final failed: %s", failure);
}

/* What one uninterrupted instance of `name` emits for inputs 0..n-1 (malloc'd). */
static char *reference(const char *name, int n) {
  OpInst a;
  reset_output();
  inst_open(&a, name);
  feed(&a, 0, n);
  finish(&a);
  inst_close(&a, true);
  return strdup(emitted.p ? emitted.p : "");
}

/* Runs `name` over inputs 0..n-1 interrupted at every cut c (and again at c + step when step > 0,
 * from the restored instance's own snapshot), and expects the pieces to make the reference. Returns
 * the snapshot at the middle cut (for the tests of bad snapshots). */
static Buf check_cuts(const char *name, int n, int step) {
  char *full = reference(name, n);
  ck_assert_msg(strlen(full) > 0, "the reference run emitted nothing");
  Buf middle;
  buf_init(&middle);
  for (int c = 0; c <= n; c++) {
    int c2 = step > 0 && c + step <= n ? c + step : -1;
    Buf all, snap, snap2;
    buf_init(&all);
    buf_init(&snap);
    buf_init(&snap2);
    OpInst a, b;
    reset_output();
    inst_open(&a, name);
    feed(&a, 0, c);
    take_snapshot(&a, &snap);
    buf_append(&all, emitted.p ? emitted.p : "", emitted.n);
    inst_close(&a, true);

    reset_output();
    inst_open(&b, name);
    restore_ok(&b, &snap);
    if (c2 >= 0) { /* a restored instance's snapshot restores too */
      feed(&b, c, c2);
      take_snapshot(&b, &snap2);
      buf_append(&all, emitted.p ? emitted.p : "", emitted.n);
      inst_close(&b, true);
      reset_output();
      inst_open(&b, name);
      restore_ok(&b, &snap2);
    }
    feed(&b, c2 >= 0 ? c2 : c, n);
    finish(&b);
    buf_append(&all, emitted.p ? emitted.p : "", emitted.n);
    inst_close(&b, true);
    char what[64];
    snprintf(what, sizeof what, "cut at %d (then %d)", c, c2);
    expect_text(all.p ? all.p : "", full, what);
    if (c == n / 2) buf_append(&middle, snap.p, snap.n);
    buf_release(&all);
    buf_release(&snap);
    buf_release(&snap2);
  }
  free(full);
  return middle;
}

/* Every strict prefix of snap, and snap with a byte more, fail a fresh instance's restore with a
 * message about the snapshot; every byte of snap flipped in turn restores or fails, never crashes
 * (nor leaks, under ASan). */
static void check_bad_snapshots(const char *name, const Buf *snap) {
  ck_assert_msg(snap->n > 0, "an empty snapshot");
  unsigned char *p = malloc(snap->n + 1);
  memcpy(p, snap->p, snap->n);
  size_t step = snap->n > 600 ? snap->n / 300 : 1;
  for (size_t len = 0; len < snap->n; len += len + step < snap->n ? step : 1) {
    OpInst a;
    reset_output();
    inst_open(&a, name);
    ck_assert_msg(restore_bytes(&a, p, len) == -1, "a snapshot cut to %zu of %zu bytes restored", len, snap->n);
    ck_assert_msg(strstr(failure, "snapshot") != NULL, "cut to %zu bytes: the message is '%s'", len, failure);
    inst_close(&a, false);
  }
  p[snap->n] = 0;
  OpInst a;
  reset_output();
  inst_open(&a, name);
  ck_assert_msg(restore_bytes(&a, p, snap->n + 1) == -1, "a snapshot with a byte more restored");
  ck_assert_msg(strstr(failure, "snapshot") != NULL, "a byte more: the message is '%s'", failure);
  inst_close(&a, false);
  for (size_t k = 0; k < snap->n; k += step) {
    p[k] ^= 0xA5;
    reset_output();
    inst_open(&a, name);
    int rc = restore_bytes(&a, p, snap->n);
    ck_assert_msg(rc == 0 || (rc == -1 && failure[0]), "byte %zu flipped: rc %d without a message", k, rc);
    if (rc == 0 && a.impl->run) { /* a restored instance runs on, whatever it holds */
      (void)a.impl->run(&a);
    } else if (rc == 0) { /* it may fail on what it holds (a sum that is no int64), with a message */
      int n = 0;
      for (; n < 10; n++) {
        a.cur_seq = a.cur_src = (uint64_t)n;
        if (a.impl->process(&a, 0, input(n))) break;
        arena_reset(a.scratch);
      }
      if (n < 10)
        ck_assert_msg(failure[0], "byte %zu flipped: input %d failed without a message", k, n);
      else
        finish(&a);
    }
    inst_close(&a, rc == 0);
    p[k] ^= 0xA5;
  }
  free(p);
}

/* ---- Dedup ---- */

#define DEDUP_GRAPH                                                                                 \
  IN_SCHEMA IN_SOURCE "<operator name=\"dd\" kind=\"Dedup\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>" \
            "<param name=\"partitionBy\">k g</param></operator>\n" SINK("B")

START_TEST(test_dedup) {
  use_graph(DEDUP_GRAPH);
  Buf snap = check_cuts("dd", 50, 7);
  check_bad_snapshots("dd", &snap);
  buf_release(&snap);
}
END_TEST

/* A KeyTable below a hash Split holds only its channel's keys, which share the low bits of their
 * hash (the key group, value.h). Its buckets must still be used evenly: the longest stretch of
 * occupied buckets stays short. 20,000 distinct keys of channel 0 of 2 (or of 3 of 4) go into a
 * Dedup: 46 or 47 buckets in a row at most; homes from the low bits of the hash made 182 and 193. */
START_TEST(test_keytable_channel_keys) {
  use_graph(IN_SCHEMA IN_SOURCE "<operator name=\"dd\" kind=\"Dedup\"><input stream=\"A\"/>"
            "<output stream=\"B\" schema=\"In\"/><param name=\"partitionBy\">k</param></operator>\n" SINK("B"));
  static const int widths[] = {2, 4}, channels[] = {0, 3};
  for (int w = 0; w < 2; w++) {
    OpInst a;
    reset_output();
    inst_open(&a, "dd");
    int fed = 0;
    for (int64_t k = 0; fed < 20000; k++) {
      Value v[4] = {value_int(k), value_string("a", 1), value_int(0), value_double(0)};
      if (key_channel(v, 1, widths[w]) != channels[w]) continue;
      a.cur_seq = a.cur_src = (uint64_t)fed++;
      ck_assert_int_eq(a.impl->process(&a, 0, tuple_new(v, 4)), 0);
    }
    ck_assert_int_eq(nemitted, 20000);
    const KeyTable *kt = a.state;
    ck_assert_uint_eq(kt->count, 20000);
    size_t longest = 0, run = 0;
    for (size_t j = 0; j < 2 * kt->cap; j++) { /* twice round: a stretch may wrap */
      run = kt->buckets[j & (kt->cap - 1)].e ? run + 1 : 0;
      if (run > longest) longest = run;
    }
    ck_assert_msg(longest < 100, "width %d: %zu occupied buckets in a row of %zu", widths[w], longest, kt->cap);
    inst_close(&a, true);
  }
}
END_TEST

/* ---- Split ---- */

/* A hash Split (on k and g, 3 outputs, a pulse every 7) fed runs deals every tuple to the channel,
 * with the sequence number, and sends every pulse where it does when fed tuple by tuple; whatever
 * the runs' lengths. A failing emit ends the run with -1 after what went before it (ASan finds a
 * tuple it did not release). The same for a round-robin Split. */
START_TEST(test_split_runs) {
  static const char *const strategies[] = {"<param name=\"strategy\">hash</param><param name=\"keys\">k g</param>",
                                           "<param name=\"strategy\">roundrobin</param>"};
  enum { N = 700 };
  for (int st = 0; st < 2; st++) {
    char body[2048];
    snprintf(body, sizeof body,
             IN_SCHEMA IN_SOURCE "<operator name=\"sp\" kind=\"Split\" region=\"r1\"><input stream=\"A\"/>"
             "<output stream=\"S[0]\" schema=\"In\"/><output stream=\"S[1]\" schema=\"In\"/>"
             "<output stream=\"S[2]\" schema=\"In\"/>%s<param name=\"sequence\">assign</param>"
             "<param name=\"pulse\">7</param></operator>\n"
             "<operator name=\"mg\" kind=\"Merge\" region=\"r1\"><input stream=\"S[0]\"/><input stream=\"S[1]\"/>"
             "<input stream=\"S[2]\"/><output stream=\"Z\" schema=\"In\"/><param name=\"order\">seqpulse</param>"
             "</operator>\n" SINK("Z"),
             strategies[st]);
    use_graph(body);
    OpInst a;
    reset_output();
    inst_open(&a, "sp");
    feed(&a, 0, N);
    finish(&a);
    char *want = strdup(emitted.p);
    ck_assert_int_eq(nemitted, N);
    inst_close(&a, true);
    static const int lengths[] = {1, 2, 5, 7, 64, 256, 300, N};
    for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++) {
      for (int fail = 0; fail <= 1; fail++) {
        reset_output();
        inst_open(&a, "sp");
        int rc = 0;
        for (int from = 0; from < N && rc == 0; from += lengths[l]) {
          Item items[N];
          int n = N - from < lengths[l] ? N - from : lengths[l];
          for (int i = 0; i < n; i++)
            items[i] = (Item){.kind = ITEM_TUPLE, .seq = (uint64_t)(from + i), .src = (uint64_t)(from + i), .t = input(from + i)};
          a.cur_seq = a.cur_src = (uint64_t)from;
          if (fail && from + n > N / 2 && !emit_fail_at) emit_fail_at = emit_runs + 2; /* the run's second stretch */
          rc = a.impl->process_run(&a, 0, items, n);
        }
        if (!fail) {
          ck_assert_int_eq(rc, 0);
          finish(&a);
          expect_text(emitted.p, want, "runs");
        } else {
          ck_assert_int_eq(rc, -1);
          ck_assert_msg(!strncmp(want, emitted.p, emitted.n), "runs of %d: what went before the failure differs",
                        lengths[l]);
          ck_assert_int_lt(nemitted, N);
        }
        inst_close(&a, true);
      }
    }
    free(want);
  }
}
END_TEST

/* A Split keeping upstream numbers (a shuffle's, at the end of a channel) sends a tick at the
 * position it came with, past the last tuple's: a pulse after it, at the end of the input, when the
 * thread waits (also while the tick goes out, between two outputs) or forwarded from upstream
 * behind it, promises no less than that position. A pulse that went back (the last tuple's, or the
 * tick before) was harmless to a Merge on the same host, but an executor receiving it over the
 * network refuses it ("sequence numbers went backwards"), which failed a Join followed by a
 * shuffle on two or three hosts (tests/nexmark.sh, q8). */
START_TEST(test_split_keep_pulse_after_tick) {
  use_graph(IN_SCHEMA IN_SOURCE "<operator name=\"sp\" kind=\"Split\" region=\"r1\"><input stream=\"A\"/>"
            "<output stream=\"S[0]\" schema=\"In\"/><output stream=\"S[1]\" schema=\"In\"/>"
            "<param name=\"strategy\">hash</param><param name=\"keys\">k</param>"
            "<param name=\"sequence\">keep</param><param name=\"pulse\">0</param></operator>\n"
            "<operator name=\"mg\" kind=\"Merge\" region=\"r1\"><input stream=\"S[0]\"/><input stream=\"S[1]\"/>"
            "<output stream=\"Z\" schema=\"In\"/><param name=\"order\">seqpulse</param></operator>\n" SINK("Z"));
  static const char *const after[] = {"final", "idle", "idle while the tick goes out", "an upstream pulse behind"};
  static const char *const want[] = {
      "0 x 9 9\n1 x 9 9\n0 p 9 9\n1 p 9 9\n", "0 x 9 9\n1 x 9 9\n0 p 9 9\n1 p 9 9\n",
      "0 x 9 9\n0 p 9 9\n1 p 9 9\n1 x 9 9\n", "0 x 9 9\n1 x 9 9\n0 p 9 9\n1 p 9 9\n"};
  for (int c = 0; c < 4; c++) {
    OpInst a;
    reset_output();
    inst_open(&a, "sp");
    a.cur_seq = a.cur_src = 5;
    ck_assert_int_eq(a.impl->process(&a, 0, input(0)), 0);
    a.cur_seq = a.cur_src = 9; /* the tick comes with the position of what follows it upstream */
    idle_in_tick = c == 2;
    ck_assert_int_eq(a.impl->tick(&a, 0, 1000), 0);
    if (c == 0) ck_assert_int_eq(a.impl->final(&a), 0);
    if (c == 1) a.impl->idle(&a);
    if (c == 3) ck_assert_int_eq(a.impl->pulse(&a, 0, 7), 0);
    /* the tuple on its channel, the tick on both and the pulses: at 9, never back at 5 or 7 */
    expect_text(strchr(emitted.p, '\n') + 1, want[c], after[c]);
    inst_close(&a, true);
  }
}
END_TEST

/* ---- keyed restores at another width ---- */

/* The keys of a Dedup's snapshot: its second u64 (keytable_snapshot's count). */
static uint64_t snapshot_keys(const Buf *snap) {
  ck_assert_uint_ge(snap->n, 16);
  uint64_t n = 0;
  for (int b = 0; b < 8; b++) n |= (uint64_t)(unsigned char)snap->p[8 + b] << (8 * b);
  return n;
}

static int compare_lines(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* text's lines sorted (a merge puts replicas' outputs back in src order), malloc'd. */
static char *sorted_lines(const char *text) {
  char *copy = strdup(text);
  size_t n = 0, cap = 16;
  char **lines = malloc(sizeof *lines * cap);
  for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    if (n == cap) lines = realloc(lines, sizeof *lines * (cap *= 2));
    lines[n++] = l;
  }
  qsort(lines, n, sizeof *lines, compare_lines);
  Buf b;
  buf_init(&b);
  for (size_t i = 0; i < n; i++) {
    buf_puts(&b, lines[i]);
    buf_putc(&b, '\n');
  }
  free(lines);
  free(copy);
  char *out = strdup(b.p ? b.p : "");
  buf_release(&b);
  return out;
}

/* `name` (keyed on the input attributes at slots) run at width `from` up to input `cut`, then
 * restored at width `to`, each new replica from every old replica's snapshot in turn, keeping the
 * keys it owns: the replicas' outputs together are the reference's lines. With check_keys, the new
 * replicas' snapshots together hold exactly the keys the old ones did (a Dedup's layout). */
static void check_rewidth(const char *name, const int *slots, int nslots, int n, int cut, int from, int to,
                          bool check_keys) {
  char *full = reference(name, n);
  char *want = sorted_lines(full);
  Buf all;
  buf_init(&all);
  Buf *snaps = calloc((size_t)from, sizeof *snaps);
  uint64_t old_keys = 0, new_keys = 0;
  for (int r = 0; r < from; r++) {
    OpInst a;
    reset_output();
    inst_open(&a, name);
    feed_routed(&a, 0, cut, slots, nslots, from, r);
    buf_init(&snaps[r]);
    take_snapshot(&a, &snaps[r]);
    if (check_keys) old_keys += snapshot_keys(&snaps[r]);
    buf_append(&all, emitted.p ? emitted.p : "", emitted.n);
    inst_close(&a, true);
  }
  for (int r = 0; r < to; r++) {
    OpInst b;
    reset_output();
    inst_open(&b, name);
    own_width = to;
    own_channel = r;
    for (int s = 0; s < from; s++) restore_ok(&b, &snaps[s]);
    own_width = 0;
    if (check_keys) {
      Buf mine;
      buf_init(&mine);
      take_snapshot(&b, &mine);
      new_keys += snapshot_keys(&mine);
      buf_release(&mine);
    }
    feed_routed(&b, cut, n, slots, nslots, to, r);
    finish(&b);
    buf_append(&all, emitted.p ? emitted.p : "", emitted.n);
    inst_close(&b, true);
  }
  char *got = sorted_lines(all.p ? all.p : "");
  char what[64];
  snprintf(what, sizeof what, "width %d to %d at %d", from, to, cut);
  expect_text(got, want, what);
  if (check_keys) ck_assert_uint_eq(new_keys, old_keys);
  for (int r = 0; r < from; r++) buf_release(&snaps[r]);
  free(snaps);
  free(got);
  free(want);
  free(full);
  buf_release(&all);
}

START_TEST(test_rewidth_dedup) {
  use_graph(DEDUP_GRAPH);
  static const int slots[] = {0, 1};
  check_rewidth("dd", slots, 2, 60, 25, 2, 3, true);
  check_rewidth("dd", slots, 2, 60, 25, 3, 1, true);
  check_rewidth("dd", slots, 2, 60, 0, 2, 2, true);
}
END_TEST

/* A replica that owns no key restores an empty table from a non-empty snapshot. */
START_TEST(test_rewidth_owns_nothing) {
  use_graph(DEDUP_GRAPH);
  OpInst a;
  Buf snap, mine;
  buf_init(&snap);
  buf_init(&mine);
  inst_open(&a, "dd");
  feed(&a, 0, 20);
  take_snapshot(&a, &snap);
  inst_close(&a, true);
  ck_assert_uint_gt(snapshot_keys(&snap), 0);
  inst_open(&a, "dd");
  own_width = 1;
  own_channel = 1; /* no key hashes to channel 1 of 1 */
  restore_ok(&a, &snap);
  own_width = 0;
  take_snapshot(&a, &mine);
  ck_assert_uint_eq(snapshot_keys(&mine), 0);
  inst_close(&a, true);
  buf_release(&snap);
  buf_release(&mine);
}
END_TEST

/* ---- Functor ---- */

#define FUNCTOR_GRAPH(PARTITION)                                                                    \
  IN_SCHEMA                                                                                         \
  "<schema name=\"Out\"><attr name=\"k\" type=\"int\"/><attr name=\"g\" type=\"string\"/>"        \
  "<attr name=\"n\" type=\"int\"/><attr name=\"tot\" type=\"double\"/><attr name=\"cat\" type=\"string\"/>" \
  "<attr name=\"on\" type=\"bool\"/></schema>\n"                                                   \
  IN_SOURCE "<operator name=\"f\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>" \
  PARTITION "<param name=\"where\">n % 3 != 1</param>"                                             \
  "<set attr=\"n\">n</set><set attr=\"tot\">tot</set><set attr=\"cat\">cat</set><set attr=\"on\">on</set>" \
  "<state name=\"n\" type=\"int\" init=\"0\">n + 1</state>"                                         \
  "<state name=\"tot\" type=\"double\" init=\"0.5\">tot + d</state>"                                \
  "<state name=\"cat\" type=\"string\" init=\"&quot;&gt;&quot;\">substr(cat + str(x % 10), 0, 40)</state>" \
  "<state name=\"on\" type=\"bool\" init=\"false\">!on</state>"                                     \
  "</operator>\n" SINK("B")

START_TEST(test_functor_per_key) {
  use_graph(FUNCTOR_GRAPH("<param name=\"partitionBy\">g</param>"));
  Buf snap = check_cuts("f", 40, 9);
  check_bad_snapshots("f", &snap);
  buf_release(&snap);
}
END_TEST

START_TEST(test_functor_one_state) {
  use_graph(FUNCTOR_GRAPH(""));
  Buf snap = check_cuts("f", 30, 0);
  check_bad_snapshots("f", &snap);
  buf_release(&snap);
}
END_TEST

/* A Functor without state variables writes nothing and restores from nothing. */
START_TEST(test_functor_stateless) {
  use_graph(IN_SCHEMA IN_SOURCE "<operator name=\"f\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
                      "<set attr=\"x\">x * 2</set></operator>\n" SINK("B"));
  Buf snap = check_cuts("f", 10, 3);
  ck_assert_uint_eq(snap.n, 0);
  buf_release(&snap);
}
END_TEST

START_TEST(test_rewidth_functor) {
  use_graph(FUNCTOR_GRAPH("<param name=\"partitionBy\">g</param>"));
  static const int slots[] = {1};
  check_rewidth("f", slots, 1, 50, 20, 2, 3, false);
  check_rewidth("f", slots, 1, 50, 33, 4, 2, false);
}
END_TEST

/* ---- Aggregate ---- */

#define AGG_GRAPH(WINDOW)                                                                           \
  IN_SCHEMA                                                                                         \
  "<schema name=\"Out\"><attr name=\"k\" type=\"int\"/><attr name=\"n\" type=\"int\"/>"            \
  "<attr name=\"sx\" type=\"int\"/><attr name=\"sd\" type=\"double\"/><attr name=\"ax\" type=\"double\"/>" \
  "<attr name=\"ad\" type=\"double\"/><attr name=\"mn\" type=\"string\"/><attr name=\"mx\" type=\"double\"/>" \
  "<attr name=\"f\" type=\"string\"/><attr name=\"l\" type=\"int\"/><attr name=\"e\" type=\"int\"/></schema>\n" \
  IN_SOURCE "<operator name=\"agg\" kind=\"Aggregate\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>" \
  "<param name=\"partitionBy\">k</param><param name=\"window\">" WINDOW "</param>"                  \
  "<set attr=\"n\">count()</set><set attr=\"sx\">sum(x)</set><set attr=\"sd\">sum(d)</set>"         \
  "<set attr=\"ax\">avg(x)</set><set attr=\"ad\">avg(d)</set><set attr=\"mn\">min(g)</set>"         \
  "<set attr=\"mx\">max(d)</set><set attr=\"f\">first(g + str(x))</set><set attr=\"l\">last(x)</set>" \
  "<set attr=\"e\">max(x) - min(x) + count()</set>"                                                 \
  "</operator>\n" SINK("B")

START_TEST(test_aggregate_tumbling) {
  use_graph(AGG_GRAPH("tumbling 3"));
  Buf snap = check_cuts("agg", 60, 11);
  check_bad_snapshots("agg", &snap);
  buf_release(&snap);
}
END_TEST

START_TEST(test_aggregate_sliding) {
  use_graph(AGG_GRAPH("sliding 4"));
  Buf snap = check_cuts("agg", 60, 11);
  check_bad_snapshots("agg", &snap);
  buf_release(&snap);
}
END_TEST

/* A window longer than every key's history: restored windows still filling. */
START_TEST(test_aggregate_sliding_long) {
  use_graph(AGG_GRAPH("sliding 100"));
  Buf snap = check_cuts("agg", 40, 13);
  buf_release(&snap);
}
END_TEST

/* A snapshot of another window fails the restore, naming both. */
START_TEST(test_aggregate_other_window) {
  use_graph(AGG_GRAPH("sliding 4"));
  OpInst a;
  Buf snap;
  buf_init(&snap);
  inst_open(&a, "agg");
  feed(&a, 0, 10);
  take_snapshot(&a, &snap);
  inst_close(&a, true);
  use_graph(AGG_GRAPH("sliding 5"));
  inst_open(&a, "agg");
  ck_assert_int_eq(restore_bytes(&a, snap.p, snap.n), -1);
  ck_assert_msg(strstr(failure, "'sliding 4'") && strstr(failure, "'sliding 5'"), "message: %s", failure);
  inst_close(&a, false);
  buf_release(&snap);
}
END_TEST

START_TEST(test_rewidth_aggregate) {
  static const int slots[] = {0};
  use_graph(AGG_GRAPH("sliding 4"));
  check_rewidth("agg", slots, 1, 60, 27, 2, 3, false);
  use_graph(AGG_GRAPH("tumbling 3"));
  check_rewidth("agg", slots, 1, 60, 28, 3, 2, false);
}
END_TEST

/* ---- Aggregate: time windows and running ----
 * This tree's checker takes neither the time windows, `lateness`, a source's `time` nor the new
 * aggregate functions yet: the graph is checked as a tumbling window, then changed into what the
 * instance runs. x is the event time (mostly -500..500, in no order, some far ahead), ticks come
 * every third input rising by 20 from -600 (tick_before), so with lateness 150 many tuples are
 * late; n becomes window_end(), sx count_distinct(x), l arg_max(x, d). */

static void put_param(Op *op, const char *name, const char *text) {
  for (int i = 0; i < op->nparams; i++)
    if (!strcmp(op->params[i].name, name)) {
      op->params[i].text = text;
      return;
    }
  Param *p = arena_alloc(graph->arena, sizeof *p * (size_t)(op->nparams + 1));
  memcpy(p, op->params, sizeof *p * (size_t)op->nparams);
  p[op->nparams] = (Param){.name = name, .text = text};
  op->params = p;
  op->nparams++;
}

static Expr *set_call(Op *op, const char *attr) {
  for (int i = 0; i < op->nsets; i++)
    if (!strcmp(op->sets[i].attr, attr)) {
      ck_assert_int_eq(op->sets[i].expr->kind, EXPR_CALL);
      return op->sets[i].expr;
    }
  ck_abort_msg("no set of '%s'", attr);
  return NULL;
}

static void use_time_graph(const char *window) {
  use_graph(AGG_GRAPH("tumbling 3"));
  Op *src = graph_find_op(graph, "src"), *agg = graph_find_op(graph, "agg");
  put_param(src, "time", "x");
  put_param(agg, "window", window);
  Stream *in = agg->inputs[0].streams[0]; /* its event time, as the checker would have found it */
  in->time_slot = schema_find_attr(in->schema, "x");
  bool timed = strstr(window, " time ") != NULL;
  if (timed) {
    put_param(agg, "lateness", "150");
    set_call(agg, "n")->func = FUNC_WINDOW_END;
    tick_every = 3;
  }
  set_call(agg, "sx")->func = FUNC_COUNT_DISTINCT;
  Expr *l = set_call(agg, "l");
  Expr **args = arena_alloc(graph->arena, sizeof *args * 2);
  args[0] = l->args[0];
  args[1] = set_call(agg, "sd")->args[0];
  l->func = FUNC_ARG_MAX;
  l->args = args;
  l->nargs = 2;
}

/* The late tuples of an uninterrupted run over inputs 0..n-1, and what its warning says. */
static unsigned long long reference_late(int n) {
  OpInst a;
  reset_output();
  inst_open(&a, "agg");
  feed(&a, 0, n);
  finish(&a);
  unsigned long long late = atomic_load(&a.n_late);
  inst_close(&a, true);
  return late;
}

START_TEST(test_aggregate_time_windows) {
  static const char *windows[] = {"tumbling time 100", "hopping time 100 25", "session time 40"};
  static const char *warned[] = {
    "agg: 19 late tuples dropped (event time behind the windows' end + lateness); the first: (k=0, g=\"q\", x=-214, d=0)\n",
    "agg: 17 late tuples dropped (event time behind the windows' end + lateness); the first: (k=3, g=\"q\", x=-305, "
    "d=-1672332.6666666667)\n",
    "agg: 18 late tuples dropped (event time behind the windows' end + lateness); the first: (k=0, g=\"q\", x=-214, d=0)\n",
  };
  static const int slots[] = {0};
  for (int w = 0; w < 3; w++) {
    use_time_graph(windows[w]);
    unsigned long long late = reference_late(60);
    ck_assert_msg(late > 0 && late < 50, "%s: %llu late tuples", windows[w], late);
    ck_assert_str_eq(warnings.p ? warnings.p : "", warned[w]);
    Buf snap = check_cuts("agg", 60, 11);
    check_bad_snapshots("agg", &snap);
    buf_release(&snap);
    check_rewidth("agg", slots, 1, 60, 27, 2, 3, false);
    check_rewidth("agg", slots, 1, 60, 28, 3, 1, false);
    /* a restored instance goes on counting from the snapshot's late tuples */
    OpInst a, b;
    Buf cut;
    buf_init(&cut);
    inst_open(&a, "agg");
    feed(&a, 0, 30);
    take_snapshot(&a, &cut);
    inst_close(&a, true);
    inst_open(&b, "agg");
    restore_ok(&b, &cut);
    feed(&b, 30, 60);
    finish(&b);
    ck_assert_uint_eq(atomic_load(&b.n_late), late);
    inst_close(&b, true);
    buf_release(&cut);
  }
}
END_TEST

START_TEST(test_aggregate_running) {
  static const int slots[] = {0};
  use_time_graph("running");
  Buf snap = check_cuts("agg", 60, 11);
  check_bad_snapshots("agg", &snap);
  buf_release(&snap);
  check_rewidth("agg", slots, 1, 60, 27, 2, 3, false);
}
END_TEST

/* Time windows count their memory against --max-state-memory: open windows past it fail the
 * instance with the keyed tables' message, and closing it frees everything. */
START_TEST(test_aggregate_time_memory_limit) {
  use_time_graph("hopping time 100 25");
  options.max_state_memory = 16384;
  OpInst a;
  reset_output();
  inst_open(&a, "agg");
  int n, rc = 0;
  for (n = 0; n < 1000 && rc == 0; n++) {
    a.cur_seq = a.cur_src = (uint64_t)n;
    rc = a.impl->process(&a, 0, input(n));
    arena_reset(a.scratch);
  }
  ck_assert_int_eq(rc, -1);
  ck_assert_msg(n > 1 && strstr(failure, "out of memory (keyed state over --max-state-memory 16384 bytes"),
                "after %d inputs: %s", n, failure);
  inst_close(&a, false);
}
END_TEST

/* The same key in two snapshots restored into one instance: they do not belong together. */
START_TEST(test_restore_key_twice) {
  use_graph(AGG_GRAPH("tumbling 3"));
  OpInst a;
  Buf snap;
  buf_init(&snap);
  inst_open(&a, "agg");
  feed(&a, 0, 10);
  take_snapshot(&a, &snap);
  inst_close(&a, true);
  inst_open(&a, "agg");
  restore_ok(&a, &snap);
  ck_assert_int_eq(restore_bytes(&a, snap.p, snap.n), -1);
  ck_assert_msg(strstr(failure, "twice") && strstr(failure, "k="), "message: %s", failure);
  inst_close(&a, false);
  buf_release(&snap);
}
END_TEST

/* ---- Beacon ---- */

#define BEACON_GRAPH(COUNT)                                                                         \
  "<schema name=\"S\"><attr name=\"n\" type=\"int\"/><attr name=\"s\" type=\"string\"/>"           \
  "<attr name=\"d\" type=\"double\"/></schema>\n"                                                   \
  "<operator name=\"b\" kind=\"Beacon\"><output stream=\"A\" schema=\"S\"/>"                        \
  "<param name=\"count\">" COUNT "</param><set attr=\"n\">seq * 3</set>"                           \
  "<set attr=\"s\">\"v\" + str(rand(seq) % 7)</set><set attr=\"d\">double(seq) / 3.0</set></operator>\n" SINK("A")

/* Runs source `name` to its end (it must return 0); with at >= 0, its snapshot is taken in rt_emit
 * of the tuple whose src is `at`, into snap. With restore, the fresh instance is restored from it
 * first. Returns what it emitted (malloc'd). */
static char *run_source(const char *name, int64_t at, Buf *snap, const Buf *restore) {
  OpInst a;
  reset_output();
  inst_open(&a, name);
  if (restore) restore_ok(&a, restore);
  snap_op = at >= 0 ? &a : NULL;
  snap_at = (uint64_t)at;
  snap_into = snap;
  snapped = false;
  draining = false;
  ck_assert_msg(a.impl->run(&a) == 0, "run failed: %s", failure);
  if (at >= 0) ck_assert_msg(snapped, "no tuple with src %lld", (long long)at);
  snap_op = NULL;
  inst_close(&a, true);
  return strdup(emitted.p ? emitted.p : "");
}

/* The lines of text from its k-th on. */
static const char *from_line(const char *text, int k) {
  for (; k > 0 && text; k--) {
    text = strchr(text, '\n');
    if (text) text++;
  }
  ck_assert_ptr_nonnull(text);
  return text;
}

/* A source cut at every tuple it emits (total of them): the restored instance emits the rest of
 * the reference, the same tuples with the same src. drain: the source ends only on a drain, after
 * the tuples expected. Returns the snapshot at the middle. */
static Buf check_source_cuts(const char *name, int total, bool drain) {
  drain_after = drain ? total : -1;
  char *full = run_source(name, -1, NULL, NULL);
  ck_assert_int_eq(nemitted, total);
  Buf middle;
  buf_init(&middle);
  for (int k = 0; k < total; k++) {
    Buf snap;
    buf_init(&snap);
    drain_after = drain ? total : -1;
    free(run_source(name, k, &snap, NULL));
    drain_after = drain ? total - k : -1;
    char *rest = run_source(name, -1, NULL, &snap);
    char what[64];
    snprintf(what, sizeof what, "restored at %d", k);
    expect_text(rest, from_line(full, k), what);
    if (k == total / 2) buf_append(&middle, snap.p, snap.n);
    free(rest);
    buf_release(&snap);
  }
  free(full);
  drain_after = -1;
  return middle;
}

START_TEST(test_beacon) {
  use_graph(BEACON_GRAPH("25"));
  Buf snap = check_source_cuts("b", 25, false);
  check_bad_snapshots("b", &snap);
  buf_release(&snap);
}
END_TEST

/* A Beacon restored at its end emits nothing; one restored past its count fails. */
START_TEST(test_beacon_end) {
  use_graph(BEACON_GRAPH("5"));
  Buf snap;
  buf_init(&snap);
  OpInst a;
  inst_open(&a, "b");
  ck_assert_int_eq(a.impl->run(&a), 0);
  take_snapshot(&a, &snap);
  inst_close(&a, true);
  char *rest = run_source("b", -1, NULL, &snap);
  ck_assert_str_eq(rest, "");
  free(rest);
  use_graph(BEACON_GRAPH("4"));
  inst_open(&a, "b");
  ck_assert_int_eq(restore_bytes(&a, snap.p, snap.n), -1);
  ck_assert_msg(strstr(failure, "count") != NULL, "message: %s", failure);
  inst_close(&a, false);
  buf_release(&snap);
}
END_TEST

/* ---- FileSource ---- */

static char dir[64]; /* the test's temporary directory */
static char csv_path[128];

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  ck_assert_int_eq(fclose(f), 0);
}

static void make_dir(const char *text) {
  snprintf(dir, sizeof dir, "/tmp/sf-test-snapshot-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(csv_path, sizeof csv_path, "%s/in.csv", dir);
  write_file(csv_path, text);
}

static void remove_dir(void) {
  unlink(csv_path);
  ck_assert_int_eq(rmdir(dir), 0);
}

/* A BOM, a header, a field holding line breaks (rows and lines part ways), CRLF, blank lines and
 * a malformed row (skipped with onerror="skip"). 9 good rows. */
static const char ROWS[] = "\xEF\xBB\xBFk,s,d\n"
                           "1,one,0.5\n"
                           "2,\"two\nlines\",-0\n"
                           "3,\"x,\"\"y\"\"\",1e300\r\n"
                           "\n"
                           "4,four,0.1\n"
                           "5,,2\n"
                           "oops,bad,1\n"
                           "6,\"\n\n\",3\n"
                           "\n\n"
                           "7,seven,-1.5\n"
                           "8,eight,4\n"
                           "9,\"\",5\n";

static void use_filesource(const char *params) {
  char body[1024];
  snprintf(body, sizeof body,
           "<schema name=\"R\"><attr name=\"k\" type=\"int\"/><attr name=\"s\" type=\"string\"/>"
           "<attr name=\"d\" type=\"double\"/></schema>\n"
           "<operator name=\"fs\" kind=\"FileSource\"><output stream=\"A\" schema=\"R\"/>"
           "<param name=\"file\">%s</param>%s</operator>\n" SINK("A"),
           csv_path, params);
  use_graph(body);
}

START_TEST(test_filesource) {
  make_dir(ROWS);
  use_filesource("<param name=\"onerror\">skip</param>");
  char *full = run_source("fs", -1, NULL, NULL);
  char *warned = strdup(warnings.p);
  ck_assert_msg(strstr(warned, "in.csv:9:") != NULL, "the skipped row's warning: %s", warned);
  ck_assert_int_eq(nemitted, 9);
  for (int k = 0; k < 9; k++) {
    Buf snap;
    buf_init(&snap);
    free(run_source("fs", k, &snap, NULL));
    char *rest = run_source("fs", -1, NULL, &snap);
    char what[64];
    snprintf(what, sizeof what, "restored at %d", k);
    expect_text(rest, from_line(full, k), what);
    /* the skipped rows, counted before or after the checkpoint, are all warned about at the end */
    snprintf(what, sizeof what, "restored at %d: the warnings", k);
    expect_text(warnings.p ? warnings.p : "", warned, what);
    if (k == 4) check_bad_snapshots("fs", &snap);
    free(rest);
    buf_release(&snap);
  }
  free(warned);
  free(full);
  remove_dir();
}
END_TEST

/* Errors after a restore name the line they name in an uninterrupted run. */
START_TEST(test_filesource_error_lines) {
  make_dir("k,s,d\n1,\"a\nb\",1\n2,b,2\n3,c,x\n");
  use_filesource("");
  OpInst a;
  inst_open(&a, "fs");
  ck_assert_int_eq(a.impl->run(&a), -1);
  char *want = strdup(failure);
  ck_assert_msg(strstr(want, "in.csv:5: error: field 'd'") != NULL, "message: %s", want);
  inst_close(&a, false);
  Buf snap;
  buf_init(&snap);
  reset_output();
  inst_open(&a, "fs");
  snap_op = &a;
  snap_at = 1;
  snap_into = &snap;
  snapped = false;
  ck_assert_int_eq(a.impl->run(&a), -1);
  ck_assert(snapped);
  snap_op = NULL;
  inst_close(&a, false);
  reset_output();
  inst_open(&a, "fs");
  restore_ok(&a, &snap);
  ck_assert_int_eq(a.impl->run(&a), -1);
  ck_assert_str_eq(failure, want);
  ck_assert_int_eq(nemitted, 1);
  inst_close(&a, false);
  buf_release(&snap);
  free(want);
  remove_dir();
}
END_TEST

/* A followed file seeks like any other; the source ends on a drain. */
START_TEST(test_filesource_follow) {
  make_dir(ROWS);
  use_filesource("<param name=\"onerror\">skip</param><param name=\"follow\">yes</param>");
  Buf snap = check_source_cuts("fs", 9, true);
  buf_release(&snap);
  remove_dir();
}
END_TEST

/* A file shorter than the checkpoint's position is not the file it was. */
START_TEST(test_filesource_shorter) {
  make_dir(ROWS);
  use_filesource("<param name=\"onerror\">skip</param>");
  Buf snap;
  buf_init(&snap);
  free(run_source("fs", 8, &snap, NULL));
  write_file(csv_path, "k,s,d\n1,a,1\n");
  OpInst a;
  reset_output();
  inst_open(&a, "fs");
  ck_assert_int_eq(restore_bytes(&a, snap.p, snap.n), -1);
  ck_assert_msg(strstr(failure, "in.csv' has 12 bytes") != NULL, "message: %s", failure);
  inst_close(&a, false);
  buf_release(&snap);
  remove_dir();
}
END_TEST

/* A file holding other bytes before the checkpoint's position is not the file it was; a followed
 * one was truncated or replaced since: a warning, and it is read from its start (after its
 * header), the src going on. */
START_TEST(test_filesource_changed) {
  make_dir(ROWS);
  use_filesource("<param name=\"onerror\">skip</param>");
  Buf snap;
  buf_init(&snap);
  free(run_source("fs", 8, &snap, NULL));
  SnapIn in = {.p = (const unsigned char *)snap.p, .n = snap.n};
  uint64_t offset = snap_get_u64(&in);
  char *same_size = strdup(ROWS);
  *strstr(same_size, "seven") = 'S'; /* before row 9, the position */
  write_file(csv_path, same_size);
  OpInst a;
  reset_output();
  inst_open(&a, "fs");
  ck_assert_int_eq(restore_bytes(&a, snap.p, snap.n), -1);
  char want[512];
  snprintf(want, sizeof want,
           "cannot restore: '%s' holds other bytes before byte %llu, where the checkpoint was taken (not the same file?)",
           csv_path, (unsigned long long)offset);
  ck_assert_str_eq(failure, want);
  inst_close(&a, false);

  use_filesource("<param name=\"onerror\">skip</param><param name=\"follow\">yes</param>");
  for (int shorter = 0; shorter < 2; shorter++) {
    const char *now = shorter ? "k,s,d\n10,x,1\n" : same_size;
    write_file(csv_path, now);
    reset_output();
    drain_after = shorter ? 1 : 9;
    inst_open(&a, "fs");
    restore_ok(&a, &snap);
    if (shorter)
      snprintf(want, sizeof want,
               "fs: '%s' has 13 bytes, the checkpoint was taken at byte %llu: it was truncated or replaced since; "
               "reading it from its start\n", csv_path, (unsigned long long)offset);
    else
      snprintf(want, sizeof want,
               "fs: '%s' holds other bytes before byte %llu, where the checkpoint was taken: it was truncated or "
               "replaced since; reading it from its start\n", csv_path, (unsigned long long)offset);
    ck_assert_str_eq(warnings.p, want);
    ck_assert_msg(a.impl->run(&a) == 0, "run failed: %s", failure);
    inst_close(&a, true);
    if (shorter)
      ck_assert_str_eq(emitted.p, "000008 000008: 10,x,1\n");
    else /* the whole file again: its 9 rows, numbered on */
      ck_assert_msg(strstr(emitted.p, "000008 000008: 1,one,0.5\n") == emitted.p &&
                    strstr(emitted.p, "000016 000016: 9,,5\n"), "emitted: %s", emitted.p);
  }
  drain_after = -1;
  free(same_size);
  buf_release(&snap);
  remove_dir();
}
END_TEST

/* A source restored past line 2^31 (an endless input) counts on from there: its messages, its
 * skipped rows' warning and its next checkpoints name lines above INT32_MAX. */
START_TEST(test_filesource_line_64bit) {
  make_dir("k,s,d\n1,a,1\nbad,b,2\n3,c,x\n4,d,4\n");
  const int64_t line = INT64_C(3000000000);
  Buf snap; /* the position of row "1,a,1" (byte 6), as if it were on that line */
  buf_init(&snap);
  snap_u64(&snap, 6);
  snap_i64(&snap, line);
  snap_u64(&snap, 0);
  snap_u64(&snap, 0);
  snap_bytes(&snap, "", 0);
  snap_bytes(&snap, "", 0); /* no bytes before the position to compare */
  char want[512];
  OpInst a;
  use_filesource("");
  reset_output();
  inst_open(&a, "fs");
  restore_ok(&a, &snap);
  ck_assert_int_eq(a.impl->run(&a), -1);
  snprintf(want, sizeof want, "%s:3000000001: error: field 'k': 'bad' is not an int", csv_path);
  ck_assert_str_eq(failure, want);
  inst_close(&a, false);

  use_filesource("<param name=\"onerror\">skip</param>");
  Buf later;
  buf_init(&later);
  reset_output();
  inst_open(&a, "fs");
  restore_ok(&a, &snap);
  snap_op = &a;
  snap_at = 1; /* row "4,d,4", after the two skipped */
  snap_into = &later;
  snapped = false;
  ck_assert_msg(a.impl->run(&a) == 0, "run failed: %s", failure);
  ck_assert(snapped);
  snap_op = NULL;
  inst_close(&a, true);
  ck_assert_str_eq(emitted.p, "000000 000000: 1,a,1\n000001 000001: 4,d,4\n");
  snprintf(want, sizeof want,
           "fs: skipped 2 malformed rows of '%s' (the first: %s:3000000001: field 'k': 'bad' is not an int)\n", csv_path,
           csv_path);
  ck_assert_str_eq(warnings.p, want);
  SnapIn in = {.p = (const unsigned char *)later.p, .n = later.n};
  ck_assert_uint_eq(snap_get_u64(&in), 26);
  ck_assert_int_eq(snap_get_i64(&in), INT64_C(3000000003));
  buf_release(&later);
  buf_release(&snap);
  remove_dir();
}
END_TEST

/* Standard input cannot seek: checkpointable warns, a restore fails saying so. */
START_TEST(test_filesource_stdin) {
  make_dir(ROWS);
  int fd = open(csv_path, O_RDONLY);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
  close(fd);
  char body[1024];
  snprintf(body, sizeof body,
           "<schema name=\"R\"><attr name=\"k\" type=\"int\"/><attr name=\"s\" type=\"string\"/>"
           "<attr name=\"d\" type=\"double\"/></schema>\n"
           "<operator name=\"fs\" kind=\"FileSource\"><output stream=\"A\" schema=\"R\"/>"
           "<param name=\"file\">-</param><param name=\"onerror\">skip</param></operator>\n" SINK("A"));
  use_graph(body);
  OpInst a;
  Buf snap;
  buf_init(&snap);
  inst_open(&a, "fs");
  ck_assert_ptr_nonnull(a.impl->checkpointable);
  ck_assert_int_eq(a.impl->checkpointable(&a), 0);
  ck_assert_msg(strstr(warnings.p ? warnings.p : "", "fs: reads standard input") != NULL, "warned: %s", warnings.p);
  take_snapshot(&a, &snap);
  inst_close(&a, true);
  ck_assert_int_eq(lseek(STDIN_FILENO, 0, SEEK_SET), 0); /* the new instance reads the header again */
  inst_open(&a, "fs");
  ck_assert_int_eq(restore_bytes(&a, snap.p, snap.n), -1);
  ck_assert_msg(strstr(failure, "cannot restore a checkpoint of standard input") != NULL, "message: %s", failure);
  inst_close(&a, false);
  buf_release(&snap);
  remove_dir();
}
END_TEST

/* A FIFO cannot seek either. */
START_TEST(test_filesource_fifo) {
  snprintf(dir, sizeof dir, "/tmp/sf-test-snapshot-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(csv_path, sizeof csv_path, "%s/in.csv", dir);
  ck_assert_int_eq(mkfifo(csv_path, 0600), 0);
  int w = open(csv_path, O_RDWR | O_NONBLOCK); /* a writer for as long as the test runs */
  ck_assert_int_ge(w, 0);
  use_filesource("");
  const char header[] = "k,s,d\n";
  ck_assert_int_eq(write(w, header, sizeof header - 1), (ssize_t)sizeof header - 1);
  OpInst a;
  Buf snap;
  buf_init(&snap);
  inst_open(&a, "fs");
  ck_assert_int_eq(a.impl->checkpointable(&a), 0);
  ck_assert_msg(strstr(warnings.p ? warnings.p : "", "is not a regular file") != NULL, "warned: %s", warnings.p);
  take_snapshot(&a, &snap);
  inst_close(&a, true);
  ck_assert_int_eq(write(w, header, sizeof header - 1), (ssize_t)sizeof header - 1);
  inst_open(&a, "fs");
  ck_assert_int_eq(restore_bytes(&a, snap.p, snap.n), -1);
  ck_assert_msg(strstr(failure, "cannot seek") && strstr(failure, "FIFO"), "message: %s", failure);
  inst_close(&a, false);
  buf_release(&snap);
  close(w);
  unlink(csv_path);
  ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* ---- FileSink ----
 * A FileSink writing sink_dir/out/x.csv with checkpoints on: what it writes, what its snapshot
 * restores, and that a restore touches no file but the sink's own, whatever the snapshot says. */

/* sink_dir/rel (one of a few static buffers: valid for the next 7 calls). */
static const char *in_dir(const char *rel) {
  static char bufs[8][384];
  static int next;
  char *b = bufs[next++ % 8];
  snprintf(b, sizeof bufs[0], "%s%s%s", sink_dir, *rel ? "/" : "", rel);
  return b;
}

static void put_text(const char *rel, const char *text) {
  FILE *f = fopen(in_dir(rel), "w");
  ck_assert_msg(f != NULL, "cannot write %s", rel);
  fputs(text, f);
  fclose(f);
}

/* The bytes of sink_dir/rel ("(none)" when it cannot be read; a static buffer, like in_dir's). */
static const char *text_of(const char *rel) {
  static char bufs[4][4096];
  static int next;
  char *b = bufs[next++ % 4];
  int fd = open(in_dir(rel), O_RDONLY | O_NOFOLLOW);
  if (fd < 0) return strcpy(b, "(none)");
  ssize_t n = read(fd, b, sizeof bufs[0] - 1);
  close(fd);
  b[n < 0 ? 0 : n] = 0;
  return b;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in sink_dir/rel, hidden ones too, sorted, separated by spaces (static). */
static const char *listing_of(const char *rel) {
  static char out[4096];
  char *names[64];
  int n = 0;
  DIR *d = opendir(in_dir(rel));
  ck_assert_ptr_nonnull(d);
  struct dirent *e;
  while ((e = readdir(d)) && n < 64)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], by_name);
  out[0] = 0;
  for (int i = 0; i < n; i++) {
    if (i) strcat(out, " ");
    strcat(out, names[i]);
    free(names[i]);
  }
  return out;
}

/* A graph whose FileSink 'out' (with params) writes sink_dir/out/x.csv, with checkpoints on. */
static void use_sink(const char *params) {
  snprintf(sink_dir, sizeof sink_dir, "/tmp/sf-snapsink-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(sink_dir));
  ck_assert_int_eq(mkdir(in_dir("out"), 0755), 0);
  char body[4096];
  snprintf(body, sizeof body,
           IN_SCHEMA IN_SOURCE "<operator name=\"out\" kind=\"FileSink\"><input stream=\"A\"/>"
           "<param name=\"file\">%s</param>%s</operator>\n",
           in_dir("out/x.csv"), params);
  use_graph(body);
  options.checkpoint_dir = "ck";
}

/* Opens i for operator `name`: open's result (failure says why when -1). */
static int inst_try_open(OpInst *i, const char *name) {
  memset(i, 0, sizeof *i);
  i->op = graph_find_op(graph, name);
  ck_assert_ptr_nonnull(i->op);
  i->impl = rt_kind_impl(i->op->kind);
  i->in_schema = op_input_schema(i->op);
  i->graph_dir = ".";
  i->scratch = arena_new();
  int rc = i->impl->open(i);
  if (rc < 0) {
    arena_free(i->scratch);
    memset(i, 0, sizeof *i);
  }
  return rc;
}

static void sink_commit(OpInst *i) {
  finish(i);
  ck_assert_msg(i->impl->commit(i) == 0, "commit failed: %s", failure);
}

/* The files the other tools own, beside the sink's: their bytes must never change. */
static void put_bystanders(void) {
  put_text("evil.txt", "evil\n");
  put_text("victim.txt", "the victim's bytes\n");
  put_text("other.txt", "another tool's file\n");
}

static void expect_bystanders(void) {
  ck_assert_str_eq(text_of("evil.txt"), "evil\n");
  ck_assert_str_eq(text_of("victim.txt"), "the victim's bytes\n");
  ck_assert_str_eq(text_of("other.txt"), "another tool's file\n");
  ck_assert_str_eq(listing_of(""), "evil.txt other.txt out victim.txt");
}

/* Killed after a snapshot with two parts pre-committed and one open, restored: the parts are the
 * uninterrupted run's, byte for byte; whether the killed run had published the pre-committed
 * parts (their checkpoint had completed) or not. */
START_TEST(test_filesink_restore) {
  use_sink("<param name=\"roll\">tuples 3</param>");
  OpInst a, b;
  inst_open(&a, "out");
  feed(&a, 0, 11);
  sink_commit(&a);
  inst_close(&a, true);
  const char *parts = "x-000000.csv x-000001.csv x-000002.csv x-000003.csv";
  ck_assert_str_eq(listing_of("out"), parts);
  char *want[4];
  for (int k = 0; k < 4; k++) {
    char rel[64];
    snprintf(rel, sizeof rel, "out/x-%06d.csv", k);
    want[k] = strdup(text_of(rel));
    unlink(in_dir(rel));
  }
  ck_assert_int_eq(strncmp(want[0], "k,g,x,d\n", 8), 0);

  for (int published = 0; published <= 1; published++) {
    Buf snap;
    buf_init(&snap);
    options.restore = false;
    ckpt_complete = 0;
    inst_open(&a, "out");
    feed(&a, 0, 8); /* parts 0 and 1 closed, part 2 holds rows 6 and 7 */
    ckpt_taking = 4;
    take_snapshot(&a, &snap);
    if (published) ckpt_complete = 4; /* the next row publishes parts 0 and 1 */
    feed(&a, 8, 9);                   /* part 2 closes after the checkpoint */
    inst_close(&a, false);            /* the job fails: what checkpoint 4 names stays, hidden */
    ck_assert_str_eq(listing_of("out"), published ? ".x-000002.csv.sf-part x-000000.csv x-000001.csv"
                                                  : ".x-000000.csv.sf-part .x-000001.csv.sf-part .x-000002.csv.sf-part");
    options.restore = true;
    ckpt_complete = 0;
    inst_open(&b, "out");
    restore_ok(&b, &snap);
    ck_assert_str_eq(listing_of("out"), ".x-000002.csv.sf-part x-000000.csv x-000001.csv");
    feed(&b, 8, 11);
    sink_commit(&b);
    inst_close(&b, true);
    ck_assert_str_eq(listing_of("out"), parts);
    for (int k = 0; k < 4; k++) {
      char rel[64];
      snprintf(rel, sizeof rel, "out/x-%06d.csv", k);
      ck_assert_msg(!strcmp(text_of(rel), want[k]), "published %d: part %d differs", published, k);
      unlink(in_dir(rel));
    }
    buf_release(&snap);
  }
  for (int k = 0; k < 4; k++) free(want[k]);
}
END_TEST

/* One file (no roll, so no part is ever pending): killed after a snapshot, restored, the same
 * bytes as an uninterrupted run. */
START_TEST(test_filesink_restore_one_file) {
  use_sink("");
  OpInst a, b;
  inst_open(&a, "out");
  feed(&a, 0, 9);
  sink_commit(&a);
  inst_close(&a, true);
  char *want = strdup(text_of("out/x.csv"));
  unlink(in_dir("out/x.csv"));
  Buf snap;
  buf_init(&snap);
  inst_open(&a, "out");
  feed(&a, 0, 5);
  take_snapshot(&a, &snap);
  feed(&a, 5, 7);
  inst_close(&a, false);
  ck_assert_str_eq(listing_of("out"), ".x.csv.sf-part");
  options.restore = true;
  inst_open(&b, "out");
  restore_ok(&b, &snap);
  feed(&b, 5, 9);
  sink_commit(&b);
  inst_close(&b, true);
  ck_assert_str_eq(listing_of("out"), "x.csv");
  ck_assert_str_eq(text_of("out/x.csv"), want);
  free(want);
  buf_release(&snap);
}
END_TEST

/* The snapshot layout that named files by path (before format 2), with a recomputed CRC as an
 * attacker would write it: a pre-committed part 'evil.txt' to rename over 'victim.txt', and
 * 'other.txt' as the temporary file to cut to 0 bytes and rename onto the target at the commit. */
START_TEST(test_filesink_snapshot_paths_refused) {
  use_sink("");
  put_bystanders();
  put_text("out/x.csv", "the previous run's output\n");
  Buf b;
  buf_init(&b);
  snap_bool(&b, false);
  snap_u64(&b, 1); /* one pre-committed part: its temporary file, its name */
  snap_bytes(&b, in_dir("evil.txt"), strlen(in_dir("evil.txt")));
  snap_bytes(&b, in_dir("victim.txt"), strlen(in_dir("victim.txt")));
  snap_u64(&b, 0);
  snap_i64(&b, 0);
  snap_i64(&b, 0);
  snap_bool(&b, true); /* the file being written, cut to 0 bytes */
  snap_bytes(&b, in_dir("other.txt"), strlen(in_dir("other.txt")));
  snap_u64(&b, 0);
  options.restore = true;
  ckpt_taking = 6;
  OpInst a;
  inst_open(&a, "out");
  int rc = restore_bytes(&a, b.p, b.n);
  if (rc == 0) { /* the job goes on, and completes */
    feed(&a, 0, 3);
    sink_commit(&a);
  }
  inst_close(&a, rc == 0);
  expect_bystanders();
  ck_assert_str_eq(text_of("out/x.csv"), "the previous run's output\n");
  ck_assert_str_eq(listing_of("out"), "x.csv");
  ck_assert_int_eq(rc, -1);
  ck_assert_str_eq(failure, "its snapshot in checkpoint 6 does not fit this sf-exec (not FileSink snapshot format 2)");
  buf_release(&b);
}
END_TEST

/* A symbolic link or another hard link planted at the sink's fixed temporary name is never written
 * through, on a fresh start or a restore: the open fails and the file it leads to keeps its bytes. */
START_TEST(test_filesink_planted_links) {
  use_sink("");
  put_bystanders();
  for (int restore = 0; restore <= 1; restore++) {
    for (int hard = 0; hard <= 1; hard++) {
      options.restore = restore;
      reset_output();
      ck_assert_int_eq((hard ? link : symlink)(in_dir("victim.txt"), in_dir("out/.x.csv.sf-part")), 0);
      OpInst a;
      int rc = inst_try_open(&a, "out");
      if (rc == 0) { /* the job runs and fails */
        feed(&a, 0, 3);
        finish(&a);
        inst_close(&a, false);
      }
      ck_assert_str_eq(text_of("victim.txt"), "the victim's bytes\n");
      ck_assert_int_eq(rc, -1);
      char want[1024];
      snprintf(want, sizeof want, "cannot create a temporary file in '%s' for '%s': '%s' %s", in_dir("out"),
               in_dir("out/x.csv"), in_dir("out/.x.csv.sf-part"),
               hard ? "has another link" : "is a symbolic link");
      ck_assert_str_eq(failure, want);
      ck_assert_int_eq(unlink(in_dir("out/.x.csv.sf-part")), 0);
      expect_bystanders();
      ck_assert_str_eq(listing_of("out"), "");
    }
  }
}
END_TEST

/* A FileSink's snapshot, format 2 (filesink.c), as an attacker with a recomputed CRC may write it:
 * pend holds npend pairs of a part number and its size. */
static void sink_snapshot(Buf *b, const char *file, bool direct, uint64_t nparts, int npend, const uint64_t *pend,
                          int64_t tuples, int64_t bytes, bool open_file, uint64_t len) {
  buf_reset(b);
  snap_u64(b, 2);
  snap_bytes(b, file, strlen(file));
  snap_bool(b, direct);
  if (direct) return;
  snap_u64(b, nparts);
  snap_u64(b, (uint64_t)npend);
  for (int i = 0; i < 2 * npend; i++) snap_u64(b, pend[i]);
  snap_i64(b, tuples);
  snap_i64(b, bytes);
  snap_bool(b, open_file);
  if (open_file) snap_u64(b, len);
}

static uint64_t size_of(const char *rel) {
  struct stat st;
  ck_assert_int_eq(lstat(in_dir(rel), &st), 0);
  return (uint64_t)st.st_size;
}

/* A snapshot that does not fit the sink (another file, parts that cannot be, sizes its files do
 * not have, a link planted at its file's name) is refused, naming the checkpoint, before any
 * file is touched; the sink's own files stay as the checkpoint left them, and the genuine
 * snapshot restores afterwards. */
START_TEST(test_filesink_snapshot_misfits_refused) {
  use_sink("<param name=\"roll\">tuples 3</param>");
  put_bystanders();
  OpInst a;
  Buf genuine, b;
  buf_init(&genuine);
  buf_init(&b);
  inst_open(&a, "out");
  feed(&a, 0, 8); /* parts 0 and 1 closed, part 2 holds rows 6 and 7 */
  ckpt_taking = 6;
  take_snapshot(&a, &genuine);
  inst_close(&a, false);
  const char *left = ".x-000000.csv.sf-part .x-000001.csv.sf-part .x-000002.csv.sf-part";
  ck_assert_str_eq(listing_of("out"), left);
  char *was[3];
  uint64_t size[3];
  for (int k = 0; k < 3; k++) {
    char rel[64];
    snprintf(rel, sizeof rel, "out/.x-%06d.csv.sf-part", k);
    was[k] = strdup(text_of(rel));
    size[k] = size_of(rel);
  }
  uint64_t pend[] = {0, size[0], 1, size[1]};
  const char *target = strdup(in_dir("out/x.csv"));
  sink_snapshot(&b, target, false, 3, 2, pend, 2, (int64_t)size[2], true, size[2]);
  ck_assert_msg(b.n == genuine.n && !memcmp(b.p, genuine.p, b.n), "the test's layout is not the sink's");

  char other_link[256];
  snprintf(other_link, sizeof other_link, "out/.x-000002.csv.sf-part");
  static const struct {
    const char *what; /* the change */
    const char *want; /* the failure, with %1$s for the target and %2$s for the directory */
  } cases[] = {
    {"file", "its snapshot in checkpoint 6 was taken for another file than '%1$s'"},
    {"direct", "its snapshot in checkpoint 6 was taken while '%1$s' was a device or pipe"},
    {"no part", "its snapshot in checkpoint 6 does not fit this sink (it has no part, or too many)"},
    {"never closed", "its snapshot in checkpoint 6 does not fit this sink (it pre-committed parts that were never closed)"},
    {"not the last", "its snapshot in checkpoint 6 does not fit this sink (its pre-committed parts are not the last ones closed)"},
    {"length", "its snapshot in checkpoint 6 does not fit this sink (its open part's length is not its size)"},
    {"part size", "cannot restore checkpoint 6: its part '%2$s/out/.x-000001.csv.sf-part' holds %3$llu bytes, the checkpoint says %4$llu"},
    {"file size", "cannot restore checkpoint 6: its file '%2$s/out/.x-000002.csv.sf-part' holds %5$llu bytes, the "
                  "checkpoint needs %6$llu"},
    {"symlink", "cannot restore checkpoint 6: its file for '%2$s/out/x-000002.csv': '%2$s/out/.x-000002.csv.sf-part' is a "
                "symbolic link"},
  };
  options.restore = true;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const char *w = cases[c].what;
    uint64_t big_pend[] = {0, size[0], 1, size[1] + 1};
    if (!strcmp(w, "file")) sink_snapshot(&b, in_dir("other.txt"), false, 3, 2, pend, 2, (int64_t)size[2], true, size[2]);
    if (!strcmp(w, "direct")) sink_snapshot(&b, target, true, 0, 0, NULL, 0, 0, false, 0);
    if (!strcmp(w, "no part")) sink_snapshot(&b, target, false, 0, 0, NULL, 0, 0, false, 0);
    if (!strcmp(w, "never closed")) sink_snapshot(&b, target, false, 2, 2, pend, 2, (int64_t)size[2], true, size[2]);
    if (!strcmp(w, "not the last")) sink_snapshot(&b, target, false, 4, 2, pend, 2, (int64_t)size[2], true, size[2]);
    if (!strcmp(w, "length")) sink_snapshot(&b, target, false, 3, 2, pend, 2, (int64_t)size[2], true, size[2] - 1);
    if (!strcmp(w, "part size")) sink_snapshot(&b, target, false, 3, 2, big_pend, 2, (int64_t)size[2], true, size[2]);
    if (!strcmp(w, "file size"))
      sink_snapshot(&b, target, false, 3, 2, pend, 2, (int64_t)size[2] + 10, true, size[2] + 10);
    if (!strcmp(w, "symlink")) { /* the part's file moved aside, a link to the victim in its place */
      sink_snapshot(&b, target, false, 3, 2, pend, 2, (int64_t)size[2], true, size[2]);
      ck_assert_int_eq(rename(in_dir(other_link), in_dir("aside")), 0);
      ck_assert_int_eq(symlink(in_dir("victim.txt"), in_dir(other_link)), 0);
    }
    reset_output();
    inst_open(&a, "out");
    int rc = restore_bytes(&a, b.p, b.n);
    inst_close(&a, false);
    if (!strcmp(w, "symlink")) {
      ck_assert_int_eq(unlink(in_dir(other_link)), 0);
      ck_assert_int_eq(rename(in_dir("aside"), in_dir(other_link)), 0);
    }
    char want[1024];
    snprintf(want, sizeof want, cases[c].want, target, sink_dir, (unsigned long long)size[1],
             (unsigned long long)size[1] + 1, (unsigned long long)size[2], (unsigned long long)size[2] + 10);
    ck_assert_msg(rc == -1, "%s: restored", w);
    ck_assert_msg(!strcmp(failure, want), "%s: the message is\n  %s\nnot\n  %s", w, failure, want);
    expect_bystanders();
    ck_assert_msg(!strcmp(listing_of("out"), left), "%s: out/ holds %s", w, listing_of("out"));
    for (int k = 0; k < 3; k++) {
      char rel[64];
      snprintf(rel, sizeof rel, "out/.x-%06d.csv.sf-part", k);
      ck_assert_msg(!strcmp(text_of(rel), was[k]), "%s: %s changed", w, rel);
    }
  }
  /* the genuine one still restores, and the job completes */
  reset_output();
  inst_open(&a, "out");
  restore_ok(&a, &genuine);
  feed(&a, 8, 11);
  sink_commit(&a);
  inst_close(&a, true);
  ck_assert_str_eq(listing_of("out"), "x-000000.csv x-000001.csv x-000002.csv x-000003.csv");
  expect_bystanders();
  for (int k = 0; k < 3; k++) free(was[k]);
  free((char *)target);
  buf_release(&b);
  buf_release(&genuine);
}
END_TEST

/* The generic checks: a cut or extended snapshot fails with a message about it, a flipped byte
 * restores or fails, never crashes. */
START_TEST(test_filesink_bad_snapshots) {
  use_sink("<param name=\"roll\">tuples 3</param>");
  OpInst a;
  Buf snap;
  buf_init(&snap);
  inst_open(&a, "out");
  feed(&a, 0, 8);
  take_snapshot(&a, &snap);
  inst_close(&a, false);
  options.restore = true;
  check_bad_snapshots("out", &snap);
  buf_release(&snap);
}
END_TEST

/* ---- SocketSource ---- */

START_TEST(test_socketsource_checkpointable) {
  use_graph("<schema name=\"R\"><attr name=\"k\" type=\"int\"/></schema>\n"
            "<operator name=\"sock\" kind=\"SocketSource\"><output stream=\"A\" schema=\"R\"/>"
            "<param name=\"listen\">127.0.0.1:1</param></operator>\n" SINK("A"));
  OpInst a;
  memset(&a, 0, sizeof a);
  a.op = graph_find_op(graph, "sock");
  a.impl = rt_kind_impl(a.op->kind);
  ck_assert_ptr_nonnull(a.impl->checkpointable);
  ck_assert_int_eq(a.impl->checkpointable(&a), 0);
  ck_assert_msg(strstr(warnings.p ? warnings.p : "", "sock: ") && strstr(warnings.p, "at-most-once"), "warned: %s",
                warnings.p);
  ck_assert_ptr_null(a.impl->snapshot);
}
END_TEST

/* ---- stateless kinds ---- */

START_TEST(test_stateless_kinds) {
  static const OpKind kinds[] = {KIND_FILTER, KIND_WORK, KIND_FLATMAP};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    const OpKindImpl *impl = rt_kind_impl(kinds[k]);
    ck_assert_ptr_nonnull(impl);
    ck_assert_ptr_null(impl->snapshot);
    ck_assert_ptr_null(impl->restore);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("snapshot");
  UNIT_ADD_TIMEOUT(s, test_dedup, setup, teardown, 60);
  UNIT_ADD(s, test_keytable_channel_keys, setup, teardown);
  UNIT_ADD(s, test_split_runs, setup, teardown);
  UNIT_ADD(s, test_split_keep_pulse_after_tick, setup, teardown);
  UNIT_ADD(s, test_rewidth_dedup, setup, teardown);
  UNIT_ADD(s, test_rewidth_owns_nothing, setup, teardown);
  UNIT_ADD_TIMEOUT(s, test_functor_per_key, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_functor_one_state, setup, teardown, 60);
  UNIT_ADD(s, test_functor_stateless, setup, teardown);
  UNIT_ADD(s, test_rewidth_functor, setup, teardown);
  UNIT_ADD_TIMEOUT(s, test_aggregate_tumbling, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_aggregate_sliding, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_aggregate_sliding_long, setup, teardown, 60);
  UNIT_ADD(s, test_aggregate_other_window, setup, teardown);
  UNIT_ADD(s, test_rewidth_aggregate, setup, teardown);
  UNIT_ADD(s, test_aggregate_time_windows, setup, teardown);
  UNIT_ADD(s, test_aggregate_running, setup, teardown);
  UNIT_ADD(s, test_aggregate_time_memory_limit, setup, teardown);
  UNIT_ADD(s, test_restore_key_twice, setup, teardown);
  UNIT_ADD_TIMEOUT(s, test_beacon, setup, teardown, 60);
  UNIT_ADD(s, test_beacon_end, setup, teardown);
  UNIT_ADD_TIMEOUT(s, test_filesource, setup, teardown, 60);
  UNIT_ADD(s, test_filesource_error_lines, setup, teardown);
  UNIT_ADD_TIMEOUT(s, test_filesource_follow, setup, teardown, 60);
  UNIT_ADD(s, test_filesource_shorter, setup, teardown);
  UNIT_ADD(s, test_filesource_line_64bit, setup, teardown);
  UNIT_ADD(s, test_filesource_changed, setup, teardown);
  UNIT_ADD(s, test_filesource_stdin, setup, teardown);
  UNIT_ADD(s, test_filesource_fifo, setup, teardown);
  UNIT_ADD(s, test_filesink_restore, setup, teardown);
  UNIT_ADD(s, test_filesink_restore_one_file, setup, teardown);
  UNIT_ADD(s, test_filesink_snapshot_paths_refused, setup, teardown);
  UNIT_ADD(s, test_filesink_planted_links, setup, teardown);
  UNIT_ADD(s, test_filesink_snapshot_misfits_refused, setup, teardown);
  UNIT_ADD(s, test_filesink_bad_snapshots, setup, teardown);
  UNIT_ADD(s, test_socketsource_checkpointable, setup, teardown);
  UNIT_ADD(s, test_stateless_kinds, setup, teardown);
  return unit_run(s);
}
