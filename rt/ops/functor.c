/* functor.c: the Functor kind. For each input tuple: update the state variables of its key (if the
 * operator has any), test `where`, and emit one tuple built from the `set`s and the attributes
 * forwarded by name.
 *
 * State lives per key of partitionBy; without partitionBy every tuple shares one state. A key's
 * variables start from their `init` expressions the first time the key is seen, then each update
 * runs in declaration order and sees the variables updated before it (sequential semantics). `where`
 * sees the updated state; a tuple that `where` drops has still updated it. `set` and `state` keep
 * their written order, which is evaluation order: a set sees the variables written before it
 * updated and the later ones as they were before this tuple (the updates run first, then `where`,
 * then the sets, each with that view of the state: OutPlan.before, a copy taken before the updates
 * when some set is written before some state). State
 * strings are held in buffers owned by the key, reused from update to update. Without sets, with
 * the input's schema, the input tuple itself is emitted (no copy). A run of tuples goes through a
 * Functor without state a run at a time (functor_process_run), with state a tuple at a time.
 * A `let` is evaluated where it is written: before the updates of the states written after it,
 * after those written before it (so it sees them updated); `where` and the sets see every let. A
 * Functor with lets also goes a tuple at a time. */
#include "keyed.h"

#include <stdlib.h>

typedef struct Functor {
  Arena *arena;  /* the plan's arrays and the compiled expressions */
  OutPlan plan;  /* how output tuples are built */
  LetPlan lets;  /* the <let>s, evaluated among the updates (Let.states_before) */
  Code **init;   /* per state variable: its init, compiled */
  Code **update; /* per state variable: its update, compiled */
  Code *where;   /* `where`, compiled (NULL without one) */
  int nstates;   /* state variables */
  Value *before; /* the key's variables before this tuple's updates, when a set is written before
                    a state (strings copied into op->scratch) */
  KeyTable keys; /* per key: Value vals[nstates] then size_t caps[nstates] (held strings) */
  Value *cols;   /* functor_process_run: per output attribute, its set's values over a run */
  Value *rows;   /* functor_process_run: the kept rows' output values, row by row */
  bool plain;    /* the output has no string attribute: a run's sets write into its tuples */
} Functor;

static int functor_open(OpInst *op) {
  Functor *f = sf_xmalloc(sizeof *f);
  *f = (Functor){.arena = arena_new(), .nstates = op->op->nstates};
  op->state = f;
  if (outplan_init(&f->plan, op, f->arena)) return -1;
  letplan_init(&f->lets, op->op, f->arena);
  if (op->op->where) f->where = code_compile(op->op->where, f->arena);
  f->plain = !f->plan.identity;
  for (int k = 0; k < f->plan.n; k++)
    if (op->out_schema->attrs[k].type == TYPE_STRING) f->plain = false;
  if (f->nstates == 0) return 0;
  f->init = arena_alloc(f->arena, sizeof *f->init * (size_t)f->nstates);
  f->update = arena_alloc(f->arena, sizeof *f->update * (size_t)f->nstates);
  if (f->plan.staged) f->before = arena_alloc(f->arena, sizeof *f->before * (size_t)f->nstates);
  for (int k = 0; k < f->nstates; k++) {
    f->init[k] = code_compile(op->op->states[k]->init, f->arena);
    f->update[k] = code_compile(op->op->states[k]->update, f->arena);
  }
  return keytable_init(&f->keys, op, (sizeof(Value) + sizeof(size_t)) * (size_t)f->nstates);
}

/* Finds (or creates from the inits) the state of t's key and runs the updates in order, each let
 * before the first update written after it; env then names those states. 0, or -1 after
 * rt_eval_fail. */
static int functor_update(OpInst *op, Functor *f, const Tuple *t, EvalEnv *env) {
  bool created;
  Value *vals = keytable_find(&f->keys, t, &created);
  if (!vals) return -1;
  size_t *caps = (size_t *)(vals + f->nstates);
  Value v;
  if (created) {
    EvalEnv none = {.scratch = op->scratch};
    for (int k = 0; k < f->nstates; k++) {
      const StateVar *s = op->op->states[k];
      if (keyed_eval(op, f->init[k], &none, &v, "init of state", s->name, s->init_text, t)) return -1;
      held_store(&vals[k], &caps[k], &v);
    }
  }
  env->states = vals;
  if (f->before) {
    for (int k = 0; k < f->nstates; k++)
      f->before[k] = vals[k].type == TYPE_STRING ? eval_concat(op->scratch, vals[k].s.p, vals[k].s.n, NULL, 0) : vals[k];
    f->plan.before = f->before;
  }
  int j = 0; /* lets evaluated */
  for (int k = 0; k < f->nstates; k++) {
    const StateVar *s = op->op->states[k];
    int upto = j;
    while (upto < f->lets.n && f->lets.lets[upto].states_before <= k) upto++;
    if (upto > j && letplan_eval(&f->lets, op, env, j, upto, t)) return -1;
    j = upto;
    if (keyed_eval(op, f->update[k], env, &v, "update of state", s->name, s->text, t)) return -1;
    held_store(&vals[k], &caps[k], &v);
  }
  return j < f->lets.n ? letplan_eval(&f->lets, op, env, j, f->lets.n, t) : 0;
}

