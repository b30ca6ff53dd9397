/* aggregate.c: the Aggregate kind: windows per key of partitionBy (without it the whole stream is
 * one key): count-based `tumbling N` and `sliding N`, the event-time windows `tumbling time`,
 * `hopping time` and `session time` (with `lateness`), and `running`.
 *
 * Every aggregate call of the sets (count, sum, avg, min, max, first, last, count_distinct,
 * arg_max, arg_min, window_start, window_end) was numbered by the checker (Expr.slot); its
 * arguments are evaluated once per input tuple, after the lets (which only they may read). When a window emits, each aggregate is computed
 * over the window's tuples, then the sets are evaluated with those values.
 *
 *  - count() is an int; sum of ints is an int, the exact sum of the window's values (over 128
 *    bits, so the order does not matter), and an error of the operator when it is no int64, as
 *    overflow of `+` is; sum of doubles is a double summed in arrival order, starting from the
 *    first value (so the sum of a lone -0.0 is -0.0). avg is the double sum of double(x) in arrival order divided by the count. min and max
 *    follow value_compare and keep the first of equal values; first and last are the first and the
 *    last argument values; count_distinct counts distinct values under the key equality (-0.0 is
 *    0.0, NaN one value); arg_max(e, by) and arg_min(e, by) are e of the tuple with the largest
 *    (smallest) by, the earliest on ties (accum.c).
 *  - Tumbling: a key's window emits when it holds N tuples and starts again empty. It keeps running
 *    accumulators, not tuples; a window still incomplete at the end of the stream is discarded.
 *    The sets see the attributes of the window's last tuple, the input being processed.
 *  - Sliding: every input emits, over the last min(N, seen) tuples of its key. A key keeps a Slide
 *    (slide.c): its last N rows of argument values and every aggregate kept up to date in O(1)
 *    amortized per input, with the values of the folds above, bit for bit, and no allocation once
 *    the window is full. Only a double sum or avg over a window holding a value that is not a
 *    small integer is folded again, O(N): slide.c says why no running total gives its bits (and
 *    so are count_distinct, arg_max and arg_min).
 *  - Running: every input emits one aggregate of its key over everything so far: one set of
 *    accumulators per key; the sets see the attributes of the key's first tuple (so a key seen
 *    as -0.0 and then 0.0 prints as -0.0).
 *  - Time windows (timewin.c): a tuple goes into its windows by its event time (the input's time
 *    attribute); a late one is dropped and counted (OpInst.n_late, a warning at the end names
 *    the first). A tick closes windows, emitted in timewin's order with the attributes of each
 *    window's first tuple, then passes on as tick - lateness. */
#include "keyed.h"
#include "exec_priv.h" /* Exec.g: the graph, for stream_time_slot */
#include "slide.h"
#include "timewin.h"

#include <stdlib.h>
#include <string.h>

/* One aggregate call of the sets. */
typedef struct Agg {
  ExprFunc func;   /* FUNC_COUNT ... FUNC_WINDOW_END (FUNC_NONE: a slot no set uses) */
  const Expr *arg; /* its argument (NULL for count, window_start, window_end) */
  Code *code;      /* the argument, compiled (NULL when none) */
  const Expr *by;  /* arg_max, arg_min: the second argument (else NULL) */
  Code *by_code;   /* it, compiled */
  const Set *set;  /* the set it is part of, named in error messages */
} Agg;

/* A key's tumbling window. */
typedef struct Tumbling {
  int64_t n;  /* tuples in the window */
  Acc acc[];  /* one per aggregate */
} Tumbling;

/* A key's running aggregate. */
typedef struct Running {
  int64_t n;    /* tuples so far */
  Tuple *first; /* the key's first tuple: the attributes the sets see */
  Acc acc[];    /* one per aggregate */
} Running;

