/* test_custom.c: the Custom kind's side of op.h's versions and of checkpoints (rt/ops/custom.c):
 * a version-1 operator still loads and runs, an unknown version is refused, a version-2 operator's
 * snapshot restored into a fresh instance carries on exactly where the first stopped (also when
 * the snapshots of several instances are merged into one, as after a change of width, and for a
 * source, whose snapshot is taken inside sf_emit), and checkpointable refuses an operator that
 * keeps state but cannot save it.
 *
 * The checkpoint machinery of the executor is not needed: each test drives op_custom's callbacks
 * itself on one operator of a checked graph, the way the executor would, with a hand-made executor
 * (exec_priv.h) whose only edge delivers the operator's output to a capturing kind. Libraries:
 * graphs/ops/sf_example_ops.c (sf_sessionize, version 2 with snapshot and restore) and
 * tests/ops (sf_copies, exported as a version-1 struct; sf_count, a version-4 source, also exported
 * as version 2's and 3's structs, sf_count_v2 and sf_count_v3; sf_count_nosnap; sf_jitter
 * without the callbacks; sf_abi_future, version 5; sf_describe and sf_pick, version 4's schema
 * functions and sf_copy_attrs; sf_reverse and sf_keep_misuse, version 4's kept tuples). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_helper.h"
#include "exec_priv.h"
#include "ops/custom_priv.h"
#include "op.h"
#include "rt.h"
#include "sf.h"

/* where the example and test operator libraries are built */
#define LIB_DIR SF_BINARY_DIR "/lib/streamfission"

/* ---- a Custom operator driven by hand ---- */

/* One Custom operator of a checked graph, run by hand: its output goes to `sink`, whose kind
 * (capture_kind) writes every item it gets into `got`, one line each. */
typedef struct Run {
  Graph *g;
  ExecOptions o;
  Exec x;
  Node node;      /* the Custom operator */
  Node sink;      /* what receives its output */
  Edge edge;      /* node -> sink, delivered at once */
  void *edge_ptr; /* the edge, as node's one output port lists it */
  PtrVec outs[1]; /* node's output ports */
  char *logtext;  /* what the executor logged */
  size_t loglen;
  Buf got;        /* the items the sink received: "src=N (v=...)" lines, "window" */
  bool opened;    /* op_custom.open succeeded: close it */
  uint64_t seq;   /* next input tuple's seq and src */
  /* a source's snapshot: taken when the sink gets the tuple whose src is snap_at, before it is
   * recorded (in the executor, just before it is emitted: the same state) */
  int64_t snap_at; /* -1: none */
  Buf *snap_into;  /* where */
} Run;

static int capture_process(OpInst *inst, int port, Tuple *t) {
  Run *r = inst->state;
  if (r->snap_at >= 0 && inst->cur_src == (uint64_t)r->snap_at) {
    ck_assert_int_eq(op_custom.snapshot(&r->node.inst, r->snap_into), 0);
    buf_puts(&r->got, "snapshot\n");
  }
  char d[512];
  tuple_describe(t, inst->in_schema, d, sizeof d);
  char line[600];
  snprintf(line, sizeof line, "src=%llu %s\n", (unsigned long long)inst->cur_src, d);
  buf_puts(&r->got, line);
  tuple_unref(t);
  return 0;
}

static int capture_window(OpInst *inst, int port) {
  Run *r = inst->state;
  buf_puts(&r->got, "window\n");
  return 0;
}

static const OpKindImpl capture_kind = { .process = capture_process, .window = capture_window };

/* Sets up r for operator `name` of the graph in text (a Custom operator whose output, if any, goes
 * to an operator named "out") and opens it: true when op_custom.open succeeded. */
static bool run_open(Run *r, const char *text, const char *name) {
  memset(r, 0, sizeof *r);
  r->g = unit_graph_text(text);
  r->snap_at = -1;
  buf_init(&r->got);
  FILE *log = open_memstream(&r->logtext, &r->loglen);
  ck_assert_ptr_nonnull(log);
  r->o.log = log;
  r->x.g = r->g;
  r->x.o = &r->o;
  r->x.log = log;
  r->x.arena = arena_new();
  r->x.stop_pipe[0] = r->x.stop_pipe[1] = -1;
  pthread_mutex_init(&r->x.fail_mu, NULL);
  Op *op = graph_find_op(r->g, name), *out = graph_find_op(r->g, "out");
  ck_assert_ptr_nonnull(op);
  r->node.op = op;
  r->node.local = true;
  r->node.nslots = op->ninputs;
  r->node.inst = (OpInst){ .op = op, .impl = &op_custom, .in_schema = op_input_schema(op),
                           .out_schema = op_output_schema(op), .exec = &r->x, .graph_dir = LIB_DIR,
                           .exec_data = &r->node, .scratch = arena_new() };
  r->node.outs = r->outs;
  if (out) {
    r->sink.op = out;
    r->sink.local = true;
    r->sink.nslots = 1;
    r->sink.finals_left = 1;
    r->sink.inst = (OpInst){ .op = out, .impl = &capture_kind, .in_schema = op_input_schema(out), .state = r,
                             .exec = &r->x, .exec_data = &r->sink, .scratch = arena_new() };
    r->edge = (Edge){ .kind = EDGE_DIRECT, .from = &r->node, .to = &r->sink, .to_op = out };
    r->edge_ptr = &r->edge;
    r->outs[0] = (PtrVec){ .items = &r->edge_ptr, .n = 1, .cap = 1 };
  }
  r->opened = op_custom.open(&r->node.inst) == 0;
  return r->opened;
}

/* The job's failure message ("" when none). */
static const char *run_failure(Run *r) {
  return atomic_load(&r->x.failed) ? r->x.message : "";
}

/* Asserts that nothing failed. */
static void run_ok(Run *r) {
  ck_assert_msg(!atomic_load(&r->x.failed), "the job failed: %s", r->x.message);
}

