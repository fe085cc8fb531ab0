// WriteBatch encoding, parsing and application to a memtable.
//
// The format is specified in docs/write_batch_format.md; the parser below
// is the only reader of it and treats its input as untrusted (it may come
// from a damaged log): it never reads outside the given bytes.
#include "bloomkv/write_batch.h"

#include <cassert>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "db/memtable.h"
#include "db/write_batch_internal.h"
#include "table/internal_key.h"
#include "util/coding.h"

namespace bloomkv {

namespace {

// Never change: on disk. Record tags are the stored ValueType values.
constexpr uint8_t kTagDeletion = static_cast<uint8_t>(ValueType::kDeletion);
constexpr uint8_t kTagValue = static_cast<uint8_t>(ValueType::kValue);
static_assert(kTagDeletion == 0 && kTagValue == 1, "never change: on disk");
// A batch-only tag: range tombstones never become internal keys
// (db/range_tombstones.h).
constexpr uint8_t kTagRangeDeletion = 2;
static_assert(kWriteBatchHeaderSize == 12, "never change: on disk");

constexpr size_t kCountOffset = 8;

Status BatchCorruption(const std::string& what, size_t offset) {
  return Status::Corruption("write batch",
                            what + " at offset " + std::to_string(offset));
}

// Walks every record of an encoded batch, calling handler (if not null) for
// each, and checks that the records fill the contents exactly and that
// their number matches the header.
Status ParseBatch(const Slice& contents, WriteBatch::Handler* handler) {
  if (contents.size() < kWriteBatchHeaderSize) {
    return BatchCorruption(
        "header truncated to " + std::to_string(contents.size()) + " bytes", 0);
  }
  const uint32_t header_count = DecodeFixed32(contents.data() + kCountOffset);
  Slice input(contents.data() + kWriteBatchHeaderSize,
              contents.size() - kWriteBatchHeaderSize);
  uint64_t found = 0;
  while (!input.empty()) {
    const size_t offset = contents.size() - input.size();
    if (found == header_count) {
      return BatchCorruption("more records than the header's count of " +
                                 std::to_string(header_count),
                             offset);
    }
    const uint8_t tag = static_cast<uint8_t>(input[0]);
    input.remove_prefix(1);
    Slice key;
    Slice value;
    switch (tag) {
      case kTagValue:
        if (!GetLengthPrefixedSlice(&input, &key) ||
            !GetLengthPrefixedSlice(&input, &value)) {
          return BatchCorruption("truncated Put record", offset);
        }
        if (handler != nullptr) handler->Put(key, value);
        break;
      case kTagDeletion:
        if (!GetLengthPrefixedSlice(&input, &key)) {
          return BatchCorruption("truncated Delete record", offset);
        }
        if (handler != nullptr) handler->Delete(key);
        break;
      case kTagRangeDeletion:
        if (!GetLengthPrefixedSlice(&input, &key) ||
            !GetLengthPrefixedSlice(&input, &value)) {
          return BatchCorruption("truncated DeleteRange record", offset);
        }
        if (handler != nullptr) handler->DeleteRange(key, value);
        break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "0x%02x", tag);
        return BatchCorruption(std::string("unknown record tag ") + buf,
                               offset);
      }
    }
    found++;
  }
  if (found != header_count) {
    return BatchCorruption("header counts " + std::to_string(header_count) +
                               " records but the batch ends after " +
                               std::to_string(found),
                           contents.size());
  }
  return Status::OK();
}

// Records take sequence numbers first .. first + count - 1, all of which
// must be valid sequence numbers.
bool SequenceRangeValid(SequenceNumber first, uint32_t count) {
  if (first > kMaxSequenceNumber) return false;
  return count == 0 || count - 1 <= kMaxSequenceNumber - first;
}

class MemTableInserter final : public WriteBatch::Handler {
 public:
  MemTableInserter(SequenceNumber first, MemTable* mem)
      : sequence_(first), mem_(mem) {}
  void Put(const Slice& key, const Slice& value) override {
    mem_->Add(sequence_++, ValueType::kValue, key, value);
  }
  void Delete(const Slice& key) override {
    mem_->Add(sequence_++, ValueType::kDeletion, key, Slice());
  }
  void DeleteRange(const Slice& begin, const Slice& end) override {
    // An empty range deletes nothing; it still takes its sequence number.
    if (begin.compare(end) < 0) mem_->AddRangeTombstone(sequence_, begin, end);
    sequence_++;
  }

 private:
  SequenceNumber sequence_;
  MemTable* const mem_;
};

}  // namespace

WriteBatch::Handler::~Handler() = default;

WriteBatch::WriteBatch() { Clear(); }

WriteBatch::WriteBatch(WriteBatch&& other) noexcept
    : rep_(std::move(other.rep_)) {
  other.Clear();
}

