/* dot.c: Graphviz pictures of a graph, for `sf-xform --dot`.
 *
 * Both pictures flow top to bottom: sources on top, sinks at the bottom, so that in the parallel
 * picture a region's channels stand side by side between the Split above them and the Merge below
 * them (a trapezium widening into the channels, an inverted one narrowing out of them).
 * The parallel picture is meant to be read at a glance, also without colour: a region's label says
 * how it works (width, distribution, merge or shuffle), a channel's label names its host, the two
 * sides of a shuffle say so, and only edges carrying a stream of the user's graph are labelled.
 * Edges go from a producer's output port to every input port slot reading it: the links of a
 * linked graph, else found by name, so a graph need not have been linked. Who reads and writes
 * each stream and which operators each region holds are gathered once (a Lookup), so drawing
 * takes time linear in the graph. Everything is written in g->ops order, so the output is
 * deterministic. Every identifier and label is quoted and escaped: generated names contain `.`,
 * `[` and `]`, and reasons may contain quotes. The output renders with `dot` without warnings. */
#include "sf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Fill colours of hosts, by the host's position in g->hosts (wrapping when there are more):
 * light tones (ColorBrewer Paired/Set3) so that black labels stay readable. */
static const char *const host_palette[] = {
  "#a6cee3", "#b2df8a", "#fdbf6f", "#cab2d6", "#fb9a99", "#ffff99",
  "#8dd3c7", "#bebada", "#fccde5", "#d9d9d9", "#ccebc5", "#ffed6f",
};
enum { PALETTE_SIZE = sizeof host_palette / sizeof host_palette[0] };
static const char NO_HOST_FILL[] = "#ffffff";

/* The short reason in a node's label: lines of at most REASON_LINE bytes (the first counting
 * REASON_PREFIX), at most REASON_LINES of them. */
enum { REASON_LINE = 40, REASON_LINES = 3 };
static const char REASON_PREFIX[] = "not parallel: ";

/* ---- writing quoted strings ---- */

/* Writes s as the inside of a DOT quoted string: quotes and backslashes escaped, a line break as
 * the `\n` label escape, other control characters as spaces. At most `max` bytes of s (-1: all). */
static void put_escaped(Writer *out, const char *s, int max) {
  if (!s) return;
  int i = 0, run = 0; /* s[run..i-1] needs no escape and is not written yet */
  for (; s[i] && (max < 0 || i < max); i++) {
    unsigned char c = (unsigned char)s[i];
    if (c != '"' && c != '\\' && c >= 0x20 && c != 0x7f) continue;
    wr_put(out, s + run, (size_t)(i - run));
    run = i + 1;
    if (c == '"' || c == '\\')
      wr_char(out, '\\'), wr_char(out, (char)c);
    else if (c == '\n')
      wr_str(out, "\\n");
    else
      wr_char(out, ' ');
  }
  wr_put(out, s + run, (size_t)(i - run));
}

static void put_quoted(Writer *out, const char *s) {
  wr_char(out, '"');
  put_escaped(out, s, -1);
  wr_char(out, '"');
}

/* ---- what the pictures look up, gathered once ---- */

/* One input port slot naming a stream, in g->ops order, then port order, then name order. */
typedef struct Reader {
  const Op *op;        /* the consumer */
  struct Reader *next; /* the next slot naming the same stream */
} Reader;

typedef struct Readers {
  Reader *head, *tail; /* every slot naming one stream, in order */
} Readers;

/* The operators of one region, in g->ops order. */
typedef struct RegionOps {
  PtrVec ops; /* const Op* */
  bool drawn; /* put_region wrote it */
} RegionOps;

/* A linked graph (graph_link) says who reads and writes each stream; for ports it did not link
 * (a graph that was never linked, or a stream it refused) the same is found by name, in maps
 * built the first time they are needed. */
typedef struct Lookup {
  const Graph *g;    /* the graph drawn */
  Arena *arena;      /* everything below */
  bool by_name;      /* readers and writer are built */
  NameMap readers;   /* stream name -> Readers */
  NameMap writer;    /* stream name -> the first operator writing it */
  NameMap regions;   /* region id -> RegionOps */
  NameMap fills;     /* host name -> its fill colour (by its first position in g->hosts) */
} Lookup;

