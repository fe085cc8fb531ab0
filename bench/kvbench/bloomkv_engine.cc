// The bloomkv adapter. "Data blocks read" is DbStats::data_blocks_read: data
// blocks fetched from segment files because the block cache did not hold
// them; index and filter blocks are loaded when a segment is opened (at
// flush time), so during a read phase the CountingEnv's read count should
// equal it, and kvbench prints both as a cross-check, except for blocks a
// lookup uses where they lie in a mapping, verified by an earlier read:
// counted as blocks read, not as reads (the CountingEnv passes mappings
// through, so that bloomkv reads as it does without one). Segments consulted,
// filter negatives and false positives come from DbStats as well, the
// filter summary from DB::GetSegmentInfo().
//
// Thread-safety: see engine.h; the DB is thread-safe.
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "bench/kvbench/engine.h"
#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "bloomkv/filter_policy.h"
#include "bloomkv/write_batch.h"
#include "db/filter_allocation.h"
#include "table/format.h"
#include "util/counting_env.h"
#include "util/filter_registry.h"

namespace bloomkv::bench {
namespace {

std::string FormatBits(double bits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", bits);
  return buf;
}

class BloomkvEngine : public Engine {
 public:
  explicit BloomkvEngine(const EngineOptions& options)
      : options_(options),
        posix_env_(MakePosixEnv(options)),
        env_(posix_env_ != nullptr ? posix_env_.get() : Env::Default(),
             /*pass_mappings=*/true) {
    write_options_.sync = options.sync_writes;
  }

  Status Open(const std::string& path) {
    Options o;
    o.create_if_missing = true;
    o.error_if_exists = !options_.reopen;
    o.env = &env_;
    o.filter_policy = options_.bits_per_key > 0
                          ? NewBloomFilterPolicy(options_.bits_per_key)
                          : nullptr;
    if (options_.deep_filter == "bloom") {
      o.deep_filter_policy = o.filter_policy;
    } else if (options_.deep_filter == "fuse8" ||
               options_.deep_filter == "fuse16") {
      o.deep_filter_policy =
          NewBinaryFuseFilterPolicy(options_.deep_filter == "fuse8" ? 8 : 16);
    } else if (!options_.deep_filter.empty()) {
      return Status::InvalidArgument("unknown deep filter " +
                                     options_.deep_filter);
    }
    o.deep_filter_level = options_.deep_filter_level;
    // What the deep levels get, the library's default included.
    const auto deep = DeepFilterPolicy(o);
    deep_filter_.clear();
    if (deep != nullptr && deep != o.filter_policy) {
      const BuiltinFilterKind kind = BuiltinFilterKindOf(deep->Name());
      deep_filter_ = kind == BuiltinFilterKind::kBinaryFuse8    ? "fuse8"
                     : kind == BuiltinFilterKind::kBinaryFuse16 ? "fuse16"
                                                                : deep->Name();
    }
    if (options_.minimize_filter_fp) {
      o.filter_allocation = FilterAllocation::kMinimizeFalsePositives;
    }
    if (options_.compression == "lz4") o.compression = CompressionType::kLZ4;
    if (options_.compression == "lz4-values") {
      o.compression = CompressionType::kLZ4Values;
    }
    if (options_.compression == "zstd") o.compression = CompressionType::kZSTD;
    if (options_.compression == "none") o.compression = CompressionType::kNone;
    o.block_cache_capacity = options_.block_cache_bytes;
    o.row_cache_capacity = options_.row_cache_bytes;
    if (options_.answer_cache_bytes >= 0) {
      o.answer_cache_capacity =
          static_cast<size_t>(options_.answer_cache_bytes);
    }
    answer_cache_bytes_ = o.answer_cache_capacity;
    o.write_buffer_size = options_.write_buffer_bytes;
    // Connected once bloomkv's Options has max_open_files.
    if (options_.max_open_files != 0) {
      max_open_files_applied_ =
          SetMaxOpenFilesIfSupported(&o, options_.max_open_files);
    }
    o.filter_and_index_memory_limit = options_.meta_limit_bytes;
    auto name = CompressionTypeName;
    // Per level where the levels differ, e.g. "L0 none, L1 none, then lz4".
    compression_.clear();
    for (size_t l = 0; l < o.compression_per_level.size(); l++) {
      compression_ += "L" + std::to_string(l) + " " +
                      name(o.compression_per_level[l]) + ", ";
    }
    compression_ += (compression_.empty() ? "" : "then ");
    compression_ += name(o.compression);
    return DB::Open(o, path, &db_);
  }

