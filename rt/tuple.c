/* tuple.c: reference-counted immutable rows, and the per-thread pools of blocks they live in.
 *
 * A tuple is one block: the header, the values and the bytes of every string value, so a tuple
 * never points outside itself. Either a block of its own (tuple_new), or one of many in a slab: the
 * tuples of one wire batch, decoded straight into one block (tuple_slab_begin, wire.c), which is
 * freed when the last of its tuples is. A tuple in a slab costs no allocation of its own and, when
 * it dies, one atomic decrement of its slab's count of live tuples (which stays in the consumer's
 * cache) instead of a push onto another thread's return stack. A tuple kept alive keeps its whole
 * slab: what an operator keeps for long (op.h's sf_tuple_retain) it keeps through tuple_keep,
 * which copies a tuple out of its slab, so only batches in flight hold slabs.
 *
 * Blocks come from per-thread pools, so that steady state allocates nothing: the thread that makes
 * a block (a source's tuples, wire_decode's slabs, a batch) is rarely the one that frees it (the
 * next stage), and malloc/free across threads defeats glibc's per-thread caches. Each block starts
 * with a hidden Hdr naming its pool and size class (powers of two from 64 bytes to 1 MiB; larger
 * blocks are plain malloc). A block freed on its pool's thread goes onto that pool's local free
 * list; freed on any other thread, it is pushed onto the pool's return stack (lock-free, many
 * pushers, one taker: the owner takes the whole stack with one atomic exchange and never pops single
 * nodes, so there is no ABA). The owner refills an empty local list from the return stack before it
 * calls malloc, and a local list holds at most POOL_LIST_BYTES: the excess is freed.
 *
 * A thread's pool outlives the thread: blocks it made may still be in flight. When the thread exits
 * (the destructor of pool_key), the pool frees what its lists hold and is put aside as an orphan;
 * blocks in flight still return to its stack, and the next thread that needs a pool adopts it.
 * Every pool stays on a global list (never freed: there are at most as many as threads ever ran at
 * once), so what an orphan's stack holds is always reachable and LeakSanitizer stays quiet. */
#include "rt.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

enum {
  POOL_MIN_SHIFT = 6,                 /* the smallest class: 64 bytes */
  POOL_CLASSES = 15,                  /* 64, 128, ..., 1 MiB */
  POOL_LARGE = POOL_CLASSES,          /* the class of a plain malloc'd block */
  POOL_SLAB = POOL_CLASSES + 1,       /* the class of a tuple inside a slab */
  POOL_LIST_BYTES = 1 << 20,          /* the most a local free list keeps */
};

typedef struct Pool Pool;

/* What precedes every block and every Tuple (16 bytes, so what follows stays aligned as malloc
 * aligns). */
typedef struct Hdr {
  void *owner;  /* the Pool of a pool block, the Slab of a tuple in a slab, NULL for a large block */
  int cls;      /* size class, POOL_LARGE or POOL_SLAB */
  int pad;
} Hdr;

/* The start of a slab's block (a pool block), before its tuples (16 bytes: they stay aligned). */
typedef struct Slab {
  atomic_int live;  /* tuples not yet freed */
  int pad[3];
} Slab;

/* A free block: the link lives in the tuple's own bytes, after the header. */
typedef struct Free {
  Hdr h;
  struct Free *next;
} Free;

struct Pool {
  Free *local[POOL_CLASSES];  /* the owner's free lists */
  int nlocal[POOL_CLASSES];
  Pool *all_next;             /* the global list of every pool (under pools_mu) */
  Pool *orphan_next;          /* the list of pools without a thread (under pools_mu) */
  alignas(64) _Atomic(Free *) returned; /* blocks freed on other threads: the return stack */
  char pad[64 - sizeof(void *)];
};

static _Thread_local Pool *my_pool;
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t pools_mu = PTHREAD_MUTEX_INITIALIZER;
static Pool *all_pools, *orphans;

static size_t class_size(int c) {
  return (size_t)1 << (c + POOL_MIN_SHIFT);
}

