// Micro-benchmarks of the segment layer: seeking inside one 4 KiB block,
// point lookups (hit, and miss with and without a filter) against a warm
// in-memory segment whose blocks are all in the block cache, and hits that
// read their block from a segment file (mapped or with pread).
//
// When LevelDB was found at configure time, BM_LevelDbTableGetHit runs the
// same cached hits on a leveldb::Table built from the same keys and values
// (4 KiB blocks, bloom filter at 10 bits/key, 8 MiB LRU block cache), so the
// two can be compared from one binary on one machine.
//
// Run: ./build-bench/bench/segment_bench --benchmark_min_time=1
//          --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
// Instructions per lookup: run under valgrind --tool=callgrind with
// --toggle-collect='bloomkv::SegmentReader::Get*' (or '*LevelDbLookup*') and
// divide the collected instructions by the number of calls.
// Thread-safety: single-threaded benchmarks.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bloomkv/env.h"
#include "bloomkv/filter_policy.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "table/internal_key.h"
#include "table/segment_builder.h"
#include "table/segment_reader.h"
#include "util/cache.h"
#include "util/coding.h"
#include "util/hash.h"

#ifdef BLOOMKV_BENCH_HAVE_LEVELDB
#include <leveldb/cache.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/table_builder.h>
#endif

namespace bloomkv {
namespace {

// The "with filter" benchmarks use the built-in bloom filter.
std::shared_ptr<const FilterPolicy> BenchFilterPolicy() {
  return NewBloomFilterPolicy(10);
}

class StringSink final : public WritableFile {
 public:
  explicit StringSink(std::string* dst) : dst_(dst) {}
  Status Append(const Slice& d) override {
    dst_->append(d.data(), d.size());
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }

 private:
  std::string* dst_;
};

class StringSource final : public RandomAccessFile {
 public:
  explicit StringSource(const std::string* s) : s_(s) {}
  Status Read(uint64_t offset, size_t n, Slice* result,
              char* scratch) const override {
    const size_t avail =
        offset > s_->size() ? 0 : s_->size() - static_cast<size_t>(offset);
    const size_t len = std::min(n, avail);
    if (len > 0) std::memcpy(scratch, s_->data() + offset, len);
    *result = Slice(scratch, len);
    return Status::OK();
  }

 private:
  const std::string* s_;
};

constexpr int kNumKeys = 200000;

// Present keys are even, absent keys odd, so misses fall inside the key
// range (no shortcut from range checks).
std::string UserKey(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "user%012d", i);
  return buf;
}

std::string ValueFor(int i) {
  return "https://example.com/" + std::to_string(i);
}

// The keys looked up by the point-lookup benchmarks: 4096 random present
// (even) or absent (odd) keys, the same for every benchmark.
std::vector<std::string> LookupKeys(bool hit) {
  std::vector<std::string> keys;
  std::mt19937 rng(42);
  for (int i = 0; i < 4096; i++) {
    const int k = static_cast<int>(rng() % kNumKeys) * 2 + (hit ? 0 : 1);
    keys.push_back(UserKey(k));
  }
  return keys;
}

void BM_BlockSeek(benchmark::State& state) {
  BlockBuilder builder(16);
  std::vector<std::string> keys;
  for (int i = 0; builder.CurrentSizeEstimate() < 4000; i++) {
    keys.push_back(MakeInternalKey(UserKey(i * 2), 1, ValueType::kValue));
    builder.Add(keys.back(), std::string(20, 'v'));
  }
  std::shared_ptr<const Block> block;
  if (!Block::Parse(builder.Finish().ToString(), "bench.seg", 0, &block).ok()) {
    state.SkipWithError("bad block");
    return;
  }
  BlockIter it(block.get());
  size_t i = 0;
  for (auto _ : state) {
    it.Seek(keys[(i++ * 7919) % keys.size()]);
    benchmark::DoNotOptimize(it.Valid());
  }
  state.counters["entries"] = static_cast<double>(keys.size());
}
BENCHMARK(BM_BlockSeek);

// One warm segment per configuration: built once, every block cached.
struct WarmSegment {
  std::string file;
  std::unique_ptr<Cache> cache;
  std::unique_ptr<SegmentReader> reader;

