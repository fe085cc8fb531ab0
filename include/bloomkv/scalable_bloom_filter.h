// ScalableBloomFilter: a bloom filter that grows past its capacity instead of
// losing precision (Almeida et al., "Scalable Bloom Filters", 2007), with the
// parameters of RedisBloom's BF.RESERVE: a capacity, a target false-positive
// rate, an expansion factor and a non-scaling flag.
//
//   ScalableBloomFilterOptions options;
//   options.capacity = 100000;
//   options.fp_rate = 0.001;
//   ScalableBloomFilter f;
//   Status s = ScalableBloomFilter::Create(options, &f);
//   bool added;
//   s = f.Add("abc123", &added);   // added: false if it may be there already
//   if (!f.MightContain(code)) ... // definitely never added
//
// It is a chain of BloomFilters. Sub-filter i holds capacity * expansion^i
// keys at a false-positive rate of fp_rate * (1 - r) * r^i with r = 1/2, so
// however many sub-filters there are, the compound rate (an absent key
// passing any of them) stays below fp_rate: the rates sum to less than it.
// When the newest sub-filter is full, Add starts the next one. A
// non-scaling filter has only the first one and Add fails with Status::Full
// once it holds `capacity` keys.
//
// Like BF.ADD, Add first asks whether the key may be present; if so it adds
// nothing and reports added = false, so repeated keys do not use up
// capacity. A key that only collides with others (a false positive) is then
// not recorded either; MightContain answers true for it all the same.
//
// Serialize() writes a versioned, checksummed encoding (docs/filters.md);
// Deserialize() reports any damaged or foreign input as Corruption.
//
// Thread-safety: const methods may run concurrently with each other; Add,
// assignment and Deserialize into it need exclusive access (external
// synchronization). Copyable; a moved-from filter is a default one.
#ifndef BLOOMKV_INCLUDE_SCALABLE_BLOOM_FILTER_H_
#define BLOOMKV_INCLUDE_SCALABLE_BLOOM_FILTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "bloomkv/bloom_filter.h"
#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

struct ScalableBloomFilterOptions {
  // Keys the first sub-filter holds (RedisBloom's capacity; same default).
  // At least 1. Size it for the expected number of keys: every sub-filter
  // added past it costs a probe per lookup and a tighter, larger filter.
  uint64_t capacity = 100;
  // Target rate of false positives for the whole chain, in [2e-9, 0.5]
  // (RedisBloom's error_rate; default 1%).
  double fp_rate = 0.01;
  // Each new sub-filter holds `expansion` times the keys of the previous
  // one (RedisBloom's EXPANSION, default 2), in [1, 65536]. Larger values
  // mean fewer sub-filters (cheaper lookups) and more memory reserved ahead.
  uint32_t expansion = 2;
  // No growth: Add fails with Status::Full once `capacity` keys are in
  // (RedisBloom's NONSCALING). The whole target rate then goes to the one
  // sub-filter, so it is smaller than the first sub-filter of a scaling
  // chain.
  bool non_scaling = false;
};

// One sub-filter: what it was sized for and what it holds.
struct ScalableBloomSubFilterInfo {
  uint64_t capacity = 0;
  double target_fp_rate = 0;  // its share of the chain's rate
  BloomFilterInfo bloom;      // its own Info()
};

struct ScalableBloomFilterInfo {
  ScalableBloomFilterOptions options;
  uint64_t items = 0;           // keys recorded (Add calls with added=true)
  uint64_t total_capacity = 0;  // sum of the sub-filters' capacities
  uint64_t bytes = 0;           // memory for the bits of every sub-filter
  // Expected rate now: 1 - prod(1 - rate of sub-filter i at its fill).
  double estimated_fp_rate = 0;
  // ApproximateElementCount().
  double approximate_element_count = 0;
  std::vector<ScalableBloomSubFilterInfo> filters;
};

class ScalableBloomFilter {
 public:
  // A filter with the default options and no sub-filter yet (the first is
  // made by the first Add): MightContain is false for every key.
  ScalableBloomFilter() = default;

  // Replaces *out with an empty filter with these options, or returns
  // InvalidArgument naming the bad option (and leaves *out unchanged). The
  // first sub-filter is made here (sizing takes a few milliseconds).
  static Status Create(const ScalableBloomFilterOptions& options,
                       ScalableBloomFilter* out);

  ScalableBloomFilter(const ScalableBloomFilter&) = default;
  ScalableBloomFilter& operator=(const ScalableBloomFilter&) = default;
  ScalableBloomFilter(ScalableBloomFilter&& other) noexcept;
  ScalableBloomFilter& operator=(ScalableBloomFilter&& other) noexcept;
  ~ScalableBloomFilter();

  // Records `key` unless it may be present already. *added (if not null)
  // says whether it was recorded. Errors, after which the filter is
  // unchanged and *added is false:
  //   Full: a non-scaling filter holds `capacity` keys; or a scaling chain
  //         cannot grow within its target (the next sub-filter would need a
  //         rate below 1e-9, or more than 2^32 keys).
  Status Add(const Slice& key, bool* added = nullptr);
  // The same for a key already hashed with XXH3-64 (seed 0).
  Status AddHash(uint64_t hash, bool* added = nullptr);

  // False only if `key` was definitely never added.
  bool MightContain(const Slice& key) const;
  bool MightContainHash(uint64_t hash) const;

  const ScalableBloomFilterOptions& options() const { return options_; }
  // Keys recorded.
  uint64_t items() const { return items_; }
  size_t num_filters() const { return filters_.size(); }

  // Sum of the sub-filters' estimates of their distinct keys (see
  // BloomFilter::ApproximateElementCount); O(size).
  double ApproximateElementCount() const;

  // Runs the false-positive theory for every sub-filter (a few milliseconds
  // each): for reporting, not per lookup.
  ScalableBloomFilterInfo Info() const;

  // Appends the encoding of this filter to *dst.
  void Serialize(std::string* dst) const;
  // Replaces *out with the filter encoded in `input` (exactly one encoding,
  // nothing after it). On error returns Corruption naming what is wrong and
  // the byte offset, and leaves *out unchanged.
  static Status Deserialize(const Slice& input, ScalableBloomFilter* out);

 private:
  // Appends sub-filter number filters_.size(), or returns Full.
  Status Grow();

  ScalableBloomFilterOptions options_;
  uint64_t items_ = 0;
  // Oldest first; each holds capacity * expansion^i keys.
  std::vector<BloomFilter> filters_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_SCALABLE_BLOOM_FILTER_H_
