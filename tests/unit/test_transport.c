/* test_transport.c: the gRPC transport (rt/transport.h) over loopback.
 *
 * Every test starts its own transports (gRPC is initialised inside the test, never in a fixture,
 * since Check forks per test) on port 0 and asks transport_port() which port it got.  Tests that
 * kill a peer fork that peer before anything touches gRPC in this process. */
#include "check_helper.h"
#include "transport.h"

#include <check.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOKEN "job-7f3a9c"

/* Every duration below is multiplied by SF_TEST_TIME_SCALE (default 1), e.g. 20 under valgrind. */
static int time_scale = 1;
#define MS(x) ((x) * time_scale)

/* ---- helpers ---- */

typedef struct LogCap {
  pthread_mutex_t mu;
  char buf[16384];
  size_t n;
} LogCap;

static void cap_log(void *ctx, const char *line) {
  LogCap *c = ctx;
  pthread_mutex_lock(&c->mu);
  int k = snprintf(c->buf + c->n, sizeof c->buf - c->n, "%s\n", line);
  if (k > 0) c->n += (size_t)k < sizeof c->buf - c->n ? (size_t)k : sizeof c->buf - c->n - 1;
  pthread_mutex_unlock(&c->mu);
}

static int cap_has(LogCap *c, const char *needle) {
  pthread_mutex_lock(&c->mu);
  int r = strstr(c->buf, needle) != NULL;
  pthread_mutex_unlock(&c->mu);
  return r;
}

static LogCap *cap_new(void) {
  LogCap *c = calloc(1, sizeof *c);
  pthread_mutex_init(&c->mu, NULL);
  return c;
}

static void cap_free(LogCap *c) {
  pthread_mutex_destroy(&c->mu);
  free(c);
}

static TransportConfig config(const char *name, int listen, LogCap *cap) {
  TransportConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.name = name;
  cfg.listen = listen ? "127.0.0.1:0" : NULL;
  cfg.token = TOKEN;
  cfg.max_message = 8u << 20;
  cfg.credits = 8;
  cfg.connect_timeout_ms = MS(5000);
  cfg.log = cap ? cap_log : NULL;
  cfg.log_ctx = cap;
  cfg.plaintext = 1; /* the TLS tests below set tls_* instead */
  return cfg;
}

/* ---- TLS material, made by tools/sf-certs (before gRPC runs in this process) ---- */

typedef struct Certs {
  char dir[64];       /* where sf-certs wrote them */
  char *ca;           /* ca.crt */
  char *crt[4], *key[4]; /* HOST.crt and HOST.key of the hosts asked for, in order */
} Certs;

static char *slurp(const char *dir, const char *name) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  char *p = calloc(1, 16384);
  size_t n = fread(p, 1, 16383, f);
  fclose(f);
  ck_assert_uint_gt(n, 0);
  return p;
}

/* A new CA and a certificate for each of hosts[0..n-1]. */
static Certs *certs_new(const char *const *hosts, int n) {
  Certs *c = calloc(1, sizeof *c);
  snprintf(c->dir, sizeof c->dir, "/tmp/sf-test-certs.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(c->dir));
  char cmd[512];
  int k = snprintf(cmd, sizeof cmd, "bash %s/tools/sf-certs %s", SF_SOURCE_DIR, c->dir);
  for (int i = 0; i < n; i++) k += snprintf(cmd + k, sizeof cmd - (size_t)k, " %s", hosts[i]);
  ck_assert_int_eq(system(cmd), 0);
  c->ca = slurp(c->dir, "ca.crt");
  for (int i = 0; i < n; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s.crt", hosts[i]);
    c->crt[i] = slurp(c->dir, name);
    snprintf(name, sizeof name, "%s.key", hosts[i]);
    c->key[i] = slurp(c->dir, name);
  }
  snprintf(cmd, sizeof cmd, "rm -rf %s", c->dir);
  ck_assert_int_eq(system(cmd), 0);
  return c;
}

static void certs_free(Certs *c) {
  free(c->ca);
  for (int i = 0; i < 4; i++) {
    free(c->crt[i]);
    free(c->key[i]);
  }
  free(c);
}

/* cfg with the TLS identity i of c (the CA of `trust`: normally c too). */
static void use_tls(TransportConfig *cfg, const Certs *c, int i, const Certs *trust) {
  cfg->plaintext = 0;
  cfg->tls_ca = trust->ca;
  cfg->tls_cert = c->crt[i];
  cfg->tls_key = c->key[i];
}

static Transport *xstart(const TransportConfig *cfg) {
  char err[256];
  Transport *t = transport_start(cfg, err, sizeof err);
  ck_assert_msg(t != NULL, "transport_start: %s", err);
  return t;
}

static void addr_of(const Transport *t, char *buf, size_t n) { snprintf(buf, n, "127.0.0.1:%d", transport_port(t)); }

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static uint8_t pat(int i, size_t j) { return (uint8_t)(i * 131 + j * 7 + (j >> 8)); }

static void *make_msg(int i, size_t len) {
  uint8_t *p = malloc(len ? len : 1);
  for (size_t j = 0; j < len; j++) p[j] = pat(i, j);
  return p;
}

static int check_msg(int i, const void *buf, size_t len, size_t want) {
  if (len != want) return 0;
  const uint8_t *p = buf;
  for (size_t j = 0; j < len; j++)
    if (p[j] != pat(i, j)) return 0;
  return 1;
}

/* A TCP port nothing listens on: bound (so nobody else gets it) but never listening. */
static int dead_port(int *fd_out) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  socklen_t len = sizeof a;
  getsockname(fd, (struct sockaddr *)&a, &len);
  *fd_out = fd;
  return ntohs(a.sin_port);
}

static int free_port(void) {
  int fd;
  int port = dead_port(&fd);
  close(fd);
  return port;
}

static int tcp_connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  return fd;
}

/* Reads the clean end of stream and accepts it (the sender's close then returns 0); returns what
 * transport_recv returned. */
static int recv_end(RxStream *rx) {
  void *buf;
  size_t len;
  int rc = transport_recv(rx, &buf, &len);
  if (rc == 0) ck_assert_int_eq(transport_rx_confirm(rx), 0);
  if (rc == 1) transport_free_message(buf);
  return rc;
}

/* Reads the whole edge in a thread, checking every message against the schedule. */
/* The sender's close waits for the receiving application to read the end of stream: close on
 * another thread while this one reads. */
typedef struct Closer {
  TxStream *tx;    /* stream to close */
  int rc;          /* transport_close's result */
  atomic_int done; /* transport_close returned */
  pthread_t th;    /* the closing thread */
} Closer;

static void *closer_main(void *arg) {
  Closer *c = arg;
  c->rc = transport_close(c->tx);
  atomic_store(&c->done, 1);
  return NULL;
}

static Closer *close_async(TxStream *tx) {
  Closer *c = calloc(1, sizeof *c);
  c->tx = tx;
  pthread_create(&c->th, NULL, closer_main, c);
  return c;
}

static int close_wait(Closer *c) {
  pthread_join(c->th, NULL);
  int rc = c->rc;
  free(c);
  return rc;
}

typedef struct Reader {
  RxStream *rx;
  const size_t *sizes; /* expected size of message i is sizes[i % nsizes] */
  int nsizes;
  int got;             /* messages read and correct */
  int bad;             /* index of the first wrong message + 1, or 0 */
  int end;             /* the final transport_recv result */
  char err[700];
} Reader;

static void *reader_main(void *arg) {
  Reader *r = arg;
  for (;;) {
    void *buf;
    size_t len;
    int rc = transport_recv(r->rx, &buf, &len);
    if (rc != 1) {
      if (rc == 0) transport_rx_confirm(r->rx);
      r->end = rc;
      snprintf(r->err, sizeof r->err, "%s", transport_rx_error(r->rx));
      return NULL;
    }
    if (!r->bad && !check_msg(r->got, buf, len, r->sizes[r->got % r->nsizes])) r->bad = r->got + 1;
    r->got++;
    transport_free_message(buf);
  }
}

