/* slide.c: incremental sliding windows for Aggregate (see slide.h).
 *
 * A window is a ring of its last N rows of argument values plus, per aggregate, a running state:
 *  - count, first and last read the ring's size, oldest row and newest row;
 *  - a sum of ints is a running exact total over 128 bits (wide_add): adding the new row and
 *    subtracting the dropped one gives the window's sum, which is an error when it is no int64;
 *  - min and max keep a monotonic deque of row positions (Lemire's ascending minima): a new row
 *    removes the candidates behind it that compare strictly worse, so the front is the best value
 *    and, among equal ones, the oldest, which is what the left fold keeps; each row enters and
 *    leaves the deque once;
 *  - a double fold (sum of doubles, avg) cannot run: floating-point addition is not associative,
 *    so ((a + b) + c) - a is not b + c in general, and the fold must stay a left fold in arrival
 *    order for the output to keep its bytes. It is exact, though, when every term is an integer
 *    and the magnitudes add up to at most 2^53: every partial sum is then an integer of magnitude
 *    at most 2^53, which a double holds exactly, so no addition rounds and the fold equals the
 *    true sum. The state counts the rows outside that case and keeps the integer total and the
 *    sum of magnitudes of the others; while the window has none outside and the magnitudes stay
 *    within 2^53 the sum is the integer total (-0.0 when every term is -0.0, as the fold gives),
 *    else the window is folded again (O(N)). Counts of ints (avg of an int attribute) and
 *    integer-valued doubles take the O(1) path. */
#include "slide.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The running state of one aggregate of a window: sums use the first member, min and max the
 * second (one key of millions should cost little). */
struct SlideSlot {
  union {
    struct {
      uint64_t isum;   /* sum of ints: the low word of the window's exact total; double fold: the
                          total of its exact terms, wrapping */
      int64_t ihi;     /* sum of ints: the high word of the window's exact total */
      uint64_t abs_lo; /* double fold: sum of the magnitudes of its exact terms, low 64 bits... */
      uint64_t abs_hi; /* ...and high (N magnitudes of at most 2^53 can pass 2^64) */
      int64_t inexact; /* double fold: rows whose term is not an integer of magnitude at most 2^53 */
      int64_t negzero; /* double fold: rows whose term is -0.0 */
    };
    struct {
      int64_t *dq;     /* min and max: positions of the candidates, a ring of `rows` entries */
      int64_t dq_head; /* index in dq of the oldest candidate (the current min or max) */
      int64_t dq_n;    /* candidates held */
    };
  };
};

/* The slots follow the Slide in its block (slide_size). */
static SlideSlot *slots_of(const Slide *w) {
  return (SlideSlot *)(w + 1);
}

size_t slide_size(const SlideSpec *spec) {
  return sizeof(Slide) + sizeof(SlideSlot) * (size_t)spec->naggs;
}

/* Cells per row: a value per slot, and a by value per slot when spec->by. */
static size_t stride(const SlideSpec *spec) {
  return (size_t)spec->naggs * (spec->by ? 2 : 1);
}

static Value *cell(const Slide *w, const SlideSpec *spec, int64_t pos, int slot) {
  return &w->cells[(size_t)(pos % w->rows) * stride(spec) + (size_t)slot];
}

/* Whether slot s folds doubles (sum of doubles, avg). */
static bool is_fold(const SlideSpec *spec, int s) {
  return spec->func[s] == FUNC_AVG || (spec->func[s] == FUNC_SUM && spec->type[s] == TYPE_DOUBLE);
}

/* The term a row's value x adds to slot s's double fold. */
static double fold_term(const SlideSpec *spec, int s, const Value *x) {
  return spec->type[s] == TYPE_INT ? (double)x->i : x->d;
}

/* Whether t is an integer of magnitude at most 2^53 (false for NaN and infinities). */
static bool term_exact(double t) {
  return fabs(t) <= 0x1p53 && t == (double)(int64_t)t;
}

/* Adds (sign 1) or removes (sign -1) term t of a double fold. */
static void fold_count(SlideSlot *st, double t, int sign) {
  if (!term_exact(t)) {
    st->inexact += sign;
    return;
  }
  int64_t i = (int64_t)t;
  uint64_t mag = (uint64_t)fabs(t);
  if (sign > 0) {
    st->isum += (uint64_t)i;
    st->abs_lo += mag;
    st->abs_hi += st->abs_lo < mag; /* the carry */
  } else {
    st->isum -= (uint64_t)i;
    st->abs_hi -= st->abs_lo < mag; /* the borrow */
    st->abs_lo -= mag;
  }
  if (t == 0 && signbit(t)) st->negzero += sign;
}

/* The value of slot s's double fold over the window. */
static double fold_value(const Slide *w, const SlideSpec *spec, int s) {
  const SlideSlot *st = &slots_of(w)[s];
  if (st->inexact == 0 && st->abs_hi == 0 && st->abs_lo <= UINT64_C(1) << 53)
    return st->negzero == w->n ? -0.0 : (double)(int64_t)st->isum;
  int64_t pos = w->seen - w->n;
  double sum = fold_term(spec, s, cell(w, spec, pos, s));
  for (pos++; pos < w->seen; pos++) sum += fold_term(spec, s, cell(w, spec, pos, s));
  return sum;
}

