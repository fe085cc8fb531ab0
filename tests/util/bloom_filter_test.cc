// Tests of the standalone bloomkv::BloomFilter: no false negatives, sizing
// and argument clamping, Info(), copy/move, merging, the estimate of distinct
// keys, and the serialization's resistance to corrupt and truncated input.
// Concurrent adds are tested in bloom_filter_concurrency_test.cc.
#include "bloomkv/bloom_filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "bloomkv/filter_policy.h"
#include "util/blocked_bloom.h"
#include "util/hash.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

namespace bb = blocked_bloom;

constexpr uint64_t kSeeds[] = {1, 2, 3, 42, 20240611};

std::string Key(const char* prefix, uint64_t i) {
  return std::string(prefix) + std::to_string(i);
}

std::string Serialized(const BloomFilter& f) {
  std::string s;
  f.Serialize(&s);
  return s;
}

double MeasuredFpRate(const BloomFilter& f, uint64_t probes) {
  uint64_t positives = 0;
  for (uint64_t i = 0; i < probes; i++) {
    positives += f.MightContain(Key("absent-", i));
  }
  return static_cast<double>(positives) / static_cast<double>(probes);
}

TEST(BloomFilterTest, DefaultFilterContainsNothing) {
  BloomFilter f;
  EXPECT_FALSE(f.MightContain("a"));
  EXPECT_FALSE(f.MightContain(""));
  const BloomFilterInfo info = f.Info();
  EXPECT_EQ(info.capacity, 0u);
  EXPECT_EQ(info.bit_count, 0u);
  EXPECT_EQ(info.bytes, 0u);
  EXPECT_EQ(info.items_added, 0u);
  EXPECT_EQ(info.estimated_fp_rate, 0.0);

  BloomFilter copy;
  ASSERT_TRUE(BloomFilter::Deserialize(Serialized(f), &copy).ok());
  EXPECT_FALSE(copy.MightContain("a"));

  // With no bits to record keys in, it must answer true from now on.
  f.Add("a");
  EXPECT_TRUE(f.MightContain("a"));
  EXPECT_TRUE(f.MightContain("b"));
  EXPECT_EQ(f.Info().estimated_fp_rate, 1.0);
}

TEST(BloomFilterTest, NoFalseNegatives) {
  const double kFpRates[] = {0.5, 0.1, 0.01, 1e-4, 1e-9};
  const uint64_t kCapacities[] = {1, 10, 1000, 100000};
  for (uint64_t seed : kSeeds) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    for (uint64_t capacity : kCapacities) {
      for (double p : kFpRates) {
        SCOPED_TRACE("capacity=" + std::to_string(capacity) +
                     " p=" + std::to_string(p));
        BloomFilter f = BloomFilter::ForCapacity(capacity, p);
        std::vector<std::string> keys(capacity);
        for (auto& k : keys) k = Key("k", rng());
        for (const auto& k : keys) f.Add(k);
        uint64_t misses = 0;
        for (const auto& k : keys) misses += !f.MightContain(k);
        ASSERT_EQ(misses, 0u);
      }
    }
    for (double bpk : {1.0, 2.5, 7.7, 13.0, 29.5}) {
      SCOPED_TRACE("bits_per_key=" + std::to_string(bpk));
      BloomFilter f = BloomFilter::WithBitsPerKey(5000, bpk);
      std::vector<uint64_t> hashes(5000);
      for (auto& h : hashes) h = rng();
      for (uint64_t h : hashes) f.AddHash(h);
      for (uint64_t h : hashes) ASSERT_TRUE(f.MightContainHash(h));
    }
  }
}

TEST(BloomFilterTest, HashAndKeyInterfacesAgree) {
  BloomFilter f = BloomFilter::ForCapacity(100, 0.01);
  f.AddHash(KeyHash("via-hash"));
  f.Add("via-key");
  EXPECT_TRUE(f.MightContain("via-hash"));
  EXPECT_TRUE(f.MightContainHash(KeyHash("via-key")));
}

TEST(BloomFilterTest, SharesTheSegmentFilterLayout) {
  // Same keys, same size, same probe count: identical bits, because both
  // use the one blocked bloom implementation.
  const uint64_t n = 3000;
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < n; i++) hashes.push_back(KeyHash(Key("s", i)));
  auto policy = NewBloomFilterPolicy(10);
  std::string segment_filter;
  policy->CreateFilter(hashes.data(), hashes.size(), &segment_filter);
  BloomFilter f = BloomFilter::WithBitsPerKey(n, 10);
  for (uint64_t h : hashes) f.AddHash(h);
  const std::string s = Serialized(f);
  const size_t line_bytes = segment_filter.size() - 4;
  ASSERT_EQ(s.size(), 36 + line_bytes + 4);
  EXPECT_EQ(s.substr(36, line_bytes), segment_filter.substr(0, line_bytes));
}

