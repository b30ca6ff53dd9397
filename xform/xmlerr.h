/* xmlerr.h: libxml2's error messages, said our way (xmlerr.c). A header of its own, not a section
 * of sf.h, because it speaks libxml2's types: only parse.c and xmlerr.c include it. */
#ifndef SF_XMLERR_H
#define SF_XMLERR_H

#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <stdbool.h>
#include <stddef.h>

/* What rewording needs besides the error: the document, and what the last schema message was
 * about. One per parse, zero-initialized apart from text and len. */
typedef struct XmlWording {
  const char *text;      /* the document */
  size_t len;            /* its length */
  const void *last_node; /* schema errors: the element and attribute of the last message, so */
  char last_attr[64];    /* that libxml2's second message about the same value is dropped */
} XmlWording;

/* Words err, a parser, namespace or schema-validity error, in our way: the message (at most cap
 * bytes, one line, lowercase, no final period) into msg, and where it points into *line (1 when
 * libxml2 gives none) and *col (0: no column). The messages users meet are reworded by code;
 * others keep libxml2's text, cleaned up. Returns false, with nothing to report, for a schema
 * error that repeats the previous message (libxml2 reports a bad list item and then the list). */
bool xmlerr_reword(XmlWording *w, const xmlError *err, char *msg, size_t cap, int *line, int *col);

/* The line of node n: libxml2 keeps an element's line in 16 bits (XML_PARSE_BIG_LINES keeps the
 * lines of texts only), so the parser puts the line of an element past 65,534 in its psvi field,
 * which nothing else uses in a parsed tree, and this reads it back. 0 when unknown. */
int xmlerr_line(xmlNodePtr n);

/* True when n is in the graph namespace (SF_NAMESPACE). */
bool xmlerr_ours(xmlNodePtr n);

/* `<name>`, with the prefix it was written with when n is not in our namespace. */
void xmlerr_element_text(xmlNodePtr n, char *out, size_t cap);

/* n as messages name it: "operator 'bars'" for an operator, schema or host with a name (unless the
 * message is about that very attribute: attr "name"), `<name>` for the others. */
void xmlerr_element_named(xmlNodePtr n, const char *attr, char *out, size_t cap);

#endif