/* Doubles the rows (at most N) while the window is filling; positions keep their rows then, since
 * every position is below the old size. The cells, their caps and the deques of min and max share
 * one block per key (one malloc, not three); deques are laid out again from index 0. */
static void grow(Slide *w, const SlideSpec *spec) {
  int64_t rows = w->rows ? w->rows * 2 : 4;
  if (rows > spec->size) rows = spec->size;
  size_t naggs = stride(spec), cells = (size_t)rows * naggs, old = (size_t)w->rows * naggs, deques = 0;
  for (int s = 0; s < spec->naggs; s++) deques += spec->func[s] == FUNC_AMIN || spec->func[s] == FUNC_AMAX;
  /* one block per key: cells, then caps, then a deque ring per min and max */
  Value *block = sf_xmalloc(sizeof(Value) * cells + sizeof(size_t) * cells + sizeof(int64_t) * (size_t)rows * deques + 1);
  size_t *caps = (size_t *)(block + cells);
  int64_t *ring = (int64_t *)(caps + cells);
  if (old) {
    memcpy(block, w->cells, sizeof(Value) * old);
    memcpy(caps, w->caps, sizeof(size_t) * old);
  }
  memset(block + old, 0, sizeof(Value) * (cells - old));
  memset(caps + old, 0, sizeof(size_t) * (cells - old));
  for (int s = 0; s < spec->naggs; s++) {
    if (spec->func[s] != FUNC_AMIN && spec->func[s] != FUNC_AMAX) continue;
    SlideSlot *st = &slots_of(w)[s];
    for (int64_t k = 0; k < st->dq_n; k++) ring[k] = st->dq[(st->dq_head + k) % w->rows];
    st->dq = ring;
    st->dq_head = 0;
    ring += rows;
  }
  free(w->cells);
  w->cells = block;
  w->caps = caps;
  w->rows = rows;
}

/* Drops the oldest row (position seen - n) from every running state. */
static void drop_oldest(Slide *w, const SlideSpec *spec) {
  int64_t pos = w->seen - w->n;
  for (int s = 0; s < spec->naggs; s++) {
    SlideSlot *st = &slots_of(w)[s];
    const Value *x = cell(w, spec, pos, s);
    switch (spec->func[s]) {
    case FUNC_SUM:
    case FUNC_AVG:
      if (is_fold(spec, s))
        fold_count(st, fold_term(spec, s, x), -1);
      else
        wide_sub(&st->isum, &st->ihi, x->i);
      break;
    case FUNC_AMIN:
    case FUNC_AMAX:
      if (st->dq_n && st->dq[st->dq_head] == pos) {
        st->dq_head = (st->dq_head + 1) % w->rows;
        st->dq_n--;
      }
      break;
    default: break;
    }
  }
  w->n--;
}

/* Adds the newest row (position seen - 1) to every running state. */
static void add_newest(Slide *w, const SlideSpec *spec) {
  int64_t pos = w->seen - 1;
  for (int s = 0; s < spec->naggs; s++) {
    SlideSlot *st = &slots_of(w)[s];
    const Value *x = cell(w, spec, pos, s);
    switch (spec->func[s]) {
    case FUNC_SUM:
    case FUNC_AVG:
      if (is_fold(spec, s))
        fold_count(st, fold_term(spec, s, x), 1);
      else
        wide_add(&st->isum, &st->ihi, x->i);
      break;
    case FUNC_AMIN:
    case FUNC_AMAX: {
      while (st->dq_n) { /* drop the candidates strictly worse than x; equal ones stay first */
        int64_t back = st->dq[(st->dq_head + st->dq_n - 1) % w->rows];
        int c = value_compare(cell(w, spec, back, s), x);
        if (spec->func[s] == FUNC_AMIN ? c <= 0 : c >= 0) break;
        st->dq_n--;
      }
      st->dq[(st->dq_head + st->dq_n) % w->rows] = pos;
      st->dq_n++;
      break;
    }
    default: break;
    }
  }
}

/* arg_max, arg_min: the position of the oldest row with the best by. */
static int64_t arg_best(const Slide *w, const SlideSpec *spec, int s) {
  int64_t best = w->seen - w->n;
  for (int64_t pos = best + 1; pos < w->seen; pos++) {
    int c = value_compare(cell(w, spec, pos, spec->naggs + s), cell(w, spec, best, spec->naggs + s));
    if (spec->func[s] == FUNC_ARG_MAX ? c > 0 : c < 0) best = pos;
  }
  return best;
}

static int compare_values(const void *a, const void *b) {
  return value_compare(a, b);
}

