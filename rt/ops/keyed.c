/* keyed.c: the per-key hash table, held values and output plans shared by Functor, FlatMap,
 * Aggregate and Dedup (see keyed.h).
 *
 * The table is open addressing with linear probing over entry pointers, grown at 3/4 load; each
 * entry remembers its hash so growing never rehashes values. Keys are compared with value_equal
 * and hashed with value_hash, the same functions a hash Split uses, so a key means the same thing
 * on every channel. Nothing is allocated per lookup; a new key costs one entry, its values and its
 * data block in the table's arena, which is freed only at the end: memory grows with the number of
 * distinct keys seen.
 *
 * Every table counts its bytes (buckets, entries, key values and strings, data blocks; not what
 * the kinds' data blocks point to) in one count for the whole executor, state_bytes: with
 * --max-state-memory, a new key or a growth that would take it past the limit fails the job
 * naming the operator, before the machine runs out; a bucket array that cannot be allocated fails
 * it the same way. */
#include "keyed.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- KeyTable ---- */

static atomic_ullong state_bytes; /* bytes of every KeyTable of the executor (one job at a time) */

/* Counts `more` bytes of kt in state_bytes. false after rt_fail when that passes the limit. */
static bool charge(KeyTable *kt, size_t more) {
  unsigned long long now = atomic_fetch_add(&state_bytes, more) + more;
  if (kt->limit && now > kt->limit) {
    atomic_fetch_sub(&state_bytes, more);
    rt_fail(kt->op, "out of memory (keyed state over --max-state-memory %llu bytes; this operator holds %zu keys)",
            (unsigned long long)kt->limit, kt->count);
    return false;
  }
  kt->bytes += more;
  return true;
}

/* One allocation per key: the entry, its values, then its data (16-byte aligned). */
struct KeyEntry {
  uint64_t hash; /* hash of the key values */
  void *data;    /* data_size zeroed bytes for the kind, in the same block after key */
  Value key[];   /* nkeys values, strings copied into the table's arena */
};

enum { KEYTABLE_MIN_CAP = 16 };

/* A key's home bucket: bits of its hash above the low 8. A hash Split chose the key's channel from
 * hash % SF_KEY_GROUPS (value.h), so below a Split every key of one channel shares those low bits:
 * a home taken from them would leave most buckets no key's home (at width 2, blocks of 128 buckets
 * of every 256) and the probe runs long. The bits above them are as well mixed (sf_mix64) and say
 * nothing about the channel. */
_Static_assert(SF_KEY_GROUPS == 256, "key_home skips the bits of the key group");
static inline size_t key_home(uint64_t hash, size_t cap) {
  return (size_t)(hash >> 8) & (cap - 1);
}

int keytable_init(KeyTable *kt, OpInst *op, size_t data_size) {
  memset(kt, 0, sizeof *kt);
  kt->arena = arena_new();
  kt->data_size = data_size;
  kt->op = op;
  kt->limit = rt_options(op)->max_state_memory;
  const char **names = names_split(kt->arena, rt_param(op, "partitionBy"), &kt->nkeys);
  kt->slots = arena_alloc(kt->arena, sizeof(int) * (size_t)(kt->nkeys + 1));
  for (int k = 0; k < kt->nkeys; k++) {
    kt->slots[k] = op->in_schema ? schema_find_attr(op->in_schema, names[k]) : -1;
    if (kt->slots[k] < 0) return rt_fail(op, "partitionBy attribute '%s' is not in the input", names[k]);
  }
  return 0;
}

/* A key's values are vals[at[k]] for k < nkeys: at is kt->slots for a tuple's values, NULL for the
 * key values themselves in order (a restore's). */
static const Value *key_val(const Value *vals, const int *at, int k) {
  return &vals[at ? at[k] : k];
}

static uint64_t key_hash(const KeyTable *kt, const Value *vals, const int *at) {
  uint64_t h = SF_HASH_SEED;
  for (int k = 0; k < kt->nkeys; k++) h = value_hash(key_val(vals, at, k), h);
  return h;
}

