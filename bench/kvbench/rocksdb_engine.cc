// The RocksDB adapter, built when librocksdb-dev was found. Filters: full
// (whole-file) bloom filters, NewBloomFilterPolicy(bits, false), at the same
// bits per key; same LRU block cache capacity; index and filter blocks held
// by the table readers (not in the cache), as bloomkv does; its default
// compression (Snappy) and 4 KiB blocks; leveled compaction.
//
// "Data blocks read" is the BLOCK_CACHE_DATA_MISS ticker: data blocks that
// had to be read from a table file. Filter negatives are BLOOM_FILTER_USEFUL
// (files skipped by their filter), false positives BLOOM_FILTER_FULL_POSITIVE
// minus BLOOM_FILTER_FULL_TRUE_POSITIVE, filter memory the sum of the live
// tables' filter_size. File reads and bytes written are counted by a
// FileSystemWrapper, like the other engines' Env wrappers.
//
// Thread-safety: see engine.h; rocksdb::DB is thread-safe.
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "bench/kvbench/engine.h"

namespace bloomkv::bench {
namespace {

Status FromRocksDb(const rocksdb::Status& s) {
  if (s.ok()) return Status::OK();
  if (s.IsNotFound()) return Status::NotFound("rocksdb: ", s.ToString());
  return Status::IOError("rocksdb: ", s.ToString());
}

std::string FormatBits(double bits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", bits);
  return buf;
}

struct IoCounters {
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> read_bytes{0};
  std::atomic<uint64_t> bytes_written{0};
};

class CountingReadFile : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  CountingReadFile(std::unique_ptr<rocksdb::FSRandomAccessFile>&& t,
                   IoCounters* io)
      : rocksdb::FSRandomAccessFileOwnerWrapper(std::move(t)), io_(io) {}

  rocksdb::IOStatus Read(uint64_t offset, size_t n,
                         const rocksdb::IOOptions& options,
                         rocksdb::Slice* result, char* scratch,
                         rocksdb::IODebugContext* dbg) const override {
    rocksdb::IOStatus s =
        target()->Read(offset, n, options, result, scratch, dbg);
    io_->reads.fetch_add(1, std::memory_order_relaxed);
    if (s.ok()) {
      io_->read_bytes.fetch_add(result->size(), std::memory_order_relaxed);
    }
    return s;
  }
  rocksdb::IOStatus MultiRead(rocksdb::FSReadRequest* reqs, size_t num_reqs,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->MultiRead(reqs, num_reqs, options, dbg);
    io_->reads.fetch_add(num_reqs, std::memory_order_relaxed);
    for (size_t i = 0; i < num_reqs; i++) {
      if (reqs[i].status.ok()) {
        io_->read_bytes.fetch_add(reqs[i].result.size(),
                                  std::memory_order_relaxed);
      }
    }
    return s;
  }

 private:
  IoCounters* const io_;
};

class CountingWriteFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  CountingWriteFile(std::unique_ptr<rocksdb::FSWritableFile>&& t,
                    IoCounters* io)
      : rocksdb::FSWritableFileOwnerWrapper(std::move(t)), io_(io) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    Count(data.size());
    return target()->Append(data, options, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    Count(data.size());
    return target()->Append(data, options, info, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     rocksdb::IODebugContext* dbg) override {
    Count(data.size());
    return target()->PositionedAppend(data, offset, options, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     const rocksdb::DataVerificationInfo& info,
                                     rocksdb::IODebugContext* dbg) override {
    Count(data.size());
    return target()->PositionedAppend(data, offset, options, info, dbg);
  }

 private:
  void Count(size_t n) {
    io_->bytes_written.fetch_add(n, std::memory_order_relaxed);
  }
  IoCounters* const io_;
};

class CountingFileSystem : public rocksdb::FileSystemWrapper {
 public:
  CountingFileSystem(const std::shared_ptr<rocksdb::FileSystem>& target,
                     IoCounters* io)
      : rocksdb::FileSystemWrapper(target), io_(io) {}

  const char* Name() const override { return "KvbenchCountingFileSystem"; }

  rocksdb::IOStatus NewRandomAccessFile(
      const std::string& f, const rocksdb::FileOptions& o,
      std::unique_ptr<rocksdb::FSRandomAccessFile>* r,
      rocksdb::IODebugContext* dbg) override {
    std::unique_ptr<rocksdb::FSRandomAccessFile> file;
    rocksdb::IOStatus s = target()->NewRandomAccessFile(f, o, &file, dbg);
    if (s.ok()) *r = std::make_unique<CountingReadFile>(std::move(file), io_);
    return s;
  }
  rocksdb::IOStatus NewWritableFile(const std::string& f,
                                    const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* dbg) override {
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->NewWritableFile(f, o, &file, dbg);
    if (s.ok()) *r = std::make_unique<CountingWriteFile>(std::move(file), io_);
    return s;
  }
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& f, const rocksdb::FileOptions& o,
      std::unique_ptr<rocksdb::FSWritableFile>* r,
      rocksdb::IODebugContext* dbg) override {
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->ReopenWritableFile(f, o, &file, dbg);
    if (s.ok()) *r = std::make_unique<CountingWriteFile>(std::move(file), io_);
    return s;
  }

 private:
  IoCounters* const io_;
};

class RocksDbEngine : public Engine {
 public:
  explicit RocksDbEngine(const EngineOptions& options) : options_(options) {
    write_options_.sync = options.sync_writes;
  }
  ~RocksDbEngine() override {
    db_.reset();  // before the Env it uses
  }

