// Tests for util/coding: every encoding round-trips, and every malformed or
// truncated input is rejected without reading past its end.
#include "util/coding.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// Values around every 7-bit boundary, where varint lengths change.
std::vector<uint64_t> Varint64Boundaries() {
  std::vector<uint64_t> v = {0, 1, std::numeric_limits<uint64_t>::max()};
  for (int bits = 1; bits < 64; bits++) {
    const uint64_t p = uint64_t{1} << bits;
    v.push_back(p - 1);
    v.push_back(p);
    v.push_back(p + 1);
  }
  return v;
}

std::vector<uint32_t> Varint32Boundaries() {
  std::vector<uint32_t> v;
  for (uint64_t x : Varint64Boundaries()) {
    if (x <= std::numeric_limits<uint32_t>::max()) {
      v.push_back(static_cast<uint32_t>(x));
    }
  }
  v.push_back(std::numeric_limits<uint32_t>::max());
  return v;
}

// A heap copy of s with nothing readable after it, so that ASan catches a
// decoder that reads one byte too far.
std::unique_ptr<char[]> ExactCopy(const std::string& s) {
  auto p = std::make_unique<char[]>(s.size() == 0 ? 1 : s.size());
  if (!s.empty()) std::memcpy(p.get(), s.data(), s.size());
  return p;
}

TEST(CodingTest, Fixed16RoundTripAndLayout) {
  for (uint32_t v = 0; v <= 0xffff; v += 0x0101) {
    char buf[2];
    EncodeFixed16(buf, static_cast<uint16_t>(v));
    EXPECT_EQ(v, DecodeFixed16(buf));
  }
  char buf[2];
  EncodeFixed16(buf, 0x1234);
  EXPECT_EQ(0x34, static_cast<unsigned char>(buf[0]));  // little-endian
  EXPECT_EQ(0x12, static_cast<unsigned char>(buf[1]));
}

TEST(CodingTest, Fixed32) {
  std::string s;
  for (uint32_t v : Varint32Boundaries()) PutFixed32(&s, v);
  Slice in(s);
  for (uint32_t v : Varint32Boundaries()) {
    uint32_t got;
    ASSERT_TRUE(GetFixed32(&in, &got));
    EXPECT_EQ(v, got);
  }
  EXPECT_TRUE(in.empty());

  std::string one;
  PutFixed32(&one, 0x04030201);
  EXPECT_EQ(std::string("\x01\x02\x03\x04", 4), one);  // little-endian
}

TEST(CodingTest, Fixed64) {
  std::string s;
  for (uint64_t v : Varint64Boundaries()) PutFixed64(&s, v);
  Slice in(s);
  for (uint64_t v : Varint64Boundaries()) {
    uint64_t got;
    ASSERT_TRUE(GetFixed64(&in, &got));
    EXPECT_EQ(v, got);
  }
  EXPECT_TRUE(in.empty());

  std::string one;
  PutFixed64(&one, 0x0807060504030201ull);
  EXPECT_EQ(std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8), one);
}

TEST(CodingTest, FixedTruncatedIsRejected) {
  std::string s;
  PutFixed64(&s, 42);
  for (size_t n = 0; n < 8; n++) {
    Slice in(s.data(), n);
    uint64_t v64;
    EXPECT_FALSE(GetFixed64(&in, &v64)) << n;
    EXPECT_EQ(n, in.size());
    if (n < 4) {
      uint32_t v32;
      EXPECT_FALSE(GetFixed32(&in, &v32)) << n;
      EXPECT_EQ(n, in.size());
    }
  }
}

TEST(CodingTest, Varint32RoundTrip) {
  std::string s;
  const std::vector<uint32_t> values = Varint32Boundaries();
  for (uint32_t v : values) PutVarint32(&s, v);
  Slice in(s);
  for (uint32_t v : values) {
    const size_t before = in.size();
    uint32_t got;
    ASSERT_TRUE(GetVarint32(&in, &got)) << v;
    EXPECT_EQ(v, got);
    EXPECT_EQ(static_cast<size_t>(VarintLength(v)), before - in.size()) << v;
  }
  EXPECT_TRUE(in.empty());
}

