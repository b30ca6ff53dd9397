/* eval.h: the evaluator of checked expressions (xform/expr.c parses and checks them).
 *
 * Ownership: the Value an evaluation returns borrows from the expression (string literals), from
 * env->attrs / env->states / env->aggs / env->sides / env->lets (names, substr slices of them) or from env->scratch (strings
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
  const Value *const *sides; /* qualified names P.N (NAME_SIDE): sides[Expr.side][Expr.slot]; over a
                              * run (code_eval_run) the same for every row */
  const Value *lets;   /* the operator's <let> values (NAME_LET), by index; over a run the same for
                        * every row */
  Arena *scratch;      /* strings produced by the expression are allocated here */
} EvalEnv;

/* Evaluates an expression that expr_check accepted. Returns 0 with *out set, or -1 with a lowercase
 * message in err (when err is not NULL): "division by zero", "modulo by zero",
 * "integer overflow of '+'" (of '-', '*', '/', '%', unary '-', abs()),
 * "cannot convert 'abc' to int", "cannot convert 'x' to double", "cannot convert nan to int",
 * "cannot convert 1e+300 to int".
 *
 * Semantics (for users: docs/language.md, "Expressions"):
 *  - int + - * / % unary - and abs() whose exact result is not an int64 fail ("integer overflow of
 *    '+'"): never a wrapped value. INT64_MIN / -1, INT64_MIN % -1 (whose quotient overflows), -x and
 *    abs(x) of INT64_MIN fail so. Never undefined behaviour.
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
 *  - the other functions of xform/functions.def are their fn_NAME of functions.c, whose faults
 *    name the function ("split_part: empty separator", "regex_match: match limit exceeded").
 *  - x in (a, ...) compares x with each value in turn as == does, stopping at the first equal one.
 * Allocates in env->scratch only, for string results (of `+`, str(), lower(), replace(), ...);
 * a regex_match or regex_extract compiles its pattern at each call here (malloc, freed), where
 * code.c compiles it once. */
int expr_eval(const Expr *e, const EvalEnv *env, Value *out, char *err, size_t errlen);

/* ---- code.c: expressions compiled once into flat code ---- */

/* An expression compiled for evaluation: typed instructions over registers, constants folded. */
typedef struct Code Code;

/* Compiles e, which expr_check accepted, allocating the code in a (the code keeps no pointer into
 * e but to its string literals: e must outlive it, and so must a). Constant subexpressions are
 * evaluated now by expr_eval; one that faults is left to fault at run time. Never fails (out of
 * memory aborts). */
Code *code_compile(const Expr *e, Arena *a);
/* Evaluates c like expr_eval evaluates the expression c was compiled from: the same value (same
 * bits and bytes), the same -1 and message on a fault, the same ownership of the result (strings
 * of folded constants live in code_compile's arena). */
int code_eval(const Code *c, const EvalEnv *env, Value *out, char *err, size_t errlen);
/* The most rows code_eval_run takes at a time with its vector registers (more: row by row). */
enum { CODE_RUN_MAX = 256 };
/* Evaluates c over a run of n rows, as code_eval on each row in turn would: row r reads the
 * attributes attrs[r] (attrs NULL: env->attrs for every row) and seq seqs[r] (seqs NULL: env->seq);
 * everything else comes from env. Each instruction runs over all the rows (one dispatch per
 * instruction per run); &&, || and ?: split the rows between their branches, so a row runs exactly
 * the instructions code_eval would run for it. Registers are n per register, allocated in
 * env->scratch (not NULL), as are the strings of `+` and str(); none is freed before the caller
 * resets it. Returns n with out[0..n) set; or, when some row faults, the index r of the first row
 * that faults (code_eval on it returns -1: re-run it to get the message), with out[0..r) set
 * (rows after it are not evaluated further). */
int code_eval_run(const Code *c, const EvalEnv *env, const Value *const *attrs, const int64_t *seqs, int n,
                  Value *out);
/* code_eval_run with row r's result at (char *)out + r * stride instead of out[r]: straight into
 * the r-th tuple of a slab (tuple_new_blank_rows), for instance. */
int code_eval_run_to(const Code *c, const EvalEnv *env, const Value *const *attrs, const int64_t *seqs, int n,
                     Value *out, size_t stride);
/* The number of instructions of c: 0 when the expression folded to a constant or reads a name as
 * it is (what the tests check folding with). */
int code_length(const Code *c);

/* ---- shared by eval.c, code.c and functions.c ---- */

/* What the implementation of a function sees besides its arguments. */
typedef struct FnEnv {
  Arena *scratch;  /* where string results are allocated (not NULL for a function that makes one) */
  const void *aux; /* a FN_PATTERN function: its compiled pattern (a Regex) when the caller has
                    * one (code.c), NULL when the function is to compile it (eval.c) */
} FnEnv;
/* The implementation of a scalar function of xform/functions.def, fn_NAME (rt/functions.c): its
 * arguments a, b, c (those past its arity are not read), checked, in; 0 with *out set (out may be
 * one of the arguments: they are read first), or -1 with the message in err (when err is not NULL),
 * as expr_eval. */
typedef int FnImpl(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err,
                   size_t errlen);
#define FUNC(ID, name, nargs, args, result, flags) FnImpl fn_##name;
#include "functions.def"
#undef FUNC
/* fn_NAME by FUNC_NAME (NULL for FUNC_NONE) */
extern FnImpl *const fn_table[FUNC_COUNT];
/* The flags (FN_) of each function, by FUNC_NAME */
extern const unsigned fn_flags[FUNC_COUNT];

/* Writes the message (printf-style) into err when err is not NULL; returns -1. */
int eval_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Writes the message of a failed conversion of v (a string or a double) to type `to` into err
 * ("cannot convert 'abc' to int", "cannot convert nan to int"); returns -1. */
int eval_fail_convert(char *err, size_t errlen, const Value *v, const char *to);
/* The string p1[0..n1) followed by p2[0..n2), NUL-terminated, allocated in scratch (not NULL). */
Value eval_concat(Arena *scratch, const char *p1, size_t n1, const char *p2, size_t n2);

#endif
