/* transport_bench.c: throughput of one transport stream over loopback.
 *
 *   transport_bench SIZE COUNT [CREDITS]
 *
 * Forks a receiver process (listens on 127.0.0.1, any free port, accepts edge "bench", reads until
 * the end) and a sender process (streams COUNT messages of SIZE bytes, then closes), each with its
 * own Transport; the parent never touches gRPC.  Prints, per side, the wall time from the first
 * message to the end, messages/s, MB/s (10^6 bytes) and CPU time per message. */
#include "transport.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         (double)ru.ru_stime.tv_usec / 1e6;
}

static void report(const char *side, long count, size_t size, double secs, double cpu) {
  printf("%-8s %ld messages of %zu bytes in %.3f s: %.0f messages/s, %.1f MB/s, %.2f us CPU per message\n", side,
         count, size, secs, (double)count / secs, (double)count * (double)size / secs / 1e6, cpu / (double)count * 1e6);
  fflush(stdout);
}

static TransportConfig config(const char *name, size_t size, int credits) {
  TransportConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.name = name;
  cfg.token = "bench-token";
  cfg.plaintext = 1;
  cfg.max_message = size > 4096 ? size : 4096;
  cfg.credits = credits;
  cfg.connect_timeout_ms = 10000;
  return cfg;
}

static int receiver(int port_fd, size_t size, long count, int credits) {
  TransportConfig cfg = config("rx", size, credits);
  cfg.listen = "127.0.0.1:0";
  char err[256];
  Transport *t = transport_start(&cfg, err, sizeof err);
  if (!t) {
    fprintf(stderr, "receiver: %s\n", err);
    return 1;
  }
  RxStream *rx = transport_accept(t, "bench");
  int port = transport_port(t);
  if (write(port_fd, &port, sizeof port) != sizeof port) return 1;
  close(port_fd);
  long got = 0;
  double t0 = 0, c0 = 0;
  int rc;
  for (;;) {
    void *buf;
    size_t len;
    rc = transport_recv(rx, &buf, &len);
    if (rc != 1) break;
    if (got == 0) {
      t0 = now_s();
      c0 = cpu_s();
    }
    if (len != size) {
      fprintf(stderr, "receiver: message %ld has %zu bytes, not %zu\n", got, len, size);
      rc = -1;
      transport_free_message(buf);
      break;
    }
    got++;
    transport_free_message(buf);
  }
  double secs = now_s() - t0, cpu = cpu_s() - c0;
  if (rc == 0) transport_rx_confirm(rx); /* the sender's close returns */
  if (rc != 0 || got != count) {
    fprintf(stderr, "receiver: got %ld of %ld messages: %s\n", got, count, transport_rx_error(rx));
    transport_stop(t);
    return 1;
  }
  report("receiver", got, size, secs, cpu);
  transport_stop(t);
  return 0;
}

static int sender(int port, size_t size, long count, int credits) {
  TransportConfig cfg = config("tx", size, credits);
  char err[256], addr[64];
  Transport *t = transport_start(&cfg, err, sizeof err);
  if (!t) {
    fprintf(stderr, "sender: %s\n", err);
    return 1;
  }
  snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
  TxStream *tx = transport_open(t, "rx", addr, "bench");
  unsigned char *msg = malloc(size ? size : 1);
  for (size_t i = 0; i < size; i++) msg[i] = (unsigned char)(i * 31 + 7);
  /* the first message waits for the connection; time from its acceptance */
  if (transport_send(tx, msg, size) != 0) {
    fprintf(stderr, "sender: %s\n", transport_tx_error(tx));
    free(msg);
    transport_stop(t);
    return 1;
  }
  double t0 = now_s(), c0 = cpu_s();
  for (long i = 1; i < count; i++)
    if (transport_send(tx, msg, size) != 0) {
      fprintf(stderr, "sender: message %ld: %s\n", i, transport_tx_error(tx));
      free(msg);
      transport_stop(t);
      return 1;
    }
  int rc = transport_close(tx);
  double secs = now_s() - t0, cpu = cpu_s() - c0;
  free(msg);
  if (rc != 0) {
    fprintf(stderr, "sender: close: %s\n", transport_tx_error(tx));
    transport_stop(t);
    return 1;
  }
  report("sender", count - 1, size, secs, cpu);
  transport_stop(t);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: %s SIZE COUNT [CREDITS]\n", argv[0]);
    return 2;
  }
  size_t size = strtoul(argv[1], NULL, 10);
  long count = strtol(argv[2], NULL, 10);
  int credits = argc > 3 ? atoi(argv[3]) : 8;
  if (count < 2 || credits < 1) {
    fprintf(stderr, "%s: COUNT must be at least 2, CREDITS at least 1\n", argv[0]);
    return 2;
  }
  int p[2];
  if (pipe(p) != 0) return 1;
  pid_t r = fork();
  if (r == 0) {
    close(p[0]);
    _exit(receiver(p[1], size, count, credits));
  }
  close(p[1]);
  int port = 0;
  if (read(p[0], &port, sizeof port) != sizeof port) {
    fprintf(stderr, "%s: the receiver did not start\n", argv[0]);
    waitpid(r, NULL, 0);
    return 1;
  }
  pid_t s = fork();
  if (s == 0) _exit(sender(port, size, count, credits));
  int rs = 0, ss = 0;
  waitpid(s, &ss, 0);
  waitpid(r, &rs, 0);
  int ok = WIFEXITED(rs) && WEXITSTATUS(rs) == 0 && WIFEXITED(ss) && WEXITSTATUS(ss) == 0;
  return ok ? 0 : 1;
}
