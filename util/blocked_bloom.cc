// Sizing, probe-count choice and false-positive theory for the blocked bloom
// layout; see blocked_bloom.h.
#include "util/blocked_bloom.h"

#include <algorithm>
#include <cmath>
#include <new>
#include <vector>

namespace bloomkv {
namespace blocked_bloom {

uint64_t NumLinesFor(uint64_t num_keys, double bits_per_key) {
  if (num_keys == 0) return 0;
  // In double: n * bpk can exceed 2^64 for absurd inputs; those clamp.
  const double lines = std::ceil(static_cast<double>(num_keys) * bits_per_key /
                                 static_cast<double>(kLineBits));
  if (!(lines >= 1.0)) return 1;  // Also catches NaN.
  if (lines >= static_cast<double>(kMaxLines)) return kMaxLines;
  return static_cast<uint64_t>(lines);
}

int ChooseNumProbes(double bits_per_key) {
  // kMinBitsPerKey[k] is the bits per key from which k + 1 probes give a
  // lower false-positive rate than k probes (index 0 unused): the crossover
  // points of TheoreticalFpRate, scanned in steps of 0.025 bits per key,
  // whose predictions the measured rates match (docs/filters.md has the
  // table; `filter_bench --probe_table` reproduces it). Fewer probes than the
  // unblocked optimum of 0.69 * bpk: lines with more than the average load
  // dominate the false positives, and they favour fewer probes.
  static constexpr double kMinBitsPerKey[kMaxProbes] = {
      0.0,  // unused
      2.1,    3.6,    5.125,  6.675, 8.325,  10.075, 11.925, 13.95,
      16.125, 18.55,  21.2,   24.15, 27.45,  31.175, 35.375, 40.15,
      45.575, 51.775, 58.925, 67.15, 76.675, 87.75,
      1e300,  // 23 probes suffice up to 100 bits per key.
  };
  int k = 1;
  while (k < kMaxProbes && bits_per_key >= kMinBitsPerKey[k]) k++;
  return k;
}

namespace {

// log of the Binomial(n, q) probability of exactly `x` successes.
double LogBinomialPmf(double n, double q, double x) {
  return std::lgamma(n + 1) - std::lgamma(x + 1) - std::lgamma(n - x + 1) +
         x * std::log(q) + (n - x) * std::log1p(-q);
}

}  // namespace

double TheoreticalFpRate(uint64_t num_lines, uint64_t num_keys, int k) {
  if (num_lines == 0 || num_keys == 0) return 0.0;
  if (k < 1 || k > kMaxProbes) return 1.0;
  constexpr int m = static_cast<int>(kLineBits);

  // The load of the probed line: Binomial(n, 1/lines). Only loads within
  // many standard deviations of the mean carry weight.
  const double n = static_cast<double>(num_keys);
  const double q = 1.0 / static_cast<double>(num_lines);
  uint64_t lo = num_keys, hi = num_keys;  // One line: the load is exactly n.
  if (num_lines > 1) {
    const double mean = n * q;
    const double sd = std::sqrt(mean * (1 - q));
    lo = static_cast<uint64_t>(std::max(0.0, std::floor(mean - 12 * sd - 12)));
    hi = static_cast<uint64_t>(std::min(n, std::ceil(mean + 12 * sd + 12)));
  }
  // From ~40 balls per bit on, a line has no clear bits left in practice.
  if (static_cast<double>(lo) * k > 40.0 * m) return 1.0;

  // dist[x]: probability that exactly x of the line's bits are set after t
  // independent uniform bit settings (k per key). A query's k probes are
  // independent uniform positions, so given x set bits it matches with
  // probability (x/m)^k.
  // One more set bit goes to an already set one (stay) or a clear one (grow).
  std::vector<double> dist(m + 1, 0.0), match(m + 1), stay(m + 1), grow(m + 1);
  for (int x = 0; x <= m; x++) {
    match[x] = std::pow(static_cast<double>(x) / m, k);
    stay[x] = static_cast<double>(x) / m;
    grow[x] = static_cast<double>(m - x + 1) / m;
  }
  dist[0] = 1.0;
  // dist is negligible outside [xlo, xhi]; tracking that window makes the
  // update cost its width (tens of entries) instead of m. Entries below
  // kNegligible are dropped: the total error stays far below any rate of
  // interest.
  constexpr double kNegligible = 1e-24;
  int xlo = 0, xhi = 0;
  uint64_t t = 0;
  double fp = 0.0, weight = 0.0;
  for (uint64_t load = lo; load <= hi; load++) {
    for (const uint64_t target = load * static_cast<uint64_t>(k); t < target;
         t++) {
      xhi = std::min(xhi + 1, m);
      for (int x = xhi; x > xlo; x--) {
        dist[x] = dist[x] * stay[x] + dist[x - 1] * grow[x];
      }
      dist[xlo] *= stay[xlo];
      while (xlo < xhi && dist[xlo] < kNegligible) dist[xlo++] = 0.0;
      while (xhi > xlo && dist[xhi] < kNegligible) dist[xhi--] = 0.0;
    }
    double p_match = 0.0;
    for (int x = xlo; x <= xhi; x++) p_match += dist[x] * match[x];
    const double w =
        num_lines == 1
            ? 1.0
            : std::exp(LogBinomialPmf(n, q, static_cast<double>(load)));
    fp += w * p_match;
    weight += w;
  }
  // Renormalize away the (negligible) truncated tails.
  return weight > 0 ? std::min(1.0, fp / weight) : 1.0;
}

double BitsPerKeyForFpRate(double fp_rate) {
  // The rate of a large filter depends only on the mean load per line, so
  // evaluate it for 2^20 lines. FP falls as bpk grows (k follows bpk).
  constexpr uint64_t kLines = uint64_t{1} << 20;
  constexpr double kMaxBitsPerKey = 100.0;
  auto fp_at = [](double bpk) {
    const auto keys = static_cast<uint64_t>(kLines * kLineBits / bpk);
    return TheoreticalFpRate(kLines, keys, ChooseNumProbes(bpk));
  };
  const double ln2 = std::log(2.0);
  // The classic bound is never enough for the blocked layout: start there.
  double lo = std::fmax(1.0, -std::log(fp_rate) / (ln2 * ln2));
  double hi = kMaxBitsPerKey;
  if (lo >= hi || fp_at(hi) > fp_rate) return kMaxBitsPerKey;
  if (fp_at(lo) <= fp_rate) return lo;
  while (hi - lo > 0.01) {
    const double mid = (lo + hi) / 2;
    (fp_at(mid) <= fp_rate ? hi : lo) = mid;
  }
  return hi;
}

void AlignedLinesDeleter::operator()(char* p) const {
  ::operator delete[](p, std::align_val_t(kLineBytes));
}

AlignedLines AllocateLines(uint64_t num_lines) {
  if (num_lines == 0) return AlignedLines();
  const size_t bytes = static_cast<size_t>(num_lines * kLineBytes);
  char* p =
      static_cast<char*>(::operator new[](bytes, std::align_val_t(kLineBytes)));
  std::fill(p, p + bytes, 0);
  return AlignedLines(p);
}

}  // namespace blocked_bloom
}  // namespace bloomkv
