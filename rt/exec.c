/* exec.c: the executor. Builds this host's plan from a checked graph and runs it. */
#include "exec_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *rt_graph_dir(const OpInst *op) {
  return op->exec->graph_dir;
}

/* ---- pushing a batch into a queue ---- */

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
      if (clear)
        timed_wait(&g->wake, &g->mu);
      else
        timed_wait_ms(&g->wake, &g->mu, 1); /* some batch still waits for room: look again soon */
      b = queue_take(q);
    }
    pthread_mutex_unlock(&g->mu);
    if (!b) return -1;
    for (; b->next < b->n; b->next++) {
      Item it = b->items[b->next];
      g->progress = it.src;
      if (node_deliver(n, 0, it) < 0) {
        b->next++;
        batch_free(b);
        return -1;
      }
    }
    free(b);
  }
  return 0;
}

static void *group_main(void *arg) {
  Group *g = arg;
  Exec *x = g->exec;
  int rc;
  if (g->source) {
    Node *n = g->source;
    rc = n->inst.impl->run(&n->inst);
    if (rc == 0 && !exec_stopping(x)) {
      n->finals_left = 1;
      rc = node_deliver(n, 0, (Item){ .kind = ITEM_FINAL, .seq = n->inst.cur_seq, .src = n->inst.cur_src });
    }
  } else if (g->driver == DRIVE_SINGLE) {
    rc = run_single(g);
  } else {
    rc = order_run(g);
  }
  if (rc == 0) group_flush(g, NULL);
  if (rc < 0 && !exec_stopping(x)) exec_fail(x, "internal error: a thread stopped without a message");
  atomic_fetch_sub(&x->running, 1);
  return NULL;
}

/* ---- running ---- */

int exec_run(Graph *g, const ExecOptions *o) {
  Exec *x = calloc(1, sizeof *x);
  x->g = g;
  x->o = o;
  x->log = o->log ? o->log : stderr;
  x->arena = arena_new();
  x->batch = o->batch > 0 ? o->batch : DEFAULT_BATCH;
  x->remote_batch = o->batch > 0 ? o->batch : DEFAULT_REMOTE_BATCH;
  x->queue_batches = o->queue_batches > 0 ? o->queue_batches : DEFAULT_QUEUE_BATCHES;
  pthread_mutex_init(&x->fail_mu, NULL);
  atomic_init(&x->failed, false);
  atomic_init(&x->committing, false);
  if (pipe2(x->stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
    x->stop_pipe[0] = x->stop_pipe[1] = -1;
    exec_fail(x, "cannot create a pipe: %s", strerror(errno));
  }
  signals_catch(x->stop_pipe[1]);
  clock_gettime(CLOCK_MONOTONIC, &x->started);
  if (o->graph_path) {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", o->graph_path);
    snprintf(x->graph_dir, sizeof x->graph_dir, "%s", dirname(tmp));
  } else {
    snprintf(x->graph_dir, sizeof x->graph_dir, ".");
  }

  const char *stats_json = o->stats_json; /* NULL once it turned out not writable */
  if (stats_json && stats_check_json(stats_json) < 0) {
    exec_fail(x, "cannot write '%s': %s", stats_json, strerror(errno));
    stats_json = NULL;
  }

  int opened = 0;
  if (!exec_stopping(x) && plan_build(x) == 0) {
    for (; opened < x->nnodes; opened++) {
      Node *n = &x->nodes[opened];
      if (n->local && n->inst.impl->open && n->inst.impl->open(&n->inst) < 0) break;
      if (exec_stopping(x)) break;
    }
  }
  if (!exec_stopping(x) && x->remote && remote_connect(x->remote) < 0 && !exec_stopping(x))
    exec_fail(x, "cannot connect to the other hosts");
  if (!exec_stopping(x)) {
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
    double interval = o->stats_interval > 0 ? o->stats_interval : 2.0;
    double next = interval;
    while (atomic_load(&x->running) > 0) {
      struct timespec ts = { 0, 20 * 1000000L };
      struct pollfd stop = { .fd = x->stop_pipe[0], .events = POLLIN };
      if (exec_stopping(x))
        nanosleep(&ts, NULL);
      else
        poll(&stop, 1, 20); /* a signal's byte ends it at once */
      exec_note_signal(x);
      if (o->stats && stats_seconds(x) >= next) {
        stats_print(x, false);
        next += interval;
      }
    }
    for (int i = 0; i < x->groups.n; i++) {
      Group *gr = x->groups.items[i];
      if (gr->started) pthread_join(gr->thread, NULL);
    }
  }
  if (x->remote) {
    if (remote_finish(x->remote, !exec_stopping(x)) < 0 && !exec_stopping(x))
      exec_fail(x, "the transport failed to finish");
  }
  /* sinks commit only when everything on this executor completed; a signal from here on comes
   * too late to stop the job (and a failure of a commit is not its doing) */
  exec_note_signal(x);
  atomic_store(&x->committing, true);
  for (int i = 0; i < x->nnodes && !atomic_load(&x->failed); i++) {
    Node *n = &x->nodes[i];
    if (n->local && n->inst.impl->commit) n->inst.impl->commit(&n->inst);
  }
  bool ok = !atomic_load(&x->failed);
  for (int i = 0; i < opened && i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (n->local && n->inst.impl->close) n->inst.impl->close(&n->inst, ok);
  }
  if (x->remote) remote_stop(x->remote);
  if (o->stats) stats_print(x, true);
  int rc = ok ? 0 : x->stop_signal ? 128 + x->stop_signal : 1;
  if (stats_json && stats_write_json(x, stats_json, ok) < 0) {
    fprintf(x->log, "sf-exec: error: cannot write '%s': %s\n", stats_json, strerror(errno));
    if (rc == 0) rc = 1;
  }
  if (!ok) fprintf(x->log, "sf-exec: error: %s\n", x->message);
  /* release */
  for (int i = 0; i < x->groups.n; i++) {
    Group *gr = x->groups.items[i];
    for (int s = 0; gr->entry && s < gr->entry->nslots; s++) {
      batch_free(gr->cur ? gr->cur[s] : NULL);
      Queue *q = gr->entry->in[s] ? gr->entry->in[s]->q : NULL;
      while (q && q->count) batch_free(queue_take(q));
    }
    for (int e = 0; e < gr->outs.n; e++) batch_free(((Edge *)gr->outs.items[e])->pending);
  }
  for (int i = 0; i < x->nnodes; i++) arena_free(x->nodes[i].inst.scratch);
  signals_release(); /* the last moment: nothing of the job is left to clean up */
  for (int i = 0; i < 2; i++)
    if (x->stop_pipe[i] >= 0) close(x->stop_pipe[i]);
  arena_free(x->arena);
  free(x);
  return rc;
}
