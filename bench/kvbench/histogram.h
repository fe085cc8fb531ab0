// Histogram: a log-linear latency histogram for kvbench (HDR-style).
//
// Values below 64 get a bucket each; above that every power of two is split
// into 64 equal sub-buckets, so a recorded value lands in a bucket whose
// width is at most 1/64 of its lower bound: percentiles are exact to within
// 1.6% over the whole uint64_t range, in a fixed 30 KiB table and O(1) per
// Add. Header-only so that the test suite can use it without linking the
// benchmark.
//
// Thread-safety: none. Each thread records into its own Histogram; Merge
// them afterwards.
#ifndef BLOOMKV_BENCH_KVBENCH_HISTOGRAM_H_
#define BLOOMKV_BENCH_KVBENCH_HISTOGRAM_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace bloomkv::bench {

class Histogram {
 public:
  // Sub-buckets per power of two, as a power of two: 2^6 = 64 gives a
  // relative bucket width of at most 1/64.
  static constexpr int kSubBits = 6;
  static constexpr uint64_t kSub = uint64_t{1} << kSubBits;
  // Largest index: shift 63 - kSubBits, mantissa 2 * kSub - 1.
  static constexpr size_t kNumBuckets = (64 - kSubBits + 1) * kSub;

  Histogram() { Clear(); }

  void Clear() {
    buckets_.fill(0);
    count_ = 0;
    sum_ = 0;
    min_ = std::numeric_limits<uint64_t>::max();
    max_ = 0;
  }

  void Add(uint64_t value) {
    buckets_[BucketFor(value)]++;
    count_++;
    sum_ += static_cast<double>(value);
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }

  void Merge(const Histogram& other) {
    for (size_t i = 0; i < kNumBuckets; i++) buckets_[i] += other.buckets_[i];
    count_ += other.count_;
    sum_ += other.sum_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ == 0 ? 0.0 : sum_ / count_; }

  // The value below which p percent of the recorded values fall (p in
  // [0, 100], clamped), interpolated linearly inside its bucket and clamped
  // to [min(), max()]. 0 when empty.
  double Percentile(double p) const {
    if (count_ == 0) return 0.0;
    p = std::clamp(p, 0.0, 100.0);
    // The rank of the wanted value, 1-based: the smallest r with
    // r >= p% of count (at least 1).
    const double rank = std::max(1.0, std::ceil(p / 100.0 * count_));
    uint64_t seen = 0;
    for (size_t b = 0; b < kNumBuckets; b++) {
      if (buckets_[b] == 0) continue;
      if (seen + buckets_[b] >= rank) {
        const double low = static_cast<double>(BucketLow(b));
        const double width = static_cast<double>(BucketHigh(b)) - low + 1.0;
        // Exact below kSub; above, the bucket's values are taken as spread
        // evenly over its width, the j-th of c at low + (j - 1/2) w / c.
        const double v =
            b < kSub ? low : low + (rank - seen - 0.5) * width / buckets_[b];
        return std::clamp(v, static_cast<double>(min()),
                          static_cast<double>(max_));
      }
      seen += buckets_[b];
    }
    return static_cast<double>(max_);
  }

  // How many recorded values are at least `threshold`, and their sum,
  // each value taken as the middle of its bucket (within 1.6%). For a
  // write phase with threshold 1 ms this is the time writers spent stalled.
  struct Tail {
    uint64_t count = 0;
    double sum = 0;
  };
  Tail TailAtLeast(uint64_t threshold) const {
    Tail t;
    for (size_t b = BucketFor(threshold); b < kNumBuckets; b++) {
      if (buckets_[b] == 0) continue;
      t.count += buckets_[b];
      t.sum += buckets_[b] * (static_cast<double>(BucketLow(b)) +
                              static_cast<double>(BucketHigh(b))) / 2;
    }
    return t;
  }

  static size_t BucketFor(uint64_t v) {
    if (v < kSub) return static_cast<size_t>(v);
    const int shift = std::bit_width(v) - 1 - kSubBits;  // >= 0
    const uint64_t mantissa = v >> shift;                // in [kSub, 2 kSub)
    return static_cast<size_t>(shift) * kSub + static_cast<size_t>(mantissa);
  }
  // The smallest and largest value bucket b holds.
  static uint64_t BucketLow(size_t b) {
    if (b < kSub) return b;
    const size_t shift = b / kSub - 1;
    const uint64_t mantissa = b - shift * kSub;
    return mantissa << shift;
  }
  static uint64_t BucketHigh(size_t b) {
    if (b < kSub) return b;
    const size_t shift = b / kSub - 1;
    const uint64_t mantissa = b - shift * kSub;
    // For the very last bucket this wraps to 2^64 - 1, which is right.
    return ((mantissa + 1) << shift) - 1;
  }

 private:
  std::array<uint64_t, kNumBuckets> buckets_;
  uint64_t count_;
  double sum_;
  uint64_t min_;
  uint64_t max_;
};

}  // namespace bloomkv::bench

#endif  // BLOOMKV_BENCH_KVBENCH_HISTOGRAM_H_
