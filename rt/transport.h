/* transport.h: opaque byte messages between executors, one long-lived gRPC stream per cross-host edge.
 *
 * The transport knows nothing about tuples or protobuf: it moves byte strings (already-encoded
 * batches) from a TxStream in one process to the RxStream of the same edge in another, in order,
 * with credit-based back-pressure.  rt/transport*.c (see rt/transport_priv.h) are the only files
 * of the project that include <grpc/grpc.h>.
 *
 * The protocol (one service method, "/sf.Exec/Edge", a bidirectional streaming call per edge):
 *   - the sender opens the call with initial metadata `sf-edge` (the edge id), `sf-token` (the job
 *     token, compared in constant time; a call without it is refused with UNAUTHENTICATED) and
 *     `sf-peer` (the sending executor's name, optional, used in messages);
 *   - client -> server: data messages, each one transport_send();
 *   - server -> client: credit grants, each exactly 8 bytes, a big-endian count of further messages
 *     the sender may send.  The receiver grants `credits` when it accepts the call and then tops
 *     the window up as its application consumes messages, so at most `credits` messages are ever in
 *     flight or queued per edge.  Anything else from the server is malformed and ends the call;
 *     a sender exceeding its credit ends the call with RESOURCE_EXHAUSTED.
 *   - the sender half-closes; the receiving transport answers with status OK once its application
 *     has read every message and the end of stream (transport_recv returned 0) and accepted the
 *     stream (transport_rx_confirm), so a stream the application rejects (transport_rx_abort), for
 *     a message or for how it ended, still fails the sender.
 *
 * Security: by default every connection is mutual TLS.  Each executor has a certificate from the
 * job's own CA (tools/sf-launch makes one per job) naming its host name.  A sender checks, during
 * the TLS handshake and so before anything of the call (the token included) is sent, that the
 * peer's certificate chains to the job CA and names the host it means to reach (peer_name of
 * transport_open); a peer that is not that host never gets past the handshake, and the stream fails
 * after connect_timeout_ms like an unreachable one.  A receiver requires a client certificate from
 * the job CA and refuses with PERMISSION_DENIED a call whose `sf-peer` differs from the host its
 * certificate names.  TransportConfig.plaintext turns all of this off, for loopback development.
 *
 * Threading: every Transport runs one thread of its own, the only one that waits on gRPC's
 * completion queue (all network I/O happens there).  Executor threads block on condition variables
 * inside transport_send / transport_close / transport_recv.  Different streams may be used from
 * different threads at the same time; one stream must not be used by two threads at once (except
 * transport_rx_abort, which any thread may call).  The log callback is called from any of these
 * threads with the transport's lock held: it must not call back into the transport.
 *
 * Ownership: the Transport owns every stream it hands out; a stream stays valid (its error message
 * too) until transport_stop(), which frees them all.  No handle may be used once transport_stop()
 * has returned. */
#ifndef SF_TRANSPORT_H
#define SF_TRANSPORT_H

#include <stddef.h>

typedef struct Transport Transport; /* one per executor process */
typedef struct TxStream TxStream;   /* sending end of one edge */
typedef struct RxStream RxStream;   /* receiving end of one edge */

typedef struct TransportConfig {
  const char *name;       /* this executor's host name, sent as `sf-peer` and used in log lines; may be NULL */
  const char *listen;     /* "host:port" to serve on ("127.0.0.1:0": any free port), NULL: client only */
  const char *token;      /* the job token, printable ASCII, required: every call carries it, calls
                             without the right one are refused with UNAUTHENTICATED and a log line
                             (the first of every 10 s; the others are summed up in one line at the
                             end of those 10 s, or when the transport stops) */
  size_t max_message;     /* largest message sent or accepted (bytes); 0: 4 MiB.  A larger incoming one
                             ends its call with an error; a larger outgoing one fails transport_send */
  int credits;            /* messages a receiver grants in advance; <= 0: 8 */
  int connect_timeout_ms; /* how long a sender keeps retrying a peer that is not up yet (until the peer
                             has accepted the edge); <= 0: 10000 */
  int accept_timeout_ms;  /* how long an accepted edge waits for its call to arrive, and how long an
                             arrived call waits for transport_accept of its edge; 0: twice
                             connect_timeout_ms; < 0: forever */
  int keepalive_ms;       /* HTTP/2 keepalive ping interval, so a dead or cut-off peer is noticed
                             (declared dead after one more interval without an answer); <= 0: 10000 */
  void (*log)(void *ctx, const char *line); /* where log lines go (no trailing newline); NULL: stderr */
  void *log_ctx;                            /* first argument of log */
  /* Mutual TLS (the default; see "Security" above): all three PEM texts, or plaintext = 1. */
  const char *tls_ca;     /* the job's CA certificate: the only one a peer's certificate may chain to */
  const char *tls_cert;   /* this executor's certificate, from that CA, naming `name` (CN and DNS SAN) */
  const char *tls_key;    /* its private key */
  int plaintext;          /* 1: no TLS, the token and the data travel in clear and peers are not
                             verified (loopback development only); the tls_* must then be NULL */
} TransportConfig;