static int functor_process(OpInst *op, int port, Tuple *t) {
  Functor *f = op->state;
  EvalEnv env = {.attrs = t->v, .scratch = op->scratch};
  if (f->nstates && functor_update(op, f, t, &env)) goto fail;
  if (!f->nstates && f->lets.n && letplan_eval(&f->lets, op, &env, 0, f->lets.n, t)) goto fail;
  if (f->where) {
    Value keep;
    if (keyed_eval(op, f->where, &env, &keep, "where", NULL, NULL, t)) goto fail;
    if (!keep.b) {
      tuple_unref(t);
      return 0;
    }
  }
  return outplan_emit(&f->plan, op, &env, t);
fail:
  tuple_unref(t);
  return -1;
}

/* A run through a Functor with state or lets: functor_process per tuple, as the runtime would call it. */
static int process_each(OpInst *op, int port, Item *items, int n) {
  for (int i = 0; i < n; i++) {
    op->cur_seq = items[i].seq;
    op->cur_src = items[i].src;
    op->cur_born = items[i].born;
    int rc = functor_process(op, port, items[i].t);
    arena_reset(op->scratch);
    if (rc < 0) {
      keyed_release_items(items + i + 1, n - i - 1);
      return -1;
    }
  }
  return 0;
}

/* A run through a Functor without state, up to CODE_RUN_MAX rows at a time: `where` over the rows
 * (code_eval_run), then each set over the kept rows, in output-attribute order as outplan_build
 * evaluates them; then the output tuples are built (or, for the identity plan, the kept inputs
 * kept), moved to the front of items and emitted as one run. A fault emits the rows before the
 * faulting one first, then reports the fault of that row as functor_process would. */
static int functor_process_run(OpInst *op, int port, Item *items, int n) {
  Functor *f = op->state;
  if (f->nstates || f->lets.n) return process_each(op, port, items, n);
  OutPlan *p = &f->plan;
  const Value *rows[CODE_RUN_MAX], *krows[CODE_RUN_MAX];
  Value keep[CODE_RUN_MAX];
  int kidx[CODE_RUN_MAX]; /* per kept row: its row in the chunk */
  Tuple *made[CODE_RUN_MAX]; /* per kept row: its output tuple */
  Tuple *drop[CODE_RUN_MAX]; /* the chunk's input tuples released */
  if (!f->cols && !p->identity && !f->plain) {
    f->cols = sf_xmalloc(sizeof *f->cols * (size_t)CODE_RUN_MAX * ((size_t)p->n + 1));
    f->rows = sf_xmalloc(sizeof *f->rows * (size_t)CODE_RUN_MAX * ((size_t)p->n + 1));
  }
  EvalEnv env = {.scratch = op->scratch};
  int out = 0;
  for (int base = 0; base < n; base += CODE_RUN_MAX) {
    int m = n - base < CODE_RUN_MAX ? n - base : CODE_RUN_MAX;
    for (int r = 0; r < m; r++) rows[r] = items[base + r].t->v;
    int fault = m, nk = 0; /* the faulting row (m: none) */
    const Code *bad = NULL;
    const Set *bad_set = NULL;
    if (f->where) {
      fault = code_eval_run(f->where, &env, rows, NULL, m, keep);
      if (fault < m) bad = f->where;
      for (int r = 0; r < fault; r++)
        if (keep[r].b) {
          kidx[nk] = r;
          krows[nk++] = rows[r];
        }
    } else {
      for (int r = 0; r < m; r++) {
        kidx[r] = r;
        krows[r] = rows[r];
      }
      nk = m;
    }
    int built = nk; /* kept rows whose sets all evaluate */
    if (f->plain && nk > 0) { /* the sets into the output tuples, then the forwarded attributes */
      size_t stride = tuple_new_blank_rows(p->n, nk, made);
      for (int k = 0; k < p->n; k++) {
        if (!p->set[k]) continue;
        int ok = code_eval_run_to(p->code[k], &env, krows, NULL, built, &made[0]->v[k], stride);
        if (ok < built) {
          built = ok;
          bad = p->code[k];
          bad_set = p->set[k];
        }
      }
      for (int k = 0; k < p->n; k++)
        if (!p->set[k])
          for (int j = 0; j < built; j++) made[j]->v[k] = krows[j][p->from[k]];
      tuple_unref_all(made + built, nk - built); /* the tuples of rows not built */
    }
    for (int k = 0; !p->identity && !f->plain && k < p->n; k++) {
      if (!p->set[k]) continue;
      int ok = code_eval_run(p->code[k], &env, krows, NULL, built, f->cols + (size_t)k * CODE_RUN_MAX);
      if (ok < built) {
        built = ok;
        bad = p->code[k];
        bad_set = p->set[k];
      }
    }
    if (built < nk) fault = kidx[built];
    /* the kept rows' output values, then their tuples in one slab, before any input tuple goes
     * (their strings point into the inputs and the scratch arena) */
    int nb = 0;
    for (int j = 0; !p->identity && !f->plain && j < nk && kidx[j] < fault; j++, nb++) {
      const Tuple *in = items[base + kidx[j]].t;
      Value *row = f->rows + (size_t)nb * p->n;
      for (int k = 0; k < p->n; k++)
        row[k] = p->set[k] ? f->cols[(size_t)k * CODE_RUN_MAX + (size_t)j] : in->v[p->from[k]];
    }
    if (!f->plain) tuple_new_rows(f->rows, p->n, nb, made);
    int ndrop = 0;
    for (int r = 0, j = 0; r < fault; r++) {
      Item *it = &items[base + r];
      if (j < nk && kidx[j] == r) {
        if (!p->identity) {
          drop[ndrop++] = it->t;
          it->t = made[j];
        }
        items[out++] = *it;
        j++;
      } else
        drop[ndrop++] = it->t;
    }
    tuple_unref_all(drop, ndrop); /* the inputs: one release per slab */
    if (__builtin_expect(bad != NULL, 0))
      return keyed_run_fail(op, items, out, &items[base + fault], n - base - fault, bad, bad_set ? "set" : "where",
                            bad_set ? bad_set->attr : NULL, bad_set ? bad_set->text : NULL);
  }
  return rt_emit_run(op, 0, items, out);
}

