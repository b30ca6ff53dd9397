/* dot.c: Graphviz pictures of a graph, for `sf-xform --dot`.
 *
 * Both pictures flow top to bottom: sources on top, sinks at the bottom, so that in the parallel
 * picture a region's channels stand side by side between the Split above them and the Merge below
 * them (a trapezium widening into the channels, an inverted one narrowing out of them).
 * Edges are computed from the operators' ports by name (producer -> one edge per consumer port),
 * so a graph need not have been linked. Everything is written in g->ops order, so the output is
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

enum { REASON_SHORT = 32 }; /* characters of why_serial shown in a node's label */

/* ---- writing quoted strings ---- */

/* Writes s as the inside of a DOT quoted string: quotes and backslashes escaped, a line break as
 * the `\n` label escape, other control characters as spaces. At most `max` bytes of s (-1: all). */
static void put_escaped(FILE *out, const char *s, int max) {
  for (int i = 0; s && s[i] && (max < 0 || i < max); i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", out);
    else if (c < 0x20 || c == 0x7f)
      fputc(' ', out);
    else
      fputc(c, out);
  }
}

static void put_quoted(FILE *out, const char *s) {
  fputc('"', out);
  put_escaped(out, s, -1);
  fputc('"', out);
}

/* ---- pieces shared by both pictures ---- */

