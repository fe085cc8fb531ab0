// Concurrency: readers and writers share one DB while flushes and
// compactions install new read views; the read-view cache on its own; and
// the exactness of the sharded statistics. Built with
// -DBLOOMKV_SANITIZE=thread this is the ThreadSanitizer check.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "db/filename.h"
#include "db/read_view.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

constexpr int kWriters = 2;
constexpr int kReaders = 4;
constexpr int kWritesPerWriter = 6000;

std::string Key(int writer, int n) {
  return "w" + std::to_string(writer) + "-" + std::to_string(n);
}
std::string Value(int writer, int n) {
  return Key(writer, n) + std::string(50 + n % 200, 'v');
}

TEST(ConcurrencyTest, ReadersSeeEveryPublishedWriteWhileFlushesRun) {
  test::TempDir dir;
  Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());

  std::atomic<int> progress[kWriters];
  for (auto& p : progress) p.store(-1);
  std::atomic<bool> failed{false};
  std::atomic<int> writers_done{0};

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; w++) {
    threads.emplace_back([&, w] {
      for (int n = 0; n < kWritesPerWriter && !failed; n++) {
        WriteOptions wo;
        wo.sync = n % 500 == 0;
        if (!db->Put(wo, Key(w, n), Value(w, n)).ok()) failed = true;
        if (n % 3 == 1 && !db->Delete(WriteOptions(), Key(w, n - 1)).ok()) {
          failed = true;
        }
        progress[w].store(n, std::memory_order_release);
      }
      writers_done++;
    });
  }
  for (int r = 0; r < kReaders; r++) {
    threads.emplace_back([&, r] {
      Random rnd(1000 + r);
      std::string v;
      while (writers_done < kWriters && !failed) {
        const int w = static_cast<int>(rnd.Uniform(kWriters));
        const int top = progress[w].load(std::memory_order_acquire);
        if (top < 2) continue;
        // Only keys whose fate is settled: n and n+1 both written.
        const int n = static_cast<int>(rnd.Uniform(top - 1));
        Status s = db->Get(ReadOptions(), Key(w, n), &v);
        const bool deleted = n % 3 == 0;
        if (deleted ? !s.IsNotFound() : !(s.ok() && v == Value(w, n))) {
          ADD_FAILURE() << "reader " << r << " key " << Key(w, n) << ": "
                        << s.ToString();
          failed = true;
        }
        if (rnd.Uniform(200) == 0) {
          auto it = db->NewIterator(ReadOptions());
          std::string prev;
          int count = 0;
          for (it->SeekToFirst(); it->Valid() && count < 2000;
               it->Next(), count++) {
            if (!prev.empty() && prev >= it->key().ToString()) {
              ADD_FAILURE() << "iterator out of order";
              failed = true;
            }
            prev = it->key().ToString();
          }
          if (!it->status().ok()) failed = true;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_FALSE(failed);
  EXPECT_GT(db->GetStats().flushes, 2u);
  std::string v;
  for (int w = 0; w < kWriters; w++) {
    for (int n = 0; n < kWritesPerWriter - 1; n++) {
      Status s = db->Get(ReadOptions(), Key(w, n), &v);
      ASSERT_EQ(n % 3 == 0, s.IsNotFound()) << Key(w, n);
    }
  }
}

// ---------------------------------------------------------------------------
// Consistency while views change

// Each key belongs to one writer, which writes versions 0, 1, 2, ... of it;
// the value names the version, padded so that memtables fill quickly.
std::string VersionedValue(uint64_t version) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%010llu|",
                static_cast<unsigned long long>(version));
  return buf + std::string(100, 'p');
}
uint64_t VersionOf(const std::string& value) {
  return std::stoull(value.substr(0, 10));
}
std::string OwnedKey(int key) { return "key" + std::to_string(key); }

// The segment files in dir, by number.
std::set<uint64_t> SegmentFilesIn(const std::string& dir) {
  std::set<uint64_t> numbers;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    uint64_t number;
    FileType type;
    if (ParseFileName(e.path().filename().string(), &number, &type) &&
        type == FileType::kSegmentFile) {
      numbers.insert(number);
    }
  }
  return numbers;
}

std::set<uint64_t> LiveSegments(DB* db) {
  std::set<uint64_t> numbers;
  for (const SegmentInfo& i : db->GetSegmentInfo()) {
    numbers.insert(i.file_number);
  }
  return numbers;
}

// Readers never go back in time: once a reader has seen version k of a key
// (through Get or an iterator) it never later sees an older one, and reads
// at a snapshot return the same thing however often they are repeated,
// while writers overwrite and the background thread flushes and compacts
// (each of which installs a new read view). At the end every Get is in the
// statistics and no obsolete segment file is left.
TEST(ConcurrencyTest, ReadsNeverGoBackInTimeWhileViewsChange) {
  constexpr int kKeys = 40;
  constexpr int kViewWriters = 2;
  constexpr int kViewReaders = 3;
  constexpr int kRounds = 120;  // versions written per key
  // Without caches of answers, with a row cache, and with an answer cache
  // of 16 slots that readers fight over, whose answers must follow the
  // segments the views install.
  // (1 MiB: room for every segment's answers, so that the check at the end
  // is not at the mercy of admission.)
  struct Caches {
    size_t row_cache;
    size_t answer_cache;
  };
  for (const Caches caches : {Caches{0, 0}, Caches{size_t{1} << 20, 0},
                              Caches{0, size_t{4} << 10}}) {
  const size_t row_cache = caches.row_cache;
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed) +
                 " row cache=" + std::to_string(row_cache) +
                 " answer cache=" + std::to_string(caches.answer_cache));
    test::TempDir dir;
    std::unique_ptr<DB> db;
    Options options = test::TinyCompactionOptions();
    options.row_cache_capacity = row_cache;
    options.answer_cache_capacity = caches.answer_cache;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    const uint64_t gets_before = db->GetStats().gets;

    std::atomic<bool> failed{false};
    std::atomic<int> writers_done{0};
    std::atomic<uint64_t> gets{0};
    auto fail = [&](const std::string& what) {
      ADD_FAILURE() << what;
      failed = true;
    };

    std::vector<std::thread> threads;
    for (int w = 0; w < kViewWriters; w++) {
      threads.emplace_back([&, w] {
        for (int round = 0; round < kRounds && !failed; round++) {
          for (int k = w; k < kKeys && !failed; k += kViewWriters) {
            if (!db->Put(WriteOptions(), OwnedKey(k), VersionedValue(round))
                     .ok()) {
              fail("put failed");
            }
          }
        }
        writers_done++;
      });
    }
    for (int r = 0; r < kViewReaders; r++) {
      threads.emplace_back([&, r] {
        Random rnd(seed * 31 + r);
        std::map<int, uint64_t> seen;  // key -> newest version seen
        auto saw = [&](int k, uint64_t version, const char* how) {
          auto it = seen.find(k);
          if (it != seen.end() && version < it->second) {
            fail(std::string(how) + " of " + OwnedKey(k) + " went back from " +
                 std::to_string(it->second) + " to " + std::to_string(version));
          }
          if (it == seen.end() || version > it->second) seen[k] = version;
        };
        std::string v;
        while (writers_done < kViewWriters && !failed) {
          const int choice = static_cast<int>(rnd.Uniform(100));
          if (choice < 90) {
            const int k = static_cast<int>(rnd.Uniform(kKeys));
            Status s = db->Get(ReadOptions(), OwnedKey(k), &v);
            gets++;
            if (s.ok()) {
              saw(k, VersionOf(v), "Get");
            } else if (!s.IsNotFound() || seen.count(k) != 0) {
              fail("Get " + OwnedKey(k) + ": " + s.ToString());
            }
          } else if (choice < 97) {
            auto it = db->NewIterator(ReadOptions());
            for (it->SeekToFirst(); it->Valid(); it->Next()) {
              const int k = std::stoi(it->key().ToString().substr(3));
              saw(k, VersionOf(it->value().ToString()), "iterator");
            }
            if (!it->status().ok()) fail(it->status().ToString());
          } else {
            // A snapshot's answers never change, whatever is installed
            // between two reads at it.
            const Snapshot* snap = db->GetSnapshot();
            ReadOptions ro;
            ro.snapshot = snap;
            std::string first[kKeys];
            Status first_status[kKeys];
            for (int k = 0; k < kKeys; k++) {
              first_status[k] = db->Get(ro, OwnedKey(k), &first[k]);
            }
            std::this_thread::yield();
            for (int k = 0; k < kKeys; k++) {
              Status s = db->Get(ro, OwnedKey(k), &v);
              if (s.ToString() != first_status[k].ToString() ||
                  (s.ok() && v != first[k])) {
                fail("snapshot read of " + OwnedKey(k) + " changed");
              }
            }
            gets += 2 * kKeys;
            db->ReleaseSnapshot(snap);
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    ASSERT_FALSE(failed);

    // Quiescent: the sharded counters add up to every Get made.
    EXPECT_EQ(gets_before + gets.load(), db->GetStats().gets);
    // Views were installed under the readers' feet.
    EXPECT_GT(db->GetStats().flushes, 2u);
    // Every key has its last version.
    std::string v;
    for (int k = 0; k < kKeys; k++) {
      ASSERT_TRUE(db->Get(ReadOptions(), OwnedKey(k), &v).ok());
      EXPECT_EQ(uint64_t{kRounds - 1}, VersionOf(v));
    }
    // The readers have moved on (exited): one more compaction deletes every
    // segment the views they held kept alive.
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    EXPECT_EQ(LiveSegments(db.get()), SegmentFilesIn(dir.path()));
    if (row_cache > 0 || caches.answer_cache > 0) {
      // Whether the readers met the cache depends on timing; with every
      // key in segments now, the second of two reads comes from the row
      // cache, and the answer cache answers some of the third.
      for (int pass = 0; pass < 3; pass++) {
        for (int k = 0; k < kKeys; k++) {
          ASSERT_TRUE(db->Get(ReadOptions(), OwnedKey(k), &v).ok());
          EXPECT_EQ(uint64_t{kRounds - 1}, VersionOf(v));
        }
      }
      if (row_cache > 0) {
        EXPECT_GE(db->GetStats().row_cache_hits, uint64_t{kKeys});
      } else {
        EXPECT_GT(db->GetStats().answer_cache_hits, 0u);
      }
    }
  }
  }
}

// A thread that read once and then sits idle keeps a view cached; the next
// installed view must take it back, or the segments of its version would
// never be deleted.
TEST(ConcurrencyTest, IdleReaderDoesNotKeepObsoleteSegments) {
  test::TempDir dir;
  Options options = test::TinyCompactionOptions();
  test::KeepEverythingInLevelZero(&options);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  for (int i = 0; i < 200; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), OwnedKey(i), VersionedValue(i)).ok());
  }
  ASSERT_TRUE(db->Flush().ok());
  const std::set<uint64_t> old_segments = LiveSegments(db.get());
  ASSERT_FALSE(old_segments.empty());

  std::mutex mu;
  std::condition_variable cv;
  bool has_read = false, may_exit = false;
  std::thread idle([&] {
    std::string v;
    EXPECT_TRUE(db->Get(ReadOptions(), OwnedKey(7), &v).ok());
    std::unique_lock<std::mutex> lock(mu);
    has_read = true;
    cv.notify_all();
    cv.wait(lock, [&] { return may_exit; });
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return has_read; });
  }
  // Rewrites everything into new segments while the idle thread lives.
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  const std::set<uint64_t> files = SegmentFilesIn(dir.path());
  for (uint64_t n : old_segments) {
    EXPECT_EQ(0u, files.count(n)) << "segment " << n << " still on disk";
  }
  EXPECT_EQ(LiveSegments(db.get()), files);
  {
    std::lock_guard<std::mutex> lock(mu);
    may_exit = true;
  }
  cv.notify_all();
  idle.join();
}

