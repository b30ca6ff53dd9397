/* work_row.h: the C side of the TBB peer (see work_row.c). */
#ifndef SF_BENCH_WORK_ROW_H
#define SF_BENCH_WORK_ROW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The Beacon's values for tuple seq. */
void tbb_job(int64_t seq, int64_t *id, int64_t *cost);
/* The Work operator's result for one tuple: its values hashed, then `rounds` splitmix64 steps. */
uint64_t tbb_work(int64_t id, int64_t cost, uint64_t rounds);

#ifdef __cplusplus
}
#endif

#endif
