/* rewrite.c: builds the parallel graph from the regions. The input graph is never mutated: the new
 * graph shares its schemas and the texts of parameters and expressions, and owns everything else.
 *
 * Names in the new graph (docs/language.md, "Generated names"; "Names" allows '.', '[' and ']'):
 *   replica of operator A in channel c        A[c]
 *   its output, for original stream S         S[c]
 *   entry Split / exit Merge of region rN     rN.split / rN.merge, the Merge producing S itself
 *   Split's output to channel c               S.rN[c]  (S: the stream entering the region)
 *   shuffle Split ending channel i of rN      rN.split[i], outputs S[i][j] to channel j of rM
 *   shuffle Merge starting channel j of rM    rM.merge[j], output S.rM[j]
 * Operators outside regions are copied unchanged, in document order; a region's operators appear at
 * the place of its first operator. */
#include "sf.h"

#include <string.h>

typedef struct Rewriter {
  const Fission *f; /* the regions */
  Graph *out;       /* the graph being built */
  PtrVec ops;       /* Op* of the new graph, in order */
} Rewriter;

static Op *new_op(Rewriter *rw, const char *name, OpKind kind, int line) {
  Op *op = arena_alloc(rw->out->arena, sizeof *op);
  op->name = name;
  op->kind = kind;
  op->kind_text = kind_name(kind);
  op->line = line;
  op->channel = -1;
  ptrvec_push(rw->out->arena, &rw->ops, op);
  return op;
}

static void set_inputs(Rewriter *rw, Op *op, int n) {
  op->ninputs = n;
  op->inputs = arena_alloc(rw->out->arena, sizeof(Input) * (size_t)n);
}

static void set_input(Rewriter *rw, Op *op, int port, const char *stream, int line) {
  Input *in = &op->inputs[port];
  in->names = arena_alloc(rw->out->arena, sizeof(char *));
  in->names[0] = stream;
  in->nstreams = 1;
  in->line = line;
}

static void set_outputs(Rewriter *rw, Op *op, int n) {
  op->noutputs = n;
  op->outputs = arena_alloc(rw->out->arena, sizeof(Output) * (size_t)n);
}

static void add_param(Rewriter *rw, Op *op, const char *name, const char *text) {
  Param *params = arena_alloc(rw->out->arena, sizeof(Param) * (size_t)(op->nparams + 1));
  if (op->nparams) memcpy(params, op->params, sizeof(Param) * (size_t)op->nparams);
  params[op->nparams].name = name;
  params[op->nparams].text = text;
  params[op->nparams].line = op->line;
  op->params = params;
  op->nparams++;
}

static const char *keys_param(Arena *a, const Region *r) {
  char *s = arena_strdup(a, "");
  for (int i = 0; i < r->nkeys; i++) s = arena_printf(a, "%s%s%s", s, i ? " " : "", r->keys[i]);
  return s;
}

static const char *merge_order_name(MergeOrder m) {
  return m == MERGE_ROUNDROBIN ? "roundrobin" : m == MERGE_SEQ ? "seq" : "seqpulse";
}

/* Split parameters distributing to region `to` (its key decides the strategy). */
static void split_params(Rewriter *rw, Op *split, const Region *to, bool keep, bool pulse) {
  Arena *a = rw->out->arena;
  add_param(rw, split, "strategy", to->split == SPLIT_HASH ? "hash" : "roundrobin");
  if (to->split == SPLIT_HASH) add_param(rw, split, "keys", keys_param(a, to));
  add_param(rw, split, "sequence", keep ? "keep" : "assign");
  add_param(rw, split, "pulse", pulse ? arena_printf(a, "%d", rw->f->pulse) : "0");
}

static const char *out_stream(const Op *op) {
  return op->outputs[0].stream;
}

/* "base[c]", the name of channel c's copy of base; made without printf, a million times for a
 * graph of 100,000 operators. */
static const char *indexed(Arena *a, const char *base, int c) {
  char digits[16];
  int n = 0;
  unsigned v = (unsigned)c;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  size_t len = strlen(base);
  char *s = arena_alloc(a, len + (size_t)n + 3), *p = s + len;
  memcpy(s, base, len);
  *p++ = '[';
  while (n > 0) *p++ = digits[--n];
  *p++ = ']';
  *p = 0;
  return s;
}

