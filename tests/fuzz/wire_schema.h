/* wire_schema.h: the edge and schema of the wire fuzz target (fuzz_wire.c) and of its seed batches
 * (wire_seeds.c): W(id int, price double, name string, ok bool) on edge 'e'. */
#ifndef SF_FUZZ_WIRE_SCHEMA_H
#define SF_FUZZ_WIRE_SCHEMA_H

#include "sf.h"

#define FUZZ_WIRE_EDGE "e"
#define FUZZ_WIRE_MAX_ITEMS 4096 /* items per batch the decoder accepts (an executor: about its batch size) */

static Attr fuzz_wire_attrs[] = {
  {"id", TYPE_INT, 1}, {"price", TYPE_DOUBLE, 2}, {"name", TYPE_STRING, 3}, {"ok", TYPE_BOOL, 4},
};
static Schema fuzz_wire_schema = {"W", fuzz_wire_attrs, 4, 1};

#endif
