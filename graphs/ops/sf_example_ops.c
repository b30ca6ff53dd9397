/* sf_example_ops.c: example Custom operators for the example graphs, written against op.h only.
 *
 * sf_sessionize (graphs/clicks.xml): cuts each user's clicks into sessions.
 *   Input:  at least  user:string, ts:int.   Output: user:string, startTs:int, endTs:int, clicks:int.
 *   Params: gap (int >= 0, seconds, required), minClicks (int, default 1).
 *   Per user one open session (start, last, clicks). A click at ts with no open session opens one;
 *   with ts - last > gap it closes the open session, emitting (user, start, last, clicks) when
 *   clicks >= minClicks, and opens a new one with this click; otherwise it extends the session.
 *   A ts smaller than the user's last one is an error. Open sessions are discarded at the end of the
 *   stream (nothing is emitted on punctuation): the output depends only on each user's own clicks.
 *   With the param atEnd="emit" (default "discard"), the sessions still open when the final
 *   punctuation arrives are emitted then (those of at least minClicks clicks, by start time, ties
 *   by user name), so its model must say final="emits".
 *
 * sf_time_windows: cuts a stream into time windows with window punctuation.
 *   Input = output schema with at least  ATTR:int  (param attr, default "ts").
 *   Params: attr (the time attribute), period (int > 0, required).
 *   Forwards every tuple unchanged; before the first tuple whose ATTR / period differs from that
 *   of the tuple before it, emits window punctuation (ATTR must not decrease: an error). Its state
 *   is the position in the stream, so its model is state="unknown" punct="generates".
 *
 * sf_window_counts: counts the tuples of each key between window punctuations.
 *   Input: at least  KEY:string  (param key, default "key").  Output: KEY:string, count:int, and
 *   optionally window:int (how many windows ended before this one: 0, 1, 2, ...).
 *   Per key the number of tuples since the last window punctuation; when one arrives, emits
 *   (key, count) for every key seen in that window, in the order of their first tuple in it, and
 *   forgets them. Nothing is emitted per tuple, and an unfinished window is discarded at the end
 *   of the stream: model state="partitioned" keys=KEY selectivity="atmostone" punct="consumes".
 *
 * Checkpoints (op.h ABI version 2): each operator saves its state with a snapshot callback and reads
 * it back with restore, in a format of its own: a format number, then little-endian 64-bit numbers
 * and length-prefixed byte strings. sf_sessionize's snapshot is its open sessions (user, start,
 * last, clicks), sf_window_counts' the number of windows and the keys of the current one in order,
 * sf_time_windows' the time of the tuple before. restore may be called once per snapshot of the
 * old instances (a restart at another width): it merges, and the keyed ones keep only the keys
 * their instance owns (sf_owns_key). */
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
  bool emit_at_end;   /* atEnd="emit": open sessions are emitted at the final punctuation */
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

/* ---- snapshots: little-endian 64-bit numbers and length-prefixed byte strings ---- */

static int put_u64(sf_snapshot *out, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  return sf_snapshot_write(out, b, sizeof b);
}

static int put_bytes(sf_snapshot *out, const char *p, size_t n) {
  return put_u64(out, n) || sf_snapshot_write(out, p, n);
}

/* Reads a snapshot; a read past its end returns 0 (or "") and sets bad. */
typedef struct Reader {
  const unsigned char *p; /* the snapshot */
  size_t n, off;          /* its length, the next byte */
  bool bad;               /* a read went past the end */
} Reader;

static uint64_t get_u64(Reader *r) {
  if (r->bad || r->n - r->off < 8) {
    r->bad = true;
    return 0;
  }
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)r->p[r->off + (size_t)i] << (8 * i);
  r->off += 8;
  return v;
}

static const char *get_bytes(Reader *r, size_t *n) {
  uint64_t len = get_u64(r);
  if (r->bad || len > r->n - r->off) {
    r->bad = true;
    *n = 0;
    return "";
  }
  const char *p = (const char *)r->p + r->off;
  r->off += (size_t)len;
  *n = (size_t)len;
  return p;
}

/* A Reader over data[0..n) after checking that it starts with format number `format`. */
static int reader_open(sf_op *op, Reader *r, const void *data, size_t n, uint64_t format) {
  *r = (Reader){ .p = data, .n = n };
  uint64_t got = get_u64(r);
  if (got != format)
    return sf_error(op, "cannot restore a snapshot of format %llu (this library reads format %llu)",
                    (unsigned long long)got, (unsigned long long)format);
  return 0;
}

