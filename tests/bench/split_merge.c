/* split_merge.c: the per-tuple cost of a region's serial ends, the Split and the Merge, each alone on
 * one core, for every strategy sf-xform writes, at widths 2, 4 and 8 or the ones given
 * (tests/bench/paper.sh runs it).
 *
 *   sf-bench-split-merge [N [ROUNDS [WIDTH...]]]   (default 2000000 tuples, 3 rounds, widths 2 4 8)
 *
 * The runtime's own code runs, as sf-exec runs it: the graph below (a Beacon, a Split, W channels of
 * a Filter, a Merge, a FileSink) is parsed, checked and planned by plan_build, and then pieces of the
 * plan are driven by hand on one thread pinned to one CPU (sched_setaffinity; $SF_BENCH_CPU, else
 * the last CPU this process may use). Nothing else of this process runs while a piece is timed.
 *   - Split: N pre-built tuples go to the Split in runs of RUN_MAX through the Beacon's
 *     rt_emit_run (the direct call a Beacon makes without checkpoints: split_process_run, then
 *     rt_emit_run of each stretch for one channel into its pending batch, pushed into the channel's
 *     queue when full, pulses as the Split sends them). The channels' threads do not
 *     run: every 4 batches per channel the clock stops and this thread empties the queues (the
 *     batches go back to the pool as a channel would release them), so the Split never waits for
 *     room and its batches stay in cache, as with running consumers.
 *   - Merge: the Split's outputs are wired straight into the Merge's input queues (as the channels'
 *     last operators push them), the queues made large enough to hold the whole stream, and a
 *     helper thread runs the Split over the N tuples until the end of stream; then, the helper
 *     gone, order_run (the Merge group's thread loop: the ordered driver of the Merge's order,
 *     merge_process, rt_emit_item) runs the whole stream into the FileSink's node, whose process is
 *     replaced by one that does nothing (the null consumer).
 * Each time is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that another process taking the
 * CPU does not count; the wall time is printed too.
 *
 * Strategies, as sf-xform writes them (xform/regions.c, rewrite.c):
 *   split roundrobin  strategy roundrobin, sequence assign, no pulses (a region with a roundrobin
 *                     merge)
 *   split hash        strategy hash on an int key, assign, no pulses (a keyed region, seq merge)
 *   split seqpulse    roundrobin, assign, a pulse every 128 tuples (a region with a seqpulse merge)
 *   split shuffle     hash, sequence keep, pulse 128 (the Split at the end of a shuffle's channel)
 *   merge roundrobin  fed by split roundrobin
 *   merge seq         fed by split hash
 *   merge seqpulse    fed by split seqpulse (a shuffle's per-channel Merges run the same driver)
 * The baseline of each, run alternately with it in the same rounds: the same work written by hand
 * on plain arrays, with no framework: for a Split, the channel chosen the same way (the same
 * value_hash and sf_key_channel), the sequence number, the Item written into a per-channel batch
 * of 256 (a ring of 8), pulses as often; for a Merge, the same recorded input items taken in the
 * same order (the next channel; the next sequence number; the smallest head) and handed to a call
 * that does nothing.
 *
 * Output: one line per figure on standard output, fields separated by a TAB:
 *   PIECE STRATEGY WIDTH SF_M_TUPLES_PER_S BASELINE_M_TUPLES_PER_S SF_NS_PER_TUPLE WALL_NS_PER_TUPLE
 * (medians over the rounds, of CPU time but the last field); a report on standard error. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec_priv.h"
#include "sf.h"
#include "value.h"

enum { NTUPLES = 4096, CHUNK_BATCHES = 4, PULSE = 128, BASE_RING = 8, MAX_WIDTH = 256 };

typedef enum { S_RR, S_HASH, S_SEQPULSE, S_SHUFFLE } SplitKind;
static const char *const split_names[] = { "roundrobin", "hash", "seqpulse", "shuffle" };
typedef enum { M_RR, M_SEQ, M_SEQPULSE } MergeKind;
static const char *const merge_names[] = { "roundrobin", "seq", "seqpulse" };
static const SplitKind merge_feed[] = { S_RR, S_HASH, S_SEQPULSE };

static Tuple *tuples[NTUPLES];
static int cpu = -1;

static double clock_s(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct Timer {
  double cpu, wall; /* accumulated seconds */
  double cpu0, wall0;
} Timer;
static void timer_start(Timer *t) {
  t->cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
  t->wall0 = clock_s(CLOCK_MONOTONIC);
}
static void timer_stop(Timer *t) {
  t->cpu += clock_s(CLOCK_THREAD_CPUTIME_ID) - t->cpu0;
  t->wall += clock_s(CLOCK_MONOTONIC) - t->wall0;
}