TEST(BloomFilterTest, InfoDescribesSizeAndFill) {
  BloomFilter f = BloomFilter::ForCapacity(1000, 0.01);
  const double bpk = bb::BitsPerKeyForFpRate(0.01);
  EXPECT_GT(bpk, 9.6);  // More than the classic bound: see ForCapacity.
  EXPECT_LT(bpk, 10.5);
  const uint64_t lines = static_cast<uint64_t>(std::ceil(1000 * bpk / 512));
  BloomFilterInfo info = f.Info();
  EXPECT_EQ(info.capacity, 1000u);
  EXPECT_EQ(info.bit_count, lines * 512);
  EXPECT_EQ(info.bytes, lines * 64);
  EXPECT_NEAR(info.bits_per_key, lines * 512 / 1000.0, 1e-12);
  EXPECT_EQ(info.probes_per_key, bb::ChooseNumProbes(bpk));
  EXPECT_EQ(info.items_added, 0u);
  EXPECT_EQ(info.estimated_fp_rate, 0.0);

  for (uint64_t i = 0; i < 1000; i++) f.Add(Key("i", i));
  info = f.Info();
  EXPECT_EQ(info.items_added, 1000u);
  EXPECT_GT(info.estimated_fp_rate, 0.005);
  EXPECT_LE(info.estimated_fp_rate, 0.01);
  EXPECT_EQ(info.estimated_fp_rate,
            bb::TheoreticalFpRate(lines, 1000, info.probes_per_key));
}

TEST(BloomFilterTest, AddingPastCapacityKeepsWorkingAndShowsTheCost) {
  BloomFilter f = BloomFilter::ForCapacity(2000, 0.01);
  double prev_estimate = 0;
  uint64_t added = 0;
  for (uint64_t target : {2000, 4000, 10000, 20000}) {
    SCOPED_TRACE("items=" + std::to_string(target));
    for (; added < target; added++) f.Add(Key("o", added));
    for (uint64_t i = 0; i < added; i++)
      ASSERT_TRUE(f.MightContain(Key("o", i)));
    const double estimate = f.Info().estimated_fp_rate;
    EXPECT_GT(estimate, prev_estimate);
    const double measured = MeasuredFpRate(f, 50000);
    EXPECT_NEAR(measured, estimate, 0.2 * estimate + 0.002);
    prev_estimate = estimate;
  }
  EXPECT_GT(prev_estimate, 0.5);  // 10x past capacity is nearly useless.
}

TEST(BloomFilterTest, ArgumentsAreClamped) {
  auto shape = [](const BloomFilter& f) {
    const BloomFilterInfo i = f.Info();
    return std::to_string(i.capacity) + "/" + std::to_string(i.bit_count) +
           "/" + std::to_string(i.probes_per_key);
  };
  EXPECT_EQ(shape(BloomFilter::ForCapacity(0, 0.01)),
            shape(BloomFilter::ForCapacity(1, 0.01)));
  EXPECT_EQ(shape(BloomFilter::ForCapacity(1000, 0)),
            shape(BloomFilter::ForCapacity(1000, 1e-9)));
  EXPECT_EQ(shape(BloomFilter::ForCapacity(1000, -1)),
            shape(BloomFilter::ForCapacity(1000, 1e-9)));
  EXPECT_EQ(shape(BloomFilter::ForCapacity(1000, 1)),
            shape(BloomFilter::ForCapacity(1000, 0.5)));
  EXPECT_EQ(shape(BloomFilter::ForCapacity(1000, 7)),
            shape(BloomFilter::ForCapacity(1000, 0.5)));
  EXPECT_EQ(shape(BloomFilter::ForCapacity(1000, std::nan(""))),
            shape(BloomFilter::ForCapacity(1000, 0.01)));
  EXPECT_EQ(shape(BloomFilter::WithBitsPerKey(1000, 0)),
            shape(BloomFilter::WithBitsPerKey(1000, 1)));
  EXPECT_EQ(shape(BloomFilter::WithBitsPerKey(1000, 1e6)),
            shape(BloomFilter::WithBitsPerKey(1000, 100)));
  EXPECT_EQ(shape(BloomFilter::WithBitsPerKey(1000, std::nan(""))),
            shape(BloomFilter::WithBitsPerKey(1000, 10)));
  EXPECT_EQ(shape(BloomFilter::WithBitsPerKey(0, 10)),
            shape(BloomFilter::WithBitsPerKey(1, 10)));
  EXPECT_NE(shape(BloomFilter::ForCapacity(1000, 0.01)),
            shape(BloomFilter::ForCapacity(1000, 0.001)));
}

