// FaultInjectionEnv: an EnvWrapper that simulates crashes and IO errors.
//
// Crash simulation. The Env tracks every file written through it: its size
// and how much of it the last successful Sync() made durable; and, per
// directory, the entries created or renamed since that directory's last
// SyncDir(). DropUnsyncedData() then turns the disk into one state a real
// machine crash could leave behind:
//   * each tracked file is truncated to its last synced size (a file never
//     synced becomes empty);
//   * renames not followed by SyncDir() of the target's directory are undone,
//     newest first: the file moves back to its old name and a target it
//     replaced gets back its (durable) old contents;
//   * files created since the last SyncDir() of their directory are deleted,
//     whether or not their data was synced.
// Afterwards every file counts as durable again, and writable files opened
// before the crash fail every further call with IOError.
// Limits (what is NOT simulated): removals are durable at once (a removed
// file never comes back); truncation by NewWritableFile on an existing file
// is durable at once; data synced is all-or-nothing per Sync() (no torn
// sectors); crash points inside a call are not modelled; a rename across
// directories is pending on the target directory only; only files written
// through this Env are tracked; paths must be spelled consistently (the
// directory of "d/f" is "d", and SyncDir("d/") counts as SyncDir("d")).
// Undo is best-effort: a rename whose target was later removed stays done.
//
// Error injection. InjectErrors() makes operations of chosen kinds on files
// whose name matches a predicate fail with IOError after a number of them
// have succeeded. A failed Append/Sync/Read/Rename/... has no effect on the
// target Env (a failed Close still releases the file). op_count() counts
// the calls of each kind, so that a test can first count them and then make
// each one fail in turn.
//
// Filesystem inactive. After SetFilesystemActive(false) every mutating call
// fails with IOError and changes nothing: appends, flushes, syncs, opening
// files for writing, renames, removals, directory creation/removal and
// SyncDir. Close() still releases the file. Reads keep working. Typical crash
// test: write; SetFilesystemActive(false); shut the DB down;
// DropUnsyncedData(); SetFilesystemActive(true); reopen.
//
// Appends are flushed to the target Env at once (so nothing buffered below
// this Env can reappear after a simulated crash); writable files may stay
// open across DropUnsyncedData.
// Thread-safety: thread-safe. REQUIRES for DropUnsyncedData(): no writable
// file of this Env is being written concurrently.
#ifndef BLOOMKV_TESTS_TESTUTIL_FAULT_ENV_H_
#define BLOOMKV_TESTS_TESTUTIL_FAULT_ENV_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/env.h"

namespace bloomkv::test {

class FaultInjectionEnv : public EnvWrapper {
 public:
  // Kinds of operation for InjectErrors; combine with |.
  enum Op : uint32_t {
    kOpen = 1u << 0,    // New{Sequential,RandomAccess,Writable,Appendable}File
    kRead = 1u << 1,    // SequentialFile::Read/Skip, RandomAccessFile::Read
    kWrite = 1u << 2,   // WritableFile::Append and Flush
    kSync = 1u << 3,    // WritableFile::Sync; SyncDir (matched on the dir)
    kRename = 1u << 4,  // RenameFile (matches if src or target matches)
    kRemove = 1u << 5,  // RemoveFile
    kClose = 1u << 6,   // WritableFile::Close (the file is released anyway)
    kMetadata = 1u << 7,  // GetChildren (matched on the dir), GetFileSize
    kAllOps = (1u << 8) - 1,
  };
  // Every kind above, one bit each, for loops over kinds.
  static constexpr Op kEachOp[] = {kOpen,   kRead,   kWrite, kSync,
                                   kRename, kRemove, kClose, kMetadata};
  // Selects files by name; a null matcher matches every file.
  using FileMatcher = std::function<bool(const std::string& fname)>;

  // What DropUnsyncedData knows about one tracked file.
  struct FileState {
    uint64_t size = 0;          // bytes appended through this Env (or found)
    uint64_t synced_size = 0;   // bytes that survive a crash
    bool entry_synced = false;  // its directory entry survives a crash
  };

  // REQUIRES: target outlives this Env and every file it opened.
  explicit FaultInjectionEnv(Env* target);
  ~FaultInjectionEnv() override;

  // ---- error injection ----
  // Replaces any previous rule. matches is called with this Env's lock
  // held: it must not call back into this Env. Operations whose kind is in ops
  // and whose file matches are counted; the first succeed_first succeed, the
  // next fail_count fail with IOError ("injected fault"), later ones succeed
  // again. fail_count == 0 means every later one fails until
  // ClearInjectedErrors().
  void InjectErrors(uint32_t ops, FileMatcher matches, uint64_t succeed_first,
                    uint64_t fail_count = 0);
  void ClearInjectedErrors();
  // How many operations failed because of InjectErrors (never reset).
  uint64_t injected_error_count() const;
  // When on, the filesystem goes inactive right after an injected error:
  // the machine "crashes" just after the failed call returns.
  void SetDeactivateOnInjectedError(bool on);

  // ---- call counting ----
  // How many operations of kind op (one bit) were attempted since the last
  // ResetOpCounts(), whether they succeeded or not and whatever the file.
  uint64_t op_count(Op op) const;
  void ResetOpCounts();

  // ---- filesystem inactive ----
  void SetFilesystemActive(bool active);
  bool IsFilesystemActive() const;

