/* code.c: checked expressions compiled once into flat code, the form operators evaluate per tuple
 * (see eval.h; expr_eval in eval.c is the reference it must agree with, value for value and message
 * for message).
 *
 * The code is an array of instructions over registers (one Value each, on code_eval's stack).
 * An operand is a base and a byte offset: a constant of the code, an attribute of the input tuple,
 * a state variable, an aggregate value, seq or i, a register, an attribute of a named side
 * (P.N: env->sides[0] or [1]) or a let (env->lets): those two the same for every row of a run. code_eval resolves the bases
 * once, so an operand costs one load and an addition, never a dispatch on what it is. Opcodes are
 * typed (the checker fixed every type), so an int addition is one instruction that tests nothing.
 * An expression that is a single operand (an attribute, a folded constant) runs no instructions.
 *
 * Compilation walks the tree once:
 *  - registers are allocated like a stack: a node's operands take the registers above a mark, and
 *    its result goes to the lowest free one, which its operands no longer need (an instruction
 *    reads all its operands before writing); so a node's result register is always the lowest
 *    free one when its compilation started;
 *  - && || and ?: are forward jumps; both branches leave their value in one register;
 *  - a node whose operands are all constants is folded: expr_eval itself evaluates it on literal
 *    copies of those constants (strings made then live in the code's arena), so a folded value is
 *    the tree walker's value. A fold that faults (1 / 0, or 9223372036854775807 + 1, which never
 *    folds into a wrapped value) is not done: the node is compiled and faults at run time, only
 *    when reached, as in the tree walk. A constant condition of ?:, && or || keeps only the branch
 *    the tree walker would take;
 *  - operands are compiled left to right and run in that order, so the first fault of an
 *    expression is the tree walker's first fault;
 *  - an int / or % by a constant (not 0, 1, -1 or INT64_MIN) becomes a multiplication by a magic
 *    number (see Magic), which cannot fault, as the division it replaces could not.
 * Values are copied member by member (copy), never as whole structs: see there why.
 *
 * code_eval_run runs the same code over a run of rows: each instruction loops over the rows, with
 * one register vector per register (n Values) in the caller's scratch arena. A jump parks the rows
 * it takes until its target, where they join the others again in row order, so each row runs the
 * instructions code_eval would run for it and no other. A fault of row r drops the rows from r on
 * (the later instructions run for the rows before it, which may fault earlier still): what is
 * left is the first faulting row, as code_eval row by row finds it. */
#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum Opcode {
  OPC_MOV, OPC_JF, OPC_JT, OPC_JMP,
  OPC_NEG_I, OPC_NEG_D, OPC_NOT,
  OPC_ADD_I, OPC_SUB_I, OPC_MUL_I, OPC_DIV_I, OPC_MOD_I, OPC_DIV_IK, OPC_MOD_IK,
  OPC_EQ_I, OPC_NE_I, OPC_LT_I, OPC_LE_I, OPC_GT_I, OPC_GE_I,
  OPC_ADD_D, OPC_SUB_D, OPC_MUL_D, OPC_DIV_D,
  OPC_EQ_D, OPC_NE_D, OPC_LT_D, OPC_LE_D, OPC_GT_D, OPC_GE_D,
  OPC_CAT_S, OPC_EQ_S, OPC_NE_S, OPC_LT_S, OPC_LE_S, OPC_GT_S, OPC_GE_S,
  OPC_EQ_B, OPC_NE_B,
  OPC_ABS_I, OPC_ABS_D, OPC_MIN, OPC_MAX, OPC_INT_B, OPC_INT_D, OPC_INT_S, OPC_DOUBLE_I, OPC_DOUBLE_S,
  OPC_STR_I, OPC_STR_D, OPC_STR_B, OPC_LEN, OPC_SUBSTR, OPC_HASH, OPC_RAND,
  /* OPC_CALL + f: dst = fn_table[f](a, b, c), a function of functions.def without an opcode of
   * its own */
  OPC_CALL,
} Opcode;
_Static_assert(OPC_CALL + FUNC_COUNT <= 256, "an opcode is a byte");

/* Where an operand lives: BASE_NAME is seq (index 0) and i (index 1); BASE_SIDE0 and BASE_SIDE1
 * are env->sides[0] and [1] (qualified names); BASE_LET env->lets. */
enum { BASE_CONST, BASE_ATTR, BASE_STATE, BASE_AGG, BASE_NAME, BASE_REG, BASE_SIDE0, BASE_SIDE1, BASE_LET, NBASES };

/* One instruction: dst = op(a, b, c). Operands and dst are byte offsets from their base (index *
 * sizeof(Value)), which saves a multiplication per operand. */
typedef struct Ins {
  uint8_t op;         /* Opcode */
  uint8_t ka, kb, kc; /* bases of operands a, b, c */
  uint32_t a, b, c;   /* operand byte offsets; c of a jump is the target instruction's index */
  uint32_t dst;       /* byte offset of the register written */
} Ins;

/* Division by a constant d (2 <= |d|, d != INT64_MIN) as a multiplication, the way compilers do
 * it (Granlund and Montgomery; Hacker's Delight, 10-3): n / d is the high half of mul * n, plus n
 * when mul < 0 < d, minus n when d < 0 < mul, shifted right by shift, plus 1 when negative. An
 * idiv costs 40 to 90 cycles, the multiplication a few. */
typedef struct Magic {
  int64_t d;   /* the divisor */
  int64_t mul; /* the magic multiplier */
  int shift;   /* the shift after the high half */
} Magic;

struct Code {
  const Ins *ins;      /* the instructions, run in order but for jumps */
  int nins;            /* how many */
  const Magic *magic;  /* divisions by constants, which OPC_DIV_IK and OPC_MOD_IK index with c */
  const Value *consts; /* the constants operands refer to */
  const void *const *aux; /* per constant, what a call keeps with it (a compiled pattern), or NULL */
  int nregs;           /* registers code_eval needs */
  bool names;          /* whether it reads seq or i (BASE_NAME) */
  uint8_t nsides;      /* env->sides[0..nsides) it reads (the highest side read, plus one) */
  bool jumps;          /* whether it has jumps (&&, ||, ?:) */
  uint8_t kres;        /* base of the result */
  int32_t res;         /* index of the result */
};

/* ---- the compiler ---- */

typedef struct Operand {
  uint8_t base; /* BASE_* */
  int32_t idx;  /* index in that base */
} Operand;

