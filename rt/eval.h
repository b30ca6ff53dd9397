/* eval.h: the evaluator of checked expressions (xform/expr.c parses and checks them).
 *
 * Ownership: the Value an evaluation returns borrows from the expression (string literals), from
 * env->attrs / env->states / env->aggs (names, substr slices of them) or from env->scratch (strings
 * built by `+` and str()); it lives as long as the shortest of those. */
#ifndef SF_EVAL_H
#define SF_EVAL_H

#include "value.h"

/* What the names of an expression stand for during one evaluation. */
typedef struct EvalEnv {
  const Value *attrs;  /* input tuple values by attribute index (NULL if none) */
  const Value *states; /* Functor state variables by index */
  int64_t seq;         /* Beacon: seq */
  int64_t index;       /* FlatMap: i */
  const Value *aggs;   /* Aggregate: value of each aggregate call, by its slot */
  Arena *scratch;      /* strings produced by the expression are allocated here */
} EvalEnv;

/* Evaluates an expression that expr_check accepted. Returns 0 with *out set, or -1 with a lowercase
 * message in err (when err is not NULL): "division by zero", "modulo by zero",
 * "cannot convert 'abc' to int", "cannot convert 'x' to double", "cannot convert nan to int",
 * "cannot convert 1e+300 to int".
 *
 * Semantics beyond FORMAT.md:
 *  - int + - * and unary - wrap around in two's complement (computed on uint64_t); INT64_MIN / -1 is
 *    INT64_MIN and INT64_MIN % -1 is 0; abs(INT64_MIN) is INT64_MIN. Never undefined behaviour.
 *  - double arithmetic is IEEE: x / 0.0 is inf or nan, not an error; < <= > >= == != on doubles are
 *    the C comparisons (nan == nan is false).
 *  - strings compare bytewise (memcmp, then the shorter first); len and substr count bytes;
 *    substr(s, from, n) clamps from to [0, len] and n to [0, len - from].
 *  - min/max of two doubles use value_compare (nan above every number; on a tie the first argument).
 *  - int(bool) is 0 or 1; int(string) and double(string) accept what value_parse accepts.
 *  - str(double) is value_format_double; str(bool) is "true"/"false".
 *  - hash(x) is value_hash(x, SF_HASH_SEED) with the top bit cleared; rand(n) is sf_rand(n).
 *  - && and || evaluate their right operand only when needed; ?: evaluates one branch.
 *  - an aggregate call is env->aggs[slot] (the Aggregate operator computes it).
 * Allocates only in env->scratch, and only for string results of `+` and str(). */
int expr_eval(const Expr *e, const EvalEnv *env, Value *out, char *err, size_t errlen);

#endif
