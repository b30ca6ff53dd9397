/* kafka_mock_wire.c: what sf-kafka-mock's brokers say, watched and set right (kafka_mock.c says
 * what for; kafka_mock_wire.h is the interface).
 *
 * librdkafka's mock brokers run in a thread of this process and, in librdkafka 2.0.2, use exactly
 * accept, recvmsg, sendmsg and close on their connections (strace -f of a kcat produce and
 * consume). The executable defines those functions (and accept4, recv, send, which the mock might
 * use in other versions) and is linked with --export-dynamic, so librdkafka's calls resolve to
 * them; they do the real call with syscall(). Only sockets accept() returned while wire_start()
 * is in force are looked at; every other descriptor goes straight through.
 *
 * Per connection, the bytes each way are cut into Kafka frames (a 4-byte big-endian size, then
 * the frame). A request's API key and version are kept by correlation id until its response.
 * What is read from the client goes to the mock unchanged. What the mock writes is held until a
 * frame is whole, then written whole (looping on poll while the socket is full), and the caller
 * is told every byte it passed was sent. Frames of the versions librdkafka 2.0.2 sends the mock
 * (ApiVersions: Produce v3-v7, Fetch v4-v11, EndTxn v0-v1, all non-flexible; InitProducerId v0-v4,
 * flexible from v2) are parsed with bounds checks; anything else, or a frame that does not parse,
 * passes unchanged.
 *
 * The truth a real broker would hold: per producer id (a transactional id's, from InitProducerId
 * and Produce), its transactions in turn, each with the offsets it has in each partition (from
 * each Produce response's base offset), and its state: open; committed (EndTxn commit answered
 * without error); aborted (EndTxn abort answered without error, or fenced: another InitProducerId
 * for its transactional id came while it was open, as a real coordinator aborts it then). The
 * mock answers a fenced producer's EndTxn without error; it is answered PRODUCER_FENCED instead,
 * as a real broker would (the mock still appends what a fenced producer writes: those batches
 * are taken for an aborted transaction).
 *
 * Fetch responses to read_committed requests (isolation_level 1) get, per partition, an
 * AbortedTransactions entry (producer id, first offset in the partition) for every aborted or open
 * transaction of a batch they return, and after an aborted transaction's last batch in the
 * partition an ABORT control batch at that batch's last offset (the mock has no offset of its
 * own to give the marker; the offset's records are dropped anyway). librdkafka's read_committed
 * consumer skips a producer's transactional batches from the first listed offset on, until an
 * ABORT marker of that producer moves it to the next listed one (rdkafka_msgset_reader.c), which
 * is why the markers are needed when a producer commits after an abort. An OPEN transaction is
 * shown as aborted: a real broker would instead hold read_committed consumers before its first
 * offset (LastStableOffset) until it ends, and show its records if it commits, where here a
 * consumer that read past them while it was open has skipped them for good; the mock's
 * LastStableOffset (its high watermark) is left as it is. Read_uncommitted responses are not
 * touched.
 *
 * --record FILE (wire_start) writes a line per event, flushed per line, strings %-escaped (bytes
 * outside '!'..'~', and '%', as %XX), "-" for none:
 *   init txn=ID pid=P epoch=E error=NAME        an InitProducerId answered
 *   produce txn=ID pid=P epoch=E topic=T partition=N offset=O count=C transactional=0|1
 *                                               a record batch appended (its Produce answered
 *                                               without error for its partition; O its base)
 *   fenced txn=ID pid=P by=Q                    P's open transaction aborted: producer Q of ID
 *                                               was initialised
 *   end_txn txn=ID pid=P epoch=E result=commit|abort error=NAME   an EndTxn answered
 * NAME is librdkafka's name of the Kafka error code the client was answered (NO_ERROR,
 * PRODUCER_FENCED, ...). */
#include "kafka_mock_wire.h"

#include <librdkafka/rdkafka.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { API_PRODUCE = 0, API_FETCH = 1, API_INIT_PID = 22, API_END_TXN = 26 };
enum { ATTR_TRANSACTIONAL = 0x10, ATTR_CONTROL = 0x20, BATCH_HEADER = 61, ERR_PRODUCER_FENCED = 90 };
#define FRAME_MAX (256u << 20) /* a bigger size field is taken for garbage: the connection passes raw */
#define MAX_FD 4096            /* descriptors from here on are never looked at */

