/* op.h: the interface for writing StreamFission Custom operators in C (the only header an operator
 * author includes; plain C11, nothing else from StreamFission needed).
 *
 * Ownership in one rule: a tuple passed to process is borrowed until process returns, a tuple
 * from sf_tuple_new is yours until you pass it to sf_emit (which takes it, even when it fails) or
 * to sf_tuple_free, and a kept tuple (sf_tuple_retain, ABI version 4) stays valid until you pass
 * it to sf_tuple_release.
 *
 * A Custom operator is a shared library exporting a `const struct sf_operator` under the name given
 * in the graph, `<library path="libmyops.so" symbol="my_filter"/>`. It is loaded with
 * dlopen(RTLD_NOW | RTLD_LOCAL); the sf_* functions below are provided by sf-exec itself (they are
 * the only symbols it exports), so build the library without linking anything of StreamFission:
 *     cc -std=c11 -shared -fPIC -I<dir of op.h> -o libmyops.so myops.c
 * or, against an installed StreamFission (op.h in <prefix>/include/streamfission):
 *     cc -std=c11 -shared -fPIC $(pkg-config --cflags streamfission-op) -o libmyops.so myops.c
 * A path without '/' is looked up in the graph file's directory, then in sf-exec's
 * ../lib/streamfission, then in each directory of $SF_LIBRARY_PATH (colon-separated), then by the
 * system's dynamic loader; a path with '/' is relative to the working directory.
 *
 * A minimal operator, passing on the tuples whose int attribute "n" is even (it assumes, as the
 * graph's <model> would say, that input and output have the same schema):
 *
 *     #include "op.h"
 *     #include <stdlib.h>
 *
 *     typedef struct { int n; } Even;
 *
 *     static int even_open(sf_op *op, void **state) {
 *       Even *e = malloc(sizeof *e);
 *       if (!e || (e->n = sf_input_attr(op, "n")) < 0) {
 *         free(e);
 *         return sf_error(op, "the input has no attribute 'n'");
 *       }
 *       *state = e;
 *       return 0;
 *     }
 *
 *     static int even_process(sf_op *op, void *state, int port, const sf_tuple *in) {
 *       Even *e = state;
 *       if (sf_get_int(in, e->n) % 2) return 0;
 *       sf_tuple *out = sf_tuple_new(op);
 *       sf_copy(out, in);
 *       return sf_emit(op, out);
 *     }
 *
 *     static void even_close(sf_op *op, void *state) { free(state); }
 *
 *     SF_EXPORT const struct sf_operator my_even = {
 *       .abi_version = SF_OPERATOR_ABI,
 *       .open = even_open, .process = even_process, .close = even_close,
 *     };
 *
 * Calls and threads: open, then process for every input tuple (in stream order), punctuation for
 * window punctuation and once for the end of the input, then close (also after a failure, when
 * open succeeded). The callbacks of one operator instance are never called concurrently, but the
 * transformer may run several instances of the operator (the channels of a parallel region) in
 * different threads at once: keep all state in *state, never in globals. An operator has at most
 * one input port and at most one output port; one without an input port (a source) gets only
 * SF_PUNCT_FINAL, once the job runs, and may emit everything from there.
 *
 * Models: the graph's <model> is a promise the transformer relies on, and an instance running as a
 * channel of a parallel region is checked against it: under selectivity="one" it must emit exactly
 * one tuple per process call, under "atmostone" at most one, and it must never emit from
 * punctuation (an operator that does declares punct="consumes" or final="emits", and is kept
 * serial). Breaking one fails the job with a message naming the operator and the attribute.
 *
 * Errors: a callback returning non-zero, sf_error, or a misuse of the functions below (a wrong
 * attribute index or type) fails the job with a message naming the operator; sf_emit then returns
 * -1, and the callback should return at once.
 *
 * Checkpoints (ABI version 2): with checkpoints on, the job saves a consistent snapshot of every
 * operator now and then, and a job restarted from one continues as if it had never stopped: no
 * tuple lost, none repeated. An operator keeping state from one tuple to the next saves and
 * restores it with two callbacks:
 *   - snapshot(op, state, out) writes the state as bytes of the operator's own format, in one or
 *     more sf_snapshot_write calls (appended in order); sf-exec stores them as they are. It is
 *     called between two other callbacks when a checkpoint barrier reaches the operator: after
 *     process for every tuple that came before the barrier, and before process for any tuple after
 *     it. It reads the state and changes nothing; it must not emit. What the operator emitted
 *     before is not part of it (it has left the operator).
 *   - restore(op, state, data, n) reads back data[0..n), the bytes of one snapshot (valid during
 *     the call only: copy what you keep). It is called after open and before any tuple or
 *     punctuation, and not at all when the job starts afresh. Without a change of width it is
 *     called once, with the snapshot of the same instance. When the job restarts with a parallel
 *     region of another width, every instance of the operator is given the snapshots of all the old
 *     instances, one call each, in no particular order: restore must merge what it reads into what
 *     earlier calls restored, never replace it. A keyed operator (<model state="partitioned">)
 *     keeps only the keys its instance owns (sf_owns_key) and drops the others, which another
 *     instance restores from the same snapshots.
 * An operator whose <model> says state="partitioned" or "unknown" (or that has no <model>: its
 * state is unknown) must have both callbacks to run with checkpoints: sf-exec refuses to start the
 * job otherwise, naming it. One with state="none" may leave them NULL (it has nothing to save).
 * A source (no input port) always needs both: its snapshot holds its position in its input. A
 * source's snapshot is taken inside sf_emit, called from its SF_PUNCT_FINAL callback, just before
 * the tuple given to sf_emit leaves: it must describe the state as if that tuple had not been
 * produced yet, so that a restored source emits that tuple first. Advance the position after
 * sf_emit returns, never before it. A restored source then gets SF_PUNCT_FINAL as usual and
 * carries on from the restored position.
 * A version-1 operator (abi_version 1, whose struct ends after close) still loads: sf-exec never
 * reads snapshot or restore from it, so it runs as a version-2 operator leaving them NULL; and a
 * version-2 one runs as a version-3 operator without a tick callback. Version 4 adds functions,
 * no callbacks (the schemas' attribute types, kept tuples, sf_copy_attrs): a version-3 operator
 * is a version-4 one that calls none of them. */
