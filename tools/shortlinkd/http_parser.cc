// HttpRequestParser: see http_parser.h.
#include "tools/shortlinkd/http_parser.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string_view>

namespace shortlink {

namespace {

bool IsTchar(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
      (c >= 'A' && c <= 'Z')) {
    return true;
  }
  return std::strchr("!#$%&'*+-.^_`|~", c) != nullptr && c != '\0';
}

// Header value bytes: visible ASCII, space, tab and obs-text.
bool IsFieldValueChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u == '\t' || (u >= 0x20 && u != 0x7f);
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes a path; a '%' not followed by two hex digits stays as is.
std::string DecodePath(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 &&
        HexValue(s[i + 2]) >= 0) {
      out.push_back(
          static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// A Host value: uri-host [":" port] (RFC 3986: reg-name, IPv4 or a
// bracketed IP literal), checked by its characters only.
bool IsHostValue(std::string_view v) {
  for (const char c : v) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                    (c >= 'A' && c <= 'Z') ||
                    std::strchr("-._~!$&'()*+,;=:%[]", c) != nullptr;
    if (!ok || c == '\0') return false;
  }
  return true;
}

// True if the comma-separated header value holds `token` (any case).
bool HasToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    if (EqualsIgnoreCase(TrimOws(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

void HttpRequestParser::Reset() {
  scan_ = 0;
  head_done_ = false;
  head_method_ = false;
  keep_alive_ = true;
  chunked_ = false;
  continue_requested_ = false;
  content_length_ = 0;
  chunk_ = Chunk::kSize;
  body_pos_ = 0;
  chunk_left_ = 0;
  error_status_ = 0;
}

HttpRequestParser::Result HttpRequestParser::ParseHead(const std::string& in,
                                                       size_t head_end,
                                                       HttpRequest* req) {
  const std::string_view head(in.data(), head_end);  // lines + CRLFs
  size_t line_end = std::min(head.find("\r\n"), head.size());
  const std::string_view line = head.substr(0, line_end);
  // METHOD SP target SP HTTP/1.x
  const size_t sp1 = line.find(' ');
  const size_t sp2 =
      sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return Fail(400);
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (method.empty()) return Fail(400);
  for (char ch : method) {
    if (!IsTchar(ch)) return Fail(400);
  }
  if (target.empty() || target[0] != '/') return Fail(400);
  for (char ch : target) {
    const auto u = static_cast<unsigned char>(ch);
    if (u <= 0x20 || u == 0x7f) return Fail(400);
  }
  req->method.assign(method);
  const size_t q = target.find('?');
  req->path = DecodePath(target.substr(0, q));
  if (q != std::string_view::npos) req->query.assign(target.substr(q + 1));
  bool http10 = false;
  if (version == "HTTP/1.0") {
    http10 = true;
  } else if (version != "HTTP/1.1") {
    const bool looks_http =
        version.size() == 8 && version.starts_with("HTTP/") &&
        std::isdigit(static_cast<unsigned char>(version[5])) &&
        version[6] == '.' &&
        std::isdigit(static_cast<unsigned char>(version[7]));
    return Fail(looks_http ? 505 : 400);
  }
  head_method_ = method == "HEAD";

  bool have_length = false;
  int te_headers = 0;
  bool te_chunked = false;
  bool keep_alive_asked = false;
  int host_headers = 0;
  size_t pos = line_end + 2;
  while (pos < head.size()) {
    line_end = std::min(head.find("\r\n", pos), head.size());
    const std::string_view h = head.substr(pos, line_end - pos);
    pos = line_end + 2;
    const size_t colon = h.find(':');
    // No name, whitespace before the colon, or a folded line.
    if (colon == 0 || colon == std::string_view::npos) return Fail(400);
    const std::string_view name = h.substr(0, colon);
    for (char ch : name) {
      if (!IsTchar(ch)) return Fail(400);
    }
    const std::string_view value = TrimOws(h.substr(colon + 1));
    for (char ch : value) {
      if (!IsFieldValueChar(ch)) return Fail(400);
    }
    req->headers.emplace_back(std::string(name), std::string(value));

    if (EqualsIgnoreCase(name, "Content-Length")) {
      // A list or repeated header is accepted only if every value is the
      // same number.
      std::string_view rest = value;
      for (;;) {
        const size_t comma = rest.find(',');
        const std::string_view v = TrimOws(rest.substr(0, comma));
        if (v.empty() || v.size() > 18) return Fail(400);
        size_t n = 0;
        for (char ch : v) {
          if (ch < '0' || ch > '9') return Fail(400);
          n = n * 10 + static_cast<size_t>(ch - '0');
        }
        if (have_length && n != content_length_) return Fail(400);
        have_length = true;
        content_length_ = n;
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      te_headers++;
      te_chunked = EqualsIgnoreCase(value, "chunked");
    } else if (EqualsIgnoreCase(name, "Host")) {
      host_headers++;
      if (!IsHostValue(value)) return Fail(400);
    } else if (EqualsIgnoreCase(name, "Connection")) {
      // HTTP/1.0 closes unless asked not to; HTTP/1.1 the other way.
      if (HasToken(value, "close")) keep_alive_ = false;
      if (HasToken(value, "keep-alive")) keep_alive_asked = true;
    }
  }
  // RFC 9112 section 3.2: exactly one Host in HTTP/1.1, at most one in 1.0.
  if (host_headers > 1 || (!http10 && host_headers == 0)) return Fail(400);
  if (http10 && !keep_alive_asked) keep_alive_ = false;
  if (te_headers > 0) {
    // Only a single "chunked", never with a length, never in HTTP/1.0.
    if (te_headers > 1 || !te_chunked || have_length || http10) {
      return Fail(400);
    }
    chunked_ = true;
  }
  if (content_length_ > limits_.max_body_bytes) return Fail(413);
  head_done_ = true;
  body_pos_ = head_end + 4;

  continue_requested_ = (chunked_ || content_length_ > 0) && !http10 &&
                        in.size() == body_pos_ &&
                        HasToken(req->Header("Expect"), "100-continue");
  return Result::kNeedMore;
}

// Decodes as much of a chunked body as has arrived.
HttpRequestParser::Result HttpRequestParser::ParseChunks(const std::string& in,
                                                         HttpRequest* req) {
  for (;;) {
    if (chunk_ == Chunk::kData) {
      // The data is followed by CRLF; anything else there is refused as
      // soon as it arrives.
      const size_t end = body_pos_ + chunk_left_;
      if (in.size() > end && in[end] != '\r') return Fail(400);
      if (in.size() > end + 1 && in[end + 1] != '\n') return Fail(400);
      if (in.size() < end + 2) return Result::kNeedMore;
      req->body.append(in, body_pos_, chunk_left_);
      body_pos_ = end + 2;
      chunk_ = Chunk::kSize;
      continue;
    }
    // A line ends at its first LF, which must follow a CR: a bare LF is
    // refused when it arrives, not after waiting for a CRLF.
    const size_t lf = in.find('\n', body_pos_);
    if (lf == std::string::npos) {
      return in.size() - body_pos_ > kMaxChunkLineBytes ? Fail(400)
                                                        : Result::kNeedMore;
    }
    if (lf == body_pos_ || in[lf - 1] != '\r') return Fail(400);
    const size_t eol = lf - 1;
    const std::string_view line(in.data() + body_pos_, eol - body_pos_);
    if (line.size() > kMaxChunkLineBytes) return Fail(400);
    body_pos_ = eol + 2;
    for (char ch : line) {
      if (ch == '\r' || ch == '\n' || ch == '\0') return Fail(400);
    }
    if (chunk_ == Chunk::kTrailer) {
      if (line.empty()) return Result::kComplete;
      if (line[0] == ' ' || line[0] == '\t' ||
          line.find(':') == std::string_view::npos) {
        return Fail(400);
      }
      continue;  // trailers are read and ignored
    }
    // chunk-size [ext]: hex digits, then nothing or ";..." after OWS.
    size_t i = 0;
    size_t size = 0;
    while (i < line.size() && HexValue(line[i]) >= 0) {
      size = size * 16 + static_cast<size_t>(HexValue(line[i]));
      if (size > limits_.max_body_bytes) return Fail(413);
      i++;
    }
    if (i == 0) return Fail(400);
    const std::string_view ext = TrimOws(line.substr(i));
    if (!ext.empty() && ext[0] != ';') return Fail(400);
    if (req->body.size() + size > limits_.max_body_bytes) return Fail(413);
    if (size == 0) {
      chunk_ = Chunk::kTrailer;
    } else {
      chunk_ = Chunk::kData;
      chunk_left_ = size;
    }
  }
}

// Parses what is buffered, without the cap on the buffer.
HttpRequestParser::Result HttpRequestParser::ParseBuffered(std::string* in,
                                                           HttpRequest* req) {
  if (in->empty()) return Result::kNeedMore;
  if (!head_done_) {
    // Every LF must end a CRLF; the head ends at the first CRLFCRLF.
    const size_t limit = std::min(in->size(), limits_.max_header_bytes);
    for (size_t k = scan_; k < limit; k++) {
      if ((*in)[k] != '\n') continue;
      if (k == 0 || (*in)[k - 1] != '\r') return Fail(400);
      if (k >= 3 && (*in)[k - 2] == '\n' && (*in)[k - 3] == '\r') {
        if (k == 3) return Fail(400);  // empty request line
        const Result r = ParseHead(*in, k - 3, req);
        if (r != Result::kNeedMore) return r;
        break;
      }
    }
    if (!head_done_) {
      scan_ = limit;
      return in->size() >= limits_.max_header_bytes ? Fail(431)
                                                    : Result::kNeedMore;
    }
  }
  if (chunked_) {
    const Result r = ParseChunks(*in, req);
    if (r == Result::kComplete) in->erase(0, body_pos_);
    return r;
  }
  if (in->size() < body_pos_ + content_length_) return Result::kNeedMore;
  req->body.assign(*in, body_pos_, content_length_);
  in->erase(0, body_pos_ + content_length_);
  return Result::kComplete;
}

HttpRequestParser::Result HttpRequestParser::Parse(std::string* in,
                                                   HttpRequest* req) {
  const Result r = ParseBuffered(in, req);
  if (r == Result::kNeedMore && in->size() >= max_buffered_bytes()) {
    return Fail(head_done_ ? 413 : 431);
  }
  return r;
}

}  // namespace shortlink
