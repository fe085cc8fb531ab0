// Tests for util/hash: KeyHash and BlockChecksum are on-disk definitions, so
// besides checking them against xxHash itself, known values are pinned: any
// change to what they compute must break this test.
#include "util/hash.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <string>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// Lengths around XXH3's internal size classes (1-3, 4-8, 9-16, 17-128,
// 129-240, then striped with 1 KiB blocks), where a streaming or one-shot
// implementation could diverge.
const std::vector<size_t>& InterestingLengths() {
  static const std::vector<size_t> lengths = {
      0,   1,   2,    3,    4,    5,    8,    9,    15,   16,
      17,  64,  127,  128,  129,  200,  239,  240,  241,  255,
      256, 512, 1023, 1024, 1025, 2047, 2048, 4096, 5000, 65536 + 7};
  return lengths;
}

TEST(HashTest, KeyHashIsXxh3Seed0) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    for (size_t len : InterestingLengths()) {
      const std::string key = test::RandomBytes(&rnd, len);
      EXPECT_EQ(XXH3_64bits(key.data(), key.size()), KeyHash(key)) << len;
    }
  }
}

TEST(HashTest, BlockChecksumIsLow32BitsOfXxh3) {
  Random rnd(7);
  for (size_t len : InterestingLengths()) {
    const std::string data = test::RandomBytes(&rnd, len);
    EXPECT_EQ(static_cast<uint32_t>(XXH3_64bits(data.data(), data.size())),
              BlockChecksum(data.data(), data.size()))
        << len;
  }
}

TEST(HashTest, KnownValuesArePinned) {
  // Never change: on disk. XXH3-64 reference values (the empty-input value
  // is the one published with xxHash).
  EXPECT_EQ(0x2d06800538d394c2ull, KeyHash(Slice()));
  EXPECT_EQ(0xe6c632b61e964e1full, KeyHash("a"));
  EXPECT_EQ(0x78af5f94892f3950ull, KeyHash("abc"));
  EXPECT_EQ(0x121cf26dff551751ull, KeyHash("bloomkv"));
  EXPECT_EQ(0xce7d19a5418fb365ull,
            KeyHash("The quick brown fox jumps over the lazy dog"));

  EXPECT_EQ(0x38d394c2u, BlockChecksum("", 0));
  EXPECT_EQ(0x892f3950u, BlockChecksum("abc", 3));
  std::string pattern(1000, '\0');
  for (size_t i = 0; i < pattern.size(); i++) {
    pattern[i] = static_cast<char>(i * 7 + 3);
  }
  EXPECT_EQ(0x97bd9e82u, BlockChecksum(pattern.data(), pattern.size()));
  EXPECT_EQ(0x6c4f14bd97bd9e82ull, KeyHash(pattern));
}

TEST(HashTest, BlockChecksum2EqualsChecksumOfConcatenation) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    for (size_t len : InterestingLengths()) {
      const std::string data = test::RandomBytes(&rnd, len);
      const uint32_t whole = BlockChecksum(data.data(), data.size());
      // Every split for short inputs; the edges and a few random splits for
      // long ones.
      std::vector<size_t> splits;
      if (len <= 300) {
        for (size_t i = 0; i <= len; i++) splits.push_back(i);
      } else {
        splits = {0, 1, len - 1, len, len - 5, 1024 % len};
        for (int i = 0; i < 8; i++) splits.push_back(rnd.Uniform(len + 1));
      }
      for (size_t at : splits) {
        EXPECT_EQ(whole,
                  BlockChecksum2(data.data(), at, data.data() + at, len - at))
            << "len=" << len << " split=" << at;
      }
    }
  }
}

TEST(HashTest, BlockChecksum2TrailerUseCase) {
  // The block layout checksums payload || type byte without concatenating.
  const std::string payload = "some block payload";
  const char type = 1;
  const std::string joined = payload + std::string(1, type);
  EXPECT_EQ(BlockChecksum(joined.data(), joined.size()),
            BlockChecksum2(payload.data(), payload.size(), &type, 1));
}

TEST(HashTest, ChecksumDetectsSingleBitFlips) {
  Random rnd(11);
  const std::string data = test::RandomBytes(&rnd, 4096);
  const uint32_t good = BlockChecksum(data.data(), data.size());
  for (size_t bit = 0; bit < data.size() * 8; bit += 97) {
    std::string bad = data;
    bad[bit / 8] = static_cast<char>(bad[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_NE(good, BlockChecksum(bad.data(), bad.size())) << bit;
  }
}

}  // namespace
}  // namespace bloomkv
