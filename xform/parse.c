/* parse.c: reads a graph file safely and builds the Graph.
 *
 * Safety: the file is read into memory by us (so a missing, empty or unreadable file gets a plain
 * message), libxml2 never touches the network (XML_PARSE_NONET, an entity loader that refuses
 * everything), entities are never substituted, and any DOCTYPE is refused as soon as the parser
 * meets it, so no entity can be declared at all (this is what defuses "billion laughs").
 * Then the document is validated against graph.xsd and turned into a Graph in one arena.
 * libxml2 stays inside this file and emit.c. */
#include "sf.h"

#include <ctype.h>
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlschemas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { GRAPH_MAX_BYTES = 64 * 1024 * 1024 };

typedef struct ParseState {
  Diag *d;          /* where errors go */
  bool doctype;     /* a DOCTYPE was refused */
  int doctype_line; /* where */
} ParseState;

/* ---- libxml2 set-up ---- */

static xmlParserInputPtr refuse_entity_loader(const char *url, const char *id, xmlParserCtxtPtr ctxt) {
  return NULL; /* never load anything from outside the document */
}

static void ignore_generic_error(void *ctx, const char *msg, ...) {}

/* libxml2 messages start with a capital and end with ".\n"; ours are lowercase without a period,
 * and the namespace every element carries is noise to a user. */
static void clean_message(const char *in, char *out, size_t cap) {
  static const char ns[] = "{" SF_NAMESPACE "}";
  size_t o = 0;
  for (size_t i = 0; in[i] && o + 1 < cap;) {
    if (!strncmp(in + i, ns, sizeof ns - 1)) {
      i += sizeof ns - 1;
      continue;
    }
    out[o++] = in[i++];
  }
  out[o] = 0;
  while (o > 0 && (out[o - 1] == '\n' || out[o - 1] == ' ' || out[o - 1] == '.')) out[--o] = 0;
  if (out[0] && isupper((unsigned char)out[0]) && !(out[1] && isupper((unsigned char)out[1])))
    out[0] = (char)tolower((unsigned char)out[0]);
}

/* A few schema messages read better said our way. */
static void rewrite_schema_message(char *msg, size_t cap) {
  const char *kind = strstr(msg, "attribute 'kind': [facet 'enumeration'] The value '");
  if (kind && !strncmp(msg, "element 'operator'", 18)) {
    kind = strchr(kind, '\'');
    kind = strchr(kind + 1, '\'') ? strstr(kind, "The value '") + 11 : NULL;
    if (kind) {
      const char *end = strchr(kind, '\'');
      char name[128];
      snprintf(name, sizeof name, "%.*s", (int)(end ? end - kind : 0), kind);
      snprintf(msg, cap, "unknown operator kind '%s'", name);
    }
  }
}

