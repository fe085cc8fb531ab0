// The table cache (db/table_cache.h), on its own: pins keep files open,
// the capacity is held whenever something can be closed, eviction,
// failures not cached. Then seen from the database: at most max_open_files
// segment files open (minus the ten set aside for the WAL, manifest and the
// rest) whatever the database does, under a real descriptor limit too;
// lookups the filter rules out open no file; a file reopened on demand is
// checked again and its damage reported; concurrent reads while compaction
// closes and reopens files; the memory and descriptor figures reported.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bloomkv/db.h"
#include "db/filename.h"
#include "db/segment_output.h"
#include "db/table_cache.h"
#include "table/format.h"
#include "table/segment_reader.h"
#include "util/hash.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// Counts the segment files open through it right now, and the most ever.
class OpenSegmentsEnv : public EnvWrapper {
 public:
  explicit OpenSegmentsEnv(Env* target) : EnvWrapper(target) {}

  Status NewRandomAccessFile(
      const std::string& fname,
      std::unique_ptr<RandomAccessFile>* result) override {
    return Track(fname, target()->NewRandomAccessFile(fname, result), result);
  }
  Status NewShortLivedRandomAccessFile(
      const std::string& fname,
      std::unique_ptr<RandomAccessFile>* result) override {
    Status s = Track(
        fname, target()->NewShortLivedRandomAccessFile(fname, result), result);
    if (s.ok() && fname.ends_with(".seg")) short_lived_opens_.fetch_add(1);
    return s;
  }

  int open() const { return open_.load(); }
  int peak() const { return peak_.load(); }
  uint64_t opens() const { return opens_.load(); }
  // Opens through NewShortLivedRandomAccessFile.
  uint64_t short_lived_opens() const { return short_lived_opens_.load(); }
  // Read calls on segment files.
  uint64_t reads() const { return reads_.load(); }
  // Opens of a file that had been opened before.
  uint64_t reopens() const {
    std::lock_guard<std::mutex> guard(mu_);
    return reopens_;
  }

  // The next close of a segment file waits, its file still open and
  // counted, until ReleaseHeldClose(); WaitForHeldClose() returns once it
  // waits.
  void HoldNextClose() {
    std::lock_guard<std::mutex> guard(mu_);
    hold_ = HoldState::kArmed;
  }
  void WaitForHeldClose() {
    std::unique_lock<std::mutex> lock(mu_);
    hold_cv_.wait(lock, [this] { return hold_ == HoldState::kWaiting; });
  }
  void ReleaseHeldClose() {
    std::lock_guard<std::mutex> guard(mu_);
    hold_ = HoldState::kNone;
    hold_cv_.notify_all();
  }

 private:
  enum class HoldState { kNone, kArmed, kWaiting };

  // Counts and wraps the file *result that an open of fname (status s)
  // made, if it is a segment file.
  Status Track(const std::string& fname, Status s,
               std::unique_ptr<RandomAccessFile>* result) {
    if (!s.ok()) return s;
    std::unique_ptr<RandomAccessFile> file = std::move(*result);
    if (fname.ends_with(".seg")) {
      {
        std::lock_guard<std::mutex> guard(mu_);
        if (++opens_per_file_[fname] > 1) reopens_++;
      }
      opens_.fetch_add(1);
      const int now = open_.fetch_add(1) + 1;
      int peak = peak_.load();
      while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
      }
      file = std::make_unique<Tracked>(std::move(file), this);
    }
    *result = std::move(file);
    return s;
  }

  class Tracked : public RandomAccessFile {
   public:
    Tracked(std::unique_ptr<RandomAccessFile> file, OpenSegmentsEnv* env)
        : file_(std::move(file)), env_(env) {}
    ~Tracked() override {
      {
        std::unique_lock<std::mutex> lock(env_->mu_);
        if (env_->hold_ == HoldState::kArmed) {
          env_->hold_ = HoldState::kWaiting;
          env_->hold_cv_.notify_all();
          env_->hold_cv_.wait(
              lock, [this] { return env_->hold_ != HoldState::kWaiting; });
        }
      }
      file_.reset();  // closed before it stops being counted
      env_->open_.fetch_sub(1);
    }
    Status Read(uint64_t offset, size_t n, Slice* result,
                char* scratch) const override {
      env_->reads_.fetch_add(1);
      return file_->Read(offset, n, result, scratch);
    }

   private:
    std::unique_ptr<RandomAccessFile> file_;
    OpenSegmentsEnv* const env_;
  };

  std::atomic<int> open_{0};
  std::atomic<int> peak_{0};
  std::atomic<uint64_t> opens_{0};
  std::atomic<uint64_t> short_lived_opens_{0};
  std::atomic<uint64_t> reads_{0};
  mutable std::mutex mu_;
  std::map<std::string, int> opens_per_file_;  // GUARDED_BY(mu_)
  uint64_t reopens_ = 0;                       // GUARDED_BY(mu_)
  HoldState hold_ = HoldState::kNone;          // GUARDED_BY(mu_)
  std::condition_variable hold_cv_;
};

// Segments 1..n of one key each ("k<number>"), loaded into a table cache
// of the given capacity.
class TableCacheTest : public testing::Test {
 protected:
  void Build(int n, size_t capacity) {
    options_.env = &env_;
    for (int number = 1; number <= n; number++) {
      SegmentOutput out(options_, dir_.path(), number, options_.filter_policy,
                        options_.compression);
      ASSERT_TRUE(out.Open().ok());
      ASSERT_TRUE(
          out.Add(MakeInternalKey(UserKey(number), 1, ValueType::kValue),
                  "v" + std::to_string(number))
              .ok());
      std::shared_ptr<FileMetaData> f;
      ASSERT_TRUE(out.Finish(&f).ok());
      files_.push_back(f);
    }
    cache_ = std::make_unique<TableCache>(
        dir_.path(), &env_, options_.filter_policy, nullptr, capacity);
    for (const auto& f : files_) {
      cache_->Load(f.get());
      ASSERT_TRUE(f->open_status.ok()) << f->open_status.ToString();
      ASSERT_NE(nullptr, f->filter);
    }
  }

  static std::string UserKey(int number) {
    return "k" + std::to_string(number);
  }

  // Reads segment number's one key through the cache; with a thread index,
  // pinned as a lookup (AcquireForLookup) on that index's slot.
  Status Read(int number, int lookup_thread = -1) {
    TableCache::Handle h;
    Status s = lookup_thread < 0 ? cache_->Acquire(*files_[number - 1], &h)
                                 : cache_->AcquireForLookup(*files_[number - 1],
                                                            lookup_thread, &h);
    if (!s.ok()) return s;
    return Check(number, h);
  }

  // Whether h's reader answers segment number's key.
  static Status Check(int number, const TableCache::Handle& h) {
    LookupResult result;
    std::string value;
    Status s = h.reader()->Search(SegmentReadOptions(), UserKey(number),
                                  kMaxSequenceNumber, &result, &value, nullptr);
    if (s.ok() && (result != LookupResult::kFound ||
                   value != "v" + std::to_string(number))) {
      s = Status::Corruption("wrong answer from segment " +
                             std::to_string(number));
    }
    return s;
  }

