/* args.c: the option-value checks shared by sf-exec and sf-launch (see args.h). */
#include "args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool args_int(const char *prog, const char *what, const char *text, long min, long max, long *v) {
  char *end;
  errno = 0;
  long n = strtol(text, &end, 10);
  if (errno || end == text || *end || n < min || n > max) {
    fprintf(stderr, "%s: %s must be an integer from %ld to %ld, got '%s'\n", prog, what, min, max, text);
    return false;
  }
  *v = n;
  return true;
}

bool args_bytes(const char *prog, const char *what, const char *text, uint64_t *v) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(text, &end, 10);
  int shift = 0;
  if (*end && !end[1]) {
    const char *units = "KMG", *u = strchr(units, *end >= 'a' ? *end - 'a' + 'A' : *end);
    if (u && *u) {
      shift = 10 * (int)(u - units + 1);
      end++;
    }
  }
  if (errno || end == text || *end || *text < '0' || *text > '9' || n == 0 || n > (1ULL << 62) >> shift) {
    fprintf(stderr, "%s: %s must be a number of bytes from 1 to 2^62, with K, M or G for 2^10, 2^20, 2^30, "
                    "got '%s'\n", prog, what, text);
    return false;
  }
  *v = (uint64_t)n << shift;
  return true;
}

bool args_seconds(const char *prog, const char *what, const char *text, double *v) {
  char *end;
  double s = strtod(text, &end);
  if (end == text || *end || !(s >= 0.01 && s <= 86400)) {
    fprintf(stderr, "%s: %s must be a number of seconds from 0.01 to 86400, got '%s'\n", prog, what, text);
    return false;
  }
  *v = s;
  return true;
}

_Noreturn void args_try_help(const char *prog) {
  fprintf(stderr, "Try '%s --help' for more information.\n", prog);
  exit(2);
}

_Noreturn void args_usage_error(const char *prog, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", prog);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  args_try_help(prog);
}
