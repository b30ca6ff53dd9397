/* test_ops.c: the built-in transforming kinds (rt/ops/functor.c, filter.c, flatmap.c, aggregate.c,
 * dedup.c, work.c) run end to end by the executor.
 *
 * Each test writes a small graph (a Beacon, the operator under test, a FileSink) into its own
 * temporary directory, parses and checks it against the source tree's graph.xsd, runs it with
 * exec_run and compares the CSV the sink wrote with the text worked out by hand, byte for byte.
 * Run-time faults must make exec_run fail with the exact message in the log and leave no output
 * file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_helper.h"
#include "rt.h"
#include "sf.h"

/* ---- helpers ---- */

/* What running a graph gave. */
typedef struct Result {
  int rc;    /* exec_run's status */
  char *log; /* what it wrote to its log */
  char *out; /* the output file's text, NULL when there is none */
} Result;

/* text with every "@OUT@" replaced by out, malloc'd. */
static char *replace_out(const char *text, const char *out) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  for (const char *p = text; *p;) {
    if (!strncmp(p, "@OUT@", 5)) {
      fputs(out, m);
      p += 5;
    } else {
      fputc(*p++, m);
    }
  }
  fclose(m);
  return buf;
}

/* Writes g parallelized at `width` (what sf-xform -w width does, on one local host) to path. */
static void write_parallel(Graph *g, int width, const char *path) {
  static Host local = {"local", "127.0.0.1:7470", 0};
  static Host *hosts[] = {&local};
  graph_analyze(g);
  Graph *p = fission_rewrite(fission_regions(g, width));
  p->hosts = hosts;
  p->nhosts = 1;
  Diag d;
  diag_init(&d, path, stderr);
  int errors = graph_place(p, &d);
  diag_flush(&d, DIAG_BY_PLACE);
  ck_assert_int_eq(errors, 0);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(graph_emit_xml(p, f), 0);
  ck_assert_int_eq(fclose(f), 0);
  graph_free(p);
}

/* Runs the graph whose <graph> element holds body, parallelized at `width` first unless width is
 * 0; "@OUT@" in body stands for the absolute path of out.csv in a fresh temporary directory. The
 * graph must parse and check. */
static Result run_width(const char *body, int width) {
  char dir[] = "/tmp/sf-test-ops-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char out[sizeof dir + 16], path[sizeof dir + 16], parallel[sizeof dir + 16];
  snprintf(out, sizeof out, "%s/out.csv", dir);
  snprintf(path, sizeof path, "%s/g.xml", dir);
  snprintf(parallel, sizeof parallel, "%s/p.xml", dir);
  char *graph_body = replace_out(body, out);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graph xmlns=\"urn:streamfission:graph:1\" "
             "name=\"t\">\n%s</graph>\n", graph_body);
  ck_assert_int_eq(fclose(f), 0);
  free(graph_body);

  Graph *g = unit_graph_file(path);
  if (width > 0) {
    write_parallel(g, width, parallel);
    graph_free(g);
    g = unit_graph_file(parallel);
  }
  Result r = {0};
  size_t loglen = 0;
  FILE *log = open_memstream(&r.log, &loglen);
  ExecOptions o = {.graph_path = width > 0 ? parallel : path, .log = log};
  r.rc = exec_run(g, &o);
  fclose(log);
  graph_free(g);
  r.out = unit_read_file(out, NULL);

  unlink(out);
  unlink(path);
  unlink(parallel);
  ck_assert_msg(rmdir(dir) == 0, "the job left files in %s", dir);
  return r;
}

static Result run(const char *body) {
  return run_width(body, 0);
}

static void result_free(Result *r) {
  free(r->log);
  free(r->out);
}

/* Runs body and expects success with exactly `expected` in the output file. */
static void expect_output(const char *body, const char *expected) {
  Result r = run(body);
  ck_assert_msg(r.rc == 0, "exec_run failed: %s", r.log);
  ck_assert_ptr_nonnull(r.out);
  ck_assert_str_eq(r.out, expected);
  result_free(&r);
}

/* Runs body and expects failure with `message` as a line of the log and no output file. */
static void expect_error(const char *body, const char *message) {
  Result r = run(body);
  ck_assert_int_ne(r.rc, 0);
  ck_assert_msg(strstr(r.log, message) != NULL, "log lacks\n%s\nit is\n%s", message, r.log);
  ck_assert_msg(r.out == NULL, "a failed job left an output file:\n%s", r.out);
  result_free(&r);
}

/* A FileSink writing stream S to the test's out.csv. */
#define SINK(S) \
  "<operator name=\"sink\" kind=\"FileSink\"><input stream=\"" S "\"/>" \
  "<param name=\"file\">@OUT@</param></operator>\n"

/* ---- Functor ---- */