typedef struct Compiler {
  Arena *arena;  /* the code and the strings of folded constants */
  Ins *ins;      /* instructions so far (malloc'd, copied into arena at the end) */
  int nins, cap; /* used, allocated */
  Value *consts; /* constants so far (malloc'd likewise) */
  int nconsts, ccap;
  const void **aux; /* per constant what a call keeps with it (malloc'd likewise; NULL: none yet) */
  int auxcap;       /* entries of aux */
  Magic *magic;  /* divisions by constants so far (malloc'd likewise) */
  int nmagic, mcap;
  int top;       /* the lowest free register */
  int nregs;     /* registers used at most */
  bool names;    /* seq or i read */
  int nsides;    /* the highest side read, plus one */
} Compiler;

static Operand constant(Compiler *C, Value v) {
  if (C->nconsts == C->ccap) {
    C->ccap = C->ccap ? C->ccap * 2 : 8;
    C->consts = sf_xrealloc(C->consts, sizeof *C->consts * (size_t)C->ccap);
  }
  C->consts[C->nconsts] = v;
  return (Operand){BASE_CONST, C->nconsts++};
}

static int new_reg(Compiler *C) {
  if (++C->top > C->nregs) C->nregs = C->top;
  return C->top - 1;
}

/* Appends dst = op(a, b, c); returns the instruction's index. */
static int emit(Compiler *C, Opcode op, int dst, Operand a, Operand b, Operand c) {
  if (C->nins == C->cap) {
    C->cap = C->cap ? C->cap * 2 : 16;
    C->ins = sf_xrealloc(C->ins, sizeof *C->ins * (size_t)C->cap);
  }
  const uint32_t size = sizeof(Value);
  C->ins[C->nins] = (Ins){.op = (uint8_t)op, .ka = a.base, .kb = b.base, .kc = c.base, .a = (uint32_t)a.idx * size,
                          .b = (uint32_t)b.idx * size, .c = (uint32_t)c.idx * size, .dst = (uint32_t)dst * size};
  return C->nins++;
}

static const Operand NONE = {BASE_CONST, 0};

static Operand reg(int r) { return (Operand){BASE_REG, r}; }

/* Moves operand x into register dst unless it is there already. */
static void move(Compiler *C, int dst, Operand x) {
  if (x.base != BASE_REG || x.idx != dst) emit(C, OPC_MOV, dst, x, NONE, NONE);
}

/* A literal expression of value v. */
static Expr literal(Value v) {
  Expr e = {.type = v.type};
  switch (v.type) {
  case TYPE_INT: e.kind = EXPR_INT; e.ival = v.i; break;
  case TYPE_DOUBLE: e.kind = EXPR_DOUBLE; e.dval = v.d; break;
  case TYPE_BOOL: e.kind = EXPR_BOOL; e.bval = v.b; break;
  default: e.kind = EXPR_STRING; e.sval = v.s.p; e.slen = v.s.n; break;
  }
  return e;
}

/* Folds node e whose n operands ops[] are all constants: evaluates a copy of e over literals of
 * them with expr_eval. True with *out set, or false when the evaluation faults. */
static bool fold(Compiler *C, const Expr *e, const Operand *ops, int n, Operand *out) {
  Expr lits[3], *args[3], copy = *e;
  sf_assert(n <= 3);
  for (int k = 0; k < n; k++) {
    if (ops[k].base != BASE_CONST) return false;
    lits[k] = literal(C->consts[ops[k].idx]);
    args[k] = &lits[k];
  }
  if (e->kind == EXPR_CALL)
    copy.args = args;
  else {
    copy.a = n > 0 ? &lits[0] : NULL;
    copy.b = n > 1 ? &lits[1] : NULL;
  }
  EvalEnv none = {.scratch = C->arena};
  Value v;
  if (expr_eval(&copy, &none, &v, NULL, 0)) return false;
  *out = constant(C, v);
  return true;
}

/* The magic of division by d, 2 <= |d|, d != INT64_MIN: the smallest shift whose multiplier
 * gives the truncated quotient of every int64 n (Hacker's Delight, figure 10-1, on 64 bits). */
static Magic magic_of(int64_t d) {
  const uint64_t two63 = UINT64_C(1) << 63;
  uint64_t ad = d < 0 ? 0 - (uint64_t)d : (uint64_t)d;
  uint64_t t = two63 + ((uint64_t)d >> 63);
  uint64_t anc = t - 1 - t % ad; /* |nc|, the largest n with n % d == d - 1 */
  uint64_t q1 = two63 / anc, r1 = two63 - q1 * anc; /* 2^p / |nc| */
  uint64_t q2 = two63 / ad, r2 = two63 - q2 * ad;   /* 2^p / |d| */
  uint64_t delta;
  int p = 63;
  do {
    p++;
    q1 *= 2;
    r1 *= 2;
    if (r1 >= anc) {
      q1++;
      r1 -= anc;
    }
    q2 *= 2;
    r2 *= 2;
    if (r2 >= ad) {
      q2++;
      r2 -= ad;
    }
    delta = ad - r2;
  } while (q1 < delta || (q1 == delta && r1 == 0));
  uint64_t mul = q2 + 1;
  return (Magic){.d = d, .mul = (int64_t)(d < 0 ? 0 - mul : mul), .shift = p - 64};
}

/* n / m->d, truncated. */
static inline int64_t magic_div(const Magic *m, int64_t n) {
  __extension__ typedef __int128 Wide;
  uint64_t q = (uint64_t)(int64_t)(((Wide)m->mul * n) >> 64);
  if (m->d > 0 && m->mul < 0) q += (uint64_t)n;
  else if (m->d < 0 && m->mul > 0) q -= (uint64_t)n;
  int64_t r = (int64_t)q >> m->shift;
  return r + (int64_t)((uint64_t)r >> 63);
}

static Opcode binary_opcode(ExprOp op, Type t) {
  static const ExprOp order[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE};
  static const int ints[] = {OPC_ADD_I, OPC_SUB_I, OPC_MUL_I, OPC_DIV_I, OPC_MOD_I, OPC_EQ_I, OPC_NE_I,
                             OPC_LT_I, OPC_LE_I, OPC_GT_I, OPC_GE_I};
  static const int doubles[] = {OPC_ADD_D, OPC_SUB_D, OPC_MUL_D, OPC_DIV_D, -1, OPC_EQ_D, OPC_NE_D,
                                OPC_LT_D, OPC_LE_D, OPC_GT_D, OPC_GE_D};
  static const int strings[] = {OPC_CAT_S, -1, -1, -1, -1, OPC_EQ_S, OPC_NE_S, OPC_LT_S, OPC_LE_S, OPC_GT_S, OPC_GE_S};
  static const int bools[] = {-1, -1, -1, -1, -1, OPC_EQ_B, OPC_NE_B, -1, -1, -1, -1};
  const int *table = t == TYPE_INT ? ints : t == TYPE_DOUBLE ? doubles : t == TYPE_STRING ? strings
                   : t == TYPE_BOOL ? bools : NULL;
  for (int k = 0; table && k < 11; k++)
    if (order[k] == op && table[k] >= 0) return (Opcode)table[k];
  sf_die("operator %d on %s is not checked", (int)op, type_name(t));
}

