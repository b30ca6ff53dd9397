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
 * checkpoint never completes (the next one will). An input that has ended counts as aligned, and
 * the operators that finished write finished snapshots ("operators that finished", below).
 *
 * The coordinator picks P(K) a little ahead of the furthest source (the margin grows when a
 * checkpoint does not complete in time): in one process the executor itself; between hosts the
 * executor of the first host with a source, which sends the request (K, P) to the others over the
 * control streams (remote.h), hears from each that its part is done, writes the MANIFEST and tells
 * them K is complete (on_control and ctl_*, below). A control stream that breaks fails the job,
 * naming the peer. The snapshots are files all the same: DIR must be one directory for all
 * executors (a shared file system between machines).
 *
 * The files (their layout is ckptdir.c's): per operator a snapshot, per host a done file, and last
 * the MANIFEST. The two newest complete checkpoints are kept; older ones go. DIR is one job's:
 * ckpt_prepare locks DIR/LOCK before anything else (the executors of a distributed job share it,
 * by a hash of their job token) and refuses a DIR holding what sf did not write or another graph's
 * checkpoints; a restore refuses a checkpoint whose operators' fingerprints differ from the
 * graph's, all before any operator opens. A restore takes the newest complete checkpoint whose
 * files all match the manifest and their CRCs, saying so; a damaged one is skipped with a message,
 * never used, and so is one an operator refuses to restore from (it starts again from its open).
 *
 * The commit: once everything on an executor completed, its commit record (DIR/host-H.commit, what
 * each sink needs to finish its commit) is written durably before any sink renames a file, and a
 * completed job removes it after every checkpoint. A restore that finds it lets that executor's
 * sinks finish their commit (recommit) instead of restoring them; with every host's there, the job
 * is complete and nothing runs.
 *
 * The restore (choosing, checking and handing out a checkpoint's snapshots, and reading the commit
 * records) is ckpt_restore.c's; the struct both share is in ckpt_priv.h.
 *
 * Locks: ck->mu guards the per-checkpoint counts and the coordinator's record of the hosts done,
 * and is taken holding no other lock (from node_deliver, which holds none, and from the control
 * streams' threads); nothing is called while it is held. */
#include "ckpt_priv.h"
#include "remote.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- writing a checkpoint ---- */

static void ctl_part_done(Exec *x, uint64_t id);
static int publish_finished(Exec *x, uint64_t id, uint64_t pos);

/* Every part of checkpoint id is done: the manifest lists the snapshots, written last. */
static void try_manifest(Exec *x, uint64_t id, uint64_t pos) {
  Ckpt *ck = x->ck;
  char path[PATH_MAX];
  for (int i = 0; i < ck->nhosts; i++) {
    char name[300];
    snprintf(name, sizeof name, "host-%s.done", ck->hosts[i]);
    if (ck_path(path, sizeof path, ck, id, name) < 0 || !ckptdir_exists(path)) return;
  }
  if (ckptdir_write_manifest(ck->dir, id, pos, ck->graph, x->g->name) < 0) {
    ck_path(path, sizeof path, ck, id, "MANIFEST");
    fprintf(x->log, "sf-exec: warning: checkpoint %" PRIu64 ": cannot write '%s': %s\n", id, path, strerror(errno));
  }
}

/* The state of n's snapshot for checkpoint id: the ticks it has seen (clock.c) in front, then its
 * kind's; *clock_len says how many bytes are the ticks. 0, or -1 with the failure recorded. */
static int take_state(Node *n, uint64_t id, Buf *state, size_t *clock_len) {
  OpInst *op = &n->inst;
  n->ck_taking = id;
  if (clock_kept(n)) clock_snapshot(n, state); /* the ticks it has seen, in front (clock.c) */
  *clock_len = state->n;
  if (op->impl->snapshot && op->impl->snapshot(op, state) < 0) return -1;
  return 0;
}

/* Writes n's snapshot file for checkpoint id at position pos with the driver counters given (a
 * finished one when finished: state is then empty), and
 * when it was the executor's last one for id, the host's done file (and the manifest when every
 * host's is there). 0, or -1 with the failure recorded. */
static int write_snapshot(Node *n, uint64_t id, uint64_t pos, uint64_t next_seq, uint64_t taken, const Buf *state,
                          bool finished) {
  Exec *x = n->inst.exec;
  Ckpt *ck = x->ck;
  Buf b;
  buf_init(&b);
  CkptSnapHead head = { .id = id, .graph = ck->graph, .name = n->op->name, .fingerprint = ckptdir_op_fingerprint(n->op),
                        .finished = finished };
  ckptdir_snap_encode(&b, &head, next_seq, taken, pos, state->p, state->n);

  char path[PATH_MAX], file[300];
  int rc = 0;
  snprintf(file, sizeof file, "%s.snap", n->op->name);
  if (ck_path(path, sizeof path, ck, id, NULL) < 0 || (mkdir(path, 0755) < 0 && errno != EEXIST) ||
      ck_path(path, sizeof path, ck, id, file) < 0 || ckptdir_write_file(path, b.p, b.n, false) < 0) {
    exec_fail(x, "checkpoint %" PRIu64 ": cannot write '%s': %s", id, path, strerror(errno));
    rc = -1;
  }
  size_t bytes = b.n;
  if (rc == 0) atomic_fetch_add_explicit(&x->ck_metrics.bytes_total, bytes, memory_order_relaxed);
  buf_release(&b);
  if (rc < 0) return -1;

  pthread_mutex_lock(&ck->mu);
  int slot = (int)(id % CK_SLOTS);
  if (ck->counts[slot].id != id) ck->counts[slot].id = id, ck->counts[slot].done = 0, ck->counts[slot].bytes = 0;
  bool all = ++ck->counts[slot].done == ck->nlocal;
  ck->counts[slot].bytes += bytes;
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
  if (ck->ctl)
    ctl_part_done(x, id);
  else
    try_manifest(x, id, pos);
  return 0;
}

/* ---- the control streams (between hosts: remote.h) ---- */

/* How many 20 ms ticks' worth of the coordinator's furthest source a position is put ahead between
 * hosts. A request reaches the other executors in well under a tick, but their sources may be ahead
 * of the coordinator's (they started earlier, or run apart from its own), and one already past the
 * position voids the checkpoint until the timeout: 3 ticks made that common for pipelines started
 * on several hosts at once (tests/faults.sh k1), so the lead stays what it was with DIR/REQUEST. */
enum { CTL_LEAD = 10 };

/* *a = max(*a, v). */
static void store_max(atomic_ullong *a, uint64_t v) {
  unsigned long long cur = atomic_load(a);
  while (cur < v && !atomic_compare_exchange_weak(a, &cur, v)) {
  }
}

/* The durations' buckets: from 5 ms (a checkpoint of a small state on one host) to a minute. */
const double ck_duration_le[CK_DURATION_BUCKETS] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60 };

/* Checkpoint id completed, seconds after its request (< 0: not known here): --metrics's figures.
 * Its size here is what this executor's snapshots of it held (counts, while the slot is id's: it
 * is until CK_SLOTS newer checkpoints began). Takes ck->mu: called holding no lock. */
static void metrics_complete(Exec *x, uint64_t id, double seconds) {
  ExecCkptMetrics *m = &x->ck_metrics;
  Ckpt *ck = x->ck;
  atomic_fetch_add(&m->completed, 1);
  store_max(&m->last_id, id);
  pthread_mutex_lock(&ck->mu);
  int slot = (int)(id % CK_SLOTS);
  uint64_t bytes = ck->counts[slot].id == id ? ck->counts[slot].bytes : 0; /* (0: no snapshot here) */
  pthread_mutex_unlock(&ck->mu);
  if (atomic_load(&m->last_id) == id) atomic_store(&m->last_bytes, bytes);
  if (seconds < 0) return;
  uint64_t ns = (uint64_t)(seconds * 1e9);
  int b = 0;
  while (b < CK_DURATION_BUCKETS && seconds > ck_duration_le[b]) b++;
  atomic_fetch_add(&m->by_le[b], 1);
  atomic_store(&m->last_ns, ns);
  atomic_fetch_add(&m->ns_total, ns);
}

/* The coordinator: every host's part of checkpoint id is done (seen by whichever thread heard the
 * last): the MANIFEST, then the completion, here (for the sinks and ckpt_tick) and to the others. */
static void ctl_complete(Exec *x, uint64_t id, uint64_t pos, double asked) {
  Ckpt *ck = x->ck;
  if (ckptdir_write_manifest(ck->dir, id, pos, ck->graph, x->g->name) < 0) {
    char path[PATH_MAX];
    ck_path(path, sizeof path, ck, id, "MANIFEST");
    fprintf(x->log, "sf-exec: warning: checkpoint %" PRIu64 ": cannot write '%s': %s\n", id, path, strerror(errno));
    return;
  }
  store_max(&ck->ctl_complete, id);
  store_max(&ck->done, id);
  metrics_complete(x, id, stats_seconds(x) - asked);
  if (x->o->stats) /* the coordination's cost, for --stats */
    fprintf(x->log, "sf-exec: checkpoint %" PRIu64 " complete %.1f ms after its request\n", id,
            (stats_seconds(x) - asked) * 1e3);
  remote_ctl_send(x->remote, NULL, &(WireCtl){ .kind = WIRE_CKPT_COMPLETE, .ckpt = id });
}

/* The coordinator: host h's part of checkpoint id is done. 0, or -1 with why (a report of a
 * checkpoint never requested). A report of an older one, given up, is no longer counted. */
static int ctl_host_done(Exec *x, int h, uint64_t id, char *why, size_t cap) {
  Ckpt *ck = x->ck;
  pthread_mutex_lock(&ck->mu);
  uint64_t req = ck->ctl_req, pos = ck->ctl_req_pos;
  double asked = ck->ctl_req_at;
  bool all = false;
  if (id == req && !ck->ctl_seen[h]) {
    ck->ctl_seen[h] = true;
    all = ++ck->ctl_ndone == ck->nhosts;
  }
  pthread_mutex_unlock(&ck->mu);
  if (id > req) {
    snprintf(why, cap, "done with checkpoint %" PRIu64 ", which was not requested (the latest request is %" PRIu64 ")",
             id, req);
    return -1;
  }
  if (all) ctl_complete(x, id, pos, asked);
  return 0;
}

/* Every snapshot of this executor for checkpoint id is durable, and its done file written. */
static void ctl_part_done(Exec *x, uint64_t id) {
  Ckpt *ck = x->ck;
  char why[200];
  if (ck->coordinator)
    ctl_host_done(x, ck->self, id, why, sizeof why); /* (never one not requested: its own sources') */
  else
    remote_ctl_send(x->remote, NULL, &(WireCtl){ .kind = WIRE_CKPT_DONE, .ckpt = id });
}

/* RemoteCtlFn: a message from another host (remote.c checked that it may come here). */
static int on_control(void *ctx, const char *from, const WireCtl *m, char *why, size_t cap) {
  Exec *x = ctx;
  Ckpt *ck = x->ck;
  switch (m->kind) {
  case WIRE_CKPT_DONE:
    for (int h = 0; h < ck->nhosts; h++)
      if (!strcmp(ck->hosts[h], from)) return ctl_host_done(x, h, m->ckpt, why, cap);
    snprintf(why, cap, "a done report from a host without a part in the checkpoints");
    return -1;
  case WIRE_CKPT_REQUEST: /* only this thread writes ctl_heard: there is one coordinator */
    if (m->ckpt <= ck->ctl_heard) {
      snprintf(why, cap, "a request of checkpoint %" PRIu64 " after one of checkpoint %" PRIu64, m->ckpt,
               ck->ctl_heard);
      return -1;
    }
    ck->ctl_heard = m->ckpt;
    ckpt_publish(ck, m->ckpt, m->pos);
    publish_finished(x, m->ckpt, m->pos); /* (a failure is the job's: exec_fail) */
    return 0;
  case WIRE_CKPT_SOURCES:
    for (int h = 0; h < ck->nhosts; h++) {
      if (strcmp(ck->hosts[h], from) != 0) continue;
      if (m->running > (uint32_t)ck->host_sources[h]) {
        snprintf(why, cap, "a report of %u sources running, and it has %d", m->running, ck->host_sources[h]);
        return -1;
      }
      pthread_mutex_lock(&ck->mu);
      ck->host_running[h] = (int)m->running;
      ck->host_pos[h] = m->pos;
      pthread_mutex_unlock(&ck->mu);
      return 0;
    }
    snprintf(why, cap, "a report of sources from a host without a part in the checkpoints");
    return -1;
  case WIRE_CKPT_COMPLETE:
    if (m->ckpt > ck->ctl_heard) {
      snprintf(why, cap, "the completion of checkpoint %" PRIu64 ", which was not requested", m->ckpt);
      return -1;
    }
    store_max(&ck->done, m->ckpt);
    metrics_complete(x, m->ckpt, -1);
    return 0;
  }
  snprintf(why, cap, "an unknown kind %d", (int)m->kind);
  return -1;
}

/* ---- operators that finished ----
 * An operator whose input ended before a checkpoint's position has nothing of it left to take in:
 * its part of the checkpoint is that it finished. Once it has, it writes a finished snapshot
 * (CkptSnapHead.finished, with an empty state) of the checkpoint pending then, unless it took that
 * one's barrier, and of every one requested later; a restore brings it back finished: it does not
 * run, and emits nothing but its end (restore_node in ckpt_restore.c, flow.c). Downstream, a fan-in
 * counts an input at its end as aligned (order.c). So a job that merges a short input with a long
 * one goes on taking checkpoints after the short one ended. A sink is the exception: what it does
 * at its end (a FileSink's file, renamed at the job's commit; a KafkaSink's last transaction) is
 * not an empty state, so once a sink has finished while local sources still run no checkpoint is
 * requested any more, which sf-exec says; what it wrote is committed at the end of the job.
 *
 * Which writes n's part of a checkpoint is decided under ck->mu (claim): the barrier's snapshot on
 * n's thread, or the finished one on n's thread when it finishes or on the thread that publishes a
 * request (publish_finished) after it has. */

/* Whether n's part of checkpoint id is still to be written (and n has finished, if_finished); when
 * so it is claimed. Takes ck->mu. */
static bool claim(Ckpt *ck, Node *n, uint64_t id, bool if_finished) {
  pthread_mutex_lock(&ck->mu);
  bool mine = id > n->ck_written && (!if_finished || n->ck_finished);
  if (mine) n->ck_written = id;
  pthread_mutex_unlock(&ck->mu);
  return mine;
}

static int write_finished(Node *n, uint64_t id, uint64_t pos) {
  Buf none;
  buf_init(&none);
  return write_snapshot(n, id, pos, 0, 0, &none, true);
}

/* Request id (at pos) was published here: every local operator that has finished writes its part.
 * 0, or -1 with the failure recorded. */
static int publish_finished(Exec *x, uint64_t id, uint64_t pos) {
  Ckpt *ck = x->ck;
  for (int i = 0; i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (n->local && claim(ck, n, id, true) && write_finished(n, id, pos) < 0) return -1;
  }
  return 0;
}

int ckpt_finished(Node *n) {
  Exec *x = n->inst.exec;
  Ckpt *ck = x->ck;
  if (!ck) return 0;
  if (n->op->noutputs == 0) { /* a sink */
    if (!atomic_exchange(&ck->sink_ended, true) && atomic_load(&ck->sources_live) > 0) /* (said once) */
      rt_note(&n->inst, "the sink finished while other sources still run: no checkpoint is taken from now on "
              "(what it wrote is committed at the end of the job)");
    return 0;
  }
  pthread_mutex_lock(&ck->mu);
  n->ck_finished = true;
  pthread_mutex_unlock(&ck->mu);
  /* the request pending now (publish_finished sees ck_finished for any later one) */
  uint64_t id = atomic_load_explicit(&ck->req, memory_order_acquire);
  if (id <= ck->restored || !claim(ck, n, id, false)) return 0; /* (the restored one: every operator has its part) */
  return write_finished(n, id, atomic_load_explicit(&ck->req_pos[id % CK_SLOTS], memory_order_relaxed));
}

void ckpt_missed(Node *n, uint64_t id) {
  Ckpt *ck = n->inst.exec->ck;
  if (ck) claim(ck, n, id, false); /* (its part "written": none will be) */
}

int ckpt_snapshot(Node *n, Item barrier) {
  Exec *x = n->inst.exec;
  if (!x->ck) return 0;
  Group *g = n->group;
  if (g && g->entry == n && g->driver == DRIVE_TIME) return 0; /* its driver took it (ckpt_time_cut) */
  if (!claim(x->ck, n, barrier.ckpt, false)) return 0; /* (cannot be: it has not finished) */
  Buf state;
  buf_init(&state);
  size_t clock_len;
  int rc = take_state(n, barrier.ckpt, &state, &clock_len);
  bool driver = g && g->entry == n && g->driver != DRIVE_SINGLE;
  if (rc == 0)
    rc = write_snapshot(n, barrier.ckpt, barrier.ckpt_pos, driver ? g->next_seq : 0, driver ? g->taken : 0, &state,
                        false);
  buf_release(&state);
  return rc;
}

int ckpt_time_cut(Node *n, Item barrier) {
  Group *g = n->group;
  buf_reset(&g->tck_state);
  return take_state(n, barrier.ckpt, &g->tck_state, &g->tck_clock_len);
}

int ckpt_time_write(Node *n, const Buf *log) {
  Group *g = n->group;
  Buf state;
  buf_init(&state);
  /* the ticks, the recorded inputs (a byte string: order_time_restore reads it), the kind's state */
  buf_append(&state, g->tck_state.p, g->tck_clock_len);
  snap_bytes(&state, log->p, log->n);
  buf_append(&state, g->tck_state.p + g->tck_clock_len, g->tck_state.n - g->tck_clock_len);
  int rc = claim(n->inst.exec->ck, n, g->tck_barrier.ckpt, false)
             ? write_snapshot(n, g->tck_barrier.ckpt, g->tck_barrier.ckpt_pos, g->tck_pos, g->taken, &state, false)
             : 0;
  buf_release(&state);
  return rc;
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
        Item b = { .kind = ITEM_BARRIER, .seq = pos, .src = pos, .ckpt = id, .ckpt_pos = pos };
        rc = ckpt_snapshot(n, b);
        for (int p = 0; rc == 0 && p < n->op->noutputs; p++) rc = rt_emit_item(&n->inst, p, &b);
      } /* else: it was already past the position; this checkpoint will not complete */
    }
  }
  n->ck_prev = src + 1;
  return rc;
}