/* At the end of a restore: 0 when the whole snapshot was read, else sf_error. */
static int reader_done(sf_op *op, const Reader *r) {
  return r->bad || r->off != r->n ? sf_error(op, "snapshot truncated or malformed") : 0;
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
  const char *at_end = sf_param(op, "atEnd");
  if (at_end && strcmp(at_end, "emit") && strcmp(at_end, "discard")) {
    free(z);
    return sf_error(op, "parameter 'atEnd' must be 'emit' or 'discard', got '%s'", at_end);
  }
  z->emit_at_end = at_end && !strcmp(at_end, "emit");
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

/* Orders open sessions by start time, ties by user name. */
static int session_order(const void *a, const void *b) {
  const Session *x = *(const Session *const *)a, *y = *(const Session *const *)b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->user, y->user, n);
  return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

/* atEnd="emit": at the final punctuation, the open sessions of at least minClicks clicks. */
static int sessionize_punctuation(sf_op *op, void *state, int port, int kind) {
  Sessionize *z = state;
  if (kind != SF_PUNCT_FINAL || !z->emit_at_end || z->count == 0) return 0;
  const Session **open = malloc(z->count * sizeof *open);
  if (!open) return sf_error(op, "out of memory");
  size_t n = 0;
  for (size_t i = 0; i < z->cap; i++)
    if (z->slots[i].user && z->slots[i].clicks > 0 && z->slots[i].clicks >= z->min_clicks) open[n++] = &z->slots[i];
  qsort(open, n, sizeof *open, session_order);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) rc = emit_session(op, z, open[i]);
  free(open);
  return rc;
}

/* The open sessions, each: user, start, last, clicks. */
static int sessionize_snapshot(sf_op *op, void *state, sf_snapshot *out) {
  Sessionize *z = state;
  if (put_u64(out, 1) || put_u64(out, z->count)) return -1; /* format 1 */
  for (size_t i = 0; i < z->cap; i++) {
    const Session *s = &z->slots[i];
    if (s->user && (put_bytes(out, s->user, s->len) || put_u64(out, (uint64_t)s->start) ||
                    put_u64(out, (uint64_t)s->last) || put_u64(out, (uint64_t)s->clicks)))
      return -1;
  }
  return 0;
}

/* Adds the sessions of one snapshot whose user this instance owns. */
static int sessionize_restore(sf_op *op, void *state, const void *data, size_t n) {
  Sessionize *z = state;
  Reader r;
  if (reader_open(op, &r, data, n, 1) < 0) return -1;
  uint64_t count = get_u64(&r);
  sf_tuple *key = sf_key_new(op);
  if (!key) return -1;
  int rc = 0;
  for (uint64_t i = 0; i < count && !r.bad && rc == 0; i++) {
    size_t len;
    const char *user = get_bytes(&r, &len);
    int64_t start = (int64_t)get_u64(&r), last = (int64_t)get_u64(&r), clicks = (int64_t)get_u64(&r);
    if (r.bad) break;
    sf_set_string(key, z->in_user, user, len);
    if (!sf_owns_key(op, key)) continue; /* another instance restores it */
    Session *s = find_session(z, user, len);
    if (!s) {
      rc = sf_error(op, "out of memory");
    } else if (s->clicks > 0) {
      rc = sf_error(op, "user '%.*s' is in two snapshots", (int)len, user);
    } else {
      s->start = start;
      s->last = last;
      s->clicks = clicks;
    }
  }
  sf_tuple_free(key);
  return rc ? rc : reader_done(op, &r);
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
  .punctuation = sessionize_punctuation,
  .close = sessionize_close,
  .snapshot = sessionize_snapshot,
  .restore = sessionize_restore,
};

/* ---- sf_time_windows ---- */

typedef struct TimeWindows {
  int attr;       /* index of the time attribute */
  const char *name; /* its name (for messages) */
  int64_t period; /* window length */
  bool started;   /* a tuple was seen */
  int64_t last;   /* the time of the previous tuple */
} TimeWindows;

/* floor(t / period) for any sign of t. */
static int64_t window_of(int64_t t, int64_t period) {
  int64_t q = t / period;
  return t % period < 0 ? q - 1 : q;
}

static int time_windows_open(sf_op *op, void **state) {
  TimeWindows *w = calloc(1, sizeof *w);
  if (!w) return sf_error(op, "out of memory");
  *state = w; /* close frees it, also after a failure here */
  w->name = sf_param(op, "attr");
  if (!w->name) w->name = "ts";
  if (int_param(op, "period", true, 1, &w->period) || attr(op, sf_input_attr(op, w->name), true, w->name, &w->attr))
    return -1;
  return 0;
}

