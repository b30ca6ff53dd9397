/* test_io.c: CSV (rt/csv.c) and the operators that touch the outside world: Beacon, FileSource,
 * FileSink and Custom (rt/ops/beacon.c, filesource.c, filesink.c, custom.c, with the example
 * library graphs/ops/sf_example_ops.c).
 *
 * The CSV reader is fed from memory (fmemopen), every input also with tiny buffers so that records
 * cross refills at every byte. The operators run in whole graphs: each test writes its graph and
 * input files into its own mkdtemp directory (file parameters are absolute paths into it), parses
 * and checks the graph against the source tree's graph.xsd, runs it with exec_run and compares the
 * output file with the expected bytes; a failing run must print the exact message and leave neither
 * the output file nor a temporary file behind. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check_helper.h"
#include "csv.h"
#include "rt.h"
#include "sf.h"

#define EXAMPLE_LIB SF_BINARY_DIR "/lib/streamfission/libsf_example_ops.so"

/* ---- CSV reading ---- */

/* A CsvReadFn over a string that gives at most `step` bytes a call, as a pipe may, then fails with
 * errno `err` (0: ends). */
typedef struct Trickle {
  const char *p; /* what is left */
  size_t left;   /* its length */
  size_t step;   /* bytes a call at most */
  int err;       /* errno at the end (0: the input ends) */
} Trickle;

static ssize_t trickle_read(void *ctx, char *buf, size_t cap) {
  Trickle *t = ctx;
  if (t->left == 0 && t->err) {
    errno = t->err;
    return -1;
  }
  size_t n = t->left < t->step ? t->left : t->step;
  if (n > cap) n = cap;
  memcpy(buf, t->p, n);
  t->p += n;
  t->left -= n;
  return (ssize_t)n;
}

/* Every record of text, read with a buffer of `cap` bytes (0: the default) from a FILE, or with
 * `step` > 0 through reads of at most step bytes ending with errno err, rendered one per line as
 * `LINE: [f1|f2|...]` (a blank record as `LINE: blank`; ` (no line end)` after a record the end of
 * the input ended), or ending in `LINE: error: MESSAGE`. */
static char *read_records_at(const char *text, size_t cap, size_t step, int err, int64_t first_line) {
  FILE *f = fmemopen((void *)text, strlen(text), "rb");
  ck_assert_ptr_nonnull(f);
  Trickle t = { text, strlen(text), step, err };
  CsvReader r;
  if (step)
    csv_reader_init_fn(&r, trickle_read, &t);
  else
    csv_reader_init(&r, f);
  if (cap) r.cap = cap;
  if (first_line != 1) csv_reader_seek(&r, 0, first_line);
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  int rc;
  while ((rc = csv_read(&r)) == 1) {
    if (r.blank) {
      fprintf(m, "%" PRId64 ": blank\n", (int64_t)r.record_line);
      continue;
    }
    fprintf(m, "%" PRId64 ": [", (int64_t)r.record_line);
    for (int i = 0; i < r.nfields; i++) {
      size_t n;
      const char *p = csv_field(&r, i, &n);
      ck_assert_uint_eq(strlen(p), n); /* NUL-terminated (no NUL bytes in these inputs) */
      fprintf(m, "%s%s", i ? "|" : "", p);
    }
    fprintf(m, "]%s\n", r.unterminated ? " (no line end)" : "");
  }
  if (rc < 0) fprintf(m, "%" PRId64 ": error: %s\n", (int64_t)r.err_line, r.err);
  csv_reader_release(&r);
  fclose(f);
  fclose(m);
  return buf;
}

static char *read_records_from(const char *text, size_t cap, size_t step, int err) {
  return read_records_at(text, cap, step, err, 1);
}

static char *read_records(const char *text, size_t cap) {
  return read_records_from(text, cap, 0, 0);
}

/* Asserts text reads as expected with the default buffer, with buffers of 1 to 8 bytes, and with
 * the default buffer through reads that give 1 to 3 bytes at a time. */
static void assert_reads(const char *text, const char *expected) {
  for (size_t cap = 0; cap <= 8; cap++) {
    char *got = read_records(text, cap);
    ck_assert_msg(!strcmp(got, expected), "buffer %zu: got\n%s\nexpected\n%s", cap, got, expected);
    free(got);
  }
  for (size_t step = 1; step <= 3; step++) {
    char *got = read_records_from(text, 0, step, 0);
    ck_assert_msg(!strcmp(got, expected), "reads of %zu: got\n%s\nexpected\n%s", step, got, expected);
    free(got);
  }
}

START_TEST(test_csv_plain) {
  assert_reads("a,b,c\n1,2,3\n", "1: [a|b|c]\n2: [1|2|3]\n");
  assert_reads("a,b\n1,2", "1: [a|b]\n2: [1|2] (no line end)\n"); /* the last record ends the file */
  assert_reads("a,b\n1,", "1: [a|b]\n2: [1|] (no line end)\n");
  assert_reads("a\r", "1: [a\r] (no line end)\n"); /* a lone CR is data, not a line end */
  assert_reads("", "");
  assert_reads(",,\n", "1: [||]\n");
  assert_reads("x\n\ny\n", "1: [x]\n2: blank\n3: [y]\n");
  assert_reads(" a , b \n", "1: [ a | b ]\n"); /* spaces are data */
}
END_TEST

START_TEST(test_csv_quoted) {
  assert_reads("\"a,b\",\"say \"\"hi\"\"\",\"\"\n", "1: [a,b|say \"hi\"|]\n");
  assert_reads("\"\"\n", "1: []\n"); /* a quoted empty field is a record, not a blank line */
  assert_reads("\"\"\"\"\n", "1: [\"]\n");
  assert_reads("x\n\"q\"", "1: [x]\n2: [q] (no line end)\n");
  assert_reads("x\n\"\"", "1: [x]\n2: [] (no line end)\n");
  /* line breaks inside quotes: the next record's line counts them */
  assert_reads("h\n\"two\nlines\",x\n\"three\n\nlines\"\nlast\n",
               "1: [h]\n2: [two\nlines|x]\n4: [three\n\nlines]\n7: [last]\n");
}
END_TEST

START_TEST(test_csv_crlf) {
  assert_reads("a,b\r\n1,2\r\n", "1: [a|b]\n2: [1|2]\n");
  assert_reads("a\r\n\r\nb\r\n", "1: [a]\n2: blank\n3: [b]\n");
  assert_reads("\"q\"\r\nx\r\n", "1: [q]\n2: [x]\n");
  assert_reads("\"in\r\nside\",y\r\nz", "1: [in\r\nside|y]\n3: [z] (no line end)\n"); /* CRLF inside quotes is data */
  assert_reads("a\rb\n", "1: [a\rb]\n");                                  /* a lone CR is data */
  assert_reads("a,b\n1\r\n2\n", "1: [a|b]\n2: [1]\n3: [2]\n");            /* mixed line ends */
}
END_TEST

START_TEST(test_csv_bom) {
  assert_reads("\xEF\xBB\xBFid,x\n1,2\n", "1: [id|x]\n2: [1|2]\n");
  assert_reads("\xEF\xBB\xBF\"q,\",x\n", "1: [q,|x]\n");
  assert_reads("\xEF\xBB\xBF", "");
  assert_reads("\xEF\xBB\xBF\n", "1: blank\n");
  /* the start of a byte order mark followed by something else is data */
  assert_reads("\xEF\xBBx,y\n", "1: [\xEF\xBBx|y]\n");
  assert_reads("\xEF\xBB", "1: [\xEF\xBB] (no line end)\n");
  assert_reads("\xEF\"\n", "1: error: quote inside an unquoted field\n");
  assert_reads("\xEF\xBC\x8C,\xEF\xBB\xBF\n", "1: [\xEF\xBC\x8C|\xEF\xBB\xBF]\n"); /* later marks are data */
}
END_TEST

START_TEST(test_csv_errors) {
  assert_reads("a,b\n1,x\"y\n", "1: [a|b]\n2: error: quote inside an unquoted field\n");
  assert_reads("\"a\"b\n", "1: error: a closing quote must be followed by a comma or a line end\n");
  assert_reads("\"a\"\rb\n", "1: error: a closing quote must be followed by a comma or a line end\n");
  assert_reads("ok\n\"multi\nline\nnever closed\n",
               "1: [ok]\n2: error: quoted field is not closed before the end of the file\n");
  assert_reads("h\n\"x\ny\",\"a\"z\n", "1: [h]\n3: error: a closing quote must be followed by a comma or a line end\n");
}
END_TEST

START_TEST(test_csv_read_error) {
  /* a read that fails: the error names the line being read and what failed */
  for (size_t step = 1; step <= 4; step++) {
    char *got = read_records_from("a,b\n1,2\n3,", 0, step, EIO);
    ck_assert_str_eq(got, "1: [a|b]\n2: [1|2]\n3: error: read error: Input/output error\n");
    free(got);
    got = read_records_from("a,\"b\n", 0, step, EIO); /* inside quotes, on the line after the break */
    ck_assert_str_eq(got, "2: error: read error: Input/output error\n");
    free(got);
    /* right after a closing quote (and after a CR there): the failed read is not the end of the
     * input, so the record is not returned as one that ends the file */
    got = read_records_from("a,\"b\"", 0, step, EIO);
    ck_assert_str_eq(got, "1: error: read error: Input/output error\n");
    free(got);
    got = read_records_from("a,\"b\"\r", 0, step, EIO);
    ck_assert_str_eq(got, "1: error: read error: Input/output error\n");
    free(got);
  }
}
END_TEST

