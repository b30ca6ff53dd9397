/* randgraph.c: sf-randgraph [--no-fanin] [--pin-hosts N] SEED [OUTDIR] prints a random, valid
 * StreamFission graph (docs/language.md) to standard output, the same graph for the same seed and
 * options on every machine.
 *
 * The graph is a Beacon of 500..6000 tuples (sometimes 20 000..60 000) over the core schema
 *     k1:int (few distinct values), k2:string (few distinct), v:int, d:double, b:bool
 * (plus, sometimes, extra attributes x1, x2, ... of any type that later operators carry along),
 * then a chain of 2..7 operators drawn from Functor (stateless or with state, partitioned or not,
 * with or without `where`), Filter, Aggregate (tumbling/sliding, keyed or not), Dedup, Work and
 * FlatMap, ending in a FileSink writing OUTDIR/main.csv (OUTDIR defaults to "out"). Sometimes a
 * stream fans out to a second branch of 1..3 operators with its own sink (OUTDIR/bN.csv).
 *
 * Fan-ins (unless --no-fanin): a chain may fan in right after its start (before any region),
 * between two of its operators (behind one region, before the next) or into its sink. The fan-in
 * merges the chain's stream with one or two others: another Beacon (src2, src3, ...; sometimes of
 * only 1..400 tuples, so the inputs end at different times; sometimes paced), maybe behind
 * operators (regions) of its own, or a side chain of the chain's own stream (a diamond). A Functor
 * adapts a stream whose schema differs. Sometimes two keyed operators on incompatible keys follow
 * the fan-in (a shuffle). The decisions about fan-ins are drawn from a third stream: with
 * --no-fanin the graph of a seed is the one it was before fan-ins were generated.
 *
 * --pin-hosts N pins some operators that stay serial (sources, sinks, fan-ins, parallel="no") to
 * hosts h0..hN-1, drawn from a fourth stream (the graph is otherwise the same); sf-xform then needs
 * --hosts naming them (tests/e2e_distributed.sh). sf-exec without --host ignores the pins.
 *
 * Every schema holds the five core attributes (in a possibly shuffled order), so any expression
 * over them is valid anywhere. Expressions are built so that they cannot fail at run time: divisors
 * are of the form 1 + abs(x) % n, double-to-int conversions are clamped, rand() and hash() are
 * always reduced with %, doubles are only scaled by literals. It is the test's job to run the
 * graph sequentially and in parallel and compare; this program only has to produce variety.
 *
 * An operator's children are written in a shuffled order (docs/language.md, "operator", lets them
 * come in any order), sets and states interleaved too, except that the sets keep their order among
 * themselves and the states theirs (a state's update may read the states before it).
 * The order is drawn from a second splitmix64 stream, so the graph itself, its operators and
 * expressions, is the same as before children were shuffled.
 *
 * The PRNG is splitmix64, seeded with SEED: the output depends on nothing else. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers ---- */

static uint64_t rng_state;   /* what the graph is drawn from */
static uint64_t order_state; /* the order of each operator's children, drawn apart */
static uint64_t shape_state; /* where fan-ins go and what feeds them, drawn apart (--no-fanin: never) */
static uint64_t pin_state;   /* which operators are pinned to a host (--pin-hosts only) */

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static uint64_t next_u64(void) { return splitmix64(&rng_state); }

/* Uniform in [0, n). */
static int rnd(int n) { return n <= 1 ? 0 : (int)(next_u64() % (uint64_t)n); }
/* Uniform in [lo, hi]. */
static int range(int lo, int hi) { return lo + rnd(hi - lo + 1); }
/* True with probability pct %. */
static bool chance(int pct) { return rnd(100) < pct; }
/* The same from the shape stream: decisions the graphs of --no-fanin never take, so that leaving
 * them out leaves the main stream, and so the graph, as it was before fan-ins. */
static int shape_rnd(int n) { return n <= 1 ? 0 : (int)(splitmix64(&shape_state) % (uint64_t)n); }
static bool shape_chance(int pct) { return shape_rnd(100) < pct; }
#define PICK(arr) ((arr)[rnd((int)(sizeof(arr) / sizeof((arr)[0])))])

/* ---- strings ---- */

/* Every string made here lives until the program ends: kept in one list, freed at exit (so that
 * LeakSanitizer, in the sanitizer pass of tools/test.sh, sees no leak). */
static char **kept;
static size_t nkept, capkept;

static char *keep(char *s) {
  if (nkept == capkept) {
    capkept = capkept ? 2 * capkept : 256;
    char **k = realloc(kept, capkept * sizeof *kept);
    if (!k) exit(1);
    kept = k;
  }
  return kept[nkept++] = s;
}

static void free_kept(void) {
  for (size_t i = 0; i < nkept; i++) free(kept[i]);
  free(kept);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static char *fmt(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  char *s = NULL;
  if (vasprintf(&s, f, ap) < 0) {
    perror("sf-randgraph");
    exit(1);
  }
  va_end(ap);
  return keep(s);
}

/* XML-escaped copy of s, for element text and attribute values. */
static char *xml(const char *s) {
  size_t n = 0;
  for (const char *p = s; *p; p++) n += (*p == '&') ? 5 : (*p == '<' || *p == '>') ? 4 : (*p == '"') ? 6 : 1;
  char *out = malloc(n + 1), *q = out;
  if (!out) exit(1);
  keep(out);
  for (const char *p = s; *p; p++) {
    const char *r = NULL;
    switch (*p) {
    case '&': r = "&amp;"; break;
    case '<': r = "&lt;"; break;
    case '>': r = "&gt;"; break;
    case '"': r = "&quot;"; break;
    default: *q++ = *p; continue;
    }
    size_t k = strlen(r);
    memcpy(q, r, k);
    q += k;
  }
  *q = 0;
  return out;
}

/* ---- schemas ---- */

enum { MAX_ATTRS = 12, MAX_SCHEMAS = 128 };

typedef struct Schema {
  int n;
  char name[MAX_ATTRS][8];
  char type[MAX_ATTRS]; /* 'i' int, 'd' double, 's' string, 'b' bool */
} Schema;

static Schema schemas[MAX_SCHEMAS];
static int nschemas;
static int next_extra = 1;

static const char *type_word(char t) {
  switch (t) {
  case 'i': return "int";
  case 'd': return "double";
  case 's': return "string";
  default: return "bool";
  }
}

static void schema_add(Schema *s, const char *name, char type) {
  if (s->n >= MAX_ATTRS) return;
  snprintf(s->name[s->n], sizeof s->name[0], "%s", name);
  s->type[s->n] = type;
  s->n++;
}

static int schema_find(const Schema *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->name[i], name)) return i;
  return -1;
}

