/* test_expr.c: the expression language end to end: parse and format (xform/expr.c), type rules and
 * their exact diagnostics, evaluation (rt/eval.c) and the Value helpers (rt/value.c).
 * Pinned hashes were computed independently from the encoding documented in rt/value.h. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_helper.h"
#include "eval.h"
#include "sf.h"
#include "value.h"

enum { LINE = 7 };
/* Where the test expressions stand: on line LINE from column 1, as they are (no XML entities). */
static const TextOrigin at = {NULL, LINE, 1};

static Arena *arena;
static UnitDiags mem; /* the diagnostics of the test being run */

/* The test schema T(sym string, price double, vol int, flag bool) and two state variables. */
static Attr attrs[] = {
  {"sym", TYPE_STRING, 2}, {"price", TYPE_DOUBLE, 3}, {"vol", TYPE_INT, 4}, {"flag", TYPE_BOOL, 5},
};
static Schema schema_t = {"T", attrs, 4, 1};
static StateVar state_total = {.name = "total", .type = TYPE_INT};
static StateVar state_mean = {.name = "mean", .type = TYPE_DOUBLE};
static StateVar *states[] = {&state_total, &state_mean};

static void setup(void) {
  arena = arena_new();
  unit_diags_open(&mem, "g.xml", DIAG_BY_PLACE);
}

static void teardown(void) {
  unit_diags_close(&mem);
  arena_free(arena);
}

/* Forgets the diagnostics so far. */
static void reset_diags(void) {
  unit_diags_close(&mem);
  unit_diags_open(&mem, "g.xml", DIAG_BY_PLACE);
}

static const char *diags(void) {
  return unit_diags_text(&mem);
}

/* A Functor-like scope with everything visible: attributes, states, seq and i. */
static ExprScope full_scope(void) {
  ExprScope s = {.input = &schema_t, .states = states, .nstates = 2, .allow_seq = true,
                 .allow_index = true};
  return s;
}

static ExprScope agg_scope(void) {
  ExprScope s = {.input = &schema_t, .allow_aggregates = true};
  return s;
}

static Expr *parse_ok(const char *text) {
  Expr *e = expr_parse(arena, text, &mem.diag, &at);
  ck_assert_msg(e != NULL, "parse of '%s' failed: %s", text, diags());
  ck_assert_int_eq(mem.diag.nerrors, 0);
  return e;
}

static const char *fmt(const char *text) {
  return expr_format(arena, parse_ok(text));
}

static const char *parse_error(const char *text) {
  Expr *e = expr_parse(arena, text, &mem.diag, &at);
  ck_assert_msg(e == NULL, "parse of '%s' should fail", text);
  ck_assert_int_eq(mem.diag.nerrors, 1);
  return diags();
}

static Type type_in(const char *text, ExprScope *scope) {
  Expr *e = parse_ok(text);
  Type t = expr_check(e, scope, &mem.diag, &at);
  ck_assert_msg(t != TYPE_NONE, "check of '%s' failed: %s", text, diags());
  ck_assert_int_eq(e->type, t);
  return t;
}

static Type type_of(const char *text) {
  ExprScope s = full_scope();
  return type_in(text, &s);
}

static const char *check_error_in(const char *text, ExprScope *scope) {
  Expr *e = parse_ok(text);
  ck_assert_int_eq(expr_check(e, scope, &mem.diag, &at), TYPE_NONE);
  ck_assert_int_gt(mem.diag.nerrors, 0);
  return diags();
}

static const char *check_error(const char *text) {
  ExprScope s = full_scope();
  return check_error_in(text, &s);
}

/* Evaluation over sym="IBM", price=2.5, vol=10, flag=true, total=7, mean=1.5, seq=42, i=3. */
static Value tuple[4], state_values[2];

static int eval_text(const char *text, Value *out, char *err, size_t errlen) {
  ExprScope s = full_scope();
  Expr *e = parse_ok(text);
  ck_assert_msg(expr_check(e, &s, &mem.diag, &at) != TYPE_NONE, "check of '%s': %s", text, diags());
  tuple[0] = value_string("IBM", 3);
  tuple[1] = value_double(2.5);
  tuple[2] = value_int(10);
  tuple[3] = value_bool(true);
  state_values[0] = value_int(7);
  state_values[1] = value_double(1.5);
  EvalEnv env = {.attrs = tuple, .states = state_values, .seq = 42, .index = 3, .scratch = arena};
  /* the compiled form (rt/code.c) must give the same value or the same message */
  char code_err[256] = "", tree_err[256] = "";
  Value code_out;
  int code_rc = code_eval(code_compile(e, arena), &env, &code_out, code_err, sizeof code_err);
  int rc = expr_eval(e, &env, out, tree_err, sizeof tree_err);
  ck_assert_msg(code_rc == rc, "'%s': code_eval returned %d, expr_eval %d", text, code_rc, rc);
  if (rc == 0) {
    ck_assert_msg(code_out.type == out->type, "'%s': code_eval gave type %d, expr_eval %d", text,
                  (int)code_out.type, (int)out->type);
    bool same = out->type == TYPE_STRING ? code_out.s.n == out->s.n && !memcmp(code_out.s.p, out->s.p, out->s.n)
              : out->type == TYPE_BOOL   ? code_out.b == out->b
                                         : code_out.i == out->i; /* int, or a double's bits */
    ck_assert_msg(same, "'%s': code_eval and expr_eval differ", text);
  } else {
    ck_assert_str_eq(code_err, tree_err);
  }
  if (err && errlen) snprintf(err, errlen, "%s", tree_err);
  return rc;
}

static Value ev(const char *text) {
  char err[128] = "";
  Value v;
  int rc = eval_text(text, &v, err, sizeof err);
  ck_assert_msg(rc == 0, "eval of '%s' failed: %s", text, err);
  return v;
}

static int64_t ev_int(const char *text) {
  Value v = ev(text);
  ck_assert_int_eq(v.type, TYPE_INT);
  return v.i;
}

static double ev_double(const char *text) {
  Value v = ev(text);
  ck_assert_int_eq(v.type, TYPE_DOUBLE);
  return v.d;
}

static bool ev_bool(const char *text) {
  Value v = ev(text);
  ck_assert_int_eq(v.type, TYPE_BOOL);
  return v.b;
}

static const char *ev_str(const char *text) {
  Value v = ev(text);
  ck_assert_int_eq(v.type, TYPE_STRING);
  return arena_strndup(arena, v.s.p, v.s.n);
}

static const char *ev_error(const char *text) {
  static char err[128];
  Value v;
  err[0] = 0;
  ck_assert_int_eq(eval_text(text, &v, err, sizeof err), -1);
  return err;
}

static const char *fmt_double(double d) {
  static char buf[SF_DOUBLE_CHARS];
  size_t n = value_format_double(d, buf, sizeof buf);
  ck_assert_uint_eq(n, strlen(buf));
  return buf;
}

/* ---- parsing and formatting ---- */

START_TEST(test_parse_literals) {
  ck_assert_str_eq(fmt("42"), "42");
  ck_assert_str_eq(fmt("-3"), "-3");
  ck_assert_str_eq(fmt("2.5"), "2.5");
  ck_assert_str_eq(fmt("1e-3"), "0.001");
  ck_assert_str_eq(fmt("3."), "3.0");
  ck_assert_str_eq(fmt("1E3"), "1000.0");
  ck_assert_str_eq(fmt("-2.5"), "-2.5");
  ck_assert_str_eq(fmt("007"), "7");
  ck_assert_str_eq(fmt("true"), "true");
  ck_assert_str_eq(fmt("false"), "false");
  ck_assert_str_eq(fmt("9223372036854775807"), "9223372036854775807");
  ck_assert_str_eq(fmt("-9223372036854775808"), "-9223372036854775808");
  ck_assert_str_eq(fmt("\"a\\\"b\\\\c\\nd\""), "\"a\\\"b\\\\c\\nd\"");
  Expr *e = parse_ok("\"a\\nb\"");
  ck_assert_int_eq(e->kind, EXPR_STRING);
  ck_assert_uint_eq(e->slen, 3);
  ck_assert_str_eq(e->sval, "a\nb");
  e = parse_ok("-9223372036854775808");
  ck_assert_int_eq(e->kind, EXPR_INT);
  ck_assert(e->ival == INT64_MIN);
  ck_assert_int_eq(e->col, 1);
}
END_TEST

