// AccessLog; see access_log.h.
#include "tools/shortlink/access_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

namespace shortlink {

using bloomkv::Status;

namespace {

constexpr auto kFlushInterval = std::chrono::milliseconds(200);
// The writer is woken early once this much is buffered.
constexpr size_t kWakeBytes = 64 << 10;
constexpr mode_t kLogFileMode = 0640;

void AppendEscaped(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      *out += "\\x";
      *out += kHex[c >> 4];
      *out += kHex[c & 15];
    } else {
      *out += ch;
    }
  }
}

// "-" for an empty field, else the escaped value (Apache's convention).
void AppendField(std::string* out, std::string_view s) {
  if (s.empty()) {
    *out += '-';
  } else {
    AppendEscaped(out, s);
  }
}

std::string FormatTime(const std::timespec& t, const char* format) {
  std::tm tm{};
  gmtime_r(&t.tv_sec, &tm);
  char buf[64];
  const size_t n = std::strftime(buf, sizeof(buf), format, &tm);
  return std::string(buf, n);
}

Status OpenLogFile(const std::string& path, int* fd) {
  *fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
             kLogFileMode);
  if (*fd < 0) {
    return Status::IOError(path + ": cannot open: " + std::strerror(errno));
  }
  return Status::OK();
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere to report it but the log itself
    data.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

Status ParseAccessLogFormat(std::string_view name, AccessLogFormat* out) {
  if (name == "common") {
    *out = AccessLogFormat::kCommon;
  } else if (name == "combined") {
    *out = AccessLogFormat::kCombined;
  } else if (name == "json") {
    *out = AccessLogFormat::kJson;
  } else {
    return Status::InvalidArgument(
        "access log format must be common, combined or json", name);
  }
  return Status::OK();
}

std::string FormatAccessLine(AccessLogFormat format, const HttpRequest& req,
                             const AccessRecord& rec) {
  std::string target = req.path;
  if (!req.query.empty()) target += "?" + req.query;
  if (format == AccessLogFormat::kJson) {
    nlohmann::json j{
        {"time",
         FormatTime(rec.time, "%Y-%m-%dT%H:%M:%S") + "." +
             std::to_string(1000 + rec.time.tv_nsec / 1'000'000).substr(1) +
             "Z"},
        {"remote_addr", rec.client},
        {"user", rec.user},
        {"method", req.method},
        {"path", target},
        {"status", rec.status},
        {"bytes", rec.bytes},
        {"duration_us", nullptr},
        {"referer", req.Header("Referer")},
        {"user_agent", req.Header("User-Agent")}};
    if (rec.duration_us >= 0) j["duration_us"] = rec.duration_us;
    // Invalid UTF-8 (a path is any bytes) becomes U+FFFD, never an error.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  std::string line;
  AppendField(&line, rec.client);
  line += " - ";
  AppendField(&line, rec.user);
  line += FormatTime(rec.time, " [%d/%b/%Y:%H:%M:%S +0000] \"");
  AppendEscaped(&line, req.method);
  line += ' ';
  AppendEscaped(&line, target);
  line += "\" " + std::to_string(rec.status) + " " + std::to_string(rec.bytes);
  if (format == AccessLogFormat::kCombined) {
    line += " \"";
    AppendField(&line, req.Header("Referer"));
    line += "\" \"";
    AppendField(&line, req.Header("User-Agent"));
    line += '"';
  }
  line += ' ';
  line += rec.duration_us >= 0 ? std::to_string(rec.duration_us) : "-";
  return line;
}

Status AccessLog::Open(const std::string& path, AccessLogFormat format,
                       std::unique_ptr<AccessLog>* out) {
  int fd = STDOUT_FILENO;
  if (path != "-") {
    const Status s = OpenLogFile(path, &fd);
    if (!s.ok()) return s;
  }
  out->reset(new AccessLog(path, format, fd));
  return Status::OK();
}

AccessLog::AccessLog(std::string path, AccessLogFormat format, int fd)
    : path_(std::move(path)), format_(format), fd_(fd) {
  writer_ = std::thread([this] { WriterLoop(); });
}

AccessLog::~AccessLog() {
  {
    bloomkv::MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  writer_.join();
  if (fd_ != STDOUT_FILENO) close(fd_);
}

void AccessLog::Log(const HttpRequest& req, const AccessRecord& rec) {
  std::string line = FormatAccessLine(format_, req, rec);
  line += '\n';
  bool wake = false;
  {
    bloomkv::MutexLock lock(&mu_);
    if (buffer_.size() + line.size() > kMaxBufferedBytes) {
      dropped_++;
      return;
    }
    buffer_ += line;
    wake = buffer_.size() >= kWakeBytes;
  }
  if (wake) cv_.Signal();
}

void AccessLog::LogRequest(const HttpRequest& req, const HttpResponse& res,
                           std::string_view client, std::string_view user,
                           int64_t duration_us) {
  AccessRecord rec;
  rec.client = client;
  rec.user = user;
  rec.status = res.status;
  rec.bytes = req.method == "HEAD" ? 0 : res.body.size();  // not sent
  rec.duration_us = duration_us;
  clock_gettime(CLOCK_REALTIME, &rec.time);
  Log(req, rec);
}

void AccessLog::Reopen() {
  {
    bloomkv::MutexLock lock(&mu_);
    reopen_ = true;
  }
  cv_.Signal();
}

void AccessLog::WriterLoop() {
  std::string out;
  for (;;) {
    bool stop, reopen;
    uint64_t dropped;
    {
      bloomkv::MutexLock lock(&mu_);
      const auto deadline = std::chrono::steady_clock::now() + kFlushInterval;
      while (!stop_ && !reopen_ && buffer_.size() < kWakeBytes &&
             cv_.WaitUntil(&mu_, deadline)) {
      }
      out.clear();
      out.swap(buffer_);
      stop = stop_;
      reopen = reopen_;
      reopen_ = false;
      dropped = dropped_;
      dropped_ = 0;
    }
    if (reopen && fd_ != STDOUT_FILENO) {
      int fd = -1;
      const Status s = OpenLogFile(path_, &fd);
      if (s.ok()) {
        close(fd_);
        fd_ = fd;
      } else {
        std::fprintf(stderr, "shortlinkd: access log: %s\n",
                     s.ToString().c_str());
      }
    }
    WriteAll(fd_, out);
    if (dropped > 0) {
      std::fprintf(stderr,
                   "shortlinkd: access log: %llu lines dropped (disk too "
                   "slow)\n",
                   static_cast<unsigned long long>(dropped));
    }
    if (stop) return;
  }
}

}  // namespace shortlink
