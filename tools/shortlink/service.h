// Service: the short-link HTTP API on top of a LinkStore.
//
//   POST   /api/links          create (or find) a link       201 / 200
//   GET    /{code}             redirect                      302 / 301
//   GET    /api/links/{code}   the link as JSON              200
//   DELETE /api/links/{code}   remove (admin token)          204
//   POST   /admin/flush        memtable -> segment (admin)   200
//   POST   /admin/compact      full compaction (admin)       200
//   GET    /metrics            Prometheus text               200
//   GET    /healthz            "ok"                          200
// With API keys configured, POST /api/links needs one (or the admin token)
// as a bearer token (401 otherwise). Rate limits per API key and per client
// address answer 429 with Retry-After; docs/shortlinkd.md says which routes
// they cover.
// docs/shortlinkd.md describes every status and error. Every error answer
// is JSON {"error": "..."}; no request can make the process crash (Handle
// catches everything). The HTTP framing (limits, timeouts, keep-alive) is
// the server's job: tools/shortlinkd/http_server.h.
//
// Thread-safety: Handle and Reject run on the HTTP server's threads
// concurrently; the Service itself holds immutable configuration,
// thread-safe metrics and rate limiters, and the API keys behind a mutex
// (SetApiKeys may replace them at any time).
#ifndef BLOOMKV_TOOLS_SHORTLINK_SERVICE_H_
#define BLOOMKV_TOOLS_SHORTLINK_SERVICE_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "tools/shortlink/access_log.h"
#include "tools/shortlink/api_keys.h"
#include "tools/shortlink/http_message.h"
#include "tools/shortlink/link_store.h"
#include "tools/shortlink/metrics.h"
#include "tools/shortlink/rate_limiter.h"
#include "util/thread_annotations.h"

namespace shortlink {

// Largest accepted request body.
constexpr size_t kMaxBodyBytes = 16 << 10;

struct ServiceOptions {
  // Prefix of every short_url, e.g. "https://sho.rt" (no trailing slash
  // needed).
  std::string base_url = "http://127.0.0.1:8080";
  // 302 (default: browsers re-ask every time, so expiry and deletion take
  // effect) or 301 (cached by browsers forever).
  int redirect_status = 302;
  // Bearer token for DELETE and /admin; empty disables those routes (every
  // call is then answered 401).
  std::string admin_token;

  // Keys that may create links; null: anyone may (no key is asked for).
  std::shared_ptr<const ApiKeys> api_keys;
  // Token buckets per API key and per client address (an IPv6 client by its
  // /64), over /api/* and /admin/* and, with limit_redirects, redirects.
  // Requests with the admin token are never limited. Disabled by default.
  RateLimit key_limit;
  RateLimit ip_limit;
  bool limit_redirects = false;
  size_t ip_limit_entries = RateLimiter::kDefaultMaxEntries;
  // Take the client address from the last X-Forwarded-For hop (only behind
  // a reverse proxy that sets it; otherwise clients could pick their
  // address).
  bool trust_proxy = false;
  // Where to log every request; null: nowhere. Must outlive the Service.
  AccessLog* access_log = nullptr;
  // The rate limiters' clock; tests pass a fake one.
  std::function<std::chrono::steady_clock::time_point()> limiter_clock =
      std::chrono::steady_clock::now;
};

// True if `header` is "Bearer <token>" with token equal to `expected`, in
// time independent of where they differ. An empty `expected` never matches.
bool CheckBearerToken(std::string_view header, std::string_view expected);

class Service {
 public:
  // REQUIRES: store outlives the Service and every server it is installed in.
  Service(LinkStore* store, ServiceOptions options);
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Answers one complete request and counts it in the metrics. Every answer
  // >= 400 gets a JSON error body.
  void Handle(const HttpRequest& req, HttpResponse* res);

  // Fills in the answer to a request the server refused before it was
  // complete (res->status is set: 400, 408, 413, ...) and counts it. `req`
  // holds what was parsed, possibly nothing.
  void Reject(const HttpRequest& req, HttpResponse* res);

  ServiceMetrics* metrics() { return &metrics_; }

  // Replaces the API keys (on SIGHUP); null opens creation to anyone.
  void SetApiKeys(std::shared_ptr<const ApiKeys> keys);

  // The address a request is counted and logged under: remote_addr, or with
  // trust_proxy the last X-Forwarded-For hop when it is an IP address.
  std::string ClientAddress(const HttpRequest& req) const;

 private:
  // Authentication and rate limits ahead of routing. Returns false after
  // answering (401, 429). *user receives the API key's name, or "admin".
  bool Admit(const HttpRequest& req, const std::string& client,
             HttpResponse& res, std::string* user);
  void LogAccess(const HttpRequest& req, const std::string& client,
                 const std::string& user, const HttpResponse& res,
                 int64_t duration_us);
  void Route(const HttpRequest& req, HttpResponse& res);
  void CreateLink(const HttpRequest& req, HttpResponse& res);
  bool Lookup(const std::string& code, HttpResponse& res, LinkRecord* record);

  LinkStore* const store_;
  const ServiceOptions options_;
  const std::string base_url_;  // without trailing slashes
  const int redirect_status_;
  ServiceMetrics metrics_;
  std::unique_ptr<RateLimiter> key_limiter_;  // null: no limit
  std::unique_ptr<RateLimiter> ip_limiter_;   // null: no limit
  mutable std::mutex keys_mu_;
  std::shared_ptr<const ApiKeys> api_keys_ GUARDED_BY(keys_mu_);
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_SERVICE_H_
