/* randgraph.c: sf-randgraph [--no-fanin] [--pin-hosts N] [--tables DIR] SEED [OUTDIR] prints a
 * random, valid StreamFission graph (docs/language.md) to standard output, the same graph for the
 * same seed and options on every machine.
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
 * Joins and lookups, drawn from a fifth stream (a graph for which it draws neither is the one it
 * was before they were generated):
 * - sometimes (about 30 % of the seeds) the main chain starts with a Join: the main Beacon and a
 *   second one (src2, ...) then declare event time `ts` (int; seq * STEP, sometimes minus a little
 *   disorder), each maybe behind 0..2 operators that forward `ts` unchanged (Filter, Work, a
 *   stateless Functor), and feed a Join on k1, k2 or both, windowed by `interval LOWER UPPER` or
 *   `tumbling time SIZE`, sized from the keys' distinct values and the steps so that a left tuple
 *   matches about 0.05..2.5 right ones; sometimes with `lateness`, `where` and a `let`. The Join's
 *   output sets the core attributes (both sides have them) from `left.` and `right.`, forwards
 *   some extras of one side, drops `ts` (so that the chain after it, fan-ins included, has no
 *   event time) and goes on as the chain does.
 * - with --tables DIR, sometimes (about 35 % of the seeds) the chains hold one or two Lookups, each
 *   against a table DIR/lookupN.csv that sf-randgraph writes (keyed on k1, k2 or both, with
 *   missing keys, a column the schema skips, `missing` drop or keep, sometimes a `let`); the
 *   graph names the file as DIR/lookupN.csv, so give an absolute DIR when the graph runs
 *   elsewhere. Without --tables no Lookup is generated.
 * String and time functions (lower, upper, replace, split_part, regex_extract, date_format, find,
 * year..second, contains, starts_with, ends_with, regex_match, `in`) are called in about 40 % of
 * the graphs' expressions, drawn from a sixth stream (a graph that draws none is the one it was).
 * Event-time windows, drawn from a seventh stream (a graph that draws none is the one it was): in
 * about 45 % of the seeds without a Join, the main Beacon declares event time `ts` (seq * STEP,
 * sometimes minus some disorder, up to 45 steps; sometimes with an explicit `tick`), sometimes fanned in by
 * time (`order="time"`) with a second timed Beacon (maybe short or paced, so that it ends first
 * or idles), then 0..2 operators that forward `ts`, and a time-window Aggregate: `tumbling time`,
 * `hopping time` or `session time`, keyed or not, sometimes with `lateness`; its output sets `ts`
 * to window_end(), so a second time window is sometimes stacked on it (keyed on `ts` now and
 * then). Then a Functor drops `ts` (so that later fan-ins agree), or the stream keeps its event
 * time and the chain gets no fan-ins. In these graphs the chain's other Aggregates are sometimes
 * `running`, and every Aggregate may call count_distinct, arg_max and arg_min (time windows also
 * window_start() and window_end()).
 * The first comment of the graph says which of them it holds ("features: join lookup functions
 * windows").
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
static uint64_t feat_state;  /* whether (and where) a graph has a Join or Lookups, drawn apart */
static uint64_t fn_state;    /* whether (and where) expressions call string and time functions */
static uint64_t win_state;   /* whether a graph has event-time windows, drawn apart */

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
/* The same from the feature stream: whether a graph gets a Join or Lookups (when it says no, the
 * graph is the one of before Joins and Lookups were generated). */
static int feat_rnd(int n) { return n <= 1 ? 0 : (int)(splitmix64(&feat_state) % (uint64_t)n); }
static bool feat_chance(int pct) { return feat_rnd(100) < pct; }
/* The same from the function stream: a graph that draws no function from it (fns false) is the
 * one it was before they were generated */
static bool fns;
static int nfns; /* calls generated */
static int fn_rnd(int n) { return n <= 1 ? 0 : (int)(splitmix64(&fn_state) % (uint64_t)n); }
static bool fn_chance(int pct) { return fns && fn_rnd(100) < pct; }

/* Event-time windows: decided once per graph from win_state; their operators then come from the
 * main stream (only such graphs change). */
static int win_rnd(int n) { return n <= 1 ? 0 : (int)(splitmix64(&win_state) % (uint64_t)n); }
static bool win_chance(int pct) { return win_rnd(100) < pct; }
static bool timewin;           /* this graph has event-time windows: Aggregates may be running, call the new functions */
static bool agg_time;          /* the Aggregate being written has a time window: window_start()/window_end() allowed */
static int ntimewins, nrunning;
#define PICK_FEAT_STEP() (((const int[]){1, 2, 3, 5, 10})[feat_rnd(5)])
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

