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
 * violation. libxml2's messages are reworded in ours (see "libxml2's messages, said our way").
 * Lines are libxml2's: an element is numbered by the line where its start tag ends.
 * libxml2 stays inside this file and emit.c. */
#include "sf.h"

#include <ctype.h>
#include <errno.h>
#include <libxml/parser.h>
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
  int reported;          /* how many of them are reported */
  bool doctype;          /* a DOCTYPE was refused */
  bool malformed;        /* a well-formedness error was reported; what follows is its echo */
  const void *last_node; /* schema errors: the element and attribute of the last message, so */
  char last_attr[64];    /* that libxml2's second message about the same value is dropped */
  const char *text;      /* the document */
  size_t len;            /* its length */
} ParseState;

/* True when nothing but white space follows line `line`, column `col` (1-based) of the text. */
static bool only_space_after(const ParseState *ps, int line, int col) {
  size_t i = 0;
  for (int l = 1; l < line && i < ps->len; i++)
    if (ps->text[i] == '\n') l++;
  for (i += col > 0 ? (size_t)col - 1 : 0; i < ps->len; i++)
    if (!isspace((unsigned char)ps->text[i])) return false;
  return true;
}

/* ---- libxml2 set-up ---- */

static xmlParserInputPtr refuse_entity_loader(const char *url, const char *id, xmlParserCtxtPtr ctxt) {
  return NULL; /* never load anything from outside the document */
}

static void ignore_generic_error(void *ctx, const char *msg, ...) {}

static void ignore_structured_error(void *ctx, xmlErrorPtr err) {}

/* ---- libxml2's messages, said our way ----
 * libxml2 words its messages for XML experts ("AttValue: \" or ' expected", "Element '{urn:...}x':
 * This element is not expected. Expected is ( ... )"), and the wording changes between versions.
 * The errors users meet are recognized by code and reworded: lowercase, problem first, names
 * quoted, elements written <name>. Anything else keeps libxml2's text, cleaned up. */

/* libxml2 messages start with a capital and end with ".\n"; ours are lowercase without a period,
 * on one line, and the namespace every element carries is noise to a user. */
static void clean_message(const char *in, char *out, size_t cap) {
  static const char ns[] = "{" SF_NAMESPACE "}";
  size_t o = 0;
  for (size_t i = 0; in[i] && in[i] != '\n' && o + 1 < cap;) {
    if (!strncmp(in + i, ns, sizeof ns - 1)) {
      i += sizeof ns - 1;
      continue;
    }
    out[o++] = in[i++];
  }
  out[o] = 0;
  while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == '.')) out[--o] = 0;
  if (out[0] && isupper((unsigned char)out[0]) && !(out[1] && isupper((unsigned char)out[1])))
    out[0] = (char)tolower((unsigned char)out[0]);
}

static const char *str_or(const char *s, const char *dflt) {
  return s ? s : dflt;
}

/* A well-formedness error (XML_FROM_PARSER, XML_FROM_NAMESPACE) in our words, or false. *col
 * comes as where libxml2 noticed the problem and is moved to where it starts, or to 0 when that
 * is not known (a closing tag is noticed after its '>'). */
