/* test_timewin.c: the event-time windows of rt/ops/timewin.c and the accumulators of
 * rt/ops/accum.c, driven directly: tuples added per key at their times, ticks closing windows,
 * and every closed window described as text and compared whole (its bounds, its key, and each
 * aggregate), in the order a tick emits them.
 *
 * Tuples are (k, time, x, y, d): k the key (of any type), x and y ints, d a double. The slots:
 * count(), sum(x), first(x), last(x), arg_max(x, y), arg_min(x, y), count_distinct(d), sum(d). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_helper.h"
#include "ops/timewin.h"

enum { NSLOTS = 8, NVALS = 5, MAXKEYS = 16 };

static const ExprFunc funcs[NSLOTS] = {FUNC_COUNT,   FUNC_SUM,     FUNC_FIRST,          FUNC_LAST,
                                       FUNC_ARG_MAX, FUNC_ARG_MIN, FUNC_COUNT_DISTINCT, FUNC_SUM};
static const Type types[NSLOTS] = {TYPE_NONE, TYPE_INT, TYPE_INT, TYPE_INT, TYPE_INT, TYPE_INT, TYPE_DOUBLE, TYPE_DOUBLE};
static const int keyslot[1] = {0};

/* The windows of one test: keys looked up by value_equal in a small table. */
typedef struct Fixture {
  Tw tw;
  Value keys[MAXKEYS];
  TwKey state[MAXKEYS];
  int nkeys;
  Buf out; /* what the closes gave */
} Fixture;

static void fx_init(Fixture *f, WindowKind kind, int64_t size, int64_t slide, int64_t lateness) {
  memset(f, 0, sizeof *f);
  TwSpec spec = {.kind = kind, .size = size, .slide = slide, .lateness = lateness, .naggs = NSLOTS,
                 .func = funcs, .type = types, .nkeys = 1, .keyslots = keyslot};
  tw_init(&f->tw, &spec);
  buf_init(&f->out);
}

static TwKey *fx_key(Fixture *f, const Value *k) {
  for (int i = 0; i < f->nkeys; i++)
    if (value_equal(&f->keys[i], k)) return &f->state[i];
  ck_assert_int_lt(f->nkeys, MAXKEYS);
  f->keys[f->nkeys] = *k;
  return &f->state[f->nkeys++];
}

/* Adds (k, time, x, y, d); returns tw_add's result. */
static int fx_add(Fixture *f, Value k, int64_t time, int64_t x, int64_t y, double d) {
  Value v[NVALS] = {k, value_int(time), value_int(x), value_int(y), value_double(d)};
  Tuple *t = tuple_new(v, NVALS);
  Value args[NSLOTS] = {value_int(0), v[2], v[2], v[2], v[2], v[2], v[4], v[4]};
  Value by[NSLOTS] = {value_int(0), value_int(0), value_int(0), value_int(0), v[3], v[3], value_int(0), value_int(0)};
  int rc = tw_add(&f->tw, fx_key(f, &k), time, args, by, t);
  tuple_unref(t);
  return rc;
}

static int fx_addi(Fixture *f, int64_t k, int64_t time, int64_t x) {
  return fx_add(f, value_int(k), time, x, 0, 0.0);
}

/* A tick: "[start,end) k=K n=.. sum=.. first=.. last=.. amax=.. amin=.. cd=.. sd=..\n" per
 * window closed, in order; returns that text (valid until the next call). */
static const char *fx_tick(Fixture *f, int64_t t) {
  TwWindow **ws;
  size_t n = tw_close(&f->tw, t, &ws);
  buf_reset(&f->out);
  for (size_t i = 0; i < n; i++) {
    TwWindow *w = ws[i];
    char line[512];
    Value r[NSLOTS];
    for (int s = 0; s < NSLOTS; s++) ck_assert(acc_value(funcs[s], types[s], &w->acc[s], w->n, &r[s]));
    Buf key;
    buf_init(&key);
    value_format(&w->first->v[0], &key);
    char sd[SF_DOUBLE_CHARS];
    value_format_double(r[7].d, sd, sizeof sd);
    snprintf(line, sizeof line, "[%lld,%lld) k=%s n=%lld sum=%lld first=%lld last=%lld amax=%lld amin=%lld cd=%lld sd=%s\n",
             (long long)w->start, (long long)w->end, key.p ? key.p : "", (long long)r[0].i, (long long)r[1].i,
             (long long)r[2].i, (long long)r[3].i, (long long)r[4].i, (long long)r[5].i, (long long)r[6].i, sd);
    buf_release(&key);
    buf_puts(&f->out, line);
    tw_window_free(&f->tw, w);
  }
  free(ws);
  return f->out.p ? f->out.p : "";
}

