/* grpc_ceiling.c: the raw ceiling the transport is compared against (tests/bench/distributed.sh).
 *
 *   sf-bench-grpc-ceiling N PER_MSG [-v]
 *
 * A minimal gRPC core streaming loop between two processes on 127.0.0.1, with nothing of ours in
 * between but the wire format: the process forks a receiver before any grpc_init; the receiver
 * binds "127.0.0.1:0" and passes the port it got up a pipe; the parent opens one client-streaming
 * call and sends N tuples of schema (k:int, v:int, x:double) with k = i % 100,
 * v = sf_rand(i) % 1000, x = i * 0.5 (the Beacon of the benchmark's chain graph), seq = src = i, as
 * ceil(N/PER_MSG) messages, each a protobuf-c Batch built with wire_encode from freshly made tuples.
 * The receiver flattens each message if it came in several slices (readall), decodes it with
 * wire_decode (which creates the tuples), checks the seqs and releases the tuples.  At most one
 * SEND_MESSAGE and one RECV_MESSAGE in flight, one thread per side, no credits, no
 * WRITE_BUFFER_HINT, retries off (as in rt/transport*.c).  The client half-closes; the receiver
 * answers status OK once it has all N tuples.
 *
 * Time: S runs from the client's first send (just before it builds the first message, so the first
 * encoding counts; the connection is set up inside S, a few ms) to the receiver's decoding of the
 * last message.  Both read CLOCK_MONOTONIC, which is one clock for all processes on the machine;
 * the receiver sends its timestamp back up the pipe.  Prints on stdout
 *   ceiling: N tuples, PER_MSG per message, S seconds, R M tuples/s
 * With -v it also prints to stderr the client's end-to-end time (first send to status OK) and the
 * CPU time per tuple of each side.  Exits 0 only when the receiver got all N tuples and both sides
 * ended cleanly; otherwise prints why to stderr and exits 1.  Every wait has a deadline (120 s). */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "wire.h"

#define METHOD "/sf.Exec/Edge"
#define EDGE "A>f/0"
#define DEADLINE_S 120

/* What the receiver reports up the pipe at the end. */
typedef struct Result {
  int ok;              /* 1: all N tuples received and the call ended cleanly */
  long long got;       /* tuples received */
  double t_first;      /* CLOCK_MONOTONIC when the first message was decoded */
  double t_last;       /* ... and the last */
  double cpu;          /* the receiver's CPU seconds, from the first message to the end */
  double runq;         /* ... and seconds runnable but waiting for a CPU (runq_wait_s) */
  char err[256];       /* why not ok */
} Result;

static Attr attrs[3] = {{"k", TYPE_INT, 0}, {"v", TYPE_INT, 0}, {"x", TYPE_DOUBLE, 0}};
static Schema schema = {"In", attrs, 3, 0};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         (double)ru.ru_stime.tv_usec / 1e6;
}

/* Seconds this process's live threads have spent runnable but waiting for a CPU (Linux schedstat;
 * 0 when unavailable): tells contention for the machine from waiting for the peer. */
static double runq_wait_s(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return 0;
  double sum = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%.20s/schedstat", de->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    unsigned long long run, wait;
    if (fscanf(f, "%llu %llu", &run, &wait) == 2) sum += (double)wait / 1e9;
    fclose(f);
  }
  closedir(d);
  return sum;
}

static grpc_arg int_arg(const char *key, int value) {
  grpc_arg a;
  memset(&a, 0, sizeof a);
  a.type = GRPC_ARG_INTEGER;
  a.key = (char *)key;
  a.value.integer = value;
  return a;
}

static gpr_timespec deadline_after(int seconds) {
  return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_seconds(seconds, GPR_TIMESPAN));
}

/* Largest Batch of PER_MSG tuples of our schema: per item 1 (kind) + 10 (seq) + 10 (src) bytes,
 * per tuple 2 zigzag varints of at most 10 bytes and one double of 8; per column a tag and a
 * length; the edge.  64 bytes per tuple and 1 KiB of slack are more than enough. */
static long long max_message(long long per_msg) {
  return 64 * per_msg + 1024;
}

/* Waits for the completion of `tag` on cq (other tags complete in between: they are recorded in
 * the flags of `seen`, indexed by the tag's value).  Returns its success or -1 on timeout. */
