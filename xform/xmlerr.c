/* xmlerr.c: libxml2's error messages, said our way (parse.c reads the file and builds the graph;
 * this file only words what libxml2 found).
 *
 * libxml2 words its messages for XML experts ("AttValue: \" or ' expected", "Element '{urn:...}x':
 * This element is not expected. Expected is ( ... )"), and the wording changes between versions.
 * The errors users meet are recognized by code and reworded: lowercase, problem first, names
 * quoted, elements written <name>. Anything else keeps libxml2's text, cleaned up. */
#include "sf.h"
#include "xmlerr.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

/* True when nothing but white space follows line `line`, column `col` (1-based) of the text. */
static bool only_space_after(const XmlWording *w, int line, int col) {
  size_t i = 0;
  for (int l = 1; l < line && i < w->len; i++)
    if (w->text[i] == '\n') l++;
  for (i += col > 0 ? (size_t)col - 1 : 0; i < w->len; i++)
    if (!isspace((unsigned char)w->text[i])) return false;
  return true;
}


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
static bool parser_message(const XmlWording *w, const xmlError *err, char *msg, size_t cap, int *col) {
  const char *m = str_or(err->message, "");
  switch (err->code) {
  case XML_ERR_DOCUMENT_EMPTY:
    if (only_space_after(w, err->line, err->int2)) {
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
    if (err->str1) /* a start tag; libxml2 names no element for a closing tag */
      snprintf(msg, cap, "start tag '<%s' opened on line %d is not ended by '>'", err->str1, err->int1);
    else
      snprintf(msg, cap, "a closing tag is not ended by '>'");
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

bool xmlerr_ours(xmlNodePtr n) {
  return n->ns && n->ns->href && !strcmp((const char *)n->ns->href, SF_NAMESPACE);
}

/* `<name>`, with the prefix it was written with when it is not in our namespace. */
void xmlerr_element_text(xmlNodePtr n, char *out, size_t cap) {
  if (!xmlerr_ours(n) && n->ns && n->ns->prefix)
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
void xmlerr_element_named(xmlNodePtr n, const char *attr, char *out, size_t cap) {
  const char *name = (const char *)n->name;
  char value[128];
  if (xmlerr_ours(n) && strcmp(attr, "name") &&
      (!strcmp(name, "operator") || !strcmp(name, "schema") || !strcmp(name, "host")) &&
      *name_attr(n, value, sizeof value))
    snprintf(out, cap, "%s '%s'", name, value);
  else
    xmlerr_element_text(n, out, cap);
}

/* The line of the first earlier sibling with the same element name and `name` attribute. */
static int first_declaration_line(xmlNodePtr n) {
  char mine[256], other[256];
  name_attr(n, mine, sizeof mine);
  for (xmlNodePtr p = n->parent ? n->parent->children : NULL; p && p != n; p = p->next)
    if (p->type == XML_ELEMENT_NODE && !strcmp((const char *)p->name, (const char *)n->name) &&
        !strcmp(name_attr(p, other, sizeof other), mine))
      return xmlerr_line(p);
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
    long l = xmlerr_line(c);
    for (const char *q = t; *q; q++) l -= *q == '\n';
    if (l >= xmlerr_line(n)) *line = (int)l;
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
  xmlerr_element_named(parent, "", pelem, sizeof pelem);
  const char *name = (const char *)n->name;
  bool ours = xmlerr_ours(n);
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
static bool schema_message(XmlWording *w, const xmlError *err, char *msg, size_t cap, int *line) {
  xmlNodePtr n = err->node;
  if (!n || n->type != XML_ELEMENT_NODE) return false;
  const char *m = str_or(err->message, "");
  char elem[192], attr[64] = "", buf[256], buf2[256];
  const char *a = strstr(m, ", attribute '");
  if (a) {
    a += 13;
    snprintf(attr, sizeof attr, "%.*s", (int)strcspn(a, "'"), a);
  }
  xmlerr_element_named(n, attr, elem, sizeof elem);
  /* libxml2 reports a bad list item and then the list: one message is enough */
  if (*attr && w->last_node == n && !strcmp(w->last_attr, attr)) {
    msg[0] = 0;
    return true;
  }
  w->last_node = n;
  snprintf(w->last_attr, sizeof w->last_attr, "%s", attr);
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
      const char *hint = kind_suggest(value);
      snprintf(msg, cap, "unknown operator kind '%s'" DIAG_HINT_FMT, value, DIAG_HINT(hint));
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

int xmlerr_line(xmlNodePtr n) {
  if (n->type == XML_ELEMENT_NODE && n->line == 65535 && n->psvi) return (int)(intptr_t)n->psvi;
  long l = xmlGetLineNo(n);
  return l > 0 && l < INT_MAX ? (int)l : 0;
}

bool xmlerr_reword(XmlWording *w, const xmlError *err, char *msg, size_t cap, int *line, int *col) {
  msg[0] = 0;
  *line = err->line > 0 ? err->line : 1;
  *col = 0;
  if (err->domain == XML_FROM_PARSER || err->domain == XML_FROM_NAMESPACE) {
    *col = err->int2;
    if (!parser_message(w, err, msg, cap, col)) clean_message(str_or(err->message, "malformed document"), msg, cap);
  } else if (err->domain == XML_FROM_SCHEMASV) {
    if (err->node && xmlerr_line(err->node) > 0) *line = xmlerr_line(err->node);
    if (!schema_message(w, err, msg, cap, line))
      clean_message(str_or(err->message, "graph does not match graph.xsd"), msg, cap);
    if (!msg[0]) return false; /* already said */
  } else {
    clean_message(str_or(err->message, "malformed document"), msg, cap);
  }
  return true;
}
