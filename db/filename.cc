// Database file names; see filename.h.
#include "db/filename.h"

#include <cstdio>

#include "bloomkv/env.h"

namespace bloomkv {
namespace {

std::string NumberedName(const std::string& dbname, uint64_t number,
                         const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "/%06llu.%s",
                static_cast<unsigned long long>(number), suffix);
  return dbname + buf;
}

// Parses a decimal number that fills all of s.
bool ParseNumber(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::string LogFileName(const std::string& dbname, uint64_t number) {
  return NumberedName(dbname, number, "log");
}
std::string SegmentFileName(const std::string& dbname, uint64_t number) {
  return NumberedName(dbname, number, "seg");
}
std::string TempFileName(const std::string& dbname, uint64_t number) {
  return NumberedName(dbname, number, "tmp");
}
std::string ManifestFileName(const std::string& dbname, uint64_t number) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "/MANIFEST-%06llu",
                static_cast<unsigned long long>(number));
  return dbname + buf;
}
std::string CurrentFileName(const std::string& dbname) {
  return dbname + "/CURRENT";
}
std::string LockFileName(const std::string& dbname) { return dbname + "/LOCK"; }
std::string InfoLogFileName(const std::string& dbname) {
  return dbname + "/LOG";
}
std::string OldInfoLogFileName(const std::string& dbname, int generation) {
  std::string name = dbname + "/LOG.old";
  if (generation > 0) name += "." + std::to_string(generation);
  return name;
}

bool ParseFileName(const std::string& name, uint64_t* number, FileType* type) {
  if (name == "CURRENT") {
    *number = 0;
    *type = FileType::kCurrentFile;
    return true;
  }
  if (name == "LOCK") {
    *number = 0;
    *type = FileType::kLockFile;
    return true;
  }
  if (name == "LOG" || name == "LOG.old") {
    *number = 0;
    *type = FileType::kInfoLogFile;
    return true;
  }
  const std::string kOldInfoLogPrefix = "LOG.old.";
  if (name.compare(0, kOldInfoLogPrefix.size(), kOldInfoLogPrefix) == 0) {
    *type = FileType::kInfoLogFile;
    return ParseNumber(name.substr(kOldInfoLogPrefix.size()), number);
  }
  const std::string kManifestPrefix = "MANIFEST-";
  if (name.compare(0, kManifestPrefix.size(), kManifestPrefix) == 0) {
    *type = FileType::kManifestFile;
    return ParseNumber(name.substr(kManifestPrefix.size()), number);
  }
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return false;
  const std::string suffix = name.substr(dot + 1);
  if (suffix == "log") {
    *type = FileType::kLogFile;
  } else if (suffix == "seg") {
    *type = FileType::kSegmentFile;
  } else if (suffix == "tmp") {
    *type = FileType::kTempFile;
  } else {
    return false;
  }
  return ParseNumber(name.substr(0, dot), number);
}

Status SetCurrentFile(Env* env, const std::string& dbname,
                      uint64_t manifest_number) {
  std::string manifest = ManifestFileName(dbname, manifest_number);
  std::string contents = manifest.substr(dbname.size() + 1) + "\n";
  std::string tmp = TempFileName(dbname, manifest_number);
  Status s = WriteStringToFile(env, contents, tmp, /*sync=*/true);
  if (s.ok()) s = env->RenameFile(tmp, CurrentFileName(dbname));
  if (s.ok()) {
    s = env->SyncDir(dbname);
  } else {
    env->RemoveFile(tmp).PermitUncheckedError();
  }
  return s;
}

}  // namespace bloomkv