static int time_windows_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  TimeWindows *w = state;
  int64_t t = sf_get_int(in, w->attr);
  if (w->started && t < w->last)
    return sf_error(op, "'%s' went back from %lld to %lld", w->name, (long long)w->last, (long long)t);
  if (w->started && window_of(t, w->period) != window_of(w->last, w->period) && sf_emit_window(op) < 0) return -1;
  w->started = true;
  w->last = t;
  sf_tuple *out = sf_tuple_new(op);
  if (!out) return -1;
  sf_copy(out, in);
  return sf_emit(op, out);
}

/* Whether a tuple was seen, and the time of the last one. */
static int time_windows_snapshot(sf_op *op, void *state, sf_snapshot *out) {
  TimeWindows *w = state;
  return put_u64(out, 1) || put_u64(out, w->started) || put_u64(out, (uint64_t)w->last) ? -1 : 0;
}

/* state="unknown": never replicated, so one snapshot; merged anyway (the latest time wins). */
static int time_windows_restore(sf_op *op, void *state, const void *data, size_t n) {
  TimeWindows *w = state;
  Reader r;
  if (reader_open(op, &r, data, n, 1) < 0) return -1;
  bool started = get_u64(&r) != 0;
  int64_t last = (int64_t)get_u64(&r);
  if (reader_done(op, &r) < 0) return -1;
  if (started && (!w->started || last > w->last)) w->last = last;
  w->started = w->started || started;
  return 0;
}

static void time_windows_close(sf_op *op, void *state) {
  free(state);
}

SF_EXPORT const struct sf_operator sf_time_windows = {
  .abi_version = SF_OPERATOR_ABI,
  .open = time_windows_open,
  .process = time_windows_process,
  .close = time_windows_close,
  .snapshot = time_windows_snapshot,
  .restore = time_windows_restore,
};

/* ---- sf_window_counts ---- */

typedef struct KeyCount {
  char *key;     /* owned copy of the key */
  size_t len;    /* its length */
  int64_t count; /* tuples in this window */
} KeyCount;

typedef struct WindowCounts {
  int in_key;       /* input attribute index of the key */
  int out_key, out_count; /* output attribute indexes */
  int out_window;   /* output attribute `window`, -1 when the schema has none */
  int64_t windows;  /* window punctuations handled */
  KeyCount *keys;   /* the keys of this window, in the order of their first tuple */
  size_t n, cap;    /* used and allocated entries of keys */
  size_t *slots;    /* hash index into keys: index + 1, 0 when empty (open addressing) */
  size_t nslots;    /* slots (a power of two) */
} WindowCounts;

/* The slot of key in w->slots: the one holding it, or the empty one where it belongs. */
static size_t *count_slot(WindowCounts *w, const char *key, size_t len) {
  size_t i = (size_t)hash_bytes(key, len) & (w->nslots - 1);
  while (w->slots[i]) {
    const KeyCount *k = &w->keys[w->slots[i] - 1];
    if (k->len == len && !memcmp(k->key, key, len)) break;
    i = (i + 1) & (w->nslots - 1);
  }
  return &w->slots[i];
}

static int window_counts_open(sf_op *op, void **state) {
  WindowCounts *w = calloc(1, sizeof *w);
  if (!w) return sf_error(op, "out of memory");
  *state = w; /* close frees it, also after a failure here */
  const char *key = sf_param(op, "key");
  if (!key) key = "key";
  if (attr(op, sf_input_attr(op, key), true, key, &w->in_key) ||
      attr(op, sf_output_attr(op, key), false, key, &w->out_key) ||
      attr(op, sf_output_attr(op, "count"), false, "count", &w->out_count))
    return -1;
  w->out_window = sf_output_attr(op, "window");
  w->nslots = 64;
  w->slots = calloc(w->nslots, sizeof *w->slots);
  if (!w->slots) return sf_error(op, "out of memory");
  return 0;
}