  const char* Name() const override { return "bloomkv"; }
  std::string Describe() const override {
    std::string filter =
        options_.bits_per_key > 0
            ? "blocked bloom " + FormatBits(options_.bits_per_key) + " bits/key"
            : "no filter";
    if (!deep_filter_.empty()) {
      filter += " (levels 0-" + std::to_string(options_.deep_filter_level - 1) +
                "), binary " + deep_filter_ + " from level " +
                std::to_string(options_.deep_filter_level) +
                (options_.deep_filter.empty() ? " (the default)" : "");
    }
    if (options_.minimize_filter_fp) {
      filter += ", filter memory planned across levels";
    }
    return filter + ", block cache " +
           std::to_string(options_.block_cache_bytes >> 20) + " MiB" +
           (options_.row_cache_bytes > 0
                ? ", row cache " +
                      std::to_string(options_.row_cache_bytes >> 20) + " MiB"
                : "") +
           (answer_cache_bytes_ > 0
                ? ", answer cache " +
                      std::to_string(answer_cache_bytes_ >> 10) + " KiB"
                : "") +
           ", compression " + compression_ +
           ", 4 KiB blocks, leveled compaction" +
           ((options_.mmap_reads < 0 ? EnvOptions().use_mmap_reads
                                     : options_.mmap_reads > 0)
                ? ", mmap reads"
                : ", pread reads") +
           (options_.sync_writes ? ", synced writes" : "") +
           (options_.meta_limit_bytes == 0
                ? ""
                : ", filters+indexes limited to " +
                      std::to_string(options_.meta_limit_bytes >> 10) +
                      " KiB") +
           (options_.max_open_files == 0 ? ""
            : max_open_files_applied_
                ? ", max_open_files " + std::to_string(options_.max_open_files)
                : ", max_open_files not supported by this bloomkv");
  }

  Status Put(const Slice& key, const Slice& value) override {
    return db_->Put(write_options_, key, value);
  }
  Status PutBatch(
      const std::vector<std::pair<std::string, std::string>>& pairs) override {
    WriteBatch batch;
    for (const auto& [k, v] : pairs) batch.Put(k, v);
    return db_->Write(write_options_, &batch);
  }
  Status Delete(const Slice& key) override {
    return db_->Delete(write_options_, key);
  }
  Status DeleteRange(const Slice& begin, const Slice& end) override {
    return db_->DeleteRange(write_options_, begin, end);
  }
  std::optional<uint64_t> KeptRangeTombstones() override {
    std::string v;
    if (!db_->GetProperty("bloomkv.num-range-tombstones", &v)) {
      return std::nullopt;
    }
    return std::stoull(v);
  }
  Status Get(const Slice& key, std::string* value, bool* found) override {
    Status s = db_->Get(ReadOptions(), key, value);
    *found = s.ok();
    return s.IsNotFound() ? Status::OK() : s;
  }
  Status MultiGet(const std::vector<Slice>& keys,
                  std::vector<std::string>* values,
                  std::vector<bool>* found) override {
    const std::vector<Status> s = db_->MultiGet(ReadOptions(), keys, values);
    found->resize(keys.size());
    for (size_t i = 0; i < s.size(); i++) {
      (*found)[i] = s[i].ok();
      if (!s[i].ok() && !s[i].IsNotFound()) return s[i];
    }
    return Status::OK();
  }
  Status Scan(const Slice& start, size_t n, uint64_t* count) override {
    *count = 0;
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    for (it->Seek(start); it->Valid() && *count < n; it->Next()) (*count)++;
    return it->status();
  }

  Status Flush() override { return db_->Flush(); }
  Status CompactAll() override { return db_->CompactRange(nullptr, nullptr); }
  Status WaitForCompactions(double timeout_seconds) override {
    return PollUntil(
        [this] {
          std::string v;
          return db_->GetProperty("bloomkv.compaction-pending", &v) && v == "0";
        },
        timeout_seconds, "bloomkv");
  }
  std::vector<int> FilesPerLevel() override {
    std::vector<int> files;
    std::string v;
    while (db_->GetProperty(
        "bloomkv.num-files-at-level" + std::to_string(files.size()), &v)) {
      files.push_back(std::stoi(v));
    }
    return files;
  }

