// Tests for PrefixIndex: EqualRange answers exactly what std::equal_range
// over the same sorted integers does, whatever their spread (short codes,
// bunched, equal runs, the ends of the 64-bit range) and for every probe
// (each entry, its neighbours, random values), and the entries it tells a
// caller it is about to search hold that answer.
#include "util/prefix_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/testutil/test_util.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// Big-endian eight bytes of a random base62 short code of 7 characters.
uint64_t ShortCodePrefix(std::mt19937_64* rng) {
  static constexpr char kAlphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  uint64_t x = 0;
  for (int i = 0; i < 7; i++) x = x << 8 | uint8_t(kAlphabet[(*rng)() % 62]);
  return x << 8;
}

void ExpectSameAsEqualRange(const std::vector<uint64_t>& sorted,
                            std::mt19937_64* rng) {
  const PrefixIndex index(sorted);
  ASSERT_EQ(index.size(), sorted.size());
  std::vector<uint64_t> probes = {0, 1, UINT64_MAX, UINT64_MAX - 1};
  for (uint64_t x : sorted) {
    probes.push_back(x);
    probes.push_back(x - 1);
    probes.push_back(x + 1);
  }
  for (int i = 0; i < 1000; i++) probes.push_back((*rng)());
  for (uint64_t want : probes) {
    const auto [lo, hi] = std::equal_range(sorted.begin(), sorted.end(), want);
    const auto got = index.EqualRange(want);
    ASSERT_EQ(got.first, static_cast<size_t>(lo - sorted.begin())) << want;
    ASSERT_EQ(got.second, static_cast<size_t>(hi - sorted.begin())) << want;
    // The entries it says it searches hold the answer (a caller fetches
    // what it keeps beside exactly those).
    int calls = 0;
    size_t begin = 0, end = 0;
    const auto told = index.EqualRange(want, [&](size_t b, size_t e) {
      calls++;
      begin = b;
      end = e;
    });
    ASSERT_EQ(told, got) << want;
    if (calls == 0) continue;  // answered from the table alone
    ASSERT_EQ(calls, 1) << want;
    ASSERT_LE(begin, got.first) << want;
    ASSERT_LE(got.second, end) << want;
    ASSERT_LE(end, sorted.size()) << want;
  }
}

TEST(PrefixIndexTest, AnswersAsEqualRangeDoes) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    for (size_t n : {0, 1, 2, 31, 32, 33, 100, 1000, 4097}) {
      SCOPED_TRACE("n " + std::to_string(n));
      std::vector<std::vector<uint64_t>> cases(6);
      for (size_t i = 0; i < n; i++) {
        cases[0].push_back(ShortCodePrefix(&rng));  // the link shortener's
        cases[1].push_back(rng());                  // uniform
        cases[2].push_back(rng() % 8);              // long runs of equals
        // Bunched: most in a narrow range, a few at the far ends.
        cases[3].push_back(i % 50 == 0 ? rng() : (1ull << 40) + rng() % 5000);
        cases[4].push_back(i % 2 == 0 ? 0 : UINT64_MAX);  // the extremes
        cases[5].push_back(uint64_t{i} << 20);            // evenly spaced
      }
      for (std::vector<uint64_t>& c : cases) {
        std::sort(c.begin(), c.end());
        ExpectSameAsEqualRange(c, &rng);
      }
    }
  }
}

// The table is small beside the entries it indexes: a 4-byte start per
// eight entries, plus one.
TEST(PrefixIndexTest, TableCostsHalfAByteAnEntry) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> v(10000);
  for (uint64_t& x : v) x = ShortCodePrefix(&rng);
  std::sort(v.begin(), v.end());
  const PrefixIndex index(v);
  EXPECT_LE(index.MemoryUsage(), v.size() * 8 + v.size() / 2 + 4);
}

}  // namespace BLOOMKV_FILE_NAMESPACE
}  // namespace bloomkv
