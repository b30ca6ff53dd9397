/* analyze.c: fills each operator's Model, the facts region formation reasons with: state and key,
 * selectivity, which attributes pass through unchanged, punctuation. Built-in kinds have fixed
 * models (their MODEL column in kinds.def, docs/language.md's "Models") refined by their
 * parameters here; Custom operators declare theirs, and without a declaration we assume the worst.
 * Runs after check, so expressions are typed. */
#include "sf.h"

#include <string.h>

static void forward(Graph *g, Model *m, const char *name) {
  for (int i = 0; i < m->nforwards; i++)
    if (!strcmp(m->forwards[i], name)) return;
  const char **items = arena_alloc(g->arena, sizeof(char *) * (size_t)(m->nforwards + 1));
  if (m->nforwards) memcpy(items, m->forwards, sizeof(char *) * (size_t)m->nforwards);
  items[m->nforwards++] = name;
  m->forwards = items;
}

/* Functor and FlatMap: an output attribute is forwarded when it is not set and the input has it with
 * the same type, or when it is set to exactly the same-named input attribute. */
static void forwards_of_sets(Graph *g, Op *op) {
  Schema *in = op_input_schema(op), *out = op_output_schema(op);
  if (!in || !out) return;
  for (int a = 0; a < out->nattrs; a++) {
    const Attr *at = &out->attrs[a];
    int k = schema_find_attr(in, at->name);
    if (k < 0 || in->attrs[k].type != at->type) continue;
    const Set *set = NULL;
    for (int s = 0; s < op->nsets; s++)
      if (op->sets[s].slot == a) set = &op->sets[s];
    int slot;
    if (!set || (set->expr && expr_is_attr(set->expr, &slot) && slot == k)) forward(g, &op->model, at->name);
  }
}

static void forwards_all(Graph *g, Op *op) {
  Schema *in = op_input_schema(op), *out = op_output_schema(op);
  if (!in || !out) return;
  for (int a = 0; a < out->nattrs; a++) {
    int k = schema_find_attr(in, out->attrs[a].name);
    if (k >= 0 && in->attrs[k].type == out->attrs[a].type) forward(g, &op->model, out->attrs[a].name);
  }
}

static void partition_by(Graph *g, Op *op) {
  op->model.keys = names_split(g->arena, op_param(op, "partitionBy"), &op->model.nkeys);
  op->model.state = op->model.nkeys > 0 ? STATE_PARTITIONED : STATE_UNKNOWN;
}

/* The partitionBy keys an Aggregate forwards: those in its input and output with one type that no
 * <set> gives another value. */
static void forwards_keys(Graph *g, Op *op) {
  Model *m = &op->model;
  Schema *in = op_input_schema(op), *out = op_output_schema(op);
  for (int k = 0; k < m->nkeys && in && out; k++) {
    int a = schema_find_attr(in, m->keys[k]), b = schema_find_attr(out, m->keys[k]);
    bool set = false;
    for (int s = 0; s < op->nsets; s++)
      if (b >= 0 && op->sets[s].slot == b) {
        int slot;
        set = !(op->sets[s].expr && expr_is_attr(op->sets[s].expr, &slot) && slot == a);
      }
    if (a >= 0 && b >= 0 && !set && in->attrs[a].type == out->attrs[b].type) forward(g, m, m->keys[k]);
  }
}

/* The model of one operator: its kind's row of kinds.def, then what its parameters refine. */
static void analyze_op(Graph *g, Op *op) {
  Model *m = &op->model;
  const KindInfo *kind = kind_info(op->kind);
  m->is_source = op->ninputs == 0;
  m->is_sink = op->noutputs == 0;
  if (kind->model_declared) {
    if (!m->declared) {
      m->state = STATE_UNKNOWN;
      m->sel = SEL_MANY;
      m->punct = PUNCT_NONE;
    } else if (m->forwards_all) {
      forwards_all(g, op); /* the list model_forwards reads; forwards_all stays, so `*` is emitted back */
    }
    return;
  }
  m->state = STATE_NONE;
  m->sel = kind->sel;
  m->punct = PUNCT_NONE;
  if (kind->keyed == KEYED_YES || (kind->keyed == KEYED_WITH_STATE && op->nstates > 0)) partition_by(g, op);
  /* what parameters change */
  if (op->kind == KIND_FUNCTOR && op_param(op, "where")) m->sel = SEL_ATMOSTONE;
  const char *missing = op->kind == KIND_LOOKUP ? op_param(op, "missing") : NULL;
  if (missing && !strcmp(missing, "keep")) m->sel = SEL_ONE; /* every input has its one output */
  m->emits_on_tick = false;
  if (op->kind == KIND_AGGREGATE) {
    /* tumbling N emits at most once per input; sliding N and running once each; a time window
     * emits at ticks only (each input adds to windows that a later tick closes) */
    WindowSpec w;
    size_t at;
    if (window_parse(op_param(op, "window"), &w, &at) == NUM_OK) {
      if (w.kind == WIN_SLIDING || w.kind == WIN_RUNNING) m->sel = SEL_ONE;
      m->emits_on_tick = window_is_time(w.kind);
    }
  }
  if (op->kind == KIND_JOIN) { /* state per key of `on` (the left side's names stand for the pairs) */
    JoinSpec j;
    const Schema *left = join_side_schema(op, 0);
    if (left && join_spec(op, g->arena, &j, NULL) == 0) {
      m->state = STATE_PARTITIONED;
      m->nkeys = j.nkeys;
      m->keys = arena_alloc(g->arena, sizeof(char *) * (size_t)(j.nkeys + 1));
      for (int k = 0; k < j.nkeys; k++) m->keys[k] = left->attrs[j.key[0][k]].name;
    } else {
      m->state = STATE_UNKNOWN;
    }
  }
  switch (kind->forwards) {
  case FORWARDS_ALL: forwards_all(g, op); break;
  case FORWARDS_SETS: forwards_of_sets(g, op); break;
  case FORWARDS_KEYS: forwards_keys(g, op); break;
  case FORWARDS_NONE: break;
  }
}

void graph_analyze(Graph *g) {
  for (int i = 0; i < g->nops; i++) analyze_op(g, g->ops[i]);
  g->analyzed = true;
}

bool model_forwards(const Op *op, const char *name) {
  for (int i = 0; i < op->model.nforwards; i++)
    if (!strcmp(op->model.forwards[i], name)) return true;
  return false;
}
