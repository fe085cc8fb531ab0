// Internal keys: how user keys are stored in memtables and segment files.
//
//   internal_key := user_key || fixed64(sequence << 8 | type)
//
// Internal keys order by user key ascending (bytewise), then by sequence
// descending, then type descending, so the newest version of a user key comes
// first. This encoding is on disk: never change it.
// Thread-safety: stateless functions and values.
#ifndef BLOOMKV_TABLE_INTERNAL_KEY_H_
#define BLOOMKV_TABLE_INTERNAL_KEY_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "bloomkv/slice.h"
#include "util/coding.h"

namespace bloomkv {

using SequenceNumber = uint64_t;

// Never change: stored on disk in every internal key and WAL record.
enum class ValueType : uint8_t {
  kDeletion = 0,
  kValue = 1,
};
// The type that sorts first among entries of equal user key and sequence:
// lookups seek with it.
constexpr ValueType kValueTypeForSeek = ValueType::kValue;

// Sequence numbers use 56 bits; the low byte of the trailer is the type.
constexpr SequenceNumber kMaxSequenceNumber = (uint64_t{1} << 56) - 1;
constexpr size_t kInternalKeyTrailerSize = 8;

inline uint64_t PackSequenceAndType(SequenceNumber seq, ValueType t) {
  return (seq << 8) | static_cast<uint8_t>(t);
}

inline void AppendInternalKey(std::string* dst, const Slice& user_key,
                              SequenceNumber seq, ValueType t) {
  dst->append(user_key.data(), user_key.size());
  PutFixed64(dst, PackSequenceAndType(seq, t));
}

inline std::string MakeInternalKey(const Slice& user_key, SequenceNumber seq,
                                   ValueType t) {
  std::string k;
  k.reserve(user_key.size() + kInternalKeyTrailerSize);
  AppendInternalKey(&k, user_key, seq, t);
  return k;
}

struct ParsedInternalKey {
  Slice user_key;
  SequenceNumber sequence = 0;
  ValueType type = ValueType::kValue;
};

// False if the key is shorter than the trailer or carries an unknown type.
inline bool ParseInternalKey(const Slice& ikey, ParsedInternalKey* out) {
  if (ikey.size() < kInternalKeyTrailerSize) return false;
  const uint64_t tag =
      DecodeFixed64(ikey.data() + ikey.size() - kInternalKeyTrailerSize);
  const uint8_t type = static_cast<uint8_t>(tag & 0xff);
  if (type > static_cast<uint8_t>(ValueType::kValue)) return false;
  out->user_key = Slice(ikey.data(), ikey.size() - kInternalKeyTrailerSize);
  out->sequence = tag >> 8;
  out->type = static_cast<ValueType>(type);
  return true;
}

// REQUIRES: ikey.size() >= kInternalKeyTrailerSize
inline Slice ExtractUserKey(const Slice& ikey) {
  return Slice(ikey.data(), ikey.size() - kInternalKeyTrailerSize);
}

// The first eight bytes of user_key as a big-endian integer, zero-padded
// when shorter: for user keys a and b, a < b implies UserKeyPrefix(a) <=
// UserKeyPrefix(b), so a smaller prefix means a smaller key (and internal
// key). A short code (7 bytes) is its own prefix.
inline uint64_t UserKeyPrefix(const Slice& user_key) {
  uint64_t x = 0;
  std::memcpy(&x, user_key.data(), std::min<size_t>(user_key.size(), 8));
  return __builtin_bswap64(x);
}

// Internal-key order: user keys ascending (bytewise), then the larger
// sequence/type trailer first. The user keys are compared eight bytes at a
// time in registers, a last partial word masked, instead of through memcmp:
// this is the point lookup's and the memtable's hot loop, and a short code
// (7 bytes) is then one comparison. Every internal key holds at least 8
// bytes from any offset inside its user key (the trailer follows), so the
// loads stay inside both keys.
// REQUIRES: an, bn >= kInternalKeyTrailerSize.
inline int CompareInternalKeys(const char* a, size_t an, const char* b,
                               size_t bn) {
  const size_t ua = an - kInternalKeyTrailerSize;
  const size_t ub = bn - kInternalKeyTrailerSize;
  const size_t n = std::min(ua, ub);
  size_t i = 0;
  for (; i < n; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    // Big-endian order makes the first differing byte the most significant.
    x = __builtin_bswap64(x);
    y = __builtin_bswap64(y);
    if (n - i < 8) {
      const uint64_t mask = ~uint64_t{0} << (64 - 8 * (n - i));
      x &= mask;
      y &= mask;
    }
    if (x != y) return x < y ? -1 : +1;
  }
  if (ua != ub) return ua < ub ? -1 : +1;
  const uint64_t ta = DecodeFixed64(a + ua);
  const uint64_t tb = DecodeFixed64(b + ub);
  if (ta > tb) return -1;
  if (ta < tb) return +1;
  return 0;
}

// REQUIRES: both keys are at least kInternalKeyTrailerSize long.
inline int CompareInternalKeys(const Slice& a, const Slice& b) {
  return CompareInternalKeys(a.data(), a.size(), b.data(), b.size());
}

// The key a point lookup of user_key as of `snapshot` seeks to: it sorts
// before every entry of user_key with a sequence <= snapshot and after those
// with a larger one, so a seek lands on the newest visible entry. Held as
// varint32(internal key size) || internal key, so that the memtable (whose
// entries are length-prefixed) and segments (plain internal keys) seek with
// one object. Built in place for short user keys, on the heap beyond.
// Thread-safety: a value; external synchronization required.
class LookupKey {
 public:
  LookupKey(const Slice& user_key, SequenceNumber snapshot) {
    const size_t ikey_size = user_key.size() + kInternalKeyTrailerSize;
    const size_t need = 5 + ikey_size;  // the longest varint32
    char* dst = buf_;
    if (need > sizeof(buf_)) {
      heap_ = std::make_unique_for_overwrite<char[]>(need);
      dst = heap_.get();
    }
    start_ = dst;
    // A one-byte varint in the common case, without a call.
    char* p = ikey_size < 128
                  ? (*dst = static_cast<char>(ikey_size), dst + 1)
                  : EncodeVarint32(dst, static_cast<uint32_t>(ikey_size));
    ikey_ = p;
    if (!user_key.empty()) std::memcpy(p, user_key.data(), user_key.size());
    EncodeFixed64(p + user_key.size(),
                  PackSequenceAndType(std::min(snapshot, kMaxSequenceNumber),
                                      kValueTypeForSeek));
    ikey_size_ = ikey_size;
  }
  LookupKey(const LookupKey&) = delete;
  LookupKey& operator=(const LookupKey&) = delete;

  // varint32(size) || internal key: what the memtable's skiplist compares.
  const char* memtable_key() const { return start_; }
  // The internal key: what a segment's index and data blocks are searched
  // for.
  Slice internal_key() const { return Slice(ikey_, ikey_size_); }
  Slice user_key() const {
    return Slice(ikey_, ikey_size_ - kInternalKeyTrailerSize);
  }

 private:
  char buf_[200];
  std::unique_ptr<char[]> heap_;
  const char* start_ = nullptr;
  const char* ikey_ = nullptr;
  size_t ikey_size_ = 0;
};

}  // namespace bloomkv

#endif  // BLOOMKV_TABLE_INTERNAL_KEY_H_