/* ---- the coordinator ---- */

void ckpt_publish(Ckpt *ck, uint64_t id, uint64_t pos) {
  atomic_store_explicit(&ck->req_pos[id % CK_SLOTS], pos, memory_order_relaxed);
  atomic_store_explicit(&ck->req, id, memory_order_release);
}

/* How far the furthest local source still running has got. */
static uint64_t furthest(Ckpt *ck) {
  uint64_t max = 0;
  for (int i = 0; i < ck->sources.n; i++) {
    Node *n = ck->sources.items[i];
    if (atomic_load_explicit(&n->ck_ended, memory_order_relaxed)) continue; /* it places no barrier */
    uint64_t p = atomic_load_explicit(&n->ck_pos, memory_order_relaxed);
    if (p > max) max = p;
  }
  return max;
}

/* The coordinator between hosts: how many of the other hosts' sources still run, and in *max how
 * far the furthest of them has got (their reports). Takes ck->mu. */
static int others_running(Ckpt *ck, uint64_t *max) {
  int n = 0;
  *max = 0;
  pthread_mutex_lock(&ck->mu);
  for (int h = 0; ck->ctl && h < ck->nhosts; h++) {
    if (h == ck->self || ck->host_running[h] == 0) continue;
    n += ck->host_running[h];
    if (ck->host_pos[h] > *max) *max = ck->host_pos[h];
  }
  pthread_mutex_unlock(&ck->mu);
  return n;
}

