// The cache-line-blocked bloom filter core shared by the segment filter
// policy (util/bloom.cc) and the standalone bloomkv::BloomFilter
// (util/bloom_filter.cc): line selection, probe bit positions, sizing, the
// choice of probe count, and the theoretical false-positive rate; and the
// parsed view of a segment filter, which the policy and a segment's reader
// (SegmentFilter, table/segment_reader.h) probe alike.
//
// A filter is an array of 64-byte lines. A key's 64-bit hash picks one line
// from its upper 32 bits (multiply-shift, so any line count works) and k bit
// positions inside that line from the whole hash, remixed by k independent
// multiplications by odd constants (the top 9 bits of each product). Bit b of
// a line is bit (b % 8) of byte (b / 8): the layout is defined on bytes, so it
// is the same on every host and needs no alignment to read.
//
// Everything here is part of the on-disk format of every filter built with
// it: the constants, the line choice and the probe positions never change.
// A different layout needs a new policy Name() and a new serialization
// version.
//
// Thread-safety: stateless functions. Probes of one line array may run
// concurrently with each other. AddToLine needs exclusive access to the line;
// AddToLineAtomic may run concurrently with itself and with
// LineMayContainAtomic on the same line (both access it as relaxed atomic
// 64-bit words).
#ifndef BLOOMKV_UTIL_BLOCKED_BLOOM_H_
#define BLOOMKV_UTIL_BLOCKED_BLOOM_H_

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace bloomkv {
namespace blocked_bloom {

// never change: on disk.
constexpr size_t kLineBytes = 64;
constexpr uint32_t kLineBits = 512;
constexpr int kLineBitsLog2 = 9;
// Line choice uses 32 bits of the hash, so at most 2^32 lines (256 GiB).
constexpr uint64_t kMaxLines = uint64_t{1} << 32;
// Probe counts outside [1, kMaxProbes] are never written and make a stored
// filter unparseable.
constexpr int kMaxProbes = 24;

namespace internal {
// Odd multipliers for the probes: successive powers of the 64-bit golden
// ratio constant. Using powers of one constant makes probe i equivalent to i
// chained multiplications, but each product is computed from the hash
// directly, so the k multiplications are independent and pipeline.
// never change: on disk.
constexpr uint64_t kProbeBase = 0x9E3779B97F4A7C15ull;
constexpr std::array<uint64_t, kMaxProbes> MakeProbeMultipliers() {
  std::array<uint64_t, kMaxProbes> m{};
  uint64_t p = kProbeBase;
  for (int i = 0; i < kMaxProbes; i++) {
    m[i] = p;
    p *= kProbeBase;
  }
  return m;
}
inline constexpr std::array<uint64_t, kMaxProbes> kProbeMultipliers =
    MakeProbeMultipliers();
}  // namespace internal

// The line that holds all of hash's bits.
// REQUIRES: 0 < num_lines <= kMaxLines.
inline uint64_t LineIndex(uint64_t hash, uint64_t num_lines) {
  return ((hash >> 32) * num_lines) >> 32;
}

// Bit position (0..511) of probe i within the line.
// REQUIRES: 0 <= i < kMaxProbes.
inline uint32_t ProbeBit(uint64_t hash, int i) {
  return static_cast<uint32_t>((hash * internal::kProbeMultipliers[i]) >>
                               (64 - kLineBitsLog2));
}

// Sets hash's k bits in `line` (kLineBytes bytes).
// REQUIRES: 1 <= k <= kMaxProbes.
inline void AddToLine(char* line, uint64_t hash, int k) {
  auto* bytes = reinterpret_cast<unsigned char*>(line);
  for (int i = 0; i < k; i++) {
    const uint32_t b = ProbeBit(hash, i);
    bytes[b >> 3] |= static_cast<unsigned char>(1u << (b & 7));
  }
}

// True if all of hash's k bits are set in `line`. Branch-free: for an absent
// key an early exit would mispredict about half the time, which costs more
// than the few remaining probes.
// REQUIRES: 1 <= k <= kMaxProbes; line has kLineBytes readable bytes (any
// alignment).
inline bool LineMayContain(const char* line, uint64_t hash, int k) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(line);
  unsigned all = 1;
  for (int i = 0; i < k; i++) {
    const uint32_t b = ProbeBit(hash, i);
    all &= static_cast<unsigned>(bytes[b >> 3]) >> (b & 7);
  }
  return (all & 1) != 0;
}

// The lines as 64-bit words, for the standalone filter's concurrent adds:
// bit b of a line is bit (b % 8) of byte (b / 8), so it lies in word b / 64,
// at the bit of that word which holds byte (b / 8) % 8 on this host.
inline uint64_t WordMask(uint32_t b) {
  if constexpr (std::endian::native == std::endian::little) {
    return uint64_t{1} << (b & 63);
  } else {
    return uint64_t{1} << ((7 - ((b >> 3) & 7)) * 8 + (b & 7));
  }
}

// AddToLine with relaxed atomic fetch_or on the line's 64-bit words: safe
// against concurrent AddToLineAtomic and LineMayContainAtomic on the same
// line. Relaxed order suffices: a bit once set is never cleared, so a reader
// sees every bit of an add that happens-before it, and concurrently set bits
// only ever make a probe "may contain" sooner.
// REQUIRES: 1 <= k <= kMaxProbes; `line` is 8-byte aligned.
inline void AddToLineAtomic(char* line, uint64_t hash, int k) {
  auto* words = reinterpret_cast<uint64_t*>(line);
  for (int i = 0; i < k; i++) {
    const uint32_t b = ProbeBit(hash, i);
    std::atomic_ref<uint64_t>(words[b >> 6])
        .fetch_or(WordMask(b), std::memory_order_relaxed);
  }
}

// LineMayContain reading the line as relaxed atomic 64-bit words (plain
// loads on common hosts), so that it may run concurrently with
// AddToLineAtomic. Same answer as LineMayContain for the same bytes.
// REQUIRES: 1 <= k <= kMaxProbes; `line` is 8-byte aligned.
inline bool LineMayContainAtomic(const char* line, uint64_t hash, int k) {
  auto* words = const_cast<uint64_t*>(reinterpret_cast<const uint64_t*>(line));
  uint64_t all = 1;
  for (int i = 0; i < k; i++) {
    const uint32_t b = ProbeBit(hash, i);
    const uint64_t w = std::atomic_ref<uint64_t>(words[b >> 6])
                           .load(std::memory_order_relaxed);
    if constexpr (std::endian::native == std::endian::little) {
      all &= w >> (b & 63);
    } else {
      all &= (w & WordMask(b)) != 0;
    }
  }
  return (all & 1) != 0;
}

// Start of hash's line in `lines`.
// REQUIRES: 0 < num_lines <= kMaxLines.
inline const char* LineFor(const char* lines, uint64_t num_lines,
                           uint64_t hash) {
  return lines + LineIndex(hash, num_lines) * kLineBytes;
}
inline char* LineFor(char* lines, uint64_t num_lines, uint64_t hash) {
  return lines + LineIndex(hash, num_lines) * kLineBytes;
}

// Starts loading hash's line into cache. A caller with several lookups
// prefetches all of them first and probes afterwards, so the cache misses of
// a large filter overlap instead of adding up.
// REQUIRES: 0 < num_lines <= kMaxLines.
inline void PrefetchLine(const char* lines, uint64_t num_lines, uint64_t hash) {
  const char* line = LineFor(lines, num_lines, hash);
  __builtin_prefetch(line, 0 /* read */, 3 /* keep in all cache levels */);
  // A line that is not 64-byte aligned straddles two cache lines.
  __builtin_prefetch(line + kLineBytes - 1, 0, 3);
}

// Whole lines needed for num_keys keys at bits_per_key: ceil(n * bpk / 512),
// at least 1 for n > 0, at most kMaxLines. 0 for n == 0.
// REQUIRES: bits_per_key > 0.
uint64_t NumLinesFor(uint64_t num_keys, double bits_per_key);

// The probe count that minimizes the false-positive rate of the blocked
// layout at this many bits per key (see docs/filters.md for the measured
// table). Always in [1, kMaxProbes].
int ChooseNumProbes(double bits_per_key);

// The fewest bits per key (to 0.01) at which a large filter with
// ChooseNumProbes probes has a theoretical false-positive rate of at most
// fp_rate; 100 if even that is not enough. Higher than the classic
// -ln(p) / (ln 2)^2, increasingly so for small p, because the keys per line
// vary. Costs some milliseconds.
// REQUIRES: 0 < fp_rate < 1.
double BitsPerKeyForFpRate(double fp_rate);

// A segment filter of the built-in bloom policy (util/bloom.cc, encoding in
// docs/filters.md), parsed: `lines` points into the filter's bytes;
// num_lines is 0 for a filter built from no keys.
struct FilterView {
  const char* lines;
  uint64_t num_lines;
  int num_probes;
};
// False if the size bytes at data are not an encoding the built-in policy
// wrote. Defined in util/bloom.cc, beside the encoding.
bool ParseFilter(const char* data, size_t size, FilterView* view);
// Whether the parsed filter may hold the key of `hash`.
inline bool MayContain(const FilterView& view, uint64_t hash) {
  return view.num_lines != 0 &&
         LineMayContain(LineFor(view.lines, view.num_lines, hash), hash,
                        view.num_probes);
}
inline void Prefetch(const FilterView& view, uint64_t hash) {
  if (view.num_lines != 0) PrefetchLine(view.lines, view.num_lines, hash);
}

// Expected false-positive rate of a filter of num_lines lines holding
// num_keys distinct keys with k probes each, assuming ideal hashing: the
// average, over the (binomial, for large line counts Poisson) number of keys
// that land in the probed line, of the exact false-positive rate of a 512-bit
// bloom filter with that load. 0 for an empty filter; 1 if k is out of range.
// Costs up to a few milliseconds: not for hot paths.
double TheoreticalFpRate(uint64_t num_lines, uint64_t num_keys, int k);

// Zero-filled storage for num_lines lines, aligned to kLineBytes so that a
// line never straddles two cache lines. num_lines may be 0 (returns null).
struct AlignedLinesDeleter {
  void operator()(char* p) const;
};
using AlignedLines = std::unique_ptr<char[], AlignedLinesDeleter>;
AlignedLines AllocateLines(uint64_t num_lines);

}  // namespace blocked_bloom
}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_BLOCKED_BLOOM_H_
