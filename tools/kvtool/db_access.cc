// Opening databases and segment files for kvtool; see db_access.h.
#include "tools/kvtool/db_access.h"

#include "bloomkv/env.h"
#include "tools/kvtool/exit_codes.h"

namespace bloomkv::kvtool {
namespace {

// Catches the cases DB::Open would describe less directly: a path that does
// not exist at all, or a plain file given where a database is expected.
int CheckDbPath(std::ostream& err, const std::string& path, bool create) {
  Env* env = Env::Default();
  if (path.empty()) return Fail(err, kExitUsage, "empty database path");
  if (!env->FileExists(path)) {
    if (create) return kExitOk;
    return Fail(err, kExitNotADatabase,
                path + ": no such database (no such file or directory)");
  }
  if (!env->IsDirectory(path)) {
    return Fail(err, kExitNotADatabase,
                path + ": not a bloomkv database (not a directory)");
  }
  return kExitOk;
}

}  // namespace

std::shared_ptr<const FilterPolicy> ReaderFilterPolicy() {
  static const std::shared_ptr<const FilterPolicy> policy =
      NewBloomFilterPolicy(10.0);
  return policy;
}

int OpenDbReadOnly(std::ostream& err, const std::string& path,
                   std::unique_ptr<DB>* db) {
  int code = CheckDbPath(err, path, /*create=*/false);
  if (code != kExitOk) return code;
  Options options;
  options.filter_policy = ReaderFilterPolicy();
  Status s = DB::OpenForReadOnly(options, path, db);
  if (!s.ok()) return Fail(err, ExitCodeForOpen(s), s.ToString());
  return kExitOk;
}

int OpenDbForWrite(std::ostream& err, const std::string& path, bool create,
                   std::unique_ptr<DB>* db) {
  int code = CheckDbPath(err, path, create);
  if (code != kExitOk) return code;
  Options options;
  options.create_if_missing = create;
  Status s = DB::Open(options, path, db);
  if (!s.ok()) {
    code = ExitCodeForOpen(s);
    if (code == kExitLocked) {
      return Fail(err, code,
                  path +
                      ": database is locked by another process (its LOCK "
                      "file is held); read-only subcommands still work");
    }
    return Fail(err, code, s.ToString());
  }
  return kExitOk;
}

Status OpenSegment(const std::string& path,
                   std::unique_ptr<SegmentReader>* reader) {
  Env* env = Env::Default();
  uint64_t size = 0;
  Status s = env->GetFileSize(path, &size);
  std::unique_ptr<RandomAccessFile> file;
  if (s.ok()) s = env->NewRandomAccessFile(path, &file);
  if (!s.ok()) return s;
  SegmentReaderOptions options;
  options.filter_policy = ReaderFilterPolicy();
  return SegmentReader::Open(options, path, std::move(file), size, reader);
}

int OpenSegmentFile(std::ostream& err, const std::string& path,
                    std::unique_ptr<SegmentReader>* reader) {
  Env* env = Env::Default();
  if (!env->FileExists(path)) {
    return Fail(err, kExitNotADatabase, path + ": no such file");
  }
  if (env->IsDirectory(path)) {
    return Fail(err, kExitNotADatabase,
                path + ": is a directory, not a segment file");
  }
  Status s = OpenSegment(path, reader);
  if (!s.ok()) {
    // A file without the segment magic is not a segment at all; anything
    // else is a damaged one.
    const bool not_a_segment =
        s.IsCorruption() &&
        s.message().find("not a segment file") != std::string::npos;
    return Fail(err, not_a_segment ? kExitNotADatabase : ExitCodeFor(s),
                s.ToString());
  }
  return kExitOk;
}

}  // namespace bloomkv::kvtool
