/* test_parse.c: reading graph files (xform/parse.c): the Graph built from a document (every field
 * of every element, lines, trimmed texts), safety (no DOCTYPE, no entity, no network), and the
 * exact diagnostics for files that are not XML, not well-formed or not valid against graph.xsd.
 *
 * Documents are strings parsed with graph_parse_memory against the source tree's graph.xsd; the
 * diagnostics go to a memory stream and are compared whole. Line numbers in the texts below are
 * given in the trailing comments. */
#include "check_helper.h"
#include "sf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define NS "urn:streamfission:graph:1"

static UnitDiags mem; /* the diagnostics of the test being run */

static void setup(void) {
  unit_diags_open(&mem, "g.xml", DIAG_AS_REPORTED);
}

static void teardown(void) {
  unit_diags_close(&mem);
}

static const char *diags(void) {
  return unit_diags_text(&mem);
}

static Graph *parse_len(const char *text, size_t len) {
  return graph_parse_memory(text, len, "g.xml", XSD, &mem.diag);
}

static Graph *parse(const char *text) {
  return parse_len(text, strlen(text));
}

/* Parses a document that must be accepted without a message. */
static Graph *parse_ok(const char *text) {
  Graph *g = parse(text);
  ck_assert_msg(g != NULL, "parse failed: %s", diags());
  ck_assert_str_eq(diags(), "");
  ck_assert_int_eq(mem.diag.nerrors, 0);
  return g;
}

/* Parses a document that must be refused with exactly `expected` on the diagnostics. */
static void parse_fails(const char *text, const char *expected) {
  Graph *g = parse(text);
  ck_assert_ptr_null(g);
  ck_assert_str_eq(diags(), expected);
  ck_assert_int_gt(mem.diag.nerrors, 0);
}

/* A small valid graph used by the refusal tests, with something in front of it. */
#define SMALL_GRAPH                                                                        \
  "<graph xmlns='" NS "' name='g'>\n"                                                      \
  "  <schema name='T'><attr name='x' type='string'/></schema>\n"                           \
  "  <operator name='src' kind='Beacon'>\n"                                                \
  "    <output stream='S' schema='T'/>\n"                                                  \
  "    <param name='count'>1</param>\n"                                                    \
  "    <set attr='x'>\"&e;\"</set>\n"                                                      \
  "  </operator>\n"                                                                        \
  "</graph>\n"

/* ---- the Graph built from a document ---- */

static const char full_graph[] =
    "<?xml version='1.0' encoding='UTF-8'?>\n"                                   /* 1 */
    "<graph xmlns='" NS "' name='vwap'>\n"                                       /* 2 */
    "  <schema name='Trade'>\n"                                                  /* 3 */
    "    <attr name='sym' type='string'/>\n"                                     /* 4 */
    "    <attr name='price' type='double'/>\n"                                   /* 5 */
    "    <attr name='vol' type='int'/>\n"                                        /* 6 */
    "    <attr name='ok' type='bool'/>\n"                                        /* 7 */
    "  </schema>\n"                                                              /* 8 */
    "  <schema name='Bar'>\n"                                                    /* 9 */
    "    <attr name='sym' type='string'/>\n"                                     /* 10 */
    "    <attr name='n' type='int'/>\n"                                          /* 11 */
    "  </schema>\n"                                                              /* 12 */
    "  <host name='h0' address='127.0.0.1:7470'/>\n"                             /* 13 */
    "  <host name='h1' address='[::1]:7471'/>\n"                                 /* 14 */
    "  <operator name='trades' kind='Beacon' host='h1'>\n"                       /* 15 */
    "    <output stream='Trades' schema='Trade'/>\n"                             /* 16 */
    "    <param name='count'>  100\n"                                            /* 17 */
    "    </param>\n"                                                             /* 18 */
    "    <param name='rate'>\n"                                                  /* 19 */
    "\n"                                                                         /* 20 */
    "      50.5   </param>\n"                                                    /* 21 */
    "    <set attr='sym'>\"S\" + str(seq % 5)</set>\n"                           /* 22 */
    "    <set attr='price'>100.0 + double(seq)</set>\n"                          /* 23 */
    "    <set attr='vol'>\n"                                                     /* 24 */
    "      seq &lt; 10 ? 1 : 2\n"                                                /* 25 */
    "    </set>\n"                                                               /* 26 */
    "    <set attr='ok'>true</set>\n"                                            /* 27 */
    "  </operator>\n"                                                            /* 28 */
    "  <operator name='run' kind='Functor' parallel='no' width='3' colocate='c1'>\n" /* 29 */
    "    <input stream='Trades'/>\n"                                             /* 30 */
    "    <output stream='Ran' schema='Trade'/>\n"                                /* 31 */
    "    <param name='partitionBy'>sym</param>\n"                                /* 32 */
    "    <set attr='vol'>total</set>\n"                                          /* 33 */
    "    <state name='total' type='int' init='0'>total + vol</state>\n"          /* 34 */
    "    <state name='mean' type='double' init='0.0'>\n"                         /* 35 */
    "      mean * 0.5 + price * 0.5</state>\n"                                   /* 36 */
    "  </operator>\n"                                                            /* 37 */
    "  <operator name='mine' kind='Custom'>\n"                                   /* 38 */
    "    <input stream='Trades Ran'/>\n"                                         /* 39 */
    "    <input stream='Ran'/>\n"                                                /* 40 */
    "    <output stream='Mine' schema='Trade'/>\n"                               /* 41 */
    "    <output stream='Mine2' schema='Bar'/>\n"                                /* 42 */
    "    <param name='anything'> goes </param>\n"                                /* 43 */
    "    <model state='partitioned' keys='sym vol' selectivity='atmostone'\n"    /* 44 */
    "           forwards='sym price' punct='generates'/>\n"                      /* 45 */
    "    <library path='lib/libmine.so' symbol='mine_op'/>\n"                    /* 46 */
    "  </operator>\n"                                                            /* 47 */
    "  <operator name='out' kind='FileSink'>\n"                                  /* 48 */
    "    <input stream='Mine'/>\n"                                               /* 49 */
    "    <param name='file'>out.csv</param>\n"                                   /* 50 */
    "  </operator>\n"                                                            /* 51 */
    "</graph>\n";                                                                /* 52 */

