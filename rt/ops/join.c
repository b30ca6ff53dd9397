/* join.c: the Join kind (docs/language.md, "Joins"). Its two inputs (port 0 left, port 1 right)
 * arrive as one time-ordered fan-in (plan.c gives its group the DRIVE_TIME driver over both ports).
 * A tuple that is late (time + lateness below the current tick; tumbling: its window closed) is
 * dropped and counted. Any other is matched against the kept tuples of the other side with its key,
 * in their arrival order; each pair within the window that passes `where` is emitted (output i of
 * the arriving tuple, rt_emit_nth); then the tuple is kept until the tick passes the last time a
 * later tuple could match it. A tick T evicts those and leaves as T - join_tick_delay.
 *
 * Kept tuples live in a table of keys (chained, power-of-two buckets), each key holding one list
 * per side in arrival order; a min-heap on the eviction time finds what a tick evicts. An evicted
 * tuple is released at once and its list entry compacted away later; a key whose lists are empty
 * is freed. Memory is bounded by the window: what is kept is what a later tuple could still match. */
#include "keyed.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct JKey JKey;

/* A kept tuple. */
typedef struct Kept {
  Tuple *t;       /* NULL once evicted */
  int64_t time;   /* its event time */
  int64_t keep;   /* kept while the current tick is at most this */
  JKey *key;      /* its key */
  int side;       /* 0 left, 1 right */
} Kept;

struct JKey {
  JKey *next;     /* the bucket's chain */
  uint64_t hash;
  Value *vals;    /* the key's values (strings held: cap) */
  size_t *cap;
  Kept **list[2]; /* per side, in arrival order (evicted ones until compacted) */
  int n[2], room[2], dead[2];
};

typedef struct Join {
  JoinSpec spec;
  const Schema *sch[2];  /* the sides' schemas */
  int time_slot[2];      /* each side's event-time attribute */
  Arena *arena;          /* spec, compiled code */
  Arena *scratch;        /* strings of one output */
  const Code *where;     /* NULL: none */
  LetPlan lets;          /* evaluated per match, in document order with the sets */
  int nsets;             /* the sets, in document order */
  const Code **set_code; /* each compiled */
  int nout;              /* output attributes */
  bool *is_set;          /* per output attribute: a set computes it (else forwarded) */
  int *from_side, *from; /* per forwarded attribute: the side and its attribute there */
  Value *vals;           /* the output values being built */
  JKey **buckets;
  size_t nbuckets, nkeys;
  Kept **heap;           /* min-heap on keep */
  size_t nheap, heap_room;
  int64_t tick;          /* the current tick (TICK_NONE: none yet) */
  uint64_t kept;         /* tuples kept now (stats, benchmarks) */
  uint64_t kept_bytes;   /* their tuples' bytes, roughly */
  char first_late[512];  /* the first late tuple, described */
} Join;

static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The start of the tumbling window of time t. */
static int64_t window_start(const Join *j, int64_t t) {
  return floor_div(t, j->spec.size) * j->spec.size;
}

/* The largest tick at which a tuple of side s at time t may still be matched by a later one. */
static int64_t keep_until(const Join *j, int side, int64_t t) {
  const JoinSpec *s = &j->spec;
  if (s->tumbling) return sat_add(sat_add(window_start(j, t), s->size), s->lateness - 1);
  return sat_add(sat_add(t, side == 0 ? s->upper : -s->lower), s->lateness);
}

/* Whether a tuple at time t comes too late for the current tick. */
static bool is_late(const Join *j, int64_t t) {
  if (j->tick == TICK_NONE) return false;
  if (j->spec.tumbling)
    return sat_add(sat_add(window_start(j, t), j->spec.size), j->spec.lateness) <= j->tick;
  return sat_add(t, j->spec.lateness) < j->tick;
}

/* Whether a left tuple at lt and a right one at rt are within the window. */
static bool in_window(const Join *j, int64_t lt, int64_t rt) {
  if (j->spec.tumbling) return window_start(j, lt) == window_start(j, rt);
  __int128 d = (__int128)rt - (__int128)lt;
  return d >= j->spec.lower && d <= j->spec.upper;
}

static uint64_t key_hash(const Join *j, int side, const Tuple *t) {
  uint64_t h = SF_HASH_SEED;
  for (int k = 0; k < j->spec.nkeys; k++) h = value_hash(&t->v[j->spec.key[side][k]], h);
  return h;
}

