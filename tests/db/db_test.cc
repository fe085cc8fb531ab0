// Whole-database tests: the API, persistence across reopen, properties, and
// clear errors for bad input.
#include "bloomkv/db.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <set>

#include "bloomkv/env.h"
#include "bloomkv/write_batch.h"
#include "db/filename.h"
#include "tests/testutil/test_util.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

class DBTest : public testing::Test {
 protected:
  DBTest() { options_.create_if_missing = true; }
  ~DBTest() override { db_.reset(); }

  void Open() { ASSERT_TRUE(TryOpen().ok()); }
  Status TryOpen() {
    db_.reset();
    return DB::Open(options_, dir_.path(), &db_);
  }
  std::string Get(const std::string& key, const Snapshot* snap = nullptr) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::string value;
    Status s = db_->Get(ro, key, &value);
    if (s.IsNotFound()) return "NOT_FOUND";
    if (!s.ok()) return s.ToString();
    return value;
  }
  void Put(const std::string& k, const std::string& v) {
    ASSERT_TRUE(db_->Put(WriteOptions(), k, v).ok());
  }
  void Delete(const std::string& k) {
    ASSERT_TRUE(db_->Delete(WriteOptions(), k).ok());
  }
  std::string Contents(const ReadOptions& ro = ReadOptions()) {
    std::string r;
    auto it = db_->NewIterator(ro);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      r += it->key().ToString() + "=" + it->value().ToString() + ";";
    }
    EXPECT_TRUE(it->status().ok());
    return r;
  }
  std::vector<std::string> SegmentFiles() {
    std::vector<std::string> children, segs;
    EXPECT_TRUE(Env::Default()->GetChildren(dir_.path(), &children).ok());
    for (const auto& c : children) {
      uint64_t n;
      FileType t;
      if (ParseFileName(c, &n, &t) && t == FileType::kSegmentFile) {
        segs.push_back(dir_.File(c));
      }
    }
    std::sort(segs.begin(), segs.end());
    return segs;
  }

  test::TempDir dir_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(DBTest, PutGetDelete) {
  Open();
  EXPECT_EQ("NOT_FOUND", Get("a"));
  Put("a", "1");
  Put("b", "");
  EXPECT_EQ("1", Get("a"));
  EXPECT_EQ("", Get("b"));
  Put("a", "2");
  EXPECT_EQ("2", Get("a"));
  Delete("a");
  EXPECT_EQ("NOT_FOUND", Get("a"));
  Delete("never-there");  // not an error
}

TEST_F(DBTest, BinaryKeysAndValues) {
  Open();
  const std::string k1("\0a\0", 3), k2("\0a", 2), v("\0\xff\0", 3);
  Put(k1, v);
  Put(k2, "x");
  EXPECT_EQ(v, Get(k1));
  EXPECT_EQ("x", Get(k2));
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(v, Get(k1));
  EXPECT_EQ("x", Get(k2));
}

TEST_F(DBTest, ValuesSurviveReopenWithAndWithoutFlush) {
  Open();
  Put("flushed", "1");
  ASSERT_TRUE(db_->Flush().ok());
  Put("in-log", "2");
  Delete("flushed-then-deleted");
  Open();
  EXPECT_EQ("1", Get("flushed"));
  EXPECT_EQ("2", Get("in-log"));
  Put("after", "3");
  Open();
  EXPECT_EQ("1", Get("flushed"));
  EXPECT_EQ("2", Get("in-log"));
  EXPECT_EQ("3", Get("after"));
}

TEST_F(DBTest, DeletionShadowsOlderSegment) {
  Open();
  Put("k", "old");
  ASSERT_TRUE(db_->Flush().ok());
  Delete("k");
  EXPECT_EQ("NOT_FOUND", Get("k"));
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ("NOT_FOUND", Get("k"));
  Open();
  EXPECT_EQ("NOT_FOUND", Get("k"));
  EXPECT_EQ("", Contents());
}

TEST_F(DBTest, WriteBatchIsAtomicAndOrdered) {
  Open();
  WriteBatch batch;
  batch.Put("a", "1");
  batch.Put("b", "2");
  batch.Delete("a");
  batch.Put("c", "3");
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  EXPECT_EQ("b=2;c=3;", Contents());
  WriteBatch bad;
  bad.Put("ok", "1");
  bad.Put("", "empty key");
  EXPECT_TRUE(db_->Write(WriteOptions(), &bad).IsInvalidArgument());
  EXPECT_EQ("NOT_FOUND", Get("ok"));  // nothing of a rejected batch applied
}

