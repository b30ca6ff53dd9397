/* order.c: the ordered drivers: the thread of an operator with several input streams (a Merge, a
 * fan-in) takes the next item from the heads of its input queues in the order the plan chose, one
 * function per order (docs/design.md, "Ordering strategies"):
 *   - roundrobin: the channels in the Split's order; no per-tuple metadata;
 *   - seq: the tuple whose sequence number is the next expected;
 *   - seqpulse: the smallest head, once every channel has one or has promised with a pulse;
 *   - fan-in (not a Merge): the same by source position (src), ties by the order the streams are
 *     listed, so fan-in is deterministic;
 *   - time-ordered fan-in (<input order="time">): by event time, ties by the order listed.
 * Merges remember what each channel last promised, so a channel with nothing queued does not hold
 * back tuples it can no longer precede. The slots' cur batches and the merge state are the
 * thread's own: the steps run without the group's mu, which head takes only to take the next batch
 * from a queue (once per batch, not per item); order_run holds it across a step only to wait for
 * input (flow.c's lock rules). */
#include "exec_priv.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The head item of slot s, or NULL when its batch is used up and its queue is empty. Takes g->mu
 * to take from the queue unless the caller holds it already (g->order_locked). */
static Item *head(Group *g, int s) {
  for (;;) {
    Batch *b = g->cur[s];
    if (b && b->next < b->n) return &b->items[b->next];
    if (b) {
      batch_release(b);
      g->cur[s] = NULL;
    }
    Edge *e = g->entry->in[s];
    if (g->order_locked)
      b = queue_take(e->q);
    else {
      pthread_mutex_lock(&g->mu);
      b = queue_take(e->q);
      pthread_mutex_unlock(&g->mu);
    }
    if (!b) return NULL;
    g->cur[s] = b;
  }
}

/* A pulse (seq S, src P) the Split sent after its tuples 0..S-1, at position P: once a merge that
 * delivers in seq order (roundrobin, seq) has delivered those (`delivered` >= S), every tuple still
 * to come has a src of at least P, so a fan-in below may hear it (a region that drops everything
 * would otherwise hold the fan-in back for good). */
static void pulse_progress(Group *g, const Item *pulse, uint64_t delivered) {
  if (pulse->seq <= delivered && pulse->src > g->progress) g->progress = pulse->src;
}

static void pop(Group *g, int s) {
  const Item *it = &g->cur[s]->items[g->cur[s]->next];
  if (it->kind != ITEM_FINAL) {
    g->floor[s] = g->by_src ? it->src : it->seq;
    g->floor_known[s] = true;
  }
  if (item_has_tuple(it->kind)) g->taken++;
  g->cur[s]->next++;
  g->last_slot = s;
}

/* Order of items of equal key: progress and pulses first (they only promise), then what the
 * channels emitted at the punctuation of that position (ITEM_KEYED), then window punctuation and
 * ticks (which leave after what was emitted for them), then tuples (the tuple of that position
 * comes after the punctuation before it); FINAL sorts after everything. */
static int kind_rank(ItemKind k) {
  switch (k) {
  case ITEM_PROGRESS:
  case ITEM_PULSE: return 0;
  case ITEM_KEYED: return 1;
  case ITEM_WINDOW:
  case ITEM_TICK:
  case ITEM_BARRIER: return 2;
  case ITEM_TUPLE: return 3;
  default: return 4;
  }
}

static bool item_before(const Item *a, int sa, const Item *b, int sb, bool by_src) {
  if (a->kind == ITEM_FINAL || b->kind == ITEM_FINAL) {
    if (a->kind != b->kind) return b->kind == ITEM_FINAL;
    return sa < sb;
  }
  uint64_t ka = by_src ? a->src : a->seq, kb = by_src ? b->src : b->seq;
  if (ka != kb) return ka < kb;
  /* a checkpoint barrier at position P comes before everything of position P, on every input */
  if (by_src && (a->kind == ITEM_BARRIER) != (b->kind == ITEM_BARRIER)) return a->kind == ITEM_BARRIER;
  if (by_src) return sa < sb; /* fan-in: ties go by the order the streams are listed */
  int ra = kind_rank(a->kind), rb = kind_rank(b->kind);
  if (ra != rb) return ra < rb;
  if (a->kind == ITEM_KEYED && b->kind == ITEM_KEYED) {
    int c = sortkey_cmp(a->key, a->keylen, b->key, b->keylen); /* two tuples emitted at one punctuation */
    if (c) return c < 0;
  }
  return sa < sb;
}

typedef enum Step { STEP_WAIT, STEP_DELIVER, STEP_DONE, STEP_AGAIN, STEP_FAIL } Step;