START_TEST(test_parse_precedence) {
  ck_assert_str_eq(fmt("a + b * c"), "(a + (b * c))");
  ck_assert_str_eq(fmt("a * b + c"), "((a * b) + c)");
  ck_assert_str_eq(fmt("a - b - c"), "((a - b) - c)");
  ck_assert_str_eq(fmt("a / b % c"), "((a / b) % c)");
  ck_assert_str_eq(fmt("a || b && c"), "(a || (b && c))");
  ck_assert_str_eq(fmt("a && b || c"), "((a && b) || c)");
  ck_assert_str_eq(fmt("a == b < c"), "(a == (b < c))");
  ck_assert_str_eq(fmt("a != b == c"), "((a != b) == c)");
  ck_assert_str_eq(fmt("a < b + 1"), "(a < (b + 1))");
  ck_assert_str_eq(fmt("a ? b : c ? d : e"), "(a ? b : (c ? d : e))");
  ck_assert_str_eq(fmt("a ? b ? c : d : e"), "(a ? (b ? c : d) : e)");
  ck_assert_str_eq(fmt("a || b ? c + 1 : d"), "((a || b) ? (c + 1) : d)");
  ck_assert_str_eq(fmt("-a * b"), "(-a * b)");
  ck_assert_str_eq(fmt("!a && b"), "(!a && b)");
  ck_assert_str_eq(fmt("!(a && b)"), "!(a && b)");
  ck_assert_str_eq(fmt("(a + b) * c"), "((a + b) * c)");
  ck_assert_str_eq(fmt("- -a"), "--a");
  ck_assert_str_eq(fmt("1 - -3"), "(1 - -3)");
  /* a minus before a non-negative literal keeps its parentheses: "--0" would read back as -(0) */
  ck_assert_str_eq(fmt("-- -0"), "--(0)");
  ck_assert_str_eq(fmt("-(2.5)"), "-(2.5)");
  ck_assert_str_eq(fmt("- -2.5"), "--2.5");
  ck_assert_str_eq(fmt("1-3"), "(1 - 3)");
  ck_assert_str_eq(fmt("f(a, b + 1)"), "f(a, (b + 1))");
  ck_assert_str_eq(fmt("count ( )"), "count()");
  ck_assert_str_eq(fmt("x % 2 == 0 || y >= 3.5"), "(((x % 2) == 0) || (y >= 3.5))");
}
END_TEST

START_TEST(test_parse_round_trip) {
  static const char *const texts[] = {
    "\"S\" + str(seq % 50)",
    "100.0 + double(rand(seq) % 1000) / 10.0",
    "1 + rand(seq + 7) % 500",
    "sum(price * double(vol)) / double(sum(vol))",
    "a ? -1.5e-7 : 1e300",
    "substr(\"x\\\\y\\\"\", -1, 2) + \"\\n\"",
    "!(a <= b) && c > d || e != f",
    "- - -9223372036854775808",
  };
  for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
    const char *once = fmt(texts[k]);
    ck_assert_str_eq(fmt(once), once);
  }
  ck_assert_str_eq(fmt("a ? -1.5e-7 : 1e300"), "(a ? -1.5e-7 : 1e+300)");
  ck_assert_str_eq(fmt("1e20 + 1e21 + 0.000001 + 1.25e-7 + 100.0 + 0.0 + 12.5"),
                   "((((((100000000000000000000.0 + 1e+21) + 0.000001) + 1.25e-7) + 100.0) + 0.0) + 12.5)");
}
END_TEST

START_TEST(test_parse_whitespace_and_columns) {
  ck_assert_str_eq(fmt("\n      vol >= 10\n    "), "(vol >= 10)");
  Expr *e = parse_ok("  a +\n  bb");
  ck_assert_int_eq(e->col, 3);
  ck_assert_int_eq(e->slot, 5); /* column of the operator */
  ck_assert_int_eq(e->b->col, 9);
  ck_assert_str_eq(parse_error("\n  a +\n  "), "g.xml:7:7: error: unexpected end of expression\n");
}
END_TEST

START_TEST(test_parse_errors) {
  ck_assert_str_eq(parse_error(""), "g.xml:7:1: error: empty expression\n");
}
END_TEST

START_TEST(test_parse_error_blank) {
  ck_assert_str_eq(parse_error(" \n\t "), "g.xml:7:1: error: empty expression\n");
}
END_TEST

START_TEST(test_parse_error_call) {
  ck_assert_str_eq(parse_error("f(a b)"), "g.xml:7:5: error: expected ')' after arguments\n");
}
END_TEST

START_TEST(test_parse_error_paren) {
  ck_assert_str_eq(parse_error("(a + b"), "g.xml:7:7: error: expected ')'\n");
}
END_TEST

START_TEST(test_parse_error_end) {
  ck_assert_str_eq(parse_error("a +"), "g.xml:7:4: error: unexpected end of expression\n");
}
END_TEST

START_TEST(test_parse_error_trailing) {
  ck_assert_str_eq(parse_error("a foo"), "g.xml:7:3: error: unexpected 'foo'\n");
}
END_TEST

START_TEST(test_parse_error_string) {
  ck_assert_str_eq(parse_error("x + \"abc"), "g.xml:7:5: error: unterminated string\n");
}
END_TEST

START_TEST(test_parse_error_string_newline) {
  ck_assert_str_eq(parse_error("\"ab\ncd\""), "g.xml:7:1: error: unterminated string\n");
}
END_TEST

START_TEST(test_parse_error_escape) {
  ck_assert_str_eq(parse_error("x + \"a\\qb\""),
                   "g.xml:7:7: error: unknown escape '\\q' in string\n");
}
END_TEST

START_TEST(test_parse_error_int_range) {
  ck_assert_str_eq(parse_error("999999999999999999999"),
                   "g.xml:7:1: error: integer literal '999999999999999999999' out of range\n");
}
END_TEST

START_TEST(test_parse_error_int_range_2) {
  ck_assert_str_eq(parse_error("1 + 9223372036854775808"),
                   "g.xml:7:5: error: integer literal '9223372036854775808' out of range\n");
}
END_TEST

START_TEST(test_parse_error_int_range_neg) {
  ck_assert_str_eq(parse_error("-9223372036854775809"),
                   "g.xml:7:1: error: integer literal '-9223372036854775809' out of range\n");
}
END_TEST

START_TEST(test_parse_error_misc) {
  static const struct { const char *text, *want; } cases[] = {
    {"a = b", "g.xml:7:3: error: unexpected '='\n"},
    {"a ? b", "g.xml:7:6: error: expected ':' in '?:'\n"},
    {"12abc", "g.xml:7:1: error: invalid number '12abc'\n"},
    {"1e", "g.xml:7:1: error: invalid number '1e'\n"},
    {"1.2.3", "g.xml:7:1: error: invalid number '1.2.3'\n"},
    {"2 * 1e999", "g.xml:7:5: error: double literal '1e999' out of range\n"},
    {"a @ b", "g.xml:7:3: error: unexpected '@'\n"},
    {"a & b", "g.xml:7:3: error: unexpected '&'\n"},
    {")", "g.xml:7:1: error: unexpected ')'\n"},
    {"f(1,)", "g.xml:7:5: error: unexpected ')'\n"},
    {".5", "g.xml:7:1: error: unexpected '.'\n"},
    {"a +* b", "g.xml:7:4: error: unexpected '*'\n"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    reset_diags();
    ck_assert_str_eq(parse_error(cases[k].text), cases[k].want);
  }
}
END_TEST

/* `head` reps times, then `leaf`, then `tail` reps times (malloc'd). */
static char *nest(const char *head, int reps, const char *leaf, const char *tail) {
  size_t hl = strlen(head), ll = strlen(leaf), tl = strlen(tail);
  char *text = malloc((hl + tl) * (size_t)reps + ll + 1), *p = text;
  for (int k = 0; k < reps; k++, p += hl) memcpy(p, head, hl);
  memcpy(p, leaf, ll);
  p += ll;
  for (int k = 0; k < reps; k++, p += tl) memcpy(p, tail, tl);
  *p = 0;
  return text;
}

/* Every kind of nesting, with the repetitions that make exactly EXPR_MAX_DEPTH levels and the
 * column at which one more is refused. */
static const struct {
  const char *head, *leaf, *tail;
  int reps, col;
} deep[] = {
  {"vol + ", "vol", "", 999, 5999},           /* vol + vol + ... + vol: 1000 terms; the 1000th '+' */
  {"vol + (", "vol + vol", ")", 998, 5},      /* vol + (vol + (... + (vol + vol))) */
  {"flag ? 1 : ", "2", "", 999, 6},           /* flag ? 1 : flag ? 1 : ... : 2 */
  {"(", "vol", ")", 999, 1},                  /* ((...(vol)...)) */
  {"!", "flag", "", 999, 1},                  /* !!...!flag */
  {"-", "vol", "", 999, 1},                   /* --...-vol */
  {"abs(", "vol", ")", 999, 1},               /* abs(abs(...(vol)...)) */
  {"sym < ", "", "", 1, 5},                   /* sym < !!...!"": the fuzz case, a unary chain under '<' */
};

/* The text of deep[k] with `more` extra repetitions. */
static char *deep_text(size_t k, int more) {
  if (k != 7) return nest(deep[k].head, deep[k].reps + more, deep[k].leaf, deep[k].tail);
  char *bangs = nest("!", 998 + more, "\"\"", ""), *text = malloc(strlen(bangs) + 7);
  sprintf(text, "sym < %s", bangs);
  free(bangs);
  return text;
}

START_TEST(test_parse_depth_limit) {
  ck_assert_int_eq(EXPR_MAX_DEPTH, 1000);
  char want[160];
  for (size_t k = 0; k < sizeof deep / sizeof deep[0]; k++) {
    /* at the limit: parses, and its canonical text parses again to the same text */
    reset_diags();
    char *text = deep_text(k, 0);
    Expr *e = parse_ok(text);
    ck_assert_int_eq(e->depth, EXPR_MAX_DEPTH);
    const char *canon = expr_format(arena, e);
    Expr *again = expr_parse(arena, canon, &mem.diag, &at);
    ck_assert_msg(again != NULL, "deep[%zu]: the canonical text does not parse: %s", k, diags());
    ck_assert_str_eq(expr_format(arena, again), canon);
    ck_assert_int_le(again->depth, EXPR_MAX_DEPTH);
    free(text);
    /* one level more */
    reset_diags();
    text = deep_text(k, 1);
    snprintf(want, sizeof want,
             "g.xml:7:%d: error: expression too deep (more than 1000 nested operators, calls or parentheses)\n",
             deep[k].col);
    ck_assert_str_eq(parse_error(text), want);
    free(text);
  }
}
END_TEST

/* Far deeper text fails before the parser's own recursion can exhaust the stack. */
START_TEST(test_parse_depth_far_too_deep) {
  char *text = nest("(", 200000, "vol", ")");
  ck_assert_str_eq(parse_error(text),
                   "g.xml:7:2002: error: expression too deep (more than 1000 nested operators, calls or parentheses)\n");
  free(text);
  reset_diags();
  text = malloc(6 * 200000 + 4);
  strcpy(text, "vol");
  for (int k = 1, n = 3; k < 200000; k++, n += 6) memcpy(text + n, " + vol", 7);
  ck_assert_str_eq(parse_error(text),
                   "g.xml:7:5999: error: expression too deep (more than 1000 nested operators, calls or parentheses)\n");
  free(text);
}
END_TEST

/* ---- type checking ---- */

START_TEST(test_check_names) {
  ExprScope s = full_scope();
  Expr *e = parse_ok("vol");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_INT);
  ck_assert_int_eq(e->scope, NAME_ATTR);
  ck_assert_int_eq(e->slot, 2);
  e = parse_ok("mean");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_DOUBLE);
  ck_assert_int_eq(e->scope, NAME_STATE);
  ck_assert_int_eq(e->slot, 1);
  e = parse_ok("seq + i");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_INT);
  ck_assert_int_eq(e->a->scope, NAME_SEQ);
  ck_assert_int_eq(e->b->scope, NAME_INDEX);
  ck_assert_int_eq(type_of("sym"), TYPE_STRING);
  ck_assert_int_eq(type_of("flag"), TYPE_BOOL);
  ck_assert_int_eq(mem.diag.nerrors, 0);
}
END_TEST

