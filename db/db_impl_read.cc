// DBImpl, reads: Get (memtable, immutable memtable, then the version's
// candidate segments through SegmentLookup), iterators and snapshots. None
// of them takes the DB mutex on the way to an answer, except to register or
// release a snapshot.
#include "db/db_impl.h"
#include "db/compaction.h"
#include "db/db_iter.h"
#include "db/merging_iterator.h"
#include "db/segment_lookup.h"
#include "util/hash.h"

namespace bloomkv {

struct DBImpl::SnapshotImpl final : public Snapshot {
  explicit SnapshotImpl(std::list<SequenceNumber>::iterator p) : pos(p) {}
  SequenceNumber sequence() const { return *pos; }
  std::list<SequenceNumber>::iterator pos;
};

void DBImpl::InstallReadView() {
  read_views_.Install(new ReadView(mem_, imm_, versions_->current()));
}

SequenceNumber DBImpl::ReadSequence(const ReadOptions& options) const {
  // Read after pinning the view: every write up to this sequence is in the
  // view's memtables (the sequence is published after the insert, and the
  // view holding that memtable was installed before it). Not checked by
  // clang: the one use of versions_ without mu_, an atomic load
  // (VersionSet::last_sequence).
  return options.snapshot != nullptr
             ? static_cast<const SnapshotImpl*>(options.snapshot)->sequence()
             : versions_->last_sequence();
}

SegmentReadOptions DBImpl::SegmentOptionsFor(const ReadOptions& options) const {
  SegmentReadOptions sro;
  sro.verify_checksums = options.verify_checksums || options_.paranoid_checks;
  sro.fill_cache = options.fill_cache;
  return sro;
}

Status DBImpl::LookUp(const ReadView& view, const SegmentReadOptions& sro,
                      const Slice& key, uint64_t hash, SequenceNumber snapshot,
                      bool latest, std::string* value, GetTrace* trace,
                      size_t thread) {
  bool deleted = false;
  bool found = false;
  SequenceNumber sequence = 0;
  MemTable* imm = view.imm();
  AnswerCache* answers = latest ? answer_cache_.get() : nullptr;
  if (answers != nullptr) answers->Prefetch(hash);
  if (view.mem()->Get(key, snapshot, value, &deleted, &sequence)) {
    found = true;
    if (trace != nullptr) trace->found_in_memtable = true;
  } else if (imm != nullptr &&
             imm->Get(key, snapshot, value, &deleted, &sequence)) {
    found = true;
    if (trace != nullptr) trace->found_in_immutable = true;
  }
  Status s;
  if (found) {
    read_counters_.ShardFor(thread).Add(kMemtableHits, 1);
  } else {
    // Every entry of every segment is at or below the latest sequence, so
    // a read of the latest state sees each segment's newest entry for the
    // key: what the row cache and the answer cache keep.
    SegmentLookup lookup(table_cache_.get(), sro, key, hash, snapshot, value,
                         trace, thread, latest ? row_cache_.get() : nullptr,
                         answers, view.version().answers_epoch());
    view.version().ForEachCandidate(
        key, hash, [&lookup](const FileMetaData& f, int level, bool in_range) {
          return lookup.Consult(f, level, in_range);
        });
    lookup.Finish(&read_counters_.ShardFor(thread));
    s = lookup.status();
    found = lookup.found();
    deleted = lookup.deleted();
    sequence = lookup.found_sequence();
  }
  if (!s.ok()) {
    if (trace != nullptr) trace->result = s.ToString();
    return s;
  }
  if (found && !deleted) {
    if (!CoveredByRangeTombstone(view, key, sequence, snapshot)) {
      if (trace != nullptr) trace->result = "found";
      return Status::OK();
    }
    value->clear();
    if (trace != nullptr) trace->result = "deleted by a range";
    return Status::NotFound("");
  }
  if (trace != nullptr) trace->result = deleted ? "deleted" : "not found";
  return Status::NotFound("");
}

bool DBImpl::CoveredByRangeTombstone(const ReadView& view, const Slice& key,
                                     SequenceNumber sequence,
                                     SequenceNumber snapshot) {
  // In a database that never deleted a range: one null test and two
  // atomic loads.
  const auto& flushed = view.version().range_tombstones();
  if (flushed != nullptr && flushed->Covers(key, sequence, snapshot)) {
    return true;
  }
  for (const MemTable* mem : {view.mem(), view.imm()}) {
    if (mem != nullptr && mem->HasRangeTombstones() &&
        mem->range_tombstones()->Covers(key, sequence, snapshot)) {
      return true;
    }
  }
  return false;
}

std::shared_ptr<const RangeTombstoneSet> DBImpl::RangeTombstonesOf(
    const ReadView& view, SequenceNumber snapshot) {
  return RangeTombstoneSet::Merge(
      {view.version().range_tombstones(), view.mem()->range_tombstones(),
       view.imm() != nullptr ? view.imm()->range_tombstones() : nullptr},
      snapshot);
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
  const uint64_t gets = read_counters_.ShardFor(thread).Add(kGets, 1);
  ReadView* view = read_views_.Acquire(thread);
  s = LookUp(*view, SegmentOptionsFor(options), key, hash,
             ReadSequence(options), options.snapshot == nullptr, value, trace,
             thread);
  if (Level0ReadCheckDue(gets, 1)) MaybeCompactLevel0ForReads(view->version());
  read_views_.Release(thread, view);
  return s;
}

std::vector<Status> DBImpl::MultiGet(const ReadOptions& options,
                                     const std::vector<Slice>& keys,
                                     std::vector<std::string>* values) {
  values->resize(keys.size());
  std::vector<Status> statuses(keys.size());
  const size_t thread = ThisThreadIndex();
  const uint64_t gets = read_counters_.ShardFor(thread).Add(kGets, keys.size());
  ReadView* view = read_views_.Acquire(thread);
  const SequenceNumber snapshot = ReadSequence(options);
  const SegmentReadOptions sro = SegmentOptionsFor(options);

  // Hinting each batch's data blocks to the device first (posix_fadvise
  // WILLNEED) was measured and dropped: at 10^7 links from a cold page cache
  // hits were no faster (19.9 against 19.7 k/s) and the Zipf-skewed mix,
  // mostly cached, three times slower, the hint being a system call per key.
  for (size_t i = 0; i < keys.size(); i++) {
    statuses[i] = ValidateKey(keys[i]);
    if (!statuses[i].ok()) continue;
    statuses[i] = LookUp(*view, sro, keys[i], KeyHash(keys[i]), snapshot,
                         options.snapshot == nullptr, &(*values)[i], nullptr,
                         thread);
  }
  if (Level0ReadCheckDue(gets, keys.size())) {
    MaybeCompactLevel0ForReads(view->version());
  }
  read_views_.Release(thread, view);
  return statuses;
}

void DBImpl::MaybeCompactLevel0ForReads(const Version& v) {
  // A read-only database runs no compaction to ask.
  if (read_only_ || !options_.read_triggered_compaction || v.NumFiles(0) == 0) {
    return;
  }
  // Read without mu_: v is pinned and immutable, its counters atomic.
  if (LevelTargets(options_, v).Level0Score(v) < 1.0) return;
  MutexLock lock(&mu_);
  level0_for_reads_ = true;
  bg_work_cv_.SignalAll();
}

ReadView* DBImpl::RefCurrentView() {
  const size_t thread = ThisThreadIndex();
  ReadView* view = read_views_.Acquire(thread);
  view->Ref();
  read_views_.Release(thread, view);
  return view;
}

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options) {
  // The iterator holds its own reference to the view for its lifetime.
  ReadView* view = RefCurrentView();
  const SequenceNumber sequence = ReadSequence(options);  // after pinning
  // The cleanup runs after the merged iterator is gone, so the memtables and
  // segments it reads stay alive exactly as long as needed.
  return NewDBIterator(
      MergedIterator(*view, SegmentOptionsFor(options)), sequence,
      [view] { view->Unref(); }, options.iterate_lower_bound,
      options.iterate_upper_bound, RangeTombstonesOf(*view, sequence));
}

