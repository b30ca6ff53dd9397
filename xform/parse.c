/* parse.c: reads a graph file safely and builds the Graph.
 *
 * Safety: the file is read into memory by us (so a missing, empty or unreadable file gets a plain
 * message), libxml2 never touches the network (XML_PARSE_NONET, an entity loader that refuses
 * everything), entities are never substituted, and any DOCTYPE is refused as soon as the parser
 * meets it, so no entity can be declared at all (this is what defuses "billion laughs").
 * Then the document is validated against graph.xsd and turned into a Graph in one arena.
 *
 * Diagnostics: a document that is not well-formed gets one message, the first problem (what libxml2
 * says after it is mostly the same problem seen again); a well-formed document gets every schema
 * violation. libxml2's messages are reworded in ours by xmlerr.c.
 * Lines are libxml2's: an element is numbered by the line where its start tag ends.
 * libxml2 stays inside this file, xmlerr.c and emit.c. */
#include "sf.h"
#include "xmlerr.h"

#include <ctype.h>
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlschemas.h>
#include <libxml/xpath.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { GRAPH_MAX_BYTES = 64 * 1024 * 1024 };

typedef struct ParseState {
  Diag *d;               /* where errors go */
  xmlNodePtr *repeats;   /* a second <model> or <library> of an operator, in document order (malloc'ed) */
  int nrepeats;          /* how many */
  int cap_repeats;       /* room at repeats */
  xmlNodePtr seen_op;    /* the operator whose <model> and <library> note_repeat saw last */
  bool seen[2];          /* whether it had a <model>, a <library> */
  int reported;          /* how many of them are reported */
  bool doctype;          /* a DOCTYPE was refused */
  bool malformed;        /* a well-formedness error was reported; what follows is its echo */
  XmlWording words;      /* what rewording libxml2's messages needs */
} ParseState;

/* ---- libxml2 set-up ---- */

static xmlParserInputPtr refuse_entity_loader(const char *url, const char *id, xmlParserCtxtPtr ctxt) {
  return NULL; /* never load anything from outside the document */
}

static void ignore_generic_error(void *ctx, const char *msg, ...) {}

static void ignore_structured_error(void *ctx, xmlErrorPtr err) {}

/* ---- what graph.xsd cannot say ----
 * An operator's children come in any order, which XSD 1.0 can only write as a repeated choice, so
 * that <model> and <library> appear at most once is checked here: the repetitions are noted as the
 * parser reads them and each is reported in document order among libxml2's messages, as the
 * schema would have reported it. */

/* As the parser reads element c: when c is a second <model> or <library> of an operator under the
 * root, adds it to ps->repeats (so they are in document order). */
static void note_repeat(ParseState *ps, xmlNodePtr c) {
  static const char *const single[] = {"model", "library"};
  xmlNodePtr op = c->parent, root = op ? op->parent : NULL;
  if (!root || root->type != XML_ELEMENT_NODE || !root->parent || root->parent->type != XML_DOCUMENT_NODE) return;
  for (int k = 0; k < 2; k++) {
    if (strcmp((const char *)c->name, single[k]) || !xmlerr_ours(c)) continue;
    if (strcmp((const char *)op->name, "operator") || !xmlerr_ours(op)) return;
    if (op != ps->seen_op) {
      ps->seen_op = op;
      ps->seen[0] = ps->seen[1] = false;
    }
    if (ps->seen[k]) {
      if (ps->nrepeats == ps->cap_repeats) {
        ps->cap_repeats = ps->cap_repeats ? 2 * ps->cap_repeats : 8;
        ps->repeats = sf_xrealloc(ps->repeats, sizeof *ps->repeats * (size_t)ps->cap_repeats);
      }
      ps->repeats[ps->nrepeats++] = c;
    }
    ps->seen[k] = true;
  }
}

/* Reports the repetitions that come before `node` in the document (all that are left when node
 * is NULL). A message about an element is said where the element starts, before its children. */