static void on_xml_error(void *ctx, xmlErrorPtr err) {
  ParseState *ps = ctx;
  if (!err || err->level == XML_ERR_WARNING) return;
  if (ps->doctype) return; /* we already said why we stopped */
  char msg[1024];
  clean_message(err->message ? err->message : "malformed document", msg, sizeof msg);
  rewrite_schema_message(msg, sizeof msg);
  int col = err->domain == XML_FROM_PARSER ? err->int2 : 0;
  diag_error(ps->d, err->line > 0 ? err->line : 1, col, "%s", msg);
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

static bool is_element(xmlNodePtr n, const char *name) {
  return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static int node_line(xmlNodePtr n) {
  long l = xmlGetLineNo(n);
  return l > 0 && l < INT_MAX ? (int)l : 0;
}

static const char *prop(Graph *g, xmlNodePtr n, const char *name) {
  xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
  if (!v) return NULL;
  char *s = arena_strdup(g->arena, (const char *)v);
  xmlFree(v);
  return s;
}

/* Text content, trimmed; *line is advanced past leading blank lines so that an expression written
 * on its own line is reported there. */
static const char *text_of(Graph *g, xmlNodePtr n, int *line) {
  xmlChar *v = xmlNodeGetContent(n);
  const char *s = v ? (const char *)v : "";
  while (*s && isspace((unsigned char)*s)) {
    if (*s == '\n') (*line)++;
    s++;
  }
  size_t len = strlen(s);
  while (len > 0 && isspace((unsigned char)s[len - 1])) len--;
  char *r = arena_strndup(g->arena, s, len);
  xmlFree(v);
  return r;
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
}

static Op *build_op(Graph *g, xmlNodePtr n, Diag *d) {
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
    errno = 0;
    long v = strtol(w, NULL, 10);
    if (errno || v < 1 || v > 1024) {
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
  op->channel = ch ? (int)strtol(ch, NULL, 10) : -1;
  if (op->region) g->rewritten = true;

  op->inputs = arena_alloc(a, sizeof(Input) * (size_t)(count_children(n, "input") + 1));
  op->outputs = arena_alloc(a, sizeof(Output) * (size_t)(count_children(n, "output") + 1));
  op->params = arena_alloc(a, sizeof(Param) * (size_t)(count_children(n, "param") + 1));
  op->sets = arena_alloc(a, sizeof(Set) * (size_t)(count_children(n, "set") + 1));
  op->states = arena_alloc(a, sizeof(StateVar *) * (size_t)(count_children(n, "state") + 1));
  for (xmlNodePtr c = n->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    int line = node_line(c);
    if (is_element(c, "input")) {
      Input *in = &op->inputs[op->ninputs++];
      in->line = line;
      in->names = split_list(g, prop(g, c, "stream"), &in->nstreams);
    } else if (is_element(c, "output")) {
      Output *out = &op->outputs[op->noutputs++];
      out->line = line;
      out->stream = prop(g, c, "stream");
      out->schema = prop(g, c, "schema");
    } else if (is_element(c, "param")) {
      Param *p = &op->params[op->nparams++];
      p->line = line;
      p->name = prop(g, c, "name");
      p->text = text_of(g, c, &p->line);
    } else if (is_element(c, "set")) {
      Set *s = &op->sets[op->nsets++];
      s->line = line;
      s->attr = prop(g, c, "attr");
      s->text = text_of(g, c, &s->line);
      s->slot = -1;
    } else if (is_element(c, "state")) {
      StateVar *v = arena_alloc(a, sizeof *v);
      v->line = line;
      v->name = prop(g, c, "name");
      v->type = type_from_name(prop(g, c, "type"));
      v->init_text = prop(g, c, "init");
      v->text = text_of(g, c, &v->line);
      op->states[op->nstates++] = v;
    } else if (is_element(c, "model")) {
      build_model(g, op, c);
    } else if (is_element(c, "library")) {
      op->lib_path = prop(g, c, "path");
      op->lib_symbol = prop(g, c, "symbol");
      op->lib_line = line;
    }
  }
  return op;
}

static Graph *build_graph(xmlDocPtr doc, const char *name, Diag *d) {
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
      Op *op = build_op(g, c, d);
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
  xmlSchemaSetParserErrors(pc, NULL, NULL, NULL);
  xmlSetGenericErrorFunc(NULL, ignore_generic_error);
  xmlSchemaPtr schema = pc ? xmlSchemaParse(pc) : NULL;
  if (pc) xmlSchemaFreeParserCtxt(pc);
  if (!schema) diag_error(d, 0, 0, "cannot load schema '%s'", xsd_path);
  return schema;
}

Graph *graph_parse_memory(const char *text, size_t len, const char *name, const char *xsd_path, Diag *d) {
  ParseState ps = { .d = d };
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
  ctxt = xmlNewParserCtxt();
  if (!ctxt) sf_die("cannot create an XML parser");
  ctxt->_private = &ps;
  ctxt->sax->internalSubset = on_doctype;
  doc = xmlCtxtReadMemory(ctxt, text, (int)len, name, NULL, XML_PARSE_NONET | XML_PARSE_NOCDATA);
  if (!doc || d->nerrors > before) goto done;

  xmlNodePtr root = xmlDocGetRootElement(doc);
  if (!root || strcmp((const char *)root->name, "graph") || !root->ns ||
      strcmp((const char *)root->ns->href, SF_NAMESPACE)) {
    diag_error(d, root ? node_line(root) : 1, 0,
               "the root element must be 'graph' in namespace '" SF_NAMESPACE "'");
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
  if (rc != 0 && d->nerrors == before) diag_error(d, 0, 0, "graph does not match graph.xsd");
  if (d->nerrors > before) goto done;

  g = build_graph(doc, name, d);
  if (d->nerrors > before) {
    graph_free(g);
    g = NULL;
  }
done:
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
