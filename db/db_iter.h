// DBIter: the user-facing iterator, turning internal entries into user keys.
//
// It reads an iterator over internal keys (normally a merging iterator over
// the memtables and a version's segments) and yields, for every user key,
// the value of its newest entry with sequence <= the iterator's snapshot
// sequence. Newer entries, shadowed older versions and keys whose newest
// visible entry is a deletion are hidden. Keys are user keys; Seek() and
// SeekForPrev() take user keys.
//
// Errors: an internal key that does not parse gives status() Corruption; an
// error from the internal iterator is passed through. Either way the
// iterator becomes !Valid() at that point rather than skip entries; the next
// Seek*() starts over.
//
// Thread-safety: external synchronization required, like any Iterator.
#ifndef BLOOMKV_DB_DB_ITER_H_
#define BLOOMKV_DB_DB_ITER_H_

#include <functional>
#include <memory>

#include "bloomkv/iterator.h"
#include "db/range_tombstones.h"
#include "table/internal_key.h"

namespace bloomkv {

// Takes ownership of internal_iter. sequence is the snapshot: entries with a
// larger sequence number are invisible (values above kMaxSequenceNumber mean
// kMaxSequenceNumber). cleanup, if set, runs once when the returned iterator
// is destroyed, after internal_iter has been destroyed: the DB uses it to
// unpin the memtables and version the internal iterator reads (a lambda
// capturing shared_ptrs is enough). A null internal_iter gives an iterator
// whose status() is InvalidArgument (cleanup still runs on destruction).
// lower and upper, when non-null, bound the user keys yielded to
// [*lower, *upper) (ReadOptions::iterate_lower_bound / _upper_bound); they
// are copied. range_tombstones, when non-null, hides every entry it covers
// at sequence (db/range_tombstones.h) as a deletion would.
std::unique_ptr<Iterator> NewDBIterator(
    std::unique_ptr<Iterator> internal_iter, SequenceNumber sequence,
    std::function<void()> cleanup = nullptr, const Slice* lower = nullptr,
    const Slice* upper = nullptr,
    std::shared_ptr<const RangeTombstoneSet> range_tombstones = nullptr);

}  // namespace bloomkv

#endif  // BLOOMKV_DB_DB_ITER_H_
