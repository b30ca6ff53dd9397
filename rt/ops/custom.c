/* custom.c: the Custom kind. Loads the operator's shared library, checks the sf_operator it
 * exports, and implements the functions of op.h on top of the runtime (an sf_op wraps the OpInst;
 * an sf_tuple is a view of a Tuple's values or a tuple being built).
 *
 * The library is looked up (a path without '/') in the graph file's directory, in
 * <dir of /proc/self/exe>/../SF_LIBDIR_REL, in each directory of $SF_LIBRARY_PATH, and finally by
 * the system's loader; the first candidate file that exists is loaded, and a failure to load it is
 * an error (no falling back to another copy). A path with '/' is used as it is.
 *
 * The sf_* functions are called by the library, so the executable must export them (sf-exec and the
 * tests are linked with ENABLE_EXPORTS).
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
#include "op.h"
#include "rt.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SF_LIBDIR_REL
#define SF_LIBDIR_REL "lib/streamfission"
#endif

/* Which callback of the library is running: what an emitted tuple answers. */
typedef enum Handling {
  HANDLING_NOTHING, /* open, or between callbacks */
  HANDLING_TUPLE,   /* process */
  HANDLING_WINDOW,  /* punctuation(SF_PUNCT_WINDOW) */
  HANDLING_TICK,    /* tick (ABI 3) */
  HANDLING_FINAL,   /* punctuation(SF_PUNCT_FINAL) */
  HANDLING_SNAPSHOT, /* snapshot (may run inside sf_emit: a source's) */
  HANDLING_RESTORE, /* restore */
} Handling;

/* The op.h ABI versions this sf-exec loads. */
enum { ABI_OLDEST = 1 };

/* The snapshot being written: sf_snapshot_write appends to `buf` while `active`. */
struct sf_snapshot {
  sf_op *op;   /* whose */
  Buf buf;     /* the library's bytes (kept between snapshots: its allocation is reused) */
  bool active; /* the snapshot callback is running */
};

struct sf_op {
  OpInst *inst;                  /* the runtime's instance */
  void *dl;                      /* dlopen handle */
  const struct sf_operator *vt;  /* the library's callbacks (version 1's part of the struct only,
                                    unless abi >= 2) */
  int abi;                       /* the library's abi_version */
  int (*snapshot)(sf_op *, void *, sf_snapshot *);         /* ABI 2; NULL when absent or version 1 */
  int (*restore)(sf_op *, void *, const void *, size_t);   /* ABI 2; NULL when absent or version 1 */
  int (*tick)(sf_op *, void *, int, int64_t);              /* ABI 3; NULL when absent or older */
  bool tick_synced;              /* the library was told the current tick a restore gave it */
  sf_snapshot snap;              /* what snapshot writes into */
  int *key_slots;                /* input attribute slots of the model's keys (sf_owns_key) */
  int nkeys;                     /* how many (0: not state="partitioned", every key is owned) */
  /* The ordering service (docs/design.md, "Sub-positions, ticks and time"): what a keyed operator
   * emits at a punctuation (window, tick, final) is held here until the callback returns, then
   * sent on in the order of its key values (then of emission), each with its sort key, so that a
   * region's Merge interleaves its replicas' emissions as one instance's. */
  int *out_keys;                 /* output attribute slots of the model's keys (NULL: not keyed, or
                                    a key missing from the output: emitted as they come) */
  struct Held { Tuple *t; const unsigned char *key; uint32_t len; int index; } *held;
  int nheld, held_cap;           /* tuples held, and room */
  Buf keybuf;                    /* the sort key being built */
  void *state;                   /* what the library's open returned */
  bool opened;                   /* open succeeded: close must be called */
  bool failed;                   /* the job failed through this operator, or emitting failed */
  bool final_done;               /* SF_PUNCT_FINAL was delivered */
  uint64_t emitted;              /* operators without input: tuples emitted (their seq) */
  bool replica;                  /* a channel of a parallel region: it never emits on punctuation */
  bool checked;                  /* a replica, or its model is declared: its emissions are checked */
  Handling handling;             /* the callback running now */
  const Tuple *input;            /* HANDLING_TUPLE: the input tuple (for messages) */
  int emitted_now;               /* tuples emitted by the running callback */
};

