/* aggregate.c: the Aggregate kind: count-based windows per key of partitionBy (without it the
 * whole stream is one key), `tumbling N` or `sliding N`.
 *
 * Every aggregate call of the sets (count, sum, avg, min, max, first, last) was numbered by the
 * checker (Expr.slot); its argument is evaluated once per input tuple. When a window emits, each
 * aggregate is computed over the window's tuples, then the sets are evaluated with those values and
 * with the attributes of the window's last tuple, which is always the input being processed; the
 * attributes not set (partitionBy attributes, by the checker's rule) are forwarded from it too.
 *
 *  - count() is an int; sum of ints is an int (wrapping around, like `+`), sum of doubles a double;
 *    both are summed in arrival order, starting from the first value (so the sum of a lone -0.0 is
 *    -0.0). avg is the double sum of double(x) in arrival order divided by the count. min and max
 *    follow value_compare and keep the first of equal values; first and last are the first and the
 *    last argument values.
 *  - Tumbling: a key's window emits when it holds N tuples and starts again empty. It keeps running
 *    accumulators, not tuples; a window still incomplete at the end of the stream is discarded.
 *  - Sliding: every input emits, over the last min(N, seen) tuples of its key. A key keeps a ring
 *    of its last N rows of argument values (strings held by the ring, buffers reused), grown as
 *    the key's tuples arrive, and recomputes every aggregate over it in arrival order: O(N) per
 *    aggregate per input, with no allocation once the ring is full. */
#include "keyed.h"

#include <stdlib.h>
#include <string.h>

/* One aggregate call of the sets. */
typedef struct Agg {
  ExprFunc func;   /* FUNC_COUNT ... FUNC_LAST (FUNC_NONE: a slot no set uses) */
  const Expr *arg; /* its argument (NULL for count) */
  const Set *set;  /* the set it is part of, named in error messages */
} Agg;

/* A running aggregate. */
typedef struct Acc {
  int64_t isum; /* sum of ints */
  double dsum;  /* sum of doubles, or of double(x) for avg */
  Value v;      /* min, max, first, last so far */
  size_t cap;   /* v's held string buffer (tumbling windows), 0 when v borrows */
} Acc;

/* A key's tumbling window. */
typedef struct Tumbling {
  int64_t n;  /* tuples in the window */
  Acc acc[];  /* one per aggregate */
} Tumbling;

/* A key's sliding window: rows of argument values, cells[row * naggs + slot]. */
typedef struct Ring {
  Value *cells;  /* the rows' argument values (strings held) */
  size_t *caps;  /* held buffer size of each cell */
  int64_t rows;  /* rows allocated (at most the window size) */
  int64_t n;     /* rows in use */
  int64_t head;  /* the oldest row once the ring is full (0 until then) */
} Ring;

typedef struct Aggregate {
  Arena *arena;   /* plan, aggregates and per-input arrays */
  OutPlan plan;   /* how output tuples are built */
  bool sliding;   /* sliding (else tumbling) */
  int64_t size;   /* N of the window */
  int naggs;      /* aggregate calls */
  Agg *aggs;      /* by slot */
  Value *args;    /* this input's argument value of each aggregate */
  Acc *scan;      /* sliding: accumulators of the recomputation (borrowing from the ring) */
  Value *results; /* the emitting window's aggregate values, by slot */
  KeyTable keys;  /* per key: a Tumbling or a Ring */
} Aggregate;

/* Records every aggregate call in e by its slot. */
static void collect_aggs(Aggregate *g, const Expr *e, const Set *s) {
  if (!e) return;
  if (e->kind == EXPR_CALL && e->func >= FUNC_COUNT) {
    sf_assert(e->slot >= 0 && e->slot < g->naggs);
    g->aggs[e->slot] = (Agg){.func = e->func, .arg = e->nargs ? e->args[0] : NULL, .set = s};
    return;
  }
  collect_aggs(g, e->a, s);
  collect_aggs(g, e->b, s);
  collect_aggs(g, e->c, s);
  for (int k = 0; k < e->nargs; k++) collect_aggs(g, e->args[k], s);
}

