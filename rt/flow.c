/* flow.c: how items travel between operators. rt_emit appends an item to each output edge's
 * pending batch (or, inside one thread, calls the consumer at once: node_deliver); a batch goes on
 * when full, at punctuation or when it has waited BATCH_DELAY_NS, into its consumer's queue
 * (queue.c) or to the transport (remote.c); node_deliver hands an item to an operator's callbacks.
 * Edges into a fan-in carry progress items, so the consumer never waits for an idle input.
 *
 * Before a thread waits (for input, or for room in a full queue), its Splits send pulses and its
 * partial batches go on wherever there is room; a thread never waits twice (what it emits while
 * waiting only collects), so no consumer waits for a batch or a promise that a wait holds back.
 *
 * Locks. No thread ever holds two of the executor's locks at once:
 *   - a Group's mu protects the queues feeding that group (their ring state; a batch taken from
 *     a ring, a slot's cur batch, is the consumer thread's own) and goes with its wake and
 *     not_full conditions; a thread holding it calls nothing that takes a lock
 *     (exec_stopping() is two atomic loads) and never waits but on those conditions;
 *   - fail_mu protects the first failure's message and is released before anything else happens.
 * exec_fail takes each group's mu in turn (wake_all) and then the transport's lock (remote_abort,
 * transport_cancel), so it is called holding no lock at all: from operator callbacks, the drivers
 * after unlocking, remote.c's threads (never inside the transport's lock) and the main thread,
 * which turns a caught signal into the failure (exec_note_signal). */
#include "exec_priv.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t mono_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Pushes a batch; waits while the queue is full. A thread never waits holding a batch another
 * consumer may need: before waiting, its Splits send pulses (group_idle) and its other partial
 * batches are handed on without waiting (group_try_flush, retried every millisecond while some
 * queue is full too); meanwhile the thread is "stalled": whatever it emits only collects, so it
 * never waits twice. Returns -1 when the job is stopping (the batch is freed). */
static int push_batch(Exec *x, Queue *q, Batch *b, Group *pusher, Edge *via) {
  Group *o = q->owner;
  pthread_mutex_lock(&o->mu);
  int64_t full_since = q->count == q->cap ? mono_now_ns() : 0; /* only a wait is timed */
  if (q->count == q->cap && pusher) {
    pthread_mutex_unlock(&o->mu);
    if (via) via->pushing = true;
    bool was_stalled = pusher->stalled;
    pusher->stalled = true;
    group_idle(pusher);
    bool clear = group_try_flush(pusher, via);
    group_wake_consumers(pusher);
    pthread_mutex_lock(&o->mu);
    while (q->count == q->cap && !exec_stopping(x)) {
      if (o->hosted) { /* no thread of its own drains it: this one may have to (group_pump) */
        pthread_mutex_unlock(&o->mu);
        group_pump(o, false);
        pthread_mutex_lock(&o->mu);
        if (q->count < q->cap) break;
        timed_wait_ms(&q->not_full, &o->mu, 1);
        continue;
      }
      if (clear) {
        timed_wait(&q->not_full, &o->mu);
        continue;
      }
      timed_wait_ms(&q->not_full, &o->mu, 1);
      pthread_mutex_unlock(&o->mu);
      clear = group_try_flush(pusher, via);
      pthread_mutex_lock(&o->mu);
    }
    pusher->stalled = was_stalled;
  }
  while (q->count == q->cap && !exec_stopping(x)) timed_wait(&q->not_full, &o->mu);
  if (full_since) q->blocked_ns += (uint64_t)(mono_now_ns() - full_since);
  if (via) via->pushing = false;
  if (exec_stopping(x)) {
    pthread_mutex_unlock(&o->mu);
    batch_free(b);
    return -1;
  }
  queue_put(q, b, via ? via->limit : INT_MAX);
  pthread_mutex_unlock(&o->mu);
  return 0;
}

int edge_receive(Exec *x, Edge *e, const Item *items, int n) {
  Batch *b = batch_new(n > 0 ? n : 1);
  memcpy(b->items, items, sizeof(Item) * (size_t)n);
  b->n = n;
  return push_batch(x, e->q, b, NULL, NULL);
}

/* ---- pushing items out ---- */

/* Everything this group emits from now on has a src at least this. */
static uint64_t group_progress(const Group *g) {
  return g->source ? g->source->inst.cur_src : g->progress;
}

