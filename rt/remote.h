/* remote.h: cross-host edges. The executor hands batches of items to remote_send on the producing
 * host; on the consuming host a receiver thread per edge decodes them and calls
 * exec_remote_deliver. remote.c sits between the executor, the wire format (wire.c, protobuf-c)
 * and the transport (transport.c, gRPC); it includes neither library's headers. */
#ifndef SF_REMOTE_H
#define SF_REMOTE_H

#include "rt.h"

typedef struct Remote Remote;
typedef struct RemoteTx RemoteTx;

/* Starts the transport for `host` of g (listening on its address). NULL with a message in err. */
Remote *remote_start(Exec *x, Graph *g, const char *host, const ExecOptions *o, char *err, size_t errlen);
/* Expects edge `id` from host `peer`; its batches go to exec_remote_deliver(x, edge, ...). */
int remote_accept(Remote *r, const char *id, const char *peer, const Schema *schema, void *edge, char *err,
                  size_t errlen);
/* Opens the sending end of edge `id` towards host `peer`. NULL with a message in err. */
RemoteTx *remote_open(Remote *r, const char *id, const char *peer, const Schema *schema, char *err, size_t errlen);
/* Starts the receivers and connects the senders (retrying until the deadline). 0 or -1 (failed). */
int remote_connect(Remote *r);
/* Encodes and sends n items; waits while the peer grants no credit. 0, or -1 after exec_fail. */
int remote_send(RemoteTx *tx, const Item *items, int n);
/* Ends every outgoing stream and waits for every incoming one to end. 0 or -1. */
int remote_finish(Remote *r, bool ok);
/* Wakes everything blocked in the transport (the job is failing). Safe from any thread. */
void remote_abort(Remote *r);
void remote_stop(Remote *r);

/* exec.c, for remote.c */
int exec_remote_deliver(Exec *x, void *edge, Item *items, int n);
void exec_fail_remote(Exec *x, const char *message);

#endif
