// The web page (tools/shortlink/web/: index.html, app.js, app.css) and the
// OpenAPI document (tools/shortlink/openapi.json), compiled into the binary
// by tools/shortlink/embed_files.cmake and served by the Service at "/",
// "/app.js", "/app.css" and "/openapi.json".
//
// Every answer carries the page's security headers (a Content-Security-Policy
// that allows only the server's own script and style, nosniff, no referrer)
// and an ETag; a request whose If-None-Match names it is answered 304.
//
// Thread-safety: thread-safe; the assets are immutable after their first
// use.
#ifndef BLOOMKV_TOOLS_SHORTLINK_WEB_ASSETS_H_
#define BLOOMKV_TOOLS_SHORTLINK_WEB_ASSETS_H_

#include <string>
#include <string_view>
#include <vector>

#include "tools/shortlink/http_message.h"

namespace shortlink {

struct WebAsset {
  std::string_view path;          // URL path, e.g. "/app.js"
  std::string_view content_type;  // with the charset for text
  std::string_view body;
  std::string etag;  // strong, quoted: a hash of the body
};

// Every asset, in a fixed order.
const std::vector<WebAsset>& WebAssets();

// The asset served at `path`, or nullptr.
const WebAsset* FindWebAsset(std::string_view path);

// Answers a GET or HEAD of `asset`.
void ServeWebAsset(const WebAsset& asset, const HttpRequest& req,
                   HttpResponse* res);

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_WEB_ASSETS_H_
