/* ckptdir.c: the checkpoint directory on disk (ckptdir.h), without the executor: names, the
 * snapshot files' header and CRC, manifests, listing and removal. ckpt.c decides what is written
 * when and what is restored; this file only knows the bytes.
 *
 * Files, all written to a temporary name and renamed into place (the snapshots of one executor made
 * durable by one syncfs before its done file, the others each synced):
 *   DIR/ckpt-K/OP.snap        one per operator: "SFCKPT2\n", K (u64), the graph's identity (u64),
 *                             the operator's name (u64 length + bytes), its fingerprint (u64), the
 *                             payload (u64 length + bytes), then the CRC-32 of everything before
 *                             it (u32); the payload is the ordered driver's
 *                             counters (u64 next seq, u64 tuples taken; zeros for others), the
 *                             barrier's position (u64), then the kind's own snapshot (u64 length +
 *                             bytes, rt.h's OpKindImpl.snapshot); an operator that had finished
 *                             has an empty one followed by u64 1 (SNAP_FINISHED)
 *   DIR/ckpt-K/host-H.done    every operator of host H ("all" in one process) wrote its file
 *   DIR/ckpt-K/MANIFEST       written last, by the coordinator once every host is done: "sf-checkpoint
 *                             2", "id K", "graph IDENTITY NAME" (16 hex digits, the graph's name),
 *                             "position P", then "file NAME SIZE" per snapshot
 *   DIR/REQUEST               an earlier version's latest request between hosts ("K P"); no
 *                             longer written (requests go over the control streams), still sf's
 *   DIR/LOCK                  locked while a job uses DIR (ckptdir_lock): "sf-lock 1", "job ID",
 *                             "holder TEXT"
 *   DIR/host-H.commit         host H's executor completed and commits its sinks (the section
 *                             "commit records" below); removed after every checkpoint
 * The graph's identity and each operator's fingerprint are hashes (FNV-1a, 64 bits) of the graph
 * as written, the same on every host and at every width: a restore refuses a checkpoint of
 * another graph, or an operator whose definition changed.
 * A checkpoint is complete when its MANIFEST exists. Nothing else is sf's: a removal removes only
 * these names, as regular files (a snapshot and a manifest recognised by their header), never
 * through a symbolic link, and refuses a ckpt-K that holds anything else, naming it. */
#include "ckptdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

static const char MAGIC[8] = "SFCKPT2\n";
static const char MAGIC_ANY[6] = "SFCKPT"; /* a snapshot of any version (removable as sf's) */
enum { SNAP_FINISHED = 1 }; /* the mark after a finished operator's (empty) state */

const char *ckptdir_strerror(int e) {
  if (e == CKPTDIR_NOT_REGULAR) return "not a regular file";
  if (e == ELOOP) return "a symbolic link";
  return strerror(e);
}

int ckptdir_path(char *buf, size_t cap, const char *dir, uint64_t id, const char *name) {
  int n = id ? snprintf(buf, cap, "%s/ckpt-%" PRIu64 "%s%s", dir, id, name ? "/" : "", name ? name : "")
             : snprintf(buf, cap, "%s/%s", dir, name);
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int ckptdir_write_file(const char *path, const void *p, size_t n, bool sync) {
  char tmp[PATH_MAX + 8];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = errno;
      close(fd);
      unlink(tmp);
      errno = e;
      return -1;
    }
    c += w;
    n -= (size_t)w;
  }
  if ((sync && fdatasync(fd) < 0) || close(fd) < 0 || rename(tmp, path) < 0) {
    int e = errno;
    unlink(tmp);
    errno = e;
    return -1;
  }
  return 0;
}

