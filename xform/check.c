/* check.c: the semantic checks that graph.xsd cannot express, run after validation:
 * unique names, streams linked to one producer, ports and parameters per kind
 * (docs/language.md, "Operator kinds", and op.h's limit for Custom), host pins and colocate tags
 * that placement could not honour, no two FileSinks writing one file, acyclicity, and every
 * expression parsed and type-checked against the right schema, with output schemas fully
 * produced. A graph that passes is one sf-exec can start: its own refusals at start-up that depend
 * only on the graph are unreachable defences.
 * Every problem is reported (the driver prints them with diag_flush(DIAG_BY_PLACE), so a user reads
 * them top to bottom whichever check found them); the caller stops when any was. Cycles and expressions are
 * checked only when every name and reference resolved, since they depend on the links. */
#include "sf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the kinds (kinds.def, read through kind_info) ---- */

static bool listed(const char *const *names, const char *name) {
  for (int i = 0; i < KIND_MAX_PARAMS && names[i]; i++)
    if (!strcmp(names[i], name)) return true;
  return false;
}

/* "no input ports", "1 output port", "at least 1 input port", "at most 1 input port",
 * "0 to 2 output ports" */
static const char *ports_text(int min, int max, const char *what) {
  static char buf[4][64];
  static int k;
  char *b = buf[k++ & 3];
  if (max == MANY)
    snprintf(b, 64, "at least %d %s port%s", min, what, min == 1 ? "" : "s");
  else if (min == max && min == 0)
    snprintf(b, 64, "no %s ports", what);
  else if (min == max)
    snprintf(b, 64, "%d %s port%s", min, what, min == 1 ? "" : "s");
  else if (min == 0)
    snprintf(b, 64, "at most %d %s port%s", max, what, max == 1 ? "" : "s");
  else
    snprintf(b, 64, "%d to %d %s ports", min, max, what);
  return b;
}

/* ---- names ---- */

/* Names are looked up in the graph's tables, which hold the first of equal names. */
static void check_names(Graph *g, Diag *d) {
  for (int i = 0; i < g->nschemas; i++) {
    const Schema *first = graph_find_schema(g, g->schemas[i]->name);
    if (first != g->schemas[i])
      diag_error(d, g->schemas[i]->line, 0, "schema '%s' is declared twice (first on line %d)",
                 g->schemas[i]->name, first->line);
  }
  for (int i = 0; i < g->nschemas; i++) {
    Schema *s = g->schemas[i];
    for (int a = 0; a < s->nattrs; a++)
      for (int b = 0; b < a; b++)
        if (!strcmp(s->attrs[a].name, s->attrs[b].name))
          diag_error(d, s->attrs[a].line, 0, "attribute '%s' is declared twice in schema '%s'",
                     s->attrs[a].name, s->name);
  }
  NameMap addresses = {0}; /* address -> the first host with it */
  for (int i = 0; i < g->nhosts; i++) {
    Host *h = g->hosts[i], *first = graph_find_host(g, h->name);
    Host *same = namemap_put(&addresses, h->address, h);
    if (first != h)
      diag_error(d, h->line, 0, "host '%s' is declared twice (first on line %d)", h->name, first->line);
    else if (same && same != h)
      diag_error(d, h->line, 0, "hosts '%s' and '%s' have the same address '%s'", same->name, h->name,
                 h->address);
  }
  namemap_release(&addresses);
  for (int i = 0; i < g->nops; i++) {
    const Op *first = graph_find_op(g, g->ops[i]->name);
    if (first != g->ops[i])
      diag_error(d, g->ops[i]->line, 0, "operator '%s' is declared twice (first on line %d)",
                 g->ops[i]->name, first->line);
  }
  for (int i = 0; i < g->nops; i++) {
    Op *op = g->ops[i];
    if (op->host && g->nhosts > 0 && !graph_find_host(g, op->host)) {
      const char *hint = hosts_suggest(g->hosts, g->nhosts, op->host);
      diag_error(d, op->line, 0, "operator '%s' is placed on unknown host '%s'" DIAG_HINT_FMT, op->name, op->host,
                 DIAG_HINT(hint));
    }
  }
}

/* ---- placement: pins and colocate tags ---- */

/* Operators sharing a colocate tag run on one host, so two of them pinned to different hosts can
 * never be placed. Replicas of one operator (a rewritten graph) keep its tag but are meant to be
 * spread, so they are not compared with each other. Reported once per tag, at the first operator
 * whose pin disagrees with the first pinned one. */
static void check_colocate(Graph *g, Diag *d) {
  NameMap first = {0};    /* tag -> its first pinned operator */
  NameMap reported = {0}; /* tags already reported */
  for (int j = 0; j < g->nops; j++) {
    Op *b = g->ops[j];
    if (!b->colocate || !b->host) continue;
    Op *a = namemap_put(&first, b->colocate, b);
    if (a == b || !strcmp(b->host, a->host) || namemap_get(&reported, b->colocate)) continue;
    if (a->origin && b->origin && !strcmp(a->origin, b->origin) && a->channel >= 0 && b->channel >= 0)
      continue;
    diag_error(d, b->line, 0,
               "operators '%s' (line %d) and '%s' share colocate tag '%s' but are pinned to different "
               "hosts ('%s' and '%s')", a->name, a->line, b->name, b->colocate, a->host, b->host);
    namemap_put(&reported, b->colocate, b);
  }
  namemap_release(&first);
  namemap_release(&reported);
}

int graph_check_pins(Graph *g, Host *const *hosts, int nhosts, Diag *d) {
  int before = d->nerrors;
  NameMap names = {0}; /* the hosts by name */
  for (int h = 0; h < nhosts; h++) namemap_put(&names, hosts[h]->name, hosts[h]);
  for (int i = 0; i < g->nops; i++) {
    const Op *op = g->ops[i];
    if (!op->host) continue;
    bool known = nhosts == 0 ? !strcmp(op->host, SF_DEFAULT_HOST_NAME) : namemap_get(&names, op->host) != NULL;
    if (!known) {
      const char *hint = hosts_suggest(hosts, nhosts, op->host);
      diag_error(d, op->line, 0, "operator '%s' is placed on unknown host '%s'" DIAG_HINT_FMT, op->name, op->host,
                 DIAG_HINT(hint));
    }
  }
  namemap_release(&names);
  return d->nerrors - before;
}

/* ---- files ---- */

/* True when the last component of `path` is empty, "." or "..": it can only name a directory. */
static bool names_directory(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  return !*base || !strcmp(base, ".") || !strcmp(base, "..");
}

/* `path` made absolute against `cwd` (when it is relative and cwd is known) and normalized
 * lexically: empty and "." components dropped, ".." removing the component before it (at the root
 * it stays there). The file need not exist, and symbolic links are not followed. */
