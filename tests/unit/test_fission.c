/* test_fission.c: the transformer's decisions (analyze.c, regions.c), the rewritten graph
 * (rewrite.c), placement (place.c) and --explain (explain.c).
 *
 * Every graph is written here as XML, parsed against the source tree's graph.xsd, checked and
 * analyzed, then given to fission_regions at a width. Tests assert exact values: which operators form
 * which region in which order, region keys, widths, split and merge strategies, shuffle links, the
 * exact reason (why[]) of every operator that is not parallelized and the note[] of every operator
 * that starts a region; for rewritten graphs the exact name, kind, ports, parameters, region,
 * channel and host of every operator (see describe_op). docs/design.md's six safety rules, the
 * strategy table, the key rules and placement each have their own tests. */
#include "check_helper.h"
#include "sf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* ---- graphs in a few lines ----
 * HEAD is exactly three lines, so the first operator of a graph stands on line 4. Schema T has a key
 * candidate k, a second one j and a value v; every operator macro below writes one line. */

#define HEAD                                                                                      \
  "<?xml version=\"1.0\"?>\n"                                                                     \
  "<graph xmlns=\"urn:streamfission:graph:1\" name=\"t\">\n"                                      \
  "<schema name=\"T\"><attr name=\"k\" type=\"int\"/><attr name=\"j\" type=\"int\"/>"             \
  "<attr name=\"v\" type=\"int\"/></schema><schema name=\"U\"><attr name=\"u\" type=\"int\"/>"    \
  "<attr name=\"v\" type=\"int\"/></schema>\n"
#define TAIL "</graph>\n"

/* src: a Beacon writing stream S */
#define SRC                                                                                       \
  "<operator name=\"src\" kind=\"Beacon\"><output stream=\"S\" schema=\"T\"/>"                    \
  "<param name=\"count\">10</param><set attr=\"k\">seq % 3</set><set attr=\"j\">seq % 2</set>"    \
  "<set attr=\"v\">seq</set></operator>\n"
/* an operator of schema T to T with extra operator attributes and children */
#define OPX(name, kind, attrs, in, out, body)                                                     \
  "<operator name=\"" name "\" kind=\"" kind "\"" attrs "><input stream=\"" in "\"/>"             \
  "<output stream=\"" out "\" schema=\"T\"/>" body "</operator>\n"
#define OP(name, kind, in, out, body) OPX(name, kind, "", in, out, body)
/* stateless, selectivity one, forwards everything */
#define WORK(name, in, out) OP(name, "Work", in, out, "<param name=\"iterations\">1</param>")
#define WORKX(name, attrs, in, out) OPX(name, "Work", attrs, in, out, "<param name=\"iterations\">1</param>")
/* stateless, selectivity atmostone, forwards everything */
#define FILTER(name, in, out) OP(name, "Filter", in, out, "<param name=\"where\">v &gt; 1</param>")
/* stateless Functor that changes the key attribute k (forwards j and v) */
#define SETK(name, in, out) OP(name, "Functor", in, out, "<set attr=\"k\">v + 1</set>")
/* stateless Functor that changes j (forwards k and v) */
#define SETJ(name, in, out) OP(name, "Functor", in, out, "<set attr=\"j\">v + 2</set>")
/* partitioned on keys, selectivity atmostone, forwards everything */
#define DEDUP(name, in, out, keys) OP(name, "Dedup", in, out, "<param name=\"partitionBy\">" keys "</param>")
#define DEDUPX(name, attrs, in, out, keys) \
  OPX(name, "Dedup", attrs, in, out, "<param name=\"partitionBy\">" keys "</param>")
/* partitioned on k, selectivity one (a Functor with state, partitionBy and no where) */
#define COUNTK(name, in, out)                                                                     \
  OP(name, "Functor", in, out, "<param name=\"partitionBy\">k</param><set attr=\"v\">n</set>"     \
     "<state name=\"n\" type=\"int\" init=\"0\">n + 1</state>")
/* partitioned on j, selectivity one: a sliding Aggregate (forwards only j) */
#define SLIDEJ(name, in, out)                                                                     \
  OP(name, "Aggregate", in, out, "<param name=\"partitionBy\">j</param><param name=\"window\">sliding 2</param>" \
     "<set attr=\"k\">last(k)</set><set attr=\"v\">sum(v)</set>")
/* a FileSink writing NAME.csv (two sinks may not write one file) */
#define SINK(name, in) \
  "<operator name=\"" name "\" kind=\"FileSink\"><input stream=\"" in "\"/><param name=\"file\">" name ".csv</param></operator>\n"

/* ---- helpers ---- */

/* Parses, checks and analyzes text, and forms the regions at width. */
static Fission *fission_of(const char *text, int width) {
  Graph *g = unit_graph_text(text);
  graph_analyze(g);
  return fission_regions(g, width);
}

static Op *op_named(const Fission *f, const char *name) {
  Op *op = graph_find_op(f->g, name);
  ck_assert_msg(op != NULL, "no operator '%s'", name);
  return op;
}

static const char *why(const Fission *f, const char *name) {
  return f->why[op_named(f, name)->index];
}

static const char *note(const Fission *f, const char *name) {
  return f->note[op_named(f, name)->index];
}

static Region *region_of(const Fission *f, const char *name) {
  return f->region_of[op_named(f, name)->index];
}

static Region *region_n(const Fission *f, int id) {
  ck_assert_msg(id >= 1 && id <= f->regions.n, "no region r%d (there are %d)", id, f->regions.n);
  Region *r = f->regions.items[id - 1];
  ck_assert_int_eq(r->id, id);
  return r;
}

/* "a b c": the names of the region's operators in flow order. Static buffer. */
static const char *ops_text(const Region *r) {
  static char buf[1024];
  buf[0] = 0;
  for (int i = 0; i < r->ops.n; i++) {
    if (i) strcat(buf, " ");
    strcat(buf, ((Op *)r->ops.items[i])->name);
  }
  return buf;
}

/* "j k": the region key. Static buffer. */
static const char *keys_text(const Region *r) {
  static char buf[256];
  buf[0] = 0;
  for (int i = 0; i < r->nkeys; i++) {
    if (i) strcat(buf, " ");
    strcat(buf, r->keys[i]);
  }
  return buf;
}

/* Region id with its operators, key, width, split, merge and shuffle links in one line, e.g.
 * "r2: a b key=k width=3 hash/seqpulse from=r1 to=-". */
static char *region_text(const Region *r) {
  static char buf[1024];
  const char *split = r->split == SPLIT_HASH ? "hash" : "roundrobin";
  const char *merge = r->merge == MERGE_ROUNDROBIN ? "roundrobin" : r->merge == MERGE_SEQ ? "seq" : "seqpulse";
  char from[16] = "-", to[16] = "-";
  if (r->from) snprintf(from, sizeof from, "r%d", r->from->id);
  if (r->to) snprintf(to, sizeof to, "r%d", r->to->id);
  char keys[256];
  snprintf(keys, sizeof keys, "%s", keys_text(r));
  snprintf(buf, sizeof buf, "r%d: %s key=%s width=%d %s/%s from=%s to=%s", r->id, ops_text(r), r->nkeys ? keys : "-",
           r->width, split, merge, from, to);
  return buf;
}

/* The region formation of f as one text: every region on its line (malloc'd). */
static char *regions_text(const Fission *f) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  for (int i = 0; i < f->regions.n; i++) fprintf(m, "%s\n", region_text(f->regions.items[i]));
  fclose(m);
  return buf;
}

/* Assertions are macros so that a failure names the test's line, not a helper's. */
#define assert_text(got_expr, expected)       \
  do {                                        \
    char *got_ = (got_expr);                  \
    ck_assert_str_eq(got_, (expected));       \
    free(got_);                               \
  } while (0)
#define assert_regions(f, expected) assert_text(regions_text(f), expected)

/* One operator of a rewritten graph as one line:
 * "NAME KIND [region=R] [channel=C] [origin=O] [host=H] in=A;B+C out=X;Y [p=v ...]"
 * (input ports separated by ';', streams of one port by '+'). */
static char *describe_op(const Op *op) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  fprintf(m, "%s %s", op->name, kind_name(op->kind));
  if (op->region) fprintf(m, " region=%s", op->region);
  if (op->channel >= 0) fprintf(m, " channel=%d", op->channel);
  if (op->origin) fprintf(m, " origin=%s", op->origin);
  if (op->host) fprintf(m, " host=%s", op->host);
  if (op->ninputs) {
    fputs(" in=", m);
    for (int p = 0; p < op->ninputs; p++)
      for (int k = 0; k < op->inputs[p].nstreams; k++)
        fprintf(m, "%s%s", p == 0 && k == 0 ? "" : k ? "+" : ";", op->inputs[p].names[k]);
  }
  if (op->noutputs) {
    fputs(" out=", m);
    for (int p = 0; p < op->noutputs; p++) fprintf(m, "%s%s", p ? ";" : "", op->outputs[p].stream);
  }
  if (op->kind == KIND_SPLIT || op->kind == KIND_MERGE)
    for (int i = 0; i < op->nparams; i++) fprintf(m, " %s=%s", op->params[i].name, op->params[i].text);
  fclose(m);
  return buf;
}

/* describe_op of the operator `name` of g (malloc'd). */
static char *op_text(const Graph *g, const char *name) {
  const Op *op = graph_find_op(g, name);
  ck_assert_msg(op != NULL, "no operator '%s' in the rewritten graph", name);
  return describe_op(op);
}
#define assert_op(g, name, expected) assert_text(op_text(g, name), expected)

/* The whole rewritten graph: one describe_op line per operator, in graph order (malloc'd). */
static char *graph_text(const Graph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  for (int i = 0; i < g->nops; i++) {
    char *line = describe_op(g->ops[i]);
    fprintf(m, "%s\n", line);
    free(line);
  }
  fclose(m);
  return buf;
}
#define assert_graph(g, expected) assert_text(graph_text(g), expected)

/* Rewrites f and places it on hosts `spec` (NULL: the default local host). */
static Graph *rewrite_and_place(const Fission *f, const char *spec) {
  Graph *p = fission_rewrite(f);
  ck_assert_ptr_nonnull(p);
  if (spec) {
    Host **hosts;
    int n;
    char err[256];
    ck_assert_msg(hosts_parse(p, spec, &hosts, &n, err, sizeof err) == 0, "hosts: %s", err);
    p->hosts = hosts;
    p->nhosts = n;
  }
  Diag d;
  diag_init(&d, "t.xml", stderr);
  int errors = graph_place(p, &d);
  diag_flush(&d, DIAG_BY_PLACE);
  ck_assert_int_eq(errors, 0);
  return p;
}

static char *explain_text(const Fission *f) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  fission_explain(f, m);
  fclose(m);
  return buf;
}

/* explain_text without the model lines (`file:line: name: model...`), which test_explain_models
 * checks: the decisions alone, with each region's estimate (`file:line: name: region rN: ...`, after
 * its first operator's model line) (malloc'd). Every other line must be a decision. */
static char *decisions_text(const Fission *f) {
  char *all = explain_text(f);
  char *out = calloc(strlen(all) + 1, 1);
  int n = 0;
  for (char *line = all, *end; *line; line = end) {
    end = strchr(line, '\n');
    end = end ? end + 1 : line + strlen(line);
    const char *region = strstr(line, ": region r");
    if (region && region < end && strstr(region, ": estimated speed-up ") && n % 2 == 0) {
      strncat(out, line, (size_t)(end - line));
      continue;
    }
    n++;
    const char *model = strstr(line, ": model");
    bool is_model = model && model < end && (model[7] == ':' || model[7] == ' ');
    ck_assert_msg(is_model == (n % 2 == 0), "line %d is %s a model line:\n%s", n, is_model ? "" : "not", all);
    if (!is_model) strncat(out, line, (size_t)(end - line));
  }
  free(all);
  return out;
}

/* The number of operators of kind k in g. */
static int count_kind(const Graph *g, OpKind k) {
  int n = 0;
  for (int i = 0; i < g->nops; i++) n += g->ops[i]->kind == k;
  return n;
}

static void free_fission(Fission *f) {
  graph_free(f->g);
}

/* ---- safety rule 1: one input port with one stream, one output port ---- */

/* A keyed time window emits at ticks, ordered by key: it is replicated with a seqpulse Merge (rule
 * 5); a keyed running Aggregate is one per input and joins a keyed region like a sliding window. */
START_TEST(test_time_windows_and_running) {
  Fission *f = fission_of(HEAD
                          "<operator name=\"src\" kind=\"Beacon\"><output stream=\"S\" schema=\"T\"/>"
                          "<param name=\"count\">10</param><param name=\"time\">v</param>"
                          "<set attr=\"k\">seq % 3</set><set attr=\"j\">seq % 2</set><set attr=\"v\">seq</set>"
                          "</operator>\n"
                          OP("tw", "Aggregate", "S", "A", "<param name=\"partitionBy\">k</param>"
                             "<param name=\"window\">hopping time 10 5</param><set attr=\"j\">count()</set>"
                             "<set attr=\"v\">window_end()</set>")
                          OP("run", "Aggregate", "S", "B", "<param name=\"partitionBy\">k</param>"
                             "<param name=\"window\">running</param><set attr=\"j\">arg_min(j, v)</set>"
                             "<set attr=\"v\">count_distinct(v)</set>")
                          OP("all", "Aggregate", "S", "C", "<param name=\"window\">running</param>"
                             "<set attr=\"k\">count()</set><set attr=\"j\">0</set><set attr=\"v\">0</set>")
                          SINK("a", "A") SINK("b", "B") SINK("c", "C") TAIL, 2);
  const Model *tw = &op_named(f, "tw")->model, *run = &op_named(f, "run")->model;
  ck_assert(tw->emits_on_tick && tw->sel == SEL_ATMOSTONE && tw->state == STATE_PARTITIONED);
  ck_assert(!run->emits_on_tick && run->sel == SEL_ONE && run->state == STATE_PARTITIONED);
  ck_assert_ptr_null(why(f, "tw"));
  ck_assert_int_eq(region_of(f, "tw")->merge, MERGE_SEQPULSE);
  ck_assert_ptr_null(why(f, "run"));
  ck_assert_int_eq(region_of(f, "run")->merge, MERGE_SEQ);
  ck_assert_str_eq(why(f, "all"), "its state is unknown: Aggregate without 'partitionBy' (rule 2)");
  ck_assert_int_eq(source_tick(f->g, op_named(f, "src")), 5);
  graph_free(f->g);
}
END_TEST

