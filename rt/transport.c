/* transport.c: the gRPC transport (see transport.h for the protocol and the contracts).
 *
 * Structure.  One completion queue and one thread (poller_main) per Transport; that thread is the
 * only one inside grpc_completion_queue_next, so all network I/O happens there.  All transport
 * state is guarded by one mutex, t->mu; gRPC batches are started with it held (from the poller or
 * from executor threads), which also serialises the batches of each call as gRPC requires.
 * Executor threads wait on their stream's condition variable.  Copies in and out of gRPC byte
 * buffers happen in executor threads, outside the lock.
 *
 * Every operation put on the queue carries a Tag naming what completed and on which object.  Each
 * call counts its batches in flight (nops); a call is released (grpc_call_unref) only when nothing
 * is in flight and its end has been observed (RECV_STATUS_ON_CLIENT / RECV_CLOSE_ON_SERVER), so no
 * completion can ever arrive for freed memory.  t->live_calls counts unreleased calls, which is
 * what transport_stop drains.
 *
 * Sending end (client call, TxStream):
 *   batch SEND_INITIAL_METADATA (WAIT_FOR_READY) | batch RECV_STATUS_ON_CLIENT |
 *   batch RECV_INITIAL_METADATA + RECV_MESSAGE (first grant), then RECV_MESSAGE per grant;
 *   SEND_MESSAGE one at a time from a queue bounded by the credit; SEND_CLOSE_FROM_CLIENT at the end.
 *   The call has no deadline (it lives as long as the edge); instead the poller cancels a call not
 *   accepted (no first grant) within connect_timeout_ms, with a message that says whether the peer
 *   could not be reached at all or connected but did not accept the edge.
 * Receiving end (server call, SCall, attached to the RxStream of its edge):
 *   batch RECV_CLOSE_ON_SERVER | batch SEND_INITIAL_METADATA + SEND_MESSAGE(first grant), then
 *   SEND_MESSAGE per grant | RECV_MESSAGE one at a time; SEND_STATUS_FROM_SERVER(OK) once the
 *   application has read the clean end (transport_recv returned 0).
 *   A refused call gets one batch: SEND_INITIAL_METADATA + SEND_STATUS_FROM_SERVER + RECV_CLOSE. */
#include "transport.h"

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SF_METHOD "/sf.Exec/Edge"
#define MD_EDGE "sf-edge"
#define MD_TOKEN "sf-token"
#define MD_PEER "sf-peer"
#define GRANT_BYTES 8
#define MAX_GRANT (1u << 20)        /* largest single credit grant a sender believes */
#define MAX_CREDIT (1 << 30)        /* largest credit a sender holds */
#define MAX_ID 256                  /* longest edge id / peer name kept from metadata */
#define ERRLEN 600
#define TIMER_PERIOD_MS 50          /* how often the poller checks deadlines */
#define POLL_MS 100                 /* longest single wait in grpc_completion_queue_next */
#define STOP_GRACE_MS 1000          /* how long transport_stop lets calls end before cancelling all */
#ifndef USE_BUFFER_HINT
#define USE_BUFFER_HINT 1           /* hint all but the last queued message (see tx_pump) */
#endif

/* ---- small helpers ---- */

typedef enum {
  TAG_TX_MD, TAG_TX_STATUS, TAG_TX_RECV, TAG_TX_SEND, TAG_TX_CLOSE,
  TAG_SC_NEW, TAG_SC_CLOSE, TAG_SC_RECV, TAG_SC_SEND, TAG_SC_STATUS,
  TAG_SHUTDOWN
} TagKind;

typedef struct Tag {
  TagKind kind; /* what completed */
  void *obj;    /* TxStream, SCall or Transport */
} Tag;

/* A FIFO of byte buffers with a fixed capacity. */
typedef struct MsgQueue {
  grpc_byte_buffer **items; /* cap slots */
  int cap;                  /* capacity */
  int head;                 /* index of the oldest */
  int len;                  /* how many are queued */
} MsgQueue;

static int mq_init(MsgQueue *q, int cap) {
  q->items = calloc((size_t)cap, sizeof *q->items);
  q->cap = cap;
  q->head = q->len = 0;
  return q->items ? 0 : -1;
}
static void mq_push(MsgQueue *q, grpc_byte_buffer *bb) {
  q->items[(q->head + q->len) % q->cap] = bb;
  q->len++;
}
static grpc_byte_buffer *mq_pop(MsgQueue *q) {
  grpc_byte_buffer *bb = q->items[q->head];
  q->head = (q->head + 1) % q->cap;
  q->len--;
  return bb;
}
static void mq_clear(MsgQueue *q) {
  while (q->len > 0) grpc_byte_buffer_destroy(mq_pop(q));
}
static void mq_free(MsgQueue *q) {
  if (q->items) mq_clear(q);
  free(q->items);
  q->items = NULL;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A printable-ASCII string of 1..max bytes (what an HTTP/2 header value may hold). */
static int printable(const char *s, size_t max) {
  if (!s || !*s) return 0;
  size_t n = 0;
  for (; s[n]; n++)
    if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] > 0x7e || n >= max) return 0;
  return 1;
}

/* Copies at most dstlen-1 bytes of a peer-supplied string, replacing anything unprintable. */
static void sanitize(char *dst, size_t dstlen, const void *src, size_t len) {
  const unsigned char *p = src;
  size_t n = len < dstlen - 1 ? len : dstlen - 1;
  for (size_t i = 0; i < n; i++) dst[i] = (p[i] >= 0x20 && p[i] <= 0x7e) ? (char)p[i] : '?';
  dst[n] = '\0';
}

/* Constant-time comparison of a received value with the expected token: the time depends only on
 * the expected token's length. */
static int token_ok(const uint8_t *got, size_t gotlen, const char *want, size_t wantlen) {
  volatile unsigned diff = (gotlen != wantlen);
  for (size_t i = 0; i < wantlen; i++) diff |= (unsigned)((i < gotlen ? got[i] : 0) ^ (uint8_t)want[i]);
  return diff == 0;
}

static const char *status_name(grpc_status_code c) {
  static const char *names[] = {
      "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
      "UNAUTHENTICATED"};
  return (c >= 0 && (size_t)c < sizeof names / sizeof *names) ? names[c] : "UNKNOWN_STATUS";
}

static grpc_arg int_arg(const char *key, int value) {
  grpc_arg a;
  memset(&a, 0, sizeof a);
  a.type = GRPC_ARG_INTEGER;
  a.key = (char *)key;
  a.value.integer = value;
  return a;
}

static void put_be64(uint8_t *p, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (uint8_t)v;
}
static uint64_t get_be64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
  return v;
}

/* Copies a received byte buffer into one malloc'd block (never NULL when it succeeds, even for 0
 * bytes).  A message may be split over several slices; uncompressed buffers are copied slice by
 * slice (one copy), anything else goes through readall.  Returns NULL on allocation failure. */