START_TEST(test_check_name_precedence) {
  /* an input attribute named seq hides the Beacon counter */
  Attr a[] = {{"seq", TYPE_STRING, 1}};
  Schema sch = {"S", a, 1, 1};
  ExprScope s = {.input = &sch, .allow_seq = true};
  Expr *e = parse_ok("seq");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_STRING);
  ck_assert_int_eq(e->scope, NAME_ATTR);
  ck_assert_int_eq(e->slot, 0);
}
END_TEST

START_TEST(test_check_unknown_names) {
  ck_assert_str_eq(check_error("px"), "g.xml:7:1: error: unknown name 'px'\n");
}
END_TEST

START_TEST(test_check_seq_not_allowed) {
  ExprScope s = {.input = &schema_t};
  ck_assert_str_eq(check_error_in("vol + seq * i", &s),
                   "g.xml:7:7: error: unknown name 'seq'\n"
                   "g.xml:7:13: error: unknown name 'i'\n");
}
END_TEST

/* Qualified names over two sides: left is T, right is R(sym string, qty int). */
static Attr right_attrs[] = {{"sym", TYPE_STRING, 9}, {"qty", TYPE_INT, 10}};
static Schema schema_r = {"R", right_attrs, 2, 8};

static ExprScope sides_scope(void) {
  ExprScope s = {.input = &schema_t, .nsides = 2, .side_name = {"left", "right"}, .side = {&schema_t, &schema_r}};
  return s;
}

START_TEST(test_check_side_names) {
  ExprScope s = sides_scope();
  Expr *e = parse_ok("right.qty");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_INT);
  ck_assert_int_eq(e->scope, NAME_SIDE);
  ck_assert_int_eq(e->side, 1);
  ck_assert_int_eq(e->slot, 1);
  e = parse_ok("left.price * 2.0");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_DOUBLE);
  ck_assert_int_eq(e->a->scope, NAME_SIDE);
  ck_assert_int_eq(e->a->side, 0);
  ck_assert_int_eq(e->a->slot, 1);
  /* a plain name still reads the input; the two sym are different names */
  e = parse_ok("left.sym == right.sym && sym != \"\"");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_BOOL);
  ck_assert_int_eq(e->b->a->scope, NAME_ATTR);
  ck_assert_int_eq(mem.diag.nerrors, 0);
  /* one token, printed back as it was; a double is no name */
  ck_assert_str_eq(fmt("left.vol+right.qty"), "(left.vol + right.qty)");
  ck_assert_str_eq(fmt("1.5 + x1.y2"), "(1.5 + x1.y2)");
  ck_assert_str_eq(parse_error("left. vol"), "g.xml:7:5: error: unexpected '.'\n");
}
END_TEST

START_TEST(test_check_side_name_errors) {
  ExprScope s = sides_scope();
  ck_assert_str_eq(check_error_in("lfet.vol + rigth.qty", &s),
                   "g.xml:7:1: error: unknown prefix 'lfet' in 'lfet.vol' (here 'left.' or 'right.'); "
                   "did you mean 'left'?\n"
                   "g.xml:7:12: error: unknown prefix 'rigth' in 'rigth.qty' (here 'left.' or 'right.'); "
                   "did you mean 'right'?\n");
  reset_diags();
  ck_assert_str_eq(check_error_in("right.qtty > 0 || left.zzz", &s),
                   "g.xml:7:7: error: unknown attribute 'qtty' of 'right'; did you mean 'qty'?\n"
                   "g.xml:7:24: error: unknown attribute 'zzz' of 'left'\n");
  reset_diags();
  ExprScope one = {.input = &schema_r, .nsides = 1, .side_name = {"table"}, .side = {&schema_t}};
  ck_assert_str_eq(check_error_in("tabel.vol", &one),
                   "g.xml:7:1: error: unknown prefix 'tabel' in 'tabel.vol' (here 'table.'); "
                   "did you mean 'table'?\n");
  reset_diags();
  ck_assert_str_eq(check_error("left.vol"), "g.xml:7:1: error: unknown name 'left.vol' (no qualified names here)\n");
}
END_TEST

START_TEST(test_eval_side_names) {
  ExprScope s = sides_scope();
  Value left[4] = {value_string("IBM", 3), value_double(2.5), value_int(10), value_bool(true)};
  Value right[2] = {value_string("IBM", 3), value_int(-4)};
  const Value *sides[2] = {left, right};
  const char *texts[] = {"left.vol * right.qty", "right.qty", "left.sym + right.sym",
                         "left.sym == right.sym ? right.qty : left.vol"};
  const int64_t want_int[] = {-40, -4, 0, -4};
  for (int k = 0; k < 4; k++) {
    Expr *e = parse_ok(texts[k]);
    ck_assert(expr_check(e, &s, &mem.diag, &at) != TYPE_NONE);
    EvalEnv env = {.attrs = tuple, .sides = sides, .scratch = arena};
    Value tree, code, run[3];
    Code *c = code_compile(e, arena);
    ck_assert_int_eq(expr_eval(e, &env, &tree, NULL, 0), 0);
    ck_assert_int_eq(code_eval(c, &env, &code, NULL, 0), 0);
    const Value *rows[3] = {tuple, tuple, tuple};
    ck_assert_int_eq(code_eval_run(c, &env, rows, NULL, 3, run), 3);
    if (k == 2) {
      ck_assert_int_eq(tree.type, TYPE_STRING);
      ck_assert_int_eq(tree.s.n, 6);
      ck_assert(!memcmp(tree.s.p, "IBMIBM", 6));
      ck_assert(code.s.n == 6 && !memcmp(code.s.p, "IBMIBM", 6));
      ck_assert(run[2].s.n == 6 && !memcmp(run[2].s.p, "IBMIBM", 6));
    } else {
      ck_assert_int_eq(tree.i, want_int[k]);
      ck_assert_int_eq(code.i, want_int[k]);
      for (int r = 0; r < 3; r++) ck_assert_int_eq(run[r].i, want_int[k]);
    }
  }
  /* one side only: the code reads sides[0] alone */
  ExprScope one = {.nsides = 1, .side_name = {"table"}, .side = {&schema_r}};
  Expr *e = parse_ok("table.qty + 1");
  ck_assert(expr_check(e, &one, &mem.diag, &at) == TYPE_INT);
  const Value *only[1] = {right};
  EvalEnv env = {.sides = only, .scratch = arena};
  Value v;
  ck_assert_int_eq(code_eval(code_compile(e, arena), &env, &v, NULL, 0), 0);
  ck_assert_int_eq(v.i, -3);
}
END_TEST

