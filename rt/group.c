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
    group_pump_hosts(g, false); /* what it handed on is merged on this thread, while it is warm */
  }
  return 0;
}

/* CPU time the calling thread spent in pumps of hosted groups (counted as theirs, not its own). */
static _Thread_local int64_t pumped_ns;

/* The loop of group_pump: whoever asks last finds the token free or is seen by its holder, which
 * looks again after letting it go (pump_asked is set before the try, cleared before each look). */
void group_pump(Group *h, bool idle) {
  Exec *x = h->exec;
  if (idle) atomic_store(&h->pump_idle, true);
  atomic_store(&h->pump_asked, true);
  while (atomic_load(&h->pump_asked) && !atomic_load(&h->pump_over)) {
    if (pthread_mutex_trylock(&h->pump_mu) != 0) return; /* its holder looks again */
    if (atomic_load(&h->pump_over)) {
      pthread_mutex_unlock(&h->pump_mu);
      return;
    }
    atomic_store(&h->pump_asked, false);
    bool timed = x->o->stats || x->o->stats_json;
    int64_t t0 = timed ? stats_thread_cpu_ns() : 0;
    int rc = order_advance(h, false);
    if (rc == 1 && atomic_exchange(&h->pump_idle, false)) group_before_wait(h);
    if (rc <= 0) {
      if (rc == 0) group_flush(h, NULL);
      if (rc < 0 && !exec_stopping(x)) exec_fail(x, "internal error: a merge stopped without a message");
      atomic_store(&h->pump_over, true);
    }
    if (timed) {
      int64_t d = stats_thread_cpu_ns() - t0;
      h->cpu_ns += d;
      pumped_ns += d;
    }
    pthread_mutex_unlock(&h->pump_mu);
  }
}

void group_pump_hosts(Group *g, bool idle) {
  for (int i = 0; i < g->hosts.n; i++) group_pump(g->hosts.items[i], idle);
}

static void *group_main(void *arg) {
  Group *g = arg;
  Exec *x = g->exec;
  void *alt = fatal_thread_start(&g->run);
  int rc;
  if (g->source) {
    Node *n = g->source;
    const char *was = fatal_enter(n->label);
    rc = n->restored_finished ? 0 : n->inst.impl->run(&n->inst); /* (restored finished: only its end) */
    fatal_leave(was);
    ckpt_source_ended(n);
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
  group_pump_hosts(g, true); /* its end, or what is left, goes on: the last channel's thread ends the merge */
  if (x->o->stats || x->o->stats_json) g->cpu_ns = stats_thread_cpu_ns() - pumped_ns;
  fatal_thread_end(alt);
  atomic_fetch_sub(&x->running, 1);
  return NULL;
}

void groups_start(Exec *x) {
  int threads = 0;
  for (int i = 0; i < x->groups.n; i++) threads += !((Group *)x->groups.items[i])->hosted;
  atomic_store(&x->running, threads);
  for (int i = 0; i < x->groups.n; i++) {
    Group *gr = x->groups.items[i];
    if (gr->hosted) continue; /* run by its channels' threads (group_pump) */
    if (pthread_create(&gr->thread, NULL, group_main, gr) != 0) {
      exec_fail(x, "cannot start a thread: %s", strerror(errno));
      for (int j = i; j < x->groups.n; j++)
        if (!((Group *)x->groups.items[j])->hosted) atomic_fetch_sub(&x->running, 1);
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
