/* custom.c: the Custom kind, whose operators are shared libraries written against op.h. The kind
 * is this file with custom_abi.c (the op.h functions the libraries call) and custom_load.c
 * (finding and loading the library, ABI versions), sharing custom_priv.h. Here: op_custom, the
 * executor's callbacks, which call the library's; the model checks; the ordering service; the
 * checkpoint glue.
 *
 * An operator with a declared model is checked against it as it runs (docs/design.md, "Safety
 * rules": a model is a promise), in a parallel region or not: more than one tuple for one input
 * under selectivity one or atmostone, none under one, a tuple on window punctuation without
 * punct="consumes" or on the final punctuation without final="emits" stops the job, naming the
 * operator and the model attribute it broke, before the offending tuple leaves the operator. A
 * replica (a channel of a parallel region) emits on no punctuation at all. So a lying model fails
 * the sequential run too, with the message its replicas would give, not only the parallel one.
 *
 * Checkpoints (op.h ABI version 2): the kind's snapshot is the source's next sequence number, then
 * whether the library has a snapshot callback and, if so, the bytes it wrote (snap_bytes); restore
 * hands those bytes to the library's restore callback. A version-1 library's struct ends after
 * close: its snapshot and restore are never read (sf_op.snapshot and .restore stay NULL). With
 * checkpoints on, a library without the callbacks is refused at start-up when its model keeps
 * state (or it is a source, whose snapshot is taken inside sf_emit: rt.h). */
#include "custom_priv.h"

#include <stdlib.h>
#include <string.h>

/* ---- the declared model ---- */

static const char *selectivity_name(Selectivity s) {
  return s == SEL_ONE ? "one" : s == SEL_ATMOSTONE ? "atmostone" : "many";
}

/* The selectivity the declared model promises, SEL_MANY when it promises nothing. */
Selectivity custom_promised_selectivity(const sf_op *op) {
  const Model *m = &op->inst->op->model;
  return m->declared ? m->sel : SEL_MANY;
}

/* Checks the emission just counted in op->emitted_now against the model: 0, or fails the job naming
 * the attribute broken. Output emitted on a punctuation has no input tuple whose place in the
 * sequential order it could take, so a replica never emits there (docs/design.md, "Safety rules",
 * rule 5); an operator outside parallel regions may when its model says so. A source is the
 * exception: it gets only the final punctuation and emits its whole stream there (op.h). */
int custom_model_may_emit(sf_op *op) {
  const Model *m = &op->inst->op->model;
  switch (op->handling) {
  case HANDLING_TUPLE: {
    Selectivity sel = custom_promised_selectivity(op);
    if (op->emitted_now < 2 || (sel != SEL_ONE && sel != SEL_ATMOSTONE)) return 0;
    char tuple[512];
    tuple_describe(op->input, op->inst->in_schema, tuple, sizeof tuple);
    return custom_fail(op, "emitted %d tuples on tuple %s, but its model declares selectivity=\"%s\"",
                   op->emitted_now, tuple, selectivity_name(sel));
  }
  case HANDLING_WINDOW:
  case HANDLING_TICK: {
    const char *on = op->handling == HANDLING_TICK ? "a tick" : "window punctuation";
    if (m->punct == PUNCT_CONSUMES && (!op->replica || op->out_keys)) return 0; /* keyed: ordered */
    if (m->punct == PUNCT_CONSUMES)
      return custom_fail(op, "emitted a tuple on %s in a parallel region, but its model declares "
                         "punct=\"consumes\" without a key in its output to order such tuples by: it must "
                         "not be replicated", on);
    return custom_fail(op, "emitted a tuple on %s, but its model does not declare "
                       "punct=\"consumes\" (which would keep it out of parallel regions)", on);
  }
  case HANDLING_FINAL:
    if (op->inst->op->ninputs == 0) return 0; /* a source: its final punctuation is where it emits */
    if (m->final == FINAL_EMITS && (!op->replica || op->out_keys)) return 0;
    if (m->final == FINAL_EMITS)
      return custom_fail(op, "emitted a tuple on the final punctuation in a parallel region, but its model declares "
                         "final=\"emits\" without a key in its output to order such tuples by: it must not be "
                         "replicated");
    return custom_fail(op, "emitted a tuple on the final punctuation, but its model does not declare "
                       "final=\"emits\" (which would keep it out of parallel regions)");
  case HANDLING_NOTHING:
  case HANDLING_SNAPSHOT: /* refused before (sf_emit) */
  case HANDLING_RESTORE: break;
  }
  return 0;
}