/* Lets: visible by name, the first nlets only; read from EvalEnv.lets by both evaluators. */
START_TEST(test_lets) {
  Let lets[2] = {{.name = "twice", .type = TYPE_INT}, {.name = "tag", .type = TYPE_STRING}};
  ExprScope s = {.input = &schema_t, .lets = lets, .nlets = 2};
  Expr *e = parse_ok("twice + vol");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_INT);
  ck_assert_int_eq(e->a->scope, NAME_LET);
  ck_assert_int_eq(e->a->slot, 0);
  Expr *t = parse_ok("tag");
  ck_assert_int_eq(expr_check(t, &s, &mem.diag, &at), TYPE_STRING);
  ck_assert_int_eq(t->slot, 1);
  Value vals[2] = {value_int(20), value_string("x", 1)};
  EvalEnv env = {.attrs = tuple, .lets = vals, .scratch = arena};
  tuple[2] = value_int(10);
  Value v;
  ck_assert_int_eq(expr_eval(e, &env, &v, NULL, 0), 0);
  ck_assert_int_eq(v.i, 30);
  ck_assert_int_eq(code_eval(code_compile(e, arena), &env, &v, NULL, 0), 0);
  ck_assert_int_eq(v.i, 30);
  ck_assert_int_eq(code_eval(code_compile(t, arena), &env, &v, NULL, 0), 0);
  ck_assert(v.type == TYPE_STRING && v.s.n == 1 && v.s.p[0] == 'x');
  const Value *rows[2] = {tuple, tuple};
  Value run[2];
  ck_assert_int_eq(code_eval_run(code_compile(e, arena), &env, rows, NULL, 2, run), 2);
  ck_assert_int_eq(run[1].i, 30);
  /* a let not yet written is no name */
  s.nlets = 1;
  ck_assert_str_eq(check_error_in("tag + sym", &s), "g.xml:7:1: error: unknown name 'tag'\n");
  /* one written after the expression is named as such */
  reset_diags();
  s.lets_written = 2;
  ck_assert_str_eq(check_error_in("sym + tag", &s),
                   "g.xml:7:7: error: let 'tag' is written after this expression (a let can be read only after it)\n");
}
END_TEST

START_TEST(test_check_arithmetic) {
  ck_assert_int_eq(type_of("vol + 1"), TYPE_INT);
  ck_assert_int_eq(type_of("price * 2.0 - mean / 3.0"), TYPE_DOUBLE);
  ck_assert_int_eq(type_of("vol % 3"), TYPE_INT);
  ck_assert_int_eq(type_of("sym + \"x\""), TYPE_STRING);
  ck_assert_int_eq(type_of("-price"), TYPE_DOUBLE);
  ck_assert_str_eq(check_error("vol + price"),
                   "g.xml:7:5: error: operator '+' needs two ints, two doubles or two strings, "
                   "got int and double\n");
}
END_TEST

START_TEST(test_check_arithmetic_errors) {
  ck_assert_str_eq(check_error("price % 2.0"),
                   "g.xml:7:7: error: operator '%' needs two ints, got double and double\n");
}
END_TEST

START_TEST(test_check_arithmetic_errors_2) {
  ck_assert_str_eq(check_error("sym - sym"),
                   "g.xml:7:5: error: operator '-' needs two ints or two doubles, "
                   "got string and string\n");
}
END_TEST

START_TEST(test_check_comparisons) {
  ck_assert_int_eq(type_of("sym < \"b\""), TYPE_BOOL);
  ck_assert_int_eq(type_of("price >= 1.0"), TYPE_BOOL);
  ck_assert_int_eq(type_of("flag == true"), TYPE_BOOL);
  ck_assert_int_eq(type_of("sym != \"x\""), TYPE_BOOL);
  ck_assert_str_eq(check_error("flag < flag"),
                   "g.xml:7:6: error: operator '<' needs two ints, two doubles or two strings, "
                   "got bool and bool\n");
}
END_TEST

START_TEST(test_check_equality_error) {
  ck_assert_str_eq(check_error("vol == price"),
                   "g.xml:7:5: error: operator '==' needs two operands of the same type, "
                   "got int and double\n");
}
END_TEST

START_TEST(test_check_logical) {
  ck_assert_int_eq(type_of("!flag || vol > 1 && true"), TYPE_BOOL);
  ck_assert_str_eq(check_error("vol && flag"),
                   "g.xml:7:5: error: operator '&&' needs two bools, got int and bool\n");
}
END_TEST

START_TEST(test_check_unary) {
  ck_assert_str_eq(check_error("!vol || -sym == \"\""),
                   "g.xml:7:1: error: operator '!' needs a bool, got int\n"
                   "g.xml:7:9: error: operator '-' needs an int or a double, got string\n");
}
END_TEST

START_TEST(test_check_cond) {
  ck_assert_int_eq(type_of("flag ? sym : \"none\""), TYPE_STRING);
  ck_assert_str_eq(check_error("vol ? 1 : 2"),
                   "g.xml:7:1: error: condition of '?:' must be bool, got int\n");
}
END_TEST

START_TEST(test_check_cond_branches) {
  ck_assert_str_eq(check_error("flag ? 1 : 2.0"),
                   "g.xml:7:6: error: branches of '?:' must have the same type, "
                   "got int and double\n");
}
END_TEST

START_TEST(test_check_every_error) {
  /* every independent error is reported, but an error does not cascade into its parents */
  ck_assert_str_eq(check_error("(px + 1) * (vol + price) + qx"),
                   "g.xml:7:2: error: unknown name 'px'\n"
                   "g.xml:7:17: error: operator '+' needs two ints, two doubles or two strings, "
                   "got int and double\n"
                   "g.xml:7:28: error: unknown name 'qx'\n");
  ck_assert_int_eq(mem.diag.nerrors, 3);
}
END_TEST

START_TEST(test_check_functions) {
  ck_assert_int_eq(type_of("abs(vol)"), TYPE_INT);
  ck_assert_int_eq(type_of("abs(price)"), TYPE_DOUBLE);
  ck_assert_int_eq(type_of("min(vol, 3)"), TYPE_INT);
  ck_assert_int_eq(type_of("max(price, 1.0)"), TYPE_DOUBLE);
  ck_assert_int_eq(type_of("min(sym, \"a\")"), TYPE_STRING);
  ck_assert_int_eq(type_of("int(price) + int(sym) + int(flag) + int(vol)"), TYPE_INT);
  ck_assert_int_eq(type_of("double(vol) + double(sym) + double(price)"), TYPE_DOUBLE);
  ck_assert_int_eq(type_of("str(flag) + str(vol) + str(price) + str(sym)"), TYPE_STRING);
  ck_assert_int_eq(type_of("len(sym)"), TYPE_INT);
  ck_assert_int_eq(type_of("substr(sym, 0, vol)"), TYPE_STRING);
  ck_assert_int_eq(type_of("hash(price) + hash(sym) + hash(flag)"), TYPE_INT);
  ck_assert_int_eq(type_of("rand(vol)"), TYPE_INT);
  Expr *e = parse_ok("min(1, 2)");
  ExprScope s = full_scope();
  expr_check(e, &s, &mem.diag, &at);
  ck_assert_int_eq(e->func, FUNC_MIN);
}
END_TEST

START_TEST(test_check_function_errors) {
  ck_assert_str_eq(check_error("substr(sym, 1) + foo(1) + len(vol) + abs(1, 2)"),
                   "g.xml:7:1: error: function 'substr' takes 3 arguments, got 2\n"
                   "g.xml:7:18: error: unknown function 'foo'\n"
                   "g.xml:7:31: error: argument 1 of 'len' must be a string, got int\n"
                   "g.xml:7:38: error: function 'abs' takes 1 argument, got 2\n");
}
END_TEST

START_TEST(test_check_function_errors_2) {
  ck_assert_str_eq(check_error("double(flag) + rand(price) + substr(sym, 1.0, \"x\")"),
                   "g.xml:7:8: error: argument 1 of 'double' must be an int, a double or a string, "
                   "got bool\n"
                   "g.xml:7:21: error: argument 1 of 'rand' must be an int, got double\n"
                   "g.xml:7:42: error: argument 2 of 'substr' must be an int, got double\n"
                   "g.xml:7:47: error: argument 3 of 'substr' must be an int, got string\n");
  ck_assert_int_eq(mem.diag.nerrors, 4);
}
END_TEST

START_TEST(test_check_function_errors_3) {
  ck_assert_str_eq(check_error("substr(sym, 1.0, \"x\") == str(rand(price))"),
                   "g.xml:7:13: error: argument 2 of 'substr' must be an int, got double\n"
                   "g.xml:7:18: error: argument 3 of 'substr' must be an int, got string\n"
                   "g.xml:7:35: error: argument 1 of 'rand' must be an int, got double\n");
}
END_TEST