static bool parser_message(const ParseState *ps, const xmlError *err, char *msg, size_t cap, int *col) {
  const char *m = str_or(err->message, "");
  switch (err->code) {
  case XML_ERR_DOCUMENT_EMPTY:
    if (only_space_after(ps, err->line, err->int2)) {
      *col = 0;
      snprintf(msg, cap, "the file has no root element (expected <graph>)");
    }
    else if (strstr(m, "'<' not found"))
      snprintf(msg, cap, "not an XML document: expected '<' to start an element");
    else
      snprintf(msg, cap, "not an XML document: no element found");
    return true;
  case XML_ERR_DOCUMENT_END:
    snprintf(msg, cap, "unexpected content after the end of the root element");
    return true;
  case XML_ERR_TAG_NAME_MISMATCH:
    *col = 0;
    snprintf(msg, cap, "closing tag '</%s>' does not match '<%s>' opened on line %d", str_or(err->str2, ""),
             str_or(err->str1, ""), err->int1);
    return true;
  case XML_ERR_TAG_NOT_FINISHED:
    *col = 0;
    snprintf(msg, cap, "'<%s>' opened on line %d is not closed before the end of the file",
             str_or(err->str1, ""), err->int1);
    return true;
  case XML_ERR_GT_REQUIRED:
    *col = 0;
    snprintf(msg, cap, "start tag '<%s' opened on line %d is not ended by '>'", str_or(err->str1, ""),
             err->int1);
    return true;
  case XML_ERR_ATTRIBUTE_NOT_STARTED:
    snprintf(msg, cap, "attribute value must be quoted with '\"' or \"'\"");
    return true;
  case XML_ERR_LT_IN_ATTRIBUTE:
    snprintf(msg, cap, "'<' inside an attribute value (is a closing quote missing?)");
    return true;
  case XML_ERR_ATTRIBUTE_REDEFINED:
    snprintf(msg, cap, "attribute '%s' is given twice", str_or(err->str1, ""));
    return true;
  case XML_ERR_NAME_REQUIRED:
    if (*col > 1) (*col)--; /* the '&' or '<' was consumed */
    if (!strncmp(m, "xmlParseEntityRef", 17)) {
      snprintf(msg, cap, "'&' does not start an entity reference (write '&amp;' for a literal '&')");
      return true;
    }
    if (strstr(m, "invalid element name")) {
      snprintf(msg, cap, "'<' does not start an element (write '&lt;' for a literal '<')");
      return true;
    }
    return false;
  case XML_ERR_UNDECLARED_ENTITY:
  case XML_WAR_UNDECLARED_ENTITY:
    if (err->str1 && *col > (int)strlen(err->str1) + 2) *col -= (int)strlen(err->str1) + 2; /* "&name;" */
    snprintf(msg, cap, "unknown entity '&%s;' (a graph may use only &lt; &gt; &amp; &quot; &apos; and "
             "character references)", str_or(err->str1, ""));
    return true;
  case XML_ERR_INVALID_CHAR:
    if (!strncmp(m, "Input is not proper UTF-8", 25) && err->str1 && !strncmp(err->str1, "Bytes: ", 7)) {
      size_t n = strcspn(err->str1 + 7, "\n");
      snprintf(msg, cap, "the file is not valid UTF-8 (bytes %.*s)", (int)n, err->str1 + 7);
      return true;
    }
    return false;
  case XML_ERR_UNSUPPORTED_ENCODING:
    snprintf(msg, cap, "unsupported encoding '%s'", str_or(err->str1, ""));
    return true;
  case XML_ERR_RESERVED_XML_NAME:
    snprintf(msg, cap, "the XML declaration '<?xml ...?>' must be at the very start of the file");
    return true;
  case XML_NS_ERR_UNDEFINED_NAMESPACE:
    snprintf(msg, cap, "namespace prefix '%s' is not declared", str_or(err->str1, ""));
    return true;
  default:
    return false;
  }
}

/* The elements of the language and, for those whose element children come in a fixed order, the
 * children in order (an operator's come in any order). */
static const char *const known_elements[] = {
  "graph", "schema", "attr", "host", "operator", "input", "output", "param", "set", "state", "model",
  "library", NULL,
};
static const struct {
  const char *parent;      /* an element with element children */
  const char *children[8]; /* the children it takes */
  const char *order;       /* the same, in the order the schema wants them */
} element_children[] = {
  {"graph", {"schema", "host", "operator"}, "<schema>, <host>, <operator>"},
  {"schema", {"attr"}, "<attr>"},
};

static bool in_list(const char *const *list, int n, const char *name) {
  for (int i = 0; i < n && list[i]; i++)
    if (!strcmp(list[i], name)) return true;
  return false;
}

