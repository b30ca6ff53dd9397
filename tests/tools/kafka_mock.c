/* kafka_mock.c: sf-kafka-mock, a Kafka cluster for the tests (tests/kafka.sh), a producer that
 * sets each record's partition and timestamp, which kcat cannot, and a transactional producer.
 *
 *   sf-kafka-mock [--brokers N] [--unknown NAME]... [--deny NAME]... [--record FILE]
 *                 TOPIC:PARTITIONS...
 *       starts librdkafka's mock cluster (rdkafka_mock.h: brokers speaking the Kafka protocol on
 *       loopback sockets, in this process) of N brokers (3), creates the topics, prints its
 *       bootstrap address (host:port,host:port,...) and a line end on standard output, and runs
 *       until standard input reaches its end or SIGTERM, SIGINT or SIGHUP comes. The cluster and
 *       its records live as long as the process. The mock speaks Metadata below version 4, where a
 *       client cannot ask a broker not to create a topic it names, and it creates every topic a
 *       request names; --unknown NAME makes its brokers answer UNKNOWN_TOPIC_OR_PART for NAME
 *       instead, as a real broker with auto.create.topics.enable=false does for a missing topic.
 *       --deny NAME makes them answer TOPIC_AUTHORIZATION_FAILED for NAME, as a broker whose ACLs
 *       do not let the client use it. Lines on standard input are commands: "down N" takes
 *       broker N (1 to the count) down (its connections closed, new ones refused), "up N" brings
 *       it back, "stall-endtxn N" makes the next N EndTxn requests fail with
 *       COORDINATOR_LOAD_IN_PROGRESS, which a producer retries (about every 100 ms), so that a
 *       commit hangs for a while (answers on stderr).
 *       Transactions: the mock itself keeps none (its EndTxn only answers OK, its Fetch responses
 *       list no aborted transaction and no control batch, a restarted producer gets a new
 *       producer id and its predecessor is not fenced), so this tool watches its sockets
 *       (kafka_mock_wire.c): read_committed consumers are told of every aborted transaction, and
 *       of every open one as if aborted (a real broker would hold them before it until it ends),
 *       and drop their records themselves; a producer whose transactional id was initialised
 *       again is fenced (its EndTxn answered PRODUCER_FENCED, its open transaction aborted).
 *       --record FILE writes each appended batch and each InitProducerId and EndTxn to FILE, a
 *       line per event (the format is in kafka_mock_wire.c; tests/kafka/committed_view.py reads
 *       it).
 *   sf-kafka-mock produce BROKERS TOPIC
 *       reads lines "PARTITION TIMESTAMP VALUE" from standard input (the value is the rest of the
 *       line after one blank, without its line end; TIMESTAMP in ms, -1: the producer's clock) and
 *       produces each as a record of TOPIC, in that partition, with that CreateTime timestamp and
 *       no key, in the order given (one partition's records keep their order: at most one request
 *       in flight); exits 0 once every record was acknowledged, 1 with a message otherwise.
 *   sf-kafka-mock txn BROKERS TOPIC TXNID
 *       a transactional producer (transactional.id TXNID: init_transactions, then a transaction
 *       begun) reading commands from standard input, a line each:
 *         rec PARTITION VALUE   a record of TOPIC in that partition (no key; the value is the
 *                               rest of the line after one blank), in the open transaction
 *         flush                 waits until every record so far is acknowledged; answers "flushed"
 *         commit                commits the open transaction and begins the next; "committed"
 *         abort                 aborts it and begins the next; "aborted"
 *         crash                 waits until every record is acknowledged, then exits 0 at once
 *                               (_exit) leaving the transaction open, as a SIGKILL would
 *       answering on standard output (flushed at once); "rec" answers nothing. At the end of the
 *       input the open transaction is aborted and it exits 0. A command that fails answers
 *       "error NAME" (librdkafka's error name; the message on stderr) and it exits 1 (a fenced
 *       producer: "error _FENCED").
 *
 * Exit status 2: a usage error. */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "kafka_mock_wire.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) {
  stop_signal = sig;
}

static int usage(void) {
  fprintf(stderr, "usage: sf-kafka-mock [--brokers N] [--unknown NAME]... [--deny NAME]... [--record FILE]\n"
                  "                     TOPIC:PARTITIONS...\n"
                  "       sf-kafka-mock produce BROKERS TOPIC   (stdin: PARTITION TIMESTAMP VALUE per line)\n"
                  "       sf-kafka-mock txn BROKERS TOPIC TXNID (stdin: rec PARTITION VALUE, flush, commit, abort, crash)\n");
  return 2;
}