START_TEST(graph_schemas_and_hosts) {
  Graph *g = parse_ok(full_graph);
  ck_assert_str_eq(g->name, "vwap");
  ck_assert_str_eq(g->file, "g.xml");
  ck_assert_int_eq(g->nschemas, 2);
  Schema *t = g->schemas[0], *b = g->schemas[1];
  ck_assert_str_eq(t->name, "Trade");
  ck_assert_int_eq(t->line, 3);
  ck_assert_int_eq(t->nattrs, 4);
  const char *names[] = {"sym", "price", "vol", "ok"};
  Type types[] = {TYPE_STRING, TYPE_DOUBLE, TYPE_INT, TYPE_BOOL};
  for (int i = 0; i < 4; i++) {
    ck_assert_str_eq(t->attrs[i].name, names[i]);
    ck_assert_int_eq(t->attrs[i].type, types[i]);
    ck_assert_int_eq(t->attrs[i].line, 4 + i);
  }
  ck_assert_str_eq(b->name, "Bar");
  ck_assert_int_eq(b->line, 9);
  ck_assert_int_eq(b->nattrs, 2);
  ck_assert_str_eq(b->attrs[1].name, "n");
  ck_assert_ptr_eq(graph_find_schema(g, "Bar"), b);
  ck_assert_int_eq(schema_find_attr(t, "vol"), 2);

  ck_assert_int_eq(g->nhosts, 2);
  ck_assert_str_eq(g->hosts[0]->name, "h0");
  ck_assert_str_eq(g->hosts[0]->address, "127.0.0.1:7470");
  ck_assert_int_eq(g->hosts[0]->line, 13);
  ck_assert_str_eq(g->hosts[1]->name, "h1");
  ck_assert_str_eq(g->hosts[1]->address, "[::1]:7471");
  ck_assert_int_eq(g->hosts[1]->line, 14);
  ck_assert_int_eq(g->nops, 4);
  ck_assert_int_eq(g->streams.n, 0); /* linking is graph_link's job */
  ck_assert_ptr_null(g->order);
  ck_assert(!g->rewritten);
  graph_free(g);
}
END_TEST

START_TEST(graph_operator_attributes) {
  Graph *g = parse_ok(full_graph);
  Op *trades = g->ops[0], *run = g->ops[1], *mine = g->ops[2], *out = g->ops[3];
  ck_assert_str_eq(trades->name, "trades");
  ck_assert_str_eq(trades->kind_text, "Beacon");
  ck_assert_int_eq(trades->kind, KIND_BEACON);
  ck_assert_int_eq(trades->line, 15);
  ck_assert_int_eq(trades->index, 0);
  ck_assert(!trades->parallel_no);
  ck_assert_int_eq(trades->width, 0);
  ck_assert_str_eq(trades->host, "h1");
  ck_assert_ptr_null(trades->colocate);
  ck_assert_ptr_null(trades->origin);
  ck_assert_ptr_null(trades->region);
  ck_assert_int_eq(trades->channel, -1);
  ck_assert_int_eq(trades->ninputs, 0);
  ck_assert_int_eq(trades->noutputs, 1);
  ck_assert_str_eq(trades->outputs[0].stream, "Trades");
  ck_assert_str_eq(trades->outputs[0].schema, "Trade");
  ck_assert_int_eq(trades->outputs[0].line, 16);
  ck_assert_ptr_null(trades->outputs[0].resolved);
  ck_assert(!trades->model.declared);

  ck_assert_str_eq(run->name, "run");
  ck_assert_int_eq(run->kind, KIND_FUNCTOR);
  ck_assert_int_eq(run->line, 29);
  ck_assert(run->parallel_no);
  ck_assert_int_eq(run->width, 3);
  ck_assert_ptr_null(run->host);
  ck_assert_str_eq(run->colocate, "c1");
  ck_assert_int_eq(run->index, 1);

  ck_assert_int_eq(mine->kind, KIND_CUSTOM);
  ck_assert_str_eq(mine->lib_path, "lib/libmine.so");
  ck_assert_str_eq(mine->lib_symbol, "mine_op");
  ck_assert_int_eq(mine->lib_line, 46);
  ck_assert_int_eq(out->kind, KIND_FILESINK);
  ck_assert_int_eq(out->noutputs, 0);
  ck_assert_ptr_null(out->lib_path);
  ck_assert_ptr_eq(graph_find_op(g, "out"), out);
  ck_assert_ptr_null(graph_find_op(g, "nope"));
  graph_free(g);
}
END_TEST

START_TEST(graph_params_are_trimmed) {
  Graph *g = parse_ok(full_graph);
  Op *trades = g->ops[0];
  ck_assert_int_eq(trades->nparams, 2);
  ck_assert_str_eq(trades->params[0].name, "count");
  ck_assert_str_eq(trades->params[0].text, "100");
  ck_assert_int_eq(trades->params[0].line, 17);
  /* text starting after blank lines is reported where it starts */
  ck_assert_str_eq(trades->params[1].name, "rate");
  ck_assert_str_eq(trades->params[1].text, "50.5");
  ck_assert_int_eq(trades->params[1].line, 21);
  ck_assert_str_eq(op_param(trades, "rate"), "50.5");
  ck_assert_ptr_eq(op_find_param(trades, "count"), &trades->params[0]);
  ck_assert_ptr_null(op_param(trades, "file"));
  ck_assert_str_eq(g->ops[2]->params[0].text, "goes");
  ck_assert_str_eq(g->ops[1]->params[0].text, "sym");
  ck_assert_int_eq(g->ops[1]->params[0].line, 32);
  graph_free(g);
}
END_TEST

START_TEST(graph_sets_keep_their_text) {
  Graph *g = parse_ok(full_graph);
  Op *trades = g->ops[0];
  ck_assert_int_eq(trades->nsets, 4);
  ck_assert_str_eq(trades->sets[0].attr, "sym");
  ck_assert_str_eq(trades->sets[0].text, "\"S\" + str(seq % 5)");
  ck_assert_int_eq(trades->sets[0].line, 22);
  ck_assert_int_eq(trades->sets[0].slot, -1);
  ck_assert_ptr_null(trades->sets[0].expr);
  ck_assert_str_eq(trades->sets[1].text, "100.0 + double(seq)");
  /* entities are decoded and an expression on the next line is located there */
  ck_assert_str_eq(trades->sets[2].attr, "vol");
  ck_assert_str_eq(trades->sets[2].text, "seq < 10 ? 1 : 2");
  ck_assert_int_eq(trades->sets[2].line, 25);
  ck_assert_str_eq(trades->sets[3].text, "true");
  ck_assert_int_eq(trades->sets[3].line, 27);
  graph_free(g);
}
END_TEST