START_TEST(test_rule1_fan_in) {
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") WORK("b", "S", "B")
                          WORK("c", "A B", "C") WORK("d", "C", "D") SINK("out", "D") TAIL, 2);
  ck_assert_str_eq(why(f, "c"), "its input merges 2 streams (fan-in; rule 1: exactly one stream)");
  ck_assert_ptr_null(region_of(f, "c"));
  assert_regions(f, "r1: a key=- width=2 roundrobin/roundrobin from=- to=-\n"
                    "r2: b key=- width=2 roundrobin/roundrobin from=- to=-\n"
                    "r3: d key=- width=2 roundrobin/roundrobin from=- to=-\n");
  ck_assert_str_eq(note(f, "a"), "starts region r1: its input stream 'S' has several consumers (fan-out)");
  ck_assert_str_eq(note(f, "d"), "starts region r3: its producer 'c' is not parallelized");
  free_fission(f);
}
END_TEST

/* Rule 1's port counts need no test of their own: only Split and Merge may have several ports (check
 * holds Custom operators to op.h's one input and one output), and those stop at rule 6 first. */

/* ---- rule 2: state none or partitioned on a non-empty key ---- */

START_TEST(test_rule2_state) {
  Fission *f = fission_of(HEAD SRC
    OP("num", "Functor", "S", "A", "<set attr=\"v\">n</set><state name=\"n\" type=\"int\" init=\"0\">n + 1</state>")
    OP("agg", "Aggregate", "A", "B", "<param name=\"window\">tumbling 2</param><set attr=\"k\">last(k)</set>"
       "<set attr=\"j\">last(j)</set><set attr=\"v\">sum(v)</set>")
    "<operator name=\"nomodel\" kind=\"Custom\"><input stream=\"B\"/><output stream=\"C\" schema=\"T\"/>"
    "<library path=\"x.so\" symbol=\"s\"/></operator>\n"
    "<operator name=\"unknown\" kind=\"Custom\"><input stream=\"C\"/><output stream=\"D\" schema=\"T\"/>"
    "<model state=\"unknown\" selectivity=\"one\"/><library path=\"x.so\" symbol=\"s\"/></operator>\n"
    OP("keyed", "Functor", "D", "E", "<param name=\"partitionBy\">k</param><set attr=\"v\">n</set>"
       "<state name=\"n\" type=\"int\" init=\"0\">n + 1</state>")
    OP("nostate", "Functor", "E", "F", "<param name=\"partitionBy\">k</param><set attr=\"v\">v * 2</set>")
    SINK("out", "F") TAIL, 2);
  ck_assert_str_eq(why(f, "num"), "its state is unknown: it has <state> but no 'partitionBy' (rule 2)");
  ck_assert_str_eq(why(f, "agg"), "its state is unknown: Aggregate without 'partitionBy' (rule 2)");
  ck_assert_str_eq(why(f, "nomodel"), "its state is unknown (Custom operator without a <model>; rule 2)");
  ck_assert_str_eq(why(f, "unknown"), "its <model> declares unknown state (rule 2)");
  /* with state and partitionBy: partitioned; partitionBy without state: stateless */
  ck_assert_int_eq(op_named(f, "keyed")->model.state, STATE_PARTITIONED);
  ck_assert_int_eq(op_named(f, "nostate")->model.state, STATE_NONE);
  assert_regions(f, "r1: keyed nostate key=k width=2 hash/seq from=- to=-\n");
  ck_assert_str_eq(note(f, "keyed"), "starts region r1: its producer 'unknown' is not parallelized");
  free_fission(f);
}
END_TEST

/* Custom without a model: the worst is assumed; the XML keeps no invented model. */
START_TEST(test_custom_without_model) {
  Fission *f = fission_of(HEAD SRC
    "<operator name=\"c\" kind=\"Custom\"><input stream=\"S\"/><output stream=\"A\" schema=\"T\"/>"
    "<param name=\"gap\">5</param><library path=\"libx.so\" symbol=\"sym\"/></operator>\n"
    SINK("out", "A") TAIL, 4);
  const Model *m = &op_named(f, "c")->model;
  ck_assert(!m->declared);
  ck_assert_int_eq(m->state, STATE_UNKNOWN);
  ck_assert_int_eq(m->sel, SEL_MANY);
  ck_assert_int_eq(m->nforwards, 0);
  ck_assert_int_eq(f->regions.n, 0);
  Graph *p = rewrite_and_place(f, NULL);
  char *xml = unit_write_string(graph_emit_xml, p);
  ck_assert_ptr_null(strstr(xml, "<model"));
  ck_assert_ptr_nonnull(strstr(xml, "<param name=\"gap\">5</param>\n    <library path=\"libx.so\" symbol=\"sym\"/>"));
  free(xml);
  graph_free(p);
  free_fission(f);
}
END_TEST

/* Custom with a model joins regions like a built-in: Filter -> Custom (partitioned on k) ->
 * Functor, all forwarding k, form one keyed region; forwards="*" is expanded for the analysis and
 * written back as "*". */
START_TEST(test_custom_with_model) {
  Fission *f = fission_of(HEAD SRC FILTER("keep", "S", "A")
    "<operator name=\"sess\" kind=\"Custom\"><input stream=\"A\"/><output stream=\"B\" schema=\"T\"/>"
    "<param name=\"gap\">5</param><model state=\"partitioned\" keys=\"k\" selectivity=\"atmostone\" "
    "forwards=\"*\" punct=\"none\"/><library path=\"libx.so\" symbol=\"sym\"/></operator>\n"
    OP("dur", "Functor", "B", "C", "<set attr=\"v\">v * 60</set>") SINK("out", "C") TAIL, 2);
  const Op *sess = op_named(f, "sess");
  ck_assert(sess->model.forwards_all);
  ck_assert(model_forwards(sess, "k") && model_forwards(sess, "j") && model_forwards(sess, "v"));
  ck_assert_int_eq(sess->model.nforwards, 3);
  assert_regions(f, "r1: keep sess dur key=k width=2 hash/seqpulse from=- to=-\n");
  Graph *p = rewrite_and_place(f, NULL);
  assert_graph(p,
    "src Beacon host=local out=S\n"
    "r1.split Split region=r1 origin=keep host=local in=S out=S.r1[0];S.r1[1] strategy=hash keys=k "
    "sequence=assign pulse=128\n"
    "keep[0] Filter region=r1 channel=0 origin=keep host=local in=S.r1[0] out=A[0]\n"
    "sess[0] Custom region=r1 channel=0 origin=sess host=local in=A[0] out=B[0]\n"
    "dur[0] Functor region=r1 channel=0 origin=dur host=local in=B[0] out=C[0]\n"
    "keep[1] Filter region=r1 channel=1 origin=keep host=local in=S.r1[1] out=A[1]\n"
    "sess[1] Custom region=r1 channel=1 origin=sess host=local in=A[1] out=B[1]\n"
    "dur[1] Functor region=r1 channel=1 origin=dur host=local in=B[1] out=C[1]\n"
    "r1.merge Merge region=r1 origin=dur host=local in=C[0];C[1] out=C order=seqpulse\n"
    "out FileSink host=local in=C\n");
  char *xml = unit_write_string(graph_emit_xml, p);
  const char *replica =
    "  <operator name=\"sess[1]\" kind=\"Custom\" host=\"local\" origin=\"sess\" region=\"r1\" channel=\"1\">\n"
    "    <input stream=\"A[1]\"/>\n"
    "    <output stream=\"B[1]\" schema=\"T\"/>\n"
    "    <param name=\"gap\">5</param>\n"
    "    <model state=\"partitioned\" keys=\"k\" selectivity=\"atmostone\" forwards=\"*\" punct=\"none\"/>\n"
    "    <library path=\"libx.so\" symbol=\"sym\"/>\n"
    "  </operator>\n";
  ck_assert_msg(strstr(xml, replica) != NULL, "missing:\n%s\nin:\n%s", replica, xml);
  free(xml);
  graph_free(p);
  free_fission(f);
}
END_TEST

/* ---- rule 3: selectivity one, atmostone or many ---- */

/* FlatMap and a Custom operator of selectivity many are replicated: the outputs of one input keep
 * its position and their order (keyed by their index), so the Merge is seqpulse. */
START_TEST(test_rule3_selectivity) {
  Fission *f = fission_of(HEAD SRC
    OP("fm", "FlatMap", "S", "A", "<param name=\"count\">k</param><set attr=\"v\">v + i</set>")
    "<operator name=\"many\" kind=\"Custom\"><input stream=\"A\"/><output stream=\"B\" schema=\"T\"/>"
    "<model state=\"none\" selectivity=\"many\"/><library path=\"x.so\" symbol=\"s\"/></operator>\n"
    WORK("w", "B", "C") SINK("out", "C") TAIL, 2);
  ck_assert_ptr_null(why(f, "fm"));
  ck_assert_ptr_null(why(f, "many"));
  assert_regions(f, "r1: fm many w key=- width=2 roundrobin/seqpulse from=- to=-\n");
  free_fission(f);
}
END_TEST

/* ---- rule 4: colocate ---- */

START_TEST(test_rule4_colocate) {
  Fission *f = fission_of(HEAD SRC WORKX("a", " colocate=\"crm\"", "S", "A") WORKX("b", " colocate=\"db\"", "A", "B")
                          WORKX("c", " colocate=\"crm\"", "B", "C") SINK("out", "C") TAIL, 2);
  ck_assert_str_eq(why(f, "a"), "it shares colocate tag 'crm' with 'c' (rule 4)");
  ck_assert_str_eq(why(f, "c"), "it shares colocate tag 'crm' with 'a' (rule 4)");
  /* a tag nobody else carries constrains nothing */
  ck_assert_ptr_null(why(f, "b"));
  assert_regions(f, "r1: b key=- width=2 roundrobin/roundrobin from=- to=-\n");
  free_fission(f);
  /* three members: each names the first other one in document order; tags are compared exactly */
  f = fission_of(HEAD SRC WORKX("x", " colocate=\"t\"", "S", "A") WORKX("y", " colocate=\"t\"", "A", "B")
                 WORKX("z", " colocate=\"t\"", "B", "C") WORKX("u", " colocate=\"T\"", "C", "D") SINK("out", "D") TAIL, 2);
  ck_assert_str_eq(why(f, "x"), "it shares colocate tag 't' with 'y' (rule 4)");
  ck_assert_str_eq(why(f, "y"), "it shares colocate tag 't' with 'x' (rule 4)");
  ck_assert_str_eq(why(f, "z"), "it shares colocate tag 't' with 'x' (rule 4)");
  ck_assert_ptr_null(why(f, "u"));
  free_fission(f);
}
END_TEST

/* ---- rule 5: punctuation generated for a consumer downstream ---- */

#define CUSTOM_PUNCT(name, in, out, punct)                                                        \
  "<operator name=\"" name "\" kind=\"Custom\"><input stream=\"" in "\"/><output stream=\"" out   \
  "\" schema=\"T\"/><model state=\"none\" selectivity=\"one\" forwards=\"*\" punct=\"" punct "\"/>" \
  "<library path=\"x.so\" symbol=\"s\"/></operator>\n"

START_TEST(test_rule5_punctuation) {
  /* gen -> w -> use: the consumer is two operators down; late generates with nobody below it */
  Fission *f = fission_of(HEAD SRC CUSTOM_PUNCT("gen", "S", "A", "generates") WORK("w", "A", "B")
                          CUSTOM_PUNCT("use", "B", "C", "consumes") CUSTOM_PUNCT("late", "C", "D", "generates")
                          SINK("out", "D") TAIL, 2);
  ck_assert_str_eq(why(f, "gen"), "it generates punctuation that 'use' downstream consumes (rule 5)");
  ck_assert_ptr_null(why(f, "w"));
  /* a consumer may emit when a window punctuation arrives: without a key, never replicated */
  ck_assert_str_eq(why(f, "use"), "it emits on punctuation (punct=\"consumes\") without a key to order that by (rule 5)");
  ck_assert_ptr_null(why(f, "late")); /* the consumer is upstream of it */
  assert_regions(f, "r1: w key=- width=2 roundrobin/roundrobin from=- to=-\n"
                    "r2: late key=- width=2 roundrobin/roundrobin from=- to=-\n");
  ck_assert_str_eq(note(f, "late"), "starts region r2: its producer 'use' is not parallelized");
  free_fission(f);
}
END_TEST

START_TEST(test_rule5_consumer_on_other_branch) {
  /* the consumer is downstream of src but not of gen: gen may be replicated */
  Fission *f = fission_of(HEAD SRC CUSTOM_PUNCT("gen", "S", "A", "generates") SINK("o1", "A")
                          CUSTOM_PUNCT("use", "S", "B", "consumes") SINK("o2", "B") TAIL, 2);
  ck_assert_ptr_null(why(f, "gen"));
  ck_assert_str_eq(why(f, "use"), "it emits on punctuation (punct=\"consumes\") without a key to order that by (rule 5)");
  assert_regions(f, "r1: gen key=- width=2 roundrobin/roundrobin from=- to=-\n");
  free_fission(f);
}
END_TEST

/* A keyed Custom operator emitting per key on a window punctuation (issue 8's failing case), and one
 * flushing its open sessions on the final punctuation: their key is in their output, so what they
 * emit there is ordered by key (the runtime's ordering service) and they are replicated (rule 5),
 * with seqpulse Merges. */
#define CUSTOM_KEYED(name, in, out, extra)                                                        \
  "<operator name=\"" name "\" kind=\"Custom\"><input stream=\"" in "\"/><output stream=\"" out   \
  "\" schema=\"T\"/><model state=\"partitioned\" keys=\"k\" selectivity=\"atmostone\" forwards=\"*\"" extra \
  "/><library path=\"x.so\" symbol=\"s\"/></operator>\n"

