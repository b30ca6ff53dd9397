/* ckptdir.h: the checkpoint directory on disk (ckptdir.c): its names, the snapshot files' header
 * and CRC, the manifest, listing and removing checkpoints. No executor here: ckpt.c (the
 * coordinator and the restore) is its only user besides the unit tests (tests/unit/test_ckptdir.c).
 * The layout is described at the top of ckptdir.c. */
#ifndef SF_CKPTDIR_H
#define SF_CKPTDIR_H

#include "rt.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DIR/ckpt-ID/NAME into buf (DIR/ckpt-ID when name is NULL; DIR/NAME when id is 0). 0, or -1 when
 * it does not fit. */
int ckptdir_path(char *buf, size_t cap, const char *dir, uint64_t id, const char *name);
/* Writes n bytes to path through a temporary file (path.tmp), renamed into place; synced first
 * when sync. 0 or -1 (errno). */
int ckptdir_write_file(const char *path, const void *p, size_t n, bool sync);
/* errno of ckptdir_read_all for a file that is not a regular one. */
#define CKPTDIR_NOT_REGULAR EMEDIUMTYPE
/* strerror, but "not a regular file" and "a symbolic link" for what ckptdir_read_all refuses. */
const char *ckptdir_strerror(int e);
/* The whole file in a malloc'd buffer (*n bytes, NUL-terminated), NULL (errno) when it cannot be
 * read: opened never through a symbolic link (ELOOP) nor waiting (a FIFO), and only a regular file
 * (else CKPTDIR_NOT_REGULAR). */
unsigned char *ckptdir_read_all(const char *path, size_t *n);
/* Whether path exists. */
bool ckptdir_exists(const char *path);
/* The numbers K of the DIR/ckpt-K directories, newest first (*n of them; malloc'd). */
uint64_t *ckptdir_list(const char *dir, int *n);
/* Whether DIR/ckpt-K holds only what sf writes there (ckptdir.c): a directory, not a symbolic
 * link, of regular files under sf's names, its snapshots and manifest with their headers. 0 (also
 * when it is not there), or -1 with why naming what is not sf's. */
int ckptdir_check(const char *dir, uint64_t id, char *why, size_t cap);
/* Removes DIR/ckpt-K after ckptdir_check: nothing of it when it holds anything else, never
 * following a symbolic link. 0 (also when it is not there), or -1 with why. */
int ckptdir_remove(const char *dir, uint64_t id, char *why, size_t cap);

/* ckptdir_check of every DIR/ckpt-K, and DIR/REQUEST absent or a regular file. 0, or -1 with why. */
int ckptdir_check_all(const char *dir, char *why, size_t cap);
/* Removes every checkpoint in DIR and DIR/REQUEST once ckptdir_check_all found them all sf's
 * (nothing goes otherwise); what else DIR holds stays. 0, or -1 with why. */
int ckptdir_remove_all(const char *dir, char *why, size_t cap);

/* ---- the lock ---- */

/* Locks DIR/LOCK (made if missing, never through a link) for job `job`, writing job and holder
 * (who holds it, for another job's message) into it: exclusively, or when shared together with
 * the executors of the same job (those of one distributed job, which all lock DIR). *fd holds it
 * until ckptdir_unlock. Never waits for another job. 0, or -1 with why: "it is in use by another
 * job (HOLDER)", or what failed. */
int ckptdir_lock(const char *dir, const char *job, const char *holder, bool shared, int *fd, char *why, size_t cap);
/* Releases the lock fd (-1: none); with remove, DIR/LOCK goes first, still held. */
void ckptdir_unlock(const char *dir, int fd, bool remove);
/* A 64-bit hash of text (FNV-1a). */
uint64_t ckptdir_hash(const char *text);

/* ---- what a checkpoint belongs to ---- */

/* A Split or Merge sf-xform made: they exist at some widths only, and their names number regions. */
bool ckptdir_generated(const Op *op);
/* The name an operator has at every width: a replica's original's (NAME[K] is NAME's), else its
 * own. */
const char *ckptdir_base_name(const Op *op);
/* A fingerprint of everything op's snapshot depends on: its kind, parameters (but a Split's pulse
 * period), set and state expressions, its ports' schemas, library and declared model (keys
 * included); not its name, host, region, channel or how many streams a Merge or Split has, so that
 * it is the same at every width and placement and on every host. A generated Split or Merge's
 * (ckptdir_generated) also says where it sits: its origin and channel, not its region's number,
 * so that it identifies the operator at every width where it exists. */
uint64_t ckptdir_op_fingerprint(const Op *op);
/* The graph's identity: its name and its operators' base names and kinds, sf-xform's Splits and
 * Merges left out: the same at every width and placement. */
uint64_t ckptdir_graph_identity(const Graph *g);