START_TEST(graph_states) {
  Graph *g = parse_ok(full_graph);
  Op *run = g->ops[1];
  ck_assert_int_eq(run->nsets, 1);
  ck_assert_str_eq(run->sets[0].text, "total");
  ck_assert_int_eq(run->nstates, 2);
  StateVar *total = run->states[0], *mean = run->states[1];
  ck_assert_str_eq(total->name, "total");
  ck_assert_int_eq(total->type, TYPE_INT);
  ck_assert_str_eq(total->init_text, "0");
  ck_assert_str_eq(total->text, "total + vol");
  ck_assert_int_eq(total->line, 34);
  ck_assert_ptr_null(total->init);
  ck_assert_ptr_null(total->update);
  ck_assert_str_eq(mean->name, "mean");
  ck_assert_int_eq(mean->type, TYPE_DOUBLE);
  ck_assert_str_eq(mean->init_text, "0.0");
  ck_assert_str_eq(mean->text, "mean * 0.5 + price * 0.5");
  ck_assert_int_eq(mean->line, 36);
  graph_free(g);
}
END_TEST

START_TEST(graph_inputs_with_several_streams) {
  Graph *g = parse_ok(full_graph);
  Op *mine = g->ops[2];
  ck_assert_int_eq(mine->ninputs, 2);
  ck_assert_int_eq(mine->inputs[0].nstreams, 2);
  ck_assert_str_eq(mine->inputs[0].names[0], "Trades");
  ck_assert_str_eq(mine->inputs[0].names[1], "Ran");
  ck_assert_int_eq(mine->inputs[0].line, 39);
  ck_assert_int_eq(mine->inputs[1].nstreams, 1);
  ck_assert_str_eq(mine->inputs[1].names[0], "Ran");
  ck_assert_int_eq(mine->inputs[1].line, 40);
  ck_assert_int_eq(mine->noutputs, 2);
  ck_assert_str_eq(mine->outputs[1].stream, "Mine2");
  ck_assert_str_eq(mine->outputs[1].schema, "Bar");
  ck_assert_int_eq(mine->outputs[1].line, 42);
  graph_free(g);
}
END_TEST

START_TEST(graph_model_fields) {
  Graph *g = parse_ok(full_graph);
  Model *m = &g->ops[2]->model;
  ck_assert(m->declared);
  ck_assert_int_eq(m->line, 45); /* libxml2 numbers an element by the end of its start tag */
  ck_assert_int_eq(m->state, STATE_PARTITIONED);
  ck_assert_int_eq(m->nkeys, 2);
  ck_assert_str_eq(m->keys[0], "sym");
  ck_assert_str_eq(m->keys[1], "vol");
  ck_assert_int_eq(m->sel, SEL_ATMOSTONE);
  ck_assert(!m->forwards_all);
  ck_assert_int_eq(m->nforwards, 2);
  ck_assert_str_eq(m->forwards[0], "sym");
  ck_assert_str_eq(m->forwards[1], "price");
  ck_assert_int_eq(m->punct, PUNCT_GENERATES);
  graph_free(g);
}
END_TEST

START_TEST(model_defaults_and_forward_all) {
  Graph *g = parse_ok("<graph xmlns='" NS "' name='g'>\n"
                      "  <schema name='T'><attr name='x' type='int'/></schema>\n"
                      "  <operator name='a' kind='Custom'>\n"
                      "    <output stream='A' schema='T'/>\n"
                      "    <model/>\n"
                      "    <library path='a.so' symbol='a'/>\n"
                      "  </operator>\n"
                      "  <operator name='b' kind='Custom'>\n"
                      "    <input stream='A'/>\n"
                      "    <model state='none' selectivity='one' forwards='*' punct='consumes'/>\n"
                      "    <library path='b.so' symbol='b'/>\n"
                      "  </operator>\n"
                      "</graph>\n");
  Model *a = &g->ops[0]->model, *b = &g->ops[1]->model;
  ck_assert(a->declared);
  ck_assert_int_eq(a->line, 5);
  ck_assert_int_eq(a->state, STATE_UNKNOWN);
  ck_assert_int_eq(a->sel, SEL_MANY);
  ck_assert_int_eq(a->nkeys, 0);
  ck_assert_int_eq(a->nforwards, 0);
  ck_assert(!a->forwards_all);
  ck_assert_int_eq(a->punct, PUNCT_NONE);
  ck_assert_int_eq(b->state, STATE_NONE);
  ck_assert_int_eq(b->sel, SEL_ONE);
  ck_assert(b->forwards_all);
  ck_assert_int_eq(b->nforwards, 0);
  ck_assert_int_eq(b->punct, PUNCT_CONSUMES);
  graph_free(g);
}
END_TEST

START_TEST(rewritten_graph_attributes) {
  Graph *g = parse_ok("<graph xmlns='" NS "' name='g'>\n"
                      "  <schema name='T'><attr name='x' type='int'/></schema>\n"
                      "  <operator name='f[1]' kind='Functor' origin='f' region='r1' channel='1'>\n"
                      "    <input stream='r1.s1'/>\n"
                      "    <output stream='F.1' schema='T'/>\n"
                      "  </operator>\n"
                      "</graph>\n");
  Op *op = g->ops[0];
  ck_assert_str_eq(op->name, "f[1]");
  ck_assert_str_eq(op->origin, "f");
  ck_assert_str_eq(op->region, "r1");
  ck_assert_int_eq(op->channel, 1);
  ck_assert_str_eq(op->inputs[0].names[0], "r1.s1");
  ck_assert(g->rewritten);
  graph_free(g);
}
END_TEST

