/* graph.c: the in-memory graph: construction, lookups, and linking streams to their producer and
 * consumers. Every allocation goes to the graph's arena. */
#include "sf.h"

#include <stdlib.h>
#include <string.h>

/* The kinds: the rows of kinds.def (docs/language.md, "Operator kinds" and "Models"). */
#define PORTS(min_in, max_in, min_out, max_out) min_in, max_in, min_out, max_out
#define PARAMS(...) {__VA_ARGS__}
#define MODEL(sel, keyed, forwards) false, sel, keyed, forwards
#define MODEL_DECLARED true, SEL_MANY, KEYED_NO, FORWARDS_NONE
static const KindInfo kinds[KIND_COUNT_] = {
  [KIND_UNKNOWN] = {.name = "unknown", .sel = SEL_ONE}, /* check refuses it before analyze reads it */
#define KIND(id, name, impl, ports, required, optional, flags, model)                                  \
  [KIND_##id] = {name, ports, required, optional, ((flags) & ANY_PARAMS) != 0, ((flags) & TAKES_SETS) != 0, \
                 ((flags) & TAKES_STATES) != 0, ((flags) & TAKES_LETS) != 0, ((flags) & SAME_SCHEMA) != 0, model},
#include "kinds.def"
#undef KIND
};
#undef MODEL_DECLARED
#undef MODEL
#undef PARAMS
#undef PORTS

const KindInfo *kind_info(OpKind k) {
  return &kinds[(k >= 0 && k < KIND_COUNT_) ? k : KIND_UNKNOWN];
}

const char *kind_name(OpKind k) {
  return kind_info(k)->name;
}

OpKind kind_from_name(const char *name) {
  for (int k = 1; k < KIND_COUNT_; k++)
    if (name && strcmp(kinds[k].name, name) == 0) return (OpKind)k;
  return KIND_UNKNOWN;
}

const char *kind_suggest(const char *name) {
  const char *names[KIND_COUNT_ - 1];
  for (int k = 1; k < KIND_COUNT_; k++) names[k - 1] = kinds[k].name;
  return diag_suggest(name, names, KIND_COUNT_ - 1);
}

const char *type_name(Type t) {
  switch (t) {
  case TYPE_INT: return "int";
  case TYPE_DOUBLE: return "double";
  case TYPE_STRING: return "string";
  case TYPE_BOOL: return "bool";
  default: return "none";
  }
}

Type type_from_name(const char *name) {
  if (!name) return TYPE_NONE;
  if (!strcmp(name, "int")) return TYPE_INT;
  if (!strcmp(name, "double")) return TYPE_DOUBLE;
  if (!strcmp(name, "string")) return TYPE_STRING;
  if (!strcmp(name, "bool")) return TYPE_BOOL;
  return TYPE_NONE;
}

/* ---- lookups by name ---- */

/* A map from the names of one array's elements to the elements, and which array state it reflects. */
typedef struct ArrayIndex {
  NameMap map;       /* name -> element, the first of equal names */
  const void *array; /* the array it was built from */
  int count;         /* how many of its elements */
} ArrayIndex;

struct GraphIndex {
  ArrayIndex ops;     /* g->ops by name */
  ArrayIndex schemas; /* g->schemas by name */
  ArrayIndex hosts;   /* g->hosts by name */
  NameMap streams;    /* g->streams by name, filled by graph_link as it declares them */
  NameMap outputs;    /* graph_link: every stream name some output port writes (errors only) */
};

Graph *graph_new(const char *file) {
  Arena *a = arena_new();
  Graph *g = arena_alloc(a, sizeof *g);
  g->arena = a;
  g->file = arena_strdup(a, file ? file : "<graph>");
  g->index = arena_alloc(a, sizeof *g->index);
  return g;
}

