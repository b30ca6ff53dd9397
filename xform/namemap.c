/* namemap.c: a map from names (NUL-terminated strings) to pointers, so that every lookup by name
 * in the transformer takes constant time however large the graph: open addressing with linear
 * probing in a power-of-two table kept at most half full, FNV-1a hashes stored beside the keys
 * so that a probe compares strings only when the hashes agree. */
#include "sf.h"

#include <stdlib.h>
#include <string.h>

struct NameSlot {
  const char *key; /* NULL: the slot is empty */
  void *value;     /* what the key maps to */
  uint64_t hash;   /* namemap_hash(key) */
};

static uint64_t namemap_hash(const char *s) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (; *s; s++) h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
  return h;
}

/* The slot holding key, or the empty slot where it would go. Needs cap > n. */
static NameSlot *find_slot(NameSlot *slots, size_t cap, const char *key, uint64_t hash) {
  size_t mask = cap - 1;
  for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
    NameSlot *s = &slots[i];
    if (!s->key || (s->hash == hash && !strcmp(s->key, key))) return s;
  }
}

/* Rehashes into cap slots (a power of two above twice n). */
static void resize(NameMap *m, size_t cap) {
  NameSlot *slots = calloc(cap, sizeof *slots);
  if (!slots) sf_die("out of memory (%zu name slots)", cap);
  for (size_t i = 0; i < m->cap; i++)
    if (m->slots[i].key) *find_slot(slots, cap, m->slots[i].key, m->slots[i].hash) = m->slots[i];
  free(m->slots);
  m->slots = slots;
  m->cap = cap;
}

void namemap_reserve(NameMap *m, size_t n) {
  size_t cap = m->cap ? m->cap : 16;
  while (cap < 2 * n) cap *= 2;
  if (cap != m->cap) resize(m, cap);
}

void *namemap_get(const NameMap *m, const char *key) {
  if (!key || m->n == 0) return NULL;
  NameSlot *s = find_slot(m->slots, m->cap, key, namemap_hash(key));
  return s->key ? s->value : NULL;
}

void *namemap_put(NameMap *m, const char *key, void *value) {
  if (!key) return NULL;
  if (2 * (m->n + 1) > m->cap) resize(m, m->cap ? m->cap * 2 : 16);
  uint64_t hash = namemap_hash(key);
  NameSlot *s = find_slot(m->slots, m->cap, key, hash);
  if (s->key) return s->value;
  *s = (NameSlot){ .key = key, .value = value, .hash = hash };
  m->n++;
  return value;
}

void namemap_clear(NameMap *m) {
  if (m->cap) memset(m->slots, 0, m->cap * sizeof *m->slots);
  m->n = 0;
}

void namemap_release(NameMap *m) {
  free(m->slots);
  *m = (NameMap){0};
}
