/* explain.c: `--explain`: two lines per operator of the input graph, compiler style: which region
 * it joined and how that region splits and merges, or exactly why it was not parallelized; then the
 * model the decision was made from (state and key, selectivity, what it forwards, punctuation); and
 * on the first operator of each region a third line, what the cost model (cost.c) expects of it. */
#include "sf.h"

#include <string.h>

/* 'a', 'b' and 'c' */
static void put_names(FILE *out, const char *const *names, int n) {
  for (int i = 0; i < n; i++) fprintf(out, "%s'%s'", i == 0 ? "" : i == n - 1 ? " and " : ", ", names[i]);
}

/* `file:line: name: model: ...`: what analyze found, or the Custom operator declared. */
static void explain_model(const Op *op, FILE *out) {
  const Model *m = &op->model;
  const char *whence = op->kind != KIND_CUSTOM ? "" : m->declared ? " (declared)" : " (assumed: no <model>)";
  fprintf(out, "model%s: ", whence);
  if (m->is_source || m->is_sink) {
    fprintf(out, "%s\n", m->is_source ? "source" : "sink");
    return;
  }
  if (m->state == STATE_PARTITIONED) {
    fputs("state partitioned on ", out);
    put_names(out, m->keys, m->nkeys);
  } else {
    fputs(m->state == STATE_NONE ? "state none" : "state unknown", out);
  }
  fprintf(out, ", selectivity %s, ", m->sel == SEL_ONE ? "one" : m->sel == SEL_ATMOSTONE ? "atmostone" : "many");
  const Schema *schema = op_output_schema(op);
  if (m->nforwards == 0) {
    fputs("forwards nothing", out);
  } else if (m->forwards_all || (schema && m->nforwards == schema->nattrs)) {
    fputs("forwards every attribute", out);
  } else {
    fputs("forwards ", out);
    put_names(out, m->forwards, m->nforwards);
  }
  fprintf(out, ", punct %s, final %s%s\n",
          m->punct == PUNCT_GENERATES ? "generates" : m->punct == PUNCT_CONSUMES ? "consumes" : "none",
          m->final == FINAL_EMITS ? "emits" : "none", m->emits_on_tick ? ", emits at ticks" : "");
}

/* `file:line: name: event time ...`: a source's time attribute and tick period, or how a
 * time-window Aggregate's windows close. Nothing for other operators. */
static void explain_time(const Graph *g, const Op *op, FILE *out) {
  const char *t = op->ninputs == 0 && op->kind != KIND_CUSTOM ? op_param(op, "time") : NULL;
  if (t) {
    int64_t p = source_tick(g, op);
    fprintf(out, "%s:%d: %s: event time '%s', tick %lld (%s)\n", g->file, op->line, op->name, t, (long long)p,
            source_tick_given(op) ? "given" : "gcd of the windows downstream");
    return;
  }
  WindowSpec w;
  if (!op_time_window(op, &w)) return;
  int64_t late;
  const char *lt = op_param(op, "lateness");
  if (!lt || number_read(lt, strlen(lt), 0, INT64_MAX, &late) != NUM_OK) late = 0;
  long long size = (long long)w.size, slide = (long long)w.slide;
  fprintf(out, "%s:%d: %s: %s, lateness %lld: ", g->file, op->line, op->name, op_param(op, "window"),
          (long long)late);
  char end[64];
  if (late) snprintf(end, sizeof end, "end + %lld", (long long)late);
  else snprintf(end, sizeof end, "end");
  if (w.kind == WIN_TUMBLING_TIME)
    fprintf(out, "a window [k*%lld, (k+1)*%lld) closes at the first tick >= %s\n", size, size, end);
  else if (w.kind == WIN_HOPPING_TIME)
    fprintf(out, "a window [k*%lld, k*%lld + %lld) closes at the first tick >= %s; each tuple is in %lld windows\n",
            slide, slide, size, end, size / slide);
  else if (late)
    fprintf(out, "a session of a key (tuples less than %lld apart) closes at the first tick >= its last time + %lld "
            "+ %lld\n", size, size, (long long)late);
  else
    fprintf(out, "a session of a key (tuples less than %lld apart) closes at the first tick >= its last time + %lld\n",
            size, size);
}

static const char *merge_text(MergeOrder m) {
  return m == MERGE_ROUNDROBIN ? "roundrobin" : m == MERGE_SEQ ? "seq" : "seqpulse";
}