static bool in_our_namespace(xmlNodePtr n) {
  return n->ns && n->ns->href && !strcmp((const char *)n->ns->href, SF_NAMESPACE);
}

/* `<name>`, with the prefix it was written with when it is not in our namespace. */
static void element_text(xmlNodePtr n, char *out, size_t cap) {
  if (!in_our_namespace(n) && n->ns && n->ns->prefix)
    snprintf(out, cap, "<%s:%s>", (const char *)n->ns->prefix, (const char *)n->name);
  else
    snprintf(out, cap, "<%s>", (const char *)n->name);
}

static const char *name_attr(xmlNodePtr n, char *buf, size_t cap) {
  xmlChar *v = xmlGetProp(n, (const xmlChar *)"name");
  snprintf(buf, cap, "%s", v ? (const char *)v : "");
  xmlFree(v);
  return buf;
}

/* An element as messages name it: "operator 'bars'" for the named elements (unless the message is
 * about that very name), `<name>` for the others. */
static void element_named(xmlNodePtr n, const char *attr, char *out, size_t cap) {
  const char *name = (const char *)n->name;
  char value[128];
  if (in_our_namespace(n) && strcmp(attr, "name") &&
      (!strcmp(name, "operator") || !strcmp(name, "schema") || !strcmp(name, "host")) &&
      *name_attr(n, value, sizeof value))
    snprintf(out, cap, "%s '%s'", name, value);
  else
    element_text(n, out, cap);
}

/* The line of the first earlier sibling with the same element name and `name` attribute. */
static int first_declaration_line(xmlNodePtr n) {
  char mine[256], other[256];
  name_attr(n, mine, sizeof mine);
  for (xmlNodePtr p = n->parent ? n->parent->children : NULL; p && p != n; p = p->next)
    if (p->type == XML_ELEMENT_NODE && !strcmp((const char *)p->name, (const char *)n->name) &&
        !strcmp(name_attr(p, other, sizeof other), mine))
      return (int)xmlGetLineNo(p);
  return 0;
}

/* "'a', 'b', 'c'" becomes "'a', 'b' or 'c'". */
static void or_list(const char *list, char *out, size_t cap) {
  snprintf(out, cap, "%s", list);
  char *last = NULL;
  for (char *p = strstr(out, "', '"); p; p = strstr(p + 1, "', '")) last = p;
  if (last && strlen(out) + 3 < cap) {
    memmove(last + 6, last + 4, strlen(last + 4) + 1);
    memcpy(last, "' or '", 6);
  }
}

/* The text of a "text not allowed" error: where it is and how it starts. */
static void unexpected_text(xmlNodePtr n, const char *elem, char *msg, size_t cap, int *line) {
  for (xmlNodePtr c = n->children; c; c = c->next) {
    if (c->type != XML_TEXT_NODE || !c->content) continue;
    const char *t = (const char *)c->content;
    while (*t && isspace((unsigned char)*t)) t++;
    if (!*t) continue;
    /* libxml2 numbers a text node with the line where the text ends */
    long l = xmlGetLineNo(c);
    for (const char *q = t; *q; q++) l -= *q == '\n';
    if (l >= xmlGetLineNo(n)) *line = (int)l;
    size_t len = strcspn(t, "\r\n");
    while (len > 0 && isspace((unsigned char)t[len - 1])) len--;
    snprintf(msg, cap, "unexpected text '%.*s%s' inside %s", (int)(len > 40 ? 40 : len), t,
             len > 40 ? "..." : "", elem);
    return;
  }
  snprintf(msg, cap, "text is not allowed inside %s", elem);
}

