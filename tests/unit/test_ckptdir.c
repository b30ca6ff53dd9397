/* test_ckptdir.c: the checkpoint directory on disk (rt/ckptdir.c), without an executor: names,
 * listing, snapshot files (header, CRC, the manifest's size), manifests and removal. Each test
 * works in its own mkdtemp directory, removed by the teardown. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_helper.h"
#include "ckptdir.h"
#include "rt.h"

static char dir[64]; /* the test's directory */

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/sf-ckptdir-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* DIR/rel, in a static buffer (one at a time: copy it to keep it). */
static const char *at(const char *rel) {
  static char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  return path;
}

static void put(const char *rel, const char *text) {
  FILE *f = fopen(at(rel), "w");
  ck_assert_msg(f != NULL, "cannot write '%s': %s", rel, strerror(errno));
  fputs(text, f);
  fclose(f);
}

static void make(const char *rel) { ck_assert_msg(mkdir(at(rel), 0755) == 0, "mkdir %s: %s", rel, strerror(errno)); }

/* The names in DIR/rel, sorted, separated by spaces ("" when empty or missing). */
static char *names_in(const char *rel) {
  char *cmd;
  ck_assert_int_ge(asprintf(&cmd, "cd '%s/%s' 2>/dev/null && ls -A | sort | tr '\\n' ' '", dir, rel), 0);
  FILE *p = popen(cmd, "r");
  free(cmd);
  static char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, p);
  buf[n] = 0;
  pclose(p);
  return buf;
}

/* Writes operator name's snapshot file of checkpoint id, holding state. */
static void write_snap(uint64_t id, const char *name, uint64_t pos, const char *state) {
  Buf b;
  buf_init(&b);
  CkptSnapHead head = { .id = id, .graph = 0x1234, .name = name, .fingerprint = 0x99 };
  ckptdir_snap_encode(&b, &head, 7, 8, pos, state, strlen(state));
  char path[PATH_MAX], file[300];
  snprintf(file, sizeof file, "%s.snap", name);
  ck_assert_int_eq(ckptdir_path(path, sizeof path, dir, id, file), 0);
  ck_assert_int_eq(ckptdir_write_file(path, b.p, b.n, false), 0);
  buf_release(&b);
}

START_TEST(test_paths) {
  char buf[PATH_MAX];
  ck_assert_int_eq(ckptdir_path(buf, sizeof buf, "ck", 12, "a.snap"), 0);
  ck_assert_str_eq(buf, "ck/ckpt-12/a.snap");
  ck_assert_int_eq(ckptdir_path(buf, sizeof buf, "ck", 12, NULL), 0);
  ck_assert_str_eq(buf, "ck/ckpt-12");
  ck_assert_int_eq(ckptdir_path(buf, sizeof buf, "ck", 0, "REQUEST"), 0);
  ck_assert_str_eq(buf, "ck/REQUEST");
  ck_assert_int_eq(ckptdir_path(buf, 8, "ck", 12, "a.snap"), -1);
}
END_TEST

/* an operator that had finished: an empty state and the mark, read back as finished; the mark
 * after a state that is not empty is refused (sf-exec never writes one) */
