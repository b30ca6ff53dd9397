/* rt.h: the runtime's internal interface: tuples, the items that flow between operators, operator
 * instances and the calls an operator kind makes into the executor. One file per kind under ops/
 * implements an OpKindImpl; the executor (exec.c and the files it names) runs them. Custom
 * operators never see this header (rt/op.h).
 *
 * Ownership in one rule: a Tuple is reference counted and immutable once emitted; whoever holds a
 * reference releases it with tuple_unref, and rt_emit takes over the reference it is given. */
#ifndef SF_RT_H
#define SF_RT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "eval.h"
#include "sf.h"
#include "value.h"

/* ---- tuple.c ---- */

typedef struct Tuple {
  atomic_int refs;  /* references held */
  int n;            /* number of values */
  Value v[];        /* values in schema order; string bytes follow, owned by the tuple */
} Tuple;

/* A new tuple holding copies of vals (strings copied). refs = 1. */
Tuple *tuple_new(const Value *vals, int n);
/* tuple_new with a copy of key[0..len) kept in the tuple's memory, at *keyp (rt_emit_keyed). */
Tuple *tuple_new_keyed(const Value *vals, int n, const void *key, size_t len, const unsigned char **keyp);
Tuple *tuple_ref(Tuple *t);
void tuple_unref(Tuple *t);
/* A reference to t's values to keep for long (a Custom operator's sf_tuple_retain): t itself,
 * with one more reference, when it is a block of its own; a copy (refs = 1) when it lies in a
 * slab, which it would otherwise keep whole. */
Tuple *tuple_keep(Tuple *t);
/* `(sym="A", vol=3)` for error messages, into buf. */
void tuple_describe(const Tuple *t, const Schema *s, char *buf, size_t cap);

/* Many tuples in one block (wire_decode: the tuples of one batch, no allocation per tuple). The
 * block goes when the last of its tuples is freed, on whichever thread; until then any one of them
 * keeps it all. */
typedef struct TupleSlab {
  char *next;  /* where the next tuple goes */
  char *end;   /* the end of the block */
  int left;    /* tuples still to add */
  void *slab;  /* the block */
} TupleSlab;
/* The bytes a tuple of n values and `bytes` string bytes takes in a slab. */
size_t tuple_slab_size(int n, size_t bytes);
/* Starts a slab of `size` bytes (the sum of tuple_slab_size of its tuples) for exactly ntuples
 * (> 0) tuples, which the caller must then all add: a slab with a tuple missing is never freed. */
void tuple_slab_begin(TupleSlab *s, int ntuples, size_t size);
/* The slab's next tuple: refs = 1, n values left for the caller to fill in; *strings is where its
 * `bytes` bytes of string values go (each string value must point there: the tuple owns them). */
Tuple *tuple_slab_add(TupleSlab *s, int n, size_t bytes, char **strings);

/* n tuples of nvals values each, row r's values at rows[r * nvals] (strings copied), made in one
 * slab into out[0..n): one allocation for them all (a source's run). refs = 1 each. Every row has
 * the first row's types (rows of one schema). */
void tuple_new_rows(const Value *rows, int nvals, int n, Tuple **out);
/* n tuples of nvals values and no string bytes in one slab into out[0..n), refs = 1 each, their
 * values left for the caller to write (every one, before the tuple goes anywhere); they lie at a
 * fixed distance, the size returned: out[r]->v == (Value *)((char *)out[0]->v + r * size), so
 * code_eval_run_to can write one attribute of every row at once. */
size_t tuple_new_blank_rows(int nvals, int n, Tuple **out);

/* Blocks of memory from the same per-thread pools, for what one thread makes and another frees
 * (batches of items): like malloc and free (NULL is ignored), on any thread. */
void *pool_alloc(size_t size);
void pool_free(void *block);

/* ---- items: what travels on a stream ---- */