TEST_F(DBTest, IteratorBothDirectionsAcrossMemtableAndSegments) {
  Open();
  Put("b", "1");
  Put("d", "1");
  ASSERT_TRUE(db_->Flush().ok());
  Put("a", "2");
  Put("d", "2");
  Put("e", "2");
  ASSERT_TRUE(db_->Flush().ok());
  Put("c", "3");
  Delete("e");
  auto it = db_->NewIterator(ReadOptions());
  std::string fwd, back;
  for (it->SeekToFirst(); it->Valid(); it->Next())
    fwd += it->key().ToString() + it->value().ToString();
  for (it->SeekToLast(); it->Valid(); it->Prev())
    back += it->key().ToString() + it->value().ToString();
  EXPECT_EQ("a2b1c3d2", fwd);
  EXPECT_EQ("d2c3b1a2", back);
  it->Seek("bb");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("c", it->key().ToString());
  it->SeekForPrev("bb");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("b", it->key().ToString());
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("a", it->key().ToString());
  it->SeekForPrev("zzz");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("d", it->key().ToString());
  it->Seek("e");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

TEST_F(DBTest, IteratorKeepsItsViewWhileWritesAndFlushesGoOn) {
  Open();
  Put("a", "1");
  auto it = db_->NewIterator(ReadOptions());
  Put("a", "2");
  Put("b", "2");
  ASSERT_TRUE(db_->Flush().ok());
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("1", it->value().ToString());
  it->Next();
  EXPECT_FALSE(it->Valid());
}

TEST_F(DBTest, SnapshotsSeeTheirPointInTime) {
  Open();
  Put("k", "v1");
  const Snapshot* s1 = db_->GetSnapshot();
  Put("k", "v2");
  ASSERT_TRUE(db_->Flush().ok());
  const Snapshot* s2 = db_->GetSnapshot();
  Delete("k");
  Put("new", "x");
  EXPECT_EQ("v1", Get("k", s1));
  EXPECT_EQ("v2", Get("k", s2));
  EXPECT_EQ("NOT_FOUND", Get("k"));
  EXPECT_EQ("NOT_FOUND", Get("new", s2));
  ReadOptions ro;
  ro.snapshot = s1;
  EXPECT_EQ("k=v1;", Contents(ro));
  db_->ReleaseSnapshot(s1);
  db_->ReleaseSnapshot(s2);
}

TEST_F(DBTest, ManyLevelZeroSegmentsStillAnswerCorrectly) {
  test::KeepEverythingInLevelZero(&options_);
  Open();
  for (int i = 0; i < 120; i++) {
    Put("key" + std::to_string(i), "v" + std::to_string(i));
    if (i % 3 == 0) Put("shared", std::to_string(i));
    ASSERT_TRUE(db_->Flush().ok());
  }
  std::string n;
  ASSERT_TRUE(db_->GetProperty("bloomkv.num-files-at-level0", &n));
  EXPECT_EQ("120", n);
  EXPECT_EQ(120u, SegmentFiles().size());
  Open();
  for (int i = 0; i < 120; i++) {
    EXPECT_EQ("v" + std::to_string(i), Get("key" + std::to_string(i)));
  }
  EXPECT_EQ("117", Get("shared"));
  EXPECT_EQ("NOT_FOUND", Get("key120"));
  auto it = db_->NewIterator(ReadOptions());
  int count = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) count++;
  EXPECT_EQ(121, count);
}

TEST_F(DBTest, WriteBufferFillsTriggerBackgroundFlushes) {
  options_.write_buffer_size = 64 << 10;
  Open();
  const std::string value(1000, 'v');
  for (int i = 0; i < 2000; i++) Put("key" + std::to_string(i), value);
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_GT(db_->GetStats().flushes, 10u);
  for (int i = 0; i < 2000; i += 7)
    EXPECT_EQ(value, Get("key" + std::to_string(i)));
  Open();
  for (int i = 0; i < 2000; i += 7)
    EXPECT_EQ(value, Get("key" + std::to_string(i)));
}