static bool key_matches(const KeyTable *kt, const KeyEntry *e, uint64_t hash, const Value *vals, const int *at) {
  if (e->hash != hash) return false;
  for (int k = 0; k < kt->nkeys; k++)
    if (!value_equal(&e->key[k], key_val(vals, at, k))) return false;
  return true;
}

/* Doubles the buckets. false after rt_fail (the table unchanged). */
static bool keytable_grow(KeyTable *kt) {
  size_t cap = kt->cap ? kt->cap * 2 : KEYTABLE_MIN_CAP;
  if (!charge(kt, (cap - kt->cap) * sizeof(KeyBucket))) return false;
  KeyBucket *buckets = calloc(cap, sizeof *buckets);
  if (!buckets) {
    atomic_fetch_sub(&state_bytes, (cap - kt->cap) * sizeof(KeyBucket));
    kt->bytes -= (cap - kt->cap) * sizeof(KeyBucket);
    rt_fail(kt->op, "out of memory (%zu buckets)", cap);
    return false;
  }
  for (size_t i = 0; i < kt->cap; i++) {
    KeyEntry *e = kt->buckets[i].e;
    if (!e) continue;
    size_t j = key_home(e->hash, cap);
    while (buckets[j].e) j = (j + 1) & (cap - 1);
    buckets[j] = kt->buckets[i];
  }
  free(kt->buckets);
  kt->buckets = buckets;
  kt->cap = cap;
  return true;
}

/* The arena bytes key_new takes for a key of these values. */
static size_t key_size(const KeyTable *kt, const Value *vals, const int *at) {
  size_t n = ((sizeof(KeyEntry) + sizeof(Value) * (size_t)kt->nkeys + 15) & ~(size_t)15) + kt->data_size;
  for (int k = 0; k < kt->nkeys; k++) {
    const Value *v = key_val(vals, at, k);
    if (v->type == TYPE_STRING) n += (v->s.n + 1 + 15) & ~(size_t)15;
  }
  return n;
}

static KeyEntry *key_new(KeyTable *kt, uint64_t hash, const Value *vals, const int *at) {
  size_t at_data = (sizeof(KeyEntry) + sizeof(Value) * (size_t)kt->nkeys + 15) & ~(size_t)15;
  KeyEntry *e = arena_alloc(kt->arena, at_data + kt->data_size);
  e->hash = hash;
  e->data = (char *)e + at_data;
  for (int k = 0; k < kt->nkeys; k++) {
    Value v = *key_val(vals, at, k);
    if (v.type == TYPE_STRING) {
      char *p = arena_alloc(kt->arena, v.s.n + 1);
      if (v.s.n) memcpy(p, v.s.p, v.s.n);
      v.s.p = p;
    }
    e->key[k] = v;
  }
  return e;
}

/* The data block of the key whose values are vals (at as in key_val) and whose hash is `hash`
 * (key_hash of them), made when new (*created). NULL after rt_fail. */
static void *find_hashed(KeyTable *kt, const Value *vals, const int *at, uint64_t hash, bool *created) {
  *created = false;
  if (kt->cap) {
    for (size_t j = key_home(hash, kt->cap); kt->buckets[j].e; j = (j + 1) & (kt->cap - 1))
      if (kt->buckets[j].hash == hash && key_matches(kt, kt->buckets[j].e, hash, vals, at)) return kt->buckets[j].e->data;
  }
  if ((kt->count + 1) * 4 > kt->cap * 3 && !keytable_grow(kt)) return NULL;
  if (!charge(kt, key_size(kt, vals, at))) return NULL;
  size_t j = key_home(hash, kt->cap);
  while (kt->buckets[j].e) j = (j + 1) & (kt->cap - 1);
  KeyEntry *e = key_new(kt, hash, vals, at);
  kt->buckets[j] = (KeyBucket){ hash, e };
  kt->count++;
  *created = true;
  return e->data;
}

static void *find_vals(KeyTable *kt, const Value *vals, const int *at, bool *created) {
  return find_hashed(kt, vals, at, key_hash(kt, vals, at), created);
}