static void lookup_init(Lookup *l, const Graph *g) {
  *l = (Lookup){ .g = g, .arena = arena_new() };
  const char *last = NULL; /* operators of one region mostly come together, sharing the string */
  RegionOps *ro = NULL;
  for (int i = 0; i < g->nops; i++) {
    const Op *op = g->ops[i];
    if (!op->region) continue;
    if (op->region != last) {
      ro = namemap_get(&l->regions, op->region);
      if (!ro) ro = namemap_put(&l->regions, op->region, arena_alloc(l->arena, sizeof *ro));
      last = op->region;
    }
    ptrvec_push(l->arena, &ro->ops, (void *)op);
  }
  for (int i = 0; i < g->nhosts; i++)
    namemap_put(&l->fills, g->hosts[i]->name, (void *)host_palette[i % PALETTE_SIZE]);
}

static void lookup_by_name(Lookup *l) {
  if (l->by_name) return;
  l->by_name = true;
  const Graph *g = l->g;
  for (int i = 0; i < g->nops; i++) {
    const Op *op = g->ops[i];
    for (int p = 0; p < op->noutputs; p++) namemap_put(&l->writer, op->outputs[p].stream, (void *)op);
    for (int q = 0; q < op->ninputs; q++)
      for (int k = 0; k < op->inputs[q].nstreams; k++) {
        const char *name = op->inputs[q].names[k];
        if (!name) continue;
        Readers *rs = namemap_get(&l->readers, name);
        if (!rs) rs = namemap_put(&l->readers, name, arena_alloc(l->arena, sizeof *rs));
        Reader *r = arena_alloc(l->arena, sizeof *r);
        r->op = op;
        if (rs->tail)
          rs->tail->next = r;
        else
          rs->head = r;
        rs->tail = r;
      }
  }
}

/* Every input port slot reading what output `out` writes, in order: out's linked stream's
 * consumers, or the slots naming it. Calls fn(op, ctx) for each. */
static void each_reader(Lookup *l, const Output *out, void (*fn)(const Op *, void *), void *ctx) {
  if (out->resolved) {
    for (int c = 0; c < out->resolved->consumers.n; c++) fn(out->resolved->consumers.items[c], ctx);
    return;
  }
  lookup_by_name(l);
  const Readers *rs = namemap_get(&l->readers, out->stream);
  for (const Reader *r = rs ? rs->head : NULL; r; r = r->next) fn(r->op, ctx);
}

static void lookup_release(Lookup *l) {
  namemap_release(&l->readers);
  namemap_release(&l->writer);
  namemap_release(&l->regions);
  namemap_release(&l->fills);
  arena_free(l->arena);
}

/* ---- pieces shared by both pictures ---- */

static void put_header(Writer *out, const Graph *g) {
  wr_str(out, "digraph ");
  put_quoted(out, g->name ? g->name : "graph");
  wr_str(out, " {\n");
  wr_str(out, "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, nodesep=0.3, ranksep=0.45];\n");
  wr_str(out, "  node [fontname=\"Helvetica\", fontsize=10, shape=box, style=\"rounded,filled\", "
        "fillcolor=\"#ffffff\"];\n");
  wr_str(out, "  edge [fontname=\"Helvetica\", fontsize=8, fontcolor=\"#555555\", color=\"#555555\", "
        "arrowsize=0.7];\n");
}

static bool is_source(const Op *op) {
  return op->ninputs == 0;
}

static bool is_sink(const Op *op) {
  return op->noutputs == 0;
}

static const char *op_kind_text(const Op *op) {
  return op->kind_text ? op->kind_text : kind_name(op->kind);
}

/* Shape by role: sources point down into the graph, sinks are the ground it flows into,
 * Split widens into its channels and Merge narrows out of them. */
static const char *op_shape(const Op *op) {
  if (op->kind == KIND_SPLIT) return "trapezium";
  if (op->kind == KIND_MERGE) return "invtrapezium";
  if (is_source(op)) return "invhouse";
  if (is_sink(op)) return "house";
  return "box";
}