static void pin(int which) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(which, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("sf-bench-split-merge: sched_setaffinity");
    exit(1);
  }
}

/* The graph: Beacon -> Split (region r1) -> W Filters (one per channel) -> Merge -> FileSink. */
static Graph *make_graph(SplitKind sk, MergeKind mk, int width) {
  Buf b;
  buf_init(&b);
  char line[512];
#define OUT(...) (snprintf(line, sizeof line, __VA_ARGS__), buf_puts(&b, line))
  OUT("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graph xmlns=\"urn:streamfission:graph:1\" name=\"sm\">\n");
  OUT("<schema name=\"T\"><attr name=\"k\" type=\"int\"/><attr name=\"v\" type=\"int\"/></schema>\n");
  OUT("<operator name=\"src\" kind=\"Beacon\"><output stream=\"A\" schema=\"T\"/>"
      "<param name=\"count\">1</param><set attr=\"k\">seq</set><set attr=\"v\">seq</set></operator>\n");
  OUT("<operator name=\"r1.split\" kind=\"Split\" origin=\"f\" region=\"r1\"><input stream=\"A\"/>");
  for (int c = 0; c < width; c++) OUT("<output stream=\"A.r1[%d]\" schema=\"T\"/>", c);
  bool hash = sk == S_HASH || sk == S_SHUFFLE;
  OUT("<param name=\"strategy\">%s</param>%s<param name=\"sequence\">%s</param><param name=\"pulse\">%d</param>"
      "</operator>\n", hash ? "hash" : "roundrobin", hash ? "<param name=\"keys\">k</param>" : "",
      sk == S_SHUFFLE ? "keep" : "assign", sk == S_SEQPULSE || sk == S_SHUFFLE ? PULSE : 0);
  for (int c = 0; c < width; c++)
    OUT("<operator name=\"f[%d]\" kind=\"Filter\" origin=\"f\" region=\"r1\" channel=\"%d\"><input stream=\"A.r1[%d]\"/>"
        "<output stream=\"B[%d]\" schema=\"T\"/><param name=\"where\">v &gt;= 0</param></operator>\n", c, c, c, c);
  OUT("<operator name=\"r1.merge\" kind=\"Merge\" origin=\"f\" region=\"r1\">");
  for (int c = 0; c < width; c++) OUT("<input stream=\"B[%d]\"/>", c);
  OUT("<output stream=\"B\" schema=\"T\"/><param name=\"order\">%s</param></operator>\n", merge_names[mk]);
  OUT("<operator name=\"out\" kind=\"FileSink\"><input stream=\"B\"/><param name=\"file\">/dev/null</param>"
      "</operator>\n</graph>\n");
#undef OUT
  Diag d;
  diag_init(&d, "split-merge.xml", stderr);
  Graph *g = graph_parse_memory(b.p, b.n, "split-merge.xml", sf_schema_path(), &d);
  diag_flush(&d, DIAG_AS_REPORTED);
  if (!g || graph_check(g, &d) != 0) {
    diag_flush(&d, DIAG_BY_PLACE);
    fprintf(stderr, "sf-bench-split-merge: the benchmark graph does not check\n");
    exit(1);
  }
  buf_release(&b);
  return g;
}

/* An executor for g as exec_run makes one (exec.c's exec_new, without signals or a stop pipe: no
 * thread of it ever runs), planned; queues of queue_batches batches. */
static ExecOptions options;
static Exec *exec_make(Graph *g, int queue_batches) {
  Exec *x = calloc(1, sizeof *x);
  x->g = g;
  x->o = &options;
  x->log = stderr;
  x->arena = arena_new();
  x->batch = DEFAULT_BATCH;
  x->remote_batch = DEFAULT_REMOTE_BATCH;
  x->queue_batches = queue_batches;
  pthread_mutex_init(&x->fail_mu, NULL);
  atomic_init(&x->failed, false);
  atomic_init(&x->committing, false);
  x->stop_pipe[0] = x->stop_pipe[1] = -1;
  snprintf(x->graph_dir, sizeof x->graph_dir, ".");
  clock_gettime(CLOCK_MONOTONIC, &x->started);
  if (plan_build(x) != 0 || atomic_load(&x->failed)) {
    fprintf(stderr, "sf-bench-split-merge: plan: %s\n", x->message);
    exit(1);
  }
  return x;
}

