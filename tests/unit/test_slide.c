/* test_slide.c: the incremental sliding windows of rt/ops/slide.c against a naive recomputation.
 *
 * Every test pushes rows into a Slide and, after each row, compares every aggregate with what
 * folding the window's rows in arrival order gives (written here again, the plain way), bit for
 * bit: doubles by their bits (-0.0 is not 0.0 here), strings by their bytes. Random rows come in
 * stretches of one kind (small integers, integers around 2^53, fractions, zeros of both signs,
 * NaN and infinities, huge values, int extremes whose sums are no int64, which slide_push reports,
 * and go back into range when they leave the window) so that windows go in and out of the
 * exact-integer case of the double sums; strings are short and from a small alphabet, so equal
 * values (ties of min and max) are frequent, and some are longer than a first buffer. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_helper.h"
#include "ops/slide.h"

/* ---- the naive fold ---- */

/* The aggregate of function f (argument type t) over rows[0..n) of slot s, folded in order. */
static Value naive(ExprFunc f, Type t, Value *const *rows, int64_t n, int s) {
  switch (f) {
  case FUNC_COUNT: return value_int(n);
  case FUNC_SUM:
    if (t == TYPE_INT) { /* the exact sum; no int64: a Value of no type */
      __extension__ __int128 sum = 0;
      for (int64_t k = 0; k < n; k++) sum += rows[k][s].i;
      if (sum < INT64_MIN || sum > INT64_MAX) return (Value){.type = TYPE_NONE};
      return value_int((int64_t)sum);
    } else {
      double sum = rows[0][s].d;
      for (int64_t k = 1; k < n; k++) sum += rows[k][s].d;
      return value_double(sum);
    }
  case FUNC_AVG: {
    double sum = 0;
    for (int64_t k = 0; k < n; k++) {
      double x = t == TYPE_INT ? (double)rows[k][s].i : rows[k][s].d;
      sum = k ? sum + x : x;
    }
    return value_double(sum / (double)n);
  }
  case FUNC_AMIN:
  case FUNC_AMAX: {
    Value best = rows[0][s];
    for (int64_t k = 1; k < n; k++) {
      int c = value_compare(&rows[k][s], &best);
      if (f == FUNC_AMIN ? c < 0 : c > 0) best = rows[k][s];
    }
    return best;
  }
  case FUNC_FIRST: return rows[0][s];
  case FUNC_LAST: return rows[n - 1][s];
  default: return value_int(0);
  }
}

/* Whether a and b are the same value: same type, same bits or bytes. */
static bool same(const Value *a, const Value *b) {
  if (a->type != b->type) return false;
  switch (a->type) {
  case TYPE_INT: return a->i == b->i;
  case TYPE_DOUBLE: return !memcmp(&a->d, &b->d, sizeof a->d);
  case TYPE_BOOL: return a->b == b->b;
  case TYPE_STRING: return a->s.n == b->s.n && !memcmp(a->s.p, b->s.p, a->s.n);
  default: return true;
  }
}

static void show(const Value *v, char *buf, size_t cap) {
  switch (v->type) {
  case TYPE_INT: snprintf(buf, cap, "int %lld", (long long)v->i); break;
  case TYPE_DOUBLE: snprintf(buf, cap, "double %a", v->d); break;
  case TYPE_STRING: snprintf(buf, cap, "string '%.*s'", (int)v->s.n, v->s.p); break;
  default: snprintf(buf, cap, "type %d", (int)v->type); break;
  }
}

/* ---- random rows ---- */

static uint64_t rng_state;

static uint64_t rnd(void) { return sf_mix64(rng_state++); }

/* The kinds of stretches of random values. */
enum { K_SMALL, K_BIG, K_FRACTION, K_ZERO, K_SPECIAL, K_HUGE, K_MIXED, K_KINDS };

static int kind; /* the kind of the current stretch */

static double random_double(void) {
  int k = kind == K_MIXED ? (int)(rnd() % K_MIXED) : kind;
  switch (k) {
  case K_SMALL: return (double)((int64_t)(rnd() % 41) - 20);
  case K_BIG: { /* integers near 2^53, where sums stop being exact */
    double x = ldexp(1.0, 50 + (int)(rnd() % 4)) + (double)(rnd() % 5);
    return rnd() % 2 ? -x : x;
  }
  case K_FRACTION: return (double)((int64_t)(rnd() % 2001) - 1000) / 10.0;
  case K_ZERO: return rnd() % 3 ? -0.0 : 0.0;
  case K_SPECIAL: {
    static const double specials[] = {NAN, INFINITY, -INFINITY, 1.0, -0.0, 0.5};
    return specials[rnd() % 6];
  }
  default: return (rnd() % 2 ? 1e308 : -1e308) * (double)(1 + rnd() % 2);
  }
}

