/* diag.c: compiler-style diagnostics. A pass reports every problem it finds through a Diag and the
 * driver stops after the pass when d->nerrors is non-zero. Messages are lowercase, problem first,
 * names quoted: `graph.xml:12:7: error: unknown attribute 'px'`. */
#include "sf.h"

void diag_init(Diag *d, const char *file, FILE *out) {
  d->file = file;
  d->out = out ? out : stderr;
  d->nerrors = 0;
  d->nwarnings = 0;
}

void diag_verror(Diag *d, int line, int col, const char *fmt, va_list ap) {
  if (line > 0 && col > 0)
    fprintf(d->out, "%s:%d:%d: error: ", d->file, line, col);
  else if (line > 0)
    fprintf(d->out, "%s:%d: error: ", d->file, line);
  else
    fprintf(d->out, "%s: error: ", d->file);
  vfprintf(d->out, fmt, ap);
  fputc('\n', d->out);
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
  vfprintf(d->out, fmt, ap);
  va_end(ap);
  fputc('\n', d->out);
}