/* The channels of a region broke the promise their operators' models made (a Custom operator
 * that says selectivity one but drops tuples, say): the order cannot be restored. */
static Step broken_promise(Group *g, const char *fmt, unsigned long long seq) {
  snprintf(g->fail, sizeof g->fail, fmt, g->entry->op->name, seq);
  return STEP_FAIL;
}

/* roundrobin: the channels' tuples in turn, as the Split dealt them;
 * window punctuation and the end leave once every channel has them at its head. Promises (pulses,
 * progress) are dropped. */
static Step step_roundrobin(Group *g, Item *out) {
  int W = g->entry->nslots;
  Item *h = head(g, g->rr_next);
  if (!h) {
    /* while waiting for the next channel, drop the promises queued on the others: a round-robin
     * merge does not need them, and they must not fill a queue the Split needs */
    for (int s = 0; s < W; s++) {
      Item *o = s == g->rr_next ? NULL : head(g, s);
      if (o && (o->kind == ITEM_PULSE || o->kind == ITEM_PROGRESS)) {
        if (o->kind == ITEM_PULSE) pulse_progress(g, o, g->taken);
        pop(g, s);
        return STEP_AGAIN;
      }
    }
    return STEP_WAIT;
  }
  if (h->kind == ITEM_TUPLE) {
    *out = *h;
    pop(g, g->rr_next);
    g->rr_next = split_rr_channel(g->taken, W); /* the Split's runs, in turn */
    return STEP_DELIVER;
  }
  if (h->kind == ITEM_PULSE || h->kind == ITEM_PROGRESS) {
    if (h->kind == ITEM_PULSE) pulse_progress(g, h, g->taken);
    pop(g, g->rr_next);
    return STEP_AGAIN;
  }
  /* window, tick, barrier or final: every channel must have it at its head */
  for (int s = 0; s < W; s++) {
    Item *o = head(g, s);
    if (!o) return STEP_WAIT;
    if (o->kind == ITEM_PULSE || o->kind == ITEM_PROGRESS) {
      if (o->kind == ITEM_PULSE) pulse_progress(g, o, g->taken);
      pop(g, s);
      return STEP_AGAIN;
    }
    if (o->kind != h->kind || (o->kind == ITEM_BARRIER && o->ckpt != h->ckpt) ||
        (o->kind == ITEM_TICK && o->tick != h->tick))
      return broken_promise(g, "merge '%s': channels reached the end or a window at different tuples (%llu); "
                            "an operator in the region emitted more or fewer tuples than its model says", 0);
  }
  *out = *h;
  for (int s = 0; s < W; s++) pop(g, s);
  return STEP_DELIVER;
}

/* seq: the tuple whose sequence number is the next expected, as soon as it is at some head; window
 * punctuation, ticks and the end leave once every channel has them at its head. */
static Step step_seq(Group *g, Item *out) {
  int W = g->entry->nslots;
  bool all = true;
  int windows = 0, finals = 0, barriers = 0, ticks = 0;
  for (int s = 0; s < W; s++) {
    Item *h = head(g, s);
    if (!h) {
      all = false;
      continue;
    }
    if (h->kind == ITEM_PULSE || h->kind == ITEM_PROGRESS) {
      if (h->kind == ITEM_PULSE) pulse_progress(g, h, g->next_seq);
      pop(g, s);
      return STEP_AGAIN;
    }
    if (h->kind == ITEM_TUPLE && h->seq == g->next_seq) {
      *out = *h;
      pop(g, s);
      g->next_seq++;
      return STEP_DELIVER;
    }
    if (h->kind == ITEM_WINDOW) windows++;
    if (h->kind == ITEM_TICK) ticks++;
    if (h->kind == ITEM_FINAL) finals++;
    if (h->kind == ITEM_BARRIER) barriers++;
  }
  if (!all) return STEP_WAIT;
  for (int s = 1; barriers == W && s < W; s++)
    if (head(g, s)->ckpt != head(g, 0)->ckpt) barriers = 0; /* cannot happen: one Split sent them */
  for (int s = 1; ticks == W && s < W; s++)
    if (head(g, s)->tick != head(g, 0)->tick)
      return broken_promise(g, "merge '%s': the channels' ticks at %llu differ", head(g, 0)->seq);
  if (windows == W || finals == W || barriers == W || ticks == W) {
    *out = *head(g, 0);
    if ((ticks == W || windows == W) && out->seq >= g->next_seq) g->next_seq = out->seq + 1; /* it has a position */
    for (int s = 0; s < W; s++) pop(g, s);
    return STEP_DELIVER;
  }
  return broken_promise(g, "merge '%s': tuple %llu never arrived; an operator in the region dropped a tuple "
                        "although its model says selectivity one", (unsigned long long)g->next_seq);
}

