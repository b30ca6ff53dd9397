/* expr.c: the expression language of docs/language.md ("Expressions"): a hand-written lexer, a
 * precedence-climbing parser, the type checker that resolves names against an ExprScope, and the
 * canonical printer. Evaluation lives in the runtime (rt/eval.c).
 *
 * Assumptions and decisions the format leaves open:
 *  - Columns are 1-based byte offsets into the expression text as given (a newline inside the text
 *    counts as one byte); diagnostics turn them into the file's line and column through the
 *    TextOrigin the caller passes (diag_error_in).
 *  - A syntax error is reported once, at the first problem, and expr_parse returns NULL.
 *  - Unary minus directly in front of a number literal is folded into the literal, so `-3` is
 *    EXPR_INT -3 and `-9223372036854775808` is expressible. Integer literals are decimal; leading
 *    zeros are allowed and do not mean octal. A double literal needs digits before the `.` (`.5`
 *    is an error, `3.` is 3.0); a literal that overflows to infinity is an error.
 *  - String literals may not contain a raw line break; escapes are `\"`, `\\` and `\n` only.
 *  - Names resolve attribute first, then state variable, then let (the last of equal names, though
 *    check.c refuses those), then `seq` (Beacon) and `i` (FlatMap):
 *    an input attribute named `seq` hides the Beacon counter.
 *  - `P.N` (a name, a dot and a name, no space) is one token, a qualified name; the checker
 *    resolves it against the scope's named sides (ExprScope.nsides), an error where there are none.
 *    A number never starts a name, so `1.5` stays a double.
 *  - Binary operators are left-associative (`a == b == c` is `(a == b) == c`); `?:` is
 *    right-associative and its middle operand is a full expression.
 *  - `x in (a, b, ...)` binds as `==` does (`x in (1) == b` is `(x in (1)) == b`). `in` is not a
 *    keyword: after an operand it is the operator, anywhere else a name (an attribute `in` is
 *    fine). Its list holds one value or more, each a full expression.
 *  - For EXPR_BINARY, EXPR_COND and EXPR_IN nodes, `slot` holds the column of the operator (`?` for
 *    EXPR_COND, `in` for EXPR_IN); `col` stays the column of the node's first character. Type errors about an
 *    operator point at the operator.
 *  - Aggregate calls get slots in the order the checker meets them (text order, left to right).
 *  - An expression deeper than EXPR_MAX_DEPTH levels (sf.h says how they count) is an error
 *    rather than a stack overflow in a later pass: the parser computes every node's depth as it
 *    builds it and reports the first node past the limit (at its operator). Its own recursion is
 *    bounded too, before any node exists (200,000 `(`): one level of the tree costs it at most two
 *    recursions (a parenthesis and an operand), so more than 2 * EXPR_MAX_DEPTH + 1 of them means
 *    the tree would be too deep as well. */
#include "sf.h"

#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* ---- lexer ---- */

typedef enum TokKind {
  T_EOF, T_INT, T_DOUBLE, T_STRING, T_NAME, T_TRUE, T_FALSE,
  T_LPAREN, T_RPAREN, T_COMMA, T_QUEST, T_COLON,
  T_OR, T_AND, T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE,
  T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT, T_BANG,
} TokKind;

typedef struct Token {
  TokKind kind;      /* what was read */
  const char *start; /* first byte in the text */
  size_t len;        /* bytes in the text */
  int col;           /* 1-based column of start */
  uint64_t uval;     /* T_INT: magnitude (may be 2^63, valid only after unary minus) */
  bool too_big;      /* T_INT: magnitude above 2^63 */
  double dval;       /* T_DOUBLE */
  char *sval;        /* T_STRING: unescaped bytes, NUL-terminated, in the arena */
  size_t slen;       /* T_STRING: length */
} Token;

typedef struct Parser {
  Arena *a;          /* where nodes go */
  const char *text;  /* the expression */
  const char *p;     /* next byte to lex */
  const char *end;   /* end of the text without trailing whitespace */
  Diag *d;           /* where the syntax error goes */
  const TextOrigin *at; /* where the text is in the file */
  Token tok;         /* the current token */
  int depth;         /* recursion depth */
  const Expr *paren; /* the node the last parenthesized primary returned */
  jmp_buf fail;      /* where a syntax error returns to */
} Parser;