static void *bb_flatten(grpc_byte_buffer *bb, size_t *len) {
  grpc_byte_buffer_reader r;
  if (!grpc_byte_buffer_reader_init(&r, bb)) return NULL;
  char *p = NULL;
  if (bb->type == GRPC_BB_RAW && bb->data.raw.compression == GRPC_COMPRESS_NONE) {
    size_t n = grpc_byte_buffer_length(bb), off = 0;
    p = malloc(n ? n : 1);
    grpc_slice sl;
    while (grpc_byte_buffer_reader_next(&r, &sl)) {
      size_t sn = GRPC_SLICE_LENGTH(sl);
      if (p && off + sn <= n) memcpy(p + off, GRPC_SLICE_START_PTR(sl), sn);
      off += sn;
      grpc_slice_unref(sl);
    }
    if (p && off != n) { free(p); p = NULL; }
    *len = n;
  } else {
    grpc_slice all = grpc_byte_buffer_reader_readall(&r);
    size_t n = GRPC_SLICE_LENGTH(all);
    p = malloc(n ? n : 1);
    if (p && n) memcpy(p, GRPC_SLICE_START_PTR(all), n);
    grpc_slice_unref(all);
    *len = n;
  }
  grpc_byte_buffer_reader_destroy(&r);
  return p;
}

/* ---- objects ---- */

typedef struct SCall SCall;

struct TxStream {
  Transport *t;
  TxStream *next;               /* in t->txs */
  char *peer, *address, *edge;  /* copies; also the metadata values (static slices over them) */
  grpc_channel *ch;             /* one channel per edge, destroyed by transport_stop */
  grpc_call *call;              /* NULL once released */
  int nops;                     /* batches in flight */
  Tag tag_md, tag_status, tag_recv, tag_send, tag_close;
  int64_t connect_deadline;     /* when an unaccepted call is given up */
  int accepted;                 /* the first credit grant arrived */
  grpc_metadata md[3];          /* our initial metadata */
  grpc_metadata_array init_md;  /* the server's initial metadata */
  grpc_metadata_array trail_md; /* the server's trailing metadata */
  grpc_status_code status;      /* the final status ... */
  grpc_slice status_details;    /* ... and its details */
  int status_done;              /* RECV_STATUS_ON_CLIENT completed */
  grpc_byte_buffer *recv_buf;   /* the grant being received */
  MsgQueue q;                   /* messages queued behind the one in flight */
  grpc_byte_buffer *inflight;   /* the message being sent */
  int64_t credit;               /* messages we may still queue */
  int close_requested;          /* transport_close was called */
  int close_sent;               /* SEND_CLOSE_FROM_CLIENT started */
  char err[ERRLEN];             /* why it failed; "" if it has not */
  pthread_cond_t cv;            /* signalled on credit, queue space, status, failure */
};

struct RxStream {
  Transport *t;
  RxStream *next;               /* in t->rxs */
  char *edge;
  size_t edge_len;
  SCall *call;                  /* the attached call, NULL before it arrives and after release */
  int had_call;                 /* a call was attached once (a second one is refused) */
  int64_t deadline;             /* when waiting for the call is given up (0: never) */
  MsgQueue q;                   /* received, not yet read */
  int eos;                      /* the clean end was received */
  uint64_t granted;             /* credit granted in total */
  uint64_t received;            /* messages received in total */
  uint64_t ungranted;           /* consumed messages not yet granted again */
  char from[2 * MAX_ID + 64];   /* "host 'h0' (ipv4:127.0.0.1:5555)" of the attached call */
  char err[ERRLEN];
  pthread_cond_t cv;            /* signalled on message, end, failure */
};

struct SCall {
  Transport *t;
  SCall *next;                  /* in t->scalls (once the call arrived) */
  grpc_call *call;
  grpc_call_details details;
  grpc_metadata_array md;
  Tag tag_new, tag_close, tag_recv, tag_send, tag_status;
  int nops;
  int pending;                  /* arrived, waiting for transport_accept of its edge */
  int64_t deadline;             /* when pending is given up */
  int md_sent, close_posted, closed, status_sent, status_has_close, cancelled, send_active;
  grpc_byte_buffer *recv_buf;
  grpc_byte_buffer *send_buf;
  uint8_t grant[GRANT_BYTES];
  char status_msg[ERRLEN];      /* the status details sent (static slice over it) */
  RxStream *rx;                 /* attached stream, or NULL */
  char edge[MAX_ID + 1];
  size_t edge_len;
  int has_edge;
  char from[2 * MAX_ID + 64];
};

struct Transport {
  char *name, *listen, *token;  /* copies of the configuration strings */
  size_t token_len;
  size_t max_message;
  int credits, connect_timeout_ms, accept_timeout_ms, keepalive_ms;
  void (*log)(void *ctx, const char *line);
  void *log_ctx;

  pthread_mutex_t mu;
  pthread_cond_t cv;            /* transport_stop waits on it (busy, live calls, shutdown) */
  grpc_completion_queue *cq;
  grpc_server *server;
  int port;
  grpc_channel_credentials *creds;
  grpc_arg client_arg_buf[12];
  grpc_channel_args client_args;
  pthread_t poller;
  int poller_started;

  TxStream *txs;
  RxStream *rxs;
  SCall *scalls;
  int live_calls;               /* grpc_call objects not yet released */
  int request_pending;          /* a grpc_server_request_call is outstanding */
  int shutdown_done;            /* the server shutdown tag came back */
  Tag tag_shutdown;
  int stopping;
  int busy;                     /* executor threads inside the API */
  int64_t next_timer_check;
};