struct sf_tuple {
  sf_op *op;            /* for error messages */
  const Schema *schema; /* the values' schema */
  Value *v;             /* values (a Tuple's, or owned when built) */
  int n;                /* how many */
  bool built;           /* made by sf_tuple_new or sf_key_new: v and its strings are malloc'd */
  bool key;             /* made by sf_key_new: of the input schema, never emitted */
};

static const char empty_string[1] = "";

/* ---- errors ---- */

static int op_fail(sf_op *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int op_fail(sf_op *op, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!op->failed) rt_fail(op->inst, "%s", msg);
  op->failed = true;
  return -1;
}

int sf_error(sf_op *op, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return op_fail(op, "%s", msg);
}

/* ---- the operator ---- */

const char *sf_param(sf_op *op, const char *name) {
  return rt_param(op->inst, name);
}

int sf_input_attr(sf_op *op, const char *name) {
  return op->inst->in_schema ? schema_find_attr(op->inst->in_schema, name) : -1;
}

int sf_output_attr(sf_op *op, const char *name) {
  return op->inst->out_schema ? schema_find_attr(op->inst->out_schema, name) : -1;
}

/* ---- tuples ---- */

/* The value of attribute attr of t when it has type `want`; otherwise fails the job and returns
 * NULL. `fn` names the caller in the message. */
static Value *attr_value(const sf_tuple *t, int attr, Type want, const char *fn) {
  if (!t) sf_die("%s of a NULL tuple", fn);
  if (attr < 0 || attr >= t->n) {
    op_fail(t->op, "%s: attribute index %d is out of range (schema '%s' has %d attributes)", fn, attr,
            t->schema ? t->schema->name : "?", t->n);
    return NULL;
  }
  Value *v = &t->v[attr];
  if (v->type != want) {
    op_fail(t->op, "%s: attribute '%s' is %s, not %s", fn,
            t->schema && attr < t->schema->nattrs ? t->schema->attrs[attr].name : "?", type_name(v->type),
            type_name(want));
    return NULL;
  }
  return v;
}

int64_t sf_get_int(const sf_tuple *t, int attr) {
  Value *v = attr_value(t, attr, TYPE_INT, "sf_get_int");
  return v ? v->i : 0;
}

double sf_get_double(const sf_tuple *t, int attr) {
  Value *v = attr_value(t, attr, TYPE_DOUBLE, "sf_get_double");
  return v ? v->d : 0.0;
}

bool sf_get_bool(const sf_tuple *t, int attr) {
  Value *v = attr_value(t, attr, TYPE_BOOL, "sf_get_bool");
  return v ? v->b : false;
}

const char *sf_get_string(const sf_tuple *t, int attr, size_t *len) {
  Value *v = attr_value(t, attr, TYPE_STRING, "sf_get_string");
  if (len) *len = v ? v->s.n : 0;
  return v ? v->s.p : empty_string;
}

/* A tuple of schema s to build, every attribute 0, 0.0, false or "". */
static sf_tuple *tuple_of_schema(sf_op *op, const Schema *s, bool key) {
  sf_tuple *t = sf_xmalloc(sizeof *t + sizeof(Value) * (size_t)s->nattrs);
  *t = (sf_tuple){ .op = op, .schema = s, .v = (Value *)(t + 1), .n = s->nattrs, .built = true, .key = key };
  for (int i = 0; i < s->nattrs; i++) {
    switch (s->attrs[i].type) {
    case TYPE_INT: t->v[i] = value_int(0); break;
    case TYPE_DOUBLE: t->v[i] = value_double(0.0); break;
    case TYPE_BOOL: t->v[i] = value_bool(false); break;
    default: t->v[i] = value_string(empty_string, 0); break;
    }
  }
  return t;
}

sf_tuple *sf_tuple_new(sf_op *op) {
  if (!op->inst->out_schema) {
    op_fail(op, "sf_tuple_new: the operator has no output");
    return NULL;
  }
  return tuple_of_schema(op, op->inst->out_schema, false);
}

sf_tuple *sf_key_new(sf_op *op) {
  if (!op->inst->in_schema) {
    op_fail(op, "sf_key_new: the operator has no input");
    return NULL;
  }
  return tuple_of_schema(op, op->inst->in_schema, true);
}

/* The value to overwrite in a tuple being built, or NULL after failing the job. */
static Value *settable(sf_tuple *t, int attr, Type want, const char *fn) {
  if (t && !t->built) {
    op_fail(t->op, "%s: the tuple is an input (only tuples from sf_tuple_new can be set)", fn);
    return NULL;
  }
  return attr_value(t, attr, want, fn);
}

