/* transport_util.c: plumbing of the gRPC transport: the message queue, byte buffers, strings, the
 * log (see transport_priv.h). */
#include "transport_priv.h"

#include <grpc/byte_buffer_reader.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int mq_init(MsgQueue *q, int cap) {
  q->items = calloc((size_t)cap, sizeof *q->items);
  q->cap = cap;
  q->head = q->len = 0;
  return q->items ? 0 : -1;
}

void mq_push(MsgQueue *q, grpc_byte_buffer *bb) {
  q->items[(q->head + q->len) % q->cap] = bb;
  q->len++;
}

grpc_byte_buffer *mq_pop(MsgQueue *q) {
  grpc_byte_buffer *bb = q->items[q->head];
  q->head = (q->head + 1) % q->cap;
  q->len--;
  return bb;
}

void mq_clear(MsgQueue *q) {
  while (q->len > 0) grpc_byte_buffer_destroy(mq_pop(q));
}

void mq_free(MsgQueue *q) {
  if (q->items) mq_clear(q);
  free(q->items);
  q->items = NULL;
}

int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int printable(const char *s, size_t max) {
  if (!s || !*s) return 0;
  size_t n = 0;
  for (; s[n]; n++)
    if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] > 0x7e || n >= max) return 0;
  return 1;
}

void sanitize(char *dst, size_t dstlen, const void *src, size_t len) {
  const unsigned char *p = src;
  size_t n = len < dstlen - 1 ? len : dstlen - 1;
  for (size_t i = 0; i < n; i++) dst[i] = (p[i] >= 0x20 && p[i] <= 0x7e) ? (char)p[i] : '?';
  dst[n] = '\0';
}

int token_ok(const uint8_t *got, size_t gotlen, const char *want, size_t wantlen) {
  volatile unsigned diff = (gotlen != wantlen);
  for (size_t i = 0; i < wantlen; i++) diff |= (unsigned)((i < gotlen ? got[i] : 0) ^ (uint8_t)want[i]);
  return diff == 0;
}

const char *status_name(grpc_status_code c) {
  static const char *names[] = {
      "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
      "UNAUTHENTICATED"};
  return (c >= 0 && (size_t)c < sizeof names / sizeof *names) ? names[c] : "UNKNOWN_STATUS";
}

grpc_arg int_arg(const char *key, int value) {
  grpc_arg a;
  memset(&a, 0, sizeof a);
  a.type = GRPC_ARG_INTEGER;
  a.key = (char *)key;
  a.value.integer = value;
  return a;
}

void put_be64(uint8_t *p, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (uint8_t)v;
}

uint64_t get_be64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
  return v;
}

/* A message may be split over several slices; uncompressed buffers are copied slice by slice (one
 * copy), anything else goes through readall. */
void *bb_flatten(grpc_byte_buffer *bb, size_t *len) {
  grpc_byte_buffer_reader r;
  if (!grpc_byte_buffer_reader_init(&r, bb)) return NULL;
  char *p = NULL;
  if (bb->type == GRPC_BB_RAW && bb->data.raw.compression == GRPC_COMPRESS_NONE) {
    size_t n = grpc_byte_buffer_length(bb), off = 0;
    p = malloc(n ? n : 1);
    grpc_slice sl;
    while (grpc_byte_buffer_reader_next(&r, &sl)) {
      size_t sn = GRPC_SLICE_LENGTH(sl);
      if (p && off + sn <= n) memcpy(p + off, GRPC_SLICE_START_PTR(sl), sn);
      off += sn;
      grpc_slice_unref(sl);
    }
    if (p && off != n) { free(p); p = NULL; }
    *len = n;
  } else {
    grpc_slice all = grpc_byte_buffer_reader_readall(&r);
    size_t n = GRPC_SLICE_LENGTH(all);
    p = malloc(n ? n : 1);
    if (p && n) memcpy(p, GRPC_SLICE_START_PTR(all), n);
    grpc_slice_unref(all);
    *len = n;
  }
  grpc_byte_buffer_reader_destroy(&r);
  return p;
}

void tlog(Transport *t, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (t->log)
    t->log(t->log_ctx, line);
  else
    fprintf(stderr, "%s\n", line);
}

void leave(Transport *t) {
  t->busy--;
  if (t->stopping) pthread_cond_broadcast(&t->cv);
}