/* An executor other than the coordinator, between hosts: tells it how many of its sources still
 * run and how far the furthest has got, on every tick (20 ms) when either changed: once its own
 * sources have ended, the coordinator places positions ahead of these, by as much as they moved
 * in a tick (a few dozen bytes a tick). Main thread. */
static void report_sources(Exec *x) {
  Ckpt *ck = x->ck;
  int running = atomic_load(&ck->sources_live);
  uint64_t pos = furthest(ck);
  if (running == ck->sent_running && pos == ck->sent_pos) return;
  remote_ctl_send(x->remote, NULL, &(WireCtl){ .kind = WIRE_CKPT_SOURCES, .pos = pos, .running = (uint32_t)running });
  ck->sent_running = running;
  ck->sent_pos = pos;
}

/* Removes checkpoint id, saying why not when it holds what sf-exec did not write. */
static void remove_warn(Exec *x, uint64_t id) {
  char why[PATH_MAX + 200];
  if (ckptdir_remove(x->ck->dir, id, why, sizeof why) < 0)
    fprintf(x->log, "sf-exec: warning: checkpoint %" PRIu64 " not removed: %s\n", id, why);
}

uint64_t ckpt_pace(CkptPace *p, bool own, uint64_t max, bool *settling) {
  /* the most max moved at one of the last 4 ticks: the others' reports come at their own ticks,
   * so one of ours may see none and the next two. On the tick the coordinator's own sources
   * ended, max changes from theirs to the others': that difference is no step (a far lead, or
   * none behind a lagging report), and no position is placed until 3 ticks have a true one. The
   * first tick, whose max is all the sources read since the start, is such a change too. */
  if (own != p->own) p->ticks = 0, memset(p->steps, 0, sizeof p->steps);
  else p->steps[p->ticks++ % 4] = max > p->last ? max - p->last : 0;
  uint64_t step = 0;
  for (int i = 0; i < 4; i++)
    if (p->steps[i] > step) step = p->steps[i];
  *settling = p->ticks < 3;
  p->last = max;
  p->own = own;
  return step;
}