/* "This element is not expected": unknown, misplaced, repeated or in another namespace. */
static bool unexpected_element(xmlNodePtr n, const char *elem, char *msg, size_t cap) {
  xmlNodePtr parent = n->parent;
  if (!parent || parent->type != XML_ELEMENT_NODE) return false;
  char pelem[192];
  element_named(parent, "", pelem, sizeof pelem);
  const char *name = (const char *)n->name;
  bool ours = in_our_namespace(n);
  int nk = (int)(sizeof element_children / sizeof element_children[0]);
  for (int k = 0; ours && k < nk; k++) {
    if (strcmp(element_children[k].parent, (const char *)parent->name)) continue;
    if (!in_list(element_children[k].children, 8, name)) break;
    snprintf(msg, cap, "%s is out of order inside %s: its children come in the order %s", elem, pelem,
             element_children[k].order);
    return true;
  }
  bool known = in_list(known_elements, 64, name);
  if (ours && known)
    snprintf(msg, cap, "%s is not allowed inside %s", elem, pelem);
  else if (known)
    snprintf(msg, cap, "%s is not in namespace '" SF_NAMESPACE "'", elem);
  else
    snprintf(msg, cap, "unknown element %s inside %s", elem, pelem);
  return true;
}

/* A schema-validity error in our words, or false; *line may move to a better place. An empty
 * message means: already said. */
static bool schema_message(ParseState *ps, const xmlError *err, char *msg, size_t cap, int *line) {
  xmlNodePtr n = err->node;
  if (!n || n->type != XML_ELEMENT_NODE) return false;
  const char *m = str_or(err->message, "");
  char elem[192], attr[64] = "", buf[256], buf2[256];
  const char *a = strstr(m, ", attribute '");
  if (a) {
    a += 13;
    snprintf(attr, sizeof attr, "%.*s", (int)strcspn(a, "'"), a);
  }
  element_named(n, attr, elem, sizeof elem);
  /* libxml2 reports a bad list item and then the list: one message is enough */
  if (*attr && ps->last_node == n && !strcmp(ps->last_attr, attr)) {
    msg[0] = 0;
    return true;
  }
  ps->last_node = n;
  snprintf(ps->last_attr, sizeof ps->last_attr, "%s", attr);
  const char *value = str_or(err->str1, "");

  switch (err->code) {
  case XML_SCHEMAV_CVC_COMPLEX_TYPE_4:
    snprintf(msg, cap, "%s needs attribute '%s'", elem, value);
    return true;
  case XML_SCHEMAV_CVC_COMPLEX_TYPE_3_2_1:
    snprintf(msg, cap, "attribute '%s' is not allowed on %s", value, elem);
    return true;
  case XML_SCHEMAV_CVC_ENUMERATION_VALID:
    if (!strcmp((const char *)n->name, "operator") && !strcmp(attr, "kind")) {
      snprintf(msg, cap, "unknown operator kind '%s'", value);
      return true;
    }
    or_list(str_or(err->str2, ""), buf, sizeof buf);
    snprintf(msg, cap, "attribute '%s' of %s must be %s, got '%s'", attr, elem, buf, value);
    return true;
  case XML_SCHEMAV_CVC_PATTERN_VALID:
    if (!strcmp(attr, "address"))
      snprintf(msg, cap, "attribute 'address' of %s must be HOST:PORT, got '%s'", elem, value);
    else
      snprintf(msg, cap, "'%s' in attribute '%s' of %s is not a valid name (a letter or '_', then "
               "letters, digits or '_')", value, attr, elem);
    return true;
  case XML_SCHEMAV_CVC_DATATYPE_VALID_1_2_1: {
    const char *want = strstr(m, "'xs:positiveInteger'")      ? "a positive integer"
                     : strstr(m, "'xs:nonNegativeInteger'")   ? "a non-negative integer"
                                                              : NULL;
    if (!want || !*attr) return false;
    snprintf(msg, cap, "attribute '%s' of %s must be %s, got '%s'", attr, elem, want, value);
    return true;
  }
  case XML_SCHEMAV_CVC_MINLENGTH_VALID:
    if (!*attr) return false;
    snprintf(msg, cap, "attribute '%s' of %s is empty", attr, elem);
    return true;
  case XML_SCHEMAV_CVC_COMPLEX_TYPE_2_1:
  case XML_SCHEMAV_CVC_COMPLEX_TYPE_2_3:
    unexpected_text(n, elem, msg, cap, line);
    return true;
  case XML_SCHEMAV_ELEMENT_CONTENT:
    if (strstr(m, "Missing child element")) {
      if (!strcmp((const char *)n->name, "graph"))
        snprintf(msg, cap, "the graph has no <operator>");
      else if (!strcmp((const char *)n->name, "schema"))
        snprintf(msg, cap, "schema '%s' has no <attr>", name_attr(n, buf, sizeof buf));
      else
        return false;
      return true;
    }
    return strstr(m, "This element is not expected") && unexpected_element(n, elem, msg, cap);
  case XML_SCHEMAV_CVC_IDC:
    if (err->str2 && strstr(err->str2, "uniqueAttrName")) {
      snprintf(msg, cap, "attribute '%s' is declared twice in schema '%s' (first on line %d)",
               name_attr(n, buf, sizeof buf), n->parent ? name_attr(n->parent, buf2, sizeof buf2) : "",
               first_declaration_line(n));
      return true;
    }
    if (err->str2 && (strstr(err->str2, "uniqueSchemaName") || strstr(err->str2, "uniqueHostName"))) {
      snprintf(msg, cap, "%s '%s' is declared twice (first on line %d)", (const char *)n->name,
               name_attr(n, buf, sizeof buf), first_declaration_line(n));
      return true;
    }
    return false;
  default:
    return false;
  }
}