/* Starts a transport: calls grpc_init (reference counted; transport_stop calls grpc_shutdown), starts the
 * transport's thread and, when cfg->listen is set, a server bound to it with SO_REUSEPORT off, so a
 * port already in use is an error rather than a silently shared port.  The configuration is copied.
 * Returns the transport, or NULL with a message in err (errlen bytes, may be 0) when the
 * configuration is invalid or the address cannot be bound (e.g. "transport: cannot listen on
 * 127.0.0.1:7000: address already in use").  gRPC's own log lines are dropped unless GRPC_VERBOSITY
 * or GRPC_TRACE is set: every failure is reported through err, the streams' errors or cfg->log.  Must not be called in a process that
 * will fork afterwards (gRPC does not survive fork). */
Transport *transport_start(const TransportConfig *cfg, char *err, size_t errlen);

/* The TCP port the server listens on (useful with port 0), or 0 for a client-only transport. */
int transport_port(const Transport *t);

/* Opens the sending end of edge `edge` (a printable-ASCII id, e.g. a stream name) to the peer
 * executor `peer_name` listening at `address` ("host:port"); with TLS, the peer's certificate must
 * name peer_name.  Does not block: connecting (retrying
 * while the peer starts, for up to connect_timeout_ms) proceeds in the background and its outcome
 * shows in transport_send / transport_close.  The strings are copied.  Returns NULL only for an
 * invalid argument (NULL or non-printable string) or once transport_stop has begun.  Each stream
 * has its own channel and TCP connection (so edges do not share HTTP/2 flow-control windows). */
TxStream *transport_open(Transport *t, const char *peer_name, const char *address, const char *edge);

/* Sends one message (len bytes at buf, copied; len may be 0).  Blocks while the peer has granted no
 * credit, which is the back-pressure (also before the peer has accepted the edge: the first grant
 * is the acceptance), and then queues the message; messages leave on the wire in order.
 * Returns 0, or -1 when the stream has failed: the peer could not be reached or did not accept the
 * edge within connect_timeout_ms, the call ended (peer died, refused, message too large for it),
 * len > max_message, or the transport is stopping; transport_tx_error() then says why, naming the
 * peer, the edge and the gRPC status.  Once it has returned -1 it always does. */
int transport_send(TxStream *s, const void *buf, size_t len);

/* Half-closes the stream once every queued message has been handed to gRPC, and waits for the
 * peer's final status, which the peer's transport sends when its application has read every
 * message and the end of stream and accepted the stream (transport_rx_confirm) or rejected it
 * (transport_rx_abort).  Returns 0 when the peer confirmed with OK, -1 otherwise (message via
 * transport_tx_error).  The stream stays valid for transport_tx_error until transport_stop;
 * send/close must not be called again. */
int transport_close(TxStream *s);

/* Why the stream failed, e.g. "cannot reach host 'h1' at 127.0.0.1:7001 after 5000 ms" (with TLS
 * followed by " (nothing listens there, or something without host 'h1''s certificate from this
 * job)": a peer that fails the TLS checks looks the same as none),
 * "host 'h1' at 127.0.0.1:7001 did not accept edge 'e' within 5000 ms" (up, but no accept),
 * "edge 'e' to host 'h1' at 127.0.0.1:7001 failed: UNAVAILABLE: Connection reset by peer" (the
 * peer died) or "... failed: UNAUTHENTICATED: missing or wrong job token"; "" if it has not.
 * Owned by the stream, valid until its next send/close or transport_stop. */
