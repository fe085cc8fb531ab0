// DBImpl, background work: the flush thread and the compaction threads'
// loops, flushing a memtable into a level-0 segment, and the sticky
// background error. The compactions themselves are in
// db_impl_compaction.cc.
#include <algorithm>
#include <cinttypes>

#include "db/db_impl.h"
#include "db/filename.h"
#include "db/filter_allocation.h"
#include "db/segment_output.h"
#include "util/logging.h"

namespace bloomkv {

void DBImpl::RecordBackgroundError(const Status& s) {
  if (s.ok() || !bg_error_.ok()) return;
  bg_error_ = s;
  has_bg_error_.store(true, std::memory_order_release);
  Log(info_log_,
      "ERROR: background error, writes are refused until reopened: %s",
      s.ToString().c_str());
  // Flush() and CompactRange() waiters, and a writer waiting for room.
  bg_done_cv_.SignalAll();
}

bool DBImpl::HasBackgroundWork() const {
  if (!bg_error_.ok()) return false;
  if (imm_ != nullptr || !running_compactions_.empty()) return true;
  if (level0_for_reads_) return true;  // until a compaction thread looks
  if (manual_compaction_ != nullptr && !manual_compaction_->done) return true;
  const Version& v = *versions_->current();
  const LevelTargets targets(options_, v);
  for (int level = 0; level < kNumLevels - 1; level++) {
    if (targets.Score(v, level) >= 1.0) return true;
  }
  return false;
}

void DBImpl::FlushThread() {
  MutexLock lock(&mu_);
  while (true) {
    while (!shutting_down_ && (imm_ == nullptr || !bg_error_.ok())) {
      flush_cv_.Wait(&mu_);
    }
    if (shutting_down_) break;
    // A failure is the sticky error now: FlushImmutable recorded it.
    FlushImmutable().PermitUncheckedError();
    bg_done_cv_.SignalAll();
    bg_work_cv_.SignalAll();  // level 0 grew: a compaction may be due
  }
}

void DBImpl::CompactionThread() {
  MutexLock lock(&mu_);
  while (!shutting_down_) {
    if (!bg_error_.ok() || !BackgroundCompaction()) {
      // Nothing to do until a flush, a compaction or a request changes
      // that: each of those notifies, under mu_ or after releasing it.
      bg_work_cv_.Wait(&mu_);
      continue;
    }
    bg_done_cv_.SignalAll();
    // What this compaction held is free again for the other threads.
    bg_work_cv_.SignalAll();
  }
}

void DBImpl::LogLevel0State() {
  const int now = versions_->current()->NumFiles(0);
  LogLevel0Change(info_log_, options_, level0_logged_, now);
  level0_logged_ = now;
}

Status DBImpl::FlushImmutable() {
  std::shared_ptr<MemTable> imm = imm_;
  const uint64_t number = versions_->NewFileNumber();
  pending_outputs_.insert(number);
  auto filter_policy = FlushFilterPolicy(*imm);
  mu_.Unlock();
  std::shared_ptr<FileMetaData> meta;
  Status s =
      WriteLevel0Segment(imm.get(), number, std::move(filter_policy), &meta);
  mu_.Lock();
  if (s.ok()) {
    VersionEdit edit;
    if (meta != nullptr && versions_->current()->range_tombstones() != nullptr) {
      // Every entry is newer than the flushed tombstones (they came from
      // earlier memtables), so none of them covers anything in it.
      // Recorded only when there are such tombstones, so that a database
      // without range deletions keeps its manifest format.
      meta->range_deletions_applied = imm->smallest_sequence() - 1;
    }
    if (meta != nullptr) edit.AddFile(0, std::move(meta));
    AddFlushedRangeTombstones(*imm, &edit);
    // Every log older than the current one is now covered by segments. The
    // edit names the current log, whose directory entry is durable: the
    // switch that made imm created it before WriteLevel0Segment synced the
    // directory (which an empty memtable skips: synced here then).
    if (meta == nullptr) s = env_->SyncDir(dbname_);
    edit.SetLogNumber(log_number_);
    if (s.ok()) s = versions_->LogAndApply(&edit, &mu_);
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
  LogLevel0State();
  RetireRangeTombstones();
  DeleteObsoleteFiles();
  return s;
}

void DBImpl::AddFlushedRangeTombstones(const MemTable& mem,
                                       VersionEdit* edit) {
  if (!mem.HasRangeTombstones()) return;
  for (const RangeTombstone& t : mem.range_tombstones()->tombstones()) {
    edit->AddRangeTombstone(t);
  }
}

void DBImpl::RetireRangeTombstones() {
  const std::shared_ptr<const Version> v = versions_->current();
  if (v->range_tombstones() == nullptr) return;
  // Whether a segment of `files` overlapping t's range has not had t
  // applied. Deeper levels are sorted and disjoint: the search starts at
  // the first segment that can overlap.
  auto holds_covered = [](const Version::FileList& files, bool sorted,
                          const RangeTombstone& t) {
    auto it = files.begin();
    if (sorted) {
      it = std::lower_bound(files.begin(), files.end(), Slice(t.begin),
                            [](const auto& f, const Slice& k) {
                              return ExtractUserKey(f->largest).compare(k) < 0;
                            });
    }
    for (; it != files.end(); ++it) {
      const FileMetaData& f = **it;
      if (sorted && ExtractUserKey(f.smallest).compare(t.end) >= 0) break;
      if (f.range_deletions_applied < t.sequence &&
          t.Overlaps(ExtractUserKey(f.smallest), ExtractUserKey(f.largest))) {
        return true;
      }
    }
    return false;
  };
  VersionEdit edit;
  for (const RangeTombstone& t : v->range_tombstones()->tombstones()) {
    // The memtables hold only newer entries: t's own was flushed.
    bool covers_something = false;
    for (int level = 0; level < kNumLevels && !covers_something; level++) {
      covers_something = holds_covered(v->files(level), level > 0, t);
    }
    if (!covers_something) edit.RemoveRangeTombstone(t.sequence);
  }
  if (edit.removed_range_tombstones().empty()) return;
  Status s = versions_->LogAndApply(&edit, &mu_);
  if (!s.ok()) {
    RecordBackgroundError(s);
    return;
  }
  InstallReadView();
  Log(info_log_, "Retired %zu range tombstones: nothing left they cover",
      edit.removed_range_tombstones().size());
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
  // A memtable of range tombstones alone makes no segment.
  if (mem->NumEntries() == 0) return Status::OK();
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

}  // namespace bloomkv
