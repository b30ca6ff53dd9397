/* regions.c: which operators may run as several copies (docs/design.md, "Safety rules") and the
 * greedy formation of parallel regions along chains, in topological order, with key compatibility,
 * key forwarding, the move of a key-carrying stateless tail into a following keyed region, shuffles
 * between adjacent regions with incompatible keys, widths and the order-preserving strategy.
 * Every operator that is not parallelized gets the reason in f->why, in words a user can act on. */
#include "sf.h"

#include <stdlib.h>
#include <string.h>

enum { DEFAULT_PULSE = 128 };

/* Key attributes for a message: 'a', 'a' and 'b', 'a', 'b' and 'c'. */
static const char *keys_text(Arena *a, const char **keys, int n) {
  char *s = arena_strdup(a, "");
  for (int i = 0; i < n; i++) s = arena_printf(a, "%s%s'%s'", s, i == 0 ? "" : i == n - 1 ? " and " : ", ", keys[i]);
  return s;
}

static bool keys_contain(const char **keys, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(keys[i], name)) return true;
  return false;
}

/* The first key attribute the op does not forward, or NULL when it forwards them all. */
static const char *unforwarded_key(const Op *op, const char **keys, int n) {
  for (int i = 0; i < n; i++)
    if (!model_forwards(op, keys[i])) return keys[i];
  return NULL;
}

/* ---- safety ---- */

/* Does any operator downstream of op (transitively) consume punctuation? Returns it or NULL. */
static const Op *punct_consumer_below(const Graph *g, const Op *op, bool *seen) {
  for (int p = 0; p < op->noutputs; p++) {
    Stream *s = op->outputs[p].resolved;
    for (int c = 0; s && c < s->consumers.n; c++) {
      const Op *next = s->consumers.items[c];
      if (seen[next->index]) continue;
      seen[next->index] = true;
      if (next->model.punct == PUNCT_CONSUMES) return next;
      const Op *below = punct_consumer_below(g, next, seen);
      if (below) return below;
    }
  }
  return NULL;
}

/* Orders tagged operators by colocate tag, then document order. */
static int colocate_cmp(const void *pa, const void *pb) {
  const Op *a = *(Op *const *)pa, *b = *(Op *const *)pb;
  int c = strcmp(a->colocate, b->colocate);
  return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* For each operator index, the first other operator in document order sharing its colocate tag
 * (NULL: none). One sort instead of comparing every pair. */
static const Op **colocate_partners(Graph *g) {
  const Op **partner = arena_alloc(g->arena, sizeof(Op *) * (size_t)(g->nops + 1));
  Op **tagged = sf_xmalloc(sizeof(Op *) * (size_t)(g->nops + 1));
  int n = 0;
  for (int i = 0; i < g->nops; i++)
    if (g->ops[i]->colocate) tagged[n++] = g->ops[i];
  qsort(tagged, (size_t)n, sizeof *tagged, colocate_cmp);
  for (int i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && !strcmp(tagged[j]->colocate, tagged[i]->colocate); j++) {}
    if (j - i < 2) continue;
    for (int k = i; k < j; k++) partner[tagged[k]->index] = k == i ? tagged[i + 1] : tagged[i];
  }
  free(tagged);
  return partner;
}

/* Why op may not be replicated (NULL: it may); colocated_with is another operator sharing its
 * colocate tag, if any. */
/* Whether an operator may emit tuples at a punctuation: window punctuation, the end, a tick. */
static bool emits_at_punctuation(const Model *m) {
  return m->punct == PUNCT_CONSUMES || m->final == FINAL_EMITS || m->emits_on_tick;
}