START_TEST(test_functor_sets_and_forwards) {
  expect_output(
      "<schema name=\"In\"><attr name=\"k\" type=\"int\"/><attr name=\"x\" type=\"int\"/>"
      "<attr name=\"s\" type=\"string\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"s\" type=\"string\"/><attr name=\"y\" type=\"int\"/>"
      "<attr name=\"k\" type=\"int\"/><attr name=\"d\" type=\"double\"/><attr name=\"b\" type=\"bool\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">4</param><set attr=\"k\">seq % 2</set><set attr=\"x\">seq * 10</set>"
      "<set attr=\"s\">\"a\" + str(seq)</set></operator>\n"
      "<operator name=\"f\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
      "<set attr=\"y\">x + 1</set><set attr=\"d\">double(x) / 4.0</set><set attr=\"b\">x &gt; 15</set>"
      "</operator>\n" SINK("B"),
      "s,y,k,d,b\n"
      "a0,1,0,0,false\n"
      "a1,11,1,2.5,false\n"
      "a2,21,0,5,true\n"
      "a3,31,1,7.5,true\n");
}
END_TEST

START_TEST(test_functor_where_without_sets) {
  expect_output(
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/><attr name=\"s\" type=\"string\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">5</param><set attr=\"x\">seq * 10</set><set attr=\"s\">str(seq)</set></operator>\n"
      "<operator name=\"f\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
      "<param name=\"where\">x % 20 == 0</param></operator>\n" SINK("B"),
      "x,s\n0,0\n20,2\n40,4\n");
}
END_TEST

/* State per key, updated in order (r sees the new n and tot); `where` drops the first tuple of each
 * key, whose updates still count. */
START_TEST(test_functor_state_per_key) {
  expect_output(
      "<schema name=\"In\"><attr name=\"k\" type=\"int\"/><attr name=\"x\" type=\"int\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"k\" type=\"int\"/><attr name=\"x\" type=\"int\"/>"
      "<attr name=\"n\" type=\"int\"/><attr name=\"tot\" type=\"int\"/><attr name=\"seen\" type=\"string\"/>"
      "<attr name=\"r\" type=\"int\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">6</param><set attr=\"k\">seq % 2</set><set attr=\"x\">seq</set></operator>\n"
      "<operator name=\"f\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
      "<param name=\"partitionBy\">k</param><param name=\"where\">n &gt;= 2</param>"
      "<state name=\"n\" type=\"int\" init=\"0\">n + 1</state>"
      "<state name=\"tot\" type=\"int\" init=\"100\">tot + x</state>"
      "<state name=\"seen\" type=\"string\" init=\"&quot;&quot;\">seen + str(x)</state>"
      "<state name=\"r\" type=\"int\" init=\"-1\">tot * 10 + n</state>"
      "<set attr=\"n\">n</set><set attr=\"tot\">tot</set><set attr=\"seen\">seen</set><set attr=\"r\">r</set>"
      "</operator>\n" SINK("B"),
      "k,x,n,tot,seen,r\n"
      "0,2,2,102,02,1022\n"
      "1,3,2,104,13,1042\n"
      "0,4,3,106,024,1063\n"
      "1,5,3,109,135,1093\n");
}
END_TEST

/* `set` and `state` keep their written order, which is evaluation order: a set sees the states
 * written before it updated by this tuple and the later ones as they were before it, per key, with
 * a string state too. The expected rows are computed here by that rule, step by step. */
START_TEST(test_functor_set_state_order) {
  const char *graph =
      "<schema name=\"In\"><attr name=\"k\" type=\"int\"/><attr name=\"x\" type=\"int\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"k\" type=\"int\"/><attr name=\"x\" type=\"int\"/>"
      "<attr name=\"first\" type=\"int\"/><attr name=\"mid\" type=\"int\"/><attr name=\"last\" type=\"int\"/>"
      "<attr name=\"tag\" type=\"string\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">12</param><set attr=\"k\">seq % 3 % 2</set><set attr=\"x\">seq * 7 % 5</set></operator>\n"
      "<operator name=\"f\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
      "<param name=\"partitionBy\">k</param>"
      "<set attr=\"first\">s * 1000 + t</set>"
      "<state name=\"s\" type=\"int\" init=\"0\">s + x</state>"
      "<set attr=\"tag\">w + \"/\" + str(s)</set>"
      "<set attr=\"mid\">s * 1000 + t</set>"
      "<state name=\"t\" type=\"int\" init=\"1\">(t * 3 + s) % 1000</state>"
      "<state name=\"w\" type=\"string\" init=\"&quot;&quot;\">w + str(x)</state>"
      "<set attr=\"last\">s * 1000 + t</set>"
      "</operator>\n" SINK("B");
  char want[4096];
  int n = snprintf(want, sizeof want, "k,x,first,mid,last,tag\n");
  long long s[2] = {0, 0}, t[2] = {1, 1};
  char w[2][64] = {"", ""};
  for (int seq = 0; seq < 12; seq++) {
    int k = seq % 3 % 2, x = seq * 7 % 5;
    long long first = s[k] * 1000 + t[k];
    s[k] += x;
    char tag[96];
    snprintf(tag, sizeof tag, "%s/%lld", w[k], s[k]); /* w not yet updated */
    long long mid = s[k] * 1000 + t[k];
    t[k] = (t[k] * 3 + s[k]) % 1000;
    snprintf(w[k] + strlen(w[k]), sizeof w[k] - strlen(w[k]), "%d", x);
    long long last = s[k] * 1000 + t[k];
    n += snprintf(want + n, sizeof want - (size_t)n, "%d,%d,%lld,%lld,%lld,%s\n", k, x, first, mid, last, tag);
  }
  expect_output(graph, want);
}
END_TEST

/* Without partitionBy one state serves every tuple whatever its attributes; string state grows
 * past its first buffer and shrinks onto itself (substr of its own value). */
