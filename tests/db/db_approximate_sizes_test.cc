// DB::GetApproximateSizes: bytes of segment files per key range, against
// the files' real sizes, across levels, without counting the memtable.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "bloomkv/db.h"
#include "tests/testutil/test_util.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

std::string Key(uint64_t i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%06llu", static_cast<unsigned long long>(i));
  return buf;
}

uint64_t SizeOf(DB* db, const std::string& start, const std::string& limit) {
  const Range r(start, limit);
  uint64_t size = ~uint64_t{0};
  db->GetApproximateSizes(&r, 1, &size);
  return size;
}

uint64_t TotalSegmentBytes(DB* db) {
  uint64_t total = 0;
  for (const SegmentInfo& s : db->GetSegmentInfo()) total += s.file_size;
  return total;
}

TEST(DBApproximateSizesTest, RangesCountTheirShareOfTheSegments) {
  test::TempDir dir("approximate-sizes");
  Options options;
  options.create_if_missing = true;
  options.compression = CompressionType::kNone;
  options.compression_per_level.clear();
  options.write_buffer_size = 64 << 20;  // everything stays in the memtable
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  constexpr uint64_t kKeys = 40000;
  const std::string value(100, 'v');
  for (uint64_t i = 0; i < kKeys; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), value).ok());
  }
  // Still in the memtable: nothing is counted.
  EXPECT_EQ(0u, SizeOf(db.get(), Key(0), Key(kKeys)));
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());

  const uint64_t total = TotalSegmentBytes(db.get());
  const uint64_t all = SizeOf(db.get(), "", "~");
  // Everything but the filter, index and properties after the data blocks.
  EXPECT_LE(all, total);
  EXPECT_GE(all, total * 8 / 10);
  // Half the keys, about half the bytes (to a block per segment).
  const uint64_t half = SizeOf(db.get(), Key(0), Key(kKeys / 2));
  EXPECT_NEAR(static_cast<double>(all) / 2, static_cast<double>(half),
              0.05 * static_cast<double>(all));
  // A tenth in the middle.
  const uint64_t tenth = SizeOf(db.get(), Key(kKeys / 2), Key(kKeys / 2 + kKeys / 10));
  EXPECT_NEAR(static_cast<double>(all) / 10, static_cast<double>(tenth),
              0.02 * static_cast<double>(all));
  // Outside the keys, empty or inverted: nothing.
  EXPECT_EQ(0u, SizeOf(db.get(), "a", "b"));
  EXPECT_EQ(0u, SizeOf(db.get(), "x", "z"));
  EXPECT_EQ(0u, SizeOf(db.get(), Key(10), Key(10)));
  EXPECT_EQ(0u, SizeOf(db.get(), Key(20), Key(10)));

  // Several ranges at once, each as alone.
  // Range holds Slices: the keys must outlive it.
  const std::string k0 = Key(0), k_half = Key(kKeys / 2),
                    k_more = Key(kKeys / 2 + kKeys / 10);
  const Range ranges[3] = {Range(k0, k_half), Range("a", "b"),
                           Range(k_half, k_more)};
  uint64_t sizes[3];
  db->GetApproximateSizes(ranges, 3, sizes);
  EXPECT_EQ(half, sizes[0]);
  EXPECT_EQ(0u, sizes[1]);
  EXPECT_EQ(tenth, sizes[2]);
}

TEST(DBApproximateSizesTest, CountsEveryLevelThatHoldsTheRange) {
  test::TempDir dir("approximate-sizes-levels");
  Options options = test::TinyCompactionOptions();
  // Raw blocks, so that a segment has many and the estimate is fine-grained.
  options.compression = CompressionType::kNone;
  options.compression_per_level.clear();
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  const std::string value(200, 'w');
  for (int round = 0; round < 2; round++) {
    for (uint64_t i = 0; i < 5000; i++) {
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), value).ok());
    }
    ASSERT_TRUE(db->Flush().ok());
  }
  const uint64_t total = TotalSegmentBytes(db.get());
  const uint64_t all = SizeOf(db.get(), "", "~");
  EXPECT_LE(all, total);
  EXPECT_GE(all, total / 2);
  EXPECT_GT(SizeOf(db.get(), Key(0), Key(2500)), all / 3);
}

}  // namespace
}  // namespace bloomkv
