// kvtool's byte encodings (tools/kvtool/format.h): what scan prints, load
// reads back exactly, for any bytes, and anything else is refused with a
// reason instead of being guessed.
#include <gtest/gtest.h>

#include <string>

#include "tests/testutil/test_util.h"
#include "tools/kvtool/format.h"
#include "util/random.h"

namespace bloomkv::kvtool {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

TEST(KvtoolFormatTest, EscapedAndHexRoundTripAnyBytes) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    for (int i = 0; i < 2000; i++) {
      const std::string bytes = test::RandomBytes(&rnd, rnd.Uniform(40));
      std::string back;
      const std::string printed = Printable(bytes);
      ASSERT_EQ("", Decode(printed, ByteEncoding::kEscaped, &back)) << printed;
      ASSERT_EQ(bytes, back) << printed;
      // What scan prints never holds a raw tab, newline or CR: one record
      // is one line with one separator.
      ASSERT_EQ(std::string::npos, printed.find_first_of("\t\n\r")) << printed;
      const std::string hex = Hex(bytes);
      ASSERT_EQ(2 * bytes.size(), hex.size());
      ASSERT_EQ("", Decode(hex, ByteEncoding::kHex, &back)) << hex;
      ASSERT_EQ(bytes, back) << hex;
      ASSERT_EQ("", Decode(bytes, ByteEncoding::kRaw, &back));
      ASSERT_EQ(bytes, back);
    }
  }
}

// Any text either decodes, and then re-encodes to something that decodes to
// the same bytes, or is refused with a reason; never a crash or a silent
// half result.
TEST(KvtoolFormatTest, ArbitraryTextDecodesConsistentlyOrIsRefused) {
  static const char kAlphabet[] = "\\xtnr0aF9g\t ";
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    for (int i = 0; i < 5000; i++) {
      std::string text(rnd.Uniform(12), ' ');
      for (char& c : text) c = kAlphabet[rnd.Uniform(sizeof(kAlphabet) - 1)];
      for (ByteEncoding e : {ByteEncoding::kEscaped, ByteEncoding::kHex}) {
        std::string bytes = "stale";
        const std::string why = Decode(text, e, &bytes);
        if (!why.empty()) continue;
        const std::string again =
            e == ByteEncoding::kHex ? Hex(bytes) : Printable(bytes);
        std::string twice;
        ASSERT_EQ("", Decode(again, e, &twice)) << text;
        ASSERT_EQ(bytes, twice) << text;
      }
    }
  }
}

TEST(KvtoolFormatTest, RefusalsSayWhatAndWhere) {
  std::string b;
  EXPECT_EQ("bad escape '\\q' at byte 1 (write '\\\\' for a backslash)",
            Decode("a\\q", ByteEncoding::kEscaped, &b));
  EXPECT_EQ("'\\x' without two hex digits at byte 0",
            Decode("\\x4", ByteEncoding::kEscaped, &b));
  EXPECT_EQ("'\\x' without two hex digits at byte 2",
            Decode("ab\\xg0", ByteEncoding::kEscaped, &b));
  EXPECT_EQ("'\\' at the end (write '\\\\' for a backslash)",
            Decode("ab\\", ByteEncoding::kEscaped, &b));
  EXPECT_EQ("odd number of hex digits", Decode("abc", ByteEncoding::kHex, &b));
  EXPECT_EQ("not a hex digit at byte 3",
            Decode("00az", ByteEncoding::kHex, &b));
  // Upper-case hex is read as lower-case.
  EXPECT_EQ("", Decode("\\xAb", ByteEncoding::kEscaped, &b));
  EXPECT_EQ("\xab", b);
  EXPECT_EQ("", Decode("FF00", ByteEncoding::kHex, &b));
  EXPECT_EQ(std::string("\xff\0", 2), b);
}

}  // namespace
}  // namespace bloomkv::kvtool
