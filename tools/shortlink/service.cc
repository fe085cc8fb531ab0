// The short-link HTTP handlers; see service.h.
#include "tools/shortlink/service.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <utility>

#include "tools/shortlink/code.h"
#include "tools/shortlink/link_api.h"
#include "tools/shortlink/url.h"
#include "tools/shortlink/web_assets.h"

namespace shortlink {

using bloomkv::Status;
using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

void SendJson(HttpResponse& res, int status, const json& body) {
  res.status = status;
  res.SetContent(body.dump(), "application/json");
}

void SendError(HttpResponse& res, int status, std::string_view message) {
  SendJson(res, status, json{{"error", std::string(message)}});
}

void SendJson(HttpResponse& res, const ApiReply& reply) {
  SendJson(res, reply.status, reply.body);
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not found";
    case 405:
      return "method not allowed";
    case 408:
      return "request timeout";
    case 409:
      return "conflict";
    case 410:
      return "gone";
    case 413:
      return "request body too large";
    case 414:
      return "request uri too long";
    case 415:
      return "unsupported media type";
    case 429:
      return "too many requests";
    case 431:
      return "request header fields too large";
    case 500:
      return "internal error";
    case 501:
      return "method not implemented";
    case 503:
      return "unavailable";
    case 505:
      return "http version not supported";
    default:
      return status < 500 ? "client error" : "server error";
  }
}

std::string TrimTrailingSlashes(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

// Reads {"url", "alias"?, "ttl_seconds"?}. Returns false after answering
// 400 if the body is not acceptable.
bool ParseCreateRequest(const std::string& body, HttpResponse& res,
                        std::string* url, std::string* alias,
                        int64_t* ttl_seconds) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    SendError(res, 400, "body is not valid JSON");
    return false;
  }
  if (!j.is_object()) {
    SendError(res, 400, "body must be a JSON object");
    return false;
  }
  const auto u = j.find("url");
  if (u == j.end() || !u->is_string()) {
    SendError(res, 400, "\"url\" (a string) is required");
    return false;
  }
  *url = u->get<std::string>();

  alias->clear();
  const auto a = j.find("alias");
  if (a != j.end() && !a->is_null()) {
    if (!a->is_string()) {
      SendError(res, 400, "\"alias\" must be a string");
      return false;
    }
    *alias = a->get<std::string>();
  }

  *ttl_seconds = 0;
  const auto t = j.find("ttl_seconds");
  if (t != j.end() && !t->is_null()) {
    if (!ParseTtlSeconds(*t, ttl_seconds)) {
      SendError(res, 400,
                "\"ttl_seconds\" must be an integer from 1 to 315360000");
      return false;
    }
  }
  return true;
}

// True if `path` matches the route path `pattern` ("{name}": any one
// segment, as Route's segment() takes it).
bool MatchesRoutePath(std::string_view pattern, std::string_view path) {
  while (!pattern.empty() && !path.empty()) {
    const size_t p_end = std::min(pattern.find('/', 1), pattern.size());
    const size_t s_end = std::min(path.find('/', 1), path.size());
    const std::string_view p = pattern.substr(0, p_end);
    const std::string_view seg = path.substr(0, s_end);
    if (p != seg && !(p.starts_with("/{") && p.ends_with("}"))) return false;
    pattern.remove_prefix(p_end);
    path.remove_prefix(s_end);
  }
  return pattern.empty() && path.empty();
}

// Methods in the order the Allow header lists them.
constexpr std::string_view kMethods[] = {"GET", "HEAD", "POST", "PATCH",
                                         "DELETE"};

// True if some route takes `method` (HEAD with GET).
bool IsImplementedMethod(std::string_view method) {
  if (method == "HEAD") method = "GET";
  for (const RouteSpec& r : ServiceRoutes()) {
    if (r.method == method) return true;
  }
  return false;
}

// The Allow value for `path`: the methods of the routes matching it; ""
// if none does.
std::string AllowedMethods(std::string_view path) {
  std::string allow;
  for (const std::string_view method : kMethods) {
    const std::string_view as = method == "HEAD" ? "GET" : method;
    for (const RouteSpec& r : ServiceRoutes()) {
      if (r.method == as && MatchesRoutePath(r.path, path)) {
        if (!allow.empty()) allow += ", ";
        allow += method;
        break;
      }
    }
  }
  return allow;
}

}  // namespace

bool ParseBearerToken(std::string_view header, std::string_view* token) {
  constexpr std::string_view kScheme = "Bearer";
  if (header.size() <= kScheme.size() ||
      !EqualsIgnoreCase(header.substr(0, kScheme.size()), kScheme) ||
      header[kScheme.size()] != ' ') {
    return false;
  }
  header.remove_prefix(kScheme.size());
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  if (header.empty()) return false;
  *token = header;
  return true;
}

