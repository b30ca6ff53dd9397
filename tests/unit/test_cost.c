/* test_cost.c: the cost model (xform/cost.c) with fixed costs: the time per tuple of a region at a
 * width and what bounds it, the width chosen, the kind estimates; and fission_regions_profiled
 * (regions.c) with a profile written here: the region no width pays for is kept serial with its
 * exact reason, the other gets the chosen width, a region the profile lacks keeps today's rules.
 * docs/design.md's worked example is test_design_example. */
#include "check_helper.h"
#include "sf.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A region with the default Split, channel and Merge costs, on `cores` cores. */
static RegionCost region(double up, double work, double down, int cores) {
  RegionCost c = { .up = up, .split = COST_SPLIT_NS, .work = work, .channel = COST_CHANNEL_NS,
                   .merge = COST_MERGE_NS, .down = down, .cores = cores, .up_what = "the source 'src'",
                   .down_what = "the serial operator 'sink'" };
  return c;
}

static void assert_near(double got, double want) {
  ck_assert_msg(fabs(got - want) < 1e-6, "got %.9g, want %.9g", got, want);
}

START_TEST(test_cheap_region_stays_serial) {
  /* 50 + 40 + 30 = 120 ns serially; at width 2 the cores carry 50 + 60 + 40 + 55 + 75 + 30 = 310 */
  RegionCost c = region(50, 40, 30, 2);
  CostBound b;
  assert_near(cost_period(&c, 1, &b), 120);
  ck_assert_int_eq(b, BOUND_SERIAL);
  assert_near(cost_period(&c, 2, &b), 155);
  ck_assert_int_eq(b, BOUND_CORES);
  assert_near(cost_speedup(&c, 2), 120.0 / 155);
  ck_assert_int_eq(cost_width(&c, 2), 1);
  ck_assert_int_eq(cost_width(&c, 16), 1);
  /* with a core per thread, the Split's thread (50 + 60) bounds it: 1.09x, short of 1.2x */
  c.cores = 0;
  assert_near(cost_period(&c, 2, &b), 110);
  ck_assert_int_eq(b, BOUND_SPLIT);
  c.up = 70; /* now the source is the dearer part of that thread */
  cost_period(&c, 2, &b);
  ck_assert_int_eq(b, BOUND_UPSTREAM);
  c.up = 50;
  ck_assert_int_eq(cost_width(&c, 8), 1);
}
END_TEST

START_TEST(test_dear_region_takes_the_cores) {
  RegionCost c = region(50, 8000, 60, 2);
  ck_assert_int_eq(cost_width(&c, 2), 2);
  ck_assert_int_eq(cost_width(&c, 4), 2); /* 2 cores: a third channel cannot run */
  c.cores = 4;
  ck_assert_int_eq(cost_width(&c, 4), 4);
  ck_assert_int_eq(cost_width(&c, 3), 3);
  CostBound b;
  /* (8000 + 55) / 3 = 2685 against (50 + 60 + 8000 + 55 + 75 + 60) / 4 = 2075: the channels */
  assert_near(cost_period(&c, 3, &b), 8055.0 / 3);
  ck_assert_int_eq(b, BOUND_CHANNELS);
  assert_near(cost_period(&c, 4, &b), 8300.0 / 4);
  ck_assert_int_eq(b, BOUND_CORES);
}
END_TEST

START_TEST(test_merge_bounds_the_width) {
  /* no cores bound: 1010 serially, 500 at 2, then the Merge (400) caps it: width 3, not 8 */
  RegionCost c = { .up = 10, .split = 10, .work = 1000, .channel = 0, .merge = 400, .down = 0, .cores = 0 };
  CostBound b;
  assert_near(cost_period(&c, 2, &b), 500);
  ck_assert_int_eq(b, BOUND_CHANNELS);
  assert_near(cost_period(&c, 3, &b), 400);
  ck_assert_int_eq(b, BOUND_MERGE);
  ck_assert_int_eq(cost_width(&c, 8), 3);
  Arena *a = arena_new();
  ck_assert_str_eq(cost_bound_text(a, &c, BOUND_MERGE), "the Merge");
  c.up_what = "the source 'jobs'";
  ck_assert_str_eq(cost_bound_text(a, &c, BOUND_UPSTREAM), "the source 'jobs' upstream");
  c.down_what = "the Split of r2";
  ck_assert_str_eq(cost_bound_text(a, &c, BOUND_DOWNSTREAM), "the Split of r2 downstream");
  c.cores = 2;
  ck_assert_str_eq(cost_bound_text(a, &c, BOUND_CORES), "the 2 cores");
  ck_assert_str_eq(cost_bound_text(a, &c, BOUND_CHANNELS), "its channels");
  arena_free(a);
}
END_TEST

