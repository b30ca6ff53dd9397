/* wire.c: encodes and decodes batches and control messages with protobuf-c (the only file that
 * sees wire.pb-c.h).
 * Decoding first counts the items and values of a message on the wire (an oversized batch is
 * refused before anything is allocated), then unpacks into an arena (one reset per message) rather
 * than malloc per field, checks everything a hostile peer could get wrong: the edge name, column
 * lengths, kinds, and types, and writes the batch's tuples straight into one slab (tuple.c): no
 * allocation per tuple. */
#include "wire.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "wire.pb-c.h"

/* ---- a protobuf-c allocator over an arena ---- */

static void *arena_pb_alloc(void *data, size_t size) {
  return arena_alloc(data, size);
}

static void arena_pb_free(void *data, void *p) {
  /* the arena releases everything at once */
}

/* One arena per thread and direction, reset per message. A thread's arenas are freed when it exits
 * (the destructor of arena_key, which holds the same pointer), so threads that come and go (one per
 * edge and job) leave nothing behind. */
static _Thread_local Arena *decode_arena;
static _Thread_local Arena *encode_arena;
static pthread_key_t arena_key[2];
static pthread_once_t arena_key_once = PTHREAD_ONCE_INIT;

static void free_arena(void *a) {
  arena_free(a);
}

static void make_arena_keys(void) {
  if (pthread_key_create(&arena_key[0], free_arena) != 0 || pthread_key_create(&arena_key[1], free_arena) != 0)
    sf_die("cannot create the wire arenas' thread keys");
}

static Arena *thread_arena(Arena **a) {
  if (!*a) {
    pthread_once(&arena_key_once, make_arena_keys);
    *a = arena_new();
    pthread_setspecific(arena_key[a == &encode_arena], *a);
  }
  arena_reset(*a);
  return *a;
}

void wire_encode(const char *edge, const Schema *s, const Item *items, int n, Buf *out) {
  Arena *a = thread_arena(&encode_arena);
  Sf__Batch b = SF__BATCH__INIT;
  b.edge = (char *)edge;
  b.n_kinds = b.n_seqs = b.n_srcs = (size_t)n;
  b.kinds = arena_alloc(a, sizeof *b.kinds * (size_t)(n + 1));
  b.seqs = arena_alloc(a, sizeof *b.seqs * (size_t)(n + 1));
  b.srcs = arena_alloc(a, sizeof *b.srcs * (size_t)(n + 1));
  size_t ni = 0, nd = 0, ns = 0, nb = 0;
  size_t nk = 0, np = 0;
  for (int i = 0; i < n; i++) {
    np += items[i].kind == ITEM_BARRIER;
    if (!item_has_tuple(items[i].kind)) continue;
    nk += items[i].kind == ITEM_KEYED;
    for (int k = 0; k < s->nattrs; k++) {
      switch (s->attrs[k].type) {
      case TYPE_INT: ni++; break;
      case TYPE_DOUBLE: nd++; break;
      case TYPE_STRING: ns++; break;
      default: nb++; break;
      }
    }
  }
  b.ints = arena_alloc(a, sizeof *b.ints * (ni + 1));
  b.doubles = arena_alloc(a, sizeof *b.doubles * (nd + 1));
  b.strings = arena_alloc(a, sizeof *b.strings * (ns + 1));
  b.bools = arena_alloc(a, sizeof *b.bools * (nb + 1));
  b.keys = arena_alloc(a, sizeof *b.keys * (nk + 1));
  b.positions = arena_alloc(a, sizeof *b.positions * (np + 1));
  /* latency is measured, or a barrier's number or a tick's time goes (the same union): every
   * item's born goes */
  bool stamped = false;
  for (int i = 0; i < n && !stamped; i++) stamped = items[i].kind != ITEM_KEYED && items[i].born != 0;
  if (stamped) {
    b.n_borns = (size_t)n;
    b.borns = arena_alloc(a, sizeof *b.borns * (size_t)(n + 1));
  }
  for (int i = 0; i < n; i++) {
    const Item *it = &items[i];
    if (stamped) b.borns[i] = it->kind == ITEM_KEYED ? 0 : it->born;
    b.kinds[i] = (Sf__ItemKind)it->kind;
    b.seqs[i] = it->seq;
    b.srcs[i] = it->src;
    if (it->kind == ITEM_BARRIER) b.positions[b.n_positions++] = it->ckpt_pos;
    if (!item_has_tuple(it->kind)) continue;
    if (it->kind == ITEM_KEYED) {
      b.keys[b.n_keys].data = (uint8_t *)it->key;
      b.keys[b.n_keys++].len = it->keylen;
    }
    for (int k = 0; k < s->nattrs; k++) {
      const Value *v = &it->t->v[k];
      switch (s->attrs[k].type) {
      case TYPE_INT: b.ints[b.n_ints++] = v->i; break;
      case TYPE_DOUBLE: b.doubles[b.n_doubles++] = v->d; break;
      case TYPE_STRING:
        b.strings[b.n_strings].data = (uint8_t *)v->s.p;
        b.strings[b.n_strings++].len = v->s.n;
        break;
      default: b.bools[b.n_bools++] = v->b; break;
      }
    }
  }
  size_t size = sf__batch__get_packed_size(&b);
  uint8_t *bytes = arena_alloc(a, size + 1);
  sf__batch__pack(&b, bytes);
  buf_append(out, (const char *)bytes, size);
}