typedef enum ItemKind {
  ITEM_TUPLE,  /* a tuple */
  ITEM_PULSE,  /* seqpulse: nothing with a smaller seq will follow on this channel */
  ITEM_WINDOW, /* window punctuation */
  ITEM_FINAL,  /* end of stream */
  ITEM_PROGRESS, /* executor-internal: nothing with a smaller src will follow (feeds fan-in) */
  ITEM_BARRIER, /* checkpoint barrier: everything before it is in checkpoint `ckpt`, nothing after */
  ITEM_TICK,    /* event-time tick: `tick` holds its time (TICK_FINAL: the final tick, +infinity) */
  ITEM_KEYED,   /* a tuple emitted at a punctuation, with its place among all the tuples emitted at
                   it: `key` (keylen bytes, in t's memory), compared with memcmp (sortkey.c) */
} ItemKind;

/* The kinds that hold a tuple (t). */
static inline bool item_has_tuple(ItemKind k) {
  return k == ITEM_TUPLE || k == ITEM_KEYED;
}

/* The final tick (+infinity), which precedes the final punctuation of a source with event time;
 * TICK_NONE (-infinity) is the tick of an operator that has received none. */
#define TICK_FINAL INT64_MAX
#define TICK_NONE INT64_MIN

typedef struct Item {
  ItemKind kind; /* what it is */
  uint32_t keylen; /* ITEM_KEYED: the bytes of key (in the padding: an Item stays 40 bytes) */
  uint64_t seq;  /* ordering key inside a region (assigned by a Split), else = src */
  uint64_t src;  /* position in the source's stream: orders fan-in deterministically */
  union {
    int64_t born;  /* ITEM_TUPLE: when its source emitted the tuple it comes from (CLOCK_MONOTONIC ns,
                      the same clock in every process of a machine); 0 when not measured (no --stats) */
    uint64_t ckpt; /* ITEM_BARRIER: the checkpoint's number (1, 2, ...) */
    int64_t tick;  /* ITEM_TICK: its time */
    const unsigned char *key; /* ITEM_KEYED: its sort key, in t's memory */
  };
  union {
    Tuple *t;      /* ITEM_TUPLE and ITEM_KEYED only */
    uint64_t ckpt_pos; /* ITEM_BARRIER: the checkpoint's position P(K), where every source put it
                          (what its snapshots record); its src is its place in its own stream, which
                          differs after a time-ordered fan-in (order.c, time_barrier) */
  };
} Item;

/* tuple_unref of n tuples (NULL ones skipped), and of the tuples of items[0..n) (other kinds of
 * item skipped) the second: the tuples of one slab that die together cost one atomic decrement of
 * its count, not one each (a run's tuples, made in one slab, end in the same call; so do a batch's,
 * freed unread or sent to another host). */
void tuple_unref_all(Tuple *const *ts, int n);
void tuple_unref_items(const Item *items, int n);

/* ---- sortkey.c: the order of what a punctuation makes operators emit ---- */

/* Appends an int, or a value, to a sort key (rt_emit_keyed): keys of the same parts compare with
 * memcmp as value_compare compares the values, part by part. */
void sortkey_int(Buf *b, int64_t v);
void sortkey_value(Buf *b, const Value *v);
/* The order of two sort keys: memcmp's, a prefix first (-1, 0, 1). */
int sortkey_cmp(const void *a, size_t alen, const void *b, size_t blen);

/* ---- operator instances ---- */

typedef struct OpInst OpInst;
typedef struct Exec Exec;
typedef struct ExecOptions ExecOptions;

/* ---- snap.c: the bytes of an operator's snapshot ----
 * Fixed-width little-endian numbers and length-prefixed byte strings, appended to a Buf (value.h);
 * read back from a SnapIn, which never reads past its end: a read past it returns zeros and sets
 * `bad` (the restore then fails with "snapshot truncated"). */