static void schema_remove(Schema *s, int k) {
  for (int i = k; i + 1 < s->n; i++) {
    memcpy(s->name[i], s->name[i + 1], sizeof s->name[0]);
    s->type[i] = s->type[i + 1];
  }
  s->n--;
}

static bool is_core(const char *name) {
  return !strcmp(name, "k1") || !strcmp(name, "k2") || !strcmp(name, "v") || !strcmp(name, "d") ||
         !strcmp(name, "b");
}

/* The name of the schema with exactly these attributes, declared on first use. */
static const char *schema_name(const Schema *s) {
  for (int i = 0; i < nschemas; i++)
    if (schemas[i].n == s->n && !memcmp(schemas[i].type, s->type, (size_t)s->n) &&
        !memcmp(schemas[i].name, s->name, sizeof s->name[0] * (size_t)s->n))
      return fmt("S%d", i);
  if (nschemas == MAX_SCHEMAS) {
    fprintf(stderr, "sf-randgraph: too many schemas\n");
    exit(1);
  }
  memset(&schemas[nschemas], 0, sizeof schemas[0]);
  schemas[nschemas] = *s;
  return fmt("S%d", nschemas++);
}

/* Shuffles the order of the attributes (Fisher-Yates). */
static void schema_shuffle(Schema *s) {
  for (int i = s->n - 1; i > 0; i--) {
    int j = rnd(i + 1);
    char nm[8], t = s->type[i];
    memcpy(nm, s->name[i], sizeof nm);
    memcpy(s->name[i], s->name[j], sizeof nm);
    memcpy(s->name[j], nm, sizeof nm);
    s->type[i] = s->type[j];
    s->type[j] = t;
  }
}

/* ---- expressions ---- */

/* The names an expression may use besides the core attributes: state variables of a Functor. */
typedef struct Scope {
  int n;
  const char *name[8];
  char type[8];
} Scope;

static const Scope no_scope;

static const char *scope_pick(const Scope *sc, char type) {
  int k = 0;
  for (int i = 0; i < sc->n; i++) k += sc->type[i] == type;
  if (!k) return NULL;
  int want = rnd(k);
  for (int i = 0; i < sc->n; i++)
    if (sc->type[i] == type && want-- == 0) return sc->name[i];
  return NULL;
}

static char *gen_int(int depth, const Scope *sc);
static char *gen_double(int depth, const Scope *sc);
static char *gen_string(int depth, const Scope *sc);
static char *gen_bool(int depth, const Scope *sc);

static char *gen_int(int depth, const Scope *sc) {
  const char *st = scope_pick(sc, 'i');
  if (depth <= 0 || chance(30)) {
    switch (rnd(st ? 7 : 6)) {
    case 0: case 1: return fmt("v");
    case 2: return fmt("k1");
    case 3: return fmt("%d", range(-5, 20));
    case 4: return fmt("len(k2)");
    case 5: return fmt("(b ? 1 : 0)");
    default: return fmt("%s", st);
    }
  }
  int d = depth - 1;
  switch (rnd(17)) {
  case 0: return fmt("(%s + %s)", gen_int(d, sc), gen_int(d, sc));
  case 1: return fmt("(%s - %s)", gen_int(d, sc), gen_int(d, sc));
  case 2: return fmt("%s * %d", gen_int(d, sc), PICK(((int[]){2, 3, 5, -1, -3})));
  case 3: return fmt("%s / (1 + abs(%s) %% %d)", gen_int(d, sc), gen_int(d, sc), range(2, 9));
  case 4: return fmt("%s %% (1 + abs(%s) %% %d)", gen_int(d, sc), gen_int(d, sc), range(2, 9));
  case 5: return fmt("abs(%s)", gen_int(d, sc));
  case 6: return fmt("min(%s, %s)", gen_int(d, sc), gen_int(d, sc));
  case 7: return fmt("max(%s, %s)", gen_int(d, sc), gen_int(d, sc));
  case 8: return fmt("-(%s)", gen_int(d, sc));
  case 9: return fmt("int(max(-1000000.0, min(1000000.0, %s)))", gen_double(d, sc));
  case 10: return fmt("hash(%s) %% %d", PICK(((const char *[]){"k2", "v", "d", "b", "k1"})), range(2, 100));
  case 11: return fmt("rand(%s) %% %d", gen_int(d, sc), range(2, 1000));
  case 12: return fmt("(%s ? %s : %s)", gen_bool(d, sc), gen_int(d, sc), gen_int(d, sc));
  case 13: return fmt("len(%s)", gen_string(d, sc));
  case 14: return fmt("%s %% %d", gen_int(d, sc), range(2, 50));
  case 15: return fmt("int(%s)", gen_bool(d, sc));
  default: return fmt("(%s + %d)", gen_int(d, sc), range(-100, 100));
  }
}