/* ---- counting before unpacking ---- */

enum { MAX_OTHER_FIELDS = 16 }; /* occurrences of `edge` and of unknown fields a batch may carry */

static int read_varint(const uint8_t *p, size_t len, size_t *i, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *i < len; shift += 7) {
    uint8_t b = p[(*i)++];
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return 0;
  }
  return -1;
}

/* The bytes of p[0..n) below 0x80 (the last byte of each varint), eight at a time: a byte-wise
 * loop over every packed column was a quarter of wire_decode's own time. */
static size_t final_bytes(const uint8_t *p, size_t n) {
  size_t count = 0, j = 0;
  for (; j + 8 <= n; j += 8) {
    uint64_t w;
    memcpy(&w, p + j, 8);
    uint64_t ones = (~w & 0x8080808080808080ULL) >> 7; /* 1 in each byte below 0x80 */
    count += (size_t)((ones * 0x0101010101010101ULL) >> 56); /* their sum, in the top byte */
  }
  for (; j < n; j++) count += p[j] < 0x80;
  return count;
}

/* Counts the elements of each field of a Batch (counts[1..11], packed or not; counts[0]: fields
 * that are not Batch's) by walking the wire format, without allocating: protobuf-c would allocate
 * for all of them before we could look.  Returns -1 when the bytes are not a protobuf message
 * (unpacking then says so). */
enum { NFIELDS = 12 };
static int count_fields(const uint8_t *p, size_t len, size_t counts[NFIELDS]) {
  size_t i = 0;
  memset(counts, 0, NFIELDS * sizeof *counts);
  while (i < len) {
    uint64_t key, v;
    if (read_varint(p, len, &i, &key) < 0) return -1;
    uint64_t field = key >> 3;
    size_t *c = field >= 1 && field < NFIELDS ? &counts[field] : &counts[0];
    switch (key & 7) {
    case 0: /* varint */
      if (read_varint(p, len, &i, &v) < 0) return -1;
      (*c)++;
      break;
    case 1: /* 64 bits */
      if (len - i < 8) return -1;
      i += 8;
      (*c)++;
      break;
    case 5: /* 32 bits */
      if (len - i < 4) return -1;
      i += 4;
      (*c)++;
      break;
    case 2: /* length-delimited: a string, or a packed run of elements */
      if (read_varint(p, len, &i, &v) < 0 || v > len - i) return -1;
      if (field == 6) { /* packed doubles */
        *c += (size_t)v / 8;
      } else if ((field >= 2 && field <= 9 && field != 7) || field == 11) { /* packed varints: one final byte each */
        *c += final_bytes(p + i, (size_t)v);
      } else {
        (*c)++;
      }
      i += (size_t)v;
      break;
    default:
      return -1;
    }
  }
  return 0;
}