/* A rd_kafka_t of `type` with the properties given as name, value pairs (NULL-ended), or NULL
 * after a message. */
static rd_kafka_t *client(rd_kafka_type_t type, const char *const *props) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  for (int i = 0; props && props[i]; i += 2)
    if (rd_kafka_conf_set(conf, props[i], props[i + 1], err, sizeof err) != RD_KAFKA_CONF_OK) {
      fprintf(stderr, "sf-kafka-mock: %s\n", err);
      rd_kafka_conf_destroy(conf);
      return NULL;
    }
  rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof err); /* takes conf when it succeeds */
  if (!rk) {
    fprintf(stderr, "sf-kafka-mock: %s\n", err);
    rd_kafka_conf_destroy(conf);
  }
  return rk;
}

enum { API_END_TXN = 26 }; /* the Kafka protocol's EndTxn */

/* A line of stdin: "down N" or "up N" takes broker N (1, 2, ...) down (its connections closed,
 * new ones refused) or up again; "stall-endtxn N" fails the next N EndTxn requests with a
 * retriable error. The answer ("sf-kafka-mock: broker N down") goes to stderr. */
static void command(rd_kafka_mock_cluster_t *mc, const char *line) {
  int id;
  char word[16];
  if (sscanf(line, "%15s %d", word, &id) != 2 ||
      (strcmp(word, "down") && strcmp(word, "up") && strcmp(word, "stall-endtxn")) || id < 0 || id > 100000) {
    fprintf(stderr, "sf-kafka-mock: unknown command '%s' (down N, up N, stall-endtxn N)\n", line);
    return;
  }
  if (!strcmp(word, "stall-endtxn")) {
    rd_kafka_resp_err_t *errs = calloc((size_t)id + 1, sizeof *errs);
    if (!errs) return;
    for (int i = 0; i < id; i++) errs[i] = RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS;
    rd_kafka_mock_push_request_errors_array(mc, API_END_TXN, (size_t)id, errs);
    free(errs);
    fprintf(stderr, "sf-kafka-mock: the next %d EndTxn requests fail\n", id);
    return;
  }
  rd_kafka_resp_err_t e = !strcmp(word, "down") ? rd_kafka_mock_broker_set_down(mc, id) : rd_kafka_mock_broker_set_up(mc, id);
  if (e)
    fprintf(stderr, "sf-kafka-mock: broker %d: %s\n", id, rd_kafka_err2str(e));
  else
    fprintf(stderr, "sf-kafka-mock: broker %d %s\n", id, word);
}