  test::TempDir dir_{"tablecache"};
  OpenSegmentsEnv env_{Env::Default()};
  Options options_;
  std::vector<std::shared_ptr<FileMetaData>> files_;
  std::unique_ptr<TableCache> cache_;
};

TEST_F(TableCacheTest, KeepsAtMostCapacityFilesOpenLeastRecentlyUsedGoFirst) {
  Build(8, 3);
  EXPECT_EQ(3, env_.open());  // Load keeps the newest ones
  EXPECT_EQ(3u, cache_->open_files());
  for (int round = 0; round < 2; round++) {
    for (int number = 1; number <= 8; number++) {
      ASSERT_TRUE(Read(number).ok());
      EXPECT_EQ(3, env_.open());
    }
  }
  // 6, 7 and 8 are open now: reading them opens nothing.
  const uint64_t opens = env_.opens();
  for (int number : {6, 7, 8, 6}) ASSERT_TRUE(Read(number).ok());
  EXPECT_EQ(opens, env_.opens());
  ASSERT_TRUE(Read(1).ok());  // closes 7, the least recently used
  EXPECT_EQ(opens + 1, env_.opens());
  ASSERT_TRUE(Read(8).ok());
  EXPECT_EQ(opens + 1, env_.opens());
  ASSERT_TRUE(Read(7).ok());
  EXPECT_EQ(opens + 2, env_.opens());
  cache_.reset();
  EXPECT_EQ(0, env_.open());
}

// A file that served few lookups the last time it was open is reopened as
// short-lived (read with pread by the default Env); one that served many
// is mapped again.
TEST_F(TableCacheTest, FilesClosedAfterFewLookupsAreReopenedShortLived) {
  Build(4, 2);  // 1 and 2 were closed to make room, with no lookup
  EXPECT_EQ(0u, env_.short_lived_opens());  // loading maps
  ASSERT_TRUE(Read(1).ok());  // closes 3, unread
  EXPECT_EQ(1u, env_.short_lived_opens());
  for (int i = 0; i < 20; i++) ASSERT_TRUE(Read(1).ok());
  ASSERT_TRUE(Read(2).ok());  // closes 4, unread
  EXPECT_EQ(2u, env_.short_lived_opens());
  ASSERT_TRUE(Read(3).ok());  // closes 1, after 20 lookups
  EXPECT_EQ(3u, env_.short_lived_opens());
  const uint64_t opens = env_.opens();
  ASSERT_TRUE(Read(1).ok());
  EXPECT_EQ(opens + 1, env_.opens());
  EXPECT_EQ(3u, env_.short_lived_opens()) << "a busy file was not mapped";
  // Lookup pins count too.
  for (int i = 0; i < 20; i++) ASSERT_TRUE(Read(3, /*lookup_thread=*/0).ok());
  ASSERT_TRUE(Read(2).ok());  // closes 1 (LRU)
  EXPECT_EQ(4u, env_.short_lived_opens());  // 2 served one lookup
  ASSERT_TRUE(Read(4).ok());  // closes 3, after 20 lookups
  EXPECT_EQ(5u, env_.short_lived_opens());
  ASSERT_TRUE(Read(3).ok());
  EXPECT_EQ(5u, env_.short_lived_opens()) << "a busy file was not mapped";
}

// A file reopened short-lived that turns busy is closed at a release once
// it has served TableCache::kRemapAfterPins pins, and mapped at its next
// reopen; by count and through lookup slots. One still pinned then stays
// open, and is asked again after as many pins more.
TEST_F(TableCacheTest, AShortLivedFileThatTurnsBusyIsMappedAgain) {
  constexpr int kBusy = static_cast<int>(TableCache::kRemapAfterPins);
  Build(4, 2);  // 1 and 2 were closed to make room, with no lookup
  ASSERT_TRUE(Read(1).ok());
  ASSERT_EQ(1u, env_.short_lived_opens());
  uint64_t opens = env_.opens();
  for (int i = 0; i < kBusy - 1; i++) ASSERT_TRUE(Read(1).ok());
  EXPECT_EQ(2, env_.open());  // not yet
  ASSERT_TRUE(Read(1).ok());  // the last pin: closed at its release
  EXPECT_EQ(1, env_.open());
  EXPECT_EQ(opens, env_.opens());
  ASSERT_TRUE(Read(1).ok());
  EXPECT_EQ(opens + 1, env_.opens());
  EXPECT_EQ(1u, env_.short_lived_opens()) << "reopened short-lived again";

  ASSERT_TRUE(Read(2).ok());  // short-lived: closes 3
  ASSERT_EQ(2u, env_.short_lived_opens());
  opens = env_.opens();
  {
    // Pinned across the busy mark (this pin and kBusy lookups): stays open.
    TableCache::Handle held;
    ASSERT_TRUE(cache_->Acquire(*files_[1], &held).ok());
    for (int i = 0; i < kBusy; i++) {
      ASSERT_TRUE(Read(2, /*lookup_thread=*/0).ok());
    }
  }
  EXPECT_EQ(2, env_.open());
  // Asked again at 2 * kBusy pins: kBusy - 1 lookups more.
  for (int i = 0; i < kBusy - 2; i++) {
    ASSERT_TRUE(Read(2, /*lookup_thread=*/0).ok());
  }
  EXPECT_EQ(2, env_.open());
  ASSERT_TRUE(Read(2, /*lookup_thread=*/0).ok());  // closed at its release
  EXPECT_EQ(1, env_.open());
  ASSERT_TRUE(Read(2).ok());
  EXPECT_EQ(opens + 1, env_.opens());
  EXPECT_EQ(2u, env_.short_lived_opens());
}

TEST_F(TableCacheTest, PinnedFilesStayOpenAndTheCacheShrinksBackOnRelease) {
  Build(6, 2);
  std::vector<TableCache::Handle> pins(6);
  for (int i = 0; i < 6; i++) {
    ASSERT_TRUE(cache_->Acquire(*files_[i], &pins[i]).ok());
    EXPECT_EQ(std::max(2, i + 1), env_.open());
  }
  // Every pinned reader still answers.
  for (int i = 0; i < 6; i++) {
    LookupResult result;
    std::string value;
    ASSERT_TRUE(pins[i]
                    .reader()
                    ->Search(SegmentReadOptions(), UserKey(i + 1),
                             kMaxSequenceNumber, &result, &value, nullptr)
                    .ok());
    EXPECT_EQ(LookupResult::kFound, result);
  }
  for (int i = 0; i < 6; i++) {
    pins[i].Reset();
    EXPECT_EQ(std::max(2, 5 - i), env_.open());
  }
}

