// Iterator: ordered traversal over keys and values, forward and backward.
//
// An iterator starts unpositioned; call one of the Seek* methods first.
// key() and value() stay valid until the iterator is moved or destroyed.
// Thread-safety: an Iterator requires external synchronization; distinct
// iterators may be used from distinct threads.
#ifndef BLOOMKV_INCLUDE_ITERATOR_H_
#define BLOOMKV_INCLUDE_ITERATOR_H_

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

class Iterator {
 public:
  Iterator() = default;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;
  virtual ~Iterator();

  // True when positioned at an entry. After an error, Valid() is false and
  // status() says why.
  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  // Positions at the first entry with key >= target.
  virtual void Seek(const Slice& target) = 0;
  // Positions at the last entry with key <= target.
  virtual void SeekForPrev(const Slice& target) = 0;
  // REQUIRES: Valid()
  virtual void Next() = 0;
  // REQUIRES: Valid()
  virtual void Prev() = 0;
  // REQUIRES: Valid()
  virtual Slice key() const = 0;
  // REQUIRES: Valid()
  virtual Slice value() const = 0;
  virtual Status status() const = 0;
};

// An iterator over nothing that reports status s.
Iterator* NewErrorIterator(const Status& s);
Iterator* NewEmptyIterator();

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_ITERATOR_H_
