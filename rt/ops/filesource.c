/* filesource.c: the FileSource kind, a source reading a CSV file through rows.h (the header, the
 * rows, their errors and limits, `onerror`, `maxrow`, `maxfields`, `follow`, `columns`). The file's path is the `file` parameter, relative to
 * the working directory; `-` is standard input, used as it is (its flags are the shell's, so it
 * stays blocking; it is read only once poll says it has something) and never closed. Anything else
 * is opened non-blocking, so a FIFO without a writer yet does not hold up the open. The header is
 * read in open, so its errors come before any tuple flows. A FIFO or a pipe ends when its writer
 * closes it, with or without `follow`. A followed file is watched at its path (rows.h: truncated,
 * it is read again from its start; replaced, the new file is read after the old one's end), so
 * the descriptor is the reader's (rr.fd) once it runs. */
#include "rows.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct FileSource {
  const char *path; /* as given in `file`, or "<stdin>" */
  int fd;           /* the open file (-1: none) */
  bool std_in;      /* `file` is `-`: fd is standard input, never closed */
  bool reading;     /* rr is initialized */
  RowReader rr;     /* its rows */
} FileSource;

static void filesource_close(OpInst *op, bool ok);

static int setup(OpInst *op, FileSource *fs) {
  fs->path = rt_param(op, "file");
  if (!fs->path || !*fs->path) return rt_fail(op, "FileSource needs parameter 'file'");
  const char *format = rt_param(op, "format");
  if (format && strcmp(format, "csv")) return rt_fail(op, "unknown format '%s' (the only format is 'csv')", format);
  if (!op->out_schema) return rt_fail(op, "FileSource has no output schema");
  const char *follow = rt_param(op, "follow");
  if (follow && strcmp(follow, "yes") && strcmp(follow, "no"))
    return rt_fail(op, "parameter 'follow' must be 'yes' or 'no', got '%s'", follow);
  const char *columns = rt_param(op, "columns");
  if (columns && strcmp(columns, "exact") && strcmp(columns, "subset"))
    return rt_fail(op, "parameter 'columns' must be 'exact' or 'subset', got '%s'", columns);
  bool skip;
  uint64_t max_row;
  int max_fields;
  if (rows_onerror(op, &skip) < 0 || rows_limits(op, &max_row, &max_fields) < 0) return -1;
  /* non-blocking: opening a FIFO does not wait for its writer (the reader does) */
  fs->std_in = !strcmp(fs->path, "-");
  fs->fd = fs->std_in ? STDIN_FILENO : open(fs->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fs->fd < 0) return rt_fail(op, "cannot open '%s': %s", fs->path, strerror(errno));
  if (fs->std_in) fs->path = "<stdin>"; /* how messages name it */
  struct stat st;
  rows_init(&fs->rr, op, fs->fd, fs->path, fstat(fs->fd, &st) == 0 && S_ISREG(st.st_mode));
  fs->reading = true;
  fs->rr.follow = follow && !strcmp(follow, "yes");
  fs->rr.path = fs->std_in ? NULL : fs->path; /* tail -F: a new file at the path is read next */
  fs->rr.skip = skip;
  fs->rr.subset = columns && !strcmp(columns, "subset");
  fs->rr.r.max_row = max_row;
  fs->rr.r.max_fields = max_fields;
  return rows_start(&fs->rr);
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

static int filesource_run(OpInst *op) {
  FileSource *fs = op->state;
  return rows_run(&fs->rr);
}

static int filesource_process(OpInst *op, int port, Tuple *t) {
  tuple_unref(t);
  return rt_fail(op, "a FileSource has no input");
}

static int filesource_final(OpInst *op) {
  return 0;
}

/* Checkpoints: the position of the row about to be emitted (rows_snapshot); a restore seeks the
 * file there, a followed file too (one truncated or replaced since is read from its start). Standard input and FIFOs cannot be read again: taking their
 * checkpoints is warned about at the start, and restoring one fails. */
static int filesource_checkpointable(OpInst *op) {
  FileSource *fs = op->state;
  if (fs->std_in)
    rt_warn(op, "reads standard input, which cannot be read again: a job restored from a checkpoint will fail");
  else if (!fs->rr.regular)
    rt_warn(op, "'%s' is not a regular file and cannot be read again: a job restored from a checkpoint will fail",
            fs->path);
  return 0;
}

static int filesource_snapshot(OpInst *op, Buf *out) {
  FileSource *fs = op->state;
  rows_snapshot(&fs->rr, out);
  return 0;
}

static int filesource_restore(OpInst *op, SnapIn *in) {
  FileSource *fs = op->state;
  if (fs->std_in)
    return rt_fail(op, "cannot restore a checkpoint of standard input: it cannot seek back to where the "
                       "checkpoint was taken (read a file instead of '-')");
  return rows_restore(&fs->rr, in);
}

static void filesource_close(OpInst *op, bool ok) {
  FileSource *fs = op->state;
  if (!fs) return;
  if (fs->reading) fs->fd = fs->rr.fd; /* follow may have replaced it */
  if (fs->reading) rows_release(&fs->rr);
  if (fs->fd >= 0 && !fs->std_in) close(fs->fd);
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
  .snapshot = filesource_snapshot,
  .restore = filesource_restore,
  .checkpointable = filesource_checkpointable,
};
