// Filter cost: the memory a filter of some policy will take per key and the
// false-positive rate it will give, known before it is built, for planning
// filter memory across levels (db/filter_allocation.h).
//
// For the built-in kinds these are their real functions, not one model for
// all:
//   * blocked bloom: the layout's theoretical rate at its bits per key
//     (blocked_bloom::TheoreticalFpRate at the probe count the policy
//     chooses). Blocking loses against the classic exp(-b ln^2 2), the more
//     so the more bits per key: 0.97% instead of 0.82% at 10 bits, 0.020%
//     instead of 0.0067% at 20;
//   * binary fuse: a rate of 2^-bits whatever the size, and a size per key
//     that depends on the segment's number of keys (small filters get more
//     slots per key: about 10.3 bits per key at 10^4 keys, 9.04 at 10^6, for
//     8-bit fingerprints).
// For any other policy only its BitsPerKey() is known, and the classic bloom
// rate is assumed.
//
// Thread-safety: thread-safe. The bloom rate table is computed once per
// process, by the first call that needs it (about 20 ms).
#ifndef BLOOMKV_UTIL_FILTER_COST_H_
#define BLOOMKV_UTIL_FILTER_COST_H_

#include <cstdint>

#include "bloomkv/filter_policy.h"

namespace bloomkv {

struct FilterCost {
  double bits_per_key = 0;  // filter bits over keys
  double fp_rate = 1.0;     // expected false-positive rate
};

// The bloom rate table covers this range of bits per key, in steps of
// kBloomRateTableStep; outside it the rate is extrapolated from the
// nearest step.
constexpr double kBloomRateTableMinBits = 1.0;
constexpr double kBloomRateTableMaxBits = 40.0;
constexpr double kBloomRateTableStep = 0.25;

// Expected false-positive rate of the built-in blocked bloom filter at
// bits_per_key for a large segment (the theory at 10^6 keys; lines are
// rounded up, so a small segment does a little better): tabulated and
// interpolated log-linearly, within 1% of the theory between steps.
// REQUIRES: bits_per_key > 0.
double BloomFpRate(double bits_per_key);

// Bits per key of the built-in bloom filter sized at bits_per_key for
// num_keys keys: whole 64-byte lines and the 4-byte trailer. num_keys 0
// counts as 1. REQUIRES: bits_per_key > 0.
double BloomBitsPerKey(double bits_per_key, uint64_t num_keys);

// Bits per key of a binary fuse filter of fingerprint_bits-bit fingerprints
// (8 or 16) built from num_keys distinct keys: its fingerprint array
// (binary_fuse::LayoutFor) and its header. num_keys 0 counts as 1.
double BinaryFuseBitsPerKey(int fingerprint_bits, uint64_t num_keys);

// The classic bloom filter's rate exp(-b ln^2 2) at b bits per key.
double ClassicBloomFpRate(double bits_per_key);

// What the filter `policy` builds for a segment of num_keys keys costs and
// gives (num_keys 0 counts as 1).
FilterCost ExpectedFilterCost(const FilterPolicy& policy, uint64_t num_keys);

// The same for policy.Resized(bits_per_key), without making it.
// REQUIRES: policy.Resized(bits_per_key) is not null; bits_per_key > 0.
FilterCost ExpectedResizedFilterCost(const FilterPolicy& policy,
                                     double bits_per_key, uint64_t num_keys);

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_FILTER_COST_H_