/* Hands the operator an input tuple of n values. */
static void run_tuple(Run *r, const Value *vals, int n) {
  r->node.inst.cur_seq = r->node.inst.cur_src = r->seq++;
  ck_assert_int_eq(op_custom.process(&r->node.inst, 0, tuple_new(vals, n)), 0);
}

/* The final punctuation; it comes after input tuple `last` (-1: a source, which is run first, as
 * the executor does: it emits its stream there). */
static void run_final(Run *r, int64_t last) {
  if (last >= 0) r->node.inst.cur_seq = r->node.inst.cur_src = (uint64_t)last;
  else ck_assert_int_eq(op_custom.run(&r->node.inst), 0);
  ck_assert_int_eq(op_custom.final(&r->node.inst), 0);
}

/* A snapshot of the operator, appended to out. */
static void run_snapshot(Run *r, Buf *out) {
  ck_assert_int_eq(op_custom.snapshot(&r->node.inst, out), 0);
}

/* Restores the snapshot in b: op_custom.restore's result. */
static int run_restore(Run *r, const Buf *b) {
  SnapIn in = { .p = (const unsigned char *)b->p, .n = b->n };
  return op_custom.restore(&r->node.inst, &in);
}

/* Closes the operator and frees r; returns what the sink got (malloc'd). */
static char *run_close(Run *r) {
  if (r->opened) op_custom.close(&r->node.inst, !atomic_load(&r->x.failed));
  fclose(r->o.log);
  free(r->logtext);
  arena_free(r->node.inst.scratch);
  if (r->sink.inst.scratch) arena_free(r->sink.inst.scratch);
  arena_free(r->x.arena);
  pthread_mutex_destroy(&r->x.fail_mu);
  graph_free(r->g);
  char *got = strdup(r->got.p ? r->got.p : "");
  buf_release(&r->got);
  return got;
}

/* ---- graphs ---- */

#define HEAD "<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
#define SRC(schema) \
  "  <operator name='src' kind='FileSource'><output stream='A' schema='" schema "'/>" \
  "<param name='file'>in.csv</param><param name='format'>csv</param></operator>\n"
#define OUT(stream) "  <operator name='out' kind='FileSink'><input stream='" stream "'/><param name='file'>out.csv</param></operator>\n"
#define TAIL "</graph>\n"

/* schema T (v int, k string) through Custom operator c: <model> and <library> as given */
#define T_SCHEMA "  <schema name='T'><attr name='v' type='int'/><attr name='k' type='string'/></schema>\n"
#define T_GRAPH(model, symbol)                                                                               \
  HEAD T_SCHEMA SRC("T") "  <operator name='c' kind='Custom'><input stream='A'/><output stream='B' schema='T'/>" \
  model "<library path='libsf_test_ops.so' symbol='" symbol "'/></operator>\n" OUT("B") TAIL
#define MODEL_NONE "<model state='none' selectivity='one' forwards='*'/>"
#define MODEL_KEYED "<model state='partitioned' keys='k' selectivity='one' forwards='*'/>"
/* sf_copies emits two copies of one input: its model must say so (a declared model is checked) */
#define MODEL_COPIES "<model state='none' selectivity='many' forwards='*'/>"

/* a Custom source `gen` emitting schema U (v int) */
#define U_SCHEMA "  <schema name='U'><attr name='v' type='int'/></schema>\n"
#define SOURCE_GRAPH(symbol, n)                                                                           \
  HEAD U_SCHEMA "  <operator name='gen' kind='Custom'><output stream='A' schema='U'/><param name='n'>" n \
  "</param><library path='libsf_test_ops.so' symbol='" symbol "'/></operator>\n" OUT("A") TAIL

/* sf_sessionize, keyed on user, emitting what is open at the end (atEnd="emit") */
static const char sessionize_graph[] =
    HEAD "  <schema name='Click'><attr name='user' type='string'/><attr name='ts' type='int'/>"
         "<attr name='page' type='string'/></schema>\n"
         "  <schema name='Session'><attr name='user' type='string'/><attr name='startTs' type='int'/>"
         "<attr name='endTs' type='int'/><attr name='clicks' type='int'/></schema>\n" SRC("Click")
         "  <operator name='sess' kind='Custom'><input stream='A'/><output stream='B' schema='Session'/>\n"
         "    <param name='gap'>10</param><param name='minClicks'>2</param><param name='atEnd'>emit</param>\n"
         "    <model state='partitioned' keys='user' selectivity='atmostone' forwards='user' punct='none' "
         "final='emits'/>\n"
         "    <library path='libsf_example_ops.so' symbol='sf_sessionize'/>\n"
         "  </operator>\n" OUT("B") TAIL;

typedef struct Click {
  const char *user;
  int64_t ts;
} Click;

/* sessions closed along the way, and some still open at the end */
static const Click clicks[] = {
  {"a", 0},  {"b", 1},  {"a", 5},  {"b", 30}, {"a", 16}, {"a", 26}, {"b", 35}, {"c", 40},
  {"b", 100}, {"a", 37}, {"x,y", 50}, {"x,y", 55}, {"x,y", 70}, {"c", 41}, {"c", 45}, {"a", 44},
};
enum { NCLICKS = sizeof clicks / sizeof clicks[0] };

static void send_click(Run *r, int i) {
  Value v[3] = { value_string(clicks[i].user, strlen(clicks[i].user)), value_int(clicks[i].ts),
                 value_string("/p", 2) };
  run_tuple(r, v, 3);
}

/* The uninterrupted run's output, and in *at_k its length after the first k clicks. */
static char *sessions_uninterrupted(int k, size_t *at_k) {
  Run r;
  ck_assert(run_open(&r, sessionize_graph, "sess"));
  for (int i = 0; i < NCLICKS; i++) {
    if (i == k) *at_k = r.got.n;
    send_click(&r, i);
  }
  if (k == NCLICKS) *at_k = r.got.n;
  run_final(&r, NCLICKS - 1);
  run_ok(&r);
  return run_close(&r);
}

