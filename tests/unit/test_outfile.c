/* test_outfile.c: rt/outfile.c on its own: a file written under a temporary name and published by
 * rename. Every legal transition of its state machine (outfile.h), with the files on disk after
 * each (names, bytes, permissions); nothing planted at a fixed name taken; and every illegal one refused: the process aborts with the
 * internal error naming the transition, the file and its state (each run in a child process). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_helper.h"
#include "outfile.h"

static char dir[64];     /* the test's directory */
static char target[128]; /* dir/x.csv */
static char fixed[128];  /* dir/.x.csv.sf-part */

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/sf-outfile-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(target, sizeof target, "%s/x.csv", dir);
  snprintf(fixed, sizeof fixed, "%s/.x.csv.sf-part", dir);
}

static void teardown(void) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char p[512];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* The names in the test's directory, sorted, separated by spaces. */
static char *listing(void) {
  static char out[8192];
  char names[32][256];
  int n = 0;
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  struct dirent *e;
  while ((e = readdir(d)) && n < 32)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) snprintf(names[n++], sizeof names[0], "%s", e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
  out[0] = 0;
  for (int i = 0; i < n; i++) {
    if (i) strcat(out, " ");
    strcat(out, names[i]);
  }
  return out;
}

/* The bytes of path ("(none)" when it cannot be read). */
static char *contents(const char *path) {
  static char out[1024];
  int fd = open(path, O_RDONLY);
  if (fd < 0) return strcpy(out, "(none)");
  ssize_t n = read(fd, out, sizeof out - 1);
  close(fd);
  out[n < 0 ? 0 : n] = 0;
  return out;
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

static void write_text(OutFile *f, const char *text) {
  ck_assert_int_eq(outfile_write(f, text, strlen(text)), 0);
}

/* ---- legal transitions ---- */

START_TEST(test_unique_publish) {
  umask(027);
  OutFile f;
  outfile_init(&f);
  ck_assert_int_eq(f.state, OUTFILE_CLOSED);
  ck_assert_int_eq(outfile_open(&f, target, OUTFILE_UNIQUE), 0);
  ck_assert_int_eq(f.state, OUTFILE_WRITING);
  ck_assert_str_eq(f.dir, dir);
  char prefix[160];
  snprintf(prefix, sizeof prefix, "%s/.x.csv.tmp.", dir);
  ck_assert_msg(!strncmp(f.tmp, prefix, strlen(prefix)) && strlen(f.tmp) == strlen(prefix) + 6, "tmp is %s", f.tmp);
  write_text(&f, "a,b\n");
  write_text(&f, "1,2\n");
  ck_assert_int_eq(outfile_sync(&f), 0);
  ck_assert_int_eq(f.state, OUTFILE_SYNCED);
  ck_assert_int_eq(f.fd, -1);
  ck_assert_str_eq(contents(target), "(none)"); /* nothing visible before the rename */
  ck_assert_str_eq(contents(f.tmp), "a,b\n1,2\n");
  ck_assert_int_eq(outfile_publish(&f, true), 0);
  ck_assert_int_eq(f.state, OUTFILE_PUBLISHED);
  ck_assert_str_eq(listing(), "x.csv");
  ck_assert_str_eq(contents(target), "a,b\n1,2\n");
  struct stat st;
  ck_assert_int_eq(stat(target, &st), 0);
  ck_assert_int_eq(st.st_mode & 07777, 0640); /* what a new file gets under the umask */
  outfile_release(&f, false);
  ck_assert_int_eq(f.state, OUTFILE_PUBLISHED);
  ck_assert_str_eq(listing(), "x.csv");
}
END_TEST

START_TEST(test_fixed_checkpoint_precommit) {
  put(fixed, "left by an earlier run\n");
  OutFile f;
  outfile_init(&f);
  ck_assert_int_eq(outfile_open(&f, target, OUTFILE_FIXED), 0);
  ck_assert_str_eq(f.tmp, fixed);
  ck_assert(!f.existed);
  ck_assert_str_eq(contents(fixed), ""); /* emptied */
  write_text(&f, "h\n1\n");
  uint64_t len = 0;
  ck_assert_int_eq(outfile_checkpoint(&f, &len), 0);
  ck_assert_int_eq(f.state, OUTFILE_WRITING);
  ck_assert(f.named);
  ck_assert_uint_eq(len, 4);
  write_text(&f, "2\n");
  ck_assert_int_eq(outfile_sync(&f), 0);
  outfile_precommit(&f, 7);
  ck_assert_int_eq(f.state, OUTFILE_PRECOMMITTED);
  ck_assert_uint_eq(f.ckpt, 7);
  ck_assert_str_eq(listing(), ".x.csv.sf-part");
  ck_assert_int_eq(outfile_publish(&f, false), 0);
  ck_assert_int_eq(f.state, OUTFILE_PUBLISHED);
  ck_assert_str_eq(listing(), "x.csv");
  ck_assert_str_eq(contents(target), "h\n1\n2\n");
  outfile_release(&f, true); /* published: a failure afterwards changes nothing */
  ck_assert_str_eq(listing(), "x.csv");
}
END_TEST

START_TEST(test_reuse_and_resume) {
  OutFile f;
  outfile_init(&f);
  /* not there: created */
  ck_assert_int_eq(outfile_open(&f, target, OUTFILE_REUSE), 0);
  ck_assert(!f.existed);
  outfile_release(&f, false);
  ck_assert_str_eq(listing(), "");
  /* there, and no restore takes it over: emptied at the first write */
  put(fixed, "hello world\n");
  ck_assert_int_eq(outfile_open(&f, target, OUTFILE_REUSE), 0);
  ck_assert(f.existed);
  ck_assert_int_eq(f.size, 12);
  ck_assert_str_eq(contents(fixed), "hello world\n");
  write_text(&f, "ab");
  ck_assert_str_eq(contents(fixed), "ab");
  outfile_release(&f, false);
  /* there, and the job fails before writing it: it may be a checkpoint's, so it stays */
  put(fixed, "hello world\n");
  ck_assert_int_eq(outfile_open(&f, target, OUTFILE_REUSE), 0);
  ck_assert(f.named);
  outfile_release(&f, true);
  ck_assert_int_eq(f.state, OUTFILE_LEFT);
  ck_assert_str_eq(contents(fixed), "hello world\n");
  /* written (emptied first): this run's, so a failure removes it */
  ck_assert_int_eq(outfile_open(&f, target, OUTFILE_REUSE), 0);
  write_text(&f, "new");
  ck_assert(!f.named);
  outfile_release(&f, true);
  ck_assert_int_eq(f.state, OUTFILE_DISCARDED);
  ck_assert_str_eq(listing(), "");
  /* there, and a restore goes on with it from byte 5 */
  put(fixed, "hello world\n");
  ck_assert_int_eq(outfile_open(&f, target, OUTFILE_REUSE), 0);
  ck_assert_int_eq(outfile_resume(&f, 5), 0);
  ck_assert(f.named);
  write_text(&f, "XY");
  ck_assert_int_eq(outfile_sync(&f), 0);
  ck_assert_str_eq(contents(fixed), "helloXY");
  ck_assert_int_eq(outfile_publish(&f, true), 0);
  ck_assert_str_eq(contents(target), "helloXY");
  outfile_release(&f, false);
}
END_TEST

START_TEST(test_reopen) {
  OutFile f;
  outfile_init(&f);
  /* the checkpoint's file, missing: refused, nothing made */
  errno = 0;
  ck_assert_int_eq(outfile_reopen(&f, target, false), -1);
  ck_assert_int_eq(errno, ENOENT);
  ck_assert_int_eq(f.state, OUTFILE_CLOSED);
  ck_assert_str_eq(listing(), "");
  /* there: opened as it is, its size known */
  put(fixed, "0123456789");
  ck_assert_int_eq(outfile_reopen(&f, target, false), 0);
  ck_assert_int_eq(f.state, OUTFILE_WRITING);
  ck_assert_int_eq(f.size, 10);
  ck_assert_int_eq(outfile_resume(&f, 3), 0);
  write_text(&f, "abc");
  ck_assert_str_eq(contents(fixed), "012abc");
  outfile_release(&f, true); /* a checkpoint names it: a failure leaves it */
  ck_assert_int_eq(f.state, OUTFILE_LEFT);
  ck_assert_str_eq(listing(), ".x.csv.sf-part");
  /* gone, but published: taken back (a part a later, damaged, checkpoint published) */
  ck_assert_int_eq(rename(fixed, target), 0);
  ck_assert_int_eq(outfile_reopen(&f, target, false), -1); /* not without take_back */
  ck_assert_str_eq(listing(), "x.csv");
  ck_assert_int_eq(outfile_reopen(&f, target, true), 0);
  ck_assert_str_eq(listing(), ".x.csv.sf-part");
  ck_assert_int_eq(f.size, 6);
  outfile_release(&f, false);
  ck_assert_str_eq(listing(), "");
}
END_TEST

START_TEST(test_adopt) {
  OutFile f;
  outfile_init(&f);
  put(fixed, "part\n");
  ck_assert_int_eq(outfile_adopt(&f, target), 0);
  ck_assert_int_eq(f.state, OUTFILE_PRECOMMITTED);
  ck_assert_str_eq(f.tmp, fixed);
  ck_assert_int_eq(f.size, 5);
  ck_assert_int_eq(outfile_publish(&f, true), 0);
  ck_assert_str_eq(listing(), "x.csv");
  outfile_release(&f, false);
  /* an earlier run renamed it already: published */
  ck_assert_int_eq(outfile_adopt(&f, target), 0);
  ck_assert_int_eq(f.state, OUTFILE_PUBLISHED);
  ck_assert_int_eq(f.size, 5);
  ck_assert_str_eq(contents(target), "part\n");
  outfile_release(&f, true);
  ck_assert_str_eq(listing(), "x.csv");
  /* neither there */
  ck_assert_int_eq(unlink(target), 0);
  errno = 0;
  ck_assert_int_eq(outfile_adopt(&f, target), -1);
  ck_assert_int_eq(errno, ENOENT);
  ck_assert_int_eq(f.state, OUTFILE_CLOSED);
  outfile_release(&f, true);
}
END_TEST

/* What is planted at the fixed name (a symbolic link, another hard link, a FIFO, a directory) is
 * refused by every way of taking it, and the file it leads to keeps its bytes. */
START_TEST(test_planted) {
  char victim[160], want[400];
  snprintf(victim, sizeof victim, "%s/victim", dir);
  static const char *kinds[] = {"symlink", "hardlink", "fifo", "dir"};
  static const char *whys[] = {"is a symbolic link", "has another link", "is not a regular file", NULL};
  for (int k = 0; k < 4; k++) {
    for (int way = 0; way < 4; way++) { /* FIXED, REUSE, reopen, adopt */
      put(victim, "the victim\n");
      if (k == 0) ck_assert_int_eq(symlink(victim, fixed), 0);
      if (k == 1) ck_assert_int_eq(link(victim, fixed), 0);
      if (k == 2) ck_assert_int_eq(mkfifo(fixed, 0600), 0);
      if (k == 3) ck_assert_int_eq(mkdir(fixed, 0700), 0);
      OutFile f;
      outfile_init(&f);
      int rc = way == 0 ? outfile_open(&f, target, OUTFILE_FIXED)
               : way == 1 ? outfile_open(&f, target, OUTFILE_REUSE)
               : way == 2 ? outfile_reopen(&f, target, true)
                          : outfile_adopt(&f, target);
      ck_assert_msg(rc == -1, "%s, way %d: taken", kinds[k], way);
      ck_assert_int_eq(f.state, OUTFILE_CLOSED);
      if (whys[k]) {
        snprintf(want, sizeof want, "'%s' %s", fixed, whys[k]);
        ck_assert_str_eq(outfile_why(&f), want);
      } else {
        ck_assert_int_eq(errno, way == 3 ? 0 : EISDIR); /* adopt opens it for reading: not a regular file */
      }
      outfile_release(&f, false);
      ck_assert_str_eq(contents(victim), "the victim\n");
      ck_assert_int_eq(k == 3 ? rmdir(fixed) : unlink(fixed), 0);
    }
  }
  /* taken back only when the target is a regular file */
  put(victim, "the victim\n");
  ck_assert_int_eq(symlink(victim, target), 0);
  OutFile f;
  outfile_init(&f);
  errno = 0;
  ck_assert_int_eq(outfile_reopen(&f, target, true), -1);
  ck_assert_int_eq(errno, ENOENT);
  ck_assert_str_eq(listing(), "victim x.csv");
  ck_assert_int_eq(outfile_adopt(&f, target), -1);
  snprintf(want, sizeof want, "'%s' is gone, and its target is not a regular file", fixed);
  ck_assert_str_eq(outfile_why(&f), want);
  outfile_release(&f, false);
  ck_assert_str_eq(contents(victim), "the victim\n");
}
END_TEST

START_TEST(test_discard) {
  OutFile f;
  outfile_init(&f);
  for (int from = OUTFILE_WRITING; from <= OUTFILE_PRECOMMITTED; from++) {
    ck_assert_int_eq(outfile_open(&f, target, OUTFILE_FIXED), 0);
    write_text(&f, "x\n");
    if (from >= OUTFILE_SYNCED) ck_assert_int_eq(outfile_sync(&f), 0);
    if (from == OUTFILE_PRECOMMITTED) outfile_precommit(&f, 1);
    ck_assert_int_eq(f.state, from);
    ck_assert_str_eq(listing(), ".x.csv.sf-part");
    outfile_discard(&f);
    ck_assert_int_eq(f.state, OUTFILE_DISCARDED);
    ck_assert_int_eq(f.fd, -1);
    ck_assert_str_eq(listing(), "");
  }
  outfile_release(&f, false);
}
END_TEST

/* outfile_release: what is not published goes, unless the job failed and a checkpoint names it. */
START_TEST(test_release) {
  static const struct {
    int state;    /* where the file is */
    bool named;   /* a checkpoint named it while it was written */
    bool failed;  /* the release's argument */
    int end;      /* the state it ends in */
  } cases[] = {
    {OUTFILE_WRITING, false, false, OUTFILE_DISCARDED},
    {OUTFILE_WRITING, false, true, OUTFILE_DISCARDED},
    {OUTFILE_WRITING, true, false, OUTFILE_DISCARDED},
    {OUTFILE_WRITING, true, true, OUTFILE_LEFT},
    {OUTFILE_SYNCED, false, true, OUTFILE_DISCARDED},
    {OUTFILE_SYNCED, true, true, OUTFILE_LEFT},
    {OUTFILE_SYNCED, true, false, OUTFILE_DISCARDED},
    {OUTFILE_PRECOMMITTED, false, true, OUTFILE_LEFT},
    {OUTFILE_PRECOMMITTED, false, false, OUTFILE_DISCARDED},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    OutFile f;
    outfile_init(&f);
    ck_assert_int_eq(outfile_open(&f, target, OUTFILE_FIXED), 0);
    write_text(&f, "x\n");
    uint64_t len;
    if (cases[i].named) ck_assert_int_eq(outfile_checkpoint(&f, &len), 0);
    if (cases[i].state >= OUTFILE_SYNCED) ck_assert_int_eq(outfile_sync(&f), 0);
    if (cases[i].state == OUTFILE_PRECOMMITTED) outfile_precommit(&f, 2);
    outfile_release(&f, cases[i].failed);
    ck_assert_msg((int)f.state == cases[i].end, "case %zu: ends %s", i, outfile_state_name(f.state));
    ck_assert_ptr_null(f.tmp);
    ck_assert_str_eq(listing(), cases[i].end == OUTFILE_LEFT ? ".x.csv.sf-part" : "");
    unlink(fixed);
  }
  /* CLOSED: nothing to do */
  OutFile f;
  outfile_init(&f);
  outfile_release(&f, true);
  ck_assert_int_eq(f.state, OUTFILE_CLOSED);
}
END_TEST

START_TEST(test_open_fails_and_next_part) {
  OutFile f;
  outfile_init(&f);
  char none[160];
  snprintf(none, sizeof none, "%s/none/x.csv", dir);
  errno = 0;
  ck_assert_int_eq(outfile_open(&f, none, OUTFILE_UNIQUE), -1);
  ck_assert_int_eq(errno, ENOENT);
  ck_assert_int_eq(f.state, OUTFILE_CLOSED);
  ck_assert_ptr_null(f.tmp);
  char want[160];
  snprintf(want, sizeof want, "%s/none", dir);
  ck_assert_str_eq(f.dir, want);
  ck_assert_int_eq(outfile_open(&f, none, OUTFILE_FIXED), -1);
  ck_assert_int_eq(f.state, OUTFILE_CLOSED);
  /* a target without a directory: "." */
  ck_assert_int_eq(outfile_open(&f, "x.csv", OUTFILE_UNIQUE), 0); /* (the working directory) */
  ck_assert_str_eq(f.dir, ".");
  outfile_discard(&f);
  /* after a final state, the next part starts again in the same OutFile */
  char part[160];
  for (int i = 0; i < 3; i++) {
    snprintf(part, sizeof part, "%s/x-%06d.csv", dir, i);
    ck_assert_int_eq(outfile_open(&f, part, i == 1 ? OUTFILE_FIXED : OUTFILE_UNIQUE), 0);
    write_text(&f, "h\n");
    ck_assert_int_eq(outfile_sync(&f), 0);
    if (i == 2) {
      outfile_discard(&f);
    } else {
      ck_assert_int_eq(outfile_publish(&f, true), 0);
    }
  }
  outfile_release(&f, false);
  ck_assert_str_eq(listing(), "x-000000.csv x-000001.csv");
}
END_TEST

/* ---- illegal transitions ---- */

/* Puts a new OutFile for target into state `state`. */
static void reach(OutFile *f, int state) {
  outfile_init(f);
  if (state == OUTFILE_CLOSED) return;
  ck_assert_int_eq(outfile_open(f, target, OUTFILE_FIXED), 0);
  if (state == OUTFILE_WRITING) return;
  if (state == OUTFILE_DISCARDED) return outfile_discard(f);
  ck_assert_int_eq(outfile_sync(f), 0);
  if (state == OUTFILE_SYNCED) return;
  if (state == OUTFILE_PUBLISHED) {
    ck_assert_int_eq(outfile_publish(f, false), 0);
    return;
  }
  outfile_precommit(f, 3);
  if (state == OUTFILE_LEFT) outfile_release(f, true);
}

/* Each transition from a state it must refuse. */
static const struct {
  const char *what; /* the transition */
  int from;         /* the state it is tried in */
  const char *want; /* the end of the internal error */
} illegal[] = {
  {"outfile_write", OUTFILE_CLOSED, "outfile_write: the output file '(none)' is closed"},
  {"outfile_write", OUTFILE_SYNCED, "outfile_write: the output file 'T' is synced"},
  {"outfile_write", OUTFILE_PUBLISHED, "outfile_write: the output file 'T' is published"},
  {"outfile_checkpoint", OUTFILE_SYNCED, "outfile_checkpoint: the output file 'T' is synced"},
  {"outfile_checkpoint", OUTFILE_DISCARDED, "outfile_checkpoint: the output file 'T' is discarded"},
  {"outfile_sync", OUTFILE_CLOSED, "outfile_sync: the output file '(none)' is closed"},
  {"outfile_sync", OUTFILE_SYNCED, "outfile_sync: the output file 'T' is synced"},
  {"outfile_sync", OUTFILE_PRECOMMITTED, "outfile_sync: the output file 'T' is pre-committed"},
  {"outfile_precommit", OUTFILE_WRITING, "outfile_precommit: the output file 'T' is writing"},
  {"outfile_precommit", OUTFILE_PRECOMMITTED, "outfile_precommit: the output file 'T' is pre-committed"},
  {"outfile_precommit", OUTFILE_PUBLISHED, "outfile_precommit: the output file 'T' is published"},
  {"outfile_publish", OUTFILE_CLOSED, "outfile_publish: the output file '(none)' is closed"},
  {"outfile_publish", OUTFILE_WRITING, "outfile_publish: the output file 'T' is writing"},
  {"outfile_publish", OUTFILE_PUBLISHED, "outfile_publish: the output file 'T' is published"},
  {"outfile_publish", OUTFILE_DISCARDED, "outfile_publish: the output file 'T' is discarded"},
  {"outfile_publish", OUTFILE_LEFT, "outfile_publish: the output file '(none)' is left"},
  {"outfile_discard", OUTFILE_CLOSED, "outfile_discard: the output file '(none)' is closed"},
  {"outfile_discard", OUTFILE_PUBLISHED, "outfile_discard: the output file 'T' is published"},
  {"outfile_discard", OUTFILE_DISCARDED, "outfile_discard: the output file 'T' is discarded"},
  {"outfile_open", OUTFILE_WRITING, "outfile_open: the output file 'T' is writing"},
  {"outfile_open", OUTFILE_SYNCED, "outfile_open: the output file 'T' is synced"},
  {"outfile_open", OUTFILE_PRECOMMITTED, "outfile_open: the output file 'T' is pre-committed"},
  {"outfile_reopen", OUTFILE_WRITING, "outfile_reopen: the output file 'T' is writing"},
  {"outfile_adopt", OUTFILE_SYNCED, "outfile_adopt: the output file 'T' is synced"},
  {"outfile_resume", OUTFILE_SYNCED, "outfile_resume: the output file 'T' is synced"},
  {"outfile_resume", OUTFILE_WRITING, "outfile_resume: the output file 'T' was made by this run"},
};

/* Tries illegal[i] on a file in its from-state. Never returns when it is refused. */
static void try_illegal(size_t i) {
  OutFile f;
  reach(&f, illegal[i].from);
  const char *w = illegal[i].what;
  uint64_t len;
  if (!strcmp(w, "outfile_write")) outfile_write(&f, "x", 1);
  else if (!strcmp(w, "outfile_checkpoint")) outfile_checkpoint(&f, &len);
  else if (!strcmp(w, "outfile_sync")) outfile_sync(&f);
  else if (!strcmp(w, "outfile_precommit")) outfile_precommit(&f, 4);
  else if (!strcmp(w, "outfile_publish")) outfile_publish(&f, false);
  else if (!strcmp(w, "outfile_discard")) outfile_discard(&f);
  else if (!strcmp(w, "outfile_open")) outfile_open(&f, target, OUTFILE_FIXED);
  else if (!strcmp(w, "outfile_reopen")) outfile_reopen(&f, target, false);
  else if (!strcmp(w, "outfile_adopt")) outfile_adopt(&f, target);
  else if (!strcmp(w, "outfile_resume")) outfile_resume(&f, 0);
}

START_TEST(test_illegal_refused) {
  for (size_t i = 0; i < sizeof illegal / sizeof illegal[0]; i++) {
    int pipefd[2];
    ck_assert_int_eq(pipe(pipefd), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      dup2(pipefd[1], 2);
      close(pipefd[0]);
      signal(SIGABRT, SIG_DFL);
      try_illegal(i);
      _exit(0); /* it was allowed */
    }
    close(pipefd[1]);
    char err[1024];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof err - 1 && (r = read(pipefd[0], err + n, sizeof err - 1 - n)) > 0) n += (size_t)r;
    err[n] = 0;
    close(pipefd[0]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "%s from %s: not refused (status %d)",
                  illegal[i].what, outfile_state_name(illegal[i].from), status);
    /* "internal error at FILE:LINE: MESSAGE\n", the target written as T */
    char want[512], *msg = strstr(err, ": outfile_");
    const char *t = strstr(illegal[i].want, "'T'");
    if (t) snprintf(want, sizeof want, "%.*s'%s'%s\n", (int)(t - illegal[i].want), illegal[i].want, target, t + 3);
    else snprintf(want, sizeof want, "%s\n", illegal[i].want);
    ck_assert_msg(!strncmp(err, "internal error at ", 18) && msg && !strcmp(msg + 2, want),
                  "%s from %s: the message is '%s'", illegal[i].what, outfile_state_name(illegal[i].from), err);
    unlink(fixed);
    unlink(target);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("outfile");
  UNIT_ADD(s, test_unique_publish, setup, teardown);
  UNIT_ADD(s, test_fixed_checkpoint_precommit, setup, teardown);
  UNIT_ADD(s, test_reuse_and_resume, setup, teardown);
  UNIT_ADD(s, test_reopen, setup, teardown);
  UNIT_ADD(s, test_adopt, setup, teardown);
  UNIT_ADD(s, test_planted, setup, teardown);
  UNIT_ADD(s, test_discard, setup, teardown);
  UNIT_ADD(s, test_release, setup, teardown);
  UNIT_ADD(s, test_open_fails_and_next_part, setup, teardown);
  UNIT_ADD(s, test_illegal_refused, setup, teardown);
  return unit_run(s);
}