typedef struct Aggregate {
  Arena *arena;   /* plan, aggregates and per-input arrays */
  OutPlan plan;   /* how output tuples are built */
  LetPlan lets;   /* the <let>s, evaluated per input tuple before the aggregates' arguments */
  WindowSpec win; /* the window */
  bool sliding;   /* sliding N */
  bool timed;     /* a time window (tumbling, hopping, session time) */
  int64_t size;   /* N of a count window */
  int64_t lateness; /* time windows */
  int time_slot;  /* time windows: the input's event-time attribute */
  int naggs;      /* aggregate calls */
  Agg *aggs;      /* by slot */
  ExprFunc *func; /* per slot: aggs[s].func */
  Type *type;     /* per slot: its argument's type */
  Value *args;    /* this input's argument value of each aggregate (sliding: then the by values) */
  Value *by;      /* this input's by value of each aggregate (arg_max, arg_min) */
  SlideSpec spec; /* sliding: the aggregates, for slide.c */
  Value *results; /* the emitting window's aggregate values, by slot */
  uint64_t arrivals; /* tumbling and running: tuples so far (their arrival numbers) */
  Tw tw;          /* time windows */
  Buf sortkey;    /* time windows: the sort key of the window being emitted (emit_window) */
  char first_late[512]; /* the first late tuple, described ("" while none) */
  Value *late_key;      /* its key's values (for a restore at another width; strings in arena) */
  bool has_late_key;
  KeyTable keys;  /* per key: a Tumbling, a Slide, a Running or a TwKey */
} Aggregate;

