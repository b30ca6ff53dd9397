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

/* int_format (sf.h) inline: i in decimal at buf, '-' first when negative, no NUL; the length (at
 * most 20). The length first, then the digits straight into place from their end: no copy. */
static inline size_t sf_int_format(int64_t i, char *buf) {
  uint64_t v = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
  size_t neg = i < 0;
  size_t n = sf_digit_count(v);
  *buf = '-'; /* overwritten by the first digit when i >= 0 */
  sf_put_digits(buf + neg + n, v);
  return neg + n;
}

#endif