  explicit WarmSegment(bool with_filter) {
    SegmentBuilderOptions bo;
    if (with_filter) bo.filter_policy = BenchFilterPolicy();
    StringSink sink(&file);
    SegmentBuilder builder(bo, &sink);
    for (int i = 0; i < kNumKeys; i++) {
      const Status s = builder.Add(
          MakeInternalKey(UserKey(i * 2), static_cast<SequenceNumber>(i + 1),
                          ValueType::kValue),
          ValueFor(i));
      if (!s.ok()) std::abort();
    }
    if (!builder.Finish().ok()) std::abort();
    cache = std::make_unique<Cache>(size_t{256} << 20);
    SegmentReaderOptions ro;
    ro.filter_policy = bo.filter_policy;
    ro.block_cache = cache.get();
    if (!SegmentReader::Open(ro, "bench.seg",
                             std::make_unique<StringSource>(&file), file.size(),
                             &reader)
             .ok()) {
      std::abort();
    }
    auto it = reader->NewIterator(SegmentReadOptions(), nullptr);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
  }
};

WarmSegment& Segment(bool with_filter) {
  static WarmSegment plain(false);
  static WarmSegment filtered(true);
  return with_filter ? filtered : plain;
}

void RunGets(benchmark::State& state, bool with_filter, bool hit) {
  WarmSegment& seg = Segment(with_filter);
  // Precompute keys and hashes: the DB hashes once per Get, outside the
  // segment.
  const std::vector<std::string> keys = LookupKeys(hit);
  std::vector<uint64_t> hashes;
  for (const std::string& k : keys) hashes.push_back(KeyHash(k));
  const SegmentReadOptions ro;
  SegmentReadStats stats;
  std::string value;
  size_t i = 0;
  for (auto _ : state) {
    const size_t j = i++ & 4095;
    LookupResult r;
    if (!seg.reader
             ->Get(ro, keys[j], hashes[j], kMaxSequenceNumber, &r, &value,
                   &stats)
             .ok()) {
      state.SkipWithError("Get failed");
      return;
    }
    if (hit && r != LookupResult::kFound) {
      state.SkipWithError("a present key was not found");
      return;
    }
    benchmark::DoNotOptimize(r);
  }
  state.counters["blocks_read/op"] =
      benchmark::Counter(static_cast<double>(stats.data_blocks_read),
                         benchmark::Counter::kAvgIterations);
  state.counters["cache_hits/op"] =
      benchmark::Counter(static_cast<double>(stats.cache_hits),
                         benchmark::Counter::kAvgIterations);
}

void BM_SegmentGetHit(benchmark::State& state) { RunGets(state, true, true); }
void BM_SegmentGetMissNoFilter(benchmark::State& state) {
  RunGets(state, false, false);
}
void BM_SegmentGetMissFilter(benchmark::State& state) {
  RunGets(state, true, false);
}
BENCHMARK(BM_SegmentGetHit);
BENCHMARK(BM_SegmentGetMissNoFilter);
BENCHMARK(BM_SegmentGetMissFilter);

// Hits that read their block from a segment file in the page cache, as
// most hits do when the data outgrows the block cache: a 1 MiB block cache
// over a ~20 MiB segment, so ~95% of the lookups read, checksum and parse a
// block (and decompress it under LZ4). Arguments: mapped reads (1) or pread
// (0); LZ4 (1) or no compression (0). Values are 60-byte URL-like strings
// with random characters, which LZ4 shrinks by about a third, as it does the
// short links of kvbench.
struct FileSegment {
  std::string path;
  std::unique_ptr<Env> env;
  std::unique_ptr<Cache> cache;
  std::unique_ptr<SegmentReader> reader;

