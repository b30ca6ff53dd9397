/* test_check.c: the semantic checks (xform/check.c) and the linking of streams (graph_link in
 * xform/graph.c): producers and consumers, the topological order, and the exact diagnostics for
 * names, references, ports, parameters, cycles, expressions and output schemas. Every error a pass
 * finds is reported, in document order, and the count graph_check returns matches.
 *
 * Documents are strings parsed with graph_parse_memory against the source tree's graph.xsd; line
 * numbers are given in trailing comments where the test depends on them. */
#include "check_helper.h"
#include "rt.h"
#include "sf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NS "urn:streamfission:graph:1"

static UnitDiags mem; /* the diagnostics of the test being run */
static Graph *graph;

static void setup(void) {
  unit_diags_open(&mem, "g.xml", DIAG_BY_PLACE);
  graph = NULL;
}

static void teardown(void) {
  unit_diags_close(&mem);
  graph_free(graph);
}

static const char *diags(void) {
  return unit_diags_text(&mem);
}

/* Parses a document that must be valid against the XSD (the test is about what comes after). */
static Graph *parse(const char *text) {
  graph = graph_parse_memory(text, strlen(text), "g.xml", XSD, &mem.diag);
  ck_assert_msg(graph != NULL, "parse failed: %s", diags());
  return graph;
}

/* Parses and checks a graph that must be accepted. */
static Graph *check_ok(const char *text) {
  Graph *g = parse(text);
  int n = graph_check(g, &mem.diag);
  ck_assert_msg(n == 0, "check failed: %s", diags());
  ck_assert_str_eq(diags(), "");
  return g;
}

/* Parses and checks a graph that must give exactly `expected`, `count` errors. */
static void check_fails(const char *text, int count, const char *expected) {
  Graph *g = parse(text);
  int n = graph_check(g, &mem.diag);
  ck_assert_str_eq(diags(), expected);
  ck_assert_int_eq(n, count);
  ck_assert_int_eq(mem.diag.nerrors, count);
}

/* The usual head of the test graphs: a Trade schema, a Bar schema and a Beacon of trades.
 * Lines 1 to 19; the next line is 20. */
#define HEAD                                                              \
  "<graph xmlns='" NS "' name='g'>\n"                          /* 1 */    \
  "  <schema name='Trade'>\n"                                  /* 2 */    \
  "    <attr name='sym' type='string'/>\n"                     /* 3 */    \
  "    <attr name='price' type='double'/>\n"                   /* 4 */    \
  "    <attr name='vol' type='int'/>\n"                        /* 5 */    \
  "  </schema>\n"                                              /* 6 */    \
  "  <schema name='Bar'>\n"                                    /* 7 */    \
  "    <attr name='sym' type='string'/>\n"                     /* 8 */    \
  "    <attr name='avg' type='double'/>\n"                     /* 9 */    \
  "    <attr name='n' type='int'/>\n"                          /* 10 */   \
  "  </schema>\n"                                              /* 11 */   \
  "  <operator name='trades' kind='Beacon'>\n"                 /* 12 */   \
  "    <output stream='Trades' schema='Trade'/>\n"             /* 13 */   \
  "    <param name='count'>100</param>\n"                      /* 14 */   \
  "    <set attr='sym'>\"S\" + str(seq % 5)</set>\n"           /* 15 */   \
  "    <set attr='price'>double(seq)</set>\n"                  /* 16 */   \
  "    <set attr='vol'>seq % 50</set>\n"                       /* 17 */   \
  "  </operator>\n"                                            /* 18 */   \
  "  <!-- line 19 -->\n"                                       /* 19 */
#define TAIL "</graph>\n"

/* ---- linking and order ---- */

/* A diamond: src feeds left and right, both feed join (one input port, fan-in), join feeds out. */
static const char diamond[] =
    "<graph xmlns='" NS "' name='diamond'>\n"
    "  <schema name='T'><attr name='x' type='int'/></schema>\n"
    "  <operator name='out' kind='FileSink'>\n"
    "    <input stream='J'/>\n"
    "    <param name='file'>out.csv</param>\n"
    "  </operator>\n"
    "  <operator name='join' kind='Functor'>\n"
    "    <input stream='L R'/>\n"
    "    <output stream='J' schema='T'/>\n"
    "  </operator>\n"
    "  <operator name='right' kind='Filter'>\n"
    "    <input stream='S'/>\n"
    "    <output stream='R' schema='T'/>\n"
    "    <param name='where'>x % 2 == 1</param>\n"
    "  </operator>\n"
    "  <operator name='left' kind='Filter'>\n"
    "    <input stream='S'/>\n"
    "    <output stream='L' schema='T'/>\n"
    "    <param name='where'>x % 2 == 0</param>\n"
    "  </operator>\n"
    "  <operator name='src' kind='Beacon'>\n"
    "    <output stream='S' schema='T'/>\n"
    "    <param name='count'>10</param>\n"
    "    <set attr='x'>seq</set>\n"
    "  </operator>\n"
    "</graph>\n";

START_TEST(link_producers_and_consumers) {
  Graph *g = check_ok(diamond);
  Op *out = g->ops[0], *join = g->ops[1], *right = g->ops[2], *left = g->ops[3], *src = g->ops[4];
  ck_assert_int_eq(g->streams.n, 4);
  /* streams in declaration order */
  const char *names[] = {"J", "R", "L", "S"};
  Op *producers[] = {join, right, left, src};
  for (int i = 0; i < 4; i++) {
    Stream *s = g->streams.items[i];
    ck_assert_str_eq(s->name, names[i]);
    ck_assert_ptr_eq(s->producer, producers[i]);
    ck_assert_int_eq(s->port, 0);
    ck_assert_str_eq(s->schema->name, "T");
    ck_assert_ptr_eq(graph_find_stream(g, names[i]), s);
  }
  Stream *S = graph_find_stream(g, "S");
  ck_assert_int_eq(S->line, 22);
  ck_assert_int_eq(S->consumers.n, 2);
  ck_assert_ptr_eq(S->consumers.items[0], right);
  ck_assert_ptr_eq(S->consumers.items[1], left);
  Stream *J = graph_find_stream(g, "J");
  ck_assert_int_eq(J->consumers.n, 1);
  ck_assert_ptr_eq(J->consumers.items[0], out);
  ck_assert_ptr_eq(src->outputs[0].resolved, S);
  /* the fan-in port resolves both streams, in the order written */
  ck_assert_int_eq(join->inputs[0].nstreams, 2);
  ck_assert_ptr_eq(join->inputs[0].streams[0], graph_find_stream(g, "L"));
  ck_assert_ptr_eq(join->inputs[0].streams[1], graph_find_stream(g, "R"));
  ck_assert_ptr_eq(op_input_schema(join), S->schema);
  ck_assert_ptr_eq(op_output_schema(join), S->schema);
  ck_assert_ptr_null(op_input_schema(src));
  ck_assert_ptr_null(op_output_schema(out));
  ck_assert_ptr_null(graph_find_stream(g, "nope"));
}
END_TEST

START_TEST(topological_order_of_a_diamond) {
  Graph *g = check_ok(diamond);
  /* ties are broken by document order: right before left */
  const char *order[] = {"src", "right", "left", "join", "out"};
  ck_assert_ptr_nonnull(g->order);
  for (int i = 0; i < 5; i++) {
    ck_assert_str_eq(g->order[i]->name, order[i]);
    ck_assert_int_eq(g->order[i]->topo, i);
  }
  ck_assert_int_eq(graph_find_op(g, "out")->index, 0);
}
END_TEST

START_TEST(consumer_listed_once_per_port) {
  Graph *g = check_ok("<graph xmlns='" NS "' name='g'>\n"
                      "  <schema name='T'><attr name='x' type='int'/></schema>\n"
                      "  <operator name='src' kind='Beacon'>\n"
                      "    <output stream='S' schema='T'/>\n"
                      "    <param name='count'>1</param>\n"
                      "    <set attr='x'>seq</set>\n"
                      "  </operator>\n"
                      "  <operator name='two' kind='Merge'>\n"
                      "    <input stream='S'/>\n"
                      "    <input stream='S'/>\n"
                      "    <output stream='M' schema='T'/>\n"
                      "    <param name='order'>roundrobin</param>\n"
                      "  </operator>\n"
                      "  <operator name='fan' kind='Split'>\n"
                      "    <input stream='M'/>\n"
                      "    <output stream='A' schema='T'/>\n"
                      "    <output stream='B' schema='T'/>\n"
                      "    <param name='strategy'>roundrobin</param>\n"
                      "  </operator>\n"
                      "</graph>\n");
  Stream *s = graph_find_stream(g, "S");
  ck_assert_int_eq(s->consumers.n, 2);
  ck_assert_ptr_eq(s->consumers.items[0], g->ops[1]);
  ck_assert_ptr_eq(s->consumers.items[1], g->ops[1]);
  ck_assert_ptr_eq(graph_find_stream(g, "B")->producer, g->ops[2]);
  ck_assert_int_eq(graph_find_stream(g, "B")->port, 1);
  ck_assert_int_eq(graph_find_stream(g, "B")->consumers.n, 0);
}
END_TEST

START_TEST(example_graphs_check) {
  const char *names[] = {"clicks", "enrich", "logs", "sensors", "twokeys", "vwap", "wordfreq", "work"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char path[512];
    snprintf(path, sizeof path, SF_SOURCE_DIR "/graphs/%s.xml", names[i]);
    Diag d;
    diag_init(&d, path, mem.file);
    Graph *g = graph_parse_file(path, XSD, &d);
    diag_flush(&d, DIAG_AS_REPORTED);
    ck_assert_msg(g != NULL, "%s: %s", path, diags());
    ck_assert_int_eq(graph_check(g, &d), 0);
    diag_flush(&d, DIAG_BY_PLACE);
    ck_assert_ptr_nonnull(g->order);
    graph_free(g);
  }
  ck_assert_str_eq(diags(), "");
}
END_TEST

/* ---- checked expressions are attached to the graph ---- */

START_TEST(expressions_are_attached) {
  Graph *g = check_ok(HEAD
                      "  <operator name='run' kind='Functor'>\n"
                      "    <input stream='Trades'/>\n"
                      "    <output stream='Bars' schema='Bar'/>\n"
                      "    <param name='where'>total &gt; 1</param>\n"
                      "    <set attr='avg'>price</set>\n"
                      "    <set attr='n'>total</set>\n"
                      "    <state name='total' type='int' init='0'>total + vol</state>\n"
                      "  </operator>\n"
                      "  <operator name='copies' kind='FlatMap'>\n"
                      "    <input stream='Bars'/>\n"
                      "    <output stream='Copies' schema='Bar'/>\n"
                      "    <param name='count'>n % 3</param>\n"
                      "    <set attr='n'>i</set>\n"
                      "  </operator>\n" TAIL);
  Op *run = graph_find_op(g, "run"), *copies = graph_find_op(g, "copies");
  ck_assert_ptr_nonnull(run->where);
  ck_assert_int_eq(run->where->type, TYPE_BOOL);
  ck_assert_str_eq(expr_format(g->arena, run->where), "(total > 1)");
  ck_assert_int_eq(run->sets[0].slot, 1);
  ck_assert_int_eq(run->sets[1].slot, 2);
  int slot = -1;
  ck_assert(expr_is_attr(run->sets[0].expr, &slot));
  ck_assert_int_eq(slot, 1); /* price in Trade */
  ck_assert_int_eq(run->sets[1].expr->scope, NAME_STATE);
  ck_assert_int_eq(run->states[0]->init->type, TYPE_INT);
  ck_assert_str_eq(expr_format(g->arena, run->states[0]->update), "(total + vol)");
  ck_assert_ptr_nonnull(copies->count_expr);
  ck_assert_int_eq(copies->sets[0].expr->scope, NAME_INDEX);
  /* the Beacon's sets use seq */
  ck_assert_int_eq(g->ops[0]->sets[2].expr->a->scope, NAME_SEQ);
}
END_TEST