static void put_header(FILE *out, const Graph *g) {
  fputs("digraph ", out);
  put_quoted(out, g->name ? g->name : "graph");
  fputs(" {\n", out);
  fputs("  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, nodesep=0.3, ranksep=0.45];\n", out);
  fputs("  node [fontname=\"Helvetica\", fontsize=10, shape=box, style=\"rounded,filled\", "
        "fillcolor=\"#ffffff\"];\n", out);
  fputs("  edge [fontname=\"Helvetica\", fontsize=8, fontcolor=\"#555555\", color=\"#555555\", "
        "arrowsize=0.7];\n", out);
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

/* A short form of why_serial for a label: the text before its first " (" or ": " (the reasons say
 * the problem first and explain after), cut at a word to REASON_SHORT characters with "...". */
static void put_short_reason(FILE *out, const char *why) {
  int len = (int)strlen(why);
  for (int i = 1; i + 1 < len; i++)
    if ((why[i] == ' ' && why[i + 1] == '(') || (why[i] == ':' && why[i + 1] == ' ')) {
      len = i;
      break;
    }
  if (len <= REASON_SHORT) {
    put_escaped(out, why, len);
    return;
  }
  int cut = REASON_SHORT;
  while (cut > 0 && why[cut] != ' ') cut--;
  if (cut < REASON_SHORT / 2) cut = REASON_SHORT; /* one long word: cut inside it */
  while (cut > 0 && ((unsigned char)why[cut] & 0xc0) == 0x80) cut--; /* not inside a UTF-8 character */
  while (cut > 0 && why[cut - 1] == ' ') cut--;
  put_escaped(out, why, cut);
  fputs("...", out);
}

/* One operator node. fill: its fill colour. Splits and Merges show their strategy after their
 * kind; an operator that was not parallelized gets a dashed border, a short reason in its label and
 * the full reason in its tooltip. */
static void put_op_node(FILE *out, const Op *op, const char *fill, const char *indent) {
  const char *shape = op_shape(op);
  bool box = !strcmp(shape, "box");
  fputs(indent, out);
  put_quoted(out, op->name);
  fputs(" [label=\"", out);
  put_escaped(out, op->name, -1);
  fputs("\\n", out);
  put_escaped(out, op_kind_text(op), -1);
  if (op->kind == KIND_SPLIT && op_param(op, "strategy")) {
    fputc(' ', out);
    put_escaped(out, op_param(op, "strategy"), -1);
    if (op_param(op, "keys")) {
      fputc('(', out);
      put_escaped(out, op_param(op, "keys"), -1);
      fputc(')', out);
    }
  } else if (op->kind == KIND_MERGE && op_param(op, "order")) {
    fputc(' ', out);
    put_escaped(out, op_param(op, "order"), -1);
  }
  if (op->why_serial) {
    fputs("\\nnot parallel: ", out);
    put_short_reason(out, op->why_serial);
  }
  fputc('"', out);
  if (!box) fprintf(out, ", shape=%s, margin=\"0.04,0.02\"", shape); /* polygons grow fast */
  if (op->why_serial)
    fprintf(out, ", style=\"%sfilled,dashed\"", box ? "rounded," : "");
  else if (!box)
    fputs(", style=\"filled\"", out);
  if (strcmp(fill, NO_HOST_FILL)) fprintf(out, ", fillcolor=\"%s\"", fill);
  fputs(", tooltip=\"", out);
  put_escaped(out, op_kind_text(op), -1);
  fputs(" operator ", out);
  put_escaped(out, op->name, -1);
  if (op->origin) {
    bool inserted = op->kind == KIND_SPLIT || op->kind == KIND_MERGE;
    fputs(inserted ? ", for " : ", replica of ", out);
    put_escaped(out, op->origin, -1);
  }
  if (op->host) {
    fputs(", on host ", out);
    put_escaped(out, op->host, -1);
  }
  if (op->why_serial) {
    fputs("\\nnot parallel: ", out);
    put_escaped(out, op->why_serial, -1);
  }
  fputs("\"];\n", out);
}

/* One edge per (producer output port, consumer input port naming the stream), labelled with the
 * stream's name, in the order producers, their ports, consumers and their ports appear. */
static void put_edges(FILE *out, const Graph *g) {
  for (int i = 0; i < g->nops; i++) {
    const Op *prod = g->ops[i];
    for (int p = 0; p < prod->noutputs; p++) {
      const char *stream = prod->outputs[p].stream;
      if (!stream) continue;
      for (int j = 0; j < g->nops; j++) {
        const Op *cons = g->ops[j];
        for (int q = 0; q < cons->ninputs; q++)
          for (int k = 0; k < cons->inputs[q].nstreams; k++) {
            if (strcmp(cons->inputs[q].names[k], stream)) continue;
            fputs("  ", out);
            put_quoted(out, prod->name);
            fputs(" -> ", out);
            put_quoted(out, cons->name);
            fputs(" [label=", out);
            put_quoted(out, stream);
            fputs("];\n", out);
          }
      }
    }
  }
}

static int finish(FILE *out) {
  fputs("}\n", out);
  if (fflush(out) != 0 || ferror(out)) {
    if (errno == 0) errno = EIO;
    return -1;
  }
  return 0;
}

/* ---- the input picture ---- */

int graph_dot_input(const Graph *g, FILE *out) {
  errno = 0;
  put_header(out, g);
  for (int i = 0; i < g->nops; i++) put_op_node(out, g->ops[i], NO_HOST_FILL, "  ");
  put_edges(out, g);
  return finish(out);
}

/* ---- the parallel picture ---- */

static const char *host_fill(const Graph *g, const char *host) {
  for (int i = 0; host && i < g->nhosts; i++)
    if (!strcmp(g->hosts[i]->name, host)) return host_palette[i % PALETTE_SIZE];
  return NO_HOST_FILL;
}

static bool same(const char *a, const char *b) {
  return a && b && !strcmp(a, b);
}

static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The distinct channels of region `region`, ascending, into chans (room for g->nops). */
static int region_channels(const Graph *g, const char *region, int *chans) {
  int n = 0;
  for (int i = 0; i < g->nops; i++) {
    const Op *op = g->ops[i];
    if (!same(op->region, region) || op->channel < 0) continue;
    bool seen = false;
    for (int k = 0; k < n && !seen; k++) seen = chans[k] == op->channel;
    if (!seen) chans[n++] = op->channel;
  }
  qsort(chans, (size_t)n, sizeof *chans, compare_ints);
  return n;
}

/* Region `region` as a cluster: its region-wide operators (the Split and Merge around it), then one
 * nested cluster per channel holding that channel's replicas and its own Splits and Merges. */
static void put_region(FILE *out, const Graph *g, const char *region, int *chans) {
  int width = region_channels(g, region, chans);
  fputs("  subgraph ", out);
  fputs("\"cluster_", out);
  put_escaped(out, region, -1);
  fputs("\" {\n", out);
  fputs("    label=\"region ", out);
  put_escaped(out, region, -1);
  fprintf(out, " (width %d)\";\n", width);
  fputs("    style=\"rounded,filled\"; fillcolor=\"#f2f2f2\"; color=\"#888888\"; labeljust=l;\n", out);
  for (int i = 0; i < g->nops; i++) {
    const Op *op = g->ops[i];
    if (same(op->region, region) && op->channel < 0) put_op_node(out, op, host_fill(g, op->host), "    ");
  }
  for (int c = 0; c < width; c++) {
    fputs("    subgraph \"cluster_", out);
    put_escaped(out, region, -1);
    fprintf(out, "_c%d\" {\n", chans[c]);
    fprintf(out, "      label=\"channel %d\";\n", chans[c]);
    fputs("      style=\"rounded,filled,dashed\"; fillcolor=\"#ffffff\"; color=\"#aaaaaa\";\n", out);
    for (int i = 0; i < g->nops; i++) {
      const Op *op = g->ops[i];
      if (same(op->region, region) && op->channel == chans[c])
        put_op_node(out, op, host_fill(g, op->host), "      ");
    }
    fputs("    }\n", out);
  }
  fputs("  }\n", out);
}

/* Writes s for an HTML-like label: markup characters as entities. */
static void put_html(FILE *out, const char *s) {
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '&')
      fputs("&amp;", out);
    else if (c == '<')
      fputs("&lt;", out);
    else if (c == '>')
      fputs("&gt;", out);
    else if (c == '"')
      fputs("&quot;", out);
    else if (c < 0x20 || c == 0x7f)
      fputc(' ', out);
    else
      fputc(c, out);
  }
}

