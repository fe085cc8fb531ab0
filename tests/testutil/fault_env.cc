// FaultInjectionEnv; see fault_env.h for what is simulated.
//
// One mutex guards all bookkeeping and is held across the target calls that
// change directory state (create, rename, remove, SyncDir), so the pending
// log always matches the disk. Reads never hold it while reading.
#include "tests/testutil/fault_env.h"

#include <utility>

namespace bloomkv::test {

struct FaultInjectionEnv::TrackedFile {
  uint64_t size = 0;
  uint64_t synced_size = 0;
  bool entry_synced = false;
};

namespace {

// "d/f" -> "d", "f" -> ".", "/f" -> "/".
std::string DirName(const std::string& fname) {
  const size_t slash = fname.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return fname.substr(0, slash);
}

std::string NormalizeDir(const std::string& dir) {
  if (dir.empty()) return ".";
  size_t n = dir.size();
  while (n > 1 && dir[n - 1] == '/') n--;
  return dir.substr(0, n);
}

class FaultSequentialFile final : public SequentialFile {
 public:
  FaultSequentialFile(FaultInjectionEnv* env, std::string fname,
                      std::unique_ptr<SequentialFile> target)
      : env_(env), fname_(std::move(fname)), target_(std::move(target)) {}

  Status Read(size_t n, Slice* result, char* scratch) override {
    Status s = env_->CheckOp(FaultInjectionEnv::kRead, fname_, false);
    if (!s.ok()) {
      *result = Slice();
      return s;
    }
    return target_->Read(n, result, scratch);
  }
  Status Skip(uint64_t n) override {
    Status s = env_->CheckOp(FaultInjectionEnv::kRead, fname_, false);
    if (!s.ok()) return s;
    return target_->Skip(n);
  }

 private:
  FaultInjectionEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<SequentialFile> target_;
};

class FaultRandomAccessFile final : public RandomAccessFile {
 public:
  FaultRandomAccessFile(FaultInjectionEnv* env, std::string fname,
                        std::unique_ptr<RandomAccessFile> target)
      : env_(env), fname_(std::move(fname)), target_(std::move(target)) {}

  Status Read(uint64_t offset, size_t n, Slice* result,
              char* scratch) const override {
    Status s = env_->CheckOp(FaultInjectionEnv::kRead, fname_, false);
    if (!s.ok()) {
      *result = Slice();
      return s;
    }
    return target_->Read(offset, n, result, scratch);
  }

  Status Recheck(uint64_t offset, size_t n) const override {
    return target_->Recheck(offset, n);
  }
  void WillNeed(uint64_t offset, size_t n) const override {
    target_->WillNeed(offset, n);
  }

 private:
  FaultInjectionEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<RandomAccessFile> target_;
};

class FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultInjectionEnv* env, std::string fname,
                    std::unique_ptr<WritableFile> target,
                    std::shared_ptr<FaultInjectionEnv::TrackedFile> state,
                    uint64_t generation)
      : env_(env),
        fname_(std::move(fname)),
        target_(std::move(target)),
        state_(std::move(state)),
        generation_(generation) {}

  Status Append(const Slice& data) override {
    Status s = Check(FaultInjectionEnv::kWrite);
    if (!s.ok()) return s;
    // Pushed to the target at once: nothing may stay buffered below this
    // Env, or a writer destroyed after DropUnsyncedData would flush it into
    // the truncated file.
    s = target_->Append(data);
    if (s.ok()) s = target_->Flush();
    if (s.ok()) env_->RecordAppend(state_.get(), data.size());
    return s;
  }
  Status Flush() override {
    Status s = Check(FaultInjectionEnv::kWrite);
    if (!s.ok()) return s;
    return target_->Flush();
  }
  Status Sync() override {
    Status s = Check(FaultInjectionEnv::kSync);
    if (!s.ok()) return s;
    s = target_->Sync();
    if (s.ok()) env_->RecordSync(state_.get());
    return s;
  }
  Status Close() override {
    Status s = target_->Close();
    Status check = env_->CheckOp(FaultInjectionEnv::kClose, fname_, true);
    return check.ok() ? s : check;
  }