START_TEST(aggregate_keys_and_aggregates) {
  Graph *g = check_ok(HEAD
                      "  <operator name='bars' kind='Aggregate'>\n"
                      "    <input stream='Trades'/>\n"
                      "    <output stream='Bars' schema='Bar'/>\n"
                      "    <param name='partitionBy'>sym</param>\n"
                      "    <param name='window'>sliding 3</param>\n"
                      "    <set attr='avg'>sum(price) / double(count())</set>\n"
                      "    <set attr='n'>len(sym) + max(vol)</set>\n"
                      "  </operator>\n" TAIL);
  Op *bars = graph_find_op(g, "bars");
  ck_assert_ptr_nonnull(bars->sets[0].expr);
  ck_assert_ptr_nonnull(bars->sets[1].expr);
  ck_assert_str_eq(expr_format(g->arena, bars->sets[1].expr), "(len(sym) + max(vol))");
}
END_TEST

/* ---- lookups by name ---- */

START_TEST(namemap_first_of_equal_names_wins) {
  NameMap m = {0};
  ck_assert_ptr_null(namemap_get(&m, "a"));
  int one, two;
  ck_assert_ptr_eq(namemap_put(&m, "a", &one), &one);
  ck_assert_ptr_eq(namemap_put(&m, "a", &two), &one); /* kept: the first wins */
  ck_assert_ptr_eq(namemap_get(&m, "a"), &one);
  ck_assert_ptr_null(namemap_put(&m, NULL, &two));
  ck_assert_ptr_null(namemap_get(&m, NULL));
  ck_assert_uint_eq(m.n, 1);
  /* many keys: the map grows and finds every one, including keys equal only by content */
  enum { N = 50000 };
  char (*keys)[16] = malloc(sizeof *keys * N);
  for (int i = 0; i < N; i++) {
    snprintf(keys[i], sizeof keys[i], "k%d", i);
    namemap_put(&m, keys[i], keys[i]);
  }
  ck_assert_uint_eq(m.n, N + 1);
  ck_assert_uint_ge(m.cap, 2 * m.n);
  for (int i = 0; i < N; i++) {
    char probe[16];
    snprintf(probe, sizeof probe, "k%d", i);
    ck_assert_ptr_eq(namemap_get(&m, probe), keys[i]);
  }
  ck_assert_ptr_null(namemap_get(&m, "k50000"));
  size_t cap = m.cap;
  namemap_clear(&m);
  ck_assert_uint_eq(m.n, 0);
  ck_assert_uint_eq(m.cap, cap);
  ck_assert_ptr_null(namemap_get(&m, "k7"));
  namemap_release(&m);
  ck_assert_uint_eq(m.cap, 0);
  namemap_reserve(&m, 1000);
  ck_assert_uint_ge(m.cap, 2000);
  ck_assert_ptr_eq(namemap_put(&m, "b", &two), &two);
  namemap_release(&m);
  free(keys);
}
END_TEST

/* graph_find_* index each array the first time and again when the array or its count changes,
 * as when sf-xform gives the parallel graph the hosts of --hosts. */
START_TEST(lookups_follow_array_changes) {
  Graph *g = check_ok(diamond);
  Op *src = graph_find_op(g, "src");
  ck_assert_str_eq(src->name, "src");
  g->nops--; /* src is the last operator */
  ck_assert_ptr_null(graph_find_op(g, "src"));
  g->nops++;
  ck_assert_ptr_eq(graph_find_op(g, "src"), src);
  ck_assert_ptr_null(graph_find_host(g, "h0"));
  Host a = { .name = "h0", .address = "127.0.0.1:1" }, b = { .name = "h1", .address = "127.0.0.1:2" };
  Host *first[] = { &a }, *second[] = { &b };
  g->hosts = first;
  g->nhosts = 1;
  ck_assert_ptr_eq(graph_find_host(g, "h0"), &a);
  g->hosts = second; /* same count, another array */
  ck_assert_ptr_null(graph_find_host(g, "h0"));
  ck_assert_ptr_eq(graph_find_host(g, "h1"), &b);
  g->hosts = NULL;
  g->nhosts = 0;
  ck_assert_ptr_eq(graph_find_schema(g, "T"), g->schemas[0]);
}
END_TEST

/* ---- names and references: every problem of the pass at once, in document order ---- */

/* Every later declaration of a name points at the first one. */
START_TEST(duplicates_point_at_the_first) {
  check_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <schema name='T'><attr name='x' type='int'/></schema>\n"
              "  <host name='h0' address='10.0.0.1:1'/>\n"
              "  <host name='h1' address='10.0.0.1:1'/>\n"
              "  <host name='h2' address='10.0.0.1:1'/>\n"
              "  <operator name='x' kind='Beacon'><output stream='A' schema='T'/>\n"
              "    <param name='count'>1</param><set attr='x'>seq</set></operator>\n"
              "  <operator name='x' kind='Beacon'><output stream='B' schema='T'/>\n"
              "    <param name='count'>1</param><set attr='x'>seq</set></operator>\n"
              "  <operator name='x' kind='Beacon'><output stream='C' schema='T'/>\n"
              "    <param name='count'>1</param><set attr='x'>seq</set></operator>\n"
              "</graph>\n",
              4,
              "g.xml:4: error: hosts 'h0' and 'h1' have the same address '10.0.0.1:1'\n"
              "g.xml:5: error: hosts 'h0' and 'h2' have the same address '10.0.0.1:1'\n"
              "g.xml:8: error: operator 'x' is declared twice (first on line 6)\n"
              "g.xml:10: error: operator 'x' is declared twice (first on line 6)\n");
}
END_TEST


START_TEST(references_all_reported) {
  check_fails(HEAD
              "  <operator name='copy' kind='Functor' host='h7'>\n"          /* 20 */
              "    <input stream='Trade'/>\n"                                /* 21 */
              "    <output stream='Trades' schema='Trade'/>\n"               /* 22 */
              "  </operator>\n"                                              /* 23 */
              "  <operator name='wide' kind='Functor'>\n"                    /* 24 */
              "    <input stream='Trades Trades'/>\n"                        /* 25 */
              "    <output stream='Wide' schema='Wider'/>\n"                 /* 26 */
              "  </operator>\n"                                              /* 27 */
              "  <operator name='trades' kind='FileSink'>\n"                 /* 28 */
              "    <input stream='Wide Nowhere'/>\n"                         /* 29 */
              "    <param name='file'>x.csv</param>\n"                       /* 30 */
              "  </operator>\n" TAIL,
              6,
              "g.xml:21: error: operator 'copy' reads stream 'Trade', which no operator produces; did you mean "
              "'Trades'?\n"
              "g.xml:22: error: stream 'Trades' is produced twice: by 'trades' (line 13) and by 'copy'\n"
              "g.xml:25: error: operator 'wide' lists stream 'Trades' twice in one input\n"
              "g.xml:26: error: unknown schema 'Wider' for stream 'Wide'\n"
              "g.xml:28: error: operator 'trades' is declared twice (first on line 12)\n"
              "g.xml:29: error: operator 'trades' reads stream 'Nowhere', which no operator produces\n");
}
END_TEST

START_TEST(hosts) {
  check_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <schema name='T'><attr name='x' type='int'/></schema>\n"
              "  <host name='h0' address='10.0.0.1:1'/>\n"
              "  <host name='h1' address='10.0.0.1:1'/>\n"
              "  <operator name='src' kind='Beacon' host='h2'>\n"
              "    <output stream='S' schema='T'/>\n"
              "    <param name='count'>1</param>\n"
              "    <set attr='x'>seq</set>\n"
              "  </operator>\n"
              "</graph>\n",
              2,
              "g.xml:4: error: hosts 'h0' and 'h1' have the same address '10.0.0.1:1'\n"
              "g.xml:5: error: operator 'src' is placed on unknown host 'h2'\n");
}
END_TEST

START_TEST(host_names_wait_for_placement_without_hosts) {
  /* without <host> elements the hosts come from --hosts, checked when placing */
  Graph *g = check_ok("<graph xmlns='" NS "' name='g'>\n"
                      "  <schema name='T'><attr name='x' type='int'/></schema>\n"
                      "  <operator name='src' kind='Beacon' host='h2'>\n"
                      "    <output stream='S' schema='T'/>\n"
                      "    <param name='count'>1</param>\n"
                      "    <set attr='x'>seq</set>\n"
                      "  </operator>\n"
                      "</graph>\n");
  ck_assert_str_eq(g->ops[0]->host, "h2");
}
END_TEST

START_TEST(host_pins_against_the_hosts_of_the_run) {
  /* sf-xform checks pins once it knows the hosts: --hosts, the graph's, or the default 'local' */
  Graph *g = check_ok("<graph xmlns='" NS "' name='g'>\n"
                      "  <schema name='T'><attr name='x' type='int'/></schema>\n"
                      "  <operator name='src' kind='Beacon' host='local'>\n"      /* 3 */
                      "    <output stream='S' schema='T'/>\n"
                      "    <param name='count'>1</param>\n"
                      "    <set attr='x'>seq</set>\n"
                      "  </operator>\n"
                      "  <operator name='out' kind='FileSink' host='h2'>\n"       /* 8 */
                      "    <input stream='S'/>\n"
                      "    <param name='file'>out.csv</param>\n"
                      "  </operator>\n"
                      "</graph>\n");
  ck_assert_int_eq(graph_check_pins(g, NULL, 0, &mem.diag), 1);
  ck_assert_str_eq(diags(), "g.xml:8: error: operator 'out' is placed on unknown host 'h2'\n");
  Host h2 = {"h2", "127.0.0.1:2", 0}, other = {"other", "127.0.0.1:3", 0};
  Host *both[] = {&other, &h2};
  ck_assert_int_eq(graph_check_pins(g, both, 2, &mem.diag), 1);
  ck_assert_str_eq(diags(), "g.xml:8: error: operator 'out' is placed on unknown host 'h2'\n"
                            "g.xml:3: error: operator 'src' is placed on unknown host 'local'\n");
  Host local = {"local", "127.0.0.1:4", 0};
  Host *all[] = {&h2, &local};
  ck_assert_int_eq(graph_check_pins(g, all, 2, &mem.diag), 0);
  ck_assert_int_eq(mem.diag.nerrors, 2);
  /* a pin one edit from exactly one host of the run: the error suggests that host */
  Host h3 = {"h3", "127.0.0.1:5", 0};
  Host *near[] = {&h3, &local};
  ck_assert_int_eq(graph_check_pins(g, near, 2, &mem.diag), 1);
  ck_assert_str_eq(diags(), "g.xml:8: error: operator 'out' is placed on unknown host 'h2'\n"
                            "g.xml:3: error: operator 'src' is placed on unknown host 'local'\n"
                            "g.xml:8: error: operator 'out' is placed on unknown host 'h2'; did you mean 'h3'?\n");
}
END_TEST

