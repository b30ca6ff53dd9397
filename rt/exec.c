/* exec.c: runs this host's part of a checked graph: exec_run, a list of steps. The executor is
 * several files, each owning one thing; their shared structures, and who owns each field, are in
 * exec_priv.h:
 *   plan.c          the plan: a node per operator, a group (thread) per source, channel or merge,
 *                   an edge per stream, the transport's edges
 *   group.c         a group's thread: a source's loop and a single input's loop
 *   order.c         the ordered drivers: one function per merge order, and fan-in
 *   flow.c          items between operators: emit, batches, progress, delivery; the lock rules
 *   queue.c         batches and the bounded queues between threads
 *   stop.c          the first failure, stop signals, waking every wait
 *   stats.c         --stats and --stats-json
 *   metrics.c       --metrics (its HTTP server: metrics_http.c)
 *   ops/registry.c  which implementation runs each operator kind */
#include "exec_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A new executor for g with options o: its stop pipe, the stop signals caught, its clock started.
 * A pipe that cannot be made is the job's first failure. */
static Exec *exec_new(Graph *g, const ExecOptions *o) {
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
  fatal_job_start(x);
  clock_gettime(CLOCK_MONOTONIC, &x->started);
  if (o->graph_path) {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", o->graph_path);
    snprintf(x->graph_dir, sizeof x->graph_dir, "%s", dirname(tmp));
  } else {
    snprintf(x->graph_dir, sizeof x->graph_dir, ".");
  }
  return x;
}

/* Opens the local operators in plan order until one fails or the job stops. Returns how many
 * nodes it went past: those are the ones ops_close closes. */
static int ops_open(Exec *x) {
  int opened = 0;
  for (; opened < x->nnodes; opened++) {
    Node *n = &x->nodes[opened];
    const char *was = fatal_enter(n->label);
    int rc = n->local && n->inst.impl->open ? n->inst.impl->open(&n->inst) : 0;
    fatal_leave(was);
    if (rc < 0) break;
    if (exec_stopping(x)) break;
  }
  return opened;
}

/* The main thread while the groups run, until the last one ends: turns a caught stop signal into
 * the failure at once (the stop pipe wakes it), prints the periodic stats, and ends the process
 * when an operator has not returned --stop-grace seconds after the job stopped (fatal.c). */
static void exec_watch(Exec *x) {
  double interval = x->o->stats_interval > 0 ? x->o->stats_interval : 2.0;
  double next = interval;
  double grace = x->o->stop_grace > 0 ? x->o->stop_grace : DEFAULT_STOP_GRACE;
  double stopped_at = -1; /* when the job was first seen stopping */
  while (atomic_load(&x->running) > 0) {
    struct timespec ts = { 0, 20 * 1000000L };
    struct pollfd stop = { .fd = x->stop_pipe[0], .events = POLLIN };
    if (exec_stopping(x))
      nanosleep(&ts, NULL);
    else
      poll(&stop, 1, 20); /* a signal's byte ends it at once */
    exec_note_signal(x);
    if (exec_stopping(x)) { /* every operator returns soon, or the process ends without it */
      double now = stats_seconds(x);
      if (stopped_at < 0) stopped_at = now;
      else if (now - stopped_at >= grace) fatal_stuck(x);
    }
    if (!exec_stopping(x)) ckpt_tick(x);
    if (x->o->stats && stats_seconds(x) >= next) {
      stats_print(x, false);
      next += interval;
    }
  }
}

/* Sinks commit only when everything on this executor completed; a signal from here on comes too
 * late to stop the job (and a failure of a commit is not its doing). */