unsigned char *ckptdir_read_all(const char *path, size_t *n) {
  /* never through a link, and never waiting in open(2) for a FIFO's writer */
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  int bad = fstat(fd, &st) < 0 ? errno : !S_ISREG(st.st_mode) ? CKPTDIR_NOT_REGULAR : st.st_size > (off_t)1 << 40 ? EFBIG : 0;
  if (bad) {
    close(fd);
    errno = bad;
    return NULL;
  }
  unsigned char *p = malloc((size_t)st.st_size + 1);
  size_t got = 0;
  while (p && got < (size_t)st.st_size) {
    ssize_t r = read(fd, p + got, (size_t)st.st_size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (p && got != (size_t)st.st_size) {
    free(p);
    errno = EIO;
    return NULL;
  }
  if (p) p[got] = 0;
  *n = got;
  return p;
}

bool ckptdir_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* What an entry of DIR/ckpt-K is by its name: one of the files sf writes there, or (ENT_FOREIGN)
 * something else. */
typedef enum Entry { ENT_FOREIGN, ENT_SNAP, ENT_MANIFEST, ENT_DONE, ENT_TMP } Entry;

static Entry entry_kind(const char *name) {
  size_t n = strlen(name);
  bool tmp = n > 4 && !strcmp(name + n - 4, ".tmp");
  size_t m = tmp ? n - 4 : n; /* the name a temporary file is renamed to */
  Entry e = ENT_FOREIGN;
  if (m == 8 && !strncmp(name, "MANIFEST", 8)) e = ENT_MANIFEST;
  else if (m > 10 && !strncmp(name, "host-", 5) && !strncmp(name + m - 5, ".done", 5)) e = ENT_DONE;
  else if (m > 5 && !strncmp(name + m - 5, ".snap", 5)) e = ENT_SNAP;
  return e != ENT_FOREIGN && tmp ? ENT_TMP : e;
}

/* Whether entry `name` of the checkpoint directory cfd (shown as `shown`) is a file sf wrote: a
 * regular file (never followed if a link) under one of sf's names, a snapshot or manifest starting
 * with its header. false with why. */
static bool entry_ok(int cfd, const char *shown, const char *name, char *why, size_t cap) {
  Entry e = entry_kind(name);
  if (e == ENT_FOREIGN) return snprintf(why, cap, "'%s' holds '%s', which sf-exec did not write", shown, name), false;
  struct stat st;
  if (fstatat(cfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT || (snprintf(why, cap, "cannot look at '%s/%s': %s", shown, name, strerror(errno)), false);
  if (S_ISLNK(st.st_mode)) return snprintf(why, cap, "'%s/%s' is a symbolic link", shown, name), false;
  if (!S_ISREG(st.st_mode)) return snprintf(why, cap, "'%s/%s' is not a regular file", shown, name), false;
  if (e != ENT_SNAP && e != ENT_MANIFEST) return true;
  const char *head = e == ENT_SNAP ? MAGIC_ANY : "sf-checkpoint ";
  size_t want = e == ENT_SNAP ? sizeof MAGIC_ANY : strlen(head);
  char got[16] = "";
  int fd = openat(cfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return true; /* gone since: another executor of the job removed it */
  ssize_t r = fd >= 0 ? pread(fd, got, want, 0) : -1;
  if (fd >= 0) close(fd);
  if (r != (ssize_t)want || memcmp(got, head, want) != 0)
    return snprintf(why, cap, "'%s/%s' is not a %s sf-exec wrote", shown, name, e == ENT_SNAP ? "snapshot" : "manifest"),
           false;
  return true;
}

/* Opens DIR/ckpt-id (never through a symbolic link), its name in shown: the directory's fd, or -1
 * with why (ENOENT: *gone set, nothing there). */
static int open_ckpt(const char *dir, uint64_t id, char *shown, size_t shown_cap, bool *gone, char *why, size_t cap) {
  *gone = false;
  if (ckptdir_path(shown, shown_cap, dir, id, NULL) < 0) return snprintf(why, cap, "path too long"), -1;
  const char *base = strrchr(shown, '/') + 1;
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return snprintf(why, cap, "cannot open '%s': %s", dir, strerror(errno)), -1;
  struct stat st;
  int cfd = -1;
  if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
    *gone = errno == ENOENT;
    snprintf(why, cap, "cannot look at '%s': %s", shown, strerror(errno));
  } else if (S_ISLNK(st.st_mode)) {
    snprintf(why, cap, "'%s' is a symbolic link", shown);
  } else if (!S_ISDIR(st.st_mode)) {
    snprintf(why, cap, "'%s' is not a directory", shown);
  } else if ((cfd = openat(dfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
    *gone = errno == ENOENT;
    snprintf(why, cap, "cannot open '%s': %s", shown, strerror(errno));
  }
  close(dfd);
  return cfd;
}

/* Goes through the checkpoint directory cfd: checks every entry (unlink false) or removes them
 * (true, after a check). 0, or -1 with why at the first entry that is not sf's. */
static int each_entry(int cfd, const char *shown, bool unlink, char *why, size_t cap) {
  int fd = dup(cfd);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    return snprintf(why, cap, "cannot read '%s': %s", shown, strerror(errno)), -1;
  }
  rewinddir(d); /* the dup shares its position with cfd: an earlier pass left it at the end */
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d))) {
    if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
    if (!entry_ok(cfd, shown, e->d_name, why, cap)) rc = -1;
    else if (unlink && unlinkat(cfd, e->d_name, 0) < 0 && errno != ENOENT)
      rc = -1, snprintf(why, cap, "cannot remove '%s/%s': %s", shown, e->d_name, strerror(errno));
  }
  closedir(d);
  return rc;
}

int ckptdir_check(const char *dir, uint64_t id, char *why, size_t cap) {
  char shown[PATH_MAX];
  bool gone;
  int cfd = open_ckpt(dir, id, shown, sizeof shown, &gone, why, cap);
  if (cfd < 0) return gone ? 0 : -1;
  int rc = each_entry(cfd, shown, false, why, cap);
  close(cfd);
  return rc;
}

int ckptdir_remove(const char *dir, uint64_t id, char *why, size_t cap) {
  char shown[PATH_MAX];
  bool gone;
  int cfd = open_ckpt(dir, id, shown, sizeof shown, &gone, why, cap);
  if (cfd < 0) return gone ? 0 : -1;
  /* everything is checked before anything goes; then each entry again as it goes */
  int rc = each_entry(cfd, shown, false, why, cap);
  if (rc == 0) rc = each_entry(cfd, shown, true, why, cap);
  close(cfd);
  if (rc == 0) {
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || (unlinkat(dfd, strrchr(shown, '/') + 1, AT_REMOVEDIR) < 0 && errno != ENOENT))
      rc = -1, snprintf(why, cap, "cannot remove '%s': %s", shown, strerror(errno));
    if (dfd >= 0) close(dfd);
  }
  return rc;
}

/* Whether DIR/name (one of sf's names there) is absent or a regular file; why otherwise. */
static bool top_ok(const char *dir, const char *name, char *why, size_t cap) {
  char path[PATH_MAX];
  struct stat st;
  if (ckptdir_path(path, sizeof path, dir, 0, name) < 0) return snprintf(why, cap, "path too long"), false;
  if (lstat(path, &st) < 0) return errno == ENOENT || (snprintf(why, cap, "cannot look at '%s': %s", path, strerror(errno)), false);
  if (S_ISREG(st.st_mode)) return true;
  snprintf(why, cap, S_ISLNK(st.st_mode) ? "'%s' is a symbolic link" : "'%s' is not a regular file", path);
  return false;
}

/* Whether a name in DIR is a commit record's (or its temporary file's). */
static bool commit_name(const char *name) {
  size_t n = strlen(name);
  if (n > 4 && !strcmp(name + n - 4, ".tmp")) n -= 4;
  return n > 12 && !strncmp(name, "host-", 5) && !strncmp(name + n - 7, ".commit", 7);
}

/* Checks (unlink false) or removes (true) DIR's commit records and their temporary files: each a
 * regular file, never followed if a link. 0, or -1 with why. */
static int each_commit(const char *dir, bool unlink_them, char *why, size_t cap) {
  DIR *d = opendir(dir);
  if (!d) return errno == ENOENT ? 0 : (snprintf(why, cap, "cannot read '%s': %s", dir, strerror(errno)), -1);
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d))) {
    if (!commit_name(e->d_name)) continue;
    char path[PATH_MAX];
    if (!top_ok(dir, e->d_name, why, cap)) rc = -1;
    else if (unlink_them && ckptdir_path(path, sizeof path, dir, 0, e->d_name) == 0 && unlink(path) < 0 && errno != ENOENT)
      rc = -1, snprintf(why, cap, "cannot remove '%s': %s", path, strerror(errno));
  }
  closedir(d);
  return rc;
}