void *keytable_find(KeyTable *kt, const Tuple *t, bool *created) {
  return find_vals(kt, t->v, kt->slots, created);
}

void keytable_hash_run(const KeyTable *kt, const Item *items, int n, uint64_t *hash) {
  for (int i = 0; i < n; i++) {
    hash[i] = key_hash(kt, items[i].t->v, kt->slots);
    if (kt->cap) __builtin_prefetch(&kt->buckets[key_home(hash[i], kt->cap)]);
  }
}

void keytable_prefetch_data(const KeyTable *kt, uint64_t hash) {
  if (!kt->cap) return;
  const KeyBucket *b = &kt->buckets[key_home(hash, kt->cap)];
  if (!b->e || b->hash != hash) return;
  /* the entry (its key values) and its data block, found without reading the entry */
  const char *e = (const char *)b->e;
  __builtin_prefetch(e);
  __builtin_prefetch(e + ((sizeof(KeyEntry) + sizeof(Value) * (size_t)kt->nkeys + 15) & ~(size_t)15));
}

void *keytable_peek(const KeyTable *kt, uint64_t hash) {
  if (!kt->cap) return NULL;
  const KeyBucket *b = &kt->buckets[key_home(hash, kt->cap)];
  return b->e && b->hash == hash ? b->e->data : NULL;
}

void *keytable_find_hashed(KeyTable *kt, const Tuple *t, uint64_t hash, bool *created) {
  return find_hashed(kt, t->v, kt->slots, hash, created);
}

bool keytable_charge(KeyTable *kt, size_t more) {
  return charge(kt, more);
}

void keytable_uncharge(KeyTable *kt, size_t less) {
  if (less > kt->bytes) less = kt->bytes;
  atomic_fetch_sub(&state_bytes, less);
  kt->bytes -= less;
}

void keytable_each(KeyTable *kt, void (*fn)(void *data, void *ctx), void *ctx) {
  for (size_t i = 0; i < kt->cap; i++)
    if (kt->buckets[i].e) fn(kt->buckets[i].e->data, ctx);
}

void keytable_release(KeyTable *kt) {
  atomic_fetch_sub(&state_bytes, kt->bytes);
  free(kt->buckets);
  if (kt->arena) arena_free(kt->arena);
  memset(kt, 0, sizeof *kt);
}

/* ---- snapshots ---- */

void keytable_snapshot(const KeyTable *kt, Buf *out, KeyPutFn *put, void *ctx) {
  snap_u64(out, (uint64_t)kt->nkeys);
  snap_u64(out, (uint64_t)kt->count);
  for (size_t i = 0; i < kt->cap; i++) {
    const KeyEntry *e = kt->buckets[i].e;
    if (!e) continue;
    for (int k = 0; k < kt->nkeys; k++) snap_value(out, &e->key[k]);
    size_t at = out->n;
    snap_u64(out, 0); /* the length of the key's data, known once put wrote it: snap_bytes' layout */
    if (put) put(e->data, out, ctx);
    uint64_t len = (uint64_t)(out->n - at - 8);
    for (int b = 0; b < 8; b++) out->p[at + (size_t)b] = (char)(len >> (8 * b));
  }
}

/* "k=3, sym='A'": the key whose values are vals, for messages. */
static void describe_key(const KeyTable *kt, const OpInst *op, const Value *vals, char *buf, size_t cap) {
  Buf b;
  buf_init(&b);
  for (int k = 0; k < kt->nkeys; k++) {
    if (k) buf_puts(&b, ", ");
    buf_puts(&b, op->in_schema->attrs[kt->slots[k]].name);
    buf_putc(&b, '=');
    if (vals[k].type == TYPE_STRING) buf_putc(&b, '\'');
    value_format(&vals[k], &b);
    if (vals[k].type == TYPE_STRING) buf_putc(&b, '\'');
  }
  snprintf(buf, cap, "%s", b.n ? b.p : "(the whole stream)");
  buf_release(&b);
}

