// DBImpl: open and recovery, the write path, the read path, flushes and
// properties. See db_impl.h for the concurrency design.
#include "db/db_impl.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "db/db_iter.h"
#include "db/filename.h"
#include "db/filter_allocation.h"
#include "db/log_reader.h"
#include "db/merging_iterator.h"
#include "db/segment_lookup.h"
#include "db/segment_output.h"
#include "db/write_batch_internal.h"
#include "util/file_limit.h"
#include "util/hash.h"
#include "util/logging.h"

namespace bloomkv {

Snapshot::~Snapshot() = default;
DB::~DB() = default;

struct DBImpl::Writer {
  explicit Writer(WriteBatch* b, bool s) : batch(b), sync(s) {}
  WriteBatch* batch;  // null: a request to switch memtables (Flush)
  bool sync;
  bool done = false;
  Status status;
  std::condition_variable cv;
};

struct DBImpl::SnapshotImpl final : public Snapshot {
  explicit SnapshotImpl(std::list<SequenceNumber>::iterator p) : pos(p) {}
  SequenceNumber sequence() const { return *pos; }
  std::list<SequenceNumber>::iterator pos;
};

namespace {

Status ValidateKey(const Slice& key) {
  if (key.empty()) return Status::InvalidArgument("empty key");
  if (key.size() > kMaxKeySize) {
    return Status::InvalidArgument("key of " + std::to_string(key.size()) +
                                   " bytes exceeds the " +
                                   std::to_string(kMaxKeySize) + "-byte limit");
  }
  return Status::OK();
}

Status ValidateValue(const Slice& value) {
  if (value.size() > kMaxValueSize) {
    return Status::InvalidArgument(
        "value of " + std::to_string(value.size()) + " bytes exceeds the " +
        std::to_string(kMaxValueSize) + "-byte limit");
  }
  return Status::OK();
}

// Checks every key and value of a batch against the limits.
class BatchValidator final : public WriteBatch::Handler {
 public:
  void Put(const Slice& key, const Slice& value) override {
    if (status.ok()) status = ValidateKey(key);
    if (status.ok()) status = ValidateValue(value);
  }
  void Delete(const Slice& key) override {
    if (status.ok()) status = ValidateKey(key);
  }
  Status status;
};

// MemTable is reference-counted by hand (its iterators hold references
// too); a shared_ptr owns one of those references.
std::shared_ptr<MemTable> NewMemTable() {
  auto* mem = new MemTable;
  mem->Ref();
  return std::shared_ptr<MemTable>(mem, [](MemTable* m) { m->Unref(); });
}

Status ValidateOptions(const Options& o) {
  if (o.write_buffer_size < (64 << 10) || o.write_buffer_size > (1u << 30)) {
    return Status::InvalidArgument(
        "write_buffer_size must be in [64 KiB, 1 GiB]");
  }
  if (o.block_size < 1024 || o.block_size > (4u << 20)) {
    return Status::InvalidArgument("block_size must be in [1 KiB, 4 MiB]");
  }
  auto known = [](CompressionType c) {
    return c == CompressionType::kNone || c == CompressionType::kLZ4;
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
        "<= 1000");
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
  if (o.max_open_files < kMinMaxOpenFiles) {
    return Status::InvalidArgument("max_open_files must be at least " +
                                   std::to_string(kMinMaxOpenFiles));
  }
  return Status::OK();
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
        names += (names.empty() ? "" : "; ") + f->open_status.ToString();
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
                                    " bytes the manifest records as synced");
    }
  }
  return Status::OK();
}

}  // namespace

// ---------------------------------------------------------------------------
// Open, recovery, close

