/* exec_priv.h: the executor's own structures, shared by the files that run a plan (exec.c and the
 * files it names). Operator kinds never include it (they see rt.h), nor does remote.c.
 *
 * Who owns what. Three kinds of owner appear in the field comments below:
 *   - "plan": written by the main thread before any group's thread starts (exec.c's exec_new,
 *     plan.c); read-only afterwards, so any thread reads it without a lock;
 *   - "thread": only the group's own thread touches it once the threads run (for a Node or an
 *     Edge, the thread of the group that runs it or pushes on it); the main thread may again after
 *     joining them;
 *   - a lock ("g->mu", "fail_mu") or "atomic".
 * The lock rules (which lock may be held while taking which) are written at the top of flow.c. */
#ifndef SF_EXEC_PRIV_H
#define SF_EXEC_PRIV_H

#include "rt.h"
#include "remote.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

enum {
  DEFAULT_BATCH = 256,         /* items per batch between threads */
  RUN_MAX = 256,               /* tuples a merge or a source collects into one run (process_run) */
  DEFAULT_REMOTE_BATCH = 1024, /* items per message between hosts (docs/design.md, "The transport") */
  DEFAULT_QUEUE_BATCHES = 8,   /* batches a queue holds */
  WAIT_SLICE_MS = 100,         /* waits wake up this often to look at the job's state */
  BATCH_DELAY_NS = 2000000,    /* a batch older than this goes out with the next item (live streams:
                                  a tuple waits for its batch to fill at most about this long) */
  DEFAULT_STOP_GRACE = 5,      /* seconds the operators get to return once the job stopped (--stop-grace) */
};

/* A batch belongs to one holder at a time: the producer's Edge.pending, a Queue's ring, or the
 * consumer's Group.cur (or run_single's hands); its fields follow the holder's rule. */
typedef struct Batch {
  int n;        /* items used */
  int cap;      /* items that fit */
  int next;     /* consumer: next item to read */
  Item items[]; /* the items */
} Batch;

typedef struct Group Group;
typedef struct Node Node;

/* Which operator a thread is running, for the fatal paths (fatal.c): the operator's label
 * (Node.label), NULL between operators. One per thread that runs operators: a group's, and the
 * main thread's (open, commit, close). Its thread writes it (fatal_enter); a signal handler on any
 * thread may read it. */
typedef struct RunSlot {
  _Atomic(const char *) label; /* (atomic, relaxed) */
} RunSlot;

/* Latencies from a source to a sink, in log-linear buckets: LATENCY_SUB buckets per power of two
 * of microseconds, so a percentile read from them is within 1/LATENCY_SUB (6 %) of the truth. */
enum { LATENCY_SUB = 16, LATENCY_BUCKETS = 40 * LATENCY_SUB };
typedef struct Latency {
  atomic_ullong count[LATENCY_BUCKETS]; /* tuples per bucket (one writer: the sink's thread) */
  atomic_ullong sum_ns;                 /* their latencies, summed, in ns (the same writer) */
} Latency;

/* ---- clock.c: event time (sources' clocks and ticks, a fan-in's tick) ---- */

typedef struct Clock Clock;
/* Sets up every node's clock (a source with `time`) or its inputs' ticks (a fan-in below one),
 * whether ticks reach it, and its current tick (none), in topological order. */
void clock_plan(Exec *x);
/* A source with a clock is about to emit t (rt_emit): the tick it reaches goes first. 0 or -1. */
int clock_source_tuple(Node *n, const Tuple *t);
/* A source with a clock emits the run items[0..k) (rt_emit_run, stamped): cut where ticks go. */
int clock_source_run(Node *n, int port, Item *items, int k);
/* A source with a clock ends: its final tick goes. */
int clock_source_end(Node *n);
/* A tick reaches n on input slot `slot` (node_deliver). */
int clock_deliver(Node *n, int slot, const Item *it);
/* Whether n keeps clock state in its checkpoints (ticks reach it): clock_snapshot writes it in
 * front of the operator's snapshot, clock_restore reads it back (-1: malformed). */
bool clock_kept(const Node *n);
void clock_snapshot(const Node *n, Buf *out);
int clock_restore(Node *n, SnapIn *in);
/* Back to no tick seen, as clock_plan left it (a restore that gave up on a checkpoint). */
void clock_reset(Node *n);