static int functor_final(OpInst *op) {
  return 0;
}

/* Checkpoints: nothing without state variables; else their number, then the KeyTable with each
 * key's variables (snap_value, declaration order). */
static void put_states(const void *data, Buf *out, void *ctx) {
  const Functor *f = ctx;
  const Value *vals = data;
  for (int k = 0; k < f->nstates; k++) snap_value(out, &vals[k]);
}

static int get_states(void *data, SnapIn *in, void *ctx) {
  OpInst *op = ctx;
  Functor *f = op->state;
  Value *vals = data;
  size_t *caps = (size_t *)(vals + f->nstates);
  for (int k = 0; k < f->nstates && !in->bad; k++) {
    Value v;
    snap_get_value(in, &v);
    if (v.type != op->op->states[k]->type) in->bad = true; /* another graph's state */
    else held_store(&vals[k], &caps[k], &v);
  }
  return 0;
}

static int functor_snapshot(OpInst *op, Buf *out) {
  Functor *f = op->state;
  if (f->nstates == 0) return 0;
  snap_u64(out, (uint64_t)f->nstates);
  keytable_snapshot(&f->keys, out, put_states, f);
  return 0;
}

static int functor_restore(OpInst *op, SnapIn *in) {
  Functor *f = op->state;
  if (f->nstates > 0) {
    uint64_t n = snap_get_u64(in);
    if (!in->bad && n != (uint64_t)f->nstates)
      return rt_fail(op, "the snapshot has %llu state variables, the operator %d", (unsigned long long)n, f->nstates);
    if (!in->bad && keytable_restore(&f->keys, op, in, get_states, op)) return -1;
  }
  return keyed_restore_end(op, in);
}

static void release_states(void *data, void *ctx) {
  int n = *(const int *)ctx;
  Value *vals = data;
  size_t *caps = (size_t *)(vals + n);
  for (int k = 0; k < n; k++) held_release(&vals[k], &caps[k]);
}

static void functor_close(OpInst *op, bool ok) {
  Functor *f = op->state;
  if (!f) return;
  keytable_each(&f->keys, release_states, &f->nstates);
  keytable_release(&f->keys);
  free(f->cols);
  free(f->rows);
  arena_free(f->arena);
  free(f);
  op->state = NULL;
}

const OpKindImpl op_functor = {
  .kind = KIND_FUNCTOR,
  .open = functor_open,
  .process = functor_process,
  .process_run = functor_process_run,
  .final = functor_final,
  .close = functor_close,
  .snapshot = functor_snapshot,
  .restore = functor_restore,
};
