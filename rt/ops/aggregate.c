/* aggregate.c: the Aggregate kind: count-based windows per key of partitionBy (without it the
 * whole stream is one key), `tumbling N` or `sliding N`.
 *
 * Every aggregate call of the sets (count, sum, avg, min, max, first, last) was numbered by the
 * checker (Expr.slot); its argument is evaluated once per input tuple. When a window emits, each
 * aggregate is computed over the window's tuples, then the sets are evaluated with those values and
 * with the attributes of the window's last tuple, which is always the input being processed; the
 * attributes not set (partitionBy attributes, by the checker's rule) are forwarded from it too.
 *
 *  - count() is an int; sum of ints is an int, the exact sum of the window's values (over 128
 *    bits, so the order does not matter), and an error of the operator when it is no int64, as
 *    overflow of `+` is; sum of doubles is a double summed in arrival order, starting from the
 *    first value (so the sum of a lone -0.0 is -0.0). avg is the double sum of double(x) in arrival order divided by the count. min and max
 *    follow value_compare and keep the first of equal values; first and last are the first and the
 *    last argument values.
 *  - Tumbling: a key's window emits when it holds N tuples and starts again empty. It keeps running
 *    accumulators, not tuples; a window still incomplete at the end of the stream is discarded.
 *  - Sliding: every input emits, over the last min(N, seen) tuples of its key. A key keeps a Slide
 *    (slide.c): its last N rows of argument values and every aggregate kept up to date in O(1)
 *    amortized per input, with the values of the folds above, bit for bit, and no allocation once
 *    the window is full. Only a double sum or avg over a window holding a value that is not a
 *    small integer is folded again, O(N): slide.c says why no running total gives its bits. */
#include "keyed.h"
#include "slide.h"

#include <stdlib.h>
#include <string.h>

/* One aggregate call of the sets. */
typedef struct Agg {
  ExprFunc func;   /* FUNC_COUNT ... FUNC_LAST (FUNC_NONE: a slot no set uses) */
  const Expr *arg; /* its argument (NULL for count) */
  Code *code;      /* the argument, compiled (NULL for count) */
  const Set *set;  /* the set it is part of, named in error messages */
} Agg;

/* A running aggregate. */
typedef struct Acc {
  uint64_t isum; /* sum of ints: the low word of the exact total (wide_add)... */
  int64_t ihi;   /* ...and the high word */
  double dsum;  /* sum of doubles, or of double(x) for avg */
  Value v;      /* min, max, first, last so far */
  size_t cap;   /* v's held string buffer */
} Acc;

/* A key's tumbling window. */
typedef struct Tumbling {
  int64_t n;  /* tuples in the window */
  Acc acc[];  /* one per aggregate */
} Tumbling;

typedef struct Aggregate {
  Arena *arena;   /* plan, aggregates and per-input arrays */
  OutPlan plan;   /* how output tuples are built */
  bool sliding;   /* sliding (else tumbling) */
  int64_t size;   /* N of the window */
  int naggs;      /* aggregate calls */
  Agg *aggs;      /* by slot */
  Value *args;    /* this input's argument value of each aggregate */
  SlideSpec spec; /* sliding: the aggregates, for slide.c */
  Value *results; /* the emitting window's aggregate values, by slot */
  KeyTable keys;  /* per key: a Tumbling or a Slide */
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
  WindowSpec spec;
  size_t at;
  if (window_parse(window, &spec, &at) != NUM_OK)
    return rt_fail(op, "window must be 'tumbling N' or 'sliding N' with N from 1 to 9223372036854775807, got '%s'",
                   window ? window : "");
  if (spec.kind != WIN_TUMBLING && spec.kind != WIN_SLIDING)
    return rt_fail(op, "window kind not implemented yet: '%s'", window);
  g->sliding = spec.kind == WIN_SLIDING;
  g->size = spec.size;
  if (outplan_init(&g->plan, op, g->arena)) return -1;
  for (int i = 0; i < op->op->nsets; i++) {
    int n = count_aggs(op->op->sets[i].expr);
    if (n > g->naggs) g->naggs = n;
  }
  size_t n = (size_t)g->naggs + 1;
  g->aggs = arena_alloc(g->arena, sizeof *g->aggs * n);
  g->args = arena_alloc(g->arena, sizeof *g->args * n);
  g->results = arena_alloc(g->arena, sizeof *g->results * n);
  for (int i = 0; i < op->op->nsets; i++) collect_aggs(g, op->op->sets[i].expr, &op->op->sets[i]);
  for (int s = 0; s < g->naggs; s++)
    if (g->aggs[s].func > FUNC_LAST)
      return rt_fail(op, "aggregate function not implemented yet in set '%s'", g->aggs[s].set->attr);
  for (int s = 0; s < g->naggs; s++)
    if (g->aggs[s].arg) g->aggs[s].code = code_compile(g->aggs[s].arg, g->arena);
  ExprFunc *func = arena_alloc(g->arena, sizeof *func * n);
  Type *type = arena_alloc(g->arena, sizeof *type * n);
  for (int s = 0; s < g->naggs; s++) {
    func[s] = g->aggs[s].func;
    type[s] = g->aggs[s].arg ? g->aggs[s].arg->type : TYPE_NONE;
  }
  g->spec = (SlideSpec){.size = g->size, .naggs = g->naggs, .func = func, .type = type};
  size_t data = g->sliding ? slide_size(&g->spec) : sizeof(Tumbling) + sizeof(Acc) * (size_t)g->naggs;
  return keytable_init(&g->keys, op, data);
}