START_TEST(test_each_channel_must_pay) {
  /* the Merge bounds every width: 119 / 100 = 1.19x is not enough, 119 / 99 = 1.202x is, and
   * a third channel gains nothing */
  RegionCost c = { .up = 0, .split = 0, .work = 119, .channel = 0, .merge = 100, .down = 0, .cores = 0 };
  ck_assert_int_eq(cost_width(&c, 4), 1);
  c.merge = 99;
  ck_assert_int_eq(cost_width(&c, 4), 2);
  /* without the Merge's bound each channel pays down to 2 % steps: 119 / 8 vs 119 / 7 */
  c.merge = 0;
  ck_assert_int_eq(cost_width(&c, 8), 8);
}
END_TEST

/* ---- fission_regions_profiled ---- */

#define GRAPH                                                                                      \
  "<?xml version=\"1.0\"?>\n"                                                                      \
  "<graph xmlns=\"urn:streamfission:graph:1\" name=\"t\">\n"                                       \
  "<schema name=\"T\"><attr name=\"k\" type=\"int\"/></schema>\n"                                  \
  "<operator name=\"src\" kind=\"Beacon\"><output stream=\"S\" schema=\"T\"/>"                     \
  "<param name=\"count\">10</param><set attr=\"k\">seq</set></operator>\n"                         \
  "<operator name=\"a\" kind=\"Work\"><input stream=\"S\"/><output stream=\"A\" schema=\"T\"/>"     \
  "<param name=\"iterations\">1</param></operator>\n"                                              \
  "<operator name=\"b\" kind=\"Functor\" parallel=\"no\"><input stream=\"A\"/>"                    \
  "<output stream=\"B\" schema=\"T\"/></operator>\n"                                               \
  "<operator name=\"c\" kind=\"Work\"><input stream=\"B\"/><output stream=\"C\" schema=\"T\"/>"     \
  "<param name=\"iterations\">2000</param></operator>\n"                                           \
  "<operator name=\"out\" kind=\"FileSink\"><input stream=\"C\"/><param name=\"file\">o.csv</param>" \
  "</operator>\n"                                                                                  \
  "</graph>\n"

/* A profile of 1000 tuples: src 50, a 40, b 30, c 8000, out 60 ns per tuple; without the
 * operator named `without`. */
static Profile *profile_of(Arena *a, int cores, const char *without) {
  static const struct { const char *name; double ns; } ops[] = {
    { "src", 50 }, { "a", 40 }, { "b", 30 }, { "c", 8000 }, { "out", 60 },
  };
  Profile *p = arena_alloc(a, sizeof *p);
  p->file = "p.json";
  p->cores = cores;
  p->ops = arena_alloc(a, sizeof *p->ops * 5);
  for (int i = 0; i < 5; i++) {
    if (without && !strcmp(ops[i].name, without)) continue;
    ProfileOp *o = &p->ops[p->nops++];
    o->name = ops[i].name;
    o->cpu_ns = ops[i].ns * 1000;
    o->in = i == 0 ? 0 : 1000;
    o->out = i == 4 ? 0 : 1000;
  }
  return p;
}

static Op *op_named(Graph *g, const char *name) {
  Op *op = graph_find_op(g, name);
  ck_assert_msg(op != NULL, "no operator '%s'", name);
  return op;
}

