/* queue.c: batches of items and the bounded queues of batches between threads. A queue is a ring
 * of batches from one producer thread to one consumer group, protected by that group's mu (so the
 * consumer can wait for "any input"); this file only keeps the ring. When a producer waits for
 * room, and what it does first, is the batching protocol of flow.c. */
#include "exec_priv.h"

#include <stdlib.h>
#include <string.h>

Batch *batch_new(int cap) {
  Batch *b = pool_alloc(sizeof *b + sizeof(Item) * (size_t)cap);
  b->n = 0;
  b->cap = cap;
  b->next = 0;
  return b;
}

Batch *batch_grow(Batch *b, int cap) {
  Batch *g = batch_new(cap);
  memcpy(g->items, b->items, sizeof(Item) * (size_t)b->n);
  g->n = b->n;
  g->next = b->next;
  pool_free(b);
  return g;
}

void batch_free(Batch *b) {
  if (!b) return;
  tuple_unref_items(b->items + b->next, b->n - b->next); /* a slab's tuples with one count */
  pool_free(b);
}

void batch_release(Batch *b) {
  pool_free(b);
}

Queue *queue_new(Exec *x, Group *owner) {
  Queue *q = arena_alloc(x->arena, sizeof *q);
  q->owner = owner;
  q->cap = x->queue_batches;
  q->ring = arena_alloc(x->arena, sizeof(Batch *) * (size_t)q->cap);
  pthread_cond_init(&q->not_full, NULL);
  return q;
}

Batch *queue_take(Queue *q) {
  if (q->count == 0) return NULL;
  Batch *b = q->ring[q->head];
  q->head = (q->head + 1) % q->cap;
  q->count--;
  /* a producer waiting for room wakes once half the ring is free, not after every batch: it then
   * pushes several batches per wake-up (fewer context switches); a consumer about to wait for
   * input wakes it at once (group_wake_producers) */
  if (q->count <= q->cap / 2) pthread_cond_signal(&q->not_full);
  return b;
}

void queue_put(Queue *q, Batch *b, int full) {
  q->ring[(q->head + q->count) % q->cap] = b;
  q->count++;
  /* a full batch of tuples wakes its consumer only once the ring is half full: a consumer that
   * keeps up then takes several batches per wake-up (fewer context switches); anything else (a
   * partial batch: old, punctuation, the end, before a wait) wakes it at once */
  bool lazy = b->n >= full && b->n > 0 && b->items[b->n - 1].kind == ITEM_TUPLE && 2 * q->count < q->cap;
  if (lazy) {
    q->unsignaled = true;
    return;
  }
  q->unsignaled = false;
  pthread_cond_signal(&q->owner->wake);
}

void group_wake_consumers(Group *g) {
  for (int i = 0; i < g->outs.n; i++) {
    Edge *e = g->outs.items[i];
    if (e->kind != EDGE_QUEUE) continue;
    Group *o = e->q->owner;
    pthread_mutex_lock(&o->mu);
    if (e->q->unsignaled) {
      e->q->unsignaled = false;
      pthread_cond_signal(&o->wake);
    }
    pthread_mutex_unlock(&o->mu);
  }
}

void timed_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += WAIT_SLICE_MS * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_cond_timedwait(c, m, &ts);
}

void timed_wait_ms(pthread_cond_t *c, pthread_mutex_t *m, long ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += ms * 1000000L;
  while (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_cond_timedwait(c, m, &ts);
}

void group_wake_producers(Group *g) {
  for (int s = 0; s < g->entry->nslots; s++) {
    Queue *q = g->entry->in[s]->q;
    if (q && q->count < q->cap) pthread_cond_signal(&q->not_full);
  }
}