/* ---- stats.c: latency ---- */

/* Counts one tuple born at `born` (CLOCK_MONOTONIC ns), now. */
void latency_record(Latency *l, int64_t born);
/* The q-quantile (0 < q < 1) in microseconds, the upper bound of its bucket; -1 when empty. */
double latency_quantile(const Latency *l, double q);

/* A bounded queue of batches from one producer thread to one consumer group. The consumer group's
 * mutex protects every queue feeding it, so its driver can wait for "any input". */
typedef struct Queue {
  Group *owner;            /* consumer group (plan) */
  Batch **ring;            /* cap slots (owner->mu) */
  int cap, head, count;    /* ring state (cap: plan; head, count: owner->mu) */
  bool unsignaled;         /* a full batch of tuples was put without waking the owner (owner->mu) */
  pthread_cond_t not_full; /* producers wait here, holding owner->mu */
  uint64_t blocked_ns;     /* how long producers found it full and waited for room, in all: the
                              back-pressure (timed only when it is full) (owner->mu) */
} Queue;

typedef enum EdgeKind { EDGE_DIRECT, EDGE_QUEUE, EDGE_REMOTE } EdgeKind;

/* One stream going into one input slot of one consumer. */
typedef struct Edge {
  EdgeKind kind;     /* how items travel (plan) */
  Stream *stream;    /* the stream (plan) */
  Node *from;        /* producer (NULL: arrives from another host) (plan) */
  Node *to;          /* consumer (NULL: goes to another host) (plan) */
  int slot;          /* consumer's input slot (plan) */
  Queue *q;          /* EDGE_QUEUE, and remote input (plan) */
  Batch *pending;    /* producer side: items not yet pushed (thread: producer) */
  int64_t pending_since; /* when pending got its first item (coarse monotonic ns) (thread: producer) */
  int limit;         /* items per batch on this edge (plan) */
  Group *producer;   /* the group whose thread pushes (plan) */
  bool feeds_fanin;  /* consumer orders by src: send progress (plan) */
  uint64_t sent_src; /* highest src pushed (progress) (thread: producer) */
  bool sent_any;     /* something was pushed (thread: producer) */
  RemoteTx *tx;      /* EDGE_REMOTE (plan; used by the producer's thread) */
  Op *to_op;         /* consumer operator (also when it runs on another host) (plan) */
  bool closed;       /* FINAL was pushed: nothing more goes out (thread: producer) */
  bool pushing;      /* a batch of this edge waits for room: later items only collect (thread: producer) */
  bool final_queued; /* FINAL is in pending: no progress may follow it (thread: producer) */
} Edge;

typedef enum Driver { DRIVE_SINGLE, DRIVE_RR, DRIVE_SEQ, DRIVE_SEQPULSE, DRIVE_SRC, DRIVE_TIME } Driver;

struct Node {
  OpInst inst;        /* what operators see (thread, but for n_in and n_out: atomic, read by the stats) */
  Op *op;             /* graph operator (plan) */
  bool local;         /* runs on this host (plan) */
  Group *group;       /* its thread (plan) */
  PtrVec *outs;       /* per output port: Edge* (plan) */
  Edge **direct;      /* per output port: its edge when it is the port's only one and direct (the
                         consumer runs in this thread: rt_emit calls it at once), else NULL (plan) */
  int nslots;         /* input streams over all ports (plan) */
  int *slot_port;     /* port of each slot (plan) */
  Edge **in;          /* edge of each slot (plan) */
  int finals_left;    /* slots whose FINAL has not arrived (thread) */
  bool finished;      /* FINAL delivered and forwarded (thread) */
  bool channel_merge; /* Merge inside a channel (shuffle), or a Join replica: takes its inputs in the
                         region's seq order and passes its pulses on (plan) */
  Latency *latency;   /* a sink with --stats: how long its tuples took from their source (plan;
                         the buckets: thread, read by the stats with relaxed loads) */
  struct Prof *prof;  /* --stats or --stats-json: its sampled CPU time (stats.c) (plan; the samples:
                         thread, read after the threads are joined) */
  /* checkpoints, sources only */
  atomic_ullong ck_pos; /* src of the tuple being emitted (atomic: the coordinator reads it) */
  uint64_t ck_seen;     /* the last checkpoint request it has dealt with (thread) */
  uint64_t ck_prev;     /* src of its previous tuple + 1 (0: none yet) (thread) */
  uint64_t ck_taking;   /* the checkpoint its snapshot is being taken for, or restored from (thread) */
  atomic_bool ck_ended; /* a source whose run returned (atomic: the coordinator reads it) */
  /* checkpoints, every operator (ckpt.c, "Operators that finished") */
  uint64_t ck_written;  /* the newest checkpoint it wrote or claimed its snapshot of (ck->mu) */
  bool ck_finished;     /* it finished: its part of later checkpoints is a finished snapshot (ck->mu) */
  bool restored_finished; /* --restore: it had finished at the checkpoint: it does not run again and
                             emits only its end (set before the threads start; then its thread's) */
  /* event time (clock.c) */
  struct Clock *clock;  /* a source declaring `time`: its clock (plan; thread) */
  int64_t *slot_tick;   /* a fan-in below a source with event time: each input's latest tick (plan;
                           thread) */
  bool timed;           /* a source with event time is upstream (or it is one): ticks reach it (plan) */
  const char *label;    /* "operator 'NAME'" (a replica's: "operator 'NAME' (from 'ORIGIN')"), as
                           rt_fail names it: what fatal.c's handlers write (plan) */
};

