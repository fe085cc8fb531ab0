// Index -> data block iteration; see two_level_iterator.h.
#include "table/two_level_iterator.h"

#include <string>

#include "table/internal_key.h"

namespace bloomkv {

namespace {

class TwoLevelIterator final : public Iterator {
 public:
  TwoLevelIterator(std::unique_ptr<Iterator> index_iter, BlockFunction fn)
      : index_(std::move(index_iter)), block_function_(std::move(fn)) {}

  bool Valid() const override { return data_ != nullptr && data_->Valid(); }
  Slice key() const override { return data_->key(); }
  Slice value() const override { return data_->value(); }
  Status status() const override {
    if (!index_->status().ok()) return index_->status();
    if (data_ != nullptr && !data_->status().ok()) return data_->status();
    return Status::OK();
  }

  void SeekToFirst() override {
    index_->SeekToFirst();
    InitDataBlock();
    if (data_ != nullptr) data_->SeekToFirst();
    SkipEmptyBlocksForward();
  }

  void SeekToLast() override {
    index_->SeekToLast();
    InitDataBlock();
    if (data_ != nullptr) data_->SeekToLast();
    SkipEmptyBlocksBackward();
  }

  void Seek(const Slice& target) override {
    if (!CheckTarget(target)) return;
    index_->Seek(target);
    InitDataBlock();
    if (data_ != nullptr) data_->Seek(target);
    SkipEmptyBlocksForward();
  }

  void SeekForPrev(const Slice& target) override {
    if (!CheckTarget(target)) return;
    // The first block whose separator is >= target holds the last key <=
    // target, or that key is in an earlier block; past every separator,
    // it is in the last block.
    index_->Seek(target);
    if (!index_->Valid() && index_->status().ok()) index_->SeekToLast();
    InitDataBlock();
    if (data_ != nullptr) data_->SeekForPrev(target);
    SkipEmptyBlocksBackward();
  }

  void Next() override {
    if (!Valid()) return;
    data_->Next();
    SkipEmptyBlocksForward();
  }

  void Prev() override {
    if (!Valid()) return;
    data_->Prev();
    SkipEmptyBlocksBackward();
  }

 private:
  bool CheckTarget(const Slice& target) {
    if (target.size() >= kInternalKeyTrailerSize) return true;
    SetDataIterator(std::unique_ptr<Iterator>(NewErrorIterator(
        Status::InvalidArgument("seek target is not an internal key"))));
    return false;
  }

  void SkipEmptyBlocksForward() {
    while (data_ == nullptr || (!data_->Valid() && data_->status().ok())) {
      if (!index_->Valid()) {
        SetDataIterator(nullptr);
        return;
      }
      index_->Next();
      InitDataBlock();
      if (data_ != nullptr) data_->SeekToFirst();
    }
  }

  void SkipEmptyBlocksBackward() {
    while (data_ == nullptr || (!data_->Valid() && data_->status().ok())) {
      if (!index_->Valid()) {
        SetDataIterator(nullptr);
        return;
      }
      index_->Prev();
      InitDataBlock();
      if (data_ != nullptr) data_->SeekToLast();
    }
  }

  void SetDataIterator(std::unique_ptr<Iterator> it) {
    data_ = std::move(it);
    data_handle_.clear();
  }

  void InitDataBlock() {
    if (!index_->Valid()) {
      SetDataIterator(nullptr);
      return;
    }
    const Slice handle = index_->value();
    if (data_ != nullptr && Slice(data_handle_) == handle &&
        data_->status().ok()) {
      return;  // already positioned in this block
    }
    SetDataIterator(block_function_(handle));
    data_handle_.assign(handle.data(), handle.size());
  }

  std::unique_ptr<Iterator> index_;
  BlockFunction block_function_;
  std::unique_ptr<Iterator> data_;  // null when not positioned in a block
  std::string data_handle_;         // index value data_ was built from
};

}  // namespace

std::unique_ptr<Iterator> NewTwoLevelIterator(
    std::unique_ptr<Iterator> index_iter, BlockFunction block_function) {
  return std::make_unique<TwoLevelIterator>(std::move(index_iter),
                                            std::move(block_function));
}

}  // namespace bloomkv
