// DB::DeleteRange: a key under a range tombstone is never returned, by Get,
// MultiGet or iterators, wherever its entry and the tombstone are (memtable,
// level 0, deep levels, after reopen, checkpoint and repair); snapshots from
// before still see it; compactions drop what it covers, and the manifest
// forgets it once nothing it covers is left. The random mix with every
// other operation is in db_model_test.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "bloomkv/checkpoint.h"
#include "bloomkv/db.h"
#include "bloomkv/repair.h"
#include "bloomkv/segment_writer.h"
#include "bloomkv/write_batch.h"
#include "tests/testutil/fault_env.h"
#include "tests/testutil/test_util.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Model = std::map<std::string, std::string>;

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%05d", i);
  return buf;
}

uint64_t NumRangeTombstones(DB* db) {
  std::string v;
  EXPECT_TRUE(db->GetProperty("bloomkv.num-range-tombstones", &v));
  return std::stoull(v);
}

class DBRangeDeleteTest : public testing::Test {
 protected:
  void Open() {
    db_.reset();
    Status s = DB::Open(options_, dir_.path(), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Fill(int n) {
    for (int i = 0; i < n; i++) {
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), "v" + Key(i)).ok());
      model_[Key(i)] = "v" + Key(i);
    }
  }
  void DeleteRange(int begin, int end) {
    Status s = db_->DeleteRange(WriteOptions(), Key(begin), Key(end));
    ASSERT_TRUE(s.ok()) << s.ToString();
    model_.erase(model_.lower_bound(Key(begin)), model_.lower_bound(Key(end)));
  }
  // Every key of [0, n) through Get and MultiGet, and the iterator both
  // ways, against model_.
  void Check(int n) {
    std::vector<std::string> keys;
    std::vector<Slice> slices;
    for (int i = 0; i < n; i++) keys.push_back(Key(i));
    for (const auto& k : keys) slices.emplace_back(k);
    std::vector<std::string> values;
    const std::vector<Status> statuses =
        db_->MultiGet(ReadOptions(), slices, &values);
    for (int i = 0; i < n; i++) {
      std::string v;
      Status s = db_->Get(ReadOptions(), keys[i], &v);
      auto m = model_.find(keys[i]);
      if (m == model_.end()) {
        ASSERT_TRUE(s.IsNotFound()) << keys[i] << " " << s.ToString();
        ASSERT_TRUE(statuses[i].IsNotFound()) << keys[i];
      } else {
        ASSERT_TRUE(s.ok()) << keys[i] << " " << s.ToString();
        ASSERT_EQ(m->second, v);
        ASSERT_TRUE(statuses[i].ok()) << keys[i];
        ASSERT_EQ(m->second, values[i]);
      }
    }
    test::ExpectDbHolds(db_.get(), model_);
    auto it = db_->NewIterator(ReadOptions());
    auto m = model_.rbegin();
    for (it->SeekToLast(); it->Valid(); it->Prev(), ++m) {
      ASSERT_NE(m, model_.rend());
      ASSERT_EQ(m->first, it->key().ToString());
    }
    ASSERT_EQ(m, model_.rend());
  }

  test::TempDir dir_;
  Options options_ = test::TinyCompactionOptions();
  std::unique_ptr<DB> db_;
  Model model_;
};

TEST_F(DBRangeDeleteTest, HidesCoveredKeysWhereverTheyAndTheTombstoneAre) {
  Open();
  Fill(2000);
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());  // deep levels
  Fill(100);                                             // memtable
  // Tombstone in the memtable over entries in segments and in the memtable.
  DeleteRange(50, 300);
  Check(2000);
  // A key written after the deletion is back.
  ASSERT_TRUE(db_->Put(WriteOptions(), Key(60), "again").ok());
  model_[Key(60)] = "again";
  Check(2000);
  // Flushed: the tombstone moves to the manifest.
  ASSERT_TRUE(db_->Flush().ok());
  DeleteRange(1000, 1500);
  Check(2000);
  Open();  // one tombstone from the manifest, one replayed from the log
  Check(2000);
  test::WaitForBackgroundWork(db_.get());
  Check(2000);
}

TEST_F(DBRangeDeleteTest, SnapshotsFromBeforeStillSeeTheKeysThroughCompaction) {
  Open();
  Fill(500);
  ASSERT_TRUE(db_->Flush().ok());
  const Snapshot* before = db_->GetSnapshot();
  const Model old = model_;
  DeleteRange(100, 200);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ReadOptions ro;
  ro.snapshot = before;
  std::string v;
  ASSERT_TRUE(db_->Get(ro, Key(150), &v).ok());
  EXPECT_EQ(old.at(Key(150)), v);
  test::ExpectDbHolds(db_.get(), model_);
  auto it = db_->NewIterator(ro);
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  EXPECT_EQ(old.size(), n);
  it.reset();
  // The snapshot kept the covered entries, so the tombstone stays too.
  EXPECT_EQ(1u, NumRangeTombstones(db_.get()));
  db_->ReleaseSnapshot(before);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(0u, NumRangeTombstones(db_.get()));
  Check(500);
}

