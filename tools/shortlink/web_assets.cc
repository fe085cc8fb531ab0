// The embedded web page and OpenAPI document; see web_assets.h.
#include "tools/shortlink/web_assets.h"

#include <xxhash.h>

#include <cinttypes>
#include <cstdio>

namespace shortlink {

// Defined in the source that embed_files.cmake generates.
std::string_view EmbeddedFile(std::string_view name);

namespace {

// The page runs only its own script and style: nothing inline, nothing from
// elsewhere, not framed, forms post only here.
constexpr char kContentSecurityPolicy[] =
    "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// The assets change only with the binary, but their URLs do not: caches
// must ask again each time, and the ETag makes that cheap.
constexpr char kCacheControl[] = "no-cache";

std::string ETagOf(std::string_view body) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "\"%016" PRIx64 "\"",
                static_cast<uint64_t>(XXH3_64bits(body.data(), body.size())));
  return buf;
}

WebAsset MakeAsset(std::string_view path, std::string_view file,
                   std::string_view content_type) {
  const std::string_view body = EmbeddedFile(file);
  return WebAsset{path, content_type, body, ETagOf(body)};
}

// True if the If-None-Match value names `etag` (weakly: "W/" is ignored, as
// RFC 9110 asks for GET) or is "*".
bool MatchesETag(std::string_view if_none_match, std::string_view etag) {
  while (!if_none_match.empty()) {
    const size_t comma = if_none_match.find(',');
    std::string_view tag = if_none_match.substr(0, comma);
    while (!tag.empty() && (tag.front() == ' ' || tag.front() == '\t')) {
      tag.remove_prefix(1);
    }
    while (!tag.empty() && (tag.back() == ' ' || tag.back() == '\t')) {
      tag.remove_suffix(1);
    }
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    if (tag == "*" || tag == etag) return true;
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

const std::vector<std::pair<std::string, std::string>>& WebSecurityHeaders() {
  static const std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Security-Policy", kContentSecurityPolicy},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
      {"X-Frame-Options", "DENY"},
  };
  return headers;
}

}  // namespace

const std::vector<WebAsset>& WebAssets() {
  static const std::vector<WebAsset> assets = {
      MakeAsset("/", "web/index.html", "text/html; charset=utf-8"),
      MakeAsset("/app.js", "web/app.js", "text/javascript; charset=utf-8"),
      MakeAsset("/app.css", "web/app.css", "text/css; charset=utf-8"),
      MakeAsset("/openapi.json", "openapi.json", "application/json"),
  };
  return assets;
}

const WebAsset* FindWebAsset(std::string_view path) {
  for (const WebAsset& asset : WebAssets()) {
    if (asset.path == path) return &asset;
  }
  return nullptr;
}

void ServeWebAsset(const WebAsset& asset, const HttpRequest& req,
                   HttpResponse* res) {
  res->headers = WebSecurityHeaders();
  res->headers.emplace_back("Cache-Control", kCacheControl);
  res->headers.emplace_back("ETag", asset.etag);
  if (MatchesETag(req.Header("If-None-Match"), asset.etag)) {
    res->status = 304;
    return;
  }
  res->status = 200;
  res->SetContent(std::string(asset.body), std::string(asset.content_type));
}

}  // namespace shortlink