TEST(CodingTest, Varint64RoundTrip) {
  std::string s;
  const std::vector<uint64_t> values = Varint64Boundaries();
  for (uint64_t v : values) PutVarint64(&s, v);
  Slice in(s);
  for (uint64_t v : values) {
    const size_t before = in.size();
    uint64_t got;
    ASSERT_TRUE(GetVarint64(&in, &got)) << v;
    EXPECT_EQ(v, got);
    EXPECT_EQ(static_cast<size_t>(VarintLength(v)), before - in.size()) << v;
  }
  EXPECT_TRUE(in.empty());
}

TEST(CodingTest, VarintLengthAtBoundaries) {
  EXPECT_EQ(1, VarintLength(0));
  EXPECT_EQ(1, VarintLength(127));
  EXPECT_EQ(2, VarintLength(128));
  EXPECT_EQ(2, VarintLength((1u << 14) - 1));
  EXPECT_EQ(3, VarintLength(1u << 14));
  EXPECT_EQ(kMaxVarint32Length,
            VarintLength(std::numeric_limits<uint32_t>::max()));
  EXPECT_EQ(kMaxVarint64Length,
            VarintLength(std::numeric_limits<uint64_t>::max()));
}

TEST(CodingTest, VarintEncodingIsPinned) {
  // The on-disk encoding: 7 bits per byte, least significant group first,
  // high bit set on every byte but the last.
  std::string s;
  PutVarint32(&s, 300);
  EXPECT_EQ(std::string("\xac\x02", 2), s);
  s.clear();
  PutVarint64(&s, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(std::string(9, '\xff') + std::string("\x01", 1), s);
}

TEST(CodingTest, RandomVarintsRoundTrip) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    std::vector<uint64_t> values;
    std::string s;
    for (int i = 0; i < 1000; i++) {
      const uint64_t v = rnd.Skewed(63) | (rnd.OneIn(10) ? 1ull << 63 : 0);
      values.push_back(v);
      PutVarint64(&s, v);
      PutVarint32(&s, static_cast<uint32_t>(v));
    }
    Slice in(s);
    for (uint64_t v : values) {
      uint64_t got64;
      uint32_t got32;
      ASSERT_TRUE(GetVarint64(&in, &got64));
      ASSERT_EQ(v, got64);
      ASSERT_TRUE(GetVarint32(&in, &got32));
      ASSERT_EQ(static_cast<uint32_t>(v), got32);
    }
    EXPECT_TRUE(in.empty());
  }
}

TEST(CodingTest, EveryTruncatedVarint32IsRejected) {
  for (uint32_t v : Varint32Boundaries()) {
    std::string s;
    PutVarint32(&s, v);
    for (size_t n = 0; n < s.size(); n++) {
      const std::string prefix = s.substr(0, n);
      auto buf = ExactCopy(prefix);
      Slice in(buf.get(), n);
      uint32_t got;
      EXPECT_FALSE(GetVarint32(&in, &got)) << v << " cut to " << n;
      EXPECT_EQ(nullptr, GetVarint32Ptr(buf.get(), buf.get() + n, &got));
    }
  }
}

TEST(CodingTest, EveryTruncatedVarint64IsRejected) {
  for (uint64_t v : Varint64Boundaries()) {
    std::string s;
    PutVarint64(&s, v);
    for (size_t n = 0; n < s.size(); n++) {
      const std::string prefix = s.substr(0, n);
      auto buf = ExactCopy(prefix);
      Slice in(buf.get(), n);
      uint64_t got;
      EXPECT_FALSE(GetVarint64(&in, &got)) << v << " cut to " << n;
      EXPECT_EQ(nullptr, GetVarint64Ptr(buf.get(), buf.get() + n, &got));
    }
  }
}

