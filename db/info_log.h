// The info log of a database: the LOG file in its directory, rotated, and
// the lines DBImpl logs that take more than one expression to write. What
// is logged, and the line format, are described in docs/operations.md.
//
// InfoLogFile writes nothing until Start(), which DBImpl::Open calls once it
// holds the database's LOCK: a process that fails to open a database in use
// must never rotate the LOG of the process using it. Start(), and LOG
// growing past max_file_size, rotate the logs: each old log moves down one
// generation (LOG.old.1 -> LOG.old.2, LOG.old -> LOG.old.1, LOG -> LOG.old;
// the oldest is replaced, so at most kOldInfoLogs old logs exist) and a
// fresh LOG is opened with Env::NewLogger. A failure to rename or open only
// loses log lines.
// Thread-safety: InfoLogFile is thread-safe. Its Logv does one write, except
// for the call whose line crosses max_file_size: that one also rotates
// (kOldInfoLogs renames and one open, once per max_file_size bytes).
#ifndef BLOOMKV_DB_INFO_LOG_H_
#define BLOOMKV_DB_INFO_LOG_H_

#include <cstdint>
#include <memory>
#include <string>

#include "bloomkv/env.h"
#include "bloomkv/options.h"
#include "bloomkv/status.h"
#include "db/filename.h"
#include "util/mutex.h"

namespace bloomkv {

class Compaction;
class Version;
class VersionEdit;

// How many old info logs rotation keeps: LOG.old, LOG.old.1, LOG.old.2.
constexpr int kOldInfoLogs = 3;

class InfoLogFile final : public Logger {
 public:
  // max_file_size: rotate once LOG has grown past about this many bytes;
  // 0 rotates only at Start().
  InfoLogFile(Env* env, std::string dbname, uint64_t max_file_size);
  ~InfoLogFile() override;

  // Rotates the old logs and opens a fresh LOG. Lines logged before are
  // dropped. REQUIRES: the caller holds the database's LOCK; called once.
  void Start() EXCLUDES(mu_);

  void Logv(const char* format, va_list ap) override EXCLUDES(mu_);

 private:
  void RotateLocked() REQUIRES(mu_);

  Env* const env_;
  const std::string dbname_;
  const uint64_t max_file_size_;
  Mutex mu_;
  std::unique_ptr<Logger> file_ GUARDED_BY(mu_);  // null: not started or lost
  uint64_t file_size_ GUARDED_BY(mu_) = 0;        // estimated bytes in LOG
};

// "Opening database <dbname>" and the options that shape its behaviour.
void LogOpening(Logger* log, const std::string& dbname, const Options& options,
                bool read_only);

// Segments per level, "[4 2 0 0 0 0 0]".
std::string FilesPerLevel(const Version& v);

// One line for a finished (or failed) compaction: levels, inputs, outputs,
// duration, write amplification and entries dropped. edit holds the outputs.
void LogCompaction(Logger* log, const Compaction& c, const VersionEdit& edit,
                   uint64_t micros, const Status& status);

// Logs the start or the end of a write slowdown or stop when the number of
// level-0 segments crosses one of the triggers.
void LogLevel0Change(Logger* log, const Options& options, int before,
                     int after);

// Why DeleteObsoleteFiles removes a file of this type.
const char* ObsoleteFileReason(FileType type);

}  // namespace bloomkv

#endif  // BLOOMKV_DB_INFO_LOG_H_
