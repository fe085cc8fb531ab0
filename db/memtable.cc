// MemTable entries and their iterator; see memtable.h.
//
// Each entry shares one arena allocation with its skiplist node (right after
// the node's links), so a skiplist key is a single pointer and the entry's
// bytes sit together in memory, next to the node:
//
//   entry := varint32(internal_key_size) internal_key
//            varint32(value_size) value
//
// Entries exist only in memory; this layout may change freely.
#include "db/memtable.h"

#include <cassert>
#include <cstring>
#include <limits>
#include <memory>

#include "util/coding.h"

namespace bloomkv {

namespace {

// Entries are written by Add(), so their varints are well formed; the limit
// only bounds how far the decoder may look.
Slice GetLengthPrefixed(const char* p) {
  uint32_t len = 0;
  const char* q = GetVarint32Ptr(p, p + kMaxVarint32Length, &len);
  assert(q != nullptr);
  return Slice(q, len);
}

// An entry starts with varint32(user_key.size() + 8) || user_key ||
// fixed64(tag), EntryKeySize(user_key) bytes: the form the skiplist compares
// (and LookupKey builds).
size_t EntryKeySize(const Slice& user_key) {
  const size_t ikey_size = user_key.size() + kInternalKeyTrailerSize;
  return static_cast<size_t>(VarintLength(ikey_size)) + ikey_size;
}
void EncodeEntryKey(char* dst, const Slice& user_key, uint64_t tag) {
  const size_t ikey_size = user_key.size() + kInternalKeyTrailerSize;
  char* p = EncodeVarint32(dst, static_cast<uint32_t>(ikey_size));
  if (!user_key.empty()) std::memcpy(p, user_key.data(), user_key.size());
  EncodeFixed64(p + user_key.size(), tag);
}

}  // namespace

// Defined before the skiplist's members are instantiated below, and
// inlined into their search loops.
[[gnu::always_inline]] inline int MemTable::KeyComparator::operator()(
    const char* a, const char* b) const {
  return CompareInternalKeys(GetLengthPrefixed(a), GetLengthPrefixed(b));
}


MemTable::MemTable() : table_(KeyComparator(), &arena_) {}

MemTable::~MemTable() { assert(refs_.load(std::memory_order_relaxed) == 0); }

void MemTable::Unref() {
  const int previous = refs_.fetch_sub(1, std::memory_order_acq_rel);
  assert(previous > 0);
  if (previous == 1) delete this;
}

void MemTable::Add(SequenceNumber seq, ValueType type, const Slice& user_key,
                   const Slice& value) {
  assert(seq <= kMaxSequenceNumber);
  assert(type == ValueType::kValue || type == ValueType::kDeletion);
  assert(user_key.size() <=
         std::numeric_limits<uint32_t>::max() - kInternalKeyTrailerSize);
  assert(value.size() <= std::numeric_limits<uint32_t>::max());
  const size_t ikey_size = user_key.size() + kInternalKeyTrailerSize;
  const size_t encoded_size =
      EntryKeySize(user_key) + VarintLength(value.size()) + value.size();
  // The entry goes right after its skiplist node, so that an insert or a
  // lookup that compares against the node finds the key next to the links
  // it just read (with random keys nearly every node a search visits is a
  // cache miss, and a separate entry would be a second one).
  table_.InsertInline(encoded_size, [&](char* buf) {
    EncodeEntryKey(buf, user_key, PackSequenceAndType(seq, type));
    char* p = buf + VarintLength(ikey_size) + ikey_size;
    p = EncodeVarint32(p, static_cast<uint32_t>(value.size()));
    if (!value.empty()) std::memcpy(p, value.data(), value.size());
    assert(p + value.size() == buf + encoded_size);
  });
  if (smallest_sequence_.load(std::memory_order_relaxed) == 0) {
    smallest_sequence_.store(seq, std::memory_order_relaxed);
  }
  num_entries_.fetch_add(1, std::memory_order_relaxed);
}

void MemTable::AddRangeTombstone(SequenceNumber seq, const Slice& begin,
                                 const Slice& end) {
  assert(seq <= kMaxSequenceNumber);
  assert(begin.compare(end) < 0);
  MutexLock lock(&range_mu_);
  range_added_.push_back({begin.ToString(), end.ToString(), seq});
  if (smallest_sequence_.load(std::memory_order_relaxed) == 0) {
    smallest_sequence_.store(seq, std::memory_order_relaxed);
  }
  num_range_tombstones_.store(range_added_.size(), std::memory_order_release);
  range_bytes_.fetch_add(2 * (sizeof(RangeTombstone) + begin.size() + end.size()),
                         std::memory_order_relaxed);
}

std::shared_ptr<const RangeTombstoneSet> MemTable::range_tombstones() const {
  if (!HasRangeTombstones()) return nullptr;
  MutexLock lock(&range_mu_);
  if (range_set_ == nullptr ||
      range_set_->tombstones().size() != range_added_.size()) {
    range_set_ = std::make_shared<const RangeTombstoneSet>(range_added_);
  }
  return range_set_;
}

bool MemTable::Get(const Slice& user_key, SequenceNumber snapshot,
                   std::string* value, bool* deleted,
                   SequenceNumber* sequence) const {
  assert(deleted != nullptr);
  *deleted = false;
  // A settled database's reads meet an empty memtable: no key to build.
  if (table_.Empty()) return false;
  // Lands on the newest entry of user_key visible at snapshot, if any.
  const LookupKey lookup(user_key, snapshot);
  Table::Iterator iter(&table_);
  iter.Seek(lookup.memtable_key());
  if (!iter.Valid()) return false;
  const char* entry = iter.key();
  const Slice ikey = GetLengthPrefixed(entry);
  if (ExtractUserKey(ikey) != user_key) return false;
  const uint64_t tag =
      DecodeFixed64(ikey.data() + ikey.size() - kInternalKeyTrailerSize);
  if (sequence != nullptr) *sequence = tag >> 8;
  switch (static_cast<ValueType>(tag & 0xff)) {
    case ValueType::kValue:
      if (value != nullptr) {
        const Slice v = GetLengthPrefixed(ikey.data() + ikey.size());
        value->assign(v.data(), v.size());
      }
      return true;
    case ValueType::kDeletion:
      *deleted = true;
      return true;
  }
  assert(false && "Add() stores only known value types");
  return false;
}

// Adapts the skiplist iterator to bloomkv::Iterator. Seek targets are
// internal keys; they are re-encoded with a length prefix into scratch_ to
// compare against entries.
class MemTable::MemTableIterator final : public Iterator {
 public:
  explicit MemTableIterator(MemTable* mem) : mem_(mem), iter_(&mem->table_) {
    mem_->Ref();
  }
  ~MemTableIterator() override { mem_->Unref(); }