Status DBImpl::ForEachKeyVersion(
    const Slice* begin, const Slice* end,
    const std::function<bool(const KeyVersion&)>& fn) {
  ReadView* view = RefCurrentView();
  ReadOptions ro;
  ro.fill_cache = false;  // a dump reads each block once
  Status s;
  {
    std::unique_ptr<Iterator> it = MergedIterator(*view, SegmentOptionsFor(ro));
    if (begin != nullptr) {
      it->Seek(MakeInternalKey(*begin, kMaxSequenceNumber, kValueTypeForSeek));
    } else {
      it->SeekToFirst();
    }
    KeyVersion v;
    for (; it->Valid(); it->Next()) {
      ParsedInternalKey parsed;
      if (!ParseInternalKey(it->key(), &parsed)) {
        s = Status::Corruption("key versions: malformed internal key",
                               it->key().ToEscapedString());
        break;
      }
      if (end != nullptr && parsed.user_key.compare(*end) >= 0) break;
      v.user_key.assign(parsed.user_key.data(), parsed.user_key.size());
      v.sequence = parsed.sequence;
      v.deleted = parsed.type == ValueType::kDeletion;
      if (v.deleted) {
        v.value.clear();
      } else {
        v.value.assign(it->value().data(), it->value().size());
      }
      if (!fn(v)) break;
    }
    if (s.ok()) s = it->status();
  }
  view->Unref();
  return s;
}

std::unique_ptr<Iterator> DBImpl::MergedIterator(
    const ReadView& view, const SegmentReadOptions& sro) {
  std::vector<std::unique_ptr<Iterator>> children;
  children.emplace_back(view.mem()->NewIterator());
  if (view.imm() != nullptr) children.emplace_back(view.imm()->NewIterator());
  // Level-0 segments overlap: each is a child of the merge, open for the
  // iterator's life. A deeper level is one child that opens its segments
  // one at a time, so an iterator pins at most one segment per level there.
  for (const auto& f : view.version().files(0)) {
    children.push_back(table_cache_->NewIterator(*f, sro));
  }
  for (int level = 1; level < kNumLevels; level++) {
    const Version::FileList& files = view.version().files(level);
    if (!files.empty()) {
      children.push_back(table_cache_->NewLevelIterator(files, sro));
    }
  }
  return NewMergingIterator(std::move(children));
}

const Snapshot* DBImpl::GetSnapshot() {
  MutexLock guard(&mu_);
  snapshots_.push_back(versions_->last_sequence());
  return new SnapshotImpl(std::prev(snapshots_.end()));
}

void DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  if (snapshot == nullptr) return;
  const auto* impl = static_cast<const SnapshotImpl*>(snapshot);
  {
    MutexLock guard(&mu_);
    snapshots_.erase(impl->pos);
  }
  delete impl;
}

}  // namespace bloomkv