/* ---- what graph.xsd cannot say ----
 * An operator's children come in any order, which XSD 1.0 can only write as a repeated choice, so
 * that <model> and <library> appear at most once is checked here: the repetitions are found before
 * validation and each is reported in document order among libxml2's messages, as the schema
 * would have reported it. */

/* Collects every repeated <model> or <library> of the operators under root into ps->repeats. */
static void find_repeats(ParseState *ps, xmlNodePtr root) {
  static const char *const single[] = {"model", "library"};
  int cap = 0;
  for (xmlNodePtr op = root->children; op; op = op->next) {
    if (op->type != XML_ELEMENT_NODE || !in_our_namespace(op) || strcmp((const char *)op->name, "operator"))
      continue;
    bool seen[2] = {false, false};
    for (xmlNodePtr c = op->children; c; c = c->next) {
      if (c->type != XML_ELEMENT_NODE || !in_our_namespace(c)) continue;
      for (int k = 0; k < 2; k++) {
        if (strcmp((const char *)c->name, single[k])) continue;
        if (seen[k]) {
          if (ps->nrepeats == cap) {
            cap = cap ? 2 * cap : 8;
            ps->repeats = sf_xrealloc(ps->repeats, sizeof *ps->repeats * (size_t)cap);
          }
          ps->repeats[ps->nrepeats++] = c;
        }
        seen[k] = true;
      }
    }
  }
}

/* Reports the repetitions that come before `node` in the document (all that are left when node
 * is NULL). A message about an element is said where the element starts, before its children. */
static void report_repeats(ParseState *ps, xmlNodePtr node) {
  for (; ps->reported < ps->nrepeats; ps->reported++) {
    xmlNodePtr r = ps->repeats[ps->reported];
    if (node && xmlXPathCmpNodes(r, node) != 1) break; /* 1: r comes first */
    char elem[192];
    element_named(r->parent, "", elem, sizeof elem);
    diag_error(ps->d, (int)xmlGetLineNo(r), 0, "%s takes at most one <%s>", elem, (const char *)r->name);
  }
}

/* ---- libxml2's errors, collected ---- */

