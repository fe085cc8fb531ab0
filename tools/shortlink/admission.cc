// Admission; see admission.h.
#include "tools/shortlink/admission.h"

#include <arpa/inet.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "tools/shortlink/metrics.h"
#include "tools/shortlink/service.h"

namespace shortlink {

namespace {

// The bucket a client address is limited under: an IPv4 address itself, an
// IPv6 address by its /64 (one subscriber usually holds a whole /64, so
// per-address buckets would give each of them 2^64).
std::string AddressBucket(const std::string& addr) {
  in6_addr a6{};
  if (addr.find(':') == std::string::npos ||
      inet_pton(AF_INET6, addr.c_str(), &a6) != 1) {
    return addr;
  }
  std::memset(&a6.s6_addr[8], 0, 8);
  char text[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, &a6, text, sizeof(text));
  return std::string(text) + "/64";
}

bool IsIpAddress(const std::string& s) {
  in6_addr a6{};
  in_addr a4{};
  return inet_pton(AF_INET, s.c_str(), &a4) == 1 ||
         inet_pton(AF_INET6, s.c_str(), &a6) == 1;
}

void SendError(HttpResponse* res, int status, const std::string& message) {
  res->status = status;
  res->SetContent(nlohmann::json{{"error", message}}.dump(),
                  "application/json");
}

void SendTooManyRequests(HttpResponse* res, int64_t retry_after,
                         std::string_view what) {
  res->headers.emplace_back("Retry-After", std::to_string(retry_after));
  SendError(res, 429,
            std::string(what) + " rate limit exceeded; retry in " +
                std::to_string(retry_after) + " s");
}

}  // namespace

Admission::Admission(AdmissionOptions options, std::string admin_token)
    : options_(std::move(options)),
      admin_token_(std::move(admin_token)),
      api_keys_(options_.api_keys) {
  if (options_.key_limit.enabled()) {
    key_limiter_ = std::make_unique<RateLimiter>(options_.key_limit);
  }
  if (options_.ip_limit.enabled()) {
    ip_limiter_ = std::make_unique<RateLimiter>(options_.ip_limit,
                                                options_.ip_limit_entries);
  }
}

void Admission::SetApiKeys(std::shared_ptr<const ApiKeys> keys) {
  bloomkv::MutexLock lock(&keys_mu_);
  api_keys_ = std::move(keys);
}

std::string Admission::ClientAddress(const HttpRequest& req) const {
  if (options_.trust_proxy) {
    // The proxy appends the address it saw to the last header; hops before
    // it were written by the client and prove nothing.
    std::string_view forwarded;
    for (const auto& [name, value] : req.headers) {
      if (EqualsIgnoreCase(name, "X-Forwarded-For")) forwarded = value;
    }
    const size_t comma = forwarded.rfind(',');
    if (comma != std::string_view::npos) forwarded.remove_prefix(comma + 1);
    while (!forwarded.empty() && forwarded.front() == ' ') {
      forwarded.remove_prefix(1);
    }
    while (!forwarded.empty() && forwarded.back() == ' ') {
      forwarded.remove_suffix(1);
    }
    std::string hop(forwarded);
    if (IsIpAddress(hop)) return hop;
  }
  return req.remote_addr;
}

bool Admission::Admit(const HttpRequest& req, const std::string& client,
                      HttpResponse* res, std::string* user) {
  const std::string_view auth = req.Header("Authorization");
  if (CheckBearerToken(auth, admin_token_)) {
    *user = "admin";
    return true;
  }
  const std::string_view path = req.path;
  const Route route =
      ClassifyRoute(req.method == "HEAD" ? "GET" : req.method, path);
  std::string_view token;
  const bool bearer = ParseBearerToken(auth, &token);
  // The mutex is taken only by requests that can use the keys, never by a
  // plain redirect.
  std::shared_ptr<const ApiKeys> keys;
  if (bearer || route == Route::kCreate) {
    bloomkv::MutexLock lock(&keys_mu_);
    keys = api_keys_;
  }
  const std::string* key_name = nullptr;
  if (keys != nullptr && bearer) {
    key_name = keys->Find(token);
    if (key_name != nullptr) *user = *key_name;
  }

  const bool limited = path.starts_with("/api/") ||
                       path.starts_with("/admin/") ||
                       (options_.limit_redirects && route == Route::kRedirect);
  const auto now = limited && (ip_limiter_ || key_limiter_)
                       ? options_.clock()
                       : std::chrono::steady_clock::time_point();
  int64_t retry_after = 0;
  // The address first: guessing keys costs the guesser its address's
  // tokens.
  if (limited && ip_limiter_ &&
      !ip_limiter_->Allow(AddressBucket(client), now, &retry_after)) {
    SendTooManyRequests(res, retry_after, "per-address");
    return false;
  }
  if (keys != nullptr && route == Route::kCreate && key_name == nullptr) {
    res->headers.emplace_back("WWW-Authenticate", "Bearer");
    SendError(res, 401, "missing or unknown API key");
    return false;
  }
  if (limited && key_limiter_ && key_name != nullptr &&
      !key_limiter_->Allow(*key_name, now, &retry_after)) {
    SendTooManyRequests(res, retry_after, "per-key");
    return false;
  }
  return true;
}

}  // namespace shortlink
