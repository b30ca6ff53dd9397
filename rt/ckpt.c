/* ckpt.c: consistent checkpoints (--checkpoint-dir) and restoring from them (--restore).
 *
 * Checkpoint K is a cut of the job at one position P(K) of the sources' streams. Every source puts a
 * barrier (ITEM_BARRIER, number K) just before its first tuple at or past P(K), after writing its own
 * snapshot; every operator writes its snapshot when the barrier reaches it, then passes it on;
 * ordered merges and fan-ins deliver it once every input has it at its head (order.c), so each
 * operator's snapshot holds exactly what came before position P(K) in the sequential order. Because
 * the position is the same for every source, an operator joining several sources (a fan-in ordered
 * by position) sees its inputs cut at one place. A source that had already passed P(K) when it
 * heard of the request puts no barrier: a fan-in then drops the others' barrier K and the
 * checkpoint never completes (the next one will).
 *
 * The coordinator picks P(K) a little ahead of the furthest source (the margin grows when a
 * checkpoint does not complete in time): in one process the executor itself; between hosts the
 * executor of the first host with a source, which writes DIR/REQUEST ("K P") for the others, who
 * look at it every 20 ms. DIR must then be one directory for all executors (a shared file system
 * between machines).
 *
 * The files (their layout is ckptdir.c's): per operator a snapshot, per host a done file, and last
 * the MANIFEST. The two newest complete checkpoints are kept; older ones go. A restore takes the newest complete one whose files all match the manifest and their
 * CRCs, saying so; a damaged one is skipped with a message, never used.
 *
 * Locks: ck->mu guards the per-checkpoint counts only and is taken holding no other lock (from
 * node_deliver, which holds none); nothing is called while it is held. */
#include "ckptdir.h"
#include "exec_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { CK_SLOTS = 16 };

typedef struct Ckpt {
  char dir[PATH_MAX];       /* the checkpoint directory (plan) */
  double interval;          /* seconds between checkpoints (plan) */
  const char *host;         /* this executor's part: its host, or "all" in one process (plan) */
  const char **hosts;       /* every part a checkpoint needs (plan) */
  int nhosts;               /* (plan) */
  bool coordinator;         /* picks the positions (plan) */
  bool distributed;         /* several executors: requests go through DIR/REQUEST (plan) */
  PtrVec sources;           /* local source Node* (plan) */
  int nlocal;               /* local operators: each writes a snapshot per checkpoint (plan) */
  atomic_ullong req;        /* the latest requested checkpoint (atomic, release after req_pos) */
  atomic_ullong req_pos[CK_SLOTS]; /* position of request K at K % CK_SLOTS (atomic) */
  atomic_bool source_ended; /* a local source ended: no more checkpoints (atomic) */
  atomic_ullong done;       /* the newest checkpoint known complete (atomic; sinks read it) */
  pthread_mutex_t mu;       /* the counts */
  struct {
    uint64_t id;
    int done;
  } counts[CK_SLOTS];       /* operators done per checkpoint (mu) */
  /* the main thread's */
  uint64_t last_req;        /* the last checkpoint requested (or heard of) */
  double req_time;          /* when */
  double next_at;           /* when the next one is due */
  uint64_t complete;        /* the newest complete checkpoint */
  uint64_t margin;          /* how far ahead of the furthest source a position is put */
  uint64_t last_max;        /* the furthest source at the previous tick */
  uint64_t restored;        /* the checkpoint the job started from (0: none) */
} Ckpt;

static int ck_path(char *buf, size_t cap, const Ckpt *ck, uint64_t id, const char *name) {
  return ckptdir_path(buf, cap, ck->dir, id, name);
}

/* ---- writing a checkpoint ---- */

/* Every part of checkpoint id is done: the manifest lists the snapshots, written last. */
static void try_manifest(Exec *x, uint64_t id, uint64_t pos) {
  Ckpt *ck = x->ck;
  char path[PATH_MAX];
  for (int i = 0; i < ck->nhosts; i++) {
    char name[300];
    snprintf(name, sizeof name, "host-%s.done", ck->hosts[i]);
    if (ck_path(path, sizeof path, ck, id, name) < 0 || !ckptdir_exists(path)) return;
  }
  if (ckptdir_write_manifest(ck->dir, id, pos) < 0) {
    ck_path(path, sizeof path, ck, id, "MANIFEST");
    fprintf(x->log, "sf-exec: warning: checkpoint %" PRIu64 ": cannot write '%s': %s\n", id, path, strerror(errno));
  }
}

