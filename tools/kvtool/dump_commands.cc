// kvtool idump, manifest and wal: what ldb's idump, manifest_dump and
// dump_wal show, from a database opened read-only or from its files read
// directly. Nothing is written.
//
// manifest and wal read a log-format file record by record with checksums
// verified. A damaged record is reported where it was met (a "!" line, or
// the "problems" array in JSON) and reading goes on past it, as far as the
// file can be read; the command then ends with one error line naming the
// first problem and exit code 4. A torn tail (what a crash mid-write leaves,
// and what recovery drops) is shown but is not a problem.
#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/debug.h"
#include "bloomkv/env.h"
#include "bloomkv/write_batch.h"
#include "db/filename.h"
#include "db/log_reader.h"
#include "db/version_edit.h"
#include "db/write_batch_internal.h"
#include "table/internal_key.h"
#include "tools/kvtool/commands.h"
#include "tools/kvtool/db_access.h"
#include "tools/kvtool/exit_codes.h"
#include "tools/kvtool/format.h"

namespace bloomkv::kvtool {
namespace {

using json = nlohmann::ordered_json;

// One log-format file read record by record, with what went wrong on the
// way.
class LogFileRecords {
 public:
  // Opens path; ok() is false (and status() says why) if it cannot be.
  explicit LogFileRecords(const std::string& path) : path_(path) {
    status_ = Env::Default()->NewSequentialFile(path, &file_);
    if (status_.ok()) {
      reporter_.problems = &problems_;
      reader_ = std::make_unique<log::Reader>(file_.get(), path, &reporter_,
                                              /*verify_checksums=*/true);
    }
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // The next record into *record; false at the end (or when reading
  // failed: the problem is in problems()).
  bool Next(Slice* record) { return reader_->ReadRecord(record, &scratch_); }
  uint64_t offset() const { return reader_->LastRecordOffset(); }

  // Damage met so far, each naming the file and offset.
  const std::vector<std::string>& problems() const { return problems_; }
  void AddProblem(std::string problem) {
    problems_.push_back(std::move(problem));
  }
  // Writes the problems not written yet, one "! ..." line each, where the
  // text output has got to.
  void PrintNewProblems(std::ostream& out) {
    for (; printed_ < problems_.size(); printed_++) {
      out << "! " << problems_[printed_] << "\n";
    }
  }

  // The torn tail, as a JSON object, or null.
  json TornTailJson() const {
    if (!reader_->torn_tail()) return nullptr;
    return {{"offset", reader_->torn_tail_offset()},
            {"bytes", reader_->torn_tail_bytes()}};
  }
  // "" or a line describing the torn tail.
  std::string TornTailText() const {
    if (!reader_->torn_tail()) return "";
    return "torn tail of " +
           Plural(reader_->torn_tail_bytes(), "byte", "bytes") + " at offset " +
           std::to_string(reader_->torn_tail_offset()) +
           " (an interrupted write, which recovery drops, unless the "
           "manifest records these bytes as synced: 'kvtool verify' tells)";
  }

 private:
  struct Reporter final : log::Reader::Reporter {
    std::vector<std::string>* problems = nullptr;
    void Corruption(size_t, const Status& reason) override {
      problems->push_back(reason.ToString());
    }
  };

  const std::string path_;
  Status status_;
  std::unique_ptr<SequentialFile> file_;
  Reporter reporter_;
  std::unique_ptr<log::Reader> reader_;
  std::string scratch_;
  std::vector<std::string> problems_;
  size_t printed_ = 0;
};

// The error line and exit code for the problems met, if any.
int EndWithProblems(const Context& ctx,
                    const std::vector<std::string>& problems) {
  if (problems.empty()) return kExitOk;
  std::string line = problems.front();
  if (problems.size() > 1) {
    line += " (and " +
            Plural(problems.size() - 1, "more problem", "more problems") + ")";
  }
  return Fail(*ctx.err, kExitCorruption, line);
}

// ---- manifest ----------------------------------------------------------

json BoundJson(const Context& ctx, const std::string& ikey) {
  ParsedInternalKey parsed;
  if (!ParseInternalKey(ikey, &parsed)) return nullptr;
  return {{"key", ctx.Bytes(parsed.user_key)},
          {"sequence", parsed.sequence},
          {"type", parsed.type == ValueType::kDeletion ? "delete" : "put"}};
}

std::string BoundText(const Context& ctx, const std::string& ikey) {
  ParsedInternalKey parsed;
  if (!ParseInternalKey(ikey, &parsed)) return "(malformed key)";
  return ctx.Bytes(parsed.user_key) + " @ " + std::to_string(parsed.sequence);
}

// The manifest `path` stands for: the one CURRENT names in a database
// directory, or the file itself. Fails with the exit code otherwise.
int ResolveManifest(const Context& ctx, const std::string& path,
                    std::string* manifest) {
  Env* env = Env::Default();
  if (!env->FileExists(path)) {
    return Fail(*ctx.err, kExitNotADatabase,
                path + ": no such file or directory");
  }
  if (!env->IsDirectory(path)) {
    *manifest = path;
    return kExitOk;
  }
  std::string current;
  Status s = ReadFileToString(env, CurrentFileName(path), &current);
  if (!s.ok()) {
    return Fail(*ctx.err, kExitNotADatabase,
                path + ": is not a bloomkv database (no CURRENT)");
  }
  uint64_t number;
  FileType type;
  if (current.empty() || current.back() != '\n' ||
      !ParseFileName(current.substr(0, current.size() - 1), &number, &type) ||
      type != FileType::kManifestFile) {
    return Fail(*ctx.err, kExitCorruption,
                CurrentFileName(path) + ": names no manifest: '" +
                    Printable(current) + "'");
  }
  *manifest = path + "/" + current.substr(0, current.size() - 1);
  return kExitOk;
}

}  // namespace

int RunManifest(const Context& ctx, const std::string& path) {
  std::string manifest;
  int code = ResolveManifest(ctx, path, &manifest);
  if (code != kExitOk) return code;
  LogFileRecords records(manifest);
  if (!records.ok()) return FailWith(*ctx.err, records.status());

  std::ostream& out = *ctx.out;
  json edits = json::array();
  if (!ctx.json) out << "# " << manifest << "\n";
  // What the edits leave: file number -> level, and the newest log number,
  // next file number and last sequence recorded.
  std::map<uint64_t, int> live;
  uint64_t n = 0, log_number = 0, next_file = 0, last_sequence = 0;
  Slice record;
  while (records.Next(&record)) {
    if (!ctx.json) records.PrintNewProblems(out);
    VersionEdit edit;
    Status s = edit.DecodeFrom(record);
    if (!s.ok()) {
      records.AddProblem(manifest + ": bad edit at offset " +
                         std::to_string(records.offset()) + ": " + s.message());
      if (!ctx.json) records.PrintNewProblems(out);
      continue;
    }
    n++;
    if (edit.has_log_number()) log_number = edit.log_number();
    if (edit.has_next_file_number()) next_file = edit.next_file_number();
    if (edit.has_last_sequence()) last_sequence = edit.last_sequence();
    for (const auto& [level, number] : edit.deleted_files()) live.erase(number);
    for (const auto& [level, f] : edit.new_files()) live[f->number] = level;
    if (ctx.json) {
      json e = {{"offset", records.offset()}};
      if (edit.has_log_number()) e["log_number"] = edit.log_number();
      if (edit.has_next_file_number()) {
        e["next_file_number"] = edit.next_file_number();
      }
      if (edit.has_last_sequence()) e["last_sequence"] = edit.last_sequence();
      json logs = json::array();
      for (const auto& [number, synced] : edit.logs()) {
        logs.push_back({{"number", number}, {"synced_bytes", synced}});
      }
      json added = json::array();
      for (const auto& [level, f] : edit.new_files()) {
        added.push_back({{"level", level},
                         {"file_number", f->number},
                         {"file_bytes", f->file_size},
                         {"entries", f->num_entries},
                         {"smallest", BoundJson(ctx, f->smallest)},
                         {"largest", BoundJson(ctx, f->largest)}});
      }
      json removed = json::array();
      for (const auto& [level, number] : edit.deleted_files()) {
        removed.push_back({{"level", level}, {"file_number", number}});
      }
      e["logs"] = std::move(logs);
      e["added"] = std::move(added);
      e["removed"] = std::move(removed);
      if (!edit.range_tombstones().empty() ||
          !edit.removed_range_tombstones().empty()) {
        json ranges = json::array();
        for (const RangeTombstone& t : edit.range_tombstones()) {
          ranges.push_back({{"sequence", t.sequence},
                            {"begin", ctx.Bytes(t.begin)},
                            {"end", ctx.Bytes(t.end)}});
        }
        e["range_tombstones"] = std::move(ranges);
        e["retired_range_tombstones"] = edit.removed_range_tombstones();
      }
      edits.push_back(std::move(e));
      continue;
    }
    out << "@" << records.offset();
    if (edit.has_log_number()) out << "  log " << edit.log_number();
    if (edit.has_next_file_number()) {
      out << "  next file " << edit.next_file_number();
    }
    if (edit.has_last_sequence()) out << "  last seq " << edit.last_sequence();
    out << "\n";
    for (const auto& [number, synced] : edit.logs()) {
      out << "  log " << FileNumber(number) << ".log  synced "
          << HumanBytes(synced) << "\n";
    }
    for (const auto& [level, f] : edit.new_files()) {
      out << "  + " << LevelName(level) << " " << FileNumber(f->number) << "  "
          << HumanBytes(f->file_size) << "  "
          << Plural(f->num_entries, "entry", "entries") << "  "
          << BoundText(ctx, f->smallest) << " .. " << BoundText(ctx, f->largest)
          << "\n";
    }
    for (const auto& [level, number] : edit.deleted_files()) {
      out << "  - " << LevelName(level) << " " << FileNumber(number) << "\n";
    }
    for (const RangeTombstone& t : edit.range_tombstones()) {
      out << "  + range [" << ctx.Bytes(t.begin) << ", " << ctx.Bytes(t.end)
          << ") @ " << t.sequence << "\n";
    }
    for (SequenceNumber sequence : edit.removed_range_tombstones()) {
      out << "  - range @ " << sequence << "\n";
    }
  }

  std::map<int, uint64_t> per_level;
  for (const auto& [number, level] : live) per_level[level]++;
  if (ctx.json) {
    json levels = json::object();
    for (const auto& [level, count] : per_level) {
      levels[LevelName(level)] = count;
    }
    json j = {{"file", manifest},
              {"edits", std::move(edits)},
              {"live_segments", std::move(levels)},
              {"log_number", log_number},
              {"next_file_number", next_file},
              {"last_sequence", last_sequence},
              {"torn_tail", records.TornTailJson()},
              {"problems", records.problems()}};
    out << j.dump(2) << "\n";
  } else {
    records.PrintNewProblems(out);
    const std::string torn = records.TornTailText();
    if (!torn.empty()) out << "# " << torn << "\n";
    out << "# " << Plural(n, "edit", "edits") << "; at the end: ";
    if (per_level.empty()) out << "no segments";
    for (auto it = per_level.begin(); it != per_level.end(); ++it) {
      out << (it == per_level.begin() ? "" : ", ") << LevelName(it->first)
          << " " << Plural(it->second, "segment", "segments");
    }
    out << "; log " << log_number << ", next file " << next_file
        << ", last seq " << last_sequence << "\n";
  }
  out.flush();
  return EndWithProblems(ctx, records.problems());
}

// ---- wal ----------------------------------------------------------------

namespace {

// The operations of one write batch, as JSON or as text lines.
class OpPrinter final : public WriteBatch::Handler {
 public:
  OpPrinter(const Context& ctx, json* ops, std::ostream* out)
      : ctx_(ctx), ops_(ops), out_(out) {}
  void Put(const Slice& key, const Slice& value) override {
    puts++;
    if (ops_ != nullptr) {
      ops_->push_back({{"type", "put"},
                       {"key", ctx_.Bytes(key)},
                       {"value", ctx_.Bytes(value)}});
    } else {
      *out_ << "  PUT\t" << ctx_.Bytes(key) << "\t" << ctx_.Bytes(value)
            << "\n";
    }
  }
  void Delete(const Slice& key) override {
    deletes++;
    if (ops_ != nullptr) {
      ops_->push_back({{"type", "delete"}, {"key", ctx_.Bytes(key)}});
    } else {
      *out_ << "  DEL\t" << ctx_.Bytes(key) << "\n";
    }
  }
  void DeleteRange(const Slice& begin, const Slice& end) override {
    range_deletes++;
    if (ops_ != nullptr) {
      ops_->push_back({{"type", "delete_range"},
                       {"begin", ctx_.Bytes(begin)},
                       {"end", ctx_.Bytes(end)}});
    } else {
      *out_ << "  DELRANGE\t" << ctx_.Bytes(begin) << "\t" << ctx_.Bytes(end)
            << "\n";
    }
  }
  uint64_t puts = 0, deletes = 0, range_deletes = 0;