struct Group {
  Exec *exec;                 /* the executor (plan) */
  Node *entry;                /* the node fed by queues (NULL for a source group) (plan) */
  Node *source;               /* the source driving this group (plan) */
  Driver driver;              /* how the entry's inputs are interleaved (plan) */
  pthread_mutex_t mu;         /* protects the queues feeding this group (their ring state) */
  pthread_cond_t wake;        /* an input queue got a batch, or the job is stopping (with mu) */
  Batch **cur;                /* per slot: batch being read, taken from its queue under mu (thread) */
  bool order_locked;          /* ordered drivers: the thread holds mu during this step (thread) */
  uint64_t *floor;            /* per slot: key (seq or src) of the last item taken: later ones are not
                                 smaller (thread) */
  bool *floor_known;          /* per slot: an item was taken (thread) */
  uint64_t *slot_ckpt;        /* fan-in (DRIVE_SRC): per slot, the newest checkpoint whose barrier it
                                 had (thread) */
  bool by_src;                /* ordered by src (fan-in) rather than seq (plan) */
  uint64_t next_seq;          /* DRIVE_SEQ: next expected seq (thread) */
  uint64_t out_src;           /* seqpulse channel merge: src of the last tuple delivered (thread) */
  int *time_attr;             /* DRIVE_TIME: per slot, the event-time attribute of its stream (plan) */
  uint64_t out_pos;           /* DRIVE_TIME: tuples delivered, the merged stream's position (thread) */
  /* DRIVE_TIME with checkpoints (order.c, "checkpoints of a time-ordered fan-in"): the cut is taken
   * when the first input's barrier comes; the other inputs' items up to their barriers are
   * recorded and go into the entry's snapshot with it (thread) */
  uint64_t tck_id;            /* the checkpoint in progress (0: none) */
  uint64_t tck_last;          /* the newest checkpoint begun: barriers of it or older ones are dropped */
  bool *tck_seen;             /* per slot: its barrier came */
  Buf *tck_log;               /* per slot: what was taken from it since the cut (tck_log_item) */
  uint64_t *tck_nlog;         /* per slot: how many items */
  Buf tck_state;              /* the entry's snapshot at the cut: its ticks, then its kind's state */
  size_t tck_clock_len;       /* how many of tck_state's bytes are the ticks (clock_snapshot) */
  uint64_t tck_pos;           /* out_pos at the cut */
  Item tck_barrier;           /* the first barrier */
  uint64_t ck_missed;         /* a checkpoint whose barrier the driver dropped, for ckpt_missed, which
                                 takes ck->mu: called at the top of order_advance's loop, where no mu
                                 is held (a step may run under mu) (thread) */
  int rr_next;                /* DRIVE_RR: next channel (thread) */
  uint64_t taken;             /* ordered drivers: tuples taken so far (a checkpoint keeps it: a
                                 round-robin merge restored at another width starts at taken % W) (thread) */
  PtrVec outs;                /* Edge* pushed by this thread (queue and remote) (plan) */
  uint64_t progress;          /* src of the item being processed (thread) */
  int last_slot;              /* ordered drivers: slot of the item just taken (thread) */
  PtrVec idlers;              /* Node* of this group whose kind has an idle hook (Split) (plan) */
  bool stalled;               /* waiting for room in a full queue: emitted items only collect (thread) */
  bool in_idle;               /* the idle hooks are running (thread) */
  char fail[256];             /* ordered drivers: why the order cannot be restored (thread) */
  pthread_t thread;           /* its thread (main thread) */
  bool started;               /* its thread was created (main thread) */
  RunSlot run;                /* the operator its thread is running (fatal.c) */
  int64_t cpu_ns;             /* --stats or --stats-json: its thread's CPU time, read when it ends
                                 (thread; the main thread reads it after joining); of a hosted group,
                                 the CPU time of its pumps (pump_mu) */
  /* A hosted group (a region's Merge and the operators fused after it, which emit nothing to
   * another thread) has no thread of its own: the threads of its channels run it (group_pump)
   * after each batch they handled, before they wait and when they end, one at a time. Its driver
   * state above ("thread") then belongs to whichever thread holds pump_mu. */
  bool hosted;                /* run by its producers' threads (plan) */
  pthread_mutex_t pump_mu;    /* held by the thread running it; only ever try-locked, never held
                                 while taking another pump_mu; taken before (never inside) any mu */
  atomic_bool pump_asked;     /* a producer asked for a pump since the holder's last look (atomic) */
  atomic_bool pump_idle;      /* a producer that asked is about to wait: the idle hooks run at the
                                 pump's wait (atomic) */
  atomic_bool pump_over;      /* it delivered its end or failed: nothing more to pump (atomic) */
  PtrVec hosts;               /* Group*: the hosted groups this group's thread pumps (plan) */
  /* --metrics, a Merge of several channels (order.c, "merge wait"): how long it held items it
   * could not deliver because a channel had nothing for it yet. The totals have one writer at a
   * time, the driver (of a hosted group, pump_mu's holder), and are read by scrapes. */
  bool wait_timed;            /* (plan) */
  int64_t wait_since;         /* CLOCK_MONOTONIC ns when the stall being timed began, 0: none (thread) */
  bool *wait_on;              /* per slot: it had nothing at its head then (thread) */
  atomic_ullong wait_ns;      /* the stalls, in all (atomic, relaxed) */
  atomic_ullong *slot_wait_ns; /* per slot: the time of the stalls during which it had nothing (atomic, relaxed) */
};

