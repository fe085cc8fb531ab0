// shortlinkd: the short-link HTTP service, with bloomkv as its store.
//
//   shortlinkd --listen 127.0.0.1:8080 --data ./shortlink-data
//   shortlinkd --data DIR --preload 1000000 --codes-out codes.txt
//   shortlinkd hash-api-key NAME < key     (prints a --api-keys-file line)
//
// Serves the API of tools/shortlink/service.h until SIGINT or SIGTERM, then
// stops accepting requests, flushes the memtable and closes the store.
// SIGHUP reloads --api-keys-file and reopens --access-log. Every flag may
// also come from the environment or --config (tools/shortlinkd/config.h).
// --preload fills a data directory through the store layer directly (no
// HTTP) and exits; the load script uses it. docs/shortlinkd.md lists every
// flag.
//
// Threads: the HTTP server's event thread reads requests and its worker
// pool answers them (tools/shortlinkd/http_server.h); one thread waits for
// signals; one runs the periodic compaction; with --access-log, one writes
// the log. Signals are blocked in every thread but the signal thread, which
// is the only one to act on them.
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "bloomkv/version.h"
#include "tools/shortlink/access_log.h"
#include "tools/shortlink/api_keys.h"
#include "tools/shortlink/link_store.h"
#include "tools/shortlink/rate_limiter.h"
#include "tools/shortlink/service.h"
#include "tools/shortlinkd/config.h"
#include "tools/shortlinkd/http_server.h"
#include "util/mutex.h"

namespace {

using bloomkv::Status;

struct Flags {
  std::string listen = "127.0.0.1:8080";
  std::string data = "./shortlink-data";
  std::string base_url;
  int redirect_status = 302;
  std::string admin_token;
  double bits_per_key = 10.0;
  size_t block_cache_mb = 8;
  int threads = 16;
  int read_timeout_ms = 10'000;
  int idle_timeout_ms = 30'000;
  int write_timeout_ms = 10'000;
  size_t max_connections = 10'000;
  int64_t compact_interval = 3600;
  int stats_flush_ms = 1000;
  std::string test_clock_file;
  std::string port_file;
  uint64_t preload = 0;
  std::string codes_out;
  std::string config;
  std::string api_keys_file;
  std::string rate_limit_key;
  double rate_limit_key_burst = 0;
  std::string rate_limit_ip;
  double rate_limit_ip_burst = 0;
  size_t rate_limit_ip_entries = shortlink::RateLimiter::kDefaultMaxEntries;
  bool rate_limit_redirects = false;
  bool trust_proxy = false;
  std::string access_log;
  std::string access_log_format = "combined";
};

int64_t SystemNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The test clock: the file holds the current Unix time in seconds as
// decimal text. A missing or unreadable file falls back to the system clock
// (with one warning), so a test mistake cannot take the server down.
std::function<int64_t()> MakeFileClock(const std::string& path) {
  auto warned = std::make_shared<std::atomic<bool>>(false);
  return [path, warned]() -> int64_t {
    std::ifstream in(path);
    long long t = 0;
    if (in >> t) return t;
    if (!warned->exchange(true)) {
      std::fprintf(stderr, "shortlinkd: cannot read a time from %s\n",
                   path.c_str());
    }
    return SystemNow();
  };
}

// "host:port" or "[v6]:port" -> host, port.
bool ParseListen(const std::string& listen, std::string* host, int* port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) return false;
  *host = listen.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  if (host->empty()) return false;
  try {
    size_t used = 0;
    *port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) return false;
  } catch (const std::exception&) {
    return false;
  }
  return *port >= 0 && *port <= 65535;
}

