// ApiKeys: the hashed key file's grammar (every malformed line is refused
// with its file and line number), matching of presented keys, and the line
// `shortlinkd hash-api-key` prints.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/testutil/test_util.h"
#include "tools/shortlink/api_keys.h"

namespace shortlink {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using bloomkv::Status;

std::string Hex(const Sha256Digest& d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const uint8_t b : d) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

TEST(ApiKeysTest, Sha256MatchesTheStandardVectors) {
  // FIPS 180-2, appendix B.
  EXPECT_EQ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            Hex(Sha256("abc")));
  EXPECT_EQ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            Hex(Sha256("")));
}

TEST(ApiKeysTest, FormattedLinesAreHashesThatMatchOnlyTheirKey) {
  const std::string line = FormatApiKeyLine("ci-bot", "k3y-of-ci");
  EXPECT_EQ("ci-bot:sha256:" + Hex(Sha256("k3y-of-ci")), line);
  EXPECT_EQ(std::string::npos, line.find("k3y-of-ci"));

  ApiKeys keys;
  const std::string text = "# keys for the API\n\n" + line + "\n" +
                           FormatApiKeyLine("ops.team_2", "other") + "\n";
  ASSERT_TRUE(ApiKeys::Parse(text, "keys", &keys).ok());
  ASSERT_EQ(2u, keys.size());
  ASSERT_NE(nullptr, keys.Find("k3y-of-ci"));
  EXPECT_EQ("ci-bot", *keys.Find("k3y-of-ci"));
  EXPECT_EQ("ops.team_2", *keys.Find("other"));
  for (const char* wrong : {"", "k3y-of-c", "k3y-of-ci ", "K3Y-OF-CI",
                            "k3y-of-ci\n", "ci-bot", line.c_str()}) {
    EXPECT_EQ(nullptr, keys.Find(wrong)) << wrong;
  }
}

TEST(ApiKeysTest, AcceptsCommentsBlankLinesCrlfAndUpperCaseHex) {
  std::string upper = FormatApiKeyLine("a", "key-a");
  for (size_t i = upper.rfind(':') + 1; i < upper.size(); i++) {
    upper[i] = static_cast<char>(std::toupper(upper[i]));
  }
  ApiKeys keys;
  ASSERT_TRUE(ApiKeys::Parse("  # indented comment\r\n\r\n  " + upper +
                                 "  \r\n\t\n" + FormatApiKeyLine("b", "key-b"),
                             "keys", &keys)
                  .ok());
  EXPECT_EQ("a", *keys.Find("key-a"));
  EXPECT_EQ("b", *keys.Find("key-b"));
  ASSERT_TRUE(ApiKeys::Parse("", "keys", &keys).ok());
  EXPECT_EQ(0u, keys.size());
}

TEST(ApiKeysTest, EveryMalformedLineIsRefusedWithItsLineNumber) {
  const std::string hex = Hex(Sha256("x"));
  const std::vector<std::string> bad = {
      "just-a-plain-key",
      "name:plain-key",
      "name:sha1:" + hex,
      "name:sha256:" + hex.substr(1),
      "name:sha256:" + hex + "0",
      "name:sha256:" + hex.substr(1) + "g",
      "name:sha256:",
      ":sha256:" + hex,
      "two words:sha256:" + hex,
      "n@me:sha256:" + hex,
      std::string(65, 'n') + ":sha256:" + hex,
      "first:sha256:" + Hex(Sha256("one")),  // duplicate name
      "copy:sha256:" + Hex(Sha256("two")),   // same key as line 2
  };
  for (const std::string& line : bad) {
    const std::string text = "# header\nfirst:sha256:" + Hex(Sha256("two")) +
                             "\n" + line +
                             "\nlast:sha256:" + Hex(Sha256("three")) + "\n";
    ApiKeys keys;
    const Status s = ApiKeys::Parse(text, "/etc/keys", &keys);
    EXPECT_TRUE(s.IsInvalidArgument()) << line << ": " << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find("/etc/keys:3: "))
        << s.ToString();
    EXPECT_EQ(0u, keys.size());
  }
  // The longest name is accepted.
  ApiKeys keys;
  EXPECT_TRUE(
      ApiKeys::Parse(std::string(64, 'n') + ":sha256:" + hex, "k", &keys).ok());
}

TEST(ApiKeysTest, LoadReadsAFileAndReportsAMissingOne) {
  bloomkv::test::TempDir dir("api_keys");
  std::ofstream(dir.File("keys")) << FormatApiKeyLine("app", "s3cret") << "\n";
  ApiKeys keys;
  ASSERT_TRUE(ApiKeys::Load(dir.File("keys"), &keys).ok());
  EXPECT_EQ("app", *keys.Find("s3cret"));
  const Status s = ApiKeys::Load(dir.File("missing"), &keys);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("missing"));
}

}  // namespace
}  // namespace shortlink