/* 1 + the highest aggregate slot in e (0 when none). */
static int count_aggs(const Expr *e) {
  if (!e) return 0;
  int n = e->kind == EXPR_CALL && e->func >= FUNC_COUNT ? e->slot + 1 : 0;
  const Expr *kids[3] = {e->a, e->b, e->c};
  for (int k = 0; k < 3; k++) {
    int m = count_aggs(kids[k]);
    if (m > n) n = m;
  }
  for (int k = 0; k < e->nargs; k++) {
    int m = count_aggs(e->args[k]);
    if (m > n) n = m;
  }
  return n;
}

static int aggregate_open(OpInst *op) {
  Aggregate *g = sf_xmalloc(sizeof *g);
  *g = (Aggregate){.arena = arena_new()};
  op->state = g;
  const char *window = rt_param(op, "window");
  char kind[16];
  long long size;
  char extra;
  if (!window || sscanf(window, "%15s %lld %c", kind, &size, &extra) != 2 || size < 1 ||
      (strcmp(kind, "tumbling") && strcmp(kind, "sliding")))
    return rt_fail(op, "window must be 'tumbling N' or 'sliding N' with N >= 1, got '%s'",
                   window ? window : "");
  g->sliding = !strcmp(kind, "sliding");
  g->size = size;
  if (outplan_init(&g->plan, op, g->arena)) return -1;
  for (int i = 0; i < op->op->nsets; i++) {
    int n = count_aggs(op->op->sets[i].expr);
    if (n > g->naggs) g->naggs = n;
  }
  size_t n = (size_t)g->naggs + 1;
  g->aggs = arena_alloc(g->arena, sizeof *g->aggs * n);
  g->args = arena_alloc(g->arena, sizeof *g->args * n);
  g->scan = arena_alloc(g->arena, sizeof *g->scan * n);
  g->results = arena_alloc(g->arena, sizeof *g->results * n);
  for (int i = 0; i < op->op->nsets; i++) collect_aggs(g, op->op->sets[i].expr, &op->op->sets[i]);
  size_t data = g->sliding ? sizeof(Ring) : sizeof(Tumbling) + sizeof(Acc) * (size_t)g->naggs;
  return keytable_init(&g->keys, op, data);
}

/* Folds argument x of aggregate a into acc, which has seen `seen` values before; hold copies the
 * strings min/max/first/last keep (else they borrow x's bytes). */
static void acc_add(const Agg *a, Acc *acc, int64_t seen, const Value *x, bool hold) {
  bool take = false;
  switch (a->func) {
  case FUNC_SUM:
    if (x->type == TYPE_INT)
      acc->isum = seen ? (int64_t)((uint64_t)acc->isum + (uint64_t)x->i) : x->i;
    else
      acc->dsum = seen ? acc->dsum + x->d : x->d;
    return;
  case FUNC_AVG: {
    double d = x->type == TYPE_INT ? (double)x->i : x->d;
    acc->dsum = seen ? acc->dsum + d : d;
    return;
  }
  case FUNC_AMIN: take = !seen || value_compare(x, &acc->v) < 0; break;
  case FUNC_AMAX: take = !seen || value_compare(x, &acc->v) > 0; break;
  case FUNC_FIRST: take = !seen; break;
  case FUNC_LAST: take = true; break;
  default: return; /* count: nothing to fold */
  }
  if (!take) return;
  if (hold)
    held_store(&acc->v, &acc->cap, x);
  else
    acc->v = *x;
}

/* The value of aggregate a over n >= 1 folded values. */
static Value acc_value(const Agg *a, const Acc *acc, int64_t n) {
  switch (a->func) {
  case FUNC_COUNT: return value_int(n);
  case FUNC_SUM: return a->arg->type == TYPE_INT ? value_int(acc->isum) : value_double(acc->dsum);
  case FUNC_AVG: return value_double(acc->dsum / (double)n);
  case FUNC_AMIN: case FUNC_AMAX: case FUNC_FIRST: case FUNC_LAST: return acc->v;
  default: return value_int(0); /* a slot no set uses */
  }
}