static void report_repeats(ParseState *ps, xmlNodePtr node) {
  for (; ps->reported < ps->nrepeats; ps->reported++) {
    xmlNodePtr r = ps->repeats[ps->reported];
    if (node && xmlXPathCmpNodes(r, node) != 1) break; /* 1: r comes first */
    char elem[192];
    xmlerr_element_named(r->parent, "", elem, sizeof elem);
    diag_error(ps->d, xmlerr_line(r), 0, "%s takes at most one <%s>", elem, (const char *)r->name);
  }
}

/* ---- libxml2's errors, collected ---- */

static void on_xml_error(void *ctx, xmlErrorPtr err) {
  ParseState *ps = ctx;
  if (!err || err->level == XML_ERR_WARNING) return;
  if (ps->doctype || ps->malformed) return; /* we already said why we stopped */
  /* a document that is not well-formed gets one message: what libxml2 says after the first
   * problem is mostly the same problem seen again */
  if (err->domain == XML_FROM_PARSER || err->domain == XML_FROM_NAMESPACE) ps->malformed = true;
  if (err->domain == XML_FROM_SCHEMASV && err->node) report_repeats(ps, err->node);
  char msg[1024];
  int line, col;
  if (xmlerr_reword(&ps->words, err, msg, sizeof msg, &line, &col)) diag_error(ps->d, line, col, "%s", msg);
}

/* libxml2's start of an element, then the line of an element past 65,534 kept for xmlerr_line, and
 * a repeated <model> or <library> noted. */
static void on_start_element(void *ctx, const xmlChar *name, const xmlChar *prefix, const xmlChar *uri,
                             int nns, const xmlChar **nss, int nattrs, int ndefaulted, const xmlChar **attrs) {
  xmlSAX2StartElementNs(ctx, name, prefix, uri, nns, nss, nattrs, ndefaulted, attrs);
  xmlParserCtxtPtr ctxt = ctx;
  if (!ctxt->node) return;
  if (ctxt->input && ctxt->input->line >= 65535) ctxt->node->psvi = (void *)(intptr_t)ctxt->input->line;
  note_repeat(ctxt->_private, ctxt->node);
}

static void on_doctype(void *ctx, const xmlChar *name, const xmlChar *ext, const xmlChar *sys) {
  xmlParserCtxtPtr ctxt = ctx;
  ParseState *ps = ctxt->_private;
  if (!ps->doctype) {
    ps->doctype = true;
    diag_error(ps->d, ctxt->input ? ctxt->input->line : 1, 0,
               "document type declarations (DOCTYPE) are not allowed in a graph");
  }
  xmlStopParser(ctxt);
}

/* ---- finding the schema ---- */

const char *sf_schema_path(void) {
  static char path[PATH_MAX + 64];
  const char *env = getenv("SF_SCHEMA");
  if (env && *env) return env;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    /* build tree and install tree have the same shape: bin/ next to share/streamfission/ */
    snprintf(path, sizeof path, "%s/../%s/graph.xsd", exe, SF_SCHEMA_INSTALL_REL);
    if (access(path, R_OK) == 0) return path;
    snprintf(path, sizeof path, "%s/../../%s/graph.xsd", exe, SF_SCHEMA_INSTALL_REL);
    if (access(path, R_OK) == 0) return path;
  }
  return NULL;
}

/* ---- DOM to Graph ---- */

/* The raw file, to find where an element's text starts (libxml2 keeps lines, not columns). */
typedef struct RawText {
  const char *buf;   /* the whole file */
  size_t len;        /* its length */
  uint32_t *lines;   /* offset where line l + 1 starts, for l < nlines (malloc'ed) */
  int nlines;        /* lines in the file */
  int last_line;     /* line of the previous text element looked up */
  int seen[4];       /* param, set, state, let elements already found on last_line */
} RawText;

/* Fills raw->lines in one pass (the file is at most INT_MAX bytes). */
static void raw_index_lines(RawText *raw) {
  int n = 1;
  for (const char *p = raw->buf, *end = raw->buf + raw->len; (p = memchr(p, '\n', (size_t)(end - p))); p++) n++;
  raw->lines = sf_xmalloc(sizeof *raw->lines * (size_t)n);
  raw->lines[0] = 0;
  raw->nlines = 1;
  for (const char *p = raw->buf, *end = raw->buf + raw->len; (p = memchr(p, '\n', (size_t)(end - p))); p++)
    raw->lines[raw->nlines++] = (uint32_t)(p + 1 - raw->buf);
}

