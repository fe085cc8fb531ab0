// Tests of the filter cost model (util/filter_cost.h) and of the registry's
// kinds: the sizes it predicts are the sizes the policies build, and the
// rates are the policies' own theory.
#include "util/filter_cost.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "util/blocked_bloom.h"
#include "util/filter_registry.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

namespace bb = blocked_bloom;

std::vector<uint64_t> RandomHashes(uint64_t seed, size_t n) {
  Random rnd(seed);
  std::vector<uint64_t> v(n);
  for (auto& h : v) h = rnd.Next64();
  return v;
}

// Bits per key of the filter `policy` builds for n random keys.
double BuiltBitsPerKey(const FilterPolicy& policy, size_t n) {
  const std::vector<uint64_t> hashes = RandomHashes(n, n);
  std::string filter;
  policy.CreateFilter(hashes.data(), hashes.size(), &filter);
  return 8.0 * static_cast<double>(filter.size()) / static_cast<double>(n);
}

double Theory(double bits, uint64_t n = 1000000) {
  return bb::TheoreticalFpRate(bb::NumLinesFor(n, bits), n,
                               bb::ChooseNumProbes(bits));
}

TEST(FilterRegistryTest, KindsByStoredName) {
  EXPECT_EQ(BuiltinFilterKind::kBlockedBloom,
            BuiltinFilterKindOf(NewBloomFilterPolicy(3)->Name()));
  EXPECT_EQ(BuiltinFilterKind::kBinaryFuse8,
            BuiltinFilterKindOf(NewBinaryFuseFilterPolicy(8)->Name()));
  EXPECT_EQ(BuiltinFilterKind::kBinaryFuse16,
            BuiltinFilterKindOf(NewBinaryFuseFilterPolicy(16)->Name()));
  EXPECT_EQ(BuiltinFilterKind::kOther, BuiltinFilterKindOf("my.Filter"));
  EXPECT_STREQ("bloomkv.BinaryFuse8", BuiltinBinaryFusePolicy(8)->Name());
  EXPECT_STREQ("bloomkv.BinaryFuse16", BuiltinBinaryFusePolicy(16)->Name());
}

TEST(FilterCostTest, BloomRateIsTheBlockedLayoutsTheory) {
  // On the table's steps and between them (log-linear interpolation).
  for (double bits = 1.0; bits <= 40.0; bits += 0.125) {
    const double theory = Theory(bits);
    EXPECT_NEAR(theory, BloomFpRate(bits), 0.01 * theory) << bits;
  }
  // Worse than the classic formula, and the more so the more bits.
  EXPECT_GT(BloomFpRate(10) / ClassicBloomFpRate(10), 1.1);
  EXPECT_GT(BloomFpRate(20) / ClassicBloomFpRate(20), 2.5);
  // Outside the table: extrapolated, still falling, never above 1.
  EXPECT_LT(BloomFpRate(60), BloomFpRate(40));
  EXPECT_GT(BloomFpRate(60), 0.0);
  EXPECT_LE(BloomFpRate(0.5), 1.0);
}

TEST(FilterCostTest, PredictedSizesAreTheBuiltSizes) {
  for (size_t n : {1, 7, 100, 1000, 10000, 100000, 300000}) {
    SCOPED_TRACE("keys=" + std::to_string(n));
    for (double bits : {2.0, 6.5, 10.0, 17.25}) {
      const auto bloom = NewBloomFilterPolicy(bits);
      EXPECT_DOUBLE_EQ(BuiltBitsPerKey(*bloom, n),
                       ExpectedFilterCost(*bloom, n).bits_per_key);
      EXPECT_DOUBLE_EQ(
          BuiltBitsPerKey(*bloom, n),
          ExpectedResizedFilterCost(*NewBloomFilterPolicy(10), bits, n)
              .bits_per_key);
    }
    for (int width : {8, 16}) {
      // The first seed works for these sizes (binary_fuse_test): the
      // filter has exactly the predicted layout.
      const auto fuse = NewBinaryFuseFilterPolicy(width);
      EXPECT_DOUBLE_EQ(BuiltBitsPerKey(*fuse, n),
                       ExpectedFilterCost(*fuse, n).bits_per_key);
      EXPECT_DOUBLE_EQ(std::ldexp(1.0, -width),
                       ExpectedFilterCost(*fuse, n).fp_rate);
    }
  }
  // The figures of docs/filters.md: about 9.04 bits per key at 10^6 keys,
  // 10.25 at 10^4 (8-bit); twice that with 16-bit fingerprints.
  EXPECT_NEAR(9.04, BinaryFuseBitsPerKey(8, 1000000), 0.02);
  EXPECT_NEAR(10.25, BinaryFuseBitsPerKey(8, 10000), 0.05);
  EXPECT_NEAR(18.09, BinaryFuseBitsPerKey(16, 1000000), 0.04);
}

TEST(FilterCostTest, OtherPoliciesAreCostedByTheirBitsPerKey) {
  class Custom : public FilterPolicy {
   public:
    const char* Name() const override { return "test.Custom"; }
    void CreateFilter(const uint64_t*, size_t, std::string*) const override {}
    bool KeyMayMatch(uint64_t, const Slice&) const override { return true; }
    double BitsPerKey() const override { return 7.0; }
    double TheoreticalFpRate(const Slice&, uint64_t) const override {
      return 1.0;
    }
  };
  const FilterCost cost = ExpectedFilterCost(Custom(), 1000);
  EXPECT_EQ(7.0, cost.bits_per_key);
  EXPECT_DOUBLE_EQ(ClassicBloomFpRate(7.0), cost.fp_rate);
}

}  // namespace
}  // namespace bloomkv