static char *gen_double(int depth, const Scope *sc) {
  const char *st = scope_pick(sc, 'd');
  if (depth <= 0 || chance(30)) {
    switch (rnd(st ? 6 : 5)) {
    case 0: case 1: return fmt("d");
    case 2: return fmt("%s", PICK(((const char *[]){"2.5", "0.125", "-1.5", "100.0", "1e-3", "0.1"})));
    case 3: return fmt("double(k1)");
    case 4: return fmt("double(v)");
    default: return fmt("%s", st);
    }
  }
  int d = depth - 1;
  switch (rnd(11)) {
  case 0: return fmt("(%s + %s)", gen_double(d, sc), gen_double(d, sc));
  case 1: return fmt("(%s - %s)", gen_double(d, sc), gen_double(d, sc));
  case 2: return fmt("%s * %s", gen_double(d, sc), PICK(((const char *[]){"0.5", "1.5", "-1.0", "2.0", "0.1", "3.0"})));
  case 3: return fmt("%s / (1.0 + abs(%s))", gen_double(d, sc), gen_double(d, sc));
  case 4: return fmt("abs(%s)", gen_double(d, sc));
  case 5: return fmt("min(%s, %s)", gen_double(d, sc), gen_double(d, sc));
  case 6: return fmt("max(%s, %s)", gen_double(d, sc), gen_double(d, sc));
  case 7: return fmt("double(%s)", gen_int(d, sc));
  case 8: return fmt("(%s ? %s : %s)", gen_bool(d, sc), gen_double(d, sc), gen_double(d, sc));
  case 9: return fmt("-(%s)", gen_double(d, sc));
  default: return fmt("double(%s) / %s", gen_int(d, sc), PICK(((const char *[]){"3.0", "7.0", "10.0", "0.3"})));
  }
}

static char *gen_string(int depth, const Scope *sc) {
  const char *st = scope_pick(sc, 's');
  if (depth <= 0 || chance(30)) {
    switch (rnd(st ? 4 : 3)) {
    case 0: case 1: return fmt("k2");
    case 2: return fmt("%s", PICK(((const char *[]){"\"a\"", "\"\"", "\"x,y\"", "\"q\\\"t\"", "\"line\\nbreak\"",
                                                  "\"Z\"", "\"sp ace\""})));
    default: return fmt("%s", st);
    }
  }
  int d = depth - 1;
  switch (rnd(8)) {
  case 0: return fmt("(%s + %s)", gen_string(d, sc), gen_string(d, sc));
  case 1: return fmt("substr(%s, %d, %d)", gen_string(d, sc), range(0, 3), range(0, 6));
  case 2: return fmt("str(%s)", gen_int(d, sc));
  case 3: return fmt("str(%s)", gen_double(d, sc));
  case 4: return fmt("(%s ? %s : %s)", gen_bool(d, sc), gen_string(d, sc), gen_string(d, sc));
  case 5: return fmt("min(%s, %s)", gen_string(d, sc), gen_string(d, sc));
  case 6: return fmt("max(%s, %s)", gen_string(d, sc), gen_string(d, sc));
  default: return fmt("str(%s)", gen_bool(d, sc));
  }
}

static char *gen_bool(int depth, const Scope *sc) {
  const char *st = scope_pick(sc, 'b');
  if (depth <= 0 || chance(25)) {
    switch (rnd(st ? 4 : 3)) {
    case 0: case 1: return fmt("b");
    case 2: return fmt("%s", chance(50) ? "true" : "false");
    default: return fmt("%s", st);
    }
  }
  int d = depth - 1;
  static const char *const icmp[] = {"<", "<=", ">", ">=", "==", "!="};
  switch (rnd(10)) {
  case 0: return fmt("(%s %s %s)", gen_int(d, sc), PICK(icmp), gen_int(d, sc));
  case 1: return fmt("(%s %s %s)", gen_double(d, sc), PICK(icmp), gen_double(d, sc));
  case 2: return fmt("(%s %s %s)", gen_string(d, sc), PICK(icmp), gen_string(d, sc));
  case 3: return fmt("!%s", gen_bool(d, sc));
  case 4: return fmt("(%s && %s)", gen_bool(d, sc), gen_bool(d, sc));
  case 5: return fmt("(%s || %s)", gen_bool(d, sc), gen_bool(d, sc));
  case 6: return fmt("(%s == %s)", gen_bool(d, sc), gen_bool(d, sc));
  case 7: return fmt("(%s %% 2 == 0)", gen_int(d, sc));
  case 8: return fmt("(%s %% %d %s %d)", gen_int(d, sc), range(2, 10), PICK(icmp), range(0, 5));
  default: return fmt("(%s ? %s : %s)", gen_bool(d, sc), gen_bool(d, sc), gen_bool(d, sc));
  }
}

static char *gen_pred(const Scope *sc);

static char *gen_typed(char t, int depth, const Scope *sc) {
  switch (t) {
  case 'i': return gen_int(depth, sc);
  case 'd': return gen_double(depth, sc);
  case 's': return gen_string(depth, sc);
  default: return gen_bool(depth, sc);
  }
}

/* A new value for the key k1 that keeps few distinct values (most of the time). */
static char *gen_k1(const Scope *sc) {
  switch (rnd(6)) {
  case 0: return fmt("k1 + 1");
  case 1: return fmt("(k1 * 3) %% 11");
  case 2: return fmt("abs(%s) %% %d", gen_int(2, sc), PICK(((int[]){1, 2, 3, 4, 7, 13})));
  case 3: return fmt("%s %% 5", gen_int(1, sc));
  case 4: return fmt("k1");
  default: return fmt("(b ? k1 : k1 + 100)");
  }
}

/* A new value for the key k2 that keeps few distinct values (most of the time). */
static char *gen_k2(const Scope *sc) {
  switch (rnd(6)) {
  case 0: return fmt("\"g\" + str(abs(%s) %% %d)", gen_int(2, sc), PICK(((int[]){1, 2, 3, 5, 9})));
  case 1: return fmt("substr(k2, 0, 2)");
  case 2: return fmt("(%s ? k2 : \"z\")", gen_bool(1, sc));
  case 3: return fmt("k2");
  case 4: return fmt("substr(k2 + \"_\", 0, 4)");
  default: return fmt("str(k1 %% 4) + k2");
  }
}