static const char *unsafe_reason(Graph *g, const Op *op, const Op *colocated_with) {
  Arena *a = g->arena;
  const Model *m = &op->model;
  /* 6: what the user or the graph already decided */
  if (op->region) return arena_printf(a, "it already belongs to region '%s'", op->region);
  if (m->is_source) return arena_printf(a, "it is a source (%s)", kind_name(op->kind));
  if (m->is_sink) return arena_printf(a, "it is a sink (%s)", kind_name(op->kind));
  if (op->parallel_no) return "it is marked parallel=\"no\"";
  if (op->width == 1) return "it is marked width=\"1\"";
  if (op->kind == KIND_SPLIT || op->kind == KIND_MERGE)
    return arena_printf(a, "it is a %s written in the input graph", kind_name(op->kind));
  /* 1: one input port fed by one stream, one output port; a Join's two sides enter its region
   * through one Split, which hashes each side on its own key attributes */
  if (op->kind == KIND_JOIN) {
    for (int p = 0; p < op->ninputs; p++)
      if (op->inputs[p].nstreams != 1)
        return arena_printf(a, "its %s input merges %d streams (fan-in; rule 1: exactly one stream per side)",
                            p == 0 ? "left" : "right", op->inputs[p].nstreams);
  } else if (op->ninputs != 1) {
    return arena_printf(a, "it has %d input ports (rule 1: exactly one)", op->ninputs);
  }
  if (op->kind != KIND_JOIN && op->inputs[0].nstreams != 1)
    return arena_printf(a, "its input merges %d streams (fan-in; rule 1: exactly one stream)", op->inputs[0].nstreams);
  if (op->noutputs != 1) return arena_printf(a, "it has %d output ports (rule 1: exactly one)", op->noutputs);
  /* 2: state */
  if (m->state == STATE_UNKNOWN) {
    if (op->kind == KIND_CUSTOM && !m->declared) return "its state is unknown (Custom operator without a <model>; rule 2)";
    if (op->kind == KIND_CUSTOM) return "its <model> declares unknown state (rule 2)";
    if (op->kind == KIND_FUNCTOR) return "its state is unknown: it has <state> but no 'partitionBy' (rule 2)";
    return arena_printf(a, "its state is unknown: %s without 'partitionBy' (rule 2)", kind_name(op->kind));
  }
  if (m->state == STATE_PARTITIONED && m->nkeys == 0) return "its state is partitioned on an empty key (rule 2)";
  /* 3: selectivity one, atmostone and many all qualify: the outputs of one input keep its
   * position and their order, in one channel */
  /* 4: colocation */
  if (colocated_with)
    return arena_printf(a, "it shares colocate tag '%s' with '%s' (rule 4)", op->colocate, colocated_with->name);
  /* 5: punctuation. What an operator emits on a punctuation is caused by no input tuple; it has a
   * place in the sequential order only by its key (the runtime sorts it so, docs/design.md), and
   * the region partitions on a part of that key (rule 2 saw it is partitioned). A Custom
   * operator's key must be in its output, where the runtime reads it. */
  const char *unkeyed = !emits_at_punctuation(m) || m->state == STATE_PARTITIONED ? NULL
                        : m->punct == PUNCT_CONSUMES ? "punct=\"consumes\"" : m->final == FINAL_EMITS ? "final=\"emits\""
                                                                                                 : "a time window";
  if (unkeyed) return arena_printf(a, "it emits on punctuation (%s) without a key to order that by (rule 5)", unkeyed);
  if (emits_at_punctuation(m) && op->kind == KIND_CUSTOM) {
    const Schema *out = op_output_schema(op);
    for (int k = 0; k < m->nkeys; k++)
      if (!out || schema_find_attr(out, m->keys[k]) < 0)
        return arena_printf(a, "it emits on punctuation, but its key '%s' is not an attribute of its output, where "
                               "the runtime orders what it emits there (rule 5)", m->keys[k]);
  }
  if (m->punct == PUNCT_GENERATES) {
    bool *seen = arena_alloc(a, (size_t)g->nops + 1);
    const Op *consumer = punct_consumer_below(g, op, seen);
    if (consumer)
      return arena_printf(a, "it generates punctuation that '%s' downstream consumes (rule 5)", consumer->name);
  }
  return NULL;
}

