// Helpers for the table tests: in-memory files, an exact test filter policy
// and a one-call segment builder.
//
// ExactFilterPolicy records the hashes it is given (sorted fixed64s), so it
// never answers a false positive and filter tests can be exact.
// Thread-safety: StringSource may be read concurrently; the rest need
// external synchronization.
#ifndef BLOOMKV_TESTS_TABLE_TABLE_TEST_UTIL_H_
#define BLOOMKV_TESTS_TABLE_TABLE_TEST_UTIL_H_

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bloomkv/env.h"
#include "bloomkv/filter_policy.h"
#include "table/internal_key.h"
#include "table/segment_builder.h"
#include "table/segment_reader.h"
#include "util/coding.h"

namespace bloomkv::test {

class StringSink final : public WritableFile {
 public:
  explicit StringSink(std::string* dst) : dst_(dst) {}
  Status Append(const Slice& data) override {
    dst_->append(data.data(), data.size());
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }

 private:
  std::string* const dst_;
};

// How a RandomAccessFile hands out what it reads: copied into the caller's
// scratch (like pread), or as a pointer to bytes the file owns (like a
// memory-mapped file). Readers must handle both.
enum class ReadMode { kCopy, kInPlace };

inline const char* ReadModeName(ReadMode mode) {
  return mode == ReadMode::kCopy ? "Copy" : "InPlace";
}

// Reads from a string; counts the reads that reach it.
class StringSource final : public RandomAccessFile {
 public:
  explicit StringSource(std::string contents,
                        std::shared_ptr<std::atomic<int>> reads = nullptr,
                        ReadMode mode = ReadMode::kCopy)
      : contents_(std::move(contents)), reads_(std::move(reads)), mode_(mode) {}
  Status Read(uint64_t offset, size_t n, Slice* result,
              char* scratch) const override {
    if (reads_ != nullptr) (*reads_)++;
    if (offset > contents_.size()) {
      *result = Slice();
      return Status::OK();
    }
    const size_t avail = contents_.size() - static_cast<size_t>(offset);
    const size_t len = std::min(n, avail);
    if (mode_ == ReadMode::kInPlace) {
      *result = Slice(contents_.data() + offset, len);
      return Status::OK();
    }
    std::memcpy(scratch, contents_.data() + offset, len);
    *result = Slice(scratch, len);
    return Status::OK();
  }

 private:
  const std::string contents_;
  const std::shared_ptr<std::atomic<int>> reads_;
  const ReadMode mode_;
};

class ExactFilterPolicy final : public FilterPolicy {
 public:
  explicit ExactFilterPolicy(std::string name = "test.ExactFilter")
      : name_(std::move(name)) {}
  const char* Name() const override { return name_.c_str(); }
  void CreateFilter(const uint64_t* hashes, size_t n,
                    std::string* dst) const override {
    std::vector<uint64_t> v(hashes, hashes + n);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    for (uint64_t h : v) PutFixed64(dst, h);
  }
  bool KeyMayMatch(uint64_t hash, const Slice& filter) const override {
    if (filter.size() % 8 != 0) return true;
    size_t lo = 0, hi = filter.size() / 8;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      const uint64_t h = DecodeFixed64(filter.data() + mid * 8);
      if (h == hash) return true;
      if (h < hash) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return false;
  }
  double BitsPerKey() const override { return 64; }
  double TheoreticalFpRate(const Slice&, uint64_t) const override { return 0; }

 private:
  const std::string name_;
};

struct Entry {
  std::string ikey;
  std::string value;
};

inline Entry MakeEntry(const std::string& user_key, SequenceNumber seq,
                       ValueType type, const std::string& value) {
  return Entry{MakeInternalKey(user_key, seq, type), value};
}

// Builds a segment holding entries (which must be sorted) into *contents.
inline Status BuildSegment(const SegmentBuilderOptions& options,
                           const std::vector<Entry>& entries,
                           std::string* contents,
                           SegmentProperties* props = nullptr) {
  contents->clear();
  StringSink sink(contents);
  SegmentBuilder builder(options, &sink);
  for (const Entry& e : entries) {
    Status s = builder.Add(e.ikey, e.value);
    if (!s.ok()) return s;
  }
  Status s = builder.Finish();
  if (s.ok() && builder.FileSize() != contents->size()) {
    return Status::Corruption("FileSize() disagrees with the bytes written");
  }
  if (props != nullptr) *props = builder.properties();
  return s;
}

inline Status OpenSegment(const SegmentReaderOptions& options,
                          const std::string& contents,
                          std::unique_ptr<SegmentReader>* reader,
                          std::shared_ptr<std::atomic<int>> reads = nullptr,
                          const std::string& name = "000001.seg") {
  return SegmentReader::Open(
      options, name, std::make_unique<StringSource>(contents, std::move(reads)),
      contents.size(), reader);
}

}  // namespace bloomkv::test

#endif  // BLOOMKV_TESTS_TABLE_TABLE_TEST_UTIL_H_
