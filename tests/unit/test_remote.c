/* test_remote.c: cross-host edges (rt/remote.c) driven through RemoteConfig's callbacks, without an
 * executor: batches arrive in order and whole at the deliver callback; a peer that ends a stream
 * before its end of stream, sends positions that go backwards, sends after the end or sends a batch
 * over the limit fails the job through the fail callback with a message naming the host and the
 * edge, and its sender hears it; remote_start refuses what it cannot run with a clear message.
 * The control streams carry messages both ways, end together, and fail naming the peer when it is
 * lost or sends what it may not.
 *
 * Every test starts its own transports on loopback (port 0, asked back with remote_port) in
 * plain text, inside the test: Check forks per test and gRPC does not survive a fork. The hostile
 * peers are bare transports (transport.h) sending what wire_encode makes of the items given. */
#include "check_helper.h"
#include "remote.h"

#include <check.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport.h"
#include "wire.h"

enum { BATCH = 4, LIMIT = 2 * BATCH + 64 }; /* LIMIT: items an incoming message may hold */

static Attr attrs[] = {{.name = "id", .type = TYPE_INT}, {.name = "v", .type = TYPE_INT}};
static Schema schema = {.name = "T", .attrs = attrs, .nattrs = 2};

/* What the callbacks saw. */
typedef struct Seen {
  pthread_mutex_t mu;
  pthread_cond_t changed;
  Item items[256];  /* every item delivered, in order (tuples kept) */
  int nitems;
  int calls;        /* deliver calls */
  void *edge;       /* the edge of the last deliver call */
  int refuse;       /* deliver returns -1 (the job is stopping) */
  char fail[4][1024]; /* the failure messages */
  int nfail;
} Seen;

static Seen seen;

static int on_deliver(void *ctx, void *edge, Item *items, int n) {
  Seen *s = ctx;
  pthread_mutex_lock(&s->mu);
  s->calls++;
  s->edge = edge;
  int rc = 0;
  if (s->refuse) {
    for (int i = 0; i < n; i++)
      if (items[i].kind == ITEM_TUPLE) tuple_unref(items[i].t);
    rc = -1;
  } else {
    for (int i = 0; i < n; i++) {
      ck_assert_int_lt(s->nitems, 256);
      s->items[s->nitems++] = items[i];
    }
  }
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->mu);
  return rc;
}

static void on_fail(void *ctx, const char *message) {
  Seen *s = ctx;
  pthread_mutex_lock(&s->mu);
  if (s->nfail < 4) snprintf(s->fail[s->nfail], sizeof s->fail[0], "%s", message);
  s->nfail++;
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->mu);
}

/* Waits up to 10 s for a first failure message; "" when none came. */
static const char *wait_fail(void) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&seen.mu);
  while (seen.nfail == 0 && pthread_cond_timedwait(&seen.changed, &seen.mu, &until) == 0) {
  }
  pthread_mutex_unlock(&seen.mu);
  return seen.nfail ? seen.fail[0] : "";
}

static void setup(void) {
  memset(&seen, 0, sizeof seen);
  pthread_mutex_init(&seen.mu, NULL);
  pthread_cond_init(&seen.changed, NULL);
}

static void teardown(void) {
  for (int i = 0; i < seen.nitems; i++)
    if (seen.items[i].kind == ITEM_TUPLE) tuple_unref(seen.items[i].t);
}

/* A graph of hosts h0 and h1 on loopback, port 0 (the port is filled in once known); only its
 * hosts are used. Its hosts array has room for a third, h2, off loopback (nhosts = 3 shows it). */
static Graph *hosts_graph(void) {
  Graph *g = graph_new("test.xml");
  static const char *names[] = {"h0", "h1", "h2"};
  g->nhosts = 2;
  g->hosts = arena_alloc(g->arena, sizeof(Host *) * 3);
  for (int i = 0; i < 3; i++) {
    g->hosts[i] = arena_alloc(g->arena, sizeof(Host));
    g->hosts[i]->name = names[i];
    g->hosts[i]->address = i < 2 ? "127.0.0.1:0" : "192.0.2.1:7000";
  }
  return g;
}