int ckptdir_check_all(const char *dir, char *why, size_t cap) {
  if (!top_ok(dir, "REQUEST", why, cap) || each_commit(dir, false, why, cap) < 0) return -1;
  int n;
  uint64_t *ids = ckptdir_list(dir, &n);
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) rc = ckptdir_check(dir, ids[i], why, cap);
  free(ids);
  return rc;
}

int ckptdir_remove_all(const char *dir, char *why, size_t cap) {
  if (ckptdir_check_all(dir, why, cap) < 0) return -1;
  int n;
  uint64_t *ids = ckptdir_list(dir, &n);
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) rc = ckptdir_remove(dir, ids[i], why, cap);
  free(ids);
  char path[PATH_MAX];
  if (rc == 0 && ckptdir_path(path, sizeof path, dir, 0, "REQUEST") == 0 && unlink(path) < 0 && errno != ENOENT)
    rc = -1, snprintf(why, cap, "cannot remove '%s': %s", path, strerror(errno));
  /* the commit records last: until every checkpoint is gone, a restore finds them and knows */
  if (rc == 0) rc = each_commit(dir, true, why, cap);
  return rc;
}

uint64_t *ckptdir_list(const char *dir, int *n) {
  *n = 0;
  int cap = 16;
  uint64_t *ids = malloc(sizeof *ids * (size_t)cap);
  DIR *d = opendir(dir);
  if (!d) return ids;
  struct dirent *e;
  while ((e = readdir(d))) {
    char *end;
    if (strncmp(e->d_name, "ckpt-", 5) != 0 || e->d_name[5] < '1' || e->d_name[5] > '9') continue;
    uint64_t id = strtoull(e->d_name + 5, &end, 10);
    if (*end) continue;
    if (*n == cap) ids = realloc(ids, sizeof *ids * (size_t)(cap *= 2));
    ids[(*n)++] = id;
  }
  closedir(d);
  for (int i = 1; i < *n; i++) /* newest first: insertion sort (a handful of entries) */
    for (int j = i; j > 0 && ids[j] > ids[j - 1]; j--) {
      uint64_t t = ids[j];
      ids[j] = ids[j - 1];
      ids[j - 1] = t;
    }
  return ids;
}

