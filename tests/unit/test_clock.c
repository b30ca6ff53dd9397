/* test_clock.c: the event-time clocks of rt/clock.c driven directly (docs/language.md, "Event
 * time": "The clock and ticks"), on tuples and runs made here, without running a job.
 *
 * A graph of three Beacons a, b, c with `time` ts (their `tick` set per test), a Functor `mix`
 * fed by all three (a fan-in), a Filter `keep` and a FileSink is planned as sf-exec plans it
 * (plan_build: nodes, clocks, slots); no thread runs. The suite links with --wrap for what
 * clock.c calls in flow.c and stop.c, so what the clocks emit is recorded as text, one line each:
 *   "a tick T @S"      rt_emit_tick from source a (S: the position it carries, cur_src),
 *   "a run T1 T2 .."   emit_run_items: a piece of a run, by its tuples' times,
 *   "mix tick T"       rt_emit_item of a tick by an operator that passes ticks on,
 *   "a fail: MESSAGE"  rt_fail;
 * and "a tuple T" for a tuple clock_source_tuple let through (as rt_emit would emit it next).
 *
 * Every expected tick is worked out in the comments from the documented rule: a tuple that moves
 * the clock (the largest time so far) to or past a multiple of P it had not reached is preceded by
 * ONE tick, the largest multiple reached, ⌊clock / P⌋·P rounded toward −infinity; the final tick
 * (INT64_MAX) comes at the end; a fan-in's tick is the smallest of the latest ticks of its inputs
 * that have not ended, passed on when it rises; an operator's ticks only rise. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_helper.h"
#include "exec_priv.h"

/* ---- what the clocks emit, recorded ---- */

static Buf got;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  buf_puts(&got, line);
}

int __wrap_rt_emit_tick(OpInst *op, int port, int64_t t) {
  (void)port;
  say("%s tick %lld @%llu\n", op->op->name, (long long)t, (unsigned long long)op->cur_src);
  return 0;
}

int __wrap_emit_run_items(OpInst *op, int port, Item *items, int k) {
  (void)port;
  say("%s run", op->op->name);
  for (int i = 0; i < k; i++) say(" %lld", (long long)items[i].t->v[0].i);
  say("\n");
  tuple_unref_items(items, k);
  return 0;
}

int __wrap_rt_emit_item(OpInst *op, int port, const Item *it) {
  (void)port;
  ck_assert_int_eq(it->kind, ITEM_TICK);
  say("%s tick %lld\n", op->op->name, (long long)it->tick);
  return 0;
}

