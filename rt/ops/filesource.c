/* filesource.c: the FileSource kind, a source reading a CSV file (csv.h). The file's path is the
 * `file` parameter, relative to the working directory. Its header row must name every attribute of
 * the output schema exactly once, in any order, and nothing else; columns are mapped by name. Each
 * further record is one tuple, its fields parsed with value_parse for their attribute's type. Blank
 * lines are skipped (FileSink writes a row of one empty string as "", never as a blank line).
 *
 * Every row, the last one and the header included, must end with a line end (LF or CRLF): a file
 * cut short (a copy interrupted, a disk full, a writer killed) ends inside its last row, and reading
 * it as it is would give a complete-looking output with a cut value. So a row that the end of the
 * input ends is an error naming the line it starts on, unless sf-exec runs with
 * --accept-unterminated (ExecOptions.accept_unterminated), which reads it as a row. The end of a FIFO
 * or pipe is when its writer closes it; a row still being written to an open FIFO is waited for.
 *
 * Errors name the file and the line the record starts on, like the transformer's diagnostics:
 *   data/trades.csv:17: error: field 'vol': 'abc' is not an int
 *   data/trades.csv:9: error: row has 3 fields, header has 4
 *   data/trades.csv:1: error: header has no column 'vol'
 *   data/trades.csv:1001: error: last row has no line end (truncated file? --accept-unterminated reads it)
 * The file is opened and its header checked in open, so such errors come before any tuple flows.
 *
 * With `onerror` = `skip`, a malformed row (a CSV syntax error, a wrong number of fields, a field
 * that is not of its attribute's type) is counted (OpInst.n_skipped, shown by --stats) and
 * dropped, and close prints a warning saying how many there were and what the first was. A read
 * error, a bad header and a last row without its line end still stop the job.
 *
 * With `follow` = `yes`, the end of a regular file is not the end of the input: the source looks
 * again every FOLLOW_POLL_NS for rows appended to it (like tail -f) until the job stops. A row
 * being written is waited for, whole, like a row still being written to a FIFO. A FIFO, a pipe
 * or a terminal ends when its writer closes it, with or without `follow`.
 *
 * The file is read with read(2) on a non-blocking descriptor, so a FIFO or a pipe gives its rows
 * as they come, and a writer that is idle (or has not opened the FIFO yet) is waited for with
 * rt_wait_fd, which a stop of the job ends; before such a wait the source calls rt_idle, so what it
 * emitted goes on at once instead of waiting for the next row. `file` = `-` is standard input, used
 * as it is (its flags are the shell's, so it stays blocking): it is read only once poll says it
 * has something, and never closed. */
#include "csv.h"
#include "rt.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
  QUOTE_MAX = 40,           /* longest prefix of a field quoted in a message */
  FOLLOW_POLL_NS = 5000000, /* follow: a regular file at its end is read again this often */
  IDLE_MS = 50,             /* waiting for a pipe: the thread's idle hooks run this often */
};

typedef struct FileSource {
  const char *path; /* as given in `file` */
  int fd;           /* the open file (-1: none), non-blocking */
  bool regular;     /* it is a regular file: a read never waits */
  bool std_in;      /* `file` is `-`: fd is standard input, blocking, never closed */
  bool running;     /* run has started: waits hand on what was emitted (not while open reads the
                       header, before any thread runs) */
  OpInst *op;       /* the instance (for rt_wait_fd) */
  CsvReader r;      /* its reader (initialized when fd is open) */
  int ncols;        /* columns of the header */
  int *attr_of;     /* per column: output attribute index */
  Value *vals;      /* values of the tuple being built */
  int nvals;        /* output attributes */
  bool follow;      /* `follow` = `yes`: the end of a regular file is waited past */
  bool drained;     /* a drain ended the input: a row it cut is dropped, not an error */
  bool skip;        /* `onerror` = `skip`: malformed rows are counted and dropped */
  char first_skip[320]; /* the first row skipped: "LINE: what is wrong" */
} FileSource;

static void filesource_close(OpInst *op, bool ok);

static const char *type_article(Type t) {
  switch (t) {
  case TYPE_INT: return "an int";
  case TYPE_DOUBLE: return "a double";
  case TYPE_BOOL: return "a bool";
  default: return "a string";
  }
}

/* The CSV reader's error (syntax or read) as an operator failure; a read cut short by a stop of
 * the job is not the file's fault and returns -1 without a message. */