static char *normalize_path(Arena *a, const char *path, const char *cwd) {
  size_t cap = strlen(path) + (cwd ? strlen(cwd) : 0) + 3;
  char *full = arena_alloc(a, cap);
  if (path[0] != '/' && cwd)
    snprintf(full, cap, "%s/%s", cwd, path);
  else
    snprintf(full, cap, "%s", path);
  bool absolute = full[0] == '/';
  char *out = arena_alloc(a, cap);
  size_t n = 0;   /* length of out */
  size_t ups = 0; /* leading ".." components kept in a relative path */
  for (const char *p = full; *p;) {
    while (*p == '/') p++;
    const char *end = p;
    while (*end && *end != '/') end++;
    size_t len = (size_t)(end - p);
    if (len == 0 || (len == 1 && p[0] == '.')) {
      /* nothing */
    } else if (len == 2 && p[0] == '.' && p[1] == '.') {
      if (n > ups * 3) { /* drop the last component */
        while (n > 0 && out[n - 1] != '/') n--;
        if (n > 0) n--;
      } else if (!absolute) {
        n += (size_t)snprintf(out + n, cap - n, "%s..", n ? "/" : "");
        ups++;
      }
    } else {
      n += (size_t)snprintf(out + n, cap - n, "%s%.*s", n || absolute ? "/" : "", (int)len, p);
    }
    p = end;
  }
  if (n == 0) n += (size_t)snprintf(out, cap, absolute ? "/" : ".");
  out[n] = 0;
  return out;
}

/* Two FileSources reading `-` would share standard input's lines between them: refused. Two
 * FileSinks writing one file would each rename their own temporary file over it, and the
 * last one would win silently. Paths are compared after normalize_path against the working
 * directory (where sf-exec resolves them too). `-` (standard output) and devices under /dev are
 * written in place, not replaced, so sharing them is allowed. */
static void check_files(Graph *g, Diag *d) {
  char cwdbuf[4096];
  const char *cwd = getcwd(cwdbuf, sizeof cwdbuf);
  NameMap writers = {0}; /* normalized path -> the first FileSink writing it */
  Op *stdin_reader = NULL; /* the first FileSource reading `-` */
  for (int i = 0; i < g->nops; i++) {
    Op *op = g->ops[i];
    const Param *in = op->kind == KIND_FILESOURCE ? op_find_param(op, "file") : NULL;
    if (in && !strcmp(in->text, "-")) {
      /* two readers of one standard input would each get some of its lines */
      if (stdin_reader)
        diag_error(d, in->line, 0, "operator '%s' reads standard input, as operator '%s' (line %d) does",
                   op->name, stdin_reader->name, op_find_param(stdin_reader, "file")->line);
      else
        stdin_reader = op;
    }
    const Param *p = op->kind == KIND_FILESINK ? op_find_param(op, "file") : NULL;
    if (!p || !*p->text || !strcmp(p->text, "-") || names_directory(p->text)) continue;
    const char *norm = normalize_path(g->arena, p->text, cwd);
    if (!strncmp(norm, "/dev/", 5)) continue;
    Op *first = namemap_put(&writers, norm, op);
    if (first != op)
      diag_error(d, p->line, 0, "operator '%s' writes file '%s', the same file as operator '%s' (line %d)",
                 op->name, p->text, first->name, op_find_param(first, "file")->line);
  }
  namemap_release(&writers);
}

/* ---- ports and parameters ---- */

static bool parse_int_text(const char *text, long long min, long long *out) {
  int64_t v;
  if (!text || number_read(text, strlen(text), min, INT64_MAX, &v) != NUM_OK) return false;
  *out = v;
  return true;
}

/* Where the text of an element at `line` is, from the origin parse found (NULL or without the raw
 * text: unknown, then diagnostics carry the line only). */
static TextOrigin text_at(int line, const TextOrigin *origin) {
  return origin && origin->raw ? *origin : (TextOrigin){ .line = line };
}

/* Checks the integer of parameter p at offset `at` of its text (number_read, from min to
 * INT64_MAX), else reports "must be WANT" (or WANT "of at most 9223372036854775807" when it is too
 * large) at the number's column. */
static void check_number(Diag *d, const Op *op, const Param *p, size_t at, NumRead r, const char *want,
                         const char *above) {
  if (r == NUM_OK) return;
  TextOrigin where = text_at(p->line, &p->origin);
  if (r == NUM_ABOVE)
    diag_error_in(d, &where, (int)at + 1, "parameter '%s' of operator '%s' must be %s, got '%s'", p->name, op->name,
                  above, p->text);
  else
    diag_error_in(d, &where, (int)at + 1, "parameter '%s' of operator '%s' must be %s, got '%s'", p->name, op->name,
                  want, p->text);
}

/* A parameter that is a non-negative integer. */
static void check_count(Diag *d, const Op *op, const Param *p) {
  int64_t v;
  check_number(d, op, p, 0, number_read(p->text, strlen(p->text), 0, INT64_MAX, &v), "a non-negative integer",
               "a non-negative integer of at most 9223372036854775807");
}

/* Checks that every name of `keys` is an attribute of `schema`. */
static void check_keys(Diag *d, const Op *op, int line, const char *what, const char **keys, int nkeys,
                       const Schema *schema) {
  if (!schema) return;
  for (int k = 0; k < nkeys; k++)
    if (schema_find_attr(schema, keys[k]) < 0) {
      const char *hint = schema_suggest_attr(schema, keys[k]);
      diag_error(d, line, 0, "%s of operator '%s' names '%s', which input schema '%s' does not have" DIAG_HINT_FMT,
                 what, op->name, keys[k], schema->name, DIAG_HINT(hint));
    }
}

/* A FileSink's `roll`: "tuples N" or "bytes N" with N a decimal integer >= 1, or "seconds T" with
 * T a number > 0 (at most 1e9), one space between (rt/ops/filesink.c reads the same). */
static bool roll_ok(const char *text) {
  long long n;
  double t;
  char end;
  if (sscanf(text, "seconds %lf%c", &t, &end) == 1) return t > 0 && t <= 1e9 && strncmp(text, "seconds ", 8) == 0;
  const char *num = !strncmp(text, "tuples ", 7) ? text + 7 : !strncmp(text, "bytes ", 6) ? text + 6 : NULL;
  return num && *num >= '0' && *num <= '9' && parse_int_text(num, 1, &n);
}

/* A socket address: host:port, the host a name or an address (an IPv6 one in brackets), the port
 * a decimal number from 1 to 65535. */
static bool address_ok(const char *text) {
  const char *colon = strrchr(text, ':');
  long long port;
  if (!colon || colon == text || !(colon[1] >= '0' && colon[1] <= '9') || !parse_int_text(colon + 1, 1, &port) ||
      port > 65535)
    return false;
  if (text[0] == '[') return colon[-1] == ']' && colon - text > 2;
  for (const char *p = text; p < colon; p++)
    if (*p == ':' || *p == ' ' || *p == '[' || *p == ']' || *p == '/') return false;
  return true;
}

/* An Aggregate's `window` (window_parse): its syntax, then what the numbers must satisfy. */
static void check_window(Diag *d, const Op *op, const Param *p) {
  WindowSpec w;
  size_t at;
  NumRead r = window_parse(p->text, &w, &at);
  check_number(d, op, p, at, r,
               "'tumbling N', 'sliding N', 'tumbling time SIZE', 'hopping time SIZE SLIDE', 'session time GAP' "
               "or 'running', each number >= 1",
               "'tumbling N', 'sliding N', 'tumbling time SIZE', 'hopping time SIZE SLIDE', 'session time GAP' "
               "or 'running', each number from 1 to 9223372036854775807");
  if (r == NUM_OK && w.kind == WIN_HOPPING_TIME && w.size % w.slide != 0) {
    TextOrigin where = text_at(p->line, &p->origin);
    diag_error_in(d, &where, (int)at + 1,
                  "parameter 'window' of operator '%s': the slide %lld does not divide the size %lld (every "
                  "tuple must be in the same number of windows), got '%s'",
                  op->name, (long long)w.slide, (long long)w.size, p->text);
  }
}