TEST(CodingTest, Varint32OverflowIsRejected) {
  uint32_t v;
  // Fifth byte carrying more than the 4 bits left in a uint32.
  for (int top = 0x10; top <= 0x7f; top++) {
    std::string s("\xff\xff\xff\xff", 4);
    s.push_back(static_cast<char>(top));
    Slice in(s);
    EXPECT_FALSE(GetVarint32(&in, &v)) << top;
  }
  // The largest legal fifth byte decodes to UINT32_MAX.
  std::string max("\xff\xff\xff\xff\x0f", 5);
  Slice in(max);
  ASSERT_TRUE(GetVarint32(&in, &v));
  EXPECT_EQ(std::numeric_limits<uint32_t>::max(), v);
  // A varint64 value above 32 bits is not a varint32.
  std::string big;
  PutVarint64(&big, uint64_t{1} << 32);
  in = Slice(big);
  EXPECT_FALSE(GetVarint32(&in, &v));
}

TEST(CodingTest, OverlongVarintsAreRejected) {
  // Continuation bits that never stop within the maximum length.
  for (int len = kMaxVarint32Length; len <= 12; len++) {
    std::string s(static_cast<size_t>(len), '\x80');
    s.push_back('\x00');  // would terminate too late
    uint32_t v32;
    Slice in32(s);
    EXPECT_FALSE(GetVarint32(&in32, &v32)) << len;
    if (len >= kMaxVarint64Length) {
      uint64_t v64;
      Slice in64(s);
      EXPECT_FALSE(GetVarint64(&in64, &v64)) << len;
    }
  }
}

TEST(CodingTest, Varint64OverflowIsRejected) {
  uint64_t v;
  // Tenth byte carrying more than the single bit left in a uint64.
  for (int top = 0x02; top <= 0x7f; top++) {
    std::string s(9, '\xff');
    s.push_back(static_cast<char>(top));
    Slice in(s);
    EXPECT_FALSE(GetVarint64(&in, &v)) << top;
  }
  std::string s(9, '\x80');
  s.push_back('\x01');
  Slice in(s);
  ASSERT_TRUE(GetVarint64(&in, &v));
  EXPECT_EQ(uint64_t{1} << 63, v);
}

TEST(CodingTest, GetVarintConsumesOnlyTheVarint) {
  std::string s;
  PutVarint32(&s, 1000);
  s.append("rest");
  Slice in(s);
  uint32_t v;
  ASSERT_TRUE(GetVarint32(&in, &v));
  EXPECT_EQ(1000u, v);
  EXPECT_EQ(Slice("rest"), in);
}

TEST(CodingTest, LengthPrefixedSlices) {
  const std::string with_nul("a\0b", 3);
  const std::string big(300, 'x');  // two-byte length
  std::string s;
  PutLengthPrefixedSlice(&s, Slice());
  PutLengthPrefixedSlice(&s, "foo");
  PutLengthPrefixedSlice(&s, with_nul);
  PutLengthPrefixedSlice(&s, big);
  Slice in(s);
  Slice got;
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &got));
  EXPECT_EQ(Slice(), got);
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &got));
  EXPECT_EQ(Slice("foo"), got);
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &got));
  EXPECT_EQ(Slice(with_nul), got);
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &got));
  EXPECT_EQ(Slice(big), got);
  EXPECT_TRUE(in.empty());
  EXPECT_FALSE(GetLengthPrefixedSlice(&in, &got));
}

TEST(CodingTest, TruncatedLengthPrefixedSliceIsRejected) {
  std::string s;
  PutLengthPrefixedSlice(&s, std::string(200, 'y'));
  for (size_t n = 0; n < s.size(); n++) {
    auto buf = ExactCopy(s.substr(0, n));
    Slice in(buf.get(), n);
    Slice got;
    EXPECT_FALSE(GetLengthPrefixedSlice(&in, &got)) << n;
  }
  // A length claiming more than the input holds.
  std::string lie;
  PutVarint32(&lie, 0xffffffffu);
  lie.append("short");
  Slice in(lie);
  Slice got;
  EXPECT_FALSE(GetLengthPrefixedSlice(&in, &got));
}

}  // namespace
}  // namespace bloomkv