START_TEST(colocated_operators_pinned_apart) {
  check_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <schema name='T'><attr name='x' type='int'/></schema>\n"
              "  <host name='h0' address='127.0.0.1:1'/>\n"
              "  <host name='h1' address='127.0.0.1:2'/>\n"
              "  <operator name='src' kind='Beacon' colocate='io'>\n"              /* 5 */
              "    <output stream='S' schema='T'/>\n"
              "    <param name='count'>1</param>\n"
              "    <set attr='x'>seq</set>\n"
              "  </operator>\n"
              "  <operator name='a' kind='Filter' colocate='io' host='h1'>\n"      /* 10 */
              "    <input stream='S'/><output stream='A' schema='T'/>\n"
              "    <param name='where'>true</param>\n"
              "  </operator>\n"
              "  <operator name='b' kind='Filter' colocate='io' host='h1'>\n"      /* 14 */
              "    <input stream='A'/><output stream='B' schema='T'/>\n"
              "    <param name='where'>true</param>\n"
              "  </operator>\n"
              "  <operator name='c' kind='Filter' colocate='io' host='h0'>\n"      /* 18 */
              "    <input stream='B'/><output stream='C' schema='T'/>\n"
              "    <param name='where'>true</param>\n"
              "  </operator>\n"
              "  <operator name='d' kind='Filter' colocate='io' host='h0'>\n"      /* 22 */
              "    <input stream='C'/><output stream='D' schema='T'/>\n"
              "    <param name='where'>true</param>\n"
              "  </operator>\n"
              "  <operator name='e' kind='Filter' colocate='other' host='h0'>\n"   /* 26 */
              "    <input stream='D'/><output stream='E' schema='T'/>\n"
              "    <param name='where'>true</param>\n"
              "  </operator>\n"
              "  <operator name='f' kind='Filter' host='h1'>\n"                    /* 30 */
              "    <input stream='E'/><output stream='F' schema='T'/>\n"
              "    <param name='where'>true</param>\n"
              "  </operator>\n"
              "</graph>\n",
              1,
              "g.xml:18: error: operators 'a' (line 10) and 'c' share colocate tag 'io' but are pinned to "
              "different hosts ('h1' and 'h0')\n");
}
END_TEST

START_TEST(replicas_keep_their_colocate_tag_apart) {
  /* a rewritten graph: the channels of one operator are spread over the hosts on purpose */
  check_ok("<graph xmlns='" NS "' name='g'>\n"
           "  <schema name='T'><attr name='x' type='int'/></schema>\n"
           "  <host name='h0' address='127.0.0.1:1'/>\n"
           "  <host name='h1' address='127.0.0.1:2'/>\n"
           "  <operator name='src' kind='Beacon' host='h0'>\n"
           "    <output stream='S' schema='T'/>\n"
           "    <param name='count'>1</param>\n"
           "    <set attr='x'>seq</set>\n"
           "  </operator>\n"
           "  <operator name='r1.split' kind='Split' host='h0' origin='a' region='r1'>\n"
           "    <input stream='S'/>\n"
           "    <output stream='S.r1[0]' schema='T'/><output stream='S.r1[1]' schema='T'/>\n"
           "    <param name='strategy'>roundrobin</param>\n"
           "  </operator>\n"
           "  <operator name='a[0]' kind='Filter' colocate='t' host='h0' origin='a' region='r1' channel='0'>\n"
           "    <input stream='S.r1[0]'/><output stream='A[0]' schema='T'/>\n"
           "    <param name='where'>true</param>\n"
           "  </operator>\n"
           "  <operator name='a[1]' kind='Filter' colocate='t' host='h1' origin='a' region='r1' channel='1'>\n"
           "    <input stream='S.r1[1]'/><output stream='A[1]' schema='T'/>\n"
           "    <param name='where'>true</param>\n"
           "  </operator>\n"
           "  <operator name='r1.merge' kind='Merge' host='h0' origin='a' region='r1'>\n"
           "    <input stream='A[0]'/><input stream='A[1]'/>\n"
           "    <output stream='A' schema='T'/>\n"
           "    <param name='order'>roundrobin</param>\n"
           "  </operator>\n"
           "</graph>\n");
}
END_TEST

/* ---- files ---- */

START_TEST(sinks_writing_one_file) {
  char cwd[4096], doc[8192];
  ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
  /* the same file as out.csv, spelled as an absolute path with a detour through the parent */
  char *last = strrchr(cwd, '/');
  ck_assert_ptr_nonnull(last);
  snprintf(doc, sizeof doc,
           "<graph xmlns='" NS "' name='g'>\n"
           "  <schema name='T'><attr name='x' type='int'/></schema>\n"
           "  <operator name='src' kind='Beacon'>\n"
           "    <output stream='S' schema='T'/>\n"
           "    <param name='count'>1</param>\n"
           "    <set attr='x'>seq</set>\n"
           "  </operator>\n"
           "  <operator name='a' kind='FileSink'><input stream='S'/>\n"                 /* 8 */
           "    <param name='file'>out.csv</param></operator>\n"                        /* 9 */
           "  <operator name='b' kind='FileSink'><input stream='S'/>\n"
           "    <param name='file'>.//out.csv</param></operator>\n"                     /* 11 */
           "  <operator name='c' kind='FileSink'><input stream='S'/>\n"
           "    <param name='file'>x/y/../../out.csv</param></operator>\n"              /* 13 */
           "  <operator name='d' kind='FileSink'><input stream='S'/>\n"
           "    <param name='file'>%s/../%s/out.csv</param></operator>\n"               /* 15 */
           "  <operator name='e' kind='FileSink'><input stream='S'/>\n"
           "    <param name='file'>x/out.csv</param></operator>\n"                      /* 17 */
           "  <operator name='f' kind='FileSink'><input stream='S'/>\n"
           "    <param name='file'>y/../x/./out.csv</param></operator>\n"               /* 19 */
           "  <operator name='g' kind='FileSink'><input stream='S'/>\n"
           "    <param name='file'>out.csv.2</param></operator>\n"
           "  <operator name='h' kind='FileSink'><input stream='S'/>\n"
           "    <param name='file'>/../out.csv</param></operator>\n"                    /* 23 */
           "  <operator name='i' kind='FileSink'><input stream='S'/>\n"
           "    <param name='file'>/out.csv</param></operator>\n"                       /* 25 */
           "  <operator name='j' kind='FileSink'><input stream='S'/>\n"
           "    <param name='file'>-</param></operator>\n"
           "  <operator name='k' kind='FileSink'><input stream='S'/>\n"
           "    <param name='file'>-</param></operator>\n"
           "  <operator name='l' kind='FileSink'><input stream='S'/>\n"
           "    <param name='file'>/dev/null</param></operator>\n"
           "  <operator name='m' kind='FileSink'><input stream='S'/>\n"
           "    <param name='file'>/dev/null</param></operator>\n"
           "</graph>\n",
           cwd, last + 1);
  char expected[8192];
  snprintf(expected, sizeof expected,
           "g.xml:11: error: operator 'b' writes file './/out.csv', the same file as operator 'a' (line 9)\n"
           "g.xml:13: error: operator 'c' writes file 'x/y/../../out.csv', the same file as operator 'a' "
           "(line 9)\n"
           "g.xml:15: error: operator 'd' writes file '%s/../%s/out.csv', the same file as operator 'a' "
           "(line 9)\n"
           "g.xml:19: error: operator 'f' writes file 'y/../x/./out.csv', the same file as operator 'e' "
           "(line 17)\n"
           "g.xml:25: error: operator 'i' writes file '/out.csv', the same file as operator 'h' (line 23)\n",
           cwd, last + 1);
  check_fails(doc, 5, expected);
}
END_TEST

START_TEST(files_naming_directories) {
  check_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <schema name='T'><attr name='x' type='int'/></schema>\n"
              "  <operator name='src' kind='FileSource'>\n"
              "    <output stream='S' schema='T'/>\n"
              "    <param name='file'>in/</param>\n"                            /* 5 */
              "  </operator>\n"
              "  <operator name='a' kind='FileSink'><input stream='S'/>\n"
              "    <param name='file'>..</param></operator>\n"                  /* 8 */
              "  <operator name='b' kind='FileSink'><input stream='S'/>\n"
              "    <param name='file'>/</param></operator>\n"                   /* 10 */
              "  <operator name='c' kind='FileSink'><input stream='S'/>\n"
              "    <param name='file'>out/.</param></operator>\n"               /* 12 */
              "  <operator name='d' kind='FileSink'><input stream='S'/>\n"
              "    <param name='file'>out/.hidden</param></operator>\n"
              "  <operator name='e' kind='FileSink'><input stream='S'/>\n"
              "    <param name='file'>out/...</param></operator>\n"
              "</graph>\n",
              4,
              "g.xml:5: error: parameter 'file' of operator 'src' names a directory, not a file: 'in/'\n"
              "g.xml:8: error: parameter 'file' of operator 'a' names a directory, not a file: '..'\n"
              "g.xml:10: error: parameter 'file' of operator 'b' names a directory, not a file: '/'\n"
              "g.xml:12: error: parameter 'file' of operator 'c' names a directory, not a file: 'out/.'\n");
}
END_TEST

START_TEST(standard_input_and_output) {
  /* `-` is standard input for a FileSource and standard output for a FileSink; two sinks may
   * share standard output, two sources may not share standard input */
  check_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <schema name='T'><attr name='x' type='int'/></schema>\n"
              "  <operator name='a' kind='FileSource'><output stream='A' schema='T'/>\n"
              "    <param name='file'>-</param></operator>\n"                 /* 4 */
              "  <operator name='b' kind='FileSource'><output stream='B' schema='T'/>\n"
              "    <param name='file'>-</param></operator>\n"                 /* 6 */
              "  <operator name='c' kind='FileSource'><output stream='C' schema='T'/>\n"
              "    <param name='file'>./-</param></operator>\n"               /* a file named '-' */
              "  <operator name='d' kind='FileSink'><input stream='A B C'/>\n"
              "    <param name='file'>-</param></operator>\n"
              "  <operator name='e' kind='FileSink'><input stream='A'/>\n"
              "    <param name='file'>-</param></operator>\n"
              "</graph>\n",
              1, "g.xml:6: error: operator 'b' reads standard input, as operator 'a' (line 4) does\n");
}
END_TEST

START_TEST(standard_input_once) {
  check_ok("<graph xmlns='" NS "' name='g'>\n"
           "  <schema name='T'><attr name='x' type='int'/></schema>\n"
           "  <operator name='a' kind='FileSource'><output stream='A' schema='T'/>\n"
           "    <param name='file'>-</param></operator>\n"
           "  <operator name='d' kind='FileSink'><input stream='A'/>\n"
           "    <param name='file'>-</param></operator>\n"
           "</graph>\n");
}
END_TEST

