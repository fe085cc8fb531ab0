// RangeTombstone: what DB::DeleteRange records, "every user key in
// [begin, end) written before sequence `sequence` is deleted";
// RangeTombstoneSet: a searchable, immutable collection of them.
//
// A tombstone is a fact about the past, never undone, so a set may hold
// any tombstones without being wrong; it only costs reads. Where they live:
// in the memtable that received them until it is flushed, then in the
// manifest (VersionEdit tags 7 and 8, docs/manifest_format.md), from where
// every Version holds the flushed ones as one set. They are not written into
// segments: a segment's entries stay as they were until a compaction drops
// the covered ones, which is also what lets the manifest forget a tombstone
// (DBImpl::RetireRangeTombstones).
//
// An entry (key, s) is hidden from a read at snapshot S exactly when some
// tombstone with begin <= key < end has s < sequence <= S. A Get finds the
// newest entry of its key as usual, then asks the sets of its memtables and
// version for the largest covering sequence at or below its snapshot.
//
// Search: the set cuts the key space at every begin and end into fragments,
// each covered by the same tombstones; a lookup is a binary search for the
// fragment, then one for the first of its sequences (held in descending
// order) at or below the snapshot. n tombstones make at most 2n fragments;
// nested or overlapping ones repeat their sequence in every fragment they
// cover, so the worst case (every tombstone covering every other) holds
// n^2 sequences. DeleteRange is for dropping whole ranges now and then, not
// for deleting keys one at a time.
//
// Thread-safety: RangeTombstoneSet is immutable after construction.
#ifndef BLOOMKV_DB_RANGE_TOMBSTONES_H_
#define BLOOMKV_DB_RANGE_TOMBSTONES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/slice.h"
#include "table/internal_key.h"

namespace bloomkv {

struct RangeTombstone {
  std::string begin;  // inclusive user key
  std::string end;    // exclusive user key; begin < end
  SequenceNumber sequence = 0;

  bool Overlaps(const Slice& smallest, const Slice& largest) const {
    // [begin, end) meets [smallest, largest].
    return Slice(begin).compare(largest) <= 0 && smallest.compare(end) < 0;
  }
  bool operator==(const RangeTombstone&) const = default;
};

class RangeTombstoneSet {
 public:
  // REQUIRES: begin < end for every tombstone; sequences are distinct.
  explicit RangeTombstoneSet(std::vector<RangeTombstone> tombstones);
  RangeTombstoneSet(const RangeTombstoneSet&) = delete;
  RangeTombstoneSet& operator=(const RangeTombstoneSet&) = delete;

  // The tombstones, ordered by sequence.
  const std::vector<RangeTombstone>& tombstones() const { return tombstones_; }
  bool empty() const { return tombstones_.empty(); }
  // 0 when empty.
  SequenceNumber smallest_sequence() const {
    return tombstones_.empty() ? 0 : tombstones_.front().sequence;
  }

  // The largest sequence <= snapshot of a tombstone covering user_key; 0 if
  // none does.
  SequenceNumber CoveringSequence(const Slice& user_key,
                                  SequenceNumber snapshot) const;

  // Whether an entry of user_key with sequence entry_sequence is deleted as
  // seen at snapshot.
  bool Covers(const Slice& user_key, SequenceNumber entry_sequence,
              SequenceNumber snapshot) const {
    return CoveringSequence(user_key, snapshot) > entry_sequence;
  }

  // A set of the tombstones of `sets` (null entries allowed) with sequence
  // <= snapshot; null when there are none. When only one set has any and
  // the snapshot hides none of them, that set itself, not a copy.
  static std::shared_ptr<const RangeTombstoneSet> Merge(
      const std::vector<std::shared_ptr<const RangeTombstoneSet>>& sets,
      SequenceNumber snapshot);

 private:
  std::vector<RangeTombstone> tombstones_;
  // Fragment i is [bounds_[i], bounds_[i + 1]), covered by the tombstones
  // whose sequences are seqs_[offsets_[i] .. offsets_[i + 1]), descending.
  std::vector<std::string> bounds_;
  std::vector<uint32_t> offsets_;
  std::vector<SequenceNumber> seqs_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_RANGE_TOMBSTONES_H_
