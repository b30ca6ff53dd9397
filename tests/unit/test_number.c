/* test_number.c: number text without printf (xform/number.c: double_format, int_format) and the
 * runtime's use of it (rt/value.c: value_format writing into a Buf).
 *
 * double_format must give byte for byte the text of the formatter it replaced, which is kept as
 * double_format_reference (number_reference.h: printf's %.*e read back with strtod). Each test
 * compares the two on one family of values: random bit patterns, doubles in common ranges,
 * integers, every power of 2 and 10 and their neighbours, subnormals and the ends of the range,
 * decimals of 15, 16 and 17 significant digits, and values exactly halfway between two candidate
 * decimals. About 2.6 million values in all; SF_TEST_NUMBER_SCALE=N runs N times as many (a long
 * run: SF_TEST_NUMBER_SCALE=50 compares about 113 million). double_format_checked, which settles
 * every product the fast path computes with exact big-integer arithmetic as well, runs on a
 * sample of every family and on every binary exponent. */
#include <check.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_helper.h"
#include "number_reference.h"
#include "sf.h"
#include "value.h"

static long scale = 1;          /* SF_TEST_NUMBER_SCALE */
static long compared;           /* values compared by the current test */
static bool checked;            /* also run double_format_checked on each value */
static uint64_t rng = 0x5eed;   /* splitmix64 state */