/* Calls of the string and time functions (xform/functions.def), their constant arguments drawn
 * from the function stream, their others from the main one. Epoch milliseconds are kept within
 * +-10^14 (about 3,000 years either side of 1970, negative ones before it); patterns and formats
 * are literals, as the checker requires. */
static const char *const fn_lits[] = {"\"a\"", "\",\"", "\" \"", "\"x\"", "\"Z\"", "\"\""};
static const char *fn_lit(void) { return fn_lits[fn_rnd(6)]; }
static const char *fn_sep(void) { return fn_lits[fn_rnd(5)]; } /* never "": split_part refuses it */
static char *fn_ms(int d, const Scope *sc) { return fmt("(%s * 7919000 %% 100000000000000)", gen_int(d, sc)); }

static char *fn_string(int d, const Scope *sc) {
  nfns++;
  static const char *const pats[] = {"\"[a-z]+\"", "\"^(.)(.*)$\"", "\"a|Z\"", "\"([0-9]+)\"", "\"(x|q).\""};
  static const int groups[] = {0, 2, 0, 1, 1};
  static const char *const fmts[] = {"\"%Y-%m-%d\"", "\"%H:%M:%S\"", "\"%j %% %Y\"", "\"\""};
  switch (fn_rnd(6)) {
  case 0: return fmt("lower(%s)", gen_string(d, sc));
  case 1: return fmt("upper(%s)", gen_string(d, sc));
  case 2: return fmt("replace(%s, %s, %s)", gen_string(d, sc), fn_lit(), gen_string(d, sc));
  case 3: return fmt("split_part(%s, %s, %d)", gen_string(d, sc), fn_sep(), PICK(((int[]){1, 2, 3, -1, -2})));
  case 4: {
    int p = fn_rnd(5);
    return fmt("regex_extract(%s, %s, %d)", gen_string(d, sc), pats[p], fn_rnd(groups[p] + 1));
  }
  default: return fmt("date_format(%s, %s)", fn_ms(d, sc), fmts[fn_rnd(4)]);
  }
}

static char *fn_int(int d, const Scope *sc) {
  nfns++;
  static const char *const parts[] = {"year", "month", "day", "hour", "minute", "second"};
  if (fn_rnd(3) == 0) return fmt("find(%s, %s)", gen_string(d, sc), chance(50) ? fn_lit() : gen_string(d, sc));
  return fmt("%s(%s)", parts[fn_rnd(6)], fn_ms(d, sc));
}

static char *fn_bool(int d, const Scope *sc) {
  nfns++;
  static const char *const pats[] = {"\"^[a-z]*$\"", "\"[0-9]\"", "\"a.?Z\"", "\"^$\""};
  switch (fn_rnd(6)) {
  case 0: return fmt("contains(%s, %s)", gen_string(d, sc), fn_lit());
  case 1: return fmt("starts_with(%s, %s)", gen_string(d, sc), gen_string(d, sc));
  case 2: return fmt("ends_with(%s, %s)", gen_string(d, sc), fn_lit());
  case 3: return fmt("regex_match(%s, %s)", gen_string(d, sc), pats[fn_rnd(4)]);
  case 4: return fmt("(%s in (%d, %d, %d))", gen_int(d, sc), fn_rnd(5), fn_rnd(20), -fn_rnd(5));
  default: return fmt("(%s in (%s, %s))", gen_string(d, sc), fn_lit(), fn_lit());
  }
}

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
  if (fn_chance(20)) return fn_int(d, sc);
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
  if (fn_chance(40)) return fn_string(d, sc);
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
  if (fn_chance(25)) return fn_bool(d, sc);
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
static bool time_order_next; /* the next operator's input is a fan-in merged by time (order="time") */

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
  if (in) fprintf(body, "    <input stream=\"%s\"%s/>\n", in->stream, time_order_next ? " order=\"time\"" : "");
  time_order_next = false;
  if (out_stream) fprintf(body, "    <output stream=\"%s\" schema=\"%s\"/>\n", out_stream, schema_name(out_schema));
}

static void param(const char *name, const char *text) {
  fprintf(body, "    <param name=\"%s\">%s</param>\n", name, xml(text));
}

static void set(const char *attr, const char *text) {
  fprintf(body, "    <set attr=\"%s\">%s</set>\n", attr, xml(text));
}

/* 1 for a set or let line (a set may read the lets before it), 2 for a state line, 3 for an
 * input line (a Join's first input is its left side), 0 for any other child. */
static int ordered_kind(const char *line) {
  return !strncmp(line, "    <set ", 9) || !strncmp(line, "    <let ", 9) ? 1
         : !strncmp(line, "    <state ", 11)                              ? 2
         : !strncmp(line, "    <input ", 11)                              ? 3
                                                                          : 0;
}