DBImpl::DBImpl(const Options& options, std::string dbname, bool read_only)
    : options_(options),
      env_(options.env != nullptr ? options.env : Env::Default()),
      read_only_(read_only),
      dbname_(std::move(dbname)),
      counters_(std::make_unique<Counters>()),
      write_delay_(options.delayed_write_rate) {
  options_.env = env_;
  if (options_.block_cache_capacity > 0) {
    block_cache_ = std::make_unique<Cache>(options_.block_cache_capacity);
  }
  table_cache_ = std::make_unique<TableCache>(
      dbname_, env_, options_.filter_policy, block_cache_.get(),
      static_cast<size_t>(options_.max_open_files - kNumNonSegmentFiles));
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
    std::lock_guard<std::mutex> guard(mu_);
    shutting_down_ = true;
    shutting_down_flag_ = true;
  }
  flush_cv_.notify_all();
  bg_work_cv_.notify_all();
  bg_done_cv_.notify_all();  // a waiting CompactRange gives up
  if (flush_thread_.joinable()) flush_thread_.join();
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
  for (ClosedLog& closed : closed_logs_) {
    closed.file->Close().PermitUncheckedError();
  }
  if (log_file_ != nullptr) log_file_->Close().PermitUncheckedError();
  if (db_lock_ != nullptr) {
    env_->UnlockFile(std::move(db_lock_)).PermitUncheckedError();
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

  std::unique_lock<std::mutex> lock(mu_);
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

  s = NewLogFile();
  // The manifest edit below names the new log: its directory entry must be
  // durable first.
  if (s.ok()) s = env_->SyncDir(dbname_);
  if (!s.ok()) return s;
  log_entry_synced_ = true;
  edit.SetLogNumber(log_number_);
  s = versions_->LogAndApply(&edit, &lock);
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
  const int64_t wanted = options_.max_open_files + kHeadroom;
  const FileLimit limit = RaiseOpenFileLimit(wanted);
  if (limit.after > limit.before) {
    Log(info_log_,
        "Raised the open-file limit (RLIMIT_NOFILE) from %" PRId64
        " to %" PRId64 " for max_open_files %d",
        limit.before, limit.after, options_.max_open_files);
  }
  if (limit.after >= 0 && limit.after < wanted) {
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
          s.message());
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
      mem = NewMemTable();
    }
  }
  if (!reporter.status.ok()) return reporter.status;
  Log(info_log_, "Replayed %s: %" PRIu64 " records, last sequence %" PRIu64,
      fname.c_str(), records, *max_sequence);
  if (reader.torn_tail()) {
    *torn_end = Status::Corruption(
        fname + " at offset " + std::to_string(reader.torn_tail_offset()),
        "damaged end of a log synced before the next one (a later log holds "
        "the sync mark; " +
            std::to_string(reader.torn_tail_bytes()) + " bytes)");
    Log(info_log_,
        "Dropped the torn tail of %s: %" PRIu64 " bytes at offset %" PRIu64,
        fname.c_str(), reader.torn_tail_bytes(), reader.torn_tail_offset());
  }
  if (edit == nullptr) return Status::OK();
  std::shared_ptr<FileMetaData> meta;
  s = WriteLevel0Segment(mem.get(), versions_->NewFileNumber(),
                         FlushFilterPolicy(*mem), &meta);
  if (s.ok() && meta != nullptr) edit->AddFile(0, std::move(meta));
  return s;
}

void DBImpl::OpenSegment(FileMetaData* f) const {
  table_cache_->Load(f);
  if (!f->open_status.ok())
    Log(info_log_, "ERROR: cannot open segment %s: %s",
        SegmentFileName(dbname_, f->number).c_str(),
        f->open_status.ToString().c_str());
}

std::shared_ptr<const FilterPolicy> DBImpl::FlushFilterPolicy(
    const MemTable& mem) {
  return FilterPolicyForOutput(options_, *versions_->current(),
                               /*c=*/nullptr, mem.NumEntries());
}

Status DBImpl::WriteLevel0Segment(
    MemTable* mem, uint64_t number,
    std::shared_ptr<const FilterPolicy> filter_policy,
    std::shared_ptr<FileMetaData>* meta) {
  meta->reset();
  if (mem->Empty()) return Status::OK();
  const uint64_t start_micros = env_->NowMicros();
  SegmentOutput out(options_, dbname_, number, std::move(filter_policy),
                    CompressionForLevel(options_, 0));
  Status s = out.Open();
  std::unique_ptr<Iterator> it(mem->NewIterator());
  for (it->SeekToFirst(); s.ok() && it->Valid(); it->Next()) {
    s = out.Add(it->key(), it->value());
  }
  if (s.ok()) s = it->status();
  std::shared_ptr<FileMetaData> f;
  if (s.ok()) s = out.Finish(&f);
  // The segment and its directory entry are durable before any manifest
  // record names it.
  if (s.ok()) s = env_->SyncDir(dbname_);
  if (s.ok()) {
    OpenSegment(f.get());
    s = f->open_status;
  }
  if (!s.ok()) {
    Log(info_log_, "Flush to segment %06" PRIu64 " failed: %s", number,
        s.ToString().c_str());
    out.Abandon();
    return s;
  }
  Log(info_log_,
      "Flushed segment %06" PRIu64 ": %" PRIu64 " entries, %" PRIu64
      " bytes in %" PRIu64 " us",
      number, f->num_entries, f->file_size, env_->NowMicros() - start_micros);
  counters_->flushes.fetch_add(1, std::memory_order_relaxed);
  counters_->bytes_flushed.fetch_add(f->file_size, std::memory_order_relaxed);
  *meta = std::move(f);
  return Status::OK();
}

