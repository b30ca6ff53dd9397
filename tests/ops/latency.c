/* latency.c: Custom operators measuring latency from a source to a sink (tests/bench/latency.sh),
 * written against op.h only; part of libsf_test_ops.so.
 *
 * sf_stamp: forwards every tuple (sf_copy) with its int attribute `t` set to the time it passed,
 *   CLOCK_MONOTONIC in nanoseconds (one clock for every process of the machine, so a sink on
 *   another executor of the same machine can subtract it). Put it right after the source, with
 *   parallel="no". Model: <model state="none" selectivity="one" forwards="*"/>.
 * sf_latency: a sink recording now - t for every tuple; at the end of the stream it writes to the
 *   file of its `report` parameter one line "N P50 P99 P999 MAX", the latencies in microseconds
 *   (nearest rank), and nothing else.
 *   Its snapshot (op.h ABI version 2) is the latencies recorded so far; restore appends them.
 * Errors (the job fails, naming the operator): no int attribute `t`, no `report`, an unwritable
 * report file. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct Stamp {
  int t; /* output attribute t */
} Stamp;

static int stamp_open(sf_op *op, void **state) {
  Stamp *s = malloc(sizeof *s);
  if (!s || (s->t = sf_output_attr(op, "t")) < 0) {
    free(s);
    return sf_error(op, "the output has no attribute 't'");
  }
  *state = s;
  return 0;
}

static int stamp_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  Stamp *s = state;
  sf_tuple *out = sf_tuple_new(op);
  sf_copy(out, in);
  sf_set_int(out, s->t, now_ns());
  return sf_emit(op, out);
}

static void stamp_close(sf_op *op, void *state) {
  free(state);
}

SF_EXPORT const struct sf_operator sf_stamp = {
  .abi_version = SF_OPERATOR_ABI,
  .open = stamp_open,
  .process = stamp_process,
  .close = stamp_close,
};

typedef struct Latency {
  int t;           /* input attribute t */
  const char *report; /* the report file */
  int64_t *ns;     /* one latency per tuple */
  size_t n, cap;   /* used, allocated */
} Latency;

static int latency_open(sf_op *op, void **state) {
  Latency *l = calloc(1, sizeof *l);
  if (!l) return sf_error(op, "out of memory");
  *state = l;
  if ((l->t = sf_input_attr(op, "t")) < 0) return sf_error(op, "the input has no attribute 't'");
  if (!(l->report = sf_param(op, "report"))) return sf_error(op, "parameter 'report' is missing");
  return 0;
}

/* Room for `more` latencies. 0, or sf_error. */
static int latency_reserve(sf_op *op, Latency *l, size_t more) {
  if (l->cap - l->n >= more) return 0;
  size_t cap = l->cap ? l->cap : 65536;
  while (cap - l->n < more) cap *= 2;
  int64_t *p = realloc(l->ns, cap * sizeof *p);
  if (!p) return sf_error(op, "out of memory");
  l->ns = p;
  l->cap = cap;
  return 0;
}

static int latency_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  Latency *l = state;
  if (latency_reserve(op, l, 1) < 0) return -1;
  l->ns[l->n++] = now_ns() - sf_get_int(in, l->t);
  return 0;
}

/* The latencies so far, as int64_t in this machine's byte order (a benchmark's checkpoint is
 * restored where it was taken). */
static int latency_snapshot(sf_op *op, void *state, sf_snapshot *out) {
  Latency *l = state;
  return sf_snapshot_write(out, l->ns, l->n * sizeof *l->ns);
}

static int latency_restore(sf_op *op, void *state, const void *data, size_t n) {
  Latency *l = state;
  if (n % sizeof *l->ns) return sf_error(op, "snapshot truncated or malformed");
  size_t count = n / sizeof *l->ns;
  if (latency_reserve(op, l, count) < 0) return -1;
  if (count) memcpy(l->ns + l->n, data, n);
  l->n += count;
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The q-quantile by nearest rank, in microseconds. */
static double rank(const Latency *l, double q) {
  size_t i = (size_t)(q * (double)l->n);
  if (i >= l->n) i = l->n - 1;
  return (double)l->ns[i] / 1000.0;
}

static int latency_punctuation(sf_op *op, void *state, int port, int kind) {
  Latency *l = state;
  if (kind != SF_PUNCT_FINAL) return 0;
  FILE *f = fopen(l->report, "w");
  if (!f) return sf_error(op, "cannot write '%s'", l->report);
  if (l->n == 0) {
    fprintf(f, "0 0 0 0 0\n");
  } else {
    qsort(l->ns, l->n, sizeof *l->ns, cmp_i64);
    fprintf(f, "%zu %.0f %.0f %.0f %.0f\n", l->n, rank(l, 0.5), rank(l, 0.99), rank(l, 0.999),
            (double)l->ns[l->n - 1] / 1000.0);
  }
  return fclose(f) == 0 ? 0 : sf_error(op, "cannot write '%s'", l->report);
}

static void latency_close(sf_op *op, void *state) {
  Latency *l = state;
  if (l) free(l->ns);
  free(l);
}

SF_EXPORT const struct sf_operator sf_latency = {
  .abi_version = SF_OPERATOR_ABI,
  .open = latency_open,
  .process = latency_process,
  .punctuation = latency_punctuation,
  .close = latency_close,
  .snapshot = latency_snapshot,
  .restore = latency_restore,
};