/* Whether the op gets the "not parallel" marking: a reason, and not a source or a sink (those are
 * never parallel by nature; marking every one of them would only be noise). */
static bool is_marked(const Op *op) {
  return op->why_serial && !is_source(op) && !is_sink(op);
}

/* The short reason of a label, each line after a `\n`: REASON_PREFIX and the text of why before its
 * first " (", ": " or control character (the reasons say the problem first and explain after),
 * wrapped at spaces into lines of at most REASON_LINE bytes so that names quoted at the end
 * (a colocate partner, a punctuation consumer) are kept. A word longer than a line is cut (not
 * inside a UTF-8 character); text beyond REASON_LINES lines is dropped with "...". */
static void put_short_reason(Writer *out, const char *why) {
  int len = 0;
  while (why[len] && (unsigned char)why[len] >= 0x20 && why[len] != 0x7f) {
    if (len > 0 && ((why[len] == ' ' && why[len + 1] == '(') || (why[len] == ':' && why[len + 1] == ' '))) break;
    len++;
  }
  size_t plen = strlen(REASON_PREFIX);
  char *text = sf_xmalloc(plen + (size_t)len + 1);
  memcpy(text, REASON_PREFIX, plen);
  memcpy(text + plen, why, (size_t)len);
  int n = (int)plen + len;
  text[n] = 0;
  int pos = 0;
  for (int line = 0; line < REASON_LINES; line++) {
    while (pos < n && text[pos] == ' ') pos++;
    if (pos >= n) break;
    int end = pos; /* the most whole words that fit */
    for (int j = pos;;) {
      int k = j;
      while (k < n && text[k] != ' ') k++;
      if (k - pos > REASON_LINE) break;
      end = k;
      while (k < n && text[k] == ' ') k++;
      if (k >= n) break;
      j = k;
    }
    if (end == pos) { /* one word longer than a line */
      end = pos + REASON_LINE;
      while (end > pos + 1 && ((unsigned char)text[end] & 0xc0) == 0x80) end--;
    }
    wr_str(out, "\\n");
    put_escaped(out, text + pos, end - pos);
    pos = end;
    bool more = false;
    for (int k = pos; k < n && !more; k++) more = text[k] != ' ';
    if (more && line + 1 == REASON_LINES) wr_str(out, "...");
  }
  free(text);
}

/* Writes the names of a key list (separated by spaces and/or commas, as names_split reads them),
 * joined by sep, the last two by last. */
static void put_keys(Writer *out, const char *text, const char *sep, const char *last) {
  int total = 0;
  for (const char *p = text; *p;) {
    while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n') p++;
    if (!*p) break;
    total++;
    while (*p && *p != ' ' && *p != ',' && *p != '\t' && *p != '\n') p++;
  }
  int k = 0;
  for (const char *p = text; *p;) {
    while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n') p++;
    if (!*p) break;
    const char *w = p;
    while (*p && *p != ' ' && *p != ',' && *p != '\t' && *p != '\n') p++;
    if (k > 0) wr_str(out, k + 1 == total ? last : sep);
    put_escaped(out, w, (int)(p - w));
    k++;
  }
}

/* Whether the op is a Split or Merge of one channel: the two sides of a shuffle between regions. */
static bool is_shuffle(const Op *op) {
  return (op->kind == KIND_SPLIT || op->kind == KIND_MERGE) && op->region && op->channel >= 0;
}

/* The second line of a Split's or Merge's label: its kind, or "shuffle" for the Split and "shuffle
 * merge" for the Merges of a shuffle, then its strategy and keys, its sequence when not the usual
 * "assign" (a shuffle keeps the numbers of the entry Split) and a non-zero pulse period, all on one
 * line (a taller trapezium grows wide fast). Other operators: their kind. */
