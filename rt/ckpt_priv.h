/* ckpt_priv.h: what the checkpoint coordinator (ckpt.c) and the restore (ckpt_restore.c) share:
 * the checkpoint state of one executor, and the restore's entry points. Nothing else includes it. */
#ifndef SF_CKPT_PRIV_H
#define SF_CKPT_PRIV_H

#include "ckptdir.h"
#include "exec_priv.h"

enum { CK_SLOTS = 16 };

/* The snapshots one local operator restores from (ckpt_restore.c's load_node). */
typedef struct NodeSnaps {
  CkptSnap *s;
  int n;
  bool inputs_only; /* a time-ordered fan-in's Split while the other Splits and Merges start afresh
                     * (load_generated): its ticks, what it recorded of its inputs and its position,
                     * not its kind's counters */
} NodeSnaps;
/* The snapshots of one checkpoint loaded for every local operator (check_ckpt), to restore from. */
typedef struct Loaded {
  uint64_t id;
  NodeSnaps *snaps; /* per node (x->nnodes; NULL: none loaded) */
  const char **gen; /* per operator: the snapshot (in names) of a Split or Merge sf-xform made
                     * (load_generated); NULL: not one, or every one of them starts afresh */
  char *manifest;
  char **names;
} Loaded;

/* How far the positions the coordinator places checkpoints ahead of (its furthest source while
 * one runs, else the furthest the other hosts report) move per tick (ckpt_pace). */
typedef struct CkptPace {
  uint64_t last;     /* that position at the previous tick */
  bool own;          /* it was this executor's sources' (else the others' reports) */
  uint64_t steps[4]; /* how far it moved at each of the last 4 ticks (a ring, by ticks) */
  unsigned ticks;    /* ticks since it changed from the one to the other */
} CkptPace;

typedef struct Ckpt {
  char dir[PATH_MAX];       /* the checkpoint directory (plan) */
  double interval;          /* seconds between checkpoints (plan) */
  const char *host;         /* this executor's part: its host, or "all" in one process (plan) */
  const char **hosts;       /* every part a checkpoint needs (plan) */
  int nhosts;               /* (plan) */
  bool *host_sinks;         /* host i holds an operator that commits (a sink) (plan) */
  bool coordinator;         /* picks the positions (plan) */
  bool distributed;         /* one host's part of a job (--host) (plan) */
  bool ctl;                 /* several hosts: requests, reports and completions go over the control
                             * streams (remote_control) (plan) */
  int self;                 /* this host's index in hosts (plan) */
  PtrVec sources;           /* local source Node* (plan) */
  int nlocal;               /* local operators: each writes a snapshot per checkpoint (plan) */
  atomic_ullong req;        /* the latest requested checkpoint (atomic, release after req_pos) */
  atomic_ullong req_pos[CK_SLOTS]; /* position of request K at K % CK_SLOTS (atomic) */
  atomic_int sources_live;  /* local sources whose run has not returned (atomic) */
  atomic_bool sink_ended;   /* a local sink finished: no more checkpoints (atomic) */
  atomic_ullong done;       /* the newest checkpoint known complete (atomic; sinks read it) */
  pthread_mutex_t mu;       /* the counts, and the coordinator's record of the hosts done */
  struct {
    uint64_t id;
    int done;
    uint64_t bytes;         /* their snapshots' bytes (--metrics: sf_checkpoint_last_snapshot_bytes) */
  } counts[CK_SLOTS];       /* operators done per checkpoint (mu) */
  /* the control streams (ctl): on the coordinator, the checkpoint in progress (mu) */
  uint64_t ctl_req;         /* the latest requested (0: none yet) */
  uint64_t ctl_req_pos;     /* its position */
  double ctl_req_at;        /* when (stats_seconds) */
  bool *ctl_seen;           /* per host of hosts: its part of ctl_req is done */
  int ctl_ndone;            /* how many are */
  atomic_ullong ctl_complete; /* the newest checkpoint whose MANIFEST the coordinator wrote (atomic) */
  uint64_t ctl_heard;       /* elsewhere: the latest request heard (the control stream's thread) */
  /* the coordinator between hosts: per host of hosts, how many of its sources still run and how far
   * the furthest has got, from the plan and then its reports (WIRE_CKPT_SOURCES) (mu) */
  int *host_sources;        /* how many it has (plan) */
  int *host_running;
  uint64_t *host_pos;
  /* elsewhere: the last report sent (main thread) */
  int sent_running;
  uint64_t sent_pos;
  /* the main thread's */
  uint64_t last_req;        /* the last checkpoint requested (or heard of) */
  double req_time;          /* when */
  double next_at;           /* when the next one is due */
  uint64_t complete;        /* the newest complete checkpoint */
  uint64_t margin;          /* how far ahead of the furthest source a position is put */
  CkptPace pace;            /* how fast the furthest source moves (ckpt_pace; main thread) */
  uint64_t restored;        /* the checkpoint the job started from (0: none) */
  uint64_t graph;           /* the graph's identity (ckptdir_graph_identity) (plan) */
  int lock_fd;              /* holds DIR/LOCK while the job runs (-1: not locked) (main thread) */
  bool made_dir;            /* this job made DIR (main thread) */
  uint64_t *ids;            /* the checkpoints DIR held at the start, newest first (main thread) */
  int nids;
  int chosen;               /* --restore: the index in ids of the one to restore (-1: none) */
  Loaded loaded;            /* its snapshots, checked (main thread) */
  /* --restore: this host's commit record was there (its operators with recommit finish their
   * commit and drop their input), and every host's (the job is complete: nothing runs) (plan) */
  bool committed, job_done;
  unsigned char *commit_bytes; /* the record (committed; malloc'd) */
  SnapIn commit_body;          /* its body, in commit_bytes */
} Ckpt;

