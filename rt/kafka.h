/* kafka.h: Kafka behind one file (kafka.c is the only file that includes librdkafka), as gRPC is
 * behind transport*.c and protobuf-c behind wire.c. The operator kinds (ops/kafka_source.c,
 * ops/kafka_sink.c) see only this small interface: a reader of chosen partitions of one topic from
 * chosen offsets, each partition on its own (the kind merges them in an order of its own), with no
 * consumer group and no offsets committed to the brokers (a checkpoint keeps them); and a writer
 * of one topic's records.
 *
 * Messages: every function that fails writes what went wrong into err (cap bytes; lowercase, no
 * operator name: the caller adds it), naming the brokers, the topic and the partition it concerns.
 * librdkafka's own log lines (warnings and errors) go to the KafkaLogFn given to kafka_open, from
 * librdkafka's threads: it must be thread-safe (rt_warn is). */
#ifndef SF_KAFKA_H
#define SF_KAFKA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct KafkaReader KafkaReader;

/* A log line of librdkafka: its syslog level (3 error, 4 warning), facility ("FAIL", ...) and text. */
typedef void KafkaLogFn(void *ctx, int level, const char *facility, const char *msg);

/* Connects to `brokers` (host:port,...) and reads the metadata of `topic`, waiting at most
 * timeout_ms for a broker to answer. It reads committed records only (read_committed). NULL with err set: the brokers cannot be reached in that time,
 * the topic does not exist, or another error the cluster gave. */
KafkaReader *kafka_open(const char *brokers, const char *topic, int timeout_ms, KafkaLogFn *log, void *log_ctx,
                        char *err, size_t cap);
/* The topic's partitions, in increasing order of their numbers: how many, and the i-th's number. */
int kafka_npartitions(const KafkaReader *k);
int32_t kafka_partition(const KafkaReader *k, int i);
/* The low and high watermarks of `partition` as its leader has them now (the first offset held, and
 * the offset the next record produced will get). 0, or -1 with err. */
int kafka_watermarks(KafkaReader *k, int32_t partition, int64_t *lo, int64_t *hi, int timeout_ms, char *err,
                     size_t cap);
/* Starts reading `partition` at `offset` (an offset outside what the partition holds is an error
 * of kafka_fetch, never a silent jump). 0, or -1 with err. */
int kafka_start(KafkaReader *k, int32_t partition, int64_t offset, char *err, size_t cap);

/* One record read: valid until kafka_release. */
typedef struct KafkaRecord {
  int32_t partition;
  int64_t offset;
  int64_t timestamp; /* ms since the epoch (CreateTime or LogAppendTime, as the topic keeps it); -1: none */
  const char *value; /* its bytes (NULL for a null value) */
  size_t len;
  void *msg;         /* kafka.c's */
} KafkaRecord;

/* Reads up to n records of a started partition into recs, waiting at most timeout_ms for the first.
 * Returns how many (0: none in that time), with *end_offset set to the offset of the partition's
 * end when the reader reached it (-1 otherwise); -1 with err on an error (an offset out of range,
 * the topic or partition gone, ...). Records come in offset order. */
int kafka_fetch(KafkaReader *k, int32_t partition, int timeout_ms, KafkaRecord *recs, int n, int64_t *end_offset,
                char *err, size_t cap);
/* Releases records kafka_fetch returned. */
void kafka_release(KafkaRecord *recs, int n);
/* Stops reading and disconnects; NULL is ignored. */
void kafka_close(KafkaReader *k);

/* Whether the record at `offset` of `partition` is committed: 1 when a consumer reading committed
 * records gets it, 0 when it gets a later offset or the partition's end past it instead (the record
 * belongs to an aborted transaction), -1 with err when it cannot tell within timeout_ms (the brokers
 * are not reached, or a transaction still open holds such consumers back before the offset). */
int kafka_visible(const char *brokers, const char *topic, int32_t partition, int64_t offset, int timeout_ms,
                  KafkaLogFn *log, void *log_ctx, char *err, size_t cap);

/* ---- writing ----
 * A KafkaWriter produces the records of one topic, idempotently (so the records of one partition
 * land in the order written, once each, whatever the producer retries), a record with a key going
 * to the partition of its key's murmur2 hash (as Java clients choose it), one without to a
 * partition librdkafka picks. With a transactional id it writes inside transactions: the first
 * record after a commit begins one, and nothing it holds is visible to read_committed consumers
 * until kafka_txn_commit. */
typedef struct KafkaWriter KafkaWriter;
/* Connects and reads the metadata of `topic`, as kafka_open (the same errors). With txn_id (not
 * NULL), it then starts transactions (rd_kafka_init_transactions), which fences an earlier producer
 * of the same id: the brokers abort the transaction it left open, and refuse it from then on. A
 * transaction may stay open 15 minutes before the brokers abort it. */
KafkaWriter *kafka_writer_open(const char *brokers, const char *topic, const char *txn_id, int timeout_ms,
                               KafkaLogFn *log, void *log_ctx, char *err, size_t cap);
/* Transactional writers: kafka_txn_commit delivers what the open transaction holds and commits it,
 * waiting at most timeout_ms (0 when none is open: kafka_write begins one). 0, or -1 with err
 * (fenced: another producer of the id started; the writer can only be closed then). Closing a
 * writer aborts the transaction it has open. */
int kafka_txn_commit(KafkaWriter *k, int timeout_ms, char *err, size_t cap);
/* The partition and offset of the latest record acknowledged since the transaction began (since
 * the writer opened without one): false when none was. */
bool kafka_writer_last(const KafkaWriter *k, int32_t *partition, int64_t *offset);
/* Queues one record (key NULL: none; both copied). 0; 1 when librdkafka's queue is full (the
 * caller waits with kafka_writer_wait and tries again); -1 with err when a record written earlier
 * could not be delivered, or this one cannot be queued. */
int kafka_write(KafkaWriter *k, const void *key, size_t keylen, const void *value, size_t len, char *err, size_t cap);
/* Serves the acknowledgements of the brokers for at most ms ms. Returns the records not yet
 * acknowledged (0: every record written was), or -1 with err when one could not be delivered. */
long kafka_writer_wait(KafkaWriter *k, int ms, char *err, size_t cap);
/* Disconnects, dropping what was not delivered; NULL is ignored. */
void kafka_writer_close(KafkaWriter *k);

#endif
