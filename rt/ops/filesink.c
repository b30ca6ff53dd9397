/* filesink.c: the FileSink kind, writing its input as CSV (csv.h): a header row of the input
 * schema's attribute names, then one row per tuple, in arrival order.
 *
 * The rows go to a temporary file next to the target (outfile.h: same directory, `.NAME.tmp.XXXXXX`,
 * given the permissions a new file would get), through a large buffer written with plain write(2)
 * calls. This file keeps the row and roll policy; the file's own life is outfile.c's. The final punctuation flushes, fsyncs and closes it; the executor's commit,
 * once every operator of this executor completed, renames it over the target and fsyncs the
 * directory. A failure anywhere (close with ok false, or the job stopping before the final
 * punctuation) unlinks the temporary file, so a failed job never leaves a file that looks
 * complete, not even one whose own branch had finished. Window punctuation and pulses mean nothing to a sink.
 *
 * A device or a pipe (/dev/null, /dev/stdout, a FIFO) is written in place, never replaced, through
 * a non-blocking descriptor: when its reader stalls, the sink waits in rt_wait_fd, which a stop of
 * the job ends, so a reader that never reads cannot keep the executor from stopping. `file` = `-`
 * is standard output, used as it is (its flags are the shell's, so it stays blocking): every write
 * waits for room with rt_wait_fd and writes at most PIPE_BUF bytes, which a pipe with room takes
 * without blocking. It is never closed.
 *
 * Such a streaming output (anything but a regular file) shows rows while the job runs: it is
 * written when its buffer holds STREAM_FLUSH_AT bytes, when a row comes FLUSH_EVERY_NS after the
 * oldest unwritten one (under load), and whenever the sink's thread is about to wait for input
 * (the idle hook: what fits without waiting goes out at once, the rest at the next row or idle).
 * A regular file is written in FLUSH_AT chunks: nobody sees it before its rename.
 *
 * With `roll` (`tuples N`, `seconds T` or `bytes B`) the sink writes numbered parts instead of one
 * file: for `out/x.csv`, `out/x-000000.csv`, `out/x-000001.csv`, ... (the number goes before the
 * last extension of the name), each a CSV file with its own header row. Each part is written to a
 * temporary file like the single file, and closes (flushed, fsynced, closed, renamed to its name,
 * the directory fsynced) once it holds N tuples, once B bytes or more, or T seconds after its
 * first row: looked at on every row and whenever the sink's thread is about to wait for input, so
 * an idle stream's part closes about on time while its thread waits in a queue (a sink fused into
 * a source waiting for a pipe looks at the next row). The next part opens with the next row; part
 * 0 opens with the sink, so a stream without tuples still gives one part, the header alone. The
 * last part closes at the final punctuation and is renamed at the commit, like the single file:
 * the parts renamed while the job ran stay after a failure or an interrupt, the part being written
 * is unlinked, and a killed job leaves only a hidden temporary file, never a part that looks whole. */
#include "csv.h"
#include "outfile.h"
#include "rt.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
  FLUSH_AT = 1 << 20,         /* bytes buffered before a write to a regular file */
  STREAM_FLUSH_AT = 1 << 16,  /* bytes buffered before a write to a streaming output */
  FLUSH_EVERY_NS = 5000000,   /* a streaming output's oldest unwritten row waits at most this long
                                 (give or take the coarse clock's tick) while rows keep coming */
  READER_POLL_NS = 10000000,  /* a FIFO without a reader is opened again this often */
};

typedef enum RollKind { ROLL_NONE, ROLL_TUPLES, ROLL_SECONDS, ROLL_BYTES } RollKind;

typedef struct FileSink {
  const char *path; /* the target, as given in `file` */
  RollKind roll;    /* `roll`: when a part closes (ROLL_NONE: one file) */
  int64_t limit;    /* tuples, bytes, or nanoseconds per part */
  /* a regular file: the file being written (rolling: the open part; between parts, not WRITING) */
  OutFile file;
  int nparts;       /* rolling: parts opened so far (the open one's number is nparts - 1) */
  int64_t part_tuples; /* rolling: tuples in the open part */
  int64_t part_bytes;  /* rolling: bytes of the open part, written and buffered */
  int64_t part_opened; /* rolling: when the open part's first row came (coarse monotonic ns) */
  /* rolling with checkpoints: closed parts waiting to become visible (two-phase commit), SYNCED
   * until a barrier pre-commits them */
  struct Pending {
    OutFile file; /* the part */
    int part;     /* its number */
  } *pending;
  int npending, cap_pending;
  bool restoring;   /* --restore: the first temporary file may be the checkpoint's (OUTFILE_REUSE) */
  bool committed;   /* --restore after this executor's commit record: the output is final (recommit
                       finishes publishing it); nothing is opened or written, rows are dropped */
  /* a device, a pipe or standard output: written in place */
  bool direct;      /* the target is one: no temporary file */
  bool std_out;     /* `file` is `-`: fd is standard output, blocking, never closed */
  int fd;           /* direct: the output (-1: closed) */
  Buf buf;          /* rows not yet written, from byte `sent` on */
  size_t sent;      /* bytes at the start of buf already written (an idle flush wrote part) */
  int64_t oldest;   /* streaming: when the oldest unwritten row was added (coarse monotonic ns) */
  bool plain;       /* the input schema has no string attribute (csv_put_plain_rows) */
} FileSink;

