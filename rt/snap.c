/* snap.c: the byte layout of operator snapshots (rt.h): fixed-width little-endian numbers,
 * length-prefixed byte strings and typed values. A reader never goes past its end: it returns
 * zeros and remembers that the snapshot was bad. */
#include "rt.h"

#include <string.h>

static void put_le(Buf *b, uint64_t v, int n) {
  char tmp[8];
  for (int i = 0; i < n; i++) tmp[i] = (char)(v >> (8 * i));
  buf_append(b, tmp, (size_t)n);
}

void snap_u64(Buf *b, uint64_t v) { put_le(b, v, 8); }
void snap_i64(Buf *b, int64_t v) { put_le(b, (uint64_t)v, 8); }
void snap_bool(Buf *b, bool v) { put_le(b, v ? 1 : 0, 1); }

void snap_f64(Buf *b, double d) {
  uint64_t bits;
  memcpy(&bits, &d, sizeof bits);
  put_le(b, bits, 8);
}

void snap_bytes(Buf *b, const void *p, size_t n) {
  put_le(b, n, 8);
  buf_append(b, p, n);
}

void snap_value(Buf *b, const Value *v) {
  put_le(b, (uint64_t)v->type, 1);
  switch (v->type) {
  case TYPE_INT: snap_i64(b, v->i); break;
  case TYPE_DOUBLE: snap_f64(b, v->d); break;
  case TYPE_BOOL: snap_bool(b, v->b); break;
  case TYPE_STRING: snap_bytes(b, v->s.p, v->s.n); break;
  default: break;
  }
}

static const unsigned char *take(SnapIn *in, size_t n) {
  if (in->bad || n > in->n - in->off) {
    in->bad = true;
    return NULL;
  }
  const unsigned char *p = in->p + in->off;
  in->off += n;
  return p;
}

static uint64_t get_le(SnapIn *in, int n) {
  const unsigned char *p = take(in, (size_t)n);
  uint64_t v = 0;
  for (int i = 0; p && i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

uint64_t snap_get_u64(SnapIn *in) { return get_le(in, 8); }
int64_t snap_get_i64(SnapIn *in) { return (int64_t)get_le(in, 8); }

bool snap_get_bool(SnapIn *in) {
  uint64_t v = get_le(in, 1);
  if (v > 1) in->bad = true;
  return v == 1;
}

double snap_get_f64(SnapIn *in) {
  uint64_t bits = get_le(in, 8);
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

const void *snap_get_bytes(SnapIn *in, size_t *n) {
  uint64_t len = get_le(in, 8);
  const unsigned char *p = in->bad ? NULL : take(in, len);
  *n = p ? (size_t)len : 0;
  return p ? (const void *)p : "";
}

void snap_get_value(SnapIn *in, Value *v) {
  uint64_t type = get_le(in, 1);
  switch (type) {
  case TYPE_INT: value_put_int(v, snap_get_i64(in)); return;
  case TYPE_DOUBLE: value_put_double(v, snap_get_f64(in)); return;
  case TYPE_BOOL: value_put_bool(v, snap_get_bool(in)); return;
  case TYPE_STRING: {
    size_t n;
    const char *p = snap_get_bytes(in, &n);
    value_put_string(v, p, n);
    return;
  }
  default:
    in->bad = true;
    value_put_int(v, 0);
  }
}

bool snap_done(const SnapIn *in) { return !in->bad && in->off == in->n; }
