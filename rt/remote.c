/* remote.c: cross-host edges, between the executor (through RemoteConfig's callbacks), the wire
 * format (wire.c) and the transport (transport.c). Sending: a batch of items is encoded and handed to the edge's stream,
 * which waits for credit (back-pressure); after the end of stream the stream is closed and the
 * peer's confirmation awaited. Receiving: one thread per incoming edge reads messages, decodes
 * them and pushes them into the consumer's queue (a full queue stops the reading, which stops the
 * credits, which stops the sender). Every failure names the host and the edge. */
#include "remote.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "transport.h"
#include "wire.h"

/* 32 credits of ~4 KB batches: about twice the throughput of 8 on loopback for ~128 KB per edge.
 * A batch from a peer may hold at most twice the batch size plus some punctuation (a sender's batch
 * holds RemoteConfig.batch items and the few punctuations added while it waited), so a hostile
 * batch of millions of items is refused before it is unpacked. */
enum { MAX_MESSAGE = 16 * 1024 * 1024, CREDITS = 32, DEFAULT_CONNECT_MS = 10000, BATCH_SLACK = 64 };

struct RemoteTx {
  Remote *r;          /* owner */
  TxStream *stream;   /* transport stream */
  const char *id;     /* edge id */
  const char *peer;   /* consumer's host */
  const Schema *schema;
  Buf buf;            /* encoding buffer, reused */
  bool closed;        /* FINAL sent and stream closed */
  RemoteCounts sent;  /* messages and bytes handed to the transport (one writer: the sender) */
};

typedef struct RemoteRx {
  Remote *r;
  RxStream *stream;
  const char *id;
  const char *peer;   /* producer's host */
  const Schema *schema;
  void *edge;         /* the user's edge, for cfg.deliver */
  pthread_t thread;
  bool started;
  bool saw_final;     /* the end of stream arrived */
  bool seen_any;      /* an item arrived */
  uint64_t last_seq;  /* of the last item */
  uint64_t last_src;
  RemoteCounts got;   /* messages and bytes received (one writer: its receiver thread) */
} RemoteRx;

/* Adds one message of len bytes to c: its only writer, so a load and a store (relaxed: readers
 * only report them). */
static void count_message(RemoteCounts *c, size_t len) {
  atomic_store_explicit(&c->messages, atomic_load_explicit(&c->messages, memory_order_relaxed) + 1,
                        memory_order_relaxed);
  atomic_store_explicit(&c->bytes, atomic_load_explicit(&c->bytes, memory_order_relaxed) + len, memory_order_relaxed);
}

/* One control peer: the coordinator's other executors, or an executor's coordinator. */
typedef struct CtlPeer {
  Remote *r;
  const char *host;   /* the peer */
  const char *in_id;  /* "!ctl:PEER>HOST" */
  TxStream *tx;       /* "!ctl:HOST>PEER"; used by the control thread only, then by remote_finish */
  RxStream *rx;
  pthread_t thread;   /* reads rx */
  bool started;
  bool tx_failed;     /* (the control thread's, then remote_finish's) */
  atomic_bool ended;  /* the peer's end arrived: it finished, and what fails with it from now on
                         is no loss */
} CtlPeer;

typedef struct CtlOut {
  int peer;           /* index in ctl, -1: every one */
  WireCtl m;
} CtlOut;

struct Remote {
  RemoteConfig cfg;   /* the user's configuration and callbacks */
  Graph *g;           /* cfg.g */
  const char *host;   /* this executor's host */
  Transport *t;
  Arena *arena;
  PtrVec txs;         /* RemoteTx* */
  PtrVec rxs;         /* RemoteRx* */
  FILE *log;
  int max_items;      /* items an incoming batch may hold */
  /* the control channel (remote_control; none: nctl 0) */
  CtlPeer *ctl;       /* (immutable once set up) */
  int nctl;
  bool ctl_coordinator; /* this host coordinates (immutable) */
  const char *coordinator;
  RemoteCtlFn ctl_fn; /* (immutable) */
  void *ctl_ctx;
  pthread_mutex_t ctl_mu; /* guards the queue and the two flags below; taken holding no other lock,
                             and nothing is called with it held */
  pthread_cond_t ctl_cv;
  CtlOut *ctlq;       /* queued messages, ctlq[ctlq_head..ctlq_n) */
  int ctlq_head, ctlq_n, ctlq_cap;
  bool ctl_closing;   /* remote_finish: send what is queued, then end */
  bool ctl_abort;     /* the job is failing: end now */
  atomic_bool ctl_finished; /* remote_finish is ending this side: what breaks from here on is no loss */
  pthread_t ctl_sender;
  bool ctl_sender_started;
};