typedef struct SnapIn {
  const unsigned char *p; /* the snapshot's bytes (owned by the checkpoint reader) */
  size_t n;               /* their number */
  size_t off;             /* next byte to read */
  bool bad;               /* a read went past the end, or a value was malformed */
} SnapIn;
void snap_u64(Buf *b, uint64_t v);
void snap_i64(Buf *b, int64_t v);
void snap_f64(Buf *b, double d); /* the IEEE bits: every double comes back exactly */
void snap_bool(Buf *b, bool v);
void snap_bytes(Buf *b, const void *p, size_t n); /* length, then the bytes */
void snap_value(Buf *b, const Value *v);          /* type byte, then the value */
uint64_t snap_get_u64(SnapIn *in);
int64_t snap_get_i64(SnapIn *in);
double snap_get_f64(SnapIn *in);
bool snap_get_bool(SnapIn *in);
/* The next byte string: points into in->p (valid while the SnapIn is), its length in *n. */
const void *snap_get_bytes(SnapIn *in, size_t *n);
/* The next value; a string points into in->p (copy it to keep it). */
void snap_get_value(SnapIn *in, Value *v);
/* True when everything was read and nothing was bad (a restore checks this at its end). */
bool snap_done(const SnapIn *in);

typedef struct OpKindImpl {
  OpKind kind;                                    /* which kind this implements */
  int (*open)(OpInst *op);                        /* prepare: compile, open files. 0 or rt_fail */
  /* run, process, window, pulse, final, commit and close may be NULL when a kind has nothing to do */
  int (*run)(OpInst *op);                         /* sources: emit everything, return 0 or rt_fail */
  int (*process)(OpInst *op, int port, Tuple *t); /* one input tuple; the op owns the reference */
  /* Optional: a run of n (> 0) consecutive input tuples of one port, as items (their seq, src and
   * born; cur_seq/cur_src/cur_born are the first's), in place of n process calls. The op owns
   * the references and may reuse the array (to emit it with rt_emit_run, say); it returns the
   * first failure as process would, having released the references of the tuples it did not
   * take. Without it the runtime calls process per tuple. */
  int (*process_run)(OpInst *op, int port, Item *items, int n);
  int (*window)(OpInst *op, int port);            /* window punctuation; NULL: forwarded to outputs */
  /* An event-time tick t (docs/language.md, "Event time"), rising: a fan-in's is the smallest of
   * its inputs' latest ticks (flow.c), and a tick not above the operator's current one is dropped
   * before it gets here. NULL: forwarded to outputs unchanged. */
  int (*tick)(OpInst *op, int port, int64_t t);
  int (*pulse)(OpInst *op, int port, uint64_t seq); /* a pulse; NULL: forwarded to outputs */
  /* a checkpoint barrier, after the snapshot (Split: down every output with its own sequence
   * number); NULL: forwarded to outputs */
  int (*barrier)(OpInst *op, Item barrier);
  void (*idle)(OpInst *op);                       /* its thread is about to wait (Split: pulse) */
  int (*final)(OpInst *op);                       /* every input ended: flush (emit what is left) */
  int (*commit)(OpInst *op);                      /* everything on this executor completed: make
                                                     outputs visible (FileSink renames); may be NULL */
  void (*close)(OpInst *op, bool ok);             /* release; ok false after any failure in the job */
  /* Checkpoints (snap.c, ckpt.c). snapshot appends the operator's state to out when a checkpoint
   * barrier reaches it (every input delivered it): everything it received before the barrier and
   * nothing after. A source's snapshot is taken inside rt_emit, just before the tuple that crosses
   * the checkpoint's position is emitted: its state as if that tuple had not been read yet.
   * restore runs after open and before any item, reading back what snapshot wrote (possibly by
   * another replica of the operator: see rt_owns_key). Both 0 or rt_fail. NULL: the kind keeps no
   * state (nothing is written; restore has nothing to do). */
  int (*snapshot)(OpInst *op, Buf *out);
  int (*restore)(OpInst *op, SnapIn *in);
  /* With checkpoints on, called once after open: 0 when the operator can take part (after an
   * rt_warn when it can only in part, e.g. a SocketSource's input is at-most-once across a
   * failure), or rt_fail to refuse checkpoints at start-up (a Custom operator with state but no
   * snapshot callback). NULL: it can. */
  int (*checkpointable)(OpInst *op);
  /* The commit with checkpoints on (ckpt.c), in two phases. commit_record, once every operator of
   * this executor completed and before any commits, appends what a later run needs to finish its
   * commit from the graph alone (FileSink: how many parts); the executor writes the records
   * durably. A --restore that finds them calls recommit (after open, instead of restore): it
   * finishes the commit (makes visible what is not yet), and the operator's output is final: it
   * drops what it receives (rt_restore_committed). Both 0 or rt_fail; NULL: nothing to commit. */
  int (*commit_record)(OpInst *op, Buf *out);
  int (*recommit)(OpInst *op, SnapIn *in);
} OpKindImpl;