 private:
  const Context& ctx_;
  json* const ops_;  // null: text on *out_
  std::ostream* const out_;
};

// The logs `path` stands for: every log of a database directory, oldest
// first, or the file itself.
int ResolveLogs(const Context& ctx, const std::string& path,
                std::vector<std::string>* logs) {
  Env* env = Env::Default();
  if (!env->FileExists(path)) {
    return Fail(*ctx.err, kExitNotADatabase,
                path + ": no such file or directory");
  }
  if (!env->IsDirectory(path)) {
    logs->push_back(path);
    return kExitOk;
  }
  if (!env->FileExists(CurrentFileName(path))) {
    return Fail(*ctx.err, kExitNotADatabase,
                path + ": is not a bloomkv database (no CURRENT)");
  }
  std::vector<std::string> children;
  Status s = env->GetChildren(path, &children);
  if (!s.ok()) return FailWith(*ctx.err, s);
  std::vector<std::pair<uint64_t, std::string>> numbered;
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == FileType::kLogFile) {
      numbered.emplace_back(number, path + "/" + name);
    }
  }
  std::sort(numbered.begin(), numbered.end());
  for (auto& [number, file] : numbered) logs->push_back(std::move(file));
  return kExitOk;
}

}  // namespace

int RunWal(const Context& ctx, const std::string& path) {
  std::vector<std::string> logs;
  int code = ResolveLogs(ctx, path, &logs);
  if (code != kExitOk) return code;
  std::ostream& out = *ctx.out;
  std::vector<std::string> problems;
  json files = json::array();
  for (const std::string& log : logs) {
    LogFileRecords records(log);
    if (!records.ok()) return FailWith(*ctx.err, records.status());
    if (!ctx.json) out << "# " << log << "\n";
    json batches = json::array();
    uint64_t n = 0, puts = 0, deletes = 0, range_deletes = 0;
    Slice record;
    WriteBatch batch;
    while (records.Next(&record)) {
      if (!ctx.json) records.PrintNewProblems(out);
      Status s = WriteBatchInternal::SetContents(&batch, record);
      json ops = json::array();
      OpPrinter printer(ctx, ctx.json ? &ops : nullptr, &out);
      if (s.ok()) {
        const SequenceNumber seq = WriteBatchInternal::Sequence(&batch);
        const uint32_t count = WriteBatchInternal::Count(&batch);
        if (!ctx.json) {
          out << "@" << records.offset() << "  seq " << seq << "  "
              << Plural(count, "op", "ops") << "\n";
        }
        s = batch.Iterate(&printer);
        if (ctx.json) {
          batches.push_back({{"offset", records.offset()},
                             {"sequence", seq},
                             {"count", count},
                             {"ops", std::move(ops)}});
        }
      }
      puts += printer.puts;
      deletes += printer.deletes;
      range_deletes += printer.range_deletes;
      if (!s.ok()) {
        records.AddProblem(log + ": bad write batch at offset " +
                           std::to_string(records.offset()) + ": " +
                           s.message());
        if (!ctx.json) records.PrintNewProblems(out);
        continue;
      }
      n++;
    }
    if (ctx.json) {
      files.push_back({{"file", log},
                       {"batches", std::move(batches)},
                       {"puts", puts},
                       {"deletes", deletes},
                       {"range_deletes", range_deletes},
                       {"torn_tail", records.TornTailJson()},
                       {"problems", records.problems()}});
    } else {
      records.PrintNewProblems(out);
      const std::string torn = records.TornTailText();
      if (!torn.empty()) out << "# " << torn << "\n";
      out << "# " << Plural(n, "write batch", "write batches") << ", "
          << Plural(puts, "put", "puts") << ", "
          << Plural(deletes, "delete", "deletes");
      if (range_deletes > 0) {
        out << ", " << Plural(range_deletes, "range delete", "range deletes");
      }
      out << "\n";
    }
    problems.insert(problems.end(), records.problems().begin(),
                    records.problems().end());
  }
  if (ctx.json) {
    out << json({{"logs", std::move(files)}}).dump(2) << "\n";
  } else if (logs.empty()) {
    out << "# no logs in " << path << "\n";
  }
  out.flush();
  return EndWithProblems(ctx, problems);
}

