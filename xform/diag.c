/* diag.c: compiler-style diagnostics, kept as records. A pass reports every problem it finds through
 * a Diag; the driver calls diag_flush when the pass ends, which prints them, and stops when
 * d->nerrors is non-zero. Checks print in document order (by line, then column, then the order
 * reported), so a user reads the problems top to bottom whichever check found them; parsing prints
 * libxml2's messages in the order it met them. Messages are lowercase, problem first,
 * names quoted: `graph.xml:12:7: error: unknown attribute 'px'`. Every diagnostic is exactly one
 * line: a line break inside a message (a quoted parameter can hold one) is written as `\n`, so
 * tools and tests can split the output on lines. */
#include "sf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void diag_init(Diag *d, const char *file, FILE *out) {
  *d = (Diag){ .file = file, .out = out ? out : stderr };
}

/* The formatted message in memory of its own. */
static char *format_message(const char *fmt, va_list ap) {
  char small[512];
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(small, sizeof small, fmt, copy);
  va_end(copy);
  if (n < 0) n = 0;
  char *text = sf_xmalloc((size_t)n + 1);
  if ((size_t)n < sizeof small)
    memcpy(text, small, (size_t)n + 1);
  else
    vsnprintf(text, (size_t)n + 1, fmt, ap);
  return text;
}

static DiagRecord *add_record(Diag *d, Severity severity, int line, int col, const char *fmt, va_list ap) {
  if (d->nrecs == d->caprecs) {
    d->caprecs = d->caprecs ? d->caprecs * 2 : 16;
    d->recs = sf_xrealloc(d->recs, sizeof *d->recs * (size_t)d->caprecs);
  }
  DiagRecord *r = &d->recs[d->nrecs++];
  *r = (DiagRecord){ .line = line > 0 ? line : 0, .col = line > 0 && col > 0 ? col : 0,
                     .severity = severity, .seq = d->seq++ };
  r->message = format_message(fmt, ap);
  return r;
}

void diag_verror(Diag *d, int line, int col, const char *fmt, va_list ap) {
  add_record(d, SEV_ERROR, line, col, fmt, ap);
  d->nerrors++;
}

void diag_error(Diag *d, int line, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_verror(d, line, col, fmt, ap);
  va_end(ap);
}

void diag_warning(Diag *d, int line, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add_record(d, SEV_WARNING, line, col, fmt, ap);
  va_end(ap);
  d->nwarnings++;
}

/* Column `col` of a text (counted in its decoded characters) as a line and column of the file.
 * With the raw XML known, walks it, where an entity reference like `&gt;` is one character of the
 * text and CR LF is one line break; without it, the text is on one line as it is (o->col > 0) or
 * only its line is known. Column 0 stays 0. */
