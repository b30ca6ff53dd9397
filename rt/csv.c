/* csv.c: the RFC 4180 reader and writer (see csv.h). The reader scans runs of plain bytes inside
 * its buffer at a time (memchr for quoted text) and copies them into the record's field data, so
 * a record may span any number of buffer refills. */
#include "csv.h"

#include "digits.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { CSV_BUFFER = 1 << 20, CSV_ERROR = -2 /* not EOF */ };

/* CsvReadFn over a stdio stream. */
static ssize_t read_stdio(void *ctx, char *buf, size_t cap) {
  FILE *f = ctx;
  size_t n = fread(buf, 1, cap, f);
  return n == 0 && ferror(f) ? -1 : (ssize_t)n;
}

void csv_reader_init(CsvReader *r, FILE *f) {
  csv_reader_init_fn(r, read_stdio, f);
}

void csv_reader_init_fn(CsvReader *r, CsvReadFn *read, void *ctx) {
  memset(r, 0, sizeof *r);
  r->read = read;
  r->ctx = ctx;
  r->cap = CSV_BUFFER;
  r->buf = sf_xmalloc(r->cap);
  r->line = 1;
  r->max_row = CSV_MAX_ROW;
  r->max_fields = CSV_MAX_FIELDS;
  buf_init(&r->data);
}

void csv_reader_release(CsvReader *r) {
  free(r->buf);
  free(r->ends);
  buf_release(&r->data);
  memset(r, 0, sizeof *r);
}

/* Makes at least one unread byte available; false at the end of the input or on a read error
 * (r->failed). Takes what one read gives: a pipe's rows are parsed as they come. */
static bool refill(CsvReader *r) {
  if (r->pos < r->len) return true;
  if (r->eof || r->failed) return false;
  r->base += r->len;
  r->pos = 0;
  r->len = 0;
  errno = 0;
  ssize_t n = r->read(r->ctx, r->buf, r->cap);
  if (n < 0) {
    r->failed = true;
    r->read_errno = errno ? errno : EIO;
    return false;
  }
  if (n == 0) {
    r->eof = true;
    return false;
  }
  r->len = (size_t)n;
  return true;
}

static int peek(CsvReader *r) {
  return refill(r) ? (unsigned char)r->buf[r->pos] : EOF;
}

static int fail(CsvReader *r, int64_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(CsvReader *r, int64_t line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err, sizeof r->err, fmt, ap);
  va_end(ap);
  r->err_line = line;
  return -1;
}

static int read_error(CsvReader *r) {
  return fail(r, r->line, "read error: %s", strerror(r->read_errno));
}

/* Counts the LFs in p[0..n). */
static int64_t count_lines(const char *p, size_t n) {
  int64_t lines = 0;
  const char *end = p + n;
  while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
    lines++;
    p++;
  }
  return lines;
}

/* True, after fail(), when the row would grow past max_row bytes by taking the n bytes at r->pos
 * (those before r->pos since the record's start are counted already). The reader then stands on
 * the first byte past the limit, whatever its buffer's size, so that csv_skip_line goes on from
 * the same place. */
static bool too_long(CsvReader *r, size_t n) {
  uint64_t used = r->base + r->pos - r->record_offset;
  if (used + n <= r->max_row) return false;
  size_t allowed = used < r->max_row ? (size_t)(r->max_row - used) : 0;
  r->line += count_lines(r->buf + r->pos, allowed); /* a quoted field's line breaks */
  r->pos += allowed;
  fail(r, r->record_line, "row is longer than %llu bytes (parameter 'maxrow')", (unsigned long long)r->max_row);
  return true;
}

/* Ends the field whose text is in data; -1 after fail() when the row already has max_fields. */
static int end_field(CsvReader *r) {
  if (r->nfields >= r->max_fields)
    return fail(r, r->record_line, "row has more than %d field%s (parameter 'maxfields')", r->max_fields,
                r->max_fields == 1 ? "" : "s");
  if (r->nfields == r->fields_cap) {
    r->fields_cap = r->fields_cap ? 2 * r->fields_cap : 16;
    r->ends = sf_xrealloc(r->ends, sizeof *r->ends * (size_t)r->fields_cap);
  }
  r->ends[r->nfields++] = r->data.n;
  buf_putc(&r->data, 0);
  return 0;
}