/* Sends n messages in a thread, counting those transport_send accepted. */
typedef struct Sender {
  TxStream *tx;
  int n;
  size_t size;
  atomic_int sent;
  int rc;     /* -1 if a send failed, else close's result */
  int closed; /* close was reached */
  char err[700];
} Sender;

static void *sender_main(void *arg) {
  Sender *s = arg;
  s->rc = 0;
  for (int i = 0; i < s->n; i++) {
    void *m = make_msg(i, s->size);
    int rc = transport_send(s->tx, m, s->size);
    free(m);
    if (rc != 0) {
      s->rc = -1;
      snprintf(s->err, sizeof s->err, "%s", transport_tx_error(s->tx));
      return NULL;
    }
    atomic_fetch_add(&s->sent, 1);
  }
  s->closed = 1;
  s->rc = transport_close(s->tx);
  snprintf(s->err, sizeof s->err, "%s", transport_tx_error(s->tx));
  return NULL;
}

/* the fork tests need Check's fork mode (gRPC must not be used before fork) */
static int fork_mode(void) { return srunner_fork_status(unit_runner()) != CK_NOFORK; }

static int wait_count(atomic_int *c, int want, int timeout_ms) {
  int64_t end = mono_ms() + timeout_ms;
  while (atomic_load(c) < want && mono_ms() < end) sleep_ms(5);
  return atomic_load(c);
}

/* ---- tests ---- */

/* Messages of many sizes (empty, around the HTTP/2 frame size, beyond the default 4 MiB gRPC
 * limit) arrive intact and in order; the stream ends cleanly on both sides. */
START_TEST(test_roundtrip_sizes) {
  static const size_t sizes[] = {0, 1, 3, 100, 4096, 16383, 16384, 16385, 65535, 65536, 65537, 300000,
                                 1u << 20, (4u << 20) + 1, 17, 8u << 20};
  const int nsizes = sizeof sizes / sizeof *sizes;
  TransportConfig rc = config("h1", 1, NULL), sc = config("h0", 0, NULL);
  Transport *rt = xstart(&rc), *st = xstart(&sc);
  char addr[64];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "s1");
  ck_assert_ptr_nonnull(rx);
  Reader r = {.rx = rx, .sizes = sizes, .nsizes = nsizes};
  pthread_t th;
  pthread_create(&th, NULL, reader_main, &r);
  TxStream *tx = transport_open(st, "h1", addr, "s1");
  ck_assert_ptr_nonnull(tx);
  const int n = 3 * nsizes;
  for (int i = 0; i < n; i++) {
    void *m = make_msg(i, sizes[i % nsizes]);
    ck_assert_msg(transport_send(tx, m, sizes[i % nsizes]) == 0, "send %d: %s", i, transport_tx_error(tx));
    free(m);
  }
  ck_assert_msg(transport_close(tx) == 0, "close: %s", transport_tx_error(tx));
  ck_assert_str_eq(transport_tx_error(tx), "");
  pthread_join(th, NULL);
  ck_assert_msg(r.end == 0, "recv ended with %d: %s", r.end, r.err);
  ck_assert_int_eq(r.bad, 0);
  ck_assert_int_eq(r.got, n);
  void *buf = (void *)1;
  size_t len = 1;
  ck_assert_int_eq(transport_recv(rx, &buf, &len), 0); /* the end stays the end */
  ck_assert_ptr_null(buf);
  transport_stop(st);
  transport_stop(rt);
}
END_TEST

/* Many small messages, both directions at once between the same two transports, several edges. */
START_TEST(test_many_edges_both_ways) {
  static const size_t sizes[] = {40, 4000, 1, 123};
  TransportConfig ac = config("a", 1, NULL), bc = config("b", 1, NULL);
  ac.credits = 3;
  Transport *a = xstart(&ac), *b = xstart(&bc);
  char aaddr[64], baddr[64];
  addr_of(a, aaddr, sizeof aaddr);
  addr_of(b, baddr, sizeof baddr);
  const char *edges[4] = {"ab1", "ab2", "ba1", "ba2"};
  Reader r[4];
  pthread_t th[8];
  Sender s[4];
  for (int i = 0; i < 4; i++) {
    Transport *rt = i < 2 ? b : a;
    r[i] = (Reader){.rx = transport_accept(rt, edges[i]), .sizes = sizes + i, .nsizes = 1};
    ck_assert_ptr_nonnull(r[i].rx);
    pthread_create(&th[i], NULL, reader_main, &r[i]);
  }
  for (int i = 0; i < 4; i++) {
    Transport *st = i < 2 ? a : b;
    memset(&s[i], 0, sizeof s[i]);
    s[i].tx = transport_open(st, i < 2 ? "b" : "a", i < 2 ? baddr : aaddr, edges[i]);
    s[i].n = 2000;
    s[i].size = sizes[i];
    pthread_create(&th[4 + i], NULL, sender_main, &s[i]);
  }
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++) {
    ck_assert_msg(s[i].rc == 0, "sender %d: %s", i, s[i].err);
    ck_assert_msg(r[i].end == 0, "reader %d: %s", i, r[i].err);
    ck_assert_int_eq(r[i].got, 2000);
    ck_assert_int_eq(r[i].bad, 0);
  }
  transport_stop(a);
  transport_stop(b);
}
END_TEST

/* A stream with no message at all ends cleanly; accept may come after the call arrived. */
START_TEST(test_clean_end_and_late_accept) {
  TransportConfig rc = config("h1", 1, NULL), sc = config("h0", 0, NULL);
  Transport *rt = xstart(&rc), *st = xstart(&sc);
  char addr[64];
  addr_of(rt, addr, sizeof addr);
  TxStream *tx = transport_open(st, "h1", addr, "empty");
  ck_assert_ptr_nonnull(tx);
  sleep_ms(MS(300)); /* the call arrives and waits for its accept */
  RxStream *rx = transport_accept(rt, "empty");
  ck_assert_ptr_nonnull(rx);
  ck_assert_ptr_null(transport_accept(rt, "empty")); /* once per edge */
  Closer *closing_tx = close_async(tx); /* returns once the reader saw the end */
  void *buf;
  size_t len;
  ck_assert_int_eq(recv_end(rx), 0);
  ck_assert_msg(close_wait(closing_tx) == 0, "close: %s", transport_tx_error(tx));
  ck_assert_int_eq(transport_recv(rx, &buf, &len), 0);
  ck_assert_str_eq(transport_rx_error(rx), "");
  transport_stop(st);
  transport_stop(rt);
}
END_TEST

/* A receiver that reads nothing: the sender blocks after exactly `credits` messages; reading them
 * lets exactly `credits` more through. */
START_TEST(test_backpressure) {
  const int credits = 4;
  TransportConfig rc = config("h1", 1, NULL), sc = config("h0", 0, NULL);
  rc.credits = sc.credits = credits;
  Transport *rt = xstart(&rc), *st = xstart(&sc);
  char addr[64];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "bp");
  Sender s;
  memset(&s, 0, sizeof s);
  s.tx = transport_open(st, "h1", addr, "bp");
  s.n = 40;
  s.size = 4096;
  pthread_t th;
  pthread_create(&th, NULL, sender_main, &s);
  ck_assert_int_eq(wait_count(&s.sent, credits, MS(5000)), credits);
  sleep_ms(MS(500));
  ck_assert_int_eq(atomic_load(&s.sent), credits); /* blocked: no more credit */
  for (int i = 0; i < credits; i++) {
    void *buf;
    size_t len;
    ck_assert_int_eq(transport_recv(rx, &buf, &len), 1);
    ck_assert_uint_eq(len, 4096);
    transport_free_message(buf);
  }
  ck_assert_int_eq(wait_count(&s.sent, 2 * credits, MS(5000)), 2 * credits);
  sleep_ms(MS(500));
  ck_assert_int_eq(atomic_load(&s.sent), 2 * credits);
  int got = credits;
  for (;;) {
    void *buf;
    size_t len;
    int rc = transport_recv(rx, &buf, &len);
    if (rc != 1) {
      ck_assert_msg(rc == 0, "recv: %s", transport_rx_error(rx));
      ck_assert_int_eq(transport_rx_confirm(rx), 0);
      break;
    }
    got++;
    transport_free_message(buf);
  }
  pthread_join(th, NULL);
  ck_assert_msg(s.rc == 0, "sender: %s", s.err);
  ck_assert_int_eq(got, 40);
  transport_stop(st);
  transport_stop(rt);
}
END_TEST

