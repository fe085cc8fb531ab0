// Tests of the standalone bloomkv::StaticFilter: no false negatives from key
// Slices, the false-positive rate, empty / duplicate inputs, copy and move,
// and the serialization's resistance to corrupt and truncated input.
#include "bloomkv/static_filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "util/coding.h"
#include "util/hash.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

constexpr uint64_t kSeeds[] = {1, 2, 3, 42, 20261201};

std::vector<std::string> Keys(const char* prefix, uint64_t seed, size_t n) {
  Random rnd(seed);
  std::vector<std::string> keys(n);
  for (auto& k : keys) k = prefix + std::to_string(rnd.Next64());
  return keys;
}

StaticFilter BuildFrom(const std::vector<std::string>& keys, int bits = 8) {
  std::vector<Slice> slices(keys.begin(), keys.end());
  return StaticFilter::Build(slices.data(), slices.size(), bits);
}

std::string Serialized(const StaticFilter& f) {
  std::string s;
  f.Serialize(&s);
  return s;
}

TEST(StaticFilterTest, DefaultFilterContainsNothing) {
  StaticFilter f;
  EXPECT_FALSE(f.MightContain("a"));
  EXPECT_FALSE(f.MightContain(""));
  EXPECT_EQ(f.num_keys(), 0u);
  EXPECT_EQ(f.bytes(), 0u);
  EXPECT_EQ(f.bits_per_key(), 0.0);
  EXPECT_EQ(f.fp_rate(), 0.0);
  StaticFilter copy = BuildFrom({"x"});
  ASSERT_TRUE(StaticFilter::Deserialize(Serialized(f), &copy).ok());
  EXPECT_FALSE(copy.MightContain("x"));
  EXPECT_EQ(copy.num_keys(), 0u);
  // Built from no keys: the same.
  const StaticFilter none = StaticFilter::Build(nullptr, 0);
  EXPECT_FALSE(none.MightContain("a"));
  EXPECT_EQ(Serialized(none), Serialized(f));
}

TEST(StaticFilterTest, NoFalseNegatives) {
  const size_t kSizes[] = {1, 2, 7, 100, 5000, 100000};
  for (uint64_t seed : kSeeds) {
    for (size_t n : kSizes) {
      for (int bits : {8, 16}) {
        SCOPED_TRACE("seed=" + std::to_string(seed) + " n=" +
                     std::to_string(n) + " bits=" + std::to_string(bits));
        const auto keys = Keys("k", seed, n);
        const StaticFilter f = BuildFrom(keys, bits);
        EXPECT_EQ(f.num_keys(), n);
        EXPECT_EQ(f.fingerprint_bits(), bits);
        uint64_t misses = 0;
        for (const auto& k : keys) misses += !f.MightContain(k);
        ASSERT_EQ(misses, 0u);
        StaticFilter g;
        ASSERT_TRUE(StaticFilter::Deserialize(Serialized(f), &g).ok());
        for (const auto& k : keys) misses += !g.MightContain(k);
        ASSERT_EQ(misses, 0u);
      }
    }
  }
}

TEST(StaticFilterTest, FalsePositiveRateAndSize) {
  const auto keys = Keys("present-", 5, 1000000);
  for (int bits : {8, 16}) {
    SCOPED_TRACE("bits=" + std::to_string(bits));
    const StaticFilter f = BuildFrom(keys, bits);
    EXPECT_EQ(f.fp_rate(), std::ldexp(1.0, -bits));
    EXPECT_LT(f.bits_per_key(), 1.14 * bits);
    const uint64_t probes = bits == 8 ? 4000000 : 10000000;
    uint64_t positives = 0;
    for (uint64_t i = 0; i < probes; i++) {
      positives += f.MightContain("absent-" + std::to_string(i));
    }
    const double rate =
        static_cast<double>(positives) / static_cast<double>(probes);
    EXPECT_NEAR(rate, f.fp_rate(), (bits == 8 ? 0.05 : 0.35) * f.fp_rate())
        << rate;
  }
}

TEST(StaticFilterTest, DuplicatesCountOnce) {
  std::vector<std::string> keys;
  for (int r = 0; r < 50; r++) {
    for (int i = 0; i < 100; i++) keys.push_back("dup" + std::to_string(i));
  }
  const StaticFilter f = BuildFrom(keys);
  EXPECT_EQ(f.num_keys(), 100u);
  for (const auto& k : keys) ASSERT_TRUE(f.MightContain(k));
}

TEST(StaticFilterTest, HashesAndKeysAgree) {
  const auto keys = Keys("h", 8, 1000);
  std::vector<uint64_t> hashes;
  for (const auto& k : keys) hashes.push_back(KeyHash(k));
  const StaticFilter a = BuildFrom(keys);
  const StaticFilter b =
      StaticFilter::BuildFromHashes(hashes.data(), hashes.size());
  EXPECT_EQ(Serialized(a), Serialized(b));
  for (uint64_t h : hashes) EXPECT_TRUE(b.MightContainHash(h));
}

