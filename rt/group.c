/* group.c: a group's thread. A source group runs its source (which emits everything, fused
 * operators downstream being direct calls) and then delivers its end; a group with one input
 * stream delivers its batches in order (run_single); one with several is an ordered driver
 * (order.c). Each thread hands on its last partial batches when it ends; the main thread starts
 * and joins them all. */
#include "exec_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One input stream: deliver its items in order. */
static int run_single(Group *g) {
  Exec *x = g->exec;
  Node *n = g->entry;
  Queue *q = n->in[0]->q;
  while (!n->finished) {
    pthread_mutex_lock(&g->mu);
    Batch *b = queue_take(q);
    while (!b && !exec_stopping(x)) {
      pthread_mutex_unlock(&g->mu);
      bool clear = group_before_wait(g);
      pthread_mutex_lock(&g->mu);
      b = queue_take(q);
      if (b) break;
      group_wake_producers(g);
      if (clear)
        timed_wait(&g->wake, &g->mu);
      else
        timed_wait_ms(&g->wake, &g->mu, 1); /* some batch still waits for room: look again soon */
      b = queue_take(q);
    }
    pthread_mutex_unlock(&g->mu);
    if (!b) return -1;
    bool runs = n->inst.impl->process_run != NULL;
    while (b->next < b->n) {
      Item *it = &b->items[b->next];
      g->progress = it->src;
      int k = 1;
      if (runs && it->kind == ITEM_TUPLE) /* consecutive tuples go as one run */
        while (b->next + k < b->n && b->items[b->next + k].kind == ITEM_TUPLE) k++;
      b->next += k;
      if ((k > 1 ? deliver_run(n, 0, it, k) : node_deliver(n, 0, it)) < 0) {
        batch_free(b);
        return -1;
      }
    }
    batch_release(b);
  }
  return 0;
}

static void *group_main(void *arg) {
  Group *g = arg;
  Exec *x = g->exec;
  void *alt = fatal_thread_start(&g->run);
  int rc;
  if (g->source) {
    Node *n = g->source;
    const char *was = fatal_enter(n->label);
    rc = n->inst.impl->run(&n->inst);
    fatal_leave(was);
    ckpt_source_ended(x);
    if (rc == 0 && !exec_stopping(x)) {
      n->finals_left = 1;
      rc = node_deliver(n, 0, &(Item){ .kind = ITEM_FINAL, .seq = n->inst.cur_seq, .src = n->inst.cur_src });
    }
  } else if (g->driver == DRIVE_SINGLE) {
    rc = run_single(g);
  } else {
    rc = order_run(g);
  }
  if (rc == 0) group_flush(g, NULL);
  if (rc < 0 && !exec_stopping(x)) exec_fail(x, "internal error: a thread stopped without a message");
  if (x->o->stats || x->o->stats_json) g->cpu_ns = stats_thread_cpu_ns();
  fatal_thread_end(alt);
  atomic_fetch_sub(&x->running, 1);
  return NULL;
}

void groups_start(Exec *x) {
  atomic_store(&x->running, x->groups.n);
  for (int i = 0; i < x->groups.n; i++) {
    Group *gr = x->groups.items[i];
    if (pthread_create(&gr->thread, NULL, group_main, gr) != 0) {
      exec_fail(x, "cannot start a thread: %s", strerror(errno));
      atomic_fetch_sub(&x->running, x->groups.n - i);
      break;
    }
    gr->started = true;
    char name[16]; /* what ps -L and a debugger show: the operator that drives the thread */
    snprintf(name, sizeof name, "sf %s", (gr->source ? gr->source : gr->entry)->op->name);
    pthread_setname_np(gr->thread, name);
  }
}

void groups_join(Exec *x) {
  for (int i = 0; i < x->groups.n; i++) {
    Group *gr = x->groups.items[i];
    if (gr->started) pthread_join(gr->thread, NULL);
  }
}
