/* time.c: event time (docs/language.md, "Event time"). Which attribute of each stream is its event
 * time, followed from the sources that declare one (`time`) along what the operators forward
 * unchanged; the tick period of each source; and the checks that refuse an operator that needs
 * event time on a stream without one, naming the operator upstream that dropped it.
 * sf-xform and sf-exec both read it, on input graphs and on rewritten ones (Split and Merge forward
 * every attribute; replicas keep their parameters, so they keep their windows). */
#include "sf.h"

#include <stdlib.h>
#include <string.h>

bool op_time_window(const Op *op, WindowSpec *w) {
  size_t at;
  return op->kind == KIND_AGGREGATE && window_parse(op_param(op, "window"), w, &at) == NUM_OK &&
         window_is_time(w->kind);
}

/* The first output attribute (schema order) an Aggregate sets to exactly window_end(), or -1. */
static int window_end_slot(const Op *op, const Schema *out) {
  for (int a = 0; out && a < out->nattrs; a++)
    for (int i = 0; i < op->nsets; i++) {
      const Expr *e = op->sets[i].expr;
      if (op->sets[i].slot == a && e && e->kind == EXPR_CALL && e->func == FUNC_WINDOW_END) return a;
    }
  return -1;
}

/* The event time of one input port: its streams' (already computed), which must agree. Reports a
 * fan-in of streams with different time attributes through d (NULL: silent). Returns a stream
 * whose time stands for the port's (one without time when any has none), NULL when it has none. */
static const Stream *port_time(const Op *op, const Input *in, Diag *d) {
  const Stream *timed = NULL, *untimed = NULL;
  for (int k = 0; k < in->nstreams; k++) {
    const Stream *s = in->streams[k];
    if (!s) continue;
    if (s->time_slot < 0) {
      if (!untimed) untimed = s;
    } else if (!timed) {
      timed = s;
    } else if (timed->time_slot != s->time_slot && d) {
      diag_error(d, in->line, 0,
                 "streams '%s' and '%s' share an input of operator '%s' but have different event times "
                 "('%s' and '%s')", timed->name, s->name, op->name, timed->schema->attrs[timed->time_slot].name,
                 s->schema->attrs[s->time_slot].name);
    }
  }
  return untimed ? untimed : timed;
}

/* The output attribute of a Join that is its event time: the first (schema order) set to exactly,
 * or forwarded from, a side's event-time attribute; -1 when none is. */
static int join_time_slot(const Op *op, const Schema *out) {
  int side_time[2];
  for (int s = 0; s < 2; s++) {
    const Stream *in = op->ninputs > s ? port_time(op, &op->inputs[s], NULL) : NULL;
    side_time[s] = in ? in->time_slot : -1;
  }
  for (int a = 0; out && a < out->nattrs; a++) {
    const Set *set = NULL;
    for (int i = 0; i < op->nsets; i++)
      if (op->sets[i].slot == a) set = &op->sets[i];
    if (set) {
      const Expr *e = set->expr;
      if (e && e->kind == EXPR_NAME && e->scope == NAME_SIDE && e->side >= 0 && e->side < 2 &&
          side_time[e->side] >= 0 && e->slot == side_time[e->side])
        return a;
      continue;
    }
    int from, side = join_forward_side(op, out, a, &from);
    if (side >= 0 && side_time[side] >= 0 && from == side_time[side]) return a;
  }
  return -1;
}

