/* plan.c: builds this host's plan from a checked graph.
 *
 * Every operator becomes a Node. Nodes are grouped into threads ("groups"): a source starts a
 * group; an operator with one input stream joins its producer's group (a fused, direct call) unless
 * a region boundary separates them; the channels of a region are one group each; an operator with
 * several input streams (a Merge, a fan-in) starts a group of its own, fed by bounded queues of
 * batches, and an ordered driver decides which input item goes next:
 *   - Merge roundrobin / seq / seqpulse, by the region's sequence numbers (docs/design.md,
 *     "Ordering strategies");
 *   - any other operator with several input streams (fan-in): by source position (src), ties by the
 *     order the streams are listed, so fan-in is deterministic, in the sequential graph too. The
 *     executor keeps such inputs moving with internal progress items.
 * Everything here runs on the main thread before any group's thread starts: what it fills is
 * "plan" in exec_priv.h, read-only afterwards. */
#include "exec_priv.h"

#include <string.h>

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

const char *rt_param(const OpInst *op, const char *name) {
  return op_param(op->op, name);
}

const ExecOptions *rt_options(const OpInst *op) {
  return op->exec->o;
}

/* Nodes: one per graph operator (on other hosts too, unmarked local), with their input slots. */
static void plan_nodes(Exec *x) {
  Graph *g = x->g;
  const char *host = x->o->host;
  x->nnodes = g->nops;
  x->nodes = arena_alloc(x->arena, sizeof(Node) * (size_t)(g->nops + 1));
  for (int i = 0; i < g->nops; i++) {
    Node *n = &x->nodes[i];
    Op *op = g->ops[i];
    n->op = op;
    n->local = !host || (op->host && !strcmp(op->host, host)) ||
               (!op->host && g->nhosts > 0 && !strcmp(g->hosts[0]->name, host));
    n->inst.op = op;
    n->inst.exec = x;
    n->inst.exec_data = n;
    n->inst.impl = rt_kind_impl(op->kind);
    n->inst.in_schema = op_input_schema(op);
    n->inst.out_schema = op_output_schema(op);
    n->inst.graph_dir = x->graph_dir;
    n->inst.scratch = arena_new();
    if (op->origin && op->channel >= 0 && op->kind != KIND_SPLIT && op->kind != KIND_MERGE) /* as rt_fail */
      n->label = arena_printf(x->arena, "operator '%s' (from '%s')", op->name, op->origin);
    else
      n->label = arena_printf(x->arena, "operator '%s'", op->name);
    if (!n->inst.impl) sf_die("no implementation of kind %s", kind_name(op->kind));
    n->outs = arena_alloc(x->arena, sizeof(PtrVec) * (size_t)(op->noutputs + 1));
    for (int p = 0; p < op->ninputs; p++) n->nslots += op->inputs[p].nstreams;
    n->slot_port = arena_alloc(x->arena, sizeof(int) * (size_t)(n->nslots + 1));
    n->in = arena_alloc(x->arena, sizeof(Edge *) * (size_t)(n->nslots + 1));
    int s = 0;
    for (int p = 0; p < op->ninputs; p++)
      for (int k = 0; k < op->inputs[p].nstreams; k++) n->slot_port[s++] = p;
    n->finals_left = n->nslots;
    n->channel_merge = (op->kind == KIND_MERGE || op->kind == KIND_JOIN) && op->channel >= 0;
    if (x->o->stats && op->noutputs == 0 && op->ninputs > 0) { /* a sink: latency from the sources */
      n->latency = arena_alloc(x->arena, sizeof *n->latency);
      for (int b = 0; b < LATENCY_BUCKETS; b++) atomic_init(&n->latency->count[b], 0);
      atomic_init(&n->latency->sum_ns, 0);
    }
    n->prof = stats_prof_new(x);
  }
}

/* Groups, in topological order so a producer's group exists before its consumers', and the
 * driver of each group fed by queues. */
static void plan_groups(Exec *x) {
  Graph *g = x->g;
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
    gr->slot_ckpt = arena_alloc(x->arena, sizeof(uint64_t) * (size_t)(n->nslots + 1));
    if (op->kind == KIND_MERGE) {
      const char *order = op_param(op, "order");
      gr->driver = n->nslots == 1 ? DRIVE_SINGLE
                 : !strcmp(order, "roundrobin") ? DRIVE_RR
                 : !strcmp(order, "seq") ? DRIVE_SEQ
                                         : DRIVE_SEQPULSE;
    } else if (n->nslots > 1 && op->kind == KIND_JOIN && op->channel >= 0) {
      /* a replica of a Join: its two sides come from one Split, which numbered them in the time
       * order of the sides' fan-in; it takes them back in that order, as a region's Merge would */
      gr->driver = DRIVE_SEQPULSE;
    } else if (n->nslots > 1 && ((op->ninputs == 1 && op->inputs[0].time_order) || op->kind == KIND_JOIN ||
                                 (op->kind == KIND_SPLIT && op->ninputs == 2))) {
      /* a Join consumes its two sides as one time-ordered fan-in, the left side's streams first;
       * so does the Split that deals them to a replicated Join's channels */
      gr->driver = DRIVE_TIME; /* the checker gave every input stream an event time */
      gr->time_attr = arena_alloc(x->arena, sizeof(int) * (size_t)n->nslots);
      for (int p = 0, s = 0; p < op->ninputs; p++)
        for (int k = 0; k < op->inputs[p].nstreams; k++, s++) {
          gr->time_attr[s] = stream_time_slot(g, op->inputs[p].streams[k]);
          if (gr->time_attr[s] < 0) sf_die("operator '%s': a time-ordered input without event time", op->name);
        }
    } else {
      gr->driver = n->nslots == 1 ? DRIVE_SINGLE : DRIVE_SRC;
    }
    gr->by_src = gr->driver == DRIVE_SRC;
    if (op->kind == KIND_MERGE && gr->driver != DRIVE_SINGLE && x->o->metrics) { /* its wait (order.c) */
      gr->wait_timed = true;
      gr->wait_on = arena_alloc(x->arena, sizeof(bool) * (size_t)n->nslots);
      gr->slot_wait_ns = arena_alloc(x->arena, sizeof(atomic_ullong) * (size_t)n->nslots);
      for (int s = 0; s < n->nslots; s++) atomic_init(&gr->slot_wait_ns[s], 0);
      atomic_init(&gr->wait_ns, 0);
    }
  }
  for (int i = 0; i < g->nops; i++) {
    Node *n = &x->nodes[i];
    if (n->local && n->group && n->inst.impl->idle) ptrvec_push(x->arena, &n->group->idlers, n);
  }
}

