// Unit tests of shortlinkd's HTTP request parser (tools/shortlinkd/
// http_parser.h): each case is a byte stream and what must come out of it,
// checked with the bytes given at once, one at a time and in seeded random
// pieces, since a parser that depends on how reads split a stream is the
// classic request-smuggling bug. The end-to-end framing tests against the
// real server are in shortlinkd_test.cc.
#include "tools/shortlinkd/http_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shortlink {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Result = HttpRequestParser::Result;

// What a byte stream parses to: the complete requests in order, then either
// an error status or 0 (the stream ended waiting for more).
struct Outcome {
  std::vector<HttpRequest> requests;
  int error = 0;
  bool continue_asked = false;  // TakeContinueRequest said yes at least once
};

// Feeds `pieces` one after the other, like a connection's reads, parsing
// every request that completes.
Outcome ParsePieces(const std::vector<std::string>& pieces,
                    HttpParserLimits limits = {}) {
  Outcome out;
  HttpRequestParser parser(limits);
  std::string in;
  HttpRequest req;
  for (const std::string& piece : pieces) {
    in += piece;
    for (;;) {
      const Result r = parser.Parse(&in, &req);
      out.continue_asked |= parser.TakeContinueRequest();
      if (r == Result::kError) {
        out.error = parser.error_status();
        return out;
      }
      if (r == Result::kNeedMore) break;
      out.requests.push_back(std::move(req));
      req = HttpRequest();
      parser.Reset();
    }
  }
  return out;
}

Outcome ParseWhole(const std::string& bytes, HttpParserLimits limits = {}) {
  return ParsePieces({bytes}, limits);
}

std::vector<std::string> Bytewise(const std::string& bytes) {
  std::vector<std::string> pieces;
  for (char c : bytes) pieces.emplace_back(1, c);
  return pieces;
}

std::vector<std::string> RandomPieces(const std::string& bytes,
                                      bloomkv::Random* rnd) {
  std::vector<std::string> pieces;
  for (size_t pos = 0; pos < bytes.size();) {
    const size_t n = 1 + rnd->Uniform(std::min<size_t>(bytes.size(), 64));
    pieces.push_back(bytes.substr(pos, n));
    pos += n;
  }
  return pieces;
}

void ExpectSameRequests(const Outcome& a, const Outcome& b) {
  EXPECT_EQ(a.error, b.error);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (size_t i = 0; i < a.requests.size(); i++) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(a.requests[i].method, b.requests[i].method);
    EXPECT_EQ(a.requests[i].path, b.requests[i].path);
    EXPECT_EQ(a.requests[i].query, b.requests[i].query);
    EXPECT_EQ(a.requests[i].headers, b.requests[i].headers);
    EXPECT_EQ(a.requests[i].body, b.requests[i].body);
  }
}

struct Case {
  const char* name;
  std::string bytes;
  int error;                        // 0: every request parses
  std::vector<std::string> bodies;  // of the complete requests, in order
};

std::string Post(std::string_view framing, std::string_view body) {
  return "POST /api/links HTTP/1.1\r\nHost: h\r\n" + std::string(framing) +
         "\r\n" + std::string(body);
}