/* A call with the wrong token is refused with UNAUTHENTICATED and a log line; the accepting side
 * never sees it, and the right sender on the same edge afterwards is unaffected. */
START_TEST(test_wrong_token) {
  LogCap *cap = cap_new();
  TransportConfig rc = config("h1", 1, cap), bad = config("intruder", 0, NULL), good = config("h0", 0, NULL);
  bad.token = "job-7f3a9d";
  Transport *rt = xstart(&rc), *bt = xstart(&bad), *gt = xstart(&good);
  char addr[64];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "s");
  RxStream *other_rx = transport_accept(rt, "other"); /* a stream running meanwhile */
  TxStream *other = transport_open(gt, "h1", addr, "other");
  void *buf;
  size_t len;
  ck_assert_int_eq(transport_send(other, "before", 6), 0);
  ck_assert_int_eq(transport_recv(other_rx, &buf, &len), 1);
  transport_free_message(buf);
  TxStream *btx = transport_open(bt, "h1", addr, "s");
  ck_assert_int_eq(transport_send(btx, "x", 1), -1);
  char want[256];
  snprintf(want, sizeof want, "edge 's' to host 'h1' at %s failed: UNAUTHENTICATED: missing or wrong job token", addr);
  ck_assert_str_eq(transport_tx_error(btx), want);
  ck_assert_int_eq(transport_send(btx, "x", 1), -1); /* stays failed */
  ck_assert_int_eq(transport_close(btx), -1);
  ck_assert(cap_has(cap, "transport: refused call for edge 's' from host 'intruder' (ipv4:127.0.0.1:"));
  ck_assert(cap_has(cap, "UNAUTHENTICATED: missing or wrong job token"));

  ck_assert_int_eq(transport_send(other, "after", 5), 0);
  Closer *closing_other = close_async(other); /* returns once the reader saw the end */
  ck_assert_int_eq(transport_recv(other_rx, &buf, &len), 1);
  ck_assert_int_eq(memcmp(buf, "after", 5), 0);
  transport_free_message(buf);
  ck_assert_int_eq(recv_end(other_rx), 0);
  ck_assert_msg(close_wait(closing_other) == 0, "close: %s", transport_tx_error(other));

  TxStream *gtx = transport_open(gt, "h1", addr, "s");
  ck_assert_int_eq(transport_send(gtx, "hello", 5), 0);
  Closer *closing_gtx = close_async(gtx); /* returns once the reader saw the end */
  ck_assert_int_eq(transport_recv(rx, &buf, &len), 1);
  ck_assert_uint_eq(len, 5);
  ck_assert_int_eq(memcmp(buf, "hello", 5), 0);
  transport_free_message(buf);
  ck_assert_int_eq(recv_end(rx), 0);
  ck_assert_msg(close_wait(closing_gtx) == 0, "close: %s", transport_tx_error(gtx));
  transport_stop(bt);
  transport_stop(gt);
  transport_stop(rt);
  cap_free(cap);
}
END_TEST

/* A second sender for an edge is refused with ALREADY_EXISTS; a call for an edge nobody accepts
 * is refused with NOT_FOUND once accept_timeout_ms has passed; both logged. */
START_TEST(test_duplicate_and_unaccepted_edge) {
  LogCap *cap = cap_new();
  TransportConfig rc = config("h1", 1, cap), qc = config("h2", 1, cap), sc = config("h0", 0, NULL);
  qc.accept_timeout_ms = MS(300);
  Transport *rt = xstart(&rc), *qt = xstart(&qc), *st = xstart(&sc);
  char addr[64], qaddr[64], want[300];
  addr_of(rt, addr, sizeof addr);
  addr_of(qt, qaddr, sizeof qaddr);
  RxStream *rx = transport_accept(rt, "d");
  TxStream *one = transport_open(st, "h1", addr, "d");
  ck_assert_msg(transport_send(one, "1", 1) == 0, "%s", transport_tx_error(one));
  void *buf;
  size_t len;
  ck_assert_int_eq(transport_recv(rx, &buf, &len), 1);
  transport_free_message(buf);
  TxStream *two = transport_open(st, "h1", addr, "d");
  ck_assert_int_eq(transport_close(two), -1);
  snprintf(want, sizeof want, "edge 'd' to host 'h1' at %s failed: ALREADY_EXISTS: edge 'd' already has a sender", addr);
  ck_assert_str_eq(transport_tx_error(two), want);
  ck_assert(cap_has(cap, "transport: refused call for edge 'd' from host 'h0' (ipv4:127.0.0.1:"));
  ck_assert(cap_has(cap, "): ALREADY_EXISTS: edge 'd' already has a sender"));

  TxStream *none = transport_open(st, "h2", qaddr, "nobody");
  int64_t t0 = mono_ms();
  ck_assert_int_eq(transport_send(none, "1", 1), -1); /* no credit until accepted: blocks, then fails */
  ck_assert_int_ge(mono_ms() - t0, MS(250));
  ck_assert_int_eq(transport_close(none), -1);
  snprintf(want, sizeof want,
           "edge 'nobody' to host 'h2' at %s failed: NOT_FOUND: no receiver accepted edge 'nobody' within %d ms", qaddr,
           MS(300));
  ck_assert_str_eq(transport_tx_error(none), want);
  snprintf(want, sizeof want, "NOT_FOUND: no receiver accepted edge 'nobody' within %d ms", MS(300));
  ck_assert(cap_has(cap, want));

  /* the first stream is unaffected */
  Closer *closing_one = close_async(one); /* returns once the reader saw the end */
  ck_assert_int_eq(recv_end(rx), 0);
  ck_assert_msg(close_wait(closing_one) == 0, "close: %s", transport_tx_error(one));
  transport_stop(st);
  transport_stop(qt);
  transport_stop(rt);
  cap_free(cap);
}
END_TEST

/* A peer that is up but does not accept the edge in time: the sender gives up after
 * connect_timeout_ms with its own message; the receiver notices and forgets the call, so a later
 * sender of the same edge is not taken for a duplicate. */
START_TEST(test_sender_gives_up) {
  LogCap *cap = cap_new();
  TransportConfig rc = config("h1", 1, cap), sc = config("h0", 0, NULL);
  sc.connect_timeout_ms = MS(500);
  Transport *rt = xstart(&rc), *st = xstart(&sc);
  char addr[64], want[300];
  addr_of(rt, addr, sizeof addr);
  TxStream *tx = transport_open(st, "h1", addr, "slow");
  ck_assert_int_eq(transport_send(tx, "x", 1), -1);
  snprintf(want, sizeof want, "host 'h1' at %s did not accept edge 'slow' within %d ms", addr, MS(500));
  ck_assert_str_eq(transport_tx_error(tx), want);
  for (int i = 0; i < 200 && !cap_has(cap, "gave up"); i++) sleep_ms(MS(10));
  ck_assert(cap_has(cap, "transport: the sender of edge 'slow' from host 'h0' (ipv4:127.0.0.1:"));
  ck_assert(cap_has(cap, "gave up before the edge was accepted"));
  RxStream *rx = transport_accept(rt, "slow");
  TxStream *tx2 = transport_open(st, "h1", addr, "slow");
  ck_assert_msg(transport_send(tx2, "y", 1) == 0, "%s", transport_tx_error(tx2));
  Closer *closing_tx2 = close_async(tx2); /* returns once the reader saw the end */
  void *buf;
  size_t len;
  ck_assert_int_eq(transport_recv(rx, &buf, &len), 1);
  ck_assert_int_eq(((char *)buf)[0], 'y');
  transport_free_message(buf);
  ck_assert_int_eq(recv_end(rx), 0);
  ck_assert_msg(close_wait(closing_tx2) == 0, "close: %s", transport_tx_error(tx2));
  transport_stop(st);
  transport_stop(rt);
  cap_free(cap);
}
END_TEST

