// Tests for SkipList: a randomized model check against std::set, and one
// writer inserting while readers iterate (run it under ThreadSanitizer).
#include "db/skiplist.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "util/arena.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Key = uint64_t;

struct Comparator {
  int operator()(const Key& a, const Key& b) const {
    return a < b ? -1 : (a > b ? +1 : 0);
  }
};
using List = SkipList<Key, Comparator>;

TEST(SkipListTest, Empty) {
  Arena arena;
  List list(Comparator(), &arena);
  EXPECT_TRUE(list.Empty());
  EXPECT_FALSE(list.Contains(10));

  List::Iterator iter(&list);
  EXPECT_FALSE(iter.Valid());
  iter.SeekToFirst();
  EXPECT_FALSE(iter.Valid());
  iter.SeekToLast();
  EXPECT_FALSE(iter.Valid());
  iter.Seek(100);
  EXPECT_FALSE(iter.Valid());
  iter.SeekForPrev(100);
  EXPECT_FALSE(iter.Valid());
  iter.SeekBefore(100);
  EXPECT_FALSE(iter.Valid());
}

TEST(SkipListTest, SmallExample) {
  Arena arena;
  List list(Comparator(), &arena);
  for (Key k : {30, 10, 20}) list.Insert(k);
  EXPECT_FALSE(list.Empty());
  List::Iterator iter(&list);
  iter.Seek(15);
  ASSERT_TRUE(iter.Valid());
  EXPECT_EQ(20u, iter.key());
  iter.SeekForPrev(15);
  ASSERT_TRUE(iter.Valid());
  EXPECT_EQ(10u, iter.key());
  iter.SeekForPrev(20);
  ASSERT_TRUE(iter.Valid());
  EXPECT_EQ(20u, iter.key());
  iter.SeekBefore(20);
  ASSERT_TRUE(iter.Valid());
  EXPECT_EQ(10u, iter.key());
  iter.SeekBefore(10);
  EXPECT_FALSE(iter.Valid());
  iter.SeekForPrev(5);
  EXPECT_FALSE(iter.Valid());
  iter.Seek(31);
  EXPECT_FALSE(iter.Valid());
  iter.SeekToLast();
  ASSERT_TRUE(iter.Valid());
  EXPECT_EQ(30u, iter.key());
  iter.Prev();
  iter.Prev();
  ASSERT_TRUE(iter.Valid());
  EXPECT_EQ(10u, iter.key());
  iter.Prev();
  EXPECT_FALSE(iter.Valid());
}

// Random inserts, then every traversal and seek is compared with std::set.
TEST(SkipListTest, RandomAgainstSet) {
  for (uint32_t seed : {1u, 7u, 42u, 1000u, 31337u}) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rnd(seed);
    const Key range = (seed % 2 == 0) ? 5000 : ~Key{0};  // Dense or sparse.
    Arena arena;
    List list(Comparator(), &arena, seed);
    std::set<Key> model;
    for (int i = 0; i < 2000; i++) {
      const Key k = rnd() % range;
      if (model.insert(k).second) list.Insert(k);
    }
    for (Key k : model) ASSERT_TRUE(list.Contains(k)) << k;

    // Forward and backward traversals.
    List::Iterator iter(&list);
    iter.SeekToFirst();
    for (Key k : model) {
      ASSERT_TRUE(iter.Valid());
      ASSERT_EQ(k, iter.key());
      iter.Next();
    }
    EXPECT_FALSE(iter.Valid());
    iter.SeekToLast();
    for (auto it = model.rbegin(); it != model.rend(); ++it) {
      ASSERT_TRUE(iter.Valid());
      ASSERT_EQ(*it, iter.key());
      iter.Prev();
    }
    EXPECT_FALSE(iter.Valid());

    // Seeks at present and absent keys, each followed by a few steps.
    for (int i = 0; i < 1000; i++) {
      const Key target = (i % 3 == 0)
                             ? *std::next(model.begin(), rnd() % model.size())
                             : rnd() % range;
      if (!list.Contains(target)) {
        ASSERT_EQ(0u, model.count(target)) << target;
      }

      auto ge = model.lower_bound(target);
      iter.Seek(target);
      for (int step = 0; step < 3; step++, ++ge) {
        ASSERT_EQ(ge != model.end(), iter.Valid()) << target;
        if (ge == model.end()) break;
        ASSERT_EQ(*ge, iter.key());
        iter.Next();
      }

      auto gt = model.upper_bound(target);  // After the last <= target.
      iter.SeekForPrev(target);
      for (int step = 0; step < 3; step++, --gt) {
        ASSERT_EQ(gt != model.begin(), iter.Valid()) << target;
        if (gt == model.begin()) break;
        ASSERT_EQ(*std::prev(gt), iter.key());
        iter.Prev();
      }

      auto lt = model.lower_bound(target);  // After the last < target.
      iter.SeekBefore(target);
      ASSERT_EQ(lt != model.begin(), iter.Valid()) << target;
      if (lt != model.begin()) {
        ASSERT_EQ(*std::prev(lt), iter.key());
      }
    }
  }
}