static int list_cap(int c) {
  return (int)(POOL_LIST_BYTES / class_size(c));
}

/* Frees what the lists and the return stack hold (the pool's thread is leaving). */
static void pool_trim(Pool *p) {
  for (int c = 0; c < POOL_CLASSES; c++) {
    while (p->local[c]) {
      Free *f = p->local[c];
      p->local[c] = f->next;
      free(f);
    }
    p->nlocal[c] = 0;
  }
  Free *f = atomic_exchange_explicit(&p->returned, NULL, memory_order_acquire);
  while (f) {
    Free *next = f->next;
    free(f);
    f = next;
  }
}

static void pool_orphan(void *arg) {
  Pool *p = arg;
  if (my_pool == p) my_pool = NULL;
  pool_trim(p);
  pthread_mutex_lock(&pools_mu);
  p->orphan_next = orphans;
  orphans = p;
  pthread_mutex_unlock(&pools_mu);
}

static void make_pool_key(void) {
  if (pthread_key_create(&pool_key, pool_orphan) != 0) sf_die("cannot create the tuple pools' thread key");
}

/* This thread's pool: an orphan adopted, or a new one. */
static Pool *thread_pool(void) {
  pthread_once(&pool_once, make_pool_key);
  pthread_mutex_lock(&pools_mu);
  Pool *p = orphans;
  if (p) {
    orphans = p->orphan_next;
  } else {
    p = aligned_alloc(64, sizeof *p);
    if (!p) sf_die("out of memory");
    memset(p, 0, sizeof *p);
    atomic_init(&p->returned, NULL);
    p->all_next = all_pools;
    all_pools = p;
  }
  p->orphan_next = NULL;
  pthread_mutex_unlock(&pools_mu);
  pthread_setspecific(pool_key, p);
  my_pool = p;
  return p;
}

/* Puts block f of p onto p's local list of its class, or frees it when that list is full. */
static void keep_local(Pool *p, Free *f) {
  int c = f->h.cls;
  if (p->nlocal[c] < list_cap(c)) {
    f->next = p->local[c];
    p->local[c] = f;
    p->nlocal[c]++;
  } else {
    free(f);
  }
}

/* Moves the return stack onto the local lists (the excess is freed). */
static void pool_refill(Pool *p) {
  Free *f = atomic_exchange_explicit(&p->returned, NULL, memory_order_acquire);
  while (f) {
    Free *next = f->next;
    keep_local(p, f);
    f = next;
  }
}

void *pool_alloc(size_t size) {
  size += sizeof(Hdr);
  if (size < sizeof(Free)) size = sizeof(Free);
  if (size > class_size(POOL_CLASSES - 1)) {
    Hdr *h = sf_xmalloc(size);
    *h = (Hdr){ .owner = NULL, .cls = POOL_LARGE };
    return h + 1;
  }
  int c = size <= class_size(0) ? 0 : 64 - __builtin_clzll((unsigned long long)(size - 1)) - POOL_MIN_SHIFT;
  Pool *p = my_pool ? my_pool : thread_pool();
  if (!p->local[c]) pool_refill(p);
  Free *f = p->local[c];
  if (f) {
    p->local[c] = f->next;
    p->nlocal[c]--;
  } else {
    f = sf_xmalloc(class_size(c));
    f->h = (Hdr){ .owner = p, .cls = c };
  }
  return &f->h + 1;
}

void pool_free(void *block) {
  if (!block) return;
  Free *f = (Free *)((Hdr *)block - 1);
  Pool *p = f->h.owner;
  if (!p) {
    free(f);
  } else if (p == my_pool) {
    keep_local(p, f);
  } else {
    Free *head = atomic_load_explicit(&p->returned, memory_order_relaxed);
    do {
      f->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&p->returned, &head, f, memory_order_release,
                                                    memory_order_relaxed));
  }
}

