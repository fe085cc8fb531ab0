// kvtool verify: reads every byte that carries a checksum and reports every
// file that fails, one line per problem with the file and offset.
//
// A database check covers CURRENT, every MANIFEST (each edit decoded), every
// write-ahead log (each record checked as a write batch) and every segment
// (footer, index, filter and properties when opened, then every data block
// by iterating with checksums on, keys checked for order). The live segments
// the manifest lists must exist with the recorded sizes. A torn last record
// of a log (what a crash mid-write leaves) is a note, not a problem: the
// database drops it on recovery; unless it starts inside the bytes the
// manifest records as synced, which makes it damage (recovery refuses it
// too), as is a log shorter than them. Then the database is opened read-only
// exactly as DB::Open would open it (manifest replayed, every log and
// segment it names present with its recorded size, every log replayed), so
// that verify never passes a database Open refuses. Nothing is written.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "bloomkv/write_batch.h"
#include "db/filename.h"
#include "db/log_reader.h"
#include "db/version_edit.h"
#include "db/write_batch_internal.h"
#include "table/internal_key.h"
#include "table/segment_reader.h"
#include "tools/kvtool/commands.h"
#include "tools/kvtool/db_access.h"
#include "tools/kvtool/exit_codes.h"

namespace bloomkv::kvtool {
namespace {

using json = nlohmann::ordered_json;

enum class Severity { kNote, kCorrupt, kIOError };

struct Finding {
  Severity severity;
  std::string message;
  std::optional<uint64_t> offset;  // where in the file, when known
};

struct FileReport {
  std::string file;
  std::string kind;     // "segment", "log", "manifest", "current"
  std::string summary;  // what was checked, for a clean file
  std::vector<Finding> findings;

