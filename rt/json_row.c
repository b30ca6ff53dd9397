/* json_row.c: a tuple as one JSON object (json_row.h), reading with json-c (Debian's
 * libjson-c-dev, 0.16), writing by hand (a few escapes and the CSV writer's numbers; json-c's own
 * writer prints doubles its way).
 *
 * json-c 0.16, even with JSON_TOKENER_STRICT, takes some text that is not JSON (single-quoted
 * strings, "1.", the words NaN and Infinity: the last two are refused here, as a double must be
 * finite), and reads an integer beyond 64 bits as the nearest 64-bit one, silently: above 2^63 - 1
 * as a uint64 (so an int attribute that large is refused), above 2^64 - 1 as 2^64 - 1, below
 * -2^63 as -2^63. So a double attribute is not read from an integer at either clamp (it may have
 * been anything beyond), and the writer gives the doubles whose CSV text is an integer of 2^63 or
 * more in magnitude with an exponent instead ("1e+20", not "100000000000000000000"), the same
 * digits; an int attribute read as -2^63 may have been below it (docs/language.md says so). */
#include "json_row.h"

#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { QUOTE_MAX = 40 }; /* longest prefix of a member's JSON text quoted in a message */

struct JsonRowReader {
  const Schema *sc;
  json_tokener *tok;
  json_object *last; /* the object read last: the strings of its values */
  Buf text;          /* the value, NUL-terminated (json-c needs an end it can see) */
};

JsonRowReader *json_row_reader_new(const Schema *sc) {
  JsonRowReader *r = sf_xmalloc(sizeof *r);
  memset(r, 0, sizeof *r);
  r->sc = sc;
  r->tok = json_tokener_new();
  if (!r->tok) sf_die("out of memory");
  json_tokener_set_flags(r->tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
  buf_init(&r->text);
  return r;
}

void json_row_reader_free(JsonRowReader *r) {
  if (!r) return;
  json_object_put(r->last);
  json_tokener_free(r->tok);
  buf_release(&r->text);
  free(r);
}

static const char *kind_of(json_object *o) {
  switch (json_object_get_type(o)) {
  case json_type_null: return "null";
  case json_type_boolean: return "a boolean";
  case json_type_double:
  case json_type_int: return "a number";
  case json_type_string: return "a string";
  case json_type_array: return "an array";
  default: return "an object";
  }
}

/* "member 'A': TEXT is not WHAT", TEXT the member's JSON cut to QUOTE_MAX bytes. */
static int not_a(const Attr *a, json_object *m, const char *what, char *why, size_t cap) {
  const char *text = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  size_t n = strlen(text);
  snprintf(why, cap, "member '%s': %.*s%s is not %s", a->name, n > QUOTE_MAX ? QUOTE_MAX : (int)n, text,
           n > QUOTE_MAX ? "..." : "", what);
  return -1;
}

static int member(const Attr *a, json_object *m, Value *out, char *why, size_t cap) {
  json_type t = json_object_get_type(m);
  switch (a->type) {
  case TYPE_INT:
    if (t != json_type_int) return not_a(a, m, "an int", why, cap);
    if (json_object_get_int64(m) == INT64_MAX && json_object_get_uint64(m) > (uint64_t)INT64_MAX) {
      snprintf(why, cap, "member '%s' is an integer beyond the range of an int", a->name);
      return -1;
    }
    value_put_int(out, json_object_get_int64(m));
    return 0;
  case TYPE_DOUBLE:
    if (t == json_type_int) {
      int64_t i = json_object_get_int64(m);
      uint64_t u = json_object_get_uint64(m);
      if (i == INT64_MIN || u == UINT64_MAX) {
        snprintf(why, cap, "member '%s': an integer of 2^63 or more in magnitude is not read exactly (write it "
                 "with an exponent)", a->name);
        return -1;
      }
      value_put_double(out, u > (uint64_t)INT64_MAX ? (double)u : (double)i);
      return 0;
    }
    if (t == json_type_double) {
      double d = json_object_get_double(m);
      if (!isfinite(d)) return not_a(a, m, "a finite double", why, cap);
      value_put_double(out, d);
      return 0;
    }
    if (t == json_type_string) {
      const char *s = json_object_get_string(m);
      int n = json_object_get_string_len(m);
      if (n == 3 && !memcmp(s, "NaN", 4)) {
        value_put_double(out, NAN);
        return 0;
      }
      if ((n == 8 && !memcmp(s, "Infinity", 9)) || (n == 9 && !memcmp(s, "-Infinity", 10))) {
        value_put_double(out, *s == '-' ? -INFINITY : INFINITY);
        return 0;
      }
    }
    return not_a(a, m, "a double", why, cap);
  case TYPE_BOOL:
    if (t != json_type_boolean) return not_a(a, m, "a bool", why, cap);
    value_put_bool(out, json_object_get_boolean(m));
    return 0;
  default:
    if (t != json_type_string) return not_a(a, m, "a string", why, cap);
    value_put_string(out, json_object_get_string(m), (size_t)json_object_get_string_len(m));
    return 0;
  }
}

int json_row_read(JsonRowReader *r, const char *text, size_t n, Value *vals, char *why, size_t cap) {
  json_object_put(r->last);
  r->last = NULL;
  size_t lead = 0;
  while (lead < n && (text[lead] == ' ' || text[lead] == '\t' || text[lead] == '\n' || text[lead] == '\r')) lead++;
  if (lead == n) {
    snprintf(why, cap, "the record's value is empty (expected a JSON object)");
    return -1;
  }
  if (n >= INT32_MAX) {
    snprintf(why, cap, "the record's value is longer than json-c reads");
    return -1;
  }
  r->text.n = 0;
  buf_append(&r->text, text, n);
  json_tokener_reset(r->tok);
  json_object *o = json_tokener_parse_ex(r->tok, r->text.p, (int)n + 1); /* the NUL ends the text */
  enum json_tokener_error e = json_tokener_get_error(r->tok);
  size_t end = json_tokener_get_parse_end(r->tok);
  if (e == json_tokener_success && end < n) { /* a NUL inside: json-c stopped there */
    json_object_put(o);
    snprintf(why, cap, "the record's value is not valid JSON (a NUL byte at offset %zu)", end);
    return -1;
  }
  if (e != json_tokener_success) {
    json_object_put(o);
    if (e == json_tokener_continue || end >= n)
      snprintf(why, cap, "the record's value is not valid JSON (it ends early)");
    else
      snprintf(why, cap, "the record's value is not valid JSON (%s at byte offset %zu)", json_tokener_error_desc(e),
               end);
    return -1;
  }
  if (!json_object_is_type(o, json_type_object)) {
    snprintf(why, cap, "the record's value is %s, not a JSON object", kind_of(o));
    json_object_put(o);
    return -1;
  }
  r->last = o;
  const Schema *sc = r->sc;
  for (int a = 0; a < sc->nattrs; a++) {
    json_object *m;
    if (!json_object_object_get_ex(o, sc->attrs[a].name, &m)) {
      snprintf(why, cap, "member '%s' is missing", sc->attrs[a].name);
      return -1;
    }
    if (!m) {
      snprintf(why, cap, "member '%s' is null", sc->attrs[a].name);
      return -1;
    }
    if (member(&sc->attrs[a], m, &vals[a], why, cap) < 0) return -1;
  }
  return 0;
}

/* s[0..n) as a JSON string, quotes included: '"', '\' and the control characters escaped, every
 * other byte as it is (UTF-8 passes through; a string that is not UTF-8 stays so). */
static void put_string(Buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  char *out = buf_reserve(b, 6 * n + 2), *start = out;
  *out++ = '"';
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c != '"' && c != '\\') {
      *out++ = (char)c;
      continue;
    }
    *out++ = '\\';
    switch (c) {
    case '"': *out++ = '"'; break;
    case '\\': *out++ = '\\'; break;
    case '\b': *out++ = 'b'; break;
    case '\f': *out++ = 'f'; break;
    case '\n': *out++ = 'n'; break;
    case '\r': *out++ = 'r'; break;
    case '\t': *out++ = 't'; break;
    default:
      memcpy(out, "u00", 3);
      out[3] = hex[c >> 4];
      out[4] = hex[c & 15];
      out += 5;
    }
  }
  *out++ = '"';
  b->n += (size_t)(out - start);
  b->p[b->n] = 0;
}