/* Reads a quoted field's text after its opening quote, up to and including the closing quote. */
static int read_quoted(CsvReader *r) {
  int64_t start_line = r->line;
  for (;;) {
    if (!refill(r)) {
      if (r->failed) return read_error(r);
      return fail(r, start_line, "quoted field is not closed before the end of the file");
    }
    const char *p = r->buf + r->pos, *end = r->buf + r->len;
    const char *q = memchr(p, '"', (size_t)(end - p));
    size_t n = (size_t)((q ? q : end) - p);
    if (too_long(r, q ? n + 1 : n)) return -1; /* the text and its closing quote */
    buf_append(&r->data, p, n);
    r->line += count_lines(p, n);
    r->pos += n;
    if (!q) continue;
    r->pos++; /* the quote */
    if (peek(r) != '"') return 0;
    buf_putc(&r->data, '"');
    r->pos++;
  }
}

/* Reads an unquoted field's text up to (not including) the comma, line end or end of file; returns
 * the byte that ended it (',', '\n' or EOF; a CRLF's CR is consumed and reported as '\n'), or
 * CSV_ERROR after fail(). */
static int read_plain(CsvReader *r) {
  for (;;) {
    if (!refill(r)) {
      if (r->failed) {
        read_error(r);
        return CSV_ERROR;
      }
      return EOF;
    }
    const char *p = r->buf + r->pos, *end = r->buf + r->len, *q = p;
    while (q < end && *q != ',' && *q != '\n' && *q != '\r' && *q != '"') q++;
    if (too_long(r, (size_t)(q - p))) return CSV_ERROR;
    buf_append(&r->data, p, (size_t)(q - p));
    r->pos += (size_t)(q - p);
    if (q == end) continue;
    if (*q == '"') {
      fail(r, r->line, "quote inside an unquoted field");
      return CSV_ERROR;
    }
    if (*q != '\r') return *q;
    r->pos++; /* the CR */
    if (peek(r) == '\n') return '\n';
    if (too_long(r, 0)) return CSV_ERROR;
    buf_putc(&r->data, '\r'); /* a lone CR is data */
  }
}

int csv_read(CsvReader *r) {
  buf_reset(&r->data);
  r->nfields = 0;
  r->blank = false;
  r->unterminated = false;
  if (!r->started) {
    /* a byte order mark is dropped; a prefix of one followed by something else is data */
    static const char bom[] = "\xEF\xBB\xBF";
    r->started = true;
    while (r->nprefix < 3 && peek(r) == (unsigned char)bom[r->nprefix]) r->prefix[r->nprefix++] = r->buf[r->pos++];
    if (r->nprefix == 3) r->nprefix = 0;
  }
  if (!r->nprefix && peek(r) == EOF) return r->failed ? read_error(r) : 0;
  r->record_line = r->line;
  r->record_offset = r->base + r->pos - (size_t)r->nprefix; /* a prefix that was no BOM is the record's */
  for (;;) {
    int c;
    bool quoted = !r->nprefix && peek(r) == '"';
    buf_append(&r->data, r->prefix, (size_t)r->nprefix); /* the first field only */
    r->nprefix = 0;
    if (quoted) {
      r->pos++;
      if (read_quoted(r) < 0) return -1;
      c = peek(r);
      if (c == '\r') {
        r->pos++;
        c = peek(r);
        if (c == EOF && r->failed) return read_error(r);
        if (c != '\n') return fail(r, r->line, "a closing quote must be followed by a comma or a line end");
      }
      if (c == EOF && r->failed) return read_error(r); /* not the end of the input */
      if (c != ',' && c != '\n' && c != EOF)
        return fail(r, r->line, "a closing quote must be followed by a comma or a line end");
    } else {
      c = read_plain(r);
      if (c == CSV_ERROR) return -1;
    }
    if (end_field(r) < 0) return -1;
    if (c == ',') {
      r->pos++;
      continue;
    }
    if (c == '\n') {
      r->pos++;
      r->line++;
    } else {
      r->unterminated = true; /* EOF */
    }
    r->blank = r->nfields == 1 && !quoted && r->data.n == 1;
    return 1;
  }
}

uint64_t csv_reader_offset(const CsvReader *r) {
  return r->base + r->pos - (size_t)r->nprefix;
}

void csv_reader_seek(CsvReader *r, uint64_t offset, int64_t line) {
  r->base = offset;
  r->pos = r->len = 0;
  r->eof = r->failed = false;
  r->started = offset > 0;
  r->nprefix = 0;
  r->line = line;
}

const char *csv_field(const CsvReader *r, int i, size_t *len) {
  size_t start = i == 0 ? 0 : r->ends[i - 1] + 1;
  *len = r->ends[i] - start;
  return r->data.p + start;
}

/* ---- writing ----
 * Every writer reserves the worst case of what it writes once (buf_reserve), then stores the bytes
 * through a plain pointer: no room check per byte. A field needs at most 2n + 2 bytes (every byte a
 * quote, doubled, and the two quotes around it); a number or a bool at most SF_DOUBLE_CHARS with
 * the NUL that double_format writes after its text (an int at most SF_INT_CHARS - 1). */

