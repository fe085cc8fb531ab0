// Tests of kvbench's latency histogram (percentiles within the bucket
// resolution) and workload generators (short codes, URLs, Zipf ranks).
#include "bench/kvbench/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench/kvbench/generators.h"
#include "tests/testutil/test_util.h"

namespace bloomkv::bench {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

TEST(HistogramTest, EmptyReportsZero) {
  Histogram h;
  EXPECT_EQ(0u, h.count());
  EXPECT_EQ(0.0, h.Percentile(50));
  EXPECT_EQ(0.0, h.mean());
}

TEST(HistogramTest, BucketsAreContiguousAndNarrow) {
  for (size_t b = 1; b < Histogram::kNumBuckets; b++) {
    ASSERT_EQ(Histogram::BucketHigh(b - 1) + 1, Histogram::BucketLow(b))
        << "bucket " << b;
  }
  EXPECT_EQ(Histogram::kNumBuckets - 1, Histogram::BucketFor(UINT64_MAX));
  const std::vector<uint64_t> values = {
      0,         1, 63, 64, 65, 1000, 123456789, (uint64_t{1} << 40) + 12345,
      UINT64_MAX};
  for (uint64_t v : values) {
    const size_t b = Histogram::BucketFor(v);
    EXPECT_LE(Histogram::BucketLow(b), v);
    EXPECT_GE(Histogram::BucketHigh(b), v);
    // Width at most 1/64 of the lower bound.
    EXPECT_LE(Histogram::BucketHigh(b) - Histogram::BucketLow(b),
              Histogram::BucketLow(b) / 64);
  }
}

TEST(HistogramTest, SmallValuesAreExact) {
  Histogram h;
  for (uint64_t v = 1; v <= 50; v++) h.Add(v);
  EXPECT_EQ(25.0, h.Percentile(50));
  EXPECT_EQ(50.0, h.Percentile(100));
  EXPECT_EQ(1.0, h.Percentile(0));
  EXPECT_EQ(1u, h.min());
  EXPECT_EQ(50u, h.max());
  EXPECT_DOUBLE_EQ(25.5, h.mean());
}

TEST(HistogramTest, TailCountsAndSumsTheValuesAtOrAboveAThreshold) {
  Histogram h;
  EXPECT_EQ(0u, h.TailAtLeast(1000).count);
  for (uint64_t v : {5u, 999u, 1000u, 250000u, 3000000u}) h.Add(v);
  const Histogram::Tail t = h.TailAtLeast(1000);
  EXPECT_EQ(3u, t.count);
  const double exact = 1000.0 + 250000.0 + 3000000.0;
  EXPECT_NEAR(exact, t.sum, 0.016 * exact);
  EXPECT_EQ(5u, h.TailAtLeast(0).count);
  EXPECT_EQ(0u, h.TailAtLeast(3000000u + 100000u).count);
}

TEST(HistogramTest, PercentilesMatchSortedSampleWithinResolution) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Rng rng(seed);
    Histogram a, b;
    std::vector<uint64_t> values;
    for (int i = 0; i < 20000; i++) {
      // Log-uniform over 100 ns .. 10 ms, like latencies with a long tail.
      const uint64_t v =
          static_cast<uint64_t>(100.0 * std::pow(1e5, rng.NextDouble()));
      values.push_back(v);
      (i % 2 == 0 ? a : b).Add(v);
    }
    a.Merge(b);
    ASSERT_EQ(values.size(), a.count());
    std::sort(values.begin(), values.end());
    for (double p : {1.0, 50.0, 90.0, 99.0, 99.9}) {
      const size_t rank = static_cast<size_t>(
          std::max(1.0, std::ceil(p / 100.0 * values.size())));
      const double exact = static_cast<double>(values[rank - 1]);
      EXPECT_NEAR(exact, a.Percentile(p), exact / 64.0 + 1.0) << "p" << p;
    }
    EXPECT_EQ(values.front(), a.min());
    EXPECT_EQ(values.back(), a.max());
  }
}

