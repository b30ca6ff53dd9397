/* accum.c: aggregate accumulators (accum.h).
 *
 * count_distinct keeps a hash set of its distinct values (value_hash and value_equal, the equality
 * of keys: -0.0 is 0.0, every NaN one value), open addressing grown at 3/4 load, each string value
 * copied into its own allocation: the count is exact, and memory grows with the distinct values. */
#include "accum.h"

#include "slide.h"

#include <stdlib.h>
#include <string.h>

struct AccSet {
  Value *vals; /* cap slots; TYPE_NONE: empty */
  size_t cap;  /* a power of two */
  size_t n;    /* values held */
};

/* Where v is or would go in s. */
static size_t set_slot(const AccSet *s, const Value *v) {
  size_t j = (size_t)value_hash(v, SF_HASH_SEED) & (s->cap - 1);
  while (s->vals[j].type != TYPE_NONE && !value_equal(&s->vals[j], v)) j = (j + 1) & (s->cap - 1);
  return j;
}

/* Adds a copy of v to *sp (made when NULL); returns the bytes added. */
static size_t set_add(AccSet **sp, const Value *v) {
  size_t bytes = 0;
  AccSet *s = *sp;
  if (!s) {
    s = *sp = sf_xmalloc(sizeof *s);
    *s = (AccSet){.cap = 8};
    s->vals = calloc(s->cap, sizeof *s->vals);
    if (!s->vals) sf_die("out of memory");
    bytes += sizeof *s + s->cap * sizeof *s->vals;
  }
  size_t j = set_slot(s, v);
  if (s->vals[j].type != TYPE_NONE) return bytes;
  if ((s->n + 1) * 4 > s->cap * 3) {
    AccSet grown = {.cap = s->cap * 2, .n = s->n};
    grown.vals = calloc(grown.cap, sizeof *grown.vals);
    if (!grown.vals) sf_die("out of memory");
    for (size_t i = 0; i < s->cap; i++)
      if (s->vals[i].type != TYPE_NONE) grown.vals[set_slot(&grown, &s->vals[i])] = s->vals[i];
    bytes += (grown.cap - s->cap) * sizeof *s->vals;
    free(s->vals);
    *s = grown;
    j = set_slot(s, v);
  }
  Value copy = *v;
  if (v->type == TYPE_STRING) {
    char *p = sf_xmalloc(v->s.n + 1);
    if (v->s.n) memcpy(p, v->s.p, v->s.n);
    p[v->s.n] = 0;
    copy.s.p = p;
    bytes += v->s.n + 1;
  }
  s->vals[j] = copy;
  s->n++;
  return bytes;
}

static void set_free(AccSet *s) {
  if (!s) return;
  for (size_t i = 0; i < s->cap; i++)
    if (s->vals[i].type == TYPE_STRING) free((char *)s->vals[i].s.p);
  free(s->vals);
  free(s);
}

static size_t set_bytes(const AccSet *s) {
  if (!s) return 0;
  size_t n = sizeof *s + s->cap * sizeof *s->vals;
  for (size_t i = 0; i < s->cap; i++)
    if (s->vals[i].type == TYPE_STRING) n += s->vals[i].s.n + 1;
  return n;
}

/* The held bytes of a string value v with its buffer cap. */
static size_t held_bytes(size_t cap) { return cap; }

size_t acc_add(ExprFunc f, Acc *acc, int64_t seen, const Value *x, const Value *by, uint64_t pos) {
  bool take = false;
  size_t before = held_bytes(acc->cap) + held_bytes(acc->bycap);
  switch (f) {
  case FUNC_SUM:
    if (x->type == TYPE_INT) {
      if (!seen) acc->isum = 0, acc->ihi = 0;
      wide_add(&acc->isum, &acc->ihi, x->i);
    } else
      acc->dsum = seen ? acc->dsum + x->d : x->d;
    return 0;
  case FUNC_AVG: {
    double d = x->type == TYPE_INT ? (double)x->i : x->d;
    acc->dsum = seen ? acc->dsum + d : d;
    return 0;
  }
  case FUNC_COUNT_DISTINCT: return set_add(&acc->set, x);
  case FUNC_AMIN: take = !seen || value_compare(x, &acc->v) < 0; break;
  case FUNC_AMAX: take = !seen || value_compare(x, &acc->v) > 0; break;
  case FUNC_ARG_MIN: take = !seen || value_compare(by, &acc->by) < 0; break; /* ties: the earliest */
  case FUNC_ARG_MAX: take = !seen || value_compare(by, &acc->by) > 0; break;
  case FUNC_FIRST: take = !seen; break;
  case FUNC_LAST: take = true; break;
  default: return 0; /* count: nothing to fold */
  }
  if (!take) return 0;
  held_store(&acc->v, &acc->cap, x);
  if (f == FUNC_ARG_MIN || f == FUNC_ARG_MAX) held_store(&acc->by, &acc->bycap, by);
  acc->pos = pos;
  size_t after = held_bytes(acc->cap) + held_bytes(acc->bycap);
  return after > before ? after - before : 0;
}

/* Whether src's kept value replaces dst's in a merge of function f. */
static bool merge_takes(ExprFunc f, const Acc *dst, const Acc *src) {
  bool earlier = src->pos < dst->pos;
  int c;
  switch (f) {
  case FUNC_FIRST: return earlier;
  case FUNC_LAST: return !earlier;
  case FUNC_AMIN: c = value_compare(&src->v, &dst->v); return c < 0 || (c == 0 && earlier);
  case FUNC_AMAX: c = value_compare(&src->v, &dst->v); return c > 0 || (c == 0 && earlier);
  case FUNC_ARG_MIN: c = value_compare(&src->by, &dst->by); return c < 0 || (c == 0 && earlier);
  case FUNC_ARG_MAX: c = value_compare(&src->by, &dst->by); return c > 0 || (c == 0 && earlier);
  default: return false;
  }
}