void graph_free(Graph *g) {
  if (!g) return;
  struct GraphIndex *ix = g->index;
  namemap_release(&ix->ops.map);
  namemap_release(&ix->schemas.map);
  namemap_release(&ix->hosts.map);
  namemap_release(&ix->streams);
  namemap_release(&ix->outputs);
  arena_free(g->arena);
}

/* ix, brought up to date with the array (of n elements whose name is name_of) when it changed. */
static const NameMap *array_index(ArrayIndex *ix, void *const *array, int n, const char *(*name_of)(const void *)) {
  if (ix->array != array || ix->count != n) {
    namemap_clear(&ix->map);
    namemap_reserve(&ix->map, (size_t)n);
    for (int i = 0; i < n; i++) namemap_put(&ix->map, name_of(array[i]), array[i]);
    ix->array = array;
    ix->count = n;
  }
  return &ix->map;
}

static const char *schema_name(const void *p) { return ((const Schema *)p)->name; }
static const char *host_name(const void *p) { return ((const Host *)p)->name; }
static const char *op_name(const void *p) { return ((const Op *)p)->name; }

Schema *graph_find_schema(const Graph *g, const char *name) {
  return namemap_get(array_index(&g->index->schemas, (void *const *)g->schemas, g->nschemas, schema_name), name);
}

Host *graph_find_host(const Graph *g, const char *name) {
  return namemap_get(array_index(&g->index->hosts, (void *const *)g->hosts, g->nhosts, host_name), name);
}

Op *graph_find_op(const Graph *g, const char *name) {
  return namemap_get(array_index(&g->index->ops, (void *const *)g->ops, g->nops, op_name), name);
}

Stream *graph_find_stream(const Graph *g, const char *name) {
  return namemap_get(&g->index->streams, name);
}

int schema_find_attr(const Schema *s, const char *name) {
  for (int i = 0; s && name && i < s->nattrs; i++)
    if (!strcmp(s->attrs[i].name, name)) return i;
  return -1;
}

/* diag_suggest among the names `name_of` gives the n elements of `items`. */
static const char *suggest_among(const char *name, void *const *items, int n, const char *(*name_of)(const void *)) {
  const char **names = sf_xmalloc(sizeof *names * (size_t)(n + 1));
  for (int i = 0; i < n; i++) names[i] = name_of(items[i]);
  const char *hint = diag_suggest(name, names, n);
  free(names);
  return hint;
}

const char *hosts_suggest(Host *const *hosts, int nhosts, const char *name) {
  if (nhosts == 0) {
    static const char *const local[] = {SF_DEFAULT_HOST_NAME};
    return diag_suggest(name, local, 1);
  }
  return suggest_among(name, (void *const *)hosts, nhosts, host_name);
}

const char *graph_suggest_schema(const Graph *g, const char *name) {
  return suggest_among(name, (void *const *)g->schemas, g->nschemas, schema_name);
}

const char *graph_suggest_stream(const Graph *g, const char *name) {
  int n = 0, k = 0;
  for (int i = 0; i < g->nops; i++) n += g->ops[i]->noutputs;
  const char **names = sf_xmalloc(sizeof *names * (size_t)(n + 1));
  for (int i = 0; i < g->nops; i++)
    for (int p = 0; p < g->ops[i]->noutputs; p++) names[k++] = g->ops[i]->outputs[p].stream;
  const char *hint = diag_suggest(name, names, n);
  free(names);
  return hint;
}

const char *schema_suggest_attr(const Schema *s, const char *name) {
  if (!s) return NULL;
  const char **names = sf_xmalloc(sizeof *names * (size_t)(s->nattrs + 1));
  for (int i = 0; i < s->nattrs; i++) names[i] = s->attrs[i].name;
  const char *hint = diag_suggest(name, names, s->nattrs);
  free(names);
  return hint;
}

const Param *op_find_param(const Op *op, const char *name) {
  for (int i = 0; i < op->nparams; i++)
    if (!strcmp(op->params[i].name, name)) return &op->params[i];
  return NULL;
}

