// The hashes on bloomkv's hot paths against libxxhash's plain XXH3: a
// block checksum for every block read from a file, a key hash for every
// lookup. util/hash.cc computes checksums with the library's run-time
// dispatch when CMake found it (BLOOMKV_HAVE_XXH3_DISPATCH; the plain entry
// point of Debian's build is not vectorized) and key hashes with the plain
// one, faster on a few bytes. Both give the same values (HashTest).
//
//   build/release/bench/hash_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>
#include <xxhash.h>

#include <string>

#include "util/hash.h"

namespace {

std::string Buffer(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i++) s[i] = static_cast<char>(i * 131 + 7);
  return s;
}

void BM_BlockChecksum(benchmark::State& state) {
  const std::string data = Buffer(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(bloomkv::BlockChecksum(data.data(), data.size()));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0));
}
BENCHMARK(BM_BlockChecksum)->Arg(7)->Arg(64)->Arg(2900)->Arg(4096);

void BM_KeyHash(benchmark::State& state) {
  const std::string data = Buffer(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(bloomkv::KeyHash(data));
}
BENCHMARK(BM_KeyHash)->Arg(7)->Arg(64);

void BM_Xxh3Plain(benchmark::State& state) {
  const std::string data = Buffer(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(XXH3_64bits(data.data(), data.size()));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0));
}
BENCHMARK(BM_Xxh3Plain)->Arg(7)->Arg(64)->Arg(2900)->Arg(4096);

}  // namespace

BENCHMARK_MAIN();
