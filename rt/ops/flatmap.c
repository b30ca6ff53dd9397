/* flatmap.c: the FlatMap kind. For each input tuple, `count` (an int expression of the tuple) says
 * how many tuples to emit; output i (0 ... count-1) is built from the sets, evaluated with `i` = i,
 * and the attributes forwarded by name. A negative count is a run-time error of the operator. Every
 * output of one input carries that input's sequence number. Strings built for one output live in
 * the operator's own scratch arena, reset after each output, so a large count needs no more memory
 * than a count of one. The lets are evaluated once per input tuple, before `count` (in the
 * operator's scratch arena, which lives until the tuple is done). */
#include "keyed.h"

#include <inttypes.h>
#include <stdlib.h>

typedef struct FlatMap {
  Arena *arena;   /* the plan's arrays and the compiled expressions */
  Arena *scratch; /* strings of the output being built */
  OutPlan plan;   /* how output tuples are built */
  LetPlan lets;   /* the <let>s, evaluated per input tuple before `count` */
  Code *count;    /* `count`, compiled */
} FlatMap;

static int flatmap_open(OpInst *op) {
  FlatMap *m = sf_xmalloc(sizeof *m);
  *m = (FlatMap){.arena = arena_new(), .scratch = arena_new()};
  op->state = m;
  if (!op->op->count_expr) return rt_fail(op, "FlatMap has no checked 'count'");
  m->count = code_compile(op->op->count_expr, m->arena);
  letplan_init(&m->lets, op->op, m->arena);
  return outplan_init(&m->plan, op, m->arena);
}

static int flatmap_process(OpInst *op, int port, Tuple *t) {
  FlatMap *m = op->state;
  EvalEnv env = {.attrs = t->v, .scratch = op->scratch};
  Value count;
  if (m->lets.n && letplan_eval(&m->lets, op, &env, 0, m->lets.n, t)) goto fail;
  if (keyed_eval(op, m->count, &env, &count, "count", NULL, NULL, t)) goto fail;
  if (count.i < 0) {
    char err[64];
    snprintf(err, sizeof err, "count is negative (%" PRId64 ")", count.i);
    rt_eval_fail(op, "count", rt_param(op, "count"), t, err);
    goto fail;
  }
  env.scratch = m->scratch;
  for (int64_t i = 0; i < count.i; i++) {
    env.index = i;
    Tuple *out = outplan_build(&m->plan, op, &env, t);
    arena_reset(m->scratch);
    if (!out || rt_emit_nth(op, 0, out, (uint64_t)i)) goto fail;
  }
  tuple_unref(t);
  return 0;
fail:
  tuple_unref(t);
  return -1;
}

static int flatmap_final(OpInst *op) {
  return 0;
}

static void flatmap_close(OpInst *op, bool ok) {
  FlatMap *m = op->state;
  if (!m) return;
  arena_free(m->arena);
  arena_free(m->scratch);
  free(m);
  op->state = NULL;
}

const OpKindImpl op_flatmap = {
  .kind = KIND_FLATMAP,
  .open = flatmap_open,
  .process = flatmap_process,
  .final = flatmap_final,
  .close = flatmap_close,
};
