/* metrics.c: --metrics HOST:PORT, the executor's figures in Prometheus's text exposition format
 * (docs/running.md, "Metrics"), served by metrics_http.c. A scrape only reads what the executor
 * counts anyway, with the synchronisation the stats use (stats.c): the operators' counters and a
 * sink's latency buckets with atomic loads, a queue's fill under its consumer group's mutex (the
 * lock its producers and consumer take for every batch, held here for one load), the checkpoint
 * counters ckpt.c keeps in the executor (atomics), the messages and bytes remote.c counts per
 * cross-host edge (once per message, relaxed atomics), the stalls a Merge times with --metrics
 * (order.c: two clock reads per stall, relaxed atomics); and /proc/self for the process_* metrics.
 * Nothing on the path of a tuple changes: without --metrics nothing here runs; with it, the cost is
 * that of the scrapes and of the stalls' clock reads.
 *
 * The server starts once the plan is built (plan_build: the nodes, groups, queues and the
 * transport's edges exist and do not change) and stops before the transport stops (exec_run), so a
 * scrape always reads a whole plan. Its thread is libmicrohttpd's; it takes no lock but a group's mu, and never two at once. */
#include "exec_priv.h"
#include "metrics_http.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* A label value as the text format wants it: backslash, double quote and line feed escaped. */
static void label_value(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    if (*s == '\\') fputs("\\\\", f);
    else if (*s == '"') fputs("\\\"", f);
    else if (*s == '\n') fputs("\\n", f);
    else fputc(*s, f);
  }
  fputc('"', f);
}

