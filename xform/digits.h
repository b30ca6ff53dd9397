/* digits.h: integers in decimal by a two-digit table, inline for the writers that format one per
 * field (xform/number.c: int_format and the digits of doubles; rt/csv.c: the rows of a sink). */
#ifndef SF_DIGITS_H
#define SF_DIGITS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const char SF_DIGIT_PAIRS[] =
  "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
  "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
  "8081828384858687888990919293949596979899";

/* Writes v in decimal ending just before end; returns where the digits start. */
static inline char *sf_put_digits(char *end, uint64_t v) {
  while (v >= 100) {
    end -= 2;
    memcpy(end, SF_DIGIT_PAIRS + 2 * (v % 100), 2);
    v /= 100;
  }
  if (v >= 10) {
    end -= 2;
    memcpy(end, SF_DIGIT_PAIRS + 2 * v, 2);
  } else {
    *--end = (char)('0' + v);
  }
  return end;
}

/* The number of decimal digits of v (1 for 0). */
static inline size_t sf_digit_count(uint64_t v) {
  size_t n = 1;
  for (;;) {
    if (v < 10) return n;
    if (v < 100) return n + 1;
    if (v < 1000) return n + 2;
    if (v < 10000) return n + 3;
    v /= 10000;
    n += 4;
  }
}

/* The 4 digits of v < 10000 at p, leading zeros kept: two pairs, found independently. */
static inline void sf_put4(char *p, uint32_t v) {
  uint32_t hi = v / 100, lo = v % 100;
  memcpy(p, SF_DIGIT_PAIRS + 2 * hi, 2);
  memcpy(p + 2, SF_DIGIT_PAIRS + 2 * lo, 2);
}

/* The c (1 to 4) digits of v < 10^c at p. */
static inline void sf_put_small(char *p, uint32_t v, size_t c) {
  if (c == 4) {
    sf_put4(p, v);
  } else if (c == 3) {
    *p = (char)('0' + v / 100);
    memcpy(p + 1, SF_DIGIT_PAIRS + 2 * (v % 100), 2);
  } else if (c == 2) {
    memcpy(p, SF_DIGIT_PAIRS + 2 * v, 2);
  } else {
    *p = (char)('0' + v);
  }
}

/* int_format (sf.h) inline: i in decimal at buf, '-' first when negative, no NUL; the length (at
 * most 20), and nothing written past it. Below 10^8 (a sink's usual ints) in 32-bit arithmetic,
 * the two halves of four digits and their pairs found independently rather than by a chain of
 * divisions by 100; beyond, the length first, then the digits straight into place from their end. */
static inline size_t sf_int_format(int64_t i, char *buf) {
  uint64_t v = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
  size_t neg = i < 0;
  *buf = '-'; /* overwritten by the first digit when i >= 0 */
  char *p = buf + neg;
  if (v < 100000000) {
    uint32_t w = (uint32_t)v;
    size_t n = w < 10000 ? (w < 100 ? (w < 10 ? 1 : 2) : (w < 1000 ? 3 : 4))
                         : (w < 1000000 ? (w < 100000 ? 5 : 6) : (w < 10000000 ? 7 : 8));
    if (n <= 4) {
      sf_put_small(p, w, n);
    } else {
      sf_put_small(p, w / 10000, n - 4);
      sf_put4(p + n - 4, w % 10000);
    }
    return neg + n;
  }
  size_t n = sf_digit_count(v);
  sf_put_digits(p + n, v);
  return neg + n;
}

#endif