/* Refuses a batch with more items, or more values, than max_items items can hold. */
static int check_counts(const void *buf, size_t len, const Schema *s, int max_items, char *err, size_t errlen) {
  size_t counts[NFIELDS];
  if (count_fields(buf, len, counts) < 0) return 0; /* not protobuf: sf__batch__unpack says so */
  size_t items = counts[2] > counts[3] ? counts[2] : counts[3];
  if (counts[4] > items) items = counts[4];
  if (counts[9] > items) items = counts[9]; /* borns: one per item */
  if (counts[10] > items) items = counts[10]; /* keys: at most one per item */
  if (counts[11] > items) items = counts[11]; /* positions: at most one per item */
  if (items > (size_t)max_items) {
    snprintf(err, errlen, "batch of %zu items exceeds the limit of %d items per batch", items, max_items);
    return -1;
  }
  size_t per[5] = {0};
  for (int k = 0; k < s->nattrs; k++) per[s->attrs[k].type]++;
  size_t m = (size_t)max_items;
  if (counts[5] > m * per[TYPE_INT] || counts[6] > m * per[TYPE_DOUBLE] || counts[7] > m * per[TYPE_STRING] ||
      counts[8] > m * per[TYPE_BOOL]) {
    snprintf(err, errlen, "malformed batch: more values than %d items of schema '%s' hold", max_items, s->name);
    return -1;
  }
  if (counts[0] + counts[1] > MAX_OTHER_FIELDS) {
    snprintf(err, errlen, "malformed batch: %zu edge names or unknown fields", counts[0] + counts[1]);
    return -1;
  }
  return 0;
}