static void fx_free(Fixture *f) {
  for (int i = 0; i < f->nkeys; i++) tw_key_release(&f->tw, &f->state[i]);
  tw_release(&f->tw);
  buf_release(&f->out);
}

/* A tuple exactly at a window's end is in the next window; a tick closes a window only once it
 * reaches the window's end; a window that got no tuple emits nothing. */
START_TEST(test_tumbling_boundaries) {
  Fixture f;
  fx_init(&f, WIN_TUMBLING_TIME, 10, 10, 0);
  ck_assert_int_eq(fx_addi(&f, 1, 0, 1), 0);
  ck_assert_int_eq(fx_addi(&f, 1, 9, 2), 0);
  ck_assert_int_eq(fx_addi(&f, 1, 10, 4), 0);
  ck_assert_str_eq(fx_tick(&f, 9), "");
  ck_assert_str_eq(fx_tick(&f, 10), "[0,10) k=1 n=2 sum=3 first=1 last=2 amax=1 amin=1 cd=1 sd=0\n");
  ck_assert_int_eq(fx_addi(&f, 1, 35, 8), 0);
  ck_assert_str_eq(fx_tick(&f, 40), "[10,20) k=1 n=1 sum=4 first=4 last=4 amax=4 amin=4 cd=1 sd=0\n"
                                    "[30,40) k=1 n=1 sum=8 first=8 last=8 amax=8 amin=8 cd=1 sd=0\n");
  ck_assert_str_eq(fx_tick(&f, INT64_MAX), "");
  fx_free(&f);
}
END_TEST

/* Negative times: windows by floor division, [-10, 0) holds -10 and -1, -11 is in [-20, -10). */
START_TEST(test_tumbling_negative_times) {
  Fixture f;
  fx_init(&f, WIN_TUMBLING_TIME, 10, 10, 0);
  fx_addi(&f, 0, -1, 1);
  fx_addi(&f, 0, -10, 2);
  fx_addi(&f, 0, -11, 4);
  fx_addi(&f, 0, 0, 8);
  ck_assert_str_eq(fx_tick(&f, INT64_MAX), "[-20,-10) k=0 n=1 sum=4 first=4 last=4 amax=4 amin=4 cd=1 sd=0\n"
                                           "[-10,0) k=0 n=2 sum=3 first=1 last=2 amax=1 amin=1 cd=1 sd=0\n"
                                           "[0,10) k=0 n=1 sum=8 first=8 last=8 amax=8 amin=8 cd=1 sd=0\n");
  fx_free(&f);
}
END_TEST

/* With lateness 5 a window [0, 10) waits until tick 15: a tuple at 3 after tick 12 is added; after
 * tick 15 one at 4 is late, dropped and counted, and the next window still takes tuples. */
START_TEST(test_tumbling_lateness) {
  Fixture f;
  fx_init(&f, WIN_TUMBLING_TIME, 10, 10, 5);
  fx_addi(&f, 7, 1, 1);
  ck_assert_str_eq(fx_tick(&f, 12), "");
  ck_assert_int_eq(fx_addi(&f, 7, 3, 2), 0);
  ck_assert_str_eq(fx_tick(&f, 15), "[0,10) k=7 n=2 sum=3 first=1 last=2 amax=1 amin=1 cd=1 sd=0\n");
  ck_assert_int_eq(fx_addi(&f, 7, 4, 4), 1);
  ck_assert_int_eq(fx_addi(&f, 7, 10, 8), 0);
  ck_assert_uint_eq(fx_key(&f, &(Value){.type = TYPE_INT, .i = 7})->late, 1);
  ck_assert_str_eq(fx_tick(&f, INT64_MAX), "[10,20) k=7 n=1 sum=8 first=8 last=8 amax=8 amin=8 cd=1 sd=0\n");
  fx_free(&f);
}
END_TEST

/* Hopping windows of 10 every 5: each tuple is in two; a tuple whose windows are all closed is
 * late once, one with an open window left is added to it. */