static int reader_fail(OpInst *op, FileSource *fs) {
  if (rt_stopping(op)) return -1;
  return rt_fail(op, "%s:%d: error: %s", fs->path, fs->r.err_line, fs->r.err);
}

/* Sleeps FOLLOW_POLL_NS, having handed on what was emitted. 0, 1 at once when the job drains,
 * or -1 when it stops. */
static int follow_wait(FileSource *fs) {
  if (fs->running) rt_idle(fs->op);
  if (fs->running && rt_draining(fs->op)) return 1;
  struct timespec ts = { .tv_nsec = FOLLOW_POLL_NS };
  nanosleep(&ts, NULL); /* EINTR: just look again */
  return rt_stopping(fs->op) ? -1 : 0;
}

/* CsvReadFn of the file: what one read(2) gives. A pipe or FIFO is polled first (a FIFO whose
 * writer has not come yet would read as its end), and the wait ends when the job stops (-1,
 * ECANCELED). */
static ssize_t read_file(void *ctx, char *buf, size_t cap) {
  FileSource *fs = ctx;
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
static void skipped(OpInst *op, FileSource *fs, int line, const char *what) {
  if (atomic_load_explicit(&op->n_skipped, memory_order_relaxed) == 0)
    snprintf(fs->first_skip, sizeof fs->first_skip, "%d: %s", line, what);
  atomic_store_explicit(&op->n_skipped, atomic_load_explicit(&op->n_skipped, memory_order_relaxed) + 1,
                        memory_order_relaxed);
}

/* The next record, as csv_read, with a row that the end of the input cut (no line end) as an
 * error unless the job accepts it: 1 with the record, 0 at the end, -1 after rt_fail. */
static int next_record(OpInst *op, FileSource *fs) {
  int rc;
  while ((rc = csv_read(&fs->r)) < 0 && fs->skip && !fs->r.failed && fs->ncols > 0) {
    skipped(op, fs, fs->r.err_line, fs->r.err);
    if ((rc = csv_skip_line(&fs->r)) <= 0) break;
  }
  if (fs->drained && (rc < 0 ? !fs->r.failed : rc == 1 && fs->r.unterminated)) return 0; /* cut by the drain */
  if (rc < 0) return reader_fail(op, fs);
  if (rc == 1 && fs->r.unterminated && !rt_options(op)->accept_unterminated)
    return rt_fail(op, "%s:%d: error: last row has no line end (truncated file? --accept-unterminated reads it)",
                   fs->path, fs->r.record_line);
  return rc;
}

static int check_header(OpInst *op, FileSource *fs) {
  const Schema *s = op->out_schema;
  int rc = next_record(op, fs);
  if (rc < 0) return -1;
  if (rc == 0) return rt_fail(op, "%s:1: error: the file is empty (expected a header row)", fs->path);
  int line = fs->r.record_line;
  fs->ncols = fs->r.nfields;
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
      err = rt_fail(op, "%s:%d: error: header has column '%s' twice", fs->path, line, name);
    else if (a >= 0)
      col_of[a] = c;
  }
  for (int a = 0; a < s->nattrs && !err; a++)
    if (col_of[a] < 0) err = rt_fail(op, "%s:%d: error: header has no column '%s'", fs->path, line, s->attrs[a].name);
  for (int c = 0; c < fs->ncols && !err; c++)
    if (fs->attr_of[c] < 0) {
      size_t n;
      err = rt_fail(op, "%s:%d: error: header column '%s' is not an attribute of schema '%s'", fs->path, line,
                    csv_field(&fs->r, c, &n), s->name);
    }
  free(col_of);
  return err;
}