 private:
  Status Check(FaultInjectionEnv::Op op) {
    if (!env_->FileIsCurrent(generation_)) {
      return Status::IOError(fname_, "opened before a simulated crash");
    }
    return env_->CheckOp(op, fname_, true);
  }

  FaultInjectionEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<WritableFile> target_;
  const std::shared_ptr<FaultInjectionEnv::TrackedFile> state_;
  const uint64_t generation_;
};

}  // namespace

FaultInjectionEnv::FaultInjectionEnv(Env* target) : EnvWrapper(target) {}

FaultInjectionEnv::~FaultInjectionEnv() = default;

// ---- error injection and inactive mode ----

void FaultInjectionEnv::InjectErrors(uint32_t ops, FileMatcher matches,
                                     uint64_t succeed_first,
                                     uint64_t fail_count) {
  std::lock_guard<std::mutex> guard(mu_);
  fault_ops_ = ops;
  fault_matches_ = std::move(matches);
  fault_succeed_first_ = succeed_first;
  fault_fail_count_ = fail_count;
  fault_seen_ = 0;
}

void FaultInjectionEnv::ClearInjectedErrors() {
  InjectErrors(0, nullptr, 0, 0);
}

uint64_t FaultInjectionEnv::injected_error_count() const {
  std::lock_guard<std::mutex> guard(mu_);
  return injected_errors_;
}

void FaultInjectionEnv::SetDeactivateOnInjectedError(bool on) {
  std::lock_guard<std::mutex> guard(mu_);
  deactivate_on_fault_ = on;
}

uint64_t FaultInjectionEnv::op_count(Op op) const {
  std::lock_guard<std::mutex> guard(mu_);
  uint64_t total = 0;
  for (int bit = 0; bit < 8; bit++) {
    if ((op & (1u << bit)) != 0) total += op_counts_[bit];
  }
  return total;
}

void FaultInjectionEnv::ResetOpCounts() {
  std::lock_guard<std::mutex> guard(mu_);
  for (uint64_t& c : op_counts_) c = 0;
}

void FaultInjectionEnv::SetFilesystemActive(bool active) {
  std::lock_guard<std::mutex> guard(mu_);
  active_ = active;
}

bool FaultInjectionEnv::IsFilesystemActive() const {
  std::lock_guard<std::mutex> guard(mu_);
  return active_;
}

Status FaultInjectionEnv::CheckOp(Op op, const std::string& fname,
                                  bool mutating) {
  std::lock_guard<std::mutex> guard(mu_);
  return CheckOpLocked(op, fname, nullptr, mutating);
}

Status FaultInjectionEnv::CheckOpLocked(Op op, const std::string& fname,
                                        const std::string* fname2,
                                        bool mutating) {
  for (int bit = 0; bit < 8; bit++) {
    if ((op & (1u << bit)) != 0) op_counts_[bit]++;
  }
  if (mutating && !active_) {
    return Status::IOError(fname, "filesystem inactive");
  }
  if ((fault_ops_ & op) == 0) return Status::OK();
  if (fault_matches_ != nullptr && !fault_matches_(fname) &&
      (fname2 == nullptr || !fault_matches_(*fname2))) {
    return Status::OK();
  }
  const uint64_t seen = fault_seen_++;
  if (seen < fault_succeed_first_) return Status::OK();
  if (fault_fail_count_ != 0 &&
      seen - fault_succeed_first_ >= fault_fail_count_) {
    return Status::OK();
  }
  injected_errors_++;
  if (deactivate_on_fault_) active_ = false;
  return Status::IOError(fname, "injected fault");
}

// ---- bookkeeping ----

bool FaultInjectionEnv::FileIsCurrent(uint64_t gen) const {
  std::lock_guard<std::mutex> guard(mu_);
  return gen == generation_;
}

void FaultInjectionEnv::RecordAppend(TrackedFile* file, uint64_t n) {
  std::lock_guard<std::mutex> guard(mu_);
  file->size += n;
}

void FaultInjectionEnv::RecordSync(TrackedFile* file) {
  std::lock_guard<std::mutex> guard(mu_);
  file->synced_size = file->size;
}