TEST_F(DBRangeDeleteTest, CompactionDropsWhatItCoversAndTheManifestForgetsIt) {
  Open();
  Fill(3000);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  DeleteRange(0, 2500);
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(1u, NumRangeTombstones(db_.get()));
  const std::string k1 = Key(0), k2 = Key(2500);
  const Slice b(k1), e(k2);
  ASSERT_TRUE(db_->CompactRange(&b, &e).ok());
  EXPECT_EQ(0u, NumRangeTombstones(db_.get()));
  EXPECT_GE(db_->GetStats().compaction_range_drops, 2500u);
  Check(3000);
  Open();
  EXPECT_EQ(0u, NumRangeTombstones(db_.get()));
  Check(3000);
}

// Range tombstones count toward the memtable's size: a stream of range
// deletions alone fills memtables and flushes them at write_buffer_size, as
// puts do, instead of growing one memtable without bound.
TEST_F(DBRangeDeleteTest, RangeDeletionsFillTheMemtableAndAreFlushed) {
  options_.write_buffer_size = 64 << 10;
  Open();
  Fill(100);
  auto memtable_bytes = [this] {
    return test::ResourceUsage(db_.get()).at("memtable_bytes");
  };
  const uint64_t before = memtable_bytes();
  // Bounds of about 200 bytes each: 40 deletions hold 16 KB of keys.
  auto bound = [](int i, char c) { return Key(i) + std::string(190, c); };
  for (int i = 0; i < 40; i++) {
    ASSERT_TRUE(db_->DeleteRange(WriteOptions(), bound(i, 'a'), bound(i, 'b'))
                    .ok());
  }
  EXPECT_GE(memtable_bytes(), before + 40 * 2 * 200);
  // 2,000 of them: 800 KB of keys, a dozen write buffers, which the
  // memtables only stay under if each is switched and flushed in turn (to
  // the manifest: a memtable of range tombstones alone makes no segment).
  for (int i = 40; i < 2000; i++) {
    ASSERT_TRUE(db_->DeleteRange(WriteOptions(), bound(i % 100, 'a'),
                                 bound(i % 100, 'b'))
                    .ok());
    ASSERT_LE(memtable_bytes(), 3 * options_.write_buffer_size) << i;
  }
  // Each bound covers only keys that are not stored ("k00001aaa..." to
  // "k00001bbb..."), so every key is still there.
  Check(100);
  Open();
  Check(100);
}

TEST_F(DBRangeDeleteTest, BadBoundsAreInvalidArgumentAndChangeNothing) {
  Open();
  Fill(10);
  EXPECT_TRUE(db_->DeleteRange(WriteOptions(), Key(5), Key(2)).IsInvalidArgument());
  EXPECT_TRUE(db_->DeleteRange(WriteOptions(), Key(0),
                               std::string(kMaxKeySize + 1, 'k'))
                  .IsInvalidArgument());
  WriteBatch batch;
  batch.Put("k00003", "changed");
  batch.DeleteRange(Key(9), Key(1));
  EXPECT_TRUE(db_->Write(WriteOptions(), &batch).IsInvalidArgument());
  // An empty range deletes nothing.
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), Key(3), Key(3)).ok());
  EXPECT_EQ(0u, NumRangeTombstones(db_.get()));
  Check(10);
}

TEST_F(DBRangeDeleteTest, ABatchAppliesItsUpdatesInOrder) {
  Open();
  Fill(20);
  WriteBatch batch;
  batch.Put(Key(25), "before");  // deleted by the range that follows
  batch.DeleteRange(Key(5), Key(30));
  batch.Put(Key(7), "after");  // written after it: stays
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  model_.erase(model_.lower_bound(Key(5)), model_.lower_bound(Key(30)));
  model_[Key(7)] = "after";
  Check(30);
  ASSERT_TRUE(db_->Flush().ok());
  Open();
  Check(30);
}

TEST_F(DBRangeDeleteTest, CheckpointAndRepairKeepTheTombstones) {
  Open();
  Fill(1000);
  ASSERT_TRUE(db_->Flush().ok());
  DeleteRange(200, 400);
  ASSERT_TRUE(db_->Flush().ok());  // in the manifest only
  DeleteRange(600, 700);           // in the log only
  test::TempDir copy_parent;
  const std::string copy = copy_parent.path() + "/checkpoint";
  ASSERT_TRUE(CreateCheckpoint(db_.get(), copy).ok());
  {
    std::unique_ptr<DB> c;
    ASSERT_TRUE(DB::Open(options_, copy, &c).ok());
    test::ExpectDbHolds(c.get(), model_);
  }
  db_.reset();
  RepairReport report;
  Status s = RepairDB(options_, dir_.path(), &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Open();
  Check(1000);
  // Writes after the repair take sequences the tombstones do not cover.
  ASSERT_TRUE(db_->Put(WriteOptions(), Key(300), "new").ok());
  model_[Key(300)] = "new";
  Check(1000);
}

TEST_F(DBRangeDeleteTest, IngestingUnderARangeTombstoneIsRefused) {
  Open();
  Fill(10);
  DeleteRange(0, 5);
  const std::string path = dir_.path() + "/ingest.seg";
  {
    std::unique_ptr<SegmentWriter> w;
    ASSERT_TRUE(SegmentWriter::Open(options_, path, &w).ok());
    ASSERT_TRUE(w->Put("k00002x", "hidden").ok());
    SegmentFileInfo info;
    ASSERT_TRUE(w->Finish(&info).ok());
  }
  Status s = db_->IngestSegments({path}, IngestOptions());
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("range deletion"))
      << s.ToString();
  Check(10);
}

