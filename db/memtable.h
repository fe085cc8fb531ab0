// MemTable: the in-memory, sorted buffer of recent writes.
//
// Every write becomes one entry keyed by its internal key (user key,
// sequence number, type; see table/internal_key.h), so all versions of a
// user key are kept, newest first, until the memtable is flushed to a
// segment. Entries are never removed; the whole memtable is freed at once.
//
// Lifetime: reference-counted with Ref()/Unref(), because the DB, readers
// running Get(), iterators and the flush all hold on to a memtable whose
// place in the DB may change meanwhile. A new MemTable has no references:
// its creator calls Ref() first. The last Unref() deletes it. Iterators
// hold their own reference, so a memtable lives at least as long as its
// iterators.
//
// Range tombstones (DeleteRange) are kept beside the entries, not among
// them: they cover keys rather than being one, so iterators over the
// entries never meet them. range_tombstones() hands out an immutable set of
// them, rebuilt only after one was added.
//
// Thread-safety: Add() and AddRangeTombstone() require external
// synchronization (one writer at a time). Get(), NewIterator(),
// range_tombstones(), ApproximateMemoryUsage(), NumEntries(), Empty(),
// Ref() and Unref() may be called from any thread, concurrently with the
// writer; a reader sees every write that completed before it started.
#ifndef BLOOMKV_DB_MEMTABLE_H_
#define BLOOMKV_DB_MEMTABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/iterator.h"
#include "bloomkv/slice.h"
#include "db/range_tombstones.h"
#include "db/skiplist.h"
#include "table/internal_key.h"
#include "util/arena.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace bloomkv {

class MemTable {
 public:
  MemTable();
  MemTable(const MemTable&) = delete;
  MemTable& operator=(const MemTable&) = delete;

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Deletes the memtable when the last reference goes.
  // REQUIRES: the caller holds a reference.
  void Unref();

  // Adds the entry (user_key, seq, type) -> value. For a deletion, value is
  // conventionally empty (it is stored as given).
  // REQUIRES: external synchronization among writers; seq <=
  // kMaxSequenceNumber; no entry with the same user_key and seq was added;
  // user_key.size() + 8 and value.size() fit in 32 bits (the DB bounds them
  // far lower).
  void Add(SequenceNumber seq, ValueType type, const Slice& user_key,
           const Slice& value);

  // Records that the keys in [begin, end) written before seq are deleted.
  // REQUIRES: external synchronization among writers; begin < end; seq is
  // larger than every sequence added before.
  void AddRangeTombstone(SequenceNumber seq, const Slice& begin,
                         const Slice& end);

  // Looks up the newest entry for user_key with sequence <= snapshot
  // (snapshots above kMaxSequenceNumber mean "everything"). Returns false if
  // there is none. Otherwise returns true and sets *deleted to whether the
  // entry is a tombstone, and *sequence (unless null) to its sequence; for
  // a value, stores it in *value unless value is nullptr. Range tombstones
  // are not consulted (see range_tombstones()). Allocates nothing unless
  // user_key is long or *value must grow.
  // REQUIRES: deleted != nullptr
  bool Get(const Slice& user_key, SequenceNumber snapshot, std::string* value,
           bool* deleted, SequenceNumber* sequence = nullptr) const;

  // The range tombstones added so far, or null if there are none (one
  // atomic load then).
  std::shared_ptr<const RangeTombstoneSet> range_tombstones() const;
  size_t NumRangeTombstones() const {
    return num_range_tombstones_.load(std::memory_order_acquire);
  }
  bool HasRangeTombstones() const { return NumRangeTombstones() != 0; }

  // An iterator over all entries: key() is the internal key, value() the
  // value. Seek targets must be internal keys (at least 8 bytes; a shorter
  // one leaves the iterator invalid with InvalidArgument status). The
  // iterator holds a reference on the memtable. The caller owns the result.
  // REQUIRES: the caller holds a reference.
  Iterator* NewIterator();

  // Bytes held by the memtable's arena (keys, values and index) and by its
  // range tombstones.
  size_t ApproximateMemoryUsage() const {
    return arena_.MemoryUsage() +
           range_bytes_.load(std::memory_order_relaxed);
  }
  uint64_t NumEntries() const {
    return num_entries_.load(std::memory_order_relaxed);
  }
  // No entries and no range tombstones.
  bool Empty() const { return NumEntries() == 0 && !HasRangeTombstones(); }
  // The sequence of the first entry or range tombstone added; 0 if none.
  SequenceNumber smallest_sequence() const {
    return smallest_sequence_.load(std::memory_order_relaxed);
  }

 private:
  class MemTableIterator;

  // Orders entries (pointers to their encoding in the arena, see
  // memtable.cc) by internal key.
  struct KeyComparator {
    int operator()(const char* a, const char* b) const;
  };
  using Table = SkipList<const char*, KeyComparator>;

  ~MemTable();  // Only Unref() deletes.

  std::atomic<int> refs_{0};
  std::atomic<uint64_t> num_entries_{0};
  std::atomic<SequenceNumber> smallest_sequence_{0};
  std::atomic<size_t> num_range_tombstones_{0};
  // Memory of the range tombstones: each is kept twice, as added and in the
  // set given to readers.
  std::atomic<size_t> range_bytes_{0};
  mutable Mutex range_mu_;
  std::vector<RangeTombstone> range_added_ GUARDED_BY(range_mu_);
  // Built from range_added_ when a reader finds it stale.
  mutable std::shared_ptr<const RangeTombstoneSet> range_set_
      GUARDED_BY(range_mu_);
  Arena arena_;
  Table table_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_MEMTABLE_H_