bool IsJsonContentType(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) {
    media.remove_suffix(1);
  }
  return EqualsIgnoreCase(media, "application/json");
}

bool CheckBearerToken(std::string_view header, std::string_view expected) {
  std::string_view given;
  if (expected.empty() || !ParseBearerToken(header, &given)) return false;
  // Every byte of `expected` is compared whatever `given` holds, so the time
  // taken reveals at most the token's length, never a matching prefix.
  unsigned diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); i++) {
    const char g = i < given.size() ? given[i] : 0;
    diff |= static_cast<unsigned char>(g ^ expected[i]);
  }
  return diff == 0;
}

Service::Service(LinkStore* store, ServiceOptions options)
    : store_(store),
      options_(std::move(options)),
      base_url_(TrimTrailingSlashes(options_.base_url)),
      redirect_status_(options_.redirect_status == 301 ? 301 : 302),
      admission_(options_.admission, options_.admin_token) {}

void Service::Handle(const HttpRequest& req, HttpResponse* res) {
  const auto start = Clock::now();
  const std::string client = admission_.ClientAddress(req);
  std::string user;
  try {
    if (admission_.Admit(req, client, res, &user)) Route(req, *res);
  } catch (const std::exception&) {
    *res = HttpResponse();
    SendError(*res, 500, "internal error");
  }
  if (res->status >= 400 && res->body.empty()) {
    SendError(*res, res->status, ReasonPhrase(res->status));
  }
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  metrics_.RecordRequest(ClassifyRoute(req.method, req.path), res->status,
                         seconds);
  if (options_.access_log != nullptr) {
    options_.access_log->LogRequest(req, *res, client, user,
                                    static_cast<int64_t>(seconds * 1e6));
  }
}

void Service::Reject(const HttpRequest& req, HttpResponse* res) {
  SendError(*res, res->status, ReasonPhrase(res->status));
  // Duration unknown: the request was refused before it was routed.
  metrics_.RecordRequest(ClassifyRoute(req.method, req.path), res->status, -1);
  if (options_.access_log != nullptr) {
    options_.access_log->LogRequest(req, *res, admission_.ClientAddress(req),
                                    "", -1);
  }
}

std::span<const RouteSpec> ServiceRoutes() {
  static constexpr RouteSpec kRoutes[] = {
      {"POST", "/api/links"},
      {"GET", "/api/links"},
      {"GET", "/api/links/{code}"},
      {"PATCH", "/api/links/{code}"},
      {"DELETE", "/api/links/{code}"},
      {"GET", "/{code}"},
      {"POST", "/admin/flush"},
      {"POST", "/admin/compact"},
      {"GET", "/metrics"},
      {"GET", "/healthz"},
      {"GET", "/"},
      {"GET", "/app.js"},
      {"GET", "/app.css"},
      {"GET", "/openapi.json"},
  };
  return kRoutes;
}

