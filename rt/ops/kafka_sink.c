/* kafka_sink.c: the KafkaSink kind, writing each input tuple as one record of a Kafka topic
 * through kafka.h (no librdkafka here): its value the tuple's CSV row without a header and without
 * a line end (csv.h), its key the text of the `key` attribute's value (none without `key`), in
 * arrival order (docs/language.md, "KafkaSink").
 *
 * Delivery is at-least-once: the final punctuation waits until the brokers acknowledged every
 * record (or fails the job naming the first that could not be delivered), and with checkpoints so
 * does the snapshot at each barrier, so a checkpoint is complete only once everything before it is
 * in the topic; a job restored from it writes the records after it again (duplicates, never a
 * loss). Transactions (exactly-once) are not done: `delivery` = `exactly-once` is refused. */
#include "csv.h"
#include "kafka.h"
#include "rt.h"

#include <stdlib.h>
#include <string.h>

enum {
  WAIT_MS = 50,               /* a wait for the brokers: the stop is looked at this often */
  DEFAULT_TIMEOUT_MS = 10000, /* reaching the brokers, without --connect-timeout */
};

typedef struct KafkaSink {
  KafkaWriter *k;
  const char *topic;
  int key_slot;  /* the `key` attribute (-1: no key) */
  Buf row;       /* the value being written */
  Buf key;       /* the key being written */
} KafkaSink;

static void kafka_sink_close(OpInst *op, bool ok);

static void on_log(void *ctx, int level, const char *facility, const char *msg) {
  OpInst *op = ctx;
  rt_warn(op, "librdkafka %s %s: %s", level <= 3 ? "error" : "warning", facility, msg);
}

static int setup(OpInst *op, KafkaSink *s) {
  const char *brokers = rt_param(op, "brokers"), *key = rt_param(op, "key");
  const char *format = rt_param(op, "format"), *delivery = rt_param(op, "delivery");
  s->topic = rt_param(op, "topic");
  if (!brokers || !*brokers) return rt_fail(op, "KafkaSink needs parameter 'brokers'");
  if (!s->topic || !*s->topic) return rt_fail(op, "KafkaSink needs parameter 'topic'");
  if (!op->in_schema) return rt_fail(op, "KafkaSink has no input schema");
  if (format && strcmp(format, "csv")) return rt_fail(op, "unknown format '%s' (the only format is 'csv')", format);
  if (delivery && strcmp(delivery, "at-least-once"))
    return rt_fail(op, "parameter 'delivery' must be 'at-least-once' (exactly-once is not implemented yet), got '%s'",
                   delivery);
  s->key_slot = key ? schema_find_attr(op->in_schema, key) : -1;
  if (key && s->key_slot < 0)
    return rt_fail(op, "parameter 'key' names '%s', which input schema '%s' does not have", key, op->in_schema->name);
  int timeout = rt_options(op)->connect_timeout_ms > 0 ? rt_options(op)->connect_timeout_ms : DEFAULT_TIMEOUT_MS;
  char err[512];
  s->k = kafka_writer_open(brokers, s->topic, timeout, on_log, op, err, sizeof err);
  if (!s->k) return rt_fail(op, "%s", err);
  return 0;
}

static int kafka_sink_open(OpInst *op) {
  KafkaSink *s = sf_xmalloc(sizeof *s);
  memset(s, 0, sizeof *s);
  buf_init(&s->row);
  buf_init(&s->key);
  op->state = s;
  if (setup(op, s) == 0) return 0;
  kafka_sink_close(op, false); /* the executor closes only operators whose open succeeded */
  return -1;
}

static int kafka_sink_process(OpInst *op, int port, Tuple *t) {
  (void)port;
  KafkaSink *s = op->state;
  s->row.n = 0;
  csv_put_row(&s->row, t->v, t->n);
  s->row.n--; /* the line end */
  const void *key = NULL;
  size_t keylen = 0;
  if (s->key_slot >= 0) {
    const Value *v = &t->v[s->key_slot];
    if (v->type == TYPE_STRING) {
      key = v->s.n ? v->s.p : ""; /* an empty key, not none */
      keylen = v->s.n;
    } else {
      s->key.n = 0;
      csv_put_value(&s->key, v);
      key = s->key.p;
      keylen = s->key.n;
    }
  }
  char err[512];
  int rc;
  while ((rc = kafka_write(s->k, key, keylen, s->row.p, s->row.n, err, sizeof err)) == 1) {
    if (rt_stopping(op)) { /* the brokers do not take more: wait, unless the job stops */
      tuple_unref(t);
      return -1;
    }
    if (kafka_writer_wait(s->k, WAIT_MS, err, sizeof err) < 0) {
      rc = -1;
      break;
    }
  }
  tuple_unref(t);
  return rc < 0 ? rt_fail(op, "%s", err) : 0;
}

/* Waits until the brokers acknowledged every record written (a stop ends the wait). */
static int drain(OpInst *op, KafkaSink *s) {
  char err[512];
  for (;;) {
    long left = kafka_writer_wait(s->k, WAIT_MS, err, sizeof err);
    if (left < 0) return rt_fail(op, "%s", err);
    if (left == 0) return 0;
    if (rt_stopping(op)) return -1;
  }
}

static int kafka_sink_final(OpInst *op) {
  return drain(op, op->state);
}

/* At a checkpoint's barrier: everything before it acknowledged, so that the checkpoint completes
 * only once it is in the topic (at-least-once). No state to keep. */
static int kafka_sink_snapshot(OpInst *op, Buf *out) {
  (void)out;
  return drain(op, op->state);
}

static int kafka_sink_restore(OpInst *op, SnapIn *in) {
  if (!snap_done(in)) return rt_fail(op, "snapshot truncated or malformed");
  return 0;
}

static int kafka_sink_checkpointable(OpInst *op) {
  KafkaSink *s = op->state;
  rt_warn(op, "writes topic '%s' at-least-once: after a restore, the records written since the checkpoint are "
              "written again", s->topic);
  return 0;
}

static void kafka_sink_close(OpInst *op, bool ok) {
  (void)ok;
  KafkaSink *s = op->state;
  if (!s) return;
  kafka_writer_close(s->k);
  buf_release(&s->row);
  buf_release(&s->key);
  free(s);
  op->state = NULL;
}

const OpKindImpl op_kafka_sink = {
  .kind = KIND_KAFKASINK,
  .open = kafka_sink_open,
  .process = kafka_sink_process,
  .final = kafka_sink_final,
  .close = kafka_sink_close,
  .snapshot = kafka_sink_snapshot,
  .restore = kafka_sink_restore,
  .checkpointable = kafka_sink_checkpointable,
};
