/* place.c: hosts and placement. Channels are spread round-robin over the hosts (channel c on host
 * c mod H); a Split runs where its upstream operator runs and a Merge where its downstream operator
 * runs; every other operator stays on the first host unless pinned with `host`. Operators sharing a
 * colocate tag land on one host: the first pin among them (document order) applies to all. A pin
 * on a replicated operator cannot hold for every channel: it is reported as a warning, never
 * dropped silently. */
#include "sf.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool is_identifier(const char *s, size_t n) {
  if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (size_t i = 1; i < n; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
  return true;
}

/* host:port with a port in 1..65535 and a host of letters, digits, '.', '-', '_' or [IPv6]. */
static bool is_address(const char *s) {
  const char *colon = strrchr(s, ':');
  if (!colon || colon == s) return false;
  int64_t port;
  if (number_read(colon + 1, strlen(colon + 1), 1, 65535, &port) != NUM_OK) return false;
  if (s[0] == '[') return colon[-1] == ']';
  for (const char *p = s; p < colon; p++)
    if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '-' || *p == '_')) return false;
  return true;
}

static int add_host(Graph *g, PtrVec *hosts, const char *entry, size_t n, char *err, size_t errlen) {
  while (n > 0 && isspace((unsigned char)*entry)) entry++, n--;
  while (n > 0 && isspace((unsigned char)entry[n - 1])) n--;
  if (n == 0) return 0;
  const char *eq = memchr(entry, '=', n);
  if (!eq) {
    snprintf(err, errlen, "host entry '%.*s' is not name=address:port", (int)n, entry);
    return -1;
  }
  size_t namelen = (size_t)(eq - entry);
  if (!is_identifier(entry, namelen)) {
    snprintf(err, errlen, "host name '%.*s' is not an identifier", (int)namelen, entry);
    return -1;
  }
  Host *h = arena_alloc(g->arena, sizeof *h);
  h->name = arena_strndup(g->arena, entry, namelen);
  h->address = arena_strndup(g->arena, eq + 1, n - namelen - 1);
  if (!is_address(h->address)) {
    snprintf(err, errlen, "address '%s' of host '%s' is not host:port with a port from 1 to 65535", h->address, h->name);
    return -1;
  }
  for (int i = 0; i < hosts->n; i++) {
    Host *o = hosts->items[i];
    if (!strcmp(o->name, h->name)) {
      snprintf(err, errlen, "host '%s' is given twice", h->name);
      return -1;
    }
    if (!strcmp(o->address, h->address)) {
      snprintf(err, errlen, "hosts '%s' and '%s' have the same address '%s'", o->name, h->name, h->address);
      return -1;
    }
  }
  ptrvec_push(g->arena, hosts, h);
  return 0;
}

int hosts_parse(Graph *g, const char *spec, Host ***out, int *nout, char *err, size_t errlen) {
  PtrVec hosts = {0};
  if (spec[0] == '@') {
    FILE *f = fopen(spec + 1, "r");
    if (!f) {
      snprintf(err, errlen, "cannot open hosts file '%s': %s", spec + 1, strerror(errno));
      return -1;
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
      char *hash = strchr(line, '#');
      if (hash) *hash = 0;
      if (add_host(g, &hosts, line, strlen(line), err, errlen) < 0) {
        fclose(f);
        return -1;
      }
    }
    fclose(f);
  } else {
    for (const char *p = spec;;) {
      const char *comma = strchr(p, ',');
      size_t n = comma ? (size_t)(comma - p) : strlen(p);
      if (add_host(g, &hosts, p, n, err, errlen) < 0) return -1;
      if (!comma) break;
      p = comma + 1;
    }
  }
  if (hosts.n == 0) {
    snprintf(err, errlen, "no hosts in '%s'", spec);
    return -1;
  }
  *out = (Host **)hosts.items;
  *nout = hosts.n;
  return 0;
}

static const char *place_op(Graph *g, Op *op, int depth);

