/* kafka_source.c: the KafkaSource kind, a source reading the records of one Kafka topic through
 * kafka.h (no librdkafka here), each record's value one CSV row without a header (csv.h), in the
 * schema's attribute order, or with `format` = `json` one JSON object whose members are the
 * attributes by name (json_row.h) (docs/language.md, "KafkaSource").
 *
 * Order. The partitions read are merged as a time-ordered fan-in: each partition has a head (its
 * next record, parsed), and the source emits the head of smallest time, ties by partition number;
 * a partition's records keep their offset order. The time is the `time` attribute's value when
 * the source declares event time, else the record's timestamp. A partition with no head yet is
 * waited for, unless it is live (`end` = `never`) and idle: the broker's latest answer to its
 * fetches put its high watermark (its end) at the offset it was read to, so it held no record the
 * source has not read; an idle partition does not hold the others back. So two runs over the
 * same records emit the same stream, at any width downstream, and a live source too over the
 * records the topic holds when it reads them; a record produced into an idle partition later
 * comes after what was emitted before it was fetched.
 *
 * End. `end` = `high-watermark`: each partition is read up to the high watermark it had when the
 * job started (open), then the source ends; `never` (the default): it reads on until the job is
 * drained or stopped. `count` = N ends it after N tuples too.
 *
 * Checkpoints. The snapshot holds, per partition read, the offset of its first record not yet
 * emitted (nor skipped: onerror = skip) and the offset it ends at, then the tuples emitted and the
 * skipped rows; a restore reads on from those offsets up to those ends, so the restored run emits
 * exactly what the uninterrupted one would have from there, new records produced in between
 * included only with `end` = `never`. Records skipped are counted when they are read, which is
 * when their partition needs a head; the partition's offset moves past them then, so a restore
 * neither counts them twice nor loses them. */
#include "csv.h"
#include "json_row.h"
#include "kafka.h"
#include "rows.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  FETCH = 256,               /* records fetched at once from one partition */
  WAIT_MS = 50,              /* a wait for a partition's records: the drain and the stop are looked at this often */
  DEFAULT_TIMEOUT_MS = 10000, /* reaching the brokers, without --connect-timeout */
  QUOTE_MAX = 40,            /* longest prefix of a field quoted in a message */
};

typedef struct Part {
  int32_t id;            /* the partition's number */
  int64_t next;          /* the offset of its first record not emitted nor skipped */
  int64_t fetched;       /* the offset after the last record fetched */
  int64_t end;           /* `end` = `high-watermark`: the offset it ends at (-1: never) */
  int64_t lo, hi;        /* its watermarks at the start */
  bool started;          /* kafka_start was called */
  bool done;             /* read to its end */
  int64_t eof;           /* live: the offset the broker last reported its end at (-1: none) */
  KafkaRecord buf[FETCH]; /* fetched, not yet a head */
  int nbuf, at;
  Tuple *head;           /* its next record as a tuple (NULL: none yet) */
  int64_t head_time;     /* its time (record timestamp or `time` attribute) */
  int64_t head_offset;
} Part;

typedef struct KafkaSource {
  KafkaReader *k;
  const char *brokers, *topic;
  Part *parts;           /* the partitions read, by number */
  int nparts;
  bool live;             /* `end` = `never` */
  uint64_t count;        /* `count` (0: no limit) */
  bool skip;             /* `onerror` = `skip` */
  int time_slot;         /* the `time` attribute (-1: the record timestamp orders) */
  CsvReader r;           /* parses one record's value (`format` = `csv`) */
  bool reader;           /* r is initialized */
  JsonRowReader *json;   /* parses one record's value (`format` = `json`; NULL: csv) */
  const char *cur;       /* the value r reads, and what is left of it */
  size_t cur_len;
  Value *vals;
  int nvals;
  uint64_t next_src;     /* src of the next tuple: tuples emitted */
  char first_skip[320];  /* the first record skipped: where and what */
} KafkaSource;

static void kafka_source_close(OpInst *op, bool ok);

