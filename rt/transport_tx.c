/* transport_tx.c: the sending end of an edge (TxStream), a gRPC client call (see transport_priv.h
 * for the lock rule: every function here runs with t->mu held, except where a public function
 * takes it).
 *
 * The call: batch SEND_INITIAL_METADATA (WAIT_FOR_READY) | batch RECV_STATUS_ON_CLIENT |
 * batch RECV_INITIAL_METADATA + RECV_MESSAGE (first grant), then RECV_MESSAGE per grant;
 * SEND_MESSAGE one at a time from a queue bounded by the credit; SEND_CLOSE_FROM_CLIENT at the
 * end.  The call has no deadline (it lives as long as the edge); instead the poller cancels a call
 * not accepted (no first grant) within connect_timeout_ms, with a message that says whether the
 * peer could not be reached at all or connected but did not accept the edge.
 *
 * Phases (TxState): TX_OPEN -> TX_CLOSING (transport_close) -> TX_HALF_CLOSED (the half-close
 * went out once the queue drained) -> TX_ENDED (the final status arrived), TX_ENDED possibly from
 * any phase.  The owner of each field: the executor thread using the stream moves TX_OPEN to
 * TX_CLOSING and queues messages; tx_pump (either thread) moves to TX_HALF_CLOSED; the poller sets
 * TX_ENDED, accepted and credit grants; all under t->mu. */
#include "transport_priv.h"

#include <grpc/support/time.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  if (s->call && s->state != TX_ENDED) grpc_call_cancel_with_status(s->call, code, s->err, NULL);
  mq_clear(&s->q);
  pthread_cond_broadcast(&s->cv);
}

/* Starts the next send: the oldest queued message, or the half-close once all were sent. */
static void tx_pump(TxStream *s) {
  if (!s->call || s->inflight || s->err[0] || s->state == TX_ENDED) return;
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
  } else if (s->state == TX_CLOSING) {
    op.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    s->state = TX_HALF_CLOSED;
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
  if (s->call && s->nops == 0 && s->state == TX_ENDED) {
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
  if (!s->err[0] && s->state != TX_ENDED) tx_post_recv(s, 0);
}

static void tx_on_status(TxStream *s) {
  TxState was = s->state;
  s->state = TX_ENDED;
  if (!s->err[0]) {
    if (s->status != GRPC_STATUS_OK) {
      char details[300];
      sanitize(details, sizeof details, GRPC_SLICE_START_PTR(s->status_details), GRPC_SLICE_LENGTH(s->status_details));
      snprintf(s->err, sizeof s->err, "edge '%s' to host '%s' at %s failed: %s%s%s", s->edge, s->peer, s->address,
               status_name(s->status), details[0] ? ": " : "", details);
    } else if (was != TX_HALF_CLOSED) {
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

void tx_dispatch(TxStream *s, TagKind kind, int success) {
  s->nops--;
  if (kind == TAG_TX_RECV) tx_on_recv(s, success);
  else if (kind == TAG_TX_SEND) tx_on_send(s, success);
  else if (kind == TAG_TX_STATUS) tx_on_status(s);
  tx_maybe_release(s);
}

void tx_check_timer(TxStream *s, int64_t now) {
  Transport *t = s->t;
  if (!s->call || s->accepted || s->state == TX_ENDED || s->err[0] || now < s->connect_deadline) return;
  if (grpc_channel_check_connectivity_state(s->ch, 0) == GRPC_CHANNEL_READY)
    tx_fail(s, GRPC_STATUS_DEADLINE_EXCEEDED, "host '%s' at %s did not accept edge '%s' within %d ms", s->peer,
            s->address, s->edge, t->connect_timeout_ms);
  else if (t->tls) /* a TLS handshake that failed the checks looks like no connection at all */
    tx_fail(s, GRPC_STATUS_UNAVAILABLE,
            "cannot reach host '%s' at %s after %d ms (nothing listens there, or something without host '%s''s "
            "certificate from this job)", s->peer, s->address, t->connect_timeout_ms, s->peer);
  else
    tx_fail(s, GRPC_STATUS_UNAVAILABLE, "cannot reach host '%s' at %s after %d ms", s->peer, s->address,
            t->connect_timeout_ms);
}

void tx_begin_stop(TxStream *s) {
  if (s->state != TX_ENDED) tx_fail(s, GRPC_STATUS_CANCELLED, "edge '%s' to host '%s': transport stopped", s->edge, s->peer);
  pthread_cond_broadcast(&s->cv);
}

void tx_cancel_call(TxStream *s) {
  if (s->call) grpc_call_cancel(s->call, NULL);
}

void tx_destroy_channel(TxStream *s) {
  if (s->ch) grpc_channel_destroy(s->ch);
  s->ch = NULL;
}

void tx_free(TxStream *s) {
  tx_destroy_channel(s);
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

TxStream *transport_open(Transport *t, const char *peer_name, const char *address, const char *edge) {
  if (!t || !printable(peer_name, MAX_ID) || !printable(address, 1024) || !printable(edge, MAX_ID)) return NULL;
  TxStream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->t = t;
  s->state = TX_OPEN;
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
  grpc_arg args[sizeof t->client_arg_buf / sizeof *t->client_arg_buf];
  grpc_channel_args chargs = {t->client_args.num_args, args};
  memcpy(args, t->client_args.args, t->client_args.num_args * sizeof *args);
  if (t->tls) { /* the name the peer's certificate must carry: the host we mean to reach */
    memset(&args[chargs.num_args], 0, sizeof *args);
    args[chargs.num_args].type = GRPC_ARG_STRING;
    args[chargs.num_args].key = (char *)GRPC_SSL_TARGET_NAME_OVERRIDE_ARG;
    args[chargs.num_args++].value.string = s->peer;
  }
  s->ch = grpc_channel_create(s->address, t->creds, &chargs);
  s->call = grpc_channel_create_call(s->ch, NULL, GRPC_PROPAGATE_DEFAULTS, t->cq, grpc_slice_from_static_string(SF_METHOD),
                                     NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  if (!s->call) {
    snprintf(s->err, sizeof s->err, "edge '%s' to host '%s' at %s: cannot create the call", s->edge, s->peer, s->address);
    s->state = TX_ENDED;
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
    s->state = TX_ENDED; /* no status will come: release now */
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
    while (!s->err[0] && !t->stopping && s->state != TX_ENDED && (s->credit == 0 || s->q.len >= s->q.cap))
      pthread_cond_wait(&s->cv, &t->mu);
    if (!s->err[0] && t->stopping) tx_fail(s, GRPC_STATUS_CANCELLED, "edge '%s' to host '%s': transport stopped", s->edge, s->peer);
    if (!s->err[0] && s->state != TX_OPEN)
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
    if (s->state == TX_OPEN) {
      s->state = TX_CLOSING;
      tx_pump(s);
    }
    while (s->state != TX_ENDED && !s->err[0] && !t->stopping) pthread_cond_wait(&s->cv, &t->mu);
  }
  if (!s->err[0] && s->state != TX_ENDED)
    tx_fail(s, GRPC_STATUS_CANCELLED, "edge '%s' to host '%s': transport stopped", s->edge, s->peer);
  int rc = s->err[0] ? -1 : 0;
  leave(t);
  pthread_mutex_unlock(&t->mu);
  return rc;
}

const char *transport_tx_error(const TxStream *s) { return s->err; }