static Node *node(Exec *x, const char *name) {
  for (int i = 0; i < x->nnodes; i++)
    if (!strcmp(x->nodes[i].op->name, name)) return &x->nodes[i];
  fprintf(stderr, "sf-bench-split-merge: no operator '%s'\n", name);
  exit(1);
}

static void exec_drop(Exec *x) {
  for (int i = 0; i < x->groups.n; i++) {
    Group *gr = x->groups.items[i];
    for (int s = 0; gr->entry && s < gr->entry->nslots; s++) {
      if (gr->cur && gr->cur[s]) batch_release(gr->cur[s]);
      Queue *q = gr->entry->in[s] ? gr->entry->in[s]->q : NULL;
      while (q && q->count) batch_release(queue_take(q));
    }
    for (int e = 0; e < gr->outs.n; e++) {
      Edge *ed = gr->outs.items[e];
      if (ed->pending) batch_release(ed->pending);
    }
  }
  for (int i = 0; i < x->nnodes; i++) arena_free(x->nodes[i].inst.scratch);
  arena_free(x->arena);
  free(x);
}

/* The null consumer: the tuples stay the benchmark's (they are reused round after round). */
static int null_process(OpInst *op, int port, Tuple *t) {
  return 0;
}
static const OpKindImpl null_sink = { .kind = KIND_FILESINK, .process = null_process };
/* The warm-up round's consumer checks what the Merge delivers: every tuple, in the stream's order,
 * at its outer position. */
static uint64_t check_next;
static int check_process(OpInst *op, int port, Tuple *t) {
  if (op->cur_src != check_next || op->cur_seq != op->cur_src || t != tuples[check_next & (NTUPLES - 1)]) {
    fprintf(stderr, "sf-bench-split-merge: the Merge delivered tuple %llu where %llu was due\n",
            (unsigned long long)op->cur_src, (unsigned long long)check_next);
    exit(1);
  }
  check_next++;
  return 0;
}
static const OpKindImpl checking_sink = { .kind = KIND_FILESINK, .process = check_process };

static void fail_if(bool bad, const char *what, Exec *x) {
  if (!bad) return;
  fprintf(stderr, "sf-bench-split-merge: %s%s%s\n", what, x && x->message[0] ? ": " : "", x ? x->message : "");
  exit(1);
}

/* The Split's input: tuples i..i+k-1 as the Beacon emits them without checkpoints, one run
 * (rt_emit_run: a direct call to the Split's split_process_run, fused in its thread). A shuffle's
 * Split keeps the upstream numbering: tuple i comes with seq i. */
static void source_emit(Node *src, long i, int k) {
  Item items[RUN_MAX];
  for (int j = 0; j < k; j++)
    items[j] = (Item){ .kind = ITEM_TUPLE, .seq = (uint64_t)(i + j), .src = (uint64_t)(i + j),
                       .t = tuples[(i + j) & (NTUPLES - 1)] };
  src->inst.cur_seq = src->inst.cur_src = (uint64_t)i; /* as beacon.c: how far it got while the run goes */
  fail_if(rt_emit_run(&src->inst, 0, items, k) < 0, "rt_emit_run failed", src->inst.exec);
}
/* The runs of tuples from..to-1: RUN_MAX long, as a Beacon makes them. */
static void source_emit_all(Node *src, long from, long to) {
  for (long i = from; i < to; i += RUN_MAX) source_emit(src, i, to - i < RUN_MAX ? (int)(to - i) : RUN_MAX);
}
static void source_end(Node *src, long n) {
  src->finals_left = 1;
  Item fin = { .kind = ITEM_FINAL, .seq = (uint64_t)n, .src = (uint64_t)n };
  fail_if(node_deliver(src, 0, &fin) < 0, "the end of stream failed", src->inst.exec);
  group_flush(src->group, NULL);
}

/* Empties the channels' queues as their threads would, counting the tuples and checking that each
 * went where the Split's strategy says, in order (untimed). */
