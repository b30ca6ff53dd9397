/* work_row.c: the per-tuple work of the TBB peer (work_pipeline.cpp), in C so that it calls the
 * runtime's own functions: the Beacon's values, the Work operator's hash and splitmix64 rounds
 * (rt/ops/work.c). The peer formats the FileSink's rows itself (std::to_chars), and its output file
 * is byte for byte the one sf-exec writes for the same graph (tests/bench/tbb.sh checks it). */
#include "work_row.h"

#include "value.h"

void tbb_job(int64_t seq, int64_t *id, int64_t *cost) {
  *id = seq;                  /* <set attr="id">seq</set> */
  *cost = sf_rand(seq) % 100; /* <set attr="cost">rand(seq) % 100</set> */
}

uint64_t tbb_work(int64_t id, int64_t cost, uint64_t rounds) {
  Value v[2] = {value_int(id), value_int(cost)};
  uint64_t x = SF_HASH_SEED;
  for (int k = 0; k < 2; k++) x = value_hash(&v[k], x);
  for (uint64_t r = 0; r < rounds; r++) x = sf_mix64(x);
  return x;
}