/* A checkpoint barrier is the smallest head of a seqpulse merge or a fan-in, and every input has a
 * head (a fan-in: or some input's head shows it missed, below): it leaves once every input has it
 * at its head. In a region every channel has it (one Split
 * sent it down all of them). A fan-in's inputs come from different sources, each of which put the
 * barrier before the first tuple of the checkpoint's position; a source that had already passed
 * that position did not, and an input whose head is past the barrier (a later tuple, a later
 * barrier) will never deliver it: the checkpoint cannot complete, and the barrier is dropped
 * wherever it waits (ckpt.c finds the checkpoint incomplete). An input at its end whose barrier
 * never came sent everything before its sender's part of the checkpoint: that sender finished
 * without taking the barrier, so its part is a finished snapshot (ckpt.c, "operators that
 * finished"), and the input counts as aligned, its end staying at its head. One whose barrier came
 * and was dropped here does not: what followed it was taken in. (Positions cannot tell the two
 * apart: a time-ordered fan-in above renumbers its stream, so an input's items after its barrier
 * can come before another input's barrier.) */
static Step align_barrier(Group *g, const Item *bh, Item *out) {
  int W = g->entry->nslots;
  bool missed = false, absent = false;
  for (int s = 0; s < W; s++) {
    Item *h = head(g, s);
    if (!h) { /* (a fan-in only: step_smallest) */
      absent = true;
      continue;
    }
    if (h->kind == ITEM_BARRIER && h->ckpt == bh->ckpt) continue;
    if (h->kind == ITEM_FINAL && g->by_src && g->slot_ckpt[s] < bh->ckpt) continue;
    if (h->kind == ITEM_PULSE || h->kind == ITEM_PROGRESS) {
      pop(g, s);
      return STEP_AGAIN;
    }
    if (!g->by_src)
      return broken_promise(g, "merge '%s': checkpoint barrier at %llu missing on a channel", bh->seq);
    missed = true;
  }
  if (absent && !missed) return STEP_WAIT;
  uint64_t id = bh->ckpt;
  if (!missed) *out = *bh;
  else g->ck_missed = id; /* (what it takes in next is past the cut: ckpt_missed) */
  for (int s = 0; s < W; s++) {
    Item *h = head(g, s);
    if (h && h->kind == ITEM_BARRIER && h->ckpt == id) {
      g->slot_ckpt[s] = id;
      pop(g, s);
    }
  }
  return missed ? STEP_AGAIN : STEP_DELIVER;
}

/* seqpulse (by seq) and fan-in (by src, DRIVE_SRC): the smallest head, once every slot has one, or
 * once every slot without one is known not to send anything smaller (its last pulse, progress or
 * tuple says so). */
