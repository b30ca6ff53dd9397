/* test_emit.c: the XML emitter (emit.c) and the Graphviz pictures (dot.c).
 *
 * Graphs are parsed from strings against the source tree's graph.xsd and checked, then written to
 * memory. Exact outputs are pinned where they are short; longer ones are checked for the pieces that
 * matter. Every dot output is rendered with `dot -Tsvg`, which must print nothing on stderr. */
#include "check_helper.h"
#include "sf.h"

#include <check.h>
#include <errno.h>
#include <libxml/xmlwriter.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ---- */

static char *emit(const Graph *g) {
  return unit_write_string(graph_emit_xml, g);
}

/* emit(parse(text)) == emit(parse(emit(parse(text)))), byte for byte; returns the first emission. */
static char *assert_round_trip(const char *text) {
  Graph *g = unit_graph_text(text);
  char *once = emit(g);
  Graph *again = unit_graph_text(once);
  char *twice = emit(again);
  ck_assert_str_eq(twice, once);
  free(twice);
  graph_free(again);
  graph_free(g);
  return once;
}

static bool have_dot(void) {
  return system("command -v dot >/dev/null 2>&1") == 0;
}

/* Renders dot text with `dot -Tsvg`; asserts it succeeds and prints nothing on stderr. */
static void assert_renders_cleanly(const char *dot_text, const char *what) {
  if (!have_dot()) {
    fprintf(stderr, "test_emit: skipped rendering %s: 'dot' (graphviz) is not installed\n", what);
    return;
  }
  char in[] = "/tmp/sf-test-emit-XXXXXX";
  char err[] = "/tmp/sf-test-emit-err-XXXXXX";
  int fd_in = mkstemp(in), fd_err = mkstemp(err);
  ck_assert_int_ge(fd_in, 0);
  ck_assert_int_ge(fd_err, 0);
  size_t len = strlen(dot_text);
  ck_assert_int_eq(write(fd_in, dot_text, len), (ssize_t)len);
  close(fd_in);
  close(fd_err);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' -o /dev/null 2>'%s'", in, err);
  int rc = system(cmd);
  char *messages = unit_read_file(err, NULL);
  unlink(in);
  unlink(err);
  ck_assert_msg(rc == 0, "dot failed on %s (status %d): %s", what, rc, messages);
  ck_assert_msg(messages[0] == 0, "dot printed on stderr for %s: %s", what, messages);
  free(messages);
}

/* Asserts that `needle` occurs in `hay`, showing both when it does not. */
#define assert_contains(hay, needle) \
  ck_assert_msg(strstr((hay), (needle)) != NULL, "missing:\n%s\nin:\n%s", (needle), (hay))

/* ---- graphs ---- */

/* Written untidily on purpose: attribute order, spacing and blank text all differ from the
 * emitter's canonical form. */
static const char SMALL[] =
  "<?xml version=\"1.0\"?>\n"
  "<graph name=\"small\" xmlns=\"urn:streamfission:graph:1\">\n"
  "  <schema name=\"T\"><attr type=\"int\" name=\"k\"/>\n"
  "    <attr name=\"s\"   type=\"string\"/></schema>\n"
  "  <host name=\"h0\" address=\"localhost:7000\"/>\n"
  "  <host address=\"10.0.0.2:7001\" name=\"h1\"/>\n"
  "  <operator kind=\"Beacon\" name=\"src\" host=\"h0\">\n"
  "    <output stream=\"S\" schema=\"T\"/>\n"
  "    <param name=\"count\">  10  </param>\n"
  "    <set attr=\"k\">seq % 4</set>\n"
  "    <set attr=\"s\">\n"
  "      str(seq)\n"
  "    </set>\n"
  "  </operator>\n"
  "  <!-- a comment is not kept -->\n"
  "  <operator name=\"acc\" kind=\"Functor\" width=\"3\" colocate=\"g1\" host=\"h1\">\n"
  "    <input stream=\"S\"/>\n"
  "    <output stream=\"A\" schema=\"T\"/>\n"
  "    <param name=\"partitionBy\">k</param>\n"
  "    <param name=\"where\">n &gt;= 2</param>\n"
  "    <state name=\"n\" type=\"int\" init=\"0\">n + 1</state>\n"
  "  </operator>\n"
  "  <operator name=\"ext\" kind=\"Custom\" parallel=\"no\">\n"
  "    <input stream=\"A\"/>\n"
  "    <output stream=\"E\" schema=\"T\"/>\n"
  "    <param name=\"mode\">fast</param>\n"
  "    <model selectivity=\"atmostone\" state=\"partitioned\" keys=\" k   s \" forwards=\"*\"/>\n"
  "    <library symbol=\"ext_op\" path=\"libext.so\"/>\n"
  "  </operator>\n"
  "  <operator name=\"out\" kind=\"FileSink\" parallel=\"auto\">\n"
  "    <input stream=\"E  S\"/>\n"
  "    <param name=\"file\">out.csv</param>\n"
  "  </operator>\n"
  "</graph>\n";

static const char SMALL_EMITTED[] =
  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
  "<graph xmlns=\"urn:streamfission:graph:1\" name=\"small\">\n"
  "  <schema name=\"T\">\n"
  "    <attr name=\"k\" type=\"int\"/>\n"
  "    <attr name=\"s\" type=\"string\"/>\n"
  "  </schema>\n"
  "  <host name=\"h0\" address=\"localhost:7000\"/>\n"
  "  <host name=\"h1\" address=\"10.0.0.2:7001\"/>\n"
  "  <operator name=\"src\" kind=\"Beacon\" host=\"h0\">\n"
  "    <output stream=\"S\" schema=\"T\"/>\n"
  "    <param name=\"count\">10</param>\n"
  "    <set attr=\"k\">seq % 4</set>\n"
  "    <set attr=\"s\">str(seq)</set>\n"
  "  </operator>\n"
  "  <operator name=\"acc\" kind=\"Functor\" width=\"3\" host=\"h1\" colocate=\"g1\">\n"
  "    <input stream=\"S\"/>\n"
  "    <output stream=\"A\" schema=\"T\"/>\n"
  "    <param name=\"partitionBy\">k</param>\n"
  "    <param name=\"where\">n &gt;= 2</param>\n"
  "    <state name=\"n\" type=\"int\" init=\"0\">n + 1</state>\n"
  "  </operator>\n"
  "  <operator name=\"ext\" kind=\"Custom\" parallel=\"no\">\n"
  "    <input stream=\"A\"/>\n"
  "    <output stream=\"E\" schema=\"T\"/>\n"
  "    <param name=\"mode\">fast</param>\n"
  "    <model state=\"partitioned\" keys=\"k s\" selectivity=\"atmostone\" forwards=\"*\" punct=\"none\"/>\n"
  "    <library path=\"libext.so\" symbol=\"ext_op\"/>\n"
  "  </operator>\n"
  "  <operator name=\"out\" kind=\"FileSink\">\n"
  "    <input stream=\"E S\"/>\n"
  "    <param name=\"file\">out.csv</param>\n"
  "  </operator>\n"
  "</graph>\n";

