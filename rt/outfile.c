/* outfile.c: a file written under a temporary name and published by rename (outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"
#include "sf.h"

const char *outfile_state_name(OutFileState s) {
  switch (s) {
  case OUTFILE_CLOSED: return "closed";
  case OUTFILE_WRITING: return "writing";
  case OUTFILE_SYNCED: return "synced";
  case OUTFILE_PRECOMMITTED: return "pre-committed";
  case OUTFILE_PUBLISHED: return "published";
  case OUTFILE_DISCARDED: return "discarded";
  case OUTFILE_LEFT: return "left";
  }
  return "?";
}

/* The states a transition may start from, as a bit set. */
#define FROM(s) (1u << (s))
#define FROM_START (FROM(OUTFILE_CLOSED) | FROM(OUTFILE_PUBLISHED) | FROM(OUTFILE_DISCARDED) | FROM(OUTFILE_LEFT))
#define FROM_TEMP (FROM(OUTFILE_WRITING) | FROM(OUTFILE_SYNCED) | FROM(OUTFILE_PRECOMMITTED))

static void expect(const OutFile *f, const char *what, unsigned from) {
  if (!(from & FROM(f->state)))
    sf_die("%s: the output file '%s' is %s", what, f->target ? f->target : "(none)", outfile_state_name(f->state));
}

/* The one place a temporary file (f->tmp) becomes this process's: made or found by this open. */
static void temp_begin(OutFile *f, OutFileState state) {
  f->state = state;
  if (state == OUTFILE_WRITING && !f->existed) f->slot = tempfile_track(f->tmp); /* made by this run */
}

/* A checkpoint names the file from now on: a process that dies leaves it for a restore. */
static void temp_named(OutFile *f) {
  f->named = true;
  tempfile_untrack(f->slot);
  f->slot = -1;
}

/* The one place it stops being this process's temporary file: renamed to its target (PUBLISHED),
 * unlinked (DISCARDED) or left for a restore (LEFT). Closes it if open. */
static void temp_end(OutFile *f, OutFileState state) {
  tempfile_untrack(f->slot);
  f->slot = -1;
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
  if (state == OUTFILE_DISCARDED) unlink(f->tmp);
  f->state = state;
}

/* The process's umask, read without changing it (umask(2) would race with other threads). */
static mode_t current_umask(void) {
  FILE *p = fopen("/proc/self/status", "r");
  mode_t mask = 022;
  if (!p) return mask;
  char line[256];
  while (fgets(line, sizeof line, p)) {
    unsigned m;
    if (sscanf(line, "Umask: %o", &m) == 1) {
      mask = (mode_t)m;
      break;
    }
  }
  fclose(p);
  return mask;
}

void outfile_init(OutFile *f) {
  memset(f, 0, sizeof *f);
  f->fd = -1;
  f->slot = -1;
}

/* Forgets the previous file's names and takes target's (and its directory's). */
static void set_target(OutFile *f, const char *target) {
  free(f->target);
  free(f->dir);
  free(f->tmp);
  free(f->why);
  f->tmp = f->why = NULL;
  f->target = strdup(target);
  const char *slash = strrchr(target, '/');
  size_t dirlen = slash ? (size_t)(slash - target) : 0;
  f->dir = slash ? strndup(target, dirlen ? dirlen : 1) : strdup(".");
  if (!f->target || !f->dir) sf_die("out of memory");
  f->fd = -1;
  f->existed = f->empty_first = f->named = false;
  f->ckpt = 0;
  f->size = 0;
}

/* The fixed temporary name of f->target: DIR/.BASE.sf-part (or the unique one's template). */
static void name_temp(OutFile *f, bool unique) {
  const char *slash = strrchr(f->target, '/');
  const char *base = slash ? slash + 1 : f->target;
  if (asprintf(&f->tmp, unique ? "%s/.%s.tmp.XXXXXX" : "%s/.%s.sf-part", f->dir, base) < 0) sf_die("out of memory");
}