/* ---- versions ---- */

/* sf_copies is exported as op.h ABI version 1's struct (shorter than version 2's): it loads and
 * runs, and as a stateless operator it can take part in checkpoints (its snapshot saves nothing of
 * the library's and restores into a fresh instance). */
START_TEST(version_1_loads) {
  Run r;
  ck_assert(run_open(&r, T_GRAPH(MODEL_COPIES "<param name='at'>2</param>", "sf_copies"), "c"));
  ck_assert_int_eq(op_custom.checkpointable(&r.node.inst), 0);
  for (int i = 0; i < 4; i++) {
    Value v[2] = { value_int(i), value_string("k", 1) };
    run_tuple(&r, v, 2);
  }
  Buf snap;
  buf_init(&snap);
  run_snapshot(&r, &snap);
  run_ok(&r);
  char *got = run_close(&r);
  ck_assert_str_eq(got, "src=0 (v=0, k=\"k\")\nsrc=1 (v=1, k=\"k\")\nsrc=2 (v=2, k=\"k\")\nsrc=2 (v=2, k=\"k\")\n"
                        "src=3 (v=3, k=\"k\")\n");
  free(got);

  ck_assert(run_open(&r, T_GRAPH(MODEL_COPIES "<param name='at'>2</param>", "sf_copies"), "c"));
  ck_assert_int_eq(run_restore(&r, &snap), 0);
  r.seq = 4;
  Value v[2] = { value_int(2), value_string("z", 1) };
  run_tuple(&r, v, 2);
  run_final(&r, 4);
  run_ok(&r);
  got = run_close(&r);
  ck_assert_str_eq(got, "src=4 (v=2, k=\"z\")\nsrc=4 (v=2, k=\"z\")\n");
  free(got);
  buf_release(&snap);
}
END_TEST

/* An abi_version this sf-exec does not know fails open, naming the versions it supports. */
START_TEST(unknown_version_refused) {
  Run r;
  ck_assert(!run_open(&r, SOURCE_GRAPH("sf_abi_future", "3"), "gen"));
  ck_assert_str_eq(run_failure(&r), "operator 'gen': 'sf_abi_future' in library 'libsf_test_ops.so' was built for "
                                    "op.h ABI version 5, this sf-exec supports versions 1, 2, 3 and 4");
  free(run_close(&r));
}
END_TEST

/* A source emits its whole stream from its final punctuation (rt/op.h): with a declared model
 * that says nothing of final emits, that is the source's job, not a broken promise. */
#define SOURCE_GRAPH_MODEL(symbol, n, model)                                                              \
  HEAD U_SCHEMA "  <operator name='gen' kind='Custom'><output stream='A' schema='U'/><param name='n'>" n \
  "</param>" model "<library path='libsf_test_ops.so' symbol='" symbol "'/></operator>\n" OUT("A") TAIL

START_TEST(source_with_model_emits_at_final) {
  static const char *models[] = { "<model state='none' selectivity='one'/>", "<model state='none'/>",
                                  "<model state='none' final='none'/>" };
  static const char *graphs[] = {
    SOURCE_GRAPH_MODEL("sf_count", "3", "<model state='none' selectivity='one'/>"),
    SOURCE_GRAPH_MODEL("sf_count", "3", "<model state='none'/>"),
    SOURCE_GRAPH_MODEL("sf_count", "3", "<model state='none' final='none'/>"),
  };
  for (size_t i = 0; i < sizeof graphs / sizeof *graphs; i++) {
    Run r;
    ck_assert(run_open(&r, graphs[i], "gen"));
    run_final(&r, -1);
    ck_assert_msg(!atomic_load(&r.x.failed), "%s: %s", models[i], run_failure(&r));
    char *got = run_close(&r);
    ck_assert_msg(strstr(got, "src=2 ") != NULL, "%s: got %s", models[i], got);
    free(got);
  }
}
END_TEST

/* ---- snapshot and restore ---- */

/* sf_sessionize stopped after any number k of clicks: a snapshot restored into a fresh instance,
 * fed the remaining clicks, emits exactly what the uninterrupted run emitted after the k-th (the
 * sessions still open at the end included). */
START_TEST(version_2_restore_continues) {
  for (int k = 0; k <= NCLICKS; k++) {
    size_t at_k = 0;
    char *whole = sessions_uninterrupted(k, &at_k);
    Run r;
    ck_assert(run_open(&r, sessionize_graph, "sess"));
    ck_assert_int_eq(op_custom.checkpointable(&r.node.inst), 0);
    for (int i = 0; i < k; i++) send_click(&r, i);
    Buf snap;
    buf_init(&snap);
    run_snapshot(&r, &snap);
    run_ok(&r);
    char *before = run_close(&r);
    ck_assert_uint_eq(strlen(before), at_k);
    ck_assert_int_eq(strncmp(before, whole, at_k), 0);

    ck_assert(run_open(&r, sessionize_graph, "sess"));
    ck_assert_int_eq(run_restore(&r, &snap), 0);
    r.seq = (uint64_t)k;
    for (int i = k; i < NCLICKS; i++) send_click(&r, i);
    run_final(&r, NCLICKS - 1);
    run_ok(&r);
    char *after = run_close(&r);
    ck_assert_msg(!strcmp(after, whole + at_k), "cut after %d clicks: restored run emitted\n%s\nexpected\n%s", k,
                  after, whole + at_k);
    free(before);
    free(after);
    free(whole);
    buf_release(&snap);
  }
}
END_TEST

/* After a change of width an instance is given the snapshots of every old instance: two instances
 * that each had some of the users (as a split on user routes them), merged into one, carry on like
 * the uninterrupted run. */
