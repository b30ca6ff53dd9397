/* socketsource.c: the SocketSource kind, a source reading CSV rows from one TCP connection through
 * rows.h (header or not, onerror, maxrow and maxfields; a row cut by the peer's close is an error
 * unless --accept-unterminated, a row cut by a drain is dropped).
 *
 * `listen` = host:port: the socket listens from open on (so a bad or busy address fails the job
 * before anything runs), and run accepts one connection, then stops listening; the input ends when
 * that peer closes it. Nothing authenticates the peer: whoever connects first is read. So a port
 * alone (`listen` = `9000`) listens on loopback only (127.0.0.1:9000, how messages name it);
 * another address is used as given (`0.0.0.0:9000`: every interface). `connect` = host:port: run connects, trying again every RETRY_MS until the
 * executor's connect timeout (--connect-timeout, default 10 s) has passed, then fails. Either way
 * the waits end on a stop, and a drain before a peer came ends the source with no rows.
 * Messages name the input by the address given (`127.0.0.1:9000:3: error: ...`). */
#include "net.h"
#include "rows.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
  RETRY_MS = 100,             /* connect: a refused connection is tried again this often */
  DEFAULT_CONNECT_MS = 10000, /* connect: how long, without --connect-timeout */
  ACCEPT_SLICE_MS = 50,       /* listen: a drain is looked at this often while no peer came */
};

typedef struct SocketSource {
  const char *addr; /* the `listen` or `connect` address (a port alone: loopback_addr) */
  char loopback_addr[32]; /* "127.0.0.1:PORT" for `listen` = PORT */
  bool listening;   /* `listen` rather than `connect` */
  bool header;      /* `header` = `yes` */
  bool skip;        /* `onerror` = `skip` */
  uint64_t max_row; /* `maxrow` */
  int max_fields;   /* `maxfields` */
  int lfd;          /* the listening socket (-1: none) */
  int fd;           /* the connection (-1: none yet) */
  bool reading;     /* rr is initialized */
  RowReader rr;     /* its rows */
} SocketSource;

static void socketsource_close(OpInst *op, bool ok);

static int setup(OpInst *op, SocketSource *s) {
  const char *listen_at = rt_param(op, "listen"), *connect_to = rt_param(op, "connect");
  if (!!listen_at == !!connect_to) return rt_fail(op, "SocketSource needs parameter 'listen' or 'connect' (one of them)");
  const char *format = rt_param(op, "format"), *header = rt_param(op, "header");
  if (format && strcmp(format, "csv")) return rt_fail(op, "unknown format '%s' (the only format is 'csv')", format);
  if (header && strcmp(header, "yes") && strcmp(header, "no"))
    return rt_fail(op, "parameter 'header' must be 'yes' or 'no', got '%s'", header);
  if (!op->out_schema) return rt_fail(op, "SocketSource has no output schema");
  if (rows_onerror(op, &s->skip) < 0 || rows_limits(op, &s->max_row, &s->max_fields) < 0) return -1;
  s->header = !header || !strcmp(header, "yes");
  s->listening = listen_at != NULL;
  s->addr = listen_at ? listen_at : connect_to;
  if (s->listening && listen_at[0] && strspn(listen_at, "0123456789") == strlen(listen_at)) {
    snprintf(s->loopback_addr, sizeof s->loopback_addr, "127.0.0.1:%.8s", listen_at); /* no other machine */
    s->addr = s->loopback_addr;
  }
  if (s->listening) {
    char err[512];
    s->lfd = net_listen(s->addr, err, sizeof err);
    if (s->lfd < 0) return rt_fail(op, "%s", err);
  }
  return 0;
}

static int socketsource_open(OpInst *op) {
  SocketSource *s = sf_xmalloc(sizeof *s);
  memset(s, 0, sizeof *s);
  s->lfd = s->fd = -1;
  op->state = s;
  if (setup(op, s) == 0) return 0;
  socketsource_close(op, false); /* the executor closes only operators whose open succeeded */
  return -1;
}

/* Accepts the one peer. 1 with s->fd, 0 on a drain before one came, -1 on a stop or an error. */
static int accept_peer(OpInst *op, SocketSource *s) {
  for (;;) {
    if (rt_draining(op)) return 0;
    int ready = rt_wait_fd_for(op, s->lfd, POLLIN, ACCEPT_SLICE_MS);
    if (ready == 0) return -1;
    if (ready < 0) return rt_fail(op, "cannot accept on '%s': %s", s->addr, strerror(errno));
    if (ready == 2) {
      rt_idle(op);
      continue;
    }
    s->fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (s->fd >= 0) break;
    if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
      return rt_fail(op, "cannot accept on '%s': %s", s->addr, strerror(errno));
  }
  close(s->lfd); /* one connection */
  s->lfd = -1;
  return 1;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Connects, trying again until the connect timeout. 1 with s->fd, 0 on a drain, -1 on a stop or
 * a failure. */
static int connect_peer(OpInst *op, SocketSource *s) {
  int limit = rt_options(op)->connect_timeout_ms > 0 ? rt_options(op)->connect_timeout_ms : DEFAULT_CONNECT_MS;
  int64_t until = now_ms() + limit;
  char err[512];
  for (;;) {
    if (rt_stopping(op)) return -1;
    if (rt_draining(op)) return 0;
    s->fd = net_connect(s->addr, RETRY_MS, err, sizeof err);
    if (s->fd >= 0) return 1;
    if (errno == EINVAL || now_ms() >= until) return rt_fail(op, "%s (tried for %d ms)", err, limit);
    struct timespec ts = { .tv_nsec = RETRY_MS * 1000000L };
    nanosleep(&ts, NULL);
  }
}

static int socketsource_run(OpInst *op) {
  SocketSource *s = op->state;
  int rc = s->listening ? accept_peer(op, s) : connect_peer(op, s);
  if (rc <= 0) return rc;
  rows_init(&s->rr, op, s->fd, s->addr, false);
  s->reading = true;
  s->rr.header = s->header;
  s->rr.skip = s->skip;
  s->rr.r.max_row = s->max_row;
  s->rr.r.max_fields = s->max_fields;
  s->rr.running = true; /* its waits may hand on what was emitted: the threads run */
  if (rows_start(&s->rr) < 0) return -1;
  return rows_run(&s->rr);
}

static int socketsource_process(OpInst *op, int port, Tuple *t) {
  tuple_unref(t);
  return rt_fail(op, "a SocketSource has no input");
}

static void socketsource_close(OpInst *op, bool ok) {
  SocketSource *s = op->state;
  if (!s) return;
  if (s->reading) rows_release(&s->rr);
  if (s->fd >= 0) close(s->fd);
  if (s->lfd >= 0) close(s->lfd);
  free(s);
  op->state = NULL;
}

/* Checkpoints: a TCP peer's lines cannot be asked for again, so the source takes part in them
 * with nothing to restore (no snapshot): after a failure, what the peer sent since the last
 * checkpoint is lost, and what it sends next is read on. */
static int socketsource_checkpointable(OpInst *op) {
  rt_warn(op, "reads a TCP connection, which cannot be replayed: across a failure and a restore from a "
              "checkpoint, its input is at-most-once (rows received since the checkpoint are lost)");
  return 0;
}

const OpKindImpl op_socketsource = {
  .kind = KIND_SOCKETSOURCE,
  .open = socketsource_open,
  .run = socketsource_run,
  .process = socketsource_process,
  .close = socketsource_close,
  .checkpointable = socketsource_checkpointable,
};
