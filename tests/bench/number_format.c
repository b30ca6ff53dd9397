/* number_format.c: the number formatting micro-benchmark. ns per value of double_format (and of
 * int_format) against the printf-based formatter it replaced (tests/unit/number_reference.h) and
 * printf's %lld, on the same values in the same run; the texts are checked identical first.
 * usage: sf-bench-number-format [N] [RUNS]  (N values per family, default 1000000; best of RUNS,
 * default 3). Prints one line per family: name, old ns/value, new ns/value, speed-up. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../unit/number_reference.h"
#include "sf.h"

static uint64_t rng = 42;
static uint64_t next(void) {
  uint64_t z = (rng += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile size_t sink; /* keeps the formatting from being optimized away */

typedef size_t (*DoubleFn)(double, char *, size_t);

static double time_doubles(DoubleFn f, const double *v, long n, int runs) {
  double best = 1e30;
  char buf[40];
  for (int r = 0; r < runs; r++) {
    double t0 = now();
    size_t total = 0;
    for (long i = 0; i < n; i++) total += f(v[i], buf, sizeof buf);
    double t = now() - t0;
    sink += total;
    if (t < best) best = t;
  }
  return best * 1e9 / (double)n;
}

static size_t int_printf(int64_t i, char *buf) { return (size_t)snprintf(buf, SF_INT_CHARS, "%" PRId64, i); }

typedef size_t (*IntFn)(int64_t, char *);

static double time_ints(IntFn f, const int64_t *v, long n, int runs) {
  double best = 1e30;
  char buf[SF_INT_CHARS];
  for (int r = 0; r < runs; r++) {
    double t0 = now();
    size_t total = 0;
    for (long i = 0; i < n; i++) total += f(v[i], buf);
    double t = now() - t0;
    sink += total;
    if (t < best) best = t;
  }
  return best * 1e9 / (double)n;
}

static void row(const char *name, double old_ns, double new_ns) {
  printf("%-34s %9.1f %9.1f %8.1fx\n", name, old_ns, new_ns, old_ns / new_ns);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int runs = argc > 2 ? atoi(argv[2]) : 3;
  if (n < 1 || runs < 1) {
    fprintf(stderr, "usage: sf-bench-number-format [N] [RUNS]\n");
    return 2;
  }
  double *v = malloc((size_t)n * sizeof *v);
  int64_t *iv = malloc((size_t)n * sizeof *iv);
  if (!v || !iv) return 1;
  static const char *names[] = {"doubles: the chain's z = seq * 0.25", "doubles: cents (n / 100)",
                                "doubles: uniform [0, 1)", "doubles: random bit patterns"};
  printf("%-34s %9s %9s %9s\n", "values", "old ns", "new ns", "speed-up");
  for (int fam = 0; fam < 4; fam++) {
    for (long i = 0; i < n; i++) {
      uint64_t r = next();
      switch (fam) {
      case 0: v[i] = (double)i * 0.25; break;
      case 1: v[i] = (double)(r >> 40) / 100; break;
      case 2: v[i] = (double)(r >> 11) * 0x1p-53; break;
      default: {
        memcpy(&v[i], &r, sizeof r);
        if (v[i] != v[i]) v[i] = 0; /* NaN: a short text, not what we measure */
      }
      }
      char a[40], b[40];
      if (i < 100000 && (double_format(v[i], a, sizeof a), double_format_reference(v[i], b, sizeof b), strcmp(a, b))) {
        fprintf(stderr, "number: double_format(%a) gives %s, the old formatter %s\n", v[i], a, b);
        return 1;
      }
    }
    double t_old = time_doubles(double_format_reference, v, n, runs);
    double t_new = time_doubles(double_format, v, n, runs);
    row(names[fam], t_old, t_new);
  }
  for (long i = 0; i < n; i++) {
    uint64_t r = next();
    iv[i] = i % 2 ? (int64_t)(r % 2000) : (int64_t)r; /* small (the chain's) and any size */
    char a[SF_INT_CHARS + 1], b[32];
    a[int_format(iv[i], a)] = 0;
    snprintf(b, sizeof b, "%" PRId64, iv[i]);
    if (strcmp(a, b)) {
      fprintf(stderr, "number: int_format(%s) gives %s\n", b, a);
      return 1;
    }
  }
  row("ints: snprintf %lld vs int_format", time_ints(int_printf, iv, n, runs), time_ints(int_format, iv, n, runs));
  free(v);
  free(iv);
  return 0;
}