// A lookup pin writes only its slot, and still keeps its file open: closes
// for room pass it over (and happen when it is released), an eviction
// waits for it. A second lookup pin on a busy slot pins by count instead.
TEST_F(TableCacheTest, LookupPinsHoldFilesOpenThroughClosesAndEvictions) {
  Build(6, 2);  // 5 and 6 open
  TableCache::Handle lookup;
  ASSERT_TRUE(cache_->AcquireForLookup(*files_[4], 0, &lookup).ok());
  // Opening 1, 2, 3 and 4 in turn closes the least recently used unpinned
  // file each time: never 5.
  for (int number = 1; number <= 4; number++) {
    ASSERT_TRUE(Read(number).ok());
    EXPECT_EQ(2, env_.open());
    ASSERT_TRUE(Check(5, lookup).ok());
  }
  const uint64_t opens = env_.opens();
  ASSERT_TRUE(Read(5).ok());
  EXPECT_EQ(opens, env_.opens());  // 5 never closed

  // The same slot is busy: the second pin falls back to the count (and
  // closes 4 to open 1).
  TableCache::Handle second;
  ASSERT_TRUE(cache_->AcquireForLookup(*files_[0], 0, &second).ok());
  EXPECT_EQ(2, env_.open());
  ASSERT_TRUE(Check(1, second).ok());
  ASSERT_TRUE(Check(5, lookup).ok());
  // Both open files pinned: a third pin opens one over the capacity.
  TableCache::Handle third;
  ASSERT_TRUE(cache_->Acquire(*files_[1], &third).ok());
  EXPECT_EQ(3, env_.open());
  // A handle moved keeps its pin; releasing the lookup pin lets the cache
  // shrink back to its capacity.
  TableCache::Handle moved = std::move(lookup);
  ASSERT_TRUE(Check(5, moved).ok());
  EXPECT_EQ(3, env_.open());
  moved.Reset();
  EXPECT_EQ(2, env_.open());
  ASSERT_TRUE(Check(2, third).ok());
  third.Reset();
  second.Reset();
  EXPECT_EQ(2, env_.open());

  // Evicted while a lookup holds it: open until the lookup ends.
  ASSERT_TRUE(cache_->AcquireForLookup(*files_[0], 3, &lookup).ok());
  cache_->Evict(1);
  EXPECT_EQ(2, env_.open());
  ASSERT_TRUE(Check(1, lookup).ok());
  lookup.Reset();
  EXPECT_EQ(1, env_.open());  // 2
  // Evicted with a lookup pin and a counted pin: closed at the later.
  TableCache::Handle counted;
  ASSERT_TRUE(cache_->Acquire(*files_[4], &counted).ok());
  ASSERT_TRUE(cache_->AcquireForLookup(*files_[4], 1, &lookup).ok());
  EXPECT_EQ(2, env_.open());
  cache_->Evict(5);
  counted.Reset();
  EXPECT_EQ(2, env_.open());
  ASSERT_TRUE(Check(5, lookup).ok());
  lookup.Reset();
  EXPECT_EQ(1, env_.open());
  cache_.reset();
  EXPECT_EQ(0, env_.open());
}

// Past its memory limit the cache keeps a segment's index, and then its
// filter too, in the file (a paged meta): the first segments keep both,
// the next the filter alone while it fits, the rest nothing; all answer
// the same through reads of those blocks, and an eviction frees room for
// the next segment Loaded.
TEST_F(TableCacheTest, SegmentsPastTheMemoryLimitArePagedAndAnswerTheSame) {
  Build(6, 10);
  const uint64_t per = files_[0]->meta->memory();
  const uint64_t filter = files_[0]->meta->filter->memory();
  ASSERT_GT(filter, 0u);
  ASSERT_GT(per, filter);
  EXPECT_EQ(6 * per, cache_->meta_memory());  // segments of one key each
  // Room for two whole segments and one filter alone.
  ASSERT_LT(filter, per);
  const uint64_t limit = 2 * per + filter;
  cache_ = std::make_unique<TableCache>(dir_.path(), &env_,
                                        options_.filter_policy, nullptr, 10,
                                        limit);
  for (const auto& f : files_) {
    cache_->Load(f.get());
    ASSERT_TRUE(f->open_status.ok()) << f->open_status.ToString();
  }
  EXPECT_EQ(limit, cache_->meta_memory());
  for (int number = 1; number <= 6; number++) {
    SCOPED_TRACE("segment " + std::to_string(number));
    const FileMetaData& f = *files_[number - 1];
    const bool index_paged = number > 2, filter_paged = number > 3;
    EXPECT_EQ(index_paged, f.meta->index_paged());
    EXPECT_EQ(filter_paged, f.meta->filter_paged());
    EXPECT_EQ(filter_paged, f.filter == nullptr);
    ASSERT_NE(nullptr, f.meta->filter);
    EXPECT_EQ(!index_paged ? per : !filter_paged ? filter : 0,
              f.meta->memory());
    EXPECT_EQ(files_[0]->meta->filter->size(), f.meta->filter->size());
    ASSERT_TRUE(Read(number).ok());
    // Get with the filter: a paged one is read (no cache here) with the
    // index, then the data block.
    TableCache::Handle h;
    ASSERT_TRUE(cache_->Acquire(f, &h).ok());
    SegmentReadStats stats;
    LookupResult result;
    std::string value;
    ASSERT_TRUE(h.reader()
                    ->Get(SegmentReadOptions(), UserKey(number),
                          KeyHash(UserKey(number)), kMaxSequenceNumber,
                          &result, &value, &stats)
                    .ok());
    EXPECT_EQ(LookupResult::kFound, result);
    EXPECT_EQ((index_paged ? 1u : 0u) + (filter_paged ? 1u : 0u),
              stats.meta_blocks_read);
    EXPECT_EQ(1u, stats.data_blocks_read);
    // The whole segment through an iterator.
    std::unique_ptr<Iterator> it =
        h.reader()->NewIterator(SegmentReadOptions(), nullptr);
    it->SeekToFirst();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(UserKey(number), ExtractUserKey(it->key()).ToString());
    it->Next();
    EXPECT_FALSE(it->Valid());
    EXPECT_TRUE(it->status().ok());
  }
  // Evicting a resident segment frees its room: the next Load keeps its
  // metadata again.
  cache_->Evict(1);
  EXPECT_EQ(limit - per, cache_->meta_memory());
  cache_->Load(files_[0].get());
  EXPECT_FALSE(files_[0]->meta->index_paged());
  EXPECT_EQ(limit, cache_->meta_memory());
  cache_->Evict(6);  // paged: nothing to free
  EXPECT_EQ(limit, cache_->meta_memory());
  cache_->Evict(3);  // its filter
  EXPECT_EQ(limit - filter, cache_->meta_memory());
}

TEST_F(TableCacheTest, EvictClosesAtOnceOrAtTheLastRelease) {
  Build(3, 10);
  EXPECT_EQ(3, env_.open());
  cache_->Evict(1);
  EXPECT_EQ(2, env_.open());
  TableCache::Handle pin;
  ASSERT_TRUE(cache_->Acquire(*files_[1], &pin).ok());
  cache_->Evict(2);
  EXPECT_EQ(2, env_.open());  // pinned: still open
  pin.Reset();
  EXPECT_EQ(1, env_.open());
  cache_->Evict(99);  // never open: nothing happens
  EXPECT_EQ(1, env_.open());
}

