/* custom_load.c: part of the Custom kind (custom_priv.h lists its files): finding and loading the
 * operator's shared library, and the op.h ABI versions its sf_operator may have.
 *
 * The library is looked up (a path without '/') in the graph file's directory, in
 * <dir of /proc/self/exe>/../SF_LIBDIR_REL, in each directory of $SF_LIBRARY_PATH, and finally by
 * the system's loader; the first candidate file that exists is loaded, and a failure to load it is
 * an error (no falling back to another copy). A path with '/' is used as it is.
 *
 * Versions: a struct sf_operator of version N ends after the callbacks version N has, so nothing
 * past them is read: a version-1 struct ends after close (snapshot and restore stay NULL), a
 * version-2 one after restore (no tick). */
#include "custom_priv.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SF_LIBDIR_REL
#define SF_LIBDIR_REL "lib/streamfission"
#endif

/* "versions 1 and 2" (every version from ABI_OLDEST to SF_OPERATOR_ABI), into buf. */
static const char *supported_versions(char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "version%s", ABI_OLDEST < SF_OPERATOR_ABI ? "s" : "");
  for (int v = ABI_OLDEST; v <= SF_OPERATOR_ABI && n < cap; v++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%d", v == ABI_OLDEST ? " " : v == SF_OPERATOR_ABI ? " and " : ", ", v);
  return buf;
}

/* Directory of the running executable, or "" when /proc/self/exe cannot be read. */
static void exe_dir(char *dir, size_t cap) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  dir[0] = 0;
  if (n <= 0) return;
  path[n] = 0;
  char *slash = strrchr(path, '/');
  if (!slash) return;
  *slash = 0;
  snprintf(dir, cap, "%s", path);
}

/* Loads `path` (as written in the graph). Returns the handle, or NULL after rt_fail. */
static void *load_library(sf_op *op, const char *path) {
  const int flags = RTLD_NOW | RTLD_LOCAL;
  if (strchr(path, '/')) {
    void *h = dlopen(path, flags);
    if (!h) custom_fail(op, "cannot load library '%s': %s", path, dlerror());
    return h;
  }
  Buf dirs;
  buf_init(&dirs);
  const char *graph_dir = op->inst->graph_dir && *op->inst->graph_dir ? op->inst->graph_dir : ".";
  buf_puts(&dirs, graph_dir);
  char exe[PATH_MAX];
  exe_dir(exe, sizeof exe);
  if (*exe) {
    buf_putc(&dirs, ':');
    buf_puts(&dirs, exe);
    buf_puts(&dirs, "/../" SF_LIBDIR_REL);
  }
  const char *env = getenv("SF_LIBRARY_PATH");
  if (env && *env) {
    buf_putc(&dirs, ':');
    buf_puts(&dirs, env);
  }
  /* dirs: candidate directories separated by ':' (empty entries are skipped) */
  Buf tried, cand;
  buf_init(&tried);
  buf_init(&cand);
  void *h = NULL;
  bool found = false;
  for (const char *d = dirs.p; !found;) {
    const char *colon = strchr(d, ':');
    size_t n = colon ? (size_t)(colon - d) : strlen(d);
    if (n) {
      buf_reset(&cand);
      buf_append(&cand, d, n);
      buf_putc(&cand, '/');
      buf_puts(&cand, path);
      if (access(cand.p, F_OK) == 0) {
        found = true;
        h = dlopen(cand.p, flags);
        if (!h) custom_fail(op, "cannot load library '%s': %s", cand.p, dlerror());
      } else {
        buf_puts(&tried, tried.n ? ", '" : "'");
        buf_append(&tried, d, n);
        buf_putc(&tried, '\'');
      }
    }
    if (!colon) break;
    d = colon + 1;
  }
  if (!found) {
    h = dlopen(path, flags);
    if (!h)
      custom_fail(op, "cannot find library '%s' (looked in %s and the system's library path): %s", path, tried.p,
              dlerror());
  }
  buf_release(&dirs);
  buf_release(&tried);
  buf_release(&cand);
  return h;
}

int custom_load(sf_op *op) {
  Op *g = op->inst->op;
  if (!g->lib_path || !g->lib_symbol) return custom_fail(op, "needs a <library path=... symbol=...>");
  op->dl = load_library(op, g->lib_path);
  if (!op->dl) return -1;
  dlerror();
  op->vt = dlsym(op->dl, g->lib_symbol);
  if (!op->vt) return custom_fail(op, "library '%s' has no symbol '%s'", g->lib_path, g->lib_symbol);
  op->abi = op->vt->abi_version;
  if (op->abi < ABI_OLDEST || op->abi > SF_OPERATOR_ABI)
  {
    char versions[64];
    return custom_fail(op, "'%s' in library '%s' was built for op.h ABI version %d, this sf-exec supports %s",
                       g->lib_symbol, g->lib_path, op->abi, supported_versions(versions, sizeof versions));
  }
  if (op->abi >= 2) { /* a version-1 struct ends after close: never read further */
    op->snapshot = op->vt->snapshot;
    op->restore = op->vt->restore;
  }
  if (op->abi >= 3) op->tick = op->vt->tick; /* a version-2 struct ends after restore */
  return 0;
}

void custom_unload(sf_op *op) {
  if (op->dl) dlclose(op->dl);
  op->dl = NULL;
}
