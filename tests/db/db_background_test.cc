// Background work as writers see it: a memtable flush never waits behind a
// compaction, nor do writes behind the deletion of its inputs; while level
// 0 is above the slowdown trigger, writes are paced to a byte rate (not
// delayed a fixed time each); compactions read their inputs in large
// sequential reads and sync each output while they write the next.
//
// A compaction is held still by an Env that blocks every read at offset 0
// of a segment: only the first data block lives there (the index, filter,
// properties and footer that opening a segment reads come after the data),
// and these tests issue no Get, so the only such read is a compaction
// starting to merge an input. Time is simulated where the DB sleeps:
// Env::SleepForMicroseconds advances the clock instead of waiting, so no
// assertion here depends on how fast the machine is.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "bloomkv/statistics.h"
#include "db/write_delay.h"
#include "tests/testutil/capturing_logger.h"
#include "tests/testutil/test_util.h"
#include "util/counting_env.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Model = std::map<std::string, std::string>;

bool IsSegment(const std::string& f) {
  return f.size() > 4 && f.compare(f.size() - 4, 4, ".seg") == 0;
}

// Holds compactions (see the top of the file) and simulates the clock.
class HoldCompactionEnv final : public EnvWrapper {
 public:
  explicit HoldCompactionEnv(Env* target) : EnvWrapper(target) {}

  // From now on, a read at offset 0 of a segment blocks until Release().
  void Hold() {
    std::lock_guard<std::mutex> guard(mu_);
    holding_ = true;
  }
  // From now on, removing a segment file blocks until Release().
  void HoldRemovals() {
    std::lock_guard<std::mutex> guard(mu_);
    holding_removals_ = true;
  }
  void Release() {
    std::lock_guard<std::mutex> guard(mu_);
    holding_ = false;
    holding_removals_ = false;
    cv_.notify_all();
  }
  // Releases the held reads only: removals stay held.
  void ReleaseReads() {
    std::lock_guard<std::mutex> guard(mu_);
    holding_ = false;
    cv_.notify_all();
  }
  // Waits until some reader or remover is blocked by Hold() or
  // HoldRemovals().
  void WaitUntilBlocked() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return blocked_ > 0; });
  }
  int blocked() {
    std::lock_guard<std::mutex> guard(mu_);
    return blocked_;
  }

  uint64_t NowMicros() override { return clock_.load(); }
  void SleepForMicroseconds(uint64_t micros) override {
    slept_ += micros;
    clock_ += micros;
  }
  uint64_t slept() const { return slept_.load(); }

  Status NewRandomAccessFile(const std::string& f,
                             std::unique_ptr<RandomAccessFile>* r) override {
    Status s = target()->NewRandomAccessFile(f, r);
    if (s.ok() && IsSegment(f))
      *r = std::make_unique<File>(this, std::move(*r));
    return s;
  }
  Status RemoveFile(const std::string& f) override {
    if (IsSegment(f)) MaybeBlock(&holding_removals_);
    return target()->RemoveFile(f);
  }

 private:
  class File final : public RandomAccessFile {
   public:
    File(HoldCompactionEnv* env, std::unique_ptr<RandomAccessFile> t)
        : env_(env), t_(std::move(t)) {}
    Status Read(uint64_t offset, size_t n, Slice* result,
                char* scratch) const override {
      if (offset == 0) env_->MaybeBlock(&env_->holding_);
      return t_->Read(offset, n, result, scratch);
    }

   private:
    HoldCompactionEnv* const env_;
    std::unique_ptr<RandomAccessFile> t_;
  };

  // Blocks while *holding (holding_ or holding_removals_).
  void MaybeBlock(const bool* holding) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!*holding) return;
    blocked_++;
    cv_.notify_all();
    cv_.wait(lock, [holding] { return !*holding; });
    blocked_--;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool holding_ = false;           // GUARDED_BY(mu_)
  bool holding_removals_ = false;  // GUARDED_BY(mu_)
  int blocked_ = 0;       // GUARDED_BY(mu_)
  std::atomic<uint64_t> clock_{1'000'000};
  std::atomic<uint64_t> slept_{0};
};

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%06d", i);
  return buf;
}