Status DBImpl::NewLogFile() {
  const uint64_t number = versions_->NewFileNumber();
  std::unique_ptr<WritableFile> file;
  Status s = env_->NewWritableFile(LogFileName(dbname_, number), &file);
  if (!s.ok()) return s;
  // Nothing is synced here, off the writers' path: the next synced write
  // syncs the new log's directory entry and the old log first
  // (PrepareSyncedWrite), and a flush syncs the directory before its
  // manifest edit names the new log.
  log_entry_synced_ = false;
  PruneClosedLogs();
  if (log_file_ != nullptr) {
    s = log_file_->Flush();
    if (!s.ok()) return s;
    closed_logs_.push_back({log_number_, log_->length(), std::move(log_file_)});
  }
  log_file_ = std::move(file);
  log_ = std::make_unique<log::Writer>(log_file_.get());
  log_number_ = number;
  return Status::OK();
}

void DBImpl::DeleteObsoleteFiles() {
  if (!bg_error_.ok()) return;  // the state on disk may be uncertain
  std::set<uint64_t> live = pending_outputs_;
  versions_->AddLiveFiles(&live);
  std::vector<std::string> children;
  if (!env_->GetChildren(dbname_, &children).ok()) return;
  for (const auto& name : children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    bool keep = true;
    switch (type) {
      case FileType::kLogFile:
        keep = number >= versions_->log_number() || number == log_number_;
        break;
      case FileType::kManifestFile:
        keep = number >= versions_->manifest_number();
        break;
      case FileType::kSegmentFile:
      case FileType::kTempFile:
        keep = live.count(number) != 0;
        break;
      case FileType::kCurrentFile:
      case FileType::kLockFile:
      case FileType::kInfoLogFile:
        break;
    }
    if (!keep)
      Log(info_log_, "Deleting %s: %s", name.c_str(), ObsoleteFileReason(type));
    if (!keep && type == FileType::kSegmentFile) table_cache_->Evict(number);
    if (!keep) env_->RemoveFile(dbname_ + "/" + name).PermitUncheckedError();
  }
}

Status DestroyDB(const std::string& path, const Options& options) {
  Env* env = options.env != nullptr ? options.env : Env::Default();
  std::vector<std::string> children;
  if (!env->GetChildren(path, &children).ok()) return Status::OK();
  std::unique_ptr<FileLock> lock;
  Status s = env->LockFile(LockFileName(path), &lock);
  if (s.IsBusy()) {
    return Status::Busy(path, "database is in use: " + s.message());
  }
  if (!s.ok()) return Status::IOError("cannot create or lock " + s.message());
  for (const auto& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type != FileType::kLockFile) {
      Status del = env->RemoveFile(path + "/" + name);
      if (s.ok() && !del.ok()) s = del;
    }
  }
  env->UnlockFile(std::move(lock)).PermitUncheckedError();
  env->RemoveFile(LockFileName(path)).PermitUncheckedError();
  env->RemoveDir(path).PermitUncheckedError();  // fails if others' files remain
  return s;
}

// ---------------------------------------------------------------------------
// Writes

Status DBImpl::Put(const WriteOptions& options, const Slice& key,
                   const Slice& value) {
  Status s = ValidateKey(key);
  if (s.ok()) s = ValidateValue(value);
  if (!s.ok()) return s;
  WriteBatch batch;
  batch.Put(key, value);
  return WriteValidated(options, &batch);
}

Status DBImpl::Delete(const WriteOptions& options, const Slice& key) {
  Status s = ValidateKey(key);
  if (!s.ok()) return s;
  WriteBatch batch;
  batch.Delete(key);
  return WriteValidated(options, &batch);
}

Status DBImpl::Write(const WriteOptions& options, WriteBatch* updates) {
  if (read_only_) {
    return Status::NotSupported(dbname_, "database is open read-only");
  }
  if (updates != nullptr) {
    BatchValidator validator;
    Status s = updates->Iterate(&validator);
    if (s.ok()) s = validator.status;
    if (!s.ok()) return s;
  }
  return WriteValidated(options, updates);
}

