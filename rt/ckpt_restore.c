/* ckpt_restore.c: --restore (ckpt_priv.h): which checkpoint, checked how, handed to the operators.
 *
 * A restore takes the newest complete checkpoint whose files all match the manifest and their
 * CRCs, whose snapshots are at its position and whose counters agree (a Merge with its Split), and
 * whose every operator's fingerprint is the graph's as it is now; a damaged or impossible one is
 * skipped with a message, never used, and so is one an operator refuses to restore from (every
 * operator that took part of it starts again from its open; sinks, whose restore touches files,
 * go last). A checkpoint of another graph, or with a changed operator, is refused: nothing is
 * restored. The checks run before any operator opens (ckpt_prepare); the operators get their
 * snapshots after (ckpt_start). An executor whose commit record is there (DIR/host-H.commit,
 * ckptdir.h) restores none of its operators with a recommit: they finish their commit from the
 * record instead (ckpt_recommit_all), and with the record of every host that holds a sink there
 * nothing is restored at all. Main thread only. */
#include "ckpt_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Whether snapshot `name` belongs to an operator whose original is `base`: base itself, or one of
 * its replicas base[K] (a checkpoint taken at another width). */
static bool same_origin(const char *name, const char *base) {
  size_t b = strlen(base);
  if (strncmp(name, base, b) != 0) return false;
  if (!name[b]) return true;
  if (name[b] != '[' || !name[b + 1]) return false;
  const char *p = name + b + 1;
  while (*p >= '0' && *p <= '9') p++;
  return p > name + b + 1 && p[0] == ']' && !p[1];
}

/* The snapshots a local operator restores from: its own, or, when the checkpoint was taken at
 * another width, those of every replica of the same original (keyed state goes to the replica
 * that owns each key: rt_owns_key). Splits and Merges sf-xform made are load_generated's; any
 * other operator without a snapshot means the graph changed. */
static bool load_node(const Ckpt *ck, uint64_t id, const Node *n, const char *manifest, char **names, NodeSnaps *ns,
                      char *why, size_t cap) {
  int count = 0;
  for (char **p = names; *p; p++) count++;
  ns->s = calloc((size_t)count + 1, sizeof *ns->s);
  /* a replica is an operator of a channel with an original (a channel's Split or Merge names the
   * region's first operator as its origin, but replicates nothing) */
  const Op *op = n->op;
  if (ckptdir_generated(op)) return true; /* load_generated's */
  bool replica = op->origin && op->channel >= 0 && op->kind != KIND_SPLIT && op->kind != KIND_MERGE;
  const char *base = replica ? op->origin : op->name;
  int then = 0, now = 0; /* replicas of base in the checkpoint, and in this graph */
  for (char **p = names; *p; p++) then += same_origin(*p, base);
  for (int i = 0; i < n->inst.exec->g->nops; i++) {
    const Op *o = n->inst.exec->g->ops[i];
    bool rep = o->origin && o->channel >= 0 && o->kind != KIND_SPLIT && o->kind != KIND_MERGE;
    now += !strcmp(rep ? o->origin : o->name, base);
  }
  /* its own snapshot, unless it is a replica and the width changed */
  for (char **p = names; *p && (!replica || then == now); p++)
    if (!strcmp(*p, op->name)) return (ns->n = 1), ckptdir_snap_load(ck->dir, id, *p, manifest, &ns->s[0], why, cap);
  /* another width: the old replicas that held some of this one's key groups (value.h), that is all
   * of them only when the width grew or shrank by a lot; an operator not replicated then held all */
  for (char **p = names; *p; p++) {
    if (!same_origin(*p, base)) continue;
    const char *br = strchr(*p + strlen(base), '[');
    int old = br ? atoi(br + 1) : 0, width_then = br ? then : 1;
    bool needed = !replica;
    for (int g = 0; g < SF_KEY_GROUPS && !needed; g++)
      needed = sf_key_channel((uint64_t)g, now) == op->channel && sf_key_channel((uint64_t)g, width_then) == old;
    if (needed && !ckptdir_snap_load(ck->dir, id, *p, manifest, &ns->s[ns->n++], why, cap)) return false;
  }
  if (ns->n == 0) {
    snprintf(why, cap, "it holds no snapshot of operator '%s': it was taken for another graph", n->op->name);
    return false;
  }
  return true;
}