static void release_string(Value *v) {
  if (v->type == TYPE_STRING && v->s.p != empty_string) free((char *)v->s.p);
  v->s.p = empty_string;
  v->s.n = 0;
}

void sf_set_int(sf_tuple *t, int attr, int64_t x) {
  Value *v = settable(t, attr, TYPE_INT, "sf_set_int");
  if (v) v->i = x;
}

void sf_set_double(sf_tuple *t, int attr, double x) {
  Value *v = settable(t, attr, TYPE_DOUBLE, "sf_set_double");
  if (v) v->d = x;
}

void sf_set_bool(sf_tuple *t, int attr, bool x) {
  Value *v = settable(t, attr, TYPE_BOOL, "sf_set_bool");
  if (v) v->b = x;
}

void sf_set_string(sf_tuple *t, int attr, const char *s, size_t len) {
  Value *v = settable(t, attr, TYPE_STRING, "sf_set_string");
  if (!v) return;
  char *p = sf_xmalloc(len + 1);
  if (len) memcpy(p, s, len);
  p[len] = 0;
  release_string(v);
  v->s.p = p;
  v->s.n = len;
}

void sf_copy(sf_tuple *t, const sf_tuple *from) {
  if (!t || !from) sf_die("sf_copy of a NULL tuple");
  if (!t->built) {
    op_fail(t->op, "sf_copy: the tuple is an input (only tuples from sf_tuple_new can be set)");
    return;
  }
  for (int i = 0; i < t->n && t->schema; i++) {
    const Attr *a = &t->schema->attrs[i];
    int k = from->schema == t->schema ? i : from->schema ? schema_find_attr(from->schema, a->name) : -1;
    if (k < 0 || k >= from->n || from->v[k].type != a->type) continue;
    if (a->type == TYPE_STRING)
      sf_set_string(t, i, from->v[k].s.p, from->v[k].s.n);
    else
      t->v[i] = from->v[k];
  }
}

void sf_tuple_free(sf_tuple *t) {
  if (!t || !t->built) return;
  for (int i = 0; i < t->n; i++) release_string(&t->v[i]);
  free(t);
}

/* ---- the declared model ---- */

static const char *selectivity_name(Selectivity s) {
  return s == SEL_ONE ? "one" : s == SEL_ATMOSTONE ? "atmostone" : "many";
}

/* The selectivity the declared model promises, SEL_MANY when it promises nothing. */
static Selectivity promised_selectivity(const sf_op *op) {
  const Model *m = &op->inst->op->model;
  return m->declared ? m->sel : SEL_MANY;
}

/* Checks the emission just counted in op->emitted_now against the model: 0, or fails the job naming
 * the attribute broken. Output emitted on a punctuation has no input tuple whose place in the
 * sequential order it could take, so a replica never emits there (docs/design.md, "Safety rules",
 * rule 5); an operator outside parallel regions may when its model says so. A source is the
 * exception: it gets only the final punctuation and emits its whole stream there (op.h). */