/* A double as the CSV writer writes it, but NaN and the infinities as the strings "NaN",
 * "Infinity", "-Infinity" (JSON has no such numbers), -0 as "-0.0" (a reader takes "-0" for the
 * integer 0) and an integer text of 2^63 or more in magnitude with an exponent (json-c reads
 * integers in 64 bits). */
static void put_double(Buf *b, double d) {
  if (isnan(d)) {
    buf_puts(b, "\"NaN\"");
    return;
  }
  if (isinf(d)) {
    buf_puts(b, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  if (d == 0 && signbit(d)) {
    buf_puts(b, "-0.0");
    return;
  }
  char text[SF_DOUBLE_CHARS];
  size_t n = double_format(d, text, sizeof text);
  if (fabs(d) < 0x1p63 || strpbrk(text, ".e")) {
    buf_append(b, text, n);
    return;
  }
  const char *digits = text + (*text == '-');
  size_t len = n - (size_t)(digits - text), k = len;
  while (k > 1 && digits[k - 1] == '0') k--;
  if (*text == '-') buf_putc(b, '-');
  buf_putc(b, digits[0]);
  if (k > 1) {
    buf_putc(b, '.');
    buf_append(b, digits + 1, k - 1);
  }
  char exp[24];
  buf_append(b, exp, (size_t)snprintf(exp, sizeof exp, "e+%zu", len - 1));
}

void json_row_put(Buf *b, const Schema *sc, const Value *v, int n) {
  buf_putc(b, '{');
  for (int i = 0; i < n; i++) {
    if (i) buf_putc(b, ',');
    put_string(b, sc->attrs[i].name, strlen(sc->attrs[i].name));
    buf_putc(b, ':');
    const Value *x = &v[i];
    switch (x->type) {
    case TYPE_STRING: put_string(b, x->s.p, x->s.n); break;
    case TYPE_DOUBLE: put_double(b, x->d); break;
    default: value_format(x, b); break; /* int, bool: the CSV writer's text */
    }
  }
  buf_putc(b, '}');
}
