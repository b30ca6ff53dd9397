/* test_code.c: the compiled form of expressions (rt/code.c) against the tree walker (rt/eval.c).
 *
 * A differential test: random well-typed expressions over every operator and function, with
 * literals chosen to hit the edges (int extremes, -0.0, nan, infinities, strings that do and do
 * not convert) and names of every kind (attributes, states, seq, i, a named side's o.vol and
 * o.price), are evaluated by expr_eval and by code_eval over many tuples; both must return the
 * same status, the same value (doubles by their bits, strings by their bytes) and the same
 * message. Then what folding must and must not do, by the length of the code. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_helper.h"
#include "eval.h"
#include "sf.h"
#include "value.h"

static const TextOrigin at = {NULL, 1, 1};

/* T(sym string, price double, vol int, flag bool), states total int and mean double. */
static Attr attrs[] = {
  {"sym", TYPE_STRING, 2}, {"price", TYPE_DOUBLE, 3}, {"vol", TYPE_INT, 4}, {"flag", TYPE_BOOL, 5},
};
static Schema schema_t = {"T", attrs, 4, 1};
static StateVar state_total = {.name = "total", .type = TYPE_INT};
static StateVar state_mean = {.name = "mean", .type = TYPE_DOUBLE};
static StateVar *states[] = {&state_total, &state_mean};

static Arena *arena;
static UnitDiags mem; /* the diagnostics of the test being run */

static void setup(void) {
  arena = arena_new();
  unit_diags_open(&mem, "g.xml", DIAG_BY_PLACE);
}

static void teardown(void) {
  unit_diags_close(&mem);
  arena_free(arena);
}

/* The checked expression of text in a Functor-like scope (attributes, states, seq, i). */
static Expr *checked(const char *text) {
  ExprScope s = {.input = &schema_t, .states = states, .nstates = 2, .allow_seq = true, .allow_index = true,
                 .nsides = 1, .side_name = {"o"}, .side = {&schema_t}};
  Expr *e = expr_parse(arena, text, &mem.diag, &at);
  ck_assert_msg(e != NULL, "'%s' does not parse", text);
  Type t = expr_check(e, &s, &mem.diag, &at);
  ck_assert_msg(t != TYPE_NONE, "'%s' does not check: %s", text, unit_diags_text(&mem));
  return e;
}

/* ---- random expressions ---- */

static uint64_t rng;
static uint64_t rnd(void) { return sf_mix64(rng++); }
static int pick(int n) { return (int)(rnd() % (uint64_t)n); }

/* A growing text. */
typedef struct Text {
  char *p;
  size_t n, cap;
} Text;

static void put(Text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char buf[256];
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (t->n + (size_t)n + 1 > t->cap) {
    t->cap = (t->n + (size_t)n + 1) * 2;
    t->p = realloc(t->p, t->cap);
  }
  memcpy(t->p + t->n, buf, (size_t)n + 1);
  t->n += (size_t)n;
}

static void gen(Text *t, Type type, int depth);

static void gen_int(Text *t, int depth) {
  static const char *leaves[] = {"0", "1", "-1", "7", "3", "100", "9223372036854775807",
                                 "(-9223372036854775807 - 1)", "vol", "total", "seq", "i", "-2", "o.vol"};
  int k = depth <= 0 ? 0 : pick(12);
  static const char *ops[] = {"+", "-", "*", "/", "%"};
  switch (k) {
  case 0: case 1: put(t, "%s", leaves[pick(14)]); return;
  case 2: case 3:
    put(t, "("); gen(t, TYPE_INT, depth - 1); put(t, " %s ", ops[pick(5)]); gen(t, TYPE_INT, depth - 1); put(t, ")");
    return;
  case 4: put(t, "-("); gen(t, TYPE_INT, depth - 1); put(t, ")"); return;
  case 5: put(t, "%s(", pick(2) ? "abs" : "rand"); gen(t, TYPE_INT, depth - 1); put(t, ")"); return;
  case 6: {
    static const char *mm[] = {"min", "max"};
    put(t, "%s(", mm[pick(2)]); gen(t, TYPE_INT, depth - 1); put(t, ", "); gen(t, TYPE_INT, depth - 1); put(t, ")");
    return;
  }
  case 7: {
    static const Type from[] = {TYPE_DOUBLE, TYPE_BOOL, TYPE_STRING, TYPE_INT};
    put(t, "int("); gen(t, from[pick(4)], depth - 1); put(t, ")");
    return;
  }
  case 8: put(t, "len("); gen(t, TYPE_STRING, depth - 1); put(t, ")"); return;
  case 9: {
    static const Type any[] = {TYPE_INT, TYPE_DOUBLE, TYPE_STRING, TYPE_BOOL};
    put(t, "hash("); gen(t, any[pick(4)], depth - 1); put(t, ")");
    return;
  }
  default:
    put(t, "("); gen(t, TYPE_BOOL, depth - 1); put(t, " ? "); gen(t, TYPE_INT, depth - 1); put(t, " : ");
    gen(t, TYPE_INT, depth - 1); put(t, ")");
    return;
  }
}