// `shortlinkd hash-api-key NAME`: the key is the first line of stdin.
int HashApiKey(const std::string& name) {
  if (!shortlink::IsValidApiKeyName(name)) {
    std::fprintf(stderr,
                 "shortlinkd: the name must be 1-64 characters of "
                 "[A-Za-z0-9_.-]\n");
    return 2;
  }
  std::string key;
  std::getline(std::cin, key);
  if (!key.empty() && key.back() == '\r') key.pop_back();
  bool printable = !key.empty();
  for (const char c : key) printable &= c > ' ' && c < 0x7f;
  if (!printable) {
    std::fprintf(stderr,
                 "shortlinkd: expected the key on stdin: one line of "
                 "printable ASCII without spaces\n");
    return 2;
  }
  std::printf("%s\n", shortlink::FormatApiKeyLine(name, key).c_str());
  return 0;
}

// Reads --api-keys-file; null after printing why if it cannot be used.
std::shared_ptr<const shortlink::ApiKeys> LoadApiKeys(const std::string& path) {
  auto keys = std::make_shared<shortlink::ApiKeys>();
  const Status s = shortlink::ApiKeys::Load(path, keys.get());
  if (!s.ok()) {
    std::fprintf(stderr, "shortlinkd: %s\n", s.message().c_str());
    return nullptr;
  }
  return keys;
}

// A --rate-limit-* flag pair; false after printing why it is refused.
bool ParseLimitFlags(const char* flag, const std::string& spec, double burst,
                     shortlink::RateLimit* out) {
  if (spec.empty()) return true;
  const Status s = shortlink::ParseRateLimit(spec, out);
  if (!s.ok()) {
    std::fprintf(stderr, "shortlinkd: %s: %s\n", flag, s.message().c_str());
    return false;
  }
  if (burst > 0) out->burst = std::max(1.0, burst);
  return true;
}

