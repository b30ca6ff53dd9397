/* emit.c: writes a Graph back as XML in the graph language, with libxml2's xmlTextWriter.
 *
 * The writer streams the document into `out` as it goes (a graph of 100,000 operators makes a
 * document of a hundred megabytes, not worth a second copy); a write error stops it and is
 * reported once, and what was written stays, so a caller that needs all or nothing renders into
 * memory first, as sf-xform does. Everything comes
 * from the Graph's fields in a fixed order (FORMAT.md's element order, operators in g->ops order),
 * never from hash tables or addresses, so the same graph always gives the same bytes and
 * emit(parse(emit(g))) == emit(g). The writer escapes texts and attribute values (`>=` becomes
 * `&gt;=`, a line break inside an attribute becomes `&#10;`), so every text re-parses to itself.
 * libxml2 stays inside this file and parse.c. */
#include "sf.h"

#include <errno.h>
#include <libxml/xmlwriter.h>
#include <string.h>

/* All libxml2 writer calls return a negative number on failure; `ok` collects the first one. */
typedef struct Emitter {
  xmlTextWriterPtr w; /* the writer, into out */
  FILE *out;          /* where the document goes */
  Arena *scratch;     /* joined lists live here until the document is written */
  bool ok;            /* no writer call failed so far */
  int write_errno;    /* errno of the first failed write to out (0: none failed) */
  char last;          /* the last byte written */
} Emitter;

/* libxml2's output callback: the writer's bytes into e->out. */
static int write_out(void *ctx, const char *buf, int len) {
  Emitter *e = ctx;
  if (e->write_errno) return -1;
  if (len <= 0) return 0;
  errno = 0;
  if (fwrite(buf, 1, (size_t)len, e->out) != (size_t)len) {
    e->write_errno = errno ? errno : EIO;
    return -1;
  }
  e->last = buf[len - 1];
  return len;
}

static const xmlChar *X(const char *s) {
  return (const xmlChar *)s;
}

static void check(Emitter *e, int rc) {
  if (rc < 0) e->ok = false;
}

static void start(Emitter *e, const char *element) {
  check(e, xmlTextWriterStartElement(e->w, X(element)));
}

static void end(Emitter *e) {
  check(e, xmlTextWriterEndElement(e->w));
}

/* Writes the attribute only when value is not NULL. */
static void attr(Emitter *e, const char *name, const char *value) {
  if (value) check(e, xmlTextWriterWriteAttribute(e->w, X(name), X(value)));
}

static void attr_int(Emitter *e, const char *name, int value) {
  char buf[24];
  snprintf(buf, sizeof buf, "%d", value);
  attr(e, name, buf);
}

/* Text content; an empty text leaves the element empty (`<param name="x"/>`), which the parser
 * reads back as the same empty, trimmed text. */
static void text(Emitter *e, const char *s) {
  if (s && *s) check(e, xmlTextWriterWriteString(e->w, X(s)));
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
  for (int i = 0; i < op->nsets; i++) {
    start(e, "set");
    attr(e, "attr", op->sets[i].attr);
    text(e, op->sets[i].text);
    end(e);
  }
  for (int i = 0; i < op->nstates; i++) {
    const StateVar *v = op->states[i];
    start(e, "state");
    attr(e, "name", v->name);
    attr(e, "type", type_name(v->type));
    attr(e, "init", v->init_text ? v->init_text : ""); /* required by the XSD */
    text(e, v->text);
    end(e);
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
  check(e, xmlTextWriterSetIndent(e->w, 1));
  check(e, xmlTextWriterSetIndentString(e->w, X("  ")));
  check(e, xmlTextWriterStartDocument(e->w, "1.0", "UTF-8", NULL));
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
  check(e, xmlTextWriterEndDocument(e->w)); /* closes everything and ends the line */
}

int graph_emit_xml(const Graph *g, FILE *out) {
  Emitter e = { .out = out, .scratch = arena_new(), .ok = true };
  xmlOutputBufferPtr buf = xmlOutputBufferCreateIO(write_out, NULL, &e, NULL);
  if (!buf) sf_die("cannot create an XML output buffer");
  e.w = xmlNewTextWriter(buf); /* owns buf from here */
  if (!e.w) sf_die("cannot create an XML writer");
  emit_graph(&e, g);
  xmlFreeTextWriter(e.w); /* flushes the rest into out */
  arena_free(e.scratch);
  if (e.write_errno) {
    errno = e.write_errno;
    return -1;
  }
  if (!e.ok) sf_die("the XML writer failed on graph '%s'", g->name ? g->name : "");
  if (e.last != '\n') sf_die("emitted XML does not end with a line break");
  errno = 0;
  if (fflush(out) != 0 || ferror(out)) {
    if (errno == 0) errno = EIO;
    return -1;
  }
  return 0;
}