/* ---- graph text ---- */

static FILE *body; /* operators, printed after the schemas */
static size_t body_len;
static char *body_text;
static const char *outdir = "out";
static int nops, nstreams, nbranches;
static bool fanins = true;  /* generate fan-ins and the sources that feed them (--no-fanin: not) */
static int pin_hosts;       /* --pin-hosts N: serial operators may be pinned to h0..hN-1 */
static int nsources = 1, nfanins;
static const char *forced_keys; /* pick_keys returns this when set (a shuffle after a fan-in) */
static size_t children_at; /* where the current operator's children start in body */

typedef struct Port {
  const char *stream;
  Schema schema;
} Port;

/* "functor3", "filter4", ...: the kind in lower case and a number unique in the graph. */
static const char *new_op_name(const char *kind) {
  return fmt("%c%s%d", kind[0] + ('a' - 'A'), kind + 1, ++nops);
}

static void op_begin(const char *name, const char *kind, const Port *in, const char *out_stream,
                     const Schema *out_schema, bool may_hint) {
  fprintf(body, "\n  <operator name=\"%s\" kind=\"%s\"", name, kind);
  bool serial = !may_hint || (in && strchr(in->stream, ' ')); /* a source, a sink or a fan-in */
  if (may_hint) {
    if (chance(7)) {
      fprintf(body, " parallel=\"no\"");
      serial = true;
    } else if (chance(8)) {
      fprintf(body, " width=\"%d\"", chance(75) ? 2 : PICK(((int[]){1, 3})));
    }
  }
  /* only operators that stay serial: a pin on a replicated one is not applied (a warning) */
  if (pin_hosts > 0 && serial && splitmix64(&pin_state) % 100 < 40)
    fprintf(body, " host=\"h%d\"", (int)(splitmix64(&pin_state) % (uint64_t)pin_hosts));
  fprintf(body, ">\n");
  fflush(body);
  children_at = body_len;
  if (in) fprintf(body, "    <input stream=\"%s\"/>\n", in->stream);
  if (out_stream) fprintf(body, "    <output stream=\"%s\" schema=\"%s\"/>\n", out_stream, schema_name(out_schema));
}

static void param(const char *name, const char *text) {
  fprintf(body, "    <param name=\"%s\">%s</param>\n", name, xml(text));
}

static void set(const char *attr, const char *text) {
  fprintf(body, "    <set attr=\"%s\">%s</set>\n", attr, xml(text));
}

/* 1 for a set line, 2 for a state line, 0 for any other child. */
static int ordered_kind(const char *line) {
  return !strncmp(line, "    <set ", 9) ? 1 : !strncmp(line, "    <state ", 11) ? 2 : 0;
}

/* Rewrites the children of the current operator (one per line since children_at) in a shuffled
 * order in which the set lines keep their order among themselves, and the state lines theirs;
 * then closes the operator. */
static void op_end(void) {
  fflush(body);
  size_t len = body_len - children_at;
  char *text = malloc(len + 1);
  const char **lines = malloc(sizeof *lines * (len + 1));
  int *ordered = malloc(sizeof *ordered * 2 * (len + 1)); /* set lines, then state lines */
  if (!text || !lines || !ordered) {
    perror("sf-randgraph");
    exit(1);
  }
  memcpy(text, body_text + children_at, len);
  text[len] = 0;
  int n = 0;
  for (char *p = text; *p;) { /* every child line ends with a newline */
    lines[n++] = p;
    p = strchr(p, '\n');
    *p++ = 0;
  }
  int *sets = ordered, *states = ordered + len + 1, nsets = 0, nstates = 0;
  for (int i = 0; i < n; i++) {
    if (ordered_kind(lines[i]) == 1) sets[nsets++] = i;
    if (ordered_kind(lines[i]) == 2) states[nstates++] = i;
  }
  const char **shuffled = malloc(sizeof *shuffled * (size_t)(n + 1));
  if (!shuffled) {
    perror("sf-randgraph");
    exit(1);
  }
  memcpy(shuffled, lines, sizeof *lines * (size_t)n);
  for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
    int j = (int)(splitmix64(&order_state) % (uint64_t)(i + 1));
    const char *t = shuffled[i];
    shuffled[i] = shuffled[j];
    shuffled[j] = t;
  }
  /* the places the shuffle gave to sets take them back in their first order; states likewise */
  for (int i = 0, ks = 0, kt = 0; i < n; i++) {
    int kind = ordered_kind(shuffled[i]);
    if (kind == 1) shuffled[i] = lines[sets[ks++]];
    if (kind == 2) shuffled[i] = lines[states[kt++]];
  }
  fseek(body, (long)children_at, SEEK_SET);
  for (int i = 0; i < n; i++) fprintf(body, "%s\n", shuffled[i]);
  fprintf(body, "  </operator>\n");
  free(shuffled);
  free(ordered);
  free(lines);
  free(text);
}

static const char *new_stream(void) { return fmt("s%d", ++nstreams); }

/* partitionBy choices: mostly few distinct values, sometimes many. */
static const char *pick_keys(int many_pct) {
  static const char *const few[] = {"k1", "k2", "k1 k2", "k2 k1", "b", "k1 b"};
  static const char *const many[] = {"v", "d", "v k2", "k1 v", "d b"};
  if (forced_keys) return forced_keys;
  return chance(many_pct) ? PICK(many) : PICK(few);
}

