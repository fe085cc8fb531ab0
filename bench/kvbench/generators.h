// Workload generators for kvbench: short codes as a link shortener issues
// them, the URLs they point to, and Zipf-distributed popularity.
//
// Everything is a pure function of a seed, so two runs (filters on and off,
// or two engines) see byte-identical data and identical probe streams.
// A short code is 7 base62 characters; it is handled as its number in
// [0, 62^7) (about 3.5e12, so a hash set of issued codes is a set of
// uint64_t) and spelled out only when a key is needed. Header-only so that
// the test suite can check the generators without linking the benchmark.
//
// Thread-safety: the generators are not thread-safe; give each thread its
// own (seeded from the phase seed and the thread number). ShortCodeSet is
// immutable after Issue() and may be read by many threads.
#ifndef BLOOMKV_BENCH_KVBENCH_GENERATORS_H_
#define BLOOMKV_BENCH_KVBENCH_GENERATORS_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace bloomkv::bench {

// splitmix64: a fast, well-mixed 64-bit generator, also usable as a hash of
// (seed, index) for values that must not depend on generation order.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ull;
    return Mix64(state_);
  }
  // Uniform in [0, n). REQUIRES: n > 0.
  uint64_t Uniform(uint64_t n) {
    // Multiply-shift: bias below 2^-64 * n, irrelevant at these sizes.
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >>
                                 64);
  }
  // Uniform in [0, 1).
  double NextDouble() { return (Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

constexpr int kShortCodeLength = 7;
constexpr char kBase62[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
// 62^7: the number of distinct short codes.
constexpr uint64_t kShortCodeSpace = 3521614606208ull;

// The 7-character spelling of code number n (most significant digit first,
// so numeric order is key order). REQUIRES: n < kShortCodeSpace.
inline std::string EncodeShortCode(uint64_t n) {
  std::string s(kShortCodeLength, '0');
  for (int i = kShortCodeLength - 1; i >= 0; i--) {
    s[i] = kBase62[n % 62];
    n /= 62;
  }
  return s;
}

// Issued short codes: uniform random numbers from a seeded generator,
// deduplicated, in issue order, plus the set of them for "never issued"
// checks.
class ShortCodeSet {
 public:
  ShortCodeSet() = default;
  ShortCodeSet(const ShortCodeSet&) = delete;
  ShortCodeSet& operator=(const ShortCodeSet&) = delete;

  // Issues n distinct codes from `seed`, replacing any earlier ones.
  void Issue(uint64_t n, uint64_t seed) {
    codes_.clear();
    issued_.clear();
    codes_.reserve(n);
    issued_.reserve(n);
    Rng rng(seed);
    while (codes_.size() < n) {
      const uint64_t c = rng.Uniform(kShortCodeSpace);
      if (issued_.insert(c).second) codes_.push_back(c);
    }
  }

  size_t size() const { return codes_.size(); }
  // The i-th code issued. REQUIRES: i < size().
  uint64_t code(size_t i) const { return codes_[i]; }
  bool Contains(uint64_t c) const { return issued_.count(c) != 0; }

  // A uniformly random code that was never issued (rejection sampling; with
  // even 10^8 issued codes a retry happens once in 35,000 draws).
  uint64_t NeverIssued(Rng* rng) const {
    while (true) {
      const uint64_t c = rng->Uniform(kShortCodeSpace);
      if (!Contains(c)) return c;
    }
  }

 private:
  std::vector<uint64_t> codes_;
  std::unordered_set<uint64_t> issued_;
};

// Realistic long URLs: scheme, a host from a list, path segments and a
// query string, of a length uniform in [min_len, max_len]. The URL of
// (code, version) is a pure function of the seed, so a reader can verify
// what it got without storing the values.
class UrlGenerator {
 public:
  // REQUIRES: 1 <= min_len <= max_len.
  UrlGenerator(uint64_t seed, size_t min_len, size_t max_len)
      : seed_(seed), min_len_(min_len), max_len_(max_len) {}

  std::string Url(uint64_t code, uint32_t version) const {
    static constexpr std::array<const char*, 16> kHosts = {
        "www.example.com",     "shop.example.org", "news.example.net",
        "blog.example.io",     "docs.example.dev", "m.example.co.uk",
        "cdn.example-img.com", "example.de",       "www.example.fr",
        "video.example.tv",    "api.example.app",  "forum.example.info",
        "store.example.shop",  "maps.example.com", "wiki.example.org",
        "mail.example.email"};
    static constexpr std::array<const char*, 12> kWords = {
        "products", "article", "2024",  "summer-sale", "category", "item",
        "watch",    "posts",   "media", "de",          "en",       "view"};
    static constexpr char kAlnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    Rng rng(Mix64(seed_ ^ Mix64(code)) + version);
    const size_t len = min_len_ + rng.Uniform(max_len_ - min_len_ + 1);
    std::string url = rng.Uniform(8) == 0 ? "http://" : "https://";
    url += kHosts[rng.Uniform(kHosts.size())];
    const uint64_t segments = 1 + rng.Uniform(4);
    for (uint64_t i = 0; i < segments && url.size() < len; i++) {
      url += '/';
      if (rng.Uniform(2) == 0) {
        url += kWords[rng.Uniform(kWords.size())];
      } else {
        for (uint64_t j = 4 + rng.Uniform(9); j > 0; j--)
          url += kAlnum[rng.Uniform(36)];
      }
    }
    url += "?utm_source=";
    url += rng.Uniform(2) == 0 ? "newsletter" : "social";
    url += "&id=";
    // Random characters fill the query up to the length; longer URLs are
    // cut (a long path simply loses its tail).
    while (url.size() < len) url += kAlnum[rng.Uniform(36)];
    url.resize(len);
    return url;
  }

 private:
  const uint64_t seed_;
  const size_t min_len_;
  const size_t max_len_;
};

// Zipf-distributed ranks in [1, n]: P(k) proportional to 1 / k^s. Sampled
// by rejection-inversion (Hoermann and Derflinger, 1996): O(1) time and
// memory per draw, for any n and any s > 0 (s = 1 included).
class ZipfGenerator {
 public:
  // REQUIRES: n >= 1, s > 0.
  ZipfGenerator(uint64_t n, double s, uint64_t seed)
      : n_(n), s_(s), rng_(seed) {
    h_x1_ = H(1.5) - 1.0;
    h_n_ = H(static_cast<double>(n) + 0.5);
    squeeze_ = 2.0 - HInverse(H(2.5) - std::pow(2.0, -s));
  }

  uint64_t Next() {
    while (true) {
      const double u = h_n_ + rng_.NextDouble() * (h_x1_ - h_n_);
      const double x = HInverse(u);
      double k = std::floor(x + 0.5);
      k = std::clamp(k, 1.0, static_cast<double>(n_));
      // Accept at once inside the squeeze, else compare against the exact
      // area under the histogram bar of k.
      if (k - x <= squeeze_ || u >= H(k + 0.5) - std::pow(k, -s_)) {
        return static_cast<uint64_t>(k);
      }
    }
  }

 private:
  // H is an antiderivative of x^-s; written through log1p/expm1 so that it
  // stays accurate as s approaches 1 (where it becomes log x).
  double H(double x) const {
    const double log_x = std::log(x);
    return ExpM1OverX((1.0 - s_) * log_x) * log_x;
  }
  double HInverse(double y) const {
    double t = y * (1.0 - s_);
    if (t < -1.0) t = -1.0;  // rounding guard at the lower end
    return std::exp(Log1pOverX(t) * y);
  }
  static double ExpM1OverX(double x) {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x / 2.0;
  }
  static double Log1pOverX(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x / 2.0;
  }

  const uint64_t n_;
  const double s_;
  Rng rng_;
  double h_x1_;
  double h_n_;
  double squeeze_;
};

}  // namespace bloomkv::bench

#endif  // BLOOMKV_BENCH_KVBENCH_GENERATORS_H_