/* Whether every Join of the graph is serial now where it was serial in the checkpoint whose
 * snapshots are `names`, and replicated where it was replicated: a serial Join merges its sides by
 * time itself, and its snapshot holds what it recorded of them; replicated, the region's Split
 * does: the two cannot stand for each other. Every host decides it for every Join, its own or not,
 * so that all of them choose the same checkpoint. Else false with why. */
static bool joins_fit(const Graph *g, char **names, char *why, size_t cap) {
  for (int i = 0; i < g->nops; i++) {
    const Op *op = g->ops[i];
    if (op->kind != KIND_JOIN) continue;
    bool replica = op->origin && op->channel >= 0;
    const char *base = replica ? op->origin : op->name;
    for (char **p = names; *p; p++) {
      if (!same_origin(*p, base)) continue;
      bool then = strchr(*p + strlen(base), '[') != NULL;
      if (then == replica) continue;
      snprintf(why, cap, "Join '%s' was %s when it was taken and is %s now (restore it at a width where it is %s)",
               base, then ? "replicated" : "serial", replica ? "replicated" : "serial", then ? "replicated" : "serial");
      return false;
    }
  }
  return true;
}

/* Whether snapshot `name` is of an operator of this graph that sf-xform did not make: its own, or
 * one of its replicas' at another width. */
static bool of_written_op(const Graph *g, const char *name) {
  for (int i = 0; i < g->nops; i++)
    if (!ckptdir_generated(g->ops[i]) && same_origin(name, ckptdir_base_name(g->ops[i]))) return true;
  return false;
}

/* The Splits and Merges sf-xform made. Their names number the regions, and which regions exist
 * depends on the width (with width hints), so a name can be another region's at another width;
 * their counters belong together (a region's Merge expects the sequence numbers its Split gave).
 * So they are matched by their fingerprint, which says where each one sits (its origin and
 * channel), and restored only all together: when every one of this graph has a snapshot of the
 * checkpoint with its fingerprint and the checkpoint holds no other one; else every one starts
 * afresh, as at the start of a job (which is consistent: nothing is in flight at a restore). The
 * decision is the same on every host (it reads every one's snapshot). The name each one's snapshot
 * has in the checkpoint goes to l->gen (by operator index; counters_agree reads a Split on another
 * host by it). 1 (the local ones' in l->snaps, or none), or 0 with why when one cannot be read. */
