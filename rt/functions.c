/* functions.c: the built-in scalar functions of expressions (xform/functions.def), one fn_NAME
 * each: the one implementation that the tree walker (eval.c) calls, and the compiled form
 * (code.c) too for the functions that have no opcode of their own. Each reads its arguments
 * (checked: of the types functions.def gives) before it writes *out, which may be one of them.
 * Semantics: eval.h, and docs/language.md, "Expressions". */
#include "eval.h"

#include <math.h>
#include <string.h>

int fn_abs(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)x;
  if (a->type == TYPE_INT && a->i == INT64_MIN) return eval_fail(err, errlen, "integer overflow of abs()");
  if (a->type == TYPE_INT)
    value_put_int(out, a->i < 0 ? -a->i : a->i);
  else
    value_put_double(out, fabs(a->d));
  return 0;
}

int fn_min(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)c, (void)x, (void)err, (void)errlen;
  *out = value_compare(b, a) < 0 ? *b : *a;
  return 0;
}

int fn_max(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)c, (void)x, (void)err, (void)errlen;
  *out = value_compare(b, a) > 0 ? *b : *a;
  return 0;
}

int fn_int(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)x;
  switch (a->type) {
  case TYPE_INT: *out = *a; return 0;
  case TYPE_BOOL: value_put_int(out, a->b); return 0;
  case TYPE_DOUBLE:
    /* [-2^63, 2^63) truncates into range; the comparison is false for nan too */
    if (!(a->d >= -9223372036854775808.0 && a->d < 9223372036854775808.0))
      return eval_fail_convert(err, errlen, a, "int");
    value_put_int(out, (int64_t)a->d);
    return 0;
  case TYPE_STRING: {
    Value v;
    if (value_parse(TYPE_INT, a->s.p, a->s.n, &v, NULL)) return eval_fail_convert(err, errlen, a, "int");
    *out = v;
    return 0;
  }
  default: break;
  }
  sf_die("int() of %s is not checked", type_name(a->type));
}

int fn_double(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)x;
  switch (a->type) {
  case TYPE_INT: value_put_double(out, (double)a->i); return 0;
  case TYPE_DOUBLE: *out = *a; return 0;
  case TYPE_STRING: {
    Value v;
    if (value_parse(TYPE_DOUBLE, a->s.p, a->s.n, &v, NULL)) return eval_fail_convert(err, errlen, a, "double");
    *out = v;
    return 0;
  }
  default: break;
  }
  sf_die("double() of %s is not checked", type_name(a->type));
}

int fn_str(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)err, (void)errlen;
  char buf[SF_DOUBLE_CHARS];
  switch (a->type) {
  case TYPE_STRING: *out = *a; return 0;
  case TYPE_BOOL: *out = a->b ? value_string("true", 4) : value_string("false", 5); return 0;
  case TYPE_INT: {
    int n = snprintf(buf, sizeof buf, "%lld", (long long)a->i);
    *out = eval_concat(x->scratch, buf, (size_t)n, NULL, 0);
    return 0;
  }
  case TYPE_DOUBLE: {
    size_t n = value_format_double(a->d, buf, sizeof buf);
    *out = eval_concat(x->scratch, buf, n, NULL, 0);
    return 0;
  }
  default: break;
  }
  sf_die("str() of %s is not checked", type_name(a->type));
}

int fn_len(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)x, (void)err, (void)errlen;
  value_put_int(out, (int64_t)a->s.n);
  return 0;
}

int fn_substr(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)x, (void)err, (void)errlen;
  uint64_t len = a->s.n;
  int64_t from = b->i, n = c->i;
  uint64_t f = from < 0 ? 0 : (uint64_t)from > len ? len : (uint64_t)from;
  uint64_t m = n < 0 ? 0 : (uint64_t)n > len - f ? len - f : (uint64_t)n;
  value_put_string(out, a->s.p + f, (size_t)m);
  return 0;
}

int fn_hash(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)x, (void)err, (void)errlen;
  value_put_int(out, (int64_t)(value_hash(a, SF_HASH_SEED) & (uint64_t)INT64_MAX));
  return 0;
}

int fn_rand(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)x, (void)err, (void)errlen;
  value_put_int(out, sf_rand(a->i));
  return 0;
}

FnImpl *const fn_table[FUNC_COUNT] = {
#define FUNC(ID, name, nargs, args, result, flags) [FUNC_##ID] = fn_##name,
#include "functions.def"
#undef FUNC
};
