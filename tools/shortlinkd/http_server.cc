// HttpServer: see http_server.h. Everything about a connection (its buffer,
// parse state and deadline) belongs to the event thread; workers see only a
// copy of the request and hand back a response through done_ and an
// eventfd.
#include "tools/shortlinkd/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tools/shortlinkd/http_parser.h"
#include "util/mutex.h"

namespace shortlink {

using bloomkv::Status;

namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

// epoll tags of the two non-connection descriptors; connections count up
// from kFirstConnId.
constexpr uint64_t kListenId = 0;
constexpr uint64_t kWakeId = 1;
constexpr uint64_t kFirstConnId = 2;

// How often deadlines are checked; timeouts fire up to this much late.
constexpr Ms kSweepInterval{50};
// Bytes read per recv.
constexpr size_t kReadBlockBytes = 16 << 10;
// After an answer that closes the connection the client's remaining bytes
// are read and dropped (so the close does not reset the connection and
// destroy the answer in flight), for at most this long and this much.
constexpr Ms kDrainTime{1000};
constexpr size_t kMaxDrainBytes = 1 << 20;
// After EMFILE/ENFILE, accepting pauses this long.
constexpr Ms kAcceptPause{100};

const char* StatusText(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

// The numeric host of an accepted peer; an IPv4-mapped IPv6 address
// (::ffff:192.0.2.7, from a dual-stack socket) is given as plain IPv4.
std::string PeerAddress(const sockaddr_storage& peer) {
  char text[INET6_ADDRSTRLEN] = "";
  if (peer.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&peer);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
  } else if (peer.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&peer);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], text, sizeof(text));
    } else {
      inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    }
  }
  return text;
}

struct Conn {
  enum class State { kReading, kBusy, kWriting, kDraining };

  Conn(int f, HttpParserLimits limits) : fd(f), parser(limits) {}
  ~Conn() { close(fd); }

  const int fd;
  std::string remote_addr;  // copied into every request
  State state = State::kReading;
  Clock::time_point deadline;
  std::string in;  // received, not yet consumed

  // The request being parsed.
  bool started = false;  // a byte of it has arrived
  HttpRequest req;
  HttpRequestParser parser;

  // The response being written.
  std::string out;
  size_t out_pos = 0;
  bool close_after = false;
  size_t drained = 0;

  void ResetRequest() {
    started = false;
    req = HttpRequest();
    parser.Reset();
    req.remote_addr = remote_addr;
  }
};

}  // namespace

struct HttpServer::Impl {
  Impl(HttpServerOptions o, Handler h, RejectHandler r)
      : options(std::move(o)), handler(std::move(h)), reject(std::move(r)) {}
  ~Impl() {
    if (listen_fd >= 0) close(listen_fd);
    if (epoll_fd >= 0) close(epoll_fd);
    if (wake_fd >= 0) close(wake_fd);
  }

  struct Job {
    uint64_t id;
    HttpRequest req;
  };
  struct Done {
    uint64_t id;
    HttpResponse res;
  };

  const HttpServerOptions options;
  const Handler handler;
  const RejectHandler reject;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  std::atomic<bool> stopping{false};

  // Event thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns;
  uint64_t next_id = kFirstConnId;
  Clock::time_point accept_paused_until;
  bool accept_paused = false;

  // Shared with the workers.
  bloomkv::Mutex mu;
  bloomkv::CondVar jobs_cv;
  std::deque<Job> jobs GUARDED_BY(mu);
  std::vector<Done> done GUARDED_BY(mu);
  bool workers_stop GUARDED_BY(mu) = false;

  void Wake() {
    const uint64_t one = 1;
    (void)!write(wake_fd, &one, sizeof(one));
  }

  void WorkerLoop() {
    mu.Lock();
    for (;;) {
      while (!workers_stop && jobs.empty()) jobs_cv.Wait(&mu);
      if (jobs.empty()) {
        mu.Unlock();
        return;
      }
      Job job = std::move(jobs.front());
      jobs.pop_front();
      mu.Unlock();
      HttpResponse res;
      try {
        handler(job.req, &res);
      } catch (...) {
        res = HttpResponse();
        res.status = 500;
        reject(job.req, &res);
      }
      mu.Lock();
      done.push_back(Done{job.id, std::move(res)});
      Wake();
    }
  }

