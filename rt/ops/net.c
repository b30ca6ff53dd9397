/* net.c: TCP addresses and sockets (net.h). */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Splits addr into host and port (brackets of an IPv6 host dropped). 0, or -1 when it is not
 * host:port. */
static int split(const char *addr, char *host, size_t hcap, char *port, size_t pcap) {
  const char *colon = strrchr(addr, ':');
  if (!colon || colon == addr || !colon[1]) return -1;
  const char *h = addr, *hend = colon;
  if (*h == '[' && hend[-1] == ']') {
    h++;
    hend--;
  }
  if ((size_t)(hend - h) >= hcap || strlen(colon + 1) >= pcap || hend == h) return -1;
  snprintf(host, hcap, "%.*s", (int)(hend - h), h);
  snprintf(port, pcap, "%s", colon + 1);
  return 0;
}

/* The addresses of addr for a stream socket, or NULL with err set. */
static struct addrinfo *resolve(const char *addr, bool passive, const char *what, char *err, size_t cap) {
  char host[256], port[32];
  if (split(addr, host, sizeof host, port, sizeof port) < 0) {
    snprintf(err, cap, "cannot %s '%s': not host:port", what, addr);
    errno = EINVAL;
    return NULL;
  }
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                            .ai_flags = passive ? AI_PASSIVE : 0 };
  struct addrinfo *res = NULL;
  int rc = getaddrinfo(host, port, &hints, &res);
  if (rc != 0) {
    snprintf(err, cap, "cannot %s '%s': %s", what, addr, gai_strerror(rc));
    errno = EINVAL;
    return NULL;
  }
  return res;
}

int net_listen(const char *addr, char *err, size_t cap) {
  struct addrinfo *res = resolve(addr, true, "listen on", err, cap);
  if (!res) return -1;
  int fd = -1, e = 0;
  for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      e = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 1) < 0) {
      e = errno;
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) snprintf(err, cap, "cannot listen on '%s': %s", addr, strerror(e));
  return fd;
}

int net_connect(const char *addr, int ms, char *err, size_t cap) {
  struct addrinfo *res = resolve(addr, false, "connect to", err, cap);
  if (!res) return -1;
  int fd = -1, e = ECONNREFUSED;
  for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      e = errno;
      continue;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
      e = errno;
    } else {
      struct pollfd p = { .fd = fd, .events = POLLOUT };
      int n = poll(&p, 1, ms);
      socklen_t len = sizeof e;
      if (n == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 && e == 0) break;
      if (n == 0) e = ETIMEDOUT;
    }
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd < 0) {
    snprintf(err, cap, "cannot connect to '%s': %s", addr, strerror(e));
    errno = e;
  }
  return fd;
}
