/* kafka_sink.c: the KafkaSink kind, writing each input tuple as one record of a Kafka topic
 * through kafka.h (no librdkafka here): its value the tuple's CSV row without a header and without
 * a line end (csv.h), or with `format` = `json` one JSON object of its attributes (json_row.h),
 * its key the text of the `key` expression's value, as str() gives it (none without `key`), in
 * arrival order (docs/language.md, "KafkaSink").
 *
 * delivery = at-least-once: the final punctuation waits until the brokers acknowledged every
 * record (or fails the job naming the first that could not be delivered), and with checkpoints so
 * does the snapshot at each barrier, so a checkpoint is complete only once everything before it is
 * in the topic; a job restored from it writes the records after it again (duplicates, never a
 * loss).
 *
 * delivery = exactly-once (the default with checkpoints) writes inside Kafka transactions of a
 * transactional producer whose id is derived from the job and the sink (transactional_id), so a
 * restarted job fences the producer of the run it replaces, and the brokers abort what that one
 * left open. Without checkpoints, the whole output is one transaction, committed by the executor's
 * commit once everything on it completed; a failed job's is aborted.
 *
 * With checkpoints, a transaction per checkpoint interval: the records since the last commit are
 * held in memory (`held`) as well as written into the open transaction, and at a checkpoint's
 * barrier the sink waits until the brokers acknowledged what it wrote (the pre-commit) and puts in
 * its snapshot every record held, how many of them are in the open transaction, and where the last
 * of those landed. The first barrier after a transaction began freezes it (`frozen`, at
 * checkpoint `freeze_id`): records that come after are held but not written, and once that
 * checkpoint (or a later one) is complete (rt_checkpoint_complete, looked at on every row and
 * whenever the thread is about to wait) the transaction is committed, the records it held are
 * dropped, and the records held since go into the next transaction. So a transaction commits only
 * at the completion of a checkpoint whose snapshot names it, and holds only records before that
 * checkpoint's barrier; a record waits for the first checkpoint after its transaction began,
 * between one and two intervals.
 *
 * librdkafka cannot take over a transaction another producer began, so a commit cannot wait for a
 * restarted job: a job killed between a checkpoint's completion and the commit leaves the
 * transaction open, and the restored producer's start aborts it. So the restore from checkpoint K
 * asks the brokers whether the last record of K's open transaction is committed (kafka_visible, as
 * a read_committed consumer sees it): if it is, the records of that transaction are dropped from
 * what K held; if not, they are written again, with the records K held after them, in the
 * restored job's first transaction, which commits like any other. No later transaction of the
 * killed job can have committed: it began after K's barrier, so it commits only at a checkpoint
 * after K, and the restore would take that one (unless that checkpoint is damaged). A
 * read_committed consumer thus sees every record once, in the sequential order, whatever the
 * kills and the width of the restore (a sink is never replicated, so it receives the same records
 * in the same order at any width).
 *
 * The end of the job, with checkpoints: the final punctuation writes every record held and waits
 * for their acknowledgement; the commit record (commit_record) is that same state, and the
 * executor's commit commits the transaction. A restore that finds the commit record (recommit)
 * asks the same question of the brokers and writes again what was not committed, then drops
 * everything it receives: the output is final.
 *
 * The snapshot and the commit record (format 1): u64 1, bytes transactional id, bytes topic, u64
 * records held, u64 of them in the open transaction, bool whether one of those was acknowledged,
 * i64 its partition and i64 its offset, then bytes: the records held, each bool has-key, bytes
 * key, bytes value (as they are held in memory). An at-least-once sink's snapshot is empty. */
#include "ckptdir.h"
#include "csv.h"
#include "json_row.h"
#include "kafka.h"
#include "keyed.h"

#include <stdlib.h>
#include <string.h>

enum {
  WAIT_MS = 50,               /* a wait for the brokers: the stop is looked at this often */
  DEFAULT_TIMEOUT_MS = 10000, /* reaching the brokers, without --connect-timeout */
  COMMIT_MS = 60000,          /* a transaction's commit may take this long */
  SNAP_FORMAT = 1,
};

