/* test_tuple.c: tuples (rt/tuple.c) and the per-thread pools their blocks come from: values and
 * strings survive, a block freed on its own thread or on another comes back to its pool, tuples
 * outlive the thread that made them, and the free lists stay bounded. */
#include <check.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_helper.h"
#include "rt.h"

/* A tuple of 3 values whose contents follow from id: an int, a double, and a string of len bytes. */
static Tuple *make(int64_t id, size_t len) {
  static _Thread_local char s[10000];
  for (size_t i = 0; i < len; i++) s[i] = (char)('a' + (id + (int64_t)i) % 26);
  Value v[3];
  value_put_int(&v[0], id);
  value_put_double(&v[1], (double)id * 0.5);
  value_put_string(&v[2], s, len);
  return tuple_new(v, 3);
}

/* (one assertion per tuple: Check's assertions are slow) */
static void check(const Tuple *t, int64_t id, size_t len) {
  bool ok = t->n == 3 && atomic_load(&t->refs) == 1 && t->v[0].type == TYPE_INT && t->v[0].i == id &&
            t->v[1].d == (double)id * 0.5 && t->v[2].type == TYPE_STRING && t->v[2].s.n == len;
  for (size_t i = 0; ok && i < len; i++) ok = t->v[2].s.p[i] == (char)('a' + (id + (int64_t)i) % 26);
  ck_assert_msg(ok, "tuple %lld (%zu string bytes) damaged", (long long)id, len);
}

/* tuples of several size classes (blocks of 64 bytes to 16 KiB) */
static const size_t lens[] = {0, 1, 40, 100, 300, 700, 1500, 3000, 5000, 9999};
#define NLENS (sizeof lens / sizeof *lens)

START_TEST(test_values) {
  for (int r = 0; r < 3; r++) {
    Tuple *t[NLENS];
    for (size_t i = 0; i < NLENS; i++) t[i] = make((int64_t)i, lens[i]);
    for (size_t i = 0; i < NLENS; i++) {
      check(t[i], (int64_t)i, lens[i]);
      ck_assert_ptr_eq(tuple_ref(t[i]), t[i]);
      tuple_unref(t[i]);
      tuple_unref(t[i]);
    }
  }
  tuple_unref(NULL);
  Value none;
  Tuple *e = tuple_new(&none, 0);
  ck_assert_int_eq(e->n, 0);
  tuple_unref(e);
}
END_TEST

/* tuple_new_rows: rows of every string length in one slab; each tuple holds its row's values and
 * its own copy of the strings, and the slab lives until the last one dies, in any order, on this
 * thread or another. */
static void *unref_all(void *arg) {
  Tuple **t = arg;
  for (size_t i = 0; i < NLENS; i += 2) tuple_unref(t[i]);
  return NULL;
}

START_TEST(test_new_rows) {
  static char s[NLENS][10000];
  Value rows[NLENS * 3];
  for (size_t r = 0; r < NLENS; r++) {
    for (size_t i = 0; i < lens[r]; i++) s[r][i] = (char)('a' + ((int64_t)r + (int64_t)i) % 26);
    value_put_int(&rows[r * 3], (int64_t)r);
    value_put_double(&rows[r * 3 + 1], (double)r * 0.5);
    value_put_string(&rows[r * 3 + 2], s[r], lens[r]);
  }
  Tuple *t[NLENS];
  for (int round = 0; round < 2; round++) {
    tuple_new_rows(rows, 3, (int)NLENS, t);
    memset(s, '#', sizeof s); /* the tuples hold their own copies */
    for (size_t r = 0; r < NLENS; r++) check(t[r], (int64_t)r, lens[r]);
    for (size_t r = 0; r < NLENS; r++)
      for (size_t i = 0; i < lens[r]; i++) s[r][i] = (char)('a' + ((int64_t)r + (int64_t)i) % 26);
    if (round == 0) { /* the even ones die on another thread, then the odd ones here */
      pthread_t th;
      ck_assert_int_eq(pthread_create(&th, NULL, unref_all, t), 0);
      pthread_join(th, NULL);
      for (size_t r = 1; r < NLENS; r += 2) check(t[r], (int64_t)r, lens[r]);
      for (size_t r = 1; r < NLENS; r += 2) tuple_unref(t[r]);
    } else {
      for (size_t r = NLENS; r-- > 0;) tuple_unref(t[r]);
    }
  }
}
END_TEST

/* tuple_unref_all and tuple_unref_items: tuples of two slabs, a tuple of its own and NULL in one
 * call; the slab whose tuples all died is freed (its block is the next one of its size), the one
 * with a tuple still referenced is not (a new slab of its size does not take its block), until
 * that tuple dies too. */