#define NTAGS 8
static int wait_tag(grpc_completion_queue *cq, intptr_t tag, gpr_timespec deadline, int done[NTAGS],
                    int success[NTAGS]) {
  while (!done[tag]) {
    grpc_event ev = grpc_completion_queue_next(cq, deadline, NULL);
    if (ev.type == GRPC_QUEUE_TIMEOUT) return -1;
    if (ev.type != GRPC_OP_COMPLETE) return -1;
    intptr_t t = (intptr_t)ev.tag;
    done[t] = 1;
    success[t] = ev.success;
  }
  done[tag] = 0;
  return success[tag];
}

/* ---- the receiver (server), in the forked child ---- */

enum { S_NEW = 1, S_CLOSE, S_RECV, S_STATUS, S_SHUTDOWN };

static int receiver(int fd, long long n_total, long long per_msg) {
  Result res;
  memset(&res, 0, sizeof res);
  grpc_init();
  grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
  long long maxmsg = max_message(per_msg);
  if (maxmsg > INT_MAX) maxmsg = INT_MAX;
  grpc_arg sa[] = {int_arg(GRPC_ARG_ALLOW_REUSEPORT, 0), int_arg(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, (int)maxmsg)};
  grpc_channel_args args = {sizeof sa / sizeof *sa, sa};
  grpc_server *server = grpc_server_create(&args, NULL);
  grpc_server_register_completion_queue(server, cq, NULL);
  grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
  int port = grpc_server_add_http2_port(server, "127.0.0.1:0", creds);
  grpc_server_credentials_release(creds);
  if (port == 0) {
    snprintf(res.err, sizeof res.err, "receiver: cannot listen on 127.0.0.1:0");
    grpc_server_destroy(server);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type != GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(cq);
    grpc_shutdown();
    if (write(fd, &port, sizeof port) != sizeof port) return 1;
    return 1;
  }
  grpc_server_start(server);

  grpc_call *call = NULL;
  grpc_call_details details;
  grpc_metadata_array md;
  grpc_call_details_init(&details);
  grpc_metadata_array_init(&md);
  int done[NTAGS] = {0}, success[NTAGS] = {0};
  int request_pending = 0;
  gpr_timespec deadline = deadline_after(DEADLINE_S);
  grpc_call_error e = grpc_server_request_call(server, &call, &details, &md, cq, cq, (void *)(intptr_t)S_NEW);
  if (e != GRPC_CALL_OK) {
    snprintf(res.err, sizeof res.err, "receiver: grpc_server_request_call returned %d", (int)e);
    port = 0;
  } else {
    request_pending = 1;
  }
  if (write(fd, &port, sizeof port) != sizeof port) port = 0; /* the parent is gone */

  int cancelled = 1, close_pending = 0, recv_pending = 0, status_pending = 0;
  grpc_byte_buffer *bb = NULL;
  double c0 = cpu_s(), q0 = runq_wait_s();
  if (port == 0) goto shutdown;
  if (wait_tag(cq, S_NEW, deadline, done, success) != 1) {
    snprintf(res.err, sizeof res.err, "receiver: no call arrived within %d s", DEADLINE_S);
    goto shutdown;
  }
  request_pending = 0;
  if (grpc_slice_str_cmp(details.method, METHOD) != 0) {
    snprintf(res.err, sizeof res.err, "receiver: call for an unexpected method");
    goto finish;
  }

  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  op.data.recv_close_on_server.cancelled = &cancelled;
  if ((e = grpc_call_start_batch(call, &op, 1, (void *)(intptr_t)S_CLOSE, NULL)) != GRPC_CALL_OK) {
    snprintf(res.err, sizeof res.err, "receiver: RECV_CLOSE_ON_SERVER: grpc_call_start_batch returned %d", (int)e);
    goto finish;
  }
  close_pending = 1;

  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_MESSAGE;
  op.data.recv_message.recv_message = &bb;
  if ((e = grpc_call_start_batch(call, &op, 1, (void *)(intptr_t)S_RECV, NULL)) != GRPC_CALL_OK) {
    snprintf(res.err, sizeof res.err, "receiver: RECV_MESSAGE: grpc_call_start_batch returned %d", (int)e);
    goto finish;
  }
  recv_pending = 1;
  uint64_t expect = 0;
  for (;;) {
    int ok = wait_tag(cq, S_RECV, deadline, done, success);
    if (ok < 0) {
      snprintf(res.err, sizeof res.err, "receiver: timed out after %lld tuples", res.got);
      goto finish;
    }
    recv_pending = 0;
    grpc_byte_buffer *msg = bb;
    bb = NULL;
    if (!ok || !msg) {
      if (msg) grpc_byte_buffer_destroy(msg);
      if (!ok || grpc_call_failed_before_recv_message(call)) {
        snprintf(res.err, sizeof res.err, "receiver: the stream failed after %lld tuples", res.got);
        goto finish;
      }
      break; /* the client's clean half-close */
    }
    /* the next receive goes in before this message is decoded (one in flight) */
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &bb;
    if ((e = grpc_call_start_batch(call, &op, 1, (void *)(intptr_t)S_RECV, NULL)) != GRPC_CALL_OK) {
      grpc_byte_buffer_destroy(msg);
      snprintf(res.err, sizeof res.err, "receiver: RECV_MESSAGE: grpc_call_start_batch returned %d", (int)e);
      goto finish;
    }
    recv_pending = 1;
    if (res.got == 0) {
      c0 = cpu_s();
      q0 = runq_wait_s();
    }

    grpc_byte_buffer_reader r;
    if (!grpc_byte_buffer_reader_init(&r, msg)) {
      grpc_byte_buffer_destroy(msg);
      snprintf(res.err, sizeof res.err, "receiver: cannot read a message");
      goto finish;
    }
    grpc_slice flat = grpc_empty_slice();
    grpc_slice *first = NULL;
    const void *p;
    size_t len;
    int copied = 0;
    if (msg->type == GRPC_BB_RAW && msg->data.raw.compression == GRPC_COMPRESS_NONE &&
        msg->data.raw.slice_buffer.count == 1 && grpc_byte_buffer_reader_peek(&r, &first)) {
      p = GRPC_SLICE_START_PTR(*first); /* the whole message in one slice: decode in place */
      len = GRPC_SLICE_LENGTH(*first);
    } else {
      flat = grpc_byte_buffer_reader_readall(&r);
      copied = 1;
      p = GRPC_SLICE_START_PTR(flat);
      len = GRPC_SLICE_LENGTH(flat);
    }
    Item *items;
    int n;
    char err[200];
    int rc = wire_decode(p, len, EDGE, &schema, INT_MAX, &items, &n, err, sizeof err);
    if (copied) grpc_slice_unref(flat);
    grpc_byte_buffer_reader_destroy(&r);
    grpc_byte_buffer_destroy(msg);
    if (rc < 0) {
      snprintf(res.err, sizeof res.err, "receiver: message after %lld tuples: %s", res.got, err);
      goto finish;
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
      if (items[i].kind != ITEM_TUPLE || items[i].seq != expect) bad = 1;
      expect++;
      if (items[i].kind == ITEM_TUPLE) tuple_unref(items[i].t);
    }
    free(items);
    if (bad) {
      snprintf(res.err, sizeof res.err, "receiver: unexpected item near tuple %lld", res.got);
      goto finish;
    }
    double t = now_s();
    if (res.got == 0) res.t_first = t;
    res.got += n;
    res.t_last = t;
  }
  if (res.got != n_total) {
    snprintf(res.err, sizeof res.err, "receiver: stream ended after %lld tuples, expected %lld", res.got, n_total);
    goto finish;
  }
  res.ok = 1;

finish:
  /* end the call: status OK when everything arrived, else INTERNAL (the client reports it) */
  if (call) {
    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    grpc_slice status_details = grpc_slice_from_static_string(res.ok ? "" : "receiver failed");
    ops[1].data.send_status_from_server.status = res.ok ? GRPC_STATUS_OK : GRPC_STATUS_INTERNAL;
    ops[1].data.send_status_from_server.status_details = &status_details;
    if ((e = grpc_call_start_batch(call, ops, 2, (void *)(intptr_t)S_STATUS, NULL)) == GRPC_CALL_OK) {
      status_pending = 1;
    } else {
      if (res.ok) snprintf(res.err, sizeof res.err, "receiver: SEND_STATUS: grpc_call_start_batch returned %d", (int)e);
      res.ok = 0;
      grpc_call_cancel(call, NULL);
    }
    if (status_pending && wait_tag(cq, S_STATUS, deadline, done, success) != 1) {
      if (res.ok) snprintf(res.err, sizeof res.err, "receiver: sending the final status failed");
      res.ok = 0;
      grpc_call_cancel(call, NULL);
    }
    status_pending = 0;
    if (!res.ok) grpc_call_cancel(call, NULL);
    if (recv_pending) { /* only after a failure: the cancel completes it */
      if (wait_tag(cq, S_RECV, deadline, done, success) < 0) goto hang;
      if (bb) grpc_byte_buffer_destroy(bb);
      bb = NULL;
      recv_pending = 0;
    }
    if (close_pending) {
      if (wait_tag(cq, S_CLOSE, deadline, done, success) < 0) goto hang;
      close_pending = 0;
      if (cancelled && res.ok) {
        snprintf(res.err, sizeof res.err, "receiver: the call was cancelled");
        res.ok = 0;
      }
    }
    grpc_call_unref(call);
    call = NULL;
  }
  res.cpu = cpu_s() - c0;
  res.runq = runq_wait_s() - q0;

shutdown:
  grpc_server_shutdown_and_notify(server, cq, (void *)(intptr_t)S_SHUTDOWN);
  grpc_server_cancel_all_calls(server); /* nothing should be left; the pending request_call ends */
  if (wait_tag(cq, S_SHUTDOWN, deadline, done, success) < 0) goto hang;
  if (request_pending) { /* comes back with success 0 */
    if (!done[S_NEW] && wait_tag(cq, S_NEW, deadline, done, success) < 0) goto hang;
    if (call) grpc_call_unref(call);
    call = NULL;
  }
  grpc_server_destroy(server);
  grpc_completion_queue_shutdown(cq);
  while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type != GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(cq);
  grpc_call_details_destroy(&details);
  grpc_metadata_array_destroy(&md);
  grpc_shutdown();
  if (write(fd, &res, sizeof res) != sizeof res) return 1;
  close(fd);
  return res.ok ? 0 : 1;

hang:
  snprintf(res.err, sizeof res.err, "receiver: gRPC did not complete an operation within %d s", DEADLINE_S);
  res.ok = 0;
  if (write(fd, &res, sizeof res) != sizeof res) return 1;
  _exit(1); /* without a clean shutdown: something is stuck */
}