/* Where line `line` (1-based) starts; the end of the file for a line past its last. */
static size_t line_offset(const RawText *raw, int line) {
  if (line < 1) return 0;
  return line <= raw->nlines ? raw->lines[line - 1] : raw->len;
}

/* Fills o with where the text of the nth <name> element whose start tag ends on `line` begins.
 * Leaves o->raw NULL when it cannot tell (a start tag spread over several lines). */
static void find_origin(Graph *g, RawText *raw, const char *name, int kind, int line, TextOrigin *o) {
  o->raw = NULL;
  if (!raw || line <= 0) return;
  if (line != raw->last_line) {
    raw->last_line = line;
    raw->seen[0] = raw->seen[1] = raw->seen[2] = raw->seen[3] = 0;
  }
  int nth = raw->seen[kind]++;
  size_t start = line_offset(raw, line), n = strlen(name);
  size_t end = start;
  while (end < raw->len && raw->buf[end] != '\n') end++;
  size_t at = start;
  for (int found = -1; found < nth;) {
    while (at < end && !(raw->buf[at] == '<' && at + 1 + n <= raw->len && !strncmp(raw->buf + at + 1, name, n) &&
                         strchr(" \t\r\n/>", raw->buf[at + 1 + n])))
      at++;
    if (at >= end) return;
    found++;
    if (found < nth) at++;
  }
  char quote = 0;
  for (; at < raw->len; at++) {
    char ch = raw->buf[at];
    if (quote) {
      if (ch == quote) quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '>') {
      break;
    }
  }
  if (at >= raw->len) return;
  at++;
  int l = line, col = (int)(at - start) + 1;
  for (size_t k = start; k < at; k++)
    if (raw->buf[k] == '\n') l++, col = (int)(at - k);
  while (at < raw->len && isspace((unsigned char)raw->buf[at])) {
    if (raw->buf[at] == '\n') {
      l++;
      col = 1;
    } else if (raw->buf[at] != '\r') {
      col++;
    }
    at++;
  }
  size_t stop = at;
  while (stop < raw->len && raw->buf[stop] != '<') stop++;
  o->raw = arena_strndup(g->arena, raw->buf + at, stop - at);
  o->line = l;
  o->col = col;
}

static bool is_element(xmlNodePtr n, const char *name) {
  return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static int node_line(xmlNodePtr n) {
  return xmlerr_line(n);
}

/* The text of a node list (an attribute's value, an element's content): a lone text node's
 * content is copied straight into the arena; anything else is joined by libxml2 first. */
static const char *list_text(Graph *g, xmlNodePtr list, size_t *len) {
  if (!list) {
    *len = 0;
    return "";
  }
  if (!list->next && list->type == XML_TEXT_NODE && list->content) {
    *len = strlen((const char *)list->content);
    return (const char *)list->content;
  }
  xmlChar *v = xmlNodeListGetString(list->doc, list, 1);
  char *s = arena_strdup(g->arena, v ? (const char *)v : "");
  xmlFree(v);
  *len = strlen(s);
  return s;
}

/* The attribute `name` (in no namespace, as xmlGetProp reads it) of n, or NULL. */
static const char *prop(Graph *g, xmlNodePtr n, const char *name) {
  for (xmlAttrPtr a = n->properties; a; a = a->next) {
    if (a->ns || strcmp((const char *)a->name, name)) continue;
    size_t len;
    const char *v = list_text(g, a->children, &len);
    return arena_strndup(g->arena, v, len);
  }
  return NULL;
}

/* Text content, trimmed; *line is advanced past leading blank lines so that an expression written
 * on its own line is reported there. */
static const char *text_of(Graph *g, xmlNodePtr n, int *line) {
  size_t len;
  const char *s = list_text(g, n->children, &len);
  while (len > 0 && isspace((unsigned char)*s)) {
    if (*s == '\n') (*line)++;
    s++;
    len--;
  }
  while (len > 0 && isspace((unsigned char)s[len - 1])) len--;
  return arena_strndup(g->arena, s, len);
}

static int count_children(xmlNodePtr parent, const char *name) {
  int n = 0;
  for (xmlNodePtr c = parent->children; c; c = c->next)
    if (is_element(c, name)) n++;
  return n;
}

/* Splits a space-separated list into arena strings. */
static const char **split_list(Graph *g, const char *text, int *count) {
  int n = 0;
  for (const char *p = text; p && *p;) {
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p) break;
    n++;
    while (*p && !isspace((unsigned char)*p)) p++;
  }
  const char **items = arena_alloc(g->arena, sizeof(char *) * (size_t)(n + 1));
  int k = 0;
  for (const char *p = text; p && *p;) {
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p) break;
    const char *start = p;
    while (*p && !isspace((unsigned char)*p)) p++;
    items[k++] = arena_strndup(g->arena, start, (size_t)(p - start));
  }
  *count = n;
  return items;
}