/* The upper bounds of the checkpoint durations' histogram for --metrics, in seconds (ckpt.c). */
enum { CK_DURATION_BUCKETS = 12 };
extern const double ck_duration_le[CK_DURATION_BUCKETS];

/* The checkpoints' figures for --metrics (metrics.c reads them): ckpt.c writes them, and they
 * outlive its state (ckpt_finish), which a scrape never reads. */
typedef struct ExecCkptMetrics {
  atomic_bool coordinator;   /* this executor requests the checkpoints: it times them (atomic: set
                                by ckpt_prepare, after the server started) */
  atomic_ullong completed;   /* checkpoints seen complete since the start (atomic) */
  atomic_ullong last_id;     /* the newest complete one (atomic) */
  atomic_ullong bytes_total; /* bytes of the snapshots this executor wrote (atomic) */
  atomic_ullong last_bytes;  /* of those, the ones in the newest complete checkpoint (atomic) */
  atomic_ullong ns_total;    /* the coordinator: the checkpoints' durations from request to
                                completion, summed (atomic) */
  atomic_ullong last_ns;     /* the newest one's (atomic) */
  atomic_ullong by_le[CK_DURATION_BUCKETS + 1]; /* how many of them took at most ck_duration_le[b]
                                                    s (the last: more), not cumulated (atomic) */
} ExecCkptMetrics;

