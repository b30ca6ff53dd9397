/* keyed.h: helpers shared by the operator kinds that keep state per key or build new tuples
 * (Functor, FlatMap, Aggregate, Dedup): a hash table from partitionBy values to per-key data (and
 * its checkpoint snapshots), values that own their string bytes, and the plan that builds an
 * output tuple from `set`s and attributes forwarded by name.
 *
 * Ownership: a KeyTable owns copies of its key values and the per-key data blocks, all of which
 * live until keytable_release; what the data blocks point to (held strings, buffers) is the
 * kind's to free, by walking the table with keytable_each before releasing it. */
#ifndef SF_KEYED_H
#define SF_KEYED_H

#include "rt.h"

/* ---- KeyTable: per-key data, keyed by the values of the partitionBy attributes ---- */

typedef struct KeyEntry KeyEntry;

/* A bucket: an entry and its hash, so that a probe past other keys does not read their entries. */
typedef struct KeyBucket {
  uint64_t hash;
  KeyEntry *e; /* NULL: empty */
} KeyBucket;

typedef struct KeyTable {
  int nkeys;          /* key attributes (0: the whole stream is one key) */
  int *slots;         /* input attribute index of each key attribute */
  size_t data_size;   /* bytes of each key's data block (zeroed when the key is created) */
  KeyBucket *buckets; /* open addressing with linear probing */
  size_t cap;         /* buckets allocated (a power of two, 0 before the first key) */
  size_t count;       /* keys held */
  Arena *arena;       /* key values with their strings, entries and data blocks */
  OpInst *op;         /* whose (for the messages of a failure) */
  uint64_t limit;     /* --max-state-memory: bytes of keyed state the executor may hold (0: no limit) */
  size_t bytes;       /* bytes this table counts in the executor's keyed state (keyed.c) */
} KeyTable;

/* Prepares kt for op's `partitionBy` parameter (absent: one key for the whole stream), resolving
 * the attribute names against op->in_schema; every key gets data_size zeroed bytes. Returns 0, or
 * rt_fail when an attribute is unknown (the checker prevents that). Allocates nothing per key yet. */
int keytable_init(KeyTable *kt, OpInst *op, size_t data_size);
/* The data block of t's key; creates the key (copying its values, strings included) the first
 * time, setting *created. Never references t afterwards. NULL after rt_fail when the key would
 * take the executor's keyed state past --max-state-memory, or memory ran out ("out of memory
 * (...)"): the table is as it was. */
void *keytable_find(KeyTable *kt, const Tuple *t, bool *created);
/* The tuples a keyed kind's process_run looks up at a time. */
enum { KEYED_RUN = 256 };
/* A run's lookups (process_run of Dedup, Aggregate): the hash of each key of items[0..n) into
 * hash[], each home bucket prefetched, so that the lookups that follow (keytable_find_hashed, in
 * the items' order) wait for memory less. */
void keytable_hash_run(const KeyTable *kt, const Item *items, int n, uint64_t *hash);
/* Prefetches the entry and the data block of the key of this hash when its home bucket holds it
 * (a hint). */
void keytable_prefetch_data(const KeyTable *kt, uint64_t hash);
/* The data block in the home bucket of this hash when that bucket holds a key of this hash (a
 * hint for prefetching: the key's values are not compared), else NULL. */
void *keytable_peek(const KeyTable *kt, uint64_t hash);
/* keytable_find of t, whose key's hash keytable_hash_run gave. */
void *keytable_find_hashed(KeyTable *kt, const Tuple *t, uint64_t hash, bool *created);
/* Whether the next keytable_find may fail: with --max-state-memory any new key may, without only
 * one that makes the buckets grow. A run's process_run emits what it has before such a lookup, so
 * a failure comes after the outputs before it, as one tuple at a time. */
static inline bool keytable_may_fail(const KeyTable *kt) {
  return kt->limit || (kt->count + 1) * 4 > kt->cap * 3;
}
/* Memory a kind's data blocks point to (an Aggregate's time windows, count_distinct's values),
 * counted with the table's bytes against --max-state-memory: keytable_charge counts `more` bytes
 * and returns true, or false after rt_fail when that passes the limit (nothing counted then);
 * keytable_uncharge gives back bytes counted before. */