/* Reads text with a buffer of cap bytes (0: the default) and limits max_row, max_fields (0: the
 * defaults), calling csv_skip_line after each syntax error, rendered as read_records_from does,
 * plus "skip: RC" after each skip. */
static char *read_limited(const char *text, size_t cap, uint64_t max_row, int max_fields) {
  FILE *f = fmemopen((void *)text, strlen(text), "rb");
  ck_assert_ptr_nonnull(f);
  CsvReader r;
  csv_reader_init(&r, f);
  if (cap) r.cap = cap;
  if (max_row) r.max_row = max_row;
  if (max_fields) r.max_fields = max_fields;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  for (;;) {
    int rc = csv_read(&r);
    if (rc == 0) break;
    if (rc < 0) {
      fprintf(m, "%" PRId64 ": error: %s\n", (int64_t)r.err_line, r.err);
      rc = csv_skip_line(&r);
      fprintf(m, "skip: %d\n", rc);
      if (rc <= 0) break;
      continue;
    }
    fprintf(m, "%" PRId64 ": [", (int64_t)r.record_line);
    for (int i = 0; i < r.nfields; i++) {
      size_t n;
      fprintf(m, "%s%s", i ? "|" : "", csv_field(&r, i, &n));
    }
    fprintf(m, "]\n");
  }
  csv_reader_release(&r);
  fclose(f);
  fclose(m);
  return buf;
}

static char *read_skipping(const char *text, size_t cap) {
  return read_limited(text, cap, 0, 0);
}

START_TEST(test_csv_skip_line) {
  /* after a syntax error the rest of its line goes, and reading goes on with the next line (a
   * quoted field with a line break resynchronizes on the line the error was found on) */
  static const char text[] = "a,b\n1,x\"y,z\n2,3\n\"q\"w,4\n\"m\nn\"x\n5,6\n\"open,7\n8,9\n";
  static const char expected[] = "1: [a|b]\n"
                                 "2: error: quote inside an unquoted field\nskip: 1\n"
                                 "3: [2|3]\n"
                                 "4: error: a closing quote must be followed by a comma or a line end\nskip: 1\n"
                                 "6: error: a closing quote must be followed by a comma or a line end\nskip: 1\n"
                                 "7: [5|6]\n"
                                 "8: error: quoted field is not closed before the end of the file\nskip: 0\n";
  for (size_t cap = 0; cap <= 8; cap++) {
    char *got = read_skipping(text, cap);
    ck_assert_msg(!strcmp(got, expected), "buffer %zu: got\n%s\nexpected\n%s", cap, got, expected);
    free(got);
  }
}
END_TEST

/* Line numbers past 2^31 (an endless input): records, blank lines, errors, skips count on. */
START_TEST(test_csv_line_64bit) {
  static const char text[] = "a,b\n\"x\ny\",2\n\n3,4\n5,\"6\"z\n";
  static const char expected[] = "2147483646: [a|b]\n"
                                 "2147483647: [x\ny|2]\n"
                                 "2147483649: blank\n"
                                 "2147483650: [3|4]\n"
                                 "2147483651: error: a closing quote must be followed by a comma or a line end\n";
  for (size_t cap = 0; cap <= 4; cap++) {
    char *got = read_records_at(text, cap, 0, 0, INT32_MAX - 1);
    ck_assert_msg(!strcmp(got, expected), "buffer %zu: got\n%s\nexpected\n%s", cap, got, expected);
    free(got);
  }
  /* far beyond: 2^40 */
  char *got = read_records_at("1\n2,\"\n", 0, 0, 0, INT64_C(1) << 40);
  ck_assert_str_eq(got, "1099511627776: [1]\n"
                        "1099511627777: error: quoted field is not closed before the end of the file\n");
  free(got);
}
END_TEST

/* A row longer than max_row bytes (quotes, commas and lone CRs counted, its line end not) or of
 * more than max_fields fields is an error on the line it starts on, and the reader goes on after
 * its line. */
START_TEST(test_csv_limits) {
  static const char longer[] = "abcde\nabcdef\n\"abc\"\n\"abcd\"\nab\r\nabcd\r\r\nabcde\r\r\n"
                               "a,\"b\nc\nd\"\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n1,\"2\"\"\"\nend";
  static const char longer_want[] = "1: [abcde]\n"
                                    "2: error: row is longer than 5 bytes (parameter 'maxrow')\nskip: 1\n"
                                    "3: [abc]\n"
                                    "4: error: row is longer than 5 bytes (parameter 'maxrow')\nskip: 1\n"
                                    "5: [ab]\n"
                                    "6: [abcd\r]\n"
                                    "7: error: row is longer than 5 bytes (parameter 'maxrow')\nskip: 1\n"
                                    "8: error: row is longer than 5 bytes (parameter 'maxrow')\nskip: 1\n"
                                    /* the skip goes on from byte 6, on line 9 inside the quotes */
                                    "10: error: quote inside an unquoted field\nskip: 1\n"
                                    "11: error: row is longer than 5 bytes (parameter 'maxrow')\nskip: 1\n"
                                    "12: error: row is longer than 5 bytes (parameter 'maxrow')\nskip: 1\n"
                                    "13: [end]\n";
  static const char wider[] = "a,b,c\na,b,c,d\n,,\n,,,\n\"x\",\"y\",\"z\",\"w\"\nq\n";
  static const char wider_want[] = "1: [a|b|c]\n"
                                   "2: error: row has more than 3 fields (parameter 'maxfields')\nskip: 1\n"
                                   "3: [||]\n"
                                   "4: error: row has more than 3 fields (parameter 'maxfields')\nskip: 1\n"
                                   "5: error: row has more than 3 fields (parameter 'maxfields')\nskip: 1\n"
                                   "6: [q]\n";
  for (size_t cap = 0; cap <= 8; cap++) {
    char *got = read_limited(longer, cap, 5, 0);
    ck_assert_msg(!strcmp(got, longer_want), "buffer %zu: got\n%s\nexpected\n%s", cap, got, longer_want);
    free(got);
    got = read_limited(wider, cap, 0, 3);
    ck_assert_msg(!strcmp(got, wider_want), "buffer %zu: got\n%s\nexpected\n%s", cap, got, wider_want);
    free(got);
  }
  /* the defaults: 1 MiB and 10,000 fields; what the reader holds stays within them */
  size_t n = (2u << 20) + 64;
  char *text = malloc(n + 1);
  memset(text, 'x', n);
  memcpy(text + (1u << 20) - 1, "\ny\n", 3); /* a row of 1 MiB - 1 bytes, "y", then one of 1 MiB + 60 */
  text[n] = 0;
  FILE *f = fmemopen(text, n, "rb");
  CsvReader r;
  csv_reader_init(&r, f);
  ck_assert_uint_eq(r.max_row, 1u << 20);
  ck_assert_int_eq(r.max_fields, 10000);
  ck_assert_int_eq(csv_read(&r), 1);
  ck_assert_int_eq(csv_read(&r), 1);
  ck_assert_int_eq(csv_read(&r), -1);
  ck_assert_str_eq(r.err, "row is longer than 1048576 bytes (parameter 'maxrow')");
  ck_assert_int_eq(r.err_line, 3);
  ck_assert_msg(r.data.cap <= (2u << 20), "the reader holds %zu bytes of the row", r.data.cap);
  ck_assert_int_eq(csv_skip_line(&r), 0);
  csv_reader_release(&r);
  fclose(f);
  memset(text, ',', n); /* 2 MiB of commas: more than 10,000 fields long before 1 MiB */
  text[20000] = '\n';
  f = fmemopen(text, n, "rb");
  csv_reader_init(&r, f);
  ck_assert_int_eq(csv_read(&r), -1);
  ck_assert_str_eq(r.err, "row has more than 10000 fields (parameter 'maxfields')");
  ck_assert_int_le(r.fields_cap, 16384);
  ck_assert_int_eq(csv_skip_line(&r), 1);
  ck_assert_int_eq(csv_read(&r), -1);
  ck_assert_int_eq(r.err_line, 2);
  csv_reader_release(&r);
  fclose(f);
  free(text);
}
END_TEST

START_TEST(test_csv_long_record) {
  /* a field much longer than the buffer, quoted and not */
  char *text = malloc(300006);
  memset(text, 'x', 300000);
  memcpy(text + 300000, ",\"\"\"\"\n", 6);
  FILE *f = fmemopen(text, 300006, "rb");
  CsvReader r;
  csv_reader_init(&r, f);
  r.cap = 4096;
  ck_assert_int_eq(csv_read(&r), 1);
  ck_assert_int_eq(r.nfields, 2);
  size_t n;
  const char *p = csv_field(&r, 0, &n);
  ck_assert_uint_eq(n, 300000);
  ck_assert_int_eq(p[299999], 'x');
  ck_assert_str_eq(csv_field(&r, 1, &n), "\"");
  ck_assert_int_eq(csv_read(&r), 0);
  csv_reader_release(&r);
  fclose(f);
  free(text);
}
END_TEST

/* ---- CSV writing ---- */

static char *put_field(const char *s) {
  Buf b;
  buf_init(&b);
  csv_put_field(&b, s, strlen(s));
  buf_putc(&b, 0);
  return b.p;
}