/* Where the producer of the op's first input runs. */
static const char *upstream_host(Graph *g, Op *op, int depth) {
  Stream *s = op->ninputs ? op->inputs[0].streams[0] : NULL;
  return s ? place_op(g, s->producer, depth + 1) : NULL;
}

/* Where the first consumer of the op's output runs, unless that is a Split placed by its upstream. */
static const char *downstream_host(Graph *g, Op *op, int depth) {
  Stream *s = op->noutputs ? op->outputs[0].resolved : NULL;
  if (!s || s->consumers.n == 0) return NULL;
  Op *next = s->consumers.items[0];
  if (next->kind == KIND_SPLIT && next->channel < 0) return NULL;
  return place_op(g, next, depth + 1);
}

static const char *place_op(Graph *g, Op *op, int depth) {
  if (op->host) return op->host;
  sf_assert(depth <= g->nops + 1);
  const char *h = NULL;
  if (op->channel >= 0)
    h = g->hosts[op->channel % g->nhosts]->name;
  else if (op->kind == KIND_SPLIT && op->region)
    h = upstream_host(g, op, depth);
  else if (op->kind == KIND_MERGE && op->region)
    h = downstream_host(g, op, depth);
  op->host = h ? h : g->hosts[0]->name;
  return op->host;
}

/* Orders colocated operators by tag, then document order. */
static int colocate_cmp(const void *pa, const void *pb) {
  const Op *a = *(Op *const *)pa, *b = *(Op *const *)pb;
  int c = strcmp(a->colocate, b->colocate);
  return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* Gives every unpinned member of a colocate group the group's first pin. Replicas are left out:
 * the channels of one operator carry its tag but are spread over the hosts like any channel. */
static void pin_colocated(Graph *g) {
  Op **tagged = sf_xmalloc(sizeof(Op *) * (size_t)(g->nops + 1));
  int n = 0;
  for (int i = 0; i < g->nops; i++)
    if (g->ops[i]->colocate && g->ops[i]->channel < 0 && !g->ops[i]->region) tagged[n++] = g->ops[i];
  qsort(tagged, (size_t)n, sizeof *tagged, colocate_cmp);
  for (int i = 0, j; i < n; i = j) {
    const char *pin = NULL;
    for (j = i; j < n && !strcmp(tagged[j]->colocate, tagged[i]->colocate); j++)
      if (!pin) pin = tagged[j]->host;
    for (int k = i; k < j && pin; k++)
      if (!tagged[k]->host) tagged[k]->host = pin;
  }
  free(tagged);
}

int graph_place(Graph *g, Diag *d) {
  int before = d->nerrors;
  if (g->nhosts == 0) {
    g->hosts = arena_alloc(g->arena, sizeof(Host *));
    Host *h = arena_alloc(g->arena, sizeof *h);
    h->name = SF_DEFAULT_HOST_NAME;
    h->address = SF_DEFAULT_HOST_ADDRESS;
    g->hosts[0] = h;
    g->nhosts = 1;
  }
  for (int i = 0; i < g->nops; i++) {
    Op *op = g->ops[i];
    if (op->host && !graph_find_host(g, op->host)) {
      const char *hint = hosts_suggest(g->hosts, g->nhosts, op->host);
      diag_error(d, op->line, 0, "operator '%s' is placed on unknown host '%s'" DIAG_HINT_FMT, op->name, op->host,
                 DIAG_HINT(hint));
    }
  }
  if (d->nerrors > before) return d->nerrors - before;
  for (int i = 0; i < g->nops; i++) {
    const Op *op = g->ops[i];
    if (op->replica_pin && op->channel == 0) /* once per replicated operator */
      diag_warning(d, op->line, 0, "operator '%s' is pinned to host '%s' but runs replicated in region %s, whose "
                   "channels go round-robin over the hosts: the pin is not applied", op->origin, op->replica_pin,
                   op->region);
  }
  pin_colocated(g);
  for (int i = 0; i < g->nops; i++) place_op(g, g->ops[i], 0);
  return 0;
}