const char *op_param(const Op *op, const char *name) {
  const Param *p = op_find_param(op, name);
  return p ? p->text : NULL;
}

Schema *op_input_schema(const Op *op) {
  if (op->ninputs < 1 || op->inputs[0].nstreams < 1 || !op->inputs[0].streams) return NULL;
  Stream *s = op->inputs[0].streams[0];
  return s ? s->schema : NULL;
}

Schema *op_output_schema(const Op *op) {
  if (op->noutputs < 1 || !op->outputs[0].resolved) return NULL;
  return op->outputs[0].resolved->schema;
}

/* The stream named `name` if op's output declared it (then it is the one of that name), else NULL.
 * An operator mostly reads what the one before it writes: this spares the map that lookup. */
static Stream *produced_by(const Op *op, const char *name) {
  for (int p = 0; p < op->noutputs; p++) {
    Stream *s = op->outputs[p].resolved;
    if (s && name && (s->name == name || !strcmp(s->name, name))) return s;
  }
  return NULL;
}

int graph_link(Graph *g, Diag *d) {
  int before = d->nerrors;
  g->streams.n = 0;
  namemap_clear(&g->index->streams);
  namemap_clear(&g->index->outputs);
  size_t noutputs = 0;
  for (int i = 0; i < g->nops; i++) noutputs += (size_t)g->ops[i]->noutputs;
  namemap_reserve(&g->index->streams, noutputs);
  const char *schema_name = NULL; /* outputs mostly name the schema of the one before */
  Schema *schema = NULL;
  Stream *spare = NULL; /* allocated for a stream that turned out to be produced twice */
  for (int i = 0; i < g->nops; i++) {
    Op *op = g->ops[i];
    op->index = i;
    for (int p = 0; p < op->noutputs; p++) {
      Output *out = &op->outputs[p];
      out->resolved = NULL;
      if (!schema_name || !out->schema || strcmp(out->schema, schema_name)) {
        schema_name = out->schema;
        schema = graph_find_schema(g, out->schema);
      }
      if (!schema) {
        const char *hint = graph_suggest_schema(g, out->schema);
        diag_error(d, out->line, 0, "unknown schema '%s' for stream '%s'" DIAG_HINT_FMT, out->schema, out->stream,
                   DIAG_HINT(hint));
        continue;
      }
      Stream *s = spare ? spare : arena_alloc(g->arena, sizeof *s);
      spare = NULL;
      *s = (Stream){ .name = out->stream, .schema = schema, .producer = op, .port = p, .line = out->line };
      Stream *prev = namemap_put(&g->index->streams, s->name, s); /* one probe: finds or adds */
      if (prev && prev != s) {
        diag_error(d, out->line, 0, "stream '%s' is produced twice: by '%s' (line %d) and by '%s'",
                   out->stream, prev->producer->name, prev->line, op->name);
        spare = s;
        continue;
      }
      out->resolved = s;
      ptrvec_push(g->arena, &g->streams, s);
    }
  }
  for (int i = 0; i < g->nops; i++) {
    Op *op = g->ops[i];
    for (int p = 0; p < op->ninputs; p++) {
      Input *in = &op->inputs[p];
      if (!in->streams) in->streams = arena_alloc(g->arena, sizeof(Stream *) * (size_t)(in->nstreams + 1));
      for (int k = 0; k < in->nstreams; k++) {
        Stream *s = i > 0 ? produced_by(g->ops[i - 1], in->names[k]) : NULL;
        if (!s) s = graph_find_stream(g, in->names[k]);
        in->streams[k] = s;
        if (!s) {
          /* a stream some output declares was refused above; say nothing more about it */
          NameMap *outputs = &g->index->outputs;
          if (outputs->n == 0)
            for (int j = 0; j < g->nops; j++)
              for (int q = 0; q < g->ops[j]->noutputs; q++)
                namemap_put(outputs, g->ops[j]->outputs[q].stream, &g->ops[j]->outputs[q]);
          if (!namemap_get(outputs, in->names[k])) {
            const char *hint = graph_suggest_stream(g, in->names[k]);
            diag_error(d, in->line, 0, "operator '%s' reads stream '%s', which no operator produces" DIAG_HINT_FMT,
                       op->name, in->names[k], DIAG_HINT(hint));
          }
          continue;
        }
        for (int j = 0; j < k; j++)
          if (in->streams[j] == s)
            diag_error(d, in->line, 0, "operator '%s' lists stream '%s' twice in one input", op->name, s->name);
        ptrvec_push(g->arena, &s->consumers, op);
      }
    }
  }
  return d->nerrors - before;
}

