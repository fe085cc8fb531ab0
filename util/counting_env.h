// CountingEnv: an EnvWrapper that counts every read (and write) that reaches
// a file, in total and per file name.
//
// This is how tests and benchmarks prove IO claims, e.g. that a lookup rejected
// by a segment's filter reads nothing from that segment:
//   CountingEnv env(Env::Default());
//   ... open the DB on &env, warm up ...
//   env.Reset();
//   db->Get(absent_key);
//   EXPECT_EQ(0u, env.ForFile(segment_path).random_reads);
// Files are counted under the name they were opened with (renames do not
// move counts); a file opened twice under one name shares one set of
// counters. Bytes are the bytes actually returned (a short read at end of
// file counts what it got). Only files opened through this Env are counted.
// Thread-safety: thread-safe; counters are atomics, so counting does not
// serialize concurrent readers. A Reset() racing with reads may keep or lose
// those reads' counts.
#ifndef BLOOMKV_UTIL_COUNTING_ENV_H_
#define BLOOMKV_UTIL_COUNTING_ENV_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "bloomkv/env.h"
#include "util/mutex.h"

namespace bloomkv {

class CountingEnv : public EnvWrapper {
 public:
  // A snapshot of counters.
  struct Counts {
    uint64_t random_opens = 0;  // NewRandomAccessFile and
                                // NewShortLivedRandomAccessFile successes
    uint64_t random_reads = 0;  // RandomAccessFile::Read calls
    uint64_t random_read_bytes = 0;
    uint64_t sequential_opens = 0;  // NewSequentialFile successes
    uint64_t sequential_reads = 0;  // SequentialFile::Read calls
    uint64_t sequential_read_bytes = 0;
    uint64_t writable_opens = 0;  // NewWritableFile/NewAppendableFile
    uint64_t appends = 0;         // WritableFile::Append calls
    uint64_t bytes_appended = 0;
    uint64_t syncs = 0;  // WritableFile::Sync calls

    // Every read call, random or sequential.
    uint64_t reads() const { return random_reads + sequential_reads; }
    uint64_t read_bytes() const {
      return random_read_bytes + sequential_read_bytes;
    }
  };

  // REQUIRES: target outlives this Env and every file it opened.
  // With pass_mappings, a file that lies whole in a mapping says so
  // (RandomAccessFile::MappedBytes), as target's does, so that readers may
  // use bytes they verified there without reading them again; such uses
  // are not reads and are not counted. Without it (the default), every
  // read goes through Read and is counted.
  explicit CountingEnv(Env* target, bool pass_mappings = false);
  ~CountingEnv() override;

  Counts Total() const;
  // Zero counts for a name never opened.
  Counts ForFile(const std::string& fname) const;
  // Zeroes every counter.
  void Reset();

  Status NewSequentialFile(const std::string& fname,
                           std::unique_ptr<SequentialFile>* result) override;
  Status NewRandomAccessFile(
      const std::string& fname,
      std::unique_ptr<RandomAccessFile>* result) override;
  Status NewShortLivedRandomAccessFile(
      const std::string& fname,
      std::unique_ptr<RandomAccessFile>* result) override;
  Status NewWritableFile(const std::string& fname,
                         std::unique_ptr<WritableFile>* result) override;
  Status NewAppendableFile(const std::string& fname,
                           std::unique_ptr<WritableFile>* result) override;

  // Counters of one file (or of the total), updated lock-free.
  struct Counters;

 private:
  // Wraps the file *result a successful open (status s) of fname made, so
  // that its reads are counted; returns s.
  Status CountRandomAccessFile(const std::string& fname, Status s,
                               std::unique_ptr<RandomAccessFile>* result);
  // Counters for fname, created on first use; stable for the Env's life.
  Counters* CountersFor(const std::string& fname);

  std::unique_ptr<Counters> total_;
  const bool pass_mappings_;
  mutable Mutex mu_;
  std::map<std::string, std::unique_ptr<Counters>> per_file_ GUARDED_BY(mu_);
};

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_COUNTING_ENV_H_