static void build_model(Graph *g, Op *op, xmlNodePtr n) {
  Model *m = &op->model;
  m->declared = true;
  m->line = node_line(n);
  const char *state = prop(g, n, "state");
  m->state = !state || !strcmp(state, "unknown") ? STATE_UNKNOWN
           : !strcmp(state, "partitioned")       ? STATE_PARTITIONED
                                                  : STATE_NONE;
  const char *sel = prop(g, n, "selectivity");
  m->sel = !sel || !strcmp(sel, "many") ? SEL_MANY : !strcmp(sel, "one") ? SEL_ONE : SEL_ATMOSTONE;
  m->keys = split_list(g, prop(g, n, "keys"), &m->nkeys);
  const char *fw = prop(g, n, "forwards");
  if (fw && !strcmp(fw, "*"))
    m->forwards_all = true;
  else
    m->forwards = split_list(g, fw, &m->nforwards);
  const char *punct = prop(g, n, "punct");
  m->punct = !punct || !strcmp(punct, "none") ? PUNCT_NONE
           : !strcmp(punct, "generates")       ? PUNCT_GENERATES
                                                : PUNCT_CONSUMES;
  const char *final = prop(g, n, "final");
  m->final = final && !strcmp(final, "emits") ? FINAL_EMITS : FINAL_NONE;
}

/* The elements an <operator> holds, told apart with one string comparison each. */
typedef enum ChildKind {
  CHILD_OTHER, CHILD_INPUT, CHILD_OUTPUT, CHILD_PARAM, CHILD_SET, CHILD_STATE, CHILD_MODEL, CHILD_LIBRARY,
  CHILD_LET, CHILD_KINDS
} ChildKind;

static ChildKind child_kind(xmlNodePtr c) {
  if (c->type != XML_ELEMENT_NODE) return CHILD_OTHER;
  const char *e = (const char *)c->name;
  ChildKind k;
  const char *full;
  switch (e[0]) {
  case 'i': k = CHILD_INPUT, full = "input"; break;
  case 'o': k = CHILD_OUTPUT, full = "output"; break;
  case 'p': k = CHILD_PARAM, full = "param"; break;
  case 's': k = e[1] == 'e' ? CHILD_SET : CHILD_STATE, full = e[1] == 'e' ? "set" : "state"; break;
  case 'm': k = CHILD_MODEL, full = "model"; break;
  case 'l': k = e[1] == 'e' ? CHILD_LET : CHILD_LIBRARY, full = e[1] == 'e' ? "let" : "library"; break;
  default: return CHILD_OTHER;
  }
  return strcmp(e, full) ? CHILD_OTHER : k;
}