static Step step_smallest(Group *g, Item *out) {
  Node *n = g->entry;
  int W = n->nslots;
  bool by_src = g->driver == DRIVE_SRC;
  int best = -1;
  Item *bh = NULL;
  bool missing = false;
  for (int s = 0; s < W; s++) {
    Item *h = head(g, s);
    if (!h) {
      missing = true;
      continue;
    }
    if (!bh || item_before(h, s, bh, best, by_src)) {
      best = s;
      bh = h;
    }
  }
  if (!bh) return STEP_WAIT;
  if (missing) {
    /* a fan-in's barrier with an input that has nothing yet: when another input shows the
     * checkpoint missed, it is dropped now. Waiting for the empty one could be for ever: its
     * producer may also feed an input held behind this barrier, and be waiting for room there
     * (a barrier dropped upstream, at a fan-in both come from, reaches neither) */
    if (bh->kind == ITEM_BARRIER && by_src) return align_barrier(g, bh, out);
    if (bh->kind == ITEM_FINAL || bh->kind == ITEM_WINDOW || bh->kind == ITEM_TICK || bh->kind == ITEM_BARRIER)
      return STEP_WAIT;
    uint64_t key = by_src ? bh->src : bh->seq;
    for (int s = 0; s < W; s++) {
      if (g->cur[s] && g->cur[s]->next < g->cur[s]->n) continue;
      if (!g->floor_known[s]) return STEP_WAIT;
      /* seq numbers are unique, so a floor equal to the key is no obstacle; src positions repeat
       * (FlatMap), and on a tie the lower slot goes first. But a channel that is at the position of
       * a tuple emitted at a punctuation may still emit more there, with smaller keys. */
      bool ok = by_src ? key < g->floor[s] || (key == g->floor[s] && best < s)
              : bh->kind == ITEM_KEYED ? key < g->floor[s]
                                       : key <= g->floor[s];
      if (!ok) return STEP_WAIT;
    }
  }
  switch (bh->kind) {
  case ITEM_PULSE:
    /* every input is past it: a fan-in downstream may hear how far this merge has got */
    if (!by_src && bh->src > g->progress) g->progress = bh->src;
    pop(g, best);
    /* a shuffle Merge passes the promise on to its channel: every input is past it. Its src is
     * one channel's (a Split's last tuple's, while its seq may be a barrier's or a tick's after
     * it), and may be behind a tuple delivered from another channel with a smaller seq: the
     * stream's seq and src grow together (one Split numbered it), so the promise is that tuple's
     * src at least, and an executor downstream holds the edge to it (remote.c) */
    if (n->channel_merge && bh->seq > g->next_seq) {
      g->next_seq = bh->seq;
      *out = *bh;
      if (out->src < g->out_src) out->src = g->out_src;
      return STEP_DELIVER;
    }
    return STEP_AGAIN;
  case ITEM_PROGRESS:
    pop(g, best);
    return STEP_AGAIN;
  case ITEM_TUPLE:
  case ITEM_KEYED:
    *out = *bh;
    pop(g, best);
    g->out_src = out->src;
    return STEP_DELIVER;
  case ITEM_BARRIER:
    return align_barrier(g, bh, out);
  case ITEM_WINDOW:
  case ITEM_TICK:
  case ITEM_FINAL:
    if (by_src && bh->kind == ITEM_TICK) { /* each input's ticks count: clock.c takes the smallest */
      *out = *bh;
      pop(g, best);
      return STEP_DELIVER;
    }
    for (int s = 0; s < W; s++) {
      Item *h = head(g, s);
      if (h->kind != bh->kind || (h->kind == ITEM_TICK && h->tick != bh->tick)) {
        if (h->kind == ITEM_PULSE || h->kind == ITEM_PROGRESS) {
          pop(g, s);
          return STEP_AGAIN;
        }
        if (bh->kind == ITEM_FINAL) return STEP_WAIT; /* cannot happen: FINAL sorts last */
        if (by_src) {
          /* fan-in: a window on one input is delivered as it comes (inputs are independent) */
          *out = *bh;
          pop(g, best);
          return STEP_DELIVER;
        }
        return broken_promise(g, bh->kind == ITEM_TICK ? "merge '%s': tick %llu missing on a channel"
                                                       : "merge '%s': window punctuation %llu missing on a channel",
                              bh->seq);
      }
    }
    *out = *bh;
    if (bh->kind == ITEM_FINAL) /* nothing follows it: it is as far as the farthest input */
      for (int s = 0; s < W; s++) {
        Item *h = head(g, s);
        if (h->src > out->src) out->src = h->src;
        if (h->seq > out->seq) out->seq = h->seq;
      }
    for (int s = 0; s < W; s++) pop(g, s);
    return STEP_DELIVER;
  }
  return STEP_WAIT;
}

/* The key a time-ordered fan-in orders a head by: a tuple's event time, a tick's value. */
static int64_t time_key(const Group *g, int s, const Item *h) {
  return h->kind == ITEM_TICK ? h->tick : h->t->v[g->time_attr[s]].i;
}

/* ---- checkpoints of a time-ordered fan-in ----
 * A barrier cannot be aligned here: the items after one input's barrier may come, in time order,
 * before items that precede another input's. So the cut is Chandy and Lamport's: the entry's
 * snapshot is taken when the first input's barrier comes (ckpt_time_cut), the barrier goes on
 * downstream at once, and from every other input the items taken until its own barrier are
 * recorded: they came before the checkpoint's position on their input (their source will not send
 * them again) and after the entry's snapshot. Once every input's barrier came, the record goes into
 * the entry's snapshot (ckpt_time_write), and a restore puts each input's recorded items in front
 * of what its source sends again (order_time_restore): the same items at each head as at the cut,
 * so the merge goes on in the same order. An input at its end (or at its final tick, with its end
 * behind it) is past the cut like one whose barrier came: what sent it finished and sends nothing
 * again (ckpt.c, "operators that finished").
 * A newer checkpoint's barrier first means the checkpoint cannot complete: what was recorded is
 * dropped. */

/* Records item it, taken from slot s, when a checkpoint is in progress and s's barrier has not come:
 * its kind, then a tuple's values or a tick's time. */
