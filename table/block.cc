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
             uint32_t restarts_offset, uint32_t num_restarts, bool key_prefixes)
    : contents_(std::move(contents)),
      file_name_(std::move(file_name)),
      offset_(offset),
      restarts_offset_(restarts_offset),
      num_restarts_(num_restarts),
      key_prefixes_(key_prefixes) {}

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

bool Block::DecodeTrailer(const char* data, size_t size,
                          uint32_t* restarts_offset, uint32_t* num_restarts,
                          bool* key_prefixes) {
  if (size < sizeof(uint32_t) || size > std::numeric_limits<uint32_t>::max()) {
    return false;
  }
  const uint32_t count = DecodeFixed32(data + size - sizeof(uint32_t));
  *key_prefixes = (count & kBlockKeyPrefixesFlag) != 0;
  *num_restarts = count & ~kBlockKeyPrefixesFlag;
  const size_t per_restart =
      sizeof(uint32_t) + (*key_prefixes ? sizeof(uint64_t) : 0);
  if (*num_restarts == 0 ||
      *num_restarts > (size - sizeof(uint32_t)) / per_restart) {
    return false;
  }
  *restarts_offset = static_cast<uint32_t>(size - sizeof(uint32_t) -
                                           *num_restarts * per_restart);
  return true;
}

Status Block::ParseTrailer(const BlockContents& contents,
                           const std::string& file_name, uint64_t offset,
                           uint32_t* restarts_offset, uint32_t* num_restarts,
                           bool* key_prefixes) {
  const size_t size = contents.size();
  if (size < sizeof(uint32_t) || size > std::numeric_limits<uint32_t>::max()) {
    return CorruptionAt(file_name, "bad block size " + std::to_string(size),
                        offset);
  }
  if (!DecodeTrailer(contents.data(), size, restarts_offset, num_restarts,
                     key_prefixes)) {
    return CorruptionAt(
        file_name,
        "bad restart count " +
            std::to_string(DecodeFixed32(contents.data() + size - 4)) +
            " in block",
        offset);
  }
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
  bool key_prefixes;
  Status s = ParseTrailer(contents, *file_name, offset, &restarts_offset,
                          &num_restarts, &key_prefixes);
  if (!s.ok()) return s;
  *block = std::make_shared<const Block>(
      ConstructionKey(), std::move(contents), std::move(file_name), offset,
      restarts_offset, num_restarts, key_prefixes);
  return Status::OK();
}

Status Block::Parse(BlockContents contents,
                    std::shared_ptr<const std::string> file_name,
                    uint64_t offset, std::optional<Block>* block) {
  uint32_t restarts_offset, num_restarts;
  bool key_prefixes;
  Status s = ParseTrailer(contents, *file_name, offset, &restarts_offset,
                          &num_restarts, &key_prefixes);
  if (!s.ok()) return s;
  block->emplace(ConstructionKey(), std::move(contents), std::move(file_name),
                 offset, restarts_offset, num_restarts, key_prefixes);
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

}  // namespace

Status Block::CorruptionInBlock(const std::string& what, uint32_t at) const {
  return CorruptionAt(*file_name_,
                      what + " at byte " + std::to_string(at) + " of block",
                      offset_);
}

[[gnu::always_inline]] inline bool Block::RestartPoint(uint32_t i,
                                                       uint32_t* offset) const {
  *offset =
      DecodeFixed32(contents_.data() + restarts_offset_ + i * sizeof(uint32_t));
  // An empty block has a single restart point at 0 == restarts_offset_.
  return *offset < restarts_offset_ || (*offset == 0 && restarts_offset_ == 0);
}

Status Block::BadRestartPoint(uint32_t i) const {
  return CorruptionInBlock(
      "restart point " + std::to_string(i) + " out of range",
      restarts_offset_ + i * static_cast<uint32_t>(sizeof(uint32_t)));
}

