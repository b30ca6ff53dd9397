/* merge.c: the Merge operator at the exit of a parallel region (and at the start of each channel
 * of a shuffle). Which input goes next — roundrobin, seq or seqpulse — is decided by the
 * executor's ordered driver before an item reaches this operator (order.c), so
 * here a tuple only leaves: a region's final Merge gives it back its position in the outer stream,
 * a shuffle Merge inside a channel keeps the region's sequence number. Pulses stop here. */
#include "rt.h"

static int merge_process(OpInst *op, int port, Tuple *t) {
  bool in_channel = op->op->channel >= 0;
  if (in_channel && op->cur_key) /* in a channel: a tuple emitted at a punctuation keeps its place */
    return rt_emit_item(op, 0, &(Item){ .kind = ITEM_KEYED, .keylen = op->cur_keylen, .seq = op->cur_seq,
                                       .src = op->cur_src, .key = op->cur_key, .t = t });
  return rt_emit_item(op, 0, &(Item){ .kind = ITEM_TUPLE, .seq = in_channel ? op->cur_seq : op->cur_src,
                                     .src = op->cur_src, .born = op->cur_born, .t = t });
}

static int merge_process_run(OpInst *op, int port, Item *items, int n) {
  if (op->op->channel < 0)
    for (int i = 0; i < n; i++) items[i].seq = items[i].src;
  return rt_emit_run(op, 0, items, n);
}

static int merge_pulse(OpInst *op, int port, uint64_t seq) {
  if (op->op->channel < 0) return 0;
  return rt_emit_item(op, 0, &(Item){ .kind = ITEM_PULSE, .seq = seq, .src = op->cur_src });
}

/* A checkpoint barrier leaves like a tuple: a region's final Merge gives it the outer stream's
 * position, so nothing after it goes back. */
static int merge_barrier(OpInst *op, Item b) {
  if (op->op->channel < 0) b.seq = b.src;
  return rt_emit_item(op, 0, &b);
}

/* Window punctuation too: it leaves a region's final Merge at the outer stream's position. */
static int merge_window(OpInst *op, int port) {
  bool in_channel = op->op->channel >= 0;
  return rt_emit_item(op, 0, &(Item){ .kind = ITEM_WINDOW, .seq = in_channel ? op->cur_seq : op->cur_src,
                                     .src = op->cur_src });
}

/* A tick, once every channel delivered it: at the outer stream's position, as window punctuation. */
static int merge_tick(OpInst *op, int port, int64_t t) {
  bool in_channel = op->op->channel >= 0;
  return rt_emit_item(op, 0, &(Item){ .kind = ITEM_TICK, .seq = in_channel ? op->cur_seq : op->cur_src,
                                     .src = op->cur_src, .tick = t });
}

const OpKindImpl op_merge = {
  .kind = KIND_MERGE,
  .process = merge_process,
  .process_run = merge_process_run,
  .pulse = merge_pulse,
  .window = merge_window,
  .tick = merge_tick,
  .barrier = merge_barrier,
};
