// The row cache (Options::row_cache_capacity): a key read again is answered
// from the cache without its data block, values, deletions and absences
// alike; the answers stay right through overwrites, deletions, range
// deletions, flushes and compactions (a randomized model check); reads at an
// explicit snapshot neither use nor fill it.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/statistics.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

std::string Key(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%06llu",
                static_cast<unsigned long long>(i));
  return buf;
}

class DBRowCacheTest : public testing::Test {
 protected:
  DBRowCacheTest() {
    options_ = test::TinyCompactionOptions();
    options_.block_cache_capacity = 0;  // every block read counts
    options_.row_cache_capacity = 1 << 20;
    options_.answer_cache_capacity = 0;  // it would answer before the row cache
  }
  void Open() {
    db_.reset();
    Status s = DB::Open(options_, dir_->path(), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // Get with a trace: the status, *value, and the trace in *trace.
  Status TracedGet(const std::string& key, std::string* value,
                   GetTrace* trace, const Snapshot* snapshot = nullptr) {
    ReadOptions ro;
    ro.trace = trace;
    ro.snapshot = snapshot;
    return db_->Get(ro, key, value);
  }
  uint64_t RowCacheBytes() {
    return test::ResourceUsage(db_.get()).at("row_cache_bytes");
  }

  std::unique_ptr<test::TempDir> dir_ = std::make_unique<test::TempDir>();
  Options options_;
  std::unique_ptr<DB> db_;
};

// The second Get of a key reads no block: its answer comes from the cache,
// for a stored value, a deleted key, and a key the filter let through that
// the segment does not hold.
TEST_F(DBRowCacheTest, ARepeatedGetReadsNoBlock) {
  options_.filter_policy = nullptr;  // every absent key reaches a segment
  options_.deep_filter_policy = nullptr;
  Open();
  for (int i = 0; i < 2000; i += 2) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), "v" + Key(i)).ok());
  }
  ASSERT_TRUE(db_->Delete(WriteOptions(), Key(100)).ok());
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(0u, RowCacheBytes());
  struct Probe {
    std::string key;
    bool found;
  };
  for (const Probe& p : {Probe{Key(42), true}, Probe{Key(100), false},
                         Probe{Key(43), false}}) {
    SCOPED_TRACE(p.key);
    for (int round = 0; round < 2; round++) {
      std::string value;
      GetTrace trace;
      const Status s = TracedGet(p.key, &value, &trace);
      ASSERT_EQ(p.found, s.ok()) << s.ToString();
      if (p.found) {
        EXPECT_EQ("v" + p.key, value);
      }
      ASSERT_FALSE(trace.segments.empty());
      const SegmentTrace& last = trace.segments.back();
      EXPECT_EQ(round == 1, last.row_cache_hit) << trace.ToString();
      EXPECT_EQ(round == 0 ? 1u : 0u, trace.data_blocks_read)
          << trace.ToString();
    }
  }
  EXPECT_GT(RowCacheBytes(), 0u);
  EXPECT_EQ(3u, db_->GetStats().row_cache_hits);
}

// A read with fill_cache = false leaves the row cache as it was: the next
// such read searches the segment again; an ordinary read fills it, and then
// a read with fill_cache = false is answered from it.
TEST_F(DBRowCacheTest, ReadsWithoutFillCacheDoNotFillIt) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), Key(1), "v").ok());
  ASSERT_TRUE(db_->Flush().ok());
  ReadOptions no_fill;
  std::string value;
  GetTrace trace;
  no_fill.trace = &trace;
  no_fill.fill_cache = false;
  for (int round = 0; round < 2; round++) {
    ASSERT_TRUE(db_->Get(no_fill, Key(1), &value).ok());
    EXPECT_EQ("v", value);
    EXPECT_FALSE(trace.segments.back().row_cache_hit) << trace.ToString();
  }
  EXPECT_EQ(0u, RowCacheBytes());
  ASSERT_TRUE(db_->Get(ReadOptions(), Key(1), &value).ok());
  EXPECT_GT(RowCacheBytes(), 0u);
  ASSERT_TRUE(db_->Get(no_fill, Key(1), &value).ok());
  EXPECT_EQ("v", value);
  EXPECT_TRUE(trace.segments.back().row_cache_hit) << trace.ToString();
}