void ckpt_tick(Exec *x) {
  Ckpt *ck = x->ck;
  if (ck && ck->ctl && !ck->coordinator && ck->sources.n) report_sources(x);
  if (!ck || !ck->coordinator) return; /* (between hosts the others hear of it: on_control) */
  double now = stats_seconds(x);
  char path[PATH_MAX];
  uint64_t others;
  int others_live = others_running(ck, &others);
  bool own_live = atomic_load(&ck->sources_live) > 0;
  /* ahead of its own sources while one runs (the others' reports lag), else of the others' */
  uint64_t max = own_live ? furthest(ck) : others;
  bool settling;
  uint64_t step = ckpt_pace(&ck->pace, own_live, max, &settling); /* tuples per tick (20 ms) */
  bool last_done = ck->last_req > ck->complete &&
                   (ck->ctl ? atomic_load(&ck->ctl_complete) >= ck->last_req
                            : ck_path(path, sizeof path, ck, ck->last_req, "MANIFEST") == 0 && ckptdir_exists(path));
  if (last_done) { /* the two newest complete ones stay; older ones and unfinished ones go */
    int n;
    uint64_t *ids = ckptdir_list(ck->dir, &n);
    for (int i = 0; i < n; i++) {
      char p2[PATH_MAX];
      bool finished = ck_path(p2, sizeof p2, ck, ids[i], "MANIFEST") == 0 && ckptdir_exists(p2);
      if (ids[i] < ck->complete || (ids[i] < ck->last_req && !finished)) remove_warn(x, ids[i]);
    }
    free(ids);
    ck->complete = ck->last_req;
    store_max(&ck->done, ck->complete);
    if (!ck->ctl) metrics_complete(x, ck->complete, now - ck->req_time); /* (ctl: ctl_complete counted it) */
  }
  if ((!own_live && others_live == 0) || atomic_load(&ck->sink_ended) || now < ck->next_at || settling) return;
  double timeout = ck->interval * 5 > 2 ? ck->interval * 5 : 2;
  if (ck->last_req > ck->complete) {
    if (now - ck->req_time < timeout) return; /* the last one is still on its way */
    if (ck->margin < (UINT64_C(1) << 40)) ck->margin *= 2; /* maybe a source was past it: further ahead */
  }
  uint64_t ahead = step * (ck->ctl ? CTL_LEAD : 2) + ck->margin;
  uint64_t id = ck->last_req + 1, pos = max + ahead;
  if (ck->ctl) { /* the hosts' reports count for this one from now on (ctl_host_done) */
    pthread_mutex_lock(&ck->mu);
    ck->ctl_req = id;
    ck->ctl_req_pos = pos;
    ck->ctl_req_at = now;
    ck->ctl_ndone = 0;
    for (int h = 0; h < ck->nhosts; h++) ck->ctl_seen[h] = false;
    pthread_mutex_unlock(&ck->mu);
  }
  ckpt_publish(ck, id, pos);
  if (ck->ctl) remote_ctl_send(x->remote, NULL, &(WireCtl){ .kind = WIRE_CKPT_REQUEST, .ckpt = id, .pos = pos });
  publish_finished(x, id, pos); /* (a failure is the job's: exec_fail) */
  ck->last_req = id;
  ck->req_time = now;
  ck->next_at = now + ck->interval;
}