START_TEST(test_profile_keeps_cheap_serial) {
  Graph *g = unit_graph_text(GRAPH);
  graph_analyze(g);
  Fission *f = fission_regions_profiled(g, 2, profile_of(g->arena, 2, NULL), 2, 2);
  ck_assert_int_eq(f->regions.n, 1);
  Region *r = f->regions.items[0];
  ck_assert_int_eq(r->ops.n, 1);
  ck_assert_ptr_eq(r->ops.items[0], op_named(g, "c"));
  ck_assert_int_eq(r->width, 2);
  ck_assert(r->width_profile);
  ck_assert(r->measured);
  /* region a, with b and c's Split after it in its Merge's thread: 50 + 40 + (30 + 60) = 180
   * serially, (50 + 60 + 40 + 55 + 75 + 90) / 2 = 185 at width 2 */
  ck_assert_str_eq(f->why[op_named(g, "a")->index],
                   "kept serial: measured 40 ns per tuple in 'a'; a Split and a Merge would cost ~60 and ~75 ns "
                   "per tuple: width 2 would run at 0.97x (a width must reach 1.20x)");
  /* c's region, with a serial now: upstream 30 + 40 + 50 */
  assert_near(r->cost.up, 120);
  assert_near(r->cost.work, 8000);
  assert_near(r->cost.down, 60);
  ck_assert_str_eq(r->cost.up_what, "the source 'src'");
  graph_free(g);
}
END_TEST

START_TEST(test_profile_one_core) {
  Graph *g = unit_graph_text(GRAPH);
  graph_analyze(g);
  Fission *f = fission_regions_profiled(g, 4, profile_of(g->arena, 1, NULL), 1, 1);
  ck_assert_int_eq(f->regions.n, 0);
  ck_assert_str_eq(f->why[op_named(g, "c")->index], "kept serial: the profile's machine has 1 usable core");
  graph_free(g);
}
END_TEST

START_TEST(test_profile_lacks_an_operator) {
  Graph *g = unit_graph_text(GRAPH);
  graph_analyze(g);
  Fission *f = fission_regions_profiled(g, 3, profile_of(g->arena, 8, "c"), 8, 8);
  ck_assert_int_eq(f->regions.n, 1); /* a is still kept serial; c keeps -w 3 */
  Region *r = f->regions.items[0];
  ck_assert_ptr_eq(r->ops.items[0], op_named(g, "c"));
  ck_assert_int_eq(r->width, 3);
  ck_assert(!r->width_profile);
  ck_assert(!r->measured);
  ck_assert_str_eq(r->unmeasured, "c");
  assert_near(r->cost.work, cost_kind_estimate(op_named(g, "c")));
  graph_free(g);
}
END_TEST

START_TEST(test_no_profile_keeps_decisions) {
  Graph *g = unit_graph_text(GRAPH);
  graph_analyze(g);
  Fission *f = fission_regions(g, 2);
  ck_assert_int_eq(f->regions.n, 2);
  ck_assert_int_eq(((Region *)f->regions.items[0])->width, 2);
  ck_assert(!((Region *)f->regions.items[0])->measured);
  /* the kind estimates: Work 30 + 3.8 per iteration */
  assert_near(((Region *)f->regions.items[0])->cost.work, 30 + 3.8);
  assert_near(((Region *)f->regions.items[1])->cost.work, 30 + 3.8 * 2000);
  graph_free(g);
}
END_TEST

static Suite *cost_suite(void) {
  Suite *s = suite_create("cost");
  TCase *model = unit_case(s, "model", NULL, NULL, 0);
  tcase_add_test(model, test_cheap_region_stays_serial);
  tcase_add_test(model, test_dear_region_takes_the_cores);
  tcase_add_test(model, test_merge_bounds_the_width);
  tcase_add_test(model, test_each_channel_must_pay);
  TCase *profile = unit_case(s, "profile", NULL, NULL, 0);
  tcase_add_test(profile, test_profile_keeps_cheap_serial);
  tcase_add_test(profile, test_profile_one_core);
  tcase_add_test(profile, test_profile_lacks_an_operator);
  tcase_add_test(profile, test_no_profile_keeps_decisions);
  return s;
}

int main(void) {
  return unit_run(cost_suite());
}