static void filesink_close(OpInst *op, bool ok);

/* What the rows being written become: the open part, or `file`. */
static const char *target(const FileSink *s) {
  return s->file.target && s->file.state == OUTFILE_WRITING ? s->file.target : s->path;
}

static int write_fail(OpInst *op, FileSink *s) {
  return rt_fail(op, "cannot write '%s': %s", target(s), strerror(errno));
}

static int rename_fail(OpInst *op, const OutFile *f) {
  return rt_fail(op, "cannot rename '%s' to '%s': %s", f->tmp, f->target, strerror(errno));
}

static int64_t coarse_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One write of what is buffered past `sent` to a direct output: at most PIPE_BUF bytes to standard
 * output (blocking, so only what a pipe with room takes at once). The byte count, or -1 with errno. */
static ssize_t write_some(FileSink *s) {
  size_t n = s->buf.n - s->sent;
  if (s->std_out && n > PIPE_BUF) n = PIPE_BUF;
  return write(s->fd, s->buf.p + s->sent, n);
}

/* Writes out everything buffered. 0, rt_fail, or -1 without a message when the job stopped while
 * a pipe's reader did not read. */
static int flush(OpInst *op, FileSink *s) {
  if (!s->direct) {
    if (outfile_write(&s->file, s->buf.p + s->sent, s->buf.n - s->sent) < 0) return write_fail(op, s);
    s->sent = s->buf.n;
  }
  while (s->sent < s->buf.n) {
    if (s->std_out) { /* blocking: write only once there is room */
      int ready = rt_wait_fd(op, s->fd, POLLOUT);
      if (ready == 0) return -1;
      if (ready < 0) return write_fail(op, s);
    }
    ssize_t n = write_some(s);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) { /* a pipe, full: wait for its reader or for a stop */
      int ready = rt_wait_fd(op, s->fd, POLLOUT);
      if (ready == 0) return -1;
      if (ready < 0) return write_fail(op, s);
      continue;
    }
    if (n < 0) return write_fail(op, s);
    s->sent += (size_t)n;
  }
  buf_reset(&s->buf);
  s->sent = 0;
  return 0;
}

/* Writes what a direct output takes without waiting (the idle hook may not wait). A write error
 * is left for the next flush to report. */
static void flush_ready(FileSink *s) {
  while (s->sent < s->buf.n) {
    if (s->std_out) {
      struct pollfd p = { .fd = s->fd, .events = POLLOUT };
      if (poll(&p, 1, 0) != 1 || !(p.revents & POLLOUT)) return;
    }
    ssize_t n = write_some(s);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s->sent += (size_t)n;
  }
  buf_reset(&s->buf);
  s->sent = 0;
}

/* Opens a device or a pipe for writing without ever blocking: a FIFO without a reader yet is
 * opened again every few milliseconds until one comes or the job stops. The descriptor stays
 * non-blocking (flush waits with rt_wait_fd). 0, rt_fail, or -1 without a message on a stop. */
