/* tuple.c: reference-counted immutable rows. One block per tuple: the header, the values and the
 * bytes of every string value, so a tuple never points outside itself.
 *
 * Blocks come from per-thread pools, so that steady state allocates nothing: the thread that makes
 * a tuple (a source, wire_decode) is rarely the one that drops its last reference (the next stage),
 * and malloc/free across threads defeats glibc's per-thread caches. Each block starts with a hidden
 * Hdr naming its pool and size class (powers of two from 64 to 4096 bytes; larger tuples are plain
 * malloc). A block freed on its pool's thread goes onto that pool's local free list; freed on any
 * other thread, it is pushed onto the pool's return stack (lock-free, many pushers, one taker: the
 * owner takes the whole stack with one atomic exchange and never pops single nodes, so there is no
 * ABA). The owner refills an empty local list from the return stack before it calls malloc, and a
 * local list holds at most POOL_LIST_BYTES: the excess is freed.
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
  POOL_CLASSES = 7,                   /* 64, 128, ..., 4096 bytes */
  POOL_LARGE = POOL_CLASSES,          /* the class of a plain malloc'd block */
  POOL_LIST_BYTES = 1 << 20,          /* the most a local free list keeps */
};

typedef struct Pool Pool;

/* What precedes every Tuple (16 bytes, so the Values stay aligned as malloc aligns). */
typedef struct Hdr {
  Pool *pool;   /* NULL for a large block */
  int cls;      /* size class, POOL_LARGE for a large block */
  int pad;
} Hdr;

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

/* Moves the return stack onto the local lists (the excess is freed). */
static void pool_refill(Pool *p) {
  Free *f = atomic_exchange_explicit(&p->returned, NULL, memory_order_acquire);
  while (f) {
    Free *next = f->next;
    int c = f->h.cls;
    if (p->nlocal[c] < list_cap(c)) {
      f->next = p->local[c];
      p->local[c] = f;
      p->nlocal[c]++;
    } else {
      free(f);
    }
    f = next;
  }
}

static Tuple *block_new(size_t size) {
  size += sizeof(Hdr);
  if (size < sizeof(Free)) size = sizeof(Free);
  if (size > class_size(POOL_CLASSES - 1)) {
    Hdr *h = sf_xmalloc(size);
    *h = (Hdr){ .pool = NULL, .cls = POOL_LARGE };
    return (Tuple *)(h + 1);
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
    f->h = (Hdr){ .pool = p, .cls = c };
  }
  return (Tuple *)(&f->h + 1);
}

static void block_free(Tuple *t) {
  Free *f = (Free *)((Hdr *)t - 1);
  Pool *p = f->h.pool;
  if (!p) {
    free(f);
  } else if (p == my_pool) {
    int c = f->h.cls;
    if (p->nlocal[c] < list_cap(c)) {
      f->next = p->local[c];
      p->local[c] = f;
      p->nlocal[c]++;
    } else {
      free(f);
    }
  } else {
    Free *head = atomic_load_explicit(&p->returned, memory_order_relaxed);
    do {
      f->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&p->returned, &head, f, memory_order_release,
                                                    memory_order_relaxed));
  }
}

Tuple *tuple_new(const Value *vals, int n) {
  size_t bytes = 0;
  for (int i = 0; i < n; i++)
    if (vals[i].type == TYPE_STRING) bytes += vals[i].s.n;
  Tuple *t = block_new(sizeof *t + sizeof(Value) * (size_t)n + bytes);
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
  return t;
}

Tuple *tuple_ref(Tuple *t) {
  atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
  return t;
}

void tuple_unref(Tuple *t) {
  if (t && atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1) block_free(t);
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
