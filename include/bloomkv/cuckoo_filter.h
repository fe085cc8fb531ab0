// CuckooFilter: an approximate set that supports deletion (Fan et al.,
// "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014), with the
// operations of RedisBloom's CF.* commands: Add (CF.ADD), AddIfAbsent
// (CF.ADDNX), Delete (CF.DEL), Count (CF.COUNT) and MightContain
// (CF.EXISTS).
//
//   CuckooFilterOptions options;
//   options.capacity = 1'000'000;
//   options.fp_rate = 0.001;
//   CuckooFilter f;
//   Status s = CuckooFilter::Create(options, &f);
//   s = f.Add("abc123");           // Status::Full if there is no room
//   f.Delete("abc123");            // e.g. when a short link expires
//
// Each key is a fingerprint of `fingerprint_bits` bits (never 0) stored in
// one of two buckets of `bucket_size` slots; the second bucket is derived
// from the first and the fingerprint alone, so a fingerprint can move
// between its two buckets without the key ("partial-key cuckoo hashing").
// Adding to two full buckets relocates fingerprints to their other bucket,
// at most `max_kicks` times. If that fails, every relocation is undone and
// Add returns Status::Full: the filter is exactly as before, no key is lost.
//
// Adding a key twice stores two copies of its fingerprint (so Count sees
// both and it takes two Deletes); a key has at most 2 * bucket_size copies.
// Delete removes one copy of the key's fingerprint: deleting a key that was
// never added may remove another key's fingerprint that happens to match,
// and that key then reads as absent. Delete only what was added.
//
// False positives: an absent key matches with probability about
// 2 * bucket_size * load / (2^fingerprint_bits - 1). Keys are hashed with
// XXH3-64 (seed 0), bloomkv's key hash; AddHash and friends take that hash.
//
// Serialize() writes a versioned, checksummed encoding (docs/filters.md);
// Deserialize() reports any damaged or foreign input as Corruption.
//
// Thread-safety: const methods may run concurrently with each other; Add,
// AddIfAbsent, Delete, assignment and Deserialize into it need exclusive
// access (external synchronization). Copyable; a moved-from filter is a
// default one.
#ifndef BLOOMKV_INCLUDE_CUCKOO_FILTER_H_
#define BLOOMKV_INCLUDE_CUCKOO_FILTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

struct CuckooFilterOptions {
  // Keys the filter must hold; at least 1. The filter gets enough buckets
  // to hold this many below the load at which adds start to fail (94% of
  // the slots for 4 slots per bucket, where failures start near 96%, plus
  // 4 sqrt(capacity) slots; docs/filters.md has the table).
  uint64_t capacity = 1000;
  // Target rate of false positives at `capacity` keys, in (0, 0.5]; picks
  // the fingerprint width when fingerprint_bits is 0.
  double fp_rate = 0.01;
  // Bits per fingerprint, in [4, 32]; 0 chooses the fewest that meet
  // fp_rate. Each bit halves the false-positive rate.
  int fingerprint_bits = 0;
  // Slots per bucket, in [1, 8] (RedisBloom's BUCKETSIZE, whose default is
  // 2). More slots allow a higher load (about 47% at 1, 86% at 2, 96% at 4)
  // but compare more fingerprints per lookup, which costs a bit of rate.
  int bucket_size = 4;
  // Relocations an Add may make before it fails, in [1, 65535]
  // (RedisBloom's MAXITERATIONS, default 20 there). More let a nearly full
  // filter take a few more keys at more cost per Add.
  int max_kicks = 500;
};

struct CuckooFilterInfo {
  uint64_t capacity = 0;  // options.capacity
  uint64_t num_buckets = 0;
  int bucket_size = 0;
  int fingerprint_bits = 0;
  int max_kicks = 0;
  uint64_t slots = 0;       // num_buckets * bucket_size
  uint64_t items = 0;       // stored fingerprints, copies included
  uint64_t bytes = 0;       // memory for the slots
  double bits_per_key = 0;  // bytes * 8 / capacity
  double load_factor = 0;   // items / slots
  // Expected rate at `capacity` keys and with the items in it now.
  double target_fp_rate = 0;
  double estimated_fp_rate = 0;
};

