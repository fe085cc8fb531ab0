// Filter allocation across levels: the arithmetic of AllocateFilterBits, and
// a database whose filters follow FilterAllocation::kMinimizeFalsePositives.
#include "db/filter_allocation.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <thread>

#include "bloomkv/db.h"
#include "tests/testutil/test_util.h"
#include "util/blocked_bloom.h"
#include "util/random.h"

namespace bloomkv {
namespace {

const double kLn2Squared = std::log(2.0) * std::log(2.0);

// The classic bloom filter's rate at b bits per key, the model the
// allocation optimises.
double ModelFpRate(double bits_per_key) {
  return std::exp(-bits_per_key * kLn2Squared);
}

double Budget(const std::vector<uint64_t>& runs,
              const std::vector<double>& bits) {
  double total = 0;
  for (size_t r = 0; r < runs.size(); r++) total += runs[r] * bits[r];
  return total;
}

TEST(AllocateFilterBitsTest, EqualRunsGetTheAverage) {
  const auto bits = AllocateFilterBits({1000, 1000, 1000}, 10.0);
  for (double b : bits) EXPECT_DOUBLE_EQ(10.0, b);
}

TEST(AllocateFilterBitsTest, KeepsTheMemoryBudgetAndLowersTheFpSum) {
  // Four level-0 segments and three levels, each ten times the previous.
  const std::vector<uint64_t> runs{50'000,  50'000,    50'000,    50'000,
                                   200'000, 2'000'000, 20'000'000};
  const double avg = 10.0;
  const auto bits = AllocateFilterBits(runs, avg);
  const double entries = std::accumulate(runs.begin(), runs.end(), 0.0);
  EXPECT_NEAR(avg * entries, Budget(runs, bits), 1e-6 * avg * entries);

  double fp_sum = 0;
  for (double b : bits) fp_sum += ModelFpRate(b);
  const double uniform_sum = runs.size() * ModelFpRate(avg);
  EXPECT_LT(fp_sum, uniform_sum / 2) << "allocation saves little";

  // A level ten times larger than the one above gets ln 10 / ln^2 2 fewer
  // bits per key; equal runs get equal bits.
  EXPECT_NEAR(std::log(10.0) / kLn2Squared, bits[5] - bits[6], 1e-9);
  EXPECT_NEAR(std::log(10.0) / kLn2Squared, bits[4] - bits[5], 1e-9);
  EXPECT_DOUBLE_EQ(bits[0], bits[3]);
  // The deepest level, holding most keys, pays for the others.
  EXPECT_LT(bits[6], avg);
  EXPECT_GT(bits[0], avg);
}

TEST(AllocateFilterBitsTest, OptimumIsStationary) {
  // Moving a little memory between any two runs must not lower the sum of
  // rates: the allocation is a minimum under the budget.
  const std::vector<uint64_t> runs{3'000, 70'000, 900'000, 5'000'000};
  const auto bits = AllocateFilterBits(runs, 8.0);
  auto fp_sum = [&](const std::vector<double>& b) {
    double sum = 0;
    for (double x : b) sum += ModelFpRate(x);
    return sum;
  };
  const double best = fp_sum(bits);
  const double delta_bits = 1000.0;  // total bits moved
  for (size_t from = 0; from < runs.size(); from++) {
    for (size_t to = 0; to < runs.size(); to++) {
      if (from == to) continue;
      auto moved = bits;
      moved[from] -= delta_bits / runs[from];
      moved[to] += delta_bits / runs[to];
      EXPECT_GE(fp_sum(moved), best) << from << " -> " << to;
    }
  }
}

TEST(AllocateFilterBitsTest, EmptyRunsAndExtremesAreSafe) {
  EXPECT_EQ((std::vector<double>{10.0, 10.0}),
            AllocateFilterBits({0, 0}, 10.0));
  EXPECT_TRUE(AllocateFilterBits({}, 10.0).empty());
  const auto bits = AllocateFilterBits({1, 0, uint64_t{1} << 40}, 10.0);
  EXPECT_EQ(kMaxFilterBitsPerKey, bits[0]);
  EXPECT_EQ(10.0, bits[1]);
  EXPECT_GE(bits[2], kMinFilterBitsPerKey);
}

// ---------------------------------------------------------------------------

std::string Code(Random* rnd) {
  static const char kAlphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string s(8, '0');
  for (char& c : s) c = kAlphabet[rnd->Uniform(62)];
  return s;
}

struct Shape {
  std::map<int, double> bits_per_key;  // per level, entry-weighted
  // Theoretical false positives per lookup of an absent key in levels >= 1
  // (level 0's share depends on how many segments it holds at the moment,
  // which depends on the background thread's timing).
  double deep_fp_sum = 0;
  double filter_bits = 0;
  double entries = 0;
};

Shape BuildAndMeasure(FilterAllocation allocation, bool dynamic_levels,
                      uint64_t seed, std::set<std::string>* present) {
  test::TempDir dir;
  Options options;
  options.create_if_missing = true;
  // Small levels, so that 150,000 entries fill three of them, each ten
  // times the one above (static targets, from level 1 down) or four times
  // (dynamic targets, from the last level up, which would need ten times
  // the data for three levels ten times apart), as in a grown store.
  options.write_buffer_size = 64 << 10;
  options.max_bytes_for_level_base = 64 << 10;
  options.level_compaction_dynamic_level_bytes = dynamic_levels;
  options.max_bytes_for_level_multiplier = dynamic_levels ? 4 : 10;
  options.filter_allocation = allocation;
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::Open(options, dir.path(), &db).ok());
  Random rnd(seed);
  present->clear();
  for (int i = 0; i < 150000; i++) {
    const std::string code = Code(&rnd);
    present->insert(code);
    EXPECT_TRUE(
        db->Put(WriteOptions(), code, "https://example.com/" + code).ok());
  }
  EXPECT_TRUE(db->Flush().ok());
  test::WaitForBackgroundWork(db.get());

  // A deeper level is probed once per lookup, at a segment chosen in
  // proportion to its key range, about its share of the level's entries.
  const std::vector<SegmentInfo> segments = db->GetSegmentInfo();
  std::map<int, std::pair<double, double>> per_level;  // bits, entries
  for (const SegmentInfo& s : segments) {
    EXPECT_TRUE(s.has_filter);
    const double entries = static_cast<double>(s.num_entries);
    per_level[s.level].first += s.bits_per_key * entries;
    per_level[s.level].second += entries;
  }
  Shape shape;
  for (const auto& [level, be] : per_level) {
    shape.bits_per_key[level] = be.first / be.second;
  }
  for (const SegmentInfo& s : segments) {
    const double entries = static_cast<double>(s.num_entries);
    shape.filter_bits += 8.0 * static_cast<double>(s.filter_bytes);
    shape.entries += entries;
    if (s.level > 0) {
      shape.deep_fp_sum +=
          s.theoretical_fp_rate * entries / per_level[s.level].second;
    }
  }

  // No false negatives, whatever the bits: every stored code is found.
  std::string value;
  for (const auto& code : *present) {
    EXPECT_TRUE(db->Get(ReadOptions(), code, &value).ok()) << code;
  }
  return shape;
}

void ExpectSmallLevelsGetMoreBitsForTheSameMemory(bool dynamic_levels) {
  const uint64_t seed = test::TestSeeds()[0];
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::set<std::string> present;
  const Shape uniform = BuildAndMeasure(FilterAllocation::kUniform,
                                        dynamic_levels, seed, &present);
  Shape tuned = BuildAndMeasure(FilterAllocation::kMinimizeFalsePositives,
                                dynamic_levels, seed, &present);
  tuned.bits_per_key.erase(0);
  ASSERT_GE(tuned.bits_per_key.size(), 3u) << "needs three levels below 0";

  for (const auto& [level, bits] : uniform.bits_per_key) {
    EXPECT_NEAR(10.0, bits, 0.01) << "level " << level;
  }
  // The smallest level below level 0 (level 1, or the base level of
  // dynamic targets) gets more bits per key than the deepest level, which
  // gets fewer than the average. (Levels in between are not compared: a
  // segment's bits are chosen for the tree as it was when the segment was
  // written, and a slow run, e.g. under ThreadSanitizer, writes some of the
  // deepest segments while that level was still small.)
  const double smallest = tuned.bits_per_key.begin()->second;
  const double deepest = tuned.bits_per_key.rbegin()->second;
  EXPECT_GT(smallest, deepest);
  EXPECT_LT(deepest, 10.0);
  // No more filter memory per entry (within rounding; less is possible:
  // each output's bits are chosen for the tree's shape when it is written,
  // and the shape at which compaction settles varies with the background
  // threads' timing)...
  const double uniform_bpk = uniform.filter_bits / uniform.entries;
  const double tuned_bpk = tuned.filter_bits / tuned.entries;
  EXPECT_LE(tuned_bpk, 1.05 * uniform_bpk);
  EXPECT_GT(tuned_bpk, 0.85 * uniform_bpk);
  // ... for fewer false positives per lookup of an absent key than equal
  // bits per key would give with the memory the tuned filters use. (How
  // many fewer depends on the tree's shape when compaction settles, which
  // the background threads' timing varies; about 10-35% here.)
  auto fp_at = [](double bits_per_key) {
    constexpr uint64_t kKeys = 1000000;
    return blocked_bloom::TheoreticalFpRate(
        blocked_bloom::NumLinesFor(kKeys, bits_per_key), kKeys,
        blocked_bloom::ChooseNumProbes(bits_per_key));
  };
  const double uniform_at_tuned_memory =
      uniform.deep_fp_sum * fp_at(tuned_bpk) / fp_at(uniform_bpk);
  EXPECT_LT(tuned.deep_fp_sum, uniform_at_tuned_memory)
      << "uniform " << uniform.deep_fp_sum << " at " << uniform_bpk
      << " bits per key, tuned " << tuned.deep_fp_sum << " at " << tuned_bpk;
}

TEST(FilterAllocationDbTest, SmallLevelsGetMoreBitsForTheSameMemory) {
  ExpectSmallLevelsGetMoreBitsForTheSameMemory(/*dynamic_levels=*/false);
}

TEST(FilterAllocationDbTest, SmallLevelsGetMoreBitsWithDynamicLevelTargets) {
  ExpectSmallLevelsGetMoreBitsForTheSameMemory(/*dynamic_levels=*/true);
}

}  // namespace
}  // namespace bloomkv