/* Items are passed by pointer and copied member by member on the per-tuple path: an Item built
 * with 8-byte stores and read back whole (an argument passed by value, a struct copy) costs a
 * store-forwarding stall on x86, which was most of rt_emit's and node_deliver's time. */
static inline void item_copy(Item *d, const Item *s) {
  d->kind = s->kind;
  d->keylen = s->keylen;
  d->seq = s->seq;
  d->src = s->src;
  d->born = s->born;
  d->t = s->t;
}

/* Appends to the edge's pending batch, growing it past its limit if need be (only while a batch of
 * this edge waits for room, or for one progress item). */
static void pending_append(Edge *e, const Item *it) {
  if (!e->pending) e->pending = batch_new(e->limit + 1);
  if (e->pending->n == e->pending->cap) e->pending = batch_grow(e->pending, 2 * e->pending->cap);
  item_copy(&e->pending->items[e->pending->n++], it);
}

/* An edge into a fan-in says how far its producer has got, unless it already did or has ended. */
static void add_progress(Edge *e) {
  if (!e->feeds_fanin || e->final_queued) return;
  uint64_t p = group_progress(e->producer);
  if (e->sent_any && p <= e->sent_src) return;
  pending_append(e, &(Item){ .kind = ITEM_PROGRESS, .seq = p, .src = p });
  e->sent_src = p;
  e->sent_any = true;
}

static int edge_flush(Edge *e) {
  Exec *x = e->producer->exec;
  if (e->closed) return 0;
  if (e->pushing) return 0; /* an earlier batch of this edge waits for room: it must go first */
  add_progress(e);
  if (!e->pending || e->pending->n == 0) return 0;
  Batch *b = e->pending;
  e->pending = NULL;
  bool last = e->final_queued; /* FINAL is the last item of b */
  int rc;
  if (e->kind == EDGE_REMOTE) {
    rc = remote_send(e->tx, b->items, b->n);
    batch_free(b); /* the encoder copied the tuples: our references go */
  } else {
    rc = push_batch(x, e->q, b, e->producer, e);
  }
  if (last) e->closed = true;
  return rc;
}

/* Hands on e's batch (with its progress) if its queue has room now; never waits. A remote edge
 * flushes as always (its transport waits for credit only). */
static void edge_try_flush(Edge *e) {
  if (e->closed || e->pushing) return;
  if (e->kind == EDGE_REMOTE) {
    edge_flush(e);
    return;
  }
  add_progress(e);
  if (!e->pending || e->pending->n == 0) return;
  Queue *q = e->q;
  Group *o = q->owner;
  pthread_mutex_lock(&o->mu);
  if (q->count < q->cap) {
    queue_put(q, e->pending, INT_MAX); /* a partial batch, before a wait: its consumer wakes */
    e->pending = NULL;
    if (e->final_queued) e->closed = true;
  }
  pthread_mutex_unlock(&o->mu);
}

/* edge_try_flush on every output but except; true when none holds a batch any more. */
bool group_try_flush(Group *g, Edge *except) {
  bool clear = true;
  for (int i = 0; i < g->outs.n; i++) {
    Edge *e = g->outs.items[i];
    if (e == except) continue;
    edge_try_flush(e);
    if (e->pending && e->pending->n > 0 && !e->closed && !e->pushing) clear = false;
  }
  return clear;
}

void group_flush(Group *g, Edge *except) {
  for (int i = 0; i < g->outs.n; i++) {
    Edge *e = g->outs.items[i];
    if (e != except && edge_flush(e) < 0) return;
  }
}

static int64_t coarse_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int edge_push(Edge *e, const Item *it) {
  if (e->kind == EDGE_DIRECT) return node_deliver(e->to, e->slot, it);
  if (e->closed) sf_die("item after the end of stream '%s'", e->stream->name);
  if (!e->pending) e->pending = batch_new(e->limit + 1);
  /* the clock is read for the first item of a batch and every 16th, not for every tuple */
  int64_t now = e->pending->n % 16 == 0 ? coarse_ns() : e->pending_since;
  if (e->pending->n == 0) e->pending_since = now;
  pending_append(e, it);
  if (it->src > e->sent_src || !e->sent_any) e->sent_src = it->src;
  e->sent_any = true;
  if (it->kind == ITEM_FINAL) e->final_queued = true;
  if (e->pushing || e->producer->stalled) return 0; /* handed on once the wait is over */
  if (it->kind == ITEM_FINAL) return edge_flush(e);
  /* a batch closes when full, at punctuation, or when it has waited long enough (a slow input
   * must not hold results back) */
  if (e->pending->n >= e->limit || it->kind == ITEM_WINDOW || it->kind == ITEM_BARRIER ||
      now - e->pending_since > BATCH_DELAY_NS)
    return edge_flush(e);
  return 0;
}