static int load_generated(Exec *x, Loaded *l, char *why, size_t cap) {
  Ckpt *ck = x->ck;
  const Graph *g = x->g;
  int nold = 0, nnew = 0;
  for (char **p = l->names; *p; p++) nold += !of_written_op(g, *p);
  for (int i = 0; i < g->nops; i++) nnew += ckptdir_generated(g->ops[i]);
  CkptSnap *old = calloc((size_t)nold + 1, sizeof *old);
  const char **oldname = calloc((size_t)nold + 1, sizeof *oldname);
  int k = 0, rc = 1;
  for (char **p = l->names; *p && rc; p++)
    if (!of_written_op(g, *p)) {
      oldname[k] = *p;
      if (!ckptdir_snap_load(ck->dir, l->id, *p, l->manifest, &old[k++], why, cap)) rc = 0;
    }
  bool all = rc && nold == nnew;
  int *match = calloc((size_t)g->nops + 1, sizeof *match);
  for (int i = 0; i < g->nops && all; i++) {
    if (!ckptdir_generated(g->ops[i])) continue;
    uint64_t fp = ckptdir_op_fingerprint(g->ops[i]);
    match[i] = -1;
    for (int j = 0; j < nold && match[i] < 0; j++)
      if (old[j].bytes && old[j].graph == ck->graph && old[j].fingerprint == fp) match[i] = j;
    if (match[i] < 0) all = false;
    else old[match[i]].graph = ~ck->graph; /* taken: one snapshot for one operator */
  }
  /* Starting afresh is consistent for what a Split or Merge counts, but not for what a Split
   * merging its inputs by time recorded of them at the cut (order.c, time_barrier): those items had
   * come from their sources before the checkpoint's position and will not come again. Such a Split
   * takes its own snapshot back for them (its ticks and position too), whatever the others do. */
  for (int i = 0; !all && rc && i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (!n->local || !ckptdir_generated(n->op) || !n->group || n->group->entry != n || n->group->driver != DRIVE_TIME)
      continue;
    uint64_t fp = ckptdir_op_fingerprint(n->op);
    for (int j = 0; j < nold; j++)
      if (old[j].bytes && old[j].graph == ck->graph && old[j].fingerprint == fp) {
        l->snaps[i].s[0] = old[j];
        l->snaps[i].n = 1;
        l->snaps[i].inputs_only = true;
        memset(&old[j], 0, sizeof old[j]); /* moved */
        break;
      }
  }
  l->gen = calloc((size_t)g->nops + 1, sizeof *l->gen);
  for (int i = 0; i < g->nops && all; i++)
    if (ckptdir_generated(g->ops[i])) l->gen[i] = oldname[match[i]];
  for (int i = 0; all && i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (!n->local || !ckptdir_generated(n->op)) continue;
    CkptSnap *s = &old[match[n->op->index]];
    s->graph = ck->graph;
    l->snaps[i].s[0] = *s;
    l->snaps[i].n = 1;
    memset(s, 0, sizeof *s); /* moved */
  }
  for (int j = 0; j < k; j++) free(old[j].bytes);
  free(old);
  free(oldname);
  free(match);
  return rc;
}

/* Whether n's snapshots belong to this graph and to n's definition as it is now; why otherwise. */
static bool snaps_belong(const Ckpt *ck, const Node *n, const NodeSnaps *ns, char *why, size_t cap) {
  uint64_t fp = ckptdir_op_fingerprint(n->op);
  for (int k = 0; k < ns->n; k++) {
    if (ns->s[k].graph != ck->graph) return snprintf(why, cap, "operator '%s' is of another graph", n->op->name), false;
    if (ns->s[k].fingerprint != fp)
      return snprintf(why, cap, "operator '%s' changed since it was taken (its kind, parameters, expressions or "
                      "schemas differ)", ckptdir_base_name(n->op)), false;
  }
  return true;
}


void ckpt_loaded_free(Exec *x, Loaded *l) {
  for (int i = 0; l->snaps && i < x->nnodes; i++) {
    for (int k = 0; k < l->snaps[i].n; k++) free(l->snaps[i].s[k].bytes);
    free(l->snaps[i].s);
  }
  free(l->snaps);
  free(l->gen);
  ckptdir_names_free(l->names);
  free(l->manifest);
  memset(l, 0, sizeof *l);
}

/* The assigning Split whose sequence numbers reach n (up its first inputs, through channels and
 * their Splits and Merges), NULL when none. */
static const Op *assigning_split(const Op *op) {
  for (int hops = 0; op && hops < 1000; hops++) {
    if (op->ninputs == 0 || op->inputs[0].nstreams == 0 || !op->inputs[0].streams[0]) return NULL;
    const Op *up = op->inputs[0].streams[0]->producer;
    if (up && up->kind == KIND_SPLIT) {
      const char *seq = op_param(up, "sequence");
      if (!seq || !strcmp(seq, "assign")) return up;
    }
    op = up;
  }
  return NULL;
}

/* Whether the counters of n's snapshot can be, next to those of the Split numbering its input (in
 * checkpoint l, also when that Split runs on another host: its snapshot found as load_generated
 * matched it, never by its name, which can be another region's at the checkpoint's width): an
 * ordered driver never expects a sequence number its Split did not assign, nor does a round-robin
 * Merge take more tuples than it dealt. why otherwise. */