static long drain(Exec *x, Node *split, uint64_t *last_seq) {
  long tuples_seen = 0;
  int width = split->op->noutputs;
  bool hash = !strcmp(rt_param(&split->inst, "strategy"), "hash");
  for (int c = 0; c < width; c++) {
    Edge *e = split->outs[c].items[0];
    Group *g = e->q->owner;
    pthread_mutex_lock(&g->mu);
    Batch *b;
    while ((b = queue_take(e->q))) {
      for (int i = 0; i < b->n; i++) {
        const Item *it = &b->items[i];
        if (it->kind != ITEM_TUPLE) continue;
        tuples_seen++;
        int want = hash ? sf_key_channel(value_hash(&it->t->v[0], SF_HASH_SEED), width)
                         : split_rr_channel(it->seq, width); /* runs (rt.h) */
        fail_if(it->t != tuples[it->src & (NTUPLES - 1)] || want != c || (last_seq[c] && it->seq <= last_seq[c] - 1),
                "the Split sent a tuple to the wrong channel or out of order", x);
        last_seq[c] = it->seq + 1;
      }
      batch_release(b);
    }
    pthread_mutex_unlock(&g->mu);
  }
  return tuples_seen;
}

/* ---- the Split ---- */

static void time_split(Graph *g, long n, Timer *t) {
  Exec *x = exec_make(g, 64);
  Node *src = node(x, "src"), *split = node(x, "r1.split");
  fail_if(split->inst.impl->open(&split->inst) < 0, "the Split does not open", x);
  fatal_slot = &src->group->run;
  long chunk = (long)CHUNK_BATCHES * DEFAULT_BATCH * split->op->noutputs, seen = 0;
  uint64_t last_seq[MAX_WIDTH] = {0};
  timer_start(t);
  for (long i = 0; i < n; i += chunk) { /* chunk is a multiple of RUN_MAX */
    source_emit_all(src, i, i + chunk < n ? i + chunk : n);
    timer_stop(t);
    seen += drain(x, split, last_seq);
    timer_start(t);
  }
  source_end(src, n);
  timer_stop(t);
  fatal_slot = NULL;
  seen += drain(x, split, last_seq);
  fail_if(seen != n, "the channels did not get every tuple", x);
  split->inst.impl->close(&split->inst, true);
  exec_drop(x);
}

static volatile uintptr_t base_sink;

/* By hand: what the Split does to each tuple, on plain arrays. */
static void base_split(SplitKind sk, int width, long n, Timer *t) {
  typedef Item Ring[BASE_RING][DEFAULT_BATCH + 1];
  Ring *ring = malloc(sizeof(Ring) * (size_t)width);
  memset(ring, 0, sizeof(Ring) * (size_t)width); /* its pages made before the clock starts */
  int fill[MAX_WIDTH] = {0}, slot[MAX_WIDTH] = {0};
  uint64_t rr = 0, next_seq = 0, since = 0;
  bool hash = sk == S_HASH || sk == S_SHUFFLE, pulse = sk == S_SEQPULSE || sk == S_SHUFFLE;
  timer_start(t);
  for (long i = 0; i < n; i++) {
    Tuple *tp = tuples[i & (NTUPLES - 1)];
    int out = hash ? sf_key_channel(value_hash(&tp->v[0], SF_HASH_SEED), width) : split_rr_channel(rr++, width);
    uint64_t seq = sk == S_SHUFFLE ? (uint64_t)i : next_seq++;
    Item *it = &ring[out][slot[out]][fill[out]++];
    it->kind = ITEM_TUPLE, it->seq = seq, it->src = (uint64_t)i, it->born = 0, it->t = tp;
    if (fill[out] == DEFAULT_BATCH) { /* the batch is handed on */
      base_sink = (uintptr_t)ring[out][slot[out]];
      slot[out] = (slot[out] + 1) % BASE_RING;
      fill[out] = 0;
    }
    if (pulse && ++since >= PULSE) {
      for (int p = 0; p < width; p++) {
        Item *pu = &ring[p][slot[p]][fill[p]++];
        pu->kind = ITEM_PULSE, pu->seq = seq + 1, pu->src = (uint64_t)i, pu->t = NULL;
        if (fill[p] == DEFAULT_BATCH) {
          base_sink = (uintptr_t)ring[p][slot[p]];
          slot[p] = (slot[p] + 1) % BASE_RING;
          fill[p] = 0;
        }
      }
      since = 0;
    }
  }
  timer_stop(t);
  free(ring);
}

/* ---- the Merge ---- */

typedef struct Feed {
  Exec *x;
  long n;
} Feed;

static void *feed_main(void *arg) {
  Feed *f = arg;
  Node *src = node(f->x, "src");
  fatal_slot = &src->group->run;
  source_emit_all(src, 0, f->n);
  source_end(src, f->n);
  fatal_slot = NULL;
  return NULL;
}

