/* accum.h: the running state of one aggregate call of an Aggregate (count, sum, avg, min, max,
 * first, last, count_distinct, arg_max, arg_min), shared by every window that keeps accumulators
 * rather than rows: count-based tumbling windows, the time windows (timewin.h) and `running`.
 *
 * A window folds its tuples in arrival order; each fold carries the tuple's arrival number (pos,
 * increasing in arrival order), which is what decides first, last and ties when two windows are
 * merged (sessions bridged by a tuple): the merge gives what folding both windows' tuples in
 * arrival order would, except that double sums are added as (earlier window) + (later window),
 * the order the language prescribes for sessions (docs/language.md).
 *
 * Ownership: an Acc owns the strings it keeps (held values) and count_distinct's set of distinct
 * values; acc_release frees them. A zeroed Acc is an empty one. Values acc_value writes borrow
 * from the Acc until its next change. */
#ifndef SF_ACCUM_H
#define SF_ACCUM_H

#include "keyed.h"

/* count_distinct's distinct values (accum.c). */
typedef struct AccSet AccSet;

typedef struct Acc {
  uint64_t isum;  /* sum of ints: the low word of the exact total (wide_add)... */
  int64_t ihi;    /* ...and the high word */
  double dsum;    /* sum of doubles, or of double(x) for avg */
  Value v;        /* min, max, first, last, arg_max, arg_min so far (held) */
  size_t cap;     /* v's held string buffer */
  Value by;       /* arg_max, arg_min: the `by` of the tuple v came from (held) */
  size_t bycap;   /* by's held string buffer */
  uint64_t pos;   /* arrival number of the tuple v came from */
  AccSet *set;    /* count_distinct: the distinct values (NULL while empty) */
} Acc;

/* Whether f is an aggregate that keeps accumulators (FUNC_COUNT ... FUNC_ARG_MIN; not
 * window_start or window_end, whose values the window itself gives). */
static inline bool acc_is_fold(ExprFunc f) {
  return f >= FUNC_COUNT && f <= FUNC_ARG_MIN;
}

/* Folds argument x (and by, for arg_max and arg_min; ignored otherwise) of a tuple arriving as
 * number pos into acc of function f, which has folded `seen` tuples before. Strings are copied.
 * Returns the bytes of memory the fold added (a new distinct value), for --max-state-memory. */
size_t acc_add(ExprFunc f, Acc *acc, int64_t seen, const Value *x, const Value *by, uint64_t pos);
/* Merges src (seen_src tuples) into dst (seen_dst tuples) of function f, as described above:
 * dst is the window whose first tuple arrived earlier. src is left for acc_release. Returns the
 * bytes the merge added to dst (distinct values copied over). */
size_t acc_merge(ExprFunc f, Type arg, Acc *dst, int64_t seen_dst, const Acc *src, int64_t seen_src);
/* The value of f (argument type arg) over n >= 1 folded tuples; false when it is a sum of ints
 * that is no int64. */
bool acc_value(ExprFunc f, Type arg, const Acc *acc, int64_t n, Value *v);
/* The bytes acc holds outside itself (strings, the distinct set). */
size_t acc_bytes(const Acc *acc);
/* Frees what acc holds; it is an empty Acc again. */
void acc_release(Acc *acc);

/* Checkpoints: acc as it is (the sums' bits, the kept values, the distinct values), so a restored
 * window folds on from the same state. acc_restore reads into an empty Acc, checking the kept
 * values' types against arg (and by's type for arg_max/arg_min: any); a malformed input sets
 * in->bad and leaves acc for acc_release. */
void acc_snapshot(const Acc *acc, Buf *out);
void acc_restore(Acc *acc, Type arg, SnapIn *in);

#endif