START_TEST(test_rule5_emits_on_punctuation) {
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") CUSTOM_KEYED("win", "A", "B", " punct=\"consumes\"")
                          DEDUP("d", "B", "C", "k") CUSTOM_KEYED("sess", "C", "D", " final=\"emits\"")
                          CUSTOM_KEYED("plain", "D", "E", " final=\"none\"") SINK("out", "E") TAIL, 2);
  ck_assert_int_eq(op_named(f, "sess")->model.final, FINAL_EMITS);
  ck_assert_int_eq(op_named(f, "plain")->model.final, FINAL_NONE);
  ck_assert_int_eq(op_named(f, "win")->model.final, FINAL_NONE); /* the default */
  ck_assert_ptr_null(why(f, "win"));
  ck_assert_ptr_null(why(f, "sess"));
  ck_assert_ptr_null(why(f, "plain"));
  assert_regions(f, "r1: a win d sess plain key=k width=2 hash/seqpulse from=- to=-\n");
  /* the model is written back: final="emits" on the replicas, `none` (the default) left out */
  Graph *p = rewrite_and_place(f, NULL);
  char *xml = unit_write_string(graph_emit_xml, p);
  const char *sess = "    <model state=\"partitioned\" keys=\"k\" selectivity=\"atmostone\" forwards=\"*\" "
                     "punct=\"none\" final=\"emits\"/>\n";
  ck_assert_msg(strstr(xml, sess) != NULL, "missing:\n%s\nin:\n%s", sess, xml);
  ck_assert_ptr_null(strstr(xml, "final=\"none\""));
  /* and reads back to the same model */
  Graph *back = unit_graph_text(xml);
  ck_assert_int_eq(graph_find_op(back, "sess[0]")->model.final, FINAL_EMITS);
  ck_assert_int_eq(graph_find_op(back, "plain[0]")->model.final, FINAL_NONE);
  graph_free(back);
  free(xml);
  graph_free(p);
  free_fission(f);
}
END_TEST

/* final takes `none` or `emits`, nothing else (the schema says so). */
START_TEST(test_rule5_final_values) {
  const char *text = HEAD SRC CUSTOM_KEYED("sess", "S", "A", " final=\"flush\"") SINK("out", "A") TAIL;
  char *msgs = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&msgs, &len);
  Diag d;
  diag_init(&d, "t.xml", m);
  Graph *g = graph_parse_memory(text, strlen(text), "t.xml", XSD, &d);
  diag_flush(&d, DIAG_AS_REPORTED);
  fclose(m);
  ck_assert_ptr_null(g);
  ck_assert_str_eq(msgs, "t.xml:5: error: attribute 'final' of <model> must be 'none' or 'emits', got 'flush'\n");
  free(msgs);
}
END_TEST

/* ---- rule 6: parallel="no", sources, sinks, already in a region ---- */

START_TEST(test_rule6_user_and_roles) {
  Fission *f = fission_of(HEAD SRC WORKX("a", " parallel=\"no\"", "S", "A") WORKX("b", " parallel=\"auto\"", "A", "B")
                          SINK("out", "B") TAIL, 2);
  ck_assert_str_eq(why(f, "src"), "it is a source (Beacon)");
  ck_assert_str_eq(why(f, "a"), "it is marked parallel=\"no\"");
  ck_assert_ptr_null(why(f, "b"));
  ck_assert_str_eq(why(f, "out"), "it is a sink (FileSink)");
  ck_assert_str_eq(note(f, "b"), "starts region r1: its producer 'a' is not parallelized");
  ck_assert_str_eq(op_named(f, "a")->why_serial, "it is marked parallel=\"no\"");
  ck_assert_ptr_null(op_named(f, "b")->why_serial);
  free_fission(f);
}
END_TEST

START_TEST(test_rule6_custom_source_and_sink) {
  Fission *f = fission_of(HEAD
    "<operator name=\"gen\" kind=\"Custom\"><output stream=\"S\" schema=\"T\"/>"
    "<model state=\"none\" selectivity=\"one\"/><library path=\"x.so\" symbol=\"s\"/></operator>\n"
    "<operator name=\"put\" kind=\"Custom\"><input stream=\"S\"/>"
    "<model state=\"none\" selectivity=\"one\"/><library path=\"x.so\" symbol=\"s\"/></operator>\n" TAIL, 2);
  ck_assert_str_eq(why(f, "gen"), "it is a source (Custom)");
  ck_assert_str_eq(why(f, "put"), "it is a sink (Custom)");
  free_fission(f);
}
END_TEST

/* A rewritten graph is not parallelized again, and rewriting it gives the same document. */
START_TEST(test_rule6_already_parallel) {
  Fission *f = fission_of(HEAD SRC DEDUP("d", "S", "A", "k") SINK("out", "A") TAIL, 2);
  Graph *p = rewrite_and_place(f, "h0=127.0.0.1:7001,h1=127.0.0.1:7002");
  char *once = unit_write_string(graph_emit_xml, p);
  Fission *again = fission_of(once, 3);
  ck_assert(again->g->rewritten);
  ck_assert_int_eq(again->regions.n, 0);
  ck_assert_str_eq(why(again, "d[0]"), "it already belongs to region 'r1'");
  ck_assert_str_eq(why(again, "r1.split"), "it already belongs to region 'r1'");
  ck_assert_str_eq(why(again, "src"), "the graph is already parallelized (it carries region attributes)");
  ck_assert_str_eq(why(again, "out"), "the graph is already parallelized (it carries region attributes)");
  Graph *p2 = rewrite_and_place(again, NULL); /* keeps the document's own hosts */
  char *twice = unit_write_string(graph_emit_xml, p2);
  ck_assert_str_eq(twice, once);
  free(once);
  free(twice);
  graph_free(p2);
  graph_free(p);
  free_fission(again);
  free_fission(f);
}
END_TEST

/* A Split or Merge written by the user (without region) is not replicated. */
START_TEST(test_rule6_user_split_merge) {
  Fission *f = fission_of(HEAD SRC
    "<operator name=\"sp\" kind=\"Split\"><input stream=\"S\"/><output stream=\"A\" schema=\"T\"/>"
    "<param name=\"strategy\">roundrobin</param></operator>\n"
    "<operator name=\"mg\" kind=\"Merge\"><input stream=\"A\"/><output stream=\"B\" schema=\"T\"/>"
    "<param name=\"order\">roundrobin</param></operator>\n"
    SINK("out", "B") TAIL, 2);
  ck_assert_str_eq(why(f, "sp"), "it is a Split written in the input graph");
  ck_assert_str_eq(why(f, "mg"), "it is a Merge written in the input graph");
  free_fission(f);
}
END_TEST

/* ---- the strategy table ---- */

START_TEST(test_strategy_stateless_one) {
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") OP("b", "Functor", "A", "B", "<set attr=\"v\">v * 2</set>")
                          SINK("out", "B") TAIL, 2);
  assert_regions(f, "r1: a b key=- width=2 roundrobin/roundrobin from=- to=-\n");
  Graph *p = rewrite_and_place(f, NULL);
  assert_graph(p,
    "src Beacon host=local out=S\n"
    "r1.split Split region=r1 origin=a host=local in=S out=S.r1[0];S.r1[1] strategy=roundrobin sequence=assign pulse=0\n"
    "a[0] Work region=r1 channel=0 origin=a host=local in=S.r1[0] out=A[0]\n"
    "b[0] Functor region=r1 channel=0 origin=b host=local in=A[0] out=B[0]\n"
    "a[1] Work region=r1 channel=1 origin=a host=local in=S.r1[1] out=A[1]\n"
    "b[1] Functor region=r1 channel=1 origin=b host=local in=A[1] out=B[1]\n"
    "r1.merge Merge region=r1 origin=b host=local in=B[0];B[1] out=B order=roundrobin\n"
    "out FileSink host=local in=B\n");
  graph_free(p);
  free_fission(f);
}
END_TEST

START_TEST(test_strategy_partitioned_one) {
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") COUNTK("c", "A", "B") SINK("out", "B") TAIL, 3);
  assert_regions(f, "r1: a c key=k width=3 hash/seq from=- to=-\n");
  Graph *p = rewrite_and_place(f, NULL);
  assert_op(p, "r1.split",
                   "r1.split Split region=r1 origin=a host=local in=S out=S.r1[0];S.r1[1];S.r1[2] strategy=hash keys=k "
                   "sequence=assign pulse=0");
  assert_op(p, "r1.merge",
                   "r1.merge Merge region=r1 origin=c host=local in=B[0];B[1];B[2] out=B order=seq");
  graph_free(p);
  free_fission(f);
}
END_TEST

START_TEST(test_strategy_atmostone) {
  /* stateless with a Filter: roundrobin / seqpulse; keyed with a Dedup: hash / seqpulse; a Functor
   * with where is atmostone too */
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") FILTER("b", "A", "B") SINK("o1", "B")
                          WORK("c", "S", "C") DEDUP("d", "C", "D", "k") SINK("o2", "D")
                          OP("e", "Functor", "S", "E", "<param name=\"where\">v &gt; 2</param>") SINK("o3", "E") TAIL, 2);
  assert_regions(f, "r1: a b key=- width=2 roundrobin/seqpulse from=- to=-\n"
                    "r2: c d key=k width=2 hash/seqpulse from=- to=-\n"
                    "r3: e key=- width=2 roundrobin/seqpulse from=- to=-\n");
  ck_assert_int_eq(op_named(f, "e")->model.sel, SEL_ATMOSTONE);
  Graph *p = rewrite_and_place(f, NULL);
  assert_op(p, "r1.split",
                   "r1.split Split region=r1 origin=a host=local in=S out=S.r1[0];S.r1[1] strategy=roundrobin "
                   "sequence=assign pulse=128");
  assert_op(p, "r1.merge",
                   "r1.merge Merge region=r1 origin=b host=local in=B[0];B[1] out=B order=seqpulse");
  assert_op(p, "r2.split",
                   "r2.split Split region=r2 origin=c host=local in=S out=S.r2[0];S.r2[1] strategy=hash keys=k "
                   "sequence=assign pulse=128");
  assert_op(p, "r2.merge",
                   "r2.merge Merge region=r2 origin=d host=local in=D[0];D[1] out=D order=seqpulse");
  graph_free(p);
  free_fission(f);
}
END_TEST

/* Aggregate: sliding is selectivity one (seq), tumbling atmostone (seqpulse). */
START_TEST(test_strategy_aggregate_windows) {
  Fission *f = fission_of(HEAD SRC SLIDEJ("slide", "S", "A") SINK("o1", "A")
    OP("tumble", "Aggregate", "S", "B", "<param name=\"partitionBy\">j</param><param name=\"window\">tumbling 2</param>"
       "<set attr=\"k\">last(k)</set><set attr=\"v\">sum(v)</set>") SINK("o2", "B") TAIL, 2);
  assert_regions(f, "r1: slide key=j width=2 hash/seq from=- to=-\n"
                    "r2: tumble key=j width=2 hash/seqpulse from=- to=-\n");
  free_fission(f);
}
END_TEST

/* ---- keys ---- */

/* A later key containing the region key joins (hashing on fewer attributes coarsens the partition). */
START_TEST(test_keys_compatible_join) {
  Fission *f = fission_of(HEAD SRC DEDUP("a", "S", "A", "k") DEDUP("b", "A", "B", "j k") DEDUP("c", "B", "C", "k")
                          WORK("w", "C", "D") SINK("out", "D") TAIL, 2);
  assert_regions(f, "r1: a b c w key=k width=2 hash/seqpulse from=- to=-\n");
  free_fission(f);
}
END_TEST

/* Incompatible keys: a shuffle. Each upstream channel ends in its own Split (hash on the
 * downstream key, sequence keep, pulses), each downstream channel begins with a seqpulse Merge of
 * every upstream channel; no central Merge between them. Widths differ on both sides. */
START_TEST(test_keys_incompatible_shuffle) {
  Fission *f = fission_of(HEAD SRC DEDUP("a", "S", "A", "j") DEDUPX("b", " width=\"2\"", "A", "B", "k")
                          SINK("out", "B") TAIL, 3);
  assert_regions(f, "r1: a key=j width=3 hash/seqpulse from=- to=r2\n"
                    "r2: b key=k width=2 hash/seqpulse from=r1 to=-\n");
  ck_assert_str_eq(note(f, "b"), "starts region r2, shuffled from r1: its key 'k' shares no attribute with region "
                                 "r1's key 'j'");
  ck_assert_str_eq(region_n(f, 2)->width_by, "b");
  Graph *p = rewrite_and_place(f, "h0=127.0.0.1:7001,h1=127.0.0.1:7002,h2=127.0.0.1:7003");
  assert_graph(p,
    "src Beacon host=h0 out=S\n"
    "r1.split Split region=r1 origin=a host=h0 in=S out=S.r1[0];S.r1[1];S.r1[2] strategy=hash keys=j "
    "sequence=assign pulse=128\n"
    "a[0] Dedup region=r1 channel=0 origin=a host=h0 in=S.r1[0] out=A[0]\n"
    "a[1] Dedup region=r1 channel=1 origin=a host=h1 in=S.r1[1] out=A[1]\n"
    "a[2] Dedup region=r1 channel=2 origin=a host=h2 in=S.r1[2] out=A[2]\n"
    "r1.split[0] Split region=r1 channel=0 origin=a host=h0 in=A[0] out=A[0][0];A[0][1] strategy=hash keys=k "
    "sequence=keep pulse=128\n"
    "r1.split[1] Split region=r1 channel=1 origin=a host=h1 in=A[1] out=A[1][0];A[1][1] strategy=hash keys=k "
    "sequence=keep pulse=128\n"
    "r1.split[2] Split region=r1 channel=2 origin=a host=h2 in=A[2] out=A[2][0];A[2][1] strategy=hash keys=k "
    "sequence=keep pulse=128\n"
    "r2.merge[0] Merge region=r2 channel=0 origin=b host=h0 in=A[0][0];A[1][0];A[2][0] out=A.r2[0] order=seqpulse\n"
    "r2.merge[1] Merge region=r2 channel=1 origin=b host=h1 in=A[0][1];A[1][1];A[2][1] out=A.r2[1] order=seqpulse\n"
    "b[0] Dedup region=r2 channel=0 origin=b host=h0 in=A.r2[0] out=B[0]\n"
    "b[1] Dedup region=r2 channel=1 origin=b host=h1 in=A.r2[1] out=B[1]\n"
    "r2.merge Merge region=r2 origin=b host=h0 in=B[0];B[1] out=B order=seqpulse\n"
    "out FileSink host=h0 in=B\n");
  ck_assert_ptr_null(graph_find_op(p, "r1.merge"));
  ck_assert_ptr_null(graph_find_op(p, "r2.split"));
  ck_assert_int_eq(op_named(f, "b")->width, 2);      /* the input graph keeps its width attribute */
  ck_assert_int_eq(graph_find_op(p, "b[0]")->width, 0); /* replicas do not repeat it */
  graph_free(p);
  free_fission(f);
}
END_TEST

