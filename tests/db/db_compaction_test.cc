// Leveled compaction: levels, space reclaimed, filters rebuilt, snapshots and
// deletions respected, back-pressure, the compaction filter, and crashes in
// the middle of heavy compaction.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "bloomkv/compaction_filter.h"
#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "bloomkv/write_batch.h"
#include "db/compaction.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Model = std::map<std::string, std::string>;

Options TinyOptions() { return test::TinyCompactionOptions(); }

Model ReadAll(DB* db, const Snapshot* snap = nullptr) {
  Model m;
  ReadOptions ro;
  ro.snapshot = snap;
  auto it = db->NewIterator(ro);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    m[it->key().ToString()] = it->value().ToString();
  }
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return m;
}

uint64_t LiveSegmentBytes(DB* db) {
  uint64_t total = 0;
  for (const auto& s : db->GetSegmentInfo()) total += s.file_size;
  return total;
}

std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%08d", i);
  return buf;
}

// Every level below 0 must hold non-overlapping segments in key order.
void CheckLevelInvariants(DB* db) {
  std::map<int, std::vector<SegmentInfo>> levels;
  for (const auto& s : db->GetSegmentInfo()) levels[s.level].push_back(s);
  for (const auto& [level, segs] : levels) {
    if (level == 0) continue;
    for (size_t i = 1; i < segs.size(); i++) {
      ASSERT_LT(segs[i - 1].largest_key, segs[i].smallest_key)
          << "overlap at level " << level;
    }
  }
}

TEST(CompactionTest, DataMovesDownAndStaysReadable) {
  test::TempDir dir;
  Options options = TinyOptions();
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  Random rnd(7);
  Model model;
  for (int i = 0; i < 20000; i++) {
    const std::string k = Key(static_cast<int>(rnd.Uniform(5000)));
    const std::string v = test::RandomString(&rnd, 20 + rnd.Uniform(80));
    ASSERT_TRUE(db->Put(WriteOptions(), k, v).ok());
    model[k] = v;
  }
  ASSERT_TRUE(db->Flush().ok());
  const DbStats st = db->GetStats();
  EXPECT_GT(st.compactions, 3u);
  EXPECT_GT(st.compaction_bytes_written, 0u);
  EXPECT_GT(st.WriteAmplification(), 1.0);
  std::string levels;
  ASSERT_TRUE(db->GetProperty("bloomkv.levels", &levels));
  EXPECT_NE(std::string::npos, levels.find("L1"));
  int deeper = 0;
  for (const auto& s : db->GetSegmentInfo()) deeper += s.level > 0;
  EXPECT_GT(deeper, 0);
  CheckLevelInvariants(db.get());
  EXPECT_EQ(model, ReadAll(db.get()));
  for (const auto& [k, v] : model) {
    std::string got;
    ASSERT_TRUE(db->Get(ReadOptions(), k, &got).ok()) << k;
    ASSERT_EQ(v, got);
  }
  db.reset();
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  EXPECT_EQ(model, ReadAll(db.get()));
  CheckLevelInvariants(db.get());
}

TEST(CompactionTest, DeletingEverythingReclaimsTheSpace) {
  test::TempDir dir;
  Options options = TinyOptions();
  options.target_file_size = 256 << 10;
  options.max_bytes_for_level_base = 1 << 20;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  Random rnd(11);
  uint64_t peak = 0;
  for (int i = 0; i < 100000; i++) {
    ASSERT_TRUE(
        db->Put(WriteOptions(), Key(i), test::RandomString(&rnd, 100)).ok());
    if (i % 10000 == 0) peak = std::max(peak, LiveSegmentBytes(db.get()));
  }
  ASSERT_TRUE(db->Flush().ok());
  peak = std::max(peak, LiveSegmentBytes(db.get()));
  for (int i = 0; i < 100000; i++) {
    ASSERT_TRUE(db->Delete(WriteOptions(), Key(i)).ok());
    if (i % 10000 == 0) peak = std::max(peak, LiveSegmentBytes(db.get()));
  }
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  const uint64_t after = LiveSegmentBytes(db.get());
  EXPECT_GT(peak, 5u << 20);
  EXPECT_LT(after * 100, peak) << "after " << after << " peak " << peak;
  std::string v;
  EXPECT_TRUE(db->Get(ReadOptions(), Key(123), &v).IsNotFound());
  db.reset();
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  EXPECT_TRUE(db->Get(ReadOptions(), Key(99999), &v).IsNotFound());
  EXPECT_TRUE(ReadAll(db.get()).empty());
}