Status DBImpl::WriteValidated(const WriteOptions& options,
                              WriteBatch* updates) {
  if (read_only_) {
    return Status::NotSupported(dbname_, "database is open read-only");
  }
  // An empty synced batch still syncs the log: it makes the writes before
  // it durable (SyncWAL).
  if (updates != nullptr && updates->Count() == 0 && !options.sync) {
    return Status::OK();
  }
  Writer w(updates, options.sync);
  std::unique_lock<std::mutex> lock(mu_);
  writers_.push_back(&w);
  while (!w.done && &w != writers_.front()) w.cv.wait(lock);
  if (w.done) return w.status;

  Status s = MakeRoomForWrite(&lock, /*force=*/updates == nullptr);
  Writer* last_writer = &w;
  WriteBatch* group = nullptr;
  if (s.ok() && updates != nullptr) {
    group = BuildBatchGroup(&last_writer);
    const uint64_t bytes =
        WriteBatchInternal::ByteSize(group) - kWriteBatchHeaderSize;
    counters_->user_bytes_written.fetch_add(bytes, std::memory_order_relaxed);
    s = DelayWrite(&lock, bytes);
  }
  if (s.ok() && updates != nullptr) {
    SequenceNumber last_sequence = versions_->last_sequence();
    WriteBatchInternal::SetSequence(group, last_sequence + 1);
    const bool empty = WriteBatchInternal::Count(group) == 0;
    last_sequence += WriteBatchInternal::Count(group);
    if (w.sync) PruneClosedLogs();
    const bool record_log = w.sync && !versions_->KnowsLog(log_number_);
    // Only the front writer gets here, so the log and the memtable have a
    // single writer while mu_ is released; readers go on meanwhile.
    lock.unlock();
    if (w.sync) {
      s = PrepareSyncedWrite(WriteBatchInternal::Sequence(group), record_log,
                             &lock);
    }
    if (s.ok() && !empty) {
      s = log_->AddRecord(WriteBatchInternal::Contents(group));
    }
    if (s.ok()) s = w.sync ? log_file_->Sync() : log_file_->Flush();
    // The log's state is unknown after a failed append or sync (a partial
    // record may be in it): refuse further writes rather than risk
    // acknowledging writes that a crash would lose or replay would skip.
    const bool log_failed = !s.ok();
    if (s.ok() && !empty) {
      s = WriteBatchInternal::InsertInto(group, mem_.get());
    }
    lock.lock();
    if (log_failed) RecordBackgroundError(s);
    if (s.ok()) versions_->SetLastSequence(last_sequence);
  }
  if (group == &group_batch_) group_batch_.Clear();

  while (true) {
    Writer* ready = writers_.front();
    writers_.pop_front();
    if (ready != &w) {
      ready->status = s;
      ready->done = true;
      ready->cv.notify_one();
    }
    if (ready == last_writer) break;
  }
  if (!writers_.empty()) writers_.front()->cv.notify_one();
  return s;
}

WriteBatch* DBImpl::BuildBatchGroup(Writer** last_writer) {
  Writer* first = writers_.front();
  WriteBatch* result = first->batch;
  size_t size = WriteBatchInternal::ByteSize(first->batch);
  // A small first write is not held back by a large group.
  size_t max_size = 1 << 20;
  if (size <= (128 << 10)) max_size = size + (128 << 10);
  *last_writer = first;
  for (auto it = writers_.begin() + 1; it != writers_.end(); ++it) {
    Writer* w = *it;
    if (w->sync && !first->sync) break;  // a sync write needs a sync group
    if (w->batch == nullptr) break;      // a flush request goes alone
    size += WriteBatchInternal::ByteSize(w->batch);
    if (size > max_size) break;
    if (result == first->batch) {
      result = &group_batch_;
      result->Append(*first->batch);
    }
    result->Append(*w->batch);
    *last_writer = w;
  }
  return result;
}

Status DBImpl::DelayWrite(std::unique_lock<std::mutex>* lock, uint64_t bytes) {
  if (versions_->NumFiles(0) < options_.level0_slowdown_writes_trigger) {
    write_delay_.Reset();
    return Status::OK();
  }
  // Level 0 is piling up: slow writes down so that compaction keeps up,
  // rather than stopping them outright later.
  const uint64_t micros = write_delay_.Charge(bytes, env_->NowMicros());
  if (micros == 0) return Status::OK();
  lock->unlock();
  env_->SleepForMicroseconds(micros);
  lock->lock();
  counters_->write_delay_micros.fetch_add(micros, std::memory_order_relaxed);
  counters_->stall_micros.fetch_add(micros, std::memory_order_relaxed);
  return bg_error_;
}

void DBImpl::PruneClosedLogs() {
  // A flush has covered them since: no recovery reads them any more.
  std::erase_if(closed_logs_, [&](ClosedLog& closed) {
    if (closed.number >= versions_->log_number()) return false;
    closed.file->Close().PermitUncheckedError();
    return true;
  });
}