static bool key_equal(const Join *j, const JKey *key, int side, const Tuple *t) {
  for (int k = 0; k < j->spec.nkeys; k++)
    if (!value_equal(&key->vals[k], &t->v[j->spec.key[side][k]])) return false;
  return true;
}

static JKey *key_find(Join *j, int side, const Tuple *t, uint64_t h) {
  if (!j->nbuckets) return NULL;
  for (JKey *k = j->buckets[h & (j->nbuckets - 1)]; k; k = k->next)
    if (k->hash == h && key_equal(j, k, side, t)) return k;
  return NULL;
}

static void table_grow(Join *j) {
  size_t n = j->nbuckets ? j->nbuckets * 2 : 64;
  JKey **b = calloc(n, sizeof *b);
  if (!b) sf_die("out of memory");
  for (size_t i = 0; i < j->nbuckets; i++)
    for (JKey *k = j->buckets[i], *next; k; k = next) {
      next = k->next;
      k->next = b[k->hash & (n - 1)];
      b[k->hash & (n - 1)] = k;
    }
  free(j->buckets);
  j->buckets = b;
  j->nbuckets = n;
}

/* A new key of values vals[0..nkeys), whose hash is h. */
static JKey *key_add_vals(Join *j, const Value *vals, uint64_t h) {
  if ((j->nkeys + 1) * 4 > j->nbuckets * 3) table_grow(j);
  JKey *k = sf_xmalloc(sizeof *k);
  memset(k, 0, sizeof *k);
  k->hash = h;
  k->vals = calloc((size_t)j->spec.nkeys + 1, sizeof *k->vals);
  k->cap = calloc((size_t)j->spec.nkeys + 1, sizeof *k->cap);
  if (!k->vals || !k->cap) sf_die("out of memory");
  for (int i = 0; i < j->spec.nkeys; i++) held_store(&k->vals[i], &k->cap[i], &vals[i]);
  size_t b = h & (j->nbuckets - 1);
  k->next = j->buckets[b];
  j->buckets[b] = k;
  j->nkeys++;
  return k;
}

static JKey *key_add(Join *j, int side, const Tuple *t, uint64_t h) {
  Value *v = calloc((size_t)j->spec.nkeys + 1, sizeof *v); /* (once per new key) */
  if (!v) sf_die("out of memory");
  for (int i = 0; i < j->spec.nkeys; i++) v[i] = t->v[j->spec.key[side][i]];
  JKey *k = key_add_vals(j, v, h);
  free(v);
  return k;
}

static void key_free(Join *j, JKey *k) {
  JKey **p = &j->buckets[k->hash & (j->nbuckets - 1)];
  while (*p != k) p = &(*p)->next;
  *p = k->next;
  for (int i = 0; i < j->spec.nkeys; i++) held_release(&k->vals[i], &k->cap[i]);
  free(k->vals);
  free(k->cap);
  for (int s = 0; s < 2; s++) {
    for (int i = 0; i < k->n[s]; i++) free(k->list[s][i]);
    free(k->list[s]);
  }
  free(k);
  j->nkeys--;
}

/* ---- the heap of kept tuples, on keep ---- */

static void heap_push(Join *j, Kept *x) {
  if (j->nheap == j->heap_room) {
    j->heap_room = j->heap_room ? j->heap_room * 2 : 256;
    j->heap = realloc(j->heap, sizeof *j->heap * j->heap_room);
    if (!j->heap) sf_die("out of memory");
  }
  size_t i = j->nheap++;
  while (i > 0) {
    size_t up = (i - 1) / 2;
    if (j->heap[up]->keep <= x->keep) break;
    j->heap[i] = j->heap[up];
    i = up;
  }
  j->heap[i] = x;
}

static Kept *heap_pop(Join *j) {
  Kept *top = j->heap[0], *last = j->heap[--j->nheap];
  size_t i = 0, n = j->nheap;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && j->heap[c + 1]->keep < j->heap[c]->keep) c++;
    if (last->keep <= j->heap[c]->keep) break;
    j->heap[i] = j->heap[c];
    i = c;
  }
  if (n) j->heap[i] = last;
  return top;
}