// A file closed under the cache's lock is closed (its reader destroyed)
// after the lock is released. Until then it still counts: a reopen of
// another file meanwhile waits for it rather than go past the capacity.
TEST_F(TableCacheTest, AFileBeingClosedCountsUntilItIsClosed) {
  Build(3, 2);  // 2 and 3 open
  env_.HoldNextClose();
  std::thread evicting([&] { cache_->Evict(3); });
  env_.WaitForHeldClose();
  EXPECT_EQ(2, env_.open());
  EXPECT_EQ(2u, cache_->open_files());
  std::mutex mu;
  std::condition_variable cv;
  bool read_done = false;
  Status read_status;
  std::thread reading([&] {
    Status s = Read(1);
    std::lock_guard<std::mutex> guard(mu);
    read_status = s;
    read_done = true;
    cv.notify_all();
  });
  {
    // On the unfixed cache the read opens segment 1 at once, beside the
    // two still open; here it waits for the close.
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::milliseconds(250),
                [&] { return read_done; });
    EXPECT_FALSE(read_done) << "a file was opened past the capacity";
  }
  EXPECT_LE(env_.peak(), 2);
  env_.ReleaseHeldClose();
  evicting.join();
  reading.join();
  EXPECT_TRUE(read_status.ok()) << read_status.ToString();
  EXPECT_LE(env_.peak(), 2);
  EXPECT_EQ(static_cast<size_t>(env_.open()), cache_->open_files());
}

// Lookups pin open files without the lock, by count or through a lookup
// slot (shared by two readers, so that some fall back to the count);
// closes to make room and evictions (even of files being read) race with
// them. In the second half the lookups keep to two files, which then fit,
// so that files reopened short-lived turn busy and are closed to be mapped
// while other threads pin them. Every answer stays right, open files never
// exceed the capacity plus what is pinned or being opened, and everything
// is closed in the end.
TEST_F(TableCacheTest, ConcurrentPinsClosesAndEvictionsKeepAnswersAndBudget) {
  constexpr int kFiles = 8;
  constexpr size_t kCapacity = 3;
  constexpr int kReaders = 4;
  constexpr int kOpsPerReader = 1500;
  Build(kFiles, kCapacity);
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::atomic<bool> failed{false};
    std::atomic<int> readers_left{kReaders};
    std::vector<std::thread> threads;
    for (int t = 0; t < kReaders; t++) {
      threads.emplace_back([&, t] {
        Random rnd(seed + t);
        for (int i = 0; i < kOpsPerReader && !failed.load(); i++) {
          // Sometimes holds a second pin across the lookup, so that every
          // open file can be pinned at once.
          TableCache::Handle held;
          if (rnd.OneIn(4) &&
              !cache_->Acquire(*files_[rnd.Uniform(kFiles)], &held).ok()) {
            failed.store(true);
          }
          // Half the lookups pin through a slot two readers share.
          const int lookup_thread = rnd.OneIn(2) ? t % 2 : -1;
          const uint64_t files = i < kOpsPerReader / 2 ? kFiles : 2;
          if (!Read(1 + static_cast<int>(rnd.Uniform(files)), lookup_thread)
                   .ok()) {
            failed.store(true);
          }
          // Each reader pins at most two files or one file and one being
          // opened.
          if (env_.open() > static_cast<int>(kCapacity) + 2 * kReaders) {
            failed.store(true);
          }
        }
        readers_left.fetch_sub(1);
      });
    }
    threads.emplace_back([&] {
      Random rnd(seed ^ 0xe1c7);
      while (readers_left.load() > 0) {
        cache_->Evict(1 + rnd.Uniform(kFiles));
        std::this_thread::yield();
      }
    });
    for (auto& th : threads) th.join();
    EXPECT_FALSE(failed.load());
    EXPECT_LE(env_.open(), static_cast<int>(kCapacity));
    EXPECT_EQ(static_cast<size_t>(env_.open()), cache_->open_files());
  }
  cache_.reset();
  EXPECT_EQ(0, env_.open());
}

TEST_F(TableCacheTest, AFailedReopenIsReportedAndNotRemembered) {
  Build(4, 2);  // segments 1 and 2 are closed
  const std::string fname = SegmentFileName(dir_.path(), 1);
  const std::string moved = fname + ".away";
  ASSERT_TRUE(env_.RenameFile(fname, moved).ok());
  Status s = Read(1);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find(fname)) << s.ToString();
  EXPECT_LE(env_.open(), 2);
  ASSERT_TRUE(env_.RenameFile(moved, fname).ok());
  EXPECT_TRUE(Read(1).ok());
}

TEST_F(TableCacheTest, ASegmentThatFailedToLoadIsNeverOpened) {
  Build(2, 2);
  FileMetaData failed;
  failed.number = files_[0]->number;
  failed.file_size = files_[0]->file_size;
  failed.open_status = Status::Corruption("earlier failure");
  TableCache::Handle h;
  const uint64_t opens = env_.opens();
  EXPECT_EQ("Corruption: earlier failure",
            cache_->Acquire(failed, &h).ToString());
  EXPECT_EQ(opens, env_.opens());
}

constexpr int kMaxOpenFiles = 20;
// What the table cache may keep open: max_open_files minus the descriptors
// set aside for the WAL, manifest, LOG, LOCK, outputs and the like.
constexpr int kSegmentBudget = kMaxOpenFiles - 10;

// Small memtables and segments, so that a few megabytes make hundreds of
// segments over three levels; level 0 kept short, so that an iterator (each
// level-0 segment plus one per deeper level) and a compaction running beside
// it pin fewer files than the budget together.
Options BudgetOptions(Env* env) {
  Options o = test::TinyCompactionOptions();
  o.env = env;
  o.max_open_files = kMaxOpenFiles;
  o.level0_slowdown_writes_trigger = 2;
  o.level0_stop_writes_trigger = 3;
  return o;
}

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%07d", i);
  return buf;
}

// Deterministic per (key, generation), so readers can check any answer;
// random after the prefix, so that compression does not shrink it.
std::string Value(int i, int generation, size_t len = 200) {
  std::string v = Key(i) + "@" + std::to_string(generation) + ":";
  Random rnd(static_cast<uint64_t>(i) * 1000003 + generation);
  return v + test::RandomString(&rnd, len - std::min(len, v.size()));
}

int CountSegments(DB* db) {
  return static_cast<int>(db->GetSegmentInfo().size());
}