TEST_F(DBTest, ObsoleteLogsAreDeleted) {
  Open();
  for (int round = 0; round < 5; round++) {
    Put("k" + std::to_string(round), "v");
    ASSERT_TRUE(db_->Flush().ok());
  }
  Open();
  std::vector<std::string> children;
  ASSERT_TRUE(Env::Default()->GetChildren(dir_.path(), &children).ok());
  int logs = 0, manifests = 0;
  for (const auto& c : children) {
    uint64_t n;
    FileType t;
    if (!ParseFileName(c, &n, &t)) continue;
    logs += t == FileType::kLogFile;
    manifests += t == FileType::kManifestFile;
  }
  EXPECT_EQ(1, logs);
  EXPECT_EQ(1, manifests);
}

// A compaction's inputs stay on disk while an iterator reads the version
// holding them. Closing the database after the iterator is gone deletes
// them: a segment left behind holds data the live ones no longer carry (a
// value whose tombstone a compaction dropped with it), which RepairDB,
// reading every segment in the directory, would bring back.
TEST_F(DBTest, SegmentsAnIteratorKeptAreDeletedWhenTheDatabaseCloses) {
  Open();
  Put("deleted", "old value");
  Put("kept", "value");
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  std::unique_ptr<Iterator> pin = db_->NewIterator(ReadOptions());
  Delete("deleted");
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  std::set<uint64_t> live;
  for (const SegmentInfo& seg : db_->GetSegmentInfo()) {
    live.insert(seg.file_number);
  }
  pin.reset();
  db_.reset();
  std::vector<std::string> children;
  ASSERT_TRUE(Env::Default()->GetChildren(dir_.path(), &children).ok());
  std::set<uint64_t> on_disk;
  for (const auto& c : children) {
    uint64_t n;
    FileType t;
    if (ParseFileName(c, &n, &t) && t == FileType::kSegmentFile) {
      on_disk.insert(n);
    }
  }
  EXPECT_EQ(live, on_disk);
}

TEST_F(DBTest, StatsAndProperties) {
  Open();
  Put("a", "1");
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ("1", Get("a"));
  EXPECT_EQ("NOT_FOUND", Get("zz"));
  DbStats st = db_->GetStats();
  EXPECT_EQ(2u, st.gets);
  EXPECT_EQ(1u, st.segments_consulted);
  EXPECT_EQ(1u, st.skipped_by_range);
  std::string text;
  ASSERT_TRUE(db_->GetProperty("bloomkv.stats", &text));
  EXPECT_NE(std::string::npos, text.find("gets: 2"));
  ASSERT_TRUE(db_->GetProperty("bloomkv.segments", &text));
  EXPECT_NE(std::string::npos, text.find("fp_theory"));
  ASSERT_TRUE(db_->GetProperty("bloomkv.approximate-memory-usage", &text));
  EXPECT_GT(std::stoull(text), 0u);
  EXPECT_FALSE(db_->GetProperty("bloomkv.no-such-property", &text));
  const std::vector<SegmentInfo> segs = db_->GetSegmentInfo();
  ASSERT_EQ(1u, segs.size());
  EXPECT_EQ(0, segs[0].level);
  EXPECT_EQ(1u, segs[0].num_entries);
  EXPECT_EQ("a", segs[0].smallest_key);
  EXPECT_EQ("a", segs[0].largest_key);
  EXPECT_TRUE(segs[0].has_filter);
  EXPECT_DOUBLE_EQ(10.0, segs[0].bits_per_key);
  EXPECT_GT(segs[0].filter_bytes, 0u);
  EXPECT_EQ(1u, segs[0].lookups);  // "zz" is outside the range
  EXPECT_EQ(1u, segs[0].filter_positives);
  EXPECT_TRUE(segs[0].readable);
  EXPECT_FALSE(db_->GetProperty("bloomkv.num-files-at-level9", &text));
}