TEST(BloomFilterTest, CopyIsIndependentAndMoveEmptiesTheSource) {
  BloomFilter a = BloomFilter::ForCapacity(100, 0.01);
  a.Add("x");
  BloomFilter b = a;
  b.Add("y");
  EXPECT_EQ(a.Info().items_added, 1u);
  EXPECT_EQ(b.Info().items_added, 2u);
  EXPECT_TRUE(b.MightContain("x"));
  EXPECT_NE(Serialized(a), Serialized(b));
  BloomFilter c;
  c = b;
  EXPECT_EQ(Serialized(c), Serialized(b));
  c = c;  // Self-assignment keeps it intact.
  EXPECT_EQ(Serialized(c), Serialized(b));

  BloomFilter d = std::move(b);
  EXPECT_TRUE(d.MightContain("y"));
  EXPECT_FALSE(b.MightContain("y"));  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.Info().bit_count, 0u);
  BloomFilter e;
  e = std::move(d);
  EXPECT_TRUE(e.MightContain("x"));
  EXPECT_EQ(d.Info().items_added, 0u);  // NOLINT(bugprone-use-after-move)
}

TEST(BloomFilterTest, SerializationRoundTrips) {
  for (uint64_t seed : kSeeds) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const uint64_t capacity = 1 + rng() % 20000;
    BloomFilter f =
        BloomFilter::ForCapacity(capacity, 0.001 + 0.1 * (seed % 3));
    std::vector<std::string> keys;
    for (uint64_t i = 0; i < capacity; i++) keys.push_back(Key("r", rng()));
    for (const auto& k : keys) f.Add(k);
    const std::string bytes = Serialized(f);

    BloomFilter g;
    ASSERT_TRUE(BloomFilter::Deserialize(bytes, &g).ok());
    EXPECT_EQ(Serialized(g), bytes);
    const BloomFilterInfo fi = f.Info(), gi = g.Info();
    EXPECT_EQ(gi.capacity, fi.capacity);
    EXPECT_EQ(gi.bit_count, fi.bit_count);
    EXPECT_EQ(gi.probes_per_key, fi.probes_per_key);
    EXPECT_EQ(gi.items_added, fi.items_added);
    EXPECT_EQ(gi.estimated_fp_rate, fi.estimated_fp_rate);
    for (const auto& k : keys) ASSERT_TRUE(g.MightContain(k));
    for (uint64_t i = 0; i < 10000; i++) {
      const std::string k = Key("other", i);
      ASSERT_EQ(f.MightContain(k), g.MightContain(k));
    }
  }
}

TEST(BloomFilterTest, SerializeAppends) {
  BloomFilter f = BloomFilter::ForCapacity(10, 0.01);
  std::string dst = "prefix";
  f.Serialize(&dst);
  EXPECT_EQ(dst.substr(6), Serialized(f));
}

TEST(BloomFilterTest, EverySingleByteCorruptionIsDetected) {
  BloomFilter f = BloomFilter::ForCapacity(10, 0.01);
  for (int i = 0; i < 10; i++) f.Add(Key("c", i));
  const std::string good = Serialized(f);
  ASSERT_EQ(good.size(), 36 + 64 + 4u);
  BloomFilter sentinel = BloomFilter::ForCapacity(3, 0.5);
  sentinel.Add("sentinel");
  const std::string sentinel_bytes = Serialized(sentinel);
  for (size_t pos = 0; pos < good.size(); pos++) {
    for (int delta = 1; delta < 256; delta++) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ delta);
      BloomFilter out = sentinel;
      const Status s = BloomFilter::Deserialize(bad, &out);
      if (s.ok()) {
        // Only acceptable if it decodes to exactly what it says.
        ASSERT_EQ(Serialized(out), bad) << "pos=" << pos << " delta=" << delta;
      } else {
        ASSERT_TRUE(s.IsCorruption()) << s.ToString();
        ASSERT_EQ(Serialized(out), sentinel_bytes) << "*out was modified";
      }
    }
  }
}