// Readers of mapped segments share one record of the blocks already
// verified, and of the blocks stored raw, which they search where they lie
// without asking the block cache: the first reader of a block marks it
// while others test it, and the first read of a segment records that it is
// mapped. Without a cache; with one, raw blocks (which stay out of it); with
// one and LZ4 blocks (decompressed, admitted, then served from the cache).
// Every answer stays exact (and, under ThreadSanitizer, no race).
TEST(ConcurrencyTest, ReadersOfMappedSegmentsShareTheVerifiedBlocks) {
  struct Config {
    size_t cache;
    CompressionType compression;
  };
  for (const Config& c : {Config{0, CompressionType::kNone},
                          Config{1 << 20, CompressionType::kNone},
                          Config{1 << 20, CompressionType::kLZ4}}) {
    SCOPED_TRACE("cache " + std::to_string(c.cache) + " compression " +
                 std::to_string(static_cast<int>(c.compression)));
    test::TempDir dir;
    EnvOptions eo;
    eo.use_mmap_reads = true;
    std::unique_ptr<Env> env = NewPosixEnv(eo);
    Options options = test::TinyCompactionOptions();
    options.env = env.get();
    options.block_cache_capacity = c.cache;
    options.compression = c.compression;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    constexpr int kKeys = 4000;
    for (int i = 0; i < kKeys; i++) {
      ASSERT_TRUE(
          db->Put(WriteOptions(), OwnedKey(i), VersionedValue(i)).ok());
    }
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    std::atomic<int> wrong{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < kReaders; t++) {
      readers.emplace_back([&, t] {
        // Each reader walks the keys with its own stride, so that readers
        // meet unverified blocks at the same time.
        constexpr int kStrides[kReaders] = {1, 3, 7, 9};  // prime to kKeys
        for (int n = 0; n < kKeys; n++) {
          const int i = (n * kStrides[t] + t * 997) % kKeys;
          std::string v;
          const Status s = db->Get(ReadOptions(), OwnedKey(i), &v);
          if (!s.ok() || v != VersionedValue(i)) wrong++;
        }
      });
    }
    for (auto& r : readers) r.join();
    EXPECT_EQ(0, wrong.load());
  }
}

