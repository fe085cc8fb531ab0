// DBImpl, obsolete files: what DeleteObsoleteFiles keeps and removes, and
// DestroyDB.
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/info_log.h"
#include "util/logging.h"

namespace bloomkv {

void DBImpl::DeleteObsoleteFiles() {
  if (!bg_error_.ok()) return;  // the state on disk may be uncertain
  std::set<uint64_t> live = pending_outputs_;
  versions_->AddLiveFiles(&live);
  // Listed under mu_: a file created after the live set was taken must not
  // be seen without being in it.
  std::vector<std::string> children;
  if (!env_->GetChildren(dbname_, &children).ok()) return;
  struct Obsolete {
    std::string name;
    uint64_t number;
    FileType type;
  };
  std::vector<Obsolete> obsolete;
  for (auto& name : children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    bool keep = true;
    switch (type) {
      case FileType::kLogFile:
        keep = number >= versions_->log_number() || number == log_number_;
        break;
      case FileType::kManifestFile:
        keep = number >= versions_->manifest_number();
        break;
      case FileType::kSegmentFile:
      case FileType::kTempFile:
        keep = live.count(number) != 0;
        break;
      case FileType::kCurrentFile:
      case FileType::kLockFile:
      case FileType::kInfoLogFile:
        break;
    }
    // A file another thread is deleting is left to it.
    if (!keep && deleting_.insert(number).second) {
      obsolete.push_back({std::move(name), number, type});
    }
  }
  if (obsolete.empty()) return;
  // Deleted without mu_: an unlink can take long (a file system that
  // discards the freed blocks as it goes), and writers, flushes and other
  // compactions need mu_. A file found obsolete stays so: file numbers are
  // never reused, and no edit adds back a file that is neither live nor a
  // pending output.
  mu_.Unlock();
  for (const Obsolete& f : obsolete) {
    Log(info_log_, "Deleting %s: %s", f.name.c_str(),
        ObsoleteFileReason(f.type));
    if (f.type == FileType::kSegmentFile) table_cache_->Evict(f.number);
    env_->RemoveFile(dbname_ + "/" + f.name).PermitUncheckedError();
  }
  mu_.Lock();
  for (const Obsolete& f : obsolete) deleting_.erase(f.number);
}

Status DestroyDB(const std::string& path, const Options& options) {
  Env* env = options.env != nullptr ? options.env : Env::Default();
  std::vector<std::string> children;
  if (!env->GetChildren(path, &children).ok()) return Status::OK();
  std::unique_ptr<FileLock> lock;
  Status s = env->LockFile(LockFileName(path), &lock);
  if (s.IsBusy()) {
    return Status::Busy(path, "database is in use: " + s.message());
  }
  if (!s.ok()) return Status::IOError("cannot create or lock " + s.message());
  for (const auto& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type != FileType::kLockFile) {
      Status del = env->RemoveFile(path + "/" + name);
      if (s.ok() && !del.ok()) s = del;
    }
  }
  env->UnlockFile(std::move(lock)).PermitUncheckedError();
  env->RemoveFile(LockFileName(path)).PermitUncheckedError();
  env->RemoveDir(path).PermitUncheckedError();  // fails if others' files remain
  return s;
}

}  // namespace bloomkv
