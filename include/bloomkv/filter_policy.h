// FilterPolicy: builds and probes the per-segment filter that lets a point
// read skip a segment without touching disk.
//
// A filter is built from the 64-bit XXH3 hashes of a segment's distinct user
// keys; a read hashes its key once and probes every candidate segment's filter
// with that same hash. A policy's Name() is stored in each segment it built,
// and a changed encoding must get a new name. A reader interprets a filter
// with its own policy when the stored name equals that policy's Name(), and
// with the built-in policy of that name when it is one of the built-in ones
// (so a database written with the bloom filter reads with a binary fuse
// policy configured, and the other way round); a filter of any other name is
// ignored and the segment is searched without it. A filter stored under a
// built-in name is probed by the library itself, from bytes parsed once,
// without calls to the policy's KeyMayMatch or Prefetch.
//
// Thread-safety: policies are immutable and safe to share between threads.
#ifndef BLOOMKV_INCLUDE_FILTER_POLICY_H_
#define BLOOMKV_INCLUDE_FILTER_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "bloomkv/slice.h"

namespace bloomkv {

class FilterPolicy {
 public:
  virtual ~FilterPolicy();

  // Identifies the filter encoding; stored on disk next to every filter.
  virtual const char* Name() const = 0;

  // Appends to *dst a filter that contains each of hashes[0..n-1]. The
  // hashes may contain duplicates. n may be 0.
  virtual void CreateFilter(const uint64_t* hashes, size_t n,
                            std::string* dst) const = 0;

  // False only if the key whose hash is `hash` was definitely not among the
  // hashes given to CreateFilter when `filter` was built. A filter this policy
  // cannot parse (e.g. a truncated one) answers true: never a false negative.
  virtual bool KeyMayMatch(uint64_t hash, const Slice& filter) const = 0;

  // The configured bits per key (for a policy sized by false-positive rate,
  // the bits per key that rate implies).
  virtual double BitsPerKey() const = 0;

  // The false-positive rate that theory predicts for `filter` holding
  // num_keys distinct keys; 1.0 if the filter cannot be parsed.
  virtual double TheoreticalFpRate(const Slice& filter,
                                   uint64_t num_keys) const = 0;

  // The same encoding (same Name(), readable by this policy) sized for
  // bits_per_key instead, or nullptr if the policy has no such knob. Used
  // when Options::filter_allocation gives each level its own bits per key;
  // a policy without the knob keeps its size there (the built-in binary
  // fuse policies are given the other fingerprint width instead, when that
  // is better). Default: nullptr.
  virtual std::shared_ptr<const FilterPolicy> Resized(
      double bits_per_key) const;

  // A hint that KeyMayMatch(hash, filter) follows soon: starts loading the
  // memory it will read, without waiting for it. A lookup hints every
  // filter it may consult before it asks the first one, so that the cache
  // misses of filters too large for the CPU caches overlap instead of
  // adding up. Must not change any answer. Default: does nothing.
  virtual void Prefetch(uint64_t hash, const Slice& filter) const;
};

// The built-in cache-line-blocked bloom filter: every probe of one key falls
// in the same 64-byte line, so a probe costs at most one cache miss.
// bits_per_key is clamped to [1, 100]; 10 gives a false-positive rate of
// about 1%.
std::shared_ptr<const FilterPolicy> NewBloomFilterPolicy(double bits_per_key);

// The same filter sized for a target false-positive rate p, using
// m = -n * ln(p) / (ln 2)^2 bits for n keys. p is clamped to [1e-6, 0.5].
std::shared_ptr<const FilterPolicy> NewBloomFilterPolicyForFpRate(
    double fp_rate);

// A binary fuse filter (Graf and Lemire, 2022): a static filter built once
// from a segment's key hashes, within about 13% of the information-theoretic
// bound for large segments. fingerprint_bits selects one of two encodings:
//   8:  "bloomkv.BinaryFuse8",  about 9.0 bits per key, false-positive rate
//       2^-8 (0.39%);
//   16: "bloomkv.BinaryFuse16", about 18.0 bits per key, rate 2^-16
//       (0.0015%).
// Other values are rounded: up to 12 gives 8, above gives 16. Segments of
// fewer than about 10^6 keys take more bits per key (about 10.2 at 10^4 keys
// for 8 bits; docs/filters.md). Building costs more CPU and about 22 bytes of
// temporary memory per key of the segment (12-78 ns per key from 10^4 to
// 10^7 keys), against 5-44 ns and one filter's size for the bloom filter. Resized() returns
// nullptr: the size per key is fixed for a width. Under
// FilterAllocation::kMinimizeFalsePositives a level configured with either
// gets 8 or 16 bits as the memory budget is best spent (or a bloom filter,
// see Options::filter_allocation). Options::deep_filter_policy gives deep
// levels these filters while flushes keep the bloom filter; by default the
// levels below level 0 get the 8-bit one.
std::shared_ptr<const FilterPolicy> NewBinaryFuseFilterPolicy(
    int fingerprint_bits);

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_FILTER_POLICY_H_
