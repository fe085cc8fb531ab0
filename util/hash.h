// Hashing and checksums, all from xxHash.
//
// KeyHash is the one hash of a user key: computed once per lookup and reused
// to probe every segment's filter. BlockChecksum covers every on-disk block,
// log record and manifest record. Both are part of the on-disk format: their
// definitions never change (a new checksum gets a new ChecksumType value).
// Thread-safety: stateless functions.
#ifndef BLOOMKV_UTIL_HASH_H_
#define BLOOMKV_UTIL_HASH_H_

#include <cstddef>
#include <cstdint>

#include "bloomkv/slice.h"

namespace bloomkv {

// XXH3-64 of the key bytes, seed 0.
uint64_t KeyHash(const Slice& key);

// Low 32 bits of XXH3-64 (seed 0) over data[0..n-1].
uint32_t BlockChecksum(const char* data, size_t n);

// BlockChecksum of the concatenation a || b, without copying.
uint32_t BlockChecksum2(const char* a, size_t na, const char* b, size_t nb);

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_HASH_H_
