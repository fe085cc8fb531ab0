// Filter cost; see filter_cost.h.
#include "util/filter_cost.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "util/binary_fuse.h"
#include "util/blocked_bloom.h"
#include "util/filter_registry.h"

namespace bloomkv {
namespace {

namespace bb = blocked_bloom;

// The bloom table's reference segment: large enough that line rounding
// does not show, small enough for the theory to be quick.
constexpr uint64_t kReferenceKeys = 1000000;

// ln of the blocked bloom filter's rate at every step of the table.
const std::vector<double>& LogBloomRates() {
  static const std::vector<double> table = [] {
    const int steps = static_cast<int>(std::lround(
        (kBloomRateTableMaxBits - kBloomRateTableMinBits) /
        kBloomRateTableStep));
    std::vector<double> t;
    t.reserve(steps + 1);
    for (int i = 0; i <= steps; i++) {
      const double bits = kBloomRateTableMinBits + i * kBloomRateTableStep;
      const double fp = bb::TheoreticalFpRate(
          bb::NumLinesFor(kReferenceKeys, bits), kReferenceKeys,
          bb::ChooseNumProbes(bits));
      t.push_back(std::log(std::max(fp, 1e-300)));
    }
    return t;
  }();
  return table;
}

}  // namespace

double BloomFpRate(double bits_per_key) {
  const std::vector<double>& t = LogBloomRates();
  const double x = (bits_per_key - kBloomRateTableMinBits) / kBloomRateTableStep;
  // The step whose segment holds x, the first or last one for x outside.
  const auto last = static_cast<double>(t.size() - 2);
  const double lo = std::clamp(std::floor(x), 0.0, last);
  const auto i = static_cast<size_t>(lo);
  const double log_fp = t[i] + (x - lo) * (t[i + 1] - t[i]);
  return std::min(1.0, std::exp(log_fp));
}

double BloomBitsPerKey(double bits_per_key, uint64_t num_keys) {
  const uint64_t n = std::max<uint64_t>(num_keys, 1);
  // Whole 64-byte lines and the 4-byte trailer (util/bloom.cc).
  const double bytes =
      64.0 * static_cast<double>(bb::NumLinesFor(n, bits_per_key)) + 4.0;
  return 8.0 * bytes / static_cast<double>(n);
}

double BinaryFuseBitsPerKey(int fingerprint_bits, uint64_t num_keys) {
  const uint64_t n = std::max<uint64_t>(num_keys, 1);
  const double slots =
      static_cast<double>(binary_fuse::LayoutFor(n).array_length());
  return (slots * fingerprint_bits + 8.0 * binary_fuse::kHeaderSize) /
         static_cast<double>(n);
}

double ClassicBloomFpRate(double bits_per_key) {
  const double ln2 = std::log(2.0);
  return std::exp(-bits_per_key * ln2 * ln2);
}

FilterCost ExpectedResizedFilterCost(const FilterPolicy& policy,
                                     double bits_per_key, uint64_t num_keys) {
  const uint64_t n = std::max<uint64_t>(num_keys, 1);
  FilterCost cost;
  if (BuiltinFilterKindOf(policy.Name()) == BuiltinFilterKind::kBlockedBloom) {
    cost.bits_per_key = BloomBitsPerKey(bits_per_key, n);
    cost.fp_rate = BloomFpRate(bits_per_key);
  } else {
    cost.bits_per_key = bits_per_key;
    cost.fp_rate = ClassicBloomFpRate(bits_per_key);
  }
  return cost;
}

FilterCost ExpectedFilterCost(const FilterPolicy& policy, uint64_t num_keys) {
  const uint64_t n = std::max<uint64_t>(num_keys, 1);
  FilterCost cost;
  switch (BuiltinFilterKindOf(policy.Name())) {
    case BuiltinFilterKind::kBlockedBloom:
      return ExpectedResizedFilterCost(policy, policy.BitsPerKey(), n);
    case BuiltinFilterKind::kBinaryFuse8:
      cost.bits_per_key = BinaryFuseBitsPerKey(8, n);
      cost.fp_rate = std::ldexp(1.0, -8);
      break;
    case BuiltinFilterKind::kBinaryFuse16:
      cost.bits_per_key = BinaryFuseBitsPerKey(16, n);
      cost.fp_rate = std::ldexp(1.0, -16);
      break;
    case BuiltinFilterKind::kOther:
      cost.bits_per_key = policy.BitsPerKey();
      cost.fp_rate = ClassicBloomFpRate(cost.bits_per_key);
      break;
  }
  return cost;
}

}  // namespace bloomkv
