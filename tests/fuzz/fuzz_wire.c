/* fuzz_wire.c: libFuzzer target for the wire decoder (rt/wire.c): the input is one message as it
 * would arrive on edge 'e' whose tuples have the schema W(id int, price double, name string,
 * ok bool) (the schema of the seed batches, tests/fuzz/wire_seeds.c). A batch that decodes is
 * encoded again and must decode to the same items; a difference aborts. Every tuple is released.
 * The same bytes are also decoded as a control message (wire_ctl_decode); one that decodes must
 * encode and decode again to the same message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "wire_schema.h"

static void release(Item *items, int n) {
  for (int i = 0; i < n; i++)
    if (items[i].kind == ITEM_TUPLE) tuple_unref(items[i].t);
  free(items);
}

/* The bytes as a control message. */
static void control(const uint8_t *data, size_t size) {
  WireCtl m, m2;
  char err[256];
  if (wire_ctl_decode(data, size, &m, err, sizeof err)) return;
  Buf again;
  buf_init(&again);
  wire_ctl_encode(&m, &again);
  if (wire_ctl_decode(again.p, again.n, &m2, err, sizeof err) != 0 || m2.kind != m.kind || m2.ckpt != m.ckpt ||
      m2.pos != m.pos) {
    fprintf(stderr, "fuzz_wire: a decoded control message, encoded again, does not decode the same\n");
    abort();
  }
  buf_release(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Item *items;
  int n;
  char err[256];
  control(data, size);
  if (wire_decode(data, size, FUZZ_WIRE_EDGE, &fuzz_wire_schema, FUZZ_WIRE_MAX_ITEMS, &items, &n, err, sizeof err))
    return 0;
  Buf again;
  buf_init(&again);
  wire_encode(FUZZ_WIRE_EDGE, &fuzz_wire_schema, items, n, &again);
  Item *items2;
  int n2;
  if (wire_decode(again.p, again.n, FUZZ_WIRE_EDGE, &fuzz_wire_schema, FUZZ_WIRE_MAX_ITEMS, &items2, &n2, err,
                  sizeof err) != 0) {
    fprintf(stderr, "fuzz_wire: a decoded batch of %d items, encoded again, does not decode: %s\n", n, err);
    abort();
  }
  bool same = n == n2;
  for (int i = 0; same && i < n; i++) {
    same = items[i].kind == items2[i].kind && items[i].seq == items2[i].seq && items[i].src == items2[i].src;
    for (int k = 0; same && items[i].kind == ITEM_TUPLE && k < fuzz_wire_schema.nattrs; k++)
      same = value_equal(&items[i].t->v[k], &items2[i].t->v[k]);
  }
  if (!same) {
    fprintf(stderr, "fuzz_wire: a decoded batch of %d items decodes differently once encoded again\n", n);
    abort();
  }
  release(items, n);
  release(items2, n2);
  buf_release(&again);
  return 0;
}
