/* eval.c: the expression evaluator micro-benchmark. The six expressions of the benchmark chain
 * (tests/bench/chain.sh: the Beacon's three sets, the Functor's two, the Filter's where) evaluated
 * for N tuples by the tree walker (expr_eval) and by the compiled form (code_eval, rt/code.c), in
 * the same run; every value of both is checked identical first. tests/bench/eval.sh runs it.
 * usage: sf-bench-eval [N] [RUNS]  (default 2000000 tuples, best of 3). Prints the ns per tuple of
 * each and the speed-up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval.h"
#include "sf.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static Attr in_attrs[] = {{"k", TYPE_INT, 1}, {"v", TYPE_INT, 1}, {"x", TYPE_DOUBLE, 1}};
static Schema in_schema = {"In", in_attrs, 3, 1};
static Attr out_attrs[] = {{"k", TYPE_INT, 1}, {"y", TYPE_INT, 1}, {"z", TYPE_DOUBLE, 1}};
static Schema out_schema = {"Out", out_attrs, 3, 1};

/* The expressions, with the scope each is checked in. */
static const struct {
  const char *text;
  int scope; /* 0: Beacon (seq), 1: Functor over In, 2: Filter over Out */
} exprs[] = {
  {"seq % 100", 0}, {"rand(seq) % 1000", 0}, {"double(seq) * 0.5", 0},
  {"v * 3 + k", 1}, {"x / 2.0", 1}, {"y % 7 != 0", 2},
};
enum { NEXPRS = 6 };

static Expr *tree[NEXPRS];
static Code *code[NEXPRS];
static volatile int64_t sink; /* keeps the work from being optimized away */

/* Runs the chain's evaluations for tuples 0..n-1, the compiled form when compiled, else the tree
 * walker; returns a checksum of every value, or stores them in trace when it is not NULL. */
static int64_t run(long n, bool compiled, Arena *scratch, Value *trace) {
  int64_t sum = 0;
  char err[128];
  for (long s = 0; s < n; s++) {
    Value in[3], out[3], keep;
    EvalEnv beacon = {.seq = s, .scratch = scratch};
    EvalEnv functor = {.attrs = in, .scratch = scratch};
    EvalEnv filter = {.attrs = out, .scratch = scratch};
    const EvalEnv *envs[NEXPRS] = {&beacon, &beacon, &beacon, &functor, &functor, &filter};
    Value *dst[NEXPRS] = {&in[0], &in[1], &in[2], &out[1], &out[2], &keep};
    for (int k = 0; k < NEXPRS; k++) {
      if (k == 3) out[0] = in[0];
      int rc = compiled ? code_eval(code[k], envs[k], dst[k], err, sizeof err)
                        : expr_eval(tree[k], envs[k], dst[k], err, sizeof err);
      if (rc) {
        fprintf(stderr, "sf-bench-eval: '%s': %s\n", exprs[k].text, err);
        exit(1);
      }
      if (trace) trace[s * NEXPRS + k] = *dst[k];
    }
    sum += in[0].i + in[1].i + out[1].i + (int64_t)out[2].d + keep.b;
  }
  return sum;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 2000000;
  int runs = argc > 2 ? atoi(argv[2]) : 3;
  if (n < 1 || runs < 1) {
    fprintf(stderr, "usage: sf-bench-eval [N] [RUNS]\n");
    return 2;
  }
  Arena *a = arena_new(), *scratch = arena_new();
  Diag d;
  diag_init(&d, "bench", stderr);
  TextOrigin at = {NULL, 1, 1};
  for (int k = 0; k < NEXPRS; k++) {
    ExprScope scope = {.input = exprs[k].scope == 1 ? &in_schema : exprs[k].scope == 2 ? &out_schema : NULL,
                       .allow_seq = exprs[k].scope == 0};
    tree[k] = expr_parse(a, exprs[k].text, &d, &at);
    if (!tree[k] || expr_check(tree[k], &scope, &d, &at) == TYPE_NONE) {
      diag_flush(&d, DIAG_BY_PLACE);
      return 1;
    }
    code[k] = code_compile(tree[k], a);
  }
  /* the same values, bit for bit, on a prefix */
  long check = n < 100000 ? n : 100000;
  Value *t1 = malloc(sizeof *t1 * (size_t)check * NEXPRS), *t2 = malloc(sizeof *t2 * (size_t)check * NEXPRS);
  memset(t1, 0, sizeof *t1 * (size_t)check * NEXPRS);
  memset(t2, 0, sizeof *t2 * (size_t)check * NEXPRS);
  run(check, false, scratch, t1);
  run(check, true, scratch, t2);
  for (long i = 0; i < check * NEXPRS; i++)
    if (t1[i].type != t2[i].type || (t1[i].type == TYPE_BOOL ? t1[i].b != t2[i].b : t1[i].i != t2[i].i)) {
      fprintf(stderr, "sf-bench-eval: the evaluators differ on tuple %ld, '%s'\n", i / NEXPRS, exprs[i % NEXPRS].text);
      return 1;
    }
  free(t1);
  free(t2);
  double best[2] = {1e30, 1e30};
  for (int r = 0; r < runs; r++)
    for (int compiled = 0; compiled < 2; compiled++) { /* alternate, so both see the same load */
      double t0 = now();
      sink += run(n, compiled, scratch, NULL);
      double t = now() - t0;
      if (t < best[compiled]) best[compiled] = t;
    }
  printf("tree walker (expr_eval)  %6.1f ns per tuple\n", best[0] * 1e9 / (double)n);
  printf("compiled (code_eval)     %6.1f ns per tuple\n", best[1] * 1e9 / (double)n);
  printf("speed-up %.2fx\n", best[0] / best[1]);
  diag_flush(&d, DIAG_BY_PLACE);
  arena_free(scratch);
  arena_free(a);
  return 0;
}