int NumFilesAtLevel(DB* db, int level) {
  std::string v;
  EXPECT_TRUE(db->GetProperty(
      "bloomkv.num-files-at-level" + std::to_string(level), &v));
  return std::stoi(v);
}

void ExpectContents(DB* db, const Model& model) {
  for (const auto& [k, v] : model) {
    std::string value;
    Status s = db->Get(ReadOptions(), k, &value);
    ASSERT_TRUE(s.ok()) << k << ": " << s.ToString();
    ASSERT_EQ(v, value) << k;
  }
  size_t n = 0;
  auto it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  EXPECT_EQ(model.size(), n);
}

class BackgroundTest : public ::testing::Test {
 protected:
  BackgroundTest() : env_(Env::Default()) {
    options_ = test::TinyCompactionOptions();
    options_.env = &env_;
    // Nothing but the memtable waits on level 0 in these tests.
    options_.level0_slowdown_writes_trigger = 1000;
    options_.level0_stop_writes_trigger = 1000;
  }
  ~BackgroundTest() override {
    env_.Release();
    db_.reset();
  }

  void Open() { ASSERT_TRUE(DB::Open(options_, dir_.path(), &db_).ok()); }

  // Writes keys [from, to) with 100-byte values, then flushes them into one
  // level-0 segment.
  void WriteAndFlush(int from, int to, Random* rnd) {
    WriteKeys(from, to, rnd);
    ASSERT_TRUE(db_->Flush().ok());
  }
  void WriteKeys(int from, int to, Random* rnd) {
    for (int i = from; i < to; i++) {
      const std::string value = test::RandomString(rnd, 100);
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), value).ok());
      model_[Key(i)] = value;
    }
  }

  // Two level-0 segments with the compaction trigger at two: the level-0
  // compaction starts, and is held at its first read.
  void StartHeldCompaction(Random* rnd) {
    ASSERT_EQ(2, options_.level0_compaction_trigger);
    env_.Hold();
    Open();
    WriteAndFlush(0, 200, rnd);
    WriteAndFlush(100, 300, rnd);
    env_.WaitUntilBlocked();
  }

  test::TempDir dir_;
  HoldCompactionEnv env_;
  Options options_;
  std::unique_ptr<DB> db_;
  Model model_;
};