/* ---- the lock ---- */

/* An open file description lock on the whole file (F_OFD_SETLK: per open, not per process, so
 * that it holds across threads and is not dropped when some other descriptor of the file closes);
 * never waits. */
static int set_lock(int fd, short type) {
  struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
  return fcntl(fd, F_OFD_SETLK, &fl);
}

/* Whether fd is still the file at path (a job that removes the lock file removes it while
 * holding it: whoever locked the old file must open the new one). */
static bool still_there(int fd, const char *path) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The job and holder a lock file names ("" when it names none). */
static void lock_says(int fd, char *job, size_t jcap, char *holder, size_t hcap) {
  char buf[1024];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  buf[n > 0 ? n : 0] = 0;
  const char *j = strstr(buf, "\njob "), *h = strstr(buf, "\nholder ");
  snprintf(job, jcap, "%.*s", j ? (int)strcspn(j + 5, "\n") : 0, j ? j + 5 : "");
  snprintf(holder, hcap, "%.*s", h ? (int)strcspn(h + 8, "\n") : 0, h ? h + 8 : "");
}

int ckptdir_lock(const char *dir, const char *job, const char *holder, bool shared, int *out, char *why, size_t cap) {
  char path[PATH_MAX];
  if (ckptdir_path(path, sizeof path, dir, 0, "LOCK") < 0) return snprintf(why, cap, "path too long"), -1;
  /* a lock held exclusively is another job's, or a fellow executor's writing its name and about to
   * share it: a while to tell (5 s for an executor that shares it, 0.5 s otherwise) */
  for (int tries = 0;; tries++) {
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
      if (fd < 0 && errno == ELOOP) snprintf(why, cap, "'%s' is a symbolic link", path);
      else if (fd < 0) snprintf(why, cap, "cannot open '%s': %s", path, strerror(errno));
      else snprintf(why, cap, "'%s' is not a regular file", path);
      if (fd >= 0) close(fd);
      return -1;
    }
    if (set_lock(fd, F_WRLCK) == 0) {
      if (!still_there(fd, path)) {
        close(fd);
        continue;
      }
      char text[1024];
      int n = snprintf(text, sizeof text, "sf-lock 1\njob %s\nholder %s\n", job, holder);
      if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)n, 0) != n || (shared && set_lock(fd, F_RDLCK) < 0)) {
        snprintf(why, cap, "cannot write '%s': %s", path, strerror(errno));
        close(fd);
        return -1;
      }
      *out = fd;
      return 0;
    }
    if (errno != EAGAIN && errno != EACCES) {
      snprintf(why, cap, "cannot lock '%s': %s", path, strerror(errno));
      close(fd);
      return -1;
    }
    bool got = set_lock(fd, F_RDLCK) == 0; /* others share it: what it says is written */
    if (got && !still_there(fd, path)) {
      close(fd);
      continue;
    }
    char has_job[256], has_holder[512];
    lock_says(fd, has_job, sizeof has_job, has_holder, sizeof has_holder);
    if (got && shared && !strcmp(has_job, job)) { /* a fellow executor of this job */
      *out = fd;
      return 0;
    }
    close(fd);
    if (got || tries >= (shared ? 250 : 25)) {
      snprintf(why, cap, "it is in use by another job (%s)", has_holder[0] ? has_holder : "its holder is not named");
      return -1;
    }
    nanosleep(&(struct timespec){ 0, 20 * 1000000L }, NULL);
  }
}

void ckptdir_unlock(const char *dir, int fd, bool remove) {
  if (fd < 0) return;
  char path[PATH_MAX];
  if (remove && ckptdir_path(path, sizeof path, dir, 0, "LOCK") == 0 && still_there(fd, path)) unlink(path);
  close(fd);
}

/* ---- what a checkpoint belongs to ---- */

/* FNV-1a, 64 bits, over a field and a 0 byte that ends it (so that "ab","c" and "a","bc" differ). */
static uint64_t mix(uint64_t h, const char *text) {
  for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++) h = (h ^ *p) * 0x100000001b3ULL;
  return (h ^ 0xff) * 0x100000001b3ULL;
}

uint64_t ckptdir_hash(const char *text) { return mix(0xcbf29ce484222325ULL, text); }

static uint64_t mix_int(uint64_t h, long long v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", v);
  return mix(h, buf);
}