std::vector<Case> Cases() {
  const std::string get = "GET /abc HTTP/1.1\r\nHost: h\r\n\r\n";
  return {
      {"get", get, 0, {""}},
      {"pipelined",
       get + Post("Content-Length: 3\r\n", "xyz") + get,
       0,
       {"", "xyz", ""}},
      {"chunked",
       Post("Transfer-Encoding: chunked\r\n",
            "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nT: v\r\n\r\n"),
       0,
       {"abcde"}},
      {"same length twice", Post("Content-Length: 2, 2\r\n", "ab"), 0, {"ab"}},
      {"http/1.0", "GET / HTTP/1.0\r\n\r\n", 0, {""}},
      // RFC 9112 section 3.2: exactly one Host in HTTP/1.1, a valid one.
      {"host in any case, with a port",
       "GET / HTTP/1.1\r\nhost: [::1]:8080\r\n\r\n",
       0,
       {""}},
      {"no host in http/1.1", "GET /abc HTTP/1.1\r\n\r\n", 400, {}},
      {"two hosts", "GET / HTTP/1.1\r\nHost: h\r\nHost: h\r\n\r\n", 400, {}},
      {"two hosts in http/1.0",
       "GET / HTTP/1.0\r\nHost: h\r\nHost: i\r\n\r\n",
       400,
       {}},
      {"host with a space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400, {}},
      {"host with a path", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, {}},
      {"differing lengths",
       Post("Content-Length: 2\r\nContent-Length: 3\r\n", "abc"),
       400,
       {}},
      {"length and chunked",
       Post("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"),
       400,
       {}},
      {"chunked twice",
       Post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
            "0\r\n\r\n"),
       400,
       {}},
      {"gzip coding",
       Post("Transfer-Encoding: gzip, chunked\r\n", ""),
       400,
       {}},
      {"chunked in http/1.0",
       "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       400,
       {}},
      {"space before colon", Post("Content-Length : 3\r\n", "abc"), 400, {}},
      {"folded header", Post("X: a\r\n b\r\n", ""), 400, {}},
      {"bare LF", "GET / HTTP/1.1\nHost: h\r\n\r\n", 400, {}},
      {"control char in value", Post("X: a\x01b\r\n", ""), 400, {}},
      {"signed length", Post("Content-Length: +3\r\n", "abc"), 400, {}},
      {"chunk size not hex",
       Post("Transfer-Encoding: chunked\r\n", "zz\r\nab\r\n0\r\n\r\n"),
       400,
       {}},
      // A bare LF ends no chunk line: refused as soon as it arrives, not
      // left waiting for a CRLF that a client may never send.
      {"bare LF after a chunk size",
       Post("Transfer-Encoding: chunked\r\n", "3\n"),
       400,
       {}},
      {"bare LF after a chunk size, data following",
       Post("Transfer-Encoding: chunked\r\n", "3\nabc"),
       400,
       {}},
      {"bare LF after chunk data",
       Post("Transfer-Encoding: chunked\r\n", "3\r\nabc\n"),
       400,
       {}},
      {"bare LF after the last chunk",
       Post("Transfer-Encoding: chunked\r\n", "0\n"),
       400,
       {}},
      {"bare LF after a trailer",
       Post("Transfer-Encoding: chunked\r\n", "0\r\nT: v\n"),
       400,
       {}},
      {"chunk longer than its size",
       Post("Transfer-Encoding: chunked\r\n", "2\r\nabc\r\n0\r\n\r\n"),
       400,
       {}},
      {"version 2.0", "GET / HTTP/2.0\r\n\r\n", 505, {}},
      {"not http", "GET / FTP/1.1\r\n\r\n", 400, {}},
      {"no target", "GET\r\n\r\n", 400, {}},
      {"relative target", "GET abc HTTP/1.1\r\n\r\n", 400, {}},
      {"empty request line", "\r\n\r\n", 400, {}},
      {"length over the cap", Post("Content-Length: 16385\r\n", ""), 413, {}},
      {"chunk over the cap",
       Post("Transfer-Encoding: chunked\r\n", "4001\r\n"),
       413,
       {}},
      {"chunks adding up over the cap",
       Post("Transfer-Encoding: chunked\r\n",
            "2000\r\n" + std::string(0x2000, 'a') + "\r\n2001\r\n"),
       413,
       {}},
      {"head over the cap",
       "GET / HTTP/1.1\r\nX: " + std::string(8 << 10, 'a') + "\r\n\r\n",
       431,
       {}},
      {"valid then invalid", get + "GET / HTTP/1.1\nX: y\r\n\r\n", 400, {""}},
  };
}

TEST(HttpParserTest, EveryCaseParsesTheSameHoweverTheBytesAreSplit) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const Outcome whole = ParseWhole(c.bytes);
    EXPECT_EQ(c.error, whole.error);
    std::vector<std::string> bodies;
    for (const HttpRequest& r : whole.requests) bodies.push_back(r.body);
    EXPECT_EQ(c.bodies, bodies);
    {
      SCOPED_TRACE("byte by byte");
      ExpectSameRequests(whole, ParsePieces(Bytewise(c.bytes)));
    }
    for (uint64_t seed : bloomkv::test::TestSeeds()) {
      SCOPED_TRACE("random pieces, seed=" + std::to_string(seed));
      bloomkv::Random rnd(seed);
      ExpectSameRequests(whole, ParsePieces(RandomPieces(c.bytes, &rnd)));
    }
  }
}

TEST(HttpParserTest, RequestFieldsAreDecoded) {
  const Outcome out = ParseWhole(
      "DELETE /api/links/a%2Fb%zz?x=%41 HTTP/1.1\r\n"
      "Host:  h \r\nConnection: close\r\n\r\n");
  ASSERT_EQ(0, out.error);
  ASSERT_EQ(1u, out.requests.size());
  const HttpRequest& r = out.requests[0];
  EXPECT_EQ("DELETE", r.method);
  EXPECT_EQ("/api/links/a/b%zz", r.path);  // a bad escape stays as is
  EXPECT_EQ("x=%41", r.query);             // the query stays raw
  EXPECT_EQ("h", r.Header("host"));        // values without OWS
}

