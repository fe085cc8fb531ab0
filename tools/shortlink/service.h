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
// docs/shortlinkd.md describes every status and error. Every error answer
// is JSON {"error": "..."}; no request can make the process crash (handlers
// catch everything, and an exception handler backs them up).
//
// Thread-safety: handlers run on the HTTP server's worker threads
// concurrently; the Service itself holds only immutable configuration and
// thread-safe metrics.
#ifndef BLOOMKV_TOOLS_SHORTLINK_SERVICE_H_
#define BLOOMKV_TOOLS_SHORTLINK_SERVICE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "tools/shortlink/link_store.h"
#include "tools/shortlink/metrics.h"

namespace httplib {
class Server;
}  // namespace httplib

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

  // Registers the routes, error and exception handlers, the body-size limit
  // and request accounting on `server`.
  void Install(httplib::Server* server);

  ServiceMetrics* metrics() { return &metrics_; }

 private:
  LinkStore* const store_;
  const ServiceOptions options_;
  ServiceMetrics metrics_;
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_SERVICE_H_