static Op *build_op(Graph *g, xmlNodePtr n, Diag *d, RawText *raw) {
  Arena *a = g->arena;
  Op *op = arena_alloc(a, sizeof *op);
  op->line = node_line(n);
  op->name = prop(g, n, "name");
  op->kind_text = prop(g, n, "kind");
  op->kind = kind_from_name(op->kind_text);
  const char *par = prop(g, n, "parallel");
  op->parallel_no = par && !strcmp(par, "no");
  const char *w = prop(g, n, "width");
  if (w) {
    int64_t v;
    if (number_read(w, strlen(w), 1, 1024, &v) != NUM_OK) {
      diag_error(d, op->line, 0, "width of operator '%s' must be between 1 and 1024, got '%s'", op->name, w);
      v = 1;
    }
    op->width = (int)v;
  }
  op->host = prop(g, n, "host");
  op->colocate = prop(g, n, "colocate");
  op->origin = prop(g, n, "origin");
  op->region = prop(g, n, "region");
  const char *ch = prop(g, n, "channel");
  int64_t channel = -1;
  if (ch && number_read(ch, strlen(ch), 0, 1023, &channel) != NUM_OK) {
    diag_error(d, op->line, 0, "channel of operator '%s' must be between 0 and 1023, got '%s'", op->name, ch);
    channel = 0;
  }
  op->channel = (int)channel;
  if (op->region) g->rewritten = true;

  int count[CHILD_KINDS] = {0};
  for (xmlNodePtr c = n->children; c; c = c->next) count[child_kind(c)]++;
  op->inputs = arena_alloc(a, sizeof(Input) * (size_t)(count[CHILD_INPUT] + 1));
  op->outputs = arena_alloc(a, sizeof(Output) * (size_t)(count[CHILD_OUTPUT] + 1));
  op->params = arena_alloc(a, sizeof(Param) * (size_t)(count[CHILD_PARAM] + 1));
  op->sets = arena_alloc(a, sizeof(Set) * (size_t)(count[CHILD_SET] + 1));
  op->states = arena_alloc(a, sizeof(StateVar *) * (size_t)(count[CHILD_STATE] + 1));
  op->lets = arena_alloc(a, sizeof(Let) * (size_t)(count[CHILD_LET] + 1));
  for (xmlNodePtr c = n->children; c; c = c->next) {
    ChildKind kind = child_kind(c);
    if (kind == CHILD_OTHER) continue;
    int line = node_line(c);
    if (kind == CHILD_INPUT) {
      Input *in = &op->inputs[op->ninputs++];
      in->line = line;
      in->names = split_list(g, prop(g, c, "stream"), &in->nstreams);
      const char *order = prop(g, c, "order");
      in->time_order = order && !strcmp(order, "time");
    } else if (kind == CHILD_OUTPUT) {
      Output *out = &op->outputs[op->noutputs++];
      out->line = line;
      out->stream = prop(g, c, "stream");
      out->schema = prop(g, c, "schema");
    } else if (kind == CHILD_PARAM) {
      Param *p = &op->params[op->nparams++];
      p->line = line;
      p->name = prop(g, c, "name");
      find_origin(g, raw, "param", 0, line, &p->origin);
      p->text = text_of(g, c, &p->line);
    } else if (kind == CHILD_SET) {
      Set *s = &op->sets[op->nsets++];
      s->line = line;
      s->attr = prop(g, c, "attr");
      find_origin(g, raw, "set", 1, line, &s->origin);
      s->text = text_of(g, c, &s->line);
      s->slot = -1;
      s->states_before = op->nstates; /* set, state and let keep their relative order: evaluation order */
      s->lets_before = op->nlets;
    } else if (kind == CHILD_STATE) {
      StateVar *v = arena_alloc(a, sizeof *v);
      v->line = line;
      v->name = prop(g, c, "name");
      v->type = type_from_name(prop(g, c, "type"));
      v->init_text = prop(g, c, "init");
      find_origin(g, raw, "state", 2, line, &v->origin);
      v->text = text_of(g, c, &v->line);
      v->lets_before = op->nlets;
      op->states[op->nstates++] = v;
    } else if (kind == CHILD_LET) {
      Let *l = &op->lets[op->nlets++];
      l->line = line;
      l->name = prop(g, c, "name");
      l->type = type_from_name(prop(g, c, "type"));
      find_origin(g, raw, "let", 3, line, &l->origin);
      l->text = text_of(g, c, &l->line);
      l->states_before = op->nstates;
      l->sets_before = op->nsets;
    } else if (kind == CHILD_MODEL) {
      build_model(g, op, c);
    } else if (kind == CHILD_LIBRARY) {
      op->lib_path = prop(g, c, "path");
      op->lib_symbol = prop(g, c, "symbol");
      op->lib_line = line;
    }
  }
  return op;
}

