/* test_functions.c: the built-in scalar functions of xform/functions.def at their edges: their
 * type rules and diagnostics, and their values and faults, each evaluated by the tree walker
 * (expr_eval), the compiled form (code_eval) and the compiled form over a run (code_eval_run),
 * which must agree. The arguments are attributes of a tuple (so that nothing folds), unless a
 * function wants a literal. Expected values were computed independently with python3 (each
 * block says how), never by sf. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_helper.h"
#include "eval.h"
#include "sf.h"
#include "value.h"

enum { LINE = 4 };
static const TextOrigin at = {NULL, LINE, 1};

/* T(a string, b string, c string, n int, ms int, d double) */
static Attr attrs[] = {
  {"a", TYPE_STRING, 2}, {"b", TYPE_STRING, 3}, {"c", TYPE_STRING, 4},
  {"n", TYPE_INT, 5},    {"ms", TYPE_INT, 6},   {"d", TYPE_DOUBLE, 7},
};
static Schema schema_t = {"T", attrs, 6, 1};

static Arena *arena;
static UnitDiags mem;

static void setup(void) {
  arena = arena_new();
  unit_diags_open(&mem, "g.xml", DIAG_BY_PLACE);
}

static void teardown(void) {
  unit_diags_close(&mem);
  arena_free(arena);
}

/* The tuple the next evaluation reads. */
static Value tuple[6];

static void set_strings(const char *a, size_t an, const char *b, size_t bn, const char *c, size_t cn) {
  tuple[0] = value_string(a, an);
  tuple[1] = value_string(b, bn);
  tuple[2] = value_string(c, cn);
}

static Expr *checked(const char *text) {
  ExprScope s = {.input = &schema_t};
  Expr *e = expr_parse(arena, text, &mem.diag, &at);
  ck_assert_msg(e != NULL, "'%s' does not parse: %s", text, unit_diags_text(&mem));
  ck_assert_msg(expr_check(e, &s, &mem.diag, &at) != TYPE_NONE, "'%s' does not check: %s", text,
                unit_diags_text(&mem));
  return e;
}

static bool same_value(const Value *x, const Value *y) {
  if (x->type != y->type) return false;
  switch (x->type) {
  case TYPE_STRING: return x->s.n == y->s.n && !memcmp(x->s.p, y->s.p, x->s.n);
  case TYPE_BOOL: return x->b == y->b;
  default: return x->i == y->i; /* an int, or a double's bits */
  }
}

/* Evaluates text over tuple[] three ways; returns their common status, with the value in *out or
 * the message in err. */
static int eval3(const char *text, Value *out, char *err, size_t errlen) {
  Expr *e = checked(text);
  EvalEnv env = {.attrs = tuple, .scratch = arena};
  char terr[256] = "", cerr[256] = "";
  Value tv, cv, rv[3];
  int trc = expr_eval(e, &env, &tv, terr, sizeof terr);
  Code *code = code_compile(e, arena);
  int crc = code_eval(code, &env, &cv, cerr, sizeof cerr);
  ck_assert_msg(trc == crc, "'%s': expr_eval returned %d (%s), code_eval %d (%s)", text, trc, terr, crc, cerr);
  int nrc = code_eval_run(code, &env, NULL, NULL, 3, rv);
  ck_assert_msg(nrc == (trc ? 0 : 3), "'%s': code_eval_run returned %d", text, nrc);
  if (trc) {
    ck_assert_msg(!strcmp(terr, cerr), "'%s': expr_eval says '%s', code_eval '%s'", text, terr, cerr);
    snprintf(err, errlen, "%s", terr);
    return -1;
  }
  ck_assert_msg(same_value(&tv, &cv), "'%s': expr_eval and code_eval differ", text);
  for (int r = 0; r < 3; r++) ck_assert_msg(same_value(&tv, &rv[r]), "'%s': code_eval_run differs", text);
  *out = tv;
  return 0;
}

static Value ev(const char *text) {
  char err[256];
  Value v;
  ck_assert_msg(eval3(text, &v, err, sizeof err) == 0, "'%s' fails: %s", text, err);
  return v;
}

static void ck_string(const char *text, const char *want, size_t wn) {
  Value v = ev(text);
  ck_assert_int_eq(v.type, TYPE_STRING);
  ck_assert_msg(v.s.n == wn && !memcmp(v.s.p, want, wn), "'%s' gave '%.*s' (%zu bytes), not '%.*s'", text,
                (int)v.s.n, v.s.p, v.s.n, (int)wn, want);
}

static int64_t ev_int(const char *text) {
  Value v = ev(text);
  ck_assert_int_eq(v.type, TYPE_INT);
  return v.i;
}