TEST(BloomFilterTest, TruncatedOrExtendedInputIsCorruption) {
  BloomFilter f = BloomFilter::ForCapacity(500, 0.01);
  for (int i = 0; i < 500; i++) f.Add(Key("t", i));
  const std::string good = Serialized(f);
  for (size_t len = 0; len < good.size(); len++) {
    BloomFilter out;
    // A copy of exactly len bytes, so a read past it is caught by ASan.
    const std::string cut = good.substr(0, len);
    const Status s = BloomFilter::Deserialize(cut, &out);
    ASSERT_TRUE(s.IsCorruption()) << "len=" << len;
    ASSERT_NE(s.message().find("offset"), std::string::npos) << s.ToString();
  }
  BloomFilter out;
  EXPECT_TRUE(BloomFilter::Deserialize(good + "x", &out).IsCorruption());
  EXPECT_TRUE(BloomFilter::Deserialize(good + std::string(64, '\0'), &out)
                  .IsCorruption());
}

TEST(BloomFilterTest, CorruptionMessagesSayWhatIsWrong) {
  BloomFilter f = BloomFilter::ForCapacity(10, 0.01);
  const std::string good = Serialized(f);
  BloomFilter out;
  auto message = [&](const std::string& bytes) {
    return BloomFilter::Deserialize(bytes, &out).ToString();
  };
  EXPECT_NE(message("short").find("truncated"), std::string::npos);
  std::string bad = good;
  bad[0] = 'X';
  EXPECT_NE(message(bad).find("magic"), std::string::npos);
  bad = good;
  bad[8] = 2;
  EXPECT_NE(message(bad).find("version 2"), std::string::npos);
  bad = good;
  bad[40] ^= 1;
  EXPECT_NE(message(bad).find("checksum"), std::string::npos);
  bad = good;
  bad[28] = 7;  // Line count.
  EXPECT_NE(message(bad).find("size mismatch"), std::string::npos);
  // A huge claimed line count is rejected without allocating.
  bad = good;
  for (int i = 28; i < 36; i++) bad[i] = '\xFF';
  EXPECT_NE(message(bad).find("size mismatch"), std::string::npos);
}

TEST(BloomFilterTest, AddConcurrentlySetsTheSameBitsAsAdd) {
  BloomFilter a = BloomFilter::ForCapacity(5000, 0.01);
  BloomFilter b = BloomFilter::ForCapacity(5000, 0.01);
  for (uint64_t i = 0; i < 5000; i++) {
    a.Add(Key("c", i));
    b.AddConcurrently(Key("c", i));
  }
  EXPECT_EQ(Serialized(a), Serialized(b));
  b.AddHashConcurrently(KeyHash("hashed"));
  EXPECT_TRUE(b.MightContain("hashed"));
  EXPECT_EQ(b.Info().items_added, 5001u);
}

// The merge of two filters is the filter of the union of their keys.
TEST(BloomFilterTest, MergeIsTheFilterOfTheUnion) {
  for (uint64_t seed : kSeeds) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    BloomFilter left = BloomFilter::ForCapacity(4000, 0.01);
    BloomFilter right = BloomFilter::ForCapacity(4000, 0.01);
    BloomFilter both = BloomFilter::ForCapacity(4000, 0.01);
    ASSERT_TRUE(left.IsCompatible(right));
    std::vector<std::string> keys;
    for (int i = 0; i < 3000; i++) {
      keys.push_back(Key("m", rng()));
      ((rng() & 1) != 0 ? left : right).Add(keys.back());
      both.Add(keys.back());
    }
    const uint64_t right_items = right.Info().items_added;
    ASSERT_TRUE(left.Merge(right).ok());
    for (const auto& k : keys) ASSERT_TRUE(left.MightContain(k)) << k;
    EXPECT_EQ(left.Info().items_added, 3000u);
    EXPECT_EQ(right.Info().items_added, right_items);  // other is unchanged
    EXPECT_EQ(Serialized(left), Serialized(both));
  }
}

