// Tests of the built-in blocked bloom FilterPolicy and of the shared core in
// util/blocked_bloom.h: no false negatives, false-positive rates against
// theory, sizing, the stored encoding, and robustness against bytes the
// policy did not write.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
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

std::vector<uint64_t> HashesOf(const std::string& prefix, uint64_t begin,
                               uint64_t end) {
  std::vector<uint64_t> hashes;
  hashes.reserve(end - begin);
  for (uint64_t i = begin; i < end; i++) {
    hashes.push_back(KeyHash(prefix + std::to_string(i)));
  }
  return hashes;
}

std::string Build(const FilterPolicy& policy,
                  const std::vector<uint64_t>& hashes) {
  std::string filter;
  policy.CreateFilter(hashes.data(), hashes.size(), &filter);
  return filter;
}

// Fraction of `probes` the filter answers true for.
double MeasuredFpRate(const FilterPolicy& policy, const Slice& filter,
                      const std::vector<uint64_t>& probes) {
  uint64_t positives = 0;
  for (uint64_t h : probes) positives += policy.KeyMayMatch(h, filter);
  return static_cast<double>(positives) / static_cast<double>(probes.size());
}

// Holds exactly `bytes` at an odd address in its own allocation, so that
// AddressSanitizer flags any read past either end and any code that assumes
// alignment is exercised.
class ExactBuffer {
 public:
  explicit ExactBuffer(const std::string& bytes)
      : storage_(new char[bytes.size() + 1]), size_(bytes.size()) {
    if (!bytes.empty()) std::memcpy(storage_.get() + 1, bytes.data(), size_);
  }
  Slice slice() const { return Slice(storage_.get() + 1, size_); }

 private:
  std::unique_ptr<char[]> storage_;
  size_t size_;
};

// Whether the last four bytes form a trailer this format could have written
// and the rest is whole lines: the specification the policy must follow.
bool LooksParseable(const std::string& f) {
  if (f.size() < 4) return false;
  const auto* t =
      reinterpret_cast<const unsigned char*>(f.data()) + f.size() - 4;
  return t[3] == 0xB1 && t[1] == 0 && t[2] == 0 && t[0] >= 1 &&
         t[0] <= bb::kMaxProbes && (f.size() - 4) % 64 == 0;
}

TEST(BloomPolicyTest, NameAndBitsPerKey) {
  EXPECT_STREQ(NewBloomFilterPolicy(10)->Name(), "bloomkv.BlockedBloom.v1");
  EXPECT_STREQ(NewBloomFilterPolicyForFpRate(0.01)->Name(),
               "bloomkv.BlockedBloom.v1");
  EXPECT_EQ(NewBloomFilterPolicy(10)->BitsPerKey(), 10.0);
  EXPECT_EQ(NewBloomFilterPolicy(7.25)->BitsPerKey(), 7.25);
  EXPECT_EQ(NewBloomFilterPolicy(0.2)->BitsPerKey(), 1.0);
  EXPECT_EQ(NewBloomFilterPolicy(-3)->BitsPerKey(), 1.0);
  EXPECT_EQ(NewBloomFilterPolicy(1e9)->BitsPerKey(), 100.0);
  EXPECT_EQ(NewBloomFilterPolicy(std::nan(""))->BitsPerKey(), 10.0);
  const double ln2sq = std::log(2.0) * std::log(2.0);
  EXPECT_NEAR(NewBloomFilterPolicyForFpRate(0.01)->BitsPerKey(),
              -std::log(0.01) / ln2sq, 1e-9);
  EXPECT_NEAR(NewBloomFilterPolicyForFpRate(0)->BitsPerKey(),
              -std::log(1e-6) / ln2sq, 1e-9);
  EXPECT_NEAR(NewBloomFilterPolicyForFpRate(0.9)->BitsPerKey(),
              -std::log(0.5) / ln2sq, 1e-9);
  EXPECT_NEAR(NewBloomFilterPolicyForFpRate(std::nan(""))->BitsPerKey(),
              -std::log(0.01) / ln2sq, 1e-9);
}

TEST(BloomPolicyTest, NoFalseNegatives) {
  const double kBitsPerKey[] = {1, 1.5, 2.5, 4, 6.7, 10, 13.3, 20, 23.9, 30};
  const uint64_t kSizes[] = {0, 1, 2, 7, 64, 1000, 100000};
  for (uint64_t seed : kSeeds) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    for (double bpk : kBitsPerKey) {
      SCOPED_TRACE("bits_per_key=" + std::to_string(bpk));
      auto policy = NewBloomFilterPolicy(bpk);
      for (uint64_t n : kSizes) {
        SCOPED_TRACE("n=" + std::to_string(n));
        std::vector<uint64_t> hashes(n);
        for (auto& h : hashes) h = rng();
        if (n > 2) hashes[n - 1] = hashes[0];  // Duplicates are allowed.
        const std::string filter = Build(*policy, hashes);
        uint64_t misses = 0;
        for (uint64_t h : hashes) misses += !policy->KeyMayMatch(h, filter);
        ASSERT_EQ(misses, 0u);
      }
    }
  }
}

