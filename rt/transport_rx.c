/* transport_rx.c: the receiving end of an edge (RxStream) and the gRPC server calls that feed it
 * (SCall).  See transport_priv.h for the lock rule: every function here runs with t->mu held,
 * except where a public function takes it.
 *
 * A server call: batch RECV_CLOSE_ON_SERVER as soon as it arrives (it reports the end of the call,
 * whatever ends it); then, once its edge is accepted, batch SEND_INITIAL_METADATA +
 * SEND_MESSAGE(first grant), then SEND_MESSAGE per grant | RECV_MESSAGE one at a time; and
 * SEND_STATUS_FROM_SERVER(OK) once the application has read the clean end (transport_recv
 * returned 0) and accepted it (transport_rx_confirm).  A refused call gets SEND_INITIAL_METADATA +
 * SEND_STATUS_FROM_SERVER.
 *
 * Phases: an SCall goes SC_REQUESTED -> (checked on arrival) SC_PENDING -> SC_ATTACHED ->
 * SC_ENDING -> SC_CLOSED, or SC_REQUESTED -> SC_ENDING when refused (see SCallState); its RxStream
 * goes RX_WAITING -> RX_STREAMING -> RX_EOS -> RX_END_READ, or to RX_FAILED (see RxState).  The owner of each
 * field: the poller moves calls and streams forward on completions and timers; the executor thread
 * reading the stream consumes messages, grants credit and sends the final status; any thread may
 * fail a stream (transport_rx_abort, transport_cancel); all under t->mu. */
#include "transport_priv.h"

#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int sc_post_close(SCall *sc) {
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  op.data.recv_close_on_server.cancelled = &sc->cancelled;
  return sc_batch(sc, &op, 1, &sc->tag_close);
}

/* Ends the call with a status (once; never once it is closed); sends the initial metadata too
 * when no grant has. */
static void sc_send_status(SCall *sc, grpc_status_code code, const char *msg) {
  if (sc->state >= SC_ENDING || !sc->call) return;
  sc->state = SC_ENDING;
  snprintf(sc->status_msg, sizeof sc->status_msg, "%s", msg ? msg : "");
  grpc_slice details = grpc_slice_from_static_string(sc->status_msg);
  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  size_t n = 0;
  if (!sc->md_sent) {
    ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    sc->md_sent = 1;
  }
  ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[n].data.send_status_from_server.status = code;
  ops[n++].data.send_status_from_server.status_details = sc->status_msg[0] ? &details : NULL;
  sc_batch(sc, ops, n, &sc->tag_status);
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
  sc_send_status(sc, code, msg);
}

/* Refuses a call that did not prove it belongs to the job (unknown method, missing or wrong
 * token): the first of every QUIET_PERIOD_MS is logged, the others are counted for a summary
 * (rx_log_quiet), so a flood of such calls writes a line per period, not a line per call. */
static void sc_refuse_quietly(SCall *sc, grpc_status_code code, const char *msg) {
  Transport *t = sc->t;
  int64_t now = now_ms();
  if (now < t->quiet_until) {
    t->quiet_count++;
    memcpy(t->quiet_last, sc->from, sizeof t->quiet_last);
    sc_send_status(sc, code, msg);
    return;
  }
  t->quiet_until = now + QUIET_PERIOD_MS;
  sc_refuse(sc, code, "%s", msg);
}

/* The summary of the unauthenticated calls refused without a line of their own, if any. */
static void rx_log_quiet(Transport *t, const char *when) {
  if (t->quiet_count == 0) return;
  tlog(t, "transport: refused %lu more unauthenticated call%s (missing or wrong job token, or unknown method) %s; "
       "the last from %s", t->quiet_count, t->quiet_count == 1 ? "" : "s", when, t->quiet_last);
  t->quiet_count = 0;
}

static void sc_maybe_release(SCall *sc) {
  if (!sc->call || sc->nops > 0 || sc->state != SC_CLOSED) return;
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

/* The sender's clean end of stream arrived (read or not). */
static int rx_at_end(const RxStream *rx) { return rx->state == RX_EOS || rx->state == RX_END_READ; }

static void rx_fail(RxStream *rx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rx_fail(RxStream *rx, const char *fmt, ...) {
  if (rx->state != RX_FAILED) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rx->err, sizeof rx->err, fmt, ap);
    va_end(ap);
    rx->state = RX_FAILED;
  }
  mq_clear(&rx->q);
  pthread_cond_broadcast(&rx->cv);
}

