/* kafka.c: the one file that includes librdkafka (kafka.h). A KafkaReader is librdkafka's simple
 * consumer (rd_kafka_consume_start and friends: each partition read on its own, from an offset the
 * caller chooses), which needs no consumer group and commits nothing to the brokers. An offset out
 * of the partition's range is an error (auto.offset.reset = error), and the end of a partition is
 * reported (enable.partition.eof), so that a reader reading up to a high watermark knows it got
 * there even when the last offsets hold no record (transaction markers). A broker lost is tried
 * again at most every second (reconnect.backoff.max.ms, as Java clients). Readers read committed
 * records only (isolation.level = read_committed: no record of an aborted or open transaction). A
 * KafkaWriter is an idempotent producer (enable.idempotence: acks from every in-sync replica, the
 * order of a partition kept across retries) with Java's partitioner (murmur2_random), and with a
 * transactional id a transactional one (rd_kafka_init_transactions and friends). */
#include "kafka.h"

#include <librdkafka/rdkafka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct KafkaReader {
  rd_kafka_t *rk;
  rd_kafka_topic_t *rkt;
  char *brokers;   /* for messages */
  char *topic;
  int32_t *parts;  /* the topic's partitions, sorted */
  bool *started;   /* per entry of parts: rd_kafka_consume_start was called */
  int nparts;
  KafkaLogFn *log;
  void *log_ctx;
};

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
  KafkaReader *k = rd_kafka_opaque(rk);
  if (k && k->log && level <= 4) k->log(k->log_ctx, level, fac, buf);
}

