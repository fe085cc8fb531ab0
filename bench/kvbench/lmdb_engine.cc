// The LMDB adapter: a memory-mapped copy-on-write B+tree (Debian's
// liblmdb-dev), the read-optimized store a read-mostly link shortener would
// otherwise pick.
//
// Configuration, as a new user would set it: one environment with the
// default database, a map size far above any store this benchmark builds
// (LMDB grows the file as it fills, so this costs address space only),
// MDB_NOSYNC so that a commit does not fsync (the same durability as the
// other engines' unsynced writes: lost on a machine crash, kept on a process
// crash), unless sync_writes is set. Every Put is one write transaction, as
// an application storing links one at a time commits each; PutBatch commits
// its pairs in one. A Get runs in its own read-only transaction (LMDB keeps
// the thread's reader slot between transactions, so beginning one takes no
// lock) and copies the value out of the mapping before the transaction
// ends.
//
// Counters: LMDB reads through its mapping, so no file read is counted
// (file_reads stays 0) and it keeps no statistics of its own; the page
// cache's `read_bytes` in kvbench's report is the figure to compare. It has
// no levels, filters or compactions: FilesPerLevel is empty and
// WaitForCompactions returns at once.
// Thread-safety: as Engine. LMDB serializes write transactions itself.
#include <lmdb.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench/kvbench/engine.h"

namespace bloomkv::bench {
namespace {

Status FromLmdb(int rc, const char* what) {
  if (rc == MDB_SUCCESS) return Status::OK();
  return Status::IOError(std::string("LMDB ") + what, mdb_strerror(rc));
}

MDB_val V(const Slice& s) {
  MDB_val v;
  v.mv_size = s.size();
  v.mv_data = const_cast<char*>(s.data());
  return v;
}

class LmdbEngine : public Engine {
 public:
  explicit LmdbEngine(const EngineOptions& options) : options_(options) {}
  ~LmdbEngine() override {
    if (env_ != nullptr) mdb_env_close(env_);
  }

  Status Open(const std::string& path) {
    // LMDB opens a directory that exists; the others create theirs.
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return Status::IOError(path, ec.message());
    Status s = FromLmdb(mdb_env_create(&env_), "mdb_env_create");
    if (s.ok())
      s = FromLmdb(mdb_env_set_mapsize(env_, options_.lmdb_map_gib << 30),
                   "mapsize");
    // Enough reader slots for every client thread kvbench may start.
    if (s.ok()) s = FromLmdb(mdb_env_set_maxreaders(env_, 1024), "maxreaders");
    const unsigned flags = options_.sync_writes ? 0 : MDB_NOSYNC;
    if (s.ok()) {
      s = FromLmdb(mdb_env_open(env_, path.c_str(), flags, 0644),
                   "mdb_env_open");
    }
    MDB_txn* txn = nullptr;
    if (s.ok()) s = FromLmdb(mdb_txn_begin(env_, nullptr, 0, &txn), "begin");
    if (s.ok()) s = FromLmdb(mdb_dbi_open(txn, nullptr, 0, &dbi_), "dbi_open");
    if (s.ok()) {
      s = FromLmdb(mdb_txn_commit(txn), "commit");
    } else if (txn != nullptr) {
      mdb_txn_abort(txn);
    }
    return s;
  }

  const char* Name() const override { return "lmdb"; }
  std::string Describe() const override {
    int major = 0, minor = 0, patch = 0;
    mdb_version(&major, &minor, &patch);
    return "LMDB " + std::to_string(major) + "." + std::to_string(minor) + "." +
           std::to_string(patch) +
           ": memory-mapped B+tree, no filter, one write transaction per "
           "Put" +
           (options_.sync_writes ? std::string(", synced commits")
                                 : std::string(", MDB_NOSYNC")) +
           ", values copied out of the mapping";
  }

  Status Put(const Slice& key, const Slice& value) override {
    return Commit([&](MDB_txn* txn) {
      MDB_val k = V(key), v = V(value);
      return mdb_put(txn, dbi_, &k, &v, 0);
    });
  }
  Status PutBatch(
      const std::vector<std::pair<std::string, std::string>>& pairs) override {
    return Commit([&](MDB_txn* txn) {
      for (const auto& [key, value] : pairs) {
        MDB_val k = V(key), v = V(value);
        const int rc = mdb_put(txn, dbi_, &k, &v, 0);
        if (rc != MDB_SUCCESS) return rc;
      }
      return MDB_SUCCESS;
    });
  }
  Status Delete(const Slice& key) override {
    return Commit([&](MDB_txn* txn) {
      MDB_val k = V(key);
      const int rc = mdb_del(txn, dbi_, &k, nullptr);
      return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
    });
  }
  Status Get(const Slice& key, std::string* value, bool* found) override {
    MDB_txn* txn = nullptr;
    Status s =
        FromLmdb(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), "begin read");
    if (!s.ok()) return s;
    MDB_val k = V(key), v;
    const int rc = mdb_get(txn, dbi_, &k, &v);
    *found = rc == MDB_SUCCESS;
    if (*found) value->assign(static_cast<const char*>(v.mv_data), v.mv_size);
    mdb_txn_abort(txn);
    return rc == MDB_NOTFOUND ? Status::OK() : FromLmdb(rc, "mdb_get");
  }
  Status Scan(const Slice& start, size_t n, uint64_t* count) override {
    *count = 0;
    MDB_txn* txn = nullptr;
    Status s =
        FromLmdb(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), "begin read");
    if (!s.ok()) return s;
    MDB_cursor* cursor = nullptr;
    int rc = mdb_cursor_open(txn, dbi_, &cursor);
    MDB_val k = V(start), v;
    if (rc == MDB_SUCCESS) rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
    while (rc == MDB_SUCCESS && *count < n) {
      ++*count;
      rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
    }
    if (cursor != nullptr) mdb_cursor_close(cursor);
    mdb_txn_abort(txn);
    return rc == MDB_NOTFOUND ? Status::OK() : FromLmdb(rc, "cursor");
  }

  // Commits are already in the mapping; this writes them to the file.
  Status Flush() override { return FromLmdb(mdb_env_sync(env_, 1), "sync"); }
  Status CompactAll() override {
    return Status::NotSupported("LMDB has no compaction");
  }
  Status WaitForCompactions(double) override { return Status::OK(); }
  std::vector<int> FilesPerLevel() override { return {}; }
  EngineCounters Counters() override { return EngineCounters(); }
  FilterSummary Filters() override { return FilterSummary(); }
  std::optional<uint64_t> MemoryUsage() override { return std::nullopt; }

 private:
  // Runs body in a write transaction and commits it, or aborts it when body
  // fails.
  template <typename Body>
  Status Commit(Body&& body) {
    MDB_txn* txn = nullptr;
    Status s = FromLmdb(mdb_txn_begin(env_, nullptr, 0, &txn), "begin write");
    if (!s.ok()) return s;
    const int rc = body(txn);
    if (rc != MDB_SUCCESS) {
      mdb_txn_abort(txn);
      return FromLmdb(rc, "write");
    }
    return FromLmdb(mdb_txn_commit(txn), "commit");
  }

  const EngineOptions options_;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
};

}  // namespace

Status OpenLmdbEngine(const EngineOptions& options, const std::string& path,
                      std::unique_ptr<Engine>* engine) {
  auto e = std::make_unique<LmdbEngine>(options);
  Status s = e->Open(path);
  if (s.ok()) *engine = std::move(e);
  return s;
}

}  // namespace bloomkv::bench