static bool counters_agree(Exec *x, const Loaded *l, const Node *n, char *why, size_t cap) {
  const Group *g = n->group;
  if (!g || g->entry != n || g->driver == DRIVE_SINGLE || g->driver == DRIVE_SRC || g->driver == DRIVE_TIME ||
      l->snaps[n->op->index].n == 0 || l->snaps[n->op->index].s[0].finished)
    return true;
  const CkptSnap *m = &l->snaps[n->op->index].s[0];
  const Op *split = assigning_split(n->op);
  if (!split) return true;
  CkptSnap own = { 0 };
  const CkptSnap *ss = NULL;
  if (x->nodes[split->index].local) {
    if (l->snaps[split->index].n > 0) ss = &l->snaps[split->index].s[0];
  } else {
    const char *name = ckptdir_generated(split) ? l->gen[split->index] : split->name;
    for (char **p = l->names; name && *p && !ss; p++)
      if (!strcmp(*p, name)) {
        char ignored[PATH_MAX + 200];
        if (ckptdir_snap_load(x->ck->dir, l->id, name, l->manifest, &own, ignored, sizeof ignored)) ss = &own;
      }
  }
  bool ok = true;
  uint64_t next, rr;
  const char *mname = ckptdir_generated(n->op) && l->gen[n->op->index] ? l->gen[n->op->index] : n->op->name;
  if (ss && split_snapshot_counters(ss->state.p, ss->state.n, &next, &rr)) {
    bool hash = op_param(split, "strategy") && !strcmp(op_param(split, "strategy"), "hash");
    if (g->driver == DRIVE_SEQ ? m->next_seq != next : m->next_seq > next)
      ok = false, snprintf(why, cap, "'%s.snap' cannot be: it expects sequence number %" PRIu64 ", its Split '%s' "
                          "assigns %" PRIu64 " next", mname, m->next_seq, split->name, next);
    else if (!hash && g->driver == DRIVE_RR && m->taken > rr) /* (a seqpulse Merge may take several per tuple) */
      ok = false, snprintf(why, cap, "'%s.snap' cannot be: it took %" PRIu64 " tuples, its Split '%s' dealt %" PRIu64,
                          mname, m->taken, split->name, rr);
  }
  free(own.bytes);
  return ok;
}

/* Loads checkpoint id's snapshots of every local operator and checks them (files, CRCs, what they
 * belong to) without touching an operator. 1 when sound (l holds them), 0 when damaged or
 * incomplete (why says how), -2 when it is of another graph or an operator changed (why says
 * which). l is freed but when 1. */
static int check_ckpt(Exec *x, uint64_t id, Loaded *l, char *why, size_t cap) {
  Ckpt *ck = x->ck;
  memset(l, 0, sizeof *l);
  l->id = id;
  l->manifest = ckptdir_read_manifest(ck->dir, id, why, cap);
  if (!l->manifest) return 0;
  uint64_t graph;
  char name[256];
  int rc = 1;
  if (!ckptdir_manifest_graph(l->manifest, &graph, name, sizeof name))
    rc = 0, snprintf(why, cap, "its manifest is malformed");
  else if (graph != ck->graph)
    rc = -2, snprintf(why, cap, "it is of another graph ('%s')", name);
  if (rc != 1) {
    ckpt_loaded_free(x, l);
    return rc;
  }
  int nnames;
  l->names = ckptdir_manifest_names(l->manifest, &nnames);
  l->snaps = calloc((size_t)x->nnodes + 1, sizeof *l->snaps);
  if (!joins_fit(x->g, l->names, why, cap)) rc = 0;
  for (int i = 0; i < x->nnodes && rc == 1; i++)
    if (x->nodes[i].local && !load_node(ck, id, &x->nodes[i], l->manifest, l->names, &l->snaps[i], why, cap)) rc = 0;
  if (rc == 1) rc = load_generated(x, l, why, cap);
  /* every snapshot was taken at the checkpoint's position, and the counters agree with each other */
  const char *at = strstr(l->manifest, "\nposition ");
  uint64_t pos = at ? strtoull(at + 10, NULL, 10) : 0;
  if (rc == 1 && !at) rc = 0, snprintf(why, cap, "its manifest is malformed");
  for (int i = 0; i < x->nnodes && rc == 1; i++)
    for (int k = 0; k < l->snaps[i].n && rc == 1; k++)
      if (l->snaps[i].s[k].pos != pos)
        rc = 0, snprintf(why, cap, "'%s.snap' is at position %" PRIu64 ", its checkpoint at %" PRIu64,
                         x->nodes[i].op->name, l->snaps[i].s[k].pos, pos);
  for (int i = 0; i < x->nnodes && rc == 1; i++)
    if (x->nodes[i].local && !counters_agree(x, l, &x->nodes[i], why, cap)) rc = 0;
  /* sound, but not this graph's as it is now: refused, never used, and no older one either (they
   * are the same job's) */
  for (int i = 0; i < x->nnodes && rc == 1; i++)
    if (x->nodes[i].local && !snaps_belong(ck, &x->nodes[i], &l->snaps[i], why, cap)) rc = -2;
  if (rc != 1) ckpt_loaded_free(x, l);
  return rc;
}