// Readers whose lookups consult level 0 in vain ask for its compaction
// (Options::read_triggered_compaction) from their own threads, while a
// writer flushes new level-0 segments: every read still finds what was
// written before it began, and the compaction they asked for runs.
TEST(ConcurrencyTest, ReadersAskForLevel0CompactionWhileAWriterFlushes) {
  constexpr int kGetsPerReader = 140000;  // two checks of each reader
  test::TempDir dir;
  Options options = test::TinyCompactionOptions();
  options.level0_compaction_trigger = 8;
  options.level0_slowdown_writes_trigger = 16;
  options.level0_stop_writes_trigger = 24;
  options.max_bytes_for_level_base = 64 << 20;  // level 0 -> the last level
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  for (int i = 0; i < 4000; i += 2) {
    ASSERT_TRUE(db->Put(WriteOptions(), OwnedKey(i), VersionedValue(i)).ok());
  }
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  std::atomic<int> wrong{0};
  std::thread writer([&] {
    // Odd keys in six level-0 segments; never the even keys readers check.
    for (int round = 0; round < 6; round++) {
      for (int i = 1 + 2 * round; i < 4000; i += 40) {
        if (!db->Put(WriteOptions(), OwnedKey(i), VersionedValue(i)).ok()) {
          wrong++;
        }
      }
      if (!db->Flush().ok()) wrong++;
    }
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; t++) {
    readers.emplace_back([&, t] {
      std::string v;
      for (int n = 0; n < kGetsPerReader; n++) {
        const int k = 2 * ((n * 7 + t * 13) % 2000);
        if (!db->Get(ReadOptions(), OwnedKey(k), &v).ok() ||
            v != VersionedValue(k)) {
          wrong++;
        }
      }
    });
  }
  for (auto& r : readers) r.join();
  writer.join();
  test::WaitForBackgroundWork(db.get());
  EXPECT_EQ(0, wrong.load());
  EXPECT_GE(db->GetStats().read_triggered_compactions, 1u);
  std::string v;
  for (int i = 0; i < 4000; i++) {
    const bool written = i % 2 == 0 || (i % 40 - 1) / 2 < 6;
    const Status s = db->Get(ReadOptions(), OwnedKey(i), &v);
    if (written) {
      ASSERT_TRUE(s.ok()) << i << ": " << s.ToString();
      EXPECT_EQ(VersionedValue(i), v) << i;
    } else {
      EXPECT_TRUE(s.IsNotFound()) << i << ": " << s.ToString();
    }
  }
}

// ---------------------------------------------------------------------------
// Statistics

// At quiescence the sharded counters are exact: N threads x M Gets show up
// as N*M gets, and the per-segment lookups and filter outcomes add up to
// the DB-wide figures.
TEST(ConcurrencyTest, ShardedStatisticsAreExactAtQuiescence) {
  constexpr int kThreads = 4;
  constexpr int kGetsPerThread = 3000;
  test::TempDir dir;
  Options options = test::TinyCompactionOptions();
  // Every found key then ends in a segment searched (checked below).
  options.answer_cache_capacity = 0;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  for (int i = 0; i < 2000; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), OwnedKey(i), VersionedValue(i)).ok());
  }
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  // The manual compaction can leave a level above its byte target: let
  // background compaction finish, so that no segment, and its counters, is
  // replaced while the Gets run.
  for (int i = 0;; i++) {
    std::string pending;
    ASSERT_TRUE(db->GetProperty("bloomkv.compaction-pending", &pending));
    if (pending == "0") break;
    ASSERT_LT(i, 3000) << "compaction did not settle";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto segment_sums = [&] {
    SegmentInfo sum;
    for (const SegmentInfo& i : db->GetSegmentInfo()) {
      sum.lookups += i.lookups;
      sum.filter_negatives += i.filter_negatives;
      sum.filter_positives += i.filter_positives;
      sum.false_positives += i.false_positives;
    }
    return sum;
  };
  const DbStats before = db->GetStats();
  const SegmentInfo seg_before = segment_sums();

  std::atomic<uint64_t> found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      std::string v;
      // Half present keys, half absent ones (filter negatives).
      for (int n = 0; n < kGetsPerThread; n++) {
        const int k = (n * 7 + t) % 4000;
        if (db->Get(ReadOptions(), OwnedKey(k), &v).ok()) found++;
      }
    });
  }
  for (auto& t : threads) t.join();

  const DbStats after = db->GetStats();
  const SegmentInfo seg_after = segment_sums();
  EXPECT_EQ(uint64_t{kThreads * kGetsPerThread}, after.gets - before.gets);
  EXPECT_GT(found.load(), 0u);
  EXPECT_EQ(after.segments_consulted - before.segments_consulted,
            seg_after.lookups - seg_before.lookups);
  EXPECT_EQ(after.filter_negatives - before.filter_negatives,
            seg_after.filter_negatives - seg_before.filter_negatives);
  EXPECT_EQ(after.filter_positives - before.filter_positives,
            seg_after.filter_positives - seg_before.filter_positives);
  EXPECT_EQ(after.filter_false_positives - before.filter_false_positives,
            seg_after.false_positives - seg_before.false_positives);
  // Every present key ends in a filter positive that finds it.
  EXPECT_EQ(found.load(),
            (after.filter_positives - before.filter_positives) -
                (after.filter_false_positives - before.filter_false_positives));
}

