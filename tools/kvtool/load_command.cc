// kvtool load: bulk-loads tab-separated key/value lines in write batches,
// with a progress bar for people watching a terminal.
//
// Input format, one record per line: the key is everything before the first
// tab, the value everything after it, each written as `scan` prints it
// (escaped, or hex with --hex), or taken as raw bytes with --raw (then the
// value may contain more tabs). A trailing carriage return is dropped (so
// CRLF files load as expected) and empty lines are skipped. A line without
// a tab, with a bad escape or hex digit, an empty key or a key or value over
// the database limits is malformed: loading stops there, after writing
// every record before it.
//
// With --bulk (RunBulkLoad) the lines are sorted instead (ExternalSorter,
// runs spilled to a temporary directory beside the database), written as
// segments by SegmentWriter into that directory, and moved into the
// database by one IngestSegments call: no log, no memtable, no compaction.
// It is all or nothing: a malformed line or any failure loads no record,
// and the temporary directory is removed whatever happens (an interrupted
// process leaves it behind: "<db>.load-XXXXXX", safe to delete).
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/segment_writer.h"
#include "bloomkv/write_batch.h"
#include "tools/kvtool/bulk_load.h"
#include "tools/kvtool/commands.h"
#include "tools/kvtool/db_access.h"
#include "tools/kvtool/exit_codes.h"
#include "tools/kvtool/external_sort.h"
#include "tools/kvtool/format.h"

namespace bloomkv::kvtool {
namespace {

// A batch is written once it holds this many bytes even if it has fewer
// records than asked for, so that huge values do not build huge batches.
constexpr size_t kMaxBatchBytes = 4 << 20;
// The progress bar is redrawn at most this often.
constexpr auto kProgressInterval = std::chrono::milliseconds(200);
constexpr int kBarWidth = 24;

using Clock = std::chrono::steady_clock;

// "1:05:09" or "4:07".
std::string Duration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e7) return "?";
  const uint64_t s = static_cast<uint64_t>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof(buf), "%llu:%02llu:%02llu",
                  static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>(s / 60 % 60),
                  static_cast<unsigned long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%llu:%02llu",
                  static_cast<unsigned long long>(s / 60),
                  static_cast<unsigned long long>(s % 60));
  }
  return buf;
}

class Progress {
 public:
  // total_bytes 0: unknown (stdin, a pipe), so no percentage and no ETA.
  Progress(std::ostream* err, bool enabled, uint64_t total_bytes)
      : err_(err), enabled_(enabled), total_bytes_(total_bytes) {}

  void Update(uint64_t records, uint64_t bytes, bool final) {
    if (!enabled_) return;
    const Clock::time_point now = Clock::now();
    if (!final && now - last_draw_ < kProgressInterval) return;
    last_draw_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? records / elapsed : 0;
    std::string line = "\r";
    if (total_bytes_ > 0) {
      const double done =
          std::min(1.0, static_cast<double>(bytes) / total_bytes_);
      const int filled = static_cast<int>(done * kBarWidth);
      // Appended piece by piece: one long chain of operator+ trips a false
      // -Wrestrict in GCC 12 at -O3.
      line += '[';
      line.append(static_cast<size_t>(filled), '#');
      line.append(static_cast<size_t>(kBarWidth - filled), '-');
      line += "] ";
      line += Fixed(done * 100, 0);
      line += "%  ";
      const double byte_rate = elapsed > 0 ? bytes / elapsed : 0;
      line += "ETA " +
              (byte_rate > 0
                   ? Duration((total_bytes_ - std::min(bytes, total_bytes_)) /
                              byte_rate)
                   : std::string("?")) +
              "  ";
    }
    line += std::to_string(records) + " records, " + HumanBytes(bytes) + ", " +
            Fixed(rate, 0) + " records/s   ";
    *err_ << line;
    if (final) *err_ << "\n";
    err_->flush();
  }

 private:
  std::ostream* const err_;
  const bool enabled_;
  const uint64_t total_bytes_;
  const Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
};

// The records of "key<TAB>value" lines, decoded.
class LineRecords {
 public:
  LineRecords(std::istream* in, ByteEncoding encoding)
      : in_(in), encoding_(encoding) {}

  // Moves to the next record. False at the end of the input, on a read
  // error (bad()) or on a malformed line (problem() says why).
  bool Next() {
    while (std::getline(*in_, line_)) {
      line_number_++;
      bytes_ += line_.size() + 1;
      if (!line_.empty() && line_.back() == '\r') line_.pop_back();
      if (line_.empty()) continue;
      problem_ = Parse();
      return problem_.empty();
    }
    return false;
  }

