/* rows.c: CSV rows into tuples for the sources (rows.h). */
#include "rows.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
  QUOTE_MAX = 40,           /* longest prefix of a field quoted in a message */
  FOLLOW_POLL_NS = 5000000, /* follow: a regular file at its end is read again this often */
  IDLE_MS = 50,             /* waiting for input: the thread's idle hooks run this often */
};

const char *rows_type_article(Type t) {
  switch (t) {
  case TYPE_INT: return "an int";
  case TYPE_DOUBLE: return "a double";
  case TYPE_BOOL: return "a bool";
  default: return "a string";
  }
}

/* The CSV reader's error (syntax or read) as an operator failure; a read cut short by a stop of
 * the job is not the file's fault and returns -1 without a message. */
static int reader_fail(OpInst *op, RowReader *fs) {
  if (rt_stopping(op)) return -1;
  return rt_fail(op, "%s:%" PRId64 ": error: %s", fs->name, fs->r.err_line, fs->r.err);
}

/* Sleeps FOLLOW_POLL_NS, having handed on what was emitted. 0, 1 at once when the job drains,
 * or -1 when it stops. */
static int follow_wait(RowReader *fs) {
  if (fs->running) rt_idle(fs->op);
  if (fs->running && rt_draining(fs->op)) return 1;
  struct timespec ts = { .tv_nsec = FOLLOW_POLL_NS };
  nanosleep(&ts, NULL); /* EINTR: just look again */
  return rt_stopping(fs->op) ? -1 : 0;
}

/* Follow, at the end of the file: was it truncated (its size is below what was read: tail -f) or
 * replaced (another file at rr->path: tail -F)? Truncated: warns and moves the input to the start
 * of the file. Replaced: the first time, 2 (read the old file once more: what its writer wrote
 * before the new file appeared is read); the next time, warns, opens the new file and closes the
 * old one. Either way 1 then: the caller abandons the record being read and starts again
 * (fs->restart). 0 when neither. */
