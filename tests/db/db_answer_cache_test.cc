// The answer cache (Options::answer_cache_capacity): a key read again is
// answered without searching any segment, values, deletions and absences
// alike, while a key every filter rules out never reaches it; a flush, an
// ingest, a compaction filter and a retired range tombstone make every kept
// answer stale, while a plain compaction keeps them; reads at an explicit
// snapshot or with fill_cache = false neither use it nor fill it; and the
// answers stay right through random writes, flushes and compactions (a model
// check in db_model_test.cc as well).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/compaction_filter.h"
#include "bloomkv/db.h"
#include "bloomkv/segment_writer.h"
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

class DBAnswerCacheTest : public testing::Test {
 protected:
  DBAnswerCacheTest() {
    options_ = test::TinyCompactionOptions();
    // Segments change only when a test says so: a background compaction
    // could shrink a key range past a key a test reads.
    test::KeepEverythingInLevelZero(&options_);
    options_.answer_cache_capacity = 64 << 10;
    // Absent keys reach a segment, and so the cache, without filters.
    options_.filter_policy = nullptr;
    options_.deep_filter_policy = nullptr;
  }
  void Open() {
    db_.reset();
    Status s = DB::Open(options_, dir_->path(), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // Get with a trace: the status and *value; *cached tells whether the
  // answer cache answered.
  Status TracedGet(const std::string& key, std::string* value, bool* cached,
                   const ReadOptions& base = ReadOptions()) {
    GetTrace trace;
    ReadOptions ro = base;
    ro.trace = &trace;
    const Status s = db_->Get(ro, key, value);
    *cached = trace.answer_cache_hit;
    if (*cached) {
      for (const SegmentTrace& st : trace.segments) {  // none searched
        EXPECT_TRUE(st.outcome == SegmentOutcome::kSkippedByRange ||
                    st.outcome == SegmentOutcome::kSkippedByFilter)
            << trace.ToString();
      }
    }
    return s;
  }
  // Reads key until the cache answers (a key gets a slot on its second
  // miss there at most), checking each answer: the value, or NotFound for
  // an empty `expected`.
  void ReadUntilCached(const std::string& key, const std::string& expected) {
    bool cached = false;
    for (int round = 0; round < 5 && !cached; round++) {
      std::string value;
      const Status s = TracedGet(key, &value, &cached);
      if (expected.empty()) {
        ASSERT_TRUE(s.IsNotFound()) << key << ": " << s.ToString();
      } else {
        ASSERT_TRUE(s.ok()) << key << ": " << s.ToString();
        ASSERT_EQ(expected, value) << key;
      }
    }
    ASSERT_TRUE(cached) << key << " never answered by the cache";
  }
  // Get(key) is `expected` (empty: NotFound), and whether the cache
  // answered it.
  bool Check(const std::string& key, const std::string& expected) {
    std::string value;
    bool cached;
    const Status s = TracedGet(key, &value, &cached);
    if (expected.empty()) {
      EXPECT_TRUE(s.IsNotFound()) << key << ": " << s.ToString();
    } else {
      EXPECT_TRUE(s.ok()) << key << ": " << s.ToString();
      EXPECT_EQ(expected, value) << key;
    }
    return cached;
  }

  std::unique_ptr<test::TempDir> dir_ = std::make_unique<test::TempDir>();
  Options options_;
  std::unique_ptr<DB> db_;
};

// A value, a deleted key and a key no segment holds are each answered by
// the cache when read again, with no segment consulted, and counted.
TEST_F(DBAnswerCacheTest, ARepeatedGetConsultsNoSegment) {
  Open();
  for (int i = 0; i < 200; i += 2) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), "v" + Key(i)).ok());
  }
  ASSERT_TRUE(db_->Delete(WriteOptions(), Key(100)).ok());
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(options_.answer_cache_capacity,
            test::ResourceUsage(db_.get()).at("answer_cache_bytes"));
  ReadUntilCached(Key(42), "v" + Key(42));
  ReadUntilCached(Key(100), "");
  ReadUntilCached(Key(43), "");
  const uint64_t hits = db_->GetStats().answer_cache_hits;
  EXPECT_GE(hits, 3u);
  EXPECT_TRUE(Check(Key(42), "v" + Key(42)));
  EXPECT_EQ(hits + 1, db_->GetStats().answer_cache_hits);
  std::vector<std::string> values;
  const std::vector<Status> st =
      db_->MultiGet(ReadOptions(), {Slice(Key(42)), Slice(Key(100))}, &values);
  ASSERT_TRUE(st[0].ok());
  EXPECT_EQ("v" + Key(42), values[0]);
  EXPECT_TRUE(st[1].IsNotFound());
  EXPECT_EQ(hits + 3, db_->GetStats().answer_cache_hits);
}

