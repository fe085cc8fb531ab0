// BloomFilter: a standalone cache-line-blocked bloom filter for applications,
// e.g. to guard any store against lookups of keys it does not hold ("cache
// penetration"). It is the same filter bloomkv builds for its segments: every
// probe of one key falls in one 64-byte line, so a lookup costs at most one
// cache miss.
//
//   BloomFilter f = BloomFilter::ForCapacity(1'000'000, 0.01);
//   f.Add("user:42");
//   if (!f.MightContain(key)) return NotFound();  // definitely absent
//
// A filter never answers false for a key that was added (no false negatives);
// it answers true for some keys that were not (false positives) at a rate set
// by its size. Adding more keys than the capacity keeps working: the
// false-positive rate rises, and Info() shows by how much. Keys are hashed
// with XXH3-64 (seed 0), the hash bloomkv uses for its own keys; callers that
// already have that hash use AddHash / MightContainHash.
//
// Serialize() writes a versioned, checksummed encoding (docs/filters.md);
// Deserialize() reports any damaged or foreign input as Corruption.
//
// Two filters of the same shape can be merged (Guava's putAll), and the
// number of distinct keys added can be estimated from the fraction of set
// bits (BF.CARD, Guava's approximateElementCount).
//
// Thread-safety: AddConcurrently, AddHashConcurrently, Merge (into this
// filter) and every const method (MightContain, Serialize, Info, copying
// from it, ...) may run concurrently with each other, on this filter and on
// the filter merged from. Add, AddHash, assignment and Deserialize into it
// need exclusive access: Add is the fast single-threaded path (no atomic
// read-modify-write, about 4x cheaper than AddConcurrently when the filter
// is in cache; docs/filters.md). A key whose add happens-before a query is
// always found; a query racing with the add of its key may answer either
// way, and a Serialize or copy racing with adds holds some of their bits.
// Copying copies the bits; a moved-from filter is empty.
#ifndef BLOOMKV_INCLUDE_BLOOM_FILTER_H_
#define BLOOMKV_INCLUDE_BLOOM_FILTER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

// What a filter is, how full it is, and what that costs.
struct BloomFilterInfo {
  uint64_t capacity = 0;     // expected_items it was sized for
  double bits_per_key = 0;   // bit_count / capacity (0 if capacity is 0)
  uint64_t bit_count = 0;    // bits in the filter (a multiple of 512)
  uint64_t bytes = 0;        // memory held for the bits (bit_count / 8)
  int probes_per_key = 0;    // bits set / tested per key
  uint64_t items_added = 0;  // Add/AddHash calls, duplicates included
  // Expected false-positive rate with items_added distinct keys in it (an
  // upper estimate if some were duplicates); 0 while empty.
  double estimated_fp_rate = 0;
  // ApproximateElementCount(): distinct keys estimated from the set bits.
  double approximate_element_count = 0;
  // Fraction of the bits that are set (0 without bits).
  double fill_ratio = 0;
};

class BloomFilter {
 public:
  // An empty filter with no bits: MightContain is false for every key. Adding
  // to it is allowed but, having no bits to record keys in, it then answers
  // true for every key (it still never gives a false negative).
  BloomFilter() noexcept = default;

  // A filter for expected_items keys whose false-positive rate, once it
  // holds them, is at most fp_rate. Grouping the bits in cache lines costs
  // some bits over the classic m = -n * ln(p) / (ln 2)^2 (about 4% more at
  // p = 1%, 15% at 0.01%; docs/filters.md has the table), and this sizing
  // includes them. Arguments are clamped, never rejected: expected_items 0
  // counts as 1; fp_rate is clamped to [1e-9, 0.5] (NaN counts as 0.01);
  // rates below about 1e-9 would need more than the 100 bits per key
  // allowed. Memory is about bits_per_key * expected_items / 8 bytes and
  // must be allocatable (at most 256 GiB: the layout addresses 2^32 lines).
  // Sizing takes a few milliseconds.
  static BloomFilter ForCapacity(uint64_t expected_items, double fp_rate);