int ckpt_snapshot(Node *n, Item barrier) {
  Exec *x = n->inst.exec;
  Ckpt *ck = x->ck;
  if (!ck) return 0;
  uint64_t id = barrier.ckpt;
  OpInst *op = &n->inst;
  Buf state;
  buf_init(&state);
  n->ck_taking = id;
  if (op->impl->snapshot && op->impl->snapshot(op, &state) < 0) {
    buf_release(&state);
    return -1;
  }
  Group *g = n->group;
  bool driver = g && g->entry == n && g->driver != DRIVE_SINGLE;
  Buf b;
  buf_init(&b);
  ckptdir_snap_encode(&b, id, n->op->name, driver ? g->next_seq : 0, driver ? g->taken : 0, barrier.src, state.p,
                      state.n);
  buf_release(&state);

  char path[PATH_MAX], file[300];
  int rc = 0;
  snprintf(file, sizeof file, "%s.snap", n->op->name);
  if (ck_path(path, sizeof path, ck, id, NULL) < 0 || (mkdir(path, 0755) < 0 && errno != EEXIST) ||
      ck_path(path, sizeof path, ck, id, file) < 0 || ckptdir_write_file(path, b.p, b.n, false) < 0) {
    exec_fail(x, "checkpoint %" PRIu64 ": cannot write '%s': %s", id, path, strerror(errno));
    rc = -1;
  }
  buf_release(&b);
  if (rc < 0) return -1;

  pthread_mutex_lock(&ck->mu);
  int slot = (int)(id % CK_SLOTS);
  if (ck->counts[slot].id != id) ck->counts[slot].id = id, ck->counts[slot].done = 0;
  bool all = ++ck->counts[slot].done == ck->nlocal;
  pthread_mutex_unlock(&ck->mu);
  if (!all) return 0;
  /* every snapshot of this executor is written: one sync makes them all durable (and the sinks'
   * files, which they synced themselves) before the part counts as done */
  if (ck_path(path, sizeof path, ck, id, NULL) == 0) {
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || syncfs(dfd) < 0) {
      exec_fail(x, "checkpoint %" PRIu64 ": cannot sync '%s': %s", id, path, strerror(errno));
      if (dfd >= 0) close(dfd);
      return -1;
    }
    close(dfd);
  }
  snprintf(file, sizeof file, "host-%s.done", ck->host);
  if (ck_path(path, sizeof path, ck, id, file) < 0 || ckptdir_write_file(path, "", 0, true) < 0) {
    exec_fail(x, "checkpoint %" PRIu64 ": cannot write '%s': %s", id, path, strerror(errno));
    return -1;
  }
  try_manifest(x, id, barrier.src);
  return 0;
}

int ckpt_source_emit(Node *n) {
  Ckpt *ck = n->inst.exec->ck;
  uint64_t src = n->inst.cur_src;
  atomic_store_explicit(&n->ck_pos, src, memory_order_relaxed);
  uint64_t id = atomic_load_explicit(&ck->req, memory_order_acquire);
  int rc = 0;
  if (id > n->ck_seen) {
    uint64_t pos = atomic_load_explicit(&ck->req_pos[id % CK_SLOTS], memory_order_relaxed);
    if (src >= pos) {
      n->ck_seen = id;
      if (n->ck_prev <= pos) { /* this tuple crosses the position: the barrier goes first */
        Item b = { .kind = ITEM_BARRIER, .seq = pos, .src = pos, .ckpt = id };
        rc = ckpt_snapshot(n, b);
        for (int p = 0; rc == 0 && p < n->op->noutputs; p++) rc = rt_emit_item(&n->inst, p, &b);
      } /* else: it was already past the position; this checkpoint will not complete */
    }
  }
  n->ck_prev = src + 1;
  return rc;
}

/* ---- the coordinator ---- */

static void publish(Ckpt *ck, uint64_t id, uint64_t pos) {
  atomic_store_explicit(&ck->req_pos[id % CK_SLOTS], pos, memory_order_relaxed);
  atomic_store_explicit(&ck->req, id, memory_order_release);
}

/* How far the furthest local source has got. */
static uint64_t furthest(Ckpt *ck) {
  uint64_t max = 0;
  for (int i = 0; i < ck->sources.n; i++) {
    Node *n = ck->sources.items[i];
    uint64_t p = atomic_load_explicit(&n->ck_pos, memory_order_relaxed);
    if (p > max) max = p;
  }
  return max;
}