// With filters, a key every filter rules out never reaches the cache (it
// costs a code never issued nothing), while a stored one is answered from
// it, once its filter lets it through.
TEST_F(DBAnswerCacheTest, KeysTheFiltersRuleOutPassItBy) {
  options_ = test::TinyCompactionOptions();  // with the default filters
  test::KeepEverythingInLevelZero(&options_);
  options_.answer_cache_capacity = 64 << 10;
  Open();
  for (int i = 0; i < 1000; i++) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), "v" + Key(i)).ok());
  }
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ReadUntilCached(Key(5), "v" + Key(5));
  const DbStats before = db_->GetStats();
  for (int round = 0; round < 3; round++) {
    for (int i = 1000; i < 2000; i++) Check(Key(i), "");
  }
  const DbStats after = db_->GetStats();
  // Every absent key the filters let through was searched each time.
  EXPECT_EQ(before.answer_cache_hits, after.answer_cache_hits);
  EXPECT_LT(after.filter_positives - before.filter_positives, 3 * 100u);
  EXPECT_TRUE(Check(Key(5), "v" + Key(5)));
}

// Writes after an answer was kept are seen: first from the memtable, which
// is asked before the cache, then from the segment the flush wrote, which
// makes every kept answer stale.
TEST_F(DBAnswerCacheTest, WritesAndFlushesAreSeen) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v1").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "gone", "x").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "z", "").ok());
  ASSERT_TRUE(db_->Flush().ok());
  ReadUntilCached("k", "v1");
  ReadUntilCached("gone", "x");
  ReadUntilCached("new", "");  // within the segment's key range
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v2").ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), "gone").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "new", "n").ok());
  EXPECT_FALSE(Check("k", "v2"));
  EXPECT_FALSE(Check("gone", ""));
  EXPECT_FALSE(Check("new", "n"));
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_FALSE(Check("k", "v2"));
  EXPECT_FALSE(Check("gone", ""));
  EXPECT_FALSE(Check("new", "n"));
  ReadUntilCached("k", "v2");
  ReadUntilCached("gone", "");
  ReadUntilCached("new", "n");
}

// A compaction moves answers between segments without changing them: the
// kept ones still answer. Deleted keys and their tombstones vanish from the
// files but keep reading as NotFound.
TEST_F(DBAnswerCacheTest, CompactionsKeepTheAnswers) {
  Open();
  for (int i = 0; i < 500; i++) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), "v" + Key(i)).ok());
  }
  ASSERT_TRUE(db_->Delete(WriteOptions(), Key(7)).ok());
  ASSERT_TRUE(db_->Flush().ok());
  ReadUntilCached(Key(3), "v" + Key(3));
  ReadUntilCached(Key(7), "");
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_TRUE(Check(Key(3), "v" + Key(3)));
  EXPECT_TRUE(Check(Key(7), ""));
}

// A compaction filter changes answers as it compacts: the kept ones are
// not used afterwards.
TEST_F(DBAnswerCacheTest, ACompactionFilterMakesAnswersStale) {
  struct DropOdd final : CompactionFilter {
    const char* Name() const override { return "test.DropOdd"; }
    bool Filter(int, const Slice&, const Slice& value) const override {
      return value == Slice("odd");
    }
  };
  options_.compaction_filter = std::make_shared<DropOdd>();
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "odd").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "b", "even").ok());
  ASSERT_TRUE(db_->Flush().ok());
  ReadUntilCached("a", "odd");
  ReadUntilCached("b", "even");
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_FALSE(Check("a", ""));
  EXPECT_FALSE(Check("b", "even"));
}