START_TEST(test_functor_state_without_partition) {
  expect_output(
      "<schema name=\"In\"><attr name=\"k\" type=\"int\"/><attr name=\"x\" type=\"int\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"x\" type=\"int\"/><attr name=\"total\" type=\"int\"/>"
      "<attr name=\"glen\" type=\"int\"/><attr name=\"tail\" type=\"string\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">4</param><set attr=\"k\">seq % 2</set><set attr=\"x\">seq</set></operator>\n"
      "<operator name=\"f\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
      "<state name=\"sum\" type=\"int\" init=\"0\">sum + x</state>"
      "<state name=\"grow\" type=\"string\" init=\"&quot;&quot;\">grow + \"0123456789\"</state>"
      "<state name=\"rest\" type=\"string\" init=\"&quot;abcdef&quot;\">substr(rest, 1, 100)</state>"
      "<set attr=\"total\">sum</set><set attr=\"glen\">len(grow)</set><set attr=\"tail\">rest</set>"
      "</operator>\n" SINK("B"),
      "x,total,glen,tail\n"
      "0,0,10,bcdef\n"
      "1,1,20,cdef\n"
      "2,3,30,def\n"
      "3,6,40,ef\n");
}
END_TEST

/* ---- Filter ---- */

START_TEST(test_filter) {
  expect_output(
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/><attr name=\"s\" type=\"string\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">6</param><set attr=\"x\">seq</set><set attr=\"s\">\"s\" + str(seq)</set></operator>\n"
      "<operator name=\"f\" kind=\"Filter\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
      "<param name=\"where\">x % 3 != 1</param></operator>\n" SINK("B"),
      "x,s\n0,s0\n2,s2\n3,s3\n5,s5\n");
}
END_TEST

/* ---- FlatMap ---- */

START_TEST(test_flatmap_index_and_zero_count) {
  expect_output(
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"x\" type=\"int\"/><attr name=\"i\" type=\"int\"/>"
      "<attr name=\"tag\" type=\"string\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">5</param><set attr=\"x\">seq</set></operator>\n"
      "<operator name=\"fm\" kind=\"FlatMap\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
      "<param name=\"count\">x % 3</param><set attr=\"i\">i</set>"
      "<set attr=\"tag\">str(x) + \"-\" + str(i)</set></operator>\n" SINK("B"),
      "x,i,tag\n1,0,1-0\n2,0,2-0\n2,1,2-1\n4,0,4-0\n");
}
END_TEST

/* ---- Aggregate ---- */

/* Every aggregate function over tumbling windows of 3 per key; key 0's fourth tuple is an
 * incomplete window at the end and is discarded. */
START_TEST(test_aggregate_tumbling_every_function) {
  expect_output(
      "<schema name=\"In\"><attr name=\"k\" type=\"int\"/><attr name=\"x\" type=\"int\"/>"
      "<attr name=\"d\" type=\"double\"/><attr name=\"s\" type=\"string\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"k\" type=\"int\"/><attr name=\"n\" type=\"int\"/>"
      "<attr name=\"sx\" type=\"int\"/><attr name=\"sd\" type=\"double\"/><attr name=\"ax\" type=\"double\"/>"
      "<attr name=\"ad\" type=\"double\"/><attr name=\"mnx\" type=\"int\"/><attr name=\"mxd\" type=\"double\"/>"
      "<attr name=\"mns\" type=\"string\"/><attr name=\"mxs\" type=\"string\"/><attr name=\"f\" type=\"string\"/>"
      "<attr name=\"l\" type=\"int\"/><attr name=\"e\" type=\"int\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">7</param><set attr=\"k\">seq % 2</set><set attr=\"x\">seq * 7 % 5</set>"
      "<set attr=\"d\">double(seq * 7 % 5) + 0.5</set><set attr=\"s\">substr(\"qwertyu\", seq, 1)</set>"
      "</operator>\n"
      "<operator name=\"agg\" kind=\"Aggregate\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
      "<param name=\"partitionBy\">k</param><param name=\"window\">tumbling 3</param>"
      "<set attr=\"n\">count()</set><set attr=\"sx\">sum(x)</set><set attr=\"sd\">sum(d)</set>"
      "<set attr=\"ax\">avg(x)</set><set attr=\"ad\">avg(d)</set><set attr=\"mnx\">min(x)</set>"
      "<set attr=\"mxd\">max(d)</set><set attr=\"mns\">min(s)</set><set attr=\"mxs\">max(s)</set>"
      "<set attr=\"f\">first(s)</set><set attr=\"l\">last(x)</set>"
      "<set attr=\"e\">sum(x) * 10 + count() + k</set></operator>\n" SINK("B"),
      "k,n,sx,sd,ax,ad,mnx,mxd,mns,mxs,f,l,e\n"
      "0,3,7,8.5,2.3333333333333335,2.8333333333333335,0,4.5,e,t,q,3,73\n"
      "1,3,3,4.5,1,1.5,0,2.5,r,y,w,0,34\n");
}
END_TEST

/* Ties keep the first value (0.0 and -0.0 are equal to value_compare), and without partitionBy the
 * whole stream is one key whose fifth tuple is discarded. */