/* Whether a failed restore of n's kind leaves something outside the process changed (a sink's
 * files): then it cannot be undone, and an older checkpoint cannot be tried instead. */
static bool restore_touches_files(const Node *n) {
  return n->op->kind == KIND_FILESINK || n->op->kind == KIND_SOCKETSINK;
}

/* Hands one local node its snapshots. 1, or 0 with why when its kind refused them (the failure
 * not recorded: x->restore_why catches rt_fail). */
static int restore_node(Exec *x, Node *n, NodeSnaps *ns, uint64_t id, char *why, size_t cap) {
  Ckpt *ck = x->ck;
  CkptSnap *first = &ns->s[0];
  Group *g = n->group;
  int finished = 0;
  for (int k = 0; k < ns->n; k++) finished += ns->s[k].finished;
  if (finished) { /* it had finished: it does not run again (ckpt.c, "operators that finished") */
    if (finished < ns->n)
      return snprintf(why, cap, "operator '%s': the snapshots of its replicas disagree on whether it had finished",
                      n->op->name), 0;
    if (n->op->noutputs == 0)
      return snprintf(why, cap, "operator '%s': a sink's snapshot says it had finished, which sf-exec never writes",
                      n->op->name), 0;
    n->restored_finished = true;
    n->ck_taking = n->ck_seen = id;
    return 1;
  }
  if (g && g->entry == n && g->driver == DRIVE_TIME) g->out_pos = first->next_seq; /* (ckpt_time_write) */
  if (g && g->entry == n && g->driver != DRIVE_SINGLE && g->driver != DRIVE_TIME) {
    g->next_seq = first->next_seq;
    g->taken = first->taken;
    g->rr_next = split_rr_channel(first->taken, n->nslots);
  }
  if (n->nslots == 0) { /* a source: it is at the checkpoint's position */
    n->ck_seen = id;
    n->ck_prev = first->pos;
    atomic_store(&n->ck_pos, first->pos);
    ck->pace.last = first->pos;
  }
  n->ck_taking = id; /* rt_checkpoint_taking: the checkpoint being restored */
  for (int k = 0; k < ns->n; k++) {
    CkptSnap *s = &ns->s[k];
    if (clock_kept(n) && clock_restore(n, &s->state) < 0)
      return snprintf(why, cap, "operator '%s': its snapshot does not fit this sf-exec (its ticks are %s)",
                      n->op->name, s->state.bad ? "truncated" : "malformed"), 0;
    if (g && g->entry == n && g->driver == DRIVE_TIME && order_time_restore(g, &s->state) < 0)
      return snprintf(why, cap, "operator '%s': its snapshot does not fit this graph (what it recorded of its "
                      "inputs merged by time is truncated or malformed)", n->op->name), 0;
    if (ns->inputs_only) continue; /* (its kind starts afresh, as the other Splits and Merges do) */
    if (n->inst.impl->restore) {
      char msg[1600] = "";
      x->restore_why = msg;
      x->restore_why_cap = sizeof msg;
      int r = n->inst.impl->restore(&n->inst, &s->state);
      x->restore_why = NULL;
      if (r < 0) return snprintf(why, cap, "operator '%s' cannot restore its snapshot: %s", n->op->name, msg), 0;
      if (!snap_done(&s->state))
        return snprintf(why, cap, "operator '%s': its snapshot does not fit this sf-exec (%s)", n->op->name,
                        s->state.bad ? "truncated" : "bytes left over"), 0;
    } else if (s->state.off < s->state.n) {
      return snprintf(why, cap, "operator '%s': its snapshot has state this operator kind cannot restore",
                      n->op->name), 0;
    }
  }
  return 1;
}