/* After process returned without failing: an operator whose model says selectivity one must have
 * emitted exactly one tuple (a region's merge counts on it). 0, or fails the job. */
static int model_processed(sf_op *op, const Tuple *t) {
  if (op->emitted_now > 0 || custom_promised_selectivity(op) != SEL_ONE) return 0;
  char tuple[512];
  tuple_describe(t, op->inst->in_schema, tuple, sizeof tuple);
  return custom_fail(op, "emitted no tuple on tuple %s, but its model declares selectivity=\"one\"", tuple);
}

/* ---- the ordering service ---- */

/* Whether what the running callback emits is held for the ordering service. */
bool custom_holding(const sf_op *op) {
  return op->out_keys && (op->handling == HANDLING_WINDOW || op->handling == HANDLING_TICK ||
                          op->handling == HANDLING_FINAL);
}

/* Holds out (emitted at a punctuation) with its sort key: the key's values in the output. */
void custom_hold(sf_op *op, const Value *v, int n) {
  buf_reset(&op->keybuf);
  for (int k = 0; k < op->nkeys; k++) sortkey_value(&op->keybuf, &v[op->out_keys[k]]);
  if (op->nheld == op->held_cap) {
    op->held_cap = op->held_cap ? 2 * op->held_cap : 16;
    op->held = sf_xrealloc(op->held, sizeof *op->held * (size_t)op->held_cap);
  }
  struct Held *h = &op->held[op->nheld];
  h->t = tuple_new_keyed(v, n, op->keybuf.p, op->keybuf.n, &h->key);
  h->len = (uint32_t)op->keybuf.n;
  h->index = op->nheld++;
}

static int held_order(const void *a, const void *b) {
  const struct Held *x = a, *y = b;
  int c = sortkey_cmp(x->key, x->len, y->key, y->len);
  if (c) return c;
  return (x->index > y->index) - (x->index < y->index);
}

/* Sends the held tuples on, sorted. At the final punctuation they take the position after every
 * tuple (each channel's final punctuation has a position of its own). 0, or -1 when emitting
 * failed (the rest released). */
static int flush_held(sf_op *op, bool final) {
  if (op->nheld == 0) return 0;
  qsort(op->held, (size_t)op->nheld, sizeof *op->held, held_order);
  OpInst *inst = op->inst;
  uint64_t seq = inst->cur_seq;
  if (final) inst->cur_seq = UINT64_MAX;
  int rc = 0, i = 0;
  for (; i < op->nheld && rc == 0; i++) rc = rt_emit_keyed(inst, 0, op->held[i].t, op->held[i].key, op->held[i].len);
  for (; i < op->nheld; i++) tuple_unref(op->held[i].t);
  op->nheld = 0;
  inst->cur_seq = seq;
  if (rc < 0) op->failed = true;
  return rc;
}

/* ---- checkpoints ---- */

static int callback_result(sf_op *op, int rc, const char *what);

