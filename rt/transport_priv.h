/* transport_priv.h: what the files of the gRPC transport share (see transport.h for the contract).
 *
 * The transport is four files, the only ones of the project that include gRPC headers:
 *   transport.c       the Transport: start and stop, the poller thread, dispatch of completions,
 *                     timers;
 *   transport_tx.c    the sending end of an edge (TxStream, a gRPC client call);
 *   transport_rx.c    the receiving end (RxStream) and the server calls that feed it (SCall);
 *   transport_util.c  plumbing: the message queue, byte buffers, strings, the log.
 *
 * The lock rule.  There is exactly one lock, Transport.mu.  It guards every field of the Transport
 * and of every TxStream, RxStream and SCall below except those marked "immutable" (set before the
 * object is published in one of the Transport's lists, never written again).  gRPC batches are
 * started with it held, from the poller or from executor threads, which also serialises the
 * batches of each call as gRPC requires.  Every condition variable waits on it.  No other lock is
 * ever taken with it held, and gRPC takes none of ours: the log callback runs with it held and
 * must not call back into the transport.  Copies into and out of gRPC byte buffers happen outside
 * it.
 *
 * Lifetime.  Every operation put on the completion queue carries a Tag naming what completed and
 * on which object.  Each call counts its batches in flight (nops); a call is released
 * (grpc_call_unref) only when nothing is in flight and its end was observed (RECV_STATUS_ON_CLIENT
 * or RECV_CLOSE_ON_SERVER), so no completion can arrive for freed memory.  Transport.live_calls
 * counts unreleased calls, which is what transport_stop drains. */
#ifndef SF_TRANSPORT_PRIV_H
#define SF_TRANSPORT_PRIV_H

#include "transport.h"

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/slice.h>

#include <pthread.h>
#include <stdint.h>

#define SF_METHOD "/sf.Exec/Edge"
#define MD_EDGE "sf-edge"
#define MD_TOKEN "sf-token"
#define MD_PEER "sf-peer"
#define GRANT_BYTES 8
#define MAX_GRANT (1u << 20)        /* largest single credit grant a sender believes */
#define MAX_CREDIT (1 << 30)        /* largest credit a sender holds */
#define MAX_ID 256                  /* longest edge id / peer name kept from metadata */
#define ERRLEN 600
#define FROMLEN (2 * MAX_ID + 64)   /* "host 'h0' (ipv4:127.0.0.1:5555)" */
#define TIMER_PERIOD_MS 50          /* how often the poller checks deadlines */
#define POLL_MS 100                 /* longest single wait in grpc_completion_queue_next */
#define STOP_GRACE_MS 1000          /* how long transport_stop lets calls end before cancelling all */
#define QUIET_PERIOD_MS 10000       /* after a refused unauthenticated call is logged, further ones are
                                       only counted, and summed up in one line per period */
#ifndef USE_BUFFER_HINT
#define USE_BUFFER_HINT 1           /* hint all but the last queued message (see tx_pump) */
#endif

/* ---- completion tags ---- */

typedef enum {
  TAG_TX_MD, TAG_TX_STATUS, TAG_TX_RECV, TAG_TX_SEND, TAG_TX_CLOSE,
  TAG_SC_NEW, TAG_SC_CLOSE, TAG_SC_RECV, TAG_SC_SEND, TAG_SC_STATUS,
  TAG_SHUTDOWN
} TagKind;

typedef struct Tag {
  TagKind kind; /* what completed */
  void *obj;    /* TxStream, SCall or Transport */
} Tag;

/* ---- a FIFO of byte buffers with a fixed capacity (transport_util.c) ---- */

typedef struct MsgQueue {
  grpc_byte_buffer **items; /* cap slots */
  int cap;                  /* capacity */
  int head;                 /* index of the oldest */
  int len;                  /* how many are queued */
} MsgQueue;

int mq_init(MsgQueue *q, int cap);                 /* 0, or -1 out of memory */
void mq_push(MsgQueue *q, grpc_byte_buffer *bb);   /* the caller checked there is room */
grpc_byte_buffer *mq_pop(MsgQueue *q);             /* the caller checked it is not empty */
void mq_clear(MsgQueue *q);                        /* destroys every queued buffer */
void mq_free(MsgQueue *q);                         /* clears and frees the slots */

/* ---- the objects ---- */

typedef struct SCall SCall;

/* The sending end's phase.  It only moves forward; TX_ENDED can follow any phase (the call ended:
 * refused, broken, cancelled, or confirmed).  A failure (err set) is orthogonal: a failed stream
 * has its call cancelled and reaches TX_ENDED when the final status arrives. */
typedef enum {
  TX_OPEN,        /* transport_send may queue messages */
  TX_CLOSING,     /* transport_close was called: the queue drains, then the half-close goes out */
  TX_HALF_CLOSED, /* SEND_CLOSE_FROM_CLIENT was started: waiting for the receiver's status */
  TX_ENDED        /* RECV_STATUS_ON_CLIENT completed (or no status will come) */
} TxState;