/* The recorded input of a Merge, per channel, for its baseline. */
typedef struct Recorded {
  Item *items[MAX_WIDTH];
  long n[MAX_WIDTH];
} Recorded;

static void time_merge(Graph *g, long n, Timer *t, Recorded *rec) {
  int width = 0;
  for (int i = 0; i < g->nops; i++)
    if (g->ops[i]->kind == KIND_SPLIT) width = g->ops[i]->noutputs;
  /* room for the whole stream on any one channel, pulses included */
  int cap = (int)((n + n / PULSE) / DEFAULT_BATCH + 16);
  Exec *x = exec_make(g, cap);
  Node *split = node(x, "r1.split"), *merge = node(x, "r1.merge"), *sink = node(x, "out");
  sink->inst.impl = rec ? &checking_sink : &null_sink;
  check_next = 0;
  for (int c = 0; c < width; c++) { /* the Split pushes into the Merge's queues */
    Edge *e = split->outs[c].items[0], *in = merge->in[c];
    e->q = in->q;
    e->to = merge;
    e->slot = c;
  }
  fail_if(split->inst.impl->open(&split->inst) < 0, "the Split does not open", x);
  Feed f = { x, n };
  pthread_t th;
  fail_if(pthread_create(&th, NULL, feed_main, &f) != 0, "cannot start the feeding thread", NULL);
  pthread_join(th, NULL);
  split->inst.impl->close(&split->inst, true);
  if (rec && !rec->items[0])
    for (int c = 0; c < width; c++) { /* a copy of every channel's items, for the baseline */
      Queue *q = merge->in[c]->q;
      long m = 0;
      for (int k = 0; k < q->count; k++) m += q->ring[(q->head + k) % q->cap]->n;
      rec->items[c] = malloc(sizeof(Item) * (size_t)m);
      rec->n[c] = 0;
      for (int k = 0; k < q->count; k++) {
        Batch *b = q->ring[(q->head + k) % q->cap];
        memcpy(rec->items[c] + rec->n[c], b->items, sizeof(Item) * (size_t)b->n);
        rec->n[c] += b->n;
      }
    }
  Group *mg = merge->group;
  fatal_slot = &mg->run;
  timer_start(t);
  int rc = order_run(mg);
  timer_stop(t);
  fatal_slot = NULL;
  fail_if(rc != 0, "the Merge failed", x);
  fail_if(atomic_load(&merge->inst.n_out) != (unsigned long long)n || !sink->finished,
          "the Merge did not deliver every tuple and the end", x);
  exec_drop(x);
}

static __attribute__((noinline)) void base_consume(const Item *it) {
  base_sink = (uintptr_t)it->t ^ it->seq;
}

/* By hand: the same items taken in the Merge's order from plain arrays. */
static void base_merge(MergeKind mk, int width, const Recorded *rec, long n, Timer *t) {
  long pos[MAX_WIDTH] = {0}, got = 0;
  int c = 0;
  uint64_t next = 0;
  timer_start(t);
  while (got < n) {
    if (mk == M_RR) {
      const Item *h = &rec->items[c][pos[c]];
      if (h->kind == ITEM_PULSE) {
        pos[c]++;
        continue;
      }
      base_consume(h);
      pos[c]++;
      if (++got % SPLIT_RR_RUN == 0) c = c + 1 == width ? 0 : c + 1; /* the Split's runs */
      continue;
    } else if (mk == M_SEQ) {
      int s = 0;
      for (; s < width; s++) {
        const Item *h = &rec->items[s][pos[s]];
        if (h->kind == ITEM_TUPLE && h->seq == next) break;
      }
      if (s == width) {
        fprintf(stderr, "sf-bench-split-merge: baseline seq merge lost tuple %llu\n", (unsigned long long)next);
        exit(1);
      }
      base_consume(&rec->items[s][pos[s]++]);
      next++;
    } else {
      int best = -1;
      for (int s = 0; s < width; s++) {
        const Item *h = &rec->items[s][pos[s]];
        if (h->kind == ITEM_FINAL) continue;
        if (best < 0 || h->seq < rec->items[best][pos[best]].seq ||
            (h->seq == rec->items[best][pos[best]].seq && h->kind == ITEM_PULSE))
          best = s;
      }
      const Item *h = &rec->items[best][pos[best]++];
      if (h->kind != ITEM_TUPLE) continue;
      base_consume(h);
    }
    got++;
  }
  timer_stop(t);
}

