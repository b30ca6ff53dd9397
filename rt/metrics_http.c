/* metrics_http.c: the HTTP side of --metrics, over libmicrohttpd (the only file that includes its
 * header). The listening socket is made here, so that an address in use or one that does not
 * resolve gets a clear message (libmicrohttpd's own bind says only that it failed); libmicrohttpd
 * then serves it with one internal thread: a request at a time, each answered from its route's
 * render callback. GET (and HEAD) of a route's path answers 200 with its content type; another
 * path 404, another method 405. */
#include "metrics_http.h"

#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

struct MetricsHttp {
  struct MHD_Daemon *daemon;
  const MetricsRoute *routes;
  int nroutes;
  void *ctx;
  int fd; /* the listening socket (closed here, after libmicrohttpd stopped) */
};

bool metrics_http_parse(const char *address, char *host, size_t cap, int *port) {
  const char *colon = strrchr(address, ':');
  if (!colon || colon == address || !colon[1]) return false;
  const char *h = address;
  size_t hlen = (size_t)(colon - address);
  if (address[0] == '[') { /* [v6]:PORT */
    if (hlen < 3 || address[hlen - 1] != ']') return false;
    h++;
    hlen -= 2;
  } else if (memchr(address, ':', hlen)) {
    return false; /* a v6 address needs its brackets: [::1]:9100 */
  }
  if (hlen == 0 || hlen >= cap || memchr(h, ']', hlen) || memchr(h, '[', hlen)) return false;
  char *end;
  errno = 0;
  long p = strtol(colon + 1, &end, 10);
  if (*end || errno || colon[1] == '+' || colon[1] == '-' || p < 1 || p > 65535) return false;
  memcpy(host, h, hlen);
  host[hlen] = 0;
  *port = (int)p;
  return true;
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, char *body, size_t len, bool owned,
                              const char *type) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
  if (!r) {
    if (owned) free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  enum MHD_Result rc = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls) {
  (void)version;
  (void)upload;
  MetricsHttp *m = cls;
  static char not_found[] = "not found\n";
  static char not_allowed[] = "only GET and HEAD are served\n";
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
    if (*upload_size) { /* a body: taken and dropped, then the answer */
      *upload_size = 0;
      return MHD_YES;
    }
    if (!*con_cls) { /* the first call comes before any body: answer once it is read */
      *con_cls = m;
      return MHD_YES;
    }
    return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, not_allowed, sizeof not_allowed - 1, false,
                  "text/plain; charset=utf-8");
  }
  const MetricsRoute *route = NULL;
  for (int i = 0; i < m->nroutes && !route; i++)
    if (!strcmp(url, m->routes[i].path)) route = &m->routes[i];
  if (!route) return answer(c, MHD_HTTP_NOT_FOUND, not_found, sizeof not_found - 1, false, "text/plain; charset=utf-8");
  size_t len = 0;
  char *body = route->render(m->ctx, &len);
  if (!body) {
    static char oom[] = "out of memory\n";
    return answer(c, MHD_HTTP_INTERNAL_SERVER_ERROR, oom, sizeof oom - 1, false, "text/plain; charset=utf-8");
  }
  return answer(c, MHD_HTTP_OK, body, len, true, route->type);
}

/* A listening socket at host:port (the first address the name resolves to that binds): its fd, or
 * -1 with a message in err; *v6 says whether it is IPv6. */
static int listen_at(const char *host, int port, bool *v6, char *err, size_t errlen) {
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                            .ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_ADDRCONFIG };
  struct addrinfo *res = NULL;
  int rc = getaddrinfo(host, service, &hints, &res);
  if (rc != 0) {
    snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(rc));
    return -1;
  }
  int fd = -1, why = 0;
  for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); /* a restart while old connections linger */
    if (a->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) < 0 || listen(fd, 16) < 0) {
      why = errno;
      close(fd);
      fd = -1;
      continue;
    }
    *v6 = a->ai_family == AF_INET6;
  }
  freeaddrinfo(res);
  if (fd < 0)
    snprintf(err, errlen, "%s", why == EADDRINUSE ? "the address is already in use" : strerror(why));
  return fd;
}

MetricsHttp *metrics_http_start(const char *address, const MetricsRoute *routes, int nroutes, void *ctx, char *err,
                                size_t errlen) {
  char host[256];
  int port;
  if (!metrics_http_parse(address, host, sizeof host, &port)) {
    snprintf(err, errlen, "not HOST:PORT");
    return NULL;
  }
  bool v6 = false;
  int fd = listen_at(host, port, &v6, err, errlen);
  if (fd < 0) return NULL;
  MetricsHttp *m = calloc(1, sizeof *m);
  if (!m) {
    close(fd);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  m->routes = routes;
  m->nroutes = nroutes;
  m->ctx = ctx;
  m->fd = fd;
  /* ITC: MHD_quiesce_daemon, at the stop, hands the socket back */
  unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC | (v6 ? MHD_USE_IPv6 : 0);
  m->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, m, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                               MHD_OPTION_CONNECTION_LIMIT, 32u, MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
  if (!m->daemon) {
    snprintf(err, errlen, "cannot start the HTTP server (libmicrohttpd)");
    close(fd);
    free(m);
    return NULL;
  }
  return m;
}

void metrics_http_stop(MetricsHttp *m) {
  if (!m) return;
  MHD_quiesce_daemon(m->daemon); /* no more connections; the listening socket is ours again */
  MHD_stop_daemon(m->daemon);    /* joins its thread once the answer in progress is sent */
  close(m->fd);
  free(m);
}
