// Micro-benchmarks of the blocked bloom filter: build cost per key and probe
// cost for a present and an absent key, for a cache-resident filter (10k
// keys) and a filter far larger than any cache (215M keys at 10 bits per key,
// 256 MiB), through the segment FilterPolicy and the standalone BloomFilter.
//
// Hashes are generated on the fly from a counter (splitmix64), so probes hit
// random lines and the large filter needs no stored key set: key i's hash is
// Mix(i), and an absent key's hash is Mix(i + 2^40). Generating a hash costs
// about a nanosecond and is included in every per-key figure
// (BM_HashGenerationOnly shows it alone).
//
// `filter_bench --probe_table` instead measures the false-positive rate for
// each bits-per-key setting at the chosen probe count and its neighbours:
// the measurement behind ChooseNumProbes (docs/filters.md).
//
// The binary fuse filters (8- and 16-bit fingerprints) get the same build
// and probe benchmarks (BM_Fuse*), the large one at 10^8 keys
// ($BLOOMKV_FUSE_LARGE_KEYS to change it). `filter_bench --space_table`
// prints, for bloom at 10 bits per key and both fuse widths, bits per key,
// the false-positive rate measured with 10^7 absent keys, the bound
// log2(1/rate) at that rate, build ns per key and peak temporary build
// memory per key (docs/filters.md, "Binary fuse filters: measurements").
// `filter_bench --standalone_table` compares the standalone filters
// (bloom, scalable, cuckoo, fuse) at 1% and 0.1%: bits per key, build and
// query ns, measured rate (docs/filters.md, "Standalone filters: measured").
// BM_BloomFilterAddConcurrently* show the cost of thread-safe adds.
//
// Thread-safety: single-threaded.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/bloom_filter.h"
#include "bloomkv/cuckoo_filter.h"
#include "bloomkv/filter_policy.h"
#include "bloomkv/scalable_bloom_filter.h"
#include "bloomkv/static_filter.h"
#include "util/binary_fuse.h"
#include "util/blocked_bloom.h"

namespace bloomkv {
namespace {

namespace bb = blocked_bloom;
namespace bf = binary_fuse;

constexpr uint64_t kSmallKeys = 10000;
// 4,199,219 lines of 64 bytes at 10 bits per key: 256.3 MiB.
constexpr uint64_t kLargeKeys = 215000000;
constexpr uint64_t kAbsentOffset = uint64_t{1} << 40;

uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Cheap uniform index in [0, n) for picking which key to probe.
class IndexPicker {
 public:
  explicit IndexPicker(uint64_t n) : n_(n) {}
  uint64_t Next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return ((state_ >> 32) * n_) >> 32;
  }