START_TEST(test_aggregate_tumbling_ties) {
  expect_output(
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/><attr name=\"d\" type=\"double\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"mn\" type=\"double\"/><attr name=\"mx\" type=\"double\"/>"
      "<attr name=\"f\" type=\"double\"/><attr name=\"l\" type=\"double\"/><attr name=\"sx\" type=\"int\"/>"
      "</schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">5</param><set attr=\"x\">seq - 3</set>"
      "<set attr=\"d\">(seq % 2 == 0) == (seq &lt; 2) ? 0.0 : -0.0</set></operator>\n"
      "<operator name=\"agg\" kind=\"Aggregate\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
      "<param name=\"window\">tumbling 2</param>"
      "<set attr=\"mn\">min(d)</set><set attr=\"mx\">max(d)</set><set attr=\"f\">first(d)</set>"
      "<set attr=\"l\">last(d)</set><set attr=\"sx\">sum(x)</set></operator>\n" SINK("B"),
      "mn,mx,f,l,sx\n"
      "0,0,0,-0,-5\n"
      "-0,-0,-0,0,-1\n");
}
END_TEST

/* A sum of ints is the exact sum of the window, whatever the order: INT64_MAX + 1 - 1 is INT64_MAX in
 * a tumbling window (although INT64_MAX + 1 is no int64); sliding windows of extremes that cancel
 * out sum exactly too. */
START_TEST(test_aggregate_int_sum_exact) {
  const char *head =
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"sx\" type=\"int\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">6</param>"
      "<set attr=\"x\">seq % 3 == 0 ? 9223372036854775807 : seq % 3 == 1 ? 1 : -1</set></operator>\n";
  char body[4096];
  snprintf(body, sizeof body, "%s%s", head,
           "<operator name=\"agg\" kind=\"Aggregate\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
           "<param name=\"window\">tumbling 3</param><set attr=\"sx\">sum(x)</set></operator>\n" SINK("B"));
  expect_output(body, "sx\n9223372036854775807\n9223372036854775807\n");
  snprintf(body, sizeof body, "%s",
           "<schema name=\"In\"><attr name=\"x\" type=\"int\"/></schema>\n"
           "<schema name=\"Out\"><attr name=\"sx\" type=\"int\"/></schema>\n"
           "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
           "<param name=\"count\">5</param>"
           "<set attr=\"x\">seq % 2 == 0 ? 9223372036854775807 - seq : -9223372036854775807</set></operator>\n"
           "<operator name=\"agg\" kind=\"Aggregate\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
           "<param name=\"window\">sliding 2</param><set attr=\"sx\">sum(x)</set></operator>\n" SINK("B"));
  expect_output(body, "sx\n9223372036854775807\n0\n-2\n-2\n-4\n");
}
END_TEST

START_TEST(test_aggregate_sliding_per_key) {
  expect_output(
      "<schema name=\"In\"><attr name=\"k\" type=\"int\"/><attr name=\"x\" type=\"int\"/>"
      "<attr name=\"d\" type=\"double\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"k\" type=\"int\"/><attr name=\"n\" type=\"int\"/>"
      "<attr name=\"sd\" type=\"double\"/><attr name=\"f\" type=\"int\"/><attr name=\"l\" type=\"int\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">5</param><set attr=\"k\">seq % 2</set><set attr=\"x\">seq</set>"
      "<set attr=\"d\">double(seq) * 1.5</set></operator>\n"
      "<operator name=\"agg\" kind=\"Aggregate\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
      "<param name=\"partitionBy\">k</param><param name=\"window\">sliding 2</param>"
      "<set attr=\"n\">count()</set><set attr=\"sd\">sum(d)</set><set attr=\"f\">first(x)</set>"
      "<set attr=\"l\">last(x)</set></operator>\n" SINK("B"),
      "k,n,sd,f,l\n"
      "0,1,0,0,0\n"
      "1,1,1.5,1,1\n"
      "0,2,3,0,2\n"
      "1,2,6,1,3\n"
      "0,2,9,2,4\n");
}
END_TEST

/* Every aggregate function over a sliding window of 3 on the whole stream, with strings longer
 * than a first buffer held in the ring. */
START_TEST(test_aggregate_sliding_every_function) {
  expect_output(
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/><attr name=\"s\" type=\"string\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"n\" type=\"int\"/><attr name=\"sx\" type=\"int\"/>"
      "<attr name=\"a\" type=\"double\"/><attr name=\"mn\" type=\"int\"/><attr name=\"mx\" type=\"string\"/>"
      "<attr name=\"f\" type=\"int\"/><attr name=\"l\" type=\"string\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">5</param><set attr=\"x\">seq * seq % 7</set>"
      "<set attr=\"s\">\"v\" + str(seq * seq % 7) + \"_abcdefghijklmnop\"</set></operator>\n"
      "<operator name=\"agg\" kind=\"Aggregate\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
      "<param name=\"window\">sliding 3</param>"
      "<set attr=\"n\">count()</set><set attr=\"sx\">sum(x)</set><set attr=\"a\">avg(x)</set>"
      "<set attr=\"mn\">min(x)</set><set attr=\"mx\">max(s)</set><set attr=\"f\">first(x)</set>"
      "<set attr=\"l\">last(s)</set></operator>\n" SINK("B"),
      "n,sx,a,mn,mx,f,l\n"
      "1,0,0,0,v0_abcdefghijklmnop,0,v0_abcdefghijklmnop\n"
      "2,1,0.5,0,v1_abcdefghijklmnop,0,v1_abcdefghijklmnop\n"
      "3,5,1.6666666666666667,0,v4_abcdefghijklmnop,0,v4_abcdefghijklmnop\n"
      "3,7,2.3333333333333335,1,v4_abcdefghijklmnop,1,v2_abcdefghijklmnop\n"
      "3,8,2.6666666666666665,2,v4_abcdefghijklmnop,4,v2_abcdefghijklmnop\n");
}
END_TEST