void Service::Route(const HttpRequest& req, HttpResponse& res) {
  const std::string_view path = req.path;
  if (!IsImplementedMethod(req.method)) {
    return SendError(res, 501, "method not implemented");
  }
  // HEAD is answered as GET; the server leaves the body out.
  const bool get = req.method == "GET" || req.method == "HEAD";
  const bool post = req.method == "POST";
  constexpr std::string_view kLinks = "/api/links/";
  constexpr std::string_view kAdmin = "/admin/";
  // The single path segment after `prefix`, if path is prefix + segment.
  auto segment = [path](std::string_view prefix, std::string* out) {
    if (!path.starts_with(prefix)) return false;
    const std::string_view rest = path.substr(prefix.size());
    if (rest.find('/') != std::string_view::npos) return false;
    out->assign(rest);
    return true;
  };
  std::string code;

  if (get && path == "/healthz") return res.SetContent("ok\n", "text/plain");
  if (const WebAsset* asset = get ? FindWebAsset(path) : nullptr) {
    return ServeWebAsset(*asset, req, &res);
  }
  if (get && path == "/metrics") {
    return res.SetContent(metrics_.Render(store_->Stats()),
                          "text/plain; version=0.0.4; charset=utf-8");
  }
  if (post && path == "/api/links") return CreateLink(req, res);
  if (get && path == "/api/links") {
    if (!CheckBearerToken(req.Header("Authorization"), options_.admin_token)) {
      res.headers.emplace_back("WWW-Authenticate", "Bearer");
      return SendError(res, 401, "missing or wrong admin token");
    }
    return SendJson(res, ListLinks(store_, base_url_, req.query));
  }
  if (get && segment(kLinks, &code)) {
    LinkRecord record;
    if (!Lookup(code, res, &record)) return;
    return SendJson(res, LinkInfo(store_, base_url_, code, record));
  }
  if (req.method == "PATCH" && segment(kLinks, &code)) {
    if (!CheckBearerToken(req.Header("Authorization"), options_.admin_token)) {
      res.headers.emplace_back("WWW-Authenticate", "Bearer");
      return SendError(res, 401, "missing or wrong admin token");
    }
    return SendJson(res, PatchLink(store_, base_url_, code, req.body));
  }
  if (req.method == "DELETE" && segment(kLinks, &code)) {
    if (!CheckBearerToken(req.Header("Authorization"), options_.admin_token)) {
      res.headers.emplace_back("WWW-Authenticate", "Bearer");
      return SendError(res, 401, "missing or wrong admin token");
    }
    if (!IsWellFormedCode(code)) return SendError(res, 404, "no such link");
    const Status s = store_->Remove(code);
    if (s.IsNotFound()) return SendError(res, 404, "no such link");
    if (!s.ok()) return SendError(res, 500, "store error");
    res.status = 204;
    return;
  }
  if (post && segment(kAdmin, &code) &&
      (code == "flush" || code == "compact")) {
    if (!CheckBearerToken(req.Header("Authorization"), options_.admin_token)) {
      res.headers.emplace_back("WWW-Authenticate", "Bearer");
      return SendError(res, 401, "missing or wrong admin token");
    }
    const Status s = code == "flush" ? store_->Flush() : store_->CompactAll();
    if (!s.ok()) return SendError(res, 500, s.ToString());
    return SendJson(res, 200, json{{"ok", true}});
  }
  // Last: every other single-segment GET is a short code.
  if (get && segment("/", &code)) {
    LinkRecord record;
    if (!Lookup(code, res, &record)) return;
    store_->RecordClick(code, record);
    res.status = redirect_status_;
    res.headers.emplace_back("Location", record.url);
    return;
  }
  // Each route returns above for its methods, so the path here matches only
  // routes of other methods (405) or none (404).
  std::string allow = AllowedMethods(path);
  if (!allow.empty()) {
    res.headers.emplace_back("Allow", std::move(allow));
    return SendError(res, 405, "method not allowed");
  }
  SendError(res, 404, "not found");
}

void Service::CreateLink(const HttpRequest& req, HttpResponse& res) {
  // An HTML form can post form-encoded, multipart or text bodies to any
  // site without a CORS preflight, but not JSON: requiring it keeps other
  // sites' pages from creating links through a visitor's browser (creating
  // needs no credential when no API keys are configured).
  if (!IsJsonContentType(req.Header("Content-Type"))) {
    return SendError(res, 415, "Content-Type must be application/json");
  }
  std::string url, alias;
  int64_t ttl_seconds = 0;
  if (!ParseCreateRequest(req.body, res, &url, &alias, &ttl_seconds)) return;
  CreateOutcome outcome;
  std::string code;
  LinkRecord record;
  const Status s =
      store_->Create(url, alias, ttl_seconds, &outcome, &code, &record);
  if (s.IsInvalidArgument()) return SendError(res, 400, s.message());
  if (!s.ok()) return SendError(res, 500, "store error");
  switch (outcome) {
    case CreateOutcome::kAliasTaken:
      return SendError(res, 409, "alias is already taken");
    case CreateOutcome::kExisting:
      return SendJson(res, 200, LinkJson(base_url_, code, record));
    case CreateOutcome::kCreated:
      metrics_.RecordLinkCreated();
      return SendJson(res, 201, LinkJson(base_url_, code, record));
  }
}

// Looks a code up, counting the outcome; answers 404/410 itself. True if
// *record holds a live link.
bool Service::Lookup(const std::string& code, HttpResponse& res,
                     LinkRecord* record) {
  if (!IsWellFormedCode(code) || IsReservedWord(code)) {
    metrics_.RecordLookup(LookupResult::kMalformed);
    SendError(res, 404, "no such link");
    return false;
  }
  const Status s = store_->Lookup(code, record);
  if (s.IsNotFound()) {
    metrics_.RecordLookup(LookupResult::kNotFound);
    SendError(res, 404, "no such link");
    return false;
  }
  if (!s.ok()) {
    SendError(res, 500, "store error");
    return false;
  }
  if (IsExpired(record->expires_at, store_->Now())) {
    metrics_.RecordLookup(LookupResult::kExpired);
    SendError(res, 410, "link expired");
    return false;
  }
  metrics_.RecordLookup(LookupResult::kFound);
  return true;
}

}  // namespace shortlink