static void on_log(void *ctx, int level, const char *facility, const char *msg) {
  OpInst *op = ctx;
  rt_warn(op, "librdkafka %s %s: %s", level <= 3 ? "error" : "warning", facility, msg);
}

static ssize_t read_value(void *ctx, char *buf, size_t cap) {
  KafkaSource *s = ctx;
  size_t n = s->cur_len < cap ? s->cur_len : cap;
  memcpy(buf, s->cur, n);
  s->cur += n;
  s->cur_len -= n;
  return (ssize_t)n;
}

/* A decimal integer from lo to hi in text[0..n) into *v. */
static bool int_in(const char *text, size_t n, int64_t lo, int64_t hi, int64_t *v) {
  return n > 0 && number_read(text, n, lo, hi, v) == NUM_OK;
}

static Part *part_of(KafkaSource *s, int64_t id) {
  for (int i = 0; i < s->nparts; i++)
    if (s->parts[i].id == id) return &s->parts[i];
  return NULL;
}

/* `partitions`: the numbers listed (commas or blanks between), each a partition of the topic, in
 * increasing order; all of them without it. */
static int choose_partitions(OpInst *op, KafkaSource *s) {
  int all = kafka_npartitions(s->k);
  s->parts = sf_xmalloc(sizeof *s->parts * ((size_t)all + 1));
  memset(s->parts, 0, sizeof *s->parts * ((size_t)all + 1));
  const char *list = rt_param(op, "partitions");
  if (!list) {
    for (int i = 0; i < all; i++) s->parts[s->nparts++].id = kafka_partition(s->k, i);
    return 0;
  }
  bool *chosen = sf_xmalloc(sizeof *chosen * ((size_t)all + 1));
  memset(chosen, 0, sizeof *chosen * ((size_t)all + 1));
  for (const char *p = list; *p;) {
    size_t blank = strspn(p, ", \t\n");
    p += blank;
    size_t n = strcspn(p, ", \t\n");
    if (!n) break;
    int64_t id;
    int i = -1;
    if (int_in(p, n, 0, INT32_MAX, &id))
      for (int j = 0; j < all; j++)
        if (kafka_partition(s->k, j) == id) i = j;
    if (i < 0) {
      free(chosen);
      return rt_fail(op, "parameter 'partitions': topic '%s' has no partition '%.*s' (it has %d, from 0)", s->topic,
                     (int)n, p, all);
    }
    chosen[i] = true;
    p += n;
  }
  for (int i = 0; i < all; i++)
    if (chosen[i]) s->parts[s->nparts++].id = kafka_partition(s->k, i);
  free(chosen);
  if (!s->nparts) return rt_fail(op, "parameter 'partitions' names no partition");
  return 0;
}

/* `start` and `end`: each partition's first offset and the offset it ends at, from the watermarks
 * its leader has now. */
static int choose_offsets(OpInst *op, KafkaSource *s, int timeout_ms) {
  const char *start = rt_param(op, "start");
  bool latest = start && !strcmp(start, "latest");
  const char *offsets = start && !strncmp(start, "offsets", 7) && (start[7] == ' ' || start[7] == '\t') ? start + 8 : NULL;
  if (start && !latest && !offsets && strcmp(start, "earliest"))
    return rt_fail(op, "parameter 'start' must be 'earliest', 'latest' or 'offsets P:O,...', got '%s'", start);
  char err[512];
  for (int i = 0; i < s->nparts; i++) {
    Part *p = &s->parts[i];
    int64_t lo, hi;
    if (kafka_watermarks(s->k, p->id, &lo, &hi, timeout_ms, err, sizeof err) < 0) return rt_fail(op, "%s", err);
    p->next = latest ? hi : lo;
    p->end = s->live ? -1 : hi;
    p->lo = lo;
    p->hi = hi;
  }
  for (const char *q = offsets; q && *q;) {
    q += strspn(q, ", \t\n");
    size_t n = strcspn(q, ", \t\n");
    if (!n) break;
    const char *colon = memchr(q, ':', n);
    int64_t id, off;
    if (!colon || !int_in(q, (size_t)(colon - q), 0, INT32_MAX, &id) ||
        !int_in(colon + 1, n - (size_t)(colon - q) - 1, 0, INT64_MAX, &off))
      return rt_fail(op, "parameter 'start': '%.*s' is not PARTITION:OFFSET", (int)n, q);
    Part *p = part_of(s, id);
    if (!p) return rt_fail(op, "parameter 'start': partition %" PRId64 " is not one the source reads", id);
    if (off < p->lo || off > p->hi)
      return rt_fail(op, "parameter 'start': partition %" PRId64 " of topic '%s' holds offsets %" PRId64 " to %" PRId64
                         " (its next record gets %" PRId64 "), not %" PRId64, id, s->topic, p->lo, p->hi - 1, p->hi, off);
    p->next = off;
    q += n;
  }
  for (int i = 0; i < s->nparts; i++) {
    s->parts[i].fetched = s->parts[i].next;
    s->parts[i].eof = -1;
  }
  return 0;
}

