// CountingEnv: a bloomkv EnvWrapper that counts what reaches the files:
// random-access reads (calls and bytes returned) and bytes appended.
//
// kvbench measures "data blocks read" at this level, and write
// amplification as bytes appended to any file (log, segments, manifest)
// divided by the user bytes written. Unlike the test helper of the same
// idea it keeps no per-file counts: one set of relaxed atomics, so counting
// does not slow concurrent readers down.
//
// Thread-safety: thread-safe. A Counts snapshot taken while reads run may
// include some of them.
#ifndef BLOOMKV_BENCH_KVBENCH_COUNTING_ENV_H_
#define BLOOMKV_BENCH_KVBENCH_COUNTING_ENV_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "bloomkv/env.h"

namespace bloomkv::bench {

class CountingEnv : public EnvWrapper {
 public:
  struct Counts {
    uint64_t random_reads = 0;  // RandomAccessFile::Read calls
    uint64_t random_read_bytes = 0;
    uint64_t bytes_appended = 0;  // WritableFile::Append bytes
  };

  // REQUIRES: target outlives this Env and every file it opened.
  explicit CountingEnv(Env* target) : EnvWrapper(target) {}

  Counts counts() const {
    Counts c;
    c.random_reads = random_reads_.load(std::memory_order_relaxed);
    c.random_read_bytes = random_read_bytes_.load(std::memory_order_relaxed);
    c.bytes_appended = bytes_appended_.load(std::memory_order_relaxed);
    return c;
  }

  Status NewRandomAccessFile(
      const std::string& fname,
      std::unique_ptr<RandomAccessFile>* result) override;
  Status NewWritableFile(const std::string& fname,
                         std::unique_ptr<WritableFile>* result) override;
  Status NewAppendableFile(const std::string& fname,
                           std::unique_ptr<WritableFile>* result) override;

 private:
  class CountingRandomAccessFile;
  class CountingWritableFile;

  std::atomic<uint64_t> random_reads_{0};
  std::atomic<uint64_t> random_read_bytes_{0};
  std::atomic<uint64_t> bytes_appended_{0};
};

}  // namespace bloomkv::bench

#endif  // BLOOMKV_BENCH_KVBENCH_COUNTING_ENV_H_
