/* tuple.c: reference-counted immutable rows. One allocation per tuple: the header, the values and
 * the bytes of every string value, so a tuple never points outside itself. */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

Tuple *tuple_new(const Value *vals, int n) {
  size_t bytes = 0;
  for (int i = 0; i < n; i++)
    if (vals[i].type == TYPE_STRING) bytes += vals[i].s.n;
  Tuple *t = sf_xmalloc(sizeof *t + sizeof(Value) * (size_t)n + bytes);
  atomic_init(&t->refs, 1);
  t->n = n;
  char *p = (char *)(t->v + n);
  for (int i = 0; i < n; i++) {
    t->v[i] = vals[i];
    if (vals[i].type == TYPE_STRING) {
      if (vals[i].s.n) memcpy(p, vals[i].s.p, vals[i].s.n);
      t->v[i].s.p = p;
      p += vals[i].s.n;
    }
  }
  return t;
}

Tuple *tuple_ref(Tuple *t) {
  atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
  return t;
}

void tuple_unref(Tuple *t) {
  if (t && atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1) free(t);
}

void tuple_describe(const Tuple *t, const Schema *s, char *buf, size_t cap) {
  Buf b;
  buf_init(&b);
  buf_putc(&b, '(');
  for (int i = 0; t && i < t->n; i++) {
    if (i) buf_puts(&b, ", ");
    if (s && i < s->nattrs) {
      buf_puts(&b, s->attrs[i].name);
      buf_putc(&b, '=');
    }
    if (t->v[i].type == TYPE_STRING) buf_putc(&b, '"');
    value_format(&t->v[i], &b);
    if (t->v[i].type == TYPE_STRING) buf_putc(&b, '"');
  }
  buf_putc(&b, ')');
  snprintf(buf, cap, "%s", b.p ? b.p : "()");
  buf_release(&b);
}