static bool key_has(const char *keys, const char *attr) {
  if (!keys) return false;
  size_t n = strlen(attr);
  for (const char *p = keys; *p;) {
    while (*p == ' ') p++;
    const char *e = p;
    while (*e && *e != ' ') e++;
    if ((size_t)(e - p) == n && !strncmp(p, attr, n)) return true;
    p = e;
  }
  return false;
}

/* A derived output schema: maybe drops an extra, maybe adds one (returned in *added), maybe shuffles. */
static Schema derive_schema(const Schema *in, int *added) {
  Schema out = *in;
  *added = -1;
  for (int i = 0; i < out.n; i++)
    if (!is_core(out.name[i]) && chance(30)) {
      schema_remove(&out, i);
      break;
    }
  if (chance(25) && out.n < MAX_ATTRS) {
    char nm[8];
    snprintf(nm, sizeof nm, "x%d", next_extra++);
    schema_add(&out, nm, PICK(((char[]){'i', 'd', 's', 'b'})));
    *added = out.n - 1;
  }
  if (chance(15)) {
    char keep[8];
    if (*added >= 0) memcpy(keep, out.name[*added], sizeof keep);
    schema_shuffle(&out);
    if (*added >= 0) *added = schema_find(&out, keep);
  }
  return out;
}

/* Writes the sets of a Functor or FlatMap: some core attributes, and the added extra if any. */
static void functor_sets(const Schema *out, int added, const Scope *sc, const char *flat_index, bool *done) {
  int nsets = range(1, 3);
  for (int k = 0; k < nsets; k++) {
    static const char *const targets[] = {"v", "v", "d", "d", "k1", "k2", "b"};
    const char *t = PICK(targets);
    int slot = schema_find(out, t);
    if (slot < 0 || done[slot]) continue;
    done[slot] = true;
    char *e;
    if (!strcmp(t, "k1")) e = gen_k1(sc);
    else if (!strcmp(t, "k2")) e = gen_k2(sc);
    else if (flat_index && !strcmp(t, "v") && chance(60)) e = fmt("v * 10 + %s", flat_index);
    else if (flat_index && !strcmp(t, "d") && chance(60)) e = fmt("d + double(%s)", flat_index);
    else e = gen_typed(out->type[slot], 3, sc);
    set(t, e);
  }
  if (added >= 0) {
    char *e = gen_typed(out->type[added], 3, sc);
    if (flat_index && out->type[added] == 'i' && chance(50)) e = fmt("%s", flat_index);
    set(out->name[added], e);
  }
}

static Port gen_functor(const Port *in) {
  Port out = {new_stream(), {0}};
  int added;
  out.schema = derive_schema(&in->schema, &added);
  const char *name = new_op_name("Functor");
  bool stateful = chance(45);
  Scope sc = {0};
  typedef struct { const char *name; char type; const char *init; const char *update; } StateDef;
  StateDef states[4];
  int nst = 0;
  const char *keys = NULL;
  if (stateful) {
    static const StateDef menu[] = {
      {"cnt", 'i', "0", "cnt + 1"},
      {"acc", 'i', "0", NULL},
      {"mx", 'd', "-1000000.0", "max(mx, d)"},
      {"tot", 'd', "0.0", "tot + d * 0.5"},
      {"lastk", 's', "\"\"", "substr(k2 + lastk, 0, 12)"},
      {"flag", 'b', "false", NULL},
    };
    bool used[6] = {0};
    int want = range(1, 3);
    for (int k = 0; k < want; k++) {
      int m = rnd(6);
      if (used[m]) continue;
      used[m] = true;
      states[nst] = menu[m];
      sc.name[sc.n] = menu[m].name;
      sc.type[sc.n] = menu[m].type;
      sc.n++;
      nst++;
    }
    /* updates may read every state variable; generate them after the scope is complete */
    for (int k = 0; k < nst; k++) {
      if (states[k].update) continue;
      if (states[k].type == 'i') states[k].update = fmt("acc + %s", gen_int(2, &no_scope));
      else states[k].update = fmt("(%s) != flag", gen_bool(2, &sc));
    }
    if (chance(75)) keys = pick_keys(20);
  } else if (chance(5)) {
    keys = pick_keys(0); /* partitionBy without state: still stateless */
  }
  op_begin(name, "Functor", in, out.stream, &out.schema, true);
  if (chance(stateful ? 45 : 25)) {
    char *w;
    if (stateful && scope_pick(&sc, 'i') && chance(60)) w = fmt("%s %% %d == 0", scope_pick(&sc, 'i'), range(2, 5));
    else w = gen_pred(&sc);
    param("where", w);
  }
  if (keys) param("partitionBy", keys);
  bool done[MAX_ATTRS] = {0};
  if (stateful) {
    /* sets that expose the state directly */
    static const char *const targets[] = {"v", "d", "k2", "b"};
    static const char types[] = {'i', 'd', 's', 'b'};
    for (int t = 0; t < 4; t++) {
      const char *var = scope_pick(&sc, types[t]);
      int slot = schema_find(&out.schema, targets[t]);
      if (!var || slot < 0 || !chance(t < 2 ? 70 : 25)) continue;
      done[slot] = true;
      set(targets[t], var);
    }
  }
  functor_sets(&out.schema, added, &sc, NULL, done);
  for (int k = 0; k < nst; k++)
    fprintf(body, "    <state name=\"%s\" type=\"%s\" init=\"%s\">%s</state>\n", states[k].name,
            type_word(states[k].type), xml(states[k].init), xml(states[k].update));
  op_end();
  return out;
}

/* A predicate for `where`: mostly of a known, moderate selectivity (a random boolean expression is
 * all too often constant), sometimes nothing or everything passes. */