/* ---- Aggregate: time windows and running ----
 * The Beacon's ts goes back and forth, with no tick period given: the default is the gcd of the
 * windows downstream (5, 3), or 1 without time windows. Ticks close windows as ts rises; the final
 * tick emits the rest, in the order of window end, then key. */

/* Tuples (k, ts, x, p) = (seq % 3, seq * 3 % 10, seq, seq % 2): */
#define TIME_GRAPH(WINDOW, E)                                                                                       \
  "<schema name=\"In\"><attr name=\"k\" type=\"int\"/><attr name=\"ts\" type=\"int\"/>"                              \
  "<attr name=\"x\" type=\"int\"/><attr name=\"p\" type=\"int\"/></schema>\n"                                       \
  "<schema name=\"Out\"><attr name=\"k\" type=\"int\"/><attr name=\"n\" type=\"int\"/>"                              \
  "<attr name=\"e\" type=\"int\"/><attr name=\"sx\" type=\"int\"/><attr name=\"f\" type=\"int\"/>"                   \
  "<attr name=\"cd\" type=\"int\"/><attr name=\"am\" type=\"int\"/><attr name=\"sts\" type=\"int\"/></schema>\n"     \
  "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"                                     \
  "<param name=\"count\">8</param><param name=\"time\">ts</param><set attr=\"k\">seq % 3</set>"                     \
  "<set attr=\"ts\">seq * 3 % 10</set><set attr=\"x\">seq</set><set attr=\"p\">seq % 2</set></operator>\n"           \
  "<operator name=\"agg\" kind=\"Aggregate\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"            \
  "<param name=\"partitionBy\">k</param><param name=\"window\">" WINDOW "</param>"                                   \
  "<set attr=\"n\">count()</set><set attr=\"e\">" E "</set><set attr=\"sx\">sum(x)</set>"                              \
  "<set attr=\"f\">first(x)</set><set attr=\"cd\">count_distinct(p)</set><set attr=\"am\">arg_max(x, ts)</set>"        \
  "<set attr=\"sts\">sum(ts)</set></operator>\n" SINK("B")

/* Tumbling time 5, ticks every 5: (k, ts) = (0,0) (1,3) (2,6) (0,9) (1,2) (2,5) (0,8) (1,1). ts 6
 * brings tick 5, which closes [0, 5) (k=0: ts 0; k=1: ts 3), so (1,2) and (1,1) are late; the
 * final tick closes [5, 10): k=0 (9, 8) and k=2 (6, 5). Windows ordered by end, then key;
 * arg_max(x, ts) is x of the largest ts. */
START_TEST(test_aggregate_tumbling_time) {
  expect_output(TIME_GRAPH("tumbling time 5", "window_end()"), "k,n,e,sx,f,cd,am,sts\n"
                                       "0,1,5,0,0,1,0,0\n"
                                       "1,1,5,1,1,1,1,3\n"
                                       "0,2,10,9,3,2,3,17\n"
                                       "2,2,10,7,2,2,2,11\n");
}
END_TEST

/* Sessions of gap 3, ticks every 3: ts 3, 6 and 9 bring ticks 3, 6, 9, which close k=0's (0),
 * k=1's (3) and k=2's (6) sessions; then (1,2), (2,5) and (1,1) are late (time + 3 <= 9), and
 * (0,8) joins k=0's open session (9): [8, 12), emitted by the final tick. */
START_TEST(test_aggregate_session_time) {
  expect_output(TIME_GRAPH("session time 3", "window_end()"), "k,n,e,sx,f,cd,am,sts\n"
                                       "0,1,3,0,0,1,0,0\n"
                                       "1,1,6,1,1,1,1,3\n"
                                       "2,1,9,2,2,1,2,6\n"
                                       "0,2,12,9,3,2,3,17\n");
}
END_TEST

/* Running: every tuple emits its key's aggregate over everything so far. */
START_TEST(test_aggregate_running) {
  expect_output(TIME_GRAPH("running", "count() * 10"), "k,n,e,sx,f,cd,am,sts\n"
                                            "0,1,10,0,0,1,0,0\n"
                                            "1,1,10,1,1,1,1,3\n"
                                            "2,1,10,2,2,1,2,6\n"
                                            "0,2,20,3,0,2,3,9\n"
                                            "1,2,20,5,1,2,1,5\n"
                                            "2,2,20,7,2,2,2,11\n"
                                            "0,3,30,9,0,2,3,17\n"
                                            "1,3,30,12,1,2,1,6\n");
}
END_TEST