START_TEST(test_unref_many) {
  Value rows[8 * 2];
  for (int r = 0; r < 8; r++) {
    value_put_int(&rows[2 * r], r);
    value_put_double(&rows[2 * r + 1], r * 0.5);
  }
  Tuple *a[8], *b[8], *all[18];
  tuple_new_rows(rows, 2, 8, a);
  tuple_new_rows(rows, 2, 8, b);
  tuple_ref(b[3]);
  int n = 0;
  for (int r = 0; r < 8; r++) all[n++] = a[r];
  all[n++] = make(99, 5);
  all[n++] = NULL;
  for (int r = 0; r < 8; r++) all[n++] = b[r];
  tuple_unref_all(all, n);
  Tuple *c[8];
  tuple_new_rows(rows, 2, 8, c); /* a's block, which is free; never b's */
  ck_assert_ptr_eq(c[0], a[0]);
  Value *v = b[3]->v;
  ck_assert(atomic_load(&b[3]->refs) == 1 && v[0].i == 3 && v[1].d == 1.5);
  Item items[9];
  for (int r = 0; r < 8; r++) items[r] = (Item){.kind = ITEM_TUPLE, .t = c[r]};
  items[8] = (Item){.kind = ITEM_TUPLE, .t = b[3]};
  tuple_unref_items(items, 9); /* both slabs die */
  Tuple *d[8];
  tuple_new_rows(rows, 2, 8, d);
  ck_assert(d[0] == b[0] || d[0] == c[0]);
  tuple_unref_all(d, 8);
}
END_TEST

/* tuple_keep: a tuple of its own block is kept as it is (one more reference); one in a slab is
 * copied out (the copy holds its values, strings included, and the slab dies with its tuples). */
START_TEST(test_keep) {
  Tuple *own = make(7, 3);
  ck_assert_ptr_eq(tuple_keep(own), own);
  ck_assert_int_eq(atomic_load(&own->refs), 2);
  tuple_unref(own);
  tuple_unref(own);
  Value rows[2 * 2];
  for (int r = 0; r < 2; r++) {
    value_put_int(&rows[2 * r], r);
    value_put_string(&rows[2 * r + 1], r ? "slab one" : "slab zero", r ? 8 : 9);
  }
  Tuple *s[2];
  tuple_new_rows(rows, 2, 2, s);
  Tuple *k = tuple_keep(s[1]);
  ck_assert_ptr_ne(k, s[1]);
  ck_assert_int_eq(atomic_load(&k->refs), 1);
  ck_assert_int_eq(atomic_load(&s[1]->refs), 1);
  tuple_unref_all(s, 2); /* the slab dies; the copy lives on */
  ck_assert(k->n == 2 && k->v[0].i == 1 && k->v[1].s.n == 8 && memcmp(k->v[1].s.p, "slab one", 8) == 0);
  tuple_unref(k);
}
END_TEST

/* A block freed on its own thread is the next one of its size. */
START_TEST(test_reuse_same_thread) {
  Tuple *a = make(1, 10);
  tuple_unref(a);
  Tuple *b = make(2, 10);
  ck_assert_ptr_eq(a, b);
  check(b, 2, 10);
  tuple_unref(b);
}
END_TEST

static void *free_blocks(void *arg) {
  char **blocks = arg;
  for (int i = 0; blocks[i]; i++) pool_free(blocks[i]);
  return NULL;
}

/* pool_alloc's blocks of every class and beyond (plain malloc past 1 MiB) hold what is written,
 * freed on this thread or another, twice over (the second round reuses the first's blocks). */
START_TEST(test_pool_blocks) {
  static const size_t sizes[] = {1, 48, 49, 100, 4096, 70000, (1 << 20) - 16, 1 << 20, 3 << 20};
  enum { NS = sizeof sizes / sizeof *sizes };
  for (int round = 0; round < 4; round++) {
    char *blocks[NS + 1];
    for (int i = 0; i < NS; i++) {
      blocks[i] = pool_alloc(sizes[i]);
      ck_assert_uint_eq((uintptr_t)blocks[i] % 16, 0);
      memset(blocks[i], 'a' + i, sizes[i]);
    }
    blocks[NS] = NULL;
    for (int i = 0; i < NS; i++)
      ck_assert(blocks[i][0] == 'a' + i && blocks[i][sizes[i] - 1] == 'a' + i);
    if (round % 2) {
      pthread_t t;
      ck_assert_int_eq(pthread_create(&t, NULL, free_blocks, blocks), 0);
      pthread_join(t, NULL);
    } else {
      free_blocks(blocks);
    }
  }
  pool_free(NULL);
}
END_TEST

/* A one-slot-per-tuple channel between two threads. */
enum { CHAN = 4096 };
typedef struct Chan {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  Tuple *t[CHAN];
  int64_t id[CHAN];
  size_t len[CHAN];
  int head, count;
  int closed;
} Chan;