START_TEST(test_hopping_overlap) {
  Fixture f;
  fx_init(&f, WIN_HOPPING_TIME, 10, 5, 0);
  fx_addi(&f, 0, 7, 1);
  fx_addi(&f, 0, 12, 2);
  ck_assert_str_eq(fx_tick(&f, 10), "[0,10) k=0 n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n");
  ck_assert_int_eq(fx_addi(&f, 0, 4, 4), 1);  /* [-5, 5) and [0, 10): both closed */
  ck_assert_int_eq(fx_addi(&f, 0, 9, 8), 0);  /* [0, 10) closed, [5, 15) open */
  ck_assert_str_eq(fx_tick(&f, 15), "[5,15) k=0 n=3 sum=11 first=1 last=8 amax=1 amin=1 cd=1 sd=0\n");
  ck_assert_str_eq(fx_tick(&f, INT64_MAX), "[10,20) k=0 n=1 sum=2 first=2 last=2 amax=2 amin=2 cd=1 sd=0\n");
  ck_assert_uint_eq(f.state[0].late, 1);
  fx_free(&f);
}
END_TEST

/* Sessions of gap 10: 0 and 18 are two sessions, 9 bridges them (the one that started first
 * folds in the other, then 9 is added: first and last follow arrival); 40 starts another. */
START_TEST(test_session_bridge) {
  Fixture f;
  fx_init(&f, WIN_SESSION_TIME, 10, 0, 0);
  fx_add(&f, value_int(0), 0, 1, 1, 0.5);
  fx_add(&f, value_int(0), 18, 2, 7, 0.25);
  fx_add(&f, value_int(0), 1, 4, 7, 1e16);
  ck_assert_int_eq(f.state[0].n, 2);
  fx_add(&f, value_int(0), 9, 8, 0, 1.0);
  ck_assert_int_eq(f.state[0].n, 1);
  fx_add(&f, value_int(0), 40, 16, 0, 0.0);
  /* arg_max: by 7 twice, the tuple at 18 arrived before the one at 1: it wins the tie; sum(d) is
   * (0.5 + 1e16) + 0.25, then + 1.0 (each rounding to 1e16) */
  ck_assert_str_eq(fx_tick(&f, 28), "[0,28) k=0 n=4 sum=15 first=1 last=8 amax=2 amin=8 cd=4 sd=10000000000000000\n");
  ck_assert_str_eq(fx_tick(&f, INT64_MAX), "[40,50) k=0 n=1 sum=16 first=16 last=16 amax=16 amin=16 cd=1 sd=0\n");
  fx_free(&f);
}
END_TEST

/* Lateness 5: a tuple at 8 after tick 12 extends the session [0, 10) to [0, 18), emitted at
 * 23; then one at 5 is late (5 + 10 + 5 <= 23). Without lateness, a tuple after its session was
 * emitted never joins it: it starts a new one. */
START_TEST(test_session_lateness) {
  Fixture f;
  fx_init(&f, WIN_SESSION_TIME, 10, 0, 5);
  fx_addi(&f, 0, 0, 1);
  ck_assert_str_eq(fx_tick(&f, 12), "");
  ck_assert_int_eq(fx_addi(&f, 0, 8, 2), 0);
  ck_assert_str_eq(fx_tick(&f, 22), "");
  ck_assert_str_eq(fx_tick(&f, 23), "[0,18) k=0 n=2 sum=3 first=1 last=2 amax=1 amin=1 cd=1 sd=0\n");
  ck_assert_int_eq(fx_addi(&f, 0, 5, 4), 1);
  ck_assert_uint_eq(f.state[0].late, 1);
  fx_free(&f);

  fx_init(&f, WIN_SESSION_TIME, 10, 0, 0);
  fx_addi(&f, 0, 0, 1);
  ck_assert_str_eq(fx_tick(&f, 10), "[0,10) k=0 n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n");
  ck_assert_int_eq(fx_addi(&f, 0, 1, 2), 0);
  ck_assert_str_eq(fx_tick(&f, INT64_MAX), "[1,11) k=0 n=1 sum=2 first=2 last=2 amax=2 amin=2 cd=1 sd=0\n");
  fx_free(&f);
}
END_TEST