  bool corrupt() const {
    for (const auto& f : findings) {
      if (f.severity == Severity::kCorrupt) return true;
    }
    return false;
  }
  bool io_error() const {
    for (const auto& f : findings) {
      if (f.severity == Severity::kIOError) return true;
    }
    return false;
  }
  // The line's CORRUPT / ERROR tag says what kind of problem it is, so a
  // corruption is shown without its status prefix.
  void Add(const Status& s) {
    if (s.IsCorruption()) {
      findings.push_back({Severity::kCorrupt, s.message(), s.offset()});
    } else {
      findings.push_back({Severity::kIOError, s.ToString(), s.offset()});
    }
  }
  void Corrupt(const std::string& message,
               std::optional<uint64_t> offset = std::nullopt) {
    findings.push_back({Severity::kCorrupt, message, offset});
  }
  void Note(const std::string& message) {
    findings.push_back({Severity::kNote, message, std::nullopt});
  }
  // For a file the database does not use (a left-over of a crash, or an old
  // manifest): recovery ignores it, so what is wrong with it is a note.
  void DemoteToNotes(const std::string& why) {
    for (auto& f : findings) f.severity = Severity::kNote;
    findings.insert(findings.begin(), {Severity::kNote, why, std::nullopt});
    if (summary.empty()) summary = "not used by the database";
  }
};

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// An offset for JSON: the number, or null.
json OffsetJson(std::optional<uint64_t> offset) {
  return offset ? json(*offset) : json(nullptr);
}

FileReport VerifySegment(const std::string& path) {
  FileReport r{path, "segment", "", {}};
  std::unique_ptr<SegmentReader> reader;
  Status s = OpenSegment(path, &reader);
  if (!s.ok()) {
    r.Add(s);
    return r;
  }
  SegmentReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  SegmentReadStats stats;
  std::unique_ptr<Iterator> it = reader->NewIterator(ro, &stats);
  uint64_t entries = 0;
  std::string previous;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ParsedInternalKey parsed;
    if (!ParseInternalKey(it->key(), &parsed)) {
      r.Corrupt(path + ": malformed internal key in entry " +
                std::to_string(entries));
      return r;
    }
    if (entries > 0 && CompareInternalKeys(previous, it->key()) >= 0) {
      r.Corrupt(path + ": keys out of order at entry " +
                std::to_string(entries));
      return r;
    }
    previous.assign(it->key().data(), it->key().size());
    entries++;
  }
  s = it->status();
  if (!s.ok()) {
    r.Add(s);
    return r;
  }
  if (entries != reader->properties().num_entries) {
    r.Corrupt(path + ": holds " + std::to_string(entries) +
              " entries, its properties say " +
              std::to_string(reader->properties().num_entries));
    return r;
  }
  r.summary = Plural(entries, "entry", "entries") + " in " +
              Plural(stats.data_blocks_read, "data block", "data blocks");
  return r;
}

// Collects what a log::Reader drops.
struct CollectingReporter final : log::Reader::Reporter {
  FileReport* report = nullptr;
  void Corruption(size_t, const Status& reason) override {
    report->Add(reason);
  }
};

// Reads every record of a log-format file; `record` checks one record and
// returns a description of what is wrong with it, if anything.
// synced: the bytes of the file a manifest records as synced; a torn tail
// that starts inside them is damage, not an interrupted write (recovery
// refuses it too).
template <typename RecordCheck>
void ReadLogFile(const std::string& path, FileReport* r, const char* unit,
                 const char* units, uint64_t synced, RecordCheck record) {
  std::unique_ptr<SequentialFile> file;
  Status s = Env::Default()->NewSequentialFile(path, &file);
  if (!s.ok()) {
    r->Add(s);
    return;
  }
  CollectingReporter reporter;
  reporter.report = r;
  log::Reader reader(file.get(), path, &reporter, /*verify_checksums=*/true);
  Slice rec;
  std::string scratch;
  uint64_t n = 0;
  while (reader.ReadRecord(&rec, &scratch)) {
    s = record(rec);
    if (!s.ok()) {
      r->Corrupt(path + ": bad " + unit + " at offset " +
                     std::to_string(reader.LastRecordOffset()) + ": " +
                     s.message(),
                 reader.LastRecordOffset());
    }
    n++;
  }
  s = reader.TornTailWithinSynced(synced);
  if (!s.ok()) {
    r->Add(s);
  } else if (reader.torn_tail()) {
    r->Note(path + ": torn tail of " +
            std::to_string(reader.torn_tail_bytes()) + " bytes at offset " +
            std::to_string(reader.torn_tail_offset()) +
            " ignored (an interrupted write; recovery drops it too)");
  }
  r->summary = Plural(n, unit, units);
}

// synced: the bytes the manifest records as synced (0: none recorded).
FileReport VerifyLog(const std::string& path, uint64_t synced = 0) {
  FileReport r{path, "log", "", {}};
  WriteBatch batch;
  ReadLogFile(path, &r, "write batch", "write batches", synced,
              [&](const Slice& rec) {
                return WriteBatchInternal::SetContents(&batch, rec);
              });
  uint64_t size = 0;
  if (Env::Default()->GetFileSize(path, &size).ok() && size < synced) {
    r.Corrupt(path + " at offset " + std::to_string(size) +
                  ": ends before the " + std::to_string(synced) +
                  " bytes the manifest records as synced",
              size);
  }
  return r;
}

// What a manifest leaves: file number -> size of the live segments, and
// log number -> bytes recorded as synced, for the logs recovery still
// reads (as VersionSet keeps them).
struct ManifestState {
  std::map<uint64_t, uint64_t> segments;
  std::map<uint64_t, uint64_t> synced_logs;
};

FileReport VerifyManifest(const std::string& path, ManifestState* state) {
  FileReport r{path, "manifest", "", {}};
  uint64_t log_number = 0;
  ReadLogFile(path, &r, "edit", "edits", /*synced=*/0, [&](const Slice& rec) {
    VersionEdit edit;
    Status s = edit.DecodeFrom(rec);
    if (!s.ok()) return s;
    for (const auto& [level, number] : edit.deleted_files()) {
      state->segments.erase(number);
    }
    for (const auto& [level, f] : edit.new_files()) {
      state->segments[f->number] = f->file_size;
    }
    if (edit.has_log_number()) log_number = edit.log_number();
    for (const auto& [number, synced] : edit.logs()) {
      uint64_t& recorded = state->synced_logs[number];
      recorded = std::max(recorded, synced);
    }
    return Status::OK();
  });
  std::erase_if(state->synced_logs,
                [&](const auto& log) { return log.first < log_number; });
  return r;
}

std::vector<FileReport> VerifyDatabase(const std::string& dir) {
  Env* env = Env::Default();
  std::vector<FileReport> reports;
  std::vector<std::string> children;
  Status s = env->GetChildren(dir, &children);
  if (!s.ok()) {
    reports.push_back({dir, "directory", "", {}});
    reports.back().Add(s);
    return reports;
  }
  std::sort(children.begin(), children.end());

  // CURRENT names the live manifest.
  FileReport current{CurrentFileName(dir), "current", "", {}};
  std::string current_manifest;
  std::string contents;
  s = ReadFileToString(env, CurrentFileName(dir), &contents);
  if (!s.ok()) {
    current.Add(s);
  } else if (contents.empty() || contents.back() != '\n') {
    current.Corrupt(current.file + ": does not end with a newline");
  } else {
    contents.pop_back();
    uint64_t number;
    FileType type;
    if (!ParseFileName(contents, &number, &type) ||
        type != FileType::kManifestFile) {
      current.Corrupt(current.file + ": names no manifest: '" + contents + "'");
    } else if (!env->FileExists(dir + "/" + contents)) {
      current.Corrupt(current.file + ": names " + contents +
                      ", which does not exist");
    } else {
      current_manifest = contents;
      current.summary = "names " + contents;
    }
  }
  reports.push_back(std::move(current));

  ManifestState current_state;
  std::vector<uint64_t> segments, logs;
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    const std::string path = dir + "/" + name;
    if (type == FileType::kManifestFile) {
      ManifestState state;
      reports.push_back(VerifyManifest(path, &state));
      if (name == current_manifest) {
        current_state = std::move(state);
      } else {
        const std::string why = path + ": not the manifest CURRENT names";
        // Without a readable CURRENT, no manifest is known to be unused.
        if (current_manifest.empty()) {
          reports.back().Note(why);
        } else {
          reports.back().DemoteToNotes(why);
        }
      }
    } else if (type == FileType::kLogFile) {
      logs.push_back(number);  // after the manifests: they say what is synced
    } else if (type == FileType::kSegmentFile) {
      segments.push_back(number);
    }
  }
  for (uint64_t number : logs) {
    const auto synced = current_state.synced_logs.find(number);
    reports.push_back(VerifyLog(
        LogFileName(dir, number),
        synced == current_state.synced_logs.end() ? 0 : synced->second));
  }
  std::map<uint64_t, uint64_t>& live = current_state.segments;
  for (uint64_t number : segments) {
    const std::string path = SegmentFileName(dir, number);
    reports.push_back(VerifySegment(path));
    FileReport& r = reports.back();
    auto it = live.find(number);
    if (it == live.end()) {
      if (!current_manifest.empty()) {
        r.DemoteToNotes(path +
                        ": not listed in the manifest (a left-over file)");
      }
      continue;
    }
    uint64_t size = 0;
    if (env->GetFileSize(path, &size).ok() && size != it->second) {
      r.Corrupt(path + ": is " + std::to_string(size) +
                " bytes, the manifest says " + std::to_string(it->second));
    }
    live.erase(it);
  }
  for (const auto& [number, size] : live) {
    FileReport r{SegmentFileName(dir, number), "segment", "", {}};
    r.Corrupt(r.file + ": listed in " + current_manifest + " but missing");
    reports.push_back(std::move(r));
  }
  return reports;
}