static char *gen_pred(const Scope *sc) {
  switch (rnd(12)) {
  case 0: return fmt("%s", chance(35) ? "false" : "v % 2 == 0"); /* everything dropped: 3 % */
  case 1: return fmt("true");
  case 2: return fmt("v %% %d != 0", range(2, 7));
  case 3: return fmt("rand(v + k1) %% 100 < %d", PICK(((int[]){1, 5, 50, 70, 95, 100})));
  case 4: return fmt("%sb", chance(50) ? "!" : "");
  case 5: return fmt("d > %s", PICK(((const char *[]){"0.0", "10.0", "-5.0", "30.0"})));
  case 6: return fmt("k2 != \"g1\"");
  case 7: return fmt("k1 %% 2 == 0");
  case 8: return fmt("hash(k2 + str(v)) %% %d != 0", range(2, 5));
  case 9: return fmt("abs(v) %% 10 < %d", range(1, 9));
  default: return gen_bool(3, sc);
  }
}

static Port gen_filter(const Port *in) {
  Port out = {new_stream(), in->schema};
  op_begin(new_op_name("Filter"), "Filter", in, out.stream, &out.schema, true);
  param("where", gen_pred(&no_scope));
  op_end();
  return out;
}

/* An aggregate expression of type t for a non-key output attribute `attr`. */
static char *agg_expr(const char *attr, char t, const char *keys) {
  switch (t) {
  case 'i':
    switch (rnd(12)) {
    case 0: return fmt("count()");
    case 1: return fmt("sum(v)");
    case 2: return fmt("min(v)");
    case 3: return fmt("max(v)");
    case 4: return fmt("first(%s)", is_core(attr) ? "v" : attr);
    case 5: return fmt("last(%s)", is_core(attr) ? "k1" : attr);
    case 6: return fmt("max(v) - min(v)");
    case 7: return fmt("sum(v) / count()");
    case 8: return fmt("sum(%s)", gen_int(2, &no_scope));
    case 9: return fmt("count() + %s", key_has(keys, "k1") ? "k1" : "1");
    case 10: return fmt("sum(k1 %% 3)");
    default: return fmt("min(%s)", is_core(attr) ? attr : "v");
    }
  case 'd':
    switch (rnd(9)) {
    case 0: return fmt("avg(d)");
    case 1: return fmt("sum(d)");
    case 2: return fmt("min(d)");
    case 3: return fmt("max(d)");
    case 4: return fmt("first(%s)", is_core(attr) ? "d" : attr);
    case 5: return fmt("last(%s)", is_core(attr) ? "d" : attr);
    case 6: return fmt("avg(double(v))");
    case 7: return fmt("sum(d) / double(count())");
    default: return fmt("avg(%s)", gen_double(2, &no_scope));
    }
  case 's':
    switch (rnd(7)) {
    case 0: return fmt("first(%s)", is_core(attr) ? "k2" : attr);
    case 1: return fmt("last(%s)", is_core(attr) ? "k2" : attr);
    case 2: return fmt("min(k2)");
    case 3: return fmt("max(k2)");
    case 4: return fmt("str(count())");
    case 5: return fmt("substr(first(k2) + last(k2), 0, 6)");
    default: return fmt("%s + str(sum(v))", key_has(keys, "k2") ? "k2" : "\"s\"");
    }
  default:
    switch (rnd(5)) {
    case 0: return fmt("first(%s)", is_core(attr) ? "b" : attr);
    case 1: return fmt("last(%s)", is_core(attr) ? "b" : attr);
    case 2: return fmt("count() > 2");
    case 3: return fmt("max(v) > 0");
    default: return fmt("first(b) != last(b)");
    }
  }
}

static Port gen_aggregate(const Port *in) {
  Port out = {new_stream(), {0}};
  const char *keys = chance(90) ? pick_keys(10) : NULL;
  /* output: the input's attributes (maybe minus an extra, maybe plus a count), maybe shuffled */
  out.schema = in->schema;
  for (int i = 0; i < out.schema.n; i++)
    if (!is_core(out.schema.name[i]) && chance(40)) {
      schema_remove(&out.schema, i);
      break;
    }
  if (chance(30) && out.schema.n < MAX_ATTRS) {
    char nm[8];
    snprintf(nm, sizeof nm, "x%d", next_extra++);
    schema_add(&out.schema, nm, chance(70) ? 'i' : 'd');
  }
  if (chance(15)) schema_shuffle(&out.schema);
  op_begin(new_op_name("Aggregate"), "Aggregate", in, out.stream, &out.schema, true);
  static const int sizes[] = {1, 2, 3, 4, 5, 7, 10, 25};
  param("window", fmt("%s %d", chance(55) ? "tumbling" : "sliding", PICK(sizes)));
  if (keys) param("partitionBy", keys);
  for (int i = 0; i < out.schema.n; i++) {
    const char *a = out.schema.name[i];
    char t = out.schema.type[i];
    if (key_has(keys, a)) {
      if (chance(12)) {
        if (t == 'i') set(a, fmt("%s * 2 + count()", a));
        else if (t == 's') set(a, fmt("%s + \"!\"", a));
        else if (t == 'b') set(a, fmt("!%s", a));
      }
      continue;
    }
    if (schema_find(&in->schema, a) < 0) { /* a new attribute */
      set(a, t == 'i' ? fmt("count()") : fmt("avg(double(v))"));
      continue;
    }
    set(a, agg_expr(a, t, keys));
  }
  op_end();
  return out;
}

static Port gen_dedup(const Port *in) {
  Port out = {new_stream(), in->schema};
  op_begin(new_op_name("Dedup"), "Dedup", in, out.stream, &out.schema, true);
  param("partitionBy", pick_keys(50));
  op_end();
  return out;
}

static Port gen_work(const Port *in) {
  Port out = {new_stream(), in->schema};
  op_begin(new_op_name("Work"), "Work", in, out.stream, &out.schema, true);
  param("iterations", fmt("%d", PICK(((int[]){0, 1, 5, 20, 50}))));
  op_end();
  return out;
}