static void tck_record(Group *g, int s, const Item *it) {
  if (!g->tck_id || g->tck_seen[s]) return;
  Buf *b = &g->tck_log[s];
  snap_u64(b, (uint64_t)(item_has_tuple(it->kind) ? ITEM_TUPLE : it->kind)); /* (a tuple's place is the merge's) */
  if (it->kind == ITEM_TICK) {
    snap_i64(b, it->tick);
  } else if (item_has_tuple(it->kind)) {
    snap_u64(b, (uint64_t)it->t->n);
    for (int i = 0; i < it->t->n; i++) snap_value(b, &it->t->v[i]);
  }
  g->tck_nlog[s]++;
}

static void tck_drop(Group *g) {
  g->tck_id = 0;
}

/* Slot s is past the cut of the checkpoint in progress: its barrier came, or its end (what sent it
 * finished: ckpt.c, "operators that finished"; it has nothing more to record). Once every slot is,
 * the record goes into the entry's snapshot. 0, or -1 after a failure. */
static int tck_slot_done(Group *g, int s) {
  int W = g->entry->nslots;
  g->tck_seen[s] = true;
  for (int k = 0; k < W; k++)
    if (!g->tck_seen[k]) return 0;
  Buf log; /* every input's record: their number, then per input its items' number and the items */
  buf_init(&log);
  snap_u64(&log, (uint64_t)W);
  for (int k = 0; k < W; k++) {
    snap_u64(&log, g->tck_nlog[k]);
    buf_append(&log, g->tck_log[k].p, g->tck_log[k].n);
  }
  int rc = ckpt_time_write(g->entry, &log);
  buf_release(&log);
  tck_drop(g);
  return rc;
}

/* The item after slot s's head (there is one), or NULL when it has not come yet. A batch in the
 * queue stays where it is until this thread takes it. */
static const Item *after_head(Group *g, int s) {
  Batch *b = g->cur[s];
  if (b->next + 1 < b->n) return &b->items[b->next + 1];
  Queue *q = g->entry->in[s]->q;
  const Item *it = NULL;
  if (!g->order_locked) pthread_mutex_lock(&g->mu);
  if (q->count > 0 && q->ring[q->head]->next < q->ring[q->head]->n) it = &q->ring[q->head]->items[q->ring[q->head]->next];
  if (!g->order_locked) pthread_mutex_unlock(&g->mu);
  return it;
}

/* Whether slot s, its head h, is at its end while a checkpoint is being cut and s's barrier has
 * not come: its end, or its final tick with its end after it (the final tick waits at the head
 * until every input reaches it, which is when the merge ends). The final tick is recorded now, for
 * it will be taken after the cut and its sender does not send it again. */
static bool tck_at_end(Group *g, int s, const Item *h) {
  if (!g->tck_id || g->tck_seen[s]) return false;
  if (h->kind == ITEM_FINAL) return true;
  if (h->kind != ITEM_TICK || h->tick != TICK_FINAL) return false;
  const Item *next = after_head(g, s);
  if (!next || next->kind != ITEM_FINAL) return false;
  tck_record(g, s, h);
  return true;
}

/* Barrier *h at slot s's head. STEP_DELIVER with the barrier in *out when it is the first of its
 * checkpoint (the cut), STEP_AGAIN when it was taken otherwise, STEP_FAIL after a failure. */
static Step time_barrier(Group *g, int s, Item *out) {
  Item b = *head(g, s);
  int W = g->entry->nslots;
  pop(g, s);
  if (!g->exec->ck || b.ckpt < g->tck_id || (b.ckpt <= g->tck_last && b.ckpt != g->tck_id)) return STEP_AGAIN;
  if (b.ckpt == g->tck_id) return tck_slot_done(g, s) < 0 ? STEP_FAIL : STEP_AGAIN;
  /* the first barrier of a newer checkpoint (one in progress cannot complete then) */
  if (g->tck_id) g->ck_missed = g->tck_id; /* (ckpt_missed) */
  if (!g->tck_seen) {
    Arena *a = g->exec->arena;
    g->tck_seen = arena_alloc(a, sizeof(bool) * (size_t)W);
    g->tck_log = arena_alloc(a, sizeof(Buf) * (size_t)W);
    g->tck_nlog = arena_alloc(a, sizeof(uint64_t) * (size_t)W);
    for (int k = 0; k < W; k++) buf_init(&g->tck_log[k]);
    buf_init(&g->tck_state);
  }
  for (int k = 0; k < W; k++) {
    g->tck_seen[k] = false;
    buf_reset(&g->tck_log[k]);
    g->tck_nlog[k] = 0;
  }
  g->tck_seen[s] = true;
  g->tck_id = g->tck_last = b.ckpt;
  /* its place in the merged stream: after every item delivered, before every later one (the
   * checkpoint's position stays in ckpt_pos, for the snapshots). With P(K) as its src it would
   * stand behind or ahead of the renumbered items around it, and a by-position fan-in below would
   * order it wrongly, and pulses and progress after it promise wrongly */
  b.seq = b.src = g->out_pos;
  g->tck_barrier = b;
  g->tck_pos = g->out_pos;
  if (ckpt_time_cut(g->entry, b) < 0) {
    snprintf(g->fail, sizeof g->fail, "operator '%s': its snapshot failed", g->entry->op->name);
    return STEP_FAIL;
  }
  *out = b; /* (an input at its end is past the cut: step_time counts it) */
  return STEP_DELIVER;
}