/* Tops the sender's credit up once enough messages were consumed (half the window: fewer grant
 * messages than one per data message, and never a stall, since a sender out of credit means all
 * `credits` messages were consumed or are queued here). */
static void sc_grant(SCall *sc) {
  RxStream *rx = sc->rx;
  if (!rx || !sc->call || sc->send_buf || sc->state != SC_ATTACHED || rx->state != RX_STREAMING) return;
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

/* A pending call meets the stream of its edge. */
static void sc_attach(SCall *sc, RxStream *rx) {
  sc->state = SC_ATTACHED;
  sc->rx = rx;
  rx->call = sc;
  rx->had_call = 1;
  rx->state = RX_STREAMING;
  memcpy(rx->from, sc->from, sizeof rx->from);
  rx->granted = 0;
  rx->ungranted = (uint64_t)sc->t->credits;
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
    if (rx->state == RX_FAILED || sc->state != SC_ATTACHED) {
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
    if (rx->state == RX_STREAMING) rx->state = RX_EOS;
    pthread_cond_broadcast(&rx->cv);
    /* the OK status goes out only when the application has read every message and the end and
     * accepted them (transport_rx_confirm), so a stream it rejects still fails the sender */
  } else if (!rx_at_end(rx)) {
    rx_fail(rx, "edge '%s' from %s failed: the stream broke (sender gone, connection lost, or a message over max_message %zu bytes)",
            rx->edge, rx->from, t->max_message);
  }
}

static void sc_on_close(SCall *sc) {
  if (sc->state == SC_PENDING)
    tlog(sc->t, "transport: the sender of edge '%s' from %s gave up before the edge was accepted", sc->edge, sc->from);
  sc->state = SC_CLOSED;
  RxStream *rx = sc->rx;
  if (rx && sc->cancelled && !rx_at_end(rx))
    rx_fail(rx, "edge '%s' from %s failed: the stream broke (sender gone, connection lost, or a message over max_message %zu bytes)",
            rx->edge, rx->from, sc->t->max_message);
}

/* A call for an edge this transport will never accept. */
static void sc_refuse_unknown(SCall *sc) {
  Transport *t = sc->t;
  if (t->name)
    sc_refuse(sc, GRPC_STATUS_NOT_FOUND, "host '%s' has no edge '%s'", t->name, sc->edge);
  else
    sc_refuse(sc, GRPC_STATUS_NOT_FOUND, "no edge '%s' here", sc->edge);
}

static RxStream *find_rx(Transport *t, const char *edge, size_t len) {
  for (RxStream *rx = t->rxs; rx; rx = rx->next)
    if (rx->edge_len == len && memcmp(rx->edge, edge, len) == 0) return rx;
  return NULL;
}

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
  /* with TLS: the host the client's certificate names (the handshake checked it chains to the job CA) */
  char certified[MAX_ID + 1] = "";
  if (t->tls) {
    grpc_auth_context *ac = grpc_call_auth_context(sc->call);
    grpc_auth_property_iterator it = grpc_auth_context_find_properties_by_name(ac, GRPC_X509_CN_PROPERTY_NAME);
    const grpc_auth_property *prop = grpc_auth_property_iterator_next(&it);
    if (prop) sanitize(certified, sizeof certified, prop->value, prop->value_length);
    grpc_auth_context_release(ac);
  }
  int claim_ok = !t->tls || (certified[0] && host && GRPC_SLICE_LENGTH(*host) == strlen(certified) &&
                             memcmp(GRPC_SLICE_START_PTR(*host), certified, strlen(certified)) == 0);
  int method_ok = grpc_slice_str_cmp(sc->details.method, SF_METHOD) == 0;
  int auth_ok = token && token_ok(GRPC_SLICE_START_PTR(*token), GRPC_SLICE_LENGTH(*token), t->token, t->token_len);
  grpc_call_details_destroy(&sc->details);
  grpc_metadata_array_destroy(&sc->md);
  grpc_call_details_init(&sc->details);
  grpc_metadata_array_init(&sc->md);

  if (!t->stopping) request_next(t);

  /* the end of the call, whatever ends it (also a sender that gives up while we wait) */
  if (sc_post_close(sc) != 0) {
    sc->state = SC_CLOSED; /* cancelled by sc_batch; nothing will report the end */
    sc_maybe_release(sc);
    return;
  }
  if (!method_ok) {
    sc_refuse_quietly(sc, GRPC_STATUS_UNIMPLEMENTED, "unknown method");
  } else if (!auth_ok) {
    sc_refuse_quietly(sc, GRPC_STATUS_UNAUTHENTICATED, "missing or wrong job token");
  } else if (!claim_ok) {
    sc_refuse(sc, GRPC_STATUS_PERMISSION_DENIED, "the client's certificate names host '%s', not the host it claims",
              certified[0] ? certified : "?");
  } else if (t->stopping) {
    sc_refuse(sc, GRPC_STATUS_UNAVAILABLE, "the receiving executor is stopping");
  } else if (!edge_ok) {
    sc_refuse(sc, GRPC_STATUS_INVALID_ARGUMENT, "missing or malformed edge id");
  } else {
    RxStream *rx = find_rx(t, sc->edge, sc->edge_len);
    int dup = 0;
    for (SCall *o = t->scalls; o; o = o->next)
      if (o != sc && o->state == SC_PENDING && o->edge_len == sc->edge_len && memcmp(o->edge, sc->edge, sc->edge_len) == 0)
        dup = 1;
    if (dup || (rx && rx->had_call)) {
      sc_refuse(sc, GRPC_STATUS_ALREADY_EXISTS, "edge '%s' already has a sender", sc->edge);
    } else if (rx && rx->state == RX_FAILED) {
      sc_refuse(sc, GRPC_STATUS_NOT_FOUND, "edge '%s' is no longer accepted", sc->edge);
    } else if (rx) {
      sc_attach(sc, rx);
    } else if (t->accepts_done) {
      sc_refuse_unknown(sc);
    } else {
      sc->state = SC_PENDING;
      sc->deadline = t->accept_timeout_ms < 0 ? INT64_MAX : now_ms() + t->accept_timeout_ms;
    }
  }
}