typedef struct KafkaSink {
  KafkaWriter *k;
  const char *brokers;
  const char *topic;
  char *txn_id;       /* the transactional id (NULL: at-least-once) */
  bool held_on;       /* exactly-once with checkpoints: records are held until committed */
  bool committed;     /* --restore after this executor's commit record: the output is final */
  int timeout_ms;     /* reaching the brokers */
  Arena *arena;       /* the compiled key */
  Code *key_code;     /* `key`, compiled (NULL: no key) */
  bool json;          /* `format` = `json` */
  Buf row;            /* the value being written */
  Buf key;            /* the key being written */
  /* held_on: the records from the last commit on, in snapshot encoding; c <= p <= n count records
   * (committed, written into the open transaction, received), head and prod are where records c
   * and p start in held.p (n's is held.n); p < n only while frozen */
  Buf held;
  uint64_t c, p, n;
  size_t head, prod;
  bool frozen;        /* a barrier passed since the open transaction began: it takes no more */
  uint64_t freeze_id; /* that barrier's checkpoint: the transaction commits once it is complete */
} KafkaSink;

static void kafka_sink_close(OpInst *op, bool ok);

static void on_log(void *ctx, int level, const char *facility, const char *msg) {
  OpInst *op = ctx;
  rt_warn(op, "librdkafka %s %s: %s", level <= 3 ? "error" : "warning", facility, msg);
}

/* The default transactional id: the sink's name in the job, the job being its checkpoint directory
 * (the graph without checkpoints), so that a restarted job has the id of the run it replaces. */
static char *default_txn_id(OpInst *op) {
  const ExecOptions *o = rt_options(op);
  const char *where = o->checkpoint_dir ? o->checkpoint_dir : o->graph_path ? o->graph_path : ".";
  char *real = realpath(where, NULL), *text, *id;
  if (asprintf(&text, "%s\n%s", real ? real : where, o->host ? o->host : "") < 0) sf_die("out of memory");
  if (asprintf(&id, "sf-%016llx-%s", (unsigned long long)ckptdir_hash(text), op->op->name) < 0)
    sf_die("out of memory");
  free(real);
  free(text);
  return id;
}

static int setup(OpInst *op, KafkaSink *s) {
  const char *key = rt_param(op, "key"), *format = rt_param(op, "format"), *delivery = rt_param(op, "delivery");
  const char *txn_id = rt_param(op, "transactional_id");
  const ExecOptions *o = rt_options(op);
  s->brokers = rt_param(op, "brokers");
  s->topic = rt_param(op, "topic");
  if (!s->brokers || !*s->brokers) return rt_fail(op, "KafkaSink needs parameter 'brokers'");
  if (!s->topic || !*s->topic) return rt_fail(op, "KafkaSink needs parameter 'topic'");
  if (!op->in_schema) return rt_fail(op, "KafkaSink has no input schema");
  if (format && strcmp(format, "csv") && strcmp(format, "json"))
    return rt_fail(op, "unknown format '%s' (the formats are 'csv' and 'json')", format);
  s->json = format && !strcmp(format, "json");
  if (delivery && strcmp(delivery, "at-least-once") && strcmp(delivery, "exactly-once"))
    return rt_fail(op, "parameter 'delivery' must be 'exactly-once' or 'at-least-once', got '%s'", delivery);
  bool exactly = delivery ? !strcmp(delivery, "exactly-once") : o->checkpoint_dir != NULL;
  if (txn_id && !*txn_id) return rt_fail(op, "parameter 'transactional_id' is empty");
  if (exactly) s->txn_id = txn_id ? strdup(txn_id) : default_txn_id(op);
  s->held_on = exactly && o->checkpoint_dir;
  s->committed = rt_restore_committed(op);
  if (key && !op->op->key_expr) return rt_fail(op, "KafkaSink has no checked 'key'");
  if (key) {
    s->arena = arena_new();
    s->key_code = code_compile(op->op->key_expr, s->arena);
  }
  s->timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : DEFAULT_TIMEOUT_MS;
  char err[512];
  s->k = kafka_writer_open(s->brokers, s->topic, s->txn_id, s->timeout_ms, on_log, op, err, sizeof err);
  if (!s->k) return rt_fail(op, "%s", err);
  return 0;
}

