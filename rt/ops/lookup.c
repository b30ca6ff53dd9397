/* lookup.c: the Lookup kind. When it opens, it reads a CSV table (`file`, with a header naming the
 * columns of the declared schema `schema` in any order, other columns skipped) into memory and an
 * index on the key columns of `on`; then each input tuple looks its key up: on a match, its lets
 * and sets are evaluated with `table.NAME` naming the matching row (EvalEnv.sides[0]) and one
 * tuple is emitted, built like a Functor's (the sets, and the other output attributes forwarded
 * from the input by name); without one, the tuple is dropped (`missing` = `drop`, the default) or
 * goes on with every `table.` value its type's zero (`keep`: 0, 0.0, "", false).
 *
 * Stateless: the table is only read, and every replica reads it for itself, so nothing goes into
 * checkpoints. Keys compare as value_equal does (Dedup's equality: -0.0 is 0.0), and hash with
 * value_hash. Two rows of one key are an error of the start-up naming the file, the later row's
 * line and the key, as the table's other errors (csv.h's, a missing column, a field that is not of
 * its type) name the file and the line:
 *   rates.csv:7: error: duplicate key (cur="EUR"), first on line 3
 * Strings of the table live in the operator's arena; an output tuple copies what it takes. */
#include "exec_priv.h" /* Exec.g: the graph, for the table's schema */
#include "keyed.h"
#include "rows.h"       /* csv.h, and a field's type as the sources name it */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct Lookup {
  Arena *arena;        /* the table, the index, the plans and the compiled expressions */
  OutPlan plan;        /* how output tuples are built */
  LetPlan lets;        /* the <let>s, evaluated after the lookup */
  const Schema *table; /* the table's schema */
  const char *path;    /* `file` */
  int nkeys;           /* pairs of `on` */
  int *col;            /* per pair: its table attribute */
  int *slot;           /* per pair: its input attribute */
  Value *rows;         /* the table: nrows rows of table->nattrs values (malloc'd) */
  size_t nrows, caprows;
  uint32_t *index;     /* open addressing on the key: row + 1, 0 empty (cap slots, a power of two) */
  uint64_t *hashes;    /* the hash of each slot's row */
  size_t cap;
  bool keep;           /* missing = keep */
  Value *zeros;        /* keep: the row of a missing key */
} Lookup;

static uint64_t key_hash(const Lookup *l, const Value *v, const int *at) {
  uint64_t h = SF_HASH_SEED;
  for (int k = 0; k < l->nkeys; k++) h = value_hash(&v[at[k]], h);
  return h;
}

/* The table row whose key is the values v[at[k]], or NULL. */
static const Value *find(const Lookup *l, const Value *v, const int *at) {
  if (!l->cap) return NULL;
  uint64_t h = key_hash(l, v, at);
  for (size_t i = h & (l->cap - 1);; i = (i + 1) & (l->cap - 1)) {
    uint32_t r = l->index[i];
    if (!r) return NULL;
    if (l->hashes[i] != h) continue;
    const Value *row = l->rows + (size_t)(r - 1) * (size_t)l->table->nattrs;
    bool same = true;
    for (int k = 0; k < l->nkeys && same; k++) same = value_equal(&row[l->col[k]], &v[at[k]]);
    if (same) return row;
  }
}

/* Writes row's key as "(cur="EUR", day=3)" into buf. */
static void key_text(const Lookup *l, const Value *row, char *buf, size_t cap) {
  Buf b;
  buf_init(&b);
  buf_putc(&b, '(');
  for (int k = 0; k < l->nkeys; k++) {
    const Value *v = &row[l->col[k]];
    if (k) buf_puts(&b, ", ");
    buf_puts(&b, l->table->attrs[l->col[k]].name);
    buf_putc(&b, '=');
    if (v->type == TYPE_STRING) buf_putc(&b, '"');
    value_format(v, &b);
    if (v->type == TYPE_STRING) buf_putc(&b, '"');
  }
  buf_putc(&b, ')');
  snprintf(buf, cap, "%s", b.p);
  buf_release(&b);
}

