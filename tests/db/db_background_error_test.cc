// Background errors: a failed write or sync of the WAL or the manifest is
// sticky. Once it happened, every later write, Flush and CompactRange
// returns the error, no file is deleted (the manifest may name files the
// current version does not), waiters wake at once, and reads go on. A
// reopen with a healthy disk finds every acknowledged write.
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
#include "bloomkv/write_batch.h"
#include "tests/testutil/fault_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Model = std::map<std::string, std::string>;
using test::FaultInjectionEnv;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool IsManifest(const std::string& f) {
  return f.find("/MANIFEST-") != std::string::npos;
}
bool IsLog(const std::string& f) { return EndsWith(f, ".log"); }
bool IsSegment(const std::string& f) { return EndsWith(f, ".seg"); }

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%06d", i);
  return buf;
}

class BackgroundErrorTest : public ::testing::Test {
 protected:
  BackgroundErrorTest() : env_(Env::Default()) {
    options_ = test::TinyCompactionOptions();
    options_.env = &env_;
  }

  void Open() { ASSERT_TRUE(DB::Open(options_, dir_.path(), &db_).ok()); }

  // Healthy disk again, then a fresh DB object on the same files.
  void Reopen() {
    db_.reset();
    env_.ClearInjectedErrors();
    env_.SetFilesystemActive(true);
    Open();
  }

  // Writes keys [from, to), each acknowledged one into model_; stops at the
  // first failure and returns it.
  Status WriteKeys(int from, int to, Random* rnd) {
    for (int i = from; i < to; i++) {
      const std::string value = test::RandomString(rnd, 100);
      Status s = db_->Put(WriteOptions(), Key(i), value);
      if (!s.ok()) return s;
      model_[Key(i)] = value;
    }
    return Status::OK();
  }

  // After a sticky error: writes are refused, reads still work.
  void ExpectWritesRefusedReadsServed() {
    EXPECT_FALSE(db_->Put(WriteOptions(), "after", "x").ok());
    WriteBatch batch;
    batch.Delete(Key(0));
    EXPECT_FALSE(db_->Write(WriteOptions(), &batch).ok());
    EXPECT_FALSE(db_->Flush().ok());
    EXPECT_FALSE(db_->CompactRange(nullptr, nullptr).ok());
    EXPECT_FALSE(db_->SyncWAL().ok());
    test::ExpectDbHolds(db_.get(), model_);
  }

  test::TempDir dir_;
  FaultInjectionEnv env_;
  Options options_;
  std::unique_ptr<DB> db_;
  Model model_;
};

// A manual compaction whose manifest record cannot be synced: the record
// may still be in the file (it is here), so its outputs must stay, and the
// DB must stop taking writes. Each of the first manifest syncs is made to
// fail in turn, once only, so that a later sync would succeed if the engine
// carried on.
TEST_F(BackgroundErrorTest, FailedManifestSyncInManualCompactionLosesNothing) {
  test::KeepEverythingInLevelZero(&options_);
  for (int failing = 0; failing < 2; failing++) {
    SCOPED_TRACE("failing manifest sync " + std::to_string(failing));
    db_.reset();
    ASSERT_TRUE(DestroyDB(dir_.path(), options_).ok());
    model_.clear();
    ASSERT_NO_FATAL_FAILURE(Open());
    Random rnd(301 + failing);
    for (int part = 0; part < 4; part++) {
      ASSERT_TRUE(WriteKeys(part * 500, part * 500 + 500, &rnd).ok());
      ASSERT_TRUE(db_->Flush().ok());
      if (part == 1) {
        ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
      }
    }
    const uint64_t errors_before = env_.injected_error_count();
    env_.InjectErrors(FaultInjectionEnv::kSync, IsManifest, failing,
                      /*fail_count=*/1);
    // CompactRange rewrites level 0 into level 1, then the rest of level 1
    // in place: two manifest edits.
    Status s = db_->CompactRange(nullptr, nullptr);
    ASSERT_EQ(errors_before + 1, env_.injected_error_count()) << s.ToString();
    ASSERT_TRUE(s.IsIOError()) << s.ToString();
    ExpectWritesRefusedReadsServed();
    ASSERT_NO_FATAL_FAILURE(Reopen());
    test::ExpectDbHolds(db_.get(), model_);
  }
}

