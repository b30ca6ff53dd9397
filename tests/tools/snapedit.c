/* sf-snapedit DIR K OP EDIT VALUE: rewrites operator OP's snapshot in checkpoint K of DIR with one
 * field changed, its CRC and the manifest's size made right again, as someone who knows the format
 * would (tests/recovery.sh: a checkpoint that is sound to the CRC but that a restore must refuse).
 * EDIT: pos (the barrier's position), next-seq and taken (the ordered driver's counters), state-u64
 * OFFSET:VALUE (the u64 at that byte offset of the kind's own snapshot), state-cut N (the kind's
 * snapshot cut to N bytes); get-next-seq and get-state-u64 OFFSET print the value instead (VALUE
 * is then ignored, or the offset) and change nothing. Exit 0, or 1 with a message. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckptdir.h"

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: sf-snapedit DIR K OP pos|next-seq|taken|state-u64|state-cut VALUE\n");
    return 2;
  }
  const char *dir = argv[1], *op = argv[3], *edit = argv[4], *value = argv[5];
  uint64_t id = strtoull(argv[2], NULL, 10);
  char why[4096];
  char *manifest = ckptdir_read_manifest(dir, id, why, sizeof why);
  if (!manifest) return fprintf(stderr, "sf-snapedit: %s\n", why), 1;
  uint64_t graph, pos = 0;
  char name[256];
  const char *p = strstr(manifest, "\nposition ");
  if (!ckptdir_manifest_graph(manifest, &graph, name, sizeof name) || !p)
    return fprintf(stderr, "sf-snapedit: malformed manifest\n"), 1;
  pos = strtoull(p + 10, NULL, 10);
  CkptSnap s = { 0 };
  if (!ckptdir_snap_load(dir, id, op, manifest, &s, why, sizeof why)) return fprintf(stderr, "sf-snapedit: %s\n", why), 1;
  unsigned char *state = malloc(s.state.n + 1);
  memcpy(state, s.state.p, s.state.n);
  size_t nstate = s.state.n;
  uint64_t v = strtoull(value, NULL, 0);
  if (!strcmp(edit, "get-next-seq") || !strcmp(edit, "get-state-u64")) {
    uint64_t got = s.next_seq;
    if (edit[4] == 's') {
      if (v + 8 > nstate) return fprintf(stderr, "sf-snapedit: bad OFFSET '%s'\n", value), 1;
      got = 0;
      for (int i = 0; i < 8; i++) got |= (uint64_t)state[v + (uint64_t)i] << (8 * i);
    }
    printf("%" PRIu64 "\n", got);
    free(state);
    free(s.bytes);
    free(manifest);
    return 0;
  }
  if (!strcmp(edit, "pos")) {
    s.pos = v;
  } else if (!strcmp(edit, "next-seq")) {
    s.next_seq = v;
  } else if (!strcmp(edit, "taken")) {
    s.taken = v;
  } else if (!strcmp(edit, "state-cut")) {
    if (v < nstate) nstate = (size_t)v;
  } else if (!strcmp(edit, "state-u64")) {
    char *colon = strchr(value, ':');
    size_t off = strtoull(value, NULL, 0);
    if (!colon || off + 8 > nstate) return fprintf(stderr, "sf-snapedit: bad OFFSET:VALUE '%s'\n", value), 1;
    v = strtoull(colon + 1, NULL, 0);
    for (int i = 0; i < 8; i++) state[off + (size_t)i] = (unsigned char)(v >> (8 * i));
  } else {
    return fprintf(stderr, "sf-snapedit: unknown edit '%s'\n", edit), 2;
  }
  CkptSnapHead head = { .id = id, .graph = s.graph, .name = op, .fingerprint = s.fingerprint };
  Buf b;
  buf_init(&b);
  ckptdir_snap_encode(&b, &head, s.next_seq, s.taken, s.pos, state, nstate);
  char path[4096], file[512];
  snprintf(file, sizeof file, "%s.snap", op);
  if (ckptdir_path(path, sizeof path, dir, id, file) < 0 || ckptdir_write_file(path, b.p, b.n, true) < 0 ||
      ckptdir_write_manifest(dir, id, pos, graph, name) < 0)
    return fprintf(stderr, "sf-snapedit: cannot write '%s'\n", path), 1;
  buf_release(&b);
  free(state);
  free(s.bytes);
  free(manifest);
  return 0;
}