TEST(DBTableCacheTest, OpenSegmentFilesNeverExceedTheBudget) {
  test::TempDir dir("tablecache");
  OpenSegmentsEnv env(Env::Default());
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(BudgetOptions(&env), dir.path(), &db).ok());

  // Fill (flushes and compactions run all along), with lookups and short
  // scans between the writes.
  std::map<std::string, std::string> model;
  Random rnd(301);
  constexpr int kKeys = 3000;
  for (int n = 0; n < 2 * kKeys; n++) {
    const int i = static_cast<int>(rnd.Uniform(kKeys));
    const std::string v = Value(i, n);
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), v).ok());
    model[Key(i)] = v;
    if (n % 97 == 0) {
      const int j = static_cast<int>(rnd.Uniform(kKeys));
      std::string got;
      Status s = db->Get(ReadOptions(), Key(j), &got);
      auto want = model.find(Key(j));
      if (want == model.end()) {
        ASSERT_TRUE(s.IsNotFound()) << s.ToString();
      } else {
        ASSERT_TRUE(s.ok()) << Key(j) << ": " << s.ToString();
        ASSERT_EQ(want->second, got);
      }
    }
    if (n % 1999 == 0) {
      std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
      int count = 0;
      for (it->Seek(Key(static_cast<int>(rnd.Uniform(kKeys))));
           it->Valid() && count < 50; it->Next()) {
        count++;
      }
      ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    }
    ASSERT_LE(env.open(), kSegmentBudget);
  }
  ASSERT_GT(CountSegments(db.get()), 3 * kSegmentBudget)
      << "too few segments for the budget to matter";

  // Every key reads back, by Get and by a full scan, with files closed and
  // reopened on the way.
  const uint64_t opens_before_reads = env.opens();
  for (const auto& [k, v] : model) {
    std::string got;
    Status s = db->Get(ReadOptions(), k, &got);
    ASSERT_TRUE(s.ok()) << k << ": " << s.ToString();
    ASSERT_EQ(v, got);
  }
  EXPECT_GT(env.opens(), opens_before_reads) << "no file was reopened";
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  auto want = model.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++want) {
    ASSERT_NE(want, model.end());
    ASSERT_EQ(want->first, it->key().ToString());
    ASSERT_EQ(want->second, it->value().ToString());
    ASSERT_LE(env.open(), kSegmentBudget);
  }
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  EXPECT_EQ(want, model.end());
  it.reset();

  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  EXPECT_LE(env.peak(), kSegmentBudget);
  db.reset();
  EXPECT_EQ(0, env.open()) << "segment files left open after close";
}

// Writes n keys (values of value_len bytes) in order, then flushes.
void Fill(DB* db, int n, size_t value_len,
          std::map<std::string, std::string>* model) {
  for (int i = 0; i < n; i++) {
    const std::string v = Value(i, 0, value_len);
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), v).ok());
    if (model != nullptr) (*model)[Key(i)] = v;
  }
  ASSERT_TRUE(db->Flush().ok());
}

// The child of the descriptor-limit test: 0 when every key reads back.
int FillAndReadUnderDescriptorLimit(const std::string& path) {
  const rlimit limit{64, 64};
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    std::perror("setrlimit");
    return 2;
  }
  Options options = test::TinyCompactionOptions();
  options.max_open_files = 40;
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, path, &db);
  constexpr int kKeys = 1500;
  for (int i = 0; s.ok() && i < kKeys; i++) {
    s = db->Put(WriteOptions(), Key(i), Value(i, 0, 1000));
  }
  if (s.ok()) s = db->Flush();
  const int segments = s.ok() ? CountSegments(db.get()) : 0;
  for (int i = 0; s.ok() && i < kKeys; i++) {
    std::string got;
    s = db->Get(ReadOptions(), Key(i), &got);
    if (s.ok() && got != Value(i, 0, 1000)) {
      s = Status::Corruption("wrong value for " + Key(i));
    }
  }
  if (!s.ok()) {
    std::fprintf(stderr, "under a limit of 64 descriptors: %s\n",
                 s.ToString().c_str());
    return 1;
  }
  if (segments < 64) {
    std::fprintf(stderr, "only %d segments: the limit was never at stake\n",
                 segments);
    return 3;
  }
  return 0;
}

TEST(DBTableCacheTest, WorksUnderADescriptorLimitBelowTheSegmentCount) {
  test::TempDir dir("fdlimit");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(FillAndReadUnderDescriptorLimit(dir.path()));
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status)) << "the child's error is printed above";
}

// The child of the limit-raising test: 0 when DB::Open raised a soft
// descriptor limit below max_open_files to make room for its segments (to
// the hard limit, at most 2^20, for -1).
int OpenUnderALowSoftDescriptorLimit(const std::string& path,
                                     int max_open_files) {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 2;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < 2000) {
    std::fprintf(stderr, "hard limit %ju: too low to test raising\n",
                 static_cast<uintmax_t>(limit.rlim_max));
    return 3;
  }
  const rlim_t want =
      max_open_files == -1 ? std::min<rlim_t>(limit.rlim_max, rlim_t{1} << 20)
                           : static_cast<rlim_t>(max_open_files);
  limit.rlim_cur = 128;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return 2;
  Options options;
  options.create_if_missing = true;
  options.max_open_files = max_open_files;
  std::unique_ptr<DB> db;
  if (!DB::Open(options, path, &db).ok()) return 4;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 2;
  if (limit.rlim_cur < want) {
    std::fprintf(stderr, "soft limit still %ju\n",
                 static_cast<uintmax_t>(limit.rlim_cur));
    return 1;
  }
  return 0;
}

// Each open segment holds a descriptor (pread): Open raises a soft limit
// that would not hold max_open_files of them, as far as the hard limit goes.
TEST(DBTableCacheTest, OpenRaisesASoftDescriptorLimitBelowMaxOpenFiles) {
  for (int max_open_files : {1000, -1}) {
    SCOPED_TRACE("max_open_files " + std::to_string(max_open_files));
    test::TempDir dir("fdraise");
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      _exit(OpenUnderALowSoftDescriptorLimit(dir.path(), max_open_files));
    }
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "hard limit below 2000";
    EXPECT_EQ(0, WEXITSTATUS(status)) << "the child's error is printed above";
  }
}

TEST(DBTableCacheTest, LookupsTheFilterRulesOutOpenNoFile) {
  test::TempDir dir("tablecache");
  OpenSegmentsEnv env(Env::Default());
  Options options = BudgetOptions(&env);
  test::KeepEverythingInLevelZero(&options);  // every lookup probes them all
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  // In random order, so that every segment's key range covers every key.
  constexpr int kKeys = 6000;
  std::vector<int> order(kKeys);
  for (int i = 0; i < kKeys; i++) order[i] = i;
  Random rnd(42);
  for (int i = kKeys - 1; i > 0; i--) {
    std::swap(order[i], order[rnd.Uniform(static_cast<uint64_t>(i) + 1)]);
  }
  for (int i : order) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), Value(i, 0)).ok());
  }
  ASSERT_TRUE(db->Flush().ok());
  ASSERT_GT(CountSegments(db.get()), kSegmentBudget + 2);

  const DbStats before = db->GetStats();
  const uint64_t opens_before = env.opens();
  for (int i = 0; i < 2000; i++) {
    std::string got;
    // Between two stored keys: inside every segment's key range.
    ASSERT_TRUE(db->Get(ReadOptions(), Key(i) + "x", &got).IsNotFound());
  }
  const DbStats after = db->GetStats();
  const uint64_t negatives = after.filter_negatives - before.filter_negatives;
  const uint64_t positives = after.filter_positives - before.filter_positives;
  EXPECT_GT(negatives, 2000u * kSegmentBudget);
  // Only a filter positive may need its file, and at most once.
  EXPECT_LE(env.opens() - opens_before, positives);
}