/* -1 with f->why saying what is wrong with f->tmp (errno 0). */
static int refuse(OutFile *f, const char *what) {
  free(f->why);
  if (asprintf(&f->why, "'%s' %s", f->tmp, what) < 0) sf_die("out of memory");
  errno = 0;
  return -1;
}

/* Opens the file at f->tmp that is there already (flags: O_RDONLY or O_WRONLY): never through a
 * symbolic link, never blocking (a FIFO), and only a regular file with no other link, so that
 * nothing planted at the name is written through. Its size in f->size. The descriptor, or -1 (ENOENT
 * when nothing is there; errno 0 with f->why when something else is). */
static int open_existing(OutFile *f, int flags) {
  int fd = open(f->tmp, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ELOOP) return refuse(f, "is a symbolic link");
  if (fd < 0 && errno == ENXIO) return refuse(f, "is not a regular file"); /* a FIFO without a reader */
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) < 0 || fcntl(fd, F_SETFL, flags) < 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
    close(fd);
    return refuse(f, S_ISREG(st.st_mode) ? "has another link" : "is not a regular file");
  }
  f->size = (int64_t)st.st_size;
  return fd;
}

/* A failed open: CLOSED, nothing held but the names, errno kept. */
static int open_failed(OutFile *f, int fd) {
  int e = errno;
  if (fd >= 0) close(fd);
  free(f->tmp);
  f->tmp = NULL;
  f->existed = false;
  f->state = OUTFILE_CLOSED;
  errno = e;
  return -1;
}

int outfile_open(OutFile *f, const char *target, OutFileHow how) {
  expect(f, "outfile_open", FROM_START);
  set_target(f, target);
  name_temp(f, how == OUTFILE_UNIQUE);
  int fd;
  if (how == OUTFILE_UNIQUE) {
    fd = mkostemp(f->tmp, O_CLOEXEC);
  } else { /* the fixed name: what is there is taken only if it is a file of its own */
    fd = open_existing(f, O_WRONLY);
    f->existed = fd >= 0;
    if (fd < 0 && errno == ENOENT) fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 && f->existed && how == OUTFILE_FIXED && ftruncate(fd, 0) < 0) return open_failed(f, fd);
    if (how == OUTFILE_FIXED) f->existed = false, f->size = 0;
  }
  if (fd < 0) return open_failed(f, fd);
  f->fd = fd;
  f->empty_first = f->named = f->existed; /* it may be a checkpoint's: a failure leaves it */
  temp_begin(f, OUTFILE_WRITING);
  return fchmod(f->fd, 0666 & ~current_umask());
}

int outfile_reopen(OutFile *f, const char *target, bool take_back) {
  expect(f, "outfile_reopen", FROM_START);
  set_target(f, target);
  name_temp(f, false);
  int fd = open_existing(f, O_WRONLY);
  struct stat st;
  if (fd < 0 && errno == ENOENT && take_back && lstat(f->target, &st) == 0 && S_ISREG(st.st_mode) &&
      rename(f->target, f->tmp) == 0)
    fd = open_existing(f, O_WRONLY);
  if (fd < 0) return open_failed(f, fd);
  f->fd = fd;
  f->existed = f->named = true; /* a failure leaves it: it is the checkpoint's */
  temp_begin(f, OUTFILE_WRITING);
  return 0;
}

/* An existing file opened to be reused goes empty before anything is written to it. */
static int empty_first(OutFile *f) {
  if (!f->empty_first) return 0;
  f->empty_first = f->named = false; /* this run's file now */
  if (f->slot < 0) f->slot = tempfile_track(f->tmp);
  return ftruncate(f->fd, 0);
}

