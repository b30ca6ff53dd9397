/* baseline_chain.c: the benchmark's hand-written baseline. Does by hand exactly what the graph
 * tests/bench/chain.sh generates does (Beacon -> Functor -> Filter -> FileSink): the same values,
 * the same CSV bytes (the benchmark checks the files are identical), with no framework at all.
 * usage: sf-bench-baseline-chain N OUT.csv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: sf-bench-baseline-chain N OUT.csv\n");
    return 2;
  }
  long long n = atoll(argv[1]);
  FILE *f = fopen(argv[2], "w");
  if (!f) return 1;
  static char iobuf[1 << 20];
  setvbuf(f, iobuf, _IOFBF, sizeof iobuf);
  fputs("k,y,z\n", f);
  char num[SF_DOUBLE_CHARS];
  for (long long seq = 0; seq < n; seq++) {
    long long k = seq % 100;                     /* Beacon: k = seq % 100 */
    long long v = sf_rand(seq) % 1000;           /*         v = rand(seq) % 1000 */
    double x = (double)seq * 0.5;                /*         x = double(seq) * 0.5 */
    long long y = v * 3 + k;                     /* Functor: y = v * 3 + k */
    double z = x / 2.0;                          /*          z = x / 2.0 */
    if (y % 7 == 0) continue;                    /* Filter: y % 7 != 0 */
    value_format_double(z, num, sizeof num);     /* FileSink: CSV row */
    fprintf(f, "%lld,%lld,%s\n", k, y, num);
  }
  return fclose(f) == 0 ? 0 : 1;
}