/* ---- formation ----
 *
 * Why each rule keeps the output byte-identical: every region ends in a Merge (or a shuffle) that
 * restores the sequential order, so what must hold is only that each partitioned operator sees, in
 * one channel and in sequential order, every tuple of each of its keys. The entry Split hashes on the
 * region key as the tuples enter; that hash is the hash of the key a partitioned operator reads if
 * every operator between the entry and it forwards the region key unchanged. A region key that is
 * a subset of an operator's key only coarsens its partition: tuples equal on the operator's key are
 * equal on the region key, so they share a channel. Stateless operators after the last partitioned
 * operator compute the same tuples in whatever channel they run, so they may change or drop the key. */

static Region *region_new(Fission *f, const Op *first) {
  Region *r = arena_alloc(f->g->arena, sizeof *r);
  r->id = f->regions.n + 1;
  r->last_keyed = -1;
  if (first->model.state == STATE_PARTITIONED) {
    r->keys = first->model.keys;
    r->nkeys = first->model.nkeys;
  }
  ptrvec_push(f->g->arena, &f->regions, r);
  return r;
}

static void region_add(Fission *f, Region *r, Op *op) {
  if (op->model.state == STATE_PARTITIONED) r->last_keyed = r->ops.n;
  ptrvec_push(f->g->arena, &r->ops, op);
  f->region_of[op->index] = r;
}

/* Starts a new region with x, joined to r by a shuffle. */
static Region *region_shuffled_from(Fission *f, Region *r, Op *x) {
  Region *n = region_new(f, x);
  region_add(f, n, x);
  r->to = n;
  n->from = r;
  return n;
}

/* The operator feeding op through a chain link (its only input stream has op as only consumer). */
static Op *chain_predecessor(const Op *op) {
  Stream *s = op->inputs[0].streams[0];
  if (!s || s->consumers.n != 1) return NULL;
  return s->producer;
}

/* X is partitioned and follows stateless region r: the operators at the end of r that forward X's
 * key move into a new keyed region with X. Returns the region X joined. */
static Region *split_off_keyed_tail(Fission *f, Region *r, Op *x) {
  Arena *a = f->g->arena;
  const char **keys = x->model.keys;
  int nkeys = x->model.nkeys;
  int j = r->ops.n;
  while (j > 0 && !unforwarded_key(r->ops.items[j - 1], keys, nkeys)) j--;
  if (j == 0) { /* the whole stateless region carries the key: it becomes keyed */
    r->keys = keys;
    r->nkeys = nkeys;
    region_add(f, r, x);
    return r;
  }
  Region *keyed = region_new(f, x);
  for (int i = j; i < r->ops.n; i++) {
    Op *moved = r->ops.items[i];
    region_add(f, keyed, moved);
    f->note[moved->index] = arena_printf(a, "moved from region r%d into keyed region r%d because it forwards %s",
                                         r->id, keyed->id, keys_text(a, keys, nkeys));
  }
  const Op *last = r->ops.items[j - 1];
  r->ops.n = j;
  region_add(f, keyed, x);
  r->to = keyed;
  keyed->from = r;
  Op *first = keyed->ops.items[0];
  if (first == x)
    f->note[x->index] = arena_printf(a, "starts keyed region r%d, shuffled from r%d: '%s' does not forward key '%s'",
                                     keyed->id, r->id, last->name, unforwarded_key(last, keys, nkeys));
  return keyed;
}

/* Partitioned x follows keyed region r. It joins when its key shares attributes with the region key
 * and every operator from the region's last partitioned operator on forwards the shared part (those
 * before it forward the whole region key already); the region key shrinks to the shared part.
 * Otherwise x starts a new region, shuffled from r. */
