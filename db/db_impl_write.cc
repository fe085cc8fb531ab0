// DBImpl, the write path: group commit, the WAL (new logs at memtable
// switches, the closed logs a synced write syncs and records first), the
// write delay and stop while level 0 piles up, Flush and SyncWAL.
#include <algorithm>
#include <cinttypes>

#include "db/db_impl.h"
#include "db/filename.h"
#include "db/write_batch_internal.h"
#include "util/logging.h"

namespace bloomkv {

struct DBImpl::Writer {
  explicit Writer(WriteBatch* b, bool s) : batch(b), sync(s) {}
  WriteBatch* batch;  // null: a request to switch memtables (Flush)
  bool sync;
  bool done = false;
  Status status;
  CondVar cv;
};

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

Status ValidateRange(const Slice& begin, const Slice& end) {
  for (const Slice* bound : {&begin, &end}) {
    if (bound->size() > kMaxKeySize) {
      return Status::InvalidArgument(
          "range bound of " + std::to_string(bound->size()) +
          " bytes exceeds the " + std::to_string(kMaxKeySize) +
          "-byte key limit");
    }
  }
  if (begin.compare(end) > 0) {
    return Status::InvalidArgument("range begin " + begin.ToEscapedString() +
                                   " is after its end " +
                                   end.ToEscapedString());
  }
  return Status::OK();
}

namespace {

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
  void DeleteRange(const Slice& begin, const Slice& end) override {
    if (status.ok()) status = ValidateRange(begin, end);
  }
  Status status;
};

}  // namespace

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

Status DBImpl::DeleteRange(const WriteOptions& options, const Slice& begin,
                           const Slice& end) {
  Status s = ValidateRange(begin, end);
  if (!s.ok()) return s;
  WriteBatch batch;
  batch.DeleteRange(begin, end);
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
  MutexLock lock(&mu_);
  writers_.push_back(&w);
  while (!w.done && &w != writers_.front()) w.cv.Wait(&mu_);
  if (w.done) return w.status;
  ScopedRole front(&front_writer_);

  Status s = MakeRoomForWrite(/*force=*/updates == nullptr);
  Writer* last_writer = &w;
  WriteBatch* group = nullptr;
  if (s.ok() && updates != nullptr) {
    group = BuildBatchGroup(&last_writer);
    const uint64_t bytes =
        WriteBatchInternal::ByteSize(group) - kWriteBatchHeaderSize;
    counters_->user_bytes_written.fetch_add(bytes, std::memory_order_relaxed);
    s = DelayWrite(bytes);
  }
  if (s.ok() && updates != nullptr) {
    SequenceNumber last_sequence = versions_->last_sequence();
    WriteBatchInternal::SetSequence(group, last_sequence + 1);
    const bool empty = WriteBatchInternal::Count(group) == 0;
    last_sequence += WriteBatchInternal::Count(group);
    if (w.sync) PruneClosedLogs();
    const bool record_log = w.sync && !versions_->KnowsLog(log_number_);
    // Only the front writer gets here, and only it replaces mem_: the log
    // and this memtable have a single writer while mu_ is released;
    // readers go on meanwhile.
    MemTable* const mem = mem_.get();
    mu_.Unlock();
    if (w.sync) {
      s = PrepareSyncedWrite(WriteBatchInternal::Sequence(group), record_log);
    }
    if (s.ok() && !empty) {
      s = log_->AddRecord(WriteBatchInternal::Contents(group));
    }
    if (s.ok()) s = w.sync ? log_file_->Sync() : log_file_->Flush();
    // The log's state is unknown after a failed append or sync (a partial
    // record may be in it): refuse further writes rather than risk
    // acknowledging writes that a crash would lose or replay would skip.
    const bool log_failed = !s.ok();
    if (s.ok() && !empty) s = WriteBatchInternal::InsertInto(group, mem);
    mu_.Lock();
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
      ready->cv.Signal();
    }
    if (ready == last_writer) break;
  }
  if (!writers_.empty()) writers_.front()->cv.Signal();
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

Status DBImpl::DelayWrite(uint64_t bytes) {
  const int level0 = versions_->NumFiles(0);
  if (level0 < options_.level0_slowdown_writes_trigger) {
    write_delay_.Reset();
    return Status::OK();
  }
  // Level 0 is piling up: slow writes down so that compaction keeps up,
  // rather than stopping them outright later.
  const uint64_t rate = DelayedWriteRate(
      options_.delayed_write_rate, options_.level0_slowdown_writes_trigger,
      options_.level0_stop_writes_trigger, level0);
  const uint64_t micros = write_delay_.Charge(bytes, rate, env_->NowMicros());
  if (micros == 0) return Status::OK();
  mu_.Unlock();
  env_->SleepForMicroseconds(micros);
  mu_.Lock();
  counters_->write_delay_micros.fetch_add(micros, std::memory_order_relaxed);
  counters_->stall_micros.fetch_add(micros, std::memory_order_relaxed);
  return bg_error_;
}

void DBImpl::PruneClosedLogs() {
  // A flush has covered them since: no recovery reads them any more.
  const uint64_t covered = versions_->log_number();
  std::erase_if(closed_logs_, [covered](ClosedLog& closed) {
    if (closed.number >= covered) return false;
    closed.file->Close().PermitUncheckedError();
    return true;
  });
}

Status DBImpl::PrepareSyncedWrite(SequenceNumber sequence, bool record_log) {
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
    Status s;
    {
      MutexLock lock(&mu_);
      if (record_log) edit.AddLog(log_number_, 0);
      s = versions_->LogAndApply(&edit, &mu_);
      if (s.ok()) InstallReadView();
    }
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

Status DBImpl::MakeRoomForWrite(bool force) {
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
      bg_done_cv_.Wait(&mu_);
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
    flush_cv_.Signal();
  }
}

Status DBImpl::Flush() {
  Status s = Write(WriteOptions(), nullptr);
  if (!s.ok()) return s;
  MutexLock lock(&mu_);
  while (imm_ != nullptr && bg_error_.ok()) bg_done_cv_.Wait(&mu_);
  return bg_error_;
}

Status DBImpl::SyncWAL() {
  WriteOptions options;
  options.sync = true;
  WriteBatch empty;
  return Write(options, &empty);
}

}  // namespace bloomkv