struct Exec {
  Graph *g;                 /* the graph (plan) */
  const ExecOptions *o;     /* options (plan) */
  FILE *log;                /* errors, stats (plan) */
  Node *nodes;              /* one per graph operator (plan) */
  int nnodes;               /* (plan) */
  PtrVec groups;            /* Group* (plan) */
  Arena *arena;             /* plan memory (plan) */
  int batch;                /* items per batch between threads (plan) */
  int remote_batch;         /* items per message between hosts (plan) */
  int queue_batches;        /* queue capacity (plan) */
  atomic_bool failed;       /* a failure happened: stop (atomic; set under fail_mu) */
  pthread_mutex_t fail_mu;  /* protects message and stop_signal */
  char message[2048];       /* the first failure (fail_mu) */
  Remote *remote;           /* transport for cross-host edges (NULL: one process) (plan) */
  char graph_dir[PATH_MAX]; /* directory of the graph file (plan) */
  struct timespec started;  /* for rates (plan) */
  atomic_int running;       /* groups still running (atomic) */
  int stop_pipe[2];         /* its read end turns readable when the job stops (the first failure
                               writes a byte, never read): rt_wait_fd polls it (-1: none) (plan) */
  atomic_bool committing;   /* the job completed and its sinks commit: a stop signal is too late (atomic) */
  int stop_signal;          /* the signal that stopped the job (0: none) (fail_mu) */
  struct Ckpt *ck;          /* checkpoints (NULL: off) (plan; its own rules in ckpt.c) */
  char *restore_why;        /* while ckpt.c restores an operator: rt_fail writes its message here
                               instead of failing the job (NULL: not restoring) (main thread) */
  size_t restore_why_cap;
  ExecCkptMetrics ck_metrics; /* checkpoints, for --metrics (its own rules, above) */
  struct MetricsHttp *metrics; /* --metrics: its server (metrics.c) (main thread) */
};

/* ---- ckpt.c: checkpoints ---- */

/* With --checkpoint-dir, after plan_build and before ops_open: the checkpoint state; DIR made if
 * missing and locked for this job; refused (nothing in it touched, no operator opened yet) when
 * another job holds it, it holds what sf-exec did not write or checkpoints of another graph; with
 * --restore the newest sound checkpoint chosen and checked (an older one when the latest is
 * damaged, with a message), refused when it is of another graph or an operator changed. Main
 * thread. 0, or -1 with the failure recorded. */
int ckpt_prepare(Exec *x);
/* After ops_open: every operator must be checkpointable; with --restore the operators' state from
 * the chosen checkpoint (an older one when an operator refuses its snapshot, with a message;
 * none: a fresh start, said so). Main thread. 0, or -1 with the failure recorded. */
int ckpt_start(Exec *x);
/* The main thread's periodic step while the groups run (every 20 ms): requests the next checkpoint
 * when it is time, notices the completed ones (and removes older ones). */
void ckpt_tick(Exec *x);
/* Every local operator completed: each one's commit record (OpKindImpl.commit_record) is written
 * durably, before any operator commits (kept when an earlier run wrote it). Main thread. 0, or -1
 * with the failure recorded. */
int ckpt_commit(Exec *x);
/* --restore found that every host had committed: the job is complete, nothing is to run. */
bool ckpt_job_done(const Exec *x);
/* The job completed: its checkpoints are obsolete and go; or it failed: they stay for a restart.
 * Frees the checkpoint state. Main thread, after the groups are joined. */
void ckpt_finish(Exec *x, bool ok);
/* A source is about to emit a tuple at position n->inst.cur_src: when that crosses a requested
 * checkpoint's position, its snapshot is taken and the barrier goes down its outputs first.
 * n's thread. 0, or -1 when the job is failing. */
int ckpt_source_emit(Node *n);
/* Source n's run returned: it is no longer one the coordinator places positions ahead of, and once
 * every local source has ended no checkpoint is requested any more. */
void ckpt_source_ended(Node *n);
/* n finished (its end handled and forwarded): its part of the checkpoint pending now, if it has
 * none, and of every later one is a finished snapshot; a sink's end stops the checkpoints instead.
 * n's thread, holding no lock. 0, or -1 with the failure recorded. */
int ckpt_finished(Node *n);
/* n's driver dropped barrier id (a fan-in that found it missed, or a time-ordered one that began a
 * newer checkpoint): n took in items past that checkpoint's cut, so it writes no part of it, not
 * even a finished one when it finishes later. n's thread, holding no lock. */
