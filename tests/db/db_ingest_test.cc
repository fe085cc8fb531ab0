// DB::IngestSegments: segments written by SegmentWriter join a database in
// one step. The tests hold it to db.h's promises: every key reads back and
// survives a reopen; every refused ingest (overlap among the files, with a
// segment or a memtable; a damaged, missing or foreign file) leaves the
// database byte for byte as it was; readers running meanwhile see all of
// an ingest or none of it; the ingested segments' filters skip absent keys;
// and a fault in any file operation of the ingest, with or without a crash
// after it, leaves a database that opens with all of the ingest or none.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "bloomkv/segment_writer.h"
#include "tests/testutil/fault_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Model = std::map<std::string, std::string>;
using test::FaultInjectionEnv;

std::string Key(const std::string& prefix, int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%06d", i);
  return prefix + buf;
}

std::string Value(const std::string& key) { return "https://x.test/" + key; }

std::string ReadAll(const std::string& path) {
  std::string data;
  EXPECT_TRUE(ReadFileToString(Env::Default(), path, &data).ok()) << path;
  return data;
}

// Every file of a database directory but the info log, with its contents.
std::map<std::string, std::string> DirContents(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const std::string& name : test::DatabaseFiles(dir)) {
    files[name] = ReadAll(dir + "/" + name);
  }
  return files;
}

// Writes keys prefix+[begin, end) with Value() into a segment at path; adds
// them to *model when given.
SegmentFileInfo WriteSegment(const Options& options, const std::string& path,
                             const std::string& prefix, int begin, int end,
                             Model* model = nullptr) {
  std::unique_ptr<SegmentWriter> w;
  Status s = SegmentWriter::Open(options, path, &w);
  EXPECT_TRUE(s.ok()) << s.ToString();
  SegmentFileInfo info;
  if (!s.ok()) return info;
  for (int i = begin; i < end; i++) {
    const std::string key = Key(prefix, i);
    EXPECT_TRUE(w->Put(key, Value(key)).ok());
    if (model != nullptr) (*model)[key] = Value(key);
  }
  s = w->Finish(&info);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return info;
}

// Everything db holds, read with an iterator.
Model Scan(DB* db, const ReadOptions& ro = ReadOptions()) {
  Model m;
  auto it = db->NewIterator(ro);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    m[it->key().ToString()] = it->value().ToString();
  }
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return m;
}

class IngestTest : public testing::Test {
 protected:
  IngestTest() {
    options_.create_if_missing = true;
    test::KeepEverythingInLevelZero(&options_);
  }

  void Open() {
    db_.reset();
    Status s = DB::Open(options_, db_dir_.path(), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // Keys "b..." in two flushed segments and "d..." in the memtable.
  void Populate() {
    for (int i = 0; i < 400; i++) {
      const std::string key = Key("b", i);
      ASSERT_TRUE(db_->Put(WriteOptions(), key, Value(key)).ok());
      model_[key] = Value(key);
      if (i == 199) {
        ASSERT_TRUE(db_->Flush().ok());
      }
    }
    ASSERT_TRUE(db_->Flush().ok());
    for (int i = 0; i < 50; i++) {
      const std::string key = Key("d", i);
      ASSERT_TRUE(db_->Put(WriteOptions(), key, Value(key)).ok());
      model_[key] = Value(key);
    }
  }

  std::string Source(const std::string& name) { return src_dir_.File(name); }

  Options options_;
  test::TempDir db_dir_{"ingest-db"};
  test::TempDir src_dir_{"ingest-src"};
  std::unique_ptr<DB> db_;
  Model model_;
};

TEST_F(IngestTest, EveryKeyReadsBackAndSurvivesReopen) {
  Open();
  Model ingested;
  std::vector<std::string> files;
  for (int f = 0; f < 3; f++) {
    files.push_back(Source(std::to_string(f) + ".seg"));
    WriteSegment(options_, files.back(), "k", f * 3000, f * 3000 + 3000,
                 &ingested);
  }
  Status s = db_->IngestSegments(files, IngestOptions());
  ASSERT_TRUE(s.ok()) << s.ToString();
  test::ExpectDbHolds(db_.get(), ingested);
  // All in the last level, as separate segments with filters.
  std::vector<SegmentInfo> segments = db_->GetSegmentInfo();
  ASSERT_EQ(3u, segments.size());
  for (const SegmentInfo& i : segments) {
    EXPECT_EQ(6, i.level);
    EXPECT_EQ(3000u, i.num_entries);
    EXPECT_TRUE(i.has_filter);
  }
  // The sources stay (move_files is false).
  for (const std::string& f : files) EXPECT_TRUE(Env::Default()->FileExists(f));

  Open();
  test::ExpectDbHolds(db_.get(), ingested);
  // A write after the ingest shadows it, before and after compaction.
  ASSERT_TRUE(db_->Put(WriteOptions(), Key("k", 7), "new").ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), Key("k", 8)).ok());
  ingested[Key("k", 7)] = "new";
  ingested.erase(Key("k", 8));
  test::ExpectDbHolds(db_.get(), ingested);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  test::ExpectDbHolds(db_.get(), ingested);
  Open();
  test::ExpectDbHolds(db_.get(), ingested);
}

