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
 * the input's schema, the input tuple itself is emitted (no copy). */
#include "keyed.h"

#include <stdlib.h>

typedef struct Functor {
  Arena *arena;  /* the plan's arrays and the compiled expressions */
  OutPlan plan;  /* how output tuples are built */
  Code **init;   /* per state variable: its init, compiled */
  Code **update; /* per state variable: its update, compiled */
  Code *where;   /* `where`, compiled (NULL without one) */
  int nstates;   /* state variables */
  Value *before; /* the key's variables before this tuple's updates, when a set is written before
                    a state (strings copied into op->scratch) */
  KeyTable keys; /* per key: Value vals[nstates] then size_t caps[nstates] (held strings) */
} Functor;

static int functor_open(OpInst *op) {
  Functor *f = sf_xmalloc(sizeof *f);
  *f = (Functor){.arena = arena_new(), .nstates = op->op->nstates};
  op->state = f;
  if (outplan_init(&f->plan, op, f->arena)) return -1;
  if (op->op->where) f->where = code_compile(op->op->where, f->arena);
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

/* Finds (or creates from the inits) the state of t's key and runs the updates in order; env then
 * names those states. 0, or -1 after rt_eval_fail. */
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
  for (int k = 0; k < f->nstates; k++) {
    const StateVar *s = op->op->states[k];
    if (keyed_eval(op, f->update[k], env, &v, "update of state", s->name, s->text, t)) return -1;
    held_store(&vals[k], &caps[k], &v);
  }
  return 0;
}

static int functor_process(OpInst *op, int port, Tuple *t) {
  Functor *f = op->state;
  EvalEnv env = {.attrs = t->v, .scratch = op->scratch};
  if (f->nstates && functor_update(op, f, t, &env)) goto fail;
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
  arena_free(f->arena);
  free(f);
  op->state = NULL;
}

const OpKindImpl op_functor = {
  .kind = KIND_FUNCTOR,
  .open = functor_open,
  .process = functor_process,
  .final = functor_final,
  .close = functor_close,
  .snapshot = functor_snapshot,
  .restore = functor_restore,
};
