/* emit.c: writes a Graph back as XML in the graph language.
 *
 * The document is streamed into `out` as it goes (a graph of 100,000 operators makes a document
 * of a hundred megabytes, not worth a second copy); a write error stops it and is reported once,
 * and what was written stays, so a caller that needs all or nothing renders into memory first, as
 * sf-xform does. Everything comes from the Graph's fields in a fixed order (the element order of
 * docs/language.md's "Document structure", operators in g->ops order), never from hash tables or
 * addresses, so the same graph always gives the same bytes and emit(parse(emit(g))) == emit(g).
 *
 * The layout and escaping are libxml2's xmlTextWriter's with an indent of two spaces, which this
 * file used until it cost a quarter of sf-xform's time on large graphs: an element with children
 * closes on its own line, one with text or nothing on the line it opened; attribute values escape
 * `<`, `>`, `&`, `"`, tab, line feed and carriage return (`&#9;`, `&#10;`, `&#13;`), texts escape
 * `<`, `>`, `&`, `"` and carriage return. Other bytes, UTF-8 included, are written as they are.
 * So every text and value re-parses to itself (test_emit compares this escaping with libxml2's on
 * random strings). The element-level calls below (start, attr, text, end) are the whole writer. */
#include "sf.h"

#include <string.h>

enum { EMIT_DEPTH = 8 };

typedef struct Emitter {
  Writer *w;                    /* where the document goes */
  Arena *scratch;               /* joined lists live here until the document is written */
  int depth;                    /* open elements */
  const char *open[EMIT_DEPTH]; /* their names */
  bool in_tag;                  /* the innermost start tag is not closed yet ('>' pending) */
  bool has_text;                /* the innermost element has text: its end tag follows it */
} Emitter;

static void put(Emitter *e, const char *s, size_t n) {
  wr_put(e->w, s, n);
}

static void put_str(Emitter *e, const char *s) {
  wr_str(e->w, s);
}

/* Writes s with every byte that `escape` maps to a reference replaced by it. */
static void put_escaped(Emitter *e, const char *s, const char *const escape[256]) {
  const char *run = s;
  for (; *s; s++) {
    const char *ref = escape[(unsigned char)*s];
    if (!ref) continue;
    put(e, run, (size_t)(s - run));
    put_str(e, ref);
    run = s + 1;
  }
  put(e, run, (size_t)(s - run));
}

static const char *const attr_escape[256] = {
  ['<'] = "&lt;", ['>'] = "&gt;", ['&'] = "&amp;", ['"'] = "&quot;",
  ['\t'] = "&#9;", ['\n'] = "&#10;", ['\r'] = "&#13;",
};
static const char *const text_escape[256] = {
  ['<'] = "&lt;", ['>'] = "&gt;", ['&'] = "&amp;", ['"'] = "&quot;", ['\r'] = "&#13;",
};

static void indent(Emitter *e) {
  static const char spaces[2 * EMIT_DEPTH] = "                ";
  put(e, spaces, (size_t)(2 * e->depth));
}

static void start(Emitter *e, const char *element) {
  if (e->depth >= EMIT_DEPTH) sf_die("emit: elements nested deeper than %d", EMIT_DEPTH);
  if (e->in_tag) put(e, ">\n", 2); /* the parent's first child */
  indent(e);
  put(e, "<", 1);
  put_str(e, element);
  e->open[e->depth++] = element;
  e->in_tag = true;
  e->has_text = false;
}

static void end(Emitter *e) {
  const char *element = e->open[--e->depth];
  if (e->in_tag) {
    put(e, "/>\n", 3);
  } else {
    if (!e->has_text) indent(e);
    put(e, "</", 2);
    put_str(e, element);
    put(e, ">\n", 2);
  }
  e->in_tag = false;
  e->has_text = false;
}

/* Writes the attribute only when value is not NULL. */
static void attr(Emitter *e, const char *name, const char *value) {
  if (!value) return;
  put(e, " ", 1);
  put_str(e, name);
  put(e, "=\"", 2);
  put_escaped(e, value, attr_escape);
  put(e, "\"", 1);
}

static void attr_int(Emitter *e, const char *name, int value) {
  char buf[24];
  snprintf(buf, sizeof buf, "%d", value);
  attr(e, name, buf);
}

/* Text content; an empty text leaves the element empty (`<param name="x"/>`), which the parser
 * reads back as the same empty, trimmed text. */
static void text(Emitter *e, const char *s) {
  if (!s || !*s) return;
  if (e->in_tag) put(e, ">", 1);
  e->in_tag = false;
  put_escaped(e, s, text_escape);
  e->has_text = true;
}

/* Names joined by one space; NULL when there are none (an empty list is not valid in the XSD). */
static const char *join(Arena *a, const char *const *names, int n) {
  if (n <= 0) return NULL;
  size_t len = 0;
  for (int i = 0; i < n; i++) len += strlen(names[i]) + 1;
  char *s = arena_alloc(a, len), *p = s;
  for (int i = 0; i < n; i++) {
    if (i) *p++ = ' ';
    size_t k = strlen(names[i]);
    memcpy(p, names[i], k);
    p += k;
  }
  *p = 0;
  return s;
}