static int64_t random_int(void) {
  int k = kind == K_MIXED ? (int)(rnd() % K_MIXED) : kind;
  switch (k) {
  case K_SMALL: case K_ZERO: return (int64_t)(rnd() % 21) - 10;
  case K_BIG: return (int64_t)(rnd() % ((uint64_t)1 << 54)) - ((int64_t)1 << 53);
  case K_HUGE: case K_SPECIAL: return rnd() % 2 ? INT64_MAX - (int64_t)(rnd() % 3) : INT64_MIN + (int64_t)(rnd() % 3);
  default: return (int64_t)(rnd() % 2000001) - 1000000;
  }
}

static Value random_string(char *buf) {
  size_t n = rnd() % 4 ? rnd() % 3 : 17 + rnd() % 24;
  for (size_t k = 0; k < n; k++) buf[k] = (char)('a' + rnd() % 3);
  return value_string(buf, n);
}

/* One slot of every aggregate and argument type, and a slot no set uses. */
static const ExprFunc funcs[] = {
  FUNC_COUNT, FUNC_SUM, FUNC_SUM, FUNC_AVG, FUNC_AVG,
  FUNC_AMIN, FUNC_AMIN, FUNC_AMIN, FUNC_AMAX, FUNC_AMAX, FUNC_AMAX,
  FUNC_FIRST, FUNC_FIRST, FUNC_FIRST, FUNC_LAST, FUNC_LAST, FUNC_NONE,
};
static const Type types[] = {
  TYPE_NONE, TYPE_INT, TYPE_DOUBLE, TYPE_INT, TYPE_DOUBLE,
  TYPE_INT, TYPE_DOUBLE, TYPE_STRING, TYPE_INT, TYPE_DOUBLE, TYPE_STRING,
  TYPE_INT, TYPE_DOUBLE, TYPE_STRING, TYPE_DOUBLE, TYPE_STRING, TYPE_NONE,
};
enum { NSLOTS = sizeof funcs / sizeof funcs[0] };

/* Windows whose int sum was no int64, which slide_push must report. */
static int overflows;

/* Pushes `count` random rows into a window of `size` and checks every aggregate after each. */
static void check_random(int64_t size, int count) {
  SlideSpec spec = {.size = size, .naggs = NSLOTS, .func = funcs, .type = types};
  Slide *w = calloc(1, slide_size(&spec));
  Value **rows = malloc(sizeof *rows * (size_t)count);
  char (*bytes)[NSLOTS][48] = malloc(sizeof *bytes * (size_t)count);
  Value results[NSLOTS + 1];
  for (int r = 0; r < count; r++) {
    if (rnd() % 13 == 0) kind = (int)(rnd() % K_KINDS);
    Value *row = rows[r] = malloc(sizeof *row * NSLOTS);
    for (int s = 0; s < NSLOTS; s++) {
      switch (types[s]) {
      case TYPE_INT: row[s] = value_int(random_int()); break;
      case TYPE_DOUBLE: row[s] = value_double(random_double()); break;
      case TYPE_STRING: row[s] = random_string(bytes[r][s]); break;
      default: row[s] = value_int(0); break;
      }
    }
    /* slide_push copies the row: give it one that is overwritten right after */
    Value scratch[NSLOTS];
    char scratch_bytes[NSLOTS][48];
    for (int s = 0; s < NSLOTS; s++) {
      scratch[s] = row[s];
      if (row[s].type == TYPE_STRING) {
        memcpy(scratch_bytes[s], row[s].s.p, row[s].s.n);
        scratch[s].s.p = scratch_bytes[s];
      }
    }
    int overflow = slide_push(w, &spec, scratch, results);
    memset(scratch_bytes, '#', sizeof scratch_bytes);
    int64_t n = r + 1 < size ? r + 1 : size;
    int want_overflow = -1;
    for (int s = 0; s < NSLOTS; s++) {
      Value want = naive(funcs[s], types[s], rows + (r + 1 - n), n, s);
      if (want.type == TYPE_NONE && types[s] != TYPE_NONE) {
        if (want_overflow < 0) want_overflow = s;
        overflows++;
        continue;
      }
      if (!same(&results[s], &want)) {
        char got_text[96], want_text[96];
        show(&results[s], got_text, sizeof got_text);
        show(&want, want_text, sizeof want_text);
        ck_abort_msg("window %lld, row %d, slot %d (func %d, type %d): got %s, want %s", (long long)size,
                     r, s, (int)funcs[s], (int)types[s], got_text, want_text);
      }
    }
    ck_assert_msg(overflow == want_overflow, "window %lld, row %d: slide_push says slot %d overflows, want %d",
                  (long long)size, r, overflow, want_overflow);
  }
  slide_release(w, &spec);
  ck_assert_ptr_null(w->cells);
  ck_assert_int_eq(w->n, 0);
  free(w);
  for (int r = 0; r < count; r++) free(rows[r]);
  free(rows);
  free(bytes);
}

