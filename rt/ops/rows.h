/* rows.h: CSV rows into tuples, the part of a source that FileSource and SocketSource share: a
 * header row mapped to the output schema's attributes by name (or, without a header, the columns
 * in the schema's order), then one tuple per record, read from a descriptor through csv.h. With
 * RowReader.subset (FileSource's `columns` = `subset`), the header may name more columns than
 * the schema's attributes: those are skipped, in any order (each attribute still needs one).
 *
 * Every row, the last one and the header included, must end with a line end (LF or CRLF): an
 * input cut short (a copy interrupted, a disk full, a writer killed) ends inside its last row, and
 * reading it as it is would give a complete-looking output with a cut value. So a row that the end
 * of the input ends is an error naming the line it starts on, unless sf-exec runs with
 * --accept-unterminated (ExecOptions.accept_unterminated), which reads it as a row. A row cut by a
 * drain (SIGTERM) is dropped instead: the writer had not finished it.
 *
 * Errors name the input (RowReader.name: a path, '<stdin>', a peer) and the line the record starts
 * on, like the transformer's diagnostics:
 *   data/trades.csv:17: error: field 'vol': 'abc' is not an int
 *   data/trades.csv:9: error: row has 3 fields, header has 4
 *   data/trades.csv:1: error: header has no column 'vol'
 *   data/trades.csv:1001: error: last row has no line end (truncated file? --accept-unterminated reads it)
 *
 * Rows are bounded (`maxrow` bytes, default 1 MiB, and `maxfields` fields, default 10,000: csv.h):
 *   data/trades.csv:5: error: row is longer than 1048576 bytes (parameter 'maxrow')
 *
 * With skip (`onerror` = `skip`), a malformed row (a CSV syntax error, a row over the limits, a
 * wrong number of fields, a field that is not of its attribute's type) is counted (OpInst.n_skipped, shown by --stats) and
 * dropped, and rows_release prints a warning saying how many there were and what the first was. A
 * read error, a bad header and a last row without its line end still stop the job.
 *
 * With follow, the end of a regular file is not the end of the input: the reader looks again
 * every FOLLOW_POLL_NS for rows appended to it (like tail -f) until the job stops or drains. At
 * its end it also looks whether the file was truncated (its size below what was read: logrotate's
 * copytruncate, `: > log`) or, with RowReader.path, replaced (another file at the path: a rotation
 * by rename), like tail -F: it warns, naming the file, and reads from the start of the file (the
 * new one, the old one having been read to its end), where a first row equal to the header row is
 * dropped. A row being written when that happens (cut by the truncation, or left without its line
 * end at the end of the old file) is dropped. Offsets and lines of messages and checkpoints are
 * the new content's from then on.
 *
 * Anything but a regular file is read only once poll says it has something (a FIFO whose writer
 * has not come yet would read as its end), through rt_wait_fd_for, which a stop of the job ends;
 * while it waits, the reader calls rt_idle every IDLE_MS, so what the source emitted goes on and
 * the idle hooks of its thread run. Blank lines are skipped (FileSink writes a row of one empty
 * string as "", never as a blank line). */
#ifndef SF_ROWS_H
#define SF_ROWS_H

#include "csv.h"
#include "rt.h"

typedef struct RowReader {
  OpInst *op;       /* the source */
  const char *name; /* how messages name the input (not owned) */
  int fd;           /* the input (the kind opens and closes it; follow with path replaces it when
                       the path names another file, closing the old one: the kind closes rr.fd) */
  const char *path; /* follow: the path to watch for another file (NULL: none; not owned) */
  bool regular;     /* it is a regular file: a read never waits */
  bool header;      /* the first row is a header naming the columns */
  bool subset;      /* the header may name columns the schema does not have: they are skipped */
  bool follow;      /* the end of a regular file is waited past */
  bool skip;        /* malformed rows are counted and dropped */
  bool running;     /* rows_run has started: waits hand on what was emitted (not while a kind's
                       open reads the header, before any thread runs) */
  bool drained;     /* a drain ended the input: a row it cut is dropped, not an error */
  bool restart;     /* follow: the file was truncated or replaced; the reader starts again at 0 */
  bool finishing;   /* follow: another file is at the path; the old one is read once more first */
  bool repeat_header; /* the first row after a restart is dropped if it is header_row */
  Buf header_row;   /* the header's fields as the reader held them (csv.h: each followed by NUL) */
  CsvReader r;      /* the CSV reader */
  int ncols;        /* columns of a row */
  int *attr_of;     /* per column: output attribute index */
  Value *vals;      /* values of the tuple being built */
  int nvals;        /* output attributes */
  char first_skip[320]; /* the first row skipped: "LINE: what is wrong" */
  uint64_t next_src; /* the src of the next tuple (0, 1, 2, ...: one per row emitted) */
  uint64_t at_offset; /* where the next row to emit starts in the input (byte offset)... */
  int64_t at_line;   /* ...and its line: while rt_emit has a row, that row's */
} RowReader;

/* Prepares rr to read fd for op (whose out_schema the rows fill); the flags are set by the caller
 * before rows_start. Never fails. */
void rows_init(RowReader *rr, OpInst *op, int fd, const char *name, bool regular);
/* Reads the header (when rr->header). 0, or -1 after rt_fail (or on a stop, without a message). */
int rows_start(RowReader *rr);
/* Emits one tuple per row until the input ends (0), the job drains (0) or stops (-1), or a
 * row fails it (-1 after rt_fail). */
int rows_run(RowReader *rr);
/* Prints the warning about skipped rows, if any, and frees what rr holds (not fd). */
void rows_release(RowReader *rr);
/* Checkpoints (rt.h: a source's snapshot is taken inside rt_emit, as if the row being emitted had
 * not been read): appends the position of the next row to emit (its byte offset, line and src),
 * the skipped rows' count and first message, and the ROWS_CHECK_BYTES bytes of the file before
 * that position (fewer near its start; none when it cannot be read again), which a restore
 * compares with the file it is given. */
enum { ROWS_CHECK_BYTES = 256 };
void rows_snapshot(const RowReader *rr, Buf *out);
/* Reads what rows_snapshot wrote (the whole snapshot) and moves the input there (lseek of rr->fd,
 * after rows_start): the next tuple rows_run emits is that row, with the same src, and messages
 * name the same lines. 0, or -1 after rt_fail: a snapshot truncated or malformed, an input that
 * cannot seek (a pipe, a FIFO, a socket), or a file that is not the one of the checkpoint (shorter
 * than the position, or other bytes before it). With follow, that last case is a file truncated
 * or replaced since: a warning, and the input stays where rows_start left it (after the header),
 * the src and skipped rows going on from the snapshot's. */
int rows_restore(RowReader *rr, SnapIn *in);
/* The `onerror` parameter of op: 0 with *skip set, or rt_fail when it is neither stop nor skip. */
int rows_onerror(OpInst *op, bool *skip);
/* The `maxrow` and `maxfields` parameters of op (csv.h's limits: a longer row, or one of more
 * fields, is a malformed row): 0 with the limits set (CSV_MAX_ROW and CSV_MAX_FIELDS when not
 * given), or rt_fail when one is not an integer from 1 to ROWS_MAX_ROW or ROWS_MAX_FIELDS. */
enum { ROWS_MAX_ROW = 1 << 30, ROWS_MAX_FIELDS = 1000000 };
int rows_limits(OpInst *op, uint64_t *max_row, int *max_fields);
/* "an int", "a double", "a bool", "a string": a field's type in "field 'x': 'abc' is not an int". */
const char *rows_type_article(Type t);

#endif
