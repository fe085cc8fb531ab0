// HttpRequest and HttpResponse: the HTTP messages the service handles,
// independent of the server that parsed them (tools/shortlinkd/http_server).
//
// Thread-safety: plain values; one thread at a time.
#ifndef BLOOMKV_TOOLS_SHORTLINK_HTTP_MESSAGE_H_
#define BLOOMKV_TOOLS_SHORTLINK_HTTP_MESSAGE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shortlink {

// ASCII case-insensitive equality, for header names and tokens.
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

struct HttpRequest {
  std::string method;  // as sent, e.g. "GET"
  std::string path;    // percent-decoded, without the query
  std::string query;   // after '?', raw
  std::vector<std::pair<std::string, std::string>> headers;  // in order
  std::string body;                                          // de-chunked
  // The peer's address as text ("192.0.2.7", "2001:db8::1"), without the
  // port; "" if unknown. Filled in by the server, never from a header.
  std::string remote_addr;

  // The first header named `name` (any case); "" if there is none.
  std::string_view Header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (EqualsIgnoreCase(n, name)) return v;
    }
    return {};
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type;  // empty: no body
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones

  void SetContent(std::string b, std::string type) {
    body = std::move(b);
    content_type = std::move(type);
  }
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_HTTP_MESSAGE_H_