/* The input slots of a state="partitioned" model's keys, for sf_owns_key. 0, or fails the job. */
static int key_slots(sf_op *op) {
  const Model *m = &op->inst->op->model;
  if (!m->declared || m->state != STATE_PARTITIONED || m->nkeys == 0 || !op->inst->in_schema) return 0;
  op->key_slots = sf_xmalloc(sizeof *op->key_slots * (size_t)m->nkeys);
  for (int k = 0; k < m->nkeys; k++) {
    op->key_slots[k] = schema_find_attr(op->inst->in_schema, m->keys[k]);
    if (op->key_slots[k] < 0)
      return custom_fail(op, "the key '%s' of its model is not an attribute of its input", m->keys[k]);
  }
  op->nkeys = m->nkeys;
  const Schema *out = op->inst->out_schema;
  if (!out || op->inst->op->ninputs == 0) return 0;
  int *slots = sf_xmalloc(sizeof *slots * (size_t)m->nkeys);
  for (int k = 0; k < m->nkeys; k++) {
    slots[k] = schema_find_attr(out, m->keys[k]);
    if (slots[k] < 0 || out->attrs[slots[k]].type != op->inst->in_schema->attrs[op->key_slots[k]].type) {
      free(slots);
      return 0;
    }
  }
  op->out_keys = slots;
  return 0;
}


/* The kind's snapshot: the source's next seq, then whether the library has a snapshot callback
 * and the bytes it wrote. */
static int custom_snapshot(OpInst *inst, Buf *out) {
  sf_op *op = inst->state;
  if (op->failed) return -1;
  snap_u64(out, op->emitted);
  snap_bool(out, op->snapshot != NULL);
  if (!op->snapshot) return 0;
  Handling was = op->handling; /* a source's: inside sf_emit */
  op->handling = HANDLING_SNAPSHOT;
  buf_reset(&op->snap.buf);
  op->snap.active = true;
  sf_op *outer = custom_enter(op);
  int rc = op->snapshot(op, op->state, &op->snap);
  custom_leave(outer);
  op->snap.active = false;
  op->handling = was;
  if (callback_result(op, rc, "snapshot") < 0) return -1;
  snap_bytes(out, op->snap.buf.p, op->snap.buf.n);
  return 0;
}

static int custom_restore(OpInst *inst, SnapIn *in) {
  sf_op *op = inst->state;
  uint64_t emitted = snap_get_u64(in);
  bool has_state = snap_get_bool(in);
  size_t n = 0;
  const void *data = has_state ? snap_get_bytes(in, &n) : NULL;
  if (!snap_done(in)) return custom_fail(op, "snapshot truncated");
  if (inst->op->ninputs == 0) op->emitted = emitted; /* a source goes on from there */
  op->tick_synced = false; /* the first item tells it the tick it had (sync_tick) */
  if (!has_state) return 0;
  if (!op->restore)
    return custom_fail(op, "the checkpoint holds a snapshot of its state, but '%s' in library '%s' has no restore "
                       "callback", inst->op->lib_symbol, inst->op->lib_path);
  op->handling = HANDLING_RESTORE;
  sf_op *outer = custom_enter(op);
  int rc = op->restore(op, op->state, data, n);
  custom_leave(outer);
  op->handling = HANDLING_NOTHING;
  return callback_result(op, rc, "restore");
}

/* What the model says of the operator's state, NULL when it keeps none. */
static const char *model_state(const Model *m) {
  if (!m->declared) return "it has no <model>, so its state is unknown";
  if (m->state == STATE_PARTITIONED) return "its <model> state is \"partitioned\"";
  if (m->state == STATE_UNKNOWN) return "its <model> state is \"unknown\"";
  return NULL;
}

/* With checkpoints on: an operator keeping state, and every source (its position), needs both
 * callbacks; a stateless one needs none. */
static int custom_checkpointable(OpInst *inst) {
  sf_op *op = inst->state;
  const Op *g = inst->op;
  bool source = g->ninputs == 0;
  const char *state = model_state(&g->model);
  if ((!source && !state) || (op->snapshot && op->restore)) return 0;
  char lib[1024];
  if (op->abi < 2)
    snprintf(lib, sizeof lib, "'%s' in library '%s' is built for op.h ABI version %d, which has none",
             g->lib_symbol, g->lib_path, op->abi);
  else
    snprintf(lib, sizeof lib, "'%s' in library '%s' leaves it NULL", g->lib_symbol, g->lib_path);
  const char *missing = !op->snapshot ? "snapshot" : "restore";
  if (source)
    return custom_fail(op, "is a source, whose position a checkpoint must save, but has no %s callback (%s): give it "
                       "snapshot and restore callbacks (op.h ABI version 2; a source's snapshot is taken inside "
                       "sf_emit), or run the job without checkpoints", missing, lib);
  return custom_fail(op, "keeps state (%s) but has no %s callback (%s): give it snapshot and restore callbacks "
                     "(op.h ABI version 2), or run the job without checkpoints", state, missing, lib);
}