struct buf {
  uint8_t *p;
  size_t len, cap;
};

/* One batch of a Produce request, until its response gives its offset. */
struct pbatch {
  char *topic;
  int32_t part, count, last_delta;
  int64_t pid;
  int16_t epoch;
  bool txnal;
};

struct req {
  int32_t corr;
  int16_t api, ver;
  int8_t isolation; /* Fetch */
  char *txnid;      /* Produce, InitProducerId, EndTxn (NULL: none) */
  int64_t pid;      /* EndTxn */
  int16_t epoch;    /* EndTxn */
  bool commit;      /* EndTxn */
  struct pbatch *b; /* Produce */
  size_t nb;
};

struct conn {
  int fd;
  struct buf in, out; /* bytes of a frame not yet whole, from the client / from the mock */
  bool raw_in, raw_out; /* a frame did not make sense: the rest passes unlooked at */
  struct req *reqs;
  size_t nreqs;
};

struct range {
  char *topic;
  int32_t part;
  int64_t first, last;
};

enum txn_state { TXN_OPEN, TXN_COMMITTED, TXN_ABORTED };

struct txn {
  int64_t pid;
  enum txn_state state;
  struct range *r; /* per partition it wrote: its first and last offset there */
  size_t nr;
};

struct producer {
  int64_t pid;
  char *txnid;
  bool fenced; /* a newer producer of txnid was initialised */
  long cur;    /* its open transaction (an index of txns), -1: none */
};

/* Lock rule: the mock's broker threads call the wrappers; `lock` guards conns (and their
 * buffers and requests), producers, txns and record, and the capacities kept beside them in the
 * functions that grow them. The wrappers hold it while they look at or change those, never while
 * they wait in a system call. `tracked[fd]` (fd is a connection of conns) is written under it and
 * read without it, the wrappers' fast way past every other descriptor; `started` is set once,
 * before the mock starts. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool started;
static atomic_bool tracked[MAX_FD];
static struct conn *conns;
static size_t nconns;
static struct producer *producers;
static size_t nproducers;
static struct txn *txns;
static size_t ntxns;
static FILE *record;

int wire_start(const char *record_path) {
  if (record_path && !(record = fopen(record_path, "w"))) return -1;
  atomic_store(&started, true);
  return 0;
}

/* ---- buffers, reading and writing the protocol's integers ---- */

static void *grow(void *p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return p;
  size_t c = *cap ? *cap : 8;
  while (c < need) c *= 2;
  void *q = realloc(p, c * size);
  if (!q) abort();
  *cap = c;
  return q;
}

static void put(struct buf *b, const void *p, size_t n) {
  b->p = grow(b->p, &b->cap, b->len + n, 1);
  if (n) memcpy(b->p + b->len, p, n);
  b->len += n;
}

static void put_be(struct buf *b, uint64_t v, int bytes) {
  uint8_t t[8];
  for (int i = 0; i < bytes; i++) t[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
  put(b, t, (size_t)bytes);
}

static void set_be(uint8_t *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

static uint64_t get_be(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v = v << 8 | p[i];
  return v;
}

/* A reader over one frame: every read past its end sets bad and gives 0. */
struct rd {
  const uint8_t *p;
  size_t n, at;
  bool bad;
};

static const uint8_t *take(struct rd *r, size_t n) {
  if (r->bad || n > r->n - r->at) {
    r->bad = true;
    return NULL;
  }
  r->at += n;
  return r->p + r->at - n;
}
static int64_t rd_int(struct rd *r, int bytes) {
  const uint8_t *p = take(r, (size_t)bytes);
  if (!p) return 0;
  uint64_t v = get_be(p, bytes);
  if (bytes < 8 && (v >> (8 * bytes - 1))) v |= ~(uint64_t)0 << (8 * bytes); /* sign */
  return (int64_t)v;
}
static uint64_t rd_uvarint(struct rd *r) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    const uint8_t *p = take(r, 1);
    if (!p) return 0;
    v |= (uint64_t)(*p & 0x7f) << shift;
    if (!(*p & 0x80)) return v;
  }
  r->bad = true;
  return 0;
}
/* A STRING or NULLABLE_STRING (int16 length), or with compact a COMPACT_NULLABLE_STRING (uvarint
 * length + 1), as a new C string; NULL for null (or bad). */
