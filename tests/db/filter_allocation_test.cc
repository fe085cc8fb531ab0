// Filter allocation across levels and kinds: the plans of PlanFilters for
// bloom-only, mixed (bloom above, binary fuse below) and fuse-only trees, the
// options that choose a level's policy, and a database whose filters follow
// FilterAllocation::kMinimizeFalsePositives.
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
#include "util/filter_cost.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

constexpr char kBloomName[] = "bloomkv.BlockedBloom.v1";
constexpr char kFuse8Name[] = "bloomkv.BinaryFuse8";
constexpr char kFuse16Name[] = "bloomkv.BinaryFuse16";

FilterRun MakeRun(uint64_t entries, std::shared_ptr<const FilterPolicy> policy,
              uint64_t segment_entries = 0) {
  return FilterRun{entries, segment_entries, std::move(policy)};
}

double Memory(const std::vector<FilterRun>& runs,
              const std::vector<FilterChoice>& plan) {
  double bits = 0;
  for (size_t r = 0; r < runs.size(); r++) {
    bits += static_cast<double>(runs[r].entries) * plan[r].bits_per_key;
  }
  return bits;
}

// A plan may exceed the configured memory by rounding only (PlanFilters
// allows one part in 10^9, so that the configured plan always fits).
constexpr double kRounding = 1.0 + 1e-9;

// What the configured policies take and give, as the plan counts them.
double ConfiguredMemory(const std::vector<FilterRun>& runs) {
  double bits = 0;
  for (const FilterRun& r : runs) {
    const uint64_t seg = r.segment_entries ? r.segment_entries : r.entries;
    bits += static_cast<double>(r.entries) *
            ExpectedFilterCost(*r.policy, seg).bits_per_key;
  }
  return bits;
}
double ConfiguredFpSum(const std::vector<FilterRun>& runs) {
  double sum = 0;
  for (const FilterRun& r : runs) {
    const uint64_t seg = r.segment_entries ? r.segment_entries : r.entries;
    sum += ExpectedFilterCost(*r.policy, seg).fp_rate;
  }
  return sum;
}
double FpSum(const std::vector<FilterChoice>& plan) {
  double sum = 0;
  for (const FilterChoice& c : plan) sum += c.fp_rate;
  return sum;
}

// Every choice is what its policy really builds and gives.
void ExpectChoicesAreTheirPolicies(const std::vector<FilterRun>& runs,
                                   const std::vector<FilterChoice>& plan) {
  ASSERT_EQ(runs.size(), plan.size());
  for (size_t r = 0; r < runs.size(); r++) {
    ASSERT_NE(nullptr, plan[r].policy) << r;
    const uint64_t seg =
        runs[r].segment_entries ? runs[r].segment_entries : runs[r].entries;
    const FilterCost cost = ExpectedFilterCost(*plan[r].policy, seg);
    EXPECT_DOUBLE_EQ(cost.bits_per_key, plan[r].bits_per_key) << r;
    EXPECT_DOUBLE_EQ(cost.fp_rate, plan[r].fp_rate) << r;
  }
}

TEST(PlanFiltersTest, EqualBloomRunsKeepTheirBits) {
  const auto bloom = NewBloomFilterPolicy(10.0);
  const std::vector<FilterRun> runs{MakeRun(100000, bloom), MakeRun(100000, bloom),
                                    MakeRun(100000, bloom)};
  const auto plan = PlanFilters(runs, bloom);
  ExpectChoicesAreTheirPolicies(runs, plan);
  for (const FilterChoice& c : plan) {
    EXPECT_STREQ(kBloomName, c.policy->Name());
    EXPECT_DOUBLE_EQ(10.0, c.policy->BitsPerKey());
  }
}