static uint64_t mix_schema(uint64_t h, const Schema *s) {
  h = mix_int(h, s ? s->nattrs : -1);
  for (int i = 0; s && i < s->nattrs; i++) h = mix(mix(h, s->attrs[i].name), type_name(s->attrs[i].type));
  return h;
}

static int param_order(const void *a, const void *b) {
  return strcmp((*(const Param *const *)a)->name, (*(const Param *const *)b)->name);
}

bool ckptdir_generated(const Op *op) {
  return op->origin && (op->kind == KIND_SPLIT || op->kind == KIND_MERGE);
}

const char *ckptdir_base_name(const Op *op) {
  return op->origin && op->channel >= 0 && !ckptdir_generated(op) ? op->origin : op->name;
}

uint64_t ckptdir_op_fingerprint(const Op *op) {
  uint64_t h = mix(0xcbf29ce484222325ULL, "sf-op 1");
  h = mix(h, op->kind_text);
  /* parameters by name (their order means nothing); a Split's pulse period only paces it */
  const Param **ps = malloc(sizeof *ps * (size_t)(op->nparams + 1));
  for (int i = 0; i < op->nparams; i++) ps[i] = &op->params[i];
  qsort(ps, (size_t)op->nparams, sizeof *ps, param_order);
  for (int i = 0; i < op->nparams; i++)
    if (!(op->kind == KIND_SPLIT && !strcmp(ps[i]->name, "pulse"))) h = mix(mix(h, ps[i]->name), ps[i]->text);
  free(ps);
  h = mix_int(h, op->nsets);
  for (int i = 0; i < op->nsets; i++) h = mix(mix(h, op->sets[i].attr), op->sets[i].text);
  h = mix_int(h, op->nstates);
  for (int i = 0; i < op->nstates; i++) {
    const StateVar *v = op->states[i];
    h = mix(mix(mix(mix(h, v->name), type_name(v->type)), v->init_text), v->text);
  }
  /* lets: what they compute, and which state updates they run between (none: as before lets were) */
  if (op->nlets) h = mix(mix_int(h, op->nlets), "lets");
  for (int i = 0; i < op->nlets; i++) {
    const Let *l = &op->lets[i];
    h = mix_int(mix(mix(mix(h, l->name), type_name(l->type)), l->text), l->states_before);
  }
  /* the schemas of its ports, not how many streams a Merge joins or a Split feeds (the width) */
  int nin = op->kind == KIND_MERGE && op->ninputs > 0 ? 1 : op->ninputs;
  int nout = op->kind == KIND_SPLIT && op->noutputs > 0 ? 1 : op->noutputs;
  h = mix_int(h, nin);
  for (int i = 0; i < nin; i++) {
    const Input *in = &op->inputs[i];
    h = mix_int(h, op->kind == KIND_MERGE ? 1 : in->nstreams);
    h = mix_schema(h, in->nstreams > 0 && in->streams[0] ? in->streams[0]->schema : NULL);
  }
  h = mix_int(h, nout);
  for (int i = 0; i < nout; i++) h = mix_schema(h, op->outputs[i].resolved ? op->outputs[i].resolved->schema : NULL);
  h = mix(mix(h, op->lib_path), op->lib_symbol);
  const Model *m = &op->model;
  if (m->declared) {
    h = mix_int(mix_int(mix_int(mix_int(h, m->state), m->sel), m->punct), m->final);
    for (int i = 0; i < m->nkeys; i++) h = mix(h, m->keys[i]);
  }
  /* a Split or Merge sf-xform made: where it sits, not its region's number (which depends on
   * the regions that exist at a width): the operator it stands before or after (a region's
   * entry Split and a shuffle Merge name its first operator, its exit Merge and a shuffle Split
   * its last), and which channel (-1: the region's own entry or exit) */
  if (ckptdir_generated(op)) h = mix_int(mix(mix(h, "at"), op->origin), op->channel);
  return h;
}