START_TEST(roll_values) {
  check_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <schema name='T'><attr name='x' type='int'/></schema>\n"
              "  <operator name='src' kind='FileSource'><output stream='S' schema='T'/>\n"
              "    <param name='file'>in.csv</param></operator>\n"
              "  <operator name='a' kind='FileSink'><input stream='S'/><param name='file'>a.csv</param>\n"
              "    <param name='roll'>tuples 1</param></operator>\n"
              "  <operator name='b' kind='FileSink'><input stream='S'/><param name='file'>b.csv</param>\n"
              "    <param name='roll'>bytes 1048576</param></operator>\n"
              "  <operator name='c' kind='FileSink'><input stream='S'/><param name='file'>c.csv</param>\n"
              "    <param name='roll'>seconds 0.25</param></operator>\n"
              "  <operator name='d' kind='FileSink'><input stream='S'/><param name='file'>d.csv</param>\n"
              "    <param name='roll'>seconds 60</param></operator>\n"
              "  <operator name='e' kind='FileSink'><input stream='S'/><param name='file'>e.csv</param>\n"
              "    <param name='roll'>tuples 0</param></operator>\n"
              "  <operator name='f' kind='FileSink'><input stream='S'/><param name='file'>f.csv</param>\n"
              "    <param name='roll'>tuples -3</param></operator>\n"
              "  <operator name='g' kind='FileSink'><input stream='S'/><param name='file'>g.csv</param>\n"
              "    <param name='roll'>tuples 1.5</param></operator>\n"
              "  <operator name='h' kind='FileSink'><input stream='S'/><param name='file'>h.csv</param>\n"
              "    <param name='roll'>seconds 0</param></operator>\n"
              "  <operator name='i' kind='FileSink'><input stream='S'/><param name='file'>i.csv</param>\n"
              "    <param name='roll'>seconds x</param></operator>\n"
              "  <operator name='j' kind='FileSink'><input stream='S'/><param name='file'>j.csv</param>\n"
              "    <param name='roll'>minutes 5</param></operator>\n"
              "  <operator name='k' kind='FileSink'><input stream='S'/><param name='file'>k.csv</param>\n"
              "    <param name='roll'>bytes</param></operator>\n"
              "  <operator name='l' kind='FileSink'><input stream='S'/><param name='file'>l.csv</param>\n"
              "    <param name='roll'>tuples 10 20</param></operator>\n"
              "  <operator name='m' kind='FileSink'><input stream='S'/><param name='file'>m.csv</param>\n"
              "    <param name='roll'>tuples +4</param></operator>\n"
              "</graph>\n",
              9,
              "g.xml:14: error: parameter 'roll' of operator 'e' must be 'tuples N', 'bytes N' (N >= 1) or 'seconds T' (T > 0), got 'tuples 0'\n"
              "g.xml:16: error: parameter 'roll' of operator 'f' must be 'tuples N', 'bytes N' (N >= 1) or 'seconds T' (T > 0), got 'tuples -3'\n"
              "g.xml:18: error: parameter 'roll' of operator 'g' must be 'tuples N', 'bytes N' (N >= 1) or 'seconds T' (T > 0), got 'tuples 1.5'\n"
              "g.xml:20: error: parameter 'roll' of operator 'h' must be 'tuples N', 'bytes N' (N >= 1) or 'seconds T' (T > 0), got 'seconds 0'\n"
              "g.xml:22: error: parameter 'roll' of operator 'i' must be 'tuples N', 'bytes N' (N >= 1) or 'seconds T' (T > 0), got 'seconds x'\n"
              "g.xml:24: error: parameter 'roll' of operator 'j' must be 'tuples N', 'bytes N' (N >= 1) or 'seconds T' (T > 0), got 'minutes 5'\n"
              "g.xml:26: error: parameter 'roll' of operator 'k' must be 'tuples N', 'bytes N' (N >= 1) or 'seconds T' (T > 0), got 'bytes'\n"
              "g.xml:28: error: parameter 'roll' of operator 'l' must be 'tuples N', 'bytes N' (N >= 1) or 'seconds T' (T > 0), got 'tuples 10 20'\n"
              "g.xml:30: error: parameter 'roll' of operator 'm' must be 'tuples N', 'bytes N' (N >= 1) or 'seconds T' (T > 0), got 'tuples +4'\n");
}
END_TEST

/* ---- ports and children per kind ---- */

START_TEST(ports_per_kind) {
  check_fails(HEAD
              "  <operator name='more' kind='Beacon'>\n"                      /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='More' schema='Trade'/>\n"
              "    <param name='count'>1</param>\n"
              "    <set attr='sym'>\"x\"</set>\n"
              "  </operator>\n"
              "  <operator name='two' kind='Filter'>\n"                       /* 26 */
              "    <input stream='Trades'/>\n"
              "    <output stream='A' schema='Trade'/>\n"
              "    <output stream='B' schema='Trade'/>\n"
              "    <param name='where'>true</param>\n"
              "  </operator>\n"
              "  <operator name='merge' kind='Merge'>\n"                      /* 32 */
              "    <output stream='M' schema='Trade'/>\n"
              "    <param name='order'>seq</param>\n"
              "  </operator>\n"
              "  <operator name='out' kind='FileSink'>\n"                     /* 36 */
              "    <input stream='A'/>\n"
              "    <output stream='Written' schema='Trade'/>\n"
              "    <param name='file'>out.csv</param>\n"
              "  </operator>\n"
              "  <operator name='f' kind='Functor'>\n"                        /* 41 */
              "    <input stream='B'/>\n"
              "  </operator>\n" TAIL,
              5,
              "g.xml:20: error: Beacon operator 'more' takes no input ports, got 1\n"
              "g.xml:26: error: Filter operator 'two' takes 1 output port, got 2\n"
              "g.xml:32: error: Merge operator 'merge' takes at least 1 input port, got 0\n"
              "g.xml:36: error: FileSink operator 'out' takes no output ports, got 1\n"
              "g.xml:41: error: Functor operator 'f' takes 1 output port, got 0\n");
}
END_TEST

START_TEST(children_per_kind) {
  check_fails(HEAD
              "  <operator name='big' kind='Filter'>\n"                       /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Big' schema='Trade'/>\n"
              "    <param name='where'>vol &gt; 1</param>\n"
              "    <set attr='vol'>vol</set>\n"                               /* 24 */
              "    <state name='n' type='int' init='0'>n + 1</state>\n"       /* 25 */
              "    <model state='none'/>\n"                                   /* 26 */
              "    <library path='x.so' symbol='x'/>\n"                       /* 27 */
              "  </operator>\n"
              "  <operator name='mine' kind='Custom'>\n"                      /* 29 */
              "    <input stream='Big'/>\n"
              "  </operator>\n" TAIL,
              5,
              "g.xml:24: error: Filter operator 'big' takes no <set>\n"
              "g.xml:25: error: Filter operator 'big' takes no <state>\n"
              "g.xml:26: error: Filter operator 'big' takes no <model> (only Custom operators do)\n"
              "g.xml:27: error: Filter operator 'big' takes no <library> (only Custom operators do)\n"
              "g.xml:29: error: Custom operator 'mine' needs a <library path=... symbol=...>\n");
}
END_TEST

START_TEST(custom_ports_within_the_operator_interface) {
  /* op.h gives an operator two inputs and one output at most (a source or a sink has none) */
  check_ok(HEAD
           "  <operator name='pass' kind='Custom'>\n"
           "    <input stream='Trades'/><output stream='P' schema='Trade'/>\n"
           "    <library path='p.so' symbol='p'/>\n"
           "  </operator>\n"
           "  <operator name='gen' kind='Custom'>\n"
           "    <output stream='G' schema='Trade'/>\n"
           "    <library path='p.so' symbol='g'/>\n"
           "  </operator>\n"
           "  <operator name='both' kind='Custom'>\n"
           "    <input stream='P G'/>\n"
           "    <library path='p.so' symbol='s'/>\n"
           "  </operator>\n" TAIL);
  teardown();
  setup();
  check_fails(HEAD
              "  <operator name='join' kind='Custom'>\n"                      /* 20 */
              "    <input stream='Trades'/><input stream='Trades'/><input stream='Trades'/>\n"
              "    <library path='p.so' symbol='j'/>\n"
              "  </operator>\n"
              "  <operator name='fork' kind='Custom'>\n"                      /* 24 */
              "    <input stream='Trades'/>\n"
              "    <output stream='A' schema='Trade'/><output stream='B' schema='Trade'/>\n"
              "    <output stream='C' schema='Trade'/>\n"
              "    <library path='p.so' symbol='f'/>\n"
              "  </operator>\n" TAIL,
              2,
              "g.xml:20: error: Custom operator 'join' takes at most 2 input ports, got 3 (op.h's operator "
              "interface has at most two inputs and one output)\n"
              "g.xml:24: error: Custom operator 'fork' takes at most 1 output port, got 3 (op.h's operator "
              "interface has at most two inputs and one output)\n");
}
END_TEST

START_TEST(schemas_across_ports) {
  check_fails(HEAD
              "  <operator name='bars' kind='Beacon'>\n"                      /* 20 */
              "    <output stream='Bars' schema='Bar'/>\n"
              "    <param name='count'>1</param>\n"
              "    <set attr='sym'>\"s\"</set>\n"
              "    <set attr='avg'>1.0</set>\n"
              "    <set attr='n'>1</set>\n"
              "  </operator>\n"
              "  <operator name='both' kind='FileSink'>\n"                    /* 27 */
              "    <input stream='Trades Bars'/>\n"                           /* 28 */
              "    <param name='file'>x.csv</param>\n"
              "  </operator>\n"
              "  <operator name='big' kind='Filter'>\n"                       /* 31 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Big' schema='Bar'/>\n"                     /* 33 */
              "    <param name='where'>true</param>\n"
              "  </operator>\n"
              "  <operator name='merge' kind='Merge'>\n"                      /* 36 */
              "    <input stream='Trades'/>\n"
              "    <input stream='Bars'/>\n"                                  /* 38 */
              "    <output stream='M' schema='Trade'/>\n"
              "    <param name='order'>roundrobin</param>\n"
              "  </operator>\n" TAIL,
              3,
              "g.xml:28: error: streams 'Trades' (schema 'Trade') and 'Bars' (schema 'Bar') share an input of "
              "operator 'both' but have different schemas\n"
              "g.xml:33: error: Filter operator 'big' must output its input schema 'Trade', not 'Bar'\n"
              "g.xml:38: error: all inputs of Merge operator 'merge' must have schema 'Trade', not 'Bar'\n");
}
END_TEST

START_TEST(custom_model) {
  check_fails(HEAD
              "  <operator name='mine' kind='Custom'>\n"                                         /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Mine' schema='Bar'/>\n"
              "    <model state='partitioned' selectivity='one' forwards='sym price'/>\n"        /* 23 */
              "    <library path='x.so' symbol='x'/>\n"
              "  </operator>\n"
              "  <operator name='keyed' kind='Custom'>\n"                                        /* 26 */
              "    <input stream='Trades'/>\n"
              "    <model state='partitioned' keys='sym symbol'/>\n"                             /* 28 */
              "    <library path='x.so' symbol='x'/>\n"
              "  </operator>\n" TAIL,
              3,
              "g.xml:23: error: the <model> of operator 'mine' says state is partitioned but names no keys\n"
              "g.xml:23: error: the <model> of operator 'mine' forwards 'price', which is not an attribute of the "
              "same type in both input schema 'Trade' and output schema 'Bar'\n"
              "g.xml:28: error: the <model> of operator 'keyed' names 'symbol', which input schema 'Trade' does not "
              "have\n");
}
END_TEST

