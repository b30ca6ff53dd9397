/* test_wire.c: the wire format (rt/wire.c): batches and control messages survive encoding and
 * decoding, and decoding refuses what a hostile peer could send, above all a batch with more items
 * than the configured limit, before protobuf-c allocates anything for it. */
#include <check.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check_helper.h"
#include "rt.h"
#include "wire.h"

static Attr attrs[] = {{.name = "id", .type = TYPE_INT}, {.name = "v", .type = TYPE_INT}};
static const Schema schema = {.name = "T", .attrs = attrs, .nattrs = 2};

static long maxrss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* Appends a protobuf varint. */
static size_t put_varint(uint8_t *p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (uint8_t)v;
  return n;
}

/* A Batch of edge "e" with n PULSE items (kinds, seqs and srcs packed): 3 bytes per item. */
static uint8_t *pulses(size_t n, size_t *len) {
  uint8_t *p = malloc(3 * n + 64), *q = p;
  *q++ = 0x0a;
  *q++ = 1;
  *q++ = 'e';
  for (int field = 2; field <= 4; field++) {
    *q++ = (uint8_t)(field << 3 | 2);
    q += put_varint(q, n);
    memset(q, field == 2 ? 1 : 0, n); /* kind PULSE = 1; seq and src 0 */
    q += n;
  }
  *len = (size_t)(q - p);
  return p;
}

static void free_items(Item *items, int n) {
  for (int i = 0; i < n; i++)
    if (item_has_tuple(items[i].kind)) tuple_unref(items[i].t);
  free(items);
}

