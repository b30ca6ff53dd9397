/* outfile.h: a file written under a temporary name beside its target and made visible by one
 * rename, so that nobody ever sees it half-written: the life of a FileSink's output or of one of
 * its rolled parts, with no knowledge of rows or operators.
 *
 *            outfile_open,           outfile_sync           outfile_precommit
 *   CLOSED --outfile_reopen--> WRITING -----------> SYNCED -------------------> PRECOMMITTED
 *                               | outfile_write,       |                             |
 *                               | outfile_checkpoint,  | outfile_publish             | outfile_publish
 *                               | outfile_resume       v                             v
 *                               |                   PUBLISHED <----------------------+
 *                               +-- outfile_discard (from WRITING, SYNCED, PRECOMMITTED) -> DISCARDED
 *                               +-- outfile_release after a failure when a checkpoint names the file
 *                                   (from WRITING, SYNCED, PRECOMMITTED) -> LEFT (for a restore)
 *   CLOSED --outfile_adopt--> PRECOMMITTED (a part an earlier run's checkpoint pre-committed), or
 *                             PUBLISHED (that run renamed it already)
 *   CLOSED --outfile_republish--> PUBLISHED (a file a commit record says is to be published)
 *
 * PUBLISHED, DISCARDED and LEFT are final: the next outfile_open (of the next part) starts again.
 * Every transition asserts its legal from-states (sf_die: a caller's bug, never bad input); a
 * failure of the file system returns -1 with errno and leaves the state as it was.
 *
 * The temporary file of target `DIR/BASE` is `DIR/.BASE.tmp.XXXXXX` (a unique name, mkostemp) or,
 * with checkpoints, the fixed name `DIR/.BASE.sf-part`, so that a restarted job finds it: every
 * path is derived from the target, never given. What is at a fixed name already is opened without
 * following a symbolic link or blocking (a FIFO), and taken only when it is a regular file with no
 * other link, so that nothing planted there is written through; otherwise the call fails with
 * errno 0 and f->why saying what is there (outfile_why gives either).
 *
 * A temporary file becomes this process's in exactly one place (temp_begin in outfile.c) and stops
 * being its temporary file in exactly one place (temp_end: published, discarded or left). While it
 * is this run's and no checkpoint names it, tempfiles.c tracks it, so that a process that dies
 * without closing it (a crash, exit() in an operator: fatal.c) removes it too. */
#ifndef SF_OUTFILE_H
#define SF_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum OutFileState {
  OUTFILE_CLOSED,       /* no file yet: before outfile_open, or after one that failed */
  OUTFILE_WRITING,      /* the temporary file is open for writing */
  OUTFILE_SYNCED,       /* written, fsynced and closed: ready to publish */
  OUTFILE_PRECOMMITTED, /* synced, and checkpoint `ckpt` includes it: published once that is complete */
  OUTFILE_PUBLISHED,    /* renamed to its target: no longer temporary (final) */
  OUTFILE_DISCARDED,    /* closed and unlinked (final) */
  OUTFILE_LEFT,         /* closed and left on disk after a failure: a checkpoint names it (final) */
} OutFileState;

typedef enum OutFileHow {
  OUTFILE_UNIQUE, /* a new file with a unique name (no checkpoints) */
  OUTFILE_FIXED,  /* the fixed name: created, or emptied when it is there */
  OUTFILE_REUSE,  /* the fixed name, opened as it is when it is there (`existed`), for a restore to
                     go on with (outfile_resume; until the first write empties it, a failure
                     leaves it: it may be a checkpoint's). Created when it is not there */
} OutFileHow;

typedef struct OutFile {
  OutFileState state; /* see above */
  char *target;       /* what the file becomes (owned; NULL before the first open) */
  char *dir;          /* the target's directory, "." when it names none (owned) */
  char *tmp;          /* the temporary file (owned; NULL when none) */
  int fd;             /* WRITING: the temporary file (-1: none) */
  bool existed;       /* opened with OUTFILE_REUSE or outfile_reopen: the file was there already */
  bool empty_first;   /* the existing file is emptied at the next write (OUTFILE_REUSE) */
  bool named;         /* a checkpoint names the file (outfile_checkpoint): a failure leaves it */
  uint64_t ckpt;      /* PRECOMMITTED: the checkpoint that includes it */
  int64_t size;       /* an existing file opened or adopted: the size it had; SYNCED: its length */
  char *why;          /* the last failure, when it was not the system's (errno 0; owned) */
  int slot;           /* its tempfile_track slot (rt.h) while a crash must remove it: made by
                         this run and named by no checkpoint (-1: none) */
} OutFile;