START_TEST(cdata_comments_and_character_references) {
  Graph *g = parse_ok("<graph xmlns='" NS "' name='g'>\n"
                      "  <schema name='T'><attr name='x' type='string'/></schema>\n"
                      "  <!-- a comment -->\n"
                      "  <operator name='src' kind='Beacon'>\n"
                      "    <output stream='S' schema='T'/>\n"
                      "    <param name='count'>1<!-- inside --></param>\n"
                      "    <set attr='x'><![CDATA[seq < 1 && true ? \"<a>\" : \"b\"]]></set>\n"
                      "    <?ignored processing instruction?>\n"
                      "  </operator>\n"
                      "</graph>\n");
  Op *op = g->ops[0];
  ck_assert_str_eq(op->params[0].text, "1");
  ck_assert_str_eq(op->sets[0].text, "seq < 1 && true ? \"<a>\" : \"b\"");
  graph_free(g);
  teardown();
  setup();
  g = parse_ok("<graph xmlns='" NS "' name='g'>\n"
               "  <schema name='T'><attr name='x' type='string'/></schema>\n"
               "  <operator name='src' kind='Beacon'>\n"
               "    <output stream='S' schema='T'/>\n"
               "    <param name='count'>&#49;&#x30;</param>\n"
               "    <set attr='x'>&quot;caf&#xe9;&quot; + &apos;&apos;</set>\n"
               "  </operator>\n"
               "</graph>\n");
  ck_assert_str_eq(g->ops[0]->params[0].text, "10");
  ck_assert_str_eq(g->ops[0]->sets[0].text, "\"caf\xc3\xa9\" + ''");
  graph_free(g);
}
END_TEST

START_TEST(width_out_of_range) {
  /* the schema allows any positive integer; the library takes up to 1024 channels */
  parse_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <schema name='T'><attr name='x' type='int'/></schema>\n"
              "  <operator name='a' kind='Functor' width='5000'>\n"
              "    <input stream='S'/>\n"
              "  </operator>\n"
              "</graph>\n",
              "g.xml:3: error: width of operator 'a' must be between 1 and 1024, got '5000'\n");
}
END_TEST

/* ---- safety ---- */

START_TEST(doctype_is_refused) {
  parse_fails("<?xml version='1.0'?>\n"
              "<!DOCTYPE graph>\n" SMALL_GRAPH,
              "g.xml:2: error: document type declarations (DOCTYPE) are not allowed in a graph\n");
}
END_TEST

START_TEST(billion_laughs_is_refused) {
  parse_fails("<?xml version='1.0'?>\n"
              "<!DOCTYPE graph [\n"
              "  <!ENTITY a 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'>\n"
              "  <!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'>\n"
              "  <!ENTITY c '&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;'>\n"
              "  <!ENTITY d '&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;'>\n"
              "  <!ENTITY e '&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;'>\n"
              "]>\n" SMALL_GRAPH,
              "g.xml:2: error: document type declarations (DOCTYPE) are not allowed in a graph\n");
}
END_TEST

START_TEST(external_entity_is_refused) {
  parse_fails("<?xml version='1.0'?>\n"
              "<!DOCTYPE graph [ <!ENTITY e SYSTEM 'file:///etc/passwd'> ]>\n" SMALL_GRAPH,
              "g.xml:2: error: document type declarations (DOCTYPE) are not allowed in a graph\n");
}
END_TEST

START_TEST(external_dtd_is_refused) {
  parse_fails("<?xml version='1.0'?>\n"
              "<!DOCTYPE graph SYSTEM 'http://127.0.0.1:1/graph.dtd'>\n" SMALL_GRAPH,
              "g.xml:2: error: document type declarations (DOCTYPE) are not allowed in a graph\n");
}
END_TEST

START_TEST(undeclared_entity_is_refused) {
  parse_fails(SMALL_GRAPH,
              "g.xml:6:20: error: unknown entity '&e;' (a graph may use only &lt; &gt; &amp; &quot; &apos; and "
              "character references)\n");
}
END_TEST

START_TEST(refusal_leaves_the_parser_usable) {
  /* after a refused document, the next one parses normally, with its own diagnostics */
  ck_assert_ptr_null(parse("<!DOCTYPE graph [ <!ENTITY e 'x'> ]>\n" SMALL_GRAPH));
  teardown();
  setup();
  Graph *g = parse_ok("<graph xmlns='" NS "' name='again'>\n"
                      "  <operator name='a' kind='Custom'><library path='a.so' symbol='a'/></operator>\n"
                      "</graph>\n");
  ck_assert_str_eq(g->name, "again");
  graph_free(g);
}
END_TEST

/* ---- not XML, not well-formed ---- */

START_TEST(empty_file) {
  parse_fails("", "g.xml: error: file is empty\n");
}
END_TEST

START_TEST(white_space_only) {
  parse_fails(" \n\t\n", "g.xml:3: error: the file has no root element (expected <graph>)\n");
}
END_TEST

START_TEST(plain_text) {
  parse_fails("hello, graph\n", "g.xml:1:1: error: not an XML document: expected '<' to start an element\n");
}
END_TEST

START_TEST(binary_bytes) {
  static const char bytes[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
  Graph *g = parse_len(bytes, sizeof bytes - 1);
  ck_assert_ptr_null(g);
  ck_assert_str_eq(diags(), "g.xml:3: error: binary data (a NUL byte) where XML text was expected\n");
}
END_TEST

START_TEST(malformed_reports_the_first_problem_only) {
  /* libxml2 goes on to complain about the start tag and the end of the document: one cause */
  parse_fails("<graph xmlns='" NS "' name=g>\n"
              "</graph>\n",
              "g.xml:1:47: error: attribute value must be quoted with '\"' or \"'\"\n");
}
END_TEST

START_TEST(mismatched_and_unclosed_tags) {
  parse_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <operator name='a' kind='Custom'>\n"
              "</graph>\n",
              "g.xml:3: error: closing tag '</graph>' does not match '<operator>' opened on line 2\n");
  teardown();
  setup();
  parse_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <operator name='a' kind='Custom'/>\n",
              "g.xml:3: error: '<graph>' opened on line 1 is not closed before the end of the file\n");
}
END_TEST

/* An unended closing tag: libxml2 names no element and no line for it. */
START_TEST(unended_closing_tag) {
  parse_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <operator name='a' kind='Custom'/>\n"
              "</graph\n",
              "g.xml:4: error: a closing tag is not ended by '>'\n");
}
END_TEST

/* Lines past 65,535 (libxml2 keeps them in 16 bits unless asked not to): an element's line, the
 * line and column of a text, a schema error and a well-formedness error there. */