/* The receiving application rejects a stream for how it ended, after transport_recv returned 0
 * (e.g. no final punctuation): the sender's close waits for that verdict and fails with its
 * reason, never hearing OK first. */
START_TEST(test_end_rejected) {
  TransportConfig rc = config("h1", 1, NULL), sc = config("h0", 0, NULL);
  Transport *rt = xstart(&rc), *st = xstart(&sc);
  char addr[64], want[300];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "cut");
  TxStream *tx = transport_open(st, "h1", addr, "cut");
  ck_assert_msg(transport_send(tx, "a", 1) == 0, "%s", transport_tx_error(tx));
  Closer *closing = close_async(tx);
  void *buf;
  size_t len;
  ck_assert_int_eq(transport_recv(rx, &buf, &len), 1);
  transport_free_message(buf);
  ck_assert_int_eq(transport_rx_confirm(rx), -1); /* not at the end yet */
  ck_assert_int_eq(transport_recv(rx, &buf, &len), 0);
  sleep_ms(MS(300));
  ck_assert_msg(!atomic_load(&closing->done), "the sender heard the end confirmed before the application judged it");
  transport_rx_abort(rx, "ended before its final punctuation");
  ck_assert_int_eq(close_wait(closing), -1);
  snprintf(want, sizeof want, "edge 'cut' to host 'h1' at %s failed: INVALID_ARGUMENT: ended before its final punctuation",
           addr);
  ck_assert_str_eq(transport_tx_error(tx), want);
  ck_assert_int_eq(transport_recv(rx, &buf, &len), -1);
  ck_assert_int_eq(transport_rx_confirm(rx), -1); /* rejected stays rejected */
  transport_stop(st);
  transport_stop(rt);
}
END_TEST

/* Once the receiver said it accepts no more edges, a call for an edge it never accepted is refused
 * at once with NOT_FOUND (not after accept_timeout_ms), and so is one already waiting. */
START_TEST(test_unknown_edge_refused_at_once) {
  LogCap *cap = cap_new();
  TransportConfig rc = config("h1", 1, cap), sc = config("h0", 0, NULL);
  Transport *rt = xstart(&rc), *st = xstart(&sc);
  char addr[64], want[300];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "known");
  TxStream *early = transport_open(st, "h1", addr, "early"); /* arrives before the accepts are done */
  sleep_ms(MS(300));
  int64_t t0 = mono_ms();
  transport_accept_done(rt);
  ck_assert_int_eq(transport_send(early, "x", 1), -1);
  snprintf(want, sizeof want, "edge 'early' to host 'h1' at %s failed: NOT_FOUND: host 'h1' has no edge 'early'", addr);
  ck_assert_str_eq(transport_tx_error(early), want);
  TxStream *late = transport_open(st, "h1", addr, "Nope>nothing/7");
  ck_assert_int_eq(transport_send(late, "x", 1), -1);
  ck_assert_int_lt(mono_ms() - t0, MS(2000)); /* connect_timeout_ms is 5000, accept_timeout_ms 10000 */
  snprintf(want, sizeof want,
           "edge 'Nope>nothing/7' to host 'h1' at %s failed: NOT_FOUND: host 'h1' has no edge 'Nope>nothing/7'", addr);
  ck_assert_str_eq(transport_tx_error(late), want);
  ck_assert(cap_has(cap, "refused call for edge 'Nope>nothing/7' from host 'h0' (ipv4:127.0.0.1:"));
  ck_assert_ptr_null(transport_accept(rt, "more")); /* no accepts after done */
  TxStream *tx = transport_open(st, "h1", addr, "known"); /* the known edge works */
  ck_assert_msg(transport_send(tx, "k", 1) == 0, "%s", transport_tx_error(tx));
  Closer *closing = close_async(tx);
  ck_assert_int_eq(recv_end(rx), 1);
  ck_assert_int_eq(recv_end(rx), 0);
  ck_assert_msg(close_wait(closing) == 0, "close: %s", transport_tx_error(tx));
  transport_stop(st);
  transport_stop(rt);
  cap_free(cap);
}
END_TEST

static int count_lines(LogCap *c, const char *needle) {
  pthread_mutex_lock(&c->mu);
  int n = 0;
  for (const char *p = c->buf; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  pthread_mutex_unlock(&c->mu);
  return n;
}

/* A flood of calls with a wrong token: the first is logged, the others are summed up in one line
 * (here when the transport stops, before the 10 s period ends), and the job's edge is unaffected. */
START_TEST(test_refusal_flood) {
  LogCap *cap = cap_new();
  TransportConfig rc = config("h1", 1, cap), bad = config("intruder", 0, NULL);
  bad.token = "job-7f3a9d";
  Transport *rt = xstart(&rc), *bt = xstart(&bad);
  char addr[64];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "s");
  const int flood = 100;
  for (int i = 0; i < flood; i++) {
    TxStream *btx = transport_open(bt, "h1", addr, "s");
    ck_assert_int_eq(transport_send(btx, "x", 1), -1);
    ck_assert_msg(strstr(transport_tx_error(btx), "UNAUTHENTICATED: missing or wrong job token"), "%s",
                  transport_tx_error(btx));
  }
  ck_assert_int_eq(count_lines(cap, "UNAUTHENTICATED"), 1);
  ck_assert_int_eq(count_lines(cap, "\n"), 1);
  ck_assert_ptr_nonnull(rx);
  transport_stop(bt);
  transport_stop(rt);
  char want[200];
  snprintf(want, sizeof want,
           "transport: refused %d more unauthenticated calls (missing or wrong job token, or unknown method) "
           "before stopping; the last from host 'intruder' (ipv4:127.0.0.1:", flood - 1);
  ck_assert_msg(cap_has(cap, want), "log: %s", cap->buf);
  ck_assert_int_eq(count_lines(cap, "unauthenticated calls"), 1);
  cap_free(cap);
}
END_TEST

/* Mutual TLS with the job's certificates: a stream goes through byte for byte and closes with OK;
 * the receiver knows the sender by its certificate. */
START_TEST(test_tls_roundtrip) {
  static const char *const hosts[] = {"h0", "h1"};
  Certs *c = certs_new(hosts, 2);
  static const size_t sizes[] = {0, 1, 100, 70000, 1u << 20};
  TransportConfig rc = config("h1", 1, NULL), sc = config("h0", 0, NULL);
  use_tls(&rc, c, 1, c);
  use_tls(&sc, c, 0, c);
  Transport *rt = xstart(&rc), *st = xstart(&sc);
  char addr[64];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "s");
  Reader r = {.rx = rx, .sizes = sizes, .nsizes = 5};
  pthread_t th;
  pthread_create(&th, NULL, reader_main, &r);
  TxStream *tx = transport_open(st, "h1", addr, "s");
  for (int i = 0; i < 20; i++) {
    void *m = make_msg(i, sizes[i % 5]);
    ck_assert_msg(transport_send(tx, m, sizes[i % 5]) == 0, "send %d: %s", i, transport_tx_error(tx));
    free(m);
  }
  ck_assert_msg(transport_close(tx) == 0, "close: %s", transport_tx_error(tx));
  pthread_join(th, NULL);
  ck_assert_msg(r.end == 0, "recv: %s", r.err);
  ck_assert_int_eq(r.got, 20);
  ck_assert_int_eq(r.bad, 0);
  transport_stop(st);
  transport_stop(rt);
  /* neither TLS nor an explicit plaintext: refused */
  TransportConfig none = config("h0", 0, NULL);
  none.plaintext = 0;
  char err[256];
  ck_assert_ptr_null(transport_start(&none, err, sizeof err));
  ck_assert_str_eq(err, "transport: TLS needs the CA certificate, a certificate and its key (or plaintext, for "
                        "loopback development)");
  certs_free(c);
}
END_TEST

