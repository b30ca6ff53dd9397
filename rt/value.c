/* value.c: runtime helpers on Value: Buf, shortest double text, stable hashing, comparison and the
 * text form of values in CSV fields. Everything here is deterministic across hosts: hashes are
 * defined on a fixed byte encoding, not on memory layout. */
#include "value.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Buf ---- */

void buf_init(Buf *b) {
  b->p = NULL;
  b->n = 0;
  b->cap = 0;
}

void buf_release(Buf *b) {
  free(b->p);
  buf_init(b);
}

void buf_reset(Buf *b) {
  b->n = 0;
  if (b->p) b->p[0] = 0;
}

char *buf_grow(Buf *b, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + n + 1) cap *= 2;
    b->p = sf_xrealloc(b->p, cap);
    b->cap = cap;
  }
  return b->p + b->n;
}

void buf_append(Buf *b, const char *p, size_t n) {
  buf_reserve(b, n);
  if (n) memcpy(b->p + b->n, p, n);
  b->n += n;
  b->p[b->n] = 0;
}

void buf_putc(Buf *b, char c) {
  buf_append(b, &c, 1);
}

void buf_puts(Buf *b, const char *s) {
  buf_append(b, s, strlen(s));
}

/* ---- doubles ---- */

size_t value_format_double(double d, char *buf, size_t cap) {
  return double_format(d, buf, cap);
}

/* ---- hashing ---- */

uint64_t sf_mix64(uint64_t x) {
  uint64_t z = x + UINT64_C(0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

int64_t sf_rand(int64_t n) {
  return (int64_t)(sf_mix64((uint64_t)n) & (uint64_t)INT64_MAX);
}

#define SF_FNV_PRIME UINT64_C(0x100000001b3)

static uint64_t fnv_byte(uint64_t h, unsigned char c) {
  return (h ^ c) * SF_FNV_PRIME;
}

static uint64_t fnv_u64(uint64_t h, uint64_t x) {
  for (int k = 0; k < 8; k++) h = fnv_byte(h, (unsigned char)(x >> (8 * k)));
  return h;
}

uint64_t value_hash(const Value *v, uint64_t h) {
  h = fnv_byte(h, (unsigned char)v->type);
  switch (v->type) {
  case TYPE_INT:
    h = fnv_u64(h, (uint64_t)v->i);
    break;
  case TYPE_DOUBLE: {
    uint64_t bits;
    double d = v->d == 0 ? 0.0 : v->d;
    if (isnan(d)) bits = UINT64_C(0x7ff8000000000000);
    else memcpy(&bits, &d, sizeof bits);
    h = fnv_u64(h, bits);
    break;
  }
  case TYPE_STRING:
    h = fnv_u64(h, (uint64_t)v->s.n);
    for (size_t k = 0; k < v->s.n; k++) h = fnv_byte(h, (unsigned char)v->s.p[k]);
    break;
  case TYPE_BOOL:
    h = fnv_byte(h, v->b ? 1 : 0);
    break;
  default:
    break;
  }
  return sf_mix64(h);
}

/* ---- comparison ---- */

static int cmp_double(double a, double b) {
  bool an = isnan(a), bn = isnan(b);
  if (an || bn) return an - bn;
  return (a > b) - (a < b);
}

int value_compare(const Value *a, const Value *b) {
  if (a->type != b->type) return a->type < b->type ? -1 : 1;
  switch (a->type) {
  case TYPE_INT:
    return (a->i > b->i) - (a->i < b->i);
  case TYPE_DOUBLE:
    return cmp_double(a->d, b->d);
  case TYPE_STRING: {
    size_t n = a->s.n < b->s.n ? a->s.n : b->s.n;
    int c = n ? memcmp(a->s.p, b->s.p, n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return (a->s.n > b->s.n) - (a->s.n < b->s.n);
  }
  case TYPE_BOOL:
    return (int)a->b - (int)b->b;
  default:
    return 0;
  }
}

bool value_equal(const Value *a, const Value *b) {
  return value_compare(a, b) == 0;
}

/* ---- text ---- */

static int parse_int(const char *text, size_t n, int64_t *out) {
  size_t k = 0;
  bool neg = false;
  if (n && (text[0] == '-' || text[0] == '+')) {
    neg = text[0] == '-';
    k = 1;
  }
  if (k == n) return -1;
  uint64_t limit = neg ? UINT64_C(1) << 63 : (uint64_t)INT64_MAX, v = 0;
  for (; k < n; k++) {
    unsigned dgt = (unsigned)(unsigned char)text[k] - '0';
    if (dgt > 9) return -1;
    if (v > (limit - dgt) / 10) return -1;
    v = v * 10 + dgt;
  }
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 0;
}

static int parse_double(const char *text, size_t n, double *out) {
  if (n == 0 || text[0] == ' ' || text[0] == '\t' || text[0] == '\n' || text[0] == '\r' ||
      text[0] == '\f' || text[0] == '\v')
    return -1;
  if (memchr(text, 0, n)) return -1;
  char small[64];
  char *copy = n < sizeof small ? small : sf_xmalloc(n + 1);
  memcpy(copy, text, n);
  copy[n] = 0;
  char *end;
  double d = strtod(copy, &end);
  bool ok = end == copy + n;
  /* an overflow is HUGE_VAL with ERANGE; a spelled-out "inf" contains an 'i' or 'I' */
  if (ok && isinf(d) && !memchr(copy, 'i', n) && !memchr(copy, 'I', n)) ok = false;
  if (copy != small) free(copy);
  if (!ok) return -1;
  *out = d;
  return 0;
}

int value_parse(Type t, const char *text, size_t n, Value *out, Arena *a) {
  switch (t) {
  case TYPE_INT: {
    int64_t i;
    if (parse_int(text, n, &i)) return -1;
    *out = value_int(i);
    return 0;
  }
  case TYPE_DOUBLE: {
    double d;
    if (parse_double(text, n, &d)) return -1;
    *out = value_double(d);
    return 0;
  }
  case TYPE_BOOL:
    if (n == 4 && !memcmp(text, "true", 4)) *out = value_bool(true);
    else if (n == 5 && !memcmp(text, "false", 5)) *out = value_bool(false);
    else return -1;
    return 0;
  case TYPE_STRING:
    *out = value_string(a ? arena_strndup(a, text, n) : text, n);
    return 0;
  default:
    return -1;
  }
}

void value_format(const Value *v, Buf *out) {
  switch (v->type) { /* numbers are written straight into out */
  case TYPE_INT:
    out->n += int_format(v->i, buf_reserve(out, SF_INT_CHARS));
    out->p[out->n] = 0;
    break;
  case TYPE_DOUBLE:
    out->n += double_format(v->d, buf_reserve(out, SF_DOUBLE_CHARS), SF_DOUBLE_CHARS);
    break;
  case TYPE_BOOL:
    buf_puts(out, v->b ? "true" : "false");
    break;
  case TYPE_STRING:
    buf_append(out, v->s.p, v->s.n);
    break;
  default:
    sf_die("value_format of a value without a type");
  }
}