static int set(rd_kafka_conf_t *conf, const char *name, const char *value, char *err, size_t cap) {
  char why[256];
  if (rd_kafka_conf_set(conf, name, value, why, sizeof why) == RD_KAFKA_CONF_OK) return 0;
  snprintf(err, cap, "librdkafka refuses %s=%s: %s", name, value, why);
  return -1;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

enum { ABORT_MS = 5000 }; /* how long a closing writer waits for the abort of its open transaction */
/* A transaction may stay open this long (15 minutes, a broker's default transaction.max.timeout.ms)
 * before the brokers abort it: a checkpoint interval, or a whole job without checkpoints. */
#define TXN_TIMEOUT_MS "900000"

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The topic's metadata into k->parts, asking until timeout_ms passed while the cluster has no
 * answer yet (no broker reached, or a leader not yet elected). */
static int read_metadata(KafkaReader *k, int timeout_ms, char *err, size_t cap) {
  int64_t until = now_ms() + timeout_ms;
  for (;;) {
    int64_t left = until - now_ms();
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(k->rk, 0, k->rkt, &md, left > 0 ? (int)left : 1);
    if (e == RD_KAFKA_RESP_ERR__TIMED_OUT || e == RD_KAFKA_RESP_ERR__TRANSPORT ||
        e == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) {
      if (now_ms() < until) continue;
      snprintf(err, cap, "cannot reach any Kafka broker of '%s' within %d ms (--connect-timeout)", k->brokers,
               timeout_ms);
      return -1;
    }
    if (e) {
      snprintf(err, cap, "cannot read the metadata of topic '%s' from '%s': %s", k->topic, k->brokers,
               rd_kafka_err2str(e));
      return -1;
    }
    const struct rd_kafka_metadata_topic *t = md->topic_cnt == 1 ? &md->topics[0] : NULL;
    rd_kafka_resp_err_t te = t ? t->err : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
    if (te == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE && now_ms() < until) {
      rd_kafka_metadata_destroy(md);
      continue;
    }
    if (te == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
      snprintf(err, cap, "topic '%s' does not exist on the Kafka brokers '%s'", k->topic, k->brokers);
      rd_kafka_metadata_destroy(md);
      return -1;
    }
    if (te == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED) {
      snprintf(err, cap, "the Kafka brokers '%s' do not authorize this client for topic '%s' (an ACL or the "
                         "client's credentials)", k->brokers, k->topic);
      rd_kafka_metadata_destroy(md);
      return -1;
    }
    if (te) {
      snprintf(err, cap, "topic '%s' on '%s': %s", k->topic, k->brokers, rd_kafka_err2str(te));
      rd_kafka_metadata_destroy(md);
      return -1;
    }
    k->nparts = t->partition_cnt;
    k->parts = calloc((size_t)k->nparts + 1, sizeof *k->parts);
    k->started = calloc((size_t)k->nparts + 1, sizeof *k->started);
    if (!k->parts || !k->started) {
      rd_kafka_metadata_destroy(md);
      snprintf(err, cap, "out of memory");
      return -1;
    }
    for (int i = 0; i < k->nparts; i++) k->parts[i] = t->partitions[i].id;
    qsort(k->parts, (size_t)k->nparts, sizeof *k->parts, cmp_i32);
    rd_kafka_metadata_destroy(md);
    return 0;
  }
}

/* What every client of ours sets: the brokers, its name, librdkafka's log from warnings on, and a
 * lost broker tried again every second at most (10 s by default; Java's 1 s). NULL after err. */
static rd_kafka_conf_t *base_conf(const char *brokers, char *err, size_t cap) {
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  if (set(conf, "bootstrap.servers", brokers, err, cap) < 0 || set(conf, "client.id", "sf-exec", err, cap) < 0 ||
      set(conf, "log_level", "4", err, cap) < 0 || set(conf, "reconnect.backoff.max.ms", "1000", err, cap) < 0) {
    rd_kafka_conf_destroy(conf);
    return NULL;
  }
  return conf;
}

/* The client of conf (rd_kafka_new owns conf once it succeeds; destroyed here when it fails) and
 * its handle of topic. 0, or -1 after err (what was made is the caller's to destroy). */
static int start_client(rd_kafka_type_t type, rd_kafka_conf_t *conf, const char *brokers, const char *topic,
                        rd_kafka_t **rk, rd_kafka_topic_t **rkt, char *err, size_t cap) {
  char why[512];
  *rk = rd_kafka_new(type, conf, why, sizeof why);
  if (!*rk) {
    rd_kafka_conf_destroy(conf);
    snprintf(err, cap, "cannot start a Kafka %s for '%s': %s", type == RD_KAFKA_PRODUCER ? "producer" : "client",
             brokers, why);
    return -1;
  }
  *rkt = rd_kafka_topic_new(*rk, topic, NULL);
  if (!*rkt) {
    snprintf(err, cap, "cannot use topic '%s': %s", topic, rd_kafka_err2str(rd_kafka_last_error()));
    return -1;
  }
  return 0;
}

KafkaReader *kafka_open(const char *brokers, const char *topic, int timeout_ms, KafkaLogFn *log, void *log_ctx,
                        char *err, size_t cap) {
  KafkaReader *k = calloc(1, sizeof *k);
  if (!k) {
    snprintf(err, cap, "out of memory");
    return NULL;
  }
  k->log = log;
  k->log_ctx = log_ctx;
  k->brokers = strdup(brokers);
  k->topic = strdup(topic);
  rd_kafka_conf_t *conf = base_conf(brokers, err, cap);
  if (!conf || set(conf, "enable.partition.eof", "true", err, cap) < 0 ||
      set(conf, "allow.auto.create.topics", "false", err, cap) < 0 ||
      set(conf, "isolation.level", "read_committed", err, cap) < 0 ||
      set(conf, "auto.offset.reset", "error", err, cap) < 0) {
    if (conf) rd_kafka_conf_destroy(conf);
    kafka_close(k);
    return NULL;
  }
  rd_kafka_conf_set_opaque(conf, k);
  rd_kafka_conf_set_log_cb(conf, on_log);
  if (start_client(RD_KAFKA_CONSUMER, conf, brokers, topic, &k->rk, &k->rkt, err, cap) < 0) {
    kafka_close(k);
    return NULL;
  }
  if (read_metadata(k, timeout_ms, err, cap) < 0) {
    kafka_close(k);
    return NULL;
  }
  return k;
}

int kafka_npartitions(const KafkaReader *k) {
  return k->nparts;
}

int32_t kafka_partition(const KafkaReader *k, int i) {
  return k->parts[i];
}

int kafka_watermarks(KafkaReader *k, int32_t partition, int64_t *lo, int64_t *hi, int timeout_ms, char *err,
                     size_t cap) {
  rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(k->rk, k->topic, partition, lo, hi, timeout_ms);
  if (!e) return 0;
  snprintf(err, cap, "cannot read the offsets of topic '%s' partition %d from '%s': %s", k->topic, (int)partition,
           k->brokers, rd_kafka_err2str(e));
  return -1;
}

static int index_of(const KafkaReader *k, int32_t partition) {
  for (int i = 0; i < k->nparts; i++)
    if (k->parts[i] == partition) return i;
  return -1;
}

int kafka_start(KafkaReader *k, int32_t partition, int64_t offset, char *err, size_t cap) {
  int i = index_of(k, partition);
  if (i < 0) {
    snprintf(err, cap, "topic '%s' has no partition %d", k->topic, (int)partition);
    return -1;
  }
  if (rd_kafka_consume_start(k->rkt, partition, offset) < 0) {
    snprintf(err, cap, "cannot read topic '%s' partition %d from offset %lld: %s", k->topic, (int)partition,
             (long long)offset, rd_kafka_err2str(rd_kafka_last_error()));
    return -1;
  }
  k->started[i] = true;
  return 0;
}

/* A message of kafka_fetch: 1 a record (into *r), 0 an end of partition (*end_offset) or nothing,
 * -1 an error (err; the message destroyed). */
static int take(KafkaReader *k, rd_kafka_message_t *m, KafkaRecord *r, int64_t *end_offset, char *err, size_t cap) {
  if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
    *end_offset = m->offset;
    rd_kafka_message_destroy(m);
    return 0;
  }
  if (m->err) {
    if (m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET || m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE)
      snprintf(err, cap, "topic '%s' partition %d: offset %lld is out of the range the partition holds (%s)",
               k->topic, (int)m->partition, (long long)m->offset, rd_kafka_message_errstr(m));
    else
      snprintf(err, cap, "topic '%s' partition %d: %s", k->topic, (int)m->partition, rd_kafka_message_errstr(m));
    rd_kafka_message_destroy(m);
    return -1;
  }
  rd_kafka_timestamp_type_t tt;
  r->partition = m->partition;
  r->offset = m->offset;
  r->timestamp = rd_kafka_message_timestamp(m, &tt);
  r->value = m->payload;
  r->len = m->len;
  r->msg = m;
  return 1;
}