/* Records every aggregate call in e by its slot. */
static void collect_aggs(Aggregate *g, const Expr *e, const Set *s) {
  if (!e) return;
  if (e->kind == EXPR_CALL && e->func >= FUNC_COUNT) {
    sf_assert(e->slot >= 0 && e->slot < g->naggs);
    g->aggs[e->slot] = (Agg){.func = e->func, .arg = e->nargs ? e->args[0] : NULL,
                             .by = e->nargs > 1 ? e->args[1] : NULL, .set = s};
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

/* Memory of the windows, counted with the key table's (TwSpec.charge). */
static bool tw_charge(void *ctx, size_t more) {
  return keytable_charge(ctx, more);
}

static void tw_uncharge(void *ctx, size_t less) {
  keytable_uncharge(ctx, less);
}

/* The data block of a key for the window g has. */
static size_t key_data_size(const Aggregate *g) {
  size_t accs = sizeof(Acc) * (size_t)g->naggs;
  switch (g->win.kind) {
  case WIN_SLIDING: return slide_size(&g->spec);
  case WIN_RUNNING: return sizeof(Running) + accs;
  case WIN_TUMBLING: return sizeof(Tumbling) + accs;
  default: return sizeof(TwKey);
  }
}

static int aggregate_open(OpInst *op) {
  Aggregate *g = sf_xmalloc(sizeof *g);
  *g = (Aggregate){.arena = arena_new(), .time_slot = -1};
  op->state = g;
  const char *window = rt_param(op, "window");
  size_t at;
  if (window_parse(window, &g->win, &at) != NUM_OK)
    return rt_fail(op, "window must be 'tumbling N', 'sliding N', 'tumbling time SIZE', 'hopping time SIZE SLIDE', "
                       "'session time GAP' or 'running' with numbers from 1 to 9223372036854775807, got '%s'",
                   window ? window : "");
  g->sliding = g->win.kind == WIN_SLIDING;
  g->timed = g->win.kind == WIN_TUMBLING_TIME || g->win.kind == WIN_HOPPING_TIME || g->win.kind == WIN_SESSION_TIME;
  g->size = g->win.size;
  if (g->win.kind == WIN_HOPPING_TIME && (g->win.slide <= 0 || g->win.size % g->win.slide))
    return rt_fail(op, "window '%s': SLIDE must divide SIZE", window);
  const char *lateness = rt_param(op, "lateness");
  if (lateness && number_read(lateness, strlen(lateness), 0, INT64_MAX, &g->lateness) != NUM_OK)
    return rt_fail(op, "parameter 'lateness' must be an integer from 0 to 9223372036854775807, got '%s'", lateness);
  if (g->timed) {
    const Stream *in = op->op->ninputs && op->op->inputs[0].nstreams ? op->op->inputs[0].streams[0] : NULL;
    /* no executor: an instance of test_snapshot, which has no graph to give */
    g->time_slot = in ? stream_time_slot(op->exec ? op->exec->g : NULL, in) : -1;
    const Schema *ins = op->in_schema;
    if (g->time_slot < 0 || g->time_slot >= ins->nattrs || ins->attrs[g->time_slot].type != TYPE_INT)
      return rt_fail(op, "a time window needs an event time on its input (a source's 'time' forwarded unchanged)");
  }
  if (outplan_init(&g->plan, op, g->arena)) return -1;
  letplan_init(&g->lets, op->op, g->arena);
  for (int i = 0; i < op->op->nsets; i++) {
    int n = count_aggs(op->op->sets[i].expr);
    if (n > g->naggs) g->naggs = n;
  }
  size_t n = (size_t)g->naggs + 1;
  g->aggs = arena_alloc(g->arena, sizeof *g->aggs * n);
  g->args = arena_alloc(g->arena, sizeof *g->args * n * 2); /* sliding: the by values follow */
  g->by = g->args + g->naggs; /* where slide.c reads them (SlideSpec.by) */
  g->results = arena_alloc(g->arena, sizeof *g->results * n);
  g->func = arena_alloc(g->arena, sizeof *g->func * n);
  g->type = arena_alloc(g->arena, sizeof *g->type * n);
  for (int i = 0; i < op->op->nsets; i++) collect_aggs(g, op->op->sets[i].expr, &op->op->sets[i]);
  for (int s = 0; s < g->naggs; s++) {
    Agg *a = &g->aggs[s];
    if (a->arg) a->code = code_compile(a->arg, g->arena);
    if (a->by) a->by_code = code_compile(a->by, g->arena);
    g->func[s] = a->func;
    g->type[s] = a->arg ? a->arg->type : TYPE_NONE;
    if ((a->func == FUNC_WINDOW_START || a->func == FUNC_WINDOW_END) && !g->timed)
      return rt_fail(op, "window_start() and window_end() need a time window");
  }
  g->spec = (SlideSpec){.size = g->size, .naggs = g->naggs, .func = g->func, .type = g->type};
  if (keytable_init(&g->keys, op, key_data_size(g))) return -1;
  if (g->sliding)
    for (int s = 0; s < g->naggs; s++)
      if (g->func[s] == FUNC_COUNT_DISTINCT || g->func[s] == FUNC_ARG_MAX || g->func[s] == FUNC_ARG_MIN)
        g->spec.by = true; /* slide.c keeps the by values too (slide.h) */
  if (g->timed) {
    TwSpec spec = {.kind = g->win.kind, .size = g->win.size,
                   .slide = g->win.kind == WIN_TUMBLING_TIME ? g->win.size : g->win.slide, .lateness = g->lateness,
                   .naggs = g->naggs, .func = g->func, .type = g->type, .nkeys = g->keys.nkeys,
                   .keyslots = g->keys.slots, .charge = tw_charge, .uncharge = tw_uncharge, .ctx = &g->keys};
    tw_init(&g->tw, &spec);
  }
  return 0;
}

/* Folds this input's arguments (arrival number pos) into accumulators acc, which folded `seen`
 * tuples; false after rt_fail when the memory it needs is refused. */
static bool fold_all(Aggregate *g, Acc *acc, int64_t seen, uint64_t pos) {
  size_t more = 0;
  for (int s = 0; s < g->naggs; s++)
    if (acc_is_fold(g->func[s])) more += acc_add(g->func[s], &acc[s], seen, &g->args[s], &g->by[s], pos);
  return !more || keytable_charge(&g->keys, more);
}

/* g->results from accumulators over n tuples (start and end: a time window's bounds); -1, or the
 * first slot whose sum is no int64. */
static int results_of(Aggregate *g, const Acc *acc, int64_t n, int64_t start, int64_t end) {
  int bad = -1;
  for (int s = 0; s < g->naggs; s++) {
    if (g->func[s] == FUNC_WINDOW_START) g->results[s] = value_int(start);
    else if (g->func[s] == FUNC_WINDOW_END) g->results[s] = value_int(end);
    else if (!acc_value(g->func[s], g->type[s], &acc[s], n, &g->results[s]) && bad < 0) bad = s;
  }
  return bad;
}

/* The fault of a sum of slot s that is no int64, on tuple t. */
static int overflow_fail(OpInst *op, const Aggregate *g, int slot, const Tuple *t) {
  const Set *set = g->aggs[slot].set;
  char what[256];
  snprintf(what, sizeof what, "set '%s'", set->attr);
  return rt_eval_fail(op, what, set->text, t, "integer overflow of sum()");
}

/* Adds this input's arguments to its key's tumbling window; 1 when the window is complete, with
 * g->results set and the window emptied, else 0; -1 - s when slot s's sum is no int64; or INT_MIN
 * after rt_fail (memory). */
static int tumbling_add(Aggregate *g, Tumbling *w) {
  if (!fold_all(g, w->acc, w->n, g->arrivals++)) return INT32_MIN;
  if (++w->n < g->size) return 0;
  w->n = 0;
  int bad = results_of(g, w->acc, g->size, 0, 0);
  /* the values stay readable until the next fold; the distinct sets start again empty */
  for (int s = 0; s < g->naggs; s++)
    if (g->func[s] == FUNC_COUNT_DISTINCT) {
      keytable_uncharge(&g->keys, acc_bytes(&w->acc[s]));
      acc_release(&w->acc[s]);
    }
  return bad >= 0 ? -1 - bad : 1;
}

/* Remembers the first late tuple for the warning at the end. */
static void note_late(OpInst *op, Aggregate *g, const Tuple *t) {
  atomic_fetch_add_explicit(&op->n_late, 1, memory_order_relaxed);
  if (g->first_late[0]) return;
  tuple_describe(t, op->in_schema, g->first_late, sizeof g->first_late);
  g->has_late_key = true;
  g->late_key = arena_alloc(g->arena, sizeof *g->late_key * (size_t)(g->keys.nkeys + 1));
  for (int k = 0; k < g->keys.nkeys; k++) g->late_key[k] = t->v[g->keys.slots[k]];
  /* the key's strings are t's: copy them */
  for (int k = 0; k < g->keys.nkeys; k++)
    if (g->late_key[k].type == TYPE_STRING) {
      char *p = arena_alloc(g->arena, g->late_key[k].s.n + 1);
      memcpy(p, g->late_key[k].s.p, g->late_key[k].s.n);
      p[g->late_key[k].s.n] = 0;
      g->late_key[k].s.p = p;
    }
}

/* One input tuple; hash is its key's (keytable_hash_run), or NULL to hash it here. */
static int aggregate_tuple(OpInst *op, Tuple *t, const uint64_t *hash) {
  Aggregate *g = op->state;
  EvalEnv env = {.attrs = t->v, .scratch = op->scratch};
  if (g->lets.n && letplan_eval(&g->lets, op, &env, 0, g->lets.n, t)) goto fail;
  for (int s = 0; s < g->naggs; s++) {
    const Agg *a = &g->aggs[s];
    g->args[s] = value_int(0);
    g->by[s] = value_int(0);
    if (a->arg && keyed_eval(op, a->code, &env, &g->args[s], "set", a->set->attr, a->set->text, t)) goto fail;
    if (a->by && keyed_eval(op, a->by_code, &env, &g->by[s], "set", a->set->attr, a->set->text, t)) goto fail;
  }
  bool created;
  void *window = hash ? keytable_find_hashed(&g->keys, t, *hash, &created) : keytable_find(&g->keys, t, &created);
  if (!window) goto fail;
  int slot = -1;
  if (g->timed) {
    int rc = tw_add(&g->tw, window, t->v[g->time_slot].i, g->args, g->by, t);
    if (rc < 0) goto fail;
    if (rc == 1) note_late(op, g, t);
    tuple_unref(t);
    return 0;
  }
  if (g->win.kind == WIN_RUNNING) {
    Running *r = window;
    if (!r->first) {
      size_t bytes = sizeof *t + sizeof(Value) * (size_t)t->n;
      for (int v = 0; v < t->n; v++)
        if (t->v[v].type == TYPE_STRING) bytes += t->v[v].s.n + 1;
      if (!keytable_charge(&g->keys, bytes)) goto fail;
      r->first = tuple_ref(t);
    }
    if (!fold_all(g, r->acc, r->n, g->arrivals++)) goto fail;
    r->n++;
    slot = results_of(g, r->acc, r->n, 0, 0);
    if (slot < 0) {
      env.attrs = r->first->v;
      env.aggs = g->results;
      Tuple *out = outplan_build(&g->plan, op, &env, r->first);
      tuple_unref(t);
      return out ? rt_emit(op, 0, out) : -1;
    }
  } else if (g->sliding) {
    slot = slide_push(window, &g->spec, g->args, g->results);
  } else {
    int done = tumbling_add(g, window);
    if (done == INT32_MIN) goto fail;
    if (done == 0) {
      tuple_unref(t);
      return 0;
    }
    if (done < 0) slot = -1 - done;
  }
  if (slot >= 0) {
    overflow_fail(op, g, slot, t);
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

/* Emits out, a window's output, with its sort key (window end, window start, the key's values:
 * sortkey.c), so that a region's Merge puts it among the other replicas' as one instance emits
 * them (docs/design.md, "Sub-positions, ticks and time"). */
static int emit_window(OpInst *op, Aggregate *g, const TwWindow *w, Tuple *out) {
  buf_reset(&g->sortkey);
  sortkey_int(&g->sortkey, w->end);
  sortkey_int(&g->sortkey, w->start);
  for (int k = 0; k < g->tw.spec.nkeys; k++) sortkey_value(&g->sortkey, &w->first->v[g->tw.spec.keyslots[k]]);
  return rt_emit_keyed_copy(op, 0, out, g->sortkey.p, g->sortkey.n);
}

/* Emits every time window tick t closes, in order (timewin.h); 0 or -1. */
static int emit_closed(OpInst *op, int64_t t) {
  Aggregate *g = op->state;
  TwWindow **ws;
  size_t n = tw_close(&g->tw, t, &ws);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    TwWindow *w = ws[i];
    if (rc == 0) {
      int slot = results_of(g, w->acc, w->n, w->start, w->end);
      if (slot >= 0) {
        rc = overflow_fail(op, g, slot, w->first);
      } else {
        EvalEnv env = {.attrs = w->first->v, .scratch = op->scratch, .aggs = g->results};
        Tuple *out = outplan_build(&g->plan, op, &env, w->first);
        rc = out ? emit_window(op, g, w, out) : -1;
      }
    }
    tw_window_free(&g->tw, w);
  }
  free(ws);
  return rc;
}

/* A tick T: the windows it closes, then T - lateness (the final tick as it is). */
static int aggregate_tick(OpInst *op, int port, int64_t t) {
  Aggregate *g = op->state;
  if (!g->timed) return rt_emit_tick(op, 0, t);
  if (emit_closed(op, t) < 0) return -1;
  int64_t on = t == INT64_MAX ? t : t < INT64_MIN + g->lateness ? INT64_MIN : t - g->lateness;
  return rt_emit_tick(op, 0, on);
}

/* Incomplete tumbling windows are discarded; sliding and running windows have emitted already;
 * time windows were emitted by the final tick, which closes every one (those still open when no
 * final tick came are emitted now, as it would have). The late tuples are reported. */
static int aggregate_final(OpInst *op) {
  Aggregate *g = op->state;
  if (!g->timed) return 0;
  if (g->tw.nactive && emit_closed(op, INT64_MAX) < 0) return -1;
  unsigned long long late = atomic_load(&op->n_late);
  if (late)
    rt_warn(op, "%llu late tuple%s dropped (event time behind the windows' end + lateness); the first: %s", late,
            late == 1 ? "" : "s", g->first_late);
  return 0;
}

/* ---- checkpoints ----
 * A header (the window, its numbers, lateness and the number of aggregates) that a restore checks
 * against its own window, then for time windows the tick and arrivals (timewin.c) and the first
 * late tuple, then the KeyTable. A tumbling or running key's data is its count and every
 * accumulator as it is (acc_snapshot: the sums, the kept values, the distinct values; running:
 * its first tuple's values too), so a restored window goes on folding from the same bits. A
 * sliding key's data is its window (slide_snapshot); a time window key's, its windows and late
 * count (tw_key_snapshot). */

static void put_accs(const Aggregate *g, const Acc *acc, Buf *out) {
  for (int s = 0; s < g->naggs; s++) acc_snapshot(&acc[s], out);
}

/* Reads the accumulators back, counting their memory; 0 or -1 after rt_fail. */
static int get_accs(Aggregate *g, Acc *acc, SnapIn *in) {
  size_t bytes = 0;
  for (int s = 0; s < g->naggs && !in->bad; s++) {
    acc_restore(&acc[s], g->type[s], in);
    bytes += acc_bytes(&acc[s]);
  }
  return !bytes || keytable_charge(&g->keys, bytes) ? 0 : -1;
}

static void put_tumbling(const void *data, Buf *out, void *ctx) {
  const Aggregate *g = ctx;
  const Tumbling *w = data;
  snap_i64(out, w->n);
  put_accs(g, w->acc, out);
}

static int get_tumbling(void *data, SnapIn *in, void *ctx) {
  Aggregate *g = ctx;
  Tumbling *w = data;
  int64_t n = snap_get_i64(in);
  if (n < 0 || n >= g->size) in->bad = true;
  if (in->bad) return 0;
  if (get_accs(g, w->acc, in) < 0) return -1;
  /* a sum of at most N int64s (a complete window's stays until the next one starts) is below N * 2^63 */
  for (int s = 0; s < g->naggs; s++)
    if (w->acc[s].ihi < -g->size || w->acc[s].ihi > g->size) in->bad = true;
  if (!in->bad) w->n = n;
  return 0;
}

static void put_running(const void *data, Buf *out, void *ctx) {
  const Aggregate *g = ctx;
  const Running *r = data;
  snap_i64(out, r->n);
  if (!r->n) return;
  for (int v = 0; v < r->first->n; v++) snap_value(out, &r->first->v[v]);
  put_accs(g, r->acc, out);
}

static int get_running(void *data, SnapIn *in, void *ctx) {
  Aggregate *g = ctx;
  Running *r = data;
  int64_t n = snap_get_i64(in);
  if (n < 0) in->bad = true;
  if (in->bad || n == 0) return 0;
  int nvals = g->keys.op->in_schema->nattrs;
  Value *vals = sf_xmalloc(sizeof *vals * ((size_t)nvals + 1));
  for (int v = 0; v < nvals && !in->bad; v++) {
    snap_get_value(in, &vals[v]);
    if (vals[v].type != g->keys.op->in_schema->attrs[v].type) in->bad = true;
  }
  if (!in->bad) {
    r->first = tuple_new(vals, nvals);
    r->n = n;
  }
  free(vals);
  if (in->bad) return 0;
  if (!keytable_charge(&g->keys, sizeof *r->first + sizeof(Value) * (size_t)nvals)) return -1;
  return get_accs(g, r->acc, in);
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

static void put_timed(const void *data, Buf *out, void *ctx) {
  const Aggregate *g = ctx;
  tw_key_snapshot(&g->tw, data, out);
}

static int get_timed(void *data, SnapIn *in, void *ctx) {
  Aggregate *g = ctx;
  TwKey *k = data;
  if (tw_key_restore(&g->tw, k, in, g->keys.op->in_schema->nattrs) < 0) return -1;
  atomic_fetch_add(&g->keys.op->n_late, k->late);
  return 0;
}

static KeyPutFn *put_fn(const Aggregate *g) {
  return g->timed ? put_timed : g->sliding ? put_sliding : g->win.kind == WIN_RUNNING ? put_running : put_tumbling;
}

static KeyGetFn *get_fn(const Aggregate *g) {
  return g->timed ? get_timed : g->sliding ? get_sliding : g->win.kind == WIN_RUNNING ? get_running : get_tumbling;
}

static int aggregate_snapshot(OpInst *op, Buf *out) {
  Aggregate *g = op->state;
  snap_u64(out, (uint64_t)g->win.kind);
  snap_i64(out, g->win.size);
  snap_i64(out, g->win.slide);
  snap_i64(out, g->lateness);
  snap_u64(out, (uint64_t)g->naggs);
  if (g->timed) {
    tw_snapshot(&g->tw, out);
    snap_bytes(out, g->first_late, strlen(g->first_late));
    snap_bool(out, g->has_late_key);
    if (g->has_late_key)
      for (int k = 0; k < g->keys.nkeys; k++) snap_value(out, &g->late_key[k]);
  }
  keytable_snapshot(&g->keys, out, put_fn(g), g);
  return 0;
}

/* A window as its parameter reads, quoted ("'tumbling time 10' (lateness 5)"), for messages. */
static void window_text(WindowKind kind, int64_t size, int64_t slide, int64_t lateness, char *buf, size_t cap) {
  switch (kind) {
  case WIN_TUMBLING: snprintf(buf, cap, "'tumbling %lld'", (long long)size); return;
  case WIN_SLIDING: snprintf(buf, cap, "'sliding %lld'", (long long)size); return;
  case WIN_RUNNING: snprintf(buf, cap, "'running'"); return;
  case WIN_TUMBLING_TIME: snprintf(buf, cap, "'tumbling time %lld'", (long long)size); break;
  case WIN_HOPPING_TIME: snprintf(buf, cap, "'hopping time %lld %lld'", (long long)size, (long long)slide); break;
  case WIN_SESSION_TIME: snprintf(buf, cap, "'session time %lld'", (long long)size); break;
  default: snprintf(buf, cap, "of kind %d", (int)kind); return;
  }
  size_t n = strlen(buf);
  if (lateness && n < cap) snprintf(buf + n, cap - n, " (lateness %lld)", (long long)lateness);
}

static int aggregate_restore(OpInst *op, SnapIn *in) {
  Aggregate *g = op->state;
  uint64_t kind = snap_get_u64(in);
  int64_t size = snap_get_i64(in), slide = snap_get_i64(in), lateness = snap_get_i64(in);
  uint64_t naggs = snap_get_u64(in);
  if (in->bad) return keyed_restore_end(op, in);
  if (kind != (uint64_t)g->win.kind || size != g->win.size || slide != g->win.slide || lateness != g->lateness ||
      naggs != (uint64_t)g->naggs) {
    char theirs[128], ours[128];
    window_text((WindowKind)kind, size, slide, lateness, theirs, sizeof theirs);
    window_text(g->win.kind, g->win.size, g->win.slide, g->lateness, ours, sizeof ours);
    return rt_fail(op, "the snapshot is of a window %s with %llu aggregates, the operator's is %s with %d", theirs,
                   (unsigned long long)naggs, ours, g->naggs);
  }
  if (g->timed) {
    tw_restore(&g->tw, in);
    size_t n;
    const char *first = snap_get_bytes(in, &n);
    bool has_key = snap_get_bool(in);
    Value *key = arena_alloc(g->arena, sizeof *key * (size_t)(g->keys.nkeys + 1));
    for (int k = 0; has_key && k < g->keys.nkeys && !in->bad; k++) snap_get_value(in, &key[k]);
    if (n >= sizeof g->first_late) in->bad = true;
    if (in->bad) return keyed_restore_end(op, in);
    /* the first late tuple of a key this replica owns (the others' replicas report theirs) */
    if (has_key && !g->first_late[0] && rt_owns_key(op, key, g->keys.slots, g->keys.nkeys)) {
      memcpy(g->first_late, first, n);
      g->first_late[n] = 0;
      for (int k = 0; k < g->keys.nkeys; k++)
        if (key[k].type == TYPE_STRING) {
          char *p = arena_alloc(g->arena, key[k].s.n + 1);
          memcpy(p, key[k].s.p, key[k].s.n);
          p[key[k].s.n] = 0;
          key[k].s.p = p;
        }
      g->late_key = key;
      g->has_late_key = true;
    }
  }
  if (keytable_restore(&g->keys, op, in, get_fn(g), g)) return -1;
  return keyed_restore_end(op, in);
}

static void release_window(void *data, void *ctx) {
  Aggregate *g = ctx;
  if (g->timed) {
    tw_key_release(&g->tw, data);
  } else if (g->sliding) {
    slide_release(data, &g->spec);
  } else if (g->win.kind == WIN_RUNNING) {
    Running *r = data;
    for (int s = 0; s < g->naggs; s++) acc_release(&r->acc[s]);
    if (r->first) tuple_unref(r->first);
    r->first = NULL;
  } else {
    Tumbling *w = data;
    for (int s = 0; s < g->naggs; s++) acc_release(&w->acc[s]);
  }
}

static void aggregate_close(OpInst *op, bool ok) {
  Aggregate *g = op->state;
  if (!g) return;
  if (g->keys.arena) keytable_each(&g->keys, release_window, g);
  keytable_release(&g->keys);
  tw_release(&g->tw);
  buf_release(&g->sortkey);
  arena_free(g->arena);
  free(g);
  op->state = NULL;
}

const OpKindImpl op_aggregate = {
  .kind = KIND_AGGREGATE,
  .open = aggregate_open,
  .process = aggregate_process,
  .process_run = aggregate_process_run,
  .tick = aggregate_tick,
  .final = aggregate_final,
  .close = aggregate_close,
  .snapshot = aggregate_snapshot,
  .restore = aggregate_restore,
};
