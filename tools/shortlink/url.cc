// URL validation and normalization; see url.h for the rules.
#include "tools/shortlink/url.h"

#include <cstdint>

namespace shortlink {

using bloomkv::Status;

namespace {

char ToLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool IsAlpha(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Characters allowed in a registered name or IPv4 host. Narrower than RFC
// 3986's reg-name on purpose: sub-delimiters and percent-encoded hosts are
// legal but only ever seen in attacks and parser-confusion tricks.
bool IsHostChar(char c) {
  return IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_';
}

// Inside "[...]": hex digits, ':' and '.' (for an embedded IPv4 suffix).
bool IsIpv6Char(char c) { return IsHexDigit(c) || c == ':' || c == '.'; }

}  // namespace

Status NormalizeUrl(std::string_view url, std::string* normalized) {
  if (url.empty()) return Status::InvalidArgument("url is empty");
  if (url.size() > kMaxUrlBytes) {
    return Status::InvalidArgument("url is longer than 2048 bytes");
  }
  for (char c : url) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b == 0x7f) {
      return Status::InvalidArgument(
          "url contains whitespace or a control character");
    }
    if (b >= 0x80) {
      return Status::InvalidArgument(
          "url contains non-ASCII bytes (percent-encode them)");
    }
  }

  // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
  size_t colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0 || !IsAlpha(url[0])) {
    return Status::InvalidArgument("url has no scheme (need http or https)");
  }
  std::string scheme;
  for (size_t i = 0; i < colon; i++) {
    const char c = url[i];
    if (!IsAlpha(c) && !IsDigit(c) && c != '+' && c != '-' && c != '.') {
      return Status::InvalidArgument("url has no scheme (need http or https)");
    }
    scheme.push_back(ToLower(c));
  }
  if (scheme != "http" && scheme != "https") {
    return Status::InvalidArgument("url scheme must be http or https");
  }
  std::string_view rest = url.substr(colon + 1);
  if (rest.substr(0, 2) != "//") {
    return Status::InvalidArgument("url has no host (expected \"//\")");
  }
  rest.remove_prefix(2);

  const size_t authority_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, authority_end);
  const std::string_view tail = authority_end == std::string_view::npos
                                    ? std::string_view()
                                    : rest.substr(authority_end);
  if (authority.find('@') != std::string_view::npos) {
    return Status::InvalidArgument("url must not contain userinfo (user@)");
  }

  std::string host;
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return Status::InvalidArgument("url has an unterminated IPv6 host");
    }
    const std::string_view literal = authority.substr(1, close - 1);
    if (literal.find(':') == std::string_view::npos) {
      return Status::InvalidArgument("url has a malformed IPv6 host");
    }
    host.push_back('[');
    for (char c : literal) {
      if (!IsIpv6Char(c)) {
        return Status::InvalidArgument("url has a malformed IPv6 host");
      }
      host.push_back(ToLower(c));
    }
    host.push_back(']');
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') {
        return Status::InvalidArgument("url has a malformed host");
      }
      has_port = true;
      port_text = after.substr(1);
    }
  } else {
    const size_t port_colon = authority.find(':');
    const std::string_view name = authority.substr(0, port_colon);
    if (port_colon != std::string_view::npos) {
      has_port = true;
      port_text = authority.substr(port_colon + 1);
    }
    for (char c : name) {
      if (!IsHostChar(c)) {
        return Status::InvalidArgument("url host contains invalid characters");
      }
      host.push_back(ToLower(c));
    }
  }
  if (host.empty()) return Status::InvalidArgument("url has no host");
  if (host[0] != '[') {
    // Dot-separated labels, none empty; one trailing dot (the DNS root) is
    // allowed. Refuses ".", "...", ".a" and "a..b".
    const std::string_view name =
        std::string_view(host).substr(0, host.size() - (host.back() == '.'));
    if (name.empty() || name.front() == '.' ||
        name.find("..") != std::string_view::npos || name.back() == '.') {
      return Status::InvalidArgument("url host has an empty label");
    }
  }

  uint32_t port = 0;
  if (has_port && !port_text.empty()) {
    if (port_text.size() > 5) {
      return Status::InvalidArgument("url port is out of range");
    }
    for (char c : port_text) {
      if (!IsDigit(c))
        return Status::InvalidArgument("url port is not a number");
      port = port * 10 + static_cast<uint32_t>(c - '0');
    }
    if (port == 0 || port > 65535) {
      return Status::InvalidArgument("url port is out of range");
    }
  }
  const uint32_t default_port = scheme == "http" ? 80 : 443;

  normalized->clear();
  normalized->reserve(url.size() + 1);
  normalized->append(scheme);
  normalized->append("://");
  normalized->append(host);
  if (port != 0 && port != default_port) {
    normalized->push_back(':');
    normalized->append(std::to_string(port));
  }
  if (tail.empty() || tail[0] != '/') normalized->push_back('/');
  normalized->append(tail);
  return Status::OK();
}

}  // namespace shortlink