  FileSegment(bool mmap, bool lz4) {
    SegmentBuilderOptions bo;
    bo.filter_policy = BenchFilterPolicy();
    bo.compression = lz4 ? CompressionType::kLZ4 : CompressionType::kNone;
    std::string file;
    StringSink sink(&file);
    SegmentBuilder builder(bo, &sink);
    std::mt19937 rng(7);
    static const char kChars[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int i = 0; i < kNumKeys; i++) {
      std::string value = "https://example.com/";
      for (int j = 0; j < 40; j++) value.push_back(kChars[rng() % 62]);
      const Status s = builder.Add(
          MakeInternalKey(UserKey(i * 2), static_cast<SequenceNumber>(i + 1),
                          ValueType::kValue),
          value);
      if (!s.ok()) std::abort();
    }
    if (!builder.Finish().ok()) std::abort();
    char dir[] = "/tmp/segment_bench-XXXXXX";
    if (::mkdtemp(dir) == nullptr) std::abort();
    path = std::string(dir) + "/000001.seg";
    if (!WriteStringToFile(Env::Default(), file, path, false).ok()) {
      std::abort();
    }
    EnvOptions eo;
    eo.use_mmap_reads = mmap;
    env = NewPosixEnv(eo);
    cache = std::make_unique<Cache>(size_t{1} << 20);
    SegmentReaderOptions ro;
    ro.filter_policy = bo.filter_policy;
    ro.block_cache = cache.get();
    std::unique_ptr<RandomAccessFile> f;
    if (!env->NewRandomAccessFile(path, &f).ok() ||
        !SegmentReader::Open(ro, path, std::move(f), file.size(), &reader)
             .ok()) {
      std::abort();
    }
  }
  ~FileSegment() {
    reader.reset();
    Env::Default()->RemoveFile(path).PermitUncheckedError();
    Env::Default()
        ->RemoveDir(path.substr(0, path.rfind('/')))
        .PermitUncheckedError();
  }
};

void BM_SegmentGetHitFromFile(benchmark::State& state) {
  const bool mmap = state.range(0) != 0;
  const bool lz4 = state.range(1) != 0;
  FileSegment seg(mmap, lz4);
  const std::vector<std::string> keys = LookupKeys(true);
  std::vector<uint64_t> hashes;
  for (const std::string& k : keys) hashes.push_back(KeyHash(k));
  const SegmentReadOptions ro;
  SegmentReadStats stats;
  std::string value;
  size_t i = 0;
  for (auto _ : state) {
    const size_t j = i++ & 4095;
    LookupResult r;
    if (!seg.reader
             ->Get(ro, keys[j], hashes[j], kMaxSequenceNumber, &r, &value,
                   &stats)
             .ok() ||
        r != LookupResult::kFound) {
      state.SkipWithError("a present key was not found");
      return;
    }
  }
  state.counters["blocks_read/op"] =
      benchmark::Counter(static_cast<double>(stats.data_blocks_read),
                         benchmark::Counter::kAvgIterations);
  state.counters["bytes_read/op"] =
      benchmark::Counter(static_cast<double>(stats.bytes_read),
                         benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_SegmentGetHitFromFile)
    ->ArgNames({"mmap", "lz4"})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Args({0, 0})
    ->Args({1, 0});

#ifdef BLOOMKV_BENCH_HAVE_LEVELDB
// The same segment as a leveldb::Table. Keys carry an 8-byte trailer like
// ours (so both compare 24-byte keys); every user key occurs once and all
// have the same length, so the bytewise order matches ours, and a seek for
// the user key followed by eight zero bytes lands on its entry.
class LevelDbSink final : public leveldb::WritableFile {
 public:
  explicit LevelDbSink(std::string* dst) : dst_(dst) {}
  leveldb::Status Append(const leveldb::Slice& d) override {
    dst_->append(d.data(), d.size());
    return leveldb::Status::OK();
  }
  leveldb::Status Close() override { return leveldb::Status::OK(); }
  leveldb::Status Flush() override { return leveldb::Status::OK(); }
  leveldb::Status Sync() override { return leveldb::Status::OK(); }

 private:
  std::string* dst_;
};

// Copies into the caller's scratch, as a file read does: LevelDB then caches
// the block (it never caches blocks served straight from a memory mapping).
class LevelDbSource final : public leveldb::RandomAccessFile {
 public:
  explicit LevelDbSource(const std::string* s) : s_(s) {}
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* scratch) const override {
    const size_t avail =
        offset > s_->size() ? 0 : s_->size() - static_cast<size_t>(offset);
    const size_t len = std::min(n, avail);
    if (len > 0) std::memcpy(scratch, s_->data() + offset, len);
    *result = leveldb::Slice(scratch, len);
    return leveldb::Status::OK();
  }

 private:
  const std::string* s_;
};

constexpr size_t kLevelDbCacheBytes = size_t{8} << 20;
constexpr int kLevelDbBloomBitsPerKey = 10;

struct WarmLevelDbTable {
  std::string file;
  std::unique_ptr<const leveldb::FilterPolicy> policy;
  std::unique_ptr<leveldb::Cache> cache;
  LevelDbSource source{&file};
  std::unique_ptr<leveldb::Table> table;
  leveldb::Options options;