// InsertInline: keys built in place after their node, for lists keyed by
// pointers to bytes (as the memtable is).
struct BytesComparator {
  int operator()(const char* a, const char* b) const {
    // Null is the head's key; it is never compared.
    return std::string_view(a).compare(std::string_view(b));
  }
};
using BytesList = SkipList<const char*, BytesComparator>;

TEST(SkipListTest, InsertInlineBuildsKeysNextToTheirNodes) {
  for (uint32_t seed : {3u, 77u, 4242u}) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rnd(seed);
    Arena arena;
    BytesList list(BytesComparator(), &arena, seed);
    std::set<std::string> model;
    for (int i = 0; i < 3000; i++) {
      const std::string k = std::to_string(rnd() % 100000);
      if (!model.insert(k).second) continue;
      const char* built = nullptr;
      list.InsertInline(k.size() + 1, [&](char* buf) {
        std::memcpy(buf, k.c_str(), k.size() + 1);
        built = buf;
      });
      // The key lives in the list's arena, not in a copy elsewhere.
      ASSERT_NE(nullptr, built);
      BytesList::Iterator it(&list);
      it.Seek(k.c_str());
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(built, it.key());
    }
    BytesList::Iterator it(&list);
    it.SeekToFirst();
    for (const std::string& k : model) {
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(k, it.key());
      ASSERT_TRUE(list.Contains(k.c_str()));
      it.Next();
    }
    EXPECT_FALSE(it.Valid());
    EXPECT_FALSE(list.Contains("not a number"));
  }
}

// Node heights come from the seeded generator, so the same seed rebuilds
// the same structure. Node size depends on height, and with a tiny block
// size nearly every node gets its own block, so arena usage reflects the
// heights drawn.
size_t UsageAfterInserts(uint32_t seed) {
  Arena arena(64);
  List list(Comparator(), &arena, seed);
  for (Key k = 0; k < 500; k++) list.Insert(k * 7919 % 500);
  List::Iterator iter(&list);
  iter.SeekToFirst();
  for (Key k = 0; k < 500; k++, iter.Next()) {
    EXPECT_TRUE(iter.Valid());
    if (!iter.Valid()) break;
    EXPECT_EQ(k, iter.key());
  }
  EXPECT_FALSE(iter.Valid());
  return arena.MemoryUsage();
}

TEST(SkipListTest, SeedDeterminesShape) {
  EXPECT_EQ(UsageAfterInserts(1), UsageAfterInserts(1));
  EXPECT_EQ(UsageAfterInserts(99), UsageAfterInserts(99));
  EXPECT_NE(UsageAfterInserts(1), UsageAfterInserts(99));
}

// One writer inserts a planned sequence of keys while readers scan forward,
// backward and seek without any lock. A reader must see a strictly ordered
// list of planned keys that includes every key whose insert completed before
// its scan started and no key whose insert had not started when the scan
// ended.
class ConcurrentReader {
 public:
  ConcurrentReader(const List* list, const std::vector<Key>* planned,
                   const std::unordered_map<Key, size_t>* index_of,
                   const std::atomic<size_t>* inserted, uint32_t seed)
      : list_(list),
        planned_(planned),
        index_of_(index_of),
        inserted_(inserted),
        rnd_(seed) {}

