/* slide.h: the sliding window of one key of an Aggregate (`window` = `sliding N`): the last N rows
 * of aggregate argument values, and every aggregate over them kept up to date in O(1) amortized
 * per row, with the same values, bit for bit, as folding the window's rows in arrival order.
 *
 * Ownership: a Slide owns its rows (string bytes included) and frees them in slide_release; the
 * values slide_push writes into results borrow from the rows and stay valid until the next
 * slide_push or slide_release on the same Slide. A Slide is the head of a block of slide_size
 * bytes that its aggregates' states follow (a KeyTable data block, or calloc'd). */
#ifndef SF_SLIDE_H
#define SF_SLIDE_H

#include "keyed.h"

/* What the aggregates of every window of one operator are (shared by all its keys). */
typedef struct SlideSpec {
  int64_t size;          /* N: rows a window holds at most (>= 1) */
  int naggs;             /* aggregates (slots) per row */
  const ExprFunc *func;  /* per slot: FUNC_COUNT ... FUNC_LAST, or FUNC_NONE for a slot no set uses */
  const Type *type;      /* per slot: the argument's type (ignored for count and FUNC_NONE) */
  bool by;               /* rows also hold a `by` value per slot (arg_max, arg_min), after the
                            argument values: args[naggs + slot] */
} SlideSpec;

typedef struct SlideSlot SlideSlot;

/* An exact sum of ints in two's complement over 128 bits, low word lo and high word hi: no sum of
 * fewer than 2^63 int64 terms overflows it. A sum of ints that is no int64 is an error, never a
 * wrapped value. */
static inline void wide_add(uint64_t *lo, int64_t *hi, int64_t x) {
  uint64_t sum = *lo + (uint64_t)x;
  *hi += (x < 0 ? -1 : 0) + (sum < *lo);
  *lo = sum;
}

static inline void wide_sub(uint64_t *lo, int64_t *hi, int64_t x) {
  *hi -= (x < 0 ? -1 : 0) + (*lo < (uint64_t)x);
  *lo -= (uint64_t)x;
}

/* Whether the sum is an int64 (then *v is it). */
static inline bool wide_get(uint64_t lo, int64_t hi, int64_t *v) {
  *v = (int64_t)lo;
  return hi == (*v < 0 ? -1 : 0);
}

/* One key's window, followed in its block by a SlideSlot (the running state of an aggregate) per
 * slot. A zeroed block is an empty window (what a KeyTable data block starts as). */
typedef struct Slide {
  Value *cells; /* rows of argument values, cells[row * naggs + slot] (strings held); the start
                   of the key's one malloc'd block, which holds caps and the deques too */
  size_t *caps; /* held buffer size of each cell (in the block) */
  int64_t rows; /* rows allocated (at most N), grown by doubling as rows arrive */
  int64_t n;    /* rows in the window, min(N, seen) */
  int64_t seen; /* rows pushed so far; row k (from 0) lives in cells row k % rows */
} Slide;

/* The bytes of a Slide's block for spec (the Slide and its slots). */
size_t slide_size(const SlideSpec *spec);

/* Appends a row of argument values (args[slot], copied; a FUNC_NONE or count slot's value is
 * ignored), dropping the oldest row when the window holds N, and writes into results[slot] every
 * aggregate over the window's rows; returns -1, or the first slot whose sum of ints is no int64
 * (its result is then undefined):
 *  - count: the number of rows (int);
 *  - sum of ints: their exact sum (int); sum of doubles: the left fold x1 + x2 + ... in
 *    arrival order (so a lone -0.0 sums to -0.0); avg: the same fold over double(x), divided by the
 *    count;
 *  - min and max: by value_compare, the oldest of equal values; first and last: the oldest and
 *    the newest row's value;
 *  - count_distinct: the number of distinct values (value_equal); arg_max and arg_min: the value
 *    of the row with the largest (smallest) by, the oldest of equal ones (spec->by set);
 *  - FUNC_NONE: int 0.
 * Everything is O(1) amortized but the double folds (sum of doubles, avg) of windows holding a
 * value that is not an integer of magnitude at most 2^53, or whose magnitudes add up to more than
 * 2^53, and count_distinct, arg_max and arg_min (O(N), and O(N log N) for count_distinct): those
 * are folded again over the window, because floating-point addition is not
 * associative and no running total gives the same bits. Out of memory aborts. */
int slide_push(Slide *w, const SlideSpec *spec, const Value *args, Value *results);
/* A hint before slide_push: prefetches the cells that push will read and write (the newest row's
 * and the oldest's, with their caps). */
void slide_prefetch(const Slide *w, const SlideSpec *spec);
/* Checkpoints: appends w's window, its rows oldest first (snap_* values; the argument values of
 * the slots other than count and FUNC_NONE). */
void slide_snapshot(const Slide *w, const SlideSpec *spec, Buf *out);
/* Reads what slide_snapshot wrote into w, an empty window, by pushing the rows again: every
 * aggregate depends on nothing but the rows in the window (the running sums, the exact-integer
 * counts and the min and max deques are functions of those rows), so the restored window gives
 * the same results, bit for bit, as the one snapshotted. row and results are scratch arrays of
 * spec->naggs values (row: twice as many with spec->by). A malformed input (too many rows, a value of another type) sets in->bad and
 * leaves w a window slide_release can free. */
void slide_restore(Slide *w, const SlideSpec *spec, SnapIn *in, Value *row, Value *results);
/* Frees everything w holds; its block is an empty window again (zeroed). */
void slide_release(Slide *w, const SlideSpec *spec);

#endif