static void chan_put(Chan *c, Tuple *t, int64_t id, size_t len) {
  pthread_mutex_lock(&c->mu);
  while (c->count == CHAN) pthread_cond_wait(&c->cv, &c->mu);
  int i = (c->head + c->count++) % CHAN;
  c->t[i] = t;
  c->id[i] = id;
  c->len[i] = len;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static Tuple *chan_get(Chan *c, int64_t *id, size_t *len) {
  pthread_mutex_lock(&c->mu);
  while (c->count == 0 && !c->closed) pthread_cond_wait(&c->cv, &c->mu);
  Tuple *t = NULL;
  if (c->count) {
    t = c->t[c->head];
    *id = c->id[c->head];
    *len = c->len[c->head];
    c->head = (c->head + 1) % CHAN;
    c->count--;
    pthread_cond_broadcast(&c->cv);
  }
  pthread_mutex_unlock(&c->mu);
  return t;
}

static void chan_close(Chan *c) {
  pthread_mutex_lock(&c->mu);
  c->closed = 1;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static Chan chan = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
enum { PRODUCED = 200000 };

static void *produce(void *arg) {
  int64_t base = (int64_t)(intptr_t)arg;
  for (int64_t i = 0; i < PRODUCED; i++) {
    size_t len = lens[i % NLENS];
    chan_put(&chan, make(base + i, len), base + i, len);
  }
  return NULL;
}

static void *consume(void *arg) {
  (void)arg;
  int64_t id;
  size_t len;
  Tuple *t;
  while ((t = chan_get(&chan, &id, &len))) {
    check(t, id, len);
    tuple_unref(t);
  }
  return NULL;
}

/* Two producers, two consumers: every tuple dies on another thread than the one that made it, two
 * threads push onto the same return stack at once, and the blocks come back intact. */
START_TEST(test_cross_thread) {
  chan = (Chan){.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
  pthread_t p[2], c[2];
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(pthread_create(&p[i], NULL, produce, (void *)(intptr_t)(i * PRODUCED)), 0);
    ck_assert_int_eq(pthread_create(&c[i], NULL, consume, NULL), 0);
  }
  for (int i = 0; i < 2; i++) pthread_join(p[i], NULL);
  chan_close(&chan);
  for (int i = 0; i < 2; i++) pthread_join(c[i], NULL);
}
END_TEST

enum { INFLIGHT = 3000 };
static Tuple *inflight[INFLIGHT];

static void *make_inflight(void *arg) {
  int64_t base = (int64_t)(intptr_t)arg;
  for (int i = 0; i < INFLIGHT; i++) inflight[i] = make(base + i, lens[i % NLENS]);
  return NULL;
}

/* Tuples outlive the thread that made them: dropped after it exited, they go back to its pool,
 * which the next thread adopts; that thread's tuples are sound. Threads that come and go leave
 * no memory behind (each one's pool is emptied when it exits). */
START_TEST(test_outlive_thread) {
  for (int round = 0; round < 40; round++) {
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, make_inflight, (void *)(intptr_t)(round * INFLIGHT)), 0);
    pthread_join(t, NULL);
    for (int i = 0; i < INFLIGHT; i++) {
      check(inflight[i], round * INFLIGHT + i, lens[i % NLENS]);
      tuple_unref(inflight[i]);
    }
  }
}
END_TEST

static size_t in_use(void) {
  return mallinfo2().uordblks;
}

static void *drop_all(void *arg) {
  Tuple **ts = arg;
  for (int i = 0; i < PRODUCED; i++) tuple_unref(ts[i]);
  return NULL;
}

/* The free lists are bounded: 200,000 tuples dropped on their own thread, or on another one and
 * taken back from the return stack, leave at most a few MiB in the pool. */
START_TEST(test_bounded) {
  if (getenv("SF_SANITIZE") && *getenv("SF_SANITIZE")) return; /* mallinfo2 is glibc's */
  Tuple **ts = malloc(sizeof *ts * PRODUCED);
  for (int other = 0; other < 2; other++) {
    Tuple *warm = make(0, 10);
    tuple_unref(warm);
    size_t before = in_use();
    for (int i = 0; i < PRODUCED; i++) ts[i] = make(i, 10);
    ck_assert_uint_gt(in_use(), before + (size_t)PRODUCED * 64);
    if (other) {
      pthread_t t;
      ck_assert_int_eq(pthread_create(&t, NULL, drop_all, ts), 0);
      pthread_join(t, NULL);
      tuple_unref(make(0, 10)); /* the owner takes the return stack back */
    } else {
      drop_all(ts);
    }
    size_t after = in_use();
    ck_assert_msg(after < before + (4 << 20), "%d: 200,000 dropped tuples left %zu bytes in use", other,
                  after - before);
  }
  free(ts);
}
END_TEST

int main(void) {
  Suite *s = suite_create("tuple");
  TCase *tc = unit_case(s, "tuple", NULL, NULL, 120);
  tcase_add_test(tc, test_values);
  tcase_add_test(tc, test_new_rows);
  tcase_add_test(tc, test_unref_many);
  tcase_add_test(tc, test_keep);
  tcase_add_test(tc, test_reuse_same_thread);
  tcase_add_test(tc, test_pool_blocks);
  tcase_add_test(tc, test_cross_thread);
  tcase_add_test(tc, test_outlive_thread);
  tcase_add_test(tc, test_bounded);
  return unit_run(s);
}