static int kafka_sink_open(OpInst *op) {
  KafkaSink *s = sf_xmalloc(sizeof *s);
  memset(s, 0, sizeof *s);
  buf_init(&s->row);
  buf_init(&s->key);
  buf_init(&s->held);
  op->state = s;
  if (setup(op, s) == 0) return 0;
  kafka_sink_close(op, false); /* the executor closes only operators whose open succeeded */
  return -1;
}

/* Writes one record, waiting while librdkafka's queue is full. 0, or -1 (rt_fail, or a stop). */
static int write_record(OpInst *op, KafkaSink *s, const void *key, size_t keylen, const void *value, size_t len) {
  char err[512];
  int rc;
  while ((rc = kafka_write(s->k, key, keylen, value, len, err, sizeof err)) == 1) {
    if (rt_stopping(op)) return -1; /* the brokers do not take more: wait, unless the job stops */
    if (kafka_writer_wait(s->k, WAIT_MS, err, sizeof err) < 0) return rt_fail(op, "%s", err);
  }
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

static int commit(OpInst *op, KafkaSink *s) {
  char err[512];
  return kafka_txn_commit(s->k, COMMIT_MS, err, sizeof err) < 0 ? rt_fail(op, "%s", err) : 0;
}

/* ---- the records held (held_on) ---- */

static void held_put(KafkaSink *s, const void *key, size_t keylen, const void *value, size_t len) {
  snap_bool(&s->held, key != NULL);
  snap_bytes(&s->held, key ? key : "", key ? keylen : 0);
  snap_bytes(&s->held, value, len);
  s->n++;
}

/* Reads the held record at in's offset; false when the bytes are not one. */
static bool held_get(SnapIn *in, const void **key, size_t *keylen, const void **value, size_t *len) {
  bool has_key = snap_get_bool(in);
  *key = snap_get_bytes(in, keylen);
  *value = snap_get_bytes(in, len);
  if (!has_key) *key = NULL;
  return !in->bad;
}

/* Writes the held records not yet written (from p on) into the open transaction. */
static int write_held(OpInst *op, KafkaSink *s) {
  SnapIn in = { .p = (const unsigned char *)s->held.p, .n = s->held.n, .off = s->prod };
  while (s->p < s->n) {
    const void *key, *value;
    size_t keylen, len;
    if (!held_get(&in, &key, &keylen, &value, &len)) sf_die("KafkaSink: held records malformed");
    if (write_record(op, s, key, keylen, value, len) < 0) return -1;
    s->p++;
    s->prod = in.off;
  }
  return 0;
}

/* Once the checkpoint that froze the open transaction (records c to p) is complete: commits it,
 * drops its records and writes those held since into the next one. */
static int advance(OpInst *op, KafkaSink *s) {
  if (!s->frozen || rt_checkpoint_complete(op) < s->freeze_id) return 0;
  if (commit(op, s) < 0) return -1;
  s->frozen = false;
  s->c = s->p;
  s->head = s->prod;
  if (s->head > s->held.n / 2) { /* the records after it move to the front */
    memmove(s->held.p, s->held.p + s->head, s->held.n - s->head);
    s->held.n -= s->head;
    s->prod -= s->head;
    s->head = 0;
  }
  return write_held(op, s);
}

/* ---- the kind ---- */

/* The record of t: its value into s->row, its key (with `key`) into s->key. 0, or -1 after a
 * fault of the key expression (reported). */
static int encode(KafkaSink *s, OpInst *op, const Tuple *t) {
  s->row.n = 0;
  if (s->json) {
    json_row_put(&s->row, op->in_schema, t->v, t->n);
  } else {
    csv_put_row(&s->row, t->v, t->n);
    s->row.n--; /* the line end */
  }
  s->key.n = 0;
  if (s->key_code) {
    EvalEnv env = {.attrs = t->v, .scratch = op->scratch};
    Value v;
    if (keyed_eval(op, s->key_code, &env, &v, "key", NULL, NULL, t) < 0) return -1;
    if (v.type == TYPE_STRING)
      buf_append(&s->key, v.s.p, v.s.n);
    else
      value_format(&v, &s->key); /* str()'s text */
  }
  return 0;
}

static int kafka_sink_process(OpInst *op, int port, Tuple *t) {
  (void)port;
  KafkaSink *s = op->state;
  if (s->committed) { /* the output is final: what comes again is dropped */
    tuple_unref(t);
    return 0;
  }
  if (encode(s, op, t) < 0) {
    tuple_unref(t);
    return -1;
  }
  const void *key = !s->key_code ? NULL : s->key.n ? s->key.p : ""; /* an empty key, not none */
  size_t keylen = s->key.n;
  int rc;
  if (!s->held_on) {
    rc = write_record(op, s, key, keylen, s->row.p, s->row.n);
  } else if ((rc = advance(op, s)) == 0) {
    held_put(s, key, keylen, s->row.p, s->row.n);
    if (!s->frozen) rc = write_held(op, s); /* else it waits for the next one */
  }
  tuple_unref(t);
  return rc;
}

static void kafka_sink_idle(OpInst *op) {
  KafkaSink *s = op->state;
  if (s->held_on && !s->committed) advance(op, s); /* a failure stops the job: nothing to return */
}

static int kafka_sink_final(OpInst *op) {
  KafkaSink *s = op->state;
  if (s->committed) return 0;
  if (s->held_on) { /* everything held goes into the last transaction, which the commit commits */
    if (advance(op, s) < 0) return -1;
    s->frozen = false;
    if (write_held(op, s) < 0) return -1;
  }
  return drain(op, s);
}

/* The state a restore, or a recommit, needs (the layout is in the header comment). */
static void put_state(KafkaSink *s, Buf *out) {
  snap_u64(out, SNAP_FORMAT);
  snap_bytes(out, s->txn_id, strlen(s->txn_id));
  snap_bytes(out, s->topic, strlen(s->topic));
  snap_u64(out, s->n - s->c);
  snap_u64(out, s->p - s->c);
  int32_t part = 0;
  int64_t off = 0;
  bool last = s->p > s->c && kafka_writer_last(s->k, &part, &off);
  snap_bool(out, last);
  snap_i64(out, part);
  snap_i64(out, off);
  snap_bytes(out, s->held.p + s->head, s->held.n - s->head);
}

/* At a checkpoint's barrier: everything written acknowledged, so that the checkpoint completes only
 * once it is in the topic (at-least-once: no state), or the open transaction pre-committed (and
 * frozen, if this is the first barrier since it began). */
static int kafka_sink_snapshot(OpInst *op, Buf *out) {
  KafkaSink *s = op->state;
  if (s->committed) return 0; /* no restore takes a committed sink's snapshot */
  if (drain(op, s) < 0) return -1;
  if (!s->held_on) return 0;
  if (s->p > s->c && !s->frozen) { /* the open transaction commits once this checkpoint is complete */
    s->frozen = true;
    s->freeze_id = rt_checkpoint_taking(op);
  }
  put_state(s, out);
  return 0;
}

/* Reads a state put_state wrote and takes its records back: those of the transaction that was
 * open, unless the brokers committed it, and those after. which says what it is and txn which
 * transaction that was, for messages. */
static int take_state(OpInst *op, KafkaSink *s, SnapIn *in, const char *which, const char *txn) {
  if (!s->held_on) {
    if (in->n == 0) return 0;
    return rt_fail(op, "%s was taken with delivery = exactly-once, and the sink is at-least-once now", which);
  }
  if (in->n == 0) return rt_fail(op, "%s was taken with delivery = at-least-once, and the sink is exactly-once now", which);
  uint64_t format = snap_get_u64(in);
  size_t idn, topicn, bytesn;
  const char *id = snap_get_bytes(in, &idn), *topic = snap_get_bytes(in, &topicn);
  uint64_t nheld = snap_get_u64(in), nopen = snap_get_u64(in);
  bool last = snap_get_bool(in);
  int64_t part = snap_get_i64(in), off = snap_get_i64(in);
  const unsigned char *bytes = snap_get_bytes(in, &bytesn);
  if (in->bad || !snap_done(in) || format != SNAP_FORMAT || nopen > nheld)
    return rt_fail(op, "%s does not fit this sf-exec (%s)", which, in->bad ? "truncated" : "not KafkaSink format 1");
  if (idn != strlen(s->txn_id) || memcmp(id, s->txn_id, idn))
    return rt_fail(op, "%s was taken by transactional id '%.*s', and the sink's is '%s'", which, (int)idn, id,
                   s->txn_id);
  if (topicn != strlen(s->topic) || memcmp(topic, s->topic, topicn))
    return rt_fail(op, "%s was taken writing topic '%.*s', and the sink writes '%s'", which, (int)topicn, topic,
                   s->topic);
  if (part < 0 || part > INT32_MAX || off < 0) return rt_fail(op, "%s names a record at a negative place", which);
  /* the records held, checked whole before any is taken */
  SnapIn rec = { .p = bytes, .n = bytesn };
  size_t skip_to = 0;
  for (uint64_t i = 0; i < nheld; i++) {
    const void *key, *value;
    size_t keylen, len;
    if (!held_get(&rec, &key, &keylen, &value, &len))
      return rt_fail(op, "%s holds fewer records than it says (%llu)", which, (unsigned long long)nheld);
    if (i + 1 == nopen) skip_to = rec.off;
  }
  if (!snap_done(&rec)) return rt_fail(op, "%s holds more records than it says", which);
  bool written = false;
  if (nopen > 0 && last) {
    char err[512];
    int v = kafka_visible(s->brokers, s->topic, (int32_t)part, off, s->timeout_ms, on_log, op, err, sizeof err);
    if (v < 0) return rt_fail(op, "%s: %s", which, err);
    written = v == 1;
  } else if (nopen > 0) {
    return rt_fail(op, "%s has records in a transaction, and not where one landed", which);
  }
  if (nopen > 0)
    rt_note(op, "%s was %scommitted: its %llu records are %swritten again", txn, written ? "" : "not ",
            (unsigned long long)nopen, written ? "not " : "");
  size_t from = written ? skip_to : 0;
  uint64_t count = nheld - (written ? nopen : 0);
  buf_append(&s->held, (const char *)bytes + from, bytesn - from);
  s->n = count;
  return 0;
}

static int kafka_sink_restore(OpInst *op, SnapIn *in) {
  KafkaSink *s = op->state;
  char which[64], txn[64];
  unsigned long long id = (unsigned long long)rt_checkpoint_taking(op);
  snprintf(which, sizeof which, "its snapshot in checkpoint %llu", id);
  snprintf(txn, sizeof txn, "the transaction open at checkpoint %llu", id);
  if (take_state(op, s, in, which, txn) < 0) return -1;
  return s->held_on ? write_held(op, s) : 0; /* into the first transaction */
}

static int kafka_sink_commit_record(OpInst *op, Buf *out) {
  KafkaSink *s = op->state;
  if (s->held_on && !s->committed) put_state(s, out);
  return 0;
}

static int kafka_sink_commit(OpInst *op) {
  KafkaSink *s = op->state;
  return s->txn_id ? commit(op, s) : 0;
}

/* The job had completed here and may not have committed: what the brokers do not have goes now. */
static int kafka_sink_recommit(OpInst *op, SnapIn *in) {
  KafkaSink *s = op->state;
  if (take_state(op, s, in, "its commit record", "the job's last transaction") < 0) return -1;
  if (s->held_on && (write_held(op, s) < 0 || drain(op, s) < 0 || commit(op, s) < 0)) return -1;
  s->committed = true;
  return 0;
}

static int kafka_sink_checkpointable(OpInst *op) {
  KafkaSink *s = op->state;
  if (!s->txn_id)
    rt_warn(op, "writes topic '%s' at-least-once: after a restore, the records written since the checkpoint are "
                "written again", s->topic);
  return 0;
}

static void kafka_sink_close(OpInst *op, bool ok) {
  (void)ok;
  KafkaSink *s = op->state;
  if (!s) return;
  kafka_writer_close(s->k); /* aborts a transaction left open */
  if (s->arena) arena_free(s->arena);
  buf_release(&s->row);
  buf_release(&s->key);
  buf_release(&s->held);
  free(s->txn_id);
  free(s);
  op->state = NULL;
}

const OpKindImpl op_kafka_sink = {
  .kind = KIND_KAFKASINK,
  .open = kafka_sink_open,
  .process = kafka_sink_process,
  .idle = kafka_sink_idle,
  .final = kafka_sink_final,
  .commit = kafka_sink_commit,
  .close = kafka_sink_close,
  .snapshot = kafka_sink_snapshot,
  .restore = kafka_sink_restore,
  .checkpointable = kafka_sink_checkpointable,
  .commit_record = kafka_sink_commit_record,
  .recommit = kafka_sink_recommit,
};