/* Texts and attribute values holding XML's special characters, and a text spanning lines. */
static const char SPECIAL[] =
  "<graph xmlns=\"urn:streamfission:graph:1\" name=\"special\">\n"
  "  <schema name=\"T\"><attr name=\"s\" type=\"string\"/><attr name=\"n\" type=\"int\"/></schema>\n"
  "  <operator name=\"src\" kind=\"Beacon\">\n"
  "    <output stream=\"S\" schema=\"T\"/>\n"
  "    <param name=\"count\">3</param>\n"
  "    <set attr=\"s\">\"a&lt;b &amp; \\\"c\\\"\" + \"&gt;\"</set>\n"
  "    <set attr=\"n\">seq &lt; 2 &amp;&amp; seq &gt;= 0 ? 1\n"
  "        : 2</set>\n"
  "  </operator>\n"
  "  <operator name=\"f\" kind=\"Functor\">\n"
  "    <input stream=\"S\"/>\n"
  "    <output stream=\"F\" schema=\"T\"/>\n"
  "    <param name=\"partitionBy\">n</param>\n"
  "    <state name=\"last\" type=\"string\" init=\"&quot;&lt;&amp;&gt;&quot;\">s + last</state>\n"
  "  </operator>\n"
  "  <operator name=\"c\" kind=\"Custom\">\n"
  "    <input stream=\"F\"/>\n"
  "    <output stream=\"C\" schema=\"T\"/>\n"
  "    <library path=\"lib&lt;odd&gt; &amp; &quot;name&quot;.so\" symbol=\"c_op\"/>\n"
  "  </operator>\n"
  "</graph>\n";

/* A rewritten graph as sf-xform writes one: hosts, a keyed region r1 of width 2 shuffled into a
 * region r2 of width 2 (per-channel Splits and Merges), region-wide Split and Merge around them. */
static const char PARALLEL[] =
  "<graph xmlns=\"urn:streamfission:graph:1\" name=\"par\">\n"
  "  <schema name=\"T\"><attr name=\"k\" type=\"int\"/><attr name=\"j\" type=\"int\"/></schema>\n"
  "  <host name=\"h0\" address=\"127.0.0.1:7000\"/>\n"
  "  <host name=\"h1\" address=\"127.0.0.1:7001\"/>\n"
  "  <operator name=\"src\" kind=\"Beacon\" host=\"h0\">\n"
  "    <output stream=\"S\" schema=\"T\"/>\n"
  "    <param name=\"count\">10</param>\n"
  "    <set attr=\"k\">seq % 3</set>\n"
  "    <set attr=\"j\">seq % 5</set>\n"
  "  </operator>\n"
  "  <operator name=\"r1.split\" kind=\"Split\" host=\"h0\" origin=\"a\" region=\"r1\">\n"
  "    <input stream=\"S\"/>\n"
  "    <output stream=\"S.r1[0]\" schema=\"T\"/>\n"
  "    <output stream=\"S.r1[1]\" schema=\"T\"/>\n"
  "    <param name=\"strategy\">hash</param>\n"
  "    <param name=\"keys\">k</param>\n"
  "    <param name=\"sequence\">assign</param>\n"
  "    <param name=\"pulse\">0</param>\n"
  "  </operator>\n"
  "  <operator name=\"a[0]\" kind=\"Dedup\" host=\"h0\" origin=\"a\" region=\"r1\" channel=\"0\">\n"
  "    <input stream=\"S.r1[0]\"/>\n"
  "    <output stream=\"A[0]\" schema=\"T\"/>\n"
  "    <param name=\"partitionBy\">k</param>\n"
  "  </operator>\n"
  "  <operator name=\"r1.split[0]\" kind=\"Split\" host=\"h0\" origin=\"a\" region=\"r1\" channel=\"0\">\n"
  "    <input stream=\"A[0]\"/>\n"
  "    <output stream=\"A[0][0]\" schema=\"T\"/>\n"
  "    <output stream=\"A[0][1]\" schema=\"T\"/>\n"
  "    <param name=\"strategy\">hash</param>\n"
  "    <param name=\"keys\">j</param>\n"
  "    <param name=\"sequence\">keep</param>\n"
  "    <param name=\"pulse\">64</param>\n"
  "  </operator>\n"
  "  <operator name=\"a[1]\" kind=\"Dedup\" host=\"h1\" origin=\"a\" region=\"r1\" channel=\"1\">\n"
  "    <input stream=\"S.r1[1]\"/>\n"
  "    <output stream=\"A[1]\" schema=\"T\"/>\n"
  "    <param name=\"partitionBy\">k</param>\n"
  "  </operator>\n"
  "  <operator name=\"r1.split[1]\" kind=\"Split\" host=\"h1\" origin=\"a\" region=\"r1\" channel=\"1\">\n"
  "    <input stream=\"A[1]\"/>\n"
  "    <output stream=\"A[1][0]\" schema=\"T\"/>\n"
  "    <output stream=\"A[1][1]\" schema=\"T\"/>\n"
  "    <param name=\"strategy\">hash</param>\n"
  "    <param name=\"keys\">j</param>\n"
  "    <param name=\"sequence\">keep</param>\n"
  "    <param name=\"pulse\">64</param>\n"
  "  </operator>\n"
  "  <operator name=\"r2.merge[0]\" kind=\"Merge\" host=\"h0\" origin=\"b\" region=\"r2\" channel=\"0\">\n"
  "    <input stream=\"A[0][0]\"/>\n"
  "    <input stream=\"A[1][0]\"/>\n"
  "    <output stream=\"A.r2[0]\" schema=\"T\"/>\n"
  "    <param name=\"order\">seqpulse</param>\n"
  "  </operator>\n"
  "  <operator name=\"b[0]\" kind=\"Dedup\" host=\"h0\" origin=\"b\" region=\"r2\" channel=\"0\">\n"
  "    <input stream=\"A.r2[0]\"/>\n"
  "    <output stream=\"B[0]\" schema=\"T\"/>\n"
  "    <param name=\"partitionBy\">j</param>\n"
  "  </operator>\n"
  "  <operator name=\"r2.merge[1]\" kind=\"Merge\" host=\"h1\" origin=\"b\" region=\"r2\" channel=\"1\">\n"
  "    <input stream=\"A[0][1]\"/>\n"
  "    <input stream=\"A[1][1]\"/>\n"
  "    <output stream=\"A.r2[1]\" schema=\"T\"/>\n"
  "    <param name=\"order\">seqpulse</param>\n"
  "  </operator>\n"
  "  <operator name=\"b[1]\" kind=\"Dedup\" host=\"h1\" origin=\"b\" region=\"r2\" channel=\"1\">\n"
  "    <input stream=\"A.r2[1]\"/>\n"
  "    <output stream=\"B[1]\" schema=\"T\"/>\n"
  "    <param name=\"partitionBy\">j</param>\n"
  "  </operator>\n"
  "  <operator name=\"r2.merge\" kind=\"Merge\" host=\"h0\" origin=\"b\" region=\"r2\">\n"
  "    <input stream=\"B[0]\"/>\n"
  "    <input stream=\"B[1]\"/>\n"
  "    <output stream=\"B\" schema=\"T\"/>\n"
  "    <param name=\"order\">seqpulse</param>\n"
  "  </operator>\n"
  "  <operator name=\"keep\" kind=\"Filter\" parallel=\"no\" host=\"h1\">\n"
  "    <input stream=\"B\"/>\n"
  "    <output stream=\"K\" schema=\"T\"/>\n"
  "    <param name=\"where\">k &gt; 0</param>\n"
  "  </operator>\n"
  "  <operator name=\"out\" kind=\"FileSink\" host=\"h0\">\n"
  "    <input stream=\"K\"/>\n"
  "    <param name=\"file\">o.csv</param>\n"
  "  </operator>\n"
  "</graph>\n";