TEST_F(BackgroundTest, FlushCompletesWhileACompactionIsRunning) {
  Random rnd(301);
  StartHeldCompaction(&rnd);
  WriteKeys(300, 400, &rnd);
  // Flush on another thread: if it waited for the compaction, it would
  // never end while the compaction is held. The deadline only turns such a
  // hang into a failure; it is generous enough for any machine.
  auto flush = std::async(std::launch::async, [this] { return db_->Flush(); });
  const bool finished =
      flush.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  EXPECT_TRUE(finished) << "Flush waited for the held compaction";
  EXPECT_EQ(1, env_.blocked()) << "the compaction should still be held";
  if (finished) {
    EXPECT_EQ(3, NumFilesAtLevel(db_.get(), 0));
    // Writes go on too, through several more memtables.
    WriteKeys(400, 1500, &rnd);
    EXPECT_EQ(1, env_.blocked());
    EXPECT_LT(3, NumFilesAtLevel(db_.get(), 0));
  }
  env_.Release();
  ASSERT_TRUE(flush.get().ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(0, NumFilesAtLevel(db_.get(), 0));
  ExpectContents(db_.get(), model_);
  db_.reset();
  Open();
  ExpectContents(db_.get(), model_);
}

TEST_F(BackgroundTest, WritesGoOnWhileObsoleteSegmentsAreDeleted) {
  // A compaction's inputs are deleted once it is installed. An unlink can
  // take long (a file system that discards freed blocks as it unlinks);
  // writes, flushes and the other background work must not wait for it.
  Random rnd(302);
  Open();
  WriteAndFlush(0, 200, &rnd);
  env_.HoldRemovals();
  WriteAndFlush(100, 300, &rnd);  // level 0 reaches its trigger: compaction
  env_.WaitUntilBlocked();        // its first input's deletion is held
  // Writes and a flush on another thread; the deadline only turns a hang
  // into a failure.
  auto more = std::async(std::launch::async, [this, &rnd] {
    WriteKeys(300, 600, &rnd);
    return db_->Flush();
  });
  const bool finished =
      more.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  EXPECT_TRUE(finished) << "writes waited for a segment's deletion";
  EXPECT_EQ(1, env_.blocked()) << "the deletion should still be held";
  env_.Release();
  ASSERT_TRUE(more.get().ok());
  test::WaitForBackgroundWork(db_.get());
  ExpectContents(db_.get(), model_);
  db_.reset();
  Open();
  ExpectContents(db_.get(), model_);
}

// Level 0 held above the slowdown trigger: small writes are paced by the
// bytes they write, so their delay adds up to far less than a fixed delay
// per write would.
TEST_F(BackgroundTest, SlowdownPacesBytesNotWrites) {
  options_.level0_slowdown_writes_trigger = 2;
  constexpr uint64_t kRate = 4 << 20;
  options_.delayed_write_rate = kRate;
  // One memtable holds every write: no flush needed while level 0 is held.
  options_.write_buffer_size = 8 << 20;
  Random rnd(302);
  StartHeldCompaction(&rnd);

  constexpr int kWrites = 2000;
  constexpr size_t kValueSize = 100;
  const DbStats before = db_->GetStats();
  const uint64_t slept_before = env_.slept();
  for (int i = 0; i < kWrites; i++) {
    const std::string value = test::RandomString(&rnd, kValueSize);
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(1000 + i), value).ok());
    model_[Key(1000 + i)] = value;
  }
  const DbStats after = db_->GetStats();
  const uint64_t slept = env_.slept() - slept_before;
  const uint64_t delayed = after.stall_micros - before.stall_micros;
  const uint64_t bytes = after.user_bytes_written - before.user_bytes_written;
  EXPECT_EQ(1, env_.blocked());
  // The writes were delayed, through the Env's clock, by what their bytes
  // cost at the rate (but for a last debt too small to sleep off)...
  EXPECT_EQ(slept, delayed);
  EXPECT_EQ(delayed, after.write_delay_micros - before.write_delay_micros);
  const uint64_t cost = bytes * 1'000'000 / kRate;
  EXPECT_GE(cost, delayed);
  EXPECT_LE(cost - 1000, delayed);
  // ... which is far less than 1 ms per write (~220 KB at 4 MiB/s take
  // about 50 ms, not 2 s).
  EXPECT_LT(delayed, uint64_t{kWrites} * 1000 / 10) << bytes << " bytes";

  env_.Release();
  ExpectContents(db_.get(), model_);
}

// With the default triggers, level 0 grows to 19 segments behind a held
// compaction without a write being delayed; at 20 writes are paced.
TEST_F(BackgroundTest, DefaultTriggersPaceWritesFromTwentyLevelZeroSegments) {
  const Options defaults;
  ASSERT_EQ(20, defaults.level0_slowdown_writes_trigger);
  ASSERT_EQ(36, defaults.level0_stop_writes_trigger);
  options_.level0_slowdown_writes_trigger =
      defaults.level0_slowdown_writes_trigger;
  options_.level0_stop_writes_trigger = defaults.level0_stop_writes_trigger;
  Random rnd(303);
  StartHeldCompaction(&rnd);
  for (int i = 2; i < 19; i++) WriteAndFlush(i * 100, i * 100 + 100, &rnd);
  ASSERT_EQ(19, NumFilesAtLevel(db_.get(), 0));
  WriteKeys(5000, 5300, &rnd);
  DbStats stats = db_->GetStats();
  EXPECT_EQ(0u, stats.write_delay_micros);
  EXPECT_EQ(0u, stats.write_stop_micros);
  EXPECT_EQ(0u, env_.slept());

  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_EQ(20, NumFilesAtLevel(db_.get(), 0));
  // ~33 KB at 16 MiB/s: about 2 ms of debt, slept off.
  WriteKeys(6000, 6300, &rnd);
  stats = db_->GetStats();
  EXPECT_LT(0u, stats.write_delay_micros);
  EXPECT_EQ(0u, stats.write_stop_micros);
  EXPECT_EQ(stats.write_delay_micros, env_.slept());
  EXPECT_EQ(1, env_.blocked());

  env_.Release();
  ExpectContents(db_.get(), model_);
}

