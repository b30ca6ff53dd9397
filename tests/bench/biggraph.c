/* biggraph.c: sf-bench-biggraph N prints a valid StreamFission graph of about N operators (at least
 * N, at most one tree more) to standard output, for the transformer's scale benchmark
 * (tests/bench/xform.sh). The same N always gives the same bytes.
 *
 * The graph is a forest: each tree is a Beacon feeding a chain of 40 operators cycling through
 * Functor (stateless), Filter, keyed Aggregate (partitionBy k), Work and a keyed stateful Functor,
 * with a FileSink tap on every 8th stream (a fan-out, so the chain forms several regions) and a
 * FileSink at the end. All streams share one schema, so every expression is valid everywhere.
 * Names are numbered per tree (`t12.op7`, stream `t12.s7`), like a generated application's. */
#include <stdio.h>
#include <stdlib.h>

enum { CHAIN = 40, TAP_EVERY = 8 };

static void put_op(int t, int i, const char *in) {
  printf("  <operator name=\"t%d.op%d\" kind=", t, i);
  switch (i % 5) {
  case 0:
    printf("\"Functor\">\n    <input stream=\"%s\"/>\n    <output stream=\"t%d.s%d\" schema=\"T\"/>\n"
           "    <set attr=\"v\">v * 3 + k</set>\n    <set attr=\"x\">x / 2.0</set>\n",
           in, t, i);
    break;
  case 1:
    printf("\"Filter\">\n    <input stream=\"%s\"/>\n    <output stream=\"t%d.s%d\" schema=\"T\"/>\n"
           "    <param name=\"where\">v %% 7 != 0</param>\n",
           in, t, i);
    break;
  case 2:
    printf("\"Aggregate\">\n    <input stream=\"%s\"/>\n    <output stream=\"t%d.s%d\" schema=\"T\"/>\n"
           "    <param name=\"window\">tumbling 10</param>\n    <param name=\"partitionBy\">k</param>\n"
           "    <set attr=\"v\">sum(v)</set>\n    <set attr=\"x\">avg(x)</set>\n",
           in, t, i);
    break;
  case 3:
    printf("\"Work\">\n    <input stream=\"%s\"/>\n    <output stream=\"t%d.s%d\" schema=\"T\"/>\n"
           "    <param name=\"iterations\">10</param>\n",
           in, t, i);
    break;
  default:
    printf("\"Functor\">\n    <input stream=\"%s\"/>\n    <output stream=\"t%d.s%d\" schema=\"T\"/>\n"
           "    <param name=\"partitionBy\">k</param>\n"
           "    <set attr=\"v\">total</set>\n"
           "    <state name=\"total\" type=\"int\" init=\"0\">total + v</state>\n",
           in, t, i);
    break;
  }
  printf("  </operator>\n");
}

static void put_sink(const char *name, const char *in) {
  printf("  <operator name=\"%s\" kind=\"FileSink\">\n    <input stream=\"%s\"/>\n"
         "    <param name=\"file\">out/%s.csv</param>\n  </operator>\n",
         name, in, name);
}

int main(int argc, char **argv) {
  long n = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
  if (n < 1) {
    fprintf(stderr, "usage: sf-bench-biggraph N (operators, at least 1)\n");
    return 2;
  }
  printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<graph xmlns=\"urn:streamfission:graph:1\" name=\"big\">\n"
         "  <schema name=\"T\"><attr name=\"k\" type=\"int\"/><attr name=\"v\" type=\"int\"/>"
         "<attr name=\"x\" type=\"double\"/></schema>\n");
  char in[64], name[64];
  for (long ops = 0, t = 0; ops < n; t++) {
    printf("  <operator name=\"t%ld.src\" kind=\"Beacon\">\n    <output stream=\"t%ld.s\" schema=\"T\"/>\n"
           "    <param name=\"count\">1000</param>\n    <set attr=\"k\">seq %% 10</set>\n"
           "    <set attr=\"v\">seq</set>\n    <set attr=\"x\">double(seq)</set>\n  </operator>\n",
           t, t);
    ops++;
    snprintf(in, sizeof in, "t%ld.s", t);
    for (int i = 0; i < CHAIN; i++) {
      put_op((int)t, i, in);
      snprintf(in, sizeof in, "t%ld.s%d", t, i);
      ops++;
      if (i % TAP_EVERY == TAP_EVERY - 1) {
        snprintf(name, sizeof name, "t%ld.tap%d", t, i);
        put_sink(name, in);
        ops++;
      }
    }
    snprintf(name, sizeof name, "t%ld.sink", t);
    put_sink(name, in);
    ops++;
  }
  printf("</graph>\n");
  return ferror(stdout) ? 1 : 0;
}
