// Iterator base class and the trivial iterators.
#include "bloomkv/iterator.h"

namespace bloomkv {

Iterator::~Iterator() = default;

namespace {

class EmptyIterator final : public Iterator {
 public:
  explicit EmptyIterator(Status s) : status_(std::move(s)) {}
  bool Valid() const override { return false; }
  void SeekToFirst() override {}
  void SeekToLast() override {}
  void Seek(const Slice&) override {}
  void SeekForPrev(const Slice&) override {}
  void Next() override {}
  void Prev() override {}
  Slice key() const override { return Slice(); }
  Slice value() const override { return Slice(); }
  Status status() const override { return status_; }

 private:
  Status status_;
};

}  // namespace

Iterator* NewErrorIterator(const Status& s) { return new EmptyIterator(s); }
Iterator* NewEmptyIterator() { return new EmptyIterator(Status::OK()); }

}  // namespace bloomkv