// A range deletion hides kept values while it is in the memtable, once it
// is flushed, and after compactions applied it and retired it: a retired
// tombstone no longer hides the answer kept from before, so it is stale.
TEST_F(DBAnswerCacheTest, RangeDeletionsHideKeptValues) {
  Open();
  for (int i = 0; i < 100; i++) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), "v" + Key(i)).ok());
  }
  ASSERT_TRUE(db_->Flush().ok());
  ReadUntilCached(Key(10), "v" + Key(10));
  ReadUntilCached(Key(60), "v" + Key(60));
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), Key(5), Key(50)).ok());
  EXPECT_TRUE(Check(Key(10), ""));  // kept, hidden by the memtable's range
  EXPECT_TRUE(Check(Key(60), "v" + Key(60)));
  ASSERT_TRUE(db_->Flush().ok());
  ReadUntilCached(Key(10), "");
  ReadUntilCached(Key(60), "v" + Key(60));
  std::string live;
  ASSERT_TRUE(db_->GetProperty("bloomkv.num-range-tombstones", &live));
  ASSERT_EQ("1", live);  // kept Key(10)'s value, hidden by the tombstone
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  test::WaitForBackgroundWork(db_.get());
  ASSERT_TRUE(db_->GetProperty("bloomkv.num-range-tombstones", &live));
  ASSERT_EQ("0", live);  // retired
  EXPECT_FALSE(Check(Key(10), ""));
  EXPECT_FALSE(Check(Key(60), "v" + Key(60)));
}

// An ingest brings a key the cache had kept as absent: it is read. (An
// ingested segment overlaps no other, so the key's answer was kept while a
// segment covered it, and a compaction then removed that segment.)
TEST_F(DBAnswerCacheTest, AnIngestMakesAnswersStale) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "1").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "y", "1").ok());
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), "a").ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), "y").ok());
  ASSERT_TRUE(db_->Flush().ok());
  ReadUntilCached("m", "");
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  test::WaitForBackgroundWork(db_.get());
  ASSERT_TRUE(db_->GetSegmentInfo().empty());  // kept "m" is not asked for
  test::TempDir outside;
  const std::string path = outside.path() + "/m.seg";
  std::unique_ptr<SegmentWriter> w;
  ASSERT_TRUE(SegmentWriter::Open(options_, path, &w).ok());
  ASSERT_TRUE(w->Put("m", "ingested").ok());
  SegmentFileInfo info;
  ASSERT_TRUE(w->Finish(&info).ok());
  const Status s = db_->IngestSegments({path}, IngestOptions());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(Check("m", "ingested"));
  ReadUntilCached("m", "ingested");
}

// Reads at an explicit snapshot answer as of the snapshot and never touch
// the cache; reads with fill_cache = false are answered by it but do not
// fill it.
TEST_F(DBAnswerCacheTest, SnapshotAndNoFillReads) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "old").ok());
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "new").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "j", "j").ok());
  ASSERT_TRUE(db_->Flush().ok());
  ReadUntilCached("k", "new");
  ReadOptions at_snap;
  at_snap.snapshot = snap;
  for (int round = 0; round < 3; round++) {
    std::string value;
    bool cached;
    ASSERT_TRUE(TracedGet("k", &value, &cached, at_snap).ok());
    EXPECT_EQ("old", value);
    EXPECT_FALSE(cached);
  }
  db_->ReleaseSnapshot(snap);
  ReadOptions no_fill;
  no_fill.fill_cache = false;
  for (int round = 0; round < 3; round++) {
    std::string value;
    bool cached;
    ASSERT_TRUE(TracedGet("j", &value, &cached, no_fill).ok());
    EXPECT_EQ("j", value);
    EXPECT_FALSE(cached);
    ASSERT_TRUE(TracedGet("k", &value, &cached, no_fill).ok());
    EXPECT_EQ("new", value);
    EXPECT_TRUE(cached);
  }
}

// An answer longer than a slot holds is not kept, and reads right.
TEST_F(DBAnswerCacheTest, LongAnswersAreNotKept) {
  Open();
  const std::string long_value(300, 'x');
  ASSERT_TRUE(db_->Put(WriteOptions(), "long", long_value).ok());
  ASSERT_TRUE(db_->Flush().ok());
  for (int round = 0; round < 3; round++) {
    EXPECT_FALSE(Check("long", long_value));
  }
}

TEST_F(DBAnswerCacheTest, CapacityIsValidated) {
  options_.answer_cache_capacity = 511;
  Status s = DB::Open(options_, dir_->path(), &db_);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("answer_cache_capacity"));
  options_.answer_cache_capacity = 512;  // two slots
  Open();
  EXPECT_EQ(512u, test::ResourceUsage(db_.get()).at("answer_cache_bytes"));
}

}  // namespace BLOOMKV_FILE_NAMESPACE
}  // namespace bloomkv