static ExecOptions options = {.token = "test-token", .plaintext = true, .connect_timeout_ms = 2000};

static RemoteConfig config(Graph *g, const char *host) {
  return (RemoteConfig){.g = g, .host = host, .o = &options, .batch = BATCH, .deliver = on_deliver,
                        .fail = on_fail, .ctx = &seen};
}

/* Starts host `name` of g and writes the port it got into g's address of it. */
static Remote *start(Graph *g, const char *name) {
  char err[512] = "";
  RemoteConfig cfg = config(g, name);
  Remote *r = remote_start(&cfg, err, sizeof err);
  ck_assert_msg(r != NULL, "remote_start: %s", err);
  graph_find_host(g, name)->address = arena_printf(g->arena, "127.0.0.1:%d", remote_port(r));
  return r;
}

static Item tuple_item(int64_t id, uint64_t seq) {
  Value v[2];
  value_put_int(&v[0], id);
  value_put_int(&v[1], -id);
  return (Item){.kind = ITEM_TUPLE, .seq = seq, .src = seq, .t = tuple_new(v, 2)};
}

static Item mark(ItemKind kind, uint64_t seq) {
  return (Item){.kind = kind, .seq = seq, .src = seq};
}

static int edge_marker; /* what the receiving side names its edge by */

/* Three tuples, a window, a pulse and the end, in two messages, arrive in order and whole; both
 * sides finish cleanly and nothing fails. */
START_TEST(test_roundtrip) {
  Graph *g = hosts_graph();
  Remote *r1 = start(g, "h1"), *r0 = start(g, "h0");
  char err[512] = "";
  ck_assert_msg(remote_accept(r1, "e", "h0", &schema, &edge_marker, err, sizeof err) == 0, "%s", err);
  RemoteTx *tx = remote_open(r0, "e", "h1", &schema, err, sizeof err);
  ck_assert_msg(tx != NULL, "%s", err);
  ck_assert_int_eq(remote_connect(r1), 0);
  ck_assert_int_eq(remote_connect(r0), 0);
  Item first[] = {tuple_item(1, 0), tuple_item(2, 1), mark(ITEM_WINDOW, 2)};
  Item second[] = {tuple_item(3, 2), mark(ITEM_PULSE, 5), mark(ITEM_FINAL, 5)};
  ck_assert_int_eq(remote_send(tx, first, 3), 0);
  ck_assert_int_eq(remote_send(tx, second, 3), 0);
  for (int i = 0; i < 3; i++) { /* the encoder copied them */
    if (first[i].kind == ITEM_TUPLE) tuple_unref(first[i].t);
    if (second[i].kind == ITEM_TUPLE) tuple_unref(second[i].t);
  }
  ck_assert_int_eq(remote_finish(r0, true), 0); /* the receiver confirmed the end */
  ck_assert_int_eq(remote_finish(r1, true), 0);
  ck_assert_int_eq(seen.nfail, 0);
  ck_assert_int_eq(seen.calls, 2);
  ck_assert_ptr_eq(seen.edge, &edge_marker);
  static const ItemKind kinds[] = {ITEM_TUPLE, ITEM_TUPLE, ITEM_WINDOW, ITEM_TUPLE, ITEM_PULSE, ITEM_FINAL};
  static const uint64_t seqs[] = {0, 1, 2, 2, 5, 5};
  static const int ids[] = {1, 2, 0, 3, 0, 0};
  ck_assert_int_eq(seen.nitems, 6);
  for (int i = 0; i < 6; i++) {
    ck_assert_int_eq(seen.items[i].kind, kinds[i]);
    ck_assert_uint_eq(seen.items[i].seq, seqs[i]);
    ck_assert_uint_eq(seen.items[i].src, seqs[i]);
    if (kinds[i] != ITEM_TUPLE) continue;
    ck_assert_int_eq(seen.items[i].t->v[0].i, ids[i]);
    ck_assert_int_eq(seen.items[i].t->v[1].i, -ids[i]);
  }
  remote_stop(r0);
  remote_stop(r1);
  graph_free(g);
}
END_TEST