/* ---- parameters ---- */

START_TEST(parameters_unknown_missing_twice) {
  check_fails(HEAD
              "  <operator name='big' kind='Filter'>\n"                       /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Big' schema='Trade'/>\n"
              "    <param name='when'>vol &gt; 1</param>\n"                   /* 23 */
              "  </operator>\n"
              "  <operator name='out' kind='FileSink'>\n"                     /* 25 */
              "    <input stream='Big'/>\n"
              "    <param name='file'>a.csv</param>\n"
              "    <param name='file'>b.csv</param>\n"                        /* 28 */
              "  </operator>\n" TAIL,
              3,
              "g.xml:20: error: Filter operator 'big' needs parameter 'where'\n"
              "g.xml:23: error: unknown parameter 'when' for Filter operator 'big'\n"
              "g.xml:28: error: parameter 'file' of operator 'out' is given twice\n");
}
END_TEST

/* A kind the XSD did not refuse (a graph built in code) is refused by graph_check, with the same
 * suggestion as the XSD's error: a kind name in another case, or none when nothing is close. */
START_TEST(kind_unknown_suggest) {
  Graph *g = parse(HEAD TAIL);
  g->ops[0]->kind = KIND_UNKNOWN;
  g->ops[0]->kind_text = "beacon";
  ck_assert_int_eq(graph_check(g, &mem.diag), 1);
  ck_assert_str_eq(diags(), "g.xml:12: error: unknown operator kind 'beacon'; did you mean 'Beacon'?\n");
  g->ops[0]->kind_text = "Generator";
  ck_assert_int_eq(graph_check(g, &mem.diag), 1);
  ck_assert_str_eq(diags(), "g.xml:12: error: unknown operator kind 'beacon'; did you mean 'Beacon'?\n"
                            "g.xml:12: error: unknown operator kind 'Generator'\n");
}
END_TEST

/* A misspelt parameter gets a "did you mean"; when the suggestion is a parameter that must be
 * given (and is not), that one error says it: no second "needs parameter" error. A misspelt
 * 'listen' of a SocketSource and 'keys' of a hashing Split count as missing ones too. */
START_TEST(parameters_misspelt_suggest) {
  check_fails(HEAD
              "  <operator name='once' kind='Dedup'>\n"                       /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Once' schema='Trade'/>\n"
              "    <param name='partitionby'>sym</param>\n"                   /* 23 */
              "  </operator>\n"
              "  <operator name='split' kind='Split'>\n"                      /* 25 */
              "    <input stream='Once'/>\n"
              "    <output stream='S0' schema='Trade'/>\n"
              "    <param name='strategy'>hash</param>\n"
              "    <param name='key'>sym</param>\n"                           /* 29 */
              "  </operator>\n"
              "  <operator name='sock' kind='SocketSource'>\n"                /* 31 */
              "    <output stream='S1' schema='Trade'/>\n"
              "    <param name='Listen'>7000</param>\n"                       /* 33 */
              "  </operator>\n"
              "  <operator name='big' kind='Filter'>\n"                       /* 35 */
              "    <input stream='S0'/>\n"
              "    <output stream='Big' schema='Trade'/>\n"
              "    <param name='wh'>vol &gt; 1</param>\n"                     /* 38 */
              "  </operator>\n" TAIL,
              5,
              "g.xml:23: error: unknown parameter 'partitionby' for Dedup operator 'once'; did you mean "
              "'partitionBy'?\n"
              "g.xml:29: error: unknown parameter 'key' for Split operator 'split'; did you mean 'keys'?\n"
              "g.xml:33: error: unknown parameter 'Listen' for SocketSource operator 'sock'; did you mean "
              "'listen'?\n"
              "g.xml:35: error: Filter operator 'big' needs parameter 'where'\n"
              "g.xml:38: error: unknown parameter 'wh' for Filter operator 'big'\n");
}
END_TEST

/* number_read and window_read, the one reader of the integers of a graph: whole decimal text only,
 * and a value out of range is out of range however many digits it has. */
START_TEST(numbers_in_parameters) {
  static const struct { const char *text; int64_t min, max; NumRead want; int64_t value; } cases[] = {
    {"0", 0, INT64_MAX, NUM_OK, 0},
    {"00012", 0, INT64_MAX, NUM_OK, 12},
    {"9223372036854775807", 0, INT64_MAX, NUM_OK, INT64_MAX},
    {"9223372036854775808", 0, INT64_MAX, NUM_ABOVE, 0},
    {"99999999999999999999", 0, INT64_MAX, NUM_ABOVE, 0},
    {"-9223372036854775808", INT64_MIN, 0, NUM_OK, INT64_MIN},
    {"-9223372036854775809", INT64_MIN, 0, NUM_BELOW, 0},
    {"-1", 0, INT64_MAX, NUM_BELOW, 0},
    {"1025", 1, 1024, NUM_ABOVE, 0},
    {"", 0, 10, NUM_MALFORMED, 0},
    {"-", 0, 10, NUM_MALFORMED, 0},
    {"+1", 0, 10, NUM_MALFORMED, 0},
    {" 1", 0, 10, NUM_MALFORMED, 0},
    {"1 ", 0, 10, NUM_MALFORMED, 0},
    {"0x10", 0, 100, NUM_MALFORMED, 0},
    {"1e3", 0, 10000, NUM_MALFORMED, 0},
    {"99999999999999999999x", 0, INT64_MAX, NUM_MALFORMED, 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int64_t v = -77;
    NumRead r = number_read(cases[k].text, strlen(cases[k].text), cases[k].min, cases[k].max, &v);
    ck_assert_msg(r == cases[k].want, "'%s': %d, want %d", cases[k].text, (int)r, (int)cases[k].want);
    if (r == NUM_OK) ck_assert_msg(v == cases[k].value, "'%s': %lld", cases[k].text, (long long)v);
    else ck_assert_msg(v == -77, "'%s': the value was written", cases[k].text);
  }
  /* window_parse: every form, blanks of any kind between words, *at at the first bad word */
  static const struct {
    const char *text; NumRead want; WindowKind kind; int64_t size, slide; size_t at;
  } windows[] = {
    {"sliding  \t12", NUM_OK, WIN_SLIDING, 12, 0, 10},
    {"tumbling 9223372036854775807", NUM_OK, WIN_TUMBLING, INT64_MAX, 0, 9},
    {"tumbling time 60000", NUM_OK, WIN_TUMBLING_TIME, 60000, 60000, 14},
    {"hopping\ntime 60 15", NUM_OK, WIN_HOPPING_TIME, 60, 15, 16},
    {"hopping time 60 7", NUM_OK, WIN_HOPPING_TIME, 60, 7, 16}, /* check.c refuses it */
    {"session time 30", NUM_OK, WIN_SESSION_TIME, 30, 0, 13},
    {"running", NUM_OK, WIN_RUNNING, 0, 0, 0},
    {"tumbling 99999999999999999999", NUM_ABOVE, 0, 0, 0, 9},
    {"tumbling 0", NUM_BELOW, 0, 0, 0, 9},
    {"tumbling 3 rows", NUM_MALFORMED, 0, 0, 0, 11},
    {"tumbling", NUM_MALFORMED, 0, 0, 0, 0},
    {"tumblingly 3", NUM_MALFORMED, 0, 0, 0, 0},
    {"tumbling time", NUM_MALFORMED, 0, 0, 0, 0},
    {"sliding time 5", NUM_MALFORMED, 0, 0, 0, 8},
    {"hopping 10", NUM_MALFORMED, 0, 0, 0, 8},
    {"hopping time 60", NUM_MALFORMED, 0, 0, 0, 0},
    {"hopping time 60 -5", NUM_BELOW, 0, 0, 0, 16},
    {"session time 5 5", NUM_MALFORMED, 0, 0, 0, 15},
    {"session 5", NUM_MALFORMED, 0, 0, 0, 8},
    {"running 5", NUM_MALFORMED, 0, 0, 0, 8},
    {"", NUM_MALFORMED, 0, 0, 0, 0},
    {" running", NUM_MALFORMED, 0, 0, 0, 0},
  };
  for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
    WindowSpec w = {.kind = -1};
    size_t at = 99;
    NumRead r = window_parse(windows[k].text, &w, &at);
    ck_assert_msg(r == windows[k].want, "'%s': %d, want %d", windows[k].text, (int)r, (int)windows[k].want);
    ck_assert_msg(at == windows[k].at, "'%s': at %zu, want %zu", windows[k].text, at, windows[k].at);
    if (r == NUM_OK)
      ck_assert_msg(w.kind == windows[k].kind && w.size == windows[k].size && w.slide == windows[k].slide,
                    "'%s': kind %d size %lld slide %lld", windows[k].text, (int)w.kind, (long long)w.size,
                    (long long)w.slide);
  }
  WindowSpec w;
  size_t at;
  ck_assert_int_eq(window_parse(NULL, &w, &at), NUM_MALFORMED);
  ck_assert(window_is_time(WIN_TUMBLING_TIME) && window_is_time(WIN_HOPPING_TIME) && window_is_time(WIN_SESSION_TIME));
  ck_assert(!window_is_time(WIN_TUMBLING) && !window_is_time(WIN_SLIDING) && !window_is_time(WIN_RUNNING));
}
END_TEST

/* What parameter 'window' may be, as its diagnostics say. */
#define WINDOW_FORMS \
  "'tumbling N', 'sliding N', 'tumbling time SIZE', 'hopping time SIZE SLIDE', 'session time GAP' or 'running'"

START_TEST(parameter_values) {
  check_fails(HEAD
              "  <operator name='more' kind='Beacon'>\n"                      /* 20 */
              "    <output stream='More' schema='Trade'/>\n"
              "    <param name='count'>-1</param>\n"                          /* 22 */
              "    <param name='rate'>0</param>\n"                            /* 23 */
              "    <set attr='sym'>\"x\"</set><set attr='price'>1.0</set><set attr='vol'>1</set>\n"
              "  </operator>\n"
              "  <operator name='bars' kind='Aggregate'>\n"                   /* 26 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Bars' schema='Bar'/>\n"
              "    <param name='partitionBy'>sym, symbol</param>\n"           /* 29 */
              "    <param name='window'>tumbling 0</param>\n"                 /* 30 */
              "    <set attr='avg'>avg(price)</set><set attr='n'>count()</set>\n"
              "  </operator>\n"
              "  <operator name='spin' kind='Work'>\n"                        /* 33 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Spun' schema='Trade'/>\n"
              "    <param name='iterations'>lots</param>\n"                   /* 36 */
              "  </operator>\n"
              "  <operator name='split' kind='Split'>\n"                      /* 38 */
              "    <input stream='Trades'/>\n"
              "    <output stream='A' schema='Trade'/>\n"
              "    <param name='strategy'>hash</param>\n"
              "    <param name='sequence'>renumber</param>\n"                 /* 42 */
              "    <param name='pulse'>often</param>\n"                       /* 43 */
              "  </operator>\n"
              "  <operator name='merge' kind='Merge'>\n"                      /* 45 */
              "    <input stream='A'/>\n"
              "    <output stream='M' schema='Trade'/>\n"
              "    <param name='order'>sorted</param>\n"                      /* 48 */
              "  </operator>\n"
              "  <operator name='out' kind='FileSink'>\n"                     /* 50 */
              "    <input stream='M'/>\n"
              "    <param name='file'>  </param>\n"                           /* 52 */
              "    <param name='format'>CSV</param>\n"                        /* 53 */
              "  </operator>\n" TAIL,
              11,
              "g.xml:22:25: error: parameter 'count' of operator 'more' must be a non-negative integer, got '-1'\n"
              "g.xml:23: error: parameter 'rate' of operator 'more' must be a positive number of tuples per second, "
              "got '0'\n"
              "g.xml:29: error: parameter 'partitionBy' of operator 'bars' names 'symbol', which input schema "
              "'Trade' does not have\n"
              "g.xml:30:35: error: parameter 'window' of operator 'bars' must be " WINDOW_FORMS ", each number >= 1, "
              "got 'tumbling 0'\n"
              "g.xml:36:30: error: parameter 'iterations' of operator 'spin' must be a non-negative integer, got "
              "'lots'\n"
              "g.xml:38: error: Split operator 'split' with strategy 'hash' needs parameter 'keys'\n"
              "g.xml:42: error: parameter 'sequence' of operator 'split' must be 'assign' or 'keep', got "
              "'renumber'\n"
              "g.xml:43:25: error: parameter 'pulse' of operator 'split' must be a non-negative integer, got 'often'\n"
              "g.xml:48: error: parameter 'order' of operator 'merge' must be 'roundrobin', 'seq' or 'seqpulse', "
              "got 'sorted'\n"
              "g.xml:52: error: parameter 'file' of operator 'out' is empty\n"
              "g.xml:53: error: parameter 'format' of operator 'out' must be 'csv', got 'CSV'\n");
}
END_TEST

