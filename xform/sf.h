/* sf.h: the graph library of StreamFission, one header with a section per file of xform/.
 *
 * Ownership in one rule: everything reachable from a Graph lives in that graph's Arena and dies with
 * graph_free(); nothing in a Graph is ever freed on its own.  Passes that build a new graph (rewrite)
 * allocate in the new graph's arena and may point at strings of the old one only while both live. */
#ifndef SF_H
#define SF_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SF_NAMESPACE "urn:streamfission:graph:1"

/* ---- arena.c: bump allocation per graph; out of memory aborts in one place ---- */

typedef struct Arena Arena;
/* The members are arena.c's; they are here for arena_reset's inline test only. */
struct Arena {
  struct ArenaBlock *head; /* current block, newest first */
  size_t next;             /* size of the next block */
  bool dirty;              /* something was allocated since arena_new or the last reset */
};

Arena *arena_new(void);
void *arena_alloc(Arena *a, size_t size);                     /* zeroed, 16-byte aligned */
/* arena_alloc without the zeroing, for memory the caller writes before it reads (the evaluator's
 * register vectors over a run: tens of kilobytes per call). */
void *arena_alloc_raw(Arena *a, size_t size);
char *arena_strdup(Arena *a, const char *s);                  /* NULL stays NULL */
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void arena_reset_blocks(Arena *a);                            /* arena_reset's work */
/* Forget everything, keep one block. Once per tuple per operator on the executor's path (a scratch
 * arena): an arena with nothing allocated since is left as it is, without a call. */
static inline void arena_reset(Arena *a) {
  if (a->dirty) arena_reset_blocks(a);
}
void arena_free(Arena *a);
void *sf_xmalloc(size_t size);                                /* malloc or abort */
void *sf_xrealloc(void *p, size_t size);
_Noreturn void sf_die_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define sf_die(...) sf_die_at(__FILE__, __LINE__, __VA_ARGS__)  /* our own bug: abort loudly */
#define sf_assert(c) ((c) ? (void)0 : sf_die("assertion failed: %s", #c))

/* Growable array of pointers in an arena. */
typedef struct PtrVec {
  void **items; /* the elements */
  int n;        /* how many are used */
  int cap;      /* how many fit */
} PtrVec;
void ptrvec_push(Arena *a, PtrVec *v, void *item);

/* ---- namemap.c: a map from names to pointers (open addressing), for lookups in constant time ----
 * Keys are not copied: each must stay unchanged for as long as the map holds it. The slots are
 * malloc'ed (out of memory aborts); a zeroed NameMap is empty and ready to use. */

typedef struct NameSlot NameSlot;
typedef struct NameMap {
  NameSlot *slots; /* cap slots (NULL while cap is 0) */
  size_t cap;      /* a power of two, at least twice n */
  size_t n;        /* keys stored */
} NameMap;

/* The value stored under key, NULL when none (or key is NULL). */
void *namemap_get(const NameMap *m, const char *key);
/* Stores key -> value unless key is already there; returns the value now stored under key (the
 * earlier one when key was present, so that the first of several equal names wins). */
void *namemap_put(NameMap *m, const char *key, void *value);
void namemap_reserve(NameMap *m, size_t n); /* room for n keys without growing again */
void namemap_clear(NameMap *m);   /* forgets every key, keeps the slots */
void namemap_release(NameMap *m); /* frees the slots; the map is empty and usable again */

/* ---- diag.c: diagnostics as records. A pass reports every problem it finds through a Diag, which
 * keeps them; the driver calls diag_flush when the pass ends, which prints them (in document order,
 * except for parsing) as `file:line[:col]: error|warning: msg`, notes after their record, and
 * stops when nerrors is non-zero. ---- */

/* Where an expression's text is in the graph file, so that a column inside the expression can be
 * reported as a line and column of the file. Passed explicitly to whatever checks the text. */
typedef struct TextOrigin {
  const char *raw;  /* the element's raw XML text from the expression's first character (NULL: see col) */
  int line;         /* file line of that character (raw NULL, col 0: the line to report, columns unknown) */
  int col;          /* file column (1-based, bytes) of that character; raw NULL and col > 0: the text is
                     * on this line as it is, without entities */
} TextOrigin;

typedef enum Severity { SEV_ERROR, SEV_WARNING, SEV_NOTE } Severity;

/* A note printed after the record it belongs to. */
typedef struct DiagNote {
  int line;         /* where it points (0: the whole file) */
  char *message;    /* formatted text (owned; line breaks are escaped when printed) */
} DiagNote;

/* One diagnostic waiting in a Diag until diag_flush. */
typedef struct DiagRecord {
  int line;           /* where it points (0: the whole file) */
  int col;            /* 1-based column (0: the whole line) */
  Severity severity;  /* error or warning; SEV_NOTE only for a note reported with no record to follow */
  char *message;      /* formatted text (owned; line breaks are escaped when printed) */
  DiagNote *notes;    /* notes attached to it, in the order reported (owned) */
  int nnotes;         /* how many */
  int seq;            /* order reported, so records at one place print in that order */
} DiagRecord;

typedef struct Diag {
  const char *file;   /* the graph file named in every message */
  FILE *out;          /* where diag_flush prints (stderr by default) */
  int nerrors;        /* errors reported so far (printed or not) */
  int nwarnings;      /* warnings reported so far (printed or not) */
  DiagRecord *recs;   /* reported and not yet printed, in the order reported */
  int nrecs;          /* how many */
  int caprecs;        /* how many fit in recs */
  int seq;            /* records reported so far, for DiagRecord.seq */
} Diag;

