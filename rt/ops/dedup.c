/* dedup.c: the Dedup kind. Emits the first tuple of each key (the partitionBy attributes) as it is
 * (the same tuple, no copy) and drops every later one.
 *
 * Memory grows with the number of distinct keys: each key seen is remembered (its values, strings
 * copied, plus a table entry) until the operator closes, since a key may come back at any time. */
#include "keyed.h"

#include <stdlib.h>

static int dedup_open(OpInst *op) {
  KeyTable *seen = sf_xmalloc(sizeof *seen);
  op->state = seen;
  return keytable_init(seen, op, 0);
}

static int dedup_process(OpInst *op, int port, Tuple *t) {
  bool first;
  if (!keytable_find(op->state, t, &first)) {
    tuple_unref(t);
    return -1;
  }
  if (first) return rt_emit(op, 0, t);
  tuple_unref(t);
  return 0;
}

static int dedup_final(OpInst *op) {
  return 0;
}

/* Checkpoints: the KeyTable of the keys seen (no data per key). */
static int dedup_snapshot(OpInst *op, Buf *out) {
  keytable_snapshot(op->state, out, NULL, NULL);
  return 0;
}

static int dedup_restore(OpInst *op, SnapIn *in) {
  if (keytable_restore(op->state, op, in, NULL, NULL)) return -1;
  return keyed_restore_end(op, in);
}

static void dedup_close(OpInst *op, bool ok) {
  if (!op->state) return;
  keytable_release(op->state);
  free(op->state);
  op->state = NULL;
}

const OpKindImpl op_dedup = {
  .kind = KIND_DEDUP,
  .open = dedup_open,
  .process = dedup_process,
  .final = dedup_final,
  .close = dedup_close,
  .snapshot = dedup_snapshot,
  .restore = dedup_restore,
};
