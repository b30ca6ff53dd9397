// work_pipeline.cpp: the in-process peer of issue 10, Intel TBB's parallel_pipeline running what
// tests/bench/tbb.sh's Work graph runs: a serial_in_order source making the Beacon's tuples, a
// parallel stage doing the Work operator's splitmix64 rounds, and a serial_in_order sink writing
// the FileSink's CSV. Its output file is byte-identical to sf-exec's (the benchmark checks).
//
// Written as an expert would write it (issue 19), so that it does not flatter sf:
// - tokens carry CHUNK tuples (default 256): one tuple per token costs TBB far more per tuple;
// - the sink formats each row with std::to_chars (for an int64 the same text as sf's int_format:
//   an optional '-', then the decimal digits without leading zeros) into its own 1 MiB buffer,
//   written with write(2) once it holds 1 MiB, and the file is fsynced at the end, as
//   sf's FileSink does with a regular file. No stdio, no lock, no call per row.
//
// usage: sf-bench-tbb-work N ROUNDS THREADS OUT.csv [CHUNK]
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

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

// The sink's output: a descriptor and its own buffer, written in FLUSH_AT pieces like FileSink's.
class Out {
public:
  static constexpr size_t FLUSH_AT = 1 << 20; // bytes buffered before a write
  static constexpr size_t ROW_MAX = 2 * 20 + 2; // "id,cost\n", each int64 at most 20 characters

  Out(const char *path) : path_(path), buf_(new char[FLUSH_AT + ROW_MAX]), end_(buf_) {
    fd_ = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) fail();
  }
  ~Out() { delete[] buf_; }

  void text(const char *s) {
    size_t n = std::strlen(s);
    std::memcpy(end_, s, n);
    end_ += n;
  }
  // Appends the row of one tuple; writes the buffer out once it holds FLUSH_AT bytes.
  void row(int64_t id, int64_t cost) {
    char *p = std::to_chars(end_, end_ + 20, id).ptr;
    *p++ = ',';
    p = std::to_chars(p, p + 20, cost).ptr;
    *p++ = '\n';
    end_ = p;
    if ((size_t)(end_ - buf_) >= FLUSH_AT) flush();
  }
  void close() {
    flush();
    if (fsync(fd_) != 0 || ::close(fd_) != 0) fail();
  }

private:
  void flush() {
    for (const char *p = buf_; p < end_;) {
      ssize_t n = write(fd_, p, (size_t)(end_ - p));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail();
      p += n;
    }
    end_ = buf_;
  }
  [[noreturn]] void fail() {
    std::fprintf(stderr, "sf-bench-tbb-work: cannot write '%s': %s\n", path_, std::strerror(errno));
    std::exit(1);
  }

  const char *path_;
  int fd_;
  char *buf_, *end_; // the buffer (FLUSH_AT bytes and room for one more row), its end
};

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
  Out out(argv[4]);
  out.text("id,cost\n");

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
            for (size_t i = 0; i < c->id.size(); i++) out.row(c->id[i], c->cost[i]);
            result = result ^ c->result;
            delete c;
          }));
  out.close();
  return 0;
}