// A writer replaces the whole key space again and again with one batch (a
// DeleteRange over everything, then the keys of the round's parity with the
// round as value), while flushes and compactions move the tombstones from
// the memtables to the manifest and retire them. Readers on other threads
// never see a value older than the last round written before they looked,
// nor a key of the other parity (both what a lost tombstone would show), and
// an iterator sees exactly one round.
TEST_F(DBRangeDeleteTest, ConcurrentReadersSeeOneWholeRoundAtATime) {
  Open();
  constexpr int kKeys = 200;
  std::atomic<int> completed{0};
  auto write_round = [this](int round) {
    WriteBatch batch;
    batch.DeleteRange("", "l");
    for (int i = round % 2; i < kKeys; i += 2) {
      batch.Put(Key(i), std::to_string(round));
    }
    return db_->Write(WriteOptions(), &batch);
  };
  ASSERT_TRUE(write_round(0).ok());
  std::atomic<bool> done{false};
  std::atomic<int> problems{0};
  auto reader = [&](int id) {
    uint64_t n = 0;
    while (!done.load()) {
      const int before = completed.load();
      const int i = static_cast<int>(n++ % kKeys);
      std::string v;
      Status s = db_->Get(ReadOptions(), Key(i), &v);
      if (s.ok() && (std::stoi(v) < before || std::stoi(v) % 2 != i % 2)) {
        problems++;
      } else if (!s.ok() && !s.IsNotFound()) {
        problems++;
      }
      if (n % 50 != static_cast<uint64_t>(id)) continue;
      auto it = db_->NewIterator(ReadOptions());
      int count = 0, round = -1;
      for (it->SeekToFirst(); it->Valid(); it->Next(), count++) {
        const int r = std::stoi(it->value().ToString());
        if (count == 0) round = r;
        if (r != round || r < before) problems++;
      }
      if (count != kKeys / 2 || !it->status().ok()) problems++;
    }
  };
  std::thread r1(reader, 1), r2(reader, 2);
  for (int round = 1; round <= 150; round++) {
    ASSERT_TRUE(write_round(round).ok());
    completed = round;
    if (round % 40 == 0) {
      ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    }
  }
  done = true;
  r1.join();
  r2.join();
  EXPECT_EQ(0, problems.load());
  test::WaitForBackgroundWork(db_.get());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(0u, NumRangeTombstones(db_.get()));
}

// A DeleteRange still only in the memtable, its log unsynced, while
// compactions run: if a crash then loses it, it must take nothing with it
// (compactions apply flushed tombstones only). The recovered database holds
// either every key (the deletion lost) or none in its range (kept). The
// fill leaves everything in level 0; reopened with the usual triggers, the
// database starts the compactions that follow just as the deletion arrives.
TEST(DBRangeDeleteCrashTest, AnUnsyncedRangeDeletionLostInACrashTakesNothingWithIt) {
  int exercised = 0;
  for (int attempt = 0; attempt < 5 && exercised == 0; attempt++) {
    test::TempDir dir;
    test::FaultInjectionEnv env(Env::Default());
    Options options = test::TinyCompactionOptions();
    options.env = &env;
    options.max_background_compactions = 1;
    Options fill_options = options;
    test::KeepEverythingInLevelZero(&fill_options);
    constexpr int kKeys = 3000;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(fill_options, dir.path(), &db).ok());
    for (int i = 0; i < kKeys; i++) {
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), std::string(300, 'v')).ok());
    }
    db.reset();
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    ASSERT_TRUE(db->DeleteRange(WriteOptions(), Key(0), Key(kKeys)).ok());
    test::WaitForBackgroundWork(db.get());
    // One compaction thread: of the compactions run, all but the first
    // started after the deletion.
    if (db->GetStats().compactions >= 2) exercised++;
    env.SetFilesystemActive(false);
    db.reset();
    ASSERT_TRUE(env.DropUnsyncedData().ok());
    env.SetFilesystemActive(true);
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    int found = 0;
    auto it = db->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) found++;
    ASSERT_TRUE(it->status().ok());
    EXPECT_TRUE(found == 0 || found == kKeys) << found << " keys survived";
  }
  // Otherwise nothing here could have failed.
  EXPECT_GT(exercised, 0) << "no compaction ran while the deletion was unflushed";
}

}  // namespace
}  // namespace bloomkv