// ---------------------------------------------------------------------------
// ReadViewCache on its own

// Readers acquire and release while views are installed: each reader sees
// generations (versions, here) in order, and once no read is in flight,
// one more install leaves exactly the current view alive, whether or not
// threads outnumber the cache's slots.
TEST(ReadViewCacheTest, OldViewsDieOnceNoReadUsesThem) {
  for (int readers : {4, 80}) {  // 80: more threads than slots
    SCOPED_TRACE("readers=" + std::to_string(readers));
    ReadViewCache cache;
    std::vector<std::weak_ptr<const Version>> installed;
    std::map<const Version*, size_t> order;
    auto install = [&] {
      auto v = std::make_shared<const Version>();
      order[v.get()] = installed.size();
      installed.push_back(v);
      cache.Install(new ReadView(nullptr, nullptr, std::move(v)));
    };
    install();
    std::atomic<bool> stop{false};
    std::atomic<bool> failed{false};
    std::mutex order_mu;  // order is extended by the installer
    std::vector<std::thread> threads;
    for (int r = 0; r < readers; r++) {
      threads.emplace_back([&] {
        size_t newest = 0;
        for (int n = 0; n < 300 || !stop; n++) {
          const size_t thread = ThisThreadIndex();
          ReadView* view = cache.Acquire(thread);
          size_t index;
          {
            std::lock_guard<std::mutex> guard(order_mu);
            index = order.at(&view->version());
          }
          if (index < newest) failed = true;
          newest = index;
          cache.Release(thread, view);
          if (n > 100000) break;
        }
      });
    }
    for (int i = 0; i < 200; i++) {
      std::lock_guard<std::mutex> guard(order_mu);
      install();
    }
    stop = true;
    for (auto& t : threads) t.join();
    EXPECT_FALSE(failed) << "a reader went back to an older view";
    install();
    for (size_t i = 0; i + 1 < installed.size(); i++) {
      EXPECT_TRUE(installed[i].expired()) << "view " << i << " still alive";
    }
    EXPECT_FALSE(installed.back().expired());
  }
}

}  // namespace
}  // namespace bloomkv