static int setup(OpInst *op, KafkaSource *s) {
  s->brokers = rt_param(op, "brokers");
  s->topic = rt_param(op, "topic");
  if (!s->brokers || !*s->brokers) return rt_fail(op, "KafkaSource needs parameter 'brokers'");
  if (!s->topic || !*s->topic) return rt_fail(op, "KafkaSource needs parameter 'topic'");
  if (!op->out_schema) return rt_fail(op, "KafkaSource has no output schema");
  const char *format = rt_param(op, "format"), *end = rt_param(op, "end"), *count = rt_param(op, "count");
  if (format && strcmp(format, "csv") && strcmp(format, "json"))
    return rt_fail(op, "unknown format '%s' (the formats are 'csv' and 'json')", format);
  if (end && strcmp(end, "high-watermark") && strcmp(end, "never"))
    return rt_fail(op, "parameter 'end' must be 'high-watermark' or 'never', got '%s'", end);
  s->live = !end || !strcmp(end, "never");
  int64_t n = 0;
  if (count && !int_in(count, strlen(count), 0, INT64_MAX, &n))
    return rt_fail(op, "parameter 'count' must be a non-negative integer, got '%s'", count);
  s->count = (uint64_t)n;
  if (rows_onerror(op, &s->skip) < 0) return -1;
  const char *time = rt_param(op, "time");
  s->time_slot = time ? schema_find_attr(op->out_schema, time) : -1;
  s->nvals = op->out_schema->nattrs;
  s->vals = sf_xmalloc(sizeof *s->vals * ((size_t)s->nvals + 1));
  if (format && !strcmp(format, "json")) {
    s->json = json_row_reader_new(op->out_schema);
  } else {
    csv_reader_init_fn(&s->r, read_value, s);
    s->reader = true;
  }
  int timeout = rt_options(op)->connect_timeout_ms > 0 ? rt_options(op)->connect_timeout_ms : DEFAULT_TIMEOUT_MS;
  char err[512];
  s->k = kafka_open(s->brokers, s->topic, timeout, on_log, op, err, sizeof err);
  if (!s->k) return rt_fail(op, "%s", err);
  if (choose_partitions(op, s) < 0) return -1;
  return choose_offsets(op, s, timeout);
}

static int kafka_source_open(OpInst *op) {
  KafkaSource *s = sf_xmalloc(sizeof *s);
  memset(s, 0, sizeof *s);
  op->state = s;
  if (setup(op, s) == 0) return 0;
  kafka_source_close(op, false); /* the executor closes only operators whose open succeeded */
  return -1;
}

/* Counts a record onerror = skip drops, remembering the first. */
static void skipped(OpInst *op, KafkaSource *s, const KafkaRecord *r, const char *why) {
  if (atomic_load_explicit(&op->n_skipped, memory_order_relaxed) == 0)
    snprintf(s->first_skip, sizeof s->first_skip, "partition %d offset %" PRId64 ": %.250s", (int)r->partition,
             r->offset, why);
  atomic_fetch_add_explicit(&op->n_skipped, 1, memory_order_relaxed);
}

/* The record as a tuple: its value one CSV row of the schema's attributes in order, or one JSON
 * object of them. NULL with what is wrong in why. */
