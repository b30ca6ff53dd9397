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
 * A replica (a channel of a parallel region) is checked against its model as it runs (DESIGN.md,
 * "A model is a promise"): more than one tuple for one input under selectivity one or atmostone,
 * none under one, or any tuple while handling punctuation stops the job, naming the operator and
 * the model attribute it broke, before the offending tuple leaves the operator. */
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
  HANDLING_FINAL,   /* punctuation(SF_PUNCT_FINAL) */
} Handling;

struct sf_op {
  OpInst *inst;                  /* the runtime's instance */
  void *dl;                      /* dlopen handle */
  const struct sf_operator *vt;  /* the library's callbacks */
  void *state;                   /* what the library's open returned */
  bool opened;                   /* open succeeded: close must be called */
  bool failed;                   /* the job failed through this operator, or emitting failed */
  bool final_done;               /* SF_PUNCT_FINAL was delivered */
  uint64_t emitted;              /* operators without input: tuples emitted (their seq) */
  bool replica;                  /* a channel of a parallel region: its emissions are checked */
  Handling handling;             /* the callback running now */
  const Tuple *input;            /* HANDLING_TUPLE: the input tuple (for messages) */
  int emitted_now;               /* tuples emitted by the running callback */
};

struct sf_tuple {
  sf_op *op;            /* for error messages */
  const Schema *schema; /* the values' schema */
  Value *v;             /* values (a Tuple's, or owned when built) */
  int n;                /* how many */
  bool built;           /* made by sf_tuple_new: v and its strings are malloc'd */
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

sf_tuple *sf_tuple_new(sf_op *op) {
  const Schema *s = op->inst->out_schema;
  if (!s) {
    op_fail(op, "sf_tuple_new: the operator has no output");
    return NULL;
  }
  sf_tuple *t = sf_xmalloc(sizeof *t + sizeof(Value) * (size_t)s->nattrs);
  *t = (sf_tuple){ .op = op, .schema = s, .v = (Value *)(t + 1), .n = s->nattrs, .built = true };
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

/* ---- the model of a replica ---- */

static const char *selectivity_name(Selectivity s) {
  return s == SEL_ONE ? "one" : s == SEL_ATMOSTONE ? "atmostone" : "many";
}

/* The selectivity a replica's declared model promises, SEL_MANY when it promises nothing. */
static Selectivity promised_selectivity(const sf_op *op) {
  const Model *m = &op->inst->op->model;
  return m->declared ? m->sel : SEL_MANY;
}

/* Checks the emission just counted in op->emitted_now against the replica's model: 0, or fails the
 * job naming the attribute broken. Output emitted on a punctuation has no input tuple whose place
 * in the sequential order it could take, so a replica never emits there (DESIGN.md, rule 5). */
static int replica_may_emit(sf_op *op) {
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
    if (m->punct == PUNCT_CONSUMES)
      return op_fail(op, "emitted a tuple on window punctuation in a parallel region, but its model declares "
                         "punct=\"consumes\": it must not be replicated");
    return op_fail(op, "emitted a tuple on window punctuation, but its model does not declare "
                       "punct=\"consumes\" (which would keep it out of parallel regions)");
  case HANDLING_FINAL:
    if (m->final == FINAL_EMITS)
      return op_fail(op, "emitted a tuple on the final punctuation in a parallel region, but its model declares "
                         "final=\"emits\": it must not be replicated");
    return op_fail(op, "emitted a tuple on the final punctuation, but its model does not declare "
                       "final=\"emits\" (which would keep it out of parallel regions)");
  case HANDLING_NOTHING: break;
  }
  return 0;
}

/* After process returned without failing: a replica whose model says selectivity one must have
 * emitted exactly one tuple (the region's merge counts on it). 0, or fails the job. */
static int replica_processed(sf_op *op, const Tuple *t) {
  if (op->emitted_now > 0 || promised_selectivity(op) != SEL_ONE) return 0;
  char tuple[512];
  tuple_describe(t, op->inst->in_schema, tuple, sizeof tuple);
  return op_fail(op, "emitted no tuple on tuple %s, but its model declares selectivity=\"one\"", tuple);
}

int sf_emit(sf_op *op, sf_tuple *t) {
  if (!t) return op_fail(op, "sf_emit: the tuple is NULL");
  if (!t->built) return op_fail(op, "sf_emit: the tuple is an input (emit a tuple from sf_tuple_new)");
  if (t->op != op) {
    sf_tuple_free(t);
    return op_fail(op, "sf_emit: the tuple was made by another operator");
  }
  if (op->failed) {
    sf_tuple_free(t);
    return -1;
  }
  op->emitted_now++;
  if (op->replica && replica_may_emit(op) < 0) {
    sf_tuple_free(t);
    return -1;
  }
  Tuple *out = tuple_new(t->v, t->n);
  sf_tuple_free(t);
  if (op->inst->op->ninputs == 0) op->inst->cur_seq = op->inst->cur_src = op->emitted++;
  if (rt_emit(op->inst, 0, out) < 0) {
    op->failed = true;
    return -1;
  }
  return 0;
}

int sf_emit_window(sf_op *op) {
  if (op->failed) return -1;
  if (!op->inst->out_schema) return op_fail(op, "sf_emit_window: the operator has no output");
  Item it = { .kind = ITEM_WINDOW, .seq = op->inst->cur_seq, .src = op->inst->cur_src };
  if (rt_emit_item(op->inst, 0, it) < 0) {
    op->failed = true;
    return -1;
  }
  return 0;
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
  if (op->vt->abi_version != SF_OPERATOR_ABI)
    return op_fail(op, "'%s' in library '%s' was built for op.h ABI version %d, this sf-exec has version %d",
                   g->lib_symbol, g->lib_path, op->vt->abi_version, SF_OPERATOR_ABI);
  if (op->vt->open) {
    int rc = op->vt->open(op, &op->state);
    if (op->failed) return -1;
    if (rc != 0) return op_fail(op, "open returned %d", rc);
  }
  op->opened = true;
  return 0;
}

static int custom_open(OpInst *inst) {
  sf_op *op = sf_xmalloc(sizeof *op);
  *op = (sf_op){ .inst = inst, .replica = inst->op->region && inst->op->channel >= 0 };
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

static int custom_run(OpInst *inst) {
  return 0; /* an operator without input gets SF_PUNCT_FINAL from custom_final */
}

/* Calls the library's punctuation callback for `kind` (SF_PUNCT_*), if any. 0, or the job fails. */
static int call_punctuation(sf_op *op, int port, int kind) {
  if (!op->vt->punctuation) return 0;
  op->handling = kind == SF_PUNCT_FINAL ? HANDLING_FINAL : HANDLING_WINDOW;
  op->emitted_now = 0;
  int rc = op->vt->punctuation(op, op->state, port, kind);
  op->handling = HANDLING_NOTHING;
  return callback_result(op, rc, "punctuation");
}

static int custom_process(OpInst *inst, int port, Tuple *t) {
  sf_op *op = inst->state;
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
  if (rc == 0 && op->replica) rc = replica_processed(op, t);
  tuple_unref(t);
  return rc;
}

static int custom_window(OpInst *inst, int port) {
  sf_op *op = inst->state;
  if (call_punctuation(op, port, SF_PUNCT_WINDOW) < 0) return -1;
  if (!inst->out_schema) return 0;
  Item it = { .kind = ITEM_WINDOW, .seq = inst->cur_seq, .src = inst->cur_src };
  return rt_emit_item(inst, 0, it);
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
  free(op);
  inst->state = NULL;
}

const OpKindImpl op_custom = {
  .kind = KIND_CUSTOM,
  .open = custom_open,
  .run = custom_run,
  .process = custom_process,
  .window = custom_window,
  .final = custom_final,
  .close = custom_close,
};