START_TEST(line_breaks_in_values_stay_on_one_line) {
  check_fails(HEAD
              "  <operator name='bars' kind='Aggregate'>\n"                   /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Bars' schema='Bar'/>\n"
              "    <param name='partitionBy'>sym</param>\n"
              "    <param name='window'>tumbling\n"                           /* 24 */
              "      10 rows</param>\n"
              "    <set attr='avg'>avg(price)</set><set attr='n'>count()</set>\n"
              "  </operator>\n" TAIL,
              1,
              "g.xml:25:10: error: parameter 'window' of operator 'bars' must be " WINDOW_FORMS ", each number >= 1, "
              "got 'tumbling\\n      10 rows'\n");
}
END_TEST

/* Time windows: the slide of a hopping window divides its size; lateness is a non-negative
 * integer and only goes with a time window. */
START_TEST(time_window_values) {
  check_fails(HEAD
              "  <operator name='hop' kind='Aggregate'>\n"                    /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Hop' schema='Bar'/>\n"
              "    <param name='partitionBy'>sym</param>\n"
              "    <param name='window'>hopping time 100 30</param>\n"       /* 24 */
              "    <param name='lateness'>-1</param>\n"                      /* 25 */
              "    <set attr='avg'>avg(price)</set><set attr='n'>count()</set>\n"
              "  </operator>\n"
              "  <operator name='run' kind='Aggregate'>\n"                   /* 28 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Run' schema='Bar'/>\n"
              "    <param name='partitionBy'>sym</param>\n"
              "    <param name='window'>running</param>\n"
              "    <param name='lateness'>10</param>\n"                      /* 33 */
              "    <set attr='avg'>avg(price)</set><set attr='n'>count()</set>\n"
              "  </operator>\n"
              "  <operator name='wide' kind='Aggregate'>\n"                  /* 36 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Wide' schema='Bar'/>\n"
              "    <param name='partitionBy'>sym</param>\n"
              "    <param name='window'>hopping time 10 20</param>\n"        /* 40 */
              "    <set attr='avg'>avg(price)</set><set attr='n'>count()</set>\n"
              "  </operator>\n" TAIL,
              4,
              "g.xml:24:43: error: parameter 'window' of operator 'hop': the slide 30 does not divide the size 100 "
              "(every tuple must be in the same number of windows), got 'hopping time 100 30'\n"
              "g.xml:25:28: error: parameter 'lateness' of operator 'hop' must be a non-negative integer, got '-1'\n"
              "g.xml:33: error: parameter 'lateness' of operator 'run' needs a time window (tumbling time, hopping "
              "time, session time): it is how long a window waits after its end, and 'running' has no end in time\n"
              "g.xml:40:42: error: parameter 'window' of operator 'wide': the slide 20 does not divide the size 10 "
              "(every tuple must be in the same number of windows), got 'hopping time 10 20'\n");
}
END_TEST

/* A source of bids declaring event time `ts`. Lines 1 to 19; the next line is 20. */
#define TIME_HEAD                                                         \
  "<graph xmlns='" NS "' name='g'>\n"                          /* 1 */    \
  "  <schema name='Bid'>\n"                                    /* 2 */    \
  "    <attr name='auction' type='int'/>\n"                    /* 3 */    \
  "    <attr name='ts' type='int'/>\n"                         /* 4 */    \
  "    <attr name='price' type='double'/>\n"                   /* 5 */    \
  "  </schema>\n"                                              /* 6 */    \
  "  <schema name='Count'>\n"                                  /* 7 */    \
  "    <attr name='auction' type='int'/>\n"                    /* 8 */    \
  "    <attr name='end' type='int'/>\n"                        /* 9 */    \
  "    <attr name='n' type='int'/>\n"                          /* 10 */   \
  "  </schema>\n"                                              /* 11 */   \
  "  <operator name='bids' kind='Beacon'>\n"                   /* 12 */   \
  "    <output stream='Bids' schema='Bid'/>\n"                 /* 13 */   \
  "    <param name='count'>100</param>\n"                      /* 14 */   \
  "    <param name='time'>ts</param>\n"                        /* 15 */   \
  "    <set attr='auction'>seq % 5</set>\n"                    /* 16 */   \
  "    <set attr='ts'>seq * 100</set>\n"                       /* 17 */   \
  "    <set attr='price'>double(seq)</set>\n"                  /* 18 */   \
  "  </operator>\n"                                            /* 19 */

/* Event time follows what operators forward; a time window's output has it in the attribute set to
 * window_end(), so windows stack; the default tick is the gcd of the windows downstream. */
START_TEST(event_time_streams_and_ticks) {
  Graph *g = check_ok(TIME_HEAD
                      "  <operator name='cheap' kind='Filter'>\n"
                      "    <input stream='Bids'/>\n"
                      "    <output stream='Cheap' schema='Bid'/>\n"
                      "    <param name='where'>price &lt; 50.0</param>\n"
                      "  </operator>\n"
                      "  <operator name='counts' kind='Aggregate'>\n"
                      "    <input stream='Cheap'/>\n"
                      "    <output stream='Counts' schema='Count'/>\n"
                      "    <param name='partitionBy'>auction</param>\n"
                      "    <param name='window'>tumbling time 60000</param>\n"
                      "    <param name='lateness'>1000</param>\n"
                      "    <set attr='n'>count()</set><set attr='end'>window_end()</set>\n"
                      "  </operator>\n"
                      "  <operator name='top' kind='Aggregate'>\n"
                      "    <input stream='Counts'/>\n"
                      "    <output stream='Top' schema='Count'/>\n"
                      "    <param name='window'>hopping time 120000 40000</param>\n"
                      "    <set attr='auction'>arg_max(auction, n)</set>\n"
                      "    <set attr='end'>window_end()</set><set attr='n'>max(n)</set>\n"
                      "  </operator>\n"
                      "  <operator name='run' kind='Aggregate'>\n"
                      "    <input stream='Bids'/>\n"
                      "    <output stream='Run' schema='Count'/>\n"
                      "    <param name='partitionBy'>auction</param>\n"
                      "    <param name='window'>running</param>\n"
                      "    <set attr='end'>max(ts)</set><set attr='n'>count_distinct(price)</set>\n"
                      "  </operator>\n"
                      "  <operator name='other' kind='Beacon'>\n"
                      "    <output stream='Other' schema='Bid'/>\n"
                      "    <param name='count'>1</param>\n"
                      "    <param name='time'>auction</param>\n"
                      "    <param name='tick'>7</param>\n"
                      "    <set attr='auction'>seq</set><set attr='ts'>seq</set><set attr='price'>1.0</set>\n"
                      "  </operator>\n" TAIL);
  ck_assert_int_eq(stream_time_slot(g, graph_find_stream(g, "Bids")), 1);
  ck_assert_int_eq(stream_time_slot(g, graph_find_stream(g, "Cheap")), 1);
  ck_assert_int_eq(stream_time_slot(g, graph_find_stream(g, "Counts")), 1);
  ck_assert_int_eq(stream_time_slot(g, graph_find_stream(g, "Top")), 1);
  ck_assert_int_eq(stream_time_slot(g, graph_find_stream(g, "Run")), -1); /* running forwards the key only */
  ck_assert_int_eq(stream_time_slot(g, graph_find_stream(g, "Other")), 0);
  ck_assert_int_eq(source_tick(g, graph_find_op(g, "bids")), 20000); /* gcd of 60000, 120000 and 40000 */
  ck_assert(!source_tick_given(graph_find_op(g, "bids")));
  ck_assert_int_eq(source_tick(g, graph_find_op(g, "other")), 7);
  ck_assert(source_tick_given(graph_find_op(g, "other")));
}
END_TEST

/* What event time refuses: a bad `time` or `tick`, a time window on a stream without event time
 * (naming the operator that dropped it), a fan-in of streams with different time attributes. */