TEST(HttpParserTest, KeepAliveAndHeadFollowTheRequest) {
  struct KeepAliveCase {
    std::string head;
    bool keep_alive;
  };
  const std::vector<KeepAliveCase> cases = {
      {"GET / HTTP/1.1\r\nHost: h\r\n", true},
      {"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n", false},
      {"GET / HTTP/1.0\r\n", false},
      {"GET / HTTP/1.0\r\nConnection: x, Keep-Alive\r\n", true},
  };
  for (const KeepAliveCase& c : cases) {
    SCOPED_TRACE(c.head);
    HttpRequestParser parser({});
    std::string in = c.head + "\r\n";
    HttpRequest req;
    ASSERT_EQ(Result::kComplete, parser.Parse(&in, &req));
    EXPECT_EQ(c.keep_alive, parser.keep_alive());
    EXPECT_FALSE(parser.head_method());
  }
  HttpRequestParser parser({});
  std::string in = "HEAD / HTTP/1.1\r\nHost: h\r\n\r\n";
  HttpRequest req;
  ASSERT_EQ(Result::kComplete, parser.Parse(&in, &req));
  EXPECT_TRUE(parser.head_method());
}

TEST(HttpParserTest, ContinueIsRequestedOnlyBeforeAnyBodyByte) {
  const std::string head =
      "POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
      "Content-Length: 2\r\n\r\n";
  EXPECT_TRUE(ParsePieces({head, "ab"}).continue_asked);
  EXPECT_FALSE(ParseWhole(head + "ab").continue_asked);  // body already here
  EXPECT_FALSE(
      ParseWhole("GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n")
          .continue_asked);  // no body to wait for
  EXPECT_FALSE(ParsePieces({"POST / HTTP/1.0\r\nExpect: 100-continue\r\n"
                            "Content-Length: 2\r\n\r\n",
                            "ab"})
                   .continue_asked);  // HTTP/1.0 knows no 100
}

TEST(HttpParserTest, BufferStopsGrowingAtTheCapWhateverTheFraming) {
  // One-byte chunks cost five bytes of framing each: the body stays under
  // its limit while the buffer fills up.
  const HttpParserLimits limits{64, 64};
  std::string chunks;
  for (int i = 0; i < 64; i++) chunks += "1\r\na\r\n";
  const std::string bytes =
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" +
      chunks + "0\r\n\r\n";
  ASSERT_GT(bytes.size(), HttpRequestParser(limits).max_buffered_bytes());
  // Delivered at once the request is complete and within the limits...
  const Outcome whole = ParseWhole(bytes, limits);
  ASSERT_EQ(0, whole.error);
  ASSERT_EQ(1u, whole.requests.size());
  EXPECT_EQ(std::string(64, 'a'), whole.requests[0].body);
  // ... trickled, it is refused once the buffer reaches the cap.
  HttpRequestParser parser(limits);
  std::string in;
  HttpRequest req;
  size_t fed = 0;
  Result r = Result::kNeedMore;
  while (r == Result::kNeedMore && fed < bytes.size()) {
    in += bytes[fed++];
    r = parser.Parse(&in, &req);
    ASSERT_LE(in.size(), parser.max_buffered_bytes());
    ASSERT_LE(req.body.size(), limits.max_body_bytes);
  }
  EXPECT_EQ(Result::kError, r);
  EXPECT_EQ(413, parser.error_status());
  EXPECT_EQ(parser.max_buffered_bytes(), in.size());
}

TEST(HttpParserTest, HeadThatNeverEndsIs431AtTheHeaderLimit) {
  const HttpParserLimits limits{64, 16};
  HttpRequestParser parser(limits);
  std::string in = "GET / HTTP/1.1\r\n";
  HttpRequest req;
  ASSERT_EQ(Result::kNeedMore, parser.Parse(&in, &req));
  while (in.size() < limits.max_header_bytes - 1) {
    in += 'x';
    ASSERT_EQ(Result::kNeedMore, parser.Parse(&in, &req));
  }
  in += 'x';
  EXPECT_EQ(Result::kError, parser.Parse(&in, &req));
  EXPECT_EQ(431, parser.error_status());
}

}  // namespace
}  // namespace shortlink