TEST(ShortCodeTest, EncodesSevenBase62CharactersInNumericOrder) {
  EXPECT_EQ("0000000", EncodeShortCode(0));
  EXPECT_EQ("000000z", EncodeShortCode(61));
  EXPECT_EQ("0000010", EncodeShortCode(62));
  EXPECT_EQ("zzzzzzz", EncodeShortCode(kShortCodeSpace - 1));
  EXPECT_LT(EncodeShortCode(12345), EncodeShortCode(12346));
  EXPECT_LT(EncodeShortCode(61), EncodeShortCode(62));
}

TEST(ShortCodeTest, IssuedCodesAreDistinctAndAbsentOnesNeverIssued) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    ShortCodeSet set;
    set.Issue(5000, seed);
    ASSERT_EQ(5000u, set.size());
    std::set<std::string> keys;
    for (size_t i = 0; i < set.size(); i++) {
      ASSERT_TRUE(set.Contains(set.code(i)));
      keys.insert(EncodeShortCode(set.code(i)));
    }
    EXPECT_EQ(5000u, keys.size());
    Rng rng(seed + 1);
    for (int i = 0; i < 5000; i++) {
      const uint64_t c = set.NeverIssued(&rng);
      ASSERT_FALSE(set.Contains(c));
      ASSERT_EQ(0u, keys.count(EncodeShortCode(c)));
    }
    // Same seed, same codes in the same order.
    ShortCodeSet again;
    again.Issue(5000, seed);
    for (size_t i = 0; i < set.size(); i++) {
      ASSERT_EQ(set.code(i), again.code(i));
    }
  }
}

TEST(UrlGeneratorTest, LengthsInRangeDeterministicAndUrlShaped) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    UrlGenerator gen(seed, 40, 120);
    std::set<size_t> lengths;
    for (uint64_t code = 0; code < 2000; code++) {
      const std::string url = gen.Url(code * 7919, 0);
      ASSERT_GE(url.size(), 40u);
      ASSERT_LE(url.size(), 120u);
      ASSERT_EQ(0u, url.rfind("http", 0)) << url;
      ASSERT_NE(std::string::npos, url.find("://")) << url;
      ASSERT_EQ(url, gen.Url(code * 7919, 0));
      ASSERT_NE(url, gen.Url(code * 7919, 1));
      lengths.insert(url.size());
    }
    // Uniform over 81 lengths: 2000 draws cover nearly all of them.
    EXPECT_GT(lengths.size(), 70u);
    EXPECT_NE(UrlGenerator(seed + 1, 40, 120).Url(1, 0), gen.Url(1, 0));
  }
  EXPECT_EQ(64u, UrlGenerator(1, 64, 64).Url(5, 0).size());
  EXPECT_EQ(3u, UrlGenerator(1, 3, 3).Url(5, 0).size());
}

TEST(ZipfGeneratorTest, RanksInRangeWithZipfShape) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    for (double s : {0.99, 1.0, 1.2}) {
      SCOPED_TRACE("s=" + std::to_string(s));
      const uint64_t n = 1000;
      ZipfGenerator zipf(n, s, seed);
      std::vector<uint64_t> counts(n + 1, 0);
      const int draws = 200000;
      for (int i = 0; i < draws; i++) {
        const uint64_t k = zipf.Next();
        ASSERT_GE(k, 1u);
        ASSERT_LE(k, n);
        counts[k]++;
      }
      // P(1) = 1 / H(n, s); compare the observed share of rank 1 and the
      // ratio of ranks 1 and 4 (4^s) with theory, loosely.
      double harmonic = 0;
      for (uint64_t k = 1; k <= n; k++) harmonic += std::pow(k, -s);
      EXPECT_NEAR(1.0 / harmonic, counts[1] / double(draws), 0.01);
      EXPECT_NEAR(std::pow(4.0, s), counts[1] / double(counts[4]),
                  0.15 * std::pow(4.0, s));
      EXPECT_GT(counts[n / 2] + counts[n / 2 + 1] + counts[n], 0u);
    }
  }
  ZipfGenerator one(1, 0.99, 7);
  for (int i = 0; i < 100; i++) EXPECT_EQ(1u, one.Next());
}

}  // namespace
}  // namespace bloomkv::bench