TEST_F(IngestTest, LiveDatabaseTakesARangeItDoesNotUse) {
  Open();
  Populate();
  const std::string file = Source("c.seg");
  WriteSegment(options_, file, "c", 0, 1000, &model_);
  Status s = db_->IngestSegments({file}, IngestOptions());
  ASSERT_TRUE(s.ok()) << s.ToString();
  test::ExpectDbHolds(db_.get(), model_);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  test::ExpectDbHolds(db_.get(), model_);
  Open();
  test::ExpectDbHolds(db_.get(), model_);
}

TEST_F(IngestTest, MoveFilesRemovesTheSources) {
  Open();
  Model ingested;
  const std::string a = Source("a.seg"), b = Source("b.seg");
  WriteSegment(options_, a, "k", 0, 100, &ingested);
  WriteSegment(options_, b, "k", 100, 200, &ingested);
  IngestOptions io;
  io.move_files = true;
  ASSERT_TRUE(db_->IngestSegments({b, a}, io).ok());  // any order
  EXPECT_FALSE(Env::Default()->FileExists(a));
  EXPECT_FALSE(Env::Default()->FileExists(b));
  Open();
  test::ExpectDbHolds(db_.get(), ingested);
}

TEST_F(IngestTest, RewritingAnIngestedSourceLeavesTheDatabaseAlone) {
  Open();
  Model ingested;
  const std::string file = Source("a.seg");
  WriteSegment(options_, file, "k", 0, 100, &ingested);
  ASSERT_TRUE(db_->IngestSegments({file}, IngestOptions()).ok());
  // The database's file may be a hard link of this one: SegmentWriter
  // replaces it by rename, never in place.
  WriteSegment(options_, file, "z", 0, 10);
  Open();
  test::ExpectDbHolds(db_.get(), ingested);
}

TEST_F(IngestTest, EmptyListsAndEmptyFilesChangeNothing) {
  Open();
  Populate();
  const auto before = DirContents(db_dir_.path());
  ASSERT_TRUE(db_->IngestSegments({}, IngestOptions()).ok());
  const std::string empty = Source("empty.seg");
  WriteSegment(options_, empty, "k", 0, 0);
  ASSERT_TRUE(db_->IngestSegments({empty}, IngestOptions()).ok());
  EXPECT_EQ(before, DirContents(db_dir_.path()));
  test::ExpectDbHolds(db_.get(), model_);
}