START_TEST(event_time_errors) {
  check_fails(TIME_HEAD
              "  <operator name='bad' kind='Beacon'>\n"                      /* 20 */
              "    <output stream='Bad' schema='Bid'/>\n"
              "    <param name='count'>1</param>\n"
              "    <param name='time'>tss</param>\n"                         /* 23 */
              "    <param name='tick'>0</param>\n"                           /* 24 */
              "    <set attr='auction'>seq</set><set attr='ts'>seq</set><set attr='price'>1.0</set>\n"
              "  </operator>\n"
              "  <operator name='worse' kind='Beacon'>\n"                    /* 27 */
              "    <output stream='Worse' schema='Bid'/>\n"
              "    <param name='count'>1</param>\n"
              "    <param name='time'>price</param>\n"                       /* 30 */
              "    <set attr='auction'>seq</set><set attr='ts'>seq</set><set attr='price'>1.0</set>\n"
              "  </operator>\n" TAIL,
              3,
              "g.xml:23: error: parameter 'time' of operator 'bad' names 'tss', which output schema 'Bid' does not "
              "have; did you mean 'ts'?\n"
              "g.xml:24:24: error: parameter 'tick' of operator 'bad' must be a positive integer, got '0'\n"
              "g.xml:30: error: parameter 'time' of operator 'worse' must name an int attribute, but 'price' is "
              "double in output schema 'Bid'\n");
  teardown(); /* a second graph */
  setup();
  check_fails(TIME_HEAD
              "  <operator name='shift' kind='Functor'>\n"                   /* 20 */
              "    <input stream='Bids'/>\n"
              "    <output stream='Shifted' schema='Bid'/>\n"
              "    <set attr='ts'>ts + 1</set>\n"
              "  </operator>\n"
              "  <operator name='cheap' kind='Filter'>\n"                    /* 25 */
              "    <input stream='Shifted'/>\n"
              "    <output stream='Cheap' schema='Bid'/>\n"
              "    <param name='where'>price &lt; 50.0</param>\n"
              "  </operator>\n"
              "  <operator name='sessions' kind='Aggregate'>\n"              /* 30 */
              "    <input stream='Cheap'/>\n"
              "    <output stream='Sessions' schema='Count'/>\n"
              "    <param name='partitionBy'>auction</param>\n"
              "    <param name='window'>session time 500</param>\n"         /* 34 */
              "    <set attr='n'>count()</set><set attr='end'>window_start()</set>\n"
              "  </operator>\n"
              "  <operator name='stacked' kind='Aggregate'>\n"               /* 37 */
              "    <input stream='Sessions'/>\n"
              "    <output stream='Stacked' schema='Count'/>\n"
              "    <param name='partitionBy'>auction</param>\n"
              "    <param name='window'>tumbling time 10</param>\n"         /* 41 */
              "    <set attr='n'>count()</set><set attr='end'>window_end()</set>\n"
              "  </operator>\n"
              "  <operator name='plain' kind='Beacon'>\n"                    /* 44 */
              "    <output stream='Plain' schema='Bid'/>\n"
              "    <param name='count'>1</param>\n"
              "    <set attr='auction'>seq</set><set attr='ts'>seq</set><set attr='price'>1.0</set>\n"
              "  </operator>\n"
              "  <operator name='byauction' kind='Beacon'>\n"                /* 49 */
              "    <output stream='ByAuction' schema='Bid'/>\n"
              "    <param name='count'>1</param>\n"
              "    <param name='time'>auction</param>\n"
              "    <set attr='auction'>seq</set><set attr='ts'>seq</set><set attr='price'>1.0</set>\n"
              "  </operator>\n"
              "  <operator name='both' kind='Aggregate'>\n"                  /* 55 */
              "    <input stream='Bids ByAuction Plain'/>\n"                 /* 56 */
              "    <output stream='Both' schema='Count'/>\n"
              "    <param name='partitionBy'>auction</param>\n"
              "    <param name='window'>tumbling time 10</param>\n"         /* 59 */
              "    <set attr='n'>count()</set><set attr='end'>window_end()</set>\n"
              "  </operator>\n" TAIL,
              4,
              "g.xml:34: error: operator 'sessions' has a time window ('session time 500') but its input stream "
              "'Cheap' has no event time: operator 'shift' (line 20) changes or drops time attribute 'ts'\n"
              "g.xml:41: error: operator 'stacked' has a time window ('tumbling time 10') but its input stream "
              "'Sessions' has no event time: operator 'shift' (line 20) changes or drops time attribute 'ts'\n"
              "g.xml:56: error: streams 'Bids' and 'ByAuction' share an input of operator 'both' but have different "
              "event times ('ts' and 'auction')\n"
              "g.xml:59: error: operator 'both' has a time window ('tumbling time 10') but its input stream "
              "'Plain' has no event time: no source upstream declares parameter 'time'\n");
}
END_TEST

/* order="time" is parsed into Input.time_order, and every stream it merges needs event time. */
START_TEST(time_ordered_inputs) {
  check_fails(TIME_HEAD
              "  <operator name='plain' kind='Beacon'>\n"                    /* 20 */
              "    <output stream='Plain' schema='Bid'/>\n"
              "    <param name='count'>1</param>\n"
              "    <set attr='auction'>seq</set><set attr='ts'>seq</set><set attr='price'>1.0</set>\n"
              "  </operator>\n"
              "  <operator name='both' kind='Filter'>\n"                     /* 25 */
              "    <input stream='Bids Plain' order='time'/>\n"              /* 26 */
              "    <output stream='Both' schema='Bid'/>\n"
              "    <param name='where'>true</param>\n"
              "  </operator>\n"
              "  <operator name='again' kind='Filter'>\n"                    /* 30 */
              "    <input stream='Both Bids' order='position'/>\n"
              "    <output stream='Again' schema='Bid'/>\n"
              "    <param name='where'>true</param>\n"
              "  </operator>\n" TAIL,
              1,
              "g.xml:26: error: an input of operator 'both' is merged by time (order=\"time\") but its stream "
              "'Plain' has no event time: no source upstream declares parameter 'time'\n");
  ck_assert(graph_find_op(graph, "both")->inputs[0].time_order);
  ck_assert(!graph_find_op(graph, "again")->inputs[0].time_order);
  teardown(); /* a second graph */
  setup();
  Graph *g = check_ok(TIME_HEAD
                      "  <operator name='more' kind='Beacon'>\n"
                      "    <output stream='More' schema='Bid'/>\n"
                      "    <param name='count'>1</param>\n"
                      "    <param name='time'>ts</param>\n"
                      "    <set attr='auction'>seq</set><set attr='ts'>seq</set><set attr='price'>1.0</set>\n"
                      "  </operator>\n"
                      "  <operator name='both' kind='Filter'>\n"
                      "    <input stream='Bids More' order='time'/>\n"
                      "    <output stream='Both' schema='Bid'/>\n"
                      "    <param name='where'>true</param>\n"
                      "  </operator>\n" TAIL);
  ck_assert_int_eq(stream_time_slot(g, graph_find_stream(g, "Both")), 1);
}
END_TEST

START_TEST(structure_errors_stop_before_expressions) {
  /* the type error in 'big' is not reported while a reference is broken: types need references */
  check_fails(HEAD
              "  <operator name='big' kind='Filter'>\n"                       /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Big' schema='Trade'/>\n"
              "    <param name='where'>vol + 1</param>\n"
              "  </operator>\n"
              "  <operator name='out' kind='FileSink'>\n"                     /* 25 */
              "    <input stream='Small'/>\n"                                 /* 26 */
              "    <param name='file'>x.csv</param>\n"
              "  </operator>\n" TAIL,
              1,
              "g.xml:26: error: operator 'out' reads stream 'Small', which no operator produces\n");
  ck_assert_ptr_null(graph->order);
}
END_TEST

/* ---- cycles ---- */

START_TEST(cycle_of_three) {
  check_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <schema name='T'><attr name='x' type='int'/></schema>\n"
              "  <operator name='c' kind='Functor'><input stream='B'/><output stream='C' schema='T'/></operator>\n"
              "  <operator name='a' kind='Functor'><input stream='C'/><output stream='A' schema='T'/></operator>\n"
              "  <operator name='b' kind='Functor'><input stream='A'/><output stream='B' schema='T'/></operator>\n"
              "</graph>\n",
              1, "g.xml:3: error: the graph has a cycle: 'c' -> 'a' -> 'b' -> 'c'\n");
  ck_assert_ptr_null(graph->order);
}
END_TEST

/* Walks from several operators below one cycle meet on their way up: the cycle is said once. */
START_TEST(cycle_below_shared_path_reported_once) {
  check_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <schema name='T'><attr name='x' type='int'/></schema>\n"
              "  <operator name='d' kind='FileSink'><input stream='C'/><param name='file'>d</param></operator>\n"
              "  <operator name='e' kind='FileSink'><input stream='C'/><param name='file'>e</param></operator>\n"
              "  <operator name='c' kind='Functor'><input stream='B'/><output stream='C' schema='T'/></operator>\n"
              "  <operator name='a' kind='Functor'><input stream='B'/><output stream='A' schema='T'/></operator>\n"
              "  <operator name='b' kind='Functor'><input stream='A'/><output stream='B' schema='T'/></operator>\n"
              "</graph>\n",
              1, "g.xml:6: error: the graph has a cycle: 'a' -> 'b' -> 'a'\n");
}
END_TEST

START_TEST(every_cycle_reported_once) {
  /* two cycles, one operator downstream of the first, and a self-loop */
  check_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <schema name='T'><attr name='x' type='int'/></schema>\n"
              "  <operator name='after' kind='FileSink'><input stream='B'/><param name='file'>f</param></operator>\n"
              "  <operator name='a' kind='Functor'><input stream='B'/><output stream='A' schema='T'/></operator>\n"
              "  <operator name='b' kind='Functor'><input stream='A'/><output stream='B' schema='T'/></operator>\n"
              "  <operator name='self' kind='Functor'><input stream='S'/><output stream='S' schema='T'/></operator>\n"
              "</graph>\n",
              2,
              "g.xml:4: error: the graph has a cycle: 'a' -> 'b' -> 'a'\n"
              "g.xml:6: error: the graph has a cycle: 'self' -> 'self'\n");
}
END_TEST

/* ---- expressions: types, syntax, names, with line and column ---- */

START_TEST(expression_errors_all_reported) {
  check_fails(HEAD
              "  <operator name='f' kind='Functor'>\n"                        /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='F' schema='Trade'/>\n"
              "    <param name='where'>vol</param>\n"                         /* 23 */
              "    <set attr='sym'>sym + vol</set>\n"                         /* 24 */
              "    <set attr='price'>price * vol</set>\n"                     /* 25 */
              "    <set attr='vol'>lenght(sym) + nope</set>\n"                /* 26 */
              "  </operator>\n" TAIL,
              5,
              "g.xml:23: error: parameter 'where' of operator 'f' must be bool, got int\n"
              "g.xml:24:25: error: operator '+' needs two ints, two doubles or two strings, got string and int\n"
              "g.xml:25:29: error: operator '*' needs two ints or two doubles, got double and int\n"
              "g.xml:26:21: error: unknown function 'lenght'\n"
              "g.xml:26:35: error: unknown name 'nope'\n");
}
END_TEST

START_TEST(expression_syntax_errors) {
  check_fails(HEAD
              "  <operator name='f' kind='Functor'>\n"                        /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='F' schema='Trade'/>\n"
              "    <param name='where'>vol &gt;</param>\n"                    /* 23 */
              "    <set attr='sym'>\"abc</set>\n"                             /* 24 */
              "    <set attr='price'>(price</set>\n"                          /* 25 */
              "    <set attr='vol'>vol vol</set>\n"                           /* 26 */
              "  </operator>\n" TAIL,
              4,
              "g.xml:23:33: error: unexpected end of expression\n"
              "g.xml:24:21: error: unterminated string\n"
              "g.xml:25:29: error: expected ')'\n"
              "g.xml:26:25: error: unexpected 'vol'\n");
}
END_TEST

START_TEST(expression_on_the_next_line) {
  check_fails(HEAD
              "  <operator name='f' kind='Functor'>\n"                        /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='F' schema='Trade'/>\n"
              "    <param name='where'>\n"                                    /* 23 */
              "      vol &gt;= 10 &amp;&amp;\n"                               /* 24 */
              "      sym</param>\n"
              "    <set attr='price'>\n"                                      /* 26 */
              "\n"
              "      price + 1</set>\n"                                       /* 28 */
              "  </operator>\n" TAIL,
              2,
              "g.xml:24:20: error: operator '&&' needs two bools, got bool and string\n"
              "g.xml:28:13: error: operator '+' needs two ints, two doubles or two strings, got double and int\n");
}
END_TEST