START_TEST(test_csv_put_field) {
  const char *cases[][2] = {
    { "plain", "plain" },
    { "", "" },
    { "a,b", "\"a,b\"" },
    { "say \"hi\"", "\"say \"\"hi\"\"\"" },
    { "\"", "\"\"\"\"" },
    { "two\nlines", "\"two\nlines\"" },
    { "cr\rhere", "\"cr\rhere\"" },
    { " spaced ", " spaced " },
    { "semi;colon\ttab", "semi;colon\ttab" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *got = put_field(cases[i][0]);
    ck_assert_str_eq(got, cases[i][1]);
    free(got);
  }
}
END_TEST

START_TEST(test_csv_put_row) {
  Buf b;
  buf_init(&b);
  Value row[] = { value_int(INT64_MIN), value_double(0.1), value_double(1e21), value_double(-0.0),
                  value_double(0.1 + 0.2), value_bool(true), value_bool(false), value_string("x,y", 3),
                  value_string("", 0) };
  csv_put_row(&b, row, 9);
  Value lone_empty = value_string("", 0), lone_int = value_int(7);
  csv_put_row(&b, &lone_empty, 1);
  csv_put_row(&b, &lone_int, 1);
  ck_assert_str_eq(b.p, "-9223372036854775808,0.1,1e+21,-0,0.30000000000000004,true,false,\"x,y\",\n"
                        "\"\"\n"
                        "7\n");
  buf_release(&b);
}
END_TEST

/* The writer as it was before the row writer (one buf_putc or buf_append per piece, numbers through
 * printf and value_format into a scratch array): the reference the row writer's bytes must equal. */
static void ref_put_field(Buf *b, const char *p, size_t n) {
  bool quote = false;
  for (size_t i = 0; i < n && !quote; i++) quote = p[i] == ',' || p[i] == '"' || p[i] == '\r' || p[i] == '\n';
  if (!quote) {
    buf_append(b, p, n);
    return;
  }
  buf_putc(b, '"');
  const char *end = p + n;
  while (p < end) {
    const char *q = memchr(p, '"', (size_t)(end - p));
    if (!q) {
      buf_append(b, p, (size_t)(end - p));
      break;
    }
    buf_append(b, p, (size_t)(q - p + 1));
    buf_putc(b, '"');
    p = q + 1;
  }
  buf_putc(b, '"');
}

static void ref_put_row(Buf *b, const Value *v, int n) {
  if (n == 1 && v[0].type == TYPE_STRING && v[0].s.n == 0) {
    buf_puts(b, "\"\"\n");
    return;
  }
  for (int i = 0; i < n; i++) {
    if (i) buf_putc(b, ',');
    char tmp[SF_DOUBLE_CHARS];
    switch (v[i].type) {
    case TYPE_INT:
      snprintf(tmp, sizeof tmp, "%" PRId64, v[i].i);
      buf_puts(b, tmp);
      break;
    case TYPE_DOUBLE:
      double_format(v[i].d, tmp, sizeof tmp);
      buf_puts(b, tmp);
      break;
    case TYPE_BOOL:
      buf_puts(b, v[i].b ? "true" : "false");
      break;
    default:
      ref_put_field(b, v[i].s.p, v[i].s.n);
    }
  }
  buf_putc(b, '\n');
}

static uint64_t csv_rng = 0x243f6a8885a308d3;

static uint64_t csv_next(void) {
  csv_rng ^= csv_rng << 13;
  csv_rng ^= csv_rng >> 7;
  csv_rng ^= csv_rng << 17;
  return csv_rng;
}

/* A random value: ints and doubles at their edges or of random bits, strings of the bytes that
 * matter to quoting (NUL and a high byte too), short, empty or long. Strings go into pool. */
static Value random_value(char *pool, size_t *used) {
  static const int64_t ints[] = { INT64_MIN, INT64_MIN + 1, INT64_MAX, 0, -1, 1, 9, 10, -10, 99, 100, -100, 1000000007 };
  static const double doubles[] = { 0.0, -0.0, 1e21, 1e-7, 1e22, 1e-6, 5e-324, 2.2250738585072009e-308, DBL_MAX, -DBL_MAX,
                                    DBL_MIN, 0.1, 0.30000000000000004, -1.5, 123456789012345680000.0, 1.7976931348623157e308 };
  static const char bytes[] = { 'a', 'b', ',', '"', '\r', '\n', ' ', ';', '\t', '\0', (char)0xff, '0' };
  uint64_t r = csv_next();
  switch (r % 4) {
  case 0:
    if (r >> 8 & 1) return value_int(ints[(r >> 9) % (sizeof ints / sizeof ints[0])]);
    return value_int((int64_t)(csv_next() >> (r >> 9) % 64) * (r >> 16 & 1 ? -1 : 1));
  case 1: {
    double d;
    switch (r >> 8 & 3) {
    case 0: d = doubles[(r >> 10) % (sizeof doubles / sizeof doubles[0])]; break;
    case 1: d = (r >> 10 & 1 ? NAN : INFINITY) * (r >> 11 & 1 ? -1 : 1); break;
    case 2: { /* a subnormal */
      uint64_t bits = (csv_next() & ((UINT64_C(1) << 52) - 1)) | (r >> 12 & 1) << 63;
      memcpy(&d, &bits, sizeof d);
      break;
    }
    default: { /* any bit pattern: nans with payloads too */
      uint64_t bits = csv_next();
      memcpy(&d, &bits, sizeof d);
    }
    }
    return value_double(d);
  }
  case 2:
    return value_bool(r >> 8 & 1);
  default: {
    size_t n;
    switch (r >> 8 & 7) {
    case 0: n = 0; break;
    case 1: n = 200 + (r >> 12) % 3000; break; /* long */
    default: n = (r >> 12) % 12;
    }
    char *p = pool + *used;
    uint64_t plain = r >> 40 & 1; /* half of them of plain bytes only, mostly */
    for (size_t k = 0; k < n; k++) {
      uint64_t c = csv_next();
      p[k] = plain && c % 64 ? 'a' + (char)(c >> 8) % 26 : bytes[(c >> 8) % sizeof bytes];
    }
    *used += n;
    return value_string(p, n);
  }
  }
}

/* The row writer gives the reference's bytes for random rows of every type, appended to buffers of
 * every fill (the reservation grows them at any point), and csv_put_field the reference's for
 * every string. */
START_TEST(test_csv_put_row_random) {
  enum { ROWS = 60000, MAX_FIELDS = 9, POOL = MAX_FIELDS * 3300 };
  char *pool = malloc(POOL);
  Buf got, want;
  buf_init(&got);
  buf_init(&want);
  long compared = 0;
  for (int row = 0; row < ROWS; row++) {
    Value v[MAX_FIELDS];
    size_t used = 0;
    int n = (int)(csv_next() % (MAX_FIELDS + 1));
    for (int i = 0; i < n; i++) v[i] = random_value(pool, &used);
    if (n == 1 && csv_next() % 8 == 0) v[0] = value_string("", 0); /* the lone empty field */
    size_t at = got.n;
    csv_put_row(&got, v, n);
    ref_put_row(&want, v, n);
    ck_assert_uint_eq(got.n, want.n);
    if (memcmp(got.p, want.p, got.n)) {
      size_t k = at;
      while (got.p[k] == want.p[k]) k++;
      ck_abort_msg("row %d (%d fields) differs at byte %zu of the row: got '%.40s', want '%.40s'", row, n, k - at,
                   got.p + k, want.p + k);
    }
    ck_assert_int_eq(got.p[got.n], 0); /* the Buf stays NUL-terminated */
    for (int i = 0; i < n; i++)
      if (v[i].type == TYPE_STRING) {
        csv_put_field(&got, v[i].s.p, v[i].s.n);
        ref_put_field(&want, v[i].s.p, v[i].s.n);
      }
    ck_assert_uint_eq(got.n, want.n);
    ck_assert(!memcmp(got.p, want.p, got.n));
    compared++;
    if (got.n > (1 << 16)) { /* start again from an empty buffer now and then */
      if (csv_next() % 2) buf_release(&got);
      else buf_reset(&got); /* or from one that has room */
      buf_reset(&want);
    }
  }
  ck_assert_int_eq(compared, ROWS);
  buf_release(&got);
  buf_release(&want);
  free(pool);
}
END_TEST

/* csv_put_plain_rows gives csv_put_row's bytes for runs of random rows without strings (every
 * number and bool random_value makes), and stops after the row that passes `until`. */
START_TEST(test_csv_put_plain_rows_random) {
  enum { RUNS = 4000, MAX_FIELDS = 9, MAX_ROWS = 20 };
  static Value v[MAX_ROWS][MAX_FIELDS];
  const Value *rows[MAX_ROWS];
  static char pool[3 * 3300]; /* what a string random_value makes, thrown away, takes */
  Buf got, want;
  buf_init(&got);
  buf_init(&want);
  for (int run = 0; run < RUNS; run++) {
    int nvals = 1 + (int)(csv_next() % MAX_FIELDS), n = 1 + (int)(csv_next() % MAX_ROWS);
    for (int r = 0; r < n; r++) {
      for (int i = 0; i < nvals; i++)
        do {
          size_t used = 0;
          v[r][i] = random_value(pool, &used);
        } while (v[r][i].type == TYPE_STRING);
      rows[r] = v[r];
    }
    size_t at = got.n;
    /* until: past every row, or somewhere inside the run */
    size_t until = csv_next() % 2 ? SIZE_MAX / 2 : at + csv_next() % (size_t)(n * 30);
    int wrote = csv_put_plain_rows(&got, rows, n, nvals, until);
    int expect = 0;
    size_t end = at;
    while (expect < n) { /* csv_put_row row by row, stopping after the row that passes until */
      csv_put_row(&want, rows[expect++], nvals);
      end = want.n;
      if (end >= until) break;
    }
    ck_assert_int_eq(wrote, expect);
    ck_assert_uint_eq(got.n, want.n);
    ck_assert_msg(!memcmp(got.p, want.p, got.n), "run %d: the rows differ", run);
    ck_assert_int_eq(got.p[got.n], 0); /* the Buf stays NUL-terminated */
    if (got.n > (1 << 16)) {
      buf_reset(&got);
      buf_reset(&want);
    }
  }
  buf_release(&got);
  buf_release(&want);
}
END_TEST

START_TEST(test_csv_round_trip) {
  const char *strings[] = { "", "a", "a,b", "\"", "\"\"", "x\ny", "x\r\ny", "\r", "\n", ",", " ", "end\"" };
  int ns = (int)(sizeof strings / sizeof strings[0]);
  Buf b;
  buf_init(&b);
  for (int i = 0; i < ns; i++) {
    Value row[2] = { value_string(strings[i], strlen(strings[i])), value_string(strings[ns - 1 - i], strlen(strings[ns - 1 - i])) };
    csv_put_row(&b, row, 2);
    csv_put_row(&b, row, 1);
  }
  FILE *f = fmemopen(b.p, b.n, "rb");
  CsvReader r;
  csv_reader_init(&r, f);
  r.cap = 3;
  for (int i = 0; i < ns; i++) {
    size_t n;
    ck_assert_int_eq(csv_read(&r), 1);
    ck_assert_int_eq(r.nfields, 2);
    ck_assert_str_eq(csv_field(&r, 0, &n), strings[i]);
    ck_assert_str_eq(csv_field(&r, 1, &n), strings[ns - 1 - i]);
    ck_assert_int_eq(csv_read(&r), 1);
    ck_assert_int_eq(r.nfields, 1);
    ck_assert(!r.blank);
    ck_assert_str_eq(csv_field(&r, 0, &n), strings[i]);
  }
  ck_assert_int_eq(csv_read(&r), 0);
  csv_reader_release(&r);
  fclose(f);
  buf_release(&b);
}
END_TEST

/* ---- whole graphs ---- */

static char dir[PATH_MAX]; /* this test's temporary directory */

static void make_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/sf_test_io.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(const char *path) {
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  ck_assert_int_eq(system(cmd), 0);
}

/* text with every "@DIR@" replaced by the test's directory, malloc'd. */
static char *fill(const char *text) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  for (const char *p = text; *p;) {
    if (!strncmp(p, "@DIR@", 5)) {
      fputs(dir, m);
      p += 5;
    } else {
      fputc(*p++, m);
    }
  }
  fclose(m);
  return buf;
}