/* Adds this input's arguments to its key's tumbling window; true when the window is complete, with
 * g->results set and the window emptied. */
static bool tumbling_add(Aggregate *g, Tumbling *w) {
  for (int s = 0; s < g->naggs; s++) acc_add(&g->aggs[s], &w->acc[s], w->n, &g->args[s], true);
  if (++w->n < g->size) return false;
  for (int s = 0; s < g->naggs; s++) g->results[s] = acc_value(&g->aggs[s], &w->acc[s], w->n);
  w->n = 0;
  return true;
}

/* Adds this input's arguments to its key's ring (dropping the oldest row when full) and sets
 * g->results over the ring's rows in arrival order. */
static void sliding_add(Aggregate *g, Ring *r) {
  size_t naggs = (size_t)g->naggs;
  int64_t row;
  if (r->n < g->size) {
    if (r->n == r->rows) {
      int64_t rows = r->rows ? r->rows * 2 : 4;
      if (rows > g->size) rows = g->size;
      size_t cells = (size_t)rows * naggs, old = (size_t)r->rows * naggs;
      r->cells = sf_xrealloc(r->cells, sizeof *r->cells * (cells + 1));
      r->caps = sf_xrealloc(r->caps, sizeof *r->caps * (cells + 1));
      memset(r->cells + old, 0, sizeof *r->cells * (cells - old));
      memset(r->caps + old, 0, sizeof *r->caps * (cells - old));
      r->rows = rows;
    }
    row = r->n++;
  } else {
    row = r->head;
    r->head = (r->head + 1) % r->rows;
  }
  for (size_t s = 0; s < naggs; s++)
    held_store(&r->cells[(size_t)row * naggs + s], &r->caps[(size_t)row * naggs + s], &g->args[s]);
  for (size_t s = 0; s < naggs; s++) {
    const Agg *a = &g->aggs[s];
    for (int64_t j = 0; j < r->n; j++)
      acc_add(a, &g->scan[s], j, &r->cells[(size_t)((r->head + j) % r->rows) * naggs + s], false);
    g->results[s] = acc_value(a, &g->scan[s], r->n);
  }
}

static int aggregate_process(OpInst *op, int port, Tuple *t) {
  Aggregate *g = op->state;
  EvalEnv env = {.attrs = t->v, .scratch = op->scratch};
  for (int s = 0; s < g->naggs; s++) {
    const Agg *a = &g->aggs[s];
    g->args[s] = value_int(0);
    if (a->arg && keyed_eval(op, a->arg, &env, &g->args[s], "set", a->set->attr, a->set->text, t)) goto fail;
  }
  bool created;
  void *window = keytable_find(&g->keys, t, &created);
  if (g->sliding)
    sliding_add(g, window);
  else if (!tumbling_add(g, window)) {
    tuple_unref(t);
    return 0;
  }
  env.aggs = g->results;
  return outplan_emit(&g->plan, op, &env, t);
fail:
  tuple_unref(t);
  return -1;
}

/* Incomplete tumbling windows are discarded; sliding windows have emitted already. */
static int aggregate_final(OpInst *op) {
  return 0;
}

static void release_window(void *data, void *ctx) {
  const Aggregate *g = ctx;
  if (g->sliding) {
    Ring *r = data;
    for (size_t c = 0; c < (size_t)r->rows * (size_t)g->naggs; c++) held_release(&r->cells[c], &r->caps[c]);
    free(r->cells);
    free(r->caps);
  } else {
    Tumbling *w = data;
    for (int s = 0; s < g->naggs; s++) held_release(&w->acc[s].v, &w->acc[s].cap);
  }
}

static void aggregate_close(OpInst *op, bool ok) {
  Aggregate *g = op->state;
  if (!g) return;
  keytable_each(&g->keys, release_window, g);
  keytable_release(&g->keys);
  arena_free(g->arena);
  free(g);
  op->state = NULL;
}

const OpKindImpl op_aggregate = {
  .kind = KIND_AGGREGATE,
  .open = aggregate_open,
  .process = aggregate_process,
  .final = aggregate_final,
  .close = aggregate_close,
};