#ifndef SF_OP_H
#define SF_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this interface. This sf-exec loads operators of versions 1 (no checkpoint
 * callbacks), 2 (no tick callback), 3 and 4 (the functions marked ABI version 4), and refuses any
 * other abi_version. */
#define SF_OPERATOR_ABI 4

/* The final tick (+infinity), passed to sf_operator.tick before SF_PUNCT_FINAL. */
#define SF_TICK_FINAL INT64_MAX

/* Kinds of punctuation passed to sf_operator.punctuation. */
#define SF_PUNCT_WINDOW 1 /* a window ended upstream; forwarded downstream after the callback */
#define SF_PUNCT_FINAL 2  /* every input ended: emit what is left; port is -1 */

/* Marks the exported sf_operator visible even when building with -fvisibility=hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define SF_EXPORT __attribute__((visibility("default")))
#else
#define SF_EXPORT
#endif

typedef struct sf_op sf_op;       /* one running instance of the operator (opaque) */
typedef struct sf_tuple sf_tuple; /* one tuple: an input, or an output being built (opaque) */
typedef struct sf_snapshot sf_snapshot; /* the snapshot being written (opaque; ABI version 2) */

/* The type of an attribute (sf_attr_type; ABI version 4). */
typedef enum sf_type { SF_INT = 1, SF_DOUBLE = 2, SF_STRING = 3, SF_BOOL = 4 } sf_type;
/* Which schema sf_attr_count, sf_attr_name and sf_attr_type describe (ABI version 4). */
#define SF_IN 0  /* the input's (of the first input port) */
#define SF_OUT 1 /* the output's */
#define SF_IN2 2 /* ABI version 4: the second input port's (an operator with two input ports) */

/* The operator's callbacks. Any of them may be NULL (nothing to do). Those returning int return
 * 0 on success, anything else to fail the job (preferably the -1 of sf_error, which says why). */