/* "host 'h0': " and the transport's message, which names the edge and the peer (or, when it
 * does not name the edge, with the edge added). */
static void describe_failure(char *msg, size_t cap, const char *host, const char *edge, const char *err) {
  if (strstr(err, "edge '"))
    snprintf(msg, cap, "host '%s': %s", host, err);
  else
    snprintf(msg, cap, "host '%s': edge '%s': %s", host, edge, err);
}

static void log_line(void *ctx, const char *line) {
  Remote *r = ctx;
  fprintf(r->log, "sf-exec: %s: %s\n", r->host, line);
  fflush(r->log);
}

/* "127.x.y.z:port", "localhost:port" or "[::1]:port". */
static bool loopback(const char *address) {
  return strncmp(address, "127.", 4) == 0 || strncmp(address, "localhost:", 10) == 0 ||
         strncmp(address, "[::1]:", 6) == 0;
}

static const char *host_address(const Graph *g, const char *name) {
  Host *h = graph_find_host(g, name);
  return h ? h->address : NULL;
}

Remote *remote_start(const RemoteConfig *rc, char *err, size_t errlen) {
  Graph *g = rc->g;
  const char *host = rc->host;
  const ExecOptions *o = rc->o;
  sf_assert(rc->batch > 0 && rc->deliver && rc->fail);
  if (!host) {
    snprintf(err, errlen, "internal error: cross-host edges without --host");
    return NULL;
  }
  const char *address = host_address(g, host);
  if (!address) {
    snprintf(err, errlen, "graph has no host '%s'", host);
    return NULL;
  }
  if (!o->token || !*o->token) {
    snprintf(err, errlen, "no job token: set SF_TOKEN or pass --token-file (tools/sf-launch does this)");
    return NULL;
  }
  if (o->plaintext) { /* the token and the data would travel in clear: this machine only */
    for (int i = 0; i < g->nhosts; i++)
      if (!loopback(g->hosts[i]->address)) {
        snprintf(err, errlen, "--insecure-plaintext is for loopback addresses only, and host '%s' is at %s",
                 g->hosts[i]->name, g->hosts[i]->address);
        return NULL;
      }
    if (o->listen && !loopback(o->listen)) {
      snprintf(err, errlen, "--insecure-plaintext is for loopback addresses only, and --listen is %s", o->listen);
      return NULL;
    }
  } else if (!o->tls_ca || !o->tls_cert || !o->tls_key) {
    snprintf(err, errlen, "no TLS credentials: set SF_TLS_CA, SF_TLS_CERT and SF_TLS_KEY (tools/sf-launch does "
             "this; tools/sf-certs makes them), or pass --insecure-plaintext on loopback");
    return NULL;
  }
  Remote *r = calloc(1, sizeof *r);
  r->cfg = *rc;
  r->g = g;
  r->host = host;
  r->arena = arena_new();
  r->log = o->log ? o->log : stderr;
  r->max_items = 2 * rc->batch + BATCH_SLACK;
  pthread_mutex_init(&r->ctl_mu, NULL);
  pthread_cond_init(&r->ctl_cv, NULL);
  TransportConfig cfg = {
    .name = host,
    .listen = o->listen ? o->listen : address,
    .token = o->token,
    .max_message = MAX_MESSAGE,
    .credits = CREDITS,
    .connect_timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : DEFAULT_CONNECT_MS,
    .log = log_line,
    .log_ctx = r,
    .tls_ca = o->plaintext ? NULL : o->tls_ca,
    .tls_cert = o->plaintext ? NULL : o->tls_cert,
    .tls_key = o->plaintext ? NULL : o->tls_key,
    .plaintext = o->plaintext,
  };
  char terr[512];
  r->t = transport_start(&cfg, terr, sizeof terr);
  if (!r->t) {
    const char *why = strncmp(terr, "transport: ", 11) == 0 ? terr + 11 : terr;
    snprintf(err, errlen, "host '%s': %s", host, why);
    pthread_mutex_destroy(&r->ctl_mu);
    pthread_cond_destroy(&r->ctl_cv);
    arena_free(r->arena);
    free(r);
    return NULL;
  }
  return r;
}

