// Tests of the binary fuse core (util/binary_fuse.h) and its segment filter
// policies: no false negatives, the false-positive rate and size the paper
// promises, empty / one-key / duplicate inputs, the give-up path, a pinned
// encoding, and a decoder that answers "may match" for anything it cannot
// parse.
#include "util/binary_fuse.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bloomkv/filter_policy.h"
#include "util/hash.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

namespace bf = binary_fuse;

constexpr uint64_t kSeeds[] = {1, 2, 3, 42, 20261201};

std::vector<uint64_t> RandomHashes(uint64_t seed, size_t n) {
  Random rnd(seed);
  std::vector<uint64_t> v(n);
  for (auto& h : v) h = rnd.Next64();
  return v;
}

std::string Build(const std::vector<uint64_t>& hashes, int bits,
                  bf::BuildStats* stats = nullptr) {
  std::string f;
  bf::Build(hashes.data(), hashes.size(), bits, &f, stats);
  return f;
}

bf::FilterView View(const std::string& filter) {
  bf::FilterView v;
  std::string why;
  EXPECT_TRUE(bf::Parse(filter, 0, &v, &why)) << why;
  return v;
}

TEST(BinaryFuseLayoutTest, FollowsThePaper) {
  EXPECT_EQ(bf::LayoutFor(0).array_length(), 0u);
  const bf::Layout one = bf::LayoutFor(1);
  EXPECT_EQ(one.segment_length_log2, 2);
  EXPECT_EQ(one.segment_count, 1u);
  EXPECT_EQ(one.array_length(), 12u);
  // 2^floor(ln(10^6)/ln(3.33) + 2.25) = 2^13; 1.125 * 10^6 slots.
  const bf::Layout million = bf::LayoutFor(1000000);
  EXPECT_EQ(million.segment_length_log2, 13);
  EXPECT_GE(million.array_length(), 1125000u);
  EXPECT_LT(million.array_length(), 1125000u + 3 * 8192);
  // Capped at 2^18.
  EXPECT_EQ(bf::LayoutFor(uint64_t{1} << 30).segment_length_log2, 18);
  // Growth for retries enlarges the array.
  EXPECT_GT(bf::LayoutFor(1000000, 0.1).array_length(),
            million.array_length() * 1.09);
}

// The property the decoder's bounds rest on: for any m, the three slots lie
// in three consecutive segments inside the array.
TEST(BinaryFuseLayoutTest, SlotsAreInConsecutiveSegmentsInsideTheArray) {
  Random rnd(21);
  for (int iter = 0; iter < 200000; iter++) {
    bf::Layout layout;
    layout.segment_length_log2 =
        static_cast<int>(rnd.Uniform(bf::kMaxSegmentLengthLog2 + 1));
    layout.segment_count = iter % 2 == 0
                               ? static_cast<uint32_t>(1 + rnd.Uniform(1000))
                               : static_cast<uint32_t>(rnd.Next32() | 1);
    const uint64_t m = iter % 100 == 0 ? ~uint64_t{0} : rnd.Next64();
    const bf::Slots slots = bf::SlotsFor(
        m, uint64_t{layout.segment_count} << layout.segment_length_log2,
        layout.segment_length_log2);
    const uint64_t segment = slots.s[0] >> layout.segment_length_log2;
    ASSERT_LT(segment, layout.segment_count);
    for (int j = 0; j < 3; j++) {
      ASSERT_LT(slots.s[j], layout.array_length());
      ASSERT_EQ(slots.s[j] >> layout.segment_length_log2, segment + j);
    }
  }
}

TEST(BinaryFuseTest, NoFalseNegatives) {
  const size_t kSizes[] = {1, 2, 3, 5, 10, 31, 100, 1000, 10000, 200000};
  for (uint64_t seed : kSeeds) {
    for (size_t n : kSizes) {
      for (int bits : {8, 16}) {
        SCOPED_TRACE("seed=" + std::to_string(seed) + " n=" +
                     std::to_string(n) + " bits=" + std::to_string(bits));
        const auto keys = RandomHashes(seed * 1000003 + n, n);
        bf::BuildStats stats;
        const std::string f = Build(keys, bits, &stats);
        ASSERT_FALSE(stats.gave_up);
        EXPECT_EQ(stats.distinct_keys, n);
        const bf::FilterView v = View(f);
        uint64_t misses = 0;
        for (uint64_t h : keys) misses += !bf::MayContain(v, h);
        ASSERT_EQ(misses, 0u);
      }
    }
  }
}

