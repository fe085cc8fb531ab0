// TwoLevelIterator: iterates the entries of a segment's data blocks in order,
// driven by an iterator over its index block.
//
// Each index entry's value names a data block; a caller-supplied function
// turns it into an iterator over that block (or an error iterator). Empty
// blocks are skipped in both directions, and the first error from either
// level stops the iteration and is reported by status().
// Thread-safety: external synchronization required.
#ifndef BLOOMKV_TABLE_TWO_LEVEL_ITERATOR_H_
#define BLOOMKV_TABLE_TWO_LEVEL_ITERATOR_H_

#include <functional>
#include <memory>

#include "bloomkv/iterator.h"

namespace bloomkv {

// Given an index entry's value, returns an iterator over that block; never
// nullptr (an error becomes an error iterator).
using BlockFunction = std::function<std::unique_ptr<Iterator>(const Slice&)>;

std::unique_ptr<Iterator> NewTwoLevelIterator(
    std::unique_ptr<Iterator> index_iter, BlockFunction block_function);

}  // namespace bloomkv

#endif  // BLOOMKV_TABLE_TWO_LEVEL_ITERATOR_H_