// The same for automatic flushes, compactions and trivial moves: the n-th
// manifest sync after open fails, while writes go on; the first write that
// fails ends the run, and every acknowledged one must survive.
TEST_F(BackgroundErrorTest, FailedManifestSyncInBackgroundWorkLosesNothing) {
  for (int failing = 0; failing < 8; failing++) {
    SCOPED_TRACE("failing manifest sync " + std::to_string(failing));
    db_.reset();
    ASSERT_TRUE(DestroyDB(dir_.path(), options_).ok());
    model_.clear();
    env_.ClearInjectedErrors();
    ASSERT_NO_FATAL_FAILURE(Open());
    const uint64_t errors_before = env_.injected_error_count();
    env_.InjectErrors(FaultInjectionEnv::kSync, IsManifest, failing,
                      /*fail_count=*/1);
    Random rnd(7 + failing);
    Status s = WriteKeys(0, 3000, &rnd);
    if (s.ok()) s = db_->Flush();
    if (s.ok()) s = db_->CompactRange(nullptr, nullptr);
    if (env_.injected_error_count() == errors_before) continue;  // too few
    ASSERT_FALSE(s.ok()) << "the manifest failed, yet every write succeeded";
    ExpectWritesRefusedReadsServed();
    ASSERT_NO_FATAL_FAILURE(Reopen());
    test::ExpectDbHolds(db_.get(), model_);
  }
}

// An Env that holds a background thread inside one write: after Arm(pass),
// the Append (or Sync) of a file whose name matches, past the first `pass`
// ones, blocks until Release(), then returns `held_result` (OK: it goes
// through).
class PausingEnv final : public EnvWrapper {
 public:
  enum class Op { kAppend, kSync };

  PausingEnv(Env* target, bool (*matches)(const std::string&), Op op,
             Status held_result = Status::OK())
      : EnvWrapper(target),
        matches_(matches),
        op_(op),
        held_result_(std::move(held_result)) {}

  void Arm(int pass = 0) {
    std::lock_guard<std::mutex> guard(mu_);
    armed_ = true;
    pass_ = pass;
  }
  // Whether a write was held within a minute.
  bool WaitUntilPaused() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(60),
                        [this] { return paused_; });
  }
  void Release() {
    std::lock_guard<std::mutex> guard(mu_);
    released_ = true;
    cv_.notify_all();
  }

  Status NewWritableFile(const std::string& f,
                         std::unique_ptr<WritableFile>* r) override {
    Status s = target()->NewWritableFile(f, r);
    if (s.ok() && matches_(f)) *r = std::make_unique<File>(this, std::move(*r));
    return s;
  }

 private:
  class File final : public WritableFile {
   public:
    File(PausingEnv* env, std::unique_ptr<WritableFile> t)
        : env_(env), t_(std::move(t)) {}
    Status Append(const Slice& data) override {
      Status s = env_->Hold(Op::kAppend);
      return s.ok() ? t_->Append(data) : s;
    }
    Status Flush() override { return t_->Flush(); }
    Status Sync() override {
      Status s = env_->Hold(Op::kSync);
      return s.ok() ? t_->Sync() : s;
    }
    Status Close() override { return t_->Close(); }

   private:
    PausingEnv* const env_;
    std::unique_ptr<WritableFile> t_;
  };

  Status Hold(Op op) {
    std::unique_lock<std::mutex> lock(mu_);
    if (op != op_ || !armed_ || pass_-- > 0) return Status::OK();
    armed_ = false;
    paused_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return released_; });
    return held_result_;
  }

  bool (*const matches_)(const std::string&);
  const Op op_;
  const Status held_result_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  int pass_ = 0;
  bool paused_ = false;
  bool released_ = false;
};