static char *path_in_dir(const char *name) {
  char *p = NULL;
  ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
  return p;
}

static void write_file(const char *name, const char *text, size_t n) {
  char *path = path_in_dir(name);
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(text, 1, n, f), n);
  ck_assert_int_eq(fclose(f), 0);
  free(path);
}

/* The bytes of dir/name (NUL-terminated, *n bytes), or NULL when it does not exist. */
static char *read_file(const char *name, size_t *n) {
  char *path = path_in_dir(name);
  char *text = unit_read_file(path, n);
  free(path);
  return text;
}

/* The names in dir, sorted, one per line. */
static char *list_dir(const char *sub) {
  char *path = path_in_dir(sub);
  struct dirent **names;
  int n = scandir(path, &names, NULL, alphasort);
  ck_assert_int_ge(n, 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  for (int i = 0; i < n; i++) {
    if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) fprintf(m, "%s\n", names[i]->d_name);
    free(names[i]);
  }
  free(names);
  fclose(m);
  free(path);
  return buf;
}

/* Writes the graph (with @DIR@ filled in) to dir/g.xml, parses, checks and runs it with options o
 * (its graph_path and log filled in here). Returns exec_run's status; *log gets what it printed. */
static int run_graph_opts(const char *xml, char **log, ExecOptions o) {
  char *text = fill(xml);
  write_file("g.xml", text, strlen(text));
  free(text);
  char *gpath = path_in_dir("g.xml");
  Graph *g = unit_graph_file(gpath);
  size_t len = 0;
  FILE *m = open_memstream(log, &len);
  o.graph_path = gpath;
  o.log = m;
  int rc = exec_run(g, &o);
  fclose(m);
  graph_free(g);
  free(gpath);
  return rc;
}

/* run_graph_opts with ExecOptions.accept_unterminated = accept. */
static int run_graph_with(const char *xml, char **log, bool accept) {
  return run_graph_opts(xml, log, (ExecOptions){ .accept_unterminated = accept });
}

/* run_graph_opts with --max-state-memory `budget` bytes. */
static int run_graph_budget(const char *xml, char **log, uint64_t budget) {
  return run_graph_opts(xml, log, (ExecOptions){ .max_state_memory = budget });
}

/* run_graph_with the default options. */
static int run_graph(const char *xml, char **log) {
  return run_graph_with(xml, log, false);
}

/* Asserts the run succeeded with an empty log and dir/out/out.csv holds exactly `expected`. */
static void assert_output(int rc, char *log, const char *expected) {
  ck_assert_msg(rc == 0, "exec_run failed: %s", log);
  ck_assert_str_eq(log, "");
  size_t n;
  char *out = read_file("out/out.csv", &n);
  ck_assert_msg(out != NULL, "no output file");
  ck_assert_uint_eq(n, strlen(expected));
  ck_assert_str_eq(out, expected);
  char *names = list_dir("out");
  ck_assert_str_eq(names, "out.csv\n"); /* no temporary file left */
  free(names);
  free(out);
  free(log);
}

/* Asserts the run failed printing exactly "sf-exec: error: MESSAGE\n" (@DIR@ filled in), and that
 * dir/out holds nothing: neither the output nor a temporary file. */
static void assert_failure(int rc, char *log, const char *message) {
  char *expected = fill(message);
  ck_assert_int_eq(rc, 1);
  ck_assert_str_eq(log, expected);
  char *names = list_dir("out");
  ck_assert_str_eq(names, "");
  free(names);
  free(expected);
  free(log);
}

static void setup(void) {
  make_dir();
  char *out = path_in_dir("out");
  ck_assert_int_eq(mkdir(out, 0777), 0);
  free(out);
  unsetenv("SF_LIBRARY_PATH");
}

static void teardown(void) {
  remove_dir(dir);
}

#define SINK(stream) \
  "  <operator name='out' kind='FileSink'><input stream='" stream "'/>" \
  "<param name='file'>@DIR@/out/out.csv</param><param name='format'>csv</param></operator>\n"

/* ---- Beacon ---- */

#define BEACON_SCHEMA \
  "  <schema name='S'><attr name='n' type='int'/><attr name='x' type='double'/>" \
  "<attr name='s' type='string'/><attr name='b' type='bool'/></schema>\n"

START_TEST(test_beacon_to_filesink) {
  char *log;
  int rc = run_graph(
      "<graph xmlns='urn:streamfission:graph:1' name='t'>\n" BEACON_SCHEMA
      "  <operator name='gen' kind='Beacon'><output stream='A' schema='S'/>\n"
      "    <param name='count'>6</param>\n"
      "    <set attr='n'>seq * 10 - 15</set>\n"
      "    <set attr='x'>double(seq) * 0.1</set>\n"
      "    <set attr='s'>seq == 1 ? \"a,b\" : seq == 2 ? \"say \\\"hi\\\"\" : seq == 3 ? \"\" : "
      "seq == 4 ? \"two\\nlines\" : \"p\" + str(seq)</set>\n"
      "    <set attr='b'>seq % 2 == 0</set>\n"
      "  </operator>\n" SINK("A") "</graph>\n",
      &log);
  assert_output(rc, log,
                "n,x,s,b\n"
                "-15,0,p0,true\n"
                "-5,0.1,\"a,b\",false\n"
                "5,0.2,\"say \"\"hi\"\"\",true\n"
                "15,0.30000000000000004,,false\n"
                "25,0.4,\"two\nlines\",true\n"
                "35,0.5,p5,false\n");
}
END_TEST

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(test_beacon_rate) {
  char *log;
  double t0 = seconds_now();
  int rc = run_graph("<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
                     "  <schema name='S'><attr name='n' type='int'/></schema>\n"
                     "  <operator name='gen' kind='Beacon'><output stream='A' schema='S'/>\n"
                     "    <param name='count'>31</param><param name='rate'>200</param>\n"
                     "    <set attr='n'>seq</set>\n"
                     "  </operator>\n" SINK("A") "</graph>\n",
                     &log);
  double elapsed = seconds_now() - t0;
  /* tuple 30 is due 150 ms after tuple 0 */
  ck_assert_msg(elapsed >= 0.145 && elapsed < 5.0, "31 tuples at 200/s took %.3f s", elapsed);
  char expected[512] = "n\n";
  for (int i = 0; i <= 30; i++) snprintf(expected + strlen(expected), sizeof expected - strlen(expected), "%d\n", i);
  assert_output(rc, log, expected);
}
END_TEST

START_TEST(test_beacon_eval_error) {
  char *log;
  int rc = run_graph("<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
                     "  <schema name='S'><attr name='n' type='int'/></schema>\n"
                     "  <operator name='gen' kind='Beacon'><output stream='A' schema='S'/>\n"
                     "    <param name='count'>10</param>\n"
                     "    <set attr='n'>10 / (3 - seq)</set>\n"
                     "  </operator>\n" SINK("A") "</graph>\n",
                     &log);
  assert_failure(rc, log, "sf-exec: error: operator 'gen': set 'n': division by zero in '10 / (3 - seq)' at seq 3\n");
}
END_TEST

/* A Beacon makes its tuples a run at a time; a fault of a set still comes after the tuples before
 * it went on, as one at a time: here an operator downstream faults first (seq 200, in the same run
 * as the Beacon's fault at seq 210), and its failure is the job's. */