  // Returns false (with error() set) at the first violation.
  bool ScanOnce() {
    const size_t before = inserted_->load(std::memory_order_acquire);
    std::vector<Key> seen;
    List::Iterator iter(list_);
    const bool forward = rnd_() % 2 == 0;
    if (forward) {
      for (iter.SeekToFirst(); iter.Valid(); iter.Next()) {
        seen.push_back(iter.key());
      }
    } else {
      for (iter.SeekToLast(); iter.Valid(); iter.Prev()) {
        seen.push_back(iter.key());
      }
    }
    const size_t after = inserted_->load(std::memory_order_acquire);
    scans_++;
    for (size_t i = 0; i < seen.size(); i++) {
      if (i > 0 && (forward ? seen[i - 1] >= seen[i] : seen[i - 1] <= seen[i]))
        return Fail("out of order at position " + std::to_string(i));
      auto it = index_of_->find(seen[i]);
      if (it == index_of_->end())
        return Fail("saw a key never inserted: " + std::to_string(seen[i]));
      // Key #after may be mid-insert (linked, but not yet counted); any
      // later key cannot have been inserted yet.
      if (it->second > after)
        return Fail("saw key #" + std::to_string(it->second) +
                    " before its insert started");
    }
    std::set<Key> seen_set(seen.begin(), seen.end());
    for (size_t i = 0; i < before; i++) {
      if (seen_set.count((*planned_)[i]) == 0)
        return Fail("missed key #" + std::to_string(i) +
                    ", inserted before the scan");
    }
    return true;
  }

  bool SeekOnce() {
    const size_t before = inserted_->load(std::memory_order_acquire);
    if (before == 0) return true;
    // A key known to be present must be found by Seek and SeekForPrev.
    const Key k = (*planned_)[rnd_() % before];
    List::Iterator iter(list_);
    iter.Seek(k);
    if (!iter.Valid() || iter.key() != k) return Fail("Seek missed a key");
    iter.SeekForPrev(k);
    if (!iter.Valid() || iter.key() != k)
      return Fail("SeekForPrev missed a key");
    iter.Prev();
    if (iter.Valid() && iter.key() >= k) return Fail("Prev went forward");
    return list_->Contains(k) ? true : Fail("Contains missed a key");
  }

  const std::string& error() const { return error_; }
  int scans() const { return scans_; }

 private:
  bool Fail(const std::string& msg) {
    error_ = msg;
    return false;
  }

  const List* list_;
  const std::vector<Key>* planned_;
  const std::unordered_map<Key, size_t>* index_of_;
  const std::atomic<size_t>* inserted_;
  std::mt19937 rnd_;
  std::string error_;
  int scans_ = 0;
};

TEST(SkipListTest, ConcurrentReadersWithOneWriter) {
  constexpr int kReaders = 3;
  constexpr size_t kKeys = 5000;
  for (uint32_t seed : {11u, 12u}) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rnd(seed);
    std::vector<Key> planned;
    std::unordered_map<Key, size_t> index_of;
    while (planned.size() < kKeys) {
      const Key k = rnd() % 1000000;
      if (index_of.emplace(k, planned.size()).second) planned.push_back(k);
    }

    Arena arena;
    List list(Comparator(), &arena, seed);
    std::atomic<size_t> inserted{0};
    std::atomic<int> readers_started{0};
    std::atomic<bool> writer_done{false};

    std::vector<ConcurrentReader> readers;
    for (int r = 0; r < kReaders; r++) {
      readers.emplace_back(&list, &planned, &index_of, &inserted, seed + r);
    }
    std::vector<std::thread> threads;
    for (int r = 0; r < kReaders; r++) {
      threads.emplace_back([&, r] {
        ConcurrentReader& reader = readers[r];
        readers_started.fetch_add(1);
        // Keep reading while the writer runs, and a little after, so that
        // the final state is checked too.
        bool ok = true;
        int extra = 2;
        while (ok && extra > 0) {
          if (writer_done.load(std::memory_order_acquire)) extra--;
          ok = reader.ScanOnce();
          for (int i = 0; ok && i < 20; i++) ok = reader.SeekOnce();
        }
      });
    }
    threads.emplace_back([&] {
      // Start inserting only once every reader runs, so they overlap.
      while (readers_started.load() < kReaders) std::this_thread::yield();
      for (size_t i = 0; i < planned.size(); i++) {
        list.Insert(planned[i]);
        inserted.store(i + 1, std::memory_order_release);
        if (i % 64 == 0) std::this_thread::yield();
      }
      writer_done.store(true, std::memory_order_release);
    });
    for (auto& t : threads) t.join();

    for (int r = 0; r < kReaders; r++) {
      EXPECT_EQ("", readers[r].error()) << "reader " << r;
      EXPECT_GE(readers[r].scans(), 2) << "reader " << r;
    }
  }
}

}  // namespace
}  // namespace bloomkv
