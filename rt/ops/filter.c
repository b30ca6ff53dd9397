/* filter.c: the Filter kind. Each input tuple for which `where` holds is emitted as it is (the same
 * tuple, no copy); the others are dropped. Stateless; punctuation and pulses pass through. A run of
 * tuples is filtered a run at a time (filter_process_run), unless the Filter has lets (evaluated
 * per tuple before `where`): then a tuple at a time. */
#include "keyed.h"

#include <stdlib.h>

typedef struct Filter {
  Arena *arena; /* the compiled condition */
  Code *where;  /* `where`, compiled */
  LetPlan lets; /* the <let>s, evaluated before `where` */
} Filter;

static int filter_open(OpInst *op) {
  if (!op->op->where) return rt_fail(op, "Filter has no checked 'where'");
  Filter *f = sf_xmalloc(sizeof *f);
  f->arena = arena_new();
  f->where = code_compile(op->op->where, f->arena);
  letplan_init(&f->lets, op->op, f->arena);
  op->state = f;
  return 0;
}

static int filter_process(OpInst *op, int port, Tuple *t) {
  Filter *f = op->state;
  EvalEnv env = {.attrs = t->v, .scratch = op->scratch};
  Value keep;
  if ((f->lets.n && letplan_eval(&f->lets, op, &env, 0, f->lets.n, t)) ||
      keyed_eval(op, f->where, &env, &keep, "where", NULL, NULL, t)) {
    tuple_unref(t);
    return -1;
  }
  if (keep.b) return rt_emit(op, 0, t);
  tuple_unref(t);
  return 0;
}

/* A run: `where` evaluated over up to CODE_RUN_MAX rows at a time (code_eval_run), the kept items
 * moved to the front of items in order and emitted as one run, the others released. A fault of
 * row r emits the kept rows before it first, then reports the fault as filter_process would. */
static int filter_process_run(OpInst *op, int port, Item *items, int n) {
  Filter *f = op->state;
  const Value *rows[CODE_RUN_MAX];
  Value keep[CODE_RUN_MAX];
  Tuple *drop[CODE_RUN_MAX];
  EvalEnv env = {.scratch = op->scratch};
  int kept = 0;
  if (f->lets.n) { /* lets per tuple: filter_process on each, as the runtime would call it */
    for (int i = 0; i < n; i++) {
      op->cur_seq = items[i].seq;
      op->cur_src = items[i].src;
      op->cur_born = items[i].born;
      int rc = filter_process(op, port, items[i].t);
      arena_reset(op->scratch);
      if (rc < 0) {
        keyed_release_items(items + i + 1, n - i - 1);
        return -1;
      }
    }
    return 0;
  }
  for (int base = 0; base < n; base += CODE_RUN_MAX) {
    int m = n - base < CODE_RUN_MAX ? n - base : CODE_RUN_MAX, ndrop = 0;
    for (int r = 0; r < m; r++) rows[r] = items[base + r].t->v;
    int ok = code_eval_run(f->where, &env, rows, NULL, m, keep);
    for (int r = 0; r < ok; r++) {
      if (keep[r].b) items[kept++] = items[base + r];
      else drop[ndrop++] = items[base + r].t;
    }
    tuple_unref_all(drop, ndrop);
    if (__builtin_expect(ok < m, 0))
      return keyed_run_fail(op, items, kept, &items[base + ok], n - base - ok, f->where, "where", NULL, NULL);
  }
  return rt_emit_run(op, 0, items, kept);
}

static int filter_final(OpInst *op) {
  return 0;
}

static void filter_close(OpInst *op, bool ok) {
  Filter *f = op->state;
  if (!f) return;
  arena_free(f->arena);
  free(f);
  op->state = NULL;
}

const OpKindImpl op_filter = {
  .kind = KIND_FILTER,
  .open = filter_open,
  .process = filter_process,
  .process_run = filter_process_run,
  .final = filter_final,
  .close = filter_close,
};
