/* json_row.h: a tuple as one JSON object, the `json` format of KafkaSource and KafkaSink
 * (docs/language.md, "KafkaSource" and "KafkaSink"). json-c is behind this one file (json_row.c
 * is the only file of the runtime that includes it), as librdkafka is behind kafka.c.
 *
 * Reading takes the schema's attributes by name from the members of one object: an int from a
 * JSON integer within int64, a double from a finite number (or the strings "NaN", "Infinity" and
 * "-Infinity"), a string from a string, a bool from true or false. A member missing, null or of
 * another type is an error; members the schema does not name are ignored (of a name given twice,
 * the last counts). Anything but one object (white space around it allowed) is an error: invalid
 * JSON or UTF-8, another value, more after it.
 *
 * Writing gives `{"a":1,"b":"x"}`: every attribute in schema order, no white space, numbers with
 * the CSV writer's text (so a double reads back to the same bits), but for the few json-c cannot
 * read back as written (see json_row_put), strings escaped as RFC 8259 requires. */
#ifndef SF_JSON_ROW_H
#define SF_JSON_ROW_H

#include <stddef.h>

#include "value.h"

typedef struct JsonRowReader JsonRowReader;

/* A reader of objects into values of schema sc (not owned; it must outlive the reader). */
JsonRowReader *json_row_reader_new(const Schema *sc);
/* Parses text[0..n) as one object into vals (sc->nattrs values; a string borrows the reader's
 * memory until the next json_row_read or json_row_reader_free). 0, or -1 with what is wrong in
 * why (lowercase, no location: the caller names the record). */
int json_row_read(JsonRowReader *r, const char *text, size_t n, Value *vals, char *why, size_t cap);
void json_row_reader_free(JsonRowReader *r); /* NULL is ignored */

/* Appends the object of the n values v, named by sc's attributes (n == sc->nattrs). */
void json_row_put(Buf *b, const Schema *sc, const Value *v, int n);

#endif