/* The text between the line opening `opener` and the line closing it (two more spaces of indent
 * before the closing brace are not needed: clusters close with `indent}`). */
static char *cluster_body(const char *dot, const char *opener, const char *closer) {
  const char *start = strstr(dot, opener);
  ck_assert_msg(start != NULL, "no %s in:\n%s", opener, dot);
  const char *end = strstr(start, closer);
  ck_assert_ptr_nonnull(end);
  return strndup(start, (size_t)(end - start));
}

/* ---- XML ---- */

START_TEST(test_emit_small_exact) {
  Graph *g = unit_graph_text(SMALL);
  char *xml = emit(g);
  ck_assert_str_eq(xml, SMALL_EMITTED);
  free(xml);
  graph_free(g);
}
END_TEST

/* A Functor's sets and states are written in their order, which is their evaluation order. */
START_TEST(test_emit_keeps_set_state_order) {
  Graph *g = unit_graph_text(
      "<graph xmlns=\"urn:streamfission:graph:1\" name=\"g\">\n"
      "<schema name=\"S\"><attr name=\"x\" type=\"int\"/><attr name=\"y\" type=\"int\"/></schema>\n"
      "<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"S\"/><param name=\"count\">3</param>"
      "<set attr=\"x\">seq</set><set attr=\"y\">seq</set></operator>\n"
      "<operator name=\"f\" kind=\"Functor\"><input stream=\"A\"/><output stream=\"B\" schema=\"S\"/>"
      "<set attr=\"x\">a</set><state name=\"a\" type=\"int\" init=\"0\">a + x</state>"
      "<state name=\"b\" type=\"int\" init=\"0\">b + a</state><set attr=\"y\">b</set>"
      "<state name=\"c\" type=\"int\" init=\"0\">c</state></operator>\n"
      "<operator name=\"out\" kind=\"FileSink\"><input stream=\"B\"/><param name=\"file\">o.csv</param></operator>\n"
      "</graph>\n");
  char *xml = emit(g);
  assert_contains(xml, "    <output stream=\"B\" schema=\"S\"/>\n"
                       "    <set attr=\"x\">a</set>\n"
                       "    <state name=\"a\" type=\"int\" init=\"0\">a + x</state>\n"
                       "    <state name=\"b\" type=\"int\" init=\"0\">b + a</state>\n"
                       "    <set attr=\"y\">b</set>\n"
                       "    <state name=\"c\" type=\"int\" init=\"0\">c</state>\n"
                       "  </operator>\n");
  free(xml);
  graph_free(g);
}
END_TEST

START_TEST(test_emit_is_deterministic) {
  Graph *g = unit_graph_text(SMALL);
  char *a = emit(g), *b = emit(g);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
  graph_free(g);
}
END_TEST

START_TEST(test_emit_escapes_texts_and_attributes) {
  Graph *g = unit_graph_text(SPECIAL);
  char *xml = emit(g);
  assert_contains(xml, "<set attr=\"s\">&quot;a&lt;b &amp; \\&quot;c\\&quot;&quot; + &quot;&gt;&quot;</set>\n");
  assert_contains(xml, "<set attr=\"n\">seq &lt; 2 &amp;&amp; seq &gt;= 0 ? 1\n        : 2</set>\n");
  assert_contains(xml, "<state name=\"last\" type=\"string\" init=\"&quot;&lt;&amp;&gt;&quot;\">s + last</state>\n");
  assert_contains(xml, "<library path=\"lib&lt;odd&gt; &amp; &quot;name&quot;.so\" symbol=\"c_op\"/>\n");
  /* the values read back unchanged */
  Graph *again = unit_graph_text(xml);
  ck_assert_str_eq(again->ops[0]->sets[0].text, "\"a<b & \\\"c\\\"\" + \">\"");
  ck_assert_str_eq(again->ops[1]->states[0]->init_text, "\"<&>\"");
  ck_assert_str_eq(again->ops[2]->lib_path, "lib<odd> & \"name\".so");
  graph_free(again);
  free(xml);
  graph_free(g);
}
END_TEST

/* What libxml2's xmlTextWriter (indent on, UTF-8 declared, as emit.c once used) makes of `value`
 * as an attribute value and of `text` as element content: the bytes between the quotes, and between
 * the tags, of `<a v="...">...</a>`. Both are malloc'ed. */
static void libxml2_escapes(const char *value, const char *text, char **attr_out, char **text_out) {
  xmlBufferPtr buf = xmlBufferCreate();
  xmlTextWriterPtr w = xmlNewTextWriterMemory(buf, 0);
  ck_assert_ptr_nonnull(w);
  ck_assert_int_ge(xmlTextWriterSetIndent(w, 1), 0);
  ck_assert_int_ge(xmlTextWriterStartDocument(w, "1.0", "UTF-8", NULL), 0);
  ck_assert_int_ge(xmlTextWriterStartElement(w, BAD_CAST "a"), 0);
  ck_assert_int_ge(xmlTextWriterWriteAttribute(w, BAD_CAST "v", BAD_CAST value), 0);
  ck_assert_int_ge(xmlTextWriterWriteString(w, BAD_CAST text), 0);
  ck_assert_int_ge(xmlTextWriterEndDocument(w), 0);
  xmlFreeTextWriter(w);
  const char *doc = (const char *)xmlBufferContent(buf);
  const char *v = strstr(doc, "<a v=\"") + 6, *v_end = strchr(v, '"');
  const char *t = v_end + 2, *t_end = strstr(t, "</a>");
  *attr_out = strndup(v, (size_t)(v_end - v));
  *text_out = strndup(t, (size_t)(t_end - t));
  xmlBufferFree(buf);
}

