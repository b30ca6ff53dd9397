/* sf-tcp: a loopback TCP peer for the live-stream tests (tests/live.sh).
 *   sf-tcp listen PORT   accepts one connection on 127.0.0.1:PORT and copies what it receives to
 *                        standard output until the peer closes (prints "listening" on stderr first)
 *   sf-tcp serve PORT    accepts one connection on 127.0.0.1:PORT, sends it standard input, closes
 *   sf-tcp send ADDR     connects to ADDR (host:port; tries for 10 s), sends standard input, closes
 * Exit status 0, or 1 with a message on stderr. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *what) {
  fprintf(stderr, "sf-tcp: %s: %s\n", what, strerror(errno));
  return 1;
}

/* Copies everything from `from` to `to`. 0, or -1 with errno. */
static int copy(int from, int to) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) return 0;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = write(to, buf + done, (size_t)(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return -1;
      done += w;
    }
  }
}

static int accept_one(int port) {
  int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  if (l < 0) return -1;
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 1) < 0) return -1;
  fprintf(stderr, "listening\n");
  int c = accept(l, NULL, NULL);
  close(l);
  return c;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: sf-tcp listen PORT | serve PORT | send HOST:PORT\n");
    return 2;
  }
  if (!strcmp(argv[1], "listen") || !strcmp(argv[1], "serve")) {
    int c = accept_one(atoi(argv[2]));
    if (c < 0) return fail("accept");
    int rc = !strcmp(argv[1], "listen") ? copy(c, 1) : copy(0, c);
    if (rc < 0) return fail("copy");
    close(c);
    return 0;
  }
  if (!strcmp(argv[1], "send")) {
    char host[256];
    const char *colon = strrchr(argv[2], ':');
    if (!colon || (size_t)(colon - argv[2]) >= sizeof host) return 2;
    snprintf(host, sizeof host, "%.*s", (int)(colon - argv[2]), argv[2]);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1)) };
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) return 2;
    for (int tries = 0;; tries++) {
      int c = socket(AF_INET, SOCK_STREAM, 0);
      if (c < 0) return fail("socket");
      if (connect(c, (struct sockaddr *)&a, sizeof a) == 0) {
        if (copy(0, c) < 0) return fail("copy");
        shutdown(c, SHUT_WR);
        char drain[256];
        while (read(c, drain, sizeof drain) > 0) continue; /* until the peer closes */
        close(c);
        return 0;
      }
      close(c);
      if (tries >= 100) return fail("connect");
      nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
    }
  }
  fprintf(stderr, "usage: sf-tcp listen PORT | serve PORT | send HOST:PORT\n");
  return 2;
}