  bool Valid() const override { return iter_.Valid(); }
  void SeekToFirst() override {
    status_ = Status::OK();
    iter_.SeekToFirst();
  }
  void SeekToLast() override {
    status_ = Status::OK();
    iter_.SeekToLast();
  }
  void Seek(const Slice& target) override {
    if (EncodeTarget(target)) iter_.Seek(scratch_.data());
  }
  void SeekForPrev(const Slice& target) override {
    if (EncodeTarget(target)) iter_.SeekForPrev(scratch_.data());
  }
  void Next() override {
    assert(Valid());
    iter_.Next();
  }
  void Prev() override {
    assert(Valid());
    iter_.Prev();
  }
  Slice key() const override {
    assert(Valid());
    return GetLengthPrefixed(iter_.key());
  }
  Slice value() const override {
    assert(Valid());
    const Slice k = GetLengthPrefixed(iter_.key());
    return GetLengthPrefixed(k.data() + k.size());
  }
  Status status() const override { return status_; }

 private:
  // False (and the iterator invalid, with an error status) if target cannot
  // be compared with internal keys.
  bool EncodeTarget(const Slice& target) {
    if (target.size() < kInternalKeyTrailerSize ||
        target.size() > std::numeric_limits<uint32_t>::max()) {
      status_ = Status::InvalidArgument(
          "memtable iterator: seek target is not an internal key");
      iter_ = Table::Iterator(&mem_->table_);  // Not Valid().
      return false;
    }
    status_ = Status::OK();
    scratch_.clear();
    PutVarint32(&scratch_, static_cast<uint32_t>(target.size()));
    scratch_.append(target.data(), target.size());
    return true;
  }

  MemTable* const mem_;
  Table::Iterator iter_;
  std::string scratch_;
  Status status_;
};

Iterator* MemTable::NewIterator() { return new MemTableIterator(this); }

}  // namespace bloomkv
