// RangeTombstoneSet: the fragment search against a scan of every tombstone.
#include "db/range_tombstones.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// The answer by definition: the largest covering sequence <= snapshot.
SequenceNumber Scan(const std::vector<RangeTombstone>& ts, const Slice& key,
                    SequenceNumber snapshot) {
  SequenceNumber best = 0;
  for (const RangeTombstone& t : ts) {
    if (Slice(t.begin).compare(key) <= 0 && key.compare(t.end) < 0 &&
        t.sequence <= snapshot) {
      best = std::max(best, t.sequence);
    }
  }
  return best;
}

TEST(RangeTombstoneSetTest, BeginIsInclusiveEndExclusiveAndSnapshotsHideLater) {
  RangeTombstoneSet set({{"b", "d", 10}, {"c", "f", 20}});
  EXPECT_EQ(0u, set.CoveringSequence("a", 100));
  EXPECT_EQ(10u, set.CoveringSequence("b", 100));
  EXPECT_EQ(10u, set.CoveringSequence("bzz", 100));
  EXPECT_EQ(20u, set.CoveringSequence("c", 100));
  EXPECT_EQ(10u, set.CoveringSequence("c", 19));  // 20 is after the snapshot
  EXPECT_EQ(0u, set.CoveringSequence("c", 9));
  EXPECT_EQ(20u, set.CoveringSequence("e", 100));
  EXPECT_EQ(0u, set.CoveringSequence("f", 100));
  EXPECT_TRUE(set.Covers("e", 19, 100));
  EXPECT_FALSE(set.Covers("e", 20, 100));  // written by the same sequence
  EXPECT_FALSE(set.Covers("e", 21, 100));  // written after the deletion
  EXPECT_EQ(10u, set.smallest_sequence());
}

TEST(RangeTombstoneSetTest, EmptyBeginCoversFromTheFirstKey) {
  RangeTombstoneSet set({{"", "m", 5}});
  EXPECT_EQ(5u, set.CoveringSequence(std::string("\0", 1), 5));
  EXPECT_EQ(5u, set.CoveringSequence("l", 5));
  EXPECT_EQ(0u, set.CoveringSequence("m", 5));
}

TEST(RangeTombstoneSetTest, MergeKeepsWhatTheSnapshotSees) {
  auto a = std::make_shared<const RangeTombstoneSet>(
      std::vector<RangeTombstone>{{"a", "c", 3}, {"x", "z", 9}});
  auto b = std::make_shared<const RangeTombstoneSet>(
      std::vector<RangeTombstone>{{"b", "y", 6}});
  EXPECT_EQ(nullptr, RangeTombstoneSet::Merge({a, nullptr, b}, 2));
  // One set, none hidden by the snapshot: itself, not a copy.
  EXPECT_EQ(a, RangeTombstoneSet::Merge({nullptr, a}, 9));
  EXPECT_NE(a, RangeTombstoneSet::Merge({nullptr, a}, 8));
  auto merged = RangeTombstoneSet::Merge({a, nullptr, b}, 6);
  ASSERT_NE(nullptr, merged);
  ASSERT_EQ(2u, merged->tombstones().size());
  EXPECT_EQ(3u, merged->tombstones()[0].sequence);  // ordered by sequence
  EXPECT_EQ(6u, merged->CoveringSequence("bb", 100));
  EXPECT_EQ(0u, merged->CoveringSequence("y", 100));
}

TEST(RangeTombstoneSetTest, RandomSetsAnswerAsAScanOfEveryTombstone) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    auto key = [&rnd] {
      return std::string(1 + rnd.Uniform(3), static_cast<char>('a' + rnd.Uniform(6)));
    };
    for (int round = 0; round < 50; round++) {
      std::vector<RangeTombstone> ts;
      for (uint64_t i = 0, n = 1 + rnd.Uniform(30); i < n; i++) {
        std::string b = key(), e = key();
        if (b == e) continue;
        if (e < b) std::swap(b, e);
        ts.push_back({b, e, 1 + 3 * i + rnd.Uniform(3)});
      }
      RangeTombstoneSet set(ts);
      for (int probe = 0; probe < 200; probe++) {
        const std::string k = key();
        const SequenceNumber snapshot = rnd.Uniform(100);
        ASSERT_EQ(Scan(ts, k, snapshot), set.CoveringSequence(k, snapshot))
            << "key " << k << " snapshot " << snapshot;
      }
    }
  }
}

}  // namespace
}  // namespace bloomkv