TEST_F(IngestTest, RefusedIngestsLeaveTheDatabaseByteIdentical) {
  Open();
  Populate();
  // A tombstone in the memtable counts as holding its key.
  ASSERT_TRUE(db_->Delete(WriteOptions(), "f-deleted").ok());

  const std::string good = Source("good.seg");
  WriteSegment(options_, good, "k", 0, 500);
  const std::string overlaps_good = Source("overlaps-good.seg");
  WriteSegment(options_, overlaps_good, "k", 499, 600);
  const std::string over_segment = Source("over-segment.seg");
  WriteSegment(options_, over_segment, "b", 150, 160);  // inside "b" segments
  const std::string spans_segment = Source("spans-segment.seg");
  {
    // No key in common with the segments, but a range across them.
    std::unique_ptr<SegmentWriter> w;
    ASSERT_TRUE(SegmentWriter::Open(options_, spans_segment, &w).ok());
    ASSERT_TRUE(w->Put("a", "1").ok());
    ASSERT_TRUE(w->Put("c", "2").ok());
    SegmentFileInfo info;
    ASSERT_TRUE(w->Finish(&info).ok());
  }
  const std::string over_memtable = Source("over-memtable.seg");
  WriteSegment(options_, over_memtable, "d", 10, 20);
  const std::string over_tombstone = Source("over-tombstone.seg");
  {
    std::unique_ptr<SegmentWriter> w;
    ASSERT_TRUE(SegmentWriter::Open(options_, over_tombstone, &w).ok());
    ASSERT_TRUE(w->Put("f-a", "1").ok());
    ASSERT_TRUE(w->Put("f-z", "2").ok());
    SegmentFileInfo info;
    ASSERT_TRUE(w->Finish(&info).ok());
  }
  const std::string damaged = Source("damaged.seg");
  {
    WriteSegment(options_, damaged, "m", 0, 2000);
    std::string data = ReadAll(damaged);
    data[data.size() / 3] ^= 0x20;  // inside a data block
    ASSERT_TRUE(WriteStringToFile(Env::Default(), data, damaged, true).ok());
  }
  const std::string cut = Source("cut.seg");
  {
    WriteSegment(options_, cut, "n", 0, 2000);
    std::string data = ReadAll(cut);
    data.resize(data.size() - 10);  // the footer is gone
    ASSERT_TRUE(WriteStringToFile(Env::Default(), data, cut, true).ok());
  }
  const std::string no_filter = Source("no-filter.seg");
  {
    Options unfiltered = options_;
    unfiltered.filter_policy = nullptr;
    WriteSegment(unfiltered, no_filter, "p", 0, 100);
  }
  // A segment of a database: real sequence numbers, which an ingest must
  // never bring in.
  std::string foreign;
  {
    test::TempDir other_dir("ingest-other");
    std::unique_ptr<DB> other;
    ASSERT_TRUE(DB::Open(options_, other_dir.path(), &other).ok());
    ASSERT_TRUE(other->Put(WriteOptions(), "q1", "v").ok());
    ASSERT_TRUE(other->Flush().ok());
    foreign = Source("foreign.seg");
    const std::string data = ReadAll(other->GetSegmentInfo()[0].file_name);
    ASSERT_TRUE(WriteStringToFile(Env::Default(), data, foreign, true).ok());
  }
  const std::string missing = Source("missing.seg");

  struct Case {
    std::vector<std::string> files;
    bool (Status::*is)() const;
    const char* needle;
  };
  const Case cases[] = {
      {{good, overlaps_good}, &Status::IsInvalidArgument, "overlap"},
      {{good, good}, &Status::IsInvalidArgument, "overlap"},
      {{over_segment}, &Status::IsInvalidArgument, "overlaps segment"},
      {{spans_segment}, &Status::IsInvalidArgument, "overlaps segment"},
      {{good, over_memtable}, &Status::IsInvalidArgument, "memtable"},
      {{over_tombstone}, &Status::IsInvalidArgument, "memtable"},
      {{good, damaged}, &Status::IsCorruption, "damaged.seg"},
      {{cut}, &Status::IsCorruption, "cut.seg"},
      {{no_filter}, &Status::IsInvalidArgument, "filter"},
      {{foreign}, &Status::IsInvalidArgument, "sequence number"},
      {{good, missing}, &Status::IsInvalidArgument, "no such file"},
  };
  const auto before = DirContents(db_dir_.path());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.files.back());
    Status s = db_->IngestSegments(c.files, IngestOptions());
    EXPECT_TRUE((s.*c.is)()) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find(c.needle)) << s.ToString();
    EXPECT_EQ(before, DirContents(db_dir_.path()));
  }
  test::ExpectDbHolds(db_.get(), model_);
  // The database goes on working, and takes the good file alone.
  ASSERT_TRUE(db_->IngestSegments({good}, IngestOptions()).ok());
  for (int i = 0; i < 500; i++) model_[Key("k", i)] = Value(Key("k", i));
  Open();
  test::ExpectDbHolds(db_.get(), model_);
}