static void put_kind_line(Writer *out, const Op *op) {
  if (op->kind == KIND_SPLIT) {
    wr_str(out, is_shuffle(op) ? "shuffle" : op_kind_text(op));
    const char *strategy = op_param(op, "strategy"), *keys = op_param(op, "keys");
    const char *sequence = op_param(op, "sequence"), *pulse = op_param(op, "pulse");
    if (strategy) {
      wr_char(out, ' ');
      put_escaped(out, strategy, -1);
      if (keys) {
        wr_char(out, '(');
        put_keys(out, keys, ", ", ", ");
        wr_char(out, ')');
      }
    }
    if (sequence && strcmp(sequence, "assign")) {
      wr_char(out, ' ');
      put_escaped(out, sequence, -1);
    }
    int64_t every = 0;
    if (pulse && number_read(pulse, strlen(pulse), 0, INT64_MAX, &every) == NUM_OK && every != 0) {
      wr_str(out, ", pulse ");
      put_escaped(out, pulse, -1);
    }
  } else if (op->kind == KIND_MERGE) {
    wr_str(out, is_shuffle(op) ? "shuffle merge" : op_kind_text(op));
    if (op_param(op, "order")) {
      wr_char(out, ' ');
      put_escaped(out, op_param(op, "order"), -1);
    }
  } else {
    put_escaped(out, op_kind_text(op), -1);
  }
}

/* Whether op is a time window: it emits at ticks, in key order (what its region's Merge keeps). */
static bool emits_at_ticks(const Op *op) {
  WindowSpec w;
  return op_time_window(op, &w);
}

/* One operator node. fill: its fill colour. Splits and Merges show their strategy after their
 * kind; an operator that was not parallelized (and is neither a source nor a sink) gets a dashed
 * border, a short reason in its label and the full reason in its tooltip. */
static void put_op_node(Writer *out, const Op *op, const char *fill, const char *indent) {
  const char *shape = op_shape(op);
  bool box = !strcmp(shape, "box");
  bool marked = is_marked(op);
  wr_str(out, indent);
  put_quoted(out, op->name);
  wr_str(out, " [label=\"");
  put_escaped(out, op->name, -1);
  wr_str(out, "\\n");
  put_kind_line(out, op);
  if (emits_at_ticks(op)) wr_str(out, "\\nemits at ticks");
  if (marked) put_short_reason(out, op->why_serial);
  wr_char(out, '"');
  if (!box) { /* polygons grow fast */
    wr_str(out, ", shape=");
    wr_str(out, shape);
    wr_str(out, ", margin=\"0.04,0.02\"");
  }
  if (marked)
    wr_str(out, box ? ", style=\"rounded,filled,dashed\"" : ", style=\"filled,dashed\"");
  else if (!box)
    wr_str(out, ", style=\"filled\"");
  if (strcmp(fill, NO_HOST_FILL)) {
    wr_str(out, ", fillcolor=\"");
    wr_str(out, fill);
    wr_char(out, '"');
  }
  wr_str(out, ", tooltip=\"");
  put_escaped(out, op_kind_text(op), -1);
  wr_str(out, " operator ");
  put_escaped(out, op->name, -1);
  if (op->origin) {
    bool inserted = op->kind == KIND_SPLIT || op->kind == KIND_MERGE;
    wr_str(out, inserted ? ", for " : ", replica of ");
    put_escaped(out, op->origin, -1);
  }
  if (op->host) {
    wr_str(out, ", on host ");
    put_escaped(out, op->host, -1);
  }
  if (marked) {
    wr_str(out, "\\nnot parallel: ");
    put_escaped(out, op->why_serial, -1);
  }
  wr_str(out, "\"];\n");
}

/* Whether the edge prod -> cons is labelled with its stream's name: when the stream has a name of
 * the user's graph, that is when it is not inside the parallel part: it leaves or enters an operator
 * outside the regions, leaves a region's final Merge or enters a region's entry Split. The streams
 * between generated operators (into and out of the channels, across a shuffle) are many, their
 * generated names would overlap, and the picture says what they are; they get the name as a
 * tooltip instead. */
static bool edge_labelled(const Op *prod, const Op *cons) {
  if (!prod->region || !cons->region) return true;
  if (prod->kind == KIND_MERGE && prod->channel < 0) return true;
  return cons->kind == KIND_SPLIT && cons->channel < 0;
}