static int follow_moved(RowReader *fs) {
  struct stat st, at_path;
  off_t pos = lseek(fs->fd, 0, SEEK_CUR);
  if (fstat(fs->fd, &st) != 0) return 0;
  if (pos > 0 && st.st_size < pos) {
    rt_warn(fs->op, "'%s' was truncated to %lld bytes (%lld were read): reading it again from its start", fs->name,
            (long long)st.st_size, (long long)pos);
    lseek(fs->fd, 0, SEEK_SET);
    fs->restart = true;
    return 1;
  }
  if (!fs->path || stat(fs->path, &at_path) != 0 || !S_ISREG(at_path.st_mode) ||
      (at_path.st_dev == st.st_dev && at_path.st_ino == st.st_ino))
    return 0; /* gone (rm, or a rename not yet followed by a new file): the old one may grow yet */
  if (!fs->finishing) {
    fs->finishing = true;
    return 2;
  }
  int fd = open(fs->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0; /* looked at again at the next poll */
  rt_warn(fs->op, "'%s' was replaced (a new file at its path): the old one read to its end, reading the new one "
                  "from its start", fs->name);
  close(fs->fd);
  fs->fd = fd;
  fs->finishing = false;
  fs->restart = true;
  return 1;
}

/* CsvReadFn of the file: what one read(2) gives. A pipe or FIFO is polled first (a FIFO whose
 * writer has not come yet would read as its end), and the wait ends when the job stops (-1,
 * ECANCELED). A followed file that was truncated or replaced fails the read (-1, ESTALE) with
 * fs->restart set. */
static ssize_t read_file(void *ctx, char *buf, size_t cap) {
  RowReader *fs = ctx;
  for (;;) {
    if (fs->running && rt_draining(fs->op)) { /* SIGTERM: no more input; what was read goes on */
      fs->drained = true;
      return 0;
    }
    if (!fs->regular) {
      int ready = rt_wait_fd_for(fs->op, fs->fd, POLLIN, 0);
      while (ready == 2) { /* nothing yet: hand on what was emitted, and again every IDLE_MS */
        if (fs->running && rt_draining(fs->op)) {
          fs->drained = true;
          return 0;
        }
        if (fs->running) rt_idle(fs->op);
        ready = rt_wait_fd_for(fs->op, fs->fd, POLLIN, fs->running ? IDLE_MS : 100);
      }
      if (ready == 0) errno = ECANCELED;
      if (ready <= 0) return -1;
    }
    ssize_t n = read(fs->fd, buf, cap);
    if (n == 0 && fs->follow && fs->regular) { /* tail -f: the end of the file is not the end */
      int moved = follow_moved(fs);
      if (moved == 1) {
        errno = ESTALE;
        return -1;
      }
      if (moved == 2) continue;
      int w = follow_wait(fs);
      if (w < 0) {
        errno = ECANCELED;
        return -1;
      }
      if (w > 0) {
        fs->drained = true;
        return 0;
      }
      continue;
    }
    if (n >= 0 || (errno != EINTR && errno != EAGAIN)) return n;
  }
}

/* Counts a malformed row that onerror="skip" drops, remembering the first. */
static void skipped(OpInst *op, RowReader *fs, int64_t line, const char *what) {
  if (atomic_load_explicit(&op->n_skipped, memory_order_relaxed) == 0)
    snprintf(fs->first_skip, sizeof fs->first_skip, "%" PRId64 ": %s", line, what);
  atomic_store_explicit(&op->n_skipped, atomic_load_explicit(&op->n_skipped, memory_order_relaxed) + 1,
                        memory_order_relaxed);
}

/* The next record, as csv_read, with a row that the end of the input cut (no line end) as an
 * error unless the job accepts it: 1 with the record, 0 at the end, -1 after rt_fail. */
static int next_record(OpInst *op, RowReader *fs) {
  int rc;
  for (;;) {
    rc = csv_read(&fs->r);
    if (rc < 0 && fs->skip && !fs->r.failed && fs->ncols > 0) {
      skipped(op, fs, fs->r.err_line, fs->r.err);
      rc = csv_skip_line(&fs->r);
      if (rc > 0) continue;
    }
    if (rc >= 0 || !fs->restart) break;
    /* follow_moved: the file starts again; a row it cut is dropped, a header it repeats too */
    fs->restart = false;
    csv_reader_seek(&fs->r, 0, 1);
    fs->at_offset = 0;
    fs->at_line = 1;
    fs->repeat_header = fs->header && fs->ncols > 0;
  }
  if (fs->drained && (rc < 0 ? !fs->r.failed : rc == 1 && fs->r.unterminated)) return 0; /* cut by the drain */
  if (rc < 0) return reader_fail(op, fs);
  if (rc == 1 && fs->r.unterminated && !rt_options(op)->accept_unterminated)
    return rt_fail(op,
                   "%s:%" PRId64 ": error: last row has no line end (truncated file? --accept-unterminated reads it)",
                   fs->name, fs->r.record_line);
  return rc;
}

/* Reads the header row and maps its columns to attributes by name (with subset, a column of no
 * attribute gets -1 and is skipped); without a header, the columns are the schema's attributes in
 * order. */
static int check_header(OpInst *op, RowReader *fs) {
  if (!fs->header) {
    fs->ncols = op->out_schema->nattrs;
    fs->attr_of = sf_xmalloc(sizeof *fs->attr_of * ((size_t)fs->ncols + 1));
    for (int c = 0; c < fs->ncols; c++) fs->attr_of[c] = c;
    return 0;
  }
  const Schema *s = op->out_schema;
  int rc = next_record(op, fs);
  if (rc < 0) return -1;
  if (rc == 0) return rt_fail(op, "%s:1: error: the file is empty (expected a header row)", fs->name);
  int64_t line = fs->r.record_line;
  fs->ncols = fs->r.nfields;
  buf_append(&fs->header_row, fs->r.data.p, fs->r.data.n); /* a file that starts again may repeat it */
  fs->attr_of = sf_xmalloc(sizeof *fs->attr_of * (size_t)fs->ncols);
  int *col_of = sf_xmalloc(sizeof *col_of * ((size_t)s->nattrs + 1));
  for (int a = 0; a < s->nattrs; a++) col_of[a] = -1;
  int err = 0;
  for (int c = 0; c < fs->ncols && !err; c++) {
    size_t n;
    const char *name = csv_field(&fs->r, c, &n);
    int a = strlen(name) == n ? schema_find_attr(s, name) : -1;
    fs->attr_of[c] = a;
    if (a >= 0 && col_of[a] >= 0)
      err = rt_fail(op, "%s:%" PRId64 ": error: header has column '%s' twice", fs->name, line, name);
    else if (a >= 0)
      col_of[a] = c;
  }
  for (int a = 0; a < s->nattrs && !err; a++)
    if (col_of[a] < 0)
      err = rt_fail(op, "%s:%" PRId64 ": error: header has no column '%s'", fs->name, line, s->attrs[a].name);
  for (int c = 0; c < fs->ncols && !err && !fs->subset; c++)
    if (fs->attr_of[c] < 0) {
      size_t n;
      err = rt_fail(op, "%s:%" PRId64 ": error: header column '%s' is not an attribute of schema '%s'", fs->name,
                    line, csv_field(&fs->r, c, &n), s->name);
    }
  free(col_of);
  return err;
}

/* Parses the current record into fs->vals (strings borrow the reader's buffer). 0, or -1 with
 * what is wrong (lowercase, no location) in why. */
static int parse_row(OpInst *op, RowReader *fs, char *why, size_t cap) {
  const Schema *s = op->out_schema;
  if (fs->r.nfields != fs->ncols) {
    snprintf(why, cap, "row has %d field%s, header has %d", fs->r.nfields, fs->r.nfields == 1 ? "" : "s",
             fs->ncols);
    return -1;
  }
  for (int c = 0; c < fs->ncols; c++) {
    int a = fs->attr_of[c];
    if (a < 0) continue; /* a column the schema does not have (RowReader.subset) */
    size_t n;
    const char *text = csv_field(&fs->r, c, &n);
    if (value_parse(s->attrs[a].type, text, n, &fs->vals[a], NULL) < 0) {
      int shown = n > QUOTE_MAX ? QUOTE_MAX : (int)n;
      snprintf(why, cap, "field '%s': '%.*s%s' is not %s", s->attrs[a].name, shown, text,
               n > QUOTE_MAX ? "..." : "", rows_type_article(s->attrs[a].type));
      return -1;
    }
  }
  return 0;
}

int rows_run(RowReader *fs) {
  OpInst *op = fs->op;
  fs->running = true;
  for (;;) {
    if (rt_stopping(op)) return 0;
    int rc = next_record(op, fs);
    if (rc <= 0) return rc;
    if (fs->r.blank) continue;
    if (fs->repeat_header) { /* the first row of a file that started again: its header? */
      fs->repeat_header = false;
      if (fs->r.nfields == fs->ncols && fs->r.data.n == fs->header_row.n &&
          !memcmp(fs->r.data.p, fs->header_row.p, fs->header_row.n))
        continue;
    }
    char why[256];
    if (parse_row(op, fs, why, sizeof why) < 0) {
      if (!fs->skip) return rt_fail(op, "%s:%" PRId64 ": error: %s", fs->name, fs->r.record_line, why);
      skipped(op, fs, fs->r.record_line, why);
      continue;
    }
    Tuple *t = tuple_new(fs->vals, fs->nvals);
    fs->at_offset = fs->r.record_offset; /* a snapshot in rt_emit: as if this row were not read */
    fs->at_line = fs->r.record_line;
    op->cur_seq = op->cur_src = fs->next_src;
    if (rt_emit(op, 0, t) < 0) return -1;
    fs->next_src++;
    fs->at_offset = csv_reader_offset(&fs->r);
    fs->at_line = fs->r.line;
    arena_reset(op->scratch);
  }
}

void rows_init(RowReader *rr, OpInst *op, int fd, const char *name, bool regular) {
  memset(rr, 0, sizeof *rr);
  rr->op = op;
  rr->fd = fd;
  rr->name = name;
  rr->regular = regular;
  rr->header = true;
  rr->nvals = op->out_schema->nattrs;
  rr->vals = sf_xmalloc(sizeof *rr->vals * ((size_t)rr->nvals + 1));
  buf_init(&rr->header_row);
  csv_reader_init_fn(&rr->r, read_file, rr);
}

int rows_start(RowReader *rr) {
  int rc = check_header(rr->op, rr);
  rr->at_offset = csv_reader_offset(&rr->r);
  rr->at_line = rr->r.line;
  return rc;
}

void rows_snapshot(const RowReader *rr, Buf *out) {
  snap_u64(out, rr->at_offset);
  snap_i64(out, rr->at_line);
  snap_u64(out, rr->next_src);
  snap_u64(out, atomic_load(&rr->op->n_skipped));
  snap_bytes(out, rr->first_skip, strlen(rr->first_skip));
  char before[ROWS_CHECK_BYTES];
  size_t k = rr->at_offset < sizeof before ? (size_t)rr->at_offset : sizeof before;
  ssize_t got = rr->regular && k ? pread(rr->fd, before, k, (off_t)(rr->at_offset - k)) : 0;
  snap_bytes(out, before, got == (ssize_t)k ? k : 0); /* none: not checked */
}

/* True when the k bytes of rr's file before offset are those at p. */
static bool same_bytes_before(const RowReader *rr, uint64_t offset, const char *p, size_t k) {
  char here[ROWS_CHECK_BYTES];
  return k <= sizeof here && pread(rr->fd, here, k, (off_t)(offset - k)) == (ssize_t)k && !memcmp(here, p, k);
}

int rows_restore(RowReader *rr, SnapIn *in) {
  OpInst *op = rr->op;
  uint64_t offset = snap_get_u64(in);
  int64_t line = snap_get_i64(in);
  uint64_t src = snap_get_u64(in), skips = snap_get_u64(in);
  size_t n, nbefore;
  const char *first = snap_get_bytes(in, &n);
  const char *before = snap_get_bytes(in, &nbefore);
  if (in->bad || in->off != in->n || line < 1 || offset > INT64_MAX || n >= sizeof rr->first_skip ||
      nbefore > ROWS_CHECK_BYTES || nbefore > offset)
    return rt_fail(op, "snapshot truncated or malformed");
  struct stat st;
  bool regular = fstat(rr->fd, &st) == 0 && S_ISREG(st.st_mode);
  const char *other = NULL; /* how the file is not the checkpoint's */
  char why[128];
  if (regular && (uint64_t)st.st_size < offset) {
    snprintf(why, sizeof why, "has %lld bytes, the checkpoint was taken at byte %llu", (long long)st.st_size,
             (unsigned long long)offset);
    other = why;
  } else if (regular && nbefore && !same_bytes_before(rr, offset, before, nbefore)) {
    snprintf(why, sizeof why, "holds other bytes before byte %llu, where the checkpoint was taken",
             (unsigned long long)offset);
    other = why;
  }
  if (other && rr->follow) { /* truncated or replaced while the job was down: as tail -F would */
    rt_warn(op, "'%s' %s: it was truncated or replaced since; reading it from its start", rr->name, other);
    rr->next_src = src;
    atomic_store(&op->n_skipped, skips);
    memcpy(rr->first_skip, first, n);
    rr->first_skip[n] = 0;
    return 0;
  }
  if (other) return rt_fail(op, "cannot restore: '%s' %s (not the same file?)", rr->name, other);
  if (lseek(rr->fd, (off_t)offset, SEEK_SET) < 0)
    return rt_fail(op, "cannot restore: cannot seek '%s' back to byte %llu, where the checkpoint was taken: %s",
                   rr->name, (unsigned long long)offset,
                   errno == ESPIPE ? "it is a pipe, a FIFO or a socket, which cannot be read again" : strerror(errno));
  csv_reader_seek(&rr->r, offset, line);
  rr->next_src = src;
  rr->at_offset = offset;
  rr->at_line = line;
  atomic_store(&op->n_skipped, skips);
  memcpy(rr->first_skip, first, n);
  rr->first_skip[n] = 0;
  return 0;
}

void rows_release(RowReader *rr) {
  if (!rr->op) return;
  unsigned long long skips = atomic_load(&rr->op->n_skipped);
  if (skips)
    rt_warn(rr->op, "skipped %llu malformed row%s of '%s' (the first: %s:%s)", skips, skips == 1 ? "" : "s",
            rr->name, rr->name, rr->first_skip);
  csv_reader_release(&rr->r);
  buf_release(&rr->header_row);
  free(rr->attr_of);
  free(rr->vals);
  rr->op = NULL;
}

int rows_onerror(OpInst *op, bool *skip) {
  const char *onerror = rt_param(op, "onerror");
  if (onerror && strcmp(onerror, "stop") && strcmp(onerror, "skip"))
    return rt_fail(op, "parameter 'onerror' must be 'stop' or 'skip', got '%s'", onerror);
  *skip = onerror && !strcmp(onerror, "skip");
  return 0;
}

/* Parameter `name` of op, a decimal integer from 1 to max, into *v (unchanged when not given). */
static int limit_param(OpInst *op, const char *name, long long max, const char *unit, long long *v) {
  const char *text = rt_param(op, name);
  if (!text) return 0;
  int64_t n;
  if (number_read(text, strlen(text), 1, max, &n) != NUM_OK)
    return rt_fail(op, "parameter '%s' must be an integer from 1 to %lld%s, got '%s'", name, max, unit, text);
  *v = n;
  return 0;
}

int rows_limits(OpInst *op, uint64_t *max_row, int *max_fields) {
  long long row = CSV_MAX_ROW, fields = CSV_MAX_FIELDS;
  if (limit_param(op, "maxrow", ROWS_MAX_ROW, " (bytes)", &row) < 0 ||
      limit_param(op, "maxfields", ROWS_MAX_FIELDS, "", &fields) < 0)
    return -1;
  *max_row = (uint64_t)row;
  *max_fields = (int)fields;
  return 0;
}
