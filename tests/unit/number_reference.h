/* number_reference.h: the double formatter sf used before xform/number.c stopped calling printf,
 * kept for the tests, the fuzz target and the benchmark to compare the new one against: the first
 * of 15, 16 and 17 significant digits (every count from 1 for subnormals) whose %.*e text strtod
 * reads back to d, laid out as value_format_double (rt/value.h) describes. Include it in one file
 * per program. */
#ifndef SF_NUMBER_REFERENCE_H
#define SF_NUMBER_REFERENCE_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t double_format_reference(double d, char *buf, size_t cap) {
  char out[40];
  size_t n = 0;
  if (isnan(d)) {
    strcpy(out, "nan");
  } else if (isinf(d)) {
    strcpy(out, d < 0 ? "-inf" : "inf");
  } else if (d == 0) {
    strcpy(out, signbit(d) ? "-0" : "0");
  } else {
    /* shortest %.*e that reads back, then its digits and exponent. Any decimal of at most 15
     * significant digits survives decimal -> double -> decimal (DBL_DIG), so when 15 digits read
     * back, stripping their trailing zeros gives the shortest text: only 15, 16 and 17 digits need
     * trying, not 1 to 17. Subnormals carry fewer digits: for them try every precision. */
    char e[40];
    for (int prec = fabs(d) < DBL_MIN ? 0 : 14; prec < 17; prec++) {
      snprintf(e, sizeof e, "%.*e", prec, d);
      if (strtod(e, NULL) == d) break;
    }
    const char *p = e;
    bool neg = *p == '-';
    if (neg) p++;
    char digits[24];
    int k = 0;
    for (; *p && *p != 'e'; p++)
      if (*p != '.') digits[k++] = *p;
    while (k > 1 && digits[k - 1] == '0') k--;
    int x = atoi(p + 1) + 1; /* d = 0.DIGITS * 10^x */
    if (neg) out[n++] = '-';
    if (k <= x && x <= 21) {
      memcpy(out + n, digits, (size_t)k);
      n += (size_t)k;
      for (int z = k; z < x; z++) out[n++] = '0';
    } else if (0 < x && x <= 21) {
      memcpy(out + n, digits, (size_t)x);
      n += (size_t)x;
      out[n++] = '.';
      memcpy(out + n, digits + x, (size_t)(k - x));
      n += (size_t)(k - x);
    } else if (-6 < x && x <= 0) {
      out[n++] = '0';
      out[n++] = '.';
      for (int z = 0; z < -x; z++) out[n++] = '0';
      memcpy(out + n, digits, (size_t)k);
      n += (size_t)k;
    } else {
      out[n++] = digits[0];
      if (k > 1) {
        out[n++] = '.';
        memcpy(out + n, digits + 1, (size_t)(k - 1));
        n += (size_t)(k - 1);
      }
      n += (size_t)snprintf(out + n, sizeof out - n, "e%c%d", x - 1 < 0 ? '-' : '+', abs(x - 1));
    }
    out[n] = 0;
  }
  n = strlen(out);
  if (cap) {
    size_t m = n < cap - 1 ? n : cap - 1;
    memcpy(buf, out, m);
    buf[m] = 0;
  }
  return n;
}

#endif