/* Even selectivity-one regions use seqpulse on both sides of a shuffle. */
START_TEST(test_keys_shuffle_forces_seqpulse) {
  Fission *f = fission_of(HEAD SRC COUNTK("a", "S", "A") SLIDEJ("b", "A", "B") SINK("out", "B") TAIL, 2);
  assert_regions(f, "r1: a key=k width=2 hash/seqpulse from=- to=r2\n"
                    "r2: b key=j width=2 hash/seqpulse from=r1 to=-\n");
  ck_assert_str_eq(note(f, "b"), "starts region r2, shuffled from r1: its key 'j' shares no attribute with region "
                                 "r1's key 'k'");
  Graph *p = rewrite_and_place(f, NULL);
  assert_op(p, "r1.split",
                   "r1.split Split region=r1 origin=a host=local in=S out=S.r1[0];S.r1[1] strategy=hash keys=k "
                   "sequence=assign pulse=128");
  assert_op(p, "r1.split[1]",
                   "r1.split[1] Split region=r1 channel=1 origin=a host=local in=A[1] out=A[1][0];A[1][1] strategy=hash "
                   "keys=j sequence=keep pulse=128");
  graph_free(p);
  free_fission(f);
}
END_TEST

/* A Functor that changes the key attribute after the region's last partitioned operator stays in
 * the region's channels: no shuffle, no region of its own (it was a region of its own, shuffled
 * from the keyed one, before issue 8). */
START_TEST(test_keys_functor_modifies_key) {
  Fission *f = fission_of(HEAD SRC DEDUP("d", "S", "A", "k") SETK("f", "A", "B") WORK("w", "B", "C")
                          SINK("out", "C") TAIL, 2);
  ck_assert(!model_forwards(op_named(f, "f"), "k"));
  ck_assert(model_forwards(op_named(f, "f"), "j") && model_forwards(op_named(f, "f"), "v"));
  assert_regions(f, "r1: d f w key=k width=2 hash/seqpulse from=- to=-\n");
  ck_assert_str_eq(note(f, "f"), "stays in region r1 although it does not forward key 'k': it is stateless and "
                                 "follows the region's last partitioned operator");
  ck_assert_ptr_null(note(f, "w")); /* w forwards k */
  Graph *p = rewrite_and_place(f, NULL);
  assert_graph(p,
    "src Beacon host=local out=S\n"
    "r1.split Split region=r1 origin=d host=local in=S out=S.r1[0];S.r1[1] strategy=hash keys=k sequence=assign "
    "pulse=128\n"
    "d[0] Dedup region=r1 channel=0 origin=d host=local in=S.r1[0] out=A[0]\n"
    "f[0] Functor region=r1 channel=0 origin=f host=local in=A[0] out=B[0]\n"
    "w[0] Work region=r1 channel=0 origin=w host=local in=B[0] out=C[0]\n"
    "d[1] Dedup region=r1 channel=1 origin=d host=local in=S.r1[1] out=A[1]\n"
    "f[1] Functor region=r1 channel=1 origin=f host=local in=A[1] out=B[1]\n"
    "w[1] Work region=r1 channel=1 origin=w host=local in=B[1] out=C[1]\n"
    "r1.merge Merge region=r1 origin=w host=local in=C[0];C[1] out=C order=seqpulse\n"
    "out FileSink host=local in=C\n");
  graph_free(p);
  free_fission(f);
}
END_TEST

/* Rewriting the key between two partitioned operators costs one shuffle, not two: the Functor
 * stays in the first region, the second partitioned operator starts the next. */
START_TEST(test_keys_rewrite_one_shuffle) {
  Fission *f = fission_of(HEAD SRC DEDUP("d", "S", "A", "k") SETK("f", "A", "B") WORK("w", "B", "C")
                          DEDUP("e", "C", "D", "k") SINK("out", "D") TAIL, 2);
  assert_regions(f, "r1: d f w key=k width=2 hash/seqpulse from=- to=r2\n"
                    "r2: e key=k width=2 hash/seqpulse from=r1 to=-\n");
  ck_assert_str_eq(note(f, "e"), "starts region r2, shuffled from r1: 'f' does not forward key 'k'");
  ck_assert_str_eq(note(f, "f"), "stays in region r1 although it does not forward key 'k': it is stateless and "
                                 "follows the region's last partitioned operator");
  Graph *p = rewrite_and_place(f, NULL);
  assert_graph(p,
    "src Beacon host=local out=S\n"
    "r1.split Split region=r1 origin=d host=local in=S out=S.r1[0];S.r1[1] strategy=hash keys=k sequence=assign "
    "pulse=128\n"
    "d[0] Dedup region=r1 channel=0 origin=d host=local in=S.r1[0] out=A[0]\n"
    "f[0] Functor region=r1 channel=0 origin=f host=local in=A[0] out=B[0]\n"
    "w[0] Work region=r1 channel=0 origin=w host=local in=B[0] out=C[0]\n"
    "d[1] Dedup region=r1 channel=1 origin=d host=local in=S.r1[1] out=A[1]\n"
    "f[1] Functor region=r1 channel=1 origin=f host=local in=A[1] out=B[1]\n"
    "w[1] Work region=r1 channel=1 origin=w host=local in=B[1] out=C[1]\n"
    "r1.split[0] Split region=r1 channel=0 origin=w host=local in=C[0] out=C[0][0];C[0][1] strategy=hash keys=k "
    "sequence=keep pulse=128\n"
    "r1.split[1] Split region=r1 channel=1 origin=w host=local in=C[1] out=C[1][0];C[1][1] strategy=hash keys=k "
    "sequence=keep pulse=128\n"
    "r2.merge[0] Merge region=r2 channel=0 origin=e host=local in=C[0][0];C[1][0] out=C.r2[0] order=seqpulse\n"
    "r2.merge[1] Merge region=r2 channel=1 origin=e host=local in=C[0][1];C[1][1] out=C.r2[1] order=seqpulse\n"
    "e[0] Dedup region=r2 channel=0 origin=e host=local in=C.r2[0] out=D[0]\n"
    "e[1] Dedup region=r2 channel=1 origin=e host=local in=C.r2[1] out=D[1]\n"
    "r2.merge Merge region=r2 origin=e host=local in=D[0];D[1] out=D order=seqpulse\n"
    "out FileSink host=local in=D\n");
  graph_free(p);
  free_fission(f);
}
END_TEST

/* Keys (j, k) then (k): one region hashed on k, no shuffle. The operators between the entry and the
 * second partitioned operator must forward only the shrunk key: a Functor changing j between them
 * is fine once the key is k alone, and the whole chain is re-verified against k. */
START_TEST(test_keys_shared_part) {
  Fission *f = fission_of(HEAD SRC WORK("w", "S", "A") DEDUP("a", "A", "B", "j k") SETJ("g", "B", "C")
                          DEDUP("b", "C", "D", "k") SETK("h", "D", "E") SINK("out", "E") TAIL, 2);
  assert_regions(f, "r1: w a g b h key=k width=2 hash/seqpulse from=- to=-\n");
  ck_assert_str_eq(note(f, "b"), "shrinks region r1's key from 'j' and 'k' to 'k', the part its key 'k' shares");
  ck_assert_ptr_null(note(f, "g")); /* it forwards the region key k: nothing to say */
  ck_assert_str_eq(note(f, "h"), "stays in region r1 although it does not forward key 'k': it is stateless and "
                                 "follows the region's last partitioned operator");
  Graph *p = rewrite_and_place(f, NULL);
  assert_op(p, "r1.split", "r1.split Split region=r1 origin=w host=local in=S out=S.r1[0];S.r1[1] strategy=hash "
                           "keys=k sequence=assign pulse=128");
  ck_assert_int_eq(count_kind(p, KIND_SPLIT), 1);
  ck_assert_int_eq(count_kind(p, KIND_MERGE), 1);
  graph_free(p);
  free_fission(f);
  /* the key order of the region follows the first operator: (k, j) then (j) leaves j */
  f = fission_of(HEAD SRC DEDUP("a", "S", "A", "k j") DEDUP("b", "A", "B", "j v") SINK("out", "B") TAIL, 2);
  assert_regions(f, "r1: a b key=j width=2 hash/seqpulse from=- to=-\n");
  free_fission(f);
}
END_TEST

/* A shared key part that an operator in between does not forward: a shuffle. Here g changes j
 * after a, and b is keyed (j, k): the shared part is j and k, which g breaks. */
START_TEST(test_keys_shared_part_not_forwarded) {
  Fission *f = fission_of(HEAD SRC DEDUP("a", "S", "A", "j k") SETJ("g", "A", "B") DEDUP("b", "B", "C", "k j")
                          SINK("out", "C") TAIL, 2);
  assert_regions(f, "r1: a g key=j k width=2 hash/seqpulse from=- to=r2\n"
                    "r2: b key=k j width=2 hash/seqpulse from=r1 to=-\n");
  ck_assert_str_eq(note(f, "b"), "starts region r2, shuffled from r1: 'g' does not forward key 'j'");
  free_fission(f);
  /* the partitioned operator itself is between the entry and the next one: a (keyed k) rewrites k */
  f = fission_of(HEAD SRC
    OP("agg", "Aggregate", "S", "A", "<param name=\"partitionBy\">j k</param><param name=\"window\">sliding 2</param>"
       "<set attr=\"k\">max(v)</set><set attr=\"v\">sum(v)</set>")
    WORK("w", "A", "B") DEDUP("d", "B", "C", "j") SINK("out", "C") TAIL, 2);
  ck_assert(model_forwards(op_named(f, "agg"), "j") && !model_forwards(op_named(f, "agg"), "k"));
  assert_regions(f, "r1: agg w d key=j width=2 hash/seqpulse from=- to=-\n");
  ck_assert_str_eq(note(f, "d"), "shrinks region r1's key from 'j' and 'k' to 'j', the part its key 'j' shares");
  free_fission(f);
}
END_TEST

/* A Functor that sets the key to itself still forwards it. */
START_TEST(test_keys_set_to_itself_forwards) {
  Fission *f = fission_of(HEAD SRC DEDUP("d", "S", "A", "k")
                          OP("f", "Functor", "A", "B", "<set attr=\"k\">k</set><set attr=\"v\">v + 1</set>")
                          DEDUP("e", "B", "C", "k") SINK("out", "C") TAIL, 2);
  assert_regions(f, "r1: d f e key=k width=2 hash/seqpulse from=- to=-\n");
  free_fission(f);
}
END_TEST

/* A keyed operator with a compatible key still needs the key forwarded by everything before it. */
START_TEST(test_keys_dropped_by_keyed_operator) {
  Fission *f = fission_of(HEAD SRC
    OP("agg", "Aggregate", "S", "A", "<param name=\"partitionBy\">k</param><param name=\"window\">sliding 2</param>"
       "<set attr=\"k\">max(v)</set><set attr=\"j\">last(j)</set><set attr=\"v\">sum(v)</set>")
    DEDUP("d", "A", "B", "k") SINK("out", "B") TAIL, 2);
  ck_assert(!model_forwards(op_named(f, "agg"), "k"));
  assert_regions(f, "r1: agg key=k width=2 hash/seqpulse from=- to=r2\n"
                    "r2: d key=k width=2 hash/seqpulse from=r1 to=-\n");
  ck_assert_str_eq(note(f, "d"), "starts region r2, shuffled from r1: 'agg' does not forward key 'k'");
  free_fission(f);
}
END_TEST

/* A stateless prefix that forwards the key becomes part of the keyed region (one hash split). */
START_TEST(test_keys_forwarding_prefix_joins) {
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") FILTER("b", "A", "B") DEDUP("d", "B", "C", "k")
                          SINK("out", "C") TAIL, 2);
  assert_regions(f, "r1: a b d key=k width=2 hash/seqpulse from=- to=-\n");
  ck_assert_ptr_null(note(f, "b"));
  free_fission(f);
}
END_TEST

/* A non-forwarding head stays a stateless region and is shuffled into the keyed region; the
 * forwarding operators after it move into the keyed region with a note. */
START_TEST(test_keys_prefix_split_off) {
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") SETK("f", "A", "B") WORK("w", "B", "C") FILTER("x", "C", "D")
                          DEDUP("d", "D", "E", "k") SINK("out", "E") TAIL, 2);
  assert_regions(f, "r1: a f key=- width=2 roundrobin/seqpulse from=- to=r2\n"
                    "r2: w x d key=k width=2 hash/seqpulse from=r1 to=-\n");
  ck_assert_str_eq(note(f, "w"), "moved from region r1 into keyed region r2 because it forwards 'k'");
  ck_assert_str_eq(note(f, "x"), "moved from region r1 into keyed region r2 because it forwards 'k'");
  ck_assert_ptr_null(note(f, "d"));
  Graph *p = rewrite_and_place(f, NULL);
  assert_graph(p,
    "src Beacon host=local out=S\n"
    "r1.split Split region=r1 origin=a host=local in=S out=S.r1[0];S.r1[1] strategy=roundrobin sequence=assign pulse=128\n"
    "a[0] Work region=r1 channel=0 origin=a host=local in=S.r1[0] out=A[0]\n"
    "f[0] Functor region=r1 channel=0 origin=f host=local in=A[0] out=B[0]\n"
    "a[1] Work region=r1 channel=1 origin=a host=local in=S.r1[1] out=A[1]\n"
    "f[1] Functor region=r1 channel=1 origin=f host=local in=A[1] out=B[1]\n"
    "r1.split[0] Split region=r1 channel=0 origin=f host=local in=B[0] out=B[0][0];B[0][1] strategy=hash keys=k "
    "sequence=keep pulse=128\n"
    "r1.split[1] Split region=r1 channel=1 origin=f host=local in=B[1] out=B[1][0];B[1][1] strategy=hash keys=k "
    "sequence=keep pulse=128\n"
    "r2.merge[0] Merge region=r2 channel=0 origin=w host=local in=B[0][0];B[1][0] out=B.r2[0] order=seqpulse\n"
    "r2.merge[1] Merge region=r2 channel=1 origin=w host=local in=B[0][1];B[1][1] out=B.r2[1] order=seqpulse\n"
    "w[0] Work region=r2 channel=0 origin=w host=local in=B.r2[0] out=C[0]\n"
    "x[0] Filter region=r2 channel=0 origin=x host=local in=C[0] out=D[0]\n"
    "d[0] Dedup region=r2 channel=0 origin=d host=local in=D[0] out=E[0]\n"
    "w[1] Work region=r2 channel=1 origin=w host=local in=B.r2[1] out=C[1]\n"
    "x[1] Filter region=r2 channel=1 origin=x host=local in=C[1] out=D[1]\n"
    "d[1] Dedup region=r2 channel=1 origin=d host=local in=D[1] out=E[1]\n"
    "r2.merge Merge region=r2 origin=d host=local in=E[0];E[1] out=E order=seqpulse\n"
    "out FileSink host=local in=E\n");
  graph_free(p);
  free_fission(f);
}
END_TEST