TEST(CompactionTest, OutputsGetFiltersSizedForExactlyTheirKeys) {
  test::TempDir dir;
  Options options = TinyOptions();
  options.deep_filter_policy = options.filter_policy;  // bloom, resizable
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  for (int round = 0; round < 3; round++) {  // overwrites shrink the output
    for (int i = 0; i < 3000; i++) {
      ASSERT_TRUE(
          db->Put(WriteOptions(), Key(i), std::string(50, 'a' + round)).ok());
    }
  }
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  uint64_t entries = 0;
  for (const auto& s : db->GetSegmentInfo()) {
    EXPECT_GT(s.level, 0);
    ASSERT_TRUE(s.has_filter);
    entries += s.num_entries;
    // bits_per_key x keys / 8, plus a small constant.
    EXPECT_LE(s.filter_bytes, s.num_entries * 10 / 8 + 128) << s.file_number;
    EXPECT_GE(s.filter_bytes, s.num_entries * 10 / 8) << s.file_number;
    EXPECT_LT(s.theoretical_fp_rate, 0.02);
  }
  EXPECT_EQ(3000u, entries);  // overwritten versions are gone
  // Inputs are deleted as soon as nothing reads them: the directory holds
  // exactly the live segments.
  std::set<std::string> live, on_disk;
  for (const auto& s : db->GetSegmentInfo()) live.insert(s.file_name);
  std::vector<std::string> children;
  ASSERT_TRUE(Env::Default()->GetChildren(dir.path(), &children).ok());
  for (const auto& c : children) {
    if (c.size() > 4 && c.substr(c.size() - 4) == ".seg")
      on_disk.insert(dir.File(c));
  }
  EXPECT_EQ(live, on_disk);
}

TEST(CompactionTest, SnapshotsAndDeletionsSurviveCompaction) {
  test::TempDir dir;
  Options options = TinyOptions();
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  for (int i = 0; i < 2000; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v1").ok());
  }
  const Snapshot* snap = db->GetSnapshot();
  const Model at_snapshot = ReadAll(db.get());
  for (int i = 0; i < 2000; i++) {
    if (i % 2 == 0) {
      ASSERT_TRUE(db->Delete(WriteOptions(), Key(i)).ok());
    } else {
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v2").ok());
    }
  }
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(at_snapshot, ReadAll(db.get(), snap));
  std::string v;
  ReadOptions ro;
  ro.snapshot = snap;
  ASSERT_TRUE(db->Get(ro, Key(10), &v).ok());
  EXPECT_EQ("v1", v);
  EXPECT_TRUE(db->Get(ReadOptions(), Key(10), &v).IsNotFound());
  db->ReleaseSnapshot(snap);
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  db.reset();
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  const Model now = ReadAll(db.get());
  ASSERT_EQ(1000u, now.size());
  for (int i = 0; i < 2000; i++) {
    Status s = db->Get(ReadOptions(), Key(i), &v);
    if (i % 2 == 0) {
      ASSERT_TRUE(s.IsNotFound()) << "resurrected " << Key(i);
    } else {
      ASSERT_TRUE(s.ok());
      ASSERT_EQ("v2", v);
    }
  }
}

// Drops values that start with "expired:".
class ExpiryFilter final : public CompactionFilter {
 public:
  const char* Name() const override { return "test.ExpiryFilter"; }
  bool Filter(int, const Slice&, const Slice& value) const override {
    calls++;
    return value.starts_with("expired:");
  }
  mutable std::atomic<int> calls{0};
};

