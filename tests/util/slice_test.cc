// Tests for Slice: bytewise ordering (NUL bytes and prefixes included),
// equality, prefix handling and the escaped form used in messages.
#include "bloomkv/slice.h"

#include <gtest/gtest.h>

#include <string>

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

int Sign(int x) { return (x > 0) - (x < 0); }

TEST(SliceTest, Construction) {
  EXPECT_TRUE(Slice().empty());
  EXPECT_EQ(0u, Slice().size());
  EXPECT_EQ(3u, Slice("abc").size());
  const std::string with_nul("a\0b", 3);
  EXPECT_EQ(3u, Slice(with_nul).size());
  EXPECT_EQ(1u, Slice("a\0b").size());  // a C string stops at NUL
  EXPECT_EQ(with_nul, Slice(with_nul).ToString());
  EXPECT_EQ("xy", Slice(std::string_view("xyz", 2)).ToString());
}

TEST(SliceTest, CompareIsBytewiseAndUnsigned) {
  EXPECT_EQ(0, Slice("abc").compare("abc"));
  EXPECT_LT(Slice("abc").compare("abd"), 0);
  EXPECT_GT(Slice("abd").compare("abc"), 0);
  // Bytes compare as unsigned: 0xff sorts after 0x01 and after 'z'.
  EXPECT_GT(Slice("\xff").compare("\x01"), 0);
  EXPECT_GT(Slice("\xff").compare("z"), 0);
  EXPECT_TRUE(Slice("z") < Slice("\x80"));
}

TEST(SliceTest, CompareWithNulAndPrefixes) {
  const std::string a("a", 1);
  const std::string a0("a\0", 2);
  const std::string a00("a\0\0", 3);
  const std::string a01("a\0\x01", 3);
  const std::string b("b", 1);
  // Expected order: "" < "a" < "a\0" < "a\0\0" < "a\0\1" < "b".
  const std::string ordered[] = {"", a, a0, a00, a01, b};
  for (size_t i = 0; i < std::size(ordered); i++) {
    for (size_t j = 0; j < std::size(ordered); j++) {
      const int want = (i < j) ? -1 : (i > j ? 1 : 0);
      EXPECT_EQ(want, Sign(Slice(ordered[i]).compare(Slice(ordered[j]))))
          << i << " vs " << j;
      EXPECT_EQ(i < j, Slice(ordered[i]) < Slice(ordered[j]));
      EXPECT_EQ(i == j, Slice(ordered[i]) == Slice(ordered[j]));
      EXPECT_EQ(i != j, Slice(ordered[i]) != Slice(ordered[j]));
    }
  }
}

TEST(SliceTest, EqualityUsesLengthNotNulTermination) {
  const std::string x("k\0x", 3);
  const std::string y("k\0y", 3);
  EXPECT_NE(Slice(x), Slice(y));
  EXPECT_NE(Slice(x), Slice("k"));
  EXPECT_EQ(Slice(x.data(), 2), Slice(y.data(), 2));
  EXPECT_EQ(Slice(), Slice(""));
}

TEST(SliceTest, StartsWith) {
  const std::string key("user\0key", 8);
  EXPECT_TRUE(Slice(key).starts_with(""));
  EXPECT_TRUE(Slice(key).starts_with("user"));
  EXPECT_TRUE(Slice(key).starts_with(Slice(key.data(), 5)));
  EXPECT_TRUE(Slice(key).starts_with(key));
  EXPECT_FALSE(Slice(key).starts_with(key + "!"));
  EXPECT_FALSE(Slice("use").starts_with("user"));
  EXPECT_TRUE(Slice().starts_with(Slice()));
}

TEST(SliceTest, RemovePrefixAndSuffix) {
  Slice s("hello world");
  s.remove_prefix(6);
  EXPECT_EQ(Slice("world"), s);
  s.remove_suffix(2);
  EXPECT_EQ(Slice("wor"), s);
  s.remove_prefix(3);
  EXPECT_TRUE(s.empty());
  Slice t("x");
  t.clear();
  EXPECT_TRUE(t.empty());
}

TEST(SliceTest, ToEscapedString) {
  EXPECT_EQ("plain text", Slice("plain text").ToEscapedString());
  EXPECT_EQ("", Slice().ToEscapedString());
  const std::string bytes("a\0b\n\x7f\xff~ ", 8);
  EXPECT_EQ("a\\x00b\\x0a\\x7f\\xff~ ", Slice(bytes).ToEscapedString());
  // The backslash itself is escaped, so the escaped form is unambiguous.
  EXPECT_EQ("\\x5cx00", Slice("\\x00").ToEscapedString());
}

}  // namespace
}  // namespace bloomkv
