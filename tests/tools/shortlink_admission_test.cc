// Service admission: API keys on link creation (401 without a valid one,
// the admin token always accepted), per-key and per-address rate limits
// (429 with Retry-After, independent buckets, refill on a fake clock, which
// routes they cover), the client address behind a trusted proxy, and the
// access log's user field. Requests go straight to Service::Handle.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/test_util.h"
#include "tools/shortlink/link_store.h"
#include "tools/shortlink/service.h"

namespace shortlink {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr char kAdminToken[] = "admin-token";
constexpr char kKeyA[] = "key-for-a";
constexpr char kKeyB[] = "key-for-b";

std::shared_ptr<const ApiKeys> Keys(const std::string& text) {
  auto keys = std::make_shared<ApiKeys>();
  EXPECT_TRUE(ApiKeys::Parse(text, "keys", keys.get()).ok());
  return keys;
}

std::shared_ptr<const ApiKeys> KeysAB() {
  return Keys(FormatApiKeyLine("a", kKeyA) + "\n" +
              FormatApiKeyLine("b", kKeyB) + "\n");
}

class AdmissionTest : public testing::Test {
 protected:
  AdmissionTest() {
    LinkStoreOptions store_options;
    store_options.now = [] { return int64_t{1'700'000'000}; };
    EXPECT_TRUE(LinkStore::Open(store_options, dir_.File("db"), &store_).ok());
    options_.admin_token = kAdminToken;
    options_.admission.clock = [this] { return now_; };
  }

  void Start() { service_ = std::make_unique<Service>(store_.get(), options_); }

  HttpResponse Send(std::string method, std::string path,
                    std::string bearer = "", std::string addr = "10.0.0.1",
                    std::string body = "") {
    HttpRequest req;
    req.method = std::move(method);
    req.path = std::move(path);
    req.remote_addr = std::move(addr);
    req.body = std::move(body);
    if (!req.body.empty()) {
      req.headers.emplace_back("Content-Type", "application/json");
    }
    if (!bearer.empty()) req.headers.emplace_back("Authorization", bearer);
    HttpResponse res;
    service_->Handle(req, &res);
    return res;
  }
  // Creates a new link each time (the URL differs), so 201 means admitted.
  HttpResponse Create(const std::string& key = "",
                      const std::string& addr = "10.0.0.1") {
    const std::string body =
        json{{"url", "https://example.com/" + std::to_string(n_++)}}.dump();
    return Send("POST", "/api/links", key.empty() ? "" : "Bearer " + key, addr,
                body);
  }

  static std::string HeaderOf(const HttpResponse& res,
                              const std::string& name) {
    for (const auto& [n, v] : res.headers) {
      if (EqualsIgnoreCase(n, name)) return v;
    }
    return "";
  }
  static void Expect429(const HttpResponse& res, const std::string& retry) {
    EXPECT_EQ(429, res.status);
    EXPECT_EQ(retry, HeaderOf(res, "Retry-After"));
    const json j = json::parse(res.body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << res.body;
    EXPECT_TRUE(j["error"].is_string()) << res.body;
  }

  bloomkv::test::TempDir dir_{"admission"};
  std::unique_ptr<LinkStore> store_;
  ServiceOptions options_;
  std::unique_ptr<Service> service_;
  Clock::time_point now_ = Clock::time_point() + std::chrono::hours(1);
  int n_ = 0;
};

TEST_F(AdmissionTest, WithoutKeysCreationStaysOpen) {
  Start();
  EXPECT_EQ(201, Create().status);
  EXPECT_EQ(201, Create("anything").status);
}

TEST_F(AdmissionTest, WithKeysCreationNeedsAValidKeyOrTheAdminToken) {
  options_.admission.api_keys = KeysAB();
  Start();
  const HttpResponse none = Create();
  EXPECT_EQ(401, none.status);
  EXPECT_EQ("Bearer", HeaderOf(none, "WWW-Authenticate"));
  EXPECT_TRUE(json::parse(none.body, nullptr, false)["error"].is_string());
  for (const std::string wrong :
       {"key-for-c", "key-for-a ", "key-for", "KEY-FOR-A", ""}) {
    EXPECT_EQ(401, Send("POST", "/api/links", "Bearer " + wrong, "10.0.0.1",
                        json{{"url", "https://example.com/w"}}.dump())
                       .status)
        << wrong;
  }
  // The scheme must be Bearer.
  EXPECT_EQ(401, Send("POST", "/api/links", std::string("Basic ") + kKeyA,
                      "10.0.0.1", json{{"url", "https://example.com/w"}}.dump())
                     .status);
  EXPECT_EQ(201, Create(kKeyA).status);
  EXPECT_EQ(201, Create(kKeyB).status);
  EXPECT_EQ(201, Create(kAdminToken).status);
  // The scheme's name is case-insensitive (RFC 7235 section 2.1).
  for (const std::string scheme : {"bearer ", "BEARER "}) {
    EXPECT_EQ(
        201,
        Send("POST", "/api/links", scheme + kKeyA, "10.0.0.1",
             json{{"url", "https://example.com/" + scheme.substr(0, 6)}}.dump())
            .status)
        << scheme;
  }
  // Reading links and redirecting need no key.
  const HttpResponse created = Create(kKeyA);
  const std::string code = json::parse(created.body)["code"];
  EXPECT_EQ(200, Send("GET", "/api/links/" + code).status);
  EXPECT_EQ(302, Send("GET", "/" + code).status);
}

TEST_F(AdmissionTest, ReplacedKeysTakeEffectAtOnce) {
  options_.admission.api_keys = Keys(FormatApiKeyLine("a", kKeyA));
  Start();
  EXPECT_EQ(201, Create(kKeyA).status);
  service_->admission()->SetApiKeys(Keys(FormatApiKeyLine("b", kKeyB)));
  EXPECT_EQ(401, Create(kKeyA).status);
  EXPECT_EQ(201, Create(kKeyB).status);
  service_->admission()->SetApiKeys(nullptr);
  EXPECT_EQ(201, Create().status);
}

TEST_F(AdmissionTest, PerAddressBurstIsRefusedUntilTheBucketRefills) {
  ASSERT_TRUE(ParseRateLimit("1/s", &options_.admission.ip_limit).ok());
  options_.admission.ip_limit.burst = 3;
  Start();
  for (int i = 0; i < 3; i++) EXPECT_EQ(201, Create("", "10.0.0.1").status);
  Expect429(Create("", "10.0.0.1"), "1");
  // Another address has its own bucket.
  EXPECT_EQ(201, Create("", "10.0.0.2").status);
  now_ += std::chrono::seconds(1);
  EXPECT_EQ(201, Create("", "10.0.0.1").status);
  Expect429(Create("", "10.0.0.1"), "1");
  // Other /api/ and /admin/ routes share the bucket; the admin token is
  // never limited.
  now_ += std::chrono::seconds(2);
  EXPECT_EQ(404, Send("GET", "/api/links/abcdefg").status);
  EXPECT_EQ(401, Send("POST", "/admin/flush", "Bearer guess").status);
  Expect429(Send("POST", "/admin/flush", "Bearer guess"), "1");
  EXPECT_EQ(201, Create(kAdminToken, "10.0.0.1").status);
  EXPECT_EQ(200,
            Send("POST", "/admin/flush", std::string("Bearer ") + kAdminToken)
                .status);
  // Redirects, health and metrics are not limited by default.
  for (int i = 0; i < 10; i++) {
    EXPECT_EQ(404, Send("GET", "/abcdefg").status);
    EXPECT_EQ(200, Send("GET", "/healthz").status);
    EXPECT_EQ(200, Send("GET", "/metrics").status);
  }
}

TEST_F(AdmissionTest, RedirectsAreLimitedOnlyWhenAskedFor) {
  ASSERT_TRUE(ParseRateLimit("2/s", &options_.admission.ip_limit).ok());
  options_.admission.limit_redirects = true;
  Start();
  EXPECT_EQ(404, Send("GET", "/abcdefg").status);
  EXPECT_EQ(404, Send("HEAD", "/abcdefg").status);
  Expect429(Send("GET", "/abcdefg"), "1");
  EXPECT_EQ(200, Send("GET", "/healthz").status);
}

TEST_F(AdmissionTest, PerKeyLimitFollowsTheKeyAcrossAddresses) {
  options_.admission.api_keys = KeysAB();
  ASSERT_TRUE(ParseRateLimit("1/m", &options_.admission.key_limit).ok());
  options_.admission.key_limit.burst = 2;
  Start();
  EXPECT_EQ(201, Create(kKeyA, "10.0.0.1").status);
  EXPECT_EQ(201, Create(kKeyA, "10.0.0.2").status);
  Expect429(Create(kKeyA, "10.0.0.3"), "60");
  EXPECT_EQ(201, Create(kKeyB, "10.0.0.3").status);
  now_ += std::chrono::seconds(30);
  Expect429(Create(kKeyA, "10.0.0.4"), "30");
  now_ += std::chrono::seconds(30);
  EXPECT_EQ(201, Create(kKeyA, "10.0.0.4").status);
  Expect429(Create(kKeyA, "10.0.0.4"), "60");
  // A request without a key is refused for that, not counted against a key.
  EXPECT_EQ(401, Create("", "10.0.0.4").status);
}

TEST_F(AdmissionTest, AnIpv6ClientIsLimitedByItsSlash64) {
  ASSERT_TRUE(ParseRateLimit("1/m", &options_.admission.ip_limit).ok());
  Start();
  EXPECT_EQ(201, Create("", "2001:db8:1:2::1").status);
  Expect429(Create("", "2001:db8:1:2:ffff::9"), "60");
  EXPECT_EQ(201, Create("", "2001:db8:1:3::1").status);
  EXPECT_EQ(201, Create("", "::ffff:10.9.9.9").status);
}

TEST_F(AdmissionTest, ForwardedForCountsOnlyBehindATrustedProxy) {
  HttpRequest req;
  req.remote_addr = "127.0.0.1";
  req.headers = {{"X-Forwarded-For", "1.1.1.1, 203.0.113.9"},
                 {"x-forwarded-for", "6.6.6.6, 7.7.7.7, 198.51.100.4 "}};
  Start();
  EXPECT_EQ("127.0.0.1", service_->admission()->ClientAddress(req));
  options_.admission.trust_proxy = true;
  Start();
  // The last hop of the last header: what our proxy appended.
  EXPECT_EQ("198.51.100.4", service_->admission()->ClientAddress(req));
  req.headers = {{"X-Forwarded-For", "2001:db8::7"}};
  EXPECT_EQ("2001:db8::7", service_->admission()->ClientAddress(req));
  for (const char* bad : {"", "unknown", "1.2.3.4:80", "1.2.3.4, "}) {
    req.headers = {{"X-Forwarded-For", bad}};
    EXPECT_EQ("127.0.0.1", service_->admission()->ClientAddress(req)) << bad;
  }
}

TEST_F(AdmissionTest, AccessLogNamesTheKeyNeverTheKeyItself) {
  options_.admission.api_keys = KeysAB();
  std::unique_ptr<AccessLog> log;
  ASSERT_TRUE(
      AccessLog::Open(dir_.File("access.log"), AccessLogFormat::kJson, &log)
          .ok());
  options_.access_log = log.get();
  Start();
  EXPECT_EQ(201, Create(kKeyA, "10.1.1.1").status);
  EXPECT_EQ(401, Create("bogus-key", "10.1.1.2").status);
  EXPECT_EQ(201, Create(kAdminToken, "10.1.1.3").status);
  log.reset();
  std::ifstream in(dir_.File("access.log"));
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) {
    EXPECT_EQ(std::string::npos, line.find(kKeyA)) << line;
    EXPECT_EQ(std::string::npos, line.find("bogus-key")) << line;
    EXPECT_EQ(std::string::npos, line.find(kAdminToken)) << line;
    lines.push_back(json::parse(line));
  }
  ASSERT_EQ(3u, lines.size());
  EXPECT_EQ("a", lines[0]["user"]);
  EXPECT_EQ("10.1.1.1", lines[0]["remote_addr"]);
  EXPECT_EQ(201, lines[0]["status"]);
  EXPECT_EQ("", lines[1]["user"]);
  EXPECT_EQ(401, lines[1]["status"]);
  EXPECT_EQ("admin", lines[2]["user"]);
}

}  // namespace
}  // namespace shortlink
