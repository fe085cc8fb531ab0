// Concurrency: readers and writers share one DB while flushes run. Built
// with -DBLOOMKV_SANITIZE=thread this is the ThreadSanitizer check.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "bloomkv/db.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace {

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

}  // namespace
}  // namespace bloomkv
