/* tempfiles.c: the temporary files a process that ends abnormally removes (see rt.h).
 *
 * A FileSink removes its temporary file itself when the job fails (close with ok false). A process
 * that never gets there (a fatal signal, exit() called by an operator, an operator that does not
 * return after a stop: fatal.c) removes them from here, in a signal handler or with other threads
 * still running: so the table is a fixed array of copied paths, claimed and released with atomics,
 * and tempfiles_unlink_all takes no lock and allocates nothing.
 *
 * A slot's state goes FREE -> CLAIMED (its path being copied by tempfile_track) -> READY, and back
 * to FREE by tempfile_untrack; tempfiles_unlink_all takes every READY slot to GONE, for good (the
 * process is ending), so that a slot is never reused while its path is being unlinked. */
#include "rt.h"

#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

enum {
  TEMPFILES_MAX = 256, /* files tracked at once (each open FileSink, or part, has one) */
  SLOT_FREE = 0,
  SLOT_CLAIMED,
  SLOT_READY,
  SLOT_GONE,
};

static struct {
  atomic_int state;
  char path[PATH_MAX];
} slots[TEMPFILES_MAX];

int tempfile_track(const char *path) {
  size_t n = strlen(path);
  if (n >= PATH_MAX) return -1;
  for (int i = 0; i < TEMPFILES_MAX; i++) {
    int free_state = SLOT_FREE;
    if (!atomic_compare_exchange_strong(&slots[i].state, &free_state, SLOT_CLAIMED)) continue;
    memcpy(slots[i].path, path, n + 1);
    atomic_store(&slots[i].state, SLOT_READY);
    return i;
  }
  return -1;
}

void tempfile_untrack(int slot) {
  if (slot < 0 || slot >= TEMPFILES_MAX) return;
  int ready = SLOT_READY;
  atomic_compare_exchange_strong(&slots[slot].state, &ready, SLOT_FREE); /* GONE stays gone */
}

void tempfiles_unlink_all(void) {
  for (int i = 0; i < TEMPFILES_MAX; i++) {
    int ready = SLOT_READY;
    if (atomic_compare_exchange_strong(&slots[i].state, &ready, SLOT_GONE)) unlink(slots[i].path);
  }
}