/* What a tick emits: by end, then start, then key: doubles numerically with NaN last, strings
 * by bytes, false before true. -0.0 and 0.0 compare equal. */
START_TEST(test_emission_order) {
  Fixture f;
  fx_init(&f, WIN_HOPPING_TIME, 10, 5, 0);
  static const double ds[] = {NAN, INFINITY, 1.0, -1.0, -0.0};
  for (int i = 0; i < 5; i++) fx_add(&f, value_double(ds[i]), 7 - i, 1, 0, 0.0);
  const char *got = fx_tick(&f, 15);
  ck_assert_str_eq(got, "[-5,5) k=-1 n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n"
                        "[-5,5) k=-0 n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n"
                        "[0,10) k=-1 n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n"
                        "[0,10) k=-0 n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n"
                        "[0,10) k=1 n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n"
                        "[0,10) k=inf n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n"
                        "[0,10) k=nan n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n"
                        "[5,15) k=1 n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n"
                        "[5,15) k=inf n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n"
                        "[5,15) k=nan n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n");
  fx_free(&f);

  fx_init(&f, WIN_TUMBLING_TIME, 10, 10, 0);
  fx_add(&f, value_string("b", 1), 1, 1, 0, 0.0);
  fx_add(&f, value_string("ab", 2), 2, 1, 0, 0.0);
  fx_add(&f, value_string("a", 1), 3, 1, 0, 0.0);
  fx_add(&f, value_string("", 0), 14, 1, 0, 0.0);
  ck_assert_str_eq(fx_tick(&f, INT64_MAX), "[0,10) k=a n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n"
                                           "[0,10) k=ab n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n"
                                           "[0,10) k=b n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n"
                                           "[10,20) k= n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n");
  fx_free(&f);

  fx_init(&f, WIN_TUMBLING_TIME, 10, 10, 0);
  fx_add(&f, value_bool(true), 1, 1, 0, 0.0);
  fx_add(&f, value_bool(false), 2, 2, 0, 0.0);
  ck_assert_str_eq(fx_tick(&f, INT64_MAX), "[0,10) k=false n=1 sum=2 first=2 last=2 amax=2 amin=2 cd=1 sd=0\n"
                                           "[0,10) k=true n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0\n");
  Value z = value_double(0.0), nz = value_double(-0.0);
  ck_assert(value_equal(&z, &nz));
  fx_free(&f);
}
END_TEST

/* count_distinct: -0.0 is 0.0, every NaN one value; arg_max and arg_min keep the earliest of
 * equal `by`s. */
START_TEST(test_distinct_and_arg_ties) {
  Fixture f;
  fx_init(&f, WIN_TUMBLING_TIME, 100, 100, 0);
  double nan2;
  uint64_t bits = UINT64_C(0x7ff8000000000123);
  memcpy(&nan2, &bits, sizeof nan2);
  static const double ds[] = {0.0, -0.0, NAN, 1.0, 0.0};
  static const int64_t ys[] = {5, 7, 3, 7, 3};
  for (int i = 0; i < 5; i++) fx_add(&f, value_int(0), i, 10 + i, ys[i], ds[i]);
  fx_add(&f, value_int(0), 5, 15, 5, nan2);
  ck_assert_str_eq(fx_tick(&f, INT64_MAX), "[0,100) k=0 n=6 sum=75 first=10 last=15 amax=11 amin=12 cd=3 sd=nan\n");
  fx_free(&f);
}
END_TEST

/* Windows near the ends of int64 neither wrap nor fault: their bounds are clamped to int64's
 * range (INT64_MIN is in [-9223372036854775810, -9223372036854775800) and the window before),
 * and the final tick closes those that end at INT64_MAX. */
START_TEST(test_extreme_times) {
  Fixture f;
  fx_init(&f, WIN_HOPPING_TIME, 10, 5, 3);
  fx_addi(&f, 0, INT64_MAX, 1);
  fx_addi(&f, 0, INT64_MIN, 2);
  ck_assert_str_eq(fx_tick(&f, INT64_MAX - 1), "[-9223372036854775808,-9223372036854775805) k=0 n=1 sum=2 first=2 "
                                               "last=2 amax=2 amin=2 cd=1 sd=0\n"
                                               "[-9223372036854775808,-9223372036854775800) k=0 n=1 sum=2 first=2 "
                                               "last=2 amax=2 amin=2 cd=1 sd=0\n");
  ck_assert_str_eq(fx_tick(&f, INT64_MAX), "[9223372036854775800,9223372036854775807) k=0 n=1 sum=1 first=1 last=1 "
                                           "amax=1 amin=1 cd=1 sd=0\n"
                                           "[9223372036854775805,9223372036854775807) k=0 n=1 sum=1 first=1 last=1 "
                                           "amax=1 amin=1 cd=1 sd=0\n");
  fx_free(&f);
}
END_TEST

