// The LevelDB adapter, built when libleveldb-dev was found. Filters: LevelDB's
// own bloom filter (NewBloomFilterPolicy) at the same bits per key, rounded
// to an integer as its API takes; same block cache capacity; its default
// compression (Snappy) and 4 KiB blocks.
//
// LevelDB keeps no per-lookup counters, so "data blocks read" is the number
// of RandomAccessFile::Read calls counted by a leveldb::EnvWrapper: data
// blocks fetched from table files, plus the footer, index and filter reads
// of a table the first time the table cache opens it (a handful per file).
// Note that LevelDB's POSIX Env maps table files into memory (up to 1000 of
// them): a Read copies nothing, so the process's rchar does not see these
// reads (compressed blocks are still decompressed into the block cache; a
// block stored uncompressed is served from the mapping and never cached).
// Filter outcomes and filter memory are not available.
//
// Thread-safety: see engine.h; leveldb::DB is thread-safe.
#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/write_batch.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "bench/kvbench/engine.h"

namespace bloomkv::bench {
namespace {

Status FromLevelDb(const leveldb::Status& s) {
  if (s.ok()) return Status::OK();
  if (s.IsNotFound()) return Status::NotFound("leveldb: ", s.ToString());
  return Status::IOError("leveldb: ", s.ToString());
}

class CountingLevelDbEnv : public leveldb::EnvWrapper {
 public:
  CountingLevelDbEnv() : leveldb::EnvWrapper(leveldb::Env::Default()) {}

  leveldb::Status NewRandomAccessFile(const std::string& f,
                                      leveldb::RandomAccessFile** r) override {
    leveldb::Status s = target()->NewRandomAccessFile(f, r);
    if (s.ok()) *r = new CountingFile(*r, this);
    return s;
  }
  leveldb::Status NewWritableFile(const std::string& f,
                                  leveldb::WritableFile** r) override {
    leveldb::Status s = target()->NewWritableFile(f, r);
    if (s.ok()) *r = new CountingWritable(*r, this);
    return s;
  }
  leveldb::Status NewAppendableFile(const std::string& f,
                                    leveldb::WritableFile** r) override {
    leveldb::Status s = target()->NewAppendableFile(f, r);
    if (s.ok()) *r = new CountingWritable(*r, this);
    return s;
  }

  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> read_bytes{0};
  std::atomic<uint64_t> bytes_appended{0};

 private:
  class CountingFile : public leveldb::RandomAccessFile {
   public:
    CountingFile(leveldb::RandomAccessFile* target, CountingLevelDbEnv* env)
        : target_(target), env_(env) {}
    leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                         char* scratch) const override {
      leveldb::Status s = target_->Read(offset, n, result, scratch);
      env_->reads.fetch_add(1, std::memory_order_relaxed);
      if (s.ok()) {
        env_->read_bytes.fetch_add(result->size(), std::memory_order_relaxed);
      }
      return s;
    }

   private:
    const std::unique_ptr<leveldb::RandomAccessFile> target_;
    CountingLevelDbEnv* const env_;
  };

  class CountingWritable : public leveldb::WritableFile {
   public:
    CountingWritable(leveldb::WritableFile* target, CountingLevelDbEnv* env)
        : target_(target), env_(env) {}
    leveldb::Status Append(const leveldb::Slice& data) override {
      leveldb::Status s = target_->Append(data);
      if (s.ok()) {
        env_->bytes_appended.fetch_add(data.size(), std::memory_order_relaxed);
      }
      return s;
    }
    leveldb::Status Close() override { return target_->Close(); }
    leveldb::Status Flush() override { return target_->Flush(); }
    leveldb::Status Sync() override { return target_->Sync(); }

   private:
    const std::unique_ptr<leveldb::WritableFile> target_;
    CountingLevelDbEnv* const env_;
  };
};

class LevelDbEngine : public Engine {
 public:
  explicit LevelDbEngine(const EngineOptions& options) : options_(options) {
    write_options_.sync = options.sync_writes;
  }
  ~LevelDbEngine() override {
    db_.reset();  // before the cache, filter policy and Env it uses
  }

  Status Open(const std::string& path) {
    leveldb::Options o;
    o.create_if_missing = true;
    o.error_if_exists = !options_.reopen;
    o.env = &env_;
    o.write_buffer_size = options_.write_buffer_bytes;
    if (options_.max_open_files > 0) {
      o.max_open_files = options_.max_open_files;
    }
    bits_ = static_cast<int>(std::lround(options_.bits_per_key));
    if (bits_ > 0) {
      filter_.reset(leveldb::NewBloomFilterPolicy(bits_));
      o.filter_policy = filter_.get();
    }
    cache_.reset(leveldb::NewLRUCache(options_.block_cache_bytes));
    o.block_cache = cache_.get();
    leveldb::DB* db = nullptr;
    Status s = FromLevelDb(leveldb::DB::Open(o, path, &db));
    db_.reset(db);
    return s;
  }

