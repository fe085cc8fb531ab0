// The info log's line format and the WritableFile-backed Logger; see
// logging.h.
#include "util/logging.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <functional>
#include <thread>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "util/mutex.h"

namespace bloomkv {
namespace {

uint64_t CurrentThreadId() {
  thread_local const uint64_t id = [] {
#if defined(__linux__)
    return static_cast<uint64_t>(::syscall(SYS_gettid));
#else
    return static_cast<uint64_t>(
        std::hash<std::thread::id>()(std::this_thread::get_id()));
#endif
  }();
  return id;
}

class WritableFileLogger final : public Logger {
 public:
  explicit WritableFileLogger(std::unique_ptr<WritableFile> file)
      : file_(std::move(file)) {}
  ~WritableFileLogger() override { file_->Close().PermitUncheckedError(); }

  void Logv(const char* format, va_list ap) override {
    const std::string line = FormatLogLine(format, ap);
    MutexLock guard(&mu_);
    Status s = file_->Append(line);
    if (s.ok()) s = file_->Flush();
    s.PermitUncheckedError();  // a lost line is not the database's problem
  }

 private:
  Mutex mu_;  // one line at a time through file_
  const std::unique_ptr<WritableFile> file_ PT_GUARDED_BY(mu_);
};

}  // namespace

void Log(Logger* logger, const char* format, ...) {
  if (logger == nullptr) return;
  va_list ap;
  va_start(ap, format);
  logger->Logv(format, ap);
  va_end(ap);
}

std::string FormatLogLine(const char* format, va_list ap) {
  const auto now = std::chrono::system_clock::now();
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                          now.time_since_epoch())
                          .count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm tm;
  gmtime_r(&seconds, &tm);
  char header[80];
  const int header_size = std::snprintf(
      header, sizeof(header),
      "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ %" PRIu64 " ", tm.tm_year + 1900,
      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
      static_cast<int>(micros % 1000000), CurrentThreadId());

  std::string line(header, static_cast<size_t>(header_size));
  va_list copy;
  va_copy(copy, ap);
  const int message_size = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (message_size > 0) {
    line.resize(line.size() + static_cast<size_t>(message_size) + 1);
    std::vsnprintf(line.data() + header_size,
                   static_cast<size_t>(message_size) + 1, format, ap);
    line.pop_back();  // vsnprintf's NUL
  }
  if (line.size() > static_cast<size_t>(header_size) && line.back() == '\n') {
    line.pop_back();
  }
  for (size_t i = static_cast<size_t>(header_size); i < line.size(); i++) {
    if (line[i] == '\n') line[i] = ' ';
  }
  line.push_back('\n');
  return line;
}

std::unique_ptr<Logger> NewWritableFileLogger(
    std::unique_ptr<WritableFile> file) {
  return std::make_unique<WritableFileLogger>(std::move(file));
}

}  // namespace bloomkv