START_TEST(version_2_restore_merges) {
  for (int k = 0; k <= NCLICKS; k++) {
    size_t at_k = 0;
    char *whole = sessions_uninterrupted(k, &at_k);
    Buf snaps[2];
    for (int c = 0; c < 2; c++) {
      Run r;
      ck_assert(run_open(&r, sessionize_graph, "sess"));
      for (int i = 0; i < k; i++)
        if ((clicks[i].user[0] == 'b') == (c == 1)) send_click(&r, i);
      buf_init(&snaps[c]);
      run_snapshot(&r, &snaps[c]);
      run_ok(&r);
      free(run_close(&r));
    }
    Run r;
    ck_assert(run_open(&r, sessionize_graph, "sess"));
    ck_assert_int_eq(run_restore(&r, &snaps[1]), 0);
    ck_assert_int_eq(run_restore(&r, &snaps[0]), 0);
    r.seq = (uint64_t)k;
    for (int i = k; i < NCLICKS; i++) send_click(&r, i);
    run_final(&r, NCLICKS - 1);
    run_ok(&r);
    char *after = run_close(&r);
    ck_assert_msg(!strcmp(after, whole + at_k), "cut after %d clicks: merged run emitted\n%s\nexpected\n%s", k,
                  after, whole + at_k);
    free(after);
    free(whole);
    for (int c = 0; c < 2; c++) buf_release(&snaps[c]);
  }
}
END_TEST

/* A source's snapshot is taken inside sf_emit, just before a tuple leaves: the restored source
 * emits that tuple first, with the same src, and goes on; the same of the version-2 and version-3
 * structs of the same source. */
static const char *const count_graphs[] = { SOURCE_GRAPH("sf_count", "5"), SOURCE_GRAPH("sf_count_v2", "5"),
                                            SOURCE_GRAPH("sf_count_v3", "5") };

START_TEST(source_snapshot_inside_emit) {
  for (int i = 0; i < 15; i++) {
    const char *graph = count_graphs[i / 5];
    int at = i % 5;
    Run r;
    ck_assert(run_open(&r, graph, "gen"));
    ck_assert_int_eq(op_custom.checkpointable(&r.node.inst), 0);
    Buf snap;
    buf_init(&snap);
    r.snap_at = at;
    r.snap_into = &snap;
    run_final(&r, -1);
    run_ok(&r);
    char *first = run_close(&r);
    const char *mark = strstr(first, "snapshot\n");
    ck_assert_ptr_nonnull(mark);
    ck_assert(run_open(&r, graph, "gen"));
    ck_assert_int_eq(run_restore(&r, &snap), 0);
    run_final(&r, -1);
    run_ok(&r);
    char *second = run_close(&r);
    ck_assert_str_eq(second, mark + strlen("snapshot\n"));
    char want[32];
    snprintf(want, sizeof want, "src=%d (v=%d)\n", at, at);
    ck_assert_int_eq(strncmp(second, want, strlen(want)), 0);
    free(first);
    free(second);
    buf_release(&snap);
  }
}
END_TEST

/* sf_window_counts (keys in the order of their first tuple, the number of windows) cut after any
 * number of items, tuples and window punctuation ('|'), carries on identically too. */
static const char window_counts_graph[] =
    HEAD "  <schema name='K'><attr name='user' type='string'/></schema>\n"
         "  <schema name='Count'><attr name='user' type='string'/><attr name='count' type='int'/>"
         "<attr name='window' type='int'/></schema>\n" SRC("K")
         "  <operator name='counts' kind='Custom'><input stream='A'/><output stream='B' schema='Count'/>\n"
         "    <param name='key'>user</param>\n"
         "    <model state='partitioned' keys='user' selectivity='atmostone' punct='consumes'/>\n"
         "    <library path='libsf_example_ops.so' symbol='sf_window_counts'/>\n"
         "  </operator>\n" OUT("B") TAIL;

static const char *const count_items[] = { "b", "a", "b", "|", "|", "c", "a", "c", "c", "|", "a", "|", "b" };
enum { NCOUNT_ITEMS = sizeof count_items / sizeof count_items[0] };

/* Items from..to-1 of count_items into r. */
static void send_count_items(Run *r, int from, int to) {
  for (int i = from; i < to; i++) {
    if (!strcmp(count_items[i], "|")) { /* as the executor delivers it: after the tuple before */
      int last = i;
      while (last > 0 && !strcmp(count_items[last], "|")) last--;
      r->node.inst.cur_seq = r->node.inst.cur_src = (uint64_t)last;
      ck_assert_int_eq(op_custom.window(&r->node.inst, 0), 0);
      continue;
    }
    Value v = value_string(count_items[i], strlen(count_items[i]));
    r->seq = (uint64_t)i;
    run_tuple(r, &v, 1);
  }
}

START_TEST(version_2_window_counts_continue) {
  Run r;
  ck_assert(run_open(&r, window_counts_graph, "counts"));
  send_count_items(&r, 0, NCOUNT_ITEMS);
  run_final(&r, NCOUNT_ITEMS - 1);
  run_ok(&r);
  char *whole = run_close(&r);
  for (int k = 0; k <= NCOUNT_ITEMS; k++) {
    ck_assert(run_open(&r, window_counts_graph, "counts"));
    send_count_items(&r, 0, k);
    Buf snap;
    buf_init(&snap);
    run_snapshot(&r, &snap);
    run_ok(&r);
    char *before = run_close(&r);
    ck_assert(run_open(&r, window_counts_graph, "counts"));
    ck_assert_int_eq(run_restore(&r, &snap), 0);
    send_count_items(&r, k, NCOUNT_ITEMS);
    run_final(&r, NCOUNT_ITEMS - 1);
    run_ok(&r);
    char *after = run_close(&r);
    size_t n = strlen(before);
    ck_assert_int_eq(strncmp(whole, before, n), 0);
    ck_assert_msg(!strcmp(after, whole + n), "cut after %d items: restored run emitted\n%s\nexpected\n%s", k, after,
                  whole + n);
    free(before);
    free(after);
    buf_release(&snap);
  }
  free(whole);
}
END_TEST