static void join_keyed(Fission *f, Region *r, Op *x) {
  Arena *a = f->g->arena;
  const char **common = arena_alloc(a, sizeof(char *) * (size_t)r->nkeys);
  int ncommon = 0;
  for (int k = 0; k < r->nkeys; k++)
    if (keys_contain(x->model.keys, x->model.nkeys, r->keys[k])) common[ncommon++] = r->keys[k];
  if (ncommon == 0) {
    Region *n = region_shuffled_from(f, r, x);
    f->note[x->index] = arena_printf(a, "starts region r%d, shuffled from r%d: its key %s shares no attribute with "
                                     "region r%d's key %s", n->id, r->id,
                                     keys_text(a, x->model.keys, x->model.nkeys), r->id, keys_text(a, r->keys, r->nkeys));
    return;
  }
  for (int i = r->last_keyed; i < r->ops.n; i++) {
    const Op *op = r->ops.items[i];
    const char *missing = unforwarded_key(op, common, ncommon);
    if (missing) {
      Region *n = region_shuffled_from(f, r, x);
      f->note[x->index] = arena_printf(a, "starts region r%d, shuffled from r%d: '%s' does not forward key '%s'",
                                       n->id, r->id, op->name, missing);
      return;
    }
  }
  if (ncommon < r->nkeys)
    f->note[x->index] = arena_printf(a, "shrinks region r%d's key from %s to %s, the part its key %s shares", r->id,
                                     keys_text(a, r->keys, r->nkeys), keys_text(a, common, ncommon),
                                     keys_text(a, x->model.keys, x->model.nkeys));
  r->keys = common;
  r->nkeys = ncommon;
  region_add(f, r, x);
}

/* Says why an operator that changes or drops the region key stays in the region: it comes after the
 * region's last partitioned operator (the key is final only once every operator is placed). */
static void note_key_changes(Fission *f) {
  Arena *a = f->g->arena;
  for (int i = 0; i < f->regions.n; i++) {
    const Region *r = f->regions.items[i];
    for (int k = r->last_keyed + 1; r->nkeys > 0 && k < r->ops.n; k++) {
      const Op *op = r->ops.items[k];
      const char *missing = unforwarded_key(op, r->keys, r->nkeys);
      if (missing && !f->note[op->index])
        f->note[op->index] = arena_printf(a, "stays in region r%d although it does not forward key '%s': it is "
                                          "stateless and follows the region's last partitioned operator", r->id, missing);
    }
  }
}

static void form_regions(Fission *f) {
  Graph *g = f->g;
  Arena *a = g->arena;
  for (int t = 0; t < g->nops; t++) {
    Op *x = g->order[t];
    if (f->why[x->index]) continue;
    if (x->kind == KIND_JOIN) { /* a region of its own, entered through one Split of both sides */
      Region *n = region_new(f, x);
      region_add(f, n, x);
      f->note[x->index] = arena_printf(a, "starts region r%d: its two sides enter through one Split, in the time "
                                       "order of their fan-in, each hashed on its attributes of 'on' (%s)", n->id,
                                       op_param(x, "on"));
      continue;
    }
    Op *p = chain_predecessor(x);
    Region *r = p ? f->region_of[p->index] : NULL;
    if (r && r->ops.items[r->ops.n - 1] != p) r = NULL;
    if (!r) {
      Region *n = region_new(f, x);
      region_add(f, n, x);
      if (!p)
        f->note[x->index] = arena_printf(a, "starts region r%d: its input stream '%s' %s", n->id,
                                         x->inputs[0].names[0],
                                         x->inputs[0].streams[0]->consumers.n > 1 ? "has several consumers (fan-out)"
                                                                                 : "is not a chain link");
      else
        f->note[x->index] = arena_printf(a, "starts region r%d: its producer '%s' is not parallelized", n->id, p->name);
      continue;
    }
    if (x->model.state == STATE_NONE)
      region_add(f, r, x); /* stateless: runs in any channel; after the last partitioned operator it may change the key */
    else if (r->nkeys == 0) {
      split_off_keyed_tail(f, r, x);
    } else {
      join_keyed(f, r, x);
    }
  }
}

/* ---- widths and strategies ---- */

/* Gives every region its width: the smallest width attribute of its operators, above or below the
 * global width, or the global width when none has one. A region of one channel is not a region:
 * its operators get the reason. Returns whether any region was dropped; that happens only at a
 * global width of 1, since width="1" keeps its operator out of every region. */