static Opcode call_opcode(ExprFunc f, Type t) {
  switch (f) {
  case FUNC_ABS: return t == TYPE_INT ? OPC_ABS_I : OPC_ABS_D;
  case FUNC_MIN: return OPC_MIN;
  case FUNC_MAX: return OPC_MAX;
  case FUNC_INT:
    return t == TYPE_INT ? OPC_MOV : t == TYPE_BOOL ? OPC_INT_B : t == TYPE_DOUBLE ? OPC_INT_D : OPC_INT_S;
  case FUNC_DOUBLE: return t == TYPE_INT ? OPC_DOUBLE_I : t == TYPE_DOUBLE ? OPC_MOV : OPC_DOUBLE_S;
  case FUNC_STR:
    return t == TYPE_STRING ? OPC_MOV : t == TYPE_BOOL ? OPC_STR_B : t == TYPE_INT ? OPC_STR_I : OPC_STR_D;
  case FUNC_LEN: return OPC_LEN;
  case FUNC_SUBSTR: return OPC_SUBSTR;
  case FUNC_HASH: return OPC_HASH;
  case FUNC_RAND: return OPC_RAND;
  default:
    if (f <= FUNC_NONE || f >= FUNC_COUNT) sf_die("function %d is not checked", (int)f);
    return (Opcode)(OPC_CALL + f);
  }
}

static Operand compile(Compiler *C, const Expr *e);

/* Compiles the pattern of a FN_PATTERN call, the string constant p (the checker made it a
 * literal), once, into the code's arena: OPC_CALL gives it to the function as FnEnv.aux. */
static void keep_pattern(Compiler *C, Operand p) {
  sf_assert(p.base == BASE_CONST);
  if (p.idx >= C->auxcap) {
    int cap = C->ccap > p.idx ? C->ccap : p.idx + 1;
    C->aux = sf_xrealloc(C->aux, sizeof *C->aux * (size_t)cap);
    memset(C->aux + C->auxcap, 0, sizeof *C->aux * (size_t)(cap - C->auxcap));
    C->auxcap = cap;
  }
  const Value *v = &C->consts[p.idx];
  char msg[256];
  size_t offset;
  Regex *re = regex_compile(v->s.p, v->s.n, C->arena, msg, sizeof msg, &offset);
  if (!re) sf_die("a checked pattern does not compile: %s", msg);
  C->aux[p.idx] = re;
}

/* a && b, a || b: the value of a when it decides, else the value of b. */
static Operand compile_logic(Compiler *C, const Expr *e) {
  bool is_or = e->op == OP_OR;
  int mark = C->top;
  Operand a = compile(C, e->a);
  if (a.base == BASE_CONST) {
    if (C->consts[a.idx].b == is_or) return a;
    C->top = mark;
    return compile(C, e->b);
  }
  C->top = mark;
  int dst = new_reg(C);
  move(C, dst, a);
  int jump = emit(C, is_or ? OPC_JT : OPC_JF, dst, reg(dst), NONE, NONE);
  C->top = dst; /* a is dead past the jump: b's result lands in dst */
  move(C, dst, compile(C, e->b));
  C->ins[jump].c = C->nins;
  C->top = dst + 1;
  return reg(dst);
}

/* x in (v1, v2, ...): dst = x == v1, then when false dst = x == v2, ..., each true jumping to the
 * end. Folded when x and every value are constants. */
static Operand compile_in(Compiler *C, const Expr *e) {
  int mark = C->top, start = C->nins;
  Operand x = compile(C, e->a);
  bool all_const = x.base == BASE_CONST;
  Opcode eq = binary_opcode(OP_EQ, e->a->type);
  int dst = new_reg(C); /* above x when x is a register */
  int *jumps = sf_xmalloc(sizeof *jumps * (size_t)e->nargs);
  Operand *vals = sf_xmalloc(sizeof *vals * (size_t)e->nargs);
  for (int k = 0; k < e->nargs; k++) {
    vals[k] = compile(C, e->args[k]);
    all_const &= vals[k].base == BASE_CONST;
    C->top = dst + 1;
    emit(C, eq, dst, x, vals[k], NONE);
    jumps[k] = k + 1 < e->nargs ? emit(C, OPC_JT, dst, reg(dst), NONE, NONE) : -1;
  }
  for (int k = 0; k + 1 < e->nargs; k++) C->ins[jumps[k]].c = (uint32_t)C->nins;
  Operand res = reg(dst);
  if (all_const) { /* no instruction but the comparisons and jumps: fold as the tree walker evaluates */
    C->nins = start;
    Expr *lits = sf_xmalloc(sizeof *lits * (size_t)(e->nargs + 1)), **args = sf_xmalloc(sizeof *args * (size_t)e->nargs);
    lits[e->nargs] = literal(C->consts[x.idx]);
    for (int k = 0; k < e->nargs; k++) {
      lits[k] = literal(C->consts[vals[k].idx]);
      args[k] = &lits[k];
    }
    Expr copy = *e;
    copy.a = &lits[e->nargs];
    copy.args = args;
    EvalEnv none = {.scratch = C->arena};
    Value v;
    if (expr_eval(&copy, &none, &v, NULL, 0)) sf_die("a comparison of constants faults");
    res = constant(C, v);
    free(lits);
    free(args);
  }
  free(jumps);
  free(vals);
  C->top = mark;
  if (res.base == BASE_REG && dst != mark) { /* the result in the lowest free register */
    emit(C, OPC_MOV, mark, res, NONE, NONE);
    res = reg(mark);
  }
  if (res.base == BASE_REG) C->top = mark + 1;
  return res;
}

static Operand compile_cond(Compiler *C, const Expr *e) {
  int mark = C->top;
  Operand c = compile(C, e->a);
  if (c.base == BASE_CONST) {
    C->top = mark;
    return compile(C, C->consts[c.idx].b ? e->b : e->c);
  }
  int jf = emit(C, OPC_JF, 0, c, NONE, NONE);
  C->top = mark;
  int dst = new_reg(C); /* each branch's result lands in the lowest free register, dst */
  C->top = mark;
  move(C, dst, compile(C, e->b));
  int jmp = emit(C, OPC_JMP, 0, NONE, NONE, NONE);
  C->ins[jf].c = C->nins;
  C->top = mark;
  move(C, dst, compile(C, e->c));
  C->ins[jmp].c = C->nins;
  C->top = dst + 1;
  return reg(dst);
}