/* A source's `time`: an int attribute of its output schema. */
static void check_time_param(Diag *d, const Op *op, const Param *p) {
  const Schema *out = op_output_schema(op);
  if (!out) return;
  int k = schema_find_attr(out, p->text);
  if (k < 0) {
    const char *hint = schema_suggest_attr(out, p->text);
    diag_error(d, p->line, 0, "parameter 'time' of operator '%s' names '%s', which output schema '%s' does not "
               "have" DIAG_HINT_FMT, op->name, p->text, out->name, DIAG_HINT(hint));
  } else if (out->attrs[k].type != TYPE_INT) {
    diag_error(d, p->line, 0, "parameter 'time' of operator '%s' must name an int attribute, but '%s' is %s in "
               "output schema '%s'", op->name, p->text, type_name(out->attrs[k].type), out->name);
  }
}

/* A KafkaSource's `partitions` (with pairs false: numbers) or the list of `start` = `offsets ...`
 * (pairs: P:O), at least one, separated by commas or blanks. */
static bool kafka_list_ok(const char *text, bool pairs) {
  int items = 0;
  for (const char *q = text; *q;) {
    q += strspn(q, ", \t\n");
    size_t len = strcspn(q, ", \t\n");
    if (!len) break;
    const char *colon = pairs ? memchr(q, ':', len) : NULL;
    size_t first = colon ? (size_t)(colon - q) : len;
    int64_t v;
    if ((pairs && !colon) || number_read(q, first, 0, INT32_MAX, &v) != NUM_OK ||
        (colon && number_read(colon + 1, len - first - 1, 0, INT64_MAX, &v) != NUM_OK))
      return false;
    items++;
    q += len;
  }
  return items > 0;
}

static bool kafka_offsets_ok(const char *text) {
  return !strncmp(text, "offsets", 7) && (text[7] == ' ' || text[7] == '\t') && kafka_list_ok(text + 8, true);
}

/* "parameter 'P' of operator 'O' must be WANT, got 'TEXT'" */
static void bad_value(Diag *d, const Op *op, const Param *p, const char *want) {
  diag_error(d, p->line, 0, "parameter '%s' of operator '%s' must be %s, got '%s'", p->name, op->name, want,
             p->text);
}

/* A Lookup's `schema`, `on` and `missing` (docs/language.md, "Lookup"): the schema declared, each
 * pair of `on` a column of it and an input attribute of the same type. */
static void check_lookup(Graph *g, Op *op, Diag *d) {
  const Param *sp = op_find_param(op, "schema"), *on = op_find_param(op, "on"), *mp = op_find_param(op, "missing");
  const Param *fp = op_find_param(op, "file");
  if (fp && !strcmp(fp->text, "-")) /* every replica reads the table: it cannot be a stream */
    diag_error(d, fp->line, 0, "parameter 'file' of operator '%s' names standard input ('-'), which a Lookup "
               "cannot read: its table is a file every replica reads", op->name);
  if (mp && strcmp(mp->text, "drop") && strcmp(mp->text, "keep")) bad_value(d, op, mp, "'drop' or 'keep'");
  const Schema *table = sp ? graph_find_schema(g, sp->text) : NULL;
  if (sp && !table) {
    const char *hint = graph_suggest_schema(g, sp->text);
    diag_error(d, sp->line, 0, "parameter 'schema' of operator '%s' names no schema '%s'" DIAG_HINT_FMT, op->name,
               sp->text, DIAG_HINT(hint));
  }
  if (!on) return;
  LookupOn *pairs;
  size_t at;
  int n = lookup_on_parse(g->arena, on->text, &pairs, &at);
  if (n < 0) {
    if (at == 0)
      diag_error(d, on->line, 0, "parameter 'on' of operator '%s' must be 'table.C = ATTR', several joined by "
                 "'and', got '%s'", op->name, on->text);
    else
      diag_error(d, on->line, 0, "parameter 'on' of operator '%s' must be 'table.C = ATTR', several joined by "
                 "'and', got '%s' (wrong from '%.20s')", op->name, on->text, on->text + at);
    return;
  }
  Schema *in = op_input_schema(op);
  for (int k = 0; k < n; k++) {
    int c = table ? schema_find_attr(table, pairs[k].column) : -1;
    int a = in ? schema_find_attr(in, pairs[k].attr) : -1;
    if (table && c < 0) {
      const char *hint = schema_suggest_attr(table, pairs[k].column);
      diag_error(d, on->line, 0, "parameter 'on' of operator '%s': schema '%s' has no attribute '%s'" DIAG_HINT_FMT,
                 op->name, table->name, pairs[k].column, DIAG_HINT(hint));
    }
    if (in && a < 0) {
      const char *hint = schema_suggest_attr(in, pairs[k].attr);
      diag_error(d, on->line, 0, "parameter 'on' of operator '%s': input schema '%s' has no attribute '%s'"
                 DIAG_HINT_FMT, op->name, in->name, pairs[k].attr, DIAG_HINT(hint));
    }
    if (c >= 0 && a >= 0 && table->attrs[c].type != in->attrs[a].type)
      diag_error(d, on->line, 0, "parameter 'on' of operator '%s': 'table.%s' is %s but '%s' is %s", op->name,
                 pairs[k].column, type_name(table->attrs[c].type), pairs[k].attr, type_name(in->attrs[a].type));
  }
}

/* Whether an unknown parameter of op was taken for `name` ("did you mean 'name'?"), so that the
 * parameter's absence is not reported again. */
static bool suggested(const Op *op, const char *const *hints, const char *name) {
  for (int i = 0; i < op->nparams; i++)
    if (hints[i] && !strcmp(hints[i], name)) return true;
  return false;
}

