/* jitter.c: Custom operators for the executor's tests (libsf_test_ops.so), written against op.h only.
 *
 * sf_jitter: forwards every input tuple unchanged (sf_copy + sf_emit), after sleeping a
 *   pseudo-random number of microseconds, so the channels of a parallel region run unevenly and
 *   their outputs reach the Merge in ever different interleavings.
 *   Model: <model state="none" selectivity="one" forwards="*" punct="none"/>; the output schema is
 *   the input schema (or one whose attributes the input also has: sf_copy copies by name).
 *   Params:
 *     seed       int (default 0): picks the sleep pattern.
 *     maxus      int >= 0 (default 200): longest sleep per tuple, in microseconds.
 *     on         names of int input attributes the sleep is derived from (default "v"), space or
 *                comma separated. The sleep of a tuple is a fixed mix of the seed and these values,
 *                uniform in [0, maxus]: deterministic per tuple, uneven across channels.
 *     slow_last  optional list "V[:US] V[:US] ..." (space or comma separated): a tuple whose int
 *                attribute `v` equals V sleeps US microseconds more (default: slow_us). Giving the
 *                last tuple of a channel a long extra sleep makes that channel deliver its final
 *                punctuation last; several entries with growing US steer the whole order.
 *     slow_us    int >= 0 (default 30000): the extra sleep of slow_last entries without ":US".
 *   Errors (the job fails, naming the operator): a malformed parameter, a missing or non-int
 *   attribute. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "op.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_ON = 8 };

typedef struct SlowEntry {
  int64_t v;  /* the value of attribute v */
  int64_t us; /* extra sleep */
} SlowEntry;

typedef struct Jitter {
  uint64_t seed;
  int64_t maxus;
  int on[MAX_ON]; /* attribute indexes hashed */
  int non;
  int v;          /* index of attribute v (slow_last), -1 when unused */
  SlowEntry *slow;
  size_t nslow;
} Jitter;

static uint64_t mix(uint64_t x) { /* splitmix64 finalizer */
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

/* Parses the whole of text[0..n) as a decimal int64; 0 or -1. */
static int parse_int(const char *text, size_t n, int64_t *out) {
  char buf[32];
  if (n == 0 || n >= sizeof buf) return -1;
  memcpy(buf, text, n);
  buf[n] = 0;
  char *end;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (*end || errno) return -1;
  *out = v;
  return 0;
}

static int int_param(sf_op *op, const char *name, int64_t min, int64_t *out) {
  const char *text = sf_param(op, name);
  if (!text) return 0;
  int64_t v;
  if (parse_int(text, strlen(text), &v) < 0 || v < min)
    return sf_error(op, "parameter '%s' must be an integer >= %lld, got '%s'", name, (long long)min, text);
  *out = v;
  return 0;
}

static bool is_sep(char c) {
  return c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r';
}

/* The index of int input attribute name[0..n), or sf_error. */
static int int_attr(sf_op *op, const char *name, size_t n, int *out) {
  char buf[256];
  if (n >= sizeof buf) return sf_error(op, "attribute name too long");
  memcpy(buf, name, n);
  buf[n] = 0;
  *out = sf_input_attr(op, buf);
  if (*out < 0) return sf_error(op, "the input schema has no attribute '%s'", buf);
  return 0;
}

static int jitter_open(sf_op *op, void **state) {
  Jitter *j = calloc(1, sizeof *j);
  if (!j) return sf_error(op, "out of memory");
  *state = j; /* close frees it, also after a failure here */
  j->maxus = 200;
  j->v = -1;
  int64_t seed = 0, slow_us = 30000;
  if (int_param(op, "seed", INT64_MIN, &seed) || int_param(op, "maxus", 0, &j->maxus) ||
      int_param(op, "slow_us", 0, &slow_us))
    return -1;
  j->seed = (uint64_t)seed;
  const char *on = sf_param(op, "on");
  if (!on) on = "v";
  for (const char *p = on; *p;) {
    while (is_sep(*p)) p++;
    if (!*p) break;
    size_t n = 0;
    while (p[n] && !is_sep(p[n])) n++;
    if (j->non == MAX_ON) return sf_error(op, "parameter 'on' names more than %d attributes", MAX_ON);
    if (int_attr(op, p, n, &j->on[j->non++]) < 0) return -1;
    p += n;
  }
  const char *slow = sf_param(op, "slow_last");
  if (slow) {
    if (int_attr(op, "v", 1, &j->v) < 0) return -1;
    size_t cap = strlen(slow) / 2 + 1;
    j->slow = calloc(cap, sizeof *j->slow);
    if (!j->slow) return sf_error(op, "out of memory");
    for (const char *p = slow; *p;) {
      while (is_sep(*p)) p++;
      if (!*p) break;
      size_t n = 0;
      while (p[n] && !is_sep(p[n])) n++;
      const char *colon = memchr(p, ':', n);
      SlowEntry *e = &j->slow[j->nslow++];
      e->us = slow_us;
      if (parse_int(p, colon ? (size_t)(colon - p) : n, &e->v) < 0 ||
          (colon && (parse_int(colon + 1, n - (size_t)(colon + 1 - p), &e->us) < 0 || e->us < 0)))
        return sf_error(op, "parameter 'slow_last' must be a list of VALUE or VALUE:MICROSECONDS, got '%s'", slow);
      p += n;
    }
  }
  return 0;
}

static void sleep_us(int64_t us) {
  if (us <= 0) return;
  struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000L };
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static int jitter_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  Jitter *j = state;
  uint64_t h = mix(j->seed);
  for (int i = 0; i < j->non; i++) h = mix(h ^ (uint64_t)sf_get_int(in, j->on[i]));
  int64_t us = j->maxus > 0 ? (int64_t)(h % (uint64_t)(j->maxus + 1)) : 0;
  if (j->v >= 0) {
    int64_t v = sf_get_int(in, j->v);
    for (size_t i = 0; i < j->nslow; i++)
      if (j->slow[i].v == v) us += j->slow[i].us;
  }
  sleep_us(us);
  sf_tuple *out = sf_tuple_new(op);
  if (!out) return -1;
  sf_copy(out, in);
  return sf_emit(op, out);
}

static void jitter_close(sf_op *op, void *state) {
  Jitter *j = state;
  if (!j) return;
  free(j->slow);
  free(j);
}

SF_EXPORT const struct sf_operator sf_jitter = {
  .abi_version = SF_OPERATOR_ABI,
  .open = jitter_open,
  .process = jitter_process,
  .close = jitter_close,
};