/* ---- tests ---- */

/* Windows of 1 to 40 rows and a few larger ones, each over 3 windows' worth of rows and more. */
START_TEST(test_random_windows) {
  rng_state = 1;
  for (int64_t size = 1; size <= 40; size++)
    for (int run = 0; run < 8; run++) {
      kind = run % K_KINDS;
      check_random(size, (int)(3 * size + 60));
    }
  const int64_t large[] = {64, 100, 257, 1000};
  for (int k = 0; k < 4; k++) check_random(large[k], (int)(4 * large[k]));
  ck_assert_int_gt(overflows, 100);
}
END_TEST

/* A window larger than anything pushed never drops a row (and grows its ring several times). */
START_TEST(test_window_never_full) {
  rng_state = 99;
  kind = K_MIXED;
  check_random(INT64_MAX, 700);
}
END_TEST

/* Cases a running total would get wrong: the fold rounds where the true sum does not, so the
 * integer shortcut must not be taken once the magnitudes pass 2^53; and a window of -0.0 alone. */
START_TEST(test_double_sum_bits) {
  static const ExprFunc f[] = {FUNC_SUM, FUNC_AVG, FUNC_AVG};
  static const Type t[] = {TYPE_DOUBLE, TYPE_DOUBLE, TYPE_INT};
  SlideSpec spec = {.size = 3, .naggs = 3, .func = f, .type = t};
  Slide *w = calloc(1, slide_size(&spec));
  Value res[3];
  const double two53 = 0x1p53;
  /* rows: (double x, double x, int x) */
  const double xs[] = {two53, 1, 1, 1, -0.0, -0.0, -0.0, 0.0, 0.5, 0.25, 0.25};
  /* the fold of the last min(3, k) values of xs, computed by hand */
  const double sums[] = {two53, two53, two53, 3, 2, 1, -0.0, 0.0, 0.5, 0.75, 1.0};
  for (int k = 0; k < 11; k++) {
    Value row[3] = {value_double(xs[k]), value_double(xs[k]), value_int((int64_t)xs[k])};
    slide_push(w, &spec, row, res);
    double n = k < 2 ? k + 1 : 3;
    ck_assert_msg(!memcmp(&res[0].d, &sums[k], sizeof(double)), "row %d: sum %a, want %a", k, res[0].d, sums[k]);
    double avg = sums[k] / n;
    ck_assert_msg(!memcmp(&res[1].d, &avg, sizeof(double)), "row %d: avg %a, want %a", k, res[1].d, avg);
  }
  /* the int column: 2^53, 1, 1 gives 2^53 as a fold of doubles (2^53 + 1 rounds to even) */
  slide_release(w, &spec);
  Value row[3];
  const int64_t is[] = {(int64_t)1 << 53, 1, 1};
  for (int k = 0; k < 3; k++) {
    row[0] = value_double(0);
    row[1] = value_double(0);
    row[2] = value_int(is[k]);
    slide_push(w, &spec, row, res);
  }
  ck_assert_double_eq(res[2].d, two53 / 3);
  slide_release(w, &spec);
  free(w);
}
END_TEST

/* Magnitudes adding up past 2^64 (3000 terms of 2^53 in a window of 4000): the sum of magnitudes
 * carries into its high word, and borrows back as those terms leave. */