static uint64_t next(void) {
  uint64_t z = (rng += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static double from_bits(uint64_t b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

static uint64_t to_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

/* Asserts double_format(d) (and double_format_checked(d) when checked) is the reference's text. */
static void same(double d) {
  char want[40], got[SF_DOUBLE_CHARS];
  size_t nw = double_format_reference(d, want, sizeof want);
  size_t ng = double_format(d, got, sizeof got);
  if (ng != nw || strcmp(got, want))
    ck_abort_msg("%a (bits %016" PRIx64 "): double_format gives \"%s\" (%zu), the reference \"%s\"",
                 d, to_bits(d), got, ng, want);
  if (checked) {
    ng = double_format_checked(d, got, sizeof got);
    if (ng != nw || strcmp(got, want))
      ck_abort_msg("%a: double_format_checked gives \"%s\", the reference \"%s\"", d, got, want);
  }
  compared++;
}

/* d and -d */
static void same_both(double d) {
  same(d);
  same(-d);
}

/* d and its neighbours up to n steps away on either side */
static void same_around(double d, int n) {
  same_both(d);
  double up = d, down = d;
  for (int i = 0; i < n; i++) {
    up = nextafter(up, INFINITY);
    down = nextafter(down, -INFINITY);
    if (isfinite(up)) same_both(up);
    if (isfinite(down)) same_both(down);
  }
}

static void setup(void) {
  const char *env = getenv("SF_TEST_NUMBER_SCALE");
  scale = env && atol(env) > 0 ? atol(env) : 1;
  compared = 0;
  checked = false;
  rng = 0x5eed;
}

/* ---- known texts ---- */

START_TEST(test_double_known_texts) {
  struct { double d; const char *text; } cases[] = {
    {0.0, "0"}, {-0.0, "-0"}, {1.0, "1"}, {0.1, "0.1"}, {-2.5, "-2.5"}, {100.0, "100"},
    {123.456, "123.456"}, {1.0 / 3.0, "0.3333333333333333"}, {0.1 + 0.2, "0.30000000000000004"},
    {1e20, "100000000000000000000"}, {1e21, "1e+21"}, {123456789012345678e4, "1.2345678901234568e+21"},
    {0.000001, "0.000001"}, {0.0000012345, "0.0000012345"}, {1e-7, "1e-7"}, {-1.5e-7, "-1.5e-7"},
    {9007199254740993.0, "9007199254740992"}, {5e-324, "5e-324"}, {-1e-323, "-1e-323"},
    {DBL_MIN, "2.2250738585072014e-308"}, {DBL_MAX, "1.7976931348623157e+308"},
    {0x1p-1017, "7.1202363472230444e-307"}, /* 7.120236347223045e-307 reads back too */
    {0x1p+50 + 0.25, "1125899906842624.2"},   /* exactly halfway at 17 digits: ties to even */
    {0x1p+50 + 0.75, "1125899906842624.8"},
    {1e23, "1e+23"}, {9.999999999999997e22, "9.999999999999997e+22"},
    {NAN, "nan"}, {-NAN, "nan"}, {INFINITY, "inf"}, {-INFINITY, "-inf"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char got[SF_DOUBLE_CHARS], want[40];
    ck_assert_uint_eq(double_format(cases[i].d, got, sizeof got), strlen(cases[i].text));
    ck_assert_str_eq(got, cases[i].text);
    double_format_reference(cases[i].d, want, sizeof want);
    ck_assert_str_eq(want, cases[i].text);
  }
}
END_TEST

/* Like snprintf: at most cap bytes with the NUL, the full length returned. */
START_TEST(test_double_truncates_like_snprintf) {
  double ds[] = {-1.2345678901234567e-300, 123.456, 0.0000012345, -INFINITY, -0.0, 1e21};
  for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
    for (size_t cap = 0; cap <= SF_DOUBLE_CHARS; cap++) {
      char got[SF_DOUBLE_CHARS + 1], want[SF_DOUBLE_CHARS + 1];
      memset(got, 'x', sizeof got);
      memset(want, 'x', sizeof want);
      ck_assert_uint_eq(double_format(ds[i], got, cap), double_format_reference(ds[i], want, cap));
      ck_assert(!memcmp(got, want, sizeof got));
    }
  }
}
END_TEST

/* ---- the families of values ---- */

START_TEST(test_double_random_bits) {
  for (long i = 0; i < 600000 * scale; i++) same(from_bits(next())); /* NaNs and infinities too */
  ck_assert_int_eq(compared, 600000 * scale);
}
END_TEST

START_TEST(test_double_common_ranges) {
  static const double units[] = {1e-9, 1e-6, 1e-3, 0.01, 0.1, 1,    10,   100,
                                 1e3,  1e4,  1e6,  1e9,  1e12, 1e15, 1e18, 1e21};
  for (long i = 0; i < 100000 * scale; i++) {
    uint64_t r = next();
    double u = (double)(r >> 11) * 0x1p-53; /* uniform in [0, 1) */
    same_both(u * units[r % 16]);
    same_both((double)(int64_t)(r >> 34) / 100); /* money: up to 2^30 cents */
    same_both((double)(r >> 40) * 0.25);        /* the benchmark's seq * 0.5 / 2.0 */
  }
  ck_assert_int_eq(compared, 600000 * scale);
}
END_TEST

START_TEST(test_double_integers) {
  for (int64_t n = 0; n < 100000; n++) same_both((double)n);
  for (long i = 0; i < 50000 * scale; i++) {
    uint64_t r = next();
    same_both((double)(r >> 11));             /* up to 2^53: exact */
    same_both((double)(r >> (r % 64)));       /* any size, rounded to 53 bits */
  }
  ck_assert_int_eq(compared, 200000 + 200000 * scale);
}
END_TEST

START_TEST(test_double_powers) {
  checked = true;
  for (int e = -1074; e <= 1023; e++) same_around(ldexp(1.0, e), 4);
  char text[16];
  for (int e = -323; e <= 308; e++) {
    snprintf(text, sizeof text, "1e%d", e);
    same_around(strtod(text, NULL), 4);
  }
  ck_assert_int_eq(compared, (2098 + 632) * 18);
}
END_TEST

START_TEST(test_double_subnormals_and_ends) {
  checked = true;
  double ends[] = {DBL_MIN, DBL_MAX, 5e-324, DBL_TRUE_MIN, DBL_MIN - DBL_TRUE_MIN};
  for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) same_around(ends[i], 16);
  for (uint64_t c = 1; c <= 20000; c++) same_both(from_bits(c));                     /* the smallest */
  for (uint64_t c = 1; c <= 20000; c++) same_both(from_bits((UINT64_C(1) << 52) - c)); /* below DBL_MIN */
  checked = false;
  for (long i = 0; i < 25000 * scale; i++) {
    uint64_t r = next();
    same_both(from_bits(r & ((UINT64_C(1) << 52) - 1)));    /* any subnormal */
    same_both(from_bits((r >> 12) >> (r % 52)));            /* subnormals of every length */
  }
  ck_assert_int_eq(compared, 4 * 66 + 34 + 80000 + 100000 * scale); /* none above DBL_MAX */
}
END_TEST

/* Decimals of exactly p significant digits, read with strtod: the texts at the limit of what
 * 15, 16 and 17 digits can tell apart. */
START_TEST(test_double_digit_counts) {
  char text[48];
  for (long i = 0; i < 100000 * scale; i++) {
    uint64_t low = 100000000000000; /* 10^14 */
    for (int p = 15; p <= 17; p++, low *= 10) {
      uint64_t m = low + next() % (9 * low); /* p digits */
      uint64_t r = next();
      int e = r % 2 ? (int)((r >> 1) % 61) - 30 : (int)((r >> 1) % 631) - 340; /* to 1e-323 .. 1e307 */
      snprintf(text, sizeof text, "%" PRIu64 "e%d", m, e);
      same_both(strtod(text, NULL));
    }
  }
  ck_assert_int_eq(compared, 600000 * scale);
}
END_TEST

/* Doubles whose exact value lies halfway between two decimals of 15, 16 or 17 digits: n + 1/2^j
 * just below 2^53 / 2^j (the tie rule decides the last digit), and their neighbours. */
START_TEST(test_double_ties) {
  for (long i = 0; i < 25000 * scale; i++) {
    checked = i < 2000;
    uint64_t r = next();
    int j = 1 + (int)(r % 4); /* the last bit is worth 1/2, 1/4, 1/8 or 1/16 */
    uint64_t n = (UINT64_C(1) << (52 - j)) + (r >> 20) % (UINT64_C(1) << (52 - j));
    double odd = (double)((2 * (r >> 8) + 1) % (UINT64_C(1) << j));
    same_around((double)n + ldexp(odd, -j), 1); /* exact: n has 52 - j bits */
  }
  ck_assert_int_eq(compared, 25000 * scale * 6);
}
END_TEST

/* ---- ints ---- */

START_TEST(test_int_format) {
  struct { int64_t i; const char *text; } cases[] = {
    {0, "0"}, {7, "7"}, {-7, "-7"}, {10, "10"}, {-10, "-10"}, {99, "99"}, {100, "100"}, {-101, "-101"},
    {INT64_MAX, "9223372036854775807"}, {INT64_MIN, "-9223372036854775808"},
    {INT64_MIN + 1, "-9223372036854775807"}, {1000000000000000000, "1000000000000000000"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char buf[SF_INT_CHARS];
    memset(buf, 'x', sizeof buf);
    size_t n = int_format(cases[k].i, buf);
    ck_assert_uint_eq(n, strlen(cases[k].text));
    ck_assert(!memcmp(buf, cases[k].text, n));
    ck_assert_int_eq(buf[n], 'x'); /* no NUL written */
  }
  int64_t p = 1;
  for (int e = 0; e <= 18; e++, p = e <= 18 ? p * 10 : p) { /* every length, at both ends (10^18 the last) */
    int64_t around[] = {p - 1, p, p + 1, -p + 1, -p, -p - 1};
    for (int k = 0; k < 6; k++) {
      char got[SF_INT_CHARS + 1], want[32];
      got[int_format(around[k], got)] = 0;
      snprintf(want, sizeof want, "%" PRId64, around[k]);
      ck_assert_str_eq(got, want);
    }
  }
  for (long k = 0; k < 1000000; k++) {
    uint64_t r = next();
    int64_t i = (int64_t)(r >> (r % 64)) * (r & 1 ? -1 : 1);
    char got[SF_INT_CHARS + 1], want[32];
    got[int_format(i, got)] = 0;
    snprintf(want, sizeof want, "%" PRId64, i);
    if (strcmp(got, want)) ck_abort_msg("int_format(%s) gives %s", want, got);
  }
}
END_TEST

/* value_format writes numbers straight into the Buf, growing it when the text does not fit. */
START_TEST(test_value_format_numbers_into_buf) {
  for (size_t pre = 0; pre < 200; pre++) { /* every position relative to the growth points */
    Buf b;
    buf_init(&b);
    for (size_t k = 0; k < pre; k++) buf_putc(&b, 'a' + (char)(k % 26));
    Value vs[] = {value_int(INT64_MIN), value_double(-1.2345678901234567e-300), value_int(0),
                  value_double(0.5)};
    for (size_t k = 0; k < 4; k++) value_format(&vs[k], &b);
    ck_assert_uint_eq(b.n, pre + 20 + 24 + 1 + 3);
    ck_assert_uint_eq(strlen(b.p), b.n);
    ck_assert_str_eq(b.p + pre, "-9223372036854775808-1.2345678901234568e-30000.5");
    for (size_t k = 0; k < pre; k++) ck_assert_int_eq(b.p[k], 'a' + (char)(k % 26));
    buf_release(&b);
  }
}
END_TEST

static Suite *number_suite(void) {
  Suite *s = suite_create("number");
  double timeout = 120 * (double)scale;
  UNIT_ADD_TIMEOUT(s, test_double_known_texts, setup, NULL, timeout);
  UNIT_ADD_TIMEOUT(s, test_double_truncates_like_snprintf, setup, NULL, timeout);
  UNIT_ADD_TIMEOUT(s, test_double_random_bits, setup, NULL, timeout);
  UNIT_ADD_TIMEOUT(s, test_double_common_ranges, setup, NULL, timeout);
  UNIT_ADD_TIMEOUT(s, test_double_integers, setup, NULL, timeout);
  UNIT_ADD_TIMEOUT(s, test_double_powers, setup, NULL, timeout);
  UNIT_ADD_TIMEOUT(s, test_double_subnormals_and_ends, setup, NULL, timeout);
  UNIT_ADD_TIMEOUT(s, test_double_digit_counts, setup, NULL, timeout);
  UNIT_ADD_TIMEOUT(s, test_double_ties, setup, NULL, timeout);
  UNIT_ADD_TIMEOUT(s, test_int_format, setup, NULL, timeout);
  UNIT_ADD_TIMEOUT(s, test_value_format_numbers_into_buf, setup, NULL, timeout);
  return s;
}

int main(void) {
  setup(); /* reads the scale for the timeouts */
  return unit_run(number_suite());
}