START_TEST(test_roundtrip) {
  Item in[4];
  for (int i = 0; i < 3; i++) {
    Value v[2];
    value_put_int(&v[0], i);
    value_put_int(&v[1], -1000 * i);
    in[i] = (Item){.kind = ITEM_TUPLE, .seq = (uint64_t)i, .src = (uint64_t)i + 7, .t = tuple_new(v, 2)};
  }
  in[3] = (Item){.kind = ITEM_FINAL, .seq = 3, .src = 10};
  Buf b;
  buf_init(&b);
  wire_encode("e", &schema, in, 4, &b);
  Item *out;
  int n;
  char err[200] = "";
  ck_assert_msg(wire_decode(b.p, b.n, "e", &schema, 4, &out, &n, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(n, 4);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(out[i].kind, ITEM_TUPLE);
    ck_assert_uint_eq(out[i].seq, (uint64_t)i);
    ck_assert_uint_eq(out[i].src, (uint64_t)i + 7);
    ck_assert_int_eq(out[i].t->v[0].i, i);
    ck_assert_int_eq(out[i].t->v[1].i, -1000 * i);
  }
  ck_assert_int_eq(out[3].kind, ITEM_FINAL);
  free_items(out, n);
  /* one item more than the limit */
  ck_assert_int_eq(wire_decode(b.p, b.n, "e", &schema, 3, &out, &n, err, sizeof err), -1);
  ck_assert_str_eq(err, "batch of 4 items exceeds the limit of 3 items per batch");
  ck_assert_int_eq(wire_decode(b.p, b.n, "f", &schema, 4, &out, &n, err, sizeof err), -1);
  ck_assert_str_eq(err, "batch for edge 'e' arrived on edge 'f'");
  for (int i = 0; i < 3; i++) tuple_unref(in[i].t);
  buf_release(&b);
}
END_TEST

/* Every type survives, strings of every length (their bytes in the tuple's slab, not in the
 * message), punctuation between tuples; the tuples of one batch share a slab, which stays while
 * any of them does: freed on another thread in another order, the last one kept after the
 * message and the others are gone, every value is still right (ASan would see a slab freed
 * early, LeakSanitizer one never freed). */
static Attr all_attrs[] = {{.name = "i", .type = TYPE_INT}, {.name = "s", .type = TYPE_STRING},
                           {.name = "d", .type = TYPE_DOUBLE}, {.name = "b", .type = TYPE_BOOL},
                           {.name = "t", .type = TYPE_STRING}};
static const Schema all_schema = {.name = "All", .attrs = all_attrs, .nattrs = 5};
enum { ALL_N = 300 };

static char text_of(int i, size_t j) {
  return (char)('a' + (i * 7 + (int)j) % 26);
}

static size_t len_of(int i) {
  static const size_t lens[] = {0, 1, 17, 100, 5000};
  return lens[i % 5];
}

static void check_all(const Item *it, int i) {
  const Value *v = it->t->v;
  bool ok = it->kind == ITEM_TUPLE && it->t->n == 5 && v[0].type == TYPE_INT && v[0].i == -3LL * i &&
            v[1].type == TYPE_STRING && v[1].s.n == len_of(i) && v[2].type == TYPE_DOUBLE && v[2].d == i * 0.25 &&
            v[3].type == TYPE_BOOL && v[3].b == (i % 3 == 0) && v[4].type == TYPE_STRING && v[4].s.n == len_of(i + 1);
  for (size_t j = 0; ok && j < v[1].s.n; j++) ok = v[1].s.p[j] == text_of(i, j);
  for (size_t j = 0; ok && j < v[4].s.n; j++) ok = v[4].s.p[j] == text_of(i + 1, j);
  ck_assert_msg(ok, "tuple %d decoded wrong", i);
}

static Item *all_out;
static void *drop_others(void *arg) {
  int n = *(int *)arg;
  for (int i = n - 1; i >= 1; i--)
    if (all_out[i].kind == ITEM_TUPLE) tuple_unref(all_out[i].t);
  return NULL;
}

START_TEST(test_slab_types) {
  static char text[2][5000];
  Item in[ALL_N + ALL_N / 10];
  int n = 0;
  for (int i = 0; i < ALL_N; i++) {
    for (int k = 0; k < 2; k++)
      for (size_t j = 0; j < len_of(i + k); j++) text[k][j] = text_of(i + k, j);
    Value v[5];
    value_put_int(&v[0], -3LL * i);
    value_put_string(&v[1], text[0], len_of(i));
    value_put_double(&v[2], i * 0.25);
    value_put_bool(&v[3], i % 3 == 0);
    value_put_string(&v[4], text[1], len_of(i + 1));
    in[n] = (Item){.kind = ITEM_TUPLE, .seq = (uint64_t)n, .src = (uint64_t)n, .t = tuple_new(v, 5)};
    n++;
    if (i % 10 == 9) {
      in[n] = (Item){.kind = ITEM_PULSE, .seq = (uint64_t)n, .src = (uint64_t)n};
      n++;
    }
  }
  Buf b;
  buf_init(&b);
  wire_encode("e", &all_schema, in, n, &b);
  int got;
  char err[200] = "";
  ck_assert_msg(wire_decode(b.p, b.n, "e", &all_schema, n, &all_out, &got, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(got, n);
  buf_release(&b);
  for (int i = 0, t = 0; i < n; i++) {
    ck_assert_uint_eq(all_out[i].seq, (uint64_t)i);
    if (in[i].kind == ITEM_TUPLE) check_all(&all_out[i], t++);
    else ck_assert_int_eq(all_out[i].kind, ITEM_PULSE);
  }
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, drop_others, &n), 0);
  pthread_join(th, NULL);
  check_all(&all_out[0], 0);
  tuple_unref(all_out[0].t);
  free(all_out);
  for (int i = 0; i < n; i++)
    if (in[i].kind == ITEM_TUPLE) tuple_unref(in[i].t);
}
END_TEST

/* The items of a batch are counted on the wire before anything is unpacked, eight bytes of a
 * packed column at a time: for every count around those eight bytes and varints of 1 to 10 bytes,
 * the count is exact (a batch of n items passes a limit of n and is refused by n - 1, naming n). */
START_TEST(test_count_items) {
  for (int n = 1; n <= 40; n++) {
    Item in[40];
    for (int i = 0; i < n; i++) {
      uint64_t big = (uint64_t)1 << ((i * 7 + n) % 64); /* 1 to 10 varint bytes */
      in[i] = (Item){.kind = i % 3 ? ITEM_PULSE : ITEM_PROGRESS, .seq = big + (uint64_t)i, .src = big >> 1};
    }
    for (int i = 1; i < n; i++) { /* positions never go back */
      if (in[i].seq < in[i - 1].seq) in[i].seq = in[i - 1].seq;
      if (in[i].src < in[i - 1].src) in[i].src = in[i - 1].src;
    }
    Buf b;
    buf_init(&b);
    wire_encode("e", &schema, in, n, &b);
    Item *out;
    int got;
    char err[200] = "", want[200];
    ck_assert_msg(wire_decode(b.p, b.n, "e", &schema, n, &out, &got, err, sizeof err) == 0, "%d: %s", n, err);
    ck_assert_int_eq(got, n);
    for (int i = 0; i < n; i++) ck_assert(out[i].kind == in[i].kind && out[i].seq == in[i].seq && out[i].src == in[i].src);
    free_items(out, got);
    ck_assert_int_eq(wire_decode(b.p, b.n, "e", &schema, n - 1, &out, &got, err, sizeof err), -1);
    snprintf(want, sizeof want, "batch of %d items exceeds the limit of %d items per batch", n, n - 1);
    ck_assert_str_eq(err, want);
    buf_release(&b);
  }
}
END_TEST

/* Latency stamps (Item.born) travel when a sender has them, one per item; a batch without them
 * decodes with born 0; borns that do not match the items are refused, as are more borns than
 * the limit of items. */
START_TEST(test_borns) {
  Item in[3];
  for (int i = 0; i < 2; i++) {
    Value v[2];
    value_put_int(&v[0], i);
    value_put_int(&v[1], i);
    in[i] = (Item){.kind = ITEM_TUPLE, .seq = (uint64_t)i, .src = (uint64_t)i, .born = 1000000007LL * (i + 1),
                   .t = tuple_new(v, 2)};
  }
  in[2] = (Item){.kind = ITEM_PULSE, .seq = 2, .src = 2};
  Buf b;
  buf_init(&b);
  wire_encode("e", &schema, in, 3, &b);
  Item *out;
  int n;
  char err[200] = "";
  ck_assert_msg(wire_decode(b.p, b.n, "e", &schema, 3, &out, &n, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(n, 3);
  ck_assert_int_eq(out[0].born, 1000000007LL);
  ck_assert_int_eq(out[1].born, 2000000014LL);
  ck_assert_int_eq(out[2].born, 0);
  free_items(out, n);
  /* without stamps: none on the wire, born 0 */
  in[0].born = in[1].born = 0;
  size_t stamped_len = b.n;
  buf_reset(&b);
  wire_encode("e", &schema, in, 3, &b);
  ck_assert_uint_lt(b.n, stamped_len);
  ck_assert_msg(wire_decode(b.p, b.n, "e", &schema, 3, &out, &n, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(out[0].born, 0);
  free_items(out, n);
  /* one born for three items */
  buf_append(&b, "\x4a\x01\x02", 3); /* field 9, packed, one sint64 */
  ck_assert_int_eq(wire_decode(b.p, b.n, "e", &schema, 3, &out, &n, err, sizeof err), -1);
  ck_assert_str_eq(err, "malformed batch: 3 kinds, 3 seqs, 3 srcs, 1 borns");
  /* more borns than the limit of items */
  buf_reset(&b);
  wire_encode("e", &schema, in, 3, &b);
  char flood[64] = "\x4a\x28";
  memset(flood + 2, 2, 40);
  buf_append(&b, flood, 42);
  ck_assert_int_eq(wire_decode(b.p, b.n, "e", &schema, 3, &out, &n, err, sizeof err), -1);
  ck_assert_str_eq(err, "batch of 40 items exceeds the limit of 3 items per batch");
  for (int i = 0; i < 2; i++) tuple_unref(in[i].t);
  buf_release(&b);
}
END_TEST

/* Ticks travel with their time, also without latency stamps: ticks of 0, negative, +infinity
 * (the final tick) and -infinity+1 come back exactly, between tuples and in order. An unknown kind
 * is refused. */
START_TEST(test_ticks) {
  static const int64_t ticks[] = {0, -50, INT64_MAX, INT64_MIN + 1, 1700000000000LL};
  enum { NT = sizeof ticks / sizeof ticks[0] };
  Item in[2 * NT];
  for (int i = 0; i < NT; i++) {
    Value v[2];
    value_put_int(&v[0], i);
    value_put_int(&v[1], -i);
    in[2 * i] = (Item){.kind = ITEM_TICK, .seq = (uint64_t)i, .src = (uint64_t)i, .tick = ticks[i]};
    in[2 * i + 1] = (Item){.kind = ITEM_TUPLE, .seq = (uint64_t)i, .src = (uint64_t)i, .t = tuple_new(v, 2)};
  }
  for (int first = 0; first < 2; first++) { /* a batch holding only the tick 0 sends no borns */
    int count = first ? 2 : 2 * NT;
    Buf b;
    buf_init(&b);
    wire_encode("e", &schema, in, count, &b);
    Item *out;
    int n;
    char err[200] = "";
    ck_assert_msg(wire_decode(b.p, b.n, "e", &schema, count, &out, &n, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(n, count);
    for (int i = 0; i < count; i++) {
      ck_assert_int_eq(out[i].kind, in[i].kind);
      ck_assert_uint_eq(out[i].seq, in[i].seq);
      if (in[i].kind == ITEM_TICK) ck_assert_int_eq(out[i].tick, in[i].tick);
      else ck_assert_int_eq(out[i].t->v[0].i, in[i].t->v[0].i);
    }
    free_items(out, n);
    buf_release(&b);
  }
  for (int i = 0; i < NT; i++) tuple_unref(in[2 * i + 1].t);
  /* kind 8 does not exist */
  Buf b;
  buf_init(&b);
  buf_append(&b, "\x0a\x01\x65\x12\x01\x08\x1a\x01\x00\x22\x01\x00", 12);
  Item *out;
  int n;
  char err[200] = "";
  ck_assert_int_eq(wire_decode(b.p, b.n, "e", &schema, 4, &out, &n, err, sizeof err), -1);
  ck_assert_str_eq(err, "malformed batch: unknown item kind 8");
  buf_release(&b);
}
END_TEST

/* A checkpoint barrier carries its checkpoint's position apart from its place in its stream
 * (after a time-ordered fan-in the two differ): both survive, next to a tuple; a batch whose
 * positions do not match its barriers is refused. */
START_TEST(test_barrier_positions) {
  Value v[2];
  value_put_int(&v[0], 7);
  value_put_int(&v[1], 8);
  Item in[3] = {
    {.kind = ITEM_BARRIER, .seq = 40, .src = 29825, .ckpt = 3, .ckpt_pos = 33001},
    {.kind = ITEM_TUPLE, .seq = 41, .src = 29825, .t = tuple_new(v, 2)},
    {.kind = ITEM_BARRIER, .seq = 42, .src = 29826, .ckpt = 4, .ckpt_pos = UINT64_C(1) << 61},
  };
  Buf b;
  buf_init(&b);
  wire_encode("e", &schema, in, 3, &b);
  Item *out;
  int n;
  char err[200] = "";
  ck_assert_msg(wire_decode(b.p, b.n, "e", &schema, 3, &out, &n, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(n, 3);
  for (int i = 0; i < 3; i += 2) {
    ck_assert_int_eq(out[i].kind, ITEM_BARRIER);
    ck_assert_uint_eq(out[i].seq, in[i].seq);
    ck_assert_uint_eq(out[i].src, in[i].src);
    ck_assert_uint_eq(out[i].ckpt, in[i].ckpt);
    ck_assert_uint_eq(out[i].ckpt_pos, in[i].ckpt_pos);
  }
  ck_assert_int_eq(out[1].t->v[0].i, 7);
  free_items(out, n);
  buf_release(&b);
  /* the same barriers with one position left out: field 11 holds a single packed varint */
  buf_init(&b);
  wire_encode("e", &schema, in, 1, &b); /* one barrier, one position */
  /* drop the trailing positions field (key 0x5a, length, varint 33001 = 3 bytes) */
  ck_assert_uint_ge(b.n, 5);
  ck_assert_int_eq((unsigned char)b.p[b.n - 5], 0x5a);
  b.n -= 5;
  ck_assert_int_eq(wire_decode(b.p, b.n, "e", &schema, 3, &out, &n, err, sizeof err), -1);
  ck_assert_str_eq(err, "malformed batch: 0 checkpoint positions for 1 barriers");
  buf_release(&b);
  tuple_unref(in[1].t);
}
END_TEST

/* Tuples emitted at a punctuation travel with their sort keys (empty, with NUL bytes, long), which
 * the receiver keeps in the tuple's memory; a batch whose keys do not match its keyed items is
 * refused. */
START_TEST(test_keyed) {
  static const struct { const char *p; uint32_t n; } keys[] = {{"", 0}, {"a\0b", 3}, {NULL, 300}};
  char longkey[300];
  for (int i = 0; i < 300; i++) longkey[i] = (char)(i * 7);
  Item in[4];
  const unsigned char *kp[3];
  for (int i = 0; i < 3; i++) {
    Value v[2];
    value_put_int(&v[0], 10 + i);
    value_put_int(&v[1], -i);
    const char *k = keys[i].p ? keys[i].p : longkey;
    Tuple *t = tuple_new_keyed(v, 2, k, keys[i].n, &kp[i]);
    in[i] = (Item){.kind = ITEM_KEYED, .keylen = keys[i].n, .seq = 5, .src = 9, .key = kp[i], .t = t};
  }
  in[3] = (Item){.kind = ITEM_TICK, .seq = 5, .src = 9, .tick = 1000};
  Buf b;
  buf_init(&b);
  wire_encode("e", &schema, in, 4, &b);
  Item *out;
  int n;
  char err[200] = "";
  ck_assert_msg(wire_decode(b.p, b.n, "e", &schema, 4, &out, &n, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(n, 4);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(out[i].kind, ITEM_KEYED);
    ck_assert_uint_eq(out[i].keylen, keys[i].n);
    ck_assert_int_eq(memcmp(out[i].key, keys[i].p ? keys[i].p : longkey, keys[i].n), 0);
    ck_assert_int_eq(out[i].t->v[0].i, 10 + i);
    ck_assert_int_eq(out[i].t->v[1].i, -i);
  }
  ck_assert_int_eq(out[3].tick, 1000);
  free_items(out, n);
  /* one keys entry too many */
  buf_append(&b, "\x52\x01\x41", 3); /* field 10, one byte */
  ck_assert_int_eq(wire_decode(b.p, b.n, "e", &schema, 4, &out, &n, err, sizeof err), -1);
  ck_assert_str_eq(err, "malformed batch: 4 keys for 3 keyed items");
  buf_release(&b);
  for (int i = 0; i < 3; i++) tuple_unref(in[i].t);
}
END_TEST

/* 5 M pulses in one 15 MB message: refused by count, with no memory spent on it (before the
 * limit, unpacking it cost the receiver about 440 MiB). */
START_TEST(test_oversized_pulse_batch) {
  size_t len;
  uint8_t *msg = pulses(5000000, &len);
  ck_assert_uint_gt(len, 15000000);
  long before = maxrss_kib();
  Item *out;
  int n;
  char err[200] = "";
  ck_assert_int_eq(wire_decode(msg, len, "e", &schema, 2112, &out, &n, err, sizeof err), -1);
  ck_assert_str_eq(err, "batch of 5000000 items exceeds the limit of 2112 items per batch");
  long grew = maxrss_kib() - before;
  ck_assert_msg(grew < 8 * 1024, "decoding the refused batch grew the peak memory by %ld KiB", grew);
  free(msg);
  /* the same pulses within the limit decode */
  msg = pulses(2112, &len);
  ck_assert_msg(wire_decode(msg, len, "e", &schema, 2112, &out, &n, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(n, 2112);
  ck_assert_int_eq(out[2111].kind, ITEM_PULSE);
  free_items(out, n);
  free(msg);
}
END_TEST

/* Values beyond what max_items tuples hold, and floods of fields that are not items, are refused
 * before unpacking too; bytes that are not protobuf still get the unpacker's message. */
START_TEST(test_other_floods) {
  uint8_t buf[4096], *q = buf;
  *q++ = 0x0a;
  *q++ = 1;
  *q++ = 'e';
  *q++ = 0x2a; /* ints, packed: 1000 values for a limit of 4 items of 2 ints */
  q += put_varint(q, 1000);
  memset(q, 2, 1000);
  q += 1000;
  Item *out;
  int n;
  char err[200] = "";
  ck_assert_int_eq(wire_decode(buf, (size_t)(q - buf), "e", &schema, 4, &out, &n, err, sizeof err), -1);
  ck_assert_str_eq(err, "malformed batch: more values than 4 items of schema 'T' hold");
  q = buf;
  for (int i = 0; i < 100; i++) { /* the edge name a hundred times */
    *q++ = 0x0a;
    *q++ = 1;
    *q++ = 'e';
  }
  ck_assert_int_eq(wire_decode(buf, (size_t)(q - buf), "e", &schema, 4, &out, &n, err, sizeof err), -1);
  ck_assert_str_eq(err, "malformed batch: 100 edge names or unknown fields");
  ck_assert_int_eq(wire_decode("\xff\xff\xff\xff", 4, "e", &schema, 4, &out, &n, err, sizeof err), -1);
  ck_assert_str_eq(err, "malformed batch (4 bytes that are not a protobuf Batch)");
}
END_TEST

/* One executor thread's life: encodes a batch of three tuples, decodes it, exits. */
static void *encode_decode_thread(void *arg) {
  Item in[3], *out;
  for (int i = 0; i < 3; i++) {
    Value v[2];
    value_put_int(&v[0], i);
    value_put_int(&v[1], i);
    in[i] = (Item){.kind = ITEM_TUPLE, .seq = (uint64_t)i, .src = (uint64_t)i, .t = tuple_new(v, 2)};
  }
  Buf b;
  buf_init(&b);
  wire_encode("e", &schema, in, 3, &b);
  int n;
  char err[200];
  if (wire_decode(b.p, b.n, "e", &schema, 3, &out, &n, err, sizeof err) == 0) free_items(out, n);
  for (int i = 0; i < 3; i++) tuple_unref(in[i].t);
  buf_release(&b);
  return arg;
}

/* Threads come and go (one per edge and job); each one's encoding and decoding arenas (64 KiB
 * blocks) are freed when it exits: 40 threads leave less than 1 MiB in use (they left 5 MiB). */
START_TEST(test_thread_arenas_freed) {
  pthread_t t;
  pthread_create(&t, NULL, encode_decode_thread, NULL); /* the first one sets up what lives on */
  pthread_join(t, NULL);
  size_t before = mallinfo2().uordblks;
  for (int i = 0; i < 40; i++) {
    ck_assert_int_eq(pthread_create(&t, NULL, encode_decode_thread, NULL), 0);
    pthread_join(t, NULL);
  }
  size_t after = mallinfo2().uordblks;
  ck_assert_msg(after < before + (1 << 20), "40 threads left %zu bytes in use", after - before);
}
END_TEST

/* Every kind of control message survives encoding and decoding, numbers up to 2^64 - 1 too. */
START_TEST(test_ctl_roundtrip) {
  WireCtl in[] = {
    {.kind = WIRE_CKPT_REQUEST, .ckpt = 1, .pos = 0},
    {.kind = WIRE_CKPT_REQUEST, .ckpt = 7, .pos = 123456789},
    {.kind = WIRE_CKPT_REQUEST, .ckpt = UINT64_MAX, .pos = UINT64_MAX},
    {.kind = WIRE_CKPT_DONE, .ckpt = 3},
    {.kind = WIRE_CKPT_COMPLETE, .ckpt = UINT64_MAX},
    {.kind = WIRE_CKPT_SOURCES, .pos = 0, .running = 0},
    {.kind = WIRE_CKPT_SOURCES, .pos = UINT64_MAX, .running = UINT32_MAX},
  };
  for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
    Buf b;
    buf_init(&b);
    wire_ctl_encode(&in[i], &b);
    ck_assert_uint_le(b.n, WIRE_CTL_MAX);
    WireCtl out = {0};
    char err[200] = "";
    ck_assert_msg(wire_ctl_decode(b.p, b.n, &out, err, sizeof err) == 0, "message %zu: %s", i, err);
    ck_assert_int_eq(out.kind, in[i].kind);
    ck_assert_uint_eq(out.ckpt, in[i].ckpt);
    ck_assert_uint_eq(out.pos, in[i].pos);
    ck_assert_uint_eq(out.running, in[i].running);
    buf_release(&b);
  }
}
END_TEST

/* What a hostile or broken peer could send on a control stream is refused with a reason, never
 * taken for a message: no kind, an unknown kind, checkpoint 0, a position on a report, a count of
 * sources on other than a sources report, a checkpoint on one, a batch,
 * bytes that are not protobuf, a message too long to be one. Unknown fields are skipped. */
START_TEST(test_ctl_malformed) {
  static const struct {
    const char *bytes;
    size_t len;
    const char *err;
  } bad[] = {
    {"", 0, "malformed control message: unknown kind 0"},
    {"\x10\x05", 2, "malformed control message: unknown kind 0"},
    {"\x08\x09\x10\x05", 4, "malformed control message: unknown kind 9"},
    {"\x08\x7f\x10\x05", 4, "malformed control message: unknown kind 127"},
    {"\x08\x01", 2, "malformed control message: request of checkpoint 0"},
    {"\x08\x02\x10\x00", 4, "malformed control message: done of checkpoint 0"},
    {"\x08\x02\x10\x03\x18\x01", 6, "malformed control message: done of checkpoint 3 with a position"},
    {"\x08\x03\x10\x03\x18\x01", 6, "malformed control message: complete of checkpoint 3 with a position"},
    {"\x08\x02\x10\x03\x20\x01", 6, "malformed control message: done of checkpoint 3 with a count of sources"},
    {"\x08\x01\x10\x03\x20\x02", 6, "malformed control message: request of checkpoint 3 with a count of sources"},
    {"\x08\x04\x10\x01\x20\x01", 6, "malformed control message: a sources report with checkpoint 1"},
    {"\xff\xff\xff\xff", 4, "malformed control message (4 bytes that are not a protobuf Control)"},
    {"\x08\x01\x10", 3, "malformed control message (3 bytes that are not a protobuf Control)"},
    {"\x0a\x01" "e", 3, "malformed control message (3 bytes that are not a protobuf Control)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    WireCtl out = {.kind = WIRE_CKPT_DONE, .ckpt = 99};
    char err[200] = "";
    ck_assert_msg(wire_ctl_decode(bad[i].bytes, bad[i].len, &out, err, sizeof err) == -1, "case %zu decoded", i);
    ck_assert_str_eq(err, bad[i].err);
    ck_assert_uint_eq(out.ckpt, 99); /* untouched */
  }
  uint8_t big[WIRE_CTL_MAX + 1];
  memset(big, 0, sizeof big);
  WireCtl out;
  char err[200] = "";
  ck_assert_int_eq(wire_ctl_decode(big, sizeof big, &out, err, sizeof err), -1);
  ck_assert_str_eq(err, "malformed control message: 33 bytes (at most 32)");
  /* a batch's bytes are not a control message */
  Buf b;
  buf_init(&b);
  wire_encode("e", &schema, NULL, 0, &b);
  ck_assert_int_eq(wire_ctl_decode(b.p, b.n, &out, err, sizeof err), -1);
  buf_release(&b);
  /* an unknown field (number 9, varint) is skipped, as protobuf's rules say */
  ck_assert_int_eq(wire_ctl_decode("\x08\x02\x10\x04\x48\x01", 6, &out, err, sizeof err), 0);
  ck_assert_int_eq(out.kind, WIRE_CKPT_DONE);
  ck_assert_uint_eq(out.ckpt, 4);
}
END_TEST

int main(void) {
  Suite *s = suite_create("wire");
  TCase *tc = unit_case(s, "wire", NULL, NULL, 60);
  tcase_add_test(tc, test_roundtrip);
  tcase_add_test(tc, test_borns);
  tcase_add_test(tc, test_ticks);
  tcase_add_test(tc, test_barrier_positions);
  tcase_add_test(tc, test_keyed);
  tcase_add_test(tc, test_slab_types);
  tcase_add_test(tc, test_count_items);
  tcase_add_test(tc, test_oversized_pulse_batch);
  tcase_add_test(tc, test_other_floods);
  tcase_add_test(tc, test_thread_arenas_freed);
  tcase_add_test(tc, test_ctl_roundtrip);
  tcase_add_test(tc, test_ctl_malformed);
  return unit_run(s);
}
