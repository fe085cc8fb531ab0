// Engine: the storage engine under test, as kvbench drives it. One adapter
// per engine (bloomkv, and LevelDB, RocksDB and LMDB when their development
// packages were found at configure time) maps it onto the engine's own API
// and counters, so every workload runs unchanged against each.
//
// Counters come from two places. Every adapter runs its engine on a counting
// file-system wrapper, so `file_*` counts are comparable across engines: a
// read is one call that reached a file (a data block that missed the block
// cache, or an index/filter block when a table is opened). The engine's own
// statistics fill the rest where it has them; a field is std::nullopt where
// it does not (see each adapter's file comment for what "data blocks read"
// means there).
//
// Thread-safety: Put/Get/Delete/Scan and Counters may be called from many
// threads at once; Open, Settle and the destructor need exclusive access.
#ifndef BLOOMKV_BENCH_KVBENCH_ENGINE_H_
#define BLOOMKV_BENCH_KVBENCH_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv::bench {

struct EngineOptions {
  double bits_per_key = 10;  // 0: no filters
  // bloomkv only: the filter of compaction output from deep_filter_level
  // down (Options::deep_filter_policy): "" the library's default (binary
  // fuse8 for a bloom filter of 10 to 12 bits/key), "bloom" (bloom
  // everywhere), "fuse8" or "fuse16" (binary fuse); and the allocation of
  // filter memory across levels (Options::filter_allocation).
  std::string deep_filter;
  int deep_filter_level = 1;
  bool minimize_filter_fp = false;
  size_t block_cache_bytes = 8 << 20;
  // bloomkv only: Options::row_cache_capacity (0: none).
  size_t row_cache_bytes = 0;
  // bloomkv only: Options::answer_cache_capacity (-1: the library's
  // default).
  int64_t answer_cache_bytes = -1;
  size_t write_buffer_bytes = 4 << 20;
  // Table files an engine keeps open at once; 0: the engine's default.
  int max_open_files = 0;
  // bloomkv only: Options::filter_and_index_memory_limit (0: none).
  uint64_t meta_limit_bytes = 0;
  // Every write synced to its log before it returns (WriteOptions::sync).
  bool sync_writes = false;
  // bloomkv only: read segment files through memory mappings (1), with
  // pread (0), or as the engine's default Env does (-1).
  int mmap_reads = -1;
  // bloomkv only: the compression of the levels below level 0
  // (Options::compression): "lz4-values" (the library's default), "lz4",
  // "zstd" or "none".
  std::string compression = "lz4-values";
  // LMDB only: the address space of its map (mdb_env_set_mapsize), in GiB;
  // the file grows only as pages are written. Smaller for valgrind, which
  // cannot reserve 1 TiB.
  uint64_t lmdb_map_gib = 1024;
  // Open the store this engine filled before instead of a fresh one.
  bool reopen = false;
};

// Monotonic counters since Open.
struct EngineCounters {
  // Counted by the adapter's file-system wrapper (every engine).
  uint64_t file_reads = 0;  // random-access read calls
  uint64_t file_read_bytes = 0;
  uint64_t file_bytes_written = 0;  // every byte appended to any file

  // The engine's own statistics, where it keeps them.
  std::optional<uint64_t> gets;
  std::optional<uint64_t> segments_consulted;
  std::optional<uint64_t> filter_negatives;
  std::optional<uint64_t> filter_false_positives;
  std::optional<uint64_t> data_blocks_read;
  std::optional<uint64_t> data_bytes_read;
};

// The filters of the live files, from the engine's per-file records.
struct FilterSummary {
  uint64_t files = 0;
  uint64_t files_at_level0 = 0;
  // Bytes of the files' filters (for bloomkv, in memory or, past its
  // filter_and_index_memory_limit, paged from the files).
  std::optional<uint64_t> filter_bytes;
  // Filter and index bytes held in memory, where the engine reports them
  // (RocksDB's table readers; bloomkv's "bloomkv.resource-usage", where the
  // build has that property).
  std::optional<uint64_t> filter_and_index_bytes;
  // Filter bits per entry of the files that have a filter.
  std::optional<double> bits_per_key;
  // Key-weighted mean of each file's theoretical false-positive rate.
  std::optional<double> theoretical_fp_rate;
  // False positives among lookups of keys a file does not hold, since Open.
  std::optional<double> measured_fp_rate;
  // The engine's own table of levels with their filters, where it has one
  // (bloomkv: "bloomkv.levels").
  std::string levels;
};

class Engine {
 public:
  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  virtual ~Engine() = default;

  // "bloomkv", "leveldb", "rocksdb" or "lmdb".
  virtual const char* Name() const = 0;
  // One line: filter, block cache, compression and anything else a reader
  // of the results needs to know about this configuration.
  virtual std::string Describe() const = 0;

