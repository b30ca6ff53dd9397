/* clock.c: event time in the runtime (docs/language.md, "Event time"): the clocks of sources that
 * declare `time`, the ticks they emit, and the tick of a fan-in.
 *
 *  - A source's clock is the largest `time` of its tuples so far. A tuple that moves it to or past
 *    a multiple of the period P it had not reached is preceded by a tick ⌊clock / P⌋·P (rounded
 *    toward −infinity): the first tuple always is. The final tick (TICK_FINAL, +infinity) precedes
 *    the source's final punctuation. The clock hooks into rt_emit and rt_emit_run, so every source
 *    kind gets it without code of its own; a run is cut where a tick falls inside it. A tuple at
 *    time INT64_MAX fails the job: that time is the final tick's.
 *  - Ticks only rise: an operator drops a tick not above its current one before its kind sees it
 *    (a peer on another host cannot make one go back either).
 *  - A fan-in fed by a source with event time keeps each input's latest tick; its own tick is the
 *    smallest of those of the inputs that have not ended, delivered when it rises.
 *  - A checkpoint keeps, in front of the operator's own snapshot (clock_snapshot), the current tick
 *    of every operator ticks can reach, a source's last tick and a fan-in's ticks, so a restored
 *    job emits the same ticks and every operator knows the tick it had: a source's snapshot is
 *    taken before the tuple that crosses the checkpoint's position, and so before its tick.
 * All of a node's clock state is its thread's. */
#include "exec_priv.h"

#include <string.h>

struct Clock {
  int slot;        /* the time attribute's index in the output schema */
  int64_t period;  /* P */
  int64_t last;    /* the last tick emitted (TICK_NONE: none yet) */
};

/* Whether a source upstream of op declares an event time (only then can ticks reach op), from its
 * producers' nodes, which a topological order has planned already. */
static bool fed_by_time(const Exec *x, const Op *op) {
  if (op->ninputs == 0) return op_param(op, "time") != NULL;
  for (int p = 0; p < op->ninputs; p++)
    for (int k = 0; k < op->inputs[p].nstreams; k++) {
      const Stream *s = op->inputs[p].streams[k];
      if (s && s->producer && x->nodes[s->producer->index].timed) return true;
    }
  return false;
}

static void plan_node(Exec *x, Node *n) {
  Op *op = n->op;
  atomic_init(&n->inst.cur_tick, TICK_NONE);
  if (n->nslots == 0 && op_param(op, "time") && n->inst.out_schema) {
    Clock *c = arena_alloc(x->arena, sizeof *c);
    c->slot = schema_find_attr(n->inst.out_schema, op_param(op, "time"));
    c->period = source_tick(x->g, op); /* its `tick`, or the default sf-xform's explain shows */
    c->last = TICK_NONE;
    if (c->slot < 0 || n->inst.out_schema->attrs[c->slot].type != TYPE_INT || c->period <= 0)
      sf_die("operator '%s': unchecked event time", op->name); /* the checker refuses such a graph */
    n->clock = c;
  }
  n->timed = fed_by_time(x, op);
  /* (a Merge, and a Join replica, whose inputs come from one Split, gets each tick once from its
   * driver, when every input has it) */
  if (n->nslots > 1 && op->kind != KIND_MERGE && !(op->kind == KIND_JOIN && op->channel >= 0) && n->timed) {
    n->slot_tick = arena_alloc(x->arena, sizeof *n->slot_tick * (size_t)n->nslots);
    for (int s = 0; s < n->nslots; s++) n->slot_tick[s] = TICK_NONE;
  }
}

void clock_plan(Exec *x) {
  for (int t = 0; t < x->g->nops; t++) plan_node(x, &x->nodes[x->g->order[t]->index]);
}

/* The tick a clock at time t has reached, ⌊t / P⌋·P; TICK_NONE when no multiple of P at or below
 * t is an int64. */
static int64_t tick_of(int64_t t, int64_t p) {
  int64_t q = t / p;
  if (t % p != 0 && t < 0) q--;
  int64_t r;
  if (__builtin_mul_overflow(q, p, &r)) return TICK_NONE;
  return r;
}

static int emit_tick(Node *n, int64_t t) {
  for (int p = 0; p < n->op->noutputs; p++)
    if (rt_emit_tick(&n->inst, p, t) < 0) return -1;
  return 0;
}

/* A tuple at time INT64_MAX cannot be told from the end of the stream (its tick, with a period
 * dividing INT64_MAX, would be TICK_FINAL, and every window would take it for late): the source
 * refuses it, whatever its kind or `onerror` (the row parsed; its time is out of range). */
static int refuse_end_time(Node *n, const Tuple *t) {
  char tuple[512];
  tuple_describe(t, n->inst.out_schema, tuple, sizeof tuple);
  return rt_fail(&n->inst, "tuple %s: time '%s' = %lld stands for the end of the stream; the largest "
                 "time a tuple may have is %lld", tuple, n->inst.out_schema->attrs[n->clock->slot].name,
                 (long long)INT64_MAX, (long long)(INT64_MAX - 1));
}