const char **names_split(Arena *a, const char *text, int *count) {
  int n = 0;
  for (const char *p = text; p && *p;) {
    while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) break;
    n++;
    while (*p && *p != ' ' && *p != ',' && *p != '\t' && *p != '\n' && *p != '\r') p++;
  }
  const char **items = arena_alloc(a, sizeof(char *) * (size_t)(n + 1));
  int k = 0;
  for (const char *p = text; p && *p;) {
    while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) break;
    const char *start = p;
    while (*p && *p != ' ' && *p != ',' && *p != '\t' && *p != '\n' && *p != '\r') p++;
    items[k++] = arena_strndup(a, start, (size_t)(p - start));
  }
  *count = n;
  return items;
}

/* ---- numbers ---- */

NumRead number_read(const char *text, size_t n, int64_t min, int64_t max, int64_t *out) {
  if (!text) return NUM_MALFORMED;
  size_t k = n > 0 && text[0] == '-' ? 1 : 0;
  if (k == n) return NUM_MALFORMED;
  bool negative = k == 1, big = false;
  uint64_t mag = 0, limit = negative ? UINT64_C(1) << 63 : (uint64_t)INT64_MAX;
  for (; k < n; k++) {
    if (text[k] < '0' || text[k] > '9') return NUM_MALFORMED;
    unsigned digit = (unsigned)(text[k] - '0');
    if (big || mag > (limit - digit) / 10) big = true; /* keep reading: a later non-digit is malformed */
    else mag = mag * 10 + digit;
  }
  if (big) return negative ? NUM_BELOW : NUM_ABOVE;
  int64_t v = negative ? (int64_t)(0 - mag) : (int64_t)mag;
  if (v < min) return NUM_BELOW;
  if (v > max) return NUM_ABOVE;
  *out = v;
  return NUM_OK;
}

/* The words of a window's text: where each starts and how long it is. More than WINDOW_WORDS
 * words are never valid, so the one after them only needs its offset. */
enum { WINDOW_WORDS = 4 };
typedef struct WindowWords {
  size_t off[WINDOW_WORDS + 1], len[WINDOW_WORDS + 1];
  int n; /* words found, at most WINDOW_WORDS + 1 */
} WindowWords;

static bool word_is(const char *text, const WindowWords *ws, int k, const char *word) {
  return k < ws->n && ws->len[k] == strlen(word) && !strncmp(text + ws->off[k], word, ws->len[k]);
}

/* Reads the numbers of words first..last-1 into out[], then wants no word after them. */
static NumRead window_numbers(const char *text, const WindowWords *ws, int first, int last, int64_t *out,
                              size_t *at) {
  for (int k = first; k < last; k++) {
    if (k >= ws->n) { /* the number is missing: no word to point at */
      *at = 0;
      return NUM_MALFORMED;
    }
    *at = ws->off[k];
    NumRead r = number_read(text + ws->off[k], ws->len[k], 1, INT64_MAX, &out[k - first]);
    if (r != NUM_OK) return r;
  }
  if (ws->n > last) {
    *at = ws->off[last];
    return NUM_MALFORMED;
  }
  return NUM_OK;
}