/* Per-operator counters have one writer (the operator's thread) and are only read by the stats
 * printer: a relaxed load and store, no locked add on the per-tuple path. */
static inline void count_n(atomic_ullong *c, int n) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + (unsigned long long)n,
                        memory_order_relaxed);
}

static inline void count_one(atomic_ullong *c) {
  count_n(c, 1);
}

static int emit_item(OpInst *op, int port, const Item *it) {
  Node *n = op->exec_data;
  Exec *x = op->exec;
  if (atomic_load_explicit(&x->failed, memory_order_relaxed)) {
    if (item_has_tuple(it->kind)) tuple_unref(it->t);
    return -1;
  }
  sf_assert(port >= 0 && port < n->op->noutputs);
  PtrVec *edges = &n->outs[port];
  bool has_tuple = item_has_tuple(it->kind);
  if (has_tuple) count_one(&op->n_out);
  if (edges->n == 0) {
    if (has_tuple) tuple_unref(it->t);
    return 0;
  }
  for (int i = 0; i < edges->n; i++) {
    if (has_tuple && i + 1 < edges->n) tuple_ref(it->t);
    if (edge_push(edges->items[i], it) < 0) {
      for (int j = i + 1; j < edges->n; j++)
        if (has_tuple) tuple_unref(it->t);
      return -1;
    }
  }
  return 0;
}

int rt_emit_item(OpInst *op, int port, const Item *it) {
  return emit_item(op, port, it);
}

/* The group's thread is about to wait (for input, for room, or pacing a source): the idle hooks
 * run once (a Split sends a pulse if it sent tuples since its last one: docs/design.md,
 * "Ordering strategies", seqpulse). */
void group_idle(Group *g) {
  if (g->in_idle) return;
  g->in_idle = true;
  bool was_stalled = g->stalled;
  g->stalled = true; /* what the hooks emit only collects: a hook never waits */
  for (int i = 0; i < g->idlers.n; i++) {
    Node *n = g->idlers.items[i];
    if (n->finished) continue;
    const char *was = fatal_enter(n->label);
    n->inst.impl->idle(&n->inst);
    fatal_leave(was);
  }
  g->stalled = was_stalled;
  g->in_idle = false;
}

/* Before the thread waits for input: pulses, then every partial batch that has room goes on.
 * A batch for a full queue stays (that consumer has work); true when nothing stayed. */
bool group_before_wait(Group *g) {
  group_idle(g);
  bool clear = group_try_flush(g, NULL);
  group_wake_consumers(g);
  group_pump_hosts(g, true);
  return clear;
}

uint64_t rt_progress(const OpInst *op) {
  const Node *n = op->exec_data;
  uint64_t p = n && n->group ? group_progress(n->group) : 0;
  return p > op->cur_src ? p : op->cur_src;
}

void rt_idle(OpInst *op) {
  Node *n = op->exec_data;
  if (n->group) group_before_wait(n->group);
}

/* node_deliver of a tuple, from its parts (rt_emit's short way on a direct edge). */
static inline int deliver_tuple(Node *n, int slot, uint64_t seq, uint64_t src, int64_t born, Tuple *t) {
  if (n->prof && prof_due(n->prof)) return prof_deliver_tuple(n, slot, seq, src, born, t); /* --stats: timed (stats.c) */
  const char *was = fatal_enter(n->label);
  OpInst *op = &n->inst;
  op->cur_seq = seq;
  op->cur_src = src;
  op->cur_born = born;
  count_one(&op->n_in);
  if (n->latency && born) latency_record(n->latency, born);
  int rc = op->impl->process(op, n->slot_port ? n->slot_port[slot] : 0, t);
  arena_reset(op->scratch);
  fatal_leave(was);
  return rc;
}

/* A source's tuple is born now (CLOCK_MONOTONIC ns: latency at the sinks, Item.born). */
static int64_t born_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Releases the tuples of items[0..n). */
static void unref_items(Item *items, int n) {
  tuple_unref_items(items, n);
}

