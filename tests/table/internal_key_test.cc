// Internal keys: CompareInternalKeys orders keys by user key (bytewise,
// unsigned), then by trailer descending, for every user key length,
// including the short keys it compares without memcmp; UserKeyPrefix is the
// first eight bytes for every length.
#include "table/internal_key.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

int Sign(int v) { return (v > 0) - (v < 0); }

// The definition, spelled out: user keys bytewise, then trailer descending.
int ReferenceCompare(const Slice& a, const Slice& b) {
  const int r = ExtractUserKey(a).compare(ExtractUserKey(b));
  if (r != 0) return Sign(r);
  const uint64_t ta = DecodeFixed64(a.data() + a.size() - 8);
  const uint64_t tb = DecodeFixed64(b.data() + b.size() - 8);
  return ta > tb ? -1 : ta < tb ? +1 : 0;
}

std::string Key(const std::string& user_key, uint64_t trailer) {
  std::string k = user_key;
  PutFixed64(&k, trailer);
  return k;
}

TEST(InternalKeyTest, CompareMatchesTheDefinitionForEveryLength) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    for (int i = 0; i < 20000; i++) {
      // Lengths 0..12 cover the short-key path and both sides of it; a
      // small alphabet including 0x00, 0x7f, 0x80 and 0xff makes common
      // prefixes, and the bytes whose signedness matters, frequent.
      static const char kBytes[] = {'\x00', 'a', 'b', '\x7f', '\x80', '\xff'};
      auto user_key = [&] {
        std::string k(rnd.Uniform(13), '\0');
        for (char& c : k) c = kBytes[rnd.Uniform(sizeof(kBytes))];
        return k;
      };
      std::string ua = user_key();
      std::string ub = rnd.Uniform(4) == 0 ? ua : user_key();
      if (rnd.Uniform(4) == 0 && !ua.empty()) {
        ub = ua.substr(0, rnd.Uniform(static_cast<uint32_t>(ua.size())));
      }
      const uint64_t ta = rnd.Uniform(4), tb = rnd.Uniform(4);
      const std::string a = Key(ua, ta), b = Key(ub, tb);
      ASSERT_EQ(ReferenceCompare(a, b), Sign(CompareInternalKeys(a, b)))
          << "user keys of " << ua.size() << " and " << ub.size()
          << " bytes, trailers " << ta << " and " << tb;
    }
  }
}

// UserKeyPrefix: the first eight bytes, big-endian, zero-padded, for every
// length and byte value; and it never orders two keys against their order.
TEST(InternalKeyTest, UserKeyPrefixIsTheFirstEightBytesBigEndian) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    for (int i = 0; i < 20000; i++) {
      std::string k(rnd.Uniform(13), '\0');
      for (char& c : k) c = static_cast<char>(rnd.Uniform(256));
      uint64_t want = 0;
      for (size_t j = 0; j < 8; j++) {
        want = want << 8 |
               (j < k.size() ? static_cast<unsigned char>(k[j]) : 0u);
      }
      ASSERT_EQ(want, UserKeyPrefix(k)) << k.size() << " bytes";
      const std::string shorter = k.substr(0, rnd.Uniform(13));
      const auto [lo, hi] = std::minmax(k, shorter);
      ASSERT_LE(UserKeyPrefix(lo), UserKeyPrefix(hi));
    }
  }
}

TEST(InternalKeyTest, CompareOrdersShortKeys) {
  EXPECT_LT(CompareInternalKeys(Key("", 1), Key("a", 1)), 0);
  EXPECT_LT(CompareInternalKeys(Key("aZ3kQ9", 1), Key("aZ3kQ9x", 1)), 0);
  EXPECT_LT(CompareInternalKeys(Key("aZ3kQ9x", 1), Key("aZ3kQ9y", 1)), 0);
  EXPECT_LT(CompareInternalKeys(Key("a\x7f", 1), Key("a\x80", 1)), 0);
  EXPECT_LT(CompareInternalKeys(Key("abcdefgh", 1), Key("abcdefghi", 1)), 0);
  // Equal user keys: the newer (larger trailer) first.
  EXPECT_LT(CompareInternalKeys(Key("aZ3kQ9x", 9), Key("aZ3kQ9x", 2)), 0);
  EXPECT_EQ(0, CompareInternalKeys(Key("aZ3kQ9x", 9), Key("aZ3kQ9x", 9)));
}

}  // namespace
}  // namespace bloomkv