static char *rd_str(struct rd *r, bool compact) {
  int64_t len = compact ? (int64_t)rd_uvarint(r) - 1 : rd_int(r, 2);
  if (r->bad || len < 0) return NULL;
  const uint8_t *p = take(r, (size_t)len);
  if (!p) return NULL;
  char *s = malloc((size_t)len + 1);
  if (!s) abort();
  memcpy(s, p, (size_t)len);
  s[len] = 0;
  return s;
}
static void rd_tags(struct rd *r) { /* a flexible version's tagged fields */
  for (uint64_t n = rd_uvarint(r); n && !r->bad; n--) {
    rd_uvarint(r);
    take(r, rd_uvarint(r));
  }
}

/* ---- the record file ---- */

static void rec_str(const char *s) {
  if (!s) {
    fputc('-', record);
    return;
  }
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch > ' ' && ch < 0x7f && ch != '%')
      fputc(ch, record);
    else
      fprintf(record, "%%%02X", ch);
  }
}

static const char *err_name(int code) {
  return code ? rd_kafka_err2name((rd_kafka_resp_err_t)code) : "NO_ERROR";
}

/* ---- the transactions ---- */

static struct producer *producer_of(int64_t pid, const char *txnid) {
  for (size_t i = 0; i < nproducers; i++)
    if (producers[i].pid == pid) {
      if (!producers[i].txnid && txnid) producers[i].txnid = strdup(txnid);
      return &producers[i];
    }
  static size_t cap;
  producers = grow(producers, &cap, nproducers + 1, sizeof *producers);
  producers[nproducers] = (struct producer){ .pid = pid, .txnid = txnid ? strdup(txnid) : NULL, .cur = -1 };
  return &producers[nproducers++];
}

/* An InitProducerId of txnid answered with pid: every transaction of txnid still open is
 * aborted, and the other producers of txnid are fenced. */
static void on_init(const char *txnid, int64_t pid, int16_t epoch, int err) {
  if (record) {
    fputs("init txn=", record);
    rec_str(txnid);
    fprintf(record, " pid=%lld epoch=%d error=%s\n", (long long)pid, epoch, err_name(err));
    fflush(record);
  }
  if (err || !txnid) return;
  for (size_t i = 0; i < nproducers; i++) {
    struct producer *p = &producers[i];
    if (!p->txnid || strcmp(p->txnid, txnid)) continue;
    if (p->pid != pid) p->fenced = true;
    if (p->cur < 0) continue;
    txns[p->cur].state = TXN_ABORTED;
    p->cur = -1;
    if (record) {
      fputs("fenced txn=", record);
      rec_str(txnid);
      fprintf(record, " pid=%lld by=%lld\n", (long long)p->pid, (long long)pid);
      fflush(record);
    }
  }
  struct producer *p = producer_of(pid, txnid);
  p->fenced = false;
}

/* A batch appended at offset `base`: a transactional one joins its producer's open transaction
 * (a new one if none is open; one of a fenced producer is aborted from the start). */
static void on_appended(const struct pbatch *b, const char *txnid, int64_t base) {
  if (record) {
    fputs("produce txn=", record);
    rec_str(txnid);
    fprintf(record, " pid=%lld epoch=%d topic=", (long long)b->pid, b->epoch);
    rec_str(b->topic);
    fprintf(record, " partition=%d offset=%lld count=%d transactional=%d\n", b->part, (long long)base, b->count,
            b->txnal);
    fflush(record);
  }
  if (!b->txnal) return;
  struct producer *p = producer_of(b->pid, txnid);
  if (p->cur < 0) {
    static size_t cap;
    txns = grow(txns, &cap, ntxns + 1, sizeof *txns);
    txns[ntxns] = (struct txn){ .pid = b->pid, .state = p->fenced ? TXN_ABORTED : TXN_OPEN };
    p->cur = (long)ntxns++;
  }
  struct txn *t = &txns[p->cur];
  int64_t last = base + b->last_delta;
  for (size_t i = 0; i < t->nr; i++)
    if (t->r[i].part == b->part && !strcmp(t->r[i].topic, b->topic)) {
      if (base < t->r[i].first) t->r[i].first = base;
      if (last > t->r[i].last) t->r[i].last = last;
      return;
    }
  t->r = realloc(t->r, (t->nr + 1) * sizeof *t->r);
  if (!t->r) abort();
  t->r[t->nr++] = (struct range){ strdup(b->topic), b->part, base, last };
}