START_TEST(test_check_minmax_errors) {
  ck_assert_str_eq(check_error("min(vol, price)"),
                   "g.xml:7:1: error: function 'min' needs two ints, two doubles or two strings, "
                   "got int and double\n");
}
END_TEST

START_TEST(test_check_minmax_outside_aggregate) {
  ck_assert_str_eq(check_error("max(vol)"),
                   "g.xml:7:1: error: function 'max' takes 2 arguments, got 1\n");
}
END_TEST

START_TEST(test_check_aggregate_outside) {
  ck_assert_str_eq(check_error("sum(vol) + count()"),
                   "g.xml:7:1: error: aggregate function 'sum' is only allowed in an Aggregate\n"
                   "g.xml:7:12: error: aggregate function 'count' is only allowed in an Aggregate\n");
}
END_TEST

START_TEST(test_check_aggregates) {
  ExprScope s = agg_scope();
  Expr *e = parse_ok("sum(price * double(vol)) / double(sum(vol))");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_DOUBLE);
  ck_assert_int_eq(s.naggregates, 2);
  ck_assert_int_eq(e->a->func, FUNC_SUM);
  ck_assert_int_eq(e->a->slot, 0);
  ck_assert_int_eq(e->b->args[0]->slot, 1);
  s = agg_scope();
  ck_assert_int_eq(type_in("count()", &s), TYPE_INT);
  ck_assert_int_eq(type_in("sum(vol)", &s), TYPE_INT);
  ck_assert_int_eq(type_in("avg(vol)", &s), TYPE_DOUBLE);
  ck_assert_int_eq(type_in("first(flag)", &s), TYPE_BOOL);
  ck_assert_int_eq(type_in("last(sym)", &s), TYPE_STRING);
  ck_assert_int_eq(type_in("sym + str(count())", &s), TYPE_STRING);
  ck_assert_int_eq(s.naggregates, 6);
  e = parse_ok("min(sym) + max(sym)");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_STRING);
  ck_assert_int_eq(e->a->func, FUNC_AMIN);
  ck_assert_int_eq(e->b->func, FUNC_AMAX);
  ck_assert_int_eq(e->b->slot, 7);
  e = parse_ok("min(vol, 3)");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_INT);
  ck_assert_int_eq(e->func, FUNC_MIN);
  ck_assert_int_eq(s.naggregates, 8);
}
END_TEST

START_TEST(test_check_aggregate_errors) {
  ExprScope s = agg_scope();
  ck_assert_str_eq(check_error_in("sum(sum(vol)) + count(vol) + sum(sym) + min(1, 2, 3) + avg(flag)", &s),
                   "g.xml:7:5: error: aggregate function 'sum' cannot be nested inside 'sum'\n"
                   "g.xml:7:17: error: function 'count' takes 0 arguments, got 1\n"
                   "g.xml:7:34: error: argument 1 of 'sum' must be an int or a double, got string\n"
                   "g.xml:7:41: error: function 'min' takes 1 or 2 arguments, got 3\n"
                   "g.xml:7:60: error: argument 1 of 'avg' must be an int or a double, got bool\n");
}
END_TEST

/* count_distinct, arg_max and arg_min: aggregate slots in every window; arg_max(e, by) has e's type
 * and takes a `by` of any type. */
START_TEST(test_check_new_aggregates) {
  ExprScope s = agg_scope();
  Expr *e = parse_ok("count_distinct(sym) + len(arg_max(sym, price)) + arg_min(vol, flag)");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_INT);
  ck_assert_str_eq(diags(), "");
  ck_assert_int_eq(s.naggregates, 3);
  ck_assert_int_eq(e->a->a->func, FUNC_COUNT_DISTINCT);
  ck_assert_int_eq(e->a->a->slot, 0);
  ck_assert_int_eq(e->a->b->args[0]->func, FUNC_ARG_MAX);
  ck_assert_int_eq(e->a->b->args[0]->slot, 1);
  ck_assert_int_eq(e->b->func, FUNC_ARG_MIN);
  ck_assert_int_eq(e->b->nargs, 2);
  ck_assert_int_eq(type_in("arg_max(flag, sym)", &s), TYPE_BOOL);
  ck_assert_int_eq(type_in("arg_min(price, vol)", &s), TYPE_DOUBLE);
  ck_assert_int_eq(type_in("count_distinct(price)", &s), TYPE_INT);
  ck_assert_int_eq(FUNC_COUNT_DISTINCT > FUNC_LAST && FUNC_WINDOW_END > FUNC_COUNT, 1);
  ck_assert_str_eq(check_error_in("arg_max(vol) + count_distinct() + arg_min(sum(vol), vol)", &s),
                   "g.xml:7:1: error: function 'arg_max' takes 2 arguments, got 1\n"
                   "g.xml:7:16: error: function 'count_distinct' takes 1 argument, got 0\n"
                   "g.xml:7:43: error: aggregate function 'sum' cannot be nested inside 'arg_min'\n");
  reset_diags();
  ck_assert_str_eq(check_error("count_distinct(vol)"),
                   "g.xml:7:1: error: aggregate function 'count_distinct' is only allowed in an Aggregate\n");
}
END_TEST

/* window_start() and window_end(): ints, numbered with the aggregates, only in a time window. */
START_TEST(test_check_window_bounds) {
  ExprScope s = agg_scope();
  s.allow_window_bounds = true;
  Expr *e = parse_ok("window_end() - window_start() + count()");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_INT);
  ck_assert_int_eq(s.naggregates, 3);
  ck_assert_int_eq(e->a->a->func, FUNC_WINDOW_END);
  ck_assert_int_eq(e->a->a->slot, 0);
  ck_assert_int_eq(e->a->b->func, FUNC_WINDOW_START);
  ck_assert_int_eq(e->a->b->slot, 1);
  ck_assert_str_eq(check_error_in("window_end(vol) + sum(window_start())", &s),
                   "g.xml:7:1: error: function 'window_end' takes 0 arguments, got 1\n"
                   "g.xml:7:23: error: aggregate function 'window_start' cannot be nested inside 'sum'\n");
  reset_diags();
  s = agg_scope(); /* a count window or running */
  ck_assert_str_eq(check_error_in("window_start()", &s),
                   "g.xml:7:1: error: window_start() is only defined in a time window (tumbling time, hopping "
                   "time, session time)\n");
  reset_diags();
  ck_assert_str_eq(check_error_in("window_ends()", &s), "g.xml:7:1: error: unknown function 'window_ends'\n");
  reset_diags();
  s.allow_window_bounds = true;
  ck_assert_str_eq(check_error_in("window_ends()", &s),
                   "g.xml:7:1: error: unknown function 'window_ends'; did you mean 'window_end'?\n");
  reset_diags();
  ck_assert_str_eq(check_error("window_end()"),
                   "g.xml:7:1: error: window_end() is only defined in a time window (tumbling time, hopping "
                   "time, session time)\n");
}
END_TEST

START_TEST(test_reads_and_is_attr) {
  ExprScope s = full_scope();
  Expr *e = parse_ok("flag ? len(sym) + total : vol");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_INT);
  bool reads[4] = {false, false, false, false};
  expr_reads(e, reads);
  ck_assert(reads[0] && !reads[1] && reads[2] && reads[3]);
  int slot = -1;
  ck_assert(!expr_is_attr(e, &slot));
  e = parse_ok(" price ");
  expr_check(e, &s, &mem.diag, &at);
  ck_assert(expr_is_attr(e, &slot));
  ck_assert_int_eq(slot, 1);
  e = parse_ok("total");
  expr_check(e, &s, &mem.diag, &at);
  ck_assert(!expr_is_attr(e, &slot));
}
END_TEST

/* ---- evaluation ---- */

START_TEST(test_eval_int_arithmetic) {
  ck_assert_int_eq(ev_int("1 + 2 * 3"), 7);
  ck_assert_int_eq(ev_int("(1 + 2) * 3"), 9);
  ck_assert_int_eq(ev_int("vol - 15"), -5);
  ck_assert_int_eq(ev_int("7 / 2"), 3);
  ck_assert_int_eq(ev_int("-7 / 2"), -3);
  ck_assert_int_eq(ev_int("7 / -2"), -3);
  ck_assert_int_eq(ev_int("-7 / -2"), 3);
  ck_assert_int_eq(ev_int("7 % 2"), 1);
  ck_assert_int_eq(ev_int("-7 % 2"), -1);
  ck_assert_int_eq(ev_int("7 % -2"), 1);
  ck_assert_int_eq(ev_int("-7 % -2"), -1);
  ck_assert_int_eq(ev_int("-vol"), -10);
  ck_assert_int_eq(ev_int("- -vol"), 10);
}
END_TEST

/* Results at the edges of int64 are exact; the operations whose exact result is no int64 fail,
 * naming the operator, whether on constants (not folded) or on values (vol = 10). */