static void check_params(Graph *g, Op *op, Diag *d) {
  const KindInfo *spec = kind_info(op->kind);
  const char *known[2 * KIND_MAX_PARAMS]; /* the kind's parameters, required then optional */
  int nknown = 0;
  for (int i = 0; i < KIND_MAX_PARAMS && spec->required[i]; i++) known[nknown++] = spec->required[i];
  for (int i = 0; i < KIND_MAX_PARAMS && spec->optional[i]; i++) known[nknown++] = spec->optional[i];
  const char **hints = arena_alloc(g->arena, sizeof *hints * (size_t)(op->nparams + 1)); /* per parameter */
  for (int i = 0; i < op->nparams; i++) {
    Param *p = &op->params[i];
    hints[i] = NULL;
    for (int j = 0; j < i; j++)
      if (!strcmp(op->params[j].name, p->name)) {
        diag_error(d, p->line, 0, "parameter '%s' of operator '%s' is given twice", p->name, op->name);
        break;
      }
    if (!spec->any_params && !listed(spec->required, p->name) && !listed(spec->optional, p->name)) {
      hints[i] = diag_suggest(p->name, known, nknown);
      diag_error(d, p->line, 0, "unknown parameter '%s' for %s operator '%s'" DIAG_HINT_FMT, p->name,
                 kind_name(op->kind), op->name, DIAG_HINT(hints[i]));
    }
  }
  /* a required parameter missing because it is misspelt: the unknown parameter's error says so */
  for (int i = 0; i < KIND_MAX_PARAMS && spec->required[i]; i++)
    if (!op_find_param(op, spec->required[i]) && !suggested(op, hints, spec->required[i]))
      diag_error(d, op->line, 0, "%s operator '%s' needs parameter '%s'", kind_name(op->kind), op->name,
                 spec->required[i]);

  /* values */
  Schema *in = op_input_schema(op);
  for (int i = 0; i < op->nparams; i++) {
    Param *p = &op->params[i];
    const char *n = p->name;
    int64_t n64; /* a number parameter's value (number_read) */
    if (op->kind == KIND_BEACON && !strcmp(n, "count")) {
      check_count(d, op, p);
    } else if (!strcmp(n, "rate")) {
      char *end;
      double r = strtod(p->text, &end);
      if (*end || !(r > 0) || r > 1e12) bad_value(d, op, p, "a positive number of tuples per second");
    } else if (!strcmp(n, "format") && (op->kind == KIND_KAFKASOURCE || op->kind == KIND_KAFKASINK)) {
      if (strcmp(p->text, "csv") && strcmp(p->text, "json")) bad_value(d, op, p, "'csv' or 'json'");
    } else if (!strcmp(n, "format") && !spec->any_params) {
      if (strcmp(p->text, "csv")) bad_value(d, op, p, "'csv'");
    } else if (!strcmp(n, "file") && !spec->any_params) {
      if (!*p->text)
        diag_error(d, p->line, 0, "parameter 'file' of operator '%s' is empty", op->name);
      else if (names_directory(p->text))
        diag_error(d, p->line, 0, "parameter 'file' of operator '%s' names a directory, not a file: '%s'",
                   op->name, p->text);
    } else if (op->kind == KIND_FILESOURCE && !strcmp(n, "follow")) {
      if (strcmp(p->text, "yes") && strcmp(p->text, "no")) bad_value(d, op, p, "'yes' or 'no'");
    } else if (op->kind == KIND_FILESOURCE && !strcmp(n, "columns")) {
      if (strcmp(p->text, "exact") && strcmp(p->text, "subset")) bad_value(d, op, p, "'exact' or 'subset'");
    } else if (op->kind == KIND_SOCKETSOURCE && !strcmp(n, "listen")) { /* a port alone: loopback */
      bool port_alone = number_read(p->text, strlen(p->text), 1, 65535, &n64) == NUM_OK;
      if (!port_alone && !address_ok(p->text))
        bad_value(d, op, p, "'host:port' or a port alone (on loopback), with a port from 1 to 65535");
    } else if ((op->kind == KIND_SOCKETSOURCE || op->kind == KIND_SOCKETSINK) &&
               (!strcmp(n, "listen") || !strcmp(n, "connect"))) {
      if (!address_ok(p->text)) bad_value(d, op, p, "'host:port' with a port from 1 to 65535");
    } else if ((op->kind == KIND_SOCKETSOURCE || op->kind == KIND_SOCKETSINK) && !strcmp(n, "header")) {
      if (strcmp(p->text, "yes") && strcmp(p->text, "no")) bad_value(d, op, p, "'yes' or 'no'");
    } else if (op->kind == KIND_KAFKASOURCE && !strcmp(n, "end")) {
      if (strcmp(p->text, "high-watermark") && strcmp(p->text, "never")) bad_value(d, op, p, "'high-watermark' or 'never'");
    } else if (op->kind == KIND_KAFKASINK && !strcmp(n, "delivery")) {
      if (strcmp(p->text, "exactly-once") && strcmp(p->text, "at-least-once"))
        bad_value(d, op, p, "'exactly-once' or 'at-least-once'");
    } else if (op->kind == KIND_KAFKASINK && !strcmp(n, "transactional_id")) {
      if (!*p->text) bad_value(d, op, p, "a transactional id, not empty");
    } else if (op->kind == KIND_KAFKASOURCE && !strcmp(n, "count")) {
      check_count(d, op, p);
    } else if (op->kind == KIND_KAFKASOURCE && !strcmp(n, "start")) {
      if (strcmp(p->text, "earliest") && strcmp(p->text, "latest") && !kafka_offsets_ok(p->text))
        bad_value(d, op, p, "'earliest', 'latest' or 'offsets P:O,...' (P a partition, O an offset)");
    } else if (op->kind == KIND_KAFKASOURCE && !strcmp(n, "partitions")) {
      if (!kafka_list_ok(p->text, false)) bad_value(d, op, p, "a list of partition numbers (commas or blanks between)");
    } else if ((op->kind == KIND_FILESOURCE || op->kind == KIND_SOCKETSOURCE || op->kind == KIND_KAFKASOURCE) &&
               !strcmp(n, "onerror")) {
      if (strcmp(p->text, "stop") && strcmp(p->text, "skip")) bad_value(d, op, p, "'stop' or 'skip'");
    } else if ((op->kind == KIND_FILESOURCE || op->kind == KIND_SOCKETSOURCE) && !strcmp(n, "maxrow")) {
      if (number_read(p->text, strlen(p->text), 1, 1073741824, &n64) != NUM_OK)
        bad_value(d, op, p, "an integer from 1 to 1073741824 (bytes)");
    } else if ((op->kind == KIND_FILESOURCE || op->kind == KIND_SOCKETSOURCE) && !strcmp(n, "maxfields")) {
      if (number_read(p->text, strlen(p->text), 1, 1000000, &n64) != NUM_OK)
        bad_value(d, op, p, "an integer from 1 to 1000000");
    } else if (op->kind == KIND_FILESINK && !strcmp(n, "roll")) {
      const char *file = op_param(op, "file");
      if (!roll_ok(p->text))
        bad_value(d, op, p, "'tuples N', 'bytes N' (N >= 1) or 'seconds T' (T > 0)");
      else if (file && !strcmp(file, "-"))
        diag_error(d, p->line, 0, "parameter 'roll' of operator '%s' needs a file to write parts beside, not "
                   "standard output ('-')", op->name);
    } else if (op->ninputs == 0 && !spec->any_params && !strcmp(n, "time")) {
      check_time_param(d, op, p);
    } else if (op->ninputs == 0 && !spec->any_params && !strcmp(n, "tick")) {
      check_number(d, op, p, 0, number_read(p->text, strlen(p->text), 1, INT64_MAX, &n64), "a positive integer",
                   "a positive integer of at most 9223372036854775807");
    } else if (!strcmp(n, "iterations")) {
      check_count(d, op, p);
    } else if (op->kind == KIND_AGGREGATE && !strcmp(n, "window")) {
      check_window(d, op, p);
    } else if (op->kind == KIND_AGGREGATE && !strcmp(n, "lateness")) {
      check_count(d, op, p);
      WindowSpec w;
      size_t at;
      const Param *win = op_find_param(op, "window");
      if (win && window_parse(win->text, &w, &at) == NUM_OK && !window_is_time(w.kind))
        diag_error(d, p->line, 0,
                   "parameter 'lateness' of operator '%s' needs a time window (tumbling time, hopping time, "
                   "session time): it is how long a window waits after its end, and '%s' has no end in time",
                   op->name, win->text);
    } else if (!strcmp(n, "partitionBy") && !spec->any_params) {
      int nk;
      const char **keys = names_split(g->arena, p->text, &nk);
      if (nk == 0) diag_error(d, p->line, 0, "parameter 'partitionBy' of operator '%s' is empty", op->name);
      check_keys(d, op, p->line, "parameter 'partitionBy'", keys, nk, in);
    } else if (op->kind == KIND_SPLIT && !strcmp(n, "strategy")) {
      if (strcmp(p->text, "roundrobin") && strcmp(p->text, "hash"))
        bad_value(d, op, p, "'roundrobin' or 'hash'");
    } else if (op->kind == KIND_SPLIT && !strcmp(n, "keys")) {
      int nk;
      const char **keys = names_split(g->arena, p->text, &nk);
      check_keys(d, op, p->line, "parameter 'keys'", keys, nk, in);
    } else if (op->kind == KIND_SPLIT && !strcmp(n, "keys2")) {
      int nk;
      const char **keys = names_split(g->arena, p->text, &nk);
      const Stream *s2 = op->ninputs == 2 && op->inputs[1].nstreams ? op->inputs[1].streams[0] : NULL;
      if (op->ninputs != 2)
        diag_error(d, p->line, 0, "parameter 'keys2' of Split operator '%s' is for a second input, and it has %d",
                   op->name, op->ninputs);
      else
        check_keys(d, op, p->line, "parameter 'keys2'", keys, nk, s2 ? s2->schema : NULL);
    } else if (op->kind == KIND_SPLIT && !strcmp(n, "sequence")) {
      if (strcmp(p->text, "assign") && strcmp(p->text, "keep")) bad_value(d, op, p, "'assign' or 'keep'");
    } else if (op->kind == KIND_SPLIT && !strcmp(n, "pulse")) {
      check_count(d, op, p);
    } else if (op->kind == KIND_MERGE && !strcmp(n, "order")) {
      if (strcmp(p->text, "roundrobin") && strcmp(p->text, "seq") && strcmp(p->text, "seqpulse"))
        bad_value(d, op, p, "'roundrobin', 'seq' or 'seqpulse'");
    }
  }
  if (op->kind == KIND_LOOKUP) check_lookup(g, op, d);
  if (op->kind == KIND_SOCKETSOURCE) {
    const Param *l = op_find_param(op, "listen"), *c = op_find_param(op, "connect");
    if (!l && !c && !suggested(op, hints, "listen") && !suggested(op, hints, "connect"))
      diag_error(d, op->line, 0, "SocketSource operator '%s' needs parameter 'listen' or 'connect'", op->name);
    else if (l && c)
      diag_error(d, c->line, 0, "SocketSource operator '%s' takes 'listen' or 'connect', not both", op->name);
  }
  if (op->kind == KIND_JOIN) {
    JoinSpec j;
    join_spec(op, g->arena, &j, d);
  }
  if (op->kind == KIND_SPLIT && op->ninputs == 2) {
    const char *strategy = op_param(op, "strategy");
    if (op->noutputs % 2)
      diag_error(d, op->line, 0, "Split operator '%s' has two inputs and %d outputs: it needs as many outputs for "
                 "each input", op->name, op->noutputs);
    if (!strategy || strcmp(strategy, "hash") || !op_param(op, "keys2"))
      diag_error(d, op->line, 0, "Split operator '%s' with two inputs needs strategy 'hash' and parameters 'keys' "
                 "and 'keys2'", op->name);
  }
  if (op->kind == KIND_SPLIT) {
    const char *strategy = op_param(op, "strategy");
    if (strategy && !strcmp(strategy, "hash") && !op_param(op, "keys") && !suggested(op, hints, "keys"))
      diag_error(d, op->line, 0, "Split operator '%s' with strategy 'hash' needs parameter 'keys'", op->name);
  }
}