class CuckooFilter {
 public:
  // A filter without slots: MightContain is false for every key and Add
  // returns Full.
  CuckooFilter() = default;

  // Replaces *out with an empty filter for these options, or returns
  // InvalidArgument naming the bad option (and leaves *out unchanged).
  // Memory is about capacity * fingerprint_bits / load / 8 bytes and must be
  // allocatable (at most 2^32 buckets).
  static Status Create(const CuckooFilterOptions& options, CuckooFilter* out);

  CuckooFilter(const CuckooFilter&) = default;
  CuckooFilter& operator=(const CuckooFilter&) = default;
  CuckooFilter(CuckooFilter&& other) noexcept;
  CuckooFilter& operator=(CuckooFilter&& other) noexcept;
  ~CuckooFilter();

  // Stores one more copy of key's fingerprint. Full, and no change, if the
  // relocations cannot make room.
  Status Add(const Slice& key);
  // Adds the key unless it may be present already; *added (if not null)
  // says whether it was added. Full as for Add.
  Status AddIfAbsent(const Slice& key, bool* added = nullptr);
  // Removes one copy of key's fingerprint; false if there is none (the key
  // is definitely absent).
  bool Delete(const Slice& key);
  // Copies of key's fingerprint in its two buckets: the number of times the
  // key was added and not deleted, plus copies from other keys with the same
  // fingerprint and buckets (so never less than the true count).
  uint64_t Count(const Slice& key) const;
  // False only if the key is definitely absent.
  bool MightContain(const Slice& key) const;

  // The same for keys already hashed with XXH3-64 (seed 0).
  Status AddHash(uint64_t hash);
  Status AddHashIfAbsent(uint64_t hash, bool* added = nullptr);
  bool DeleteHash(uint64_t hash);
  uint64_t CountHash(uint64_t hash) const;
  bool MightContainHash(uint64_t hash) const;

  // Stored fingerprints, copies included.
  uint64_t items() const { return items_; }
  CuckooFilterInfo Info() const;

  // Appends the encoding of this filter to *dst.
  void Serialize(std::string* dst) const;
  // Replaces *out with the filter encoded in `input` (exactly one encoding,
  // nothing after it). On error returns Corruption naming what is wrong and
  // the byte offset, and leaves *out unchanged.
  static Status Deserialize(const Slice& input, CuckooFilter* out);

 private:
  struct Slots;  // where a hash's fingerprint may live

  Slots Locate(uint64_t hash) const;
  uint64_t AltBucket(uint64_t bucket, uint32_t fingerprint) const;
  uint32_t Slot(uint64_t bucket, int slot) const;
  void SetSlot(uint64_t bucket, int slot, uint32_t fingerprint);
  // Stores fingerprint in a free slot of bucket; false if it has none.
  bool InsertIntoBucket(uint64_t bucket, uint32_t fingerprint);
  int CountInBucket(uint64_t bucket, uint32_t fingerprint) const;
  uint64_t TableBytes() const;
  uint64_t NextRandom();

  // Meaningful only with buckets (num_buckets_ > 0).
  CuckooFilterOptions options_;
  uint64_t num_buckets_ = 0;
  int fingerprint_bits_ = 0;
  uint64_t items_ = 0;
  // Packed slots: slot s of the filter (bucket s / bucket_size) is bits
  // [s * f, (s + 1) * f) of the table, least significant bit first, 0 when
  // free. Followed by 8 zero bytes in memory (not in the encoding), so that
  // any slot is read with one unaligned 8-byte load.
  std::vector<char> table_;
  // For choosing relocation victims; not part of the encoding.
  uint64_t rng_ = 0x9E3779B97F4A7C15ull;
  // Scratch for undoing relocations: (bucket << 3 | slot) per kick.
  std::vector<uint64_t> kick_path_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_CUCKOO_FILTER_H_