static const char *out_schema(const Op *op) {
  return op->outputs[0].schema;
}

static void emit_region(Rewriter *rw, const Region *r) {
  Arena *a = rw->out->arena;
  const Op *first = r->ops.items[0];
  const Op *last = r->ops.items[r->ops.n - 1];
  const char *rid = arena_printf(a, "r%d", r->id);
  const char *entry = first->inputs[0].names[0];
  const char *entry_schema = first->inputs[0].streams[0]->schema->name;
  bool pulse = r->merge == MERGE_SEQPULSE;

  /* channel inputs: from the region's Split, or from a shuffle Merge per channel; a Join's right
   * side from the same Split (channel_in2) */
  const char **channel_in = arena_alloc(a, sizeof(char *) * (size_t)r->width);
  const char **channel_in2 = NULL;
  if (first->kind == KIND_JOIN) {
    JoinSpec j;
    join_spec(first, a, &j, NULL);
    const Schema *right = join_side_schema(first, 1);
    const char *entry2 = first->inputs[1].names[0];
    Op *split = new_op(rw, arena_printf(a, "%s.split", rid), KIND_SPLIT, first->line);
    split->origin = first->name;
    split->region = rid;
    set_inputs(rw, split, 2);
    set_input(rw, split, 0, entry, first->line);
    set_input(rw, split, 1, entry2, first->line);
    set_outputs(rw, split, 2 * r->width);
    channel_in2 = arena_alloc(a, sizeof(char *) * (size_t)r->width);
    for (int c = 0; c < r->width; c++) {
      channel_in[c] = arena_printf(a, "%s.%s[%d]", entry, rid, c);
      channel_in2[c] = arena_printf(a, "%s.%s[%d]", entry2, rid, c);
      split->outputs[c] = (Output){ .stream = channel_in[c], .schema = entry_schema, .line = first->line };
      split->outputs[r->width + c] = (Output){ .stream = channel_in2[c], .schema = right->name, .line = first->line };
    }
    char *keys2 = arena_strdup(a, "");
    for (int k = 0; k < j.nkeys; k++) keys2 = arena_printf(a, "%s%s%s", keys2, k ? " " : "", right->attrs[j.key[1][k]].name);
    add_param(rw, split, "strategy", "hash");
    add_param(rw, split, "keys", keys_param(a, r));
    add_param(rw, split, "keys2", keys2);
    add_param(rw, split, "sequence", "assign");
    add_param(rw, split, "pulse", arena_printf(a, "%d", rw->f->pulse));
  } else if (!r->from) {
    Op *split = new_op(rw, arena_printf(a, "%s.split", rid), KIND_SPLIT, first->line);
    split->origin = first->name;
    split->region = rid;
    set_inputs(rw, split, 1);
    set_input(rw, split, 0, entry, first->line);
    set_outputs(rw, split, r->width);
    for (int c = 0; c < r->width; c++) {
      channel_in[c] = arena_printf(a, "%s.%s[%d]", entry, rid, c);
      split->outputs[c] = (Output){ .stream = channel_in[c], .schema = entry_schema, .line = first->line };
    }
    split_params(rw, split, r, false, pulse);
  } else {
    const Region *up = r->from;
    const Op *up_last = up->ops.items[up->ops.n - 1];
    for (int c = 0; c < r->width; c++) {
      Op *merge = new_op(rw, arena_printf(a, "%s.merge[%d]", rid, c), KIND_MERGE, first->line);
      merge->origin = first->name;
      merge->region = rid;
      merge->channel = c;
      set_inputs(rw, merge, up->width);
      for (int i = 0; i < up->width; i++)
        set_input(rw, merge, i, indexed(a, indexed(a, out_stream(up_last), i), c), first->line);
      set_outputs(rw, merge, 1);
      channel_in[c] = arena_printf(a, "%s.%s[%d]", entry, rid, c);
      merge->outputs[0] = (Output){ .stream = channel_in[c], .schema = entry_schema, .line = first->line };
      add_param(rw, merge, "order", "seqpulse");
    }
  }

  /* the replicas, channel by channel; channel_out[c]: what the last one writes */
  const char **channel_out = arena_alloc(a, sizeof(char *) * (size_t)r->width);
  for (int c = 0; c < r->width; c++) {
    const char *prev = channel_in[c];
    for (int k = 0; k < r->ops.n; k++) {
      const Op *orig = r->ops.items[k];
      const char *name = indexed(a, orig->name, c);
      Op *rep = new_op(rw, name, orig->kind, orig->line);
      *rep = *orig;
      rep->name = name;
      rep->why_serial = NULL;
      rep->host = NULL;
      rep->replica_pin = orig->host;
      rep->width = 0;
      rep->origin = orig->name;
      rep->region = rid;
      rep->channel = c;
      set_inputs(rw, rep, orig->kind == KIND_JOIN ? 2 : 1);
      set_input(rw, rep, 0, prev, orig->inputs[0].line);
      if (orig->kind == KIND_JOIN) set_input(rw, rep, 1, channel_in2[c], orig->inputs[1].line);
      set_outputs(rw, rep, 1);
      rep->outputs[0] = (Output){ .stream = indexed(a, out_stream(orig), c),
                                  .schema = out_schema(orig), .line = orig->outputs[0].line };
      prev = rep->outputs[0].stream;
    }
    channel_out[c] = prev;
  }

  /* exits: one Merge producing the original stream, or a shuffle Split per channel */
  if (!r->to) {
    Op *merge = new_op(rw, arena_printf(a, "%s.merge", rid), KIND_MERGE, last->line);
    merge->origin = last->name;
    merge->region = rid;
    set_inputs(rw, merge, r->width);
    for (int c = 0; c < r->width; c++)
      set_input(rw, merge, c, channel_out[c], last->line);
    set_outputs(rw, merge, 1);
    merge->outputs[0] = (Output){ .stream = out_stream(last), .schema = out_schema(last), .line = last->line };
    add_param(rw, merge, "order", merge_order_name(r->merge));
  } else {
    const Region *down = r->to;
    for (int c = 0; c < r->width; c++) {
      Op *split = new_op(rw, arena_printf(a, "%s.split[%d]", rid, c), KIND_SPLIT, last->line);
      split->origin = last->name;
      split->region = rid;
      split->channel = c;
      set_inputs(rw, split, 1);
      set_input(rw, split, 0, channel_out[c], last->line);
      set_outputs(rw, split, down->width);
      for (int j = 0; j < down->width; j++)
        split->outputs[j] = (Output){ .stream = indexed(a, channel_out[c], j),
                                      .schema = out_schema(last), .line = last->line };
      split_params(rw, split, down, true, true);
    }
  }
}