static void locate(const TextOrigin *o, int col, int *line, int *c) {
  *line = o->line;
  if (!o->raw || col <= 0) {
    *c = !o->raw && o->col > 0 && col > 0 ? o->col + col - 1 : 0;
    return;
  }
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

void diag_verror_in(Diag *d, const TextOrigin *at, int col, const char *fmt, va_list ap) {
  int line, c;
  locate(at, col, &line, &c);
  diag_verror(d, line, c, fmt, ap);
}

void diag_error_in(Diag *d, const TextOrigin *at, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_verror_in(d, at, col, fmt, ap);
  va_end(ap);
}

void diag_note(Diag *d, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (d->nrecs == 0) {
    add_record(d, SEV_NOTE, line, 0, fmt, ap);
  } else {
    DiagRecord *r = &d->recs[d->nrecs - 1];
    r->notes = sf_xrealloc(r->notes, sizeof *r->notes * (size_t)(r->nnotes + 1));
    r->notes[r->nnotes++] = (DiagNote){ .line = line > 0 ? line : 0, .message = format_message(fmt, ap) };
  }
  va_end(ap);
}

/* `file:line:col: SEVERITY: message` with line breaks escaped, then the end of the line. */
static void print_one(FILE *out, const char *file, int line, int col, Severity severity, const char *message) {
  static const char *const names[] = { [SEV_ERROR] = "error", [SEV_WARNING] = "warning", [SEV_NOTE] = "note" };
  fputs(file, out);
  if (line > 0) fprintf(out, ":%d", line);
  if (line > 0 && col > 0) fprintf(out, ":%d", col);
  fprintf(out, ": %s: ", names[severity]);
  for (const char *p = message; *p; p++) {
    if (*p == '\n')
      fputs("\\n", out);
    else if (*p == '\r')
      fputs("\\r", out);
    else
      fputc(*p, out);
  }
  fputc('\n', out);
}

static int record_cmp(const void *pa, const void *pb) {
  const DiagRecord *a = pa, *b = pb;
  if (a->line != b->line) return a->line < b->line ? -1 : 1;
  if (a->col != b->col) return a->col < b->col ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void diag_flush(Diag *d, DiagOrder order) {
  if (order == DIAG_BY_PLACE && d->nrecs > 1) qsort(d->recs, (size_t)d->nrecs, sizeof *d->recs, record_cmp);
  /* the records are printed into memory and written in one piece: stderr is unbuffered, and a
   * character at a time made a graph with 20,000 errors cost a million write calls */
  char *text = NULL;
  size_t len = 0;
  FILE *buf = open_memstream(&text, &len);
  if (!buf) sf_die("out of memory (diagnostics)");
  for (int i = 0; i < d->nrecs; i++) {
    DiagRecord *r = &d->recs[i];
    print_one(buf, d->file, r->line, r->col, r->severity, r->message);
    for (int k = 0; k < r->nnotes; k++) {
      print_one(buf, d->file, r->notes[k].line, 0, SEV_NOTE, r->notes[k].message);
      free(r->notes[k].message);
    }
    free(r->notes);
    free(r->message);
  }
  if (fclose(buf) != 0) sf_die("out of memory (diagnostics)");
  if (len) fwrite(text, 1, len, d->out);
  free(text);
  free(d->recs);
  d->recs = NULL;
  d->nrecs = d->caprecs = 0;
  fflush(d->out);
}

/* The Damerau-Levenshtein distance (optimal string alignment: no substring is edited twice) of a
 * and b with case ignored, or limit + 1 when it is more than limit. */
static int edit_distance(const char *a, const char *b, int limit) {
  int la = (int)strlen(a), lb = (int)strlen(b);
  if (abs(la - lb) > limit) return limit + 1;
  /* three rows of the table: two rows back (for swaps), the previous one, the current one */
  int *rows = sf_xmalloc(sizeof *rows * 3 * (size_t)(lb + 1));
  int *r2 = rows, *r1 = rows + lb + 1, *r0 = rows + 2 * (lb + 1);
  for (int j = 0; j <= lb; j++) r1[j] = j;
  for (int i = 1; i <= la; i++) {
    r0[0] = i;
    int ca = tolower((unsigned char)a[i - 1]), row_min = r0[0];
    for (int j = 1; j <= lb; j++) {
      int cb = tolower((unsigned char)b[j - 1]);
      int v = r1[j - 1] + (ca != cb);
      if (r1[j] + 1 < v) v = r1[j] + 1;
      if (r0[j - 1] + 1 < v) v = r0[j - 1] + 1;
      if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
          r2[j - 2] + 1 < v)
        v = r2[j - 2] + 1;
      r0[j] = v;
      if (v < row_min) row_min = v;
    }
    int *t = r2;
    r2 = r1;
    r1 = r0;
    r0 = t;
    if (row_min > limit) { /* every later row is at least as far */
      free(rows);
      return limit + 1;
    }
  }
  int d = r1[lb];
  free(rows);
  return d > limit ? limit + 1 : d;
}

const char *diag_suggest(const char *name, const char *const *candidates, int n) {
  if (!name || !*name) return NULL;
  size_t len = strlen(name);
  if (len > 128) return NULL; /* nobody retypes such a name; and the distance is quadratic */
  int limit = (int)((len < 3 ? 3 : len) / 3); /* a third of the name, at least 1 */
  const char *best = NULL;
  int best_d = limit + 2; /* 0: same letters in another case; 1 + distance otherwise */
  bool tie = false;
  for (int i = 0; i < n; i++) {
    const char *c = candidates[i];
    if (!c || !*c || !strcmp(c, name)) continue;
    int d = strcasecmp(c, name) == 0 ? 0 : 1 + edit_distance(name, c, limit);
    if (d > limit + 1) continue;
    if (best && !strcmp(best, c)) continue; /* the same name offered twice is one candidate */
    if (d < best_d) {
      best = c;
      best_d = d;
      tie = false;
    } else if (d == best_d) {
      tie = true;
    }
  }
  return tie ? NULL : best;
}
