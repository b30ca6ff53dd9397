/* transport.c: the gRPC transport's Transport (see transport.h for the protocol and the contracts,
 * transport_priv.h for the files, the lock rule and the lifetime of calls): starting and stopping,
 * and the poller thread.
 *
 * One completion queue and one thread (poller_main) per Transport; that thread is the only one
 * inside grpc_completion_queue_next, so all network I/O happens there.  It dispatches each
 * completion to the sending end (transport_tx.c) or the receiving end (transport_rx.c) with t->mu
 * held, and checks the deadlines every TIMER_PERIOD_MS. */
#include "transport_priv.h"

#include <grpc/grpc_security.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the poller ---- */

static void dispatch(Transport *t, Tag *tag, int success) {
  switch (tag->kind) {
  case TAG_TX_MD:
  case TAG_TX_RECV:
  case TAG_TX_SEND:
  case TAG_TX_CLOSE:
  case TAG_TX_STATUS:
    tx_dispatch(tag->obj, tag->kind, success);
    break;
  case TAG_SC_NEW:
  case TAG_SC_CLOSE:
  case TAG_SC_RECV:
  case TAG_SC_SEND:
  case TAG_SC_STATUS:
    sc_dispatch(tag->obj, tag->kind, success);
    break;
  case TAG_SHUTDOWN:
    t->shutdown_done = 1;
    break;
  }
}

static void check_timers(Transport *t, int64_t now) {
  for (TxStream *s = t->txs; s; s = s->next) tx_check_timer(s, now);
  rx_check_timers(t, now);
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

/* gRPC's own log lines (e.g. a raw "No address added ... Address already in use" when a port is
 * taken) are dropped: the transport reports every failure itself.  GRPC_VERBOSITY or GRPC_TRACE
 * keep gRPC's logger, for debugging gRPC.  (Its lines cannot be told apart by connection, so a TLS
 * handshake failure is not attributed to a stream from them.) */
static void drop_grpc_log(gpr_log_func_args *args) { (void)args; }

static pthread_once_t grpc_log_once = PTHREAD_ONCE_INIT;

static void quiet_grpc_log(void) {
  if (!getenv("GRPC_VERBOSITY") && !getenv("GRPC_TRACE")) gpr_set_log_function(drop_grpc_log);
}

/* Why gRPC could not listen on "host:port" ("[v6]:port"): binds a plain socket there the way gRPC
 * does, to learn the system's reason. */
static void bind_failure(const char *listen, char *why, size_t whylen) {
  char host[300];
  const char *colon = strrchr(listen, ':');
  size_t hl = colon ? (size_t)(colon - listen) : 0;
  if (!colon || hl >= sizeof host) {
    snprintf(why, whylen, "not a host:port address");
    return;
  }
  memcpy(host, listen, hl);
  host[hl] = '\0';
  if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
    memmove(host, host + 1, hl - 2);
    host[hl - 2] = '\0';
  }
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  int gai = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res);
  if (gai != 0 || !res) {
    snprintf(why, whylen, "cannot resolve '%.200s': %s", host, gai_strerror(gai));
    return;
  }
  int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol), e = 0;
  if (fd < 0) {
    e = errno;
  } else {
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, res->ai_addr, res->ai_addrlen) != 0) e = errno;
    close(fd);
  }
  freeaddrinfo(res);
  if (e == EADDRINUSE)
    snprintf(why, whylen, "address already in use");
  else if (e == EADDRNOTAVAIL)
    snprintf(why, whylen, "not an address of this machine");
  else if (e)
    snprintf(why, whylen, "%s", strerror(e));
  else
    snprintf(why, whylen, "gRPC refused the address");
}

static void transport_free(Transport *t) {
  while (t->txs) {
    TxStream *s = t->txs;
    t->txs = s->next;
    tx_free(s);
  }
  while (t->rxs) {
    RxStream *rx = t->rxs;
    t->rxs = rx->next;
    rx_free(rx);
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
  int ntls = !!cfg->tls_ca + !!cfg->tls_cert + !!cfg->tls_key;
  if (cfg->plaintext ? ntls != 0 : ntls != 3) {
    snprintf(err, errlen, "transport: %s", cfg->plaintext ? "plaintext was asked for together with TLS credentials"
                                                           : "TLS needs the CA certificate, a certificate and its key "
                                                             "(or plaintext, for loopback development)");
    return NULL;
  }
  if (!cfg->plaintext && !cfg->name) {
    snprintf(err, errlen, "transport: with TLS the executor needs its name (the one its certificate names)");
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

  pthread_once(&grpc_log_once, quiet_grpc_log);
  grpc_init();
  t->cq = grpc_completion_queue_create_for_next(NULL);
  t->tls = !cfg->plaintext;
  grpc_ssl_pem_key_cert_pair pair = {cfg->tls_key, cfg->tls_cert};
  /* the peer's certificate must chain to the job CA (and, per channel, name the expected host:
   * GRPC_SSL_TARGET_NAME_OVERRIDE_ARG in transport_open) */
  t->creds = t->tls ? grpc_ssl_credentials_create_ex(cfg->tls_ca, &pair, NULL, NULL) : grpc_insecure_credentials_create();

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
    grpc_server_credentials *sc =
        t->tls ? grpc_ssl_server_credentials_create_ex(cfg->tls_ca, &pair, 1,
                                                       GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY, NULL)
               : grpc_insecure_server_credentials_create();
    t->port = grpc_server_add_http2_port(t->server, t->listen, sc);
    grpc_server_credentials_release(sc);
    if (t->port == 0) {
      char why[300];
      bind_failure(t->listen, why, sizeof why);
      snprintf(err, errlen, "transport: cannot listen on %s: %s", t->listen, why);
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
  for (TxStream *s = t->txs; s; s = s->next) tx_begin_stop(s);
  rx_begin_stop(t);
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
        for (TxStream *s = t->txs; s; s = s->next) tx_cancel_call(s);
        cancelled_all = 1;
      }
    }
  }
  pthread_mutex_unlock(&t->mu);

  if (t->server) grpc_server_destroy(t->server);
  t->server = NULL;
  for (TxStream *s = t->txs; s; s = s->next) tx_destroy_channel(s);
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