/* A hostile or broken peer: a bare transport named h0 that sends the given messages on edge "e" to
 * the Remote of h1 (which accepts "e" from "h0") and half-closes. Returns what its close says
 * (transport_tx_error, "" when confirmed) into why. */
static void peer_sends(Item *const *messages, const int *counts, int nmessages, char *why, size_t cap) {
  Graph *g = hosts_graph();
  Remote *r1 = start(g, "h1");
  char err[512] = "";
  ck_assert_msg(remote_accept(r1, "e", "h0", &schema, &edge_marker, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(remote_connect(r1), 0);
  TransportConfig tc = {.name = "h0", .token = options.token, .plaintext = 1, .connect_timeout_ms = 5000};
  Transport *t = transport_start(&tc, err, sizeof err);
  ck_assert_msg(t != NULL, "%s", err);
  TxStream *s = transport_open(t, "h1", graph_find_host(g, "h1")->address, "e");
  ck_assert_ptr_nonnull(s);
  Buf b;
  buf_init(&b);
  for (int m = 0; m < nmessages; m++) {
    buf_reset(&b);
    wire_encode("e", &schema, messages[m], counts[m], &b);
    ck_assert_int_eq(transport_send(s, b.p, b.n), 0);
  }
  buf_release(&b);
  int closed = transport_close(s);
  snprintf(why, cap, "%s", closed == 0 ? "" : transport_tx_error(s));
  remote_finish(r1, false);
  transport_stop(t);
  remote_stop(r1);
  graph_free(g);
}

/* The stream ends cleanly but without its end-of-stream punctuation (a sender that stopped early):
 * the job fails naming both hosts and the edge, and the sender's close fails too. */
START_TEST(test_end_without_final) {
  Item m[] = {mark(ITEM_PULSE, 1), mark(ITEM_PULSE, 2)};
  Item *ms[] = {m};
  int ns[] = {2};
  char why[1024];
  peer_sends(ms, ns, 1, why, sizeof why);
  ck_assert_str_eq(wait_fail(), "host 'h1': edge 'e' from host 'h0' ended before its end of stream");
  ck_assert_int_eq(seen.nfail, 1);
  ck_assert_msg(strstr(why, "the stream ended before its end-of-stream punctuation") != NULL, "sender heard: %s",
                why);
}
END_TEST

START_TEST(test_backwards) {
  Item m1[] = {mark(ITEM_PULSE, 5)}, m2[] = {mark(ITEM_PULSE, 4), mark(ITEM_FINAL, 4)};
  Item *ms[] = {m1, m2};
  int ns[] = {1, 2};
  char why[1024];
  peer_sends(ms, ns, 2, why, sizeof why);
  ck_assert_str_eq(wait_fail(), "host 'h1': edge 'e' from host 'h0' sent a bad message: sequence numbers went "
                                "backwards");
  ck_assert_msg(strstr(why, "sequence numbers went backwards") != NULL, "sender heard: %s", why);
  ck_assert_int_eq(seen.nitems, 1); /* the first message went through, the bad one did not */
}
END_TEST

/* A checkpoint barrier leaving a time-ordered fan-in carries the checkpoint's position, ahead of the
 * merged stream's renumbered items after it: it is accepted, and the items around it are checked
 * against each other (a Join on three executors failed its checkpoints with "sequence numbers went
 * backwards"). A tuple that goes back is still refused. */
START_TEST(test_barrier_ahead) {
  Item b = mark(ITEM_BARRIER, 9);
  b.ckpt = 1;
  Item m1[] = {mark(ITEM_PULSE, 3), b, mark(ITEM_PULSE, 4)}, m2[] = {mark(ITEM_PULSE, 5), mark(ITEM_FINAL, 5)};
  Item *ms[] = {m1, m2};
  int ns[] = {3, 2};
  char why[1024];
  peer_sends(ms, ns, 2, why, sizeof why);
  ck_assert_str_eq(why, "");
  ck_assert_int_eq(seen.nfail, 0);
  ck_assert_int_eq(seen.nitems, 5);
}
END_TEST

START_TEST(test_backwards_around_barrier) {
  Item b = mark(ITEM_BARRIER, 2);
  b.ckpt = 1;
  Item m1[] = {mark(ITEM_PULSE, 5), b, mark(ITEM_PULSE, 4), mark(ITEM_FINAL, 4)};
  Item *ms[] = {m1};
  int ns[] = {4};
  char why[1024];
  peer_sends(ms, ns, 1, why, sizeof why);
  ck_assert_str_eq(wait_fail(), "host 'h1': edge 'e' from host 'h0' sent a bad message: sequence numbers went "
                                "backwards");
}
END_TEST

START_TEST(test_after_final) {
  Item m[] = {mark(ITEM_FINAL, 1), mark(ITEM_PULSE, 2)};
  Item *ms[] = {m};
  int ns[] = {2};
  char why[1024];
  peer_sends(ms, ns, 1, why, sizeof why);
  ck_assert_str_eq(wait_fail(), "host 'h1': edge 'e' from host 'h0' sent a bad message: items after the end of "
                                "stream");
  ck_assert_int_eq(seen.nitems, 0);
}
END_TEST

/* The limit on items per incoming message follows RemoteConfig.batch: LIMIT pulses pass, one more
 * is refused before it is unpacked. */
START_TEST(test_batch_limit) {
  static Item ok[LIMIT + 1], over[LIMIT + 2];
  for (int i = 0; i < LIMIT; i++) ok[i] = mark(ITEM_PULSE, (uint64_t)i);
  for (int i = 0; i < LIMIT + 1; i++) over[i] = mark(ITEM_PULSE, LIMIT + (uint64_t)i);
  Item *ms[] = {ok, over};
  int ns[] = {LIMIT, LIMIT + 1};
  char why[1024];
  peer_sends(ms, ns, 2, why, sizeof why);
  char want[256];
  snprintf(want, sizeof want,
           "host 'h1': edge 'e' from host 'h0' sent a bad message: batch of %d items exceeds the limit of %d items "
           "per batch",
           LIMIT + 1, LIMIT);
  ck_assert_str_eq(wait_fail(), want);
  ck_assert_int_eq(seen.nitems, LIMIT);
}
END_TEST

/* deliver says the job is stopping: the receiver ends without reporting anything. */
START_TEST(test_deliver_stopping) {
  seen.refuse = 1;
  Graph *g = hosts_graph();
  Remote *r1 = start(g, "h1"), *r0 = start(g, "h0");
  char err[512] = "";
  ck_assert_int_eq(remote_accept(r1, "e", "h0", &schema, &edge_marker, err, sizeof err), 0);
  RemoteTx *tx = remote_open(r0, "e", "h1", &schema, err, sizeof err);
  ck_assert_int_eq(remote_connect(r1), 0);
  ck_assert_int_eq(remote_connect(r0), 0);
  Item m[] = {tuple_item(7, 0), mark(ITEM_FINAL, 1)};
  ck_assert_int_eq(remote_send(tx, m, 2), 0);
  tuple_unref(m[0].t);
  pthread_mutex_lock(&seen.mu);
  while (seen.calls == 0) pthread_cond_wait(&seen.changed, &seen.mu);
  pthread_mutex_unlock(&seen.mu);
  ck_assert_int_eq(remote_finish(r1, true), 0); /* its receiver has ended */
  remote_abort(r0); /* what the executor does when the job stops */
  remote_stop(r1);
  remote_stop(r0);
  ck_assert_int_eq(seen.calls, 1);
  ck_assert_int_eq(seen.nfail, 0);
  graph_free(g);
}
END_TEST

/* A sender whose peer never comes up fails the job after the connect timeout, naming both. */
START_TEST(test_peer_unreachable) {
  Graph *g = hosts_graph();
  Remote *r0 = start(g, "h0");
  int fd = socket(AF_INET, SOCK_STREAM, 0); /* a port bound but not listening: nothing answers */
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  socklen_t len = sizeof a;
  getsockname(fd, (struct sockaddr *)&a, &len);
  graph_find_host(g, "h1")->address = arena_printf(g->arena, "127.0.0.1:%d", ntohs(a.sin_port));
  char err[512] = "";
  RemoteTx *tx = remote_open(r0, "e", "h1", &schema, err, sizeof err);
  ck_assert_msg(tx != NULL, "%s", err);
  ck_assert_int_eq(remote_connect(r0), 0);
  Item m[] = {mark(ITEM_FINAL, 0)};
  ck_assert_int_eq(remote_send(tx, m, 1), -1);
  char want[256];
  snprintf(want, sizeof want, "host 'h0': edge 'e': cannot reach host 'h1' at 127.0.0.1:%d after 2000 ms",
           ntohs(a.sin_port));
  ck_assert_int_eq(seen.nfail, 1);
  ck_assert_str_eq(seen.fail[0], want);
  remote_stop(r0);
  close(fd);
  graph_free(g);
}
END_TEST

/* remote_start, remote_open and remote_accept refuse what cannot work, saying why. */
START_TEST(test_refusals) {
  Graph *g = hosts_graph();
  char err[512] = "";
  RemoteConfig cfg = config(g, NULL);
  ck_assert_ptr_null(remote_start(&cfg, err, sizeof err));
  ck_assert_str_eq(err, "internal error: cross-host edges without --host");
  cfg.host = "h9";
  ck_assert_ptr_null(remote_start(&cfg, err, sizeof err));
  ck_assert_str_eq(err, "graph has no host 'h9'");
  cfg.host = "h0";
  ExecOptions o = options;
  cfg.o = &o;
  o.token = "";
  ck_assert_ptr_null(remote_start(&cfg, err, sizeof err));
  ck_assert_str_eq(err, "no job token: set SF_TOKEN or pass --token-file (tools/sf-launch does this)");
  o.token = options.token;
  o.plaintext = false;
  ck_assert_ptr_null(remote_start(&cfg, err, sizeof err));
  ck_assert_str_eq(err, "no TLS credentials: set SF_TLS_CA, SF_TLS_CERT and SF_TLS_KEY (tools/sf-launch does "
                        "this; tools/sf-certs makes them), or pass --insecure-plaintext on loopback");
  o.plaintext = true;
  g->nhosts = 3; /* h2 is not on loopback */
  ck_assert_ptr_null(remote_start(&cfg, err, sizeof err));
  ck_assert_str_eq(err, "--insecure-plaintext is for loopback addresses only, and host 'h2' is at 192.0.2.1:7000");
  g->nhosts = 2;
  Remote *r0 = start(g, "h0");
  cfg.host = "h1";
  graph_find_host(g, "h1")->address = graph_find_host(g, "h0")->address; /* taken */
  ck_assert_ptr_null(remote_start(&cfg, err, sizeof err));
  char want[256];
  snprintf(want, sizeof want, "host 'h1': cannot listen on %s: address already in use",
           graph_find_host(g, "h0")->address);
  ck_assert_str_eq(err, want);
  ck_assert_ptr_null(remote_open(r0, "e", "h9", &schema, err, sizeof err));
  ck_assert_str_eq(err, "edge 'e' goes to unknown host 'h9'");
  ck_assert_int_eq(remote_accept(r0, "e", "h1", &schema, &edge_marker, err, sizeof err), 0);
  ck_assert_int_eq(remote_accept(r0, "e", "h1", &schema, &edge_marker, err, sizeof err), -1);
  ck_assert_str_eq(err, "cannot accept edge 'e' from host 'h1'");
  ck_assert_int_eq(seen.nfail, 0);
  remote_stop(r0);
  graph_free(g);
}
END_TEST

/* ---- the control streams (remote_control) ---- */

/* What the control callbacks heard, on either side. */
typedef struct Heard {
  pthread_mutex_t mu;
  pthread_cond_t changed;
  char from[16][8];
  WireCtl m[16];
  int n;
  const char *refuse; /* the callback returns -1 with this reason */
} Heard;

static Heard heard;

static int on_ctl(void *ctx, const char *from, const WireCtl *m, char *why, size_t cap) {
  Heard *h = ctx;
  pthread_mutex_lock(&h->mu);
  if (h->n < 16) {
    snprintf(h->from[h->n], sizeof h->from[0], "%s", from);
    h->m[h->n++] = *m;
  }
  pthread_cond_broadcast(&h->changed);
  const char *refuse = h->refuse;
  pthread_mutex_unlock(&h->mu);
  if (refuse) snprintf(why, cap, "%s", refuse);
  return refuse ? -1 : 0;
}

/* Waits up to 10 s until the callbacks heard n messages in all. */
static int wait_heard(int n) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&heard.mu);
  while (heard.n < n && pthread_cond_timedwait(&heard.changed, &heard.mu, &until) == 0) {
  }
  int got = heard.n;
  pthread_mutex_unlock(&heard.mu);
  return got;
}