/* Cuts what lies between `before` and the next `after` in s. */
static char *between(const char *s, const char *before, const char *after) {
  const char *b = strstr(s, before);
  ck_assert_ptr_nonnull(b);
  b += strlen(before);
  const char *e = strstr(b, after);
  ck_assert_ptr_nonnull(e);
  return strndup(b, (size_t)(e - b));
}

/* Fills s with 1 to size - 1 random bytes, none NUL, a third of them XML's specials or white space. */
static void random_string(char *s, size_t size, unsigned *seed) {
  static const char specials[] = "<>&\"'\t\n\r ;#x";
  size_t n = 1 + (size_t)rand_r(seed) % (size - 1);
  for (size_t i = 0; i < n; i++) {
    unsigned r = (unsigned)rand_r(seed);
    s[i] = r % 3 == 0 ? specials[r / 3 % (sizeof specials - 1)] : (char)(1 + r / 3 % 255);
  }
  s[n] = 0;
}

/* The emitter escapes attribute values and texts exactly as libxml2's writer does, on 3,000 random
 * strings of every byte but NUL (XML's specials, tabs and line breaks, other control characters,
 * UTF-8 and broken UTF-8), put straight into a parsed graph's fields. */
START_TEST(test_emit_escapes_as_libxml2) {
  Graph *g = unit_graph_text(SPECIAL);
  Op *c = g->ops[2];
  ck_assert_str_eq(c->name, "c");
  unsigned seed = 12345;
  char value[48], txt[48];
  for (int round = 0; round < 3000; round++) {
    random_string(value, sizeof value, &seed);
    random_string(txt, sizeof txt, &seed);
    /* texts are written trimmed by the parser, so keep the text's ends from being white space */
    txt[0] = 'x';
    c->lib_path = value;
    Param p = { .name = "t", .text = txt };
    c->params = &p;
    c->nparams = 1;
    char *xml = emit(g);
    char *ours_attr = between(xml, "<library path=\"", "\" symbol=");
    char *ours_text = between(xml, "<param name=\"t\">", "</param>");
    char *want_attr, *want_text;
    libxml2_escapes(value, txt, &want_attr, &want_text);
    ck_assert_str_eq(ours_attr, want_attr);
    ck_assert_str_eq(ours_text, want_text);
    free(ours_attr);
    free(ours_text);
    free(want_attr);
    free(want_text);
    free(xml);
    c->params = NULL;
    c->nparams = 0;
  }
  c->lib_path = NULL;
  graph_free(g);
}
END_TEST

START_TEST(test_emit_round_trip_small) {
  free(assert_round_trip(SMALL));
}
END_TEST

START_TEST(test_emit_round_trip_special) {
  free(assert_round_trip(SPECIAL));
}
END_TEST

START_TEST(test_emit_round_trip_parallel) {
  char *xml = assert_round_trip(PARALLEL);
  assert_contains(xml, "  <operator name=\"r1.split[0]\" kind=\"Split\" host=\"h0\" origin=\"a\" region=\"r1\" "
                       "channel=\"0\">\n");
  assert_contains(xml, "  <operator name=\"keep\" kind=\"Filter\" parallel=\"no\" host=\"h1\">\n");
  assert_contains(xml, "    <input stream=\"A[0][1]\"/>\n    <input stream=\"A[1][1]\"/>\n");
  free(xml);
}
END_TEST

START_TEST(test_emit_round_trip_example_graph) {
  char *text = unit_read_file(SF_SOURCE_DIR "/graphs/vwap.xml", NULL);
  ck_assert_ptr_nonnull(text);
  char *xml = assert_round_trip(text);
  assert_contains(xml, "<param name=\"where\">vol &gt;= 10</param>");
  free(xml);
  free(text);
}
END_TEST

/* order="time" on an input is written back (and order="position", the default, is not). */
START_TEST(test_emit_time_ordered_input) {
  char *xml = assert_round_trip(
      "<graph xmlns=\"urn:streamfission:graph:1\" name=\"g\">\n"
      "<schema name=\"S\"><attr name=\"ts\" type=\"int\"/></schema>\n"
      "<operator name=\"a\" kind=\"Beacon\"><output stream=\"A\" schema=\"S\"/><param name=\"count\">3</param>"
      "<param name=\"time\">ts</param><set attr=\"ts\">seq</set></operator>\n"
      "<operator name=\"b\" kind=\"Beacon\"><output stream=\"B\" schema=\"S\"/><param name=\"count\">3</param>"
      "<param name=\"time\">ts</param><set attr=\"ts\">seq</set></operator>\n"
      "<operator name=\"f\" kind=\"Filter\"><input stream=\"A B\" order=\"time\"/><output stream=\"C\" schema=\"S\"/>"
      "<param name=\"where\">true</param></operator>\n"
      "<operator name=\"out\" kind=\"FileSink\"><input stream=\"C\" order=\"position\"/>"
      "<param name=\"file\">o.csv</param></operator>\n"
      "</graph>\n");
  assert_contains(xml, "    <input stream=\"A B\" order=\"time\"/>\n");
  assert_contains(xml, "    <input stream=\"C\"/>\n");
  free(xml);
}
END_TEST

/* Every attribute of an operator, in the documented order. */
START_TEST(test_emit_operator_attribute_order) {
  Graph *g = unit_graph_text(PARALLEL);
  Op *op = graph_find_op(g, "keep");
  op->width = 2;
  op->colocate = "c1";
  op->origin = "keep0";
  op->region = "r9";
  op->channel = 4;
  char *xml = emit(g);
  assert_contains(xml, "  <operator name=\"keep\" kind=\"Filter\" parallel=\"no\" width=\"2\" host=\"h1\" "
                       "colocate=\"c1\" origin=\"keep0\" region=\"r9\" channel=\"4\">\n");
  free(xml);
  graph_free(g);
}
END_TEST

/* The model is written from the Model fields, always with state, selectivity and punct; kind falls
 * back to kind_name when no text was kept. */