  // A filter of bits_per_key * expected_items bits, rounded up to whole
  // 512-bit lines. bits_per_key is clamped to [1, 100] (NaN counts as 10:
  // about 1% false positives); expected_items 0 counts as 1.
  static BloomFilter WithBitsPerKey(uint64_t expected_items,
                                    double bits_per_key);

  BloomFilter(const BloomFilter& other);
  BloomFilter& operator=(const BloomFilter& other);
  BloomFilter(BloomFilter&& other) noexcept;
  BloomFilter& operator=(BloomFilter&& other) noexcept;
  ~BloomFilter();

  // REQUIRES: no other call on this filter runs concurrently.
  void Add(const Slice& key);
  // Add that may run concurrently with other AddConcurrently calls,
  // MightContain and every const method: bits are set with atomic
  // read-modify-writes.
  void AddConcurrently(const Slice& key);
  // False only if `key` was definitely never added.
  bool MightContain(const Slice& key) const;

  // The same, for a key already hashed with XXH3-64 (seed 0); mixing hashes
  // from another function with Add/MightContain gives wrong answers.
  void AddHash(uint64_t hash);
  void AddHashConcurrently(uint64_t hash);
  bool MightContainHash(uint64_t hash) const;

  // True if `other` has this filter's shape (number of bits and probes per
  // key), so that the two can be merged.
  bool IsCompatible(const BloomFilter& other) const;

  // Adds every key of `other` to this filter (the bitwise OR of the two;
  // Guava's putAll): afterwards this filter may contain every key either
  // did. items_added becomes the sum (duplicates across the two count
  // twice); capacity stays this filter's. InvalidArgument, and no change, if
  // the shapes differ (IsCompatible) or `other` is this filter.
  Status Merge(const BloomFilter& other);

  // Estimated number of distinct keys added, from the fraction of set bits
  // (Swamidass and Baldi's estimator, for this layout: docs/filters.md).
  // Duplicates are not counted, unlike items_added. Measured within 0.2% for
  // a filter of 10^5 keys from 1% to ten times its capacity; a small filter
  // (few bits) varies more. 0 for an empty filter or one without bits;
  // +infinity once every bit is set (nothing can be told then). Reads every
  // bit: O(size).
  double ApproximateElementCount() const;

  // Appends the encoding of this filter to *dst.
  void Serialize(std::string* dst) const;
  // Replaces *out with the filter encoded in `input` (exactly one encoding,
  // nothing after it). On error returns Corruption naming what is wrong and
  // the byte offset, and leaves *out unchanged.
  static Status Deserialize(const Slice& input, BloomFilter* out);

  // Computes the false-positive estimate, which takes up to a few
  // milliseconds: call it for reporting, not per lookup.
  BloomFilterInfo Info() const;

  // The cheap parts of Info().
  uint64_t capacity() const { return capacity_; }
  uint64_t items_added() const {
    return items_added_.load(std::memory_order_relaxed);
  }
  uint64_t bit_count() const { return num_lines_ * 512; }

 private:
  struct FreeLines {
    void operator()(char* p) const;
  };

  BloomFilter(uint64_t capacity, uint64_t num_lines, int num_probes);

  // Number of set bits, read with atomic loads.
  uint64_t CountSetBits() const;

  uint64_t capacity_ = 0;
  uint64_t num_lines_ = 0;
  // Relaxed atomic: AddConcurrently increments it with fetch_add, Add with a
  // plain load and store (it has exclusive access).
  std::atomic<uint64_t> items_added_{0};
  int num_probes_ = 0;
  // num_lines_ * 64 bytes, 64-byte aligned; null when num_lines_ == 0.
  std::unique_ptr<char[], FreeLines> lines_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_BLOOM_FILTER_H_