static void gen_double(Text *t, int depth) {
  static const char *leaves[] = {"0.0", "-0.0", "1.5", "0.1", "1e308", "-2.5", "price", "mean", "3.0", "o.price"};
  int k = depth <= 0 ? 0 : pick(10);
  static const char *ops[] = {"+", "-", "*", "/"};
  switch (k) {
  case 0: case 1: put(t, "%s", leaves[pick(10)]); return;
  case 2: case 3:
    put(t, "("); gen(t, TYPE_DOUBLE, depth - 1); put(t, " %s ", ops[pick(4)]); gen(t, TYPE_DOUBLE, depth - 1);
    put(t, ")");
    return;
  case 4: put(t, "-("); gen(t, TYPE_DOUBLE, depth - 1); put(t, ")"); return;
  case 5: put(t, "abs("); gen(t, TYPE_DOUBLE, depth - 1); put(t, ")"); return;
  case 6:
    put(t, "%s(", pick(2) ? "min" : "max"); gen(t, TYPE_DOUBLE, depth - 1); put(t, ", ");
    gen(t, TYPE_DOUBLE, depth - 1); put(t, ")");
    return;
  case 7: {
    static const Type from[] = {TYPE_INT, TYPE_STRING, TYPE_DOUBLE};
    put(t, "double("); gen(t, from[pick(3)], depth - 1); put(t, ")");
    return;
  }
  default:
    put(t, "("); gen(t, TYPE_BOOL, depth - 1); put(t, " ? "); gen(t, TYPE_DOUBLE, depth - 1); put(t, " : ");
    gen(t, TYPE_DOUBLE, depth - 1); put(t, ")");
    return;
  }
}

static void gen_string(Text *t, int depth) {
  static const char *leaves[] = {"\"\"", "\"abc\"", "\"12\"", "\"-7\"", "\"1e3\"", "\"nan\"", "\" 5\"",
                                 "\"-0\"", "\"1e400\"", "\"9223372036854775808\"", "sym",
                                 "\"a string longer than forty bytes, to be cut in messages\""};
  int k = depth <= 0 ? 0 : pick(9);
  switch (k) {
  case 0: case 1: put(t, "%s", leaves[pick(12)]); return;
  case 2: case 3:
    put(t, "("); gen(t, TYPE_STRING, depth - 1); put(t, " + "); gen(t, TYPE_STRING, depth - 1); put(t, ")");
    return;
  case 4: {
    static const Type from[] = {TYPE_INT, TYPE_DOUBLE, TYPE_BOOL, TYPE_STRING};
    put(t, "str("); gen(t, from[pick(4)], depth - 1); put(t, ")");
    return;
  }
  case 5:
    put(t, "substr("); gen(t, TYPE_STRING, depth - 1); put(t, ", "); gen(t, TYPE_INT, depth - 1); put(t, ", ");
    gen(t, TYPE_INT, depth - 1); put(t, ")");
    return;
  case 6:
    put(t, "%s(", pick(2) ? "min" : "max"); gen(t, TYPE_STRING, depth - 1); put(t, ", ");
    gen(t, TYPE_STRING, depth - 1); put(t, ")");
    return;
  default:
    put(t, "("); gen(t, TYPE_BOOL, depth - 1); put(t, " ? "); gen(t, TYPE_STRING, depth - 1); put(t, " : ");
    gen(t, TYPE_STRING, depth - 1); put(t, ")");
    return;
  }
}