struct TxStream {
  Transport *t;                 /* owner; immutable */
  TxStream *next;               /* in t->txs */
  char *peer, *address, *edge;  /* copies; also the metadata values (static slices over them); immutable */
  grpc_channel *ch;             /* one channel per edge, destroyed by transport_stop */
  grpc_call *call;              /* NULL once released */
  int nops;                     /* batches in flight */
  Tag tag_md, tag_status, tag_recv, tag_send, tag_close; /* immutable */
  TxState state;                /* the phase, see TxState */
  int accepted;                 /* the first credit grant arrived (the receiver accepted the edge) */
  int64_t connect_deadline;     /* when a call still not accepted is given up; immutable */
  grpc_metadata md[3];          /* our initial metadata */
  grpc_metadata_array init_md;  /* the server's initial metadata */
  grpc_metadata_array trail_md; /* the server's trailing metadata */
  grpc_status_code status;      /* the final status ... */
  grpc_slice status_details;    /* ... and its details */
  grpc_byte_buffer *recv_buf;   /* the grant being received */
  MsgQueue q;                   /* messages queued behind the one in flight */
  grpc_byte_buffer *inflight;   /* the message being sent */
  int64_t credit;               /* messages we may still queue */
  char err[ERRLEN];             /* why it failed; "" if it has not */
  pthread_cond_t cv;            /* signalled on credit, queue space, status, failure */
};

/* The receiving end's phase.  RX_FAILED can follow any phase (then err is set and the stream
 * never changes again); the others only move forward. */
typedef enum {
  RX_WAITING,   /* accepted by the application, no call attached yet */
  RX_STREAMING, /* a call is attached; messages arrive */
  RX_EOS,       /* the sender's clean end of stream arrived (unread messages may remain) */
  RX_END_READ,  /* transport_recv returned 0: the application may confirm (or abort) */
  RX_FAILED     /* err says why */
} RxState;

struct RxStream {
  Transport *t;                 /* owner; immutable */
  RxStream *next;               /* in t->rxs */
  char *edge;                   /* the edge id; immutable */
  size_t edge_len;              /* strlen(edge); immutable */
  RxState state;                /* the phase, see RxState */
  SCall *call;                  /* the attached call, NULL before it arrives and after release */
  int had_call;                 /* a call was attached once (a second one is refused) */
  int64_t deadline;             /* when waiting for the call is given up (0: never) */
  MsgQueue q;                   /* received, not yet read */
  uint64_t granted;             /* credit granted in total */
  uint64_t received;            /* messages received in total */
  uint64_t ungranted;           /* consumed messages not yet granted again */
  char from[FROMLEN];           /* "host 'h0' (ipv4:127.0.0.1:5555)" of the attached call */
  char err[ERRLEN];             /* why it failed; "" unless state is RX_FAILED */
  pthread_cond_t cv;            /* signalled on message, end, failure */
};

/* A server call's phase: requested, then checked on arrival, then (if accepted) attached to the
 * RxStream of its edge, then ended with a status, then closed.  A refused call goes from
 * SC_REQUESTED straight to SC_ENDING.  SC_CLOSED can follow any phase after SC_REQUESTED (the
 * client went away); the call is released once it is SC_CLOSED with nothing in flight. */
typedef enum {
  SC_REQUESTED, /* grpc_server_request_call is outstanding for it */
  SC_PENDING,   /* arrived and checked, waiting for transport_accept of its edge */
  SC_ATTACHED,  /* feeds its RxStream */
  SC_ENDING,    /* SEND_STATUS_FROM_SERVER was started */
  SC_CLOSED     /* RECV_CLOSE_ON_SERVER completed: the call is over */
} SCallState;

struct SCall {
  Transport *t;                 /* owner; immutable */
  SCall *next;                  /* in t->scalls (once the call arrived) */
  grpc_call *call;              /* NULL once released */
  grpc_call_details details;    /* filled by request_call, cleared on arrival */
  grpc_metadata_array md;       /* client metadata, filled by request_call, cleared on arrival */
  Tag tag_new, tag_close, tag_recv, tag_send, tag_status; /* immutable */
  int nops;                     /* batches in flight */
  SCallState state;             /* the phase, see SCallState */
  int64_t deadline;             /* when SC_PENDING is given up */
  int md_sent;                  /* initial metadata went out (with the first grant or the status) */
  int cancelled;                /* RECV_CLOSE_ON_SERVER's verdict (written by gRPC) */
  grpc_byte_buffer *recv_buf;   /* the message being received */
  grpc_byte_buffer *send_buf;   /* the grant being sent, NULL when none is in flight */
  uint8_t grant[GRANT_BYTES];   /* its bytes */
  char status_msg[ERRLEN];      /* the status details sent (static slice over it) */
  RxStream *rx;                 /* attached stream, or NULL */
  char edge[MAX_ID + 1];        /* the edge id from its metadata, when well-formed */
  size_t edge_len;              /* its length */
  int has_edge;                 /* edge holds a well-formed id */
  char from[FROMLEN];           /* "host 'h0' (ipv4:...)" or the address alone */
};