// A compaction whose manifest record fails to sync while the database is
// closing: the record is in the file, so the next open reads the edit and
// needs the compaction's outputs. Closing must not excuse the error: the
// outputs stay (and so do the inputs), and the reopened database holds
// every write.
TEST(BackgroundErrorWhileClosingTest,
     FailedManifestSyncOfACompactionKeepsItsOutputs) {
  test::TempDir dir;
  PausingEnv env(Env::Default(), IsManifest, PausingEnv::Op::kSync,
                 Status::IOError("manifest", "injected sync failure"));
  Options options;
  options.create_if_missing = true;
  options.env = &env;
  options.level0_compaction_trigger = 4;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  Model model;
  Random rnd(301);
  for (int part = 0; part < 4; part++) {
    for (int i = part * 200; i < part * 200 + 200; i++) {
      model[Key(i)] = test::RandomString(&rnd, 100);
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), model[Key(i)]).ok());
    }
    // The fourth flush's edit passes; the level-0 compaction it starts
    // writes the next one, which is caught.
    if (part == 3) env.Arm(/*pass=*/1);
    ASSERT_TRUE(db->Flush().ok());
  }
  const bool caught = env.WaitUntilPaused();
  if (!caught) env.Release();  // so that closing cannot hang on the trap
  ASSERT_TRUE(caught) << "no compaction wrote a manifest edit";
  std::thread closer([&db] { db.reset(); });
  // Closing marks the database as shutting down at once, then waits for the
  // compaction; only then does the sync fail.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  env.Release();
  closer.join();

  options.env = Env::Default();
  Status s = DB::Open(options, dir.path(), &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  test::ExpectDbHolds(db.get(), model);
}

// A failed WAL append or sync is sticky too, for every later write.
TEST_F(BackgroundErrorTest, FailedLogWriteOrSyncRefusesLaterWrites) {
  for (uint32_t op : {FaultInjectionEnv::kWrite, FaultInjectionEnv::kSync}) {
    SCOPED_TRACE(op == FaultInjectionEnv::kWrite ? "append" : "sync");
    db_.reset();
    ASSERT_TRUE(DestroyDB(dir_.path(), options_).ok());
    model_.clear();
    env_.ClearInjectedErrors();
    ASSERT_NO_FATAL_FAILURE(Open());
    Random rnd(op);
    ASSERT_TRUE(WriteKeys(0, 100, &rnd).ok());
    env_.InjectErrors(op, IsLog, 0, /*fail_count=*/1);
    WriteOptions sync;
    sync.sync = true;
    EXPECT_FALSE(db_->Put(sync, "failed", "x").ok());
    ExpectWritesRefusedReadsServed();
    ASSERT_NO_FATAL_FAILURE(Reopen());
    // The failed write may or may not be in the log; nothing after it is.
    std::string value;
    if (db_->Get(ReadOptions(), "failed", &value).ok()) {
      model_["failed"] = "x";
    }
    test::ExpectDbHolds(db_.get(), model_);
  }
}

// A synced write of an empty batch, and SyncWAL(), make the non-synced
// writes before them durable: a machine crash right after keeps them all.
TEST_F(BackgroundErrorTest, EmptySyncedWriteMakesEarlierWritesDurable) {
  for (bool use_sync_wal : {false, true}) {
    SCOPED_TRACE(use_sync_wal ? "SyncWAL" : "Write(sync, empty batch)");
    db_.reset();
    ASSERT_TRUE(DestroyDB(dir_.path(), options_).ok());
    model_.clear();
    ASSERT_NO_FATAL_FAILURE(Open());
    Random rnd(use_sync_wal ? 2 : 1);
    ASSERT_TRUE(WriteKeys(0, 200, &rnd).ok());  // not synced
    if (use_sync_wal) {
      ASSERT_TRUE(db_->SyncWAL().ok());
    } else {
      WriteOptions sync;
      sync.sync = true;
      WriteBatch empty;
      ASSERT_TRUE(db_->Write(sync, &empty).ok());
    }
    env_.SetFilesystemActive(false);  // the machine dies here
    db_.reset();
    ASSERT_TRUE(env_.DropUnsyncedData().ok());
    ASSERT_NO_FATAL_FAILURE(Reopen());
    test::ExpectDbHolds(db_.get(), model_);
  }
}

