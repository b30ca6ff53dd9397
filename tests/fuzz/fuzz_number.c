/* fuzz_number.c: libFuzzer target for xform/number.c. The first 8 bytes of an input are the bits
 * of a double: double_format and double_format_checked must give exactly the text of
 * double_format_reference (the printf formatter they replaced); the next 8 bytes are an int64
 * that int_format must write as printf's %lld, and byte 16 a cap below SF_DOUBLE_CHARS with which
 * double_format must truncate like the reference.
 * Built only by clang (tests/fuzz/CMakeLists.txt); run it as
 *   build/bin/sf-fuzz-number -max_total_time=300 [CORPUS_DIR] */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "number_reference.h"
#include "sf.h"

static void fail(const char *what, double d, const char *got, const char *want) {
  fprintf(stderr, "%s(%a): \"%s\", the reference \"%s\"\n", what, d, got, want);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t bits = 0;
  memcpy(&bits, data, size < 8 ? size : 8);
  double d;
  memcpy(&d, &bits, sizeof d);
  char want[40], got[SF_DOUBLE_CHARS + 1];
  size_t nw = double_format_reference(d, want, sizeof want);
  if (double_format(d, got, SF_DOUBLE_CHARS) != nw || strcmp(got, want)) fail("double_format", d, got, want);
  if (double_format_checked(d, got, SF_DOUBLE_CHARS) != nw || strcmp(got, want))
    fail("double_format_checked", d, got, want);
  if (size >= 17) { /* a cap from the input */
    size_t cap = data[16] % SF_DOUBLE_CHARS;
    memset(got, 'x', sizeof got);
    memset(want, 'x', sizeof got);
    if (double_format(d, got, cap) != double_format_reference(d, want, cap) || memcmp(got, want, sizeof got))
      fail("double_format with a small cap", d, got, want);
  }
  if (size >= 16) {
    int64_t i;
    memcpy(&i, data + 8, sizeof i);
    char text[SF_INT_CHARS + 1], ref[32];
    text[int_format(i, text)] = 0;
    snprintf(ref, sizeof ref, "%" PRId64, i);
    if (strcmp(text, ref)) fail("int_format", (double)i, text, ref);
  }
  return 0;
}