static void gen_bool(Text *t, int depth) {
  static const char *leaves[] = {"true", "false", "flag"};
  static const char *cmp[] = {"==", "!=", "<", "<=", ">", ">="};
  int k = depth <= 0 ? 0 : pick(8);
  switch (k) {
  case 0: put(t, "%s", leaves[pick(3)]); return;
  case 1: case 2: {
    static const Type any[] = {TYPE_INT, TYPE_DOUBLE, TYPE_STRING};
    Type ty = any[pick(3)];
    put(t, "("); gen(t, ty, depth - 1); put(t, " %s ", cmp[pick(6)]); gen(t, ty, depth - 1); put(t, ")");
    return;
  }
  case 3:
    put(t, "("); gen(t, TYPE_BOOL, depth - 1); put(t, " %s ", pick(2) ? "==" : "!="); gen(t, TYPE_BOOL, depth - 1);
    put(t, ")");
    return;
  case 4: case 5:
    put(t, "("); gen(t, TYPE_BOOL, depth - 1); put(t, " %s ", pick(2) ? "&&" : "||"); gen(t, TYPE_BOOL, depth - 1);
    put(t, ")");
    return;
  case 6: put(t, "!("); gen(t, TYPE_BOOL, depth - 1); put(t, ")"); return;
  default:
    put(t, "("); gen(t, TYPE_BOOL, depth - 1); put(t, " ? "); gen(t, TYPE_BOOL, depth - 1); put(t, " : ");
    gen(t, TYPE_BOOL, depth - 1); put(t, ")");
    return;
  }
}

/* A string argument of the functions added with functions.def: another expression, or a text
 * made for searching, splitting and case changes (separators, repeats, non-ASCII bytes). */
static void gen_text(Text *t, int depth) {
  static const char *texts[] = {"\",\"", "\"a,b,,c\"", "\"aa\"", "\"aaaa\"", "\"h\xc3\xa9LLo\"", "\"\xc3\xa9\"", "\"B\"",
                                "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\""};
  if (pick(2)) put(t, "%s", texts[pick(8)]);
  else gen(t, TYPE_STRING, depth - 1);
}

/* A call of a function of functions.def that the cases above do not call, of type `type`; false
 * when there is none of that type. */
static bool gen_function(Text *t, Type type, int depth) {
  static const char *const s1[] = {"lower", "upper"};
  static const char *const s2b[] = {"contains", "starts_with", "ends_with"};
  /* patterns of 2 groups or fewer (test_functions has those over the match limit: each costs
   * milliseconds) */
  static const char *const patterns[] = {"\"a\"", "\"^(a+)(,)?\"", "\"(x)?B|(\xc3)\"", "\"[^a]*$\"",
                                         "\"^(a)|(b)\""};
  switch (type) {
  case TYPE_INT: {
    static const char *const parts[] = {"year", "month", "day", "hour", "minute", "second"};
    if (pick(3)) {
      put(t, "%s(", parts[pick(6)]); gen(t, TYPE_INT, depth - 1); put(t, ")");
    } else {
      put(t, "find("); gen_text(t, depth); put(t, ", "); gen_text(t, depth); put(t, ")");
    }
    return true;
  }
  case TYPE_STRING:
    switch (pick(5)) {
    case 4:
    {
      static const int groups[] = {0, 2, 2, 0, 2};
      int k = pick(5);
      put(t, "regex_extract("); gen_text(t, depth); put(t, ", %s, ", patterns[k]);
      if (pick(2)) put(t, "%d", pick(groups[k] + 1));
      else { /* not a literal, which the checker would refuse when not a group: a fault then */
        put(t, "(0 + "); gen(t, TYPE_INT, depth - 1); put(t, ")");
      }
      put(t, ")");
      return true;
    }
    case 3: {
      static const char *const formats[] = {"\"%Y-%m-%d %H:%M:%S\"", "\"%j%%\"", "\"\"", "\"%Y\""};
      put(t, "date_format("); gen(t, TYPE_INT, depth - 1); put(t, ", ");
      if (pick(2)) put(t, "%s", formats[pick(4)]);
      else gen(t, TYPE_STRING, depth - 1); /* a fault when it is not a format */
      put(t, ")");
      return true;
    }
    case 0: put(t, "%s(", s1[pick(2)]); gen_text(t, depth); put(t, ")"); return true;
    case 1:
      put(t, "replace("); gen_text(t, depth); put(t, ", "); gen_text(t, depth); put(t, ", "); gen_text(t, depth);
      put(t, ")");
      return true;
    default:
      put(t, "split_part("); gen_text(t, depth); put(t, ", "); gen_text(t, depth); put(t, ", ");
      if (pick(2)) put(t, "%d", pick(9) - 4);
      else gen(t, TYPE_INT, depth - 1);
      put(t, ")");
      return true;
    }
  case TYPE_BOOL:
    if (pick(3) == 0) { /* x in (v, ...), one to three values of x's type */
      static const Type any[] = {TYPE_INT, TYPE_DOUBLE, TYPE_STRING, TYPE_BOOL};
      Type ty = any[pick(4)];
      int n = 1 + pick(3);
      put(t, "("); gen(t, ty, depth - 1); put(t, " in (");
      for (int k = 0; k < n; k++) {
        if (k) put(t, ", ");
        gen(t, ty, depth - 1);
      }
      put(t, "))");
      return true;
    }
    if (pick(3) == 0) {
      put(t, "regex_match("); gen_text(t, depth); put(t, ", %s)", patterns[pick(5)]);
      return true;
    }
    put(t, "%s(", s2b[pick(3)]); gen_text(t, depth); put(t, ", "); gen_text(t, depth); put(t, ")");
    return true;
  default:
    return false;
  }
}