static Port gen_flatmap(const Port *in) {
  Port out = {new_stream(), {0}};
  int added;
  out.schema = derive_schema(&in->schema, &added);
  op_begin(new_op_name("FlatMap"), "FlatMap", in, out.stream, &out.schema, true);
  static const char *const counts[] = {"abs(v) % 3", "(b ? 2 : 0)", "abs(k1) % 4", "1", "2", "len(k2) % 3"};
  const char *c = chance(3) ? "0" : PICK(counts); /* sometimes nothing at all */
  param("count", c);
  bool done[MAX_ATTRS] = {0};
  functor_sets(&out.schema, added, &no_scope, "i", done);
  op_end();
  return out;
}

static Port gen_op(const Port *in) {
  int r = rnd(100);
  if (r < 28) return gen_functor(in);
  if (r < 46) return gen_filter(in);
  if (r < 67) return gen_aggregate(in);
  if (r < 80) return gen_dedup(in);
  if (r < 91) return gen_work(in);
  return gen_flatmap(in);
}

static void gen_sink(const Port *in, const char *file) {
  op_begin(fmt("sink_%s", file), "FileSink", in, NULL, NULL, false);
  param("file", fmt("%s/%s.csv", outdir, file));
  param("format", "csv");
  op_end();
}

/* A Beacon named `name` over the core schema (maybe with an extra attribute, maybe shuffled). */
static Port gen_source(const char *name) {
  Port src = {new_stream(), {0}};
  schema_add(&src.schema, "k1", 'i');
  schema_add(&src.schema, "k2", 's');
  schema_add(&src.schema, "v", 'i');
  schema_add(&src.schema, "d", 'd');
  schema_add(&src.schema, "b", 'b');
  if (chance(20)) {
    char nm[8];
    snprintf(nm, sizeof nm, "x%d", next_extra++);
    schema_add(&src.schema, nm, PICK(((char[]){'i', 'd', 's', 'b'})));
  }
  if (chance(10)) schema_shuffle(&src.schema);
  /* 500..6000 tuples; one graph in 25 gets 20 000..60 000, enough to fill the bounded queues
   * between threads, so that back-pressure (and a region waiting on it) is exercised too */
  int count = chance(4) ? range(20000, 60000) : range(500, 6000);
  if (nsources > 1 && chance(30)) count = range(1, 400); /* another source: sometimes short */
  op_begin(name, "Beacon", NULL, src.stream, &src.schema, false);
  param("count", fmt("%d", count));
  if (chance(5)) param("rate", "2000000");
  /* another source, sometimes paced: at 10 000 a second, its fan-in waits for it now and then
   * (at most 0.2 s), so the progress of an idle input decides what goes first */
  else if (nsources > 1 && count <= 2000 && chance(12)) param("rate", "10000");
  for (int i = 0; i < src.schema.n; i++) {
    const char *a = src.schema.name[i];
    char *e;
    if (!strcmp(a, "k1")) e = chance(50) ? fmt("seq %% %d", PICK(((int[]){1, 2, 3, 5, 8, 20})))
                                         : fmt("rand(seq) %% %d", PICK(((int[]){2, 3, 5, 8, 20, 100})));
    else if (!strcmp(a, "k2")) e = fmt("\"g\" + str(rand(seq + 11) %% %d)", PICK(((int[]){1, 2, 3, 4, 6, 10})));
    else if (!strcmp(a, "v")) e = chance(70) ? fmt("rand(seq + 3) %% 1000 - 500") : fmt("seq");
    else if (!strcmp(a, "d")) e = fmt("double(rand(seq + 5) %% 10000) / 100.0 - 20.0");
    else if (!strcmp(a, "b")) e = fmt("rand(seq + 7) %% %d == 0", range(2, 4));
    else switch (src.schema.type[i]) {
      case 'i': e = fmt("rand(seq + 13) %% 50"); break;
      case 'd': e = fmt("double(seq) * 0.25"); break;
      case 's': e = fmt("\"e\" + str(seq %% 7)"); break;
      default: e = fmt("seq %% 2 == 0"); break;
      }
    set(a, e);
  }
  op_end();
  return src;
}

static bool schema_same(const Schema *a, const Schema *b) {
  return a->n == b->n && !memcmp(a->type, b->type, (size_t)a->n) &&
         !memcmp(a->name, b->name, sizeof a->name[0] * (size_t)a->n);
}

/* A stateless Functor from `in` to the schema `to` (the streams of one fan-in share a schema): the
 * attributes `in` lacks are set, the others forwarded (names are unique per type), the rest dropped. */
static Port gen_adapter(const Port *in, const Schema *to) {
  Port out = {new_stream(), *to};
  op_begin(new_op_name("Functor"), "Functor", in, out.stream, &out.schema, true);
  for (int i = 0; i < to->n; i++)
    if (schema_find(&in->schema, to->name[i]) < 0) set(to->name[i], gen_typed(to->type[i], 2, &no_scope));
  op_end();
  return out;
}

/* The streams to fan in with `cur` (one input port listing them all, in a shuffled order): one or
 * two others, each either a new source with 0..2 operators of its own (so that a fan-in may follow
 * regions) or, once, a side chain of 1..2 operators from `cur` itself (a diamond: the branches,
 * maybe regions, meet again). Returns the port naming them all; its consumer is the fan-in. */
static Port gen_fanin(Port cur) {
  nfanins++;
  const char *names[3];
  int n = 0;
  names[n++] = cur.stream;
  bool diamond = false;
  for (int others = shape_chance(75) ? 1 : 2; others > 0; others--) {
    Port o;
    int len;
    if (!diamond && shape_chance(35)) {
      diamond = true;
      o = cur;
      len = 1 + shape_rnd(2);
    } else {
      nsources++;
      o = gen_source(fmt("src%d", nsources));
      len = shape_rnd(3);
    }
    for (int k = 0; k < len; k++) o = gen_op(&o);
    if (!schema_same(&o.schema, &cur.schema)) o = gen_adapter(&o, &cur.schema);
    names[n++] = o.stream;
  }
  for (int i = n - 1; i > 0; i--) { /* ties between the inputs go by this order */
    int j = shape_rnd(i + 1);
    const char *t = names[i];
    names[i] = names[j];
    names[j] = t;
  }
  Port in = {names[0], cur.schema};
  for (int i = 1; i < n; i++) in.stream = fmt("%s %s", in.stream, names[i]);
  return in;
}

