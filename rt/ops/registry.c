/* registry.c: which OpKindImpl runs each operator kind; the kinds themselves are the other files of
 * ops/, one kind per file. A kind without an implementation here is NULL (the plan refuses it). */
#include "rt.h"

const OpKindImpl *rt_kind_impl(OpKind k) {
  switch (k) {
  case KIND_BEACON: return &op_beacon;
  case KIND_FILESOURCE: return &op_filesource;
  case KIND_FUNCTOR: return &op_functor;
  case KIND_FILTER: return &op_filter;
  case KIND_FLATMAP: return &op_flatmap;
  case KIND_AGGREGATE: return &op_aggregate;
  case KIND_DEDUP: return &op_dedup;
  case KIND_WORK: return &op_work;
  case KIND_CUSTOM: return &op_custom;
  case KIND_FILESINK: return &op_filesink;
  case KIND_SPLIT: return &op_split;
  case KIND_MERGE: return &op_merge;
  default: return NULL;
  }
}