/* A snapshot of every key's windows, the tick and the arrivals, restored into a new Tw, gives
 * the same emissions as the original, and the late tuples stay late. */
START_TEST(test_snapshot_round_trip) {
  Fixture a, b;
  for (int kind = 0; kind < 2; kind++) {
    WindowKind k = kind ? WIN_SESSION_TIME : WIN_HOPPING_TIME;
    fx_init(&a, k, 10, 5, 2);
    fx_init(&b, k, 10, 5, 2);
    fx_add(&a, value_string("x", 1), 3, 1, 4, 0.5);
    fx_add(&a, value_string("y", 1), 4, 2, 4, -0.0);
    fx_add(&a, value_string("x", 1), 11, 4, 9, 0.5);
    fx_add(&a, value_string("x", 1), 26, 8, 1, 2.5);
    ck_assert_str_eq(fx_tick(&a, 14), kind ? "" : "[-5,5) k=x n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0.5\n"
                                                   "[-5,5) k=y n=1 sum=2 first=2 last=2 amax=2 amin=2 cd=1 sd=-0\n"
                                                   "[0,10) k=x n=1 sum=1 first=1 last=1 amax=1 amin=1 cd=1 sd=0.5\n"
                                                   "[0,10) k=y n=1 sum=2 first=2 last=2 amax=2 amin=2 cd=1 sd=-0\n");
    Buf snap;
    buf_init(&snap);
    tw_snapshot(&a.tw, &snap);
    snap_u64(&snap, (uint64_t)a.nkeys);
    for (int i = 0; i < a.nkeys; i++) {
      snap_value(&snap, &a.keys[i]);
      tw_key_snapshot(&a.tw, &a.state[i], &snap);
    }
    SnapIn in = {.p = (const unsigned char *)snap.p, .n = snap.n};
    tw_restore(&b.tw, &in);
    uint64_t n = snap_get_u64(&in);
    for (uint64_t i = 0; i < n; i++) {
      Value key;
      snap_get_value(&in, &key);
      ck_assert_int_eq(tw_key_restore(&b.tw, fx_key(&b, &key), &in, NVALS), 0);
    }
    ck_assert(snap_done(&in));
    ck_assert_int_eq(fx_add(&a, value_string("x", 1), 1, 16, 0, 0.0), 1);
    ck_assert_int_eq(fx_add(&b, value_string("x", 1), 1, 16, 0, 0.0), 1);
    fx_add(&a, value_string("x", 1), 17, 32, 9, 1.0);
    fx_add(&b, value_string("x", 1), 17, 32, 9, 1.0);
    char *want = strdup(fx_tick(&a, INT64_MAX));
    ck_assert_str_eq(fx_tick(&b, INT64_MAX), want);
    ck_assert_str_ne(want, "");
    free(want);
    buf_release(&snap);
    fx_free(&a);
    fx_free(&b);
  }
}
END_TEST

static Suite *timewin_suite(void) {
  Suite *s = suite_create("timewin");
  UNIT_ADD(s, test_tumbling_boundaries, NULL, NULL);
  UNIT_ADD(s, test_tumbling_negative_times, NULL, NULL);
  UNIT_ADD(s, test_tumbling_lateness, NULL, NULL);
  UNIT_ADD(s, test_hopping_overlap, NULL, NULL);
  UNIT_ADD(s, test_session_bridge, NULL, NULL);
  UNIT_ADD(s, test_session_lateness, NULL, NULL);
  UNIT_ADD(s, test_emission_order, NULL, NULL);
  UNIT_ADD(s, test_distinct_and_arg_ties, NULL, NULL);
  UNIT_ADD(s, test_extreme_times, NULL, NULL);
  UNIT_ADD(s, test_snapshot_round_trip, NULL, NULL);
  return s;
}

int main(void) {
  return unit_run(timewin_suite());
}