/* ---- main ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[(n - 1) / 2];
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 2000000;
  int rounds = argc > 2 ? atoi(argv[2]) : 3;
  int widths[16] = { 2, 4, 8 }, nwidths = argc > 3 ? 0 : 3;
  for (int i = 3; i < argc && nwidths < 16; i++) widths[nwidths++] = atoi(argv[i]);
  bool bad = n < 10000 || rounds < 1 || rounds > 100 || argc > 3 + 16;
  for (int i = 0; i < nwidths; i++) bad |= widths[i] < 2 || widths[i] > MAX_WIDTH;
  if (bad) {
    fprintf(stderr, "usage: sf-bench-split-merge [N (>= 10000) [ROUNDS (1-100) [WIDTH (2-%d)...]]]\n", MAX_WIDTH);
    return 2;
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  sched_getaffinity(0, sizeof allowed, &allowed);
  for (int i = 0; i < CPU_SETSIZE; i++)
    if (CPU_ISSET(i, &allowed)) cpu = i;
  if (getenv("SF_BENCH_CPU")) cpu = atoi(getenv("SF_BENCH_CPU"));
  for (int i = 0; i < NTUPLES; i++) { /* keys spread over many values, as a hash Split meets them */
    Value v[2];
    value_put_int(&v[0], (int64_t)(sf_mix64((uint64_t)i) % 1000003));
    value_put_int(&v[1], i);
    tuples[i] = tuple_new(v, 2);
  }
  fprintf(stderr, "Split and Merge alone on CPU %d, %ld tuples, median of %d rounds of CPU time (sf | by hand)\n",
          cpu, n, rounds);
  double sf[100], base[100], wall[100];
  for (int wi = 0; wi < nwidths; wi++) {
    int w = widths[wi];
    for (int sk = S_RR; sk <= S_SHUFFLE; sk++) {
      Graph *g = make_graph(sk, M_SEQPULSE, w);
      pin(cpu);
      { Timer warm = {0}; time_split(g, n / 4, &warm); } /* the pools' blocks made once */
      for (int r = 0; r < rounds; r++) {
        Timer a = {0}, b = {0};
        time_split(g, n, &a);
        base_split(sk, w, n, &b);
        sf[r] = a.cpu * 1e9 / (double)n, wall[r] = a.wall * 1e9 / (double)n, base[r] = b.cpu * 1e9 / (double)n;
      }
      double s = median(sf, rounds), bb = median(base, rounds), wl = median(wall, rounds);
      printf("split\t%s\t%d\t%.4g\t%.4g\t%.2f\t%.2f\n", split_names[sk], w, 1e3 / s, 1e3 / bb, s, wl);
      fprintf(stderr, "   split %-10s width %d  %7.2f ns/tuple (%6.1f M/s)  by hand %6.2f ns (%6.1f M/s)  wall %.2f ns\n",
              split_names[sk], w, s, 1e3 / s, bb, 1e3 / bb, wl);
      graph_free(g);
    }
    for (int mk = M_RR; mk <= M_SEQPULSE; mk++) {
      Graph *g = make_graph(merge_feed[mk], mk, w);
      Recorded rec = {0};
      pin(cpu);
      { Timer warm = {0}; time_merge(g, n, &warm, &rec); }
      for (int r = 0; r < rounds; r++) {
        Timer a = {0}, b = {0};
        time_merge(g, n, &a, NULL);
        base_merge(mk, w, &rec, n, &b);
        sf[r] = a.cpu * 1e9 / (double)n, wall[r] = a.wall * 1e9 / (double)n, base[r] = b.cpu * 1e9 / (double)n;
      }
      double s = median(sf, rounds), bb = median(base, rounds), wl = median(wall, rounds);
      printf("merge\t%s\t%d\t%.4g\t%.4g\t%.2f\t%.2f\n", merge_names[mk], w, 1e3 / s, 1e3 / bb, s, wl);
      fprintf(stderr, "   merge %-10s width %d  %7.2f ns/tuple (%6.1f M/s)  by hand %6.2f ns (%6.1f M/s)  wall %.2f ns\n",
              merge_names[mk], w, s, 1e3 / s, bb, 1e3 / bb, wl);
      for (int c = 0; c < w; c++) free(rec.items[c]);
      graph_free(g);
    }
    fflush(stdout);
  }
  for (int i = 0; i < NTUPLES; i++) tuple_unref(tuples[i]);
  return 0;
}
