/* attrs.c: Custom operators for the tests of op.h ABI version 4's schema functions
 * (tests/unit/test_custom.c; part of libsf_test_ops.so), written against op.h only.
 *
 * sf_describe: for each input tuple, emits one tuple whose string attribute `text` lists every
 *   input attribute as NAME:TYPE=VALUE, separated by spaces (TYPE int, double, string or bool;
 *   a double as %g, a bool as true or false), found with sf_attr_count, sf_attr_name and
 *   sf_attr_type alone: it knows nothing of the schema beforehand. Then `|` and the output
 *   schema's attributes as NAME:TYPE. Model: <model state="none" selectivity="one"/>.
 *   Errors (the job fails, naming the operator): no output attribute `text`, or not a string.
 * sf_pick: copies chosen attributes with sf_copy_attrs: param `map` is a list of IN>OUT pairs
 *   (space separated), input attribute IN into output attribute OUT; every other output attribute
 *   keeps its zero. Model: <model state="none" selectivity="one"/>.
 *   Errors: a malformed `map`, a name of neither schema (at open); a pair of two types (the first
 *   tuple, from sf_copy_attrs). */
#include "op.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_word(sf_type t) {
  switch (t) {
  case SF_INT: return "int";
  case SF_DOUBLE: return "double";
  case SF_STRING: return "string";
  case SF_BOOL: return "bool";
  }
  return "?";
}

typedef struct Describe {
  int text;   /* output attribute text */
  char *buf;  /* the text being built */
  size_t cap; /* its room */
} Describe;

static int describe_open(sf_op *op, void **state) {
  int text = sf_output_attr(op, "text");
  if (text < 0 || sf_attr_type(op, SF_OUT, text) != SF_STRING)
    return sf_error(op, "needs a string output attribute 'text'");
  Describe *d = calloc(1, sizeof *d);
  if (!d) return sf_error(op, "out of memory");
  d->text = text;
  *state = d;
  return 0;
}

/* Appends the printf-style text to d->buf at *len; false when out of memory. */
static bool append(Describe *d, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool append(Describe *d, size_t *len, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->buf ? d->buf + *len : NULL, d->buf ? d->cap - *len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) return false;
    if (d->buf && *len + (size_t)n < d->cap) {
      *len += (size_t)n;
      return true;
    }
    size_t cap = 2 * (*len + (size_t)n + 16);
    char *b = realloc(d->buf, cap);
    if (!b) return false;
    d->buf = b;
    d->cap = cap;
  }
}

static int describe_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  Describe *d = state;
  size_t len = 0;
  bool ok = append(d, &len, "%s", ""); /* makes the buffer */
  for (int i = 0; ok && i < sf_attr_count(op, SF_IN); i++) {
    sf_type t = sf_attr_type(op, SF_IN, i);
    ok = append(d, &len, "%s%s:%s=", i ? " " : "", sf_attr_name(op, SF_IN, i), type_word(t));
    size_t n;
    const char *s;
    switch (t) {
    case SF_INT: ok = ok && append(d, &len, "%lld", (long long)sf_get_int(in, i)); break;
    case SF_DOUBLE: ok = ok && append(d, &len, "%g", sf_get_double(in, i)); break;
    case SF_BOOL: ok = ok && append(d, &len, "%s", sf_get_bool(in, i) ? "true" : "false"); break;
    case SF_STRING:
      s = sf_get_string(in, i, &n);
      ok = ok && append(d, &len, "%.*s", (int)n, s);
      break;
    }
  }
  ok = ok && append(d, &len, " |");
  for (int i = 0; ok && i < sf_attr_count(op, SF_OUT); i++)
    ok = append(d, &len, " %s:%s", sf_attr_name(op, SF_OUT, i), type_word(sf_attr_type(op, SF_OUT, i)));
  if (!ok) return sf_error(op, "out of memory");
  sf_tuple *out = sf_tuple_new(op);
  if (!out) return -1;
  sf_set_string(out, d->text, d->buf, len);
  return sf_emit(op, out);
}

static void describe_close(sf_op *op, void *state) {
  Describe *d = state;
  free(d->buf);
  free(d);
}

SF_EXPORT const struct sf_operator sf_describe = {
  .abi_version = SF_OPERATOR_ABI,
  .open = describe_open,
  .process = describe_process,
  .close = describe_close,
};

enum { PICK_MAX = 16 };

typedef struct Pick {
  int from[PICK_MAX], to[PICK_MAX]; /* the pairs' input and output indices */
  int n;                            /* how many */
} Pick;

static int pick_open(sf_op *op, void **state) {
  const char *map = sf_param(op, "map");
  if (!map) return sf_error(op, "needs the parameter 'map'");
  Pick *p = calloc(1, sizeof *p);
  if (!p) return sf_error(op, "out of memory");
  for (const char *s = map; *s;) {
    while (*s == ' ') s++;
    if (!*s) break;
    const char *gt = strchr(s, '>'), *end = strchr(s, ' ');
    if (!end) end = s + strlen(s);
    if (!gt || gt > end || p->n == PICK_MAX) {
      free(p);
      return sf_error(op, "parameter 'map' must be up to %d pairs IN>OUT, got '%s'", PICK_MAX, map);
    }
    char in[64], out[64];
    snprintf(in, sizeof in, "%.*s", (int)(gt - s), s);
    snprintf(out, sizeof out, "%.*s", (int)(end - gt - 1), gt + 1);
    p->from[p->n] = sf_input_attr(op, in);
    p->to[p->n] = sf_output_attr(op, out);
    if (p->from[p->n] < 0 || p->to[p->n] < 0) {
      free(p);
      return sf_error(op, "parameter 'map': no input attribute '%s' or no output attribute '%s'", in, out);
    }
    p->n++;
    s = end;
  }
  *state = p;
  return 0;
}

static int pick_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  Pick *p = state;
  sf_tuple *out = sf_tuple_new(op);
  if (!out) return -1;
  if (sf_copy_attrs(op, out, in, p->from, p->to, p->n) < 0) {
    sf_tuple_free(out);
    return -1;
  }
  return sf_emit(op, out);
}

static void pick_close(sf_op *op, void *state) {
  free(state);
}

SF_EXPORT const struct sf_operator sf_pick = {
  .abi_version = SF_OPERATOR_ABI,
  .open = pick_open,
  .process = pick_process,
  .close = pick_close,
};