START_TEST(test_finished_snapshot) {
  make("ckpt-5");
  Buf b;
  buf_init(&b);
  CkptSnapHead head = { .id = 5, .graph = 0x1234, .name = "src", .fingerprint = 0x99, .finished = true };
  ckptdir_snap_encode(&b, &head, 0, 0, 40, "", 0);
  char path[PATH_MAX];
  ck_assert_int_eq(ckptdir_path(path, sizeof path, dir, 5, "src.snap"), 0);
  ck_assert_int_eq(ckptdir_write_file(path, b.p, b.n, false), 0);
  buf_reset(&b);
  head.name = "bad";
  ckptdir_snap_encode(&b, &head, 0, 0, 40, "xy", 2);
  ck_assert_int_eq(ckptdir_path(path, sizeof path, dir, 5, "bad.snap"), 0);
  ck_assert_int_eq(ckptdir_write_file(path, b.p, b.n, false), 0);
  buf_release(&b);
  write_snap(5, "agg", 40, "st");
  ck_assert_int_eq(ckptdir_write_manifest(dir, 5, 40, 0x1234, "t"), 0);
  char why[512] = "";
  char *manifest = ckptdir_read_manifest(dir, 5, why, sizeof why);
  ck_assert_msg(manifest != NULL, "%s", why);
  CkptSnap s = { 0 };
  ck_assert_msg(ckptdir_snap_load(dir, 5, "src", manifest, &s, why, sizeof why), "%s", why);
  ck_assert(s.finished);
  ck_assert_uint_eq(s.state.n, 0);
  ck_assert_uint_eq(s.pos, 40);
  free(s.bytes);
  memset(&s, 0, sizeof s);
  ck_assert_msg(ckptdir_snap_load(dir, 5, "agg", manifest, &s, why, sizeof why), "%s", why);
  ck_assert(!s.finished);
  ck_assert_uint_eq(s.state.n, 2);
  free(s.bytes);
  memset(&s, 0, sizeof s);
  ck_assert(!ckptdir_snap_load(dir, 5, "bad", manifest, &s, why, sizeof why));
  ck_assert_str_eq(why, "'bad.snap' is malformed");
  free(s.bytes);
  free(manifest);
}
END_TEST

/* only ckpt-N (N without a leading zero) counts, newest first */
START_TEST(test_list) {
  make("ckpt-3");
  make("ckpt-12");
  make("ckpt-1");
  make("ckpt-04");
  make("ckpt-x");
  put("ckpt-list.txt", "x");
  int n;
  uint64_t *ids = ckptdir_list(dir, &n);
  ck_assert_int_eq(n, 3);
  ck_assert_uint_eq(ids[0], 12);
  ck_assert_uint_eq(ids[1], 3);
  ck_assert_uint_eq(ids[2], 1);
  free(ids);
}
END_TEST

/* a snapshot written, listed in the manifest and read back; then each kind of damage named */
START_TEST(test_snapshot_files) {
  make("ckpt-4");
  write_snap(4, "agg[1]", 99, "state bytes");
  write_snap(4, "out", 99, "");
  ck_assert_int_eq(ckptdir_write_manifest(dir, 4, 99, 0x1234, "t"), 0);
  char why[512] = "";
  char *manifest = ckptdir_read_manifest(dir, 4, why, sizeof why);
  ck_assert_msg(manifest != NULL, "%s", why);
  int count;
  char **names = ckptdir_manifest_names(manifest, &count);
  ck_assert_int_eq(count, 2);
  ck_assert_msg((!strcmp(names[0], "agg[1]") && !strcmp(names[1], "out")) ||
                (!strcmp(names[1], "agg[1]") && !strcmp(names[0], "out")), "names %s %s", names[0], names[1]);
  ckptdir_names_free(names);
  CkptSnap s = { 0 };
  ck_assert_msg(ckptdir_snap_load(dir, 4, "agg[1]", manifest, &s, why, sizeof why), "%s", why);
  ck_assert_uint_eq(s.next_seq, 7);
  ck_assert_uint_eq(s.taken, 8);
  ck_assert_uint_eq(s.pos, 99);
  ck_assert_uint_eq(s.graph, 0x1234);
  ck_assert_uint_eq(s.fingerprint, 0x99);
  uint64_t graph = 0;
  char gname[64];
  ck_assert(ckptdir_manifest_graph(manifest, &graph, gname, sizeof gname));
  ck_assert_uint_eq(graph, 0x1234);
  ck_assert_str_eq(gname, "t");
  ck_assert_uint_eq(s.state.n, strlen("state bytes"));
  ck_assert_int_eq(memcmp(s.state.p, "state bytes", s.state.n), 0);
  free(s.bytes);

  /* one byte flipped: the CRC says so */
  int fd = open(at("ckpt-4/agg[1].snap"), O_WRONLY);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(pwrite(fd, "\xff", 1, 20), 1);
  close(fd);
  memset(&s, 0, sizeof s);
  ck_assert(!ckptdir_snap_load(dir, 4, "agg[1]", manifest, &s, why, sizeof why));
  ck_assert_str_eq(why, "'agg[1].snap' fails its CRC");
  free(s.bytes);
  /* another size than the manifest's */
  put("ckpt-4/out.snap", "SFCKPT1\nshort");
  memset(&s, 0, sizeof s);
  ck_assert(!ckptdir_snap_load(dir, 4, "out", manifest, &s, why, sizeof why));
  ck_assert_str_eq(why, "'out.snap' is not the file its manifest lists");
  free(s.bytes);
  /* a snapshot of another operator under this one's name */
  write_snap(4, "other", 99, "");
  char from[PATH_MAX];
  snprintf(from, sizeof from, "%s", at("ckpt-4/other.snap"));
  ck_assert_int_eq(rename(from, at("ckpt-4/out.snap")), 0);
  free(manifest);
  ck_assert_int_eq(ckptdir_write_manifest(dir, 4, 99, 0x1234, "t"), 0);
  manifest = ckptdir_read_manifest(dir, 4, why, sizeof why);
  memset(&s, 0, sizeof s);
  ck_assert(!ckptdir_snap_load(dir, 4, "out", manifest, &s, why, sizeof why));
  ck_assert_str_eq(why, "'out.snap' belongs to another checkpoint or operator");
  free(s.bytes);
  free(manifest);
}
END_TEST