static _Noreturn void parse_fail(Parser *ps, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static _Noreturn void parse_fail(Parser *ps, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_verror_in(ps->d, ps->at, col, fmt, ap);
  va_end(ap);
  longjmp(ps->fail, 1);
}

static int col_of(const Parser *ps, const char *at) {
  return (int)(at - ps->text) + 1;
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_ident(char c) { return is_ident_start(c) || is_digit(c); }

/* Lexes a number at ps->p into t. */
static void lex_number(Parser *ps, Token *t) {
  const char *s = ps->p, *q = s;
  bool is_double = false, bad = false;
  while (is_digit(*q)) q++;
  if (*q == '.') {
    is_double = true;
    q++;
    while (is_digit(*q)) q++;
  }
  if (*q == 'e' || *q == 'E') {
    is_double = true;
    q++;
    if (*q == '+' || *q == '-') q++;
    if (!is_digit(*q)) bad = true;
    while (is_digit(*q)) q++;
  }
  if (is_ident(*q) || *q == '.') bad = true;
  if (bad) {
    while (is_ident(*q) || *q == '.' || ((*q == '+' || *q == '-') && (q[-1] == 'e' || q[-1] == 'E')))
      q++;
    parse_fail(ps, col_of(ps, s), "invalid number '%.*s'", (int)(q - s), s);
  }
  t->start = s;
  t->len = (size_t)(q - s);
  t->col = col_of(ps, s);
  if (is_double) {
    char *copy = arena_strndup(ps->a, s, t->len);
    t->kind = T_DOUBLE;
    t->dval = strtod(copy, NULL);
    if (isinf(t->dval)) parse_fail(ps, t->col, "double literal '%s' out of range", copy);
  } else {
    uint64_t v = 0;
    bool big = false;
    const uint64_t limit = UINT64_C(1) << 63;
    for (const char *c = s; c < q; c++) {
      unsigned dgt = (unsigned)(*c - '0');
      if (big || v > (limit - dgt) / 10) big = true;
      else v = v * 10 + dgt;
    }
    t->kind = T_INT;
    t->uval = v;
    t->too_big = big;
  }
  ps->p = q;
}

static void lex_string(Parser *ps, Token *t) {
  const char *s = ps->p, *q = s + 1;
  size_t n = 0;
  /* first pass: validate and measure */
  for (;;) {
    if (*q == 0 || *q == '\n' || *q == '\r') parse_fail(ps, col_of(ps, s), "unterminated string");
    if (*q == '"') break;
    if (*q == '\\') {
      char e = q[1];
      if (e == 0) parse_fail(ps, col_of(ps, s), "unterminated string");
      if (e != '"' && e != '\\' && e != 'n') {
        if (e > ' ' && e < 127)
          parse_fail(ps, col_of(ps, q), "unknown escape '\\%c' in string", e);
        parse_fail(ps, col_of(ps, q), "unknown escape in string (byte 0x%02x after '\\')",
                   (unsigned char)e);
      }
      q += 2;
    } else {
      q++;
    }
    n++;
  }
  char *out = arena_alloc(ps->a, n + 1), *o = out;
  for (const char *c = s + 1; c < q; c++) {
    if (*c == '\\') {
      c++;
      *o++ = *c == 'n' ? '\n' : *c;
    } else {
      *o++ = *c;
    }
  }
  t->kind = T_STRING;
  t->start = s;
  t->len = (size_t)(q + 1 - s);
  t->col = col_of(ps, s);
  t->sval = out;
  t->slen = n;
  ps->p = q + 1;
}

/* Reads the next token into ps->tok. */
static void lex(Parser *ps) {
  Token *t = &ps->tok;
  memset(t, 0, sizeof *t);
  while (is_space(*ps->p)) ps->p++;
  const char *s = ps->p;
  t->start = s;
  t->col = col_of(ps, s);
  if (*s == 0) {
    t->kind = T_EOF;
    t->col = col_of(ps, ps->end);
    return;
  }
  if (is_digit(*s)) {
    lex_number(ps, t);
    return;
  }
  if (*s == '"') {
    lex_string(ps, t);
    return;
  }
  if (is_ident_start(*s)) {
    const char *q = s;
    while (is_ident(*q)) q++;
    if (*q == '.' && is_ident_start(q[1])) { /* a qualified name P.N: one token, resolved by the checker */
      q++;
      while (is_ident(*q)) q++;
    }
    t->len = (size_t)(q - s);
    ps->p = q;
    if (t->len == 4 && !memcmp(s, "true", 4)) t->kind = T_TRUE;
    else if (t->len == 5 && !memcmp(s, "false", 5)) t->kind = T_FALSE;
    else t->kind = T_NAME;
    return;
  }
  static const struct { const char *text; TokKind kind; } puncts[] = {
    {"||", T_OR}, {"&&", T_AND}, {"==", T_EQ}, {"!=", T_NE}, {"<=", T_LE}, {">=", T_GE},
    {"(", T_LPAREN}, {")", T_RPAREN}, {",", T_COMMA}, {"?", T_QUEST}, {":", T_COLON},
    {"<", T_LT}, {">", T_GT}, {"+", T_PLUS}, {"-", T_MINUS}, {"*", T_STAR}, {"/", T_SLASH},
    {"%", T_PERCENT}, {"!", T_BANG},
  };
  for (size_t k = 0; k < sizeof puncts / sizeof puncts[0]; k++) {
    size_t n = strlen(puncts[k].text);
    if (!strncmp(s, puncts[k].text, n)) {
      t->kind = puncts[k].kind;
      t->len = n;
      ps->p = s + n;
      return;
    }
  }
  if ((unsigned char)*s >= 0x80 || (unsigned char)*s < 0x20)
    parse_fail(ps, t->col, "unexpected byte 0x%02x", (unsigned char)*s);
  parse_fail(ps, t->col, "unexpected '%c'", *s);
}

/* ---- parser ---- */

static _Noreturn void unexpected(Parser *ps) {
  const Token *t = &ps->tok;
  if (t->kind == T_EOF) parse_fail(ps, t->col, "unexpected end of expression");
  parse_fail(ps, t->col, "unexpected '%.*s'", (int)t->len, t->start);
}

static void expect(Parser *ps, TokKind kind, const char *what) {
  if (ps->tok.kind != kind) parse_fail(ps, ps->tok.col, "%s", what);
  lex(ps);
}

static Expr *new_expr(Parser *ps, ExprKind kind, int col) {
  Expr *e = arena_alloc(ps->a, sizeof *e);
  e->kind = kind;
  e->col = col;
  e->depth = 1;
  return e;
}

static _Noreturn void too_deep(Parser *ps, int col) {
  parse_fail(ps, col, "expression too deep (more than %d nested operators, calls or parentheses)",
             EXPR_MAX_DEPTH);
}

static void enter(Parser *ps) {
  if (++ps->depth > 2 * EXPR_MAX_DEPTH + 1) too_deep(ps, ps->tok.col);
}

/* Sets e's depth, one more than its deepest operand's; a depth past the limit fails at col. */
static void set_depth(Parser *ps, Expr *e, int col) {
  int d = 0;
  const Expr *kids[3] = {e->a, e->b, e->c};
  for (int k = 0; k < 3; k++)
    if (kids[k] && kids[k]->depth > d) d = kids[k]->depth;
  for (int k = 0; k < e->nargs; k++)
    if (e->args[k]->depth > d) d = e->args[k]->depth;
  e->depth = d + 1;
  if (e->depth > EXPR_MAX_DEPTH) too_deep(ps, col);
}

static Expr *parse_cond(Parser *ps);

static Expr *parse_int_literal(Parser *ps, bool negative, int col) {
  const Token *t = &ps->tok;
  uint64_t limit = negative ? UINT64_C(1) << 63 : (uint64_t)INT64_MAX;
  if (t->too_big || t->uval > limit)
    parse_fail(ps, col, "integer literal '%s%.*s' out of range", negative ? "-" : "", (int)t->len,
               t->start);
  Expr *e = new_expr(ps, EXPR_INT, col);
  /* negate in unsigned arithmetic: 2^63 becomes INT64_MIN without overflow */
  e->ival = negative ? (int64_t)(0 - t->uval) : (int64_t)t->uval;
  lex(ps);
  return e;
}

static Expr *parse_primary(Parser *ps) {
  Token *t = &ps->tok;
  Expr *e;
  switch (t->kind) {
  case T_INT:
    return parse_int_literal(ps, false, t->col);
  case T_DOUBLE:
    e = new_expr(ps, EXPR_DOUBLE, t->col);
    e->dval = t->dval;
    lex(ps);
    return e;
  case T_STRING:
    e = new_expr(ps, EXPR_STRING, t->col);
    e->sval = t->sval;
    e->slen = t->slen;
    lex(ps);
    return e;
  case T_TRUE:
  case T_FALSE:
    e = new_expr(ps, EXPR_BOOL, t->col);
    e->bval = t->kind == T_TRUE;
    lex(ps);
    return e;
  case T_LPAREN: {
    int col = t->col;
    lex(ps);
    e = parse_cond(ps);
    expect(ps, T_RPAREN, "expected ')'");
    /* the parentheses expr_format writes around an operator are free; any others are a level */
    if ((e->kind != EXPR_BINARY && e->kind != EXPR_COND && e->kind != EXPR_IN) || e == ps->paren)
      if (++e->depth > EXPR_MAX_DEPTH) too_deep(ps, col);
    ps->paren = e;
    return e;
  }
  case T_NAME: {
    int col = t->col;
    const char *name = arena_strndup(ps->a, t->start, t->len);
    lex(ps);
    if (ps->tok.kind != T_LPAREN) {
      e = new_expr(ps, EXPR_NAME, col);
      e->sval = name;
      e->slot = -1;
      return e;
    }
    lex(ps);
    e = new_expr(ps, EXPR_CALL, col);
    e->sval = name;
    e->slot = -1;
    PtrVec args = {0};
    if (ps->tok.kind != T_RPAREN) {
      for (;;) {
        ptrvec_push(ps->a, &args, parse_cond(ps));
        if (ps->tok.kind != T_COMMA) break;
        lex(ps);
      }
    }
    expect(ps, T_RPAREN, "expected ')' after arguments");
    e->args = (Expr **)args.items;
    e->nargs = args.n;
    set_depth(ps, e, col);
    return e;
  }
  default:
    unexpected(ps);
  }
}

static Expr *parse_unary(Parser *ps) {
  Token *t = &ps->tok;
  if (t->kind != T_MINUS && t->kind != T_BANG) return parse_primary(ps);
  enter(ps);
  int col = t->col;
  bool neg = t->kind == T_MINUS;
  lex(ps);
  Expr *e;
  if (neg && t->kind == T_INT) {
    e = parse_int_literal(ps, true, col);
  } else if (neg && t->kind == T_DOUBLE) {
    e = new_expr(ps, EXPR_DOUBLE, col);
    e->dval = -t->dval;
    lex(ps);
  } else {
    e = new_expr(ps, EXPR_UNARY, col);
    e->op = neg ? OP_NEG : OP_NOT;
    e->a = parse_unary(ps);
    set_depth(ps, e, col);
  }
  ps->depth--;
  return e;
}

/* Binding power of a binary operator token (0: not one) and the ExprOp it builds. */
static int binary_prec(TokKind k, ExprOp *op) {
  switch (k) {
  case T_OR: *op = OP_OR; return 1;
  case T_AND: *op = OP_AND; return 2;
  case T_EQ: *op = OP_EQ; return 3;
  case T_NE: *op = OP_NE; return 3;
  case T_LT: *op = OP_LT; return 4;
  case T_LE: *op = OP_LE; return 4;
  case T_GT: *op = OP_GT; return 4;
  case T_GE: *op = OP_GE; return 4;
  case T_PLUS: *op = OP_ADD; return 5;
  case T_MINUS: *op = OP_SUB; return 5;
  case T_STAR: *op = OP_MUL; return 6;
  case T_SLASH: *op = OP_DIV; return 6;
  case T_PERCENT: *op = OP_MOD; return 6;
  default: *op = OP_NONE; return 0;
  }
}

/* The precedence of `in`, that of `==`. */
enum { IN_PREC = 3 };

/* Whether the current token is the name `in` (after an operand: the operator). */
static bool at_in(const Parser *ps) {
  return ps->tok.kind == T_NAME && ps->tok.len == 2 && !memcmp(ps->tok.start, "in", 2);
}

/* lhs in (a, b, ...), the current token the `(` after `in` (at opcol). */
static Expr *parse_in(Parser *ps, Expr *lhs, int opcol) {
  if (ps->tok.kind != T_LPAREN) parse_fail(ps, ps->tok.col, "expected '(' after 'in'");
  lex(ps);
  enter(ps);
  PtrVec values = {0};
  for (;;) {
    ptrvec_push(ps->a, &values, parse_cond(ps));
    if (ps->tok.kind != T_COMMA) break;
    lex(ps);
  }
  expect(ps, T_RPAREN, "expected ')' after the values of 'in'");
  ps->depth--;
  Expr *e = new_expr(ps, EXPR_IN, lhs->col);
  e->slot = opcol;
  e->a = lhs;
  e->args = (Expr **)values.items;
  e->nargs = values.n;
  set_depth(ps, e, opcol);
  return e;
}

/* Precedence climbing over the left-associative binary operators binding at least min_prec. */
static Expr *parse_binary(Parser *ps, int min_prec) {
  Expr *lhs = parse_unary(ps);
  for (;;) {
    ExprOp op;
    bool in = at_in(ps);
    int prec = in ? IN_PREC : binary_prec(ps->tok.kind, &op);
    if (prec == 0 || prec < min_prec) return lhs;
    int opcol = ps->tok.col;
    lex(ps);
    if (in) {
      lhs = parse_in(ps, lhs, opcol);
      continue;
    }
    enter(ps);
    Expr *rhs = parse_binary(ps, prec + 1);
    ps->depth--;
    Expr *e = new_expr(ps, EXPR_BINARY, lhs->col);
    e->op = op;
    e->slot = opcol;
    e->a = lhs;
    e->b = rhs;
    set_depth(ps, e, opcol);
    lhs = e;
  }
}

static Expr *parse_cond(Parser *ps) {
  enter(ps);
  Expr *c = parse_binary(ps, 1);
  if (ps->tok.kind == T_QUEST) {
    int qcol = ps->tok.col;
    lex(ps);
    Expr *e = new_expr(ps, EXPR_COND, c->col);
    e->slot = qcol;
    e->a = c;
    e->b = parse_cond(ps);
    expect(ps, T_COLON, "expected ':' in '?:'");
    e->c = parse_cond(ps);
    set_depth(ps, e, qcol);
    c = e;
  }
  ps->depth--;
  return c;
}

Expr *expr_parse(Arena *a, const char *text, Diag *d, const TextOrigin *at) {
  Parser ps;
  memset(&ps, 0, sizeof ps);
  ps.a = a;
  ps.text = text ? text : "";
  ps.p = ps.text;
  ps.d = d;
  ps.at = at;
  ps.end = ps.text + strlen(ps.text);
  while (ps.end > ps.text && is_space(ps.end[-1])) ps.end--;
  if (setjmp(ps.fail)) return NULL;
  lex(&ps);
  if (ps.tok.kind == T_EOF) parse_fail(&ps, 1, "empty expression");
  Expr *e = parse_cond(&ps);
  if (ps.tok.kind != T_EOF) unexpected(&ps);
  return e;
}

/* ---- type checker ---- */

typedef struct Checker {
  ExprScope *scope;    /* names visible */
  Diag *d;             /* where errors go */
  const TextOrigin *at;/* where the text is in the file */
  const char *in_agg;  /* name of the enclosing aggregate call, NULL outside */
} Checker;

/* Sets of types, as bits, with the phrase used in messages. */
enum { TS_NONE = 0, TS_INT = 1 << TYPE_INT, TS_DOUBLE = 1 << TYPE_DOUBLE, TS_STRING = 1 << TYPE_STRING,
       TS_BOOL = 1 << TYPE_BOOL, TS_NUM = TS_INT | TS_DOUBLE, TS_ORD = TS_NUM | TS_STRING,
       TS_ANY = TS_ORD | TS_BOOL };

/* A function's result type as functions.def writes it: a Type, or RES_ARG0. */
enum { RES_INT = TYPE_INT, RES_DOUBLE = TYPE_DOUBLE, RES_STRING = TYPE_STRING, RES_BOOL = TYPE_BOOL,
       RES_ARG0 = -1 };

/* Every function an expression may call: the scalar ones of functions.def, with their arity and
 * type rules, then the aggregate ones, whose rules are in check_aggregate. aggregate: an aggregate
 * slot (FUNC_COUNT and after); window_start and window_end are slots too, allowed by
 * allow_window_bounds instead of allow_aggregates. */
static const struct {
  const char *name;
  ExprFunc func;
  bool aggregate;
  int nargs;        /* scalar functions: how many arguments */
  unsigned args[3]; /* the types each may have (TS_) */
  int result;       /* RES_ */
  unsigned flags;   /* FN_ */
} func_table[] = {
#define ARGS(a, b, c) {TS_##a, TS_##b, TS_##c}
#define FUNC(ID, name, n, argsets, res, fl) {#name, FUNC_##ID, false, n, argsets, RES_##res, fl},
#include "functions.def"
#undef FUNC
#undef ARGS
#define AGG(text, f) {.name = text, .func = f, .aggregate = true}
  AGG("count", FUNC_COUNT), AGG("sum", FUNC_SUM), AGG("avg", FUNC_AVG), AGG("first", FUNC_FIRST),
  AGG("last", FUNC_LAST), AGG("count_distinct", FUNC_COUNT_DISTINCT), AGG("arg_max", FUNC_ARG_MAX),
  AGG("arg_min", FUNC_ARG_MIN), AGG("window_start", FUNC_WINDOW_START), AGG("window_end", FUNC_WINDOW_END),
#undef AGG
};

static bool is_window_bound(ExprFunc f) {
  return f == FUNC_WINDOW_START || f == FUNC_WINDOW_END;
}

/* Whether a function of the table may be called in this scope (for "did you mean"). */
static bool func_allowed(const ExprScope *scope, ExprFunc f, bool aggregate) {
  if (is_window_bound(f)) return scope->allow_window_bounds;
  return !aggregate || scope->allow_aggregates;
}

static const char *op_text(ExprOp op) {
  static const char *const text[] = {
    [OP_NONE] = "?", [OP_OR] = "||", [OP_AND] = "&&", [OP_EQ] = "==", [OP_NE] = "!=",
    [OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">", [OP_GE] = ">=", [OP_ADD] = "+",
    [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/", [OP_MOD] = "%", [OP_NEG] = "-",
    [OP_NOT] = "!",
  };
  return (op >= OP_NONE && op <= OP_NOT) ? text[op] : "?";
}

static const char *typeset_phrase(unsigned set) {
  switch (set) {
  case TS_INT: return "an int";
  case TS_DOUBLE: return "a double";
  case TS_STRING: return "a string";
  case TS_BOOL: return "a bool";
  case TS_NUM: return "an int or a double";
  default: return "an int, a double or a string";
  }
}

static const char *pair_phrase(unsigned set) {
  switch (set) {
  case TS_INT: return "two ints";
  case TS_BOOL: return "two bools";
  case TS_NUM: return "two ints or two doubles";
  default: return "two ints, two doubles or two strings";
  }
}

static Type check(Checker *c, Expr *e);

static void check_error(Checker *c, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void check_error(Checker *c, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_verror_in(c->d, c->at, col, fmt, ap);
  va_end(ap);
}

static bool in_set(Type t, unsigned set) {
  return t != TYPE_NONE && (set & (1u << t));
}

/* A qualified name P.N (e->sval holds "P.N"): N in the side named P. */
static Type check_side_name(Checker *c, Expr *e, const char *dot) {
  const ExprScope *s = c->scope;
  size_t plen = (size_t)(dot - e->sval);
  const char *attr = dot + 1;
  int side = -1;
  for (int k = 0; k < s->nsides && k < 2; k++)
    if (s->side_name[k] && strlen(s->side_name[k]) == plen && !strncmp(s->side_name[k], e->sval, plen)) side = k;
  if (side < 0) {
    if (s->nsides == 0) {
      check_error(c, e->col, "unknown name '%s' (no qualified names here)", e->sval);
      return TYPE_NONE;
    }
    char *prefix = sf_xmalloc(plen + 1);
    memcpy(prefix, e->sval, plen);
    prefix[plen] = 0;
    const char *hint = diag_suggest(prefix, s->side_name, s->nsides);
    if (s->nsides == 2)
      check_error(c, e->col, "unknown prefix '%s' in '%s' (here '%s.' or '%s.')" DIAG_HINT_FMT, prefix, e->sval,
                  s->side_name[0], s->side_name[1], DIAG_HINT(hint));
    else
      check_error(c, e->col, "unknown prefix '%s' in '%s' (here '%s.')" DIAG_HINT_FMT, prefix, e->sval,
                  s->side_name[0], DIAG_HINT(hint));
    free(prefix);
    return TYPE_NONE;
  }
  const Schema *sch = s->side[side];
  int k = sch ? schema_find_attr(sch, attr) : -1;
  if (k < 0) {
    const char *hint = sch ? schema_suggest_attr(sch, attr) : NULL;
    check_error(c, e->col + (int)plen + 1, "unknown attribute '%s' of '%s'" DIAG_HINT_FMT, attr,
                s->side_name[side], DIAG_HINT(hint));
    return TYPE_NONE;
  }
  e->scope = NAME_SIDE;
  e->side = side;
  e->slot = k;
  return sch->attrs[k].type;
}

static Type check_name(Checker *c, Expr *e) {
  const ExprScope *s = c->scope;
  const char *dot = strchr(e->sval, '.');
  if (dot) return check_side_name(c, e, dot);
  int k = s->input ? schema_find_attr(s->input, e->sval) : -1;
  if (k >= 0) {
    e->scope = NAME_ATTR;
    e->slot = k;
    return s->input->attrs[k].type;
  }
  for (k = 0; k < s->nstates; k++) {
    if (s->states[k] && !strcmp(s->states[k]->name, e->sval)) {
      e->scope = NAME_STATE;
      e->slot = k;
      return s->states[k]->type;
    }
  }
  for (k = s->nlets - 1; k >= 0; k--) {
    if (s->lets[k].name && !strcmp(s->lets[k].name, e->sval)) {
      e->scope = NAME_LET;
      e->slot = k;
      return s->lets[k].type;
    }
  }
  if (s->allow_seq && !strcmp(e->sval, "seq")) {
    e->scope = NAME_SEQ;
    return TYPE_INT;
  }
  if (s->allow_index && !strcmp(e->sval, "i")) {
    e->scope = NAME_INDEX;
    return TYPE_INT;
  }
  for (k = s->nlets; k < s->lets_written; k++)
    if (s->lets[k].name && !strcmp(s->lets[k].name, e->sval)) {
      check_error(c, e->col, "let '%s' is written after this expression (a let can be read only after it)",
                  e->sval);
      return TYPE_NONE;
    }
  /* the names in scope, for a "did you mean" */
  int n = (s->input ? s->input->nattrs : 0) + s->nstates + s->nlets + 2, nc = 0;
  const char **names = sf_xmalloc(sizeof *names * (size_t)n);
  for (k = 0; s->input && k < s->input->nattrs; k++) names[nc++] = s->input->attrs[k].name;
  for (k = 0; k < s->nstates; k++)
    if (s->states[k]) names[nc++] = s->states[k]->name;
  for (k = 0; k < s->nlets; k++)
    if (s->lets[k].name) names[nc++] = s->lets[k].name;
  if (s->allow_seq) names[nc++] = "seq";
  if (s->allow_index) names[nc++] = "i";
  const char *hint = diag_suggest(e->sval, names, nc);
  check_error(c, e->col, "unknown name '%s'" DIAG_HINT_FMT, e->sval, DIAG_HINT(hint));
  free(names);
  return TYPE_NONE;
}

static Type check_binary(Checker *c, Expr *e) {
  Type l = check(c, e->a), r = check(c, e->b);
  if (l == TYPE_NONE || r == TYPE_NONE) return TYPE_NONE;
  unsigned set;
  Type result;
  switch (e->op) {
  case OP_ADD: set = TS_ORD; result = l; break;
  case OP_SUB: case OP_MUL: case OP_DIV: set = TS_NUM; result = l; break;
  case OP_MOD: set = TS_INT; result = l; break;
  case OP_LT: case OP_LE: case OP_GT: case OP_GE: set = TS_ORD; result = TYPE_BOOL; break;
  case OP_AND: case OP_OR: set = TS_BOOL; result = TYPE_BOOL; break;
  case OP_EQ: case OP_NE:
    if (l != r) {
      check_error(c, e->slot, "operator '%s' needs two operands of the same type, got %s and %s",
                  op_text(e->op), type_name(l), type_name(r));
      return TYPE_NONE;
    }
    return TYPE_BOOL;
  default:
    sf_die("bad binary operator %d", (int)e->op);
  }
  if (l != r || !in_set(l, set)) {
    check_error(c, e->slot, "operator '%s' needs %s, got %s and %s", op_text(e->op),
                pair_phrase(set), type_name(l), type_name(r));
    return TYPE_NONE;
  }
  return result;
}

static Type check_unary(Checker *c, Expr *e) {
  Type t = check(c, e->a);
  if (t == TYPE_NONE) return TYPE_NONE;
  unsigned set = e->op == OP_NEG ? TS_NUM : TS_BOOL;
  if (!in_set(t, set)) {
    check_error(c, e->col, "operator '%s' needs %s, got %s", op_text(e->op), typeset_phrase(set),
                type_name(t));
    return TYPE_NONE;
  }
  return t;
}

static Type check_cond(Checker *c, Expr *e) {
  Type ct = check(c, e->a), bt = check(c, e->b), et = check(c, e->c);
  bool ok = true;
  if (ct != TYPE_NONE && ct != TYPE_BOOL) {
    check_error(c, e->a->col, "condition of '?:' must be bool, got %s", type_name(ct));
    ok = false;
  }
  if (bt != TYPE_NONE && et != TYPE_NONE && bt != et) {
    check_error(c, e->slot, "branches of '?:' must have the same type, got %s and %s",
                type_name(bt), type_name(et));
    ok = false;
  }
  if (!ok || ct == TYPE_NONE || bt == TYPE_NONE || et == TYPE_NONE) return TYPE_NONE;
  return bt;
}

/* Checks argument k of call e against a set of types; returns its type or TYPE_NONE. */
static Type check_arg(Checker *c, Expr *e, int k, Type t, unsigned set) {
  if (t == TYPE_NONE) return TYPE_NONE;
  if (!in_set(t, set)) {
    check_error(c, e->args[k]->col, "argument %d of '%s' must be %s, got %s", k + 1, e->sval,
                typeset_phrase(set), type_name(t));
    return TYPE_NONE;
  }
  return t;
}

/* The type of a call of aggregate function func whose argument types are at[]. */
static Type check_aggregate(Checker *c, Expr *e, ExprFunc func, const Type *at) {
  switch (func) {
  case FUNC_SUM:
    return check_arg(c, e, 0, at[0], TS_NUM);
  case FUNC_AVG:
    return check_arg(c, e, 0, at[0], TS_NUM) ? TYPE_DOUBLE : TYPE_NONE;
  case FUNC_AMIN:
  case FUNC_AMAX:
    return check_arg(c, e, 0, at[0], TS_ORD);
  case FUNC_FIRST:
  case FUNC_LAST:
    return at[0];
  case FUNC_COUNT:
  case FUNC_COUNT_DISTINCT:
  case FUNC_WINDOW_START:
  case FUNC_WINDOW_END:
    return TYPE_INT;
  case FUNC_ARG_MAX:
  case FUNC_ARG_MIN:
    return check_arg(c, e, 1, at[1], TS_ANY) ? at[0] : TYPE_NONE;
  default:
    sf_die("bad function %d", (int)func);
  }
}

/* Whether the pattern of call e (of a FN_PATTERN function) is a literal that compiles, and its
 * group (a third argument), when a literal, a group of it. */
static bool check_pattern(Checker *c, const Expr *e) {
  const Expr *p = e->args[1];
  if (p->kind != EXPR_STRING) {
    check_error(c, p->col, "the pattern of '%s' must be a string literal", e->sval);
    return false;
  }
  char msg[256];
  size_t offset = 0;
  Regex *re = regex_compile(p->sval, p->slen, NULL, msg, sizeof msg, &offset);
  if (!re) {
    check_error(c, p->col, "bad regular expression in '%s' at byte %zu of the pattern: %s", e->sval, offset,
                msg);
    return false;
  }
  int groups = regex_groups(re);
  regex_free(re);
  if (e->nargs > 2 && e->args[2]->kind == EXPR_INT && (e->args[2]->ival < 0 || e->args[2]->ival > groups)) {
    check_error(c, e->args[2]->col, "group %lld of '%s' is not in its pattern, which has %d group%s",
                (long long)e->args[2]->ival, e->sval, groups, groups == 1 ? "" : "s");
    return false;
  }
  return true;
}

static Type check_call(Checker *c, Expr *e) {
  ExprFunc func = FUNC_NONE;
  bool aggregate = false;
  int def = -1; /* its entry in func_table */
  for (size_t k = 0; k < sizeof func_table / sizeof func_table[0]; k++) {
    if (!strcmp(func_table[k].name, e->sval)) {
      func = func_table[k].func;
      aggregate = func_table[k].aggregate;
      def = (int)k;
      break;
    }
  }
  bool minmax = func == FUNC_MIN || func == FUNC_MAX;
  if (minmax && c->scope->allow_aggregates && e->nargs == 1) {
    func = func == FUNC_MIN ? FUNC_AMIN : FUNC_AMAX;
    aggregate = true;
  }
  e->func = func;

  bool ok = true;
  if (func == FUNC_NONE) {
    /* the functions this expression may call (aggregate ones only in an Aggregate) */
    enum { NFUNCS = sizeof func_table / sizeof func_table[0] };
    const char *names[NFUNCS];
    int nc = 0;
    for (size_t k = 0; k < NFUNCS; k++)
      if (func_allowed(c->scope, func_table[k].func, func_table[k].aggregate)) names[nc++] = func_table[k].name;
    const char *hint = diag_suggest(e->sval, names, nc);
    check_error(c, e->col, "unknown function '%s'" DIAG_HINT_FMT, e->sval, DIAG_HINT(hint));
    ok = false;
  } else if (is_window_bound(func) && !c->scope->allow_window_bounds) {
    check_error(c, e->col, "%s() is only defined in a time window (tumbling time, hopping time, session time)",
                e->sval);
    ok = false;
  } else if (aggregate && !is_window_bound(func) && !c->scope->allow_aggregates) {
    check_error(c, e->col, "aggregate function '%s' is only allowed in an Aggregate", e->sval);
    ok = false;
  } else if (aggregate && c->in_agg) {
    check_error(c, e->col, "aggregate function '%s' cannot be nested inside '%s'", e->sval,
                c->in_agg);
    ok = false;
  } else if (aggregate) {
    e->slot = c->scope->naggregates++;
  }

  /* arity */
  int want = 1;
  switch (func) {
  case FUNC_NONE: break;
  case FUNC_COUNT: case FUNC_WINDOW_START: case FUNC_WINDOW_END: want = 0; break;
  case FUNC_ARG_MAX: case FUNC_ARG_MIN: want = 2; break;
  default: want = aggregate ? 1 : func_table[def].nargs; break;
  }
  if (ok && e->nargs != want) {
    if (minmax && c->scope->allow_aggregates)
      check_error(c, e->col, "function '%s' takes 1 or 2 arguments, got %d", e->sval, e->nargs);
    else
      check_error(c, e->col, "function '%s' takes %d argument%s, got %d", e->sval, want,
                  want == 1 ? "" : "s", e->nargs);
    ok = false;
  }

  /* arguments: always checked, so errors inside them are reported too */
  const char *outer = c->in_agg;
  if (aggregate) c->in_agg = e->sval;
  Type at[3] = {TYPE_NONE, TYPE_NONE, TYPE_NONE};
  for (int k = 0; k < e->nargs; k++) {
    Type t = check(c, e->args[k]);
    if (k < 3) at[k] = t;
    if (t == TYPE_NONE) ok = false;
  }
  c->in_agg = outer;
  if (!ok) return TYPE_NONE;
  if (aggregate) return check_aggregate(c, e, func, at);

  /* a scalar function: functions.def's rules */
  const unsigned *sets = func_table[def].args;
  if (func_table[def].flags & FN_SAME) {
    for (int k = 1; k < e->nargs; k++) {
      if (at[k] != at[0] || !in_set(at[0], sets[0])) {
        check_error(c, e->col, "function '%s' needs %s, got %s and %s", e->sval, pair_phrase(sets[0]),
                    type_name(at[0]), type_name(at[k]));
        return TYPE_NONE;
      }
    }
  }
  bool good = true;
  for (int k = 0; k < e->nargs; k++) good &= check_arg(c, e, k, at[k], sets[k]) != TYPE_NONE;
  if (!good) return TYPE_NONE;
  if (func_table[def].flags & FN_PATTERN) return check_pattern(c, e) ? (Type)func_table[def].result : TYPE_NONE;
  char msg[64];
  const Expr *fmt = e->args[1];
  if ((func_table[def].flags & FN_DATEFMT) && fmt->kind == EXPR_STRING &&
      !date_format_check(fmt->sval, fmt->slen, msg, sizeof msg)) {
    check_error(c, fmt->col, "bad format of '%s': %s (the conversions are %%Y %%m %%d %%H %%M %%S %%j %%%%)",
                e->sval, msg);
    return TYPE_NONE;
  }
  return func_table[def].result == RES_ARG0 ? at[0] : (Type)func_table[def].result;
}

/* x in (values): every value of x's type. */
static Type check_in(Checker *c, Expr *e) {
  Type x = check(c, e->a);
  bool ok = x != TYPE_NONE;
  for (int k = 0; k < e->nargs; k++) {
    Type t = check(c, e->args[k]);
    if (t == TYPE_NONE) ok = false;
    else if (x != TYPE_NONE && t != x) {
      check_error(c, e->args[k]->col, "value %d of 'in' must be %s like the operand before 'in', got %s", k + 1,
                  typeset_phrase(1u << x), type_name(t));
      ok = false;
    }
  }
  return ok ? TYPE_BOOL : TYPE_NONE;
}

static Type check(Checker *c, Expr *e) {
  Type t;
  switch (e->kind) {
  case EXPR_INT: t = TYPE_INT; break;
  case EXPR_DOUBLE: t = TYPE_DOUBLE; break;
  case EXPR_STRING: t = TYPE_STRING; break;
  case EXPR_BOOL: t = TYPE_BOOL; break;
  case EXPR_NAME: t = check_name(c, e); break;
  case EXPR_UNARY: t = check_unary(c, e); break;
  case EXPR_BINARY: t = check_binary(c, e); break;
  case EXPR_COND: t = check_cond(c, e); break;
  case EXPR_CALL: t = check_call(c, e); break;
  case EXPR_IN: t = check_in(c, e); break;
  default: sf_die("bad expression kind %d", (int)e->kind);
  }
  e->type = t;
  return t;
}

Type expr_check(Expr *e, ExprScope *scope, Diag *d, const TextOrigin *at) {
  ExprScope empty = {0};
  Checker c = {scope ? scope : &empty, d, at, NULL};
  int before = d->nerrors;
  Type t = check(&c, e);
  return d->nerrors > before ? TYPE_NONE : t;
}

bool date_format_check(const char *f, size_t n, char *msg, size_t cap) {
  for (size_t k = 0; k < n; k++) {
    if (f[k] != '%') continue;
    if (++k == n) {
      snprintf(msg, cap, "'%%' at the end of the format");
      return false;
    }
    if (!strchr("YmdHMSj%", f[k]) || f[k] == 0) {
      unsigned char b = (unsigned char)f[k];
      if (b > ' ' && b < 127) snprintf(msg, cap, "unknown conversion '%%%c'", b);
      else snprintf(msg, cap, "unknown conversion: '%%' then byte 0x%02x", b);
      return false;
    }
  }
  return true;
}

/* ---- queries ---- */

void expr_reads(const Expr *e, bool *reads) {
  if (!e) return;
  switch (e->kind) {
  case EXPR_NAME:
    if (e->scope == NAME_ATTR && e->slot >= 0) reads[e->slot] = true;
    break;
  case EXPR_UNARY:
    expr_reads(e->a, reads);
    break;
  case EXPR_BINARY:
    expr_reads(e->a, reads);
    expr_reads(e->b, reads);
    break;
  case EXPR_COND:
    expr_reads(e->a, reads);
    expr_reads(e->b, reads);
    expr_reads(e->c, reads);
    break;
  case EXPR_IN:
    expr_reads(e->a, reads);
    for (int k = 0; k < e->nargs; k++) expr_reads(e->args[k], reads);
    break;
  case EXPR_CALL:
    for (int k = 0; k < e->nargs; k++) expr_reads(e->args[k], reads);
    break;
  default:
    break;
  }
}

bool expr_is_attr(const Expr *e, int *slot) {
  if (!e || e->kind != EXPR_NAME || e->scope != NAME_ATTR) return false;
  if (slot) *slot = e->slot;
  return true;
}

/* ---- printer ---- */

typedef struct Text {
  char *p;    /* bytes (malloc) */
  size_t n;   /* used */
  size_t cap; /* allocated */
} Text;

static void text_put(Text *t, const char *s, size_t n) {
  if (t->n + n + 1 > t->cap) {
    t->cap = (t->n + n + 1) * 2;
    t->p = sf_xrealloc(t->p, t->cap);
  }
  memcpy(t->p + t->n, s, n);
  t->n += n;
  t->p[t->n] = 0;
}

static void text_puts(Text *t, const char *s) { text_put(t, s, strlen(s)); }

/* A double literal that reads back (strtod) to the same value and lexes as a double again: the
 * runtime's text (double_format) plus ".0" when it would otherwise read as an int. */
static void format_double(Text *t, double d) {
  char out[48];
  double_format(d, out, sizeof out - 2);
  if (!strpbrk(out, ".eni")) strcat(out, ".0"); /* 100 -> 100.0; 1e+21, nan and inf stay */
  text_puts(t, out);
}

static void format(Text *t, const Expr *e) {
  char buf[32];
  switch (e->kind) {
  case EXPR_INT:
    snprintf(buf, sizeof buf, "%lld", (long long)e->ival);
    text_puts(t, buf);
    break;
  case EXPR_DOUBLE:
    format_double(t, e->dval);
    break;
  case EXPR_STRING:
    text_puts(t, "\"");
    for (size_t k = 0; k < e->slen; k++) {
      char ch = e->sval[k];
      if (ch == '"') text_puts(t, "\\\"");
      else if (ch == '\\') text_puts(t, "\\\\");
      else if (ch == '\n') text_puts(t, "\\n");
      else text_put(t, &ch, 1);
    }
    text_puts(t, "\"");
    break;
  case EXPR_BOOL:
    text_puts(t, e->bval ? "true" : "false");
    break;
  case EXPR_NAME:
    text_puts(t, e->sval);
    break;
  case EXPR_UNARY: {
    /* `-` before a literal that does not start with `-` would read back as one negative literal */
    bool wrap = e->op == OP_NEG && ((e->a->kind == EXPR_INT && e->a->ival >= 0) ||
                                    (e->a->kind == EXPR_DOUBLE && !signbit(e->a->dval)));
    text_puts(t, op_text(e->op));
    if (wrap) text_puts(t, "(");
    format(t, e->a);
    if (wrap) text_puts(t, ")");
    break;
  }
  case EXPR_BINARY:
    text_puts(t, "(");
    format(t, e->a);
    text_puts(t, " ");
    text_puts(t, op_text(e->op));
    text_puts(t, " ");
    format(t, e->b);
    text_puts(t, ")");
    break;
  case EXPR_COND:
    text_puts(t, "(");
    format(t, e->a);
    text_puts(t, " ? ");
    format(t, e->b);
    text_puts(t, " : ");
    format(t, e->c);
    text_puts(t, ")");
    break;
  case EXPR_CALL:
    text_puts(t, e->sval);
    text_puts(t, "(");
    for (int k = 0; k < e->nargs; k++) {
      if (k) text_puts(t, ", ");
      format(t, e->args[k]);
    }
    text_puts(t, ")");
    break;
  case EXPR_IN:
    text_puts(t, "(");
    format(t, e->a);
    text_puts(t, " in (");
    for (int k = 0; k < e->nargs; k++) {
      if (k) text_puts(t, ", ");
      format(t, e->args[k]);
    }
    text_puts(t, "))");
    break;
  default:
    sf_die("bad expression kind %d", (int)e->kind);
  }
}

char *expr_format(Arena *a, const Expr *e) {
  Text t = {0};
  text_puts(&t, "");
  format(&t, e);
  char *s = arena_strndup(a, t.p, t.n);
  free(t.p);
  return s;
}
