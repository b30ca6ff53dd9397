/* work.c: the Work kind, deterministic CPU work for benchmarks. For each input tuple, x starts as
 * the hash of its values (value_hash chained over the attributes) and goes through `iterations`
 * chained rounds of the splitmix64 step (x = sf_mix64(x)); the result is folded into a volatile
 * field so the compiler cannot drop the loop. The tuple itself is emitted unchanged (no copy). */
#include "keyed.h"

#include <errno.h>
#include <stdlib.h>

typedef struct Work {
  uint64_t iterations;      /* rounds per tuple */
  volatile uint64_t result; /* every tuple's final x, xor-ed together: keeps the work observable */
} Work;

static int work_open(OpInst *op) {
  const char *text = rt_param(op, "iterations");
  if (!text) return rt_fail(op, "missing parameter 'iterations'");
  int64_t n;
  if (number_read(text, strlen(text), 0, INT64_MAX, &n) != NUM_OK)
    return rt_fail(op, "parameter 'iterations' must be a non-negative integer, got '%s'", text);
  Work *w = sf_xmalloc(sizeof *w);
  w->iterations = n;
  w->result = 0;
  op->state = w;
  return 0;
}

static int work_process(OpInst *op, int port, Tuple *t) {
  Work *w = op->state;
  uint64_t x = SF_HASH_SEED;
  for (int k = 0; k < t->n; k++) x = value_hash(&t->v[k], x);
  for (uint64_t r = 0; r < w->iterations; r++) x = sf_mix64(x);
  w->result ^= x;
  return rt_emit(op, 0, t);
}

/* A run: the same work per tuple, the tuples passed on as one run. */
static int work_process_run(OpInst *op, int port, Item *items, int n) {
  Work *w = op->state;
  uint64_t all = 0;
  for (int i = 0; i < n; i++) {
    const Tuple *t = items[i].t;
    uint64_t x = SF_HASH_SEED;
    for (int k = 0; k < t->n; k++) x = value_hash(&t->v[k], x);
    for (uint64_t r = 0; r < w->iterations; r++) x = sf_mix64(x);
    all ^= x;
  }
  w->result ^= all;
  return rt_emit_run(op, 0, items, n);
}

static int work_final(OpInst *op) {
  return 0;
}

static void work_close(OpInst *op, bool ok) {
  free(op->state);
  op->state = NULL;
}

const OpKindImpl op_work = {
  .kind = KIND_WORK,
  .open = work_open,
  .process = work_process,
  .process_run = work_process_run,
  .final = work_final,
  .close = work_close,
};
