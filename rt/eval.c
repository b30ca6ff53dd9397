/* eval.c: evaluates checked expressions over one tuple. A plain recursive walk dispatching on the
 * kinds, operators and functions the checker resolved (the functions' implementations are in
 * functions.c): no name lookups, no allocation except for string results (of `+`, str(), ...). Run-time faults return -1 with a message; nothing aborts
 * and nothing is undefined behaviour (see eval.h for the exact semantics). It is the reference
 * for the compiled form (code.c), which operators run, and folds its constants. */
#include "eval.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

int eval_fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Longest prefix of a string quoted in a message. */
enum { QUOTE_MAX = 40 };

int eval_fail_convert(char *err, size_t errlen, const Value *v, const char *to) {
  if (v->type == TYPE_STRING) {
    int n = v->s.n > QUOTE_MAX ? QUOTE_MAX : (int)v->s.n;
    return eval_fail(err, errlen, "cannot convert '%.*s%s' to %s", n, v->s.p,
                v->s.n > QUOTE_MAX ? "..." : "", to);
  }
  char buf[SF_DOUBLE_CHARS];
  value_format_double(v->d, buf, sizeof buf);
  return eval_fail(err, errlen, "cannot convert %s to %s", buf, to);
}

Value eval_concat(Arena *scratch, const char *p1, size_t n1, const char *p2, size_t n2) {
  sf_assert(scratch);
  char *p = arena_alloc(scratch, n1 + n2 + 1);
  if (n1) memcpy(p, p1, n1);
  if (n2) memcpy(p + n1, p2, n2);
  p[n1 + n2] = 0;
  return value_string(p, n1 + n2);
}

static int eval_binary(const Expr *e, const EvalEnv *env, Value *out, char *err, size_t errlen) {
  Value x, y;
  if (expr_eval(e->a, env, &x, err, errlen)) return -1;
  if (e->op == OP_AND || e->op == OP_OR) {
    if (x.b == (e->op == OP_OR)) {
      *out = x;
      return 0;
    }
    return expr_eval(e->b, env, out, err, errlen);
  }
  if (expr_eval(e->b, env, &y, err, errlen)) return -1;

  if (x.type == TYPE_INT) {
    int64_t r;
    switch (e->op) {
    case OP_ADD:
      if (__builtin_add_overflow(x.i, y.i, &r)) return eval_fail(err, errlen, "integer overflow of '+'");
      value_put_int(out, r);
      return 0;
    case OP_SUB:
      if (__builtin_sub_overflow(x.i, y.i, &r)) return eval_fail(err, errlen, "integer overflow of '-'");
      value_put_int(out, r);
      return 0;
    case OP_MUL:
      if (__builtin_mul_overflow(x.i, y.i, &r)) return eval_fail(err, errlen, "integer overflow of '*'");
      value_put_int(out, r);
      return 0;
    case OP_DIV:
      if (y.i == 0) return eval_fail(err, errlen, "division by zero");
      if (y.i == -1 && x.i == INT64_MIN) return eval_fail(err, errlen, "integer overflow of '/'");
      value_put_int(out, x.i / y.i);
      return 0;
    case OP_MOD:
      if (y.i == 0) return eval_fail(err, errlen, "modulo by zero");
      if (y.i == -1 && x.i == INT64_MIN) return eval_fail(err, errlen, "integer overflow of '%%'");
      value_put_int(out, x.i % y.i);
      return 0;
    case OP_EQ: value_put_bool(out, x.i == y.i); return 0;
    case OP_NE: value_put_bool(out, x.i != y.i); return 0;
    case OP_LT: value_put_bool(out, x.i < y.i); return 0;
    case OP_LE: value_put_bool(out, x.i <= y.i); return 0;
    case OP_GT: value_put_bool(out, x.i > y.i); return 0;
    case OP_GE: value_put_bool(out, x.i >= y.i); return 0;
    default: break;
    }
  } else if (x.type == TYPE_DOUBLE) {
    switch (e->op) {
    case OP_ADD: value_put_double(out, x.d + y.d); return 0;
    case OP_SUB: value_put_double(out, x.d - y.d); return 0;
    case OP_MUL: value_put_double(out, x.d * y.d); return 0;
    case OP_DIV: value_put_double(out, x.d / y.d); return 0;
    case OP_EQ: value_put_bool(out, x.d == y.d); return 0;
    case OP_NE: value_put_bool(out, x.d != y.d); return 0;
    case OP_LT: value_put_bool(out, x.d < y.d); return 0;
    case OP_LE: value_put_bool(out, x.d <= y.d); return 0;
    case OP_GT: value_put_bool(out, x.d > y.d); return 0;
    case OP_GE: value_put_bool(out, x.d >= y.d); return 0;
    default: break;
    }
  } else if (x.type == TYPE_STRING) {
    switch (e->op) {
    case OP_ADD: *out = eval_concat(env->scratch, x.s.p, x.s.n, y.s.p, y.s.n); return 0;
    case OP_EQ: value_put_bool(out, value_compare(&x, &y) == 0); return 0;
    case OP_NE: value_put_bool(out, value_compare(&x, &y) != 0); return 0;
    case OP_LT: value_put_bool(out, value_compare(&x, &y) < 0); return 0;
    case OP_LE: value_put_bool(out, value_compare(&x, &y) <= 0); return 0;
    case OP_GT: value_put_bool(out, value_compare(&x, &y) > 0); return 0;
    case OP_GE: value_put_bool(out, value_compare(&x, &y) >= 0); return 0;
    default: break;
    }
  } else if (x.type == TYPE_BOOL) {
    switch (e->op) {
    case OP_EQ: value_put_bool(out, x.b == y.b); return 0;
    case OP_NE: value_put_bool(out, x.b != y.b); return 0;
    default: break;
    }
  }
  sf_die("operator %d on %s is not checked", (int)e->op, type_name(x.type));
}