TEST_F(DBTest, TraceRecordsEverySegmentConsidered) {
  options_.answer_cache_capacity = 0;  // every read searches its segments
  Open();
  Put("m", "1");
  ASSERT_TRUE(db_->Flush().ok());  // segment [m, m]
  Put("a", "2");
  Put("z", "2");
  ASSERT_TRUE(db_->Flush().ok());  // segment [a, z]
  GetTrace trace;
  ReadOptions ro;
  ro.trace = &trace;
  std::string v;
  EXPECT_TRUE(db_->Get(ro, "m", &v).ok());
  ASSERT_EQ(2u, trace.segments.size());
  // Newest first: [a, z] covers "m" but holds no "m".
  EXPECT_NE(SegmentOutcome::kSkippedByRange, trace.segments[0].outcome);
  EXPECT_NE(SegmentOutcome::kFound, trace.segments[0].outcome);
  EXPECT_EQ(SegmentOutcome::kFound, trace.segments[1].outcome);
  EXPECT_EQ("found", trace.result);
  EXPECT_TRUE(db_->Get(ro, "b", &v).IsNotFound());
  ASSERT_EQ(2u, trace.segments.size());
  EXPECT_EQ(SegmentOutcome::kSkippedByRange, trace.segments[1].outcome);
  EXPECT_EQ("not found", trace.result);
  EXPECT_NE(std::string::npos, trace.ToString().find("skipped by key range"));

  // Below level 0 one segment per level is a candidate, found by binary
  // search; a key past every range still shows the level as skipped. (A
  // full compaction of a small tree leaves one level, the last: level
  // targets are sized from the bottom up.)
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_TRUE(db_->Get(ro, "zzz", &v).IsNotFound());
  ASSERT_EQ(1u, trace.segments.size());
  EXPECT_EQ(6, trace.segments[0].level);
  EXPECT_EQ(SegmentOutcome::kSkippedByRange, trace.segments[0].outcome);
  EXPECT_TRUE(db_->Get(ro, "m", &v).ok());
  ASSERT_EQ(1u, trace.segments.size());
  EXPECT_EQ(SegmentOutcome::kFound, trace.segments[0].outcome);
}

// ---- bad input --------------------------------------------------------------

TEST_F(DBTest, RejectsEmptyAndOversizedKeysAndValues) {
  Open();
  std::string v;
  EXPECT_TRUE(db_->Put(WriteOptions(), "", "v").IsInvalidArgument());
  EXPECT_TRUE(db_->Get(ReadOptions(), "", &v).IsInvalidArgument());
  EXPECT_TRUE(db_->Delete(WriteOptions(), "").IsInvalidArgument());
  EXPECT_TRUE(db_->Put(WriteOptions(), std::string(kMaxKeySize + 1, 'k'), "v")
                  .IsInvalidArgument());
  Status s = db_->Put(WriteOptions(), "k", std::string(kMaxValueSize + 1, 'v'));
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(std::string::npos, s.ToString().find("limit"));
  ASSERT_TRUE(
      db_->Put(WriteOptions(), std::string(kMaxKeySize, 'k'), "v").ok());
  EXPECT_EQ("v", Get(std::string(kMaxKeySize, 'k')));
}

TEST_F(DBTest, OpenErrors) {
  options_.create_if_missing = false;
  db_.reset();
  Status s = DB::Open(options_, dir_.File("missing"), &db_);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(nullptr, db_);

  ASSERT_TRUE(
      WriteStringToFile(Env::Default(), "x", dir_.File("plainfile"), false)
          .ok());
  s = DB::Open(options_, dir_.File("plainfile"), &db_);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("not a directory"));

  options_.create_if_missing = true;
  Open();
  db_.reset();
  options_.error_if_exists = true;
  EXPECT_TRUE(TryOpen().IsInvalidArgument());

  Options bad = options_;
  bad.write_buffer_size = 10;
  EXPECT_TRUE(DB::Open(bad, dir_.path(), &db_).IsInvalidArgument());

  // The level-0 triggers are checked as a chain; the reason gives the
  // values, so that the one out of order can be seen.
  bad = options_;
  bad.level0_compaction_trigger = 8;
  bad.level0_slowdown_writes_trigger = 6;
  s = DB::Open(bad, dir_.path(), &db_);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos,
            s.ToString().find("compaction 8, slowdown 6, stop 36"))
      << s.ToString();
}

TEST_F(DBTest, GarbageDirectoryGivesCorruption) {
  Env* env = Env::Default();
  ASSERT_TRUE(
      WriteStringToFile(env, "not a manifest\n", dir_.File("CURRENT"), false)
          .ok());
  Status s = TryOpen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("CURRENT"));

  ASSERT_TRUE(
      WriteStringToFile(env, "MANIFEST-000001\n", dir_.File("CURRENT"), false)
          .ok());
  ASSERT_TRUE(WriteStringToFile(env, std::string(100, '\x5a'),
                                dir_.File("MANIFEST-000001"), false)
                  .ok());
  s = TryOpen();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string::npos, s.ToString().find("MANIFEST-000001"))
      << s.ToString();

  test::TempDir other;
  ASSERT_TRUE(
      WriteStringToFile(env, "junk", other.File("000003.log"), false).ok());
  std::unique_ptr<DB> db;
  s = DB::Open(options_, other.path(), &db);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

