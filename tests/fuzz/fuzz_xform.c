/* fuzz_xform.c: libFuzzer target for the whole sf-xform front end on an in-memory graph: parse
 * (XML, schema), check, check_pins, analyze, regions, explain, rewrite, place, and the XML and dot
 * emitters, exactly in sf-xform's order (a pass with errors stops, and each pass's diagnostics are
 * flushed as the driver does). The width (1 to 4) comes from the input's length, so the corpus
 * exercises several. Diagnostics go to /dev/null; every graph is freed (LeakSanitizer). */
#include <stdint.h>
#include <stdio.h>

#include "sf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *sink;
  static const char *xsd;
  if (!sink) {
    sink = fopen("/dev/null", "w");
    xsd = sf_schema_path();
  }
  Diag d;
  diag_init(&d, "fuzz.xml", sink);
  Graph *g = graph_parse_memory((const char *)data, size, "fuzz.xml", xsd, &d);
  diag_flush(&d, DIAG_AS_REPORTED);
  if (!g) return 0;
  graph_check(g, &d);
  diag_flush(&d, DIAG_BY_PLACE);
  if (d.nerrors == 0) {
    graph_check_pins(g, g->hosts, g->nhosts, &d);
    diag_flush(&d, DIAG_BY_PLACE);
  }
  if (d.nerrors == 0) {
    graph_dot_input(g, sink);
    graph_analyze(g);
    Fission *f = fission_regions(g, 1 + (int)(size % 4));
    fission_explain(f, sink);
    Graph *parallel = fission_rewrite(f);
    parallel->hosts = g->hosts;
    parallel->nhosts = g->nhosts;
    graph_place(parallel, &d);
    diag_flush(&d, DIAG_BY_PLACE);
    if (d.nerrors == 0) {
      graph_emit_xml(parallel, sink);
      graph_dot_parallel(parallel, sink);
    }
    graph_free(parallel);
  }
  graph_free(g);
  return 0;
}
