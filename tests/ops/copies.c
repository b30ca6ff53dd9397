/* copies.c: a Custom operator for the executor's tests (libsf_test_ops.so) that can break the
 * selectivity its model declares, written against op.h only.
 *
 * sf_copies: forwards every input tuple once (sf_copy + sf_emit), except those whose int attribute
 *   `v` equals the parameter `at`: those are emitted `copies` times (0 drops them).
 *   A graph declares <model state="none" selectivity="one" forwards="*" punct="none"/> (or keyed,
 *   or atmostone) to lie about it: the runtime must catch a replica that emits 2 tuples for one
 *   input under "one" or "atmostone", or none under "one", and name the operator.
 *   Params:
 *     at      int: the value of `v` whose tuples are copied (default: none is).
 *     copies  int >= 0 (default 2): how many times those tuples are emitted.
 *   Errors (the job fails, naming the operator): a malformed parameter, no int attribute `v`.
 *
 * It is an operator of op.h ABI version 1, exported as the struct of that version (which ends
 * after close; version 2 appended snapshot and restore): proof that sf-exec still loads version 1
 * without reading past it (tests/unit/test_custom.c; an ASan build would catch the read). */
#include "op.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct Copies {
  int v;          /* index of input attribute v */
  bool has_at;    /* parameter `at` given */
  int64_t at;     /* the value of v that is copied */
  int64_t copies; /* how many times */
} Copies;

/* Parses int parameter `name` into *out (left alone when absent); *given says whether it was. */
static int int_param(sf_op *op, const char *name, int64_t min, int64_t *out, bool *given) {
  const char *text = sf_param(op, name);
  if (given) *given = text != NULL;
  if (!text) return 0;
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (!*text || *end || errno || v < min)
    return sf_error(op, "parameter '%s' must be an integer >= %lld, got '%s'", name, (long long)min, text);
  *out = v;
  return 0;
}

static int copies_open(sf_op *op, void **state) {
  Copies *c = calloc(1, sizeof *c);
  if (!c) return sf_error(op, "out of memory");
  *state = c; /* close frees it, also after a failure here */
  c->copies = 2;
  if (int_param(op, "at", INT64_MIN, &c->at, &c->has_at) || int_param(op, "copies", 0, &c->copies, NULL))
    return -1;
  c->v = sf_input_attr(op, "v");
  if (c->v < 0) return sf_error(op, "the input schema has no attribute 'v'");
  return 0;
}

static int copies_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  Copies *c = state;
  int64_t n = c->has_at && sf_get_int(in, c->v) == c->at ? c->copies : 1;
  for (int64_t i = 0; i < n; i++) {
    sf_tuple *out = sf_tuple_new(op);
    if (!out) return -1;
    sf_copy(out, in);
    if (sf_emit(op, out) < 0) return -1;
  }
  return 0;
}

static void copies_close(sf_op *op, void *state) {
  free(state);
}

/* struct sf_operator as op.h ABI version 1 had it */
struct sf_operator_v1 {
  int abi_version;
  int (*open)(sf_op *op, void **state);
  int (*process)(sf_op *op, void *state, int port, const sf_tuple *t);
  int (*punctuation)(sf_op *op, void *state, int port, int kind);
  void (*close)(sf_op *op, void *state);
};

SF_EXPORT const struct sf_operator_v1 sf_copies = {
  .abi_version = 1,
  .open = copies_open,
  .process = copies_process,
  .close = copies_close,
};