/* Rewrites the children of the current operator (one per line since children_at) in a shuffled
 * order in which the set (and let) lines keep their order among themselves, the state lines
 * theirs and the input lines theirs; then closes the operator. */
static void op_end(void) {
  fflush(body);
  size_t len = body_len - children_at;
  char *text = malloc(len + 1);
  const char **lines = malloc(sizeof *lines * (len + 1));
  int *ordered = malloc(sizeof *ordered * 3 * (len + 1)); /* set lines, state lines, inputs */
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
  int *sets = ordered, *states = ordered + len + 1, *inputs = ordered + 2 * (len + 1), nsets = 0, nstates = 0,
      ninputs = 0;
  for (int i = 0; i < n; i++) {
    if (ordered_kind(lines[i]) == 1) sets[nsets++] = i;
    if (ordered_kind(lines[i]) == 2) states[nstates++] = i;
    if (ordered_kind(lines[i]) == 3) inputs[ninputs++] = i;
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
  for (int i = 0, ks = 0, kt = 0, ki = 0; i < n; i++) {
    int kind = ordered_kind(shuffled[i]);
    if (kind == 1) shuffled[i] = lines[sets[ks++]];
    if (kind == 2) shuffled[i] = lines[states[kt++]];
    if (kind == 3) shuffled[i] = lines[inputs[ki++]];
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

/* One of the aggregate functions of event time of type t (count_distinct, arg_max, arg_min; in a
 * time window also window_start() and window_end()). */
static char *new_agg_expr(char t) {
  switch (t) {
  case 'i':
    switch (rnd(agg_time ? 7 : 5)) {
    case 0: return fmt("count_distinct(k2)");
    case 1: return fmt("count_distinct(v %% 7) + count_distinct(b)");
    case 2: return fmt("arg_max(v, d)");
    case 3: return fmt("arg_min(k1, v)");
    case 4: return fmt("arg_max(v, k2) - arg_min(v, b)");
    case 5: return fmt("window_end() - window_start()");
    default: return fmt("window_start() + count()");
    }
  case 'd':
    switch (rnd(3)) {
    case 0: return fmt("arg_max(d, v)");
    case 1: return fmt("arg_min(d, k2)");
    default: return fmt("double(count_distinct(d))");
    }
  case 's':
    switch (rnd(3)) {
    case 0: return fmt("arg_max(k2, v)");
    case 1: return fmt("arg_min(k2, d)");
    default: return fmt("str(count_distinct(k1))");
    }
  default: return chance(50) ? fmt("arg_max(b, d)") : fmt("count_distinct(b) > 1");
  }
}

/* An aggregate expression of type t for a non-key output attribute `attr`. */
static char *agg_expr(const char *attr, char t, const char *keys) {
  if (timewin && chance(30)) return new_agg_expr(t);
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
  if (timewin && chance(25)) {
    nrunning++;
    param("window", "running");
  } else {
    param("window", fmt("%s %d", chance(55) ? "tumbling" : "sliding", PICK(sizes)));
  }
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

/* What gen_source makes besides: with src_step > 0, an event time `ts` (seq * src_step, minus
 * rand(seq) % src_disorder when that is above 1); it reports how many distinct values its k1 and
 * k2 take (at most) and its count. */
static int src_step, src_disorder, src_tick;
static int src_k1n, src_k2n, src_count;

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
  if (src_step > 0) schema_add(&src.schema, "ts", 'i');
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
  if (src_step > 0) param("time", "ts");
  if (src_step > 0 && src_tick > 0) param("tick", fmt("%d", src_tick));
  src_count = count;
  for (int i = 0; i < src.schema.n; i++) {
    const char *a = src.schema.name[i];
    char *e;
    if (!strcmp(a, "k1")) {
      if (chance(50)) {
        src_k1n = PICK(((int[]){1, 2, 3, 5, 8, 20}));
        e = fmt("seq %% %d", src_k1n);
      } else {
        src_k1n = PICK(((int[]){2, 3, 5, 8, 20, 100}));
        e = fmt("rand(seq) %% %d", src_k1n);
      }
    } else if (!strcmp(a, "k2")) {
      src_k2n = PICK(((int[]){1, 2, 3, 4, 6, 10}));
      e = fmt("\"g\" + str(rand(seq + 11) %% %d)", src_k2n);
    } else if (!strcmp(a, "ts"))
      e = src_disorder > 1 ? fmt("seq * %d - rand(seq + 19) %% %d", src_step, src_disorder) : fmt("seq * %d", src_step);
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

/* ---- joins and lookups (drawn only when the feature stream says so) ---- */

static const char *tables_dir; /* --tables DIR: Lookups allowed, their tables written there */
static bool no_join;           /* --no-join: no graph gets a Join (the draw is made all the same) */
static int njoins, nlookups;
static int lookup_pct; /* the chance of a Lookup at each point of a chain (0: none) */

/* A stateless Functor that forwards the event time `ts` (it never sets it or drops it): sets some of
 * v, d, b, maybe adds an extra, maybe drops one, maybe has a `where`. */
static Port gen_time_functor(const Port *in) {
  Port out = {new_stream(), in->schema};
  for (int i = 0; i < out.schema.n; i++)
    if (!is_core(out.schema.name[i]) && strcmp(out.schema.name[i], "ts") && chance(30)) {
      schema_remove(&out.schema, i);
      break;
    }
  int added = -1;
  if (chance(25) && out.schema.n < MAX_ATTRS) {
    char nm[8];
    snprintf(nm, sizeof nm, "x%d", next_extra++);
    schema_add(&out.schema, nm, PICK(((char[]){'i', 'd', 's', 'b'})));
    added = out.schema.n - 1;
  }
  op_begin(new_op_name("Functor"), "Functor", in, out.stream, &out.schema, true);
  if (chance(20)) param("where", gen_pred(&no_scope));
  static const char *const targets[] = {"v", "d", "b"};
  bool done[3] = {0};
  for (int k = range(1, 2); k > 0; k--) {
    int t = rnd(3);
    if (done[t]) continue;
    done[t] = true;
    set(targets[t], gen_typed(out.schema.type[schema_find(&out.schema, targets[t])], 3, &no_scope));
  }
  if (added >= 0) set(out.schema.name[added], gen_typed(out.schema.type[added], 2, &no_scope));
  op_end();
  return out;
}

/* An operator between a timed source and a Join: one that forwards `ts` unchanged. */
static Port gen_prejoin_op(const Port *in) {
  int r = rnd(100);
  if (r < 40) return gen_filter(in);
  if (r < 55) return gen_work(in);
  return gen_time_functor(in);
}

/* A Join of `left` (timed by `ts`, from a source of count_l tuples, step step_l, whose k1 and k2
 * take k1n_l and k2n_l values) with a new timed Beacon, maybe behind operators of its own. */
static Port gen_join(Port left, int count_l, int step_l, int k1n_l, int k2n_l) {
  njoins++;
  nsources++;
  static const int steps[] = {1, 2, 3, 5, 10};
  int step_r = PICK(steps);
  src_step = step_r;
  src_disorder = chance(35) ? range(2, 3 * step_r + 2) : 0;
  Port right = gen_source(fmt("src%d", nsources));
  src_step = src_disorder = 0;
  int k1n_r = src_k1n, k2n_r = src_k2n;
  for (int k = rnd(3); k > 0; k--) right = gen_prejoin_op(&right);

  /* the key, and the chance p that two tuples have equal keys (about 1 / the most distinct values) */
  int keys = PICK(((int[]){0, 0, 1, 2})); /* k1, k2, both */
  double p = 1.0;
  if (keys != 1) p /= k1n_l > k1n_r ? k1n_l : k1n_r;
  if (keys != 0) p /= k2n_l > k2n_r ? k2n_l : k2n_r;
  /* the window: a left tuple matches about m right ones (m * count_l rows at most 50 000) */
  double m = PICK(((double[]){0.05, 0.2, 0.5, 1.0, 2.0}));
  if (m * count_l > 50000.0) m = 50000.0 / count_l;
  double units = m * step_r / p; /* the time a window spans */
  if (units > 1e6) units = 1e6;
  char *window;
  if (chance(70)) {
    int span = units < 1.0 ? 0 : (int)units - 1;
    int lower;
    switch (rnd(5)) {
    case 0: lower = 0; break;
    case 1: lower = -span; break;
    case 2: lower = -span / 2; break;
    case 3: lower = range(1, 3 * step_l); break;
    default: lower = -span - range(1, 3 * step_r); break;
    }
    window = fmt("interval %d %d", lower, lower + span);
  } else {
    int size = units < 1.0 ? 1 : (int)units;
    window = fmt("tumbling time %d", size);
  }

  /* the output: the core attributes (set), some extras of either side (forwarded), maybe a new one */
  Port out = {new_stream(), {0}};
  for (int i = 0; i < left.schema.n; i++) {
    const char *a = left.schema.name[i];
    if (!strcmp(a, "ts")) continue;
    if (is_core(a) || chance(60)) schema_add(&out.schema, a, left.schema.type[i]);
  }
  for (int i = 0; i < right.schema.n; i++) {
    const char *a = right.schema.name[i];
    if (!strcmp(a, "ts") || is_core(a) || schema_find(&out.schema, a) >= 0) continue;
    if (chance(50)) schema_add(&out.schema, a, right.schema.type[i]);
  }
  int added = -1;
  if (chance(25) && out.schema.n < MAX_ATTRS) {
    char nm[8];
    snprintf(nm, sizeof nm, "x%d", next_extra++);
    schema_add(&out.schema, nm, PICK(((char[]){'i', 'd', 's', 'b'})));
    added = out.schema.n - 1;
  }
  if (chance(15)) {
    char keep[8] = "";
    if (added >= 0) memcpy(keep, out.schema.name[added], sizeof keep);
    schema_shuffle(&out.schema);
    if (added >= 0) added = schema_find(&out.schema, keep);
  }

  op_begin(new_op_name("Join"), "Join", NULL, out.stream, &out.schema, true);
  fprintf(body, "    <input stream=\"%s\"/>\n", left.stream);
  fprintf(body, "    <input stream=\"%s\"/>\n", right.stream);
  const char *on1 = chance(50) ? "left.k1 = right.k1" : "right.k1 = left.k1";
  const char *on2 = chance(50) ? "left.k2 = right.k2" : "right.k2 = left.k2";
  param("on", keys == 0 ? on1 : keys == 1 ? on2 : chance(50) ? fmt("%s and %s", on1, on2) : fmt("%s and %s", on2, on1));
  param("window", window);
  if (chance(35)) param("lateness", fmt("%d", PICK(((int[]){0, 1, 3, 10, 50}))));
  const char *let = NULL;
  if (chance(30)) {
    let = PICK(((const char *[]){"jd", "jv"}));
    fprintf(body, "    <let name=\"%s\" type=\"int\">%s</let>\n", let,
            !strcmp(let, "jd") ? "right.ts - left.ts" : "left.v + right.v");
  }
  if (chance(30)) {
    static const char *const wheres[] = {"left.v % 3 != right.v % 2", "left.d < right.d + 10.0", "left.b || right.b",
                                         "(left.v + right.v) % 4 != 0", "left.k2 <= right.k2", "!(left.b && right.b)"};
    const char *w = PICK(wheres);
    if (let && chance(50)) w = fmt("%s %% %d != 0", let, range(2, 4));
    param("where", w);
  }
  for (int i = 0; i < out.schema.n; i++) {
    const char *a = out.schema.name[i];
    char *e = NULL;
    if (!strcmp(a, "k1")) {
      e = fmt("%s", keys != 1 ? PICK(((const char *[]){"left.k1", "right.k1"}))
                              : PICK(((const char *[]){"left.k1", "right.k1", "(left.k1 * 3 + right.k1) % 7"})));
    } else if (!strcmp(a, "k2")) {
      e = fmt("%s", PICK(((const char *[]){"left.k2", "right.k2", "substr(left.k2 + right.k2, 0, 4)"})));
    } else if (!strcmp(a, "v")) {
      e = fmt("%s", PICK(((const char *[]){"left.v + right.v", "left.v - right.v", "right.v", "right.ts - left.ts",
                                           "left.v * 3 + right.v % 7"})));
      if (let && chance(60)) e = fmt("%s", let);
    } else if (!strcmp(a, "d")) {
      e = fmt("%s", PICK(((const char *[]){"left.d + right.d", "left.d", "right.d * 0.5",
                                           "double(right.ts - left.ts) / 3.0"})));
    } else if (!strcmp(a, "b")) {
      e = fmt("%s", PICK(((const char *[]){"left.b && right.b", "left.b != right.b", "right.b", "left.v < right.v"})));
    } else if (i == added) {
      switch (out.schema.type[i]) {
      case 'i': e = fmt("right.ts - left.ts + right.v %% 10"); break;
      case 'd': e = fmt("left.d - right.d"); break;
      case 's': e = fmt("left.k2 + \"-\" + right.k2"); break;
      default: e = fmt("left.b || right.b"); break;
      }
    }
    if (e) set(a, e);
  }
  op_end();
  return out;
}

/* ---- event-time windows (drawn only when the window stream says so) ---- */

/* A time-window Aggregate of `in` (timed by `ts`, whose times move in steps of about `unit`): a
 * tumbling, hopping or session window sized from the unit, keyed or not (after another time
 * window, sometimes on `ts`, its window ends), sometimes with lateness. Its output has the input's
 * attributes (maybe an extra fewer or more) and sets `ts` to window_end() unless `ts` is a key, so
 * another time window can follow. *next_unit: the step of its output's times. */
static Port gen_time_aggregate(const Port *in, int unit, bool stacked, int *next_unit) {
  ntimewins++;
  Port out = {new_stream(), {0}};
  const char *keys;
  if (stacked && chance(40)) keys = chance(50) ? "ts" : "ts k1";
  else keys = chance(85) ? pick_keys(10) : NULL;
  out.schema = in->schema;
  for (int i = 0; i < out.schema.n; i++)
    if (!is_core(out.schema.name[i]) && strcmp(out.schema.name[i], "ts") && chance(40)) {
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
  char *window;
  switch (rnd(3)) {
  case 0: {
    int size = unit * PICK(((int[]){1, 2, 3, 5, 10, 40}));
    window = fmt("tumbling time %d", size);
    *next_unit = size;
    break;
  }
  case 1: {
    int slide = unit * PICK(((int[]){1, 2, 5, 10}));
    window = fmt("hopping time %d %d", slide * PICK(((int[]){1, 2, 3, 4})), slide);
    *next_unit = slide;
    break;
  }
  default: {
    int gap = unit * PICK(((int[]){1, 2, 3, 8, 30}));
    window = fmt("session time %d", gap);
    *next_unit = gap;
    break;
  }
  }
  param("window", window);
  if (chance(40)) param("lateness", fmt("%d", PICK(((int[]){0, 1, unit, 3 * unit, 20 * unit}))));
  if (keys) param("partitionBy", keys);
  agg_time = true;
  for (int i = 0; i < out.schema.n; i++) {
    const char *a = out.schema.name[i];
    char t = out.schema.type[i];
    if (key_has(keys, a)) continue;
    if (!strcmp(a, "ts")) set(a, "window_end()");
    else if (schema_find(&in->schema, a) < 0) set(a, t == 'i' ? (chance(50) ? "window_start()" : "count()") : "avg(d)");
    else set(a, agg_expr(a, t, keys));
  }
  agg_time = false;
  op_end();
  return out;
}

/* A stateless Functor that drops `ts` (and so the stream's event time), maybe setting v or d. */
static Port gen_untime(const Port *in) {
  Port out = {new_stream(), in->schema};
  schema_remove(&out.schema, schema_find(&out.schema, "ts"));
  op_begin(new_op_name("Functor"), "Functor", in, out.stream, &out.schema, true);
  if (chance(50)) {
    if (chance(50)) set("v", gen_typed('i', 2, &no_scope));
    else set("d", "d * 2.0");
  }
  op_end();
  return out;
}

/* The start of a graph with event-time windows: the main source `src` (timed, step `step`), maybe
 * fanned in by time with a second timed Beacon, 0..2 operators forwarding `ts`, one or two time
 * windows, maybe an operator between them; then `ts` dropped, or kept (and no fan-in after). */
static Port gen_time_start(Port src, int step, int disorder, int tick, bool by_time, int pre) {
  if (by_time) {
    nsources++;
    src_step = step;
    src_disorder = disorder;
    src_tick = tick;
    Port o = gen_source(fmt("src%d", nsources));
    src_step = src_disorder = src_tick = 0;
    if (!schema_same(&o.schema, &src.schema)) o = gen_adapter(&o, &src.schema); /* forwards ts */
    Port in = {chance(50) ? fmt("%s %s", src.stream, o.stream) : fmt("%s %s", o.stream, src.stream), src.schema};
    time_order_next = true;
    src = gen_prejoin_op(&in);
  }
  for (int k = 0; k < pre; k++) src = gen_prejoin_op(&src);
  int unit;
  src = gen_time_aggregate(&src, step, false, &unit);
  if (chance(40)) {
    if (chance(30)) src = gen_prejoin_op(&src);
    int next;
    src = gen_time_aggregate(&src, unit, true, &next);
  }
  if (schema_find(&src.schema, "ts") < 0) return src; /* a Functor on the way dropped it */
  if (chance(65)) return gen_untime(&src);
  nfanins = 3; /* the stream keeps its event time: no fan-in with a stream without it */
  return src;
}

/* A Lookup of `in` in a new table DIR/lookupN.csv (written here), keyed on k1, k2 or both. */
static Port gen_lookup(const Port *in) {
  int id = ++nlookups;
  int keys = rnd(3); /* k1, k2, both */
  Schema t = {0};
  if (keys != 1) schema_add(&t, "tk1", 'i');
  if (keys != 0) schema_add(&t, "tk2", 's');
  static const char *const vals[] = {"tw", "tf", "tn", "tb"};
  static const char vtypes[] = {'i', 'd', 's', 'b'};
  bool has[4] = {0};
  int nvals = 0;
  for (int k = 0; k < 4; k++)
    if (chance(60)) has[k] = true, nvals++;
  if (!nvals) has[0] = true;
  for (int k = 0; k < 4; k++)
    if (has[k]) schema_add(&t, vals[k], vtypes[k]);
  if (chance(50)) schema_shuffle(&t);
  const char *tschema = schema_name(&t);

  /* the file: the header in another order, sometimes with a column the schema skips */
  char *path = fmt("%s/lookup%d.csv", tables_dir, id);
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  int order[MAX_ATTRS + 1], ncols = t.n;
  for (int i = 0; i < t.n; i++) order[i] = i;
  if (chance(40)) order[ncols++] = -1; /* "junk" */
  for (int i = ncols - 1; i > 0; i--) {
    int j = rnd(i + 1), x = order[i];
    order[i] = order[j];
    order[j] = x;
  }
  for (int c = 0; c < ncols; c++) fprintf(f, "%s%s", c ? "," : "", order[c] < 0 ? "junk" : t.name[order[c]]);
  fprintf(f, "\n");
  int k1lo = range(-2, 1), k1hi = k1lo + range(0, 12);
  static const char *const k2s[] = {"g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8", "g9", "z", "", "g"};
  int n1 = keys == 1 ? 1 : k1hi - k1lo + 1, n2 = keys == 0 ? 1 : (int)(sizeof k2s / sizeof k2s[0]);
  int keep_pct = chance(20) ? 50 : 85;
  for (int a = 0; a < n1; a++)
    for (int b = 0; b < n2; b++) {
      if (!chance(keep_pct)) continue;
      for (int c = 0; c < ncols; c++) {
        const char *nm = order[c] < 0 ? "junk" : t.name[order[c]];
        char *v;
        if (!strcmp(nm, "tk1")) v = fmt("%d", k1lo + a);
        else if (!strcmp(nm, "tk2")) v = fmt("\"%s\"", k2s[b]);
        else if (!strcmp(nm, "tw")) v = fmt("%d", range(-50, 50));
        else if (!strcmp(nm, "tf")) v = fmt("%s", PICK(((const char *[]){"0.5", "-1.25", "3", "0", "2.75", "1e-3"})));
        else if (!strcmp(nm, "tn")) v = fmt("%s", PICK(((const char *[]){"a", "bb", "n7", "x y", "\"\"", "\"q,r\""})));
        else if (!strcmp(nm, "tb")) v = fmt("%s", chance(50) ? "true" : "false");
        else v = fmt("j%d", rnd(100));
        fprintf(f, "%s%s", c ? "," : "", v);
      }
      fprintf(f, "\n");
    }
  if (fclose(f)) {
    perror(path);
    exit(1);
  }

  Port out = {new_stream(), {0}};
  int added;
  out.schema = derive_schema(&in->schema, &added);
  op_begin(new_op_name("Lookup"), "Lookup", in, out.stream, &out.schema, true);
  param("file", path);
  param("schema", tschema);
  const char *on1 = "table.tk1 = k1", *on2 = "table.tk2 = k2";
  param("on", keys == 0 ? on1 : keys == 1 ? on2 : chance(50) ? fmt("%s and %s", on1, on2) : fmt("%s and %s", on2, on1));
  if (chance(40)) param("missing", "keep");
  else if (chance(20)) param("missing", "drop");
  const char *let = NULL;
  if (chance(30)) {
    let = "lv";
    const char *e = has[0] ? "table.tw * 3 + v % 7" : keys != 1 ? "table.tk1 + v % 5" : "len(table.tk2) + v";
    fprintf(body, "    <let name=\"lv\" type=\"int\">%s</let>\n", xml(e));
  }
  bool done[MAX_ATTRS] = {0};
  for (int k = range(1, 2); k > 0; k--) {
    static const char *const targets[] = {"v", "d", "k1", "k2", "b"};
    const char *a = PICK(targets);
    int slot = schema_find(&out.schema, a);
    if (done[slot]) continue;
    done[slot] = true;
    char *e = NULL;
    if (!strcmp(a, "v")) e = let ? fmt("%s", let) : has[0] ? fmt("v + table.tw") : NULL;
    else if (!strcmp(a, "d")) e = has[1] ? fmt("d + table.tf") : NULL;
    else if (!strcmp(a, "k1")) e = has[0] ? fmt("abs(table.tw) %% 5") : keys != 1 ? fmt("table.tk1") : NULL;
    else if (!strcmp(a, "k2"))
      e = has[2] ? fmt("substr(table.tn + k2, 0, 4)") : keys != 0 ? fmt("table.tk2 + \"!\"") : NULL;
    else e = has[3] ? fmt("table.tb != b") : NULL;
    if (!e) e = gen_typed(out.schema.type[slot], 2, &no_scope);
    set(a, e);
  }
  if (added >= 0) {
    char ty = out.schema.type[added];
    int col = ty == 'i' ? 0 : ty == 'd' ? 1 : ty == 's' ? 2 : 3;
    set(out.schema.name[added], has[col] && chance(70) ? fmt("table.%s", vals[col]) : gen_typed(ty, 2, &no_scope));
  }
  op_end();
  return out;
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
    /* a Lookup (when the graph has them): anywhere; the main chain has one at least */
    if (lookup_pct && nlookups < 2 &&
        (feat_chance(lookup_pct) || (k == n && !nlookups && !strcmp(file, "main"))))
      cur = gen_lookup(&cur);
    if (k == n) break;
    cur = gen_op(&cur);
    if (fan && shape_chance(35)) cur = gen_shuffled_pair(cur);
  }
  gen_sink(&cur, file);
}

static int usage(void) {
  fprintf(stderr, "usage: sf-randgraph [--no-fanin] [--pin-hosts N] [--tables DIR] [--no-join] SEED [OUTDIR]\n"
                  "prints a random valid graph (deterministic per SEED) whose sinks write OUTDIR/*.csv "
                  "(default OUTDIR: out)\n"
                  "  --no-fanin     one source and no fan-in: the graphs of before fan-ins were generated\n"
                  "  --pin-hosts N  pin some serial operators (sources, sinks, fan-ins, parallel=\"no\") to\n"
                  "                 hosts h0..hN-1 (give sf-xform --hosts naming them); the graph is the\n"
                  "                 same but for the pins\n"
                  "  --tables DIR   some graphs get Lookups: their tables are written to DIR/lookupN.csv\n"
                  "  --no-join      no graph gets a Join\n"
                  "                 (an existing directory), which the graph names so\n");
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
    } else if (!strcmp(argv[a], "--no-join")) {
      no_join = true;
      a++;
    } else if (!strcmp(argv[a], "--tables") && a + 1 < argc && *argv[a + 1]) {
      tables_dir = argv[a + 1];
      if (strstr(tables_dir, "--") || strlen(tables_dir) > 4096) {
        fprintf(stderr, "sf-randgraph: --tables: the directory's name may not hold '--', got '%s'\n", tables_dir);
        return 2;
      }
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
  feat_state = seed * UINT64_C(0x5851f42d4c957f2d) + UINT64_C(0x14057b7ef767814f);
  for (int k = 0; k < 4; k++) splitmix64(&feat_state);
  fn_state = seed * UINT64_C(0x369dea0f31a53f85) + UINT64_C(0xda942042e4dd58b5);
  for (int k = 0; k < 4; k++) splitmix64(&fn_state);
  fns = fn_rnd(100) < 40;
  win_state = seed * UINT64_C(0x27bb2ee687b0b0fd) + UINT64_C(0x94d049bb133111eb);
  for (int k = 0; k < 4; k++) splitmix64(&win_state);

  body = open_memstream(&body_text, &body_len);
  if (!body) {
    perror("sf-randgraph");
    return 1;
  }

  /* drawn first, and apart: a graph that gets neither a Join nor a Lookup is as it was before */
  bool join = feat_chance(30) && !no_join;
  int step = PICK_FEAT_STEP();
  int disorder = feat_chance(35) ? 2 + feat_rnd(3 * step + 1) : 0;
  int prejoin = feat_rnd(3);
  bool lookups = feat_chance(35);
  if (lookups && tables_dir) lookup_pct = 25;
  /* drawn apart too: a graph without event-time windows is as it was before them */
  timewin = !join && win_chance(45);
  int wstep = ((const int[]){1, 2, 3, 5, 10})[win_rnd(5)];
  /* disorder: none, a little, or up to 45 steps (so that windows without enough lateness drop late tuples) */
  int wdisorder = !win_chance(55) ? 0 : win_chance(50) ? 2 + win_rnd(3 * wstep + 1) : wstep * (5 + win_rnd(41));
  int wtick = win_chance(20) ? wstep * ((const int[]){1, 3, 7})[win_rnd(3)] : 0;
  bool wby_time = win_chance(30);
  int wpre = win_rnd(3);
  if (join) {
    src_step = step;
    src_disorder = disorder;
  } else if (timewin) {
    src_step = wstep;
    src_disorder = wdisorder;
    src_tick = wtick;
  }
  Port src = gen_source("src");
  if (join) {
    int count = src_count, k1n = src_k1n, k2n = src_k2n;
    src_step = src_disorder = 0;
    for (int k = 0; k < prejoin; k++) src = gen_prejoin_op(&src);
    src = gen_join(src, count, step, k1n, k2n);
  } else if (timewin) {
    src_step = src_disorder = src_tick = 0;
    src = gen_time_start(src, wstep, wdisorder, wtick, wby_time, wpre);
  }

  gen_chain(src, range(2, 7), "main");
  fclose(body);

  printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  printf("<!-- sf-randgraph %llu %s%s%s%s%s%s%s%s%s -->\n", seed, outdir, *opts || tables_dir ? " options:" : "", opts,
         tables_dir ? " tables " : "", tables_dir ? tables_dir : "",
         njoins || nlookups || nfns || ntimewins ? " features:" : "",
         njoins && nlookups ? " join lookup" : njoins ? " join" : nlookups ? " lookup" : "", nfns ? " functions" : "",
         ntimewins ? " windows" : "");
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
