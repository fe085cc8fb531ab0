// ExpiryFilter: the compaction filter that drops expired links.
//
// A bloom filter cannot forget a key, so an expired link cannot simply be
// erased from a segment's filter. Instead, whenever a compaction rewrites a
// segment, this filter is asked about each key: expired link records
// ("c:" keys), URL-index entries ("u:" keys) whose every listed link has
// expired, and the list entries ("t:") and click records ("s:") of expired
// links are left out, and the output segment's filter is built for the
// keys that survive only. Anything it cannot decode is kept: a compaction
// never destroys data it does not understand.
//
// Thread-safety: thread-safe if `now` is (it is called from the compaction
// thread while requests run).
#ifndef BLOOMKV_TOOLS_SHORTLINK_EXPIRY_FILTER_H_
#define BLOOMKV_TOOLS_SHORTLINK_EXPIRY_FILTER_H_

#include <cstdint>
#include <functional>

#include "bloomkv/compaction_filter.h"

namespace shortlink {

class ExpiryFilter final : public bloomkv::CompactionFilter {
 public:
  // `now` returns the current time in Unix seconds.
  explicit ExpiryFilter(std::function<int64_t()> now);

  const char* Name() const override { return "shortlink.ExpiryFilter"; }
  bool Filter(int level, const bloomkv::Slice& key,
              const bloomkv::Slice& value) const override;

 private:
  const std::function<int64_t()> now_;
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_EXPIRY_FILTER_H_