/* After a fan-in, sometimes two keyed operators on incompatible keys: two keyed regions joined by
 * a shuffle right behind the fan-in. */
static Port gen_shuffled_pair(Port cur) {
  static const char *const pairs[][2] = {{"k1", "k2"}, {"k2", "k1"}, {"k1 b", "k2"}, {"b", "k1 k2"}, {"k2", "b"}};
  int p = shape_rnd(5);
  for (int i = 0; i < 2; i++) {
    forced_keys = pairs[p][i];
    cur = shape_chance(50) ? gen_dedup(&cur) : gen_aggregate(&cur);
  }
  forced_keys = NULL;
  return cur;
}

/* A chain of n operators from `in`, ending in a sink writing `file`; may fan out on the way, and
 * (unless --no-fanin) fan in: right after its start (before any region), between its operators
 * (after and before regions), or into the sink. */
static void gen_chain(Port cur, int n, const char *file) {
  for (int k = 0; k <= n; k++) {
    if (nbranches < 2 && chance(k == 0 ? 10 : 12)) {
      char *bf = fmt("b%d", ++nbranches);
      gen_chain(cur, range(1, 3), bf);
    }
    bool fan = fanins && nfanins < 3 && shape_chance(k == 0 ? 30 : k == n ? 12 : 15);
    if (fan) cur = gen_fanin(cur);
    if (k == n) break;
    cur = gen_op(&cur);
    if (fan && shape_chance(35)) cur = gen_shuffled_pair(cur);
  }
  gen_sink(&cur, file);
}

static int usage(void) {
  fprintf(stderr, "usage: sf-randgraph [--no-fanin] [--pin-hosts N] SEED [OUTDIR]\n"
                  "prints a random valid graph (deterministic per SEED) whose sinks write OUTDIR/*.csv "
                  "(default OUTDIR: out)\n"
                  "  --no-fanin     one source and no fan-in: the graphs of before fan-ins were generated\n"
                  "  --pin-hosts N  pin some serial operators (sources, sinks, fan-ins, parallel=\"no\") to\n"
                  "                 hosts h0..hN-1 (give sf-xform --hosts naming them); the graph is the\n"
                  "                 same but for the pins\n");
  return 2;
}

int main(int argc, char **argv) {
  int a = 1;
  char opts[64] = ""; /* the options, in the graph's first comment (without "--": XML forbids it there) */
  while (a < argc && !strncmp(argv[a], "--", 2)) {
    if (!strcmp(argv[a], "--no-fanin")) {
      fanins = false;
      strcat(opts, " no-fanin");
      a++;
    } else if (!strcmp(argv[a], "--pin-hosts") && a + 1 < argc) {
      char *e;
      long h = strtol(argv[a + 1], &e, 10);
      if (*e || !*argv[a + 1] || h < 1 || h > 64) {
        fprintf(stderr, "sf-randgraph: --pin-hosts needs a number of hosts from 1 to 64, got '%s'\n", argv[a + 1]);
        return 2;
      }
      pin_hosts = (int)h;
      snprintf(opts + strlen(opts), sizeof opts - strlen(opts), " pin-hosts %d", pin_hosts);
      a += 2;
    } else {
      return usage();
    }
  }
  if (argc - a < 1 || argc - a > 2 || !strcmp(argv[a], "-h")) return usage();
  char *end;
  unsigned long long seed = strtoull(argv[a], &end, 10);
  if (*end || !*argv[a]) {
    fprintf(stderr, "sf-randgraph: SEED must be a non-negative integer, got '%s'\n", argv[a]);
    return 2;
  }
  if (argc - a == 2) outdir = argv[a + 1];
  rng_state = seed * UINT64_C(0x2545f4914f6cdd1d) + 1;
  for (int k = 0; k < 4; k++) next_u64();
  order_state = seed * UINT64_C(0x9e3779b97f4a7c15) + UINT64_C(0x632be59bd9b4e019);
  for (int k = 0; k < 4; k++) splitmix64(&order_state);
  shape_state = seed * UINT64_C(0xd1342543de82ef95) + UINT64_C(0x2545f4914f6cdd1d);
  for (int k = 0; k < 4; k++) splitmix64(&shape_state);
  pin_state = seed * UINT64_C(0xaf251af3b0f025b5) + UINT64_C(0x9e3779b97f4a7c15);
  for (int k = 0; k < 4; k++) splitmix64(&pin_state);

  body = open_memstream(&body_text, &body_len);
  if (!body) {
    perror("sf-randgraph");
    return 1;
  }

  Port src = gen_source("src");

  gen_chain(src, range(2, 7), "main");
  fclose(body);

  printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  printf("<!-- sf-randgraph %llu %s%s%s -->\n", seed, outdir, *opts ? " options:" : "", opts);
  printf("<graph xmlns=\"urn:streamfission:graph:1\" name=\"rand%llu\">\n", seed);
  for (int s = 0; s < nschemas; s++) {
    printf("  <schema name=\"S%d\">\n", s);
    for (int a = 0; a < schemas[s].n; a++)
      printf("    <attr name=\"%s\" type=\"%s\"/>\n", schemas[s].name[a], type_word(schemas[s].type[a]));
    printf("  </schema>\n");
  }
  fwrite(body_text, 1, body_len, stdout);
  printf("</graph>\n");
  free(body_text);
  free_kept();
  return ferror(stdout) ? 1 : 0;
}