/* Adds `count` tuples of key[0..len) to the window. 0, or sf_error. */
static int window_counts_add(sf_op *op, WindowCounts *w, const char *key, size_t len, int64_t count) {
  if (2 * (w->n + 1) > w->nslots) { /* grow the index and rebuild it */
    size_t nslots = 2 * w->nslots, *slots = calloc(nslots, sizeof *slots);
    if (!slots) return sf_error(op, "out of memory");
    free(w->slots);
    w->slots = slots;
    w->nslots = nslots;
    for (size_t i = 0; i < w->n; i++) *count_slot(w, w->keys[i].key, w->keys[i].len) = i + 1;
  }
  size_t *slot = count_slot(w, key, len);
  if (!*slot) {
    if (w->n == w->cap) {
      size_t cap = w->cap ? 2 * w->cap : 64;
      KeyCount *keys = realloc(w->keys, cap * sizeof *keys);
      if (!keys) return sf_error(op, "out of memory");
      w->keys = keys;
      w->cap = cap;
    }
    KeyCount *k = &w->keys[w->n];
    k->key = malloc(len + 1);
    if (!k->key) return sf_error(op, "out of memory");
    memcpy(k->key, key, len);
    k->key[len] = 0;
    k->len = len;
    k->count = 0;
    *slot = ++w->n;
  }
  w->keys[*slot - 1].count += count;
  return 0;
}

static int window_counts_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  WindowCounts *w = state;
  size_t len;
  const char *key = sf_get_string(in, w->in_key, &len);
  return window_counts_add(op, w, key, len, 1);
}

/* Forgets the keys of the window. */
static void window_counts_reset(WindowCounts *w) {
  for (size_t i = 0; i < w->n; i++) free(w->keys[i].key);
  w->n = 0;
  if (w->slots) memset(w->slots, 0, w->nslots * sizeof *w->slots);
}

/* A window ended: one (key, count) per key seen in it. The end of the stream discards the rest. */
static int window_counts_punctuation(sf_op *op, void *state, int port, int kind) {
  WindowCounts *w = state;
  if (kind != SF_PUNCT_WINDOW) return 0;
  for (size_t i = 0; i < w->n; i++) {
    sf_tuple *out = sf_tuple_new(op);
    if (!out) return -1;
    sf_set_string(out, w->out_key, w->keys[i].key, w->keys[i].len);
    sf_set_int(out, w->out_count, w->keys[i].count);
    if (w->out_window >= 0) sf_set_int(out, w->out_window, w->windows);
    if (sf_emit(op, out) < 0) return -1;
  }
  w->windows++;
  window_counts_reset(w);
  return 0;
}

/* The windows ended, then the keys of this window in the order of their first tuple, with counts. */
static int window_counts_snapshot(sf_op *op, void *state, sf_snapshot *out) {
  WindowCounts *w = state;
  if (put_u64(out, 1) || put_u64(out, (uint64_t)w->windows) || put_u64(out, w->n)) return -1;
  for (size_t i = 0; i < w->n; i++)
    if (put_bytes(out, w->keys[i].key, w->keys[i].len) || put_u64(out, (uint64_t)w->keys[i].count)) return -1;
  return 0;
}

/* Adds the counts of one snapshot for the keys this instance owns; every instance saw every window
 * punctuation, so the number of windows is the largest. */
static int window_counts_restore(sf_op *op, void *state, const void *data, size_t n) {
  WindowCounts *w = state;
  Reader r;
  if (reader_open(op, &r, data, n, 1) < 0) return -1;
  int64_t windows = (int64_t)get_u64(&r);
  uint64_t nkeys = get_u64(&r);
  sf_tuple *key = sf_key_new(op);
  if (!key) return -1;
  int rc = 0;
  for (uint64_t i = 0; i < nkeys && !r.bad && rc == 0; i++) {
    size_t len;
    const char *k = get_bytes(&r, &len);
    int64_t count = (int64_t)get_u64(&r);
    if (r.bad) break;
    sf_set_string(key, w->in_key, k, len);
    if (sf_owns_key(op, key)) rc = window_counts_add(op, w, k, len, count);
  }
  sf_tuple_free(key);
  if (rc || reader_done(op, &r) < 0) return -1;
  if (windows > w->windows) w->windows = windows;
  return 0;
}

static void window_counts_close(sf_op *op, void *state) {
  WindowCounts *w = state;
  if (!w) return;
  window_counts_reset(w);
  free(w->slots);
  free(w->keys);
  free(w);
}

SF_EXPORT const struct sf_operator sf_window_counts = {
  .abi_version = SF_OPERATOR_ABI,
  .open = window_counts_open,
  .process = window_counts_process,
  .punctuation = window_counts_punctuation,
  .close = window_counts_close,
  .snapshot = window_counts_snapshot,
  .restore = window_counts_restore,
};