static void check_ports(Graph *g, Op *op, Diag *d) {
  if (op->kind == KIND_UNKNOWN) {
    const char *text = op->kind_text ? op->kind_text : "", *hint = kind_suggest(text);
    diag_error(d, op->line, 0, "unknown operator kind '%s'" DIAG_HINT_FMT, text, DIAG_HINT(hint));
    return;
  }
  const KindInfo *spec = kind_info(op->kind);
  /* sf-exec would refuse a Custom operator with more ports when opening it (rt/ops/custom.c) */
  const char *why = op->kind == KIND_CUSTOM ? " (op.h's operator interface has at most two inputs and one output)" : "";
  if (op->ninputs < spec->min_in || (spec->max_in != MANY && op->ninputs > spec->max_in))
    diag_error(d, op->line, 0, "%s operator '%s' takes %s, got %d%s", kind_name(op->kind), op->name,
               ports_text(spec->min_in, spec->max_in, "input"), op->ninputs, why);
  if (op->noutputs < spec->min_out || (spec->max_out != MANY && op->noutputs > spec->max_out))
    diag_error(d, op->line, 0, "%s operator '%s' takes %s, got %d%s", kind_name(op->kind), op->name,
               ports_text(spec->min_out, spec->max_out, "output"), op->noutputs, why);
  if (op->nsets && !spec->sets)
    diag_error(d, op->sets[0].line, 0, "%s operator '%s' takes no <set>", kind_name(op->kind), op->name);
  if (op->nstates && !spec->states)
    diag_error(d, op->states[0]->line, 0, "%s operator '%s' takes no <state>", kind_name(op->kind), op->name);
  if (op->nlets && !spec->lets)
    diag_error(d, op->lets[0].line, 0, "%s operator '%s' takes no <let>", kind_name(op->kind), op->name);
  if (op->kind != KIND_CUSTOM && op->model.declared)
    diag_error(d, op->model.line, 0, "%s operator '%s' takes no <model> (only Custom operators do)",
               kind_name(op->kind), op->name);
  if (op->kind != KIND_CUSTOM && op->lib_path)
    diag_error(d, op->lib_line, 0, "%s operator '%s' takes no <library> (only Custom operators do)",
               kind_name(op->kind), op->name);
  if (op->kind == KIND_CUSTOM && !op->lib_path)
    diag_error(d, op->line, 0, "Custom operator '%s' needs a <library path=... symbol=...>", op->name);

  /* every stream of one input port must have one schema (fan-in merges like streams) */
  for (int p = 0; p < op->ninputs; p++) {
    Input *in = &op->inputs[p];
    for (int k = 1; k < in->nstreams; k++) {
      Stream *a = in->streams[0], *b = in->streams[k];
      if (a && b && a->schema != b->schema)
        diag_error(d, in->line, 0,
                   "streams '%s' (schema '%s') and '%s' (schema '%s') share an input of operator '%s' "
                   "but have different schemas",
                   a->name, a->schema->name, b->name, b->schema->name, op->name);
    }
  }
  if (op->kind == KIND_SPLIT && op->ninputs == 2) {
    /* the sides of a Join: outputs 0..W-1 carry the first input's schema, W..2W-1 the second's */
    int w = op->noutputs / 2;
    for (int p = 0; p < op->noutputs; p++) {
      const Stream *in = op->inputs[p < w ? 0 : 1].nstreams ? op->inputs[p < w ? 0 : 1].streams[0] : NULL;
      Schema *out = op->outputs[p].resolved ? op->outputs[p].resolved->schema : NULL;
      if (in && out && in->schema != out)
        diag_error(d, op->outputs[p].line, 0, "output %d of Split operator '%s' must have the schema '%s' of its "
                   "input %d, not '%s'", p, op->name, in->schema->name, p < w ? 1 : 2, out->name);
    }
  } else if (spec->same_schema && op->noutputs >= 1 && op->ninputs >= 1) {
    Schema *in = op_input_schema(op);
    for (int p = 0; p < op->noutputs; p++) {
      Schema *out = op->outputs[p].resolved ? op->outputs[p].resolved->schema : NULL;
      if (in && out && in != out)
        diag_error(d, op->outputs[p].line, 0, "%s operator '%s' must output its input schema '%s', not '%s'",
                   kind_name(op->kind), op->name, in->name, out->name);
    }
    for (int p = 1; p < op->ninputs; p++) {
      Stream *s = op->inputs[p].nstreams ? op->inputs[p].streams[0] : NULL;
      if (in && s && s->schema != in)
        diag_error(d, op->inputs[p].line, 0, "all inputs of %s operator '%s' must have schema '%s', not '%s'",
                   kind_name(op->kind), op->name, in->name, s->schema->name);
    }
  }
  if (op->kind == KIND_CUSTOM && op->model.declared) {
    Model *m = &op->model;
    if (m->state == STATE_PARTITIONED && m->nkeys == 0)
      diag_error(d, m->line, 0, "the <model> of operator '%s' says state is partitioned but names no keys",
                 op->name);
    check_keys(d, op, m->line, "the <model>", m->keys, m->nkeys, op_input_schema(op));
    Schema *in = op_input_schema(op), *out = op_output_schema(op);
    for (int k = 0; k < m->nforwards && in && out; k++) {
      int a = schema_find_attr(in, m->forwards[k]), b = schema_find_attr(out, m->forwards[k]);
      if (a < 0 || b < 0 || in->attrs[a].type != out->attrs[b].type)
        diag_error(d, m->line, 0,
                   "the <model> of operator '%s' forwards '%s', which is not an attribute of the same "
                   "type in both input schema '%s' and output schema '%s'",
                   op->name, m->forwards[k], in->name, out->name);
    }
  }
}

