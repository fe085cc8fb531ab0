// VersionEdit: one change to the set of live segments, as recorded in the
// manifest; FileMetaData: what the database knows about one segment.
//
// The manifest is a log (docs/wal_format.md framing) of encoded edits;
// replaying them in order rebuilds the current version. The encoding is
// documented in docs/manifest_format.md.
// Thread-safety: VersionEdit requires external synchronization.
// FileMetaData's persistent fields are immutable once the file is part of a
// version; its counters are sharded per thread and updated by concurrent
// readers.
#ifndef BLOOMKV_DB_VERSION_EDIT_H_
#define BLOOMKV_DB_VERSION_EDIT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"
#include "db/range_tombstones.h"
#include "table/internal_key.h"
#include "util/sharded_counter.h"

namespace bloomkv {

class SegmentFilter;
struct SegmentMeta;
struct TableCacheEntry;

constexpr int kNumLevels = 7;

// Filter outcomes of lookups that reached one segment, for its measured
// false-positive rate. Every Get bumps them, from any thread: sharded, so
// that threads reading the same segment do not share a written line.
enum SegmentCounter : size_t {
  kSegmentLookups,  // passed the key-range check
  kSegmentFilterNegatives,
  kSegmentFilterPositives,
  kSegmentFalsePositives,  // positive, key not there
  kNumSegmentCounters
};
using SegmentCounters = ShardedCounters<kNumSegmentCounters>;

struct FileMetaData {
  // Persistent, in the manifest.
  uint64_t number = 0;
  uint64_t file_size = 0;
  uint64_t num_entries = 0;
  std::string smallest;  // internal key
  std::string largest;   // internal key
  // Every range tombstone with a sequence <= this one has been applied to
  // the file: it holds no entry such a tombstone covers (0: none known).
  // What lets the manifest forget a tombstone (db/range_tombstones.h).
  SequenceNumber range_deletions_applied = 0;

  // Runtime only, set by TableCache::Load before the file is published in
  // a version, never changed after: readers use them without locks. The
  // file itself is opened and closed by the table cache; its metadata (the
  // properties, index block and filter) stays here, in memory for the
  // segment's whole life, so that a lookup the filter rules out never
  // touches the table cache, and a file reopened for a hit reads only the
  // data block.
  // Paged (SegmentMeta::Paged) past Options::filter_and_index_memory_limit.
  std::shared_ptr<const SegmentMeta> meta;
  // meta->filter when it is resident, one pointer nearer for a lookup's
  // first step; null: none usable, or paged (meta->filter says which).
  std::shared_ptr<const SegmentFilter> filter;
  Status open_status;     // not OK: the segment cannot be read, and why
  uint64_t cache_id = 0;  // the file's id in the block cache
  // The file's place in the table cache (null until Load succeeds): a
  // lookup pins the open file through it with one atomic increment.
  std::shared_ptr<TableCacheEntry> table_cache_entry;
  mutable SegmentCounters counters;  // updated through const pointers
};

class VersionEdit {
 public:
  void Clear() { *this = VersionEdit(); }

  void SetLogNumber(uint64_t n) {
    has_log_number_ = true;
    log_number_ = n;
  }
  void SetNextFileNumber(uint64_t n) {
    has_next_file_number_ = true;
    next_file_number_ = n;
  }
  void SetLastSequence(SequenceNumber s) {
    has_last_sequence_ = true;
    last_sequence_ = s;
  }
  // REQUIRES: f's persistent fields are set.
  void AddFile(int level, std::shared_ptr<FileMetaData> f) {
    new_files_.emplace_back(level, std::move(f));
  }
  void RemoveFile(int level, uint64_t number) {
    deleted_files_.insert({level, number});
  }
  // Records that log `number` may hold acknowledged writes, and that its
  // first synced_size bytes are durable (0: none known yet). Recovery
  // requires every recorded log not older than the log number to exist
  // with at least that many bytes.
  void AddLog(uint64_t number, uint64_t synced_size) {
    logs_.emplace_back(number, synced_size);
  }

  // Records a range tombstone flushed from a memtable.
  void AddRangeTombstone(RangeTombstone t) {
    range_tombstones_.push_back(std::move(t));
  }
  // Forgets the range tombstone of that sequence: nothing it covers is
  // left.
  void RemoveRangeTombstone(SequenceNumber sequence) {
    removed_range_tombstones_.insert(sequence);
  }

  // Declares that every user key's latest answer (its newest value or
  // deletion at or below the last sequence) is the same before and after
  // this edit: a compaction that merges entries and drops only what no read
  // of the latest state can see. Versions then share their answers epoch
  // (Version::answers_epoch). Not stored in the manifest.
  // REQUIRES: the edit adds and retires no range tombstone.
  void SetPreservesAnswers() { preserves_answers_ = true; }
  bool preserves_answers() const { return preserves_answers_; }

  void EncodeTo(std::string* dst) const;
  // Corruption (with a description of the problem) if src is malformed.
  Status DecodeFrom(const Slice& src);
  std::string DebugString() const;

  bool has_log_number() const { return has_log_number_; }
  uint64_t log_number() const { return log_number_; }
  bool has_next_file_number() const { return has_next_file_number_; }
  uint64_t next_file_number() const { return next_file_number_; }
  bool has_last_sequence() const { return has_last_sequence_; }
  SequenceNumber last_sequence() const { return last_sequence_; }
  const std::vector<std::pair<int, std::shared_ptr<FileMetaData>>>& new_files()
      const {
    return new_files_;
  }
  const std::set<std::pair<int, uint64_t>>& deleted_files() const {
    return deleted_files_;
  }
  const std::vector<RangeTombstone>& range_tombstones() const {
    return range_tombstones_;
  }
  const std::set<SequenceNumber>& removed_range_tombstones() const {
    return removed_range_tombstones_;
  }
  // (number, synced size) of the logs this edit records.
  const std::vector<std::pair<uint64_t, uint64_t>>& logs() const {
    return logs_;
  }

 private:
  bool has_log_number_ = false;
  bool has_next_file_number_ = false;
  bool has_last_sequence_ = false;
  bool preserves_answers_ = false;
  uint64_t log_number_ = 0;
  uint64_t next_file_number_ = 0;
  SequenceNumber last_sequence_ = 0;
  std::set<std::pair<int, uint64_t>> deleted_files_;
  std::vector<std::pair<int, std::shared_ptr<FileMetaData>>> new_files_;
  std::vector<std::pair<uint64_t, uint64_t>> logs_;
  std::vector<RangeTombstone> range_tombstones_;
  std::set<SequenceNumber> removed_range_tombstones_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_VERSION_EDIT_H_