/* EndTxn answered err (0: as asked); returns the error to answer (PRODUCER_FENCED for a fenced
 * producer, which the mock does not know). */
static int on_end_txn(const struct req *q, int err) {
  struct producer *p = producer_of(q->pid, q->txnid);
  if (!err && p->fenced) err = ERR_PRODUCER_FENCED;
  if (!err && p->cur >= 0) {
    txns[p->cur].state = q->commit ? TXN_COMMITTED : TXN_ABORTED;
    p->cur = -1;
  }
  if (record) {
    fputs("end_txn txn=", record);
    rec_str(q->txnid);
    fprintf(record, " pid=%lld epoch=%d result=%s error=%s\n", (long long)q->pid, q->epoch,
            q->commit ? "commit" : "abort", err_name(err));
    fflush(record);
  }
  return err;
}

/* The transaction of producer pid's batch at `base` of topic/part, or NULL (not known yet: its
 * Produce response is still to come, so it belongs to the producer's open transaction). */
static struct txn *txn_at(int64_t pid, const char *topic, int32_t part, int64_t base, const struct range **r) {
  for (size_t i = ntxns; i-- > 0;) {
    if (txns[i].pid != pid) continue;
    for (size_t j = 0; j < txns[i].nr; j++) {
      const struct range *x = &txns[i].r[j];
      if (x->part == part && base >= x->first && base <= x->last && !strcmp(x->topic, topic)) {
        *r = x;
        return &txns[i];
      }
    }
  }
  return NULL;
}

/* ---- requests ---- */

static void req_free(struct req *q) {
  free(q->txnid);
  for (size_t i = 0; i < q->nb; i++) free(q->b[i].topic);
  free(q->b);
}

/* Produce v3-v7: transactional_id, acks, timeout, [topic [partition records]]; each record batch
 * of magic 2 becomes a pbatch. */
static void parse_produce(struct rd *r, struct req *q) {
  q->txnid = rd_str(r, false);
  rd_int(r, 2);
  rd_int(r, 4);
  size_t cap = 0;
  for (int64_t nt = rd_int(r, 4); nt > 0 && !r->bad; nt--) {
    char *topic = rd_str(r, false);
    for (int64_t np = rd_int(r, 4); np > 0 && !r->bad && topic; np--) {
      int32_t part = (int32_t)rd_int(r, 4);
      int64_t size = rd_int(r, 4);
      const uint8_t *p = size > 0 ? take(r, (size_t)size) : NULL;
      for (size_t at = 0; p && at + BATCH_HEADER <= (size_t)size;) {
        const uint8_t *h = p + at;
        size_t len = 12 + (size_t)get_be(h + 8, 4);
        if (len < BATCH_HEADER || len > (size_t)size - at || h[16] != 2) break;
        q->b = grow(q->b, &cap, q->nb + 1, sizeof *q->b);
        q->b[q->nb++] = (struct pbatch){ .topic = strdup(topic),
                                         .part = part,
                                         .txnal = (get_be(h + 21, 2) & ATTR_TRANSACTIONAL) != 0,
                                         .last_delta = (int32_t)get_be(h + 23, 4),
                                         .pid = (int64_t)get_be(h + 43, 8),
                                         .epoch = (int16_t)get_be(h + 51, 2),
                                         .count = (int32_t)get_be(h + 57, 4) };
        at += len;
      }
    }
    free(topic);
  }
}

