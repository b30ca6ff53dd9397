/* diag.c: compiler-style diagnostics. A pass reports every problem it finds through a Diag and the
 * driver stops after the pass when d->nerrors is non-zero. Messages are lowercase, problem first,
 * names quoted: `graph.xml:12:7: error: unknown attribute 'px'`. Every diagnostic is exactly one
 * line: a line break inside a message (a quoted parameter can hold one) is written as `\n`, so
 * tools and tests can split the output on lines. */
#include "sf.h"

#include <stdlib.h>

void diag_init(Diag *d, const char *file, FILE *out) {
  d->file = file;
  d->origin = NULL;
  d->out = out ? out : stderr;
  d->nerrors = 0;
  d->nwarnings = 0;
}

/* Writes the formatted message with line breaks escaped, then ends the line. */
static void put_message(FILE *out, const char *fmt, va_list ap) {
  char small[512];
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(small, sizeof small, fmt, copy);
  va_end(copy);
  char *text = small;
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof small) {
    text = sf_xmalloc((size_t)n + 1);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
  }
  for (const char *p = text; *p; p++) {
    if (*p == '\n')
      fputs("\\n", out);
    else if (*p == '\r')
      fputs("\\r", out);
    else
      fputc(*p, out);
  }
  fputc('\n', out);
  if (text != small) free(text);
}

/* Column `col` of an expression (counted in its decoded text) as a line and column of the file:
 * walks the raw XML text, where an entity reference like `&gt;` is one character of the
 * expression and CR LF is one line break. */
static void map_column(const TextOrigin *o, int col, int *line, int *c) {
  const char *p = o->raw;
  int l = o->line, cc = o->col;
  for (int i = 1; i < col && *p; i++) {
    if (*p == '&') {
      const char *semi = p + 1;
      while (*semi && *semi != ';' && semi - p < 12) semi++;
      if (*semi == ';') {
        cc += (int)(semi - p) + 1;
        p = semi + 1;
        continue;
      }
    }
    if (*p == '\r' && p[1] == '\n') p++;
    if (*p == '\n') {
      l++;
      cc = 1;
    } else {
      cc++;
    }
    p++;
  }
  *line = l;
  *c = cc;
}

void diag_verror(Diag *d, int line, int col, const char *fmt, va_list ap) {
  if (d->origin && col > 0) {
    if (d->origin->raw)
      map_column(d->origin, col, &line, &col);
    else
      col = 0; /* the expression's place in the file is unknown: say only the line */
  }
  if (line > 0 && col > 0)
    fprintf(d->out, "%s:%d:%d: error: ", d->file, line, col);
  else if (line > 0)
    fprintf(d->out, "%s:%d: error: ", d->file, line);
  else
    fprintf(d->out, "%s: error: ", d->file);
  put_message(d->out, fmt, ap);
  d->nerrors++;
}

void diag_error(Diag *d, int line, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_verror(d, line, col, fmt, ap);
  va_end(ap);
}

void diag_note(Diag *d, int line, const char *fmt, ...) {
  va_list ap;
  if (line > 0)
    fprintf(d->out, "%s:%d: note: ", d->file, line);
  else
    fprintf(d->out, "%s: note: ", d->file);
  va_start(ap, fmt);
  put_message(d->out, fmt, ap);
  va_end(ap);
}
