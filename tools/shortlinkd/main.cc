// shortlinkd: the short-link HTTP service, with bloomkv as its store.
//
//   shortlinkd --listen 127.0.0.1:8080 --data ./shortlink-data
//   shortlinkd --data DIR --preload 1000000 --codes-out codes.txt
//
// Serves the API of tools/shortlink/service.h until SIGINT or SIGTERM, then
// stops accepting requests, flushes the memtable and closes the store.
// --preload fills a data directory through the store layer directly (no
// HTTP) and exits; the load script uses it. docs/shortlinkd.md lists every
// flag.
//
// Threads: the HTTP server's event thread reads requests and its worker
// pool answers them (tools/shortlinkd/http_server.h); one thread waits for
// signals; one runs the periodic compaction. Signals are blocked in every
// thread but the signal thread, which is the only one to act on them.
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "tools/shortlink/link_store.h"
#include "tools/shortlink/service.h"
#include "tools/shortlinkd/http_server.h"

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

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{"shortlinkd: a link shortener on bloomkv"};
  app.add_option("--listen", flags.listen,
                 "host:port to listen on (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--data", flags.data, "database directory")
      ->capture_default_str();
  app.add_option("--base-url", flags.base_url,
                 "prefix of short_url (default http://<listen>)");
  app.add_option("--redirect-status", flags.redirect_status, "301 or 302")
      ->check(CLI::IsMember({301, 302}))
      ->capture_default_str();
  app.add_option("--admin-token", flags.admin_token,
                 "bearer token for DELETE and /admin (empty: disabled)")
      ->envname("SHORTLINKD_ADMIN_TOKEN");
  app.add_option("--bits-per-key", flags.bits_per_key,
                 "bloom filter bits per key for new segments (0: none)")
      ->check(CLI::Range(0.0, 64.0))
      ->capture_default_str();
  app.add_option("--block-cache-mb", flags.block_cache_mb,
                 "block cache size in MiB (0: none)")
      ->capture_default_str();
  app.add_option("--threads", flags.threads, "HTTP worker threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--read-timeout-ms", flags.read_timeout_ms,
                 "a request must arrive within this time of its first byte "
                 "(else 408)")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  app.add_option("--idle-timeout-ms", flags.idle_timeout_ms,
                 "an idle keep-alive connection is closed after this")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  app.add_option("--write-timeout-ms", flags.write_timeout_ms,
                 "a response must be taken by the client within this time")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  app.add_option("--max-connections", flags.max_connections,
                 "open connections beyond this are closed at once")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--compact-interval", flags.compact_interval,
                 "seconds between full compactions (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--stats-flush-ms", flags.stats_flush_ms,
                 "milliseconds between writes of the gathered click counts")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  app.add_option("--test-clock-file", flags.test_clock_file,
                 "FOR TESTS: read the current Unix time from this file");
  app.add_option("--port-file", flags.port_file,
                 "write the bound port to this file once listening");
  app.add_option("--preload", flags.preload,
                 "store N generated links directly, compact, and exit");
  app.add_option("--codes-out", flags.codes_out,
                 "with --preload: write the codes to this file");
  CLI11_PARSE(app, argc, argv);

  std::string host;
  int port = 0;
  if (!ParseListen(flags.listen, &host, &port)) {
    std::fprintf(stderr, "shortlinkd: bad --listen %s\n", flags.listen.c_str());
    return 2;
  }

  // Block the shutdown signals before any thread exists (the store starts
  // its background thread), so every thread inherits the mask and only
  // the signal thread receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

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
  s = server.Listen(host, port, &port);
  if (!s.ok()) {
    std::fprintf(stderr, "shortlinkd: cannot listen on %s: %s\n",
                 flags.listen.c_str(), s.ToString().c_str());
    return 1;
  }
  const bool v6 = host.find(':') != std::string::npos;
  const std::string bound =
      (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);

  shortlink::ServiceOptions service_options;
  service_options.base_url =
      flags.base_url.empty() ? "http://" + bound : flags.base_url;
  service_options.redirect_status = flags.redirect_status;
  service_options.admin_token = flags.admin_token;
  service = std::make_unique<shortlink::Service>(store.get(), service_options);

  std::atomic<bool> signalled{false};
  std::thread signal_thread([&server, &signals, &signalled] {
    int sig = 0;
    sigwait(&signals, &sig);
    signalled = true;
    server.Stop();
  });

  std::mutex compact_mu;
  std::condition_variable compact_cv;
  bool stopping = false;
  std::thread compact_thread([&] {
    if (flags.compact_interval == 0) return;
    std::unique_lock<std::mutex> lock(compact_mu);
    while (!compact_cv.wait_for(lock,
                                std::chrono::seconds(flags.compact_interval),
                                [&] { return stopping; })) {
      lock.unlock();
      Status cs = store->CompactAll();
      if (!cs.ok()) {
        std::fprintf(stderr, "shortlinkd: compaction: %s\n",
                     cs.ToString().c_str());
      }
      lock.lock();
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
    std::lock_guard<std::mutex> lock(compact_mu);
    stopping = true;
  }
  compact_cv.notify_all();
  compact_thread.join();

  s = store->Flush();
  if (!s.ok()) {
    std::fprintf(stderr, "shortlinkd: flush: %s\n", s.ToString().c_str());
  }
  store.reset();
  std::printf("shortlinkd stopped\n");
  return served.ok() && s.ok() ? 0 : 1;
}
