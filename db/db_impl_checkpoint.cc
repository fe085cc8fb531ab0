// DBImpl::PinCheckpointFiles: the one hook a checkpoint needs from the
// engine; see db/checkpoint_files.h and include/bloomkv/checkpoint.h.
//
// Thread-safety: takes mu_ (and lists the directory under it); safe to call
// while other threads read and write.
#include <set>

#include "db/checkpoint_files.h"
#include "db/db_impl.h"
#include "db/filename.h"

namespace bloomkv {

Status DBImpl::PinCheckpointFiles(CheckpointFiles* files) {
  if (read_only_) {
    return Status::NotSupported(dbname_, "database is open read-only");
  }
  // Listed under the mutex: logs are created only under it, so the listing
  // and the state pinned below agree. (Listed before taking it, a flush
  // thread and a writer could switch logs twice in between, and the log the
  // running flush has not covered yet would be missing from the listing.)
  MutexLock guard(&mu_);
  if (!bg_error_.ok()) return bg_error_;
  std::vector<std::string> children;
  Status s = env_->GetChildren(dbname_, &children);
  if (!s.ok()) return s;
  std::set<uint64_t> logs = {log_number_};
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == FileType::kLogFile) {
      logs.insert(number);
    }
  }
  // The logs the current version does not cover yet: the one being written
  // and, while a flush runs, the one before it. Opening them here keeps them
  // readable even if a flush deletes them before they are copied.
  for (uint64_t number : logs) {
    if (number < versions_->log_number() || number > log_number_) continue;
    CheckpointFiles::Log log;
    log.number = number;
    const std::string fname = LogFileName(dbname_, number);
    s = env_->GetFileSize(fname, &log.size);
    if (s.ok()) s = env_->NewSequentialFile(fname, &log.file);
    if (!s.ok()) return s;
    files->logs.push_back(std::move(log));
  }
  files->env = env_;
  files->dbname = dbname_;
  files->version = versions_->current();
  files->log_number = versions_->log_number();
  files->manifest_number = versions_->NewFileNumber();
  files->last_sequence = versions_->last_sequence();
  return Status::OK();
}

}  // namespace bloomkv