static void gen(Text *t, Type type, int depth) {
  if (depth > 0 && pick(6) == 0 && gen_function(t, type, depth)) return;
  switch (type) {
  case TYPE_INT: gen_int(t, depth); break;
  case TYPE_DOUBLE: gen_double(t, depth); break;
  case TYPE_STRING: gen_string(t, depth); break;
  default: gen_bool(t, depth); break;
  }
}

/* ---- comparing the two evaluators ---- */

static bool same_value(const Value *a, const Value *b) {
  if (a->type != b->type) return false;
  switch (a->type) {
  case TYPE_INT: return a->i == b->i;
  case TYPE_DOUBLE: return !memcmp(&a->d, &b->d, sizeof a->d);
  case TYPE_BOOL: return a->b == b->b;
  default: return a->s.n == b->s.n && !memcmp(a->s.p, b->s.p, a->s.n);
  }
}

/* Evaluates e both ways over env; fails the test naming text when they differ. Returns the status. */
static int compare(const char *text, const Expr *e, const Code *c, const EvalEnv *env) {
  Value tv, cv;
  char terr[256] = "", cerr[256] = "";
  int trc = expr_eval(e, env, &tv, terr, sizeof terr);
  int crc = code_eval(c, env, &cv, cerr, sizeof cerr);
  ck_assert_msg(trc == crc, "'%s': expr_eval returned %d (%s), code_eval %d (%s)", text, trc, terr, crc, cerr);
  if (trc == 0)
    ck_assert_msg(same_value(&tv, &cv), "'%s': the values differ", text);
  else
    ck_assert_msg(!strcmp(terr, cerr), "'%s': expr_eval says '%s', code_eval '%s'", text, terr, cerr);
  return trc;
}

/* Tuples of edge values the random expressions run over. */
static const int64_t ints[] = {0, 1, -1, 7, INT64_MAX, INT64_MIN, 100};
static const double doubles[] = {0.0, -0.0, 2.5, -1e300, 1e300, 0.1, 3.0};
static const char *strs[] = {"IBM", "", "42", "-3.5", "inf", "x,y"};

/* A named side `o` (ExprScope.side) of schema T: o.vol and o.price read side_row. */
static Value side_row[4];
static const Value *const side_rows[1] = {side_row};

static void set_side_row(int64_t vol, double price) {
  side_row[0] = value_string("o", 1);
  side_row[1] = value_double(price);
  side_row[2] = value_int(vol);
  side_row[3] = value_bool(false);
}

START_TEST(test_random_expressions) {
  rng = 12345;
  double nan = 0.0 / 0.0, inf = 1.0 / 0.0;
  int faults = 0, values = 0;
  Text t = {0};
  for (int n = 0; n < 6000; n++) {
    static const Type types[] = {TYPE_INT, TYPE_DOUBLE, TYPE_STRING, TYPE_BOOL};
    t.n = 0;
    put(&t, "%s", "");
    gen(&t, types[n % 4], 1 + pick(5));
    Expr *e = checked(t.p);
    Code *c = code_compile(e, arena);
    for (int k = 0; k < 12; k++) {
      const char *s = strs[pick(6)];
      double d = k == 10 ? nan : k == 11 ? -inf : doubles[pick(7)];
      Value tuple[4] = {value_string(s, strlen(s)), value_double(d), value_int(ints[pick(7)]), value_bool(pick(2))};
      Value st[2] = {value_int(ints[pick(7)]), value_double(doubles[pick(7)])};
      set_side_row(ints[pick(7)], doubles[pick(7)]);
      EvalEnv env = {.attrs = tuple, .states = st, .seq = ints[pick(7)], .index = pick(5), .sides = side_rows,
                     .scratch = arena};
      if (compare(t.p, e, c, &env)) faults++;
      else values++;
    }
    if (n % 500 == 499) { /* keep the arena small */
      arena_free(arena);
      arena = arena_new();
    }
  }
  free(t.p);
  /* both outcomes were exercised plenty */
  ck_assert_int_gt(faults, 2000);
  ck_assert_int_gt(values, 20000);
}
END_TEST

