/* split.c: the Split operator sf-xform puts at the entry of a parallel region (and at the end of
 * each channel of a shuffle). It sends each tuple to one output (round-robin, or by the hash of
 * the key attributes, the same on every host: its key group's channel, value.h), assigns sequence numbers or keeps them, sends a
 * pulse down every output every `pulse` tuples, and sends window punctuation and the end of
 * stream to every output. Also here: rt_owns_key, which keys a replica below a hash Split owns
 * (the same hash, asked by a restore at another width). */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

/* A hash Split's run is dealt in pieces of this many tuples: their channels first, then the stretches. */
enum { RUN_CHANNELS_MAX = 256 };

typedef struct Split {
  bool hash;         /* strategy hash (else round-robin) */
  int *keys;         /* key attribute indexes (of input port 0) */
  int nkeys;
  int *keys2;        /* two inputs (a Join's sides): the key attributes of port 1 */
  int nports;        /* input ports: 1, or 2 (the outputs of port p are p * width .. p * width + width - 1) */
  int nout;          /* outputs: nports * width */
  bool assign;       /* sequence="assign" (else keep) */
  uint64_t pulse;    /* period in tuples, 0: none */
  uint64_t next_seq; /* assign: the next sequence number */
  uint64_t high;     /* one past the highest seq sent so far */
  uint64_t since;    /* tuples since the last pulse */
  uint64_t pulsed;   /* seq of the last pulse sent (0: none) */
  uint64_t pulsed_src; /* src of the last pulse sent (not in snapshots: 0 pulses again at once) */
  uint64_t rr;       /* round-robin position */
  int width;         /* channels */
} Split;

static int split_open(OpInst *op) {
  Split *s = calloc(1, sizeof *s);
  op->state = s;
  s->nports = op->op->ninputs == 2 ? 2 : 1;
  s->nout = op->op->noutputs;
  s->width = s->nout / s->nports;
  s->hash = !strcmp(rt_param(op, "strategy"), "hash");
  const char *seq = rt_param(op, "sequence");
  s->assign = !seq || !strcmp(seq, "assign");
  const char *pulse = rt_param(op, "pulse");
  int64_t every = 0;
  if (pulse && number_read(pulse, strlen(pulse), 0, INT64_MAX, &every) != NUM_OK)
    return rt_fail(op, "parameter 'pulse' must be a non-negative integer, got '%s'", pulse);
  s->pulse = (uint64_t)every;
  if (s->hash) {
    Arena *a = arena_new();
    const char **names = names_split(a, rt_param(op, "keys"), &s->nkeys);
    s->keys = calloc((size_t)s->nkeys + 1, sizeof(int));
    for (int i = 0; i < s->nkeys; i++) s->keys[i] = schema_find_attr(op->in_schema, names[i]);
    if (s->nports == 2) {
      const Stream *in2 = op->op->inputs[1].streams[0];
      int n2;
      const char **names2 = names_split(a, rt_param(op, "keys2"), &n2);
      if (n2 != s->nkeys) {
        arena_free(a);
        return rt_fail(op, "parameters 'keys' and 'keys2' name %d and %d attributes", s->nkeys, n2);
      }
      s->keys2 = calloc((size_t)n2 + 1, sizeof(int));
      for (int i = 0; i < n2; i++) s->keys2[i] = schema_find_attr(in2->schema, names2[i]);
    }
    arena_free(a);
  }
  return 0;
}

/* The src a pulse carries: every tuple numbered from the pulse on will have at least that src.
 * Assigning, that is how far this thread has got (the tuples it numbers later come later), not
 * only the src of the last tuple the Split saw: when everything before the Split is dropped (a
 * Filter region, say), the promise still travels through this region's Merge to a fan-in below,
 * which would otherwise wait for this input while its other inputs' queues fill and stop the
 * source they share. Keeping the upstream numbering (a shuffle), later tuples of smaller numbers
 * may still come through other channels: only what the numbered items said holds. */
static uint64_t pulse_src(OpInst *op, const Split *s) {
  return s->assign ? rt_progress(op) : op->cur_src;
}

static int send_pulses(OpInst *op, Split *s, uint64_t seq) {
  uint64_t src = pulse_src(op, s);
  for (int p = 0; p < s->nout; p++)
    if (rt_emit_item(op, p, &(Item){ .kind = ITEM_PULSE, .seq = seq, .src = src }) < 0) return -1;
  s->since = 0;
  s->pulsed_src = src;
  return 0;
}

