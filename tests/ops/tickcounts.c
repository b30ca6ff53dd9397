/* tickcounts.c: a Custom operator that emits on event-time ticks, for tests/event_ticks.sh (part of
 * libsf_test_ops.so), written against op.h (ABI version 3) only.
 *
 * sf_tick_counts: counts the tuples of each value of its int input attribute `key` between two
 *   ticks; at each tick (the final one included) emits one tuple per key seen since the last,
 *   `key`, `n` (how many) and `tick` (the tick's time), and forgets them. It emits them in the
 *   reverse of the order their keys first came, which is no order the runtime could keep by
 *   accident: with the model state="partitioned" keys="key" punct="consumes" (its key in its
 *   output), the ordering service (docs/design.md, "Sub-positions, ticks and time") must put them
 *   in key order, in a sequential run as in each replica, so that a region's Merge can interleave
 *   the replicas' tuples as one instance emits them. */
#include "op.h"

#include <stdlib.h>

typedef struct KeyN {
  int64_t key; /* a value of `key` seen since the last tick */
  int64_t n;   /* its tuples since then */
} KeyN;

typedef struct TickCounts {
  int in_key;             /* input attribute `key` */
  int out_key, out_n, out_tick; /* output attributes */
  KeyN *keys;             /* the keys since the last tick, in the order they first came */
  size_t nkeys, cap;
} TickCounts;

static int out_attr(sf_op *op, const char *name, int *out) {
  if ((*out = sf_output_attr(op, name)) < 0) return sf_error(op, "the output schema has no attribute '%s'", name);
  return 0;
}

static int counts_open(sf_op *op, void **state) {
  TickCounts *c = calloc(1, sizeof *c);
  if (!c) return sf_error(op, "out of memory");
  *state = c; /* close frees it, also after a failure here */
  if ((c->in_key = sf_input_attr(op, "key")) < 0) return sf_error(op, "the input schema has no attribute 'key'");
  if (out_attr(op, "key", &c->out_key) || out_attr(op, "n", &c->out_n) || out_attr(op, "tick", &c->out_tick))
    return -1;
  return 0;
}

/* A linear search: the tests keep a few dozen keys between two ticks. */
static int counts_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  TickCounts *c = state;
  int64_t key = sf_get_int(in, c->in_key);
  for (size_t i = 0; i < c->nkeys; i++)
    if (c->keys[i].key == key) {
      c->keys[i].n++;
      return 0;
    }
  if (c->nkeys == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 16;
    KeyN *keys = realloc(c->keys, cap * sizeof *keys);
    if (!keys) return sf_error(op, "out of memory");
    c->keys = keys;
    c->cap = cap;
  }
  c->keys[c->nkeys++] = (KeyN){ key, 1 };
  return 0;
}

/* Emits the counts since the last tick, last-come key first, and forgets them. */
static int counts_tick(sf_op *op, void *state, int port, int64_t t) {
  TickCounts *c = state;
  for (size_t i = c->nkeys; i-- > 0;) {
    sf_tuple *out = sf_tuple_new(op);
    if (!out) return -1;
    sf_set_int(out, c->out_key, c->keys[i].key);
    sf_set_int(out, c->out_n, c->keys[i].n);
    sf_set_int(out, c->out_tick, t);
    if (sf_emit(op, out) < 0) return -1;
  }
  c->nkeys = 0;
  return 0;
}

static void counts_close(sf_op *op, void *state) {
  TickCounts *c = state;
  if (c) free(c->keys);
  free(c);
}

SF_EXPORT const struct sf_operator sf_tick_counts = {
  .abi_version = 3,
  .open = counts_open,
  .process = counts_process,
  .close = counts_close,
  .tick = counts_tick,
};