START_TEST(test_emit_model_from_fields) {
  Graph *g = unit_graph_text(SMALL);
  Op *ext = graph_find_op(g, "ext");
  ext->kind_text = NULL;
  ext->model.state = STATE_NONE;
  ext->model.nkeys = 0;
  ext->model.sel = SEL_MANY;
  ext->model.forwards_all = false;
  static const char *fw[] = { "k", "s" };
  ext->model.forwards = fw;
  ext->model.nforwards = 2;
  ext->model.punct = PUNCT_CONSUMES;
  char *xml = emit(g);
  assert_contains(xml, "  <operator name=\"ext\" kind=\"Custom\" parallel=\"no\">\n");
  assert_contains(xml, "    <model state=\"none\" selectivity=\"many\" forwards=\"k s\" punct=\"consumes\"/>\n");
  free(xml);
  /* a model without keys and forwards, and operators without a model, write no <model> beyond it */
  ext->model.nforwards = 0;
  ext->model.punct = PUNCT_GENERATES;
  xml = emit(g);
  assert_contains(xml, "    <model state=\"none\" selectivity=\"many\" punct=\"generates\"/>\n");
  ck_assert_ptr_eq(strstr(strstr(xml, "<model") + 1, "<model"), NULL);
  free(xml);
  graph_free(g);
}
END_TEST

START_TEST(test_emit_reports_write_errors) {
  FILE *full = fopen("/dev/full", "w");
  if (!full) {
    fprintf(stderr, "test_emit: skipped write-error test: no /dev/full\n");
    return;
  }
  Graph *g = unit_graph_text(SMALL);
  errno = 0;
  ck_assert_int_eq(graph_emit_xml(g, full), -1);
  ck_assert_int_eq(errno, ENOSPC);
  clearerr(full);
  errno = 0;
  ck_assert_int_eq(graph_dot_input(g, full), -1);
  ck_assert_int_ne(errno, 0);
  clearerr(full);
  errno = 0;
  ck_assert_int_eq(graph_dot_parallel(g, full), -1);
  ck_assert_int_ne(errno, 0);
  fclose(full);
  graph_free(g);
}
END_TEST

/* ---- dot ---- */

static const char TINY[] =
  "<graph xmlns=\"urn:streamfission:graph:1\" name=\"tiny\">\n"
  "  <schema name=\"T\"><attr name=\"k\" type=\"int\"/></schema>\n"
  "  <operator name=\"src\" kind=\"Beacon\">\n"
  "    <output stream=\"S\" schema=\"T\"/>\n"
  "    <param name=\"count\">3</param>\n"
  "    <set attr=\"k\">seq</set>\n"
  "  </operator>\n"
  "  <operator name=\"w\" kind=\"Work\">\n"
  "    <input stream=\"S\"/>\n"
  "    <output stream=\"W\" schema=\"T\"/>\n"
  "    <param name=\"iterations\">5</param>\n"
  "  </operator>\n"
  "  <operator name=\"o1\" kind=\"FileSink\">\n"
  "    <input stream=\"W\"/>\n"
  "    <param name=\"file\">a.csv</param>\n"
  "  </operator>\n"
  "  <operator name=\"o2\" kind=\"FileSink\">\n"
  "    <input stream=\"W S\"/>\n"
  "    <param name=\"file\">b.csv</param>\n"
  "  </operator>\n"
  "</graph>\n";

START_TEST(test_dot_input_exact) {
  Graph *g = unit_graph_text(TINY);
  graph_find_op(g, "o1")->why_serial = "it is a sink (FileSink)"; /* never marked: a sink by nature */
  graph_find_op(g, "w")->why_serial = "it is marked parallel=\"no\"";
  char *dot = unit_write_string(graph_dot_input, g);
  ck_assert_str_eq(dot,
    "digraph \"tiny\" {\n"
    "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, nodesep=0.3, ranksep=0.45];\n"
    "  node [fontname=\"Helvetica\", fontsize=10, shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\"];\n"
    "  edge [fontname=\"Helvetica\", fontsize=8, fontcolor=\"#555555\", color=\"#555555\", arrowsize=0.7];\n"
    "  \"src\" [label=\"src\\nBeacon\", shape=invhouse, margin=\"0.04,0.02\", style=\"filled\", "
    "tooltip=\"Beacon operator src\"];\n"
    "  \"w\" [label=\"w\\nWork\\nnot parallel: it is marked parallel=\\\"no\\\"\", style=\"rounded,filled,dashed\", "
    "tooltip=\"Work operator w\\nnot parallel: it is marked parallel=\\\"no\\\"\"];\n"
    "  \"o1\" [label=\"o1\\nFileSink\", shape=house, margin=\"0.04,0.02\", style=\"filled\", "
    "tooltip=\"FileSink operator o1\"];\n"
    "  \"o2\" [label=\"o2\\nFileSink\", shape=house, margin=\"0.04,0.02\", style=\"filled\", "
    "tooltip=\"FileSink operator o2\"];\n"
    "  \"src\" -> \"w\" [label=\"S\"];\n"
    "  \"src\" -> \"o2\" [label=\"S\"];\n"
    "  \"w\" -> \"o1\" [label=\"W\"];\n"
    "  \"w\" -> \"o2\" [label=\"W\"];\n"
    "}\n");
  assert_renders_cleanly(dot, "the tiny input graph");
  free(dot);
  graph_free(g);
}
END_TEST

/* Names with '.', '[' and ']' are quoted; quotes, backslashes and line breaks in reasons escaped;
 * reasons shortened in the label (the problem, wrapped at words into at most three lines of 40
 * bytes, a word longer than a line cut outside UTF-8 characters) and kept whole in the tooltip;
 * sources and sinks never marked, whatever their reason. */
