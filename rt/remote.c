/* remote.c: cross-host edges, between the executor (through RemoteConfig's callbacks), the wire
 * format (wire.c) and the transport (transport.c). Sending: a batch of items is encoded and handed to the edge's stream,
 * which waits for credit (back-pressure); after the end of stream the stream is closed and the
 * peer's confirmation awaited. Receiving: one thread per incoming edge reads messages, decodes
 * them and pushes them into the consumer's queue (a full queue stops the reading, which stops the
 * credits, which stops the sender). Every failure names the host and the edge. */
#include "remote.h"

#include <pthread.h>
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
} RemoteRx;

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

int remote_connect(Remote *r) {
  transport_accept_done(r->t); /* every incoming edge is known: a call for another is refused now */
  for (int i = 0; i < r->rxs.n; i++) {
    RemoteRx *rx = r->rxs.items[i];
    if (pthread_create(&rx->thread, NULL, receiver_main, rx) != 0) return -1;
    rx->started = true;
  }
  return 0;
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
  return rc;
}

void remote_abort(Remote *r) {
  transport_cancel(r->t);
}

void remote_stop(Remote *r) {
  if (!r) return;
  remote_finish(r, false);
  transport_stop(r->t);
  for (int i = 0; i < r->txs.n; i++) buf_release(&((RemoteTx *)r->txs.items[i])->buf);
  arena_free(r->arena);
  free(r);
}