uint64_t rt_checkpoint_complete(const OpInst *op) {
  const Ckpt *ck = op->exec->ck;
  return ck ? atomic_load_explicit(&ck->done, memory_order_acquire) : 0;
}

bool rt_restore_committed(const OpInst *op) {
  const Ckpt *ck = op->exec->ck;
  return ck && ck->committed;
}

uint64_t rt_checkpoint_taking(const OpInst *op) {
  const Node *n = op->exec_data;
  return n ? n->ck_taking : 0;
}

/* ---- start and end ---- */

/* The job DIR/LOCK is held for: the executors of one distributed job share their job token (a
 * hash of it is written, never the token), a job in one process is its own (a random id). */
static void job_id(const ExecOptions *o, char *buf, size_t cap) {
  if (o->host) {
    char *text;
    if (asprintf(&text, "sf-job\n%s", o->token ? o->token : "") < 0) abort();
    snprintf(buf, cap, "token-%016" PRIx64, ckptdir_hash(text));
    free(text);
    return;
  }
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, 0) != sizeof r) r = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
  snprintf(buf, cap, "run-%016" PRIx64, r);
}

/* Who holds the lock, for another job's message: "host 'H', pid P on 'MACHINE'". */
static void holder_text(const char *host, char *buf, size_t cap) {
  char machine[256] = "";
  if (gethostname(machine, sizeof machine - 1) < 0) snprintf(machine, sizeof machine, "?");
  snprintf(buf, cap, "%s%s%spid %ld on '%s'", host ? "host '" : "", host ? host : "", host ? "', " : "", (long)getpid(),
           machine);
}