const Schema *custom_port_schema(sf_op *op, int port) {
  if (port == 0) return op->inst->in_schema;
  const Op *g = op->inst->op;
  if (port >= g->ninputs || g->inputs[port].nstreams < 1 || !g->inputs[port].streams) return NULL;
  const Stream *s = g->inputs[port].streams[0];
  return s ? s->schema : NULL;
}

/* ---- the kind ---- */

static void custom_close(OpInst *inst, bool ok);

/* custom_open's work; on failure custom_open releases what it set up. */
static int open_library(sf_op *op) {
  Op *g = op->inst->op;
  if (g->ninputs > 2 || g->noutputs > 1)
    return custom_fail(op, "a Custom operator has at most two input ports and one output port (op.h ABI %d), "
                       "this one has %d and %d", SF_OPERATOR_ABI, g->ninputs, g->noutputs);
  if (custom_load(op) < 0) return -1;
  if (g->ninputs == 2 && op->abi < 4)
    return custom_fail(op, "it has two input ports, which needs op.h ABI version 4 (SF_IN2); library '%s' has "
                       "version %d", g->lib_path, op->abi);
  if (key_slots(op) < 0) return -1;
  if (op->vt->open) {
    sf_op *outer = custom_enter(op);
    int rc = op->vt->open(op, &op->state);
    custom_leave(outer);
    if (op->failed) return -1;
    if (rc != 0) return custom_fail(op, "open returned %d", rc);
  }
  op->opened = true;
  op->tick_synced = true; /* until a restore: a fresh job's operators start without a tick */
  return 0;
}

static int custom_open(OpInst *inst) {
  sf_op *op = sf_xmalloc(sizeof *op);
  *op = (sf_op){ .inst = inst, .replica = inst->op->region && inst->op->channel >= 0 };
  op->checked = op->replica || inst->op->model.declared;
  op->snap.op = op;
  buf_init(&op->snap.buf);
  buf_init(&op->keybuf);
  inst->state = op;
  if (open_library(op) == 0) return 0;
  custom_close(inst, false); /* the executor closes only operators whose open succeeded */
  return -1;
}

/* Fails the job when a callback returned non-zero or failed through an sf_* call. */
static int callback_result(sf_op *op, int rc, const char *what) {
  if (op->failed) return -1;
  if (rc != 0) return custom_fail(op, "%s returned %d", what, rc);
  return 0;
}

static int custom_final(OpInst *inst);

/* A source gets its SF_PUNCT_FINAL here, while it runs: what it emits from there is the source's
 * stream, which checkpoints cut (a source that returned from run takes part in no more of them);
 * the final punctuation the executor delivers afterwards finds it done. */
static int custom_run(OpInst *inst) {
  return inst->op->ninputs == 0 ? custom_final(inst) : 0;
}

/* Calls the library's punctuation callback for `kind` (SF_PUNCT_*), if any. 0, or the job fails. */
static int call_punctuation(sf_op *op, int port, int kind) {
  if (!op->vt->punctuation) return 0;
  op->handling = kind == SF_PUNCT_FINAL ? HANDLING_FINAL : HANDLING_WINDOW;
  op->emitted_now = 0;
  sf_op *outer = custom_enter(op);
  int rc = op->vt->punctuation(op, op->state, port, kind);
  custom_leave(outer);
  op->handling = HANDLING_NOTHING;
  if (callback_result(op, rc, "punctuation") < 0) return -1;
  return flush_held(op, kind == SF_PUNCT_FINAL);
}