int deliver_run(Node *n, int slot, Item *items, int k) {
  OpInst *op = &n->inst;
  if (!op->impl->process_run) { /* one process call per tuple */
    for (int i = 0; i < k; i++)
      if (deliver_tuple(n, slot, items[i].seq, items[i].src, items[i].born, items[i].t) < 0) {
        unref_items(items + i + 1, k - i - 1);
        return -1;
      }
    return 0;
  }
  if (n->prof && prof_due(n->prof)) return prof_deliver_run(n, slot, items, k); /* --stats: timed (stats.c) */
  return deliver_run_now(n, slot, items, k);
}

int deliver_run_now(Node *n, int slot, Item *items, int k) {
  OpInst *op = &n->inst;
  const char *was = fatal_enter(n->label);
  op->cur_seq = items[0].seq;
  op->cur_src = items[0].src;
  op->cur_born = items[0].born;
  count_n(&op->n_in, k);
  if (n->latency)
    for (int i = 0; i < k; i++)
      if (items[i].born) latency_record(n->latency, items[i].born);
  int rc = op->impl->process_run(op, n->slot_port ? n->slot_port[slot] : 0, items, k);
  arena_reset(op->scratch);
  fatal_leave(was);
  return rc;
}

/* edge_push for a run of tuples: all of them appended to the pending batch (which may grow past
 * its limit by less than a run), which then goes on when full or old, as after one item. All go in
 * before any wait for room: what the thread's idle hooks emit during the wait (a Split's pulse
 * promising every tuple of the run) follows the whole run. */
/* Appends items[0..k) to e's pending batch (made already; grown if need be) and notes how far
 * the edge has got; returns the time read for the batch's age. */
static inline int64_t pending_append_run(Edge *e, const Item *items, int k) {
  Batch *b = e->pending;
  if (b->n + k > b->cap) e->pending = b = batch_grow(b, b->n + k > 2 * b->cap ? b->n + k : 2 * b->cap);
  int64_t now = coarse_ns();
  if (b->n == 0) e->pending_since = now;
  uint64_t hi = e->sent_any ? e->sent_src : items[0].src;
  Item *d = b->items + b->n;
  for (int j = 0; j < k; j++) {
    item_copy(&d[j], &items[j]);
    if (items[j].src > hi) hi = items[j].src;
  }
  b->n += k;
  e->sent_src = hi;
  e->sent_any = true;
  return now;
}

static int edge_push_run(Edge *e, const Item *items, int k) {
  if (e->closed) sf_die("item after the end of stream '%s'", e->stream->name);
  if (!e->pending) e->pending = batch_new(e->limit + 1 > k ? e->limit + 1 : k);
  int64_t now = pending_append_run(e, items, k);
  if (e->pushing || e->producer->stalled) return 0; /* handed on once the wait is over */
  if (e->pending->n >= e->limit || now - e->pending_since > BATCH_DELAY_NS) return edge_flush(e);
  return 0;
}

/* edge_push_run for an edge to another host: the receiver holds a message to at most
 * 2 x --batch + 64 items (remote.c), so the run goes in pieces that fill the pending batch up to
 * the edge's limit (--batch items), each full batch sent before the next piece, and the rest stays
 * pending as after edge_push. While the thread waits (stalled) nothing is sent, as in edge_push.
 * Returns -1 when a send failed; the tuples not appended by then are released. */
static int edge_push_run_remote(Edge *e, const Item *items, int k) {
  while (k > 0) {
    if (e->closed) sf_die("item after the end of stream '%s'", e->stream->name);
    if (!e->pending) e->pending = batch_new(e->limit + 1);
    Batch *b = e->pending;
    bool hold = e->pushing || e->producer->stalled;
    int m = hold ? k : e->limit - b->n;
    if (m < 1) m = 1; /* a batch grown past its limit while the thread waited: it goes now */
    if (m > k) m = k;
    int64_t now = pending_append_run(e, items, m);
    b = e->pending;
    items += m;
    k -= m;
    if (hold) continue; /* handed on once the wait is over */
    if ((b->n >= e->limit || now - e->pending_since > BATCH_DELAY_NS) && edge_flush(e) < 0) {
      unref_items((Item *)items, k);
      return -1;
    }
  }
  return 0;
}

int rt_emit_keyed_copy(OpInst *op, int port, Tuple *t, const void *key, size_t len) {
  const unsigned char *kp;
  Tuple *k = tuple_new_keyed(t->v, t->n, key, len, &kp);
  tuple_unref(t);
  return rt_emit_keyed(op, port, k, kp, (uint32_t)len);
}

/* An operator handling a keyed tuple (cur_key) emits t in that tuple's place: a copy of t with
 * its key, so that a region's Merge still orders it among what the punctuation made the other
 * replicas emit. */