static char *nest(const char *head, int reps, const char *leaf, const char *tail);

/* code_eval_run (and, every other expression, code_eval_run_to with a stride of three Values)
 * over runs of random rows (attributes and seq per row) against code_eval row by row: the same
 * values for every row before the first fault, and the first fault at the row where code_eval
 * first faults. Runs of 1 to CODE_RUN_MAX rows; the values are compared after the
 * whole run, so strings made in the scratch arena must all survive it. */
START_TEST(test_random_runs) {
  rng = 777;
  double nan = 0.0 / 0.0, inf = 1.0 / 0.0;
  enum { ROWS = CODE_RUN_MAX };
  static Value tuples[ROWS][4];
  static const Value *rows[ROWS];
  static int64_t seqs[ROWS];
  static Value got[ROWS], wide[ROWS][3];
  int faulted = 0, late = 0, whole = 0, jumps = 0;
  Text t = {0};
  for (int n = 0; n < 3000; n++) {
    static const Type types[] = {TYPE_INT, TYPE_DOUBLE, TYPE_STRING, TYPE_BOOL};
    t.n = 0;
    put(&t, "%s", "");
    gen(&t, types[n % 4], 1 + pick(5));
    Expr *e = checked(t.p);
    Code *c = code_compile(e, arena);
    if (strpbrk(t.p, "&|?")) jumps++;
    int len = n % 10 == 0 ? ROWS : 1 + pick(n % 3 ? 8 : 64);
    for (int r = 0; r < len; r++) {
      const char *s = strs[pick(6)];
      int k = pick(14);
      double d = k == 12 ? nan : k == 13 ? -inf : doubles[pick(7)];
      /* mostly tame rows, so that faults come late in a run too */
      int64_t v = pick(4) ? pick(100) - 50 : ints[pick(7)];
      tuples[r][0] = value_string(s, strlen(s));
      tuples[r][1] = value_double(pick(3) ? (double)(pick(100) - 50) / 4 : d);
      tuples[r][2] = value_int(v);
      tuples[r][3] = value_bool(pick(2));
      rows[r] = tuples[r];
      seqs[r] = pick(3) ? r : ints[pick(7)];
    }
    Value st[2] = {value_int(ints[pick(7)]), value_double(doubles[pick(7)])};
    set_side_row(ints[pick(7)], doubles[pick(7)]);
    EvalEnv env = {.states = st, .index = pick(5), .sides = side_rows, .scratch = arena};
    int first;
    if (n % 2) { /* code_eval_run_to, into the middle Value of each row of wide: the others untouched */
      for (int r = 0; r < ROWS; r++)
        for (int k = 0; k < 3; k++) wide[r][k] = value_int(-7 - k);
      first = code_eval_run_to(c, &env, rows, seqs, len, &wide[0][1], sizeof wide[0]);
      for (int r = 0; r < ROWS; r++) {
        ck_assert_msg(wide[r][0].type == TYPE_INT && wide[r][0].i == -7 && wide[r][2].type == TYPE_INT &&
                      wide[r][2].i == -9, "'%s': code_eval_run_to wrote outside row %d's value", t.p, r);
        if (r < first) got[r] = wide[r][1];
        else ck_assert_msg(wide[r][1].type == TYPE_INT && wide[r][1].i == -8, "'%s': row %d written", t.p, r);
      }
    } else
      first = code_eval_run(c, &env, rows, seqs, len, got);
    ck_assert_msg(first >= 0 && first <= len, "'%s': code_eval_run returned %d of %d", t.p, first, len);
    int want = len;
    for (int r = 0; r < len; r++) {
      EvalEnv one = env;
      one.attrs = rows[r];
      one.seq = seqs[r];
      Value v;
      if (code_eval(c, &one, &v, NULL, 0)) {
        want = r;
        break;
      }
      ck_assert_msg(r < first, "'%s': row %d of %d evaluates, code_eval_run stopped at %d", t.p, r, len, first);
      ck_assert_msg(same_value(&v, &got[r]), "'%s': row %d of %d: the values differ", t.p, r, len);
    }
    ck_assert_msg(first == want, "'%s': code_eval_run says row %d faults first, code_eval row %d", t.p, first, want);
    if (first < len) faulted++;
    else whole++;
    if (first > 0 && first < len) late++;
    if (n % 100 == 99) {
      arena_free(arena);
      arena = arena_new();
    }
  }
  free(t.p);
  ck_assert_int_gt(faulted, 200);
  ck_assert_int_gt(late, 40); /* faults after some rows evaluated */
  ck_assert_int_gt(whole, 500);
  ck_assert_int_gt(jumps, 500);
}
END_TEST

