/* beacon.c: the Beacon kind, a source of generated tuples. Tuple n (0, 1, 2, ...) gets each output
 * attribute from its `set` evaluated with seq = n; `count` tuples are emitted (0: until the job
 * stops). With `rate`, tuple n is due n / rate seconds after the first: the source sleeps (in
 * slices of at most 50 ms, checking whether the job is stopping) only while it is ahead of that
 * absolute schedule, so oversleeping never accumulates into drift and a slow consumer is caught up
 * with at full speed. */
#include "rt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SLICE_NS = 50 * 1000 * 1000 };

typedef struct Beacon {
  uint64_t count; /* tuples to emit (0: unbounded) */
  double rate;    /* tuples per second (0: as fast as possible) */
  Value *vals;    /* the values of the tuple being built, by output attribute */
  Value *rows;    /* run_unpaced: the rows of a run being made, nvals values each */
  Value *cols;    /* run_unpaced: per set, its values over a run (CODE_RUN_MAX each) */
  int nvals;      /* output attributes */
  bool plain;     /* the output schema has no string attribute: runs are made in place */
  bool unset;     /* some output attribute has no set (it keeps its value of vals) */
  Arena *arena;   /* the compiled sets */
  Code **sets;    /* per set (op->op->sets order): its expression, compiled */
  uint64_t next;  /* the seq of the next tuple to emit (while rt_emit has tuple n: n) */
} Beacon;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void beacon_close(OpInst *op, bool ok);

/* beacon_open's work; on failure beacon_open releases the state. */
static int setup(OpInst *op, Beacon *b) {
  const char *count = rt_param(op, "count"), *rate = rt_param(op, "rate");
  char *end;
  int64_t c;
  if (!count || number_read(count, strlen(count), 0, INT64_MAX, &c) != NUM_OK)
    return rt_fail(op, "parameter 'count' must be a non-negative integer, got '%s'", count ? count : "");
  b->count = (uint64_t)c;
  if (rate) {
    b->rate = strtod(rate, &end);
    if (*end || !(b->rate > 0))
      return rt_fail(op, "parameter 'rate' must be a positive number of tuples per second, got '%s'", rate);
  }
  if (!op->out_schema) return rt_fail(op, "Beacon has no output schema");
  b->nvals = op->out_schema->nattrs;
  b->vals = sf_xmalloc(sizeof *b->vals * ((size_t)b->nvals + 1));
  for (int i = 0; i < b->nvals; i++) {
    Type t = op->out_schema->attrs[i].type;
    b->vals[i] = t == TYPE_INT ? value_int(0) : t == TYPE_DOUBLE ? value_double(0) : t == TYPE_BOOL ? value_bool(false)
                                                                                     : value_string("", 0);
  }
  for (int i = 0; i < op->op->nsets; i++)
    if (!op->op->sets[i].expr) return rt_fail(op, "set '%s' is not checked", op->op->sets[i].attr);
  b->plain = true;
  for (int i = 0; i < b->nvals; i++)
    if (op->out_schema->attrs[i].type == TYPE_STRING) b->plain = false;
  for (int i = 0; i < b->nvals; i++) {
    bool set = false;
    for (int k = 0; k < op->op->nsets; k++) set = set || op->op->sets[k].slot == i;
    if (!set) b->unset = true;
  }
  b->arena = arena_new();
  b->sets = arena_alloc(b->arena, sizeof *b->sets * ((size_t)op->op->nsets + 1));
  for (int i = 0; i < op->op->nsets; i++) b->sets[i] = code_compile(op->op->sets[i].expr, b->arena);
  return 0;
}

static int beacon_open(OpInst *op) {
  Beacon *b = sf_xmalloc(sizeof *b);
  memset(b, 0, sizeof *b);
  op->state = b;
  if (setup(op, b) == 0) return 0;
  beacon_close(op, false); /* the executor closes only operators whose open succeeded */
  return -1;
}

