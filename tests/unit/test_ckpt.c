/* test_ckpt.c: the coordinator's pace (rt/ckpt.c, ckpt_pace): how far the position that
 * checkpoints are placed ahead of moves per 20 ms tick, and when it is not known yet.
 *
 * The coordinator puts a checkpoint's position ahead of the furthest source by a number of such
 * steps; a step too small puts it behind a source that has already passed it (the checkpoint never
 * completes and waits out its 2 s timeout), a step too large puts it far ahead (it completes late).
 * Three cases made that happen before ckpt_pace: the first tick's step was everything read since
 * the start; between hosts, the others' reports come at their own ticks, so a tick that saw none
 * had step 0; and on the tick the coordinator's own sources ended, the step was the difference
 * between its own furthest source and the others' (tests/ckpt_ended.sh's hosts case lost its first
 * checkpoint to that in 2 runs of 6). */
#include <check.h>
#include <stdint.h>

#include "check_helper.h"
#include "ckpt_priv.h"

/* one tick: the step, and whether it is still settling, as "STEP" or "STEP settling" */
static const char *tick(CkptPace *p, bool own, uint64_t max) {
  static char out[64];
  bool settling;
  uint64_t step = ckpt_pace(p, own, max, &settling);
  snprintf(out, sizeof out, "%llu%s", (unsigned long long)step, settling ? " settling" : "");
  return out;
}

/* an executor with sources starts with pace.own false (ckpt_prepare): its first tick, at 1000
 * tuples read since the start, is no step; three ticks of 20 each later the step is known */
START_TEST(test_pace_first_tick) {
  CkptPace p = { .own = false };
  ck_assert_str_eq(tick(&p, true, 1000), "0 settling");
  ck_assert_str_eq(tick(&p, true, 1020), "20 settling");
  ck_assert_str_eq(tick(&p, true, 1040), "20 settling");
  ck_assert_str_eq(tick(&p, true, 1060), "20");
  ck_assert_str_eq(tick(&p, true, 1080), "20");
}
END_TEST

/* the others' reports, 40 tuples every other tick of ours: the step is 40 at every tick, never 0 */
START_TEST(test_pace_reports_between_ticks) {
  CkptPace p = { .own = false, .last = 100 };
  const uint64_t max[] = { 100, 140, 140, 180, 180, 220, 220, 260 };
  for (int i = 0; i < 8; i++) {
    bool settling;
    uint64_t step = ckpt_pace(&p, false, max[i], &settling);
    if (i >= 3) {
      ck_assert_msg(!settling, "tick %d still settling", i);
      ck_assert_msg(step == 40, "tick %d: step %llu, expected 40", i, (unsigned long long)step);
    }
  }
}
END_TEST

/* the coordinator's own slow source (5 a tick) ends at 250 while the others' are at 900 and move
 * 20 a tick: the change is no step of 650 (nor of 0), nothing is placed for 3 ticks, then 20 */
START_TEST(test_pace_own_sources_end) {
  CkptPace p = { .own = true, .last = 230 };
  ck_assert_str_eq(tick(&p, true, 235), "5 settling");
  ck_assert_str_eq(tick(&p, true, 240), "5 settling");
  ck_assert_str_eq(tick(&p, true, 245), "5");
  ck_assert_str_eq(tick(&p, true, 250), "5");
  ck_assert_str_eq(tick(&p, false, 900), "0 settling");
  ck_assert_str_eq(tick(&p, false, 920), "20 settling");
  ck_assert_str_eq(tick(&p, false, 940), "20 settling");
  ck_assert_str_eq(tick(&p, false, 960), "20");
}
END_TEST

/* a burst counts for 4 ticks, then the step is the steady one again; a position that goes back
 * (a report of a host whose furthest source ended) is a step of 0 */
START_TEST(test_pace_burst_expires) {
  CkptPace p = { .own = true, .last = 0, .ticks = 3 };
  ck_assert_str_eq(tick(&p, true, 10), "10");
  ck_assert_str_eq(tick(&p, true, 110), "100");
  ck_assert_str_eq(tick(&p, true, 120), "100");
  ck_assert_str_eq(tick(&p, true, 130), "100");
  ck_assert_str_eq(tick(&p, true, 140), "100");
  ck_assert_str_eq(tick(&p, true, 150), "10");
  ck_assert_str_eq(tick(&p, true, 100), "10");
  ck_assert_str_eq(tick(&p, true, 100), "10");
  ck_assert_str_eq(tick(&p, true, 100), "10");
  ck_assert_str_eq(tick(&p, true, 100), "0");
}
END_TEST

static Suite *ckpt_suite(void) {
  Suite *s = suite_create("ckpt");
  UNIT_ADD(s, test_pace_first_tick, NULL, NULL);
  UNIT_ADD(s, test_pace_reports_between_ticks, NULL, NULL);
  UNIT_ADD(s, test_pace_own_sources_end, NULL, NULL);
  UNIT_ADD(s, test_pace_burst_expires, NULL, NULL);
  return s;
}

int main(void) {
  return unit_run(ckpt_suite());
}