struct Transport {
  char *name, *listen, *token;  /* copies of the configuration strings; immutable */
  size_t token_len;             /* immutable */
  size_t max_message;           /* immutable */
  int credits, connect_timeout_ms, accept_timeout_ms, keepalive_ms; /* immutable */
  void (*log)(void *ctx, const char *line); /* immutable */
  void *log_ctx;                /* immutable */

  pthread_mutex_t mu;           /* THE lock (see the lock rule above) */
  pthread_cond_t cv;            /* transport_stop waits on it (busy, live calls, shutdown) */
  grpc_completion_queue *cq;    /* the one queue; only the poller waits on it */
  grpc_server *server;          /* NULL for a client-only transport */
  int port;                     /* the bound port; immutable once started */
  grpc_channel_credentials *creds; /* for every channel; immutable once started */
  int tls;                      /* mutual TLS (else plaintext); immutable */
  grpc_arg client_arg_buf[13];  /* storage of client_args (one spare: the TLS target name) */
  grpc_channel_args client_args; /* for every channel; immutable once started */
  pthread_t poller;             /* the thread in grpc_completion_queue_next */
  int poller_started;           /* it runs (else transport_stop polls itself) */

  TxStream *txs;                /* every stream opened */
  RxStream *rxs;                /* every stream accepted */
  SCall *scalls;                /* every call that arrived and is not released */
  int live_calls;               /* grpc_call objects not yet released */
  int request_pending;          /* a grpc_server_request_call is outstanding */
  int shutdown_done;            /* the server shutdown tag came back */
  Tag tag_shutdown;             /* immutable */
  int stopping;                 /* transport_cancel / transport_stop has begun */
  int accepts_done;             /* transport_accept_done was called: calls for other edges are refused */
  int64_t quiet_until;          /* unauthenticated calls refused before then are counted, not logged */
  unsigned long quiet_count;    /* how many were counted since the last line about them */
  char quiet_last[FROMLEN];     /* where the last counted one came from */
  int busy;                     /* executor threads inside the API */
  int64_t next_timer_check;     /* poller only: when check_timers runs next */
};

/* ---- transport_util.c ---- */

int64_t now_ms(void);
/* A printable-ASCII string of 1..max bytes (what an HTTP/2 header value may hold). */
int printable(const char *s, size_t max);
/* Copies at most dstlen-1 bytes of a peer-supplied string, replacing anything unprintable. */
void sanitize(char *dst, size_t dstlen, const void *src, size_t len);
/* Constant-time comparison of a received value with the expected token: the time depends only on
 * the expected token's length. */
int token_ok(const uint8_t *got, size_t gotlen, const char *want, size_t wantlen);
const char *status_name(grpc_status_code c);
grpc_arg int_arg(const char *key, int value);
void put_be64(uint8_t *p, uint64_t v);
uint64_t get_be64(const uint8_t *p);
/* Copies a received byte buffer into one malloc'd block (never NULL when it succeeds, even for 0
 * bytes).  Returns NULL on allocation failure. */
void *bb_flatten(grpc_byte_buffer *bb, size_t *len);
/* One log line through the configured callback (t->mu held or not). */
void tlog(Transport *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An executor thread leaves the API (t->mu held): wakes transport_stop when it waits for that. */
void leave(Transport *t);

/* ---- transport_tx.c (all with t->mu held) ---- */

void tx_dispatch(TxStream *s, TagKind kind, int success); /* a TAG_TX_* completion */
void tx_check_timer(TxStream *s, int64_t now);            /* gives up a call never accepted */
void tx_begin_stop(TxStream *s);                          /* fails and wakes the stream */
void tx_cancel_call(TxStream *s);                         /* cancels its call, if any */
void tx_destroy_channel(TxStream *s);                     /* t->mu not needed: after the poller */
void tx_free(TxStream *s);                                /* frees everything */

/* ---- transport_rx.c (all with t->mu held) ---- */

void request_next(Transport *t);                          /* asks gRPC for the next incoming call */
void sc_dispatch(SCall *sc, TagKind kind, int success);   /* a TAG_SC_* completion */
void rx_check_timers(Transport *t, int64_t now);          /* accept timeouts, both ways; log summaries */
void rx_begin_stop(Transport *t);                         /* fails every stream, ends every call */
void rx_free(RxStream *rx);                               /* frees everything */

#endif /* SF_TRANSPORT_PRIV_H */