// Behind a compaction that cannot finish, level 0 grows past the slowdown
// trigger; each further eighth of the way to the stop trigger halves the
// rate writes are paced to, so that writes slow down step by step instead of
// running at one rate into the stop and waiting there for the whole
// compaction.
TEST_F(BackgroundTest, SlowdownDeepensAsLevelZeroNearsTheStopTrigger) {
  const Options defaults;
  options_.level0_slowdown_writes_trigger =
      defaults.level0_slowdown_writes_trigger;
  options_.level0_stop_writes_trigger = defaults.level0_stop_writes_trigger;
  options_.delayed_write_rate = defaults.delayed_write_rate;
  ASSERT_EQ(uint64_t{16} << 20, options_.delayed_write_rate);
  // One memtable holds each measured run of writes: level 0 grows only by
  // the flushes below.
  options_.write_buffer_size = 8 << 20;
  Random rnd(304);
  StartHeldCompaction(&rnd);
  int next = 1000;
  const std::pair<int, uint64_t> kSteps[] = {
      {20, 16 << 20}, {21, 16 << 20}, {22, 8 << 20},
      {26, 2 << 20},  {28, 1 << 20},  {35, 128 << 10}};
  for (const auto& [level0, rate] : kSteps) {
    while (NumFilesAtLevel(db_.get(), 0) < level0) {
      WriteAndFlush(next, next + 10, &rnd);
      next += 10;
    }
    ASSERT_EQ(level0, NumFilesAtLevel(db_.get(), 0));
    const DbStats before = db_->GetStats();
    WriteKeys(next, next + 4000, &rnd);
    next += 4000;
    const DbStats after = db_->GetStats();
    ASSERT_EQ(level0, NumFilesAtLevel(db_.get(), 0));
    const uint64_t bytes = after.user_bytes_written - before.user_bytes_written;
    const uint64_t delayed = after.write_delay_micros - before.write_delay_micros;
    // What the bytes cost at the rate, give or take a debt too small to
    // sleep off (left over before, or left over at the end).
    const double cost = static_cast<double>(bytes) * 1e6 / rate;
    EXPECT_NEAR(cost, static_cast<double>(delayed),
                2.0 * WriteDelay::kMinSleepMicros)
        << "level 0 at " << level0 << ", " << bytes << " bytes";
    EXPECT_EQ(0u, after.write_stop_micros);
  }
  EXPECT_EQ(1, env_.blocked());
  env_.Release();
  ExpectContents(db_.get(), model_);
}