/* Nothing at the end of the stateless region forwards the key: the keyed operator starts its own
 * region, shuffled from the whole stateless one. */
START_TEST(test_keys_nonforwarding_prefix_shuffled) {
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") SETK("f", "A", "B") DEDUP("d", "B", "C", "k")
                          SINK("out", "C") TAIL, 2);
  assert_regions(f, "r1: a f key=- width=2 roundrobin/seqpulse from=- to=r2\n"
                    "r2: d key=k width=2 hash/seqpulse from=r1 to=-\n");
  ck_assert_str_eq(note(f, "d"), "starts keyed region r2, shuffled from r1: 'f' does not forward key 'k'");
  free_fission(f);
}
END_TEST

/* A Functor that drops the key attribute altogether (another schema) after the last partitioned
 * operator stays in the region too. */
START_TEST(test_keys_schema_without_key) {
  Fission *f = fission_of(HEAD SRC DEDUP("d", "S", "A", "k")
    "<operator name=\"p\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"U\"/>"
    "<set attr=\"u\">k * 10</set></operator>\n"
    SINK("out", "B") TAIL, 2);
  ck_assert(model_forwards(op_named(f, "p"), "v"));
  ck_assert(!model_forwards(op_named(f, "p"), "k"));
  ck_assert_int_eq(op_named(f, "p")->model.nforwards, 1);
  assert_regions(f, "r1: d p key=k width=2 hash/seqpulse from=- to=-\n");
  ck_assert_str_eq(note(f, "p"), "stays in region r1 although it does not forward key 'k': it is stateless and "
                                 "follows the region's last partitioned operator");
  free_fission(f);
}
END_TEST

/* ---- fan-in and fan-out ---- */

START_TEST(test_fan_out_boundaries) {
  /* a's output feeds two operators: a ends its region there; b and c each start one */
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") WORK("b", "A", "B") SINK("o1", "B")
                          DEDUP("c", "A", "C", "k") SINK("o2", "C") SINK("o3", "A") TAIL, 2);
  assert_regions(f, "r1: a key=- width=2 roundrobin/roundrobin from=- to=-\n"
                    "r2: b key=- width=2 roundrobin/roundrobin from=- to=-\n"
                    "r3: c key=k width=2 hash/seqpulse from=- to=-\n");
  ck_assert_str_eq(note(f, "a"), "starts region r1: its producer 'src' is not parallelized");
  ck_assert_str_eq(note(f, "b"), "starts region r2: its input stream 'A' has several consumers (fan-out)");
  ck_assert_str_eq(note(f, "c"), "starts region r3: its input stream 'A' has several consumers (fan-out)");
  Graph *p = rewrite_and_place(f, NULL);
  /* the Merge of r1 writes A itself, read by both Splits and the sink */
  assert_op(p, "r1.merge",
                   "r1.merge Merge region=r1 origin=a host=local in=A[0];A[1] out=A order=roundrobin");
  assert_op(p, "r2.split",
                   "r2.split Split region=r2 origin=b host=local in=A out=A.r2[0];A.r2[1] strategy=roundrobin "
                   "sequence=assign pulse=0");
  assert_op(p, "r3.split",
                   "r3.split Split region=r3 origin=c host=local in=A out=A.r3[0];A.r3[1] strategy=hash keys=k "
                   "sequence=assign pulse=128");
  assert_op(p, "o3", "o3 FileSink host=local in=A");
  graph_free(p);
  free_fission(f);
}
END_TEST

START_TEST(test_fan_in_sink_after_regions) {
  Fission *f = fission_of(HEAD SRC FILTER("a", "S", "A") FILTER("b", "S", "B") SINK("out", "A B") TAIL, 2);
  ck_assert_str_eq(why(f, "out"), "it is a sink (FileSink)");
  Graph *p = rewrite_and_place(f, NULL);
  assert_op(p, "out", "out FileSink host=local in=A+B");
  graph_free(p);
  free_fission(f);
}
END_TEST

/* ---- widths ---- */

/* width="N" sets its region's width, below or above -w; the smallest wins when several disagree,
 * and explain names them all on the line of the operator that won. */
START_TEST(test_width_attribute_sets_region) {
  Fission *f = fission_of(HEAD SRC WORKX("a", " width=\"3\"", "S", "A") WORKX("b", " width=\"2\"", "A", "B")
                          WORKX("c", " width=\"8\"", "B", "C") SINK("o1", "C")
                          WORKX("d", " width=\"9\"", "S", "D") WORK("e", "D", "E") SINK("o2", "E")
                          WORKX("g", " width=\"3\"", "S", "G") WORKX("h", " width=\"3\"", "G", "H") SINK("o3", "H")
                          TAIL, 4);
  assert_regions(f, "r1: a b c key=- width=2 roundrobin/roundrobin from=- to=-\n"
                    "r2: d e key=- width=9 roundrobin/roundrobin from=- to=-\n"
                    "r3: g h key=- width=3 roundrobin/roundrobin from=- to=-\n");
  ck_assert_str_eq(region_n(f, 1)->width_by, "b");
  ck_assert_str_eq(region_n(f, 1)->width_why, "the smallest of 'a' 3, 'b' 2 and 'c' 8");
  ck_assert_str_eq(region_n(f, 2)->width_by, "d"); /* above the global width */
  ck_assert_ptr_null(region_n(f, 2)->width_why);
  ck_assert_str_eq(region_n(f, 3)->width_by, "g"); /* they agree: the first one says so */
  ck_assert_ptr_null(region_n(f, 3)->width_why);
  char *text = decisions_text(f);
  ck_assert_str_eq(text,
    "t.xml:4: src: not parallelized: it is a source (Beacon)\n"
    "t.xml:5: a: parallel in region r1 (width 2, set by 'b', split roundrobin, merge roundrobin); starts region r1: "
    "its input stream 'S' has several consumers (fan-out)\n"
    "t.xml:5: a: region r1: estimated speed-up 1.70x at width 2, bounded by the source 'src' upstream (per "
    "tuple: upstream ~85 ns, Split ~60 ns, operators ~101 ns, channel +55 ns, Merge ~75 ns, downstream ~60 ns; "
    "estimates by kind)\n"
    "t.xml:6: b: parallel in region r1 (width 2, set by 'b', the smallest of 'a' 3, 'b' 2 and 'c' 8, split "
    "roundrobin, merge roundrobin)\n"
    "t.xml:7: c: parallel in region r1 (width 2, set by 'b', split roundrobin, merge roundrobin)\n"
    "t.xml:8: o1: not parallelized: it is a sink (FileSink)\n"
    "t.xml:9: d: parallel in region r2 (width 9, set by 'd', split roundrobin, merge roundrobin); starts region r2: "
    "its input stream 'S' has several consumers (fan-out)\n"
    "t.xml:9: d: region r2: estimated speed-up 1.47x at width 9, bounded by the source 'src' upstream (per "
    "tuple: upstream ~85 ns, Split ~60 ns, operators ~68 ns, channel +55 ns, Merge ~75 ns, downstream ~60 ns; "
    "estimates by kind)\n"
    "t.xml:10: e: parallel in region r2 (width 9, set by 'd', split roundrobin, merge roundrobin)\n"
    "t.xml:11: o2: not parallelized: it is a sink (FileSink)\n"
    "t.xml:12: g: parallel in region r3 (width 3, set by 'g', split roundrobin, merge roundrobin); starts region r3: "
    "its input stream 'S' has several consumers (fan-out)\n"
    "t.xml:12: g: region r3: estimated speed-up 1.47x at width 3, bounded by the source 'src' upstream (per "
    "tuple: upstream ~85 ns, Split ~60 ns, operators ~68 ns, channel +55 ns, Merge ~75 ns, downstream ~60 ns; "
    "estimates by kind)\n"
    "t.xml:13: h: parallel in region r3 (width 3, set by 'g', split roundrobin, merge roundrobin)\n"
    "t.xml:14: o3: not parallelized: it is a sink (FileSink)\n");
  free(text);
  Graph *p = rewrite_and_place(f, NULL);
  ck_assert_int_eq(count_kind(p, KIND_WORK), 3 * 2 + 2 * 9 + 2 * 3);
  ck_assert_ptr_null(graph_find_op(p, "a[2]"));
  ck_assert_ptr_nonnull(graph_find_op(p, "e[8]"));
  graph_free(p);
  free_fission(f);
}
END_TEST

/* width="1" keeps only that operator serial, like parallel="no": its neighbours still form regions
 * (before issue 8 it dissolved its whole region, a and b included). */
START_TEST(test_width_one_attribute_keeps_operator_serial) {
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") WORKX("b", " width=\"1\"", "A", "B") WORK("c", "B", "C")
                          SINK("o1", "C") TAIL, 3);
  ck_assert_str_eq(why(f, "b"), "it is marked width=\"1\"");
  assert_regions(f, "r1: a key=- width=3 roundrobin/roundrobin from=- to=-\n"
                    "r2: c key=- width=3 roundrobin/roundrobin from=- to=-\n");
  ck_assert_str_eq(note(f, "c"), "starts region r2: its producer 'b' is not parallelized");
  free_fission(f);
  /* a keyed Aggregate next to a cheap Functor marked width="1" still runs in parallel */
  f = fission_of(HEAD SRC WORKX("cheap", " width=\"1\"", "S", "A")
                 OP("agg", "Aggregate", "A", "B", "<param name=\"partitionBy\">k</param>"
                    "<param name=\"window\">tumbling 2</param><set attr=\"j\">last(j)</set><set attr=\"v\">sum(v)</set>")
                 SINK("out", "B") TAIL, 2);
  assert_regions(f, "r1: agg key=k width=2 hash/seqpulse from=- to=-\n");
  free_fission(f);
}
END_TEST

/* width="1" behind a shuffle: the upstream region ends in a Merge, the next one starts with a Split. */
START_TEST(test_width_one_after_shuffle) {
  Fission *f = fission_of(HEAD SRC DEDUP("a", "S", "A", "j") DEDUPX("b", " width=\"1\"", "A", "B", "k")
                          WORK("c", "B", "C") SINK("out", "C") TAIL, 2);
  ck_assert_str_eq(why(f, "b"), "it is marked width=\"1\"");
  ck_assert_ptr_null(why(f, "c"));
  assert_regions(f, "r1: a key=j width=2 hash/seqpulse from=- to=-\n"
                    "r2: c key=- width=2 roundrobin/roundrobin from=- to=-\n");
  free_fission(f);
}
END_TEST

/* At -w 1 only regions with a width attribute above 1 remain; the others' operators get the reason,
 * and the regions are formed again without them (so r2 starts with its own Split, not a shuffle). */
START_TEST(test_width_global_one_with_attribute) {
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") SETK("f", "A", "B") WORKX("w", " width=\"3\"", "B", "C")
                          DEDUP("d", "C", "D", "k") SINK("out", "D") TAIL, 1);
  ck_assert_str_eq(why(f, "a"), "the width is 1");
  ck_assert_str_eq(why(f, "f"), "the width is 1");
  assert_regions(f, "r1: w d key=k width=3 hash/seqpulse from=- to=-\n");
  ck_assert_str_eq(note(f, "w"), "starts region r1: its producer 'f' is not parallelized");
  free_fission(f);
  /* at -w 2 the same graph has both regions, joined by a shuffle */
  f = fission_of(HEAD SRC WORK("a", "S", "A") SETK("f", "A", "B") WORKX("w", " width=\"3\"", "B", "C")
                 DEDUP("d", "C", "D", "k") SINK("out", "D") TAIL, 2);
  assert_regions(f, "r1: a f key=- width=2 roundrobin/seqpulse from=- to=r2\n"
                    "r2: w d key=k width=3 hash/seqpulse from=r1 to=-\n");
  free_fission(f);
}
END_TEST

/* At width 1 nothing is parallel and the rewritten graph is the input graph with hosts. */
START_TEST(test_width_one_keeps_graph) {
  const char *text = HEAD SRC WORK("a", "S", "A") DEDUP("d", "A", "B", "k") SINK("out", "B") TAIL;
  Fission *f = fission_of(text, 1);
  ck_assert_int_eq(f->regions.n, 0);
  ck_assert_str_eq(why(f, "a"), "the width is 1");
  ck_assert_str_eq(why(f, "d"), "the width is 1");
  ck_assert_str_eq(why(f, "src"), "it is a source (Beacon)");
  Graph *p = rewrite_and_place(f, NULL);
  ck_assert_int_eq(count_kind(p, KIND_SPLIT) + count_kind(p, KIND_MERGE), 0);
  ck_assert(!p->rewritten);
  assert_graph(p, "src Beacon host=local out=S\n"
                  "a Work host=local in=S out=A\n"
                  "d Dedup host=local in=A out=B\n"
                  "out FileSink host=local in=B\n");
  graph_free(p);
  free_fission(f);
}
END_TEST

/* ---- the rewritten graph ---- */

/* The input graph is never changed by regions, rewrite and place; the rewritten graph is valid. */
START_TEST(test_rewrite_leaves_input_and_checks) {
  const char *text = HEAD SRC WORKX("a", " host=\"h1\"", "S", "A") DEDUP("d", "A", "B", "k") SETK("f", "B", "C")
                     SINK("out", "C") TAIL;
  Graph *g = unit_graph_text(text);
  char *before = unit_write_string(graph_emit_xml, g);
  graph_analyze(g);
  Fission *f = fission_regions(g, 3);
  Graph *p = rewrite_and_place(f, "h0=127.0.0.1:7001,h1=127.0.0.1:7002");
  char *after = unit_write_string(graph_emit_xml, g);
  ck_assert_str_eq(after, before);
  ck_assert_str_eq(op_named(f, "a")->host, "h1");
  char *xml = unit_write_string(graph_emit_xml, p);
  Graph *back = unit_graph_text(xml); /* asserts it validates and checks */
  ck_assert(back->rewritten);
  graph_free(back);
  free(xml);
  free(before);
  free(after);
  graph_free(p);
  free_fission(f);
}
END_TEST

