// VectorIterator: an Iterator over an in-memory sorted vector of entries, for
// tests of code that reads iterators of internal keys.
//
// Entries must be sorted by SafeCompareInternalKeys (CompareInternalKeys for
// well-formed keys). A test can make the iterator fail: SetErrorAt(pos, s)
// makes any move that would land on entry pos leave the iterator !Valid()
// with status() s instead, as a child whose block at pos is unreadable; a
// later move that lands elsewhere clears it.
// Thread-safety: external synchronization required.
#ifndef BLOOMKV_TESTS_TESTUTIL_VECTOR_ITERATOR_H_
#define BLOOMKV_TESTS_TESTUTIL_VECTOR_ITERATOR_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bloomkv/iterator.h"

namespace bloomkv {
namespace test {

using Entries = std::vector<std::pair<std::string, std::string>>;

// CompareInternalKeys when both keys hold a trailer; plain bytewise order
// when either is shorter, so tests can place malformed keys without
// undefined behaviour.
int SafeCompareInternalKeys(const Slice& a, const Slice& b);

// Sorts entries by SafeCompareInternalKeys; stable for equal keys.
void SortEntries(Entries* entries);

class VectorIterator final : public Iterator {
 public:
  // REQUIRES: entries sorted by SafeCompareInternalKeys.
  explicit VectorIterator(Entries entries);

  void SetErrorAt(size_t pos, Status s);

  bool Valid() const override;
  void SeekToFirst() override;
  void SeekToLast() override;
  void Seek(const Slice& target) override;
  void SeekForPrev(const Slice& target) override;
  void Next() override;
  void Prev() override;
  Slice key() const override;
  Slice value() const override;
  Status status() const override;

 private:
  // Positions at pos; kNone means unpositioned (off either end).
  void MoveTo(size_t pos);

  static constexpr size_t kNone = static_cast<size_t>(-1);

  Entries entries_;
  size_t pos_ = kNone;
  size_t error_pos_ = kNone;
  Status error_;
  Status status_;
};

std::unique_ptr<Iterator> NewVectorIterator(Entries entries);

}  // namespace test
}  // namespace bloomkv

#endif  // BLOOMKV_TESTS_TESTUTIL_VECTOR_ITERATOR_H_