int wire_decode(const void *buf, size_t len, const char *edge, const Schema *s, int max_items, Item **items_out,
                int *n_out, char *err, size_t errlen) {
  if (check_counts(buf, len, s, max_items, err, errlen) < 0) return -1;
  Arena *a = thread_arena(&decode_arena);
  ProtobufCAllocator alloc = { .alloc = arena_pb_alloc, .free = arena_pb_free, .allocator_data = a };
  Sf__Batch *b = sf__batch__unpack(&alloc, len, buf);
  if (!b) {
    snprintf(err, errlen, "malformed batch (%zu bytes that are not a protobuf Batch)", len);
    return -1;
  }
  if (!b->edge || strcmp(b->edge, edge) != 0) {
    snprintf(err, errlen, "batch for edge '%.100s' arrived on edge '%s'", b->edge ? b->edge : "", edge);
    return -1;
  }
  if (b->n_seqs != b->n_kinds || b->n_srcs != b->n_kinds || (b->n_borns && b->n_borns != b->n_kinds) ||
      b->n_kinds > (size_t)1 << 24) {
    snprintf(err, errlen, "malformed batch: %zu kinds, %zu seqs, %zu srcs, %zu borns", b->n_kinds, b->n_seqs, b->n_srcs,
             b->n_borns);
    return -1;
  }
  size_t ni = 0, nd = 0, ns = 0, nb = 0, nkeyed = 0, nbarriers = 0;
  int per[5] = {0};
  for (int k = 0; k < s->nattrs; k++) per[s->attrs[k].type]++;
  for (size_t i = 0; i < b->n_kinds; i++) {
    if ((unsigned)b->kinds[i] > SF__ITEM_KIND__KEYED) {
      snprintf(err, errlen, "malformed batch: unknown item kind %d", (int)b->kinds[i]);
      return -1;
    }
    if (b->kinds[i] == SF__ITEM_KIND__BARRIER && (!b->n_borns || b->borns[i] <= 0)) {
      snprintf(err, errlen, "malformed batch: a checkpoint barrier without its number");
      return -1;
    }
    nkeyed += b->kinds[i] == SF__ITEM_KIND__KEYED;
    nbarriers += b->kinds[i] == SF__ITEM_KIND__BARRIER;
    if (b->kinds[i] == SF__ITEM_KIND__TUPLE || b->kinds[i] == SF__ITEM_KIND__KEYED) {
      ni += (size_t)per[TYPE_INT];
      nd += (size_t)per[TYPE_DOUBLE];
      ns += (size_t)per[TYPE_STRING];
      nb += (size_t)per[TYPE_BOOL];
    }
  }
  if (ni != b->n_ints || nd != b->n_doubles || ns != b->n_strings || nb != b->n_bools) {
    snprintf(err, errlen, "malformed batch: columns do not match schema '%s' (%zu ints, %zu doubles, %zu strings, "
             "%zu bools for %zu items)", s->name, b->n_ints, b->n_doubles, b->n_strings, b->n_bools, b->n_kinds);
    return -1;
  }
  if (nkeyed != b->n_keys) {
    snprintf(err, errlen, "malformed batch: %zu keys for %zu keyed items", b->n_keys, nkeyed);
    return -1;
  }
  if (nbarriers != b->n_positions) {
    snprintf(err, errlen, "malformed batch: %zu checkpoint positions for %zu barriers", b->n_positions, nbarriers);
    return -1;
  }
  for (size_t k = 0; k < b->n_keys; k++)
    if (b->keys[k].len > UINT32_MAX) {
      snprintf(err, errlen, "malformed batch: a key of %zu bytes", b->keys[k].len);
      return -1;
    }
  int n = (int)b->n_kinds;
  Item *items = sf_xmalloc(sizeof(Item) * (size_t)(n + 1));
  /* the tuples go straight into one slab: its size first */
  int ntuples = 0;
  size_t slab_bytes = 0, fixed = tuple_slab_size(s->nattrs, 0);
  for (int i = 0; i < n; i++) ntuples += b->kinds[i] == SF__ITEM_KIND__TUPLE || b->kinds[i] == SF__ITEM_KIND__KEYED;
  if (per[TYPE_STRING] || nkeyed) {
    for (int i = 0, is = 0, ik = 0; i < n; i++) {
      if (b->kinds[i] != SF__ITEM_KIND__TUPLE && b->kinds[i] != SF__ITEM_KIND__KEYED) continue;
      size_t bytes = 0;
      for (int k = 0; k < per[TYPE_STRING]; k++) bytes += b->strings[is++].len;
      if (b->kinds[i] == SF__ITEM_KIND__KEYED) bytes += b->keys[ik++].len; /* the key after the strings */
      slab_bytes += tuple_slab_size(s->nattrs, bytes);
    }
  } else {
    slab_bytes = fixed * (size_t)ntuples;
  }
  TupleSlab slab;
  if (ntuples) tuple_slab_begin(&slab, ntuples, slab_bytes);
  size_t ii = 0, id = 0, is = 0, ib = 0, ik = 0, ip = 0;
  for (int i = 0; i < n; i++) {
    Item *it = &items[i];
    it->kind = (ItemKind)b->kinds[i];
    it->seq = b->seqs[i];
    it->src = b->srcs[i];
    it->born = b->n_borns ? b->borns[i] : 0;
    it->keylen = 0;
    it->t = NULL;
    if (it->kind == ITEM_BARRIER) it->ckpt_pos = b->positions[ip++];
    if (!item_has_tuple(it->kind)) continue;
    size_t bytes = 0, keylen = it->kind == ITEM_KEYED ? b->keys[ik].len : 0;
    for (int k = 0; k < per[TYPE_STRING]; k++) bytes += b->strings[is + (size_t)k].len;
    char *str;
    Tuple *t = tuple_slab_add(&slab, s->nattrs, bytes + keylen, &str);
    if (it->kind == ITEM_KEYED) { /* its key after its strings (tuple_new_keyed's layout) */
      if (keylen) memcpy(str + bytes, b->keys[ik].data, keylen);
      it->key = (const unsigned char *)str + bytes;
      it->keylen = (uint32_t)keylen;
      ik++;
    }
    Value *vals = t->v;
    for (int k = 0; k < s->nattrs; k++) {
      switch (s->attrs[k].type) {
      case TYPE_INT: value_put_int(&vals[k], b->ints[ii++]); break;
      case TYPE_DOUBLE: value_put_double(&vals[k], b->doubles[id++]); break;
      case TYPE_STRING: {
        size_t len = b->strings[is].len;
        if (len) memcpy(str, b->strings[is].data, len);
        value_put_string(&vals[k], str, len);
        str += len;
        is++;
        break;
      }
      default: value_put_bool(&vals[k], b->bools[ib++]); break;
      }
    }
    it->t = t;
  }
  *items_out = items;
  *n_out = n;
  return 0;
}

