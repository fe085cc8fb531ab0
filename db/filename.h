// The names of the files in a database directory.
//
//   000007.log        write-ahead log
//   000012.seg        segment file
//   MANIFEST-000003   manifest: a log of version edits
//   CURRENT           names the live manifest; replaced atomically
//   LOCK              held by the process that has the database open
//   000004.tmp        temporary file being written
//   LOG               human-readable event log (the info log)
//   LOG.old           the previous info log; older ones LOG.old.1, LOG.old.2
// Thread-safety: stateless functions.
#ifndef BLOOMKV_DB_FILENAME_H_
#define BLOOMKV_DB_FILENAME_H_

#include <cstdint>
#include <string>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

class Env;

enum class FileType {
  kLogFile,
  kSegmentFile,
  kManifestFile,
  kCurrentFile,
  kLockFile,
  kTempFile,
  kInfoLogFile,
};

std::string LogFileName(const std::string& dbname, uint64_t number);
std::string SegmentFileName(const std::string& dbname, uint64_t number);
std::string ManifestFileName(const std::string& dbname, uint64_t number);
std::string CurrentFileName(const std::string& dbname);
std::string LockFileName(const std::string& dbname);
std::string TempFileName(const std::string& dbname, uint64_t number);
std::string InfoLogFileName(const std::string& dbname);
// A previous info log: generation 0 is LOG.old (the newest), n > 0 is
// LOG.old.<n>, older as n grows.
std::string OldInfoLogFileName(const std::string& dbname, int generation = 0);

// Parses a file name (not a path). False if it is not one of ours.
bool ParseFileName(const std::string& filename, uint64_t* number,
                   FileType* type);

// Points CURRENT at MANIFEST-<manifest_number>, atomically: writes a
// temporary file, fsyncs it, renames it over CURRENT, fsyncs the directory.
// On error CURRENT may still name the new manifest (the rename succeeded but
// the directory fsync failed), or name it after a crash: the caller must
// then keep that manifest, never delete it.
Status SetCurrentFile(Env* env, const std::string& dbname,
                      uint64_t manifest_number);

}  // namespace bloomkv

#endif  // BLOOMKV_DB_FILENAME_H_