static int name_order(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

uint64_t ckptdir_graph_identity(const Graph *g) {
  /* the graph's name and its operators' names and kinds as written (a replica counts as its
   * original, sf-xform's Splits and Merges not at all): the same at every width and placement */
  char **names = malloc(sizeof *names * (size_t)(g->nops + 1));
  int n = 0;
  for (int i = 0; i < g->nops; i++) {
    const Op *op = g->ops[i];
    if (ckptdir_generated(op)) continue;
    if (asprintf(&names[n], "%s\x01%s", ckptdir_base_name(op), op->kind_text ? op->kind_text : "") < 0) abort();
    n++;
  }
  qsort(names, (size_t)n, sizeof *names, name_order);
  uint64_t h = mix(mix(0xcbf29ce484222325ULL, "sf-graph 1"), g->name);
  for (int i = 0; i < n; i++)
    if (i == 0 || strcmp(names[i], names[i - 1]) != 0) h = mix(h, names[i]);
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
  return h;
}

/* ---- snapshot files ---- */

void ckptdir_snap_encode(Buf *b, const CkptSnapHead *head, uint64_t next_seq, uint64_t taken, uint64_t pos,
                         const void *state, size_t nstate) {
  size_t start = b->n;
  buf_append(b, MAGIC, sizeof MAGIC);
  snap_u64(b, head->id);
  snap_u64(b, head->graph);
  snap_bytes(b, head->name, strlen(head->name));
  snap_u64(b, head->fingerprint);
  Buf payload;
  buf_init(&payload);
  snap_u64(&payload, next_seq);
  snap_u64(&payload, taken);
  snap_u64(&payload, pos);
  snap_bytes(&payload, state ? state : "", nstate);
  if (head->finished) snap_u64(&payload, SNAP_FINISHED); /* (absent otherwise: the bytes of before) */
  snap_bytes(b, payload.p, payload.n);
  buf_release(&payload);
  uint32_t crc = (uint32_t)crc32(0L, (const Bytef *)b->p + start, (uInt)(b->n - start));
  char c4[4] = { (char)crc, (char)(crc >> 8), (char)(crc >> 16), (char)(crc >> 24) };
  buf_append(b, c4, 4);
}

bool ckptdir_snap_load(const char *dir, uint64_t id, const char *name, const char *manifest, CkptSnap *s, char *why,
                       size_t cap) {
  char file[300], path[PATH_MAX], want[400];
  snprintf(file, sizeof file, "%s.snap", name);
  if (ckptdir_path(path, sizeof path, dir, id, file) < 0) return snprintf(why, cap, "path too long"), false;
  s->bytes = ckptdir_read_all(path, &s->n);
  if (!s->bytes) return snprintf(why, cap, "cannot read '%s': %s", file, ckptdir_strerror(errno)), false;
  snprintf(want, sizeof want, "\nfile %s %zu\n", file, s->n);
  if (!strstr(manifest, want)) return snprintf(why, cap, "'%s' is not the file its manifest lists", file), false;
  if (s->n < sizeof MAGIC + 4 || memcmp(s->bytes, MAGIC, sizeof MAGIC) != 0)
    return snprintf(why, cap, "'%s' is not a snapshot", file), false;
  const unsigned char *c = s->bytes + s->n - 4;
  uint32_t crc = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
  if (crc != (uint32_t)crc32(0L, s->bytes, (uInt)(s->n - 4))) return snprintf(why, cap, "'%s' fails its CRC", file), false;
  SnapIn in = { .p = s->bytes + sizeof MAGIC, .n = s->n - sizeof MAGIC - 4 };
  uint64_t got = snap_get_u64(&in);
  s->graph = snap_get_u64(&in);
  size_t nlen, plen;
  const char *nm = snap_get_bytes(&in, &nlen);
  s->fingerprint = snap_get_u64(&in);
  const unsigned char *pl = snap_get_bytes(&in, &plen);
  if (!snap_done(&in) || got != id || nlen != strlen(name) || memcmp(nm, name, nlen) != 0)
    return snprintf(why, cap, "'%s' belongs to another checkpoint or operator", file), false;
  SnapIn p = { .p = pl, .n = plen };
  s->next_seq = snap_get_u64(&p);
  s->taken = snap_get_u64(&p);
  s->pos = snap_get_u64(&p);
  size_t slen;
  const unsigned char *st = snap_get_bytes(&p, &slen);
  s->finished = !p.bad && p.off < p.n; /* a finished operator's mark, after its empty state */
  if (s->finished && (snap_get_u64(&p) != SNAP_FINISHED || slen != 0)) p.bad = true;
  if (!snap_done(&p)) return snprintf(why, cap, "'%s' is malformed", file), false;
  s->state = (SnapIn){ .p = st, .n = slen };
  return true;
}

/* ---- manifests ---- */

int ckptdir_write_manifest(const char *dir, uint64_t id, uint64_t pos, uint64_t graph, const char *graph_name) {
  char path[PATH_MAX];
  Buf m;
  buf_init(&m);
  char line[PATH_MAX + 64];
  snprintf(line, sizeof line, "sf-checkpoint 2\nid %" PRIu64 "\ngraph %016" PRIx64 " ", id, graph);
  buf_puts(&m, line);
  for (const char *c = graph_name ? graph_name : ""; *c; c++) buf_putc(&m, *c == '\n' || *c == '\r' ? ' ' : *c);
  snprintf(line, sizeof line, "\nposition %" PRIu64 "\n", pos);
  buf_puts(&m, line);
  ckptdir_path(path, sizeof path, dir, id, NULL);
  DIR *d = opendir(path);
  int files = 0;
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      size_t len = strlen(e->d_name);
      if (len < 6 || strcmp(e->d_name + len - 5, ".snap") != 0) continue;
      char f[PATH_MAX * 2];
      snprintf(f, sizeof f, "%s/%s", path, e->d_name);
      struct stat st;
      if (stat(f, &st) < 0) continue;
      snprintf(line, sizeof line, "file %s %lld\n", e->d_name, (long long)st.st_size);
      buf_puts(&m, line);
      files++;
    }
    closedir(d);
  }
  int rc = 0;
  if (files > 0 && (ckptdir_path(path, sizeof path, dir, id, "MANIFEST") < 0 ||
                    ckptdir_write_file(path, m.p, m.n, true) < 0))
    rc = -1;
  buf_release(&m);
  return rc;
}