START_TEST(test_eval_int_edges) {
  ck_assert(ev_int("9223372036854775807 + 0") == INT64_MAX);
  ck_assert(ev_int("-9223372036854775807 - 1") == INT64_MIN);
  ck_assert(ev_int("9223372036854775807 - 9223372036854775807") == 0);
  ck_assert(ev_int("-9223372036854775808 + 9223372036854775807") == -1);
  ck_assert(ev_int("-4611686018427387904 * 2") == INT64_MIN);
  ck_assert(ev_int("-9223372036854775807 * -1") == INT64_MAX);
  ck_assert(ev_int("-9223372036854775808 / 2") == -4611686018427387904LL);
  ck_assert(ev_int("-9223372036854775808 / 1") == INT64_MIN);
  ck_assert(ev_int("-9223372036854775807 / -1") == INT64_MAX);
  ck_assert(ev_int("-9223372036854775808 % 1") == 0);
  ck_assert(ev_int("-9223372036854775807 % -1") == 0);
  ck_assert(ev_int("-9223372036854775808 % 3") == -2);
  ck_assert(ev_int("-(-9223372036854775807)") == INT64_MAX);
  ck_assert(ev_int("abs(-9223372036854775807)") == INT64_MAX);
  ck_assert(ev_int("abs(9223372036854775807)") == INT64_MAX);
  ck_assert(ev_int("922337203685477580 * vol") == INT64_MAX - 7);
  static const struct { const char *text, *err; } faults[] = {
    {"9223372036854775807 + 1", "integer overflow of '+'"},
    {"-9223372036854775808 + -1", "integer overflow of '+'"},
    {"vol + 9223372036854775800", "integer overflow of '+'"},
    {"-9223372036854775808 - 1", "integer overflow of '-'"},
    {"9223372036854775807 - -1", "integer overflow of '-'"},
    {"-vol - 9223372036854775800", "integer overflow of '-'"},
    {"4611686018427387904 * 2", "integer overflow of '*'"},
    {"-9223372036854775808 * -1", "integer overflow of '*'"},
    {"vol * 922337203685477581", "integer overflow of '*'"},
    {"-9223372036854775808 / -1", "integer overflow of '/'"},
    {"(-9223372036854775798 - vol) / -1", "integer overflow of '/'"},
    {"-9223372036854775808 % -1", "integer overflow of '%'"},
    {"(-9223372036854775798 - vol) % (vol - 11)", "integer overflow of '%'"},
    {"-(-9223372036854775808)", "integer overflow of unary '-'"},
    {"-(vol - 9223372036854775807 - 11)", "integer overflow of unary '-'"},
    {"abs(-9223372036854775808)", "integer overflow of abs()"},
    {"abs(vol - 9223372036854775807 - 11)", "integer overflow of abs()"},
    {"str(9223372036854775807 + vol)", "integer overflow of '+'"},
  };
  for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++)
    ck_assert_msg(!strcmp(ev_error(faults[k].text), faults[k].err), "'%s': '%s', want '%s'", faults[k].text,
                  ev_error(faults[k].text), faults[k].err);
  /* an overflow that is not evaluated is no fault */
  ck_assert(ev(" false && 9223372036854775807 + 1 > 0").b == false);
  ck_assert(ev_int("flag ? 1 : -(-9223372036854775808)") == 1);
}
END_TEST

START_TEST(test_eval_double_arithmetic) {
  ck_assert(ev_double("price * 2.0") == 5.0);
  ck_assert(ev_double("price - mean") == 1.0);
  ck_assert(ev_double("-price / 0.5") == -5.0);
  ck_assert(ev_double("0.1 + 0.2") == 0.1 + 0.2);
  ck_assert(isinf(ev_double("1.0 / 0.0")));
  ck_assert(isnan(ev_double("0.0 / 0.0")));
  ck_assert(!ev_bool("0.0 / 0.0 == 0.0 / 0.0"));
  ck_assert(ev_bool("-0.0 == 0.0"));
}
END_TEST

START_TEST(test_eval_comparisons) {
  ck_assert(ev_bool("vol > 9"));
  ck_assert(!ev_bool("vol < 10"));
  ck_assert(ev_bool("vol <= 10 && vol >= 10 && vol == 10 && !(vol != 10)"));
  ck_assert(ev_bool("price > mean"));
  ck_assert(ev_bool("\"abc\" < \"abd\""));
  ck_assert(ev_bool("\"ab\" < \"abc\""));
  ck_assert(ev_bool("\"\" == \"\""));
  ck_assert(ev_bool("\"b\" >= \"a\" && \"B\" < \"a\""));
  ck_assert(ev_bool("sym == \"IBM\" && sym != \"IB\""));
  ck_assert(ev_bool("flag == true && false != true"));
}
END_TEST

START_TEST(test_eval_logic_short_circuit) {
  ck_assert(!ev_bool("false && 1 / 0 == 0"));
  ck_assert(ev_bool("true || 1 / 0 == 0"));
  ck_assert_int_eq(ev_int("flag ? 1 : 1 / 0"), 1);
  ck_assert_int_eq(ev_int("!flag ? 1 / 0 : 2"), 2);
  ck_assert(!ev_bool("!flag"));
  ck_assert(ev_bool("true && flag"));
  ck_assert(!ev_bool("false || !true"));
  ck_assert_str_eq(ev_error("true && 1 / 0 == 0"), "division by zero");
}
END_TEST

START_TEST(test_eval_strings) {
  ck_assert_str_eq(ev_str("sym + \"-\" + str(vol)"), "IBM-10");
  ck_assert_str_eq(ev_str("\"S\" + str(seq % 50)"), "S42");
  ck_assert_str_eq(ev_str("\"a\\\"\\\\\\n\""), "a\"\\\n");
  ck_assert_int_eq(ev_int("len(\"h\xc3\xa9llo\")"), 6);
  ck_assert_int_eq(ev_int("len(\"\")"), 0);
  ck_assert_str_eq(ev_str("flag ? sym : \"x\""), "IBM");
}
END_TEST

START_TEST(test_eval_substr) {
  ck_assert_str_eq(ev_str("substr(\"hello\", 1, 3)"), "ell");
  ck_assert_str_eq(ev_str("substr(\"hello\", -2, 2)"), "he");
  ck_assert_str_eq(ev_str("substr(\"hello\", 3, 100)"), "lo");
  ck_assert_str_eq(ev_str("substr(\"hello\", 9, 1)"), "");
  ck_assert_str_eq(ev_str("substr(\"hello\", 1, -1)"), "");
  ck_assert_str_eq(ev_str("substr(\"hello\", 0, 9223372036854775807)"), "hello");
  ck_assert_str_eq(ev_str("substr(sym, -9223372036854775808, 2)"), "IB");
}
END_TEST

START_TEST(test_eval_conversions) {
  ck_assert_int_eq(ev_int("int(2.9)"), 2);
  ck_assert_int_eq(ev_int("int(-2.9)"), -2);
  ck_assert_int_eq(ev_int("int(price)"), 2);
  ck_assert_int_eq(ev_int("int(\"42\")"), 42);
  ck_assert_int_eq(ev_int("int(\"-17\")"), -17);
  ck_assert(ev_int("int(\"-9223372036854775808\")") == INT64_MIN);
  ck_assert(ev_int("int(-9223372036854775808.0)") == INT64_MIN);
  ck_assert_int_eq(ev_int("int(true) + int(false)"), 1);
  ck_assert_int_eq(ev_int("int(vol)"), 10);
  ck_assert(ev_double("double(3)") == 3.0);
  ck_assert(ev_double("double(\"2.5e1\")") == 25.0);
  ck_assert(ev_double("double(price)") == 2.5);
  ck_assert_str_eq(ev_str("str(0.1)"), "0.1");
  ck_assert_str_eq(ev_str("str(1.0)"), "1");
  ck_assert_str_eq(ev_str("str(1e21)"), "1e+21");
  ck_assert_str_eq(ev_str("str(-5)"), "-5");
  ck_assert_str_eq(ev_str("str(true) + str(false)"), "truefalse");
  ck_assert_str_eq(ev_str("str(sym)"), "IBM");
}
END_TEST

START_TEST(test_eval_abs_min_max) {
  ck_assert_int_eq(ev_int("abs(-5) + abs(5)"), 10);
  ck_assert(ev_double("abs(-2.5)") == 2.5);
  ck_assert_int_eq(ev_int("min(vol, 3)"), 3);
  ck_assert_int_eq(ev_int("max(vol, 3)"), 10);
  ck_assert(ev_double("min(price, mean)") == 1.5);
  ck_assert(ev_double("max(price, mean)") == 2.5);
  ck_assert_str_eq(ev_str("min(\"b\", \"ab\")"), "ab");
  ck_assert_str_eq(ev_str("max(\"b\", \"ab\")"), "b");
  ck_assert(ev_double("min(0.0 / 0.0, 1.0)") == 1.0);
}
END_TEST

START_TEST(test_eval_names) {
  ck_assert_int_eq(ev_int("seq"), 42);
  ck_assert_int_eq(ev_int("i"), 3);
  ck_assert_int_eq(ev_int("total * 2"), 14);
  ck_assert(ev_double("mean") == 1.5);
  ck_assert(ev_bool("flag"));
  ck_assert_str_eq(ev_str("sym"), "IBM");
}
END_TEST

