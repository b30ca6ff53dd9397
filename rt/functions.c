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

/* ---- strings: bytes; case changes are ASCII only ---- */

/* The index of the first t[0..m) in s[0..n) at or after from (<= n), or -1; from itself when m is
 * 0. */
static int64_t search(const char *s, size_t n, const char *t, size_t m, size_t from) {
  if (m == 0) return (int64_t)from;
  while (from + m <= n) {
    const char *hit = memchr(s + from, t[0], n - m + 1 - from);
    if (!hit) return -1;
    size_t at = (size_t)(hit - s);
    if (!memcmp(hit + 1, t + 1, m - 1)) return (int64_t)at;
    from = at + 1;
  }
  return -1;
}

/* n bytes (and a NUL) in the scratch arena, for a string result. */
static char *string_space(const FnEnv *x, size_t n) {
  sf_assert(x->scratch);
  char *p = arena_alloc_raw(x->scratch, n + 1);
  p[n] = 0;
  return p;
}

/* s with every byte in [from, from + 25] moved by delta (the ASCII letters of one case). */
static void change_case(const Value *a, const FnEnv *x, Value *out, char from, int delta) {
  size_t n = a->s.n;
  const char *s = a->s.p;
  char *p = string_space(x, n);
  for (size_t k = 0; k < n; k++)
    p[k] = (char)(s[k] >= from && s[k] <= from + 25 ? s[k] + delta : s[k]);
  value_put_string(out, p, n);
}

int fn_lower(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)err, (void)errlen;
  change_case(a, x, out, 'A', 'a' - 'A');
  return 0;
}

int fn_upper(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)err, (void)errlen;
  change_case(a, x, out, 'a', 'A' - 'a');
  return 0;
}

int fn_contains(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err,
                size_t errlen) {
  (void)c, (void)x, (void)err, (void)errlen;
  value_put_bool(out, search(a->s.p, a->s.n, b->s.p, b->s.n, 0) >= 0);
  return 0;
}

int fn_starts_with(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err,
                   size_t errlen) {
  (void)c, (void)x, (void)err, (void)errlen;
  value_put_bool(out, b->s.n <= a->s.n && (b->s.n == 0 || !memcmp(a->s.p, b->s.p, b->s.n)));
  return 0;
}

int fn_ends_with(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err,
                 size_t errlen) {
  (void)c, (void)x, (void)err, (void)errlen;
  value_put_bool(out, b->s.n <= a->s.n && (b->s.n == 0 || !memcmp(a->s.p + a->s.n - b->s.n, b->s.p, b->s.n)));
  return 0;
}

int fn_find(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)c, (void)x, (void)err, (void)errlen;
  value_put_int(out, search(a->s.p, a->s.n, b->s.p, b->s.n, 0));
  return 0;
}

/* The longest result of replace() (256 MiB). */
enum { REPLACE_MAX = 1 << 28 };

int fn_replace(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err,
               size_t errlen) {
  (void)err, (void)errlen;
  const char *s = a->s.p, *t = b->s.p, *u = c->s.p;
  size_t n = a->s.n, m = b->s.n, un = c->s.n, hits = 0;
  for (int64_t at = m ? search(s, n, t, m, 0) : -1; at >= 0; at = search(s, n, t, m, (size_t)at + m)) hits++;
  if (hits == 0) {
    *out = *a;
    return 0;
  }
  /* the one function whose result can be many times its arguments' size: nested calls would grow
   * it exponentially */
  if (un > m && hits > (REPLACE_MAX - n) / (un - m))
    return eval_fail(err, errlen, "replace: a result of more than %d bytes", REPLACE_MAX);
  size_t len = n - hits * m + hits * un, from = 0;
  char *p = string_space(x, len), *o = p;
  for (int64_t at = search(s, n, t, m, 0); at >= 0; at = search(s, n, t, m, from)) {
    memcpy(o, s + from, (size_t)at - from);
    o += (size_t)at - from;
    if (un) memcpy(o, u, un);
    o += un;
    from = (size_t)at + m;
  }
  memcpy(o, s + from, n - from);
  value_put_string(out, p, len);
  return 0;
}