static Graph *build_graph(xmlDocPtr doc, const char *name, Diag *d, RawText *raw) {
  xmlNodePtr root = xmlDocGetRootElement(doc);
  Graph *g = graph_new(name);
  g->name = prop(g, root, "name");
  g->schemas = arena_alloc(g->arena, sizeof(Schema *) * (size_t)(count_children(root, "schema") + 1));
  g->hosts = arena_alloc(g->arena, sizeof(Host *) * (size_t)(count_children(root, "host") + 1));
  g->ops = arena_alloc(g->arena, sizeof(Op *) * (size_t)(count_children(root, "operator") + 1));
  for (xmlNodePtr c = root->children; c; c = c->next) {
    if (is_element(c, "schema")) {
      Schema *s = arena_alloc(g->arena, sizeof *s);
      s->line = node_line(c);
      s->name = prop(g, c, "name");
      s->attrs = arena_alloc(g->arena, sizeof(Attr) * (size_t)(count_children(c, "attr") + 1));
      for (xmlNodePtr a = c->children; a; a = a->next) {
        if (!is_element(a, "attr")) continue;
        Attr *at = &s->attrs[s->nattrs++];
        at->line = node_line(a);
        at->name = prop(g, a, "name");
        at->type = type_from_name(prop(g, a, "type"));
      }
      g->schemas[g->nschemas++] = s;
    } else if (is_element(c, "host")) {
      Host *h = arena_alloc(g->arena, sizeof *h);
      h->line = node_line(c);
      h->name = prop(g, c, "name");
      h->address = prop(g, c, "address");
      g->hosts[g->nhosts++] = h;
    } else if (is_element(c, "operator")) {
      Op *op = build_op(g, c, d, raw);
      op->index = g->nops;
      g->ops[g->nops++] = op;
    }
  }
  return g;
}

/* ---- entry points ---- */

static xmlSchemaPtr load_schema(const char *xsd_path, Diag *d) {
  if (!xsd_path) {
    diag_error(d, 0, 0, "cannot find graph.xsd (set SF_SCHEMA to its path)");
    return NULL;
  }
  xmlSchemaParserCtxtPtr pc = xmlSchemaNewParserCtxt(xsd_path);
  if (pc) xmlSchemaSetParserStructuredErrors(pc, ignore_structured_error, NULL); /* said below, once */
  xmlSetGenericErrorFunc(NULL, ignore_generic_error);
  xmlSchemaPtr schema = pc ? xmlSchemaParse(pc) : NULL;
  if (pc) xmlSchemaFreeParserCtxt(pc);
  if (!schema) diag_error(d, 0, 0, "cannot load schema '%s'", xsd_path);
  return schema;
}