FileReport VerifyFile(const std::string& path) {
  uint64_t number;
  FileType type;
  if (ParseFileName(BaseName(path), &number, &type)) {
    if (type == FileType::kLogFile) return VerifyLog(path);
    if (type == FileType::kManifestFile) {
      ManifestState state;
      return VerifyManifest(path, &state);
    }
  }
  return VerifySegment(path);
}

}  // namespace

int RunVerify(const Context& ctx, const std::string& path) {
  Env* env = Env::Default();
  if (!env->FileExists(path)) {
    return Fail(*ctx.err, kExitNotADatabase,
                path + ": no such file or directory");
  }
  std::vector<FileReport> reports;
  Status open;          // what a read-only DB::Open of the directory said
  bool opened = false;  // whether verify opened it (a directory)
  if (env->IsDirectory(path)) {
    std::vector<std::string> children;
    Status s = env->GetChildren(path, &children);
    bool ours = false;
    for (const std::string& name : children) {
      uint64_t number;
      FileType type;
      if (ParseFileName(name, &number, &type) && type != FileType::kLockFile &&
          type != FileType::kInfoLogFile) {
        ours = true;
      }
    }
    if (s.ok() && !ours) {
      return Fail(*ctx.err, kExitNotADatabase,
                  path +
                      ": not a bloomkv database (no CURRENT, manifest, "
                      "log or segment file)");
    }
    reports = VerifyDatabase(path);
    // Open's own checks, by Open's own code: a read-only open changes no
    // file, and it retries when a live writer moves files under it.
    std::unique_ptr<DB> db;
    open = DB::OpenForReadOnly(Options(), path, &db);
    opened = true;
  } else {
    reports.push_back(VerifyFile(path));
  }

  uint64_t corrupt = 0, io_errors = 0;
  for (const FileReport& r : reports) {
    if (r.corrupt()) corrupt++;
    if (!r.corrupt() && r.io_error()) io_errors++;
  }
  std::ostream& out = *ctx.out;
  if (ctx.json) {
    json j = {{"path", path},
              {"files", json::array()},
              {"files_checked", reports.size()},
              {"corrupt_files", corrupt},
              {"unreadable_files", io_errors},
              {"ok", corrupt == 0 && io_errors == 0 && open.ok()}};
    if (opened) {
      j["open"] = {{"ok", open.ok()},
                   {"error", open.ok() ? json(nullptr) : json(open.ToString())},
                   {"offset", OffsetJson(open.offset())}};
    }
    for (const FileReport& r : reports) {
      json f = {{"file", r.file},
                {"kind", r.kind},
                {"status", r.corrupt()    ? "corrupt"
                           : r.io_error() ? "error"
                                          : "ok"},
                {"summary", r.summary},
                {"problems", json::array()},
                {"notes", json::array()}};
      for (const Finding& finding : r.findings) {
        if (finding.severity == Severity::kNote) {
          f["notes"].push_back(finding.message);
        } else {
          f["problems"].push_back({{"message", finding.message},
                                   {"offset", OffsetJson(finding.offset)}});
        }
      }
      j["files"].push_back(f);
    }
    out << j.dump(2) << "\n";
  } else {
    for (const FileReport& r : reports) {
      bool problem = false;
      for (const Finding& f : r.findings) {
        if (f.severity == Severity::kNote) continue;
        out << (f.severity == Severity::kCorrupt ? "CORRUPT  " : "ERROR    ")
            << f.message << "\n";
        problem = true;
      }
      if (!problem) out << "ok       " << r.file << ": " << r.summary << "\n";
      for (const Finding& f : r.findings) {
        if (f.severity == Severity::kNote)
          out << "note     " << f.message << "\n";
      }
    }
    if (opened && open.ok()) {
      out << "ok       " << path << ": opens (the checks DB::Open makes)\n";
    } else if (opened) {
      out << (open.IsCorruption() ? "CORRUPT  " + open.message()
                                  : "ERROR    " + open.ToString())
          << " (DB::Open refuses the database)\n";
    }
    out << "checked " << reports.size() << " files: " << corrupt << " corrupt, "
        << io_errors << " unreadable\n";
  }
  out.flush();
  if (corrupt > 0) {
    return Fail(*ctx.err, kExitNotFoundOrDamaged,
                "verification found " + std::to_string(corrupt) +
                    " corrupt file" + (corrupt == 1 ? "" : "s"));
  }
  if (open.IsCorruption()) {
    return Fail(*ctx.err, kExitNotFoundOrDamaged,
                "DB::Open refuses the database: " + open.message());
  }
  if (!open.ok()) {
    return Fail(*ctx.err, kExitIOError,
                "DB::Open cannot read the database: " + open.ToString());
  }
  if (io_errors > 0) {
    return Fail(*ctx.err, kExitIOError,
                std::to_string(io_errors) + " file" +
                    (io_errors == 1 ? "" : "s") + " could not be read");
  }
  return kExitOk;
}

}  // namespace bloomkv::kvtool