int Preload(shortlink::LinkStore* store, const Flags& flags) {
  std::ofstream codes;
  if (!flags.codes_out.empty()) {
    codes.open(flags.codes_out);
    if (!codes) {
      std::fprintf(stderr, "shortlinkd: cannot write %s\n",
                   flags.codes_out.c_str());
      return 1;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < flags.preload; i++) {
    shortlink::CreateOutcome outcome;
    std::string code;
    shortlink::LinkRecord record;
    const std::string url =
        "https://example.com/articles/" + std::to_string(i) + "?ref=load";
    Status s = store->Create(url, "", 0, &outcome, &code, &record);
    if (!s.ok()) {
      std::fprintf(stderr, "shortlinkd: preload: %s\n", s.ToString().c_str());
      return 1;
    }
    if (codes) codes << code << '\n';
  }
  Status s = store->CompactAll();
  if (!s.ok()) {
    std::fprintf(stderr, "shortlinkd: compaction: %s\n", s.ToString().c_str());
    return 1;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("preloaded %llu links in %.1f s\n",
              static_cast<unsigned long long>(flags.preload), secs);
  return 0;
}

// Every flag, with its default, help text and check.
void AddFlags(CLI::App* app, Flags* flags) {
  app->add_option("--listen", flags->listen,
                  "host:port to listen on (port 0: any free port)")
      ->capture_default_str();
  app->add_option("--data", flags->data, "database directory")
      ->capture_default_str();
  app->add_option("--base-url", flags->base_url,
                  "prefix of short_url (default http://<listen>)");
  app->add_option("--redirect-status", flags->redirect_status, "301 or 302")
      ->check(CLI::IsMember({301, 302}))
      ->capture_default_str();
  app->add_option("--admin-token", flags->admin_token,
                  "bearer token for DELETE and /admin (empty: disabled)")
      ->envname("SHORTLINKD_ADMIN_TOKEN");
  app->add_option("--bits-per-key", flags->bits_per_key,
                  "bloom filter bits per key for new segments (0: none)")
      ->check(CLI::Range(0.0, 64.0))
      ->capture_default_str();
  app->add_option("--block-cache-mb", flags->block_cache_mb,
                  "block cache size in MiB (0: none)")
      ->capture_default_str();
  app->add_option("--threads", flags->threads, "HTTP worker threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app->add_option("--read-timeout-ms", flags->read_timeout_ms,
                  "a request must arrive within this time of its first byte "
                  "(else 408)")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  app->add_option("--idle-timeout-ms", flags->idle_timeout_ms,
                  "an idle keep-alive connection is closed after this")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  app->add_option("--write-timeout-ms", flags->write_timeout_ms,
                  "a response must be taken by the client within this time")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  app->add_option("--max-connections", flags->max_connections,
                  "open connections beyond this are closed at once")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app->add_option("--compact-interval", flags->compact_interval,
                  "seconds between full compactions (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--stats-flush-ms", flags->stats_flush_ms,
                  "milliseconds between writes of the gathered click counts")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  app->add_option("--test-clock-file", flags->test_clock_file,
                  "FOR TESTS: read the current Unix time from this file");
  app->add_option("--port-file", flags->port_file,
                  "write the bound port to this file once listening");
  app->add_option("--preload", flags->preload,
                  "store N generated links directly, compact, and exit");
  app->add_option("--codes-out", flags->codes_out,
                  "with --preload: write the codes to this file");
  app->add_option("--config", flags->config,
                  "read flags from this TOML/INI file (flags and environment "
                  "take precedence)");
  app->add_option("--api-keys-file", flags->api_keys_file,
                  "name:sha256:<hex> lines; if given, creating links needs "
                  "one of these keys (or the admin token)");
  app->add_option("--rate-limit-key", flags->rate_limit_key,
                  "per API key: R/s, R/m or R/h (default: no limit)");
  app->add_option("--rate-limit-key-burst", flags->rate_limit_key_burst,
                  "bucket size for --rate-limit-key (default: one second's "
                  "worth, at least 1)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--rate-limit-ip", flags->rate_limit_ip,
                  "per client address (IPv6 by /64): R/s, R/m or R/h "
                  "(default: no limit)");
  app->add_option("--rate-limit-ip-burst", flags->rate_limit_ip_burst,
                  "bucket size for --rate-limit-ip")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--rate-limit-ip-entries", flags->rate_limit_ip_entries,
                  "most client addresses tracked at once")
      ->check(CLI::Range(size_t{shortlink::RateLimiter::kShards},
                         size_t{100'000'000}))
      ->capture_default_str();
  app->add_flag("--rate-limit-redirects", flags->rate_limit_redirects,
                "apply --rate-limit-ip to redirects too");
  app->add_flag("--trust-proxy", flags->trust_proxy,
                "take the client address from X-Forwarded-For's last hop");
  app->add_option("--access-log", flags->access_log,
                  "log every request to this file, or - for stdout");
  app->add_option("--access-log-format", flags->access_log_format,
                  "common, combined or json")
      ->check(CLI::IsMember({"common", "combined", "json"}))
      ->capture_default_str();
  app->set_version_flag("--version", [] {
    return std::string("shortlinkd ") + bloomkv::VersionString();
  });
}

// What the flags say once checked and parsed.
struct Settings {
  shortlink::RateLimit key_limit, ip_limit;
  std::shared_ptr<const shortlink::ApiKeys> api_keys;
  std::string host;
  int port = 0;
};

// Applies --config, then checks and parses what the flags name into
// *settings. 0, or the exit code (2) after one line on stderr.
int Configure(CLI::App* app, int argc, char** argv, const Flags& flags,
              Settings* settings) {
  if (!flags.config.empty()) {
    const Status cs = shortlink::ApplyConfigFile(app, flags.config);
    if (!cs.ok()) {
      std::fprintf(stderr, "shortlinkd: %s\n", cs.message().c_str());
      return 2;
    }
  }
  for (int i = 1; i < argc; i++) {
    if (std::string_view(argv[i]).starts_with("--admin-token")) {
      std::fprintf(stderr,
                   "shortlinkd: warning: --admin-token on the command line "
                   "is visible to every local user; prefer "
                   "SHORTLINKD_ADMIN_TOKEN or --config\n");
      break;
    }
  }
  if (!ParseLimitFlags("--rate-limit-key", flags.rate_limit_key,
                       flags.rate_limit_key_burst, &settings->key_limit) ||
      !ParseLimitFlags("--rate-limit-ip", flags.rate_limit_ip,
                       flags.rate_limit_ip_burst, &settings->ip_limit)) {
    return 2;
  }
  if (settings->key_limit.enabled() && flags.api_keys_file.empty()) {
    std::fprintf(stderr,
                 "shortlinkd: warning: --rate-limit-key has no effect "
                 "without --api-keys-file\n");
  }
  if (!flags.api_keys_file.empty()) {
    settings->api_keys = LoadApiKeys(flags.api_keys_file);
    if (settings->api_keys == nullptr) return 2;
  }

  if (!ParseListen(flags.listen, &settings->host, &settings->port)) {
    std::fprintf(stderr, "shortlinkd: bad --listen %s\n", flags.listen.c_str());
    return 2;
  }
  return 0;
}

// Listens, answers requests until SIGINT or SIGTERM (SIGHUP reloads the API
// keys and reopens the access log), runs the periodic compaction, and
// stops the server and its threads. 0, or 1 when serving failed.
int Serve(const Flags& flags, const Settings& settings, const sigset_t& signals,
          shortlink::LinkStore* store, shortlink::AccessLog* access_log) {
  shortlink::HttpServerOptions http_options;
  http_options.threads = flags.threads;
  http_options.read_timeout_ms = flags.read_timeout_ms;
  http_options.idle_timeout_ms = flags.idle_timeout_ms;
  http_options.write_timeout_ms = flags.write_timeout_ms;
  http_options.max_body_bytes = shortlink::kMaxBodyBytes;
  http_options.max_connections = flags.max_connections;
  // The service is created once the port (part of its base URL) is known;
  // no request is read before Run.
  std::unique_ptr<shortlink::Service> service;
  shortlink::HttpServer server(
      http_options,
      [&service](const shortlink::HttpRequest& req,
                 shortlink::HttpResponse* res) { service->Handle(req, res); },
      [&service](const shortlink::HttpRequest& req,
                 shortlink::HttpResponse* res) { service->Reject(req, res); });
  int port = settings.port;
  Status s = server.Listen(settings.host, port, &port);
  if (!s.ok()) {
    std::fprintf(stderr, "shortlinkd: cannot listen on %s: %s\n",
                 flags.listen.c_str(), s.ToString().c_str());
    return 1;
  }
  const bool v6 = settings.host.find(':') != std::string::npos;
  const std::string bound = (v6 ? "[" + settings.host + "]" : settings.host) +
                            ":" + std::to_string(port);

  shortlink::ServiceOptions service_options;
  service_options.base_url =
      flags.base_url.empty() ? "http://" + bound : flags.base_url;
  service_options.redirect_status = flags.redirect_status;
  service_options.admin_token = flags.admin_token;
  shortlink::AdmissionOptions& admission = service_options.admission;
  admission.api_keys = settings.api_keys;
  admission.key_limit = settings.key_limit;
  admission.ip_limit = settings.ip_limit;
  admission.ip_limit_entries = flags.rate_limit_ip_entries;
  admission.limit_redirects = flags.rate_limit_redirects;
  admission.trust_proxy = flags.trust_proxy;
  service_options.access_log = access_log;
  service = std::make_unique<shortlink::Service>(store, service_options);

  std::atomic<bool> signalled{false};
  std::thread signal_thread([&] {
    int sig = 0;
    while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
      // Reload: a broken keys file keeps the keys in force.
      if (!flags.api_keys_file.empty()) {
        auto keys = LoadApiKeys(flags.api_keys_file);
        if (keys != nullptr) {
          service->admission()->SetApiKeys(std::move(keys));
          std::fprintf(stderr, "shortlinkd: reloaded %s\n",
                       flags.api_keys_file.c_str());
        } else {
          std::fprintf(stderr, "shortlinkd: keeping the old API keys\n");
        }
      }
      if (access_log) access_log->Reopen();
    }
    signalled = true;
    server.Stop();
  });

  bloomkv::Mutex compact_mu;
  bloomkv::CondVar compact_cv;
  bool stopping = false;
  std::thread compact_thread([&] {
    if (flags.compact_interval == 0) return;
    for (;;) {
      {
        bloomkv::MutexLock lock(&compact_mu);
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::seconds(flags.compact_interval);
        while (!stopping && compact_cv.WaitUntil(&compact_mu, deadline)) {
        }
        if (stopping) return;
      }
      Status cs = store->CompactAll();
      if (!cs.ok()) {
        std::fprintf(stderr, "shortlinkd: compaction: %s\n",
                     cs.ToString().c_str());
      }
    }
  });

  if (!flags.port_file.empty()) {
    // Written to a temporary name and renamed, so a reader never sees a
    // partial number.
    const std::string tmp = flags.port_file + ".tmp";
    {
      std::ofstream out(tmp);
      out << port << '\n';
    }
    std::rename(tmp.c_str(), flags.port_file.c_str());
  }
  std::printf("shortlinkd listening on http://%s (data %s)\n", bound.c_str(),
              flags.data.c_str());
  std::fflush(stdout);

  const Status served = server.Run();
  if (!served.ok()) {
    std::fprintf(stderr, "shortlinkd: %s\n", served.ToString().c_str());
  }

  // Wake the signal thread if the server stopped for another reason.
  if (!signalled) pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  {
    bloomkv::MutexLock lock(&compact_mu);
    stopping = true;
  }
  compact_cv.SignalAll();
  compact_thread.join();

  return served.ok() ? 0 : 1;
}