/* Drops the evicted entries of a key's list of side s (they are freed here). */
static void compact(JKey *k, int s) {
  int w = 0;
  for (int i = 0; i < k->n[s]; i++) {
    if (k->list[s][i]->t)
      k->list[s][w++] = k->list[s][i];
    else
      free(k->list[s][i]);
  }
  k->n[s] = w;
  k->dead[s] = 0;
}

static size_t tuple_bytes(const Tuple *t) {
  size_t n = sizeof(Tuple) + sizeof(Value) * (size_t)t->n;
  for (int i = 0; i < t->n; i++)
    if (t->v[i].type == TYPE_STRING) n += t->v[i].s.n;
  return n;
}

/* Keeps t (of side s, at time `time`) under key k: at the end of k's list of its side, in the heap. */
static void keep_tuple(OpInst *op, Join *j, JKey *k, int side, Tuple *t, int64_t time, int64_t keep) {
  if (k->n[side] == k->room[side]) {
    k->room[side] = k->room[side] ? k->room[side] * 2 : 4;
    k->list[side] = realloc(k->list[side], sizeof(Kept *) * (size_t)k->room[side]);
    if (!k->list[side]) sf_die("out of memory");
  }
  Kept *x = sf_xmalloc(sizeof *x);
  *x = (Kept){.t = t, .time = time, .keep = keep, .key = k, .side = side};
  k->list[side][k->n[side]++] = x;
  heap_push(j, x);
  j->kept++;
  j->kept_bytes += tuple_bytes(t);
  if (j->kept > atomic_load_explicit(&op->kept_peak, memory_order_relaxed))
    atomic_store_explicit(&op->kept_peak, j->kept, memory_order_relaxed);
  if (j->kept_bytes > atomic_load_explicit(&op->kept_peak_bytes, memory_order_relaxed))
    atomic_store_explicit(&op->kept_peak_bytes, j->kept_bytes, memory_order_relaxed);
}

/* Evicts every kept tuple whose keep is below tick. */
static void evict(Join *j, int64_t tick) {
  while (j->nheap && j->heap[0]->keep < tick) {
    Kept *x = heap_pop(j);
    JKey *k = x->key;
    j->kept--;
    j->kept_bytes -= tuple_bytes(x->t);
    tuple_unref(x->t);
    x->t = NULL;
    int s = x->side;
    if (++k->dead[s] * 2 > k->n[s]) compact(k, s);
    if (k->n[0] - k->dead[0] == 0 && k->n[1] - k->dead[1] == 0) key_free(j, k);
  }
}

/* ---- open ---- */

static int join_open(OpInst *op) {
  Join *j = sf_xmalloc(sizeof *j);
  memset(j, 0, sizeof *j);
  op->state = j;
  j->arena = arena_new();
  j->scratch = arena_new();
  j->tick = TICK_NONE;
  Op *o = op->op;
  if (join_spec(o, j->arena, &j->spec, NULL) < 0) return rt_fail(op, "Join has unreadable parameters 'on' or 'window'");
  for (int s = 0; s < 2; s++) {
    j->sch[s] = join_side_schema(o, s);
    const Stream *st = o->inputs[s].streams[0];
    j->time_slot[s] = stream_time_slot(NULL, st);
    if (!j->sch[s] || j->time_slot[s] < 0) return rt_fail(op, "Join has a side without event time");
  }
  if (o->where) j->where = code_compile(o->where, j->arena);
  letplan_init(&j->lets, o, j->arena);
  const Schema *out = op->out_schema;
  j->nout = out->nattrs;
  j->nsets = o->nsets;
  j->set_code = arena_alloc(j->arena, sizeof *j->set_code * (size_t)(j->nsets + 1));
  j->is_set = arena_alloc(j->arena, sizeof(bool) * (size_t)(j->nout + 1));
  j->from_side = arena_alloc(j->arena, sizeof(int) * (size_t)(j->nout + 1));
  j->from = arena_alloc(j->arena, sizeof(int) * (size_t)(j->nout + 1));
  j->vals = arena_alloc(j->arena, sizeof(Value) * (size_t)(j->nout + 1));
  for (int i = 0; i < j->nsets; i++) {
    if (!o->sets[i].expr || o->sets[i].slot < 0 || o->sets[i].slot >= j->nout)
      return rt_fail(op, "set '%s' is not checked", o->sets[i].attr);
    j->set_code[i] = code_compile(o->sets[i].expr, j->arena);
  }
  for (int a = 0; a < j->nout; a++) {
    j->is_set[a] = false;
    for (int i = 0; i < o->nsets; i++)
      if (o->sets[i].slot == a) j->is_set[a] = true;
    if (!j->is_set[a]) {
      j->from_side[a] = join_forward_side(o, out, a, &j->from[a]);
      if (j->from_side[a] < 0) return rt_fail(op, "output attribute '%s' is neither set nor forwarded", out->attrs[a].name);
    }
  }
  return 0;
}