static int model_may_emit(sf_op *op) {
  const Model *m = &op->inst->op->model;
  switch (op->handling) {
  case HANDLING_TUPLE: {
    Selectivity sel = promised_selectivity(op);
    if (op->emitted_now < 2 || (sel != SEL_ONE && sel != SEL_ATMOSTONE)) return 0;
    char tuple[512];
    tuple_describe(op->input, op->inst->in_schema, tuple, sizeof tuple);
    return op_fail(op, "emitted %d tuples on tuple %s, but its model declares selectivity=\"%s\"",
                   op->emitted_now, tuple, selectivity_name(sel));
  }
  case HANDLING_WINDOW:
  case HANDLING_TICK: {
    const char *on = op->handling == HANDLING_TICK ? "a tick" : "window punctuation";
    if (m->punct == PUNCT_CONSUMES && (!op->replica || op->out_keys)) return 0; /* keyed: ordered */
    if (m->punct == PUNCT_CONSUMES)
      return op_fail(op, "emitted a tuple on %s in a parallel region, but its model declares "
                         "punct=\"consumes\" without a key in its output to order such tuples by: it must "
                         "not be replicated", on);
    return op_fail(op, "emitted a tuple on %s, but its model does not declare "
                       "punct=\"consumes\" (which would keep it out of parallel regions)", on);
  }
  case HANDLING_FINAL:
    if (op->inst->op->ninputs == 0) return 0; /* a source: its final punctuation is where it emits */
    if (m->final == FINAL_EMITS && (!op->replica || op->out_keys)) return 0;
    if (m->final == FINAL_EMITS)
      return op_fail(op, "emitted a tuple on the final punctuation in a parallel region, but its model declares "
                         "final=\"emits\" without a key in its output to order such tuples by: it must not be "
                         "replicated");
    return op_fail(op, "emitted a tuple on the final punctuation, but its model does not declare "
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
  if (op->emitted_now > 0 || promised_selectivity(op) != SEL_ONE) return 0;
  char tuple[512];
  tuple_describe(t, op->inst->in_schema, tuple, sizeof tuple);
  return op_fail(op, "emitted no tuple on tuple %s, but its model declares selectivity=\"one\"", tuple);
}

/* Whether what the running callback emits is held for the ordering service. */
static bool holding(const sf_op *op) {
  return op->out_keys && (op->handling == HANDLING_WINDOW || op->handling == HANDLING_TICK ||
                          op->handling == HANDLING_FINAL);
}

/* Holds out (emitted at a punctuation) with its sort key: the key's values in the output. */
static void hold(sf_op *op, const Value *v, int n) {
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

int sf_emit(sf_op *op, sf_tuple *t) {
  if (!t) return op_fail(op, "sf_emit: the tuple is NULL");
  if (!t->built) return op_fail(op, "sf_emit: the tuple is an input (emit a tuple from sf_tuple_new)");
  if (t->op != op) {
    sf_tuple_free(t);
    return op_fail(op, "sf_emit: the tuple was made by another operator");
  }
  if (t->key) {
    sf_tuple_free(t);
    return op_fail(op, "sf_emit: the tuple is a key from sf_key_new (emit a tuple from sf_tuple_new)");
  }
  if (op->failed) {
    sf_tuple_free(t);
    return -1;
  }
  if (op->handling == HANDLING_SNAPSHOT || op->handling == HANDLING_RESTORE) {
    sf_tuple_free(t);
    return op_fail(op, "sf_emit: called from %s, which must not emit",
                   op->handling == HANDLING_SNAPSHOT ? "snapshot" : "restore");
  }
  op->emitted_now++;
  if (op->checked && model_may_emit(op) < 0) {
    sf_tuple_free(t);
    return -1;
  }
  if (holding(op)) {
    hold(op, t->v, t->n);
    sf_tuple_free(t);
    return 0;
  }
  Tuple *out = tuple_new(t->v, t->n);
  sf_tuple_free(t);
  bool source = op->inst->op->ninputs == 0;
  if (op->handling == HANDLING_TUPLE && promised_selectivity(op) == SEL_MANY) { /* output n of the input */
    if (rt_emit_nth(op->inst, 0, out, (uint64_t)(op->emitted_now - 1)) < 0) {
      op->failed = true;
      return -1;
    }
    return 0;
  }
  /* a source's snapshot may be taken inside rt_emit, before the tuple leaves: op->emitted is then
   * still this tuple's seq, the one a restored source emits first */
  if (source) op->inst->cur_seq = op->inst->cur_src = op->emitted;
  if (rt_emit(op->inst, 0, out) < 0) {
    op->failed = true;
    return -1;
  }
  if (source) op->emitted++;
  return 0;
}

int sf_emit_window(sf_op *op) {
  if (op->failed) return -1;
  if (op->handling == HANDLING_SNAPSHOT || op->handling == HANDLING_RESTORE)
    return op_fail(op, "sf_emit_window: called from %s, which must not emit",
                   op->handling == HANDLING_SNAPSHOT ? "snapshot" : "restore");
  if (!op->inst->out_schema) return op_fail(op, "sf_emit_window: the operator has no output");
  Item it = { .kind = ITEM_WINDOW, .seq = op->inst->cur_seq, .src = op->inst->cur_src };
  if (rt_emit_item(op->inst, 0, &it) < 0) {
    op->failed = true;
    return -1;
  }
  return 0;
}

/* ---- checkpoints ---- */

static int callback_result(sf_op *op, int rc, const char *what);

/* "versions 1 and 2" (every version from ABI_OLDEST to SF_OPERATOR_ABI), into buf. */
static const char *supported_versions(char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "version%s", ABI_OLDEST < SF_OPERATOR_ABI ? "s" : "");
  for (int v = ABI_OLDEST; v <= SF_OPERATOR_ABI && n < cap; v++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%d", v == ABI_OLDEST ? " " : v == SF_OPERATOR_ABI ? " and " : ", ", v);
  return buf;
}

/* The input slots of a state="partitioned" model's keys, for sf_owns_key. 0, or fails the job. */
static int key_slots(sf_op *op) {
  const Model *m = &op->inst->op->model;
  if (!m->declared || m->state != STATE_PARTITIONED || m->nkeys == 0 || !op->inst->in_schema) return 0;
  op->key_slots = sf_xmalloc(sizeof *op->key_slots * (size_t)m->nkeys);
  for (int k = 0; k < m->nkeys; k++) {
    op->key_slots[k] = schema_find_attr(op->inst->in_schema, m->keys[k]);
    if (op->key_slots[k] < 0)
      return op_fail(op, "the key '%s' of its model is not an attribute of its input", m->keys[k]);
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


bool sf_owns_key(sf_op *op, const sf_tuple *t) {
  if (!t) {
    op_fail(op, "sf_owns_key: the tuple is NULL");
    return false;
  }
  if (op->nkeys == 0) return true;
  if (t->schema != op->inst->in_schema) {
    op_fail(op, "sf_owns_key: the tuple is not of the input schema (give an input tuple or one from sf_key_new)");
    return false;
  }
  Value vals[op->nkeys];
  for (int k = 0; k < op->nkeys; k++) vals[k] = t->v[op->key_slots[k]];
  return rt_owns_key(op->inst, vals, op->key_slots, op->nkeys);
}

int sf_snapshot_write(sf_snapshot *out, const void *data, size_t n) {
  if (!out) sf_die("sf_snapshot_write to a NULL snapshot");
  sf_op *op = out->op;
  if (!out->active) return op_fail(op, "sf_snapshot_write: called outside the snapshot callback");
  if (op->failed) return -1;
  if (n && !data) return op_fail(op, "sf_snapshot_write: the data is NULL");
  buf_append(&out->buf, data, n);
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
  int rc = op->snapshot(op, op->state, &op->snap);
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
  if (!snap_done(in)) return op_fail(op, "snapshot truncated");
  if (inst->op->ninputs == 0) op->emitted = emitted; /* a source goes on from there */
  op->tick_synced = false; /* the first item tells it the tick it had (sync_tick) */
  if (!has_state) return 0;
  if (!op->restore)
    return op_fail(op, "the checkpoint holds a snapshot of its state, but '%s' in library '%s' has no restore "
                       "callback", inst->op->lib_symbol, inst->op->lib_path);
  op->handling = HANDLING_RESTORE;
  int rc = op->restore(op, op->state, data, n);
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
    return op_fail(op, "is a source, whose position a checkpoint must save, but has no %s callback (%s): give it "
                       "snapshot and restore callbacks (op.h ABI version 2; a source's snapshot is taken inside "
                       "sf_emit), or run the job without checkpoints", missing, lib);
  return op_fail(op, "keeps state (%s) but has no %s callback (%s): give it snapshot and restore callbacks "
                     "(op.h ABI version 2), or run the job without checkpoints", state, missing, lib);
}

/* ---- loading the library ---- */

/* Directory of the running executable, or "" when /proc/self/exe cannot be read. */
static void exe_dir(char *dir, size_t cap) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  dir[0] = 0;
  if (n <= 0) return;
  path[n] = 0;
  char *slash = strrchr(path, '/');
  if (!slash) return;
  *slash = 0;
  snprintf(dir, cap, "%s", path);
}

/* Loads `path` (as written in the graph). Returns the handle, or NULL after rt_fail. */
static void *load_library(sf_op *op, const char *path) {
  const int flags = RTLD_NOW | RTLD_LOCAL;
  if (strchr(path, '/')) {
    void *h = dlopen(path, flags);
    if (!h) op_fail(op, "cannot load library '%s': %s", path, dlerror());
    return h;
  }
  Buf dirs;
  buf_init(&dirs);
  const char *graph_dir = op->inst->graph_dir && *op->inst->graph_dir ? op->inst->graph_dir : ".";
  buf_puts(&dirs, graph_dir);
  char exe[PATH_MAX];
  exe_dir(exe, sizeof exe);
  if (*exe) {
    buf_putc(&dirs, ':');
    buf_puts(&dirs, exe);
    buf_puts(&dirs, "/../" SF_LIBDIR_REL);
  }
  const char *env = getenv("SF_LIBRARY_PATH");
  if (env && *env) {
    buf_putc(&dirs, ':');
    buf_puts(&dirs, env);
  }
  /* dirs: candidate directories separated by ':' (empty entries are skipped) */
  Buf tried, cand;
  buf_init(&tried);
  buf_init(&cand);
  void *h = NULL;
  bool found = false;
  for (const char *d = dirs.p; !found;) {
    const char *colon = strchr(d, ':');
    size_t n = colon ? (size_t)(colon - d) : strlen(d);
    if (n) {
      buf_reset(&cand);
      buf_append(&cand, d, n);
      buf_putc(&cand, '/');
      buf_puts(&cand, path);
      if (access(cand.p, F_OK) == 0) {
        found = true;
        h = dlopen(cand.p, flags);
        if (!h) op_fail(op, "cannot load library '%s': %s", cand.p, dlerror());
      } else {
        buf_puts(&tried, tried.n ? ", '" : "'");
        buf_append(&tried, d, n);
        buf_putc(&tried, '\'');
      }
    }
    if (!colon) break;
    d = colon + 1;
  }
  if (!found) {
    h = dlopen(path, flags);
    if (!h)
      op_fail(op, "cannot find library '%s' (looked in %s and the system's library path): %s", path, tried.p,
              dlerror());
  }
  buf_release(&dirs);
  buf_release(&tried);
  buf_release(&cand);
  return h;
}

/* ---- the kind ---- */

static void custom_close(OpInst *inst, bool ok);

/* custom_open's work; on failure custom_open releases what it set up. */
static int open_library(sf_op *op) {
  Op *g = op->inst->op;
  if (g->ninputs > 1 || g->noutputs > 1)
    return op_fail(op, "a Custom operator has at most one input port and one output port (op.h ABI %d), "
                       "this one has %d and %d", SF_OPERATOR_ABI, g->ninputs, g->noutputs);
  if (!g->lib_path || !g->lib_symbol) return op_fail(op, "needs a <library path=... symbol=...>");
  op->dl = load_library(op, g->lib_path);
  if (!op->dl) return -1;
  dlerror();
  op->vt = dlsym(op->dl, g->lib_symbol);
  if (!op->vt) return op_fail(op, "library '%s' has no symbol '%s'", g->lib_path, g->lib_symbol);
  op->abi = op->vt->abi_version;
  if (op->abi < ABI_OLDEST || op->abi > SF_OPERATOR_ABI)
  {
    char versions[64];
    return op_fail(op, "'%s' in library '%s' was built for op.h ABI version %d, this sf-exec supports %s",
                   g->lib_symbol, g->lib_path, op->abi, supported_versions(versions, sizeof versions));
  }
  if (op->abi >= 2) { /* a version-1 struct ends after close: never read further */
    op->snapshot = op->vt->snapshot;
    op->restore = op->vt->restore;
  }
  if (op->abi >= 3) op->tick = op->vt->tick; /* a version-2 struct ends after restore */
  if (key_slots(op) < 0) return -1;
  if (op->vt->open) {
    int rc = op->vt->open(op, &op->state);
    if (op->failed) return -1;
    if (rc != 0) return op_fail(op, "open returned %d", rc);
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
  if (rc != 0) return op_fail(op, "%s returned %d", what, rc);
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
  int rc = op->vt->punctuation(op, op->state, port, kind);
  op->handling = HANDLING_NOTHING;
  if (callback_result(op, rc, "punctuation") < 0) return -1;
  return flush_held(op, kind == SF_PUNCT_FINAL);
}

/* Calls the library's tick callback for t, if any. 0, or the job fails. */
static int call_tick(sf_op *op, int port, int64_t t) {
  if (!op->tick) return 0;
  op->handling = HANDLING_TICK;
  op->emitted_now = 0;
  int rc = op->tick(op, op->state, port, t);
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
    sf_tuple in = { .op = op, .schema = inst->in_schema, .v = t->v, .n = t->n, .built = false };
    rc = op->vt->process(op, op->state, port, &in);
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
  if (op->opened && op->vt->close) op->vt->close(op, op->state);
  if (op->dl) dlclose(op->dl);
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