/* count_distinct: the distinct values of slot s in the window, sorted and counted. */
static int64_t count_distinct(const Slide *w, const SlideSpec *spec, int s) {
  Value *v = sf_xmalloc(sizeof *v * (size_t)w->n);
  for (int64_t k = 0; k < w->n; k++) v[k] = *cell(w, spec, w->seen - w->n + k, s);
  qsort(v, (size_t)w->n, sizeof *v, compare_values);
  int64_t n = w->n ? 1 : 0;
  for (int64_t k = 1; k < w->n; k++) n += value_compare(&v[k - 1], &v[k]) != 0;
  free(v);
  return n;
}

void slide_prefetch(const Slide *w, const SlideSpec *spec) {
  if (!w->rows) return;
  size_t naggs = stride(spec);
  size_t next = (size_t)(w->seen % w->rows) * naggs, oldest = (size_t)((w->seen - w->n) % w->rows) * naggs;
  __builtin_prefetch(&w->cells[next]);
  __builtin_prefetch(&w->caps[next]);
  if (oldest != next) __builtin_prefetch(&w->cells[oldest]);
}

int slide_push(Slide *w, const SlideSpec *spec, const Value *args, Value *results) {
  int overflow = -1;
  size_t naggs = stride(spec);
  if (w->n == spec->size)
    drop_oldest(w, spec);
  else if (w->n == w->rows)
    grow(w, spec);
  size_t row = (size_t)(w->seen % w->rows) * naggs;
  for (size_t s = 0; s < naggs; s++) held_store(&w->cells[row + s], &w->caps[row + s], &args[s]);
  w->seen++;
  w->n++;
  add_newest(w, spec);
  for (int s = 0; s < spec->naggs; s++) {
    const SlideSlot *st = &slots_of(w)[s];
    switch (spec->func[s]) {
    case FUNC_COUNT: results[s] = value_int(w->n); break;
    case FUNC_SUM: {
      int64_t v = 0;
      if (is_fold(spec, s))
        results[s] = value_double(fold_value(w, spec, s));
      else if (wide_get(st->isum, st->ihi, &v))
        results[s] = value_int(v);
      else if (overflow < 0)
        overflow = s;
      break;
    }
    case FUNC_AVG: results[s] = value_double(fold_value(w, spec, s) / (double)w->n); break;
    case FUNC_AMIN:
    case FUNC_AMAX: results[s] = *cell(w, spec, st->dq[st->dq_head], s); break;
    case FUNC_FIRST: results[s] = *cell(w, spec, w->seen - w->n, s); break;
    case FUNC_LAST: results[s] = *cell(w, spec, w->seen - 1, s); break;
    case FUNC_ARG_MAX:
    case FUNC_ARG_MIN: results[s] = *cell(w, spec, arg_best(w, spec, s), s); break;
    case FUNC_COUNT_DISTINCT: results[s] = value_int(count_distinct(w, spec, s)); break;
    default: results[s] = value_int(0); break;
    }
  }
  return overflow;
}

/* Whether slot s keeps its rows' values (count and FUNC_NONE ignore theirs). */
static bool keeps_values(const SlideSpec *spec, int s) {
  return spec->func[s] != FUNC_COUNT && spec->func[s] != FUNC_NONE;
}

/* Whether slot s's rows hold a by value. */
static bool has_by(const SlideSpec *spec, int s) {
  return spec->by && (spec->func[s] == FUNC_ARG_MAX || spec->func[s] == FUNC_ARG_MIN);
}

void slide_snapshot(const Slide *w, const SlideSpec *spec, Buf *out) {
  snap_i64(out, w->n);
  for (int64_t pos = w->seen - w->n; pos < w->seen; pos++)
    for (int s = 0; s < spec->naggs; s++)
      if (keeps_values(spec, s)) {
        snap_value(out, cell(w, spec, pos, s));
        if (has_by(spec, s)) snap_value(out, cell(w, spec, pos, spec->naggs + s));
      }
}

void slide_restore(Slide *w, const SlideSpec *spec, SnapIn *in, Value *row, Value *results) {
  int64_t n = snap_get_i64(in);
  if (n < 0 || n > spec->size) in->bad = true;
  for (int64_t r = 0; r < n && !in->bad; r++) {
    for (int s = 0; s < spec->naggs && !in->bad; s++) {
      row[s] = value_int(0);
      if (spec->by) row[spec->naggs + s] = value_int(0);
      if (!keeps_values(spec, s)) continue;
      snap_get_value(in, &row[s]); /* a string points into the snapshot: slide_push copies it */
      if (row[s].type != spec->type[s]) in->bad = true;
      if (has_by(spec, s)) snap_get_value(in, &row[spec->naggs + s]);
    }
    if (!in->bad) slide_push(w, spec, row, results); /* a prefix of the window need not fit */
  }
}

void slide_release(Slide *w, const SlideSpec *spec) {
  size_t cells = (size_t)w->rows * stride(spec);
  for (size_t c = 0; c < cells; c++) held_release(&w->cells[c], &w->caps[c]);
  free(w->cells); /* the block of the caps and the deques too */
  memset(w, 0, slide_size(spec));
}