static void on_request(struct conn *c, const uint8_t *f, size_t n) {
  struct rd r = { f, n, 0, false };
  struct req q = { 0 };
  q.api = (int16_t)rd_int(&r, 2); /* one by one: an initializer's order is unspecified */
  q.ver = (int16_t)rd_int(&r, 2);
  q.corr = (int32_t)rd_int(&r, 4);
  if (r.bad) return;
  free(rd_str(&r, false)); /* client_id */
  bool flexible = q.api == API_INIT_PID && q.ver >= 2;
  if (flexible) rd_tags(&r);
  if (q.api == API_PRODUCE && q.ver >= 3 && q.ver <= 7) {
    parse_produce(&r, &q);
  } else if (q.api == API_FETCH && q.ver >= 4 && q.ver <= 11) {
    rd_int(&r, 4);
    rd_int(&r, 4);
    rd_int(&r, 4);
    rd_int(&r, 4);
    q.isolation = (int8_t)rd_int(&r, 1);
  } else if (q.api == API_END_TXN && q.ver <= 1) {
    q.txnid = rd_str(&r, false);
    q.pid = rd_int(&r, 8);
    q.epoch = (int16_t)rd_int(&r, 2);
    q.commit = rd_int(&r, 1) != 0;
  } else if (q.api == API_INIT_PID && q.ver <= 4) {
    q.txnid = rd_str(&r, flexible);
  } else if (q.api == API_PRODUCE || q.api == API_FETCH || q.api == API_END_TXN || q.api == API_INIT_PID) {
    fprintf(stderr, "sf-kafka-mock: warning: API %d version %d is not looked at\n", q.api, q.ver);
    return;
  } else {
    return; /* no response is looked at */
  }
  if (r.bad) {
    req_free(&q);
    return;
  }
  c->reqs = realloc(c->reqs, (c->nreqs + 1) * sizeof *c->reqs);
  if (!c->reqs) abort();
  c->reqs[c->nreqs++] = q;
}

/* ---- responses ---- */

static uint32_t crc32c(const uint8_t *p, size_t n) {
  uint32_t c = ~0u;
  while (n--) {
    c ^= *p++;
    for (int k = 0; k < 8; k++) c = c >> 1 ^ (0x82F63B78u & (0u - (c & 1)));
  }
  return ~c;
}

/* An ABORT control batch of pid/epoch at `offset` (one record: key version 0 type 0, value
 * version 0 coordinator epoch 0), timestamps `ts`. */
static void put_abort_marker(struct buf *b, int64_t offset, int32_t leader_epoch, int64_t ts, int64_t pid,
                             int16_t epoch) {
  static const uint8_t record[] = { 0x20, 0, 0, 0, 0x08, 0, 0, 0, 0, 0x0c, 0, 0, 0, 0, 0, 0, 0 };
  size_t start = b->len;
  put_be(b, (uint64_t)offset, 8);
  put_be(b, BATCH_HEADER - 12 + sizeof record, 4);
  put_be(b, (uint32_t)leader_epoch, 4);
  put_be(b, 2, 1);
  put_be(b, 0, 4); /* the CRC, below */
  put_be(b, ATTR_TRANSACTIONAL | ATTR_CONTROL, 2);
  put_be(b, 0, 4);
  put_be(b, (uint64_t)ts, 8);
  put_be(b, (uint64_t)ts, 8);
  put_be(b, (uint64_t)pid, 8);
  put_be(b, (uint16_t)epoch, 2);
  put_be(b, 0xffffffffu, 4);
  put_be(b, 1, 4);
  put(b, record, sizeof record);
  set_be(b->p + start + 17, crc32c(b->p + start + 21, b->len - start - 21), 4);
}

/* One partition's records (size bytes at p) of topic/part, for a read_committed consumer: the
 * AbortedTransactions entries to add go to `aborted` (pid, first offset pairs, 16 bytes each) and
 * the records, with ABORT markers, to `out`. Returns whether anything was added. */
