/* failing.c: Custom operators that fail the way a library's bug does, for tests/op_failures.sh
 * (part of libsf_test_ops.so), written against op.h only. Each forwards its input tuples as they
 * are (the output schema's attributes taken by name) until its `at`-th tuple (param at, an integer
 * >= 1, default 1), and there:
 *   sf_exit_at   calls exit(status) (param status, default 0);
 *   sf_segv_at   stores through a null pointer (SIGSEGV);
 *   sf_abort_at  calls abort() (SIGABRT);
 *   sf_spin_at   loops forever, never returning from process (nor calling back into sf);
 *   sf_fork_exit_at  forks a child that calls exit(status) (a helper process ending), waits for
 *                it and goes on: not a failure at all.
 * With param in = "open" each fails in its open callback instead (on the executor's main thread);
 * with param mark = PATH it first creates the file PATH (what a test waits for).
 * A malformed parameter fails the job, naming the operator. */
#include "op.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef enum How { HOW_EXIT, HOW_SEGV, HOW_ABORT, HOW_SPIN, HOW_FORK_EXIT } How;

typedef struct Failing {
  How how;
  long long at;   /* the tuple (1-based) that fails */
  long long seen; /* tuples so far */
  int status;     /* HOW_EXIT: exit's argument */
  char mark[4096]; /* a file made just before failing ("": none) */
} Failing;

/* Param `name` as an integer from min to max (absent: def). 0, or sf_error. */
static int int_param(sf_op *op, const char *name, long long min, long long max, long long def, long long *out) {
  const char *text = sf_param(op, name);
  *out = def;
  if (!text) return 0;
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (!*text || *end || errno || v < min || v > max)
    return sf_error(op, "parameter '%s' must be an integer from %lld to %lld, got '%s'", name, min, max, text);
  *out = v;
  return 0;
}

/* Fails as f says. */
static void fail_now(const Failing *f) {
  FILE *m = *f->mark ? fopen(f->mark, "w") : NULL;
  if (m) fclose(m);
  switch (f->how) {
  case HOW_EXIT: exit(f->status);
  case HOW_SEGV: {
    volatile int *volatile p = NULL; /* volatile: the compiler can neither know it is null nor drop the store */
    *p = 1;
    break;
  }
  case HOW_ABORT: abort();
  case HOW_SPIN: {
    volatile unsigned long long n = 0;
    for (;;) n++;
  }
  case HOW_FORK_EXIT: {
    pid_t child = fork();
    if (child == 0) exit(f->status);
    if (child > 0) waitpid(child, NULL, 0);
    break;
  }
  }
}

static int open_how(sf_op *op, void **state, How how) {
  Failing *f = calloc(1, sizeof *f);
  if (!f) return sf_error(op, "out of memory");
  *state = f; /* close frees it, also after a failure here */
  f->how = how;
  long long status;
  if (int_param(op, "at", 1, 1LL << 62, 1, &f->at) < 0 || int_param(op, "status", 0, 255, 0, &status) < 0) return -1;
  f->status = (int)status;
  const char *mark = sf_param(op, "mark");
  if (mark) snprintf(f->mark, sizeof f->mark, "%s", mark);
  const char *where = sf_param(op, "in");
  if (where && strcmp(where, "open") && strcmp(where, "process"))
    return sf_error(op, "parameter 'in' must be 'open' or 'process', got '%s'", where);
  if (where && !strcmp(where, "open")) fail_now(f);
  return 0;
}

static int exit_open(sf_op *op, void **state) { return open_how(op, state, HOW_EXIT); }
static int segv_open(sf_op *op, void **state) { return open_how(op, state, HOW_SEGV); }
static int abort_open(sf_op *op, void **state) { return open_how(op, state, HOW_ABORT); }
static int spin_open(sf_op *op, void **state) { return open_how(op, state, HOW_SPIN); }
static int fork_exit_open(sf_op *op, void **state) { return open_how(op, state, HOW_FORK_EXIT); }

static int failing_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  Failing *f = state;
  if (++f->seen == f->at) fail_now(f);
  sf_tuple *out = sf_tuple_new(op);
  if (!out) return -1;
  sf_copy(out, in);
  return sf_emit(op, out);
}

static void failing_close(sf_op *op, void *state) {
  free(state);
}

SF_EXPORT const struct sf_operator sf_exit_at = {
  .abi_version = SF_OPERATOR_ABI, .open = exit_open, .process = failing_process, .close = failing_close,
};
SF_EXPORT const struct sf_operator sf_segv_at = {
  .abi_version = SF_OPERATOR_ABI, .open = segv_open, .process = failing_process, .close = failing_close,
};
SF_EXPORT const struct sf_operator sf_abort_at = {
  .abi_version = SF_OPERATOR_ABI, .open = abort_open, .process = failing_process, .close = failing_close,
};
SF_EXPORT const struct sf_operator sf_spin_at = {
  .abi_version = SF_OPERATOR_ABI, .open = spin_open, .process = failing_process, .close = failing_close,
};
SF_EXPORT const struct sf_operator sf_fork_exit_at = {
  .abi_version = SF_OPERATOR_ABI, .open = fork_exit_open, .process = failing_process, .close = failing_close,
};