// A segment's metadata (footer, properties, index, filter) is read and
// checked once, when the segment enters the database, and kept; a reopen
// for a hit checks the file's size and reads the data block, checksummed.
// So damage found by a reopen is an error naming the file, and damage to
// metadata already in memory gives no wrong answer while the database is
// open and is an error naming the file at the next Open.
TEST(DBTableCacheTest, SegmentDamagedAfterOpenIsAnErrorWhenReopened) {
  enum Damage { kTruncate, kDataBlock, kIndexChecksum, kFooterMagic, kDelete };
  for (Damage damage :
       {kTruncate, kDataBlock, kIndexChecksum, kFooterMagic, kDelete}) {
    SCOPED_TRACE("damage " + std::to_string(damage));
    test::TempDir dir("tablecache");
    Options options = BudgetOptions(Env::Default());
    options.block_cache_capacity = 0;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    std::map<std::string, std::string> model;
    Fill(db.get(), 2000, 200, &model);
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    const std::vector<SegmentInfo> segments = db->GetSegmentInfo();
    ASSERT_GT(segments.size(), static_cast<size_t>(kSegmentBudget + 2));

    // Damage one segment, then read from every other one, so that the
    // table cache closes the damaged file.
    const SegmentInfo& victim = segments[segments.size() / 2];
    const std::string& fname = victim.file_name;
    const auto size = std::filesystem::file_size(fname);
    if (damage == kDelete) {
      std::filesystem::remove(fname);
    } else if (damage == kTruncate) {
      std::filesystem::resize_file(fname, size - 1);
    } else {
      // The first data block (its first entry holds the smallest key)
      // starts the file, or follows the value dictionary of a segment of
      // compressed values; the index block is the last before the footer,
      // so its checksum ends just before it; the footer ends with the magic.
      std::unique_ptr<RandomAccessFile> file;
      ASSERT_TRUE(Env::Default()->NewRandomAccessFile(fname, &file).ok());
      std::unique_ptr<SegmentReader> reader;
      ASSERT_TRUE(SegmentReader::Open(SegmentReaderOptions(), fname,
                                      std::move(file), size, &reader)
                      .ok());
      const SegmentProperties& props = reader->properties();
      const uint64_t first_data_block = props.data_end() - props.data_size;
      const auto offset = damage == kDataBlock ? first_data_block
                          : damage == kIndexChecksum ? size - kFooterSize - 1
                                                     : size - 1;
      reader.reset();
      std::fstream f(fname, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(offset));
      char c = 0;
      f.read(&c, 1);
      c = static_cast<char>(c ^ 0x40);
      f.seekp(static_cast<std::streamoff>(offset));
      f.write(&c, 1);
    }
    for (const SegmentInfo& seg : segments) {
      if (seg.file_number == victim.file_number) continue;
      std::string got;
      ASSERT_TRUE(db->Get(ReadOptions(), seg.smallest_key, &got).ok());
    }
    const bool metadata = damage == kIndexChecksum || damage == kFooterMagic;
    if (metadata) {
      // Nothing read now touches the damaged bytes: right answers, and the
      // next Open finds the damage.
      std::string got;
      ASSERT_TRUE(db->Get(ReadOptions(), victim.smallest_key, &got).ok());
      EXPECT_EQ(model[victim.smallest_key], got);
      std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
      size_t n = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
        ASSERT_EQ(model[it->key().ToString()], it->value().ToString());
      }
      EXPECT_TRUE(it->status().ok()) << it->status().ToString();
      EXPECT_EQ(model.size(), n);
      it.reset();
      db.reset();
      // Open checks each segment's metadata: it fails naming the file, or
      // (with paranoid_checks off) opens and the segment's reads fail.
      Status open = DB::Open(options, dir.path(), &db);
      if (!open.ok()) {
        EXPECT_TRUE(open.IsCorruption()) << open.ToString();
        EXPECT_NE(std::string::npos, open.ToString().find(fname))
            << open.ToString();
        continue;
      }
    }

    std::string got;
    Status s = db->Get(ReadOptions(), victim.smallest_key, &got);
    EXPECT_TRUE(s.IsCorruption() || s.IsIOError()) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find(fname)) << s.ToString();

    std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ASSERT_EQ(model[it->key().ToString()], it->value().ToString());
    }
    EXPECT_TRUE(it->status().IsCorruption() || it->status().IsIOError())
        << it->status().ToString();
    EXPECT_NE(std::string::npos, it->status().ToString().find(fname));
  }
}

// Every value a reader may see for key i: Value(i, g) for some generation.
bool IsSomeValueOf(int i, const std::string& v) {
  const std::string prefix = Key(i) + "@";
  if (v.compare(0, prefix.size(), prefix) != 0) return false;
  const int g = std::atoi(v.c_str() + prefix.size());
  return v == Value(i, g);
}

TEST(DBTableCacheTest, ConcurrentReadsWhileCompactionClosesAndReopensFiles) {
  test::TempDir dir("tablecache");
  OpenSegmentsEnv env(Env::Default());
  Options options = BudgetOptions(&env);
  options.block_cache_capacity = 64 << 10;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  constexpr int kKeys = 2000;
  Fill(db.get(), kKeys, 200, nullptr);

  std::atomic<bool> done{false};
  std::atomic<int> errors{0};
  std::mutex error_mu;
  std::string first_error;
  auto fail = [&](const std::string& what) {
    std::lock_guard<std::mutex> guard(error_mu);
    if (errors.fetch_add(1) == 0) first_error = what;
  };
  auto reader = [&](uint64_t seed) {
    Random rnd(seed);
    while (!done.load()) {
      const int i = static_cast<int>(rnd.Uniform(kKeys));
      if (rnd.OneIn(8)) {
        std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
        int n = 0;
        for (it->Seek(Key(i)); it->Valid() && n < 20; it->Next(), n++) {
          const int k = std::atoi(it->key().ToString().c_str() + 3);
          if (!IsSomeValueOf(k, it->value().ToString())) {
            fail("iterator: bad value at " + it->key().ToString());
          }
        }
        if (!it->status().ok()) fail("iterator: " + it->status().ToString());
      } else {
        std::string got;
        Status s = db->Get(ReadOptions(), Key(i), &got);
        if (!s.ok() || !IsSomeValueOf(i, got)) {
          fail("Get(" + Key(i) + "): " + s.ToString());
        }
      }
    }
  };
  std::vector<std::thread> readers;
  for (uint64_t t = 0; t < 4; t++) readers.emplace_back(reader, 1000 + t);
  Random rnd(7);
  for (int g = 1; g <= 4000; g++) {
    const int i = static_cast<int>(rnd.Uniform(kKeys));
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), Value(i, g)).ok());
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(0, errors.load()) << first_error;
  EXPECT_GT(env.reopens(), 0u) << "no file was closed and reopened";
}

