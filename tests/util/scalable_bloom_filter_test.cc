// Tests of bloomkv::ScalableBloomFilter: growth by sub-filters with
// tightening rates (the compound false-positive rate stays under the target
// at ten times the capacity), RedisBloom's duplicate, expansion and
// non-scaling semantics, the limits of growth, estimates, and the
// serialization's layout and resistance to damaged input.
#include "bloomkv/scalable_bloom_filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "util/coding.h"
#include "util/hash.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

constexpr uint64_t kSeeds[] = {1, 2, 3, 42, 20240611};

std::string Key(const char* prefix, uint64_t i) {
  return std::string(prefix) + std::to_string(i);
}

std::string Serialized(const ScalableBloomFilter& f) {
  std::string s;
  f.Serialize(&s);
  return s;
}

ScalableBloomFilter Make(uint64_t capacity, double fp_rate,
                         uint32_t expansion = 2, bool non_scaling = false) {
  ScalableBloomFilterOptions o;
  o.capacity = capacity;
  o.fp_rate = fp_rate;
  o.expansion = expansion;
  o.non_scaling = non_scaling;
  ScalableBloomFilter f;
  const Status s = ScalableBloomFilter::Create(o, &f);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return f;
}

double MeasuredFpRate(const ScalableBloomFilter& f, uint64_t probes) {
  uint64_t positives = 0;
  for (uint64_t i = 0; i < probes; i++) {
    positives += f.MightContain(Key("absent-", i));
  }
  return static_cast<double>(positives) / static_cast<double>(probes);
}

// Recomputes the trailing checksum of an encoding edited by a test.
void Reseal(std::string* enc) {
  const size_t body = enc->size() - 4;
  EncodeFixed32(enc->data() + body, BlockChecksum(enc->data(), body));
}

TEST(ScalableBloomFilterTest, DefaultFilterContainsNothingAndGrowsOnFirstAdd) {
  ScalableBloomFilter f;
  EXPECT_FALSE(f.MightContain("a"));
  EXPECT_EQ(f.num_filters(), 0u);
  EXPECT_EQ(f.options().capacity, 100u);
  EXPECT_EQ(f.options().fp_rate, 0.01);
  EXPECT_EQ(f.options().expansion, 2u);
  EXPECT_EQ(f.ApproximateElementCount(), 0.0);
  ScalableBloomFilter copy;
  ASSERT_TRUE(ScalableBloomFilter::Deserialize(Serialized(f), &copy).ok());
  EXPECT_EQ(Serialized(copy), Serialized(f));

  bool added = false;
  ASSERT_TRUE(f.Add("a", &added).ok());
  EXPECT_TRUE(added);
  EXPECT_EQ(f.num_filters(), 1u);
  EXPECT_TRUE(f.MightContain("a"));
  EXPECT_EQ(f.items(), 1u);
}

TEST(ScalableBloomFilterTest, CreateValidatesOptions) {
  ScalableBloomFilter f = Make(10, 0.01);
  ASSERT_TRUE(f.Add("kept").ok());
  const std::string before = Serialized(f);
  struct Case {
    uint64_t capacity;
    double fp_rate;
    uint32_t expansion;
    const char* needle;
  };
  const Case cases[] = {
      {0, 0.01, 2, "capacity"},
      {10, 0.0, 2, "fp_rate"},
      {10, 1e-9, 2, "fp_rate"},
      {10, 0.6, 2, "fp_rate"},
      {10, std::numeric_limits<double>::quiet_NaN(), 2, "fp_rate"},
      {10, -1, 2, "fp_rate"},
      {10, 0.01, 0, "expansion"},
      {10, 0.01, 65537, "expansion"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.needle);
    ScalableBloomFilterOptions o;
    o.capacity = c.capacity;
    o.fp_rate = c.fp_rate;
    o.expansion = c.expansion;
    const Status s = ScalableBloomFilter::Create(o, &f);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.ToString().find(c.needle), std::string::npos) << s.ToString();
    EXPECT_EQ(Serialized(f), before);
  }
  // The bounds themselves are accepted.
  Make(1, 2e-9, 1);
  Make(1, 0.5, 65536);
}