/* One edge per (producer output port, consumer input port naming the stream), labelled with the
 * stream's name (see edge_labelled), in the order producers, their ports, consumers and their
 * ports appear. */
/* One edge, written by put_edges for each reader of a producer's port. */
typedef struct Edge {
  Writer *out;          /* where it goes */
  const Op *prod;     /* the producer */
  const char *stream; /* the stream's name */
} Edge;

static void put_edge(const Op *cons, void *ctx) {
  const Edge *e = ctx;
  wr_str(e->out, "  ");
  put_quoted(e->out, e->prod->name);
  wr_str(e->out, " -> ");
  put_quoted(e->out, cons->name);
  wr_str(e->out, edge_labelled(e->prod, cons) ? " [label=" : " [tooltip=");
  put_quoted(e->out, e->stream);
  wr_str(e->out, "];\n");
}

static void put_edges(Writer *out, const Graph *g, Lookup *l) {
  for (int i = 0; i < g->nops; i++) {
    const Op *prod = g->ops[i];
    for (int p = 0; p < prod->noutputs; p++) {
      Edge e = { out, prod, prod->outputs[p].stream };
      if (e.stream) each_reader(l, &prod->outputs[p], put_edge, &e);
    }
  }
}

static int finish(Writer *out) {
  wr_str(out, "}\n");
  return wr_close(out);
}

/* ---- the input picture ---- */

int graph_dot_input(const Graph *g, FILE *file) {
  Writer *out = wr_open(file);
  Lookup l;
  lookup_init(&l, g);
  put_header(out, g);
  for (int i = 0; i < g->nops; i++) put_op_node(out, g->ops[i], NO_HOST_FILL, "  ");
  put_edges(out, g, &l);
  lookup_release(&l);
  return finish(out);
}

/* ---- the parallel picture ---- */

static const char *host_fill(const Lookup *l, const char *host) {
  const char *fill = namemap_get(&l->fills, host);
  return fill ? fill : NO_HOST_FILL;
}

static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The distinct channels of a region, ascending, into chans (room for its operators). */
static int region_channels(const RegionOps *ro, int *chans) {
  int n = 0;
  for (int i = 0; i < ro->ops.n; i++) {
    const Op *op = ro->ops.items[i];
    if (op->channel >= 0) chans[n++] = op->channel;
  }
  qsort(chans, (size_t)n, sizeof *chans, compare_ints);
  int distinct = 0;
  for (int i = 0; i < n; i++)
    if (distinct == 0 || chans[distinct - 1] != chans[i]) chans[distinct++] = chans[i];
  return distinct;
}

/* The first operator of a region of kind `kind` that is region-wide (channel < 0) or not. */
static const Op *region_op(const RegionOps *ro, OpKind kind, bool per_channel) {
  for (int i = 0; i < ro->ops.n; i++) {
    const Op *op = ro->ops.items[i];
    if (op->kind == kind && (op->channel >= 0) == per_channel) return op;
  }
  return NULL;
}

/* The operator writing what input port `in` reads first, NULL when none. */
static const Op *producer_of(Lookup *l, const Input *in) {
  if (in->streams && in->streams[0]) return in->streams[0]->producer;
  lookup_by_name(l);
  return namemap_get(&l->writer, in->names[0]);
}

static void keep_first(const Op *op, void *ctx) {
  const Op **first = ctx;
  if (!*first) *first = op;
}

/* The first operator reading what output port `out` writes, NULL when none. */
static const Op *consumer_of(Lookup *l, const Output *out) {
  const Op *first = NULL;
  each_reader(l, out, keep_first, &first);
  return first;
}

/* How a region works, as its cluster's label, read from its Splits and Merges: its width, how its
 * tuples are distributed (the strategy and keys of its entry Split, or of the shuffle Splits of
 * the region upstream when it is entered by a shuffle), how they leave (its final Merge's order,
 * or the region its own shuffle Splits feed) and where a shuffle comes from, e.g.
 * `r1: width 3, hash on sector and sym, shuffled into r2`,
 * `r2: width 3, hash on sector, merge seqpulse, shuffled from r1`, or in a chain of shuffles
 * `r2: width 3, hash on sector, shuffled from r1 and into r3`. A region entered by a shuffle (and
 * not left by one) has its label, and its channels theirs, at the bottom: the shuffle's edges come in
 * from above all across it and would run through labels at the top. */