/* An operator that took in part of a checkpoint it then could not use starts again from its open
 * (its state is what open makes). 0, or -1 with the failure recorded. */
static int reset_node(Exec *x, Node *n) {
  if (n->inst.impl->close) n->inst.impl->close(&n->inst, false);
  n->inst.state = NULL;
  n->restored_finished = false;
  n->ck_seen = n->ck_prev = 0;
  atomic_store(&n->ck_pos, 0);
  clock_reset(n);
  Group *g = n->group;
  if (g && g->entry == n) g->next_seq = g->taken = 0, g->rr_next = 0;
  return n->inst.impl->open && n->inst.impl->open(&n->inst) < 0 ? -1 : 0;
}

/* Restores every local operator from l. 1 when restored; 0 with why when an operator refused its
 * snapshots before any file was touched (every operator restored so far reset: an older
 * checkpoint can be tried); -1 with the failure recorded. Operators whose restore touches files
 * go last. */
static int apply_ckpt(Exec *x, Loaded *l, char *why, size_t cap) {
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < x->nnodes; i++) {
      Node *n = &x->nodes[i];
      if (!n->local || l->snaps[i].n == 0 || restore_touches_files(n) != (pass == 1)) continue;
      if (x->ck->committed && n->inst.impl->recommit) continue; /* it finishes its commit instead */
      if (restore_node(x, n, &l->snaps[i], l->id, why, cap) == 1) continue;
      if (pass == 1) {
        exec_fail(x, "checkpoint %" PRIu64 " in '%s' cannot be restored: %s", l->id, x->ck->dir, why);
        return -1;
      }
      for (int j = 0; j <= i; j++) /* those that took some of it (and n) start again */
        if (x->nodes[j].local && l->snaps[j].n > 0 && !restore_touches_files(&x->nodes[j]) && reset_node(x, &x->nodes[j]) < 0)
          return -1;
      return 0;
    }
  return 1;
}

/* The newest checkpoint, from ids[from] on, that check_ckpt finds sound, into l: its index, or -1
 * when there is none (said so) and -2 when one is refused (the failure recorded). Each one skipped
 * is named with why. */
int ckpt_choose(Exec *x, const uint64_t *ids, int n, int from, Loaded *l) {
  Ckpt *ck = x->ck;
  for (int i = from; i < n && !exec_stopping(x); i++) {
    char why[PATH_MAX + 200] = "";
    int rc = check_ckpt(x, ids[i], l, why, sizeof why);
    if (rc == 1) return i;
    if (rc == -2) {
      exec_fail(x, "checkpoint %" PRIu64 " in '%s' cannot be restored: %s; nothing restored or removed (without "
                "--restore the job starts afresh)", ids[i], ck->dir, why);
      return -2;
    }
    fprintf(x->log, "sf-exec: warning: checkpoint %" PRIu64 " in '%s' cannot be used (%s); trying an older one\n",
            ids[i], ck->dir, why);
  }
  if (!exec_stopping(x)) fprintf(x->log, "sf-exec: no complete checkpoint in '%s': starting from the beginning\n", ck->dir);
  return -1;
}

/* Restores the operators from the checkpoint ckpt_prepare chose, or an older one when an operator
 * refuses its snapshots. 0, or -1 with the failure recorded. */
