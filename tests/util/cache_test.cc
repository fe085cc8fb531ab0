// Tests for the sharded CLOCK cache: hits and misses, eviction order,
// capacity by charge, replacement accounting, erase of one key and of one
// file's keys, oversize entries, values outliving eviction, a seeded
// comparison with a model clock, and concurrent use (run under
// -DBLOOMKV_SANITIZE=thread too).
#include "util/cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

constexpr uint64_t kFileId = 7;
constexpr uint64_t kBlockSize = 4096;

// Block k of one file.
CacheKey Key(int k) {
  return CacheKey{kFileId, static_cast<uint64_t>(k) * kBlockSize};
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

// Lookup with admission, inserting what it admits as a block read would:
// whether key k hit, and on a miss whether it was admitted.
enum class Outcome { kHit, kAdmitted, kRefused };
Outcome LookupAdmit(Cache* cache, int k, size_t charge = 1) {
  bool admit = false;
  if (cache->Lookup(Key(k), &admit) != nullptr) return Outcome::kHit;
  if (!admit) return Outcome::kRefused;
  cache->Insert(Key(k), Value(k), charge);
  return Outcome::kAdmitted;
}

// Read in place of Lookup: the value it copied out (-1 when it did not call
// read), whether it hit, and the same admission.
Outcome ReadAdmit(Cache* cache, int k, int* copied) {
  bool admit = false;
  *copied = -1;
  const bool hit = cache->Read(
      Key(k), &admit,
      [](const void* v, void* arg) {
        *static_cast<int*>(arg) = *static_cast<const int*>(v);
      },
      copied);
  if (hit) return Outcome::kHit;
  if (!admit) return Outcome::kRefused;
  cache->Insert(Key(k), Value(k), 1);
  return Outcome::kAdmitted;
}

// Two caches fed the same seeded stream of keys, one through Lookup and one
// through Read, over more keys than they hold: the same hits, admissions and
// evictions (Read marks what it reads, as Lookup does), and every hit copies
// out the key's own value.
TEST(CacheTest, ReadHitsAdmitsAndMarksAsLookupDoes) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    Cache by_lookup(64, 0);
    Cache by_read(64, 0);
    int hits = 0;
    for (int i = 0; i < 20000; i++) {
      // Skewed: a few keys are read far more often than the rest.
      const int k = rnd.OneIn(2) ? static_cast<int>(rnd.Uniform(16))
                                 : static_cast<int>(rnd.Uniform(400));
      int copied;
      const Outcome want = LookupAdmit(&by_lookup, k);
      ASSERT_EQ(want, ReadAdmit(&by_read, k, &copied)) << "op " << i;
      ASSERT_EQ(want == Outcome::kHit ? k : -1, copied) << "op " << i;
      hits += want == Outcome::kHit;
    }
    EXPECT_GT(hits, 5000);
    EXPECT_EQ(by_lookup.TotalCharge(), by_read.TotalCharge());
  }
}

TEST(CacheTest, AdmitsEveryMissUntilFullThenOnlySecondMisses) {
  Cache cache(100, 0);
  for (int i = 0; i < 100; i++) {
    ASSERT_EQ(Outcome::kAdmitted, LookupAdmit(&cache, i)) << i;
  }
  // Still no eviction: the 101st goes in and pushes out the oldest.
  ASSERT_EQ(Outcome::kAdmitted, LookupAdmit(&cache, 100));
  EXPECT_EQ(-1, Get(&cache, 0));
  // Full: a key missing for the first time is refused, the second time
  // admitted, and then hits.
  EXPECT_EQ(Outcome::kRefused, LookupAdmit(&cache, 1000));
  EXPECT_EQ(Outcome::kAdmitted, LookupAdmit(&cache, 1000));
  EXPECT_EQ(Outcome::kHit, LookupAdmit(&cache, 1000));
  EXPECT_EQ(100u, cache.TotalCharge());
}

TEST(CacheTest, FloodOfOneOffMissesKeepsTheHotEntries) {
  // The hot entries are read once per 200 one-off keys, twice the cache's
  // size: plain LRU would evict them between two reads. With admission the
  // one-off keys never get in and the hot ones stay.
  Cache cache(100, 0);
  for (int i = 0; i < 100; i++) LookupAdmit(&cache, i);
  LookupAdmit(&cache, 100);  // first eviction: recent misses now tracked
  int hot_misses = 0;
  for (int n = 0; n < 10000; n++) {
    EXPECT_NE(Outcome::kHit, LookupAdmit(&cache, 1000000 + n));
    if (n % 200 == 0) {
      for (int h = 50; h < 60; h++) {
        hot_misses += LookupAdmit(&cache, h) != Outcome::kHit;
      }
    }
  }
  EXPECT_EQ(0, hot_misses);
  for (int h = 50; h < 60; h++) EXPECT_EQ(h, Get(&cache, h)) << h;
}