static bool assign_widths(Fission *f) {
  Arena *a = f->g->arena;
  bool dropped = false;
  for (int i = 0; i < f->regions.n; i++) {
    Region *r = f->regions.items[i];
    r->width = f->width;
    r->width_by = NULL;
    r->width_why = NULL;
    int asked = 0;          /* operators with a width attribute */
    bool disagree = false;  /* with different values */
    for (int k = 0; k < r->ops.n; k++) {
      const Op *op = r->ops.items[k];
      if (!op->width) continue;
      if (asked && op->width != r->width) disagree = true;
      if (!asked || op->width < r->width) {
        r->width = op->width;
        r->width_by = op->name;
      }
      asked++;
    }
    if (disagree) { /* 'a' 3, 'b' 2 and 'c' 8 */
      char *list = NULL;
      size_t len = 0;
      FILE *m = open_memstream(&list, &len);
      if (!m) sf_die("out of memory");
      for (int k = 0, n = 0; k < r->ops.n; k++) {
        const Op *op = r->ops.items[k];
        if (!op->width) continue;
        n++;
        fprintf(m, "%s'%s' %d", n == 1 ? "" : n == asked ? " and " : ", ", op->name, op->width);
      }
      fclose(m);
      r->width_why = arena_printf(a, "the smallest of %s", list);
      free(list);
    }
    r->width_profile = false;
    if (f->cap) /* --profile chose a width for the region these operators formed before */
      for (int k = 0; k < r->ops.n; k++) {
        int cap = f->cap[((Op *)r->ops.items[k])->index];
        if (cap && cap <= r->width) {
          r->width = cap;
          r->width_profile = true;
        }
      }
    if (r->width >= 2) continue;
    for (int k = 0; k < r->ops.n; k++) f->why[((Op *)r->ops.items[k])->index] = "the width is 1";
    dropped = true;
  }
  return dropped;
}

static void choose_strategies(Fission *f) {
  for (int i = 0; i < f->regions.n; i++) {
    Region *r = f->regions.items[i];
    r->split = r->nkeys > 0 ? SPLIT_HASH : SPLIT_ROUNDROBIN;
    /* a channel may drop tuples, emit several at one position, or emit at a punctuation: only
     * seqpulse orders by position and key and waits for a promise */
    bool selective = false;
    for (int k = 0; k < r->ops.n; k++) {
      const Model *m = &((Op *)r->ops.items[k])->model;
      if (m->sel == SEL_ATMOSTONE || m->sel == SEL_MANY || emits_at_punctuation(m)) selective = true;
    }
    /* shuffles order by sequence number and need pulses on both sides: a channel upstream that
     * drops everything would otherwise stall every merge below it */
    if (selective || r->from || r->to)
      r->merge = MERGE_SEQPULSE;
    else if (r->nkeys > 0)
      r->merge = MERGE_SEQ;
    else
      r->merge = MERGE_ROUNDROBIN;
  }
}

/* ---- costs (cost.c's model) ---- */

static int input_streams(const Op *op) {
  int n = 0;
  for (int p = 0; p < op->ninputs; p++) n += op->inputs[p].nstreams;
  return n;
}

/* ns per tuple entering the region (n of them) that op costs: measured, or its kind's estimate. */
static double op_cost(const Fission *f, const Op *op, bool measured, double n) {
  const ProfileOp *po = measured ? profile_find(f->profile, op->name) : NULL;
  return po ? po->cpu_ns / n : cost_kind_estimate(op);
}

/* "the source 'x'", "the serial operator 'x'" */
static const char *serial_what(Arena *a, const Op *op) {
  return arena_printf(a, "the %s '%s'", op->ninputs == 0 ? "source" : "serial operator", op->name);
}

/* A part of a region's up or down stage: adds its cost, and names it when it is the dearest. */
static void add_part(double *stage, double cost, double *dearest, const char **what, const char *name) {
  *stage += cost;
  if (cost > *dearest) {
    *dearest = cost;
    *what = name;
  }
}

/* What runs after op in the thread of the Merge before it: consumers with one input stream in no
 * region, theirs, and the entry Split of a region that follows. */