static int run_cluster(int argc, char **argv) {
  int brokers = 3, first = 1;
  const char *unknown[16], *deny[16];
  int nunknown = 0, ndeny = 0;
  const char *record = NULL;
  while (first + 1 < argc && argv[first][0] == '-') {
    if (!strcmp(argv[first], "--brokers")) {
      brokers = atoi(argv[first + 1]);
      if (brokers < 1 || brokers > 16) return usage();
    } else if (!strcmp(argv[first], "--unknown") && nunknown < 16) {
      unknown[nunknown++] = argv[first + 1];
    } else if (!strcmp(argv[first], "--deny") && ndeny < 16) {
      deny[ndeny++] = argv[first + 1];
    } else if (!strcmp(argv[first], "--record")) {
      record = argv[first + 1];
    } else {
      return usage();
    }
    first += 2;
  }
  if (first >= argc) return usage();
  if (wire_start(record) < 0) {
    fprintf(stderr, "sf-kafka-mock: cannot write '%s': %s\n", record, strerror(errno));
    return 1;
  }
  const char *props[] = { "client.id", "sf-kafka-mock", "log_level", "3", NULL };
  rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, props);
  if (!rk) return 1;
  rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, brokers);
  if (!mc) {
    fprintf(stderr, "sf-kafka-mock: cannot start a mock cluster of %d brokers\n", brokers);
    rd_kafka_destroy(rk);
    return 1;
  }
  for (int i = first; i < argc; i++) {
    char name[256];
    const char *colon = strrchr(argv[i], ':');
    char *end;
    long parts = colon ? strtol(colon + 1, &end, 10) : 0;
    if (!colon || colon == argv[i] || (size_t)(colon - argv[i]) >= sizeof name || !colon[1] || *end || parts < 1 ||
        parts > 1000) {
      fprintf(stderr, "sf-kafka-mock: '%s' is not TOPIC:PARTITIONS (1 to 1000 partitions)\n", argv[i]);
      rd_kafka_mock_cluster_destroy(mc);
      rd_kafka_destroy(rk);
      return 2;
    }
    memcpy(name, argv[i], (size_t)(colon - argv[i]));
    name[colon - argv[i]] = 0;
    int replicas = brokers < 3 ? brokers : 3;
    rd_kafka_resp_err_t e = rd_kafka_mock_topic_create(mc, name, (int)parts, replicas);
    if (e) {
      fprintf(stderr, "sf-kafka-mock: cannot create topic '%s': %s\n", name, rd_kafka_err2str(e));
      rd_kafka_mock_cluster_destroy(mc);
      rd_kafka_destroy(rk);
      return 1;
    }
  }
  for (int i = 0; i < nunknown; i++) rd_kafka_mock_topic_set_error(mc, unknown[i], RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  for (int i = 0; i < ndeny; i++) rd_kafka_mock_topic_set_error(mc, deny[i], RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  struct sigaction sa = { .sa_handler = on_signal };
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
  fflush(stdout);
  /* until stdin ends (its writer went) or a signal: poll wakes on either (EINTR); the lines read
   * meanwhile are commands */
  char line[256];
  size_t len = 0;
  while (!stop_signal) {
    struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
    int n = poll(&p, 1, 500);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    char b[512];
    ssize_t got = read(STDIN_FILENO, b, sizeof b);
    if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) break;
    for (ssize_t i = 0; i < got; i++) {
      if (b[i] != '\n') {
        if (len + 1 < sizeof line) line[len++] = b[i];
        continue;
      }
      line[len] = 0;
      len = 0;
      command(mc, line);
    }
  }
  rd_kafka_mock_cluster_destroy(mc);
  rd_kafka_destroy(rk);
  return 0;
}

static int delivery_failures;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  (void)opaque;
  if (m->err) {
    if (!delivery_failures++)
      fprintf(stderr, "sf-kafka-mock: produce to partition %" PRId32 " failed: %s\n", m->partition,
              rd_kafka_err2str(m->err));
  }
}

static int run_produce(const char *brokers, const char *topic) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  const char *props[] = { "bootstrap.servers", brokers, "max.in.flight.requests.per.connection", "1",
                          "linger.ms", "5", "enable.idempotence", "false", "log_level", "3", NULL };
  for (int i = 0; props[i]; i += 2)
    if (rd_kafka_conf_set(conf, props[i], props[i + 1], err, sizeof err) != RD_KAFKA_CONF_OK) {
      fprintf(stderr, "sf-kafka-mock: %s\n", err);
      return 1;
    }
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, "sf-kafka-mock: %s\n", err);
    return 1;
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  long long lineno = 0, produced = 0;
  int rc = 0;
  while (rc == 0 && (len = getline(&line, &cap, stdin)) >= 0) {
    lineno++;
    if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
    char *p = line, *end;
    long part = strtol(p, &end, 10);
    if (end == p || *end != ' ' || part < 0 || part > INT32_MAX) {
      fprintf(stderr, "sf-kafka-mock: stdin:%lld: expected PARTITION TIMESTAMP VALUE\n", lineno);
      rc = 1;
      break;
    }
    p = end + 1;
    long long ts = strtoll(p, &end, 10);
    if (end == p || (*end != ' ' && *end != 0)) {
      fprintf(stderr, "sf-kafka-mock: stdin:%lld: expected PARTITION TIMESTAMP VALUE\n", lineno);
      rc = 1;
      break;
    }
    const char *value = *end ? end + 1 : end;
    for (;;) {
      rd_kafka_resp_err_t e = rd_kafka_producev(
          rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION((int32_t)part),
          RD_KAFKA_V_VALUE((void *)value, strlen(value)), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_TIMESTAMP(ts < 0 ? 0 : (int64_t)ts), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(rk, 100);
        continue;
      }
      if (e) {
        fprintf(stderr, "sf-kafka-mock: stdin:%lld: cannot produce: %s\n", lineno, rd_kafka_err2str(e));
        rc = 1;
      }
      break;
    }
    produced++;
    rd_kafka_poll(rk, 0);
  }
  free(line);
  rd_kafka_resp_err_t e = rd_kafka_flush(rk, 30000);
  if (e && !rc) {
    fprintf(stderr, "sf-kafka-mock: %lld records not acknowledged in 30 s: %s\n", (long long)rd_kafka_outq_len(rk),
            rd_kafka_err2str(e));
    rc = 1;
  }
  if (delivery_failures && !rc) rc = 1;
  rd_kafka_destroy(rk);
  if (rc == 0) fprintf(stderr, "sf-kafka-mock: produced %lld records to '%s'\n", produced, topic);
  return rc;
}