Status DBImpl::PrepareSyncedWrite(SequenceNumber sequence, bool record_log,
                                  std::unique_lock<std::mutex>* lock) {
  // Without its directory entry the log would vanish in a crash, synced
  // records and all.
  if (!log_entry_synced_) {
    Status s = env_->SyncDir(dbname_);
    if (!s.ok()) return s;
    log_entry_synced_ = true;
  }
  // No synced write may survive a crash that loses an unsynced write
  // before it: the closed logs become durable first.
  for (ClosedLog& closed : closed_logs_) {
    Status s = closed.file->Sync();
    if (!s.ok()) return s;
  }
  // The manifest learns of the current log, and of how much of each closed
  // log is now durable, before the write is acknowledged: a later loss of
  // either is then Corruption at Open, not silence (LiveLogs). This happens
  // once per log, on the first synced write after a memtable switch.
  if (record_log || !closed_logs_.empty()) {
    VersionEdit edit;
    for (const ClosedLog& closed : closed_logs_) {
      edit.AddLog(closed.number, closed.length);
    }
    lock->lock();
    if (record_log) edit.AddLog(log_number_, 0);
    Status s = versions_->LogAndApply(&edit, lock);
    if (s.ok()) InstallReadView();
    lock->unlock();
    if (!s.ok()) return s;
  }
  if (closed_logs_.empty()) return Status::OK();
  for (ClosedLog& closed : closed_logs_) {
    closed.file->Close().PermitUncheckedError();
  }
  closed_logs_.clear();
  // The mark: a batch of no entries, which no write logs otherwise.
  WriteBatch mark;
  WriteBatchInternal::SetSequence(&mark, sequence);
  return log_->AddRecord(WriteBatchInternal::Contents(&mark));
}

Status DBImpl::MakeRoomForWrite(std::unique_lock<std::mutex>* lock,
                                bool force) {
  while (true) {
    if (!bg_error_.ok()) return bg_error_;
    const int level0 = versions_->current()->NumFiles(0);
    if (!force &&
        mem_->ApproximateMemoryUsage() <= options_.write_buffer_size) {
      return Status::OK();
    }
    if (force && mem_->Empty()) return Status::OK();
    if (imm_ != nullptr || level0 >= options_.level0_stop_writes_trigger) {
      // The previous memtable is still being flushed, or level 0 is full:
      // wait for the flush or compaction threads.
      const uint64_t start = env_->NowMicros();
      Log(info_log_,
          "Write stall: %s (level 0 has %d segments, stop trigger %d)",
          imm_ != nullptr ? "waiting for the previous memtable's flush"
                          : "waiting for level-0 compaction",
          level0, options_.level0_stop_writes_trigger);
      bg_done_cv_.wait(*lock);
      const uint64_t micros = env_->NowMicros() - start;
      Log(info_log_, "Write stall ended after %" PRIu64 " us", micros);
      counters_->write_stop_micros.fetch_add(micros, std::memory_order_relaxed);
      counters_->stall_micros.fetch_add(micros, std::memory_order_relaxed);
      continue;
    }
    Status s = NewLogFile();
    if (!s.ok()) {
      // The old log may not be durable, and the writes after it must not
      // go anywhere else.
      RecordBackgroundError(s);
      return s;
    }
    imm_ = std::move(mem_);
    mem_ = NewMemTable();
    InstallReadView();
    Log(info_log_, "Switched to a new memtable and log %06" PRIu64,
        log_number_);
    force = false;
    flush_cv_.notify_one();
  }
}

Status DBImpl::Flush() {
  Status s = Write(WriteOptions(), nullptr);
  if (!s.ok()) return s;
  std::unique_lock<std::mutex> lock(mu_);
  while (imm_ != nullptr && bg_error_.ok()) bg_done_cv_.wait(lock);
  return bg_error_;
}

Status DBImpl::SyncWAL() {
  WriteOptions options;
  options.sync = true;
  WriteBatch empty;
  return Write(options, &empty);
}

void DBImpl::RecordBackgroundError(const Status& s) {
  if (s.ok() || !bg_error_.ok()) return;
  bg_error_ = s;
  has_bg_error_.store(true, std::memory_order_release);
  Log(info_log_,
      "ERROR: background error, writes are refused until reopened: %s",
      s.ToString().c_str());
  // Flush() and CompactRange() waiters, and a writer waiting for room.
  bg_done_cv_.notify_all();
}

// ---------------------------------------------------------------------------
// Background work

bool DBImpl::HasBackgroundWork() const {
  if (!bg_error_.ok()) return false;
  if (imm_ != nullptr || !running_compactions_.empty()) return true;
  if (manual_compaction_ != nullptr && !manual_compaction_->done) return true;
  const Version& v = *versions_->current();
  const LevelTargets targets(options_, v);
  for (int level = 0; level < kNumLevels - 1; level++) {
    if (targets.Score(v, level) >= 1.0) return true;
  }
  return false;
}

