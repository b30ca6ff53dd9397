/* test_sortkey.c: sort keys (rt/sortkey.c) order as the values they encode (value_compare), so
 * that a region's Merge interleaves what replicas emit at a tick as one instance emits it.
 *
 * Cases: hand-picked values of every type at their edges (INT64_MIN, -1, 0, INT64_MAX; -inf,
 * -0.0 and 0.0 as one key, denormals, +inf, NaNs of both signs and payloads as one key after
 * +inf; strings with embedded and trailing NUL bytes, prefixes, bytes above 0x7f; false before
 * true), every pair compared; and a million random pairs of two-part keys (int, string), (double,
 * bool), whose memcmp order must be the lexicographic value_compare order. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_helper.h"
#include "rt.h"

static int sign(int c) {
  return (c > 0) - (c < 0);
}


static int parts_cmp(const Value *a, const Value *b, int n) {
  for (int i = 0; i < n; i++) {
    int c = value_compare(&a[i], &b[i]);
    if (c) return sign(c);
  }
  return 0;
}

static int encoded_cmp(const Value *a, const Value *b, int n) {
  Buf ka, kb;
  buf_init(&ka);
  buf_init(&kb);
  for (int i = 0; i < n; i++) {
    sortkey_value(&ka, &a[i]);
    sortkey_value(&kb, &b[i]);
  }
  int c = sortkey_cmp(ka.p, ka.n, kb.p, kb.n);
  buf_release(&ka);
  buf_release(&kb);
  return c;
}

START_TEST(test_edges) {
  double nan2;
  uint64_t bits = 0xfff8000000000123ULL; /* a negative NaN with a payload */
  memcpy(&nan2, &bits, sizeof nan2);
  Value vs[] = {
    value_int(INT64_MIN), value_int(-1), value_int(0), value_int(1), value_int(INT64_MAX),
    value_double(-INFINITY), value_double(-1e308), value_double(-5e-324), value_double(-0.0), value_double(0.0),
    value_double(5e-324), value_double(1.5), value_double(INFINITY), value_double(NAN), value_double(nan2),
    value_string("", 0), value_string("\0", 1), value_string("\0\0", 2), value_string("\0a", 2), value_string("a", 1),
    value_string("a\0", 2), value_string("a\0b", 3), value_string("ab", 2), value_string("\xff", 1),
    value_string("\x80z", 2), value_bool(false), value_bool(true),
  };
  int n = (int)(sizeof vs / sizeof vs[0]);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      if (vs[i].type != vs[j].type) continue; /* the parts of keys of one operator have one type */
      ck_assert_msg(encoded_cmp(&vs[i], &vs[j], 1) == parts_cmp(&vs[i], &vs[j], 1), "values %d and %d", i, j);
    }
}
END_TEST

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

START_TEST(test_random_pairs) {
  static const char alphabet[] = {0, 1, 'a', 'b', (char)0x7f, (char)0x80, (char)0xff};
  char sa[8], sb[8];
  for (int round = 0; round < 1000000; round++) {
    Value a[2], b[2];
    if (round % 2) {
      int la = (int)(next() % 5), lb = (int)(next() % 5);
      for (int i = 0; i < la; i++) sa[i] = alphabet[next() % sizeof alphabet];
      for (int i = 0; i < lb; i++) sb[i] = alphabet[next() % sizeof alphabet];
      a[0] = value_int((int64_t)(next() % 5) - 2);
      b[0] = value_int((int64_t)(next() % 5) - 2);
      a[1] = value_string(sa, (size_t)la);
      b[1] = value_string(sb, (size_t)lb);
    } else {
      uint64_t ua = next(), ub = next();
      double da, db;
      if (round % 4 == 0) { /* small values, so that equal ones and -0.0 come up */
        da = (double)((int)(ua % 7) - 3) * (ua & 8 ? 0.5 : 1.0);
        db = (double)((int)(ub % 7) - 3) * (ub & 8 ? 0.5 : 1.0);
        if (ua % 11 == 0) da = -0.0;
        if (ub % 13 == 0) db = NAN;
      } else {
        memcpy(&da, &ua, sizeof da);
        memcpy(&db, &ub, sizeof db);
      }
      a[0] = value_double(da);
      b[0] = value_double(db);
      a[1] = value_bool(next() & 1);
      b[1] = value_bool(next() & 1);
    }
    ck_assert_int_eq(encoded_cmp(a, b, 2), parts_cmp(a, b, 2));
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("sortkey");
  TCase *tc = unit_case(s, "order", NULL, NULL, 60);
  tcase_add_test(tc, test_edges);
  tcase_add_test(tc, test_random_pairs);
  return unit_run(s);
}