/* ---- acyclicity: Kahn's algorithm, ties broken by document order ---- */

/* A binary min-heap of operator indexes: the ready operator first in the document comes out first. */
typedef struct ReadyHeap {
  int *items; /* heap-ordered indexes */
  int n;      /* how many */
} ReadyHeap;

static void ready_push(ReadyHeap *h, int v) {
  int i = h->n++;
  for (; i > 0 && h->items[(i - 1) / 2] > v; i = (i - 1) / 2) h->items[i] = h->items[(i - 1) / 2];
  h->items[i] = v;
}

static int ready_pop(ReadyHeap *h) {
  int top = h->items[0], last = h->items[--h->n], i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && h->items[c + 1] < h->items[c]) c++;
    if (h->items[c] >= last) break;
    h->items[i] = h->items[c];
    i = c;
  }
  h->items[i] = last;
  return top;
}

static void check_acyclic(Graph *g, Diag *d) {
  int n = g->nops;
  int *indeg = calloc((size_t)n + 1, sizeof *indeg);
  g->order = arena_alloc(g->arena, sizeof(Op *) * (size_t)(n + 1));
  ReadyHeap ready = { .items = sf_xmalloc(sizeof(int) * (size_t)(n + 1)) };
  for (int i = 0; i < n; i++) {
    Op *op = g->ops[i];
    for (int p = 0; p < op->ninputs; p++)
      for (int k = 0; k < op->inputs[p].nstreams; k++)
        if (op->inputs[p].streams[k]) indeg[i]++;
    if (indeg[i] == 0) ready_push(&ready, i);
  }
  int done = 0;
  bool *placed = calloc((size_t)n + 1, sizeof *placed);
  while (done < n && ready.n > 0) {
    int pick = ready_pop(&ready);
    placed[pick] = true;
    Op *op = g->ops[pick];
    op->topo = done;
    g->order[done++] = op;
    for (int p = 0; p < op->noutputs; p++) {
      Stream *s = op->outputs[p].resolved;
      if (!s) continue;
      for (int c = 0; c < s->consumers.n; c++) {
        int next = ((Op *)s->consumers.items[c])->index;
        if (--indeg[next] == 0) ready_push(&ready, next);
      }
    }
  }
  free(ready.items);
  if (done < n) {
    /* Every remaining operator has a remaining producer, so walking producers from one of them
     * ends in a cycle. Each cycle is reported once, from its first operator in document order;
     * walks that run into a cycle already reported (operators downstream of it) say nothing. */
    int *seen_at = malloc(sizeof(int) * (size_t)n);
    int *cycle_of = malloc(sizeof(int) * (size_t)n); /* which walk reported the op's cycle, -1: none */
    int *path = malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) cycle_of[i] = seen_at[i] = -1;
    for (int startop = 0; startop < n; startop++) {
      if (placed[startop] || cycle_of[startop] >= 0) continue;
      int len = 0, cur = startop;
      while (seen_at[cur] < 0 && cycle_of[cur] < 0) {
        seen_at[cur] = len;
        path[len++] = cur;
        Op *op = g->ops[cur];
        int next = -1;
        for (int p = 0; p < op->ninputs && next < 0; p++)
          for (int k = 0; k < op->inputs[p].nstreams && next < 0; k++) {
            Stream *s = op->inputs[p].streams[k];
            if (s && !placed[s->producer->index]) next = s->producer->index;
          }
        sf_assert(next >= 0);
        cur = next;
      }
      /* every operator walked is done: in the cycle found, or downstream of one (a later walk
       * that reaches it stops there, so each operator is walked once) */
      bool known = cycle_of[cur] >= 0;
      int first = seen_at[cur];
      for (int i = 0; i < len; i++) {
        cycle_of[path[i]] = startop;
        seen_at[path[i]] = -1;
      }
      if (known) continue; /* downstream of a cycle already reported */
      /* path[first..len-1] runs against the data flow; print it along the flow, starting from its
       * operator that comes first in the document */
      int m = len - first, lowest = first;
      for (int i = first; i < len; i++)
        if (path[i] < path[lowest]) lowest = i;
      char msg[2048];
      size_t o = 0;
      for (int step = 0; step <= m && o < sizeof msg - 64; step++) {
        int i = first + ((lowest - first) - step + m) % m; /* backwards along the path = along the flow */
        o += (size_t)snprintf(msg + o, sizeof msg - o, step < m ? "'%s' -> " : "'%s'", g->ops[path[i]]->name);
      }
      diag_error(d, g->ops[path[lowest]]->line, 0, "the graph has a cycle: %s", msg);
    }
    free(seen_at);
    free(cycle_of);
    free(path);
    g->order = NULL;
  }
  free(indeg);
  free(placed);
}