static void add_down(const Fission *f, const Op *op, RegionCost *c, double *dearest, bool measured, double n, int depth) {
  Arena *a = f->g->arena;
  if (depth > f->g->nops) return;
  for (int p = 0; p < op->noutputs; p++) {
    const Stream *s = op->outputs[p].resolved;
    for (int k = 0; s && k < s->consumers.n; k++) {
      const Op *next = s->consumers.items[k];
      const Region *r = f->region_of[next->index];
      if (input_streams(next) != 1) continue;
      if (r) {
        if (r->ops.items[0] == next && !r->from)
          add_part(&c->down, COST_SPLIT_NS, dearest, &c->down_what, arena_printf(a, "the Split of r%d", r->id));
        continue;
      }
      add_part(&c->down, op_cost(f, next, measured, n), dearest, &c->down_what, serial_what(a, next));
      add_down(f, next, c, dearest, measured, n, depth + 1);
    }
  }
}

/* r's stages, from f's profile when it measured every operator of r, else from the estimates. */
static void region_cost(Fission *f, Region *r, int cores) {
  const Profile *p = f->profile;
  RegionCost *c = &r->cost;
  memset(c, 0, sizeof *c);
  const Op *first = r->ops.items[0], *last = r->ops.items[r->ops.n - 1];
  r->unmeasured = NULL;
  bool measured = p != NULL;
  for (int k = 0; p && k < r->ops.n; k++) {
    const Op *op = r->ops.items[k];
    if (!profile_find(p, op->name)) {
      r->unmeasured = op->name;
      measured = false;
      break;
    }
  }
  double n = measured ? profile_find(p, first->name)->in : 1;
  if (measured && !(n > 0)) { /* it got no tuples: nothing to scale by */
    r->unmeasured = first->name;
    measured = false;
    n = 1;
  }
  r->measured = measured;
  for (int k = 0; k < r->ops.n; k++) c->work += op_cost(f, r->ops.items[k], measured, n);
  double dearest = -1;
  Arena *a = f->g->arena;
  for (const Op *cur = first; cur->ninputs > 0 && input_streams(cur) == 1;) {
    const Op *up = cur->inputs[0].nstreams == 1 && cur->inputs[0].streams ? cur->inputs[0].streams[0]->producer : NULL;
    if (!up) break;
    const Region *before = f->region_of[up->index];
    if (before) { /* the Split runs in that region's Merge thread */
      if (!r->from && before->ops.items[before->ops.n - 1] == up && !before->to)
        add_part(&c->up, COST_MERGE_NS, &dearest, &c->up_what, arena_printf(a, "the Merge of r%d", before->id));
      break;
    }
    add_part(&c->up, op_cost(f, up, measured, n), &dearest, &c->up_what, serial_what(a, up));
    cur = up;
  }
  dearest = -1;
  add_down(f, last, c, &dearest, measured, n, 0);
  c->split = COST_SPLIT_NS;
  c->merge = COST_MERGE_NS;
  c->channel = COST_CHANNEL_NS;
  const ProfileOp *sp = NULL, *mp = NULL;
  if (measured) { /* a profile of a parallel graph: by the region's ends (not by number: numbers
                    * change with the regions formed) */
    sp = profile_find(p, arena_printf(a, "split of %s", first->name));
    mp = profile_find(p, arena_printf(a, "merge of %s", last->name));
  }
  if (sp) c->split = sp->cpu_ns / n;
  if (mp) c->merge = mp->cpu_ns / n;
  c->cores = cores;
}

/* "'a'", "'a' and 'b'", ... of r's operators */
static const char *op_names(Arena *a, const Region *r) {
  char *s = arena_strdup(a, "");
  for (int i = 0; i < r->ops.n; i++)
    s = arena_printf(a, "%s%s'%s'", s, i == 0 ? "" : i == r->ops.n - 1 ? " and " : ", ", ((Op *)r->ops.items[i])->name);
  return s;
}