  const char* Name() const override { return "leveldb"; }
  std::string Describe() const override {
    return (bits_ > 0 ? "bloom " + std::to_string(bits_) + " bits/key"
                      : std::string("no filter")) +
           ", block cache " + std::to_string(options_.block_cache_bytes >> 20) +
           " MiB, default compression (snappy), 4 KiB blocks, leveled "
           "compaction; table files mmapped" +
           (options_.max_open_files > 0
                ? ", max_open_files " + std::to_string(options_.max_open_files)
                : "");
  }

  Status Put(const Slice& key, const Slice& value) override {
    return FromLevelDb(db_->Put(write_options_, L(key), L(value)));
  }
  Status PutBatch(
      const std::vector<std::pair<std::string, std::string>>& pairs) override {
    leveldb::WriteBatch batch;
    for (const auto& [k, v] : pairs) batch.Put(k, v);
    return FromLevelDb(db_->Write(write_options_, &batch));
  }
  Status Delete(const Slice& key) override {
    return FromLevelDb(db_->Delete(write_options_, L(key)));
  }
  Status Get(const Slice& key, std::string* value, bool* found) override {
    leveldb::Status s = db_->Get(leveldb::ReadOptions(), L(key), value);
    *found = s.ok();
    return s.IsNotFound() ? Status::OK() : FromLevelDb(s);
  }
  Status Scan(const Slice& start, size_t n, uint64_t* count) override {
    *count = 0;
    std::unique_ptr<leveldb::Iterator> it(
        db_->NewIterator(leveldb::ReadOptions()));
    for (it->Seek(L(start)); it->Valid() && *count < n; it->Next()) (*count)++;
    return FromLevelDb(it->status());
  }

  Status Flush() override {
    // LevelDB has no public flush. CompactRange writes the memtable out
    // first, then compacts the files overlapping the range; a range past
    // every key (kvbench's codes are base62 text) overlaps none.
    const leveldb::Slice past_all_keys(kPastAllKeys);
    db_->CompactRange(&past_all_keys, &past_all_keys);
    return Status::OK();
  }
  Status CompactAll() override {
    db_->CompactRange(nullptr, nullptr);
    return Status::OK();
  }
  // LevelDB says nothing about pending work: settled once level 0 is below
  // its compaction trigger and the per-level table of leveldb.stats (files,
  // sizes, compaction times) has not changed for kStableSeconds.
  Status WaitForCompactions(double timeout_seconds) override {
    constexpr double kStableSeconds = 2.0;
    constexpr int kLevel0CompactionTrigger = 4;  // LevelDB's default
    std::string last;
    auto since = std::chrono::steady_clock::now();
    return PollUntil(
        [&] {
          std::string stats;
          db_->GetProperty("leveldb.stats", &stats);
          const auto now = std::chrono::steady_clock::now();
          if (stats != last) {
            last = stats;
            since = now;
            return false;
          }
          const std::vector<int> files = FilesPerLevel();
          return !files.empty() && files[0] < kLevel0CompactionTrigger &&
                 std::chrono::duration<double>(now - since).count() >=
                     kStableSeconds;
        },
        timeout_seconds, "leveldb");
  }
  std::vector<int> FilesPerLevel() override {
    std::vector<int> files;
    for (int level = 0; level < kNumLevels; level++) {
      std::string v;
      if (!db_->GetProperty(
              "leveldb.num-files-at-level" + std::to_string(level), &v)) {
        break;
      }
      files.push_back(std::stoi(v));
    }
    return files;
  }

  EngineCounters Counters() override {
    EngineCounters c;
    c.file_reads = env_.reads.load(std::memory_order_relaxed);
    c.file_read_bytes = env_.read_bytes.load(std::memory_order_relaxed);
    c.file_bytes_written = env_.bytes_appended.load(std::memory_order_relaxed);
    return c;
  }

  FilterSummary Filters() override {
    FilterSummary f;
    const std::vector<int> files = FilesPerLevel();
    for (int n : files) f.files += n;
    if (!files.empty()) f.files_at_level0 = files[0];
    return f;
  }

  std::optional<uint64_t> MemoryUsage() override {
    std::string v;
    if (!db_->GetProperty("leveldb.approximate-memory-usage", &v)) {
      return std::nullopt;
    }
    return std::stoull(v);
  }

 private:
  static constexpr int kNumLevels = 7;  // LevelDB's config::kNumLevels
  static constexpr char kPastAllKeys[] = "\xff\xff\xff\xff";

  static leveldb::Slice L(const Slice& s) {
    return leveldb::Slice(s.data(), s.size());
  }

  const EngineOptions options_;
  leveldb::WriteOptions write_options_;
  CountingLevelDbEnv env_;
  int bits_ = 0;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<leveldb::DB> db_;
};

}  // namespace

Status OpenLevelDbEngine(const EngineOptions& options, const std::string& path,
                         std::unique_ptr<Engine>* engine) {
  auto e = std::make_unique<LevelDbEngine>(options);
  Status s = e->Open(path);
  if (s.ok()) *engine = std::move(e);
  return s;
}

}  // namespace bloomkv::bench
