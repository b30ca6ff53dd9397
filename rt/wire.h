/* wire.h: batches of items, and control messages, as bytes (protobuf-c, rt/wire.proto). rt/wire.c is the only file that
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

/* A control message (rt/wire.proto, Control): what executors say to each other about checkpoints. */
typedef enum { WIRE_CKPT_REQUEST = 1, WIRE_CKPT_DONE = 2, WIRE_CKPT_COMPLETE = 3, WIRE_CKPT_SOURCES = 4 } WireCtlKind;
typedef struct WireCtl {
  WireCtlKind kind;
  uint64_t ckpt;    /* the checkpoint's number, >= 1; 0 in WIRE_CKPT_SOURCES */
  uint64_t pos;     /* WIRE_CKPT_REQUEST: the sources' position; WIRE_CKPT_SOURCES: the furthest of
                       the sender's sources still running; 0 in the others */
  uint32_t running; /* WIRE_CKPT_SOURCES: how many of the sender's sources still run; 0 in the others */
} WireCtl;

/* The longest encoding of a control message: a longer one is refused before it is unpacked. */
enum { WIRE_CTL_MAX = 32 };

/* Appends the encoding of m to out. */
void wire_ctl_encode(const WireCtl *m, Buf *out);

/* Decodes one control message into *m. 0, or -1 with a lowercase reason in err for a malformed one
 * (not protobuf, longer than WIRE_CTL_MAX, an unknown kind, checkpoint 0 but on a sources report
 * and another on one, a position on other than a request or a sources report, a count of sources
 * on other than a sources report). Allocates nothing that outlives the call. */
int wire_ctl_decode(const void *buf, size_t len, WireCtl *m, char *err, size_t errlen);

#endif
