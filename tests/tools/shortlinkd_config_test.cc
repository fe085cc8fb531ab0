// End-to-end tests of shortlinkd's configuration and operations features
// against the real binary: flag > environment > config file > default, one
// line and a non-zero exit for a bad config or keys file, API keys made by
// `hash-api-key` and reloaded on SIGHUP, rate limits answering 429, and the
// access log's lines (parsed; never a credential in them).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"

extern char** environ;

namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using nlohmann::json;

constexpr char kKey[] = "e2e-api-key-1";
constexpr char kOtherKey[] = "e2e-api-key-2";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Runs the binary with `args`, the environment without any SHORTLINKD_*
// variable plus `env`, stdin from `stdin_file` (if not empty) and stdout and
// stderr into `out_file`. Returns the pid (0 if the binary is not built).
pid_t Spawn(std::vector<std::string> args, const std::vector<std::string>& env,
            const std::string& out_file, const std::string& stdin_file = "") {
#ifdef SHORTLINKD_PATH
  args.insert(args.begin(), SHORTLINKD_PATH);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; e++) {
    if (std::strncmp(*e, "SHORTLINKD_", 11) != 0) env_strings.push_back(*e);
  }
  env_strings.insert(env_strings.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!stdin_file.empty()) {
    posix_spawn_file_actions_addopen(&actions, 0, stdin_file.c_str(), O_RDONLY,
                                     0);
  }
  posix_spawn_file_actions_addopen(&actions, 1, out_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  EXPECT_EQ(0, posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(),
                           envp.data()));
  posix_spawn_file_actions_destroy(&actions);
  return pid;
#else
  (void)args, (void)env, (void)out_file, (void)stdin_file;
  return 0;
#endif
}

int WaitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// WaitExit for a command that should end by itself: one still running after
// `limit` (a server that started when it should have refused to) is killed,
// and its status is -1.
int WaitExitWithin(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class ShortlinkdConfigTest : public testing::Test {
 protected:
  void SetUp() override {
#ifndef SHORTLINKD_PATH
    GTEST_SKIP() << "SHORTLINKD_PATH not defined";
#endif
  }
  void TearDown() override {
    if (pid_ > 0) {
      EXPECT_EQ(0, Stop()) << Log();
    }
  }

  // Runs a command to its end; returns its exit status (-1 if it was still
  // running after 10 s), output in *out.
  int Run(const std::vector<std::string>& args,
          const std::vector<std::string>& env, std::string* out,
          const std::string& stdin_text = "") {
    std::ofstream(dir_.File("stdin")) << stdin_text;
    const pid_t pid =
        Spawn(args, env, dir_.File("run.out"), dir_.File("stdin"));
    const int status = WaitExitWithin(pid, std::chrono::seconds(10));
    *out = ReadFile(dir_.File("run.out"));
    return status;
  }

  // Starts a server on a free port and waits until it answers.
  void Start(std::vector<std::string> args,
             const std::vector<std::string>& env = {}) {
    const std::string port_file = dir_.File("port");
    std::remove(port_file.c_str());
    args.insert(args.end(),
                {"--listen", "127.0.0.1:0", "--port-file", port_file, "--data",
                 dir_.File("data"), "--compact-interval", "0", "--threads", "2",
                 "--block-cache-mb", "0"});
    pid_ = Spawn(args, env, dir_.File("server.log"));
    port_ = 0;
    for (int i = 0; i < 1000 && port_ == 0; i++) {
      std::ifstream in(port_file);
      if (!(in >> port_)) port_ = 0;
      int status;
      ASSERT_EQ(0, waitpid(pid_, &status, WNOHANG)) << "exited: " << Log();
      if (port_ == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_NE(0, port_) << Log();
  }
  int Stop() {
    kill(pid_, SIGTERM);
    const int status = WaitExit(pid_);
    pid_ = -1;
    return status;
  }
  std::string Log() const { return ReadFile(dir_.File("server.log")); }

  httplib::Client Client() const {
    httplib::Client cli("127.0.0.1", port_);
    cli.set_read_timeout(10, 0);
    return cli;
  }
  httplib::Result Create(const std::string& key, int n) {
    httplib::Headers headers;
    if (!key.empty()) headers.emplace("Authorization", "Bearer " + key);
    return Client().Post(
        "/api/links", headers,
        json{{"url", "https://example.com/" + std::to_string(n)}}.dump(),
        "application/json");
  }

  std::string HashLine(const std::string& name, const std::string& key) {
    std::string out;
    EXPECT_EQ(0, Run({"hash-api-key", name}, {}, &out, key + "\n")) << out;
    return out;
  }

  bloomkv::test::TempDir dir_{"shortlinkd_config"};
  pid_t pid_ = -1;
  int port_ = 0;
};

TEST_F(ShortlinkdConfigTest, FlagBeatsEnvironmentBeatsFileBeatsDefault) {
  const std::string config = dir_.File("shortlinkd.toml");
  std::ofstream(config) << "# shortlinkd settings\n"
                           "base-url = \"https://file.example\"\n"
                           "admin_token = \"file-token\"\n"
                           "redirect-status = 301\n";
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> env;
    std::string base;  // "" : the default, http://127.0.0.1:<port>
  };
  const std::vector<Case> cases = {
      {{}, {}, ""},
      {{"--config", config}, {}, "https://file.example"},
      {{}, {"SHORTLINKD_CONFIG=" + config}, "https://file.example"},
      {{"--config", config},
       {"SHORTLINKD_BASE_URL=https://env.example"},
       "https://env.example"},
      {{"--config", config, "--base-url", "https://flag.example"},
       {"SHORTLINKD_BASE_URL=https://env.example"},
       "https://flag.example"},
  };
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.base);
    Start(c.args, c.env);
    auto res = Create("", n++);
    ASSERT_TRUE(res);
    ASSERT_EQ(201, res->status) << res->body;
    const std::string base =
        c.base.empty() ? "http://127.0.0.1:" + std::to_string(port_) : c.base;
    EXPECT_EQ(0, json::parse(res->body)["short_url"].get<std::string>().rfind(
                     base + "/", 0))
        << res->body;
    // Settings the flag and environment leave alone still come from the
    // file: the secret and the redirect status.
    const bool from_file = !c.base.empty();
    const std::string code = json::parse(res->body)["code"];
    auto redirect = Client().Get("/" + code);
    ASSERT_TRUE(redirect);
    EXPECT_EQ(from_file ? 301 : 302, redirect->status);
    auto flush = Client().Post(
        "/admin/flush", {{"Authorization", "Bearer file-token"}}, "", "");
    ASSERT_TRUE(flush);
    EXPECT_EQ(from_file ? 200 : 401, flush->status);
    ASSERT_EQ(0, Stop()) << Log();
  }
}