[[gnu::always_inline]] inline const char* Block::DecodeEntry(uint32_t at,
                                                             size_t key_size,
                                                             Entry* e) const {
  const char* const limit = contents_.data() + restarts_offset_;
  const char* p = DecodeEntryHeader(contents_.data() + at, limit, &e->shared,
                                    &e->non_shared, &e->value_len);
  if (p == nullptr) return "bad entry header";
  if (e->shared > key_size || uint64_t{e->non_shared} + e->value_len >
                                  static_cast<uint64_t>(limit - p)) {
    return "entry lengths out of range";
  }
  if (e->shared + uint64_t{e->non_shared} < kInternalKeyTrailerSize) {
    return "key shorter than an internal key";
  }
  e->key_delta = p;
  e->next = static_cast<uint32_t>(p + e->non_shared + e->value_len -
                                  contents_.data());
  return nullptr;
}

[[gnu::always_inline]] inline bool Block::SearchRestarts(const Slice& target,
                                                         uint32_t left,
                                                         uint32_t right,
                                                         uint32_t* index,
                                                         Status* error) const {
  // A restart entry shares nothing with its predecessor, so its key is
  // compared where it lies.
  const char* const limit = contents_.data() + restarts_offset_;
  while (left < right) {
    const uint32_t mid = left + (right - left + 1) / 2;
    uint32_t off;
    if (!RestartPoint(mid, &off)) {
      *error = BadRestartPoint(mid);
      return false;
    }
    uint32_t shared, non_shared, value_len;
    const char* p = DecodeEntryHeader(contents_.data() + off, limit, &shared,
                                      &non_shared, &value_len);
    if (p == nullptr || shared != 0 ||
        non_shared > static_cast<uint64_t>(limit - p) ||
        non_shared < kInternalKeyTrailerSize) {
      *error = CorruptionInBlock("bad restart entry", off);
      return false;
    }
    if (CompareInternalKeys(p, non_shared, target.data(), target.size()) < 0) {
      left = mid;
    } else {
      right = mid - 1;
    }
  }
  *index = left;
  return true;
}

void Block::RestartRangeByPrefix(const Slice& target, uint32_t* left,
                                 uint32_t* right) const {
  const char* const prefixes =
      contents_.data() + restarts_offset_ + num_restarts_ * sizeof(uint32_t);
  const uint64_t want = UserKeyPrefix(ExtractUserKey(target));
  const auto prefix = [prefixes](uint32_t i) {
    return DecodeFixed64(prefixes + i * sizeof(uint64_t));
  };
  // below: restart points whose prefix is < want; at_most: <= want. The
  // prefixes ascend, so below comes from a search that halves the range
  // with a conditional move instead of a branch (a branch on random keys
  // mispredicts half the time); a 4 KiB block with a restart point every
  // four entries has about fifteen, four steps over two cache lines.
  // at_most then adds the points that share want's prefix, nearly always
  // none for short codes.
  uint32_t below = 0;
  for (uint32_t n = num_restarts_; n > 1;) {
    const uint32_t half = n / 2;
    below = prefix(below + half) < want ? below + half : below;
    n -= half;
  }
  below += prefix(below) < want;
  uint32_t at_most = below;
  while (at_most < num_restarts_ && prefix(at_most) == want) at_most++;
  *left = below == 0 ? 0 : below - 1;
  *right = at_most == 0 ? 0 : at_most - 1;
}