// Every size from 1 to 400 keys, many key sets each: small filters are the
// ones most likely to need another seed, and each must still be built.
TEST(BinaryFuseTest, EverySmallSizeBuildsWithoutGivingUp) {
  int retried = 0;
  for (size_t n = 1; n <= 400; n++) {
    for (uint64_t seed = 0; seed < 25; seed++) {
      const auto keys = RandomHashes(seed * 7919 + n, n);
      bf::BuildStats stats;
      const std::string f = Build(keys, 8, &stats);
      ASSERT_FALSE(stats.gave_up) << "n=" << n << " seed=" << seed;
      retried += stats.attempts > 1;
      const bf::FilterView v = View(f);
      for (uint64_t h : keys) {
        ASSERT_TRUE(bf::MayContain(v, h)) << "n=" << n << " seed=" << seed;
      }
    }
  }
  std::printf("builds that needed more than one seed: %d of 10000\n", retried);
}

TEST(BinaryFuseTest, EmptyFilterMatchesNothing) {
  for (int bits : {8, 16}) {
    const std::string f = Build({}, bits);
    EXPECT_EQ(f.size(), bf::kHeaderSize);
    const bf::FilterView v = View(f);
    EXPECT_TRUE(v.empty);
    for (uint64_t h : RandomHashes(5, 1000)) EXPECT_FALSE(bf::MayContain(v, h));
  }
}

TEST(BinaryFuseTest, OneKey) {
  for (int bits : {8, 16}) {
    const std::string f = Build({0x0123456789ABCDEFull}, bits);
    EXPECT_EQ(f.size(), bf::kHeaderSize + 12 * (bits / 8));
    EXPECT_TRUE(bf::MayContain(View(f), 0x0123456789ABCDEFull));
  }
}

TEST(BinaryFuseTest, DuplicatesAreRemovedBeforeConstruction) {
  for (uint64_t seed : kSeeds) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const auto distinct = RandomHashes(seed, 5000);
    // Every hash 20 times, shuffled: the filter is the one for the distinct
    // hashes, byte for byte.
    std::vector<uint64_t> repeated;
    for (int r = 0; r < 20; r++) {
      repeated.insert(repeated.end(), distinct.begin(), distinct.end());
    }
    std::shuffle(repeated.begin(), repeated.end(), std::mt19937_64(seed));
    bf::BuildStats stats;
    EXPECT_EQ(Build(repeated, 8, &stats), Build(distinct, 8));
    EXPECT_EQ(stats.distinct_keys, 5000u);
    EXPECT_FALSE(stats.gave_up);
  }
}

TEST(BinaryFuseTest, AdversarialInputs) {
  // A million copies of one hash.
  std::vector<uint64_t> same(1000000, 42);
  bf::BuildStats stats;
  std::string f = Build(same, 8, &stats);
  EXPECT_EQ(stats.distinct_keys, 1u);
  EXPECT_TRUE(bf::MayContain(View(f), 42));
  // Hashes that differ only in their low bits, or only in their high bits,
  // or are consecutive: the remix must still spread them.
  std::vector<uint64_t> low, high, consecutive;
  for (uint64_t i = 0; i < 4096; i++) {
    low.push_back(0xDEADBEEF00000000ull | i);
    high.push_back(i << 52);
    consecutive.push_back(i);
  }
  for (const auto* keys : {&low, &high, &consecutive}) {
    f = Build(*keys, 8, &stats);
    ASSERT_FALSE(stats.gave_up);
    const bf::FilterView v = View(f);
    for (uint64_t h : *keys) ASSERT_TRUE(bf::MayContain(v, h));
  }
}

TEST(BinaryFuseTest, GivingUpWritesAFilterThatMatchesEverything) {
  const auto keys = RandomHashes(9, 1000);
  std::string f;
  bf::BuildStats stats;
  bf::Build(keys.data(), keys.size(), 8, &f, &stats, /*max_attempts=*/0);
  EXPECT_TRUE(stats.gave_up);
  EXPECT_EQ(f.size(), bf::kHeaderSize);
  const bf::FilterView v = View(f);
  EXPECT_TRUE(v.match_all);
  for (uint64_t h : RandomHashes(10, 1000)) EXPECT_TRUE(bf::MayContain(v, h));
  const auto policy = NewBinaryFuseFilterPolicy(8);
  EXPECT_EQ(policy->TheoreticalFpRate(f, 1000), 1.0);
}

TEST(BinaryFuseTest, BuildMemoryIsBoundedPerKey) {
  for (size_t n : {1000, 100000, 1000000}) {
    bf::BuildStats stats;
    Build(RandomHashes(n, n), 8, &stats);
    const double per_key =
        static_cast<double>(stats.peak_temp_bytes) / static_cast<double>(n);
    EXPECT_LT(per_key, n < 10000 ? 60 : 32) << "n=" << n;
  }
}