/* An expression's fault on the pair (l, r): names what, the text, and both tuples. -1. */
static int pair_fail(OpInst *op, const Join *j, const Code *c, const EvalEnv *env, const char *what,
                     const char *text, const Tuple *l, const Tuple *r) {
  char err[256], lt[512], rtd[512];
  Value ignored;
  err[0] = 0;
  code_eval(c, env, &ignored, err, sizeof err);
  tuple_describe(l, j->sch[0], lt, sizeof lt);
  tuple_describe(r, j->sch[1], rtd, sizeof rtd);
  return rt_fail(op, "%s: %s in '%s' on left %s and right %s", what, err, text, lt, rtd);
}

/* Evaluates lets [*done, to) of the match in env (each sees the ones before). 0 or -1. */
static int eval_lets(OpInst *op, Join *j, EvalEnv *env, int *done, int to, const Tuple *l, const Tuple *r) {
  for (; *done < to; (*done)++) {
    int k = *done;
    if (code_eval(j->lets.code[k], env, &j->lets.vals[k], NULL, 0) < 0) {
      char what[300];
      snprintf(what, sizeof what, "let '%s'", j->lets.lets[k].name);
      return pair_fail(op, j, j->lets.code[k], env, what, j->lets.lets[k].text, l, r);
    }
  }
  return 0;
}

/* Emits the match (l, r) as output i of the tuple being processed, when `where` holds: its lets
 * and sets in document order, then `where` (as in every kind), then the forwarded attributes. 1
 * when emitted, 0 when `where` refused it, -1 after a failure. */
static int emit_pair(OpInst *op, Join *j, const Tuple *l, const Tuple *r, uint64_t i) {
  const Value *sides[2] = {l->v, r->v};
  EvalEnv env = {.sides = sides, .lets = j->lets.vals, .scratch = j->scratch};
  const Set *sets = op->op->sets;
  int done = 0;
  Value v;
  for (int s = 0; s < j->nsets; s++) {
    if (eval_lets(op, j, &env, &done, sets[s].lets_before, l, r) < 0) return -1;
    if (code_eval(j->set_code[s], &env, &j->vals[sets[s].slot], NULL, 0) < 0) {
      char what[300];
      snprintf(what, sizeof what, "set '%s'", sets[s].attr);
      return pair_fail(op, j, j->set_code[s], &env, what, sets[s].text, l, r);
    }
  }
  if (eval_lets(op, j, &env, &done, j->lets.n, l, r) < 0) return -1;
  if (j->where) {
    if (code_eval(j->where, &env, &v, NULL, 0) < 0)
      return pair_fail(op, j, j->where, &env, "where", rt_param(op, "where"), l, r);
    if (!v.b) {
      arena_reset(j->scratch);
      return 0;
    }
  }
  for (int a = 0; a < j->nout; a++)
    if (!j->is_set[a]) j->vals[a] = sides[j->from_side[a]][j->from[a]];
  Tuple *out = tuple_new(j->vals, j->nout);
  arena_reset(j->scratch);
  return rt_emit_nth(op, 0, out, i) < 0 ? -1 : 1;
}

static void note_late(OpInst *op, Join *j, int side, const Tuple *t) {
  atomic_fetch_add_explicit(&op->n_late, 1, memory_order_relaxed);
  if (j->first_late[0]) return;
  char d[480];
  tuple_describe(t, j->sch[side], d, sizeof d);
  snprintf(j->first_late, sizeof j->first_late, "%s %s", side == 0 ? "left" : "right", d);
}