static Operand compile(Compiler *C, const Expr *e) {
  EvalEnv none = {.scratch = C->arena};
  Operand ops[3] = {NONE, NONE, NONE}, folded;
  Opcode op;
  int n = 0, mark = C->top;
  switch (e->kind) {
  case EXPR_INT: case EXPR_DOUBLE: case EXPR_STRING: case EXPR_BOOL: {
    Value v;
    if (expr_eval(e, &none, &v, NULL, 0)) sf_die("a literal does not evaluate");
    return constant(C, v);
  }
  case EXPR_NAME:
    switch (e->scope) {
    case NAME_ATTR: return (Operand){BASE_ATTR, e->slot};
    case NAME_STATE: return (Operand){BASE_STATE, e->slot};
    case NAME_SEQ: C->names = true; return (Operand){BASE_NAME, 0};
    case NAME_INDEX: C->names = true; return (Operand){BASE_NAME, 1};
    case NAME_SIDE:
      sf_assert(e->side == 0 || e->side == 1);
      if (C->nsides < e->side + 1) C->nsides = e->side + 1;
      return (Operand){(uint8_t)(e->side ? BASE_SIDE1 : BASE_SIDE0), e->slot};
    case NAME_LET: return (Operand){BASE_LET, e->slot};
    default: sf_die("name '%s' is not resolved", e->sval);
    }
    break;
  case EXPR_UNARY:
    ops[n++] = compile(C, e->a);
    op = e->op == OP_NOT ? OPC_NOT : e->a->type == TYPE_INT ? OPC_NEG_I : OPC_NEG_D;
    break;
  case EXPR_BINARY:
    if (e->op == OP_AND || e->op == OP_OR) return compile_logic(C, e);
    ops[n++] = compile(C, e->a);
    ops[n++] = compile(C, e->b);
    op = binary_opcode(e->op, e->a->type);
    if ((op == OPC_DIV_I || op == OPC_MOD_I) && ops[1].base == BASE_CONST && ops[0].base != BASE_CONST) {
      int64_t d = C->consts[ops[1].idx].i;
      if (d != 0 && d != 1 && d != -1 && d != INT64_MIN) {
        if (C->nmagic == C->mcap) {
          C->mcap = C->mcap ? C->mcap * 2 : 4;
          C->magic = sf_xrealloc(C->magic, sizeof *C->magic * (size_t)C->mcap);
        }
        C->magic[C->nmagic] = magic_of(d);
        C->top = mark;
        int dst = new_reg(C);
        int k = emit(C, op == OPC_DIV_I ? OPC_DIV_IK : OPC_MOD_IK, dst, ops[0], ops[1], NONE);
        C->ins[k].c = (uint32_t)C->nmagic++;
        return reg(dst);
      }
    }
    break;
  case EXPR_COND:
    return compile_cond(C, e);
  case EXPR_IN:
    return compile_in(C, e);
  case EXPR_CALL:
    if (e->func >= FUNC_COUNT) {
      sf_assert(e->slot >= 0);
      return (Operand){BASE_AGG, e->slot};
    }
    sf_assert(e->nargs >= 1 && e->nargs <= 3);
    for (int k = 0; k < e->nargs; k++) ops[n++] = compile(C, e->args[k]);
    op = call_opcode(e->func, e->args[0]->type);
    break;
  default:
    sf_die("bad expression kind %d", (int)e->kind);
  }
  if (n && fold(C, e, ops, n, &folded)) {
    C->top = mark;
    return folded;
  }
  if (e->kind == EXPR_CALL && (fn_flags[e->func] & FN_PATTERN)) keep_pattern(C, ops[1]);
  C->top = mark;
  int dst = new_reg(C);
  emit(C, op, dst, ops[0], ops[1], ops[2]);
  return reg(dst);
}

Code *code_compile(const Expr *e, Arena *a) {
  Compiler C = {.arena = a};
  Operand res = compile(&C, e);
  Code *c = arena_alloc(a, sizeof *c);
  Ins *ins = arena_alloc(a, sizeof *ins * (size_t)(C.nins + 1));
  Value *consts = arena_alloc(a, sizeof *consts * (size_t)(C.nconsts + 1));
  Magic *magic = arena_alloc(a, sizeof *magic * (size_t)(C.nmagic + 1));
  if (C.nmagic) memcpy(magic, C.magic, sizeof *magic * (size_t)C.nmagic);
  if (C.nins) memcpy(ins, C.ins, sizeof *ins * (size_t)C.nins);
  if (C.nconsts) memcpy(consts, C.consts, sizeof *consts * (size_t)C.nconsts);
  const void **aux = NULL;
  if (C.aux) {
    aux = arena_alloc(a, sizeof *aux * (size_t)C.nconsts);
    memcpy(aux, C.aux, sizeof *aux * (size_t)(C.auxcap < C.nconsts ? C.auxcap : C.nconsts));
  }
  bool jumps = false;
  for (int k = 0; k < C.nins; k++)
    if (C.ins[k].op == OPC_JF || C.ins[k].op == OPC_JT || C.ins[k].op == OPC_JMP) jumps = true;
  *c = (Code){.ins = ins, .nins = C.nins, .magic = magic, .consts = consts, .aux = aux, .nregs = C.nregs,
              .names = C.names, .nsides = (uint8_t)C.nsides, .jumps = jumps, .kres = res.base, .res = res.idx};
  free(C.ins);
  free(C.consts);
  free(C.magic);
  free(C.aux);
  return c;
}

int code_length(const Code *c) {
  return c->nins;
}

/* ---- the evaluator ---- */

static int fail_text(char *err, size_t errlen, const char *msg) {
  if (err && errlen) snprintf(err, errlen, "%s", msg);
  return -1;
}

/* Copies a Value member by member, as value_put_* wrote it. A whole-struct copy right after those
 * stores reads 16 bytes that two smaller stores wrote, which x86 cannot forward from the store
 * buffer: that stall was a third of code_eval's time on the bench chain. */
static inline void copy(Value *d, const Value *s) {
  switch (s->type) {
  case TYPE_STRING: value_put_string(d, s->s.p, s->s.n); break;
  case TYPE_DOUBLE: value_put_double(d, s->d); break;
  case TYPE_BOOL: value_put_bool(d, s->b); break;
  default: value_put_int(d, s->i); break;
  }
}

