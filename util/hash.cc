// xxHash wrappers; see hash.h.
#include "util/hash.h"

#define XXH_STATIC_LINKING_ONLY  // for XXH3_state_t on the stack
#include <xxhash.h>
#if BLOOMKV_HAVE_XXH3_DISPATCH
// Maps XXH3_64bits and its streaming calls to the library's run-time
// dispatch (AVX2 where the CPU has it): the same values, 14x faster on a
// 2.9 KB block here (CMakeLists.txt).
#include <xxh_x86dispatch.h>
#endif

namespace bloomkv {

uint64_t KeyHash(const Slice& key) {
  return XXH3_64bits(key.data(), key.size());
}

uint32_t BlockChecksum(const char* data, size_t n) {
  return static_cast<uint32_t>(XXH3_64bits(data, n));
}

uint32_t BlockChecksum2(const char* a, size_t na, const char* b, size_t nb) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, a, na);
  XXH3_64bits_update(&state, b, nb);
  return static_cast<uint32_t>(XXH3_64bits_digest(&state));
}

}  // namespace bloomkv
