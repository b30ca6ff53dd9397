// work_pipeline.cpp: the in-process peer of issue 10, Intel TBB's parallel_pipeline running what
// tests/bench/tbb.sh's Work graph runs: a serial_in_order source making the Beacon's tuples, a
// parallel stage doing the Work operator's splitmix64 rounds, and a serial_in_order sink writing
// the FileSink's CSV. Its output file is byte-identical to sf-exec's (the benchmark checks).
//
// Tokens carry CHUNK tuples (default 256), as a TBB user would write it: one tuple per token
// costs TBB far more per tuple than sf's batched queues, which would flatter sf.
//
// usage: sf-bench-tbb-work N ROUNDS THREADS OUT.csv [CHUNK]
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_pipeline.h>

#include "work_row.h"

namespace {

struct Chunk {
  std::vector<int64_t> id, cost; // the tuples
  uint64_t result = 0;           // their Work results, xor-ed (kept observable, like work.c)
};

long long arg(const char *text, const char *what, long long min) {
  char *end;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  if (errno || end == text || *end || v < min) {
    std::fprintf(stderr, "sf-bench-tbb-work: %s must be an integer >= %lld, got '%s'\n", what, min, text);
    std::exit(2);
  }
  return v;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: sf-bench-tbb-work N ROUNDS THREADS OUT.csv [CHUNK]\n");
    return 2;
  }
  const long long n = arg(argv[1], "N", 0);
  const uint64_t rounds = (uint64_t)arg(argv[2], "ROUNDS", 0);
  const int threads = (int)arg(argv[3], "THREADS", 1);
  const long long chunk = argc == 6 ? arg(argv[5], "CHUNK", 1) : 256;
  FILE *out = std::fopen(argv[4], "w");
  if (!out) {
    std::fprintf(stderr, "sf-bench-tbb-work: cannot write '%s': %s\n", argv[4], std::strerror(errno));
    return 1;
  }
  static char iobuf[1 << 16];
  std::setvbuf(out, iobuf, _IOFBF, sizeof iobuf);
  std::fputs("id,cost\n", out);

  oneapi::tbb::global_control limit(oneapi::tbb::global_control::max_allowed_parallelism, threads);
  long long next = 0;
  volatile uint64_t result = 0;
  oneapi::tbb::parallel_pipeline(
      (size_t)threads * 4,
      oneapi::tbb::make_filter<void, Chunk *>(oneapi::tbb::filter_mode::serial_in_order,
                                              [&](oneapi::tbb::flow_control &fc) -> Chunk * {
                                                if (next >= n) {
                                                  fc.stop();
                                                  return nullptr;
                                                }
                                                Chunk *c = new Chunk;
                                                long long end = next + chunk < n ? next + chunk : n;
                                                c->id.resize((size_t)(end - next));
                                                c->cost.resize(c->id.size());
                                                for (size_t i = 0; next < end; next++, i++)
                                                  tbb_job(next, &c->id[i], &c->cost[i]);
                                                return c;
                                              }) &
          oneapi::tbb::make_filter<Chunk *, Chunk *>(oneapi::tbb::filter_mode::parallel,
                                                     [&](Chunk *c) {
                                                       for (size_t i = 0; i < c->id.size(); i++)
                                                         c->result ^= tbb_work(c->id[i], c->cost[i], rounds);
                                                       return c;
                                                     }) &
          oneapi::tbb::make_filter<Chunk *, void>(oneapi::tbb::filter_mode::serial_in_order, [&](Chunk *c) {
            char row[64];
            for (size_t i = 0; i < c->id.size(); i++)
              std::fwrite(row, 1, tbb_row(c->id[i], c->cost[i], row), out);
            result = result ^ c->result;
            delete c;
          }));
  if (std::fclose(out) != 0) {
    std::fprintf(stderr, "sf-bench-tbb-work: cannot write '%s': %s\n", argv[4], std::strerror(errno));
    return 1;
  }
  return 0;
}