int kafka_fetch(KafkaReader *k, int32_t partition, int timeout_ms, KafkaRecord *recs, int n, int64_t *end_offset,
                char *err, size_t cap) {
  *end_offset = -1;
  rd_kafka_message_t *ms[256];
  if (n > (int)(sizeof ms / sizeof ms[0])) n = (int)(sizeof ms / sizeof ms[0]);
  /* what is there now, without waiting (consume_batch waits for a full batch); else one, waiting */
  ssize_t got = rd_kafka_consume_batch(k->rkt, partition, 0, ms, (size_t)n);
  if (got == 0) {
    ms[0] = rd_kafka_consume(k->rkt, partition, timeout_ms);
    got = ms[0] ? 1 : 0;
  }
  if (got < 0) {
    snprintf(err, cap, "cannot read topic '%s' partition %d: %s", k->topic, (int)partition,
             rd_kafka_err2str(rd_kafka_last_error()));
    return -1;
  }
  int out = 0, rc = 0;
  for (ssize_t i = 0; i < got; i++) {
    if (rc < 0) {
      rd_kafka_message_destroy(ms[i]);
      continue;
    }
    int t = take(k, ms[i], &recs[out], end_offset, err, cap);
    if (t < 0) rc = -1;
    if (t > 0) out++;
  }
  if (rc < 0) {
    kafka_release(recs, out);
    return -1;
  }
  return out;
}

void kafka_release(KafkaRecord *recs, int n) {
  for (int i = 0; i < n; i++)
    if (recs[i].msg) {
      rd_kafka_message_destroy(recs[i].msg);
      recs[i].msg = NULL;
    }
}

void kafka_close(KafkaReader *k) {
  if (!k) return;
  for (int i = 0; i < k->nparts; i++)
    if (k->started[i]) rd_kafka_consume_stop(k->rkt, k->parts[i]);
  if (k->rkt) rd_kafka_topic_destroy(k->rkt);
  if (k->rk) rd_kafka_destroy(k->rk);
  free(k->parts);
  free(k->started);
  free(k->brokers);
  free(k->topic);
  free(k);
}

/* ---- writing ---- */