/* Waits until tuple n is due (start + n / rate). Returns 0, or -1 when the job stopped meanwhile. */
static int pace(OpInst *op, const Beacon *b, int64_t start, uint64_t n) {
  double offset = (double)n / b->rate * 1e9;
  if (offset > 9e18) offset = 9e18;
  int64_t due = start + (int64_t)offset;
  for (;;) {
    int64_t now = now_ns();
    if (now >= due) return 0;
    if (due - now > 1000000) rt_idle(op); /* about to sleep: let what we emitted go on */
    int64_t until = due - now > SLICE_NS ? now + SLICE_NS : due;
    struct timespec ts = { .tv_sec = until / 1000000000, .tv_nsec = until % 1000000000 };
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL); /* EINTR: just look again */
    if (rt_halting(op)) return -1;
  }
}

/* Reports the fault of set s (code c) at seq n, which code_eval just returned -1 for: the message
 * is built here, by evaluating c again, so that beacon_run carries no buffer for it. */
static __attribute__((cold, noinline)) int set_fail(OpInst *op, const Code *c, const EvalEnv *env,
                                                    const Set *s, uint64_t n) {
  char err[256];
  Value ignored;
  if (code_eval(c, env, &ignored, err, sizeof err) == 0) sf_die("a fault of code_eval did not repeat");
  return rt_fail(op, "set '%s': %s in '%s' at seq %llu", s->attr, err, s->text, (unsigned long long)n);
}

/* Emits the k tuples made[0..k) of a run, from seq first on. */
static int emit_made(OpInst *op, Item *run, Tuple **made, uint64_t first, int k) {
  if (k == 0) return 0;
  for (int j = 0; j < k; j++)
    run[j] = (Item){ .kind = ITEM_TUPLE, .seq = first + (uint64_t)j, .src = first + (uint64_t)j, .t = made[j] };
  op->cur_seq = op->cur_src = first; /* how far the thread has got while the run goes */
  int rc = rt_emit_run(op, 0, run, k);
  arena_reset(op->scratch); /* the registers, and the rows' strings, copied into the tuples */
  return rc;
}

/* The k tuples of a run, from seq first on (in seqs[0..k)), each set evaluated over the run
 * (code_eval_run, seq per row); returns how many rows were made before the first row on which a
 * set faults (k: none), *bad that set (the first one faulting on that row). Without string
 * attributes, the sets write straight into the tuples of a slab (code_eval_run_to); else into
 * their columns of b->cols, then the rows are filled from the columns and the tuples made from
 * them. */
static int make_run(OpInst *op, Beacon *b, const int64_t *seqs, int k, int room, Tuple **made, int *bad) {
  int nsets = op->op->nsets;
  EvalEnv env = { .scratch = op->scratch };
  *bad = -1;
  if (b->plain) {
    size_t stride = tuple_new_blank_rows(b->nvals, k, made);
    int all = k;
    if (b->unset)
      for (int r = 0; r < k; r++) memcpy(made[r]->v, b->vals, sizeof *b->vals * (size_t)b->nvals);
    for (int i = 0; i < nsets; i++) {
      int ok = code_eval_run_to(b->sets[i], &env, NULL, seqs, k, &made[0]->v[op->op->sets[i].slot], stride);
      if (__builtin_expect(ok < k, 0)) {
        k = ok; /* the rows from ok on are not made; set i faults on row ok */
        *bad = i;
      }
    }
    tuple_unref_all(made + k, all - k); /* the tuples of rows not made */
    return k;
  }
  for (int i = 0; i < nsets; i++) {
    int ok = code_eval_run(b->sets[i], &env, NULL, seqs, k, b->cols + (size_t)i * (size_t)room);
    if (__builtin_expect(ok < k, 0)) {
      k = ok;
      *bad = i;
    }
  }
  for (int r = 0; r < k; r++) {
    Value *row = b->rows + (size_t)r * b->nvals;
    memcpy(row, b->vals, sizeof *row * (size_t)b->nvals); /* attributes without a set */
    for (int i = 0; i < nsets; i++) row[op->op->sets[i].slot] = b->cols[(size_t)i * (size_t)room + (size_t)r];
  }
  tuple_new_rows(b->rows, b->nvals, k, made);
  return k;
}

/* beacon_run without pacing and checkpoints: up to `room` tuples made (make_run) and emitted as
 * one run. A fault of a set emits the tuples before its row first, as one at a time would have; of
 * the sets that fault on that row, the first one reports. */