NumRead window_parse(const char *text, WindowSpec *w, size_t *at) {
  static const char space[] = " \t\n\r";
  *at = 0;
  if (!text) return NUM_MALFORMED;
  WindowWords ws = {.n = 0};
  for (size_t i = 0; text[i] && ws.n <= WINDOW_WORDS;) {
    ws.off[ws.n] = i;
    ws.len[ws.n] = strcspn(text + i, space);
    i += ws.len[ws.n++];
    i += strspn(text + i, space);
  }
  int64_t v[2] = {0, 0};
  NumRead r;
  if (word_is(text, &ws, 0, "running")) {
    if (ws.n > 1) {
      *at = ws.off[1];
      return NUM_MALFORMED;
    }
    *w = (WindowSpec){.kind = WIN_RUNNING};
    return NUM_OK;
  }
  bool hopping = word_is(text, &ws, 0, "hopping"), session = word_is(text, &ws, 0, "session");
  bool tumbling = word_is(text, &ws, 0, "tumbling"), sliding = word_is(text, &ws, 0, "sliding");
  if (hopping || session || (tumbling && word_is(text, &ws, 1, "time"))) {
    if (!word_is(text, &ws, 1, "time")) {
      *at = ws.n > 1 ? ws.off[1] : 0;
      return NUM_MALFORMED;
    }
    r = window_numbers(text, &ws, 2, hopping ? 4 : 3, v, at);
    if (r != NUM_OK) return r;
    if (hopping) *w = (WindowSpec){.kind = WIN_HOPPING_TIME, .size = v[0], .slide = v[1]};
    else if (session) *w = (WindowSpec){.kind = WIN_SESSION_TIME, .size = v[0]};
    else *w = (WindowSpec){.kind = WIN_TUMBLING_TIME, .size = v[0], .slide = v[0]};
    return NUM_OK;
  }
  if (!tumbling && !sliding) return NUM_MALFORMED;
  r = window_numbers(text, &ws, 1, 2, v, at);
  if (r != NUM_OK) return r;
  *w = (WindowSpec){.kind = sliding ? WIN_SLIDING : WIN_TUMBLING, .size = v[0]};
  return NUM_OK;
}

static bool on_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool on_ident(char c) { return on_ident_start(c) || (c >= '0' && c <= '9'); }
static bool on_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int lookup_on_parse(Arena *a, const char *text, LookupOn **on, size_t *at) {
  *at = 0;
  *on = NULL;
  if (!text) return -1;
  PtrVec pairs = {0};
  const char *p = text;
  for (;;) {
    while (on_space(*p)) p++;
    if (strncmp(p, "table.", 6) || !on_ident_start(p[6])) break;
    const char *c = p + 6, *ce = c;
    while (on_ident(*ce)) ce++;
    p = ce;
    while (on_space(*p)) p++;
    if (*p != '=') break;
    p++;
    while (on_space(*p)) p++;
    if (!on_ident_start(*p)) break;
    const char *t = p, *te = t;
    while (on_ident(*te)) te++;
    LookupOn *pair = arena_alloc(a, sizeof *pair);
    pair->column = arena_strndup(a, c, (size_t)(ce - c));
    pair->attr = arena_strndup(a, t, (size_t)(te - t));
    ptrvec_push(a, &pairs, pair);
    p = te;
    const char *before = p;
    while (on_space(*p)) p++;
    if (!*p) {
      LookupOn *out = arena_alloc(a, sizeof *out * (size_t)pairs.n);
      for (int k = 0; k < pairs.n; k++) out[k] = *(LookupOn *)pairs.items[k];
      *on = out;
      return pairs.n;
    }
    if (p == before || strncmp(p, "and", 3) || !on_space(p[3])) break;
    p += 3;
  }
  *at = (size_t)(p - text);
  return -1;
}