// A read at an explicit snapshot answers as of the snapshot, though the row
// cache holds the segment's newest answer for the key: one segment holds two
// versions (the snapshot kept the older one through the compaction).
TEST_F(DBRowCacheTest, SnapshotReadsBypassTheCache) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "old").ok());
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "new").ok());
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  std::string value;
  GetTrace trace;
  for (int round = 0; round < 2; round++) {
    ASSERT_TRUE(TracedGet("k", &value, &trace).ok());
    EXPECT_EQ("new", value);
  }
  EXPECT_TRUE(trace.segments.back().row_cache_hit) << trace.ToString();
  for (int round = 0; round < 2; round++) {
    ASSERT_TRUE(TracedGet("k", &value, &trace, snap).ok());
    EXPECT_EQ("old", value);
    EXPECT_FALSE(trace.segments.back().row_cache_hit) << trace.ToString();
  }
  std::vector<std::string> values;
  ReadOptions at_snap;
  at_snap.snapshot = snap;
  const std::vector<Status> st = db_->MultiGet(at_snap, {Slice("k")}, &values);
  ASSERT_TRUE(st[0].ok());
  EXPECT_EQ("old", values[0]);
  db_->ReleaseSnapshot(snap);
}

// Random puts, deletes, range deletions, flushes and compactions against a
// std::map, every key read (Get and MultiGet) after each step, with a row
// cache small enough to evict.
TEST_F(DBRowCacheTest, RandomOperationsMatchAStdMap) {
  options_.row_cache_capacity = 16 << 10;
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    db_.reset();
    dir_ = std::make_unique<test::TempDir>();
    Open();
    Random rnd(seed);
    std::map<std::string, std::string> model;
    constexpr int kKeys = 300;
    for (int step = 0; step < 40; step++) {
      for (int i = 0; i < 50; i++) {
        const std::string k = Key(rnd.Uniform(kKeys));
        const uint64_t op = rnd.Uniform(10);
        if (op < 6) {
          const std::string v = k + "." + std::to_string(step * 100 + i);
          ASSERT_TRUE(db_->Put(WriteOptions(), k, v).ok());
          model[k] = v;
        } else if (op < 9) {
          ASSERT_TRUE(db_->Delete(WriteOptions(), k).ok());
          model.erase(k);
        } else {
          const std::string end = Key(rnd.Uniform(kKeys));
          if (k < end) {
            ASSERT_TRUE(db_->DeleteRange(WriteOptions(), k, end).ok());
            model.erase(model.lower_bound(k), model.lower_bound(end));
          }
        }
      }
      const uint64_t shape = rnd.Uniform(4);
      if (shape == 0) {
        ASSERT_TRUE(db_->Flush().ok());
      } else if (shape == 1) {
        ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
      } else if (shape == 2) {
        test::WaitForBackgroundWork(db_.get());
      }
      std::vector<std::string> keys;
      std::vector<Slice> slices;
      for (int i = 0; i < kKeys; i++) keys.push_back(Key(i));
      for (const std::string& k : keys) slices.emplace_back(k);
      for (int pass = 0; pass < 2; pass++) {  // the second mostly cached
        std::vector<std::string> values;
        const std::vector<Status> st =
            db_->MultiGet(ReadOptions(), slices, &values);
        for (int i = 0; i < kKeys; i++) {
          std::string v;
          const Status s = db_->Get(ReadOptions(), keys[i], &v);
          auto m = model.find(keys[i]);
          if (m == model.end()) {
            ASSERT_TRUE(s.IsNotFound()) << keys[i] << " step " << step;
            ASSERT_TRUE(st[i].IsNotFound()) << keys[i] << " step " << step;
          } else {
            ASSERT_TRUE(s.ok()) << keys[i] << " step " << step;
            ASSERT_EQ(m->second, v) << keys[i] << " step " << step;
            ASSERT_TRUE(st[i].ok()) << keys[i] << " step " << step;
            ASSERT_EQ(m->second, values[i]) << keys[i] << " step " << step;
          }
        }
      }
    }
    EXPECT_GT(db_->GetStats().row_cache_hits, 0u);
    EXPECT_LE(RowCacheBytes(), options_.row_cache_capacity);
    db_.reset();
  }
}

}  // namespace BLOOMKV_FILE_NAMESPACE
}  // namespace bloomkv