static int run_unpaced(OpInst *op, Beacon *b, int room) {
  if (room > CODE_RUN_MAX) room = CODE_RUN_MAX;
  Item run[room];
  Tuple *made[room];
  int64_t seqs[room];
  int nsets = op->op->nsets;
  if (!b->plain && !b->rows) b->rows = sf_xmalloc(sizeof *b->rows * (size_t)room * ((size_t)b->nvals + 1));
  if (!b->plain && !b->cols) b->cols = sf_xmalloc(sizeof *b->cols * (size_t)room * ((size_t)nsets + 1));
  while (b->count == 0 || b->next < b->count) {
    if (rt_halting(op)) return 0; /* a drain ends the stream here */
    uint64_t first = b->next, end = first + (uint64_t)room;
    if (b->count && end > b->count) end = b->count;
    int k = (int)(end - first), bad;
    for (int r = 0; r < k; r++) seqs[r] = (int64_t)(first + (uint64_t)r);
    k = make_run(op, b, seqs, k, room, made, &bad);
    if (bad >= 0) {
      if (emit_made(op, run, made, first, k) < 0) return -1;
      uint64_t n = first + (uint64_t)k;
      b->next = n;
      EvalEnv env = { .seq = (int64_t)n, .scratch = op->scratch };
      return set_fail(op, b->sets[bad], &env, &op->op->sets[bad], n);
    }
    b->next = end;
    if (emit_made(op, run, made, first, k) < 0) return -1;
    op->cur_seq = op->cur_src = end - 1; /* the last tuple's, as after rt_emit of it (the end's) */
  }
  return 0;
}

static int beacon_run(OpInst *op) {
  Beacon *b = op->state;
  int room = rt_run_room(op);
  if (b->rate == 0 && room > 1) return run_unpaced(op, b, room);
  int64_t start = now_ns();
  uint64_t first = b->next; /* 0, or where a restore put it: the schedule starts there */
  for (uint64_t n = b->next; b->count == 0 || n < b->count; n = ++b->next) {
    if (rt_halting(op)) return 0; /* a drain ends the stream here */
    if (b->rate > 0 && pace(op, b, start, n - first) < 0) return 0;
    EvalEnv env = { .seq = (int64_t)n, .scratch = op->scratch };
    for (int i = 0; i < op->op->nsets; i++) {
      const Set *s = &op->op->sets[i];
      if (__builtin_expect(code_eval(b->sets[i], &env, &b->vals[s->slot], NULL, 0) < 0, 0))
        return set_fail(op, b->sets[i], &env, s, n);
    }
    Tuple *t = tuple_new(b->vals, b->nvals);
    op->cur_seq = op->cur_src = n;
    if (rt_emit(op, 0, t) < 0) return -1;
    arena_reset(op->scratch);
  }
  return 0;
}

static int beacon_process(OpInst *op, int port, Tuple *t) {
  tuple_unref(t);
  return rt_fail(op, "a Beacon has no input");
}

static int beacon_final(OpInst *op) {
  return 0;
}

/* Checkpoints: the seq of the next tuple (taken inside rt_emit of tuple n: n, as if it were not
 * emitted yet); a restore goes on from there, its pacing starting again at that tuple. */
static int beacon_snapshot(OpInst *op, Buf *out) {
  Beacon *b = op->state;
  snap_u64(out, b->next);
  return 0;
}

static int beacon_restore(OpInst *op, SnapIn *in) {
  Beacon *b = op->state;
  uint64_t next = snap_get_u64(in);
  if (!snap_done(in)) return rt_fail(op, "snapshot truncated or malformed");
  if (b->count && next > b->count)
    return rt_fail(op, "the snapshot is at tuple %llu, past the Beacon's count (%llu)", (unsigned long long)next,
                   (unsigned long long)b->count);
  b->next = next;
  return 0;
}

static void beacon_close(OpInst *op, bool ok) {
  Beacon *b = op->state;
  if (!b) return;
  free(b->vals);
  free(b->rows);
  free(b->cols);
  if (b->arena) arena_free(b->arena);
  free(b);
  op->state = NULL;
}

const OpKindImpl op_beacon = {
  .kind = KIND_BEACON,
  .open = beacon_open,
  .run = beacon_run,
  .process = beacon_process,
  .final = beacon_final,
  .close = beacon_close,
  .snapshot = beacon_snapshot,
  .restore = beacon_restore,
};
