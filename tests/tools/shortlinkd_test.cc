// End-to-end tests of shortlinkd: the real binary on a free loopback port,
// driven over HTTP. Each test starts its own server on its own data
// directory; the clock is a file the test writes (--test-clock-file).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"

extern char** environ;

namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using nlohmann::json;

constexpr char kToken[] = "test-admin-token";
constexpr int64_t kStartTime = 1'700'000'000;

// One shortlinkd process. Started with --listen 127.0.0.1:0 and a port file,
// so there is no race for a port; stopped with a signal.
class Server {
 public:
  Server(const bloomkv::test::TempDir& dir, std::vector<std::string> extra)
      : dir_(dir), extra_(std::move(extra)) {}
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server() {
    if (pid_ > 0) Stop(SIGKILL);
  }

  // Starts the binary and waits until /healthz answers.
  void Start() {
#ifdef SHORTLINKD_PATH
    const std::string port_file = dir_.File("port");
    std::remove(port_file.c_str());
    std::vector<std::string> args = {SHORTLINKD_PATH,
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--port-file",
                                     port_file,
                                     "--data",
                                     dir_.File("data"),
                                     "--admin-token",
                                     kToken,
                                     "--test-clock-file",
                                     dir_.File("clock"),
                                     "--block-cache-mb",
                                     "0",
                                     "--compact-interval",
                                     "0",
                                     "--threads",
                                     "4"};
    args.insert(args.end(), extra_.begin(), extra_.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string log = dir_.File("server.log");
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    ASSERT_EQ(0, posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(),
                             environ));
    posix_spawn_file_actions_destroy(&actions);

    for (int i = 0; i < 1000 && port_ == 0; i++) {
      std::ifstream in(port_file);
      if (!(in >> port_)) port_ = 0;
      int status;
      ASSERT_EQ(0, waitpid(pid_, &status, WNOHANG)) << "server died: " << Log();
      if (port_ == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_NE(0, port_) << "no port file: " << Log();
    auto res = Client().Get("/healthz");
    ASSERT_TRUE(res) << Log();
    ASSERT_EQ(200, res->status);
    ASSERT_EQ("ok\n", res->body);
#else
    GTEST_SKIP() << "SHORTLINKD_PATH not defined";
#endif
  }

  // Signals the server and returns its exit status (-1 if it did not exit
  // normally).
  int Stop(int sig = SIGTERM) {
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    port_ = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  httplib::Client Client() const {
    httplib::Client cli("127.0.0.1", port_);
    cli.set_read_timeout(10, 0);
    return cli;
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  std::string Log() const {
    std::ifstream in(dir_.File("server.log"));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  const bloomkv::test::TempDir& dir_;
  std::vector<std::string> extra_;
  pid_t pid_ = -1;
  int port_ = 0;
};

class ShortlinkdTest : public testing::Test {
 protected:
  ShortlinkdTest() { SetClock(kStartTime); }

  // Every server must shut down cleanly (exit 0: flushed, closed, and under
  // the sanitizers nothing leaked).
  void TearDown() override {
    if (server_ && server_->running()) {
      EXPECT_EQ(0, server_->Stop(SIGTERM)) << server_->Log();
    }
  }

  void StartServer(std::vector<std::string> extra = {}) {
    server_ = std::make_unique<Server>(dir_, std::move(extra));
    server_->Start();
  }

  void SetClock(int64_t t) {
    const std::string tmp = dir_.File("clock.tmp");
    std::ofstream(tmp) << t << "\n";
    std::rename(tmp.c_str(), dir_.File("clock").c_str());
  }

  httplib::Result Create(const json& body) {
    return server_->Client().Post("/api/links", body.dump(),
                                  "application/json");
  }
  httplib::Result Get(const std::string& path) {
    return server_->Client().Get(path);
  }
  httplib::Result Admin(const std::string& path) {
    return server_->Client().Post(
        path, {{"Authorization", std::string("Bearer ") + kToken}}, "", "");
  }

  // Every sample of /metrics, keyed by name and labels as printed.
  std::map<std::string, double> Metrics() {
    std::map<std::string, double> out;
    auto res = Get("/metrics");
    EXPECT_TRUE(res);
    if (!res) return out;
    std::istringstream in(res->body);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      const size_t space = line.rfind(' ');
      out[line.substr(0, space)] = std::stod(line.substr(space + 1));
    }
    return out;
  }

  bloomkv::test::TempDir dir_{"shortlinkd"};
  std::unique_ptr<Server> server_;
};

json BodyJson(const httplib::Result& res) {
  return json::parse(res->body, nullptr, false);
}

TEST_F(ShortlinkdTest, CreateDedupAndRedirect) {
  StartServer();
  auto res = Create({{"url", "https://Example.com:443/docs?q=1#top"}});
  ASSERT_TRUE(res);
  ASSERT_EQ(201, res->status) << res->body;
  const json created = BodyJson(res);
  const std::string code = created["code"];
  EXPECT_TRUE(std::regex_match(code, std::regex("[0-9A-Za-z]{7}"))) << code;
  EXPECT_EQ("http://127.0.0.1:" + std::to_string(server_->port()) + "/" + code,
            created["short_url"]);
  EXPECT_EQ("https://Example.com:443/docs?q=1#top", created["url"]);
  EXPECT_FALSE(created.contains("expires_at"));

  // Same URL with a different-cased host and no default port: same code.
  res = Create({{"url", "HTTPS://EXAMPLE.COM/docs?q=1#top"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(200, res->status);
  EXPECT_EQ(code, BodyJson(res)["code"]);

  res = Get("/" + code);
  ASSERT_TRUE(res);
  EXPECT_EQ(302, res->status);
  EXPECT_EQ("https://Example.com:443/docs?q=1#top",
            res->get_header_value("Location"));

  res = Get("/api/links/" + code);
  ASSERT_TRUE(res);
  ASSERT_EQ(200, res->status);
  EXPECT_EQ("https://Example.com:443/docs?q=1#top", BodyJson(res)["url"]);
  EXPECT_EQ(kStartTime, BodyJson(res)["created"]);

  const auto m = Metrics();
  EXPECT_EQ(1, m.at("shortlinkd_links_created_total"));
  EXPECT_EQ(
      1,
      m.at(R"(shortlinkd_http_requests_total{route="redirect",status="302"})"));
  EXPECT_EQ(
      1,
      m.at(R"(shortlinkd_http_requests_total{route="create",status="201"})"));
  EXPECT_EQ(
      1,
      m.at(R"(shortlinkd_http_requests_total{route="create",status="200"})"));
}

TEST_F(ShortlinkdTest, PermanentRedirectWhenConfigured) {
  StartServer({"--redirect-status", "301", "--base-url", "https://sho.rt/"});
  auto res = Create({{"url", "http://example.com/"}, {"alias", "perm"}});
  ASSERT_TRUE(res);
  EXPECT_EQ("https://sho.rt/perm", BodyJson(res)["short_url"]);
  res = Get("/perm");
  ASSERT_TRUE(res);
  EXPECT_EQ(301, res->status);
  EXPECT_EQ("http://example.com/", res->get_header_value("Location"));
}

TEST_F(ShortlinkdTest, Aliases) {
  StartServer();
  auto res = Create({{"url", "https://a.example/"}, {"alias", "launch-2024"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(201, res->status);
  EXPECT_EQ("launch-2024", BodyJson(res)["code"]);

  res = Create({{"url", "https://b.example/"}, {"alias", "launch-2024"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(409, res->status);
  EXPECT_TRUE(BodyJson(res).contains("error"));
  EXPECT_EQ("https://a.example/",
            Get("/launch-2024")->get_header_value("Location"));

  for (const char* bad : {"api", "healthz", "metrics", "admin", "ab", "a b",
                          "a/b", "x.y", "0123456789012345678901234567890123"}) {
    res = Create({{"url", "https://c.example/"}, {"alias", bad}});
    ASSERT_TRUE(res);
    EXPECT_EQ(400, res->status) << bad;
  }
  // Case matters: "API" is not reserved, "Launch-2024" is a different code.
  EXPECT_EQ(201,
            Create({{"url", "https://c.example/"}, {"alias", "API"}})->status);
  EXPECT_EQ(404, Get("/Launch-2024")->status);
}

// Puts `n` links with fixed aliases in a segment: keys are deterministic, so
// the segment's filter (and its false positives) is the same on every run.
void FillAndFlush(ShortlinkdTest* t, httplib::Client cli, int n,
                  const std::string& token) {
  for (int i = 0; i < n; i++) {
    char alias[32];
    std::snprintf(alias, sizeof(alias), "A-link-%03d", i);
    const json body = {{"url", "https://example.com/" + std::to_string(i)},
                       {"alias", alias}};
    auto res = cli.Post("/api/links", body.dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(201, res->status);
  }
  auto res =
      cli.Post("/admin/flush", {{"Authorization", "Bearer " + token}}, "", "");
  ASSERT_TRUE(res);
  ASSERT_EQ(200, res->status);
  (void)t;
}

// Codes inside the segment's key range ("c:A-link-000" .. "u:..."), never
// issued.
std::string UnknownCode(int i) {
  char code[16];
  std::snprintf(code, sizeof(code), "q%06d", i);
  return code;
}

TEST_F(ShortlinkdTest, UnknownCodesAreFilterNegativesWithoutDiskReads) {
  StartServer();
  FillAndFlush(this, server_->Client(), 50, kToken);
  ASSERT_EQ(302, Get("/A-link-007")->status);  // found in the segment
  // That redirect's click is merged now: merged by the periodic flusher
  // during the lookups below, its two reads would be counted with them.
  ASSERT_EQ(200, Admin("/admin/flush")->status);

  const auto before = Metrics();
  constexpr int kLookups = 300;
  for (int i = 0; i < kLookups; i++) {
    auto res = Get("/" + UnknownCode(i));
    ASSERT_TRUE(res);
    ASSERT_EQ(404, res->status);
  }
  const auto after = Metrics();
  auto delta = [&](const std::string& name) {
    return after.at(name) - before.at(name);
  };
  EXPECT_EQ(kLookups, delta("bloomkv_gets_total"));
  EXPECT_EQ(kLookups, delta(R"(shortlinkd_lookups_total{result="not_found"})"));
  const double fp = delta("bloomkv_filter_false_positives_total");
  RecordProperty("false_positives", static_cast<int>(fp));
  // About 1% at 10 bits per key; the keys are fixed, so this is too.
  EXPECT_LE(fp, 15);
  EXPECT_EQ(kLookups - fp, delta("bloomkv_filter_negatives_total"));
  // Only a false positive costs a block read (the cache is off).
  EXPECT_EQ(fp, delta("bloomkv_data_blocks_read_total"));

  // Malformed codes never reach the store.
  for (const char* path : {"/ab", "/a%21b",
                           "/"
                           "0123456789012345678901234567890123",
                           "/api", "/metrics2!", "/x.y"}) {
    auto res = Get(path);
    ASSERT_TRUE(res);
    EXPECT_EQ(404, res->status) << path;
  }
  EXPECT_EQ(after.at("bloomkv_gets_total"), Metrics().at("bloomkv_gets_total"));
}

TEST_F(ShortlinkdTest, WithoutFiltersUnknownCodesReadBlocks) {
  StartServer({"--bits-per-key", "0"});
  FillAndFlush(this, server_->Client(), 50, kToken);
  const auto before = Metrics();
  constexpr int kLookups = 100;
  for (int i = 0; i < kLookups; i++)
    ASSERT_EQ(404, Get("/" + UnknownCode(i))->status);
  const auto after = Metrics();
  EXPECT_EQ(0, after.at("bloomkv_filter_negatives_total") -
                   before.at("bloomkv_filter_negatives_total"));
  EXPECT_EQ(kLookups, after.at("bloomkv_data_blocks_read_total") -
                          before.at("bloomkv_data_blocks_read_total"));
}

TEST_F(ShortlinkdTest, ExpiryAnswers410ThenCompactionDropsTheLink) {
  StartServer();
  auto res = Create({{"url", "https://tmp.example/"}, {"ttl_seconds", 60}});
  ASSERT_TRUE(res);
  ASSERT_EQ(201, res->status);
  const std::string code = BodyJson(res)["code"];
  EXPECT_EQ(kStartTime + 60, BodyJson(res)["expires_at"]);
  const std::string keeper =
      BodyJson(Create({{"url", "https://keep.example/"}}))["code"];

  SetClock(kStartTime + 59);
  EXPECT_EQ(302, Get("/" + code)->status);
  SetClock(kStartTime + 60);
  EXPECT_EQ(410, Get("/" + code)->status);
  EXPECT_EQ(410, Get("/api/links/" + code)->status);

  // Dedup never hands out the dead link.
  res = Create({{"url", "https://tmp.example/"}, {"ttl_seconds", 60}});
  ASSERT_TRUE(res);
  EXPECT_EQ(201, res->status);
  const std::string second = BodyJson(res)["code"];
  EXPECT_NE(code, second);

  SetClock(kStartTime + 200);
  ASSERT_EQ(200, Admin("/admin/flush")->status);
  ASSERT_EQ(200, Admin("/admin/compact")->status);
  EXPECT_EQ(404, Get("/" + code)->status);
  EXPECT_EQ(404, Get("/" + second)->status);
  EXPECT_EQ(404, Get("/api/links/" + code)->status);
  EXPECT_EQ(302, Get("/" + keeper)->status);
  // Two records, their list entries, the first one's clicks (one redirect)
  // and their shared index entry.
  EXPECT_EQ(6, Metrics().at("bloomkv_compaction_filter_drops_total"));
}

TEST_F(ShortlinkdTest, DeleteNeedsTheAdminToken) {
  StartServer();
  const std::string code =
      BodyJson(Create({{"url", "https://del.example/"}}))["code"];
  auto cli = server_->Client();
  auto res = cli.Delete("/api/links/" + code);
  ASSERT_TRUE(res);
  EXPECT_EQ(401, res->status);
  for (const std::string& auth :
       {std::string("Bearer wrong"), std::string("Bearer ") + kToken + "x",
        std::string(kToken), std::string("Basic ") + kToken}) {
    res = cli.Delete("/api/links/" + code, {{"Authorization", auth}});
    ASSERT_TRUE(res);
    EXPECT_EQ(401, res->status) << auth;
  }
  EXPECT_EQ(401, cli.Post("/admin/flush", "", "")->status);
  EXPECT_EQ(302, Get("/" + code)->status);

  const httplib::Headers auth = {
      {"Authorization", std::string("Bearer ") + kToken}};
  res = cli.Delete("/api/links/" + code, auth);
  ASSERT_TRUE(res);
  EXPECT_EQ(204, res->status);
  EXPECT_EQ(404, Get("/" + code)->status);
  EXPECT_EQ(404, cli.Delete("/api/links/" + code, auth)->status);
  // The index entry went too: the same URL gets a new link.
  res = Create({{"url", "https://del.example/"}});
  EXPECT_EQ(201, res->status);
  EXPECT_NE(code, BodyJson(res)["code"]);
}

// RFC 7235 section 2.1: the auth scheme's name is case-insensitive.
TEST_F(ShortlinkdTest, BearerSchemeIsCaseInsensitive) {
  StartServer();
  auto cli = server_->Client();
  for (const std::string scheme : {"bearer", "BEARER", "bEaReR"}) {
    SCOPED_TRACE(scheme);
    const std::string auth = scheme + " " + kToken;
    const std::string code =
        BodyJson(Create({{"url", "https://" + scheme + ".example/"}}))["code"];
    auto res = cli.Get("/api/links", {{"Authorization", auth}});
    ASSERT_TRUE(res);
    EXPECT_EQ(200, res->status) << res->body;
    res = cli.Delete("/api/links/" + code, {{"Authorization", auth}});
    ASSERT_TRUE(res);
    EXPECT_EQ(204, res->status) << res->body;
  }
  // Still a different scheme, and still the token.
  for (const std::string& auth :
       {std::string("Bearerx ") + kToken, std::string("Bearer"),
        std::string("bearer ") + kToken + "x"}) {
    EXPECT_EQ(401, cli.Get("/api/links", {{"Authorization", auth}})->status)
        << auth;
  }
}

TEST_F(ShortlinkdTest, MetricsAreValidPrometheusText) {
  StartServer();
  Create({{"url", "https://m.example/"}});
  Get("/nope123");
  auto res = Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(200, res->status);
  EXPECT_EQ(0u, res->get_header_value("Content-Type").find("text/plain"));
  const std::regex sample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"]*",?)*\})? -?[0-9.e+]+)");
  std::map<std::string, std::string> types;
  std::istringstream in(res->body);
  std::string line;
  int samples = 0;
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.starts_with("# TYPE ")) {
      std::istringstream t(line.substr(7));
      std::string name, type;
      t >> name >> type;
      types[name] = type;
      continue;
    }
    if (line.starts_with("# HELP ")) continue;
    ASSERT_TRUE(std::regex_match(line, m, sample)) << line;
    std::string family = m[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (family.ends_with(suffix) && !types.count(family)) {
        family = family.substr(0, family.size() - std::strlen(suffix));
      }
    }
    EXPECT_TRUE(types.count(family)) << "no # TYPE before " << line;
    samples++;
  }
  EXPECT_GT(samples, 20);
  for (const char* name :
       {"shortlinkd_http_requests_total",
        "shortlinkd_http_request_duration_seconds", "shortlinkd_lookups_total",
        "shortlinkd_links_created_total", "bloomkv_filter_negatives_total",
        "bloomkv_filter_false_positives_total",
        "bloomkv_data_blocks_read_total", "bloomkv_bytes_read_total"}) {
    EXPECT_TRUE(types.count(name)) << name;
  }
  EXPECT_EQ("histogram", types["shortlinkd_http_request_duration_seconds"]);
  const auto m = Metrics();
  EXPECT_EQ(
      1,
      m.at(
          R"(shortlinkd_http_request_duration_seconds_count{route="redirect"})"));
  EXPECT_EQ(
      1,
      m.at(
          R"(shortlinkd_http_request_duration_seconds_bucket{route="redirect",le="+Inf"})"));
}

TEST_F(ShortlinkdTest, RestartKeepsTheLinks) {
  StartServer();
  const std::string code =
      BodyJson(Create({{"url", "https://r.example/"}}))["code"];
  ASSERT_EQ(201,
            Create({{"url", "https://s.example/"}, {"alias", "stay"}})->status);
  EXPECT_EQ(0, server_->Stop(SIGTERM)) << server_->Log();

  StartServer();
  EXPECT_EQ("https://r.example/",
            Get("/" + code)->get_header_value("Location"));
  EXPECT_EQ("https://s.example/", Get("/stay")->get_header_value("Location"));
  auto res = Create({{"url", "https://r.example/"}});
  EXPECT_EQ(200, res->status);
  EXPECT_EQ(code, BodyJson(res)["code"]);
  EXPECT_EQ(0, server_->Stop(SIGINT)) << server_->Log();
}

TEST_F(ShortlinkdTest, BadInputsAre400JsonAndStoreNothing) {
  StartServer();
  const std::vector<std::string> bodies = {
      "",
      "not json",
      "{\"url\": ",
      "[]",
      "\"https://a.example/\"",
      "{}",
      R"({"url": null})",
      R"({"url": 42})",
      R"({"url": ""})",
      R"j({"url": "javascript:alert(1)"})j",
      R"j({"url": "JAVASCRIPT:alert(1)"})j",
      R"({"url": "data:text/html,hi"})",
      R"({"url": "file:///etc/passwd"})",
      R"({"url": "https://"})",
      R"({"url": "example.com"})",
      R"({"url": "https://a.example/x y"})",
      R"({"url": "https://a.example/\u0001"})",
      R"({"url": "https://a.example/\r\nX: y"})",
      R"({"url": "https://user:pw@a.example/"})",
      "{\"url\": \"https://a.example/" + std::string(2100, 'a') + "\"}",
      R"({"url": "https://a.example/", "ttl_seconds": 0})",
      R"({"url": "https://a.example/", "ttl_seconds": -5})",
      R"({"url": "https://a.example/", "ttl_seconds": 1.5})",
      R"({"url": "https://a.example/", "ttl_seconds": "60"})",
      R"({"url": "https://a.example/", "ttl_seconds": 99999999999999})",
      R"({"url": "https://a.example/", "ttl_seconds": 18446744073709551615})",
      R"({"url": "https://a.example/", "alias": 7})",
      R"({"url": "https://a.example/", "alias": "a"})",
      R"({"url": "https://./"})",
      R"({"url": "https://.../x"})",
      "{\"url\": \"https://a.example/\xff\"}",
      std::string(5000, '[') + std::string(5000, ']'),
  };
  auto cli = server_->Client();
  for (const std::string& body : bodies) {
    auto res = cli.Post("/api/links", body, "application/json");
    ASSERT_TRUE(res) << body.substr(0, 60);
    EXPECT_EQ(400, res->status) << body.substr(0, 60);
    const json j = BodyJson(res);
    EXPECT_TRUE(j.is_object() && j.contains("error") && j["error"].is_string())
        << res->body;
  }
  // Too large a body: refused before it is parsed.
  const std::string big =
      "{\"url\": \"https://a.example/" + std::string(20000, 'a') + "\"}";
  auto res = cli.Post("/api/links", big, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(413, res->status);
  EXPECT_TRUE(BodyJson(res).contains("error"));

  const auto m = Metrics();
  EXPECT_EQ(0, m.at("shortlinkd_links_created_total"));
  // No write reached the store: nothing to flush.
  ASSERT_EQ(200, Admin("/admin/flush")->status);
  EXPECT_EQ(0, Metrics().at("bloomkv_flushes_total"));
}

// Sends raw bytes on a fresh connection and reads until the server closes
// it or 2 s pass.
std::string RawExchange(int port, const std::string& bytes) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    timeval tv{2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    (void)!write(fd, bytes.data(), bytes.size());
    shutdown(fd, SHUT_WR);
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) reply.append(buf, n);
  }
  close(fd);
  return reply;
}

TEST_F(ShortlinkdTest, SurvivesGarbageRequests) {
  StartServer();
  bloomkv::Random rnd(0x5eed);
  std::vector<std::string> garbage = {
      "GARBAGE\r\n\r\n",
      "GET\r\n\r\n",
      "GET / HTTP/9.9\r\n\r\n",
      "POST /api/links HTTP/1.1\r\nContent-Length: "
      "99999999999999999999\r\n\r\n{}",
      "POST /api/links HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
      "POST /api/links HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "POST /api/links HTTP/1.1\r\nContent-Length: 10\r\n\r\n{\"u",
      "GET /" + std::string(100000, 'a') + " HTTP/1.1\r\n\r\n",
      "GET / HTTP/1.1\r\nX: " + std::string(100000, 'b') + "\r\n\r\n",
      "GET /%00%ff%zz HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /api/links/%ff%fe HTTP/1.1\r\nHost: x\r\n\r\n",
      "DELETE /api/links/ HTTP/1.1\r\nAuthorization: Bearer\r\n\r\n",
      std::string("\0\0\0\0\xff\xfe", 6),
  };
  for (int i = 0; i < 20; i++) {
    garbage.push_back(bloomkv::test::RandomBytes(&rnd, 1 + rnd.Uniform(2000)));
  }
  for (const std::string& g : garbage) {
    RawExchange(server_->port(), g);
    auto res = Get("/healthz");
    ASSERT_TRUE(res) << "server gone after " << g.substr(0, 40);
    ASSERT_EQ(200, res->status);
  }
  // Methods and paths nobody serves.
  auto cli = server_->Client();
  EXPECT_EQ(501, cli.Put("/api/links", "{}", "application/json")->status);
  EXPECT_EQ(404, cli.Get("/a/b/c")->status);
  EXPECT_EQ(405, cli.Post("/", "{}", "application/json")->status);
  EXPECT_EQ(0, server_->Stop(SIGTERM)) << server_->Log();
}

// ---------------------------------------------------------------------------
// The HTTP edge: framing, limits, pipelining, slow and many clients, each
// replayed with raw sockets the way an attacker would send them.

using Ms = std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// One parsed HTTP response.
struct RawResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// A raw client connection to 127.0.0.1:port.
class RawConn {
 public:
  explicit RawConn(int port, bool nonblocking_connect = false) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (nonblocking_connect) fcntl(fd_, F_SETFL, O_NONBLOCK);
    const int rc =
        connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    connected_ = rc == 0;
  }
  RawConn(const RawConn&) = delete;
  RawConn& operator=(const RawConn&) = delete;
  ~RawConn() { close(fd_); }

  // For a non-blocking connect: true once the handshake has completed.
  bool Established() {
    if (connected_) return true;
    pollfd p{fd_, POLLOUT, 0};
    if (poll(&p, 1, 0) != 1) return false;
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return false;
    fcntl(fd_, F_SETFL, 0);
    connected_ = true;
    return true;
  }

  // Writes everything; false if the peer is gone.
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // True if response bytes are waiting to be read.
  bool Readable() {
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, 0) == 1;
  }

  // Reads one response (framed by Content-Length, or by close); nullopt if
  // none is complete within `timeout`.
  std::optional<RawResponse> Read(Ms timeout = Ms(2000)) {
    const auto deadline = SteadyClock::now() + timeout;
    for (;;) {
      const size_t end = in_.find("\r\n\r\n");
      if (end != std::string::npos) {
        RawResponse r;
        std::istringstream head(in_.substr(0, end));
        std::string line, version;
        std::getline(head, line);
        std::istringstream(line) >> version >> r.status;
        while (std::getline(head, line)) {
          if (!line.empty() && line.back() == '\r') line.pop_back();
          const size_t colon = line.find(':');
          if (colon == std::string::npos) continue;
          std::string name = line.substr(0, colon);
          for (char& c : name) c = static_cast<char>(std::tolower(c));
          size_t v = colon + 1;
          while (v < line.size() && line[v] == ' ') v++;
          r.headers[name] = line.substr(v);
        }
        const size_t length =
            r.headers.count("content-length")
                ? std::stoul(r.headers["content-length"])
                : (r.status == 204 || r.status == 100 ? 0 : std::string::npos);
        if (length != std::string::npos && in_.size() >= end + 4 + length) {
          r.body = in_.substr(end + 4, length);
          in_.erase(0, end + 4 + length);
          return r;
        }
      }
      if (eof_) return std::nullopt;
      if (!Fill(deadline)) return std::nullopt;
    }
  }

  // True if the server closes the connection within `timeout` (bytes that
  // arrive first are kept for Read).
  bool ClosedWithin(Ms timeout = Ms(2000)) {
    const auto deadline = SteadyClock::now() + timeout;
    while (!eof_) {
      if (!Fill(deadline)) return eof_;
    }
    return true;
  }
  // Bytes received but not consumed by Read.
  const std::string& unread() const { return in_; }

 private:
  // Reads more bytes; false on timeout. Sets eof_ on close or reset.
  bool Fill(SteadyClock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<Ms>(deadline - SteadyClock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) != 1) return false;
    char buf[65536];
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) {
      eof_ = true;
    } else {
      in_.append(buf, static_cast<size_t>(n));
    }
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string in_;
};

// Resident set size of a process in KiB, from /proc/PID/status.
long RssKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("VmRSS:")) return std::stol(line.substr(6));
  }
  return -1;
}

constexpr char kPostHead[] =
    "POST /api/links HTTP/1.1\r\nHost: x\r\n"
    "Content-Type: application/json\r\n";

std::string Chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  return size + std::string(data) + "\r\n";
}

// A body over the limit, whatever its framing, is answered 413 while it is
// still arriving, and the connection is closed: the server never holds more
// than the limit. The client sends up to 32 MiB and stops at the answer.
TEST_F(ShortlinkdTest, OversizedBodiesAre413InEveryFraming) {
  StartServer();
  const std::string json_start = "{\"url\": \"https://a.example/";
  struct Case {
    std::string name;
    std::string head;                       // request head, through \r\n\r\n
    std::function<std::string(int)> piece;  // the i-th piece of the body
  };
  const std::string big_piece(64 << 10, 'a');
  const std::vector<Case> cases = {
      {"content-length",
       std::string(kPostHead) + "Content-Length: 33554432\r\n\r\n",
       [&](int i) { return i == 0 ? json_start : big_piece; }},
      {"one large chunk per write",
       std::string(kPostHead) + "Transfer-Encoding: chunked\r\n\r\n",
       [&](int i) { return Chunk(i == 0 ? json_start : big_piece); }},
      {"one-byte chunks",
       std::string(kPostHead) + "Transfer-Encoding: chunked\r\n\r\n",
       [&](int i) {
         std::string s = i == 0 ? Chunk(json_start) : "";
         for (int k = 0; k < 4096; k++) s += Chunk("a");
         return s;
       }},
      {"chunk extensions",
       std::string(kPostHead) + "Transfer-Encoding: chunked\r\n\r\n",
       [&](int) { return "1;ext=" + std::string(1000, 'e') + "\r\na\r\n"; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const long rss_before = RssKib(server_->pid());
    RawConn conn(server_->port());
    ASSERT_TRUE(conn.Send(c.head));
    size_t sent = 0;
    for (int i = 0; sent < (32u << 20) && !conn.Readable(); i++) {
      const std::string piece = c.piece(i);
      if (!conn.Send(piece)) break;
      sent += piece.size();
    }
    auto res = conn.Read();
    ASSERT_TRUE(res) << "no answer after " << sent << " bytes";
    EXPECT_EQ(413, res->status) << res->body;
    EXPECT_TRUE(json::parse(res->body, nullptr, false).contains("error"));
    EXPECT_TRUE(conn.ClosedWithin());
    const long rss_after = RssKib(server_->pid());
    EXPECT_LT(rss_after - rss_before, 8 << 10)
        << "RSS " << rss_before << " -> " << rss_after << " KiB";
    ASSERT_EQ(200, Get("/healthz")->status);
  }
  EXPECT_EQ(0, Metrics().at("shortlinkd_links_created_total"));
}

// Requests whose framing two parsers could read differently (the basis of
// request smuggling) are refused with 400 and the connection closed, so
// nothing after them is executed.
TEST_F(ShortlinkdTest, AmbiguousFramingIs400AndCloses) {
  StartServer();
  const std::string smuggled =
      "DELETE /api/links/abcdefg HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string body = R"({"url": "https://smuggle.example/"})";
  const std::string cl = std::to_string(body.size());
  const std::vector<std::string> requests = {
      // Two Content-Lengths that differ, as two headers or as a list.
      std::string(kPostHead) + "Content-Length: " + cl +
          "\r\nContent-Length: 5\r\n\r\n" + body,
      std::string(kPostHead) + "Content-Length: 5\r\nContent-Length: " + cl +
          "\r\n\r\n" + body,
      std::string(kPostHead) + "Content-Length: " + cl + ", 5\r\n\r\n" + body,
      // Content-Length and Transfer-Encoding together.
      std::string(kPostHead) + "Content-Length: 5\r\n" +
          "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled,
      std::string(kPostHead) + "Transfer-Encoding: chunked\r\n" +
          "Content-Length: " + cl + "\r\n\r\n" + Chunk(body) + "0\r\n\r\n",
      // Transfer codings other than exactly "chunked".
      std::string(kPostHead) + "Transfer-Encoding: chunked, identity\r\n\r\n" +
          Chunk(body) + "0\r\n\r\n",
      std::string(kPostHead) + "Transfer-Encoding: chunked\r\n" +
          "Transfer-Encoding: chunked\r\n\r\n" + Chunk(body) + "0\r\n\r\n",
      std::string(kPostHead) + "Transfer-Encoding: xchunked\r\n\r\n" + body,
      // Lengths that some parsers read as numbers.
      std::string(kPostHead) + "Content-Length: +" + cl + "\r\n\r\n" + body,
      std::string(kPostHead) + "Content-Length: 0x10\r\n\r\n" + body,
      std::string(kPostHead) + "Content-Length: " + cl + "x\r\n\r\n" + body,
      std::string(kPostHead) + "Content-Length:\r\n\r\n" + body,
      // Header syntax that hides a header from one parser.
      std::string(kPostHead) + "Transfer-Encoding : chunked\r\n\r\n" +
          Chunk(body) + "0\r\n\r\n",
      std::string(kPostHead) + "X: y\r\n Transfer-Encoding: chunked\r\n\r\n" +
          Chunk(body) + "0\r\n\r\n",
      "POST /api/links HTTP/1.1\nHost: x\nContent-Length: " + cl + "\n\n" +
          body,
      std::string(kPostHead) + "Content-Length: " + cl + "\r\r\n\r\n" + body,
      // A malformed chunk.
      std::string(kPostHead) + "Transfer-Encoding: chunked\r\n\r\n" + "zz\r\n" +
          body + "\r\n0\r\n\r\n",
      std::string(kPostHead) + "Transfer-Encoding: chunked\r\n\r\n" +
          "5\r\nabcdefg\r\n0\r\n\r\n",
  };
  for (const std::string& request : requests) {
    SCOPED_TRACE(request);
    RawConn conn(server_->port());
    // A follow-up request in the same write must not be answered.
    ASSERT_TRUE(
        conn.Send(request + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    auto res = conn.Read();
    ASSERT_TRUE(res);
    EXPECT_EQ(400, res->status) << res->body;
    EXPECT_TRUE(conn.ClosedWithin());
    EXPECT_EQ("", conn.unread());
  }
  EXPECT_EQ(0, Metrics().at("shortlinkd_links_created_total"));
}

// RFC 9112 section 3.2: an HTTP/1.1 request without a Host, or with two, or
// with one that is no host, is 400 and closes the connection. HTTP/1.0
// needs none.
TEST_F(ShortlinkdTest, Http11RequestsNeedExactlyOneValidHost) {
  StartServer();
  for (const std::string request :
       {"GET /healthz HTTP/1.1\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: x y\r\n\r\n",
        "POST /api/links HTTP/1.1\r\nContent-Type: application/json\r\n"
        "Content-Length: 34\r\n\r\n{\"url\": \"https://nohost.example/\"}"}) {
    SCOPED_TRACE(request);
    RawConn conn(server_->port());
    ASSERT_TRUE(conn.Send(request));
    auto res = conn.Read();
    ASSERT_TRUE(res);
    EXPECT_EQ(400, res->status) << res->body;
    EXPECT_TRUE(conn.ClosedWithin());
  }
  RawConn conn(server_->port());
  ASSERT_TRUE(conn.Send("GET /healthz HTTP/1.0\r\n\r\n"));
  auto res = conn.Read();
  ASSERT_TRUE(res);
  EXPECT_EQ(200, res->status);
  EXPECT_EQ(0, Metrics().at("shortlinkd_links_created_total"));
}

// A method no route has is 501; a method the path is not served for is 405
// with Allow naming the ones it is; a path nothing serves is 404.
TEST_F(ShortlinkdTest, UnknownMethodIs501AndUnservedMethodIs405WithAllow) {
  StartServer();
  struct Case {
    std::string method, path;
    int status;
    std::string allow;  // for 405
  };
  const std::vector<Case> cases = {
      {"PUT", "/api/links", 501, ""},
      {"OPTIONS", "/", 501, ""},
      {"TRACE", "/healthz", 501, ""},
      {"BREW", "/abcdefg", 501, ""},
      {"get", "/healthz", 501, ""},  // methods are case-sensitive
      {"POST", "/", 405, "GET, HEAD"},
      {"DELETE", "/healthz", 405, "GET, HEAD"},
      {"POST", "/abcdefg", 405, "GET, HEAD"},
      {"GET", "/admin/flush", 405, "POST"},
      {"DELETE", "/api/links", 405, "GET, HEAD, POST"},
      {"POST", "/api/links/abcdefg", 405, "GET, HEAD, PATCH, DELETE"},
      {"PATCH", "/openapi.json", 405, "GET, HEAD"},
      {"GET", "/a/b/c", 404, ""},
      {"DELETE", "/admin/other", 404, ""},
  };
  RawConn conn(server_->port());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.method + " " + c.path);
    ASSERT_TRUE(
        conn.Send(c.method + " " + c.path + " HTTP/1.1\r\nHost: x\r\n\r\n"));
    auto res = conn.Read();
    ASSERT_TRUE(res);
    EXPECT_EQ(c.status, res->status) << res->body;
    EXPECT_TRUE(json::parse(res->body, nullptr, false)["error"].is_string());
    if (c.status == 405) {
      EXPECT_EQ(c.allow, res->headers["allow"]);
    } else {
      EXPECT_EQ(0u, res->headers.count("allow"));
    }
  }
}

// Creating needs a JSON body declared as such: an HTML form on another site
// can post form-encoded, multipart and text/plain bodies (even one that
// reads as JSON) through a visitor's browser, never application/json.
TEST_F(ShortlinkdTest, CreatingNeedsAJsonContentType) {
  StartServer();
  const std::string body = R"({"url": "https://csrf.example/"})";
  auto cli = server_->Client();
  for (const std::string type :
       {"application/x-www-form-urlencoded", "multipart/form-data; boundary=b",
        "text/plain", "application/jsonx", "application/json-seq",
        "text/json"}) {
    auto res = cli.Post("/api/links", body, type);
    ASSERT_TRUE(res) << type;
    EXPECT_EQ(415, res->status) << type;
    EXPECT_TRUE(BodyJson(res)["error"].is_string()) << res->body;
  }
  RawConn conn(server_->port());
  ASSERT_TRUE(
      conn.Send("POST /api/links HTTP/1.1\r\nHost: x\r\n"
                "Content-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body));
  auto raw = conn.Read();
  ASSERT_TRUE(raw);
  EXPECT_EQ(415, raw->status) << "without a Content-Type";
  EXPECT_EQ(0, Metrics().at("shortlinkd_links_created_total"));

  // The media type in any case, with parameters.
  const std::vector<std::pair<std::string, int>> accepted = {
      {"application/json; charset=utf-8", 201},
      {"Application/JSON", 200},
      {"application/json ; charset=UTF-8", 200},
  };
  for (const auto& [type, status] : accepted) {
    auto res = cli.Post("/api/links", body, type);
    ASSERT_TRUE(res) << type;
    EXPECT_EQ(status, res->status) << type << ": " << res->body;
  }
  EXPECT_EQ(1, Metrics().at("shortlinkd_links_created_total"));
}

// A chunk line ending in a bare LF is refused as soon as the LF arrives,
// like a header line: a client that then sends nothing more does not hold
// the connection until the read timeout (here a minute).
TEST_F(ShortlinkdTest, BareLfInAChunkLineIs400AtOnce) {
  StartServer({"--read-timeout-ms", "60000"});
  for (const std::string chunks :
       {"3\n", "3\nabc", "3\r\nabc\n", "0\n", "0\r\nT: v\n"}) {
    SCOPED_TRACE(chunks);
    RawConn conn(server_->port());
    ASSERT_TRUE(conn.Send(std::string(kPostHead) +
                          "Transfer-Encoding: chunked\r\n\r\n" + chunks));
    auto res = conn.Read(Ms(2000));
    ASSERT_TRUE(res) << "no answer within 2 s";
    EXPECT_EQ(400, res->status) << res->body;
    EXPECT_TRUE(conn.ClosedWithin());
  }
  EXPECT_EQ(0, Metrics().at("shortlinkd_links_created_total"));
}

// Several requests in one stream are all answered, in order, however the
// stream is cut into writes (seeded random cuts).
TEST_F(ShortlinkdTest, PipelinedRequestsAreAnsweredInOrder) {
  StartServer();
  const std::string body = R"({"url": "https://pipe.example/"})";
  const std::string chunked =
      Chunk(body.substr(0, 10)) + Chunk(body.substr(10)) + "0\r\n\r\n";
  const std::string stream =
      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /nope123 HTTP/1.1\r\nHost: x\r\n\r\n" +
      std::string(kPostHead) +
      "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body +
      kPostHead + "Transfer-Encoding: chunked\r\n\r\n" + chunked +
      "POST /admin/flush HTTP/1.1\r\nHost: x\r\n"
      "Authorization: Bearer " +
      kToken +
      "\r\n\r\n"
      "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  // The create is 201 the first time, then 200 (the same link).
  std::vector<int> expected = {200, 404, 201, 200, 200, 200};

  // Round 0 sends the whole stream in one write; every other round cuts it
  // at random.
  std::vector<uint64_t> seeds = bloomkv::test::TestSeeds();
  seeds.insert(seeds.begin(), 0);
  for (size_t round = 0; round < seeds.size(); round++) {
    const uint64_t seed = seeds[round];
    SCOPED_TRACE(round == 0 ? "one write" : "seed=" + std::to_string(seed));
    bloomkv::Random rnd(seed);
    RawConn conn(server_->port());
    size_t pos = 0;
    while (pos < stream.size()) {
      const size_t n = round == 0 ? stream.size() : 1 + rnd.Uniform(80);
      ASSERT_TRUE(conn.Send(std::string_view(stream).substr(pos, n)));
      pos += n;
      if (round != 0) std::this_thread::sleep_for(Ms(1));
    }
    if (round > 0) expected[2] = 200;
    for (size_t i = 0; i < expected.size(); i++) {
      auto res = conn.Read();
      ASSERT_TRUE(res) << "response " << i << " missing";
      EXPECT_EQ(expected[i], res->status) << i << ": " << res->body;
      if (i == 0) {
        EXPECT_EQ("ok\n", res->body);
      }
    }
    EXPECT_TRUE(conn.ClosedWithin());
    EXPECT_EQ("", conn.unread());
  }
}

// A POST without a body is complete at the end of its headers and is
// answered at once, with the connection still open.
TEST_F(ShortlinkdTest, PostWithoutBodyIsAnsweredAtOnce) {
  StartServer();
  RawConn conn(server_->port());
  ASSERT_TRUE(conn.Send(std::string("POST /admin/compact HTTP/1.1\r\nHost: "
                                    "x\r\nAuthorization: Bearer ") +
                        kToken + "\r\n\r\n"));
  auto res = conn.Read(Ms(2000));
  ASSERT_TRUE(res) << "no answer within 2 s";
  EXPECT_EQ(200, res->status);
  ASSERT_TRUE(conn.Send(std::string(kPostHead) + "\r\n"));
  res = conn.Read(Ms(2000));
  ASSERT_TRUE(res) << "no answer within 2 s";
  EXPECT_EQ(400, res->status);
}

// Connections that arrive while the server is not accepting (here: stopped)
// wait in the listen queue instead of being dropped, then are all served.
TEST_F(ShortlinkdTest, BurstOfConnectionsIsQueuedAndServed) {
  StartServer();
  constexpr int kBurst = 100;
  kill(server_->pid(), SIGSTOP);
  std::vector<std::unique_ptr<RawConn>> conns;
  for (int i = 0; i < kBurst; i++) {
    conns.push_back(std::make_unique<RawConn>(server_->port(), true));
  }
  // The kernel completes the handshakes itself while the backlog has room.
  int established = 0;
  const auto deadline = SteadyClock::now() + Ms(2000);
  while (SteadyClock::now() < deadline) {
    established = 0;
    for (auto& c : conns) established += c->Established();
    if (established == kBurst) break;
    std::this_thread::sleep_for(Ms(10));
  }
  kill(server_->pid(), SIGCONT);
  EXPECT_EQ(kBurst, established);
  int served = 0;
  for (auto& c : conns) {
    if (!c->Established()) continue;
    ASSERT_TRUE(c->Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  }
  for (auto& c : conns) {
    auto res = c->Read(Ms(5000));
    served += res && res->status == 200;
  }
  EXPECT_EQ(kBurst, served);
}

// Clients that send a request one byte at a time hold no worker: with four
// times as many of them as workers, /healthz is still answered promptly.
// (The bound is generous: this checks that nothing waits for them.)
TEST_F(ShortlinkdTest, SlowClientsDoNotHoldWorkers) {
  StartServer();  // 4 worker threads
  constexpr int kSlow = 16;
  const std::string request = std::string(kPostHead) +
                              "Content-Length: 100\r\n\r\n" +
                              std::string(100, ' ');
  std::vector<std::unique_ptr<RawConn>> slow;
  for (int i = 0; i < kSlow; i++) {
    slow.push_back(std::make_unique<RawConn>(server_->port()));
  }
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    for (size_t pos = 0; pos < request.size() && !done; pos++) {
      for (auto& c : slow) c->Send(request.substr(pos, 1));
      std::this_thread::sleep_for(Ms(50));
    }
  });
  std::this_thread::sleep_for(Ms(300));
  for (int i = 0; i < 3; i++) {
    const auto start = SteadyClock::now();
    auto cli = server_->Client();
    cli.set_read_timeout(4, 0);
    auto res = cli.Get("/healthz");
    const auto took = SteadyClock::now() - start;
    ASSERT_TRUE(res);
    EXPECT_EQ(200, res->status);
    EXPECT_LT(took, Ms(2000));
  }
  done = true;
  trickle.join();
}

// A request that is not complete within --read-timeout-ms is answered 408
// and closed; an idle keep-alive connection is closed after
// --idle-timeout-ms. Neither needs a worker meanwhile.
TEST_F(ShortlinkdTest, SlowAndIdleConnectionsTimeOut) {
  StartServer({"--read-timeout-ms", "300", "--idle-timeout-ms", "300"});
  RawConn partial(server_->port());
  ASSERT_TRUE(partial.Send("GET /healthz HTTP/1.1\r\nHo"));
  RawConn idle(server_->port());
  ASSERT_TRUE(idle.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto res = idle.Read();
  ASSERT_TRUE(res);
  EXPECT_EQ(200, res->status);
  // A trickle that never completes the request does not extend the time.
  for (int i = 0; i < 10 && partial.Send("s"); i++) {
    std::this_thread::sleep_for(Ms(50));
  }
  res = partial.Read(Ms(3000));
  ASSERT_TRUE(res);
  EXPECT_EQ(408, res->status);
  EXPECT_TRUE(partial.ClosedWithin(Ms(3000)));
  EXPECT_TRUE(idle.ClosedWithin(Ms(3000)));
  EXPECT_EQ("", idle.unread());
}

// Clicks through the binary: counted per UTC day under the test clock,
// written only by the flusher (here: /admin/flush and shutdown, the interval
// being an hour), and kept across a graceful restart.
TEST_F(ShortlinkdTest, ClicksAreCountedPerDayAndSurviveRestart) {
  const std::vector<std::string> flags = {"--stats-flush-ms", "3600000"};
  StartServer(flags);
  const std::string code =
      BodyJson(Create({{"url", "https://clicks.example/"}}))["code"];
  const int64_t midnight = 1'700'006'400;  // 2023-11-15 00:00:00 UTC
  SetClock(midnight - 10);
  for (int i = 0; i < 5; i++) ASSERT_EQ(302, Get("/" + code)->status);
  SetClock(midnight + 5);
  for (int i = 0; i < 3; i++) ASSERT_EQ(302, Get("/" + code)->status);
  ASSERT_EQ(404, Get("/nosuch1")->status);  // not a click on anything

  auto res = Get("/api/links/" + code);
  ASSERT_EQ(200, res->status);
  EXPECT_EQ(0, BodyJson(res)["clicks"]["total"]) << "written before a flush";
  EXPECT_TRUE(BodyJson(res)["clicks"]["last_access"].is_null());

  ASSERT_EQ(200, Admin("/admin/flush")->status);
  res = Get("/api/links/" + code);
  ASSERT_EQ(200, res->status);
  EXPECT_EQ(json::parse(R"({"total": 8, "last_access": 1700006405,
                            "daily": [{"day": "2023-11-14", "count": 5},
                                      {"day": "2023-11-15", "count": 3}]})"),
            BodyJson(res)["clicks"])
      << res->body;

  // Clicks gathered at shutdown are written then.
  for (int i = 0; i < 2; i++) ASSERT_EQ(302, Get("/" + code)->status);
  EXPECT_EQ(0, server_->Stop(SIGTERM)) << server_->Log();
  StartServer(flags);
  res = Get("/api/links/" + code);
  ASSERT_EQ(200, res->status);
  EXPECT_EQ(10, BodyJson(res)["clicks"]["total"]) << res->body;
  EXPECT_EQ(5, BodyJson(res)["clicks"]["daily"][1]["count"]) << res->body;
}

TEST_F(ShortlinkdTest, ListingIsPaginatedNewestFirstForTheAdminOnly) {
  StartServer();
  std::vector<std::string> codes;  // oldest first
  for (int i = 0; i < 5; i++) {
    SetClock(kStartTime + i);
    codes.push_back(BodyJson(Create(
        {{"url", "https://list.example/" + std::to_string(i)}}))["code"]);
  }
  ASSERT_EQ(302, Get("/" + codes[4])->status);
  ASSERT_EQ(200, Admin("/admin/flush")->status);

  auto cli = server_->Client();
  auto res = cli.Get("/api/links");
  ASSERT_TRUE(res);
  EXPECT_EQ(401, res->status);
  EXPECT_TRUE(BodyJson(res).contains("error"));
  EXPECT_EQ(401,
            cli.Get("/api/links", {{"Authorization", "Bearer wrong"}})->status);

  const httplib::Headers auth = {
      {"Authorization", std::string("Bearer ") + kToken}};
  std::vector<std::string> listed;
  std::string path = "/api/links?limit=2";
  for (int page = 0; page < 10; page++) {
    res = cli.Get(path, auth);
    ASSERT_TRUE(res);
    ASSERT_EQ(200, res->status) << res->body;
    const json body = BodyJson(res);
    for (const json& link : body["links"]) {
      listed.push_back(link["code"]);
      EXPECT_FALSE(link["clicks"].contains("daily"));
    }
    if (page == 0) {
      EXPECT_EQ(1, body["links"][0]["clicks"]["total"]) << res->body;
      EXPECT_EQ("https://list.example/4", body["links"][0]["url"]);
    }
    if (body["next_cursor"].is_null()) break;
    path =
        "/api/links?limit=2&cursor=" + body["next_cursor"].get<std::string>();
  }
  EXPECT_EQ((std::vector<std::string>{codes[4], codes[3], codes[2], codes[1],
                                      codes[0]}),
            listed);
  res = cli.Get("/api/links", auth);  // default limit: one page
  EXPECT_EQ(5u, BodyJson(res)["links"].size());
  EXPECT_TRUE(BodyJson(res)["next_cursor"].is_null());

  for (const char* query :
       {"cursor=zz", "cursor=abc", "cursor=00", "cursor=%41%41",
        "cursor=ffffffffffffffff", "cursor=ffffffffffffffff2a2a2a", "limit=0",
        "limit=1001", "limit=x", "limit=", "limit=-1"}) {
    res = cli.Get("/api/links?" + std::string(query), auth);
    ASSERT_TRUE(res);
    EXPECT_EQ(400, res->status) << query;
    EXPECT_TRUE(BodyJson(res).contains("error")) << query;
  }
  const auto m = Metrics();
  EXPECT_EQ(
      2, m.at(R"(shortlinkd_http_requests_total{route="list",status="401"})"));
}

TEST_F(ShortlinkdTest, PatchMovesDedupAndChangesExpiry) {
  StartServer();
  const std::string code =
      BodyJson(Create({{"url", "https://old.example/"}}))["code"];
  auto cli = server_->Client();
  const std::string path = "/api/links/" + code;
  const std::string new_url = R"({"url": "https://new.example/p"})";
  EXPECT_EQ(401, cli.Patch(path, new_url, "application/json")->status);
  EXPECT_EQ(401, cli.Patch(path, {{"Authorization", "Bearer nope"}}, new_url,
                           "application/json")
                     ->status);

  const httplib::Headers auth = {
      {"Authorization", std::string("Bearer ") + kToken}};
  auto patch = [&](const std::string& p, const std::string& body) {
    return cli.Patch(p, auth, body, "application/json");
  };
  EXPECT_EQ(404, patch("/api/links/nosuch1", new_url)->status);
  EXPECT_EQ(404, patch("/api/links/no!", new_url)->status);
  for (const char* bad :
       {"", "{", "[]", "{}", R"({"url": 5})", R"({"url": null})",
        R"({"url": "ftp://x.example/"})", R"({"ttl_seconds": 0})",
        R"({"ttl_seconds": "60"})", R"({"ttl_seconds": 315360001})"}) {
    auto res = patch(path, bad);
    ASSERT_TRUE(res);
    EXPECT_EQ(400, res->status) << bad;
    EXPECT_TRUE(BodyJson(res).contains("error")) << bad;
  }
  EXPECT_EQ("https://old.example/",
            Get("/" + code)->get_header_value("Location"));

  auto res = patch(path, new_url);
  ASSERT_EQ(200, res->status) << res->body;
  EXPECT_EQ("https://new.example/p", BodyJson(res)["url"]);
  EXPECT_EQ(code, BodyJson(res)["code"]);
  EXPECT_EQ("https://new.example/p",
            Get("/" + code)->get_header_value("Location"));
  // The new URL dedups to the patched code; the old one makes a new link.
  res = Create({{"url", "https://NEW.example/p"}});
  EXPECT_EQ(200, res->status);
  EXPECT_EQ(code, BodyJson(res)["code"]);
  res = Create({{"url", "https://old.example/"}});
  EXPECT_EQ(201, res->status);
  EXPECT_NE(code, BodyJson(res)["code"]);

  res = patch(path, R"({"ttl_seconds": 60})");
  ASSERT_EQ(200, res->status);
  EXPECT_EQ(kStartTime + 60, BodyJson(res)["expires_at"]);
  res = patch(path, R"({"ttl_seconds": null})");
  ASSERT_EQ(200, res->status);
  EXPECT_FALSE(BodyJson(res).contains("expires_at"));
  EXPECT_EQ(200, patch(path, R"({"ttl_seconds": 60})")->status);
  SetClock(kStartTime + 60);
  EXPECT_EQ(410, Get("/" + code)->status);
  EXPECT_EQ(410, patch(path, R"({"ttl_seconds": null})")->status);
  const auto m = Metrics();
  EXPECT_EQ(
      1, m.at(R"(shortlinkd_http_requests_total{route="patch",status="410"})"));
}

}  // namespace
