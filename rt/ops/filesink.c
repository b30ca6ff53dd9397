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
  OutFile *pending;
  int npending, cap_pending;
  bool restoring;   /* --restore: the first temporary file may be the checkpoint's (OUTFILE_REUSE) */
  /* a device, a pipe or standard output: written in place */
  bool direct;      /* the target is one: no temporary file */
  bool std_out;     /* `file` is `-`: fd is standard output, blocking, never closed */
  int fd;           /* direct: the output (-1: closed) */
  Buf buf;          /* rows not yet written, from byte `sent` on */
  size_t sent;      /* bytes at the start of buf already written (an idle flush wrote part) */
  int64_t oldest;   /* streaming: when the oldest unwritten row was added (coarse monotonic ns) */
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
  return rt_fail(op, "cannot create a temporary file in '%s' for '%s': %s", s->file.dir, name, strerror(errno));
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
  return s->pending[i].state == OUTFILE_PRECOMMITTED ? s->pending[i].ckpt <= done : all;
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
    if (outfile_publish(&s->pending[i], i == last) < 0) return rename_fail(op, &s->pending[i]);
    outfile_release(&s->pending[i], false);
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
    s->pending[s->npending++] = s->file; /* the pending list owns it now */
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
    if (open_direct(op, s) < 0) return -1;
    s->direct = true;
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
  buf_init(&s->buf);
  op->state = s;
  if (setup(op, s) == 0) return 0;
  filesink_close(op, false); /* the executor closes only operators whose open succeeded */
  return -1;
}

static int filesink_process(OpInst *op, int port, Tuple *t) {
  FileSink *s = op->state;
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
  for (int i = 0; i < s->npending; i++) outfile_release(&s->pending[i], !ok);
  free(s->pending);
  buf_release(&s->buf);
  free(s);
  op->state = NULL;
}

/* ---- checkpoints ----
 * At a barrier the sink writes out what it buffered and syncs it; its snapshot is the temporary
 * file's name and length (and, rolling, which part it is and how full). A restored sink opens that
 * file again, cuts it back to that length and goes on appending: the rows after the checkpoint are
 * written again, once, and the file becomes visible only at the commit, as always. So a job's
 * temporary file outlives a failure while checkpoints are on (hidden, never looking complete).
 * The temporary files have fixed names then (.NAME.sf-part), so a restarted job finds them. Parts
 * rolled by tuples or bytes are closed at the same rows in every run, and committed in two phases:
 * a closed part waits (pending) until the next barrier pre-commits it and that checkpoint is
 * complete (rt_checkpoint_complete, looked at on every row and idle), then it is renamed; a restore
 * renames the parts its checkpoint pre-committed. Parts rolled by time are not repeatable, and
 * refuse checkpoints. A device, a pipe or standard output cannot take rows back: what was written after
 * the last checkpoint comes again after a restore (at-least-once), which the sink says at start. */

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

static int filesink_snapshot(OpInst *op, Buf *out) {
  FileSink *s = op->state;
  if (s->direct) { /* nothing to take back: only that the header went out */
    snap_bool(out, true);
    return 0;
  }
  snap_bool(out, false);
  /* the closed parts not yet visible: pre-committed at this checkpoint if not already */
  uint64_t id = rt_checkpoint_taking(op);
  snap_u64(out, (uint64_t)s->npending);
  for (int i = 0; i < s->npending; i++) {
    OutFile *p = &s->pending[i];
    if (p->state == OUTFILE_SYNCED) outfile_precommit(p, id);
    snap_bytes(out, p->tmp, strlen(p->tmp));
    snap_bytes(out, p->target, strlen(p->target));
  }
  snap_u64(out, (uint64_t)s->nparts);
  snap_i64(out, s->part_tuples);
  snap_i64(out, s->part_bytes);
  bool open_file = s->file.state == OUTFILE_WRITING;
  snap_bool(out, open_file);
  if (!open_file) return 0;
  if (flush(op, s) < 0) return -1;
  uint64_t len;
  if (outfile_checkpoint(&s->file, &len) < 0) return write_fail(op, s);
  snap_bytes(out, s->file.tmp, strlen(s->file.tmp));
  snap_u64(out, len);
  return 0;
}

