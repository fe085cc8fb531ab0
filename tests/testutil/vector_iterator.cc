// VectorIterator: binary search over a sorted vector, with error injection.
#include "tests/testutil/vector_iterator.h"

#include <algorithm>
#include <cassert>

#include "table/internal_key.h"

namespace bloomkv {
namespace test {

int SafeCompareInternalKeys(const Slice& a, const Slice& b) {
  if (a.size() < kInternalKeyTrailerSize ||
      b.size() < kInternalKeyTrailerSize) {
    return a.compare(b);
  }
  return CompareInternalKeys(a, b);
}

void SortEntries(Entries* entries) {
  std::stable_sort(entries->begin(), entries->end(),
                   [](const auto& x, const auto& y) {
                     return SafeCompareInternalKeys(x.first, y.first) < 0;
                   });
}

VectorIterator::VectorIterator(Entries entries)
    : entries_(std::move(entries)) {}

void VectorIterator::SetErrorAt(size_t pos, Status s) {
  error_pos_ = pos;
  error_ = std::move(s);
}

bool VectorIterator::Valid() const {
  return status_.ok() && pos_ < entries_.size();
}

void VectorIterator::MoveTo(size_t pos) {
  pos_ = pos;
  status_ = (pos == error_pos_) ? error_ : Status::OK();
}

void VectorIterator::SeekToFirst() { MoveTo(entries_.empty() ? kNone : 0); }

void VectorIterator::SeekToLast() {
  MoveTo(entries_.empty() ? kNone : entries_.size() - 1);
}

void VectorIterator::Seek(const Slice& target) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), target,
                             [](const auto& e, const Slice& t) {
                               return SafeCompareInternalKeys(e.first, t) < 0;
                             });
  MoveTo(it == entries_.end() ? kNone
                              : static_cast<size_t>(it - entries_.begin()));
}

void VectorIterator::SeekForPrev(const Slice& target) {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), target,
                             [](const Slice& t, const auto& e) {
                               return SafeCompareInternalKeys(t, e.first) < 0;
                             });
  MoveTo(it == entries_.begin()
             ? kNone
             : static_cast<size_t>(it - entries_.begin()) - 1);
}

void VectorIterator::Next() {
  assert(Valid());
  MoveTo(pos_ + 1 < entries_.size() ? pos_ + 1 : kNone);
}

void VectorIterator::Prev() {
  assert(Valid());
  MoveTo(pos_ == 0 ? kNone : pos_ - 1);
}

Slice VectorIterator::key() const {
  assert(Valid());
  return entries_[pos_].first;
}

Slice VectorIterator::value() const {
  assert(Valid());
  return entries_[pos_].second;
}

Status VectorIterator::status() const { return status_; }

std::unique_ptr<Iterator> NewVectorIterator(Entries entries) {
  return std::make_unique<VectorIterator>(std::move(entries));
}

}  // namespace test
}  // namespace bloomkv