 private:
  uint64_t n_;
  uint64_t state_ = 0x2545F4914F6CDD1Dull;
};

std::shared_ptr<const FilterPolicy> Policy() {
  static const auto policy = NewBloomFilterPolicy(10);
  return policy;
}

std::string BuildPolicyFilter(uint64_t n) {
  std::vector<uint64_t> hashes(n);
  for (uint64_t i = 0; i < n; i++) hashes[i] = Mix(i);
  std::string filter;
  Policy()->CreateFilter(hashes.data(), n, &filter);
  return filter;
}

BloomFilter BuildStandalone(uint64_t n) {
  BloomFilter f = BloomFilter::WithBitsPerKey(n, 10);
  for (uint64_t i = 0; i < n; i++) f.AddHash(Mix(i));
  return f;
}

const BloomFilter& Standalone(uint64_t n) {
  static BloomFilter small = BuildStandalone(kSmallKeys);
  if (n == kSmallKeys) return small;
  static BloomFilter large = BuildStandalone(kLargeKeys);
  return large;
}

// The policy's large filter would need its 215M hashes in one array (1.7
// GB) to go through CreateFilter. Its bits are exactly the standalone
// filter's (same core, same size; tested in bloom_filter_test), so it is
// assembled from those lines plus the policy's trailer, then checked.
const std::string& PolicyFilter(uint64_t n) {
  static const std::string small = BuildPolicyFilter(kSmallKeys);
  if (n == kSmallKeys) return small;
  static const std::string large = [] {
    std::string serialized;
    Standalone(kLargeKeys).Serialize(&serialized);
    const BloomFilterInfo info = Standalone(kLargeKeys).Info();
    std::string filter = serialized.substr(36, info.bytes);
    const char trailer[4] = {static_cast<char>(info.probes_per_key), 0, 0,
                             static_cast<char>(0xB1)};
    filter.append(trailer, 4);
    for (uint64_t i = 0; i < 1000; i++) {
      if (!Policy()->KeyMayMatch(Mix(i * 7919), filter)) {
        std::fprintf(stderr, "assembled policy filter lost a key\n");
        std::abort();
      }
    }
    return filter;
  }();
  return large;
}

void SetKeyCounters(benchmark::State& state, uint64_t n, size_t bytes) {
  state.counters["keys"] = static_cast<double>(n);
  state.counters["filter_MiB"] = static_cast<double>(bytes) / (1 << 20);
}

void BM_HashGenerationOnly(benchmark::State& state) {
  IndexPicker pick(kLargeKeys);
  for (auto _ : state) benchmark::DoNotOptimize(Mix(pick.Next()));
}

// ns per key to build a policy filter from an array of hashes.
void BM_PolicyCreateFilter(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  std::vector<uint64_t> hashes(n);
  for (uint64_t i = 0; i < n; i++) hashes[i] = Mix(i);
  std::string filter;
  for (auto _ : state) {
    filter.clear();
    Policy()->CreateFilter(hashes.data(), n, &filter);
    benchmark::DoNotOptimize(filter.data());
  }
  SetKeyCounters(state, n, filter.size());
  state.counters["ns_per_key"] = benchmark::Counter(
      static_cast<double>(n) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// ns per key to fill a standalone filter with AddHash.
void BM_BloomFilterAdd(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  uint64_t bytes = 0;
  for (auto _ : state) {
    BloomFilter f = BuildStandalone(n);
    bytes = f.bit_count() / 8;
    benchmark::DoNotOptimize(&f);
  }
  SetKeyCounters(state, n, bytes);
  state.counters["ns_per_key"] = benchmark::Counter(
      static_cast<double>(n) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// ns per key to fill a standalone filter with AddHashConcurrently, from one
// thread: the price of the atomic read-modify-writes.
void BM_BloomFilterAddConcurrently(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  uint64_t bytes = 0;
  for (auto _ : state) {
    BloomFilter f = BloomFilter::WithBitsPerKey(n, 10);
    for (uint64_t i = 0; i < n; i++) f.AddHashConcurrently(Mix(i));
    bytes = f.bit_count() / 8;
    benchmark::DoNotOptimize(&f);
  }
  SetKeyCounters(state, n, bytes);
  state.counters["ns_per_key"] = benchmark::Counter(
      static_cast<double>(n) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Several threads adding disjoint keys to one filter of 10^7 keys (12 MiB)
// with AddHashConcurrently; time per key is wall time over all threads'
// keys (the threads share this machine's cores).
void BM_BloomFilterAddConcurrentlyThreads(benchmark::State& state) {
  static BloomFilter shared = BloomFilter::WithBitsPerKey(10000000, 10);
  const uint64_t per_thread = 1000000;
  const auto t = static_cast<uint64_t>(state.thread_index());
  uint64_t i = t * per_thread;
  for (auto _ : state) {
    shared.AddHashConcurrently(Mix(i));
    if (++i == (t + 1) * per_thread) i = t * per_thread;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

template <bool kPresent>
void BM_PolicyKeyMayMatch(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const std::string& filter = PolicyFilter(n);
  const FilterPolicy& policy = *Policy();
  IndexPicker pick(n);
  uint64_t matches = 0;
  for (auto _ : state) {
    const uint64_t h =
        kPresent ? Mix(pick.Next()) : Mix(pick.Next() + kAbsentOffset);
    matches += policy.KeyMayMatch(h, filter);
  }
  benchmark::DoNotOptimize(matches);
  SetKeyCounters(state, n, filter.size());
  state.counters["match_rate"] =
      static_cast<double>(matches) / static_cast<double>(state.iterations());
}

template <bool kPresent>
void BM_BloomFilterMightContain(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const BloomFilter& f = Standalone(n);
  IndexPicker pick(n);
  uint64_t matches = 0;
  for (auto _ : state) {
    const uint64_t h =
        kPresent ? Mix(pick.Next()) : Mix(pick.Next() + kAbsentOffset);
    matches += f.MightContainHash(h);
  }
  benchmark::DoNotOptimize(matches);
  SetKeyCounters(state, n, f.Info().bytes);
  state.counters["match_rate"] =
      static_cast<double>(matches) / static_cast<double>(state.iterations());
}

// Absent-key probes of the large filter in batches of 8: all 8 lines are
// prefetched before any is probed, so their cache misses overlap (what a
// multi-key lookup can do with the core's PrefetchLine). Time is per key.
void BM_PrefetchedBatchProbeAbsent(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const std::string& filter = PolicyFilter(n);
  const uint64_t num_lines = (filter.size() - 4) / bb::kLineBytes;
  const int k = static_cast<unsigned char>(filter[filter.size() - 4]);
  IndexPicker pick(n);
  constexpr int kBatch = 8;
  uint64_t matches = 0;
  for (auto _ : state) {
    uint64_t h[kBatch];
    for (int i = 0; i < kBatch; i++) {
      h[i] = Mix(pick.Next() + kAbsentOffset);
      bb::PrefetchLine(filter.data(), num_lines, h[i]);
    }
    for (int i = 0; i < kBatch; i++) {
      matches += bb::LineMayContain(bb::LineFor(filter.data(), num_lines, h[i]),
                                    h[i], k);
    }
  }
  benchmark::DoNotOptimize(matches);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kBatch);
  SetKeyCounters(state, n, filter.size());
  state.counters["ns_per_key"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kBatch,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_HashGenerationOnly);
BENCHMARK(BM_PolicyCreateFilter)
    ->Arg(kSmallKeys)
    ->Arg(10000000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BloomFilterAdd)->Arg(kSmallKeys)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BloomFilterAdd)
    ->Arg(kLargeKeys)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_BloomFilterAddConcurrently)
    ->Arg(kSmallKeys)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BloomFilterAddConcurrently)
    ->Arg(kLargeKeys)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_BloomFilterAddConcurrentlyThreads)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_PolicyKeyMayMatch, true)
    ->Arg(kSmallKeys)
    ->Arg(kLargeKeys);
BENCHMARK_TEMPLATE(BM_PolicyKeyMayMatch, false)
    ->Arg(kSmallKeys)
    ->Arg(kLargeKeys);
BENCHMARK_TEMPLATE(BM_BloomFilterMightContain, true)
    ->Arg(kSmallKeys)
    ->Arg(kLargeKeys);
BENCHMARK_TEMPLATE(BM_BloomFilterMightContain, false)
    ->Arg(kSmallKeys)
    ->Arg(kLargeKeys);
BENCHMARK(BM_PrefetchedBatchProbeAbsent)->Arg(kLargeKeys);

// ---- binary fuse ------------------------------------------------------------

uint64_t FuseLargeKeys() {
  static const uint64_t n = [] {
    const char* env = std::getenv("BLOOMKV_FUSE_LARGE_KEYS");
    return env != nullptr ? std::strtoull(env, nullptr, 10) : 100000000ull;
  }();
  return n;
}

std::shared_ptr<const FilterPolicy> FusePolicy(int bits) {
  static const auto p8 = NewBinaryFuseFilterPolicy(8);
  static const auto p16 = NewBinaryFuseFilterPolicy(16);
  return bits == 8 ? p8 : p16;
}

std::string BuildFuseFilter(int bits, uint64_t n) {
  std::vector<uint64_t> hashes(n);
  for (uint64_t i = 0; i < n; i++) hashes[i] = Mix(i);
  std::string filter;
  FusePolicy(bits)->CreateFilter(hashes.data(), n, &filter);
  return filter;
}

// Built once per width and size: the large ones take a while.
const std::string& FuseFilter(int bits, bool large) {
  static std::string cache[2][2];
  std::string& f = cache[bits == 16][large];
  if (f.empty())
    f = BuildFuseFilter(bits, large ? FuseLargeKeys() : kSmallKeys);
  return f;
}

// ns per key and peak temporary bytes per key to build a fuse filter from an
// array of hashes.
template <int kBits>
void BM_FuseCreateFilter(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  std::vector<uint64_t> hashes(n);
  for (uint64_t i = 0; i < n; i++) hashes[i] = Mix(i);
  std::string filter;
  bf::BuildStats stats;
  for (auto _ : state) {
    filter.clear();
    bf::Build(hashes.data(), n, kBits, &filter, &stats);
    benchmark::DoNotOptimize(filter.data());
  }
  SetKeyCounters(state, n, filter.size());
  state.counters["bits_per_key"] =
      8.0 * static_cast<double>(filter.size()) / static_cast<double>(n);
  state.counters["temp_bytes_per_key"] =
      static_cast<double>(stats.peak_temp_bytes) / static_cast<double>(n);
  state.counters["attempts"] = stats.attempts;
  state.counters["ns_per_key"] = benchmark::Counter(
      static_cast<double>(n) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// range(0): 0 = small (10k keys), 1 = large.
template <int kBits, bool kPresent>
void BM_FuseKeyMayMatch(benchmark::State& state) {
  const bool large = state.range(0) != 0;
  const uint64_t n = large ? FuseLargeKeys() : kSmallKeys;
  const std::string& filter = FuseFilter(kBits, large);
  const FilterPolicy& policy = *FusePolicy(kBits);
  IndexPicker pick(n);
  uint64_t matches = 0;
  for (auto _ : state) {
    const uint64_t h =
        kPresent ? Mix(pick.Next()) : Mix(pick.Next() + kAbsentOffset);
    matches += policy.KeyMayMatch(h, filter);
  }
  benchmark::DoNotOptimize(matches);
  SetKeyCounters(state, n, filter.size());
  state.counters["match_rate"] =
      static_cast<double>(matches) / static_cast<double>(state.iterations());
}

// Absent-key probes in batches of 8 through the policy's Prefetch hint,
// as a lookup over several segments does; time is per key.
template <int kBits>
void BM_FusePrefetchedBatchProbeAbsent(benchmark::State& state) {
  const bool large = state.range(0) != 0;
  const uint64_t n = large ? FuseLargeKeys() : kSmallKeys;
  const std::string& filter = FuseFilter(kBits, large);
  const FilterPolicy& policy = *FusePolicy(kBits);
  IndexPicker pick(n);
  constexpr int kBatch = 8;
  uint64_t matches = 0;
  for (auto _ : state) {
    uint64_t h[kBatch];
    for (int i = 0; i < kBatch; i++) {
      h[i] = Mix(pick.Next() + kAbsentOffset);
      policy.Prefetch(h[i], filter);
    }
    for (int i = 0; i < kBatch; i++)
      matches += policy.KeyMayMatch(h[i], filter);
  }
  benchmark::DoNotOptimize(matches);
  SetKeyCounters(state, n, filter.size());
  state.counters["ns_per_key"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kBatch,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK_TEMPLATE(BM_FuseCreateFilter, 8)
    ->Arg(kSmallKeys)
    ->Arg(1000000)
    ->Arg(10000000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_FuseCreateFilter, 16)
    ->Arg(kSmallKeys)
    ->Arg(1000000)
    ->Arg(10000000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_FuseKeyMayMatch, 8, true)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_FuseKeyMayMatch, 8, false)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_FuseKeyMayMatch, 16, true)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_FuseKeyMayMatch, 16, false)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_FusePrefetchedBatchProbeAbsent, 8)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_FusePrefetchedBatchProbeAbsent, 16)->Arg(0)->Arg(1);

// --space_table [keys]: space against the bound, build cost and temporary
// memory, for each filter kind, at `keys` keys (default 10^6; 10^7 absent
// probes each).
void PrintSpaceTable(uint64_t keys) {
  constexpr uint64_t kProbes = 10000000;
  std::vector<uint64_t> hashes(keys);
  for (uint64_t i = 0; i < keys; i++) hashes[i] = Mix(i);
  std::printf(
      "| filter | keys | bits/key | FP measured (10^7 absent) | bound "
      "log2(1/FP) | bits/key / bound | build ns/key | temp bytes/key |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  struct Kind {
    std::string name;
    std::shared_ptr<const FilterPolicy> policy;
    int fuse_bits;  // 0: bloom
  };
  std::vector<Kind> kinds = {{"bloom 10 bits/key", NewBloomFilterPolicy(10), 0}};
  // The bloom filter sized for 1%, 0.1% and 0.01%: the fewest bits per key,
  // in steps of 1/16, whose theoretical rate at this many keys is at most
  // the target.
  for (double target : {1e-2, 1e-3, 1e-4}) {
    double lo = 1, hi = 64;  // rate(lo) > target >= rate(hi)
    auto rate = [keys](double bpk) {
      return bb::TheoreticalFpRate(bb::NumLinesFor(keys, bpk), keys,
                                   bb::ChooseNumProbes(bpk));
    };
    while (hi - lo > 1.0 / 16) {
      const double mid = std::round((lo + hi) / 2 * 16) / 16;
      if (mid <= lo || mid >= hi) break;
      (rate(mid) <= target ? hi : lo) = mid;
    }
    char name[64];
    std::snprintf(name, sizeof(name), "bloom for %g%% (%.4g bits/key)",
                  target * 100, hi);
    kinds.push_back({name, NewBloomFilterPolicy(hi), 0});
  }
  kinds.push_back({"fuse8", FusePolicy(8), 8});
  kinds.push_back({"fuse16", FusePolicy(16), 16});
  for (const Kind& kind : kinds) {
    std::string filter;
    bf::BuildStats stats;
    const auto start = std::chrono::steady_clock::now();
    if (kind.fuse_bits != 0) {
      bf::Build(hashes.data(), keys, kind.fuse_bits, &filter, &stats);
    } else {
      kind.policy->CreateFilter(hashes.data(), keys, &filter);
    }
    const double build_ns = std::chrono::duration<double, std::nano>(
                                std::chrono::steady_clock::now() - start)
                                .count() /
                            static_cast<double>(keys);
    // The bloom policy builds its lines in one aligned buffer of the
    // filter's size, then copies it out.
    const double temp_per_key =
        kind.fuse_bits != 0
            ? static_cast<double>(stats.peak_temp_bytes) /
                  static_cast<double>(keys)
            : static_cast<double>(filter.size()) / static_cast<double>(keys);
    uint64_t positives = 0;
    for (uint64_t i = 0; i < kProbes; i++) {
      positives += kind.policy->KeyMayMatch(Mix(i + kAbsentOffset), filter);
    }
    const double fp =
        static_cast<double>(positives) / static_cast<double>(kProbes);
    const double bpk =
        8.0 * static_cast<double>(filter.size()) / static_cast<double>(keys);
    const double bound = -std::log2(fp);
    std::printf(
        "| %s | %llu | %.3f | %.4f%% (%llu) | %.3f | %.3f | %.1f | %.1f |\n",
        kind.name.c_str(), static_cast<unsigned long long>(keys), bpk, fp * 100,
        static_cast<unsigned long long>(positives), bound, bpk / bound,
        build_ns, temp_per_key);
    std::fflush(stdout);
  }
}

// --probe_table: for each bits-per-key setting, the measured false-positive
// rate at the chosen probe count k and at k - 1 and k + 1, next to theory.
void PrintProbeTable() {
  constexpr uint64_t kKeys = 1000000;
  const double kBitsPerKey[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                12, 13, 14, 15, 16, 18, 20, 22, 24, 27, 30};
  std::printf(
      "| bits/key | k | FP at k-1 | FP at k (measured) | FP at k+1 |"
      " FP at k (theory) | queries |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (double bpk : kBitsPerKey) {
    const uint64_t lines = bb::NumLinesFor(kKeys, bpk);
    const int chosen = bb::ChooseNumProbes(bpk);
    const double theory = bb::TheoreticalFpRate(lines, kKeys, chosen);
    // Enough queries for ~1000 false positives, within [10M, 200M].
    const auto queries =
        static_cast<uint64_t>(std::fmin(2e8, std::fmax(1e7, 1000 / theory)));
    double measured[3] = {-1, -1, -1};
    for (int d = -1; d <= 1; d++) {
      const int k = chosen + d;
      if (k < 1 || k > bb::kMaxProbes) continue;
      bb::AlignedLines data = bb::AllocateLines(lines);
      for (uint64_t i = 0; i < kKeys; i++) {
        const uint64_t h = Mix(i);
        bb::AddToLine(bb::LineFor(data.get(), lines, h), h, k);
      }
      uint64_t fp = 0;
      for (uint64_t i = 0; i < queries; i++) {
        const uint64_t h = Mix(i + kAbsentOffset);
        fp += bb::LineMayContain(bb::LineFor(data.get(), lines, h), h, k);
      }
      measured[d + 1] = static_cast<double>(fp) / static_cast<double>(queries);
    }
    auto cell = [](double v) {
      return v < 0 ? std::string("-") : std::to_string(v * 100) + "%";
    };
    std::printf("| %g | %d | %s | %s | %s | %s | %.0fM |\n", bpk, chosen,
                cell(measured[0]).c_str(), cell(measured[1]).c_str(),
                cell(measured[2]).c_str(), cell(theory).c_str(),
                static_cast<double>(queries) / 1e6);
    std::fflush(stdout);
  }
}

// --standalone_table [keys]: the standalone filters an application uses
// (BloomFilter, ScalableBloomFilter, CuckooFilter, StaticFilter) sized for
// `keys` keys (default 10^6) at a 1% and a 0.1% target: bits per key of
// memory, build ns per key (adds of precomputed hashes, allocation
// included), ns per probe of a present and an absent key (random order,
// hash given), and the false-positive rate measured with 10^7 absent keys.
// The scalable filter is shown twice: sized right (one sub-filter) and
// grown from a tenth of the keys (4 sub-filters at expansion 2).
void PrintStandaloneTable(uint64_t keys) {
  constexpr uint64_t kFpProbes = 10000000;
  constexpr uint64_t kTimedProbes = 4000000;
  std::vector<uint64_t> hashes(keys);
  for (uint64_t i = 0; i < keys; i++) hashes[i] = Mix(i);
  using Clock = std::chrono::steady_clock;
  auto ns_since = [](Clock::time_point start, uint64_t n) {
    return std::chrono::duration<double, std::nano>(Clock::now() - start)
               .count() /
           static_cast<double>(n);
  };
  std::printf(
      "| filter | target | bits/key | build ns/key | query present ns | "
      "query absent ns | FP measured |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  // One row: `build` fills a filter and returns a function giving its
  // memory in bytes (called after the timing: Info() runs the theory);
  // `probe` answers for a hash.
  auto row = [&](const char* name, const std::string& target, auto build,
                 auto probe) {
    const auto start = Clock::now();
    const auto memory = build();
    const double build_ns = ns_since(start, keys);
    const uint64_t bytes = memory();
    uint64_t sink = 0;
    IndexPicker pick(keys);
    auto t = Clock::now();
    for (uint64_t i = 0; i < kTimedProbes; i++) sink += probe(Mix(pick.Next()));
    const double present_ns = ns_since(t, kTimedProbes);
    if (sink != kTimedProbes) {
      std::fprintf(stderr, "%s: false negative\n", name);
      std::abort();
    }
    t = Clock::now();
    for (uint64_t i = 0; i < kTimedProbes; i++) {
      sink += probe(Mix(pick.Next() + kAbsentOffset));
    }
    const double absent_ns = ns_since(t, kTimedProbes);
    uint64_t positives = 0;
    for (uint64_t i = 0; i < kFpProbes; i++) {
      positives += probe(Mix(i + 2 * kAbsentOffset));
    }
    std::printf("| %s | %s | %.2f | %.1f | %.1f | %.1f | %.4f%% |\n", name,
                target.c_str(),
                8.0 * static_cast<double>(bytes) / static_cast<double>(keys),
                build_ns, present_ns, absent_ns,
                100.0 * static_cast<double>(positives) / kFpProbes);
    std::fflush(stdout);
  };
  for (double p : {0.01, 0.001}) {
    char target[16];
    std::snprintf(target, sizeof(target), "%g%%", p * 100);
    BloomFilter bloom;
    row(
        "bloom", target,
        [&] {
          bloom = BloomFilter::ForCapacity(keys, p);
          for (uint64_t h : hashes) bloom.AddHash(h);
          return [&] { return bloom.bit_count() / 8; };
        },
        [&](uint64_t h) { return bloom.MightContainHash(h); });
    row(
        "bloom, AddConcurrently", target,
        [&] {
          bloom = BloomFilter::ForCapacity(keys, p);
          for (uint64_t h : hashes) bloom.AddHashConcurrently(h);
          return [&] { return bloom.bit_count() / 8; };
        },
        [&](uint64_t h) { return bloom.MightContainHash(h); });
    for (uint64_t divisor : {1, 10}) {
      ScalableBloomFilter scalable;
      row(
          divisor == 1 ? "scalable, capacity n" : "scalable, capacity n/10",
          target,
          [&] {
            ScalableBloomFilterOptions o;
            o.capacity = keys / divisor;
            o.fp_rate = p;
            if (!ScalableBloomFilter::Create(o, &scalable).ok()) std::abort();
            for (uint64_t h : hashes) {
              if (!scalable.AddHash(h).ok()) std::abort();
            }
            return [&] { return scalable.Info().bytes; };
          },
          [&](uint64_t h) { return scalable.MightContainHash(h); });
    }
    CuckooFilter cuckoo;
    row(
        "cuckoo, 4 slots/bucket", target,
        [&] {
          CuckooFilterOptions o;
          o.capacity = keys;
          o.fp_rate = p;
          if (!CuckooFilter::Create(o, &cuckoo).ok()) std::abort();
          for (uint64_t h : hashes) {
            if (!cuckoo.AddHash(h).ok()) std::abort();
          }
          return [&] { return cuckoo.Info().bytes; };
        },
        [&](uint64_t h) { return cuckoo.MightContainHash(h); });
  }
  for (int bits : {8, 16}) {
    StaticFilter fuse;
    row(
        bits == 8 ? "fuse8 (StaticFilter)" : "fuse16 (StaticFilter)",
        bits == 8 ? "0.39% (fixed)" : "0.0015% (fixed)",
        [&] {
          fuse = StaticFilter::BuildFromHashes(hashes.data(), keys, bits);
          return [&] { return fuse.bytes(); };
        },
        [&](uint64_t h) { return fuse.MightContainHash(h); });
  }
}

}  // namespace
}  // namespace bloomkv

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--probe_table") == 0) {
      bloomkv::PrintProbeTable();
      return 0;
    }
    if (std::strcmp(argv[i], "--standalone_table") == 0) {
      const uint64_t keys =
          i + 1 < argc ? std::strtoull(argv[i + 1], nullptr, 10) : 1000000;
      bloomkv::PrintStandaloneTable(keys);
      return 0;
    }
    if (std::strcmp(argv[i], "--space_table") == 0) {
      const uint64_t keys =
          i + 1 < argc ? std::strtoull(argv[i + 1], nullptr, 10) : 1000000;
      bloomkv::PrintSpaceTable(keys);
      return 0;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