START_TEST(test_beacon_run_fault_order) {
  char *log;
  int rc = run_graph("<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
                     "  <schema name='S'><attr name='a' type='int'/><attr name='b' type='int'/></schema>\n"
                     "  <operator name='gen' kind='Beacon'><output stream='A' schema='S'/>\n"
                     "    <param name='count'>1000</param>\n"
                     "    <set attr='a'>seq</set><set attr='b'>10 / (210 - seq)</set>\n"
                     "  </operator>\n"
                     "  <operator name='f' kind='Functor'><input stream='A'/><output stream='B' schema='S'/>\n"
                     "    <set attr='b'>1 / (200 - a)</set>\n"
                     "  </operator>\n" SINK("B") "</graph>\n",
                     &log);
  assert_failure(rc, log, "sf-exec: error: operator 'f': set 'b': division by zero in '1 / (200 - a)' "
                          "on tuple (a=200, b=1)\n");
}
END_TEST

/* A Beacon evaluates each set over a run of rows; the fault reported is still the first of one
 * tuple at a time: the lowest seq, and of the sets faulting there the first. Here set 'a' faults
 * at seq 300, 'b' and 'c' at seq 290 (both in the run 256..511): 'b' at 290 is the fault. */
START_TEST(test_beacon_run_sets_fault_order) {
  char *log;
  int rc = run_graph("<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
                     "  <schema name='S'><attr name='a' type='int'/><attr name='b' type='int'/>"
                     "<attr name='c' type='int'/></schema>\n"
                     "  <operator name='gen' kind='Beacon'><output stream='A' schema='S'/>\n"
                     "    <param name='count'>1000</param>\n"
                     "    <set attr='a'>100 / (300 - seq)</set><set attr='b'>10 / (290 - seq)</set>"
                     "<set attr='c'>1 % (290 - seq)</set>\n"
                     "  </operator>\n" SINK("A") "</graph>\n",
                     &log);
  assert_failure(rc, log, "sf-exec: error: operator 'gen': set 'b': division by zero in '10 / (290 - seq)' at seq 290\n");
}
END_TEST

/* A Filter and a Functor without state take runs of tuples; their faults are still those of one
 * tuple at a time. Filter 'f' faults at a = 290 (a run of 256..511); the Functor 'g' below it
 * faults on a kept tuple before it (a = 280), which went on first: g's fault is the job's. */
START_TEST(test_filter_run_fault_order) {
  static const char *graph =
    "<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
    "  <schema name='S'><attr name='a' type='int'/><attr name='b' type='int'/></schema>\n"
    "  <operator name='gen' kind='Beacon'><output stream='A' schema='S'/>\n"
    "    <param name='count'>1000</param><set attr='a'>seq</set><set attr='b'>seq * 2</set>\n"
    "  </operator>\n"
    "  <operator name='f' kind='Filter'><input stream='A'/><output stream='B' schema='S'/>\n"
    "    <param name='where'>a %% 3 != 0 &amp;&amp; 10 / (290 - a) > -100</param>\n"
    "  </operator>\n"
    "  <operator name='g' kind='Functor'><input stream='B'/><output stream='C' schema='S'/>\n"
    "    <set attr='b'>1 / (%d - a)</set>\n"
    "  </operator>\n" SINK("C") "</graph>\n";
  char xml[2048], *log;
  snprintf(xml, sizeof xml, graph, 280);
  int rc = run_graph(xml, &log);
  assert_failure(rc, log,
                 "sf-exec: error: operator 'g': set 'b': division by zero in '1 / (280 - a)' on tuple (a=280, b=560)\n");
  snprintf(xml, sizeof xml, graph, 999); /* g never faults: f's fault at 290 is the job's */
  rc = run_graph(xml, &log);
  assert_failure(rc, log,
                 "sf-exec: error: operator 'f': where: division by zero in 'a % 3 != 0 && 10 / (290 - a) > -100' "
                 "on tuple (a=290, b=580)\n");
}
END_TEST

/* A Functor without state evaluates `where` and each set over a run; of the sets faulting on the
 * lowest faulting tuple, the one of the first output attribute reports (b before c), and a set
 * never runs on a tuple `where` dropped (a = 250 is dropped: 1 / (250 - a) does not fault). */
START_TEST(test_functor_run_fault_order) {
  char *log;
  int rc = run_graph("<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
                     "  <schema name='S'><attr name='a' type='int'/><attr name='b' type='int'/>"
                     "<attr name='c' type='int'/></schema>\n"
                     "  <operator name='gen' kind='Beacon'><output stream='A' schema='S'/>\n"
                     "    <param name='count'>1000</param><set attr='a'>seq</set><set attr='b'>0</set>"
                     "<set attr='c'>0</set>\n"
                     "  </operator>\n"
                     "  <operator name='g' kind='Functor'><input stream='A'/><output stream='B' schema='S'/>\n"
                     "    <param name='where'>a != 250 &amp;&amp; 10 / (300 - a) > -100</param>\n"
                     "    <set attr='c'>1 % (290 - a) + 1 / (250 - a)</set><set attr='b'>1 / (290 - a)</set>\n"
                     "  </operator>\n" SINK("B") "</graph>\n",
                     &log);
  assert_failure(rc, log, "sf-exec: error: operator 'g': set 'b': division by zero in '1 / (290 - a)' "
                          "on tuple (a=290, b=0, c=0)\n");
}
END_TEST

/* An Aggregate takes runs of tuples (its keys hashed first) but each tuple as one at a time: its
 * outputs go on before a later tuple faults. Aggregate 'agg' faults at a = 300 (a run of 256..511);
 * the Functor 'g' below it faults on an output before that (last_a = 290), which went on first:
 * g's fault is the job's. */
START_TEST(test_aggregate_run_fault_order) {
  static const char *graph =
    "<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
    "  <schema name='S'><attr name='a' type='int'/><attr name='k' type='int'/></schema>\n"
    "  <schema name='O'><attr name='k' type='int'/><attr name='s' type='int'/><attr name='last_a' type='int'/></schema>\n"
    "  <operator name='gen' kind='Beacon'><output stream='A' schema='S'/>\n"
    "    <param name='count'>1000</param><set attr='a'>seq</set><set attr='k'>seq %% 3</set>\n"
    "  </operator>\n"
    "  <operator name='agg' kind='Aggregate'><input stream='A'/><output stream='B' schema='O'/>\n"
    "    <param name='partitionBy'>k</param><param name='window'>sliding 2</param>\n"
    "    <set attr='s'>sum(100 / (300 - a))</set><set attr='last_a'>last(a)</set>\n"
    "  </operator>\n"
    "  <operator name='g' kind='Functor'><input stream='B'/><output stream='C' schema='O'/>\n"
    "    <set attr='s'>1 / (%d - last_a)</set>\n"
    "  </operator>\n" SINK("C") "</graph>\n";
  char xml[2048], *log;
  snprintf(xml, sizeof xml, graph, 290);
  int rc = run_graph(xml, &log);
  assert_failure(rc, log, "sf-exec: error: operator 'g': set 's': division by zero in '1 / (290 - last_a)' "
                          "on tuple (k=2, s=17, last_a=290)\n");
  snprintf(xml, sizeof xml, graph, 999); /* g never faults: agg's fault at 300 is the job's */
  rc = run_graph(xml, &log);
  assert_failure(rc, log, "sf-exec: error: operator 'agg': set 's': division by zero in 'sum(100 / (300 - a))' "
                          "on tuple (a=300, k=0)\n");
}
END_TEST

/* A Dedup takes runs of tuples and emits the first of each key as one run, but before a lookup
 * that may fail it hands on what it kept: with --max-state-memory 1M, Dedup 'd' fails on its
 * 12289th key, a = 12387 (its table cannot grow), and the Functor 'g' below it faults on a =
 * 12386, kept just before in the same run (12288..12543): g's fault is the job's. */
START_TEST(test_dedup_run_fault_order) {
  static const char *graph =
    "<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
    "  <schema name='S'><attr name='a' type='int'/><attr name='b' type='int'/></schema>\n"
    "  <operator name='gen' kind='Beacon'><output stream='A' schema='S'/>\n"
    "    <param name='count'>100000</param><set attr='a'>seq &lt; 100 ? 0 : seq</set><set attr='b'>0</set>\n"
    "  </operator>\n"
    "  <operator name='d' kind='Dedup'><input stream='A'/><output stream='B' schema='S'/>\n"
    "    <param name='partitionBy'>a</param>\n"
    "  </operator>\n"
    "  <operator name='g' kind='Functor'><input stream='B'/><output stream='C' schema='S'/>\n"
    "    <set attr='b'>1 / (%d - a)</set>\n"
    "  </operator>\n" SINK("C") "</graph>\n";
  char xml[2048], *log;
  snprintf(xml, sizeof xml, graph, 12386);
  int rc = run_graph_budget(xml, &log, 1 << 20);
  assert_failure(rc, log, "sf-exec: error: operator 'g': set 'b': division by zero in '1 / (12386 - a)' "
                          "on tuple (a=12386, b=0)\n");
  snprintf(xml, sizeof xml, graph, 12387); /* the tuple g would fault on never comes */
  rc = run_graph_budget(xml, &log, 1 << 20);
  assert_failure(rc, log, "sf-exec: error: operator 'd': out of memory (keyed state over --max-state-memory "
                          "1048576 bytes; this operator holds 12288 keys)\n");
}
END_TEST

/* ---- FileSource and FileSink ---- */

#define ROW_SCHEMA \
  "  <schema name='Row'><attr name='id' type='int'/><attr name='name' type='string'/>" \
  "<attr name='score' type='double'/><attr name='ok' type='bool'/></schema>\n"