/* Indexes every row; a second row of a key fails (lines: each row's line in the file). */
static int build_index(OpInst *op, Lookup *l, const int64_t *lines) {
  if (l->nrows > UINT32_MAX - 1) return rt_fail(op, "'%s': more than %u rows", l->path, UINT32_MAX - 1);
  l->cap = 16;
  while (l->cap < l->nrows * 2) l->cap *= 2;
  l->index = arena_alloc(l->arena, sizeof *l->index * l->cap);
  l->hashes = arena_alloc(l->arena, sizeof *l->hashes * l->cap);
  for (size_t r = 0; r < l->nrows; r++) {
    const Value *row = l->rows + r * (size_t)l->table->nattrs;
    const Value *old = find(l, row, l->col);
    if (old) {
      char key[512];
      key_text(l, row, key, sizeof key);
      size_t first = (size_t)(old - l->rows) / (size_t)l->table->nattrs;
      return rt_fail(op, "%s:%" PRId64 ": error: duplicate key %s, first on line %" PRId64, l->path, lines[r], key,
                     lines[first]);
    }
    uint64_t h = key_hash(l, row, l->col);
    size_t i = h & (l->cap - 1);
    while (l->index[i]) i = (i + 1) & (l->cap - 1);
    l->index[i] = (uint32_t)(r + 1);
    l->hashes[i] = h;
  }
  return 0;
}

/* Reads the table from r: the header's columns mapped to the schema's attributes by name, then
 * every row. 0, or -1 after rt_fail naming the file and the line. */
static int read_table(OpInst *op, Lookup *l, CsvReader *r, int64_t **lines) {
  const Schema *s = l->table;
  const char *path = l->path;
  int rc = csv_read(r);
  if (rc < 0) return rt_fail(op, "%s:%" PRId64 ": error: %s", path, r->err_line, r->err);
  if (rc == 0) return rt_fail(op, "%s:1: error: the file is empty (expected a header row)", path);
  int64_t hline = r->record_line;
  int ncols = r->nfields;
  int *attr_of = arena_alloc(l->arena, sizeof *attr_of * (size_t)ncols);
  int *col_of = arena_alloc(l->arena, sizeof *col_of * (size_t)(s->nattrs + 1));
  for (int a = 0; a < s->nattrs; a++) col_of[a] = -1;
  for (int c = 0; c < ncols; c++) {
    size_t n;
    const char *name = csv_field(r, c, &n);
    int a = strlen(name) == n ? schema_find_attr(s, name) : -1;
    attr_of[c] = a;
    if (a >= 0 && col_of[a] >= 0)
      return rt_fail(op, "%s:%" PRId64 ": error: header has column '%s' twice", path, hline, name);
    if (a >= 0) col_of[a] = c;
  }
  for (int a = 0; a < s->nattrs; a++)
    if (col_of[a] < 0) return rt_fail(op, "%s:%" PRId64 ": error: header has no column '%s'", path, hline, s->attrs[a].name);
  size_t caplines = 0;
  for (;;) {
    rc = csv_read(r);
    if (rc < 0) return rt_fail(op, "%s:%" PRId64 ": error: %s", path, r->err_line, r->err);
    if (rc == 0) return 0;
    if (r->unterminated && !rt_options(op)->accept_unterminated)
      return rt_fail(op, "%s:%" PRId64 ": error: last row has no line end (truncated file? --accept-unterminated reads it)",
                     path, r->record_line);
    if (r->blank) continue;
    if (r->nfields != ncols)
      return rt_fail(op, "%s:%" PRId64 ": error: row has %d field%s, header has %d", path, r->record_line, r->nfields,
                     r->nfields == 1 ? "" : "s", ncols);
    if (l->nrows == l->caprows) {
      l->caprows = l->caprows ? l->caprows * 2 : 64;
      l->rows = sf_xrealloc(l->rows, sizeof *l->rows * l->caprows * (size_t)s->nattrs);
    }
    if (l->nrows == caplines) {
      caplines = caplines ? caplines * 2 : 64;
      *lines = sf_xrealloc(*lines, sizeof **lines * caplines);
    }
    Value *row = l->rows + l->nrows * (size_t)s->nattrs;
    for (int c = 0; c < ncols; c++) {
      int a = attr_of[c];
      if (a < 0) continue;
      size_t n;
      const char *text = csv_field(r, c, &n);
      if (value_parse(s->attrs[a].type, text, n, &row[a], l->arena) < 0) {
        enum { QUOTE_MAX = 40 };
        return rt_fail(op, "%s:%" PRId64 ": error: field '%s': '%.*s%s' is not %s", path, r->record_line,
                       s->attrs[a].name, n > QUOTE_MAX ? QUOTE_MAX : (int)n, text, n > QUOTE_MAX ? "..." : "",
                       rows_type_article(s->attrs[a].type));
      }
    }
    (*lines)[l->nrows++] = r->record_line;
  }
}