/* Operators outside regions keep their names, streams, parameters and expressions. */
START_TEST(test_rewrite_copies_serial_operators) {
  Fission *f = fission_of(HEAD SRC
    OPX("num", "Functor", " colocate=\"x\"", "S", "A", "<param name=\"where\">n % 2 == 0</param><set attr=\"v\">n</set>"
        "<state name=\"n\" type=\"int\" init=\"1\">n + v</state>")
    WORK("w", "A", "B") SINK("out", "B") TAIL, 2);
  Graph *p = rewrite_and_place(f, NULL);
  char *xml = unit_write_string(graph_emit_xml, p);
  const char *num =
    "  <operator name=\"num\" kind=\"Functor\" host=\"local\" colocate=\"x\">\n"
    "    <input stream=\"S\"/>\n"
    "    <output stream=\"A\" schema=\"T\"/>\n"
    "    <param name=\"where\">n % 2 == 0</param>\n"
    "    <set attr=\"v\">n</set>\n"
    "    <state name=\"n\" type=\"int\" init=\"1\">n + v</state>\n"
    "  </operator>\n";
  ck_assert_msg(strstr(xml, num) != NULL, "missing:\n%s\nin:\n%s", num, xml);
  ck_assert_str_eq(graph_find_op(p, "num")->why_serial, "its state is unknown: it has <state> but no 'partitionBy' (rule 2)");
  ck_assert_ptr_null(graph_find_op(p, "w[0]")->why_serial);
  free(xml);
  graph_free(p);
  free_fission(f);
}
END_TEST

/* The whole document of a small shuffled graph, byte for byte. */
START_TEST(test_rewrite_exact_xml) {
  Fission *f = fission_of(HEAD SRC DEDUP("a", "S", "A", "j") DEDUP("b", "A", "B", "k") SINK("out", "B") TAIL, 2);
  Graph *p = rewrite_and_place(f, "h0=127.0.0.1:7001,h1=127.0.0.1:7002");
  char *xml = unit_write_string(graph_emit_xml, p);
  ck_assert_str_eq(xml,
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<graph xmlns=\"urn:streamfission:graph:1\" name=\"t\">\n"
    "  <schema name=\"T\">\n"
    "    <attr name=\"k\" type=\"int\"/>\n"
    "    <attr name=\"j\" type=\"int\"/>\n"
    "    <attr name=\"v\" type=\"int\"/>\n"
    "  </schema>\n"
    "  <schema name=\"U\">\n"
    "    <attr name=\"u\" type=\"int\"/>\n"
    "    <attr name=\"v\" type=\"int\"/>\n"
    "  </schema>\n"
    "  <host name=\"h0\" address=\"127.0.0.1:7001\"/>\n"
    "  <host name=\"h1\" address=\"127.0.0.1:7002\"/>\n"
    "  <operator name=\"src\" kind=\"Beacon\" host=\"h0\">\n"
    "    <output stream=\"S\" schema=\"T\"/>\n"
    "    <param name=\"count\">10</param>\n"
    "    <set attr=\"k\">seq % 3</set>\n"
    "    <set attr=\"j\">seq % 2</set>\n"
    "    <set attr=\"v\">seq</set>\n"
    "  </operator>\n"
    "  <operator name=\"r1.split\" kind=\"Split\" host=\"h0\" origin=\"a\" region=\"r1\">\n"
    "    <input stream=\"S\"/>\n"
    "    <output stream=\"S.r1[0]\" schema=\"T\"/>\n"
    "    <output stream=\"S.r1[1]\" schema=\"T\"/>\n"
    "    <param name=\"strategy\">hash</param>\n"
    "    <param name=\"keys\">j</param>\n"
    "    <param name=\"sequence\">assign</param>\n"
    "    <param name=\"pulse\">128</param>\n"
    "  </operator>\n"
    "  <operator name=\"a[0]\" kind=\"Dedup\" host=\"h0\" origin=\"a\" region=\"r1\" channel=\"0\">\n"
    "    <input stream=\"S.r1[0]\"/>\n"
    "    <output stream=\"A[0]\" schema=\"T\"/>\n"
    "    <param name=\"partitionBy\">j</param>\n"
    "  </operator>\n"
    "  <operator name=\"a[1]\" kind=\"Dedup\" host=\"h1\" origin=\"a\" region=\"r1\" channel=\"1\">\n"
    "    <input stream=\"S.r1[1]\"/>\n"
    "    <output stream=\"A[1]\" schema=\"T\"/>\n"
    "    <param name=\"partitionBy\">j</param>\n"
    "  </operator>\n"
    "  <operator name=\"r1.split[0]\" kind=\"Split\" host=\"h0\" origin=\"a\" region=\"r1\" channel=\"0\">\n"
    "    <input stream=\"A[0]\"/>\n"
    "    <output stream=\"A[0][0]\" schema=\"T\"/>\n"
    "    <output stream=\"A[0][1]\" schema=\"T\"/>\n"
    "    <param name=\"strategy\">hash</param>\n"
    "    <param name=\"keys\">k</param>\n"
    "    <param name=\"sequence\">keep</param>\n"
    "    <param name=\"pulse\">128</param>\n"
    "  </operator>\n"
    "  <operator name=\"r1.split[1]\" kind=\"Split\" host=\"h1\" origin=\"a\" region=\"r1\" channel=\"1\">\n"
    "    <input stream=\"A[1]\"/>\n"
    "    <output stream=\"A[1][0]\" schema=\"T\"/>\n"
    "    <output stream=\"A[1][1]\" schema=\"T\"/>\n"
    "    <param name=\"strategy\">hash</param>\n"
    "    <param name=\"keys\">k</param>\n"
    "    <param name=\"sequence\">keep</param>\n"
    "    <param name=\"pulse\">128</param>\n"
    "  </operator>\n"
    "  <operator name=\"r2.merge[0]\" kind=\"Merge\" host=\"h0\" origin=\"b\" region=\"r2\" channel=\"0\">\n"
    "    <input stream=\"A[0][0]\"/>\n"
    "    <input stream=\"A[1][0]\"/>\n"
    "    <output stream=\"A.r2[0]\" schema=\"T\"/>\n"
    "    <param name=\"order\">seqpulse</param>\n"
    "  </operator>\n"
    "  <operator name=\"r2.merge[1]\" kind=\"Merge\" host=\"h1\" origin=\"b\" region=\"r2\" channel=\"1\">\n"
    "    <input stream=\"A[0][1]\"/>\n"
    "    <input stream=\"A[1][1]\"/>\n"
    "    <output stream=\"A.r2[1]\" schema=\"T\"/>\n"
    "    <param name=\"order\">seqpulse</param>\n"
    "  </operator>\n"
    "  <operator name=\"b[0]\" kind=\"Dedup\" host=\"h0\" origin=\"b\" region=\"r2\" channel=\"0\">\n"
    "    <input stream=\"A.r2[0]\"/>\n"
    "    <output stream=\"B[0]\" schema=\"T\"/>\n"
    "    <param name=\"partitionBy\">k</param>\n"
    "  </operator>\n"
    "  <operator name=\"b[1]\" kind=\"Dedup\" host=\"h1\" origin=\"b\" region=\"r2\" channel=\"1\">\n"
    "    <input stream=\"A.r2[1]\"/>\n"
    "    <output stream=\"B[1]\" schema=\"T\"/>\n"
    "    <param name=\"partitionBy\">k</param>\n"
    "  </operator>\n"
    "  <operator name=\"r2.merge\" kind=\"Merge\" host=\"h0\" origin=\"b\" region=\"r2\">\n"
    "    <input stream=\"B[0]\"/>\n"
    "    <input stream=\"B[1]\"/>\n"
    "    <output stream=\"B\" schema=\"T\"/>\n"
    "    <param name=\"order\">seqpulse</param>\n"
    "  </operator>\n"
    "  <operator name=\"out\" kind=\"FileSink\" host=\"h0\">\n"
    "    <input stream=\"B\"/>\n"
    "    <param name=\"file\">out.csv</param>\n"
    "  </operator>\n"
    "</graph>\n");
  free(xml);
  graph_free(p);
  free_fission(f);
}
END_TEST

/* ---- placement ---- */

START_TEST(test_place_channels_round_robin) {
  /* width 3 on two hosts: channel 2 wraps to h0; the Split runs with src (pinned on h1), the
   * Merge with out (pinned on h1); other serial operators on the first host */
  Fission *f = fission_of(HEAD
    "<operator name=\"src\" kind=\"Beacon\" host=\"h1\"><output stream=\"S\" schema=\"T\"/>"
    "<param name=\"count\">10</param><set attr=\"k\">seq % 3</set><set attr=\"j\">seq % 2</set>"
    "<set attr=\"v\">seq</set></operator>\n"
    WORK("a", "S", "A") WORKX("n", " parallel=\"no\"", "A", "B") WORK("b", "B", "C")
    "<operator name=\"out\" kind=\"FileSink\" host=\"h1\"><input stream=\"C\"/><param name=\"file\">x.csv</param>"
    "</operator>\n" TAIL, 3);
  Graph *p = rewrite_and_place(f, "h0=127.0.0.1:7001,h1=127.0.0.1:7002");
  assert_graph(p,
    "src Beacon host=h1 out=S\n"
    "r1.split Split region=r1 origin=a host=h1 in=S out=S.r1[0];S.r1[1];S.r1[2] strategy=roundrobin "
    "sequence=assign pulse=0\n"
    "a[0] Work region=r1 channel=0 origin=a host=h0 in=S.r1[0] out=A[0]\n"
    "a[1] Work region=r1 channel=1 origin=a host=h1 in=S.r1[1] out=A[1]\n"
    "a[2] Work region=r1 channel=2 origin=a host=h0 in=S.r1[2] out=A[2]\n"
    "r1.merge Merge region=r1 origin=a host=h0 in=A[0];A[1];A[2] out=A order=roundrobin\n"
    "n Work host=h0 in=A out=B\n"
    "r2.split Split region=r2 origin=b host=h0 in=B out=B.r2[0];B.r2[1];B.r2[2] strategy=roundrobin "
    "sequence=assign pulse=0\n"
    "b[0] Work region=r2 channel=0 origin=b host=h0 in=B.r2[0] out=C[0]\n"
    "b[1] Work region=r2 channel=1 origin=b host=h1 in=B.r2[1] out=C[1]\n"
    "b[2] Work region=r2 channel=2 origin=b host=h0 in=B.r2[2] out=C[2]\n"
    "r2.merge Merge region=r2 origin=b host=h1 in=C[0];C[1];C[2] out=C order=roundrobin\n"
    "out FileSink host=h1 in=C\n");
  graph_free(p);
  free_fission(f);
}
END_TEST

/* A Merge whose stream goes straight into another region's Split: the Split follows the Merge, and
 * the Merge (whose downstream is that Split) stays on the first host. */
START_TEST(test_place_merge_into_split) {
  Fission *f = fission_of(HEAD
    "<operator name=\"src\" kind=\"Beacon\" host=\"h2\"><output stream=\"S\" schema=\"T\"/>"
    "<param name=\"count\">10</param><set attr=\"k\">seq % 3</set><set attr=\"j\">seq % 2</set>"
    "<set attr=\"v\">seq</set></operator>\n"
    WORK("a", "S", "A") WORK("b", "A", "B") SINK("o1", "B") WORK("c", "A", "C") SINK("o2", "C") TAIL, 2);
  Graph *p = rewrite_and_place(f, "h0=127.0.0.1:7001,h1=127.0.0.1:7002,h2=127.0.0.1:7003");
  ck_assert_str_eq(graph_find_op(p, "r1.split")->host, "h2");
  ck_assert_str_eq(graph_find_op(p, "r1.merge")->host, "h0");
  ck_assert_str_eq(graph_find_op(p, "r2.split")->host, "h0");
  ck_assert_str_eq(graph_find_op(p, "r3.split")->host, "h0");
  ck_assert_str_eq(graph_find_op(p, "b[1]")->host, "h1");
  graph_free(p);
  free_fission(f);
}
END_TEST

START_TEST(test_place_default_host) {
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") SINK("out", "A") TAIL, 2);
  Graph *p = rewrite_and_place(f, NULL);
  ck_assert_int_eq(p->nhosts, 1);
  ck_assert_str_eq(p->hosts[0]->name, "local");
  ck_assert_str_eq(p->hosts[0]->address, "127.0.0.1:7470");
  for (int i = 0; i < p->nops; i++) ck_assert_str_eq(p->ops[i]->host, "local");
  graph_free(p);
  free_fission(f);
}
END_TEST

START_TEST(test_place_unknown_host) {
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A")
    "<operator name=\"out\" kind=\"FileSink\" host=\"h9\"><input stream=\"A\"/><param name=\"file\">x.csv</param>"
    "</operator>\n" TAIL, 2);
  Graph *p = fission_rewrite(f);
  char *msgs = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&msgs, &len);
  Diag d;
  diag_init(&d, "t.xml", m);
  ck_assert_int_eq(graph_place(p, &d), 1);
  diag_flush(&d, DIAG_BY_PLACE);
  fclose(m);
  ck_assert_str_eq(msgs, "t.xml:6: error: operator 'out' is placed on unknown host 'h9'\n");
  free(msgs);
  graph_free(p);
  free_fission(f);
}
END_TEST

/* Rewrites f and places it on hosts `spec`, returning what graph_place reported (malloc'd). */
static char *place_messages(const Fission *f, const char *spec, Graph **placed) {
  Graph *p = fission_rewrite(f);
  Host **hosts;
  int n;
  char err[256];
  ck_assert_msg(hosts_parse(p, spec, &hosts, &n, err, sizeof err) == 0, "hosts: %s", err);
  p->hosts = hosts;
  p->nhosts = n;
  char *msgs = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&msgs, &len);
  Diag d;
  diag_init(&d, "t.xml", m);
  ck_assert_int_eq(graph_place(p, &d), 0);
  diag_flush(&d, DIAG_BY_PLACE);
  fclose(m);
  *placed = p;
  return msgs;
}

#define HOSTS3 "h0=127.0.0.1:7001,h1=127.0.0.1:7002,h2=127.0.0.1:7003"

/* Operators sharing a colocate tag land on one host: the first pin among them applies to all, and
 * without a pin they stay together on the first host. */