#define SOURCE(schema, file) \
  "  <operator name='src' kind='FileSource'><output stream='A' schema='" schema "'/>" \
  "<param name='file'>@DIR@/" file "</param><param name='format'>csv</param></operator>\n"

/* A Beacon of `count` tuples n = seq (n = 10 / (COUNT - 1 - seq) when `fail`, which faults on the
 * last one) into a FileSink with `roll` writing `file` under dir. */
static int run_roll(const char *file, const char *roll, int count, bool fail, char **log) {
  char xml[2048];
  snprintf(xml, sizeof xml,
           "<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
           "  <schema name='S'><attr name='n' type='int'/></schema>\n"
           "  <operator name='gen' kind='Beacon'><output stream='A' schema='S'/>\n"
           "    <param name='count'>%d</param>\n"
           "    <set attr='n'>%s</set>\n"
           "  </operator>\n"
           "  <operator name='out' kind='FileSink'><input stream='A'/>"
           "<param name='file'>@DIR@/out/%s</param><param name='roll'>%s</param></operator>\n"
           "</graph>\n",
           count, fail ? "seq + 10 / (" : "seq", file, roll);
  if (fail) { /* "seq + 10 / (COUNT - 1 - seq)" */
    char *set = strstr(xml, "10 / (");
    char rest[1024];
    snprintf(rest, sizeof rest, "%d - 1 - seq)%s", count, set + 6);
    strcpy(set + 6, rest);
  }
  return run_graph(xml, log);
}

/* Asserts dir/out/NAME holds exactly `expected`. */
static void assert_file(const char *name, const char *expected) {
  char sub[256];
  snprintf(sub, sizeof sub, "out/%s", name);
  size_t n;
  char *got = read_file(sub, &n);
  ck_assert_msg(got != NULL, "no file out/%s", name);
  ck_assert_str_eq(got, expected);
  free(got);
}

/* Empties dir/out. */
static void clear_out(void) {
  char *names = list_dir("out");
  for (char *line = strtok(names, "\n"); line; line = strtok(NULL, "\n")) {
    char sub[512];
    snprintf(sub, sizeof sub, "out/%s", line);
    char *path = path_in_dir(sub);
    ck_assert_int_eq(unlink(path), 0);
    free(path);
  }
  free(names);
}

START_TEST(test_roll_parts) {
  char *log;
  /* tuples: every part has the header and N rows, the last what is left */
  int rc = run_roll("x.csv", "tuples 4", 10, false, &log);
  ck_assert_msg(rc == 0, "%s", log);
  ck_assert_str_eq(log, "");
  free(log);
  char *names = list_dir("out");
  ck_assert_str_eq(names, "x-000000.csv\nx-000001.csv\nx-000002.csv\n");
  free(names);
  assert_file("x-000000.csv", "n\n0\n1\n2\n3\n");
  assert_file("x-000001.csv", "n\n4\n5\n6\n7\n");
  assert_file("x-000002.csv", "n\n8\n9\n");
  clear_out();
  /* a stream ending on a part's last row opens no empty part; no extension: the number at the end */
  rc = run_roll("data", "tuples 2", 4, false, &log);
  ck_assert_msg(rc == 0, "%s", log);
  free(log);
  names = list_dir("out");
  ck_assert_str_eq(names, "data-000000\ndata-000001\n");
  free(names);
  clear_out();
  /* the number before the last extension; bytes 1: a part per row */
  rc = run_roll("x.tar.csv", "bytes 1", 2, false, &log);
  ck_assert_msg(rc == 0, "%s", log);
  free(log);
  names = list_dir("out");
  ck_assert_str_eq(names, "x.tar-000000.csv\nx.tar-000001.csv\n");
  free(names);
  assert_file("x.tar-000001.csv", "n\n1\n");
  clear_out();
  /* no tuple at all: part 0, the header alone */
  write_file("in.csv", "n\n", 2);
  rc = run_graph("<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
                 "  <schema name='S'><attr name='n' type='int'/></schema>\n" SOURCE("S", "in.csv")
                 "  <operator name='out' kind='FileSink'><input stream='A'/>"
                 "<param name='file'>@DIR@/out/x.csv</param><param name='roll'>seconds 0.5</param></operator>\n"
                 "</graph>\n", &log);
  ck_assert_msg(rc == 0, "%s", log);
  free(log);
  names = list_dir("out");
  ck_assert_str_eq(names, "x-000000.csv\n");
  free(names);
  assert_file("x-000000.csv", "n\n");
  clear_out();
  /* bytes: a part closes with the row that takes it to B bytes or more ("n\n" is 2, a row 2 or 3) */
  rc = run_roll("x.csv", "bytes 7", 12, false, &log);
  ck_assert_msg(rc == 0, "%s", log);
  free(log);
  names = list_dir("out");
  ck_assert_str_eq(names, "x-000000.csv\nx-000001.csv\nx-000002.csv\nx-000003.csv\nx-000004.csv\n");
  free(names);
  assert_file("x-000000.csv", "n\n0\n1\n2\n");
  assert_file("x-000001.csv", "n\n3\n4\n5\n");
  assert_file("x-000002.csv", "n\n6\n7\n8\n");
  assert_file("x-000003.csv", "n\n9\n10\n"); /* 7 bytes */
  assert_file("x-000004.csv", "n\n11\n");
  clear_out();
}
END_TEST

START_TEST(test_roll_failure_keeps_closed_parts) {
  /* the job fails on the tenth tuple: the two parts closed before stay, the third (rows 8 and 9
   * written) is neither visible nor left as a temporary file */
  char *log;
  int rc = run_roll("x.csv", "tuples 4", 10, true, &log);
  char *expected = fill("sf-exec: error: operator 'gen': set 'n': division by zero in 'seq + 10 / (10 - 1 - seq)' "
                        "at seq 9\n");
  ck_assert_int_eq(rc, 1);
  ck_assert_str_eq(log, expected);
  free(expected);
  free(log);
  char *names = list_dir("out");
  ck_assert_str_eq(names, "x-000000.csv\nx-000001.csv\n");
  free(names);
  assert_file("x-000000.csv", "n\n1\n2\n3\n4\n"); /* seq + 10 / (9 - seq): 1, 2, 3, 4 for seq 0-3 */
  clear_out();
  /* roll on standard output or a device is refused when the sink opens */
  rc = run_roll("../../../../../../dev/null", "tuples 4", 1, false, &log);
  ck_assert_int_eq(rc, 1);
  expected = fill("sf-exec: error: operator 'out': parameter 'roll' writes parts beside a regular file, and "
                  "'@DIR@/out/../../../../../../dev/null' is not one\n");
  ck_assert_str_eq(log, expected);
  free(expected);
  free(log);
}
END_TEST

static const char copy_graph[] = "<graph xmlns='urn:streamfission:graph:1' name='t'>\n" ROW_SCHEMA
                                 SOURCE("Row", "in.csv") SINK("A") "</graph>\n";

START_TEST(test_round_trip) {
  static const char text[] = "id,name,score,ok\n"
                             "1,plain,1.5,true\n"
                             "2,\"comma, inside\",-0.25,false\n"
                             "3,\"quote \"\"q\"\" inside\",1e+21,true\n"
                             "4,\"line\nbreak\",100,false\n"
                             "5,,0,true\n"
                             "6,\"crlf\r\ninside\",1e-7,false\n"
                             "-9223372036854775808,\"\"\"\",0.30000000000000004,true\n"
                             "9223372036854775807, ,-0,false\n";
  write_file("in.csv", text, sizeof text - 1);
  char *log;
  int rc = run_graph(copy_graph, &log);
  assert_output(rc, log, text);
}
END_TEST

START_TEST(test_columns_by_name) {
  /* columns in another order, CRLF, a byte order mark, a blank line, non-canonical numbers: the
   * output is canonical and in schema order */
  static const char text[] = "\xEF\xBB\xBFok,score,id,name\r\n"
                             "true,1.50,+7,\"x\"\r\n"
                             "\r\n"
                             "false,1E3,-0,\"a\r\nb\"\r\n"
                             "true,.5,42,\r\n";
  write_file("in.csv", text, sizeof text - 1);
  char *log;
  int rc = run_graph(copy_graph, &log);
  assert_output(rc, log, "id,name,score,ok\n7,x,1.5,true\n0,\"a\r\nb\",1000,false\n42,,0.5,true\n");
}
END_TEST

START_TEST(test_single_string_column) {
  /* a row holding one empty string is written as "" and read back as a row; blank lines are skipped */
  static const char text[] = "s\nfoo\n\"\"\n\nbar\n";
  write_file("in.csv", text, sizeof text - 1);
  char *log;
  int rc = run_graph("<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
                     "  <schema name='One'><attr name='s' type='string'/></schema>\n" SOURCE("One", "in.csv")
                         SINK("A") "</graph>\n",
                     &log);
  assert_output(rc, log, "s\nfoo\n\"\"\nbar\n");
}
END_TEST

START_TEST(test_empty_input) {
  write_file("in.csv", "id,name,score,ok\n", 17);
  char *log;
  int rc = run_graph(copy_graph, &log);
  assert_output(rc, log, "id,name,score,ok\n");
}
END_TEST

/* Runs copy_graph on in.csv = text and asserts the failure message. */
static void assert_copy_fails(const char *text, const char *message) {
  write_file("in.csv", text, strlen(text));
  char *log;
  int rc = run_graph(copy_graph, &log);
  assert_failure(rc, log, message);
}