/* Calls the library's tick callback for t, if any. 0, or the job fails. */
static int call_tick(sf_op *op, int port, int64_t t) {
  if (!op->tick) return 0;
  op->handling = HANDLING_TICK;
  op->emitted_now = 0;
  sf_op *outer = custom_enter(op);
  int rc = op->tick(op, op->state, port, t);
  custom_leave(outer);
  op->handling = HANDLING_NOTHING;
  if (callback_result(op, rc, "tick") < 0) return -1;
  return flush_held(op, false);
}

/* Before the first item after a restore: the operator hears the tick it had at the checkpoint
 * (op.h), so it need not snapshot it. */
static int sync_tick(sf_op *op) {
  op->tick_synced = true;
  int64_t t = atomic_load_explicit(&op->inst->cur_tick, memory_order_relaxed);
  return t == TICK_NONE ? 0 : call_tick(op, 0, t);
}

static int custom_process(OpInst *inst, int port, Tuple *t) {
  sf_op *op = inst->state;
  if (!op->tick_synced && sync_tick(op) < 0) {
    tuple_unref(t);
    return -1;
  }
  int rc = 0;
  op->handling = HANDLING_TUPLE;
  op->input = t;
  op->emitted_now = 0;
  if (op->vt->process) {
    sf_tuple in = { .op = op, .schema = custom_port_schema(op, port), .v = t->v, .n = t->n, .built = false, .tuple = t };
    sf_op *outer = custom_enter(op);
    rc = op->vt->process(op, op->state, port, &in);
    custom_leave(outer);
  }
  op->handling = HANDLING_NOTHING;
  op->input = NULL;
  rc = callback_result(op, rc, "process");
  if (rc == 0 && op->checked) rc = model_processed(op, t);
  tuple_unref(t);
  return rc;
}

static int custom_window(OpInst *inst, int port) {
  sf_op *op = inst->state;
  if (!op->tick_synced && sync_tick(op) < 0) return -1;
  if (call_punctuation(op, port, SF_PUNCT_WINDOW) < 0) return -1;
  if (!inst->out_schema) return 0;
  Item it = { .kind = ITEM_WINDOW, .seq = inst->cur_seq, .src = inst->cur_src };
  return rt_emit_item(inst, 0, &it);
}

/* A tick: the library's callback (ABI 3), then the tick goes on. */
static int custom_tick(OpInst *inst, int port, int64_t t) {
  sf_op *op = inst->state;
  if (!op->tick_synced && sync_tick(op) < 0) return -1;
  if (call_tick(op, port, t) < 0) return -1;
  if (!inst->out_schema) return 0;
  return rt_emit_tick(inst, 0, t);
}

static int custom_final(OpInst *inst) {
  sf_op *op = inst->state;
  if (op->final_done) return 0;
  op->final_done = true;
  return call_punctuation(op, -1, SF_PUNCT_FINAL);
}

static void custom_close(OpInst *inst, bool ok) {
  sf_op *op = inst->state;
  if (!op) return;
  if (op->opened && op->vt->close) {
    sf_op *outer = custom_enter(op);
    op->vt->close(op, op->state);
    custom_leave(outer);
  }
  custom_release_kept(op); /* what the library still keeps (op.h: released after close) */
  custom_unload(op);
  buf_release(&op->snap.buf);
  free(op->key_slots);
  free(op->out_keys);
  for (int i = 0; i < op->nheld; i++) tuple_unref(op->held[i].t);
  free(op->held);
  buf_release(&op->keybuf);
  free(op);
  inst->state = NULL;
}

const OpKindImpl op_custom = {
  .kind = KIND_CUSTOM,
  .open = custom_open,
  .run = custom_run,
  .process = custom_process,
  .window = custom_window,
  .tick = custom_tick,
  .final = custom_final,
  .close = custom_close,
  .snapshot = custom_snapshot,
  .restore = custom_restore,
  .checkpointable = custom_checkpointable,
};
