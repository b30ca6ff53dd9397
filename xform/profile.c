/* profile.c: sf-xform --profile FILE: reads what `sf-exec --stats-json` wrote (docs/running.md)
 * into a Profile (sf.h) for the cost model. Only sf-xform links it (json-c). A replica's figures
 * ("burn[0]", "burn[1]") are added up under the operator it replicates ("burn"); a region's Split
 * and Merge keep their names ("r1.split") and also count under their region's ends (below). */
#include "profile.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "burn[12]" -> "burn"; any other name as it is. */
static char *origin_name(Arena *a, const char *name) {
  size_t n = strlen(name);
  if (n >= 3 && name[n - 1] == ']') {
    size_t i = n - 1;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') i--;
    if (i > 1 && i < n - 1 && name[i - 1] == '[') {
      char *s = arena_strdup(a, name);
      s[i - 1] = '\0';
      return s;
    }
  }
  return arena_strdup(a, name);
}

/* Adds figures to the operator named name (made when new). */
static void profile_add(Arena *a, Profile *p, const char *name, double cpu, double in, double out) {
  ProfileOp *po = (ProfileOp *)profile_find(p, name);
  if (!po) {
    po = &p->ops[p->nops++];
    po->name = arena_strdup(a, name);
  }
  po->cpu_ns += cpu;
  po->in += in;
  po->out += out;
}

/* A number member of o (false when missing or not a number). */
static bool number_member(json_object *o, const char *key, double *v) {
  json_object *m;
  if (!json_object_object_get_ex(o, key, &m)) return false;
  if (!json_object_is_type(m, json_type_int) && !json_object_is_type(m, json_type_double)) return false;
  *v = json_object_get_double(m);
  return *v >= 0;
}

Profile *profile_read(Arena *a, const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    return NULL;
  }
  json_tokener *tok = json_tokener_new();
  if (!tok) sf_die("out of memory");
  json_object *root = NULL;
  enum json_tokener_error jerr = json_tokener_continue;
  char buf[65536];
  size_t got, total = 0;
  while (jerr == json_tokener_continue && (got = fread(buf, 1, sizeof buf, f)) > 0) {
    root = json_tokener_parse_ex(tok, buf, (int)got);
    jerr = json_tokener_get_error(tok);
    total += got;
  }
  bool read_error = ferror(f);
  fclose(f);
  if (read_error) {
    snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
  } else if (jerr == json_tokener_continue) {
    snprintf(err, errlen, "%s: not JSON: %s", path, total ? "it ends before its value does" : "the file is empty");
  } else if (jerr != json_tokener_success) {
    snprintf(err, errlen, "%s: not JSON: %s", path, json_tokener_error_desc(jerr));
  }
  json_tokener_free(tok);
  if (read_error || jerr != json_tokener_success) {
    json_object_put(root);
    return NULL;
  }

  Profile *p = NULL;
  json_object *ops, *cores;
  double ncores = 0;
  if (!json_object_is_type(root, json_type_object) || !json_object_object_get_ex(root, "operators", &ops) ||
      !json_object_is_type(ops, json_type_array)) {
    snprintf(err, errlen, "%s: no \"operators\" array: not a file of sf-exec --stats-json", path);
  } else if (!json_object_object_get_ex(root, "cores", &cores) || !number_member(root, "cores", &ncores) || ncores < 1) {
    snprintf(err, errlen, "%s: no \"cores\" (a file of sf-exec --stats-json from before --profile?)", path);
  } else {
    size_t n = json_object_array_length(ops);
    p = arena_alloc(a, sizeof *p);
    p->file = arena_strdup(a, path);
    p->cores = ncores > 1 << 20 ? 1 << 20 : (int)ncores;
    p->ops = arena_alloc(a, sizeof *p->ops * (2 * n + 1)); /* a Split or Merge may count twice */
    for (size_t i = 0; i < n && p; i++) {
      json_object *o = json_object_array_get_idx(ops, i), *name;
      double cpu, in, out;
      if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "name", &name) ||
          !json_object_is_type(name, json_type_string)) {
        snprintf(err, errlen, "%s: operator %zu has no \"name\"", path, i + 1);
        p = NULL;
      } else if (!number_member(o, "cpu_ns", &cpu) || !number_member(o, "in", &in) || !number_member(o, "out", &out)) {
        snprintf(err, errlen, "%s: operator '%s' lacks \"cpu_ns\", \"in\" or \"out\"", path, json_object_get_string(name));
        p = NULL;
      } else {
        const char *text = json_object_get_string(name), *kind = NULL, *from = NULL;
        json_object *m;
        if (json_object_object_get_ex(o, "kind", &m) && json_object_is_type(m, json_type_string))
          kind = json_object_get_string(m);
        if (json_object_object_get_ex(o, "origin", &m) && json_object_is_type(m, json_type_string))
          from = json_object_get_string(m);
        /* a region's entry Split and exit Merge (rN.split, rN.merge; not a shuffle's rN.split[i])
         * also count as "split of FIRST" and "merge of LAST", FIRST and LAST their origins: the
         * region's first and last operators, whatever its number */
        const char *role = NULL;
        if (kind && from && !strchr(text, '['))
          role = !strcmp(kind, "Split") ? "split of" : !strcmp(kind, "Merge") ? "merge of" : NULL;
        profile_add(a, p, origin_name(a, text), cpu, in, out);
        if (role) profile_add(a, p, arena_printf(a, "%s %s", role, from), cpu, in, out);
      }
    }
  }
  json_object_put(root);
  return p;
}