START_TEST(test_place_colocate_group) {
  Fission *f = fission_of(HEAD SRC WORKX("a", " colocate=\"crm\"", "S", "A")
                          WORKX("b", " colocate=\"crm\" host=\"h2\"", "A", "B") WORKX("c", " colocate=\"crm\"", "B", "C")
                          WORKX("d", " colocate=\"db\"", "C", "D") WORKX("e", " colocate=\"db\"", "D", "E")
                          SINK("out", "E") TAIL, 3);
  Graph *p;
  char *msgs = place_messages(f, HOSTS3, &p);
  ck_assert_str_eq(msgs, "");
  assert_graph(p, "src Beacon host=h0 out=S\n"
                  "a Work host=h2 in=S out=A\n"
                  "b Work host=h2 in=A out=B\n"
                  "c Work host=h2 in=B out=C\n"
                  "d Work host=h0 in=C out=D\n"
                  "e Work host=h0 in=D out=E\n"
                  "out FileSink host=h0 in=E\n");
  free(msgs);
  graph_free(p);
  free_fission(f);
}
END_TEST

/* Two different pins in one group are refused by check; placement given them anyway keeps each pin
 * and gives the unpinned member the first one, without crashing. A tag on one operator alone
 * constrains nothing: it is replicated and its channels spread over the hosts. */
START_TEST(test_place_colocate_unchecked_and_single) {
  Graph *g = unit_graph_text(HEAD SRC WORKX("a", " colocate=\"crm\" host=\"h1\"", "S", "A")
                        WORKX("b", " colocate=\"crm\"", "A", "B") WORKX("c", " colocate=\"crm\"", "B", "C")
                        WORKX("w", " colocate=\"solo\"", "C", "D") SINK("out", "D") TAIL);
  graph_find_op(g, "b")->host = "h2"; /* what check would refuse */
  graph_analyze(g);
  Fission *f = fission_regions(g, 3);
  Graph *p;
  char *msgs = place_messages(f, HOSTS3, &p);
  ck_assert_str_eq(msgs, "");
  ck_assert_str_eq(graph_find_op(p, "a")->host, "h1");
  ck_assert_str_eq(graph_find_op(p, "b")->host, "h2");
  ck_assert_str_eq(graph_find_op(p, "c")->host, "h1");
  ck_assert_str_eq(graph_find_op(p, "w[0]")->host, "h0");
  ck_assert_str_eq(graph_find_op(p, "w[1]")->host, "h1");
  ck_assert_str_eq(graph_find_op(p, "w[2]")->host, "h2");
  free(msgs);
  graph_free(p);
  free_fission(f);
}
END_TEST

/* A pin on an operator that ends up replicated cannot hold for every channel: a warning (once per
 * operator) and a word in --explain, never dropped silently. A pin on a serial operator holds. */
START_TEST(test_place_pin_on_replica_warns) {
  Fission *f = fission_of(HEAD SRC WORKX("a", " host=\"h1\"", "S", "A") WORKX("b", " host=\"h1\"", "A", "B")
                          WORKX("n", " parallel=\"no\" host=\"h2\"", "B", "C") SINK("out", "C") TAIL, 3);
  char *text = decisions_text(f);
  ck_assert_str_eq(text,
    "t.xml:4: src: not parallelized: it is a source (Beacon)\n"
    "t.xml:5: a: parallel in region r1 (width 3, split roundrobin, merge roundrobin); starts region r1: its producer "
    "'src' is not parallelized; its pin to host 'h1' is not applied: the region's channels go round-robin over the "
    "hosts (warning)\n"
    "t.xml:5: a: region r1: estimated speed-up 1.46x at width 3, bounded by the serial operator 'out' downstream (per "
    "tuple: upstream ~85 ns, Split ~60 ns, operators ~68 ns, channel +55 ns, Merge ~75 ns, downstream ~94 ns; "
    "estimates by kind)\n"
    "t.xml:6: b: parallel in region r1 (width 3, split roundrobin, merge roundrobin); its pin to host 'h1' is not "
    "applied: the region's channels go round-robin over the hosts (warning)\n"
    "t.xml:7: n: not parallelized: it is marked parallel=\"no\"\n"
    "t.xml:8: out: not parallelized: it is a sink (FileSink)\n");
  free(text);
  Graph *p;
  char *msgs = place_messages(f, HOSTS3, &p);
  ck_assert_str_eq(msgs,
    "t.xml:5: warning: operator 'a' is pinned to host 'h1' but runs replicated in region r1, whose channels go "
    "round-robin over the hosts: the pin is not applied\n"
    "t.xml:6: warning: operator 'b' is pinned to host 'h1' but runs replicated in region r1, whose channels go "
    "round-robin over the hosts: the pin is not applied\n");
  ck_assert_str_eq(graph_find_op(p, "a[0]")->host, "h0");
  ck_assert_str_eq(graph_find_op(p, "a[2]")->host, "h2");
  ck_assert_str_eq(graph_find_op(p, "n")->host, "h2");
  /* the rewritten document carries the hosts placement chose; read back, it warns no more */
  char *xml = unit_write_string(graph_emit_xml, p);
  ck_assert_ptr_nonnull(strstr(xml, "<operator name=\"a[0]\" kind=\"Work\" host=\"h0\""));
  Fission *again = fission_of(xml, 3);
  Graph *p2;
  char *msgs2 = place_messages(again, HOSTS3, &p2);
  ck_assert_str_eq(msgs2, "");
  free(msgs2);
  graph_free(p2);
  free_fission(again);
  free(xml);
  free(msgs);
  graph_free(p);
  free_fission(f);
}
END_TEST

/* --hosts SPEC: accepted forms and exact messages for the refused ones. */
static const char *hosts_error(const char *spec) {
  static char err[256];
  Graph *g = graph_new("t.xml");
  Host **hosts;
  int n;
  err[0] = 0;
  int rc = hosts_parse(g, spec, &hosts, &n, err, sizeof err);
  graph_free(g);
  return rc == 0 ? "ok" : err;
}

START_TEST(test_hosts_parse) {
  Graph *g = graph_new("t.xml");
  Host **hosts;
  int n;
  char err[256];
  ck_assert_int_eq(hosts_parse(g, " a=127.0.0.1:1 , b=[::1]:65535,c=node-2.example_x:80,", &hosts, &n, err, sizeof err), 0);
  ck_assert_int_eq(n, 3);
  ck_assert_str_eq(hosts[0]->name, "a");
  ck_assert_str_eq(hosts[0]->address, "127.0.0.1:1");
  ck_assert_str_eq(hosts[1]->address, "[::1]:65535");
  ck_assert_str_eq(hosts[2]->name, "c");
  graph_free(g);
  ck_assert_str_eq(hosts_error("h0"), "host entry 'h0' is not name=address:port");
  ck_assert_str_eq(hosts_error("0h=a:1"), "host name '0h' is not an identifier");
  ck_assert_str_eq(hosts_error("h0=nowhere"), "address 'nowhere' of host 'h0' is not host:port with a port from 1 to 65535");
  ck_assert_str_eq(hosts_error("h0=a:0"), "address 'a:0' of host 'h0' is not host:port with a port from 1 to 65535");
  ck_assert_str_eq(hosts_error("h0=a:65536"), "address 'a:65536' of host 'h0' is not host:port with a port from 1 to 65535");
  ck_assert_str_eq(hosts_error("h0=a:1,h0=b:2"), "host 'h0' is given twice");
  ck_assert_str_eq(hosts_error("h0=a:1,h1=a:1"), "hosts 'h0' and 'h1' have the same address 'a:1'");
  ck_assert_str_eq(hosts_error(" , "), "no hosts in ' , '");
  ck_assert_str_eq(hosts_error("@/nonexistent/hosts"), "cannot open hosts file '/nonexistent/hosts': No such file or directory");
}
END_TEST

START_TEST(test_hosts_file) {
  char path[] = "/tmp/sf-test-hosts-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  const char *text = "# the cluster\nh0=10.0.0.1:7000   # first\n\n  h1=10.0.0.2:7000\n";
  ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  Graph *g = graph_new("t.xml");
  Host **hosts;
  int n;
  char err[256], spec[64];
  snprintf(spec, sizeof spec, "@%s", path);
  ck_assert_int_eq(hosts_parse(g, spec, &hosts, &n, err, sizeof err), 0);
  ck_assert_int_eq(n, 2);
  ck_assert_str_eq(hosts[0]->name, "h0");
  ck_assert_str_eq(hosts[0]->address, "10.0.0.1:7000");
  ck_assert_str_eq(hosts[1]->name, "h1");
  ck_assert_str_eq(hosts[1]->address, "10.0.0.2:7000");
  graph_free(g);
  unlink(path);
}
END_TEST

/* ---- --explain ---- */

START_TEST(test_explain_exact) {
  Fission *f = fission_of(HEAD SRC
    SETK("f", "S", "A")
    DEDUP("d", "A", "B", "k")
    "<operator name=\"x\" kind=\"Custom\"><input stream=\"B\"/><output stream=\"C\" schema=\"T\"/><library path=\"x.so\" symbol=\"s\"/></operator>\n"
    SINK("out", "C") TAIL, 2);
  char *text = decisions_text(f);
  ck_assert_str_eq(text,
    "t.xml:4: src: not parallelized: it is a source (Beacon)\n"
    "t.xml:5: f: parallel in region r1 (width 2, split roundrobin, shuffle into r2); starts region r1: its producer "
    "'src' is not parallelized\n"
    "t.xml:5: f: region r1: estimated speed-up 0.90x at width 2, bounded by the source 'src' upstream (per tuple: "
    "upstream ~85 ns, Split ~60 ns, operators ~45 ns, channel +55 ns, Merge ~75 ns, downstream ~0 ns; estimates by "
    "kind)\n"
    "t.xml:6: d: parallel in region r2 (width 2, shuffle from r1 by hash on 'k', merge seqpulse); starts keyed region "
    "r2, shuffled from r1: 'f' does not forward key 'k'\n"
    "t.xml:6: d: region r2: estimated speed-up 0.92x at width 2, bounded by the serial operator 'out' downstream (per "
    "tuple: upstream ~0 ns, Split ~60 ns, operators ~60 ns, channel +55 ns, Merge ~75 ns, downstream ~110 ns; "
    "estimates by kind)\n"
    "t.xml:7: x: not parallelized: its state is unknown (Custom operator without a <model>; rule 2)\n"
    "t.xml:8: out: not parallelized: it is a sink (FileSink)\n");
  free(text);
  free_fission(f);
}
END_TEST

/* Topological order, fan-out, a width limit, a moved operator, a shrinking key and a shuffle. */
START_TEST(test_explain_exact_wider) {
  Fission *f = fission_of(HEAD
    SINK("late", "X")
    SRC
    SETK("f", "S", "A")
    WORKX("w", " width=\"3\"", "A", "B")
    DEDUP("d", "B", "C", "j k")
    DEDUP("e", "C", "D", "k")
    DEDUP("x", "D", "X", "v")
    WORKX("n", " parallel=\"no\"", "S", "E")
    SINK("o2", "E") TAIL, 4);
  char *text = decisions_text(f);
  ck_assert_str_eq(text,
    "t.xml:5: src: not parallelized: it is a source (Beacon)\n"
    "t.xml:6: f: parallel in region r1 (width 4, split roundrobin, shuffle into r2); starts region r1: its input "
    "stream 'S' has several consumers (fan-out)\n"
    "t.xml:6: f: region r1: estimated speed-up 0.90x at width 4, bounded by the source 'src' upstream (per "
    "tuple: upstream ~85 ns, Split ~60 ns, operators ~45 ns, channel +55 ns, Merge ~75 ns, downstream ~0 ns; "
    "estimates by kind)\n"
    "t.xml:7: w: parallel in region r2 (width 3, set by 'w', shuffle from r1 by hash on 'k', shuffle into r3); "
    "moved from region r1 into keyed region r2 because it forwards 'j' and 'k'\n"
    "t.xml:7: w: region r2: estimated speed-up 2.05x at width 3, bounded by the Merge (per tuple: upstream ~0 "
    "ns, Split ~60 ns, operators ~154 ns, channel +55 ns, Merge ~75 ns, downstream ~0 ns; estimates by kind)\n"
    "t.xml:8: d: parallel in region r2 (width 3, set by 'w', shuffle from r1 by hash on 'k', shuffle into r3)\n"
    "t.xml:9: e: parallel in region r2 (width 3, set by 'w', shuffle from r1 by hash on 'k', shuffle into r3); "
    "shrinks region r2's key from 'j' and 'k' to 'k', the part its key 'k' shares\n"
    "t.xml:10: x: parallel in region r3 (width 4, shuffle from r2 by hash on 'v', merge seqpulse); starts region r3, "
    "shuffled from r2: its key 'v' shares no attribute with region r2's key 'k'\n"
    "t.xml:10: x: region r3: estimated speed-up 0.89x at width 4, bounded by the Merge (per tuple: upstream ~0 "
    "ns, Split ~60 ns, operators ~60 ns, channel +55 ns, Merge ~75 ns, downstream ~60 ns; estimates by kind)\n"
    "t.xml:4: late: not parallelized: it is a sink (FileSink)\n"
    "t.xml:11: n: not parallelized: it is marked parallel=\"no\"\n"
    "t.xml:12: o2: not parallelized: it is a sink (FileSink)\n");
  free(text);
  free_fission(f);
}
END_TEST

/* The model line of each kind: what analyze inferred, or what a Custom operator declared (or was
 * assumed to do without a <model>). */
/* The time lines of --explain: a source's tick given or chosen, and how each kind of time window
 * closes, with and without lateness. */