int fn_split_part(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err,
                  size_t errlen) {
  (void)x;
  const char *s = a->s.p, *sep = b->s.p;
  size_t n = a->s.n, m = b->s.n;
  int64_t want = c->i;
  if (m == 0) return eval_fail(err, errlen, "split_part: empty separator");
  if (want == 0) return eval_fail(err, errlen, "split_part: field number 0 (fields count from 1)");
  if (want < 0) { /* from the end: field (fields + want) from 0 */
    int64_t fields = 1;
    for (int64_t at = search(s, n, sep, m, 0); at >= 0; at = search(s, n, sep, m, (size_t)at + m)) fields++;
    if (want < -fields) {
      value_put_string(out, "", 0);
      return 0;
    }
    want += fields + 1;
  }
  size_t from = 0;
  for (int64_t k = 1; k < want; k++) {
    int64_t at = search(s, n, sep, m, from);
    if (at < 0) {
      value_put_string(out, "", 0);
      return 0;
    }
    from = (size_t)at + m;
  }
  int64_t end = search(s, n, sep, m, from);
  value_put_string(out, s + from, (end < 0 ? n : (size_t)end) - from);
  return 0;
}

/* ---- time: epoch milliseconds in UTC, proleptic Gregorian calendar ---- */

/* A moment taken apart. */
typedef struct Civil {
  int64_t year;                      /* 1970, ...; 0 is 1 BC, -1 is 2 BC */
  int month, day;                    /* 1-12, 1-31 */
  int yday;                          /* day of the year, 1-366 */
  int hour, minute, second;
} Civil;

static bool leap_year(int64_t y) {
  return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

/* Days in a 400-year cycle, a century that is not the cycle's first (no leap day in its year 0),
 * 4 years with a leap day, a year without. */
enum { DAYS_400 = 146097, DAYS_100 = 36524, DAYS_4 = 1461, DAYS_1 = 365, MS_DAY = 86400000 };

static Civil civil_of(int64_t ms) {
  /* floor division: -1 ms is the last millisecond of 1969-12-31 */
  int64_t days = ms / MS_DAY, in_day = ms % MS_DAY;
  if (in_day < 0) {
    in_day += MS_DAY;
    days--;
  }
  Civil t;
  int64_t secs = in_day / 1000;
  t.hour = (int)(secs / 3600);
  t.minute = (int)(secs / 60 % 60);
  t.second = (int)(secs % 60);
  /* days since 0001-01-01, the first day of a 400-year cycle (1970-01-01 is day 719162), taken
   * apart into whole cycles, centuries, 4-year groups and years, each a floor division (only the
   * cycles can be negative); the last century of a cycle and the last year of a group are one day
   * longer, hence the clamps */
  int64_t n = days + 719162;
  int64_t q400 = n / DAYS_400, r = n % DAYS_400;
  if (r < 0) {
    r += DAYS_400;
    q400--;
  }
  int64_t q100 = r / DAYS_100;
  if (q100 == 4) q100 = 3;
  r -= q100 * DAYS_100;
  int64_t q4 = r / DAYS_4;
  r -= q4 * DAYS_4;
  int64_t q1 = r / DAYS_1;
  if (q1 == 4) q1 = 3;
  r -= q1 * DAYS_1;
  t.year = 1 + 400 * q400 + 100 * q100 + 4 * q4 + q1;
  t.yday = (int)r + 1;
  static const int month_days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int left = (int)r, m = 0;
  for (;;) {
    int len = month_days[m] + (m == 1 && leap_year(t.year));
    if (left < len) break;
    left -= len;
    m++;
  }
  t.month = m + 1;
  t.day = left + 1;
  return t;
}

int fn_year(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)x, (void)err, (void)errlen;
  value_put_int(out, civil_of(a->i).year);
  return 0;
}

int fn_month(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)x, (void)err, (void)errlen;
  value_put_int(out, civil_of(a->i).month);
  return 0;
}

int fn_day(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)x, (void)err, (void)errlen;
  value_put_int(out, civil_of(a->i).day);
  return 0;
}

int fn_hour(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err, size_t errlen) {
  (void)b, (void)c, (void)x, (void)err, (void)errlen;
  value_put_int(out, civil_of(a->i).hour);
  return 0;
}

int fn_minute(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err,
              size_t errlen) {
  (void)b, (void)c, (void)x, (void)err, (void)errlen;
  value_put_int(out, civil_of(a->i).minute);
  return 0;
}

int fn_second(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err,
              size_t errlen) {
  (void)b, (void)c, (void)x, (void)err, (void)errlen;
  value_put_int(out, civil_of(a->i).second);
  return 0;
}

