// xxHash wrappers; see hash.h.
#include "util/hash.h"

#define XXH_STATIC_LINKING_ONLY  // for XXH3_state_t on the stack
#include <xxhash.h>
#if BLOOMKV_HAVE_XXH3_DISPATCH
// The library's run-time dispatch (AVX2 where the CPU has it), for the
// block checksums only: the same values, 13x faster on a 2,900-byte block
// but slower on a key of a few bytes (bench/hash_bench.cc, medians of 3:
// 55 against 718 ns for 2,900 bytes, 5.1 against 2.6 ns for 7). See
// CMakeLists.txt.
#define XXH_DISPATCH_DISABLE_REPLACE  // the calls below choose
#include <xxh_x86dispatch.h>
#endif

namespace bloomkv {
namespace {

#if BLOOMKV_HAVE_XXH3_DISPATCH
XXH64_hash_t BlockHash(const void* data, size_t n) {
  return XXH3_64bits_dispatch(data, n);
}
XXH_errorcode BlockHashUpdate(XXH3_state_t* state, const void* data,
                              size_t n) {
  return XXH3_64bits_update_dispatch(state, data, n);
}
#else
XXH64_hash_t BlockHash(const void* data, size_t n) {
  return XXH3_64bits(data, n);
}
XXH_errorcode BlockHashUpdate(XXH3_state_t* state, const void* data,
                              size_t n) {
  return XXH3_64bits_update(state, data, n);
}
#endif

}  // namespace

uint64_t KeyHash(const Slice& key) {
  return XXH3_64bits(key.data(), key.size());
}

uint32_t BlockChecksum(const char* data, size_t n) {
  return static_cast<uint32_t>(BlockHash(data, n));
}

uint32_t BlockChecksum2(const char* a, size_t na, const char* b, size_t nb) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  BlockHashUpdate(&state, a, na);
  BlockHashUpdate(&state, b, nb);
  return static_cast<uint32_t>(XXH3_64bits_digest(&state));
}

}  // namespace bloomkv
