// The binary fuse filter core shared by the segment filter policies
// (util/binary_fuse_policy.cc) and the standalone bloomkv::StaticFilter
// (util/static_filter.cc): layout, construction from 64-bit key hashes,
// parsing of an encoded filter, and the probe. After Graf and Lemire,
// "Binary Fuse Filters: Fast and Smaller Than Xor Filters" (JEA 2022),
// 3-wise variant.
//
// A filter is an array of fingerprints (8 or 16 bits) split into
// segment_count + 2 segments of segment_length (a power of two) slots. A
// key's hash, remixed with the filter's seed into m, picks one slot in each of
// three consecutive segments; the filter holds the key iff the XOR of the
// three fingerprints equals the key's fingerprint, derived from m. Building
// solves those equations for all keys at once by peeling (repeatedly removing
// a key that has a slot no other remaining key uses), which succeeds with high
// probability for the sizes LayoutFor chooses; on failure it retries with
// another seed.
//
// The encoding (docs/filters.md, "Binary fuse segment filter encoding"):
//   offset  size  field
//   0       1     format version (1)
//   1       1     fingerprint bits (8 or 16)
//   2       1     log2(segment_length), 0..kMaxSegmentLengthLog2
//   3       1     flags: 0, or kFlagMatchAll (construction gave up)
//   4       4     segment_count (0 iff the filter holds no keys)
//   8       8     seed
//   16      ...   (segment_count + 2) * segment_length fingerprints,
//                 little-endian, none when segment_count is 0
// Everything here is part of the on-disk format: the constants, the mixer,
// the slot and fingerprint derivation never change. A different layout needs
// a new policy Name() and a new format version.
//
// Thread-safety: stateless functions; concurrent probes of one filter are
// safe.
#ifndef BLOOMKV_UTIL_BINARY_FUSE_H_
#define BLOOMKV_UTIL_BINARY_FUSE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "bloomkv/slice.h"