TEST_F(IngestTest, AnOverlapCreatedByAConcurrentWriteRefusesTheNextIngest) {
  Open();
  const std::string a = Source("a.seg");
  WriteSegment(options_, a, "k", 0, 100, &model_);
  ASSERT_TRUE(db_->IngestSegments({a}, IngestOptions()).ok());
  // The same range again: it is a segment now.
  const std::string again = Source("again.seg");
  WriteSegment(options_, again, "k", 50, 60);
  EXPECT_TRUE(
      db_->IngestSegments({again}, IngestOptions()).IsInvalidArgument());
  test::ExpectDbHolds(db_.get(), model_);
}

TEST_F(IngestTest, SnapshotsTakenBeforeSeeTheIngestedKeys) {
  // Documented in db.h: ingested keys have sequence number 0.
  Open();
  Populate();
  const Snapshot* snapshot = db_->GetSnapshot();
  const Model before = model_;
  const std::string file = Source("k.seg");
  WriteSegment(options_, file, "k", 0, 100, &model_);
  ASSERT_TRUE(db_->IngestSegments({file}, IngestOptions()).ok());
  ReadOptions ro;
  ro.snapshot = snapshot;
  EXPECT_EQ(model_, Scan(db_.get(), ro));
  // What the snapshot saw before is unchanged.
  for (const auto& [key, value] : before) {
    std::string v;
    ASSERT_TRUE(db_->Get(ro, key, &v).ok());
    EXPECT_EQ(value, v);
  }
  db_->ReleaseSnapshot(snapshot);
}

TEST_F(IngestTest, FiltersOfIngestedSegmentsSkipAbsentKeys) {
  options_.block_cache_capacity = 0;
  Open();
  std::vector<std::string> files;
  for (int f = 0; f < 4; f++) {
    files.push_back(Source(std::to_string(f) + ".seg"));
    // Even numbers only: the odd ones are absent but inside the ranges.
    std::unique_ptr<SegmentWriter> w;
    ASSERT_TRUE(SegmentWriter::Open(options_, files.back(), &w).ok());
    for (int i = f * 5000; i < f * 5000 + 5000; i += 2) {
      ASSERT_TRUE(w->Put(Key("k", i), Value(Key("k", i))).ok());
    }
    SegmentFileInfo info;
    ASSERT_TRUE(w->Finish(&info).ok());
  }
  ASSERT_TRUE(db_->IngestSegments(files, IngestOptions()).ok());
  const DbStats before = db_->GetStats();
  constexpr int kLookups = 10000;
  for (int i = 1; i < 2 * kLookups; i += 2) {
    std::string v;
    ASSERT_TRUE(db_->Get(ReadOptions(), Key("k", i), &v).IsNotFound());
  }
  const DbStats after = db_->GetStats();
  const uint64_t negatives = after.filter_negatives - before.filter_negatives;
  const uint64_t blocks = after.data_blocks_read - before.data_blocks_read;
  // About 1% false positives at 10 bits per key.
  EXPECT_GT(negatives, static_cast<uint64_t>(kLookups * 0.95));
  EXPECT_LT(blocks, static_cast<uint64_t>(kLookups * 0.05));
  std::string v;
  ASSERT_TRUE(db_->Get(ReadOptions(), Key("k", 4242), &v).ok());
  EXPECT_EQ(Value(Key("k", 4242)), v);
}