/* A checkpoint in dir of a graph other than the one whose identity is graph: why names it, 1;
 * else 0. */
static int other_graph(const char *dir, uint64_t graph, char *why, size_t cap) {
  int n;
  uint64_t *ids = ckptdir_list(dir, &n);
  int found = 0;
  for (int i = 0; i < n && !found; i++) {
    uint64_t of;
    char name[256];
    if (ckptdir_graph_of(dir, ids[i], &of, name, sizeof name) && of != graph) {
      snprintf(why, cap, "it holds checkpoint %" PRIu64 " of another graph%s%s%s", ids[i], name[0] ? " ('" : "", name,
               name[0] ? "')" : "");
      found = 1;
    }
  }
  free(ids);
  return found;
}

static const char *op_host(const Graph *g, const Op *op) {
  if (op->host) return op->host;
  return g->nhosts > 0 ? g->hosts[0]->name : "all";
}

int ckpt_commit(Exec *x) {
  Ckpt *ck = x->ck;
  if (!ck || ck->committed) return 0; /* an earlier run's record stands (its sinks' parts) */
  Buf body;
  buf_init(&body);
  uint64_t count = 0;
  for (int i = 0; i < x->nnodes; i++) count += x->nodes[i].local && x->nodes[i].inst.impl->commit_record;
  snap_u64(&body, count);
  int rc = 0;
  for (int i = 0; i < x->nnodes && rc == 0; i++) {
    Node *n = &x->nodes[i];
    if (!n->local || !n->inst.impl->commit_record) continue;
    Buf rec;
    buf_init(&rec);
    rc = n->inst.impl->commit_record(&n->inst, &rec);
    snap_bytes(&body, n->op->name, strlen(n->op->name));
    snap_bytes(&body, rec.p, rec.n);
    buf_release(&rec);
  }
  if (rc == 0 && ckptdir_write_commit(ck->dir, ck->host, ck->graph, body.p, body.n) < 0) {
    exec_fail(x, "cannot write the commit record 'host-%s.commit' in '%s': %s", ck->host, ck->dir, strerror(errno));
    rc = -1;
  }
  buf_release(&body);
  if (rc == 0) ck->committed = true;
  return rc;
}

bool ckpt_job_done(const Exec *x) { return x->ck && x->ck->job_done; }