TEST_F(ShortlinkdConfigTest, BadConfigurationExitsWithOneLine) {
  const std::string hash = HashLine("ok", kKey);
  ASSERT_EQ(0u, hash.find("ok:sha256:")) << hash;
  std::ofstream(dir_.File("keys")) << hash << "broken line\n";
  std::ofstream(dir_.File("unknown.toml")) << "threads = 2\nthreds = 4\n";
  std::ofstream(dir_.File("section.ini")) << "[server]\nthreads = 2\n";
  std::ofstream(dir_.File("value.toml")) << "threads = 0\n";
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> env;
    std::string expect;  // in the line
  };
  const std::vector<Case> cases = {
      {{"--config", dir_.File("unknown.toml")}, {}, "unknown key 'threds'"},
      {{},
       {"SHORTLINKD_CONFIG=" + dir_.File("section.ini")},
       "unknown section [server]"},
      {{"--config", dir_.File("value.toml")}, {}, "threads"},
      {{"--config", dir_.File("missing.toml")}, {}, "missing.toml"},
      // A directory opens like a file but reads nothing: it must not pass
      // for an empty config.
      {{"--config", dir_.path()}, {}, "Is a directory"},
      {{"--api-keys-file", dir_.File("keys")}, {}, "keys:2: "},
      {{}, {"SHORTLINKD_RATE_LIMIT_IP=ten/s"}, "--rate-limit-ip"},
      {{"--access-log", dir_.File("no/dir/log")}, {}, "no/dir/log"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(),
                {"--listen", "127.0.0.1:0", "--data", dir_.File("data")});
    std::string out;
    EXPECT_EQ(2, Run(args, c.env, &out)) << out;
    const std::vector<std::string> lines = Lines(out);
    ASSERT_EQ(1u, lines.size()) << out;
    EXPECT_NE(std::string::npos, lines[0].find(c.expect)) << out;
    EXPECT_EQ(0u, lines[0].find("shortlinkd: ")) << out;
  }
}