int __wrap_rt_fail(OpInst *op, const char *fmt, ...) {
  char msg[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  say("%s fail: %s\n", op->op->name, msg);
  return -1;
}

/* The text recorded since the last call, and forgets it (valid until the next call). */
static char *last;
static const char *take(void) {
  free(last);
  last = strdup(got.p ? got.p : "");
  buf_reset(&got);
  return last;
}

/* ---- the planned graph ---- */

static const char GRAPH[] =
  "<graph xmlns=\"urn:streamfission:graph:1\" name=\"clocks\">\n"
  "  <schema name=\"T\"><attr name=\"ts\" type=\"int\"/></schema>\n"
  "  <operator name=\"a\" kind=\"Beacon\"><output stream=\"A\" schema=\"T\"/>\n"
  "    <param name=\"count\">1</param><param name=\"time\">ts</param><param name=\"tick\">%lld</param>\n"
  "    <set attr=\"ts\">seq</set></operator>\n"
  "  <operator name=\"b\" kind=\"Beacon\"><output stream=\"B\" schema=\"T\"/>\n"
  "    <param name=\"count\">1</param><param name=\"time\">ts</param><param name=\"tick\">10</param>\n"
  "    <set attr=\"ts\">seq</set></operator>\n"
  "  <operator name=\"c\" kind=\"Beacon\"><output stream=\"C\" schema=\"T\"/>\n"
  "    <param name=\"count\">1</param><param name=\"time\">ts</param><param name=\"tick\">10</param>\n"
  "    <set attr=\"ts\">seq</set></operator>\n"
  "  <operator name=\"mix\" kind=\"Functor\"><input stream=\"A B C\"/><output stream=\"M\" schema=\"T\"/></operator>\n"
  "  <operator name=\"keep\" kind=\"Filter\"><input stream=\"M\"/><output stream=\"K\" schema=\"T\"/>\n"
  "    <param name=\"where\">true</param></operator>\n"
  "  <operator name=\"sink\" kind=\"FileSink\"><input stream=\"K\"/><param name=\"file\">out.csv</param></operator>\n"
  "</graph>\n";

static Graph *g;
static Exec *x;
static ExecOptions opts;

/* Plans GRAPH with source a's period p (b's and c's: 10). */
static void plan(int64_t p) {
  char text[sizeof GRAPH + 32];
  snprintf(text, sizeof text, GRAPH, (long long)p);
  g = unit_graph_text(text);
  x = calloc(1, sizeof *x);
  x->g = g;
  x->o = &opts;
  x->log = stderr;
  x->arena = arena_new();
  x->stop_pipe[0] = x->stop_pipe[1] = -1;
  snprintf(x->graph_dir, sizeof x->graph_dir, ".");
  ck_assert_int_eq(plan_build(x), 0);
  buf_init(&got);
}

/* Frees what plan made (every test's teardown: nothing ran, so no batch is held anywhere). */
static void unplan(void) {
  if (!x) return;
  for (int i = 0; i < x->nnodes; i++) arena_free(x->nodes[i].inst.scratch);
  arena_free(x->arena);
  free(x);
  x = NULL;
  graph_free(g);
  g = NULL;
  buf_release(&got);
  free(last);
  last = NULL;
}

static Node *node(const char *name) {
  Op *op = graph_find_op(g, name);
  ck_assert_ptr_nonnull(op);
  return &x->nodes[op->index];
}

/* Source n emits a tuple of time t at position pos (rt_emit's clock hook, then the tuple). */
static void tuple_at(Node *n, int64_t t, uint64_t pos) {
  Value v = value_int(t);
  Tuple *tu = tuple_new(&v, 1);
  n->inst.cur_seq = n->inst.cur_src = pos;
  if (clock_source_tuple(n, tu) == 0) say("%s tuple %lld\n", n->op->name, (long long)t);
  tuple_unref(tu);
}

/* Source n emits the times ts[0..k) as one run (rt_emit_run's hook), at positions 0, 1, ... */
static int run_of(Node *n, const int64_t *ts, int k) {
  Item items[64];
  ck_assert_int_le(k, 64);
  for (int i = 0; i < k; i++) {
    Value v = value_int(ts[i]);
    items[i] = (Item){.kind = ITEM_TUPLE, .seq = (uint64_t)i, .src = (uint64_t)i, .t = tuple_new(&v, 1)};
  }
  return clock_source_run(n, 0, items, k);
}

/* A tick t reaching n on its input slot `slot`. */
static void tick_in(Node *n, int slot, int64_t t) {
  Item it = {.kind = ITEM_TICK, .tick = t};
  ck_assert_int_eq(clock_deliver(n, slot, &it), 0);
}

static int64_t cur_tick(Node *n) {
  return atomic_load(&n->inst.cur_tick);
}

/* ---- one tick per tuple, however many periods it crosses ---- */

START_TEST(test_several_periods) {
  plan(10);
  Node *a = node("a");
  ck_assert(a->clock != NULL);
  ck_assert_int_eq(cur_tick(a), TICK_NONE);
  tuple_at(a, 3, 0);    /* the first tuple: ⌊3/10⌋·10 = 0 */
  tuple_at(a, 7, 1);    /* clock 7: still 0 */
  tuple_at(a, 45, 2);   /* clock 45 crosses 10, 20, 30 and 40: one tick, the largest, 40 */
  tuple_at(a, 12, 3);   /* behind the clock (45): no tick */
  tuple_at(a, 49, 4);   /* clock 49: still 40 */
  tuple_at(a, 50, 5);   /* exactly on a multiple: "to or past" it, 50 */
  tuple_at(a, 1000, 6); /* 95 periods at once: 1000 */
  ck_assert_str_eq(take(), "a tick 0 @0\na tuple 3\na tuple 7\n"
                           "a tick 40 @2\na tuple 45\na tuple 12\na tuple 49\n"
                           "a tick 50 @5\na tuple 50\n"
                           "a tick 1000 @6\na tuple 1000\n");
  ck_assert_int_eq(cur_tick(a), 1000);
  /* the end: the final tick, +infinity */
  ck_assert_int_eq(clock_source_end(a), 0);
  ck_assert_str_eq(take(), "a tick 9223372036854775807 @6\n");
  ck_assert_int_eq(cur_tick(a), TICK_FINAL);
}
END_TEST

/* A source with no tuple at all still ends with the final tick. */
START_TEST(test_final_tick_alone) {
  plan(10);
  Node *a = node("a");
  ck_assert_int_eq(clock_source_end(a), 0);
  ck_assert_str_eq(take(), "a tick 9223372036854775807 @0\n");
}
END_TEST

/* ---- negative times: floor, not truncation ---- */

START_TEST(test_negative_times) {
  plan(10);
  Node *a = node("a");
  tuple_at(a, -25, 0); /* ⌊-2.5⌋ = -3: -30 (truncation would say -20) */
  tuple_at(a, -21, 1); /* ⌊-2.1⌋ = -3: -30 again, nothing */
  tuple_at(a, -20, 2); /* exactly -20 */
  tuple_at(a, -11, 3); /* ⌊-1.1⌋ = -2: -20, nothing */
  tuple_at(a, -1, 4);  /* ⌊-0.1⌋ = -1: -10 (truncation: 0) */
  tuple_at(a, -15, 5); /* behind the clock */
  tuple_at(a, 0, 6);   /* 0 */
  ck_assert_str_eq(take(), "a tick -30 @0\na tuple -25\na tuple -21\n"
                           "a tick -20 @2\na tuple -20\na tuple -11\n"
                           "a tick -10 @4\na tuple -1\na tuple -15\n"
                           "a tick 0 @6\na tuple 0\n");
}
END_TEST

/* A period that is not a power of ten: P = 7. */
START_TEST(test_negative_times_period_7) {
  plan(7);
  Node *a = node("a");
  tuple_at(a, -1, 0);  /* ⌊-1/7⌋ = -1: -7 */
  tuple_at(a, -8, 1);  /* behind */
  tuple_at(a, 6, 2);   /* ⌊6/7⌋ = 0: 0 */
  tuple_at(a, 13, 3);  /* ⌊13/7⌋ = 1: 7 */
  tuple_at(a, 14, 4);  /* 14 */
  ck_assert_str_eq(take(), "a tick -7 @0\na tuple -1\na tuple -8\n"
                           "a tick 0 @2\na tuple 6\n"
                           "a tick 7 @3\na tuple 13\n"
                           "a tick 14 @4\na tuple 14\n");
}
END_TEST

/* ---- runs cut where a tick falls ---- */

START_TEST(test_runs_cut_at_ticks) {
  plan(10);
  Node *a = node("a");
  /* 1: tick 0 first (nothing before it to emit); 10: tick 10; 35 crosses 20 and 30: tick 30; 20
   * and 39 are behind it or within it; 40: tick 40. Each tick carries the position of the tuple
   * behind it, and the run goes out in the pieces between ticks. */
  const int64_t ts[] = {1, 2, 3, 10, 11, 35, 36, 20, 39, 40};
  ck_assert_int_eq(run_of(a, ts, 10), 0);
  ck_assert_str_eq(take(), "a tick 0 @0\na run 1 2 3\n"
                           "a tick 10 @3\na run 10 11\n"
                           "a tick 30 @5\na run 35 36 20 39\n"
                           "a tick 40 @9\na run 40\n");
  /* a run that reaches no new multiple goes out whole: 41..49 are in tick 40's period, 5 behind */
  const int64_t more[] = {41, 5, 49};
  ck_assert_int_eq(run_of(a, more, 3), 0);
  ck_assert_str_eq(take(), "a run 41 5 49\n");
  /* a run that begins with a tick and ends with one: 50, then 60 last */
  const int64_t edge[] = {50, 59, 60};
  ck_assert_int_eq(run_of(a, edge, 3), 0);
  ck_assert_str_eq(take(), "a tick 50 @0\na run 50 59\na tick 60 @2\na run 60\n");
  ck_assert_int_eq(cur_tick(a), 60);
}
END_TEST

/* ---- the ends of int64 ---- */

/* Near INT64_MIN no multiple of P may exist in int64: then no tick, until the clock reaches one. */
START_TEST(test_times_near_int64_min) {
  plan(10);
  Node *a = node("a");
  /* INT64_MIN = -9223372036854775808; the multiple of 10 at or below it, -9223372036854775810, is
   * not an int64: no tick. INT64_MIN + 7 = ...801 is still below -9223372036854775800 = INT64_MIN +
   * 8, the smallest multiple of 10 in int64, which gets its tick. */
  tuple_at(a, INT64_MIN, 0);
  tuple_at(a, INT64_MIN + 7, 1);
  tuple_at(a, INT64_MIN + 8, 2);
  tuple_at(a, INT64_MIN + 17, 3); /* ...791: still that period */
  tuple_at(a, -5, 4);             /* -10 */
  ck_assert_str_eq(take(), "a tuple -9223372036854775808\na tuple -9223372036854775801\n"
                           "a tick -9223372036854775800 @2\na tuple -9223372036854775800\n"
                           "a tuple -9223372036854775791\n"
                           "a tick -10 @4\na tuple -5\n");
}
END_TEST

/* P = 1: the tick of INT64_MIN would be INT64_MIN, which stands for "no tick" (every operator's
 * current tick before its first, so ticks only rising, it could never pass): none goes. */
START_TEST(test_times_near_int64_min_period_1) {
  plan(1);
  Node *a = node("a");
  tuple_at(a, INT64_MIN, 0);
  tuple_at(a, INT64_MIN + 1, 1);
  ck_assert_str_eq(take(), "a tuple -9223372036854775808\n"
                           "a tick -9223372036854775807 @1\na tuple -9223372036854775807\n");
}
END_TEST

/* P = INT64_MAX: the multiples in int64 are -INT64_MAX (= INT64_MIN + 1), 0 and INT64_MAX. */
START_TEST(test_period_int64_max) {
  plan(INT64_MAX);
  Node *a = node("a");
  tuple_at(a, INT64_MIN, 0);     /* ⌊INT64_MIN / INT64_MAX⌋ = -2: -2·INT64_MAX overflows, none */
  tuple_at(a, INT64_MIN + 1, 1); /* -1·INT64_MAX */
  tuple_at(a, -1, 2);            /* ⌊-1 / INT64_MAX⌋ = -1: the same */
  tuple_at(a, 0, 3);             /* 0 */
  tuple_at(a, INT64_MAX - 1, 4); /* ⌊(INT64_MAX - 1) / INT64_MAX⌋ = 0: the same */
  ck_assert_str_eq(take(), "a tuple -9223372036854775808\n"
                           "a tick -9223372036854775807 @1\na tuple -9223372036854775807\na tuple -1\n"
                           "a tick 0 @3\na tuple 0\na tuple 9223372036854775806\n");
  ck_assert_int_eq(clock_source_end(a), 0);
  ck_assert_str_eq(take(), "a tick 9223372036854775807 @4\n");
}
END_TEST

/* The largest usable time, INT64_MAX - 1, and the final tick after it, distinct. */
START_TEST(test_times_near_int64_max) {
  plan(1);
  Node *a = node("a");
  tuple_at(a, INT64_MAX - 2, 0); /* P = 1: each time is its own tick */
  tuple_at(a, INT64_MAX - 1, 1);
  ck_assert_int_eq(clock_source_end(a), 0);
  ck_assert_str_eq(take(), "a tick 9223372036854775805 @0\na tuple 9223372036854775805\n"
                           "a tick 9223372036854775806 @1\na tuple 9223372036854775806\n"
                           "a tick 9223372036854775807 @1\n");
}
END_TEST

START_TEST(test_times_near_int64_max_period_7) {
  plan(7);
  Node *a = node("a");
  /* 7 divides INT64_MAX (7 · 1317624576693539401): INT64_MAX - 1 is in the period that starts at
   * INT64_MAX - 7 = 9223372036854775800 */
  tuple_at(a, INT64_MAX - 8, 0); /* ⌊..799 / 7⌋·7 = INT64_MAX - 14 = ..793 */
  tuple_at(a, INT64_MAX - 1, 1);
  ck_assert_str_eq(take(), "a tick 9223372036854775793 @0\na tuple 9223372036854775799\n"
                           "a tick 9223372036854775800 @1\na tuple 9223372036854775806\n");
}
END_TEST

/* A tuple at INT64_MAX is refused (its tick with P = 1, or any P dividing INT64_MAX, would be the
 * final tick's), as a tuple or in a run, whatever the period; the tuples before it in a run go
 * first. The fault names the tuple and the time attribute. */
#define END_REFUSED "a fail: tuple (ts=9223372036854775807): time 'ts' = 9223372036854775807 stands for " \
                    "the end of the stream; the largest time a tuple may have is 9223372036854775806\n"

START_TEST(test_time_int64_max_refused) {
  plan(1);
  Node *a = node("a");
  tuple_at(a, 0, 0);
  tuple_at(a, INT64_MAX, 1);
  ck_assert_str_eq(take(), "a tick 0 @0\na tuple 0\n" END_REFUSED);
  ck_assert_int_eq(cur_tick(a), 0);
}
END_TEST

START_TEST(test_time_int64_max_refused_in_run) {
  plan(10); /* 10 does not divide INT64_MAX: refused all the same */
  Node *a = node("a");
  const int64_t ts[] = {5, 6, 12, INT64_MAX, 7};
  ck_assert_int_eq(run_of(a, ts, 5), -1);
  ck_assert_str_eq(take(), "a tick 0 @0\na run 5 6\na tick 10 @2\na run 12\n" END_REFUSED);
  const int64_t first[] = {INT64_MAX, 13};
  ck_assert_int_eq(run_of(a, first, 2), -1);
  ck_assert_str_eq(take(), END_REFUSED);
}
END_TEST

/* ---- a fan-in's tick ---- */

START_TEST(test_fanin_tick) {
  plan(10);
  Node *mix = node("mix");
  ck_assert_int_eq(mix->nslots, 3);
  ck_assert(mix->slot_tick != NULL);
  tick_in(mix, 0, 10); /* latest (10, none, none): the smallest is none, nothing */
  tick_in(mix, 1, 20); /* (10, 20, none): nothing */
  tick_in(mix, 2, 5);  /* (10, 20, 5): 5 */
  tick_in(mix, 2, 30); /* (10, 20, 30): 10 */
  tick_in(mix, 0, 40); /* (40, 20, 30): 20 */
  tick_in(mix, 1, 20); /* b again at 20: (40, 20, 30), still 20, nothing */
  ck_assert_str_eq(take(), "mix tick 5\nmix tick 10\nmix tick 20\n");
  ck_assert_int_eq(cur_tick(mix), 20);
  tick_in(mix, 1, TICK_FINAL); /* b ends: it no longer counts: (40, -, 30): 30 */
  tick_in(mix, 2, 25);         /* a tick not above c's latest (30) changes nothing */
  tick_in(mix, 2, 35);         /* (40, -, 35): 35 */
  tick_in(mix, 2, TICK_FINAL); /* c ends: (40, -, -): 40 */
  tick_in(mix, 0, 45);         /* (45, -, -): 45 */
  tick_in(mix, 0, TICK_FINAL); /* every input ended: the final tick */
  ck_assert_str_eq(take(), "mix tick 30\nmix tick 35\nmix tick 40\nmix tick 45\n"
                           "mix tick 9223372036854775807\n");
  ck_assert_int_eq(cur_tick(mix), TICK_FINAL);
}
END_TEST

/* The first input to end lets the others' ticks through at once. */
START_TEST(test_fanin_input_ends_first) {
  plan(10);
  Node *mix = node("mix");
  tick_in(mix, 0, TICK_FINAL); /* a ends before any tick: (-, none, none): nothing */
  tick_in(mix, 1, 100);        /* (-, 100, none): nothing */
  tick_in(mix, 2, 70);         /* (-, 100, 70): 70 */
  tick_in(mix, 2, TICK_FINAL); /* (-, 100, -): 100 */
  ck_assert_str_eq(take(), "mix tick 70\nmix tick 100\n");
}
END_TEST

/* An operator of one input passes a tick on only when it rises. */
START_TEST(test_ticks_only_rise) {
  plan(10);
  Node *keep = node("keep");
  ck_assert(keep->slot_tick == NULL);
  tick_in(keep, 0, 10);
  tick_in(keep, 0, 10); /* not above 10 */
  tick_in(keep, 0, 5);  /* below */
  tick_in(keep, 0, 11);
  tick_in(keep, 0, TICK_FINAL);
  tick_in(keep, 0, TICK_FINAL); /* once */
  ck_assert_str_eq(take(), "keep tick 10\nkeep tick 11\nkeep tick 9223372036854775807\n");
}
END_TEST

/* ---- checkpoints ---- */

/* A source's clock and a fan-in's ticks come back from a snapshot: the same ticks follow. */
START_TEST(test_snapshot_round_trip) {
  plan(10);
  Node *a = node("a"), *mix = node("mix");
  tuple_at(a, 5, 0);
  tuple_at(a, 25, 1); /* ticks 0, then 20 */
  tick_in(mix, 0, 20);
  tick_in(mix, 1, 30);
  tick_in(mix, 2, 10); /* mix: 10 */
  take();
  Buf sa, sm;
  buf_init(&sa);
  buf_init(&sm);
  ck_assert(clock_kept(a) && clock_kept(mix));
  clock_snapshot(a, &sa);
  clock_snapshot(mix, &sm);
  clock_reset(a);
  clock_reset(mix);
  ck_assert_int_eq(cur_tick(a), TICK_NONE);
  SnapIn in = {.p = (const unsigned char *)sa.p, .n = sa.n};
  ck_assert_int_eq(clock_restore(a, &in), 0);
  SnapIn im = {.p = (const unsigned char *)sm.p, .n = sm.n};
  ck_assert_int_eq(clock_restore(mix, &im), 0);
  ck_assert_int_eq(cur_tick(a), 20);
  ck_assert_int_eq(cur_tick(mix), 10);
  tuple_at(a, 29, 2);  /* clock 29: still 20 */
  tuple_at(a, 30, 3);  /* 30 */
  tick_in(mix, 2, 40); /* (20, 30, 40): 20 */
  ck_assert_str_eq(take(), "a tuple 29\na tick 30 @3\na tuple 30\nmix tick 20\n");
  buf_release(&sa);
  buf_release(&sm);
}
END_TEST

static Suite *clock_suite(void) {
  Suite *s = suite_create("clock");
  UNIT_ADD(s, test_several_periods, NULL, unplan);
  UNIT_ADD(s, test_final_tick_alone, NULL, unplan);
  UNIT_ADD(s, test_negative_times, NULL, unplan);
  UNIT_ADD(s, test_negative_times_period_7, NULL, unplan);
  UNIT_ADD(s, test_runs_cut_at_ticks, NULL, unplan);
  UNIT_ADD(s, test_times_near_int64_min, NULL, unplan);
  UNIT_ADD(s, test_times_near_int64_min_period_1, NULL, unplan);
  UNIT_ADD(s, test_period_int64_max, NULL, unplan);
  UNIT_ADD(s, test_times_near_int64_max, NULL, unplan);
  UNIT_ADD(s, test_times_near_int64_max_period_7, NULL, unplan);
  UNIT_ADD(s, test_time_int64_max_refused, NULL, unplan);
  UNIT_ADD(s, test_time_int64_max_refused_in_run, NULL, unplan);
  UNIT_ADD(s, test_fanin_tick, NULL, unplan);
  UNIT_ADD(s, test_fanin_input_ends_first, NULL, unplan);
  UNIT_ADD(s, test_ticks_only_rise, NULL, unplan);
  UNIT_ADD(s, test_snapshot_round_trip, NULL, unplan);
  return s;
}

int main(void) {
  return unit_run(clock_suite());
}