/* Sets the time of op's output streams from its inputs' (computed before, in topological order). */
static void op_time(const Op *op, Diag *d) {
  if (op->kind == KIND_SPLIT && op->ninputs == 2) { /* a Join's sides: each output has its input's time */
    int w = op->noutputs / 2;
    for (int p = 0; p < op->noutputs; p++) {
      Stream *out = op->outputs[p].resolved;
      const Stream *in = port_time(op, &op->inputs[p < w ? 0 : 1], d);
      if (!out) continue;
      out->time_slot = in ? in->time_slot : -1;
      out->time_lost_by = in ? in->time_lost_by : NULL;
      out->time_lost_attr = in ? in->time_lost_attr : NULL;
    }
    return;
  }
  if (op->kind == KIND_JOIN) {
    for (int s = 0; s < op->ninputs; s++) port_time(op, &op->inputs[s], d); /* (reports a fan-in that disagrees) */
    Stream *out = op->noutputs ? op->outputs[0].resolved : NULL;
    if (out) {
      out->time_slot = join_time_slot(op, out->schema);
      out->time_lost_by = out->time_slot < 0 ? op : NULL;
      out->time_lost_attr = NULL;
    }
    return;
  }
  const Stream *from = NULL; /* the stream op's input time comes from */
  for (int p = 0; p < op->ninputs; p++) {
    const Stream *s = port_time(op, &op->inputs[p], d);
    if (s && (!from || s->time_slot < 0)) from = s; /* several ports: one without time wins */
  }
  WindowSpec w;
  for (int p = 0; p < op->noutputs; p++) {
    Stream *out = op->outputs[p].resolved;
    if (!out) continue;
    out->time_slot = -1;
    out->time_lost_by = NULL;
    out->time_lost_attr = NULL;
    if (op->ninputs == 0) { /* a source declares it or has none */
      const char *t = op_param(op, "time");
      out->time_slot = t && op->kind != KIND_CUSTOM ? schema_find_attr(out->schema, t) : -1;
      continue;
    }
    if (!from || from->time_slot < 0) { /* nothing to keep: say who lost it further up */
      out->time_lost_by = from ? from->time_lost_by : NULL;
      out->time_lost_attr = from ? from->time_lost_attr : NULL;
      continue;
    }
    const char *name = from->schema->attrs[from->time_slot].name;
    if (op_time_window(op, &w)) {
      out->time_slot = window_end_slot(op, out->schema);
    } else if (model_forwards(op, name)) {
      int k = schema_find_attr(out->schema, name);
      if (k >= 0 && out->schema->attrs[k].type == TYPE_INT) out->time_slot = k;
    }
    if (out->time_slot < 0) {
      out->time_lost_by = op;
      out->time_lost_attr = name;
    }
  }
}

/* Operators in topological order (Kahn; ties by document order do not matter here). NULL when the
 * graph has a cycle, which check reports. */
static Op **topological(const Graph *g) {
  int n = g->nops;
  int *indeg = calloc((size_t)n + 1, sizeof *indeg);
  Op **order = sf_xmalloc(sizeof(Op *) * (size_t)(n + 1));
  int head = 0, tail = 0;
  for (int i = 0; i < n; i++) {
    const Op *op = g->ops[i];
    for (int p = 0; p < op->ninputs; p++)
      for (int k = 0; k < op->inputs[p].nstreams; k++)
        if (op->inputs[p].streams && op->inputs[p].streams[k]) indeg[i]++;
    if (indeg[i] == 0) order[tail++] = g->ops[i];
  }
  while (head < tail) {
    const Op *op = order[head++];
    for (int p = 0; p < op->noutputs; p++) {
      const Stream *s = op->outputs[p].resolved;
      for (int c = 0; s && c < s->consumers.n; c++) {
        Op *next = s->consumers.items[c];
        if (--indeg[next->index] == 0) order[tail++] = next;
      }
    }
  }
  free(indeg);
  if (tail < n) {
    free(order);
    return NULL;
  }
  return order;
}

/* "operator 'x' (line 12) does not forward time attribute 'ts'" or "no source upstream declares
 * parameter 'time'": why stream s has no event time. */
static const char *why_no_time(Arena *a, const Stream *s) {
  if (!s->time_lost_by) return "no source upstream declares parameter 'time'";
  const Op *x = s->time_lost_by;
  if (x->kind == KIND_JOIN)
    return arena_printf(a, "Join operator '%s' (line %d) neither sets nor forwards a side's time attribute", x->name,
                        x->line);
  WindowSpec w;
  if (op_time_window(x, &w))
    return arena_printf(a, "operator '%s' (line %d) sets no output attribute to exactly window_end()", x->name,
                        x->line);
  return arena_printf(a, "operator '%s' (line %d) changes or drops time attribute '%s'", x->name, x->line,
                      s->time_lost_attr);
}

/* The operators that need event time on their input: time-window Aggregates, and every input
 * merged by time (order="time"). */
