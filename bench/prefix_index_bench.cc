// The searches a point lookup runs over eight-byte key prefixes (a
// segment's index separators), as many arrays as a store has segments, each
// probed at random as lookups of random short codes probe them: a binary
// search (std::equal_range) against PrefixIndex's bucket table. Arg 0:
// segments; arg 1: entries per segment (data blocks). 236 x 1024 is a
// compacted 10^7-link store, 2,360 x 1,024 one of 10^8. The next probe's
// place depends on the answer (the added term is always 0), so searches
// run one after the other, as in a lookup, where the block read waits for
// the index search, instead of overlapping in the CPU.
//
//   build/release/bench/prefix_index_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "util/prefix_index.h"

namespace {

uint64_t ShortCodePrefix(std::mt19937_64* rng) {
  static constexpr char kAlphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  uint64_t x = 0;
  for (int i = 0; i < 7; i++) {
    x = x << 8 | static_cast<uint8_t>(kAlphabet[(*rng)() % 62]);
  }
  return x << 8;
}

struct Arrays {
  std::vector<std::vector<uint64_t>> sorted;
  std::vector<bloomkv::PrefixIndex> indexes;
  std::vector<std::pair<uint32_t, uint64_t>> probes;  // (array, prefix)

  Arrays(size_t segments, size_t entries) {
    std::mt19937_64 rng(1);
    for (size_t s = 0; s < segments; s++) {
      std::vector<uint64_t> v(entries);
      for (uint64_t& x : v) x = ShortCodePrefix(&rng);
      std::sort(v.begin(), v.end());
      indexes.emplace_back(v);
      sorted.push_back(std::move(v));
    }
    for (int i = 0; i < (1 << 20); i++) {
      probes.emplace_back(static_cast<uint32_t>(rng() % segments),
                          ShortCodePrefix(&rng));
    }
  }
};

void BM_EqualRange(benchmark::State& state) {
  const Arrays a(static_cast<size_t>(state.range(0)),
                 static_cast<size_t>(state.range(1)));
  size_t i = 0, sum = 0;
  for (auto _ : state) {
    const auto& [array, want] = a.probes[i & ((1 << 20) - 1)];
    const std::vector<uint64_t>& v = a.sorted[array];
    const auto [lo, hi] = std::equal_range(v.begin(), v.end(), want);
    sum += static_cast<size_t>(lo - v.begin());
    i += 1 + static_cast<size_t>(hi - lo) / (v.size() + 1);  // see below
  }
  benchmark::DoNotOptimize(sum);
}

void BM_PrefixIndex(benchmark::State& state) {
  const Arrays a(static_cast<size_t>(state.range(0)),
                 static_cast<size_t>(state.range(1)));
  size_t i = 0, sum = 0;
  for (auto _ : state) {
    const auto& [array, want] = a.probes[i & ((1 << 20) - 1)];
    const auto [lo, hi] = a.indexes[array].EqualRange(want);
    sum += lo;
    i += 1 + (hi - lo) / (a.indexes[array].size() + 1);
  }
  benchmark::DoNotOptimize(sum);
}

BENCHMARK(BM_EqualRange)
    ->Args({48, 1024})
    ->Args({236, 1024})
    ->Args({2360, 1024});
BENCHMARK(BM_PrefixIndex)
    ->Args({48, 1024})
    ->Args({236, 1024})
    ->Args({2360, 1024});

}  // namespace

BENCHMARK_MAIN();
