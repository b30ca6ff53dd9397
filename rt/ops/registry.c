/* registry.c: which OpKindImpl runs each operator kind; the kinds themselves are the other files of
 * ops/, one kind per file (the Custom kind is the custom*.c files and custom_priv.h), each named
 * in kinds.def. KIND_UNKNOWN has none: NULL (the plan refuses it). */
#include "rt.h"

const OpKindImpl *rt_kind_impl(OpKind k) {
  switch (k) {
#define KIND(id, name, impl, ...) \
  case KIND_##id: return &impl;
#include "kinds.def"
#undef KIND
  default: return NULL;
  }
}