static void ops_commit(Exec *x) {
  exec_note_signal(x);
  atomic_store(&x->committing, true);
  /* with checkpoints, the decision to commit is durable before any output becomes visible */
  if (!atomic_load(&x->failed) && ckpt_commit(x) < 0) return;
  for (int i = 0; i < x->nnodes && !atomic_load(&x->failed); i++) {
    Node *n = &x->nodes[i];
    if (!n->local || !n->inst.impl->commit) continue;
    const char *was = fatal_enter(n->label);
    n->inst.impl->commit(&n->inst);
    fatal_leave(was);
  }
}

static void ops_close(Exec *x, int opened, bool ok) {
  for (int i = 0; i < opened && i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (!n->local || !n->inst.impl->close) continue;
    const char *was = fatal_enter(n->label);
    n->inst.impl->close(&n->inst, ok);
    fatal_leave(was);
  }
}

/* Prints the summary, writes the JSON stats and the failure; the exit status. */
static int exec_report(Exec *x, const char *stats_json, bool ok) {
  if (x->o->stats) stats_print(x, true);
  int rc = ok ? 0 : x->stop_signal ? 128 + x->stop_signal : 1;
  if (stats_json && stats_write_json(x, stats_json, ok) < 0) {
    fprintf(x->log, "sf-exec: error: cannot write '%s': %s\n", stats_json, strerror(errno));
    if (rc == 0) rc = 1;
  }
  if (!ok) fprintf(x->log, "sf-exec: error: %s\n", x->message);
  return rc;
}

/* Releases what the threads left behind (batches in queues and pending), then the executor. */
static void exec_free(Exec *x) {
  for (int i = 0; i < x->groups.n; i++) {
    Group *gr = x->groups.items[i];
    for (int s = 0; gr->entry && s < gr->entry->nslots; s++) {
      batch_free(gr->cur ? gr->cur[s] : NULL);
      Queue *q = gr->entry->in[s] ? gr->entry->in[s]->q : NULL;
      while (q && q->count) batch_free(queue_take(q));
    }
    for (int e = 0; e < gr->outs.n; e++) batch_free(((Edge *)gr->outs.items[e])->pending);
    order_time_free(gr);
  }
  for (int i = 0; i < x->nnodes; i++) arena_free(x->nodes[i].inst.scratch);
  signals_release(); /* the last moment: nothing of the job is left to clean up */
  fatal_job_end();
  for (int i = 0; i < 2; i++)
    if (x->stop_pipe[i] >= 0) close(x->stop_pipe[i]);
  arena_free(x->arena);
  free(x);
}

int exec_run(Graph *g, const ExecOptions *o) {
  Exec *x = exec_new(g, o);
  const char *stats_json = o->stats_json; /* NULL once it turned out not writable */
  if (stats_json && stats_check_json(stats_json) < 0) {
    exec_fail(x, "cannot write '%s': %s", stats_json, strerror(errno));
    stats_json = NULL;
  }
  int opened = 0;
  if (!exec_stopping(x) && plan_build(x) == 0 && metrics_start(x) == 0 && ckpt_prepare(x) == 0) opened = ops_open(x);
  if (!exec_stopping(x)) ckpt_start(x);
  bool done = ckpt_job_done(x); /* a restore of a job that had completed: nothing runs */
  if (!exec_stopping(x) && !done && x->remote && remote_connect(x->remote) < 0 && !exec_stopping(x))
    exec_fail(x, "cannot connect to the other hosts");
  if (!exec_stopping(x) && !done) {
    groups_start(x);
    fatal_groups_started(x);
    exec_watch(x);
    groups_join(x);
  }
  if (x->remote && !done && remote_finish(x->remote, !exec_stopping(x)) < 0 && !exec_stopping(x))
    exec_fail(x, "the transport failed to finish");
  ops_commit(x);
  bool ok = !atomic_load(&x->failed);
  ckpt_finish(x, ok);
  ops_close(x, opened, ok);
  metrics_stop(x); /* its scrapes read the plan and the transport's edges */
  if (x->remote) remote_stop(x->remote);
  int rc = exec_report(x, stats_json, ok);
  exec_free(x);
  return rc;
}