  // ---- crash simulation ----
  // Simulates a crash as described above; returns the first error from the
  // target Env while doing so. Then forgets all state.
  Status DropUnsyncedData();
  // Declares everything on disk durable now (like a clean shutdown) without
  // touching any file.
  void ResetState();
  // False if fname is not tracked (never written through this Env since the
  // last DropUnsyncedData/ResetState, or removed).
  bool GetFileState(const std::string& fname, FileState* state) const;

  // ---- Env ----
  Status NewSequentialFile(const std::string& fname,
                           std::unique_ptr<SequentialFile>* result) override;
  Status NewRandomAccessFile(
      const std::string& fname,
      std::unique_ptr<RandomAccessFile>* result) override;
  Status NewWritableFile(const std::string& fname,
                         std::unique_ptr<WritableFile>* result) override;
  Status NewAppendableFile(const std::string& fname,
                           std::unique_ptr<WritableFile>* result) override;
  Status RemoveFile(const std::string& fname) override;
  Status CreateDir(const std::string& dirname) override;
  Status RemoveDir(const std::string& dirname) override;
  Status RenameFile(const std::string& src, const std::string& target) override;
  Status SyncDir(const std::string& dirname) override;
  Status GetChildren(const std::string& dir,
                     std::vector<std::string>* result) override;
  Status GetFileSize(const std::string& fname, uint64_t* size) override;

  // ---- used by this Env's file objects ----
  struct TrackedFile;
  // OK, or the IOError an operation of kind op on fname must return
  // (filesystem inactive, or an injected fault). mutating: the operation
  // would change the disk. Counts the operation for InjectErrors.
  Status CheckOp(Op op, const std::string& fname, bool mutating);
  // False if a file opened in generation gen predates a simulated crash.
  bool FileIsCurrent(uint64_t gen) const;
  // After a successful Append of n bytes / Sync.
  void RecordAppend(TrackedFile* file, uint64_t n);
  void RecordSync(TrackedFile* file);

 private:
  // A directory operation not yet made durable by SyncDir.
  struct PendingOp {
    enum Kind { kCreate, kRename } kind;
    std::string dir;     // directory whose SyncDir makes it durable
    std::string name;    // kCreate: the file; kRename: the source
    std::string target;  // kRename only
    // kRename over an existing file: that file's durable contents.
    std::optional<std::string> replaced_contents;
  };

  Status OpenWritable(const std::string& fname, bool append,
                      std::unique_ptr<WritableFile>* result);
  // REQUIRES: mu_ held. fname2: a second name that also matches (rename).
  Status CheckOpLocked(Op op, const std::string& fname,
                       const std::string* fname2, bool mutating);
  // REQUIRES: mu_ held.
  Status TruncateLocked(const std::string& fname, uint64_t size);

  mutable std::mutex mu_;
  // All GUARDED_BY(mu_):
  bool active_ = true;
  uint64_t generation_ = 0;
  std::map<std::string, std::shared_ptr<TrackedFile>> files_;
  std::vector<PendingOp> pending_;
  // Injection rule.
  uint32_t fault_ops_ = 0;
  FileMatcher fault_matches_;
  uint64_t fault_succeed_first_ = 0;
  uint64_t fault_fail_count_ = 0;
  uint64_t fault_seen_ = 0;
  uint64_t injected_errors_ = 0;
  bool deactivate_on_fault_ = false;
  uint64_t op_counts_[8] = {};  // per Op bit
};

// Real files, no fsync: under a FaultInjectionEnv, durability is the
// fault env's bookkeeping, and the test does not wait for the disk.
class NoFsyncEnv final : public EnvWrapper {
 public:
  explicit NoFsyncEnv(Env* target) : EnvWrapper(target) {}
  Status NewWritableFile(const std::string& f,
                         std::unique_ptr<WritableFile>* r) override {
    return Wrap(target()->NewWritableFile(f, r), r);
  }
  Status NewAppendableFile(const std::string& f,
                           std::unique_ptr<WritableFile>* r) override {
    return Wrap(target()->NewAppendableFile(f, r), r);
  }
  Status SyncDir(const std::string&) override { return Status::OK(); }

 private:
  class File final : public WritableFile {
   public:
    explicit File(std::unique_ptr<WritableFile> t) : t_(std::move(t)) {}
    Status Append(const Slice& data) override { return t_->Append(data); }
    Status Flush() override { return t_->Flush(); }
    Status Sync() override { return t_->Flush(); }
    Status Close() override { return t_->Close(); }

   private:
    std::unique_ptr<WritableFile> t_;
  };
  static Status Wrap(Status s, std::unique_ptr<WritableFile>* r) {
    if (s.ok()) *r = std::make_unique<File>(std::move(*r));
    return s;
  }
};

// Destroys *db as a crash ends a process: what it had written stays, and
// nothing it would write while closing (a clean close syncs the logs and
// records their lengths in the manifest) reaches the files.
// REQUIRES: *db was opened with env as its Env.
inline void CloseAsInACrash(std::unique_ptr<DB>* db, FaultInjectionEnv* env) {
  env->SetFilesystemActive(false);
  db->reset();
  env->SetFilesystemActive(true);
}

}  // namespace bloomkv::test

#endif  // BLOOMKV_TESTS_TESTUTIL_FAULT_ENV_H_