const char *transport_tx_error(const TxStream *s);

/* Registers interest in edge `edge` arriving from any peer; the call may arrive before (it waits up
 * to accept_timeout_ms) or after this.  Non-blocking.  A second call for the same edge is refused
 * with ALREADY_EXISTS.  Returns NULL for an invalid argument, an edge already accepted on this
 * transport (logged), a client-only transport, or once transport_stop has begun. */
RxStream *transport_accept(Transport *t, const char *edge);

/* Says that every edge this transport will accept has been accepted: from now on a call for any
 * other edge, and every call already waiting for one, is refused at once with NOT_FOUND (instead of
 * after accept_timeout_ms), and transport_accept returns NULL.  Non-blocking; NULL is a no-op. */
void transport_accept_done(Transport *t);

/* Blocks for the next message of the edge.  Returns 1 with *buf / *len set (a malloc'd copy, never
 * NULL even when *len is 0; the caller frees it with transport_free_message), 0 at the peer's clean
 * end of stream (and on every later call), or -1 on failure: the stream broke (peer died,
 * connection lost, message larger than max_message), the peer broke the protocol, no call arrived
 * within accept_timeout_ms, transport_rx_abort was called, or the transport is stopping; the
 * message is then available via transport_rx_error.  Messages not yet read when a stream fails are
 * dropped.  Each message read lets the sender send one more. */
int transport_recv(RxStream *s, void **buf, size_t *len);

/* The application read the stream to its clean end (transport_recv returned 0) and accepts it:
 * the sender hears OK (its transport_close returns 0).  Until the application confirms or aborts
 * (transport_rx_abort, e.g. when the stream ended too early for the layer above), the sender
 * waits; a transport stopped before either fails the sender with UNAVAILABLE.  Returns 0, or -1
 * when transport_recv has not returned 0 or the stream has failed.  Any thread; once. */
int transport_rx_confirm(RxStream *s);

/* The layer above found a message malformed, or the end of stream premature: ends the call with INVALID_ARGUMENT and `why` (which
 * the sender sees in its error), logs a line, drops unread messages; later transport_recv calls
 * return -1.  Safe from any thread, at any time, more than once (only the first counts). */
void transport_rx_abort(RxStream *s, const char *why);

/* Why the receiving stream failed, e.g. "edge 'e' from host 'h0' (ipv4:127.0.0.1:40412) failed: the
 * stream broke (sender gone, connection lost, or a message over max_message 4194304 bytes)" or
 * "no sender opened edge 'e' within 20000 ms"; "" if it has not.  Owned by the stream, valid until its next recv or transport_stop. */
const char *transport_rx_error(const RxStream *s);

/* Frees a message returned by transport_recv (NULL is fine). */
void transport_free_message(void *buf);

/* The first half of transport_stop: fails every stream ("transport stopped"), wakes every thread
 * blocked in this transport, ends every call and starts shutting the server down, then returns at
 * once.  Handles stay valid (errors can be read) until transport_stop.  Use it to abort while
 * other threads may be inside the transport: cancel, join those threads, then stop.  Any thread
 * but the log callback; NULL and repeated calls are no-ops. */
void transport_cancel(Transport *t);

/* Cancels every call still open (senders' peers see CANCELLED/UNAVAILABLE, a receiver's peers see
 * UNAVAILABLE "receiver stopped"), wakes every thread blocked in this transport (they return -1 with
 * "transport stopped"), shuts the server down, drains and destroys the completion queue, frees all
 * streams and releases gRPC.  Safe at any point (also after transport_cancel), from any thread but
 * the log callback, including while other threads are blocked in send/recv: it waits for them to
 * leave the transport, but they must not touch their handles afterwards (not even for the error
 * message; use transport_cancel first for that).  Call it once per transport; NULL is a no-op. */
void transport_stop(Transport *t);

#endif /* SF_TRANSPORT_H */
