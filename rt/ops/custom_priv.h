/* custom_priv.h: what the files of the Custom kind share, and nothing else includes. The Custom
 * kind is four files:
 *   custom.c       the kind (op_custom): the executor's callbacks calling the library's, the model
 *                  checks, the ordering service and the checkpoint glue;
 *   custom_abi.c   the functions of op.h (every sf_* an operator library calls);
 *   custom_load.c  finding and loading the library, and the op.h ABI versions it may have;
 *   custom_priv.h  this header: an sf_op, an sf_tuple, and the calls between the three.
 * custom.c calls into the other two (custom_fail, custom_load), so linking op_custom links the
 * op.h functions too, which sf-exec exports to the libraries (rt/CMakeLists.txt). */
#ifndef SF_CUSTOM_PRIV_H
#define SF_CUSTOM_PRIV_H

#include "op.h"
#include "rt.h"

/* Which callback of the library is running: what an emitted tuple answers. */
typedef enum Handling {
  HANDLING_NOTHING, /* open, or between callbacks */
  HANDLING_TUPLE,   /* process */
  HANDLING_WINDOW,  /* punctuation(SF_PUNCT_WINDOW) */
  HANDLING_TICK,    /* tick (ABI 3) */
  HANDLING_FINAL,   /* punctuation(SF_PUNCT_FINAL) */
  HANDLING_SNAPSHOT, /* snapshot (may run inside sf_emit: a source's) */
  HANDLING_RESTORE, /* restore */
} Handling;

/* The op.h ABI versions this sf-exec loads. */
enum { ABI_OLDEST = 1 };

/* The snapshot being written: sf_snapshot_write appends to `buf` while `active`. */
struct sf_snapshot {
  sf_op *op;   /* whose */
  Buf buf;     /* the library's bytes (kept between snapshots: its allocation is reused) */
  bool active; /* the snapshot callback is running */
};

struct sf_op {
  OpInst *inst;                  /* the runtime's instance */
  void *dl;                      /* dlopen handle */
  const struct sf_operator *vt;  /* the library's callbacks (version 1's part of the struct only,
                                    unless abi >= 2) */
  int abi;                       /* the library's abi_version */
  int (*snapshot)(sf_op *, void *, sf_snapshot *);         /* ABI 2; NULL when absent or version 1 */
  int (*restore)(sf_op *, void *, const void *, size_t);   /* ABI 2; NULL when absent or version 1 */
  int (*tick)(sf_op *, void *, int, int64_t);              /* ABI 3; NULL when absent or older */
  bool tick_synced;              /* the library was told the current tick a restore gave it */
  sf_snapshot snap;              /* what snapshot writes into */
  int *key_slots;                /* input attribute slots of the model's keys (sf_owns_key) */
  int nkeys;                     /* how many (0: not state="partitioned", every key is owned) */
  /* The ordering service (docs/design.md, "Sub-positions, ticks and time"): what a keyed operator
   * emits at a punctuation (window, tick, final) is held here until the callback returns, then
   * sent on in the order of its key values (then of emission), each with its sort key, so that a
   * region's Merge interleaves its replicas' emissions as one instance's. */
  int *out_keys;                 /* output attribute slots of the model's keys (NULL: not keyed, or
                                    a key missing from the output: emitted as they come) */
  struct Held { Tuple *t; const unsigned char *key; uint32_t len; int index; } *held;
  int nheld, held_cap;           /* tuples held, and room */
  Buf keybuf;                    /* the sort key being built */
  void *state;                   /* what the library's open returned */
  bool opened;                   /* open succeeded: close must be called */
  bool failed;                   /* the job failed through this operator, or emitting failed */
  bool final_done;               /* SF_PUNCT_FINAL was delivered */
  uint64_t emitted;              /* operators without input: tuples emitted (their seq) */
  bool replica;                  /* a channel of a parallel region: it never emits on punctuation */
  bool checked;                  /* a replica, or its model is declared: its emissions are checked */
  Handling handling;             /* the callback running now */
  const Tuple *input;            /* HANDLING_TUPLE: the input tuple (for messages) */
  int emitted_now;               /* tuples emitted by the running callback */
  /* Kept tuples (ABI 4, sf_tuple_retain): a handle names a slot and the slot's generation when it
   * was given out (custom_abi.c), so that a released handle, or one this instance never gave, is
   * recognized (an error naming the operator), never followed. Freed slots are reused. */
  struct Kept {
    Tuple *t;             /* the tuple kept (a reference of its own; NULL: the slot is free) */
    const Schema *schema; /* its schema: the input's or the output's */
    uint32_t gen;         /* the slot's generation: bumped at each release */
    int next_free;        /* a free slot: the next free one (-1: none) */
  } *kept;
  int nkept, kept_cap;           /* slots made, and room */
  int kept_free;                 /* the first free slot (-1: none) */
  uint32_t kept_gen0;            /* the generation of new slots: differs from instance to instance */
};

struct sf_tuple {
  sf_op *op;            /* for error messages */
  const Schema *schema; /* the values' schema */
  Value *v;             /* values (a Tuple's, or owned when built) */
  int n;                /* how many */
  bool built;           /* made by sf_tuple_new or sf_key_new: v and its strings are malloc'd */
  bool key;             /* made by sf_key_new: of the input schema, never emitted */
  Tuple *tuple;         /* an input: the Tuple whose values v are (sf_tuple_retain keeps it) */
};
/* An sf_tuple pointer whose lowest bit is set is no address but a kept tuple's handle (an
 * sf_tuple is aligned, so no real one has it); custom_abi.c alone makes and reads them. */

/* ---- custom_abi.c ---- */

/* Fails the job through op (the first failure only is reported) with the message; returns -1. */
int custom_fail(sf_op *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The instance whose library callback this thread is running (NULL: none): what a kept tuple's
 * handle is looked up in by the sf_get_* functions, which are given no sf_op. custom.c sets it
 * around every call into the library (custom_enter, custom_leave: a fused downstream Custom
 * operator may run inside sf_emit). */
extern _Thread_local sf_op *custom_running;
static inline sf_op *custom_enter(sf_op *op) {
  sf_op *was = custom_running;
  custom_running = op;
  return was;
}
static inline void custom_leave(sf_op *was) {
  custom_running = was;
}
/* Releases every tuple op still keeps, and the table (close). */
void custom_release_kept(sf_op *op);

/* ---- custom_load.c ---- */

/* The schema of input port `port` (0 or 1) of the operator, NULL when it has no such port. */
const Schema *custom_port_schema(sf_op *op, int port);
/* Loads the library and the symbol the graph names, checks its abi_version and sets op->dl,
 * op->vt, op->abi and the callbacks of later versions it has. 0, or -1 after custom_fail. */
int custom_load(sf_op *op);
/* Unloads what custom_load loaded (nothing when it loaded nothing). */
void custom_unload(sf_op *op);

/* ---- custom.c: the model checks and the ordering service, for sf_emit ---- */

/* The selectivity the declared model promises, SEL_MANY when it promises nothing. */
Selectivity custom_promised_selectivity(const sf_op *op);
/* Checks the emission just counted in op->emitted_now against the model: 0, or fails the job
 * naming the attribute broken. */
int custom_model_may_emit(sf_op *op);
/* Whether what the running callback emits is held for the ordering service. */
bool custom_holding(const sf_op *op);
/* Holds a tuple of the values v[0..n) (copied), emitted at a punctuation, with its sort key. */
void custom_hold(sf_op *op, const Value *v, int n);

#endif