TEST(PlanFiltersTest, BloomPlanKeepsTheBudgetAndLowersTheFpSum) {
  // Four level-0 segments and three levels, each ten times the previous.
  const auto bloom = NewBloomFilterPolicy(10.0);
  const std::vector<FilterRun> runs{
      MakeRun(50'000, bloom),  MakeRun(50'000, bloom),    MakeRun(50'000, bloom),
      MakeRun(50'000, bloom),  MakeRun(200'000, bloom),   MakeRun(2'000'000, bloom),
      MakeRun(20'000'000, bloom)};
  const auto plan = PlanFilters(runs, bloom);
  ExpectChoicesAreTheirPolicies(runs, plan);
  const double budget = ConfiguredMemory(runs);
  EXPECT_LE(Memory(runs, plan), budget * kRounding);
  // Steps of a sixteenth of a bit per key leave little unspent.
  EXPECT_GT(Memory(runs, plan), 0.999 * budget);
  EXPECT_LT(FpSum(plan), ConfiguredFpSum(runs) / 2) << "allocation saves little";

  std::vector<double> bits;
  for (const FilterChoice& c : plan) bits.push_back(c.policy->BitsPerKey());
  // Equal runs get equal bits; the deepest level, holding most keys, pays
  // for the others.
  EXPECT_DOUBLE_EQ(bits[0], bits[3]);
  EXPECT_LT(bits[6], 10.0);
  EXPECT_GT(bits[0], 10.0);
  // A level ten times larger than the one above gets fewer bits per key:
  // ln 10 over the slope of ln(fp) in bits per key, which for the blocked
  // layout (0.35-0.45 from 9 to 21 bits per key) is flatter than the
  // classic ln^2 2 = 0.48, so the step is larger than the classic 4.8.
  for (int r : {4, 5}) {
    EXPECT_GE(bits[r] - bits[r + 1], 4.8) << r;
    EXPECT_LE(bits[r] - bits[r + 1], 7.0) << r;
  }
}

TEST(PlanFiltersTest, RealRatesBeatTheClassicModelsPlan) {
  // Monkey's closed form under fp = exp(-b ln^2 2), evaluated with the
  // blocked layout's real rates, at no less memory: the plan made with the
  // real rates is at least as good.
  const auto bloom = NewBloomFilterPolicy(8.0);
  const std::vector<uint64_t> entries{3'000, 70'000, 900'000, 5'000'000};
  std::vector<FilterRun> runs;
  for (uint64_t n : entries) runs.push_back(MakeRun(n, bloom));
  const auto plan = PlanFilters(runs, bloom);
  const double ln2_squared = std::log(2.0) * std::log(2.0);
  double total = 0, weighted_log = 0;
  for (uint64_t n : entries) {
    total += static_cast<double>(n);
    weighted_log += static_cast<double>(n) * std::log(static_cast<double>(n));
  }
  double classic_fp = 0, classic_memory = 0;
  for (uint64_t n : entries) {
    const double b = std::clamp(
        8.0 + (weighted_log / total - std::log(static_cast<double>(n))) /
                  ln2_squared,
        kMinFilterBitsPerKey, kMaxFilterBitsPerKey);
    classic_fp += BloomFpRate(b);
    classic_memory += static_cast<double>(n) * b;
  }
  EXPECT_LE(Memory(runs, plan), classic_memory * 1.001);
  EXPECT_LT(FpSum(plan), classic_fp);
}

TEST(PlanFiltersTest, MixedTreeKeepsFuseBelowWhenNothingPaysMore) {
  // Bloom at 14 bits per key on the write path (two level-0 segments,
  // 0.18% each), 8-bit fuse filters in two deeper levels of segments of
  // 100,000 keys. 16-bit fingerprints for the smaller deep level would cost
  // about 0.9 bits per key of the larger one (a bloom filter there: +1%),
  // and level 0 has less than 0.4% to gain: the plan is the configured one.
  const auto bloom = NewBloomFilterPolicy(14.0);
  const auto fuse8 = NewBinaryFuseFilterPolicy(8);
  const std::vector<FilterRun> runs{
      MakeRun(60'000, bloom), MakeRun(60'000, bloom),
      MakeRun(2'000'000, fuse8, 100'000), MakeRun(20'000'000, fuse8, 100'000)};
  const auto plan = PlanFilters(runs, bloom);
  ExpectChoicesAreTheirPolicies(runs, plan);
  EXPECT_LE(Memory(runs, plan), ConfiguredMemory(runs) * kRounding);
  EXPECT_LE(FpSum(plan), ConfiguredFpSum(runs));
  EXPECT_STREQ(kFuse8Name, plan[2].policy->Name());
  EXPECT_STREQ(kFuse8Name, plan[3].policy->Name());
  EXPECT_STREQ(kBloomName, plan[0].policy->Name());
  EXPECT_NEAR(14.0, plan[0].policy->BitsPerKey(), 0.5);
  EXPECT_DOUBLE_EQ(plan[0].policy->BitsPerKey(), plan[1].policy->BitsPerKey());
}

TEST(PlanFiltersTest, CostlyLevelZeroTakesBitsFromTheDeepestLevel) {
  // The same tree with 10 bits per key of bloom filter at level 0: its two
  // segments give 1.9% per lookup. A bloom filter of a little fewer bits
  // than fuse8 takes in the deepest level (about 0.9% more false positives
  // there) pays for 40 bits per key at level 0 (almost 1.9% fewer).
  const auto bloom = NewBloomFilterPolicy(10.0);
  const auto fuse8 = NewBinaryFuseFilterPolicy(8);
  const std::vector<FilterRun> runs{
      MakeRun(60'000, bloom), MakeRun(60'000, bloom),
      MakeRun(2'000'000, fuse8, 100'000), MakeRun(20'000'000, fuse8, 100'000)};
  const auto plan = PlanFilters(runs, bloom);
  ExpectChoicesAreTheirPolicies(runs, plan);
  EXPECT_LE(Memory(runs, plan), ConfiguredMemory(runs) * kRounding);
  EXPECT_LT(FpSum(plan), 0.8 * ConfiguredFpSum(runs));
  EXPECT_GT(plan[0].policy->BitsPerKey(), 30.0);
  EXPECT_STREQ(kFuse8Name, plan[2].policy->Name());
  EXPECT_STREQ(kBloomName, plan[3].policy->Name());
  EXPECT_LT(plan[3].bits_per_key, ExpectedFilterCost(*fuse8, 100'000).bits_per_key);
}

TEST(PlanFiltersTest, SmallDeepLevelGets16BitFingerprintsPaidByLevelZero) {
  // Level 0 spends 30 bits per key of bloom filter: dropping that to about
  // 24 pays for 16-bit fingerprints in the small level below it, which
  // lowers its rate from 0.39% to 0.0015%, far more than level 0 loses.
  const auto bloom = NewBloomFilterPolicy(30.0);
  const auto fuse8 = NewBinaryFuseFilterPolicy(8);
  const std::vector<FilterRun> runs{MakeRun(100'000, bloom), MakeRun(100'000, bloom),
                                    MakeRun(100'000, fuse8),
                                    MakeRun(10'000'000, fuse8, 200'000)};
  const auto plan = PlanFilters(runs, bloom);
  ExpectChoicesAreTheirPolicies(runs, plan);
  EXPECT_LE(Memory(runs, plan), ConfiguredMemory(runs) * kRounding);
  EXPECT_STREQ(kFuse16Name, plan[2].policy->Name());
  EXPECT_STREQ(kFuse8Name, plan[3].policy->Name());
  EXPECT_LT(plan[0].policy->BitsPerKey(), 30.0);
  // The large level's 0.39% remains; the small one's is gone.
  EXPECT_LT(FpSum(plan), 0.55 * ConfiguredFpSum(runs));
}

TEST(PlanFiltersTest, DeepLevelFallsBackToBloomWhenItsBitsAreWorthMoreAbove) {
  // One bit per key of bloom filter at level 0 (63% false positives) next
  // to an 8-bit fuse level of the same size: three bits per key moved from
  // the fuse level (down to a bloom filter) to level 0 lower the sum.
  const auto bloom = NewBloomFilterPolicy(1.0);
  const auto fuse8 = NewBinaryFuseFilterPolicy(8);
  const std::vector<FilterRun> runs{MakeRun(1'000'000, bloom),
                                    MakeRun(1'000'000, fuse8)};
  const auto plan = PlanFilters(runs, bloom);
  ExpectChoicesAreTheirPolicies(runs, plan);
  EXPECT_LE(Memory(runs, plan), ConfiguredMemory(runs) * kRounding);
  EXPECT_STREQ(kBloomName, plan[1].policy->Name());
  EXPECT_GT(plan[0].policy->BitsPerKey(), 3.0);
  EXPECT_LT(FpSum(plan), ConfiguredFpSum(runs) / 2);

  // Without a resizable write path there is nothing to fall back to, nor
  // anything to pay 16-bit fingerprints with: every run keeps 8 bits.
  const std::vector<FilterRun> fuse_only{
      MakeRun(10'000, fuse8), MakeRun(1'000'000, fuse8), MakeRun(10'000'000, fuse8)};
  const auto plan2 = PlanFilters(fuse_only, fuse8);
  ExpectChoicesAreTheirPolicies(fuse_only, plan2);
  for (const FilterChoice& c : plan2) EXPECT_STREQ(kFuse8Name, c.policy->Name());
}

TEST(PlanFiltersTest, RunsWithoutFilterOrEntriesKeepTheirPolicy) {
  const auto bloom = NewBloomFilterPolicy(10.0);
  const auto fuse16 = NewBinaryFuseFilterPolicy(16);
  const std::vector<FilterRun> runs{MakeRun(1000, nullptr), MakeRun(0, bloom),
                                    MakeRun(0, fuse16), MakeRun(5000, bloom)};
  const auto plan = PlanFilters(runs, bloom);
  EXPECT_EQ(nullptr, plan[0].policy);
  EXPECT_EQ(1.0, plan[0].fp_rate);
  EXPECT_EQ(bloom, plan[1].policy);
  EXPECT_EQ(fuse16, plan[2].policy);
  // The only run with a filter has the whole budget: its own bits.
  EXPECT_DOUBLE_EQ(10.0, plan[3].policy->BitsPerKey());
  EXPECT_TRUE(PlanFilters({}, bloom).empty());
}

TEST(PlanFiltersTest, ExtremeSizesStayInRange) {
  const auto bloom = NewBloomFilterPolicy(10.0);
  const std::vector<FilterRun> runs{MakeRun(1, bloom), MakeRun(uint64_t{1} << 40, bloom)};
  const auto plan = PlanFilters(runs, bloom);
  EXPECT_EQ(kMaxFilterBitsPerKey, plan[0].policy->BitsPerKey());
  EXPECT_GE(plan[1].policy->BitsPerKey(), kMinFilterBitsPerKey);
  EXPECT_LE(Memory(runs, plan), ConfiguredMemory(runs) * kRounding);
}

// ---------------------------------------------------------------------------
// Which policy a level is configured with

TEST(FilterOptionsTest, LevelsFromTheDeepLevelOnGetTheDeepPolicy) {
  Options o;
  const auto bloom = o.filter_policy;
  // The default: bloom at level 0, the built-in fuse8 below.
  EXPECT_EQ(bloom, ConfiguredFilterPolicy(o, 0));
  for (int level = 1; level < kNumLevels; level++) {
    ASSERT_NE(nullptr, ConfiguredFilterPolicy(o, level));
    EXPECT_STREQ("bloomkv.BinaryFuse8", ConfiguredFilterPolicy(o, level)->Name())
        << "default, " << level;
  }
  EXPECT_EQ(bloom, ReaderFilterPolicy(o));
  // deep_filter_policy = filter_policy: bloom everywhere.
  o.deep_filter_policy = bloom;
  for (int level = 0; level < kNumLevels; level++) {
    EXPECT_EQ(bloom, ConfiguredFilterPolicy(o, level)) << "bloom, " << level;
  }
  o.deep_filter_policy = NewBinaryFuseFilterPolicy(8);
  EXPECT_EQ(bloom, ConfiguredFilterPolicy(o, 0));
  for (int level = 1; level < kNumLevels; level++) {
    EXPECT_EQ(o.deep_filter_policy, ConfiguredFilterPolicy(o, level)) << level;
  }
  o.deep_filter_level = 3;
  EXPECT_EQ(bloom, ConfiguredFilterPolicy(o, 2));
  EXPECT_EQ(o.deep_filter_policy, ConfiguredFilterPolicy(o, 3));
  // Both built in: the readers keep filter_policy; without it, the deep one.
  EXPECT_EQ(bloom, ReaderFilterPolicy(o));
  o.filter_policy = nullptr;
  EXPECT_EQ(nullptr, ConfiguredFilterPolicy(o, 0));
  EXPECT_EQ(o.deep_filter_policy, ReaderFilterPolicy(o));
  EXPECT_TRUE(ValidateFilterOptions(o).ok());
}

// The rule behind the default deep filter: for a bloom filter_policy of
// kAutoDeepFuseMinBitsPerKey to kAutoDeepFuseMaxBitsPerKey bits per key the
// 8-bit fuse filter is at least as selective and, for segments of 10^5 keys
// and more, no larger; just outside the range one of the two fails.
TEST(FilterOptionsTest, TheDefaultDeepFuseFilterIsNoWorseOnBothCounts) {
  const double fuse_rate = std::ldexp(1.0, -8);
  for (double bits = kAutoDeepFuseMinBitsPerKey;
       bits <= kAutoDeepFuseMaxBitsPerKey; bits += 0.25) {
    SCOPED_TRACE("bits per key " + std::to_string(bits));
    EXPECT_GE(BloomFpRate(bits), fuse_rate);
    for (uint64_t keys : {uint64_t{100000}, uint64_t{1000000},
                          uint64_t{10000000}}) {
      EXPECT_LE(BinaryFuseBitsPerKey(8, keys), BloomBitsPerKey(bits, keys))
          << keys << " keys";
    }
    Options o;
    o.filter_policy = NewBloomFilterPolicy(bits);
    ASSERT_NE(nullptr, DeepFilterPolicy(o));
    EXPECT_STREQ("bloomkv.BinaryFuse8", DeepFilterPolicy(o)->Name());
  }
  EXPECT_LT(BloomFpRate(kAutoDeepFuseMaxBitsPerKey + 0.5), fuse_rate);
  EXPECT_GT(BinaryFuseBitsPerKey(8, 100000),
            BloomBitsPerKey(kAutoDeepFuseMinBitsPerKey - 0.5, 100000));
  for (double bits : {kAutoDeepFuseMinBitsPerKey - 0.5,
                      kAutoDeepFuseMaxBitsPerKey + 0.5}) {
    Options o;
    o.filter_policy = NewBloomFilterPolicy(bits);
    EXPECT_EQ(nullptr, DeepFilterPolicy(o)) << bits;
  }
  Options none;
  none.filter_policy = nullptr;
  EXPECT_EQ(nullptr, DeepFilterPolicy(none));
}

class NamedPolicy : public FilterPolicy {
 public:
  explicit NamedPolicy(const char* name) : name_(name) {}
  const char* Name() const override { return name_; }
  void CreateFilter(const uint64_t*, size_t, std::string*) const override {}
  bool KeyMayMatch(uint64_t, const Slice&) const override { return true; }
  double BitsPerKey() const override { return 8.0; }
  double TheoreticalFpRate(const Slice&, uint64_t) const override {
    return 1.0;
  }

 private:
  const char* name_;
};

TEST(FilterOptionsTest, OneApplicationPolicyAtMostAndLevelInRange) {
  Options o;
  o.deep_filter_policy = NewBinaryFuseFilterPolicy(16);
  for (int level : {-1, 0, 7, 100}) {
    o.deep_filter_level = level;
    const Status s = ValidateFilterOptions(o);
    EXPECT_TRUE(s.IsInvalidArgument()) << level;
    EXPECT_NE(std::string::npos, s.ToString().find("deep_filter_level"));
  }
  o.deep_filter_level = 6;
  EXPECT_TRUE(ValidateFilterOptions(o).ok());

  // An application's own policy is read by being the readers' policy.
  const auto mine = std::make_shared<NamedPolicy>("app.Mine");
  o.deep_filter_policy = mine;
  EXPECT_TRUE(ValidateFilterOptions(o).ok());
  EXPECT_EQ(mine, ReaderFilterPolicy(o));
  o.filter_policy = std::make_shared<NamedPolicy>("app.Mine");
  EXPECT_TRUE(ValidateFilterOptions(o).ok());
  o.filter_policy = std::make_shared<NamedPolicy>("app.Other");
  const Status s = ValidateFilterOptions(o);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(std::string::npos, s.ToString().find("app.Other"));
  EXPECT_NE(std::string::npos, s.ToString().find("app.Mine"));
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
  // What deep_fp_sum would be in the same tree if the bits per key planned
  // for levels >= 1 were spread evenly over their entries.
  double deep_fp_sum_if_even = 0;
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
  // The bloom filter's bits are what is planned here, at every level.
  options.deep_filter_policy = options.filter_policy;
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::Open(options, dir.path(), &db).ok());
  Random rnd(seed);
  present->clear();
  // Each segment's bits are planned for the tree as it is when the segment
  // is written, so the final shape must not depend on how far the
  // background threads lag behind the writes (on a loaded machine level 0
  // piles up and compactions merge different sets of files). Waiting for
  // background work every 200 writes, fewer than a memtable holds, leaves at
  // most one flush and the compactions it triggers between two waits: the
  // same tree grows in the same steps on any machine.
  for (int i = 0; i < 150000; i++) {
    const std::string code = Code(&rnd);
    present->insert(code);
    EXPECT_TRUE(
        db->Put(WriteOptions(), code, "https://example.com/" + code).ok());
    if (i % 200 == 199) test::WaitForBackgroundWork(db.get());
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
  double deep_bits = 0;
  double deep_entries = 0;
  for (const SegmentInfo& s : segments) {
    const double entries = static_cast<double>(s.num_entries);
    shape.filter_bits += 8.0 * static_cast<double>(s.filter_bytes);
    shape.entries += entries;
    if (s.level > 0) {
      shape.deep_fp_sum +=
          s.theoretical_fp_rate * entries / per_level[s.level].second;
      deep_bits += s.bits_per_key * entries;
      deep_entries += entries;
    }
  }
  const double even_bits_per_key = deep_bits / deep_entries;
  const int even_probes = blocked_bloom::ChooseNumProbes(even_bits_per_key);
  for (const SegmentInfo& s : segments) {
    if (s.level == 0) continue;
    shape.deep_fp_sum_if_even +=
        blocked_bloom::TheoreticalFpRate(
            blocked_bloom::NumLinesFor(s.num_entries, even_bits_per_key),
            s.num_entries, even_probes) *
        static_cast<double>(s.num_entries) / per_level[s.level].second;
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
  // ... for fewer false positives per lookup of an absent key than the
  // same filter memory spread evenly would give in the same tree. (The
  // comparison is made within one tree: the shape at which compaction
  // settles, e.g. how many levels hold data, varies with the background
  // thread's timing, so the two trees above need not have the same shape.)
  EXPECT_LT(tuned.deep_fp_sum, tuned.deep_fp_sum_if_even)
      << "tuned " << tuned.deep_fp_sum << ", evenly spread "
      << tuned.deep_fp_sum_if_even << ", levels " << tuned.bits_per_key.size();
  // A tree of uniform filters is, by the same measure, already even.
  EXPECT_NEAR(uniform.deep_fp_sum, uniform.deep_fp_sum_if_even,
              1e-9 * uniform.deep_fp_sum);
}

TEST(FilterAllocationDbTest, SmallLevelsGetMoreBitsForTheSameMemory) {
  ExpectSmallLevelsGetMoreBitsForTheSameMemory(/*dynamic_levels=*/false);
}

TEST(FilterAllocationDbTest, SmallLevelsGetMoreBitsWithDynamicLevelTargets) {
  ExpectSmallLevelsGetMoreBitsForTheSameMemory(/*dynamic_levels=*/true);
}

}  // namespace
}  // namespace bloomkv
