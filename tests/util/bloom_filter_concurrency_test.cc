// Concurrent use of bloomkv::BloomFilter: writers calling AddConcurrently
// while readers query keys whose adds they have seen complete, and while
// other threads serialize, copy, estimate and merge from the same filter.
//
// The checks are the contract: a key whose add happens-before a query is
// found, and the bits after all threads join are exactly the bits one thread
// would have set (a lost fetch_or would show up as a missing bit). Under
// ThreadSanitizer (see docs/filters.md, "Concurrent adds") the same run also
// proves the accesses free of data races.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bloomkv/bloom_filter.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

std::string Key(int writer, uint64_t i) {
  return "w" + std::to_string(writer) + "-" + std::to_string(i);
}

std::string Serialized(const BloomFilter& f) {
  std::string s;
  f.Serialize(&s);
  return s;
}

TEST(BloomFilterConcurrencyTest, ConcurrentAddsAndQueriesLoseNothing) {
  constexpr int kWriters = 3;
  constexpr int kReaders = 2;
  constexpr uint64_t kPerWriter = 20000;
  // Small enough that writers often hit the same 64-bit words.
  BloomFilter f = BloomFilter::ForCapacity(kWriters * kPerWriter, 0.01);
  BloomFilter merged_into =
      BloomFilter::ForCapacity(kWriters * kPerWriter, 0.01);

  // published[w] = how many of writer w's keys have been added; the release
  // store after each add makes those adds happen-before a reader's acquire
  // load that sees the count.
  std::atomic<uint64_t> published[kWriters] = {};
  std::atomic<int> writers_done{0};
  std::atomic<uint64_t> false_negatives{0};
  std::atomic<uint64_t> reader_queries{0};

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; w++) {
    threads.emplace_back([&, w] {
      for (uint64_t i = 0; i < kPerWriter; i++) {
        // Pace the writers by the readers, so that queries really overlap
        // the adds however the threads are scheduled.
        if (i % 1024 == 0) {
          while (reader_queries.load(std::memory_order_relaxed) < i / 16) {
            std::this_thread::yield();
          }
        }
        f.AddConcurrently(Key(w, i));
        published[w].store(i + 1, std::memory_order_release);
      }
      writers_done.fetch_add(1, std::memory_order_release);
    });
  }
  for (int r = 0; r < kReaders; r++) {
    threads.emplace_back([&, r] {
      std::mt19937_64 rng(1000 + r);
      while (writers_done.load(std::memory_order_acquire) < kWriters) {
        const int w = static_cast<int>(rng() % kWriters);
        const uint64_t n = published[w].load(std::memory_order_acquire);
        if (n == 0) continue;
        const uint64_t i = rng() % n;
        if (!f.MightContain(Key(w, i))) false_negatives.fetch_add(1);
        reader_queries.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  // Whole-filter readers racing with the writers: snapshots, estimates and
  // a merge out of the live filter.
  threads.emplace_back([&] {
    int rounds = 0;
    while (writers_done.load(std::memory_order_acquire) < kWriters ||
           rounds == 0) {
      std::string snapshot = Serialized(f);
      BloomFilter copy(f);
      const BloomFilterInfo info = f.Info();
      EXPECT_LE(info.fill_ratio, 1.0);
      EXPECT_GE(f.ApproximateElementCount(), 0.0);
      EXPECT_TRUE(merged_into.Merge(f).ok());
      EXPECT_FALSE(snapshot.empty());
      rounds++;
    }
  });
  for (auto& t : threads) t.join();

  EXPECT_EQ(false_negatives.load(), 0u);
  // The pacing guarantees this many queries ran while keys were added.
  EXPECT_GE(reader_queries.load(), (kPerWriter - 1) / 1024 * 1024 / 16);
  // Every key, after the joins.
  for (int w = 0; w < kWriters; w++) {
    for (uint64_t i = 0; i < kPerWriter; i++) {
      ASSERT_TRUE(f.MightContain(Key(w, i))) << Key(w, i);
    }
  }
  EXPECT_EQ(f.Info().items_added, kWriters * kPerWriter);

  // The same bits as one thread adding every key: no fetch_or was lost.
  BloomFilter single = BloomFilter::ForCapacity(kWriters * kPerWriter, 0.01);
  for (int w = 0; w < kWriters; w++) {
    for (uint64_t i = 0; i < kPerWriter; i++) single.Add(Key(w, i));
  }
  EXPECT_EQ(Serialized(single), Serialized(f));

  // Merges taken while writers ran hold a subset of the final bits; one
  // more merge completes them.
  ASSERT_TRUE(merged_into.Merge(f).ok());
  std::string a = Serialized(merged_into), b = Serialized(single);
  // Same lines (the item counts differ: every merge added f's count).
  const size_t kHeader = 36, kChecksum = 4;
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.substr(kHeader, a.size() - kHeader - kChecksum),
            b.substr(kHeader, b.size() - kHeader - kChecksum));
}

// Two filters merged into each other's copies from two threads while both
// are being added to: Merge reads its source with atomic loads.
TEST(BloomFilterConcurrencyTest, MergesRaceWithAddsOnBothFilters) {
  constexpr uint64_t kKeys = 20000;
  BloomFilter a = BloomFilter::ForCapacity(2 * kKeys, 0.01);
  BloomFilter b = BloomFilter::ForCapacity(2 * kKeys, 0.01);
  BloomFilter target = BloomFilter::ForCapacity(2 * kKeys, 0.01);
  std::atomic<bool> stop{false};
  std::thread add_a([&] {
    for (uint64_t i = 0; i < kKeys; i++) a.AddConcurrently(Key(0, i));
  });
  std::thread add_b([&] {
    for (uint64_t i = 0; i < kKeys; i++) b.AddConcurrently(Key(1, i));
  });
  std::thread merger([&] {
    while (!stop.load(std::memory_order_acquire)) {
      EXPECT_TRUE(target.Merge(a).ok());
      EXPECT_TRUE(target.Merge(b).ok());
    }
  });
  add_a.join();
  add_b.join();
  stop.store(true, std::memory_order_release);
  merger.join();
  ASSERT_TRUE(target.Merge(a).ok());
  ASSERT_TRUE(target.Merge(b).ok());
  for (uint64_t i = 0; i < kKeys; i++) {
    ASSERT_TRUE(target.MightContain(Key(0, i)));
    ASSERT_TRUE(target.MightContain(Key(1, i)));
  }
}

}  // namespace
}  // namespace bloomkv