/* ---- snapshot files ---- */

/* What a snapshot file says it belongs to. */
typedef struct CkptSnapHead {
  uint64_t id;          /* the checkpoint */
  uint64_t graph;       /* the graph's identity (ckptdir_graph_identity) */
  const char *name;     /* the operator */
  uint64_t fingerprint; /* its definition (ckptdir_op_fingerprint) */
  bool finished;        /* the operator had finished (its input ended, its end handled) before the
                           checkpoint's position: a restore brings it back finished, and the kind's
                           state is empty */
} CkptSnapHead;

/* A snapshot file's contents, decoded. */
typedef struct CkptSnap {
  unsigned char *bytes;          /* the file (malloc'd; the SnapIn below points into it) */
  size_t n;
  uint64_t graph, fingerprint;   /* what it belongs to (CkptSnapHead) */
  uint64_t next_seq, taken, pos; /* the ordered driver's counters, the barrier's position */
  bool finished;                 /* CkptSnapHead's */
  SnapIn state;                  /* the kind's own snapshot */
} CkptSnap;

/* The bytes of a snapshot file (head says whose): the driver's counters, the barrier's position
 * and the kind's snapshot (state, nstate bytes), appended to out. */
void ckptdir_snap_encode(Buf *out, const CkptSnapHead *head, uint64_t next_seq, uint64_t taken, uint64_t pos,
                         const void *state, size_t nstate);
/* Reads DIR/ckpt-id/NAME.snap and checks it against its CRC and the size manifest lists, into s
 * (s->bytes to be freed by the caller, also on failure). false with why. */
bool ckptdir_snap_load(const char *dir, uint64_t id, const char *name, const char *manifest, CkptSnap *s, char *why,
                       size_t cap);

/* ---- manifests ---- */

/* Writes DIR/ckpt-id/MANIFEST (synced) for the graph whose identity and name are given, listing
 * every NAME.snap of the checkpoint with its size, unless it holds none. 0, or -1 (errno) when it
 * cannot be written. */
int ckptdir_write_manifest(const char *dir, uint64_t id, uint64_t pos, uint64_t graph, const char *graph_name);
/* The manifest of checkpoint id (malloc'd, NUL-terminated), NULL with why when there is none or its
 * head is not this checkpoint's (or of another version). */
char *ckptdir_read_manifest(const char *dir, uint64_t id, char *why, size_t cap);
/* The graph a manifest names: its identity and name (into name); false when malformed. */
bool ckptdir_manifest_graph(const char *manifest, uint64_t *graph, char *name, size_t cap);
/* The graph checkpoint id belongs to: its manifest's, else (incomplete) any snapshot's, whose name
 * is then "". 1, or 0 when nothing in it says. */
int ckptdir_graph_of(const char *dir, uint64_t id, uint64_t *graph, char *name, size_t cap);
/* The snapshots a manifest lists ("file NAME.snap SIZE" lines): their NAMEs, NULL-terminated, each
 * and the array malloc'd (ckptdir_names_free). */
char **ckptdir_manifest_names(const char *manifest, int *count);
void ckptdir_names_free(char **names);

/* ---- commit records ----
 * DIR/host-H.commit (H: the host, "all" in one process): host H's executor completed and decided
 * to commit, every sink's files synced: "SFCOMMIT" (8 bytes), the graph's identity (u64), H (u64
 * length, bytes), the body (u64 length, bytes: what each operator needs to finish its commit),
 * CRC-32 of everything before (u32). Written (synced, and DIR synced) before any sink renames a
 * file, removed after every checkpoint: a --restore that finds it finishes the commit instead of
 * restoring that host's sinks; the job is complete when that of every host holding a sink is
 * there. */

/* Writes DIR/host-H.commit with body (n bytes) for the graph whose identity is graph, durably
 * (the file and DIR synced). 0, or -1 (errno). */
int ckptdir_write_commit(const char *dir, const char *host, uint64_t graph, const void *body, size_t n);
/* Reads DIR/host-H.commit: 1 with its graph in *graph and its body in *body (pointing into
 * *bytes, malloc'd, the caller frees), 0 when there is none, -1 with why when it is damaged or
 * not a regular file. */
int ckptdir_read_commit(const char *dir, const char *host, uint64_t *graph, unsigned char **bytes, SnapIn *body,
                        char *why, size_t cap);
/* Removes DIR/host-H.commit (never through a link). 0 (also when it is not there), or -1 (errno). */
int ckptdir_remove_commit(const char *dir, const char *host);
/* Whether DIR holds a commit record. */
bool ckptdir_has_commit(const char *dir);
/* A commit record in DIR of a graph other than graph: 1 with why naming it, else 0. */
int ckptdir_commit_other_graph(const char *dir, uint64_t graph, char *why, size_t cap);

#endif