/* Frees a tuple's memory: its own block, or its share of its slab. */
static void tuple_free(Tuple *t) {
  Hdr *h = (Hdr *)t - 1;
  if (h->cls != POOL_SLAB) {
    pool_free(t);
    return;
  }
  Slab *s = h->owner;
  /* live == 1: this is the slab's last tuple, and no other thread holds one to decrement it */
  if (atomic_load_explicit(&s->live, memory_order_acquire) == 1 ||
      atomic_fetch_sub_explicit(&s->live, 1, memory_order_acq_rel) == 1)
    pool_free(s);
}

/* tuple_new with `extra` more bytes after the strings' (uninitialized): their address in *tail. */
static Tuple *tuple_new_extra(const Value *vals, int n, size_t extra, char **tail) {
  size_t bytes = 0;
  for (int i = 0; i < n; i++)
    if (vals[i].type == TYPE_STRING) bytes += vals[i].s.n;
  Tuple *t = pool_alloc(sizeof *t + sizeof(Value) * (size_t)n + bytes + extra);
  atomic_init(&t->refs, 1);
  t->n = n;
  char *p = (char *)(t->v + n);
  for (int i = 0; i < n; i++) {
    t->v[i] = vals[i];
    if (vals[i].type == TYPE_STRING) {
      if (vals[i].s.n) memcpy(p, vals[i].s.p, vals[i].s.n);
      t->v[i].s.p = p;
      p += vals[i].s.n;
    }
  }
  if (tail) *tail = p;
  return t;
}

Tuple *tuple_new(const Value *vals, int n) {
  return tuple_new_extra(vals, n, 0, NULL);
}

Tuple *tuple_new_keyed(const Value *vals, int n, const void *key, size_t len, const unsigned char **keyp) {
  char *tail;
  Tuple *t = tuple_new_extra(vals, n, len, &tail);
  if (len) memcpy(tail, key, len);
  *keyp = (const unsigned char *)tail;
  return t;
}

/* Drops m tuples of slab s at once: one atomic operation for them all. */
static void slab_drop(Slab *s, int m) {
  if (m > 0 && (atomic_load_explicit(&s->live, memory_order_acquire) == m ||
                atomic_fetch_sub_explicit(&s->live, m, memory_order_acq_rel) == m))
    pool_free(s);
}

/* Drops a reference of t; when it was the last one and t lives in a slab, t is counted into
 * *run (its slab, *m tuples of it so far) instead of decremented there one by one. */
static inline void unref_counted(Tuple *t, Slab **run, int *m) {
  if (!t || !(atomic_load_explicit(&t->refs, memory_order_acquire) == 1 ||
              atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1))
    return;
  Hdr *h = (Hdr *)t - 1;
  if (h->cls != POOL_SLAB) {
    pool_free(t);
    return;
  }
  if (h->owner != *run) {
    if (*run) slab_drop(*run, *m);
    *run = h->owner;
    *m = 0;
  }
  (*m)++;
}

void tuple_unref_all(Tuple *const *ts, int n) {
  Slab *run = NULL;
  int m = 0;
  for (int i = 0; i < n; i++) unref_counted(ts[i], &run, &m);
  if (run) slab_drop(run, m);
}

void tuple_unref_items(const Item *items, int n) {
  Slab *run = NULL;
  int m = 0;
  for (int i = 0; i < n; i++)
    if (item_has_tuple(items[i].kind)) unref_counted(items[i].t, &run, &m);
  if (run) slab_drop(run, m);
}

Tuple *tuple_keep(Tuple *t) {
  Hdr *h = (Hdr *)t - 1;
  return h->cls == POOL_SLAB ? tuple_new(t->v, t->n) : tuple_ref(t);
}

Tuple *tuple_ref(Tuple *t) {
  atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
  return t;
}

void tuple_unref(Tuple *t) {
  /* refs == 1: ours is the only reference, and no other thread can take or drop one */
  if (t && (atomic_load_explicit(&t->refs, memory_order_acquire) == 1 ||
            atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1))
    tuple_free(t);
}

size_t tuple_slab_size(int n, size_t bytes) {
  size_t size = sizeof(Hdr) + sizeof(Tuple) + sizeof(Value) * (size_t)n + bytes;
  return (size + 15) & ~(size_t)15;
}

