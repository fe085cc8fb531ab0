// MergingIterator: one sorted view over many sorted iterators of internal keys.
//
// The DB reads through one of these over the memtable, the immutable memtable
// and every segment of a version. Children are ordered by internal key
// (CompareInternalKeys); the merged iterator yields the union of their entries
// in that order, forward and backward. Entries with identical internal keys
// (which the write path never produces) come out in child order going
// forward and in reverse child order going backward, so every direction
// switch is exact even then.
//
// Errors: as soon as any child reports a non-OK status (or yields a key too
// short to be an internal key), the merged iterator becomes !Valid() and
// status() returns that error, so a failing child can never make the merge
// silently skip its entries. The next Seek*() starts over.
//
// Thread-safety: external synchronization required, like any Iterator.
#ifndef BLOOMKV_DB_MERGING_ITERATOR_H_
#define BLOOMKV_DB_MERGING_ITERATOR_H_

#include <memory>
#include <vector>

#include "bloomkv/iterator.h"

namespace bloomkv {

// Takes ownership of the children. Pass them newest first (memtable, then
// level 0 newest to oldest, then deeper levels): that order breaks ties.
// Zero children give an empty iterator, one child is returned as is, and a
// null child gives an iterator whose status() is InvalidArgument.
// Seek()/SeekForPrev() targets must be internal keys (at least
// kInternalKeyTrailerSize bytes); a shorter target gives InvalidArgument.
std::unique_ptr<Iterator> NewMergingIterator(
    std::vector<std::unique_ptr<Iterator>> children);

}  // namespace bloomkv

#endif  // BLOOMKV_DB_MERGING_ITERATOR_H_