START_TEST(test_manifest_missing_or_malformed) {
  make("ckpt-2");
  char why[512];
  ck_assert_ptr_null(ckptdir_read_manifest(dir, 2, why, sizeof why));
  ck_assert_str_eq(why, "no manifest: it never completed");
  put("ckpt-2/MANIFEST", "sf-checkpoint 2\nid 3\ngraph 0000000000001234 t\n");
  ck_assert_ptr_null(ckptdir_read_manifest(dir, 2, why, sizeof why));
  ck_assert_str_eq(why, "its manifest is malformed");
  put("ckpt-2/MANIFEST", "sf-checkpoint 1\nid 2\nposition 5\n");
  ck_assert_ptr_null(ckptdir_read_manifest(dir, 2, why, sizeof why));
  ck_assert_str_eq(why, "another version of sf-exec wrote it");
}
END_TEST

/* A complete checkpoint id of operators a and b, as sf-exec leaves one. */
static void make_ckpt(uint64_t id) {
  char rel[64];
  snprintf(rel, sizeof rel, "ckpt-%llu", (unsigned long long)id);
  make(rel);
  write_snap(id, "a", 1, "x");
  write_snap(id, "b[1]", 1, "");
  snprintf(rel, sizeof rel, "ckpt-%llu/host-all.done", (unsigned long long)id);
  put(rel, "");
  ck_assert_int_eq(ckptdir_write_manifest(dir, id, 1, 0x1234, "t"), 0);
}

static void remove_refused(uint64_t id, const char *want) {
  char why[PATH_MAX + 200] = "";
  ck_assert_int_eq(ckptdir_check(dir, id, why, sizeof why), -1);
  ck_assert_str_eq(why, want);
  why[0] = 0;
  ck_assert_int_eq(ckptdir_remove(dir, id, why, sizeof why), -1);
  ck_assert_str_eq(why, want);
}

START_TEST(test_remove) {
  make_ckpt(5);
  put("ckpt-5/b[1].snap.tmp", "half"); /* a snapshot being written when the job died */
  make("ckpt-6");
  char why[PATH_MAX + 200];
  ck_assert_int_eq(ckptdir_check(dir, 5, why, sizeof why), 0);
  ck_assert_int_eq(ckptdir_remove(dir, 5, why, sizeof why), 0);
  ck_assert_str_eq(names_in("."), "ckpt-6 ");
  ck_assert_int_eq(ckptdir_remove(dir, 7, why, sizeof why), 0); /* not there: nothing to do */
}
END_TEST

/* two executors of one job removing the same old checkpoint at once (a fresh start of a
 * distributed job): an entry the other removed between a look at it and its opening is gone, not
 * foreign, and both succeed */