  const std::string& key() const { return key_; }
  const std::string& value() const { return value_; }
  const std::string& problem() const { return problem_; }
  bool bad() const { return in_->bad(); }
  uint64_t line_number() const { return line_number_; }
  uint64_t bytes() const { return bytes_; }  // read so far

 private:
  // Why line_ is malformed, or "" when it is a good record.
  std::string Parse() {
    const size_t tab = line_.find('\t');
    if (tab == std::string::npos) return "no tab between key and value";
    const Slice key(line_.data(), tab);
    const Slice value(line_.data() + tab + 1, line_.size() - tab - 1);
    std::string why = Decode(key, encoding_, &key_);
    if (!why.empty()) return "key: " + why;
    why = Decode(value, encoding_, &value_);
    if (!why.empty()) return "value: " + why;
    if (key_.empty()) return "empty key";
    if (key_.size() > kMaxKeySize) return "key longer than the 64 KiB limit";
    if (value_.size() > kMaxValueSize) {
      return "value longer than the 32 MiB limit";
    }
    return "";
  }

  std::istream* const in_;
  const ByteEncoding encoding_;
  std::string line_;
  std::string key_;
  std::string value_;
  std::string problem_;
  uint64_t line_number_ = 0;
  uint64_t bytes_ = 0;
};

// Opens `input` ("-": stdin, left in *in) for reading; *total_bytes is its
// size for a regular file, else 0.
int OpenInput(const Context& ctx, const std::string& input, std::ifstream* file,
              std::istream** in, uint64_t* total_bytes) {
  if (input == "-") return kExitOk;
  struct stat st;
  if (::stat(input.c_str(), &st) != 0) {
    return Fail(*ctx.err, kExitNotADatabase, input + ": no such file");
  }
  if (S_ISDIR(st.st_mode)) {
    return Fail(*ctx.err, kExitUsage, input + ": is a directory");
  }
  if (S_ISREG(st.st_mode)) *total_bytes = static_cast<uint64_t>(st.st_size);
  file->open(input, std::ios::binary);
  if (!*file) return Fail(*ctx.err, kExitIOError, input + ": cannot open");
  *in = file;
  return kExitOk;
}

// A new directory beside the database (same filesystem, so the segments
// written there can be hard-linked in), removed with everything in it when
// this object goes.
class SiblingTempDir {
 public:
  SiblingTempDir() = default;
  SiblingTempDir(const SiblingTempDir&) = delete;
  SiblingTempDir& operator=(const SiblingTempDir&) = delete;
  ~SiblingTempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  Status Create(std::string db) {
    while (db.size() > 1 && db.back() == '/') db.pop_back();
    std::string pattern = db + ".load-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      return Status::IOError(
          pattern, std::string("cannot create: ") + std::strerror(errno));
    }
    path_ = pattern;
    return Status::OK();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes the sorter's records into segments of about target_file_size in
// dir; their paths go to *segments.
Status WriteSegments(const Options& options, const std::string& dir,
                     ExternalSorter* sorter, std::vector<std::string>* segments,
                     uint64_t* entries) {
  std::unique_ptr<SegmentWriter> writer;
  auto finish = [&]() -> Status {
    SegmentFileInfo info;
    Status s = writer->Finish(&info);
    writer.reset();
    if (s.ok()) segments->push_back(info.file_path);
    return s;
  };
  Status s;
  while (sorter->Valid()) {
    if (writer == nullptr) {
      char name[32];
      std::snprintf(name, sizeof(name), "/%06zu.seg", segments->size() + 1);
      s = SegmentWriter::Open(options, dir + name, &writer);
      if (!s.ok()) return s;
    }
    s = writer->Put(sorter->key(), sorter->value());
    if (!s.ok()) return s;
    ++*entries;
    if (writer->FileSize() >= options.target_file_size) {
      s = finish();
      if (!s.ok()) return s;
    }
    s = sorter->Next();
    if (!s.ok()) return s;
  }
  s = sorter->status();
  if (s.ok() && writer != nullptr) s = finish();
  return s;
}

}  // namespace

