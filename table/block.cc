// Block parsing and iteration; see block.h.
#include "table/block.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "table/format.h"
#include "table/internal_key.h"
#include "util/coding.h"

namespace bloomkv {

Block::Block(ConstructionKey, BlockContents contents,
             std::shared_ptr<const std::string> file_name, uint64_t offset,
             uint32_t restarts_offset, uint32_t num_restarts)
    : contents_(std::move(contents)),
      file_name_(std::move(file_name)),
      offset_(offset),
      restarts_offset_(restarts_offset),
      num_restarts_(num_restarts) {}

Status Block::Parse(BlockContents contents, const std::string& file_name,
                    uint64_t offset, std::shared_ptr<const Block>* block) {
  return Parse(std::move(contents),
               std::make_shared<const std::string>(file_name), offset, block);
}

Status Block::Parse(const std::string& contents, const std::string& file_name,
                    uint64_t offset, std::shared_ptr<const Block>* block) {
  BlockContents copy(contents.size());
  std::memcpy(copy.mutable_data(), contents.data(), contents.size());
  return Parse(std::move(copy), file_name, offset, block);
}

Status Block::ParseTrailer(const BlockContents& contents,
                           const std::string& file_name, uint64_t offset,
                           uint32_t* restarts_offset, uint32_t* num_restarts) {
  const size_t size = contents.size();
  if (size < sizeof(uint32_t) || size > std::numeric_limits<uint32_t>::max()) {
    return CorruptionAt(file_name, "bad block size " + std::to_string(size),
                        offset);
  }
  *num_restarts = DecodeFixed32(contents.data() + size - sizeof(uint32_t));
  const uint64_t max_restarts = (size - sizeof(uint32_t)) / sizeof(uint32_t);
  if (*num_restarts == 0 || *num_restarts > max_restarts) {
    return CorruptionAt(
        file_name,
        "bad restart count " + std::to_string(*num_restarts) + " in block",
        offset);
  }
  *restarts_offset = static_cast<uint32_t>(
      size - sizeof(uint32_t) - uint64_t{*num_restarts} * sizeof(uint32_t));
  // The first entry is always a restart point.
  if (DecodeFixed32(contents.data() + *restarts_offset) != 0) {
    return CorruptionAt(file_name, "first restart point is not 0 in block",
                        offset);
  }
  return Status::OK();
}

Status Block::Parse(BlockContents contents,
                    std::shared_ptr<const std::string> file_name,
                    uint64_t offset, std::shared_ptr<const Block>* block) {
  uint32_t restarts_offset, num_restarts;
  Status s = ParseTrailer(contents, *file_name, offset, &restarts_offset,
                          &num_restarts);
  if (!s.ok()) return s;
  *block = std::make_shared<const Block>(ConstructionKey(), std::move(contents),
                                         std::move(file_name), offset,
                                         restarts_offset, num_restarts);
  return Status::OK();
}

Status Block::Parse(BlockContents contents,
                    std::shared_ptr<const std::string> file_name,
                    uint64_t offset, std::optional<Block>* block) {
  uint32_t restarts_offset, num_restarts;
  Status s = ParseTrailer(contents, *file_name, offset, &restarts_offset,
                          &num_restarts);
  if (!s.ok()) return s;
  block->emplace(ConstructionKey(), std::move(contents), std::move(file_name),
                 offset, restarts_offset, num_restarts);
  return Status::OK();
}

void BlockKeyBuffer::Grow(size_t need) {
  std::string bigger(std::max(need, 2 * capacity_), '\0');
  std::memcpy(bigger.data(), data_, size_);
  heap_.swap(bigger);
  data_ = heap_.data();
  capacity_ = heap_.size();
}

namespace {
// Decodes the three varints that start an entry; nullptr if they run past
// limit. Nearly every entry has three one-byte varints: that case is
// decoded without a call.
inline const char* DecodeEntryHeader(const char* p, const char* limit,
                                     uint32_t* shared, uint32_t* non_shared,
                                     uint32_t* value_len) {
  if (limit - p >= 3) {
    const uint8_t a = static_cast<uint8_t>(p[0]);
    const uint8_t b = static_cast<uint8_t>(p[1]);
    const uint8_t c = static_cast<uint8_t>(p[2]);
    if ((a | b | c) < 0x80) {
      *shared = a;
      *non_shared = b;
      *value_len = c;
      return p + 3;
    }
  }
  p = GetVarint32Ptr(p, limit, shared);
  if (p != nullptr) p = GetVarint32Ptr(p, limit, non_shared);
  if (p != nullptr) p = GetVarint32Ptr(p, limit, value_len);
  return p;
}

// CompareInternalKeys(Slice(a, an), Slice(b, bn)), with the user keys
// compared eight bytes at a time in registers instead of through memcmp:
// the point lookup's hot loop. REQUIRES: an, bn >= kInternalKeyTrailerSize.
inline int CompareInternalKeysInline(const char* a, size_t an, const char* b,
                                     size_t bn) {
  const size_t ua = an - kInternalKeyTrailerSize;
  const size_t ub = bn - kInternalKeyTrailerSize;
  const size_t n = std::min(ua, ub);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) {
      // Big-endian order makes the first differing byte the most
      // significant one.
      x = __builtin_bswap64(x);
      y = __builtin_bswap64(y);
      return x < y ? -1 : +1;
    }
  }
  for (; i < n; i++) {
    const uint8_t x = static_cast<uint8_t>(a[i]);
    const uint8_t y = static_cast<uint8_t>(b[i]);
    if (x != y) return x < y ? -1 : +1;
  }
  if (ua != ub) return ua < ub ? -1 : +1;
  // Equal user keys: the larger sequence/type trailer sorts first.
  const uint64_t ta = DecodeFixed64(a + ua);
  const uint64_t tb = DecodeFixed64(b + ub);
  if (ta > tb) return -1;
  if (ta < tb) return +1;
  return 0;
}
}  // namespace

