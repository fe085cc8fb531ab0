// The built-in filter policies by the Name() they store in segments, so that
// a segment reader can interpret a filter written by a built-in policy other
// than the one it is configured with (table/segment_reader.cc), and so that
// the filter allocation (db/filter_allocation.h) can tell which kind a
// configured policy is and what it costs (util/filter_cost.h).
//
// Each policy returned reads every filter its encoding allows, whatever the
// bits per key it was written with: the bloom encoding records its probe
// count, the binary fuse encoding its whole layout.
//
// Thread-safety: thread-safe; the policies are immutable and shared.
#ifndef BLOOMKV_UTIL_FILTER_REGISTRY_H_
#define BLOOMKV_UTIL_FILTER_REGISTRY_H_

#include <memory>

#include "bloomkv/filter_policy.h"
#include "bloomkv/slice.h"

namespace bloomkv {

// The built-in policy whose Name() is `name`, or null if there is none.
std::shared_ptr<const FilterPolicy> BuiltinFilterPolicy(const Slice& name);

// The encodings of the built-in policies, by stored name.
enum class BuiltinFilterKind {
  kOther,         // not a built-in name (an application's own policy)
  kBlockedBloom,  // "bloomkv.BlockedBloom.v1", any bits per key
  kBinaryFuse8,   // "bloomkv.BinaryFuse8"
  kBinaryFuse16,  // "bloomkv.BinaryFuse16"
};
BuiltinFilterKind BuiltinFilterKindOf(const Slice& name);

// The built-in binary fuse policy of fingerprint_bits (8 or 16), shared.
std::shared_ptr<const FilterPolicy> BuiltinBinaryFusePolicy(
    int fingerprint_bits);

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_FILTER_REGISTRY_H_
