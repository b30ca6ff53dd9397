/* wire.h: batches of items as bytes (protobuf-c, rt/wire.proto). rt/wire.c is the only file that
 * includes the generated header; nothing here exposes protobuf-c types. */
#ifndef SF_WIRE_H
#define SF_WIRE_H

#include "rt.h"

/* Appends the encoding of n items of edge `edge` (tuples of schema s) to out. */
void wire_encode(const char *edge, const Schema *s, const Item *items, int n, Buf *out);

/* Decodes one message of edge `edge` holding at most max_items items. On success returns 0 with
 * *items (malloc'd, n items, tuples with one reference each, owned by the caller; the tuples share
 * one slab, rt.h, freed with the last of them). On a malformed
 * message, or one with more than max_items items (counted before anything is unpacked, so an
 * oversized batch costs no memory), returns -1 with a lowercase reason in err and allocates
 * nothing. */
int wire_decode(const void *buf, size_t len, const char *edge, const Schema *s, int max_items, Item **items, int *n,
                char *err, size_t errlen);

#endif
