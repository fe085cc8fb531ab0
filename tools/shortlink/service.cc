// The short-link HTTP handlers; see service.h.
#include "tools/shortlink/service.h"

#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <utility>

#include "tools/shortlink/code.h"
#include "tools/shortlink/url.h"

namespace shortlink {

using bloomkv::Status;
using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

// When the current request on this worker thread was routed. Set by the
// pre-routing handler, consumed by the logger, which httplib calls on the
// same thread once the response is written.
thread_local Clock::time_point t_request_start;
thread_local bool t_request_started = false;

void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void SendError(httplib::Response& res, int status, std::string_view message) {
  SendJson(res, status, json{{"error", std::string(message)}});
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
    case 431:
      return "request header fields too large";
    case 500:
      return "internal error";
    case 503:
      return "unavailable";
    default:
      return status < 500 ? "client error" : "server error";
  }
}

json LinkJson(const std::string& base_url, const std::string& code,
              const LinkRecord& record) {
  json j{{"code", code},
         {"short_url", base_url + "/" + code},
         {"url", record.url},
         {"created", record.created}};
  if (record.expires_at != 0) j["expires_at"] = record.expires_at;
  return j;
}

std::string TrimTrailingSlashes(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

// Reads {"url", "alias"?, "ttl_seconds"?}. Returns false after answering
// 400 if the body is not acceptable.
bool ParseCreateRequest(const std::string& body, httplib::Response& res,
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
    bool ok = false;
    if (t->is_number_unsigned()) {
      const uint64_t v = t->get<uint64_t>();
      ok = v >= 1 && v <= static_cast<uint64_t>(kMaxTtlSeconds);
      if (ok) *ttl_seconds = static_cast<int64_t>(v);
    } else if (t->is_number_integer()) {
      const int64_t v = t->get<int64_t>();
      ok = v >= 1 && v <= kMaxTtlSeconds;
      if (ok) *ttl_seconds = v;
    }
    if (!ok) {
      SendError(res, 400,
                "\"ttl_seconds\" must be an integer from 1 to 315360000");
      return false;
    }
  }
  return true;
}

}  // namespace

bool CheckBearerToken(std::string_view header, std::string_view expected) {
  constexpr std::string_view kPrefix = "Bearer ";
  if (expected.empty() || !header.starts_with(kPrefix)) return false;
  const std::string_view given = header.substr(kPrefix.size());
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
    : store_(store), options_(std::move(options)) {}

void Service::Install(httplib::Server* server) {
  const std::string base_url = TrimTrailingSlashes(options_.base_url);
  const int redirect_status = options_.redirect_status == 301 ? 301 : 302;

  server->set_payload_max_length(kMaxBodyBytes);

  server->set_pre_routing_handler(
      [](const httplib::Request&, httplib::Response&) {
        t_request_start = Clock::now();
        t_request_started = true;
        return httplib::Server::HandlerResponse::Unhandled;
      });
  server->set_logger([this](const httplib::Request& req,
                            const httplib::Response& res) {
    double seconds = -1;  // unknown: answered before routing (e.g. 413)
    if (t_request_started) {
      seconds =
          std::chrono::duration<double>(Clock::now() - t_request_start).count();
      t_request_started = false;
    }
    metrics_.RecordRequest(ClassifyRoute(req.method, req.path), res.status,
                           seconds);
  });
  // Called for every answer >= 400; fills in a JSON body where the handler
  // (or httplib itself, e.g. for 404 and 413) left none.
  server->set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& res) {
        if (res.body.empty()) {
          SendError(res, res.status, ReasonPhrase(res.status));
        }
        return httplib::Server::HandlerResponse::Handled;
      }));
  server->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        SendError(res, 500, "internal error");
      });

  server->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });

  server->Get("/metrics",
              [this](const httplib::Request&, httplib::Response& res) {
                res.set_content(metrics_.Render(store_->Stats()),
                                "text/plain; version=0.0.4; charset=utf-8");
              });

  server->Post("/api/links", [this, base_url](const httplib::Request& req,
                                              httplib::Response& res) {
    std::string url, alias;
    int64_t ttl_seconds = 0;
    if (!ParseCreateRequest(req.body, res, &url, &alias, &ttl_seconds)) {
      return;
    }
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
        return SendJson(res, 200, LinkJson(base_url, code, record));
      case CreateOutcome::kCreated:
        metrics_.RecordLinkCreated();
        return SendJson(res, 201, LinkJson(base_url, code, record));
    }
  });

  // Looks a code up, counting the outcome; answers 404/410 itself. True if
  // *record holds a live link.
  auto lookup = [this](const std::string& code, httplib::Response& res,
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
  };

  server->Get(
      R"(/api/links/([^/]*))",
      [lookup, base_url](const httplib::Request& req, httplib::Response& res) {
        const std::string code = req.matches[1];
        LinkRecord record;
        if (!lookup(code, res, &record)) return;
        SendJson(res, 200, LinkJson(base_url, code, record));
      });

  server->Delete(R"(/api/links/([^/]*))",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   if (!CheckBearerToken(req.get_header_value("Authorization"),
                                         options_.admin_token)) {
                     res.set_header("WWW-Authenticate", "Bearer");
                     return SendError(res, 401, "missing or wrong admin token");
                   }
                   const std::string code = req.matches[1];
                   if (!IsWellFormedCode(code))
                     return SendError(res, 404, "no such link");
                   const Status s = store_->Remove(code);
                   if (s.IsNotFound())
                     return SendError(res, 404, "no such link");
                   if (!s.ok()) return SendError(res, 500, "store error");
                   res.status = 204;
                 });

  server->Post(R"(/admin/(flush|compact))", [this](const httplib::Request& req,
                                                   httplib::Response& res) {
    if (!CheckBearerToken(req.get_header_value("Authorization"),
                          options_.admin_token)) {
      res.set_header("WWW-Authenticate", "Bearer");
      return SendError(res, 401, "missing or wrong admin token");
    }
    const Status s =
        req.matches[1] == "flush" ? store_->Flush() : store_->CompactAll();
    if (!s.ok()) return SendError(res, 500, s.ToString());
    SendJson(res, 200, json{{"ok", true}});
  });

  // Last: every other single-segment GET is a short code.
  server->Get(R"(/([^/]*))",
              [lookup, redirect_status](const httplib::Request& req,
                                        httplib::Response& res) {
                LinkRecord record;
                if (!lookup(req.matches[1], res, &record)) return;
                res.status = redirect_status;
                res.set_header("Location", record.url);
              });
}

}  // namespace shortlink