static void check_needs(Graph *g, const Op *op, Diag *d) {
  WindowSpec w;
  for (int p = 0; p < op->ninputs; p++) {
    const Input *in = &op->inputs[p];
    for (int k = 0; k < in->nstreams && in->time_order; k++) {
      const Stream *s = in->streams[k];
      if (s && s->time_slot < 0)
        diag_error(d, in->line, 0, "an input of operator '%s' is merged by time (order=\"time\") but its stream "
                   "'%s' has no event time: %s", op->name, s->name, why_no_time(g->arena, s));
    }
  }
  if (op->kind == KIND_JOIN) {
    for (int p = 0; p < op->ninputs; p++)
      for (int k = 0; k < op->inputs[p].nstreams; k++) {
        const Stream *s = op->inputs[p].streams[k];
        if (s && s->time_slot < 0)
          diag_error(d, op->inputs[p].line, 0, "Join operator '%s' needs event time on its %s input, but stream '%s' "
                     "has none: %s", op->name, p == 0 ? "left" : "right", s->name, why_no_time(g->arena, s));
      }
    return;
  }
  if (!op_time_window(op, &w) || op->ninputs < 1) return;
  const Param *p = op_find_param(op, "window");
  for (int k = 0; k < op->inputs[0].nstreams; k++) {
    const Stream *s = op->inputs[0].streams[k];
    if (s && s->time_slot < 0)
      diag_error(d, p->line, 0, "operator '%s' has a time window ('%s') but its input stream '%s' has no event "
                 "time: %s", op->name, p->text, s->name, why_no_time(g->arena, s));
  }
}

int graph_time(Graph *g, Diag *d) {
  int before = d ? d->nerrors : 0;
  if (g->timed) return 0;
  if (!g->analyzed) graph_analyze(g);
  for (int i = 0; i < g->streams.n; i++) ((Stream *)g->streams.items[i])->time_slot = -1;
  Op **order = topological(g);
  if (!order) return 0;
  for (int i = 0; i < g->nops; i++) op_time(order[i], d);
  free(order);
  g->timed = true;
  if (d)
    for (int i = 0; i < g->nops; i++) check_needs(g, g->ops[i], d);
  return d ? d->nerrors - before : 0;
}

int stream_time_slot(const Graph *g, const Stream *s) {
  if (!g) return s->time_slot; /* (the caller's graph was checked: graph_time has run) */
  if (!g->timed) graph_time((Graph *)g, NULL);
  return g->timed ? s->time_slot : -1;
}

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

bool source_tick_given(const Op *src) {
  int64_t v;
  const char *t = op_param(src, "tick");
  return t && number_read(t, strlen(t), 1, INT64_MAX, &v) == NUM_OK;
}

int64_t source_tick(const Graph *g, const Op *src) {
  int64_t v;
  const char *t = op_param(src, "tick");
  if (t && number_read(t, strlen(t), 1, INT64_MAX, &v) == NUM_OK) return v;
  /* every operator downstream of src, once each */
  bool *seen = calloc((size_t)g->nops + 1, 1);
  const Op **todo = sf_xmalloc(sizeof(Op *) * (size_t)(g->nops + 1));
  int n = 0;
  int64_t p = 0;
  todo[n++] = src;
  seen[src->index] = true;
  while (n > 0) {
    const Op *op = todo[--n];
    WindowSpec w;
    JoinSpec j;
    if (op_time_window(op, &w)) {
      p = gcd64(p, w.size);
      if (w.slide) p = gcd64(p, w.slide);
    } else if (op->kind == KIND_JOIN && join_spec(op, g->arena, &j, NULL) == 0) {
      /* the window's size, or its non-zero bounds */
      if (j.tumbling) p = gcd64(p, j.size);
      if (!j.tumbling && j.lower) p = gcd64(p, j.lower < 0 ? -j.lower : j.lower);
      if (!j.tumbling && j.upper) p = gcd64(p, j.upper < 0 ? -j.upper : j.upper);
    }
    for (int k = 0; k < op->noutputs; k++) {
      const Stream *s = op->outputs[k].resolved;
      for (int c = 0; s && c < s->consumers.n; c++) {
        const Op *next = s->consumers.items[c];
        if (!seen[next->index]) {
          seen[next->index] = true;
          todo[n++] = next;
        }
      }
    }
  }
  free(seen);
  free(todo);
  return p > 0 ? p : 1;
}