static bool ev_bool(const char *text) {
  Value v = ev(text);
  ck_assert_int_eq(v.type, TYPE_BOOL);
  return v.b;
}

static const char *ev_error(const char *text) {
  static char err[256];
  Value v;
  ck_assert_msg(eval3(text, &v, err, sizeof err) == -1, "'%s' does not fail", text);
  return err;
}

/* The diagnostics of checking text (which must fail), those before forgotten. */
static const char *check_error(const char *text) {
  unit_diags_close(&mem);
  unit_diags_open(&mem, "g.xml", DIAG_BY_PLACE);
  ExprScope s = {.input = &schema_t};
  Expr *e = expr_parse(arena, text, &mem.diag, &at);
  ck_assert_msg(e != NULL, "'%s' does not parse: %s", text, unit_diags_text(&mem));
  ck_assert_int_eq(expr_check(e, &s, &mem.diag, &at), TYPE_NONE);
  return unit_diags_text(&mem);
}

#define LIT(s) s, sizeof s - 1

/* ---- strings ---- */

#define STR_CASE(s, lo, up)                     \
  do {                                          \
    set_strings(LIT(s), LIT(""), LIT(""));      \
    ck_string("lower(a)", LIT(lo));             \
    ck_string("upper(a)", LIT(up));             \
  } while (0)

START_TEST(test_lower_upper) {
  /* python3: bytes.lower(), bytes.upper() (ASCII only) */
  STR_CASE("", "", "");
  STR_CASE("Hello, World", "hello, world", "HELLO, WORLD");
  STR_CASE("h\xc3""\xa9""LLo \xc9""t\xe9"" Z[`@", "h\xc3""\xa9""llo \xc9""t\xe9"" z[`@", "H\xc3""\xa9""LLO \xc9""T\xe9"" Z[`@");
  STR_CASE("x\x00""Yz", "x\x00""yz", "X\x00""YZ");
}
END_TEST