int remote_port(const Remote *r) {
  return transport_port(r->t);
}

int remote_accept(Remote *r, const char *id, const char *peer, const Schema *schema, void *edge, char *err,
                  size_t errlen) {
  RemoteRx *rx = arena_alloc(r->arena, sizeof *rx);
  rx->r = r;
  rx->id = id;
  rx->peer = peer ? peer : "?";
  rx->schema = schema;
  rx->edge = edge;
  rx->stream = transport_accept(r->t, id);
  if (!rx->stream) {
    snprintf(err, errlen, "cannot accept edge '%s' from host '%s'", id, rx->peer);
    return -1;
  }
  ptrvec_push(r->arena, &r->rxs, rx);
  return 0;
}

RemoteTx *remote_open(Remote *r, const char *id, const char *peer, const Schema *schema, char *err, size_t errlen) {
  const char *address = host_address(r->g, peer);
  if (!address) {
    snprintf(err, errlen, "edge '%s' goes to unknown host '%s'", id, peer ? peer : "?");
    return NULL;
  }
  RemoteTx *tx = arena_alloc(r->arena, sizeof *tx);
  tx->r = r;
  tx->id = id;
  tx->peer = peer;
  tx->schema = schema;
  buf_init(&tx->buf);
  tx->stream = transport_open(r->t, peer, address, id);
  if (!tx->stream) {
    snprintf(err, errlen, "cannot open edge '%s' to host '%s' at %s", id, peer, address);
    return NULL;
  }
  ptrvec_push(r->arena, &r->txs, tx);
  return tx;
}

/* What a well-behaved executor sends on one edge: positions that never go back, nothing after the
 * end of stream. A message that breaks this is refused like a malformed one. A checkpoint barrier
 * is neither checked nor counted: it carries the checkpoint's position, and after a time-ordered
 * fan-in (order.c, step_time) that is not the merged stream's (whose items are renumbered), so it
 * may be ahead of the items after it; in one process it is delivered so, and between hosts too. */
static const char *check_order(RemoteRx *rx, const Item *items, int n) {
  for (int i = 0; i < n; i++) {
    if (rx->saw_final) return "items after the end of stream";
    if (items[i].kind == ITEM_BARRIER) continue;
    if (rx->seen_any && (items[i].seq < rx->last_seq || items[i].src < rx->last_src) &&
        items[i].kind != ITEM_FINAL)
      return "sequence numbers went backwards";
    if (items[i].kind == ITEM_FINAL) {
      rx->saw_final = true;
      continue;
    }
    rx->last_seq = items[i].seq;
    rx->last_src = items[i].src;
    rx->seen_any = true;
  }
  return NULL;
}

static void *receiver_main(void *arg) {
  RemoteRx *rx = arg;
  Remote *r = rx->r;
  char msg[1024];
  for (;;) {
    void *buf;
    size_t len;
    int rc = transport_recv(rx->stream, &buf, &len);
    if (rc == 0) { /* the sender waits for this verdict */
      if (!rx->saw_final) {
        transport_rx_abort(rx->stream, "the stream ended before its end-of-stream punctuation");
        snprintf(msg, sizeof msg, "host '%s': edge '%s' from host '%s' ended before its end of stream", r->host,
                 rx->id, rx->peer);
        r->cfg.fail(r->cfg.ctx, msg);
      } else {
        transport_rx_confirm(rx->stream);
      }
      return NULL;
    }
    if (rc < 0) {
      describe_failure(msg, sizeof msg, r->host, rx->id, transport_rx_error(rx->stream));
      r->cfg.fail(r->cfg.ctx, msg);
      return NULL;
    }
    Item *items;
    int n;
    char err[512];
    count_message(&rx->got, len);
    int bad = wire_decode(buf, len, rx->id, rx->schema, r->max_items, &items, &n, err, sizeof err);
    transport_free_message(buf);
    const char *why = bad < 0 ? err : check_order(rx, items, n);
    if (why) {
      if (bad == 0) {
        for (int i = 0; i < n; i++)
          if (item_has_tuple(items[i].kind)) tuple_unref(items[i].t);
        free(items);
      }
      transport_rx_abort(rx->stream, why);
      snprintf(msg, sizeof msg, "host '%s': edge '%s' from host '%s' sent a bad message: %s", r->host, rx->id,
               rx->peer, why);
      r->cfg.fail(r->cfg.ctx, msg);
      return NULL;
    }
    int pushed = r->cfg.deliver(r->cfg.ctx, rx->edge, items, n);
    free(items);
    if (pushed < 0) return NULL; /* the job is stopping; the batch was released */
  }
}

