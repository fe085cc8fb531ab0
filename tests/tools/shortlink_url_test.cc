// Unit tests of the short-link service's building blocks: URL validation and
// normalization, aliases and codes, the record encodings and the expiry
// compaction filter.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tests/testutil/test_util.h"
#include "tools/shortlink/code.h"
#include "tools/shortlink/expiry_filter.h"
#include "tools/shortlink/link_record.h"
#include "tools/shortlink/service.h"
#include "tools/shortlink/url.h"
#include "util/random.h"

namespace shortlink {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

struct NormalizeCase {
  std::string input;
  std::string normalized;  // "" = must be refused
};

TEST(UrlTest, NormalizesOnlyWhatIsInsensitive) {
  const std::vector<NormalizeCase> cases = {
      {"http://example.com/", "http://example.com/"},
      {"https://example.com/a/b", "https://example.com/a/b"},
      {"HTTP://EXAMPLE.COM/Path", "http://example.com/Path"},
      {"HtTpS://Example.Com/A?B=C#D", "https://example.com/A?B=C#D"},
      {"http://example.com", "http://example.com/"},
      {"http://example.com?q=1", "http://example.com/?q=1"},
      {"http://example.com#frag", "http://example.com/#frag"},
      {"http://example.com:80/x", "http://example.com/x"},
      {"https://example.com:443/x", "https://example.com/x"},
      {"http://example.com:443/x", "http://example.com:443/x"},
      {"https://example.com:80/x", "https://example.com:80/x"},
      {"http://example.com:8080", "http://example.com:8080/"},
      {"http://example.com:0080/", "http://example.com/"},
      {"http://example.com:08080/", "http://example.com:8080/"},
      {"http://example.com:/x", "http://example.com/x"},
      {"http://[::1]/", "http://[::1]/"},
      {"http://[2001:DB8::A]:80/x", "http://[2001:db8::a]/x"},
      {"https://[2001:db8::1]:8443", "https://[2001:db8::1]:8443/"},
      {"http://192.168.0.1:8080/a", "http://192.168.0.1:8080/a"},
      {"http://example.com/%7Euser/%41", "http://example.com/%7Euser/%41"},
      {"http://example.com/a?x=%20y&z=1#f%20g",
       "http://example.com/a?x=%20y&z=1#f%20g"},
      {"http://exa_mple.com/", "http://exa_mple.com/"},
      {"http://example.com./", "http://example.com./"},
      {"http://example.com/a@b", "http://example.com/a@b"},  // @ in the path
      // Refused.
      {"", ""},
      {"javascript:alert(1)", ""},
      {"JAVASCRIPT:alert(1)", ""},
      {"data:text/html,<b>x</b>", ""},
      {"file:///etc/passwd", ""},
      {"ftp://example.com/", ""},
      {"mailto:a@example.com", ""},
      {"example.com/path", ""},
      {"//example.com/path", ""},
      {"http:/example.com", ""},
      {"http:example.com", ""},
      {"http://", ""},
      {"http:///path", ""},
      {"http://:80/", ""},
      {"http://user@example.com/", ""},
      {"http://user:pass@example.com/", ""},
      {"http://trusted.example@evil.example/", ""},
      {"http://evil.example\\@trusted.example/", ""},
      {"http://exa mple.com/", ""},
      {"http://example.com/a b", ""},
      {" http://example.com/", ""},
      {"http://example.com/\t", ""},
      {"http://example.com/\r\nSet-Cookie: x", ""},
      {std::string("http://example.com/\0x", 21), ""},
      {"http://example.com/\x7f", ""},
      {"http://example.com/caf\xc3\xa9", ""},
      {"http://example.com:99999/", ""},
      {"http://example.com:65536/", ""},
      {"http://example.com:0/", ""},
      {"http://example.com:8o/", ""},
      {"http://[::1/", ""},
      {"http://[example.com]/", ""},
      {"http://[::1]x/", ""},
      {"http://exa%6dple.com/", ""},
      {"1http://example.com/", ""},
      {"http://./", ""},
      {"http://.../", ""},
      {"https://..:8080/", ""},
      {"http://.example.com/", ""},
      {"http://example..com/", ""},
      {"http://example.com../", ""},
  };
  for (const NormalizeCase& c : cases) {
    SCOPED_TRACE("input=" + c.input);
    std::string normalized;
    const bloomkv::Status s = NormalizeUrl(c.input, &normalized);
    if (c.normalized.empty()) {
      EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString() << " " << normalized;
    } else {
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(c.normalized, normalized);
    }
  }
}

TEST(UrlTest, LengthLimitIs2048Bytes) {
  const std::string prefix = "https://example.com/";
  std::string url = prefix + std::string(kMaxUrlBytes - prefix.size(), 'a');
  std::string normalized;
  ASSERT_EQ(kMaxUrlBytes, url.size());
  EXPECT_TRUE(NormalizeUrl(url, &normalized).ok());
  url.push_back('a');
  EXPECT_TRUE(NormalizeUrl(url, &normalized).IsInvalidArgument());
}

TEST(UrlTest, NormalizationIsIdempotent) {
  for (const char* url :
       {"HTTP://A.B:80", "https://X.Y:443?q", "http://[::AB]:8080#f"}) {
    std::string once, twice;
    ASSERT_TRUE(NormalizeUrl(url, &once).ok()) << url;
    ASSERT_TRUE(NormalizeUrl(once, &twice).ok()) << once;
    EXPECT_EQ(once, twice);
  }
}

TEST(CodeTest, AliasValidation) {
  for (const char* good : {"abc", "A-b_9", "API", "Api", "apis", "healthz2",
                           "01234567890123456789012345678901"}) {
    EXPECT_TRUE(ValidateAlias(good).ok()) << good;
  }
  for (const char* bad :
       {"", "ab", "012345678901234567890123456789012", "a b", "a/b", "a.b",
        "caf\xc3\xa9", "a%20", "api", "admin", "healthz", "metrics"}) {
    EXPECT_TRUE(ValidateAlias(bad).IsInvalidArgument()) << bad;
  }
}

TEST(CodeTest, WellFormedCodes) {
  EXPECT_TRUE(IsWellFormedCode("aZ3kQ9x"));
  EXPECT_TRUE(IsWellFormedCode("my-alias_1"));
  EXPECT_FALSE(IsWellFormedCode("ab"));
  EXPECT_FALSE(IsWellFormedCode("aZ3kQ9x!"));
  EXPECT_FALSE(IsWellFormedCode("favicon.ico"));
  EXPECT_FALSE(IsWellFormedCode(std::string(33, 'a')));
}

// Hands out scripted bytes, then a seeded pseudo-random stream.
class ScriptedRandom final : public RandomSource {
 public:
  ScriptedRandom(std::vector<uint8_t> script, uint64_t seed)
      : script_(std::move(script)), rnd_(seed) {}
  bloomkv::Status Fill(uint8_t* buf, size_t n) override {
    for (size_t i = 0; i < n; i++) {
      buf[i] = pos_ < script_.size() ? script_[pos_++]
                                     : static_cast<uint8_t>(rnd_.Next64());
    }
    return bloomkv::Status::OK();
  }