static int open_direct(OpInst *op, FileSink *s) {
  for (;;) {
    s->fd = open(s->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (s->fd >= 0) return 0;
    if (errno != ENXIO) return rt_fail(op, "cannot open '%s': %s", s->path, strerror(errno));
    if (rt_stopping(op)) return -1;
    nanosleep(&(struct timespec){ .tv_nsec = READER_POLL_NS }, NULL);
  }
}

/* Appends the header row. */
static void put_header(OpInst *op, FileSink *s) {
  const Schema *in = op->in_schema;
  for (int i = 0; i < in->nattrs; i++) {
    if (i) buf_putc(&s->buf, ',');
    csv_put_field(&s->buf, in->attrs[i].name, strlen(in->attrs[i].name));
  }
  buf_putc(&s->buf, '\n');
}

/* Opens the temporary file for `name` (the target or a part). With checkpoints its name is fixed,
 * so a restarted job finds it (and a job killed before a checkpoint named it leaves no orphan: the
 * next run writes it again); the file the job starts with may be the one a restore goes on
 * writing, so it is reused as it is (emptied at the first write unless a restore takes it over).
 * 0 or rt_fail. */
static int open_temp(OpInst *op, FileSink *s, const char *name) {
  OutFileHow how = !rt_options(op)->checkpoint_dir ? OUTFILE_UNIQUE : s->restoring ? OUTFILE_REUSE : OUTFILE_FIXED;
  s->restoring = false;
  if (outfile_open(&s->file, name, how) == 0) return 0;
  if (s->file.state == OUTFILE_WRITING) return write_fail(op, s);
  return rt_fail(op, "cannot create a temporary file in '%s' for '%s': %s", s->file.dir, name, outfile_why(&s->file));
}

/* The name of part number n (the number before the last extension of `file`; malloc'd). */
static char *part_name(const FileSink *s, int n) {
  const char *slash = strrchr(s->path, '/');
  const char *base = slash ? slash + 1 : s->path;
  const char *dot = strrchr(base, '.');
  if (!dot || dot == base) dot = base + strlen(base); /* no extension (a leading dot is the name's) */
  char *part;
  if (asprintf(&part, "%.*s-%06d%s", (int)(dot - s->path), s->path, n, dot) < 0) sf_die("out of memory");
  return part;
}

/* Opens part number nparts: its temporary file and its header. 0 or rt_fail. */
static int open_part(OpInst *op, FileSink *s) {
  char *part = part_name(s, s->nparts++);
  int rc = open_temp(op, s, part);
  free(part);
  if (rc < 0) return -1;
  put_header(op, s);
  s->part_tuples = 0;
  s->part_bytes = (int64_t)s->buf.n;
  return 0;
}

/* Writes out, fsyncs and closes the file being written. 0, rt_fail, or -1 on a stop. */
static int finish_temp(OpInst *op, FileSink *s) {
  if (flush(op, s) < 0) return -1;
  if (outfile_sync(&s->file) < 0) return write_fail(op, s);
  return 0;
}

/* Whether pending part i is due: pre-committed at a checkpoint now complete, or the job is (all). */
static bool part_due(const FileSink *s, int i, uint64_t done, bool all) {
  const OutFile *f = &s->pending[i].file;
  return f->state == OUTFILE_PRECOMMITTED ? f->ckpt <= done : all;
}

/* Makes visible the parts pre-committed at a checkpoint that is now complete (every part at the
 * end, all: true) and drops them from the list. The directory is synced once, with the last
 * rename. 0 or rt_fail (the part that could not be renamed stays in the list). */
static int publish_parts(OpInst *op, FileSink *s, bool all) {
  uint64_t done = all ? UINT64_MAX : rt_checkpoint_complete(op);
  int last = 0; /* the lowest index due is renamed last (a part moved into i comes from above) */
  while (last < s->npending && !part_due(s, last, done, all)) last++;
  for (int i = s->npending - 1; i >= last; i--) {
    if (!part_due(s, i, done, all)) continue;
    OutFile *f = &s->pending[i].file;
    if (outfile_publish(f, i == last) < 0) return rename_fail(op, f);
    outfile_release(f, false);
    s->pending[i] = s->pending[--s->npending];
  }
  return 0;
}

/* Closes the open part and makes it visible under its name; with checkpoints, it waits in the
 * pending list until a checkpoint after it is complete. 0, rt_fail, or -1 on a stop. */
static int close_part(OpInst *op, FileSink *s) {
  if (finish_temp(op, s) < 0) return -1;
  if (rt_options(op)->checkpoint_dir) {
    if (s->npending == s->cap_pending) {
      s->cap_pending = s->cap_pending ? 2 * s->cap_pending : 4;
      s->pending = sf_xrealloc(s->pending, sizeof *s->pending * (size_t)s->cap_pending);
    }
    /* the pending list owns it now */
    s->pending[s->npending++] = (struct Pending){ .file = s->file, .part = s->nparts - 1 };
    outfile_init(&s->file);
    return 0;
  }
  return outfile_publish(&s->file, true) < 0 ? rename_fail(op, &s->file) : 0;
}

/* Whether the open part is due to close. */
static bool part_full(const FileSink *s, int64_t now) {
  switch (s->roll) {
  case ROLL_TUPLES: return s->part_tuples >= s->limit;
  case ROLL_BYTES: return s->part_bytes >= s->limit;
  case ROLL_SECONDS: return s->part_tuples > 0 && now - s->part_opened >= s->limit;
  default: return false;
  }
}

/* Reads `roll`: "tuples N", "bytes N" (N >= 1) or "seconds T" (T > 0), as sf-xform checks it.
 * 0 or rt_fail. */
static int parse_roll(OpInst *op, FileSink *s, const char *text) {
  double seconds;
  char end;
  if (!strncmp(text, "seconds ", 8) && sscanf(text, "seconds %lf%c", &seconds, &end) == 1 && seconds > 0 &&
      seconds <= 1e9) {
    s->roll = ROLL_SECONDS;
    s->limit = (int64_t)(seconds * 1e9);
    return 0;
  }
  bool tuples = !strncmp(text, "tuples ", 7), bytes = !strncmp(text, "bytes ", 6);
  const char *num = tuples ? text + 7 : bytes ? text + 6 : NULL;
  if (num && *num >= '0' && *num <= '9') {
    char *stop;
    errno = 0;
    long long n = strtoll(num, &stop, 10);
    if (!errno && !*stop && n >= 1) {
      s->roll = tuples ? ROLL_TUPLES : ROLL_BYTES;
      s->limit = n;
      return 0;
    }
  }
  return rt_fail(op, "parameter 'roll' must be 'tuples N', 'bytes N' (N >= 1) or 'seconds T' (T > 0), got '%s'", text);
}

static int setup(OpInst *op, FileSink *s) {
  s->path = rt_param(op, "file");
  if (!s->path || !*s->path) return rt_fail(op, "FileSink needs parameter 'file'");
  const char *format = rt_param(op, "format");
  if (format && strcmp(format, "csv")) return rt_fail(op, "unknown format '%s' (the only format is 'csv')", format);
  if (!op->in_schema) return rt_fail(op, "FileSink has no input schema");
  s->plain = op->in_schema->nattrs > 0;
  for (int i = 0; i < op->in_schema->nattrs; i++)
    if (op->in_schema->attrs[i].type == TYPE_STRING) s->plain = false;
  const char *roll = rt_param(op, "roll");
  if (roll && parse_roll(op, s, roll) < 0) return -1;
  const char *slash = strrchr(s->path, '/');
  const char *base = slash ? slash + 1 : s->path;
  if (!*base) return rt_fail(op, "cannot write '%s': it names a directory", s->path);
  struct stat st;
  if (s->roll && (!strcmp(s->path, "-") || (stat(s->path, &st) == 0 && !S_ISREG(st.st_mode)))) {
    return rt_fail(op, "parameter 'roll' writes parts beside a regular file, and '%s' is not one", s->path);
  } else if (!strcmp(s->path, "-")) {
    s->fd = STDOUT_FILENO;
    s->direct = s->std_out = true;
  } else if (stat(s->path, &st) == 0 && !S_ISREG(st.st_mode)) {
    /* a device or a pipe (/dev/null, /dev/stdout, a FIFO): written as it is, never replaced */
    s->direct = true;
    if (s->committed) return 0; /* everything went out already */
    if (open_direct(op, s) < 0) return -1;
  } else if (s->committed) {
    return 0; /* its files are the commit record's: recommit publishes them */
  } else {
    if (s->roll) return open_part(op, s);
    if (open_temp(op, s, s->path) < 0) return -1;
  }
  put_header(op, s);
  return 0;
}

static int filesink_open(OpInst *op) {
  FileSink *s = sf_xmalloc(sizeof *s);
  memset(s, 0, sizeof *s);
  s->fd = -1;
  outfile_init(&s->file);
  s->restoring = rt_options(op)->checkpoint_dir && rt_options(op)->restore;
  s->committed = rt_restore_committed(op);
  buf_init(&s->buf);
  op->state = s;
  if (setup(op, s) == 0) return 0;
  filesink_close(op, false); /* the executor closes only operators whose open succeeded */
  return -1;
}

static int filesink_process(OpInst *op, int port, Tuple *t) {
  FileSink *s = op->state;
  if (s->committed) { /* the output is final: what comes again is dropped */
    tuple_unref(t);
    return 0;
  }
  if (s->npending && publish_parts(op, s, false) < 0) {
    tuple_unref(t);
    return -1;
  }
  if (s->roll && s->file.state != OUTFILE_WRITING && open_part(op, s) < 0) {
    tuple_unref(t);
    return -1;
  }
  bool was_empty = s->sent == s->buf.n;
  size_t before = s->buf.n;
  csv_put_row(&s->buf, t->v, t->n);
  tuple_unref(t);
  if (s->roll) {
    int64_t now = coarse_ns();
    if (s->part_tuples++ == 0) s->part_opened = now; /* a part's time starts with its first row */
    s->part_bytes += (int64_t)(s->buf.n - before);
    if (part_full(s, now)) return close_part(op, s);
  }
  if (!s->direct) return s->buf.n >= FLUSH_AT ? flush(op, s) : 0;
  int64_t now = coarse_ns();
  if (was_empty) s->oldest = now;
  if (s->buf.n - s->sent >= STREAM_FLUSH_AT || now - s->oldest >= FLUSH_EVERY_NS) return flush(op, s);
  return 0;
}

/* A run: rows written one after the other; a sink that publishes parts, rolls or streams takes
 * them one by one (its checks are per row). */
static int filesink_process_run(OpInst *op, int port, Item *items, int n) {
  FileSink *s = op->state;
  if (s->committed || s->npending || s->roll || s->direct) {
    for (int i = 0; i < n; i++) {
      op->cur_seq = items[i].seq;
      op->cur_src = items[i].src;
      op->cur_born = items[i].born;
      if (filesink_process(op, port, items[i].t) < 0) {
        for (int j = i + 1; j < n; j++) tuple_unref(items[j].t);
        return -1;
      }
    }
    return 0;
  }
  int rc = 0;
  if (s->plain) { /* the rows up to FLUSH_AT bytes at a time, room reserved once for them */
    enum { ROWS = 256 };
    const Value *rows[ROWS];
    for (int base = 0; base < n && rc == 0; base += ROWS) {
      int m = n - base < ROWS ? n - base : ROWS;
      for (int r = 0; r < m; r++) rows[r] = items[base + r].t->v;
      for (int r = 0; r < m && rc == 0;) {
        r += csv_put_plain_rows(&s->buf, rows + r, m - r, op->in_schema->nattrs, FLUSH_AT);
        if (s->buf.n >= FLUSH_AT) rc = flush(op, s);
      }
    }
  } else {
    for (int i = 0; i < n && rc == 0; i++) {
      const Tuple *t = items[i].t;
      csv_put_row(&s->buf, t->v, t->n);
      if (s->buf.n >= FLUSH_AT) rc = flush(op, s);
    }
  }
  tuple_unref_items(items, n); /* the run's tuples die together: one release per slab */
  return rc;
}

/* The sink's thread is about to wait for input: a streaming output shows what it has. */
static void filesink_idle(OpInst *op) {
  FileSink *s = op->state;
  if (s && s->npending) publish_parts(op, s, false); /* a failure is the job's (rt_fail) */
  if (s && s->direct && s->fd >= 0) flush_ready(s);
  if (s && s->roll == ROLL_SECONDS && s->file.state == OUTFILE_WRITING && part_full(s, coarse_ns()))
    close_part(op, s); /* a failure is the job's (rt_fail) */
}

static int filesink_final(OpInst *op) {
  FileSink *s = op->state;
  if (rt_stopping(op)) return rt_fail(op, "the job stopped before the end of the input; '%s' is not written", s->path);
  if (s->committed) return 0;
  if (!s->direct) /* the file, or the last part, is renamed at the commit */
    return s->file.state == OUTFILE_WRITING ? finish_temp(op, s) : 0;
  if (flush(op, s) < 0) return -1;
  int fd = s->fd;
  s->fd = -1;
  if (!s->std_out && close(fd) < 0) return write_fail(op, s);
  return 0;
}

static int filesink_commit(OpInst *op) {
  FileSink *s = op->state;
  if (s->npending && publish_parts(op, s, true) < 0) return -1;
  if (s->file.state != OUTFILE_SYNCED) return 0; /* direct, or rolling: no part was open at the end */
  return outfile_publish(&s->file, true) < 0 ? rename_fail(op, &s->file) : 0;
}

static void filesink_close(OpInst *op, bool ok) {
  FileSink *s = op->state;
  if (!s) return;
  if (s->fd >= 0 && !s->std_out) close(s->fd);
  /* after a failure, a restore goes on writing the files a checkpoint names */
  outfile_release(&s->file, !ok);
  for (int i = 0; i < s->npending; i++) outfile_release(&s->pending[i].file, !ok);
  free(s->pending);
  buf_release(&s->buf);
  free(s);
  op->state = NULL;
}

/* ---- checkpoints ----
 * At a barrier the sink writes out what it buffered and syncs it; its snapshot is the temporary
 * file's length (and, rolling, which part it is and how full). A restored sink opens that file
 * again, cuts it back to that length and goes on appending: the rows after the checkpoint are
 * written again, once, and the file becomes visible only at the commit, as always. So a job's
 * temporary file outlives a failure while checkpoints are on (hidden, never looking complete).
 * The temporary files have fixed names then (.NAME.sf-part), so a restarted job finds them. Parts
 * rolled by tuples or bytes are closed at the same rows in every run, and committed in two phases:
 * a closed part waits (pending) until the next barrier pre-commits it and that checkpoint is
 * complete (rt_checkpoint_complete, looked at on every row and idle), then it is renamed; a restore
 * renames the parts its checkpoint pre-committed. Parts rolled by time are not repeatable, and
 * refuse checkpoints. A device, a pipe or standard output cannot take rows back: what was written after
 * the last checkpoint comes again after a restore (at-least-once), which the sink says at start.
 *
 * A snapshot names no path: every file a restore touches is derived from `file` (the target, its
 * parts' names and their fixed temporary names), and the snapshot only says which part numbers
 * and how many bytes; a snapshot that does not fit the sink (another `file`, parts that cannot
 * be, sizes the files do not have) is refused before any file is touched. Its layout (format 2):
 * u64 2, the `file` it was taken for (bytes), bool direct; then, for a regular file: u64 parts
 * opened, u64 pre-committed parts with u64 number and u64 size each (ascending, the last closed
 * ones), i64 tuples and i64 bytes of the open part, bool a file open, and its u64 length. */

enum { SNAP_FORMAT = 2 }; /* 1 (before): paths */

static int filesink_checkpointable(OpInst *op) {
  FileSink *s = op->state;
  if (s->roll == ROLL_SECONDS)
    return rt_fail(op, "parameter 'roll' = 'seconds' closes parts at times a restarted job cannot repeat: "
                       "with checkpoints, roll by 'tuples N' or 'bytes N'");
  if (s->direct)
    rt_warn(op, "'%s' is written as rows come and cannot take them back: after a restore, the rows since the "
                "last checkpoint are written again (at-least-once)", s->path);
  return 0;
}

static int by_part(const void *a, const void *b) {
  const struct Pending *x = a, *y = b;
  return (x->part > y->part) - (x->part < y->part);
}

static int filesink_snapshot(OpInst *op, Buf *out) {
  FileSink *s = op->state;
  snap_u64(out, SNAP_FORMAT);
  snap_bytes(out, s->path, strlen(s->path));
  snap_bool(out, s->direct);
  /* a committed sink (rt_restore_committed) has nothing open or pending, and no restore takes its
   * snapshot: its commit record stands until the job completes */
  if (s->direct) return 0; /* nothing to take back: only that the header went out */
  /* the closed parts not yet visible: pre-committed at this checkpoint if not already */
  uint64_t id = rt_checkpoint_taking(op);
  if (s->npending > 1) qsort(s->pending, (size_t)s->npending, sizeof *s->pending, by_part);
  snap_u64(out, (uint64_t)s->nparts);
  snap_u64(out, (uint64_t)s->npending);
  for (int i = 0; i < s->npending; i++) {
    OutFile *p = &s->pending[i].file;
    if (p->state == OUTFILE_SYNCED) outfile_precommit(p, id);
    snap_u64(out, (uint64_t)s->pending[i].part);
    snap_u64(out, (uint64_t)p->size);
  }
  snap_i64(out, s->part_tuples);
  snap_i64(out, s->part_bytes);
  bool open_file = s->file.state == OUTFILE_WRITING;
  snap_bool(out, open_file);
  if (!open_file) return 0;
  if (flush(op, s) < 0) return -1;
  uint64_t len;
  if (outfile_checkpoint(&s->file, &len) < 0) return write_fail(op, s);
  snap_u64(out, len);
  return 0;
}

/* What a restore reads from a snapshot, before it touches anything. */
typedef struct SinkSnap {
  bool direct;
  uint64_t nparts, npend;
  uint64_t *pend; /* npend pairs: number, size (malloc'd) */
  int64_t part_tuples, part_bytes;
  bool open_file;
  uint64_t len;
} SinkSnap;

/* Why snapshot t cannot be this sink's (NULL: it can). */
static const char *snap_misfit(const FileSink *s, const SinkSnap *t) {
  if (!s->roll) {
    if (t->nparts || t->npend || t->part_tuples || t->part_bytes) return "it has parts, and 'roll' is not set";
    if (!t->open_file) return "it has no file being written";
    return NULL;
  }
  if (t->nparts < 1 || t->nparts > INT_MAX) return "it has no part, or too many";
  uint64_t closed = t->nparts - (t->open_file ? 1 : 0); /* parts closed before it */
  if (t->npend > closed) return "it pre-committed parts that were never closed";
  for (uint64_t i = 0; i < t->npend; i++)
    if (t->pend[2 * i] != closed - t->npend + i) return "its pre-committed parts are not the last ones closed";
  if (t->part_tuples < 0 || t->part_bytes < 0) return "its open part has a negative size";
  if (t->open_file && t->len != (uint64_t)t->part_bytes) return "its open part's length is not its size";
  return NULL;
}

/* Reads snapshot in into t and checks it fits s. 0, or rt_fail (t->pend freed). */
static int sink_snap_read(OpInst *op, const FileSink *s, SnapIn *in, unsigned long long id, SinkSnap *t) {
  uint64_t format = snap_get_u64(in);
  if (!in->bad && format != SNAP_FORMAT)
    return rt_fail(op, "its snapshot in checkpoint %llu does not fit this sf-exec (not FileSink snapshot format %d)",
                   id, SNAP_FORMAT);
  size_t flen;
  const char *file = snap_get_bytes(in, &flen);
  t->direct = snap_get_bool(in);
  if (!t->direct) {
    t->nparts = snap_get_u64(in);
    t->npend = snap_get_u64(in);
    if (t->npend > (in->n - in->off) / 16) in->bad = true; /* more than the bytes left can hold */
    t->pend = sf_xmalloc(sizeof *t->pend * 2 * (size_t)(in->bad ? 1 : t->npend + 1));
    for (uint64_t i = 0; i < t->npend && !in->bad; i++) {
      t->pend[2 * i] = snap_get_u64(in);
      t->pend[2 * i + 1] = snap_get_u64(in);
    }
    t->part_tuples = snap_get_i64(in);
    t->part_bytes = snap_get_i64(in);
    t->open_file = snap_get_bool(in);
    if (t->open_file) t->len = snap_get_u64(in);
  }
  int rc = 0;
  const char *misfit;
  if (in->bad || !snap_done(in))
    rc = rt_fail(op, "its snapshot in checkpoint %llu does not fit this sf-exec (%s)", id,
                 in->bad ? "truncated" : "bytes left over");
  else if (flen != strlen(s->path) || memcmp(file, s->path, flen) != 0)
    rc = rt_fail(op, "its snapshot in checkpoint %llu was taken for another file than '%s'", id, s->path);
  else if (t->direct != s->direct)
    rc = rt_fail(op, "its snapshot in checkpoint %llu was taken while '%s' was %s", id, s->path,
                 t->direct ? "a device or pipe" : "a regular file");
  else if (!t->direct && (misfit = snap_misfit(s, t)))
    rc = rt_fail(op, "its snapshot in checkpoint %llu does not fit this sink (%s)", id, misfit);
  if (rc < 0) free(t->pend);
  return rc;
}

static int filesink_restore(OpInst *op, SnapIn *in) {
  FileSink *s = op->state;
  unsigned long long id = (unsigned long long)rt_checkpoint_taking(op);
  SinkSnap t = { 0 };
  if (sink_snap_read(op, s, in, id, &t) < 0) return -1;
  buf_reset(&s->buf); /* the header went out before the checkpoint, or is in the file */
  s->sent = 0;
  if (t.direct) return 0;
  /* made by open, empty: no checkpoint's file, and it must not pass for one */
  if (s->file.state == OUTFILE_WRITING && !s->file.existed) outfile_discard(&s->file);
  int rc = 0;
  /* the files, all named after `file`, checked before anything changes: the parts pre-committed
   * at this checkpoint or before (it is complete, so they become visible), then the open one */
  OutFile *parts = sf_xmalloc(sizeof *parts * (size_t)(t.npend + 1));
  uint64_t adopted = 0;
  for (; adopted < t.npend && rc == 0; adopted++) {
    OutFile *p = &parts[adopted];
    outfile_init(p);
    char *name = part_name(s, (int)t.pend[2 * adopted]);
    if (outfile_adopt(p, name) < 0)
      rc = rt_fail(op, "cannot restore checkpoint %llu: its part '%s': %s", id, name, outfile_why(p));
    else if ((uint64_t)p->size != t.pend[2 * adopted + 1])
      rc = rt_fail(op, "cannot restore checkpoint %llu: its part '%s' holds %lld bytes, the checkpoint says %llu", id,
                   p->state == OUTFILE_PUBLISHED ? name : p->tmp, (long long)p->size,
                   (unsigned long long)t.pend[2 * adopted + 1]);
    free(name);
  }
  char *name = !t.open_file ? NULL : s->roll ? part_name(s, (int)t.nparts - 1) : strdup(s->path);
  if (t.open_file && !name) sf_die("out of memory");
  /* the file open made is the checkpoint's when it was there already under the same name */
  bool same = name && s->file.state == OUTFILE_WRITING && s->file.existed && !strcmp(s->file.target, name);
  OutFile cp;
  outfile_init(&cp);
  OutFile *open_file = same ? &s->file : &cp;
  /* a later checkpoint, damaged now, may have made the part visible: it is taken back */
  if (rc == 0 && name && !same && outfile_reopen(&cp, name, s->roll) < 0)
    rc = rt_fail(op, "cannot restore checkpoint %llu: its file for '%s': %s", id, name, outfile_why(&cp));
  if (rc == 0 && name && (uint64_t)open_file->size < t.len)
    rc = rt_fail(op, "cannot restore checkpoint %llu: its file '%s' holds %lld bytes, the checkpoint needs %llu", id,
                 open_file->tmp, (long long)open_file->size, (unsigned long long)t.len);
  for (uint64_t i = 0; i < adopted && rc == 0; i++)
    if (parts[i].state == OUTFILE_PRECOMMITTED && outfile_publish(&parts[i], false) < 0)
      rc = rt_fail(op, "cannot restore checkpoint %llu: cannot rename '%s' to '%s': %s", id, parts[i].tmp,
                   parts[i].target, strerror(errno));
  if (rc == 0 && adopted) outfile_sync_dir(&parts[0]);
  for (uint64_t i = 0; i < adopted; i++) outfile_release(&parts[i], true);
  free(parts);
  free(t.pend);
  free(name);
  if (rc < 0) {
    outfile_release(&cp, true);
    return rc;
  }
  /* what open made goes, unless it is the checkpoint's file (the names are fixed with checkpoints);
   * a pre-committed part's was renamed just now */
  if (!same && s->file.state == OUTFILE_WRITING) outfile_discard(&s->file);
  if (!same) {
    outfile_release(&s->file, false);
    s->file = cp;
  }
  s->nparts = (int)t.nparts;
  if (s->roll) {
    s->part_tuples = t.part_tuples;
    s->part_bytes = t.part_bytes;
  }
  if (t.open_file && outfile_resume(&s->file, t.len) < 0) return write_fail(op, s);
  return 0;
}

/* The commit record: whether the output is written in place, and how many parts there are (all of
 * them synced now, the visible ones and those the commit renames). */
static int filesink_commit_record(OpInst *op, Buf *out) {
  FileSink *s = op->state;
  snap_bool(out, s->direct);
  snap_u64(out, (uint64_t)s->nparts);
  return 0;
}

/* Finishes a commit a killed run had decided: what it had not renamed yet is renamed now, by the
 * names the graph gives (the file, or parts 0 to N-1: the record holds only the count). */
static int filesink_recommit(OpInst *op, SnapIn *in) {
  FileSink *s = op->state;
  bool direct = snap_get_bool(in);
  uint64_t nparts = snap_get_u64(in);
  if (in->bad) return 0; /* the executor reports the malformed record */
  if (direct != s->direct)
    return rt_fail(op, "cannot finish the commit: it was decided while '%s' was %s", s->path,
                   direct ? "a device or pipe" : "a regular file");
  if (direct) return 0;
  if (!s->roll ? nparts != 0 : nparts == 0 || nparts > INT_MAX)
    return rt_fail(op, "cannot finish the commit: its record names %llu parts of '%s'", (unsigned long long)nparts,
                   s->path);
  for (uint64_t k = 0; k < (s->roll ? nparts : 1); k++) {
    char *name = s->roll ? part_name(s, (int)k) : NULL;
    OutFile f;
    outfile_init(&f);
    int rc = 0;
    if (outfile_republish(&f, name ? name : s->path) < 0)
      rc = f.state == OUTFILE_PRECOMMITTED
             ? rt_fail(op, "cannot finish the commit: cannot rename '%s' to '%s': %s", f.tmp, f.target, strerror(errno))
             : rt_fail(op, "cannot finish the commit: its file for '%s': %s", f.target, outfile_why(&f));
    outfile_release(&f, rc < 0);
    free(name);
    if (rc < 0) return -1;
  }
  s->nparts = (int)nparts;
  return 0;
}

const OpKindImpl op_filesink = {
  .kind = KIND_FILESINK,
  .open = filesink_open,
  .process = filesink_process,
  .process_run = filesink_process_run,
  .idle = filesink_idle,
  .final = filesink_final,
  .commit = filesink_commit,
  .close = filesink_close,
  .checkpointable = filesink_checkpointable,
  .snapshot = filesink_snapshot,
  .restore = filesink_restore,
  .commit_record = filesink_commit_record,
  .recommit = filesink_recommit,
};