/* ---- the control channel ---- */

int remote_control(Remote *r, const char *coordinator, const char *const *hosts, int nhosts, RemoteCtlFn fn,
                   void *ctx, char *err, size_t errlen) {
  sf_assert(!r->ctl && fn && coordinator);
  r->ctl_coordinator = !strcmp(coordinator, r->host);
  r->coordinator = coordinator;
  r->ctl_fn = fn;
  r->ctl_ctx = ctx;
  r->ctl = arena_alloc(r->arena, sizeof *r->ctl * (size_t)(nhosts + 1));
  for (int i = 0; i < nhosts; i++) {
    const char *peer = hosts[i];
    if (!strcmp(peer, r->host) || (!r->ctl_coordinator && strcmp(peer, coordinator))) continue;
    const char *address = host_address(r->g, peer);
    if (!address) {
      snprintf(err, errlen, "the control stream goes to unknown host '%s'", peer);
      return -1;
    }
    CtlPeer *p = &r->ctl[r->nctl];
    memset(p, 0, sizeof *p);
    p->r = r;
    p->host = peer;
    p->in_id = arena_printf(r->arena, "!ctl:%s>%s", peer, r->host);
    const char *out_id = arena_printf(r->arena, "!ctl:%s>%s", r->host, peer);
    p->rx = transport_accept(r->t, p->in_id);
    p->tx = p->rx ? transport_open(r->t, peer, address, out_id) : NULL;
    if (!p->rx || !p->tx) {
      snprintf(err, errlen, "cannot set up the control streams with host '%s' at %s", peer, address);
      return -1;
    }
    r->nctl++;
  }
  return 0;
}

void remote_ctl_send(Remote *r, const char *to, const WireCtl *m) {
  int peer = -1;
  for (int i = 0; to && i < r->nctl && peer < 0; i++)
    if (!strcmp(r->ctl[i].host, to)) peer = i;
  if ((to && peer < 0) || r->nctl == 0) return; /* not a control peer: nothing to tell */
  pthread_mutex_lock(&r->ctl_mu);
  if (!r->ctl_closing && !r->ctl_abort) {
    if (r->ctlq_head > 0 && r->ctlq_head == r->ctlq_n) r->ctlq_head = r->ctlq_n = 0;
    if (r->ctlq_n == r->ctlq_cap) {
      r->ctlq_cap = r->ctlq_cap ? 2 * r->ctlq_cap : 16;
      r->ctlq = sf_xrealloc(r->ctlq, sizeof *r->ctlq * (size_t)r->ctlq_cap);
    }
    r->ctlq[r->ctlq_n++] = (CtlOut){ .peer = peer, .m = *m };
    pthread_cond_signal(&r->ctl_cv);
  }
  pthread_mutex_unlock(&r->ctl_mu);
}

/* The job fails: control peer p is lost (its stream broke, it never came, or it went away without
 * its end); err is the transport's message. */
static void ctl_lost(CtlPeer *p, const char *err) {
  Remote *r = p->r;
  char msg[1400];
  if (r->ctl_coordinator)
    snprintf(msg, sizeof msg, "host '%s': lost host '%s' (its control stream to this coordinator of checkpoints): %s",
             r->host, p->host, err);
  else
    snprintf(msg, sizeof msg, "host '%s': lost the checkpoints' coordinator, host '%s': %s", r->host, p->host, err);
  r->cfg.fail(r->cfg.ctx, msg);
}