Graph *graph_parse_memory(const char *text, size_t len, const char *name, const char *xsd_path, Diag *d) {
  ParseState ps = { .d = d, .words = { .text = text, .len = len } };
  int before = d->nerrors;
  static xmlExternalEntityLoader default_loader;
  if (!default_loader) default_loader = xmlGetExternalEntityLoader();
  xmlSetExternalEntityLoader(refuse_entity_loader);
  xmlSetGenericErrorFunc(NULL, ignore_generic_error);
  xmlSetStructuredErrorFunc(&ps, on_xml_error);

  Graph *g = NULL;
  xmlDocPtr doc = NULL;
  xmlParserCtxtPtr ctxt = NULL;
  if (len == 0) {
    diag_error(d, 0, 0, "file is empty");
    goto done;
  }
  if (len > INT_MAX) {
    diag_error(d, 0, 0, "file is too large");
    goto done;
  }
  /* a NUL byte in what is not UTF-16 or UTF-32 text means a binary file: libxml2 would call it
   * "empty" or "truncated" */
  xmlCharEncoding enc =
      len >= 4 ? xmlDetectCharEncoding((const unsigned char *)text, 4) : XML_CHAR_ENCODING_NONE;
  const char *nul = memchr(text, 0, len);
  if (nul && (enc == XML_CHAR_ENCODING_NONE || enc == XML_CHAR_ENCODING_UTF8)) {
    int line = 1;
    for (const char *p = text; p < nul; p++) line += *p == '\n';
    diag_error(d, line, 0, "binary data (a NUL byte) where XML text was expected");
    goto done;
  }
  ctxt = xmlNewParserCtxt();
  if (!ctxt) sf_die("cannot create an XML parser");
  ctxt->_private = &ps;
  ctxt->sax->internalSubset = on_doctype;
  ctxt->sax->startElementNs = on_start_element;
  /* the tree is only read: small texts may live in their nodes (COMPACT), and the white space
   * between elements, which no rule reads, is not kept (NOBLANKS): a third less memory */
  doc = xmlCtxtReadMemory(ctxt, text, (int)len, name, NULL,
                          XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_COMPACT | XML_PARSE_NOBLANKS |
                              XML_PARSE_BIG_LINES);
  if (!doc || d->nerrors > before) goto done;

  xmlNodePtr root = xmlDocGetRootElement(doc);
  if (!root) {
    diag_error(d, 1, 0, "not an XML document: no element found");
    goto done;
  }
  if (strcmp((const char *)root->name, "graph")) {
    char elem[160];
    xmlerr_element_text(root, elem, sizeof elem);
    diag_error(d, node_line(root), 0, "the root element is %s, not <graph xmlns=\"" SF_NAMESPACE "\">", elem);
    goto done;
  }
  if (!root->ns) {
    diag_error(d, node_line(root), 0, "<graph> has no namespace (write <graph xmlns=\"" SF_NAMESPACE "\">)");
    goto done;
  }
  if (strcmp((const char *)root->ns->href, SF_NAMESPACE)) {
    diag_error(d, node_line(root), 0, "<graph> is in namespace '%s', not '" SF_NAMESPACE "'",
               (const char *)root->ns->href);
    goto done;
  }

  xmlSetExternalEntityLoader(default_loader); /* the schema itself is a file we trust */
  xmlSchemaPtr schema = load_schema(xsd_path, d);
  if (!schema) goto done;
  xmlSchemaValidCtxtPtr vc = xmlSchemaNewValidCtxt(schema);
  xmlSchemaSetValidStructuredErrors(vc, on_xml_error, &ps);
  int rc = xmlSchemaValidateDoc(vc, doc);
  xmlSchemaFreeValidCtxt(vc);
  xmlSchemaFree(schema);
  report_repeats(&ps, NULL);
  if (rc != 0 && d->nerrors == before) diag_error(d, 0, 0, "graph does not match graph.xsd");
  if (d->nerrors > before) goto done;

  RawText raw = { .buf = text, .len = len };
  raw_index_lines(&raw);
  g = build_graph(doc, name, d, &raw);
  free(raw.lines);
  if (d->nerrors > before) {
    graph_free(g);
    g = NULL;
  }
done:
  free(ps.repeats);
  if (doc) xmlFreeDoc(doc);
  if (ctxt) xmlFreeParserCtxt(ctxt);
  xmlSetStructuredErrorFunc(NULL, NULL);
  xmlSetExternalEntityLoader(default_loader);
  return g;
}

Graph *graph_parse_file(const char *path, const char *xsd_path, Diag *d) {
  FILE *f = fopen(path, "rb");
  struct stat st;
  if (!f) {
    diag_error(d, 0, 0, "cannot open file: %s", strerror(errno));
    return NULL;
  }
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    diag_error(d, 0, 0, "cannot read file: it is a directory");
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = sf_xmalloc(cap);
  for (;;) {
    if (len == cap) {
      if (cap >= GRAPH_MAX_BYTES) {
        fclose(f);
        free(buf);
        diag_error(d, 0, 0, "file is larger than %d MiB", GRAPH_MAX_BYTES >> 20);
        return NULL;
      }
      cap *= 2;
      buf = sf_xrealloc(buf, cap);
    }
    size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0) break;
  }
  int failed = ferror(f);
  int err = errno;
  fclose(f);
  if (failed) {
    free(buf);
    diag_error(d, 0, 0, "cannot read file: %s", strerror(err));
    return NULL;
  }
  Graph *g = graph_parse_memory(buf, len, path, xsd_path, d);
  free(buf);
  return g;
}
