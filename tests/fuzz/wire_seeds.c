/* wire_seeds.c: sf-fuzz-wire-seeds DIR writes the seed corpus of the wire fuzz target: batches of
 * edge 'e' and schema W (wire_schema.h) encoded by wire_encode, one file each: an empty batch, one
 * tuple, every item kind, strings with commas, quotes, NUL and non-ASCII bytes, extreme numbers,
 * a batch for another edge, and two control messages (a request, a done report of the largest
 * number). Generated at build time, so the seeds follow rt/wire.proto. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "wire_schema.h"

static const char *dir;

/* Writes b as DIR/NAME and releases it; exits 1 on failure. */
static void write_seed(const char *name, Buf b) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(b.p ? b.p : "", 1, b.n, f) != b.n || fclose(f) != 0) {
    fprintf(stderr, "sf-fuzz-wire-seeds: error: cannot write '%s': %s\n", path, strerror(errno));
    exit(1);
  }
  buf_release(&b);
}

/* Writes the encoding of items[0..n) on edge as DIR/NAME. */
static void seed(const char *name, const char *edge, Item *items, int n) {
  Buf b;
  buf_init(&b);
  wire_encode(edge, &fuzz_wire_schema, items, n, &b);
  write_seed(name, b);
}

/* Writes the encoding of control message m as DIR/NAME. */
static void seed_ctl(const char *name, WireCtl m) {
  Buf b;
  buf_init(&b);
  wire_ctl_encode(&m, &b);
  write_seed(name, b);
}

static Item tuple(uint64_t seq, int64_t id, double price, const char *name, size_t len, bool ok) {
  Value v[4];
  value_put_int(&v[0], id);
  value_put_double(&v[1], price);
  value_put_string(&v[2], name, len);
  value_put_bool(&v[3], ok);
  return (Item){ .kind = ITEM_TUPLE, .seq = seq, .src = seq, .t = tuple_new(v, 4) };
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: sf-fuzz-wire-seeds DIR\n");
    return 2;
  }
  dir = argv[1];
  Item items[8];
  seed("empty", FUZZ_WIRE_EDGE, items, 0);
  items[0] = tuple(1, 42, 2.5, "IBM", 3, true);
  seed("one-tuple", FUZZ_WIRE_EDGE, items, 1);
  items[1] = (Item){ .kind = ITEM_PULSE, .seq = 2, .src = 2 };
  items[2] = (Item){ .kind = ITEM_WINDOW, .seq = 3, .src = 3 };
  items[3] = (Item){ .kind = ITEM_PROGRESS, .seq = 4, .src = 4 };
  items[4] = tuple(5, -7, -0.0, "a,\"b\"\nc", 8, false);
  items[5] = (Item){ .kind = ITEM_FINAL, .seq = UINT64_MAX, .src = UINT64_MAX };
  seed("every-kind", FUZZ_WIRE_EDGE, items, 6);
  tuple_unref(items[0].t);
  tuple_unref(items[4].t);
  items[0] = tuple(0, INT64_MIN, DBL_MAX, "\0nul\xff\xfe", 7, false);
  items[1] = tuple(1, INT64_MAX, NAN, "\xc3\xa9t\xc3\xa9", 6, true);
  items[2] = tuple(2, 0, INFINITY, "", 0, false);
  items[3] = tuple(3, 1, DBL_TRUE_MIN, "x", 1, true);
  seed("extremes", FUZZ_WIRE_EDGE, items, 4);
  seed("other-edge", "f>g/0", items, 4);
  for (int i = 0; i < 4; i++) tuple_unref(items[i].t);
  seed_ctl("ctl-request", (WireCtl){.kind = WIRE_CKPT_REQUEST, .ckpt = 3, .pos = 123456});
  seed_ctl("ctl-done", (WireCtl){.kind = WIRE_CKPT_DONE, .ckpt = UINT64_MAX});
  return 0;
}
