// End-to-end tests of shortlinkd: the real binary on a free loopback port,
// driven over HTTP. Each test starts its own server on its own data
// directory; the clock is a file the test writes (--test-clock-file).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"

extern char** environ;

namespace {

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
  // Two records and their shared index entry.
  EXPECT_EQ(3, Metrics().at("bloomkv_compaction_filter_drops_total"));
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
  EXPECT_EQ(404, cli.Put("/api/links", "{}", "application/json")->status);
  EXPECT_EQ(404, cli.Get("/a/b/c")->status);
  EXPECT_EQ(404, cli.Get("/")->status);
  EXPECT_EQ(0, server_->Stop(SIGTERM)) << server_->Log();
}

}  // namespace