/* Folds argument x of aggregate a into acc, which has seen `seen` values before (min, max, first
 * and last copy the strings they keep). */
static void acc_add(const Agg *a, Acc *acc, int64_t seen, const Value *x) {
  bool take = false;
  switch (a->func) {
  case FUNC_SUM:
    if (x->type == TYPE_INT) {
      if (!seen) acc->isum = 0, acc->ihi = 0;
      wide_add(&acc->isum, &acc->ihi, x->i);
    } else
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
  held_store(&acc->v, &acc->cap, x);
}

/* The value of aggregate a over n >= 1 folded values; false when it is a sum of ints that is no
 * int64. */
static bool acc_value(const Agg *a, const Acc *acc, int64_t n, Value *v) {
  int64_t sum;
  switch (a->func) {
  case FUNC_COUNT: *v = value_int(n); return true;
  case FUNC_SUM:
    if (a->arg->type == TYPE_INT) {
      bool fits = wide_get(acc->isum, acc->ihi, &sum);
      *v = value_int(sum);
      return fits;
    }
    *v = value_double(acc->dsum);
    return true;
  case FUNC_AVG: *v = value_double(acc->dsum / (double)n); return true;
  case FUNC_AMIN: case FUNC_AMAX: case FUNC_FIRST: case FUNC_LAST: *v = acc->v; return true;
  default: *v = value_int(0); return true; /* a slot no set uses */
  }
}

/* Adds this input's arguments to its key's tumbling window; 1 when the window is complete, with
 * g->results set and the window emptied, else 0; or -1 - s when slot s's sum is no int64. */
static int tumbling_add(Aggregate *g, Tumbling *w) {
  for (int s = 0; s < g->naggs; s++) acc_add(&g->aggs[s], &w->acc[s], w->n, &g->args[s]);
  if (++w->n < g->size) return 0;
  w->n = 0;
  for (int s = 0; s < g->naggs; s++)
    if (!acc_value(&g->aggs[s], &w->acc[s], g->size, &g->results[s])) return -1 - s;
  return 1;
}

/* One input tuple; hash is its key's (keytable_hash_run), or NULL to hash it here. */
static int aggregate_tuple(OpInst *op, Tuple *t, const uint64_t *hash) {
  Aggregate *g = op->state;
  EvalEnv env = {.attrs = t->v, .scratch = op->scratch};
  for (int s = 0; s < g->naggs; s++) {
    const Agg *a = &g->aggs[s];
    g->args[s] = value_int(0);
    if (a->arg && keyed_eval(op, a->code, &env, &g->args[s], "set", a->set->attr, a->set->text, t)) goto fail;
  }
  bool created;
  void *window = hash ? keytable_find_hashed(&g->keys, t, *hash, &created) : keytable_find(&g->keys, t, &created);
  if (!window) goto fail;
  int slot = -1;
  if (g->sliding) {
    slot = slide_push(window, &g->spec, g->args, g->results);
  } else {
    int done = tumbling_add(g, window);
    if (done == 0) {
      tuple_unref(t);
      return 0;
    }
    if (done < 0) slot = -1 - done;
  }
  if (slot >= 0) {
    const Set *set = g->aggs[slot].set;
    char what[256];
    snprintf(what, sizeof what, "set '%s'", set->attr);
    rt_eval_fail(op, what, set->text, t, "integer overflow of sum()");
    goto fail;
  }
  env.aggs = g->results;
  return outplan_emit(&g->plan, op, &env, t);
fail:
  tuple_unref(t);
  return -1;
}

static int aggregate_process(OpInst *op, int port, Tuple *t) {
  return aggregate_tuple(op, t, NULL);
}

/* A run: every key hashed first (its bucket prefetched; a few tuples ahead its entry and data, and
 * a sliding window's cells), then each tuple exactly as aggregate_process takes it, in order, with
 * its own position and scratch: outputs and faults are those of one tuple at a time. */
static int aggregate_process_run(OpInst *op, int port, Item *items, int n) {
  Aggregate *g = op->state;
  uint64_t hash[KEYED_RUN];
  /* tuples ahead whose entry is prefetched (their bucket has come meanwhile), and whose sliding
   * window's cells are (their entry has come) */
  enum { AHEAD = 8, AHEAD_CELLS = 3 };
  for (int base = 0; base < n; base += KEYED_RUN) {
    int m = n - base < KEYED_RUN ? n - base : KEYED_RUN;
    keytable_hash_run(&g->keys, items + base, m, hash);
    for (int r = 0; r < m; r++) {
      if (r + AHEAD < m) keytable_prefetch_data(&g->keys, hash[r + AHEAD]);
      if (g->sliding && r + AHEAD_CELLS < m) {
        const Slide *w = keytable_peek(&g->keys, hash[r + AHEAD_CELLS]);
        if (w) slide_prefetch(w, &g->spec);
      }
      Item *it = &items[base + r];
      op->cur_seq = it->seq;
      op->cur_src = it->src;
      op->cur_born = it->born;
      int rc = aggregate_tuple(op, it->t, &hash[r]);
      arena_reset(op->scratch);
      if (rc < 0) {
        keyed_release_items(it + 1, n - base - r - 1);
        return -1;
      }
    }
  }
  return 0;
}

/* Incomplete tumbling windows are discarded; sliding windows have emitted already. */
static int aggregate_final(OpInst *op) {
  return 0;
}

/* ---- checkpoints ----
 * A header (sliding, N, the number of aggregates) that a restore checks against its own window,
 * then the KeyTable. A tumbling key's data is its count and every accumulator as it is (the sums,
 * and the kept value when there is one), so a restored window goes on folding from the same bits.
 * A sliding key's data is its window (slide_snapshot). */

static void put_tumbling(const void *data, Buf *out, void *ctx) {
  const Aggregate *g = ctx;
  const Tumbling *w = data;
  snap_i64(out, w->n);
  for (int s = 0; s < g->naggs; s++) {
    const Acc *acc = &w->acc[s];
    snap_u64(out, acc->isum);
    snap_i64(out, acc->ihi);
    snap_f64(out, acc->dsum);
    snap_bool(out, acc->v.type != TYPE_NONE);
    if (acc->v.type != TYPE_NONE) snap_value(out, &acc->v);
  }
}

/* The type of slot s's kept value: its argument's. */
static Type slot_type(const Aggregate *g, int s) {
  return g->aggs[s].arg ? g->aggs[s].arg->type : TYPE_NONE;
}

static int get_tumbling(void *data, SnapIn *in, void *ctx) {
  const Aggregate *g = ctx;
  Tumbling *w = data;
  int64_t n = snap_get_i64(in);
  if (n < 0 || n >= g->size) in->bad = true;
  for (int s = 0; s < g->naggs && !in->bad; s++) {
    Acc *acc = &w->acc[s];
    acc->isum = snap_get_u64(in);
    acc->ihi = snap_get_i64(in);
    /* a sum of at most N int64s (a complete window's stays until the next one starts) is below N * 2^63 */
    if (acc->ihi < -g->size || acc->ihi > g->size) in->bad = true;
    acc->dsum = snap_get_f64(in);
    if (!snap_get_bool(in)) continue;
    Value v;
    snap_get_value(in, &v);
    if (v.type != slot_type(g, s)) in->bad = true;
    else held_store(&acc->v, &acc->cap, &v);
  }
  if (!in->bad) w->n = n;
  return 0;
}

static void put_sliding(const void *data, Buf *out, void *ctx) {
  const Aggregate *g = ctx;
  slide_snapshot(data, &g->spec, out);
}

static int get_sliding(void *data, SnapIn *in, void *ctx) {
  Aggregate *g = ctx;
  slide_restore(data, &g->spec, in, g->args, g->results);
  return 0;
}

static int aggregate_snapshot(OpInst *op, Buf *out) {
  Aggregate *g = op->state;
  snap_bool(out, g->sliding);
  snap_i64(out, g->size);
  snap_u64(out, (uint64_t)g->naggs);
  keytable_snapshot(&g->keys, out, g->sliding ? put_sliding : put_tumbling, g);
  return 0;
}

static int aggregate_restore(OpInst *op, SnapIn *in) {
  Aggregate *g = op->state;
  bool sliding = snap_get_bool(in);
  int64_t size = snap_get_i64(in);
  uint64_t naggs = snap_get_u64(in);
  if (in->bad) return keyed_restore_end(op, in);
  if (sliding != g->sliding || size != g->size || naggs != (uint64_t)g->naggs)
    return rt_fail(op, "the snapshot is of a window '%s %lld' with %llu aggregates, the operator's is '%s %lld' with %d",
                   sliding ? "sliding" : "tumbling", (long long)size, (unsigned long long)naggs,
                   g->sliding ? "sliding" : "tumbling", (long long)g->size, g->naggs);
  if (keytable_restore(&g->keys, op, in, g->sliding ? get_sliding : get_tumbling, g)) return -1;
  return keyed_restore_end(op, in);
}

static void release_window(void *data, void *ctx) {
  const Aggregate *g = ctx;
  if (g->sliding) {
    slide_release(data, &g->spec);
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
  .process_run = aggregate_process_run,
  .final = aggregate_final,
  .close = aggregate_close,
  .snapshot = aggregate_snapshot,
  .restore = aggregate_restore,
};