static void put_region_label(Writer *out, Lookup *l, const char *region, const RegionOps *ro, int width) {
  const Op *entry = region_op(ro, KIND_SPLIT, false);
  const Op *final = region_op(ro, KIND_MERGE, false);
  const Op *shuffle_in = region_op(ro, KIND_MERGE, true);
  const Op *shuffle_out = region_op(ro, KIND_SPLIT, true);
  const Op *from = NULL, *into = NULL;
  if (!entry && shuffle_in && shuffle_in->ninputs > 0 && shuffle_in->inputs[0].nstreams > 0)
    from = producer_of(l, &shuffle_in->inputs[0]);
  if (!final && shuffle_out && shuffle_out->noutputs > 0) into = consumer_of(l, &shuffle_out->outputs[0]);
  const Op *split = entry ? entry : from && from->kind == KIND_SPLIT ? from : NULL;
  wr_str(out, "    label=\"");
  put_escaped(out, region, -1);
  wr_fmt(out, ": width %d", width);
  const char *strategy = split ? op_param(split, "strategy") : NULL;
  if (strategy) {
    wr_str(out, ", ");
    put_escaped(out, strategy, -1);
    const char *keys = op_param(split, "keys");
    if (keys) {
      wr_str(out, " on ");
      put_keys(out, keys, ", ", " and ");
    }
  }
  if (final && op_param(final, "order")) {
    wr_str(out, ", merge ");
    put_escaped(out, op_param(final, "order"), -1);
  }
  if (from && from->region) {
    wr_str(out, ", shuffled from ");
    put_escaped(out, from->region, -1);
  }
  if (into && into->region) {
    wr_str(out, from && from->region ? " and into " : ", shuffled into ");
    put_escaped(out, into->region, -1);
  }
  bool ticks = false;
  for (int i = 0; i < ro->ops.n && !ticks; i++) ticks = emits_at_ticks(ro->ops.items[i]);
  if (ticks) wr_str(out, "\\nwhat its channels emit at a tick leaves in key order");
  wr_str(out, from && !into ? "\"; labelloc=b;\n" : "\";\n");
}

/* A channel's cluster label: `channel N @ HOST`, with every host of its operators (ops[0..n-1],
 * in g->ops order) so that readers who cannot tell the colours apart still see where it runs. */
static void put_channel_label(Writer *out, const Op *const *ops, int n, int channel) {
  wr_fmt(out, "      label=\"channel %d", channel);
  NameMap seen = {0};
  int nhosts = 0;
  for (int i = 0; i < n; i++) {
    const Op *op = ops[i];
    if (!op->host || namemap_put(&seen, op->host, (void *)op) != op) continue;
    wr_str(out, nhosts++ ? ", " : " @ ");
    put_escaped(out, op->host, -1);
  }
  namemap_release(&seen);
  wr_str(out, "\";\n");
}

/* An operator of a region and its position in the region's list, to sort by channel stably. */
typedef struct Placed {
  const Op *op; /* the operator */
  int pos;      /* its position in g->ops order */
} Placed;

/* Orders a region's operators by channel, region-wide ones (-1) first, keeping g->ops order within. */
static int compare_channel(const void *pa, const void *pb) {
  const Placed *a = pa, *b = pb;
  if (a->op->channel != b->op->channel) return a->op->channel < b->op->channel ? -1 : 1;
  return (a->pos > b->pos) - (a->pos < b->pos);
}

/* A region as a cluster: its region-wide operators (the Split and Merge around it), then one
 * nested cluster per channel holding that channel's replicas and its own Splits and Merges. */