  // Parses the request at the front of c->in.
  HttpRequestParser::Result Parse(Conn* c) {
    if (!c->in.empty() && !c->started) {
      c->started = true;
      c->deadline = Clock::now() + Ms(options.read_timeout_ms);
    }
    const HttpRequestParser::Result r = c->parser.Parse(&c->in, &c->req);
    if (c->parser.TakeContinueRequest()) {
      constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      (void)!send(c->fd, kContinue.data(), kContinue.size(), MSG_NOSIGNAL);
    }
    return r;
  }

  void CloseConn(uint64_t id) { conns.erase(id); }

  void StartWrite(uint64_t id, Conn* c, const HttpResponse& res) {
    std::string& out = c->out;
    out.clear();
    c->out_pos = 0;
    out += "HTTP/1.1 ";
    out += std::to_string(res.status);
    out += ' ';
    out += StatusText(res.status);
    out += "\r\n";
    if (!res.content_type.empty()) {
      out += "Content-Type: " + res.content_type + "\r\n";
    }
    const bool no_content = res.status == 204 || res.status == 304;
    if (!no_content) {
      out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
    }
    if (c->close_after) out += "Connection: close\r\n";
    for (const auto& [name, value] : res.headers) {
      out += name + ": " + value + "\r\n";
    }
    out += "\r\n";
    if (!c->parser.head_method() && !no_content) out += res.body;
    c->state = Conn::State::kWriting;
    c->deadline = Clock::now() + Ms(options.write_timeout_ms);
    OnWritable(id, c);
  }

  void OnWritable(uint64_t id, Conn* c) {
    while (c->out_pos < c->out.size()) {
      const ssize_t n = send(c->fd, c->out.data() + c->out_pos,
                             c->out.size() - c->out_pos, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) return CloseConn(id);
      c->out_pos += static_cast<size_t>(n);
    }
    c->out.clear();
    c->out_pos = 0;
    if (c->close_after) {
      shutdown(c->fd, SHUT_WR);
      c->state = Conn::State::kDraining;
      c->deadline = Clock::now() + kDrainTime;
      c->in.clear();
      return OnDrainable(id, c);
    }
    c->state = Conn::State::kReading;
    c->ResetRequest();
    c->deadline = Clock::now() + Ms(options.idle_timeout_ms);
    OnReadable(id, c);  // the next pipelined request, then the socket
  }

  void OnDrainable(uint64_t id, Conn* c) {
    char buf[kReadBlockBytes];
    for (;;) {
      const ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) return CloseConn(id);
      c->drained += static_cast<size_t>(n);
      if (c->drained > kMaxDrainBytes) return CloseConn(id);
    }
  }

  // Refuses the current request with `status` and closes after answering.
  void RejectRequest(uint64_t id, Conn* c, int status) {
    HttpResponse res;
    res.status = status;
    reject(c->req, &res);
    c->close_after = true;
    StartWrite(id, c, res);
  }

  // Parses what is buffered, reading more until a request is complete, the
  // socket is empty or the request fails.
  void OnReadable(uint64_t id, Conn* c) {
    for (;;) {
      const HttpRequestParser::Result r = Parse(c);
      if (r == HttpRequestParser::Result::kError)
        return RejectRequest(id, c, c->parser.error_status());
      if (r == HttpRequestParser::Result::kComplete) {
        c->state = Conn::State::kBusy;
        c->close_after = !c->parser.keep_alive() || stopping;
        {
          bloomkv::MutexLock lock(&mu);
          jobs.push_back(Job{id, std::move(c->req)});
        }
        jobs_cv.Signal();
        return;
      }
      const size_t old = c->in.size();
      c->in.resize(old + kReadBlockBytes);
      ssize_t n;
      do {
        n = recv(c->fd, c->in.data() + old, kReadBlockBytes, 0);
      } while (n < 0 && errno == EINTR);
      c->in.resize(old + (n > 0 ? static_cast<size_t>(n) : 0));
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) return CloseConn(id);  // closed mid-request or idle
    }
  }

  void Accept() {
    for (;;) {
      sockaddr_storage peer{};
      socklen_t peer_len = sizeof(peer);
      const int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer),
                             &peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
            errno == ENOMEM) {
          epoll_event ev{};
          epoll_ctl(epoll_fd, EPOLL_CTL_MOD, listen_fd, &ev);
          accept_paused = true;
          accept_paused_until = Clock::now() + kAcceptPause;
        }
        return;
      }
      if (conns.size() >= options.max_connections) {
        close(fd);
        continue;
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      const uint64_t id = next_id++;
      auto conn = std::make_unique<Conn>(
          fd,
          HttpParserLimits{options.max_header_bytes, options.max_body_bytes});
      conn->remote_addr = PeerAddress(peer);
      conn->req.remote_addr = conn->remote_addr;
      conn->deadline = Clock::now() + Ms(options.idle_timeout_ms);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
      ev.data.u64 = id;
      if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) continue;
      conns.emplace(id, std::move(conn));
    }
  }

  void Sweep(Clock::time_point now) {
    if (accept_paused && now >= accept_paused_until) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = kListenId;
      epoll_ctl(epoll_fd, EPOLL_CTL_MOD, listen_fd, &ev);
      accept_paused = false;
    }
    std::vector<uint64_t> expired;
    for (const auto& [id, c] : conns) {
      if (c->state != Conn::State::kBusy && now >= c->deadline) {
        expired.push_back(id);
      }
    }
    for (uint64_t id : expired) {
      Conn* c = conns.find(id)->second.get();
      if (c->state == Conn::State::kReading && c->started) {
        RejectRequest(id, c, 408);
      } else {
        CloseConn(id);
      }
    }
  }

  void FinishJobs() {
    std::vector<Done> finished;
    {
      bloomkv::MutexLock lock(&mu);
      finished.swap(done);
    }
    for (Done& d : finished) {
      const auto it = conns.find(d.id);
      if (it == conns.end()) continue;
      StartWrite(d.id, it->second.get(), d.res);
    }
  }
};