void tuple_slab_begin(TupleSlab *b, int ntuples, size_t size) {
  sf_assert(ntuples > 0);
  Slab *s = pool_alloc(sizeof(Slab) + size);
  atomic_init(&s->live, ntuples);
  b->next = (char *)(s + 1);
  b->end = b->next + size;
  b->left = ntuples;
  b->slab = s;
}

/* The next tuple of slab b, of n values in size bytes (tuple_slab_add's work, inline for the
 * slabs made here). */
static inline Tuple *slab_next(TupleSlab *b, int n, size_t size) {
  Hdr *h = (Hdr *)b->next;
  *h = (Hdr){ .owner = b->slab, .cls = POOL_SLAB };
  Tuple *t = (Tuple *)(h + 1);
  atomic_init(&t->refs, 1);
  t->n = n;
  b->next += size;
  b->left--;
  return t;
}

Tuple *tuple_slab_add(TupleSlab *b, int n, size_t bytes, char **strings) {
  size_t size = tuple_slab_size(n, bytes);
  sf_assert(b->left > 0 && size <= (size_t)(b->end - b->next));
  Tuple *t = slab_next(b, n, size);
  *strings = (char *)(t->v + n);
  return t;
}

void tuple_new_rows(const Value *rows, int nvals, int n, Tuple **out) {
  if (n <= 0) return;
  /* the string columns, from the first row: every row has the same types (one schema) */
  int scol[nvals > 0 ? nvals : 1], ns = 0;
  for (int i = 0; i < nvals; i++)
    if (rows[i].type == TYPE_STRING) scol[ns++] = i;
  size_t plain = tuple_slab_size(nvals, 0), size = plain * (size_t)n;
  if (ns) {
    size = 0;
    for (int r = 0; r < n; r++) {
      size_t bytes = 0;
      for (int j = 0; j < ns; j++) bytes += rows[(size_t)r * nvals + scol[j]].s.n;
      size += tuple_slab_size(nvals, bytes);
    }
  }
  TupleSlab slab;
  tuple_slab_begin(&slab, n, size);
  for (int r = 0; r < n; r++) {
    const Value *vals = rows + (size_t)r * nvals;
    if (!ns) { /* a row of plain values: one copy */
      Tuple *t = slab_next(&slab, nvals, plain);
      memcpy(t->v, vals, sizeof *vals * (size_t)nvals);
      out[r] = t;
      continue;
    }
    size_t bytes = 0;
    for (int j = 0; j < ns; j++) bytes += vals[scol[j]].s.n;
    Tuple *t = slab_next(&slab, nvals, tuple_slab_size(nvals, bytes));
    memcpy(t->v, vals, sizeof *vals * (size_t)nvals);
    char *p = (char *)(t->v + nvals);
    for (int j = 0; j < ns; j++) {
      Value *v = &t->v[scol[j]];
      if (v->s.n) memcpy(p, v->s.p, v->s.n);
      v->s.p = p;
      p += v->s.n;
    }
    out[r] = t;
  }
}

size_t tuple_new_blank_rows(int nvals, int n, Tuple **out) {
  size_t size = tuple_slab_size(nvals, 0);
  if (n <= 0) return size;
  TupleSlab slab;
  tuple_slab_begin(&slab, n, size * (size_t)n);
  for (int r = 0; r < n; r++) out[r] = slab_next(&slab, nvals, size);
  return size;
}

void tuple_describe(const Tuple *t, const Schema *s, char *buf, size_t cap) {
  Buf b;
  buf_init(&b);
  buf_putc(&b, '(');
  for (int i = 0; t && i < t->n; i++) {
    if (i) buf_puts(&b, ", ");
    if (s && i < s->nattrs) {
      buf_puts(&b, s->attrs[i].name);
      buf_putc(&b, '=');
    }
    if (t->v[i].type == TYPE_STRING) buf_putc(&b, '"');
    value_format(&t->v[i], &b);
    if (t->v[i].type == TYPE_STRING) buf_putc(&b, '"');
  }
  buf_putc(&b, ')');
  snprintf(buf, cap, "%s", b.p ? b.p : "()");
  buf_release(&b);
}