Status Block::CorruptionInBlock(const std::string& what, uint32_t at) const {
  return CorruptionAt(*file_name_,
                      what + " at byte " + std::to_string(at) + " of block",
                      offset_);
}

Status Block::Find(const Slice& target, BlockKeyBuffer* key_buf, Slice* key,
                   Slice* value, bool* found) const {
  *found = false;
  if (target.size() < kInternalKeyTrailerSize) {
    return Status::InvalidArgument("seek target is not an internal key");
  }
  const char* const data = contents_.data();
  const char* const limit = data + restarts_offset_;
  const char* const restart_array = limit;
  // Offset of restart point i, checked like BlockIter::RestartPoint (an
  // empty block has a single restart point at 0 == restarts_offset_).
  auto restart_point = [&](uint32_t i, uint32_t* off) {
    *off = DecodeFixed32(restart_array + i * sizeof(uint32_t));
    return *off < restarts_offset_ || (*off == 0 && restarts_offset_ == 0);
  };
  auto bad_restart = [&](uint32_t i) {
    return CorruptionInBlock(
        "restart point " + std::to_string(i) + " out of range",
        restarts_offset_ + i * static_cast<uint32_t>(sizeof(uint32_t)));
  };

  // Binary search for the last restart point whose key is < target. A
  // restart entry shares nothing with its predecessor, so its key is
  // compared where it lies.
  uint32_t left = 0;
  uint32_t right = num_restarts_ - 1;
  while (left < right) {
    const uint32_t mid = left + (right - left + 1) / 2;
    uint32_t off;
    if (!restart_point(mid, &off)) return bad_restart(mid);
    uint32_t shared, non_shared, value_len;
    const char* p =
        DecodeEntryHeader(data + off, limit, &shared, &non_shared, &value_len);
    if (p == nullptr || shared != 0 ||
        non_shared > static_cast<uint64_t>(limit - p) ||
        non_shared < kInternalKeyTrailerSize) {
      return CorruptionInBlock("bad restart entry", off);
    }
    if (CompareInternalKeysInline(p, non_shared, target.data(), target.size()) <
        0) {
      left = mid;
    } else {
      right = mid - 1;
    }
  }

  // Walk forward from that restart point to the first key >= target.
  uint32_t at;
  if (!restart_point(left, &at)) return bad_restart(left);
  // The walk reads the entries up to the next restart point one after the
  // other, each header telling where the next begins: asking for all their
  // cache lines first lets a block that is not in the CPU caches arrive in
  // one memory round trip instead of one per line.
  uint32_t end = restarts_offset_;
  if (left + 1 < num_restarts_ && !restart_point(left + 1, &end)) {
    end = restarts_offset_;
  }
  if (at < end) {
    for (const char* p = data + at; p < data + end; p += 64) {
      __builtin_prefetch(p);
    }
    __builtin_prefetch(data + end - 1);  // the last line, if p skipped it
  }
  key_buf->Clear();
  while (at < restarts_offset_) {
    uint32_t shared, non_shared, value_len;
    const char* p =
        DecodeEntryHeader(data + at, limit, &shared, &non_shared, &value_len);
    if (p == nullptr) return CorruptionInBlock("bad entry header", at);
    if (shared > key_buf->size() ||
        uint64_t{non_shared} + value_len > static_cast<uint64_t>(limit - p)) {
      return CorruptionInBlock("entry lengths out of range", at);
    }
    if (shared + uint64_t{non_shared} < kInternalKeyTrailerSize) {
      return CorruptionInBlock("key shorter than an internal key", at);
    }
    key_buf->Assemble(shared, p, non_shared);
    if (CompareInternalKeysInline(key_buf->slice().data(), key_buf->size(),
                                  target.data(), target.size()) >= 0) {
      *key = key_buf->slice();
      *value = Slice(p + non_shared, value_len);
      *found = true;
      return Status::OK();
    }
    at = static_cast<uint32_t>(p + non_shared + value_len - data);
  }
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