/* ---- control messages ---- */

static const char *ctl_kind_name(int kind) {
  switch (kind) {
  case SF__CONTROL_KIND__CKPT_REQUEST: return "request";
  case SF__CONTROL_KIND__CKPT_DONE: return "done";
  case SF__CONTROL_KIND__CKPT_COMPLETE: return "complete";
  case SF__CONTROL_KIND__CKPT_SOURCES: return "sources report";
  default: return "?";
  }
}

void wire_ctl_encode(const WireCtl *m, Buf *out) {
  Sf__Control c = SF__CONTROL__INIT;
  c.kind = (Sf__ControlKind)m->kind;
  c.checkpoint = m->ckpt;
  c.position = m->pos;
  c.running = m->running;
  size_t n = sf__control__get_packed_size(&c);
  sf_assert(n <= WIRE_CTL_MAX);
  uint8_t tmp[WIRE_CTL_MAX];
  sf__control__pack(&c, tmp);
  buf_append(out, (const char *)tmp, n);
}

int wire_ctl_decode(const void *buf, size_t len, WireCtl *m, char *err, size_t errlen) {
  if (len > WIRE_CTL_MAX) {
    snprintf(err, errlen, "malformed control message: %zu bytes (at most %d)", len, WIRE_CTL_MAX);
    return -1;
  }
  Arena *a = thread_arena(&decode_arena);
  ProtobufCAllocator alloc = { .alloc = arena_pb_alloc, .free = arena_pb_free, .allocator_data = a };
  Sf__Control *c = sf__control__unpack(&alloc, len, buf);
  if (!c) {
    snprintf(err, errlen, "malformed control message (%zu bytes that are not a protobuf Control)", len);
    return -1;
  }
  int kind = (int)c->kind;
  if (kind < SF__CONTROL_KIND__CKPT_REQUEST || kind > SF__CONTROL_KIND__CKPT_SOURCES) {
    snprintf(err, errlen, "malformed control message: unknown kind %d", kind);
    return -1;
  }
  if (kind == SF__CONTROL_KIND__CKPT_SOURCES) {
    if (c->checkpoint) {
      snprintf(err, errlen, "malformed control message: a sources report with checkpoint %llu",
               (unsigned long long)c->checkpoint);
      return -1;
    }
    *m = (WireCtl){ .kind = WIRE_CKPT_SOURCES, .pos = c->position, .running = c->running };
    return 0;
  }
  if (c->checkpoint == 0) {
    snprintf(err, errlen, "malformed control message: %s of checkpoint 0", ctl_kind_name(kind));
    return -1;
  }
  if (c->position && kind != SF__CONTROL_KIND__CKPT_REQUEST) {
    snprintf(err, errlen, "malformed control message: %s of checkpoint %llu with a position", ctl_kind_name(kind),
             (unsigned long long)c->checkpoint);
    return -1;
  }
  if (c->running) {
    snprintf(err, errlen, "malformed control message: %s of checkpoint %llu with a count of sources",
             ctl_kind_name(kind), (unsigned long long)c->checkpoint);
    return -1;
  }
  *m = (WireCtl){ .kind = (WireCtlKind)kind, .ckpt = c->checkpoint, .pos = c->position };
  return 0;
}