bool keytable_charge(KeyTable *kt, size_t more);
void keytable_uncharge(KeyTable *kt, size_t less);
/* Calls fn(data, ctx) for every key's data block, in no particular order. */
void keytable_each(KeyTable *kt, void (*fn)(void *data, void *ctx), void *ctx);
/* Frees everything the table allocated (not what the data blocks point to); kt is empty again.
 * Safe on a zeroed or already released table. */
void keytable_release(KeyTable *kt);

/* ---- snapshots of a KeyTable (checkpoints: rt.h's OpKindImpl.snapshot and restore) ----
 *
 * The layout: the number of key attributes and the number of keys (u64 each), then per key its
 * values (snap_value, in partitionBy's order) and its data as one byte string (snap_bytes' layout:
 * a u64 length, then what KeyPutFn wrote). Length-prefixed data lets a restore skip a key another
 * replica owns without understanding it, and check that a key's reader read exactly its bytes. */

/* Appends what key data block `data` holds to out with the snap_* functions. */
typedef void KeyPutFn(const void *data, Buf *out, void *ctx);
/* Reads back what KeyPutFn wrote into `data`, a new key's zeroed block (it must stay a block the
 * kind's close can release, even when the read stops half-way). A malformed or short input is
 * left to in->bad (the restore then fails with "snapshot truncated or malformed"); returns 0, or
 * -1 after its own rt_fail. */
typedef int KeyGetFn(void *data, SnapIn *in, void *ctx);

/* Appends kt with each key's data written by put (NULL: the keys only, e.g. Dedup's). */
void keytable_snapshot(const KeyTable *kt, Buf *out, KeyPutFn *put, void *ctx);
/* Reads what keytable_snapshot wrote, ADDING its keys to kt: a restore may be fed the snapshots of
 * several old replicas one after another (a region restored at another width), so kt need not be
 * empty. Only the keys this replica owns (rt_owns_key of op with the key's values and kt->slots)
 * are kept, their data read by get (NULL: none); the others are skipped. A key's values must have
 * the types of their input attributes, and a key kt already holds is an error (two replicas never
 * own one key: the snapshots do not belong together). 0, or -1 after rt_fail. */
int keytable_restore(KeyTable *kt, OpInst *op, SnapIn *in, KeyGetFn *get, void *ctx);
/* The end of a restore: 0 when in was read exactly to its end without a bad read, else rt_fail
 * ("snapshot truncated or malformed", or bytes left over). */
int keyed_restore_end(OpInst *op, const SnapIn *in);

/* ---- held values: a Value owning its string bytes in a malloc'd buffer of *cap bytes ---- */

/* Stores a copy of src in *dst, reusing dst's buffer (which src may point into). A Value and its
 * cap start zeroed; non-string values leave the buffer alone. */
void held_store(Value *dst, size_t *cap, const Value *src);
/* Frees dst's buffer; *dst and *cap are zeroed. */
void held_release(Value *dst, size_t *cap);

/* ---- OutPlan: how an output tuple is built ---- */

typedef struct OutPlan {
  int n;             /* output attributes */
  const Set **set;   /* per output attribute: the set that computes it, NULL when forwarded */
  const Code **code; /* per output attribute with a set: its compiled expression */
  int *from;         /* per output attribute without a set: the input attribute with its name */
  Value *vals;       /* the output values being built (reused for every tuple) */
  bool identity;     /* no sets and output schema = input schema: the input tuple is the output */
  /* A Functor's sets see the state variables written before them updated, the later ones as they
   * were before the tuple's updates (Set.states_before; `set` and `state` keep their written order,
   * which is evaluation order). */
  int nstates;          /* state variables of the operator */
  int *seen;            /* per output attribute with a set: the variables it sees updated */
  bool staged;          /* some set sees fewer than all: the caller must set `before` */
  const Value *before;  /* the caller's, per tuple: the variables before its updates */
  Value *view;          /* scratch: the variables one set sees (nstates) */
} OutPlan;

