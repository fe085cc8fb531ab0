// ReadaheadFile: a front-to-back scan in blocks of random sizes reads the
// same bytes as direct reads would, in about size / readahead reads, never
// reads ahead past the end it was given, and passes read errors on.
#include "table/readahead_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// A file in memory that counts the reads that reach it and the furthest
// byte they asked for, and fails reads that reach fail_at.
class BytesFile final : public RandomAccessFile {
 public:
  explicit BytesFile(std::string data) : data_(std::move(data)) {}
  Status Read(uint64_t offset, size_t n, Slice* result,
              char* scratch) const override {
    reads++;
    furthest = std::max<uint64_t>(furthest, offset + n);
    if (offset + n > fail_at) return Status::IOError("injected read error");
    const size_t start = std::min<size_t>(data_.size(), offset);
    const size_t len = std::min(n, data_.size() - start);
    std::copy(data_.data() + start, data_.data() + start + len, scratch);
    *result = Slice(scratch, len);
    return Status::OK();
  }
  mutable uint64_t reads = 0;
  mutable uint64_t furthest = 0;
  uint64_t fail_at = UINT64_MAX;

 private:
  const std::string data_;
};

TEST(ReadaheadFileTest, ScanInRandomBlocksReadsTheSameBytesInFewReads) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    const std::string data =
        test::RandomBytes(&rnd, 100000 + rnd.Uniform(50000));
    BytesFile counting(data);
    // The scanned part ends before the file does, as a segment's data
    // blocks end before its index and footer.
    const uint64_t end = data.size() - rnd.Uniform(1000);
    const size_t readahead = 4096 + rnd.Uniform(40000);
    ReadaheadFile file(&counting, readahead, end);

    uint64_t offset = 0;
    std::string scratch;
    while (offset < end) {
      const size_t n = static_cast<size_t>(
          std::min<uint64_t>(1 + rnd.Uniform(3000), end - offset));
      scratch.resize(n);
      Slice got;
      ASSERT_TRUE(file.Read(offset, n, &got, scratch.data()).ok());
      ASSERT_EQ(data.substr(offset, n), got.ToString()) << "offset " << offset;
      offset += n;
    }
    EXPECT_GE(end / readahead + 2, counting.reads);
    EXPECT_GE(end, counting.furthest);
    // Past the end: served as asked, unbuffered (short at the file's end).
    scratch.resize(2000);
    Slice got;
    ASSERT_TRUE(file.Read(end, 2000, &got, scratch.data()).ok());
    EXPECT_EQ(data.substr(end, 2000), got.ToString());
  }
}

TEST(ReadaheadFileTest, ReadErrorsArePassedOn) {
  Random rnd(7);
  const std::string data = test::RandomBytes(&rnd, 50000);
  BytesFile source(data);
  source.fail_at = 30000;
  ReadaheadFile file(&source, 16384, data.size());
  std::string scratch(1000, '\0');
  Slice got;
  ASSERT_TRUE(file.Read(0, 1000, &got, scratch.data()).ok());
  EXPECT_EQ(data.substr(0, 1000), got.ToString());
  // The refill that would cover offset 30000 fails, whatever was asked.
  EXPECT_TRUE(file.Read(16384, 1000, &got, scratch.data()).IsIOError());
}

}  // namespace
}  // namespace bloomkv
