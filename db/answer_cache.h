// AnswerCache: the latest answer of the segments for popular keys
// (Options::answer_cache_capacity). A lookup asks it once, at the first
// segment whose filter lets the key through (SegmentLookup), so that a key
// read again costs one slot instead of its index, block and value
// searches, and a key every filter rules out never touches it.
//
// A slot is 256 bytes, direct-mapped by the key's hash, and holds one key's
// answer (a value, a deletion, or that no segment holds the key) with the
// sequence of the entry found, stamped with the answers epoch of the
// version it came from (Version::answers_epoch). Versions of one epoch
// give every key the same latest answer, so a stamp that differs from the
// reader's version's makes the slot a miss: a flush or an ingest empties
// the cache all at once, a compaction does not.
//
// Reads take no lock and write nothing shared once a slot is marked
// referenced: each slot is a sequence lock (odd while written) whose
// readers copy, then check the count. A writer that finds the slot being
// written gives up. A key gets in on its second miss in a row at its slot
// (the slot remembers the last missed key's tag), and displaces only an
// answer that has not been read since the last key knocked, so reads spread
// evenly over far more keys than it holds neither flush the popular ones
// nor pay an insertion each.
//
// Thread-safe.
#ifndef BLOOMKV_DB_ANSWER_CACHE_H_
#define BLOOMKV_DB_ANSWER_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "bloomkv/slice.h"
#include "table/internal_key.h"
#include "table/segment_reader.h"

namespace bloomkv {

class AnswerCache {
 public:
  // Bytes of one slot; also what capacity is divided by.
  static constexpr size_t kSlotBytes = 256;
  // Longest key plus value a slot holds (what its 40-byte header leaves);
  // longer answers are not kept.
  static constexpr size_t kMaxPayload = kSlotBytes - 40;

  // capacity: bytes, rounded down to a power of two slots.
  // REQUIRES: capacity >= 2 * kSlotBytes.
  explicit AnswerCache(size_t capacity);
  AnswerCache(const AnswerCache&) = delete;
  AnswerCache& operator=(const AnswerCache&) = delete;
  ~AnswerCache();

  struct Answer {
    LookupResult result;      // kFound, kDeleted or kNotFound
    SequenceNumber sequence;  // of the entry found; 0 for kNotFound
  };

  // Asks for the first line of the slot of `hash` (the key's KeyHash),
  // what a miss reads, to be brought into the CPU cache, so that its miss
  // overlaps the memtable search and the filters'. The rest of a slot
  // matters only to a hit, and a popular answer's lines stay cached.
  void Prefetch(uint64_t hash) const { __builtin_prefetch(SlotFor(hash)); }

  // The answer kept for `key` under `epoch`: true, with *answer set and,
  // for kFound, the value in *value. False otherwise (*value untouched).
  bool Lookup(const Slice& key, uint64_t hash, uint64_t epoch, Answer* answer,
              std::string* value);

  // Offers the answer a search of the segments of a version of `epoch`
  // found for a key that Lookup missed. value: the value for kFound.
  void Offer(const Slice& key, uint64_t hash, uint64_t epoch,
             const Answer& answer, const Slice& value);

  // Bytes of memory held.
  size_t memory() const { return num_slots_ * kSlotBytes; }
  // The slot a hash maps to, in [0, memory() / kSlotBytes).
  size_t TEST_SlotIndex(uint64_t hash) const { return SlotFor(hash) - slots_; }

 private:
  // The first line holds what a miss reads: the sequence count, the
  // admission state and the header, then the first bytes of the key.
  struct alignas(128) Slot {
    static constexpr size_t kDataWords = kMaxPayload / 8;

    std::atomic<uint32_t> version{0};  // odd while the fields below change
    // Admission, outside the sequence lock: the tag of the last key that
    // missed here, and whether the answer was read since a key last knocked.
    std::atomic<uint32_t> knock{0};
    std::atomic<uint32_t> referenced{0};
    uint32_t unused = 0;
    // Guarded by version; atomics so that a reader may copy them while a
    // writer changes them (the count then tells the reader to drop its copy).
    std::atomic<uint64_t> epoch{0};  // 0: empty (epochs start at 1)
    std::atomic<uint64_t> meta{0};   // sequence << 8 | LookupResult
    std::atomic<uint64_t> sizes{0};  // key size | value size << 16 | tag << 32
    std::atomic<uint64_t> data[kDataWords];  // the key, then the value
  };
  static_assert(sizeof(Slot) == kSlotBytes &&
                offsetof(Slot, data) == kSlotBytes - kMaxPayload);

  Slot* SlotFor(uint64_t hash) const {
    return &slots_[(hash * 0x9E3779B97F4A7C15ull) >> shift_];
  }

  const unsigned shift_;
  const size_t num_slots_;
  Slot* const slots_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_ANSWER_CACHE_H_