START_TEST(lines_past_65535) {
  enum { PAD = 70000 };
  const char *head = "<graph xmlns='" NS "' name='g'>\n"                           /* 1 */
                     "  <schema name='T'><attr name='x' type='int'/></schema>\n"; /* 2, then PAD blank lines */
  const char *body = "  <operator name='src' kind='Beacon'>\n"                     /* PAD + 3 */
                     "    <output stream='S' schema='T'/>\n"                       /* PAD + 4 */
                     "    <param name='count'>1</param>\n"                         /* PAD + 5 */
                     "    <set attr='x'>seq</set>%s\n"                             /* PAD + 6 */
                     "  </operator>\n"                                             /* PAD + 7 */
                     "</graph>\n";
  for (int round = 0; round < 3; round++) {
    size_t len = strlen(head) + PAD + strlen(body) + 16;
    char *text = malloc(len), *p = text;
    p += sprintf(p, "%s", head);
    memset(p, '\n', PAD);
    p += PAD;
    sprintf(p, body, round == 0 ? "" : round == 1 ? "<bogus/>" : "<bogus>");
    if (round == 0) {
      Graph *g = parse_ok(text);
      ck_assert_int_eq(g->ops[0]->line, PAD + 3);
      ck_assert_int_eq(g->ops[0]->sets[0].line, PAD + 6);
      ck_assert_int_eq(g->ops[0]->sets[0].origin.line, PAD + 6);
      ck_assert_int_eq(g->ops[0]->sets[0].origin.col, 19);
      graph_free(g);
    } else if (round == 1) {
      parse_fails(text, "g.xml:70006: error: unknown element <bogus> inside operator 'src'\n");
    } else {
      parse_fails(text, "g.xml:70007: error: closing tag '</operator>' does not match '<bogus>' opened on line 70006\n");
    }
    free(text);
    teardown();
    setup();
  }
}
END_TEST

START_TEST(unescaped_markup_in_expressions) {
  parse_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <operator name='a' kind='Filter'><param name='where'>x < 1</param></operator>\n"
              "</graph>\n",
              "g.xml:2:58: error: '<' does not start an element (write '&lt;' for a literal '<')\n");
  teardown();
  setup();
  parse_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <operator name='a' kind='Filter'><param name='where'>a && b</param></operator>\n"
              "</graph>\n",
              "g.xml:2:58: error: '&' does not start an entity reference (write '&amp;' for a literal '&')\n");
}
END_TEST

START_TEST(content_after_the_root) {
  parse_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <operator name='a' kind='Custom'><library path='a.so' symbol='a'/></operator>\n"
              "</graph>\n"
              "<graph/>\n",
              "g.xml:4:1: error: unexpected content after the end of the root element\n");
}
END_TEST

START_TEST(invalid_utf8) {
  parse_fails("<graph xmlns='" NS "' name='g\xff'/>\n",
              "g.xml:1:49: error: the file is not valid UTF-8 (bytes 0xFF 0x27 0x2F 0x3E)\n");
}
END_TEST

START_TEST(wrong_root_element) {
  parse_fails("<?xml version='1.0'?>\n<graphs xmlns='" NS "' name='g'/>\n",
              "g.xml:2: error: the root element is <graphs>, not <graph xmlns=\"" NS "\">\n");
  teardown();
  setup();
  parse_fails("<graph name='g'/>\n",
              "g.xml:1: error: <graph> has no namespace (write <graph xmlns=\"" NS "\">)\n");
  teardown();
  setup();
  parse_fails("<g:graph xmlns:g='urn:other' name='g'/>\n",
              "g.xml:1: error: <graph> is in namespace 'urn:other', not '" NS "'\n");
}
END_TEST

/* ---- not valid against graph.xsd: every violation is reported ---- */

START_TEST(schema_violations_are_all_reported) {
  parse_fails("<graph xmlns='" NS "' name='g'>\n"                                    /* 1 */
              "  <schema name='T'>\n"                                               /* 2 */
              "    <attr name='x' type='float'/>\n"                                 /* 3 */
              "    <attr name='2x' type='int'/>\n"                                  /* 4 */
              "  </schema>\n"                                                       /* 5 */
              "  <host name='h' address='nowhere'/>\n"                              /* 6 */
              "  <operator name='a' kind='Mapper' parallel='maybe' width='0'>\n"    /* 7 */
              "    <param>1</param>\n"                                              /* 8 */
              "    <colour/>\n"                                                     /* 9 */
              "  </operator>\n"                                                     /* 10 */
              "  <operator kind='Beacon' speed='3'/>\n"                             /* 11 */
              "</graph>\n",
              "g.xml:3: error: attribute 'type' of <attr> must be 'int', 'double', 'string' or 'bool', got 'float'\n"
              "g.xml:4: error: '2x' in attribute 'name' of <attr> is not a valid name (a letter or '_', then "
              "letters, digits or '_')\n"
              "g.xml:6: error: attribute 'address' of host 'h' must be HOST:PORT, got 'nowhere'\n"
              "g.xml:7: error: unknown operator kind 'Mapper'\n"
              "g.xml:7: error: attribute 'parallel' of operator 'a' must be 'auto' or 'no', got 'maybe'\n"
              "g.xml:7: error: attribute 'width' of operator 'a' must be a positive integer, got '0'\n"
              "g.xml:8: error: <param> needs attribute 'name'\n"
              "g.xml:9: error: unknown element <colour> inside operator 'a'\n"
              "g.xml:11: error: attribute 'speed' is not allowed on <operator>\n"
              "g.xml:11: error: <operator> needs attribute 'name'\n");
}
END_TEST

START_TEST(schema_structure_messages) {
  parse_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <schema name='T'><attr name='x' type='int'/></schema>\n"
              "  <schema name='U'/>\n"
              "  <schema name='T'><attr name='y' type='int'/><attr name='y' type='int'/></schema>\n"
              "</graph>\n",
              "g.xml:3: error: schema 'U' has no <attr>\n"
              "g.xml:4: error: attribute 'y' is declared twice in schema 'T' (first on line 4)\n"
              "g.xml:4: error: schema 'T' is declared twice (first on line 2)\n"
              "g.xml:1: error: the graph has no <operator>\n");
}
END_TEST