int keytable_restore(KeyTable *kt, OpInst *op, SnapIn *in, KeyGetFn *get, void *ctx) {
  uint64_t nkeys = snap_get_u64(in), count = snap_get_u64(in);
  if (in->bad) return rt_fail(op, "snapshot truncated or malformed");
  if (nkeys != (uint64_t)kt->nkeys)
    return rt_fail(op, "the snapshot's keys have %llu attributes, partitionBy names %d", (unsigned long long)nkeys,
                   kt->nkeys);
  Value *vals = sf_xmalloc(sizeof *vals * (size_t)(kt->nkeys + 1));
  int rc = 0;
  for (uint64_t i = 0; i < count && !in->bad && rc == 0; i++) {
    for (int k = 0; k < kt->nkeys && !in->bad; k++) {
      snap_get_value(in, &vals[k]);
      if (vals[k].type != op->in_schema->attrs[kt->slots[k]].type) in->bad = true; /* another schema */
    }
    size_t n;
    const void *data = snap_get_bytes(in, &n);
    if (in->bad || !rt_owns_key(op, vals, kt->slots, kt->nkeys)) continue; /* another replica's key */
    bool created;
    void *block = find_vals(kt, vals, NULL, &created);
    if (!block) {
      rc = -1;
      break;
    }
    if (!created) {
      char key[256];
      describe_key(kt, op, vals, key, sizeof key);
      rc = rt_fail(op, "the snapshots hold key %s twice", key);
      break;
    }
    SnapIn sub = {.p = data, .n = n};
    if (get && get(block, &sub, ctx) < 0)
      rc = -1;
    else if (!snap_done(&sub))
      in->bad = true;
  }
  free(vals);
  if (rc == 0 && in->bad) rc = rt_fail(op, "snapshot truncated or malformed");
  return rc;
}

int keyed_restore_end(OpInst *op, const SnapIn *in) {
  if (in->bad) return rt_fail(op, "snapshot truncated or malformed");
  if (in->off != in->n) return rt_fail(op, "snapshot malformed: %zu bytes left over at its end", in->n - in->off);
  return 0;
}

/* ---- held values ---- */

void held_store(Value *dst, size_t *cap, const Value *src) {
  if (src->type != TYPE_STRING) {
    if (*cap) held_release(dst, cap); /* a typed slot never changes type; stay leak-free anyway */
    *dst = *src;
    return;
  }
  char *buf = *cap ? (char *)dst->s.p : NULL;
  size_t n = src->s.n;
  if (n + 1 > *cap) {
    /* src cannot point into buf here: buf's string is shorter than *cap - 1 bytes */
    size_t want = *cap ? *cap : 16;
    while (want < n + 1) want *= 2;
    buf = sf_xrealloc(buf, want);
    *cap = want;
  }
  if (n) memmove(buf, src->s.p, n);
  buf[n] = 0;
  *dst = value_string(buf, n);
}

void held_release(Value *dst, size_t *cap) {
  if (*cap) free((char *)dst->s.p);
  memset(dst, 0, sizeof *dst);
  *cap = 0;
}

/* ---- OutPlan ---- */

int outplan_init(OutPlan *p, OpInst *op, Arena *a) {
  const Schema *out = op->out_schema, *in = op->in_schema;
  memset(p, 0, sizeof *p);
  p->n = out->nattrs;
  p->set = arena_alloc(a, sizeof *p->set * (size_t)(p->n + 1));
  p->from = arena_alloc(a, sizeof *p->from * (size_t)(p->n + 1));
  p->code = arena_alloc(a, sizeof *p->code * (size_t)(p->n + 1));
  p->vals = arena_alloc(a, sizeof *p->vals * (size_t)(p->n + 1));
  for (int i = 0; i < op->op->nsets; i++) {
    const Set *s = &op->op->sets[i];
    sf_assert(s->slot >= 0 && s->slot < p->n && s->expr);
    p->set[s->slot] = s;
    p->code[s->slot] = code_compile(s->expr, a);
  }
  p->nstates = op->op->nstates;
  if (p->nstates) {
    p->seen = arena_alloc(a, sizeof *p->seen * (size_t)(p->n + 1));
    p->view = arena_alloc(a, sizeof *p->view * (size_t)p->nstates);
    for (int i = 0; i < op->op->nsets; i++) {
      const Set *s = &op->op->sets[i];
      p->seen[s->slot] = s->states_before;
      if (s->states_before < p->nstates) p->staged = true;
    }
  }
  p->identity = op->op->nsets == 0 && in && in->nattrs == p->n;
  for (int k = 0; k < p->n; k++) {
    if (p->set[k]) continue;
    p->from[k] = in ? schema_find_attr(in, out->attrs[k].name) : -1;
    if (p->from[k] < 0)
      return rt_fail(op, "output attribute '%s' is neither set nor in the input", out->attrs[k].name);
    if (p->from[k] != k) p->identity = false;
  }
  return 0;
}

