/* exec.c: the executor. Builds this host's plan from a checked graph and runs it.
 *
 * Plan: every operator becomes a Node. Nodes are grouped into threads ("groups"): a source starts a
 * group; an operator with one input stream joins its producer's group (a fused, direct call) unless
 * a region boundary separates them; the channels of a region are one group each; an operator with
 * several input streams (a Merge, a fan-in) starts a group of its own, fed by bounded queues of
 * batches, and an ordered driver decides which input item goes next:
 *   - Merge roundrobin / seq / seqpulse, by the region's sequence numbers (DESIGN.md);
 *   - any other operator with several input streams (fan-in): by source position (src), ties by the
 *     order the streams are listed, so fan-in is deterministic, in the sequential graph too. The
 *     executor keeps such inputs moving with internal progress items. */
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

const char *rt_param(const OpInst *op, const char *name) {
  return op_param(op->op, name);
}

const ExecOptions *rt_options(const OpInst *op) {
  return op->exec->o;
}

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

/* ---- the plan ---- */

/* Each channel of a region is a thread of its own; everything else fuses with its producer (a
 * region's Split runs in its upstream's thread). */
static bool is_region_boundary(const Node *from, const Node *to) {
  if (from->op->channel < 0 && to->op->channel < 0) return false;
  return from->op->channel != to->op->channel || !from->op->region || !to->op->region ||
         strcmp(from->op->region, to->op->region) != 0;
}

static Group *group_new(Exec *x) {
  Group *g = arena_alloc(x->arena, sizeof *g);
  g->exec = x;
  pthread_mutex_init(&g->mu, NULL);
  pthread_cond_init(&g->wake, NULL);
  ptrvec_push(x->arena, &x->groups, g);
  return g;
}