START_TEST(test_malformed_field) {
  assert_copy_fails("id,name,score,ok\n1,a,1,true\n2,b,2,true\nabc,c,3,true\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:4: error: field 'id': 'abc' is not an int\n");
  assert_copy_fails("id,name,score,ok\n1,a,1.5x,true\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:2: error: field 'score': '1.5x' is not a double\n");
  assert_copy_fails("id,name,score,ok\n1,a,1,yes\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:2: error: field 'ok': 'yes' is not a bool\n");
  assert_copy_fails("id,name,score,ok\n99999999999999999999,a,1,true\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:2: error: field 'id': "
                    "'99999999999999999999' is not an int\n");
  assert_copy_fails("id,name,score,ok\n1,a,,true\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:2: error: field 'score': '' is not a double\n");
  assert_copy_fails("id,name,score,ok\n1,a,1,true\n\"x\nx\",\"y\ny\",1,true\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:3: error: field 'id': 'x\nx' is not an int\n");
  assert_copy_fails("id,name,score,ok\n1,a,1,0123456789012345678901234567890123456789012345\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:2: error: field 'ok': "
                    "'0123456789012345678901234567890123456789...' is not a bool\n");
}
END_TEST

START_TEST(test_malformed_rows) {
  assert_copy_fails("id,name,score,ok\n\"1\",\"multi\nline\",1,true\n2,b,3\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:4: error: row has 3 fields, header has 4\n");
  assert_copy_fails("id,name,score,ok\n1,a,1,true,\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:2: error: row has 5 fields, header has 4\n");
  assert_copy_fails("id,name,score,ok\n1\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:2: error: row has 1 field, header has 4\n");
  assert_copy_fails("id,name,score,ok\n1,a\"b,1,true\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:2: error: quote inside an unquoted field\n");
  assert_copy_fails("id,name,score,ok\n1,\"open,1,true\n2,b,1,true\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:2: error: quoted field is not closed before the "
                    "end of the file\n");
}
END_TEST

START_TEST(test_skip_malformed_rows) {
  /* onerror="skip": every malformed row is dropped and counted, the first named in the warning;
   * the rows around them go through */
  static const char graph[] = "<graph xmlns='urn:streamfission:graph:1' name='t'>\n" ROW_SCHEMA
      "  <operator name='src' kind='FileSource'><output stream='A' schema='Row'/>"
      "<param name='file'>@DIR@/in.csv</param><param name='onerror'>skip</param></operator>\n"
      SINK("A") "</graph>\n";
  static const char text[] = "id,name,score,ok\n1,a,1,true\n2,b,x,true\n3,c\n4,d\"e,1,true\n"
                             "5,e,5,false\n6,\"f\"g,6,true\n7,g,7,maybe\n8,h,8,true\n";
  write_file("in.csv", text, sizeof text - 1);
  char *log;
  int rc = run_graph(graph, &log);
  char *expected = fill("sf-exec: warning: operator 'src': skipped 5 malformed rows of '@DIR@/in.csv' (the first: "
                        "@DIR@/in.csv:3: field 'score': 'x' is not a double)\n");
  ck_assert_int_eq(rc, 0);
  ck_assert_str_eq(log, expected);
  size_t n;
  char *out = read_file("out/out.csv", &n);
  ck_assert_ptr_nonnull(out);
  ck_assert_str_eq(out, "id,name,score,ok\n1,a,1,true\n5,e,5,false\n8,h,8,true\n");
  free(out);
  free(expected);
  free(log);
  /* a bad header is never skipped */
  char *first_out = path_in_dir("out/out.csv");
  ck_assert_int_eq(unlink(first_out), 0);
  free(first_out);
  write_file("in.csv", "id,name,score\n1,a,1\n", 20);
  rc = run_graph(graph, &log);
  assert_failure(rc, log, "sf-exec: error: operator 'src': @DIR@/in.csv:1: error: header has no column 'ok'\n");
}
END_TEST