/* The channel of t by the hash of its key attributes. */
static inline int hash_channel(const Split *s, const Tuple *t) {
  uint64_t h = SF_HASH_SEED;
  for (int i = 0; i < s->nkeys; i++) h = value_hash(&t->v[s->keys[i]], h);
  return sf_key_channel(h, s->width);
}

/* The same for a tuple of port 1 of a two-input Split: its keys2, hashed alike. */
static inline int hash_channel2(const Split *s, const Tuple *t) {
  uint64_t h = SF_HASH_SEED;
  for (int i = 0; i < s->nkeys; i++) h = value_hash(&t->v[s->keys2[i]], h);
  return sf_key_channel(h, s->width);
}

/* A tuple numbered seq went out: what the next pulse may promise. A Split that numbers its tuples
 * knows the next one's number; one that keeps them (a shuffle) may pass more tuples of this one's
 * position (several outputs of one input, selectivity `many', or what a punctuation made an
 * operator emit), so its pulses promise no more than that position. */
static inline void note_sent(Split *s, uint64_t seq) {
  s->high = s->assign ? seq + 1 : seq > s->high ? seq : s->high;
}

static int split_process(OpInst *op, int port, Tuple *t) {
  Split *s = op->state;
  int out;
  if (s->nports == 2) {
    out = port == 1 ? s->width + hash_channel2(s, t) : hash_channel(s, t);
  } else if (s->hash) {
    out = hash_channel(s, t);
  } else {
    out = split_rr_channel(s->rr++, s->width);
  }
  uint64_t seq = s->assign ? s->next_seq++ : op->cur_seq;
  note_sent(s, seq);
  if (op->cur_key && !s->assign) /* a shuffle passes on a tuple emitted at a punctuation with its place */
    return rt_emit_item(op, out, &(Item){ .kind = ITEM_KEYED, .keylen = op->cur_keylen, .seq = seq, .src = op->cur_src,
                                          .key = op->cur_key, .t = t });
  if (rt_emit_item(op, out, &(Item){ .kind = ITEM_TUPLE, .seq = seq, .src = op->cur_src, .born = op->cur_born, .t = t }) < 0) return -1;
  if (s->pulse && ++s->since >= s->pulse) return send_pulses(op, s, s->high);
  return 0;
}

/* How many tuples may go before the period's next pulse is due (at least 1). */
static inline uint64_t pulse_room(const Split *s) {
  if (!s->pulse) return UINT64_MAX;
  return s->since < s->pulse ? s->pulse - s->since : 1;
}

/* Emits items[i..i+k) (numbered already) down output `out` as one run, counted as sent: a wait
 * inside its emit pulses past it, from its last position (the src of such a pulse must not go back
 * behind tuples of the run already on their way), as split_process would after its last tuple.
 * Then the period's pulse when it is due. On a failure releases items[i+k..n) too. */
static int emit_stretch(OpInst *op, Split *s, int out, Item *items, int i, int k, int n) {
  note_sent(s, items[i + k - 1].seq);
  op->cur_seq = items[i + k - 1].seq;
  op->cur_src = items[i + k - 1].src;
  op->cur_born = items[i + k - 1].born;
  int rc = rt_emit_run(op, out, items + i, k);
  if (rc == 0 && s->pulse && (s->since += (uint64_t)k) >= s->pulse) rc = send_pulses(op, s, s->high);
  if (rc < 0) {
    for (int j = i + k; j < n; j++) tuple_unref(items[j].t);
    return -1;
  }
  return 0;
}

/* A run: dealt as split_process deals it, one tuple after the other, but each stretch of
 * consecutive tuples for one channel (round-robin: up to the end of its SPLIT_RR_RUN; by hash: as
 * long as the keys go to the same channel), ending at the next pulse, emitted as one run. Keeping
 * the upstream numbering (a shuffle's Splits), tuple by tuple. */
