// A database whose segments carry filters of different built-in kinds
// answers every key and keeps skipping segments by filter, whatever filter
// policy it is reopened with: a store written with the bloom filter and
// reopened with the binary fuse filter (and back) reads every old segment's
// filter with the built-in policy of the name stored with it.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "bloomkv/db.h"
#include "bloomkv/filter_policy.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

constexpr int kKeysPerRound = 6000;
constexpr int kAbsentLookups = 20000;

class FilterKindsTest : public testing::Test {
 protected:
  void Open(std::shared_ptr<const FilterPolicy> policy) {
    db_.reset();
    Options options = test::TinyCompactionOptions();
    options.create_if_missing = true;
    options.filter_policy = std::move(policy);
    options.block_cache_capacity = 0;  // every filter positive is a read
    ASSERT_TRUE(DB::Open(options, dir_.path(), &db_).ok());
  }

  void Write(const std::string& prefix, uint64_t seed) {
    Random rnd(seed);
    for (int i = 0; i < kKeysPerRound; i++) {
      const std::string key = prefix + std::to_string(rnd.Next64());
      const std::string value = "value-of-" + key;
      ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
      model_[key] = value;
    }
    ASSERT_TRUE(db_->Flush().ok());
    test::WaitForBackgroundWork(db_.get());
  }

  // Fraction of the segments consulted for absent keys that their filter
  // ruled out.
  double AbsentKeysSkippedByFilter() {
    const DbStats before = db_->GetStats();
    std::string value;
    Random rnd(4242);
    for (int i = 0; i < kAbsentLookups; i++) {
      const std::string key = "k" + std::to_string(rnd.Next64()) + "-absent";
      EXPECT_TRUE(db_->Get(ReadOptions(), key, &value).IsNotFound());
    }
    const DbStats after = db_->GetStats();
    const uint64_t consulted =
        after.segments_consulted - before.segments_consulted;
    const uint64_t negatives = after.filter_negatives - before.filter_negatives;
    EXPECT_GT(consulted, static_cast<uint64_t>(kAbsentLookups) / 2);
    return static_cast<double>(negatives) / static_cast<double>(consulted);
  }

  test::TempDir dir_;
  std::unique_ptr<DB> db_;
  std::map<std::string, std::string> model_;
};

TEST_F(FilterKindsTest, BloomStoreReopenedWithBinaryFuseAndBack) {
  Open(NewBloomFilterPolicy(10));
  Write("k", 1);
  // Reopened with the fuse filter configured: the bloom segments keep
  // their filters.
  Open(NewBinaryFuseFilterPolicy(8));
  test::ExpectDbHolds(db_.get(), model_);
  EXPECT_GT(AbsentKeysSkippedByFilter(), 0.97);
  // New segments (flush and compaction output) get fuse filters; the store
  // now mixes both kinds.
  Write("k", 2);
  test::ExpectDbHolds(db_.get(), model_);
  EXPECT_GT(AbsentKeysSkippedByFilter(), 0.97);
  // And back: bloom configured, fuse segments still skipped by filter.
  Open(NewBloomFilterPolicy(10));
  test::ExpectDbHolds(db_.get(), model_);
  EXPECT_GT(AbsentKeysSkippedByFilter(), 0.97);
  Open(NewBinaryFuseFilterPolicy(16));
  test::ExpectDbHolds(db_.get(), model_);
  EXPECT_GT(AbsentKeysSkippedByFilter(), 0.97);
}

TEST_F(FilterKindsTest, FuseStoreReopenedWithBloom) {
  Open(NewBinaryFuseFilterPolicy(16));
  Write("k", 3);
  Open(NewBloomFilterPolicy(10));
  test::ExpectDbHolds(db_.get(), model_);
  EXPECT_GT(AbsentKeysSkippedByFilter(), 0.99);
}

TEST_F(FilterKindsTest, WithoutAPolicyNoFilterIsRead) {
  Open(NewBinaryFuseFilterPolicy(8));
  Write("k", 5);
  Open(nullptr);
  test::ExpectDbHolds(db_.get(), model_);
  EXPECT_EQ(AbsentKeysSkippedByFilter(), 0.0);
}

}  // namespace
}  // namespace bloomkv