struct KafkaWriter {
  rd_kafka_t *rk;
  rd_kafka_topic_t *rkt;
  char *brokers;
  char *topic;
  KafkaLogFn *log;
  void *log_ctx;
  rd_kafka_resp_err_t failed; /* the first delivery that failed (0: none) */
  int32_t failed_partition;
  char *txn_id;               /* the transactional id (NULL: not transactional) */
  bool in_txn;                /* a transaction was begun and not yet committed or aborted */
  int32_t last_partition;     /* the latest record acknowledged since the transaction began */
  int64_t last_offset;        /* (-1: none) */
};

static void on_wlog(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
  KafkaWriter *k = rd_kafka_opaque(rk);
  if (k && k->log && level <= 4) k->log(k->log_ctx, level, fac, buf);
}

/* Delivery reports are served by rd_kafka_poll, on the caller's thread. */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  KafkaWriter *k = opaque;
  if (m->err && !k->failed) {
    k->failed = m->err;
    k->failed_partition = m->partition;
  }
  if (!m->err) {
    k->last_partition = m->partition;
    k->last_offset = m->offset;
  }
}

static int delivery_error(KafkaWriter *k, char *err, size_t cap) {
  snprintf(err, cap, "a record could not be delivered to topic '%s' partition %d on '%s': %s", k->topic,
           (int)k->failed_partition, k->brokers, rd_kafka_err2str(k->failed));
  return -1;
}

void kafka_writer_close(KafkaWriter *k) {
  if (!k) return;
  if (k->rk) rd_kafka_purge(k->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  if (k->rk && k->in_txn) { /* what the brokers would abort at the transaction's timeout, at once */
    rd_kafka_error_t *e = rd_kafka_abort_transaction(k->rk, ABORT_MS);
    if (e) rd_kafka_error_destroy(e);
  }
  if (k->rkt) rd_kafka_topic_destroy(k->rkt);
  if (k->rk) rd_kafka_destroy(k->rk);
  free(k->brokers);
  free(k->topic);
  free(k->txn_id);
  free(k);
}

/* err from a transactional call that failed (e destroyed); -1. */
static int txn_error(KafkaWriter *k, const char *what, rd_kafka_error_t *e, char *err, size_t cap) {
  if (rd_kafka_error_code(e) == RD_KAFKA_RESP_ERR__FENCED || rd_kafka_error_code(e) == RD_KAFKA_RESP_ERR_PRODUCER_FENCED)
    snprintf(err, cap, "cannot %s on '%s': another producer with transactional id '%s' started since (another run of "
                       "this job?): %s", what, k->brokers, k->txn_id, rd_kafka_error_string(e));
  else
    snprintf(err, cap, "cannot %s of transactional id '%s' on '%s': %s", what, k->txn_id, k->brokers,
             rd_kafka_error_string(e));
  rd_kafka_error_destroy(e);
  return -1;
}

KafkaWriter *kafka_writer_open(const char *brokers, const char *topic, const char *txn_id, int timeout_ms,
                               KafkaLogFn *log, void *log_ctx, char *err, size_t cap) {
  KafkaWriter *k = calloc(1, sizeof *k);
  if (!k) {
    snprintf(err, cap, "out of memory");
    return NULL;
  }
  k->log = log;
  k->log_ctx = log_ctx;
  k->brokers = strdup(brokers);
  k->topic = strdup(topic);
  k->txn_id = txn_id ? strdup(txn_id) : NULL;
  k->last_offset = -1;
  rd_kafka_conf_t *conf = base_conf(brokers, err, cap);
  if (!conf || set(conf, "enable.idempotence", "true", err, cap) < 0 || set(conf, "linger.ms", "5", err, cap) < 0 ||
      set(conf, "partitioner", "murmur2_random", err, cap) < 0 ||
      (txn_id && (set(conf, "transactional.id", txn_id, err, cap) < 0 ||
                  set(conf, "transaction.timeout.ms", TXN_TIMEOUT_MS, err, cap) < 0))) {
    if (conf) rd_kafka_conf_destroy(conf);
    kafka_writer_close(k);
    return NULL;
  }
  rd_kafka_conf_set_opaque(conf, k);
  rd_kafka_conf_set_log_cb(conf, on_wlog);
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  if (start_client(RD_KAFKA_PRODUCER, conf, brokers, topic, &k->rk, &k->rkt, err, cap) < 0) {
    kafka_writer_close(k);
    return NULL;
  }
  /* the topic's metadata, as a reader asks for it: the same errors for the same causes */
  KafkaReader probe = { .rk = k->rk, .rkt = k->rkt, .brokers = k->brokers, .topic = k->topic };
  int rc = read_metadata(&probe, timeout_ms, err, cap);
  free(probe.parts);
  free(probe.started);
  if (rc < 0) {
    kafka_writer_close(k);
    return NULL;
  }
  if (txn_id) { /* fences an earlier producer of this id, aborting the transaction it left open */
    rd_kafka_error_t *e = rd_kafka_init_transactions(k->rk, timeout_ms);
    if (e) {
      txn_error(k, "start transactions", e, err, cap);
      kafka_writer_close(k);
      return NULL;
    }
  }
  return k;
}

/* Begins a transaction unless one is open. 0, or -1 with err. */
static int txn_begin(KafkaWriter *k, char *err, size_t cap) {
  if (k->in_txn) return 0;
  rd_kafka_error_t *e = rd_kafka_begin_transaction(k->rk);
  if (e) return txn_error(k, "begin a transaction", e, err, cap);
  k->in_txn = true;
  k->last_offset = -1;
  return 0;
}

int kafka_txn_commit(KafkaWriter *k, int timeout_ms, char *err, size_t cap) {
  if (!k->in_txn) return 0;
  rd_kafka_error_t *e = rd_kafka_commit_transaction(k->rk, timeout_ms); /* flushes first */
  if (k->failed) {
    if (e) rd_kafka_error_destroy(e);
    return delivery_error(k, err, cap);
  }
  if (e) return txn_error(k, "commit a transaction", e, err, cap);
  k->in_txn = false;
  return 0;
}

bool kafka_writer_last(const KafkaWriter *k, int32_t *partition, int64_t *offset) {
  if (k->last_offset < 0) return false;
  *partition = k->last_partition;
  *offset = k->last_offset;
  return true;
}

int kafka_write(KafkaWriter *k, const void *key, size_t keylen, const void *value, size_t len, char *err, size_t cap) {
  if (k->failed) return delivery_error(k, err, cap);
  if (k->txn_id && txn_begin(k, err, cap) < 0) return -1;
  if (rd_kafka_produce(k->rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, (void *)value, len, key, key ? keylen : 0,
                       NULL) == 0) {
    rd_kafka_poll(k->rk, 0);
    return 0;
  }
  rd_kafka_resp_err_t e = rd_kafka_last_error();
  if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) return 1;
  snprintf(err, cap, "cannot produce a record to topic '%s' on '%s': %s", k->topic, k->brokers, rd_kafka_err2str(e));
  return -1;
}