WriteBatch& WriteBatch::operator=(WriteBatch&& other) noexcept {
  if (this != &other) {
    rep_ = std::move(other.rep_);
    // A moved-from string may be empty, which would leave no header.
    other.Clear();
  }
  return *this;
}

WriteBatch::~WriteBatch() = default;

void WriteBatch::Clear() { rep_.assign(kWriteBatchHeaderSize, '\0'); }

uint32_t WriteBatch::Count() const { return WriteBatchInternal::Count(this); }

size_t WriteBatch::ApproximateSize() const { return rep_.size(); }

void WriteBatch::Put(const Slice& key, const Slice& value) {
  assert(key.size() <= std::numeric_limits<uint32_t>::max());
  assert(value.size() <= std::numeric_limits<uint32_t>::max());
  assert(Count() < std::numeric_limits<uint32_t>::max());
  WriteBatchInternal::SetCount(this, Count() + 1);
  // One allocation for the record rather than one per append as it grows
  // (the string at least doubles when it must grow, so batches of many
  // records still grow geometrically).
  rep_.reserve(rep_.size() + 1 + VarintLength(key.size()) + key.size() +
               VarintLength(value.size()) + value.size());
  rep_.push_back(static_cast<char>(kTagValue));
  PutLengthPrefixedSlice(&rep_, key);
  PutLengthPrefixedSlice(&rep_, value);
}

void WriteBatch::Delete(const Slice& key) {
  assert(key.size() <= std::numeric_limits<uint32_t>::max());
  assert(Count() < std::numeric_limits<uint32_t>::max());
  WriteBatchInternal::SetCount(this, Count() + 1);
  rep_.push_back(static_cast<char>(kTagDeletion));
  PutLengthPrefixedSlice(&rep_, key);
}

void WriteBatch::DeleteRange(const Slice& begin, const Slice& end) {
  assert(begin.size() <= std::numeric_limits<uint32_t>::max());
  assert(end.size() <= std::numeric_limits<uint32_t>::max());
  assert(Count() < std::numeric_limits<uint32_t>::max());
  WriteBatchInternal::SetCount(this, Count() + 1);
  rep_.push_back(static_cast<char>(kTagRangeDeletion));
  PutLengthPrefixedSlice(&rep_, begin);
  PutLengthPrefixedSlice(&rep_, end);
}

void WriteBatch::Append(const WriteBatch& source) {
  const uint32_t total = Count() + source.Count();
  assert(total >= Count());  // No overflow of the 32-bit count.
  // Appending a range of a string to itself is well defined, so
  // Append(*this) needs no copy.
  rep_.append(source.rep_, kWriteBatchHeaderSize, std::string::npos);
  WriteBatchInternal::SetCount(this, total);
}

Status WriteBatch::Iterate(Handler* handler) const {
  assert(handler != nullptr);
  return ParseBatch(rep_, handler);
}

uint32_t WriteBatchInternal::Count(const WriteBatch* batch) {
  return DecodeFixed32(batch->rep_.data() + kCountOffset);
}

void WriteBatchInternal::SetCount(WriteBatch* batch, uint32_t n) {
  EncodeFixed32(&batch->rep_[kCountOffset], n);
}

SequenceNumber WriteBatchInternal::Sequence(const WriteBatch* batch) {
  return DecodeFixed64(batch->rep_.data());
}

void WriteBatchInternal::SetSequence(WriteBatch* batch, SequenceNumber seq) {
  EncodeFixed64(&batch->rep_[0], seq);
}

Status WriteBatchInternal::SetContents(WriteBatch* batch,
                                       const Slice& contents) {
  Status s = ParseBatch(contents, nullptr);
  if (!s.ok()) return s;
  const SequenceNumber first = DecodeFixed64(contents.data());
  if (!SequenceRangeValid(first,
                          DecodeFixed32(contents.data() + kCountOffset))) {
    return BatchCorruption(
        "sequence numbers from " + std::to_string(first) + " out of range", 0);
  }
  batch->rep_.assign(contents.data(), contents.size());
  return Status::OK();
}

Status WriteBatchInternal::InsertInto(const WriteBatch* batch,
                                      MemTable* memtable) {
  const SequenceNumber first = Sequence(batch);
  if (!SequenceRangeValid(first, Count(batch))) {
    return Status::InvalidArgument(
        "write batch",
        "sequence numbers from " + std::to_string(first) + " out of range");
  }
  // Checks the whole batch before adding anything, so a memtable never
  // holds part of a batch. Parsing costs far less than the inserts.
  Status s = ParseBatch(batch->rep_, nullptr);
  if (!s.ok()) return s;
  MemTableInserter inserter(first, memtable);
  return ParseBatch(batch->rep_, &inserter);
}

}  // namespace bloomkv