TEST_F(ShortlinkdConfigTest, ApiKeysLimitsAndAccessLog) {
  const std::string keys = dir_.File("keys");
  std::ofstream(keys) << "# API keys\n" << HashLine("ci", kKey);
  const std::string log = dir_.File("access.log");
  Start({"--api-keys-file", keys, "--rate-limit-key", "2/m",
         "--rate-limit-key-burst", "2", "--access-log", log,
         "--access-log-format", "json"},
        {"SHORTLINKD_ADMIN_TOKEN=env-admin"});
  auto res = Create("", 0);
  ASSERT_TRUE(res);
  EXPECT_EQ(401, res->status);
  EXPECT_EQ(401, Create(kOtherKey, 1)->status);
  EXPECT_EQ(201, Create(kKey, 2)->status);
  EXPECT_EQ(201, Create(kKey, 3)->status);
  res = Create(kKey, 4);
  ASSERT_TRUE(res);
  EXPECT_EQ(429, res->status);
  EXPECT_EQ("30", res->get_header_value("Retry-After"));
  EXPECT_TRUE(json::parse(res->body, nullptr, false)["error"].is_string());
  EXPECT_EQ(201, Create("env-admin", 5)->status);

  // SIGHUP reloads the keys: the new key works once the reload is done.
  std::ofstream(keys) << HashLine("other", kOtherKey);
  kill(pid_, SIGHUP);
  int status = 0;
  for (int i = 0; i < 500 && status != 201; i++) {
    auto r = Create(kOtherKey, 6);
    ASSERT_TRUE(r) << "no answer after SIGHUP: " << Log();
    status = r->status;
    if (status != 201) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  EXPECT_EQ(201, status) << Log();
  EXPECT_EQ(401, Create(kKey, 7)->status);
  ASSERT_EQ(0, Stop()) << Log();

  // The log is complete once the server has stopped.
  const std::vector<std::string> lines = Lines(ReadFile(log));
  ASSERT_GE(lines.size(), 8u) << ReadFile(log);
  int by_status[600] = {};
  for (const std::string& line : lines) {
    for (const char* secret : {kKey, kOtherKey, "env-admin", "Bearer"}) {
      EXPECT_EQ(std::string::npos, line.find(secret)) << line;
    }
    const json j = json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    EXPECT_EQ("127.0.0.1", j["remote_addr"]) << line;
    EXPECT_TRUE(j["method"] == "POST" || j["method"] == "GET") << line;
    EXPECT_TRUE(j["duration_us"].is_number()) << line;
    EXPECT_TRUE(j["bytes"].is_number()) << line;
    EXPECT_TRUE(std::regex_match(
        j["time"].get<std::string>(),
        std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
        << line;
    by_status[j["status"].get<int>()]++;
    if (j["status"] == 201 && j["user"] == "ci") {
      EXPECT_EQ("/api/links", j["path"]);
    }
  }
  EXPECT_EQ(4, by_status[201]);  // ci twice, the admin, other once
  EXPECT_EQ(1, by_status[429]);
  EXPECT_GE(by_status[401], 3);
}

TEST_F(ShortlinkdConfigTest, CommonLogToStdoutAndPerAddressLimit) {
  Start({"--access-log", "-", "--access-log-format", "common",
         "--rate-limit-ip", "1/h", "--rate-limit-ip-burst", "2"});
  EXPECT_EQ(201, Create("", 0)->status);
  EXPECT_EQ(201, Create("", 1)->status);
  auto res = Create("", 2);
  ASSERT_TRUE(res);
  EXPECT_EQ(429, res->status);
  EXPECT_EQ("3600", res->get_header_value("Retry-After"));
  // Not limited: redirects (without --rate-limit-redirects) and health.
  EXPECT_EQ(404, Client().Get("/abcdefg")->status);
  EXPECT_EQ(200, Client().Get("/healthz")->status);
  ASSERT_EQ(0, Stop()) << Log();
  const std::regex common(
      R"re(127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] )re"
      R"re("(\S+) (\S+)" (\d{3}) (\d+) (\d+|-))re");
  std::vector<std::string> requests;
  for (const std::string& line : Lines(Log())) {
    std::smatch m;
    if (!std::regex_match(line, m, common)) continue;  // startup lines
    requests.push_back(m[1].str() + " " + m[2].str() + " " + m[3].str());
  }
  // Every request, in order (Start waits for the port file, not /healthz).
  EXPECT_EQ((std::vector<std::string>{
                "POST /api/links 201", "POST /api/links 201",
                "POST /api/links 429", "GET /abcdefg 404", "GET /healthz 200"}),
            requests)
      << Log();
}

}  // namespace
