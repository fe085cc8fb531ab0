// CompactionFilter: lets an application drop entries while they are
// compacted — the log-structured way to expire data. A bloom filter cannot
// forget a key, but a compaction rewrites the segment and builds a fresh
// filter for exactly the keys that survive.
//
// Thread-safety: Filter() is called from the compaction threads (several
// at once with Options::max_background_compactions > 1) while other
// threads read and write the DB; implementations must be thread-safe.
#ifndef BLOOMKV_INCLUDE_COMPACTION_FILTER_H_
#define BLOOMKV_INCLUDE_COMPACTION_FILTER_H_

#include "bloomkv/slice.h"

namespace bloomkv {

class CompactionFilter {
 public:
  virtual ~CompactionFilter();

  // For logs and diagnostics.
  virtual const char* Name() const = 0;

  // Called for the newest version of a key that a compaction writes, when
  // no snapshot can see that version (entries a snapshot still needs are
  // never offered). Return true to remove the key: it then reads as
  // NotFound. `level` is the level the compaction writes to.
  virtual bool Filter(int level, const Slice& key,
                      const Slice& value) const = 0;
};

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_COMPACTION_FILTER_H_