// Background errors while CompactRange waits and the background thread is
// in the middle of its compaction (held there by PausingEnv).
class BackgroundErrorDuringCompactionTest : public BackgroundErrorTest {
 protected:
  BackgroundErrorDuringCompactionTest()
      : pausing_(&env_, IsSegment, PausingEnv::Op::kAppend) {
    options_.env = &pausing_;
    test::KeepEverythingInLevelZero(&options_);
  }

  // Two level-0 segments, then a CompactRange held in its first output;
  // then a Flush that switches memtables and waits for the flush, held in
  // its segment's first append too (flushes have a thread of their own).
  void StartCompactionAndFlush() {
    ASSERT_NO_FATAL_FAILURE(Open());
    Random rnd(11);
    for (int part = 0; part < 2; part++) {
      ASSERT_TRUE(WriteKeys(part * 300, part * 300 + 300, &rnd).ok());
      ASSERT_TRUE(db_->Flush().ok());
    }
    pausing_.Arm();
    compact_ = std::async(std::launch::async, [this] {
      return db_->CompactRange(nullptr, nullptr);
    });
    ASSERT_TRUE(pausing_.WaitUntilPaused());
    ASSERT_TRUE(WriteKeys(1000, 1010, &rnd).ok());
    const uint64_t opens = env_.op_count(FaultInjectionEnv::kOpen);
    pausing_.Arm();
    flush_ = std::async(std::launch::async, [this] { return db_->Flush(); });
    // The switch opens the new log with mu_ held, then makes the memtable
    // immutable; any write after the open queues behind the switch.
    while (env_.op_count(FaultInjectionEnv::kOpen) == opens) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // The DB uses pausing_, which goes before the base class's members.
  void TearDown() override {
    pausing_.Release();
    if (compact_.valid()) compact_.wait();
    if (flush_.valid()) flush_.wait();
    db_.reset();
  }

  // Lets the compaction go, and checks the end state: the error is sticky,
  // and the reopened database holds every acknowledged write, plus
  // maybe_key (a failed write that may have reached the log) or not.
  void Finish(const std::string& maybe_key = "") {
    pausing_.Release();
    EXPECT_FALSE(compact_.get().ok());
    EXPECT_FALSE(flush_.get().ok());
    ExpectWritesRefusedReadsServed();
    ASSERT_NO_FATAL_FAILURE(Reopen());
    std::string value;
    if (!maybe_key.empty() && db_->Get(ReadOptions(), maybe_key, &value).ok()) {
      model_[maybe_key] = value;
    }
    test::ExpectDbHolds(db_.get(), model_);
  }

  PausingEnv pausing_;
  std::future<Status> compact_;
  std::future<Status> flush_;
};

// A failed synced write wakes the Flush() waiter at once: it must not wait
// for the compaction that keeps the background thread busy.
TEST_F(BackgroundErrorDuringCompactionTest, LogFailureWakesFlushWaiter) {
  ASSERT_NO_FATAL_FAILURE(StartCompactionAndFlush());
  env_.InjectErrors(FaultInjectionEnv::kSync, IsLog, 0);
  WriteOptions sync;
  sync.sync = true;
  EXPECT_FALSE(db_->Put(sync, "failed", "x").ok());
  // Generous: a deadlock detector, not a timing measurement.
  const bool woke =
      flush_.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  EXPECT_TRUE(woke) << "Flush() still waits after a background error";
  env_.ClearInjectedErrors();
  Finish(/*maybe_key=*/"failed");
}

// The flush that the compaction runs between two of its keys fails: the
// CompactRange waiter wakes, but may only return once the background thread
// has let go of its request (under ASan with detect_stack_use_after_return,
// leaving earlier is reported as a use of a dead stack frame).
TEST_F(BackgroundErrorDuringCompactionTest, FlushFailureInsideCompaction) {
  ASSERT_NO_FATAL_FAILURE(StartCompactionAndFlush());
  env_.InjectErrors(FaultInjectionEnv::kOpen, IsSegment, 0);
  Finish();
}

}  // namespace
}  // namespace bloomkv
