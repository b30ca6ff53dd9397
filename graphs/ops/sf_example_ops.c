/* sf_example_ops.c: example Custom operators for the example graphs, written against op.h only.
 *
 * sf_sessionize (graphs/clicks.xml): cuts each user's clicks into sessions.
 *   Input:  at least  user:string, ts:int.   Output: user:string, startTs:int, endTs:int, clicks:int.
 *   Params: gap (int >= 0, seconds, required), minClicks (int, default 1).
 *   Per user one open session (start, last, clicks). A click at ts with no open session opens one;
 *   with ts - last > gap it closes the open session, emitting (user, start, last, clicks) when
 *   clicks >= minClicks, and opens a new one with this click; otherwise it extends the session.
 *   A ts smaller than the user's last one is an error. Open sessions are discarded at the end of the
 *   stream (nothing is emitted on punctuation): the output depends only on each user's own clicks. */
#include "op.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- a hash table from user names to open sessions ---- */

typedef struct Session {
  char *user;    /* owned copy of the user name (NULL: empty slot) */
  size_t len;    /* its length */
  int64_t start; /* ts of the session's first click */
  int64_t last;  /* ts of its latest click */
  int64_t clicks;/* clicks so far */
} Session;

typedef struct Sessionize {
  int64_t gap;        /* largest gap inside one session, in seconds */
  int64_t min_clicks; /* shortest session emitted */
  int in_user, in_ts; /* input attribute indexes */
  int out_user, out_start, out_end, out_clicks; /* output attribute indexes */
  Session *slots;     /* open addressing, linear probing */
  size_t cap;         /* slots (a power of two) */
  size_t count;       /* users held */
} Sessionize;

static uint64_t hash_bytes(const char *p, size_t n) {
  uint64_t h = UINT64_C(0xcbf29ce484222325); /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * UINT64_C(0x100000001b3);
  return h;
}

static Session *probe(Session *slots, size_t cap, const char *user, size_t len) {
  size_t i = (size_t)hash_bytes(user, len) & (cap - 1);
  while (slots[i].user && (slots[i].len != len || memcmp(slots[i].user, user, len)))
    i = (i + 1) & (cap - 1);
  return &slots[i];
}

/* The session of user (a new, empty slot with user set and clicks 0 when there is none), or NULL
 * when out of memory. */
static Session *find_session(Sessionize *z, const char *user, size_t len) {
  if (2 * (z->count + 1) > z->cap) {
    size_t cap = z->cap ? 2 * z->cap : 64;
    Session *slots = calloc(cap, sizeof *slots);
    if (!slots) return NULL;
    for (size_t i = 0; i < z->cap; i++)
      if (z->slots[i].user) *probe(slots, cap, z->slots[i].user, z->slots[i].len) = z->slots[i];
    free(z->slots);
    z->slots = slots;
    z->cap = cap;
  }
  Session *s = probe(z->slots, z->cap, user, len);
  if (!s->user) {
    s->user = malloc(len + 1);
    if (!s->user) return NULL;
    memcpy(s->user, user, len);
    s->user[len] = 0;
    s->len = len;
    s->clicks = 0;
    z->count++;
  }
  return s;
}

/* ---- the operator ---- */

/* Parses an int parameter; *out keeps its default when absent. 0, or sf_error. */
static int int_param(sf_op *op, const char *name, bool required, int64_t min, int64_t *out) {
  const char *text = sf_param(op, name);
  if (!text) return required ? sf_error(op, "needs parameter '%s'", name) : 0;
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (!*text || *end || errno || v < min)
    return sf_error(op, "parameter '%s' must be an integer >= %lld, got '%s'", name, (long long)min, text);
  *out = v;
  return 0;
}

static int attr(sf_op *op, int index, bool input, const char *name, int *out) {
  *out = index;
  if (index < 0) return sf_error(op, "the %s schema has no attribute '%s'", input ? "input" : "output", name);
  return 0;
}

static int sessionize_open(sf_op *op, void **state) {
  Sessionize *z = calloc(1, sizeof *z);
  if (!z) return sf_error(op, "out of memory");
  z->min_clicks = 1;
  if (int_param(op, "gap", true, 0, &z->gap) || int_param(op, "minClicks", false, INT64_MIN, &z->min_clicks) ||
      attr(op, sf_input_attr(op, "user"), true, "user", &z->in_user) ||
      attr(op, sf_input_attr(op, "ts"), true, "ts", &z->in_ts) ||
      attr(op, sf_output_attr(op, "user"), false, "user", &z->out_user) ||
      attr(op, sf_output_attr(op, "startTs"), false, "startTs", &z->out_start) ||
      attr(op, sf_output_attr(op, "endTs"), false, "endTs", &z->out_end) ||
      attr(op, sf_output_attr(op, "clicks"), false, "clicks", &z->out_clicks)) {
    free(z);
    return -1;
  }
  *state = z;
  return 0;
}

static int emit_session(sf_op *op, const Sessionize *z, const Session *s) {
  sf_tuple *out = sf_tuple_new(op);
  if (!out) return -1;
  sf_set_string(out, z->out_user, s->user, s->len);
  sf_set_int(out, z->out_start, s->start);
  sf_set_int(out, z->out_end, s->last);
  sf_set_int(out, z->out_clicks, s->clicks);
  return sf_emit(op, out);
}

static int sessionize_process(sf_op *op, void *state, int port, const sf_tuple *click) {
  Sessionize *z = state;
  size_t len;
  const char *user = sf_get_string(click, z->in_user, &len);
  int64_t ts = sf_get_int(click, z->in_ts);
  Session *s = find_session(z, user, len);
  if (!s) return sf_error(op, "out of memory");
  if (s->clicks > 0) {
    if (ts < s->last)
      return sf_error(op, "click of user '%.*s' at ts %lld is earlier than the previous one at ts %lld", (int)len,
                      user, (long long)ts, (long long)s->last);
    /* ts - last cannot overflow: ts >= last */
    if ((uint64_t)ts - (uint64_t)s->last <= (uint64_t)z->gap) {
      s->last = ts;
      s->clicks++;
      return 0;
    }
    if (s->clicks >= z->min_clicks && emit_session(op, z, s) < 0) return -1;
  }
  s->start = s->last = ts;
  s->clicks = 1;
  return 0;
}

static void sessionize_close(sf_op *op, void *state) {
  Sessionize *z = state;
  if (!z) return;
  for (size_t i = 0; i < z->cap; i++) free(z->slots[i].user);
  free(z->slots);
  free(z);
}

SF_EXPORT const struct sf_operator sf_sessionize = {
  .abi_version = SF_OPERATOR_ABI,
  .open = sessionize_open,
  .process = sessionize_process,
  .close = sessionize_close,
};