START_TEST(test_explain_time) {
  Fission *f = fission_of(HEAD
    "<operator name=\"src\" kind=\"Beacon\"><output stream=\"S\" schema=\"T\"/><param name=\"count\">10</param>"
    "<param name=\"time\">v</param><param name=\"tick\">100</param><set attr=\"k\">seq % 3</set>"
    "<set attr=\"j\">seq % 2</set><set attr=\"v\">seq</set></operator>\n"
    OP("hop", "Aggregate", "S", "A", "<param name=\"partitionBy\">k</param><param name=\"window\">hopping time "
       "600 200</param><param name=\"lateness\">50</param><set attr=\"j\">count()</set><set attr=\"v\">window_end()</set>")
    OP("ses", "Aggregate", "S", "B", "<param name=\"partitionBy\">k</param><param name=\"window\">session time "
       "30</param><set attr=\"j\">count()</set><set attr=\"v\">window_end()</set>")
    OP("ses2", "Aggregate", "S", "C", "<param name=\"partitionBy\">k</param><param name=\"window\">session time "
       "30</param><param name=\"lateness\">5</param><set attr=\"j\">count()</set><set attr=\"v\">window_end()</set>")
    SINK("a", "A") SINK("b", "B") SINK("c", "C") TAIL, 2);
  char *text = explain_text(f);
  const char *want[] = {
    "t.xml:4: src: event time 'v', tick 100 (given)\n",
    "t.xml:5: hop: model: state partitioned on 'k', selectivity atmostone, forwards 'k', punct none, final none, "
    "emits at ticks\n"
    "t.xml:5: hop: hopping time 600 200, lateness 50: a window [k*200, k*200 + 600) closes at the first tick >= "
    "end + 50; each tuple is in 3 windows\n",
    "t.xml:6: ses: session time 30, lateness 0: a session of a key (tuples less than 30 apart) closes at the first "
    "tick >= its last time + 30\n",
    "t.xml:7: ses2: session time 30, lateness 5: a session of a key (tuples less than 30 apart) closes at the "
    "first tick >= its last time + 30 + 5\n",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    ck_assert_msg(strstr(text, want[i]) != NULL, "no\n%s\nin\n%s", want[i], text);
  free(text);
  graph_free(f->g);
}
END_TEST

START_TEST(test_explain_models) {
  Fission *f = fission_of(HEAD SRC
    SETK("f", "S", "A")
    OP("wh", "Functor", "A", "B", "<param name=\"where\">v &gt; 1</param>")
    FILTER("fi", "B", "C")
    OP("fm", "FlatMap", "C", "D", "<param name=\"count\">2</param><set attr=\"v\">v + i</set>")
    SLIDEJ("sl", "D", "E")
    DEDUP("dd", "E", "F", "k j")
    WORK("w", "F", "G")
    COUNTK("ck", "G", "H")
    OP("num", "Functor", "H", "I", "<set attr=\"v\">n</set><state name=\"n\" type=\"int\" init=\"0\">n + 1</state>")
    "<operator name=\"sess\" kind=\"Custom\"><input stream=\"I\"/><output stream=\"J\" schema=\"T\"/>"
    "<model state=\"partitioned\" keys=\"k\" selectivity=\"atmostone\" forwards=\"k v\" punct=\"consumes\" "
    "final=\"emits\"/><library path=\"x.so\" symbol=\"s\"/></operator>\n"
    "<operator name=\"raw\" kind=\"Custom\"><input stream=\"J\"/><output stream=\"K\" schema=\"U\"/>"
    "<library path=\"x.so\" symbol=\"s\"/></operator>\n"
    SINK("out", "K") TAIL, 2);
  char *text = explain_text(f);
  ck_assert_str_eq(text,
    "t.xml:4: src: not parallelized: it is a source (Beacon)\n"
    "t.xml:4: src: model: source\n"
    "t.xml:5: f: parallel in region r1 (width 2, split hash on 'j', shuffle into r2); starts region r1: its "
    "producer 'src' is not parallelized\n"
    "t.xml:5: f: model: state none, selectivity one, forwards 'j' and 'v', punct none, final none\n"
    "t.xml:5: f: region r1: estimated speed-up 2.15x at width 2, bounded by its channels (per tuple: "
    "upstream ~85 ns, Split ~60 ns, operators ~344 ns, channel +55 ns, Merge ~75 ns, downstream ~0 ns; "
    "estimates by kind)\n"
    "t.xml:6: wh: parallel in region r1 (width 2, split hash on 'j', shuffle into r2)\n"
    "t.xml:6: wh: model: state none, selectivity atmostone, forwards every attribute, punct none, final "
    "none\n"
    "t.xml:7: fi: parallel in region r1 (width 2, split hash on 'j', shuffle into r2)\n"
    "t.xml:7: fi: model: state none, selectivity atmostone, forwards every attribute, punct none, final "
    "none\n"
    "t.xml:8: fm: parallel in region r1 (width 2, split hash on 'j', shuffle into r2)\n"
    "t.xml:8: fm: model: state none, selectivity many, forwards 'k' and 'j', punct none, final none\n"
    "t.xml:9: sl: parallel in region r1 (width 2, split hash on 'j', shuffle into r2)\n"
    "t.xml:9: sl: model: state partitioned on 'j', selectivity one, forwards 'j', punct none, final none\n"
    "t.xml:10: dd: parallel in region r1 (width 2, split hash on 'j', shuffle into r2)\n"
    "t.xml:10: dd: model: state partitioned on 'k' and 'j', selectivity atmostone, forwards every attribute, "
    "punct none, final none\n"
    "t.xml:11: w: parallel in region r1 (width 2, split hash on 'j', shuffle into r2)\n"
    "t.xml:11: w: model: state none, selectivity one, forwards every attribute, punct none, final none\n"
    "t.xml:12: ck: parallel in region r2 (width 2, shuffle from r1 by hash on 'k', merge seqpulse); starts "
    "region r2, shuffled from r1: its key 'k' shares no attribute with region r1's key 'j'\n"
    "t.xml:12: ck: model: state partitioned on 'k', selectivity one, forwards 'k' and 'j', punct none, final "
    "none\n"
    "t.xml:12: ck: region r2: estimated speed-up 0.83x at width 2, bounded by the Split of r3 downstream "
    "(per tuple: upstream ~0 ns, Split ~60 ns, operators ~45 ns, channel +55 ns, Merge ~75 ns, downstream "
    "~105 ns; estimates by kind)\n"
    "t.xml:13: num: not parallelized: its state is unknown: it has <state> but no 'partitionBy' (rule 2)\n"
    "t.xml:13: num: model: state unknown, selectivity one, forwards 'k' and 'j', punct none, final none\n"
    "t.xml:14: sess: parallel in region r3 (width 2, split hash on 'k', merge seqpulse); starts region r3: "
    "its producer 'num' is not parallelized\n"
    "t.xml:14: sess: model (declared): state partitioned on 'k', selectivity atmostone, forwards 'k' and "
    "'v', punct consumes, final emits\n"
    "t.xml:14: sess: region r3: estimated speed-up 1.51x at width 2, bounded by the serial operator 'out' "
    "downstream (per tuple: upstream ~120 ns, Split ~60 ns, operators ~50 ns, channel +55 ns, Merge ~75 ns, "
    "downstream ~110 ns; estimates by kind)\n"
    "t.xml:15: raw: not parallelized: its state is unknown (Custom operator without a <model>; rule 2)\n"
    "t.xml:15: raw: model (assumed: no <model>): state unknown, selectivity many, forwards nothing, punct "
    "none, final none\n"
    "t.xml:16: out: not parallelized: it is a sink (FileSink)\n"
    "t.xml:16: out: model: sink\n");
  free(text);
  free_fission(f);
}
END_TEST

START_TEST(test_explain_width_one) {
  Fission *f = fission_of(HEAD SRC WORK("a", "S", "A") SINK("out", "A") TAIL, 1);
  char *text = decisions_text(f);
  ck_assert_str_eq(text,
    "t.xml:4: src: not parallelized: it is a source (Beacon)\n"
    "t.xml:5: a: not parallelized: the width is 1\n"
    "t.xml:6: out: not parallelized: it is a sink (FileSink)\n");
  free(text);
  free_fission(f);
}
END_TEST

/* ---- the example graphs: the decisions their comments promise ---- */

static Fission *example(const char *name, int width) {
  char path[512];
  snprintf(path, sizeof path, SF_SOURCE_DIR "/graphs/%s.xml", name);
  Graph *g = unit_graph_file(path);
  graph_analyze(g);
  return fission_regions(g, width);
}

START_TEST(test_examples) {
  Fission *f = example("vwap", 3);
  assert_regions(f, "r1: notional big bars key=sym width=3 hash/seqpulse from=- to=-\n");
  free_fission(f);
  f = example("twokeys", 4);
  assert_regions(f, "r1: symbars sectors key=sector width=3 hash/seqpulse from=- to=-\n");
  free_fission(f);
  f = example("sensors", 2);
  assert_regions(f, "r1: valid key=- width=2 roundrobin/seqpulse from=- to=-\n"
                    "r2: stats key=sensor width=2 hash/seq from=- to=-\n"
                    "r3: peaks key=sensor width=2 hash/seqpulse from=- to=-\n");
  ck_assert_str_eq(why(f, "spikes"), "it is marked parallel=\"no\"");
  free_fission(f);
  f = example("clicks", 2);
  assert_regions(f, "r1: humans sessions duration key=user width=2 hash/seqpulse from=- to=-\n"
                    "r2: pages key=page width=2 hash/seqpulse from=- to=-\n");
  free_fission(f);
  f = example("enrich", 2);
  assert_regions(f, "r1: unique key=order width=2 hash/seqpulse from=- to=-\n");
  ck_assert_str_eq(why(f, "enrich"), "it shares colocate tag 'crm' with 'spend' (rule 4)");
  ck_assert_str_eq(why(f, "number"), "its state is unknown: it has <state> but no 'partitionBy' (rule 2)");
  free_fission(f);
  f = example("wordfreq", 2);
  assert_regions(f, "r1: words content key=- width=2 roundrobin/seqpulse from=- to=-\n"
                    "r2: windows key=word width=2 hash/seqpulse from=- to=-\n"
                    "r3: milestones key=word width=2 hash/seqpulse from=- to=-\n");
  ck_assert_ptr_null(why(f, "words")); /* a FlatMap: rule 3 allows selectivity many */
  free_fission(f);
  f = example("logs", 2);
  assert_regions(f, "r1: errors errorAlert key=- width=2 roundrobin/seqpulse from=- to=-\n"
                    "r2: slow slowAlert key=- width=2 roundrobin/seqpulse from=- to=-\n"
                    "r3: perServer key=server width=2 hash/seqpulse from=- to=-\n"
                    "r4: firstHits key=path width=2 hash/seqpulse from=- to=-\n");
  free_fission(f);
  f = example("work", 2);
  assert_regions(f, "r1: burn label key=- width=2 roundrobin/roundrobin from=- to=-\n");
  free_fission(f);
}
END_TEST

static Suite *fission_suite(void) {
  Suite *s = suite_create("fission");
  TCase *safety = unit_case(s, "safety", NULL, NULL, 0);
  tcase_add_test(safety, test_rule1_fan_in);
  tcase_add_test(safety, test_time_windows_and_running);
  tcase_add_test(safety, test_rule2_state);
  tcase_add_test(safety, test_custom_without_model);
  tcase_add_test(safety, test_custom_with_model);
  tcase_add_test(safety, test_rule3_selectivity);
  tcase_add_test(safety, test_rule4_colocate);
  tcase_add_test(safety, test_rule5_punctuation);
  tcase_add_test(safety, test_rule5_consumer_on_other_branch);
  tcase_add_test(safety, test_rule5_emits_on_punctuation);
  tcase_add_test(safety, test_rule5_final_values);
  tcase_add_test(safety, test_rule6_user_and_roles);
  tcase_add_test(safety, test_rule6_custom_source_and_sink);
  tcase_add_test(safety, test_rule6_already_parallel);
  tcase_add_test(safety, test_rule6_user_split_merge);
  TCase *strategy = unit_case(s, "strategy", NULL, NULL, 0);
  tcase_add_test(strategy, test_strategy_stateless_one);
  tcase_add_test(strategy, test_strategy_partitioned_one);
  tcase_add_test(strategy, test_strategy_atmostone);
  tcase_add_test(strategy, test_strategy_aggregate_windows);
  TCase *keys = unit_case(s, "keys", NULL, NULL, 0);
  tcase_add_test(keys, test_keys_compatible_join);
  tcase_add_test(keys, test_keys_incompatible_shuffle);
  tcase_add_test(keys, test_keys_shuffle_forces_seqpulse);
  tcase_add_test(keys, test_keys_functor_modifies_key);
  tcase_add_test(keys, test_keys_rewrite_one_shuffle);
  tcase_add_test(keys, test_keys_shared_part);
  tcase_add_test(keys, test_keys_shared_part_not_forwarded);
  tcase_add_test(keys, test_keys_set_to_itself_forwards);
  tcase_add_test(keys, test_keys_dropped_by_keyed_operator);
  tcase_add_test(keys, test_keys_forwarding_prefix_joins);
  tcase_add_test(keys, test_keys_prefix_split_off);
  tcase_add_test(keys, test_keys_nonforwarding_prefix_shuffled);
  tcase_add_test(keys, test_keys_schema_without_key);
  TCase *shape = unit_case(s, "shape", NULL, NULL, 0);
  tcase_add_test(shape, test_fan_out_boundaries);
  tcase_add_test(shape, test_fan_in_sink_after_regions);
  tcase_add_test(shape, test_width_attribute_sets_region);
  tcase_add_test(shape, test_width_one_attribute_keeps_operator_serial);
  tcase_add_test(shape, test_width_one_after_shuffle);
  tcase_add_test(shape, test_width_global_one_with_attribute);
  tcase_add_test(shape, test_width_one_keeps_graph);
  TCase *rewrite = unit_case(s, "rewrite", NULL, NULL, 0);
  tcase_add_test(rewrite, test_rewrite_leaves_input_and_checks);
  tcase_add_test(rewrite, test_rewrite_copies_serial_operators);
  tcase_add_test(rewrite, test_rewrite_exact_xml);
  TCase *place = unit_case(s, "place", NULL, NULL, 0);
  tcase_add_test(place, test_place_channels_round_robin);
  tcase_add_test(place, test_place_merge_into_split);
  tcase_add_test(place, test_place_default_host);
  tcase_add_test(place, test_place_unknown_host);
  tcase_add_test(place, test_place_colocate_group);
  tcase_add_test(place, test_place_colocate_unchecked_and_single);
  tcase_add_test(place, test_place_pin_on_replica_warns);
  tcase_add_test(place, test_hosts_parse);
  tcase_add_test(place, test_hosts_file);
  TCase *explain = unit_case(s, "explain", NULL, NULL, 0);
  tcase_add_test(explain, test_explain_exact);
  tcase_add_test(explain, test_explain_exact_wider);
  tcase_add_test(explain, test_explain_width_one);
  tcase_add_test(explain, test_explain_models);
  tcase_add_test(explain, test_explain_time);
  tcase_add_test(explain, test_examples);
  return s;
}

int main(void) {
  return unit_run(fission_suite());
}
