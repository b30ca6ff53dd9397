/* join.c: the Join operator's language (docs/language.md, "Joins"): its `on`, `window` and
 * `lateness` parameters read into a JoinSpec (by sf-xform's checks and by sf-exec, which reads a
 * checked graph), its expressions checked in a scope of two sides, `left.` and `right.`, and its
 * output attributes set or forwarded from exactly one side. */
#include "sf.h"

#include <stdlib.h>
#include <string.h>

const Schema *join_side_schema(const Op *op, int side) {
  if (side >= op->ninputs || op->inputs[side].nstreams < 1 || !op->inputs[side].streams) return NULL;
  const Stream *s = op->inputs[side].streams[0];
  return s ? s->schema : NULL;
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *skip_space(const char *p) {
  while (is_space(*p)) p++;
  return p;
}

static bool is_name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

/* One `SIDE.NAME` at *pp: its side (0 left, 1 right) and name (in a), *pp moved past it; -1 when
 * the text there is not one. */
static int read_side_name(Arena *a, const char **pp, const char **name) {
  const char *p = *pp;
  int side = !strncmp(p, "left.", 5) ? 0 : !strncmp(p, "right.", 6) ? 1 : -1;
  if (side < 0) return -1;
  p += side == 0 ? 5 : 6;
  const char *start = p;
  if (!is_name_char(*p, true)) return -1;
  while (is_name_char(*p, false)) p++;
  *name = arena_strndup(a, start, (size_t)(p - start));
  *pp = p;
  return side;
}

/* "parameter 'on' of operator 'j' must be ..." at the parameter's line. */
static void bad_on(Diag *d, const Op *op, const Param *p, const char *why) {
  if (d)
    diag_error(d, p->line, 0, "parameter 'on' of operator '%s' must be pairs 'left.A = right.B' joined by 'and'%s, "
               "got '%s'", op->name, why, p->text);
}

/* Reads `on`: pairs of a left and a right attribute of one type. 0, or -1 after reporting. */
static int read_on(const Op *op, const Param *p, Arena *a, JoinSpec *j, Diag *d) {
  const Schema *sch[2] = {join_side_schema(op, 0), join_side_schema(op, 1)};
  int cap = 4;
  j->key[0] = arena_alloc(a, sizeof(int) * (size_t)cap);
  j->key[1] = arena_alloc(a, sizeof(int) * (size_t)cap);
  j->nkeys = 0;
  const char *t = skip_space(p->text);
  int bad = 0;
  for (;;) {
    const char *names[2] = {NULL, NULL};
    int s1 = read_side_name(a, &t, &names[0]);
    t = skip_space(t);
    bool eq = *t == '=';
    if (eq) t = skip_space(t + (t[1] == '=' ? 2 : 1));
    const char *n2 = NULL;
    int s2 = eq ? read_side_name(a, &t, &n2) : -1;
    if (s1 < 0 || s2 < 0) {
      bad_on(d, op, p, "");
      return -1;
    }
    if (s1 == s2) {
      bad_on(d, op, p, s1 == 0 ? " (each pair one left and one right attribute; this one is left = left)"
                               : " (each pair one left and one right attribute; this one is right = right)");
      return -1;
    }
    if (s1 == 1) {
      names[1] = names[0];
      names[0] = n2;
    } else {
      names[1] = n2;
    }
    int slot[2];
    for (int s = 0; s < 2; s++) {
      slot[s] = sch[s] ? schema_find_attr(sch[s], names[s]) : -1;
      if (sch[s] && slot[s] < 0) {
        const char *hint = schema_suggest_attr(sch[s], names[s]);
        if (d)
          diag_error(d, p->line, 0, "parameter 'on' of operator '%s' names '%s.%s', which %s input schema '%s' "
                     "does not have" DIAG_HINT_FMT, op->name, s ? "right" : "left", names[s], s ? "right" : "left", sch[s]->name,
                     DIAG_HINT(hint));
        bad = 1;
      }
    }
    if (slot[0] >= 0 && slot[1] >= 0 && sch[0]->attrs[slot[0]].type != sch[1]->attrs[slot[1]].type) {
      if (d)
        diag_error(d, p->line, 0, "parameter 'on' of operator '%s' joins left.%s (%s) with right.%s (%s): the two "
                   "attributes of a pair must have one type", op->name, names[0],
                   type_name(sch[0]->attrs[slot[0]].type), names[1], type_name(sch[1]->attrs[slot[1]].type));
      bad = 1;
    }
    if (j->nkeys == cap) {
      cap *= 2;
      for (int s = 0; s < 2; s++) {
        int *k = arena_alloc(a, sizeof(int) * (size_t)cap);
        memcpy(k, j->key[s], sizeof(int) * (size_t)j->nkeys);
        j->key[s] = k;
      }
    }
    j->key[0][j->nkeys] = slot[0];
    j->key[1][j->nkeys] = slot[1];
    j->nkeys++;
    t = skip_space(t);
    if (!*t) break;
    if (strncmp(t, "and", 3) || !is_space(t[3])) {
      bad_on(d, op, p, "");
      return -1;
    }
    t = skip_space(t + 3);
  }
  return bad ? -1 : 0;
}

/* Reads `window`: `interval LOWER UPPER` or `tumbling time SIZE`. 0, or -1 after reporting. */
static int read_window(const Op *op, const Param *p, JoinSpec *j, Diag *d) {
  const char *t = skip_space(p->text);
  char word[3][32];
  int n = 0;
  while (*t && n < 3) {
    size_t len = 0;
    while (t[len] && !is_space(t[len])) len++;
    if (len >= sizeof word[0]) break;
    memcpy(word[n], t, len);
    word[n][len] = 0;
    n++;
    t = skip_space(t + len);
  }
  bool ok = false;
  if (!*t && n == 3 && !strcmp(word[0], "interval")) {
    j->tumbling = false;
    ok = number_read(word[1], strlen(word[1]), INT64_MIN, INT64_MAX, &j->lower) == NUM_OK &&
         number_read(word[2], strlen(word[2]), INT64_MIN, INT64_MAX, &j->upper) == NUM_OK;
    if (ok && j->lower > j->upper) {
      if (d)
        diag_error(d, p->line, 0, "parameter 'window' of operator '%s': LOWER %lld is above UPPER %lld (a right "
                   "tuple matches when its time minus the left one's is in [LOWER, UPPER]), got '%s'", op->name,
                   (long long)j->lower, (long long)j->upper, p->text);
      return -1;
    }
  } else if (!*t && n == 3 && !strcmp(word[0], "tumbling") && !strcmp(word[1], "time")) {
    j->tumbling = true;
    ok = number_read(word[2], strlen(word[2]), 1, INT64_MAX, &j->size) == NUM_OK;
  }
  if (!ok) {
    if (d)
      diag_error(d, p->line, 0, "parameter 'window' of operator '%s' must be 'interval LOWER UPPER' (integers, "
                 "LOWER <= UPPER) or 'tumbling time SIZE' (SIZE a positive integer), got '%s'", op->name, p->text);
    return -1;
  }
  /* the bounds a tick is delayed by must not overflow when added to a lateness */
  if (!j->tumbling && (j->lower < -(INT64_MAX / 4) || j->upper > INT64_MAX / 4)) {
    if (d)
      diag_error(d, p->line, 0, "parameter 'window' of operator '%s': bounds must be within +-%lld, got '%s'",
                 op->name, (long long)(INT64_MAX / 4), p->text);
    return -1;
  }
  if (j->tumbling && j->size > INT64_MAX / 4) {
    if (d)
      diag_error(d, p->line, 0, "parameter 'window' of operator '%s': SIZE must be at most %lld, got '%s'", op->name,
                 (long long)(INT64_MAX / 4), p->text);
    return -1;
  }
  return 0;
}

int join_spec(const Op *op, Arena *a, JoinSpec *j, Diag *d) {
  memset(j, 0, sizeof *j);
  int rc = 0;
  const Param *on = op_find_param(op, "on"), *win = op_find_param(op, "window"), *late = op_find_param(op, "lateness");
  if (on && read_on(op, on, a, j, d) < 0) rc = -1;
  if (!on) rc = -1;
  if (win && read_window(op, win, j, d) < 0) rc = -1;
  if (!win) rc = -1;
  if (late && number_read(late->text, strlen(late->text), 0, INT64_MAX / 4, &j->lateness) != NUM_OK) {
    if (d)
      diag_error(d, late->line, 0, "parameter 'lateness' of operator '%s' must be an integer from 0 to %lld, got "
                 "'%s'", op->name, (long long)(INT64_MAX / 4), late->text);
    rc = -1;
  }
  return rc;
}

int64_t join_tick_delay(const JoinSpec *j) {
  if (j->tumbling) return j->lateness + j->size;
  int64_t m = 0;
  if (j->upper > m) m = j->upper;
  if (-j->lower > m) m = -j->lower;
  return j->lateness + m;
}

int join_forward_side(const Op *op, const Schema *out, int a, int *from) {
  const Attr *at = &out->attrs[a];
  int side = -1, n = 0;
  for (int s = 0; s < 2; s++) {
    const Schema *in = join_side_schema(op, s);
    int k = in ? schema_find_attr(in, at->name) : -1;
    if (k >= 0 && in->attrs[k].type == at->type) {
      side = s;
      if (from) *from = k;
      n++;
    }
  }
  return n == 1 ? side : n == 0 ? -1 : -2;
}

void check_join(Graph *g, Op *op, Diag *d, ExprScope *scope) {
  const Schema *sch[2] = {join_side_schema(op, 0), join_side_schema(op, 1)};
  const Schema *out = op_output_schema(op);
  if (!sch[0] || !sch[1] || !out) return;
  const Param *w = op_find_param(op, "where");
  if (w) {
    TextOrigin at = w->origin.raw ? w->origin : (TextOrigin){ .line = w->line };
    Expr *e = expr_parse(g->arena, w->text, d, &at);
    scope->nlets = op->nlets; /* `where` sees every let */
    Type t = e ? expr_check(e, scope, d, &at) : TYPE_NONE;
    if (e && t != TYPE_NONE && t != TYPE_BOOL)
      diag_error(d, w->line, 0, "parameter 'where' of operator '%s' must be bool, got %s", op->name, type_name(t));
    else if (t == TYPE_BOOL)
      op->where = e;
  }
  bool *set = calloc((size_t)out->nattrs + 1, 1);
  for (int i = 0; i < op->nsets; i++) {
    Set *s = &op->sets[i];
    s->slot = schema_find_attr(out, s->attr);
    if (s->slot < 0) {
      const char *hint = schema_suggest_attr(out, s->attr);
      diag_error(d, s->line, 0, "operator '%s' sets '%s', which output schema '%s' does not have" DIAG_HINT_FMT,
                 op->name, s->attr, out->name, DIAG_HINT(hint));
      continue;
    }
    if (set[s->slot]) diag_error(d, s->line, 0, "operator '%s' sets '%s' twice", op->name, s->attr);
    set[s->slot] = true;
    TextOrigin at = s->origin.raw ? s->origin : (TextOrigin){ .line = s->line };
    Expr *e = expr_parse(g->arena, s->text, d, &at);
    scope->nlets = s->lets_before;
    Type t = e ? expr_check(e, scope, d, &at) : TYPE_NONE;
    if (!e || t == TYPE_NONE) continue;
    if (t != out->attrs[s->slot].type) {
      diag_error(d, s->line, 0, "operator '%s' sets '%s' to %s %s, but '%s' is %s in schema '%s'", op->name, s->attr,
                 t == TYPE_INT ? "an" : "a", type_name(t), s->attr, type_name(out->attrs[s->slot].type), out->name);
      continue;
    }
    s->expr = e;
  }
  for (int a = 0; a < out->nattrs; a++) {
    if (set[a]) continue;
    int side = join_forward_side(op, out, a, NULL);
    if (side == -2)
      diag_error(d, op->line, 0, "output attribute '%s' of Join operator '%s' is on both sides (left schema '%s' and "
                 "right schema '%s'): it must be set, to left.%s or right.%s", out->attrs[a].name, op->name,
                 sch[0]->name, sch[1]->name, out->attrs[a].name, out->attrs[a].name);
    else if (side == -1)
      diag_error(d, op->line, 0, "output attribute '%s' of Join operator '%s' is neither set nor forwarded from one "
                 "side (left schema '%s', right schema '%s', with its name and type)", out->attrs[a].name, op->name,
                 sch[0]->name, sch[1]->name);
  }
  free(set);
}
