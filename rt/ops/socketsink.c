/* socketsink.c: the SocketSink kind, writing its input as CSV lines (csv.h) to a TCP connection:
 * the header row of the input schema's attribute names unless `header` = `no`, then one row per
 * tuple, in arrival order.
 *
 * The connection is made in open, to `connect` = host:port, trying again every RETRY_MS until the
 * executor's connect timeout (--connect-timeout, default 10 s) has passed. Rows are flushed as for
 * a FileSink's standard output: when STREAM_FLUSH_AT bytes wait, when a row comes FLUSH_EVERY_NS
 * after the oldest unwritten one, and whenever the sink's thread is about to wait for input (what
 * the socket takes without waiting). A peer that stops reading makes the sink wait in rt_wait_fd,
 * which a stop of the job ends. The final punctuation writes what is left and closes the
 * connection (the peer reads its end); a failed job closes it where it is, so the peer sees a
 * stream that may end inside a row, never a clean end. */
#include "csv.h"
#include "net.h"
#include "rt.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
  STREAM_FLUSH_AT = 1 << 16,  /* bytes buffered before a write */
  FLUSH_EVERY_NS = 5000000,   /* the oldest unwritten row waits at most this long while rows come */
  RETRY_MS = 100,             /* a refused connection is tried again this often */
  DEFAULT_CONNECT_MS = 10000, /* how long, without --connect-timeout */
};

typedef struct SocketSink {
  const char *addr; /* the `connect` address */
  int fd;           /* the connection (-1: none) */
  Buf buf;          /* rows not yet written, from byte `sent` on */
  size_t sent;      /* bytes at the start of buf already written */
  int64_t oldest;   /* when the oldest unwritten row was added (coarse monotonic ns) */
} SocketSink;

static void socketsink_close(OpInst *op, bool ok);

static int64_t coarse_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int write_fail(OpInst *op, SocketSink *s) {
  return rt_fail(op, "cannot write to '%s': %s", s->addr, strerror(errno));
}

/* Writes everything buffered. 0, rt_fail, or -1 without a message on a stop. */
static int flush(OpInst *op, SocketSink *s) {
  while (s->sent < s->buf.n) {
    ssize_t n = send(s->fd, s->buf.p + s->sent, s->buf.n - s->sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      int ready = rt_wait_fd(op, s->fd, POLLOUT);
      if (ready == 0) return -1;
      if (ready < 0) return write_fail(op, s);
      continue;
    }
    if (n < 0) return write_fail(op, s);
    s->sent += (size_t)n;
  }
  buf_reset(&s->buf);
  s->sent = 0;
  return 0;
}

/* Writes what the socket takes without waiting; an error waits for the next flush to report it. */
static void flush_ready(SocketSink *s) {
  while (s->sent < s->buf.n) {
    ssize_t n = send(s->fd, s->buf.p + s->sent, s->buf.n - s->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s->sent += (size_t)n;
  }
  buf_reset(&s->buf);
  s->sent = 0;
}

static int setup(OpInst *op, SocketSink *s) {
  s->addr = rt_param(op, "connect");
  if (!s->addr) return rt_fail(op, "SocketSink needs parameter 'connect'");
  const char *header = rt_param(op, "header");
  if (header && strcmp(header, "yes") && strcmp(header, "no"))
    return rt_fail(op, "parameter 'header' must be 'yes' or 'no', got '%s'", header);
  if (!op->in_schema) return rt_fail(op, "SocketSink has no input schema");
  int limit = rt_options(op)->connect_timeout_ms > 0 ? rt_options(op)->connect_timeout_ms : DEFAULT_CONNECT_MS;
  int64_t until = coarse_ns() + (int64_t)limit * 1000000;
  char err[512];
  while ((s->fd = net_connect(s->addr, RETRY_MS, err, sizeof err)) < 0) {
    if (errno == EINVAL || coarse_ns() >= until) return rt_fail(op, "%s (tried for %d ms)", err, limit);
    if (rt_stopping(op)) return -1;
    struct timespec ts = { .tv_nsec = RETRY_MS * 1000000L };
    nanosleep(&ts, NULL);
  }
  if (!header || !strcmp(header, "yes")) {
    const Schema *in = op->in_schema;
    for (int i = 0; i < in->nattrs; i++) {
      if (i) buf_putc(&s->buf, ',');
      csv_put_field(&s->buf, in->attrs[i].name, strlen(in->attrs[i].name));
    }
    buf_putc(&s->buf, '\n');
    s->oldest = coarse_ns();
  }
  return 0;
}

static int socketsink_open(OpInst *op) {
  SocketSink *s = sf_xmalloc(sizeof *s);
  memset(s, 0, sizeof *s);
  s->fd = -1;
  buf_init(&s->buf);
  op->state = s;
  if (setup(op, s) == 0) return 0;
  socketsink_close(op, false); /* the executor closes only operators whose open succeeded */
  return -1;
}

static int socketsink_process(OpInst *op, int port, Tuple *t) {
  SocketSink *s = op->state;
  bool was_empty = s->sent == s->buf.n;
  csv_put_row(&s->buf, t->v, t->n);
  tuple_unref(t);
  int64_t now = coarse_ns();
  if (was_empty) s->oldest = now;
  if (s->buf.n - s->sent >= STREAM_FLUSH_AT || now - s->oldest >= FLUSH_EVERY_NS) return flush(op, s);
  return 0;
}

/* The sink's thread is about to wait for input: the peer gets what the socket takes. */
static void socketsink_idle(OpInst *op) {
  SocketSink *s = op->state;
  if (s && s->fd >= 0) flush_ready(s);
}

static int socketsink_final(OpInst *op) {
  SocketSink *s = op->state;
  if (rt_stopping(op)) return -1;
  if (flush(op, s) < 0) return -1;
  int fd = s->fd;
  s->fd = -1;
  shutdown(fd, SHUT_WR);
  if (close(fd) < 0) return write_fail(op, s);
  return 0;
}

static void socketsink_close(OpInst *op, bool ok) {
  SocketSink *s = op->state;
  if (!s) return;
  if (s->fd >= 0) close(s->fd);
  buf_release(&s->buf);
  free(s);
  op->state = NULL;
}

const OpKindImpl op_socketsink = {
  .kind = KIND_SOCKETSINK,
  .open = socketsink_open,
  .process = socketsink_process,
  .idle = socketsink_idle,
  .final = socketsink_final,
  .close = socketsink_close,
};
