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
// Thread-safety: Add() requires external synchronization (one writer at a
// time). Get(), NewIterator(), ApproximateMemoryUsage(), NumEntries(),
// Empty(), Ref() and Unref() may be called from any thread, concurrently
// with Add(); a reader sees every Add() that completed before it started.
#ifndef BLOOMKV_DB_MEMTABLE_H_
#define BLOOMKV_DB_MEMTABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "bloomkv/iterator.h"
#include "bloomkv/slice.h"
#include "db/skiplist.h"
#include "table/internal_key.h"
#include "util/arena.h"

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

  // Looks up the newest entry for user_key with sequence <= snapshot
  // (snapshots above kMaxSequenceNumber mean "everything"). Returns false if
  // there is none. Otherwise returns true and sets *deleted to whether the
  // entry is a tombstone; for a value, stores it in *value unless value is
  // nullptr. Allocates nothing unless user_key is long or *value must grow.
  // REQUIRES: deleted != nullptr
  bool Get(const Slice& user_key, SequenceNumber snapshot, std::string* value,
           bool* deleted) const;

  // An iterator over all entries: key() is the internal key, value() the
  // value. Seek targets must be internal keys (at least 8 bytes; a shorter
  // one leaves the iterator invalid with InvalidArgument status). The
  // iterator holds a reference on the memtable. The caller owns the result.
  // REQUIRES: the caller holds a reference.
  Iterator* NewIterator();

  // Bytes held by the memtable's arena (keys, values and index).
  size_t ApproximateMemoryUsage() const { return arena_.MemoryUsage(); }
  uint64_t NumEntries() const {
    return num_entries_.load(std::memory_order_relaxed);
  }
  bool Empty() const { return NumEntries() == 0; }

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
  Arena arena_;
  Table table_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_MEMTABLE_H_