bool FaultInjectionEnv::GetFileState(const std::string& fname,
                                     FileState* state) const {
  std::lock_guard<std::mutex> guard(mu_);
  auto it = files_.find(fname);
  if (it == files_.end()) return false;
  state->size = it->second->size;
  state->synced_size = it->second->synced_size;
  state->entry_synced = it->second->entry_synced;
  return true;
}

void FaultInjectionEnv::ResetState() {
  std::lock_guard<std::mutex> guard(mu_);
  // Open writers stay usable: their files are simply fully durable now.
  for (auto& [name, file] : files_) {
    file->synced_size = file->size;
    file->entry_synced = true;
  }
  pending_.clear();
}

Status FaultInjectionEnv::TruncateLocked(const std::string& fname,
                                         uint64_t size) {
  uint64_t actual = 0;
  Status s = target()->GetFileSize(fname, &actual);
  if (s.IsNotFound()) return Status::OK();  // Removed: nothing to truncate.
  if (!s.ok() || actual <= size) return s;
  std::string data;
  s = ReadFileToString(target(), fname, &data);
  if (!s.ok()) return s;
  data.resize(size);
  return WriteStringToFile(target(), data, fname, /*sync=*/true);
}

Status FaultInjectionEnv::DropUnsyncedData() {
  std::lock_guard<std::mutex> guard(mu_);
  Status result;
  auto keep_first_error = [&result](Status s) {
    if (result.ok() && !s.ok() && !s.IsNotFound()) result = std::move(s);
  };
  // Data first, under the names files have now; then directory operations,
  // newest first, so each undo sees the names the next older one left.
  for (const auto& [name, file] : files_) {
    keep_first_error(TruncateLocked(name, file->synced_size));
  }
  for (auto op = pending_.rbegin(); op != pending_.rend(); ++op) {
    if (op->kind == PendingOp::kCreate) {
      keep_first_error(target()->RemoveFile(op->name));
      continue;
    }
    if (!target()->FileExists(op->target)) continue;
    keep_first_error(target()->RenameFile(op->target, op->name));
    if (op->replaced_contents.has_value()) {
      keep_first_error(WriteStringToFile(target(), *op->replaced_contents,
                                         op->target, /*sync=*/true));
    }
  }
  files_.clear();
  pending_.clear();
  generation_++;  // Writers opened before the crash are dead.
  return result;
}

// ---- Env ----

Status FaultInjectionEnv::NewSequentialFile(
    const std::string& fname, std::unique_ptr<SequentialFile>* result) {
  Status s = CheckOp(kOpen, fname, false);
  if (!s.ok()) return s;
  std::unique_ptr<SequentialFile> file;
  s = target()->NewSequentialFile(fname, &file);
  if (!s.ok()) return s;
  *result = std::make_unique<FaultSequentialFile>(this, fname, std::move(file));
  return s;
}

Status FaultInjectionEnv::NewRandomAccessFile(
    const std::string& fname, std::unique_ptr<RandomAccessFile>* result) {
  Status s = CheckOp(kOpen, fname, false);
  if (!s.ok()) return s;
  std::unique_ptr<RandomAccessFile> file;
  s = target()->NewRandomAccessFile(fname, &file);
  if (!s.ok()) return s;
  *result =
      std::make_unique<FaultRandomAccessFile>(this, fname, std::move(file));
  return s;
}

Status FaultInjectionEnv::NewWritableFile(
    const std::string& fname, std::unique_ptr<WritableFile>* result) {
  return OpenWritable(fname, /*append=*/false, result);
}

Status FaultInjectionEnv::NewAppendableFile(
    const std::string& fname, std::unique_ptr<WritableFile>* result) {
  return OpenWritable(fname, /*append=*/true, result);
}

