// CreateCheckpoint; see include/bloomkv/checkpoint.h.
//
// The source is pinned once (DBImpl::PinCheckpointFiles): its current
// version, the logs that version does not cover (held open, with their size
// at that moment) and a file number for the copy's manifest. Everything is
// then copied without the DB mutex. The manifest is not copied byte for
// byte: an edit may be half-appended to the source's manifest at any moment
// (the manifest is written without the mutex), so the copy gets a fresh
// manifest describing exactly the pinned version, which is what the valid
// bytes of the source's manifest describe at the moment of the pin.
//
// Thread-safety: safe to call while other threads use the database.
#include "bloomkv/checkpoint.h"

#include <memory>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "db/checkpoint_files.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/version_edit.h"
#include "db/version_set.h"

namespace bloomkv {
namespace {

constexpr size_t kCopyBufferSize = 64 << 10;

// Copies the first `size` bytes of src into a new file dst and syncs it.
Status CopyFile(Env* env, SequentialFile* src, const std::string& src_name,
                uint64_t size, const std::string& dst) {
  std::unique_ptr<WritableFile> out;
  Status s = env->NewWritableFile(dst, &out);
  if (!s.ok()) return s;
  std::unique_ptr<char[]> buffer(new char[kCopyBufferSize]);
  while (s.ok() && size > 0) {
    Slice chunk;
    const size_t n = size < kCopyBufferSize ? size : kCopyBufferSize;
    s = src->Read(n, &chunk, buffer.get());
    if (s.ok() && chunk.empty()) {
      s = Status::IOError(src_name, "ended " + std::to_string(size) +
                                        " bytes early while being copied");
    }
    if (s.ok()) s = out->Append(chunk);
    size -= chunk.size();
  }
  if (s.ok()) s = out->Sync();
  Status close = out->Close();
  return s.ok() ? close : s;
}

// Hard-links a segment (immutable, and synced when it was written), or
// copies it when the Env or the filesystem cannot link.
Status LinkOrCopySegment(Env* env, const std::string& src, uint64_t size,
                         const std::string& dst) {
  if (env->LinkFile(src, dst).ok()) return Status::OK();
  std::unique_ptr<SequentialFile> file;
  Status s = env->NewSequentialFile(src, &file);
  if (s.ok()) s = CopyFile(env, file.get(), src, size, dst);
  return s;
}

Status WriteManifest(Env* env, const std::string& dir,
                     const CheckpointFiles& files) {
  VersionEdit edit;
  edit.SetLogNumber(files.log_number);
  edit.SetNextFileNumber(files.manifest_number + 1);
  edit.SetLastSequence(files.last_sequence);
  AddVersionContents(*files.version, &edit);
  return WriteManifestFile(env, ManifestFileName(dir, files.manifest_number),
                           edit);
}

Status CopyPinnedFiles(CheckpointFiles* files, const std::string& dir) {
  Env* env = files->env;
  for (int level = 0; level < kNumLevels; level++) {
    for (const auto& f : files->version->files(level)) {
      Status s =
          LinkOrCopySegment(env, SegmentFileName(files->dbname, f->number),
                            f->file_size, SegmentFileName(dir, f->number));
      if (!s.ok()) return s;
    }
  }
  for (CheckpointFiles::Log& log : files->logs) {
    Status s =
        CopyFile(env, log.file.get(), LogFileName(files->dbname, log.number),
                 log.size, LogFileName(dir, log.number));
    if (!s.ok()) return s;
  }
  Status s = WriteManifest(env, dir, *files);
  // Syncs the directory too.
  if (s.ok()) s = SetCurrentFile(env, dir, files->manifest_number);
  return s;
}

// The directory holding path, for syncing the new directory's entry.
std::string ParentDir(const std::string& path) {
  const size_t end = path.find_last_not_of('/');  // "dir/" is "dir"
  if (end == std::string::npos) return "/";
  const size_t slash = path.find_last_of('/', end);
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Status CreateCheckpoint(DB* db, const std::string& dir,
                        const CheckpointOptions& options) {
  auto* impl = dynamic_cast<DBImpl*>(db);
  if (impl == nullptr) {
    return Status::InvalidArgument("checkpoint: not a database from DB::Open");
  }
  if (dir.empty()) return Status::InvalidArgument("empty checkpoint path");
  if (options.flush) {
    Status s = db->Flush();
    if (!s.ok()) return s;
  }
  CheckpointFiles files;
  Status s = impl->PinCheckpointFiles(&files);
  if (!s.ok()) return s;
  Env* env = files.env;
  if (env->FileExists(dir)) {
    return Status::InvalidArgument(dir, "already exists");
  }
  // Not created here: a mistyped path would otherwise grow directories.
  if (!env->IsDirectory(ParentDir(dir))) {
    return Status::InvalidArgument(
        dir, "its parent directory does not exist");
  }
  s = env->CreateDir(dir);
  if (!s.ok()) return s;
  s = CopyPinnedFiles(&files, dir);
  if (s.ok()) s = env->SyncDir(ParentDir(dir));
  if (!s.ok()) {
    std::vector<std::string> children;
    if (env->GetChildren(dir, &children).ok()) {
      for (const std::string& name : children) {
        env->RemoveFile(dir + "/" + name).PermitUncheckedError();
      }
    }
    env->RemoveDir(dir).PermitUncheckedError();
  }
  return s;
}

}  // namespace bloomkv
