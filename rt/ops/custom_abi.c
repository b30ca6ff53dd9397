/* custom_abi.c: part of the Custom kind (custom_priv.h lists its files): the functions of op.h,
 * the interface a Custom operator's library calls, on top of the runtime. An sf_op wraps the
 * OpInst; an sf_tuple is a view of a Tuple's values (an input) or a tuple being built. A misuse
 * of a function (a wrong index or type, setting an input, emitting from snapshot) fails the job
 * naming the operator, and the function returns 0, NULL or -1 and does nothing.
 *
 * The sf_* functions are called by the library, so the executable must export them (sf-exec and the
 * tests are linked with the dynamic list rt/CMakeLists.txt makes from op.h). */
#include "custom_priv.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char empty_string[1] = "";

/* ---- errors ---- */

int custom_fail(sf_op *op, const char *fmt, ...) {
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
  return custom_fail(op, "%s", msg);
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

_Static_assert(SF_INT == (int)TYPE_INT && SF_DOUBLE == (int)TYPE_DOUBLE && SF_STRING == (int)TYPE_STRING &&
                   SF_BOOL == (int)TYPE_BOOL, "op.h's sf_type is the runtime's Type");

/* The schema of side (SF_IN, SF_IN2, SF_OUT) for fn: NULL when the operator has no such port; *ok
 * false after failing the job on a side that is none of them. */
static const Schema *side_schema(sf_op *op, int side, const char *fn, bool *ok) {
  *ok = true;
  if (side == SF_IN) return op->inst->in_schema;
  if (side == SF_IN2) return custom_port_schema(op, 1);
  if (side == SF_OUT) return op->inst->out_schema;
  *ok = false;
  custom_fail(op, "%s: side %d is neither SF_IN (%d), SF_IN2 (%d) nor SF_OUT (%d)", fn, side, SF_IN, SF_IN2, SF_OUT);
  return NULL;
}

/* Attribute attr of side's schema for fn, or NULL after failing the job. */
static const Attr *side_attr(sf_op *op, int side, int attr, const char *fn) {
  bool ok;
  const Schema *s = side_schema(op, side, fn, &ok);
  if (!ok) return NULL;
  if (!s) {
    custom_fail(op, "%s: the operator has no %s", fn, side == SF_IN ? "input" : side == SF_IN2 ? "second input" : "output");
    return NULL;
  }
  if (attr < 0 || attr >= s->nattrs) {
    custom_fail(op, "%s: attribute index %d is out of range (schema '%s' has %d attributes)", fn, attr, s->name,
                s->nattrs);
    return NULL;
  }
  return &s->attrs[attr];
}

int sf_attr_count(sf_op *op, int side) {
  bool ok;
  const Schema *s = side_schema(op, side, "sf_attr_count", &ok);
  return s ? s->nattrs : 0;
}

const char *sf_attr_name(sf_op *op, int side, int attr) {
  const Attr *a = side_attr(op, side, attr, "sf_attr_name");
  return a ? a->name : NULL;
}

sf_type sf_attr_type(sf_op *op, int side, int attr) {
  const Attr *a = side_attr(op, side, attr, "sf_attr_type");
  return a ? (sf_type)a->type : (sf_type)0;
}

/* ---- kept tuples: handles ---- */

_Thread_local sf_op *custom_running;

_Static_assert(sizeof(uintptr_t) >= 8, "a kept tuple's handle holds a 31-bit slot and a 32-bit generation");
enum { KEPT_MAX = 0x7fffffff }; /* slots an instance may make */

static bool is_handle(const sf_tuple *t) {
  return ((uintptr_t)t & 1) != 0;
}

static const sf_tuple *handle_of(int slot, uint32_t gen) {
  return (const sf_tuple *)(uintptr_t)(((uint64_t)gen << 32) | ((uint64_t)slot << 1) | 1);
}

/* The instance running a library callback, for a kept tuple given to a function without an sf_op:
 * one used elsewhere (another thread of the library's own) cannot be looked up. */
static sf_op *running(const char *fn) {
  if (!custom_running) sf_die("%s: a kept tuple used outside the callbacks of the operator that kept it", fn);
  return custom_running;
}

/* The slot of op's that handle h names, or NULL after failing the job: released (its slot's
 * generation moved on), or never given out by op. */
static struct Kept *kept_slot(sf_op *op, const sf_tuple *h, const char *fn) {
  uint64_t u = (uint64_t)(uintptr_t)h;
  int slot = (int)((u >> 1) & KEPT_MAX);
  uint32_t gen = (uint32_t)(u >> 32);
  if (slot < op->nkept) {
    struct Kept *k = &op->kept[slot];
    if (k->gen == gen && k->t) return k;
    uint32_t since = k->gen - gen; /* releases of the slot since the handle was given */
    if (since > 0 && since < 0x80000000u) {
      custom_fail(op, "%s: the tuple was already released", fn);
      return NULL;
    }
  }
  custom_fail(op, "%s: the tuple is not one this operator kept (a handle from sf_tuple_retain)", fn);
  return NULL;
}

/* A new slot holding t (its reference taken) of schema s: its handle. */
static const sf_tuple *keep(sf_op *op, Tuple *t, const Schema *s, const char *fn) {
  static atomic_uint instances;
  if (!op->kept) {
    op->kept_free = -1;
    op->kept_gen0 = (atomic_fetch_add(&instances, 1) + 1) * 2654435761u; /* far apart */
  }
  int slot = op->kept_free;
  if (slot >= 0) {
    op->kept_free = op->kept[slot].next_free;
  } else {
    if (op->nkept == KEPT_MAX) {
      tuple_unref(t);
      custom_fail(op, "%s: more than %d tuples kept at once", fn, KEPT_MAX);
      return NULL;
    }
    if (op->nkept == op->kept_cap) {
      op->kept_cap = op->kept_cap ? (op->kept_cap > KEPT_MAX / 2 ? KEPT_MAX : 2 * op->kept_cap) : 16;
      op->kept = sf_xrealloc(op->kept, sizeof *op->kept * (size_t)op->kept_cap);
    }
    slot = op->nkept++;
    op->kept[slot].gen = op->kept_gen0;
  }
  struct Kept *k = &op->kept[slot];
  k->t = t;
  k->schema = s;
  k->next_free = -1;
  return handle_of(slot, k->gen);
}

void custom_release_kept(sf_op *op) {
  for (int i = 0; i < op->nkept; i++) tuple_unref(op->kept[i].t);
  free(op->kept);
  op->kept = NULL;
  op->nkept = op->kept_cap = 0;
  op->kept_free = -1;
}

/* ---- tuples ---- */

/* A tuple to read: an input, a tuple being built, or a kept one (its handle looked up). */
typedef struct View {
  sf_op *op;            /* whose */
  const Schema *schema; /* the values' schema */
  Value *v;             /* the values */
  int n;                /* how many */
} View;

/* The view of t, for fn; op is the caller's (NULL: the running instance's). False after failing
 * the job (a handle released or foreign). */
static bool view_of(sf_op *op, const sf_tuple *t, const char *fn, View *out) {
  if (!t) sf_die("%s of a NULL tuple", fn);
  if (!is_handle(t)) {
    *out = (View){ .op = t->op, .schema = t->schema, .v = t->v, .n = t->n };
    return true;
  }
  if (!op) op = running(fn);
  struct Kept *k = kept_slot(op, t, fn);
  if (!k) return false;
  *out = (View){ .op = op, .schema = k->schema, .v = k->t->v, .n = k->t->n };
  return true;
}

/* The name of attribute attr of a view, "?" when unknown. */
static const char *attr_name(const View *w, int attr) {
  return w->schema && attr >= 0 && attr < w->schema->nattrs ? w->schema->attrs[attr].name : "?";
}

/* The value of attribute attr of t when it has type `want`; otherwise fails the job and returns
 * NULL. `fn` names the caller in the message. */
static Value *attr_value(const sf_tuple *t, int attr, Type want, const char *fn) {
  View w;
  if (!view_of(NULL, t, fn, &w)) return NULL;
  if (attr < 0 || attr >= w.n) {
    custom_fail(w.op, "%s: attribute index %d is out of range (schema '%s' has %d attributes)", fn, attr,
                w.schema ? w.schema->name : "?", w.n);
    return NULL;
  }
  Value *v = &w.v[attr];
  if (v->type != want) {
    custom_fail(w.op, "%s: attribute '%s' is %s, not %s", fn, attr_name(&w, attr), type_name(v->type),
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
    custom_fail(op, "sf_tuple_new: the operator has no output");
    return NULL;
  }
  return tuple_of_schema(op, op->inst->out_schema, false);
}

sf_tuple *sf_key_new(sf_op *op) {
  if (!op->inst->in_schema) {
    custom_fail(op, "sf_key_new: the operator has no input");
    return NULL;
  }
  return tuple_of_schema(op, op->inst->in_schema, true);
}

/* The value to overwrite in a tuple being built, or NULL after failing the job. */
static Value *settable(sf_tuple *t, int attr, Type want, const char *fn) {
  if (is_handle(t)) {
    custom_fail(running(fn), "%s: the tuple is a kept one (only tuples from sf_tuple_new can be set)", fn);
    return NULL;
  }
  if (t && !t->built) {
    custom_fail(t->op, "%s: the tuple is an input (only tuples from sf_tuple_new can be set)", fn);
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

/* Sets attribute i of t, a tuple being built, to a copy of value v (of its type). */
static void put_value(sf_tuple *t, int i, const Value *v) {
  if (v->type == TYPE_STRING)
    sf_set_string(t, i, v->s.p, v->s.n);
  else
    t->v[i] = *v;
}

/* Whether t is a tuple being built, for fn: false after failing the job. */
static bool building(sf_tuple *t, const char *fn) {
  if (!t) sf_die("%s of a NULL tuple", fn);
  if (is_handle(t)) {
    custom_fail(running(fn), "%s: the tuple is a kept one (only tuples from sf_tuple_new can be set)", fn);
    return false;
  }
  if (!t->built) {
    custom_fail(t->op, "%s: the tuple is an input (only tuples from sf_tuple_new can be set)", fn);
    return false;
  }
  return true;
}

void sf_copy(sf_tuple *t, const sf_tuple *from) {
  if (!t || !from) sf_die("sf_copy of a NULL tuple");
  View f;
  if (!building(t, "sf_copy") || !view_of(t->op, from, "sf_copy", &f)) return;
  for (int i = 0; i < t->n && t->schema; i++) {
    const Attr *a = &t->schema->attrs[i];
    int k = f.schema == t->schema ? i : f.schema ? schema_find_attr(f.schema, a->name) : -1;
    if (k < 0 || k >= f.n || f.v[k].type != a->type) continue;
    put_value(t, i, &f.v[k]);
  }
}

int sf_copy_attrs(sf_op *op, sf_tuple *t, const sf_tuple *from, const int *from_attrs, const int *to_attrs, int n) {
  static const char fn[] = "sf_copy_attrs";
  if (!t || !from) return custom_fail(op, "%s: the tuple is NULL", fn);
  View f;
  if (!building(t, fn) || !view_of(op, from, fn, &f)) return -1;
  if (n < 0 || (n > 0 && (!from_attrs || !to_attrs)))
    return custom_fail(op, "%s: %d attributes to copy, from %s to %s", fn, n, from_attrs ? "a list" : "NULL",
                       to_attrs ? "a list" : "NULL");
  View w = { .op = op, .schema = t->schema, .v = t->v, .n = t->n };
  for (int i = 0; i < n; i++) { /* every pair checked before anything is copied */
    int a = from_attrs[i], b = to_attrs[i];
    if (a < 0 || a >= f.n)
      return custom_fail(op, "%s: pair %d: attribute index %d is out of range (the source's schema '%s' has %d "
                             "attributes)", fn, i, a, f.schema ? f.schema->name : "?", f.n);
    if (b < 0 || b >= t->n)
      return custom_fail(op, "%s: pair %d: attribute index %d is out of range (the destination's schema '%s' has %d "
                             "attributes)", fn, i, b, t->schema ? t->schema->name : "?", t->n);
    if (f.v[a].type != t->v[b].type)
      return custom_fail(op, "%s: pair %d: attribute '%s' is %s, but '%s' is %s", fn, i, attr_name(&f, a),
                         type_name(f.v[a].type), attr_name(&w, b), type_name(t->v[b].type));
  }
  Value *vals = n > 0 ? sf_xmalloc(sizeof *vals * (size_t)n) : NULL;
  for (int i = 0; i < n; i++) { /* every value copied before any is replaced: from may be t */
    vals[i] = f.v[from_attrs[i]];
    if (vals[i].type == TYPE_STRING) {
      char *p = sf_xmalloc(vals[i].s.n + 1);
      if (vals[i].s.n) memcpy(p, vals[i].s.p, vals[i].s.n);
      p[vals[i].s.n] = 0;
      vals[i].s.p = p;
    }
  }
  for (int i = 0; i < n; i++) {
    release_string(&t->v[to_attrs[i]]);
    t->v[to_attrs[i]] = vals[i];
  }
  free(vals);
  return 0;
}

void sf_tuple_free(sf_tuple *t) {
  if (is_handle(t)) {
    custom_fail(running("sf_tuple_free"), "sf_tuple_free: the tuple is a kept one (release it with sf_tuple_release)");
    return;
  }
  if (!t || !t->built) return;
  for (int i = 0; i < t->n; i++) release_string(&t->v[i]);
  free(t);
}

/* ---- emitting ---- */

/* Before emitting, for fn: 0 when op may emit now (the emission counted and checked against the
 * model), else -1, the job failing. */
static int may_emit(sf_op *op, const char *fn) {
  if (op->failed) return -1;
  if (op->handling == HANDLING_SNAPSHOT || op->handling == HANDLING_RESTORE)
    return custom_fail(op, "%s: called from %s, which must not emit", fn,
                       op->handling == HANDLING_SNAPSHOT ? "snapshot" : "restore");
  op->emitted_now++;
  if (op->checked && custom_model_may_emit(op) < 0) return -1;
  return 0;
}

/* Emits out (its reference taken) once may_emit said yes, and not held. */
static int emit_tuple(sf_op *op, Tuple *out) {
  bool source = op->inst->op->ninputs == 0;
  if (op->handling == HANDLING_TUPLE && custom_promised_selectivity(op) == SEL_MANY) { /* output n of the input */
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

int sf_emit(sf_op *op, sf_tuple *t) {
  if (!t) return custom_fail(op, "sf_emit: the tuple is NULL");
  if (is_handle(t)) return custom_fail(op, "sf_emit: the tuple is a kept one (emit it with sf_emit_kept)");
  if (!t->built) return custom_fail(op, "sf_emit: the tuple is an input (emit a tuple from sf_tuple_new)");
  if (t->op != op) {
    sf_tuple_free(t);
    return custom_fail(op, "sf_emit: the tuple was made by another operator");
  }
  if (t->key) {
    sf_tuple_free(t);
    return custom_fail(op, "sf_emit: the tuple is a key from sf_key_new (emit a tuple from sf_tuple_new)");
  }
  if (may_emit(op, "sf_emit") < 0) {
    sf_tuple_free(t);
    return -1;
  }
  if (custom_holding(op)) {
    custom_hold(op, t->v, t->n);
    sf_tuple_free(t);
    return 0;
  }
  Tuple *out = tuple_new(t->v, t->n);
  sf_tuple_free(t);
  return emit_tuple(op, out);
}

/* Whether tuples of schema a are tuples of schema b: the same attributes, names and types, in the
 * same order. */
static bool same_attrs(const Schema *a, const Schema *b) {
  if (a == b) return true;
  if (!a || !b || a->nattrs != b->nattrs) return false;
  for (int i = 0; i < a->nattrs; i++)
    if (a->attrs[i].type != b->attrs[i].type || strcmp(a->attrs[i].name, b->attrs[i].name) != 0) return false;
  return true;
}

int sf_emit_kept(sf_op *op, const sf_tuple *kept) {
  static const char fn[] = "sf_emit_kept";
  if (!kept) return custom_fail(op, "%s: the tuple is NULL", fn);
  if (!is_handle(kept)) return custom_fail(op, "%s: the tuple is not a kept one (emit it with sf_emit)", fn);
  struct Kept *k = kept_slot(op, kept, fn);
  if (!k) return -1;
  const Schema *out = op->inst->out_schema;
  if (!out) return custom_fail(op, "%s: the operator has no output", fn);
  if (!same_attrs(k->schema, out))
    return custom_fail(op, "%s: the tuple is of schema '%s', whose attributes are not those of the output schema "
                           "'%s' (build a tuple with sf_tuple_new and sf_copy)", fn, k->schema->name, out->name);
  if (may_emit(op, fn) < 0) return -1;
  if (custom_holding(op)) {
    custom_hold(op, k->t->v, k->t->n);
    return 0;
  }
  return emit_tuple(op, tuple_ref(k->t));
}

/* ---- keeping tuples ---- */

const sf_tuple *sf_tuple_retain(sf_op *op, const sf_tuple *t) {
  static const char fn[] = "sf_tuple_retain";
  if (!t) {
    custom_fail(op, "%s: the tuple is NULL", fn);
    return NULL;
  }
  if (is_handle(t)) { /* one more handle on the same tuple */
    struct Kept *k = kept_slot(op, t, fn);
    return k ? keep(op, tuple_ref(k->t), k->schema, fn) : NULL;
  }
  if (t->op != op) {
    custom_fail(op, "%s: the tuple belongs to another operator", fn);
    return NULL;
  }
  if (!t->built && t->tuple) /* an input: its own memory, or a copy when it lies in a slab (tuple_keep) */
    return keep(op, tuple_keep(t->tuple), t->schema, fn);
  return keep(op, tuple_new(t->v, t->n), t->schema, fn); /* being built: a copy of its values */
}

void sf_tuple_release(sf_op *op, const sf_tuple *kept) {
  static const char fn[] = "sf_tuple_release";
  if (!kept) return;
  if (!is_handle(kept)) {
    custom_fail(op, "%s: the tuple is not one this operator kept (a handle from sf_tuple_retain)", fn);
    return;
  }
  struct Kept *k = kept_slot(op, kept, fn);
  if (!k) return;
  tuple_unref(k->t);
  k->t = NULL;
  k->gen++;
  k->next_free = op->kept_free;
  op->kept_free = (int)(k - op->kept);
}

int sf_emit_window(sf_op *op) {
  if (op->failed) return -1;
  if (op->handling == HANDLING_SNAPSHOT || op->handling == HANDLING_RESTORE)
    return custom_fail(op, "sf_emit_window: called from %s, which must not emit",
                   op->handling == HANDLING_SNAPSHOT ? "snapshot" : "restore");
  if (!op->inst->out_schema) return custom_fail(op, "sf_emit_window: the operator has no output");
  Item it = { .kind = ITEM_WINDOW, .seq = op->inst->cur_seq, .src = op->inst->cur_src };
  if (rt_emit_item(op->inst, 0, &it) < 0) {
    op->failed = true;
    return -1;
  }
  return 0;
}

/* ---- checkpoints ---- */

bool sf_owns_key(sf_op *op, const sf_tuple *t) {
  if (!t) {
    custom_fail(op, "sf_owns_key: the tuple is NULL");
    return false;
  }
  View w;
  if (!view_of(op, t, "sf_owns_key", &w)) return false;
  if (op->nkeys == 0) return true;
  if (w.schema != op->inst->in_schema) {
    custom_fail(op, "sf_owns_key: the tuple is not of the input schema (give an input tuple or one from sf_key_new)");
    return false;
  }
  Value vals[op->nkeys];
  for (int k = 0; k < op->nkeys; k++) vals[k] = w.v[op->key_slots[k]];
  return rt_owns_key(op->inst, vals, op->key_slots, op->nkeys);
}

int sf_snapshot_write(sf_snapshot *out, const void *data, size_t n) {
  if (!out) sf_die("sf_snapshot_write to a NULL snapshot");
  sf_op *op = out->op;
  if (!out->active) return custom_fail(op, "sf_snapshot_write: called outside the snapshot callback");
  if (op->failed) return -1;
  if (n && !data) return custom_fail(op, "sf_snapshot_write: the data is NULL");
  buf_append(&out->buf, data, n);
  return 0;
}

/* The bytes of a tuple in a snapshot: a format byte (1), whose schema (0 the input's, 1 the
 * output's), the number of values, then each value (snap_value: its type, then its bytes). */
enum { TUPLE_FORMAT = 1 };

int sf_snapshot_write_tuple(sf_snapshot *out, const sf_tuple *t) {
  static const char fn[] = "sf_snapshot_write_tuple";
  if (!out) sf_die("%s to a NULL snapshot", fn);
  sf_op *op = out->op;
  if (!out->active) return custom_fail(op, "%s: called outside the snapshot callback", fn);
  if (op->failed) return -1;
  if (!t) return custom_fail(op, "%s: the tuple is NULL", fn);
  View w;
  if (!view_of(op, t, fn, &w)) return -1;
  int side = w.schema && w.schema == op->inst->in_schema ? 0 : w.schema && w.schema == op->inst->out_schema ? 1 : -1;
  if (side < 0) return custom_fail(op, "%s: the tuple is of neither the input nor the output schema", fn);
  char head[2] = { TUPLE_FORMAT, (char)side };
  buf_append(&out->buf, head, sizeof head);
  snap_u64(&out->buf, (uint64_t)w.n);
  for (int i = 0; i < w.n; i++) snap_value(&out->buf, &w.v[i]);
  return 0;
}

const sf_tuple *sf_snapshot_read_tuple(sf_op *op, const void *data, size_t n, size_t *used) {
  static const char fn[] = "sf_snapshot_read_tuple";
  if (used) *used = 0;
  if (n && !data) {
    custom_fail(op, "%s: the data is NULL", fn);
    return NULL;
  }
  SnapIn in = { .p = data, .n = n };
  const unsigned char *head = n >= 2 ? data : NULL;
  in.off = 2;
  const Schema *s = !head || head[0] != TUPLE_FORMAT ? NULL : head[1] == 0 ? op->inst->in_schema
                                                          : head[1] == 1 ? op->inst->out_schema : NULL;
  uint64_t count = s ? snap_get_u64(&in) : 0;
  if (!s || in.bad || count != (uint64_t)s->nattrs) {
    custom_fail(op, "%s: the bytes are not a tuple of this operator's schemas written by sf_snapshot_write_tuple", fn);
    return NULL;
  }
  Value vals[s->nattrs > 0 ? s->nattrs : 1];
  for (int i = 0; i < s->nattrs && !in.bad; i++) {
    snap_get_value(&in, &vals[i]);
    if (vals[i].type != s->attrs[i].type) in.bad = true;
  }
  if (in.bad) {
    custom_fail(op, "%s: the bytes are not a tuple of schema '%s' written by sf_snapshot_write_tuple (truncated, or "
                    "of other types)", fn, s->name);
    return NULL;
  }
  if (used) *used = in.off;
  return keep(op, tuple_new(vals, s->nattrs), s, fn);
}