static bool fix_records(const char *topic, int32_t part, const uint8_t *p, size_t size, struct buf *aborted,
                        struct buf *out) {
  bool changed = false;
  size_t at = 0;
  while (at + BATCH_HEADER <= size) {
    const uint8_t *h = p + at;
    size_t len = 12 + (size_t)get_be(h + 8, 4);
    if (len < BATCH_HEADER || len > size - at || h[16] != 2) break;
    put(out, h, len);
    at += len;
    int attrs = (int)get_be(h + 21, 2);
    if ((attrs & (ATTR_TRANSACTIONAL | ATTR_CONTROL)) != ATTR_TRANSACTIONAL) continue;
    int64_t base = (int64_t)get_be(h, 8), pid = (int64_t)get_be(h + 43, 8);
    int64_t last = base + (int32_t)get_be(h + 23, 4);
    const struct range *x = NULL;
    struct txn *t = txn_at(pid, topic, part, base, &x);
    if (t && t->state == TXN_COMMITTED) continue;
    int64_t first = t ? x->first : base;
    bool listed = false;
    for (size_t i = 0; i < aborted->len; i += 16)
      listed |= (int64_t)get_be(aborted->p + i, 8) == pid && (int64_t)get_be(aborted->p + i + 8, 8) == first;
    if (!listed) {
      put_be(aborted, (uint64_t)pid, 8);
      put_be(aborted, (uint64_t)first, 8);
    }
    changed = true;
    if (t && t->state == TXN_ABORTED && last == x->last)
      put_abort_marker(out, last, (int32_t)get_be(h + 12, 4), (int64_t)get_be(h + 35, 8), pid,
                       (int16_t)get_be(h + 51, 2));
  }
  put(out, p + at, size - at); /* a batch cut short by the fetch's size limit, as it came */
  return changed;
}

/* A Fetch v4-v11 response frame (after its size) to a read_committed request, rewritten into
 * `w` (size included); false: nothing to change, or it does not parse. */
static bool fix_fetch(const uint8_t *f, size_t n, int ver, struct buf *w) {
  struct rd r = { f, n, 0, false };
  put_be(w, 0, 4); /* the size, at the end */
  size_t fixed = 4 + 4 + (ver >= 7 ? 2 + 4 : 0); /* correlation id, throttle_time_ms, error, session id */
  const uint8_t *head = take(&r, fixed);
  if (!head) return false;
  put(w, head, fixed);
  bool changed = false;
  int64_t nt = rd_int(&r, 4);
  put_be(w, (uint64_t)nt, 4);
  for (; nt > 0 && !r.bad; nt--) {
    size_t name_at = r.at;
    char *topic = rd_str(&r, false);
    if (!topic) return false;
    put(w, f + name_at, r.at - name_at);
    int64_t np = rd_int(&r, 4);
    put_be(w, (uint64_t)np, 4);
    for (; np > 0 && !r.bad; np--) {
      /* partition, error, high watermark, last stable offset, log start offset */
      size_t pfixed = 4 + 2 + 8 + 8 + (ver >= 5 ? 8 : 0);
      const uint8_t *ph = take(&r, pfixed);
      int64_t na = rd_int(&r, 4);
      const uint8_t *old = take(&r, na > 0 ? (size_t)na * 16 : 0);
      const uint8_t *replica = ver >= 11 ? take(&r, 4) : NULL;
      int64_t size = rd_int(&r, 4);
      const uint8_t *rec = size > 0 ? take(&r, (size_t)size) : NULL;
      if (r.bad) break;
      struct buf aborted = { 0 }, records = { 0 };
      if (na > 0) put(&aborted, old, (size_t)na * 16);
      if (rec && fix_records(topic, (int32_t)get_be(ph, 4), rec, (size_t)size, &aborted, &records)) changed = true;
      put(w, ph, pfixed);
      put_be(w, aborted.len ? aborted.len / 16 : (uint64_t)na, 4);
      put(w, aborted.p, aborted.len);
      if (replica) put(w, replica, 4);
      put_be(w, rec ? records.len : (uint64_t)size, 4);
      put(w, records.p, records.len);
      free(aborted.p);
      free(records.p);
    }
    free(topic);
  }
  if (r.bad || !changed) return false;
  put(w, f + r.at, n - r.at); /* nothing, in these versions */
  set_be(w->p, w->len - 4, 4);
  return true;
}