/* Impostors in front of a sender: a server whose certificate comes from another CA, and one with a
 * job certificate for another host.  The sender fails like for an unreachable host, naming the
 * host it expected; the impostor never sees a call (so never the token nor a message). */
START_TEST(test_tls_impostor_server) {
  static const char *const hosts[] = {"h0", "h1", "h2"};
  Certs *job = certs_new(hosts, 3), *other = certs_new(hosts, 3);
  LogCap *cap = cap_new();
  for (int round = 0; round < 2; round++) {
    TransportConfig ic = config("h1", 1, cap), sc = config("h0", 0, NULL);
    if (round == 0)
      use_tls(&ic, other, 1, other); /* names h1, but from another CA */
    else
      use_tls(&ic, job, 2, job);     /* from the job CA, but names h2 */
    use_tls(&sc, job, 0, job);
    sc.connect_timeout_ms = MS(1500);
    Transport *it = xstart(&ic), *st = xstart(&sc);
    char addr[64], want[200];
    addr_of(it, addr, sizeof addr);
    RxStream *rx = transport_accept(it, "s");
    TxStream *tx = transport_open(st, "h1", addr, "s");
    ck_assert_int_eq(transport_send(tx, "secret", 6), -1);
    snprintf(want, sizeof want, "cannot reach host 'h1' at %s after %d ms", addr, MS(1500));
    ck_assert_msg(strncmp(transport_tx_error(tx), want, strlen(want)) == 0, "round %d: %s", round,
                  transport_tx_error(tx));
    transport_stop(st);
    transport_cancel(it);
    void *buf;
    size_t len;
    ck_assert_int_eq(transport_recv(rx, &buf, &len), -1);
    ck_assert_str_eq(transport_rx_error(rx), "edge 's': transport stopped"); /* no call ever came */
    transport_stop(it);
  }
  ck_assert_msg(!cap_has(cap, "refused") && !cap_has(cap, "sender"), "%s", cap->buf);
  cap_free(cap);
  certs_free(job);
  certs_free(other);
}
END_TEST

/* Impostors in front of a receiver: a client with a certificate from another CA never gets a call
 * through; one with a job certificate for h2 that claims to be h0 is refused with
 * PERMISSION_DENIED. */
START_TEST(test_tls_impostor_client) {
  static const char *const hosts[] = {"h0", "h1", "h2"};
  Certs *job = certs_new(hosts, 3), *other = certs_new(hosts, 3);
  LogCap *cap = cap_new();
  TransportConfig rc = config("h1", 1, cap), oc = config("h0", 0, NULL), hc = config("h0", 0, NULL);
  use_tls(&rc, job, 1, job);
  use_tls(&oc, other, 0, job); /* trusts the job CA, but its own certificate is from another */
  use_tls(&hc, job, 2, job);   /* h2's job certificate, claiming to be h0 */
  oc.connect_timeout_ms = MS(1500);
  Transport *rt = xstart(&rc), *ot = xstart(&oc), *ht = xstart(&hc);
  char addr[64], want[300];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "s");
  TxStream *otx = transport_open(ot, "h1", addr, "s");
  ck_assert_int_eq(transport_send(otx, "x", 1), -1);
  snprintf(want, sizeof want, "cannot reach host 'h1' at %s after %d ms", addr, MS(1500));
  ck_assert_msg(strncmp(transport_tx_error(otx), want, strlen(want)) == 0, "%s", transport_tx_error(otx));
  TxStream *htx = transport_open(ht, "h1", addr, "s");
  ck_assert_int_eq(transport_send(htx, "x", 1), -1);
  snprintf(want, sizeof want,
           "edge 's' to host 'h1' at %s failed: PERMISSION_DENIED: the client's certificate names host 'h2', not the "
           "host it claims", addr);
  ck_assert_str_eq(transport_tx_error(htx), want);
  ck_assert(cap_has(cap, "refused call for edge 's' from host 'h0' (ipv4:127.0.0.1:"));
  /* the edge is still free for the real h0 */
  TransportConfig gc = config("h0", 0, NULL);
  use_tls(&gc, job, 0, job);
  Transport *gt = xstart(&gc);
  TxStream *gtx = transport_open(gt, "h1", addr, "s");
  ck_assert_msg(transport_send(gtx, "ok", 2) == 0, "%s", transport_tx_error(gtx));
  Closer *closing = close_async(gtx);
  ck_assert_int_eq(recv_end(rx), 1);
  ck_assert_int_eq(recv_end(rx), 0);
  ck_assert_msg(close_wait(closing) == 0, "close: %s", transport_tx_error(gtx));
  transport_stop(gt);
  transport_stop(ot);
  transport_stop(ht);
  transport_stop(rt);
  cap_free(cap);
  certs_free(job);
  certs_free(other);
}
END_TEST

/* An accepted edge whose sender never comes fails after accept_timeout_ms. */
START_TEST(test_no_sender) {
  LogCap *cap = cap_new();
  TransportConfig rc = config("h1", 1, cap);
  rc.accept_timeout_ms = MS(300);
  Transport *rt = xstart(&rc);
  RxStream *rx = transport_accept(rt, "lonely");
  void *buf;
  size_t len;
  int64_t t0 = mono_ms();
  ck_assert_int_eq(transport_recv(rx, &buf, &len), -1);
  ck_assert_int_ge(mono_ms() - t0, MS(250));
  char want[100];
  snprintf(want, sizeof want, "no sender opened edge 'lonely' within %d ms", MS(300));
  ck_assert_str_eq(transport_rx_error(rx), want);
  ck_assert(cap_has(cap, want));
  transport_stop(rt);
  cap_free(cap);
}
END_TEST

/* A message over the receiver's max_message ends the call: the receiver gets -1 with a message,
 * the sender RESOURCE_EXHAUSTED; a message over the sender's own limit fails at once. */
START_TEST(test_oversized) {
  TransportConfig rc = config("h1", 1, NULL), sc = config("h0", 0, NULL), small = config("h0", 0, NULL);
  rc.max_message = 1024;
  small.max_message = 1024;
  Transport *rt = xstart(&rc), *st = xstart(&sc), *smt = xstart(&small);
  char addr[64];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "big");
  TxStream *tx = transport_open(st, "h1", addr, "big");
  void *m = make_msg(0, 2000);
  ck_assert_int_eq(transport_send(tx, m, 1024), 0); /* exactly the limit: fine */
  void *buf;
  size_t len;
  ck_assert_int_eq(transport_recv(rx, &buf, &len), 1);
  ck_assert(check_msg(0, buf, len, 1024));
  transport_free_message(buf);
  ck_assert_int_eq(transport_send(tx, m, 2000), 0); /* queued: the receiver's limit is not ours */
  ck_assert_int_eq(transport_recv(rx, &buf, &len), -1);
  ck_assert_ptr_null(buf);
  ck_assert_msg(strstr(transport_rx_error(rx), "edge 'big' from host 'h0' (ipv4:127.0.0.1:") != NULL, "%s",
                transport_rx_error(rx));
  ck_assert_msg(strstr(transport_rx_error(rx), "max_message 1024 bytes") != NULL, "%s", transport_rx_error(rx));
  ck_assert_int_eq(transport_close(tx), -1);
  ck_assert_msg(strstr(transport_tx_error(tx), "RESOURCE_EXHAUSTED") != NULL, "%s", transport_tx_error(tx));

  RxStream *rx2 = transport_accept(rt, "big2");
  TxStream *tx2 = transport_open(smt, "h1", addr, "big2");
  ck_assert_int_eq(transport_send(tx2, m, 10), 0); /* once accepted, the receiver notices the end */
  ck_assert_int_eq(transport_recv(rx2, &buf, &len), 1);
  transport_free_message(buf);
  ck_assert_int_eq(transport_send(tx2, m, 2000), -1);
  char want[200];
  snprintf(want, sizeof want, "edge 'big2' to host 'h1' at %s: message of 2000 bytes exceeds max_message 1024", addr);
  ck_assert_str_eq(transport_tx_error(tx2), want);
  ck_assert_int_eq(transport_recv(rx2, &buf, &len), -1); /* the receiver learns the stream is dead */
  free(m);
  transport_stop(smt);
  transport_stop(st);
  transport_stop(rt);
}
END_TEST