START_TEST(children_order_and_repeats) {
  parse_fails("<graph xmlns='" NS "' name='g'>\n"                    /* 1 */
              "  <operator name='a' kind='Custom'>\n"                 /* 2 */
              "    <library path='a.so' symbol='a'/>\n"               /* 3 */
              "    <model/>\n"                                        /* 4 */
              "  </operator>\n"                                       /* 5 */
              "  <operator name='b' kind='Custom'>\n"                 /* 6 */
              "    <model/>\n"                                        /* 7 */
              "    <library path='b.so' symbol='b'/>\n"               /* 8 */
              "    <model/>\n"                                        /* 9 */
              "    <library path='c.so' symbol='c'/>\n"               /* 10 */
              "    <model/>\n"                                        /* 11 */
              "  </operator>\n"                                       /* 12 */
              "  <operator name='c' kind='Custom' colour='red'/>\n"   /* 13 */
              "  <schema name='T'><attr name='x' type='int'/></schema>\n" /* 14 */
              "</graph>\n",
              /* the repetitions are reported in document order among the schema's messages */
              "g.xml:9: error: operator 'b' takes at most one <model>\n"
              "g.xml:10: error: operator 'b' takes at most one <library>\n"
              "g.xml:11: error: operator 'b' takes at most one <model>\n"
              "g.xml:13: error: attribute 'colour' is not allowed on operator 'c'\n"
              "g.xml:14: error: schema 'T' is out of order inside <graph>: its children come in the order "
              "<schema>, <host>, <operator>\n");
}
END_TEST

START_TEST(repeat_alone_is_refused) {
  /* a graph whose only fault is a second <library>: graph.xsd accepts it, the parser does not */
  parse_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <schema name='T'><attr name='x' type='int'/></schema>\n"
              "  <operator name='m' kind='Custom'>\n"
              "    <library path='a.so' symbol='a'/>\n"
              "    <output stream='S' schema='T'/>\n"
              "    <library path='a.so' symbol='a'/>\n"
              "  </operator>\n"
              "</graph>\n",
              "g.xml:6: error: operator 'm' takes at most one <library>\n");
}
END_TEST

/* The children of every operator in an order other than the table's
 * (docs/language.md, "Document structure"), sets and states interleaved, several on one line. */
static const char shuffled_graph[] =
    "<graph xmlns='" NS "' name='g'>\n"                                              /* 1 */
    "  <schema name='T'><attr name='k' type='int'/><attr name='v' type='int'/></schema>\n" /* 2 */
    "  <operator name='src' kind='Beacon'>\n"                                        /* 3 */
    "    <set attr='k'>seq % 3</set>\n"                                              /* 4 */
    "    <param name='count'>10</param>\n"                                           /* 5 */
    "    <set attr='v'>seq</set>\n"                                                  /* 6 */
    "    <output stream='S' schema='T'/>\n"                                          /* 7 */
    "  </operator>\n"                                                                /* 8 */
    "  <operator name='run' kind='Functor'>\n"                                       /* 9 */
    "    <state name='total' type='int' init='0'>total + v</state>\n"                /* 10 */
    "    <output stream='R' schema='T'/>\n"                                          /* 11 */
    "    <set attr='v'>total + n</set><state name='n' type='int' init='0'>n + 1</state><set attr='k'>k</set>\n" /* 12 */
    "    <param name='partitionBy'>k</param>\n"                                      /* 13 */
    "    <input stream='S'/>\n"                                                      /* 14 */
    "  </operator>\n"                                                                /* 15 */
    "  <operator name='mine' kind='Custom'>\n"                                       /* 16 */
    "    <library path='libmine.so' symbol='mine_op'/>\n"                            /* 17 */
    "    <output stream='M' schema='T'/>\n"                                          /* 18 */
    "    <model state='none' selectivity='one' forwards='*'/>\n"                     /* 19 */
    "    <input stream='R'/>\n"                                                      /* 20 */
    "  </operator>\n"                                                                /* 21 */
    "</graph>\n";

START_TEST(children_in_any_order) {
  Graph *g = parse_ok(shuffled_graph);
  Op *src = g->ops[0], *run = g->ops[1], *mine = g->ops[2];
  ck_assert_int_eq(src->noutputs, 1);
  ck_assert_str_eq(src->outputs[0].stream, "S");
  ck_assert_int_eq(src->outputs[0].line, 7);
  ck_assert_int_eq(src->nparams, 1);
  ck_assert_str_eq(src->params[0].text, "10");
  ck_assert_int_eq(src->nsets, 2);
  ck_assert_str_eq(src->sets[0].attr, "k");
  ck_assert_int_eq(src->sets[0].line, 4);
  ck_assert_str_eq(src->sets[1].attr, "v");
  ck_assert_int_eq(src->sets[1].line, 6);

  /* sets in their order, states in theirs, each text located on its own line and column */
  ck_assert_int_eq(run->ninputs, 1);
  ck_assert_str_eq(run->inputs[0].names[0], "S");
  ck_assert_int_eq(run->inputs[0].line, 14);
  ck_assert_int_eq(run->noutputs, 1);
  ck_assert_str_eq(run->outputs[0].stream, "R");
  ck_assert_int_eq(run->nparams, 1);
  ck_assert_str_eq(run->params[0].name, "partitionBy");
  ck_assert_int_eq(run->nsets, 2);
  ck_assert_str_eq(run->sets[0].attr, "v");
  ck_assert_str_eq(run->sets[0].text, "total + n");
  ck_assert_int_eq(run->sets[0].origin.line, 12);
  ck_assert_int_eq(run->sets[0].origin.col, 19);
  ck_assert_str_eq(run->sets[1].attr, "k");
  ck_assert_str_eq(run->sets[1].text, "k");
  ck_assert_int_eq(run->sets[1].origin.line, 12);
  ck_assert_int_eq(run->sets[1].origin.col, 97);
  ck_assert_int_eq(run->nstates, 2);
  ck_assert_str_eq(run->states[0]->name, "total");
  ck_assert_int_eq(run->states[0]->line, 10);
  ck_assert_str_eq(run->states[1]->name, "n");
  ck_assert_str_eq(run->states[1]->text, "n + 1");
  ck_assert_int_eq(run->states[1]->origin.line, 12);
  ck_assert_int_eq(run->states[1]->origin.col, 70);

  ck_assert_int_eq(mine->ninputs, 1);
  ck_assert_str_eq(mine->inputs[0].names[0], "R");
  ck_assert(mine->model.declared);
  ck_assert_int_eq(mine->model.line, 19);
  ck_assert(mine->model.forwards_all);
  ck_assert_str_eq(mine->lib_path, "libmine.so");
  ck_assert_str_eq(mine->lib_symbol, "mine_op");
  ck_assert_int_eq(mine->lib_line, 17);
  graph_free(g);
}
END_TEST