START_TEST(test_dot_escapes_and_shortens) {
  Graph *g = unit_graph_text(PARALLEL);
  graph_find_op(g, "keep")->why_serial = "it is marked parallel=\"no\" by C:\\user\nsecond line";
  graph_find_op(g, "src")->why_serial = "its state is unknown: it has <state> but no 'partitionBy' (rule 2)";
  graph_find_op(g, "out")->why_serial = "it is a sink (FileSink)";
  graph_find_op(g, "a[0]")->why_serial = "its state is unknown: it has <state> but no 'partitionBy' (rule 2)";
  graph_find_op(g, "b[1]")->why_serial =
      "a reason with many words that does not fit in one short label at all, not even on three lines of a node label";
  graph_find_op(g, "b[0]")->why_serial = "it shares colocate tag 'crm' with 'spend' (rule 4)";
  graph_find_op(g, "a[1]")->why_serial = "it shares colocate tag 'crm' with 'aVeryLongPartnerOperatorName' (rule 4)";
  graph_find_op(g, "r2.merge[1]")->why_serial = "a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";
  for (int pass = 0; pass < 2; pass++) {
    char *dot = unit_write_string(pass ? graph_dot_parallel : graph_dot_input, g);
    assert_contains(dot, "\"r1.split[0]\" -> \"r2.merge[1]\" [tooltip=\"A[0][1]\"];\n");
    assert_contains(dot, "label=\"keep\\nFilter\\nnot parallel: it is marked parallel=\\\"no\\\"\\nby C:\\\\user\"");
    assert_contains(dot, "\\nnot parallel: it is marked parallel=\\\"no\\\" by C:\\\\user\\nsecond line\"];\n");
    assert_contains(dot, "\"src\" [label=\"src\\nBeacon\", shape=invhouse, margin=\"0.04,0.02\", style=\"filled\", ");
    assert_contains(dot, "tooltip=\"Beacon operator src, on host h0\"];\n");
    assert_contains(dot, "\"out\" [label=\"out\\nFileSink\", shape=house, margin=\"0.04,0.02\", style=\"filled\", ");
    assert_contains(dot, "tooltip=\"FileSink operator out, on host h0\"];\n");
    assert_contains(dot, "label=\"a[0]\\nDedup\\nnot parallel: its state is unknown\", style=\"rounded,filled,dashed\"");
    assert_contains(dot, "label=\"b[1]\\nDedup\\nnot parallel: a reason with many words\\n"
                         "that does not fit in one short label at\\nall, not even on three lines of a node...\"");
    assert_contains(dot, "label=\"b[0]\\nDedup\\nnot parallel: it shares colocate tag\\n'crm' with 'spend'\"");
    assert_contains(dot, "label=\"a[1]\\nDedup\\nnot parallel: it shares colocate tag\\n'crm' with\\n"
                         "'aVeryLongPartnerOperatorName'\"");
    assert_contains(dot, "label=\"r2.merge[1]\\nshuffle merge seqpulse\\nnot parallel:\\na"
                         "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                         "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\\n"
                         "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"");
    assert_renders_cleanly(dot, pass ? "the parallel graph with reasons" : "the input graph with reasons");
    free(dot);
  }
  graph_free(g);
}
END_TEST

START_TEST(test_dot_parallel_clusters_shapes_colours) {
  Graph *g = unit_graph_text(PARALLEL);
  graph_find_op(g, "src")->why_serial = "it is a source (Beacon)";
  char *dot = unit_write_string(graph_dot_parallel, g);

  /* regions say how they work (entry Split or shuffle, keys, exit Merge or shuffle); a region
   * entered by a shuffle has its labels at the bottom; channels nested inside name their host */
  assert_contains(dot, "  subgraph \"cluster_r1\" {\n    label=\"r1: width 2, hash on k, shuffled into r2\";\n");
  assert_contains(dot, "  subgraph \"cluster_r2\" {\n"
                       "    label=\"r2: width 2, hash on j, merge seqpulse, shuffled from r1\"; labelloc=b;\n");
  assert_contains(dot, "    subgraph \"cluster_r1_c0\" {\n      label=\"channel 0 @ h0\";\n");
  assert_contains(dot, "    subgraph \"cluster_r2_c1\" {\n      label=\"channel 1 @ h1\";\n");

  /* Split and Merge shapes; hosts by fill colour in the palette order of g->hosts */
  assert_contains(dot, "    \"r1.split\" [label=\"r1.split\\nSplit hash(k)\", shape=trapezium, "
                       "margin=\"0.04,0.02\", style=\"filled\", fillcolor=\"#a6cee3\", "
                       "tooltip=\"Split operator r1.split, for a, on host h0\"];\n");
  assert_contains(dot, "    \"r2.merge\" [label=\"r2.merge\\nMerge seqpulse\", shape=invtrapezium, "
                       "margin=\"0.04,0.02\", style=\"filled\", fillcolor=\"#a6cee3\"");
  assert_contains(dot, "      \"a[1]\" [label=\"a[1]\\nDedup\", fillcolor=\"#b2df8a\", "
                       "tooltip=\"Dedup operator a[1], replica of a, on host h1\"];\n");
  assert_contains(dot, "  \"keep\" [label=\"keep\\nFilter\", fillcolor=\"#b2df8a\"");

  /* the two sides of a shuffle: its Splits keep the sequence and show their pulse, its Merges */
  assert_contains(dot, "      \"r1.split[1]\" [label=\"r1.split[1]\\nshuffle hash(j) keep, pulse 64\", "
                       "shape=trapezium, margin=\"0.04,0.02\", style=\"filled\", fillcolor=\"#b2df8a\", "
                       "tooltip=\"Split operator r1.split[1], for a, on host h1\"];\n");
  assert_contains(dot, "      \"r2.merge[0]\" [label=\"r2.merge[0]\\nshuffle merge seqpulse\", shape=invtrapezium, ");

  /* the legend: host -> colour and address, in order */
  assert_contains(dot, "  subgraph \"cluster_legend\" {\n");
  assert_contains(dot, "<tr><td bgcolor=\"#a6cee3\">h0</td><td>127.0.0.1:7000</td></tr>"
                       "<tr><td bgcolor=\"#b2df8a\">h1</td><td>127.0.0.1:7001</td></tr>");

  /* a source is not parallel by nature: no marking, no reason */
  assert_contains(dot, "  \"src\" [label=\"src\\nBeacon\", shape=invhouse, margin=\"0.04,0.02\", style=\"filled\", "
                       "fillcolor=\"#a6cee3\", tooltip=\"Beacon operator src, on host h0\"];\n");
  ck_assert_ptr_null(strstr(dot, "not parallel"));
  ck_assert_ptr_null(strstr(dot, "dashed\", fillcolor=\"#"));

  /* a Split or Merge of one channel sits in its channel's cluster; region-wide ones outside channels */
  char *c0 = cluster_body(dot, "subgraph \"cluster_r1_c0\"", "\n    }\n");
  assert_contains(c0, "\"a[0]\" [");
  assert_contains(c0, "\"r1.split[0]\" [");
  ck_assert_ptr_null(strstr(c0, "\"a[1]\" ["));
  free(c0);
  char *r2c1 = cluster_body(dot, "subgraph \"cluster_r2_c1\"", "\n    }\n");
  assert_contains(r2c1, "\"r2.merge[1]\" [");
  assert_contains(r2c1, "\"b[1]\" [");
  free(r2c1);
  char *r2 = cluster_body(dot, "subgraph \"cluster_r2\"", "\n  }\n");
  assert_contains(r2, "    \"r2.merge\" [");
  ck_assert_ptr_null(strstr(r2, "\"r1.split\" ["));
  free(r2);

  /* one edge per consumer port; labelled where it carries a stream of the user's graph (outside
   * regions, into an entry Split, out of a final Merge), the generated name as a tooltip inside */
  assert_contains(dot, "  \"src\" -> \"r1.split\" [label=\"S\"];\n");
  assert_contains(dot, "  \"r1.split\" -> \"a[0]\" [tooltip=\"S.r1[0]\"];\n");
  assert_contains(dot, "  \"a[1]\" -> \"r1.split[1]\" [tooltip=\"A[1]\"];\n");
  assert_contains(dot, "  \"r1.split[1]\" -> \"r2.merge[0]\" [tooltip=\"A[1][0]\"];\n");
  assert_contains(dot, "  \"b[1]\" -> \"r2.merge\" [tooltip=\"B[1]\"];\n");
  assert_contains(dot, "  \"r2.merge\" -> \"keep\" [label=\"B\"];\n");
  assert_contains(dot, "  \"keep\" -> \"out\" [label=\"K\"];\n");
  ck_assert_str_eq(dot + strlen(dot) - 2, "}\n");

  assert_renders_cleanly(dot, "the parallel graph");
  char *again = unit_write_string(graph_dot_parallel, g);
  ck_assert_str_eq(again, dot);
  free(again);
  free(dot);
  graph_free(g);
}
END_TEST

/* Region and channel labels from other shapes of graph: key lists written with commas and several
 * keys, a channel on two hosts and one on none, a region left by its Merge into another region's
 * entry Split (that edge keeps its label: it carries a stream of the user's graph), roundrobin. */
START_TEST(test_dot_parallel_region_labels) {
  Graph *g = unit_graph_text(PARALLEL);
  ((Param *)op_find_param(graph_find_op(g, "r1.split"), "keys"))->text = "k,  j";
  graph_find_op(g, "b[1]")->host = "h0";
  graph_find_op(g, "a[0]")->host = NULL;
  graph_find_op(g, "r1.split[0]")->host = NULL;
  char *dot = unit_write_string(graph_dot_parallel, g);
  assert_contains(dot, "    label=\"r1: width 2, hash on k and j, shuffled into r2\";\n");
  assert_contains(dot, "\"r1.split\" [label=\"r1.split\\nSplit hash(k, j)\", ");
  assert_contains(dot, "    subgraph \"cluster_r2_c1\" {\n      label=\"channel 1 @ h1, h0\";\n");
  assert_contains(dot, "    subgraph \"cluster_r1_c0\" {\n      label=\"channel 0\";\n");
  assert_renders_cleanly(dot, "the parallel graph with odd hosts");
  free(dot);
  graph_free(g);

  /* two regions one after the other, through the first one's Merge into the second one's Split */
  static const char CHAIN[] =
    "<graph xmlns=\"urn:streamfission:graph:1\" name=\"chain\">\n"
    "  <schema name=\"T\"><attr name=\"a\" type=\"int\"/><attr name=\"b\" type=\"int\"/>"
    "<attr name=\"c\" type=\"int\"/></schema>\n"
    "  <operator name=\"src\" kind=\"Beacon\">\n"
    "    <output stream=\"S\" schema=\"T\"/>\n"
    "    <param name=\"count\">10</param>\n"
    "    <set attr=\"a\">seq</set><set attr=\"b\">seq</set><set attr=\"c\">seq</set>\n"
    "  </operator>\n"
    "  <operator name=\"r1.split\" kind=\"Split\" origin=\"x\" region=\"r1\">\n"
    "    <input stream=\"S\"/>\n"
    "    <output stream=\"S.r1[0]\" schema=\"T\"/>\n"
    "    <output stream=\"S.r1[1]\" schema=\"T\"/>\n"
    "    <param name=\"strategy\">roundrobin</param>\n"
    "    <param name=\"sequence\">assign</param>\n"
    "    <param name=\"pulse\">0</param>\n"
    "  </operator>\n"
    "  <operator name=\"x[0]\" kind=\"Work\" origin=\"x\" region=\"r1\" channel=\"0\">\n"
    "    <input stream=\"S.r1[0]\"/><output stream=\"X[0]\" schema=\"T\"/>\n"
    "    <param name=\"iterations\">1</param>\n"
    "  </operator>\n"
    "  <operator name=\"x[1]\" kind=\"Work\" origin=\"x\" region=\"r1\" channel=\"1\">\n"
    "    <input stream=\"S.r1[1]\"/><output stream=\"X[1]\" schema=\"T\"/>\n"
    "    <param name=\"iterations\">1</param>\n"
    "  </operator>\n"
    "  <operator name=\"r1.merge\" kind=\"Merge\" origin=\"x\" region=\"r1\">\n"
    "    <input stream=\"X[0]\"/><input stream=\"X[1]\"/>\n"
    "    <output stream=\"X\" schema=\"T\"/>\n"
    "    <param name=\"order\">roundrobin</param>\n"
    "  </operator>\n"
    "  <operator name=\"r2.split\" kind=\"Split\" origin=\"y\" region=\"r2\">\n"
    "    <input stream=\"X\"/>\n"
    "    <output stream=\"X.r2[0]\" schema=\"T\"/>\n"
    "    <output stream=\"X.r2[1]\" schema=\"T\"/>\n"
    "    <param name=\"strategy\">hash</param>\n"
    "    <param name=\"keys\">a b,c</param>\n"
    "    <param name=\"sequence\">assign</param>\n"
    "    <param name=\"pulse\">0</param>\n"
    "  </operator>\n"
    "  <operator name=\"y[0]\" kind=\"Dedup\" origin=\"y\" region=\"r2\" channel=\"0\">\n"
    "    <input stream=\"X.r2[0]\"/><output stream=\"Y[0]\" schema=\"T\"/>\n"
    "    <param name=\"partitionBy\">a b c</param>\n"
    "  </operator>\n"
    "  <operator name=\"y[1]\" kind=\"Dedup\" origin=\"y\" region=\"r2\" channel=\"1\">\n"
    "    <input stream=\"X.r2[1]\"/><output stream=\"Y[1]\" schema=\"T\"/>\n"
    "    <param name=\"partitionBy\">a b c</param>\n"
    "  </operator>\n"
    "  <operator name=\"r2.merge\" kind=\"Merge\" origin=\"y\" region=\"r2\">\n"
    "    <input stream=\"Y[0]\"/><input stream=\"Y[1]\"/>\n"
    "    <output stream=\"Y\" schema=\"T\"/>\n"
    "    <param name=\"order\">seq</param>\n"
    "  </operator>\n"
    "  <operator name=\"out\" kind=\"FileSink\">\n"
    "    <input stream=\"Y\"/>\n"
    "    <param name=\"file\">o.csv</param>\n"
    "  </operator>\n"
    "</graph>\n";
  g = unit_graph_text(CHAIN);
  dot = unit_write_string(graph_dot_parallel, g);
  assert_contains(dot, "    label=\"r1: width 2, roundrobin, merge roundrobin\";\n");
  assert_contains(dot, "    label=\"r2: width 2, hash on a, b and c, merge seq\";\n");
  assert_contains(dot, "\"r2.split\" [label=\"r2.split\\nSplit hash(a, b, c)\", ");
  assert_contains(dot, "      label=\"channel 1\";\n");
  assert_contains(dot, "  \"r1.merge\" -> \"r2.split\" [label=\"X\"];\n");
  assert_contains(dot, "  \"r1.split\" -> \"x[1]\" [tooltip=\"S.r1[1]\"];\n");
  assert_contains(dot, "  \"y[0]\" -> \"r2.merge\" [tooltip=\"Y[0]\"];\n");
  assert_contains(dot, "  \"r2.merge\" -> \"out\" [label=\"Y\"];\n");
  assert_renders_cleanly(dot, "two regions in a row");
  free(dot);
  graph_free(g);
}
END_TEST

/* Without regions and hosts the parallel picture is the plain one: no clusters, no legend, white. */
START_TEST(test_dot_parallel_without_hosts) {
  Graph *g = unit_graph_text(TINY);
  char *dot = unit_write_string(graph_dot_parallel, g);
  ck_assert_ptr_null(strstr(dot, "subgraph"));
  ck_assert_ptr_null(strstr(strstr(dot, "fillcolor") + 1, "fillcolor")); /* only the default's */
  assert_contains(dot, "  \"w\" [label=\"w\\nWork\", tooltip=\"Work operator w\"];\n");
  assert_renders_cleanly(dot, "a graph without regions or hosts");
  free(dot);
  graph_free(g);
}
END_TEST

/* More hosts than palette colours: the colours wrap around, the legend lists every host. */
START_TEST(test_dot_parallel_palette_wraps) {
  Graph *g = unit_graph_text(TINY);
  enum { NHOSTS = 13 };
  g->hosts = arena_alloc(g->arena, sizeof(Host *) * NHOSTS);
  for (int i = 0; i < NHOSTS; i++) {
    Host *h = arena_alloc(g->arena, sizeof *h);
    h->name = arena_printf(g->arena, "h%d", i);
    h->address = arena_printf(g->arena, "127.0.0.1:%d", 7000 + i);
    g->hosts[i] = h;
  }
  g->nhosts = NHOSTS;
  graph_find_op(g, "src")->host = "h12";
  graph_find_op(g, "w")->host = "h11";
  graph_find_op(g, "o1")->host = "elsewhere";
  char *dot = unit_write_string(graph_dot_parallel, g);
  assert_contains(dot, "\"src\" [label=\"src\\nBeacon\", shape=invhouse, margin=\"0.04,0.02\", style=\"filled\", "
                       "fillcolor=\"#a6cee3\"");
  assert_contains(dot, "\"w\" [label=\"w\\nWork\", fillcolor=\"#ffed6f\"");
  assert_contains(dot, "\"o1\" [label=\"o1\\nFileSink\", shape=house, margin=\"0.04,0.02\", style=\"filled\", "
                       "tooltip=");
  assert_contains(dot, "<tr><td bgcolor=\"#a6cee3\">h12</td><td>127.0.0.1:7012</td></tr></table>");
  assert_renders_cleanly(dot, "a graph with 13 hosts");
  free(dot);
  graph_free(g);
}
END_TEST

START_TEST(test_dot_renders_example_graph) {
  char *text = unit_read_file(SF_SOURCE_DIR "/graphs/vwap.xml", NULL);
  ck_assert_ptr_nonnull(text);
  Graph *g = unit_graph_text(text);
  char *dot = unit_write_string(graph_dot_input, g);
  assert_contains(dot, "  \"big\" -> \"bars\" [label=\"BigTrades\"];\n");
  assert_renders_cleanly(dot, "graphs/vwap.xml");
  free(dot);
  graph_free(g);
  free(text);
}
END_TEST

/* Edges and region labels come from the links of a linked graph and by name from an unlinked one:
 * the pictures are the same byte for byte. */
START_TEST(test_dot_same_linked_or_not) {
  Graph *linked = unit_graph_text(PARALLEL);
  Diag d;
  diag_init(&d, "t.xml", stderr);
  Graph *unlinked = graph_parse_memory(PARALLEL, strlen(PARALLEL), "t.xml", XSD, &d);
  ck_assert_ptr_nonnull(unlinked);
  ck_assert_int_eq(unlinked->streams.n, 0);
  ck_assert_ptr_null(unlinked->ops[0]->outputs[0].resolved);
  UnitWriter writers[] = { graph_dot_input, graph_dot_parallel };
  for (int w = 0; w < 2; w++) {
    char *a = unit_write_string(writers[w], linked), *b = unit_write_string(writers[w], unlinked);
    assert_contains(a, "  \"r1.split[1]\" -> \"r2.merge[0]\" [");
    ck_assert_str_eq(b, a);
    free(a);
    free(b);
  }
  graph_free(unlinked);
  graph_free(linked);
}
END_TEST

static Suite *emit_suite(void) {
  Suite *s = suite_create("emit");
  TCase *xml = unit_case(s, "xml", NULL, NULL, 0);
  tcase_add_test(xml, test_emit_small_exact);
  tcase_add_test(xml, test_emit_is_deterministic);
  tcase_add_test(xml, test_emit_keeps_set_state_order);
  tcase_add_test(xml, test_emit_escapes_texts_and_attributes);
  tcase_add_test(xml, test_emit_escapes_as_libxml2);
  tcase_add_test(xml, test_emit_round_trip_small);
  tcase_add_test(xml, test_emit_time_ordered_input);
  tcase_add_test(xml, test_emit_round_trip_special);
  tcase_add_test(xml, test_emit_round_trip_parallel);
  tcase_add_test(xml, test_emit_round_trip_example_graph);
  tcase_add_test(xml, test_emit_operator_attribute_order);
  tcase_add_test(xml, test_emit_model_from_fields);
  tcase_add_test(xml, test_emit_reports_write_errors);
  TCase *dot = unit_case(s, "dot", NULL, NULL, 60);
  tcase_add_test(dot, test_dot_input_exact);
  tcase_add_test(dot, test_dot_escapes_and_shortens);
  tcase_add_test(dot, test_dot_parallel_clusters_shapes_colours);
  tcase_add_test(dot, test_dot_parallel_region_labels);
  tcase_add_test(dot, test_dot_parallel_without_hosts);
  tcase_add_test(dot, test_dot_parallel_palette_wraps);
  tcase_add_test(dot, test_dot_renders_example_graph);
  tcase_add_test(dot, test_dot_same_linked_or_not);
  return s;
}

int main(void) {
  return unit_run(emit_suite());
}
