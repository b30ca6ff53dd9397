/* timewin.c: event-time windows per key (timewin.h).
 *
 * A key's windows sit in an array sorted by start. Tumbling and hopping windows of one key all
 * have the same size, so their ends are sorted too; sessions are disjoint. Either way the windows
 * a tick closes are a prefix of each key's array, and a tick looks only at the keys that hold
 * windows (Tw.active), so its cost follows the windows it emits. Time arithmetic is done over 128
 * bits: a window near the ends of int64 neither wraps nor faults (its end is at most INT64_MAX,
 * which the final tick reaches). */
#include "timewin.h"

#include <stdlib.h>
#include <string.h>

typedef __int128 wide;

static int64_t clamp64(wide x) {
  return x > INT64_MAX ? INT64_MAX : x < INT64_MIN ? INT64_MIN : (int64_t)x;
}

/* Floor division by d > 0 (toward -infinity). */
static int64_t floor_div(int64_t x, int64_t d) {
  int64_t q = x / d;
  return (x % d != 0 && x < 0) ? q - 1 : q;
}

/* Whether a window ending at end is closed at tick t; the final tick (INT64_MAX, +infinity)
 * closes every window, whatever its end and the lateness. */
static bool closed(const Tw *tw, int64_t end, int64_t t) {
  return t == INT64_MAX || (wide)end + tw->spec.lateness <= t;
}

static size_t window_size(const Tw *tw) {
  return sizeof(TwWindow) + sizeof(Acc) * (size_t)tw->spec.naggs;
}

static size_t tuple_bytes(const Tuple *t) {
  size_t n = sizeof *t + sizeof(Value) * (size_t)t->n;
  for (int i = 0; i < t->n; i++)
    if (t->v[i].type == TYPE_STRING) n += t->v[i].s.n + 1;
  return n;
}

static bool charge(Tw *tw, size_t more) {
  return !tw->spec.charge || tw->spec.charge(tw->spec.ctx, more);
}

static void uncharge(Tw *tw, size_t less) {
  if (tw->spec.uncharge && less) tw->spec.uncharge(tw->spec.ctx, less);
}

void tw_init(Tw *tw, const TwSpec *spec) {
  memset(tw, 0, sizeof *tw);
  tw->spec = *spec;
  tw->tick = INT64_MIN;
}

/* k has windows now: it is looked at by ticks. */
static void activate(Tw *tw, TwKey *k) {
  if (k->active) return;
  if (tw->nactive == tw->cap) {
    tw->cap = tw->cap ? tw->cap * 2 : 16;
    tw->active = sf_xrealloc(tw->active, sizeof *tw->active * tw->cap);
  }
  tw->active[tw->nactive++] = k;
  k->active = tw->nactive;
}

static void deactivate(Tw *tw, TwKey *k) {
  if (!k->active) return;
  TwKey *moved = tw->active[--tw->nactive];
  tw->active[k->active - 1] = moved;
  moved->active = k->active;
  k->active = 0;
}

/* A new window [start, end) whose first tuple is t, at index `at` of k's array; NULL when its
 * memory was refused. */
static TwWindow *window_new(Tw *tw, TwKey *k, int at, int64_t start, int64_t end, Tuple *t, uint64_t pos) {
  size_t bytes = window_size(tw) + tuple_bytes(t) + (k->n == k->cap ? sizeof(TwWindow *) * (size_t)(k->cap ? k->cap : 4) : 0);
  if (!charge(tw, bytes)) return NULL;
  if (k->n == k->cap) {
    k->cap = k->cap ? k->cap * 2 : 4;
    k->w = sf_xrealloc(k->w, sizeof *k->w * (size_t)k->cap);
  }
  TwWindow *w = calloc(1, window_size(tw));
  if (!w) sf_die("out of memory");
  w->start = start;
  w->end = end;
  w->last = start;
  w->first_pos = pos;
  w->first = tuple_ref(t);
  w->bytes = window_size(tw) + tuple_bytes(t);
  memmove(&k->w[at + 1], &k->w[at], sizeof *k->w * (size_t)(k->n - at));
  k->w[at] = w;
  k->n++;
  activate(tw, k);
  return w;
}

/* Folds the tuple into w. false when the memory it needs was refused (a distinct value: it is
 * then folded anyway, the job failing). */
static bool fold(Tw *tw, TwWindow *w, const Value *args, const Value *by, uint64_t pos) {
  size_t more = 0;
  for (int s = 0; s < tw->spec.naggs; s++)
    if (acc_is_fold(tw->spec.func[s])) more += acc_add(tw->spec.func[s], &w->acc[s], w->n, &args[s], &by[s], pos);
  w->n++;
  if (more && !charge(tw, more)) return false;
  w->bytes += more;
  return true;
}

void tw_window_free(Tw *tw, TwWindow *w) {
  if (!w) return;
  for (int s = 0; s < tw->spec.naggs; s++) acc_release(&w->acc[s]);
  if (w->first) tuple_unref(w->first);
  uncharge(tw, w->bytes);
  free(w);
}

