// HttpServer: shortlinkd's HTTP/1.1 front. One event thread accepts
// connections and reads requests with epoll; a fixed pool of workers runs
// the handler, only ever on a complete request. A slow or idle client costs
// a file descriptor and a buffer, never a worker.
//
// The parser is strict on purpose (docs/shortlinkd.md, "HTTP edge"): every
// request whose framing two parsers could read differently is answered 400
// and the connection closed (differing Content-Lengths, Content-Length with
// Transfer-Encoding, a transfer coding other than "chunked", whitespace
// before a colon, folded headers, bare LF line ends, malformed chunks). A
// body over max_body_bytes, however framed, is answered 413 while it is
// still arriving; nothing beyond the limit is buffered. Pipelined requests
// are answered in order, one at a time per connection.
//
// Thread-safety: Start, Run and Stop may be called from any thread; Stop
// may be called while Run is running (e.g. from a signal thread). The
// handlers are called concurrently from the worker threads.
#ifndef BLOOMKV_TOOLS_SHORTLINKD_HTTP_SERVER_H_
#define BLOOMKV_TOOLS_SHORTLINKD_HTTP_SERVER_H_

#include <sys/socket.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "bloomkv/status.h"
#include "tools/shortlink/http_message.h"

namespace shortlink {

struct HttpServerOptions {
  // Worker threads running the handler.
  int threads = 16;
  // Listen queue length: connections the kernel accepts for us while the
  // event thread is busy. SOMAXCONN (4096 on current Linux; the kernel caps
  // it at net.core.somaxconn).
  int backlog = SOMAXCONN;
  // A request must arrive completely within this time of its first byte,
  // else it is answered 408 and the connection closed.
  int read_timeout_ms = 10'000;
  // A keep-alive connection with no request in flight is closed after this.
  int idle_timeout_ms = 30'000;
  // A response must be taken by the client within this time.
  int write_timeout_ms = 10'000;
  // Request line plus headers (431 above it).
  size_t max_header_bytes = 8 << 10;
  // Body after de-chunking (413 above it).
  size_t max_body_bytes = 16 << 10;
  // Open connections beyond this are closed at once.
  size_t max_connections = 10'000;
};

class HttpServer {
 public:
  // Answers a complete request. Called on a worker thread.
  using Handler = std::function<void(const HttpRequest&, HttpResponse*)>;
  // Fills in the answer to a request refused by the server itself
  // (res->status already set). Called on the event thread; must be quick.
  using RejectHandler = std::function<void(const HttpRequest&, HttpResponse*)>;

  HttpServer(HttpServerOptions options, Handler handler, RejectHandler reject);
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  ~HttpServer();

  // Binds and listens on host:port (port 0: any free port); *bound_port
  // receives the port.
  bloomkv::Status Listen(const std::string& host, int port, int* bound_port);

  // Serves until Stop. REQUIRES: Listen succeeded.
  bloomkv::Status Run();

  // Makes Run return: stops accepting, lets running handlers finish and
  // closes every connection.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINKD_HTTP_SERVER_H_
