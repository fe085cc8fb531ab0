// Tests for the sharded LRU cache: hits and misses, LRU order, capacity by
// charge, replacement accounting, erase, oversize entries, values outliving
// eviction, and concurrent use (run under -DBLOOMKV_SANITIZE=thread too).
#include "util/cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace bloomkv {
namespace {

std::string Key(int k) {
  std::string s;
  PutFixed32(&s, static_cast<uint32_t>(k));
  return s;
}

std::shared_ptr<const void> Value(int v) { return std::make_shared<int>(v); }

// -1 for a miss.
int Get(Cache* cache, int k) {
  std::shared_ptr<const void> v = cache->Lookup(Key(k));
  return v == nullptr ? -1 : *static_cast<const int*>(v.get());
}

// Single-shard caches make eviction order fully predictable.
TEST(CacheTest, HitAndMiss) {
  Cache cache(1000, 0);
  EXPECT_EQ(-1, Get(&cache, 100));
  cache.Insert(Key(100), Value(101), 1);
  EXPECT_EQ(101, Get(&cache, 100));
  EXPECT_EQ(-1, Get(&cache, 200));
  EXPECT_EQ(-1, Get(&cache, 300));
  cache.Insert(Key(200), Value(201), 1);
  EXPECT_EQ(101, Get(&cache, 100));
  EXPECT_EQ(201, Get(&cache, 200));
  EXPECT_EQ(2u, cache.TotalCharge());
  EXPECT_EQ(1000u, cache.capacity());
}

TEST(CacheTest, KeysAreBytesNotCStrings) {
  Cache cache(1000, 2);
  const std::string a("k\0a", 3);
  const std::string b("k\0b", 3);
  cache.Insert(a, Value(1), 1);
  cache.Insert(b, Value(2), 1);
  EXPECT_EQ(1, *static_cast<const int*>(cache.Lookup(a).get()));
  EXPECT_EQ(2, *static_cast<const int*>(cache.Lookup(b).get()));
  EXPECT_EQ(nullptr, cache.Lookup(Slice("k")));
}

TEST(CacheTest, EvictsLeastRecentlyUsed) {
  Cache cache(3, 0);
  cache.Insert(Key(1), Value(1), 1);
  cache.Insert(Key(2), Value(2), 1);
  cache.Insert(Key(3), Value(3), 1);
  EXPECT_EQ(1, Get(&cache, 1));  // 1 is now the most recent; 2 the oldest
  cache.Insert(Key(4), Value(4), 1);
  EXPECT_EQ(-1, Get(&cache, 2));
  EXPECT_EQ(1, Get(&cache, 1));
  EXPECT_EQ(3, Get(&cache, 3));
  EXPECT_EQ(4, Get(&cache, 4));
  // Order now (oldest first): 1, 3, 4.
  cache.Insert(Key(5), Value(5), 1);
  EXPECT_EQ(-1, Get(&cache, 1));
  EXPECT_EQ(3u, cache.TotalCharge());
}

TEST(CacheTest, CapacityIsByCharge) {
  Cache cache(100, 0);
  for (int i = 0; i < 10; i++) cache.Insert(Key(i), Value(i), 10);
  EXPECT_EQ(100u, cache.TotalCharge());
  for (int i = 0; i < 10; i++) EXPECT_EQ(i, Get(&cache, i));
  // One heavy entry pushes out as many old ones as it needs.
  cache.Insert(Key(100), Value(100), 35);
  EXPECT_EQ(100, Get(&cache, 100));
  for (int i = 0; i < 4; i++) EXPECT_EQ(-1, Get(&cache, i)) << i;
  for (int i = 4; i < 10; i++) EXPECT_EQ(i, Get(&cache, i)) << i;
  EXPECT_EQ(95u, cache.TotalCharge());
}

TEST(CacheTest, ReplaceUpdatesValueAndCharge) {
  Cache cache(100, 0);
  cache.Insert(Key(1), Value(1), 10);
  cache.Insert(Key(2), Value(2), 10);
  cache.Insert(Key(1), Value(11), 30);
  EXPECT_EQ(11, Get(&cache, 1));
  EXPECT_EQ(40u, cache.TotalCharge());  // the old charge is gone
  cache.Insert(Key(1), Value(12), 5);
  EXPECT_EQ(12, Get(&cache, 1));
  EXPECT_EQ(15u, cache.TotalCharge());
  // Replacing many times never leaks charge.
  for (int i = 0; i < 1000; i++) cache.Insert(Key(1), Value(i), 7);
  EXPECT_EQ(17u, cache.TotalCharge());
  EXPECT_EQ(2, Get(&cache, 2));
}

TEST(CacheTest, ReplacedEntryBecomesMostRecent) {
  Cache cache(3, 0);
  cache.Insert(Key(1), Value(1), 1);
  cache.Insert(Key(2), Value(2), 1);
  cache.Insert(Key(3), Value(3), 1);
  cache.Insert(Key(1), Value(10), 1);  // 2 is now the oldest
  cache.Insert(Key(4), Value(4), 1);
  EXPECT_EQ(-1, Get(&cache, 2));
  EXPECT_EQ(10, Get(&cache, 1));
}

TEST(CacheTest, Erase) {
  Cache cache(100, 0);
  cache.Erase(Key(1));  // erasing a missing key is a no-op
  cache.Insert(Key(1), Value(1), 10);
  cache.Insert(Key(2), Value(2), 20);
  cache.Erase(Key(1));
  EXPECT_EQ(-1, Get(&cache, 1));
  EXPECT_EQ(2, Get(&cache, 2));
  EXPECT_EQ(20u, cache.TotalCharge());
  cache.Erase(Key(1));
  EXPECT_EQ(20u, cache.TotalCharge());
  cache.Erase(Key(2));
  EXPECT_EQ(0u, cache.TotalCharge());
}

TEST(CacheTest, OversizeEntryIsNotKept) {
  Cache cache(100, 0);
  cache.Insert(Key(1), Value(1), 50);
  cache.Insert(Key(2), Value(2), 101);
  EXPECT_EQ(-1, Get(&cache, 2));
  EXPECT_EQ(1, Get(&cache, 1));  // and it evicted nothing
  EXPECT_EQ(50u, cache.TotalCharge());
  // Replacing with an oversize value drops the old one too: a stale value
  // must never be served for a key that was re-inserted.
  cache.Insert(Key(1), Value(11), 1000);
  EXPECT_EQ(-1, Get(&cache, 1));
  EXPECT_EQ(0u, cache.TotalCharge());
  // Exactly the capacity fits.
  cache.Insert(Key(3), Value(3), 100);
  EXPECT_EQ(3, Get(&cache, 3));
}

TEST(CacheTest, HeldValuesSurviveEvictionAndErase) {
  Cache cache(2, 0);
  cache.Insert(Key(1), Value(1), 1);
  std::shared_ptr<const void> held = cache.Lookup(Key(1));
  ASSERT_NE(nullptr, held);
  cache.Insert(Key(2), Value(2), 1);
  cache.Insert(Key(3), Value(3), 1);  // evicts 1
  EXPECT_EQ(-1, Get(&cache, 1));
  EXPECT_EQ(1, *static_cast<const int*>(held.get()));
  std::weak_ptr<const void> weak = held;
  held.reset();
  EXPECT_TRUE(weak.expired());  // the cache let go of it on eviction

  held = cache.Lookup(Key(2));
  cache.Erase(Key(2));
  EXPECT_EQ(2, *static_cast<const int*>(held.get()));
}

TEST(CacheTest, DestroyingCacheReleasesValues) {
  std::weak_ptr<const void> weak;
  {
    Cache cache(10, 1);
    auto v = Value(7);
    weak = v;
    cache.Insert(Key(1), std::move(v), 1);
    EXPECT_FALSE(weak.expired());
  }
  EXPECT_TRUE(weak.expired());
}

TEST(CacheTest, ShardedCapacityIsRespected) {
  Cache cache(1 << 10, 4);
  for (int i = 0; i < 10000; i++) cache.Insert(Key(i), Value(i), 3);
  // Each of 16 shards holds at most 64 / 3 entries of charge 3.
  EXPECT_LE(cache.TotalCharge(), cache.capacity());
  EXPECT_GT(cache.TotalCharge(), cache.capacity() / 2);
  // The most recent insert is always present.
  EXPECT_EQ(9999, Get(&cache, 9999));
}

TEST(CacheTest, UnboundedCapacity) {
  // SIZE_MAX is a natural "no limit"; it must not round to nothing.
  Cache cache(std::numeric_limits<size_t>::max(), 4);
  for (int i = 0; i < 100; i++) cache.Insert(Key(i), Value(i), 1 << 20);
  int hits = 0;
  for (int i = 0; i < 100; i++) hits += Get(&cache, i) == i;
  EXPECT_EQ(100, hits);
}

TEST(CacheTest, ShardBitsAreClamped) {
  Cache negative(100, -3);
  negative.Insert(Key(1), Value(1), 1);
  EXPECT_EQ(1, Get(&negative, 1));
  Cache huge(1 << 20, 64);  // would be a shift by 64
  huge.Insert(Key(1), Value(1), 1);
  EXPECT_EQ(1, Get(&huge, 1));
}

TEST(CacheTest, NewIdIsUnique) {
  Cache cache(10);
  const uint64_t a = cache.NewId();
  const uint64_t b = cache.NewId();
  EXPECT_NE(a, b);
  EXPECT_NE(0u, a);
}

TEST(CacheTest, ConcurrentInsertLookupErase) {
  // Four threads insert, look up and erase overlapping keys. Every value
  // found must be the one stored for its key, and the charge must stay
  // within capacity; TSan checks the locking.
  Cache cache(2000, 2);
  constexpr int kThreads = 4;
  constexpr int kKeys = 500;
  std::atomic<int> wrong{0};
  std::atomic<int> hits{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      Random rnd(1000 + t);
      for (int i = 0; i < 20000; i++) {
        const int k = static_cast<int>(rnd.Uniform(kKeys));
        const uint64_t op = rnd.Uniform(10);
        if (op < 3) {
          cache.Insert(Key(k), Value(k * 3), 1 + rnd.Uniform(8));
        } else if (op < 9) {
          std::shared_ptr<const void> v = cache.Lookup(Key(k));
          if (v != nullptr) {
            hits++;
            if (*static_cast<const int*>(v.get()) != k * 3) wrong++;
          }
        } else {
          cache.Erase(Key(k));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(0, wrong.load());
  EXPECT_GT(hits.load(), 0);
  EXPECT_LE(cache.TotalCharge(), cache.capacity());
}

}  // namespace
}  // namespace bloomkv
