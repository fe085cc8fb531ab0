// Service: the short-link HTTP API on top of a LinkStore.
//
//   POST   /api/links          create (or find) a link       201 / 200
//   GET    /{code}             redirect                      302 / 301
//   GET    /api/links/{code}   the link and its clicks       200
//   GET    /api/links          list, newest first (admin)    200
//   PATCH  /api/links/{code}   new url / ttl (admin token)   200
//   DELETE /api/links/{code}   remove (admin token)          204
//   POST   /admin/flush        memtable -> segment (admin)   200
//   POST   /admin/compact      full compaction (admin)       200
//   GET    /metrics            Prometheus text               200
//   GET    /healthz            "ok"                          200
//   GET    /, /app.js, /app.css  the web page (web_assets.h)  200 / 304
//   GET    /openapi.json       the API as OpenAPI 3.0        200 / 304
// Before routing, Admission (admission.h) checks API keys and rate limits.
// Redirects count clicks (LinkStore::RecordClick, in memory only).
// Creating needs a JSON Content-Type (else 415), so that a cross-site HTML
// form, which can only send form or text bodies, cannot create links.
// Methods no route has are 501; a path served for other methods only is
// 405 with Allow.
// docs/shortlinkd.md describes every status and error. Every error answer
// is JSON {"error": "..."}; no request can make the process crash (Handle
// catches everything). The HTTP framing (limits, timeouts, keep-alive) is
// the server's job: tools/shortlinkd/http_server.h.
//
// Thread-safety: Handle and Reject run on the HTTP server's threads
// concurrently; the Service itself holds only immutable configuration,
// thread-safe metrics and the thread-safe Admission.
#ifndef BLOOMKV_TOOLS_SHORTLINK_SERVICE_H_
#define BLOOMKV_TOOLS_SHORTLINK_SERVICE_H_

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "tools/shortlink/access_log.h"
#include "tools/shortlink/admission.h"
#include "tools/shortlink/http_message.h"
#include "tools/shortlink/link_store.h"
#include "tools/shortlink/metrics.h"

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
  // API keys and rate limits.
  AdmissionOptions admission;
  // Where to log every request; null: nowhere. Must outlive the Service.
  AccessLog* access_log = nullptr;
};

// The token of an Authorization header value in the Bearer scheme: the
// scheme's name in any case (RFC 7235 section 2.1: "bearer" and "BEARER"
// are "Bearer"), one or more spaces, the token. False for another scheme
// or no token.
bool ParseBearerToken(std::string_view header, std::string_view* token);

// True if `header` carries a Bearer token equal to `expected`, in time
// independent of where they differ. An empty `expected` never matches.
bool CheckBearerToken(std::string_view header, std::string_view expected);

// True if a Content-Type value names application/json, in any case, with
// or without parameters ("application/json; charset=utf-8").
bool IsJsonContentType(std::string_view content_type);

// A route the Service answers: a method and a path in which "{name}" stands
// for one path segment. GET stands for HEAD too. A request whose method is
// in no route is answered 501; one whose path matches routes of other
// methods only, 405 with Allow listing them; any other unrouted request,
// 404.
struct RouteSpec {
  std::string_view method;
  std::string_view path;
};

// Every route of the API, as openapi.json describes it. A route added to
// Service::Route must be added here and to openapi.json: the tests check
// that every request the Service answers matches a route of this list, and
// that the list and the document agree.
std::span<const RouteSpec> ServiceRoutes();

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
  Admission* admission() { return &admission_; }

 private:
  void Route(const HttpRequest& req, HttpResponse& res);
  void CreateLink(const HttpRequest& req, HttpResponse& res);
  bool Lookup(const std::string& code, HttpResponse& res, LinkRecord* record);

  LinkStore* const store_;
  const ServiceOptions options_;
  const std::string base_url_;  // without trailing slashes
  const int redirect_status_;
  ServiceMetrics metrics_;
  Admission admission_;
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_SERVICE_H_
