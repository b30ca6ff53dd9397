/* writer.c: the Writer (sf.h): text into a stdio stream through a buffer of its own. */
#include "sf.h"

#include <stdlib.h>

Writer *wr_open(FILE *out) {
  Writer *w = sf_xmalloc(sizeof *w);
  w->out = out;
  w->err = 0;
  w->len = 0;
  return w;
}

void wr_flush(Writer *w) {
  if (w->len && !w->err) {
    errno = 0;
    if (fwrite(w->buf, 1, w->len, w->out) != w->len) w->err = errno ? errno : EIO;
  }
  w->len = 0;
}

void wr_fmt(Writer *w, const char *fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    wr_put(w, small, (size_t)n);
    return;
  }
  char *big = sf_xmalloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  wr_put(w, big, (size_t)n);
  free(big);
}

void wr_int(Writer *w, long v) {
  char digits[24];
  int n = 0;
  unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
  do digits[n++] = (char)('0' + u % 10);
  while ((u /= 10) != 0);
  if (v < 0) wr_char(w, '-');
  while (n > 0) wr_char(w, digits[--n]);
}

int wr_close(Writer *w) {
  wr_flush(w);
  int err = w->err;
  FILE *out = w->out;
  free(w);
  errno = 0;
  if (!err && (fflush(out) != 0 || ferror(out))) err = errno ? errno : EIO;
  if (err) {
    errno = err;
    return -1;
  }
  return 0;
}