Status FaultInjectionEnv::OpenWritable(const std::string& fname, bool append,
                                       std::unique_ptr<WritableFile>* result) {
  std::lock_guard<std::mutex> guard(mu_);
  Status s = CheckOpLocked(kOpen, fname, nullptr, true);
  if (!s.ok()) return s;
  const bool existed = target()->FileExists(fname);
  uint64_t existing_size = 0;
  if (append && existed) {
    s = target()->GetFileSize(fname, &existing_size);
    if (!s.ok()) return s;
  }
  std::unique_ptr<WritableFile> file;
  s = append ? target()->NewAppendableFile(fname, &file)
             : target()->NewWritableFile(fname, &file);
  if (!s.ok()) return s;

  std::shared_ptr<TrackedFile>& slot = files_[fname];
  if (append && slot != nullptr) {
    // Keep appending to what is known; the synced prefix stays synced.
  } else {
    auto state = std::make_shared<TrackedFile>();
    if (!existed) {
      state->entry_synced = false;
      pending_.push_back(PendingOp{PendingOp::kCreate,
                                   NormalizeDir(DirName(fname)), fname, "",
                                   std::nullopt});
    } else {
      // An existing entry stays; so does its old pending create, if any.
      state->entry_synced = slot == nullptr || slot->entry_synced;
      // Contents found on open are taken as durable (written before this Env
      // was watching, or before ResetState).
      state->size = state->synced_size = existing_size;
    }
    slot = std::move(state);
  }
  *result = std::make_unique<FaultWritableFile>(this, fname, std::move(file),
                                                slot, generation_);
  return s;
}

Status FaultInjectionEnv::RemoveFile(const std::string& fname) {
  std::lock_guard<std::mutex> guard(mu_);
  Status s = CheckOpLocked(kRemove, fname, nullptr, true);
  if (!s.ok()) return s;
  s = target()->RemoveFile(fname);
  if (s.ok()) files_.erase(fname);
  return s;
}

Status FaultInjectionEnv::CreateDir(const std::string& dirname) {
  Status s = CheckOp(static_cast<Op>(0), dirname, true);
  if (!s.ok()) return s;
  return target()->CreateDir(dirname);
}

Status FaultInjectionEnv::RemoveDir(const std::string& dirname) {
  Status s = CheckOp(static_cast<Op>(0), dirname, true);
  if (!s.ok()) return s;
  return target()->RemoveDir(dirname);
}

Status FaultInjectionEnv::RenameFile(const std::string& src,
                                     const std::string& dst) {
  std::lock_guard<std::mutex> guard(mu_);
  Status s = CheckOpLocked(kRename, src, &dst, true);
  if (!s.ok()) return s;

  PendingOp op{PendingOp::kRename, NormalizeDir(DirName(dst)), src, dst,
               std::nullopt};
  if (src != dst && target()->FileExists(dst)) {
    // Keep what a crash would bring back: the replaced file's durable part.
    std::string old;
    s = ReadFileToString(target(), dst, &old);
    if (!s.ok()) return s;
    auto it = files_.find(dst);
    if (it != files_.end()) {
      if (old.size() > it->second->synced_size) {
        old.resize(it->second->synced_size);
      }
    }
    op.replaced_contents = std::move(old);
  }
  s = target()->RenameFile(src, dst);
  if (!s.ok() || src == dst) return s;

  auto moved = files_.find(src);
  if (moved != files_.end()) {
    std::shared_ptr<TrackedFile> state = std::move(moved->second);
    files_.erase(moved);
    state->entry_synced = false;
    files_[dst] = std::move(state);
  } else {
    files_.erase(dst);
  }
  pending_.push_back(std::move(op));
  return s;
}

Status FaultInjectionEnv::SyncDir(const std::string& dirname) {
  std::lock_guard<std::mutex> guard(mu_);
  Status s = CheckOpLocked(kSync, dirname, nullptr, true);
  if (!s.ok()) return s;
  s = target()->SyncDir(dirname);
  if (!s.ok()) return s;
  const std::string dir = NormalizeDir(dirname);
  std::erase_if(pending_,
                [&dir](const PendingOp& op) { return op.dir == dir; });
  for (auto& [name, file] : files_) {
    if (DirName(name) == dir) file->entry_synced = true;
  }
  return s;
}

Status FaultInjectionEnv::GetChildren(const std::string& dir,
                                      std::vector<std::string>* result) {
  Status s = CheckOp(kMetadata, dir, false);
  if (!s.ok()) return s;
  return target()->GetChildren(dir, result);
}

Status FaultInjectionEnv::GetFileSize(const std::string& fname,
                                      uint64_t* size) {
  Status s = CheckOp(kMetadata, fname, false);
  if (!s.ok()) return s;
  return target()->GetFileSize(fname, size);
}

}  // namespace bloomkv::test