/* The same rows without per-row attributes or seqs (attrs and seqs NULL: env's for every row), and
 * with code whose registers are too many for a run (row by row). */
START_TEST(test_run_shared_env) {
  const char *texts[] = {"vol + seq", "sym + str(vol)", "flag ? price * 2.0 : -price", "seq", "sym", "1 / (seq - 3)"};
  Value tuple[4] = {value_string("IBM", 3), value_double(2.5), value_int(10), value_bool(true)};
  Value got[5];
  for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
    Expr *e = checked(texts[k]);
    Code *c = code_compile(e, arena);
    EvalEnv env = {.attrs = tuple, .seq = 3, .scratch = arena};
    int64_t seqs[5] = {0, 1, 2, 3, 4};
    Value want;
    int rc = code_eval(c, &env, &want, NULL, 0);
    ck_assert_int_eq(code_eval_run(c, &env, NULL, NULL, 5, got), (rc ? 0 : 5));
    for (int r = 0; rc == 0 && r < 5; r++) ck_assert_msg(same_value(&got[r], &want), "'%s' row %d", texts[k], r);
    int stop = code_eval_run(c, &env, NULL, seqs, 5, got); /* seq 3 faults the last text */
    ck_assert_int_eq(stop, k == 5 ? 3 : 5);
  }
  char *deep = nest("vol + (", 100, "vol", ")");
  Code *c = code_compile(checked(deep), arena);
  EvalEnv env = {.attrs = tuple, .scratch = arena};
  ck_assert_int_eq(code_eval_run(c, &env, NULL, NULL, 5, got), 5);
  ck_assert_int_eq(got[4].i, 1010);
  free(deep);
}
END_TEST

/* Division and modulo by a constant run as a multiplication (a magic number per divisor): every
 * divisor class (small, powers of two, negative, huge) over dividends at the edges and at random. */
START_TEST(test_division_by_constants) {
  rng = 777;
  int64_t divisors[200];
  int nd = 0;
  static const int64_t fixed[] = {2, 3, 5, 6, 7, 10, 11, 100, 641, 1000, 1000000007, -2, -3, -7, -10, -1000,
                                  INT64_MAX, -INT64_MAX, INT64_MAX - 1, (INT64_C(1) << 62) + 1, 1, -1, 0};
  for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) divisors[nd++] = fixed[k];
  for (int k = 1; k < 63; k++) {
    divisors[nd++] = INT64_C(1) << k;
    divisors[nd++] = -(INT64_C(1) << k);
  }
  while (nd < 200) {
    int64_t d = (int64_t)(rnd() >> (rnd() % 63));
    divisors[nd++] = rnd() % 2 ? d : -d;
  }
  int64_t dividends[64] = {0, 1, -1, 2, -2, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1};
  for (int k = 9; k < 64; k++) dividends[k] = (int64_t)(rnd() >> (rnd() % 64));
  char text[96];
  for (int i = 0; i < nd; i++) {
    for (int op = 0; op < 2; op++) {
      snprintf(text, sizeof text, "vol %s %s%lld", op ? "%" : "/", divisors[i] < 0 ? "-" : "",
               divisors[i] < 0 ? (long long)-(uint64_t)divisors[i] : (long long)divisors[i]);
      if (divisors[i] == INT64_MIN) continue;
      Expr *e = checked(text);
      Code *c = code_compile(e, arena);
      for (int k = 0; k < 64; k++) {
        for (int64_t delta = -1; delta <= 1; delta++) {
          /* around the dividend and around a multiple of the divisor */
          int64_t n = (int64_t)((uint64_t)dividends[k] + (uint64_t)delta);
          Value tuple[4] = {value_string("", 0), value_double(0), value_int(n), value_bool(false)};
          EvalEnv env = {.attrs = tuple, .scratch = arena};
          compare(text, e, c, &env);
          if (divisors[i] != 0) {
            int64_t m = (int64_t)((uint64_t)(dividends[k] / (divisors[i] == -1 ? 1 : divisors[i])) * (uint64_t)divisors[i]);
            tuple[2] = value_int((int64_t)((uint64_t)m + (uint64_t)delta));
            compare(text, e, c, &env);
          }
        }
      }
    }
  }
}
END_TEST