/* f in state CLOSED. */
void outfile_init(OutFile *f);
/* CLOSED or final -> WRITING: the temporary file for target, with the permissions a new file gets
 * under the process's umask. 0, or -1 with errno: CLOSED when it could not be made (f->dir names
 * the directory), WRITING when it was but its permissions could not be set. */
int outfile_open(OutFile *f, const char *target, OutFileHow how);
/* CLOSED or final -> WRITING: the fixed-name temporary file of target that a checkpoint names,
 * which must be there; when it is not but the target is (a regular file) and take_back, the
 * target is renamed back first (a later checkpoint had it published). Its size in f->size; a
 * failure leaves it (named). 0, or -1 (then CLOSED; outfile_why says why). */
int outfile_reopen(OutFile *f, const char *target, bool take_back);
/* WRITING: appends the n bytes at p (all of them, else -1 with errno). */
int outfile_write(OutFile *f, const void *p, size_t n);
/* WRITING: a checkpoint names the file as it is: synced (fdatasync), its length in *len; from now
 * on a failure of the job leaves it for a restore. 0 or -1 with errno. */
int outfile_checkpoint(OutFile *f, uint64_t *len);
/* WRITING, with an existing file (existed; its size in f->size) of at least len bytes: a restore goes on writing it
 * from byte len (cut there); a checkpoint names it. 0 or -1 with errno. */
int outfile_resume(OutFile *f, uint64_t len);
/* WRITING -> SYNCED: fsynced and closed, its length in f->size. 0, or -1 with errno (still
 * WRITING). */
int outfile_sync(OutFile *f);
/* SYNCED -> PRECOMMITTED: checkpoint ckpt (> 0) includes the file. */
void outfile_precommit(OutFile *f, uint64_t ckpt);
/* CLOSED or final -> PRECOMMITTED: the fixed-name temporary file of target that the checkpoint
 * being restored pre-committed, as an earlier run left it (its size in f->size); or PUBLISHED
 * when it is gone and the target is there, a regular file (an earlier run renamed it; its size in
 * f->size). 0, or -1 (then CLOSED; outfile_why says why). */
int outfile_adopt(OutFile *f, const char *target);
/* SYNCED or PRECOMMITTED -> PUBLISHED: renamed to its target; with sync_dir the directory is
 * fsynced (a caller publishing several syncs once: outfile_sync_dir). 0, or -1 with errno (the
 * state unchanged). */
int outfile_publish(OutFile *f, bool sync_dir);
/* CLOSED or final -> PUBLISHED: the fixed-name temporary file of target (OUTFILE_FIXED's), which
 * a commit record says was synced to be published, renamed to target and the directory synced
 * (done already when the temporary file is gone and the target is there: the run that wrote the
 * record renamed it). Taken as outfile_adopt takes it. 0, or -1: CLOSED when it is not there
 * (outfile_why says why), PRECOMMITTED when the rename failed (errno; f->tmp names the file). */
int outfile_republish(OutFile *f, const char *target);
/* Makes the renames in f's directory durable (some file systems refuse, which is harmless). */
void outfile_sync_dir(const OutFile *f);
/* WRITING, SYNCED or PRECOMMITTED -> DISCARDED: closed and unlinked. */
void outfile_discard(OutFile *f);
/* The end of f, in any state: a file not published is discarded, unless failed and a checkpoint
 * names it (named, or PRECOMMITTED): then it is LEFT for a restore. Frees what f holds. */
void outfile_release(OutFile *f, bool failed);
/* Why the last call failed: f->why, else strerror(errno) (call it at once). */
const char *outfile_why(const OutFile *f);
/* "closed", "writing", ...: for messages. */
const char *outfile_state_name(OutFileState s);

#endif