static Tuple *parse(OpInst *op, KafkaSource *s, const KafkaRecord *rec, char *why, size_t cap) {
  const Schema *sc = op->out_schema;
  if (s->json)
    return json_row_read(s->json, rec->value ? rec->value : "", rec->value ? rec->len : 0, s->vals, why, cap) < 0
               ? NULL
               : tuple_new(s->vals, s->nvals);
  s->cur = rec->value ? rec->value : "";
  s->cur_len = rec->value ? rec->len : 0;
  csv_reader_seek(&s->r, 0, 1);
  int rc = csv_read(&s->r);
  if (rc < 0) {
    snprintf(why, cap, "%s", s->r.err);
    return NULL;
  }
  if (rc == 0 || s->r.blank) {
    snprintf(why, cap, "the record's value is empty (expected a CSV row of %d field%s)", sc->nattrs,
             sc->nattrs == 1 ? "" : "s");
    return NULL;
  }
  if (s->r.nfields != sc->nattrs) {
    snprintf(why, cap, "row has %d field%s, schema '%s' has %d", s->r.nfields, s->r.nfields == 1 ? "" : "s",
             sc->name, sc->nattrs);
    return NULL;
  }
  for (int a = 0; a < sc->nattrs; a++) {
    size_t n;
    const char *text = csv_field(&s->r, a, &n);
    if (value_parse(sc->attrs[a].type, text, n, &s->vals[a], NULL) < 0) {
      int shown = n > QUOTE_MAX ? QUOTE_MAX : (int)n;
      snprintf(why, cap, "field '%s': '%.*s%s' is not %s", sc->attrs[a].name, shown, text, n > QUOTE_MAX ? "..." : "",
               rows_type_article(sc->attrs[a].type));
      return NULL;
    }
  }
  Tuple *t = tuple_new(s->vals, s->nvals);
  for (;;) { /* one row: what follows may only be blank lines */
    rc = csv_read(&s->r);
    if (rc == 0) return t;
    if (rc < 0 || !s->r.blank) {
      tuple_unref(t);
      snprintf(why, cap, "the record's value holds more than one CSV row");
      return NULL;
    }
  }
}

/* Gives p a head unless it is done: 1 with one, 0 when p is done, -1 on a failure or a stop, 2
 * when the job drains. With wait_ms < 0 a live partition is waited for; else at most one fetch
 * waits at most wait_ms, and 3 says p has no head yet (for a live partition, p->eof says whether
 * the broker reported its end meanwhile). */
static int fill(OpInst *op, KafkaSource *s, Part *p, int wait_ms) {
  char err[512];
  while (!p->head) {
    if (p->at < p->nbuf) {
      KafkaRecord *rec = &p->buf[p->at++];
      char why[400];
      Tuple *t = p->end >= 0 && rec->offset >= p->end ? NULL : parse(op, s, rec, why, sizeof why);
      if (p->end >= 0 && rec->offset >= p->end) {
        p->done = true; /* produced after the job started: beyond its end */
      } else if (t) {
        p->head = t;
        p->head_offset = rec->offset;
        p->head_time = s->time_slot >= 0 ? t->v[s->time_slot].i : rec->timestamp;
      } else if (s->skip) {
        skipped(op, s, rec, why);
        p->next = rec->offset + 1;
      } else {
        int rc = rt_fail(op, "topic '%s' partition %d offset %" PRId64 ": error: %s", s->topic, (int)p->id,
                         rec->offset, why);
        kafka_release(rec, 1);
        return rc;
      }
      kafka_release(rec, 1);
      if (p->done) {
        kafka_release(p->buf + p->at, p->nbuf - p->at);
        p->at = p->nbuf = 0;
        return 0;
      }
      continue;
    }
    p->at = p->nbuf = 0;
    if (p->end >= 0 && p->fetched >= p->end) {
      p->done = true;
      return 0;
    }
    if (!p->started) {
      if (kafka_start(s->k, p->id, p->fetched, err, sizeof err) < 0) return rt_fail(op, "%s", err);
      p->started = true;
    }
    for (;;) {
      if (rt_stopping(op)) return -1;
      if (rt_draining(op)) return 2;
      int64_t end_offset;
      int got = kafka_fetch(s->k, p->id, wait_ms < 0 ? WAIT_MS : wait_ms, p->buf, FETCH, &end_offset, err, sizeof err);
      if (got < 0) return rt_fail(op, "%s", err);
      if (end_offset > p->eof) p->eof = end_offset; /* after the records fetched with it */
      if (got > 0) {
        p->nbuf = got;
        p->fetched = p->buf[got - 1].offset + 1;
        break;
      }
      if (p->end >= 0 && end_offset >= p->end) { /* its end, past offsets that hold no record */
        p->fetched = end_offset;
        p->done = true;
        return 0;
      }
      if (wait_ms >= 0) return 3;
      rt_idle(op); /* nothing yet: hand on what was emitted */
    }
  }
  return 1;
}