int ckpt_restore_chosen(Exec *x) {
  Ckpt *ck = x->ck;
  int i = ck->chosen;
  while (i >= 0) {
    char why[PATH_MAX + 2000] = "";
    int rc = apply_ckpt(x, &ck->loaded, why, sizeof why);
    uint64_t id = ck->loaded.id;
    ckpt_loaded_free(x, &ck->loaded);
    if (rc < 0) return -1;
    if (rc == 1) {
      fprintf(x->log, "sf-exec: restored checkpoint %" PRIu64 " from '%s'\n", id, ck->dir);
      ck->restored = ck->complete = ck->last_req = id;
      atomic_store(&ck->done, id);
      ckpt_publish(ck, id, 0);
      return 0;
    }
    fprintf(x->log, "sf-exec: warning: checkpoint %" PRIu64 " in '%s' cannot be used (%s); trying an older one\n", id,
            ck->dir, why);
    i = ckpt_choose(x, ck->ids, ck->nids, i + 1, &ck->loaded);
    if (i == -2) return -1;
  }
  return 0;
}

/* ---- commit records ---- */

/* --restore: the commit records of this job's hosts (ckptdir.h). Sets committed (this host's is
 * there) and job_done: the record of every host that holds a sink is there (a host commits once
 * all its inputs ended, so those sinks' outputs are final whatever the other hosts did; which
 * hosts hold the rest depends on the width, theirs does not), or every host's when no operator
 * commits. 0, or -1 with the failure recorded (a damaged one). */
int ckpt_read_commits(Exec *x) {
  Ckpt *ck = x->ck;
  int found = 0, sinks = 0, sinks_found = 0;
  for (int i = 0; i < ck->nhosts; i++) {
    char why[PATH_MAX + 100];
    uint64_t graph;
    unsigned char *bytes;
    SnapIn body;
    int rc = ckptdir_read_commit(ck->dir, ck->hosts[i], &graph, &bytes, &body, why, sizeof why);
    if (rc < 0) {
      free(bytes);
      exec_fail(x, "cannot use the checkpoint directory '%s': %s (nothing restored or removed)", ck->dir, why);
      return -1;
    }
    sinks += ck->host_sinks[i];
    if (rc == 0) continue;
    found++;
    sinks_found += ck->host_sinks[i];
    if (!strcmp(ck->hosts[i], ck->host)) {
      ck->committed = true;
      ck->commit_bytes = bytes;
      ck->commit_body = body;
    } else {
      free(bytes);
    }
  }
  ck->job_done = sinks > 0 ? sinks_found == sinks : found == ck->nhosts;
  return 0;
}

/* A committed host's operators finish their commit from the record (ckpt_read_commits): its body is a
 * count, then per operator its name and record (byte strings). 0, or -1 with the failure
 * recorded. */
int ckpt_recommit_all(Exec *x) {
  Ckpt *ck = x->ck;
  for (int i = 0; i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (!n->local || !n->inst.impl->recommit) continue;
    SnapIn in = ck->commit_body, rec = { 0 };
    uint64_t count = snap_get_u64(&in);
    bool found = false;
    for (uint64_t k = 0; k < count && !in.bad && !found; k++) {
      size_t nlen, rlen;
      const char *name = snap_get_bytes(&in, &nlen);
      const unsigned char *r = snap_get_bytes(&in, &rlen);
      found = !in.bad && nlen == strlen(n->op->name) && !memcmp(name, n->op->name, nlen);
      if (found) rec = (SnapIn){ .p = r, .n = rlen };
    }
    if (!found) {
      exec_fail(x, "cannot use the checkpoint directory '%s': its commit record 'host-%s.commit' %s operator '%s'",
                ck->dir, ck->host, in.bad ? "is malformed before" : "does not name", n->op->name);
      return -1;
    }
    const char *was = fatal_enter(n->label);
    int rc = n->inst.impl->recommit(&n->inst, &rec);
    fatal_leave(was);
    if (rc < 0) return -1;
    if (!snap_done(&rec)) {
      exec_fail(x, "cannot use the checkpoint directory '%s': its commit record 'host-%s.commit' is malformed for "
                "operator '%s'", ck->dir, ck->host, n->op->name);
      return -1;
    }
  }
  return 0;
}