static int split_process_run(OpInst *op, int port, Item *items, int n) {
  Split *s = op->state;
  if (s->assign && s->hash && s->nports == 1) {
    int chan[RUN_CHANNELS_MAX];
    for (int base = 0; base < n; base += RUN_CHANNELS_MAX) {
      int m = n - base < RUN_CHANNELS_MAX ? n - base : RUN_CHANNELS_MAX;
      for (int r = 0; r < m; r++) chan[r] = hash_channel(s, items[base + r].t);
      for (int r = 0; r < m;) {
        int out = chan[r], k = 1;
        uint64_t room = pulse_room(s);
        while (r + k < m && chan[r + k] == out && (uint64_t)k < room) k++;
        for (int j = base + r; j < base + r + k; j++) items[j].seq = s->next_seq++;
        if (emit_stretch(op, s, out, items, base + r, k, n) < 0) return -1;
        r += k;
      }
    }
    return 0;
  }
  for (int i = 0; !s->hash && s->assign && i < n;) {
    int out = split_rr_channel(s->rr, s->width);
    int k = split_rr_left(s->rr);
    if (k > n - i) k = n - i;
    if ((uint64_t)k > pulse_room(s)) k = (int)pulse_room(s);
    for (int j = i; j < i + k; j++) items[j].seq = s->next_seq++;
    s->rr += (uint64_t)k;
    if (emit_stretch(op, s, out, items, i, k, n) < 0) return -1;
    i += k;
    if (i == n) return 0;
  }
  for (int i = 0; i < n; i++) {
    op->cur_seq = items[i].seq;
    op->cur_src = items[i].src;
    op->cur_born = items[i].born;
    if (split_process(op, port, items[i].t) < 0) {
      for (int j = i + 1; j < n; j++) tuple_unref(items[j].t);
      return -1;
    }
  }
  return 0;
}

/* keep mode: a pulse from upstream promises the same to every output, or what was sent already when
 * that is more (a promise behind an item an output has is refused over the network, remote.c) */
static int split_pulse(OpInst *op, int port, uint64_t seq) {
  Split *s = op->state;
  if (s->assign) return 0; /* upstream numbering means nothing here */
  if (seq > s->high) s->high = seq;
  return send_pulses(op, s, s->high);
}

/* Its thread is about to wait: a pulse now keeps the Merge below from waiting for tuples that
 * will not come soon (a slow input), or for a pulse this wait would hold back (a full queue); and
 * one goes when the thread got farther although no tuple came (its Merge consumed pulses). */
static void split_idle(OpInst *op) {
  Split *s = op->state;
  /* `high` counts the tuple being sent too: the wait may be inside its emit. Also without a pulse
   * period: an idle pulse is cheap, and merges that do not need it drop it. */
  if (s && (s->high > s->pulsed || pulse_src(op, s) > s->pulsed_src)) send_pulses(op, s, s->high);
}

/* The end of the input: a last pulse goes down every output before the end of stream does, so a
 * Merge can release what it holds even while the end of stream waits for room in a full queue. */
static int split_final(OpInst *op) {
  Split *s = op->state;
  if (s->high > s->pulsed) return send_pulses(op, s, s->high);
  return 0;
}

/* Window punctuation and ticks go down every output, each with a position of its own, so that
 * what the channels emit at it (keyed tuples, at its position) never shares a position with a
 * tuple's outputs; the region's Merge lets it go once every channel delivered it. Only then may a
 * pulse promise the position after it: one sent while a channel waits for room (the idle hook)
 * would reach a channel that has not got it yet, whose emissions at it would then come after the
 * promise. Its own position it may promise from the start, on the outputs that have it and on those
 * that do not yet (it comes at that position, not before), and a pulse must: one behind an item
 * already sent, on the outputs that have the punctuation, is refused by an executor that receives
 * it over the network (remote.c). Keeping the upstream numbering, that is all a pulse promises
 * after it too (what follows it upstream comes at its position or later). */
static int send_punctuation(OpInst *op, Item it) {
  Split *s = op->state;
  it.seq = s->assign ? s->next_seq++ : op->cur_seq;
  it.src = op->cur_src;
  if (it.seq > s->high) s->high = it.seq;
  for (int p = 0; p < s->nout; p++)
    if (rt_emit_item(op, p, &it) < 0) return -1;
  if (s->assign) s->high = it.seq + 1;
  return 0;
}

static int split_window(OpInst *op, int port) {
  return send_punctuation(op, (Item){ .kind = ITEM_WINDOW });
}

static int split_tick(OpInst *op, int port, int64_t t) {
  return send_punctuation(op, (Item){ .kind = ITEM_TICK, .tick = t });
}

/* A checkpoint barrier goes down every output, numbered like window punctuation: after every tuple
 * sent so far, before every later one. */
static int split_barrier(OpInst *op, Item b) {
  Split *s = op->state;
  b.seq = s->assign ? s->next_seq : op->cur_seq;
  if (b.seq > s->high) s->high = b.seq; /* a later pulse promises no less than the barrier did */
  for (int p = 0; p < s->nout; p++)
    if (rt_emit_item(op, p, &b) < 0) return -1;
  return 0;
}

/* Its counters; the round-robin position as a count, so that another width goes on from it.
 * split_snapshot_counters reads this layout back. */
static int split_snapshot(OpInst *op, Buf *out) {
  Split *s = op->state;
  snap_u64(out, s->next_seq);
  snap_u64(out, s->high);
  snap_u64(out, s->since);
  snap_u64(out, s->pulsed);
  snap_u64(out, s->rr);
  return 0;
}

