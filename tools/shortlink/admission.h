// Admission: whether a request may go on to its handler, decided before
// routing. With API keys configured, POST /api/links needs one (or the admin
// token) as a bearer token, else 401. Token buckets per API key and per
// client address (an IPv6 client by its /64) cover every /api/* and /admin/*
// request and, if asked, redirects; an empty bucket answers 429 with
// Retry-After. Requests with the admin token are never limited.
// docs/shortlinkd.md ("API keys and rate limits") is the reference.
//
// Thread-safety: thread-safe. The keys sit behind a mutex so that
// SetApiKeys (a reload) may run while requests are admitted; the limiters
// are thread-safe themselves.
#ifndef BLOOMKV_TOOLS_SHORTLINK_ADMISSION_H_
#define BLOOMKV_TOOLS_SHORTLINK_ADMISSION_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "tools/shortlink/api_keys.h"
#include "tools/shortlink/http_message.h"
#include "tools/shortlink/rate_limiter.h"
#include "util/mutex.h"

namespace shortlink {

struct AdmissionOptions {
  // Keys that may create links; null: anyone may (no key is asked for).
  std::shared_ptr<const ApiKeys> api_keys;
  // Disabled (rate 0) by default.
  RateLimit key_limit;
  RateLimit ip_limit;
  // Apply ip_limit to redirects too.
  bool limit_redirects = false;
  size_t ip_limit_entries = RateLimiter::kDefaultMaxEntries;
  // Take the client address from the last X-Forwarded-For hop (only behind
  // a reverse proxy that sets it; otherwise clients pick their address).
  bool trust_proxy = false;
  // The limiters' clock; tests pass a fake one.
  std::function<std::chrono::steady_clock::time_point()> clock =
      std::chrono::steady_clock::now;
};

class Admission {
 public:
  // An empty admin_token matches nothing.
  Admission(AdmissionOptions options, std::string admin_token);
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // Replaces the API keys (on SIGHUP); null opens creation to anyone.
  void SetApiKeys(std::shared_ptr<const ApiKeys> keys);

  // The address a request is limited and logged under: remote_addr, or with
  // trust_proxy the last X-Forwarded-For hop when it is an IP address.
  std::string ClientAddress(const HttpRequest& req) const;

  // True if the request may be routed. Otherwise *res holds the answer (401
  // or 429 with a JSON error). *user receives the API key's name, "admin"
  // for the admin token, or stays empty.
  bool Admit(const HttpRequest& req, const std::string& client,
             HttpResponse* res, std::string* user);

 private:
  const AdmissionOptions options_;
  const std::string admin_token_;
  std::unique_ptr<RateLimiter> key_limiter_;  // null: no limit
  std::unique_ptr<RateLimiter> ip_limiter_;   // null: no limit
  mutable bloomkv::Mutex keys_mu_;
  std::shared_ptr<const ApiKeys> api_keys_ GUARDED_BY(keys_mu_);
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_ADMISSION_H_