#define SEARCH_CASE(s, t, has, starts, ends, where)                                         \
  do {                                                                                      \
    set_strings(LIT(s), LIT(t), LIT(""));                                                   \
    ck_assert_msg(ev_bool("contains(a, b)") == (has), "contains(%s, %s)", #s, #t);          \
    ck_assert_msg(ev_bool("starts_with(a, b)") == (starts), "starts_with(%s, %s)", #s, #t); \
    ck_assert_msg(ev_bool("ends_with(a, b)") == (ends), "ends_with(%s, %s)", #s, #t);       \
    ck_assert_msg(ev_int("find(a, b)") == (where), "find(%s, %s)", #s, #t);                 \
  } while (0)

START_TEST(test_search) {
  /* python3: t in s, s.startswith(t), s.endswith(t), s.find(t) on bytes */
  SEARCH_CASE("", "", 1, 1, 1, 0);
  SEARCH_CASE("abc", "", 1, 1, 1, 0);
  SEARCH_CASE("", "a", 0, 0, 0, -1);
  SEARCH_CASE("abc", "abc", 1, 1, 1, 0);
  SEARCH_CASE("abc", "abcd", 0, 0, 0, -1);
  SEARCH_CASE("abcabc", "ca", 1, 0, 0, 2);
  SEARCH_CASE("aaaa", "aa", 1, 1, 1, 0);
  SEARCH_CASE("h\xc3""\xa9""llo", "\xa9""l", 1, 0, 0, 2);
  SEARCH_CASE("x\x00""y", "\x00""y", 1, 0, 1, 1);
  SEARCH_CASE("abab", "bab", 1, 0, 1, 1);
  SEARCH_CASE("abc", "C", 0, 0, 0, -1);
}
END_TEST

#define REPLACE_CASE(s, t, u, r)            \
  do {                                      \
    set_strings(LIT(s), LIT(t), LIT(u));    \
    ck_string("replace(a, b, c)", LIT(r));  \
  } while (0)

START_TEST(test_replace) {
  /* python3: s.replace(t, u) on bytes, s itself when t is empty (python would insert u between
   * every byte) */
  REPLACE_CASE("", "", "x", "");
  REPLACE_CASE("abc", "", "x", "abc");
  REPLACE_CASE("aaaa", "aa", "b", "bb");
  REPLACE_CASE("aaa", "aa", "", "a");
  REPLACE_CASE("abcabc", "b", "XYZ", "aXYZcaXYZc");
  REPLACE_CASE("abc", "d", "e", "abc");
  REPLACE_CASE("h\xc3""\xa9""llo", "\xc3""\xa9""", "e", "hello");
  REPLACE_CASE("abc", "abc", "", "");
  REPLACE_CASE("a.b.c", ".", "::", "a::b::c");
}
END_TEST

START_TEST(test_replace_limit) {
  /* 2^28 bytes is the limit: 2^14 a's, each replaced by 2^14 b's, reach it exactly; one more is over */
  enum { K = 1 << 14 };
  char *as = arena_alloc(arena, K + 1), *bs = arena_alloc(arena, K + 1);
  memset(as, 'a', K + 1);
  memset(bs, 'b', K);
  set_strings(as, K, "a", 1, bs, K);
  EvalEnv env = {.attrs = tuple, .scratch = arena};
  Value v;
  ck_assert_int_eq(code_eval(code_compile(checked("replace(a, b, c)"), arena), &env, &v, NULL, 0), 0);
  ck_assert_uint_eq(v.s.n, 1 << 28); /* once only: the three ways would take 1.25 GB */
  set_strings(as, K + 1, "a", 1, bs, K);
  ck_assert_str_eq(ev_error("len(replace(a, b, c))"), "replace: a result of more than 268435456 bytes");
  ck_assert_str_eq(ev_error("replace(replace(replace(replace(a, b, c), b, c), b, c), b, c)"),
                   "replace: a result of more than 268435456 bytes");
}
END_TEST

#define SPLIT_CASE(s, sep, k, r)                                  \
  do {                                                            \
    set_strings(LIT(s), LIT(sep), LIT(""));                       \
    tuple[3] = value_int(k);                                      \
    ck_string("split_part(a, b, n)", LIT(r));                     \
  } while (0)

START_TEST(test_split_part) {
  /* python3: parts = s.split(sep); parts[n - 1] for 0 < n <= len(parts), parts[n] for
   * -len(parts) <= n < 0, else b"" */
  SPLIT_CASE("a,b,,c", ",", 1, "a");
  SPLIT_CASE("a,b,,c", ",", 2, "b");
  SPLIT_CASE("a,b,,c", ",", 3, "");
  SPLIT_CASE("a,b,,c", ",", 4, "c");
  SPLIT_CASE("a,b,,c", ",", 5, "");
  SPLIT_CASE("a,b,,c", ",", -1, "c");
  SPLIT_CASE("a,b,,c", ",", -2, "");
  SPLIT_CASE("a,b,,c", ",", -3, "b");
  SPLIT_CASE("a,b,,c", ",", -4, "a");
  SPLIT_CASE("a,b,,c", ",", -5, "");
  SPLIT_CASE(",a,", ",", 1, "");
  SPLIT_CASE(",a,", ",", 2, "a");
  SPLIT_CASE(",a,", ",", 3, "");
  SPLIT_CASE(",a,", ",", 4, "");
  SPLIT_CASE(",a,", ",", 5, "");
  SPLIT_CASE(",a,", ",", -1, "");
  SPLIT_CASE(",a,", ",", -2, "a");
  SPLIT_CASE(",a,", ",", -3, "");
  SPLIT_CASE(",a,", ",", -4, "");
  SPLIT_CASE(",a,", ",", -5, "");
  SPLIT_CASE("", ",", 1, "");
  SPLIT_CASE("", ",", 2, "");
  SPLIT_CASE("", ",", 3, "");
  SPLIT_CASE("", ",", 4, "");
  SPLIT_CASE("", ",", 5, "");
  SPLIT_CASE("", ",", -1, "");
  SPLIT_CASE("", ",", -2, "");
  SPLIT_CASE("", ",", -3, "");
  SPLIT_CASE("", ",", -4, "");
  SPLIT_CASE("", ",", -5, "");
  SPLIT_CASE("abc", ",", 1, "abc");
  SPLIT_CASE("abc", ",", 2, "");
  SPLIT_CASE("abc", ",", 3, "");
  SPLIT_CASE("abc", ",", 4, "");
  SPLIT_CASE("abc", ",", 5, "");
  SPLIT_CASE("abc", ",", -1, "abc");
  SPLIT_CASE("abc", ",", -2, "");
  SPLIT_CASE("abc", ",", -3, "");
  SPLIT_CASE("abc", ",", -4, "");
  SPLIT_CASE("abc", ",", -5, "");
  SPLIT_CASE("aaaa", "aa", 1, "");
  SPLIT_CASE("aaaa", "aa", 2, "");
  SPLIT_CASE("aaaa", "aa", 3, "");
  SPLIT_CASE("aaaa", "aa", 4, "");
  SPLIT_CASE("aaaa", "aa", 5, "");
  SPLIT_CASE("aaaa", "aa", -1, "");
  SPLIT_CASE("aaaa", "aa", -2, "");
  SPLIT_CASE("aaaa", "aa", -3, "");
  SPLIT_CASE("aaaa", "aa", -4, "");
  SPLIT_CASE("aaaa", "aa", -5, "");
  SPLIT_CASE("aaa", "aa", 1, "");
  SPLIT_CASE("aaa", "aa", 2, "a");
  SPLIT_CASE("aaa", "aa", 3, "");
  SPLIT_CASE("aaa", "aa", 4, "");
  SPLIT_CASE("aaa", "aa", 5, "");
  SPLIT_CASE("aaa", "aa", -1, "a");
  SPLIT_CASE("aaa", "aa", -2, "");
  SPLIT_CASE("aaa", "aa", -3, "");
  SPLIT_CASE("aaa", "aa", -4, "");
  SPLIT_CASE("aaa", "aa", -5, "");
  SPLIT_CASE("x::y::z", "::", 1, "x");
  SPLIT_CASE("x::y::z", "::", 2, "y");
  SPLIT_CASE("x::y::z", "::", 3, "z");
  SPLIT_CASE("x::y::z", "::", 4, "");
  SPLIT_CASE("x::y::z", "::", 5, "");
  SPLIT_CASE("x::y::z", "::", -1, "z");
  SPLIT_CASE("x::y::z", "::", -2, "y");
  SPLIT_CASE("x::y::z", "::", -3, "x");
  SPLIT_CASE("x::y::z", "::", -4, "");
  SPLIT_CASE("x::y::z", "::", -5, "");
  SPLIT_CASE("\xc3""\xa9""|\xe9""", "|", 1, "\xc3""\xa9""");
  SPLIT_CASE("\xc3""\xa9""|\xe9""", "|", 2, "\xe9""");
  SPLIT_CASE("\xc3""\xa9""|\xe9""", "|", 3, "");
  SPLIT_CASE("\xc3""\xa9""|\xe9""", "|", 4, "");
  SPLIT_CASE("\xc3""\xa9""|\xe9""", "|", 5, "");
  SPLIT_CASE("\xc3""\xa9""|\xe9""", "|", -1, "\xe9""");
  SPLIT_CASE("\xc3""\xa9""|\xe9""", "|", -2, "\xc3""\xa9""");
  SPLIT_CASE("\xc3""\xa9""|\xe9""", "|", -3, "");
  SPLIT_CASE("\xc3""\xa9""|\xe9""", "|", -4, "");
  SPLIT_CASE("\xc3""\xa9""|\xe9""", "|", -5, "");
  SPLIT_CASE("a,b", ",", INT64_MAX, "");
  SPLIT_CASE("a,b", ",", INT64_MIN, "");
}
END_TEST

START_TEST(test_split_part_errors) {
  set_strings(LIT("a,b"), LIT(""), LIT(""));
  tuple[3] = value_int(1);
  ck_assert_str_eq(ev_error("split_part(a, b, n)"), "split_part: empty separator");
  tuple[3] = value_int(0);
  ck_assert_str_eq(ev_error("split_part(a, \",\", n)"), "split_part: field number 0 (fields count from 1)");
  ck_assert_str_eq(ev_error("split_part(\"\", \",\", 0)"), "split_part: field number 0 (fields count from 1)");
}
END_TEST

START_TEST(test_string_types) {
  ck_assert_str_eq(check_error("lower(n) + upper(a, b) + replace(a, b, n) + split_part(a, b, \"1\")"),
                   "g.xml:4:7: error: argument 1 of 'lower' must be a string, got int\n"
                   "g.xml:4:12: error: function 'upper' takes 1 argument, got 2\n"
                   "g.xml:4:40: error: argument 3 of 'replace' must be a string, got int\n"
                   "g.xml:4:62: error: argument 3 of 'split_part' must be an int, got string\n");
  ck_assert_str_eq(check_error("contains(a, n) || starts_with(d, a) || ends_with(a) || find(a, b) > 0.5"),
                   "g.xml:4:13: error: argument 2 of 'contains' must be a string, got int\n"
                   "g.xml:4:31: error: argument 1 of 'starts_with' must be a string, got double\n"
                   "g.xml:4:40: error: function 'ends_with' takes 2 arguments, got 1\n"
                   "g.xml:4:67: error: operator '>' needs two ints, two doubles or two strings, got int and double\n");
}
END_TEST

/* ---- time ---- */

#define DATE_CASE(t, y, mo, d, h, mi, s, text)                                                      \
  do {                                                                                             \
    tuple[4] = value_int(t);                                                                       \
    ck_assert_msg(ev_int("year(ms)") == (y), "year(%s) is %lld", #t, (long long)ev_int("year(ms)")); \
    ck_assert_msg(ev_int("month(ms)") == (mo), "month(%s)", #t);                                    \
    ck_assert_msg(ev_int("day(ms)") == (d), "day(%s)", #t);                                         \
    ck_assert_msg(ev_int("hour(ms)") == (h), "hour(%s)", #t);                                       \
    ck_assert_msg(ev_int("minute(ms)") == (mi), "minute(%s)", #t);                                  \
    ck_assert_msg(ev_int("second(ms)") == (s), "second(%s)", #t);                                   \
    ck_string("date_format(ms, \"%Y-%m-%d %H:%M:%S %j\")", LIT(text));                              \
  } while (0)

START_TEST(test_dates) {
  /* python3: datetime(1970, 1, 1) + timedelta(milliseconds=t), its fields and tm_yday, the year
   * written with at least 4 digits; t outside datetime's years 1 to 9999 moved into them by whole
   * 400-year cycles of 146097 days first (which keep every field but the year) */
  DATE_CASE(INT64_C(0), 1970, 1, 1, 0, 0, 0, "1970-01-01 00:00:00 001");
  DATE_CASE(INT64_C(-1), 1969, 12, 31, 23, 59, 59, "1969-12-31 23:59:59 365");
  DATE_CASE(INT64_C(1), 1970, 1, 1, 0, 0, 0, "1970-01-01 00:00:00 001");
  DATE_CASE(INT64_C(999), 1970, 1, 1, 0, 0, 0, "1970-01-01 00:00:00 001");
  DATE_CASE(INT64_C(-999), 1969, 12, 31, 23, 59, 59, "1969-12-31 23:59:59 365");
  DATE_CASE(INT64_C(-1000), 1969, 12, 31, 23, 59, 59, "1969-12-31 23:59:59 365");
  DATE_CASE(INT64_C(-1001), 1969, 12, 31, 23, 59, 58, "1969-12-31 23:59:58 365");
  DATE_CASE(INT64_C(86399999), 1970, 1, 1, 23, 59, 59, "1970-01-01 23:59:59 001");
  DATE_CASE(INT64_C(86400000), 1970, 1, 2, 0, 0, 0, "1970-01-02 00:00:00 002");
  DATE_CASE(INT64_C(-86400000), 1969, 12, 31, 0, 0, 0, "1969-12-31 00:00:00 365");
  DATE_CASE(INT64_C(-86400001), 1969, 12, 30, 23, 59, 59, "1969-12-30 23:59:59 364");
  DATE_CASE(INT64_C(951825600000), 2000, 2, 29, 12, 0, 0, "2000-02-29 12:00:00 060");
  DATE_CASE(INT64_C(951868800000), 2000, 3, 1, 0, 0, 0, "2000-03-01 00:00:00 061");
  DATE_CASE(INT64_C(978307199999), 2000, 12, 31, 23, 59, 59, "2000-12-31 23:59:59 366");
  DATE_CASE(INT64_C(-2203891200001), 1900, 2, 28, 23, 59, 59, "1900-02-28 23:59:59 059");
  DATE_CASE(INT64_C(-2203891200000), 1900, 3, 1, 0, 0, 0, "1900-03-01 00:00:00 060");
  DATE_CASE(INT64_C(-2177539200000), 1900, 12, 31, 0, 0, 0, "1900-12-31 00:00:00 365");
  DATE_CASE(INT64_C(946598400000), 1999, 12, 31, 0, 0, 0, "1999-12-31 00:00:00 365");
  DATE_CASE(INT64_C(1709210096789), 2024, 2, 29, 12, 34, 56, "2024-02-29 12:34:56 060");
  DATE_CASE(INT64_C(-11670994677000), 1600, 2, 29, 1, 2, 3, "1600-02-29 01:02:03 060");
  DATE_CASE(INT64_C(-62135596800000), 1, 1, 1, 0, 0, 0, "0001-01-01 00:00:00 001");
  DATE_CASE(INT64_C(-62135596800001), 0, 12, 31, 23, 59, 59, "0000-12-31 23:59:59 366");
  DATE_CASE(INT64_C(253402300799999), 9999, 12, 31, 23, 59, 59, "9999-12-31 23:59:59 365");
  DATE_CASE(INT64_C(-26412711000), 1969, 3, 1, 7, 8, 9, "1969-03-01 07:08:09 060");
  DATE_CASE(INT64_C(-1000000000000), 1938, 4, 24, 22, 13, 20, "1938-04-24 22:13:20 114");
  DATE_CASE(INT64_C(10000000000000), 2286, 11, 20, 17, 46, 40, "2286-11-20 17:46:40 324");
  DATE_CASE(INT64_MAX, 292278994, 8, 17, 7, 12, 55, "292278994-08-17 07:12:55 229");
  DATE_CASE(INT64_MIN, -292275055, 5, 16, 16, 47, 4, "-292275055-05-16 16:47:04 136");
}
END_TEST

START_TEST(test_date_format) {
  tuple[4] = value_int(INT64_C(1709210096789)); /* 2024-02-29 12:34:56.789, as in test_dates */
  set_strings(LIT("%%%Y%%"), LIT("%j%"), LIT("%y"));
  ck_string("date_format(ms, \"\")", LIT(""));
  ck_string("date_format(ms, \"%%\")", LIT("%"));
  ck_string("date_format(ms, \"day %j of %Y, \xc3\xa9\")", LIT("day 060 of 2024, \xc3\xa9"));
  ck_string("date_format(ms, a)", LIT("%2024%"));
  ck_assert_str_eq(ev_error("date_format(ms, b)"), "date_format: '%' at the end of the format");
  ck_assert_str_eq(ev_error("date_format(ms, c)"), "date_format: unknown conversion '%y'");
  ck_assert_str_eq(check_error("date_format(ms, \"%Y-%b\")"),
                   "g.xml:4:17: error: bad format of 'date_format': unknown conversion '%b' "
                   "(the conversions are %Y %m %d %H %M %S %j %%)\n");
  ck_assert_str_eq(check_error("date_format(ms, \"%\") + date_format(ms, \"%\xc3\")"),
                   "g.xml:4:17: error: bad format of 'date_format': '%' at the end of the format "
                   "(the conversions are %Y %m %d %H %M %S %j %%)\n"
                   "g.xml:4:40: error: bad format of 'date_format': unknown conversion: '%' then byte 0xc3 "
                   "(the conversions are %Y %m %d %H %M %S %j %%)\n");
  ck_assert_str_eq(check_error("date_format(d, a) + str(year(\"x\"))"),
                   "g.xml:4:13: error: argument 1 of 'date_format' must be an int, got double\n"
                   "g.xml:4:30: error: argument 1 of 'year' must be an int, got string\n");
}
END_TEST

/* ---- regular expressions ---- */

/* The text of a call whose pattern is the literal p (which must need no escapes). */
static const char *with_pattern(const char *fmt, const char *p) {
  static char text[256];
  snprintf(text, sizeof text, fmt, p);
  return text;
}

#define MATCH_CASE(s, p, want)                                                                      \
  do {                                                                                              \
    set_strings(LIT(s), LIT(""), LIT(""));                                                          \
    ck_assert_msg(ev_bool(with_pattern("regex_match(a, \"%s\")", p)) == (want), "regex_match(%s, %s)", #s, \
                  #p);                                                                              \
  } while (0)

#define EXTRACT_CASE(s, p, g, want)                                          \
  do {                                                                       \
    set_strings(LIT(s), LIT(""), LIT(""));                                   \
    tuple[3] = value_int(g);                                                 \
    ck_string(with_pattern("regex_extract(a, \"%s\", n)", p), LIT(want));    \
  } while (0)

START_TEST(test_regex) {
  /* python3: re.search(p, s) on bytes; for regex_extract its group(g), b"" when there is no match
   * or the group is None */
  MATCH_CASE("", "^$", 1);
  MATCH_CASE("", "a*", 1);
  MATCH_CASE("abc", "b", 1);
  MATCH_CASE("abc", "^b", 0);
  MATCH_CASE("h\xc3""\xa9""llo", "\xc3""\xa9""", 1);
  MATCH_CASE("h\xc3""\xa9""llo", "h.l", 0);
  MATCH_CASE("h\xc3""\xa9""llo", "h..l", 1);
  MATCH_CASE("x\x00""y", "x.y", 1);
  MATCH_CASE("ABC", "(?i)abc", 1);
  MATCH_CASE("a\x0a""b", "^b", 0);
  MATCH_CASE("a\x0a""b", "(?m)^b", 1);
  MATCH_CASE("abc", "[^a-c]", 0);
  EXTRACT_CASE("key=val", "([a-z]+)=([a-z]+)", 0, "key=val");
  EXTRACT_CASE("key=val", "([a-z]+)=([a-z]+)", 1, "key");
  EXTRACT_CASE("key=val", "([a-z]+)=([a-z]+)", 2, "val");
  EXTRACT_CASE("abc", "(x)?abc", 1, "");
  EXTRACT_CASE("abc", "(x)?abc", 0, "abc");
  EXTRACT_CASE("abc", "z(.)", 1, "");
  EXTRACT_CASE("abc", "z(.)", 0, "");
  EXTRACT_CASE("aXbXc", "X(.)", 1, "b");
  EXTRACT_CASE("", "(a*)", 1, "");
  EXTRACT_CASE("h\xc3""\xa9""llo", "h(.)", 1, "\xc3""");
  EXTRACT_CASE("ab", "(a)|(b)", 2, "");
  EXTRACT_CASE("ba", "(a)|(b)", 2, "b");
}
END_TEST

START_TEST(test_regex_faults) {
  /* PCRE2's match limit: (a+)+$ backtracks through every split of the a's before the b */
  set_strings(LIT("aaaaaaaaaaaaaaaaaaaaaaaaaaaaab"), LIT(""), LIT(""));
  ck_assert_str_eq(ev_error("regex_match(a, \"(a+)+$\")"), "regex_match: match limit exceeded");
  tuple[3] = value_int(1);
  ck_assert_str_eq(ev_error("regex_extract(a, \"(a+)+$\", n)"), "regex_extract: match limit exceeded");
  ck_assert_str_eq(ev_error("regex_extract(a, \"(a+)+$\", 1)"), "regex_extract: match limit exceeded");
  tuple[3] = value_int(2);
  ck_assert_str_eq(ev_error("regex_extract(a, \"(a)\", n)"), "regex_extract: no group 2 in the pattern, which has 1");
  tuple[3] = value_int(-1);
  ck_assert_str_eq(ev_error("regex_extract(a, \"a\", n)"), "regex_extract: no group -1 in the pattern, which has 0");
}
END_TEST

START_TEST(test_regex_diagnostics) {
  /* the messages after the offset are PCRE2's own */
  ck_assert_str_eq(check_error("regex_match(a, \"(abc\") || regex_match(a, \"a{2,1}\") || regex_match(a, \"[z-a]\")"),
                   "g.xml:4:16: error: bad regular expression in 'regex_match' at byte 4 of the pattern: "
                   "missing closing parenthesis\n"
                   "g.xml:4:42: error: bad regular expression in 'regex_match' at byte 5 of the pattern: "
                   "numbers out of order in {} quantifier\n"
                   "g.xml:4:70: error: bad regular expression in 'regex_match' at byte 3 of the pattern: "
                   "range out of order in character class\n");
  ck_assert_str_eq(check_error("regex_extract(a, \"*a\", 0) + regex_extract(a, b, 0) + regex_extract(a, \"(a)(b)\", 3)"),
                   "g.xml:4:18: error: bad regular expression in 'regex_extract' at byte 0 of the pattern: "
                   "quantifier does not follow a repeatable item\n"
                   "g.xml:4:46: error: the pattern of 'regex_extract' must be a string literal\n"
                   "g.xml:4:81: error: group 3 of 'regex_extract' is not in its pattern, which has 2 groups\n");
  ck_assert_str_eq(check_error("regex_match(a, \"(*UTF)a\") || regex_extract(a, \"a\", -1) == \"\" || regex_match(n, \"\")"),
                   "g.xml:4:16: error: bad regular expression in 'regex_match' at byte 6 of the pattern: "
                   "using UTF is disabled by the application\n"
                   "g.xml:4:52: error: group -1 of 'regex_extract' is not in its pattern, which has 0 groups\n"
                   "g.xml:4:77: error: argument 1 of 'regex_match' must be a string, got int\n");
}
END_TEST

/* ---- x in (a, b, ...) ---- */

static const char *formatted(const char *text) {
  Expr *e = expr_parse(arena, text, &mem.diag, &at);
  ck_assert_msg(e != NULL, "'%s' does not parse: %s", text, unit_diags_text(&mem));
  return expr_format(arena, e);
}

static const char *parse_error(const char *text) {
  unit_diags_close(&mem);
  unit_diags_open(&mem, "g.xml", DIAG_BY_PLACE);
  ck_assert_ptr_null(expr_parse(arena, text, &mem.diag, &at));
  return unit_diags_text(&mem);
}

START_TEST(test_in_parse) {
  ck_assert_str_eq(formatted("n in (1, 2)"), "(n in (1, 2))");
  ck_assert_str_eq(formatted("n in(1)==true"), "((n in (1)) == true)");
  ck_assert_str_eq(formatted("n + 1 in (2) != (n in (3))"), "(((n + 1) in (2)) != (n in (3)))");
  ck_assert_str_eq(formatted("n < 1 in (true)"), "((n < 1) in (true))");
  ck_assert_str_eq(formatted("a == b in (true) && n in (n ? 1 : 2, -3)"),
                   "(((a == b) in (true)) && (n in ((n ? 1 : 2), -3)))");
  ck_assert_str_eq(formatted("in in (in(in), in)"), "(in in (in(in), in))"); /* `in` is a name elsewhere */
  ck_assert_str_eq(formatted(formatted("a in (b) in (false)")), "((a in (b)) in (false))");
  ck_assert_str_eq(parse_error("n in 1"), "g.xml:4:6: error: expected '(' after 'in'\n");
  ck_assert_str_eq(parse_error("n in ()"), "g.xml:4:7: error: unexpected ')'\n");
  ck_assert_str_eq(parse_error("n in (1, 2"), "g.xml:4:11: error: expected ')' after the values of 'in'\n");
}
END_TEST

START_TEST(test_in_types) {
  ck_assert_str_eq(check_error("n in (1, a, 2.5) || a in (\"x\", n) || d in (true)"),
                   "g.xml:4:10: error: value 2 of 'in' must be an int like the operand before 'in', got string\n"
                   "g.xml:4:13: error: value 3 of 'in' must be an int like the operand before 'in', got double\n"
                   "g.xml:4:32: error: value 2 of 'in' must be a string like the operand before 'in', got int\n"
                   "g.xml:4:44: error: value 1 of 'in' must be a double like the operand before 'in', got bool\n");
  ck_assert_str_eq(check_error("x in (1) || n in (y)"),
                   "g.xml:4:1: error: unknown name 'x'\n"
                   "g.xml:4:19: error: unknown name 'y'\n");
}
END_TEST

START_TEST(test_in_values) {
  /* by hand: python3's `x in (...)` agrees on each (== of ints, doubles and bytes) */
  tuple[3] = value_int(5);
  set_strings(LIT("h\xc3\xa9"), LIT("h"), LIT(""));
  ck_assert(ev_bool("n in (1, 5)"));
  ck_assert(!ev_bool("n in (1)"));
  ck_assert(ev_bool("n in (n)"));
  ck_assert(ev_bool("a in (b, b + \"\xc3\xa9\")"));
  ck_assert(!ev_bool("a in (b, c, \"H\xc3\xa9\")"));
  ck_assert(ev_bool("c in (\"\")"));
  ck_assert(ev_bool("(n > 1) in (false, true)"));
  tuple[5] = value_double(-0.0);
  ck_assert(ev_bool("d in (0.0)"));
  tuple[5] = value_double(0.0 / 0.0 * -1.0);
  ck_assert(!ev_bool("d in (d, 0.0 / 0.0)")); /* NaN equals nothing, itself neither */
  /* the values in order, the first equal one ending it */
  ck_assert(ev_bool("n in (5, 1 / 0)"));
  ck_assert_str_eq(ev_error("n in (1, 1 / (n - 5), 5)"), "division by zero");
  ck_assert_str_eq(ev_error("(n / 0) in (1)"), "division by zero");
  /* constants fold: no instruction */
  ck_assert_int_eq(code_length(code_compile(checked("2 in (1, 2 + 0)"), arena)), 0);
  ck_assert_int_eq(code_length(code_compile(checked("\"x\" in (\"y\")"), arena)), 0);
  ck_assert_int_gt(code_length(code_compile(checked("2 in (1, n)"), arena)), 0);
}
END_TEST

static Suite *functions_suite(void) {
  Suite *s = suite_create("functions");
  UNIT_ADD(s, test_lower_upper, setup, teardown);
  UNIT_ADD(s, test_search, setup, teardown);
  UNIT_ADD(s, test_replace, setup, teardown);
  UNIT_ADD_TIMEOUT(s, test_replace_limit, setup, teardown, 10);
  UNIT_ADD(s, test_split_part, setup, teardown);
  UNIT_ADD(s, test_split_part_errors, setup, teardown);
  UNIT_ADD(s, test_string_types, setup, teardown);
  UNIT_ADD(s, test_dates, setup, teardown);
  UNIT_ADD(s, test_date_format, setup, teardown);
  UNIT_ADD(s, test_regex, setup, teardown);
  UNIT_ADD(s, test_regex_faults, setup, teardown);
  UNIT_ADD(s, test_regex_diagnostics, setup, teardown);
  UNIT_ADD(s, test_in_parse, setup, teardown);
  UNIT_ADD(s, test_in_types, setup, teardown);
  UNIT_ADD(s, test_in_values, setup, teardown);
  return s;
}

int main(void) {
  return unit_run(functions_suite());
}
