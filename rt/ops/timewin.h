/* timewin.h: the event-time windows of an Aggregate (`tumbling time SIZE`, `hopping time SIZE
 * SLIDE`, `session time GAP`, with `lateness`), as the language defines them (docs/language.md):
 * per key, its open windows, each a set of accumulators (accum.h), never rows; the current tick; and, at a
 * tick, the windows it closes in the order they are emitted (window end, window start, the key's
 * values in partitionBy order by value_compare: ints and doubles numerically with -0.0 == 0.0 and
 * NaN after +infinity, strings by bytes, false before true).
 *
 *  - A window [start, end) is closed once end + lateness <= the current tick (a session's end is
 *    its last time + GAP). Boundaries are multiples of SLIDE (of SIZE for tumbling), by floor
 *    division, so negative times have windows like the others; a time in [k*SIZE, (k+1)*SIZE)
 *    belongs to window k: one exactly at a window's end is in the next one.
 *  - A tuple is added to each of its windows that is not closed; one added to none is late (for a
 *    session: time + GAP + lateness <= the current tick) and left to the caller to count.
 *  - Sessions: a tuple less than GAP from an open session of its key joins it; one that bridges
 *    two merges them, the session whose first tuple arrived earlier folding in the other (accum.h:
 *    acc_merge), then the tuple is added. A closed session is emitted at once and gone, so a later
 *    tuple never joins it: it starts a new session.
 *
 * Nothing here reads a clock or a hash: the same tuples and ticks give the same windows, in the
 * same order, at any width. The module knows nothing of operators: the caller (aggregate.c) finds
 * the key's TwKey (a KeyTable data block), evaluates the arguments and builds the outputs.
 *
 * Ownership: a window holds a reference to its first tuple (the output's forwarded values) and its
 * accumulators; tw_close hands the closed windows to the caller, who frees them with
 * tw_window_free. Memory held is reported through TwSpec.charge (--max-state-memory). */
#ifndef SF_TIMEWIN_H
#define SF_TIMEWIN_H

#include "accum.h"

typedef struct TwSpec {
  WindowKind kind;        /* WIN_TUMBLING_TIME, WIN_HOPPING_TIME or WIN_SESSION_TIME */
  int64_t size;           /* SIZE; session: GAP (> 0) */
  int64_t slide;          /* SLIDE, dividing SIZE (tumbling: SIZE; session: unused) */
  int64_t lateness;       /* >= 0 */
  int naggs;              /* aggregate slots */
  const ExprFunc *func;   /* per slot: an acc_is_fold function, or anything else for a slot the
                             window does not fold (window_start, window_end, unused) */
  const Type *type;       /* per slot: the argument's type */
  int nkeys;              /* key attributes (0: one key) */
  const int *keyslots;    /* their input attribute indexes, in partitionBy order */
  /* Memory: charge(ctx, more) before holding more bytes, false when that is refused (the add
   * then fails); uncharge(ctx, less) when they are freed. NULL: not counted. */
  bool (*charge)(void *ctx, size_t more);
  void (*uncharge)(void *ctx, size_t less);
  void *ctx;
} TwSpec;

typedef struct TwWindow {
  int64_t start;      /* window_start(): a multiple of SLIDE; a session's first (smallest) time */
  int64_t end;        /* window_end(): start + SIZE (at most INT64_MAX); a session's last + GAP */
  int64_t last;       /* session: its largest time */
  int64_t idx;        /* tumbling, hopping: k of [k*SLIDE, k*SLIDE + SIZE), which identifies it
                         even where start or end is clamped to int64's range (times within SIZE
                         of its ends) */
  uint64_t first_pos; /* arrival number of its first tuple */
  Tuple *first;       /* its first tuple (a reference) */
  int64_t n;          /* tuples folded */
  size_t bytes;       /* what it holds, as charged */
  Acc acc[];          /* per slot */
} TwWindow;

/* One key's open windows, sorted by start (disjoint for sessions). A zeroed TwKey has none: what
 * a KeyTable data block starts as. */
typedef struct TwKey {
  TwWindow **w;     /* the windows (malloc'd), sorted by idx (sessions: by start) */
  int n, cap;       /* held, allocated */
  size_t active;    /* 1 + its index in Tw.active while it has windows, else 0 */
  uint64_t late;    /* its late tuples (kept per key so a restore at another width splits them) */
} TwKey;

typedef struct Tw {
  TwSpec spec;
  int64_t tick;       /* the current tick (INT64_MIN before the first: nothing is closed) */
  uint64_t arrivals;  /* the arrival number of the next tuple */
  TwKey **active;     /* the keys that hold windows: only those are looked at by a tick */
  size_t nactive, cap;
} Tw;

void tw_init(Tw *tw, const TwSpec *spec);
/* Adds a tuple of key k at event time `time`: args[slot] (and by[slot] for arg_max/arg_min) are
 * its argument values, t its tuple (referenced by a window it starts; t stays the caller's).
 * Returns 0 when it was added to a window, 1 when it is late (k->late counted), -1 when the
 * memory it needs was refused (nothing changed then). */
int tw_add(Tw *tw, TwKey *k, int64_t time, const Value *args, const Value *by, Tuple *t);
/* A tick t: the current tick becomes t (ticks never go back: a smaller t changes nothing), and
 * every window it closes is taken out, into *out (malloc'd, the caller frees it and each window),
 * in emission order. Returns how many. */
size_t tw_close(Tw *tw, int64_t t, TwWindow ***out);
/* Frees a window tw_close returned. */
void tw_window_free(Tw *tw, TwWindow *w);
/* Frees k's windows (the operator closes); k is empty again. */
void tw_key_release(Tw *tw, TwKey *k);
/* Frees tw's own arrays (each key is released with tw_key_release). */
void tw_release(Tw *tw);
/* Total order of emission of two windows (tw_close's). */
int tw_compare(const Tw *tw, const TwWindow *a, const TwWindow *b);

/* Checkpoints. tw_snapshot writes the current tick and the arrival count; tw_restore reads them
 * back, taking the larger of what it holds and what it reads (a restore at another width reads
 * the snapshots of several old replicas, which saw the same ticks; arrival numbers only order the
 * tuples of one key, which all came from one of them). A key's windows: tw_key_snapshot writes
 * them (start, end, last, first tuple's values, count, accumulators), tw_key_restore reads them
 * into an empty TwKey, the first tuples made with nvals values (the input schema's). */
void tw_snapshot(const Tw *tw, Buf *out);
void tw_restore(Tw *tw, SnapIn *in);
void tw_key_snapshot(const Tw *tw, const TwKey *k, Buf *out);
/* 0, or -1 when memory was refused; a malformed input sets in->bad. */
int tw_key_restore(Tw *tw, TwKey *k, SnapIn *in, int nvals);

#endif