START_TEST(test_remove_concurrently) {
  for (int round = 0; round < 10; round++) {
    char rel[64];
    make("ckpt-9");
    for (int i = 0; i < 100; i++) {
      snprintf(rel, sizeof rel, "op%d", i);
      write_snap(9, rel, 1, "state");
    }
    ck_assert_int_eq(ckptdir_write_manifest(dir, 9, 1, 0x1234, "t"), 0);
    fflush(NULL);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    char why[PATH_MAX + 200] = "";
    int rc = ckptdir_remove(dir, 9, why, sizeof why);
    if (child == 0) _exit(rc == 0 ? 0 : 1);
    int st;
    ck_assert_int_eq(waitpid(child, &st, 0), child);
    ck_assert_msg(rc == 0, "round %d: %s", round, why);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "round %d: the other remover failed", round);
    ck_assert_str_eq(names_in("."), "");
  }
}
END_TEST

/* what sf did not write is never removed: a foreign file (and the checkpoint it is in), a
 * symbolic link in sf's name (its target untouched), a file where a directory should be, a file
 * with sf's name but not its header */
START_TEST(test_remove_only_sfs) {
  char buf[PATH_MAX + 200];
  make("ckpt-1000");
  put("ckpt-1000/model.bin", "weights");
  snprintf(buf, sizeof buf, "'%s/ckpt-1000' holds 'model.bin', which sf-exec did not write", dir);
  remove_refused(1000, buf);
  ck_assert_str_eq(names_in("ckpt-1000"), "model.bin ");

  make("elsewhere");
  put("elsewhere/keep.txt", "mine");
  put("elsewhere/a.snap", "mine too");
  ck_assert_int_eq(symlink("elsewhere", at("ckpt-7")), 0);
  snprintf(buf, sizeof buf, "'%s/ckpt-7' is a symbolic link", dir);
  remove_refused(7, buf);
  ck_assert_str_eq(names_in("elsewhere"), "a.snap keep.txt ");

  put("ckpt-8", "a file");
  snprintf(buf, sizeof buf, "'%s/ckpt-8' is not a directory", dir);
  remove_refused(8, buf);

  make_ckpt(3);
  put("ckpt-3/notes.txt", "n");
  snprintf(buf, sizeof buf, "'%s/ckpt-3' holds 'notes.txt', which sf-exec did not write", dir);
  remove_refused(3, buf);
  ck_assert_str_eq(names_in("ckpt-3"), "MANIFEST a.snap b[1].snap host-all.done notes.txt ");
  ck_assert_int_eq(unlink(at("ckpt-3/notes.txt")), 0);

  ck_assert_int_eq(symlink("../elsewhere/keep.txt", at("ckpt-3/c.snap")), 0);
  snprintf(buf, sizeof buf, "'%s/ckpt-3/c.snap' is a symbolic link", dir);
  remove_refused(3, buf);
  ck_assert_int_eq(unlink(at("ckpt-3/c.snap")), 0);

  put("ckpt-3/c.snap", "not a snapshot");
  snprintf(buf, sizeof buf, "'%s/ckpt-3/c.snap' is not a snapshot sf-exec wrote", dir);
  remove_refused(3, buf);
  ck_assert_int_eq(unlink(at("ckpt-3/c.snap")), 0);

  ck_assert_int_eq(mkfifo(at("ckpt-3/host-h1.done"), 0644), 0);
  snprintf(buf, sizeof buf, "'%s/ckpt-3/host-h1.done' is not a regular file", dir);
  remove_refused(3, buf);
  ck_assert_int_eq(unlink(at("ckpt-3/host-h1.done")), 0);

  ck_assert_int_eq(unlink(at("ckpt-3/MANIFEST")), 0);
  put("ckpt-3/MANIFEST", "my own list\n");
  snprintf(buf, sizeof buf, "'%s/ckpt-3/MANIFEST' is not a manifest sf-exec wrote", dir);
  remove_refused(3, buf);
  ck_assert_int_eq(unlink(at("ckpt-3/MANIFEST")), 0);

  ck_assert_int_eq(ckptdir_remove(dir, 3, buf, sizeof buf), 0);
  ck_assert_str_eq(names_in("."), "ckpt-1000 ckpt-7 ckpt-8 elsewhere ");
}
END_TEST