int ckpt_prepare(Exec *x) {
  const ExecOptions *o = x->o;
  if (!o->checkpoint_dir) return 0;
  Ckpt *ck = arena_alloc(x->arena, sizeof *ck);
  memset(ck, 0, sizeof *ck);
  ck->lock_fd = -1;
  ck->chosen = -1;
  x->ck = ck;
  pthread_mutex_init(&ck->mu, NULL);
  snprintf(ck->dir, sizeof ck->dir, "%s", o->checkpoint_dir);
  ck->interval = o->checkpoint_interval > 0 ? o->checkpoint_interval : 1.0;
  ck->margin = 1;
  ck->next_at = ck->interval;
  Graph *g = x->g;
  ck->graph = ckptdir_graph_identity(g);
  ck->distributed = o->host != NULL;
  ck->host = o->host ? o->host : "all";
  ck->hosts = arena_alloc(x->arena, sizeof(char *) * (size_t)(g->nops + 1));
  ck->host_sinks = arena_alloc(x->arena, sizeof(bool) * (size_t)(g->nops + 1));
  const char *first_source_host = NULL;
  for (int i = 0; i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    const char *h = ck->distributed ? op_host(g, n->op) : "all";
    int j = 0;
    while (j < ck->nhosts && strcmp(ck->hosts[j], h) != 0) j++;
    if (j == ck->nhosts) ck->hosts[ck->nhosts++] = h;
    if (n->inst.impl->commit_record) ck->host_sinks[j] = true;
    if (n->op->ninputs == 0 && !first_source_host) first_source_host = h;
    if (!n->local) continue;
    ck->nlocal++;
    if (n->nslots == 0) ptrvec_push(x->arena, &ck->sources, n);
  }
  atomic_store(&ck->sources_live, ck->sources.n);
  ck->pace.own = ck->sources.n == 0; /* the first tick starts the steps afresh (ckpt_pace) */
  ck->coordinator = !ck->distributed || (first_source_host && !strcmp(first_source_host, ck->host));
  atomic_store(&x->ck_metrics.coordinator, ck->coordinator);
  ck->self = -1;
  for (int j = 0; j < ck->nhosts; j++)
    if (!strcmp(ck->hosts[j], ck->host)) ck->self = j;
  /* between hosts, the control streams to the coordinator (or from it to every other host) */
  ck->ctl = ck->distributed && ck->nhosts > 1 && first_source_host && ck->self >= 0;
  if (ck->ctl) {
    char err[600];
    ck->ctl_seen = arena_alloc(x->arena, sizeof(bool) * (size_t)ck->nhosts);
    ck->host_sources = arena_alloc(x->arena, sizeof(int) * (size_t)ck->nhosts);
    ck->host_running = arena_alloc(x->arena, sizeof(int) * (size_t)ck->nhosts);
    ck->host_pos = arena_alloc(x->arena, sizeof(uint64_t) * (size_t)ck->nhosts);
    for (int i = 0; i < x->nnodes; i++) {
      if (x->nodes[i].op->ninputs != 0) continue;
      for (int h = 0; h < ck->nhosts; h++)
        if (!strcmp(ck->hosts[h], op_host(g, x->nodes[i].op))) ck->host_sources[h]++, ck->host_running[h]++;
    }
    ck->sent_running = ck->sources.n; /* what the coordinator counts on before any report */
    if (!x->remote) {
      exec_fail(x, "internal error: no transport for the checkpoints' control streams");
      return -1;
    }
    if (remote_control(x->remote, first_source_host, (const char *const *)ck->hosts, ck->nhosts, on_control, x, err,
                       sizeof err) < 0) {
      exec_fail(x, "host '%s': %s", ck->host, err);
      return -1;
    }
  }
  if (mkdir(ck->dir, 0755) == 0) {
    ck->made_dir = true;
  } else if (errno != EEXIST) {
    exec_fail(x, "cannot make the checkpoint directory '%s': %s", ck->dir, strerror(errno));
    return -1;
  }
  /* one job at a time: another one's lock refuses the directory before anything is read */
  char why[PATH_MAX + 800], job[64], holder[600];
  job_id(o, job, sizeof job);
  holder_text(o->host, holder, sizeof holder);
  if (ckptdir_lock(ck->dir, job, holder, ck->distributed, &ck->lock_fd, why, sizeof why) < 0) {
    exec_fail(x, "cannot use the checkpoint directory '%s': %s", ck->dir, why);
    return -1;
  }
  /* a directory holding something else under sf's names is refused before anything is touched */
  if (ckptdir_check_all(ck->dir, why, sizeof why) < 0) {
    exec_fail(x, "the checkpoint directory '%s' is not only sf-exec's: %s; move it away or use another directory",
              ck->dir, why);
    return -1;
  }
  /* another graph's checkpoints are not this job's to use or remove */
  if (other_graph(ck->dir, ck->graph, why, sizeof why)) {
    exec_fail(x, "cannot use the checkpoint directory '%s': %s (nothing restored or removed)", ck->dir, why);
    return -1;
  }
  if (ckptdir_commit_other_graph(ck->dir, ck->graph, why, sizeof why)) {
    exec_fail(x, "cannot use the checkpoint directory '%s': %s (nothing restored or removed)", ck->dir, why);
    return -1;
  }
  ck->ids = ckptdir_list(ck->dir, &ck->nids);
  if (o->restore && ckpt_read_commits(x) < 0) return -1;
  if (ck->job_done) {
    fprintf(x->log, "sf-exec: the job in '%s' had completed (every sink committed its output): nothing to restore\n",
            ck->dir);
    return 0;
  }
  /* the checkpoint to restore, checked before any operator opens (a refused one changes nothing) */
  if (o->restore && (ck->chosen = ckpt_choose(x, ck->ids, ck->nids, 0, &ck->loaded)) == -2) return -1;
  return 0;
}

