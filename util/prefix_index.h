// PrefixIndex: sorted 64-bit integers (the UserKeyPrefix of keys in key
// order: a segment's index separators, a level's largest keys) with a table
// that sends an integer straight to the few entries that can equal it.
//
// A binary search over a few thousand entries is a chain of a dozen
// dependent loads, each a cache miss once the arrays outgrow the CPU caches
// (a 10^7-link store has 250,000 index entries). Here the range from the
// first entry to the last is cut into one bucket per eight to sixteen
// entries, and starts_[b] is the first entry at or past bucket b: a lookup
// reads starts_ at its bucket (a small table that stays in the CPU caches)
// and searches only that bucket's entries, one or two cache lines of them.
// Keys spread over their range (random short
// codes, even over the gaps between digits and letters) fill the buckets
// about evenly; keys bunched in a few buckets only make those buckets'
// searches longer, never longer than a binary search over all entries
// plus one load.
// Thread-safety: immutable after construction; safe for concurrent use.
#ifndef BLOOMKV_UTIL_PREFIX_INDEX_H_
#define BLOOMKV_UTIL_PREFIX_INDEX_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace bloomkv {

class PrefixIndex {
 public:
  PrefixIndex() = default;
  // REQUIRES: prefixes is sorted ascending (equal entries allowed).
  explicit PrefixIndex(std::vector<uint64_t> prefixes);

  size_t size() const { return prefixes_.size(); }
  bool empty() const { return prefixes_.empty(); }
  uint64_t operator[](size_t i) const { return prefixes_[i]; }

  // As std::equal_range over the entries: [first, last) holds the entries
  // equal to want, first is the number of entries below want.
  std::pair<size_t, size_t> EqualRange(uint64_t want) const {
    return EqualRange(want, [](size_t, size_t) {});
  }
  // The same, calling searching(begin, end) with the entries it is about to
  // search ([begin, end): the answer lies within [begin, end]) before it
  // reads them, so that a caller can ask for what it keeps beside them in a
  // parallel array while this search waits on their cache lines.
  template <typename Searching>
  std::pair<size_t, size_t> EqualRange(uint64_t want,
                                       Searching&& searching) const;

  // Bytes of memory held.
  size_t MemoryUsage() const {
    return prefixes_.capacity() * sizeof(uint64_t) +
           starts_.capacity() * sizeof(uint32_t);
  }

 private:
  std::vector<uint64_t> prefixes_;
  // Bucket b holds the entries x with ((x - prefixes_.front()) >> shift_)
  // == b, which are [starts_[b], starts_[b + 1]). Empty when there are too
  // few entries for buckets to pay.
  std::vector<uint32_t> starts_;
  int shift_ = 0;
};

template <typename Searching>
std::pair<size_t, size_t> PrefixIndex::EqualRange(uint64_t want,
                                                  Searching&& searching) const {
  size_t begin = 0, end = prefixes_.size();
  if (!starts_.empty()) {
    if (want < prefixes_.front()) return {0, 0};
    const uint64_t bucket = (want - prefixes_.front()) >> shift_;
    if (bucket >= starts_.size() - 1) return {size(), size()};
    begin = starts_[bucket];
    end = starts_[bucket + 1];
  }
  searching(begin, end);
  const auto [lo, hi] = std::equal_range(prefixes_.begin() + begin,
                                         prefixes_.begin() + end, want);
  return {static_cast<size_t>(lo - prefixes_.begin()),
          static_cast<size_t>(hi - prefixes_.begin())};
}

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_PREFIX_INDEX_H_