TEST_F(IngestTest, ConcurrentReadersSeeAllOfTheIngestOrNone) {
  Open();
  Populate();
  constexpr int kFiles = 4, kPerFile = 2000;
  std::vector<std::string> files;
  Model ingested;
  for (int f = 0; f < kFiles; f++) {
    files.push_back(Source(std::to_string(f) + ".seg"));
    WriteSegment(options_, files.back(), "k", f * kPerFile, (f + 1) * kPerFile,
                 &ingested);
  }
  std::atomic<bool> done{false};
  std::atomic<int> problems{0};
  std::atomic<uint64_t> partial_scans{0}, full_scans{0};
  std::vector<std::thread> threads;
  // Scanners: an iterator sees one state, with 0 or all ingested keys.
  for (int t = 0; t < 2; t++) {
    threads.emplace_back([&] {
      while (!done.load()) {
        uint64_t n = 0;
        auto it = db_->NewIterator(ReadOptions());
        for (it->Seek("k"); it->Valid() && it->key().starts_with("k");
             it->Next()) {
          n++;
        }
        if (!it->status().ok()) problems++;
        if (n == ingested.size()) {
          full_scans++;
        } else if (n != 0) {
          partial_scans++;
        }
      }
    });
  }
  // Point readers: once the last file's key is seen, the first file's is
  // there too (and stays).
  threads.emplace_back([&] {
    bool seen = false;
    while (!done.load()) {
      std::string v;
      const Status last =
          db_->Get(ReadOptions(), Key("k", kFiles * kPerFile - 1), &v);
      const Status first = db_->Get(ReadOptions(), Key("k", 0), &v);
      if (last.ok()) seen = true;
      if (seen && !first.ok()) problems++;
      if (!last.ok() && !last.IsNotFound()) problems++;
    }
  });
  // A writer outside the range.
  threads.emplace_back([&] {
    for (int i = 0; !done.load(); i++) {
      if (!db_->Put(WriteOptions(), Key("w", i), "v").ok()) problems++;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Status s = db_->IngestSegments(files, IngestOptions());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  done = true;
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(0, problems.load());
  EXPECT_EQ(0u, partial_scans.load());
  EXPECT_GT(full_scans.load(), 0u);
  for (const auto& [key, value] : ingested) model_[key] = value;
  Model found = Scan(db_.get());
  std::erase_if(found,
                [](const auto& kv) { return kv.first.starts_with("w"); });
  EXPECT_EQ(model_, found);
}

TEST_F(IngestTest, ConcurrentIngestsOfOneRangeLetOneIn) {
  Open();
  const std::string a = Source("a.seg"), b = Source("b.seg");
  WriteSegment(options_, a, "k", 0, 3000);
  WriteSegment(options_, b, "k", 1000, 4000);
  Status sa, sb;
  std::thread ta([&] { sa = db_->IngestSegments({a}, IngestOptions()); });
  std::thread tb([&] { sb = db_->IngestSegments({b}, IngestOptions()); });
  ta.join();
  tb.join();
  EXPECT_NE(sa.ok(), sb.ok()) << sa.ToString() << " / " << sb.ToString();
  EXPECT_TRUE(sa.ok() || sa.IsInvalidArgument()) << sa.ToString();
  EXPECT_TRUE(sb.ok() || sb.IsInvalidArgument()) << sb.ToString();
  Model expected;
  WriteSegment(options_, Source("model.seg"), "k", sa.ok() ? 0 : 1000,
               sa.ok() ? 3000 : 4000, &expected);
  test::ExpectDbHolds(db_.get(), expected);
}

TEST_F(IngestTest, ReadOnlyDatabasesRefuse) {
  Open();
  db_.reset();
  std::unique_ptr<DB> ro;
  ASSERT_TRUE(DB::OpenForReadOnly(options_, db_dir_.path(), &ro).ok());
  const std::string a = Source("a.seg");
  WriteSegment(options_, a, "k", 0, 10);
  EXPECT_TRUE(ro->IngestSegments({a}, IngestOptions()).IsNotSupported());
}

// ---- the fault loop --------------------------------------------------------

// Above the FaultInjectionEnv: links as the default Env does (the link
// itself is not modelled by the FaultInjectionEnv; what follows it is), or
// refuses every link so that the ingest copies and each of its file
// operations goes through the FaultInjectionEnv.
class LinkSwitchEnv final : public EnvWrapper {
 public:
  LinkSwitchEnv(Env* target, bool links) : EnvWrapper(target), links_(links) {}
  Status LinkFile(const std::string& src, const std::string& dst) override {
    if (!links_) return Status::NotSupported("no links in this test");
    return EnvWrapper::LinkFile(src, dst);
  }

 private:
  const bool links_;
};

const char* OpName(uint32_t op) {
  switch (op) {
    case FaultInjectionEnv::kOpen:
      return "open";
    case FaultInjectionEnv::kRead:
      return "read";
    case FaultInjectionEnv::kWrite:
      return "write";
    case FaultInjectionEnv::kSync:
      return "sync";
    case FaultInjectionEnv::kRename:
      return "rename";
    case FaultInjectionEnv::kRemove:
      return "remove";
    case FaultInjectionEnv::kClose:
      return "close";
    case FaultInjectionEnv::kMetadata:
      return "metadata";
  }
  return "?";
}

struct FaultRun {
  Status ingest;        // what IngestSegments returned
  bool sticky = false;  // a write after it failed (no crash runs only)
  Model durable;        // what the database held before the ingest
  Model ingested;       // what the ingest adds
  std::map<std::string, std::string> sources;  // path -> bytes
};

// One run: a database with data in a segment and in the log (synced), three
// source segments, and the ingest with call `fail_at` of kind `op` failing
// (fail_at < 0: nothing fails; the op counts are left in env).
void RunIngest(FaultInjectionEnv* env, Env* db_env, const std::string& db_dir,
               const std::string& src_dir, uint32_t op, int64_t fail_at,
               bool crash, FaultRun* run) {
  Options options;
  options.create_if_missing = true;
  options.env = db_env;
  test::KeepEverythingInLevelZero(&options);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, db_dir, &db).ok());
  WriteOptions sync;
  sync.sync = true;
  for (int i = 0; i < 100; i++) {
    const std::string key = Key("b", i);
    ASSERT_TRUE(db->Put(sync, key, Value(key)).ok());
    run->durable[key] = Value(key);
    if (i == 49) {
      ASSERT_TRUE(db->Flush().ok());
    }
  }
  Options plain;  // sources are written outside the database's Env
  std::vector<std::string> files;
  for (int f = 0; f < 3; f++) {
    files.push_back(src_dir + "/" + std::to_string(f) + ".seg");
    WriteSegment(plain, files.back(), "k", f * 300, f * 300 + 300,
                 &run->ingested);
    run->sources[files.back()] = ReadAll(files.back());
  }
  env->ResetOpCounts();
  if (fail_at >= 0) {
    env->InjectErrors(op, nullptr, static_cast<uint64_t>(fail_at), 1);
    env->SetDeactivateOnInjectedError(crash);
  }
  run->ingest = db->IngestSegments(files, IngestOptions());
  env->ClearInjectedErrors();
  if (!crash) run->sticky = !db->Put(WriteOptions(), "a-probe", "x").ok();
  if (!crash && !run->sticky)
    db->Delete(WriteOptions(), "a-probe").PermitUncheckedError();
  db.reset();
  if (crash) {
    ASSERT_TRUE(env->DropUnsyncedData().ok());
    env->SetFilesystemActive(true);
  }
}

// Reopens the database after a run and checks it; "" when all is well.
std::string CheckAfterRun(Env* db_env, const std::string& db_dir,
                          const FaultRun& run) {
  Options options;
  options.env = db_env;
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, db_dir, &db);
  if (!s.ok()) return "reopen failed: " + s.ToString();
  Model found = Scan(db.get());
  found.erase("a-probe");
  Model all = run.durable;
  for (const auto& kv : run.ingested) all[kv.first] = kv.second;
  const bool has_all = found == all;
  const bool has_none = found == run.durable;
  if (!has_all && !has_none) {
    return "holds " + std::to_string(found.size()) +
           " keys: neither the state before the ingest nor after it";
  }
  if (run.ingest.ok() && !has_all) return "an acknowledged ingest was lost";
  if (!run.ingest.ok() && !run.sticky && has_all) {
    return "a failed ingest (" + run.ingest.ToString() +
           ") is in the database, which took writes afterwards";
  }
  // No file is left that no version names.
  std::set<uint64_t> live;
  for (const SegmentInfo& i : db->GetSegmentInfo()) live.insert(i.file_number);
  for (const std::string& name : test::DatabaseFiles(db_dir)) {
    if (name.ends_with(".tmp")) return "left " + name;
    if (!name.ends_with(".seg")) continue;
    if (live.count(std::stoull(name)) == 0) return "left unreferenced " + name;
  }
  for (const auto& [path, bytes] : run.sources) {
    std::string now;
    if (!ReadFileToString(Env::Default(), path, &now).ok() || now != bytes) {
      return "source " + path + " changed";
    }
  }
  // A failed ingest can be tried again.
  if (has_none) {
    std::vector<std::string> files;
    for (const auto& kv : run.sources) files.push_back(kv.first);
    s = db->IngestSegments(files, IngestOptions());
    if (!s.ok()) return "retry after the failure: " + s.ToString();
    if (Scan(db.get()) != all) return "retry did not ingest everything";
  }
  return "";
}

