// In-memory files for tests: a WritableFile that appends to a std::string and
// a SequentialFile / RandomAccessFile that reads from one. They let format
// tests write, damage and reread files without touching the file system.
//
// Thread-safety: StringSink and StringSource's sequential reads require
// external synchronization; StringSource's positional reads are thread-safe
// (they never change the object).
#ifndef BLOOMKV_TESTS_TESTUTIL_MEM_FILES_H_
#define BLOOMKV_TESTS_TESTUTIL_MEM_FILES_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "bloomkv/env.h"

namespace bloomkv {
namespace test {

// A WritableFile whose contents is a std::string. It counts calls, so tests
// can check how many appends or syncs a writer issues.
class StringSink final : public WritableFile {
 public:
  StringSink() = default;
  // Starts with existing contents, as if opened for append.
  explicit StringSink(std::string initial) : contents_(std::move(initial)) {}

  Status Append(const Slice& data) override;
  Status Flush() override;
  Status Sync() override;
  Status Close() override;

  const std::string& contents() const { return contents_; }
  std::string* mutable_contents() { return &contents_; }
  size_t append_calls() const { return append_calls_; }
  size_t sync_calls() const { return sync_calls_; }
  bool closed() const { return closed_; }

 private:
  std::string contents_;
  size_t append_calls_ = 0;
  size_t sync_calls_ = 0;
  bool closed_ = false;
};

// Reads a copy of a string as a file. Results point into the string (no copy
// to scratch), as a memory-mapped file's would. A read error can be injected
// at an offset, to test how readers handle a failing device.
class StringSource final : public SequentialFile, public RandomAccessFile {
 public:
  explicit StringSource(std::string contents)
      : contents_(std::move(contents)) {}

  // SequentialFile.
  Status Read(size_t n, Slice* result, char* scratch) override;
  Status Skip(uint64_t n) override;
  // RandomAccessFile.
  Status Read(uint64_t offset, size_t n, Slice* result,
              char* scratch) const override;

  // Makes reads that reach offset fail with IOError, from then on.
  void set_fail_at(uint64_t offset) { fail_at_ = offset; }

  const std::string& contents() const { return contents_; }
  uint64_t position() const { return pos_; }

 private:
  const std::string contents_;
  uint64_t pos_ = 0;
  uint64_t fail_at_ = UINT64_MAX;
};

}  // namespace test
}  // namespace bloomkv

#endif  // BLOOMKV_TESTS_TESTUTIL_MEM_FILES_H_