TEST(ScalableBloomFilterTest, NoFalseNegativesWhileGrowing) {
  for (uint64_t seed : kSeeds) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    ScalableBloomFilter f = Make(1000, 0.01);
    std::vector<std::string> keys;
    for (int i = 0; i < 20000; i++) {
      keys.push_back(Key("k", rng()));
      ASSERT_TRUE(f.Add(keys.back()).ok());
    }
    for (const auto& k : keys) ASSERT_TRUE(f.MightContain(k)) << k;
    // 1000 + 2000 + 4000 + 8000 < 20000 <= ... + 16000.
    EXPECT_EQ(f.num_filters(), 5u);
    // Keys that collided with earlier ones (false positives) are not
    // recorded: a few dozen at most.
    EXPECT_LE(f.items(), 20000u);
    EXPECT_GT(f.items(), 19800u);
  }
}

// The point of the tightening rates: at 10x the initial capacity the chain
// still answers below its target, where a plain bloom filter of that
// capacity would be near useless (BloomFilterTest shows > 50%).
TEST(ScalableBloomFilterTest, FpRateStaysUnderTargetAtTenTimesCapacity) {
  struct Case {
    double p;
    uint32_t expansion;
  };
  for (const Case c :
       {Case{0.01, 2}, Case{0.01, 1}, Case{0.001, 2}, Case{0.05, 4}}) {
    SCOPED_TRACE("p=" + std::to_string(c.p) +
                 " expansion=" + std::to_string(c.expansion));
    constexpr uint64_t kCapacity = 10000;
    ScalableBloomFilter f = Make(kCapacity, c.p, c.expansion);
    for (uint64_t i = 0; i < 10 * kCapacity; i++) {
      ASSERT_TRUE(f.Add(Key("present-", i)).ok());
    }
    for (uint64_t i = 0; i < 10 * kCapacity; i++) {
      ASSERT_TRUE(f.MightContain(Key("present-", i)));
    }
    const double measured = MeasuredFpRate(f, 1000000);
    const ScalableBloomFilterInfo info = f.Info();
    EXPECT_LT(measured, c.p);
    EXPECT_LT(info.estimated_fp_rate, c.p);
    EXPECT_NEAR(measured, info.estimated_fp_rate,
                0.15 * info.estimated_fp_rate + 2e-5);
    if (c.expansion == 1) {
      EXPECT_EQ(f.num_filters(), 10u);
    }
  }
}

TEST(ScalableBloomFilterTest, RepeatedKeysAreNotRecordedTwice) {
  ScalableBloomFilter f = Make(10, 0.01);
  bool added = false;
  ASSERT_TRUE(f.Add("x", &added).ok());
  EXPECT_TRUE(added);
  for (int i = 0; i < 100; i++) {
    ASSERT_TRUE(f.Add("x", &added).ok());
    EXPECT_FALSE(added);
  }
  EXPECT_EQ(f.items(), 1u);
  EXPECT_EQ(f.num_filters(), 1u);
  ASSERT_TRUE(f.AddHash(KeyHash("x"), &added).ok());
  EXPECT_FALSE(added);
  ASSERT_TRUE(f.AddHash(KeyHash("y"), &added).ok());
  EXPECT_TRUE(added);
  EXPECT_TRUE(f.MightContain("y"));
}