/* v in decimal, at least `width` digits (zeros before), a '-' before when negative; returns the
 * length (at most SF_INT_CHARS - 1). */
static size_t put_padded(char *buf, int64_t v, int width) {
  char digits[SF_INT_CHARS];
  size_t n = int_format(v, digits), o = 0;
  const char *d = digits;
  if (*d == '-') {
    buf[o++] = '-';
    d++;
    n--;
  }
  for (size_t k = n; k < (size_t)width; k++) buf[o++] = '0';
  memcpy(buf + o, d, n);
  return o + n;
}

/* The text of conversion `conv` of t into buf (at least SF_INT_CHARS bytes); its length. */
static size_t conversion(char conv, const Civil *t, char *buf) {
  switch (conv) {
  case 'Y': return put_padded(buf, t->year, 4);
  case 'm': return put_padded(buf, t->month, 2);
  case 'd': return put_padded(buf, t->day, 2);
  case 'H': return put_padded(buf, t->hour, 2);
  case 'M': return put_padded(buf, t->minute, 2);
  case 'S': return put_padded(buf, t->second, 2);
  case 'j': return put_padded(buf, t->yday, 3);
  default: buf[0] = '%'; return 1; /* %%: date_format_check let nothing else through */
  }
}

int fn_date_format(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err,
                   size_t errlen) {
  (void)c;
  const char *f = b->s.p;
  size_t n = b->s.n, len = 0;
  char msg[64], buf[SF_INT_CHARS];
  if (!date_format_check(f, n, msg, sizeof msg)) return eval_fail(err, errlen, "date_format: %s", msg);
  Civil t = civil_of(a->i);
  for (size_t k = 0; k < n; k++) len += f[k] == '%' ? conversion(f[++k], &t, buf) : 1;
  char *p = string_space(x, len), *o = p;
  for (size_t k = 0; k < n; k++) {
    if (f[k] != '%') {
      *o++ = f[k];
      continue;
    }
    size_t m = conversion(f[++k], &t, buf);
    memcpy(o, buf, m);
    o += m;
  }
  value_put_string(out, p, len);
  return 0;
}

/* ---- regular expressions (xform/regex.c) ---- */

/* The pattern of a call: the caller's compiled one, or one compiled now into *own (to free). */
static const Regex *pattern_of(const Value *p, const FnEnv *x, Regex **own) {
  *own = NULL;
  if (x->aux) return x->aux;
  char msg[256];
  size_t offset;
  *own = regex_compile(p->s.p, p->s.n, NULL, msg, sizeof msg, &offset);
  if (!*own) sf_die("a checked pattern does not compile: %s", msg);
  return *own;
}

int fn_regex_match(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err,
                   size_t errlen) {
  (void)c;
  Regex *own;
  const Regex *re = pattern_of(b, x, &own);
  char msg[256];
  size_t from, len;
  int rc = regex_search(re, a->s.p, a->s.n, 0, &from, &len, msg, sizeof msg);
  regex_free(own);
  if (rc < 0) return eval_fail(err, errlen, "regex_match: %s", msg);
  value_put_bool(out, rc == 1);
  return 0;
}

int fn_regex_extract(const Value *a, const Value *b, const Value *c, const FnEnv *x, Value *out, char *err,
                     size_t errlen) {
  Regex *own;
  const Regex *re = pattern_of(b, x, &own);
  int64_t g = c->i, groups = regex_groups(re);
  if (g < 0 || g > groups) {
    regex_free(own);
    return eval_fail(err, errlen, "regex_extract: no group %lld in the pattern, which has %lld", (long long)g,
                     (long long)groups);
  }
  char msg[256];
  size_t from, len;
  const char *s = a->s.p;
  int rc = regex_search(re, s, a->s.n, (int)g, &from, &len, msg, sizeof msg);
  regex_free(own);
  if (rc < 0) return eval_fail(err, errlen, "regex_extract: %s", msg);
  if (rc == 0 || from == SIZE_MAX || len == 0) value_put_string(out, "", 0);
  else value_put_string(out, s + from, len);
  return 0;
}

FnImpl *const fn_table[FUNC_COUNT] = {
#define FUNC(ID, name, nargs, args, result, flags) [FUNC_##ID] = fn_##name,
#include "functions.def"
#undef FUNC
};

const unsigned fn_flags[FUNC_COUNT] = {
#define FUNC(ID, name, nargs, args, result, flags) [FUNC_##ID] = flags,
#include "functions.def"
#undef FUNC
};