/* Sliding windows of 2 fold count_distinct and arg_max again over their rows. */
START_TEST(test_aggregate_sliding_new_functions) {
  expect_output(TIME_GRAPH("sliding 2", "count() * 10"), "k,n,e,sx,f,cd,am,sts\n"
                                            "0,1,10,0,0,1,0,0\n"
                                            "1,1,10,1,1,1,1,3\n"
                                            "2,1,10,2,2,1,2,6\n"
                                            "0,2,20,3,0,2,3,9\n"
                                            "1,2,20,5,1,2,1,5\n"
                                            "2,2,20,7,2,2,2,11\n"
                                            "0,2,20,9,3,2,3,17\n"
                                            "1,2,20,11,4,2,4,3\n");
}
END_TEST

/* Tumbling windows of 2 tuples fold count_distinct and arg_max; the last windows of k=0 and k=1
 * stay incomplete and are discarded. */
START_TEST(test_aggregate_tumbling_new_functions) {
  expect_output(TIME_GRAPH("tumbling 2", "count() * 10"), "k,n,e,sx,f,cd,am,sts\n"
                                                          "0,2,20,3,0,2,3,9\n"
                                                          "1,2,20,5,1,2,1,5\n"
                                                          "2,2,20,7,2,2,2,11\n");
}
END_TEST

/* ---- Dedup ---- */

START_TEST(test_dedup_two_attribute_key) {
  expect_output(
      "<schema name=\"In\"><attr name=\"k\" type=\"int\"/><attr name=\"t\" type=\"string\"/>"
      "<attr name=\"s\" type=\"string\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">8</param><set attr=\"k\">seq * seq % 5</set>"
      "<set attr=\"t\">seq &lt; 4 ? \"a\" : \"b\"</set><set attr=\"s\">\"r\" + str(seq)</set></operator>\n"
      "<operator name=\"dd\" kind=\"Dedup\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
      "<param name=\"partitionBy\">k, t</param></operator>\n" SINK("B"),
      "k,t,s\n0,a,r0\n1,a,r1\n4,a,r2\n1,b,r4\n0,b,r5\n4,b,r7\n");
}
END_TEST

/* ---- Work ---- */

START_TEST(test_work_preserves_tuples) {
  const char *expected = "x,s,d\n0,0,0\n1,3,0.5\n2,6,1\n3,9,1.5\n4,12,2\n";
  const char *graph =
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/><attr name=\"s\" type=\"string\"/>"
      "<attr name=\"d\" type=\"double\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">5</param><set attr=\"x\">seq</set><set attr=\"s\">str(seq * 3)</set>"
      "<set attr=\"d\">double(seq) / 2.0</set></operator>\n"
      "<operator name=\"w\" kind=\"Work\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
      "<param name=\"iterations\">%s</param></operator>\n" SINK("B");
  const char *iterations[] = {"0", "1", "5000"};
  for (int k = 0; k < 3; k++) {
    char body[4096];
    snprintf(body, sizeof body, graph, iterations[k]);
    expect_output(body, expected);
  }
}
END_TEST

/* ---- in parallel regions ---- */

/* The keyed kinds give the sequential output byte for byte when sf-xform replicates them: each
 * channel sees whole keys, so per-key state, windows and first occurrences do not change. */
START_TEST(test_parallel_equals_sequential) {
  const char *graphs[] = {
      "<schema name=\"In\"><attr name=\"k\" type=\"string\"/><attr name=\"x\" type=\"int\"/></schema>\n"
      "<schema name=\"Mid\"><attr name=\"k\" type=\"string\"/><attr name=\"x\" type=\"int\"/>"
      "<attr name=\"run\" type=\"int\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"k\" type=\"string\"/><attr name=\"n\" type=\"int\"/>"
      "<attr name=\"top\" type=\"int\"/><attr name=\"mean\" type=\"double\"/><attr name=\"last\" type=\"int\"/>"
      "</schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">3000</param><set attr=\"k\">\"k\" + str(rand(seq) % 13)</set>"
      "<set attr=\"x\">rand(seq + 1) % 100</set></operator>\n"
      "<operator name=\"keep\" kind=\"Filter\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
      "<param name=\"where\">x % 7 != 3</param></operator>\n"
      "<operator name=\"burn\" kind=\"Work\"><input stream=\"B\"/><output stream=\"C\" schema=\"In\"/>"
      "<param name=\"iterations\">50</param></operator>\n"
      "<operator name=\"acc\" kind=\"Functor\"><input stream=\"C\"/><output stream=\"D\" schema=\"Mid\"/>"
      "<param name=\"partitionBy\">k</param><param name=\"where\">run % 3 != 0</param>"
      "<state name=\"run\" type=\"int\" init=\"0\">run + x</state><set attr=\"run\">run</set></operator>\n"
      "<operator name=\"win\" kind=\"Aggregate\"><input stream=\"D\"/><output stream=\"E\" schema=\"Out\"/>"
      "<param name=\"partitionBy\">k</param><param name=\"window\">tumbling 4</param>"
      "<set attr=\"n\">count()</set><set attr=\"top\">max(run)</set><set attr=\"mean\">avg(x)</set>"
      "<set attr=\"last\">last(x)</set></operator>\n" SINK("E"),
      "<schema name=\"In\"><attr name=\"k\" type=\"int\"/><attr name=\"x\" type=\"int\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"k\" type=\"int\"/><attr name=\"lo\" type=\"int\"/>"
      "<attr name=\"sum\" type=\"int\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">3000</param><set attr=\"k\">rand(seq) % 11</set>"
      "<set attr=\"x\">rand(seq + 5) % 40</set></operator>\n"
      "<operator name=\"once\" kind=\"Dedup\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
      "<param name=\"partitionBy\">k x</param></operator>\n"
      "<operator name=\"win\" kind=\"Aggregate\"><input stream=\"B\"/><output stream=\"C\" schema=\"Out\"/>"
      "<param name=\"partitionBy\">k</param><param name=\"window\">sliding 5</param>"
      "<set attr=\"lo\">min(x)</set><set attr=\"sum\">sum(x)</set></operator>\n" SINK("C"),
  };
  for (int k = 0; k < 2; k++) {
    Result seq = run(graphs[k]);
    ck_assert_msg(seq.rc == 0, "exec_run failed: %s", seq.log);
    ck_assert_ptr_nonnull(seq.out);
    int lines = 0;
    for (const char *p = seq.out; *p; p++) lines += *p == '\n';
    ck_assert_int_gt(lines, 100);
    for (int width = 1; width <= 4; width++) {
      Result par = run_width(graphs[k], width);
      ck_assert_msg(par.rc == 0, "exec_run at width %d failed: %s", width, par.log);
      ck_assert_ptr_nonnull(par.out);
      ck_assert_msg(!strcmp(par.out, seq.out), "graph %d differs at width %d", k, width);
      result_free(&par);
    }
    result_free(&seq);
  }
}
END_TEST