// Measured false-positive rate against 2^-bits, over absent hashes.
double MeasuredFpRate(const std::string& f, uint64_t probes, uint64_t seed) {
  const bf::FilterView v = View(f);
  Random rnd(seed);
  uint64_t positives = 0;
  for (uint64_t i = 0; i < probes; i++)
    positives += bf::MayContain(v, rnd.Next64());
  return static_cast<double>(positives) / static_cast<double>(probes);
}

TEST(BinaryFuseTest, FalsePositiveRateIsTwoToTheMinusBits) {
  const auto keys = RandomHashes(77, 1000000);
  // 4M probes at 2^-8: about 15,600 positives, one standard deviation 0.8%.
  const double fp8 = MeasuredFpRate(Build(keys, 8), 4000000, 78);
  EXPECT_NEAR(fp8, 1.0 / 256, 0.05 / 256) << fp8;
  // 10M probes at 2^-16: about 153 positives, one standard deviation 8%.
  const double fp16 = MeasuredFpRate(Build(keys, 16), 10000000, 79);
  EXPECT_NEAR(fp16, 1.0 / 65536, 0.35 / 65536) << fp16;
}

TEST(BinaryFuseTest, SizeIsNearTheBound) {
  const auto keys = RandomHashes(80, 1000000);
  const double bpk8 = 8.0 * static_cast<double>(Build(keys, 8).size()) / 1e6;
  const double bpk16 = 8.0 * static_cast<double>(Build(keys, 16).size()) / 1e6;
  EXPECT_LT(bpk8, 9.1);    // bound: 8 bits at 2^-8
  EXPECT_LT(bpk16, 18.2);  // bound: 16 bits at 2^-16
  const auto policy = NewBinaryFuseFilterPolicy(8);
  EXPECT_NEAR(policy->BitsPerKey(), bpk8, 0.1);
}

// The bytes of one filter, pinned: a changed mixer, slot or fingerprint
// derivation, seed sequence or layout breaks every stored filter.
TEST(BinaryFuseTest, EncodingIsStable) {
  std::vector<uint64_t> keys;
  for (uint64_t i = 0; i < 1000; i++)
    keys.push_back(KeyHash("key" + std::to_string(i)));
  const std::string f8 = Build(keys, 8), f16 = Build(keys, 16);
  EXPECT_EQ(f8.size(), 16u + 1408u);
  EXPECT_EQ(f16.size(), 16u + 2 * 1408u);
  EXPECT_EQ(BlockChecksum(f8.data(), f8.size()), 326454311u);
  EXPECT_EQ(BlockChecksum(f16.data(), f16.size()), 197950187u);
}

TEST(BinaryFuseTest, WorkedExampleOfTheDocs) {
  const std::string f = Build({0x0123456789ABCDEFull}, 8);
  std::string hex;
  char buf[4];
  for (unsigned char c : f) {
    std::snprintf(buf, sizeof(buf), "%02X ", c);
    hex += buf;
  }
  EXPECT_EQ(hex,
            "01 08 02 00 01 00 00 00 76 6B 65 62 6C 6F 6F 72 "
            "00 00 1D 00 00 00 00 00 00 00 00 00 ");
}

TEST(BinaryFusePolicyTest, NamesAndRates) {
  const auto p8 = NewBinaryFuseFilterPolicy(8);
  const auto p16 = NewBinaryFuseFilterPolicy(16);
  EXPECT_STREQ(p8->Name(), "bloomkv.BinaryFuse8");
  EXPECT_STREQ(p16->Name(), "bloomkv.BinaryFuse16");
  EXPECT_STREQ(NewBinaryFuseFilterPolicy(12)->Name(), "bloomkv.BinaryFuse8");
  EXPECT_STREQ(NewBinaryFuseFilterPolicy(13)->Name(), "bloomkv.BinaryFuse16");
  EXPECT_EQ(p8->BitsPerKey(), 9.0);
  EXPECT_EQ(p16->BitsPerKey(), 18.0);
  EXPECT_EQ(p8->Resized(12), nullptr);
  const auto keys = RandomHashes(3, 100);
  std::string f8, f16, empty;
  p8->CreateFilter(keys.data(), keys.size(), &f8);
  p16->CreateFilter(keys.data(), keys.size(), &f16);
  p8->CreateFilter(nullptr, 0, &empty);
  EXPECT_EQ(p8->TheoreticalFpRate(f8, 100), 1.0 / 256);
  EXPECT_EQ(p16->TheoreticalFpRate(f16, 100), 1.0 / 65536);
  EXPECT_EQ(p8->TheoreticalFpRate(empty, 0), 0.0);
  EXPECT_FALSE(p8->KeyMayMatch(keys[0], empty));
  for (uint64_t h : keys) {
    EXPECT_TRUE(p8->KeyMayMatch(h, f8));
    EXPECT_TRUE(p16->KeyMayMatch(h, f16));
    p8->Prefetch(h, f8);  // a hint only
  }
  // A filter of the other width is not interpreted: "may match".
  const auto absent = RandomHashes(4, 1000);
  for (uint64_t h : absent) {
    EXPECT_TRUE(p8->KeyMayMatch(h, f16));
    EXPECT_TRUE(p16->KeyMayMatch(h, f8));
  }
  EXPECT_EQ(p8->TheoreticalFpRate(f16, 100), 1.0);
}

