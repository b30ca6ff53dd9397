/* metrics_http.h: the HTTP server of --metrics. metrics_http.c is the only file that includes
 * libmicrohttpd's header, as transport.c is gRPC's and wire.c protobuf-c's; it knows nothing of the
 * executor: it serves what a render callback returns. */
#ifndef SF_METRICS_HTTP_H
#define SF_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct MetricsHttp MetricsHttp;

/* The body of one answer to GET: a malloc'd text of *len bytes (the server frees it), or NULL when
 * out of memory. Called on the server's thread, one call at a time. */
typedef char *(*MetricsRenderFn)(void *ctx, size_t *len);

/* What the server answers: each path (exact) with its content type and its render callback. */
typedef struct MetricsRoute {
  const char *path;
  const char *type;
  MetricsRenderFn render;
} MetricsRoute;

/* Splits "HOST:PORT" (HOST may be "[v6 address]") into host (cap bytes) and port: true when it is
 * well formed (a non-empty host, a port from 1 to 65535). No lookup happens. */
bool metrics_http_parse(const char *address, char *host, size_t cap, int *port);

/* Listens at address (metrics_http_parse's form; a host name is looked up) and serves GET of each
 * of the nroutes routes (kept: they must outlive the server) from its render(ctx), on a thread of
 * its own until metrics_http_stop; another path answers 404. NULL with a message in err (an address
 * in use, a name that does not resolve). */
MetricsHttp *metrics_http_start(const char *address, const MetricsRoute *routes, int nroutes, void *ctx, char *err,
                                size_t errlen);

/* Stops serving: waits for an answer in progress, closes the socket. NULL is fine. */
void metrics_http_stop(MetricsHttp *m);

#endif
