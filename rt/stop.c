/* stop.c: how a job stops. The first error is recorded; every wait wakes up, every thread stops,
 * every operator is closed with ok=false (FileSink removes its temporary file) and exec_run
 * returns 1. A stop signal (signals.c: SIGINT, SIGTERM, SIGHUP, ...) is such a failure. Its
 * handler, on whatever thread it lands, only records it and writes to the stop pipe; every thread
 * sees it through exec_stopping(), waits on files end through the stop pipe (rt_wait_fd), and the
 * main thread records the failure. The lock rules these functions follow are at the top of
 * flow.c. */
#include "exec_priv.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <unistd.h>

static void wake_all(Exec *x) {
  for (int i = 0; i < x->groups.n; i++) {
    Group *g = x->groups.items[i];
    pthread_mutex_lock(&g->mu);
    pthread_cond_broadcast(&g->wake);
    for (int s = 0; g->entry && s < g->entry->nslots; s++)
      if (g->entry->in[s]->q) pthread_cond_broadcast(&g->entry->in[s]->q->not_full);
    pthread_mutex_unlock(&g->mu);
  }
  if (x->remote) remote_abort(x->remote);
}

atomic_bool rt_halt_hint;

/* Records the first failure. One that follows a stop signal is its consequence (an operator that
 * saw the job stopping, say): the message is the signal's. */
static void exec_failv(Exec *x, const char *fmt, va_list ap) {
  int sig = atomic_load(&x->committing) ? 0 : signals_caught();
  char name[32];
  pthread_mutex_lock(&x->fail_mu);
  bool first = !atomic_load(&x->failed);
  if (first && sig) {
    snprintf(x->message, sizeof x->message, "interrupted by %s", signals_name(sig, name, sizeof name));
    x->stop_signal = sig;
  }
  else if (first)
    vsnprintf(x->message, sizeof x->message, fmt, ap);
  atomic_store_explicit(&rt_halt_hint, true, memory_order_release);
  atomic_store(&x->failed, true);
  pthread_mutex_unlock(&x->fail_mu);
  if (!first) return;
  if (x->stop_pipe[1] >= 0) (void)!write(x->stop_pipe[1], "", 1); /* written once: it cannot be full */
  wake_all(x);
}

void exec_fail(Exec *x, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  exec_failv(x, fmt, ap);
  va_end(ap);
}

bool exec_stopping(Exec *x) {
  return atomic_load(&x->failed) || signals_caught();
}

void exec_note_signal(Exec *x) {
  if (signals_caught() && !atomic_load(&x->failed)) exec_fail(x, "interrupted");
}

int rt_fail(OpInst *op, const char *fmt, ...) {
  char msg[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const Op *o = op->op;
  if (op->exec && op->exec->restore_why) { /* a restore tries a checkpoint: it may try an older one */
    snprintf(op->exec->restore_why, op->exec->restore_why_cap, "%s", msg);
    return -1;
  }
  if (o->origin && o->channel >= 0 && o->kind != KIND_SPLIT && o->kind != KIND_MERGE)
    exec_fail(op->exec, "operator '%s' (from '%s'): %s", o->name, o->origin, msg); /* a replica */
  else
    exec_fail(op->exec, "operator '%s': %s", o->name, msg);
  return -1;
}

/* "sf-exec: KIND operator 'NAME': message" on the job's log, at once, in one call (one line). */
static void say(OpInst *op, const char *kind, const char *fmt, va_list ap) {
  char msg[1536];
  vsnprintf(msg, sizeof msg, fmt, ap);
  fprintf(op->exec->log, "sf-exec: %soperator '%s': %s\n", kind, op->op->name, msg);
  fflush(op->exec->log);
}

void rt_warn(OpInst *op, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  say(op, "warning: ", fmt, ap);
  va_end(ap);
}

void rt_note(OpInst *op, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  say(op, "", fmt, ap);
  va_end(ap);
}

int rt_eval_fail(OpInst *op, const char *what, const char *text, const Tuple *t, const char *err) {
  char tuple[512];
  tuple_describe(t, op->in_schema, tuple, sizeof tuple);
  return rt_fail(op, "%s: %s in '%s' on tuple %s", what, err, text, tuple);
}

bool rt_draining(const OpInst *op) {
  (void)op;
  return signals_draining();
}

bool rt_stopping(const OpInst *op) {
  return exec_stopping(op->exec);
}

int rt_wait_fd(const OpInst *op, int fd, short events) {
  int rc;
  while ((rc = rt_wait_fd_for(op, fd, events, WAIT_SLICE_MS)) == 2) continue;
  return rc;
}

int rt_wait_fd_for(const OpInst *op, int fd, short events, int ms) {
  Exec *x = op->exec;
  struct pollfd p[2] = { { .fd = fd, .events = events }, { .fd = x->stop_pipe[0], .events = POLLIN } };
  if (exec_stopping(x)) return 0;
  /* the stop pipe wakes the poll at once; the time limit is for a stop noticed another way */
  int n = poll(p, 2, ms > WAIT_SLICE_MS ? WAIT_SLICE_MS : ms);
  if (n < 0 && errno != EINTR) return -1;
  if (n > 0 && p[0].revents) return 1;
  return exec_stopping(x) ? 0 : 2;
}
