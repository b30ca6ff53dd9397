/* filter.c: the Filter kind. Each input tuple for which `where` holds is emitted as it is (the same
 * tuple, no copy); the others are dropped. Stateless; punctuation and pulses pass through. */
#include "keyed.h"

#include <stdlib.h>

typedef struct Filter {
  Arena *arena; /* the compiled condition */
  Code *where;  /* `where`, compiled */
} Filter;

static int filter_open(OpInst *op) {
  if (!op->op->where) return rt_fail(op, "Filter has no checked 'where'");
  Filter *f = sf_xmalloc(sizeof *f);
  f->arena = arena_new();
  f->where = code_compile(op->op->where, f->arena);
  op->state = f;
  return 0;
}

static int filter_process(OpInst *op, int port, Tuple *t) {
  Filter *f = op->state;
  EvalEnv env = {.attrs = t->v, .scratch = op->scratch};
  Value keep;
  if (keyed_eval(op, f->where, &env, &keep, "where", NULL, NULL, t)) {
    tuple_unref(t);
    return -1;
  }
  if (keep.b) return rt_emit(op, 0, t);
  tuple_unref(t);
  return 0;
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
  .final = filter_final,
  .close = filter_close,
};