/* time (DRIVE_TIME, <input order="time">): once every input that has not ended has a tuple, a tick
 * or its end at its head, the head with the smallest key (time_key); on equal keys a tick before a
 * tuple, then the input listed first. One input's items keep their order. What it delivers gets
 * the merged stream's own positions (out_pos), since its inputs' positions interleave. Window
 * punctuation goes as it comes; promises are dropped (only a tuple, a tick or the end decides);
 * checkpoint barriers cut as above. */
static Step step_time(Group *g, Item *out) {
  int W = g->entry->nslots;
  int best = -1;
  Item *bh = NULL;
  int64_t bk = 0;
  for (int s = 0; s < W; s++) {
    Item *h = head(g, s);
    if (!h) return STEP_WAIT;
    if (h->kind == ITEM_PULSE || h->kind == ITEM_PROGRESS) {
      pop(g, s);
      return STEP_AGAIN;
    }
    if (h->kind == ITEM_BARRIER) return time_barrier(g, s, out);
    if (tck_at_end(g, s, h)) return tck_slot_done(g, s) < 0 ? STEP_FAIL : STEP_AGAIN; /* past the cut */
    if (h->kind == ITEM_WINDOW) {
      *out = *h;
      tck_record(g, s, h);
      pop(g, s);
      out->seq = out->src = g->out_pos;
      return STEP_DELIVER;
    }
    if (h->kind == ITEM_FINAL) continue;
    int64_t k = time_key(g, s, h);
    if (!bh || k < bk || (k == bk && h->kind == ITEM_TICK && bh->kind != ITEM_TICK)) {
      best = s;
      bh = h;
      bk = k;
    }
  }
  if (!bh) { /* every input ended */
    *out = *head(g, 0);
    out->seq = out->src = g->out_pos;
    for (int s = 0; s < W; s++) pop(g, s);
    return STEP_DELIVER;
  }
  *out = *bh;
  tck_record(g, best, bh);
  pop(g, best);
  out->seq = out->src = g->out_pos;
  if (out->kind == ITEM_TUPLE) g->out_pos++;
  return STEP_DELIVER;
}

/* The schema of the stream of slot s of n. */
static const Schema *slot_schema(const Node *n, int s) {
  for (int p = 0; p < n->op->ninputs; p++) {
    if (s < n->op->inputs[p].nstreams) return n->op->inputs[p].streams[s]->schema;
    s -= n->op->inputs[p].nstreams;
  }
  return NULL;
}

void order_time_free(Group *g) {
  if (!g->tck_seen) return;
  for (int s = 0; s < g->entry->nslots; s++) buf_release(&g->tck_log[s]);
  buf_release(&g->tck_state);
}

int order_time_restore(Group *g, SnapIn *in) {
  size_t n;
  const void *p = snap_get_bytes(in, &n);
  if (in->bad) return -1;
  SnapIn log = { .p = p, .n = n };
  int W = g->entry->nslots;
  if (snap_get_u64(&log) != (uint64_t)W) return -1;
  for (int s = 0; s < W && !log.bad; s++) {
    uint64_t k = snap_get_u64(&log);
    if (k > log.n) return -1; /* (every item takes a byte at least) */
    Batch *b = batch_new((int)k + 1);
    for (uint64_t i = 0; i < k && !log.bad; i++) {
      Item *it = &b->items[b->n];
      *it = (Item){ .kind = (ItemKind)snap_get_u64(&log) };
      if (it->kind == ITEM_TICK) {
        it->tick = snap_get_i64(&log);
      } else if (it->kind == ITEM_TUPLE) {
        uint64_t nv = snap_get_u64(&log);
        if (nv > log.n) {
          log.bad = true;
          break;
        }
        const Schema *sch = slot_schema(g->entry, s);
        if (!sch || nv != (uint64_t)sch->nattrs) {
          log.bad = true;
          break;
        }
        Value *vals = calloc((size_t)nv + 1, sizeof *vals);
        if (!vals) sf_die("out of memory");
        for (uint64_t v = 0; v < nv; v++) {
          snap_get_value(&log, &vals[v]);
          if (vals[v].type != sch->attrs[v].type) log.bad = true; /* (a tampered record) */
        }
        if (!log.bad) it->t = tuple_new(vals, (int)nv);
        free(vals);
        if (log.bad) break;
      } else if (it->kind != ITEM_WINDOW) {
        log.bad = true;
        break;
      }
      b->n++;
    }
    if (log.bad) {
      batch_free(b);
      return -1;
    }
    batch_free(g->cur[s]);
    g->cur[s] = b;
  }
  return snap_done(&log) ? 0 : -1;
}