void DBImpl::FlushThread() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    flush_cv_.wait(lock, [this] {
      return shutting_down_ || (imm_ != nullptr && bg_error_.ok());
    });
    if (shutting_down_) break;
    const int level0_before = versions_->current()->NumFiles(0);
    // A failure is the sticky error now: FlushImmutable recorded it.
    FlushImmutable(&lock).PermitUncheckedError();
    LogLevel0Change(info_log_, options_, level0_before,
                    versions_->current()->NumFiles(0));
    bg_done_cv_.notify_all();
    bg_work_cv_.notify_all();  // level 0 grew: a compaction may be due
  }
}

void DBImpl::CompactionThread() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!shutting_down_) {
    const int level0_before = versions_->current()->NumFiles(0);
    if (!bg_error_.ok() || !BackgroundCompaction(&lock)) {
      // Nothing to do until a flush, a compaction or a request changes
      // that: each of those notifies, under mu_ or after releasing it.
      bg_work_cv_.wait(lock);
      continue;
    }
    LogLevel0Change(info_log_, options_, level0_before,
                    versions_->current()->NumFiles(0));
    bg_done_cv_.notify_all();
    // What this compaction held is free again for the other threads.
    bg_work_cv_.notify_all();
  }
}

Status DBImpl::FlushImmutable(std::unique_lock<std::mutex>* lock) {
  std::shared_ptr<MemTable> imm = imm_;
  const uint64_t number = versions_->NewFileNumber();
  pending_outputs_.insert(number);
  auto filter_policy = FlushFilterPolicy(*imm);
  lock->unlock();
  std::shared_ptr<FileMetaData> meta;
  Status s =
      WriteLevel0Segment(imm.get(), number, std::move(filter_policy), &meta);
  lock->lock();
  if (s.ok()) {
    VersionEdit edit;
    if (meta != nullptr) edit.AddFile(0, std::move(meta));
    // Every log older than the current one is now covered by segments. The
    // edit names the current log, whose directory entry is durable: the
    // switch that made imm created it before WriteLevel0Segment synced the
    // directory (which an empty memtable skips: synced here then).
    if (meta == nullptr) s = env_->SyncDir(dbname_);
    edit.SetLogNumber(log_number_);
    if (s.ok()) s = versions_->LogAndApply(&edit, lock);
  }
  pending_outputs_.erase(number);
  if (!s.ok()) {
    // Sticky before mu_ is released: the manifest may name the output, so
    // no DeleteObsoleteFiles may run any more.
    RecordBackgroundError(s);
    return s;
  }
  imm_.reset();
  InstallReadView();
  DeleteObsoleteFiles();
  return s;
}

// ---------------------------------------------------------------------------
// Reads

void DBImpl::InstallReadView() {
  read_views_.Install(new ReadView(mem_, imm_, versions_->current()));
}

