// The info log's line format, and Log(), the call the database makes for
// every line it logs.
//
// A line is "<time> <thread> <message>\n": the UTC wall-clock time with
// microseconds (2026-12-01T00:08:33.123456Z), the id of the thread that
// logged it (the kernel's thread id on Linux, as ps -L and gdb show it), and
// the message, whose own newlines become spaces so that one event is always
// one line.
// Thread-safety: thread-safe.
#ifndef BLOOMKV_UTIL_LOGGING_H_
#define BLOOMKV_UTIL_LOGGING_H_

#include <cstdarg>
#include <memory>
#include <string>

#include "bloomkv/env.h"

namespace bloomkv {

// Logs one line to logger; does nothing when logger is null.
void Log(Logger* logger, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

// The complete line, header and final newline included, for a message
// formatted like vprintf(format, ap).
std::string FormatLogLine(const char* format, va_list ap);

// A Logger writing through a WritableFile: each line is appended and flushed
// under a mutex. Write failures are ignored (the line is lost).
std::unique_ptr<Logger> NewWritableFileLogger(
    std::unique_ptr<WritableFile> file);

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_LOGGING_H_