/* The control thread: sends the queued messages in order until remote_finish or a failure. */
static void *ctl_sender_main(void *arg) {
  Remote *r = arg;
  Buf b;
  buf_init(&b);
  pthread_mutex_lock(&r->ctl_mu);
  for (;;) {
    while (r->ctlq_head == r->ctlq_n && !r->ctl_closing && !r->ctl_abort) pthread_cond_wait(&r->ctl_cv, &r->ctl_mu);
    if (r->ctl_abort || r->ctlq_head == r->ctlq_n) break;
    CtlOut out = r->ctlq[r->ctlq_head++];
    pthread_mutex_unlock(&r->ctl_mu);
    buf_reset(&b);
    wire_ctl_encode(&out.m, &b);
    for (int i = 0; i < r->nctl; i++) {
      CtlPeer *p = &r->ctl[i];
      if ((out.peer >= 0 && out.peer != i) || p->tx_failed || atomic_load(&p->ended)) continue;
      if (transport_send(p->tx, b.p, b.n) < 0) {
        p->tx_failed = true;
        if (!atomic_load(&p->ended)) ctl_lost(p, transport_tx_error(p->tx)); /* (else it just finished) */
      }
    }
    pthread_mutex_lock(&r->ctl_mu);
  }
  pthread_mutex_unlock(&r->ctl_mu);
  buf_release(&b);
  return NULL;
}

/* Whether a control message of this kind may come to this side. */
static const char *ctl_unexpected(const Remote *r, WireCtlKind kind) {
  bool to_coordinator = kind == WIRE_CKPT_DONE || kind == WIRE_CKPT_SOURCES;
  if (r->ctl_coordinator && !to_coordinator)
    return kind == WIRE_CKPT_REQUEST ? "a checkpoint request, which only the coordinator sends"
                                     : "a checkpoint's completion, which only the coordinator sends";
  if (!r->ctl_coordinator && to_coordinator)
    return kind == WIRE_CKPT_DONE ? "a checkpoint's done report, which only the coordinator hears"
                                  : "a report of sources, which only the coordinator hears";
  return NULL;
}

/* A control stream's thread: reads messages from its peer until that peer's end. */
static void *ctl_receiver_main(void *arg) {
  CtlPeer *p = arg;
  Remote *r = p->r;
  char msg[1024], why[512];
  for (;;) {
    void *buf;
    size_t len;
    int rc = transport_recv(p->rx, &buf, &len);
    if (rc == 0) { /* the peer's end (remote_finish): it finished, before its sender hears OK */
      atomic_store(&p->ended, true);
      transport_rx_confirm(p->rx);
      return NULL;
    }
    if (rc < 0) {
      if (!atomic_load(&r->ctl_finished)) ctl_lost(p, transport_rx_error(p->rx));
      return NULL;
    }
    WireCtl m;
    int bad = wire_ctl_decode(buf, len, &m, why, sizeof why);
    transport_free_message(buf);
    const char *unexpected = bad ? NULL : ctl_unexpected(r, m.kind);
    if (unexpected) {
      snprintf(why, sizeof why, "%s", unexpected);
      bad = -1;
    }
    if (!bad) bad = r->ctl_fn(r->ctl_ctx, p->host, &m, why, sizeof why);
    if (bad) {
      transport_rx_abort(p->rx, why);
      snprintf(msg, sizeof msg, "host '%s': host '%s' sent a bad control message on '%s': %s", r->host, p->host,
               p->in_id, why);
      r->cfg.fail(r->cfg.ctx, msg);
      return NULL;
    }
  }
}

static int ctl_connect(Remote *r) {
  for (int i = 0; i < r->nctl; i++) {
    CtlPeer *p = &r->ctl[i];
    if (pthread_create(&p->thread, NULL, ctl_receiver_main, p) != 0) return -1;
    p->started = true;
  }
  if (r->nctl && pthread_create(&r->ctl_sender, NULL, ctl_sender_main, r) != 0) return -1;
  r->ctl_sender_started = r->nctl > 0;
  return 0;
}

/* Ends the control streams: what is queued goes out, then (ok) each one to a peer still running is
 * half-closed and the peer's confirmation awaited (its reading thread confirms at once), then the
 * streams from the peers are cut (transport_cancel: the data edges are all done by now). So
 * neither side waits for the other to finish: a peer that ended its side is done, and what fails
 * with it afterwards is no loss. With !ok the transport was cancelled: the threads end at once. */