/* Whether live partition p, which has no head (fill found no record fetched), is idle: the
 * broker's latest fetch answer reported its end (its high watermark) at or past the offset it was
 * read to (past it: offsets that hold no record, such as transaction markers). kafka_fetch hands
 * on every record of an answer before the end it reports, and librdkafka keeps fetching, so this
 * needs no round trip to the broker (asking for the watermarks would take one per tuple). */
static bool idle(const Part *p) {
  return p->eof >= 0 && p->eof >= p->fetched;
}

/* Emits partition p's head, the next tuple of the merge, and moves p past it. 0, or -1 as rt_emit. */
static int emit_head(OpInst *op, KafkaSource *s, Part *p) {
  Tuple *t = p->head;
  p->head = NULL;
  p->next = p->head_offset; /* a snapshot in rt_emit: as if this record were not read */
  op->cur_seq = op->cur_src = s->next_src;
  if (rt_emit(op, 0, t) < 0) return -1;
  s->next_src++;
  p->next = p->head_offset + 1;
  return 0;
}

/* `end` = `never`: the heads merged as kafka_source_run does, but a partition without a head does
 * not hold the others back while it is idle. When nothing can go, waits for one partition without
 * a head at a time (in turn), WAIT_MS at most. */
static int run_live(OpInst *op, KafkaSource *s) {
  int turn = 0;
  for (;;) {
    if (s->count && s->next_src >= s->count) return 0;
    if (rt_halting(op)) return 0; /* drained: the stream ends here; stopped: the executor knows */
    Part *min = NULL;
    for (int i = 0; i < s->nparts; i++) {
      Part *p = &s->parts[i];
      int rc = p->head ? 1 : fill(op, s, p, 0);
      if (rc < 0) return -1;
      if (rc == 2) return 0; /* drained: the stream ends here */
      if (rc == 1 && (!min || p->head_time < min->head_time)) min = p; /* ties: the lower partition */
    }
    Part *wait = NULL;
    for (int i = 0; min && i < s->nparts && !wait; i++)
      if (!s->parts[i].head && !idle(&s->parts[i])) wait = &s->parts[i]; /* records to come */
    if (min && !wait) {
      if (emit_head(op, s, min) < 0) return -1;
      continue;
    }
    for (int k = 0; !wait && k < s->nparts; k++) { /* every head there, or none: wait for the next */
      Part *p = &s->parts[(turn + k) % s->nparts];
      if (!p->head) wait = p;
    }
    turn++;
    rt_idle(op); /* hand on what was emitted */
    int rc = wait ? fill(op, s, wait, WAIT_MS) : 3;
    if (rc < 0) return -1;
    if (rc == 2) return 0;
  }
}

static int kafka_source_run(OpInst *op) {
  KafkaSource *s = op->state;
  if (s->live) return run_live(op, s);
  for (;;) {
    if (s->count && s->next_src >= s->count) return 0;
    if (rt_halting(op)) return 0; /* drained: the stream ends here; stopped: the executor knows */
    Part *min = NULL;
    for (int i = 0; i < s->nparts; i++) {
      Part *p = &s->parts[i];
      if (p->done) continue;
      int rc = fill(op, s, p, -1);
      if (rc < 0) return -1;
      if (rc == 2) return 0; /* drained: the stream ends here */
      if (rc == 0) continue;
      if (!min || p->head_time < min->head_time) min = p; /* ties: the lower partition, listed first */
    }
    if (!min) return 0;
    if (emit_head(op, s, min) < 0) return -1;
  }
}