// A segment reopened for a hit reads its data block and nothing else: the
// footer, properties, index and filter stay in memory for the segment's
// life, so that a budget far below the segment count costs an open(2) per
// reopen, not a metadata re-read.
TEST(DBTableCacheTest, AHitOnAClosedSegmentReadsOnlyItsDataBlock) {
  test::TempDir dir("tablecache");
  OpenSegmentsEnv env(Env::Default());
  Options options = BudgetOptions(&env);
  options.block_cache_capacity = 0;  // every hit reads its block
  options.answer_cache_capacity = 0;  // and no hit is answered without it
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  constexpr int kKeys = 6000;
  Fill(db.get(), kKeys, 200, nullptr);
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  ASSERT_GT(CountSegments(db.get()), 3 * kSegmentBudget);

  const uint64_t seed = test::TestSeeds()[0];
  SCOPED_TRACE("seed=" + std::to_string(seed));
  Random rnd(seed);
  const DbStats before = db->GetStats();
  const uint64_t reads_before = env.reads();
  const uint64_t reopens_before = env.reopens();
  constexpr int kLookups = 3000;
  for (int n = 0; n < kLookups; n++) {
    const int i = static_cast<int>(rnd.Uniform(kKeys));
    std::string got;
    ASSERT_TRUE(db->Get(ReadOptions(), Key(i), &got).ok()) << Key(i);
    ASSERT_EQ(Value(i, 0), got);
  }
  const DbStats after = db->GetStats();
  const uint64_t blocks = after.data_blocks_read - before.data_blocks_read;
  EXPECT_GT(env.reopens() - reopens_before, kLookups / 2u)
      << "the budget did not make hits reopen files";
  // One block per hit, one more per false positive, and no other read.
  EXPECT_GE(blocks, static_cast<uint64_t>(kLookups));
  EXPECT_EQ(blocks - kLookups, after.filter_false_positives -
                                   before.filter_false_positives);
  EXPECT_EQ(blocks, env.reads() - reads_before);
}

TEST(DBTableCacheTest, ReportsMemoryAndOpenFiles) {
  test::TempDir dir("tablecache");
  OpenSegmentsEnv env(Env::Default());
  Options options = BudgetOptions(&env);
  test::KeepEverythingInLevelZero(&options);  // nothing changes after Flush
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  Fill(db.get(), 3000, 200, nullptr);
  for (int i = 0; i < 3000; i += 7) {
    std::string got;
    ASSERT_TRUE(db->Get(ReadOptions(), Key(i), &got).ok());
  }

  const auto usage = test::ResourceUsage(db.get());
  const std::vector<SegmentInfo> segments = db->GetSegmentInfo();
  uint64_t filter_bytes = 0;
  for (const SegmentInfo& seg : segments) filter_bytes += seg.filter_bytes;
  EXPECT_EQ(segments.size(), usage.at("segments"));
  EXPECT_EQ(filter_bytes, usage.at("filter_bytes"));
  EXPECT_GT(filter_bytes, 3000u);  // about 10 bits per key
  EXPECT_EQ(static_cast<uint64_t>(kSegmentBudget),
            usage.at("max_open_segment_files"));
  // More segments than the budget, all read: the cache is full.
  EXPECT_EQ(static_cast<uint64_t>(kSegmentBudget),
            usage.at("open_segment_files"));
  EXPECT_EQ(static_cast<uint64_t>(env.open()), usage.at("open_segment_files"));
  EXPECT_GT(usage.at("index_bytes"), 0u);
  EXPECT_GT(usage.at("memtable_bytes"), 0u);  // an empty one has its arena
  EXPECT_EQ(0u, usage.at("row_cache_bytes"));  // none configured
  // Level 0 is stored raw: no value dictionaries.
  EXPECT_EQ(0u, usage.at("value_dictionary_bytes"));
  EXPECT_EQ(Options().answer_cache_capacity, usage.at("answer_cache_bytes"));
  EXPECT_EQ(usage.at("memtable_bytes") + usage.at("filter_bytes") +
                usage.at("index_bytes") + usage.at("value_dictionary_bytes") +
                usage.at("block_cache_bytes") + usage.at("answer_cache_bytes"),
            usage.at("total_bytes"));
  std::string total;
  ASSERT_TRUE(db->GetProperty("bloomkv.approximate-memory-usage", &total));
  EXPECT_EQ(std::to_string(usage.at("total_bytes")), total);
}