int outfile_write(OutFile *f, const void *p, size_t n) {
  expect(f, "outfile_write", FROM(OUTFILE_WRITING));
  if (empty_first(f) < 0) return -1;
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(f->fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

int outfile_checkpoint(OutFile *f, uint64_t *len) {
  expect(f, "outfile_checkpoint", FROM(OUTFILE_WRITING));
  if (empty_first(f) < 0) return -1;
  off_t at = lseek(f->fd, 0, SEEK_CUR);
  if (at < 0 || fdatasync(f->fd) < 0) return -1;
  *len = (uint64_t)at;
  temp_named(f);
  return 0;
}

int outfile_resume(OutFile *f, uint64_t len) {
  expect(f, "outfile_resume", FROM(OUTFILE_WRITING));
  if (!f->existed) sf_die("outfile_resume: the output file '%s' was made by this run", f->target);
  f->empty_first = false;
  temp_named(f);
  if (ftruncate(f->fd, (off_t)len) < 0 || lseek(f->fd, (off_t)len, SEEK_SET) < 0) return -1;
  return 0;
}

int outfile_sync(OutFile *f) {
  expect(f, "outfile_sync", FROM(OUTFILE_WRITING));
  off_t len = empty_first(f) < 0 ? -1 : lseek(f->fd, 0, SEEK_CUR);
  if (len < 0 || fsync(f->fd) < 0) return -1;
  f->size = (int64_t)len;
  int fd = f->fd;
  f->fd = -1; /* closed even when close fails: what it reports stays unknown */
  if (close(fd) < 0) return -1;
  f->state = OUTFILE_SYNCED;
  return 0;
}

void outfile_precommit(OutFile *f, uint64_t ckpt) {
  expect(f, "outfile_precommit", FROM(OUTFILE_SYNCED));
  sf_assert(ckpt > 0);
  f->ckpt = ckpt;
  f->state = OUTFILE_PRECOMMITTED;
  tempfile_untrack(f->slot); /* a restore of that checkpoint publishes it */
  f->slot = -1;
}

int outfile_adopt(OutFile *f, const char *target) {
  expect(f, "outfile_adopt", FROM_START);
  set_target(f, target);
  name_temp(f, false);
  int fd = open_existing(f, O_RDONLY);
  if (fd >= 0) {
    close(fd);
    temp_begin(f, OUTFILE_PRECOMMITTED);
    return 0;
  }
  struct stat st;
  int rc = -1;
  if (errno == ENOENT && lstat(f->target, &st) == 0) { /* a run before a restart renamed it */
    if (S_ISREG(st.st_mode)) {
      f->size = (int64_t)st.st_size;
      f->state = OUTFILE_PUBLISHED;
      return 0;
    }
    rc = refuse(f, "is gone, and its target is not a regular file");
  }
  int e = errno;
  f->state = OUTFILE_CLOSED;
  errno = e;
  return rc;
}

int outfile_republish(OutFile *f, const char *target) {
  expect(f, "outfile_republish", FROM_START);
  if (outfile_adopt(f, target) < 0) return -1;
  if (f->state == OUTFILE_PRECOMMITTED) return outfile_publish(f, true);
  outfile_sync_dir(f); /* renamed by the run that wrote the record, which may have died before its sync */
  return 0;
}

void outfile_sync_dir(const OutFile *f) {
  int dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
}

int outfile_publish(OutFile *f, bool sync_dir) {
  expect(f, "outfile_publish", FROM(OUTFILE_SYNCED) | FROM(OUTFILE_PRECOMMITTED));
  if (rename(f->tmp, f->target) < 0) return -1;
  temp_end(f, OUTFILE_PUBLISHED);
  if (sync_dir) outfile_sync_dir(f);
  return 0;
}

void outfile_discard(OutFile *f) {
  expect(f, "outfile_discard", FROM_TEMP);
  temp_end(f, OUTFILE_DISCARDED);
}

void outfile_release(OutFile *f, bool failed) {
  if (FROM(f->state) & FROM_TEMP)
    temp_end(f, failed && (f->named || f->state == OUTFILE_PRECOMMITTED) ? OUTFILE_LEFT : OUTFILE_DISCARDED);
  free(f->target);
  free(f->dir);
  free(f->tmp);
  free(f->why);
  f->target = f->dir = f->tmp = f->why = NULL;
}

const char *outfile_why(const OutFile *f) {
  return f->why ? f->why : strerror(errno);
}