/* Raw TCP clients sending garbage, a half HTTP/2 preface, or nothing at all do not hurt the
 * server: a proper stream afterwards (and during) works. */
START_TEST(test_garbage_tcp) {
  TransportConfig rc = config("h1", 1, NULL), sc = config("h0", 0, NULL);
  Transport *rt = xstart(&rc), *st = xstart(&sc);
  char addr[64];
  addr_of(rt, addr, sizeof addr);
  int port = transport_port(rt);
  int idle = tcp_connect(port); /* stays open, silent, until the end */
  static const char *junk[] = {
      "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\xff\xff\xff\x04\x00\x00\x00\x00\x00garbage-after-preface",
      "PRI * HTTP/2.0\r\n",
      "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", /* a TLS ClientHello start */
  };
  for (size_t k = 0; k < sizeof junk / sizeof *junk; k++) {
    int fd = tcp_connect(port);
    ck_assert_int_ge(write(fd, junk[k], strlen(junk[k])), 0);
    sleep_ms(50);
    close(fd);
  }
  srand(7);
  for (int k = 0; k < 20; k++) {
    unsigned char b[777];
    for (size_t j = 0; j < sizeof b; j++) b[j] = (unsigned char)rand();
    int fd = tcp_connect(port);
    if (k % 2) ck_assert_int_ge(write(fd, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24), 0);
    ck_assert_int_ge(write(fd, b, sizeof b), 0);
    close(fd);
  }
  RxStream *rx = transport_accept(rt, "ok");
  TxStream *tx = transport_open(st, "h1", addr, "ok");
  ck_assert_int_eq(transport_send(tx, "fine", 4), 0);
  Closer *closing_tx = close_async(tx); /* returns once the reader saw the end */
  void *buf;
  size_t len;
  ck_assert_int_eq(transport_recv(rx, &buf, &len), 1);
  ck_assert_uint_eq(len, 4);
  transport_free_message(buf);
  ck_assert_int_eq(recv_end(rx), 0);
  ck_assert_msg(close_wait(closing_tx) == 0, "close: %s", transport_tx_error(tx));
  close(idle);
  transport_stop(st);
  transport_stop(rt);
}
END_TEST

/* A peer that never starts: send fails after connect_timeout_ms, naming the peer and address. */
START_TEST(test_peer_never_starts) {
  int fd;
  int port = dead_port(&fd);
  TransportConfig sc = config("h0", 0, NULL);
  sc.connect_timeout_ms = MS(1000);
  Transport *st = xstart(&sc);
  char addr[64], want[200];
  snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
  int64_t t0 = mono_ms();
  TxStream *tx = transport_open(st, "h1", addr, "s");
  ck_assert_int_eq(transport_send(tx, "x", 1), -1); /* no credit before the peer accepts: blocks */
  int64_t waited = mono_ms() - t0;
  ck_assert_msg(waited >= MS(1000) - 100, "after %lld ms: %s", (long long)waited, transport_tx_error(tx));
  ck_assert_int_le(waited, MS(3000));
  snprintf(want, sizeof want, "cannot reach host 'h1' at %s after %d ms", addr, MS(1000));
  ck_assert_str_eq(transport_tx_error(tx), want);
  ck_assert_int_eq(transport_close(tx), -1);
  ck_assert_str_eq(transport_tx_error(tx), want);
  close(fd);
  transport_stop(st);
}
END_TEST

/* A peer that starts late is reached by reconnecting (backoff well under a second). */
START_TEST(test_peer_starts_late) {
  int port = free_port();
  char listen[64];
  snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
  TransportConfig sc = config("h0", 0, NULL), rc = config("h1", 1, NULL);
  rc.listen = listen;
  Transport *st = xstart(&sc);
  TxStream *tx = transport_open(st, "h1", listen, "late");
  sleep_ms(MS(1200));
  Transport *rt = xstart(&rc);
  RxStream *rx = transport_accept(rt, "late");
  int64_t t0 = mono_ms();
  ck_assert_msg(transport_send(tx, "abc", 3) == 0, "%s", transport_tx_error(tx));
  Closer *closing_tx = close_async(tx); /* returns once the reader saw the end */
  ck_assert_int_le(mono_ms() - t0, MS(2000));
  void *buf;
  size_t len;
  ck_assert_int_eq(transport_recv(rx, &buf, &len), 1);
  transport_free_message(buf);
  ck_assert_int_eq(recv_end(rx), 0);
  ck_assert_msg(close_wait(closing_tx) == 0, "close: %s", transport_tx_error(tx));
  transport_stop(st);
  transport_stop(rt);
}
END_TEST

/* Two transports cannot share a port (SO_REUSEPORT is off). */
START_TEST(test_port_in_use) {
  TransportConfig rc = config("h1", 1, NULL);
  Transport *rt = xstart(&rc);
  char listen[64], err[256], want[200];
  snprintf(listen, sizeof listen, "127.0.0.1:%d", transport_port(rt));
  TransportConfig clashing = config("h2", 1, NULL);
  clashing.listen = listen;
  /* the reason is ours alone: gRPC's own log line about it must not reach stderr */
  fflush(stderr);
  int saved = dup(2);
  FILE *errf = tmpfile();
  dup2(fileno(errf), 2);
  Transport *clash = transport_start(&clashing, err, sizeof err);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ck_assert_ptr_null(clash);
  snprintf(want, sizeof want, "transport: cannot listen on %s: address already in use", listen);
  ck_assert_str_eq(err, want);
  char said[512] = "";
  rewind(errf);
  size_t nsaid = fread(said, 1, sizeof said - 1, errf);
  said[nsaid] = '\0';
  fclose(errf);
  ck_assert_msg(nsaid == 0, "stderr got: %s", said);
  clashing.listen = "192.0.2.1:7000"; /* TEST-NET-1: on no machine */
  ck_assert_ptr_null(transport_start(&clashing, err, sizeof err));
  ck_assert_str_eq(err, "transport: cannot listen on 192.0.2.1:7000: not an address of this machine");
  TransportConfig notoken = config("h2", 0, NULL);
  notoken.token = NULL;
  ck_assert_ptr_null(transport_start(&notoken, err, sizeof err));
  ck_assert_str_eq(err, "transport: a job token (printable ASCII, 1 to 1024 bytes) is required");
  transport_stop(rt);
}
END_TEST

/* The layer above rejects a message: the call ends with INVALID_ARGUMENT and the reason, which
 * the sender sees; the receiver's later recv fails; a log line says so. */
START_TEST(test_rx_abort) {
  LogCap *cap = cap_new();
  TransportConfig rc = config("h1", 1, cap), sc = config("h0", 0, NULL);
  Transport *rt = xstart(&rc), *st = xstart(&sc);
  char addr[64], want[300];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "p");
  Sender s;
  memset(&s, 0, sizeof s);
  s.tx = transport_open(st, "h1", addr, "p");
  s.n = 1000000;
  s.size = 10;
  pthread_t th;
  pthread_create(&th, NULL, sender_main, &s);
  void *buf;
  size_t len;
  ck_assert_int_eq(transport_recv(rx, &buf, &len), 1);
  transport_free_message(buf);
  transport_rx_abort(rx, "batch 1: truncated varint");
  transport_rx_abort(rx, "ignored");
  ck_assert_int_eq(transport_recv(rx, &buf, &len), -1);
  ck_assert_msg(strstr(transport_rx_error(rx), "edge 'p' from host 'h0' (ipv4:127.0.0.1:") == transport_rx_error(rx),
                "%s", transport_rx_error(rx));
  ck_assert_msg(strstr(transport_rx_error(rx), "): aborted: batch 1: truncated varint") != NULL, "%s",
                transport_rx_error(rx));
  pthread_join(th, NULL);
  ck_assert_int_eq(s.rc, -1);
  snprintf(want, sizeof want, "edge 'p' to host 'h1' at %s failed: INVALID_ARGUMENT: batch 1: truncated varint", addr);
  ck_assert_str_eq(s.err, want);
  ck_assert(cap_has(cap, "transport: ending edge 'p' from host 'h0' (ipv4:127.0.0.1:"));
  ck_assert(cap_has(cap, "): INVALID_ARGUMENT: batch 1: truncated varint"));
  transport_stop(st);
  transport_stop(rt);
  cap_free(cap);
}
END_TEST