/* The bytes that make a field quoted. */
static const bool csv_special[256] = { [','] = true, ['"'] = true, ['\r'] = true, ['\n'] = true };

/* Writes the field p[0..n) at out, which has room for 2n + 2 bytes: as it is, or between quotes
 * with each quote doubled when it holds a comma, quote, CR or LF (RFC 4180). Returns its end. */
static char *put_field_at(char *out, const char *p, size_t n) {
  const unsigned char *u = (const unsigned char *)p;
  size_t i = 0;
  while (i < n && !csv_special[u[i]]) i++;
  if (i == n) {
    if (n) memcpy(out, p, n);
    return out + n;
  }
  *out++ = '"';
  memcpy(out, p, i); /* the bytes before the first special one hold no quote */
  out += i;
  p += i;
  const char *end = p + (n - i);
  while (p < end) {
    const char *q = memchr(p, '"', (size_t)(end - p));
    if (!q) {
      memcpy(out, p, (size_t)(end - p));
      out += end - p;
      break;
    }
    memcpy(out, p, (size_t)(q - p + 1));
    out += q - p + 1;
    *out++ = '"';
    p = q + 1;
  }
  *out++ = '"';
  return out;
}

/* Ends what a writer stored at b->p + b->n up to out. */
static void put_end(Buf *b, char *out) {
  b->n = (size_t)(out - b->p);
  *out = 0;
}

void csv_put_field(Buf *b, const char *p, size_t n) {
  put_end(b, put_field_at(buf_reserve(b, 2 * n + 2), p, n));
}

void csv_put_value(Buf *b, const Value *v) {
  if (v->type == TYPE_STRING)
    csv_put_field(b, v->s.p, v->s.n);
  else
    value_format(v, b); /* int, double (shortest round-trip), bool: never need quotes */
}

/* An int, a double or a bool at out (the bytes of value_format: none needs quotes); its end, or
 * NULL for a string or a value without a type. */
static inline char *put_scalar_at(char *out, const Value *x) {
  switch (x->type) {
  case TYPE_INT: return out + sf_int_format(x->i, out);
  case TYPE_DOUBLE: return out + double_format(x->d, out, SF_DOUBLE_CHARS);
  case TYPE_BOOL:
    if (x->b) {
      memcpy(out, "true", 4);
      return out + 4;
    }
    memcpy(out, "false", 5);
    return out + 5;
  default: return NULL;
  }
}

void csv_put_row(Buf *b, const Value *v, int n) {
  if (n == 1 && v[0].type == TYPE_STRING && v[0].s.n == 0) {
    buf_puts(b, "\"\"\n");
    return;
  }
  size_t room = (size_t)n + 1; /* the commas and the LF */
  for (int i = 0; i < n; i++) room += v[i].type == TYPE_STRING ? 2 * v[i].s.n + 2 : SF_DOUBLE_CHARS;
  char *out = buf_reserve(b, room);
  for (int i = 0; i < n; i++) {
    if (i) *out++ = ',';
    const Value *x = &v[i]; /* the bytes of csv_put_value */
    char *end = x->type == TYPE_STRING ? put_field_at(out, x->s.p, x->s.n) : put_scalar_at(out, x);
    if (!end) {
      put_end(b, out);
      sf_die("value_format of a value without a type");
    }
    out = end;
  }
  *out++ = '\n';
  put_end(b, out);
}

/* A row of values none of which is a string at out; its end. */
static inline char *put_plain_row_at(char *out, const Value *v, int n) {
  for (int i = 0; i < n; i++) {
    out = put_scalar_at(out, &v[i]); /* the bytes of csv_put_row */
    if (!out) sf_die("csv_put_plain_rows of a string or a value without a type");
    *out++ = ',';
  }
  out[-1] = '\n'; /* the last comma: a row has at least one value */
  return out;
}

int csv_put_plain_rows(Buf *b, const Value *const *rows, int n, int nvals, size_t until) {
  if (n <= 0) return 0;
  sf_assert(nvals > 0);
  char *out = buf_reserve(b, (size_t)n * csv_plain_row_max(nvals));
  const char *stop = b->p + until;
  int r = 0;
  while (r < n) {
    out = put_plain_row_at(out, rows[r++], nvals);
    if (out >= stop) break;
  }
  put_end(b, out);
  return r;
}

int csv_skip_line(CsvReader *r) {
  for (;;) {
    if (!refill(r)) return r->failed ? read_error(r) : 0;
    const char *p = r->buf + r->pos, *end = r->buf + r->len;
    const char *q = memchr(p, '\n', (size_t)(end - p));
    if (!q) {
      r->pos = r->len;
      continue;
    }
    r->pos += (size_t)(q - p) + 1;
    r->line++;
    return 1;
  }
}