/* roundrobin's step for a run: the tuples at the head of the channel whose turn it is, up to the end
 * of the Split's run and the batch, taken as pop takes them one by one (0: none there; order_step
 * then looks, takes the next batch, or waits). */
static int rr_take(Group *g, Item *out, int max) {
  int s = g->rr_next;
  Batch *b = g->cur[s];
  if (!b) return 0;
  int left = split_rr_left(g->taken);
  if (left > max) left = max;
  if (left > b->n - b->next) left = b->n - b->next;
  const Item *it = &b->items[b->next];
  int k = 0;
  while (k < left && it[k].kind == ITEM_TUPLE) k++;
  if (k == 0) return 0;
  memcpy(out, it, sizeof(Item) * (size_t)k);
  b->next += k;
  g->taken += (uint64_t)k;
  g->floor[s] = it[k - 1].seq;
  g->floor_known[s] = true;
  g->last_slot = s;
  g->rr_next = split_rr_channel(g->taken, g->entry->nslots);
  return k;
}

/* Decides the next action of an ordered driver (g's thread, holding g->mu or not: see head). On
 * STEP_DELIVER *out is the item to deliver and it has been consumed from its slot. */
static Step order_step(Group *g, Item *out) {
  if (g->entry->finished) return STEP_DONE;
  switch (g->driver) {
  case DRIVE_RR: return step_roundrobin(g, out);
  case DRIVE_SEQ: return step_seq(g, out);
  case DRIVE_TIME: return step_time(g, out);
  default: return step_smallest(g, out); /* DRIVE_SEQPULSE, DRIVE_SRC */
  }
}

/* ---- merge wait (--metrics) ----
 * A Merge stalls while it holds an item it cannot deliver yet because the next in its order may
 * come from a channel that has nothing at its head. The time from the moment its driver finds that
 * where it would wait (its thread about to block, or a hosted Merge's pump about to return) to the
 * moment it looks again (its thread woken, the next pump) goes to the Merge and to each channel that
 * had nothing. A hosted Merge is pumped when a channel has handed on a batch, as a thread of its own
 * is woken then, so the figure is the same in both modes. Two clock reads per wait, none per tuple;
 * a Merge whose channels all have nothing is idle, not stalled, and is not timed. */

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void add_ns(atomic_ullong *c, uint64_t d) { /* one writer: the driver */
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + d, memory_order_relaxed);
}

/* The stall being timed, if any, ends now. */
static void wait_close(Group *g, int64_t now) {
  if (!g->wait_since) return;
  uint64_t d = now > g->wait_since ? (uint64_t)(now - g->wait_since) : 0;
  g->wait_since = 0;
  add_ns(&g->wait_ns, d);
  for (int s = 0; s < g->entry->nslots; s++)
    if (g->wait_on[s]) add_ns(&g->slot_wait_ns[s], d);
}

/* The driver found that it must wait (STEP_WAIT): a stall is timed from now when some channel has
 * an item at its head and another has none (head takes g->mu as usual). */
static void wait_open(Group *g) {
  int64_t now = mono_ns();
  wait_close(g, now);
  bool held = false, missing = false;
  for (int s = 0; s < g->entry->nslots; s++) {
    bool has = head(g, s) != NULL;
    g->wait_on[s] = !has;
    held |= has;
    missing |= !has;
  }
  if (held && missing) g->wait_since = now;
}

/* A run order_run collected: delivered (or released when the job is stopping). The run's first
 * src is how far the thread has got while it is delivered, and a promise a pulse made meanwhile
 * (pulse_progress, about tuples up to the run's) holds again afterwards. */
static int deliver_collected(Group *g, Item *run, int nrun, int slot) {
  if (exec_stopping(g->exec)) {
    for (int i = 0; i < nrun; i++) tuple_unref(run[i].t);
    return -1;
  }
  uint64_t promised = g->progress;
  g->progress = run[0].src;
  int rc = deliver_run(g->entry, slot, run, nrun);
  if (promised > g->progress) g->progress = promised;
  return rc;
}