 private:
  std::vector<uint8_t> script_;
  size_t pos_ = 0;
  bloomkv::Random rnd_;
};

TEST(CodeTest, RejectionSamplingDropsBiasedBytes) {
  // 248..255 would map to '0'..'7' a second time; they must be skipped.
  ScriptedRandom random({255, 248, 0, 61, 62, 247, 63, 250, 10, 36, 1}, 1);
  std::string code;
  ASSERT_TRUE(GenerateCode(&random, 7, &code).ok());
  EXPECT_EQ("0z0z1Aa", code);
}

TEST(CodeTest, AlwaysRejectedBytesFailInsteadOfSpinning) {
  ScriptedRandom random(std::vector<uint8_t>(64 * 16, 255), 1);
  std::string code;
  EXPECT_TRUE(GenerateCode(&random, 7, &code).IsIOError());
}

TEST(CodeTest, GeneratedCodesAreUniformBase62) {
  for (uint64_t seed : bloomkv::test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    ScriptedRandom random({}, seed);
    std::array<int, 62> counts{};
    std::set<std::string> seen;
    constexpr int kCodes = 20000;
    for (int i = 0; i < kCodes; i++) {
      std::string code;
      ASSERT_TRUE(GenerateCode(&random, kGeneratedCodeLength, &code).ok());
      ASSERT_EQ(kGeneratedCodeLength, code.size());
      for (char c : code) {
        const size_t pos = kBase62.find(c);
        ASSERT_NE(std::string_view::npos, pos) << code;
        counts[pos]++;
      }
      seen.insert(code);
    }
    EXPECT_EQ(static_cast<size_t>(kCodes), seen.size());
    // 140,000 characters: 2258 expected per symbol, sd ~47. A modulo bias
    // (bytes 248..255 folded onto '0'..'7') would add ~550 to eight of them.
    const double expected = kCodes * 7.0 / 62;
    double chi2 = 0;
    for (int n : counts) chi2 += (n - expected) * (n - expected) / expected;
    EXPECT_LT(chi2, 120.0);  // 61 degrees of freedom; p < 1e-5 beyond
    for (int n : counts) EXPECT_LT(std::abs(n - expected), 300.0);
  }
}

TEST(CodeTest, SystemRandomSourceWorks) {
  SystemRandomSource random;
  std::set<std::string> codes;
  for (int i = 0; i < 100; i++) {
    std::string code;
    ASSERT_TRUE(GenerateCode(&random, kGeneratedCodeLength, &code).ok());
    EXPECT_TRUE(IsWellFormedCode(code));
    codes.insert(code);
  }
  EXPECT_EQ(100u, codes.size());
}

TEST(LinkRecordTest, RoundTrip) {
  for (const LinkRecord& in : std::vector<LinkRecord>{
           {"http://a.b/", 0, 0, 1},
           {"https://example.com/x?y#z", 1700000000, 1700003600, 42},
           {std::string(2048, 'u'), -5, INT64_MAX, UINT64_MAX},
       }) {
    std::string value;
    EncodeLinkRecord(in, &value);
    EXPECT_EQ(kLinkRecordHeaderSize + in.url.size(), value.size());
    LinkRecord out;
    ASSERT_TRUE(DecodeLinkRecord("code", value, &out).ok());
    EXPECT_EQ(in.url, out.url);
    EXPECT_EQ(in.created, out.created);
    EXPECT_EQ(in.expires_at, out.expires_at);
    EXPECT_EQ(in.incarnation, out.incarnation);
  }
}

TEST(LinkRecordTest, LayoutIsStable) {
  std::string value;
  EncodeLinkRecord({"http://x/", 0x0102030405060708, 2, 0x1112131415161718},
                   &value);
  const std::string expected =
      std::string("\x02\x08\x07\x06\x05\x04\x03\x02\x01", 9) +
      std::string("\x02\0\0\0\0\0\0\0", 8) +
      std::string("\x18\x17\x16\x15\x14\x13\x12\x11", 8) + "http://x/";
  EXPECT_EQ(expected, value);
}

// Records written before links had incarnations still read, as
// incarnation 0.
TEST(LinkRecordTest, VersionOneRecordsStillRead) {
  const std::string v1 =
      std::string("\x01\x08\x07\x06\x05\x04\x03\x02\x01", 9) +
      std::string("\x02\0\0\0\0\0\0\0", 8) + "http://x/";
  LinkRecord out;
  ASSERT_TRUE(DecodeLinkRecord("code", v1, &out).ok());
  EXPECT_EQ("http://x/", out.url);
  EXPECT_EQ(0x0102030405060708, out.created);
  EXPECT_EQ(2, out.expires_at);
  EXPECT_EQ(0u, out.incarnation);
  EXPECT_TRUE(
      DecodeLinkRecord("code", v1.substr(0, kLinkRecordV1HeaderSize), &out)
          .IsCorruption());
}

TEST(LinkRecordTest, CorruptRecordsAreReported) {
  std::string good;
  EncodeLinkRecord({"http://a.b/", 1, 2, 3}, &good);
  std::vector<std::string> bad = {"",
                                  "\x01",
                                  "\x02",
                                  good.substr(0, 25),
                                  good.substr(0, 17),
                                  good.substr(0, 10)};
  std::string wrong_version = good;
  wrong_version[0] = 3;
  bad.push_back(wrong_version);
  for (const std::string& value : bad) {
    LinkRecord out;
    const bloomkv::Status s = DecodeLinkRecord("aZ3kQ9x", value, &out);
    EXPECT_TRUE(s.IsCorruption()) << value.size();
    EXPECT_NE(std::string::npos, s.ToString().find("aZ3kQ9x"));
  }
}

TEST(LinkRecordTest, IndexEntriesRoundTripAndCorruption) {
  const std::vector<IndexEntry> in = {{"aZ3kQ9x", 0}, {"my-alias", 99}};
  std::string value;
  EncodeIndexEntries(in, &value);
  std::vector<IndexEntry> out;
  ASSERT_TRUE(DecodeIndexEntries(value, &out).ok());
  ASSERT_EQ(2u, out.size());
  EXPECT_EQ("aZ3kQ9x", out[0].code);
  EXPECT_EQ(0, out[0].expires_at);
  EXPECT_EQ("my-alias", out[1].code);
  EXPECT_EQ(99, out[1].expires_at);

  // Every truncation is detected, as are a bad version and empty lists.
  for (size_t n = 0; n < value.size(); n++) {
    if (n == 1 + 9 + 7) continue;  // a whole first entry: still valid
    EXPECT_TRUE(DecodeIndexEntries(value.substr(0, n), &out).IsCorruption())
        << n;
  }
  std::string bad_version = value;
  bad_version[0] = 7;
  EXPECT_TRUE(DecodeIndexEntries(bad_version, &out).IsCorruption());
  std::string zero_length = value;
  zero_length[9] = 0;
  EXPECT_TRUE(DecodeIndexEntries(zero_length, &out).IsCorruption());
}

TEST(LinkRecordTest, UrlHashIs128BitsAndDistinguishesUrls) {
  const std::string a = UrlHash("http://example.com/");
  EXPECT_EQ(kUrlHashSize, a.size());
  EXPECT_EQ(a, UrlHash("http://example.com/"));
  EXPECT_NE(a, UrlHash("http://example.com/x"));
  EXPECT_EQ("u:" + a, IndexKey(a));
  EXPECT_EQ("c:aZ3kQ9x", CodeKey("aZ3kQ9x"));
}

TEST(ExpiryFilterTest, DropsExpiredRecordsAndDeadIndexEntries) {
  int64_t now = 1000;
  ExpiryFilter filter([&now] { return now; });
  std::string live, expiring, index_mixed, index_dead;
  EncodeLinkRecord({"http://a/", 1, 0}, &live);
  EncodeLinkRecord({"http://a/", 1, 1500}, &expiring);
  EncodeIndexEntries({{"abc", 1200}, {"abd", 2000}}, &index_mixed);
  EncodeIndexEntries({{"abc", 1200}, {"abe", 1100}}, &index_dead);

  EXPECT_FALSE(filter.Filter(1, "c:abc", live));
  EXPECT_FALSE(filter.Filter(1, "c:abc", expiring));
  EXPECT_FALSE(filter.Filter(1, "u:hash", index_dead));
  now = 1500;  // expires_at is the first second the link is dead
  EXPECT_FALSE(filter.Filter(1, "c:abc", live));
  EXPECT_TRUE(filter.Filter(1, "c:abc", expiring));
  EXPECT_FALSE(filter.Filter(1, "u:hash", index_mixed));
  EXPECT_TRUE(filter.Filter(1, "u:hash", index_dead));
  // Whatever it cannot decode, it keeps.
  EXPECT_FALSE(filter.Filter(1, "c:abc", "garbage"));
  EXPECT_FALSE(filter.Filter(1, "u:hash", ""));
  EXPECT_FALSE(filter.Filter(1, "x:other", expiring));
}

TEST(ServiceTest, BearerTokenCheck) {
  EXPECT_TRUE(CheckBearerToken("Bearer s3cret", "s3cret"));
  EXPECT_FALSE(CheckBearerToken("Bearer s3cre", "s3cret"));
  EXPECT_FALSE(CheckBearerToken("Bearer s3cret2", "s3cret"));
  EXPECT_FALSE(CheckBearerToken("Bearer S3cret", "s3cret"));
  // The scheme in any case (RFC 7235 section 2.1), then one or more spaces.
  EXPECT_TRUE(CheckBearerToken("bearer s3cret", "s3cret"));
  EXPECT_TRUE(CheckBearerToken("BEARER s3cret", "s3cret"));
  EXPECT_TRUE(CheckBearerToken("Bearer  s3cret", "s3cret"));
  EXPECT_FALSE(CheckBearerToken("Bearers3cret", "s3cret"));
  EXPECT_FALSE(CheckBearerToken("Basic s3cret", "s3cret"));
  EXPECT_FALSE(CheckBearerToken("s3cret", "s3cret"));
  EXPECT_FALSE(CheckBearerToken("", "s3cret"));
  EXPECT_FALSE(CheckBearerToken("Bearer ", ""));
  EXPECT_FALSE(CheckBearerToken("", ""));
}

TEST(ServiceTest, JsonContentTypeIsTheMediaTypeInAnyCaseWithParameters) {
  for (const char* type :
       {"application/json", "Application/JSON", "application/json;",
        "application/json; charset=utf-8", "application/json ;charset=UTF-8"}) {
    EXPECT_TRUE(IsJsonContentType(type)) << type;
  }
  for (const char* type :
       {"", "text/plain", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x", "application/jsonx",
        "application/json-seq", "text/json", "application/ json",
        "x; application/json"}) {
    EXPECT_FALSE(IsJsonContentType(type)) << type;
  }
}

}  // namespace
}  // namespace shortlink