Graph *fission_rewrite(const Fission *f) {
  const Graph *g = f->g;
  Graph *out = graph_new(g->file);
  Rewriter rw = { .f = f, .out = out };
  out->name = g->name;
  out->schemas = g->schemas;
  out->nschemas = g->nschemas;
  out->hosts = g->hosts;
  out->nhosts = g->nhosts;
  for (int i = 0; i < g->nops; i++) {
    const Op *op = g->ops[i];
    const Region *r = f->region_of[i];
    if (!r) {
      Op *copy = new_op(&rw, op->name, op->kind, op->line);
      *copy = *op;
      continue;
    }
    if (r->ops.items[0] == op) emit_region(&rw, r);
  }
  out->ops = (Op **)rw.ops.items;
  out->nops = rw.ops.n;
  out->rewritten = f->regions.n > 0 || g->rewritten;
  for (int i = 0; i < out->nops; i++) {
    Op *op = out->ops[i];
    op->index = i;
    /* the copies' inputs must resolve against the new graph's streams */
    Input *inputs = arena_alloc(out->arena, sizeof(Input) * (size_t)(op->ninputs + 1));
    for (int p = 0; p < op->ninputs; p++) {
      inputs[p] = op->inputs[p];
      inputs[p].streams = NULL;
    }
    op->inputs = inputs;
    Output *outputs = arena_alloc(out->arena, sizeof(Output) * (size_t)(op->noutputs + 1));
    for (int p = 0; p < op->noutputs; p++) {
      outputs[p] = op->outputs[p];
      outputs[p].resolved = NULL;
    }
    op->outputs = outputs;
  }
  Diag quiet;
  diag_init(&quiet, g->file, stderr);
  if (graph_link(out, &quiet) != 0) {
    diag_flush(&quiet, DIAG_BY_PLACE);
    sf_die("the rewritten graph does not link");
  }
  return out;
}