/* ---- run-time errors ---- */

START_TEST(test_error_division_in_set) {
  expect_error(
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"x\" type=\"int\"/><attr name=\"y\" type=\"int\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">5</param><set attr=\"x\">seq</set></operator>\n"
      "<operator name=\"f\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
      "<set attr=\"y\">10 / (x - 2)</set></operator>\n" SINK("B"),
      "sf-exec: error: operator 'f': set 'y': division by zero in '10 / (x - 2)' on tuple (x=2)\n");
}
END_TEST

START_TEST(test_error_state_update_and_init) {
  const char *head =
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/><attr name=\"s\" type=\"string\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">5</param><set attr=\"x\">seq</set><set attr=\"s\">\"t\" + str(seq)</set></operator>\n";
  char body[4096];
  snprintf(body, sizeof body, "%s%s", head,
           "<operator name=\"f\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
           "<state name=\"n\" type=\"int\" init=\"7\">n % (3 - x)</state></operator>\n" SINK("B"));
  expect_error(body, "sf-exec: error: operator 'f': update of state 'n': modulo by zero in 'n % (3 - x)' "
                     "on tuple (x=3, s=\"t3\")\n");
  snprintf(body, sizeof body, "%s%s", head,
           "<operator name=\"f\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
           "<param name=\"partitionBy\">x</param>"
           "<state name=\"z\" type=\"int\" init=\"int(&quot;zz&quot;)\">z</state></operator>\n" SINK("B"));
  expect_error(body, "sf-exec: error: operator 'f': init of state 'z': cannot convert 'zz' to int in "
                     "'int(\"zz\")' on tuple (x=0, s=\"t0\")\n");
}
END_TEST

START_TEST(test_error_where) {
  const char *head =
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">5</param><set attr=\"x\">seq</set></operator>\n";
  const char *kinds[] = {"Filter", "Functor"};
  for (int k = 0; k < 2; k++) {
    char body[4096];
    snprintf(body, sizeof body,
             "%s<operator name=\"w\" kind=\"%s\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
             "<param name=\"where\">10 / (x - 1) &gt; 0</param></operator>\n" SINK("B"), head, kinds[k]);
    expect_error(body, "sf-exec: error: operator 'w': where: division by zero in '10 / (x - 1) > 0' on "
                       "tuple (x=1)\n");
  }
}
END_TEST

/* A let's fault names the let, in every kind that takes one (Filter and Functor a run at a time
 * otherwise: with lets, a tuple at a time). */
START_TEST(test_error_let) {
  const char *head =
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"n\" type=\"int\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">5</param><set attr=\"x\">seq</set></operator>\n";
  const char *ops[] = {
    "<operator name=\"w\" kind=\"Filter\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
    "<let name=\"q\" type=\"int\">10 / (x - 2)</let><param name=\"where\">q &gt; 0</param></operator>\n",
    "<operator name=\"w\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
    "<let name=\"q\" type=\"int\">10 / (x - 2)</let><set attr=\"x\">q</set></operator>\n",
    "<operator name=\"w\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
    "<state name=\"s\" type=\"int\" init=\"0\">s + 1</state>"
    "<let name=\"q\" type=\"int\">10 / (x - 2)</let><set attr=\"x\">q + s</set></operator>\n",
    "<operator name=\"w\" kind=\"FlatMap\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
    "<let name=\"q\" type=\"int\">10 / (x - 2)</let><param name=\"count\">0 * q</param></operator>\n",
    "<operator name=\"w\" kind=\"Aggregate\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
    "<param name=\"window\">sliding 2</param>"
    "<let name=\"q\" type=\"int\">10 / (x - 2)</let><set attr=\"n\">sum(q)</set></operator>\n",
  };
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    char body[4096];
    snprintf(body, sizeof body, "%s%s" SINK("B"), head, ops[k]);
    expect_error(body, "sf-exec: error: operator 'w': let 'q': division by zero in '10 / (x - 2)' on tuple (x=2)\n");
  }
}
END_TEST