/* "split hash on 'k', merge seq" and the like: how region r is entered and left. */
static const char *split_merge_text(Arena *a, const Region *r) {
  const char *how = "roundrobin";
  if (r->split == SPLIT_HASH) {
    char *keys = arena_strdup(a, "");
    for (int k = 0; k < r->nkeys; k++)
      keys = arena_printf(a, "%s%s'%s'", keys, k == 0 ? "" : k == r->nkeys - 1 ? " and " : ", ", r->keys[k]);
    how = arena_printf(a, "hash on %s", keys);
    const Op *first = r->ops.n ? r->ops.items[0] : NULL;
    JoinSpec j;
    const Schema *right = first && first->kind == KIND_JOIN ? join_side_schema(first, 1) : NULL;
    if (right && join_spec(first, a, &j, NULL) == 0) { /* its two sides, each on its own attributes */
      char *keys2 = arena_strdup(a, "");
      for (int k = 0; k < j.nkeys; k++)
        keys2 = arena_printf(a, "%s%s'%s'", keys2, k == 0 ? "" : k == j.nkeys - 1 ? " and " : ", ",
                             right->attrs[j.key[1][k]].name);
      how = arena_printf(a, "hash on %s (left) and %s (right)", keys, keys2);
    }
  }
  const char *split = r->from ? arena_printf(a, "shuffle from r%d by %s", r->from->id, how)
                              : arena_printf(a, "split %s", how);
  const char *merge = r->to ? arena_printf(a, "shuffle into r%d", r->to->id)
                            : arena_printf(a, "merge %s", merge_text(r->merge));
  return arena_printf(a, "%s, %s", split, merge);
}

/* `file:line: name: region rN: estimated speed-up ...`: what the cost model expects of r at its
 * width, what bounds it, and the figures it used. */
static void explain_cost(const Fission *f, const Region *r, Arena *a, FILE *out) {
  const RegionCost *c = &r->cost;
  CostBound b;
  double t = cost_period(c, r->width, &b), s = cost_period(c, 1, NULL) / t;
  fprintf(out, "region r%d: ", r->id);
  if (f->profile && r->unmeasured)
    fprintf(out, "'%s' is not in the profile, so its width follows today's rules; ", r->unmeasured);
  fprintf(out, "estimated speed-up %.2fx at width %d, bounded by %s (per tuple: upstream ~%.0f ns, Split ~%.0f ns, "
          "operators ~%.0f ns, channel +%.0f ns, Merge ~%.0f ns, downstream ~%.0f ns; %s)\n", s, r->width,
          cost_bound_text(a, c, b), c->up, c->split, c->work, c->channel, c->merge, c->down,
          r->measured ? "measured" : "estimates by kind");
}

void fission_explain(const Fission *f, FILE *out) {
  const Graph *g = f->g;
  Arena *a = arena_new();
  const char **region_text = arena_alloc(a, sizeof *region_text * (size_t)(f->regions.n + 1)); /* by id */
  for (int t = 0; t < g->nops; t++) {
    const Op *op = g->order ? g->order[t] : g->ops[t];
    const Region *r = f->region_of[op->index];
    fprintf(out, "%s:%d: %s: ", g->file, op->line, op->name);
    if (!r) {
      fprintf(out, "not parallelized: %s\n", f->why[op->index] ? f->why[op->index] : "no reason recorded");
      fprintf(out, "%s:%d: %s: ", g->file, op->line, op->name);
      explain_model(op, out);
      explain_time(g, op, out);
      continue;
    }
    if (!region_text[r->id]) region_text[r->id] = split_merge_text(a, r);
    /* which width attributes disagreed is said once, on the line of the one that won */
    fprintf(out, "parallel in region r%d (width %d", r->id, r->width);
    if (r->width_by) fprintf(out, ", set by '%s'", r->width_by);
    if (r->width_profile) fputs(", chosen from the profile", out);
    if (r->width_by && r->width_why && r->width_by == op->name) fprintf(out, ", %s", r->width_why);
    fprintf(out, ", %s)", region_text[r->id]);
    if (f->note[op->index]) fprintf(out, "; %s", f->note[op->index]);
    if (op->host)
      fprintf(out, "; its pin to host '%s' is not applied: the region's channels go round-robin over the hosts "
              "(warning)", op->host);
    fprintf(out, "\n%s:%d: %s: ", g->file, op->line, op->name);
    explain_model(op, out);
    explain_time(g, op, out);
    if (r->ops.items[0] == op) {
      fprintf(out, "%s:%d: %s: ", g->file, op->line, op->name);
      explain_cost(f, r, a, out);
    }
  }
  arena_free(a);
}