// ---- idump --------------------------------------------------------------

int RunIdump(const Context& ctx, const std::string& path,
             const ScanRange& range) {
  std::unique_ptr<DB> db;
  int code = OpenDbReadOnly(*ctx.err, path, &db);
  if (code != kExitOk) return code;
  if (range.from.has_value() && range.to.has_value() &&
      *range.from > *range.to) {
    return Fail(*ctx.err, kExitUsage, "--from is after --to");
  }
  const Slice from = range.from.has_value() ? Slice(*range.from) : Slice();
  const Slice to = range.to.has_value() ? Slice(*range.to) : Slice();
  std::ostream& out = *ctx.out;
  // Streamed version by version, as scan is.
  if (ctx.json) out << "{\n  \"versions\": [";
  uint64_t n = 0, deletions = 0;
  Status s = ForEachKeyVersion(
      db.get(), range.from.has_value() ? &from : nullptr,
      range.to.has_value() ? &to : nullptr, [&](const KeyVersion& v) {
        if (range.limit != 0 && n >= range.limit) return false;
        if (v.deleted) deletions++;
        if (ctx.json) {
          json e = {{"key", ctx.Bytes(v.user_key)},
                    {"sequence", v.sequence},
                    {"type", v.deleted ? "delete" : "put"}};
          if (!v.deleted) e["value"] = ctx.Bytes(v.value);
          out << (n == 0 ? "\n    " : ",\n    ") << e.dump();
        } else {
          out << ctx.Bytes(v.user_key) << "\t@" << v.sequence << "\t"
              << (v.deleted ? "DEL\t(tombstone)" : "PUT\t" + ctx.Bytes(v.value))
              << "\n";
        }
        n++;
        return true;
      });
  if (ctx.json) {
    out << (n == 0 ? "]" : "\n  ]") << ",\n  \"count\": " << n
        << ",\n  \"deletions\": " << deletions
        << ",\n  \"complete\": " << (s.ok() ? "true" : "false") << "\n}\n";
  } else {
    out << "# " << Plural(n, "version", "versions") << " ("
        << Plural(deletions, "deletion", "deletions") << ")\n";
  }
  out.flush();
  if (s.IsNotFound()) return Fail(*ctx.err, kExitCorruption, s.ToString());
  if (!s.ok()) return FailWith(*ctx.err, s);
  return kExitOk;
}

}  // namespace bloomkv::kvtool