Tuple *outplan_build(OutPlan *p, OpInst *op, const EvalEnv *env, const Tuple *t) {
  for (int k = 0; k < p->n; k++) {
    const Set *s = p->set[k];
    if (!s) {
      p->vals[k] = t->v[p->from[k]];
      continue;
    }
    EvalEnv staged;
    const EvalEnv *sees = env;
    if (p->staged && p->seen[k] < p->nstates) {
      for (int j = 0; j < p->nstates; j++) p->view[j] = j < p->seen[k] ? env->states[j] : p->before[j];
      staged = *env;
      staged.states = p->view;
      sees = &staged;
    }
    if (keyed_eval(op, p->code[k], sees, &p->vals[k], "set", s->attr, s->text, t)) return NULL;
  }
  return tuple_new(p->vals, p->n);
}

int outplan_emit(OutPlan *p, OpInst *op, const EvalEnv *env, Tuple *t) {
  if (p->identity) return rt_emit(op, 0, t);
  Tuple *out = outplan_build(p, op, env, t);
  tuple_unref(t);
  return out ? rt_emit(op, 0, out) : -1;
}

/* ---- errors ---- */

int keyed_eval_fail(OpInst *op, const Code *c, const EvalEnv *env, const char *what, const char *name,
                    const char *text, const Tuple *t) {
  char err[256];
  Value ignored;
  /* The same c on the same env faults again, with the message now written (rand is a hash of its
   * argument, and a fault leaves env as it was). */
  if (code_eval(c, env, &ignored, err, sizeof err) == 0) sf_die("a fault of code_eval did not repeat");
  char buf[256];
  if (!text) text = rt_param(op, what);
  if (name) {
    snprintf(buf, sizeof buf, "%s '%s'", what, name);
    what = buf;
  }
  return rt_eval_fail(op, what, text, t, err);
}

void keyed_release_items(Item *items, int n) {
  for (int i = 0; i < n; i++) tuple_unref(items[i].t);
}

int keyed_run_fail(OpInst *op, Item *items, int nout, Item *bad, int left, const Code *c, const char *what,
                   const char *name, const char *text) {
  if (rt_emit_run(op, 0, items, nout) == 0) {
    op->cur_seq = bad->seq;
    op->cur_src = bad->src;
    op->cur_born = bad->born;
    EvalEnv env = {.attrs = bad->t->v, .scratch = op->scratch};
    keyed_eval_fail(op, c, &env, what, name, text, bad->t);
  }
  keyed_release_items(bad, left);
  return -1;
}

void letplan_init(LetPlan *p, const Op *op, Arena *a) {
  *p = (LetPlan){.n = op->nlets, .lets = op->lets};
  p->code = arena_alloc(a, sizeof *p->code * (size_t)(p->n + 1));
  p->vals = arena_alloc(a, sizeof *p->vals * (size_t)(p->n + 1));
  for (int k = 0; k < p->n; k++) {
    sf_assert(op->lets[k].expr);
    p->code[k] = code_compile(op->lets[k].expr, a);
  }
}

int letplan_eval(LetPlan *p, OpInst *op, EvalEnv *env, int from, int to, const Tuple *t) {
  env->lets = p->vals;
  for (int k = from; k < to; k++)
    if (keyed_eval(op, p->code[k], env, &p->vals[k], "let", p->lets[k].name, p->lets[k].text, t)) return -1;
  return 0;
}