TEST(BloomPolicyTest, EmptyFilterIsValidAndMatchesNothing) {
  auto policy = NewBloomFilterPolicy(10);
  const std::string filter = Build(*policy, {});
  EXPECT_EQ(filter.size(), 4u);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; i++) {
    ASSERT_FALSE(policy->KeyMayMatch(rng(), filter));
  }
  EXPECT_EQ(policy->TheoreticalFpRate(filter, 0), 0.0);
}

TEST(BloomPolicyTest, FpRateAt10BitsPerKeyMatchesTheory) {
  auto policy = NewBloomFilterPolicy(10);
  const std::string filter = Build(*policy, HashesOf("present-", 0, 1000000));
  const double measured =
      MeasuredFpRate(*policy, filter, HashesOf("absent-", 0, 1000000));
  const double theory = policy->TheoreticalFpRate(filter, 1000000);
  RecordProperty("measured_fp_rate", std::to_string(measured));
  RecordProperty("theoretical_fp_rate", std::to_string(theory));
  EXPECT_NEAR(measured, theory, 0.1 * theory);
  EXPECT_LE(measured, 0.010);
  EXPECT_GT(measured, 0.005);  // A filter that matches nothing fails here.
}

TEST(BloomPolicyTest, FpRateSizedPolicyComesCloseToTheTarget) {
  // The policy sizes by the classic m = -n ln p / (ln 2)^2 (its documented
  // contract), and the blocked layout pays a little for its locality: the
  // achieved rate is above p by a factor that theory predicts (1.02 at 10%,
  // 1.09 at 2%, 1.15 at 1%, 1.58 at 0.1%; docs/filters.md). "Close" here is
  // within that factor plus measurement noise.
  struct Case {
    double p;
    double max_ratio;
  };
  const Case kCases[] = {{0.1, 1.1}, {0.02, 1.2}, {0.01, 1.25}, {0.001, 1.8}};
  const std::vector<uint64_t> present = HashesOf("p-", 0, 200000);
  const std::vector<uint64_t> absent = HashesOf("a-", 0, 1000000);
  for (const Case& c : kCases) {
    SCOPED_TRACE("p=" + std::to_string(c.p));
    auto policy = NewBloomFilterPolicyForFpRate(c.p);
    const std::string filter = Build(*policy, present);
    const double measured = MeasuredFpRate(*policy, filter, absent);
    EXPECT_GE(measured, 0.9 * c.p);
    EXPECT_LE(measured, c.max_ratio * c.p);
    EXPECT_NEAR(measured, policy->TheoreticalFpRate(filter, present.size()),
                0.15 * measured);
  }
}

TEST(BloomPolicyTest, MemoryIsBitsPerKeyTimesKeysPlusSmallConstant) {
  const double kBitsPerKey[] = {1, 4.5, 10, 20.25, 100};
  const uint64_t kSizes[] = {1, 10, 1000, 12345, 100000};
  for (double bpk : kBitsPerKey) {
    auto policy = NewBloomFilterPolicy(bpk);
    for (uint64_t n : kSizes) {
      SCOPED_TRACE("bpk=" + std::to_string(bpk) + " n=" + std::to_string(n));
      const std::string filter = Build(*policy, HashesOf("m", 0, n));
      const double ideal = bpk * static_cast<double>(n) / 8;
      // At most one partly used line (64 bytes) plus the 4-byte trailer.
      EXPECT_LE(static_cast<double>(filter.size()), ideal + 64 + 4);
      EXPECT_GE(static_cast<double>(filter.size()), ideal + 4);
    }
  }
}

TEST(BloomPolicyTest, EncodingIsStable) {
  // Pins the on-disk layout: line choice, probe positions and trailer. If
  // this fails, the encoding changed and needs a new policy Name().
  auto policy = NewBloomFilterPolicy(10);
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < 100; i++)
    hashes.push_back(i * 0x9E3779B97F4A7C15ull);
  const std::string filter = Build(*policy, hashes);
  ASSERT_EQ(filter.size(), 2 * 64 + 4u);
  EXPECT_EQ(static_cast<unsigned char>(filter[128]), 6);  // probes
  EXPECT_EQ(filter[129], 0);
  EXPECT_EQ(filter[130], 0);
  EXPECT_EQ(static_cast<unsigned char>(filter[131]), 0xB1);
  EXPECT_EQ(BlockChecksum(filter.data(), filter.size()), 4250623864u)
      << "encoding checksum changed";
}