/* The tick due before a tuple of time t, or TICK_NONE. */
static inline int64_t due(const Clock *c, int64_t t) {
  int64_t k = tick_of(t, c->period);
  return k > c->last ? k : TICK_NONE;
}

int clock_source_tuple(Node *n, const Tuple *t) {
  Clock *c = n->clock;
  if (__builtin_expect(t->v[c->slot].i == INT64_MAX, 0)) return refuse_end_time(n, t);
  int64_t k = due(c, t->v[c->slot].i);
  if (k == TICK_NONE) return 0;
  c->last = k;
  atomic_store_explicit(&n->inst.cur_tick, k, memory_order_relaxed);
  return emit_tick(n, k);
}

int clock_source_run(Node *n, int port, Item *items, int k) {
  Clock *c = n->clock;
  int from = 0;
  for (int i = 0; i < k; i++) {
    if (__builtin_expect(items[i].t->v[c->slot].i == INT64_MAX, 0)) { /* the tuples before it go first */
      int rc = i > from ? emit_run_items(&n->inst, port, items + from, i - from) : 0;
      if (rc == 0) refuse_end_time(n, items[i].t);
      for (int j = i; j < k; j++) tuple_unref(items[j].t);
      return -1;
    }
    int64_t tk = due(c, items[i].t->v[c->slot].i);
    if (tk == TICK_NONE) continue;
    if (i > from && emit_run_items(&n->inst, port, items + from, i - from) < 0) {
      for (int j = i; j < k; j++) tuple_unref(items[j].t);
      return -1;
    }
    from = i;
    c->last = tk;
    atomic_store_explicit(&n->inst.cur_tick, tk, memory_order_relaxed);
    n->inst.cur_seq = items[i].seq;
    n->inst.cur_src = items[i].src;
    if (emit_tick(n, tk) < 0) {
      for (int j = i; j < k; j++) tuple_unref(items[j].t);
      return -1;
    }
  }
  return emit_run_items(&n->inst, port, items + from, k - from);
}

int clock_source_end(Node *n) {
  n->clock->last = TICK_FINAL;
  atomic_store_explicit(&n->inst.cur_tick, TICK_FINAL, memory_order_relaxed);
  return emit_tick(n, TICK_FINAL);
}

/* The operator's tick rises to t: its kind sees it, or it goes on. */
static int tick_to(Node *n, int port, const Item *it, int64_t t) {
  OpInst *op = &n->inst;
  if (t <= atomic_load_explicit(&op->cur_tick, memory_order_relaxed)) return 0;
  int rc = 0;
  if (op->impl->tick) { /* (which still sees the tick before this one as the current one) */
    rc = op->impl->tick(op, port, t);
  } else {
    Item out = *it;
    out.tick = t;
    for (int p = 0; rc == 0 && p < n->op->noutputs; p++) rc = rt_emit_item(op, p, &out);
  }
  atomic_store_explicit(&op->cur_tick, t, memory_order_relaxed);
  return rc;
}

/* The smallest tick of the inputs that have not ended (an ended one counts as TICK_FINAL). */
static int64_t fanin_tick(const Node *n) {
  int64_t m = TICK_FINAL;
  for (int s = 0; s < n->nslots; s++)
    if (n->slot_tick[s] < m) m = n->slot_tick[s];
  return m;
}

int clock_deliver(Node *n, int slot, const Item *it) {
  int port = n->slot_port ? n->slot_port[slot] : 0;
  if (!n->slot_tick) return tick_to(n, port, it, it->tick);
  if (it->tick > n->slot_tick[slot]) n->slot_tick[slot] = it->tick;
  return tick_to(n, port, it, fanin_tick(n));
}

void clock_reset(Node *n) {
  atomic_store_explicit(&n->inst.cur_tick, TICK_NONE, memory_order_relaxed);
  if (n->clock) n->clock->last = TICK_NONE;
  for (int s = 0; n->slot_tick && s < n->nslots; s++) n->slot_tick[s] = TICK_NONE;
}

bool clock_kept(const Node *n) {
  return n->timed;
}

void clock_snapshot(const Node *n, Buf *out) {
  snap_i64(out, atomic_load_explicit(&n->inst.cur_tick, memory_order_relaxed));
  if (n->clock) snap_i64(out, n->clock->last);
  if (n->slot_tick) {
    snap_u64(out, (uint64_t)n->nslots);
    for (int s = 0; s < n->nslots; s++) snap_i64(out, n->slot_tick[s]);
  }
}

int clock_restore(Node *n, SnapIn *in) {
  int64_t cur = snap_get_i64(in);
  if (n->clock) n->clock->last = snap_get_i64(in);
  if (n->slot_tick) {
    if (snap_get_u64(in) != (uint64_t)n->nslots) return -1;
    for (int s = 0; s < n->nslots; s++) n->slot_tick[s] = snap_get_i64(in);
  }
  if (in->bad) return -1;
  atomic_store_explicit(&n->inst.cur_tick, cur, memory_order_relaxed);
  return 0;
}
