/* value.h: runtime helpers on Value (sf.h): shortest double text, stable hashing, comparison,
 * parsing CSV fields and formatting values into a growable byte buffer.
 *
 * Ownership: a Value never owns its string bytes; whoever produced them (an arena, a tuple, an
 * expression literal) keeps them alive. A Buf owns its bytes until buf_release(). */
#ifndef SF_VALUE_H
#define SF_VALUE_H

#include "sf.h"

/* ---- Buf: a growable byte buffer, always NUL-terminated after its n bytes ---- */

typedef struct Buf {
  char *p;    /* bytes (malloc'ed; NULL until the first append) */
  size_t n;   /* bytes used, not counting the terminating NUL */
  size_t cap; /* bytes allocated */
} Buf;

void buf_init(Buf *b);                               /* empty, allocates nothing */
void buf_release(Buf *b);                            /* frees the bytes; b is empty again */
void buf_reset(Buf *b);                              /* n = 0, keeps the allocation */
void buf_append(Buf *b, const char *p, size_t n);    /* out of memory aborts */
void buf_putc(Buf *b, char c);
void buf_puts(Buf *b, const char *s);
/* Grows b for n more bytes and the NUL (buf_reserve's slow path); returns b->p + b->n. */
char *buf_grow(Buf *b, size_t n);
/* Makes room for n more bytes and the NUL and returns where they go (b->p + b->n), for a writer
 * that stores up to n bytes there itself and then sets b->n and the NUL. */
static inline char *buf_reserve(Buf *b, size_t n) {
  return b->n + n + 1 > b->cap ? buf_grow(b, n) : b->p + b->n;
}

/* ---- value constructors ---- */

/* In-place setters: on hot paths, build values where they live. Returning a Value from a
 * constructor and copying it costs a store-forwarding stall on x86 (measured: most of a batch
 * decode's time). */
static inline void value_put_int(Value *o, int64_t i) { o->type = TYPE_INT; o->i = i; }
static inline void value_put_double(Value *o, double d) { o->type = TYPE_DOUBLE; o->d = d; }
static inline void value_put_bool(Value *o, bool b) { o->type = TYPE_BOOL; o->b = b; }
static inline void value_put_string(Value *o, const char *p, size_t n) {
  o->type = TYPE_STRING;
  o->s.p = p;
  o->s.n = n;
}

static inline Value value_int(int64_t i) { Value v = {.type = TYPE_INT}; v.i = i; return v; }
static inline Value value_double(double d) { Value v = {.type = TYPE_DOUBLE}; v.d = d; return v; }
static inline Value value_bool(bool b) { Value v = {.type = TYPE_BOOL}; v.b = b; return v; }
static inline Value value_string(const char *p, size_t n) {
  Value v = {.type = TYPE_STRING};
  v.s.p = p;
  v.s.n = n;
  return v;
}

/* ---- doubles as text ---- */

/* SF_DOUBLE_CHARS (sf.h) bytes hold any output of value_format_double, NUL included. */

/* Writes the shortest text that strtod reads back to exactly d (same bits, so -0.0 is "-0"),
 * laid out like ECMAScript's Number::toString: the digits are the first of 15, 16 and 17
 * significant digits (for subnormals: of 1 to 17) whose correctly rounded decimal (ties to even)
 * reads back, trailing zeros dropped, which is the fewest digits but for 46 powers of two (see
 * xform/number.c); they are printed in plain notation when the decimal exponent n
 * (d = 0.DIGITS * 10^n) satisfies -6 < n <= 21, otherwise as `D[.DDD]e+X` / `D[.DDD]e-X`
 * without zero padding of X. Examples: 0.1 -> "0.1", 1.0 -> "1", 100.0 -> "100", 1e21 -> "1e+21",
 * 1e20 -> "100000000000000000000", 1e-7 -> "1e-7", 0.000001 -> "0.000001", 2^-1017 ->
 * "7.1202363472230444e-307" (17 digits; 16 would read back). NaN is "nan" (its sign and payload
 * dropped), infinities are "inf" and "-inf". Like snprintf: writes at most cap bytes including the
 * NUL and returns the length the full text has; cap >= SF_DOUBLE_CHARS never truncates. */
size_t value_format_double(double d, char *buf, size_t cap);

/* ---- hashing and mixing (stable across hosts, builds and runs) ---- */

/* Key groups (virtual partitions): a hash Split sends a tuple to the channel of its key's group,
 * the hash of its key attributes modulo SF_KEY_GROUPS; the groups are dealt to the channels in
 * contiguous ranges (group g to channel g * width / SF_KEY_GROUPS). A key's group never changes, so
 * restoring keyed state at another width moves whole groups, each from the one old channel that
 * held it (rt/ckpt.c). */
#define SF_KEY_GROUPS 256
static inline int sf_key_channel(uint64_t hash, int width) {
  return (int)(hash % SF_KEY_GROUPS * (uint64_t)width / SF_KEY_GROUPS);
}

/* The starting value of a chain of value_hash calls (the FNV-1a 64-bit offset basis). */
#define SF_HASH_SEED UINT64_C(0xcbf29ce484222325)

/* One step of splitmix64 from state x: the finaliser applied to x + 0x9e3779b97f4a7c15, so
 * sf_mix64(0) == 0xe220a8397b1dcdaf (the first output of splitmix64 seeded with 0). */
uint64_t sf_mix64(uint64_t x);
/* rand(n) of the expression language: sf_mix64(n) with the top bit cleared (never negative). */
int64_t sf_rand(int64_t n);
/* Hashes v into h: FNV-1a over a canonical encoding (one type byte = the Type enum value, then
 * int: 8 bytes little-endian; double: its IEEE bits, 8 bytes little-endian, with -0.0 taken as 0.0
 * and every NaN as 0x7ff8000000000000; string: length as 8 bytes little-endian, then the bytes;
 * bool: one byte 0 or 1), then sf_mix64 of the result. Chain keys as
 * value_hash(&k2, value_hash(&k1, SF_HASH_SEED)). Values that value_equal() hash alike. */
uint64_t value_hash(const Value *v, uint64_t h);

/* ---- comparison ---- */

/* Total order: <0, 0, >0. Values of different types order by their Type (a checked program never
 * compares them). Ints numerically; doubles numerically with -0.0 == 0.0 and NaN equal to itself and
 * above every other double (unlike the IEEE comparisons of the expression operators); strings
 * bytewise (memcmp, then the shorter first); false < true. */
int value_compare(const Value *a, const Value *b);
/* value_compare(a, b) == 0: the equality of keys (Dedup, partitioning), consistent with value_hash. */
bool value_equal(const Value *a, const Value *b);

/* ---- text ---- */

/* Parses one CSV field of type t from text[0..n) (not necessarily NUL-terminated). int: optional
 * '+' or '-', then decimal digits, within int64; double: what strtod accepts in the C locale
 * ("nan", "inf" included), consuming all n bytes, no leading white space, not overflowing to
 * infinity; bool: exactly "true" or "false"; string: any bytes, copied NUL-terminated into a (with
 * a == NULL the value borrows text). Returns 0 with *out set, or -1 with *out unchanged. */
int value_parse(Type t, const char *text, size_t n, Value *out, Arena *a);
/* Appends v as text: int decimal (int_format, sf.h), double by value_format_double, bool "true"/"false", string raw
 * (no quoting: that is the CSV writer's job). */
void value_format(const Value *v, Buf *out);

#endif