TEST(BloomFilterTest, MergeRejectsOtherShapesAndItself) {
  BloomFilter f = BloomFilter::ForCapacity(1000, 0.01);
  f.Add("x");
  const std::string before = Serialized(f);
  // Same capacity, other rate: other probe count and size.
  BloomFilter other_rate = BloomFilter::ForCapacity(1000, 0.001);
  other_rate.Add("y");
  Status s = f.Merge(other_rate);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("different shapes"), std::string::npos)
      << s.ToString();
  // Same probe count, other size.
  BloomFilter other_size = BloomFilter::ForCapacity(100000, 0.01);
  EXPECT_FALSE(f.IsCompatible(other_size));
  EXPECT_TRUE(f.Merge(other_size).IsInvalidArgument());
  s = f.Merge(f);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(Serialized(f), before);

  // Filters of the same shape made differently are compatible.
  BloomFilter a = BloomFilter::WithBitsPerKey(1000, 10);
  BloomFilter b = BloomFilter::WithBitsPerKey(1010, 10);
  EXPECT_TRUE(a.IsCompatible(b));
  EXPECT_TRUE(a.Merge(b).ok());
  // Two empty filters have the same (empty) shape.
  BloomFilter e1, e2;
  EXPECT_TRUE(e1.Merge(e2).ok());
}

// Swamidass-Baldi for the blocked layout: the estimate tracks distinct keys
// closely up to a few times the capacity, and duplicates do not count.
TEST(BloomFilterTest, ApproximateElementCountTracksDistinctKeys) {
  EXPECT_EQ(BloomFilter().ApproximateElementCount(), 0.0);
  BloomFilter f = BloomFilter::ForCapacity(100000, 0.01);
  EXPECT_EQ(f.ApproximateElementCount(), 0.0);
  uint64_t added = 0;
  for (uint64_t target : {1000, 10000, 100000, 300000}) {
    SCOPED_TRACE("keys=" + std::to_string(target));
    for (; added < target; added++) f.Add(Key("d", added));
    const double estimate = f.ApproximateElementCount();
    EXPECT_NEAR(estimate, static_cast<double>(target), 0.02 * target);
    EXPECT_EQ(f.Info().approximate_element_count, estimate);
  }
  // Adding every key again changes no bit and so not the estimate, while
  // items_added counts every call.
  const double estimate = f.ApproximateElementCount();
  for (uint64_t i = 0; i < added; i++) f.Add(Key("d", i));
  EXPECT_EQ(f.ApproximateElementCount(), estimate);
  EXPECT_EQ(f.Info().items_added, 2 * added);

  // A small filter and a one-line filter are estimated as well.
  for (uint64_t capacity : {1, 10, 100}) {
    SCOPED_TRACE("capacity=" + std::to_string(capacity));
    BloomFilter small = BloomFilter::WithBitsPerKey(capacity, 10);
    for (uint64_t i = 0; i < capacity; i++) small.Add(Key("s", i));
    EXPECT_NEAR(small.ApproximateElementCount(), capacity,
                0.3 * capacity + 1.0);
  }
}

TEST(BloomFilterTest, ApproximateElementCountOfASaturatedFilterIsInfinite) {
  BloomFilter f = BloomFilter::WithBitsPerKey(1, 1);  // 1 line, 1 probe
  ASSERT_EQ(f.Info().bit_count, 512u);
  for (uint64_t i = 0; i < 100000; i++) f.Add(Key("sat", i));
  EXPECT_EQ(f.Info().fill_ratio, 1.0);
  EXPECT_TRUE(std::isinf(f.ApproximateElementCount()));
}

TEST(BloomFilterTest, ForCapacityDeliversTheRequestedRate) {
  // Unlike the classic sizing, ForCapacity accounts for the blocked layout.
  for (double p : {0.1, 0.01, 0.001}) {
    SCOPED_TRACE("p=" + std::to_string(p));
    BloomFilter f = BloomFilter::ForCapacity(200000, p);
    for (uint64_t i = 0; i < 200000; i++) f.Add(Key("present-", i));
    const double measured = MeasuredFpRate(f, 1000000);
    EXPECT_LE(measured, 1.1 * p);
    EXPECT_GE(measured, 0.8 * p);
    EXPECT_LE(f.Info().estimated_fp_rate, p);
  }
}

TEST(BloomFilterTest, FpRateAt10BitsPerKey) {
  BloomFilter f = BloomFilter::WithBitsPerKey(200000, 10);
  for (uint64_t i = 0; i < 200000; i++) f.Add(Key("present-", i));
  const double measured = MeasuredFpRate(f, 500000);
  const double estimate = f.Info().estimated_fp_rate;
  EXPECT_NEAR(measured, estimate, 0.1 * estimate);
  EXPECT_LE(measured, 0.010);
}

}  // namespace
}  // namespace bloomkv
