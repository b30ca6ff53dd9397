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

/* A run: every key hashed first (its bucket prefetched), then looked up in order; the first tuple
 * of each key is kept and the kept ones go on as one run. Before a lookup that may fail (a new key
 * that makes the table grow, or any with --max-state-memory) the kept tuples go on first, so a
 * failure follows every output before it, as tuple by tuple. */
static int dedup_process_run(OpInst *op, int port, Item *items, int n) {
  KeyTable *kt = op->state;
  uint64_t hash[KEYED_RUN];
  int kept = 0;
  for (int base = 0; base < n; base += KEYED_RUN) {
    int m = n - base < KEYED_RUN ? n - base : KEYED_RUN;
    keytable_hash_run(kt, items + base, m, hash);
    for (int r = 0; r < m; r++) {
      Item *it = &items[base + r];
      if (keytable_may_fail(kt) && kept) {
        int rc = rt_emit_run(op, 0, items, kept);
        kept = 0;
        if (rc < 0) {
          keyed_release_items(it, n - base - r);
          return -1;
        }
      }
      bool first;
      if (!keytable_find_hashed(kt, it->t, hash[r], &first)) {
        keyed_release_items(it, n - base - r);
        return -1;
      }
      if (first) items[kept++] = *it;
      else tuple_unref(it->t);
    }
  }
  return rt_emit_run(op, 0, items, kept);
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
  .process_run = dedup_process_run,
  .final = dedup_final,
  .close = dedup_close,
  .snapshot = dedup_snapshot,
  .restore = dedup_restore,
};