static __attribute__((noinline)) int emit_in_key_place(OpInst *op, int port, Tuple *t) {
  return rt_emit_keyed_copy(op, port, t, op->cur_key, op->cur_keylen);
}

int rt_emit_run(OpInst *op, int port, Item *items, int k) {
  if (k <= 0) return 0;
  Node *n = op->exec_data;
  if (__builtin_expect(op->cur_key != NULL, 0)) {
    for (int i = 0; i < k; i++)
      if (emit_in_key_place(op, port, items[i].t) < 0) {
        unref_items(items + i + 1, k - i - 1);
        return -1;
      }
    return 0;
  }
  if (atomic_load_explicit(&op->exec->failed, memory_order_relaxed)) {
    unref_items(items, k);
    return -1;
  }
  sf_assert(port >= 0 && port < n->op->noutputs);
  if (n->nslots == 0) { /* a source (rt_run_room said it may): its tuples are born now */
    sf_assert(!op->exec->ck);
    if (op->exec->o->stats) {
      int64_t born = born_now();
      for (int i = 0; i < k; i++) items[i].born = born;
    }
    if (n->clock) return clock_source_run(n, port, items, k); /* cut where its ticks go */
  }
  return emit_run_items(op, port, items, k);
}

int emit_run_items(OpInst *op, int port, Item *items, int k) {
  if (k <= 0) return 0;
  Node *n = op->exec_data;
  Edge *e = n->direct ? n->direct[port] : NULL;
  if (e) {
    count_n(&op->n_out, k);
    return deliver_run(e->to, e->slot, items, k);
  }
  PtrVec *edges = &n->outs[port];
  /* one edge into a queue: the whole run into its pending batch; one edge to another host: the
   * run in pieces of at most the limit the receiver holds its batches to (edge_push_run_remote).
   * Several edges (a fan-out) go item by item, each item to every edge in turn, as a wait for
   * room on one edge must find the others holding every item before it (flow.c's rule before a
   * wait) */
  if (edges->n == 1 && ((Edge *)edges->items[0])->kind != EDGE_DIRECT) {
    Edge *e1 = edges->items[0];
    count_n(&op->n_out, k);
    return e1->kind == EDGE_QUEUE ? edge_push_run(e1, items, k) : edge_push_run_remote(e1, items, k);
  }
  for (int i = 0; i < k; i++)
    if (emit_item(op, port, &items[i]) < 0) {
      unref_items(items + i + 1, k - i - 1);
      return -1;
    }
  return 0;
}

int rt_run_room(const OpInst *op) {
  const Node *n = op->exec_data;
  return n->nslots == 0 && op->exec->ck ? 1 : RUN_MAX;
}

int rt_emit(OpInst *op, int port, Tuple *t) {
  Node *n = op->exec_data;
  if (__builtin_expect(op->cur_key != NULL, 0)) return emit_in_key_place(op, port, t);
  if (n->nslots == 0 && ((op->exec->ck && ckpt_source_emit(n) < 0) ||    /* a source may owe a barrier, */
                          (n->clock && clock_source_tuple(n, t) < 0))) { /* and, with event time, a tick */
    tuple_unref(t);
    return -1;
  }
  int64_t born = op->cur_born;
  if (n->nslots == 0 && op->exec->o->stats) born = born_now(); /* a source: the tuple is born (latency at the sinks) */
  /* (a node made outside plan.c, as the unit tests make them, has no direct table) */
  Edge *e = n->direct && port >= 0 && port < n->op->noutputs ? n->direct[port] : NULL; /* else emit_item says */
  if (e) { /* the port's one edge, to an operator of this thread: emit_item and node_deliver's work */
    if (atomic_load_explicit(&op->exec->failed, memory_order_relaxed)) {
      tuple_unref(t);
      return -1;
    }
    count_one(&op->n_out);
    return deliver_tuple(e->to, e->slot, op->cur_seq, op->cur_src, born, t);
  }
  Item it;
  it.kind = ITEM_TUPLE;
  it.keylen = 0;
  it.seq = op->cur_seq;
  it.src = op->cur_src;
  it.born = born;
  it.t = t;
  return emit_item(op, port, &it);
}

int rt_emit_keyed(OpInst *op, int port, Tuple *t, const unsigned char *key, uint32_t len) {
  return emit_item(op, port, &(Item){ .kind = ITEM_KEYED, .keylen = len, .seq = op->cur_seq, .src = op->cur_src,
                                     .key = key, .t = t });
}