/* Plans op's output (op->out_schema) from op->op->sets (compiled) and forwarding by name from
 * op->in_schema, allocating in a. Returns 0, or rt_fail when an output attribute is neither set nor in the input
 * (the checker prevents that). */
int outplan_init(OutPlan *p, OpInst *op, Arena *a);
/* Evaluates every set with env (env->attrs should be t's values, env->states the updated state
 * variables; a set written before some of them sees those from p->before) and forwards the other
 * attributes from t. Returns a new tuple (strings copied, refs 1), or NULL after rt_eval_fail naming the set
 * ("set 'x'"), t and the message. t stays the caller's. */
Tuple *outplan_build(OutPlan *p, OpInst *op, const EvalEnv *env, const Tuple *t);
/* The one output of input t: t itself when the plan is the identity, else outplan_build's tuple.
 * Emits it on port 0 and releases t either way. 0, or -1 after a failure. */
int outplan_emit(OutPlan *p, OpInst *op, const EvalEnv *env, Tuple *t);

/* ---- LetPlan: an operator's <let>s (Op.lets), evaluated per input tuple in document order ----
 * Any kind that takes lets: it evaluates lets [from, to) where they stand among its other
 * expressions (a Functor between its state updates, by Let.states_before; the others all at once,
 * before the rest), with env->lets pointing at vals, so that each let and whatever comes after it
 * sees the ones before. A let's string lives as long as what it was made from (env->scratch, the
 * tuple): one input tuple's processing. */
typedef struct LetPlan {
  int n;           /* lets */
  const Let *lets; /* the operator's */
  Code **code;     /* each compiled */
  Value *vals;     /* the values of the tuple being processed */
} LetPlan;

/* Compiles op's lets into a (none: n 0). */
void letplan_init(LetPlan *p, const Op *op, Arena *a);
/* Sets env->lets to p->vals and evaluates lets [from, to) with env. 0, or -1 after rt_eval_fail
 * naming the let ("let 'x'"), t and the message. */
int letplan_eval(LetPlan *p, OpInst *op, EvalEnv *env, int from, int to, const Tuple *t);

/* ---- errors ---- */

/* Reports the fault of c on env (which code_eval just returned -1 for) like keyed_eval does;
 * returns -1. Cold: called only when an evaluation failed. */
int keyed_eval_fail(OpInst *op, const Code *c, const EvalEnv *env, const char *what, const char *name,
                    const char *text, const Tuple *t) __attribute__((cold, noinline));

/* The fault of a run (process_run of Filter, Functor) at item *bad, which code_eval_run found: the
 * items[0..nout) made before it go on first as one run (rt_emit_run); then, unless that failed,
 * the fault of c on bad's tuple is reported as keyed_eval reports it, with op->cur_* set to bad's.
 * Releases the tuples of bad[0..left), the items not taken. Returns -1. */
int keyed_run_fail(OpInst *op, Item *items, int nout, Item *bad, int left, const Code *c, const char *what,
                   const char *name, const char *text) __attribute__((cold, noinline));
/* Releases the tuples of items[0..n). */
void keyed_release_items(Item *items, int n);

/* Evaluates c like code_eval; on a fault reports it with rt_eval_fail(op, what, text, t, message),
 * where what is "WHAT 'NAME'" ("set 'vwap'", "update of state 'n'") or just WHAT when name is NULL
 * ("where", "count"), and returns -1. A NULL text stands for the text of the parameter named WHAT,
 * looked up only on a fault. The per-tuple path carries no message buffer: a fault's message is
 * built by evaluating c again in keyed_eval_fail (code_eval is a pure function of c and env). */
static inline int keyed_eval(OpInst *op, const Code *c, const EvalEnv *env, Value *out, const char *what,
                             const char *name, const char *text, const Tuple *t) {
  if (__builtin_expect(code_eval(c, env, out, NULL, 0) == 0, 1)) return 0;
  return keyed_eval_fail(op, c, env, what, name, text, t);
}

#endif