// Filters and index blocks past Options::filter_and_index_memory_limit stay
// in their files: at no limit, about half of what they take, and a limit
// of one byte (every segment paged), with and without a block cache, every
// answer is the model's (stored keys, absent keys, a full scan, after a
// reopen too), the memory reported stays within the limit, filter
// negatives are still counted, and the block cache keeps a paged filter
// from being read twice.
TEST(DBTableCacheTest, PastTheMemoryLimitFiltersAndIndexesArePagedAndAnswerTheSame) {
  constexpr int kKeys = 4000;
  uint64_t unlimited = 0;  // filter_bytes + index_bytes at no limit
  for (int config = 0; config < 6; config++) {
    const int limit_kind = config / 2;  // none, half, one byte
    const bool cache = config % 2 == 1;
    SCOPED_TRACE("limit kind " + std::to_string(limit_kind) +
                 (cache ? ", block cache" : ", no block cache"));
    const uint64_t limit = limit_kind == 0   ? 0
                           : limit_kind == 1 ? unlimited / 2
                                             : 1;
    test::TempDir dir("tablecache");
    OpenSegmentsEnv env(Env::Default());
    Options options = BudgetOptions(&env);
    options.block_cache_capacity = cache ? (4 << 20) : 0;
    options.filter_and_index_memory_limit = limit;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    std::map<std::string, std::string> model;
    Fill(db.get(), kKeys, 200, &model);
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    for (int i = 0; i < kKeys; i += 3) {  // a newer generation, some deleted
      if (i % 2 == 0) {
        ASSERT_TRUE(db->Delete(WriteOptions(), Key(i)).ok());
        model.erase(Key(i));
      } else {
        model[Key(i)] = Value(i, 1);
        ASSERT_TRUE(db->Put(WriteOptions(), Key(i), model[Key(i)]).ok());
      }
    }
    ASSERT_TRUE(db->Flush().ok());

    for (int pass = 0; pass < 2; pass++) {
      SCOPED_TRACE(pass == 0 ? "open" : "reopened");
      // No compaction adds segments (filters not yet cached) meanwhile.
      test::WaitForBackgroundWork(db.get());
      auto usage = test::ResourceUsage(db.get());
      const uint64_t held = usage.at("filter_bytes") + usage.at("index_bytes");
      const uint64_t segments = usage.at("segments");
      ASSERT_GT(segments, 3u * kSegmentBudget);
      if (limit_kind == 0) {
        unlimited = held;
        EXPECT_EQ(0u, usage.at("paged_indexes"));
        EXPECT_EQ(0u, usage.at("paged_filters"));
      } else {
        EXPECT_LE(held, limit);
        EXPECT_GT(usage.at("paged_indexes"), 0u);
        EXPECT_LE(usage.at("paged_filters"), usage.at("paged_indexes"));
        if (limit_kind == 2) {
          EXPECT_EQ(segments, usage.at("paged_indexes"));
          EXPECT_EQ(segments, usage.at("paged_filters"));
        }
      }
      EXPECT_EQ(limit, usage.at("filter_and_index_memory_limit"));
      for (int i = 0; i < kKeys; i++) {
        std::string got;
        const Status s = db->Get(ReadOptions(), Key(i), &got);
        auto it = model.find(Key(i));
        if (it == model.end()) {
          ASSERT_TRUE(s.IsNotFound()) << Key(i) << " " << s.ToString();
        } else {
          ASSERT_TRUE(s.ok()) << Key(i) << " " << s.ToString();
          ASSERT_EQ(it->second, got) << Key(i);
        }
      }
      const DbStats before = db->GetStats();
      for (int round = 0; round < 2; round++) {
        const DbStats round_before = db->GetStats();
        for (int i = 0; i < kKeys; i += 2) {
          std::string got;
          ASSERT_TRUE(db->Get(ReadOptions(), Key(i) + "x", &got).IsNotFound());
        }
        const DbStats after = db->GetStats();
        const uint64_t meta_reads =
            after.meta_blocks_read - round_before.meta_blocks_read;
        if (limit_kind == 0) { EXPECT_EQ(0u, meta_reads); }
        if (limit_kind == 2 && !cache) { EXPECT_GT(meta_reads, 0u); }
        // The second round finds every paged filter in the cache.
        if (cache && round == 1) { EXPECT_EQ(0u, meta_reads); }
      }
      const DbStats after = db->GetStats();
      EXPECT_GT(after.filter_negatives - before.filter_negatives,
                static_cast<uint64_t>(kKeys) / 2);
      std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
      auto m = model.begin();
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
        ASSERT_NE(model.end(), m);
        ASSERT_EQ(m->first, it->key().ToString());
        ASSERT_EQ(m->second, it->value().ToString());
      }
      ASSERT_TRUE(it->status().ok()) << it->status().ToString();
      EXPECT_EQ(model.end(), m);
      it.reset();
      // Sizes from the indexes, read from the files when paged.
      const std::string first = Key(0), middle = Key(kKeys / 2),
                        end = Key(kKeys);
      const Range ranges[] = {{first, end}, {first, middle}};
      uint64_t sizes[2] = {};
      db->GetApproximateSizes(ranges, 2, sizes);
      EXPECT_GT(sizes[1], sizes[0] / 4);
      EXPECT_LT(sizes[1], sizes[0] * 3 / 4);
      db.reset();
      ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    }
  }
}

// A paged segment's filter and index are read from the file after the
// database checked them at Open: damage to them afterwards is Corruption
// naming the file and the block's offset, never a wrong answer.
TEST(DBTableCacheTest, DamagedPagedFilterOrIndexIsCorruptionNamingTheFile) {
  for (const bool filter : {true, false}) {
    SCOPED_TRACE(filter ? "filter" : "index");
    test::TempDir dir("tablecache");
    Options options = BudgetOptions(Env::Default());
    options.block_cache_capacity = 0;
    options.filter_and_index_memory_limit = 1;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    Fill(db.get(), 2000, 200, nullptr);
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    const std::vector<SegmentInfo> segments = db->GetSegmentInfo();
    const SegmentInfo& victim = segments[segments.size() / 2];
    ASSERT_TRUE(victim.index_paged && victim.filter_paged);

    const std::string& fname = victim.file_name;
    const auto size = std::filesystem::file_size(fname);
    std::fstream f(fname, std::ios::in | std::ios::out | std::ios::binary);
    std::string footer_bytes(kFooterSize, '\0');
    f.seekg(static_cast<std::streamoff>(size - kFooterSize));
    f.read(footer_bytes.data(), kFooterSize);
    Footer footer;
    ASSERT_TRUE(
        footer.DecodeFrom(footer_bytes, fname, size - kFooterSize).ok());
    const BlockHandle& h = filter ? footer.filter_handle : footer.index_handle;
    ASSERT_GT(h.size, 0u);
    const auto offset = static_cast<std::streamoff>(h.offset + h.size / 2);
    char c = 0;
    f.seekg(offset);
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x40);
    f.seekp(offset);
    f.write(&c, 1);
    f.close();

    std::string got;
    const Status s = db->Get(ReadOptions(), victim.smallest_key, &got);
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find(fname)) << s.ToString();
    EXPECT_NE(std::string::npos,
              s.ToString().find("offset " + std::to_string(h.offset)))
        << s.ToString();
    // The other segments answer.
    for (const SegmentInfo& seg : segments) {
      if (seg.file_number == victim.file_number) continue;
      ASSERT_TRUE(db->Get(ReadOptions(), seg.smallest_key, &got).ok());
    }
  }
}

TEST(DBTableCacheTest, MaxOpenFilesBelowTheMinimumIsRejected) {
  test::TempDir dir("tablecache");
  Options options = test::TinyCompactionOptions();
  std::unique_ptr<DB> db;
  for (int n : {19, 0, -2, INT32_MIN}) {
    options.max_open_files = n;
    Status s = DB::Open(options, dir.path(), &db);
    EXPECT_TRUE(s.IsInvalidArgument()) << n << ": " << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find("or -1")) << s.ToString();
  }
  options.max_open_files = 20;
  EXPECT_TRUE(DB::Open(options, dir.path(), &db).ok());
}

// -1 keeps every segment open: nothing is closed for room, so nothing is
// ever reopened, and the segments open are the live ones.
TEST(DBTableCacheTest, MinusOneKeepsEverySegmentOpen) {
  test::TempDir dir("tablecache");
  OpenSegmentsEnv env(Env::Default());
  Options options = BudgetOptions(&env);
  options.max_open_files = -1;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  std::map<std::string, std::string> model;
  Fill(db.get(), 3000, 200, &model);
  test::WaitForBackgroundWork(db.get());
  for (int round = 0; round < 2; round++) {
    for (const auto& [k, v] : model) {
      std::string got;
      ASSERT_TRUE(db->Get(ReadOptions(), k, &got).ok()) << k;
      ASSERT_EQ(v, got);
    }
  }
  const int segments = CountSegments(db.get());
  ASSERT_GT(segments, 3 * kSegmentBudget) << "too few segments to matter";
  EXPECT_EQ(0u, env.reopens());
  EXPECT_EQ(segments, env.open());
  std::string usage;
  ASSERT_TRUE(db->GetProperty("bloomkv.resource-usage", &usage));
  EXPECT_NE(std::string::npos, usage.find("max_open_segment_files: -1\n"))
      << usage;
  EXPECT_NE(std::string::npos,
            usage.find("open_segment_files: " + std::to_string(segments) +
                       "\n"))
      << usage;
  db.reset();
  EXPECT_EQ(0, env.open());
}

}  // namespace
}  // namespace bloomkv