TEST(ScalableBloomFilterTest, NonScalingFilterFailsWhenFullAndChangesNothing) {
  ScalableBloomFilter f = Make(100, 0.01, 2, /*non_scaling=*/true);
  uint64_t i = 0;
  Status s;
  bool added = true;
  std::vector<std::string> keys;
  for (; i < 1000; i++) {
    const std::string k = Key("n", i);
    s = f.Add(k, &added);
    if (!s.ok()) break;
    keys.push_back(k);
  }
  ASSERT_TRUE(s.IsFull()) << s.ToString();
  EXPECT_FALSE(added);
  EXPECT_NE(s.ToString().find("non-scaling filter is full"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(f.items(), 100u);
  EXPECT_EQ(f.num_filters(), 1u);
  const std::string before = Serialized(f);
  EXPECT_TRUE(f.Add(Key("n", i)).IsFull());
  EXPECT_EQ(Serialized(f), before);
  // Keys it has still succeed (nothing to record), and all are found.
  ASSERT_TRUE(f.Add(keys[0], &added).ok());
  EXPECT_FALSE(added);
  for (const auto& k : keys) EXPECT_TRUE(f.MightContain(k));
  // The one sub-filter gets the whole target rate.
  const ScalableBloomFilterInfo info = f.Info();
  ASSERT_EQ(info.filters.size(), 1u);
  EXPECT_EQ(info.filters[0].target_fp_rate, 0.01);
  EXPECT_LE(info.estimated_fp_rate, 0.01);
}

// Each sub-filter halves the rate; once it would pass BloomFilter's floor
// of 1e-9 the chain refuses to grow rather than miss its target.
TEST(ScalableBloomFilterTest, GrowthStopsBeforeTheRateFloor) {
  ScalableBloomFilter f = Make(1, 0.01, 1);
  Status s;
  uint64_t i = 0;
  for (; i < 100 && s.ok(); i++) s = f.Add(Key("g", i));
  ASSERT_TRUE(s.IsFull()) << s.ToString();
  EXPECT_NE(s.ToString().find("below 1e-9"), std::string::npos) << s.ToString();
  // 0.005 * 2^-i >= 1e-9 for i <= 22: 23 sub-filters of one key.
  EXPECT_EQ(f.num_filters(), 23u);
  EXPECT_EQ(f.items(), 23u);
  const std::string before = Serialized(f);
  EXPECT_TRUE(f.Add("one more").IsFull());
  EXPECT_EQ(Serialized(f), before);
  EXPECT_LT(f.Info().estimated_fp_rate, 0.01);
}

TEST(ScalableBloomFilterTest, InfoDescribesTheChain) {
  ScalableBloomFilter f = Make(1000, 0.01, 3);
  for (uint64_t i = 0; i < 5000; i++) ASSERT_TRUE(f.Add(Key("i", i)).ok());
  const ScalableBloomFilterInfo info = f.Info();
  ASSERT_EQ(info.filters.size(), 3u);  // 1000 + 3000 < 5000 <= + 9000
  uint64_t capacity = 1000, bytes = 0, items = 0;
  double rate = 0.005;
  for (const ScalableBloomSubFilterInfo& sub : info.filters) {
    EXPECT_EQ(sub.capacity, capacity);
    EXPECT_DOUBLE_EQ(sub.target_fp_rate, rate);
    EXPECT_LE(sub.bloom.estimated_fp_rate, sub.target_fp_rate);
    bytes += sub.bloom.bytes;
    items += sub.bloom.items_added;
    capacity *= 3;
    rate /= 2;
  }
  EXPECT_EQ(info.total_capacity, 1000u + 3000u + 9000u);
  EXPECT_EQ(info.bytes, bytes);
  EXPECT_EQ(info.items, items);
  EXPECT_EQ(info.items, f.items());
  EXPECT_EQ(info.filters[0].bloom.items_added, 1000u);
  EXPECT_EQ(info.filters[1].bloom.items_added, 3000u);
  EXPECT_NEAR(info.approximate_element_count, f.items(), 0.03 * f.items());
  EXPECT_EQ(info.approximate_element_count, f.ApproximateElementCount());
}

TEST(ScalableBloomFilterTest, CopyIsIndependentAndMoveLeavesADefaultFilter) {
  ScalableBloomFilter f = Make(10, 0.01);
  for (uint64_t i = 0; i < 50; i++) ASSERT_TRUE(f.Add(Key("c", i)).ok());
  ScalableBloomFilter copy = f;
  ASSERT_TRUE(copy.Add("only-in-copy").ok());
  EXPECT_EQ(copy.items(), f.items() + 1);
  ScalableBloomFilter moved = std::move(f);
  EXPECT_EQ(moved.items(), 50u);
  EXPECT_EQ(f.num_filters(), 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(f.options().capacity, 100u);
  EXPECT_FALSE(f.MightContain("c0"));
}

TEST(ScalableBloomFilterTest, SerializationRoundTrips) {
  for (bool non_scaling : {false, true}) {
    ScalableBloomFilter f = Make(50, 0.001, 5, non_scaling);
    for (uint64_t i = 0; i < 40; i++) ASSERT_TRUE(f.Add(Key("r", i)).ok());
    if (!non_scaling) {
      for (uint64_t i = 40; i < 400; i++) ASSERT_TRUE(f.Add(Key("r", i)).ok());
    }
    const std::string enc = Serialized(f);
    ScalableBloomFilter g;
    ASSERT_TRUE(ScalableBloomFilter::Deserialize(enc, &g).ok());
    EXPECT_EQ(Serialized(g), enc);
    EXPECT_EQ(g.items(), f.items());
    EXPECT_EQ(g.num_filters(), f.num_filters());
    EXPECT_EQ(g.options().non_scaling, non_scaling);
    EXPECT_EQ(g.options().expansion, 5u);
    EXPECT_EQ(g.options().fp_rate, 0.001);
    for (uint64_t i = 0; i < 40; i++) EXPECT_TRUE(g.MightContain(Key("r", i)));
    // It keeps growing where the original would.
    Status a = f.Add("next"), b = g.Add("next");
    EXPECT_EQ(a.ToString(), b.ToString());
    EXPECT_EQ(Serialized(f), Serialized(g));
  }
}

// Header fields at their documented offsets (docs/filters.md).
TEST(ScalableBloomFilterTest, EncodingLayout) {
  ScalableBloomFilter f = Make(2, 0.01, 3);
  for (uint64_t i = 0; i < 3; i++) ASSERT_TRUE(f.Add(Key("l", i)).ok());
  ASSERT_EQ(f.num_filters(), 2u);
  const std::string enc = Serialized(f);
  EXPECT_EQ(enc.substr(0, 8), "BKVSCALE");
  EXPECT_EQ(enc[8], 1);  // version
  EXPECT_EQ(enc[9], 0);  // flags
  EXPECT_EQ(enc[10], 0);
  EXPECT_EQ(enc[11], 0);
  EXPECT_EQ(DecodeFixed32(enc.data() + 12), 3u);
  EXPECT_EQ(DecodeFixed64(enc.data() + 16), 2u);
  double rate;
  const uint64_t bits = DecodeFixed64(enc.data() + 24);
  std::memcpy(&rate, &bits, sizeof(rate));
  EXPECT_EQ(rate, 0.01);
  EXPECT_EQ(DecodeFixed64(enc.data() + 32), 3u);
  EXPECT_EQ(DecodeFixed32(enc.data() + 40), 2u);
  const uint64_t first = DecodeFixed64(enc.data() + 44);
  EXPECT_EQ(enc.substr(52, 8), "BKVBLOOM");
  const uint64_t second = DecodeFixed64(enc.data() + 52 + first);
  EXPECT_EQ(enc.substr(60 + first, 8), "BKVBLOOM");
  EXPECT_EQ(enc.size(), 44 + 8 + first + 8 + second + 4);
  EXPECT_EQ(DecodeFixed32(enc.data() + enc.size() - 4),
            BlockChecksum(enc.data(), enc.size() - 4));
  ScalableBloomFilter ns = Make(2, 0.01, 3, true);
  EXPECT_EQ(Serialized(ns)[9], 1);
}

TEST(ScalableBloomFilterTest, EveryTruncationAndBitFlipIsCorruption) {
  ScalableBloomFilter f = Make(4, 0.01);
  for (uint64_t i = 0; i < 10; i++) ASSERT_TRUE(f.Add(Key("d", i)).ok());
  ASSERT_EQ(f.num_filters(), 2u);  // 4 + 8
  const std::string enc = Serialized(f);
  ScalableBloomFilter out = Make(7, 0.02);
  const std::string out_before = Serialized(out);
  for (size_t len = 0; len < enc.size(); len++) {
    const Status s = ScalableBloomFilter::Deserialize(enc.substr(0, len), &out);
    ASSERT_TRUE(s.IsCorruption()) << len << ": " << s.ToString();
  }
  for (size_t pos = 0; pos < enc.size(); pos++) {
    for (int bit = 0; bit < 8; bit++) {
      std::string bad = enc;
      bad[pos] = static_cast<char>(bad[pos] ^ (1 << bit));
      const Status s = ScalableBloomFilter::Deserialize(bad, &out);
      ASSERT_TRUE(s.IsCorruption())
          << pos << "/" << bit << ": " << s.ToString();
    }
  }
  EXPECT_TRUE(ScalableBloomFilter::Deserialize(enc + "x", &out).IsCorruption());
  EXPECT_EQ(Serialized(out), out_before);
}

TEST(ScalableBloomFilterTest, CorruptionMessagesSayWhatIsWrong) {
  ScalableBloomFilter f = Make(4, 0.01);
  for (uint64_t i = 0; i < 10; i++) ASSERT_TRUE(f.Add(Key("m", i)).ok());
  const std::string enc = Serialized(f);
  ScalableBloomFilter out;
  auto expect = [&](const std::string& input, const std::string& needle,
                    uint64_t offset) {
    SCOPED_TRACE(needle);
    const Status s = ScalableBloomFilter::Deserialize(input, &out);
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_EQ(0u, s.ToString().rfind("Corruption: scalable bloom filter: ", 0))
        << s.ToString();
    EXPECT_NE(s.ToString().find(needle), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find("at offset " + std::to_string(offset)),
              std::string::npos)
        << s.ToString();
  };
  expect("short", "truncated: 5 bytes", 0);
  std::string bad = enc;
  bad[0] = 'X';
  expect(bad, "bad magic", 0);
  bad = enc;
  bad[8] = 2;
  expect(bad, "unsupported format version 2", 8);
  expect(enc.substr(0, 60), "size mismatch", 44);
  const uint64_t second_at = 44 + 8 + DecodeFixed64(enc.data() + 44);
  expect(enc.substr(0, enc.size() - 1), "sub-filter 2 declares", second_at);
  expect(enc + std::string(12, '\0'), "12 bytes after the last sub-filter",
         enc.size() - 4);
  bad = enc;
  bad[100] ^= 1;
  expect(bad, "checksum mismatch", enc.size() - 4);
  bad = enc;
  EncodeFixed32(bad.data() + 40, 1000);
  expect(bad, "too many sub-filters", 40);

  // Consistent encodings of impossible chains, resealed with a good
  // checksum so that the later checks are reached.
  bad = enc;
  bad[9] = 2;
  Reseal(&bad);
  expect(bad, "unknown flags 2", 9);
  bad = enc;
  bad[11] = 1;
  Reseal(&bad);
  expect(bad, "reserved bytes", 10);
  bad = enc;
  EncodeFixed32(bad.data() + 12, 0);
  Reseal(&bad);
  expect(bad, "invalid options (expansion 0", 12);
  bad = enc;
  EncodeFixed64(bad.data() + 32, 11);
  Reseal(&bad);
  expect(bad, "item count 11 is not the sum", 32);
  bad = enc;
  EncodeFixed64(bad.data() + 16, 5);  // the sub-filters were sized for 4
  Reseal(&bad);
  expect(bad, "sub-filter 1 does not fit the chain", 52);
  bad = enc;
  bad[9] = 1;  // non-scaling, yet two sub-filters
  Reseal(&bad);
  expect(bad, "sub-filter 2 is more than these options allow", 40);
  bad = enc;
  bad[52 + 40] ^= 1;  // inside the first sub-filter's lines
  Reseal(&bad);
  expect(bad, "sub-filter 1: bloom filter: checksum mismatch", 52);
}

}  // namespace
}  // namespace bloomkv