static void ctl_setup(void) {
  setup();
  memset(&heard, 0, sizeof heard);
  pthread_mutex_init(&heard.mu, NULL);
  pthread_cond_init(&heard.changed, NULL);
}

static const char *const ctl_hosts[] = {"h0", "h1"};

/* h0 (the coordinator) and h1 with their control streams set up and connected. */
static void ctl_pair(Graph *g, Remote **r0, Remote **r1) {
  char err[512] = "";
  *r0 = start(g, "h0");
  *r1 = start(g, "h1");
  ck_assert_msg(remote_control(*r0, "h0", ctl_hosts, 2, on_ctl, &heard, err, sizeof err) == 0, "%s", err);
  ck_assert_msg(remote_control(*r1, "h0", ctl_hosts, 2, on_ctl, &heard, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(remote_connect(*r0), 0);
  ck_assert_int_eq(remote_connect(*r1), 0);
}

static void *finish_thread(void *r) {
  return (void *)(intptr_t)remote_finish(r, true);
}

/* A request goes from the coordinator to h1, h1's done report back, the completion out again, each
 * heard once, in order, from the right host; both finish cleanly (each waits for the other's end,
 * so they finish at the same time), and nothing fails. */
START_TEST(test_ctl_roundtrip) {
  Graph *g = hosts_graph();
  Remote *r0, *r1;
  ctl_pair(g, &r0, &r1);
  remote_ctl_send(r0, NULL, &(WireCtl){.kind = WIRE_CKPT_REQUEST, .ckpt = 1, .pos = 100});
  ck_assert_int_eq(wait_heard(1), 1);
  remote_ctl_send(r1, "h0", &(WireCtl){.kind = WIRE_CKPT_DONE, .ckpt = 1});
  ck_assert_int_eq(wait_heard(2), 2);
  remote_ctl_send(r0, "h1", &(WireCtl){.kind = WIRE_CKPT_COMPLETE, .ckpt = 1});
  remote_ctl_send(r0, "h9", &(WireCtl){.kind = WIRE_CKPT_COMPLETE, .ckpt = 1}); /* no such peer: dropped */
  ck_assert_int_eq(wait_heard(3), 3);
  pthread_t t;
  pthread_create(&t, NULL, finish_thread, r1);
  ck_assert_int_eq(remote_finish(r0, true), 0);
  void *rc1;
  pthread_join(t, &rc1);
  ck_assert_int_eq((int)(intptr_t)rc1, 0);
  ck_assert_int_eq(heard.n, 3);
  ck_assert_str_eq(heard.from[0], "h0");
  ck_assert_int_eq(heard.m[0].kind, WIRE_CKPT_REQUEST);
  ck_assert_uint_eq(heard.m[0].ckpt, 1);
  ck_assert_uint_eq(heard.m[0].pos, 100);
  ck_assert_str_eq(heard.from[1], "h1");
  ck_assert_int_eq(heard.m[1].kind, WIRE_CKPT_DONE);
  ck_assert_str_eq(heard.from[2], "h0");
  ck_assert_int_eq(heard.m[2].kind, WIRE_CKPT_COMPLETE);
  ck_assert_int_eq(seen.nfail, 0);
  remote_stop(r0);
  remote_stop(r1);
  graph_free(g);
}
END_TEST

/* The coordinator goes away without its end (its transport stopped, as when it dies): h1 fails,
 * naming it. */
START_TEST(test_ctl_coordinator_lost) {
  Graph *g = hosts_graph();
  Remote *r0, *r1;
  ctl_pair(g, &r0, &r1);
  remote_ctl_send(r0, NULL, &(WireCtl){.kind = WIRE_CKPT_REQUEST, .ckpt = 1, .pos = 5});
  ck_assert_int_eq(wait_heard(1), 1);
  remote_stop(r0); /* (its own streams fail too: its callback hears that first) */
  const char *want = "host 'h1': lost the checkpoints' coordinator, host 'h0': ";
  bool found = false;
  for (int tries = 0; tries < 1000 && !found; tries++) {
    pthread_mutex_lock(&seen.mu);
    for (int i = 0; i < seen.nfail && i < 4; i++) found |= strncmp(seen.fail[i], want, strlen(want)) == 0;
    pthread_mutex_unlock(&seen.mu);
    if (!found) usleep(10000);
  }
  ck_assert_msg(found, "no failure says '%s' (the first: '%s')", want, seen.fail[0]);
  remote_stop(r1);
  graph_free(g);
}
END_TEST

/* A request sent to the coordinator is refused before the callback hears it, naming the peer and
 * its stream. */
START_TEST(test_ctl_refused) {
  Graph *g = hosts_graph();
  Remote *r0, *r1;
  ctl_pair(g, &r0, &r1);
  remote_ctl_send(r1, NULL, &(WireCtl){.kind = WIRE_CKPT_REQUEST, .ckpt = 1, .pos = 5});
  ck_assert_str_eq(wait_fail(), "host 'h0': host 'h1' sent a bad control message on '!ctl:h1>h0': a checkpoint "
                                "request, which only the coordinator sends");
  pthread_mutex_lock(&heard.mu);
  ck_assert_int_eq(heard.n, 0);
  pthread_mutex_unlock(&heard.mu);
  remote_stop(r0);
  remote_stop(r1);
  graph_free(g);
}
END_TEST

/* A report the callback refuses fails the job with its reason, naming the peer and its stream. */
START_TEST(test_ctl_callback_refuses) {
  Graph *g = hosts_graph();
  Remote *r0, *r1;
  heard.refuse = "done with checkpoint 9, which was not requested"; /* (before any thread reads it) */
  ctl_pair(g, &r0, &r1);
  remote_ctl_send(r1, "h0", &(WireCtl){.kind = WIRE_CKPT_DONE, .ckpt = 9});
  ck_assert_str_eq(wait_fail(), "host 'h0': host 'h1' sent a bad control message on '!ctl:h1>h0': done with "
                                "checkpoint 9, which was not requested");
  remote_stop(r0);
  remote_stop(r1);
  graph_free(g);
}
END_TEST

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  Suite *s = suite_create("remote");
  UNIT_ADD_TIMEOUT(s, test_roundtrip, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_end_without_final, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_backwards, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_barrier_ahead, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_backwards_around_barrier, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_after_final, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_batch_limit, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_deliver_stopping, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_peer_unreachable, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_refusals, setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_ctl_roundtrip, ctl_setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_ctl_coordinator_lost, ctl_setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_ctl_refused, ctl_setup, teardown, 60);
  UNIT_ADD_TIMEOUT(s, test_ctl_callback_refuses, ctl_setup, teardown, 60);
  return unit_run(s);
}
