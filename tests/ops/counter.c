/* counter.c: Custom operators for the tests of op.h's versions and checkpoints
 * (tests/unit/test_custom.c; part of libsf_test_ops.so), written against op.h only.
 *
 * sf_count: a source emitting `n` tuples (param n, int >= 0, default 10) whose int attribute `v` is
 *   0, 1, ..., n - 1, from its SF_PUNCT_FINAL callback. Its snapshot (op.h ABI version 2) is the
 *   next v; as op.h asks of a source, it moves on only after sf_emit returned, so a snapshot taken
 *   inside sf_emit names the tuple being emitted, which a restored sf_count emits first.
 * sf_count_nosnap: the same without snapshot and restore (a source that checkpoints must refuse).
 * sf_count_v2, sf_count_v3: sf_count exported as the struct of op.h ABI version 2 (which ends after
 *   restore) and as version 3's (the struct version 4 still has), with those abi_versions: proof
 *   that sf-exec still loads and checkpoints them (tests/unit/test_custom.c).
 * sf_abi_future: claims an op.h ABI version this sf-exec does not know (5); never run.
 * Errors (the job fails, naming the operator): a malformed `n`, no int output attribute `v`, a
 * snapshot of the wrong size. */
#include "op.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct Count {
  int v;        /* output attribute v */
  int64_t n;    /* how many tuples */
  int64_t next; /* the next v */
} Count;

static int count_open(sf_op *op, void **state) {
  Count *c = calloc(1, sizeof *c);
  if (!c) return sf_error(op, "out of memory");
  c->n = 10;
  const char *text = sf_param(op, "n");
  if (text) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno || v < 0) {
      free(c); /* close is called only after an open that succeeded */
      return sf_error(op, "parameter 'n' must be an integer >= 0, got '%s'", text);
    }
    c->n = v;
  }
  if ((c->v = sf_output_attr(op, "v")) < 0) {
    free(c);
    return sf_error(op, "the output schema has no attribute 'v'");
  }
  *state = c; /* close frees it */
  return 0;
}

static int count_punctuation(sf_op *op, void *state, int port, int kind) {
  Count *c = state;
  if (kind != SF_PUNCT_FINAL) return 0;
  for (; c->next < c->n; c->next++) { /* next moves on once the tuple has left */
    sf_tuple *out = sf_tuple_new(op);
    if (!out) return -1;
    sf_set_int(out, c->v, c->next);
    if (sf_emit(op, out) < 0) return -1;
  }
  return 0;
}

static int count_snapshot(sf_op *op, void *state, sf_snapshot *out) {
  Count *c = state;
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)c->next >> (8 * i));
  return sf_snapshot_write(out, b, sizeof b);
}

static int count_restore(sf_op *op, void *state, const void *data, size_t n) {
  Count *c = state;
  if (n != 8) return sf_error(op, "a snapshot of %zu bytes, not 8", n);
  const unsigned char *b = data;
  uint64_t next = 0;
  for (int i = 0; i < 8; i++) next |= (uint64_t)b[i] << (8 * i);
  if ((int64_t)next > c->next) c->next = (int64_t)next; /* a source is never replicated: one snapshot */
  return 0;
}

static void count_close(sf_op *op, void *state) {
  free(state);
}

SF_EXPORT const struct sf_operator sf_count = {
  .abi_version = SF_OPERATOR_ABI,
  .open = count_open,
  .punctuation = count_punctuation,
  .close = count_close,
  .snapshot = count_snapshot,
  .restore = count_restore,
};

SF_EXPORT const struct sf_operator sf_count_nosnap = {
  .abi_version = SF_OPERATOR_ABI,
  .open = count_open,
  .punctuation = count_punctuation,
  .close = count_close,
};

/* struct sf_operator as op.h ABI version 2 had it */
struct sf_operator_v2 {
  int abi_version;
  int (*open)(sf_op *op, void **state);
  int (*process)(sf_op *op, void *state, int port, const sf_tuple *t);
  int (*punctuation)(sf_op *op, void *state, int port, int kind);
  void (*close)(sf_op *op, void *state);
  int (*snapshot)(sf_op *op, void *state, sf_snapshot *out);
  int (*restore)(sf_op *op, void *state, const void *data, size_t n);
};

SF_EXPORT const struct sf_operator_v2 sf_count_v2 = {
  .abi_version = 2,
  .open = count_open,
  .punctuation = count_punctuation,
  .close = count_close,
  .snapshot = count_snapshot,
  .restore = count_restore,
};

SF_EXPORT const struct sf_operator sf_count_v3 = {
  .abi_version = 3,
  .open = count_open,
  .punctuation = count_punctuation,
  .close = count_close,
  .snapshot = count_snapshot,
  .restore = count_restore,
};

SF_EXPORT const struct sf_operator sf_abi_future = {
  .abi_version = 5,
  .open = count_open,
  .punctuation = count_punctuation,
  .close = count_close,
};
