/* arena.c: bump allocation in large blocks, one arena per graph; the one place that handles
 * out-of-memory (it aborts: a transformer or executor without memory cannot say anything useful). */
#include "sf.h"

#include <stdlib.h>
#include <string.h>

typedef struct ArenaBlock Block;
struct ArenaBlock {
  Block *next;  /* older block */
  size_t size;  /* usable bytes in data */
  size_t used;  /* bytes handed out */
  _Alignas(16) unsigned char data[];
};

/* Blocks start small (most arenas hold a small graph) and double up to a limit, so that a graph
 * of a million operators takes a few hundred allocations rather than tens of thousands. */
enum { ARENA_BLOCK = 64 * 1024, ARENA_BLOCK_MAX = 4 * 1024 * 1024 };

_Noreturn void sf_die_at(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "internal error at %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  abort();
}

void *sf_xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) sf_die("out of memory (%zu bytes)", size);
  return p;
}

void *sf_xrealloc(void *p, size_t size) {
  void *q = realloc(p, size ? size : 1);
  if (!q) sf_die("out of memory (%zu bytes)", size);
  return q;
}

Arena *arena_new(void) {
  Arena *a = sf_xmalloc(sizeof *a);
  a->head = NULL;
  a->next = ARENA_BLOCK;
  a->dirty = false;
  return a;
}

void *arena_alloc_raw(Arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  a->dirty = true;
  Block *b = a->head;
  if (!b || b->size - b->used < size) {
    size_t want = size > a->next ? size : a->next;
    if (a->next < ARENA_BLOCK_MAX) a->next *= 2;
    b = sf_xmalloc(sizeof *b + want);
    b->size = want;
    b->used = 0;
    b->next = a->head;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += size;
  return p;
}

void *arena_alloc(Arena *a, size_t size) {
  void *p = arena_alloc_raw(a, size);
  memset(p, 0, size);
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  if (!s) return NULL;
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *arena_strdup(Arena *a, const char *s) {
  return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = arena_alloc(a, (size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}

void arena_reset_blocks(Arena *a) {
  a->dirty = false;
  Block *b = a->head;
  if (!b) return;
  Block *keep = b;
  /* keep the largest-first block (the newest) and free the rest */
  b = b->next;
  while (b) {
    Block *next = b->next;
    free(b);
    b = next;
  }
  keep->next = NULL;
  keep->used = 0;
  a->head = keep;
}

void arena_free(Arena *a) {
  if (!a) return;
  Block *b = a->head;
  while (b) {
    Block *next = b->next;
    free(b);
    b = next;
  }
  free(a);
}

void ptrvec_push(Arena *a, PtrVec *v, void *item) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    void **items = arena_alloc(a, sizeof(void *) * (size_t)cap);
    if (v->n) memcpy(items, v->items, sizeof(void *) * (size_t)v->n);
    v->items = items;
    v->cap = cap;
  }
  v->items[v->n++] = item;
}