/* Registers on the stack of code_eval; more go to a variable-length array in run_large. Over a run
 * (code_eval_run), code with more registers than RUN_MAX_REGS is evaluated row by row. */
enum { SMALL_REGS = 8, RUN_MAX_REGS = 64 };

/* What OPC_CALL instruction in gives its function as FnEnv.aux: what keep_pattern kept with its
 * second operand. */
static inline const void *call_aux(const Code *c, const Ins *in) {
  return c->aux && in->kb == BASE_CONST ? c->aux[in->b / sizeof(Value)] : NULL;
}

/* Runs c with its registers in regs. */
static inline __attribute__((always_inline)) int run(const Code *c, const EvalEnv *env, Value *regs, Value *out, char *err, size_t errlen) {
  Value names[2];
  if (c->names) {
    value_put_int(&names[0], env->seq);
    value_put_int(&names[1], env->index);
  }
  const char *base[NBASES] = {(const char *)c->consts, (const char *)env->attrs, (const char *)env->states,
                              (const char *)env->aggs, (const char *)names, (const char *)regs,
                              c->nsides > 0 ? (const char *)env->sides[0] : NULL,
                              c->nsides > 1 ? (const char *)env->sides[1] : NULL, (const char *)env->lets};
  char buf[SF_DOUBLE_CHARS];
  const Ins *ins = c->ins;
  for (int pc = 0; pc < c->nins; pc++) {
    const Ins *in = &ins[pc];
    const Value *A = (const Value *)(base[in->ka] + in->a), *B = (const Value *)(base[in->kb] + in->b);
    Value *d = (Value *)((char *)regs + in->dst);
    switch ((Opcode)in->op) {
    case OPC_MOV: copy(d, A); break;
    case OPC_JF: if (!A->b) pc = (int)in->c - 1; break;
    case OPC_JT: if (A->b) pc = (int)in->c - 1; break;
    case OPC_JMP: pc = (int)in->c - 1; break;
    case OPC_NEG_I:
      if (A->i == INT64_MIN) return fail_text(err, errlen, "integer overflow of unary '-'");
      value_put_int(d, -A->i);
      break;
    case OPC_NEG_D: value_put_double(d, -A->d); break;
    case OPC_NOT: value_put_bool(d, !A->b); break;
    case OPC_ADD_I: {
      int64_t r;
      if (__builtin_add_overflow(A->i, B->i, &r)) return fail_text(err, errlen, "integer overflow of '+'");
      value_put_int(d, r);
      break;
    }
    case OPC_SUB_I: {
      int64_t r;
      if (__builtin_sub_overflow(A->i, B->i, &r)) return fail_text(err, errlen, "integer overflow of '-'");
      value_put_int(d, r);
      break;
    }
    case OPC_MUL_I: {
      int64_t r;
      if (__builtin_mul_overflow(A->i, B->i, &r)) return fail_text(err, errlen, "integer overflow of '*'");
      value_put_int(d, r);
      break;
    }
    case OPC_DIV_I: {
      int64_t x = A->i, y = B->i;
      if (y == 0) return fail_text(err, errlen, "division by zero");
      if (y == -1 && x == INT64_MIN) return fail_text(err, errlen, "integer overflow of '/'");
      value_put_int(d, x / y);
      break;
    }
    case OPC_MOD_I: {
      int64_t x = A->i, y = B->i;
      if (y == 0) return fail_text(err, errlen, "modulo by zero");
      if (y == -1 && x == INT64_MIN) return fail_text(err, errlen, "integer overflow of '%'");
      value_put_int(d, x % y);
      break;
    }
    case OPC_DIV_IK: value_put_int(d, magic_div(&c->magic[in->c], A->i)); break;
    case OPC_MOD_IK: {
      int64_t x = A->i, q = magic_div(&c->magic[in->c], x);
      value_put_int(d, (int64_t)((uint64_t)x - (uint64_t)q * (uint64_t)B->i));
      break;
    }
    case OPC_EQ_I: value_put_bool(d, A->i == B->i); break;
    case OPC_NE_I: value_put_bool(d, A->i != B->i); break;
    case OPC_LT_I: value_put_bool(d, A->i < B->i); break;
    case OPC_LE_I: value_put_bool(d, A->i <= B->i); break;
    case OPC_GT_I: value_put_bool(d, A->i > B->i); break;
    case OPC_GE_I: value_put_bool(d, A->i >= B->i); break;
    case OPC_ADD_D: value_put_double(d, A->d + B->d); break;
    case OPC_SUB_D: value_put_double(d, A->d - B->d); break;
    case OPC_MUL_D: value_put_double(d, A->d * B->d); break;
    case OPC_DIV_D: value_put_double(d, A->d / B->d); break;
    case OPC_EQ_D: value_put_bool(d, A->d == B->d); break;
    case OPC_NE_D: value_put_bool(d, A->d != B->d); break;
    case OPC_LT_D: value_put_bool(d, A->d < B->d); break;
    case OPC_LE_D: value_put_bool(d, A->d <= B->d); break;
    case OPC_GT_D: value_put_bool(d, A->d > B->d); break;
    case OPC_GE_D: value_put_bool(d, A->d >= B->d); break;
    case OPC_CAT_S: *d = eval_concat(env->scratch, A->s.p, A->s.n, B->s.p, B->s.n); break;
    case OPC_EQ_S: value_put_bool(d, value_compare(A, B) == 0); break;
    case OPC_NE_S: value_put_bool(d, value_compare(A, B) != 0); break;
    case OPC_LT_S: value_put_bool(d, value_compare(A, B) < 0); break;
    case OPC_LE_S: value_put_bool(d, value_compare(A, B) <= 0); break;
    case OPC_GT_S: value_put_bool(d, value_compare(A, B) > 0); break;
    case OPC_GE_S: value_put_bool(d, value_compare(A, B) >= 0); break;
    case OPC_EQ_B: value_put_bool(d, A->b == B->b); break;
    case OPC_NE_B: value_put_bool(d, A->b != B->b); break;
    case OPC_ABS_I:
      if (A->i == INT64_MIN) return fail_text(err, errlen, "integer overflow of abs()");
      value_put_int(d, A->i < 0 ? -A->i : A->i);
      break;
    case OPC_ABS_D: value_put_double(d, fabs(A->d)); break;
    case OPC_MIN: copy(d, value_compare(B, A) < 0 ? B : A); break;
    case OPC_MAX: copy(d, value_compare(B, A) > 0 ? B : A); break;
    case OPC_INT_B: value_put_int(d, A->b); break;
    case OPC_INT_D: {
      double x = A->d;
      /* [-2^63, 2^63) truncates into range; the comparison is false for nan too */
      if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0))
        return eval_fail_convert(err, errlen, A, "int");
      value_put_int(d, (int64_t)x);
      break;
    }
    case OPC_INT_S: {
      Value v;
      if (value_parse(TYPE_INT, A->s.p, A->s.n, &v, NULL)) return eval_fail_convert(err, errlen, A, "int");
      copy(d, &v);
      break;
    }
    case OPC_DOUBLE_I: value_put_double(d, (double)A->i); break;
    case OPC_DOUBLE_S: {
      Value v;
      if (value_parse(TYPE_DOUBLE, A->s.p, A->s.n, &v, NULL)) return eval_fail_convert(err, errlen, A, "double");
      copy(d, &v);
      break;
    }
    case OPC_STR_I: {
      size_t n = int_format(A->i, buf);
      *d = eval_concat(env->scratch, buf, n, NULL, 0);
      break;
    }
    case OPC_STR_D: {
      size_t n = value_format_double(A->d, buf, sizeof buf);
      *d = eval_concat(env->scratch, buf, n, NULL, 0);
      break;
    }
    case OPC_STR_B: *d = A->b ? value_string("true", 4) : value_string("false", 5); break;
    case OPC_LEN: value_put_int(d, (int64_t)A->s.n); break;
    case OPC_SUBSTR: {
      const Value *C = (const Value *)(base[in->kc] + in->c);
      uint64_t len = A->s.n;
      int64_t from = B->i, n = C->i;
      uint64_t f = from < 0 ? 0 : (uint64_t)from > len ? len : (uint64_t)from;
      uint64_t m = n < 0 ? 0 : (uint64_t)n > len - f ? len - f : (uint64_t)n;
      value_put_string(d, A->s.p + f, (size_t)m);
      break;
    }
    case OPC_HASH: value_put_int(d, (int64_t)(value_hash(A, SF_HASH_SEED) & (uint64_t)INT64_MAX)); break;
    case OPC_RAND: value_put_int(d, sf_rand(A->i)); break;
    default: {
      if (in->op <= OPC_CALL || in->op >= OPC_CALL + FUNC_COUNT) sf_die("bad opcode %d", (int)in->op);
      FnEnv fx = {.scratch = env->scratch, .aux = call_aux(c, in)};
      if (fn_table[in->op - OPC_CALL](A, B, (const Value *)(base[in->kc] + in->c), &fx, d, err, errlen)) return -1;
      break;
    }
    }
  }
  copy(out, (const Value *)base[c->kres] + c->res);
  return 0;
}