static void tlog(Transport *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tlog(Transport *t, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (t->log)
    t->log(t->log_ctx, line);
  else
    fprintf(stderr, "%s\n", line);
}

static void leave(Transport *t) {
  t->busy--;
  if (t->stopping) pthread_cond_broadcast(&t->cv);
}

/* ---- sending end ---- */

static int tx_batch(TxStream *s, const grpc_op *ops, size_t n, Tag *tag) {
  grpc_call_error e = grpc_call_start_batch(s->call, ops, n, tag, NULL);
  if (e != GRPC_CALL_OK) {
    if (!s->err[0])
      snprintf(s->err, sizeof s->err, "edge '%s' to host '%s' at %s: internal error: grpc_call_start_batch returned %d",
               s->edge, s->peer, s->address, (int)e);
    grpc_call_cancel(s->call, NULL);
    pthread_cond_broadcast(&s->cv);
    return -1;
  }
  s->nops++;
  return 0;
}

/* Fails the stream for a reason of our own: the message stays, the call is cancelled (the peer
 * sees the stream break), nothing queued is sent. */
static void tx_fail(TxStream *s, grpc_status_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void tx_fail(TxStream *s, grpc_status_code code, const char *fmt, ...) {
  if (!s->err[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
  }
  if (s->call && !s->status_done) grpc_call_cancel_with_status(s->call, code, s->err, NULL);
  mq_clear(&s->q);
  pthread_cond_broadcast(&s->cv);
}

/* Starts the next send: the oldest queued message, or the half-close once all were sent. */
static void tx_pump(TxStream *s) {
  if (!s->call || s->inflight || s->err[0] || s->status_done) return;
  grpc_op op;
  memset(&op, 0, sizeof op);
  if (s->q.len > 0) {
    s->inflight = mq_pop(&s->q);
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = s->inflight;
    /* Buffer all but the last message of a burst; the unhinted last one flushes them. */
    if (USE_BUFFER_HINT && s->q.len > 0) op.flags = GRPC_WRITE_BUFFER_HINT;
    if (tx_batch(s, &op, 1, &s->tag_send) != 0) {
      grpc_byte_buffer_destroy(s->inflight);
      s->inflight = NULL;
    }
    pthread_cond_broadcast(&s->cv); /* queue space */
  } else if (s->close_requested && !s->close_sent) {
    op.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    s->close_sent = 1;
    tx_batch(s, &op, 1, &s->tag_close);
  }
}

static void tx_post_recv(TxStream *s, int first) {
  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  size_t n = 0;
  if (first) {
    ops[n].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[n++].data.recv_initial_metadata.recv_initial_metadata = &s->init_md;
  }
  ops[n].op = GRPC_OP_RECV_MESSAGE;
  ops[n++].data.recv_message.recv_message = &s->recv_buf;
  tx_batch(s, ops, n, &s->tag_recv);
}

static void tx_maybe_release(TxStream *s) {
  if (s->call && s->nops == 0 && s->status_done) {
    grpc_call_unref(s->call);
    s->call = NULL;
    s->t->live_calls--;
  }
}

static void tx_on_recv(TxStream *s, int success) {
  grpc_byte_buffer *bb = s->recv_buf;
  s->recv_buf = NULL;
  if (!success || !bb) return; /* the call ended or failed: RECV_STATUS_ON_CLIENT says how */
  size_t n = 0;
  uint8_t *p = bb_flatten(bb, &n);
  grpc_byte_buffer_destroy(bb);
  uint64_t v = (p && n == GRANT_BYTES) ? get_be64(p) : 0;
  free(p);
  if (n != GRANT_BYTES || v == 0 || v > MAX_GRANT || s->credit + (int64_t)v > MAX_CREDIT) {
    tx_fail(s, GRPC_STATUS_INVALID_ARGUMENT, "edge '%s' to host '%s' at %s: malformed credit grant (%zu bytes)",
            s->edge, s->peer, s->address, n);
    return;
  }
  s->accepted = 1;
  s->credit += (int64_t)v;
  pthread_cond_broadcast(&s->cv);
  if (!s->err[0] && !s->status_done) tx_post_recv(s, 0);
}

static void tx_on_status(TxStream *s) {
  s->status_done = 1;
  if (!s->err[0]) {
    if (s->status != GRPC_STATUS_OK) {
      char details[300];
      sanitize(details, sizeof details, GRPC_SLICE_START_PTR(s->status_details), GRPC_SLICE_LENGTH(s->status_details));
      snprintf(s->err, sizeof s->err, "edge '%s' to host '%s' at %s failed: %s%s%s", s->edge, s->peer, s->address,
               status_name(s->status), details[0] ? ": " : "", details);
    } else if (!s->close_sent) {
      snprintf(s->err, sizeof s->err, "edge '%s' to host '%s' at %s: the receiver ended the stream early",
               s->edge, s->peer, s->address);
    }
  }
  grpc_slice_unref(s->status_details);
  s->status_details = grpc_empty_slice();
  grpc_metadata_array_destroy(&s->trail_md);
  grpc_metadata_array_init(&s->trail_md);
  mq_clear(&s->q);
  pthread_cond_broadcast(&s->cv);
}

static void tx_on_send(TxStream *s, int success) {
  if (s->inflight) grpc_byte_buffer_destroy(s->inflight);
  s->inflight = NULL;
  if (!success) {
    /* The call is over; its status (which always comes) will say why.  No grpc_call_cancel
     * here: it would replace the real status (e.g. UNAVAILABLE) with CANCELLED. */
    mq_clear(&s->q);
    pthread_cond_broadcast(&s->cv);
    return;
  }
  tx_pump(s);
}

TxStream *transport_open(Transport *t, const char *peer_name, const char *address, const char *edge) {
  if (!t || !printable(peer_name, MAX_ID) || !printable(address, 1024) || !printable(edge, MAX_ID)) return NULL;
  TxStream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->t = t;
  s->peer = strdup(peer_name);
  s->address = strdup(address);
  s->edge = strdup(edge);
  if (!s->peer || !s->address || !s->edge || mq_init(&s->q, t->credits) != 0) goto fail;
  pthread_cond_init(&s->cv, NULL);
  s->tag_md = (Tag){TAG_TX_MD, s};
  s->tag_status = (Tag){TAG_TX_STATUS, s};
  s->tag_recv = (Tag){TAG_TX_RECV, s};
  s->tag_send = (Tag){TAG_TX_SEND, s};
  s->tag_close = (Tag){TAG_TX_CLOSE, s};
  grpc_metadata_array_init(&s->init_md);
  grpc_metadata_array_init(&s->trail_md);
  s->status_details = grpc_empty_slice();

  pthread_mutex_lock(&t->mu);
  if (t->stopping) {
    pthread_mutex_unlock(&t->mu);
    pthread_cond_destroy(&s->cv);
    grpc_metadata_array_destroy(&s->init_md);
    grpc_metadata_array_destroy(&s->trail_md);
    goto fail;
  }
  s->next = t->txs;
  t->txs = s;
  s->connect_deadline = now_ms() + t->connect_timeout_ms;
  s->ch = grpc_channel_create(s->address, t->creds, &t->client_args);
  s->call = grpc_channel_create_call(s->ch, NULL, GRPC_PROPAGATE_DEFAULTS, t->cq, grpc_slice_from_static_string(SF_METHOD),
                                     NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  if (!s->call) {
    snprintf(s->err, sizeof s->err, "edge '%s' to host '%s' at %s: cannot create the call", s->edge, s->peer, s->address);
    s->status_done = 1;
    pthread_mutex_unlock(&t->mu);
    return s;
  }
  t->live_calls++;

  size_t nmd = 0;
  s->md[nmd].key = grpc_slice_from_static_string(MD_EDGE);
  s->md[nmd++].value = grpc_slice_from_static_string(s->edge);
  s->md[nmd].key = grpc_slice_from_static_string(MD_TOKEN);
  s->md[nmd++].value = grpc_slice_from_static_string(t->token);
  if (t->name) {
    s->md[nmd].key = grpc_slice_from_static_string(MD_PEER);
    s->md[nmd++].value = grpc_slice_from_static_string(t->name);
  }
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  op.data.recv_status_on_client.trailing_metadata = &s->trail_md;
  op.data.recv_status_on_client.status = &s->status;
  op.data.recv_status_on_client.status_details = &s->status_details;
  if (tx_batch(s, &op, 1, &s->tag_status) != 0) {
    s->status_done = 1; /* no status will come: release now */
    tx_maybe_release(s);
    pthread_mutex_unlock(&t->mu);
    return s;
  }
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_SEND_INITIAL_METADATA;
  op.flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY | GRPC_INITIAL_METADATA_WAIT_FOR_READY_EXPLICITLY_SET;
  op.data.send_initial_metadata.count = nmd;
  op.data.send_initial_metadata.metadata = s->md;
  if (tx_batch(s, &op, 1, &s->tag_md) == 0) tx_post_recv(s, 1);
  pthread_mutex_unlock(&t->mu);
  return s;

fail:
  mq_free(&s->q);
  free(s->peer);
  free(s->address);
  free(s->edge);
  free(s);
  return NULL;
}

int transport_send(TxStream *s, const void *buf, size_t len) {
  Transport *t = s->t;
  grpc_byte_buffer *bb = NULL;
  if (len <= t->max_message) {
    grpc_slice sl = grpc_slice_malloc(len);
    if (len) memcpy(GRPC_SLICE_START_PTR(sl), buf, len);
    bb = grpc_raw_byte_buffer_create(&sl, 1);
    grpc_slice_unref(sl);
  }
  pthread_mutex_lock(&t->mu);
  t->busy++;
  if (!bb) {
    tx_fail(s, GRPC_STATUS_RESOURCE_EXHAUSTED, "edge '%s' to host '%s' at %s: message of %zu bytes exceeds max_message %zu",
            s->edge, s->peer, s->address, len, t->max_message);
  } else {
    while (!s->err[0] && !t->stopping && !s->status_done && (s->credit == 0 || s->q.len >= s->q.cap))
      pthread_cond_wait(&s->cv, &t->mu);
    if (!s->err[0] && t->stopping) tx_fail(s, GRPC_STATUS_CANCELLED, "edge '%s' to host '%s': transport stopped", s->edge, s->peer);
    if (!s->err[0] && (s->close_requested || s->status_done))
      snprintf(s->err, sizeof s->err, "edge '%s' to host '%s': send after close", s->edge, s->peer);
  }
  int rc = -1;
  if (!s->err[0]) {
    s->credit--;
    mq_push(&s->q, bb);
    bb = NULL;
    tx_pump(s);
    rc = 0;
  }
  leave(t);
  pthread_mutex_unlock(&t->mu);
  if (bb) grpc_byte_buffer_destroy(bb);
  return rc;
}

int transport_close(TxStream *s) {
  Transport *t = s->t;
  pthread_mutex_lock(&t->mu);
  t->busy++;
  if (!s->err[0] && !t->stopping) {
    if (!s->close_requested) {
      s->close_requested = 1;
      tx_pump(s);
    }
    while (!s->status_done && !s->err[0] && !t->stopping) pthread_cond_wait(&s->cv, &t->mu);
  }
  if (!s->err[0] && !s->status_done)
    tx_fail(s, GRPC_STATUS_CANCELLED, "edge '%s' to host '%s': transport stopped", s->edge, s->peer);
  int rc = s->err[0] ? -1 : 0;
  leave(t);
  pthread_mutex_unlock(&t->mu);
  return rc;
}

const char *transport_tx_error(const TxStream *s) { return s->err; }

/* ---- receiving end ---- */

static int sc_batch(SCall *sc, const grpc_op *ops, size_t n, Tag *tag) {
  grpc_call_error e = grpc_call_start_batch(sc->call, ops, n, tag, NULL);
  if (e != GRPC_CALL_OK) {
    tlog(sc->t, "transport: internal error: grpc_call_start_batch returned %d on a call from %s", (int)e, sc->from);
    grpc_call_cancel(sc->call, NULL);
    return -1;
  }
  sc->nops++;
  return 0;
}

static void sc_post_close(SCall *sc) {
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  op.data.recv_close_on_server.cancelled = &sc->cancelled;
  if (sc_batch(sc, &op, 1, &sc->tag_close) != 0) sc->closed = 1; /* nothing will report the end */
  sc->close_posted = 1;
}

/* Ends the call with a status (once); also refuses calls that have no operation posted yet. */
static void sc_send_status(SCall *sc, grpc_status_code code, const char *msg) {
  if (sc->status_sent || !sc->call) return;
  sc->status_sent = 1;
  snprintf(sc->status_msg, sizeof sc->status_msg, "%s", msg ? msg : "");
  grpc_slice details = grpc_slice_from_static_string(sc->status_msg);
  grpc_op ops[3];
  memset(ops, 0, sizeof ops);
  size_t n = 0;
  if (!sc->md_sent) {
    ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    sc->md_sent = 1;
  }
  ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[n].data.send_status_from_server.status = code;
  ops[n++].data.send_status_from_server.status_details = sc->status_msg[0] ? &details : NULL;
  int with_close = !sc->close_posted;
  if (with_close) {
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n++].data.recv_close_on_server.cancelled = &sc->cancelled;
    sc->close_posted = 1;
  }
  if (sc_batch(sc, ops, n, &sc->tag_status) == 0) {
    sc->status_has_close = with_close;
  } else if (with_close) {
    sc->close_posted = 0;
    sc_post_close(sc);
  }
}

static void sc_refuse(SCall *sc, grpc_status_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void sc_refuse(SCall *sc, grpc_status_code code, const char *fmt, ...) {
  char msg[ERRLEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (sc->has_edge)
    tlog(sc->t, "transport: refused call for edge '%s' from %s: %s: %s", sc->edge, sc->from, status_name(code), msg);
  else
    tlog(sc->t, "transport: refused call from %s: %s: %s", sc->from, status_name(code), msg);
  sc->pending = 0;
  sc_send_status(sc, code, msg);
}

static void sc_maybe_release(SCall *sc) {
  if (!sc->call || sc->nops > 0 || !sc->closed) return;
  Transport *t = sc->t;
  grpc_call_unref(sc->call);
  sc->call = NULL;
  t->live_calls--;
  for (SCall **pp = &t->scalls; *pp; pp = &(*pp)->next)
    if (*pp == sc) {
      *pp = sc->next;
      break;
    }
  if (sc->rx) sc->rx->call = NULL;
  if (sc->recv_buf) grpc_byte_buffer_destroy(sc->recv_buf);
  if (sc->send_buf) grpc_byte_buffer_destroy(sc->send_buf);
  free(sc);
}

static void rx_fail(RxStream *rx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rx_fail(RxStream *rx, const char *fmt, ...) {
  if (!rx->err[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rx->err, sizeof rx->err, fmt, ap);
    va_end(ap);
  }
  mq_clear(&rx->q);
  pthread_cond_broadcast(&rx->cv);
}

/* Tops the sender's credit up once enough messages were consumed (half the window: fewer grant
 * messages than one per data message, and never a stall, since a sender out of credit means all
 * `credits` messages were consumed or are queued here). */
static void sc_grant(SCall *sc) {
  RxStream *rx = sc->rx;
  if (!rx || !sc->call || sc->send_active || sc->status_sent || rx->eos || rx->err[0]) return;
  uint64_t threshold = (uint64_t)(sc->t->credits / 2 > 0 ? sc->t->credits / 2 : 1);
  if (rx->ungranted < threshold) return;
  put_be64(sc->grant, rx->ungranted);
  grpc_slice sl = grpc_slice_from_copied_buffer((const char *)sc->grant, GRANT_BYTES);
  sc->send_buf = grpc_raw_byte_buffer_create(&sl, 1);
  grpc_slice_unref(sl);
  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  size_t n = 0;
  if (!sc->md_sent) {
    ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    sc->md_sent = 1;
  }
  ops[n].op = GRPC_OP_SEND_MESSAGE;
  ops[n++].data.send_message.send_message = sc->send_buf;
  if (sc_batch(sc, ops, n, &sc->tag_send) != 0) {
    grpc_byte_buffer_destroy(sc->send_buf);
    sc->send_buf = NULL;
    rx_fail(rx, "edge '%s' from %s: internal error while granting credit", rx->edge, rx->from);
    return;
  }
  sc->send_active = 1;
  rx->granted += rx->ungranted;
  rx->ungranted = 0;
}

static void sc_post_recv(SCall *sc) {
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_MESSAGE;
  op.data.recv_message.recv_message = &sc->recv_buf;
  if (sc_batch(sc, &op, 1, &sc->tag_recv) != 0 && sc->rx)
    rx_fail(sc->rx, "edge '%s' from %s: internal error while receiving", sc->rx->edge, sc->rx->from);
}

static void sc_attach(SCall *sc, RxStream *rx) {
  sc->pending = 0;
  sc->rx = rx;
  rx->call = sc;
  rx->had_call = 1;
  memcpy(rx->from, sc->from, sizeof rx->from);
  rx->granted = 0;
  rx->ungranted = (uint64_t)sc->t->credits;
  if (!sc->close_posted) sc_post_close(sc);
  sc_grant(sc); /* initial metadata + the first grant: the sender's "accepted" */
  sc_post_recv(sc);
  pthread_cond_broadcast(&rx->cv);
}

static void sc_on_recv(SCall *sc, int success) {
  grpc_byte_buffer *bb = sc->recv_buf;
  sc->recv_buf = NULL;
  RxStream *rx = sc->rx;
  Transport *t = sc->t;
  if (!rx) {
    if (bb) grpc_byte_buffer_destroy(bb);
    return;
  }
  if (success && bb) {
    if (rx->err[0] || sc->status_sent) {
      grpc_byte_buffer_destroy(bb);
      return;
    }
    rx->received++;
    if (rx->received > rx->granted) {
      grpc_byte_buffer_destroy(bb);
      rx_fail(rx, "edge '%s' from %s: the sender exceeded its credit of %llu messages", rx->edge, rx->from,
              (unsigned long long)rx->granted);
      tlog(t, "transport: ending edge '%s' from %s: RESOURCE_EXHAUSTED: sender exceeded its credit", rx->edge, rx->from);
      sc_send_status(sc, GRPC_STATUS_RESOURCE_EXHAUSTED, "sender exceeded its credit");
      return;
    }
    mq_push(&rx->q, bb); /* fits: received - consumed <= granted - consumed <= credits */
    pthread_cond_signal(&rx->cv);
    sc_post_recv(sc);
  } else if (success && !bb && !grpc_call_failed_before_recv_message(sc->call)) {
    rx->eos = 1;
    pthread_cond_broadcast(&rx->cv);
    /* the OK status goes out only when the application has read every message and the end
     * (transport_recv), so a message it rejects can still fail the sender */
  } else {
    if (!rx->eos)
      rx_fail(rx, "edge '%s' from %s failed: the stream broke (sender gone, connection lost, or a message over max_message %zu bytes)",
              rx->edge, rx->from, t->max_message);
  }
}

static void sc_on_close(SCall *sc) {
  sc->closed = 1;
  if (sc->pending) {
    sc->pending = 0;
    tlog(sc->t, "transport: the sender of edge '%s' from %s gave up before the edge was accepted", sc->edge, sc->from);
  }
  RxStream *rx = sc->rx;
  if (rx && sc->cancelled && !rx->eos)
    rx_fail(rx, "edge '%s' from %s failed: the stream broke (sender gone, connection lost, or a message over max_message %zu bytes)",
            rx->edge, rx->from, sc->t->max_message);
}

static RxStream *find_rx(Transport *t, const char *edge, size_t len) {
  for (RxStream *rx = t->rxs; rx; rx = rx->next)
    if (rx->edge_len == len && memcmp(rx->edge, edge, len) == 0) return rx;
  return NULL;
}

static void request_next(Transport *t);

/* A call arrived: check it, then attach it, keep it pending, or refuse it. */
static void sc_on_new(SCall *sc, int success) {
  Transport *t = sc->t;
  t->request_pending = 0;
  if (!success || !sc->call) { /* the server is shutting down */
    grpc_call_details_destroy(&sc->details);
    grpc_metadata_array_destroy(&sc->md);
    free(sc);
    return;
  }
  sc->next = t->scalls;
  t->scalls = sc;
  t->live_calls++;

  char *peer = grpc_call_get_peer(sc->call);
  char addr[MAX_ID + 1];
  sanitize(addr, sizeof addr, peer ? peer : "?", peer ? strlen(peer) : 1);
  gpr_free(peer);
  const grpc_slice *edge = NULL, *token = NULL, *host = NULL;
  for (size_t i = 0; i < sc->md.count; i++) {
    const grpc_metadata *m = &sc->md.metadata[i];
    if (!edge && grpc_slice_str_cmp(m->key, MD_EDGE) == 0) edge = &m->value;
    else if (!token && grpc_slice_str_cmp(m->key, MD_TOKEN) == 0) token = &m->value;
    else if (!host && grpc_slice_str_cmp(m->key, MD_PEER) == 0) host = &m->value;
  }
  if (host) {
    char h[MAX_ID + 1];
    sanitize(h, sizeof h, GRPC_SLICE_START_PTR(*host), GRPC_SLICE_LENGTH(*host));
    snprintf(sc->from, sizeof sc->from, "host '%s' (%s)", h, addr);
  } else {
    snprintf(sc->from, sizeof sc->from, "%s", addr);
  }
  int edge_ok = edge && GRPC_SLICE_LENGTH(*edge) > 0 && GRPC_SLICE_LENGTH(*edge) <= MAX_ID;
  if (edge_ok) {
    const uint8_t *e = GRPC_SLICE_START_PTR(*edge);
    size_t elen = GRPC_SLICE_LENGTH(*edge);
    for (size_t i = 0; i < elen; i++)
      if (e[i] < 0x20 || e[i] > 0x7e) edge_ok = 0;
    if (edge_ok) {
      memcpy(sc->edge, e, elen);
      sc->edge[elen] = '\0';
      sc->edge_len = elen;
      sc->has_edge = 1;
    }
  }
  int method_ok = grpc_slice_str_cmp(sc->details.method, SF_METHOD) == 0;
  int auth_ok = token && token_ok(GRPC_SLICE_START_PTR(*token), GRPC_SLICE_LENGTH(*token), t->token, t->token_len);
  grpc_call_details_destroy(&sc->details);
  grpc_metadata_array_destroy(&sc->md);
  grpc_call_details_init(&sc->details);
  grpc_metadata_array_init(&sc->md);

  if (!t->stopping) request_next(t);

  if (t->stopping) {
    sc_refuse(sc, GRPC_STATUS_UNAVAILABLE, "the receiving executor is stopping");
  } else if (!method_ok) {
    sc_refuse(sc, GRPC_STATUS_UNIMPLEMENTED, "unknown method");
  } else if (!auth_ok) {
    sc_refuse(sc, GRPC_STATUS_UNAUTHENTICATED, "missing or wrong job token");
  } else if (!edge_ok) {
    sc_refuse(sc, GRPC_STATUS_INVALID_ARGUMENT, "missing or malformed edge id");
  } else {
    RxStream *rx = find_rx(t, sc->edge, sc->edge_len);
    int dup = 0;
    for (SCall *o = t->scalls; o; o = o->next)
      if (o != sc && o->pending && o->edge_len == sc->edge_len && memcmp(o->edge, sc->edge, sc->edge_len) == 0) dup = 1;
    if (dup || (rx && rx->had_call)) {
      sc_refuse(sc, GRPC_STATUS_ALREADY_EXISTS, "edge '%s' already has a sender", sc->edge);
    } else if (rx && rx->err[0]) {
      sc_refuse(sc, GRPC_STATUS_NOT_FOUND, "edge '%s' is no longer accepted", sc->edge);
    } else if (rx) {
      sc_attach(sc, rx);
    } else {
      sc->pending = 1;
      sc->deadline = t->accept_timeout_ms < 0 ? INT64_MAX : now_ms() + t->accept_timeout_ms;
      sc_post_close(sc); /* notices a sender that gives up while we wait */
    }
  }
}

static void request_next(Transport *t) {
  SCall *sc = calloc(1, sizeof *sc);
  if (!sc) {
    tlog(t, "transport: out of memory: no longer accepting calls");
    return;
  }
  sc->t = t;
  sc->tag_new = (Tag){TAG_SC_NEW, sc};
  sc->tag_close = (Tag){TAG_SC_CLOSE, sc};
  sc->tag_recv = (Tag){TAG_SC_RECV, sc};
  sc->tag_send = (Tag){TAG_SC_SEND, sc};
  sc->tag_status = (Tag){TAG_SC_STATUS, sc};
  snprintf(sc->from, sizeof sc->from, "?");
  grpc_call_details_init(&sc->details);
  grpc_metadata_array_init(&sc->md);
  grpc_call_error e = grpc_server_request_call(t->server, &sc->call, &sc->details, &sc->md, t->cq, t->cq, &sc->tag_new);
  if (e != GRPC_CALL_OK) {
    tlog(t, "transport: grpc_server_request_call returned %d: no longer accepting calls", (int)e);
    grpc_call_details_destroy(&sc->details);
    grpc_metadata_array_destroy(&sc->md);
    free(sc);
    return;
  }
  t->request_pending = 1;
}

RxStream *transport_accept(Transport *t, const char *edge) {
  if (!t || !printable(edge, MAX_ID)) return NULL;
  RxStream *rx = calloc(1, sizeof *rx);
  if (!rx) return NULL;
  rx->t = t;
  rx->edge = strdup(edge);
  rx->edge_len = strlen(edge);
  if (!rx->edge || mq_init(&rx->q, t->credits) != 0) {
    free(rx->edge);
    mq_free(&rx->q);
    free(rx);
    return NULL;
  }
  pthread_cond_init(&rx->cv, NULL);
  snprintf(rx->from, sizeof rx->from, "?");
  pthread_mutex_lock(&t->mu);
  if (t->stopping || !t->server || find_rx(t, edge, rx->edge_len)) {
    if (!t->stopping && t->server) tlog(t, "transport: edge '%s' is already accepted", edge);
    pthread_mutex_unlock(&t->mu);
    pthread_cond_destroy(&rx->cv);
    mq_free(&rx->q);
    free(rx->edge);
    free(rx);
    return NULL;
  }
  rx->deadline = t->accept_timeout_ms < 0 ? 0 : now_ms() + t->accept_timeout_ms;
  rx->next = t->rxs;
  t->rxs = rx;
  for (SCall *sc = t->scalls; sc; sc = sc->next)
    if (sc->pending && sc->edge_len == rx->edge_len && memcmp(sc->edge, edge, rx->edge_len) == 0) {
      sc_attach(sc, rx);
      break;
    }
  pthread_mutex_unlock(&t->mu);
  return rx;
}

int transport_recv(RxStream *rx, void **buf, size_t *len) {
  Transport *t = rx->t;
  *buf = NULL;
  *len = 0;
  pthread_mutex_lock(&t->mu);
  t->busy++;
  while (rx->q.len == 0 && !rx->eos && !rx->err[0] && !t->stopping) pthread_cond_wait(&rx->cv, &t->mu);
  if (!rx->err[0] && t->stopping) rx_fail(rx, "edge '%s': transport stopped", rx->edge);
  grpc_byte_buffer *bb = NULL;
  int rc;
  if (rx->err[0]) {
    rc = -1;
  } else if (rx->q.len > 0) {
    bb = mq_pop(&rx->q);
    rx->ungranted++;
    if (rx->call) sc_grant(rx->call);
    rc = 1;
  } else {
    rc = 0; /* eos: everything was read; now the sender may hear that it all arrived */
    if (rx->call && !rx->call->status_sent) sc_send_status(rx->call, GRPC_STATUS_OK, NULL);
  }
  leave(t);
  pthread_mutex_unlock(&t->mu);
  if (bb) {
    *buf = bb_flatten(bb, len);
    grpc_byte_buffer_destroy(bb);
    if (!*buf) {
      *len = 0;
      transport_rx_abort(rx, "out of memory while receiving");
      return -1;
    }
  }
  return rc;
}

void transport_rx_abort(RxStream *rx, const char *why) {
  Transport *t = rx->t;
  pthread_mutex_lock(&t->mu);
  if (!rx->err[0]) {
    char w[ERRLEN / 2];
    sanitize(w, sizeof w, why ? why : "", why ? strlen(why) : 0);
    rx_fail(rx, "edge '%s' from %s: aborted: %s", rx->edge, rx->from, w);
    tlog(t, "transport: ending edge '%s' from %s: INVALID_ARGUMENT: %s", rx->edge, rx->from, w);
    if (rx->call) sc_send_status(rx->call, GRPC_STATUS_INVALID_ARGUMENT, w);
  }
  pthread_mutex_unlock(&t->mu);
}

const char *transport_rx_error(const RxStream *rx) { return rx->err; }

void transport_free_message(void *buf) { free(buf); }

/* ---- the poller ---- */

static void dispatch(Transport *t, Tag *tag, int success) {
  switch (tag->kind) {
  case TAG_TX_MD:
  case TAG_TX_RECV:
  case TAG_TX_SEND:
  case TAG_TX_CLOSE:
  case TAG_TX_STATUS: {
    TxStream *s = tag->obj;
    s->nops--;
    if (tag->kind == TAG_TX_RECV) tx_on_recv(s, success);
    else if (tag->kind == TAG_TX_SEND) tx_on_send(s, success);
    else if (tag->kind == TAG_TX_STATUS) tx_on_status(s);
    tx_maybe_release(s);
    break;
  }
  case TAG_SC_NEW:
    sc_on_new(tag->obj, success);
    break;
  case TAG_SC_CLOSE:
  case TAG_SC_RECV:
  case TAG_SC_SEND:
  case TAG_SC_STATUS: {
    SCall *sc = tag->obj;
    sc->nops--;
    if (tag->kind == TAG_SC_CLOSE) {
      sc_on_close(sc);
    } else if (tag->kind == TAG_SC_RECV) {
      sc_on_recv(sc, success);
    } else if (tag->kind == TAG_SC_SEND) {
      if (sc->send_buf) grpc_byte_buffer_destroy(sc->send_buf);
      sc->send_buf = NULL;
      sc->send_active = 0;
      if (success) sc_grant(sc);
    } else if (sc->status_has_close) {
      sc_on_close(sc);
    }
    sc_maybe_release(sc);
    break;
  }
  case TAG_SHUTDOWN:
    t->shutdown_done = 1;
    break;
  }
}

static void check_timers(Transport *t, int64_t now) {
  for (TxStream *s = t->txs; s; s = s->next) {
    if (!s->call || s->accepted || s->status_done || s->err[0] || now < s->connect_deadline) continue;
    if (grpc_channel_check_connectivity_state(s->ch, 0) == GRPC_CHANNEL_READY)
      tx_fail(s, GRPC_STATUS_DEADLINE_EXCEEDED, "host '%s' at %s did not accept edge '%s' within %d ms", s->peer,
              s->address, s->edge, t->connect_timeout_ms);
    else
      tx_fail(s, GRPC_STATUS_UNAVAILABLE, "cannot reach host '%s' at %s after %d ms", s->peer, s->address,
              t->connect_timeout_ms);
  }
  for (RxStream *rx = t->rxs; rx; rx = rx->next) {
    if (rx->had_call || rx->err[0] || rx->deadline == 0 || now < rx->deadline) continue;
    rx_fail(rx, "no sender opened edge '%s' within %d ms", rx->edge, t->accept_timeout_ms);
    tlog(t, "transport: no sender opened edge '%s' within %d ms", rx->edge, t->accept_timeout_ms);
  }
  for (SCall *sc = t->scalls; sc; sc = sc->next)
    if (sc->pending && now >= sc->deadline)
      sc_refuse(sc, GRPC_STATUS_NOT_FOUND, "no receiver accepted edge '%s' within %d ms", sc->edge, t->accept_timeout_ms);
}

static void *poller_main(void *arg) {
  Transport *t = arg;
  for (;;) {
    gpr_timespec dl = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(POLL_MS, GPR_TIMESPAN));
    grpc_event ev = grpc_completion_queue_next(t->cq, dl, NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
    pthread_mutex_lock(&t->mu);
    if (ev.type == GRPC_OP_COMPLETE) dispatch(t, ev.tag, ev.success);
    int64_t now = now_ms();
    if (now >= t->next_timer_check) {
      check_timers(t, now);
      t->next_timer_check = now + TIMER_PERIOD_MS;
    }
    if (t->stopping) pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
  }
  return NULL;
}

/* ---- start and stop ---- */

static void transport_free(Transport *t) {
  while (t->txs) {
    TxStream *s = t->txs;
    t->txs = s->next;
    if (s->ch) grpc_channel_destroy(s->ch);
    grpc_slice_unref(s->status_details);
    grpc_metadata_array_destroy(&s->init_md);
    grpc_metadata_array_destroy(&s->trail_md);
    if (s->inflight) grpc_byte_buffer_destroy(s->inflight);
    if (s->recv_buf) grpc_byte_buffer_destroy(s->recv_buf);
    mq_free(&s->q);
    pthread_cond_destroy(&s->cv);
    free(s->peer);
    free(s->address);
    free(s->edge);
    free(s);
  }
  while (t->rxs) {
    RxStream *rx = t->rxs;
    t->rxs = rx->next;
    mq_free(&rx->q);
    pthread_cond_destroy(&rx->cv);
    free(rx->edge);
    free(rx);
  }
  if (t->creds) grpc_channel_credentials_release(t->creds);
  pthread_mutex_destroy(&t->mu);
  pthread_cond_destroy(&t->cv);
  free(t->name);
  free(t->listen);
  free(t->token);
  free(t);
}

Transport *transport_start(const TransportConfig *cfg, char *err, size_t errlen) {
  char dummy[1];
  if (!err || errlen == 0) {
    err = dummy;
    errlen = sizeof dummy;
  }
  err[0] = '\0';
  if (!cfg || !printable(cfg->token, 1024)) {
    snprintf(err, errlen, "transport: a job token (printable ASCII, 1 to 1024 bytes) is required");
    return NULL;
  }
  if (cfg->name && !printable(cfg->name, MAX_ID)) {
    snprintf(err, errlen, "transport: the executor name must be printable ASCII, 1 to %d bytes", MAX_ID);
    return NULL;
  }
  Transport *t = calloc(1, sizeof *t);
  if (!t) {
    snprintf(err, errlen, "transport: out of memory");
    return NULL;
  }
  t->name = cfg->name ? strdup(cfg->name) : NULL;
  t->listen = cfg->listen ? strdup(cfg->listen) : NULL;
  t->token = strdup(cfg->token);
  t->token_len = strlen(cfg->token);
  t->max_message = cfg->max_message ? cfg->max_message : 4u << 20;
  if (t->max_message > INT_MAX) t->max_message = INT_MAX;
  t->credits = cfg->credits > 0 ? cfg->credits : 8;
  if (t->credits > 65536) t->credits = 65536;
  t->connect_timeout_ms = cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms : 10000;
  t->accept_timeout_ms = cfg->accept_timeout_ms > 0   ? cfg->accept_timeout_ms
                         : cfg->accept_timeout_ms < 0 ? -1
                         : (t->connect_timeout_ms > INT_MAX / 2 ? INT_MAX : 2 * t->connect_timeout_ms);
  t->keepalive_ms = cfg->keepalive_ms > 0 ? cfg->keepalive_ms : 10000;
  t->log = cfg->log;
  t->log_ctx = cfg->log_ctx;
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->cv, NULL);
  t->tag_shutdown = (Tag){TAG_SHUTDOWN, t};
  if ((cfg->name && !t->name) || (cfg->listen && !t->listen) || !t->token) {
    snprintf(err, errlen, "transport: out of memory");
    transport_free(t);
    return NULL;
  }

  grpc_init();
  t->cq = grpc_completion_queue_create_for_next(NULL);
  t->creds = grpc_insecure_credentials_create();

  size_t n = 0;
  grpc_arg *ca = t->client_arg_buf;
  ca[n++] = int_arg(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  ca[n++] = int_arg(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  ca[n++] = int_arg(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 2000); /* a connect attempt's own timeout */
  ca[n++] = int_arg(GRPC_ARG_KEEPALIVE_TIME_MS, t->keepalive_ms);
  ca[n++] = int_arg(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, t->keepalive_ms);
  ca[n++] = int_arg(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  ca[n++] = int_arg(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  ca[n++] = int_arg(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, 64); /* grants only */
  ca[n++] = int_arg(GRPC_ARG_ENABLE_RETRIES, 0);             /* retries would buffer every message */
  ca[n++] = int_arg(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  /* one connection per edge */
  t->client_args.num_args = n;
  t->client_args.args = ca;

  if (t->listen) {
    grpc_arg sa[] = {
        int_arg(GRPC_ARG_ALLOW_REUSEPORT, 0),
        int_arg(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, (int)t->max_message),
        int_arg(GRPC_ARG_KEEPALIVE_TIME_MS, t->keepalive_ms),
        int_arg(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, t->keepalive_ms),
        int_arg(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1),
        int_arg(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0),
        /* the peers' keepalive pings must not count as abuse (GOAWAY "too_many_pings") */
        int_arg(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, t->keepalive_ms / 2),
        int_arg(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0),
        int_arg(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, 10000),
    };
    grpc_channel_args args = {sizeof sa / sizeof *sa, sa};
    t->server = grpc_server_create(&args, NULL);
    grpc_server_register_completion_queue(t->server, t->cq, NULL);
    grpc_server_credentials *sc = grpc_insecure_server_credentials_create();
    t->port = grpc_server_add_http2_port(t->server, t->listen, sc);
    grpc_server_credentials_release(sc);
    if (t->port == 0) {
      snprintf(err, errlen, "transport: cannot listen on %s (address in use, or not a local address)", t->listen);
      grpc_server_destroy(t->server); /* never started, no listener: no shutdown needed */
      t->server = NULL;
      grpc_completion_queue_shutdown(t->cq);
      while (grpc_completion_queue_next(t->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN) {
      }
      grpc_completion_queue_destroy(t->cq);
      grpc_channel_credentials_release(t->creds);
      t->creds = NULL;
      transport_free(t);
      grpc_shutdown();
      return NULL;
    }
    grpc_server_start(t->server);
    pthread_mutex_lock(&t->mu);
    request_next(t);
    pthread_mutex_unlock(&t->mu);
  }
  if (pthread_create(&t->poller, NULL, poller_main, t) != 0) {
    snprintf(err, errlen, "transport: cannot start its thread");
    t->poller_started = 0;
    transport_stop(t);
    return NULL;
  }
  t->poller_started = 1;
  return t;
}

int transport_port(const Transport *t) { return t ? t->port : 0; }

/* The first half of transport_stop (t->mu held): fail and wake everything, end every call. */
static void begin_stop(Transport *t) {
  if (t->stopping) return;
  t->stopping = 1;
  for (TxStream *s = t->txs; s; s = s->next) {
    if (!s->status_done) tx_fail(s, GRPC_STATUS_CANCELLED, "edge '%s' to host '%s': transport stopped", s->edge, s->peer);
    pthread_cond_broadcast(&s->cv);
  }
  for (RxStream *rx = t->rxs; rx; rx = rx->next) {
    if (!rx->eos) rx_fail(rx, "edge '%s': transport stopped", rx->edge);
    pthread_cond_broadcast(&rx->cv);
  }
  for (SCall *sc = t->scalls; sc; sc = sc->next) {
    if (sc->pending)
      sc_refuse(sc, GRPC_STATUS_UNAVAILABLE, "the receiving executor is stopping");
    else if (!sc->status_sent) {
      char msg[MAX_ID + 64];
      snprintf(msg, sizeof msg, "receiver%s%s%s stopped", t->name ? " '" : "", t->name ? t->name : "", t->name ? "'" : "");
      sc_send_status(sc, GRPC_STATUS_UNAVAILABLE, msg);
    }
  }
  if (t->server) grpc_server_shutdown_and_notify(t->server, t->cq, &t->tag_shutdown);
}

void transport_cancel(Transport *t) {
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  begin_stop(t);
  pthread_mutex_unlock(&t->mu);
}

void transport_stop(Transport *t) {
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  begin_stop(t);
  while (t->busy > 0) pthread_cond_wait(&t->cv, &t->mu);

  {
    int64_t grace_end = now_ms() + STOP_GRACE_MS;
    int cancelled_all = 0;
    while (t->live_calls > 0 || t->request_pending || (t->server && !t->shutdown_done)) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 50 * 1000000L;
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      if (t->poller_started) {
        pthread_cond_timedwait(&t->cv, &t->mu, &ts);
      } else { /* transport_start failed before the poller ran: poll here */
        pthread_mutex_unlock(&t->mu);
        gpr_timespec dl = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(50, GPR_TIMESPAN));
        grpc_event ev = grpc_completion_queue_next(t->cq, dl, NULL);
        pthread_mutex_lock(&t->mu);
        if (ev.type == GRPC_OP_COMPLETE) dispatch(t, ev.tag, ev.success);
      }
      if (!cancelled_all && now_ms() >= grace_end) {
        if (t->server) grpc_server_cancel_all_calls(t->server);
        for (SCall *sc = t->scalls; sc; sc = sc->next) grpc_call_cancel(sc->call, NULL);
        for (TxStream *s = t->txs; s; s = s->next)
          if (s->call) grpc_call_cancel(s->call, NULL);
        cancelled_all = 1;
      }
    }
  }
  pthread_mutex_unlock(&t->mu);

  if (t->server) grpc_server_destroy(t->server);
  t->server = NULL;
  for (TxStream *s = t->txs; s; s = s->next)
    if (s->ch) {
      grpc_channel_destroy(s->ch);
      s->ch = NULL;
    }
  grpc_completion_queue_shutdown(t->cq);
  if (t->poller_started) {
    pthread_join(t->poller, NULL);
  } else {
    while (grpc_completion_queue_next(t->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN) {
    }
  }
  grpc_completion_queue_destroy(t->cq);
  transport_free(t);
  grpc_shutdown();
}