  WarmLevelDbTable() {
    policy.reset(leveldb::NewBloomFilterPolicy(kLevelDbBloomBitsPerKey));
    cache.reset(leveldb::NewLRUCache(kLevelDbCacheBytes));
    options.filter_policy = policy.get();
    options.block_cache = cache.get();
    options.block_size = 4096;
    options.block_restart_interval = 16;
    {
      LevelDbSink sink(&file);
      leveldb::TableBuilder builder(options, &sink);
      for (int i = 0; i < kNumKeys; i++) {
        builder.Add(
            MakeInternalKey(UserKey(i * 2), static_cast<SequenceNumber>(i + 1),
                            ValueType::kValue),
            ValueFor(i));
      }
      if (!builder.Finish().ok()) std::abort();
    }
    leveldb::Table* t = nullptr;
    if (!leveldb::Table::Open(options, &source, file.size(), &t).ok()) {
      std::abort();
    }
    table.reset(t);
    std::unique_ptr<leveldb::Iterator> it(
        table->NewIterator(leveldb::ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
  }
};

// One cached hit through LevelDB's public Table API: a seek on a table
// iterator. The iterator is reused across lookups (cheaper than a fresh
// one, as LevelDB's own Get uses), so LevelDB is not handicapped.
__attribute__((noinline)) bool LevelDbLookup(leveldb::Iterator* it,
                                             const std::string& target,
                                             size_t user_key_size,
                                             std::string* value) {
  it->Seek(target);
  if (!it->Valid() || it->key().size() < user_key_size ||
      std::memcmp(it->key().data(), target.data(), user_key_size) != 0) {
    return false;
  }
  value->assign(it->value().data(), it->value().size());
  return true;
}

void BM_LevelDbTableGetHit(benchmark::State& state) {
  static WarmLevelDbTable warm;
  const std::vector<std::string> keys = LookupKeys(true);
  std::vector<std::string> targets;
  for (const std::string& k : keys) targets.push_back(k + std::string(8, '\0'));
  std::unique_ptr<leveldb::Iterator> it(
      warm.table->NewIterator(leveldb::ReadOptions()));
  std::string value;
  size_t i = 0;
  for (auto _ : state) {
    const size_t j = i++ & 4095;
    if (!LevelDbLookup(it.get(), targets[j], keys[j].size(), &value)) {
      state.SkipWithError("LevelDB lookup missed a present key");
      return;
    }
    benchmark::DoNotOptimize(value.data());
  }
}
BENCHMARK(BM_LevelDbTableGetHit);
#endif  // BLOOMKV_BENCH_HAVE_LEVELDB

}  // namespace
}  // namespace bloomkv

BENCHMARK_MAIN();
