// The capacity model against a store built and settled for real, and its
// argument checks.
#include "db/capacity_model.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "bloomkv/db.h"
#include "bloomkv/filter_policy.h"
#include "bloomkv/statistics.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// Within `tolerance` (a fraction) of the measurement.
void ExpectNear(const char* what, double measured, double predicted,
                double tolerance) {
  EXPECT_NEAR(measured, predicted, tolerance * measured)
      << what << ": measured " << measured << ", predicted " << predicted;
}

// For the default deep filter (8-bit binary fuse below level 0) and for the
// bloom filter at every level.
TEST(CapacityModelTest, PredictsASettledStore) {
  for (bool bloom_everywhere : {false, true}) {
  const uint64_t seed = test::TestSeeds()[0];
  SCOPED_TRACE("seed=" + std::to_string(seed) +
               (bloom_everywhere ? ", bloom everywhere" : ", default filters"));
  test::TempDir dir("capacity");
  Options options = test::TinyCompactionOptions();
  options.compression = CompressionType::kNone;
  // Segments of a few hundred entries, so that filters' rounding to whole
  // lines is what it is in real stores: a small part.
  options.max_bytes_for_level_base = 256 << 10;
  options.target_file_size = 64 << 10;
  options.filter_policy = NewBloomFilterPolicy(10);
  // Every flush compacts level 0 away, so the settled store has no level-0
  // segment whatever the background thread's timing (with a trigger of two,
  // a last flush that leaves one segment there stays).
  options.level0_compaction_trigger = 1;
  if (bloom_everywhere) options.deep_filter_policy = options.filter_policy;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  constexpr uint64_t kEntries = 60000;
  constexpr size_t kKeyBytes = 12, kValueBytes = 60;
  Random rnd(seed);
  for (uint64_t i = 0; i < kEntries; i++) {
    // Random order, distinct keys of fixed length.
    std::string key = std::to_string(1000000000 + rnd.Uniform(1000000000));
    key += std::to_string(i % 100);
    key.resize(kKeyBytes, '_');
    ASSERT_TRUE(db->Put(WriteOptions(), key,
                        test::RandomString(&rnd, kValueBytes)).ok());
  }
  ASSERT_TRUE(db->Flush().ok());
  test::WaitForBackgroundWork(db.get());

  std::map<int, uint64_t> segments_per_level;
  std::map<int, std::string> filter_per_level;
  uint64_t entries = 0, disk = 0, filter = 0;
  for (const SegmentInfo& s : db->GetSegmentInfo()) {
    segments_per_level[s.level]++;
    filter_per_level[s.level] = s.filter_policy;
    entries += s.num_entries;
    disk += s.file_size;
    filter += s.filter_bytes;
  }
  const auto usage = test::ResourceUsage(db.get());

  CapacityInputs in;
  in.entries = entries;  // a few random keys may have collided
  in.key_bytes = kKeyBytes;
  in.value_bytes = kValueBytes;
  in.compression_ratio = 1.0;
  in.options = options;
  CapacityPlan plan;
  ASSERT_TRUE(PlanCapacity(in, &plan).ok());

  std::map<int, uint64_t> predicted_levels;
  for (const CapacityLevel& lv : plan.levels) {
    predicted_levels[lv.level] = lv.segments;
    EXPECT_EQ(filter_per_level[lv.level], lv.filter) << "level " << lv.level;
    EXPECT_EQ(bloom_everywhere ? "bloomkv.BlockedBloom.v1"
                               : "bloomkv.BinaryFuse8",
              std::string(lv.filter));
  }
  EXPECT_EQ(0u, segments_per_level.count(0)) << "not settled";
  // The same levels, and per level the segment count within a third.
  ASSERT_EQ(segments_per_level.size(), predicted_levels.size());
  for (const auto& [level, n] : segments_per_level) {
    ASSERT_EQ(1u, predicted_levels.count(level)) << "level " << level;
    ExpectNear(("segments at level " + std::to_string(level)).c_str(),
               static_cast<double>(n),
               static_cast<double>(predicted_levels[level]), 0.35);
  }
  ExpectNear("disk bytes", static_cast<double>(disk),
             static_cast<double>(plan.disk_bytes), 0.10);
  ExpectNear("filter bytes", static_cast<double>(filter),
             static_cast<double>(plan.filter_bytes), 0.05);
  ExpectNear("index bytes", static_cast<double>(usage.at("index_bytes")),
             static_cast<double>(plan.index_bytes), 0.25);
  EXPECT_EQ(static_cast<double>(plan.levels.size()), plan.probes_per_miss);
  EXPECT_GT(plan.block_reads_per_hit, 1.0);
  EXPECT_LT(plan.block_reads_per_hit, 1.0 + plan.block_reads_per_miss);
  }
}

TEST(CapacityModelTest, GrowsWithTheDataAndChecksItsArguments) {
  CapacityInputs in;
  in.entries = 100000000;  // short links with the default options
  CapacityPlan small, big;
  ASSERT_TRUE(PlanCapacity(in, &small).ok());
  in.entries *= 10;
  ASSERT_TRUE(PlanCapacity(in, &big).ok());
  EXPECT_GE(big.levels.size(), small.levels.size());
  EXPECT_NEAR(10.0, static_cast<double>(big.filter_bytes) /
                        static_cast<double>(small.filter_bytes), 0.5);
  EXPECT_NEAR(10.0, static_cast<double>(big.disk_bytes) /
                        static_cast<double>(small.disk_bytes), 0.5);
  // About 9.5 bits per key of filter (8-bit fuse filters below level 0),
  // 10 with the bloom filter everywhere.
  EXPECT_NEAR(1.18, static_cast<double>(small.filter_bytes) / 1e8, 0.04);
  in.entries = 100000000;
  in.options.deep_filter_policy = NewBloomFilterPolicy(10);
  ASSERT_TRUE(PlanCapacity(in, &small).ok());
  EXPECT_NEAR(1.25, static_cast<double>(small.filter_bytes) / 1e8, 0.02);

  CapacityPlan plan;
  CapacityInputs bad;
  EXPECT_TRUE(PlanCapacity(bad, &plan).IsInvalidArgument());  // 0 entries
  bad.entries = 10;
  bad.bits_per_key = 0;
  EXPECT_TRUE(PlanCapacity(bad, &plan).IsInvalidArgument());
  bad.bits_per_key = 10;
  bad.compression_ratio = 0;
  EXPECT_TRUE(PlanCapacity(bad, &plan).IsInvalidArgument());
  bad.compression_ratio = 1;
  bad.value_bytes = -1;
  EXPECT_TRUE(PlanCapacity(bad, &plan).IsInvalidArgument());
}

}  // namespace
}  // namespace bloomkv
