/* fuzz_expr.c: libFuzzer target for the expression language. The input is an expression's text;
 * it is parsed (expr_parse) and checked (expr_check) in two scopes, a Functor's (the attributes of
 * T(sym string, price double, vol int, flag bool), states total:int and mean:double, seq and i)
 * and an Aggregate's. What checks in the Functor scope is also evaluated (rt/eval.c) over one tuple.
 * Property: the canonical text (expr_format) of a parsed expression parses again to the same
 * canonical text; a difference aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "sf.h"

static Attr attrs[] = {
  {"sym", TYPE_STRING, 2}, {"price", TYPE_DOUBLE, 3}, {"vol", TYPE_INT, 4}, {"flag", TYPE_BOOL, 5},
};
static Schema schema_t = {"T", attrs, 4, 1};
static StateVar state_total = {.name = "total", .type = TYPE_INT};
static StateVar state_mean = {.name = "mean", .type = TYPE_DOUBLE};
static StateVar *states[] = {&state_total, &state_mean};
static const TextOrigin at = {NULL, 1, 1}; /* the text is line 1 of a file, as it is */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *sink;
  if (!sink) sink = fopen("/dev/null", "w");
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  Arena *a = arena_new();
  Diag d;
  diag_init(&d, "fuzz.xml", sink);

  Expr *e = expr_parse(a, text, &d, &at);
  if (e) {
    const char *canon = expr_format(a, e);
    Expr *again = expr_parse(a, canon, &d, &at);
    const char *canon2 = again ? expr_format(a, again) : "(does not parse)";
    if (strcmp(canon, canon2) != 0) {
      fprintf(stderr, "fuzz_expr: '%s' formats as '%s', which formats as '%s'\n", text, canon, canon2);
      abort();
    }
    ExprScope functor = {.input = &schema_t, .states = states, .nstates = 2, .allow_seq = true,
                         .allow_index = true};
    if (expr_check(e, &functor, &d, &at) != TYPE_NONE) {
      bool reads[4] = {0};
      expr_reads(e, reads);
      Value tuple[4], state_values[2], out;
      value_put_string(&tuple[0], "IBM", 3);
      value_put_double(&tuple[1], 2.5);
      value_put_int(&tuple[2], 10);
      value_put_bool(&tuple[3], true);
      value_put_int(&state_values[0], 7);
      value_put_double(&state_values[1], 1.5);
      EvalEnv env = {.attrs = tuple, .states = state_values, .seq = 42, .index = 3, .scratch = a};
      char err[160] = "", code_err[160] = "";
      int rc = expr_eval(e, &env, &out, err, sizeof err);
      /* the compiled form (rt/code.c) must agree: same status, value bits and bytes, message */
      Value code_out;
      int code_rc = code_eval(code_compile(e, a), &env, &code_out, code_err, sizeof code_err);
      bool same = rc == code_rc && (rc ? !strcmp(err, code_err)
                                       : out.type == code_out.type &&
                                             (out.type == TYPE_STRING ? out.s.n == code_out.s.n &&
                                                                            !memcmp(out.s.p, code_out.s.p, out.s.n)
                                              : out.type == TYPE_BOOL ? out.b == code_out.b
                                                                      : out.i == code_out.i));
      if (!same) {
        fprintf(stderr, "fuzz_expr: '%s': expr_eval and code_eval differ ('%s' / '%s')\n", text, err, code_err);
        abort();
      }
    }
    Expr *agg = expr_parse(a, text, &d, &at);
    ExprScope aggregate = {.input = &schema_t, .allow_aggregates = true};
    if (agg) expr_check(agg, &aggregate, &d, &at);
  }
  diag_flush(&d, DIAG_BY_PLACE);
  arena_free(a);
  free(text);
  return 0;
}
