/* net.h: TCP addresses and sockets for SocketSource and SocketSink (plain sockets; the executors'
 * own traffic between hosts is gRPC's, in rt/transport*.c). An address is `host:port` as in the
 * graph: a name or an IPv4 address, or an IPv6 address in brackets (`[::1]:9000`). Every
 * descriptor returned is non-blocking and close-on-exec. */
#ifndef SF_NET_H
#define SF_NET_H

#include <stdbool.h>
#include <stddef.h>

/* A socket listening on addr (SO_REUSEADDR), or -1 with what failed in err ("cannot listen on
 * '127.0.0.1:9000': Address already in use"). */
int net_listen(const char *addr, char *err, size_t cap);
/* One attempt to connect to addr, waiting at most ms for the connection. The socket, or -1 with
 * what failed in err and errno set (ECONNREFUSED, ETIMEDOUT, ... : the caller may try again). */
int net_connect(const char *addr, int ms, char *err, size_t cap);

#endif