  EngineCounters Counters() override {
    EngineCounters c;
    const CountingEnv::Counts io = env_.Total();
    c.file_reads = io.random_reads;
    c.file_read_bytes = io.random_read_bytes;
    c.file_bytes_written = io.bytes_appended;
    const DbStats st = db_->GetStats();
    c.gets = st.gets;
    c.segments_consulted = st.segments_consulted;
    c.filter_negatives = st.filter_negatives;
    c.filter_false_positives = st.filter_false_positives;
    c.data_blocks_read = st.data_blocks_read;
    c.data_bytes_read = st.bytes_read;
    return c;
  }

  FilterSummary Filters() override {
    FilterSummary f;
    uint64_t filter_bytes = 0, keys = 0, negatives = 0, false_positives = 0;
    uint64_t filtered_bytes = 0;
    double weighted_fp = 0;
    for (const SegmentInfo& seg : db_->GetSegmentInfo()) {
      f.files++;
      if (seg.level == 0) f.files_at_level0++;
      filter_bytes += seg.filter_bytes;
      negatives += seg.filter_negatives;
      false_positives += seg.false_positives;
      if (seg.has_filter) {
        keys += seg.num_entries;
        filtered_bytes += seg.filter_bytes;
        weighted_fp += seg.theoretical_fp_rate * seg.num_entries;
      }
    }
    f.filter_bytes = filter_bytes;
    // Filter and index bytes held in memory, where this bloomkv reports
    // them ("bloomkv.resource-usage": "name: value" lines; segments past
    // filter_and_index_memory_limit hold less than filter_bytes says).
    std::string usage;
    if (db_->GetProperty("bloomkv.resource-usage", &usage)) {
      auto line = [&usage](const std::string& name) -> std::optional<uint64_t> {
        const size_t at = usage.find("\n" + name + ": ");
        if (at == std::string::npos) return std::nullopt;
        return std::stoull(usage.substr(at + name.size() + 3));
      };
      const auto held_filters = line("filter_bytes");
      const auto held_indexes = line("index_bytes");
      if (held_filters && held_indexes) {
        f.filter_and_index_bytes = *held_filters + *held_indexes;
      }
    }
    if (keys > 0) {
      f.theoretical_fp_rate = weighted_fp / keys;
      f.bits_per_key = 8.0 * static_cast<double>(filtered_bytes) /
                       static_cast<double>(keys);
    }
    db_->GetProperty("bloomkv.levels", &f.levels);
    if (negatives + false_positives > 0) {
      f.measured_fp_rate = static_cast<double>(false_positives) /
                           static_cast<double>(negatives + false_positives);
    }
    return f;
  }

  std::optional<uint64_t> MemoryUsage() override {
    std::string v;
    if (!db_->GetProperty("bloomkv.approximate-memory-usage", &v)) {
      return std::nullopt;
    }
    return std::stoull(v);
  }

 private:
  // A POSIX Env of its own when --mmap_reads chose how segments are read.
  static std::unique_ptr<Env> MakePosixEnv(const EngineOptions& options) {
    if (options.mmap_reads < 0) return nullptr;
    EnvOptions eo;
    eo.use_mmap_reads = options.mmap_reads > 0;
    return NewPosixEnv(eo);
  }

  const EngineOptions options_;
  WriteOptions write_options_;
  std::unique_ptr<Env> posix_env_;  // null: Env::Default()
  CountingEnv env_;  // outlives db_ (declared first, destroyed last)
  std::string compression_;
  size_t answer_cache_bytes_ = 0;  // Options::answer_cache_capacity used
  std::string deep_filter_;  // "" when the deep levels use the bloom filter
  bool max_open_files_applied_ = false;
  std::unique_ptr<DB> db_;
};

}  // namespace

Status OpenBloomkvEngine(const EngineOptions& options, const std::string& path,
                         std::unique_ptr<Engine>* engine) {
  auto e = std::make_unique<BloomkvEngine>(options);
  Status s = e->Open(path);
  if (s.ok()) *engine = std::move(e);
  return s;
}

}  // namespace bloomkv::bench