struct OpInst {
  Op *op;                 /* the graph's operator */
  const OpKindImpl *impl; /* its kind */
  void *state;            /* the kind's private data */
  Schema *in_schema;      /* schema of input port 0 (NULL for sources) */
  Schema *out_schema;     /* schema of output port 0 (NULL for sinks) */
  Exec *exec;             /* the executor running it */
  const char *graph_dir;  /* directory of the graph file (for Custom library paths) */
  uint64_t cur_seq;       /* seq of the item being processed: rt_emit stamps it */
  uint64_t cur_src;       /* src of the item being processed */
  int64_t cur_born;       /* born of the item being processed: rt_emit stamps it */
  const unsigned char *cur_key; /* an ITEM_KEYED being processed: its key (NULL: none) */
  uint32_t cur_keylen;    /* and its length */
  Arena *scratch;         /* per-input scratch (expression strings); reset after each input */
  atomic_ullong n_in;     /* tuples received (stats) */
  atomic_ullong n_out;    /* tuples emitted (stats) */
  atomic_ullong n_skipped; /* sources with onerror="skip": malformed lines dropped (stats) */
  atomic_ullong n_late;   /* time windows: late tuples dropped (stats) */
  atomic_ullong kept_peak; /* Join: the most tuples it kept at once, and their bytes (stats) */
  atomic_ullong kept_peak_bytes;
  _Atomic int64_t cur_tick; /* the latest tick it received (TICK_NONE: none yet) (stats) */
  void *exec_data;        /* the executor's own data about this instance */
};

/* Emits t on output port `port` with the current seq/src; takes over the reference. 0 or -1 when
 * the job is failing (the caller should return -1 at once). */
int rt_emit(OpInst *op, int port, Tuple *t);
/* Emits n tuple items (explicit seq/src/born each, in stream order) on output port `port` as
 * rt_emit_item one by one would, in a few steps: down a direct edge as one process_run call, into
 * a queue as blocks of the pending batch. Takes over the references; items stays the caller's. */
int rt_emit_run(OpInst *op, int port, Item *items, int n);
/* How many tuples a source may make before it emits them as one run (rt_emit_run): 1 when it
 * must emit each as it makes it (checkpoints: a snapshot is taken inside rt_emit, before the
 * tuple that crosses a checkpoint's position). */
int rt_run_room(const OpInst *op);
/* Emits t, made by tuple_new_keyed with the sort key key[0..len) (sortkey.c), at the punctuation
 * being handled: with the punctuation's position, and, where the replicas of the operator's
 * region meet, in the order of the keys among what every replica emitted at it (order.c). Takes
 * over the reference. 0 or -1 as rt_emit. */
int rt_emit_keyed(OpInst *op, int port, Tuple *t, const unsigned char *key, uint32_t len);
/* rt_emit_keyed of a copy of t holding the sort key key[0..len) (t released): for a tuple made
 * without room for one. */