static void family(FILE *f, const char *name, const char *type, const char *help) {
  fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* {job="...",host="..." : the labels every sample has, left open for more. */
static void job_labels(FILE *f, const Exec *x) {
  fputs("{job=", f);
  label_value(f, x->g->name ? x->g->name : "");
  fputs(",host=", f);
  label_value(f, x->o->host ? x->o->host : "");
}

/* ,operator="...",replica="...",kind="...": a replica of sf-xform ("burn[2]", from "burn", channel
 * 2) is its origin's operator with its channel as the replica; every other operator (a Split or a
 * Merge that sf-xform made included, which has its own name) is replica "0" of itself. */
static void op_labels(FILE *f, const Node *n) {
  const Op *op = n->op;
  bool replica = op->origin && op->channel >= 0 && op->kind != KIND_SPLIT && op->kind != KIND_MERGE;
  fputs(",operator=", f);
  label_value(f, replica ? op->origin : op->name);
  fprintf(f, ",replica=\"%d\",kind=", replica ? op->channel : 0);
  label_value(f, kind_name(op->kind));
}

/* The same tests as the stats' (stats.c): which operators count late tuples and skipped rows. */
static bool counts_late(const Node *n) {
  WindowSpec w;
  return op_time_window(n->op, &w) || n->op->kind == KIND_JOIN;
}
static bool skips_lines(const Node *n) {
  const char *onerror = n->inst.impl && !n->op->ninputs ? op_param(n->op, "onerror") : NULL;
  return onerror && !strcmp(onerror, "skip");
}

enum { OP_IN, OP_OUT, OP_SKIPPED, OP_LATE, OP_KEPT, OP_KEPT_BYTES, OP_FIELDS };

/* Each operator's current event-time tick, once it saw one (the tick of --stats; +Inf once the
 * final tick passed). */
static void tick_family(FILE *f, const Exec *x) {
  static const char name[] = "sf_operator_event_time_tick";
  bool any = false;
  for (int i = 0; i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (!n->local) continue;
    int64_t t = atomic_load_explicit(&n->inst.cur_tick, memory_order_relaxed);
    if (t == TICK_NONE) continue;
    if (!any)
      family(f, name, "gauge",
             "The latest event-time tick the operator received, in its time attribute's units (+Inf: the final tick).");
    any = true;
    fputs(name, f);
    job_labels(f, x);
    op_labels(f, n);
    if (t == TICK_FINAL) fputs("} +Inf\n", f);
    else fprintf(f, "} %lld\n", (long long)t);
  }
}

/* One family of operator counters: a sample per local operator that has it. */
static void op_family(FILE *f, const Exec *x, int field, const char *name, const char *type, const char *help) {
  bool any = false;
  for (int i = 0; i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (!n->local) continue;
    unsigned long long v;
    switch (field) {
    case OP_IN: v = atomic_load(&n->inst.n_in); break;
    case OP_OUT: v = atomic_load(&n->inst.n_out); break;
    case OP_SKIPPED:
      if (!skips_lines(n)) continue;
      v = atomic_load(&n->inst.n_skipped);
      break;
    case OP_LATE:
      if (!counts_late(n)) continue;
      v = atomic_load(&n->inst.n_late);
      break;
    case OP_KEPT:
      if (n->op->kind != KIND_JOIN) continue;
      v = atomic_load(&n->inst.kept_peak);
      break;
    default:
      if (n->op->kind != KIND_JOIN) continue;
      v = atomic_load(&n->inst.kept_peak_bytes);
      break;
    }
    if (!any) family(f, name, type, help);
    any = true;
    fputs(name, f);
    job_labels(f, x);
    op_labels(f, n);
    fprintf(f, "} %llu\n", v);
  }
}

/* The sinks' latency (--stats stamps the tuples: without it there is none) as a histogram with a
 * bucket per power of two of microseconds from 16 us to 2^26 us (67 s): the buckets of stats.c's
 * Latency start exactly there (bucket (k - 3) * LATENCY_SUB is the first at or above 2^k us), so
 * each count is exact, not interpolated. The sum is stats.c's, in ns, added where the latency is
 * measured; it is read after the buckets, so it may hold a tuple or two that _count does not yet. */
static void latency_family(FILE *f, const Exec *x) {
  static const char name[] = "sf_sink_latency_seconds";
  bool any = false;
  for (int i = 0; i < x->nnodes; i++) {
    Node *n = &x->nodes[i];
    if (!n->local || !n->latency) continue;
    if (!any)
      family(f, name, "histogram",
             "Time from a tuple's source to this sink (with --stats only), in buckets of powers of two of microseconds.");
    any = true;
    unsigned long long cum = 0;
    int b = 0;
    for (int k = 4; k <= 26; k++) {
      for (int top = (k - 3) * LATENCY_SUB; b < top; b++) cum += atomic_load_explicit(&n->latency->count[b], memory_order_relaxed);
      fprintf(f, "%s_bucket", name);
      job_labels(f, x);
      op_labels(f, n);
      fprintf(f, ",le=\"%.6f\"} %llu\n", (double)(1ULL << k) / 1e6, cum);
    }
    for (; b < LATENCY_BUCKETS; b++) cum += atomic_load_explicit(&n->latency->count[b], memory_order_relaxed);
    fprintf(f, "%s_bucket", name);
    job_labels(f, x);
    op_labels(f, n);
    fprintf(f, ",le=\"+Inf\"} %llu\n%s_sum", cum, name);
    job_labels(f, x);
    op_labels(f, n);
    fprintf(f, "} %.9f\n%s_count", (double)atomic_load_explicit(&n->latency->sum_ns, memory_order_relaxed) / 1e9, name);
    job_labels(f, x);
    op_labels(f, n);
    fprintf(f, "} %llu\n", cum);
  }
}

/* The queues between threads (and from another host): batches held, their capacity and the time
 * producers waited for room (flow.c's push_batch times a wait, never a batch that finds room), per
 * input of the consumer. A direct edge (an operator calling the next in the same thread) has none. */
static void queue_families(FILE *f, const Exec *x) {
  static const char *const names[3] = { "sf_queue_batches", "sf_queue_capacity_batches", "sf_queue_blocked_seconds_total" };
  static const char *const types[3] = { "gauge", "gauge", "counter" };
  static const char *const helps[3] = {
    "Batches waiting in the queue into an operator's input (the stream, and the operator reading it).",
    "Batches the queue into an operator's input holds before its producer waits (--queue).",
    "Seconds its producers waited for room in the full queue (back-pressure from the operator reading it).",
  };
  for (int pass = 0; pass < 3; pass++) {
    bool any = false;
    for (int gi = 0; gi < x->groups.n; gi++) {
      Group *g = x->groups.items[gi];
      Node *n = g->entry;
      for (int s = 0; n && s < n->nslots; s++) {
        Edge *e = n->in[s];
        if (!e || !e->q) continue;
        int count = 0;
        uint64_t blocked = 0;
        if (pass != 1) {
          pthread_mutex_lock(&e->q->owner->mu);
          count = e->q->count;
          blocked = e->q->blocked_ns;
          pthread_mutex_unlock(&e->q->owner->mu);
        }
        const char *name = names[pass];
        if (!any) family(f, name, types[pass], helps[pass]);
        any = true;
        fputs(name, f);
        job_labels(f, x);
        op_labels(f, n);
        fputs(",stream=", f);
        label_value(f, e->stream ? e->stream->name : "");
        fprintf(f, ",remote=\"%s\"} ", e->from ? "false" : "true");
        if (pass == 2) fprintf(f, "%.6f\n", (double)blocked / 1e9);
        else fprintf(f, "%d\n", pass == 0 ? count : e->q->cap);
      }
    }
  }
}

/* A Merge's wait (order.c, "merge wait"): the time it held items it could not deliver because a
 * channel had nothing for it yet, in all and per channel it waited for (a stall counts for every
 * channel that had nothing during it), per Merge of several channels: a region's, and the shuffle
 * Merges at the start of its channels. */
static void merge_wait_families(FILE *f, const Exec *x) {
  static const char *const names[2] = { "sf_region_merge_wait_seconds_total", "sf_region_merge_channel_wait_seconds_total" };
  static const char *const helps[2] = {
    "Seconds the region's Merge held items it could not deliver yet because a channel had delivered nothing (the skew).",
    "Of those seconds, the ones during which this channel had delivered nothing (it was waited for).",
  };
  for (int pass = 0; pass < 2; pass++) {
    bool any = false;
    for (int gi = 0; gi < x->groups.n; gi++) {
      Group *g = x->groups.items[gi];
      if (!g->wait_timed) continue;
      Node *n = g->entry;
      for (int s = 0; s < (pass ? n->nslots : 1); s++) {
        if (!any) family(f, names[pass], "counter", helps[pass]);
        any = true;
        fputs(names[pass], f);
        job_labels(f, x);
        op_labels(f, n);
        fputs(",region=", f);
        label_value(f, n->op->region ? n->op->region : "");
        unsigned long long ns = atomic_load_explicit(pass ? &g->slot_wait_ns[s] : &g->wait_ns, memory_order_relaxed);
        if (pass) {
          const Stream *st = n->in[s] ? n->in[s]->stream : NULL;
          int channel = st && st->producer && st->producer->channel >= 0 ? st->producer->channel : s;
          fprintf(f, ",channel=\"%d\"", channel);
        }
        fprintf(f, "} %.9f\n", (double)ns / 1e9); /* (exact: ns) */
      }
    }
  }
}

/* The edges to and from other hosts: messages and bytes (as encoded on the wire), per edge. */
typedef struct EdgeScan {
  FILE *f;
  const Exec *x;
  int pass;  /* 0: messages, 1: bytes */
  bool any;
} EdgeScan;

static void edge_sample(void *ctx, const char *edge, const char *peer, bool outgoing, const RemoteCounts *c) {
  EdgeScan *e = ctx;
  static const char *const names[2][2] = {
    { "sf_remote_messages_received_total", "sf_remote_received_bytes_total" },
    { "sf_remote_messages_sent_total", "sf_remote_sent_bytes_total" },
  };
  static const char *const helps[2][2] = {
    { "Messages received on an edge from another host.", "Bytes received on an edge from another host (encoded)." },
    { "Messages sent on an edge to another host.", "Bytes sent on an edge to another host (encoded)." },
  };
  const char *name = names[outgoing][e->pass];
  if (!e->any) family(e->f, name, "counter", helps[outgoing][e->pass]);
  e->any = true;
  fputs(name, e->f);
  job_labels(e->f, e->x);
  fputs(",edge=", e->f);
  label_value(e->f, edge);
  fputs(",peer=", e->f);
  label_value(e->f, peer);
  fprintf(e->f, "} %llu\n",
          (unsigned long long)atomic_load_explicit(e->pass ? &c->bytes : &c->messages, memory_order_relaxed));
}

/* remote_each_edge lists the outgoing edges, then the incoming ones: one family per direction and
 * figure, each of its samples together as the format wants. */
typedef struct EdgeFilter {
  EdgeScan scan;
  bool outgoing;
} EdgeFilter;

static void edge_filtered(void *ctx, const char *edge, const char *peer, bool outgoing, const RemoteCounts *c) {
  EdgeFilter *ef = ctx;
  if (outgoing == ef->outgoing) edge_sample(&ef->scan, edge, peer, outgoing, c);
}

static void edge_families(FILE *f, const Exec *x) {
  if (!x->remote) return;
  for (int dir = 1; dir >= 0; dir--)
    for (int pass = 0; pass < 2; pass++) {
      EdgeFilter ef = { .scan = { .f = f, .x = x, .pass = pass }, .outgoing = dir };
      remote_each_edge(x->remote, edge_filtered, &ef);
    }
}

static void checkpoint_families(FILE *f, const Exec *x) {
  if (!x->o->checkpoint_dir) return;
  const ExecCkptMetrics *m = &x->ck_metrics;
  unsigned long long done = atomic_load(&m->completed), ns = atomic_load(&m->ns_total);
  unsigned long long last = atomic_load(&m->last_ns);
  family(f, "sf_checkpoints_completed_total", "counter",
         "Checkpoints this executor saw complete (every host's part written) since it started.");
  fputs("sf_checkpoints_completed_total", f);
  job_labels(f, x);
  fprintf(f, "} %llu\n", done);
  family(f, "sf_checkpoint_last_completed", "gauge", "The id of the newest complete checkpoint (0: none yet).");
  fputs("sf_checkpoint_last_completed", f);
  job_labels(f, x);
  fprintf(f, "} %llu\n", (unsigned long long)atomic_load(&m->last_id));
  family(f, "sf_checkpoint_snapshot_bytes_total", "counter",
         "Bytes of operator snapshots this executor wrote into checkpoints.");
  fputs("sf_checkpoint_snapshot_bytes_total", f);
  job_labels(f, x);
  fprintf(f, "} %llu\n", (unsigned long long)atomic_load(&m->bytes_total));
  family(f, "sf_checkpoint_last_snapshot_bytes", "gauge",
         "Bytes of operator snapshots this executor wrote into the newest complete checkpoint.");
  fputs("sf_checkpoint_last_snapshot_bytes", f);
  job_labels(f, x);
  fprintf(f, "} %llu\n", (unsigned long long)atomic_load(&m->last_bytes));
  if (!atomic_load(&m->coordinator)) return; /* only the coordinator knows when a checkpoint was requested */
  family(f, "sf_checkpoint_duration_seconds", "histogram",
         "Time from a checkpoint's request to its completion, on the executor that requests them.");
  unsigned long long cum = 0;
  for (int b = 0; b <= CK_DURATION_BUCKETS; b++) {
    cum += atomic_load(&m->by_le[b]);
    fputs("sf_checkpoint_duration_seconds_bucket", f);
    job_labels(f, x);
    if (b < CK_DURATION_BUCKETS) fprintf(f, ",le=\"%g\"} %llu\n", ck_duration_le[b], cum);
    else fprintf(f, ",le=\"+Inf\"} %llu\n", cum);
  }
  fputs("sf_checkpoint_duration_seconds_sum", f);
  job_labels(f, x);
  fprintf(f, "} %.6f\nsf_checkpoint_duration_seconds_count", (double)ns / 1e9);
  job_labels(f, x);
  fprintf(f, "} %llu\n", cum); /* (the +Inf bucket's, read after the sum) */
  family(f, "sf_checkpoint_last_duration_seconds", "gauge", "Time from the newest complete checkpoint's request to its completion.");
  fputs("sf_checkpoint_last_duration_seconds", f);
  job_labels(f, x);
  fprintf(f, "} %.6f\n", (double)last / 1e9);
}

/* The process metrics of Prometheus's client libraries, from /proc/self (Linux), read per scrape:
 * stat's utime and stime (clock ticks), starttime (ticks after boot, with /proc/stat's btime),
 * vsize and rss (pages); the entries of /proc/self/fd but the one reading it; RLIMIT_NOFILE. A
 * figure that cannot be read is left out. */
static void process_families(FILE *f, const Exec *x) {
  long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
  unsigned long long utime = 0, stime = 0, start = 0, vsize = 0, rss = 0, btime = 0;
  bool stat_ok = false, btime_ok = false;
  FILE *p = fopen("/proc/self/stat", "re");
  if (p) {
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = 0;
    /* after "pid (comm) ", whose comm may hold spaces and parentheses: from the last ')' on, the
     * fields from the 3rd (state); utime and stime are the 14th and 15th, starttime the 22nd,
     * vsize the 23rd, rss the 24th */
    char *q = strrchr(buf, ')');
    stat_ok = q && sscanf(q + 1,
                          " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu %llu %llu",
                          &utime, &stime, &start, &vsize, &rss) == 5;
    fclose(p);
  }
  if ((p = fopen("/proc/stat", "re"))) {
    char line[256];
    while (!btime_ok && fgets(line, sizeof line, p)) btime_ok = sscanf(line, "btime %llu", &btime) == 1;
    fclose(p);
  }
  long fds = -1;
  DIR *dir = opendir("/proc/self/fd");
  if (dir) {
    int self = dirfd(dir);
    struct dirent *e;
    fds = 0;
    while ((e = readdir(dir)))
      if (e->d_name[0] != '.' && atoi(e->d_name) != self) fds++;
    closedir(dir);
  }
  struct rlimit lim;
  bool lim_ok = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY;
  if (stat_ok && tick > 0) {
    family(f, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
    fputs("process_cpu_seconds_total", f);
    job_labels(f, x);
    fprintf(f, "} %.2f\n", (double)(utime + stime) / (double)tick);
    if (btime_ok) {
      family(f, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.");
      fputs("process_start_time_seconds", f);
      job_labels(f, x);
      fprintf(f, "} %.2f\n", (double)btime + (double)start / (double)tick);
    }
    family(f, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
    fputs("process_virtual_memory_bytes", f);
    job_labels(f, x);
    fprintf(f, "} %llu\n", vsize);
    family(f, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    fputs("process_resident_memory_bytes", f);
    job_labels(f, x);
    fprintf(f, "} %llu\n", rss * (unsigned long long)(page > 0 ? page : 4096));
  }
  if (fds >= 0) {
    family(f, "process_open_fds", "gauge", "Number of open file descriptors.");
    fputs("process_open_fds", f);
    job_labels(f, x);
    fprintf(f, "} %ld\n", fds);
  }
  if (lim_ok) {
    family(f, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
    fputs("process_max_fds", f);
    job_labels(f, x);
    fprintf(f, "} %llu\n", (unsigned long long)lim.rlim_cur);
  }
}

static char *render(void *ctx, size_t *len) {
  Exec *x = ctx;
  char *text = NULL;
  FILE *f = open_memstream(&text, len);
  if (!f) return NULL;
  op_family(f, x, OP_IN, "sf_operator_tuples_in_total", "counter", "Tuples the operator received.");
  op_family(f, x, OP_OUT, "sf_operator_tuples_out_total", "counter", "Tuples the operator emitted.");
  op_family(f, x, OP_SKIPPED, "sf_operator_skipped_rows_total", "counter",
            "Malformed input rows a source with onerror=\"skip\" dropped.");
  op_family(f, x, OP_LATE, "sf_operator_late_tuples_total", "counter",
            "Late tuples a time-window Aggregate or a Join dropped.");
  op_family(f, x, OP_KEPT, "sf_join_kept_tuples_peak", "gauge", "The most tuples a Join kept at once.");
  op_family(f, x, OP_KEPT_BYTES, "sf_join_kept_bytes_peak", "gauge", "The bytes of those tuples.");
  tick_family(f, x);
  latency_family(f, x);
  queue_families(f, x);
  merge_wait_families(f, x);
  edge_families(f, x);
  checkpoint_families(f, x);
  struct rusage ru;
  long rss = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
  family(f, "sf_executor_uptime_seconds", "gauge", "Seconds since the executor started the job.");
  fputs("sf_executor_uptime_seconds", f);
  job_labels(f, x);
  fprintf(f, "} %.3f\n", stats_seconds(x));
  family(f, "sf_executor_peak_memory_bytes", "gauge", "The executor's peak resident memory.");
  fputs("sf_executor_peak_memory_bytes", f);
  job_labels(f, x);
  fprintf(f, "} %lld\n", (long long)rss * 1024);
  family(f, "sf_executor_threads_running", "gauge", "Operator threads still running (0: the job has ended).");
  fputs("sf_executor_threads_running", f);
  job_labels(f, x);
  fprintf(f, "} %d\n", atomic_load(&x->running));
  family(f, "sf_executor_failed", "gauge", "1 once the job failed or was stopped, else 0.");
  fputs("sf_executor_failed", f);
  job_labels(f, x);
  fprintf(f, "} %d\n", atomic_load(&x->failed) ? 1 : 0);
  process_families(f, x);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* ---- the live view's figures: /live.json ----
 *
 * The page (live_page.c) draws the whole graph: every operator (local or not: "host" says where it
 * runs, "local" whether this executor has its counts) and every stream from its producer to each
 * consumer, with this executor's counters and, for an edge into a local queue, its fill and the
 * time its producers waited for room. The same reads as a scrape's. */

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static int node_index(const Exec *x, const Op *op) {
  for (int i = 0; i < x->nnodes; i++)
    if (x->nodes[i].op == op) return i;
  return -1;
}

static char *render_live(void *ctx, size_t *len) {
  Exec *x = ctx;
  char *text = NULL;
  FILE *f = open_memstream(&text, len);
  if (!f) return NULL;
  fputs("{\"job\": ", f);
  json_str(f, x->g->name ? x->g->name : "");
  fputs(", \"host\": ", f);
  json_str(f, x->o->host ? x->o->host : "");
  fprintf(f, ", \"seconds\": %.3f, \"threads_running\": %d, \"failed\": %s,\n \"operators\": [", stats_seconds(x),
          atomic_load(&x->running), atomic_load(&x->failed) ? "true" : "false");
  for (int i = 0; i < x->nnodes; i++) {
    const Node *n = &x->nodes[i];
    const Op *op = n->op;
    fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
    json_str(f, op->name);
    fputs(", \"kind\": ", f);
    json_str(f, kind_name(op->kind));
    fputs(", \"host\": ", f);
    json_str(f, op->host ? op->host : "");
    if (op->region) {
      fputs(", \"region\": ", f);
      json_str(f, op->region);
    }
    fprintf(f, ", \"local\": %s", n->local ? "true" : "false");
    if (n->local)
      fprintf(f, ", \"in\": %llu, \"out\": %llu", (unsigned long long)atomic_load(&n->inst.n_in),
              (unsigned long long)atomic_load(&n->inst.n_out));
    fputc('}', f);
  }
  fputs("],\n \"edges\": [", f);
  bool first = true;
  for (int i = 0; i < x->nnodes; i++) {
    const Node *n = &x->nodes[i];
    for (int p = 0; p < n->op->ninputs; p++) {
      const Input *in = &n->op->inputs[p];
      for (int k = 0; k < in->nstreams; k++) {
        const Stream *st = in->streams[k];
        if (!st || !st->producer) continue;
        fprintf(f, "%s\n  {\"stream\": ", first ? "" : ",");
        first = false;
        json_str(f, st->name);
        fprintf(f, ", \"from\": %d, \"to\": %d", node_index(x, st->producer), i);
        for (int s = 0; n->local && s < n->nslots; s++) {
          const Edge *e = n->in[s];
          if (!e || e->stream != st || !e->q) continue;
          pthread_mutex_lock(&e->q->owner->mu);
          int count = e->q->count;
          uint64_t blocked = e->q->blocked_ns;
          pthread_mutex_unlock(&e->q->owner->mu);
          fprintf(f, ", \"queue\": {\"batches\": %d, \"capacity\": %d, \"blocked_seconds\": %.6f}", count, e->q->cap,
                  (double)blocked / 1e9);
          break;
        }
        fputc('}', f);
      }
    }
  }
  fputs("]}\n", f);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

static char *render_page(void *ctx, size_t *len) {
  (void)ctx;
  *len = live_page_len;
  char *copy = malloc(live_page_len);
  if (copy) memcpy(copy, live_page, live_page_len);
  return copy;
}

static const MetricsRoute routes[] = {
  { "/metrics", "text/plain; version=0.0.4; charset=utf-8", render }, /* Prometheus's text format 0.0.4 */
  { "/live.json", "application/json", render_live },
  { "/", "text/html; charset=utf-8", render_page },
};

int metrics_start(Exec *x) {
  if (!x->o->metrics) return 0;
  char err[512];
  x->metrics = metrics_http_start(x->o->metrics, routes, (int)(sizeof routes / sizeof *routes), x, err, sizeof err);
  if (!x->metrics) {
    exec_fail(x, "cannot serve metrics at '%s': %s", x->o->metrics, err);
    return -1;
  }
  return 0;
}

void metrics_stop(Exec *x) {
  metrics_http_stop(x->metrics);
  x->metrics = NULL;
}