namespace bloomkv {
namespace binary_fuse {

// never change: on disk.
constexpr unsigned char kFormatVersion = 1;
constexpr size_t kVersionOffset = 0;
constexpr size_t kFingerprintBitsOffset = 1;
constexpr size_t kSegmentLengthLog2Offset = 2;
constexpr size_t kFlagsOffset = 3;
constexpr size_t kSegmentCountOffset = 4;
constexpr size_t kSeedOffset = 8;
constexpr size_t kHeaderSize = 16;
constexpr unsigned char kFlagMatchAll = 0x01;
constexpr int kMaxSegmentLengthLog2 = 18;
// The slot in the second segment takes its offset from bits 18.. of m, the
// slot in the third from bits 0..; never change: on disk.
constexpr int kSecondSlotShift = 18;

// Construction gives up (and writes a filter that matches every key) after
// this many seeds. Every kAttemptsPerSize failures the array grows by
// kGrowthPerStep of its size, so a bad size cannot fail forever; with the
// sizes of LayoutFor a single attempt fails rarely (measured: none in the
// tests' hundred thousand builds of up to 10^6 keys), so reaching the limit
// takes bad luck far below anything observable. Not on disk.
constexpr int kMaxAttempts = 64;
constexpr int kAttemptsPerSize = 8;
constexpr double kGrowthPerStep = 0.10;
// Distinct keys above this get the match-all filter: slot indices are 32-bit
// during construction, and 2^31 keys grown by the largest retry growth still
// fit. A segment holds far fewer.
constexpr uint64_t kMaxKeys = uint64_t{1} << 31;

// The shape of the fingerprint array for a number of distinct keys.
struct Layout {
  int segment_length_log2 = 0;
  uint32_t segment_count = 0;  // 0: no keys, no array
  uint64_t segment_length() const { return uint64_t{1} << segment_length_log2; }
  // Slots in the array: (segment_count + 2) * segment_length, or 0.
  uint64_t array_length() const {
    return segment_count == 0
               ? 0
               : (uint64_t{segment_count} + 2) << segment_length_log2;
  }
};

// The paper's sizing for 3-wise filters: segment_length =
// 2^floor(ln(n) / ln(3.33) + 2.25), at most 2^18; array size about
// n * max(1.125, 0.875 + 0.25 * ln(10^6) / ln(n)) slots, times
// (1 + growth) for retries, split into whole segments. n = 0 gives the empty
// layout; n = 1 a single segment of 4 slots (12 in the array).
Layout LayoutFor(uint64_t num_keys, double growth = 0.0);

// The bijective remix of a key hash for one seed (SplitMix64's finalizer of
// hash + seed). Bijective, so distinct hashes stay distinct under every seed.
inline uint64_t Remix(uint64_t hash, uint64_t seed) {
  uint64_t z = hash + seed;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A key's fingerprint: the low fingerprint bits of m ^ (m >> 32), so that
// it depends on the high half of m, which the first slot is drawn from, as
// well as on the low half, which the other two slots' offsets come from.
inline uint32_t Fingerprint(uint64_t m, int bits) {
  return static_cast<uint32_t>(m ^ (m >> 32)) & ((uint32_t{1} << bits) - 1);
}

// A key's three slots: one in each of the consecutive segments s, s + 1 and
// s + 2, where s is chosen by the top bits of m over the first
// segment_count segments.
struct Slots {
  uint64_t s[3];
};
inline Slots SlotsFor(uint64_t m, uint64_t segment_count_length,
                      int segment_length_log2) {
  const uint64_t length = uint64_t{1} << segment_length_log2;
  const uint64_t mask = length - 1;
  const uint64_t first = static_cast<uint64_t>(
      (static_cast<unsigned __int128>(m) * segment_count_length) >> 64);
  Slots slots;
  slots.s[0] = first;
  slots.s[1] = (first + length) ^ ((m >> kSecondSlotShift) & mask);
  slots.s[2] = (first + 2 * length) ^ (m & mask);
  return slots;
}

// A parsed filter; `fingerprints` points into the encoded bytes.
struct FilterView {
  const unsigned char* fingerprints = nullptr;
  uint64_t seed = 0;
  uint64_t segment_count_length = 0;  // segment_count * segment_length
  int segment_length_log2 = 0;
  int fingerprint_bits = 0;
  bool empty = true;       // holds no keys: every probe is negative
  bool match_all = false;  // construction gave up: every probe is positive
};

// Parses an encoded filter. False (with *why, unless null, saying what is
// wrong) if `filter` is not exactly one encoding this version wrote with
// fingerprint_bits bits (expected_bits 0 accepts 8 or 16). On success every
// slot any probe can compute lies inside `filter`.
bool Parse(const Slice& filter, int expected_bits, FilterView* view,
           std::string* why);

// True if the key with this hash may be in the filter; never false for a key
// it was built from.
inline bool MayContain(const FilterView& v, uint64_t hash) {
  if (v.match_all) return true;
  if (v.empty) return false;
  const uint64_t m = Remix(hash, v.seed);
  const Slots slots =
      SlotsFor(m, v.segment_count_length, v.segment_length_log2);
  uint32_t x;
  if (v.fingerprint_bits == 8) {
    x = static_cast<uint32_t>(v.fingerprints[slots.s[0]] ^
                              v.fingerprints[slots.s[1]] ^
                              v.fingerprints[slots.s[2]]);
  } else {
    uint16_t a, b, c;
    std::memcpy(&a, v.fingerprints + 2 * slots.s[0], 2);
    std::memcpy(&b, v.fingerprints + 2 * slots.s[1], 2);
    std::memcpy(&c, v.fingerprints + 2 * slots.s[2], 2);
    x = static_cast<uint32_t>(a ^ b ^ c);  // little-endian host (coding.h)
  }
  return x == Fingerprint(m, v.fingerprint_bits);
}

// Starts loading the three fingerprints a probe of hash reads.
inline void Prefetch(const FilterView& v, uint64_t hash) {
  if (v.empty || v.match_all) return;
  const Slots slots = SlotsFor(Remix(hash, v.seed), v.segment_count_length,
                               v.segment_length_log2);
  const int bytes = v.fingerprint_bits / 8;
  for (uint64_t s : slots.s) {
    __builtin_prefetch(v.fingerprints + s * bytes, 0 /* read */, 3);
  }
}

// What one Build did.
struct BuildStats {
  uint64_t distinct_keys = 0;
  int attempts = 0;              // seeds tried (0 for fewer than one key)
  bool gave_up = false;          // wrote the match-all filter
  uint64_t peak_temp_bytes = 0;  // largest working memory held at once
};

// Appends to *dst the encoding of a filter holding hashes[0..n-1] (which may
// contain duplicates; they cost one failed attempt). Working memory is about
// 22 bytes per key (measured, either width, 10^5 keys and up): the hashes
// remixed and grouped, 9 bytes per slot for the peeling, 4 per key for the
// peeling order; all released on return. The same key set gives the same
// bytes, whatever its order and repetitions.
// max_attempts below kMaxAttempts is for tests of the give-up path.
// REQUIRES: fingerprint_bits is 8 or 16; 0 <= max_attempts.
void Build(const uint64_t* hashes, size_t n, int fingerprint_bits,
           std::string* dst, BuildStats* stats = nullptr,
           int max_attempts = kMaxAttempts);

}  // namespace binary_fuse
}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_BINARY_FUSE_H_
