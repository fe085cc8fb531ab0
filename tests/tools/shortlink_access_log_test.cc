// AccessLog: the exact common, combined and JSON lines, escaping that keeps
// one request on one line, secrets never written, and the buffered writer
// (everything written at close, reopening after a rotation).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/test_util.h"
#include "tools/shortlink/access_log.h"

namespace shortlink {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// 2023-11-14 22:13:20.250 UTC.
constexpr std::timespec kTime = {1'700'000'000, 250'000'000};

HttpRequest Request() {
  HttpRequest req;
  req.method = "POST";
  req.path = "/api/links";
  req.query = "x=1";
  req.remote_addr = "192.0.2.7";
  req.headers = {{"Authorization", "Bearer top-secret-key"},
                 {"Referer", "https://ref.example/"},
                 {"User-Agent", "curl/7.88.1"}};
  return req;
}

AccessRecord Record() {
  AccessRecord rec;
  rec.client = "192.0.2.7";
  rec.user = "ci-bot";
  rec.status = 201;
  rec.bytes = 112;
  rec.duration_us = 845;
  rec.time = kTime;
  return rec;
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(AccessLogTest, FormatsParse) {
  AccessLogFormat f;
  ASSERT_TRUE(ParseAccessLogFormat("common", &f).ok());
  EXPECT_EQ(AccessLogFormat::kCommon, f);
  ASSERT_TRUE(ParseAccessLogFormat("combined", &f).ok());
  EXPECT_EQ(AccessLogFormat::kCombined, f);
  ASSERT_TRUE(ParseAccessLogFormat("json", &f).ok());
  EXPECT_EQ(AccessLogFormat::kJson, f);
  EXPECT_TRUE(ParseAccessLogFormat("Common", &f).IsInvalidArgument());
  EXPECT_TRUE(ParseAccessLogFormat("", &f).IsInvalidArgument());
}

TEST(AccessLogTest, CommonAndCombinedLines) {
  EXPECT_EQ(
      "192.0.2.7 - ci-bot [14/Nov/2023:22:13:20 +0000] "
      "\"POST /api/links?x=1\" 201 112 845",
      FormatAccessLine(AccessLogFormat::kCommon, Request(), Record()));
  EXPECT_EQ(
      "192.0.2.7 - ci-bot [14/Nov/2023:22:13:20 +0000] "
      "\"POST /api/links?x=1\" 201 112 \"https://ref.example/\" "
      "\"curl/7.88.1\" 845",
      FormatAccessLine(AccessLogFormat::kCombined, Request(), Record()));
  // Unknown fields are "-".
  HttpRequest bare;
  bare.method = "GET";
  bare.path = "/";
  AccessRecord rec;
  rec.status = 400;
  rec.time = kTime;
  EXPECT_EQ("- - - [14/Nov/2023:22:13:20 +0000] \"GET /\" 400 0 \"-\" \"-\" -",
            FormatAccessLine(AccessLogFormat::kCombined, bare, rec));
}

TEST(AccessLogTest, JsonLine) {
  const auto j = nlohmann::json::parse(
      FormatAccessLine(AccessLogFormat::kJson, Request(), Record()));
  EXPECT_EQ("2023-11-14T22:13:20.250Z", j["time"]);
  EXPECT_EQ("192.0.2.7", j["remote_addr"]);
  EXPECT_EQ("ci-bot", j["user"]);
  EXPECT_EQ("POST", j["method"]);
  EXPECT_EQ("/api/links?x=1", j["path"]);
  EXPECT_EQ(201, j["status"]);
  EXPECT_EQ(112, j["bytes"]);
  EXPECT_EQ(845, j["duration_us"]);
  EXPECT_EQ("https://ref.example/", j["referer"]);
  EXPECT_EQ("curl/7.88.1", j["user_agent"]);
  AccessRecord rec = Record();
  rec.duration_us = -1;
  EXPECT_TRUE(nlohmann::json::parse(FormatAccessLine(
      AccessLogFormat::kJson, Request(), rec))["duration_us"]
                  .is_null());
}

TEST(AccessLogTest, NoRequestCanBreakALineOrLeakItsCredentials) {
  HttpRequest req = Request();
  // A decoded path may hold any byte: newlines, quotes, invalid UTF-8.
  req.path = "/a\r\n1.2.3.4 - - [forged] \"GET /\" 200 0\"\\\x01\xff";
  req.headers.emplace_back("User-Agent", "evil\nagent");
  req.headers.emplace_back("X-Api-Key", "another-secret");
  for (const auto format :
       {AccessLogFormat::kCommon, AccessLogFormat::kCombined,
        AccessLogFormat::kJson}) {
    const std::string line = FormatAccessLine(format, req, Record());
    EXPECT_EQ(std::string::npos, line.find('\n')) << line;
    EXPECT_EQ(std::string::npos, line.find('\r')) << line;
    EXPECT_EQ(std::string::npos, line.find("top-secret-key")) << line;
    EXPECT_EQ(std::string::npos, line.find("another-secret")) << line;
    EXPECT_EQ(std::string::npos, line.find("Bearer")) << line;
    if (format != AccessLogFormat::kJson) {
      EXPECT_NE(std::string::npos,
                line.find("/a\\x0d\\x0a1.2.3.4 - - [forged] \\x22GET /\\x22 "
                          "200 0\\x22\\x5c\\x01\\xff?x=1\""))
          << line;
    } else {
      EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded());
    }
  }
}

TEST(AccessLogTest, WritesEveryLineByCloseAndReopensAfterRotation) {
  bloomkv::test::TempDir dir("access_log");
  const std::string path = dir.File("access.log");
  std::unique_ptr<AccessLog> log;
  ASSERT_TRUE(AccessLog::Open(path, AccessLogFormat::kCommon, &log).ok());
  AccessRecord rec = Record();
  for (int i = 0; i < 100; i++) {
    rec.status = 200 + i;
    log->Log(Request(), rec);
  }
  // Rotation: the file is moved away, then the log reopened by name.
  ASSERT_EQ(0, std::rename(path.c_str(), dir.File("access.log.1").c_str()));
  log->Reopen();
  rec.status = 999;
  log->Log(Request(), rec);
  log.reset();

  std::vector<std::string> lines = ReadLines(dir.File("access.log.1"));
  const std::vector<std::string> fresh = ReadLines(path);
  ASSERT_FALSE(fresh.empty());
  EXPECT_NE(std::string::npos, fresh.back().find("\" 999 112 845"));
  lines.insert(lines.end(), fresh.begin(), fresh.end());
  ASSERT_EQ(101u, lines.size());
  for (int i = 0; i < 100; i++) {
    EXPECT_NE(std::string::npos,
              lines[i].find("\" " + std::to_string(200 + i) + " 112 845"))
        << lines[i];
  }
}

TEST(AccessLogTest, OpenReportsAnUnwritablePath) {
  bloomkv::test::TempDir dir("access_log");
  std::unique_ptr<AccessLog> log;
  const auto s = AccessLog::Open(dir.File("no/such/dir/access.log"),
                                 AccessLogFormat::kJson, &log);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_EQ(nullptr, log);
}

}  // namespace
}  // namespace shortlink