/* The ordering service: what a keyed operator emits at a punctuation leaves in the order of its
 * keys, at the punctuation's position (sf_window_counts emits its counts in the order the keys
 * first came: b, a, then c, a). */
START_TEST(keyed_punctuation_sorted) {
  static const char *const want =
      "src=2 (user=\"a\", count=1, window=0)\nsrc=2 (user=\"b\", count=2, window=0)\nwindow\nwindow\n"
      "src=8 (user=\"a\", count=1, window=2)\nsrc=8 (user=\"c\", count=3, window=2)\nwindow\n"
      "src=10 (user=\"a\", count=1, window=3)\nwindow\n";
  Run r;
  ck_assert(run_open(&r, window_counts_graph, "counts"));
  send_count_items(&r, 0, NCOUNT_ITEMS);
  run_final(&r, NCOUNT_ITEMS - 1);
  run_ok(&r);
  char *got = run_close(&r);
  ck_assert_str_eq(got, want);
  free(got);
}
END_TEST

/* What restore refuses: a snapshot cut short. */
START_TEST(restore_truncated) {
  Run r;
  ck_assert(run_open(&r, sessionize_graph, "sess"));
  send_click(&r, 0);
  Buf snap;
  buf_init(&snap);
  run_snapshot(&r, &snap);
  free(run_close(&r));
  ck_assert(run_open(&r, sessionize_graph, "sess"));
  snap.n -= 3;
  ck_assert_int_eq(run_restore(&r, &snap), -1);
  ck_assert_str_eq(run_failure(&r), "operator 'sess': snapshot truncated");
  free(run_close(&r));
  buf_release(&snap);
}
END_TEST

/* sf_key_new gives a tuple of the input schema for sf_owns_key (every key is owned outside a
 * parallel region); a key is never emitted, and sf_owns_key wants the input schema. */
START_TEST(owns_key) {
  Run r;
  ck_assert(run_open(&r, sessionize_graph, "sess"));
  sf_op *op = r.node.inst.state;
  sf_tuple *key = sf_key_new(op);
  ck_assert_ptr_nonnull(key);
  sf_set_string(key, sf_input_attr(op, "user"), "a", 1);
  ck_assert(sf_owns_key(op, key));
  ck_assert_int_eq(sf_emit(op, key), -1);
  ck_assert_str_eq(run_failure(&r), "operator 'sess': sf_emit: the tuple is a key from sf_key_new (emit a tuple "
                                    "from sf_tuple_new)");
  free(run_close(&r));

  ck_assert(run_open(&r, sessionize_graph, "sess"));
  op = r.node.inst.state;
  sf_tuple *t = sf_tuple_new(op);
  ck_assert(!sf_owns_key(op, t));
  sf_tuple_free(t);
  ck_assert_str_eq(run_failure(&r), "operator 'sess': sf_owns_key: the tuple is not of the input schema (give an "
                                    "input tuple or one from sf_key_new)");
  free(run_close(&r));
}
END_TEST

/* ---- ABI version 4: the schemas ---- */

#define P_SCHEMA                                                                                       \
  "  <schema name='P'><attr name='i' type='int'/><attr name='d' type='double'/><attr name='s' type='string'/>" \
  "<attr name='b' type='bool'/></schema>\n"
#define DESCRIBE_GRAPH(text_type)                                                                            \
  HEAD P_SCHEMA "  <schema name='D'><attr name='text' type='" text_type "'/></schema>\n" SRC("P")           \
  "  <operator name='c' kind='Custom'><input stream='A'/><output stream='B' schema='D'/>"                    \
  "<model state='none' selectivity='one'/><library path='libsf_test_ops.so' symbol='sf_describe'/></operator>\n" \
  OUT("B") TAIL

/* sf_describe prints a tuple knowing nothing of its schema beforehand: every attribute's name, type
 * and value, from sf_attr_count, sf_attr_name and sf_attr_type. */
START_TEST(attr_types) {
  Run r;
  ck_assert(run_open(&r, DESCRIBE_GRAPH("string"), "c"));
  sf_op *op = r.node.inst.state;
  ck_assert_int_eq(sf_attr_count(op, SF_IN), 4);
  ck_assert_int_eq(sf_attr_count(op, SF_OUT), 1);
  ck_assert_str_eq(sf_attr_name(op, SF_IN, 2), "s");
  ck_assert_str_eq(sf_attr_name(op, SF_OUT, 0), "text");
  ck_assert_int_eq(sf_attr_type(op, SF_IN, 0), SF_INT);
  ck_assert_int_eq(sf_attr_type(op, SF_IN, 1), SF_DOUBLE);
  ck_assert_int_eq(sf_attr_type(op, SF_IN, 2), SF_STRING);
  ck_assert_int_eq(sf_attr_type(op, SF_IN, 3), SF_BOOL);
  Value v[4] = { value_int(-3), value_double(2.5), value_string("x y", 3), value_bool(true) };
  run_tuple(&r, v, 4);
  run_ok(&r);
  char *got = run_close(&r);
  ck_assert_str_eq(got, "src=0 (text=\"i:int=-3 d:double=2.5 s:string=x y b:bool=true | text:string\")\n");
  free(got);

  /* misuses: an index out of range, a side that is neither, a side without a port */
  ck_assert(run_open(&r, DESCRIBE_GRAPH("string"), "c"));
  ck_assert_ptr_null(sf_attr_name(r.node.inst.state, SF_OUT, 1));
  ck_assert_str_eq(run_failure(&r), "operator 'c': sf_attr_name: attribute index 1 is out of range (schema 'D' has 1 "
                                    "attributes)");
  free(run_close(&r));
  ck_assert(run_open(&r, DESCRIBE_GRAPH("string"), "c"));
  ck_assert_int_eq(sf_attr_count(r.node.inst.state, 3), 0);
  ck_assert_str_eq(run_failure(&r),
                   "operator 'c': sf_attr_count: side 3 is neither SF_IN (0), SF_IN2 (2) nor SF_OUT (1)");
  free(run_close(&r));
  ck_assert(run_open(&r, DESCRIBE_GRAPH("string"), "c")); /* one input port: SF_IN2 has none */
  ck_assert_int_eq(sf_attr_count(r.node.inst.state, SF_IN2), 0);
  ck_assert_int_eq(sf_attr_type(r.node.inst.state, SF_IN2, 0), 0);
  ck_assert_str_eq(run_failure(&r), "operator 'c': sf_attr_type: the operator has no second input");
  free(run_close(&r));
  ck_assert(run_open(&r, SOURCE_GRAPH("sf_count", "3"), "gen"));
  ck_assert_int_eq(sf_attr_count(r.node.inst.state, SF_IN), 0);
  ck_assert_int_eq(sf_attr_type(r.node.inst.state, SF_IN, 0), 0);
  ck_assert_str_eq(run_failure(&r), "operator 'gen': sf_attr_type: the operator has no input");
  free(run_close(&r));
  /* the operator's own check of a type, at open */
  ck_assert(!run_open(&r, DESCRIBE_GRAPH("int"), "c"));
  ck_assert_str_eq(run_failure(&r), "operator 'c': needs a string output attribute 'text'");
  free(run_close(&r));
}
END_TEST