  Status Open(const std::string& path) {
    fs_ = std::make_shared<CountingFileSystem>(rocksdb::FileSystem::Default(),
                                               &io_);
    env_ = rocksdb::NewCompositeEnv(fs_);
    stats_ = rocksdb::CreateDBStatistics();

    rocksdb::Options o;
    o.create_if_missing = true;
    o.error_if_exists = !options_.reopen;
    o.env = env_.get();
    o.statistics = stats_;
    o.write_buffer_size = options_.write_buffer_bytes;
    if (options_.max_open_files != 0) {
      o.max_open_files = options_.max_open_files;
    }
    rocksdb::BlockBasedTableOptions t;
    if (options_.bits_per_key > 0) {
      t.filter_policy.reset(
          rocksdb::NewBloomFilterPolicy(options_.bits_per_key, false));
    }
    t.block_cache = rocksdb::NewLRUCache(options_.block_cache_bytes);
    t.block_size = 4096;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    compression_ = o.compression == rocksdb::kSnappyCompression
                       ? "snappy"
                       : "type " + std::to_string(o.compression);
    rocksdb::DB* db = nullptr;
    Status s = FromRocksDb(rocksdb::DB::Open(o, path, &db));
    db_.reset(db);
    return s;
  }

  const char* Name() const override { return "rocksdb"; }
  std::string Describe() const override {
    return (options_.bits_per_key > 0
                ? "full bloom " + FormatBits(options_.bits_per_key) +
                      " bits/key"
                : std::string("no filter")) +
           ", block cache " + std::to_string(options_.block_cache_bytes >> 20) +
           " MiB, default compression (" + compression_ +
           "), 4 KiB blocks, leveled compaction" +
           (options_.max_open_files != 0
                ? ", max_open_files " + std::to_string(options_.max_open_files)
                : "");
  }