START_TEST(stray_text_and_empty_lists) {
  parse_fails("<graph xmlns='" NS "' name='g'>\n"
              "  <operator name='a' kind='FileSink'>\n"
              "    <input stream=''/>\n"
              "    <input stream='ok not-ok'/>\n"
              "  </operator>\n"
              "  oops, some text\n"
              "</graph>\n",
              "g.xml:3: error: attribute 'stream' of <input> is empty\n"
              "g.xml:4: error: 'not-ok' in attribute 'stream' of <input> is not a valid name (a letter or '_', "
              "then letters, digits or '_')\n"
              "g.xml:6: error: unexpected text 'oops, some text' inside <graph>\n");
}
END_TEST

/* ---- files and the schema path ---- */

START_TEST(parse_file_reads_an_example) {
  Diag d;
  diag_init(&d, SF_SOURCE_DIR "/graphs/vwap.xml", mem.file);
  Graph *g = graph_parse_file(SF_SOURCE_DIR "/graphs/vwap.xml", XSD, &d);
  diag_flush(&d, DIAG_AS_REPORTED);
  ck_assert_msg(g != NULL, "%s", diags());
  ck_assert_str_eq(g->name, "vwap");
  ck_assert_str_eq(g->file, SF_SOURCE_DIR "/graphs/vwap.xml");
  ck_assert_int_eq(d.nerrors, 0);
  graph_free(g);
}
END_TEST

START_TEST(parse_file_errors) {
  Diag d;
  diag_init(&d, "nope.xml", mem.file);
  ck_assert_ptr_null(graph_parse_file(SF_BINARY_DIR "/no/such/file.xml", XSD, &d));
  diag_flush(&d, DIAG_AS_REPORTED);
  diag_init(&d, "dir", mem.file);
  ck_assert_ptr_null(graph_parse_file(SF_SOURCE_DIR "/graphs", XSD, &d));
  diag_flush(&d, DIAG_AS_REPORTED);
  ck_assert_str_eq(diags(), "nope.xml: error: cannot open file: No such file or directory\n"
                            "dir: error: cannot read file: it is a directory\n");
}
END_TEST

START_TEST(schema_file_problems) {
  const char *doc = "<graph xmlns='" NS "' name='g'><operator name='a' kind='Custom'/></graph>";
  ck_assert_ptr_null(graph_parse_memory(doc, strlen(doc), "g.xml", NULL, &mem.diag));
  ck_assert_ptr_null(graph_parse_memory(doc, strlen(doc), "g.xml", SF_BINARY_DIR "/missing.xsd", &mem.diag));
  ck_assert_str_eq(diags(), "g.xml: error: cannot find graph.xsd (set SF_SCHEMA to its path)\n"
                            "g.xml: error: cannot load schema '" SF_BINARY_DIR "/missing.xsd'\n");
}
END_TEST

START_TEST(diagnostics_are_one_line_each) {
  diag_error(&mem.diag, 3, 0, "got '%s'", "two\nlines\r");
  diag_error(&mem.diag, 0, 0, "whole file");
  diag_error(&mem.diag, 4, 2, "with column");
  diag_note(&mem.diag, 5, "see '%s'", "a\nb");
  ck_assert_int_eq(mem.diag.nerrors, 3);
  ck_assert_str_eq(diags(), "g.xml:3: error: got 'two\\nlines\\r'\n"
                            "g.xml: error: whole file\n"
                            "g.xml:4:2: error: with column\n"
                            "g.xml:5: note: see 'a\\nb'\n");
}
END_TEST

/* Diagnostics are records until diag_flush: by place, sorted by line, then column, then the order
 * reported, each with its notes; as reported, in that order. Warnings count apart from errors. */
START_TEST(diagnostics_are_records_until_flushed) {
  diag_error(&mem.diag, 5, 0, "five");
  diag_note(&mem.diag, 9, "note of five");
  diag_note(&mem.diag, 0, "second note of five");
  diag_warning(&mem.diag, 2, 3, "two three");
  diag_error(&mem.diag, 2, 1, "two one");
  diag_error(&mem.diag, 0, 7, "whole file (a column without a line is dropped)");
  diag_warning(&mem.diag, 2, 3, "two three again");
  ck_assert_int_eq(mem.diag.nerrors, 3);
  ck_assert_int_eq(mem.diag.nwarnings, 2);
  ck_assert_int_eq(mem.diag.nrecs, 5);
  fflush(mem.file);
  ck_assert_int_eq(mem.len, 0); /* nothing printed before the flush */
  diag_flush(&mem.diag, DIAG_BY_PLACE);
  ck_assert_int_eq(mem.diag.nrecs, 0);
  diag_flush(&mem.diag, DIAG_BY_PLACE); /* nothing left to print */
  fflush(mem.file);
  ck_assert_str_eq(mem.text, "g.xml: error: whole file (a column without a line is dropped)\n"
                              "g.xml:2:1: error: two one\n"
                              "g.xml:2:3: warning: two three\n"
                              "g.xml:2:3: warning: two three again\n"
                              "g.xml:5: error: five\n"
                              "g.xml:9: note: note of five\n"
                              "g.xml: note: second note of five\n");
  ck_assert_int_eq(mem.diag.nerrors, 3);
  ck_assert_int_eq(mem.diag.nwarnings, 2);
  teardown();
  setup();
  diag_note(&mem.diag, 4, "a note with nothing before it stands alone");
  diag_warning(&mem.diag, 3, 0, "three");
  diag_note(&mem.diag, 1, "of three");
  diag_error(&mem.diag, 1, 0, "one");
  diag_flush(&mem.diag, DIAG_AS_REPORTED);
  fflush(mem.file);
  ck_assert_str_eq(mem.text, "g.xml:4: note: a note with nothing before it stands alone\n"
                              "g.xml:3: warning: three\n"
                              "g.xml:1: note: of three\n"
                              "g.xml:1: error: one\n");
}
END_TEST

/* A stream that counts the writes reaching it; unbuffered, like stderr. */
typedef struct WriteCount {
  int calls;    /* write calls */
  size_t bytes; /* bytes written */
} WriteCount;