int rt_emit_keyed_copy(OpInst *op, int port, Tuple *t, const void *key, size_t len);
/* Emits t as output number i (0, 1, ...) of the input being processed, by an operator that may
 * emit several per input (selectivity many): in a region's channel it goes keyed by i (after the
 * input's own key, if it had one), so that the Merge keeps the outputs of one input in order even
 * when a shuffle sends them down different channels; elsewhere as rt_emit. */
int rt_emit_nth(OpInst *op, int port, Tuple *t, uint64_t i);
/* Emits the tick t on output port `port` with the current seq/src (a time window passes its
 * input's ticks on late by its lateness). 0 or -1 as rt_emit. */
int rt_emit_tick(OpInst *op, int port, int64_t t);
/* Emits an item with explicit seq/src (Split, Merge): read, not kept. Takes over item->t's reference. */
int rt_emit_item(OpInst *op, int port, const Item *item);
/* Records the job's first failure as "operator 'NAME': message" ("operator 'NAME' (from 'ORIGIN'):
 * message" for a replica in a parallel region, so the user finds their operator) and returns -1. */
int rt_fail(OpInst *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "sf-exec: warning: operator 'NAME': message" to the job's log at once; the job goes on. */
void rt_warn(OpInst *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "sf-exec: operator 'NAME': message" to the job's log: what the operator did that a user
 * wants to know (a restore's decision), not a warning. */
void rt_note(OpInst *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A run-time fault of an expression: names the operator, what (e.g. "set 'vwap'"), the expression
 * text and the offending tuple. Returns -1. */
int rt_eval_fail(OpInst *op, const char *what, const char *text, const Tuple *t, const char *err);
/* A source is about to wait (pacing): hands on the partial batches its thread holds, so nothing
 * it emitted waits for the next tuple. */
void rt_idle(OpInst *op);
/* How far the operator's thread has got: nothing it delivers from now on has a smaller src (at
 * least the src of the item being processed). A Split's pulses carry it, so that a fan-in below
 * the region hears how far the stream has got even when no tuple reached the Split. */
uint64_t rt_progress(const OpInst *op);
/* True once SIGTERM asked the job to drain: a source stops taking input, emits what it already
 * read (a row cut by the drain is dropped, never an error) and returns 0, so its final punctuation
 * flows and the sinks commit. Checked between reads; a wait for input looks at it every 50 ms. */
bool rt_draining(const OpInst *op);
/* True once the job is stopping (a failure anywhere, or a signal): sources must return. */
bool rt_stopping(const OpInst *op);
/* Set (never cleared) before a job's failure, a stop signal or SIGTERM is recorded: while it is
 * false, rt_stopping and rt_draining are false too (rt_halting tests it without a call). */
extern atomic_bool rt_halt_hint;
/* rt_stopping(op) || rt_draining(op), as cheap as one load while neither is true: for a source
 * that looks once per tuple. */
static inline bool rt_halting(const OpInst *op) {
  return atomic_load_explicit(&rt_halt_hint, memory_order_acquire) && (rt_stopping(op) || rt_draining(op));
}
/* Waits until fd is ready for `events` (POLLIN or POLLOUT, as for poll(2)) or the job stops, with no
 * time limit otherwise. An operator whose file may block (a pipe, a FIFO, a terminal; opened with
 * O_NONBLOCK) calls it when a read or write would block, so that a stalled peer never holds up a
 * stop. Returns 1 when fd is ready (or has an error or a hang-up for the next read or write to
 * report), 0 when the job is stopping, -1 when poll fails (errno set). */
int rt_wait_fd(const OpInst *op, int fd, short events);
/* rt_wait_fd for at most ms milliseconds (at most WAIT_SLICE_MS, 100): 2 when the time ran out
 * first (a source waiting for input calls rt_idle between such waits, so the idle hooks of its
 * thread run while it waits). */
int rt_wait_fd_for(const OpInst *op, int fd, short events, int ms);
/* Restoring keyed state at another width (the channels' key groups): whether this replica owns the
 * key whose values are vals, vals[i] being the value of input attribute slots[i] (KeyTable's
 * layout); the region's Split hashes a subset of them, and this uses the same hash. Always true outside
 * a partitioned region. A restore keeps the keys it owns and drops the others (another replica
 * restores them from the same snapshots). */
bool rt_owns_key(const OpInst *op, const Value *vals, const int *slots, int nvals);
/* A round-robin Split deals runs of this many consecutive tuples: tuple t (counted from the start
 * of the stream) goes to channel (t / SPLIT_RR_RUN) % width, and a roundrobin Merge takes them
 * back the same way (order.c), so both move a run at a time. Fixed: a checkpoint restored at any
 * width or --batch deals on from the same count. Short, because a channel's backlog grows by a
 * run: with operators as slow as the input is fast, a tuple may wait for up to a run's work. */
enum { SPLIT_RR_RUN = 16 };
/* The channel of tuple t (counted from the stream's start) of a round-robin Split of `width`
 * outputs, and how many tuples of t's run are left from t on: the one rule the Split, the Merge,
 * a restore and the benchmarks share. */
static inline int split_rr_channel(uint64_t t, int width) {
  return (int)(t / SPLIT_RR_RUN % (uint64_t)width);
}
static inline int split_rr_left(uint64_t t) {
  return SPLIT_RR_RUN - (int)(t % SPLIT_RR_RUN);
}
/* ops/split.c: a Split's snapshot (the n bytes at p) read for the counters a restore checks others
 * against: the next sequence number it assigns and the tuples it dealt round-robin. false when
 * it is not a Split's snapshot. */
bool split_snapshot_counters(const void *p, size_t n, uint64_t *next_seq, uint64_t *rr);
/* With checkpoints on: the newest checkpoint known complete (0: none yet, or checkpoints off). A
 * sink makes what it pre-committed at a barrier visible once that checkpoint is complete. */
uint64_t rt_checkpoint_complete(const OpInst *op);
/* --restore of an executor whose operators had committed (ckpt.c: its commit record is there):
 * an operator with recommit touches none of its files in open, and drops its input. */
bool rt_restore_committed(const OpInst *op);
/* Inside a snapshot callback: the number of the checkpoint being taken; inside a restore
 * callback, of the one being restored (for messages). */
uint64_t rt_checkpoint_taking(const OpInst *op);
/* The op's parameter text or NULL. */
const char *rt_param(const OpInst *op, const char *name);
/* The options the job runs with (never NULL). */
const ExecOptions *rt_options(const OpInst *op);

/* Kinds, one per file under ops/, named in kinds.def (op_beacon, op_functor, ...). */
#define KIND(id, name, impl, ...) extern const OpKindImpl impl;
#include "kinds.def"
#undef KIND
/* ops/registry.c: the implementation of kind k, NULL when it has none. */
const OpKindImpl *rt_kind_impl(OpKind k);

/* ---- signals.c: the signals that stop a job ---- */

/* Ignores SIGPIPE and SIGXFSZ (the write fails instead) and installs a handler for the stop signals
 * (SIGINT, SIGTERM, SIGHUP and the others signals.c lists; one ignored at the start stays ignored)
 * that records the first one and writes a byte to fd (non-blocking; -1: none). It runs on whichever
 * thread the signal reaches and takes no lock. One job at a time: dispositions are the process's. */
void signals_catch(int fd);
/* The first stop signal since signals_catch, 0 if none. SIGTERM is none: it drains. Lock-free. */
int signals_caught(void);
/* True once SIGTERM came since signals_catch: sources end their input (rt_draining). Lock-free. */
bool signals_draining(void);
/* Puts back the dispositions signals_catch replaced; a stop signal then does what it did before. */
void signals_release(void);
/* The signal's name ("SIGINT", "SIGRTMIN+3", else "signal N"), written into buf. */
const char *signals_name(int sig, char *buf, size_t cap);

/* ---- tempfiles.c: temporary files removed when the process ends abnormally ----
 * A kind that writes a temporary file (FileSink) tracks it while a failure must remove it: a fatal
 * signal, or an operator calling exit() or not returning after a stop, ends the process without
 * closing the operators, and then removes every tracked file (rt/fatal.c). Thread-safe. */

/* Tracks path (copied): its slot, or -1 when the table is full (the file is then not removed). */
int tempfile_track(const char *path);
/* Forgets a slot of tempfile_track (renamed, removed, or kept for a restore); -1 is ignored. */
void tempfile_untrack(int slot);
/* Unlinks every tracked file, for good. Async-signal-safe: takes no lock, allocates nothing. */
void tempfiles_unlink_all(void);

/* ---- exec.c: running a graph ---- */

struct ExecOptions {
  const char *host;        /* run only this host's operators (NULL: the whole graph in one process) */
  const char *graph_path;  /* the graph file (its directory is where Custom libraries are looked up) */
  int batch;               /* items per batch between threads and hosts (0: 256 between threads,
                              1024 between hosts, where each message costs more) */
  int queue_batches;       /* batches a queue holds before its producer waits (0: default 8) */
  bool stats;              /* print per-operator counts periodically and at the end (stderr) */
  double stats_interval;   /* seconds between periodic stats lines (0: default 2) */
  const char *stats_json;  /* write the final stats as JSON to this file */
  const char *metrics;     /* --metrics HOST:PORT: serve Prometheus metrics there (NULL: none) */
  const char *token;       /* job token for the transport (distributed runs) */
  const char *tls_ca;      /* PEM: the job's CA certificate (mutual TLS between hosts) */
  const char *tls_cert;    /* PEM: this host's certificate from that CA */
  const char *tls_key;     /* PEM: its private key */
  const char *listen;      /* --listen: where this host's executor listens (NULL: its address) */
  bool plaintext;          /* no TLS between hosts (--insecure-plaintext; loopback addresses only) */
  int connect_timeout_ms;  /* how long to wait for peers (0: default 10000) */
  bool accept_unterminated; /* a CSV input's last row may lack its line end (--accept-unterminated;
                               otherwise an error: a file cut short looks like that) */
  const char *checkpoint_dir; /* take checkpoints into this directory (NULL: none) */
  double checkpoint_interval; /* seconds between checkpoints (0: default 1) */
  bool restore;            /* continue from the latest complete checkpoint in checkpoint_dir */
  uint64_t max_state_memory; /* bytes of keyed state (Functor, Aggregate, Dedup tables) this
                              executor may hold: a key beyond it fails the job (0: no limit) */
  double stop_grace;       /* seconds operators get to return once the job stopped, after which the
                              process ends without them (0: default 5) */
  bool merge_threads;      /* every Merge gets a thread of its own (--merge-threads); otherwise a
                              region's Merge runs on its channels' threads where it can (group.c) */
  FILE *log;               /* where errors and stats go (NULL: stderr) */
};

/* --remove-checkpoints: removes what g's job left in o->checkpoint_dir (every checkpoint and the
 * request; only what sf-exec wrote there, and nothing when anything under its names is not), as
 * tools/sf-launch does once a distributed job completed. 0, or 1 after "sf-exec: error: ..." on
 * o->log. */
int ckpt_remove_job(const Graph *g, const ExecOptions *o);

/* Runs the (checked) graph, or this host's part of it, to completion. Returns 0 when everything
 * completed; otherwise prints "sf-exec: error: ..." to o->log and returns 128 + N when stop signal N
 * stopped the job (130 for SIGINT, as a shell reports), else 1. o->stats_json is checked before the
 * job runs (a file it cannot write fails the job at once); failing to write it at the end makes the
 * result 1 too. */
int exec_run(Graph *g, const ExecOptions *o);

#endif
