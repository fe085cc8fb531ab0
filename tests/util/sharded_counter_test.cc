// Tests of ShardedCounters: sums are exact however many threads add, with
// more threads alive at once than there are single-writer shards.
#include "util/sharded_counter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

enum : size_t { kFirst, kSecond, kNumCounters };

TEST(ShardedCounterTest, OneThreadSumsExactly) {
  ShardedCounters<kNumCounters> c;
  EXPECT_EQ(0u, c.Sum(kFirst));
  for (int i = 0; i < 1000; i++) c.Add(kFirst, 3);
  c.ShardFor(ThisThreadIndex()).Add(kSecond, 7);
  EXPECT_EQ(3000u, c.Sum(kFirst));
  EXPECT_EQ(7u, c.Sum(kSecond));
}

TEST(ShardedCounterTest, LiveThreadsHaveDistinctIndices) {
  constexpr int kThreads = 8;
  std::vector<size_t> index(kThreads);
  std::atomic<int> arrived{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      index[t] = ThisThreadIndex();
      arrived.fetch_add(1);
      while (arrived.load() < kThreads) std::this_thread::yield();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(kThreads, static_cast<int>(
                          std::set<size_t>(index.begin(), index.end()).size()));
}

// A thread index past kCounterShards never lands on the shard of a thread
// below it, whose owner writes without a locked instruction.
TEST(ShardedCounterTest, IndicesPastTheShardsShareNoOwnedShard) {
  ShardedCounters<kNumCounters> c;
  std::set<const void*> owned;
  for (size_t i = 0; i < kCounterShards; i++) owned.insert(&c.ShardFor(i));
  EXPECT_EQ(kCounterShards, owned.size());
  for (size_t i = kCounterShards; i < 4 * kCounterShards; i++) {
    EXPECT_EQ(0u, owned.count(&c.ShardFor(i))) << "thread index " << i;
  }
}

// Threads with an index of their own write their shard with a plain load and
// store; those past kCounterShards share one more shard. Were a thread past
// the limit put on another thread's shard, the owner's unlocked store would
// overwrite its additions and the sum would come out short.
TEST(ShardedCounterTest, SumIsExactWithMoreThreadsThanShards) {
  constexpr int kThreads = static_cast<int>(kCounterShards) + 8;
  constexpr uint64_t kAdds = 500000;
  ShardedCounters<kNumCounters> c;
  std::atomic<int> arrived{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&] {
      // Every thread is alive before any adds, so the indices run past
      // kCounterShards.
      arrived.fetch_add(1);
      while (arrived.load() < kThreads) std::this_thread::yield();
      auto& shard = c.ShardFor(ThisThreadIndex());
      for (uint64_t i = 0; i < kAdds; i++) {
        shard.Add(kFirst, 1);
        if (i % 4 == 0) c.Add(kSecond, 2);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(kThreads * kAdds, c.Sum(kFirst));
  EXPECT_EQ(kThreads * (kAdds / 4) * 2, c.Sum(kSecond));
}

}  // namespace BLOOMKV_FILE_NAMESPACE
}  // namespace bloomkv