/* Removes checkpoint id, saying why not when it holds what sf-exec did not write. */
static void remove_warn(Exec *x, uint64_t id) {
  char why[PATH_MAX + 200];
  if (ckptdir_remove(x->ck->dir, id, why, sizeof why) < 0)
    fprintf(x->log, "sf-exec: warning: checkpoint %" PRIu64 " not removed: %s\n", id, why);
}

void ckpt_tick(Exec *x) {
  Ckpt *ck = x->ck;
  if (!ck) return;
  double now = stats_seconds(x);
  char path[PATH_MAX];
  uint64_t max = furthest(ck);
  uint64_t step = max > ck->last_max ? max - ck->last_max : 0; /* tuples per tick (20 ms) */
  ck->last_max = max;
  if (ck->last_req > ck->complete && ck_path(path, sizeof path, ck, ck->last_req, "MANIFEST") == 0 && ckptdir_exists(path)) {
    if (ck->coordinator) { /* the two newest complete ones stay; older ones and unfinished ones go */
      int n;
      uint64_t *ids = ckptdir_list(ck->dir, &n);
      for (int i = 0; i < n; i++) {
        char p2[PATH_MAX];
        bool finished = ck_path(p2, sizeof p2, ck, ids[i], "MANIFEST") == 0 && ckptdir_exists(p2);
        if (ids[i] < ck->complete || (ids[i] < ck->last_req && !finished)) remove_warn(x, ids[i]);
      }
      free(ids);
    }
    ck->complete = ck->last_req;
    atomic_store(&ck->done, ck->complete);
  }
  if (!ck->coordinator) {
    /* another executor picks the positions: its latest request (for its sources, and to notice
     * completions for its sinks) */
    if (ck_path(path, sizeof path, ck, 0, "REQUEST") < 0) return;
    size_t len;
    char *text = (char *)ckptdir_read_all(path, &len);
    uint64_t id, pos;
    if (text && sscanf(text, "%" SCNu64 " %" SCNu64, &id, &pos) == 2 && id > ck->last_req) {
      if (ck->sources.n) publish(ck, id, pos);
      ck->last_req = id;
    }
    free(text);
    return;
  }
  if (atomic_load(&ck->source_ended) || now < ck->next_at) return;
  double timeout = ck->interval * 5 > 2 ? ck->interval * 5 : 2;
  if (ck->last_req > ck->complete) {
    if (now - ck->req_time < timeout) return; /* the last one is still on its way */
    if (ck->margin < (UINT64_C(1) << 40)) ck->margin *= 2; /* maybe a source was past it: further ahead */
  }
  uint64_t ahead = step * (ck->distributed ? 10 : 2) + ck->margin;
  uint64_t id = ck->last_req + 1, pos = max + ahead;
  if (ck->distributed) {
    char text[64];
    int len = snprintf(text, sizeof text, "%" PRIu64 " %" PRIu64 "\n", id, pos);
    if (ck_path(path, sizeof path, ck, 0, "REQUEST") < 0 || ckptdir_write_file(path, text, (size_t)len, true) < 0) {
      fprintf(x->log, "sf-exec: warning: cannot write '%s': %s\n", path, strerror(errno));
      ck->next_at = now + ck->interval;
      return;
    }
  }
  publish(ck, id, pos);
  ck->last_req = id;
  ck->req_time = now;
  ck->next_at = now + ck->interval;
}

uint64_t rt_checkpoint_complete(const OpInst *op) {
  const Ckpt *ck = op->exec->ck;
  return ck ? atomic_load_explicit(&ck->done, memory_order_acquire) : 0;
}

uint64_t rt_checkpoint_taking(const OpInst *op) {
  const Node *n = op->exec_data;
  return n ? n->ck_taking : 0;
}

/* ---- restoring ---- */

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
 * that owns each key: rt_owns_key). A Split or Merge that did not exist then starts afresh, as it
 * did at the start; any other operator without a snapshot means the graph changed. */
typedef struct NodeSnaps {
  CkptSnap *s;
  int n;
} NodeSnaps;

