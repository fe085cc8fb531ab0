// The built-in FilterPolicy: a cache-line-blocked bloom filter over the
// segment's key hashes (layout in util/blocked_bloom.h, encoding in
// docs/filters.md).
//
// Encoding of one filter (all of it never changes: on disk):
//   lines:   num_lines * 64 bytes (num_lines = (size - 4) / 64, may be 0)
//   trailer: [num_probes u8][reserved u8 = 0][reserved u8 = 0][marker u8]
// A filter whose size, marker, reserved bytes or probe count do not fit
// answers "may match" for every key, so a reader never produces a false
// negative from bytes it does not understand.
//
// Thread-safety: the policy is immutable; every method is safe to call
// concurrently.
#include <cmath>
#include <cstring>

#include "bloomkv/filter_policy.h"
#include "util/blocked_bloom.h"

namespace bloomkv {

namespace {

namespace bb = blocked_bloom;

// never change: on disk.
constexpr size_t kTrailerSize = 4;
constexpr size_t kTrailerProbesOffset = 0;
constexpr size_t kTrailerMarkerOffset = 3;
constexpr unsigned char kFormatMarker = 0xB1;  // "blocked bloom, version 1"
constexpr char kPolicyName[] = "bloomkv.BlockedBloom.v1";

constexpr double kMinBitsPerKey = 1.0;
constexpr double kMaxBitsPerKey = 100.0;
constexpr double kDefaultBitsPerKey = 10.0;
constexpr double kMinFpRate = 1e-6;
constexpr double kMaxFpRate = 0.5;
constexpr double kDefaultFpRate = 0.01;

class BlockedBloomPolicy final : public FilterPolicy {
 public:
  explicit BlockedBloomPolicy(double bits_per_key)
      : bits_per_key_(bits_per_key),
        num_probes_(bb::ChooseNumProbes(bits_per_key)) {}

  BlockedBloomPolicy(const BlockedBloomPolicy&) = delete;
  BlockedBloomPolicy& operator=(const BlockedBloomPolicy&) = delete;

  const char* Name() const override { return kPolicyName; }

  void CreateFilter(const uint64_t* hashes, size_t n,
                    std::string* dst) const override {
    const uint64_t num_lines = bb::NumLinesFor(n, bits_per_key_);
    // Built in cache-line-aligned memory, so each insert touches exactly one
    // cache line, then appended in one copy.
    bb::AlignedLines lines = bb::AllocateLines(num_lines);
    for (size_t i = 0; i < n; i++) {
      bb::AddToLine(bb::LineFor(lines.get(), num_lines, hashes[i]), hashes[i],
                    num_probes_);
    }
    if (num_lines > 0) {
      dst->append(lines.get(), num_lines * bb::kLineBytes);
    }
    char trailer[kTrailerSize] = {};
    trailer[kTrailerProbesOffset] = static_cast<char>(num_probes_);
    trailer[kTrailerMarkerOffset] = static_cast<char>(kFormatMarker);
    dst->append(trailer, kTrailerSize);
  }

  bool KeyMayMatch(uint64_t hash, const Slice& filter) const override {
    bb::FilterView view;
    if (!bb::ParseFilter(filter.data(), filter.size(), &view)) return true;
    return bb::MayContain(view, hash);
  }

  void Prefetch(uint64_t hash, const Slice& filter) const override {
    bb::FilterView view;
    if (bb::ParseFilter(filter.data(), filter.size(), &view)) {
      bb::Prefetch(view, hash);
    }
  }

  double BitsPerKey() const override { return bits_per_key_; }

  // The probe count and the line layout follow from bits_per_key, and the
  // trailer records the probe count: filters of any size read the same way.
  std::shared_ptr<const FilterPolicy> Resized(
      double bits_per_key) const override {
    return NewBloomFilterPolicy(bits_per_key);
  }

  double TheoreticalFpRate(const Slice& filter,
                           uint64_t num_keys) const override {
    bb::FilterView view;
    if (!bb::ParseFilter(filter.data(), filter.size(), &view)) return 1.0;
    return bb::TheoreticalFpRate(view.num_lines, num_keys, view.num_probes);
  }

 private:
  const double bits_per_key_;
  const int num_probes_;
};

}  // namespace

std::shared_ptr<const FilterPolicy> NewBloomFilterPolicy(double bits_per_key) {
  if (std::isnan(bits_per_key)) bits_per_key = kDefaultBitsPerKey;
  bits_per_key =
      std::fmin(std::fmax(bits_per_key, kMinBitsPerKey), kMaxBitsPerKey);
  return std::make_shared<BlockedBloomPolicy>(bits_per_key);
}

std::shared_ptr<const FilterPolicy> NewBloomFilterPolicyForFpRate(
    double fp_rate) {
  if (std::isnan(fp_rate)) fp_rate = kDefaultFpRate;
  fp_rate = std::fmin(std::fmax(fp_rate, kMinFpRate), kMaxFpRate);
  // m / n = -ln(p) / (ln 2)^2.
  const double ln2 = std::log(2.0);
  return NewBloomFilterPolicy(-std::log(fp_rate) / (ln2 * ln2));
}

bool blocked_bloom::ParseFilter(const char* data, size_t size,
                                FilterView* view) {
  if (size < kTrailerSize) return false;
  const size_t body = size - kTrailerSize;
  const auto* trailer = reinterpret_cast<const unsigned char*>(data + body);
  if (trailer[kTrailerMarkerOffset] != kFormatMarker) return false;
  if (trailer[1] != 0 || trailer[2] != 0) return false;
  const int k = trailer[kTrailerProbesOffset];
  if (k < 1 || k > bb::kMaxProbes) return false;
  if (body % bb::kLineBytes != 0) return false;
  const uint64_t num_lines = body / bb::kLineBytes;
  if (num_lines > bb::kMaxLines) return false;
  view->lines = data;
  view->num_lines = num_lines;
  view->num_probes = k;
  return true;
}

}  // namespace bloomkv
