// Random: a small, fast, seeded pseudo-random generator (SplitMix64).
//
// For randomized data structures (e.g. skiplist node heights) and for tests
// that must replay exactly from a seed. Not cryptographic. Every seed,
// including 0, gives a full-period sequence of 2^64 outputs; the sequence for
// a seed is fixed forever, so a seed printed by a failing test reproduces it.
// Thread-safety: external synchronization required (one per thread).
#ifndef BLOOMKV_UTIL_RANDOM_H_
#define BLOOMKV_UTIL_RANDOM_H_

#include <cassert>
#include <cstdint>

namespace bloomkv {

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  Random(const Random&) = delete;
  Random& operator=(const Random&) = delete;

  uint64_t Next64() {
    // SplitMix64: a Weyl sequence (odd increment, so full period) passed
    // through a bijective mixer, so consecutive outputs look independent.
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint32_t Next32() { return static_cast<uint32_t>(Next64() >> 32); }

  // Uniform in [0, n). The bias of the multiply-shift mapping is below
  // n / 2^64, far beneath anything a test or a skiplist could notice.
  // REQUIRES: n > 0.
  uint64_t Uniform(uint64_t n) {
    assert(n > 0);
    return static_cast<uint64_t>(
        (static_cast<unsigned __int128>(Next64()) * n) >> 64);
  }
  // True with probability 1/n. REQUIRES: n > 0.
  bool OneIn(uint64_t n) { return Uniform(n) == 0; }
  // Uniform in [0, 2^b) where b is itself uniform in [0, max_log]: small
  // values are much more likely than large ones, which exercises both
  // single-byte and multi-byte encodings. REQUIRES: 0 <= max_log <= 63.
  uint64_t Skewed(int max_log) {
    assert(max_log >= 0 && max_log <= 63);
    const int bits =
        static_cast<int>(Uniform(static_cast<uint64_t>(max_log) + 1));
    return Uniform(uint64_t{1} << bits);
  }

 private:
  uint64_t state_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_RANDOM_H_