START_TEST(test_error_flatmap_negative_count) {
  expect_error(
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">5</param><set attr=\"x\">seq</set></operator>\n"
      "<operator name=\"fm\" kind=\"FlatMap\"><input stream=\"A\"/><output stream=\"B\" schema=\"In\"/>"
      "<param name=\"count\">2 - x</param></operator>\n" SINK("B"),
      "sf-exec: error: operator 'fm': count: count is negative (-1) in '2 - x' on tuple (x=3)\n");
}
END_TEST

START_TEST(test_error_aggregate_argument) {
  expect_error(
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"n\" type=\"int\"/><attr name=\"q\" type=\"int\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">5</param><set attr=\"x\">seq</set></operator>\n"
      "<operator name=\"agg\" kind=\"Aggregate\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
      "<param name=\"window\">sliding 2</param><set attr=\"n\">count()</set>"
      "<set attr=\"q\">sum(12 / (4 - x))</set></operator>\n" SINK("B"),
      "sf-exec: error: operator 'agg': set 'q': division by zero in 'sum(12 / (4 - x))' on tuple (x=4)\n");
}
END_TEST

/* Signed overflow is an error of the operator, as division by zero is: in a set, and in a sum of
 * ints of a tumbling and of a sliding window. */
START_TEST(test_error_integer_overflow) {
  expect_error(
      "<schema name=\"In\"><attr name=\"x\" type=\"int\"/></schema>\n"
      "<schema name=\"Out\"><attr name=\"x\" type=\"int\"/><attr name=\"y\" type=\"int\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
      "<param name=\"count\">20</param><set attr=\"x\">seq</set></operator>\n"
      "<operator name=\"f\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
      "<set attr=\"y\">x + 9223372036854775800</set></operator>\n" SINK("B"),
      "sf-exec: error: operator 'f': set 'y': integer overflow of '+' in 'x + 9223372036854775800' on tuple (x=8)\n");
  const char *windows[] = {"tumbling 2", "sliding 2"};
  for (int k = 0; k < 2; k++) {
    char body[4096];
    snprintf(body, sizeof body,
             "<schema name=\"In\"><attr name=\"x\" type=\"int\"/></schema>\n"
             "<schema name=\"Out\"><attr name=\"n\" type=\"int\"/><attr name=\"sx\" type=\"int\"/></schema>\n"
             "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"In\"/>"
             "<param name=\"count\">5</param><set attr=\"x\">9223372036854775807 - seq</set></operator>\n"
             "<operator name=\"agg\" kind=\"Aggregate\"><input stream=\"A\"/><output stream=\"B\" schema=\"Out\"/>"
             "<param name=\"window\">%s</param><set attr=\"n\">count()</set><set attr=\"sx\">sum(x)</set>"
             "</operator>\n" SINK("B"), windows[k]);
    expect_error(body, "sf-exec: error: operator 'agg': set 'sx': integer overflow of sum() in 'sum(x)' on tuple "
                       "(x=9223372036854775806)\n");
  }
}
END_TEST

/* ---- the suite ---- */

static Suite *ops_suite(void) {
  Suite *s = suite_create("ops");
  TCase *ok = unit_case(s, "outputs", NULL, NULL, 60);
  tcase_add_test(ok, test_functor_sets_and_forwards);
  tcase_add_test(ok, test_functor_where_without_sets);
  tcase_add_test(ok, test_functor_state_per_key);
  tcase_add_test(ok, test_functor_state_without_partition);
  tcase_add_test(ok, test_functor_set_state_order);
  tcase_add_test(ok, test_filter);
  tcase_add_test(ok, test_flatmap_index_and_zero_count);
  tcase_add_test(ok, test_aggregate_tumbling_every_function);
  tcase_add_test(ok, test_aggregate_tumbling_ties);
  tcase_add_test(ok, test_aggregate_int_sum_exact);
  tcase_add_test(ok, test_aggregate_sliding_per_key);
  tcase_add_test(ok, test_aggregate_sliding_every_function);
  tcase_add_test(ok, test_aggregate_tumbling_time);
  tcase_add_test(ok, test_aggregate_session_time);
  tcase_add_test(ok, test_aggregate_running);
  tcase_add_test(ok, test_aggregate_sliding_new_functions);
  tcase_add_test(ok, test_aggregate_tumbling_new_functions);
  tcase_add_test(ok, test_dedup_two_attribute_key);
  tcase_add_test(ok, test_work_preserves_tuples);
  TCase *par = unit_case(s, "parallel", NULL, NULL, 120);
  tcase_add_test(par, test_parallel_equals_sequential);
  TCase *err = unit_case(s, "errors", NULL, NULL, 60);
  tcase_add_test(err, test_error_division_in_set);
  tcase_add_test(err, test_error_state_update_and_init);
  tcase_add_test(err, test_error_where);
  tcase_add_test(err, test_error_let);
  tcase_add_test(err, test_error_flatmap_negative_count);
  tcase_add_test(err, test_error_aggregate_argument);
  tcase_add_test(err, test_error_integer_overflow);
  return s;
}

int main(void) {
  return unit_run(ops_suite());
}
