/* baseline_chain.c: the benchmark's hand-written baseline. Does by hand exactly what the graph
 * tests/bench/chain.sh generates does (Beacon -> Functor -> Filter -> FileSink): the same values,
 * the same CSV bytes (the benchmark checks the files are identical), with no framework at all.
 * Written as an expert would write it, so that it flatters nothing: ints formatted two digits at a
 * time from a table, the double with sf's own shortest form (the bytes must be sf's), rows put
 * into a 1 MiB buffer of its own that goes out with write(2) when full, and the file fsynced at the
 * end, as sf's FileSink does (the TBB peer of tests/bench/tbb does the same).
 * usage: sf-bench-baseline-chain N OUT.csv */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "value.h"

enum { OUT_BYTES = 1 << 20, ROW_MAX = 64 + SF_DOUBLE_CHARS };

static char out[OUT_BYTES];
static size_t used;
static int fd = -1;

static void flush_out(void) {
  for (size_t off = 0; off < used;) {
    ssize_t n = write(fd, out + off, used - off);
    if (n <= 0) {
      perror("sf-bench-baseline-chain: write");
      exit(1);
    }
    off += (size_t)n;
  }
  used = 0;
}

static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                            "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                            "8081828384858687888990919293949596979899";

/* v's decimal digits at p (a minus first when negative); returns the end. */
static char *put_int(char *p, long long v) {
  unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
  if (v < 0) *p++ = '-';
  char tmp[20], *t = tmp + sizeof tmp;
  while (u >= 100) {
    unsigned d = (unsigned)(u % 100) * 2;
    u /= 100;
    *--t = pairs[d + 1];
    *--t = pairs[d];
  }
  if (u >= 10) {
    *--t = pairs[u * 2 + 1];
    *--t = pairs[u * 2];
  } else {
    *--t = (char)('0' + u);
  }
  size_t n = (size_t)(tmp + sizeof tmp - t);
  memcpy(p, t, n);
  return p + n;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: sf-bench-baseline-chain N OUT.csv\n");
    return 2;
  }
  long long n = atoll(argv[1]);
  fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror("sf-bench-baseline-chain: open");
    return 1;
  }
  memcpy(out, "k,y,z\n", 6);
  used = 6;
  for (long long seq = 0; seq < n; seq++) {
    long long k = seq % 100;                     /* Beacon: k = seq % 100 */
    long long v = sf_rand(seq) % 1000;           /*         v = rand(seq) % 1000 */
    double x = (double)seq * 0.5;                /*         x = double(seq) * 0.5 */
    long long y = v * 3 + k;                     /* Functor: y = v * 3 + k */
    double z = x / 2.0;                          /*          z = x / 2.0 */
    if (y % 7 == 0) continue;                    /* Filter: y % 7 != 0 */
    if (used + ROW_MAX > OUT_BYTES) flush_out(); /* FileSink: CSV row */
    char *p = put_int(out + used, k);
    *p++ = ',';
    p = put_int(p, y);
    *p++ = ',';
    p += value_format_double(z, p, SF_DOUBLE_CHARS);
    *p++ = '\n';
    used = (size_t)(p - out);
  }
  flush_out();
  if (fsync(fd) != 0 || close(fd) != 0) {
    perror("sf-bench-baseline-chain: fsync");
    return 1;
  }
  return 0;
}
