// Fixed-width little-endian and varint encodings used by every on-disk format.
//
// Decoders never read past the input they are given: Get* functions return
// false (and leave *input unchanged or partly consumed) on truncated input.
// Thread-safety: stateless functions.
#ifndef BLOOMKV_UTIL_CODING_H_
#define BLOOMKV_UTIL_CODING_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "bloomkv/slice.h"

namespace bloomkv {

constexpr int kMaxVarint32Length = 5;
constexpr int kMaxVarint64Length = 10;

inline void EncodeFixed16(char* dst, uint16_t v) {
  dst[0] = static_cast<char>(v);
  dst[1] = static_cast<char>(v >> 8);
}
inline void EncodeFixed32(char* dst, uint32_t v) {
  for (int i = 0; i < 4; i++) dst[i] = static_cast<char>(v >> (8 * i));
}
inline void EncodeFixed64(char* dst, uint64_t v) {
  for (int i = 0; i < 8; i++) dst[i] = static_cast<char>(v >> (8 * i));
}
inline uint16_t DecodeFixed16(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>(b[0] | (b[1] << 8));
}
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // The project targets little-endian hosts only.
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "bloomkv's fixed-width decoding assumes a little-endian host");

void PutFixed32(std::string* dst, uint32_t value);
void PutFixed64(std::string* dst, uint64_t value);
void PutVarint32Slow(std::string* dst, uint32_t value);
// Inline for the one-byte case (lengths under 128: keys, most values and
// block entries), which is a push_back.
inline void PutVarint32(std::string* dst, uint32_t value) {
  if (value < 0x80) {
    dst->push_back(static_cast<char>(value));
  } else {
    PutVarint32Slow(dst, value);
  }
}
void PutVarint64(std::string* dst, uint64_t value);
// Varint32 length followed by the bytes.
void PutLengthPrefixedSlice(std::string* dst, const Slice& value);

// Each consumes what it decodes from the front of *input.
bool GetFixed32(Slice* input, uint32_t* value);
bool GetFixed64(Slice* input, uint64_t* value);
bool GetVarint32(Slice* input, uint32_t* value);
bool GetVarint64(Slice* input, uint64_t* value);
bool GetLengthPrefixedSlice(Slice* input, Slice* result);

// Pointer-based decoders: return the byte after the varint, or nullptr if it
// is malformed or runs past limit.
// GetVarint32Ptr is inline for the common one-byte varint (memtable key
// lengths, block entry headers: every comparison and block search decodes
// some); longer ones go to GetVarint32PtrSlow.
const char* GetVarint32PtrSlow(const char* p, const char* limit, uint32_t* v);
inline const char* GetVarint32Ptr(const char* p, const char* limit,
                                  uint32_t* v) {
  if (p < limit) {
    const uint32_t byte = *reinterpret_cast<const unsigned char*>(p);
    if ((byte & 0x80) == 0) {
      *v = byte;
      return p + 1;
    }
  }
  return GetVarint32PtrSlow(p, limit, v);
}
const char* GetVarint64Ptr(const char* p, const char* limit, uint64_t* v);

int VarintLength(uint64_t v);
// Writes a varint at dst (which needs room for it); returns the byte after.
char* EncodeVarint32(char* dst, uint32_t value);
char* EncodeVarint64(char* dst, uint64_t value);

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_CODING_H_