TEST(CompactionTest, CompactionFilterRemovesEntriesWithoutUncoveringOlderOnes) {
  test::TempDir dir;
  Options options = TinyOptions();
  auto filter = std::make_shared<ExpiryFilter>();
  options.compaction_filter = filter;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "old", "live").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "keep", "live").ok());
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());  // both at level 1
  // A newer version that expires, above the older live one.
  ASSERT_TRUE(db->Put(WriteOptions(), "old", "expired:1").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "gone", "expired:2").ok());
  ASSERT_TRUE(db->Flush().ok());
  std::string v;
  ASSERT_TRUE(db->Get(ReadOptions(), "gone", &v).ok());  // not compacted yet
  // A snapshot protects what it sees from the filter.
  const Snapshot* snap = db->GetSnapshot();
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(db->Get(ReadOptions(), "gone", &v).ok());
  db->ReleaseSnapshot(snap);
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  EXPECT_TRUE(db->Get(ReadOptions(), "gone", &v).IsNotFound());
  EXPECT_TRUE(db->Get(ReadOptions(), "old", &v).IsNotFound())
      << "an older version came back: " << v;
  ASSERT_TRUE(db->Get(ReadOptions(), "keep", &v).ok());
  EXPECT_GE(db->GetStats().compaction_filter_drops, 2u);
  EXPECT_GT(filter->calls.load(), 0);
  // A second full compaction drops the tombstones too: nothing is left of
  // the expired keys.
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  uint64_t entries = 0;
  for (const auto& s : db->GetSegmentInfo()) entries += s.num_entries;
  EXPECT_EQ(1u, entries);
}

// A filter that blocks the first compaction until the test lets it go, to
// hold level 0 above the slowdown trigger deterministically.
class GateFilter final : public CompactionFilter {
 public:
  const char* Name() const override { return "test.Gate"; }
  bool Filter(int, const Slice&, const Slice&) const override {
    if (!entered.exchange(true)) {
      entered_promise.set_value();
      release.wait();
    }
    return false;
  }
  mutable std::atomic<bool> entered{false};
  mutable std::promise<void> entered_promise;
  std::promise<void> release_promise;
  std::shared_future<void> release{release_promise.get_future().share()};
};

TEST(CompactionTest, WritesSlowDownWhileLevelZeroPilesUp) {
  test::TempDir dir;
  Options options = TinyOptions();
  options.level0_compaction_trigger = 2;
  options.level0_slowdown_writes_trigger = 2;
  options.level0_stop_writes_trigger = 100;
  auto gate = std::make_shared<GateFilter>();
  options.compaction_filter = gate;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  auto entered = gate->entered_promise.get_future();
  ASSERT_TRUE(db->Put(WriteOptions(), "a", "1").ok());
  ASSERT_TRUE(db->Flush().ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "b", "2").ok());
  ASSERT_TRUE(db->Flush().ok());
  entered.wait();  // the compaction of the two segments is under way
  const uint64_t before = db->GetStats().stall_micros;
  // Writes are paced by their bytes: 32 KiB at the default 16 MiB/s owe
  // about 2 ms.
  const std::string c(32 << 10, '3');
  ASSERT_TRUE(db->Put(WriteOptions(), "c", c).ok());
  EXPECT_GE(db->GetStats().stall_micros - before, 1000u);
  gate->release_promise.set_value();
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  std::string n;
  ASSERT_TRUE(db->GetProperty("bloomkv.num-files-at-level0", &n));
  EXPECT_EQ("0", n);
  const Model expected{{"a", "1"}, {"b", "2"}, {"c", c}};
  EXPECT_EQ(expected, ReadAll(db.get()));
}

std::string FilesAtLevel0(DB* db) {
  std::string n;
  EXPECT_TRUE(db->GetProperty("bloomkv.num-files-at-level0", &n));
  return n;
}

// One flush makes one level-0 segment, which stays there (the trigger is
// four) until lookups ask for it; it compacts into the last level.
Options OneLevel0SegmentOptions() {
  Options options = TinyOptions();
  options.write_buffer_size = 4 << 20;
  options.max_bytes_for_level_base = 64 << 20;
  options.level0_compaction_trigger = 4;
  return options;
}