char *ckptdir_read_manifest(const char *dir, uint64_t id, char *why, size_t cap) {
  char path[PATH_MAX];
  size_t mlen;
  if (ckptdir_path(path, sizeof path, dir, id, "MANIFEST") < 0) return snprintf(why, cap, "path too long"), NULL;
  char *manifest = (char *)ckptdir_read_all(path, &mlen);
  if (!manifest && errno == ENOENT) return snprintf(why, cap, "no manifest: it never completed"), NULL;
  if (!manifest) return snprintf(why, cap, "cannot read 'MANIFEST': %s", ckptdir_strerror(errno)), NULL;
  char head[64];
  snprintf(head, sizeof head, "sf-checkpoint 2\nid %" PRIu64 "\ngraph ", id);
  if (strncmp(manifest, head, strlen(head)) != 0) {
    bool other = !strncmp(manifest, "sf-checkpoint ", 14) && strncmp(manifest, "sf-checkpoint 2\n", 16) != 0;
    free(manifest);
    return snprintf(why, cap, other ? "another version of sf-exec wrote it" : "its manifest is malformed"), NULL;
  }
  return manifest;
}

bool ckptdir_manifest_graph(const char *manifest, uint64_t *graph, char *name, size_t cap) {
  const char *l = strstr(manifest, "\ngraph ");
  char *end;
  if (!l) return false;
  *graph = strtoull(l + 7, &end, 16);
  if (end != l + 7 + 16 || *end != ' ') return false;
  size_t n = strcspn(end + 1, "\n");
  snprintf(name, cap, "%.*s", (int)n, end + 1);
  return true;
}

int ckptdir_graph_of(const char *dir, uint64_t id, uint64_t *graph, char *name, size_t cap) {
  char why[64];
  char *manifest = ckptdir_read_manifest(dir, id, why, sizeof why);
  if (manifest) {
    bool ok = ckptdir_manifest_graph(manifest, graph, name, cap);
    free(manifest);
    return ok;
  }
  /* not complete: any of its snapshots says (no name there) */
  char path[PATH_MAX];
  if (ckptdir_path(path, sizeof path, dir, id, NULL) < 0) return 0;
  DIR *d = opendir(path);
  int found = 0;
  struct dirent *e;
  while (d && !found && (e = readdir(d))) {
    if (entry_kind(e->d_name) != ENT_SNAP) continue;
    char f[PATH_MAX * 2];
    unsigned char head[sizeof MAGIC + 16];
    snprintf(f, sizeof f, "%s/%s", path, e->d_name);
    int fd = open(f, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    if (pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head && !memcmp(head, MAGIC, sizeof MAGIC)) {
      SnapIn in = { .p = head + sizeof MAGIC + 8, .n = 8 };
      *graph = snap_get_u64(&in);
      snprintf(name, cap, "%s", "");
      found = 1;
    }
    close(fd);
  }
  if (d) closedir(d);
  return found;
}

char **ckptdir_manifest_names(const char *manifest, int *count) {
  int cap = 16, n = 0;
  char **names = malloc(sizeof *names * (size_t)cap);
  for (const char *l = manifest; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncmp(l, "file ", 5) != 0) continue;
    const char *end = strstr(l + 5, ".snap ");
    const char *nl = strchr(l, '\n');
    if (!end || (nl && end > nl)) continue;
    if (n + 1 >= cap) names = realloc(names, sizeof *names * (size_t)(cap *= 2));
    names[n++] = strndup(l + 5, (size_t)(end - (l + 5)));
  }
  names[n] = NULL;
  *count = n;
  return names;
}

void ckptdir_names_free(char **names) {
  for (char **p = names; p && *p; p++) free(*p);
  free(names);
}

/* ---- commit records ---- */

static const char COMMIT_MAGIC[8] = { 'S', 'F', 'C', 'O', 'M', 'M', 'I', 'T' };

static int commit_path(char *buf, size_t cap, const char *dir, const char *host) {
  char name[300];
  int n = snprintf(name, sizeof name, "host-%s.commit", host);
  if (n < 0 || (size_t)n >= sizeof name) return -1;
  return ckptdir_path(buf, cap, dir, 0, name);
}