/* Its counters, which must be ones a Split can reach: a number past SPLIT_MAX_COUNT (no job sends
 * that many tuples) would wrap and leave every Merge below waiting for good. */
#define SPLIT_MAX_COUNT (UINT64_C(1) << 62)
static int split_restore(OpInst *op, SnapIn *in) {
  Split *s = op->state;
  s->next_seq = snap_get_u64(in);
  s->high = snap_get_u64(in);
  s->since = snap_get_u64(in);
  s->pulsed = snap_get_u64(in);
  s->rr = snap_get_u64(in);
  if (in->bad) return 0; /* the executor says it is truncated */
  const char *bad = NULL;
  if (s->next_seq >= SPLIT_MAX_COUNT || s->high >= SPLIT_MAX_COUNT || s->rr >= SPLIT_MAX_COUNT)
    bad = "a counter is past 2^62";
  else if (s->assign && s->high > s->next_seq)
    bad = "the highest sequence number sent is past the next one";
  else if (!s->assign && s->next_seq != 0)
    bad = "a Split keeping sequence numbers has assigned some";
  else if (s->pulsed > s->high)
    bad = "the last pulse is past the highest sequence number sent";
  /* (assigning, every tuple and every punctuation took a number: ticks and window punctuation
   * too, which went down every output and not round robin) */
  else if (s->hash ? s->rr != 0 : s->assign && s->rr > s->next_seq)
    bad = "its round-robin position disagrees with the tuples it sent";
  return bad ? rt_fail(op, "its counters cannot be: %s", bad) : 0;
}

static void split_close(OpInst *op, bool ok) {
  Split *s = op->state;
  if (s) free(s->keys);
  if (s) free(s->keys2);
  free(s);
  op->state = NULL;
}

bool split_snapshot_counters(const void *p, size_t n, uint64_t *next_seq, uint64_t *rr) {
  SnapIn in = { .p = p, .n = n };
  *next_seq = snap_get_u64(&in);
  for (int i = 0; i < 3; i++) snap_get_u64(&in);
  *rr = snap_get_u64(&in);
  return snap_done(&in);
}

/* ---- which keys a replica owns ---- */

/* The Split that deals op's channel its tuples: up its inputs (through a shuffle's channel Merge, its
 * first input) to the first Split. NULL outside a region. */
static const Op *channel_split(const Op *op) {
  for (int hops = 0; op && op->channel >= 0 && hops < 1000; hops++) {
    if (op->ninputs == 0 || op->inputs[0].nstreams == 0 || !op->inputs[0].streams[0]) return NULL;
    const Op *up = op->inputs[0].streams[0]->producer;
    if (up && up->kind == KIND_SPLIT) return up;
    op = up;
  }
  return NULL;
}

bool rt_owns_key(const OpInst *op, const Value *vals, const int *slots, int nvals) {
  const Op *split = op->op ? channel_split(op->op) : NULL;
  if (!split || split->noutputs <= 1 || !op->in_schema) return true;
  const char *strategy = op_param(split, "strategy"), *keys = op_param(split, "keys");
  if (!strategy || strcmp(strategy, "hash") != 0 || !keys) return true;
  /* the Split's key attributes in its order, each found in the key's values by its input slot */
  uint64_t h = SF_HASH_SEED;
  for (const char *k = keys; *k;) {
    k += strspn(k, " ,\t\n\r"); /* as names_split separates them */
    size_t len = strcspn(k, " ,\t\n\r");
    if (len == 0) break;
    char name[256];
    if (len >= sizeof name) return true;
    memcpy(name, k, len);
    name[len] = 0;
    k += len;
    int attr = schema_find_attr(op->in_schema, name);
    if (attr < 0) return true; /* cannot tell */
    int j = 0;
    while (j < nvals && slots[j] != attr) j++;
    if (j == nvals) return true; /* the key does not hold the region's attribute: keep it */
    h = value_hash(&vals[j], h);
  }
  int width = split->ninputs == 2 ? split->noutputs / 2 : split->noutputs; /* (a Join's: two outputs a channel) */
  return sf_key_channel(h, width) == op->op->channel;
}

const OpKindImpl op_split = {
  .kind = KIND_SPLIT,
  .open = split_open,
  .process = split_process,
  .process_run = split_process_run,
  .pulse = split_pulse,
  .idle = split_idle,
  .final = split_final,
  .window = split_window,
  .tick = split_tick,
  .barrier = split_barrier,
  .snapshot = split_snapshot,
  .restore = split_restore,
  .close = split_close,
};