// The even keys below n in the last level, then every tenth of them again
// in one level-0 segment that spans them all; 100-byte values, in *model.
void PutBelowThenInOneLevel0Segment(DB* db, int n, Random* rnd, Model* model) {
  for (int step : {2, 20}) {
    for (int i = 0; i < n; i += step) {
      (*model)[Key(i)] = test::RandomString(rnd, 100);
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), (*model)[Key(i)]).ok());
    }
    if (step == 2) {
      ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    }
  }
  ASSERT_TRUE(db->Flush().ok());
  test::WaitForBackgroundWork(db);
  ASSERT_EQ("1", FilesAtLevel0(db));
}

// Lookups that consult a level-0 segment in vain (its filter says no, or a
// false positive) compact level 0 down once they would have paid for
// rewriting it and the level it goes into (kBytesPerWastedLevel0Consult
// bytes each), though it holds fewer segments than its trigger, as
// LevelDB's seek-triggered compaction does; before that, or with
// Options::read_triggered_compaction off, level 0 stays. Gets and MultiGet
// batches (which rarely end on a multiple of the check interval) alike.
TEST(CompactionTest, LookupsThatConsultLevel0InVainCompactItDown) {
  for (int variant = 0; variant < 4; variant++) {
    const bool enabled = variant < 2;
    const bool batched = variant % 2 == 1;
    SCOPED_TRACE(enabled ? "read_triggered_compaction on" : "off");
    SCOPED_TRACE(batched ? "MultiGet" : "Get");
    test::TempDir dir;
    Options options = OneLevel0SegmentOptions();
    options.read_triggered_compaction = enabled;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    Random rnd(301);
    Model model;
    ASSERT_NO_FATAL_FAILURE(
        PutBelowThenInOneLevel0Segment(db.get(), 30000, &rnd, &model));

    uint64_t rewrite = 0;  // level 0 and the level it compacts into
    int below = kNumLevels;
    for (const SegmentInfo& s : db->GetSegmentInfo()) {
      if (s.level > 0) below = std::min(below, s.level);
    }
    for (const SegmentInfo& s : db->GetSegmentInfo()) {
      if (s.level == 0 || s.level == below) rewrite += s.file_size;
    }
    const uint64_t needed = rewrite / kBytesPerWastedLevel0Consult + 1;
    // Odd keys: in level 0's key range, in no segment.
    auto absent_key = [&] {
      return Key(2 * static_cast<int>(rnd.Uniform(15000)) + 1);
    };
    auto look_up_absent_keys = [&](uint64_t n) {
      std::string value;
      for (uint64_t i = 0; i < n && !batched; i++) {
        const Status s = db->Get(ReadOptions(), absent_key(), &value);
        ASSERT_TRUE(s.IsNotFound()) << s.ToString();
      }
      for (uint64_t done = 0; done < n && batched;) {
        std::vector<std::string> keys(std::min<uint64_t>(1000, n - done));
        for (std::string& k : keys) k = absent_key();
        const std::vector<Slice> slices(keys.begin(), keys.end());
        std::vector<std::string> values;
        for (const Status& s : db->MultiGet(ReadOptions(), slices, &values)) {
          ASSERT_TRUE(s.IsNotFound()) << s.ToString();
        }
        done += keys.size();
      }
    };
    look_up_absent_keys(needed / 2);
    test::WaitForBackgroundWork(db.get());
    EXPECT_EQ("1", FilesAtLevel0(db.get())) << "compacted for too few reads";
    EXPECT_EQ(0u, db->GetStats().read_triggered_compactions);

    look_up_absent_keys(needed + (1 << 17));
    test::WaitForBackgroundWork(db.get());
    EXPECT_EQ(enabled ? "0" : "1", FilesAtLevel0(db.get()));
    EXPECT_EQ(enabled ? 1u : 0u, db->GetStats().read_triggered_compactions);
    EXPECT_EQ(model, ReadAll(db.get()));
    CheckLevelInvariants(db.get());
  }
}