START_TEST(test_eval_aggregates) {
  ExprScope s = agg_scope();
  Expr *e = parse_ok("sum(price * double(vol)) / double(sum(vol)) + double(count())");
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_DOUBLE);
  ck_assert_int_eq(s.naggregates, 3);
  Value aggs[3] = {value_double(30.0), value_int(12), value_int(4)};
  EvalEnv env = {.aggs = aggs, .scratch = arena};
  Value v;
  ck_assert_int_eq(expr_eval(e, &env, &v, NULL, 0), 0);
  ck_assert_int_eq(v.type, TYPE_DOUBLE);
  ck_assert(v.d == 6.5);
  /* the argument of an aggregate call is evaluated per tuple by the operator */
  Value row[4] = {value_string("X", 1), value_double(2.0), value_int(3), value_bool(false)};
  env.attrs = row;
  ck_assert_int_eq(expr_eval(e->a->a->args[0], &env, &v, NULL, 0), 0);
  ck_assert(v.d == 6.0);
}
END_TEST

START_TEST(test_eval_rand_hash) {
  ck_assert(sf_mix64(0) == UINT64_C(0xe220a8397b1dcdaf));
  ck_assert(sf_mix64(UINT64_C(0x9e3779b97f4a7c15)) == UINT64_C(0x6e789e6aa1b965f4));
  ck_assert(ev_int("rand(0)") == INT64_C(7070836379803831727));
  ck_assert(ev_int("rand(42)") == INT64_C(4456085495900499605));
  ck_assert(ev_int("rand(-1)") == INT64_C(7266964230113668128));
  ck_assert(ev_int("1 + rand(seq + 7) % 500") == 93);
  ck_assert(ev_int("hash(0)") == INT64_C(9177345495590673754));
  ck_assert(ev_int("hash(seq)") == INT64_C(8991992829539075175));
  ck_assert(ev_int("hash(-1)") == INT64_C(1138619284740270011));
  ck_assert(ev_int("hash(price)") == INT64_C(1977584568420061821));
  ck_assert(ev_int("hash(0.0)") == INT64_C(3106093370086335323));
  ck_assert(ev_int("hash(-0.0)") == INT64_C(3106093370086335323));
  ck_assert(ev_int("hash(sym)") == INT64_C(8453915636189773607));
  ck_assert(ev_int("hash(\"\")") == INT64_C(1936307494004034047));
  ck_assert(ev_int("hash(flag)") == INT64_C(6063385634696613785));
  Value sym = value_string("IBM", 3), n = value_int(42);
  ck_assert(value_hash(&n, value_hash(&sym, SF_HASH_SEED)) == UINT64_C(1746714011792428962));
  Value nan1 = value_double(NAN), nan2 = value_double(-NAN);
  ck_assert(value_hash(&nan1, 1) == value_hash(&nan2, 1));
}
END_TEST

START_TEST(test_eval_runtime_errors) {
  ck_assert_str_eq(ev_error("vol / 0"), "division by zero");
  ck_assert_str_eq(ev_error("vol % (vol - 10)"), "modulo by zero");
  ck_assert_str_eq(ev_error("int(\"abc\")"), "cannot convert 'abc' to int");
  ck_assert_str_eq(ev_error("int(\"9223372036854775808\")"),
                   "cannot convert '9223372036854775808' to int");
  ck_assert_str_eq(ev_error("int(\" 1\")"), "cannot convert ' 1' to int");
  ck_assert_str_eq(ev_error("int(0.0 / 0.0)"), "cannot convert nan to int");
  ck_assert_str_eq(ev_error("int(1e19)"), "cannot convert 10000000000000000000 to int");
  ck_assert_str_eq(ev_error("int(-1.0 / 0.0)"), "cannot convert -inf to int");
  ck_assert_str_eq(ev_error("int(9223372036854775807.0)"),
                   "cannot convert 9223372036854776000 to int");
  ck_assert_str_eq(ev_error("double(\"x\" + sym)"), "cannot convert 'xIBM' to double");
  ck_assert_str_eq(ev_error("str(1 / 0)"), "division by zero");
}
END_TEST

/* ---- value helpers ---- */

START_TEST(test_value_format_double) {
  ck_assert_str_eq(fmt_double(0.1), "0.1");
  ck_assert_str_eq(fmt_double(1.0), "1");
  ck_assert_str_eq(fmt_double(100.0), "100");
  ck_assert_str_eq(fmt_double(-0.0), "-0");
  ck_assert_str_eq(fmt_double(0.0), "0");
  ck_assert_str_eq(fmt_double(1e21), "1e+21");
  ck_assert_str_eq(fmt_double(1e20), "100000000000000000000");
  ck_assert_str_eq(fmt_double(123.456), "123.456");
  ck_assert_str_eq(fmt_double(-2.5), "-2.5");
  ck_assert_str_eq(fmt_double(0.000001), "0.000001");
  ck_assert_str_eq(fmt_double(1e-7), "1e-7");
  ck_assert_str_eq(fmt_double(-1.5e-7), "-1.5e-7");
  ck_assert_str_eq(fmt_double(1.0 / 3.0), "0.3333333333333333");
  ck_assert_str_eq(fmt_double(0.1 + 0.2), "0.30000000000000004");
  ck_assert_str_eq(fmt_double(9007199254740993.0), "9007199254740992");
  ck_assert_str_eq(fmt_double(5e-324), "5e-324");
  ck_assert_str_eq(fmt_double(DBL_MAX), "1.7976931348623157e+308");
  ck_assert_str_eq(fmt_double(-DBL_MIN), "-2.2250738585072014e-308");
  ck_assert_str_eq(fmt_double(NAN), "nan");
  ck_assert_str_eq(fmt_double(INFINITY), "inf");
  ck_assert_str_eq(fmt_double(-INFINITY), "-inf");
  char small[4];
  ck_assert_uint_eq(value_format_double(123.456, small, sizeof small), 7);
  ck_assert_str_eq(small, "123");
}
END_TEST

START_TEST(test_value_format_double_round_trip) {
  uint64_t x = 1;
  for (int k = 0; k < 20000; k++) {
    x = sf_mix64(x);
    double d;
    memcpy(&d, &x, sizeof d);
    if (isnan(d)) continue;
    char buf[SF_DOUBLE_CHARS];
    size_t n = value_format_double(d, buf, sizeof buf);
    ck_assert_uint_lt(n, SF_DOUBLE_CHARS);
    double back = strtod(buf, NULL);
    ck_assert_msg(memcmp(&back, &d, sizeof d) == 0, "%s does not read back", buf);
    Value v;
    ck_assert_int_eq(value_parse(TYPE_DOUBLE, buf, n, &v, NULL), 0);
    ck_assert(memcmp(&v.d, &d, sizeof d) == 0);
  }
}
END_TEST

START_TEST(test_value_parse) {
  Value v;
  ck_assert_int_eq(value_parse(TYPE_INT, "123,", 3, &v, NULL), 0);
  ck_assert_int_eq(v.type, TYPE_INT);
  ck_assert_int_eq(v.i, 123);
  ck_assert_int_eq(value_parse(TYPE_INT, "+5", 2, &v, NULL), 0);
  ck_assert_int_eq(v.i, 5);
  ck_assert_int_eq(value_parse(TYPE_INT, "-9223372036854775808", 20, &v, NULL), 0);
  ck_assert(v.i == INT64_MIN);
  ck_assert_int_eq(value_parse(TYPE_INT, "9223372036854775807", 19, &v, NULL), 0);
  ck_assert(v.i == INT64_MAX);
  ck_assert_int_eq(value_parse(TYPE_INT, "9223372036854775808", 19, &v, NULL), -1);
  ck_assert_int_eq(value_parse(TYPE_INT, "-9223372036854775809", 20, &v, NULL), -1);
  ck_assert_int_eq(value_parse(TYPE_INT, "12a", 3, &v, NULL), -1);
  ck_assert_int_eq(value_parse(TYPE_INT, "", 0, &v, NULL), -1);
  ck_assert_int_eq(value_parse(TYPE_INT, "-", 1, &v, NULL), -1);
  ck_assert_int_eq(value_parse(TYPE_INT, " 1", 2, &v, NULL), -1);
  ck_assert_int_eq(value_parse(TYPE_DOUBLE, "2.5x", 3, &v, NULL), 0);
  ck_assert(v.type == TYPE_DOUBLE && v.d == 2.5);
  ck_assert_int_eq(value_parse(TYPE_DOUBLE, "1e3", 3, &v, NULL), 0);
  ck_assert(v.d == 1000.0);
  ck_assert_int_eq(value_parse(TYPE_DOUBLE, "-inf", 4, &v, NULL), 0);
  ck_assert(isinf(v.d) && v.d < 0);
  ck_assert_int_eq(value_parse(TYPE_DOUBLE, "nan", 3, &v, NULL), 0);
  ck_assert(isnan(v.d));
  ck_assert_int_eq(value_parse(TYPE_DOUBLE, "1e999", 5, &v, NULL), -1);
  ck_assert_int_eq(value_parse(TYPE_DOUBLE, " 1", 2, &v, NULL), -1);
  ck_assert_int_eq(value_parse(TYPE_DOUBLE, "1 ", 2, &v, NULL), -1);
  ck_assert_int_eq(value_parse(TYPE_DOUBLE, "", 0, &v, NULL), -1);
  char long_text[100];
  memset(long_text, '0', sizeof long_text);
  long_text[1] = '.';
  long_text[99] = '5';
  ck_assert_int_eq(value_parse(TYPE_DOUBLE, long_text, 100, &v, NULL), 0);
  ck_assert(v.d == 5e-98);
  ck_assert_int_eq(value_parse(TYPE_BOOL, "true", 4, &v, NULL), 0);
  ck_assert(v.type == TYPE_BOOL && v.b);
  ck_assert_int_eq(value_parse(TYPE_BOOL, "false", 5, &v, NULL), 0);
  ck_assert(!v.b);
  ck_assert_int_eq(value_parse(TYPE_BOOL, "True", 4, &v, NULL), -1);
  const char *text = "a,b";
  ck_assert_int_eq(value_parse(TYPE_STRING, text, 1, &v, arena), 0);
  ck_assert(v.type == TYPE_STRING && v.s.n == 1 && v.s.p != text && !strcmp(v.s.p, "a"));
  ck_assert_int_eq(value_parse(TYPE_STRING, text, 0, &v, NULL), 0);
  ck_assert(v.s.n == 0 && v.s.p == text);
}
END_TEST