static int join_process(OpInst *op, int port, Tuple *t) {
  Join *j = op->state;
  int side = port ? 1 : 0, other = 1 - side;
  int64_t time = t->v[j->time_slot[side]].i;
  if (is_late(j, time)) {
    note_late(op, j, side, t);
    tuple_unref(t);
    return 0;
  }
  uint64_t h = key_hash(j, side, t);
  JKey *k = key_find(j, side, t, h);
  uint64_t emitted = 0;
  if (k) {
    for (int i = 0; i < k->n[other]; i++) {
      const Kept *x = k->list[other][i];
      if (!x->t) continue;
      const Tuple *l = side == 0 ? t : x->t, *r = side == 0 ? x->t : t;
      if (!in_window(j, side == 0 ? time : x->time, side == 0 ? x->time : time)) continue;
      int rc = emit_pair(op, j, l, r, emitted);
      if (rc < 0) {
        tuple_unref(t);
        return -1;
      }
      emitted += (uint64_t)rc;
    }
  }
  /* keep it for the tuples to come, unless no later tick could let one match it */
  int64_t keep = keep_until(j, side, time);
  if (j->tick != TICK_NONE && keep < j->tick) {
    tuple_unref(t);
    return 0;
  }
  if (!k) k = key_add(j, side, t, h);
  keep_tuple(op, j, k, side, t, time, keep);
  return 0;
}

/* A tick T: evicts what no later tuple can match, then passes T on late by the window. */
static int join_tick(OpInst *op, int port, int64_t t) {
  (void)port;
  Join *j = op->state;
  j->tick = t;
  evict(j, t);
  int64_t on = t == TICK_FINAL ? t : sat_add(t, -join_tick_delay(&j->spec));
  if (on == INT64_MIN) return 0; /* (below every tick: nothing to say yet) */
  return rt_emit_tick(op, 0, on);
}

static int join_final(OpInst *op) {
  Join *j = op->state;
  evict(j, TICK_FINAL);
  unsigned long long late = atomic_load(&op->n_late);
  if (late)
    rt_warn(op, "%llu late tuple%s dropped (event time + lateness behind the current tick); the first: %s", late,
            late == 1 ? "" : "s", j->first_late);
  return 0;
}

/* ---- checkpoints ----
 * The layout: the window (a restore checks it is the operator's), the current tick, then the
 * number of keys and per key its values (in `on` order, the left side's types) and per side the
 * number of kept tuples and each one's time and values, in arrival order. A restore at another
 * width keeps the keys its replica owns (rt_owns_key: the left side's attributes stand for the
 * pairs, which the region's Split hashes alike) and drops the others. */

static void put_tuple(Buf *out, const Tuple *t) {
  snap_u64(out, (uint64_t)t->n);
  for (int i = 0; i < t->n; i++) snap_value(out, &t->v[i]);
}

static int join_snapshot(OpInst *op, Buf *out) {
  Join *j = op->state;
  snap_u64(out, j->spec.tumbling);
  snap_i64(out, j->spec.lower);
  snap_i64(out, j->spec.upper);
  snap_i64(out, j->spec.size);
  snap_i64(out, j->spec.lateness);
  snap_u64(out, (uint64_t)j->spec.nkeys);
  snap_i64(out, j->tick);
  snap_u64(out, j->nkeys);
  for (size_t b = 0; b < j->nbuckets; b++)
    for (JKey *k = j->buckets[b]; k; k = k->next) {
      for (int i = 0; i < j->spec.nkeys; i++) snap_value(out, &k->vals[i]);
      for (int s = 0; s < 2; s++) {
        snap_u64(out, (uint64_t)(k->n[s] - k->dead[s]));
        for (int i = 0; i < k->n[s]; i++) {
          const Kept *x = k->list[s][i];
          if (!x->t) continue;
          snap_i64(out, x->time);
          put_tuple(out, x->t);
        }
      }
    }
  return 0;
}

/* A tuple of side s read back, checked against the side's schema; NULL when it does not fit. */
static Tuple *get_tuple(Join *j, int s, SnapIn *in) {
  const Schema *sch = j->sch[s];
  uint64_t n = snap_get_u64(in);
  if (in->bad || n != (uint64_t)sch->nattrs) return NULL;
  Value *vals = calloc((size_t)n + 1, sizeof *vals);
  if (!vals) sf_die("out of memory");
  bool ok = true;
  for (uint64_t i = 0; i < n && ok; i++) {
    snap_get_value(in, &vals[i]);
    ok = !in->bad && vals[i].type == sch->attrs[i].type;
  }
  Tuple *t = ok ? tuple_new(vals, (int)n) : NULL;
  free(vals);
  return t;
}