/* a FIFO or a link where a checkpoint's file should be is refused at once: never waited on in
 * open(2), never followed */
START_TEST(test_read_only_regular_files) {
  make("ckpt-2");
  ck_assert_int_eq(mkfifo(at("ckpt-2/MANIFEST"), 0644), 0);
  char why[512];
  ck_assert_ptr_null(ckptdir_read_manifest(dir, 2, why, sizeof why));
  ck_assert_str_eq(why, "cannot read 'MANIFEST': not a regular file");
  ck_assert_int_eq(unlink(at("ckpt-2/MANIFEST")), 0);
  write_snap(2, "a", 1, "");
  ck_assert_int_eq(ckptdir_write_manifest(dir, 2, 1, 0x1234, "t"), 0);
  char *manifest = ckptdir_read_manifest(dir, 2, why, sizeof why);
  ck_assert_ptr_nonnull(manifest);
  ck_assert_int_eq(unlink(at("ckpt-2/a.snap")), 0);
  ck_assert_int_eq(mkfifo(at("ckpt-2/a.snap"), 0644), 0);
  CkptSnap s = { 0 };
  ck_assert(!ckptdir_snap_load(dir, 2, "a", manifest, &s, why, sizeof why));
  ck_assert_str_eq(why, "cannot read 'a.snap': not a regular file");
  ck_assert_int_eq(unlink(at("ckpt-2/a.snap")), 0);
  put("target", "x");
  ck_assert_int_eq(symlink("../target", at("ckpt-2/a.snap")), 0);
  ck_assert(!ckptdir_snap_load(dir, 2, "a", manifest, &s, why, sizeof why));
  ck_assert_str_eq(why, "cannot read 'a.snap': a symbolic link");
  free(manifest);
}
END_TEST

/* ---- identities ---- */

#define SCHEMAS                                                                                      \
  "<schema name=\"E\"><attr name=\"k\" type=\"int\"/><attr name=\"j\" type=\"int\"/>"              \
  "<attr name=\"v\" type=\"int\"/></schema>\n"                                                      \
  "<schema name=\"S\"><attr name=\"k\" type=\"int\"/><attr name=\"m\" type=\"int\"/></schema>\n"
#define SOURCE                                                                                       \
  "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"E\"/>"                       \
  "<param name=\"count\">10</param><set attr=\"k\">seq % 3</set><set attr=\"j\">seq % 2</set>"      \
  "<set attr=\"v\">seq</set></operator>\n"
#define SINK "<operator name=\"out\" kind=\"FileSink\"><input stream=\"B\"/><param name=\"file\">o.csv</param></operator>\n"

/* The graph named name holding SOURCE, the Aggregate agg (its attributes and children given) and SINK. */
static Graph *agg_graph(const char *name, const char *agg_attrs, const char *agg_body) {
  char *text;
  ck_assert_int_ge(asprintf(&text, "<?xml version=\"1.0\"?>\n<graph xmlns=\"urn:streamfission:graph:1\" name=\"%s\">\n"
                                   "%s%s<operator name=\"agg\" kind=\"Aggregate\"%s><input stream=\"A\"/>"
                                   "<output stream=\"B\" schema=\"S\"/>%s</operator>\n%s</graph>\n",
                            name, SCHEMAS, SOURCE, agg_attrs, agg_body, SINK), 0);
  Graph *g = unit_graph_text(text);
  free(text);
  return g;
}

static uint64_t agg_fingerprint(const char *attrs, const char *body) {
  Graph *g = agg_graph("t", attrs, body);
  uint64_t fp = ckptdir_op_fingerprint(graph_find_op(g, "agg"));
  graph_free(g);
  return fp;
}

static uint64_t identity(const char *name, const char *attrs, const char *body) {
  Graph *g = agg_graph(name, attrs, body);
  uint64_t id = ckptdir_graph_identity(g);
  graph_free(g);
  return id;
}