size_t acc_merge(ExprFunc f, Type arg, Acc *dst, int64_t seen_dst, const Acc *src, int64_t seen_src) {
  if (!seen_src) return 0;
  if (!seen_dst) { /* dst is empty: a copy of src */
    size_t bytes = 0;
    if (f == FUNC_COUNT_DISTINCT) {
      if (src->set)
        for (size_t i = 0; i < src->set->cap; i++)
          if (src->set->vals[i].type != TYPE_NONE) bytes += set_add(&dst->set, &src->set->vals[i]);
      return bytes;
    }
    dst->isum = src->isum, dst->ihi = src->ihi, dst->dsum = src->dsum;
    if (src->v.type != TYPE_NONE) {
      size_t before = dst->cap + dst->bycap;
      held_store(&dst->v, &dst->cap, &src->v);
      if (src->by.type != TYPE_NONE) held_store(&dst->by, &dst->bycap, &src->by);
      dst->pos = src->pos;
      bytes += dst->cap + dst->bycap > before ? dst->cap + dst->bycap - before : 0;
    }
    return bytes;
  }
  switch (f) {
  case FUNC_SUM:
    if (arg == TYPE_INT) {
      /* the exact totals over 128 bits: add src's high word and low word */
      uint64_t lo = dst->isum + src->isum;
      dst->ihi += src->ihi + (lo < dst->isum);
      dst->isum = lo;
    } else
      dst->dsum += src->dsum;
    return 0;
  case FUNC_AVG: dst->dsum += src->dsum; return 0;
  case FUNC_COUNT_DISTINCT: {
    size_t bytes = 0;
    if (src->set)
      for (size_t i = 0; i < src->set->cap; i++)
        if (src->set->vals[i].type != TYPE_NONE) bytes += set_add(&dst->set, &src->set->vals[i]);
    return bytes;
  }
  case FUNC_COUNT: return 0;
  default: break;
  }
  if (!merge_takes(f, dst, src)) return 0;
  size_t before = dst->cap + dst->bycap;
  held_store(&dst->v, &dst->cap, &src->v);
  if (f == FUNC_ARG_MIN || f == FUNC_ARG_MAX) held_store(&dst->by, &dst->bycap, &src->by);
  dst->pos = src->pos;
  return dst->cap + dst->bycap > before ? dst->cap + dst->bycap - before : 0;
}

bool acc_value(ExprFunc f, Type arg, const Acc *acc, int64_t n, Value *v) {
  int64_t sum;
  switch (f) {
  case FUNC_COUNT: *v = value_int(n); return true;
  case FUNC_SUM:
    if (arg == TYPE_INT) {
      bool fits = wide_get(acc->isum, acc->ihi, &sum);
      *v = value_int(sum);
      return fits;
    }
    *v = value_double(acc->dsum);
    return true;
  case FUNC_AVG: *v = value_double(acc->dsum / (double)n); return true;
  case FUNC_COUNT_DISTINCT: *v = value_int(acc->set ? (int64_t)acc->set->n : 0); return true;
  case FUNC_AMIN: case FUNC_AMAX: case FUNC_FIRST: case FUNC_LAST: case FUNC_ARG_MIN: case FUNC_ARG_MAX:
    *v = acc->v;
    return true;
  default: *v = value_int(0); return true; /* a slot no set uses */
  }
}

size_t acc_bytes(const Acc *acc) {
  return acc->cap + acc->bycap + set_bytes(acc->set);
}

void acc_release(Acc *acc) {
  held_release(&acc->v, &acc->cap);
  held_release(&acc->by, &acc->bycap);
  set_free(acc->set);
  memset(acc, 0, sizeof *acc);
}

/* ---- checkpoints ---- */

void acc_snapshot(const Acc *acc, Buf *out) {
  snap_u64(out, acc->isum);
  snap_i64(out, acc->ihi);
  snap_f64(out, acc->dsum);
  snap_u64(out, acc->pos);
  snap_bool(out, acc->v.type != TYPE_NONE);
  if (acc->v.type != TYPE_NONE) snap_value(out, &acc->v);
  snap_bool(out, acc->by.type != TYPE_NONE);
  if (acc->by.type != TYPE_NONE) snap_value(out, &acc->by);
  snap_u64(out, acc->set ? acc->set->n : 0);
  if (acc->set)
    for (size_t i = 0; i < acc->set->cap; i++)
      if (acc->set->vals[i].type != TYPE_NONE) snap_value(out, &acc->set->vals[i]);
}

void acc_restore(Acc *acc, Type arg, SnapIn *in) {
  acc->isum = snap_get_u64(in);
  acc->ihi = snap_get_i64(in);
  acc->dsum = snap_get_f64(in);
  acc->pos = snap_get_u64(in);
  Value v;
  if (snap_get_bool(in)) {
    snap_get_value(in, &v);
    if (v.type != arg) in->bad = true;
    else held_store(&acc->v, &acc->cap, &v);
  }
  if (snap_get_bool(in)) {
    snap_get_value(in, &v);
    if (!in->bad) held_store(&acc->by, &acc->bycap, &v);
  }
  uint64_t n = snap_get_u64(in);
  if (n > in->n - in->off) in->bad = true; /* every value takes a byte at least */
  for (uint64_t i = 0; i < n && !in->bad; i++) {
    snap_get_value(in, &v);
    if (v.type != arg) in->bad = true;
    else set_add(&acc->set, &v);
  }
}