struct sf_operator {
  int abi_version;                                      /* SF_OPERATOR_ABI */
  int (*open)(sf_op *op, void **state);                 /* set *state (starts NULL) */
  int (*process)(sf_op *op, void *state, int port, const sf_tuple *t); /* one input tuple */
  int (*punctuation)(sf_op *op, void *state, int port, int kind);      /* SF_PUNCT_* */
  void (*close)(sf_op *op, void *state);                /* free the state */
  /* ABI version 2 (appended: a version-1 struct ends above, and is never read past close).
   * Checkpoints, see the top of this file: snapshot writes the state with sf_snapshot_write;
   * restore merges the state one snapshot wrote, data[0..n), into *state. */
  int (*snapshot)(sf_op *op, void *state, sf_snapshot *out);
  int (*restore)(sf_op *op, void *state, const void *data, size_t n);
  /* ABI version 3 (appended: a version-2 struct ends above). Event time: a tick t reached the
   * operator, after every tuple before it and before every tuple after it (the language
   * reference, "Event time"); it goes on downstream after the callback. t rises from call to
   * call; SF_TICK_FINAL comes once, before SF_PUNCT_FINAL. Emitting from it is emitting on
   * punctuation: the model must declare punct="consumes". A job restored from a checkpoint
   * calls it once, before anything else reaches the operator, with the tick the operator had at
   * the checkpoint (an operator that keeps only the latest tick need not snapshot it). */
  int (*tick)(sf_op *op, void *state, int port, int64_t t);
};

/* ---- the operator ---- */

/* The text of the graph's <param name="NAME"> of this operator, or NULL when absent. Valid until
 * close returns. */
const char *sf_param(sf_op *op, const char *name);
/* The index of attribute `name` in the input schema, or -1 when there is none (or no input). */
int sf_input_attr(sf_op *op, const char *name);
/* The index of attribute `name` in the output schema, or -1 when there is none (or no output). */
int sf_output_attr(sf_op *op, const char *name);
/* ABI version 4: the schemas. How many attributes the input (side SF_IN), the second input (SF_IN2)
 * or the output (SF_OUT) schema has, 0 when the operator has no such port; the name of its attribute `attr` (valid until close
 * returns), and its type. Naming or typing an index out of range, or of a side without a port,
 * fails the job (NULL, 0). */
int sf_attr_count(sf_op *op, int side);
const char *sf_attr_name(sf_op *op, int side, int attr);
sf_type sf_attr_type(sf_op *op, int side, int attr);
/* Fails the job with the message (printf-style; lowercase, no final period, names in quotes),
 * which sf-exec prints after the operator's name. Returns -1. */