static int setup(OpInst *op, FileSource *fs) {
  fs->path = rt_param(op, "file");
  if (!fs->path || !*fs->path) return rt_fail(op, "FileSource needs parameter 'file'");
  const char *format = rt_param(op, "format");
  if (format && strcmp(format, "csv")) return rt_fail(op, "unknown format '%s' (the only format is 'csv')", format);
  if (!op->out_schema) return rt_fail(op, "FileSource has no output schema");
  const char *follow = rt_param(op, "follow"), *onerror = rt_param(op, "onerror");
  if (follow && strcmp(follow, "yes") && strcmp(follow, "no"))
    return rt_fail(op, "parameter 'follow' must be 'yes' or 'no', got '%s'", follow);
  if (onerror && strcmp(onerror, "stop") && strcmp(onerror, "skip"))
    return rt_fail(op, "parameter 'onerror' must be 'stop' or 'skip', got '%s'", onerror);
  fs->follow = follow && !strcmp(follow, "yes");
  fs->skip = onerror && !strcmp(onerror, "skip");
  fs->nvals = op->out_schema->nattrs;
  fs->vals = sf_xmalloc(sizeof *fs->vals * ((size_t)fs->nvals + 1));
  /* non-blocking: opening a FIFO does not wait for its writer (read_file does) */
  fs->std_in = !strcmp(fs->path, "-");
  fs->fd = fs->std_in ? STDIN_FILENO : open(fs->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fs->fd < 0) return rt_fail(op, "cannot open '%s': %s", fs->path, strerror(errno));
  if (fs->std_in) fs->path = "<stdin>"; /* how messages name it */
  struct stat st;
  fs->regular = fstat(fs->fd, &st) == 0 && S_ISREG(st.st_mode);
  fs->op = op;
  csv_reader_init_fn(&fs->r, read_file, fs);
  return check_header(op, fs);
}

static int filesource_open(OpInst *op) {
  FileSource *fs = sf_xmalloc(sizeof *fs);
  memset(fs, 0, sizeof *fs);
  fs->fd = -1;
  op->state = fs;
  if (setup(op, fs) == 0) return 0;
  filesource_close(op, false); /* the executor closes only operators whose open succeeded */
  return -1;
}

/* Parses the current record into fs->vals (strings borrow the reader's buffer). 0, or -1 with
 * what is wrong (lowercase, no location) in why. */
static int parse_row(OpInst *op, FileSource *fs, char *why, size_t cap) {
  const Schema *s = op->out_schema;
  if (fs->r.nfields != fs->ncols) {
    snprintf(why, cap, "row has %d field%s, header has %d", fs->r.nfields, fs->r.nfields == 1 ? "" : "s",
             fs->ncols);
    return -1;
  }
  for (int c = 0; c < fs->ncols; c++) {
    int a = fs->attr_of[c];
    size_t n;
    const char *text = csv_field(&fs->r, c, &n);
    if (value_parse(s->attrs[a].type, text, n, &fs->vals[a], NULL) < 0) {
      int shown = n > QUOTE_MAX ? QUOTE_MAX : (int)n;
      snprintf(why, cap, "field '%s': '%.*s%s' is not %s", s->attrs[a].name, shown, text,
               n > QUOTE_MAX ? "..." : "", type_article(s->attrs[a].type));
      return -1;
    }
  }
  return 0;
}

static int filesource_run(OpInst *op) {
  FileSource *fs = op->state;
  uint64_t n = 0;
  fs->running = true;
  for (;;) {
    if (rt_stopping(op)) return 0;
    int rc = next_record(op, fs);
    if (rc <= 0) return rc;
    if (fs->r.blank) continue;
    char why[256];
    if (parse_row(op, fs, why, sizeof why) < 0) {
      if (!fs->skip) return rt_fail(op, "%s:%d: error: %s", fs->path, fs->r.record_line, why);
      skipped(op, fs, fs->r.record_line, why);
      continue;
    }
    Tuple *t = tuple_new(fs->vals, fs->nvals);
    op->cur_seq = op->cur_src = n++;
    if (rt_emit(op, 0, t) < 0) return -1;
    arena_reset(op->scratch);
  }
}

static int filesource_process(OpInst *op, int port, Tuple *t) {
  tuple_unref(t);
  return rt_fail(op, "a FileSource has no input");
}

static int filesource_final(OpInst *op) {
  return 0;
}

static void filesource_close(OpInst *op, bool ok) {
  FileSource *fs = op->state;
  if (!fs) return;
  unsigned long long skips = atomic_load(&op->n_skipped);
  if (skips)
    rt_warn(op, "skipped %llu malformed row%s of '%s' (the first: %s:%s)", skips, skips == 1 ? "" : "s",
            fs->path, fs->path, fs->first_skip);
  if (fs->fd >= 0) {
    csv_reader_release(&fs->r);
    if (!fs->std_in) close(fs->fd);
  }
  free(fs->attr_of);
  free(fs->vals);
  free(fs);
  op->state = NULL;
}

const OpKindImpl op_filesource = {
  .kind = KIND_FILESOURCE,
  .open = filesource_open,
  .run = filesource_run,
  .process = filesource_process,
  .final = filesource_final,
  .close = filesource_close,
};
