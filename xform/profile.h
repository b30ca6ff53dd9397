/* profile.h: reading a profile (profile.c, sf-xform only: it links json-c). */
#ifndef SF_PROFILE_H
#define SF_PROFILE_H

#include "sf.h"

/* The profile in FILE (sf-exec --stats-json), in a's memory; NULL with "FILE: why" in err when it
 * cannot be read, is not JSON or lacks what the cost model needs. */
Profile *profile_read(Arena *a, const char *path, char *err, size_t errlen);

#endif