int sf_error(sf_op *op, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- reading attributes (of an input tuple or of one being built) ---- */

/* The value of attribute `attr`, which must have the type asked for: a wrong index or type fails
 * the job and returns 0, 0.0, false or "" (length 0). */
int64_t sf_get_int(const sf_tuple *t, int attr);
double sf_get_double(const sf_tuple *t, int attr);
bool sf_get_bool(const sf_tuple *t, int attr);
/* The bytes of a string attribute and, when len is not NULL, their number in *len. They live as
 * long as the tuple and are NUL-terminated only in tuples built with sf_set_string: use *len. */
const char *sf_get_string(const sf_tuple *t, int attr, size_t *len);

/* ---- building and emitting output tuples ---- */

/* A new tuple of the output schema, every attribute 0, 0.0, false or "". NULL (and the job fails)
 * when the operator has no output port. */
sf_tuple *sf_tuple_new(sf_op *op);
/* Sets attribute `attr` of a tuple from sf_tuple_new (a wrong index or type fails the job). */
void sf_set_int(sf_tuple *t, int attr, int64_t v);
void sf_set_double(sf_tuple *t, int attr, double v);
void sf_set_bool(sf_tuple *t, int attr, bool v);
void sf_set_string(sf_tuple *t, int attr, const char *s, size_t len); /* copies s[0..len) */
/* Copies into t every attribute of `from` whose name and type t's schema also has. */
void sf_copy(sf_tuple *t, const sf_tuple *from);
/* ABI version 4: copies attribute from_attrs[i] of `from` (an input, a kept tuple or one being
 * built) into attribute to_attrs[i] of t (from sf_tuple_new), for i in [0, n), strings copied.
 * Each pair must have one type; every pair is checked before anything is copied. 0, or -1 when
 * the job fails (an index out of range, types that differ, t not from sf_tuple_new). */
int sf_copy_attrs(sf_op *op, sf_tuple *t, const sf_tuple *from, const int *from_attrs, const int *to_attrs, int n);
/* Frees a tuple from sf_tuple_new that will not be emitted. NULL is ignored. */
void sf_tuple_free(sf_tuple *t);
/* Emits t on the output, after every tuple emitted before it, and frees it. Returns 0, or -1 when
 * the job is failing (return at once). */
int sf_emit(sf_op *op, sf_tuple *t);
/* Emits window punctuation on the output (operators whose <model punct="generates">). 0 or -1. */
int sf_emit_window(sf_op *op);

/* ---- keeping tuples (ABI version 4) ---- */

/* Keeps t beyond the callback: a handle that reads as a tuple (sf_get_*, sf_copy, sf_copy_attrs,
 * sf_owns_key, sf_snapshot_write_tuple) and stays valid until sf_tuple_release, whatever comes
 * in between. t is an input tuple (kept without copying its values), a kept tuple (one more handle
 * on the same values: each is released on its own), or a tuple from sf_tuple_new or sf_key_new
 * (its values copied; t stays yours). A kept tuple cannot be set. NULL (and the job fails) when t
 * is NULL or a released handle. Use a handle only in this instance's callbacks. */
const sf_tuple *sf_tuple_retain(sf_op *op, const sf_tuple *t);
/* Ends a handle of sf_tuple_retain (NULL is ignored). Releasing one twice, or a pointer that is not
 * a handle of this instance's, fails the job, as does any later use of a released handle. What is
 * still kept when close returns is released then. */
void sf_tuple_release(sf_op *op, const sf_tuple *kept);
/* Emits a kept tuple on the output, as sf_emit would a copy of it, without copying its values;
 * the handle stays valid (release it when done). Its schema must have the output schema's
 * attributes (names and types, in order): an input tuple kept by an operator whose output has
 * the input's schema, or a tuple from sf_tuple_new. 0, or -1 when the job is failing. */
int sf_emit_kept(sf_op *op, const sf_tuple *kept);

/* ---- checkpoints (ABI version 2) ---- */

/* Appends data[0..n) to the snapshot being written; only inside the snapshot callback, with the
 * `out` it was given. 0, or -1 when the job is failing (return at once). */
int sf_snapshot_write(sf_snapshot *out, const void *data, size_t n);
/* ABI version 4: kept tuples in a snapshot. sf-exec does not save what an operator keeps: a kept
 * tuple that is part of the state at a checkpoint is written by the snapshot callback, with
 * sf_snapshot_write_tuple (appending the tuple t, a kept one or one being built, of the input or
 * the output schema; 0 or -1 as sf_snapshot_write), and read back in restore with
 * sf_snapshot_read_tuple: it reads the tuple that starts at data[0..n), returns a new handle
 * (release it as one from sf_tuple_retain) and sets *used (unless NULL) to the bytes it took;
 * NULL (and the job fails: an older checkpoint is tried) when the bytes are not such a tuple. */
int sf_snapshot_write_tuple(sf_snapshot *out, const sf_tuple *t);
const sf_tuple *sf_snapshot_read_tuple(sf_op *op, const void *data, size_t n, size_t *used);
/* A new tuple of the input schema, every attribute 0, 0.0, false or "", on which to set the key
 * attributes (sf_set_*, or sf_copy from an input) and ask sf_owns_key. It is never emitted: free
 * it with sf_tuple_free (it may be set and asked again first). NULL (and the job fails) when the
 * operator has no input port. */
sf_tuple *sf_key_new(sf_op *op);
/* Whether this instance owns the key of t (an input tuple, or one from sf_key_new): the values of
 * the attributes its <model keys="..."> names, hashed as the parallel region's split hashes them.
 * True for an operator whose model is not state="partitioned", and for one not running as a
 * channel of a parallel region. Meant for restore: every input tuple goes to the instance that
 * owns its key, so in process it is always true. */
bool sf_owns_key(sf_op *op, const sf_tuple *t);

#ifdef __cplusplus
}
#endif

#endif
