/* cost.c: the cost model that says what a region's parallelism buys (docs/design.md, "Cost
 * model"). A region at width w is a pipeline of stages that run at once on their own threads: the
 * serial operators before it with the Split (one thread), w channels, the Merge with the serial
 * operators after it (one thread). A tuple needs every stage, so the slowest stage sets the pace
 * (an Amdahl bound): the time per tuple at width w is
 *   max(up + split, (work + channel) / w, merge + down, everything / cores)
 * against up + work + down when the region is not parallelized (one thread runs it all). The
 * figures are ns per tuple entering the region: measured (sf-exec --stats-json, read by sf-xform
 * --profile) or the estimates below. */
#include "sf.h"

#include <string.h>

/* Default costs, ns per tuple, measured on the machine the project is developed on (2 cores, shared:
 * load 6 to 8) with sf-exec --stats-json of Beacon -> Work(iterations 1) -> FileSink, 2,000,000
 * tuples, sequentially and at -w 2 (docs/design.md, "Cost model"). Each holds what the parallel run
 * costs beyond the sequential one: the Split's ns_per_tuple (27) and what its source paid more (34:
 * its tuples come back from other threads); a channel's Work less the sequential Work (89 - 32);
 * the Merge (53) and what the sink after it paid more (22). They stand in for what a profile did
 * not measure; they are estimates, not promises. */
const double COST_SPLIT_NS = 60;   /* a round-robin or hash Split, the push into the channel queues */
const double COST_MERGE_NS = 75;   /* a Merge: taking the channels' batches and putting them in order */
const double COST_CHANNEL_NS = 55; /* a channel's own hand-off: taking its batch, pushing its output */

/* Per kind, without a profile: what one tuple costs an operator, in ns. Beacon, Functor, Work and
 * FileSink are rough medians of a few --stats-json runs on the same machine (Work: 35 ns at one
 * iteration, 7,600 at 2,000), rounded; the other kinds were not measured and are guesses by what
 * they do per tuple. Work adds its iterations, Beacon and Functor their sets. */
double cost_kind_estimate(const Op *op) {
  switch (op->kind) {
  case KIND_BEACON: return 40 + 15 * op->nsets;
  case KIND_FILESOURCE: return 150;
  case KIND_FUNCTOR: return 30 + 15 * op->nsets;
  case KIND_FILTER: return 35;
  case KIND_FLATMAP: return 60;
  case KIND_AGGREGATE: return 80;
  case KIND_DEDUP: return 60;
  case KIND_LOOKUP: return 60 + 15 * op->nsets;
  case KIND_WORK: {
    const char *it = op_param(op, "iterations");
    int64_t n = 0;
    if (!it || number_read(it, strlen(it), 0, INT64_MAX, &n) != NUM_OK) n = 0;
    return 30 + 3.8 * (double)n;
  }
  case KIND_FILESINK: return 60;
  case KIND_SOCKETSOURCE: return 150;
  case KIND_KAFKASOURCE: return 150;
  case KIND_KAFKASINK: return 100;
  case KIND_SOCKETSINK: return 100;
  default: return 50; /* Custom and the rest: unknown, assumed cheap */
  }
}

double cost_period(const RegionCost *c, int w, CostBound *bound) {
  CostBound b;
  double t;
  if (w <= 1) {
    t = c->up + c->work + c->down;
    b = BOUND_SERIAL;
  } else {
    double entry = c->up + c->split, exit = c->merge + c->down, chan = (c->work + c->channel) / w;
    t = chan;
    b = BOUND_CHANNELS;
    if (entry > t) {
      t = entry;
      b = c->up > c->split ? BOUND_UPSTREAM : BOUND_SPLIT;
    }
    if (exit > t) {
      t = exit;
      b = c->down > c->merge ? BOUND_DOWNSTREAM : BOUND_MERGE;
    }
    double all = c->up + c->split + c->work + c->channel + c->merge + c->down;
    if (c->cores > 0 && all / c->cores > t) {
      t = all / c->cores;
      b = BOUND_CORES;
    }
  }
  if (bound) *bound = b;
  return t;
}

double cost_speedup(const RegionCost *c, int w) {
  double t = cost_period(c, w, NULL);
  return t > 0 ? cost_period(c, 1, NULL) / t : 1;
}

int cost_width(const RegionCost *c, int max) {
  double best = cost_period(c, 1, NULL);
  int w = 1;
  for (int k = 2; k <= max; k++) {
    double t = cost_period(c, k, NULL);
    if (t < best * (1 - COST_STEP_GAIN)) { /* one more channel must still pay */
      best = t;
      w = k;
    }
  }
  return w >= 2 && cost_speedup(c, w) >= COST_MIN_SPEEDUP ? w : 1;
}

const char *cost_bound_text(Arena *a, const RegionCost *c, CostBound b) {
  switch (b) {
  case BOUND_CHANNELS: return "its channels";
  case BOUND_SPLIT: return "the Split";
  case BOUND_MERGE: return "the Merge";
  case BOUND_UPSTREAM: return arena_printf(a, "%s upstream", c->up_what ? c->up_what : "what runs");
  case BOUND_DOWNSTREAM: return arena_printf(a, "%s downstream", c->down_what ? c->down_what : "what runs");
  case BOUND_CORES: return arena_printf(a, "the %d cores", c->cores);
  case BOUND_SERIAL: return "one thread";
  }
  return "?";
}

const ProfileOp *profile_find(const Profile *p, const char *name) {
  for (int i = 0; p && name && i < p->nops; i++)
    if (!strcmp(p->ops[i].name, name)) return &p->ops[i];
  return NULL;
}