TEST(BinaryFusePolicyTest, AppendsToWhatIsThere) {
  const auto p = NewBinaryFuseFilterPolicy(8);
  const auto keys = RandomHashes(6, 50);
  std::string dst = "prefix", alone;
  p->CreateFilter(keys.data(), keys.size(), &dst);
  p->CreateFilter(keys.data(), keys.size(), &alone);
  EXPECT_EQ(dst, "prefix" + alone);
}

// Damaged filters: the policy never crashes, and answers "may match" for
// every key unless the damage leaves a parseable filter (a changed seed or
// fingerprint), which then answers whatever it answers.
TEST(BinaryFusePolicyTest, DamagedFiltersMayMatchAndNeverCrash) {
  const auto p = NewBinaryFuseFilterPolicy(8);
  const auto keys = RandomHashes(11, 200);
  const auto probes = RandomHashes(12, 64);
  std::string f;
  p->CreateFilter(keys.data(), keys.size(), &f);
  // Every truncation and every extension changes the size the header
  // implies.
  for (size_t len = 0; len < f.size(); len++) {
    const Slice cut(f.data(), len);
    for (uint64_t h : probes) ASSERT_TRUE(p->KeyMayMatch(h, cut)) << len;
    ASSERT_EQ(p->TheoreticalFpRate(cut, 200), 1.0);
  }
  ASSERT_TRUE(p->KeyMayMatch(probes[0], f + "x"));
  // Every bit flip: in the version, width, segment length, flags or
  // segment count the filter is unparseable; elsewhere it must not crash.
  for (size_t i = 0; i < f.size(); i++) {
    for (int bit = 0; bit < 8; bit++) {
      std::string d = f;
      d[i] = static_cast<char>(d[i] ^ (1 << bit));
      for (uint64_t h : probes) {
        const bool match = p->KeyMayMatch(h, d);
        if (i < bf::kSeedOffset) {
          ASSERT_TRUE(match) << "byte " << i << " bit " << bit;
        }
      }
      p->Prefetch(probes[0], d);
    }
  }
  // Random bytes of every length up to 300.
  Random rnd(13);
  for (int iter = 0; iter < 20000; iter++) {
    std::string d(rnd.Uniform(300), '\0');
    for (char& c : d) c = static_cast<char>(rnd.Next32());
    if (iter % 2 == 0 && d.size() >= 4) {
      d[0] = 1;
      d[1] = 8;
    }
    for (uint64_t h : probes) p->KeyMayMatch(h, d);
  }
  // Consistent headers over random fingerprints and seeds: parseable, so
  // every probe computes slots, which must stay inside the filter.
  for (int iter = 0; iter < 2000; iter++) {
    const int log2 =
        static_cast<int>(rnd.Uniform(bf::kMaxSegmentLengthLog2 - 8));
    const auto segments = static_cast<uint32_t>(1 + rnd.Uniform(4));
    std::string d(bf::kHeaderSize + ((segments + 2) << log2), '\0');
    for (char& c : d) c = static_cast<char>(rnd.Next32());
    d[bf::kVersionOffset] = 1;
    d[bf::kFingerprintBitsOffset] = 8;
    d[bf::kSegmentLengthLog2Offset] = static_cast<char>(log2);
    d[bf::kFlagsOffset] = 0;
    std::memcpy(&d[bf::kSegmentCountOffset], &segments, 4);
    bf::FilterView v;
    ASSERT_TRUE(bf::Parse(d, 8, &v, nullptr));
    for (int i = 0; i < 64; i++) p->KeyMayMatch(rnd.Next64(), d);
  }
}

}  // namespace
}  // namespace bloomkv