TEST_F(DBTest, SecondOpenInThisProcessFails) {
  Open();
  std::unique_ptr<DB> second;
  Status s = DB::Open(options_, dir_.path(), &second);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("in use"));
}

TEST_F(DBTest, DatabaseLockedByAnotherProcess) {
  Open();
  Put("k", "v");
  const std::string path = dir_.path();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Options o;
    std::unique_ptr<DB> db;
    Status s = DB::Open(o, path, &db);
    _exit(s.IsIOError() && s.ToString().find("in use") != std::string::npos
              ? 0
              : 1);
  }
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status));
  EXPECT_EQ("v", Get("k"));
}

TEST_F(DBTest, CorruptSegmentIsReportedAndTheRestStillAnswers) {
  Open();
  for (int i = 0; i < 100; i++)
    Put("a" + std::to_string(i), std::string(100, 'x'));
  ASSERT_TRUE(db_->Flush().ok());
  for (int i = 0; i < 100; i++)
    Put("b" + std::to_string(i), std::string(100, 'y'));
  ASSERT_TRUE(db_->Flush().ok());
  db_.reset();
  const std::vector<std::string> segs = SegmentFiles();
  ASSERT_EQ(2u, segs.size());
  // Damage the first data block of the older segment (the "a" keys).
  std::string data;
  ASSERT_TRUE(ReadFileToString(Env::Default(), segs[0], &data).ok());
  for (size_t i = 10; i < 60; i++) data[i] ^= 0x5a;
  ASSERT_TRUE(WriteStringToFile(Env::Default(), data, segs[0], false).ok());

  Open();
  std::string v;
  Status s = db_->Get(ReadOptions(), "a1", &v);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  const std::string name = segs[0].substr(segs[0].rfind('/') + 1);
  EXPECT_NE(std::string::npos, s.ToString().find(name)) << s.ToString();
  EXPECT_EQ(std::string(100, 'y'), Get("b7"));
  Put("c", "new");
  EXPECT_EQ("new", Get("c"));
}

TEST_F(DBTest, ReadOnlyOpenChangesNothing) {
  Open();
  Put("flushed", "1");
  ASSERT_TRUE(db_->Flush().ok());
  Put("in-log", "2");
  db_.reset();
  auto snapshot_files = [&] {
    std::map<std::string, std::string> files;
    std::vector<std::string> children;
    EXPECT_TRUE(Env::Default()->GetChildren(dir_.path(), &children).ok());
    for (const auto& c : children) {
      EXPECT_TRUE(
          ReadFileToString(Env::Default(), dir_.File(c), &files[c]).ok());
    }
    return files;
  };
  const auto before = snapshot_files();

  std::unique_ptr<DB> ro;
  ASSERT_TRUE(DB::OpenForReadOnly(options_, dir_.path(), &ro).ok());
  std::string v;
  ASSERT_TRUE(ro->Get(ReadOptions(), "flushed", &v).ok());
  EXPECT_EQ("1", v);
  ASSERT_TRUE(ro->Get(ReadOptions(), "in-log", &v).ok());
  EXPECT_EQ("2", v);
  EXPECT_TRUE(ro->Put(WriteOptions(), "k", "v").IsNotSupported());
  EXPECT_TRUE(ro->Flush().IsNotSupported());
  ro.reset();
  EXPECT_EQ(before, snapshot_files());

  // A read-only open works beside the process that has it open for writing,
  // and refuses a directory that holds no database.
  Open();
  ASSERT_TRUE(DB::OpenForReadOnly(options_, dir_.path(), &ro).ok());
  ro.reset();
  test::TempDir empty;
  EXPECT_TRUE(
      DB::OpenForReadOnly(options_, empty.path(), &ro).IsInvalidArgument());
}

TEST_F(DBTest, DestroyDBRemovesEverything) {
  Open();
  Put("k", "v");
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_TRUE(DestroyDB(dir_.path(), options_).IsIOError());  // still open
  db_.reset();
  ASSERT_TRUE(DestroyDB(dir_.path(), options_).ok());
  EXPECT_FALSE(Env::Default()->FileExists(dir_.path()));
  options_.create_if_missing = false;
  EXPECT_FALSE(TryOpen().ok());
}

}  // namespace
}  // namespace bloomkv