/* Aggregate calls read env->aggs in both forms. */
START_TEST(test_aggregate_calls) {
  ExprScope s = {.input = &schema_t, .allow_aggregates = true};
  const char *text = "sum(price * double(vol)) / double(sum(vol)) + double(count()) + (max(sym) < \"J\" ? 1.0 : 2.0)";
  Expr *e = expr_parse(arena, text, &mem.diag, &at);
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_DOUBLE);
  Value aggs[4] = {value_double(30.0), value_int(12), value_int(4), value_string("IBM", 3)};
  EvalEnv env = {.aggs = aggs, .scratch = arena};
  Code *c = code_compile(e, arena);
  ck_assert_int_eq(compare(text, e, c, &env), 0);
  Value v;
  code_eval(c, &env, &v, NULL, 0);
  ck_assert(v.d == 7.5);
}
END_TEST

/* The aggregate slots of the time windows and the new functions (which this tree's checker does
 * not know yet: calls it knows are turned into them) read env->aggs in both forms too. */
START_TEST(test_new_aggregate_calls) {
  ExprScope s = {.input = &schema_t, .allow_aggregates = true};
  const char *text = "count() + sum(vol) * 10 + first(vol) * 100 + last(vol) * 1000 + min(vol) * 10000";
  Expr *e = expr_parse(arena, text, &mem.diag, &at);
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_INT);
  static const ExprFunc now[] = {FUNC_WINDOW_START, FUNC_WINDOW_END, FUNC_COUNT_DISTINCT, FUNC_ARG_MAX, FUNC_ARG_MIN};
  static const ExprFunc was[] = {FUNC_COUNT, FUNC_SUM, FUNC_FIRST, FUNC_LAST, FUNC_AMIN};
  /* the calls, found by what they were, down the left spine of the sums: each term is a call or
   * a call times a literal */
  int changed = 0;
  for (Expr *x = e; x; x = x->kind == EXPR_BINARY && x->op == OP_ADD ? x->a : NULL) {
    Expr *term = x->kind == EXPR_BINARY && x->op == OP_ADD ? x->b : x;
    Expr *call = term->kind == EXPR_BINARY ? term->a : term;
    for (int k = 0; k < 5; k++)
      if (call->kind == EXPR_CALL && call->func == was[k]) {
        call->func = now[k];
        changed++;
        break;
      }
  }
  ck_assert_int_eq(changed, 5);
  Value aggs[5];
  for (int k = 0; k < 5; k++) aggs[k] = value_int(k + 1);
  EvalEnv env = {.aggs = aggs, .scratch = arena};
  Code *c = code_compile(e, arena);
  ck_assert_int_eq(compare(text, e, c, &env), 0);
  Value v;
  code_eval(c, &env, &v, NULL, 0);
  ck_assert_int_eq(v.i, 54321);
}
END_TEST

/* Returns the code of text and checks its length. */
static Code *compiled(const char *text, int length) {
  Code *c = code_compile(checked(text), arena);
  ck_assert_msg(code_length(c) == length, "'%s': %d instructions, want %d", text, code_length(c), length);
  return c;
}

static Value run(const Code *c, char *err) {
  Value tuple[4] = {value_string("IBM", 3), value_double(2.5), value_int(10), value_bool(true)};
  Value st[2] = {value_int(7), value_double(1.5)};
  EvalEnv env = {.attrs = tuple, .states = st, .seq = 42, .index = 3, .scratch = arena};
  Value v = value_int(-99);
  err[0] = 0;
  if (code_eval(c, &env, &v, err, 128)) v = value_int(-99);
  return v;
}

