/* keep.c: Custom operators for the tests of op.h ABI version 4's kept tuples
 * (tests/unit/test_custom.c, tests/op_failures.sh; part of libsf_test_ops.so), written against
 * op.h only.
 *
 * sf_reverse: a tumbling window of `size` tuples (param, int >= 1, default 3): keeps each input
 *   tuple (sf_tuple_retain) and, at the size-th, emits the window's tuples in reverse order
 *   (sf_emit_kept: the output schema is the input's) and releases them; at SF_PUNCT_FINAL it
 *   emits what is left of the last window the same way. Its snapshot (ABI version 2) is the
 *   number of tuples kept, then each (sf_snapshot_write_tuple); restore reads them back
 *   (sf_snapshot_read_tuple) after what it already keeps.
 *   Model: <model state="unknown" selectivity="many" final="emits"/>.
 * sf_keep_misuse: forwards every tuple (sf_copy + sf_emit) until the one whose int attribute `id`
 *   equals param `at`, on which it misuses a kept tuple as param `how` says:
 *     twice    retains it and releases the handle twice;
 *     foreign  releases the input tuple itself, never retained;
 *     emit     retains it, releases it, then emits the released handle;
 *     read     retains it, releases it, then reads `id` from it;
 *     free     retains it and gives the handle to sf_tuple_free.
 *   Each must fail the job naming the operator, never crash sf-exec.
 * Errors (the job fails, naming the operator): a malformed parameter, a snapshot not of this
 * format. */
#include "op.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Parses int parameter `name` (>= min) into *out, left alone when absent. 0 or sf_error's -1. */
static int int_param(sf_op *op, const char *name, int64_t min, int64_t *out) {
  const char *text = sf_param(op, name);
  if (!text) return 0;
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (!*text || *end || errno || v < min)
    return sf_error(op, "parameter '%s' must be an integer >= %lld, got '%s'", name, (long long)min, text);
  *out = v;
  return 0;
}

typedef struct Reverse {
  int64_t size;           /* tuples per window */
  const sf_tuple **kept;  /* the window's tuples so far */
  int64_t n;              /* how many */
} Reverse;

static int reverse_open(sf_op *op, void **state) {
  int64_t size = 3;
  if (int_param(op, "size", 1, &size) < 0) return -1;
  Reverse *r = calloc(1, sizeof *r);
  if (!r || !(r->kept = calloc((size_t)size, sizeof *r->kept))) {
    free(r);
    return sf_error(op, "out of memory");
  }
  r->size = size;
  *state = r;
  return 0;
}

/* Emits the kept tuples, last first, and releases them. */
static int reverse_flush(sf_op *op, Reverse *r) {
  int rc = 0;
  while (r->n > 0) {
    const sf_tuple *t = r->kept[--r->n];
    if (rc == 0) rc = sf_emit_kept(op, t);
    sf_tuple_release(op, t);
  }
  return rc;
}

static int reverse_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  Reverse *r = state;
  if (!(r->kept[r->n] = sf_tuple_retain(op, in))) return -1;
  return ++r->n == r->size ? reverse_flush(op, r) : 0;
}

static int reverse_punctuation(sf_op *op, void *state, int port, int kind) {
  return kind == SF_PUNCT_FINAL ? reverse_flush(op, state) : 0;
}

static void reverse_close(sf_op *op, void *state) {
  Reverse *r = state;
  for (int64_t i = 0; i < r->n; i++) sf_tuple_release(op, r->kept[i]);
  free(r->kept);
  free(r);
}

static int reverse_snapshot(sf_op *op, void *state, sf_snapshot *out) {
  Reverse *r = state;
  unsigned char n = (unsigned char)r->n; /* < size: one byte is enough for the tests */
  if (sf_snapshot_write(out, &n, 1) < 0) return -1;
  for (int64_t i = 0; i < r->n; i++)
    if (sf_snapshot_write_tuple(out, r->kept[i]) < 0) return -1;
  return 0;
}

static int reverse_restore(sf_op *op, void *state, const void *data, size_t len) {
  Reverse *r = state;
  const unsigned char *p = data, *end = p + len;
  if (len < 1 || r->n + p[0] >= r->size) return sf_error(op, "not a snapshot of window size %lld", (long long)r->size);
  int count = *p++;
  for (int i = 0; i < count; i++) {
    size_t used;
    const sf_tuple *t = sf_snapshot_read_tuple(op, p, (size_t)(end - p), &used);
    if (!t) return -1;
    r->kept[r->n++] = t;
    p += used;
  }
  return p == end ? 0 : sf_error(op, "%zu bytes after the snapshot's tuples", (size_t)(end - p));
}

SF_EXPORT const struct sf_operator sf_reverse = {
  .abi_version = SF_OPERATOR_ABI,
  .open = reverse_open,
  .process = reverse_process,
  .punctuation = reverse_punctuation,
  .close = reverse_close,
  .snapshot = reverse_snapshot,
  .restore = reverse_restore,
};

typedef struct Misuse {
  int id;     /* input attribute id */
  int64_t at; /* the id on which to misbehave */
  char how;   /* the first letter of param `how` */
} Misuse;

static int misuse_open(sf_op *op, void **state) {
  static const char *const hows[] = { "twice", "foreign", "emit", "read", "free" };
  static const char letters[] = "tferF";
  Misuse *m = calloc(1, sizeof *m);
  if (!m) return sf_error(op, "out of memory");
  const char *how = sf_param(op, "how");
  for (int i = 0; how && i < 5; i++)
    if (strcmp(how, hows[i]) == 0) m->how = letters[i];
  if (int_param(op, "at", 0, &m->at) < 0 || (m->id = sf_input_attr(op, "id")) < 0 || !m->how) {
    free(m);
    return sf_error(op, "needs an input attribute 'id', and parameter 'how': twice, foreign, emit, read or free");
  }
  *state = m;
  return 0;
}

static int misuse_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  Misuse *m = state;
  if (sf_get_int(in, m->id) == m->at) {
    const sf_tuple *k = m->how == 'f' ? in : sf_tuple_retain(op, in);
    switch (m->how) {
    case 't': sf_tuple_release(op, k); sf_tuple_release(op, k); break;
    case 'f': sf_tuple_release(op, k); break;
    case 'e': sf_tuple_release(op, k); return sf_emit_kept(op, k);
    case 'r': sf_tuple_release(op, k); (void)sf_get_int(k, m->id); break;
    case 'F': sf_tuple_free((sf_tuple *)k); break;
    }
  }
  sf_tuple *out = sf_tuple_new(op);
  if (!out) return -1;
  sf_copy(out, in);
  return sf_emit(op, out);
}

static void misuse_close(sf_op *op, void *state) {
  free(state);
}

SF_EXPORT const struct sf_operator sf_keep_misuse = {
  .abi_version = SF_OPERATOR_ABI,
  .open = misuse_open,
  .process = misuse_process,
  .close = misuse_close,
};