void ckpt_missed(Node *n, uint64_t id);
/* A barrier reached n (aligned on all its inputs): n's part of the checkpoint is written. n's
 * thread, holding no lock. 0, or -1 with the failure recorded. */
int ckpt_snapshot(Node *n, Item barrier);
/* The entry of a time-ordered fan-in (DRIVE_TIME) is cut when the first input's barrier comes:
 * ckpt_time_cut keeps its snapshot's state in its group (tck_state); ckpt_time_write, once every
 * input's barrier came, writes it with what order.c recorded of the other inputs in between (log,
 * put between the ticks and the kind's state). 0, or -1 with the failure recorded. */
int ckpt_time_cut(Node *n, Item barrier);
int ckpt_time_write(Node *n, const Buf *log);

/* ---- plan.c: this host's plan ---- */

/* Builds x's nodes, groups and edges from the checked graph x->g and, when some edge crosses to
 * another host, starts the transport (x->remote) and its edges. Main thread, before any group's
 * thread starts. 0, or -1 with the failure recorded (an unknown --host, a transport that cannot
 * start). */
int plan_build(Exec *x);

/* ---- group.c: the groups' threads ---- */

/* Starts a thread per group (x->running counts those still running; a thread that cannot be made
 * is the job's failure, and the ones after it are not started). Main thread. */
void groups_start(Exec *x);
/* Joins every thread groups_start started. Main thread. */
void groups_join(Exec *x);
/* Runs hosted group h (plan_hosts) on the calling thread, one of its producers', until it would
 * wait for input, unless another producer's thread runs it now (which then looks again). idle: the
 * caller is about to wait, so h's idle hooks run when h would wait too. Takes no lock the caller
 * holds: called holding none. */
void group_pump(Group *h, bool idle);
/* group_pump of every hosted group g's thread feeds. */
void group_pump_hosts(Group *g, bool idle);

/* ---- order.c: the ordered drivers ---- */

/* The loop of a group whose entry has several input streams (driver DRIVE_RR, DRIVE_SEQ,
 * DRIVE_SEQPULSE or DRIVE_SRC): delivers the entry's input items in the driver's order until the
 * entry finished (0) or the job stops or the order cannot be restored (-1, the failure recorded).
 * g's thread. */
int order_run(Group *g);
/* A restore of the entry of time-ordered fan-in g: reads what ckpt_time_write put after its ticks
 * (each input's items recorded between the cut and its barrier) and puts them at the head of their
 * inputs, to be taken before anything their sources send. 0, or -1 when it is truncated or does
 * not fit g's inputs (their number, a tuple's values and their types). */
int order_time_restore(Group *g, SnapIn *in);
/* Releases what g's checkpoints of a time-ordered fan-in hold (exec_free, after its thread ended). */
void order_time_free(Group *g);
/* order_run that, when !wait, returns 1 where it would wait for input (a hosted group's pump). */
int order_advance(Group *g, bool wait);

/* ---- flow.c: items between operators (the lock rules are at its top) ---- */

/* Hands item it to slot `slot` of n's operator (process, pulse, window or, once every slot ended,
 * final, then FINAL forwarded to every output); n's thread. 0, or -1 when the job is failing. */
int node_deliver(Node *n, int slot, const Item *it);
/* rt_emit_run's work after a source's run has been stamped and cut at its ticks (clock.c). */
int emit_run_items(OpInst *op, int port, Item *items, int k);
/* node_deliver without the profile's timing (stats.c times it). */
int node_deliver_now(Node *n, int slot, const Item *it);
/* Hands the k tuple items of a run to slot `slot` of n's operator: one process_run call, or process
 * per tuple; takes over their references (released on a failure too). */
int deliver_run(Node *n, int slot, Item *items, int k);
/* deliver_run to an operator with process_run, without the profile's timing (stats.c times it). */
int deliver_run_now(Node *n, int slot, Item *items, int k);
/* The group's thread is about to wait: its idle hooks (Split: a pulse) run, once. */
void group_idle(Group *g);
/* Hands on the partial batch of every output edge of g but except whose queue has room, never
 * waiting; true when none holds a batch any more. g's thread, holding no lock. */
bool group_try_flush(Group *g, Edge *except);
/* Pushes the partial batch of every output edge of g but except, waiting for room (stops at the
 * first failure). g's thread, holding no lock. */