START_TEST(test_folding) {
  char err[128];
  /* constants fold away, names are read in place */
  ck_assert_int_eq(run(compiled("1 + 2 * 3", 0), err).i, 7);
  ck_assert_str_eq(run(compiled("str(1.5) + \"x\" + str(-0.0)", 0), err).s.p, "1.5x-0");
  ck_assert_int_eq(run(compiled("vol", 0), err).i, 10);
  ck_assert_int_eq(run(compiled("vol * (2 + 3)", 1), err).i, 50);
  ck_assert_int_eq(run(compiled("seq % 100", 1), err).i, 42);
  ck_assert_int_eq(run(compiled("i", 0), err).i, 3);
  /* a constant condition keeps one branch, even one that could fault */
  ck_assert_int_eq(run(compiled("true ? vol : 1 / 0", 0), err).i, 10);
  ck_assert_int_eq(run(compiled("1 < 2 && vol > 3", 1), err).b, true);
  ck_assert_int_eq(run(compiled("false && vol / 0 > 1", 0), err).b, false);
  ck_assert_int_eq(run(compiled("true || vol / 0 > 1", 0), err).b, true);
  /* a constant that faults is not folded: it faults when evaluated, with the tree walker's message */
  run(compiled("1 / 0", 1), err);
  ck_assert_str_eq(err, "division by zero");
  run(compiled("vol + int(\"abc\")", 2), err);
  ck_assert_str_eq(err, "cannot convert 'abc' to int");
  ck_assert_int_eq(run(compiled("flag ? vol : 1 % 0", 4), err).i, 10);
  ck_assert_str_eq(err, "");
  run(compiled("!flag ? vol : 1 % 0", 5), err);
  ck_assert_str_eq(err, "modulo by zero");
  /* nor does one that overflows: no wrapped value is folded in */
  run(compiled("9223372036854775807 + 1", 1), err);
  ck_assert_str_eq(err, "integer overflow of '+'");
  run(compiled("vol + abs(-9223372036854775808)", 2), err);
  ck_assert_str_eq(err, "integer overflow of abs()");
  ck_assert_int_eq(run(compiled("flag ? vol : -9223372036854775808 / -1", 4), err).i, 10);
  ck_assert_str_eq(err, "");
  ck_assert_int_eq(run(compiled("-9223372036854775807 - 1", 0), err).i, INT64_MIN);
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

/* Expressions of EXPR_MAX_DEPTH levels, the deepest the parser accepts, compile and evaluate (both
 * recursive) to the right value, with vol = 10 and flag true. */
START_TEST(test_deepest_expressions) {
  static const struct {
    const char *head, *leaf, *tail;
    int reps;
    Value want;
  } deep[] = {
    {"vol + ", "vol", "", 999, {.type = TYPE_INT, .i = 10000}},
    {"vol - (", "vol - vol", ")", 998, {.type = TYPE_INT, .i = 0}},
    {"vol == 0 ? 1 : ", "vol * 3", "", 998, {.type = TYPE_INT, .i = 30}},
    {"(", "vol", ")", 999, {.type = TYPE_INT, .i = 10}},
    {"!", "flag", "", 999, {.type = TYPE_BOOL, .b = false}},
    {"-", "vol", "", 999, {.type = TYPE_INT, .i = -10}},
    {"abs(", "vol - 11", ")", 998, {.type = TYPE_INT, .i = 1}},
    {"str(", "vol", ")", 999, {.type = TYPE_STRING, .s = {"10", 2}}},
  };
  for (size_t k = 0; k < sizeof deep / sizeof deep[0]; k++) {
    char *text = nest(deep[k].head, deep[k].reps, deep[k].leaf, deep[k].tail);
    Expr *e = checked(text);
    ck_assert_int_eq(e->depth, EXPR_MAX_DEPTH);
    Value tuple[4] = {value_string("IBM", 3), value_double(2.5), value_int(10), value_bool(true)};
    EvalEnv env = {.attrs = tuple, .scratch = arena};
    Code *c = code_compile(e, arena);
    ck_assert_int_eq(compare(text, e, c, &env), 0);
    Value v;
    ck_assert_int_eq(code_eval(c, &env, &v, NULL, 0), 0);
    ck_assert_msg(same_value(&v, &deep[k].want), "deep[%zu]: a wrong value", k);
    free(text);
  }
}
END_TEST

static Suite *code_suite(void) {
  Suite *s = suite_create("code");
  TCase *tc = unit_case(s, "code", setup, teardown, 300);
  tcase_add_test(tc, test_random_expressions);
  tcase_add_test(tc, test_random_runs);
  tcase_add_test(tc, test_run_shared_env);
  tcase_add_test(tc, test_division_by_constants);
  tcase_add_test(tc, test_aggregate_calls);
  tcase_add_test(tc, test_new_aggregate_calls);
  tcase_add_test(tc, test_folding);
  tcase_add_test(tc, test_deepest_expressions);
  return s;
}

int main(void) {
  return unit_run(code_suite());
}