TEST(CacheTest, AdmitsFreelyAgainOnceEntriesAreErased) {
  Cache cache(64, 0);
  for (int i = 0; i < 65; i++) LookupAdmit(&cache, i);
  ASSERT_EQ(Outcome::kRefused, LookupAdmit(&cache, 500));
  // A file goes away: its blocks leave, the shard has room again.
  cache.EraseId(kFileId);
  EXPECT_EQ(0u, cache.TotalCharge());
  EXPECT_EQ(Outcome::kAdmitted, LookupAdmit(&cache, 501));
  EXPECT_EQ(Outcome::kHit, LookupAdmit(&cache, 501));
}

TEST(CacheTest, KeysDifferingInIdOrOffsetAreDistinct) {
  Cache cache(1000, 2);
  // Swapping id and offset must not collide either.
  const CacheKey keys[] = {{1, 0}, {0, 1}, {1, 1}, {2, 0}, {1, 4096}};
  for (int i = 0; i < 5; i++) cache.Insert(keys[i], Value(i), 1);
  for (int i = 0; i < 5; i++) {
    std::shared_ptr<const void> v = cache.Lookup(keys[i]);
    ASSERT_NE(nullptr, v) << i;
    EXPECT_EQ(i, *static_cast<const int*>(v.get()));
  }
  EXPECT_EQ(nullptr, cache.Lookup(CacheKey{0, 0}));
  EXPECT_EQ(nullptr, cache.Lookup(CacheKey{2, 4096}));
}

TEST(CacheTest, EvictsTheFirstEntryTheHandFindsUnread) {
  Cache cache(3, 0);
  cache.Insert(Key(1), Value(1), 1);
  cache.Insert(Key(2), Value(2), 1);
  cache.Insert(Key(3), Value(3), 1);
  // None read since it went in: the hand clears every mark, then evicts
  // the oldest.
  cache.Insert(Key(4), Value(4), 1);
  EXPECT_EQ(-1, Get(&cache, 1));
  // The hand is at 2. Read, 2 gets a second chance and 3 goes.
  EXPECT_EQ(2, Get(&cache, 2));
  cache.Insert(Key(5), Value(5), 1);
  EXPECT_EQ(-1, Get(&cache, 3));
  // The hand is at 4 (clear); 2 was just read again, 5 is new.
  cache.Insert(Key(6), Value(6), 1);
  EXPECT_EQ(-1, Get(&cache, 4));
  EXPECT_EQ(2, Get(&cache, 2));
  EXPECT_EQ(5, Get(&cache, 5));
  EXPECT_EQ(6, Get(&cache, 6));
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

TEST(CacheTest, EraseIdRemovesExactlyOneFilesEntries) {
  for (int shard_bits : {0, 4}) {
    SCOPED_TRACE(shard_bits);
    Cache cache(1 << 20, shard_bits);
    constexpr int kBlocks = 100;
    for (uint64_t id = 1; id <= 3; id++) {
      for (int b = 0; b < kBlocks; b++) {
        cache.Insert(CacheKey{id, b * kBlockSize}, Value(b), id * 10);
      }
    }
    EXPECT_EQ(kBlocks * (10u + 20u + 30u), cache.TotalCharge());
    cache.EraseId(2);
    EXPECT_EQ(kBlocks * (10u + 30u), cache.TotalCharge());
    for (int b = 0; b < kBlocks; b++) {
      EXPECT_NE(nullptr, cache.Lookup(CacheKey{1, b * kBlockSize})) << b;
      EXPECT_EQ(nullptr, cache.Lookup(CacheKey{2, b * kBlockSize})) << b;
      EXPECT_NE(nullptr, cache.Lookup(CacheKey{3, b * kBlockSize})) << b;
    }
    cache.EraseId(2);  // nothing left to erase
    cache.EraseId(99);
    EXPECT_EQ(kBlocks * (10u + 30u), cache.TotalCharge());
    // The file's blocks can be cached again afterwards.
    cache.Insert(CacheKey{2, 0}, Value(5), 1);
    EXPECT_NE(nullptr, cache.Lookup(CacheKey{2, 0}));
  }
}

TEST(CacheTest, MatchesModelClockUnderRandomOperations) {
  // One shard, so the cache must behave exactly like the textbook clock
  // charged in bytes: same hits, same evictions, same total charge.
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    constexpr size_t kCapacity = 200;
    Cache cache(kCapacity, 0);
    struct ModelEntry {
      CacheKey key;
      int value;
      size_t charge;
      bool referenced;
    };
    // In the order the hand visits them; end() stands for the list head,
    // which the hand passes over.
    std::list<ModelEntry> model;
    auto hand = model.end();
    auto find = [&](const CacheKey& k) {
      return std::find_if(model.begin(), model.end(),
                          [&](const ModelEntry& e) { return e.key == k; });
    };
    auto erase = [&](std::list<ModelEntry>::iterator it) {
      if (hand == it) ++hand;
      model.erase(it);
    };
    auto model_charge = [&] {
      size_t total = 0;
      for (const ModelEntry& e : model) total += e.charge;
      return total;
    };
    for (int op = 0; op < 3000; op++) {
      const CacheKey k{1 + rnd.Uniform(3), rnd.Uniform(20) * kBlockSize};
      const uint64_t what = rnd.Uniform(10);
      auto it = find(k);
      if (what < 4) {
        const int v = op;
        const size_t charge = 1 + rnd.Uniform(40);
        cache.Insert(k, Value(v), charge);
        if (it != model.end()) erase(it);
        if (charge <= kCapacity) {
          // Behind the hand: the last entry it reaches.
          model.insert(hand, ModelEntry{k, v, charge, true});
          while (model_charge() > kCapacity) {
            if (hand == model.end()) {
              hand = model.begin();
              continue;
            }
            auto e = hand++;
            if (e->referenced) {
              e->referenced = false;
            } else {
              model.erase(e);
            }
          }
        }
      } else if (what < 9) {
        std::shared_ptr<const void> got = cache.Lookup(k);
        if (it == model.end()) {
          ASSERT_EQ(nullptr, got) << "op " << op;
        } else {
          ASSERT_NE(nullptr, got) << "op " << op;
          ASSERT_EQ(it->value, *static_cast<const int*>(got.get()));
          it->referenced = true;
        }
      } else if (rnd.Uniform(4) == 0) {
        cache.EraseId(k.id);
        for (auto e = model.begin(); e != model.end();) {
          auto next = std::next(e);
          if (e->key.id == k.id) erase(e);
          e = next;
        }
      } else {
        cache.Erase(k);
        if (it != model.end()) erase(it);
      }
      ASSERT_EQ(model_charge(), cache.TotalCharge()) << "op " << op;
    }
  }
}