/* ---- expressions ---- */

/* Parses and checks one expression of an element at `line`; `origin` as for text_at. */
static Expr *parse_checked(Graph *g, Diag *d, const char *text, int line, const TextOrigin *origin,
                           ExprScope *scope, Type want, const char *what, const Op *op) {
  TextOrigin at = text_at(line, origin);
  Expr *e = expr_parse(g->arena, text, d, &at);
  Type t = e ? expr_check(e, scope, d, &at) : TYPE_NONE;
  if (!e || t == TYPE_NONE) return NULL;
  if (want != TYPE_NONE && t != want) {
    diag_error(d, line, 0, "%s of operator '%s' must be %s, got %s", what, op->name, type_name(want),
               type_name(t));
    return NULL;
  }
  return e;
}

/* In an Aggregate, a name outside every aggregate function is only meaningful when it is constant
 * over a window: the partitionBy attributes. `at`: where the expression's text is. */
static void check_aggregate_names(Diag *d, const Op *op, const Expr *e, const TextOrigin *at, const Schema *in,
                                  const char **keys, int nkeys, bool inside) {
  if (!e) return;
  if (e->kind == EXPR_NAME && e->scope == NAME_ATTR && !inside) {
    bool key = false;
    for (int k = 0; k < nkeys; k++)
      if (!strcmp(keys[k], in->attrs[e->slot].name)) key = true;
    if (!key)
      diag_error_in(d, at, e->col, "attribute '%s' is used outside an aggregate function in operator '%s' "
                    "(only partitionBy attributes may be)", in->attrs[e->slot].name, op->name);
  }
  if (e->kind == EXPR_NAME && e->scope == NAME_LET && !inside)
    diag_error_in(d, at, e->col, "let '%s' is used outside an aggregate function in operator '%s' (a let is per "
                  "input tuple)", e->sval, op->name);
  bool agg = e->kind == EXPR_CALL && e->func >= FUNC_COUNT;
  check_aggregate_names(d, op, e->a, at, in, keys, nkeys, inside || agg);
  check_aggregate_names(d, op, e->b, at, in, keys, nkeys, inside || agg);
  check_aggregate_names(d, op, e->c, at, in, keys, nkeys, inside || agg);
  for (int i = 0; i < e->nargs; i++) check_aggregate_names(d, op, e->args[i], at, in, keys, nkeys, inside || agg);
}

/* The first input attribute the checked expression reads, or NULL. */
static const Expr *first_attr_read(const Expr *e) {
  if (!e) return NULL;
  if (e->kind == EXPR_NAME && e->scope == NAME_ATTR) return e;
  const Expr *sub[3] = {e->a, e->b, e->c};
  for (int i = 0; i < 3; i++) {
    const Expr *r = first_attr_read(sub[i]);
    if (r) return r;
  }
  for (int i = 0; i < e->nargs; i++) {
    const Expr *r = first_attr_read(e->args[i]);
    if (r) return r;
  }
  return NULL;
}

static void check_sets(Graph *g, Op *op, Diag *d, ExprScope *scope) {
  Schema *in = op_input_schema(op);
  Schema *out = op_output_schema(op);
  if (!out) return;
  int nkeys = 0;
  const char **keys = names_split(g->arena, op_param(op, "partitionBy"), &nkeys);
  bool *set = calloc((size_t)out->nattrs + 1, 1);
  /* attributes a misspelt <set> was taken for: that error says they are not set */
  bool *meant = arena_alloc(g->arena, (size_t)out->nattrs + 1);
  for (int i = 0; i < op->nsets; i++) {
    Set *s = &op->sets[i];
    s->slot = schema_find_attr(out, s->attr);
    if (s->slot < 0) {
      const char *hint = schema_suggest_attr(out, s->attr);
      diag_error(d, s->line, 0, "operator '%s' sets '%s', which output schema '%s' does not have" DIAG_HINT_FMT,
                 op->name, s->attr, out->name, DIAG_HINT(hint));
      if (hint) meant[schema_find_attr(out, hint)] = true;
      continue;
    }
    if (set[s->slot]) diag_error(d, s->line, 0, "operator '%s' sets '%s' twice", op->name, s->attr);
    set[s->slot] = true;
    scope->nlets = s->lets_before;
    Expr *e = parse_checked(g, d, s->text, s->line, &s->origin, scope, TYPE_NONE, "", op);
    if (!e) continue;
    if (e->type != out->attrs[s->slot].type) {
      diag_error(d, s->line, 0, "operator '%s' sets '%s' to %s %s, but '%s' is %s in schema '%s'", op->name,
                 s->attr, e->type == TYPE_INT ? "an" : "a", type_name(e->type), s->attr,
                 type_name(out->attrs[s->slot].type), out->name);
      continue;
    }
    if (op->kind == KIND_AGGREGATE && in) {
      TextOrigin at = text_at(s->line, &s->origin);
      check_aggregate_names(d, op, e, &at, in, keys, nkeys, false);
    }
    s->expr = e;
  }
  for (int a = 0; a < out->nattrs; a++) {
    if (set[a] || meant[a]) continue;
    const Attr *at = &out->attrs[a];
    int k = in ? schema_find_attr(in, at->name) : -1;
    bool forwarded = k >= 0 && in->attrs[k].type == at->type;
    if (forwarded && op->kind == KIND_AGGREGATE) {
      forwarded = false;
      for (int j = 0; j < nkeys; j++)
        if (!strcmp(keys[j], at->name)) forwarded = true;
    }
    if (!forwarded) {
      if (!in)
        diag_error(d, op->line, 0, "%s operator '%s' must set output attribute '%s'", kind_name(op->kind),
                   op->name, at->name);
      else if (op->kind == KIND_AGGREGATE)
        diag_error(d, op->line, 0, "output attribute '%s' of operator '%s' is neither set nor a partitionBy "
                   "attribute", at->name, op->name);
      else if (k >= 0)
        diag_error(d, op->line, 0,
                   "output attribute '%s' of operator '%s' is not set, and cannot be forwarded: it is %s in "
                   "output schema '%s' but %s in input schema '%s'", at->name, op->name,
                   type_name(at->type), out->name, type_name(in->attrs[k].type), in->name);
      else
        diag_error(d, op->line, 0,
                   "output attribute '%s' of operator '%s' is neither set nor forwarded from input "
                   "schema '%s'", at->name, op->name, in->name);
    }
  }
  free(set);
}

/* The first aggregate call (window_start and window_end included) in e, or NULL. */
static const Expr *first_aggregate(const Expr *e) {
  if (!e) return NULL;
  if (e->kind == EXPR_CALL && e->func >= FUNC_COUNT) return e;
  const Expr *sub[3] = {e->a, e->b, e->c};
  for (int i = 0; i < 3; i++) {
    const Expr *r = first_aggregate(sub[i]);
    if (r) return r;
  }
  for (int i = 0; i < e->nargs; i++) {
    const Expr *r = first_aggregate(e->args[i]);
    if (r) return r;
  }
  return NULL;
}