Status DBImpl::Get(const ReadOptions& options, const Slice& key,
                   std::string* value) {
  Status s = ValidateKey(key);
  if (!s.ok()) return s;
  const uint64_t hash = KeyHash(key);  // once, for every filter probed
  GetTrace* trace = options.trace;
  if (trace != nullptr) {
    *trace = GetTrace();
    trace->key_hash = hash;
  }
  const size_t thread = ThisThreadIndex();
  read_counters_.ShardFor(thread).Add(kGets, 1);

  ReadView* view = read_views_.Acquire(thread);
  // Read after pinning the view: every write up to this sequence is in the
  // view's memtables (the sequence is published after the insert, and the
  // view holding that memtable was installed before it).
  const SequenceNumber snapshot =
      options.snapshot != nullptr
          ? static_cast<const SnapshotImpl*>(options.snapshot)->sequence()
          : versions_->last_sequence();
  MemTable* imm = view->imm();

  bool deleted = false;
  bool found = false;
  if (view->mem()->Get(key, snapshot, value, &deleted)) {
    found = true;
    if (trace != nullptr) trace->found_in_memtable = true;
  } else if (imm != nullptr && imm->Get(key, snapshot, value, &deleted)) {
    found = true;
    if (trace != nullptr) trace->found_in_immutable = true;
  }
  if (found) {
    read_counters_.ShardFor(thread).Add(kMemtableHits, 1);
  } else {
    SegmentReadOptions sro;
    sro.verify_checksums = options.verify_checksums || options_.paranoid_checks;
    sro.fill_cache = options.fill_cache;
    SegmentLookup lookup(table_cache_.get(), sro, key, hash, snapshot, value,
                         trace, thread);
    view->version().ForEachCandidate(
        key, hash, [&lookup](const FileMetaData& f, int level) {
          return lookup.Consult(f, level);
        });
    lookup.Finish(&read_counters_.ShardFor(thread));
    s = lookup.status();
    found = lookup.found();
    deleted = lookup.deleted();
  }
  read_views_.Release(thread, view);
  if (!s.ok()) {
    if (trace != nullptr) trace->result = s.ToString();
    return s;
  }
  if (found && !deleted) {
    if (trace != nullptr) trace->result = "found";
    return Status::OK();
  }
  if (trace != nullptr) trace->result = deleted ? "deleted" : "not found";
  return Status::NotFound("");
}

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options) {
  // The iterator holds its own reference to the view for its lifetime.
  const size_t thread = ThisThreadIndex();
  ReadView* view = read_views_.Acquire(thread);
  view->Ref();
  read_views_.Release(thread, view);
  const SequenceNumber sequence =  // after pinning, as in Get
      options.snapshot != nullptr
          ? static_cast<const SnapshotImpl*>(options.snapshot)->sequence()
          : versions_->last_sequence();
  SegmentReadOptions sro;
  sro.verify_checksums = options.verify_checksums || options_.paranoid_checks;
  sro.fill_cache = options.fill_cache;

  std::vector<std::unique_ptr<Iterator>> children;
  children.emplace_back(view->mem()->NewIterator());
  if (view->imm() != nullptr) children.emplace_back(view->imm()->NewIterator());
  // Level-0 segments overlap: each is a child of the merge, open for the
  // iterator's life. A deeper level is one child that opens its segments
  // one at a time, so an iterator pins at most one segment per level there.
  for (const auto& f : view->version().files(0)) {
    children.push_back(table_cache_->NewIterator(*f, sro));
  }
  for (int level = 1; level < kNumLevels; level++) {
    const Version::FileList& files = view->version().files(level);
    if (!files.empty()) {
      children.push_back(table_cache_->NewLevelIterator(files, sro));
    }
  }
  // The cleanup runs after the merged iterator is gone, so the memtables and
  // segments it reads stay alive exactly as long as needed.
  return NewDBIterator(NewMergingIterator(std::move(children)), sequence,
                       [view] { view->Unref(); });
}

const Snapshot* DBImpl::GetSnapshot() {
  std::lock_guard<std::mutex> guard(mu_);
  snapshots_.push_back(versions_->last_sequence());
  return new SnapshotImpl(std::prev(snapshots_.end()));
}

void DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  if (snapshot == nullptr) return;
  const auto* impl = static_cast<const SnapshotImpl*>(snapshot);
  {
    std::lock_guard<std::mutex> guard(mu_);
    snapshots_.erase(impl->pos);
  }
  delete impl;
}

// ---------------------------------------------------------------------------
// Observability

DbStats DBImpl::GetStats() {
  const auto& r = read_counters_;
  DbStats st;
  st.gets = r.Sum(kGets);
  st.memtable_hits = r.Sum(kMemtableHits);
  st.segments_consulted = r.Sum(kSegmentsConsulted);
  st.skipped_by_range = r.Sum(kSkippedByRange);
  st.filter_negatives = r.Sum(kFilterNegatives);
  st.filter_positives = r.Sum(kFilterPositives);
  st.filter_false_positives = r.Sum(kFilterFalsePositives);
  st.data_blocks_read = r.Sum(kDataBlocksRead);
  st.bytes_read = r.Sum(kBytesRead);
  st.block_cache_hits = r.Sum(kBlockCacheHits);
  st.block_cache_misses = r.Sum(kBlockCacheMisses);
  const Counters& c = *counters_;
  st.flushes = c.flushes.load();
  st.bytes_flushed = c.bytes_flushed.load();
  st.user_bytes_written = c.user_bytes_written.load();
  st.compactions = c.compactions.load();
  st.trivial_moves = c.trivial_moves.load();
  st.compaction_bytes_read = c.compaction_bytes_read.load();
  st.compaction_bytes_written = c.compaction_bytes_written.load();
  st.compaction_filter_drops = c.compaction_filter_drops.load();
  st.stall_micros = c.stall_micros.load();
  st.write_delay_micros = c.write_delay_micros.load();
  st.write_stop_micros = c.write_stop_micros.load();
  return st;
}