/* Host name -> colour and address, as one table in a cluster of its own, so the hosts are listed
 * in g->hosts order (separate nodes would be reordered by the layout). Its node id contains ':',
 * which no operator name can, so it never meets an operator. */
static void put_legend(FILE *out, const Graph *g) {
  if (g->nhosts == 0) return;
  fputs("  subgraph \"cluster_legend\" {\n", out);
  fputs("    label=\"hosts\"; style=\"rounded\"; color=\"#888888\"; labeljust=l;\n", out);
  fputs("    \"legend:hosts\" [shape=plain, style=\"\", tooltip=\"hosts by colour\", label=<"
        "<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" cellpadding=\"3\">", out);
  for (int i = 0; i < g->nhosts; i++) {
    const Host *h = g->hosts[i];
    fprintf(out, "<tr><td bgcolor=\"%s\">", host_palette[i % PALETTE_SIZE]);
    put_html(out, h->name);
    fputs("</td><td>", out);
    put_html(out, h->address);
    fputs("</td></tr>", out);
  }
  fputs("</table>>];\n", out);
  fputs("  }\n", out);
}

int graph_dot_parallel(const Graph *g, FILE *out) {
  errno = 0;
  int *chans = sf_xmalloc(sizeof(int) * (size_t)(g->nops + 1));
  put_header(out, g);
  put_legend(out, g);
  /* operators outside regions where they stand; each region, whole, where its first operator stands */
  for (int i = 0; i < g->nops; i++) {
    const Op *op = g->ops[i];
    if (!op->region) {
      put_op_node(out, op, host_fill(g, op->host), "  ");
      continue;
    }
    bool first = true;
    for (int j = 0; j < i && first; j++) first = !same(g->ops[j]->region, op->region);
    if (first) put_region(out, g, op->region, chans);
  }
  free(chans);
  put_edges(out, g);
  return finish(out);
}