// A read-only database runs no compaction: lookups that would ask for
// level 0's leave it as it is, and "bloomkv.compaction-pending" at 0.
TEST(CompactionTest, ReadOnlyDatabaseKeepsLevel0ForItsLookups) {
  test::TempDir dir;
  const Options options = OneLevel0SegmentOptions();
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    Random rnd(302);
    Model model;
    ASSERT_NO_FATAL_FAILURE(
        PutBelowThenInOneLevel0Segment(db.get(), 4000, &rnd, &model));
  }
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::OpenForReadOnly(options, dir.path(), &db).ok());
  std::string value;
  for (int n = 0; n < 3 << 16; n++) {  // three checks
    ASSERT_TRUE(
        db->Get(ReadOptions(), Key(2 * (n % 2000) + 1), &value).IsNotFound());
  }
  std::string pending;
  ASSERT_TRUE(db->GetProperty("bloomkv.compaction-pending", &pending));
  EXPECT_EQ("0", pending);
  EXPECT_EQ("1", FilesAtLevel0(db.get()));
  EXPECT_EQ(0u, db->GetStats().read_triggered_compactions);
}

// A child process writes (sync) with tiny options so that flushes and
// compactions run all the time, and is killed at a random moment; each
// reopen must hold every acknowledged write and no deleted key.
TEST(CompactionTest, KilledDuringHeavyCompactionLosesNothing) {
  test::TempDir dir;
  Model model;  // state after the last verified reopen
  Random rnd(test::TestSeeds()[0]);
  for (int round = 0; round < 8; round++) {
    SCOPED_TRACE("round=" + std::to_string(round));
    const uint64_t op_seed = rnd.Next64();
    // The operation sequence both processes derive from op_seed.
    auto op = [](Random* r, std::string* key, std::string* value) {
      *key = Key(static_cast<int>(r->Uniform(3000)));
      if (r->Uniform(5) == 0) {
        value->clear();  // delete
      } else {
        *value = test::RandomString(r, 1 + r->Uniform(200));
      }
    };
    int fds[2];
    ASSERT_EQ(0, pipe(fds));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      std::unique_ptr<DB> db;
      if (!DB::Open(TinyOptions(), dir.path(), &db).ok()) _exit(2);
      Random r(op_seed);
      WriteOptions wo;
      wo.sync = true;
      for (int i = 0;; i++) {
        std::string k, v;
        op(&r, &k, &v);
        Status s = v.empty() ? db->Delete(wo, k) : db->Put(wo, k, v);
        if (!s.ok()) _exit(3);
        if (write(fds[1], &i, sizeof(i)) != sizeof(i)) _exit(4);
      }
    }
    close(fds[1]);
    // The kill comes at a random moment after the child is up and writing.
    int acked = -1, i;
    if (read(fds[0], &i, sizeof(i)) == sizeof(i)) acked = i;
    std::this_thread::sleep_for(
        std::chrono::milliseconds(50 + rnd.Uniform(400)));
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    while (read(fds[0], &i, sizeof(i)) == sizeof(i)) acked = i;
    close(fds[0]);
    ASSERT_GE(acked, 0) << "the child acknowledged nothing";

    // Replay the acknowledged operations on the model, and the one after
    // them, which may or may not have reached the log.
    Random r(op_seed);
    std::string k, v;
    for (int j = 0; j <= acked; j++) {
      op(&r, &k, &v);
      if (v.empty()) {
        model.erase(k);
      } else {
        model[k] = v;
      }
    }
    Model with_next = model;
    op(&r, &k, &v);
    if (v.empty()) {
      with_next.erase(k);
    } else {
      with_next[k] = v;
    }

    std::unique_ptr<DB> db;
    Status s = DB::Open(TinyOptions(), dir.path(), &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const Model recovered = ReadAll(db.get());
    ASSERT_TRUE(recovered == model || recovered == with_next)
        << "lost or resurrected data after " << acked + 1 << " operations";
    CheckLevelInvariants(db.get());
    model = recovered;
  }
}

}  // namespace
}  // namespace bloomkv