/* ---- the sender (client), in the parent ---- */

enum { C_SEND = 1, C_STATUS, C_INITMD };

/* Builds message `m` (tuples m*per_msg ..) as a byte buffer. */
static grpc_byte_buffer *build(long long m, long long per_msg, long long n_total, Item *items, Buf *buf) {
  long long lo = m * per_msg, hi = lo + per_msg < n_total ? lo + per_msg : n_total;
  int n = (int)(hi - lo);
  for (int i = 0; i < n; i++) {
    long long seq = lo + i;
    Value vals[3] = {value_int(seq % 100), value_int(sf_rand(seq) % 1000), value_double((double)seq * 0.5)};
    items[i] = (Item){.kind = ITEM_TUPLE, .seq = (uint64_t)seq, .src = (uint64_t)seq, .t = tuple_new(vals, 3)};
  }
  buf_reset(buf);
  wire_encode(EDGE, &schema, items, n, buf);
  for (int i = 0; i < n; i++) tuple_unref(items[i].t);
  grpc_slice sl = grpc_slice_malloc(buf->n);
  memcpy(GRPC_SLICE_START_PTR(sl), buf->p, buf->n);
  grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&sl, 1);
  grpc_slice_unref(sl);
  return bb;
}

static int sender(int port, long long n_total, long long per_msg, double *t0_out, double *t_end_out, double *cpu_out,
                  double *runq_out, char *err, size_t errlen) {
  int rc = -1;
  grpc_init();
  grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
  grpc_channel_credentials *creds = grpc_insecure_credentials_create();
  grpc_arg ca[] = {int_arg(GRPC_ARG_ENABLE_RETRIES, 0)};
  grpc_channel_args args = {sizeof ca / sizeof *ca, ca};
  char target[64];
  snprintf(target, sizeof target, "127.0.0.1:%d", port);
  grpc_channel *ch = grpc_channel_create(target, creds, &args);
  grpc_channel_credentials_release(creds);
  gpr_timespec deadline = deadline_after(DEADLINE_S);
  grpc_call *call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
                                             grpc_slice_from_static_string(METHOD), NULL,
                                             gpr_convert_clock_type(deadline, GPR_CLOCK_REALTIME), NULL);
  grpc_metadata_array init_md, trail_md;
  grpc_metadata_array_init(&init_md);
  grpc_metadata_array_init(&trail_md);
  grpc_status_code status = GRPC_STATUS_UNKNOWN;
  grpc_slice details = grpc_empty_slice();
  int done[NTAGS] = {0}, success[NTAGS] = {0};
  int status_pending = 0, initmd_pending = 0, send_pending = 0;
  grpc_byte_buffer *inflight = NULL, *next = NULL;
  Item *items = sf_xmalloc(sizeof(Item) * (size_t)per_msg);
  Buf buf;
  buf_init(&buf);
  grpc_call_error e;

  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  op.data.recv_status_on_client.trailing_metadata = &trail_md;
  op.data.recv_status_on_client.status = &status;
  op.data.recv_status_on_client.status_details = &details;
  if ((e = grpc_call_start_batch(call, &op, 1, (void *)(intptr_t)C_STATUS, NULL)) != GRPC_CALL_OK) {
    snprintf(err, errlen, "sender: RECV_STATUS_ON_CLIENT: grpc_call_start_batch returned %d", (int)e);
    goto end;
  }
  status_pending = 1;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_INITIAL_METADATA;
  op.data.recv_initial_metadata.recv_initial_metadata = &init_md;
  if ((e = grpc_call_start_batch(call, &op, 1, (void *)(intptr_t)C_INITMD, NULL)) != GRPC_CALL_OK) {
    snprintf(err, errlen, "sender: RECV_INITIAL_METADATA: grpc_call_start_batch returned %d", (int)e);
    goto end;
  }
  initmd_pending = 1;

  long long nmsg = (n_total + per_msg - 1) / per_msg;
  double t0 = now_s(), c0 = cpu_s(), q0 = runq_wait_s();
  *t0_out = t0;
  next = nmsg > 0 ? build(0, per_msg, n_total, items, &buf) : NULL;
  for (long long m = 0; m <= nmsg; m++) {
    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    size_t nops = 0;
    if (m == 0) {
      ops[nops].op = GRPC_OP_SEND_INITIAL_METADATA;
      ops[nops++].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY | GRPC_INITIAL_METADATA_WAIT_FOR_READY_EXPLICITLY_SET;
    }
    if (m < nmsg) {
      ops[nops].op = GRPC_OP_SEND_MESSAGE;
      ops[nops++].data.send_message.send_message = next;
    } else {
      ops[nops++].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    }
    if ((e = grpc_call_start_batch(call, ops, nops, (void *)(intptr_t)C_SEND, NULL)) != GRPC_CALL_OK) {
      if (next) grpc_byte_buffer_destroy(next);
      snprintf(err, errlen, "sender: SEND: grpc_call_start_batch returned %d", (int)e);
      goto end;
    }
    send_pending = 1;
    inflight = next;
    next = NULL;
    /* build the next message while this one is on its way */
    if (m + 1 < nmsg) next = build(m + 1, per_msg, n_total, items, &buf);
    int ok = wait_tag(cq, C_SEND, deadline, done, success);
    if (ok < 0) {
      snprintf(err, errlen, "sender: timed out after %lld messages", m);
      goto end;
    }
    send_pending = 0;
    if (inflight) grpc_byte_buffer_destroy(inflight);
    inflight = NULL;
    if (!ok) {
      snprintf(err, errlen, "sender: %s failed after %lld messages", m < nmsg ? "SEND_MESSAGE" : "SEND_CLOSE", m);
      goto end;
    }
  }
  if (wait_tag(cq, C_STATUS, deadline, done, success) < 0) {
    snprintf(err, errlen, "sender: no final status within %d s", DEADLINE_S);
    goto end;
  }
  status_pending = 0;
  *t_end_out = now_s();
  *cpu_out = cpu_s() - c0;
  *runq_out = runq_wait_s() - q0;
  if (status != GRPC_STATUS_OK) {
    char *d = grpc_slice_to_c_string(details);
    snprintf(err, errlen, "sender: call ended with status %d: %s", (int)status, d);
    gpr_free(d);
    goto end;
  }
  rc = 0;