void diag_init(Diag *d, const char *file, FILE *out);
/* Records an error (or a warning) at line and column (0: none) of the file. */
void diag_error(Diag *d, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void diag_verror(Diag *d, int line, int col, const char *fmt, va_list ap);
void diag_warning(Diag *d, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Records an error at column `col` (1-based, in the decoded text) of a text found at `at`. */
void diag_error_in(Diag *d, const TextOrigin *at, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void diag_verror_in(Diag *d, const TextOrigin *at, int col, const char *fmt, va_list ap);
/* Attaches a note to the record reported last (not yet printed); with none, the note stands alone. */
void diag_note(Diag *d, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* How diag_flush orders records: by line, then column, then the order reported (a pass whose checks
 * run in any order), or as reported (parsing: libxml2's messages come in the order it met them). */
typedef enum DiagOrder { DIAG_BY_PLACE, DIAG_AS_REPORTED } DiagOrder;
/* Prints every pending record in `order`, each followed by its notes, and forgets them. nerrors and
 * nwarnings keep counting. */
void diag_flush(Diag *d, DiagOrder order);

/* "Did you mean" for a misspelt name: the one of `n` candidates close to `name`, or NULL. A candidate
 * is close when it is `name` with letters in another case (the closest there is), or within
 * Damerau-Levenshtein distance of a third of the name's length (at least 1: up to 5 characters 1,
 * up to 8 characters 2, ...; rustc's rule, so 'round' suggests no 'rand'), counting
 * insertions, deletions, substitutions and swaps of adjacent characters, case ignored. When two
 * candidates are equally close, or none is, there is no suggestion (NULL). NULL and empty
 * candidates and ones equal to `name` are skipped; a name of more than 128 characters gets none. Append it to a message with DIAG_HINT_FMT and DIAG_HINT:
 *   diag_error(d, line, 0, "unknown name '%s'" DIAG_HINT_FMT, name, DIAG_HINT(hint));
 * which prints `unknown name 'celsus'; did you mean 'celsius'?` (nothing more without a hint). */
const char *diag_suggest(const char *name, const char *const *candidates, int n);
#define DIAG_HINT_FMT "%s%s%s"
#define DIAG_HINT(hint) (hint) ? "; did you mean '" : "", (hint) ? (hint) : "", (hint) ? "'?" : ""

/* ---- types shared by the transformer and the runtime ---- */

typedef enum Type { TYPE_NONE, TYPE_INT, TYPE_DOUBLE, TYPE_STRING, TYPE_BOOL } Type;
const char *type_name(Type t);               /* "int", "double", "string", "bool", "none" */
/* number.c: the shortest text that strtod reads back to exactly d; see value_format_double
 * (rt/value.h) for the layout. Returns the full length; writes at most cap bytes with the NUL. */
size_t double_format(double d, char *buf, size_t cap);
/* The same text, with every step the fast path takes on trust also done in exact big-integer
 * arithmetic and compared (aborts on a difference): for the tests only, it is much slower. */
size_t double_format_checked(double d, char *buf, size_t cap);
#define SF_DOUBLE_CHARS 32 /* enough for any text of double_format, NUL included */
/* number.c: i in decimal, '-' first when negative, written to buf without a NUL; returns the
 * length (at most SF_INT_CHARS - 1: "-9223372036854775808"). */
size_t int_format(int64_t i, char *buf);
#define SF_INT_CHARS 21 /* enough for any text of int_format, plus a NUL */
Type type_from_name(const char *name);       /* TYPE_NONE when unknown */

/* One value of an attribute, a state variable or an expression. Strings are not owned. */
typedef struct Value {
  Type type; /* which member is meaningful */
  union {
    int64_t i;  /* TYPE_INT */
    double d;   /* TYPE_DOUBLE */
    bool b;     /* TYPE_BOOL */
    struct {
      const char *p; /* bytes, not NUL-terminated necessarily */
      size_t n;      /* length in bytes */
    } s;        /* TYPE_STRING */
  };
} Value;

/* ---- expr.c: the expression language (lexer, parser, type checker, attribute reads) ---- */

typedef enum ExprKind {
  EXPR_INT, EXPR_DOUBLE, EXPR_STRING, EXPR_BOOL, /* literals */
  EXPR_NAME,                                     /* attribute, state variable, seq or i */
  EXPR_UNARY,                                    /* op: '-' or '!' */
  EXPR_BINARY,                                   /* op: one of ExprOp */
  EXPR_COND,                                     /* a ? b : c */
  EXPR_CALL,                                     /* func(args) */
  EXPR_IN,                                       /* a in (args) */
} ExprKind;

typedef enum ExprOp {
  OP_NONE, OP_OR, OP_AND, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_NEG, OP_NOT,
} ExprOp;

typedef enum ExprFunc {
  FUNC_NONE,
  /* the scalar functions, one per line of functions.def */
#define FUNC(ID, name, nargs, args, result, flags) FUNC_##ID,
#include "functions.def"
#undef FUNC
  /* aggregate functions, Aggregate only: every one from FUNC_COUNT on is an aggregate slot */
  FUNC_COUNT, FUNC_SUM, FUNC_AVG, FUNC_AMIN, FUNC_AMAX, FUNC_FIRST, FUNC_LAST,
  FUNC_COUNT_DISTINCT, FUNC_ARG_MAX, FUNC_ARG_MIN, /* arg_max(e, by): args[0] e, args[1] by */
  /* the bounds of the emitted window, in a time window's sets only: numbered as aggregate slots, so
   * the runtime gives them with the aggregate values */
  FUNC_WINDOW_START, FUNC_WINDOW_END,
} ExprFunc;

/* What functions.def's flags column says of a function (its header says more). */
enum {
  FN_SAME = 1,    /* every argument of one type */
  FN_DATEFMT = 2, /* argument 2 is a date format, checked when a literal */
  FN_PATTERN = 4, /* argument 2 is a literal PCRE2 pattern (regex_compile) */
};

typedef enum NameScope {
  NAME_UNRESOLVED, NAME_ATTR, NAME_STATE, NAME_SEQ, NAME_INDEX,
  NAME_SIDE, /* a qualified name P.N: attribute slot of ExprScope.side[Expr.side] */
  NAME_LET,  /* a <let>: slot is its index in the operator's lets (Op.lets) */
} NameScope;

typedef struct Expr Expr;
struct Expr {
  ExprKind kind;   /* what node this is */
  Type type;       /* set by expr_check */
  int col;         /* 1-based column of the node's first character in the expression text */
  int64_t ival;    /* EXPR_INT */
  double dval;     /* EXPR_DOUBLE */
  bool bval;       /* EXPR_BOOL */
  const char *sval;/* EXPR_STRING (unescaped, NUL-terminated) and EXPR_NAME / EXPR_CALL name */
  size_t slen;     /* EXPR_STRING length */
  ExprOp op;       /* EXPR_UNARY, EXPR_BINARY */
  ExprFunc func;   /* EXPR_CALL */
  NameScope scope; /* EXPR_NAME, set by expr_check */
  int slot;        /* EXPR_NAME: attribute or state index; aggregate EXPR_CALL: its index */
  int side;        /* EXPR_NAME of scope NAME_SIDE: which side (0 or 1) slot is an attribute of */
  Expr *a, *b, *c; /* operands: unary a; binary a b; cond a ? b : c */
  Expr **args;     /* EXPR_CALL arguments; EXPR_IN the values of the list */
  int nargs;       /* how many */
  int depth;       /* set by expr_parse: levels of nesting, at most EXPR_MAX_DEPTH (see there) */
};

/* The deepest expression expr_parse accepts: at most this many levels, where a literal or a name
 * is one level and every operator, function call and `?:` one more than its deepest operand (so a
 * chain `k + k + ... + k` has as many levels as terms); a pair of parentheses adds one, except
 * around an operator or `?:` (which expr_format writes in parentheses, so its text parses again).
 * Every recursive pass over expressions (the checker, the printer, rt's compiler and evaluator)
 * relies on it to stay within its stack. */
enum { EXPR_MAX_DEPTH = 1000 };

typedef struct Schema Schema;
typedef struct StateVar StateVar;
typedef struct Let Let;

/* What names an expression may use while being checked. */
typedef struct ExprScope {
  const Schema *input;      /* attributes of the input tuple (NULL: none) */
  StateVar *const *states;  /* state variables of a Functor, visible by name */
  int nstates;              /* how many */
  bool allow_seq;           /* Beacon: `seq` */
  bool allow_index;         /* FlatMap: `i` */
  bool allow_aggregates;    /* Aggregate: count/sum/avg/min/max/first/last/count_distinct/arg_max/arg_min */
  bool allow_window_bounds; /* an Aggregate with a time window: window_start(), window_end() */
  int naggregates;          /* out: aggregate calls numbered 0..naggregates-1 in slot */
  /* Named sides: `P.N` reads attribute N of side[i] when P is side_name[i] (a Join's "left" and
   * "right", a Lookup's "table"); it resolves to NAME_SIDE, Expr.side i, Expr.slot N's index.
   * The evaluators read it from EvalEnv.sides[i][slot]. nsides 0: a qualified name is an error. */
  int nsides;               /* 0, 1 or 2 */
  const char *side_name[2]; /* the prefixes */
  const Schema *side[2];    /* their attributes */
  /* The operator's <let>s visible by name: lets[0..nlets), Let.name (NAME_LET, slot k); the
   * evaluators read EvalEnv.lets[slot]. */
  const Let *lets;
  int nlets;
  int lets_written;         /* lets[nlets..lets_written): written after the expression, so not
                             * visible; an error names one read (0: none) */
} ExprScope;

/* Whether f[0..n) is a format date_format knows (docs/language.md, "Functions": the conversions
 * %Y %m %d %H %M %S %j %% and other bytes as they are). When not, writes what is wrong into msg
 * ("unknown conversion '%q'", "'%' at the end of the format"). sf-xform checks a literal format,
 * the runtime any other. */
bool date_format_check(const char *f, size_t n, char *msg, size_t cap);

/* ---- regex.c: the PCRE2 patterns of regex_match and regex_extract ---- */

typedef struct Regex Regex;
/* The limits of one match: PCRE2's match limit (backtracking steps), depth limit (nested
 * backtracking points) and heap limit (KiB of backtracking memory). Over one, a match faults. */
enum { REGEX_MATCH_LIMIT = 1000000, REGEX_DEPTH_LIMIT = 100000, REGEX_HEAP_LIMIT_KIB = 20480 };
/* Compiles the pattern p[0..n) (PCRE2 syntax, bytes, no UTF), in arena a (NULL: malloc'd, for
 * regex_free). NULL when it does not compile, with PCRE2's message in err and the byte offset in
 * p it points at in *offset. */
Regex *regex_compile(const char *p, size_t n, Arena *a, char *err, size_t errlen, size_t *offset);
void regex_free(Regex *r); /* of one compiled without an arena; NULL is fine */
int regex_groups(const Regex *r); /* how many capture groups it has */
/* The first match of r in s[0..n): 1 with group `group` (0: the whole match; at most
 * regex_groups) at s[*from .. *from + *len), *from SIZE_MAX when the group took no part; 0 when
 * there is none; -1 with the message in err ("match limit exceeded" over a limit). Thread-safe. */
int regex_search(const Regex *r, const char *s, size_t n, int group, size_t *from, size_t *len, char *err,
                 size_t errlen);

/* Parses `text` (an expression found at `at` in the graph file). On a syntax error reports
 * `file:line:col: error: ...` through d and returns NULL; nothing else is allocated outside a. */
Expr *expr_parse(Arena *a, const char *text, Diag *d, const TextOrigin *at);
/* Resolves names and computes types; reports every error found with line and column (through `at`,
 * the origin of the text e was parsed from). Returns the expression's type, or TYPE_NONE after
 * reporting at least one error. */
Type expr_check(Expr *e, ExprScope *scope, Diag *d, const TextOrigin *at);
/* Marks in reads[k] every input attribute k the (checked) expression reads. */
void expr_reads(const Expr *e, bool *reads);
/* True when the checked expression is exactly the input attribute `slot` (a plain name). */
bool expr_is_attr(const Expr *e, int *slot);
/* Writes the expression back as text (canonical spacing), for explain and tests. */
char *expr_format(Arena *a, const Expr *e);

/* ---- graph.c: numbers in parameters and attributes ---- */

/* What reading a number gave. */
typedef enum NumRead { NUM_OK, NUM_MALFORMED, NUM_BELOW, NUM_ABOVE } NumRead;

/* The one reader of the integers a graph holds (parameters, width, channel, ports), in sf-xform's
 * checks and sf-exec's operators alike: text[0..n) must be a decimal integer, an optional '-' then
 * digits and nothing else (no sign '+', no space, no base prefix), within [min, max]. NUM_BELOW
 * or NUM_ABOVE for well-formed digits outside it (however many), never a saturated value. */
NumRead number_read(const char *text, size_t n, int64_t min, int64_t max, int64_t *out);
/* An Aggregate's `window` (docs/language.md, "Aggregate" and "Event time"): count windows of N
 * tuples per key, time windows over the stream's event time, or `running` (no window). */
typedef enum WindowKind { WIN_TUMBLING, WIN_SLIDING, WIN_TUMBLING_TIME, WIN_HOPPING_TIME, WIN_SESSION_TIME, WIN_RUNNING } WindowKind;
typedef struct WindowSpec {
  WindowKind kind;
  int64_t size;  /* count windows: N; tumbling/hopping time: SIZE; session time: GAP; running: 0 */
  int64_t slide; /* hopping time: SLIDE; tumbling time: SIZE; otherwise 0 */
} WindowSpec;
/* Reads "tumbling N", "sliding N", "tumbling time S", "hopping time S L", "session time G" or
 * "running" (spaces, tabs or line breaks between the words, none before or after), every number
 * from 1 to INT64_MAX (number_read). NUM_MALFORMED for another word, a missing or extra one;
 * NUM_BELOW or NUM_ABOVE for a number out of range. *at: the offset in text of the first bad word
 * or number (0 when the text is empty or all of it is wrong). A hopping window whose SLIDE does not
 * divide SIZE reads as NUM_OK: check.c refuses it with its own message. */
NumRead window_parse(const char *text, WindowSpec *w, size_t *at);
/* A Lookup's `on` (docs/language.md, "Lookup"): `table.C = ATTR` pairs joined by the word `and`,
 * blanks (spaces, tabs, line breaks) optional around `=` and needed around `and`. */
typedef struct LookupOn {
  const char *column; /* C: an attribute of the table's schema */
  const char *attr;   /* ATTR: an attribute of the input */
} LookupOn;
/* Reads text into *on (allocated in a): the number of pairs (at least 1), or -1 when it is not of
 * that form, with *at the offset in text of the first character that is wrong. */
int lookup_on_parse(Arena *a, const char *text, LookupOn **on, size_t *at);

/* Whether windows of kind k are over event time: they close at ticks and need a stream with one. */
static inline bool window_is_time(WindowKind k) {
  return k == WIN_TUMBLING_TIME || k == WIN_HOPPING_TIME || k == WIN_SESSION_TIME;
}

/* ---- graph.c: the in-memory graph ---- */

typedef struct Attr {
  const char *name; /* attribute name */
  Type type;        /* its type */
  int line;         /* where declared */
} Attr;

struct Schema {
  const char *name; /* schema name */
  Attr *attrs;      /* attributes in order */
  int nattrs;       /* how many */
  int line;         /* where declared */
};

typedef struct Host {
  const char *name;    /* host name */
  const char *address; /* host:port */
  int line;            /* where declared (0: generated) */
} Host;

/* The operator kinds, from kinds.def: KIND_BEACON, KIND_FILESOURCE, ... (KIND_UNKNOWN: a name
 * that is none of them). */
typedef enum OpKind {
  KIND_UNKNOWN,
#define KIND(id, ...) KIND_##id,
#include "kinds.def"
#undef KIND
  KIND_COUNT_
} OpKind;
const char *kind_name(OpKind k);
OpKind kind_from_name(const char *name);
/* The kind name a misspelt `name` is close to (diag_suggest), or NULL. */
const char *kind_suggest(const char *name);

typedef enum StateKind { STATE_NONE, STATE_PARTITIONED, STATE_UNKNOWN } StateKind;
typedef enum Selectivity { SEL_NONE, SEL_ONE, SEL_ATMOSTONE, SEL_MANY } Selectivity;
typedef enum PunctKind { PUNCT_NONE, PUNCT_GENERATES, PUNCT_CONSUMES } PunctKind;
typedef enum FinalKind { FINAL_NONE, FINAL_EMITS } FinalKind; /* what the op does on the final punctuation */

/* What a kind's row of kinds.def says (see there for the columns); kind_info(k) reads it. */
enum { MANY = -1 };                      /* a port count without bound */
enum { KIND_MAX_PARAMS = 10 }; /* required or optional parameters of one kind, at most */
enum { TAKES_SETS = 1, TAKES_STATES = 2, SAME_SCHEMA = 4, ANY_PARAMS = 8, TAKES_LETS = 16 };
typedef enum KeyedBy { KEYED_NO, KEYED_YES, KEYED_WITH_STATE } KeyedBy;
typedef enum ForwardsRule { FORWARDS_NONE, FORWARDS_ALL, FORWARDS_SETS, FORWARDS_KEYS } ForwardsRule;
typedef struct KindInfo {
  const char *name;            /* as written in kind="..." */
  int min_in, max_in;          /* input ports (MANY: unbounded) */
  int min_out, max_out;        /* output ports */
  const char *required[KIND_MAX_PARAMS]; /* parameters that must be given */
  const char *optional[KIND_MAX_PARAMS]; /* parameters that may be given */
  bool any_params;             /* Custom: parameters go to the library unchecked */
  bool sets;                   /* takes <set> */
  bool states;                 /* takes <state> */
  bool lets;                   /* takes <let> */
  bool same_schema;            /* output schema is the input schema */
  bool model_declared;         /* the model comes from <model>, not from the columns below */
  Selectivity sel;             /* the inferred model: selectivity before parameters refine it */
  KeyedBy keyed;               /* partitioned on partitionBy: never, always, when it has state */
  ForwardsRule forwards;       /* which attributes it forwards unchanged */
} KindInfo;
/* The row of k (KIND_UNKNOWN's and out-of-range kinds': a kind with no ports, no name "unknown"). */
const KindInfo *kind_info(OpKind k);

typedef struct Op Op;
typedef struct Stream Stream;

struct Stream {
  const char *name;     /* unique in the graph */
  Schema *schema;       /* tuple type */
  Op *producer;         /* the one operator writing it */
  int port;             /* which output port of the producer */
  PtrVec consumers;     /* Op* reading it (an Op appears once per input port naming it) */
  int line;             /* where declared (the <output>) */
  /* event time (time.c), valid once graph_time ran (Graph.timed): */
  int time_slot;        /* index in schema of its event-time attribute, -1: none */
  const Op *time_lost_by;  /* time_slot -1: the operator upstream that dropped the time attribute
                              (NULL: no source upstream declares `time`) */
  const char *time_lost_attr; /* the attribute it dropped */
};

typedef struct Input {
  const char **names;   /* stream names as written */
  Stream **streams;     /* resolved by check (NULL where unknown) */
  int nstreams;         /* how many (>1: fan-in) */
  bool time_order;      /* order="time": merged by event time, not by position alone */
  int line;             /* where written */
} Input;

typedef struct Output {
  const char *stream;   /* stream name */
  const char *schema;   /* schema name */
  Stream *resolved;     /* filled by graph_link */
  int line;             /* where written */
} Output;

typedef struct Param {
  const char *name;     /* parameter name */
  const char *text;     /* its text, whitespace-trimmed */
  int line;             /* where written */
  TextOrigin origin;    /* where the text starts in the file */
} Param;

typedef struct Set {
  const char *attr;     /* output attribute assigned */
  const char *text;     /* expression text */
  Expr *expr;           /* parsed and checked */
  int slot;             /* output attribute index */
  int states_before;    /* <state>s written before it: it sees their updates, not the later ones' */
  int lets_before;      /* <let>s written before it: the ones it may read */
  int line;             /* where written */
  TextOrigin origin;    /* where the text starts in the file */
} Set;

struct StateVar {
  const char *name;     /* variable name */
  Type type;            /* declared type */
  const char *init_text;/* init expression text */
  const char *text;     /* update expression text */
  Expr *init;           /* parsed init */
  Expr *update;         /* parsed update */
  int lets_before;      /* <let>s written before it: the ones its update may read */
  int line;             /* where written */
  TextOrigin origin;    /* where the update text starts in the file */
};

/* A <let name="N" type="T">expression</let>: a value computed per input tuple, in document order
 * with the sets and states (docs/language.md, "let"). */
struct Let {
  const char *name;     /* its name */
  Type type;            /* declared type */
  const char *text;     /* expression text */
  Expr *expr;           /* parsed and checked */
  int states_before;    /* <state>s written before it: it sees their updates, and runs before the later ones' */
  int sets_before;      /* <set>s written before it (document order, for the emitter) */
  int line;             /* where written */
  TextOrigin origin;    /* where the text starts in the file */
};

/* The behaviour the transformer reasons with (declared by <model> or derived by analyze). */
typedef struct Model {
  bool declared;        /* a <model> element was present (Custom) */
  StateKind state;      /* none, partitioned, unknown */
  const char **keys;    /* partition key attribute names */
  int nkeys;            /* how many */
  Selectivity sel;      /* one, atmostone, many (SEL_NONE: source or sink) */
  const char **forwards;/* attributes forwarded unchanged (input and output, same name and type) */
  int nforwards;        /* how many */
  bool forwards_all;    /* `*`: every attribute of the output */
  PunctKind punct;      /* punctuation behaviour */
  FinalKind final;      /* final="emits": may emit tuples when the final punctuation arrives */
  bool emits_on_tick;   /* emits when a tick arrives (a time-window Aggregate), not per input tuple */
  bool is_source;       /* no input port */
  bool is_sink;         /* no output port */
  int line;             /* where the <model> was written */
} Model;

struct Op {
  const char *name;     /* unique operator name */
  const char *kind_text;/* kind as written */
  OpKind kind;          /* parsed kind */
  int line;             /* where the <operator> starts */
  bool parallel_no;     /* parallel="no" */
  int width;            /* width attribute (0: none) */
  const char *host;     /* host attribute (NULL: none) */
  const char *replica_pin;/* rewritten replicas: the host pin of the operator they replicate, which
                           channels spread over the hosts cannot honour; place warns (NULL: none) */
  const char *colocate; /* colocate tag (NULL: none) */
  const char *origin;   /* rewritten graphs: the original operator */
  const char *region;   /* rewritten graphs: region id */
  int channel;          /* rewritten graphs: channel, -1 when none */
  Input *inputs;        /* input ports */
  int ninputs;
  Output *outputs;      /* output ports */
  int noutputs;
  Param *params;        /* parameters in document order */
  int nparams;
  Set *sets;            /* set children */
  int nsets;
  StateVar **states;    /* state children */
  int nstates;
  Let *lets;            /* let children, in document order */
  int nlets;
  Model model;          /* declared (<model>) then completed by analyze */
  const char *lib_path; /* <library path> */
  const char *lib_symbol;/* <library symbol> */
  int lib_line;         /* where <library> was written */
  Expr *where;          /* parsed `where` param (Functor, Filter) */
  Expr *count_expr;     /* parsed `count` param (FlatMap) */
  Expr *key_expr;       /* parsed `key` param (KafkaSink) */
  const char *why_serial;/* transformer: why it was not parallelized (NULL: it was, or not asked) */
  int index;            /* position in graph->ops */
  int topo;             /* position in topological order (check) */
  void *pass;           /* scratch pointer owned by whichever pass is running */
};

typedef struct Graph {
  Arena *arena;         /* owns everything below */
  const char *file;     /* file it was read from (for diagnostics) */
  const char *name;     /* graph name */
  Schema **schemas;     /* in document order */
  int nschemas;
  Host **hosts;
  int nhosts;
  Op **ops;             /* in document order */
  int nops;
  PtrVec streams;       /* Stream*, in declaration order; filled by graph_link */
  Op **order;           /* operators in topological order (ties: document order); filled by check */
  bool rewritten;       /* some operator carries a region attribute */
  bool analyzed;        /* graph_analyze ran: the models are complete */
  bool timed;           /* graph_time ran: every stream's time_slot is set */
  struct GraphIndex *index; /* the graph_find_* tables (graph.c), rebuilt when an array changes */
} Graph;

/* A Graph is made by graph_new only (its lookup tables come with it) and dies with graph_free. */
Graph *graph_new(const char *file);
void graph_free(Graph *g);
/* The first schema, host or operator with that name in its array, NULL when none (or name is
 * NULL). Constant time: each array is indexed on first use and again whenever the array or its
 * count changed since; renaming an element in place is not seen. Not for several threads at once. */
Schema *graph_find_schema(const Graph *g, const char *name);
Host *graph_find_host(const Graph *g, const char *name);
Op *graph_find_op(const Graph *g, const char *name);
/* The stream of that name declared by the last graph_link, NULL when none. */
Stream *graph_find_stream(const Graph *g, const char *name);
int schema_find_attr(const Schema *s, const char *name);   /* index or -1 */
/* The "did you mean" (diag_suggest) for a name that is not found: among the graph's schemas, the
 * streams its operators' outputs declare, a schema's attributes, or `hosts` (with none, the
 * default host SF_DEFAULT_HOST_NAME); NULL when no candidate is close. */
const char *graph_suggest_schema(const Graph *g, const char *name);
const char *graph_suggest_stream(const Graph *g, const char *name);
const char *schema_suggest_attr(const Schema *s, const char *name);
const char *hosts_suggest(Host *const *hosts, int nhosts, const char *name);
const char *op_param(const Op *op, const char *name);      /* text or NULL */
const Param *op_find_param(const Op *op, const char *name);
/* Builds graph->streams and each stream's producer/consumers from the ops' ports; reports
 * doubly produced streams and unknown schemas/streams through d. Returns the number of errors. */
int graph_link(Graph *g, Diag *d);
/* The input schema of the op's first input port, NULL when none or unresolved. */
Schema *op_input_schema(const Op *op);
/* Splits a list of names separated by spaces and/or commas (partitionBy, keys). */
const char **names_split(Arena *a, const char *text, int *count);
Schema *op_output_schema(const Op *op);

/* ---- parse.c: read an XML file safely (no network, no entities), validate against the XSD,
 * build a Graph. Returns NULL after reporting through d. ---- */
Graph *graph_parse_file(const char *path, const char *xsd_path, Diag *d);
Graph *graph_parse_memory(const char *text, size_t len, const char *name, const char *xsd_path, Diag *d);
/* Where graph.xsd is: $SF_SCHEMA, else ../share/streamfission/graph.xsd beside the executable. */
const char *sf_schema_path(void);

/* ---- xmlerr.c: libxml2's error messages reworded for users; its functions take libxml2's types,
 * so they are declared in xmlerr.h, which only parse.c includes. ---- */

/* ---- check.c: semantic checks XSD cannot do, everything sf-exec would refuse at start-up that
 * depends only on the graph. Returns the number of errors reported. A host pin is checked against
 * the graph's <host> elements when it has some; without them the hosts come from elsewhere (sf-xform
 * --hosts), and graph_check_pins checks the pins once they are known. ---- */
int graph_check(Graph *g, Diag *d);
/* Checks that every operator's host pin names one of `hosts` (nhosts 0: only the default host
 * SF_DEFAULT_HOST_NAME, which placement adds then). Returns the number of errors reported. */
int graph_check_pins(Graph *g, Host *const *hosts, int nhosts, Diag *d);

/* ---- analyze.c: completes every operator's Model from its kind, parameters and expressions
 * (Custom: from <model>; without one: unknown state, selectivity many, forwards nothing). ---- */
void graph_analyze(Graph *g);
/* True when the op forwards attribute `name` unchanged (per its completed model). */
bool model_forwards(const Op *op, const char *name);

/* ---- time.c: event time (docs/language.md, "Event time"), computed from the graph: input graphs
 * and rewritten ones alike (Split and Merge forward every attribute, replicas keep their params).
 * It reads the models, so it runs graph_analyze first when that has not run. ---- */

/* The event-time attribute of stream s: its index in s->schema, or -1 when it has none.
   A source with param `time` declares it; an operator forwarding it unchanged (its model's forwards) keeps it;
   an Aggregate with a time window: the first output attribute (schema order) set to exactly window_end();
   a fan-in: the inputs' (which must agree). */
int stream_time_slot(const Graph *g, const Stream *s);
/* Whether op is an Aggregate with a time window (tumbling, hopping, session time), which emits at
 * ticks; its window in *w. False for count windows, running, another kind, an unreadable text. */
bool op_time_window(const Op *op, WindowSpec *w);
/* The tick period P of a source that declares `time`: its `tick` param, else the gcd of the sizes, slides and gaps
   of the time windows downstream of it (1 if none). */
int64_t source_tick(const Graph *g, const Op *src);
/* Whether source_tick(g, src) comes from the source's `tick` parameter rather than the windows. */
bool source_tick_given(const Op *src);
/* Sets every stream's time_slot (once; stream_time_slot calls it on demand). With d, reports what
 * event time makes impossible: a time-window Aggregate or an order="time" input without event time,
 * a fan-in of streams with different time attributes. Needs linked streams without cycles and
 * checked expressions. Returns the number of errors reported. */
int graph_time(Graph *g, Diag *d);

/* ---- join.c: the Join operator (docs/language.md, "Joins") ---- */

/* A Join's parameters, read from a checked operator. */
typedef struct JoinSpec {
  int nkeys;         /* pairs of `on` */
  int *key[2];       /* per side (0 left, 1 right): each pair's attribute index in that side's schema */
  bool tumbling;     /* window `tumbling time SIZE` (else `interval LOWER UPPER`) */
  int64_t lower, upper; /* interval: a right tuple r matches a left l when r.time - l.time is in [lower, upper] */
  int64_t size;      /* tumbling: the window's size */
  int64_t lateness;  /* `lateness` (0 when absent) */
} JoinSpec;
/* The schema of a Join's side (0 left, 1 right), NULL when unknown. */
const Schema *join_side_schema(const Op *op, int side);
/* Reads op's `on`, `window` and `lateness` into *j (arrays in a): 0, or -1 after reporting through d
 * (NULL: silent) what is wrong. */
int join_spec(const Op *op, Arena *a, JoinSpec *j, Diag *d);
/* How far a Join's output clock lags its input's: lateness + max(0, upper, -lower) (tumbling:
 * lateness + size). A tick T leaves it as T minus this. */
int64_t join_tick_delay(const JoinSpec *j);
/* The side output attribute a of out is forwarded from when not set: 0 or 1 (its index in that
 * side's schema in *from, when not NULL), -1 when neither side has it with its name and type, -2
 * when both do. */
int join_forward_side(const Op *op, const Schema *out, int a, int *from);
/* Checks a Join's `where` and `set`s in scope (its two sides `left` and `right`, and its lets,
 * checked before), and that every output attribute not set is forwarded from exactly one side. */
void check_join(Graph *g, Op *op, Diag *d, ExprScope *scope);

/* ---- regions.c: safety and greedy region formation ---- */

typedef enum SplitStrategy { SPLIT_ROUNDROBIN, SPLIT_HASH } SplitStrategy;
typedef enum MergeOrder { MERGE_ROUNDROBIN, MERGE_SEQ, MERGE_SEQPULSE } MergeOrder;

/* ---- cost.c: the cost model (docs/design.md, "Cost model") ---- */

/* A region's stages in ns per tuple entering it: up, the serial operators before it in the thread
 * that runs its Split (its source included, or the Merge of the region before it); split, work (its
 * operators), channel (a channel's own hand-off), merge; down, the serial operators after it in the
 * Merge's thread (and the Split of a region after it). cores bounds the threads that run at once (0:
 * no bound). up_what, down_what: the dearest part of up and down ("the source 'jobs'", "the serial
 * operator 'x'", "the Merge of r1", "the Split of r2"). */
typedef struct RegionCost {
  double up, split, work, channel, merge, down;
  int cores;
  const char *up_what, *down_what;
} RegionCost;

/* What sets the pace of a region at some width. */
typedef enum CostBound {
  BOUND_SERIAL, BOUND_CHANNELS, BOUND_SPLIT, BOUND_UPSTREAM, BOUND_MERGE, BOUND_DOWNSTREAM, BOUND_CORES
} CostBound;

/* The defaults for what a profile does not measure, ns per tuple (cost.c says where they come from). */
extern const double COST_SPLIT_NS, COST_MERGE_NS, COST_CHANNEL_NS;
/* A width must be predicted this much faster than serial to be chosen (1.2: 20 % faster: repeated
 * profiles on a loaded machine differ by about as much), and each
 * channel above 2 must cut the time per tuple by COST_STEP_GAIN (2 %). */
#define COST_MIN_SPEEDUP 1.2
#define COST_STEP_GAIN 0.02

/* The estimated ns per tuple of an operator of this kind and parameters, without a profile. */
double cost_kind_estimate(const Op *op);
/* The time per tuple of the region at width w (w 1: not parallelized) and what bounds it. */
double cost_period(const RegionCost *c, int w, CostBound *bound);
/* cost_period(c, 1) / cost_period(c, w). */
double cost_speedup(const RegionCost *c, int w);
/* The width to choose, from 1 to max: the smallest width at which more channels stop paying, or
 * 1 when no width up to max is COST_MIN_SPEEDUP times faster than serial. */
int cost_width(const RegionCost *c, int max);
/* "the Merge", "its channels", "the source 'jobs' upstream", ... */
const char *cost_bound_text(Arena *a, const RegionCost *c, CostBound b);

/* A profile (sf-xform --profile): what sf-exec --stats-json measured, per operator of the graph it
 * ran (a replica, "burn[0]", counted with its origin "burn"; a region's entry Split and exit Merge
 * also as "split of FIRST" and "merge of LAST", FIRST and LAST the region's end operators). */
typedef struct ProfileOp {
  const char *name;     /* operator name, replica suffix removed */
  double cpu_ns;        /* CPU time of its own callbacks, over the run */
  double in, out;       /* tuples in and out */
} ProfileOp;
typedef struct Profile {
  const char *file;     /* where it was read from */
  int cores;            /* usable cores of the machine it was measured on */
  ProfileOp *ops;
  int nops;
} Profile;
/* The operator of that name in the profile, NULL when it has none. */
const ProfileOp *profile_find(const Profile *p, const char *name);

typedef struct Region Region;
struct Region {
  int id;               /* N of "rN", 1-based in topological order */
  PtrVec ops;           /* Op* of the input graph, in flow order (a chain) */
  const char **keys;    /* region key: the attributes common to its partitioned operators' keys
                           (nkeys 0: no partitioned operator, stateless) */
  int nkeys;
  int last_keyed;       /* index in ops of its last partitioned operator (-1: none); every operator
                           before it forwards every key attribute */
  int width;            /* number of channels */
  const char *width_by; /* operator whose width attribute set the width (NULL: the global width) */
  const char *width_why;/* when width attributes disagree: which asked for what, e.g. "the smallest of
                           'a' 3 and 'b' 2" (NULL otherwise) */
  SplitStrategy split;  /* how the entry distributes tuples */
  MergeOrder merge;     /* how the exit restores order */
  Region *from;         /* upstream region joined to this one by a shuffle (NULL: entry Split) */
  Region *to;           /* downstream region this one shuffles into (NULL: exit Merge) */
  bool width_profile;   /* --profile chose its width */
  RegionCost cost;      /* what its stages cost, ns per tuple (cost.c) */
  bool measured;        /* cost holds measured figures (--profile), not the kind estimates */
  const char *unmeasured;/* with --profile, an operator of it the profile lacks (NULL: none) */
};

typedef struct Fission {
  Graph *g;             /* the analyzed input graph */
  int width;            /* requested width (--width or the default) */
  PtrVec regions;       /* Region*, by id */
  Region **region_of;   /* per op index: its region or NULL */
  const char **why;     /* per op index: why it was not parallelized (NULL when it was) */
  const char **note;    /* per op index: why it starts a new region instead of joining one */
  int pulse;            /* pulse period for seqpulse regions */
  const Profile *profile;/* --profile (NULL: none) */
  int *cap;             /* per op index: the width the profile chose for its region (0: none) */
} Fission;

/* Decides the parallel regions of g (analyzed) at the given width. Never fails: what cannot be
 * parallelized gets a reason in why[]. Every region gets its cost (the kind estimates). */
Fission *fission_regions(Graph *g, int width);
/* The same with a profile (NULL: none): each region whose operators it measured gets the width the
 * cost model chooses, at most its width by today's rules and at most max (the cores of one host or
 * the hosts), and is not parallelized when no width pays (its operators say why). cores bounds the
 * threads that run at once in every region's estimate (0: no bound). */
Fission *fission_regions_profiled(Graph *g, int width, const Profile *p, int max, int cores);

/* ---- rewrite.c: builds the parallel graph (a new Graph; the input is not touched) ---- */
Graph *fission_rewrite(const Fission *f);

/* ---- place.c: hosts and the host attribute of every operator ---- */
/* The one host a graph runs on when neither the graph nor --hosts names any. */
#define SF_DEFAULT_HOST_NAME "local"
#define SF_DEFAULT_HOST_ADDRESS "127.0.0.1:7470"
/* Parses --hosts SPEC (`name=addr:port,...` or `@FILE`) into g's arena; on error writes a message
 * to err and returns -1. */
int hosts_parse(Graph *g, const char *spec, Host ***hosts, int *nhosts, char *err, size_t errlen);
/* Gives every operator of the rewritten graph a host (channels round-robin, Split with its upstream,
 * Merge with its downstream, others on the first host unless pinned; operators sharing a colocate
 * tag on one host, the first pin among them applying to all). Warns through d about each replicated
 * operator whose pin cannot hold. Returns the number of errors. */
int graph_place(Graph *g, Diag *d);

/* ---- explain.c: per operator of the input graph on `out`, the decision and its model, one line each ---- */
void fission_explain(const Fission *f, FILE *out);

/* ---- writer.c: text into a stdio stream through a buffer of its own, for the outputs of hundreds
 * of megabytes (emit.c, dot.c): no printf or stdio call per piece. The first failed write is kept
 * and everything after it dropped; wr_close says. ---- */
typedef struct Writer {
  FILE *out;         /* where the bytes go */
  int err;           /* errno of the first failed write (0: none) */
  size_t len;        /* bytes waiting in buf */
  char buf[1 << 20]; /* bytes not yet handed to out: as much as sf-xform's stdio buffer, which
                      * then passes a full one straight to write(2) instead of copying it */
} Writer;

Writer *wr_open(FILE *out);
void wr_flush(Writer *w);
void wr_fmt(Writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wr_int(Writer *w, long v);
/* Flushes and frees w, then flushes out. Returns 0, or -1 with errno set when a write failed. */
int wr_close(Writer *w);

static inline void wr_put(Writer *w, const char *s, size_t n) {
  if (w->len + n > sizeof w->buf) {
    wr_flush(w);
    if (n > sizeof w->buf) {
      if (!w->err && fwrite(s, 1, n, w->out) != n) w->err = errno ? errno : EIO;
      return;
    }
  }
  memcpy(w->buf + w->len, s, n);
  w->len += n;
}

static inline void wr_str(Writer *w, const char *s) {
  wr_put(w, s, strlen(s));
}

static inline void wr_char(Writer *w, char c) {
  if (w->len == sizeof w->buf) wr_flush(w);
  w->buf[w->len++] = c;
}

/* ---- emit.c: a Graph as XML in the graph language (xmlTextWriter's layout). Deterministic: the same
 * graph gives the same bytes. Returns 0, or -1 with errno set when writing failed. ---- */
int graph_emit_xml(const Graph *g, FILE *out);

/* ---- dot.c: Graphviz pictures. graph_dot_input draws any graph (operators labelled with name and
 * kind, edges with stream names); graph_dot_parallel draws a rewritten graph with regions as
 * clusters, channels side by side, Split/Merge in their own shapes, hosts by colour and operators
 * that were not parallelized (why_serial set; sources and sinks, never parallel, are not marked)
 * marked. Return 0, or -1 when writing failed. ---- */
int graph_dot_input(const Graph *g, FILE *out);
int graph_dot_parallel(const Graph *g, FILE *out);

#endif