/* A call: an aggregate's value, or the function's implementation (functions.c) on its arguments. */
static int eval_call(const Expr *e, const EvalEnv *env, Value *out, char *err, size_t errlen) {
  Value v[3];
  switch (e->func) {
  case FUNC_COUNT: case FUNC_SUM: case FUNC_AVG: case FUNC_AMIN: case FUNC_AMAX:
  case FUNC_FIRST: case FUNC_LAST: case FUNC_COUNT_DISTINCT: case FUNC_ARG_MAX: case FUNC_ARG_MIN:
  case FUNC_WINDOW_START: case FUNC_WINDOW_END:
    sf_assert(env->aggs && e->slot >= 0);
    *out = env->aggs[e->slot];
    return 0;
  default:
    break;
  }
  sf_assert(e->func > FUNC_NONE && e->func < FUNC_COUNT && e->nargs <= 3);
  for (int k = 0; k < e->nargs; k++)
    if (expr_eval(e->args[k], env, &v[k], err, errlen)) return -1;
  FnEnv x = {.scratch = env->scratch};
  return fn_table[e->func](&v[0], &v[1], &v[2], &x, out, err, errlen);
}

int expr_eval(const Expr *e, const EvalEnv *env, Value *out, char *err, size_t errlen) {
  switch (e->kind) {
  case EXPR_INT:
    value_put_int(out, e->ival);
    return 0;
  case EXPR_DOUBLE:
    value_put_double(out, e->dval);
    return 0;
  case EXPR_STRING:
    value_put_string(out, e->sval, e->slen);
    return 0;
  case EXPR_BOOL:
    value_put_bool(out, e->bval);
    return 0;
  case EXPR_NAME:
    switch (e->scope) {
    case NAME_ATTR: *out = env->attrs[e->slot]; return 0;
    case NAME_STATE: *out = env->states[e->slot]; return 0;
    case NAME_SEQ: value_put_int(out, env->seq); return 0;
    case NAME_INDEX: value_put_int(out, env->index); return 0;
    case NAME_SIDE: *out = env->sides[e->side][e->slot]; return 0;
    case NAME_LET: *out = env->lets[e->slot]; return 0;
    default: sf_die("name '%s' is not resolved", e->sval);
    }
  case EXPR_UNARY:
    if (expr_eval(e->a, env, out, err, errlen)) return -1;
    if (e->op == OP_NOT) out->b = !out->b;
    else if (out->type == TYPE_INT && out->i == INT64_MIN) return eval_fail(err, errlen, "integer overflow of unary '-'");
    else if (out->type == TYPE_INT) out->i = -out->i;
    else out->d = -out->d;
    return 0;
  case EXPR_BINARY:
    return eval_binary(e, env, out, err, errlen);
  case EXPR_COND: {
    Value c;
    if (expr_eval(e->a, env, &c, err, errlen)) return -1;
    return expr_eval(c.b ? e->b : e->c, env, out, err, errlen);
  }
  case EXPR_CALL:
    return eval_call(e, env, out, err, errlen);
  case EXPR_IN: {
    /* x == v for each value v in turn, the first equal one ending it */
    Value x, v;
    if (expr_eval(e->a, env, &x, err, errlen)) return -1;
    for (int k = 0; k < e->nargs; k++) {
      if (expr_eval(e->args[k], env, &v, err, errlen)) return -1;
      bool equal = x.type == TYPE_INT      ? x.i == v.i
                 : x.type == TYPE_DOUBLE ? x.d == v.d
                 : x.type == TYPE_BOOL   ? x.b == v.b
                                         : value_compare(&x, &v) == 0;
      if (equal) {
        value_put_bool(out, true);
        return 0;
      }
    }
    value_put_bool(out, false);
    return 0;
  }
  default:
    sf_die("bad expression kind %d", (int)e->kind);
  }
}