// The LOG tells each start and end of the write slowdown once, whichever
// background thread changes level 0: here the held compaction started with
// level 0 below the trigger, flushes took it over (slowdown begins), and the
// compaction then took it back under (slowdown ends). The end is logged
// under the lock that installs the compaction's result, before its inputs
// are deleted (held here: an unlink can take long).
TEST_F(BackgroundTest, SlowdownBeginsAndEndsAreEachLoggedOnce) {
  auto logger = std::make_shared<test::CapturingLogger>();
  options_.info_log = logger;
  options_.level0_slowdown_writes_trigger = 4;
  options_.level0_stop_writes_trigger = 100;
  Random rnd(305);
  StartHeldCompaction(&rnd);
  WriteAndFlush(300, 400, &rnd);
  WriteAndFlush(400, 500, &rnd);
  ASSERT_EQ(4, NumFilesAtLevel(db_.get(), 0));
  EXPECT_EQ(1u, logger->Count("Write slowdown begins")) << logger->Dump();
  env_.HoldRemovals();
  env_.ReleaseReads();
  // The held compaction removes its two inputs from level 0.
  for (int i = 0; i < 3000 && NumFilesAtLevel(db_.get(), 0) >= 4; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(4, NumFilesAtLevel(db_.get(), 0));
  EXPECT_EQ(1u, logger->Count("Write slowdown begins")) << logger->Dump();
  EXPECT_EQ(1u, logger->Count("Write slowdown ends")) << logger->Dump();
  env_.Release();
  ExpectContents(db_.get(), model_);
}

// A compaction reads each input in a few large reads, not one per block.
TEST_F(BackgroundTest, CompactionReadsInputsSequentiallyInLargeReads) {
  CountingEnv counting(Env::Default());
  options_.env = &counting;
  test::KeepEverythingInLevelZero(&options_);
  options_.write_buffer_size = 1 << 20;
  Open();
  Random rnd(303);
  WriteAndFlush(0, 3000, &rnd);
  WriteAndFlush(1500, 4500, &rnd);
  std::vector<SegmentInfo> inputs = db_->GetSegmentInfo();
  ASSERT_EQ(2u, inputs.size());

  counting.Reset();
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  for (const SegmentInfo& f : inputs) {
    SCOPED_TRACE(f.file_name);
    const CountingEnv::Counts c = counting.ForFile(f.file_name);
    // Every block was read (about 100 blocks of 1 KiB, in one or two reads
    // each of up to the 2 MiB readahead)...
    EXPECT_LE(f.file_size / 2, c.random_read_bytes);
    EXPECT_LE(1u, c.random_reads);
    EXPECT_GE(2u, c.random_reads);
  }
  EXPECT_EQ(0, NumFilesAtLevel(db_.get(), 0));
  ExpectContents(db_.get(), model_);
  db_.reset();  // before the Env it uses goes
}

// Holds each sync of a segment file until a later segment file has been
// created (or a second has passed), and counts the syncs that found one.
class SyncUntilNextSegmentEnv final : public EnvWrapper {
 public:
  explicit SyncUntilNextSegmentEnv(Env* target) : EnvWrapper(target) {}

  void Hold() {
    std::lock_guard<std::mutex> guard(mu_);
    holding_ = true;
  }
  int released_by_next_segment() {
    std::lock_guard<std::mutex> guard(mu_);
    return released_by_next_segment_;
  }
  int held() {
    std::lock_guard<std::mutex> guard(mu_);
    return held_;
  }

  Status NewWritableFile(const std::string& f,
                         std::unique_ptr<WritableFile>* w) override {
    Status s = target()->NewWritableFile(f, w);
    if (s.ok() && IsSegment(f)) {
      int index;
      {
        std::lock_guard<std::mutex> guard(mu_);
        index = ++segments_created_;
        cv_.notify_all();
      }
      *w = std::make_unique<File>(this, index, std::move(*w));
    }
    return s;
  }

 private:
  class File final : public WritableFile {
   public:
    File(SyncUntilNextSegmentEnv* env, int index,
         std::unique_ptr<WritableFile> t)
        : env_(env), index_(index), t_(std::move(t)) {}
    Status Append(const Slice& data) override { return t_->Append(data); }
    Status Flush() override { return t_->Flush(); }
    Status Sync() override {
      env_->MaybeHold(index_);
      return t_->Sync();
    }
    Status Close() override { return t_->Close(); }

   private:
    SyncUntilNextSegmentEnv* const env_;
    const int index_;  // the index of its creation
    std::unique_ptr<WritableFile> t_;
  };

  // Holds the sync of the index-th segment file created.
  void MaybeHold(int index) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!holding_) return;
    held_++;
    if (cv_.wait_for(lock, std::chrono::seconds(1),
                     [&] { return segments_created_ > index; })) {
      released_by_next_segment_++;
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool holding_ = false;              // GUARDED_BY(mu_)
  int segments_created_ = 0;          // GUARDED_BY(mu_)
  int held_ = 0;                      // GUARDED_BY(mu_)
  int released_by_next_segment_ = 0;  // GUARDED_BY(mu_)
};

// A compaction writes its next output while the last one's file is synced:
// each sync, held until a later segment file exists, is released by the
// compaction's next output (the last one's waits out its second). Were the
// syncs on the compaction's own thread, none could see its next output.
TEST_F(BackgroundTest, CompactionWritesItsNextOutputWhileTheLastIsSynced) {
  SyncUntilNextSegmentEnv env(Env::Default());
  options_.env = &env;
  test::KeepEverythingInLevelZero(&options_);
  Open();
  Random rnd(304);
  WriteAndFlush(0, 300, &rnd);
  WriteAndFlush(150, 450, &rnd);
  env.Hold();
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  const int outputs = static_cast<int>(db_->GetSegmentInfo().size());
  ASSERT_GE(outputs, 3) << "too few outputs to see syncs overlap";
  EXPECT_EQ(outputs, env.held());
  EXPECT_EQ(outputs - 1, env.released_by_next_segment());
  ExpectContents(db_.get(), model_);
  db_.reset();  // before the Env it uses goes
  Open();
  ExpectContents(db_.get(), model_);
  db_.reset();
}

}  // namespace
}  // namespace bloomkv