static int join_restore(OpInst *op, SnapIn *in) {
  Join *j = op->state;
  bool tumbling = snap_get_u64(in) != 0;
  int64_t lower = snap_get_i64(in), upper = snap_get_i64(in), size = snap_get_i64(in), lateness = snap_get_i64(in);
  uint64_t nk = snap_get_u64(in);
  int64_t tick = snap_get_i64(in);
  uint64_t nkeys = snap_get_u64(in);
  if (in->bad) return keyed_restore_end(op, in);
  if (tumbling != j->spec.tumbling || lower != j->spec.lower || upper != j->spec.upper || size != j->spec.size ||
      lateness != j->spec.lateness || nk != (uint64_t)j->spec.nkeys)
    return rt_fail(op, "the snapshot is of another window or key (window %s, lateness %lld, %llu key pairs)",
                   tumbling ? "tumbling time" : "interval", (long long)lateness, (unsigned long long)nk);
  if (tick > j->tick) j->tick = tick;
  Value *vals = calloc((size_t)nk + 1, sizeof *vals);
  if (!vals) sf_die("out of memory");
  int rc = 0;
  for (uint64_t i = 0; i < nkeys && !in->bad && rc == 0; i++) {
    for (uint64_t k = 0; k < nk; k++) {
      snap_get_value(in, &vals[k]);
      if (vals[k].type != j->sch[0]->attrs[j->spec.key[0][k]].type) in->bad = true;
    }
    if (in->bad) break;
    bool mine = rt_owns_key(op, vals, j->spec.key[0], (int)nk);
    uint64_t h = SF_HASH_SEED;
    for (uint64_t k = 0; k < nk; k++) h = value_hash(&vals[k], h);
    JKey *key = NULL;
    if (mine) {
      for (JKey *e = j->nbuckets ? j->buckets[h & (j->nbuckets - 1)] : NULL; e && !key; e = e->next) {
        bool same = e->hash == h;
        for (uint64_t k = 0; same && k < nk; k++) same = value_equal(&e->vals[k], &vals[k]);
        if (same) key = e;
      }
      if (key) {
        rc = rt_fail(op, "a key is in two snapshots: they do not belong together");
        break;
      }
      key = key_add_vals(j, vals, h); /* (copies the values: the next tuple's reads reuse vals) */
    }
    for (int s = 0; s < 2 && !in->bad; s++) {
      uint64_t n = snap_get_u64(in);
      for (uint64_t x = 0; x < n && !in->bad; x++) {
        int64_t time = snap_get_i64(in);
        Tuple *t = get_tuple(j, s, in);
        if (!t) {
          in->bad = true;
          break;
        }
        bool fits = !mine || (t->v[j->time_slot[s]].i == time && key_equal(j, key, s, t));
        if (!mine) {
          tuple_unref(t);
        } else if (!fits) {
          tuple_unref(t);
          in->bad = true;
        } else {
          keep_tuple(op, j, key, s, t, time, keep_until(j, s, time));
        }
      }
    }
    if (key && key->n[0] == 0 && key->n[1] == 0) key_free(j, key);
  }
  free(vals);
  if (rc < 0) return rc;
  return keyed_restore_end(op, in);
}

static void join_close(OpInst *op, bool ok) {
  (void)ok;
  Join *j = op->state;
  if (!j) return;
  for (size_t i = 0; i < j->nheap; i++) {
    tuple_unref(j->heap[i]->t);
    j->heap[i]->t = NULL;
  }
  for (size_t b = 0; b < j->nbuckets; b++)
    while (j->buckets[b]) key_free(j, j->buckets[b]);
  free(j->buckets);
  free(j->heap);
  arena_free(j->arena);
  arena_free(j->scratch);
  free(j);
  op->state = NULL;
}

const OpKindImpl op_join = {
  .kind = KIND_JOIN,
  .open = join_open,
  .process = join_process,
  .tick = join_tick,
  .final = join_final,
  .snapshot = join_snapshot,
  .restore = join_restore,
  .close = join_close,
};