void sc_dispatch(SCall *sc, TagKind kind, int success) {
  if (kind == TAG_SC_NEW) { /* no batch of its own counted: request_call */
    sc_on_new(sc, success);
    return;
  }
  sc->nops--;
  if (kind == TAG_SC_CLOSE) {
    sc_on_close(sc);
  } else if (kind == TAG_SC_RECV) {
    sc_on_recv(sc, success);
  } else if (kind == TAG_SC_SEND) {
    if (sc->send_buf) grpc_byte_buffer_destroy(sc->send_buf);
    sc->send_buf = NULL;
    if (success) sc_grant(sc);
  }
  sc_maybe_release(sc);
}

void request_next(Transport *t) {
  SCall *sc = calloc(1, sizeof *sc);
  if (!sc) {
    tlog(t, "transport: out of memory: no longer accepting calls");
    return;
  }
  sc->t = t;
  sc->state = SC_REQUESTED;
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

void rx_check_timers(Transport *t, int64_t now) {
  for (RxStream *rx = t->rxs; rx; rx = rx->next) {
    if (rx->state != RX_WAITING || rx->deadline == 0 || now < rx->deadline) continue;
    rx_fail(rx, "no sender opened edge '%s' within %d ms", rx->edge, t->accept_timeout_ms);
    tlog(t, "transport: no sender opened edge '%s' within %d ms", rx->edge, t->accept_timeout_ms);
  }
  for (SCall *sc = t->scalls; sc; sc = sc->next)
    if (sc->state == SC_PENDING && now >= sc->deadline)
      sc_refuse(sc, GRPC_STATUS_NOT_FOUND, "no receiver accepted edge '%s' within %d ms", sc->edge, t->accept_timeout_ms);
  if (t->quiet_count > 0 && now >= t->quiet_until) {
    char when[64];
    snprintf(when, sizeof when, "in the last %d s", QUIET_PERIOD_MS / 1000);
    rx_log_quiet(t, when);
    t->quiet_until = now + QUIET_PERIOD_MS; /* a flood that goes on is summed up once per period */
  }
}

void rx_begin_stop(Transport *t) {
  rx_log_quiet(t, "before stopping");
  for (RxStream *rx = t->rxs; rx; rx = rx->next) {
    if (!rx_at_end(rx)) rx_fail(rx, "edge '%s': transport stopped", rx->edge);
    pthread_cond_broadcast(&rx->cv);
  }
  for (SCall *sc = t->scalls; sc; sc = sc->next) {
    if (sc->state == SC_PENDING) {
      sc_refuse(sc, GRPC_STATUS_UNAVAILABLE, "the receiving executor is stopping");
    } else if (sc->state == SC_ATTACHED) {
      char msg[MAX_ID + 64];
      snprintf(msg, sizeof msg, "receiver%s%s%s stopped", t->name ? " '" : "", t->name ? t->name : "", t->name ? "'" : "");
      sc_send_status(sc, GRPC_STATUS_UNAVAILABLE, msg);
    }
  }
}

void rx_free(RxStream *rx) {
  mq_free(&rx->q);
  pthread_cond_destroy(&rx->cv);
  free(rx->edge);
  free(rx);
}

RxStream *transport_accept(Transport *t, const char *edge) {
  if (!t || !printable(edge, MAX_ID)) return NULL;
  RxStream *rx = calloc(1, sizeof *rx);
  if (!rx) return NULL;
  rx->t = t;
  rx->state = RX_WAITING;
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
  if (t->stopping || !t->server || t->accepts_done || find_rx(t, edge, rx->edge_len)) {
    if (!t->stopping && t->server && !t->accepts_done) tlog(t, "transport: edge '%s' is already accepted", edge);
    pthread_mutex_unlock(&t->mu);
    rx_free(rx);
    return NULL;
  }
  rx->deadline = t->accept_timeout_ms < 0 ? 0 : now_ms() + t->accept_timeout_ms;
  rx->next = t->rxs;
  t->rxs = rx;
  for (SCall *sc = t->scalls; sc; sc = sc->next)
    if (sc->state == SC_PENDING && sc->edge_len == rx->edge_len && memcmp(sc->edge, edge, rx->edge_len) == 0) {
      sc_attach(sc, rx);
      break;
    }
  pthread_mutex_unlock(&t->mu);
  return rx;
}

void transport_accept_done(Transport *t) {
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  t->accepts_done = 1;
  for (SCall *sc = t->scalls; sc; sc = sc->next)
    if (sc->state == SC_PENDING) sc_refuse_unknown(sc);
  pthread_mutex_unlock(&t->mu);
}

int transport_recv(RxStream *rx, void **buf, size_t *len) {
  Transport *t = rx->t;
  *buf = NULL;
  *len = 0;
  pthread_mutex_lock(&t->mu);
  t->busy++;
  while (rx->q.len == 0 && (rx->state == RX_WAITING || rx->state == RX_STREAMING) && !t->stopping)
    pthread_cond_wait(&rx->cv, &t->mu);
  if (rx->state != RX_FAILED && t->stopping) rx_fail(rx, "edge '%s': transport stopped", rx->edge);
  grpc_byte_buffer *bb = NULL;
  int rc;
  if (rx->state == RX_FAILED) {
    rc = -1;
  } else if (rx->q.len > 0) {
    bb = mq_pop(&rx->q);
    rx->ungranted++;
    if (rx->call) sc_grant(rx->call);
    rc = 1;
  } else {
    rc = 0; /* eos: everything was read; the sender hears OK when the application confirms */
    rx->state = RX_END_READ;
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

int transport_rx_confirm(RxStream *rx) {
  Transport *t = rx->t;
  pthread_mutex_lock(&t->mu);
  int rc = -1;
  if (rx->state == RX_END_READ) {
    if (rx->call) sc_send_status(rx->call, GRPC_STATUS_OK, NULL);
    rc = 0;
  }
  pthread_mutex_unlock(&t->mu);
  return rc;
}

void transport_rx_abort(RxStream *rx, const char *why) {
  Transport *t = rx->t;
  pthread_mutex_lock(&t->mu);
  if (rx->state != RX_FAILED) {
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