/* The receiving transport is stopped mid-stream: the sender gets -1 naming the edge and peer;
 * a thread blocked in recv at that moment returns -1 too. */
START_TEST(test_receiver_stopped) {
  TransportConfig rc = config("h1", 1, NULL), sc = config("h0", 0, NULL);
  Transport *rt = xstart(&rc), *st = xstart(&sc);
  char addr[64], want[300];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "m");
  RxStream *idle = transport_accept(rt, "idle");
  Reader r = {.rx = idle, .sizes = (size_t[]){1}, .nsizes = 1};
  pthread_t rth;
  pthread_create(&rth, NULL, reader_main, &r);
  Sender s;
  memset(&s, 0, sizeof s);
  s.tx = transport_open(st, "h1", addr, "m");
  s.n = 1000000;
  s.size = 100;
  pthread_t th;
  pthread_create(&th, NULL, sender_main, &s);
  for (int i = 0; i < 50; i++) {
    void *buf;
    size_t len;
    ck_assert_int_eq(transport_recv(rx, &buf, &len), 1);
    transport_free_message(buf);
  }
  transport_cancel(rt);
  pthread_join(rth, NULL);
  ck_assert_int_eq(r.end, -1);
  ck_assert_str_eq(r.err, "edge 'idle': transport stopped");
  transport_stop(rt);
  pthread_join(th, NULL);
  ck_assert_int_eq(s.rc, -1);
  ck_assert_int_eq(s.closed, 0);
  snprintf(want, sizeof want, "edge 'm' to host 'h1' at %s failed: ", addr);
  ck_assert_msg(strncmp(s.err, want, strlen(want)) == 0, "%s", s.err);
  ck_assert_msg(strstr(s.err, "UNAVAILABLE") != NULL, "%s", s.err);
  transport_stop(st);
}
END_TEST

/* Stopping the sending transport while a sender is blocked on credit wakes it with -1. */
START_TEST(test_sender_stopped_while_blocked) {
  TransportConfig rc = config("h1", 1, NULL), sc = config("h0", 0, NULL);
  Transport *rt = xstart(&rc), *st = xstart(&sc);
  char addr[64];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "blk");
  Sender s;
  memset(&s, 0, sizeof s);
  s.tx = transport_open(st, "h1", addr, "blk");
  s.n = 100;
  s.size = 10;
  pthread_t th;
  pthread_create(&th, NULL, sender_main, &s);
  ck_assert_int_eq(wait_count(&s.sent, 8, MS(5000)), 8);
  sleep_ms(MS(100));
  transport_cancel(st); /* wakes the blocked sender; its handle stays readable */
  pthread_join(th, NULL);
  ck_assert_int_eq(s.rc, -1);
  ck_assert_str_eq(s.err, "edge 'blk' to host 'h1': transport stopped");
  void *buf;
  size_t len;
  int r, got = 0;
  while ((r = transport_recv(rx, &buf, &len)) == 1) {
    got++;
    transport_free_message(buf);
  }
  ck_assert_int_eq(r, -1); /* messages unread when the stream broke are dropped */
  ck_assert_int_le(got, 8);
  ck_assert_msg(strstr(transport_rx_error(rx), "edge 'blk' from host 'h0'") != NULL, "%s", transport_rx_error(rx));
  transport_stop(st);
  transport_stop(rt);
}
END_TEST

/* A receiving executor killed mid-stream (SIGKILL, forked before gRPC is touched here): the
 * sender's send or close returns -1 with UNAVAILABLE, naming edge and peer. */
START_TEST(test_receiver_killed) {
  if (!fork_mode()) return; /* CK_FORK=no: gRPC may already have run in this process */
  int ports[2], acks[2];
  ck_assert_int_eq(pipe(ports), 0);
  ck_assert_int_eq(pipe(acks), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    TransportConfig rc = config("h1", 1, NULL);
    char err[256];
    Transport *rt = transport_start(&rc, err, sizeof err);
    if (!rt) _exit(2);
    RxStream *rx = transport_accept(rt, "k");
    int port = transport_port(rt);
    if (write(ports[1], &port, sizeof port) != sizeof port) _exit(3);
    for (int i = 0; i < 20; i++) {
      void *buf;
      size_t len;
      if (transport_recv(rx, &buf, &len) != 1) _exit(4);
      transport_free_message(buf);
    }
    if (write(acks[1], "k", 1) != 1) _exit(5);
    pause();
    _exit(0);
  }
  int port = 0;
  ck_assert_int_eq(read(ports[0], &port, sizeof port), (ssize_t)sizeof port);
  TransportConfig sc = config("h0", 0, NULL);
  Transport *st = xstart(&sc);
  char addr[64], want[200];
  snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
  Sender s;
  memset(&s, 0, sizeof s);
  s.tx = transport_open(st, "h1", addr, "k");
  s.n = 1000000;
  s.size = 1000;
  pthread_t th;
  pthread_create(&th, NULL, sender_main, &s);
  char c;
  ck_assert_int_eq(read(acks[0], &c, 1), 1);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(s.rc, -1);
  snprintf(want, sizeof want, "edge 'k' to host 'h1' at %s failed: UNAVAILABLE", addr);
  ck_assert_msg(strncmp(s.err, want, strlen(want)) == 0, "%s", s.err);
  transport_stop(st);
}
END_TEST

/* With keepalive pings far more frequent than the server's default tolerance, an idle stream
 * survives (no GOAWAY "too_many_pings"). */
START_TEST(test_keepalive_idle) {
  TransportConfig rc = config("h1", 1, NULL), sc = config("h0", 0, NULL);
  rc.keepalive_ms = sc.keepalive_ms = MS(100);
  Transport *rt = xstart(&rc), *st = xstart(&sc);
  char addr[64];
  addr_of(rt, addr, sizeof addr);
  RxStream *rx = transport_accept(rt, "ka");
  TxStream *tx = transport_open(st, "h1", addr, "ka");
  void *buf;
  size_t len;
  ck_assert_int_eq(transport_send(tx, "a", 1), 0);
  ck_assert_int_eq(transport_recv(rx, &buf, &len), 1);
  transport_free_message(buf);
  sleep_ms(MS(1500));
  ck_assert_msg(transport_send(tx, "b", 1) == 0, "%s", transport_tx_error(tx));
  ck_assert_msg(transport_recv(rx, &buf, &len) == 1, "%s", transport_rx_error(rx));
  transport_free_message(buf);
  Closer *closing_tx = close_async(tx); /* returns once the reader saw the end */
  ck_assert_int_eq(recv_end(rx), 0);
  ck_assert_msg(close_wait(closing_tx) == 0, "close: %s", transport_tx_error(tx));
  transport_stop(st);
  transport_stop(rt);
}
END_TEST

/* A receiving executor that hangs (SIGSTOP: its TCP stack still answers, its process does not) is
 * declared dead by keepalive: the sender, blocked on credit, gets -1 with UNAVAILABLE. */