// Starts what serving needs (the signal mask, the access log, the store),
// serves until a shutdown signal, then flushes and closes the store.
int Start(const Flags& flags, const Settings& settings) {
  // Block the shutdown signals before any thread exists (the store starts
  // its background thread), so every thread inherits the mask and only
  // the signal thread receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // After the mask: the log's writer thread must not take the signals.
  std::unique_ptr<shortlink::AccessLog> access_log;
  if (!flags.access_log.empty()) {
    shortlink::AccessLogFormat format;
    Status as =
        shortlink::ParseAccessLogFormat(flags.access_log_format, &format);
    if (as.ok())
      as = shortlink::AccessLog::Open(flags.access_log, format, &access_log);
    if (!as.ok()) {
      std::fprintf(stderr, "shortlinkd: access log: %s\n",
                   as.ToString().c_str());
      return 2;
    }
  }
  shortlink::LinkStoreOptions store_options;
  store_options.bits_per_key = flags.bits_per_key;
  store_options.block_cache_bytes = flags.block_cache_mb << 20;
  store_options.stats_flush_ms = flags.stats_flush_ms;
  if (!flags.test_clock_file.empty()) {
    store_options.now = MakeFileClock(flags.test_clock_file);
  }
  std::unique_ptr<shortlink::LinkStore> store;
  Status s = shortlink::LinkStore::Open(store_options, flags.data, &store);
  if (!s.ok()) {
    std::fprintf(stderr, "shortlinkd: open %s: %s\n", flags.data.c_str(),
                 s.ToString().c_str());
    return 1;
  }
  if (flags.preload > 0) return Preload(store.get(), flags);
  const int code =
      Serve(flags, settings, signals, store.get(), access_log.get());
  s = store->Flush();
  if (!s.ok()) {
    std::fprintf(stderr, "shortlinkd: flush: %s\n", s.ToString().c_str());
  }
  store.reset();
  std::printf("shortlinkd stopped\n");
  return code == 0 && s.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{"shortlinkd: a link shortener on bloomkv"};
  AddFlags(&app, &flags);
  std::string key_name;
  CLI::App* hash_cmd = app.add_subcommand(
      "hash-api-key",
      "read an API key from stdin, print its --api-keys-file line");
  hash_cmd->add_option("name", key_name, "the key's name")->required();
  shortlink::AddEnvironmentNames(&app);
  CLI11_PARSE(app, argc, argv);
  if (*hash_cmd) return HashApiKey(key_name);
  Settings settings;
  const int code = Configure(&app, argc, argv, flags, &settings);
  if (code != 0) return code;
  return Start(flags, settings);
}