/* Delivers items in order until the end (0), a failure (-1) or, when !wait, the moment it would
 * wait for input (1: a hosted group's pump, group.c); with wait it waits instead. */
int order_advance(Group *g, bool wait) {
  Exec *x = g->exec;
  Node *n = g->entry;
  /* consecutive tuples of one port collect into a run for an operator with process_run; the run
   * is delivered before anything else happens: another item, a wait, the end */
  bool runs = n->inst.impl->process_run != NULL;
  bool any_port = n->op->kind == KIND_MERGE; /* a Merge's ports are its channels: one run spans them */
  Item run[RUN_MAX];
  int nrun = 0, run_slot = 0, run_port = 0;
  if (g->wait_since) wait_close(g, mono_ns()); /* a hosted Merge's pump: it looks again */
  for (;;) {
    Item it;
    if (g->ck_missed) { /* before anything more is delivered, the end above all (ckpt_finished) */
      ckpt_missed(n, g->ck_missed);
      g->ck_missed = 0;
    }
    if (runs && g->driver == DRIVE_RR && nrun < RUN_MAX) {
      int k = rr_take(g, run + nrun, RUN_MAX - nrun);
      if (k > 0) {
        if (nrun == 0) {
          run_slot = g->last_slot;
          run_port = n->slot_port && !any_port ? n->slot_port[run_slot] : 0;
        }
        nrun += k;
        continue;
      }
    }
    /* without the lock while the heads have items; a step that would wait is looked at again under
     * the lock, so a batch queued since (queue_put signals wake under mu) is not missed */
    Step st = order_step(g, &it);
    if (st == STEP_AGAIN) continue;
    if (runs && st == STEP_DELIVER && it.kind == ITEM_TUPLE) {
      int port = n->slot_port && !any_port ? n->slot_port[g->last_slot] : 0;
      if (nrun == RUN_MAX || (nrun > 0 && port != run_port)) {
        if (deliver_collected(g, run, nrun, run_slot) < 0) {
          tuple_unref(it.t);
          return -1;
        }
        nrun = 0;
      }
      if (nrun == 0) {
        run_slot = g->last_slot;
        run_port = port;
      }
      run[nrun++] = it;
      continue;
    }
    if (nrun > 0) {
      int rc = deliver_collected(g, run, nrun, run_slot);
      nrun = 0;
      if (rc < 0) {
        if (st == STEP_DELIVER && item_has_tuple(it.kind)) tuple_unref(it.t);
        return -1;
      }
      if (st == STEP_WAIT) continue; /* look again: the run took its time */
    }
    if (st == STEP_WAIT && !wait) {
      if (g->wait_timed) wait_open(g);
      return exec_stopping(x) ? -1 : 1;
    }
    if (st == STEP_WAIT) {
      pthread_mutex_lock(&g->mu);
      g->order_locked = true;
      while ((st = order_step(g, &it)) == STEP_WAIT && !exec_stopping(x)) {
        pthread_mutex_unlock(&g->mu);
        bool clear = group_before_wait(g);
        pthread_mutex_lock(&g->mu);
        st = order_step(g, &it);
        if (st != STEP_WAIT) break;
        group_wake_producers(g);
        if (g->wait_timed) wait_open(g);
        if (clear)
          timed_wait(&g->wake, &g->mu);
        else
          timed_wait_ms(&g->wake, &g->mu, 1); /* some batch still waits for room: look again soon */
      }
      if (g->wait_since) wait_close(g, mono_ns());
      g->order_locked = false;
      pthread_mutex_unlock(&g->mu);
    }
    if (exec_stopping(x)) {
      if (st == STEP_DELIVER && item_has_tuple(it.kind)) tuple_unref(it.t); /* consumed, not delivered */
      return -1;
    }
    if (st == STEP_DONE) return 0;
    if (st == STEP_AGAIN) continue;
    if (st == STEP_FAIL) {
      exec_fail(x, "%s", g->fail);
      return -1;
    }
    /* a barrier's src is the checkpoint's position, not one of the stream's once a time-ordered
     * fan-in upstream renumbered it (as deliver() in flow.c keeps it out of cur_src): a pulse sent
     * after it (a Split's, rt_progress) would promise a position behind later tuples */
    if (it.kind != ITEM_BARRIER) g->progress = it.src;
    if (it.kind == ITEM_FINAL) n->finals_left = 1;
    if (node_deliver(n, item_has_tuple(it.kind) || it.kind == ITEM_TICK ? g->last_slot : 0, &it) < 0) return -1;
    if (it.kind == ITEM_FINAL) return 0;
  }
}

int order_run(Group *g) {
  return order_advance(g, true);
}