START_TEST(test_value_compare) {
  Value a = value_int(-3), b = value_int(2);
  ck_assert_int_lt(value_compare(&a, &b), 0);
  ck_assert_int_gt(value_compare(&b, &a), 0);
  ck_assert(!value_equal(&a, &b));
  Value z = value_double(0.0), nz = value_double(-0.0), n = value_double(NAN);
  Value big = value_double(INFINITY);
  ck_assert_int_eq(value_compare(&z, &nz), 0);
  ck_assert(value_equal(&n, &n));
  ck_assert_int_gt(value_compare(&n, &big), 0);
  ck_assert_int_lt(value_compare(&big, &n), 0);
  Value s1 = value_string("ab", 2), s2 = value_string("abc", 3), s3 = value_string("b", 1);
  Value s4 = value_string("abX", 2);
  ck_assert_int_lt(value_compare(&s1, &s2), 0);
  ck_assert_int_lt(value_compare(&s2, &s3), 0);
  ck_assert(value_equal(&s1, &s4));
  Value hi = value_string("\xff", 1), lo = value_string("a", 1);
  ck_assert_int_gt(value_compare(&hi, &lo), 0); /* bytes compare unsigned */
  Value f = value_bool(false), t = value_bool(true);
  ck_assert_int_lt(value_compare(&f, &t), 0);
  ck_assert(value_equal(&t, &t));
}
END_TEST

START_TEST(test_value_format) {
  Buf b;
  buf_init(&b);
  Value vs[] = {value_int(-42), value_double(0.5), value_bool(true), value_string("x,\"y", 4),
                value_double(1e21), value_int(INT64_MIN)};
  for (size_t k = 0; k < sizeof vs / sizeof vs[0]; k++) {
    if (k) buf_putc(&b, '|');
    value_format(&vs[k], &b);
  }
  ck_assert_str_eq(b.p, "-42|0.5|true|x,\"y|1e+21|-9223372036854775808");
  ck_assert_uint_eq(b.n, strlen(b.p));
  buf_reset(&b);
  ck_assert_uint_eq(b.n, 0);
  for (int k = 0; k < 1000; k++) buf_puts(&b, "abc");
  ck_assert_uint_eq(b.n, 3000);
  buf_release(&b);
  ck_assert_ptr_null(b.p);
}
END_TEST

static Suite *expr_suite(void) {
  Suite *s = suite_create("expr");
  UNIT_ADD(s, test_parse_literals, setup, teardown);
  UNIT_ADD(s, test_parse_precedence, setup, teardown);
  UNIT_ADD(s, test_parse_round_trip, setup, teardown);
  UNIT_ADD(s, test_parse_whitespace_and_columns, setup, teardown);
  UNIT_ADD(s, test_parse_errors, setup, teardown);
  UNIT_ADD(s, test_parse_error_blank, setup, teardown);
  UNIT_ADD(s, test_parse_error_call, setup, teardown);
  UNIT_ADD(s, test_parse_error_paren, setup, teardown);
  UNIT_ADD(s, test_parse_error_end, setup, teardown);
  UNIT_ADD(s, test_parse_error_trailing, setup, teardown);
  UNIT_ADD(s, test_parse_error_string, setup, teardown);
  UNIT_ADD(s, test_parse_error_string_newline, setup, teardown);
  UNIT_ADD(s, test_parse_error_escape, setup, teardown);
  UNIT_ADD(s, test_parse_error_int_range, setup, teardown);
  UNIT_ADD(s, test_parse_error_int_range_2, setup, teardown);
  UNIT_ADD(s, test_parse_error_int_range_neg, setup, teardown);
  UNIT_ADD(s, test_parse_error_misc, setup, teardown);
  UNIT_ADD(s, test_parse_depth_limit, setup, teardown);
  UNIT_ADD(s, test_parse_depth_far_too_deep, setup, teardown);
  UNIT_ADD(s, test_check_names, setup, teardown);
  UNIT_ADD(s, test_check_name_precedence, setup, teardown);
  UNIT_ADD(s, test_check_unknown_names, setup, teardown);
  UNIT_ADD(s, test_check_seq_not_allowed, setup, teardown);
  UNIT_ADD(s, test_check_side_names, setup, teardown);
  UNIT_ADD(s, test_check_side_name_errors, setup, teardown);
  UNIT_ADD(s, test_eval_side_names, setup, teardown);
  UNIT_ADD(s, test_lets, setup, teardown);
  UNIT_ADD(s, test_check_arithmetic, setup, teardown);
  UNIT_ADD(s, test_check_arithmetic_errors, setup, teardown);
  UNIT_ADD(s, test_check_arithmetic_errors_2, setup, teardown);
  UNIT_ADD(s, test_check_comparisons, setup, teardown);
  UNIT_ADD(s, test_check_equality_error, setup, teardown);
  UNIT_ADD(s, test_check_logical, setup, teardown);
  UNIT_ADD(s, test_check_unary, setup, teardown);
  UNIT_ADD(s, test_check_cond, setup, teardown);
  UNIT_ADD(s, test_check_cond_branches, setup, teardown);
  UNIT_ADD(s, test_check_every_error, setup, teardown);
  UNIT_ADD(s, test_check_functions, setup, teardown);
  UNIT_ADD(s, test_check_function_errors, setup, teardown);
  UNIT_ADD(s, test_check_function_errors_2, setup, teardown);
  UNIT_ADD(s, test_check_function_errors_3, setup, teardown);
  UNIT_ADD(s, test_check_minmax_errors, setup, teardown);
  UNIT_ADD(s, test_check_minmax_outside_aggregate, setup, teardown);
  UNIT_ADD(s, test_check_aggregate_outside, setup, teardown);
  UNIT_ADD(s, test_check_aggregates, setup, teardown);
  UNIT_ADD(s, test_check_aggregate_errors, setup, teardown);
  UNIT_ADD(s, test_check_new_aggregates, setup, teardown);
  UNIT_ADD(s, test_check_window_bounds, setup, teardown);
  UNIT_ADD(s, test_reads_and_is_attr, setup, teardown);
  UNIT_ADD(s, test_eval_int_arithmetic, setup, teardown);
  UNIT_ADD(s, test_eval_int_edges, setup, teardown);
  UNIT_ADD(s, test_eval_double_arithmetic, setup, teardown);
  UNIT_ADD(s, test_eval_comparisons, setup, teardown);
  UNIT_ADD(s, test_eval_logic_short_circuit, setup, teardown);
  UNIT_ADD(s, test_eval_strings, setup, teardown);
  UNIT_ADD(s, test_eval_substr, setup, teardown);
  UNIT_ADD(s, test_eval_conversions, setup, teardown);
  UNIT_ADD(s, test_eval_abs_min_max, setup, teardown);
  UNIT_ADD(s, test_eval_names, setup, teardown);
  UNIT_ADD(s, test_eval_aggregates, setup, teardown);
  UNIT_ADD(s, test_eval_rand_hash, setup, teardown);
  UNIT_ADD(s, test_eval_runtime_errors, setup, teardown);
  UNIT_ADD(s, test_value_format_double, setup, teardown);
  UNIT_ADD(s, test_value_format_double_round_trip, setup, teardown);
  UNIT_ADD(s, test_value_parse, setup, teardown);
  UNIT_ADD(s, test_value_compare, setup, teardown);
  UNIT_ADD(s, test_value_format, setup, teardown);
  return s;
}

int main(void) {
  return unit_run(expr_suite());
}
