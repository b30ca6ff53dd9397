/* remote.h: cross-host edges. The executor hands batches of items to remote_send on the producing
 * host; on the consuming host a receiver thread per edge decodes them and hands them back to the
 * executor through RemoteConfig.deliver. remote.c sits between the executor, the wire format
 * (wire.c, protobuf-c) and the transport (transport.c, gRPC); it includes neither library's
 * headers, and knows the executor only through the callbacks of RemoteConfig (the way
 * TransportConfig.log works), so it can be driven without one (tests/unit/test_remote.c). */
#ifndef SF_REMOTE_H
#define SF_REMOTE_H

#include "rt.h"
#include <stdatomic.h>
#include "wire.h"

typedef struct Remote Remote;
typedef struct RemoteTx RemoteTx;

/* What remote.c needs from its user: the configuration and two callbacks. */
typedef struct RemoteConfig {
  Graph *g;             /* the graph: its hosts' names and addresses (looked up again by remote_open) */
  const char *host;     /* this executor's host, one of g's (NULL: an internal error) */
  const ExecOptions *o; /* token, TLS material or plaintext, connect timeout, log */
  int batch;            /* items per message the senders of this job use (> 0): an incoming message
                           may hold twice that plus a little punctuation, and a larger one is
                           refused before it is unpacked */
  /* A receiver thread hands over the n items decoded from one message of `edge` (what
   * remote_accept was given), in order; the tuple references are the callee's, the array stays the
   * caller's. May block (that is the back-pressure). Returns 0, or -1 when the job is stopping
   * (the references released): the receiver then ends without a word. */
  int (*deliver)(void *ctx, void *edge, Item *items, int n);
  /* Records the job's failure; the message names this host and the edge. Called from receiver
   * threads and from the threads that call remote_send and remote_finish, holding none of
   * remote.c's or the transport's locks: it may call remote_abort. */
  void (*fail)(void *ctx, const char *message);
  void *ctx;            /* first argument of deliver and fail */
} RemoteConfig;

/* Starts the transport for cfg->host of cfg->g (listening on its address); cfg is copied, the
 * graph and options must outlive the Remote. NULL with a message in err. */
Remote *remote_start(const RemoteConfig *cfg, char *err, size_t errlen);
/* The TCP port this executor listens on (its address may say port 0). */
int remote_port(const Remote *r);
/* Expects edge `id` from host `peer`; its batches go to cfg->deliver(ctx, edge, ...). */
int remote_accept(Remote *r, const char *id, const char *peer, const Schema *schema, void *edge, char *err,
                  size_t errlen);
/* Opens the sending end of edge `id` towards host `peer`. NULL with a message in err. */
RemoteTx *remote_open(Remote *r, const char *id, const char *peer, const Schema *schema, char *err, size_t errlen);
/* ---- the control channel (checkpoints between hosts) ----
 *
 * Between the checkpoints' coordinator and every other executor, a pair of the transport's streams,
 * one each way, named "!ctl:FROM>TO" (no data edge can be: a stream's name is an identifier), with
 * the data's token, TLS, keepalive and credits. They carry wire.h's control messages: the
 * coordinator sends requests and completions, the others their "done" reports. A thread of the
 * Remote sends what remote_ctl_send queued, one thread per incoming control stream reads. A control
 * stream that breaks (its peer died, the connection was lost, it never came) fails the job, naming
 * the peer; a malformed message, or one the peer has no business sending, too. At the end
 * (remote_finish) each side half-closes its control streams, then cuts those from its peers: a
 * peer whose half-close came has finished (what fails with it afterwards is no loss), and an
 * executor that sees its coordinator go away without it knows it was lost. No side waits for the
 * other to finish. */

/* A control message that passed the wire's checks and the direction's (the coordinator hears only
 * WIRE_CKPT_DONE and WIRE_CKPT_SOURCES, the others only WIRE_CKPT_REQUEST and WIRE_CKPT_COMPLETE),
 * from host `from`, on a
 * control stream's thread. Returns 0, or -1 with why set when it breaks the protocol (the stream is
 * then aborted and the job fails naming the peer). */
typedef int (*RemoteCtlFn)(void *ctx, const char *from, const WireCtl *m, char *why, size_t cap);

/* Sets up the control streams, before remote_connect: on the coordinator (coordinator is this host)
 * a pair with every other host of hosts[0..nhosts-1], elsewhere a pair with the coordinator; fn
 * hears their messages. Once only. 0, or -1 with a message in err. */
int remote_control(Remote *r, const char *coordinator, const char *const *hosts, int nhosts, RemoteCtlFn fn,
                   void *ctx, char *err, size_t errlen);
/* Queues m for host `to`, NULL: every control peer (the coordinator's others, or an executor's
 * coordinator). Never blocks (the control thread sends it); any thread. */
void remote_ctl_send(Remote *r, const char *to, const WireCtl *m);

/* Starts the receivers and connects the senders (retrying until the deadline). 0 or -1 (failed). */
int remote_connect(Remote *r);
/* Encodes and sends n items; waits while the peer grants no credit. 0, or -1 after cfg->fail. */
int remote_send(RemoteTx *tx, const Item *items, int n);
/* Ends every outgoing stream and waits for every incoming one to end, the control streams last. 0
 * or -1. */
int remote_finish(Remote *r, bool ok);
/* Wakes everything blocked in the transport (the job is failing). Safe from any thread. */
void remote_abort(Remote *r);

/* What crossed one edge: messages and their bytes as encoded (wire.c), counted once per message
 * (never per tuple) by the edge's one sending or receiving thread; read with relaxed loads. */
typedef struct RemoteCounts {
  atomic_ullong messages;
  atomic_ullong bytes;
} RemoteCounts;
typedef void (*RemoteEdgeFn)(void *ctx, const char *edge, const char *peer, bool outgoing, const RemoteCounts *c);
/* Calls fn for every data edge of r (not the control streams): the outgoing ones (peer: the
 * consumer's host), then the incoming ones (peer: the producer's). Any thread, once remote_connect
 * was called and until remote_stop (the set of edges no longer changes). */
void remote_each_edge(Remote *r, RemoteEdgeFn fn, void *ctx);
void remote_stop(Remote *r);

#endif