/* Edges: one per stream into each input slot of a local consumer, or from a local producer. */
static void plan_edges(Exec *x) {
  Graph *g = x->g;
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
}

/* Hosted groups (group.c, group_pump): a region's Merge whose group hands nothing to another
 * thread or host (everything after it is fused, down to its sinks), has no Custom operator (which
 * may block or wait in its callbacks) and is fed only by local channel threads that deliver one
 * input stream each, runs on those threads instead of a thread of its own. At width 2 on 2 cores
 * that leaves the source's thread and the two channels' instead of four busy threads, and a run is
 * merged and written by the core that just processed it. --merge-threads keeps the thread. */
static void plan_hosts(Exec *x) {
  if (x->o->merge_threads) return;
  for (int i = 0; i < x->groups.n; i++) {
    Group *g = x->groups.items[i];
    Node *n = g->entry;
    if (!n || n->op->kind != KIND_MERGE || g->driver == DRIVE_SINGLE || g->driver == DRIVE_SRC) continue;
    if (g->outs.n > 0) continue;
    bool ok = true;
    for (int k = 0; k < x->nnodes && ok; k++)
      if (x->nodes[k].local && x->nodes[k].group == g && x->nodes[k].op->kind == KIND_CUSTOM) ok = false;
    for (int s = 0; s < n->nslots && ok; s++) {
      Edge *e = n->in[s];
      Group *p = e && e->kind == EDGE_QUEUE && e->from ? e->producer : NULL;
      if (!p || p->source || p->driver != DRIVE_SINGLE || p->hosted) ok = false;
    }
    if (!ok) continue;
    g->hosted = true;
    pthread_mutex_init(&g->pump_mu, NULL);
    for (int s = 0; s < n->nslots; s++) {
      Group *p = n->in[s]->producer;
      bool listed = false;
      for (int h = 0; h < p->hosts.n; h++)
        if (p->hosts.items[h] == g) listed = true;
      if (!listed) ptrvec_push(x->arena, &p->hosts, g);
    }
  }
}

/* RemoteConfig.deliver: a receiver thread's batch goes into the queue of its edge. */
static int on_remote_items(void *ctx, void *edge, Item *items, int n) {
  return edge_receive(ctx, edge, items, n);
}

/* RemoteConfig.fail: the transport's failures are the job's. */
static void on_remote_failure(void *ctx, const char *message) {
  exec_fail(ctx, "%s", message);
}

/* This host must be one of the graph's; cross-host edges go through the transport, each a
 * receiver (remote_accept) or a sender (remote_open), and so do the checkpoints' control streams
 * (ckpt_prepare sets them up). 0, or -1 with the failure recorded. */
static int plan_remote(Exec *x) {
  Graph *g = x->g;
  const char *host = x->o->host;
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
  /* with checkpoints between hosts, the control streams need the transport even here */
  const char *first_host = NULL;
  bool several_hosts = false;
  for (int i = 0; i < g->nops && host && x->o->checkpoint_dir && g->nhosts > 0; i++) {
    const char *h = g->ops[i]->host ? g->ops[i]->host : g->hosts[0]->name;
    if (!first_host) first_host = h;
    else if (strcmp(first_host, h)) several_hosts = true;
  }
  if (any_remote || several_hosts) {
    char err[512];
    RemoteConfig rc = { .g = g, .host = host, .o = x->o, .batch = x->remote_batch,
                        .deliver = on_remote_items, .fail = on_remote_failure, .ctx = x };
    x->remote = remote_start(&rc, err, sizeof err);
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

/* Each port whose one edge is direct: rt_emit's short way (flow.c, deliver_tuple). */
static void plan_direct(Exec *x) {
  for (int i = 0; i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (!n->outs) continue;
    n->direct = arena_alloc(x->arena, sizeof(Edge *) * (size_t)(n->op->noutputs + 1));
    for (int p = 0; p < n->op->noutputs; p++) {
      PtrVec *v = &n->outs[p];
      if (v->n == 1 && ((Edge *)v->items[0])->kind == EDGE_DIRECT) n->direct[p] = v->items[0];
    }
  }
}

int plan_build(Exec *x) {
  plan_nodes(x);
  clock_plan(x); /* (after every node exists: it reads producers' nodes) */
  plan_groups(x);
  plan_edges(x);
  plan_hosts(x);
  if (plan_remote(x) < 0) return -1;
  plan_direct(x);
  return 0;
}