/* A response frame (after its size) of connection c: its request's effects, and the frame to
 * send (the frame itself, or rewritten) appended to out. */
static void on_response(struct conn *c, const uint8_t *f, size_t n, struct buf *out) {
  size_t before = out->len;
  struct rd r = { f, n, 0, false };
  int32_t corr = (int32_t)rd_int(&r, 4);
  size_t i = 0;
  while (i < c->nreqs && c->reqs[i].corr != corr) i++;
  if (r.bad || i == c->nreqs) goto as_is;
  struct req q = c->reqs[i];
  c->reqs[i] = c->reqs[--c->nreqs];
  if (q.api == API_PRODUCE) {
    for (int64_t nt = rd_int(&r, 4); nt > 0 && !r.bad; nt--) {
      char *topic = rd_str(&r, false);
      for (int64_t np = rd_int(&r, 4); np > 0 && !r.bad && topic; np--) {
        int32_t part = (int32_t)rd_int(&r, 4);
        int err = (int)rd_int(&r, 2);
        int64_t base = rd_int(&r, 8);
        rd_int(&r, 8);                  /* log_append_time_ms */
        if (q.ver >= 5) rd_int(&r, 8); /* log_start_offset */
        for (size_t k = 0; k < q.nb && !r.bad && !err; k++)
          if (q.b[k].part == part && !strcmp(q.b[k].topic, topic)) {
            on_appended(&q.b[k], q.txnid, base);
            base += q.b[k].last_delta + 1;
          }
      }
      free(topic);
    }
  } else if (q.api == API_END_TXN) {
    rd_int(&r, 4);
    int err = (int)rd_int(&r, 2);
    if (!r.bad) {
      int answer = on_end_txn(&q, err);
      if (answer != err) {
        put_be(out, n, 4);
        put(out, f, n);
        set_be(out->p + before + 4 + 4 + 4, (uint16_t)answer, 2);
      }
    }
  } else if (q.api == API_INIT_PID) {
    if (q.ver >= 2) rd_tags(&r);
    rd_int(&r, 4);
    int err = (int)rd_int(&r, 2);
    int64_t pid = rd_int(&r, 8);
    int16_t epoch = (int16_t)rd_int(&r, 2);
    if (!r.bad) on_init(q.txnid, pid, epoch, err);
  } else if (q.api == API_FETCH && q.isolation == 1) {
    if (!fix_fetch(f, n, q.ver, out)) out->len = before;
  }
  req_free(&q);
as_is:
  if (out->len == before) {
    put_be(out, n, 4);
    put(out, f, n);
  }
}

/* ---- connections ---- */

static struct conn *conn_of(int fd) {
  for (size_t i = 0; i < nconns; i++)
    if (conns[i].fd == fd) return &conns[i];
  return NULL;
}

static void conn_add(int fd) {
  if (fd < 0 || fd >= MAX_FD || !atomic_load(&started)) return;
  pthread_mutex_lock(&lock);
  static size_t cap;
  conns = grow(conns, &cap, nconns + 1, sizeof *conns);
  conns[nconns++] = (struct conn){ .fd = fd };
  atomic_store(&tracked[fd], true);
  pthread_mutex_unlock(&lock);
}

static bool is_tracked(int fd) {
  return fd >= 0 && fd < MAX_FD && atomic_load(&tracked[fd]);
}

/* The whole frames at the head of b: each handed to `frame` (requests: out is NULL), the rest
 * kept. A size that cannot be sets *raw: the connection's bytes pass unlooked at from then on. */
static void frames(struct conn *c, struct buf *b, bool *raw, struct buf *out) {
  size_t at = 0;
  while (!*raw && b->len - at >= 4) {
    uint32_t size = (uint32_t)get_be(b->p + at, 4);
    if (size < 4 || size > FRAME_MAX) {
      *raw = true;
      break;
    }
    if (b->len - at - 4 < size) break;
    if (out)
      on_response(c, b->p + at + 4, size, out);
    else
      on_request(c, b->p + at + 4, size);
    at += 4 + size;
  }
  if (*raw && out) { /* what is held goes out as it is */
    put(out, b->p + at, b->len - at);
    at = b->len;
  }
  if (*raw && !out) at = b->len;
  memmove(b->p, b->p + at, b->len - at);
  b->len -= at;
}