static inline int ck_path(char *buf, size_t cap, const Ckpt *ck, uint64_t id, const char *name) {
  return ckptdir_path(buf, cap, ck->dir, id, name);
}

/* ckpt.c: publishes request id at position pos to the local sources. */
void ckpt_publish(Ckpt *ck, uint64_t id, uint64_t pos);

/* ---- ckpt_restore.c ---- */

/* Frees what l holds (nothing when empty) and empties it. */
void ckpt_loaded_free(Exec *x, Loaded *l);
/* The newest checkpoint, from ids[from] on, whose snapshots for every local operator are sound
 * (files, CRCs, positions, counters) and belong to this graph as it is now, loaded into l, without
 * touching an operator: its index, or -1 when there is none (said so), -2 when one is refused (of
 * another graph, or an operator changed: the failure recorded). Each one skipped is named with why. */
int ckpt_choose(Exec *x, const uint64_t *ids, int n, int from, Loaded *l);
/* Restores the operators from the checkpoint ckpt_choose chose (x->ck->loaded, at index
 * x->ck->chosen), or an older one when an operator refuses its snapshots. 0, or -1 with the
 * failure recorded. */
int ckpt_restore_chosen(Exec *x);
/* --restore: the commit records of this job's hosts (ckptdir.h). Sets committed (this host's is
 * there, kept in commit_bytes) and job_done (that of every host holding a sink). 0, or -1 with the
 * failure recorded (a damaged one). Before any operator opens. */
int ckpt_read_commits(Exec *x);
/* This host's operators with recommit finish their commit from its record (ckpt_read_commits), after
 * they opened. 0, or -1 with the failure recorded. */
int ckpt_recommit_all(Exec *x);
/* One tick (20 ms) of the coordinator: max is where the positions are placed ahead of, own whether
 * it is its own sources' (else the other hosts' reports). Returns how far max moves in a tick, and
 * sets *settling while that is not known yet (no position may be placed then). */
uint64_t ckpt_pace(CkptPace *p, bool own, uint64_t max, bool *settling);

#endif