/* Checks op's <let>s in document order with `scope` (each sees the lets before it; in a Functor,
 * also the state variables, as the states written before it updated them): names not given twice,
 * nor the name of a state variable or of an attribute the operator could read (of `in`), each
 * expression of its declared type. In an Aggregate (scope->allow_aggregates) a let is per input
 * tuple: an aggregate call in it is refused (and takes no aggregate slot). Leaves scope->lets set
 * to all of them. */
static void check_lets(Graph *g, Op *op, Diag *d, ExprScope *scope, const Schema *in) {
  scope->lets = op->lets;
  scope->lets_written = op->nlets;
  for (int i = 0; i < op->nlets; i++) {
    Let *l = &op->lets[i];
    bool named = true;
    for (int j = 0; j < i && named; j++)
      if (!strcmp(op->lets[j].name, l->name)) {
        diag_error(d, l->line, 0, "let '%s' of operator '%s' is declared twice", l->name, op->name);
        named = false;
      }
    for (int j = 0; j < op->nstates && named; j++)
      if (!strcmp(op->states[j]->name, l->name)) {
        diag_error(d, l->line, 0, "let '%s' of operator '%s' has the name of a state variable", l->name, op->name);
        named = false;
      }
    if (named && in && schema_find_attr(in, l->name) >= 0)
      diag_error(d, l->line, 0, "let '%s' of operator '%s' has the name of an input attribute", l->name, op->name);
    char what[160];
    snprintf(what, sizeof what, "let '%s'", l->name);
    scope->nlets = i;
    int slots = scope->naggregates;
    l->expr = parse_checked(g, d, l->text, l->line, &l->origin, scope, l->type, what, op);
    const Expr *agg = first_aggregate(l->expr);
    scope->naggregates = slots;
    if (agg) {
      TextOrigin at = text_at(l->line, &l->origin);
      diag_error_in(d, &at, agg->col, "let '%s' of operator '%s' cannot call aggregate function '%s' (a let is "
                    "per input tuple)", l->name, op->name, agg->sval);
      l->expr = NULL;
    }
  }
  scope->nlets = op->nlets;
}

static void check_expressions(Graph *g, Op *op, Diag *d) {
  Schema *in = op_input_schema(op);
  ExprScope scope = { .input = in };
  switch (op->kind) {
  case KIND_BEACON:
    scope.allow_seq = true;
    check_sets(g, op, d, &scope);
    break;
  case KIND_FUNCTOR: {
    ExprScope init_scope = { .input = in }; /* attributes resolve only to be refused below */
    for (int i = 0; i < op->nstates; i++) {
      StateVar *v = op->states[i];
      for (int j = 0; j < i; j++)
        if (!strcmp(op->states[j]->name, v->name))
          diag_error(d, v->line, 0, "state variable '%s' of operator '%s' is declared twice", v->name,
                     op->name);
      if (in && schema_find_attr(in, v->name) >= 0)
        diag_error(d, v->line, 0, "state variable '%s' of operator '%s' has the name of an input attribute",
                   v->name, op->name);
      char what[160];
      snprintf(what, sizeof what, "init of state variable '%s'", v->name);
      const char *init = v->init_text ? v->init_text : "";
      v->init = parse_checked(g, d, init, v->line, NULL, &init_scope, v->type, what, op);
      const Expr *attr = first_attr_read(v->init);
      if (attr) {
        diag_error(d, v->line, 0,
                   "init of state variable '%s' of operator '%s' cannot read attribute '%s' (an init sees no "
                   "tuple)", v->name, op->name, attr->sval);
        v->init = NULL;
      }
    }
    scope.states = op->states;
    scope.nstates = op->nstates;
    check_lets(g, op, d, &scope, in);
    for (int i = 0; i < op->nstates; i++) {
      StateVar *v = op->states[i];
      char what[160];
      snprintf(what, sizeof what, "update of state variable '%s'", v->name);
      scope.nlets = v->lets_before;
      v->update = parse_checked(g, d, v->text, v->line, &v->origin, &scope, v->type, what, op);
    }
    scope.nlets = op->nlets;
    const Param *w = op_find_param(op, "where");
    if (w) op->where = parse_checked(g, d, w->text, w->line, &w->origin, &scope, TYPE_BOOL, "parameter 'where'", op);
    check_sets(g, op, d, &scope);
    break;
  }
  case KIND_FILTER: {
    check_lets(g, op, d, &scope, in);
    const Param *w = op_find_param(op, "where");
    if (w) op->where = parse_checked(g, d, w->text, w->line, &w->origin, &scope, TYPE_BOOL, "parameter 'where'", op);
    break;
  }
  case KIND_FLATMAP: {
    check_lets(g, op, d, &scope, in); /* per input tuple: before `i` is known */
    const Param *c = op_find_param(op, "count");
    if (c) op->count_expr = parse_checked(g, d, c->text, c->line, &c->origin, &scope, TYPE_INT, "parameter 'count'", op);
    scope.allow_index = true;
    check_sets(g, op, d, &scope);
    break;
  }
  case KIND_AGGREGATE: {
    WindowSpec w;
    size_t at;
    scope.allow_aggregates = true;
    scope.allow_window_bounds = window_parse(op_param(op, "window"), &w, &at) == NUM_OK && window_is_time(w.kind);
    check_lets(g, op, d, &scope, in); /* per input tuple: an aggregate call is refused */
    check_sets(g, op, d, &scope);
    break;
  }
  case KIND_JOIN: { /* lets per match, over both sides */
    const Schema *left = join_side_schema(op, 0), *right = join_side_schema(op, 1);
    if (!left || !right) break;
    ExprScope sides = { .nsides = 2, .side_name = {"left", "right"}, .side = {left, right} };
    check_lets(g, op, d, &sides, NULL);
    check_join(g, op, d, &sides);
    break;
  }
  case KIND_KAFKASINK: { /* `key`: an expression of any type over the input, its str() the key */
    const Param *k = op_find_param(op, "key");
    if (k) op->key_expr = parse_checked(g, d, k->text, k->line, &k->origin, &scope, TYPE_NONE, "parameter 'key'", op);
    break;
  }
  case KIND_LOOKUP: {
    scope.nsides = 1;
    scope.side_name[0] = "table";
    scope.side[0] = graph_find_schema(g, op_param(op, "schema")); /* check_lookup found it */
    check_lets(g, op, d, &scope, in);
    check_sets(g, op, d, &scope);
    break;
  }
  default:
    break;
  }
}

/* Runs the checks. What they report waits in d until the driver's diag_flush (DIAG_BY_PLACE). */
int graph_check(Graph *g, Diag *d) {
  int before = d->nerrors;
  check_names(g, d);
  check_colocate(g, d);
  check_files(g, d);
  graph_link(g, d);
  for (int i = 0; i < g->nops; i++) check_ports(g, g->ops[i], d);
  for (int i = 0; i < g->nops; i++)
    if (g->ops[i]->kind != KIND_UNKNOWN) check_params(g, g->ops[i], d);
  if (d->nerrors == before) { /* cycles and expressions need every reference resolved */
    check_acyclic(g, d);
    for (int i = 0; i < g->nops; i++) check_expressions(g, g->ops[i], d);
    if (d->nerrors == before && g->order) graph_time(g, d); /* event time follows the checked sets */
  }
  return d->nerrors - before;
}