  Status Put(const Slice& key, const Slice& value) override {
    return FromRocksDb(db_->Put(write_options_, R(key), R(value)));
  }
  Status PutBatch(
      const std::vector<std::pair<std::string, std::string>>& pairs) override {
    rocksdb::WriteBatch batch;
    for (const auto& [k, v] : pairs) {
      rocksdb::Status s = batch.Put(k, v);
      if (!s.ok()) return FromRocksDb(s);
    }
    return FromRocksDb(db_->Write(write_options_, &batch));
  }
  Status Delete(const Slice& key) override {
    return FromRocksDb(db_->Delete(write_options_, R(key)));
  }
  Status Get(const Slice& key, std::string* value, bool* found) override {
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), R(key), value);
    *found = s.ok();
    return s.IsNotFound() ? Status::OK() : FromRocksDb(s);
  }
  Status MultiGet(const std::vector<Slice>& keys,
                  std::vector<std::string>* values,
                  std::vector<bool>* found) override {
    std::vector<rocksdb::Slice> rkeys;
    rkeys.reserve(keys.size());
    for (const Slice& k : keys) rkeys.push_back(R(k));
    const std::vector<rocksdb::Status> s =
        db_->MultiGet(rocksdb::ReadOptions(), rkeys, values);
    found->resize(keys.size());
    for (size_t i = 0; i < s.size(); i++) {
      (*found)[i] = s[i].ok();
      if (!s[i].ok() && !s[i].IsNotFound()) return FromRocksDb(s[i]);
    }
    return Status::OK();
  }
  Status Scan(const Slice& start, size_t n, uint64_t* count) override {
    *count = 0;
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek(R(start)); it->Valid() && *count < n; it->Next()) (*count)++;
    return FromRocksDb(it->status());
  }

  Status Flush() override {
    return FromRocksDb(db_->Flush(rocksdb::FlushOptions()));
  }
  Status CompactAll() override {
    return FromRocksDb(
        db_->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr));
  }
  Status WaitForCompactions(double timeout_seconds) override {
    return PollUntil(
        [this] {
          for (const char* p :
               {"rocksdb.compaction-pending", "rocksdb.num-running-compactions",
                "rocksdb.mem-table-flush-pending",
                "rocksdb.num-running-flushes"}) {
            uint64_t v = 0;
            if (!db_->GetIntProperty(p, &v) || v != 0) return false;
          }
          return true;
        },
        timeout_seconds, "rocksdb");
  }
  std::vector<int> FilesPerLevel() override {
    std::vector<int> files;
    for (int level = 0; level < db_->NumberLevels(); level++) {
      std::string v;
      if (!db_->GetProperty(
              "rocksdb.num-files-at-level" + std::to_string(level), &v)) {
        break;
      }
      files.push_back(std::stoi(v));
    }
    return files;
  }

  EngineCounters Counters() override {
    EngineCounters c;
    c.file_reads = io_.reads.load(std::memory_order_relaxed);
    c.file_read_bytes = io_.read_bytes.load(std::memory_order_relaxed);
    c.file_bytes_written = io_.bytes_written.load(std::memory_order_relaxed);
    c.gets = stats_->getTickerCount(rocksdb::NUMBER_KEYS_READ);
    c.filter_negatives = stats_->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL);
    c.filter_false_positives =
        stats_->getTickerCount(rocksdb::BLOOM_FILTER_FULL_POSITIVE) -
        stats_->getTickerCount(rocksdb::BLOOM_FILTER_FULL_TRUE_POSITIVE);
    c.data_blocks_read = stats_->getTickerCount(rocksdb::BLOCK_CACHE_DATA_MISS);
    return c;
  }

  FilterSummary Filters() override {
    FilterSummary f;
    rocksdb::TablePropertiesCollection props;
    if (db_->GetPropertiesOfAllTables(&props).ok()) {
      uint64_t filter_bytes = 0;
      for (const auto& [name, p] : props) filter_bytes += p->filter_size;
      f.filter_bytes = filter_bytes;
    }
    uint64_t readers = 0;
    if (db_->GetIntProperty("rocksdb.estimate-table-readers-mem", &readers)) {
      f.filter_and_index_bytes = readers;
    }
    const std::vector<int> files = FilesPerLevel();
    for (int n : files) f.files += n;
    if (!files.empty()) f.files_at_level0 = files[0];
    const uint64_t useful =
        stats_->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL);
    const uint64_t fp =
        stats_->getTickerCount(rocksdb::BLOOM_FILTER_FULL_POSITIVE) -
        stats_->getTickerCount(rocksdb::BLOOM_FILTER_FULL_TRUE_POSITIVE);
    if (useful + fp > 0) {
      f.measured_fp_rate = static_cast<double>(fp) / (useful + fp);
    }
    return f;
  }

  std::optional<uint64_t> MemoryUsage() override {
    uint64_t mem = 0, v = 0;
    for (const char* p :
         {"rocksdb.cur-size-all-mem-tables",
          "rocksdb.estimate-table-readers-mem", "rocksdb.block-cache-usage"}) {
      if (db_->GetIntProperty(p, &v)) mem += v;
    }
    return mem;
  }

 private:
  static rocksdb::Slice R(const Slice& s) {
    return rocksdb::Slice(s.data(), s.size());
  }

  const EngineOptions options_;
  rocksdb::WriteOptions write_options_;
  IoCounters io_;
  std::string compression_;
  std::shared_ptr<rocksdb::FileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  std::shared_ptr<rocksdb::Statistics> stats_;
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace

Status OpenRocksDbEngine(const EngineOptions& options, const std::string& path,
                         std::unique_ptr<Engine>* engine) {
  auto e = std::make_unique<RocksDbEngine>(options);
  Status s = e->Open(path);
  if (s.ok()) *engine = std::move(e);
  return s;
}

}  // namespace bloomkv::bench