#define AGG_BODY(PART, FN, WINDOW)                                                                   \
  "<param name=\"partitionBy\">" PART "</param><param name=\"window\">" WINDOW "</param>"           \
  "<set attr=\"m\">" FN "(v)</set>"

/* what a snapshot depends on changes the fingerprint; where the operator runs and how its
 * parameters are ordered do not */
START_TEST(test_fingerprints) {
  uint64_t base = agg_fingerprint("", AGG_BODY("k", "max", "tumbling 4"));
  ck_assert_uint_eq(agg_fingerprint("", AGG_BODY("k", "max", "tumbling 4")), base);
  ck_assert_uint_ne(agg_fingerprint("", AGG_BODY("k j", "max", "tumbling 4")), base);
  ck_assert_uint_ne(agg_fingerprint("", AGG_BODY("k", "min", "tumbling 4")), base);
  ck_assert_uint_ne(agg_fingerprint("", AGG_BODY("k", "max", "tumbling 5")), base);
  ck_assert_uint_eq(agg_fingerprint("", "<param name=\"window\">tumbling 4</param><param name=\"partitionBy\">k</param>"
                                        "<set attr=\"m\">max(v)</set>"), base);
  ck_assert_uint_eq(agg_fingerprint(" width=\"3\"", AGG_BODY("k", "max", "tumbling 4")), base);
  /* a let the aggregates read changes what they hold */
  uint64_t let = agg_fingerprint("", AGG_BODY("k", "max", "tumbling 4") "<let name=\"w\" type=\"int\">v * 2</let>");
  ck_assert_uint_ne(let, base);
  ck_assert_uint_eq(agg_fingerprint("", AGG_BODY("k", "max", "tumbling 4") "<let name=\"w\" type=\"int\">v * 2</let>"), let);
  ck_assert_uint_ne(agg_fingerprint("", AGG_BODY("k", "max", "tumbling 4") "<let name=\"w\" type=\"int\">v * 3</let>"), let);
  /* the graph: its name and operators, not their definitions (those are the fingerprints') */
  uint64_t id = identity("t", "", AGG_BODY("k", "max", "tumbling 4"));
  ck_assert_uint_eq(identity("t", "", AGG_BODY("k j", "min", "tumbling 5")), id);
  ck_assert_uint_ne(identity("other", "", AGG_BODY("k", "max", "tumbling 4")), id);
}
END_TEST

/* the graph of an incomplete checkpoint is in its snapshots */
START_TEST(test_graph_of) {
  make("ckpt-9");
  uint64_t graph = 0;
  char name[64] = "x";
  ck_assert_int_eq(ckptdir_graph_of(dir, 9, &graph, name, sizeof name), 0);
  write_snap(9, "a", 1, "");
  ck_assert_int_eq(ckptdir_graph_of(dir, 9, &graph, name, sizeof name), 1);
  ck_assert_uint_eq(graph, 0x1234);
  ck_assert_str_eq(name, "");
  ck_assert_int_eq(ckptdir_write_manifest(dir, 9, 1, 0x5678, "named"), 0);
  ck_assert_int_eq(ckptdir_graph_of(dir, 9, &graph, name, sizeof name), 1);
  ck_assert_uint_eq(graph, 0x5678);
  ck_assert_str_eq(name, "named");
}
END_TEST

int main(void) {
  Suite *s = suite_create("ckptdir");
  UNIT_ADD(s, test_paths, setup, teardown);
  UNIT_ADD(s, test_list, setup, teardown);
  UNIT_ADD(s, test_snapshot_files, setup, teardown);
  UNIT_ADD(s, test_finished_snapshot, setup, teardown);
  UNIT_ADD(s, test_manifest_missing_or_malformed, setup, teardown);
  UNIT_ADD(s, test_remove, setup, teardown);
  UNIT_ADD(s, test_remove_only_sfs, setup, teardown);
  UNIT_ADD(s, test_remove_concurrently, setup, teardown);
  UNIT_ADD(s, test_read_only_regular_files, setup, teardown);
  UNIT_ADD(s, test_fingerprints, NULL, NULL);
  UNIT_ADD(s, test_graph_of, setup, teardown);
  return unit_run(s);
}