void group_flush(Group *g, Edge *except);
/* Before g's thread waits for input: group_idle, then group_try_flush; true when no batch stayed
 * behind (a wait may then be long), false when some queue was full. */
bool group_before_wait(Group *g);
/* A receiver thread (remote.c) hands the n items of one message of remote input edge e to its
 * queue, waiting for room; the tuple references go with them, items stays the caller's. 0, or -1
 * when the job is stopping (the references released). Holding no lock. */
int edge_receive(Exec *x, Edge *e, const Item *items, int n);

/* ---- queue.c: batches and queues ---- */

/* An empty batch with room for cap items (aborts when out of memory). Batches are blocks of the
 * per-thread pools (tuple.c): a batch made by one thread and freed by another costs no malloc. */
Batch *batch_new(int cap);
/* b with room for cap (> b->cap) items: the same items, b itself gone. */
Batch *batch_grow(Batch *b, int cap);
/* Releases the tuples of the items not yet read (from b->next on) and b itself; NULL is fine. */
void batch_free(Batch *b);
/* Releases b, whose items were all read (their tuples are someone else's now). */
void batch_release(Batch *b);
/* A queue of x->queue_batches batches into group owner, in the plan's arena. Main thread. */
Queue *queue_new(Exec *x, Group *owner);
/* Before g's thread waits for input (holding g->mu): wakes the producers waiting for room in any
 * of its queues that has some (queue_take wakes them only once half a ring is free). */
void group_wake_producers(Group *g);
/* Takes the next batch of q without waiting (NULL when empty) and signals not_full; the caller
 * holds q->owner->mu. */
Batch *queue_take(Queue *q);
/* Appends b to q, which has room, and wakes the owner, except for a batch of `full` tuples while
 * the ring is less than half full (the owner is then woken by a later put, or before the producer
 * waits: group_wake_consumers); the caller holds q->owner->mu. */
void queue_put(Queue *q, Batch *b, int full);
/* Before g's thread waits (for input, for room, pacing), holding no lock: wakes the owner of every
 * queue it feeds that holds a batch put without waking it. */
void group_wake_consumers(Group *g);
/* pthread_cond_timedwait for one time slice (WAIT_SLICE_MS), or for ms milliseconds: every wait
 * wakes up this often to look at the job's state. */
void timed_wait(pthread_cond_t *c, pthread_mutex_t *m);
void timed_wait_ms(pthread_cond_t *c, pthread_mutex_t *m, long ms);

/* ---- stop.c: the job's failure and stop ---- */

/* Records the job's first failure (a later one is dropped; one that follows a stop signal is its
 * consequence, and the message is the signal's), writes the stop pipe and wakes every wait
 * (wake_all, then the transport). Takes every group's mu in turn, then the transport's lock: the
 * caller holds no lock at all. */
