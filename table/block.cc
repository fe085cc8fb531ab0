// Block parsing and iteration; see block.h.
#include "table/block.h"

#include <limits>

#include "table/format.h"
#include "table/internal_key.h"
#include "util/coding.h"

namespace bloomkv {

Block::Block(std::string contents, std::string file_name, uint64_t offset,
             uint32_t restarts_offset, uint32_t num_restarts)
    : contents_(std::move(contents)),
      file_name_(std::move(file_name)),
      offset_(offset),
      restarts_offset_(restarts_offset),
      num_restarts_(num_restarts) {}

Status Block::Parse(std::string contents, const std::string& file_name,
                    uint64_t offset, std::shared_ptr<const Block>* block) {
  const size_t size = contents.size();
  if (size < sizeof(uint32_t) || size > std::numeric_limits<uint32_t>::max()) {
    return CorruptionAt(file_name, "bad block size " + std::to_string(size),
                        offset);
  }
  const uint32_t num_restarts =
      DecodeFixed32(contents.data() + size - sizeof(uint32_t));
  const uint64_t max_restarts = (size - sizeof(uint32_t)) / sizeof(uint32_t);
  if (num_restarts == 0 || num_restarts > max_restarts) {
    return CorruptionAt(
        file_name,
        "bad restart count " + std::to_string(num_restarts) + " in block",
        offset);
  }
  const uint32_t restarts_offset = static_cast<uint32_t>(
      size - sizeof(uint32_t) - uint64_t{num_restarts} * sizeof(uint32_t));
  // The first entry is always a restart point.
  if (DecodeFixed32(contents.data() + restarts_offset) != 0) {
    return CorruptionAt(file_name, "first restart point is not 0 in block",
                        offset);
  }
  block->reset(new Block(std::move(contents), file_name, offset,
                         restarts_offset, num_restarts));
  return Status::OK();
}

std::unique_ptr<Iterator> Block::NewIterator(
    std::shared_ptr<const Block> block) {
  const Block* b = block.get();
  return std::make_unique<BlockIter>(b, std::move(block));
}

BlockIter::BlockIter(const Block* block, std::shared_ptr<const Block> pin)
    : block_(block),
      pin_(std::move(pin)),
      data_(block->contents_.data()),
      restarts_(block->restarts_offset_),
      num_restarts_(block->num_restarts_),
      current_(restarts_),
      next_(restarts_) {}

void BlockIter::CorruptionError(const std::string& what, uint32_t at) {
  if (status_.ok()) {
    status_ =
        CorruptionAt(block_->file_name(),
                     what + " at byte " + std::to_string(at) + " of block",
                     block_->offset());
  }
  current_ = next_ = restarts_;
  restart_index_ = 0;
  key_.clear();
  value_ = Slice();
}

void BlockIter::InvalidArgumentError(const std::string& what) {
  status_ = Status::InvalidArgument(what);
  current_ = next_ = restarts_;
  key_.clear();
  value_ = Slice();
}

bool BlockIter::RestartPoint(uint32_t i, uint32_t* offset) {
  const uint32_t r = DecodeFixed32(data_ + restarts_ + i * sizeof(uint32_t));
  // An empty block has a single restart point at 0 == restarts_.
  if (r >= restarts_ && !(r == 0 && restarts_ == 0)) {
    CorruptionError("restart point " + std::to_string(i) + " out of range",
                    restarts_ + i * static_cast<uint32_t>(sizeof(uint32_t)));
    return false;
  }
  *offset = r;
  return true;
}

void BlockIter::SeekToRestart(uint32_t i, uint32_t offset) {
  key_.clear();
  value_ = Slice();
  restart_index_ = i;
  current_ = restarts_;
  next_ = offset;
}

bool BlockIter::ParseNextKey() {
  if (!status_.ok()) return false;
  const uint32_t at = next_;
  if (at >= restarts_) {
    current_ = next_ = restarts_;
    key_.clear();
    value_ = Slice();
    return false;
  }
  const char* p = data_ + at;
  const char* limit = data_ + restarts_;
  uint32_t shared, non_shared, value_len;
  p = GetVarint32Ptr(p, limit, &shared);
  if (p != nullptr) p = GetVarint32Ptr(p, limit, &non_shared);
  if (p != nullptr) p = GetVarint32Ptr(p, limit, &value_len);
  if (p == nullptr) {
    CorruptionError("bad entry header", at);
    return false;
  }
  const uint64_t avail = static_cast<uint64_t>(limit - p);
  if (shared > key_.size() ||
      uint64_t{non_shared} + uint64_t{value_len} > avail) {
    CorruptionError("entry lengths out of range", at);
    return false;
  }
  if (shared + uint64_t{non_shared} < kInternalKeyTrailerSize) {
    CorruptionError("key shorter than an internal key", at);
    return false;
  }
  key_.resize(shared);
  key_.append(p, non_shared);
  value_ = Slice(p + non_shared, value_len);
  current_ = at;
  next_ = static_cast<uint32_t>(p + non_shared + value_len - data_);
  // Keep restart_index_ at the last restart point at or before current_.
  while (restart_index_ + 1 < num_restarts_) {
    const uint32_t r = DecodeFixed32(data_ + restarts_ +
                                     (restart_index_ + 1) * sizeof(uint32_t));
    if (r > current_) break;
    restart_index_++;
  }
  return true;
}

void BlockIter::SeekToFirst() {
  status_ = Status::OK();
  SeekToRestart(0, 0);
  ParseNextKey();
}

void BlockIter::SeekToLast() {
  status_ = Status::OK();
  uint32_t off;
  if (!RestartPoint(num_restarts_ - 1, &off)) return;
  SeekToRestart(num_restarts_ - 1, off);
  while (ParseNextKey() && next_ < restarts_) {
  }
}

void BlockIter::Next() {
  if (!Valid()) return;
  ParseNextKey();
}

void BlockIter::Prev() {
  if (!Valid()) return;
  const uint32_t original = current_;
  uint32_t off;
  // Back up to a restart point strictly before the current entry.
  while (true) {
    if (!RestartPoint(restart_index_, &off)) return;
    if (off < original) break;
    if (restart_index_ == 0) {
      // No entry before the first one.
      current_ = next_ = restarts_;
      key_.clear();
      value_ = Slice();
      return;
    }
    restart_index_--;
  }
  SeekToRestart(restart_index_, off);
  // Walk forward to the entry just before original. Entries grow the offset
  // by at least 3 bytes, so this ends.
  while (ParseNextKey()) {
    if (next_ >= original) {
      if (next_ != original) CorruptionError("entries misaligned", current_);
      return;
    }
  }
}

void BlockIter::Seek(const Slice& target) {
  status_ = Status::OK();
  if (target.size() < kInternalKeyTrailerSize) {
    InvalidArgumentError("seek target is not an internal key");
    return;
  }
  // Binary search for the last restart point whose key is < target.
  uint32_t left = 0;
  uint32_t right = num_restarts_ - 1;
  while (left < right) {
    const uint32_t mid = left + (right - left + 1) / 2;
    uint32_t off;
    if (!RestartPoint(mid, &off)) return;
    const char* limit = data_ + restarts_;
    uint32_t shared, non_shared, value_len;
    const char* p = GetVarint32Ptr(data_ + off, limit, &shared);
    if (p != nullptr) p = GetVarint32Ptr(p, limit, &non_shared);
    if (p != nullptr) p = GetVarint32Ptr(p, limit, &value_len);
    if (p == nullptr || shared != 0 ||
        non_shared > static_cast<uint64_t>(limit - p) ||
        non_shared < kInternalKeyTrailerSize) {
      CorruptionError("bad restart entry", off);
      return;
    }
    if (CompareInternalKeys(Slice(p, non_shared), target) < 0) {
      left = mid;
    } else {
      right = mid - 1;
    }
  }
  uint32_t off;
  if (!RestartPoint(left, &off)) return;
  SeekToRestart(left, off);
  while (ParseNextKey()) {
    if (CompareInternalKeys(Slice(key_), target) >= 0) return;
  }
}

void BlockIter::SeekForPrev(const Slice& target) {
  Seek(target);
  if (Valid()) {
    if (CompareInternalKeys(Slice(key_), target) > 0) Prev();
  } else if (status_.ok()) {
    SeekToLast();
  }
}

}  // namespace bloomkv
