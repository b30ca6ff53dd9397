/* tickstamp.c: a Custom operator for the tests of event-time ticks (tests/event_ticks.sh; part of
 * libsf_test_ops.so), written against op.h (ABI version 3) only.
 *
 * sf_tickstamp: passes every tuple on with its int attribute `tick` set to the latest tick the
 *   operator received before it (-1 before the first; the final tick comes after every tuple, so
 *   no tuple shows it). Every other attribute is copied by name. Its model is state none,
 *   selectivity one: every channel of a parallel region gets every tick, so a replicated
 *   sf_tickstamp stamps each tuple as one instance would, which is what the tests check. */
#include "op.h"

#include <stdlib.h>

typedef struct Stamp {
  int tick;     /* output attribute `tick` */
  int64_t last; /* the latest tick (-1: none yet) */
} Stamp;

static int stamp_open(sf_op *op, void **state) {
  Stamp *s = malloc(sizeof *s);
  if (!s) return sf_error(op, "out of memory");
  s->last = -1;
  if ((s->tick = sf_output_attr(op, "tick")) < 0) {
    free(s);
    return sf_error(op, "the output schema has no attribute 'tick'");
  }
  *state = s;
  return 0;
}

static int stamp_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  Stamp *s = state;
  sf_tuple *out = sf_tuple_new(op);
  if (!out) return -1;
  sf_copy(out, in);
  sf_set_int(out, s->tick, s->last);
  return sf_emit(op, out);
}

static int stamp_tick(sf_op *op, void *state, int port, int64_t t) {
  Stamp *s = state;
  if (t <= s->last && s->last != -1) return sf_error(op, "tick %lld after tick %lld", (long long)t, (long long)s->last);
  s->last = t;
  return 0;
}

static void stamp_close(sf_op *op, void *state) {
  free(state);
}

SF_EXPORT const struct sf_operator sf_tickstamp = {
  .abi_version = SF_OPERATOR_ABI,
  .open = stamp_open,
  .process = stamp_process,
  .close = stamp_close,
  .tick = stamp_tick,
};