TEST(BloomPolicyTest, UnalignedFilterGivesTheSameAnswers) {
  auto policy = NewBloomFilterPolicy(10);
  const std::string filter = Build(*policy, HashesOf("u", 0, 5000));
  const ExactBuffer unaligned(filter);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20000; i++) {
    const uint64_t h = rng();
    ASSERT_EQ(policy->KeyMayMatch(h, filter),
              policy->KeyMayMatch(h, unaligned.slice()));
  }
}

TEST(BloomPolicyTest, UnparseableFiltersMatchEverything) {
  auto policy = NewBloomFilterPolicy(10);
  std::mt19937_64 rng(11);
  auto expect_all_true = [&](const std::string& bytes) {
    const ExactBuffer buf(bytes);
    for (int i = 0; i < 64; i++) {
      ASSERT_TRUE(policy->KeyMayMatch(rng(), buf.slice()));
    }
    EXPECT_EQ(policy->TheoreticalFpRate(buf.slice(), 100), 1.0);
  };
  expect_all_true("");
  expect_all_true(std::string(1, '\xB1'));
  expect_all_true(std::string("\x06\x00\xB1", 3));
  // Bad marker, non-zero reserved bytes, probe counts out of range.
  const std::string lines(128, '\0');
  expect_all_true(lines + std::string("\x06\x00\x00\xB2", 4));
  expect_all_true(lines + std::string("\x06\x01\x00\xB1", 4));
  expect_all_true(lines + std::string("\x06\x00\x01\xB1", 4));
  expect_all_true(lines + std::string("\x00\x00\x00\xB1", 4));
  expect_all_true(lines + std::string("\x19\x00\x00\xB1", 4));
  expect_all_true(lines + std::string("\xFF\x00\x00\xB1", 4));
  // Line data that is not a whole number of lines.
  expect_all_true(std::string(127, '\0') + std::string("\x06\x00\x00\xB1", 4));
  expect_all_true(std::string(65, '\0') + std::string("\x06\x00\x00\xB1", 4));
}

TEST(BloomPolicyTest, ParseableForeignBytesNeverCrash) {
  auto policy = NewBloomFilterPolicy(10);
  std::mt19937_64 rng(5);
  // Valid trailers in front of large line areas: all-zero lines match
  // nothing, all-one lines match everything; the reads stay inside.
  const std::string trailer("\x18\x00\x00\xB1", 4);
  const ExactBuffer zeros(std::string(1 << 20, '\0') + trailer);
  const ExactBuffer ones(std::string(1 << 20, '\xFF') + trailer);
  for (int i = 0; i < 10000; i++) {
    ASSERT_FALSE(policy->KeyMayMatch(rng(), zeros.slice()));
    ASSERT_TRUE(policy->KeyMayMatch(rng(), ones.slice()));
  }
  // Random garbage of random sizes, with and without a plausible trailer.
  for (int round = 0; round < 2000; round++) {
    SCOPED_TRACE("round=" + std::to_string(round));
    // Odd rounds: any size; even rounds: whole lines and a trailer with the
    // right marker but a random probe count.
    const size_t size = round % 2 ? rng() % 300 : 64 * (rng() % 5) + 4;
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    if (round % 2 == 0) {
      bytes[size - 3] = 0;
      bytes[size - 2] = 0;
      bytes[size - 1] = '\xB1';
    }
    const ExactBuffer buf(bytes);
    const bool parseable = LooksParseable(bytes);
    for (int i = 0; i < 16; i++) {
      const bool match = policy->KeyMayMatch(rng(), buf.slice());
      if (!parseable) {
        ASSERT_TRUE(match);
      }
    }
    const double fp = policy->TheoreticalFpRate(buf.slice(), rng() % 1000);
    ASSERT_GE(fp, 0.0);
    ASSERT_LE(fp, 1.0);
  }
}

TEST(BloomPolicyTest, TruncatedFiltersNeverGiveFalseNegatives) {
  auto policy = NewBloomFilterPolicy(10);
  const std::vector<uint64_t> hashes = HashesOf("t", 0, 200);
  const std::string filter = Build(*policy, hashes);
  for (size_t len = 0; len < filter.size(); len++) {
    SCOPED_TRACE("len=" + std::to_string(len));
    const std::string cut = filter.substr(0, len);
    const ExactBuffer buf(cut);
    if (LooksParseable(cut)) continue;  // Foreign bytes that happen to parse.
    for (uint64_t h : hashes) {
      policy->Prefetch(h, buf.slice());  // reads nothing out of bounds (ASan)
      ASSERT_TRUE(policy->KeyMayMatch(h, buf.slice()));
    }
  }
}