std::vector<SegmentInfo> DBImpl::GetSegmentInfo() {
  const size_t thread = ThisThreadIndex();
  ReadView* view = read_views_.Acquire(thread);
  std::vector<SegmentInfo> result;
  for (int level = 0; level < kNumLevels; level++) {
    for (const auto& f : view->version().files(level)) {
      SegmentInfo& i = result.emplace_back();
      i.level = level;
      i.file_number = f->number;
      i.file_name = SegmentFileName(dbname_, f->number);
      i.file_size = f->file_size;
      i.num_entries = f->num_entries;
      i.smallest_key = ExtractUserKey(f->smallest).ToString();
      i.largest_key = ExtractUserKey(f->largest).ToString();
      i.readable = f->open_status.ok();
      if (!i.readable) i.error = f->open_status.ToString();
      if (f->filter != nullptr) {
        i.has_filter = true;
        i.bits_per_key = f->filter->bits_per_key();
        i.filter_bytes = f->filter->memory();
        i.theoretical_fp_rate = f->filter->TheoreticalFpRate();
      }
      i.lookups = f->counters.Sum(kSegmentLookups);
      i.filter_negatives = f->counters.Sum(kSegmentFilterNegatives);
      i.filter_positives = f->counters.Sum(kSegmentFilterPositives);
      i.false_positives = f->counters.Sum(kSegmentFalsePositives);
    }
  }
  read_views_.Release(thread, view);
  return result;
}

bool DBImpl::GetProperty(const Slice& property, std::string* value) {
  value->clear();
  const std::string name = property.ToString();
  if (name == "bloomkv.stats") {
    *value = GetStats().ToString();
    return true;
  }
  if (name == "bloomkv.compaction-pending") {
    // "1" while a flush or compaction is queued or running, else "0".
    std::lock_guard<std::mutex> guard(mu_);
    *value = HasBackgroundWork() ? "1" : "0";
    return true;
  }
  std::shared_ptr<const Version> v;
  size_t mem_usage = 0;
  {
    std::lock_guard<std::mutex> guard(mu_);
    v = versions_->current();
    mem_usage = mem_->ApproximateMemoryUsage() +
                (imm_ != nullptr ? imm_->ApproximateMemoryUsage() : 0);
  }
  const std::string kFilesAtLevel = "bloomkv.num-files-at-level";
  if (name.compare(0, kFilesAtLevel.size(), kFilesAtLevel) == 0) {
    const std::string n = name.substr(kFilesAtLevel.size());
    if (n.size() != 1 || n[0] < '0' || n[0] >= '0' + kNumLevels) return false;
    *value = std::to_string(v->NumFiles(n[0] - '0'));
    return true;
  }
  if (name == "bloomkv.levels") {
    *value = LevelsTable();
    return true;
  }
  if (name == "bloomkv.approximate-memory-usage" ||
      name == "bloomkv.resource-usage") {
    uint64_t filter_bytes = 0, segments = 0;
    for (int level = 0; level < kNumLevels; level++) {
      for (const auto& f : v->files(level)) {
        segments++;
        if (f->filter != nullptr) filter_bytes += f->filter->memory();
      }
    }
    const uint64_t index_bytes = table_cache_->index_bytes();
    const uint64_t cache_bytes =
        block_cache_ != nullptr ? block_cache_->TotalCharge() : 0;
    const uint64_t total = mem_usage + filter_bytes + index_bytes + cache_bytes;
    if (name == "bloomkv.approximate-memory-usage") {
      *value = std::to_string(total);
      return true;
    }
    auto add = [value](const char* key, uint64_t n) {
      *value += std::string(key) + ": " + std::to_string(n) + "\n";
    };
    add("memtable_bytes", mem_usage);
    add("filter_bytes", filter_bytes);
    add("index_bytes", index_bytes);
    add("block_cache_bytes", cache_bytes);
    add("total_bytes", total);
    add("segments", segments);
    add("open_segment_files", table_cache_->open_files());
    add("max_open_segment_files", table_cache_->capacity());
    return true;
  }
  if (name == "bloomkv.segments") {
    char line[512];
    std::snprintf(line, sizeof(line),
                  "%-5s %-8s %10s %12s %6s %10s %10s %10s %10s %9s %9s\n",
                  "level", "segment", "entries", "bytes", "bits", "lookups",
                  "negatives", "positives", "false_pos", "fp_meas",
                  "fp_theory");
    *value += line;
    for (const SegmentInfo& i : GetSegmentInfo()) {
      std::snprintf(
          line, sizeof(line),
          "L%-4d %08" PRIu64 " %10" PRIu64 " %12" PRIu64 " %6.1f %10" PRIu64
          " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %9.5f %9.5f\n",
          i.level, i.file_number, i.num_entries, i.file_size, i.bits_per_key,
          i.lookups, i.filter_negatives, i.filter_positives, i.false_positives,
          i.MeasuredFpRate(), i.theoretical_fp_rate);
      *value += line;
    }
    return true;
  }
  return false;
}

}  // namespace bloomkv