/* A failed transactional call: its answer "error NAME" on stdout, the message on stderr. */
static int txn_failed(const char *what, rd_kafka_error_t *e) {
  printf("error %s\n", rd_kafka_error_name(e));
  fflush(stdout);
  fprintf(stderr, "sf-kafka-mock: %s: %s\n", what, rd_kafka_error_string(e));
  rd_kafka_error_destroy(e);
  return 1;
}

/* Waits until every record produced is acknowledged; 0, or 1 after the answer "error NAME". */
static int txn_flush(rd_kafka_t *rk) {
  rd_kafka_resp_err_t e = rd_kafka_flush(rk, 30000);
  if (!e) return 0;
  printf("error %s\n", rd_kafka_err2name(e));
  fflush(stdout);
  fprintf(stderr, "sf-kafka-mock: flush: %s\n", rd_kafka_err2str(e));
  return 1;
}

static int run_txn(const char *brokers, const char *topic, const char *txnid) {
  const char *props[] = { "bootstrap.servers", brokers, "transactional.id", txnid, "linger.ms", "5",
                          "log_level", "3", NULL };
  rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, props);
  if (!rk) return 1;
  /* no delivery callback: a record that fails makes its transaction's commit fail */
  rd_kafka_error_t *e = rd_kafka_init_transactions(rk, 30000);
  if (e || (e = rd_kafka_begin_transaction(rk))) {
    int rc = txn_failed("init_transactions", e);
    rd_kafka_destroy(rk);
    return rc;
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int rc = 0;
  while (rc == 0 && (len = getline(&line, &cap, stdin)) >= 0) {
    if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
    char *end;
    if (!strncmp(line, "rec ", 4)) {
      long part = strtol(line + 4, &end, 10);
      if (end == line + 4 || *end != ' ' || part < 0 || part > INT32_MAX) {
        fprintf(stderr, "sf-kafka-mock: expected 'rec PARTITION VALUE', got '%s'\n", line);
        rc = 1;
        break;
      }
      const char *value = end + 1;
      rd_kafka_resp_err_t pe;
      while ((pe = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION((int32_t)part),
                                     RD_KAFKA_V_VALUE((void *)value, strlen(value)),
                                     RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END)) ==
             RD_KAFKA_RESP_ERR__QUEUE_FULL)
        rd_kafka_poll(rk, 100);
      if (pe) {
        printf("error %s\n", rd_kafka_err2name(pe));
        fprintf(stderr, "sf-kafka-mock: cannot produce: %s\n", rd_kafka_err2str(pe));
        rc = 1;
      }
      rd_kafka_poll(rk, 0);
    } else if (!strcmp(line, "flush")) {
      if (!(rc = txn_flush(rk))) printf("flushed\n");
    } else if (!strcmp(line, "commit") || !strcmp(line, "abort")) {
      bool commit = line[0] == 'c';
      e = commit ? rd_kafka_commit_transaction(rk, 30000) : rd_kafka_abort_transaction(rk, 30000);
      if (e || (e = rd_kafka_begin_transaction(rk)))
        rc = txn_failed(commit ? "commit_transaction" : "abort_transaction", e);
      else
        printf(commit ? "committed\n" : "aborted\n");
    } else if (!strcmp(line, "crash")) {
      if (!(rc = txn_flush(rk))) {
        fflush(stdout);
        _exit(0);
      }
    } else {
      fprintf(stderr, "sf-kafka-mock: unknown command '%s' (rec PARTITION VALUE, flush, commit, abort, crash)\n", line);
      rc = 1;
    }
    fflush(stdout);
  }
  free(line);
  if (rc == 0 && (e = rd_kafka_abort_transaction(rk, 30000))) rc = txn_failed("abort_transaction", e);
  rd_kafka_destroy(rk);
  return rc;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "produce")) return argc == 4 ? run_produce(argv[2], argv[3]) : usage();
  if (argc > 1 && !strcmp(argv[1], "txn")) return argc == 5 ? run_txn(argv[2], argv[3], argv[4]) : usage();
  if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) return usage();
  return run_cluster(argc, argv);
}