/* With a profile: each measured region's width from the model; the regions no width pays for
 * lose their operators (with the reason). Returns whether any region changed. */
static bool choose_widths(Fission *f, int max, int cores) {
  Arena *a = f->g->arena;
  bool changed = false;
  for (int i = 0; i < f->regions.n; i++) {
    Region *r = f->regions.items[i];
    region_cost(f, r, cores);
    if (!r->measured || r->from || r->to) continue; /* today's rules (a shuffle pair: both keep them) */
    int limit = max > 0 && max < r->width ? max : r->width;
    int w = cost_width(&r->cost, limit);
    if (w >= 2) {
      for (int k = 0; k < r->ops.n; k++) f->cap[((Op *)r->ops.items[k])->index] = w;
      changed = true;
      continue;
    }
    const char *why;
    if (limit < 2)
      why = arena_printf(a, "kept serial: the profile's machine has %d usable core%s", limit, limit == 1 ? "" : "s");
    else
      why = arena_printf(a, "kept serial: measured %.0f ns per tuple in %s; a Split and a Merge would cost ~%.0f and ~%.0f "
                         "ns per tuple: width %d would run at %.2fx (a width must reach %.2fx)", r->cost.work,
                         op_names(a, r), r->cost.split, r->cost.merge, limit, cost_speedup(&r->cost, limit),
                         COST_MIN_SPEEDUP);
    for (int k = 0; k < r->ops.n; k++) f->why[((Op *)r->ops.items[k])->index] = why;
    changed = true;
  }
  return changed;
}

/* Forms the regions and gives them widths and strategies. */
static void form_all(Fission *f) {
  Graph *g = f->g;
  f->regions = (PtrVec){0};
  memset(f->region_of, 0, sizeof(Region *) * (size_t)g->nops);
  memset(f->note, 0, sizeof(char *) * (size_t)g->nops);
  form_regions(f);
  if (assign_widths(f)) {
    /* At a global width of 1, regions without a width attribute were dropped. Forming again
     * without their operators gives exactly the regions that kept their width (dropping whole
     * regions never splits or joins the others: only their shuffle links and notes change), so
     * one more pass is enough. */
    f->regions = (PtrVec){0};
    memset(f->region_of, 0, sizeof(Region *) * (size_t)g->nops);
    memset(f->note, 0, sizeof(char *) * (size_t)g->nops);
    form_regions(f);
    if (assign_widths(f)) sf_die("a region lost its width when formed again");
  }
  note_key_changes(f);
  choose_strategies(f);
}

Fission *fission_regions(Graph *g, int width) {
  return fission_regions_profiled(g, width, NULL, 0, 0);
}

Fission *fission_regions_profiled(Graph *g, int width, const Profile *prof, int max, int cores) {
  Arena *a = g->arena;
  Fission *f = arena_alloc(a, sizeof *f);
  f->g = g;
  f->width = width;
  f->profile = prof;
  f->pulse = DEFAULT_PULSE;
  f->region_of = arena_alloc(a, sizeof(Region *) * (size_t)(g->nops + 1));
  f->why = arena_alloc(a, sizeof(char *) * (size_t)(g->nops + 1));
  f->note = arena_alloc(a, sizeof(char *) * (size_t)(g->nops + 1));
  const Op **partner = colocate_partners(g);
  for (int i = 0; i < g->nops; i++) {
    Op *op = g->ops[i];
    f->why[i] = g->rewritten && !op->region ? "the graph is already parallelized (it carries region attributes)"
                                            : unsafe_reason(g, op, partner[i]);
  }
  if (!g->rewritten) {
    form_all(f);
    if (prof) {
      f->cap = arena_alloc(a, sizeof(int) * (size_t)(g->nops + 1));
      if (choose_widths(f, max, cores)) form_all(f); /* dropping whole regions: the others stay as they were */
    }
    for (int i = 0; i < f->regions.n; i++) region_cost(f, f->regions.items[i], cores);
  }
  for (int i = 0; i < g->nops; i++) g->ops[i]->why_serial = f->why[i];
  return f;
}