// Many entries in one shard with nothing evicted: the index grows from 16
// slots to thousands and empties again through Erase and EraseId, holes
// closed by moving entries back. Every key stays found exactly while the
// model holds it.
TEST(CacheTest, IndexMatchesModelThroughGrowthAndErasure) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    Cache cache(SIZE_MAX, 0);
    std::map<std::pair<uint64_t, uint64_t>, int> model;
    auto random_key = [&] {
      return CacheKey{1 + rnd.Uniform(8), rnd.Uniform(1000) * kBlockSize};
    };
    for (int op = 0; op < 40000; op++) {
      const CacheKey k = random_key();
      const auto mk = std::make_pair(k.id, k.offset);
      // Inserts dominate the first half, erases the second.
      const bool growing = op < 20000;
      const uint64_t what = rnd.Uniform(100);
      if (what < (growing ? 45u : 10u)) {
        cache.Insert(k, Value(op), 1);
        model[mk] = op;
      } else if (what < (growing ? 55u : 60u)) {
        cache.Erase(k);
        model.erase(mk);
      } else if (what == 99 && !growing) {
        cache.EraseId(k.id);
        std::erase_if(model,
                      [&](const auto& e) { return e.first.first == k.id; });
      } else {
        std::shared_ptr<const void> got = cache.Lookup(k);
        auto it = model.find(mk);
        if (it == model.end()) {
          ASSERT_EQ(nullptr, got) << "op " << op;
        } else {
          ASSERT_NE(nullptr, got) << "op " << op;
          ASSERT_EQ(it->second, *static_cast<const int*>(got.get()))
              << "op " << op;
        }
      }
      ASSERT_EQ(model.size(), cache.TotalCharge()) << "op " << op;
    }
    // Every key the model holds is still there, and only those.
    for (uint64_t id = 1; id <= 8; id++) {
      for (uint64_t block = 0; block < 1000; block++) {
        const bool held = model.count({id, block * kBlockSize}) != 0;
        ASSERT_EQ(held, cache.Lookup({id, block * kBlockSize}) != nullptr)
            << "id " << id << " block " << block;
      }
    }
  }
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
  // Four threads insert, look up (with and without admission) and erase
  // overlapping keys, in one shard and in four. Every value found must be
  // the one stored for its key, and the charge must stay within capacity;
  // TSan checks the locking.
  for (int shard_bits : {0, 2}) {
    SCOPED_TRACE(shard_bits);
    Cache cache(2000, shard_bits);
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
            bool admit = false;
            std::shared_ptr<const void> v = op % 2 == 0
                                                ? cache.Lookup(Key(k))
                                                : cache.Lookup(Key(k), &admit);
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
}

}  // namespace BLOOMKV_FILE_NAMESPACE
}  // namespace bloomkv
