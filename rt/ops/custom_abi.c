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

/* The schema of side (SF_IN, SF_OUT) for fn: NULL when the operator has no such port; *ok false
 * after failing the job on a side that is neither. */
static const Schema *side_schema(sf_op *op, int side, const char *fn, bool *ok) {
  *ok = true;
  if (side == SF_IN) return op->inst->in_schema;
  if (side == SF_OUT) return op->inst->out_schema;
  *ok = false;
  custom_fail(op, "%s: side %d is neither SF_IN (%d) nor SF_OUT (%d)", fn, side, SF_IN, SF_OUT);
  return NULL;
}

/* Attribute attr of side's schema for fn, or NULL after failing the job. */
static const Attr *side_attr(sf_op *op, int side, int attr, const char *fn) {
  bool ok;
  const Schema *s = side_schema(op, side, fn, &ok);
  if (!ok) return NULL;
  if (!s) {
    custom_fail(op, "%s: the operator has no %s", fn, side == SF_IN ? "input" : "output");
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

/* ---- tuples ---- */

/* The value of attribute attr of t when it has type `want`; otherwise fails the job and returns
 * NULL. `fn` names the caller in the message. */
static Value *attr_value(const sf_tuple *t, int attr, Type want, const char *fn) {
  if (!t) sf_die("%s of a NULL tuple", fn);
  if (attr < 0 || attr >= t->n) {
    custom_fail(t->op, "%s: attribute index %d is out of range (schema '%s' has %d attributes)", fn, attr,
            t->schema ? t->schema->name : "?", t->n);
    return NULL;
  }
  Value *v = &t->v[attr];
  if (v->type != want) {
    custom_fail(t->op, "%s: attribute '%s' is %s, not %s", fn,
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

void sf_copy(sf_tuple *t, const sf_tuple *from) {
  if (!t || !from) sf_die("sf_copy of a NULL tuple");
  if (!t->built) {
    custom_fail(t->op, "sf_copy: the tuple is an input (only tuples from sf_tuple_new can be set)");
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

/* ---- emitting ---- */

int sf_emit(sf_op *op, sf_tuple *t) {
  if (!t) return custom_fail(op, "sf_emit: the tuple is NULL");
  if (!t->built) return custom_fail(op, "sf_emit: the tuple is an input (emit a tuple from sf_tuple_new)");
  if (t->op != op) {
    sf_tuple_free(t);
    return custom_fail(op, "sf_emit: the tuple was made by another operator");
  }
  if (t->key) {
    sf_tuple_free(t);
    return custom_fail(op, "sf_emit: the tuple is a key from sf_key_new (emit a tuple from sf_tuple_new)");
  }
  if (op->failed) {
    sf_tuple_free(t);
    return -1;
  }
  if (op->handling == HANDLING_SNAPSHOT || op->handling == HANDLING_RESTORE) {
    sf_tuple_free(t);
    return custom_fail(op, "sf_emit: called from %s, which must not emit",
                   op->handling == HANDLING_SNAPSHOT ? "snapshot" : "restore");
  }
  op->emitted_now++;
  if (op->checked && custom_model_may_emit(op) < 0) {
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
  if (op->nkeys == 0) return true;
  if (t->schema != op->inst->in_schema) {
    custom_fail(op, "sf_owns_key: the tuple is not of the input schema (give an input tuple or one from sf_key_new)");
    return false;
  }
  Value vals[op->nkeys];
  for (int k = 0; k < op->nkeys; k++) vals[k] = t->v[op->key_slots[k]];
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
