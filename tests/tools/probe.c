/* probe.c: sf-probe, a test client that plays the sending executor of one edge.
 *
 *     sf-probe [options] ADDRESS EDGE
 *
 * Opens the sending end of edge EDGE (an edge id as sf-exec names them, "STREAM>CONSUMER/SLOT",
 * or any other printable text) to the executor listening at ADDRESS ("host:port") with the
 * transport of rt/transport.h, carrying the token given with --token (default $SF_TOKEN), sends
 * the chosen bytes as --count messages, then half-closes and waits for the receiver's verdict.
 * The fault tests (tests/faults.sh) use it to knock on an executor with a wrong token, an unknown
 * edge, a malformed or an oversized message.
 *
 * It prints one line on standard output telling what happened, and exits with
 *   0  every message was sent and the receiver confirmed the end of stream (status OK),
 *   1  the stream failed: the line is "sf-probe: failed after N of M messages: REASON", REASON
 *      being the transport's message (naming the edge, the host and the gRPC status, e.g.
 *      "... failed: UNAUTHENTICATED: missing or wrong job token"),
 *   2  bad usage,
 *   3  the transport could not start.
 * Transport log lines go to standard error, prefixed "sf-probe: ".
 *
 * It only includes rt/transport.h: gRPC stays inside rt/transport*.c. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transport.h"

static const char usage_text[] =
    "usage: sf-probe [options] ADDRESS EDGE\n"
    "\n"
    "Plays the sending executor of edge EDGE towards the executor at ADDRESS (host:port):\n"
    "sends the chosen bytes, half-closes, and reports the receiver's verdict.\n"
    "\n"
    "options:\n"
    "  --token TEXT          the job token to present (default: $SF_TOKEN; \"\" sends an empty one)\n"
    "  --as NAME             the host name to claim (sf-peer metadata; default 'probe')\n"
    "  --peer-name NAME      the receiving host's name, used in messages (default 'target')\n"
    "  --connect-timeout MS  give up when the edge is not accepted within MS ms (default 5000)\n"
    "  --text TEXT           the message: these bytes\n"
    "  --hex HEX             the message: these bytes in hexadecimal (e.g. 08ffff0a)\n"
    "  --file PATH           the message: the contents of PATH\n"
    "  --size N[K|M]         the message: N bytes (KiB, MiB) of --fill (default 0xff)\n"
    "  --fill BYTE           the byte --size repeats, as a number (default 255)\n"
    "  --count N             send the message N times (default 1; 0 opens and closes only)\n"
    "  --hold-ms MS          wait MS ms after sending, before half-closing\n"
    "  --no-close            do not half-close: drop the stream after sending (and --hold-ms)\n"
    "  --insecure-plaintext  no TLS (else $SF_TLS_CA, $SF_TLS_CERT and $SF_TLS_KEY, as for sf-exec:\n"
    "                        the CA the receiver's certificate must chain to, and the identity shown)\n"
    "  -h, --help            show this help\n"
    "\n"
    "Without a message option the message is empty. Prints one line: 'sf-probe: ok: ...' or\n"
    "'sf-probe: failed after N of M messages: REASON'.\n"
    "exit status: 0 sent and confirmed, 1 the stream failed, 2 bad usage, 3 transport failed to start\n";

static _Noreturn void usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "sf-probe: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'sf-probe --help' for more information.\n");
  exit(2);
}

static long long num_arg(const char *text, long long min, long long max, const char *what) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 0);
  if (!errno && end != text) {
    if (*end == 'K' || *end == 'k') v *= 1024, end++;
    else if (*end == 'M' || *end == 'm') v *= 1024 * 1024, end++;
  }
  if (errno || end == text || *end || v < min || v > max) {
    fprintf(stderr, "sf-probe: %s must be a number from %lld to %lld, got '%s'\n", what, min, max, text);
    exit(2);
  }
  return v;
}

static int hex_digit(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static unsigned char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "sf-probe: error: cannot open '%s': %s\n", path, strerror(errno));
    exit(2);
  }
  size_t cap = 65536, n = 0;
  unsigned char *p = malloc(cap);
  for (;;) {
    if (!p) {
      fprintf(stderr, "sf-probe: error: out of memory\n");
      exit(3);
    }
    n += fread(p + n, 1, cap - n, f);
    if (n < cap) break;
    cap *= 2;
    p = realloc(p, cap);
  }
  fclose(f);
  *len = n;
  return p;
}

static void log_line(void *ctx, const char *line) {
  (void)ctx;
  fprintf(stderr, "sf-probe: %s\n", line);
  fflush(stderr);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

int main(int argc, char **argv) {
  static const struct option longs[] = {
    {"token", required_argument, 0, 't'},  {"as", required_argument, 0, 'a'},
    {"peer-name", required_argument, 0, 'p'}, {"connect-timeout", required_argument, 0, 'C'},
    {"text", required_argument, 0, 'x'},   {"hex", required_argument, 0, 'X'},
    {"file", required_argument, 0, 'f'},   {"size", required_argument, 0, 's'},
    {"fill", required_argument, 0, 'F'},   {"count", required_argument, 0, 'n'},
    {"hold-ms", required_argument, 0, 'H'}, {"no-close", no_argument, 0, 'N'},
    {"insecure-plaintext", no_argument, 0, 'P'},
    {"help", no_argument, 0, 'h'},         {0, 0, 0, 0},
  };
  const char *token = getenv("SF_TOKEN");
  const char *as = "probe", *peer_name = "target";
  int connect_ms = 5000, fill = 0xff;
  long long count = 1, hold_ms = 0, size = -1;
  bool close_stream = true, plaintext = false;
  unsigned char *msg = NULL;
  size_t msg_len = 0;
  int sources = 0;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
    switch (c) {
    case 't': token = optarg; break;
    case 'a': as = optarg; break;
    case 'p': peer_name = optarg; break;
    case 'C': connect_ms = (int)num_arg(optarg, 1, 3600000, "--connect-timeout"); break;
    case 'x':
      msg_len = strlen(optarg);
      msg = (unsigned char *)strdup(optarg);
      sources++;
      break;
    case 'X': {
      size_t n = strlen(optarg);
      if (n % 2) usage_error("--hex needs an even number of hex digits, got '%s'", optarg);
      msg = malloc(n / 2 + 1);
      for (size_t i = 0; i < n; i += 2) {
        int hi = hex_digit(optarg[i]), lo = hex_digit(optarg[i + 1]);
        if (hi < 0 || lo < 0) usage_error("--hex takes hex digits only, got '%s'", optarg);
        msg[i / 2] = (unsigned char)(hi * 16 + lo);
      }
      msg_len = n / 2;
      sources++;
      break;
    }
    case 'f': msg = read_file(optarg, &msg_len); sources++; break;
    case 's': size = num_arg(optarg, 0, (long long)1 << 31, "--size"); sources++; break;
    case 'F': fill = (int)num_arg(optarg, 0, 255, "--fill"); break;
    case 'n': count = num_arg(optarg, 0, 1000000, "--count"); break;
    case 'H': hold_ms = num_arg(optarg, 0, 3600000, "--hold-ms"); break;
    case 'N': close_stream = false; break;
    case 'P': plaintext = true; break;
    case 'h': fputs(usage_text, stdout); return 0;
    case ':': usage_error("option '%s' needs an argument", argv[optind - 1]);
    default: usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (argc - optind != 2) usage_error("%s", "expected ADDRESS and EDGE");
  if (sources > 1) usage_error("%s", "give at most one of --text, --hex, --file, --size");
  if (!token) usage_error("%s", "no token: pass --token or set SF_TOKEN");
  const char *address = argv[optind], *edge = argv[optind + 1];
  if (size >= 0) {
    msg_len = (size_t)size;
    msg = malloc(msg_len ? msg_len : 1);
    if (!msg) {
      fprintf(stderr, "sf-probe: error: out of memory\n");
      return 3;
    }
    memset(msg, fill, msg_len);
  }

  /* The probe's own limit is above its message, so the receiver is the one to judge the size. */
  TransportConfig cfg = {
    .name = as,
    .listen = NULL,
    .token = token,
    .max_message = msg_len + 1024 > ((size_t)64 << 20) ? msg_len + 1024 : ((size_t)64 << 20),
    .credits = 8,
    .connect_timeout_ms = connect_ms,
    .log = log_line,
    .tls_ca = plaintext ? NULL : getenv("SF_TLS_CA"),
    .tls_cert = plaintext ? NULL : getenv("SF_TLS_CERT"),
    .tls_key = plaintext ? NULL : getenv("SF_TLS_KEY"),
    .plaintext = plaintext,
  };
  char err[600];
  Transport *t = transport_start(&cfg, err, sizeof err);
  if (!t) {
    fprintf(stdout, "sf-probe: error: cannot start the transport: %s\n", err);
    return 3;
  }
  TxStream *s = transport_open(t, peer_name, address, edge);
  if (!s) {
    fprintf(stdout, "sf-probe: error: cannot open edge '%s' to %s (bad argument)\n", edge, address);
    transport_stop(t);
    return 2;
  }
  long long sent = 0;
  int rc = 0;
  for (; sent < count; sent++)
    if (transport_send(s, msg ? msg : (const unsigned char *)"", msg_len) < 0) {
      rc = -1;
      break;
    }
  if (hold_ms > 0) sleep_ms((long)hold_ms);
  if (rc == 0 && close_stream) rc = transport_close(s);
  char why[1024];
  snprintf(why, sizeof why, "%s", transport_tx_error(s));
  if (rc == 0 && !close_stream) {
    /* dropping the stream: transport_stop cancels the call */
    printf("sf-probe: ok: sent %lld message(s) of %zu bytes on edge '%s' to %s, then dropped the stream\n", sent,
           msg_len, edge, address);
  } else if (rc == 0) {
    printf("sf-probe: ok: sent %lld message(s) of %zu bytes on edge '%s' to %s; the receiver confirmed the end\n",
           sent, msg_len, edge, address);
  } else {
    printf("sf-probe: failed after %lld of %lld messages: %s\n", sent, count, why[0] ? why : "(no reason given)");
  }
  fflush(stdout);
  transport_stop(t);
  free(msg);
  return rc == 0 ? 0 : 1;
}