static const char *state_text(StateKind s) {
  return s == STATE_NONE ? "none" : s == STATE_PARTITIONED ? "partitioned" : "unknown";
}

/* SEL_NONE cannot come from a parsed <model>; it is written as the parser's default, `many`. */
static const char *selectivity_text(Selectivity s) {
  return s == SEL_ONE ? "one" : s == SEL_ATMOSTONE ? "atmostone" : "many";
}

static const char *punct_text(PunctKind p) {
  return p == PUNCT_GENERATES ? "generates" : p == PUNCT_CONSUMES ? "consumes" : "none";
}

/* The declared model, from the Model fields. keys and forwards are left out only when empty,
 * since the XSD refuses an empty list and an absent one parses back to the same empty Model. */
static void emit_model(Emitter *e, const Model *m) {
  start(e, "model");
  attr(e, "state", state_text(m->state));
  attr(e, "keys", join(e->scratch, m->keys, m->nkeys));
  attr(e, "selectivity", selectivity_text(m->sel));
  attr(e, "forwards", m->forwards_all ? "*" : join(e->scratch, m->forwards, m->nforwards));
  attr(e, "punct", punct_text(m->punct));
  if (m->final == FINAL_EMITS) attr(e, "final", "emits"); /* `none`, the default, is left out */
  end(e);
}

static void emit_state(Emitter *e, const StateVar *v) {
  start(e, "state");
  attr(e, "name", v->name);
  attr(e, "type", type_name(v->type));
  attr(e, "init", v->init_text ? v->init_text : ""); /* required by the XSD */
  text(e, v->text);
  end(e);
}

static void emit_op(Emitter *e, const Op *op) {
  start(e, "operator");
  attr(e, "name", op->name);
  attr(e, "kind", op->kind_text ? op->kind_text : kind_name(op->kind));
  if (op->parallel_no) attr(e, "parallel", "no");
  if (op->width > 0) attr_int(e, "width", op->width);
  attr(e, "host", op->host);
  attr(e, "colocate", op->colocate);
  attr(e, "origin", op->origin);
  attr(e, "region", op->region);
  if (op->channel >= 0) attr_int(e, "channel", op->channel);

  for (int p = 0; p < op->ninputs; p++) {
    start(e, "input");
    attr(e, "stream", join(e->scratch, op->inputs[p].names, op->inputs[p].nstreams));
    if (op->inputs[p].time_order) attr(e, "order", "time");
    end(e);
  }
  for (int p = 0; p < op->noutputs; p++) {
    start(e, "output");
    attr(e, "stream", op->outputs[p].stream);
    attr(e, "schema", op->outputs[p].schema);
    end(e);
  }
  for (int i = 0; i < op->nparams; i++) {
    start(e, "param");
    attr(e, "name", op->params[i].name);
    text(e, op->params[i].text);
    end(e);
  }
  /* sets, states and lets in their written order, which is their evaluation order: each comes
   * once the ones written before it have (its *_before counts; a state comes before set i when
   * i's states_before is past it) */
  for (int i = 0, k = 0, j = 0; i < op->nsets || k < op->nstates || j < op->nlets;) {
    if (j < op->nlets && op->lets[j].sets_before <= i && op->lets[j].states_before <= k) {
      start(e, "let");
      attr(e, "name", op->lets[j].name);
      attr(e, "type", type_name(op->lets[j].type));
      text(e, op->lets[j].text);
      end(e);
      j++;
    } else if (k < op->nstates && op->states[k]->lets_before <= j && (i == op->nsets || k < op->sets[i].states_before)) {
      emit_state(e, op->states[k]);
      k++;
    } else {
      sf_assert(i < op->nsets);
      start(e, "set");
      attr(e, "attr", op->sets[i].attr);
      text(e, op->sets[i].text);
      end(e);
      i++;
    }
  }
  if (op->model.declared) emit_model(e, &op->model);
  if (op->lib_path || op->lib_symbol) {
    start(e, "library");
    attr(e, "path", op->lib_path);
    attr(e, "symbol", op->lib_symbol);
    end(e);
  }
  end(e);
}

static void emit_graph(Emitter *e, const Graph *g) {
  put_str(e, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  /* xmlns written as a plain attribute so that it comes first, before name */
  start(e, "graph");
  attr(e, "xmlns", SF_NAMESPACE);
  attr(e, "name", g->name);
  for (int i = 0; i < g->nschemas; i++) {
    const Schema *s = g->schemas[i];
    start(e, "schema");
    attr(e, "name", s->name);
    for (int k = 0; k < s->nattrs; k++) {
      start(e, "attr");
      attr(e, "name", s->attrs[k].name);
      attr(e, "type", type_name(s->attrs[k].type));
      end(e);
    }
    end(e);
  }
  for (int i = 0; i < g->nhosts; i++) {
    start(e, "host");
    attr(e, "name", g->hosts[i]->name);
    attr(e, "address", g->hosts[i]->address);
    end(e);
  }
  for (int i = 0; i < g->nops; i++) emit_op(e, g->ops[i]);
  end(e);
}

int graph_emit_xml(const Graph *g, FILE *out) {
  Emitter e = { .w = wr_open(out), .scratch = arena_new() };
  emit_graph(&e, g);
  arena_free(e.scratch);
  return wr_close(e.w);
}