static void saw_read(int fd, const struct iovec *iov, size_t niov, size_t n) {
  pthread_mutex_lock(&lock);
  struct conn *c = conn_of(fd);
  if (c && !c->raw_in) {
    for (size_t i = 0; i < niov && n; i++) {
      size_t k = iov[i].iov_len < n ? iov[i].iov_len : n;
      put(&c->in, iov[i].iov_base, k);
      n -= k;
    }
    frames(c, &c->in, &c->raw_in, NULL);
  }
  pthread_mutex_unlock(&lock);
}

/* All of b to fd, waiting while the socket is full; 0, or -1 with errno. */
static int send_all(int fd, const struct buf *b) {
  for (size_t at = 0; at < b->len;) {
    ssize_t k = syscall(SYS_sendto, fd, b->p + at, b->len - at, MSG_NOSIGNAL | MSG_DONTWAIT, NULL, 0);
    if (k > 0) {
      at += (size_t)k;
    } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      struct pollfd p = { .fd = fd, .events = POLLOUT };
      poll(&p, 1, 1000);
    } else if (k < 0 && errno != EINTR) {
      return -1;
    }
  }
  return 0;
}

/* What the mock writes to a tracked fd: held until its frames are whole, then sent. */
static ssize_t wrote(int fd, const struct iovec *iov, size_t niov) {
  struct buf out = { 0 };
  size_t total = 0;
  pthread_mutex_lock(&lock);
  struct conn *c = conn_of(fd);
  for (size_t i = 0; c && i < niov; i++) {
    put(&c->out, iov[i].iov_base, iov[i].iov_len);
    total += iov[i].iov_len;
  }
  if (c) frames(c, &c->out, &c->raw_out, &out);
  pthread_mutex_unlock(&lock);
  if (!c) return -2; /* closed meanwhile: not ours */
  int st = send_all(fd, &out);
  free(out.p);
  return st < 0 ? -1 : (ssize_t)total;
}

/* ---- the calls librdkafka's mock makes ---- */

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
  int s = (int)syscall(SYS_accept4, fd, addr, len, flags);
  if (s >= 0) conn_add(s);
  return s;
}

int accept(int fd, struct sockaddr *addr, socklen_t *len) {
  return accept4(fd, addr, len, 0);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags) {
  ssize_t n = syscall(SYS_recvmsg, fd, msg, flags);
  if (n > 0 && !(flags & MSG_PEEK) && is_tracked(fd)) saw_read(fd, msg->msg_iov, msg->msg_iovlen, (size_t)n);
  return n;
}

ssize_t recv(int fd, void *b, size_t len, int flags) {
  ssize_t n = syscall(SYS_recvfrom, fd, b, len, flags, NULL, NULL);
  struct iovec v = { b, len };
  if (n > 0 && !(flags & MSG_PEEK) && is_tracked(fd)) saw_read(fd, &v, 1, (size_t)n);
  return n;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
  if (is_tracked(fd)) {
    ssize_t n = wrote(fd, msg->msg_iov, msg->msg_iovlen);
    if (n != -2) return n;
  }
  return syscall(SYS_sendmsg, fd, msg, flags);
}

ssize_t send(int fd, const void *b, size_t len, int flags) {
  if (is_tracked(fd)) {
    struct iovec v = { (void *)b, len };
    ssize_t n = wrote(fd, &v, 1);
    if (n != -2) return n;
  }
  return syscall(SYS_sendto, fd, b, len, flags, NULL, 0);
}

int close(int fd) {
  if (is_tracked(fd)) {
    pthread_mutex_lock(&lock);
    struct conn *c = conn_of(fd);
    if (c) {
      free(c->in.p);
      free(c->out.p);
      for (size_t i = 0; i < c->nreqs; i++) req_free(&c->reqs[i]);
      free(c->reqs);
      *c = conns[--nconns];
    }
    atomic_store(&tracked[fd], false);
    pthread_mutex_unlock(&lock);
  }
  return (int)syscall(SYS_close, fd);
}
