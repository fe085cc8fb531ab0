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

// REQUIRES: both keys are at least kInternalKeyTrailerSize long.
inline int CompareInternalKeys(const Slice& a, const Slice& b) {
  const size_t a_size = a.size() - kInternalKeyTrailerSize;
  const size_t b_size = b.size() - kInternalKeyTrailerSize;
  const size_t common = std::min(a_size, b_size);
  int r;
  if (common <= 8) {
    // Short user keys (a short code is 7 bytes): compare their common bytes
    // as one big-endian integer instead of calling memcmp. Each key holds
    // at least 8 bytes (user key + trailer), so both loads stay inside it.
    uint64_t x, y;
    std::memcpy(&x, a.data(), 8);
    std::memcpy(&y, b.data(), 8);
    const uint64_t mask = common == 0 ? 0 : ~uint64_t{0} << (64 - 8 * common);
    x = __builtin_bswap64(x) & mask;
    y = __builtin_bswap64(y) & mask;
    r = x < y ? -1 : x > y ? +1 : 0;
    if (r == 0) r = a_size < b_size ? -1 : a_size > b_size ? +1 : 0;
  } else {
    r = ExtractUserKey(a).compare(ExtractUserKey(b));
  }
  if (r != 0) return r;
  const uint64_t ta = DecodeFixed64(a.data() + a.size() - 8);
  const uint64_t tb = DecodeFixed64(b.data() + b.size() - 8);
  if (ta > tb) return -1;
  if (ta < tb) return +1;
  return 0;
}

}  // namespace bloomkv

#endif  // BLOOMKV_TABLE_INTERNAL_KEY_H_