static int kafka_source_process(OpInst *op, int port, Tuple *t) {
  (void)port;
  tuple_unref(t);
  return rt_fail(op, "a KafkaSource has no input");
}

static int kafka_source_snapshot(OpInst *op, Buf *out) {
  KafkaSource *s = op->state;
  snap_u64(out, (uint64_t)s->nparts);
  for (int i = 0; i < s->nparts; i++) {
    snap_i64(out, s->parts[i].id);
    snap_i64(out, s->parts[i].next);
    snap_i64(out, s->parts[i].end);
  }
  snap_u64(out, s->next_src);
  snap_u64(out, atomic_load(&op->n_skipped));
  snap_bytes(out, s->first_skip, strlen(s->first_skip));
  return 0;
}

static int kafka_source_restore(OpInst *op, SnapIn *in) {
  KafkaSource *s = op->state;
  uint64_t n = snap_get_u64(in);
  if (in->bad || n != (uint64_t)s->nparts)
    return rt_fail(op, "the checkpoint read %llu partition%s of topic '%s', this run reads %d (did "
                       "the topic change?)", (unsigned long long)n, n == 1 ? "" : "s", s->topic, s->nparts);
  for (int i = 0; i < s->nparts; i++) {
    int64_t id = snap_get_i64(in), next = snap_get_i64(in), end = snap_get_i64(in);
    if (in->bad) break;
    if (id != s->parts[i].id)
      return rt_fail(op, "the checkpoint read partition %" PRId64 " of topic '%s', this run reads "
                         "partition %d there (did the topic change?)", id, s->topic, (int)s->parts[i].id);
    if (next < 0 || end < -1) {
      in->bad = true;
      break;
    }
    Part *p = &s->parts[i];
    if (next < p->lo || next > p->hi)
      return rt_fail(op, "partition %d of topic '%s' holds offsets %" PRId64 " to %" PRId64
                         ", the checkpoint goes on from offset %" PRId64 " (records removed since, or another "
                         "topic of that name?)", (int)p->id, s->topic, p->lo, p->hi - 1, next);
    s->parts[i].next = s->parts[i].fetched = next;
    s->parts[i].end = end;
  }
  s->next_src = snap_get_u64(in);
  uint64_t skips = snap_get_u64(in);
  size_t len;
  const char *first = snap_get_bytes(in, &len);
  if (!snap_done(in) || len >= sizeof s->first_skip) return rt_fail(op, "snapshot truncated or malformed");
  atomic_store(&op->n_skipped, skips);
  memcpy(s->first_skip, first, len);
  s->first_skip[len] = 0;
  return 0;
}

static void kafka_source_close(OpInst *op, bool ok) {
  (void)ok;
  KafkaSource *s = op->state;
  if (!s) return;
  unsigned long long skips = atomic_load(&op->n_skipped);
  if (skips)
    rt_warn(op, "skipped %llu malformed record%s of topic '%s' (the first: %s)", skips, skips == 1 ? "" : "s",
            s->topic, s->first_skip);
  for (int i = 0; i < s->nparts; i++) {
    Part *p = &s->parts[i];
    kafka_release(p->buf + p->at, p->nbuf - p->at);
    if (p->head) tuple_unref(p->head);
  }
  kafka_close(s->k);
  if (s->reader) csv_reader_release(&s->r);
  json_row_reader_free(s->json);
  free(s->parts);
  free(s->vals);
  free(s);
  op->state = NULL;
}

const OpKindImpl op_kafka_source = {
  .kind = KIND_KAFKASOURCE,
  .open = kafka_source_open,
  .run = kafka_source_run,
  .process = kafka_source_process,
  .close = kafka_source_close,
  .snapshot = kafka_source_snapshot,
  .restore = kafka_source_restore,
};