  virtual Status Put(const Slice& key, const Slice& value) = 0;
  // Applies all pairs atomically.
  virtual Status PutBatch(
      const std::vector<std::pair<std::string, std::string>>& pairs) = 0;
  virtual Status Delete(const Slice& key) = 0;
  // Deletes every key in [begin, end); NotSupported where the engine has
  // no range deletion (only bloomkv's is measured).
  virtual Status DeleteRange(const Slice& begin, const Slice& end);
  // Range deletions the engine still keeps, where it reports them.
  virtual std::optional<uint64_t> KeptRangeTombstones() { return std::nullopt; }
  // OK and *found = false when the key is absent.
  virtual Status Get(const Slice& key, std::string* value, bool* found) = 0;
  // Get for a batch, through the engine's batched lookup where it has one
  // (bloomkv, RocksDB); the default calls Get per key (LevelDB has none).
  // values and found are resized to keys.size().
  virtual Status MultiGet(const std::vector<Slice>& keys,
                          std::vector<std::string>* values,
                          std::vector<bool>* found);
  // Reads up to n entries from the first key >= start; *count gets how many.
  virtual Status Scan(const Slice& start, size_t n, uint64_t* count) = 0;

  // Writes the memtable out and waits for it.
  virtual Status Flush() = 0;
  // Compacts the whole key space; NotSupported where the engine cannot.
  virtual Status CompactAll() = 0;
  // Waits until the engine has no flush or compaction queued or running,
  // as an application would find it some time after its last write.
  // IOError when it is still busy after timeout_seconds.
  virtual Status WaitForCompactions(double timeout_seconds) = 0;
  // Live table files per level, level 0 first, up to the deepest level the
  // engine has (trailing empty levels included).
  virtual std::vector<int> FilesPerLevel() = 0;

  virtual EngineCounters Counters() = 0;
  virtual FilterSummary Filters() = 0;
  // The engine's own estimate of its memory use, where it has one.
  virtual std::optional<uint64_t> MemoryUsage() = 0;
};

// The shape a store is brought to before reads are measured.
enum class SettleMode {
  // Memtable flushed, then background compaction left to finish on its own:
  // level-0 files and several levels, as an application leaves the store.
  kBackground,
  // Memtable flushed and the whole key space compacted by hand: the
  // flattering shape (one sorted run at the bottom level).
  kCompact,
};

// Brings a freshly written store to the shape reads are measured in. An
// engine without a full-range compaction is measured as flushed and settled.
Status SettleStore(Engine& engine, SettleMode mode);

// Calls settled() every few milliseconds until it returns true: OK, or
// IOError naming `what` after timeout_seconds.
Status PollUntil(const std::function<bool()>& settled, double timeout_seconds,
                 const std::string& what);

// Waits until this process is idle: under 5% of one core used over a
// 100 ms window, i.e. no engine's background thread (compaction, or
// LevelDB's compactions triggered by its own reads) is running. Before
// every timed phase, so that one store's leftover work does not take a
// core from another store's measurement. Sets *waited_seconds; IOError
// after timeout_seconds.
Status WaitUntilProcessIdle(double timeout_seconds, double* waited_seconds);

// How long SettleStore waits for background compaction before giving up.
inline constexpr double kSettleTimeoutSeconds = 1800;

// Sets options->max_open_files to n when the options type has that member
// (bloomkv's Options gains it separately); returns whether it did. Lets one
// adapter compile against an engine version with or without the option.
template <typename EngineOptionsType>
bool SetMaxOpenFilesIfSupported(EngineOptionsType* options, int n) {
  if constexpr (requires { options->max_open_files; }) {
    options->max_open_files = static_cast<decltype(options->max_open_files)>(n);
    return true;
  } else {
    return false;
  }
}

// Opens (creating) a store of the named engine in the empty directory
// `path`. NotSupported for an engine this build does not include.
Status OpenEngine(const std::string& name, const EngineOptions& options,
                  const std::string& path, std::unique_ptr<Engine>* engine);

// The engines this build includes, bloomkv first.
std::vector<std::string> AvailableEngines();

// Adapters; each in its own file.
Status OpenBloomkvEngine(const EngineOptions& options, const std::string& path,
                         std::unique_ptr<Engine>* engine);
#ifdef BLOOMKV_BENCH_HAVE_LEVELDB
Status OpenLevelDbEngine(const EngineOptions& options, const std::string& path,
                         std::unique_ptr<Engine>* engine);
#endif
#ifdef BLOOMKV_BENCH_HAVE_ROCKSDB
Status OpenRocksDbEngine(const EngineOptions& options, const std::string& path,
                         std::unique_ptr<Engine>* engine);
#endif
#ifdef BLOOMKV_BENCH_HAVE_LMDB
Status OpenLmdbEngine(const EngineOptions& options, const std::string& path,
                      std::unique_ptr<Engine>* engine);
#endif

}  // namespace bloomkv::bench

#endif  // BLOOMKV_BENCH_KVBENCH_ENGINE_H_