static bool load_node(const Ckpt *ck, uint64_t id, const Node *n, const char *manifest, char **names, NodeSnaps *ns,
                      char *why, size_t cap) {
  int count = 0;
  for (char **p = names; *p; p++) count++;
  ns->s = calloc((size_t)count + 1, sizeof *ns->s);
  /* a replica is an operator of a channel with an original (a channel's Split or Merge names the
   * region's first operator as its origin, but replicates nothing) */
  const Op *op = n->op;
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
  if (op->kind == KIND_SPLIT || op->kind == KIND_MERGE) return true; /* it did not exist: afresh */
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

/* Checks checkpoint id and, when every local operator's snapshots are sound, restores them all. 1
 * when restored, 0 when the checkpoint is damaged or incomplete (why says how), -1 when a restore
 * failed (the failure recorded). */
static int restore_from(Exec *x, uint64_t id, char *why, size_t cap) {
  Ckpt *ck = x->ck;
  char *manifest = ckptdir_read_manifest(ck->dir, id, why, cap);
  if (!manifest) return 0;
  int nnames;
  char **names = ckptdir_manifest_names(manifest, &nnames);
  NodeSnaps *snaps = calloc((size_t)x->nnodes + 1, sizeof *snaps);
  int rc = 1;
  for (int i = 0; i < x->nnodes && rc == 1; i++)
    if (x->nodes[i].local && !load_node(ck, id, &x->nodes[i], manifest, names, &snaps[i], why, cap)) rc = 0;
  for (int i = 0; i < x->nnodes && rc == 1; i++) {
    Node *n = &x->nodes[i];
    if (!n->local || snaps[i].n == 0) continue;
    CkptSnap *first = &snaps[i].s[0];
    Group *g = n->group;
    if (g && g->entry == n && g->driver != DRIVE_SINGLE) {
      g->next_seq = first->next_seq;
      g->taken = first->taken;
      g->rr_next = (int)(first->taken % (uint64_t)n->nslots);
    }
    if (n->nslots == 0) { /* a source: it is at the checkpoint's position */
      n->ck_seen = id;
      n->ck_prev = first->pos;
      atomic_store(&n->ck_pos, first->pos);
      ck->last_max = first->pos;
    }
    for (int k = 0; k < snaps[i].n && rc == 1; k++) {
      CkptSnap *s = &snaps[i].s[k];
      if (n->inst.impl->restore) {
        if (n->inst.impl->restore(&n->inst, &s->state) < 0) rc = -1;
        else if (!snap_done(&s->state))
          rc = -1, exec_fail(x, "operator '%s': its snapshot in checkpoint %" PRIu64 " does not fit this sf-exec "
                             "(%s)", n->op->name, id, s->state.bad ? "truncated" : "bytes left over");
      } else if (s->state.n > 0) {
        rc = -1, exec_fail(x, "operator '%s': its snapshot in checkpoint %" PRIu64 " has state this operator "
                           "kind cannot restore", n->op->name, id);
      }
    }
  }
  for (int i = 0; i < x->nnodes; i++) {
    for (int k = 0; k < snaps[i].n; k++) free(snaps[i].s[k].bytes);
    free(snaps[i].s);
  }
  free(snaps);
  ckptdir_names_free(names);
  free(manifest);
  return rc;
}

static int restore_latest(Exec *x) {
  Ckpt *ck = x->ck;
  int n;
  uint64_t *ids = ckptdir_list(ck->dir, &n);
  int rc = 0;
  for (int i = 0; i < n && rc == 0 && !exec_stopping(x); i++) {
    char why[PATH_MAX + 200] = "";
    rc = restore_from(x, ids[i], why, sizeof why);
    if (rc == 1) {
      fprintf(x->log, "sf-exec: restored checkpoint %" PRIu64 " from '%s'\n", ids[i], ck->dir);
      ck->restored = ck->complete = ck->last_req = ids[i];
      atomic_store(&ck->done, ids[i]);
      publish(ck, ids[i], 0);
    } else if (rc == 0) {
      fprintf(x->log, "sf-exec: warning: checkpoint %" PRIu64 " in '%s' cannot be used (%s); trying an older one\n",
              ids[i], ck->dir, why);
    }
  }
  if (rc == 0 && !exec_stopping(x))
    fprintf(x->log, "sf-exec: no complete checkpoint in '%s': starting from the beginning\n", ck->dir);
  free(ids);
  return rc < 0 ? -1 : 0;
}

/* ---- start and end ---- */

static const char *op_host(const Graph *g, const Op *op) {
  if (op->host) return op->host;
  return g->nhosts > 0 ? g->hosts[0]->name : "all";
}

int ckpt_start(Exec *x) {
  const ExecOptions *o = x->o;
  if (!o->checkpoint_dir) return 0;
  Ckpt *ck = arena_alloc(x->arena, sizeof *ck);
  memset(ck, 0, sizeof *ck);
  x->ck = ck;
  pthread_mutex_init(&ck->mu, NULL);
  snprintf(ck->dir, sizeof ck->dir, "%s", o->checkpoint_dir);
  ck->interval = o->checkpoint_interval > 0 ? o->checkpoint_interval : 1.0;
  ck->margin = 1;
  ck->next_at = ck->interval;
  if (mkdir(ck->dir, 0755) < 0 && errno != EEXIST) {
    exec_fail(x, "cannot make the checkpoint directory '%s': %s", ck->dir, strerror(errno));
    return -1;
  }
  Graph *g = x->g;
  ck->distributed = o->host != NULL;
  ck->host = o->host ? o->host : "all";
  ck->hosts = arena_alloc(x->arena, sizeof(char *) * (size_t)(g->nops + 1));
  const char *first_source_host = NULL;
  for (int i = 0; i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    const char *h = ck->distributed ? op_host(g, n->op) : "all";
    bool seen = false;
    for (int j = 0; j < ck->nhosts && !seen; j++) seen = !strcmp(ck->hosts[j], h);
    if (!seen) ck->hosts[ck->nhosts++] = h;
    if (n->op->ninputs == 0 && !first_source_host) first_source_host = h;
    if (!n->local) continue;
    ck->nlocal++;
    if (n->nslots == 0) ptrvec_push(x->arena, &ck->sources, n);
    if (n->inst.impl->checkpointable && n->inst.impl->checkpointable(&n->inst) < 0) return -1;
  }
  ck->coordinator = !ck->distributed || (first_source_host && !strcmp(first_source_host, ck->host));
  /* the numbers an earlier run used: new checkpoints take higher ones (another executor may still
   * read the last request of that run, and its directories may still hold that run's files) */
  /* a directory holding something else under sf's names is refused before anything is touched */
  char why[PATH_MAX + 200];
  if (ckptdir_check_all(ck->dir, why, sizeof why) < 0) {
    exec_fail(x, "the checkpoint directory '%s' is not only sf-exec's: %s; move it away or use another directory",
              ck->dir, why);
    return -1;
  }
  int n;
  uint64_t *ids = ckptdir_list(ck->dir, &n);
  uint64_t seen = n > 0 ? ids[0] : 0;
  char path[PATH_MAX];
  size_t len;
  char *text = ck_path(path, sizeof path, ck, 0, "REQUEST") == 0 ? (char *)ckptdir_read_all(path, &len) : NULL;
  uint64_t req;
  if (text && sscanf(text, "%" SCNu64, &req) == 1 && req > seen) seen = req;
  free(text);
  int rc = o->restore ? restore_latest(x) : 0;
  if (rc == 0 && ck->coordinator) {
    /* what is newer than the checkpoint restored (everything, on a fresh start) is not this run's */
    for (int i = 0; i < n; i++)
      if (ids[i] > ck->restored) remove_warn(x, ids[i]);
    if (seen > ck->last_req) ck->last_req = seen;
  }
  free(ids);
  return rc;
}

void ckpt_source_ended(Exec *x) {
  if (x->ck) atomic_store(&x->ck->source_ended, true);
}

void ckpt_finish(Exec *x, bool ok) {
  Ckpt *ck = x->ck;
  if (!ck) return;
  char why[PATH_MAX + 200];
  /* the job's output is committed: its checkpoints are obsolete */
  if (ok && !ck->distributed && ckptdir_remove_all(ck->dir, why, sizeof why) < 0)
    fprintf(x->log, "sf-exec: warning: checkpoints in '%s' not removed: %s\n", ck->dir, why);
  pthread_mutex_destroy(&ck->mu);
  x->ck = NULL;
}

int ckpt_remove_job(const Graph *g, const ExecOptions *o) {
  (void)g;
  char why[PATH_MAX + 200];
  FILE *log = o->log ? o->log : stderr;
  if (ckptdir_remove_all(o->checkpoint_dir, why, sizeof why) < 0) {
    fprintf(log, "sf-exec: error: the checkpoints in '%s' were not removed: %s\n", o->checkpoint_dir, why);
    return 1;
  }
  return 0;
}