START_TEST(test_unterminated_last_row) {
  /* a file cut inside its last row is an error naming the line the row starts on, the header
   * included; ExecOptions.accept_unterminated (sf-exec --accept-unterminated) reads the row */
  static const char cut[] = "id,name,score,ok\n1,a,1,true\n2,\"multi\nline\",2,tr";
  const char *message = "sf-exec: error: operator 'src': @DIR@/in.csv:3: error: last row has no line end (truncated "
                        "file? --accept-unterminated reads it)\n";
  assert_copy_fails(cut, message);
  /* with a last field that happens to parse, and a quoted one */
  assert_copy_fails("id,name,score,ok\n1,a,1,true\n2,b,2,true\n3,c,3,true\n4,d,4",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:5: error: last row has no line end (truncated "
                    "file? --accept-unterminated reads it)\n");
  assert_copy_fails("id,name,score,ok\n1,a,1,true\n7,\"x\",7,false",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:3: error: last row has no line end (truncated "
                    "file? --accept-unterminated reads it)\n");
  assert_copy_fails("id,name,score,ok", "sf-exec: error: operator 'src': @DIR@/in.csv:1: error: last row has no line "
                                        "end (truncated file? --accept-unterminated reads it)\n");

  char *log;
  write_file("in.csv", cut, sizeof cut - 1);
  int rc = run_graph_with(copy_graph, &log, true); /* accepted: "tr" is then not a bool */
  assert_failure(rc, log, "sf-exec: error: operator 'src': @DIR@/in.csv:3: error: field 'ok': 'tr' is not a bool\n");
  static const char whole[] = "id,name,score,ok\n1,a,1,true\n7,\"x,y\",7,false";
  write_file("in.csv", whole, sizeof whole - 1);
  rc = run_graph_with(copy_graph, &log, true);
  assert_output(rc, log, "id,name,score,ok\n1,a,1,true\n7,\"x,y\",7,false\n");
  write_file("in.csv", "id,name,score,ok", 16);
  rc = run_graph_with(copy_graph, &log, true);
  assert_output(rc, log, "id,name,score,ok\n");
}
END_TEST

START_TEST(test_bad_header) {
  assert_copy_fails("id,name,score\n1,a,1\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:1: error: header has no column 'ok'\n");
  assert_copy_fails("id,name,score,ok,extra\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:1: error: header column 'extra' is not an "
                    "attribute of schema 'Row'\n");
  assert_copy_fails("id,name,score,ok,name\n",
                    "sf-exec: error: operator 'src': @DIR@/in.csv:1: error: header has column 'name' twice\n");
  assert_copy_fails("", "sf-exec: error: operator 'src': @DIR@/in.csv:1: error: the file is empty (expected a header "
                        "row)\n");
}
END_TEST

START_TEST(test_missing_input) {
  char *log;
  int rc = run_graph(copy_graph, &log);
  assert_failure(rc, log, "sf-exec: error: operator 'src': cannot open '@DIR@/in.csv': No such file or directory\n");
}
END_TEST

START_TEST(test_sink_directory_missing) {
  write_file("in.csv", "id,name,score,ok\n", 17);
  char *log;
  int rc = run_graph("<graph xmlns='urn:streamfission:graph:1' name='t'>\n" ROW_SCHEMA SOURCE("Row", "in.csv")
                     "  <operator name='out' kind='FileSink'><input stream='A'/>"
                     "<param name='file'>@DIR@/nodir/out.csv</param></operator>\n</graph>\n",
                     &log);
  assert_failure(rc, log, "sf-exec: error: operator 'out': cannot create a temporary file in '@DIR@/nodir' for "
                          "'@DIR@/nodir/out.csv': No such file or directory\n");
}
END_TEST

START_TEST(test_sink_replaces_target) {
  /* an existing target is replaced only when the job completes */
  write_file("out/out.csv", "old\n", 4);
  write_file("in.csv", "id,name,score,ok\n1,a,1,zzz\n", 27);
  char *log;
  int rc = run_graph(copy_graph, &log);
  ck_assert_int_eq(rc, 1);
  free(log);
  char *names = list_dir("out");
  ck_assert_str_eq(names, "out.csv\n");
  free(names);
  char *old = read_file("out/out.csv", NULL);
  ck_assert_str_eq(old, "old\n");
  free(old);
  write_file("in.csv", "id,name,score,ok\n1,a,1,true\n", 28);
  rc = run_graph(copy_graph, &log);
  assert_output(rc, log, "id,name,score,ok\n1,a,1,true\n");
}
END_TEST

START_TEST(test_large_output) {
  /* several flushes of the sink's buffer */
  char *log;
  int rc = run_graph("<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
                     "  <schema name='S'><attr name='n' type='int'/><attr name='s' type='string'/></schema>\n"
                     "  <operator name='gen' kind='Beacon'><output stream='A' schema='S'/>\n"
                     "    <param name='count'>200000</param>\n"
                     "    <set attr='n'>seq</set><set attr='s'>\"row, number \" + str(seq)</set>\n"
                     "  </operator>\n" SINK("A") "</graph>\n",
                     &log);
  ck_assert_msg(rc == 0, "%s", log);
  free(log);
  size_t n;
  char *out = read_file("out/out.csv", &n);
  ck_assert_ptr_nonnull(out);
  FILE *f = fmemopen(out, n, "rb");
  CsvReader r;
  csv_reader_init(&r, f);
  ck_assert_int_eq(csv_read(&r), 1);
  for (int i = 0; i < 200000; i++) {
    ck_assert_int_eq(csv_read(&r), 1);
    size_t k;
    char want[64];
    snprintf(want, sizeof want, "%d", i);
    ck_assert_str_eq(csv_field(&r, 0, &k), want);
    snprintf(want, sizeof want, "row, number %d", i);
    ck_assert_str_eq(csv_field(&r, 1, &k), want);
  }
  ck_assert_int_eq(csv_read(&r), 0);
  csv_reader_release(&r);
  fclose(f);
  free(out);
}
END_TEST

/* ---- Custom: the sessionize example ---- */

static const char clicks_csv[] = "user,ts,page\n"
                                 "a,0,/x\n"
                                 "b,1,/y\n"
                                 "a,5,/x\n"
                                 "b,30,/y\n"      /* b's one-click session ends: too short, dropped */
                                 "a,16,/z\n"      /* 16 - 5 > 10: emits a 0..5 */
                                 "a,26,/z\n"      /* 26 - 16 = 10: same session */
                                 "b,35,/y\n"
                                 "c,40,/q\n"
                                 "b,100,/y\n"     /* emits b 30..35 */
                                 "a,37,/z\n"      /* emits a 16..26 */
                                 "\"x,y\",50,/p\n"
                                 "\"x,y\",55,\"/p,\"\"q\"\"\"\n"
                                 "\"x,y\",70,/p\n" /* emits x,y 50..55 */
                                 "c,41,/q\n";     /* still open at the end: discarded */

static const char sessions_csv[] = "user,startTs,endTs,clicks\n"
                                   "a,0,5,2\n"
                                   "b,30,35,2\n"
                                   "a,16,26,2\n"
                                   "\"x,y\",50,55,2\n";

/* The sessionize graph with the given <library path>. */
static char *sessionize_graph(const char *lib_path, const char *symbol) {
  char *xml = NULL;
  ck_assert_int_ge(
      asprintf(&xml,
               "<graph xmlns='urn:streamfission:graph:1' name='t'>\n"
               "  <schema name='Click'><attr name='user' type='string'/><attr name='ts' type='int'/>"
               "<attr name='page' type='string'/></schema>\n"
               "  <schema name='Session'><attr name='user' type='string'/><attr name='startTs' type='int'/>"
               "<attr name='endTs' type='int'/><attr name='clicks' type='int'/></schema>\n" SOURCE("Click", "in.csv")
               "  <operator name='sess' kind='Custom'><input stream='A'/><output stream='B' schema='Session'/>\n"
               "    <param name='gap'>10</param><param name='minClicks'>2</param>\n"
               "    <model state='partitioned' keys='user' selectivity='atmostone' forwards='user' punct='none'/>\n"
               "    <library path='%s' symbol='%s'/>\n"
               "  </operator>\n" SINK("B") "</graph>\n",
               lib_path, symbol),
      0);
  return xml;
}

static void copy_file(const char *from, const char *to) {
  char cmd[3 * PATH_MAX];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
  ck_assert_int_eq(system(cmd), 0);
}

/* Runs the sessionize graph with the library named lib_path on clicks and asserts its output. */
static void assert_sessions(const char *lib_path) {
  write_file("in.csv", clicks_csv, sizeof clicks_csv - 1);
  char *xml = sessionize_graph(lib_path, "sf_sessionize"), *log;
  int rc = run_graph(xml, &log);
  free(xml);
  assert_output(rc, log, sessions_csv);
}

START_TEST(test_custom_beside_executable) {
  assert_sessions("libsf_example_ops.so"); /* found in <bin>/../lib/streamfission */
}
END_TEST

START_TEST(test_custom_graph_dir) {
  char *copy = path_in_dir("libmine.so");
  copy_file(EXAMPLE_LIB, copy);
  free(copy);
  assert_sessions("libmine.so");
}
END_TEST

START_TEST(test_custom_library_path) {
  char *libs = path_in_dir("libs");
  ck_assert_int_eq(mkdir(libs, 0777), 0);
  char *copy = path_in_dir("libs/libelsewhere.so"), *env = NULL;
  copy_file(EXAMPLE_LIB, copy);
  ck_assert_int_ge(asprintf(&env, "/nonexistent::%s", libs), 0);
  setenv("SF_LIBRARY_PATH", env, 1);
  assert_sessions("libelsewhere.so");
  free(env);
  free(copy);
  free(libs);
}
END_TEST

START_TEST(test_custom_path_with_slash) {
  assert_sessions(EXAMPLE_LIB);
}
END_TEST

static void assert_sessionize_fails(const char *lib_path, const char *symbol, const char *message) {
  write_file("in.csv", clicks_csv, sizeof clicks_csv - 1);
  char *xml = sessionize_graph(lib_path, symbol), *log;
  int rc = run_graph(xml, &log);
  free(xml);
  assert_failure(rc, log, message);
}

START_TEST(test_custom_load_errors) {
  char exe[PATH_MAX];
  ck_assert_ptr_nonnull(realpath(SF_BINARY_DIR "/bin", exe));
  char *message = NULL;
  ck_assert_int_ge(asprintf(&message,
                            "sf-exec: error: operator 'sess': cannot find library 'libnope.so' (looked in '@DIR@', "
                            "'%s/../lib/streamfission' and the system's library path): libnope.so: cannot open "
                            "shared object file: No such file or directory\n",
                            exe),
                   0);
  assert_sessionize_fails("libnope.so", "sf_sessionize", message);
  free(message);
  assert_sessionize_fails("libsf_example_ops.so", "sf_nope",
                          "sf-exec: error: operator 'sess': library 'libsf_example_ops.so' has no symbol 'sf_nope'\n");
  char junk[256];
  memset(junk, '#', sizeof junk);
  write_file("libbroken.so", junk, sizeof junk);
  char *broken = path_in_dir("libbroken.so");
  ck_assert_int_ge(asprintf(&message,
                            "sf-exec: error: operator 'sess': cannot load library '@DIR@/libbroken.so': "
                            "%s: invalid ELF header\n",
                            broken),
                   0);
  assert_sessionize_fails("libbroken.so", "sf_sessionize", message);
  free(message);
  free(broken);
}
END_TEST

START_TEST(test_custom_run_errors) {
  static const char backwards[] = "user,ts,page\na,10,/x\nb,3,/y\na,9,/x\n";
  write_file("in.csv", backwards, sizeof backwards - 1);
  char *xml = sessionize_graph("libsf_example_ops.so", "sf_sessionize"), *log;
  int rc = run_graph(xml, &log);
  assert_failure(rc, log, "sf-exec: error: operator 'sess': click of user 'a' at ts 9 is earlier than the previous "
                          "one at ts 10\n");
  /* a bad parameter fails in open */
  char *p = strstr(xml, "<param name='gap'>10<");
  ck_assert_ptr_nonnull(p);
  memcpy(p, "<param name='gap'>-1<", 21);
  write_file("in.csv", clicks_csv, sizeof clicks_csv - 1);
  rc = run_graph(xml, &log);
  assert_failure(rc, log, "sf-exec: error: operator 'sess': parameter 'gap' must be an integer >= 0, got '-1'\n");
  free(xml);
}
END_TEST

static Suite *io_suite(void) {
  Suite *s = suite_create("io");
  TCase *csv = unit_case(s, "csv", NULL, NULL, 0);
  tcase_add_test(csv, test_csv_plain);
  tcase_add_test(csv, test_csv_quoted);
  tcase_add_test(csv, test_csv_crlf);
  tcase_add_test(csv, test_csv_bom);
  tcase_add_test(csv, test_csv_errors);
  tcase_add_test(csv, test_csv_read_error);
  tcase_add_test(csv, test_csv_long_record);
  tcase_add_test(csv, test_csv_line_64bit);
  tcase_add_test(csv, test_csv_limits);
  tcase_add_test(csv, test_csv_skip_line);
  tcase_add_test(csv, test_csv_put_field);
  tcase_add_test(csv, test_csv_put_row);
  tcase_add_test(csv, test_csv_round_trip);
  UNIT_ADD_TIMEOUT(s, test_csv_put_row_random, NULL, NULL, 60); /* under load: a second of CPU */
  UNIT_ADD_TIMEOUT(s, test_csv_put_plain_rows_random, NULL, NULL, 60);

  TCase *graphs = unit_case(s, "graphs", setup, teardown, 60);
  tcase_add_test(graphs, test_beacon_to_filesink);
  tcase_add_test(graphs, test_beacon_rate);
  tcase_add_test(graphs, test_beacon_eval_error);
  tcase_add_test(graphs, test_beacon_run_fault_order);
  tcase_add_test(graphs, test_beacon_run_sets_fault_order);
  tcase_add_test(graphs, test_filter_run_fault_order);
  tcase_add_test(graphs, test_functor_run_fault_order);
  tcase_add_test(graphs, test_aggregate_run_fault_order);
  tcase_add_test(graphs, test_dedup_run_fault_order);
  tcase_add_test(graphs, test_roll_parts);
  tcase_add_test(graphs, test_roll_failure_keeps_closed_parts);
  tcase_add_test(graphs, test_round_trip);
  tcase_add_test(graphs, test_columns_by_name);
  tcase_add_test(graphs, test_single_string_column);
  tcase_add_test(graphs, test_empty_input);
  tcase_add_test(graphs, test_malformed_field);
  tcase_add_test(graphs, test_malformed_rows);
  tcase_add_test(graphs, test_skip_malformed_rows);
  tcase_add_test(graphs, test_unterminated_last_row);
  tcase_add_test(graphs, test_bad_header);
  tcase_add_test(graphs, test_missing_input);
  tcase_add_test(graphs, test_sink_directory_missing);
  tcase_add_test(graphs, test_sink_replaces_target);
  tcase_add_test(graphs, test_large_output);
  tcase_add_test(graphs, test_custom_beside_executable);
  tcase_add_test(graphs, test_custom_graph_dir);
  tcase_add_test(graphs, test_custom_library_path);
  tcase_add_test(graphs, test_custom_path_with_slash);
  tcase_add_test(graphs, test_custom_load_errors);
  tcase_add_test(graphs, test_custom_run_errors);
  return s;
}

int main(void) {
  return unit_run(io_suite());
}