static ssize_t count_write(void *cookie, const char *buf, size_t size) {
  WriteCount *c = cookie;
  c->calls++;
  c->bytes += size;
  return (ssize_t)size;
}

/* diag_flush writes everything it prints in one call: on unbuffered stderr, a character at a time
 * was a write call each, a million for a graph with 20,000 errors. */
START_TEST(diagnostics_are_written_in_one_piece) {
  WriteCount count = {0, 0};
  FILE *f = fopencookie(&count, "w", (cookie_io_functions_t){.write = count_write});
  ck_assert_ptr_nonnull(f);
  setvbuf(f, NULL, _IONBF, 0);
  Diag d;
  diag_init(&d, "g.xml", f);
  size_t expected = 0;
  char line[128];
  for (int i = 1; i <= 100; i++) {
    diag_error(&d, i, 0, "problem number %d", i);
    expected += (size_t)snprintf(line, sizeof line, "g.xml:%d: error: problem number %d\n", i, i);
  }
  diag_note(&d, 3, "a note");
  expected += strlen("g.xml:3: note: a note\n");
  diag_flush(&d, DIAG_BY_PLACE);
  ck_assert_int_eq(count.calls, 1);
  ck_assert_uint_eq(count.bytes, expected);
  diag_flush(&d, DIAG_BY_PLACE); /* nothing left: nothing written */
  ck_assert_int_eq(count.calls, 1);
  fclose(f);
}
END_TEST

/* An expression's columns become the file's line and column through the TextOrigin passed with it:
 * through the raw XML (entities are one character, lines advance), on one line as it is, or not at
 * all when the place is unknown. */
START_TEST(columns_of_a_text_in_the_file) {
  const char *raw = "a &amp;&amp;\r\n  b &lt; c</set>";
  TextOrigin xml = {raw, 10, 20}, plain = {NULL, 4, 6}, unknown = {NULL, 8, 0};
  diag_error_in(&mem.diag, &xml, 1, "a");
  diag_error_in(&mem.diag, &xml, 3, "first &");
  diag_error_in(&mem.diag, &xml, 5, "line break");
  diag_error_in(&mem.diag, &xml, 8, "b");
  diag_error_in(&mem.diag, &xml, 10, "<");
  diag_error_in(&mem.diag, &plain, 3, "plain");
  diag_error_in(&mem.diag, &unknown, 3, "unknown");
  diag_flush(&mem.diag, DIAG_AS_REPORTED);
  fflush(mem.file);
  ck_assert_str_eq(mem.text, "g.xml:10:20: error: a\n"
                              "g.xml:10:22: error: first &\n"
                              "g.xml:10:32: error: line break\n"
                              "g.xml:11:3: error: b\n"
                              "g.xml:11:5: error: <\n"
                              "g.xml:4:8: error: plain\n"
                              "g.xml:8: error: unknown\n");
}
END_TEST

static Suite *parse_suite(void) {
  Suite *s = suite_create("parse");
  UNIT_ADD(s, graph_schemas_and_hosts, setup, teardown);
  UNIT_ADD(s, graph_operator_attributes, setup, teardown);
  UNIT_ADD(s, graph_params_are_trimmed, setup, teardown);
  UNIT_ADD(s, graph_sets_keep_their_text, setup, teardown);
  UNIT_ADD(s, graph_states, setup, teardown);
  UNIT_ADD(s, graph_inputs_with_several_streams, setup, teardown);
  UNIT_ADD(s, graph_model_fields, setup, teardown);
  UNIT_ADD(s, model_defaults_and_forward_all, setup, teardown);
  UNIT_ADD(s, rewritten_graph_attributes, setup, teardown);
  UNIT_ADD(s, cdata_comments_and_character_references, setup, teardown);
  UNIT_ADD(s, width_out_of_range, setup, teardown);
  UNIT_ADD(s, doctype_is_refused, setup, teardown);
  UNIT_ADD(s, billion_laughs_is_refused, setup, teardown);
  UNIT_ADD(s, external_entity_is_refused, setup, teardown);
  UNIT_ADD(s, external_dtd_is_refused, setup, teardown);
  UNIT_ADD(s, undeclared_entity_is_refused, setup, teardown);
  UNIT_ADD(s, refusal_leaves_the_parser_usable, setup, teardown);
  UNIT_ADD(s, empty_file, setup, teardown);
  UNIT_ADD(s, white_space_only, setup, teardown);
  UNIT_ADD(s, plain_text, setup, teardown);
  UNIT_ADD(s, binary_bytes, setup, teardown);
  UNIT_ADD(s, malformed_reports_the_first_problem_only, setup, teardown);
  UNIT_ADD(s, mismatched_and_unclosed_tags, setup, teardown);
  UNIT_ADD(s, unended_closing_tag, setup, teardown);
  UNIT_ADD(s, lines_past_65535, setup, teardown);
  UNIT_ADD(s, unescaped_markup_in_expressions, setup, teardown);
  UNIT_ADD(s, content_after_the_root, setup, teardown);
  UNIT_ADD(s, invalid_utf8, setup, teardown);
  UNIT_ADD(s, wrong_root_element, setup, teardown);
  UNIT_ADD(s, schema_violations_are_all_reported, setup, teardown);
  UNIT_ADD(s, schema_structure_messages, setup, teardown);
  UNIT_ADD(s, children_order_and_repeats, setup, teardown);
  UNIT_ADD(s, repeat_alone_is_refused, setup, teardown);
  UNIT_ADD(s, children_in_any_order, setup, teardown);
  UNIT_ADD(s, stray_text_and_empty_lists, setup, teardown);
  UNIT_ADD(s, parse_file_reads_an_example, setup, teardown);
  UNIT_ADD(s, parse_file_errors, setup, teardown);
  UNIT_ADD(s, schema_file_problems, setup, teardown);
  UNIT_ADD(s, diagnostics_are_one_line_each, setup, teardown);
  UNIT_ADD(s, diagnostics_are_records_until_flushed, setup, teardown);
  UNIT_ADD(s, diagnostics_are_written_in_one_piece, setup, teardown);
  UNIT_ADD(s, columns_of_a_text_in_the_file, setup, teardown);
  return s;
}

int main(void) {
  return unit_run(parse_suite());
}