/* The index of the first window of k whose start (by_idx: idx) is >= start. */
static int find_start(const TwKey *k, int64_t start, bool by_idx) {
  int lo = 0, hi = k->n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if ((by_idx ? k->w[mid]->idx : k->w[mid]->start) < start) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Tumbling and hopping: the tuple goes into each of its SIZE/SLIDE windows not closed. */
static int add_fixed(Tw *tw, TwKey *k, int64_t time, const Value *args, const Value *by, Tuple *t, uint64_t pos) {
  int64_t slide = tw->spec.slide, nwin = tw->spec.size / slide;
  int64_t kmax = floor_div(time, slide);
  bool added = false;
  for (int64_t j = nwin - 1; j >= 0; j--) { /* ascending starts */
    int64_t idx = kmax - j; /* no wrap: |kmax| <= |INT64_MIN / slide| and j < SIZE / SLIDE */
    wide start = (wide)idx * slide;
    int64_t end = clamp64(start + tw->spec.size);
    if (end == INT64_MIN || closed(tw, end, tw->tick)) continue;
    int at = find_start(k, idx, true);
    TwWindow *w = at < k->n && k->w[at]->idx == idx ? k->w[at] : NULL;
    if (!w) {
      if (!(w = window_new(tw, k, at, clamp64(start), end, t, pos))) return -1;
      w->idx = idx;
    }
    if (!fold(tw, w, args, by, pos)) return -1;
    added = true;
  }
  if (added) return 0;
  k->late++;
  return 1;
}

/* Removes window index i of k from its array (not freed). */
static void remove_at(TwKey *k, int i) {
  memmove(&k->w[i], &k->w[i + 1], sizeof *k->w * (size_t)(k->n - i - 1));
  k->n--;
}

/* Sessions: joins, bridges or starts one. */
static int add_session(Tw *tw, TwKey *k, int64_t time, const Value *args, const Value *by, Tuple *t, uint64_t pos) {
  int64_t gap = tw->spec.size;
  if (tw->tick == INT64_MAX || (wide)time + gap + tw->spec.lateness <= tw->tick) {
    k->late++;
    return 1;
  }
  /* the sessions it is less than GAP from: start - GAP < time < last + GAP, a run of the array */
  int lo = -1, hi = -1;
  for (int i = 0; i < k->n; i++) {
    const TwWindow *w = k->w[i];
    if ((wide)w->start - gap < time && (wide)time < (wide)w->last + gap) {
      if (lo < 0) lo = i;
      hi = i;
    }
  }
  TwWindow *w;
  if (lo < 0) {
    w = window_new(tw, k, find_start(k, time, false), time, clamp64((wide)time + gap), t, pos);
    if (!w) return -1;
    w->last = time;
  } else {
    /* fold the sessions of [lo, hi] into the one whose first tuple arrived first, in the order
     * of their first tuples (two at most: open sessions are GAP apart) */
    while (hi > lo) {
      int a = lo, b = lo + 1;
      if (k->w[b]->first_pos < k->w[a]->first_pos) a = lo + 1, b = lo;
      TwWindow *dst = k->w[a], *src = k->w[b];
      size_t more = 0;
      for (int s = 0; s < tw->spec.naggs; s++)
        if (acc_is_fold(tw->spec.func[s]))
          more += acc_merge(tw->spec.func[s], tw->spec.type[s], &dst->acc[s], dst->n, &src->acc[s], src->n);
      bool ok = !more || charge(tw, more);
      if (ok) dst->bytes += more;
      dst->n += src->n;
      if (src->start < dst->start) dst->start = src->start;
      if (src->last > dst->last) dst->last = src->last;
      dst->end = clamp64((wide)dst->last + gap);
      remove_at(k, b);
      tw_window_free(tw, src);
      if (!ok) return -1;
      hi--;
    }
    w = k->w[lo];
    if (time < w->start) w->start = time;
    if (time > w->last) w->last = time;
    w->end = clamp64((wide)w->last + gap);
  }
  return fold(tw, w, args, by, pos) ? 0 : -1;
}

int tw_add(Tw *tw, TwKey *k, int64_t time, const Value *args, const Value *by, Tuple *t) {
  uint64_t pos = tw->arrivals++;
  return tw->spec.kind == WIN_SESSION_TIME ? add_session(tw, k, time, args, by, t, pos)
                                           : add_fixed(tw, k, time, args, by, t, pos);
}

int tw_compare(const Tw *tw, const TwWindow *a, const TwWindow *b) {
  if (a->end != b->end) return a->end < b->end ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  for (int i = 0; i < tw->spec.nkeys; i++) {
    int c = value_compare(&a->first->v[tw->spec.keyslots[i]], &b->first->v[tw->spec.keyslots[i]]);
    if (c) return c;
  }
  return a->idx < b->idx ? -1 : a->idx > b->idx; /* windows clamped to the same bounds */
}

static int compare_windows(const void *a, const void *b, void *ctx) {
  return tw_compare(ctx, *(TwWindow *const *)a, *(TwWindow *const *)b);
}

size_t tw_close(Tw *tw, int64_t t, TwWindow ***out) {
  if (t > tw->tick) tw->tick = t;
  size_t n = 0, cap = 0;
  TwWindow **list = NULL;
  for (size_t i = 0; i < tw->nactive;) {
    TwKey *k = tw->active[i];
    int m = 0;
    while (m < k->n && closed(tw, k->w[m]->end, tw->tick)) m++;
    /* hopping: windows sorted by start have sorted ends; sessions are disjoint: a prefix either way */
    if (m) {
      if (n + (size_t)m > cap) {
        cap = (n + (size_t)m) * 2;
        list = sf_xrealloc(list, sizeof *list * cap);
      }
      memcpy(&list[n], k->w, sizeof *list * (size_t)m);
      n += (size_t)m;
      memmove(k->w, &k->w[m], sizeof *k->w * (size_t)(k->n - m));
      k->n -= m;
    }
    if (k->n == 0) {
      uncharge(tw, sizeof *k->w * (size_t)k->cap);
      free(k->w);
      k->w = NULL;
      k->cap = 0;
      deactivate(tw, k); /* another key moved to index i */
    } else {
      i++;
    }
  }
  if (n > 1) qsort_r(list, n, sizeof *list, compare_windows, tw);
  *out = list;
  return n;
}

void tw_key_release(Tw *tw, TwKey *k) {
  for (int i = 0; i < k->n; i++) tw_window_free(tw, k->w[i]);
  uncharge(tw, sizeof *k->w * (size_t)k->cap);
  free(k->w);
  deactivate(tw, k);
  uint64_t late = k->late;
  memset(k, 0, sizeof *k);
  k->late = late;
}

void tw_release(Tw *tw) {
  free(tw->active);
  tw->active = NULL;
  tw->nactive = tw->cap = 0;
}

/* ---- checkpoints ---- */

void tw_snapshot(const Tw *tw, Buf *out) {
  snap_i64(out, tw->tick);
  snap_u64(out, tw->arrivals);
}

void tw_restore(Tw *tw, SnapIn *in) {
  int64_t tick = snap_get_i64(in);
  uint64_t arrivals = snap_get_u64(in);
  if (in->bad) return;
  if (tick > tw->tick) tw->tick = tick;
  if (arrivals > tw->arrivals) tw->arrivals = arrivals;
}

void tw_key_snapshot(const Tw *tw, const TwKey *k, Buf *out) {
  snap_u64(out, k->late);
  snap_u64(out, (uint64_t)k->n);
  for (int i = 0; i < k->n; i++) {
    const TwWindow *w = k->w[i];
    snap_i64(out, w->start);
    snap_i64(out, w->end);
    snap_i64(out, w->last);
    snap_i64(out, w->idx);
    snap_u64(out, w->first_pos);
    snap_i64(out, w->n);
    snap_u64(out, (uint64_t)w->first->n);
    for (int v = 0; v < w->first->n; v++) snap_value(out, &w->first->v[v]);
    for (int s = 0; s < tw->spec.naggs; s++) acc_snapshot(&w->acc[s], out);
  }
}

int tw_key_restore(Tw *tw, TwKey *k, SnapIn *in, int nvals) {
  k->late = snap_get_u64(in);
  uint64_t n = snap_get_u64(in);
  if (n > in->n - in->off) in->bad = true;
  Value *vals = sf_xmalloc(sizeof *vals * ((size_t)nvals + 1));
  int rc = 0;
  for (uint64_t i = 0; i < n && !in->bad; i++) {
    int64_t start = snap_get_i64(in), end = snap_get_i64(in), last = snap_get_i64(in), idx = snap_get_i64(in);
    uint64_t first_pos = snap_get_u64(in);
    int64_t count = snap_get_i64(in);
    if (snap_get_u64(in) != (uint64_t)nvals) in->bad = true;
    for (int v = 0; v < nvals && !in->bad; v++) snap_get_value(in, &vals[v]);
    bool session = tw->spec.kind == WIN_SESSION_TIME;
    if (in->bad || count < 1 || end < start ||
        (k->n && (session ? start <= k->w[k->n - 1]->start : idx <= k->w[k->n - 1]->idx))) {
      in->bad = true;
      break;
    }
    Tuple *t = tuple_new(vals, nvals);
    TwWindow *w = window_new(tw, k, k->n, start, end, t, first_pos);
    tuple_unref(t);
    if (!w) {
      rc = -1;
      break;
    }
    w->last = last;
    w->idx = idx;
    w->n = count;
    size_t before = 0, after = 0;
    for (int s = 0; s < tw->spec.naggs; s++) {
      before += acc_bytes(&w->acc[s]);
      acc_restore(&w->acc[s], tw->spec.type[s], in);
      after += acc_bytes(&w->acc[s]);
    }
    w->bytes += after - before;
    if (after > before && !charge(tw, after - before)) {
      w->bytes -= after - before;
      rc = -1;
      break;
    }
  }
  free(vals);
  return rc;
}