void FaultLoop(bool links, bool crash) {
  test::NoFsyncEnv base(Env::Default());
  uint64_t counts[std::size(FaultInjectionEnv::kEachOp)];
  {
    test::TempDir db_dir("ingest-fault"), src_dir("ingest-fault-src");
    FaultInjectionEnv env(&base);
    LinkSwitchEnv db_env(&env, links);
    FaultRun run;
    RunIngest(&env, &db_env, db_dir.path(), src_dir.path(), 0, -1, false, &run);
    ASSERT_TRUE(run.ingest.ok()) << run.ingest.ToString();
    for (size_t k = 0; k < std::size(counts); k++) {
      counts[k] = env.op_count(FaultInjectionEnv::kEachOp[k]);
    }
    ASSERT_EQ("", CheckAfterRun(&db_env, db_dir.path(), run));
  }
  uint64_t points = 0, failed = 0;
  for (size_t k = 0; k < std::size(counts); k++) {
    const uint32_t op = FaultInjectionEnv::kEachOp[k];
    for (uint64_t i = 0; i < counts[k] + 2; i++) {
      SCOPED_TRACE(std::string("failing ") + OpName(op) + " call " +
                   std::to_string(i) + (links ? ", linking" : ", copying") +
                   (crash ? ", then crash" : ""));
      test::TempDir db_dir("ingest-fault"), src_dir("ingest-fault-src");
      FaultInjectionEnv env(&base);
      LinkSwitchEnv db_env(&env, links);
      FaultRun run;
      RunIngest(&env, &db_env, db_dir.path(), src_dir.path(), op,
                static_cast<int64_t>(i), crash, &run);
      points++;
      if (!run.ingest.ok()) failed++;
      EXPECT_EQ("", CheckAfterRun(&db_env, db_dir.path(), run))
          << "ingest returned " << run.ingest.ToString();
    }
  }
  std::cout << "[ loop     ] " << points << " injection points"
            << (links ? " (linking)" : " (copying)")
            << (crash ? " (crash after the error)" : "") << ", " << failed
            << " ingests failed\n";
  EXPECT_GT(failed, 0u);
}

TEST(IngestFaultLoopTest, EveryFailingCallWhileCopying) {
  FaultLoop(false, false);
}
TEST(IngestFaultLoopTest, EveryFailingCallWhileCopyingThenCrash) {
  FaultLoop(false, true);
}
TEST(IngestFaultLoopTest, EveryFailingCallWhileLinking) {
  FaultLoop(true, false);
}
TEST(IngestFaultLoopTest, EveryFailingCallWhileLinkingThenCrash) {
  FaultLoop(true, true);
}

}  // namespace
}  // namespace bloomkv