#define PICK_GRAPH(map)                                                                                      \
  HEAD "  <schema name='P'><attr name='a' type='int'/><attr name='b' type='string'/><attr name='c' "        \
  "type='double'/></schema>\n  <schema name='Q'><attr name='x' type='string'/><attr name='y' type='int'/>"  \
  "<attr name='z' type='double'/><attr name='w' type='bool'/></schema>\n" SRC("P")                          \
  "  <operator name='c' kind='Custom'><input stream='A'/><output stream='B' schema='Q'/><param name='map'>" \
  map "</param><model state='none' selectivity='one'/><library path='libsf_test_ops.so' symbol='sf_pick'/>" \
  "</operator>\n" OUT("B") TAIL

/* sf_copy_attrs copies the pairs it is given, by index, whatever the names; a pair of two types,
 * or an index out of range, fails the job before anything is copied. */
START_TEST(copy_attrs) {
  Run r;
  ck_assert(run_open(&r, PICK_GRAPH("b>x a>y c>z"), "c"));
  Value v[3] = { value_int(7), value_string("hi", 2), value_double(1.5) };
  run_tuple(&r, v, 3);
  Value u[3] = { value_int(-1), value_string("", 0), value_double(-0.25) };
  run_tuple(&r, u, 3);
  run_ok(&r);
  char *got = run_close(&r);
  ck_assert_str_eq(got, "src=0 (x=\"hi\", y=7, z=1.5, w=false)\nsrc=1 (x=\"\", y=-1, z=-0.25, w=false)\n");
  free(got);

  ck_assert(run_open(&r, PICK_GRAPH("c>z a>x"), "c"));
  r.node.inst.cur_seq = r.node.inst.cur_src = 0;
  ck_assert_int_eq(op_custom.process(&r.node.inst, 0, tuple_new(v, 3)), -1);
  ck_assert_str_eq(run_failure(&r), "operator 'c': sf_copy_attrs: pair 1: attribute 'a' is int, but 'x' is string");
  free(run_close(&r));

  ck_assert(run_open(&r, PICK_GRAPH("a>y"), "c"));
  sf_op *op = r.node.inst.state;
  sf_tuple *out = sf_tuple_new(op);
  sf_set_string(out, 0, "s", 1);
  ck_assert_int_eq(sf_copy_attrs(op, out, out, (const int[]){ 0, 0 }, (const int[]){ 0, 0 }, 2), 0); /* onto itself */
  size_t len;
  ck_assert_int_eq(strncmp(sf_get_string(out, 0, &len), "s", 1), 0);
  ck_assert_uint_eq(len, 1);
  ck_assert_int_eq(sf_copy_attrs(op, out, out, (const int[]){ 0, 4 }, (const int[]){ 0, 0 }, 2), -1);
  ck_assert_str_eq(run_failure(&r), "operator 'c': sf_copy_attrs: pair 1: attribute index 4 is out of range (the "
                                    "source's schema 'Q' has 4 attributes)");
  sf_tuple_free(out);
  free(run_close(&r));
}
END_TEST

/* ---- ABI version 4: kept tuples ---- */

#define REVERSE_GRAPH T_GRAPH("<param name='size'>3</param><model state='unknown' selectivity='many' final='emits'/>", \
                              "sf_reverse")

/* Input tuple i of the kept-tuple tests: v = i, k = "k<i>" (a string, which a kept tuple holds). */
static void send_vk(Run *r, int i) {
  char k[16];
  int n = snprintf(k, sizeof k, "k%d", i);
  Value v[2] = { value_int(i), value_string(k, (size_t)n) };
  run_tuple(r, v, 2);
}

/* sf_reverse keeps each window of 3 input tuples and emits them last first, without copying
 * them (sf_emit_kept); the last window, short, at the final punctuation. */
static const char reverse_whole[] =
    "src=2 (v=2, k=\"k2\")\nsrc=2 (v=1, k=\"k1\")\nsrc=2 (v=0, k=\"k0\")\n"
    "src=5 (v=5, k=\"k5\")\nsrc=5 (v=4, k=\"k4\")\nsrc=5 (v=3, k=\"k3\")\n"
    "src=7 (v=7, k=\"k7\")\nsrc=7 (v=6, k=\"k6\")\n";
enum { NREVERSE = 8 };