void exec_fail(Exec *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The job is stopping: a failure, or a stop signal that the main thread has not recorded yet
 * (exec_note_signal). Takes no lock (two atomic loads): it is called with a group's mu held. */
bool exec_stopping(Exec *x);
/* The main thread, holding no lock, turns a caught stop signal into the job's failure (exec_fail
 * words the message), which wakes every wait. */
void exec_note_signal(Exec *x);

/* ---- fatal.c: the ends of a process that the job does not reach ---- */

/* The calling thread's RunSlot (NULL: a thread that runs no operator). */
extern _Thread_local RunSlot *fatal_slot;
/* The calling thread enters an operator's code: label (Node.label) is what a fatal path names.
 * Returns what it replaces (an operator calling another directly: fatal_leave puts it back). Two
 * relaxed memory operations, on the per-tuple path. */
static inline const char *fatal_enter(const char *label) {
  RunSlot *s = fatal_slot;
  if (!s) return NULL;
  const char *was = atomic_load_explicit(&s->label, memory_order_relaxed);
  atomic_store_explicit(&s->label, label, memory_order_relaxed);
  return was;
}
static inline void fatal_leave(const char *was) {
  RunSlot *s = fatal_slot;
  if (s) atomic_store_explicit(&s->label, was, memory_order_relaxed);
}
/* The job starts (exec_new, main thread): from now on a fatal signal (SIGSEGV, SIGABRT, ...)
 * names the operator its thread was running, removes the temporary files (tempfiles.c) and ends
 * the process by that signal; exit() ends it with status 1 and a message the same way. */
void fatal_job_start(Exec *x);
/* The job is over (exec_free): exit() is an ordinary end again; the dispositions are put back. */
void fatal_job_end(void);
/* The groups' threads run: their slots are read from now on (x->groups is the plan's). */
void fatal_groups_started(Exec *x);
/* The main thread, when the job has been stopping for --stop-grace seconds and some group still
 * runs: writes the job's failure and the operators still running ("...; operator 'x' did not
 * return within 5 s: stopped"), removes the temporary files and ends the process (_exit) with the
 * job's status. */
_Noreturn void fatal_stuck(Exec *x);
/* A stop signal came while the first one (first, caught at CLOCK_MONOTONIC first_ns) is being
 * handled: once the grace is over, the same as fatal_stuck, from the signal handler (the main
 * thread may be the one that does not return). Async-signal-safe. */
void fatal_signal_again(int first, int64_t first_ns);
/* A group's thread starts: slot is its RunSlot; an alternate signal stack is made for it (a stack
 * overflow's handler needs one). Returns what fatal_thread_end releases. */
void *fatal_thread_start(RunSlot *slot);
void fatal_thread_end(void *alt);

/* ---- metrics.c: --metrics ---- */

/* With --metrics, once the plan is built: serves the executor's figures at that address on a
 * thread of its own. Main thread. 0, or -1 with the failure recorded (an address in use). */
int metrics_start(Exec *x);
/* Stops serving (nothing when not serving), before the plan is released. Main thread. */
void metrics_stop(Exec *x);
/* live_page.c: the page of the live view (served at /), live_page_len bytes. */
extern const char live_page[];
extern const size_t live_page_len;

/* ---- stats.c ---- */

/* --stats or --stats-json: n's profile (in the plan's arena), or NULL when neither is on. Main
 * thread, building the plan. */
struct Prof *stats_prof_new(Exec *x);
/* An operator's profile (stats.c says how it is sampled). Its thread writes it; the main thread
 * reads it after joining the threads. */
enum { PROF_EVERY = 64, PROF_BUCKETS = 65 };
struct Prof {
  uint64_t calls;           /* deliveries */
  uint64_t n[PROF_BUCKETS]; /* timed deliveries, by the bit length of their own ns */
  uint64_t ns[PROF_BUCKETS];/* their own ns, summed */
};
/* Timed deliveries in progress in this thread. */
extern _Thread_local int prof_depth;
/* Counts a delivery to the operator of profile p: true when it is to be timed (one in PROF_EVERY,
 * and every one nested in a timed delivery). */
static inline bool prof_due(struct Prof *p) {
  return ++p->calls % PROF_EVERY == 0 || prof_depth > 0;
}
/* node_deliver of a node whose prof_due said yes: timed (CLOCK_MONOTONIC); what the deliveries
 * nested in it took is not its own. n's thread. */
int prof_deliver(Node *n, int slot, const Item *it);
/* The same for a tuple that rt_emit hands straight to n on a direct edge, and for a run of k
 * tuples handed to n's process_run (one delivery). */
int prof_deliver_tuple(Node *n, int slot, uint64_t seq, uint64_t src, int64_t born, Tuple *t);
int prof_deliver_run(Node *n, int slot, Item *items, int k);
/* The calling thread's CPU time so far (CLOCK_THREAD_CPUTIME_ID), ns. */
int64_t stats_thread_cpu_ns(void);
/* Seconds since the job started (monotonic). */
double stats_seconds(const Exec *x);
/* Prints every local operator's counts and rates to x->log: "so far" while running, "summary" at
 * the end. Main thread; the counters are read with atomic loads. */
void stats_print(Exec *x, bool final);
/* Whether stats_write_json will be able to write path, looked at before the job runs: a file made
 * and removed next to it, or the device or pipe itself. 0, or -1 with errno set. */
int stats_check_json(const char *path);
/* Writes the final stats as JSON to path: through a temporary file renamed over it, or straight
 * to a device or pipe (/dev/stdout) that is not a regular file. 0, or -1 with errno set. Main
 * thread, after the groups' threads are joined. */
int stats_write_json(Exec *x, const char *path, bool ok);

#endif