START_TEST(test_receiver_frozen) {
  if (!fork_mode()) return; /* CK_FORK=no: gRPC may already have run in this process */
  int ports[2], acks[2];
  ck_assert_int_eq(pipe(ports), 0);
  ck_assert_int_eq(pipe(acks), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    TransportConfig rc = config("h1", 1, NULL);
    rc.keepalive_ms = MS(200);
    char err[256];
    Transport *rt = transport_start(&rc, err, sizeof err);
    if (!rt) _exit(2);
    RxStream *rx = transport_accept(rt, "f");
    int port = transport_port(rt);
    if (write(ports[1], &port, sizeof port) != sizeof port) _exit(3);
    for (int i = 0; i < 5; i++) {
      void *buf;
      size_t len;
      if (transport_recv(rx, &buf, &len) != 1) _exit(4);
      transport_free_message(buf);
    }
    if (write(acks[1], "k", 1) != 1) _exit(5);
    pause();
    _exit(0);
  }
  int port = 0;
  ck_assert_int_eq(read(ports[0], &port, sizeof port), (ssize_t)sizeof port);
  TransportConfig sc = config("h0", 0, NULL);
  sc.keepalive_ms = MS(200);
  Transport *st = xstart(&sc);
  char addr[64], want[200];
  snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
  Sender s;
  memset(&s, 0, sizeof s);
  s.tx = transport_open(st, "h1", addr, "f");
  s.n = 1000000;
  s.size = 100;
  pthread_t th;
  pthread_create(&th, NULL, sender_main, &s);
  char c;
  ck_assert_int_eq(read(acks[0], &c, 1), 1);
  kill(pid, SIGSTOP);
  int64_t t0 = mono_ms();
  pthread_join(th, NULL);
  int64_t waited = mono_ms() - t0;
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  ck_assert_int_eq(s.rc, -1);
  snprintf(want, sizeof want, "edge 'f' to host 'h1' at %s failed: UNAVAILABLE", addr);
  ck_assert_msg(strncmp(s.err, want, strlen(want)) == 0, "%s", s.err);
  ck_assert_msg(waited < MS(5000), "noticed after %lld ms", (long long)waited);
  transport_stop(st);
}
END_TEST

/* A sending executor killed mid-stream: the receiver's recv returns -1 naming edge and host. */
START_TEST(test_sender_killed) {
  if (!fork_mode()) return; /* CK_FORK=no: gRPC may already have run in this process */
  int port = free_port();
  int acks[2];
  ck_assert_int_eq(pipe(acks), 0);
  char addr[64];
  snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    TransportConfig sc = config("h0", 0, NULL);
    char err[256];
    Transport *st = transport_start(&sc, err, sizeof err);
    if (!st) _exit(2);
    TxStream *tx = transport_open(st, "h1", addr, "k");
    for (int i = 0; i < 5; i++)
      if (transport_send(tx, "12345", 5) != 0) _exit(3);
    if (write(acks[1], "k", 1) != 1) _exit(5);
    pause();
    _exit(0);
  }
  TransportConfig rc = config("h1", 1, NULL);
  rc.listen = addr;
  Transport *rt = xstart(&rc);
  RxStream *rx = transport_accept(rt, "k");
  void *buf;
  size_t len;
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(transport_recv(rx, &buf, &len), 1);
    transport_free_message(buf);
  }
  char c;
  ck_assert_int_eq(read(acks[0], &c, 1), 1);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  ck_assert_int_eq(transport_recv(rx, &buf, &len), -1);
  ck_assert_msg(strstr(transport_rx_error(rx), "edge 'k' from host 'h0' (ipv4:127.0.0.1:") == transport_rx_error(rx),
                "%s", transport_rx_error(rx));
  ck_assert_msg(strstr(transport_rx_error(rx), " failed: the stream broke") != NULL, "%s", transport_rx_error(rx));
  transport_stop(rt);
}
END_TEST

typedef struct BlockedRecv {
  RxStream *rx;
  int *rc;
} BlockedRecv;

static void *blocked_recv_main(void *arg) {
  BlockedRecv b = *(BlockedRecv *)arg;
  void *buf;
  size_t len;
  *b.rc = transport_recv(b.rx, &buf, &len); /* the handle is gone after this returns */
  return NULL;
}

/* Stopping transports in odd states: right after start, with an unconnected stream, twice over
 * for a NULL handle; invalid arguments are refused. */
START_TEST(test_stop_anytime) {
  transport_stop(NULL);
  TransportConfig rc = config("h1", 1, NULL), sc = config("h0", 0, NULL);
  Transport *rt = xstart(&rc);
  transport_stop(rt);
  int fd;
  int port = dead_port(&fd);
  char addr[64];
  snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
  Transport *st = xstart(&sc);
  ck_assert_ptr_null(transport_open(st, "h1", addr, "bad\nedge"));
  ck_assert_ptr_null(transport_open(st, "h1", addr, ""));
  ck_assert_ptr_null(transport_accept(st, "x")); /* client only */
  TxStream *tx = transport_open(st, "h1", addr, "s");
  ck_assert_ptr_nonnull(tx);
  sleep_ms(MS(150));
  transport_stop(st); /* with a call still waiting to connect */
  close(fd);
  rt = xstart(&rc);
  st = xstart(&sc);
  char raddr[64];
  addr_of(rt, raddr, sizeof raddr);
  transport_accept(rt, "a");
  TxStream *open_tx = transport_open(st, "h1", raddr, "a");
  ck_assert_int_eq(transport_send(open_tx, "x", 1), 0);
  ck_assert_ptr_nonnull(transport_open(st, "h1", raddr, "not-yet"));
  RxStream *blocked = transport_accept(rt, "never");
  pthread_t th;
  int brc = 0;
  pthread_create(&th, NULL, blocked_recv_main, &(BlockedRecv){blocked, &brc});
  sleep_ms(MS(200));
  transport_stop(rt); /* with an attached and a pending call, and a thread blocked in recv */
  pthread_join(th, NULL);
  ck_assert_int_eq(brc, -1);
  transport_stop(st);
}
END_TEST

static Suite *transport_suite(void) {
  Suite *s = suite_create("transport");
  struct {
    const char *name;
    const TTest *test;
    int timeout;
  } tests[] = {
      {"roundtrip", test_roundtrip_sizes, 60},
      {"both_ways", test_many_edges_both_ways, 60},
      {"clean_end", test_clean_end_and_late_accept, 20},
      {"backpressure", test_backpressure, 30},
      {"wrong_token", test_wrong_token, 20},
      {"duplicate_unaccepted", test_duplicate_and_unaccepted_edge, 20},
      {"no_sender", test_no_sender, 20},
      {"sender_gives_up", test_sender_gives_up, 20},
      {"oversized", test_oversized, 20},
      {"garbage", test_garbage_tcp, 30},
      {"never_starts", test_peer_never_starts, 20},
      {"starts_late", test_peer_starts_late, 20},
      {"port_in_use", test_port_in_use, 20},
      {"rx_abort", test_rx_abort, 20},
      {"end_rejected", test_end_rejected, 20},
      {"unknown_edge", test_unknown_edge_refused_at_once, 20},
      {"refusal_flood", test_refusal_flood, 60},
      {"tls_roundtrip", test_tls_roundtrip, 60},
      {"tls_impostor_server", test_tls_impostor_server, 60},
      {"tls_impostor_client", test_tls_impostor_client, 60},
      {"receiver_stopped", test_receiver_stopped, 20},
      {"sender_stopped", test_sender_stopped_while_blocked, 20},
      {"receiver_killed", test_receiver_killed, 30},
      {"sender_killed", test_sender_killed, 30},
      {"keepalive_idle", test_keepalive_idle, 20},
      {"receiver_frozen", test_receiver_frozen, 30},
      {"stop_anytime", test_stop_anytime, 30},
  };
  for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
    TCase *tc = unit_case(s, tests[i].name, NULL, NULL, tests[i].timeout * time_scale);
    tcase_add_test(tc, tests[i].test);
  }
  return s;
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  const char *scale = getenv("SF_TEST_TIME_SCALE");
  if (scale && atoi(scale) > 1) time_scale = atoi(scale);
  return unit_run(transport_suite());
}