end:
  if (next) grpc_byte_buffer_destroy(next);
  if (rc != 0) grpc_call_cancel(call, NULL);
  /* after a cancel every pending batch completes */
  if (send_pending && wait_tag(cq, C_SEND, deadline, done, success) < 0) rc = -2;
  if (inflight) grpc_byte_buffer_destroy(inflight);
  if (status_pending && wait_tag(cq, C_STATUS, deadline, done, success) < 0) rc = -2;
  if (initmd_pending && wait_tag(cq, C_INITMD, deadline, done, success) < 0) rc = -2;
  if (rc == -2) {
    snprintf(err, errlen, "sender: gRPC did not complete an operation within %d s", DEADLINE_S);
    return -1; /* without a clean shutdown: something is stuck */
  }
  grpc_call_unref(call);
  grpc_channel_destroy(ch);
  grpc_completion_queue_shutdown(cq);
  while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type != GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(cq);
  grpc_metadata_array_destroy(&init_md);
  grpc_metadata_array_destroy(&trail_md);
  grpc_slice_unref(details);
  grpc_shutdown();
  buf_release(&buf);
  free(items);
  return rc;
}

static int read_full(int fd, void *p, size_t n) {
  size_t off = 0;
  while (off < n) {
    ssize_t r = read(fd, (char *)p + off, n - off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    off += (size_t)r;
  }
  return 0;
}

static int usage(void) {
  fprintf(stderr, "usage: sf-bench-grpc-ceiling N PER_MSG [-v]   (N >= 1, 1 <= PER_MSG <= 1000000)\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "-v") != 0)) return usage();
  char *end;
  long long n_total = strtoll(argv[1], &end, 10);
  if (*end || n_total < 1) return usage();
  long long per_msg = strtoll(argv[2], &end, 10);
  if (*end || per_msg < 1 || per_msg > 1000000) return usage();
  int verbose = argc == 4;

  int fds[2];
  if (pipe(fds) != 0) {
    perror("sf-bench-grpc-ceiling: pipe");
    return 1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    perror("sf-bench-grpc-ceiling: fork");
    return 1;
  }
  if (pid == 0) {
    close(fds[0]);
    alarm(DEADLINE_S + 30); /* a last resort if gRPC itself hangs */
    _exit(receiver(fds[1], n_total, per_msg));
  }
  close(fds[1]);
  alarm(DEADLINE_S + 40);

  int port = 0;
  char err[512] = "";
  Result res;
  memset(&res, 0, sizeof res);
  int failed = 0;
  double t0 = 0, t_end = 0, cpu = 0, runq = 0;
  if (read_full(fds[0], &port, sizeof port) < 0 || port == 0) {
    snprintf(err, sizeof err, "the receiver did not start");
    failed = 1;
  } else if (sender(port, n_total, per_msg, &t0, &t_end, &cpu, &runq, err, sizeof err) < 0) {
    failed = 1;
  }
  if (failed) kill(pid, SIGTERM); /* it would otherwise wait for its deadline */
  int have_res = read_full(fds[0], &res, sizeof res) == 0;
  close(fds[0]);
  int wst;
  while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {
  }
  if (failed) {
    fprintf(stderr, "sf-bench-grpc-ceiling: %s\n", err);
    if (have_res && !res.ok && res.err[0]) fprintf(stderr, "sf-bench-grpc-ceiling: %s\n", res.err);
    return 1;
  }
  if (!have_res || !res.ok || !WIFEXITED(wst) || WEXITSTATUS(wst) != 0) {
    fprintf(stderr, "sf-bench-grpc-ceiling: %s\n",
            have_res && res.err[0] ? res.err : "the receiver ended without reporting success");
    return 1;
  }
  if (res.got != n_total) {
    fprintf(stderr, "sf-bench-grpc-ceiling: the receiver got %lld tuples, not %lld\n", res.got, n_total);
    return 1;
  }
  double s = res.t_last - t0;
  printf("ceiling: %lld tuples, %lld per message, %.3f seconds, %.2f M tuples/s\n", n_total, per_msg, s,
         (double)n_total / s / 1e6);
  fflush(stdout);
  if (verbose)
    fprintf(stderr,
            "  (S = client's first send to receiver's last decode)  client end-to-end %.3f s; CPU per tuple: "
            "sender %.3f us, receiver %.3f us; waiting for a CPU: sender %.3f s, receiver %.3f s\n",
            t_end - t0, cpu / (double)n_total * 1e6, res.cpu / (double)n_total * 1e6, runq, res.runq);
  return 0;
}
