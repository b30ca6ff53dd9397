/* sortkey.c: sort keys, bytes whose memcmp order is the order of what a punctuation makes
 * operators emit (docs/language.md, "Event time": by window end, then window start, then the key's
 * values in partitionBy order), so that a region's Merge interleaves its replicas' emissions at a
 * tick exactly as one instance emits them (order.c), without knowing their types.
 *
 * Each part is self-delimiting, so parts concatenate: an int is 8 bytes big-endian with the sign
 * bit flipped; a double the same of its IEEE bits made monotonic (negative: all bits flipped;
 * otherwise the sign bit set), with -0.0 taken as 0.0 and every NaN as one value above +infinity;
 * a string its bytes with each 0x00 written 0x00 0x01, then 0x00 0x00 (so a prefix comes first);
 * a bool one byte, 0 or 1. The memcmp order of two keys of the same parts is value_compare's. */
#include "rt.h"

#include <string.h>

int sortkey_cmp(const void *a, size_t alen, const void *b, size_t blen) {
  size_t n = alen < blen ? alen : blen;
  int c = n ? memcmp(a, b, n) : 0;
  if (c) return c < 0 ? -1 : 1;
  return (alen > blen) - (alen < blen);
}

static void put_u64(Buf *b, uint64_t v) {
  unsigned char p[8];
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (56 - 8 * i));
  buf_append(b, (const char *)p, 8);
}

void sortkey_int(Buf *b, int64_t v) {
  put_u64(b, (uint64_t)v ^ (UINT64_C(1) << 63));
}

void sortkey_value(Buf *b, const Value *v) {
  switch (v->type) {
  case TYPE_INT: sortkey_int(b, v->i); break;
  case TYPE_DOUBLE: {
    double d = v->d == 0 ? 0.0 : v->d; /* -0.0 is 0.0 */
    uint64_t u;
    if (d != d) {
      u = UINT64_MAX; /* every NaN: one key, after +infinity */
    } else {
      memcpy(&u, &d, sizeof u);
      u = u >> 63 ? ~u : u | (UINT64_C(1) << 63);
    }
    put_u64(b, u);
    break;
  }
  case TYPE_STRING: {
    const char *p = v->s.p, *end = p + v->s.n;
    while (p < end) {
      const char *z = memchr(p, 0, (size_t)(end - p));
      if (!z) {
        buf_append(b, p, (size_t)(end - p));
        break;
      }
      buf_append(b, p, (size_t)(z - p));
      buf_append(b, "\0\1", 2);
      p = z + 1;
    }
    buf_append(b, "\0\0", 2);
    break;
  }
  case TYPE_BOOL: buf_append(b, v->b ? "\1" : "\0", 1); break;
  default: break;
  }
}
