// PrefixIndex; see prefix_index.h.
#include "util/prefix_index.h"

#include <algorithm>
#include <bit>
#include <cstdint>

namespace bloomkv {
namespace {
// Below this many entries the whole array is a cache line or two: a
// binary search over it is as quick as a bucket's.
constexpr size_t kMinEntriesForBuckets = 32;
}  // namespace

PrefixIndex::PrefixIndex(std::vector<uint64_t> prefixes)
    : prefixes_(std::move(prefixes)) {
  const size_t n = prefixes_.size();
  if (n < kMinEntriesForBuckets || n > UINT32_MAX) return;
  const uint64_t range = prefixes_.back() - prefixes_.front();
  // Eight to sixteen entries per bucket (one or two cache lines of them),
  // so that the table, half a byte per entry, stays in the CPU caches when
  // the entries do not: the bucket number is the offset from the first
  // entry with its low bits dropped, as many as keep it below the largest
  // power of two that is at most n / 8. Measured (prefix_index_bench,
  // searches one after the other, medians of 5): 60 ns against a binary
  // search's 86 over 236 arrays of 1,024 (a compacted 10^7-link store); 131
  // against 119 over 2,360 (10^8), where both wait on main memory. A
  // bucket per entry or two would make the table as large as the entries'
  // share of the caches, and cost a second miss per search.
  const int bucket_bits = static_cast<int>(std::bit_width(n / 8)) - 1;
  shift_ = std::max(0, static_cast<int>(std::bit_width(range)) - bucket_bits);
  const size_t buckets = static_cast<size_t>(range >> shift_) + 1;
  starts_.assign(buckets + 1, 0);
  size_t i = 0;
  for (size_t b = 0; b <= buckets; b++) {
    while (i < n && ((prefixes_[i] - prefixes_.front()) >> shift_) < b) i++;
    starts_[b] = static_cast<uint32_t>(i);
  }
}

}  // namespace bloomkv