static void on_xml_error(void *ctx, xmlErrorPtr err) {
  ParseState *ps = ctx;
  if (!err || err->level == XML_ERR_WARNING) return;
  if (ps->doctype || ps->malformed) return; /* we already said why we stopped */
  char msg[1024] = "";
  int line = err->line > 0 ? err->line : 1;
  int col = 0;
  if (err->domain == XML_FROM_PARSER || err->domain == XML_FROM_NAMESPACE) {
    /* a document that is not well-formed gets one message: what libxml2 says after the first
     * problem is mostly the same problem seen again */
    ps->malformed = true;
    col = err->int2;
    if (!parser_message(ps, err, msg, sizeof msg, &col))
      clean_message(str_or(err->message, "malformed document"), msg, sizeof msg);
  } else if (err->domain == XML_FROM_SCHEMASV) {
    if (err->node) report_repeats(ps, err->node);
    if (!schema_message(ps, err, msg, sizeof msg, &line))
      clean_message(str_or(err->message, "graph does not match graph.xsd"), msg, sizeof msg);
    if (!msg[0]) return;
  } else {
    clean_message(str_or(err->message, "malformed document"), msg, sizeof msg);
  }
  diag_error(ps->d, line, col, "%s", msg);
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
  int seen[3];       /* param, set, state elements already found on last_line */
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
    raw->seen[0] = raw->seen[1] = raw->seen[2] = 0;
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
  const char *final = prop(g, n, "final");
  m->final = final && !strcmp(final, "emits") ? FINAL_EMITS : FINAL_NONE;
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

  int ninputs = 0, noutputs = 0, nparams = 0, nsets = 0, nstates = 0;
  for (xmlNodePtr c = n->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    const char *e = (const char *)c->name;
    ninputs += !strcmp(e, "input");
    noutputs += !strcmp(e, "output");
    nparams += !strcmp(e, "param");
    nsets += !strcmp(e, "set");
    nstates += !strcmp(e, "state");
  }
  op->inputs = arena_alloc(a, sizeof(Input) * (size_t)(ninputs + 1));
  op->outputs = arena_alloc(a, sizeof(Output) * (size_t)(noutputs + 1));
  op->params = arena_alloc(a, sizeof(Param) * (size_t)(nparams + 1));
  op->sets = arena_alloc(a, sizeof(Set) * (size_t)(nsets + 1));
  op->states = arena_alloc(a, sizeof(StateVar *) * (size_t)(nstates + 1));
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
      find_origin(g, raw, "param", 0, line, &p->origin);
      p->text = text_of(g, c, &p->line);
    } else if (is_element(c, "set")) {
      Set *s = &op->sets[op->nsets++];
      s->line = line;
      s->attr = prop(g, c, "attr");
      find_origin(g, raw, "set", 1, line, &s->origin);
      s->text = text_of(g, c, &s->line);
      s->slot = -1;
    } else if (is_element(c, "state")) {
      StateVar *v = arena_alloc(a, sizeof *v);
      v->line = line;
      v->name = prop(g, c, "name");
      v->type = type_from_name(prop(g, c, "type"));
      v->init_text = prop(g, c, "init");
      find_origin(g, raw, "state", 2, line, &v->origin);
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
  ParseState ps = { .d = d, .text = text, .len = len };
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
  /* the tree is only read: small texts may live in their nodes (COMPACT), and the white space
   * between elements, which no rule reads, is not kept (NOBLANKS): a third less memory */
  doc = xmlCtxtReadMemory(ctxt, text, (int)len, name, NULL,
                          XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_COMPACT | XML_PARSE_NOBLANKS);
  if (!doc || d->nerrors > before) goto done;

  xmlNodePtr root = xmlDocGetRootElement(doc);
  if (!root) {
    diag_error(d, 1, 0, "not an XML document: no element found");
    goto done;
  }
  if (strcmp((const char *)root->name, "graph")) {
    char elem[160];
    element_text(root, elem, sizeof elem);
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
  find_repeats(&ps, root);
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