static __attribute__((noinline)) int run_large(const Code *c, const EvalEnv *env, Value *out, char *err,
                                               size_t errlen) {
  Value regs[c->nregs];
  return run(c, env, regs, out, err, errlen);
}

int code_eval(const Code *c, const EvalEnv *env, Value *out, char *err, size_t errlen) {
  switch (c->nins ? NBASES : c->kres) { /* an expression that is one operand reads it */
  case BASE_CONST: *out = c->consts[c->res]; return 0;
  case BASE_ATTR: *out = env->attrs[c->res]; return 0;
  case BASE_STATE: *out = env->states[c->res]; return 0;
  case BASE_AGG: *out = env->aggs[c->res]; return 0;
  case BASE_SIDE0: *out = env->sides[0][c->res]; return 0;
  case BASE_SIDE1: *out = env->sides[1][c->res]; return 0;
  case BASE_LET: *out = env->lets[c->res]; return 0;
  default: break;
  }
  if (c->nregs > SMALL_REGS) return run_large(c, env, out, err, errlen);
  Value regs[SMALL_REGS];
  return run(c, env, regs, out, err, errlen);
}

/* ---- the evaluator over a run of rows ---- */

/* Where an operand of an instruction is for row i: p + i * stride, or rows[i] + off when every row
 * has its own attributes. */
typedef struct Src {
  const char *p;            /* the operand of row 0 (rows NULL) */
  size_t stride;            /* bytes from one row's operand to the next's (0: the same for all) */
  const Value *const *rows; /* per row its attributes (BASE_ATTR of a run with attrs) */
  uint32_t off;             /* the operand's byte offset in rows[i] */
} Src;

static inline const Value *src_at(const Src *s, int i) {
  if (s->rows) return (const Value *)((const char *)s->rows[i] + s->off);
  return (const Value *)(s->p + (size_t)i * s->stride);
}

/* What a run's operands are resolved against. */
typedef struct RunEnv {
  const char *base[NBASES];   /* constants, env->attrs, states, aggs, names (per row), registers, sides */
  const Value *const *attrs;  /* per row its attributes, or NULL */
  size_t rs;                  /* bytes of one row's registers */
} RunEnv;

static inline Src source(const RunEnv *x, int k, uint32_t off) {
  if (k == BASE_ATTR && x->attrs) return (Src){.rows = x->attrs, .off = off};
  const char *b = x->base[k];
  size_t stride = k == BASE_REG ? x->rs : k == BASE_NAME ? 2 * sizeof(Value) : 0;
  return (Src){.p = b ? b + off : NULL, .stride = stride};
}

/* code_eval row by row: what code_eval_run does for code too large for its registers. */
static int eval_rows(const Code *c, const EvalEnv *env, const Value *const *attrs, const int64_t *seqs, int n,
                     char *out, size_t stride) {
  EvalEnv e = *env;
  for (int r = 0; r < n; r++) {
    if (attrs) e.attrs = attrs[r];
    if (seqs) e.seq = seqs[r];
    if (code_eval(c, &e, (Value *)(out + (size_t)r * stride), NULL, 0)) return r;
  }
  return n;
}

/* Each instruction runs over the selected rows (0..nsel-1, or sel[0..nsel)): A, B and d are row i's operands and
 * register. A fault of row i ends the rows at i (limit): the rows before it go on. The loop comes
 * in three forms, so that the common ones test nothing per row: dense rows with operands at a
 * stride (constants, registers, seq), dense rows with A an attribute of rows of their own and B at
 * a stride (an attribute against a constant), and anything else. */
#define EACH_LOOP(I, OPA, OPB, ...)                                      \
  for (int k_ = 0; k_ < nsel; k_++) {                                    \
    const int i = (I);                                                   \
    const Value *A = (OPA), *B = (OPB);                                  \
    Value *d = (Value *)(regs + (size_t)i * x.rs + in->dst);             \
    (void)A, (void)B, (void)d;                                           \
    __VA_ARGS__                                                          \
  }