TEST(BlockedBloomTest, LineAndProbeStayInRange) {
  const uint64_t kHashes[] = {0,
                              1,
                              ~uint64_t{0},
                              uint64_t{1} << 63,
                              0xFFFFFFFF00000000ull,
                              0x00000000FFFFFFFFull};
  const uint64_t kLines[] = {
      1, 2, 3, 1000, 19532, bb::kMaxLines - 1, bb::kMaxLines};
  for (uint64_t lines : kLines) {
    for (uint64_t h : kHashes) {
      ASSERT_LT(bb::LineIndex(h, lines), lines);
      for (int i = 0; i < bb::kMaxProbes; i++) {
        ASSERT_LT(bb::ProbeBit(h, i), bb::kLineBits);
      }
    }
  }
  EXPECT_EQ(bb::LineIndex(~uint64_t{0}, bb::kMaxLines), bb::kMaxLines - 1);
}

TEST(BlockedBloomTest, LinesAreUsedEvenly) {
  // Any line count works, not just powers of two.
  const uint64_t kLines = 37;
  std::vector<uint64_t> counts(kLines);
  std::mt19937_64 rng(9);
  const int kDraws = 370000;
  for (int i = 0; i < kDraws; i++) counts[bb::LineIndex(rng(), kLines)]++;
  for (uint64_t c : counts) EXPECT_NEAR(c, kDraws / kLines, 400);
}

TEST(BlockedBloomTest, SizingClampsAndRoundsUp) {
  EXPECT_EQ(bb::NumLinesFor(0, 10), 0u);
  EXPECT_EQ(bb::NumLinesFor(1, 10), 1u);
  EXPECT_EQ(bb::NumLinesFor(512, 1), 1u);
  EXPECT_EQ(bb::NumLinesFor(513, 1), 2u);
  EXPECT_EQ(bb::NumLinesFor(1000000, 10), 19532u);
  EXPECT_EQ(bb::NumLinesFor(~uint64_t{0}, 100), bb::kMaxLines);
}

TEST(BlockedBloomTest, ProbeCountIsTheMeasuredOptimum) {
  EXPECT_EQ(bb::ChooseNumProbes(std::nan("")), 1);
  EXPECT_EQ(bb::ChooseNumProbes(1), 1);
  EXPECT_EQ(bb::ChooseNumProbes(10), 6);
  EXPECT_EQ(bb::ChooseNumProbes(16), 9);
  EXPECT_EQ(bb::ChooseNumProbes(20), 11);
  EXPECT_EQ(bb::ChooseNumProbes(100), 23);
  int prev = 1;
  for (double bpk = 1; bpk <= 100; bpk += 0.25) {
    const int k = bb::ChooseNumProbes(bpk);
    ASSERT_GE(k, prev) << "bpk=" << bpk;
    ASSERT_LE(k, bb::kMaxProbes);
    prev = k;
  }
  // The chosen k is no worse than its neighbours according to the theory the
  // measurements confirmed (1M keys, so line loads are Poisson).
  for (double bpk = 1; bpk <= 30; bpk += 1) {
    SCOPED_TRACE("bpk=" + std::to_string(bpk));
    const uint64_t lines = bb::NumLinesFor(1000000, bpk);
    const int k = bb::ChooseNumProbes(bpk);
    const double fp = bb::TheoreticalFpRate(lines, 1000000, k);
    if (k > 1) {
      EXPECT_LE(fp, bb::TheoreticalFpRate(lines, 1000000, k - 1));
    }
    EXPECT_LE(fp, bb::TheoreticalFpRate(lines, 1000000, k + 1));
  }
}

TEST(BlockedBloomTest, TheoryHandlesEdgeCases) {
  EXPECT_EQ(bb::TheoreticalFpRate(0, 100, 6), 0.0);
  EXPECT_EQ(bb::TheoreticalFpRate(100, 0, 6), 0.0);
  EXPECT_EQ(bb::TheoreticalFpRate(100, 100, 0), 1.0);
  EXPECT_EQ(bb::TheoreticalFpRate(100, 100, bb::kMaxProbes + 1), 1.0);
  // One line with one key and one probe: exactly 1 bit of 512 is set.
  EXPECT_NEAR(bb::TheoreticalFpRate(1, 1, 1), 1.0 / 512, 1e-12);
  // Hopelessly overfull: saturated.
  EXPECT_NEAR(bb::TheoreticalFpRate(10, 10000000, 6), 1.0, 1e-9);
  // More keys never lower the rate.
  double prev = 0;
  for (uint64_t n = 1000; n <= 64000; n *= 2) {
    const double fp = bb::TheoreticalFpRate(200, n, 6);
    EXPECT_GT(fp, prev);
    prev = fp;
  }
}

}  // namespace
}  // namespace bloomkv