int ckpt_start(Exec *x) {
  Ckpt *ck = x->ck;
  if (!ck) return 0;
  if (ck->job_done) return ckpt_recommit_all(x); /* nothing runs: the sinks finish their commit */
  for (int i = 0; i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (n->local && n->inst.impl->checkpointable && n->inst.impl->checkpointable(&n->inst) < 0) return -1;
  }
  /* the numbers an earlier run used: new checkpoints take higher ones (its directories may still
   * hold that run's files; DIR/REQUEST is an earlier version's last request) */
  uint64_t seen = ck->nids > 0 ? ck->ids[0] : 0;
  char path[PATH_MAX];
  size_t len;
  char *text = ck_path(path, sizeof path, ck, 0, "REQUEST") == 0 ? (char *)ckptdir_read_all(path, &len) : NULL;
  uint64_t req;
  if (text && sscanf(text, "%" SCNu64, &req) == 1 && req > seen) seen = req;
  free(text);
  int rc = ckpt_restore_chosen(x);
  if (rc == 0 && ck->committed) rc = ckpt_recommit_all(x);
  /* a fresh start: an earlier run's commit record is not this one's */
  if (rc == 0 && !x->o->restore && ckptdir_remove_commit(ck->dir, ck->host) < 0) {
    exec_fail(x, "cannot remove the commit record 'host-%s.commit' in '%s': %s", ck->host, ck->dir, strerror(errno));
    rc = -1;
  }
  if (rc == 0 && ck->coordinator) {
    /* what is newer than the checkpoint restored (everything, on a fresh start) is not this run's */
    for (int i = 0; i < ck->nids; i++)
      if (ck->ids[i] > ck->restored) remove_warn(x, ck->ids[i]);
    if (seen > ck->last_req) ck->last_req = seen;
  }
  return rc;
}

void ckpt_source_ended(Node *n) {
  Ckpt *ck = n->inst.exec->ck;
  if (!ck) return;
  atomic_store(&n->ck_ended, true);
  atomic_fetch_sub(&ck->sources_live, 1);
}

void ckpt_finish(Exec *x, bool ok) {
  Ckpt *ck = x->ck;
  if (!ck) return;
  char why[PATH_MAX + 200];
  /* the job's output is committed: its checkpoints are obsolete, and the lock with them */
  bool removed = false;
  if (ok && !ck->distributed && ck->lock_fd >= 0) {
    removed = ckptdir_remove_all(ck->dir, why, sizeof why) == 0;
    if (!removed) fprintf(x->log, "sf-exec: warning: checkpoints in '%s' not removed: %s\n", ck->dir, why);
  }
  ckpt_loaded_free(x, &ck->loaded);
  free(ck->ids);
  free(ck->commit_bytes);
  /* a job that failed in a directory it made and left nothing in (refused before its first
   * checkpoint) leaves no directory either */
  int n = 0;
  uint64_t *ids = !ok && ck->made_dir ? ckptdir_list(ck->dir, &n) : NULL;
  char request[PATH_MAX];
  bool empty = ids && n == 0 && ck_path(request, sizeof request, ck, 0, "REQUEST") == 0 && !ckptdir_exists(request) &&
               !ckptdir_has_commit(ck->dir);
  free(ids);
  ckptdir_unlock(ck->dir, ck->lock_fd, removed || empty);
  if (empty && rmdir(ck->dir) < 0 && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST)
    fprintf(x->log, "sf-exec: warning: cannot remove '%s': %s\n", ck->dir, strerror(errno));
  pthread_mutex_destroy(&ck->mu);
  x->ck = NULL;
}

int ckpt_remove_job(const Graph *g, const ExecOptions *o) {
  char why[PATH_MAX + 800], job[64], holder[600];
  FILE *log = o->log ? o->log : stderr;
  const char *dir = o->checkpoint_dir;
  ExecOptions alone = *o;
  alone.host = NULL; /* a job of its own: it never shares the lock */
  job_id(&alone, job, sizeof job);
  holder_text(NULL, holder, sizeof holder);
  int fd = -1;
  struct stat st;
  if (stat(dir, &st) < 0 && errno == ENOENT) return 0; /* nothing there */
  int rc = ckptdir_lock(dir, job, holder, false, &fd, why, sizeof why) < 0 ? -1 : 0;
  if (rc == 0 && other_graph(dir, ckptdir_graph_identity(g), why, sizeof why)) rc = -1;
  if (rc == 0) rc = ckptdir_remove_all(dir, why, sizeof why);
  ckptdir_unlock(dir, fd, rc == 0);
  if (rc < 0) fprintf(log, "sf-exec: error: the checkpoints in '%s' were not removed: %s\n", dir, why);
  return rc < 0 ? 1 : 0;
}