static int filesink_restore(OpInst *op, SnapIn *in) {
  FileSink *s = op->state;
  bool direct = snap_get_bool(in);
  if (direct != s->direct)
    return rt_fail(op, "the checkpoint was taken while '%s' was %s", s->path,
                   direct ? "a device or pipe" : "a regular file");
  if (direct) {
    buf_reset(&s->buf); /* the header went out before the checkpoint */
    s->sent = 0;
    return 0;
  }
  /* made here, empty: no checkpoint's file, and it must not pass for one */
  if (s->file.state == OUTFILE_WRITING && !s->file.existed) outfile_discard(&s->file);
  /* parts pre-committed at this checkpoint or before: it is complete, so they become visible */
  uint64_t npend = snap_get_u64(in);
  for (uint64_t i = 0; i < npend && !in->bad; i++) {
    size_t tn, pn;
    const char *t = snap_get_bytes(in, &tn), *pt = snap_get_bytes(in, &pn);
    if (in->bad) break;
    char *tmp = strndup(t, tn), *part = strndup(pt, pn);
    if (!tmp || !part) sf_die("out of memory");
    OutFile p;
    outfile_init(&p);
    outfile_adopt(&p, part, tmp);
    int rc = 0;
    if (outfile_publish(&p, false) < 0)
      rc = rt_fail(op, "cannot restore: cannot rename '%s' to '%s': %s", tmp, part, strerror(errno));
    outfile_release(&p, true);
    free(tmp);
    free(part);
    if (rc < 0) return -1;
  }
  uint64_t nparts = snap_get_u64(in);
  int64_t part_tuples = snap_get_i64(in), part_bytes = snap_get_i64(in);
  bool open_file = snap_get_bool(in);
  size_t n = 0;
  const char *tmp = open_file ? snap_get_bytes(in, &n) : NULL;
  uint64_t len = open_file ? snap_get_u64(in) : 0;
  if (in->bad) return 0; /* the executor reports the truncated snapshot */
  char *stored = open_file ? strndup(tmp, n) : NULL;
  if (open_file && !stored) sf_die("out of memory");
  /* what open made goes, unless it is the checkpoint's file (the names are fixed with checkpoints) */
  bool same = open_file && s->file.state == OUTFILE_WRITING && !strcmp(s->file.tmp, stored);
  if (s->file.state == OUTFILE_WRITING && !same) outfile_discard(&s->file);
  buf_reset(&s->buf);
  s->sent = 0;
  s->nparts = (int)nparts;
  if (s->roll) {
    s->part_tuples = part_tuples;
    s->part_bytes = part_bytes;
  }
  if (!open_file) return 0;
  int rc = 0;
  if (!same) { /* the open part's name; its file is the checkpoint's */
    char *name = s->roll ? part_name(s, s->nparts - 1) : NULL;
    /* a later checkpoint, damaged now, may have made the part visible: it is written again */
    if (outfile_reopen(&s->file, name ? name : s->path, stored, s->roll) < 0)
      rc = rt_fail(op, "cannot restore: its file '%s' from the checkpoint: %s", stored, strerror(errno));
    free(name);
  }
  if (rc == 0 && (uint64_t)s->file.size < len)
    rc = rt_fail(op, "cannot restore: its file '%s' holds %lld bytes, the checkpoint needs %llu", stored,
                 (long long)s->file.size, (unsigned long long)len);
  if (rc == 0 && outfile_resume(&s->file, len) < 0) rc = write_fail(op, s);
  free(stored);
  return rc;
}

const OpKindImpl op_filesink = {
  .kind = KIND_FILESINK,
  .open = filesink_open,
  .process = filesink_process,
  .idle = filesink_idle,
  .final = filesink_final,
  .commit = filesink_commit,
  .close = filesink_close,
  .checkpointable = filesink_checkpointable,
  .snapshot = filesink_snapshot,
  .restore = filesink_restore,
};