START_TEST(kept_window) {
  Run r;
  ck_assert(run_open(&r, REVERSE_GRAPH, "c"));
  for (int i = 0; i < NREVERSE; i++) send_vk(&r, i);
  run_final(&r, NREVERSE - 1);
  run_ok(&r);
  char *got = run_close(&r);
  ck_assert_str_eq(got, reverse_whole);
  free(got);
}
END_TEST

/* The kept tuples at a checkpoint are the operator's to save (sf_snapshot_write_tuple): cut after
 * any number of tuples, restored into a fresh instance (sf_snapshot_read_tuple), it carries on as
 * the uninterrupted run; bytes cut short fail the restore. */
START_TEST(kept_snapshot) {
  for (int k = 0; k <= NREVERSE; k++) {
    Run r;
    ck_assert(run_open(&r, REVERSE_GRAPH, "c"));
    ck_assert_int_eq(op_custom.checkpointable(&r.node.inst), 0);
    for (int i = 0; i < k; i++) send_vk(&r, i);
    Buf snap;
    buf_init(&snap);
    run_snapshot(&r, &snap);
    run_ok(&r);
    char *before = run_close(&r);
    ck_assert(run_open(&r, REVERSE_GRAPH, "c"));
    ck_assert_int_eq(run_restore(&r, &snap), 0);
    r.seq = (uint64_t)k;
    for (int i = k; i < NREVERSE; i++) send_vk(&r, i);
    run_final(&r, NREVERSE - 1);
    run_ok(&r);
    char *after = run_close(&r);
    size_t n = strlen(before);
    ck_assert_int_eq(strncmp(reverse_whole, before, n), 0);
    ck_assert_msg(!strcmp(after, reverse_whole + n), "cut after %d tuples: restored run emitted\n%s\nexpected\n%s", k,
                  after, reverse_whole + n);
    free(before);
    free(after);
    if (k == 2) { /* two tuples kept: the second cut short (the kind's snapshot: a u64, a bool, then
                   * the library's bytes, after their length as a u64: shortened too) */
      ck_assert(run_open(&r, REVERSE_GRAPH, "c"));
      ck_assert_uint_ge(snap.n, 17);
      unsigned char *len = (unsigned char *)snap.p + 9;
      ck_assert_uint_ge(len[0], 3);
      len[0] -= 3;
      snap.n -= 3;
      ck_assert_int_eq(run_restore(&r, &snap), -1);
      ck_assert_str_eq(run_failure(&r), "operator 'c': sf_snapshot_read_tuple: the bytes are not a tuple of schema 'T' "
                                        "written by sf_snapshot_write_tuple (truncated, or of other types)");
      free(run_close(&r));
    }
    buf_release(&snap);
  }
}
END_TEST

/* Handles: two on the same values are released one by one; a released handle stays recognized
 * when its slot is reused; a kept tuple of another schema than the output's is not emitted. */
START_TEST(kept_handles) {
  Run r;
  ck_assert(run_open(&r, REVERSE_GRAPH, "c"));
  sf_op *op = r.node.inst.state;
  sf_op *was = custom_enter(op); /* as in a callback: sf_get_* look handles up in op */
  sf_tuple *t = sf_tuple_new(op);
  sf_set_int(t, 0, 42);
  sf_set_string(t, 1, "kk", 2);
  const sf_tuple *h1 = sf_tuple_retain(op, t);
  sf_tuple_free(t); /* h1 holds a copy */
  const sf_tuple *h2 = sf_tuple_retain(op, h1);
  ck_assert_ptr_nonnull(h1);
  ck_assert_ptr_ne(h1, h2);
  sf_tuple_release(op, h1);
  size_t len;
  ck_assert_int_eq(sf_get_int(h2, 0), 42);
  ck_assert_int_eq(strncmp(sf_get_string(h2, 1, &len), "kk", 2), 0);
  ck_assert_uint_eq(len, 2);
  ck_assert_int_eq(sf_emit_kept(op, h2), 0);
  const sf_tuple *h3 = sf_tuple_retain(op, h2); /* h1's slot, a generation on */
  ck_assert_ptr_ne(h3, h1);
  sf_tuple_release(op, h2);
  ck_assert_int_eq(sf_get_int(h3, 0), 42);
  run_ok(&r);
  ck_assert_int_eq(sf_get_int(h1, 0), 0);
  ck_assert_str_eq(run_failure(&r), "operator 'c': sf_get_int: the tuple was already released");
  custom_leave(was);
  char *got = run_close(&r); /* h3 released by close */
  ck_assert_str_eq(got, "src=0 (v=42, k=\"kk\")\n");
  free(got);

  ck_assert(run_open(&r, DESCRIBE_GRAPH("string"), "c"));
  op = r.node.inst.state;
  sf_tuple *key = sf_key_new(op);
  const sf_tuple *k = sf_tuple_retain(op, key);
  sf_tuple_free(key);
  ck_assert_int_eq(sf_emit_kept(op, k), -1);
  ck_assert_str_eq(run_failure(&r), "operator 'c': sf_emit_kept: the tuple is of schema 'P', whose attributes are not "
                                    "those of the output schema 'D' (build a tuple with sf_tuple_new and sf_copy)");
  sf_tuple_release(op, k);
  free(run_close(&r));
}
END_TEST

/* sf_keep_misuse misuses a kept tuple on its second input tuple: the job fails naming the operator
 * and the misuse; sf-exec goes on (tests/op_failures.sh checks the exit status). */
