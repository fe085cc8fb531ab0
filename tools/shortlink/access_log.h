// AccessLog: one line per answered request, for --access-log.
//
//   common    192.0.2.7 - ci-bot [01/Dec/2026:04:10:00 +0000] "POST /api/links"
//   201 112 845 combined  ... 201 112 "https://ref.example/" "curl/7.88.1" 845
//   json      {"time":"2026-12-01T04:10:00Z","remote_addr":"192.0.2.7",...}
//
// The common and combined formats are Apache's (user = the API key's name,
// never the key), with the duration in microseconds appended as the last
// field (Apache's %D); the request is "METHOD PATH[?QUERY]" without the
// HTTP version. Every byte of a logged string outside printable ASCII, and
// '"' and '\', is written as \xHH, so a request cannot forge a line. No
// header but Referer and User-Agent is ever written (never Authorization).
//
// Workers never wait for the disk: Log formats the line and appends it to an
// in-memory buffer; a writer thread writes the buffer out at least every
// 200 ms. If the disk stalls and the buffer reaches kMaxBufferedBytes, new
// lines are dropped and counted, and a line "access log: N lines dropped"
// (to stderr) reports them once writing resumes. Reopen() makes the writer
// reopen the file (after logrotate moved it); "-" is standard output and is
// never reopened.
//
// Thread-safety: thread-safe.
#ifndef BLOOMKV_TOOLS_SHORTLINK_ACCESS_LOG_H_
#define BLOOMKV_TOOLS_SHORTLINK_ACCESS_LOG_H_

#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "bloomkv/status.h"
#include "tools/shortlink/http_message.h"
#include "util/mutex.h"

namespace shortlink {

enum class AccessLogFormat { kCommon, kCombined, kJson };

// "common", "combined" or "json".
[[nodiscard]] bloomkv::Status ParseAccessLogFormat(std::string_view name,
                                                   AccessLogFormat* out);

// What is logged about one request besides the request itself.
struct AccessRecord {
  std::string_view client;  // client address ("" if unknown)
  std::string_view user;    // API key name ("" if none)
  int status = 0;
  size_t bytes = 0;          // response body bytes sent
  int64_t duration_us = -1;  // -1: unknown (refused before routing)
  std::timespec time{};      // when the request was answered (UTC)
};

// The line for `req` (without the newline). Exposed for tests.
std::string FormatAccessLine(AccessLogFormat format, const HttpRequest& req,
                             const AccessRecord& rec);

class AccessLog {
 public:
  static constexpr size_t kMaxBufferedBytes = 4 << 20;

  // Opens `path` for appending (created 0640 if missing), or standard output
  // for "-", and starts the writer thread.
  [[nodiscard]] static bloomkv::Status Open(const std::string& path,
                                            AccessLogFormat format,
                                            std::unique_ptr<AccessLog>* out);
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;
  // Writes what is buffered and closes the file.
  ~AccessLog();

  void Log(const HttpRequest& req, const AccessRecord& rec);
  // Log with the time now and the status and size of `res`.
  void LogRequest(const HttpRequest& req, const HttpResponse& res,
                  std::string_view client, std::string_view user,
                  int64_t duration_us);

  // Asks the writer to reopen the file by name before its next write.
  void Reopen();

 private:
  AccessLog(std::string path, AccessLogFormat format, int fd);
  void WriterLoop();

  const std::string path_;
  const AccessLogFormat format_;
  int fd_;  // writer thread only (after construction)

  bloomkv::Mutex mu_;
  bloomkv::CondVar cv_;
  std::string buffer_ GUARDED_BY(mu_);
  uint64_t dropped_ GUARDED_BY(mu_) = 0;
  bool reopen_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread writer_;
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_ACCESS_LOG_H_
