/* regex.c: the regular expressions of regex_match and regex_extract (docs/language.md,
 * "Functions"), with PCRE2's 8-bit library: patterns and subjects are bytes (no UTF mode, which a
 * pattern cannot turn on either, so no subject is ever invalid), compiled once (sf-xform's checker
 * compiles a pattern to report the error of one that does not compile; the runtime compiles each
 * call's pattern once, in the compiled expression's arena), matched with limits on the work and
 * memory of one match.
 *
 * A match needs a match data block (the match's offsets and its backtracking memory), which
 * cannot be shared by threads matching at once: each thread keeps one, the largest it has needed,
 * freed when the thread ends (a key's destructor). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "sf.h"

#include <pcre2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct Regex {
  pcre2_code *code;
  pcre2_match_context *limits; /* REGEX_MATCH_LIMIT, REGEX_DEPTH_LIMIT, REGEX_HEAP_LIMIT_KIB */
  pcre2_general_context *memory; /* the arena's (NULL: malloc) */
  int groups;                    /* capture groups */
  bool in_arena;                 /* whether regex_free has nothing to free */
};

static void *arena_malloc(size_t size, void *arena) {
  return arena_alloc_raw(arena, size ? size : 1);
}

static void arena_nofree(void *p, void *arena) {
  (void)p, (void)arena;
}

Regex *regex_compile(const char *p, size_t n, Arena *a, char *err, size_t errlen, size_t *offset) {
  pcre2_general_context *memory = NULL;
  if (a && !(memory = pcre2_general_context_create(arena_malloc, arena_nofree, a))) sf_die("out of memory");
  pcre2_compile_context *cc = pcre2_compile_context_create(memory);
  if (!cc) sf_die("out of memory");
  int code;
  PCRE2_SIZE at = 0;
  pcre2_code *re = pcre2_compile((PCRE2_SPTR)p, n, PCRE2_NEVER_UTF, &code, &at, cc);
  pcre2_compile_context_free(cc);
  if (!re) {
    PCRE2_UCHAR text[256];
    if (pcre2_get_error_message(code, text, sizeof text) < 0) snprintf((char *)text, sizeof text, "error %d", code);
    if (err && errlen) snprintf(err, errlen, "%s", (const char *)text);
    if (offset) *offset = at;
    pcre2_general_context_free(memory);
    return NULL;
  }
  Regex *r = a ? arena_alloc(a, sizeof *r) : sf_xmalloc(sizeof *r);
  memset(r, 0, sizeof *r);
  r->code = re;
  r->memory = memory;
  r->in_arena = a != NULL;
  uint32_t groups = 0;
  pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &groups);
  r->groups = (int)groups;
  if (!(r->limits = pcre2_match_context_create(memory))) sf_die("out of memory");
  pcre2_set_match_limit(r->limits, REGEX_MATCH_LIMIT);
  pcre2_set_depth_limit(r->limits, REGEX_DEPTH_LIMIT);
  pcre2_set_heap_limit(r->limits, REGEX_HEAP_LIMIT_KIB);
  return r;
}

void regex_free(Regex *r) {
  if (!r || r->in_arena) return;
  pcre2_code_free(r->code);
  pcre2_match_context_free(r->limits);
  free(r);
}

int regex_groups(const Regex *r) {
  return r->groups;
}

/* This thread's match data, with room for at least `pairs` offset pairs. */
static pthread_key_t data_key;
static pthread_once_t data_once = PTHREAD_ONCE_INIT;
static _Thread_local pcre2_match_data *data;
static _Thread_local uint32_t data_pairs;

static void data_free(void *d) {
  pcre2_match_data_free(d);
}

static void data_key_make(void) {
  if (pthread_key_create(&data_key, data_free)) sf_die("pthread_key_create failed");
}

static pcre2_match_data *match_data(uint32_t pairs) {
  if (data && data_pairs >= pairs) return data;
  pthread_once(&data_once, data_key_make);
  pcre2_match_data_free(data);
  data_pairs = pairs < 16 ? 16 : pairs;
  if (!(data = pcre2_match_data_create(data_pairs, NULL))) sf_die("out of memory");
  pthread_setspecific(data_key, data);
  return data;
}

int regex_search(const Regex *r, const char *s, size_t n, int group, size_t *from, size_t *len, char *err,
                 size_t errlen) {
  sf_assert(group >= 0 && group <= r->groups);
  pcre2_match_data *d = match_data((uint32_t)group + 1);
  int rc = pcre2_match(r->code, (PCRE2_SPTR)(n ? s : ""), n, 0, 0, d, r->limits);
  if (rc == PCRE2_ERROR_NOMATCH) return 0;
  if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT) {
    if (err && errlen) snprintf(err, errlen, "match limit exceeded");
    return -1;
  }
  if (rc < 0) {
    PCRE2_UCHAR text[256];
    if (pcre2_get_error_message(rc, text, sizeof text) < 0) snprintf((char *)text, sizeof text, "error %d", rc);
    if (err && errlen) snprintf(err, errlen, "%s", (const char *)text);
    return -1;
  }
  const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(d);
  if (rc <= group || ov[2 * group] == PCRE2_UNSET) {
    *from = SIZE_MAX;
    *len = 0;
  } else {
    *from = ov[2 * group];
    *len = ov[2 * group + 1] - ov[2 * group];
  }
  return 1;
}
