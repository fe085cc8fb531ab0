// DBImpl, open, recovery and close: DB::Open and DB::OpenForReadOnly, the
// checks Open makes before it writes anything (manifest, segments, logs),
// log replay into level-0 segments, and the destructor. The write path,
// background work, reads, properties, obsolete files and compaction are in
// the other db_impl_*.cc files. See db_impl.h for the concurrency design.
#include "db/db_impl.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "db/filename.h"
#include "db/filter_allocation.h"
#include "db/log_reader.h"
#include "db/write_batch_internal.h"
#include "util/file_limit.h"
#include "util/logging.h"

namespace bloomkv {

Snapshot::~Snapshot() = default;

DB::~DB() = default;

// MemTable is reference-counted by hand (its iterators hold references
// too); a shared_ptr owns one of those references.
std::shared_ptr<MemTable> NewMemTable() {
  auto* mem = new MemTable;
  mem->Ref();
  return std::shared_ptr<MemTable>(mem, [](MemTable* m) { m->Unref(); });
}

namespace {

Status ValidateOptions(const Options& o) {
  if (o.write_buffer_size < (64 << 10) || o.write_buffer_size > (1u << 30)) {
    return Status::InvalidArgument(
        "write_buffer_size must be in [64 KiB, 1 GiB]");
  }
  if (o.block_size < 1024 || o.block_size > (4u << 20)) {
    return Status::InvalidArgument("block_size must be in [1 KiB, 4 MiB]");
  }
  auto known = [](CompressionType c) {
    return c == CompressionType::kNone || c == CompressionType::kLZ4 ||
           c == CompressionType::kZSTD || c == CompressionType::kLZ4Values;
  };
  if (!known(o.compression)) {
    return Status::InvalidArgument("unknown compression type");
  }
  if (o.compression_per_level.size() > static_cast<size_t>(kNumLevels)) {
    return Status::InvalidArgument(
        "compression_per_level has more entries than there are levels (7)");
  }
  for (CompressionType c : o.compression_per_level) {
    if (!known(c)) {
      return Status::InvalidArgument(
          "unknown compression type in compression_per_level");
    }
  }
  if (o.level0_compaction_trigger < 1 ||
      o.level0_slowdown_writes_trigger < o.level0_compaction_trigger ||
      o.level0_stop_writes_trigger < o.level0_slowdown_writes_trigger ||
      o.level0_stop_writes_trigger > 1000) {
    return Status::InvalidArgument(
        "level-0 triggers must satisfy 1 <= compaction <= slowdown <= stop "
        "<= 1000; got compaction " +
        std::to_string(o.level0_compaction_trigger) + ", slowdown " +
        std::to_string(o.level0_slowdown_writes_trigger) + ", stop " +
        std::to_string(o.level0_stop_writes_trigger));
  }
  if (o.max_bytes_for_level_base != 0 &&
      (o.max_bytes_for_level_base < (64 << 10) ||
       o.max_bytes_for_level_base > (uint64_t{1} << 40))) {
    return Status::InvalidArgument(
        "max_bytes_for_level_base must be 0 or in [64 KiB, 1 TiB]");
  }
  if (o.max_bytes_for_level_multiplier < 2 ||
      o.max_bytes_for_level_multiplier > 100) {
    return Status::InvalidArgument(
        "max_bytes_for_level_multiplier must be in [2, 100]");
  }
  if (o.delayed_write_rate < (16 << 10) || o.delayed_write_rate > (1 << 30)) {
    return Status::InvalidArgument(
        "delayed_write_rate must be in [16 KiB/s, 1 GiB/s]");
  }
  if (o.max_background_compactions < 1 || o.max_background_compactions > 64) {
    return Status::InvalidArgument(
        "max_background_compactions must be in [1, 64]");
  }
  if (o.compaction_readahead_size != 0 &&
      (o.compaction_readahead_size < (4 << 10) ||
       o.compaction_readahead_size > (64 << 20))) {
    return Status::InvalidArgument(
        "compaction_readahead_size must be 0 or in [4 KiB, 64 MiB]");
  }
  if (o.target_file_size < (16 << 10) ||
      o.target_file_size > (uint64_t{4} << 30)) {
    return Status::InvalidArgument(
        "target_file_size must be in [16 KiB, 4 GiB]");
  }
  if (o.answer_cache_capacity != 0 &&
      (o.answer_cache_capacity < 2 * AnswerCache::kSlotBytes ||
       o.answer_cache_capacity > (size_t{1} << 40))) {
    return Status::InvalidArgument(
        "answer_cache_capacity must be 0 or in [512 bytes, 1 TiB]");
  }
  if (o.max_open_files < kMinMaxOpenFiles && o.max_open_files != -1) {
    return Status::InvalidArgument("max_open_files must be at least " +
                                   std::to_string(kMinMaxOpenFiles) +
                                   ", or -1 to keep every segment open");
  }
  return ValidateFilterOptions(o);
}

// How many unreadable files an error message names before it only counts.
constexpr size_t kMaxFilesNamed = 5;

// A segment the manifest lists but that cannot be opened fails Open with
// Corruption naming it. Without paranoid checks Open goes on, loudly: the
// segment stays in the version and every read that needs it fails.
Status CheckSegments(const Version& v, bool paranoid) {
  std::string names;
  size_t bad = 0;
  for (int level = 0; level < kNumLevels; level++) {
    for (const auto& f : v.files(level)) {
      if (f->open_status.ok()) continue;
      if (bad++ < kMaxFilesNamed) {
        names += (names.empty() ? "" : "; ") + f->open_status.message();
      }
    }
  }
  if (bad == 0) return Status::OK();
  if (bad > kMaxFilesNamed) {
    names += "; and " + std::to_string(bad - kMaxFilesNamed) + " more";
  }
  Status s = Status::Corruption(
      std::to_string(bad) + " segment(s) listed in the manifest cannot be read",
      names);
  if (paranoid) return s;
  std::fprintf(stderr, "bloomkv: opening with unreadable segments: %s\n",
               s.ToString().c_str());
  return Status::OK();
}

// The logs recovery must replay, oldest first: every log on disk numbered
// log_number or later. The directory is listed after the manifest was read:
// a read-only Open beside a writer must not miss a log the writer created in
// between.
//
// With paranoid checks, every log the manifest names must be there, or the
// writes in it are lost without a trace (and deletes in it undone): the log
// its log number names, which exists from the moment it is recorded until a
// later log number replaces it, and every log recorded as holding
// acknowledged writes (`recorded`: number -> bytes known synced), each with
// at least its synced bytes. Replay alone cannot tell a log deleted, or cut
// at a record boundary, from one that ended there.
Status LiveLogs(Env* env, const std::string& dbname, uint64_t log_number,
                const std::map<uint64_t, uint64_t>& recorded, bool paranoid,
                std::vector<uint64_t>* live) {
  std::vector<std::string> children;
  Status s = env->GetChildren(dbname, &children);
  if (!s.ok()) return s;
  for (const auto& name : children) {
    uint64_t n;
    FileType type;
    if (ParseFileName(name, &n, &type) && type == FileType::kLogFile &&
        n >= log_number) {
      live->push_back(n);
    }
  }
  std::sort(live->begin(), live->end());
  if (!paranoid) return Status::OK();
  // Log number 0: no log was ever recorded (a new database).
  if (log_number != 0 && (live->empty() || live->front() != log_number)) {
    return Status::Corruption(LogFileName(dbname, log_number),
                              "is missing: the manifest needs it");
  }
  for (const auto& [number, synced_size] : recorded) {
    const std::string fname = LogFileName(dbname, number);
    if (!std::binary_search(live->begin(), live->end(), number)) {
      return Status::Corruption(
          fname,
          "is missing: the manifest records that it holds acknowledged "
          "writes");
    }
    uint64_t size = 0;
    s = env->GetFileSize(fname, &size);
    if (!s.ok()) return s;
    if (size < synced_size) {
      return Status::Corruption(fname + " at offset " + std::to_string(size),
                                "ends before the " +
                                    std::to_string(synced_size) +
                                    " bytes the manifest records as synced")
          .AtOffset(size);
    }
  }
  return Status::OK();
}

}  // namespace

DBImpl::DBImpl(const Options& options, std::string dbname, bool read_only)
    : options_(options),
      env_(options.env != nullptr ? options.env : Env::Default()),
      read_only_(read_only),
      dbname_(std::move(dbname)),
      counters_(std::make_unique<Counters>()) {
  options_.env = env_;
  if (options_.block_cache_capacity > 0) {
    block_cache_ = std::make_unique<Cache>(options_.block_cache_capacity);
  }
  if (options_.row_cache_capacity > 0) {
    row_cache_ = std::make_unique<Cache>(options_.row_cache_capacity);
  }
  if (options_.answer_cache_capacity > 0) {
    answer_cache_ =
        std::make_unique<AnswerCache>(options_.answer_cache_capacity);
  }
  table_cache_ = std::make_unique<TableCache>(
      dbname_, env_, ReaderFilterPolicy(options_), block_cache_.get(),
      options_.max_open_files == -1
          ? TableCache::kUnlimited
          : static_cast<size_t>(options_.max_open_files - kNumNonSegmentFiles),
      options_.filter_and_index_memory_limit);
  versions_ = std::make_unique<VersionSet>(
      dbname_, env_, [this](FileMetaData* f) { OpenSegment(f); });
  if (options_.info_log == nullptr && !read_only_) {
    info_log_file_ = std::make_shared<InfoLogFile>(env_, dbname_,
                                                   options_.max_log_file_size);
    options_.info_log = info_log_file_;
  }
  info_log_ = options_.info_log.get();
}

DBImpl::~DBImpl() {
  {
    MutexLock guard(&mu_);
    shutting_down_ = true;
    shutting_down_flag_ = true;
  }
  flush_cv_.SignalAll();
  bg_work_cv_.SignalAll();
  bg_done_cv_.SignalAll();  // a waiting CompactRange gives up
  // The flush thread starts only once Open has succeeded.
  const bool opened = flush_thread_.joinable();
  if (opened) flush_thread_.join();
  for (std::thread& t : compaction_threads_) t.join();
  Log(info_log_,
      "Closing database %s: %" PRIu64 " flushes (%" PRIu64 " bytes), %" PRIu64
      " compactions (%" PRIu64 " bytes read, %" PRIu64 " written), %" PRIu64
      " trivial moves, %" PRIu64 " us of write stalls",
      dbname_.c_str(), counters_->flushes.load(),
      counters_->bytes_flushed.load(), counters_->compactions.load(),
      counters_->compaction_bytes_read.load(),
      counters_->compaction_bytes_written.load(),
      counters_->trivial_moves.load(), counters_->stall_micros.load());
  if (!read_only_) RecordLogsAtClose();
  if (!read_only_ && opened) {
    // A compaction's inputs that a reader (an iterator) still held when the
    // compaction ended are deleted only by the next DeleteObsoleteFiles; the
    // readers are gone now (they end before the DB), so nothing is left
    // behind that the live segments no longer carry. RepairDB reads every
    // segment in the directory and would bring such data back. Not after a
    // failed Open: no version lists the segments then.
    MutexLock lock(&mu_);
    DeleteObsoleteFiles();
  }
  ScopedRole front(&front_writer_);  // no writer is left
  for (ClosedLog& closed : closed_logs_) {
    closed.file->Close().PermitUncheckedError();
  }
  if (log_file_ != nullptr) log_file_->Close().PermitUncheckedError();
  if (db_lock_ != nullptr) {
    env_->UnlockFile(std::move(db_lock_)).PermitUncheckedError();
  }
}

void DBImpl::RecordLogsAtClose() {
  MutexLock lock(&mu_);
  ScopedRole front(&front_writer_);  // no writer is left
  if (!bg_error_.ok() || log_ == nullptr) return;
  // Every log still needed becomes durable, and the manifest records each
  // one's whole length: the end of the newest log then cannot pass for a
  // torn write at the next Open (LiveLogs, ReplayLog), so damage to it or a
  // cut of it is Corruption, not a quiet loss of the synced writes there.
  // A failure (a full disk, a crash test's inactive filesystem) leaves the
  // logs as a crash would.
  PruneClosedLogs();  // those a flush covered need nothing
  VersionEdit edit;
  Status s;
  for (ClosedLog& closed : closed_logs_) {
    if (s.ok()) s = closed.file->Sync();
    edit.AddLog(closed.number, closed.length);
  }
  if (log_->length() > 0) {
    if (s.ok() && !log_entry_synced_) s = env_->SyncDir(dbname_);
    if (s.ok()) s = log_file_->Sync();
    edit.AddLog(log_number_, log_->length());
  }
  if (s.ok() && !edit.logs().empty()) s = versions_->LogAndApply(&edit, &mu_);
  if (!s.ok()) {
    Log(info_log_, "Close: the logs' lengths are not recorded: %s",
        s.ToString().c_str());
  }
}

Status DB::Open(const Options& options, const std::string& path,
                std::unique_ptr<DB>* db) {
  db->reset();
  Status s = ValidateOptions(options);
  if (!s.ok()) return s;
  if (path.empty()) return Status::InvalidArgument("empty database path");
  auto impl = std::make_unique<DBImpl>(options, path, /*read_only=*/false);
  s = impl->Open();
  if (!s.ok())
    Log(impl->info_log_, "ERROR: open failed: %s", s.ToString().c_str());
  if (s.ok()) *db = std::move(impl);
  return s;
}

Status DB::OpenForReadOnly(const Options& options, const std::string& path,
                           std::unique_ptr<DB>* db) {
  db->reset();
  Status s = ValidateOptions(options);
  if (!s.ok()) return s;
  if (path.empty()) return Status::InvalidArgument("empty database path");
  auto impl = std::make_unique<DBImpl>(options, path, /*read_only=*/true);
  s = impl->Open();
  if (!s.ok())
    Log(impl->info_log_, "ERROR: read-only open failed: %s",
        s.ToString().c_str());
  if (s.ok()) *db = std::move(impl);
  return s;
}

Status DBImpl::Open() {
  if (env_->FileExists(dbname_) && !env_->IsDirectory(dbname_)) {
    return Status::InvalidArgument(dbname_, "exists and is not a directory");
  }
  if (!env_->IsDirectory(dbname_)) {
    if (!options_.create_if_missing || read_only_) {
      return Status::InvalidArgument(
          dbname_, "does not exist (create_if_missing is false)");
    }
    Status s = env_->CreateDir(dbname_);
    if (!s.ok()) return s;
  }
  Status s;
  if (!read_only_) {
    s = env_->LockFile(LockFileName(dbname_), &db_lock_);
    if (s.IsBusy()) {
      return Status::Busy(dbname_, "database is in use: " + s.message());
    }
    if (!s.ok()) return Status::IOError("cannot create or lock " + s.message());
  }
  if (info_log_file_ != nullptr) info_log_file_->Start();  // lock held: ours
  LogOpening(info_log_, dbname_, options_, read_only_);
  ReserveFileDescriptors();

  std::vector<std::string> children;
  s = env_->GetChildren(dbname_, &children);
  if (!s.ok()) return s;
  std::vector<uint64_t> logs;
  bool has_data_files = false;
  for (const auto& name : children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    if (type == FileType::kLogFile) logs.push_back(number);
    if (type == FileType::kLogFile || type == FileType::kSegmentFile) {
      has_data_files = true;
    }
  }

  if (!env_->FileExists(CurrentFileName(dbname_))) {
    if (has_data_files) {
      return Status::Corruption(dbname_,
                                "holds logs or segments but no CURRENT file");
    }
    if (!options_.create_if_missing || read_only_) {
      return Status::InvalidArgument(dbname_,
                                     "is not a bloomkv database (no CURRENT)");
    }
    s = NewDB();
    if (!s.ok()) return s;
    Log(info_log_, "Created a new database");
  } else if (options_.error_if_exists) {
    return Status::InvalidArgument(dbname_, "exists (error_if_exists is true)");
  }

  MutexLock lock(&mu_);
  // Everything Open checks comes before anything it writes, so that an Open
  // that fails changes no file. A read-only Open may race with the process
  // writing the database, whose flush or compaction can delete what the
  // manifest just read names: it reads the manifest once more before
  // calling that damage.
  std::vector<uint64_t> live_logs;
  for (int attempt = 0;; attempt++) {
    live_logs.clear();
    s = versions_->Recover();
    if (s.ok()) {
      s = CheckSegments(*versions_->current(), options_.paranoid_checks);
    }
    if (s.ok()) {
      s = LiveLogs(env_, dbname_, versions_->log_number(),
                   versions_->recorded_logs(), options_.paranoid_checks,
                   &live_logs);
    }
    if (s.ok() || !read_only_ || attempt > 0) break;
  }
  if (!s.ok()) return s;
  Log(info_log_,
      "Recovered MANIFEST-%06" PRIu64 ": log number %" PRIu64
      ", last sequence %" PRIu64 ", segments per level %s",
      versions_->manifest_number(), versions_->log_number(),
      versions_->last_sequence(), FilesPerLevel(*versions_->current()).c_str());
  if (read_only_) return OpenReadOnly(live_logs);
  for (uint64_t n : logs) versions_->MarkFileNumberUsed(n);

  // Replay, in order, every log the manifest does not yet cover. The
  // segments this writes are named by no manifest until the edit below, so
  // a failed replay removes them again.
  VersionEdit edit;
  SequenceNumber max_sequence = versions_->last_sequence();
  s = ReplayLogs(live_logs, &max_sequence, &edit);
  if (!s.ok()) {
    for (const auto& [level, f] : edit.new_files()) {
      env_->RemoveFile(SegmentFileName(dbname_, f->number))
          .PermitUncheckedError();
    }
    return s;
  }
  versions_->SetLastSequence(max_sequence);
  s = versions_->WriteSnapshotManifest();
  if (!s.ok()) return s;
  Log(info_log_, "Switched to manifest MANIFEST-%06" PRIu64,
      versions_->manifest_number());

  {
    // No writer can come before Open returns: Open has the front writer's
    // role to itself.
    ScopedRole front(&front_writer_);
    s = NewLogFile();
    // The manifest edit below names the new log: its directory entry must
    // be durable first.
    if (s.ok()) s = env_->SyncDir(dbname_);
    if (!s.ok()) return s;
    log_entry_synced_ = true;
  }
  edit.SetLogNumber(log_number_);
  s = versions_->LogAndApply(&edit, &mu_);
  if (!s.ok()) return s;
  mem_ = NewMemTable();
  InstallReadView();
  DeleteObsoleteFiles();
  flush_thread_ = std::thread([this] { FlushThread(); });
  for (int i = 0; i < options_.max_background_compactions; i++) {
    compaction_threads_.emplace_back([this] { CompactionThread(); });
  }
  Log(info_log_,
      "Opened: log %06" PRIu64 ", last sequence %" PRIu64
      ", segments per level %s",
      log_number_, versions_->last_sequence(),
      FilesPerLevel(*versions_->current()).c_str());
  return Status::OK();
}

void DBImpl::ReserveFileDescriptors() const {
  // Beyond the database's own max_open_files, for the application's
  // descriptors (sockets, its own files).
  constexpr int64_t kHeadroom = 256;
  // With every segment kept open (-1), as far as the hard limit allows, up
  // to Linux's default ceiling (fs.nr_open).
  const bool unlimited = options_.max_open_files == -1;
  const int64_t wanted =
      unlimited ? int64_t{1} << 20 : options_.max_open_files + kHeadroom;
  const FileLimit limit = RaiseOpenFileLimit(wanted);
  if (limit.after > limit.before) {
    Log(info_log_,
        "Raised the open-file limit (RLIMIT_NOFILE) from %" PRId64
        " to %" PRId64 " for max_open_files %d",
        limit.before, limit.after, options_.max_open_files);
  }
  if (!unlimited && limit.after >= 0 && limit.after < wanted) {
    Log(info_log_,
        "WARNING: the open-file limit is %" PRId64 " (hard limit %" PRId64
        "), below max_open_files %d + %" PRId64
        ": opening segments may fail with \"Too many open files\"; lower "
        "max_open_files or raise the hard limit",
        limit.after, limit.hard, options_.max_open_files, kHeadroom);
  }
}

Status DBImpl::OpenReadOnly(const std::vector<uint64_t>& live_logs) {
  mem_ = NewMemTable();
  InstallReadView();
  SequenceNumber max_sequence = versions_->last_sequence();
  Status s = ReplayLogs(live_logs, &max_sequence, /*edit=*/nullptr);
  if (!s.ok()) return s;
  versions_->SetLastSequence(max_sequence);
  Log(info_log_,
      "Opened read-only: last sequence %" PRIu64 ", segments per level %s",
      max_sequence, FilesPerLevel(*versions_->current()).c_str());
  return Status::OK();
}

Status DBImpl::NewDB() {
  // An empty manifest with CURRENT pointing at it; Open() then recovers it
  // like any other database.
  VersionEdit edit;
  edit.SetLogNumber(0);
  edit.SetNextFileNumber(2);
  edit.SetLastSequence(0);
  const std::string manifest = ManifestFileName(dbname_, 1);
  Status s = WriteManifestFile(env_, manifest, edit);
  if (!s.ok()) {
    env_->RemoveFile(manifest).PermitUncheckedError();
    return s;
  }
  // On error CURRENT may already name the manifest: it stays.
  return SetCurrentFile(env_, dbname_, 1);
}

Status DBImpl::ReplayLogs(const std::vector<uint64_t>& logs,
                          SequenceNumber* max_sequence, VersionEdit* edit) {
  for (size_t i = 0; i < logs.size(); i++) {
    Status torn_end;
    Status s = ReplayLog(logs[i], max_sequence, edit, &torn_end);
    if (!s.ok()) return s;
    if (torn_end.ok() || i + 1 == logs.size()) continue;
    // A torn end is what a crash leaves in a log whose last writes were not
    // synced: the newest, or one a memtable switch closed without a sync.
    // Unless a later log holds the sync mark (PrepareSyncedWrite), every
    // write in the later logs was unsynced too: they are dropped with it,
    // so the database recovers a prefix of its writes.
    bool marked = false;
    for (size_t j = i + 1; s.ok() && !marked && j < logs.size(); j++) {
      s = LogHoldsSyncMark(logs[j], &marked);
    }
    if (!s.ok()) return s;
    if (!marked) {
      for (size_t j = i + 1; j < logs.size(); j++) {
        Log(info_log_,
            "Dropped %s: written after the torn end of %s, never synced",
            LogFileName(dbname_, logs[j]).c_str(),
            LogFileName(dbname_, logs[i]).c_str());
      }
      return Status::OK();
    }
    // The torn log was synced before a later write: its end is damage.
    if (options_.paranoid_checks) return torn_end;
    Log(info_log_, "Skipping %s", torn_end.ToString().c_str());
  }
  return Status::OK();
}

Status DBImpl::LogHoldsSyncMark(uint64_t number, bool* marked) {
  const std::string fname = LogFileName(dbname_, number);
  std::unique_ptr<SequentialFile> file;
  Status s = env_->NewSequentialFile(fname, &file);
  if (!s.ok()) return s;
  // Damage here is found and judged when the log is replayed; only a read
  // error stops the search.
  struct Reporter final : log::Reader::Reporter {
    Status status;
    void Corruption(size_t, const Status& reason) override {
      if (reason.IsIOError() && status.ok()) status = reason;
    }
  } reporter;
  log::Reader reader(file.get(), fname, &reporter, /*verify_checksums=*/true);
  Slice record;
  std::string scratch;
  WriteBatch batch;
  *marked = false;
  while (!*marked && reader.ReadRecord(&record, &scratch)) {
    *marked = WriteBatchInternal::SetContents(&batch, record).ok() &&
              WriteBatchInternal::Count(&batch) == 0;
  }
  return reporter.status;
}

Status DBImpl::ReplayLog(uint64_t number, SequenceNumber* max_sequence,
                         VersionEdit* edit, Status* torn_end) {
  const std::string fname = LogFileName(dbname_, number);
  std::unique_ptr<SequentialFile> file;
  Status s = env_->NewSequentialFile(fname, &file);
  if (!s.ok()) return s;

  // A torn last record is what a crash mid-append leaves: the reader drops
  // it without a report. Anything reported here is damage elsewhere.
  struct Reporter final : log::Reader::Reporter {
    Status status;
    bool paranoid = true;
    Logger* info_log = nullptr;
    void Corruption(size_t bytes, const Status& reason) override {
      Log(info_log, "%s %zu bytes of the log: %s",
          paranoid || reason.IsIOError() ? "ERROR: cannot skip" : "Skipping",
          bytes, reason.ToString().c_str());
      // A failed read is never skipped: the rest of the log is unknown.
      if ((paranoid || reason.IsIOError()) && status.ok()) status = reason;
    }
  } reporter;
  reporter.paranoid = options_.paranoid_checks;
  reporter.info_log = info_log_;
  log::Reader reader(file.get(), fname, &reporter, /*verify_checksums=*/true);

  std::shared_ptr<MemTable> mem = edit != nullptr ? NewMemTable() : mem_;
  Slice record;
  std::string scratch;
  WriteBatch batch;
  uint64_t records = 0;
  while (reader.ReadRecord(&record, &scratch) && reporter.status.ok()) {
    s = WriteBatchInternal::SetContents(&batch, record);
    if (s.ok()) s = WriteBatchInternal::InsertInto(&batch, mem.get());
    if (!s.ok()) {
      s = Status::Corruption(
              fname + " at offset " + std::to_string(reader.LastRecordOffset()),
              s.message())
              .AtOffset(reader.LastRecordOffset());
      if (options_.paranoid_checks) return s;
      Log(info_log_, "Skipping a log record: %s", s.ToString().c_str());
      continue;
    }
    const SequenceNumber last = WriteBatchInternal::Sequence(&batch) +
                                WriteBatchInternal::Count(&batch) - 1;
    *max_sequence = std::max(*max_sequence, last);
    records++;
    if (edit != nullptr &&
        mem->ApproximateMemoryUsage() > options_.write_buffer_size) {
      std::shared_ptr<FileMetaData> meta;
      s = WriteLevel0Segment(mem.get(), versions_->NewFileNumber(),
                             FlushFilterPolicy(*mem), &meta);
      if (!s.ok()) return s;
      if (meta != nullptr) edit->AddFile(0, std::move(meta));
      AddFlushedRangeTombstones(*mem, edit);
      mem = NewMemTable();
    }
  }
  if (!reporter.status.ok()) return reporter.status;
  Log(info_log_, "Replayed %s: %" PRIu64 " records, last sequence %" PRIu64,
      fname.c_str(), records, *max_sequence);
  // A damaged end inside the bytes the manifest records as synced (a
  // closed log's, or any log's after a clean close) was durable: damage,
  // not a torn write.
  const auto recorded = versions_->recorded_logs().find(number);
  s = reader.TornTailWithinSynced(
      recorded == versions_->recorded_logs().end() ? 0 : recorded->second);
  if (!s.ok()) {
    if (options_.paranoid_checks) return s;
    Log(info_log_, "Skipping %s", s.ToString().c_str());
  } else if (reader.torn_tail()) {
    *torn_end =
        Status::Corruption(
            fname + " at offset " + std::to_string(reader.torn_tail_offset()),
            "damaged end of a log synced before the next one (a later log "
            "holds "
            "the sync mark; " +
                std::to_string(reader.torn_tail_bytes()) + " bytes)")
            .AtOffset(reader.torn_tail_offset());
    Log(info_log_,
        "Dropped the torn tail of %s: %" PRIu64 " bytes at offset %" PRIu64,
        fname.c_str(), reader.torn_tail_bytes(), reader.torn_tail_offset());
  }
  if (edit == nullptr) return Status::OK();
  std::shared_ptr<FileMetaData> meta;
  s = WriteLevel0Segment(mem.get(), versions_->NewFileNumber(),
                         FlushFilterPolicy(*mem), &meta);
  if (s.ok() && meta != nullptr) edit->AddFile(0, std::move(meta));
  if (s.ok()) AddFlushedRangeTombstones(*mem, edit);
  return s;
}

void DBImpl::OpenSegment(FileMetaData* f) const {
  table_cache_->Load(f);
  if (!f->open_status.ok())
    Log(info_log_, "ERROR: cannot open segment %s: %s",
        SegmentFileName(dbname_, f->number).c_str(),
        f->open_status.ToString().c_str());
}

}  // namespace bloomkv