Status Block::Find(const Slice& target, BlockKeyBuffer* key_buf, Slice* key,
                   Slice* value, bool* found, uint32_t* restart_point,
                   const PrefixRange* prefix_range) const {
  *found = false;
  if (target.size() < kInternalKeyTrailerSize) {
    return Status::InvalidArgument("seek target is not an internal key");
  }
  uint32_t restart = 0;
  uint32_t last = num_restarts_ - 1;
  if (prefix_range != nullptr) {
    const auto [lo, hi] = *prefix_range;
    if (lo >= num_restarts_) return Status::OK();
    restart = static_cast<uint32_t>(lo);
    last = std::min<size_t>(last, hi);
  } else if (key_prefixes_) {
    RestartRangeByPrefix(target, &restart, &last);
  }
  Status error;
  if (restart < last &&
      !SearchRestarts(target, restart, last, &restart, &error)) {
    return error;
  }
  // Walk forward from that restart point to the first key >= target.
  uint32_t at;
  if (!RestartPoint(restart, &at)) return BadRestartPoint(restart);
  // The walk reads the entries up to the next restart point one after the
  // other, each header telling where the next begins: asking for all their
  // cache lines first lets a block that is not in the CPU caches arrive in
  // one memory round trip instead of one per line.
  const char* const data = contents_.data();
  uint32_t end = restarts_offset_;
  if (restart + 1 < num_restarts_ && !RestartPoint(restart + 1, &end)) {
    end = restarts_offset_;
  }
  if (at < end) {
    for (const char* p = data + at; p < data + end; p += 64) {
      __builtin_prefetch(p);
    }
    __builtin_prefetch(data + end - 1);  // the last line, if p skipped it
  }
  key_buf->Clear();
  const uint32_t first = at;
  while (at < restarts_offset_) {
    Entry e;
    if (const char* bad = DecodeEntry(at, key_buf->size(), &e)) {
      return CorruptionInBlock(bad, at);
    }
    key_buf->Assemble(e.shared, e.key_delta, e.non_shared);
    if (CompareInternalKeys(key_buf->slice().data(), key_buf->size(),
                            target.data(), target.size()) >= 0) {
      *key = key_buf->slice();
      *value = Slice(e.key_delta + e.non_shared, e.value_len);
      *found = true;
      if (restart_point != nullptr) {
        // The search stops at the restart point it started from or, past
        // a shorter interval, at the next one, whose offset is end.
        *restart_point = at == first                               ? restart
                         : at == end && restart + 1 < num_restarts_ ? restart + 1
                                                                    : kNotARestartPoint;
      }
      return Status::OK();
    }
    at = e.next;
  }
  return Status::OK();
}

bool Block::RestartKeyPrefixes(std::vector<uint64_t>* prefixes) const {
  prefixes->clear();
  prefixes->reserve(num_restarts_);
  for (uint32_t i = 0; i < num_restarts_; i++) {
    uint32_t at, next_restart = restarts_offset_;
    Entry e;
    if (!RestartPoint(i, &at) ||
        (i + 1 < num_restarts_ && !RestartPoint(i + 1, &next_restart)) ||
        at >= restarts_offset_ || DecodeEntry(at, 0, &e) != nullptr ||
        e.next != next_restart) {
      prefixes->clear();
      return false;
    }
    prefixes->push_back(UserKeyPrefix(
        Slice(e.key_delta, e.non_shared - kInternalKeyTrailerSize)));
  }
  return true;
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
  SetError(block_->CorruptionInBlock(what, at));
}

void BlockIter::SetError(const Status& s) {
  if (status_.ok()) status_ = s;
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
  if (block_->RestartPoint(i, offset)) return true;
  SetError(block_->BadRestartPoint(i));
  return false;
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
  Block::Entry e;
  if (const char* bad = block_->DecodeEntry(at, key_.size(), &e)) {
    CorruptionError(bad, at);
    return false;
  }
  key_.resize(e.shared);
  key_.append(e.key_delta, e.non_shared);
  value_ = Slice(e.key_delta + e.non_shared, e.value_len);
  current_ = at;
  next_ = e.next;
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
  uint32_t restart = 0, last = num_restarts_ - 1;
  if (block_->key_prefixes_) {
    block_->RestartRangeByPrefix(target, &restart, &last);
  }
  Status error;
  if (restart < last &&
      !block_->SearchRestarts(target, restart, last, &restart, &error)) {
    SetError(error);
    return;
  }
  uint32_t off;
  if (!RestartPoint(restart, &off)) return;
  SeekToRestart(restart, off);
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
