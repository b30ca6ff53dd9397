/* csv.h: RFC 4180 files, the one file format of FileSource and FileSink.
 *
 * Reading streams records from a CsvReadFn (or a FILE*) through a large buffer of its own, taking
 * whatever one read gives (a pipe's rows are seen as they come, not once the buffer fills): fields
 * separated by commas, records ended by LF or CRLF, fields quoted with '"' when they hold commas,
 * quotes ("" inside quotes) or line breaks. The last record may end at the end of the input
 * instead: it is returned with `unterminated` set, and what that means is the caller's decision (a
 * file cut short looks like that). A UTF-8 byte order mark at the start of the file is skipped. The
 * reader is strict where RFC 4180 is: a quote inside an unquoted field, anything but a comma or line
 * end after a closing quote, and a quoted field still open at the end of the file are errors with
 * the line they occur on. A CR not followed by LF is data.
 *
 * Rows are bounded, so that an input without line ends (or of nothing but commas) cannot take the
 * memory: a row longer than max_row bytes (from its first byte to its line end, which is not
 * counted; quotes and commas are) or of more than max_fields fields is an error naming the line
 * the row starts on, found before more than max_row bytes of it are held. csv_skip_line then
 * drops the rest of the line a buffer at a time.
 *
 * Writing appends to a Buf: a field is quoted only when it holds a comma, quote, CR or LF; rows
 * end with LF.
 *
 * Ownership: the reader owns its buffers; the fields of a record stay valid until the next
 * csv_read or csv_reader_release. */
#ifndef SF_CSV_H
#define SF_CSV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "value.h"

/* Where a reader's bytes come from: puts at most cap bytes into buf and returns how many (fewer is
 * fine), 0 at the end of the input, -1 on an error with errno set. */
typedef ssize_t CsvReadFn(void *ctx, char *buf, size_t cap);

typedef struct CsvReader {
  CsvReadFn *read;   /* reads the input */
  void *ctx;         /* its argument (not owned) */
  char *buf;         /* input buffer */
  size_t cap;        /* its size */
  size_t len;        /* bytes in it */
  size_t pos;        /* next byte to parse */
  bool eof;          /* the input ended */
  bool failed;       /* a read failed (read_errno says why) */
  int read_errno;    /* errno of that read */
  bool started;      /* the first bytes were read (and a BOM skipped) */
  char prefix[3];    /* bytes consumed looking for a BOM that were not one: the first field's start */
  int nprefix;       /* how many */
  int64_t line;      /* physical line (1-based) of the next byte (64-bit: inputs may be endless) */
  int64_t record_line; /* line where the record last returned by csv_read starts */
  uint64_t base;     /* offset in the input of buf[0] (bytes read before this buffer's) */
  uint64_t record_offset; /* offset in the input where the record last returned by csv_read starts */
  Buf data;          /* the fields of the current record, each followed by a NUL */
  size_t *ends;      /* per field: offset of its terminating NUL in data */
  int nfields;       /* fields in the current record */
  int fields_cap;    /* entries allocated in ends */
  bool blank;        /* the current record is an empty line (one empty, unquoted field) */
  bool unterminated; /* the current record ended at the end of the input, without a line end (it is
                        the last one: the next csv_read returns 0 or a read error) */
  int64_t err_line;  /* after an error: the line it was found on */
  char err[160];     /* after an error: what is wrong, lowercase, no location */
  uint64_t max_row;  /* longest row in bytes (CSV_MAX_ROW unless the caller sets it, >= 1) */
  int max_fields;    /* most fields of a row (CSV_MAX_FIELDS unless the caller sets it, >= 1) */
} CsvReader;

/* The limits of a reader that its caller did not change: 1 MiB and 10,000 fields. */
enum { CSV_MAX_ROW = 1 << 20, CSV_MAX_FIELDS = 10000 };

/* Prepares r to read what `read` gives. Allocates the buffer; tests may lower r->cap afterwards (to
 * any size >= 1) to make records cross refills, and the caller may set r->max_row and
 * r->max_fields before the first csv_read. */
void csv_reader_init_fn(CsvReader *r, CsvReadFn *read, void *ctx);
/* csv_reader_init_fn reading f (with fread) from its current position. */
void csv_reader_init(CsvReader *r, FILE *f);
/* Frees what the reader allocated (not f); r must be initialized again before reuse. */
void csv_reader_release(CsvReader *r);
/* The offset in the input of the next byte csv_read parses (after a record: where the next one,
 * or the blank lines before it, starts). */
uint64_t csv_reader_offset(const CsvReader *r);
/* Forgets what the reader buffered, for a caller that moved its input to `offset` (lseek), with
 * `line` the physical line number there: the next csv_read reads from there as it would have
 * read on from that point (a byte order mark is looked for only at offset 0). */
void csv_reader_seek(CsvReader *r, uint64_t offset, int64_t line);
/* Reads the next record. Returns 1 with r->nfields, r->record_line, r->blank and r->unterminated
 * set; 0 at the end of the file; -1 on a syntax error or a read error (errno set) with r->err and
 * r->err_line. */
int csv_read(CsvReader *r);
/* After a syntax error of csv_read: drops what is left of the line the error is on, up to and
 * including its line end, so that the next csv_read starts on the next line (a source skipping
 * malformed lines). 1 when a line end was dropped, 0 at the end of the input, -1 on a read error
 * (r->err set as for csv_read). */
int csv_skip_line(CsvReader *r);
/* Field i (0 <= i < r->nfields) of the current record: its bytes, NUL-terminated, and *len. */
const char *csv_field(const CsvReader *r, int i, size_t *len);

/* Appends one field, quoted when it holds a comma, quote, CR or LF. */
void csv_put_field(Buf *b, const char *p, size_t n);
/* Appends one value as a field: int decimal, double by value_format_double (shortest round-trip
 * text), bool true/false, string by csv_put_field. */
void csv_put_value(Buf *b, const Value *v);
/* Appends a row of n values separated by commas and ended by LF. A row made of one empty string is
 * written as "" so that it does not read back as a blank line. */
void csv_put_row(Buf *b, const Value *v, int n);
/* The most bytes csv_put_plain_rows writes for one row of n values, none of them a string. */
static inline size_t csv_plain_row_max(int n) {
  return (size_t)n * (SF_DOUBLE_CHARS + 1) + 1;
}
/* Appends the rows of tuples' values rows[0..n) (nvals values each, none of them a string: a
 * schema without string attributes), each as csv_put_row writes it, reserving room once for them
 * all; stops after the row that takes b past `until` bytes. Returns the rows written. */
int csv_put_plain_rows(Buf *b, const Value *const *rows, int n, int nvals, size_t until);

#endif