START_TEST(aggregate_rules) {
  check_fails(HEAD
              "  <operator name='bars' kind='Aggregate'>\n"                   /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Bars' schema='Bar'/>\n"
              "    <param name='partitionBy'>sym</param>\n"
              "    <param name='window'>tumbling 5</param>\n"
              "    <set attr='avg'>price + avg(price)</set>\n"                /* 25 */
              "    <set attr='n'>sum(count())</set>\n"                        /* 26 */
              "  </operator>\n"
              "  <operator name='f' kind='Functor'>\n"                        /* 28 */
              "    <input stream='Bars'/>\n"
              "    <output stream='F' schema='Bar'/>\n"
              "    <set attr='n'>count()</set>\n"                             /* 31 */
              "  </operator>\n"
              "  <operator name='nokey' kind='Aggregate'>\n"                  /* 33 */
              "    <input stream='Trades'/>\n"
              "    <output stream='NoKey' schema='Bar'/>\n"
              "    <param name='window'>sliding 5</param>\n"
              "    <set attr='avg'>avg(price)</set>\n"
              "    <set attr='n'>count()</set>\n"
              "  </operator>\n" TAIL,
              4,
              "g.xml:25:21: error: attribute 'price' is used outside an aggregate function in operator 'bars' "
              "(only partitionBy attributes may be)\n"
              "g.xml:26:23: error: aggregate function 'count' cannot be nested inside 'sum'\n"
              "g.xml:31:19: error: aggregate function 'count' is only allowed in an Aggregate\n"
              "g.xml:33: error: output attribute 'sym' of operator 'nokey' is neither set nor a partitionBy "
              "attribute\n");
}
END_TEST

START_TEST(state_rules) {
  check_fails(HEAD
              "  <operator name='run' kind='Functor'>\n"                                  /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Run' schema='Trade'/>\n"
              "    <state name='total' type='int' init='0.0'>total + vol</state>\n"       /* 23 */
              "    <state name='vol' type='int' init='0'>vol</state>\n"                   /* 24 */
              "    <state name='mean' type='double' init='price'>mean</state>\n"          /* 25 */
              "    <state name='total' type='int' init='0'>total + 1.5</state>\n"         /* 26 */
              "  </operator>\n" TAIL,
              5,
              "g.xml:23: error: init of state variable 'total' of operator 'run' must be int, got double\n"
              "g.xml:24: error: state variable 'vol' of operator 'run' has the name of an input attribute\n"
              "g.xml:25: error: init of state variable 'mean' of operator 'run' cannot read attribute 'price' "
              "(an init sees no tuple)\n"
              "g.xml:26: error: state variable 'total' of operator 'run' is declared twice\n"
              "g.xml:26:51: error: operator '+' needs two ints, two doubles or two strings, got int and double\n");
}
END_TEST

START_TEST(flatmap_count_and_index) {
  check_fails(HEAD
              "  <operator name='copies' kind='FlatMap'>\n"                   /* 20 */
              "    <input stream='Trades'/>\n"
              "    <output stream='Copies' schema='Trade'/>\n"
              "    <param name='count'>price</param>\n"                       /* 23 */
              "    <set attr='vol'>i + seq</set>\n"                           /* 24 */
              "  </operator>\n" TAIL,
              2,
              "g.xml:23: error: parameter 'count' of operator 'copies' must be int, got double\n"
              "g.xml:24:25: error: unknown name 'seq'\n");
}
END_TEST

/* ---- output schemas: every attribute set or forwarded ---- */

START_TEST(sets_and_forwarding_messages) {
  /* HEAD cannot take another schema after its operator, so this graph has its own head */
  check_fails("<graph xmlns='" NS "' name='g'>\n"                              /* 1 */
              "  <schema name='Trade'>\n"
              "    <attr name='sym' type='string'/>\n"
              "    <attr name='price' type='double'/>\n"
              "  </schema>\n"
              "  <schema name='Wide'>\n"                                       /* 6 */
              "    <attr name='sym' type='string'/>\n"
              "    <attr name='price' type='int'/>\n"
              "    <attr name='extra' type='bool'/>\n"
              "  </schema>\n"
              "  <operator name='src' kind='Beacon'>\n"                        /* 11 */
              "    <output stream='S' schema='Wide'/>\n"
              "    <param name='count'>1</param>\n"
              "    <set attr='sym'>\"s\"</set>\n"
              "  </operator>\n"
              "  <operator name='f' kind='Functor'>\n"                         /* 16 */
              "    <input stream='S'/>\n"
              "    <output stream='F' schema='Trade'/>\n"
              "    <set attr='size'>price</set>\n"                             /* 19 */
              "    <set attr='sym'>1</set>\n"                                  /* 20 */
              "    <set attr='sym'>sym</set>\n"                                /* 21 */
              "  </operator>\n"
              "</graph>\n",
              6,
              "g.xml:11: error: Beacon operator 'src' must set output attribute 'price'\n"
              "g.xml:11: error: Beacon operator 'src' must set output attribute 'extra'\n"
              "g.xml:16: error: output attribute 'price' of operator 'f' is not set, and cannot be forwarded: it is "
              "double in output schema 'Trade' but int in input schema 'Wide'\n"
              "g.xml:19: error: operator 'f' sets 'size', which output schema 'Trade' does not have\n"
              "g.xml:20: error: operator 'f' sets 'sym' to an int, but 'sym' is string in schema 'Trade'\n"
              "g.xml:21: error: operator 'f' sets 'sym' twice\n");
}
END_TEST

START_TEST(forwarded_attributes_need_no_set) {
  Graph *g = check_ok(HEAD
                      "  <operator name='f' kind='Functor'>\n"
                      "    <input stream='Trades'/>\n"
                      "    <output stream='F' schema='Bar'/>\n"
                      "    <set attr='avg'>price</set>\n"
                      "    <set attr='n'>vol</set>\n"
                      "  </operator>\n"
                      "  <operator name='d' kind='Dedup'>\n"
                      "    <input stream='F'/>\n"
                      "    <output stream='D' schema='Bar'/>\n"
                      "    <param name='partitionBy'>sym n</param>\n"
                      "  </operator>\n" TAIL);
  ck_assert_int_eq(graph_find_op(g, "f")->nsets, 2);
}
END_TEST

/* ---- the kinds, declared once in kinds.def ---- */

/* Every kind's name reads back to it, graph.xsd's kind enumeration lists exactly those names in
 * the same order, and the runtime implementation kinds.def names for it says it is that kind. */
START_TEST(kinds_are_declared_once) {
  FILE *f = fopen(XSD, "r");
  ck_assert_ptr_nonnull(f);
  char line[512];
  bool in_kind = false;
  int k = 1;
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, "<xs:simpleType name=\"kind\">")) in_kind = true;
    else if (in_kind && strstr(line, "</xs:simpleType>")) break;
    const char *v = in_kind ? strstr(line, "<xs:enumeration value=\"") : NULL;
    if (!v) continue;
    v += strlen("<xs:enumeration value=\"");
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(v, "\""), v);
    ck_assert_msg(k < KIND_COUNT_, "graph.xsd lists kind '%s' that kinds.def does not", name);
    ck_assert_str_eq(name, kind_name((OpKind)k));
    k++;
  }
  fclose(f);
  ck_assert_int_eq(k, KIND_COUNT_);
  for (k = 1; k < KIND_COUNT_; k++) {
    ck_assert_int_eq(kind_from_name(kind_name((OpKind)k)), k);
    ck_assert_str_eq(kind_info((OpKind)k)->name, kind_name((OpKind)k));
    const OpKindImpl *impl = rt_kind_impl((OpKind)k);
    ck_assert_ptr_nonnull(impl);
    ck_assert_int_eq(impl->kind, k);
  }
  ck_assert_int_eq(kind_from_name("Nothing"), KIND_UNKNOWN);
  ck_assert_str_eq(kind_name(KIND_UNKNOWN), "unknown");
  ck_assert_ptr_null(rt_kind_impl(KIND_UNKNOWN));
}
END_TEST

static Suite *check_suite(void) {
  Suite *s = suite_create("check");
  UNIT_ADD(s, link_producers_and_consumers, setup, teardown);
  UNIT_ADD(s, numbers_in_parameters, setup, teardown);
  UNIT_ADD(s, kinds_are_declared_once, setup, teardown);
  UNIT_ADD(s, topological_order_of_a_diamond, setup, teardown);
  UNIT_ADD(s, consumer_listed_once_per_port, setup, teardown);
  UNIT_ADD(s, example_graphs_check, setup, teardown);
  UNIT_ADD(s, expressions_are_attached, setup, teardown);
  UNIT_ADD(s, aggregate_keys_and_aggregates, setup, teardown);
  UNIT_ADD(s, namemap_first_of_equal_names_wins, setup, teardown);
  UNIT_ADD(s, lookups_follow_array_changes, setup, teardown);
  UNIT_ADD(s, duplicates_point_at_the_first, setup, teardown);
  UNIT_ADD(s, references_all_reported, setup, teardown);
  UNIT_ADD(s, hosts, setup, teardown);
  UNIT_ADD(s, host_names_wait_for_placement_without_hosts, setup, teardown);
  UNIT_ADD(s, host_pins_against_the_hosts_of_the_run, setup, teardown);
  UNIT_ADD(s, colocated_operators_pinned_apart, setup, teardown);
  UNIT_ADD(s, replicas_keep_their_colocate_tag_apart, setup, teardown);
  UNIT_ADD(s, sinks_writing_one_file, setup, teardown);
  UNIT_ADD(s, files_naming_directories, setup, teardown);
  UNIT_ADD(s, standard_input_and_output, setup, teardown);
  UNIT_ADD(s, standard_input_once, setup, teardown);
  UNIT_ADD(s, roll_values, setup, teardown);
  UNIT_ADD(s, ports_per_kind, setup, teardown);
  UNIT_ADD(s, children_per_kind, setup, teardown);
  UNIT_ADD(s, custom_ports_within_the_operator_interface, setup, teardown);
  UNIT_ADD(s, schemas_across_ports, setup, teardown);
  UNIT_ADD(s, custom_model, setup, teardown);
  UNIT_ADD(s, parameters_unknown_missing_twice, setup, teardown);
  UNIT_ADD(s, parameters_misspelt_suggest, setup, teardown);
  UNIT_ADD(s, kind_unknown_suggest, setup, teardown);
  UNIT_ADD(s, parameter_values, setup, teardown);
  UNIT_ADD(s, line_breaks_in_values_stay_on_one_line, setup, teardown);
  UNIT_ADD(s, time_window_values, setup, teardown);
  UNIT_ADD(s, event_time_streams_and_ticks, setup, teardown);
  UNIT_ADD(s, event_time_errors, setup, teardown);
  UNIT_ADD(s, time_ordered_inputs, setup, teardown);
  UNIT_ADD(s, structure_errors_stop_before_expressions, setup, teardown);
  UNIT_ADD(s, cycle_of_three, setup, teardown);
  UNIT_ADD(s, every_cycle_reported_once, setup, teardown);
  UNIT_ADD(s, cycle_below_shared_path_reported_once, setup, teardown);
  UNIT_ADD(s, expression_errors_all_reported, setup, teardown);
  UNIT_ADD(s, expression_syntax_errors, setup, teardown);
  UNIT_ADD(s, expression_on_the_next_line, setup, teardown);
  UNIT_ADD(s, aggregate_rules, setup, teardown);
  UNIT_ADD(s, state_rules, setup, teardown);
  UNIT_ADD(s, flatmap_count_and_index, setup, teardown);
  UNIT_ADD(s, sets_and_forwarding_messages, setup, teardown);
  UNIT_ADD(s, forwarded_attributes_need_no_set, setup, teardown);
  return s;
}

int main(void) {
  return unit_run(check_suite());
}
