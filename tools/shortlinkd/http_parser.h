// HttpRequestParser: the HTTP/1.1 request parser of shortlinkd's server,
// with no sockets, clocks or threads: bytes in, a request or an error
// status out. The server (http_server.cc) appends what it receives to a
// buffer and calls Parse after every read; the fuzzer (fuzz/) and the unit
// tests do the same with bytes split wherever they like.
//
// The rules are strict on purpose (docs/shortlinkd.md, "HTTP edge"): every
// request whose framing two parsers could read differently is an error
// (differing Content-Lengths, Content-Length with Transfer-Encoding, a
// transfer coding other than a single "chunked", whitespace before a colon,
// folded headers, bare LF line ends, malformed chunks), and so is an
// HTTP/1.1 request without exactly one valid Host. A body over
// max_body_bytes, however framed, is refused while it is still arriving, and
// the buffer is never allowed to grow past max_buffered_bytes() without a
// request completing.
//
// Usage, per connection: (Parse until kComplete, take the request, Reset)*,
// stopping at the first kError. The result does not depend on how the bytes
// were split between calls, except that a buffer which reaches
// max_buffered_bytes() while a request is still incomplete fails (413/431)
// where the same bytes delivered at once might have completed it.
//
// Thread-safety: external synchronization required (one connection's
// parser belongs to one thread).
#ifndef BLOOMKV_TOOLS_SHORTLINKD_HTTP_PARSER_H_
#define BLOOMKV_TOOLS_SHORTLINKD_HTTP_PARSER_H_

#include <cstddef>
#include <string>

#include "tools/shortlink/http_message.h"

namespace shortlink {

struct HttpParserLimits {
  // Request line plus headers (431 above it).
  size_t max_header_bytes = 8 << 10;
  // Body after de-chunking (413 above it).
  size_t max_body_bytes = 16 << 10;
};

// Longest chunk-size line (with extensions) and trailer line.
constexpr size_t kMaxChunkLineBytes = 1024;

class HttpRequestParser {
 public:
  enum class Result { kNeedMore, kComplete, kError };

  explicit HttpRequestParser(HttpParserLimits limits) : limits_(limits) {}
  HttpRequestParser(const HttpRequestParser&) = delete;
  HttpRequestParser& operator=(const HttpRequestParser&) = delete;

  // Parses the request at the front of *in into *req, resuming where the
  // previous call stopped. kComplete: *req holds the whole request and its
  // bytes are erased from *in (what follows is the next, pipelined request).
  // kError: error_status() says why; the connection cannot be read further.
  // kNeedMore: nothing is erased; append more bytes and call again.
  // REQUIRES: *in and *req are the ones given to the previous calls since
  // construction or Reset, with bytes only appended to *in; no call after
  // kError.
  Result Parse(std::string* in, HttpRequest* req);

  // Prepares for the next request on the connection. REQUIRES: *req is
  // cleared by the caller too.
  void Reset();

  // Buffered bytes at which an incomplete request fails: the head, the
  // body and up to three bytes of chunk framing per body byte.
  size_t max_buffered_bytes() const {
    return limits_.max_header_bytes + 4 * limits_.max_body_bytes;
  }

  // The HTTP status of the last kError (400, 413, 431 or 505).
  int error_status() const { return error_status_; }
  // The head (request line and headers) of the current request is parsed.
  bool head_done() const { return head_done_; }
  // The connection may carry another request after this one.
  bool keep_alive() const { return keep_alive_; }
  // The current request is a HEAD: its answer has no body.
  bool head_method() const { return head_method_; }
  // True once per request when the client asked "Expect: 100-continue" and
  // has sent nothing of the body yet: the caller should answer
  // "100 Continue" now.
  bool TakeContinueRequest() {
    const bool r = continue_requested_;
    continue_requested_ = false;
    return r;
  }

 private:
  Result Fail(int status) {
    error_status_ = status;
    return Result::kError;
  }
  Result ParseBuffered(std::string* in, HttpRequest* req);
  Result ParseHead(const std::string& in, size_t head_end, HttpRequest* req);
  Result ParseChunks(const std::string& in, HttpRequest* req);

  const HttpParserLimits limits_;
  size_t scan_ = 0;  // where the search for the end of the head resumes
  bool head_done_ = false;
  bool head_method_ = false;
  bool keep_alive_ = true;
  bool chunked_ = false;
  bool continue_requested_ = false;
  size_t content_length_ = 0;
  // Chunked body decoding: position in the buffer and what is expected there.
  enum class Chunk { kSize, kData, kTrailer } chunk_ = Chunk::kSize;
  size_t body_pos_ = 0;
  size_t chunk_left_ = 0;
  int error_status_ = 0;  // set with Result::kError
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINKD_HTTP_PARSER_H_
