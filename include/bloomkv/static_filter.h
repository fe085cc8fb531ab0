// StaticFilter: a standalone binary fuse filter for applications, built once
// from a fixed set of keys. It is the filter bloomkv writes into segments
// with NewBinaryFuseFilterPolicy: about 9.0 bits per key at a false-positive
// rate of 2^-8 (0.39%), or 18.0 bits per key at 2^-16, against about 12 and
// 26 bits per key for a bloom filter at those rates. Unlike BloomFilter, keys
// cannot be added after Build.
//
//   std::vector<Slice> keys = ...;
//   StaticFilter f = StaticFilter::Build(keys.data(), keys.size());
//   if (!f.MightContain(key)) return NotFound();  // definitely absent
//
// A filter never answers false for a key it was built from. Keys are hashed
// with XXH3-64 (seed 0), bloomkv's key hash; callers that already have those
// hashes use BuildFromHashes / MightContainHash. Duplicates are allowed.
// Building a filter of n keys holds about 22 bytes per key of temporary
// memory and takes 100-250 nanoseconds per key.
//
// Serialize() writes a versioned, checksummed encoding (docs/filters.md);
// Deserialize() reports any damaged or foreign input as Corruption.
//
// Thread-safety: const methods may run concurrently; assignment needs
// exclusive access. Copyable; a moved-from filter is empty.
#ifndef BLOOMKV_INCLUDE_STATIC_FILTER_H_
#define BLOOMKV_INCLUDE_STATIC_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

class StaticFilter {
 public:
  // An empty filter: MightContain is false for every key.
  StaticFilter() = default;

  // A filter holding keys[0..n-1]. fingerprint_bits is 8 (2^-8 false
  // positives) or 16 (2^-16); other values are rounded (up to 12 gives 8,
  // above gives 16).
  static StaticFilter Build(const Slice* keys, size_t n,
                            int fingerprint_bits = 8);
  // The same from XXH3-64 (seed 0) hashes of the keys.
  static StaticFilter BuildFromHashes(const uint64_t* hashes, size_t n,
                                      int fingerprint_bits = 8);

  StaticFilter(const StaticFilter&) = default;
  StaticFilter& operator=(const StaticFilter&) = default;
  StaticFilter(StaticFilter&& other) noexcept;
  StaticFilter& operator=(StaticFilter&& other) noexcept;
  ~StaticFilter();

  // False only if `key` was definitely not among the keys it was built from.
  bool MightContain(const Slice& key) const;
  // The same for a key already hashed with XXH3-64 (seed 0).
  bool MightContainHash(uint64_t hash) const;

  // Distinct keys it was built from.
  uint64_t num_keys() const { return num_keys_; }
  // 8 or 16 (8 for an empty filter).
  int fingerprint_bits() const { return fingerprint_bits_; }
  // Bytes of memory for the filter itself (header and fingerprints).
  uint64_t bytes() const { return filter_.size(); }
  // bytes() * 8 / num_keys(); 0 when empty.
  double bits_per_key() const;
  // The false-positive rate: 2^-fingerprint_bits, 0 when empty (and 1 in
  // the never observed case where construction gave up).
  double fp_rate() const;

  // Appends the encoding of this filter to *dst.
  void Serialize(std::string* dst) const;
  // Replaces *out with the filter encoded in `input` (exactly one encoding,
  // nothing after it). On error returns Corruption naming what is wrong and
  // the byte offset, and leaves *out unchanged.
  static Status Deserialize(const Slice& input, StaticFilter* out);

 private:
  StaticFilter(std::string filter, uint64_t num_keys, int fingerprint_bits);

  // The segment filter encoding of util/binary_fuse.h; empty for an empty
  // filter.
  std::string filter_;
  uint64_t num_keys_ = 0;
  int fingerprint_bits_ = 8;
};

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_STATIC_FILTER_H_
