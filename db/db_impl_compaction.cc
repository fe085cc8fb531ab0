// DBImpl, part two: leveled compaction and CompactRange.
//
// Compactions run on the compaction threads with mu_ released while they
// read and write segments; readers keep using the versions they pinned. The
// result is published by one manifest edit (inputs removed, outputs added),
// written after every output is synced and its directory entry too, so a
// crash at any point reopens at either the old or the new state. Inputs are
// deleted only once no version references them.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <future>
#include <string>
#include <string_view>
#include <vector>

#include "bloomkv/compaction_filter.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/filter_allocation.h"
#include "db/merging_iterator.h"
#include "db/segment_output.h"
#include "table/value_codec.h"
#include "util/logging.h"

namespace bloomkv {

CompactionFilter::~CompactionFilter() = default;

namespace {

// Whether segments of policy a and of policy b hold the same filter
// encoding (a resized bloom filter is still a bloom filter).
bool SameFilterKind(const FilterPolicy* a, const FilterPolicy* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return std::string_view(a->Name()) == b->Name();
}

}  // namespace

bool DBImpl::BackgroundCompaction() {
  ManualCompaction* manual = manual_compaction_;
  if (manual != nullptr && !manual->done && !manual->running) {
    auto c = CompactionForRange(options_, versions_->current(), manual->level,
                                manual->begin, manual->end, manual->in_place);
    if (c != nullptr &&
        std::any_of(running_compactions_.begin(), running_compactions_.end(),
                    [&c](const Compaction* r) {
                      return CompactionsConflict(*c, *r);
                    })) {
      // It waits for the running compactions it conflicts with; no other
      // compaction starts meanwhile, so that it cannot be starved.
      return false;
    }
    manual->running = true;  // its waiter stays until done
    // A manual compaction always rewrites, even a lone segment: that is
    // what drops its tombstones and filtered entries.
    Status s;
    if (c != nullptr) s = RunRegisteredCompaction(c.get());
    c.reset();  // unpins the inputs' version, so they can be deleted
    DeleteObsoleteFiles();
    manual->status = s;
    manual->running = false;
    manual->done = true;
    return true;
  }
  auto c = PickCompaction(options_, versions_->current(), compact_pointers_,
                          running_compactions_, level0_for_reads_);
  // Answered: either level 0 is on its way down, or (its segments busy, or
  // its lookups' account already settled) the next lookups ask again.
  level0_for_reads_ = false;
  if (c == nullptr) return false;
  if (c->read_triggered()) {
    counters_->read_triggered_compactions.fetch_add(1);
    Log(info_log_,
        "Compacting level 0 (%zu segments) for reads: lookups consulted it "
        "in vain more than rewriting it costs",
        c->inputs(0).size());
  }
  // A move would leave the segment's blocks compressed as its old level
  // wants, and its filter of the kind its old level has, not its new one:
  // rewrite it instead when the two differ.
  if (c->IsTrivialMove() &&
      CompressionForLevel(options_, c->level()) ==
          CompressionForLevel(options_, c->output_level()) &&
      SameFilterKind(ConfiguredFilterPolicy(options_, c->level()).get(),
                     ConfiguredFilterPolicy(options_, c->output_level()).get())) {
    VersionEdit edit;
    const auto& f = c->inputs(0)[0];
    edit.RemoveFile(c->level(), f->number);
    edit.AddFile(c->output_level(), f);
    edit.SetPreservesAnswers();
    // Registered while the manifest is written without mu_.
    running_compactions_.push_back(c.get());
    Status s = versions_->LogAndApply(&edit, &mu_);
    std::erase(running_compactions_, c.get());
    InstallReadView();
    if (s.ok()) {
      counters_->trivial_moves.fetch_add(1);
      Log(info_log_,
          "Moved segment %06" PRIu64 " (%" PRIu64 " bytes) from L%d to L%d",
          f->number, f->file_size, c->level(), c->output_level());
      LogLevel0State();
    } else {
      RecordBackgroundError(s);
    }
  } else {
    RunRegisteredCompaction(c.get()).PermitUncheckedError();
  }
  c.reset();  // unpins the inputs' version, so they can be deleted
  DeleteObsoleteFiles();
  return true;
}

Status DBImpl::RunRegisteredCompaction(Compaction* c) {
  running_compactions_.push_back(c);
  Status s = RunCompaction(c);
  std::erase(running_compactions_, c);
  return s;
}

Status DBImpl::RunCompaction(Compaction* c) {
  const uint64_t start_micros = env_->NowMicros();
  VersionEdit edit;
  Status s = MergeCompactionInputs(c, &edit);
  bool manifest_attempted = false;
  if (s.ok()) {
    c->AddInputDeletions(&edit);
    // A compaction filter changes answers; merging alone does not.
    if (options_.compaction_filter == nullptr) edit.SetPreservesAnswers();
    s = versions_->LogAndApply(&edit, &mu_);
    manifest_attempted = true;
    InstallReadView();
    if (s.ok()) RetireRangeTombstones();
  }
  // Sticky before the outputs leave pending_outputs_: after a failed
  // LogAndApply the manifest may name them, so nothing may delete them,
  // closing or not. Only a merge cut short by closing is not an error of
  // the DB.
  if (!s.ok() && (manifest_attempted || !shutting_down_)) {
    RecordBackgroundError(s);
  }
  for (const auto& [level, f] : edit.new_files()) {
    pending_outputs_.erase(f->number);
  }
  if (s.ok()) {
    counters_->compactions.fetch_add(1, std::memory_order_relaxed);
    counters_->compaction_bytes_read.fetch_add(c->InputBytes(),
                                               std::memory_order_relaxed);
  }
  LogCompaction(info_log_, *c, edit, env_->NowMicros() - start_micros, s);
  if (s.ok()) LogLevel0State();  // before DeleteObsoleteFiles releases mu_
  return s;
}

std::shared_ptr<const ValueDictionary> DBImpl::InputValueDictionary(
    const Compaction& c) {
  for (const int which : {1, 0}) {
    for (const auto& f : c.inputs(which)) {
      TableCache::Handle handle;
      if (!f->open_status.ok() || !table_cache_->Acquire(*f, &handle).ok()) {
        continue;
      }
      const auto& values = handle.reader()->meta()->values;
      if (values != nullptr && ValueRecoder::CanUse(*values)) return values;
    }
  }
  return nullptr;
}

// The merge itself. mu_ is released while segments are read and written.
Status DBImpl::MergeCompactionInputs(Compaction* c, VersionEdit* edit) {
  // Entries no snapshot can tell apart from their successors may go.
  const SequenceNumber smallest_snapshot =
      snapshots_.empty() ? versions_->last_sequence() : snapshots_.front();
  const bool has_snapshots = !snapshots_.empty();
  const SequenceNumber largest_snapshot = has_snapshots ? snapshots_.back() : 0;
  const CompactionFilter* filter = options_.compaction_filter.get();
  const uint64_t output_file_size =
      LevelTargets(options_, c->version()).OutputFileSize(c->output_level());
  const auto filter_policy =
      FilterPolicyForOutput(options_, *versions_->current(), c, 0);
  const CompressionType compression =
      CompressionForLevel(options_, c->output_level());
  // The range tombstones every snapshot sees, flushed ones only: applying
  // one still only in a memtable could outlast it, were its unsynced log
  // lost in a crash. Every tombstone up to `applied` is among them (the
  // memtables hold only later sequences), so the outputs record that.
  SequenceNumber applied = smallest_snapshot;
  for (const MemTable* m : {imm_.get(), mem_.get()}) {
    if (m != nullptr && m->smallest_sequence() != 0) {
      applied = std::min(applied, m->smallest_sequence() - 1);
    }
  }
  const std::shared_ptr<const RangeTombstoneSet> range_tombstones =
      RangeTombstoneSet::Merge({versions_->current()->range_tombstones()},
                               applied);
  mu_.Unlock();

  SegmentReadOptions sro;
  sro.verify_checksums = true;
  sro.fill_cache = false;  // a compaction reads everything once
  sro.readahead_size = options_.compaction_readahead_size;
  // Into a level of values compressed one by one, with no compaction
  // filter to show them to, values move in their stored form: the outputs
  // take an input segment's dictionary (the output level's first, where
  // most of the bytes come from), whose values are then copied with no LZ4
  // work; only the other inputs' values are compressed against it.
  std::unique_ptr<ValueRecoder> recoder;
  if (compression == CompressionType::kLZ4Values && filter == nullptr) {
    std::shared_ptr<const ValueDictionary> dictionary = InputValueDictionary(*c);
    if (dictionary != nullptr) {
      recoder = std::make_unique<ValueRecoder>(std::move(dictionary));
      sro.recoder = recoder.get();
    }
  }
  std::vector<std::unique_ptr<Iterator>> children;
  Status s;
  for (int which = 0; which < 2; which++) {
    for (const auto& f : c->inputs(which)) {
      if (!f->open_status.ok()) s = f->open_status;
    }
    // Inputs from level 0 overlap: each is a child of the merge. A deeper
    // level's inputs are one sorted run, opened one segment at a time.
    if (which == 0 && c->level() == 0) {
      for (const auto& f : c->inputs(0)) {
        children.push_back(table_cache_->NewIterator(*f, sro));
      }
    } else if (!c->inputs(which).empty()) {
      children.push_back(table_cache_->NewLevelIterator(c->inputs(which), sro));
    }
  }
  std::unique_ptr<Iterator> input = NewMergingIterator(std::move(children));

  std::unique_ptr<SegmentOutput> out;
  std::vector<std::shared_ptr<FileMetaData>> outputs;
  uint64_t filter_drops = 0;
  uint64_t range_drops = 0;
  // A finished output's file is synced on another thread, which owns the
  // output from then on, while the merge goes on into the next one (a sync
  // waits for the device, the merge for the CPU); at most one sync is in
  // flight, and every one has ended before the outputs are used or deleted.
  std::future<Status> synced;
  auto wait_for_sync = [&]() -> Status {
    return synced.valid() ? synced.get() : Status::OK();
  };
  auto finish_output = [&]() -> Status {
    std::shared_ptr<FileMetaData> meta;
    Status fs = out->FinishUnsynced(&meta);
    if (fs.ok()) fs = wait_for_sync();
    if (!fs.ok()) return fs;  // out is abandoned below
    outputs.push_back(std::move(meta));
    synced = std::async(std::launch::async,
                        [o = std::move(out)] { return o->SyncAndClose(); });
    return Status::OK();
  };

  std::string current_user_key;
  bool has_current_user_key = false;
  SequenceNumber last_sequence_for_key = kMaxSequenceNumber;
  std::string converted_key;
  if (s.ok()) input->SeekToFirst();
  for (; s.ok() && input->Valid(); input->Next()) {
    if (shutting_down_flag_.load(std::memory_order_acquire)) {
      s = Status::IOError("compaction abandoned: database closing");
      break;
    }
    if (has_bg_error_.load(std::memory_order_acquire)) {
      // Its result could not be installed; stop, so that waiters go.
      s = Status::IOError("compaction abandoned after a background error");
      break;
    }
    Slice key = input->key();
    Slice value = input->value();
    ParsedInternalKey ikey;
    if (!ParseInternalKey(key, &ikey)) {
      s = Status::Corruption("compaction input holds a malformed key");
      break;
    }
    if (!has_current_user_key || ikey.user_key != Slice(current_user_key)) {
      // First (newest) entry of a user key: the only place an output may be
      // cut, so no user key ever spans two segments of one level.
      if (out != nullptr && out->FileSize() >= output_file_size) {
        s = finish_output();
        if (!s.ok()) break;
      }
      current_user_key.assign(ikey.user_key.data(), ikey.user_key.size());
      has_current_user_key = true;
      last_sequence_for_key = kMaxSequenceNumber;
    }

    bool drop = false;
    if (last_sequence_for_key <= smallest_snapshot) {
      // A newer entry of this key is visible to every snapshot.
      drop = true;
    } else if (range_tombstones != nullptr &&
               range_tombstones->Covers(ikey.user_key, ikey.sequence,
                                        applied)) {
      // Deleted by a range, as every snapshot sees it (and so are the
      // older entries of the key).
      drop = true;
      range_drops++;
    } else {
      if (filter != nullptr && ikey.type == ValueType::kValue &&
          (!has_snapshots || ikey.sequence > largest_snapshot) &&
          filter->Filter(c->output_level(), ikey.user_key, value)) {
        // Removing the value must not uncover an older one: it becomes a
        // tombstone, which the rule below drops when nothing is beneath.
        converted_key =
            MakeInternalKey(ikey.user_key, ikey.sequence, ValueType::kDeletion);
        key = converted_key;
        value = Slice();
        ikey.type = ValueType::kDeletion;
        filter_drops++;
      }
      if (ikey.type == ValueType::kDeletion &&
          ikey.sequence <= smallest_snapshot &&
          c->IsBaseLevelForKey(ikey.user_key)) {
        // Nothing older exists below, and the older entries in this merge
        // are dropped by the rule above.
        drop = true;
      }
    }
    last_sequence_for_key = ikey.sequence;
    if (drop) continue;

    if (out == nullptr) {
      uint64_t number;
      {
        mu_.Lock();
        number = versions_->NewFileNumber();
        pending_outputs_.insert(number);
        mu_.Unlock();
      }
      out = std::make_unique<SegmentOutput>(
          options_, dbname_, number, filter_policy, compression,
          recoder != nullptr ? recoder->dictionary() : nullptr);
      s = out->Open();
      if (!s.ok()) break;
    }
    s = out->Add(key, value);
  }
  if (s.ok()) s = input->status();
  if (s.ok() && out != nullptr) s = finish_output();
  const Status last_sync = wait_for_sync();
  if (s.ok()) s = last_sync;
  input.reset();
  if (s.ok() && !outputs.empty()) s = env_->SyncDir(dbname_);
  uint64_t bytes_written = 0;
  for (const auto& f : outputs) {
    if (!s.ok()) break;
    OpenSegment(f.get());
    s = f->open_status;
    bytes_written += f->file_size;
  }
  mu_.Lock();
  if (!s.ok()) {
    for (const auto& f : outputs) {
      pending_outputs_.erase(f->number);
      Log(info_log_,
          "Deleting %06" PRIu64 ".seg: output of a failed compaction",
          f->number);
      table_cache_->Evict(f->number);
      env_->RemoveFile(SegmentFileName(dbname_, f->number))
          .PermitUncheckedError();
    }
    if (out != nullptr) out->Abandon();
    return s;
  }
  for (const auto& f : outputs) {
    if (range_tombstones != nullptr) f->range_deletions_applied = applied;
    edit->AddFile(c->output_level(), f);
  }
  counters_->compaction_bytes_written.fetch_add(bytes_written,
                                                std::memory_order_relaxed);
  counters_->compaction_filter_drops.fetch_add(filter_drops,
                                               std::memory_order_relaxed);
  counters_->compaction_range_drops.fetch_add(range_drops,
                                              std::memory_order_relaxed);
  return s;
}

Status DBImpl::RunManualCompaction(int level, const Slice* begin,
                                   const Slice* end, bool in_place) {
  MutexLock lock(&mu_);
  // One manual compaction at a time.
  while (manual_compaction_ != nullptr && bg_error_.ok()) {
    bg_done_cv_.Wait(&mu_);
  }
  if (!bg_error_.ok()) return bg_error_;
  ManualCompaction manual;
  manual.level = level;
  manual.begin = begin;
  manual.end = end;
  manual.in_place = in_place;
  manual_compaction_ = &manual;
  bg_work_cv_.SignalAll();
  // While a compaction thread works on the request without mu_ it may
  // still write to it: this frame must outlive that, error or not.
  while (!manual.done &&
         (manual.running || (bg_error_.ok() && !shutting_down_))) {
    bg_done_cv_.Wait(&mu_);
  }
  manual_compaction_ = nullptr;
  bg_done_cv_.SignalAll();
  if (!bg_error_.ok()) return bg_error_;
  if (!manual.done) return Status::IOError("database closing");
  return manual.status;
}

Status DBImpl::CompactRange(const Slice* begin, const Slice* end) {
  if (read_only_) {
    return Status::NotSupported(dbname_, "database is open read-only");
  }
  Status s = Flush();
  if (!s.ok()) return s;
  int max_level_with_files = 1;
  bool bottom_had_files = false;
  {
    MutexLock guard(&mu_);
    std::shared_ptr<const Version> v = versions_->current();
    for (int level = 1; level < kNumLevels; level++) {
      if (v->NumFiles(level) > 0) max_level_with_files = level;
    }
    bottom_had_files = v->NumFiles(max_level_with_files) > 0;
  }
  for (int level = 0; s.ok() && level < max_level_with_files; level++) {
    s = RunManualCompaction(level, begin, end, /*in_place=*/false);
  }
  // The bottom level's own segments were only rewritten where something
  // above overlapped them; rewrite the rest too, so that tombstones that
  // reached the bottom and entries a compaction filter now rejects go.
  if (s.ok() && (bottom_had_files || options_.compaction_filter != nullptr)) {
    s = RunManualCompaction(max_level_with_files, begin, end,
                            /*in_place=*/true);
  }
  return s;
}

std::string DBImpl::LevelsTable() {
  std::shared_ptr<const Version> v;
  {
    MutexLock guard(&mu_);
    v = versions_->current();
  }
  // Filter columns: bits per key over the level's segments; the
  // false-positive rate a lookup of an absent key pays there, in theory
  // ("fp") and as measured since Open ("fp_meas", "-" before any such
  // lookup): the sum over level 0's segments (each is probed), the mean
  // over a deeper level's (one is probed; theory weighted by entries, the
  // measurement by lookups); the lookups of absent keys the level's filters
  // answered ("probes"); and the policies that wrote them ("filter", one
  // name or several joined by '+', "-" for none), last so that the columns
  // before it stay fixed.
  const LevelTargets targets(options_, *v);
  std::string r;
  char line[512];
  std::snprintf(line, sizeof(line),
                "%-5s %9s %12s %14s %14s %7s %8s %9s %9s %10s %s\n", "level",
                "segments", "entries", "bytes", "target", "score", "bits/key",
                "fp", "fp_meas", "probes", "filter");
  r += line;
  for (int level = 0; level < kNumLevels; level++) {
    const uint64_t target = targets.MaxBytes(level);
    uint64_t entries = 0, filter_bytes = 0, filtered_entries = 0;
    uint64_t probes = 0, false_positives = 0;
    double fp = 0, fp_measured_sum = 0;
    std::vector<std::string> kinds;
    for (const auto& f : v->files(level)) {
      entries += f->num_entries;
      const SegmentFilter* filter =
          f->meta != nullptr ? f->meta->filter.get() : nullptr;
      if (filter == nullptr) continue;
      filter_bytes += filter->size();
      filtered_entries += f->num_entries;
      const double rate = filter->TheoreticalFpRate();
      fp += level == 0 ? rate : rate * static_cast<double>(f->num_entries);
      const uint64_t fps = f->counters.Sum(kSegmentFalsePositives);
      const uint64_t n = f->counters.Sum(kSegmentFilterNegatives) + fps;
      probes += n;
      false_positives += fps;
      if (n > 0) {
        fp_measured_sum += static_cast<double>(fps) / static_cast<double>(n);
      }
      const std::string kind = filter->policy().Name();
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
        kinds.push_back(kind);
      }
    }
    if (level > 0 && filtered_entries > 0) {
      fp /= static_cast<double>(filtered_entries);
    }
    const double bits_per_key = filtered_entries == 0
                                    ? 0.0
                                    : 8.0 * static_cast<double>(filter_bytes) /
                                          static_cast<double>(filtered_entries);
    char measured[32] = "-";
    if (probes > 0) {
      std::snprintf(measured, sizeof(measured), "%.6f",
                    level == 0 ? fp_measured_sum
                               : static_cast<double>(false_positives) /
                                     static_cast<double>(probes));
    }
    std::sort(kinds.begin(), kinds.end());
    std::string kind_column;
    for (const std::string& k : kinds) {
      kind_column += (kind_column.empty() ? "" : "+") + k;
    }
    if (kind_column.empty()) kind_column = "-";
    std::snprintf(line, sizeof(line),
                  "L%-4d %9d %12" PRIu64 " %14" PRIu64 " %14" PRIu64
                  " %7.2f %8.2f %9.6f %9s %10" PRIu64 " %s\n",
                  level, v->NumFiles(level), entries, v->LevelBytes(level),
                  target, targets.Score(*v, level), bits_per_key, fp, measured,
                  probes, kind_column.c_str());
    r += line;
  }
  return r;
}

}  // namespace bloomkv