int rt_emit_nth(OpInst *op, int port, Tuple *t, uint64_t i) {
  if (op->op->channel < 0 && !op->cur_key) return rt_emit(op, port, t); /* not in a channel: in order */
  Buf b;
  buf_init(&b);
  if (op->cur_key) buf_append(&b, (const char *)op->cur_key, op->cur_keylen); /* the input's place first */
  sortkey_int(&b, (int64_t)i);
  int rc = rt_emit_keyed_copy(op, port, t, b.p, b.n);
  buf_release(&b);
  return rc;
}

int rt_emit_tick(OpInst *op, int port, int64_t t) {
  return emit_item(op, port, &(Item){ .kind = ITEM_TICK, .seq = op->cur_seq, .src = op->cur_src, .tick = t });
}

static int forward_all(Node *n, const Item *it) {
  for (int p = 0; p < n->op->noutputs; p++)
    if (emit_item(&n->inst, p, it) < 0) return -1;
  return 0;
}

/* ---- delivering an item to an operator ---- */

/* A tuple reached n, which the checkpoint restored says had finished, so its inputs had too: the
 * checkpoint cannot be one sf-exec wrote. */
static int restored_finished_input(Node *n) {
  return rt_fail(&n->inst, "the checkpoint restored says it had finished, yet a tuple reached it: the checkpoint "
                 "directory was changed");
}

/* node_deliver's work, with fatal.c's slot naming n. */
static int deliver(Node *n, int slot, const Item *it) {
  OpInst *op = &n->inst;
  const OpKindImpl *impl = op->impl;
  int port = n->slot_port ? n->slot_port[slot] : 0;
  op->cur_seq = it->seq;
  /* a barrier carries the checkpoint's position, not the stream's after a time-ordered fan-in
   * (order.c, step_time renumbers its items): a pulse sent after it (a Split's) promises from the
   * position of the item before it, which an executor downstream holds the next one to (remote.c) */
  if (it->kind != ITEM_BARRIER) op->cur_src = it->src;
  op->cur_born = it->kind == ITEM_TICK ? 0 : it->born;
  switch (it->kind) {
  case ITEM_TUPLE: {
    if (n->restored_finished) return restored_finished_input(n);
    count_one(&op->n_in);
    if (n->latency && it->born) latency_record(n->latency, it->born);
    int rc = impl->process(op, port, it->t);
    arena_reset(op->scratch);
    return rc;
  }
  case ITEM_PULSE:
    if (impl->pulse) return impl->pulse(op, port, it->seq);
    return forward_all(n, it);
  case ITEM_WINDOW:
    if (impl->window) return impl->window(op, port);
    return forward_all(n, it);
  case ITEM_KEYED: { /* a tuple to every kind but Split and Merge, which keep its place (cur_key) */
    if (n->restored_finished) return restored_finished_input(n);
    count_one(&op->n_in);
    op->cur_born = 0;
    op->cur_key = it->key;
    op->cur_keylen = it->keylen;
    Tuple *keeper = tuple_ref(it->t); /* the key lives in it: the kind may release it first */
    int rc = impl->process(op, port, it->t);
    op->cur_key = NULL;
    op->cur_keylen = 0;
    tuple_unref(keeper);
    arena_reset(op->scratch);
    return rc;
  }
  case ITEM_TICK:
    return clock_deliver(n, slot, it);
  case ITEM_PROGRESS:
    return 0;
  case ITEM_BARRIER:
    if (ckpt_snapshot(n, *it) < 0) return -1;
    if (impl->barrier) return impl->barrier(op, *it);
    return forward_all(n, it);
  case ITEM_FINAL:
    if (--n->finals_left > 0) return 0;
    if (!n->restored_finished) { /* (restored finished: its end was handled before the checkpoint) */
      if (n->clock && clock_source_end(n) < 0) return -1; /* the final tick goes first */
      if (impl->final && impl->final(op) < 0) return -1;
    }
    n->finished = true;
    if (forward_all(n, it) < 0) return -1;
    return ckpt_finished(n);
  }
  return 0;
}

int node_deliver(Node *n, int slot, const Item *it) {
  if (n->prof && prof_due(n->prof)) return prof_deliver(n, slot, it); /* --stats: timed (stats.c) */
  return node_deliver_now(n, slot, it);
}

int node_deliver_now(Node *n, int slot, const Item *it) {
  const char *was = fatal_enter(n->label);
  int rc = deliver(n, slot, it);
  fatal_leave(was);
  return rc;
}
