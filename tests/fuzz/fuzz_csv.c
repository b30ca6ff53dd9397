/* fuzz_csv.c: libFuzzer target for the CSV reader (rt/csv.c). The input is the file. Its length
 * chooses how many bytes each read returns (1 to 13) and the reader's buffer size (the default, or
 * 1 to 61 bytes), so records cross refills at every offset as the fuzzer varies the length. Every
 * record is read to the end or to the first error. Properties (a violation aborts): every record
 * read, written back with csv_put_field (a lone empty field as ""), reads back as the same fields,
 * ended by its line end, and csv_put_row of its fields as string values writes the same bytes; a
 * record is `unterminated` exactly when it is the last one and the input does not end with LF. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "csv.h"

typedef struct MemInput {
  const char *p; /* what is left to read */
  size_t n;      /* how many bytes */
  size_t chunk;  /* at most this many per read */
} MemInput;

static ssize_t read_input(void *ctx, char *buf, size_t cap) {
  MemInput *in = ctx;
  size_t n = in->n < cap ? in->n : cap;
  if (n > in->chunk) n = in->chunk;
  memcpy(buf, in->p, n);
  in->p += n;
  in->n -= n;
  return (ssize_t)n;
}

/* Writes the current record of r as one CSV row into b. */
static void put_record(const CsvReader *r, Buf *b) {
  buf_reset(b);
  size_t len;
  if (r->nfields == 1 && csv_field(r, 0, &len) && len == 0 && !r->blank) {
    buf_puts(b, "\"\"\n");
    return;
  }
  for (int i = 0; i < r->nfields; i++) {
    const char *f = csv_field(r, i, &len);
    if (i) buf_putc(b, ',');
    csv_put_field(b, f, len);
  }
  buf_putc(b, '\n');
}

/* Reads row (one record) back and aborts unless its fields are those of r. */
static void check_round_trip(const CsvReader *r, const Buf *row) {
  MemInput in = {row->p, row->n, row->n};
  CsvReader back;
  csv_reader_init_fn(&back, read_input, &in);
  int rc = csv_read(&back);
  bool same = rc == 1 && back.nfields == r->nfields && back.blank == r->blank && !back.unterminated;
  for (int i = 0; same && i < r->nfields; i++) {
    size_t n1, n2;
    const char *f1 = csv_field(r, i, &n1), *f2 = csv_field(&back, i, &n2);
    same = n1 == n2 && memcmp(f1, f2, n1) == 0;
  }
  if (!same || csv_read(&back) != 0) {
    fprintf(stderr, "fuzz_csv: a record of line %lld (%d fields) written as '%s' does not read back (%d: %s)\n",
            (long long)r->record_line, r->nfields, row->p, rc, rc < 0 ? back.err : "other fields");
    abort();
  }
  csv_reader_release(&back);
}

/* Aborts unless csv_put_row of r's fields as strings writes the bytes of row (put_record's). */
static void check_put_row(const CsvReader *r, const Buf *row, Buf *b) {
  Value v[64];
  if (r->blank || r->nfields > 64) return; /* a blank line has no row form: put_record writes it as LF */
  for (int i = 0; i < r->nfields; i++) {
    size_t n;
    const char *f = csv_field(r, i, &n);
    v[i] = value_string(f, n);
  }
  buf_reset(b);
  csv_put_row(b, v, r->nfields);
  if (b->n != row->n || memcmp(b->p, row->p, row->n)) {
    fprintf(stderr, "fuzz_csv: csv_put_row writes '%s' for the record of line %lld, csv_put_field '%s'\n", b->p,
            (long long)r->record_line, row->p);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MemInput in = {(const char *)data, size, 1 + size % 13};
  CsvReader r;
  csv_reader_init_fn(&r, read_input, &in);
  if (size % 3) r.cap = 1 + size % 61;
  Buf row, row2;
  buf_init(&row);
  buf_init(&row2);
  int rc;
  bool any = false, unterminated = false; /* a record was read; the last one read was unterminated */
  while ((rc = csv_read(&r)) == 1) {
    if (unterminated) {
      fprintf(stderr, "fuzz_csv: the record before line %lld was unterminated but not the last\n",
              (long long)r.record_line);
      abort();
    }
    any = true;
    unterminated = r.unterminated;
    size_t len;
    const char *first = csv_field(&r, 0, &len);
    /* a byte order mark is skipped only at the start of a file: a field starting with one (after
     * a first mark) cannot be the start of a file that reads back the same */
    if (len >= 3 && !memcmp(first, "\xEF\xBB\xBF", 3)) continue;
    put_record(&r, &row);
    check_round_trip(&r, &row);
    check_put_row(&r, &row, &row2);
  }
  /* in memory, a read never fails: rc < 0 is a syntax error, after which nothing is claimed */
  if (rc == 0 && any && unterminated != (data[size - 1] != '\n')) {
    fprintf(stderr, "fuzz_csv: the last record is%s unterminated, the input ends with %#x\n", unterminated ? "" : " not",
            data[size - 1]);
    abort();
  }
  buf_release(&row);
  buf_release(&row2);
  csv_reader_release(&r);
  return 0;
}
