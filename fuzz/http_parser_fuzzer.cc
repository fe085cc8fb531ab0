// Fuzz target for shortlinkd's HTTP request parser
// (tools/shortlinkd/http_parser.h), which reads every byte a client sends.
//
// Input: [flags][header limit][body limit][n] then n piece lengths, then the
// byte stream of one connection. With flags bit 0 set the limits are small
// (so the fuzzer reaches them: head 8..1028 bytes, body 0..510), else the
// server's defaults. The stream is parsed three times, like a connection's
// reads would deliver it: in one piece, in the given piece lengths (cycled)
// and byte by byte.
//
// Invariants: no crash, no sanitizer report; a body is never longer than
// its limit, and an incomplete request never holds the buffer at or above
// max_buffered_bytes(); errors are only 400, 413, 431 or 505; every request
// that parses has unambiguous framing (a single "chunked" and no
// Content-Length, or Content-Length values that all equal the body's
// length, or neither and no body); and the three deliveries give the same
// requests and the same error, except that a split delivery may fail at the
// buffer cap where the whole stream, present at once, went further.
// Thread-safety: single-threaded.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "tools/shortlinkd/http_parser.h"

namespace shortlink {
namespace {

constexpr size_t kPrefixBytes = 4;

struct Outcome {
  std::vector<HttpRequest> requests;
  int error = 0;        // 0: the stream ended waiting for more
  bool capped = false;  // the error came with the buffer at the cap
};

bool SameRequest(const HttpRequest& a, const HttpRequest& b) {
  return a.method == b.method && a.path == b.path && a.query == b.query &&
         a.headers == b.headers && a.body == b.body;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

void CheckFraming(const HttpRequest& req, const HttpParserLimits& limits) {
  FUZZ_CHECK(!req.method.empty(), "request without a method");
  FUZZ_CHECK(!req.path.empty() && req.path[0] == '/',
             "path does not start with '/': " + req.path);
  FUZZ_CHECK(req.body.size() <= limits.max_body_bytes, "body over the limit");
  int te = 0, cl = 0;
  for (const auto& [name, value] : req.headers) {
    if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      te++;
      FUZZ_CHECK(EqualsIgnoreCase(value, "chunked"),
                 "accepted transfer coding " + value);
    } else if (EqualsIgnoreCase(name, "Content-Length")) {
      cl++;
      std::string_view rest = value;
      for (;;) {
        const size_t comma = rest.find(',');
        const std::string_view v = Trim(rest.substr(0, comma));
        size_t n = 0;
        for (char c : v) {
          FUZZ_CHECK(c >= '0' && c <= '9', "Content-Length " + value);
          n = n * 10 + static_cast<size_t>(c - '0');
        }
        FUZZ_CHECK(!v.empty() && n == req.body.size(),
                   "Content-Length " + value + " with a body of " +
                       std::to_string(req.body.size()) + " bytes");
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
    }
  }
  FUZZ_CHECK(te <= 1, "several Transfer-Encoding headers accepted");
  FUZZ_CHECK(te == 0 || cl == 0, "Transfer-Encoding with Content-Length");
  if (te == 0 && cl == 0) FUZZ_CHECK(req.body.empty(), "body without framing");
}

Outcome Parse(std::string_view stream, const std::vector<size_t>& pieces,
              const HttpParserLimits& limits) {
  Outcome out;
  HttpRequestParser parser(limits);
  std::string in;
  HttpRequest req;
  size_t pos = 0;
  for (size_t i = 0; pos < stream.size(); i++) {
    const size_t n = pieces.empty() ? stream.size() : pieces[i % pieces.size()];
    in.append(stream.substr(pos, n));
    pos += std::min(n, stream.size() - pos);
    for (;;) {
      const HttpRequestParser::Result r = parser.Parse(&in, &req);
      (void)parser.TakeContinueRequest();
      FUZZ_CHECK(req.body.size() <= limits.max_body_bytes,
                 "more body stored than the limit");
      if (r == HttpRequestParser::Result::kError) {
        out.error = parser.error_status();
        FUZZ_CHECK(out.error == 400 || out.error == 413 || out.error == 431 ||
                       out.error == 505,
                   "error status " + std::to_string(out.error));
        out.capped = in.size() >= parser.max_buffered_bytes();
        return out;
      }
      if (r == HttpRequestParser::Result::kNeedMore) {
        FUZZ_CHECK(in.size() < parser.max_buffered_bytes(),
                   "incomplete request holds the buffer at the cap");
        break;
      }
      CheckFraming(req, limits);
      out.requests.push_back(std::move(req));
      req = HttpRequest();
      parser.Reset();
    }
  }
  return out;
}

// `split` must equal `whole`, or stop at the buffer cap on the way to it.
void CheckSameAsWhole(const Outcome& whole, const Outcome& split,
                      const char* how) {
  const bool same_end = split.error == whole.error &&
                        split.requests.size() == whole.requests.size();
  FUZZ_CHECK(
      same_end || (split.capped && (split.error == 413 || split.error == 431)),
      std::string(how) + ": ended with " + std::to_string(split.error) +
          " after " + std::to_string(split.requests.size()) +
          " requests, in one piece with " + std::to_string(whole.error) +
          " after " + std::to_string(whole.requests.size()));
  FUZZ_CHECK(split.requests.size() <= whole.requests.size(),
             std::string(how) + ": more requests than in one piece");
  for (size_t i = 0; i < split.requests.size(); i++) {
    FUZZ_CHECK(SameRequest(split.requests[i], whole.requests[i]),
               std::string(how) + ": request " + std::to_string(i) +
                   " differs from the one parsed in one piece");
  }
}

}  // namespace
}  // namespace shortlink

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shortlink;
  if (size < kPrefixBytes) return 0;
  HttpParserLimits limits;
  if (data[0] & 1) {
    limits.max_header_bytes = 8 + size_t{data[1]} * 4;
    limits.max_body_bytes = size_t{data[2]} * 2;
  }
  const size_t count = std::min<size_t>(data[3] % 16, size - kPrefixBytes);
  std::vector<size_t> pieces;
  for (size_t i = 0; i < count; i++) {
    pieces.push_back(size_t{data[kPrefixBytes + i]} + 1);
  }
  const std::string_view stream(
      reinterpret_cast<const char*>(data) + kPrefixBytes + count,
      size - kPrefixBytes - count);

  const Outcome whole = Parse(stream, {}, limits);
  if (!pieces.empty()) {
    CheckSameAsWhole(whole, Parse(stream, pieces, limits), "given pieces");
  }
  CheckSameAsWhole(whole, Parse(stream, {1}, limits), "byte by byte");
  return 0;
}