long kafka_writer_wait(KafkaWriter *k, int ms, char *err, size_t cap) {
  rd_kafka_flush(k->rk, ms); /* serves the delivery reports while it waits */
  if (k->failed) return delivery_error(k, err, cap);
  return rd_kafka_outq_len(k->rk);
}

/* ---- whether a record is committed ---- */

int kafka_visible(const char *brokers, const char *topic, int32_t partition, int64_t offset, int timeout_ms,
                  KafkaLogFn *log, void *log_ctx, char *err, size_t cap) {
  KafkaReader *r = kafka_open(brokers, topic, timeout_ms, log, log_ctx, err, cap);
  if (!r) return -1;
  int rc = kafka_start(r, partition, offset, err, cap);
  int64_t until = now_ms() + timeout_ms;
  while (rc == 0) {
    KafkaRecord rec;
    int64_t end;
    int64_t left = until - now_ms();
    int got = kafka_fetch(r, partition, left > 100 ? 100 : left > 0 ? (int)left : 1, &rec, 1, &end, err, cap);
    if (got < 0) {
      rc = -1;
    } else if (got > 0) { /* the first committed record at or after offset */
      rc = rec.offset == offset ? 1 : 2;
      kafka_release(&rec, 1);
    } else if (end > offset) { /* the end is past it, and it was not given: aborted */
      rc = 2;
    } else if (now_ms() >= until) { /* the end is at or before it: an open transaction holds it back */
      snprintf(err, cap, "cannot tell within %d ms whether offset %lld of topic '%s' partition %d is committed: "
                         "consumers that read committed records do not get that far (a transaction still open?)",
               timeout_ms, (long long)offset, topic, (int)partition);
      rc = -1;
    }
  }
  kafka_close(r);
  return rc < 0 ? -1 : rc == 1;
}