int RunLoad(const Context& ctx, const std::string& path,
            const std::string& input, const LoadOptions& options) {
  std::istream* in = &std::cin;
  std::ifstream file;
  uint64_t total_bytes = 0;
  const std::string input_name = input == "-" ? "<stdin>" : input;
  int open_code = OpenInput(ctx, input, &file, &in, &total_bytes);
  if (open_code != kExitOk) return open_code;

  std::unique_ptr<DB> db;
  int code = OpenDbForWrite(*ctx.err, path, options.create, &db);
  if (code != kExitOk) return code;

  Progress progress(ctx.err, options.progress, total_bytes);
  WriteBatch batch;
  uint64_t written = 0;  // records in batches already written
  // The last batch is written with sync, so that everything loaded is
  // durable when the tool exits; earlier ones ride on it.
  auto write_batch = [&](bool sync) -> Status {
    if (batch.Count() == 0) return Status::OK();
    WriteOptions wo;
    wo.sync = sync;
    Status s = db->Write(wo, &batch);
    if (s.ok()) written += batch.Count();
    batch.Clear();
    return s;
  };

  LineRecords records(in, options.encoding);
  while (records.Next()) {
    // Write a full batch only now that another record follows it, so that
    // the final batch (written with sync) is never empty.
    if (batch.Count() >= options.batch_records ||
        batch.ApproximateSize() >= kMaxBatchBytes) {
      Status s = write_batch(/*sync=*/false);
      if (!s.ok()) return FailWith(*ctx.err, s);
    }
    batch.Put(records.key(), records.value());
    progress.Update(written + batch.Count(), records.bytes(), /*final=*/false);
  }
  if (!records.problem().empty()) {
    Status s = write_batch(/*sync=*/true);
    progress.Update(written, records.bytes(), /*final=*/true);
    if (!s.ok()) return FailWith(*ctx.err, s);
    return Fail(*ctx.err, kExitUsage,
                input_name + ":" + std::to_string(records.line_number()) +
                    ": malformed line (" + records.problem() +
                    "); stopped there, " + std::to_string(written) +
                    " records loaded before it");
  }
  if (records.bad()) {
    Status s = write_batch(/*sync=*/true);
    s.PermitUncheckedError();
    return Fail(*ctx.err, kExitIOError,
                input_name + ": read error after line " +
                    std::to_string(records.line_number()) + "; " +
                    std::to_string(written) + " records loaded");
  }
  Status s = write_batch(/*sync=*/true);
  progress.Update(written, records.bytes(), /*final=*/true);
  if (!s.ok()) return FailWith(*ctx.err, s);
  *ctx.out << "loaded " << written << " records from " << input_name << " into "
           << path << "\n";
  return kExitOk;
}

int RunBulkLoad(const Context& ctx, const std::string& path,
                const std::string& input, const BulkLoadOptions& options) {
  const Clock::time_point start = Clock::now();
  std::istream* in = &std::cin;
  std::ifstream file;
  uint64_t total_bytes = 0;
  const std::string input_name = input == "-" ? "<stdin>" : input;
  int code = OpenInput(ctx, input, &file, &in, &total_bytes);
  if (code != kExitOk) return code;

  // First, so that a locked or missing database fails before any work.
  std::unique_ptr<DB> db;
  code = OpenDbForWrite(*ctx.err, path, options.create, &db);
  if (code != kExitOk) return code;
  SiblingTempDir temp;
  Status s = temp.Create(path);
  if (!s.ok()) return FailWith(*ctx.err, s);

  ExternalSorter sorter(temp.path(), options.memory_mb << 20);
  Progress progress(ctx.err, options.progress, total_bytes);
  LineRecords records(in, options.encoding);
  while (records.Next()) {
    s = sorter.Add(records.key(), records.value());
    if (!s.ok()) return FailWith(*ctx.err, s);
    progress.Update(sorter.records_added(), records.bytes(), /*final=*/false);
  }
  progress.Update(sorter.records_added(), records.bytes(), /*final=*/true);
  if (!records.problem().empty()) {
    return Fail(*ctx.err, kExitUsage,
                input_name + ":" + std::to_string(records.line_number()) +
                    ": malformed line (" + records.problem() +
                    "); nothing loaded (--bulk loads all or nothing)");
  }
  if (records.bad()) {
    return Fail(*ctx.err, kExitIOError,
                input_name + ": read error after line " +
                    std::to_string(records.line_number()) + "; nothing loaded");
  }

  // The options OpenDbForWrite opens the database with: the segments get
  // its block size, compression and filter.
  const Options db_options;
  std::vector<std::string> segments;
  uint64_t entries = 0;
  s = sorter.Finish();
  if (s.ok()) {
    s = WriteSegments(db_options, temp.path(), &sorter, &segments, &entries);
  }
  if (s.ok()) {
    IngestOptions io;
    io.move_files = true;  // they are ours, in the temporary directory
    s = db->IngestSegments(segments, io);
  }
  if (!s.ok()) return FailWith(*ctx.err, s);
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  *ctx.out << "bulk-loaded " << entries << " records from " << input_name
           << " into " << path << ": " << segments.size() << " segments, "
           << sorter.records_added() - entries
           << " duplicate lines dropped (the last of each key kept), "
           << sorter.runs_spilled() << " sorted runs spilled, "
           << Fixed(seconds, 1) << " s\n";
  return kExitOk;
}

}  // namespace bloomkv::kvtool