TEST(StaticFilterTest, CopyAndMove) {
  const auto keys = Keys("c", 9, 500);
  StaticFilter f = BuildFrom(keys);
  StaticFilter copy = f;
  StaticFilter moved = std::move(f);
  EXPECT_EQ(f.num_keys(), 0u);  // a moved-from filter is empty (specified)
  EXPECT_FALSE(f.MightContain(keys[0]));
  for (const auto& k : keys) {
    EXPECT_TRUE(copy.MightContain(k));
    EXPECT_TRUE(moved.MightContain(k));
  }
  EXPECT_EQ(Serialized(copy), Serialized(moved));
}

TEST(StaticFilterTest, SerializationLayout) {
  const StaticFilter f = BuildFrom({"only"});
  const std::string s = Serialized(f);
  // 28-byte header, 16-byte filter header, 12 fingerprints, checksum.
  ASSERT_EQ(s.size(), 28u + 16u + 12u + 4u);
  EXPECT_EQ(s.substr(0, 8), "BKVSTATF");
  EXPECT_EQ(s[8], 1);
  EXPECT_EQ(s[9], 8);
  EXPECT_EQ(DecodeFixed64(s.data() + 12), 1u);
  EXPECT_EQ(DecodeFixed64(s.data() + 20), 28u);
  EXPECT_EQ(DecodeFixed32(s.data() + s.size() - 4),
            BlockChecksum(s.data(), s.size() - 4));
}

void ExpectCorruption(const std::string& input, const std::string& what) {
  StaticFilter out = BuildFrom({"sentinel"});
  const Status s = StaticFilter::Deserialize(input, &out);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(what), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("static filter"), std::string::npos);
  EXPECT_TRUE(out.MightContain("sentinel"));
  EXPECT_EQ(out.num_keys(), 1u);
}

// Rewrites the checksum so that a deliberately damaged field is what
// Deserialize sees.
std::string Resealed(std::string s) {
  s.resize(s.size() - 4);
  PutFixed32(&s, BlockChecksum(s.data(), s.size()));
  return s;
}

TEST(StaticFilterTest, DamageIsReportedByName) {
  const std::string good = Serialized(BuildFrom(Keys("d", 10, 300)));
  ExpectCorruption(good.substr(0, 10), "truncated");
  ExpectCorruption("XKVSTATF" + good.substr(8), "bad magic");
  std::string v = good;
  v[8] = 2;
  ExpectCorruption(v, "unsupported format version 2");
  ExpectCorruption(good.substr(0, good.size() - 1), "size mismatch");
  ExpectCorruption(good + "x", "size mismatch");
  std::string c = good;
  c[40] ^= 1;
  ExpectCorruption(c, "checksum mismatch");
  std::string b = good;
  b[9] = 9;
  ExpectCorruption(Resealed(b), "invalid fingerprint bits 9");
  std::string r = good;
  r[10] = 1;
  ExpectCorruption(Resealed(r), "reserved bytes");
  // The inner filter's own header.
  std::string inner = good;
  inner[28 + 1] = 16;  // width disagrees with the outer header
  ExpectCorruption(Resealed(inner), "invalid filter (fingerprint bits 16");
  std::string inner_count = good;
  inner_count[28 + 4] ^= 1;  // segment count no longer fits the length
  ExpectCorruption(Resealed(inner_count), "invalid filter (size mismatch");
  std::string keys = good;
  EncodeFixed64(&keys[12], 0);
  ExpectCorruption(Resealed(keys), "key count 0");
  EncodeFixed64(&keys[12], 1u << 20);
  ExpectCorruption(Resealed(keys), "does not fit");
  std::string no_filter = Serialized(StaticFilter());
  EncodeFixed64(&no_filter[12], 5);
  ExpectCorruption(Resealed(no_filter), "5 keys but no filter");
}

TEST(StaticFilterTest, EveryTruncationAndBitFlipIsCorruption) {
  for (size_t n : {0, 1, 40}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const std::string good = Serialized(BuildFrom(Keys("t", n, n)));
    StaticFilter out = BuildFrom({"sentinel"});
    for (size_t len = 0; len < good.size(); len++) {
      ASSERT_TRUE(StaticFilter::Deserialize(Slice(good.data(), len), &out)
                      .IsCorruption())
          << len;
    }
    for (size_t i = 0; i < good.size(); i++) {
      for (int bit = 0; bit < 8; bit++) {
        std::string d = good;
        d[i] = static_cast<char>(d[i] ^ (1 << bit));
        ASSERT_TRUE(StaticFilter::Deserialize(d, &out).IsCorruption())
            << "byte " << i << " bit " << bit;
      }
    }
    ASSERT_TRUE(out.MightContain("sentinel"));
    ASSERT_EQ(out.num_keys(), 1u);
  }
}

}  // namespace
}  // namespace bloomkv
