// Lookups of absent keys in a store shaped as an application leaves it
// (flushed, background compaction settled, several levels and a few level-0
// segments, never a manual compaction), with the filter memory spread
// uniformly over the segments and by FilterAllocation::kMinimizeFalsePositives
// at the same average bits per key.
//
// The per-level allocation aims at a grown tree; in a young one the levels
// written first keep their bits, so the memory it actually spends can differ
// a little from the average asked for. The third arm, "uniform-matched",
// spreads exactly the memory the tuned store spends uniformly, for a
// comparison at equal filter memory.
//
// Each store is built once per (allocation, bits per key) and reused by the
// repetitions. Counters per lookup: data blocks read, filter false
// positives; per store: filter bits per entry actually spent.
//
// Run (about two minutes at the default one million entries):
//   build/release/bench/filter_allocation_bench --benchmark_min_time=1
//     --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
// (one command line)
// BLOOMKV_BENCH_NUM=N changes the number of entries.
// Thread-safety: single-threaded.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "bloomkv/db.h"
#include "bloomkv/options.h"

namespace bloomkv {
namespace {

constexpr char kAlphabet[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Short code number i: stored codes end in an even digit of the last
// character's alphabet index, absent ones in an odd one, so every absent
// code lies inside the segments' key ranges.
std::string Code(uint64_t i, bool present) {
  uint64_t x = Mix64(i);
  std::string s(7, '0');
  for (int c = 0; c < 6; c++) {
    s[c] = kAlphabet[x % 62];
    x /= 62;
  }
  s[6] = kAlphabet[2 * (x % 31) + (present ? 0 : 1)];
  return s;
}

uint64_t NumEntries() {
  const char* env = std::getenv("BLOOMKV_BENCH_NUM");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 1'000'000;
}

bool CompactionSettled(DB* db) {
  // "0" once no level's compaction score is >= 1 and nothing runs: decided
  // from the exact sizes, where the levels table's columns are rounded.
  std::string pending;
  return !db->GetProperty("bloomkv.compaction-pending", &pending) ||
         pending == "0";
}

struct Store {
  ~Store() {
    db.reset();
    std::filesystem::remove_all(dir);
  }
  std::string dir;
  std::unique_ptr<DB> db;
  double filter_bits_per_entry = 0;
  std::string levels;
};

// Arms of the benchmark.
enum Arm : int { kUniform = 0, kMinimizeFp = 1, kUniformMatched = 2 };

const char* ArmName(int arm) {
  switch (arm) {
    case kUniform:
      return "uniform";
    case kMinimizeFp:
      return "minimize-fp";
    default:
      return "uniform-matched";
  }
}

Store* GetStore(int arm, int bits_per_key) {
  static std::map<std::pair<int, int>, std::unique_ptr<Store>> stores;
  // The matched arm needs the tuned store's measured bits per entry.
  const double bits =
      arm == kUniformMatched
          ? GetStore(kMinimizeFp, bits_per_key)->filter_bits_per_entry
          : bits_per_key;
  auto& slot = stores[{arm, bits_per_key}];
  if (slot != nullptr) return slot.get();
  slot = std::make_unique<Store>();
  Store* store = slot.get();
  store->dir = (std::filesystem::temp_directory_path() /
                ("bloomkv-filter-allocation-" + std::to_string(getpid()) + "-" +
                 std::to_string(arm) + "-" + std::to_string(bits_per_key)))
                   .string();
  std::filesystem::remove_all(store->dir);
  Options options;
  options.create_if_missing = true;
  options.filter_policy = NewBloomFilterPolicy(bits);
  options.filter_allocation = arm == kMinimizeFp
                                  ? FilterAllocation::kMinimizeFalsePositives
                                  : FilterAllocation::kUniform;
  Status s = DB::Open(options, store->dir, &store->db);
  if (!s.ok()) {
    std::fprintf(stderr, "open: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  const uint64_t n = NumEntries();
  for (uint64_t i = 0; i < n && s.ok(); i++) {
    const std::string code = Code(i, true);
    s = store->db->Put(WriteOptions(), code, "https://example.com/l/" + code);
  }
  if (s.ok()) s = store->db->Flush();
  if (!s.ok()) {
    std::fprintf(stderr, "fill: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  while (!CompactionSettled(store->db.get())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  double filter_bits = 0, entries = 0;
  for (const SegmentInfo& i : store->db->GetSegmentInfo()) {
    filter_bits += 8.0 * static_cast<double>(i.filter_bytes);
    entries += static_cast<double>(i.num_entries);
  }
  store->filter_bits_per_entry = entries > 0 ? filter_bits / entries : 0;
  store->db->GetProperty("bloomkv.levels", &store->levels);
  std::fprintf(stderr, "%s store, %.2f bits/key asked:\n%s", ArmName(arm), bits,
               store->levels.c_str());
  return store;
}

void BM_AbsentKeyLookups(benchmark::State& state) {
  const int arm = static_cast<int>(state.range(0));
  Store* store = GetStore(arm, static_cast<int>(state.range(1)));
  DB* db = store->db.get();
  const DbStats before = db->GetStats();
  std::string value;
  uint64_t i = 0, lookups = 0;
  for (auto _ : state) {
    Status s = db->Get(ReadOptions(), Code(i++, false), &value);
    if (!s.IsNotFound()) {
      state.SkipWithError("absent code found or error");
      break;
    }
    lookups++;
  }
  const DbStats after = db->GetStats();
  const double n = static_cast<double>(lookups);
  state.counters["blocks_per_miss"] =
      static_cast<double>(after.data_blocks_read - before.data_blocks_read) / n;
  state.counters["fp_per_miss"] =
      static_cast<double>(after.filter_false_positives -
                          before.filter_false_positives) /
      n;
  state.counters["filter_bits_per_entry"] = store->filter_bits_per_entry;
  state.SetItemsProcessed(static_cast<int64_t>(lookups));
  state.SetLabel(ArmName(arm));
}

BENCHMARK(BM_AbsentKeyLookups)
    ->ArgNames({"arm", "bits"})
    ->ArgsProduct({{kUniform, kMinimizeFp, kUniformMatched}, {10, 5}});

}  // namespace
}  // namespace bloomkv

BENCHMARK_MAIN();