static void lookup_close(OpInst *op, bool ok);

static int setup(OpInst *op, Lookup *l) {
  l->path = rt_param(op, "file");
  const char *schema = rt_param(op, "schema"), *missing = rt_param(op, "missing");
  if (!l->path || !*l->path || !strcmp(l->path, "-"))
    return rt_fail(op, "Lookup needs parameter 'file' naming a file (not standard input)");
  if (missing && strcmp(missing, "drop") && strcmp(missing, "keep"))
    return rt_fail(op, "parameter 'missing' must be 'drop' or 'keep', got '%s'", missing);
  l->keep = missing && !strcmp(missing, "keep");
  l->table = op->exec && schema ? graph_find_schema(op->exec->g, schema) : NULL;
  if (!l->table) return rt_fail(op, "parameter 'schema' names no schema '%s'", schema ? schema : "");
  LookupOn *on;
  size_t at;
  l->nkeys = lookup_on_parse(l->arena, rt_param(op, "on"), &on, &at);
  if (l->nkeys < 0) return rt_fail(op, "parameter 'on' must be 'table.C = ATTR', several joined by 'and'");
  l->col = arena_alloc(l->arena, sizeof *l->col * (size_t)l->nkeys);
  l->slot = arena_alloc(l->arena, sizeof *l->slot * (size_t)l->nkeys);
  for (int k = 0; k < l->nkeys; k++) {
    l->col[k] = schema_find_attr(l->table, on[k].column);
    l->slot[k] = schema_find_attr(op->in_schema, on[k].attr);
    if (l->col[k] < 0 || l->slot[k] < 0 ||
        l->table->attrs[l->col[k]].type != op->in_schema->attrs[l->slot[k]].type)
      return rt_fail(op, "parameter 'on': 'table.%s = %s' is not checked", on[k].column, on[k].attr);
  }
  if (outplan_init(&l->plan, op, l->arena)) return -1;
  letplan_init(&l->lets, op->op, l->arena);
  l->zeros = arena_alloc(l->arena, sizeof *l->zeros * (size_t)(l->table->nattrs + 1));
  for (int a = 0; a < l->table->nattrs; a++) {
    Type t = l->table->attrs[a].type;
    l->zeros[a] = t == TYPE_DOUBLE ? value_double(0.0) : t == TYPE_STRING ? value_string("", 0)
                : t == TYPE_BOOL ? value_bool(false) : value_int(0);
  }
  FILE *f = fopen(l->path, "re");
  if (!f) return rt_fail(op, "cannot open '%s': %s", l->path, strerror(errno));
  CsvReader r;
  csv_reader_init(&r, f);
  int64_t *lines = NULL;
  int rc = read_table(op, l, &r, &lines);
  if (rc == 0) rc = build_index(op, l, lines);
  free(lines);
  csv_reader_release(&r);
  fclose(f);
  return rc;
}

static int lookup_open(OpInst *op) {
  Lookup *l = sf_xmalloc(sizeof *l);
  *l = (Lookup){.arena = arena_new()};
  op->state = l;
  if (setup(op, l) == 0) return 0;
  lookup_close(op, false); /* the executor closes only operators whose open succeeded */
  return -1;
}

static int lookup_process(OpInst *op, int port, Tuple *t) {
  Lookup *l = op->state;
  const Value *row = find(l, t->v, l->slot);
  if (!row && !l->keep) {
    tuple_unref(t);
    return 0;
  }
  const Value *sides[1] = {row ? row : l->zeros};
  EvalEnv env = {.attrs = t->v, .sides = sides, .scratch = op->scratch};
  if (l->lets.n && letplan_eval(&l->lets, op, &env, 0, l->lets.n, t)) {
    tuple_unref(t);
    return -1;
  }
  return outplan_emit(&l->plan, op, &env, t);
}

static int lookup_final(OpInst *op) {
  return 0;
}

static void lookup_close(OpInst *op, bool ok) {
  Lookup *l = op->state;
  if (!l) return;
  free(l->rows);
  arena_free(l->arena);
  free(l);
  op->state = NULL;
}

const OpKindImpl op_lookup = {
  .kind = KIND_LOOKUP,
  .open = lookup_open,
  .process = lookup_process,
  .final = lookup_final,
  .close = lookup_close,
};
