// What a kept range deletion costs a lookup that finds a value: one
// RangeTombstoneSet::CoveringSequence per set (db/range_tombstones.h). The
// n tombstones lie each between two 7-byte codes and cover none of them, as
// kvbench --range_tombstones issues them; the probes are codes, so each
// lookup searches the fragments and finds nothing, like a hit on a key no
// range deletion touched.
//
//   build/release/bench/range_tombstone_bench --benchmark_min_time=1
//     --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "db/range_tombstones.h"

namespace {

std::vector<std::string> Codes(size_t n, uint64_t seed) {
  static const char kAlphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::mt19937_64 rng(seed);
  std::vector<std::string> codes(n, std::string(7, '0'));
  for (auto& c : codes) {
    for (char& ch : c) ch = kAlphabet[rng() % 62];
  }
  return codes;
}

void BM_CoveringSequence(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<bloomkv::RangeTombstone> tombstones;
  bloomkv::SequenceNumber seq = 1;
  for (const std::string& c : Codes(n, 1)) {
    tombstones.push_back({c + '\x01', c + '\x02', seq++});
  }
  const bloomkv::RangeTombstoneSet set(std::move(tombstones));
  const std::vector<std::string> probes = Codes(1 << 16, 2);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        set.CoveringSequence(probes[i++ & (probes.size() - 1)], seq));
  }
}
BENCHMARK(BM_CoveringSequence)->Arg(1)->Arg(100)->Arg(10000)->Arg(1000000);

}  // namespace

BENCHMARK_MAIN();