START_TEST(test_magnitudes_past_64_bits) {
  static const ExprFunc f[] = {FUNC_SUM};
  static const Type t[] = {TYPE_DOUBLE};
  SlideSpec spec = {.size = 4000, .naggs = 1, .func = f, .type = t};
  Slide *w = calloc(1, slide_size(&spec));
  Value res[1];
  double window[4000];
  int n = 0;
  for (int k = 0; k < 12000; k++) {
    double x = k < 3000 ? 0x1p53 : k < 6000 ? 1.0 : k % 3 == 0 ? 0x1p53 : -1.0;
    Value row[1] = {value_double(x)};
    slide_push(w, &spec, row, res);
    if (n == 4000) memmove(window, window + 1, sizeof window[0] * 3999), n--;
    window[n++] = x;
    double want = window[0];
    for (int j = 1; j < n; j++) want += window[j];
    ck_assert_msg(!memcmp(&res[0].d, &want, sizeof want), "row %d: %a, want %a", k, res[0].d, want);
  }
  slide_release(w, &spec);
  free(w);
}
END_TEST

/* count_distinct, arg_max and arg_min (folded again over the rows; by values kept in the rows
 * after the arguments) against the plain fold: distinct by value_equal, the oldest best `by`. */
static const ExprFunc new_funcs[] = {FUNC_COUNT_DISTINCT, FUNC_COUNT_DISTINCT, FUNC_ARG_MAX, FUNC_ARG_MIN};
static const Type new_types[] = {TYPE_DOUBLE, TYPE_STRING, TYPE_INT, TYPE_STRING};
enum { NNEW = 4 };

static Value naive_new(int s, Value *const *rows, int64_t n) {
  if (new_funcs[s] == FUNC_COUNT_DISTINCT) {
    int64_t distinct = 0;
    for (int64_t k = 0; k < n; k++) {
      bool seen = false;
      for (int64_t j = 0; j < k && !seen; j++) seen = value_equal(&rows[j][s], &rows[k][s]);
      distinct += !seen;
    }
    return value_int(distinct);
  }
  int64_t best = 0;
  for (int64_t k = 1; k < n; k++) {
    int c = value_compare(&rows[k][NNEW + s], &rows[best][NNEW + s]);
    if (new_funcs[s] == FUNC_ARG_MAX ? c > 0 : c < 0) best = k;
  }
  return rows[best][s];
}

START_TEST(test_new_functions) {
  rng_state = 7;
  for (int64_t size = 1; size <= 12; size++) {
    SlideSpec spec = {.size = size, .naggs = NNEW, .func = new_funcs, .type = new_types, .by = true};
    Slide *w = calloc(1, slide_size(&spec));
    enum { COUNT = 80 };
    Value *rows[COUNT];
    char bytes[COUNT][2 * NNEW][48];
    Value results[NNEW];
    for (int r = 0; r < COUNT; r++) {
      kind = r / 10 % K_KINDS;
      Value *row = rows[r] = malloc(sizeof *row * 2 * NNEW);
      row[0] = value_double(random_double());
      row[1] = random_string(bytes[r][1]);
      row[2] = value_int(random_int());
      row[3] = random_string(bytes[r][3]);
      row[NNEW + 0] = value_int(0);
      row[NNEW + 1] = value_int(0);
      row[NNEW + 2] = value_double(rnd() % 5 ? (double)(rnd() % 4) : NAN); /* ties often */
      row[NNEW + 3] = value_int((int64_t)(rnd() % 3));
      slide_push(w, &spec, row, results);
      int64_t n = r + 1 < size ? r + 1 : size;
      for (int s = 0; s < NNEW; s++) {
        Value want = naive_new(s, rows + (r + 1 - n), n);
        if (!same(&results[s], &want)) {
          char got_text[96], want_text[96];
          show(&results[s], got_text, sizeof got_text);
          show(&want, want_text, sizeof want_text);
          ck_abort_msg("window %lld, row %d, slot %d: got %s, want %s", (long long)size, r, s, got_text, want_text);
        }
      }
    }
    slide_release(w, &spec);
    free(w);
    for (int r = 0; r < COUNT; r++) free(rows[r]);
  }
}
END_TEST

static Suite *slide_suite(void) {
  Suite *s = suite_create("slide");
  TCase *tc = unit_case(s, "slide", NULL, NULL, 300);
  tcase_add_test(tc, test_random_windows);
  tcase_add_test(tc, test_window_never_full);
  tcase_add_test(tc, test_double_sum_bits);
  tcase_add_test(tc, test_magnitudes_past_64_bits);
  tcase_add_test(tc, test_new_functions);
  return s;
}

int main(void) {
  return unit_run(slide_suite());
}