HttpServer::HttpServer(HttpServerOptions options, Handler handler,
                       RejectHandler reject)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler),
                                   std::move(reject))) {}

HttpServer::~HttpServer() = default;

Status HttpServer::Listen(const std::string& host, int port, int* bound_port) {
  impl_->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  impl_->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl_->epoll_fd < 0 || impl_->wake_fd < 0) {
    return Status::IOError(std::string("epoll: ") + std::strerror(errno));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* list = nullptr;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
  if (rc != 0) {
    return Status::InvalidArgument(host + ": " + gai_strerror(rc));
  }
  int fd = -1;
  std::string error = "no address";
  for (addrinfo* a = list; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 ||
        listen(fd, impl_->options.backlog) != 0) {
      error = std::strerror(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(list);
  if (fd < 0) return Status::IOError(host + ":" + service + ": " + error);
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *bound_port = ntohs(addr.ss_family == AF_INET6
                          ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                          : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  impl_->listen_fd = fd;
  return Status::OK();
}

Status HttpServer::Run() {
  Impl& s = *impl_;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenId;
  epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, s.listen_fd, &ev);
  ev.data.u64 = kWakeId;
  epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, s.wake_fd, &ev);

  std::vector<std::thread> workers;
  for (int i = 0; i < s.options.threads; i++) {
    workers.emplace_back([&s] { s.WorkerLoop(); });
  }

  std::vector<epoll_event> events(256);
  auto next_sweep = Clock::now() + kSweepInterval;
  while (!s.stopping) {
    const int n =
        epoll_wait(s.epoll_fd, events.data(), static_cast<int>(events.size()),
                   static_cast<int>(kSweepInterval.count()));
    for (int i = 0; i < n; i++) {
      const uint64_t id = events[i].data.u64;
      const uint32_t what = events[i].events;
      if (id == kListenId) {
        s.Accept();
        continue;
      }
      if (id == kWakeId) {
        uint64_t count;
        (void)!read(s.wake_fd, &count, sizeof(count));
        s.FinishJobs();
        continue;
      }
      const auto it = s.conns.find(id);
      if (it == s.conns.end()) continue;
      Conn* c = it->second.get();
      switch (c->state) {
        case Conn::State::kReading:
          if (what & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
            s.OnReadable(id, c);
          }
          break;
        case Conn::State::kWriting:
          if (what & (EPOLLOUT | EPOLLHUP | EPOLLERR)) s.OnWritable(id, c);
          break;
        case Conn::State::kDraining:
          s.OnDrainable(id, c);
          break;
        case Conn::State::kBusy:
          break;  // read again once the answer is written
      }
    }
    const auto now = Clock::now();
    if (now >= next_sweep) {
      s.Sweep(now);
      next_sweep = now + kSweepInterval;
    }
  }

  {
    bloomkv::MutexLock lock(&s.mu);
    s.workers_stop = true;
  }
  s.jobs_cv.SignalAll();
  for (std::thread& t : workers) t.join();
  s.conns.clear();
  close(s.listen_fd);
  s.listen_fd = -1;
  return Status::OK();
}

void HttpServer::Stop() {
  impl_->stopping = true;
  if (impl_->wake_fd >= 0) impl_->Wake();
}

}  // namespace shortlink