static int build_plan(Exec *x) {
  Graph *g = x->g;
  const char *host = x->o->host;
  x->nnodes = g->nops;
  x->nodes = arena_alloc(x->arena, sizeof(Node) * (size_t)(g->nops + 1));
  for (int i = 0; i < g->nops; i++) {
    Node *n = &x->nodes[i];
    Op *op = g->ops[i];
    n->op = op;
    n->local = !host || (op->host && !strcmp(op->host, host)) || (!op->host && g->nhosts > 0 && !strcmp(g->hosts[0]->name, host));
    n->inst.op = op;
    n->inst.exec = x;
    n->inst.exec_data = n;
    n->inst.impl = rt_kind_impl(op->kind);
    n->inst.in_schema = op_input_schema(op);
    n->inst.out_schema = op_output_schema(op);
    n->inst.graph_dir = x->graph_dir;
    n->inst.scratch = arena_new();
    if (!n->inst.impl) sf_die("no implementation of kind %s", kind_name(op->kind));
    n->outs = arena_alloc(x->arena, sizeof(PtrVec) * (size_t)(op->noutputs + 1));
    for (int p = 0; p < op->ninputs; p++) n->nslots += op->inputs[p].nstreams;
    n->slot_port = arena_alloc(x->arena, sizeof(int) * (size_t)(n->nslots + 1));
    n->in = arena_alloc(x->arena, sizeof(Edge *) * (size_t)(n->nslots + 1));
    int s = 0;
    for (int p = 0; p < op->ninputs; p++)
      for (int k = 0; k < op->inputs[p].nstreams; k++) n->slot_port[s++] = p;
    n->finals_left = n->nslots;
    n->channel_merge = op->kind == KIND_MERGE && op->channel >= 0;
  }
  /* groups, in topological order so a producer's group exists before its consumers' */
  for (int t = 0; t < g->nops; t++) {
    Op *op = g->order[t];
    Node *n = &x->nodes[op->index];
    if (!n->local) continue;
    if (n->nslots == 0) {
      Group *gr = group_new(x);
      gr->source = n;
      n->group = gr;
      continue;
    }
    if (n->nslots == 1) {
      Stream *s = op->inputs[0].streams[0];
      Node *from = &x->nodes[s->producer->index];
      if (from->local && from->group && !is_region_boundary(from, n)) {
        n->group = from->group;
        continue;
      }
    }
    Group *gr = group_new(x);
    gr->entry = n;
    n->group = gr;
    gr->cur = arena_alloc(x->arena, sizeof(Batch *) * (size_t)(n->nslots + 1));
    gr->floor = arena_alloc(x->arena, sizeof(uint64_t) * (size_t)(n->nslots + 1));
    gr->floor_known = arena_alloc(x->arena, sizeof(bool) * (size_t)(n->nslots + 1));
    if (op->kind == KIND_MERGE) {
      const char *order = op_param(op, "order");
      gr->driver = n->nslots == 1 ? DRIVE_SINGLE
                 : !strcmp(order, "roundrobin") ? DRIVE_RR
                 : !strcmp(order, "seq") ? DRIVE_SEQ
                                         : DRIVE_SEQPULSE;
    } else {
      gr->driver = n->nslots == 1 ? DRIVE_SINGLE : DRIVE_SRC;
    }
    gr->by_src = gr->driver == DRIVE_SRC;
  }
  for (int i = 0; i < g->nops; i++) {
    Node *n = &x->nodes[i];
    if (n->local && n->group && n->inst.impl->idle) ptrvec_push(x->arena, &n->group->idlers, n);
  }
  /* edges */
  for (int i = 0; i < g->nops; i++) {
    Node *to = &x->nodes[i];
    Op *op = to->op;
    int slot = 0;
    for (int p = 0; p < op->ninputs; p++)
      for (int k = 0; k < op->inputs[p].nstreams; k++, slot++) {
        Stream *s = op->inputs[p].streams[k];
        Node *from = &x->nodes[s->producer->index];
        if (!from->local && !to->local) continue;
        Edge *e = arena_alloc(x->arena, sizeof *e);
        e->stream = s;
        e->slot = slot;
        e->from = from->local ? from : NULL;
        e->to = to->local ? to : NULL;
        e->to_op = op;
        e->limit = x->batch;
        if (from->local && to->local) {
          e->kind = from->group == to->group ? EDGE_DIRECT : EDGE_QUEUE;
        } else if (from->local) {
          e->kind = EDGE_REMOTE;
          e->limit = x->remote_batch;
        } else {
          e->kind = EDGE_QUEUE; /* filled by a receiver thread */
        }
        if (to->local && e->kind == EDGE_QUEUE) e->q = queue_new(x, to->group);
        if (to->local) {
          to->in[slot] = e;
          e->feeds_fanin = to->group->driver == DRIVE_SRC;
        } else {
          /* the consumer on another host orders by src when it has several input streams */
          int slots = 0;
          for (int q = 0; q < op->ninputs; q++) slots += op->inputs[q].nstreams;
          e->feeds_fanin = op->kind != KIND_MERGE && slots > 1;
        }
        if (from->local) {
          ptrvec_push(x->arena, &from->outs[s->port], e);
          e->producer = from->group;
          if (e->kind != EDGE_DIRECT) ptrvec_push(x->arena, &from->group->outs, e);
        }
      }
  }
  /* cross-host edges go through the transport */
  bool any_remote = false;
  for (int i = 0; i < g->nops && !any_remote; i++)
    if (!x->nodes[i].local)
      for (int p = 0; p < g->ops[i]->ninputs; p++)
        for (int k = 0; k < g->ops[i]->inputs[p].nstreams; k++)
          if (x->nodes[g->ops[i]->inputs[p].streams[k]->producer->index].local) any_remote = true;
  for (int i = 0; i < g->nops && !any_remote; i++)
    if (x->nodes[i].local)
      for (int p = 0; p < g->ops[i]->ninputs; p++)
        for (int k = 0; k < g->ops[i]->inputs[p].nstreams; k++)
          if (!x->nodes[g->ops[i]->inputs[p].streams[k]->producer->index].local) any_remote = true;
  if (host) {
    bool found = false;
    for (int i = 0; i < g->nhosts; i++)
      if (!strcmp(g->hosts[i]->name, host)) found = true;
    if (!found) {
      exec_fail(x, "graph '%s' has no host '%s'", g->file, host);
      return -1;
    }
  }
  if (any_remote) {
    char err[512];
    x->remote = remote_start(x, g, host, x->o, err, sizeof err);
    if (!x->remote) {
      exec_fail(x, "%s", err);
      return -1;
    }
    for (int i = 0; i < g->nops; i++) {
      Node *to = &x->nodes[i];
      int slot = 0;
      for (int p = 0; p < to->op->ninputs; p++)
        for (int k = 0; k < to->op->inputs[p].nstreams; k++, slot++) {
          Stream *s = to->op->inputs[p].streams[k];
          Node *from = &x->nodes[s->producer->index];
          if (to->local == from->local) continue;
          const char *id = arena_printf(x->arena, "%s>%s/%d", s->name, to->op->name, slot);
          int rc;
          if (to->local) {
            rc = remote_accept(x->remote, id, from->op->host, s->schema, to->in[slot], err, sizeof err);
          } else {
            Edge *e = NULL;
            for (int c = 0; c < from->outs[s->port].n && !e; c++) {
              Edge *cand = from->outs[s->port].items[c];
              if (cand->to_op == to->op && cand->slot == slot) e = cand;
            }
            sf_assert(e);
            e->tx = remote_open(x->remote, id, to->op->host, s->schema, err, sizeof err);
            rc = e->tx ? 0 : -1;
          }
          if (rc < 0) {
            exec_fail(x, "%s", err);
            return -1;
          }
        }
    }
  }
  return 0;
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
  if (!exec_stopping(x) && build_plan(x) == 0) {
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