static void put_region(Writer *out, Lookup *l, const char *region, const RegionOps *ro) {
  int n = ro->ops.n;
  int *chans = sf_xmalloc(sizeof(int) * (size_t)(n + 1));
  int width = region_channels(ro, chans);
  Placed *placed = sf_xmalloc(sizeof *placed * (size_t)(n + 1));
  for (int k = 0; k < n; k++) placed[k] = (Placed){ ro->ops.items[k], k };
  qsort(placed, (size_t)n, sizeof *placed, compare_channel);
  const Op **by_channel = sf_xmalloc(sizeof(Op *) * (size_t)(n + 1));
  for (int k = 0; k < n; k++) by_channel[k] = placed[k].op;
  free(placed);
  wr_str(out, "  subgraph ");
  wr_str(out, "\"cluster_");
  put_escaped(out, region, -1);
  wr_str(out, "\" {\n");
  put_region_label(out, l, region, ro, width);
  wr_str(out, "    style=\"rounded,filled\"; fillcolor=\"#f2f2f2\"; color=\"#888888\"; labeljust=l;\n");
  int i = 0;
  for (; i < n && by_channel[i]->channel < 0; i++) put_op_node(out, by_channel[i], host_fill(l, by_channel[i]->host), "    ");
  for (int c = 0; c < width; c++) {
    int start = i;
    while (i < n && by_channel[i]->channel == chans[c]) i++;
    wr_str(out, "    subgraph \"cluster_");
    put_escaped(out, region, -1);
    wr_fmt(out, "_c%d\" {\n", chans[c]);
    put_channel_label(out, by_channel + start, i - start, chans[c]);
    wr_str(out, "      style=\"rounded,filled,dashed\"; fillcolor=\"#ffffff\"; color=\"#aaaaaa\";\n");
    for (int k = start; k < i; k++) put_op_node(out, by_channel[k], host_fill(l, by_channel[k]->host), "      ");
    wr_str(out, "    }\n");
  }
  wr_str(out, "  }\n");
  free(by_channel);
  free(chans);
}

/* Writes s for an HTML-like label: markup characters as entities. */
static void put_html(Writer *out, const char *s) {
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '&')
      wr_str(out, "&amp;");
    else if (c == '<')
      wr_str(out, "&lt;");
    else if (c == '>')
      wr_str(out, "&gt;");
    else if (c == '"')
      wr_str(out, "&quot;");
    else if (c < 0x20 || c == 0x7f)
      wr_char(out, ' ');
    else
      wr_char(out, c);
  }
}

/* Host name -> colour and address, as one table in a cluster of its own, so the hosts are listed
 * in g->hosts order (separate nodes would be reordered by the layout). Its node id contains ':',
 * which no operator name can, so it never meets an operator. */
static void put_legend(Writer *out, const Graph *g) {
  if (g->nhosts == 0) return;
  wr_str(out, "  subgraph \"cluster_legend\" {\n");
  wr_str(out, "    label=\"hosts\"; style=\"rounded\"; color=\"#888888\"; labeljust=l;\n");
  wr_str(out, "    \"legend:hosts\" [shape=plain, style=\"\", tooltip=\"hosts by colour\", label=<"
        "<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" cellpadding=\"3\">");
  for (int i = 0; i < g->nhosts; i++) {
    const Host *h = g->hosts[i];
    wr_fmt(out, "<tr><td bgcolor=\"%s\">", host_palette[i % PALETTE_SIZE]);
    put_html(out, h->name);
    wr_str(out, "</td><td>");
    put_html(out, h->address);
    wr_str(out, "</td></tr>");
  }
  wr_str(out, "</table>>];\n");
  wr_str(out, "  }\n");
}

int graph_dot_parallel(const Graph *g, FILE *file) {
  Writer *out = wr_open(file);
  Lookup l;
  lookup_init(&l, g);
  put_header(out, g);
  put_legend(out, g);
  /* operators outside regions where they stand; each region, whole, where its first operator stands */
  for (int i = 0; i < g->nops; i++) {
    const Op *op = g->ops[i];
    if (!op->region) {
      put_op_node(out, op, host_fill(&l, op->host), "  ");
      continue;
    }
    RegionOps *ro = namemap_get(&l.regions, op->region);
    if (!ro->drawn) put_region(out, &l, op->region, ro);
    ro->drawn = true;
  }
  put_edges(out, g, &l);
  lookup_release(&l);
  return finish(out);
}