START_TEST(kept_misuse) {
  static const char *const cases[][2] = {
    { "twice", "operator 'c': sf_tuple_release: the tuple was already released" },
    { "foreign", "operator 'c': sf_tuple_release: the tuple is not one this operator kept (a handle from "
                 "sf_tuple_retain)" },
    { "emit", "operator 'c': sf_emit_kept: the tuple was already released" },
    { "read", "operator 'c': sf_get_int: the tuple was already released" },
    { "free", "operator 'c': sf_tuple_free: the tuple is a kept one (release it with sf_tuple_release)" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char graph[2048];
    snprintf(graph, sizeof graph,
             HEAD "  <schema name='I'><attr name='id' type='int'/><attr name='v' type='int'/></schema>\n" SRC("I")
                  "  <operator name='c' kind='Custom'><input stream='A'/><output stream='B' schema='I'/>"
                  "<param name='at'>1</param><param name='how'>%s</param>" MODEL_NONE
                  "<library path='libsf_test_ops.so' symbol='sf_keep_misuse'/></operator>\n" OUT("B") TAIL,
             cases[i][0]);
    Run r;
    ck_assert(run_open(&r, graph, "c"));
    Value v[2] = { value_int(0), value_int(5) };
    run_tuple(&r, v, 2);
    v[0] = value_int(1);
    r.node.inst.cur_seq = r.node.inst.cur_src = 1;
    ck_assert_int_eq(op_custom.process(&r.node.inst, 0, tuple_new(v, 2)), -1);
    ck_assert_msg(!strcmp(run_failure(&r), cases[i][1]), "%s: %s", cases[i][0], run_failure(&r));
    char *got = run_close(&r);
    ck_assert_str_eq(got, "src=0 (id=0, v=5)\n");
    free(got);
  }
}
END_TEST

/* ---- checkpointable ---- */

/* checkpointable's verdict on operator `name` of text: "" when it can take part, else the message. */
static char *checkpointable(const char *text, const char *name) {
  Run r;
  ck_assert(run_open(&r, text, name));
  int rc = op_custom.checkpointable(&r.node.inst);
  char *verdict = strdup(run_failure(&r));
  ck_assert_int_eq(rc, *verdict ? -1 : 0);
  free(run_close(&r));
  return verdict;
}

static void assert_checkpointable(const char *text, const char *name, const char *want) {
  char *got = checkpointable(text, name);
  ck_assert_str_eq(got, want);
  free(got);
}

START_TEST(checkpointable_refuses_stateful_without_snapshot) {
  /* version 1 and state: refused */
  assert_checkpointable(T_GRAPH(MODEL_KEYED, "sf_copies"), "c",
                        "operator 'c': keeps state (its <model> state is \"partitioned\") but has no snapshot "
                        "callback ('sf_copies' in library 'libsf_test_ops.so' is built for op.h ABI version 1, "
                        "which has none): give it snapshot and restore callbacks (op.h ABI version 2), or run the "
                        "job without checkpoints");
  assert_checkpointable(T_GRAPH("", "sf_copies"), "c",
                        "operator 'c': keeps state (it has no <model>, so its state is unknown) but has no snapshot "
                        "callback ('sf_copies' in library 'libsf_test_ops.so' is built for op.h ABI version 1, "
                        "which has none): give it snapshot and restore callbacks (op.h ABI version 2), or run the "
                        "job without checkpoints");
  /* version 2 without the callbacks */
  assert_checkpointable(T_GRAPH("<model state='unknown' selectivity='one' forwards='*'/>", "sf_jitter"), "c",
                        "operator 'c': keeps state (its <model> state is \"unknown\") but has no snapshot callback "
                        "('sf_jitter' in library 'libsf_test_ops.so' leaves it NULL): give it snapshot and restore "
                        "callbacks (op.h ABI version 2), or run the job without checkpoints");
  /* stateless, whatever the version: fine */
  assert_checkpointable(T_GRAPH(MODEL_NONE, "sf_copies"), "c", "");
  assert_checkpointable(T_GRAPH(MODEL_NONE, "sf_jitter"), "c", "");
  /* state and both callbacks: fine */
  assert_checkpointable(sessionize_graph, "sess", "");
}
END_TEST

/* A source always needs both callbacks: its snapshot holds its position. */
START_TEST(checkpointable_source) {
  assert_checkpointable(SOURCE_GRAPH("sf_count", "3"), "gen", "");
  assert_checkpointable(SOURCE_GRAPH("sf_count_nosnap", "3"), "gen",
                        "operator 'gen': is a source, whose position a checkpoint must save, but has no snapshot "
                        "callback ('sf_count_nosnap' in library 'libsf_test_ops.so' leaves it NULL): give it "
                        "snapshot and restore callbacks (op.h ABI version 2; a source's snapshot is taken inside "
                        "sf_emit), or run the job without checkpoints");
}
END_TEST

static Suite *custom_suite(void) {
  Suite *s = suite_create("custom");
  UNIT_ADD(s, version_1_loads, NULL, NULL);
  UNIT_ADD(s, unknown_version_refused, NULL, NULL);
  UNIT_ADD_TIMEOUT(s, version_2_restore_continues, NULL, NULL, 60);
  UNIT_ADD_TIMEOUT(s, version_2_restore_merges, NULL, NULL, 60);
  UNIT_ADD_TIMEOUT(s, version_2_window_counts_continue, NULL, NULL, 60);
  UNIT_ADD_TIMEOUT(s, keyed_punctuation_sorted, NULL, NULL, 60);
  UNIT_ADD(s, source_snapshot_inside_emit, NULL, NULL);
  UNIT_ADD(s, restore_truncated, NULL, NULL);
  UNIT_ADD(s, owns_key, NULL, NULL);
  UNIT_ADD(s, checkpointable_refuses_stateful_without_snapshot, NULL, NULL);
  UNIT_ADD(s, checkpointable_source, NULL, NULL);
  UNIT_ADD(s, source_with_model_emits_at_final, NULL, NULL);
  UNIT_ADD(s, attr_types, NULL, NULL);
  UNIT_ADD(s, copy_attrs, NULL, NULL);
  UNIT_ADD(s, kept_window, NULL, NULL);
  UNIT_ADD_TIMEOUT(s, kept_snapshot, NULL, NULL, 60);
  UNIT_ADD(s, kept_handles, NULL, NULL);
  UNIT_ADD(s, kept_misuse, NULL, NULL);
  return s;
}

int main(void) {
  return unit_run(custom_suite());
}