int ckptdir_write_commit(const char *dir, const char *host, uint64_t graph, const void *body, size_t n) {
  char path[PATH_MAX];
  if (commit_path(path, sizeof path, dir, host) < 0) return errno = ENAMETOOLONG, -1;
  Buf b;
  buf_init(&b);
  buf_append(&b, COMMIT_MAGIC, sizeof COMMIT_MAGIC);
  snap_u64(&b, graph);
  snap_bytes(&b, host, strlen(host));
  snap_bytes(&b, body ? body : "", n);
  uint32_t crc = (uint32_t)crc32(0L, (const Bytef *)b.p, (uInt)b.n);
  char c4[4] = { (char)crc, (char)(crc >> 8), (char)(crc >> 16), (char)(crc >> 24) };
  buf_append(&b, c4, 4);
  int rc = ckptdir_write_file(path, b.p, b.n, true);
  buf_release(&b);
  if (rc < 0) return -1;
  /* its rename durable before any sink's: a restore that sees a published file sees the record */
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return -1;
  rc = fsync(dfd) < 0 && errno != EINVAL ? -1 : 0;
  close(dfd);
  return rc;
}

int ckptdir_read_commit(const char *dir, const char *host, uint64_t *graph, unsigned char **bytes, SnapIn *body,
                        char *why, size_t cap) {
  char path[PATH_MAX];
  *bytes = NULL;
  if (commit_path(path, sizeof path, dir, host) < 0) return snprintf(why, cap, "path too long"), -1;
  struct stat st;
  if (lstat(path, &st) < 0)
    return errno == ENOENT ? 0 : (snprintf(why, cap, "cannot look at '%s': %s", path, strerror(errno)), -1);
  if (!S_ISREG(st.st_mode)) return snprintf(why, cap, "'%s' is not a regular file", path), -1;
  size_t n;
  unsigned char *p = ckptdir_read_all(path, &n);
  if (!p) return snprintf(why, cap, "cannot read '%s': %s", path, strerror(errno)), -1;
  *bytes = p;
  bool ok = n >= sizeof COMMIT_MAGIC + 4 && !memcmp(p, COMMIT_MAGIC, sizeof COMMIT_MAGIC);
  if (ok) {
    const unsigned char *c = p + n - 4;
    uint32_t crc = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
    ok = crc == (uint32_t)crc32(0L, p, (uInt)(n - 4));
  }
  SnapIn in = { .p = p + sizeof COMMIT_MAGIC, .n = ok ? n - sizeof COMMIT_MAGIC - 4 : 0 };
  size_t hlen, blen;
  *graph = snap_get_u64(&in);
  const char *h = snap_get_bytes(&in, &hlen);
  const unsigned char *bp = snap_get_bytes(&in, &blen);
  if (!ok || !snap_done(&in) || hlen != strlen(host) || memcmp(h, host, hlen) != 0)
    return snprintf(why, cap, "'%s' is damaged", path), -1;
  *body = (SnapIn){ .p = bp, .n = blen };
  return 1;
}

int ckptdir_remove_commit(const char *dir, const char *host) {
  char path[PATH_MAX], tmp[PATH_MAX + 8];
  if (commit_path(path, sizeof path, dir, host) < 0) return errno = ENAMETOOLONG, -1;
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  unlink(tmp);
  return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* The hosts H of DIR's commit records (not of their temporary files), each and
 * the array malloc'd, NULL-terminated. */
static char **commit_hosts(const char *dir) {
  int cap = 8, n = 0;
  char **hosts = malloc(sizeof *hosts * (size_t)cap);
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (!commit_name(e->d_name) || !strcmp(e->d_name + len - 4, ".tmp")) continue;
    if (n + 1 >= cap) hosts = realloc(hosts, sizeof *hosts * (size_t)(cap *= 2));
    hosts[n++] = strndup(e->d_name + 5, len - 5 - 7);
  }
  if (d) closedir(d);
  hosts[n] = NULL;
  return hosts;
}

bool ckptdir_has_commit(const char *dir) {
  char **hosts = commit_hosts(dir);
  bool any = hosts[0] != NULL;
  ckptdir_names_free(hosts);
  return any;
}

int ckptdir_commit_other_graph(const char *dir, uint64_t graph, char *why, size_t cap) {
  char **hosts = commit_hosts(dir);
  int found = 0;
  for (char **h = hosts; *h && !found; h++) {
    uint64_t of;
    unsigned char *bytes;
    SnapIn body;
    char w[PATH_MAX + 100];
    if (ckptdir_read_commit(dir, *h, &of, &bytes, &body, w, sizeof w) == 1 && of != graph)
      found = 1, snprintf(why, cap, "it holds the commit record 'host-%s.commit' of another graph", *h);
    free(bytes);
  }
  ckptdir_names_free(hosts);
  return found;
}
