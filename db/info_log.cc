// The rotated LOG file and the info log's multi-part lines; see info_log.h.
#include "db/info_log.h"

#include "db/filter_allocation.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "bloomkv/compaction_filter.h"
#include "db/compaction.h"
#include "db/filter_allocation.h"
#include "db/version_edit.h"
#include "db/version_set.h"
#include "db/write_delay.h"
#include "table/format.h"
#include "util/logging.h"

namespace bloomkv {
namespace {

// Bytes a line adds to LOG besides its message: time, thread id, spaces and
// newline. An estimate (thread ids vary in width); rotation needs no more.
constexpr uint64_t kLineOverhead = 38;

std::string SegmentNumbers(const Version::FileList& files) {
  std::string r;
  for (const auto& f : files) {
    if (!r.empty()) r += ' ';
    r += std::to_string(f->number);
  }
  return r;
}

}  // namespace

InfoLogFile::InfoLogFile(Env* env, std::string dbname, uint64_t max_file_size)
    : env_(env), dbname_(std::move(dbname)), max_file_size_(max_file_size) {}

InfoLogFile::~InfoLogFile() = default;

void InfoLogFile::Start() {
  MutexLock guard(&mu_);
  RotateLocked();
}

void InfoLogFile::Logv(const char* format, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  const int message_size = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  MutexLock guard(&mu_);
  if (file_ == nullptr) return;
  file_->Logv(format, ap);
  file_size_ +=
      kLineOverhead + static_cast<uint64_t>(std::max(message_size, 0));
  if (max_file_size_ > 0 && file_size_ >= max_file_size_) RotateLocked();
}

void InfoLogFile::RotateLocked() {
  file_.reset();
  // Missing old logs make some renames fail with NotFound: nothing to move.
  for (int generation = kOldInfoLogs - 1; generation > 0; generation--) {
    env_->RenameFile(OldInfoLogFileName(dbname_, generation - 1),
                     OldInfoLogFileName(dbname_, generation))
        .PermitUncheckedError();
  }
  env_->RenameFile(InfoLogFileName(dbname_), OldInfoLogFileName(dbname_))
      .PermitUncheckedError();
  file_size_ = 0;
  if (!env_->NewLogger(InfoLogFileName(dbname_), &file_).ok()) file_.reset();
}

void LogOpening(Logger* log, const std::string& dbname, const Options& options,
                bool read_only) {
  if (log == nullptr) return;
  Log(log, "Opening database %s%s", dbname.c_str(),
      read_only ? " read-only" : "");
  auto compression_name = CompressionTypeName;
  // Levels 0.. as listed, then "..." for the deeper ones, which use
  // `compression`.
  std::string per_level;
  for (CompressionType c : options.compression_per_level) {
    per_level += compression_name(c);
    per_level += ',';
  }
  per_level += "...";
  const auto deep = DeepFilterPolicy(options);  // what null stands for
  Log(log,
      "Options: create_if_missing=%d error_if_exists=%d paranoid_checks=%d "
      "write_buffer_size=%zu block_size=%zu compression=%s "
      "compression_per_level=%s filter_policy=%s deep_filter_policy=%s "
      "deep_filter_level=%d filter_allocation=%s "
      "block_cache_capacity=%zu filter_and_index_memory_limit=%" PRIu64
      " level0_compaction_trigger=%d read_triggered_compaction=%d "
      "level0_slowdown_writes_trigger=%d level0_stop_writes_trigger=%d "
      "max_bytes_for_level_base=%" PRIu64
      " max_bytes_for_level_multiplier=%d"
      " level_compaction_dynamic_level_bytes=%d target_file_size=%" PRIu64
      " compaction_filter=%s max_log_file_size=%" PRIu64,
      options.create_if_missing, options.error_if_exists,
      options.paranoid_checks, options.write_buffer_size, options.block_size,
      compression_name(options.compression), per_level.c_str(),
      options.filter_policy != nullptr ? options.filter_policy->Name() : "none",
      deep != nullptr ? deep->Name() : "none (filter_policy)",
      options.deep_filter_level,
      options.filter_allocation == FilterAllocation::kMinimizeFalsePositives
          ? "minimize-false-positives"
          : "uniform",
      options.block_cache_capacity, options.filter_and_index_memory_limit,
      options.level0_compaction_trigger, options.read_triggered_compaction,
      options.level0_slowdown_writes_trigger,
      options.level0_stop_writes_trigger, options.max_bytes_for_level_base,
      options.max_bytes_for_level_multiplier,
      options.level_compaction_dynamic_level_bytes, options.target_file_size,
      options.compaction_filter != nullptr ? options.compaction_filter->Name()
                                           : "none",
      options.max_log_file_size);
}

std::string FilesPerLevel(const Version& v) {
  std::string r = "[";
  for (int level = 0; level < kNumLevels; level++) {
    if (level > 0) r += ' ';
    r += std::to_string(v.NumFiles(level));
  }
  return r + "]";
}

void LogCompaction(Logger* log, const Compaction& c, const VersionEdit& edit,
                   uint64_t micros, const Status& status) {
  if (log == nullptr) return;
  uint64_t in_bytes[2] = {0, 0};
  uint64_t in_entries = 0;
  for (int which = 0; which < 2; which++) {
    for (const auto& f : c.inputs(which)) {
      in_bytes[which] += f->file_size;
      in_entries += f->num_entries;
    }
  }
  const std::string inputs = "L" + std::to_string(c.level()) + " [" +
                             SegmentNumbers(c.inputs(0)) + "] + L" +
                             std::to_string(c.output_level()) + " [" +
                             SegmentNumbers(c.inputs(1)) + "]";
  if (!status.ok()) {
    Log(log, "Compaction of %s failed after %" PRIu64 " us: %s", inputs.c_str(),
        micros, status.ToString().c_str());
    return;
  }
  Version::FileList outputs;
  uint64_t out_bytes = 0, out_entries = 0;
  for (const auto& [level, f] : edit.new_files()) {
    outputs.push_back(f);
    out_bytes += f->file_size;
    out_entries += f->num_entries;
  }
  // Bytes written per byte moved down from the upper level: 1 when nothing
  // below overlapped, more the more of the lower level had to be rewritten.
  const double write_amp =
      in_bytes[0] > 0 ? static_cast<double>(out_bytes) / in_bytes[0] : 0.0;
  Log(log,
      "Compacted %s: %zu+%zu segments, %" PRIu64 "+%" PRIu64 " bytes, %" PRIu64
      " entries -> L%d [%s]: %zu segments, %" PRIu64 " bytes, %" PRIu64
      " entries in %" PRIu64 " us; write amplification %.2f, %" PRIu64
      " entries dropped",
      inputs.c_str(), c.inputs(0).size(), c.inputs(1).size(), in_bytes[0],
      in_bytes[1], in_entries, c.output_level(),
      SegmentNumbers(outputs).c_str(), outputs.size(), out_bytes, out_entries,
      micros, write_amp, in_entries - out_entries);
}

void LogLevel0Change(Logger* log, const Options& options, int before,
                     int after) {
  const int slowdown = options.level0_slowdown_writes_trigger;
  const int stop = options.level0_stop_writes_trigger;
  if (before < slowdown && after >= slowdown) {
    Log(log,
        "Write slowdown begins: level 0 has %d segments (slowdown trigger "
        "%d), writes are paced to %.2f MiB/s, halved for each %d more",
        after, slowdown, options.delayed_write_rate / 1048576.0,
        SegmentsPerRateHalving(slowdown, stop));
  }
  if (before < stop && after >= stop) {
    Log(log,
        "Write stop begins: level 0 has %d segments (stop trigger %d), "
        "writes wait for compaction",
        after, stop);
  }
  if (before >= stop && after < stop) {
    Log(log, "Write stop ends: level 0 has %d segments (stop trigger %d)",
        after, stop);
  }
  if (before >= slowdown && after < slowdown) {
    Log(log,
        "Write slowdown ends: level 0 has %d segments (slowdown trigger %d)",
        after, slowdown);
  }
}

const char* ObsoleteFileReason(FileType type) {
  switch (type) {
    case FileType::kLogFile:
      return "write-ahead log whose records are all in segments";
    case FileType::kManifestFile:
      return "manifest replaced by a newer one";
    case FileType::kSegmentFile:
      return "segment in no live version (compacted, or left unfinished)";
    case FileType::kTempFile:
      return "temporary file left unfinished";
    default:
      return "obsolete";
  }
}

}  // namespace bloomkv