static int ctl_finish(Remote *r, bool ok) {
  int rc = 0;
  pthread_mutex_lock(&r->ctl_mu);
  r->ctl_closing = true;
  if (!ok) r->ctl_abort = true;
  pthread_cond_broadcast(&r->ctl_cv);
  pthread_mutex_unlock(&r->ctl_mu);
  if (r->ctl_sender_started) pthread_join(r->ctl_sender, NULL);
  bool closed = r->ctl_sender_started; /* (remote_connect started it: the streams were in use) */
  r->ctl_sender_started = false;
  /* from here on, a stream from a peer that breaks is no news: this side is done (and a peer that
   * ended first cuts its streams without waiting for this side's end). A peer lost meanwhile still
   * fails the close below. */
  if (closed && ok) atomic_store(&r->ctl_finished, true);
  for (int i = 0; ok && closed && i < r->nctl; i++) {
    CtlPeer *p = &r->ctl[i];
    if (atomic_load(&p->ended)) continue;
    if (p->tx_failed || transport_close(p->tx) < 0) {
      if (atomic_load(&p->ended)) continue; /* it finished meanwhile */
      if (!p->tx_failed) ctl_lost(p, transport_tx_error(p->tx)); /* (a failed send said so already) */
      rc = -1;
    }
  }
  if (closed) transport_cancel(r->t);
  for (int i = 0; i < r->nctl; i++) {
    CtlPeer *p = &r->ctl[i];
    if (p->started) pthread_join(p->thread, NULL);
    p->started = false;
  }
  return rc;
}

int remote_connect(Remote *r) {
  transport_accept_done(r->t); /* every incoming edge is known: a call for another is refused now */
  for (int i = 0; i < r->rxs.n; i++) {
    RemoteRx *rx = r->rxs.items[i];
    if (pthread_create(&rx->thread, NULL, receiver_main, rx) != 0) return -1;
    rx->started = true;
  }
  return ctl_connect(r);
}

int remote_send(RemoteTx *tx, const Item *items, int n) {
  Remote *r = tx->r;
  char msg[1024];
  if (tx->closed) return 0;
  buf_reset(&tx->buf);
  wire_encode(tx->id, tx->schema, items, n, &tx->buf);
  if (transport_send(tx->stream, tx->buf.p, tx->buf.n) < 0) {
    describe_failure(msg, sizeof msg, r->host, tx->id, transport_tx_error(tx->stream));
    r->cfg.fail(r->cfg.ctx, msg);
    return -1;
  }
  count_message(&tx->sent, tx->buf.n);
  /* the stream is closed in remote_finish, off the executor's threads: closing waits for the
   * receiving executor to have read everything */
  if (n > 0 && items[n - 1].kind == ITEM_FINAL) tx->closed = true;
  return 0;
}

int remote_finish(Remote *r, bool ok) {
  int rc = 0;
  char msg[1024];
  for (int i = 0; ok && i < r->txs.n; i++) {
    RemoteTx *tx = r->txs.items[i];
    if (!tx->closed) continue;
    tx->closed = false;
    if (transport_close(tx->stream) < 0) {
      describe_failure(msg, sizeof msg, r->host, tx->id, transport_tx_error(tx->stream));
      r->cfg.fail(r->cfg.ctx, msg);
      ok = false;
      rc = -1;
    }
  }
  if (!ok) transport_cancel(r->t);
  for (int i = 0; i < r->rxs.n; i++) {
    RemoteRx *rx = r->rxs.items[i];
    if (rx->started) pthread_join(rx->thread, NULL);
    rx->started = false;
  }
  if (ctl_finish(r, ok) < 0) rc = -1;
  return rc;
}

void remote_abort(Remote *r) {
  transport_cancel(r->t);
  pthread_mutex_lock(&r->ctl_mu);
  r->ctl_abort = true;
  pthread_cond_broadcast(&r->ctl_cv);
  pthread_mutex_unlock(&r->ctl_mu);
}

void remote_each_edge(Remote *r, RemoteEdgeFn fn, void *ctx) {
  for (int i = 0; r && i < r->txs.n; i++) {
    RemoteTx *tx = r->txs.items[i];
    fn(ctx, tx->id, tx->peer, true, &tx->sent);
  }
  for (int i = 0; r && i < r->rxs.n; i++) {
    RemoteRx *rx = r->rxs.items[i];
    fn(ctx, rx->id, rx->peer, false, &rx->got);
  }
}

void remote_stop(Remote *r) {
  if (!r) return;
  remote_finish(r, false);
  transport_stop(r->t);
  for (int i = 0; i < r->txs.n; i++) buf_release(&((RemoteTx *)r->txs.items[i])->buf);
  free(r->ctlq);
  pthread_mutex_destroy(&r->ctl_mu);
  pthread_cond_destroy(&r->ctl_cv);
  arena_free(r->arena);
  free(r);
}