#define EACH(...)                                                                                          \
  {                                                                                                        \
    if (dense && !sa.rows && !sb.rows)                                                                     \
      EACH_LOOP(k_, (const Value *)(sa.p + (size_t)i * sa.stride), (const Value *)(sb.p + (size_t)i * sb.stride), \
                __VA_ARGS__)                                                                               \
    else if (dense && sa.rows && !sb.rows)                                                                 \
      EACH_LOOP(k_, (const Value *)((const char *)sa.rows[i] + sa.off),                                   \
                (const Value *)(sb.p + (size_t)i * sb.stride), __VA_ARGS__)                                \
    else                                                                                                   \
      EACH_LOOP(dense ? k_ : sel[k_], src_at(&sa, i), src_at(&sb, i), __VA_ARGS__)                         \
  }
#define FAULT() { limit = i; nsel = k_; break; }

int code_eval_run(const Code *c, const EvalEnv *env, const Value *const *attrs, const int64_t *seqs, int n,
                  Value *out) {
  return code_eval_run_to(c, env, attrs, seqs, n, out, sizeof *out);
}

int code_eval_run_to(const Code *c, const EvalEnv *env, const Value *const *attrs, const int64_t *seqs, int n,
                     Value *out_, size_t stride) {
  char *out = (char *)out_;
#define OUT(r) ((Value *)(out + (size_t)(r) * stride))
  if (n <= 0) return 0;
  if (n > CODE_RUN_MAX || c->nregs > RUN_MAX_REGS) return eval_rows(c, env, attrs, seqs, n, out, stride);
  RunEnv x = {.base = {(const char *)c->consts, (const char *)env->attrs, (const char *)env->states,
                       (const char *)env->aggs, NULL, NULL, c->nsides > 0 ? (const char *)env->sides[0] : NULL,
                       c->nsides > 1 ? (const char *)env->sides[1] : NULL, (const char *)env->lets},
              .attrs = attrs, .rs = sizeof(Value) * (size_t)(c->nregs ? c->nregs : 1)};
  if (c->names) {
    Value *names = arena_alloc_raw(env->scratch, sizeof *names * 2 * (size_t)n);
    for (int r = 0; r < n; r++) {
      value_put_int(&names[2 * r], seqs ? seqs[r] : env->seq);
      value_put_int(&names[2 * r + 1], env->index);
    }
    x.base[BASE_NAME] = (const char *)names;
  }
  char *regs = c->nins ? arena_alloc_raw(env->scratch, x.rs * (size_t)n) : NULL; /* written before read */
  x.base[BASE_REG] = regs;
  /* The rows an instruction runs for: 0..nsel-1 while dense (code without jumps), else sel[] */
  int sel[CODE_RUN_MAX], nsel = n, limit = n;
  const bool dense = !c->jumps;
  if (!dense)
    for (int r = 0; r < n; r++) sel[r] = r;
  /* Jumps (all forward): a row that jumps waits for its target (wait[row]); parked[pc] counts the
   * rows waiting for instruction pc, which join the selection again there, in row order. */
  int wait[CODE_RUN_MAX];
  int *parked = NULL;
  if (c->jumps) {
    memset(wait, 0, sizeof wait[0] * (size_t)n);
    parked = arena_alloc_raw(env->scratch, sizeof *parked * (size_t)(c->nins + 1));
    memset(parked, 0, sizeof *parked * (size_t)(c->nins + 1));
  }
  char buf[SF_DOUBLE_CHARS];
  const Ins *ins = c->ins;
  for (int pc = 0; pc <= c->nins; pc++) {
    if (parked && parked[pc]) {
      nsel = 0;
      for (int r = 0; r < limit; r++)
        if (wait[r] <= pc) sel[nsel++] = r;
    }
    if (pc == c->nins) break;
    const Ins *in = &ins[pc];
    Src sa = source(&x, in->ka, in->a), sb = source(&x, in->kb, in->b);
    switch ((Opcode)in->op) {
    case OPC_MOV: EACH(copy(d, A);) break;
    case OPC_JF:
    case OPC_JT: {
      bool when = in->op == OPC_JT;
      int m = 0;
      for (int k = 0; k < nsel; k++) {
        int i = sel[k];
        if (src_at(&sa, i)->b == when) {
          wait[i] = (int)in->c;
          parked[in->c]++;
        } else
          sel[m++] = i;
      }
      nsel = m;
      break;
    }
    case OPC_JMP:
      for (int k = 0; k < nsel; k++) wait[sel[k]] = (int)in->c;
      parked[in->c] += nsel;
      nsel = 0;
      break;
    case OPC_NEG_I: EACH(if (A->i == INT64_MIN) FAULT() value_put_int(d, -A->i);) break;
    case OPC_NEG_D: EACH(value_put_double(d, -A->d);) break;
    case OPC_NOT: EACH(value_put_bool(d, !A->b);) break;
    case OPC_ADD_I: EACH(int64_t r; if (__builtin_add_overflow(A->i, B->i, &r)) FAULT() value_put_int(d, r);) break;
    case OPC_SUB_I: EACH(int64_t r; if (__builtin_sub_overflow(A->i, B->i, &r)) FAULT() value_put_int(d, r);) break;
    case OPC_MUL_I: EACH(int64_t r; if (__builtin_mul_overflow(A->i, B->i, &r)) FAULT() value_put_int(d, r);) break;
    case OPC_DIV_I:
      EACH(int64_t p = A->i, q = B->i; if (q == 0 || (q == -1 && p == INT64_MIN)) FAULT() value_put_int(d, p / q);)
      break;
    case OPC_MOD_I:
      EACH(int64_t p = A->i, q = B->i; if (q == 0 || (q == -1 && p == INT64_MIN)) FAULT() value_put_int(d, p % q);)
      break;
    case OPC_DIV_IK: {
      const Magic *m = &c->magic[in->c];
      EACH(value_put_int(d, magic_div(m, A->i));)
      break;
    }
    case OPC_MOD_IK: {
      const Magic *m = &c->magic[in->c];
      EACH(int64_t p = A->i, q = magic_div(m, p); value_put_int(d, (int64_t)((uint64_t)p - (uint64_t)q * (uint64_t)B->i));)
      break;
    }
    case OPC_EQ_I: EACH(value_put_bool(d, A->i == B->i);) break;
    case OPC_NE_I: EACH(value_put_bool(d, A->i != B->i);) break;
    case OPC_LT_I: EACH(value_put_bool(d, A->i < B->i);) break;
    case OPC_LE_I: EACH(value_put_bool(d, A->i <= B->i);) break;
    case OPC_GT_I: EACH(value_put_bool(d, A->i > B->i);) break;
    case OPC_GE_I: EACH(value_put_bool(d, A->i >= B->i);) break;
    case OPC_ADD_D: EACH(value_put_double(d, A->d + B->d);) break;
    case OPC_SUB_D: EACH(value_put_double(d, A->d - B->d);) break;
    case OPC_MUL_D: EACH(value_put_double(d, A->d * B->d);) break;
    case OPC_DIV_D: EACH(value_put_double(d, A->d / B->d);) break;
    case OPC_EQ_D: EACH(value_put_bool(d, A->d == B->d);) break;
    case OPC_NE_D: EACH(value_put_bool(d, A->d != B->d);) break;
    case OPC_LT_D: EACH(value_put_bool(d, A->d < B->d);) break;
    case OPC_LE_D: EACH(value_put_bool(d, A->d <= B->d);) break;
    case OPC_GT_D: EACH(value_put_bool(d, A->d > B->d);) break;
    case OPC_GE_D: EACH(value_put_bool(d, A->d >= B->d);) break;
    case OPC_CAT_S: EACH(*d = eval_concat(env->scratch, A->s.p, A->s.n, B->s.p, B->s.n);) break;
    case OPC_EQ_S: EACH(value_put_bool(d, value_compare(A, B) == 0);) break;
    case OPC_NE_S: EACH(value_put_bool(d, value_compare(A, B) != 0);) break;
    case OPC_LT_S: EACH(value_put_bool(d, value_compare(A, B) < 0);) break;
    case OPC_LE_S: EACH(value_put_bool(d, value_compare(A, B) <= 0);) break;
    case OPC_GT_S: EACH(value_put_bool(d, value_compare(A, B) > 0);) break;
    case OPC_GE_S: EACH(value_put_bool(d, value_compare(A, B) >= 0);) break;
    case OPC_EQ_B: EACH(value_put_bool(d, A->b == B->b);) break;
    case OPC_NE_B: EACH(value_put_bool(d, A->b != B->b);) break;
    case OPC_ABS_I: EACH(if (A->i == INT64_MIN) FAULT() value_put_int(d, A->i < 0 ? -A->i : A->i);) break;
    case OPC_ABS_D: EACH(value_put_double(d, fabs(A->d));) break;
    case OPC_MIN: EACH(copy(d, value_compare(B, A) < 0 ? B : A);) break;
    case OPC_MAX: EACH(copy(d, value_compare(B, A) > 0 ? B : A);) break;
    case OPC_INT_B: EACH(value_put_int(d, A->b);) break;
    case OPC_INT_D:
      EACH(double v = A->d; if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) FAULT()
           value_put_int(d, (int64_t)v);)
      break;
    case OPC_INT_S: EACH(Value v; if (value_parse(TYPE_INT, A->s.p, A->s.n, &v, NULL)) FAULT() copy(d, &v);) break;
    case OPC_DOUBLE_I: EACH(value_put_double(d, (double)A->i);) break;
    case OPC_DOUBLE_S:
      EACH(Value v; if (value_parse(TYPE_DOUBLE, A->s.p, A->s.n, &v, NULL)) FAULT() copy(d, &v);)
      break;
    case OPC_STR_I: EACH(size_t m = int_format(A->i, buf); *d = eval_concat(env->scratch, buf, m, NULL, 0);) break;
    case OPC_STR_D:
      EACH(size_t m = value_format_double(A->d, buf, sizeof buf); *d = eval_concat(env->scratch, buf, m, NULL, 0);)
      break;
    case OPC_STR_B: EACH(*d = A->b ? value_string("true", 4) : value_string("false", 5);) break;
    case OPC_LEN: EACH(value_put_int(d, (int64_t)A->s.n);) break;
    case OPC_SUBSTR: {
      Src sc = source(&x, in->kc, in->c);
      EACH(const Value *C = src_at(&sc, i); uint64_t len = A->s.n; int64_t from = B->i, m = C->i;
           uint64_t f = from < 0 ? 0 : (uint64_t)from > len ? len : (uint64_t)from;
           uint64_t w = m < 0 ? 0 : (uint64_t)m > len - f ? len - f : (uint64_t)m;
           value_put_string(d, A->s.p + f, (size_t)w);)
      break;
    }
    case OPC_HASH: EACH(value_put_int(d, (int64_t)(value_hash(A, SF_HASH_SEED) & (uint64_t)INT64_MAX));) break;
    case OPC_RAND: EACH(value_put_int(d, sf_rand(A->i));) break;
    default: {
      if (in->op <= OPC_CALL || in->op >= OPC_CALL + FUNC_COUNT) sf_die("bad opcode %d", (int)in->op);
      FnImpl *fn = fn_table[in->op - OPC_CALL];
      FnEnv fx = {.scratch = env->scratch, .aux = call_aux(c, in)};
      Src sc = source(&x, in->kc, in->c);
      EACH(if (fn(A, B, src_at(&sc, i), &fx, d, NULL, 0)) FAULT())
      break;
    }
    }
  }
  /* the result of each row before the first fault */
  Src res = source(&x, c->kres, (uint32_t)(c->res * (int32_t)sizeof(Value)));
  if (c->nins || c->kres == BASE_NAME) {
    if (limit == 0) return 0;
    /* the checker fixed one type for every row; a register or seq (no rows of their own) is read
     * at its stride without a test per row */
#define COPY_OUT(GET)                                                                    \
  switch (src_at(&res, 0)->type) {                                                       \
  case TYPE_INT: for (int r = 0; r < limit; r++) value_put_int(OUT(r), (GET)->i); break; \
  case TYPE_DOUBLE: for (int r = 0; r < limit; r++) value_put_double(OUT(r), (GET)->d); break; \
  case TYPE_BOOL: for (int r = 0; r < limit; r++) value_put_bool(OUT(r), (GET)->b); break; \
  default: for (int r = 0; r < limit; r++) copy(OUT(r), (GET)); break;                   \
  }
    if (res.rows) {
      COPY_OUT(src_at(&res, r))
    } else {
      COPY_OUT((const Value *)(res.p + (size_t)r * res.stride))
    }
#undef COPY_OUT
  } else
    for (int r = 0; r < limit; r++) *OUT(r) = *src_at(&res, r);
  return limit;
#undef OUT
}

#undef EACH
#undef EACH_LOOP
#undef FAULT
