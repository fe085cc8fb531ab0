// Tests for MemTable: versions seen through snapshots, tombstones, unusual
// keys, the iterator in both directions, reference counting, a randomized
// comparison with a simple model, and Get concurrent with Add.
#include "db/memtable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "table/internal_key.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// Holds the one reference a test needs; releases it at scope exit.
class MemTableRef {
 public:
  MemTableRef() : mem_(new MemTable) { mem_->Ref(); }
  ~MemTableRef() { mem_->Unref(); }
  MemTable* operator->() const { return mem_; }
  MemTable* get() const { return mem_; }

 private:
  MemTable* const mem_;
};

// "value", "DELETED" or "NOT FOUND".
std::string GetString(MemTable* mem, const Slice& key, SequenceNumber snap) {
  std::string value = "stale";
  bool deleted = true;
  if (!mem->Get(key, snap, &value, &deleted)) {
    EXPECT_FALSE(deleted);
    return "NOT FOUND";
  }
  return deleted ? "DELETED" : value;
}

TEST(MemTableTest, EmptyTable) {
  MemTableRef mem;
  EXPECT_TRUE(mem->Empty());
  EXPECT_EQ(0u, mem->NumEntries());
  EXPECT_EQ("NOT FOUND", GetString(mem.get(), "a", kMaxSequenceNumber));
  std::unique_ptr<Iterator> iter(mem->NewIterator());
  iter->SeekToFirst();
  EXPECT_FALSE(iter->Valid());
  iter->SeekToLast();
  EXPECT_FALSE(iter->Valid());
  EXPECT_TRUE(iter->status().ok());
}

TEST(MemTableTest, VersionsAndSnapshots) {
  MemTableRef mem;
  mem->Add(10, ValueType::kValue, "k", "v10");
  mem->Add(20, ValueType::kValue, "k", "v20");
  mem->Add(30, ValueType::kDeletion, "k", "");
  mem->Add(40, ValueType::kValue, "k", "v40");
  mem->Add(15, ValueType::kValue, "j", "j15");
  mem->Add(16, ValueType::kValue, "l", "l16");
  EXPECT_EQ(6u, mem->NumEntries());
  EXPECT_FALSE(mem->Empty());

  EXPECT_EQ("NOT FOUND", GetString(mem.get(), "k", 9));
  EXPECT_EQ("v10", GetString(mem.get(), "k", 10));
  EXPECT_EQ("v10", GetString(mem.get(), "k", 19));
  EXPECT_EQ("v20", GetString(mem.get(), "k", 20));
  EXPECT_EQ("DELETED", GetString(mem.get(), "k", 30));
  EXPECT_EQ("DELETED", GetString(mem.get(), "k", 39));
  EXPECT_EQ("v40", GetString(mem.get(), "k", 40));
  EXPECT_EQ("v40", GetString(mem.get(), "k", kMaxSequenceNumber));
  // Snapshots past the largest sequence number mean "everything".
  EXPECT_EQ("v40", GetString(mem.get(), "k", ~SequenceNumber{0}));
  EXPECT_EQ("NOT FOUND", GetString(mem.get(), "j", 14));
  EXPECT_EQ("j15", GetString(mem.get(), "j", 15));
  EXPECT_EQ("l16", GetString(mem.get(), "l", 100));
  // Neighbours and prefixes of stored keys are other keys.
  EXPECT_EQ("NOT FOUND", GetString(mem.get(), "", 100));
  EXPECT_EQ("NOT FOUND", GetString(mem.get(), std::string("k\0", 2), 100));
}

TEST(MemTableTest, GetWithNullValueOnlyReportsPresence) {
  MemTableRef mem;
  mem->Add(1, ValueType::kValue, "a", "x");
  bool deleted = true;
  EXPECT_TRUE(mem->Get("a", 1, nullptr, &deleted));
  EXPECT_FALSE(deleted);
}

TEST(MemTableTest, EmptyKeysAndValues) {
  MemTableRef mem;
  mem->Add(1, ValueType::kValue, "", "empty-key");
  mem->Add(2, ValueType::kValue, "a", "");
  mem->Add(3, ValueType::kValue, "", "");
  EXPECT_EQ("empty-key", GetString(mem.get(), "", 2));
  EXPECT_EQ("", GetString(mem.get(), "", 3));
  EXPECT_EQ("", GetString(mem.get(), "a", 3));
  std::string value = "stale";
  bool deleted = true;
  ASSERT_TRUE(mem->Get("a", 3, &value, &deleted));
  EXPECT_FALSE(deleted);
  EXPECT_EQ("", value);  // Overwritten, not left as it was.
}

TEST(MemTableTest, BinaryKeysWithNul) {
  MemTableRef mem;
  const std::string a("\0", 1), b("\0\0", 2), c("x\0y", 3), d("x\0z", 3),
      e("\xff\0", 2);
  const std::string v("\0v\0", 3);
  mem->Add(1, ValueType::kValue, a, "a");
  mem->Add(2, ValueType::kValue, b, "b");
  mem->Add(3, ValueType::kValue, c, v);
  mem->Add(4, ValueType::kDeletion, d, "");
  mem->Add(5, ValueType::kValue, e, "e");
  EXPECT_EQ("a", GetString(mem.get(), a, 10));
  EXPECT_EQ("b", GetString(mem.get(), b, 10));
  EXPECT_EQ(v, GetString(mem.get(), c, 10));
  EXPECT_EQ("DELETED", GetString(mem.get(), d, 10));
  EXPECT_EQ("e", GetString(mem.get(), e, 10));
  EXPECT_EQ("NOT FOUND", GetString(mem.get(), "x", 10));
  EXPECT_EQ("NOT FOUND", GetString(mem.get(), std::string("x\0", 2), 10));

  // Bytewise order, with NUL and 0xff bytes compared as unsigned.
  std::unique_ptr<Iterator> iter(mem->NewIterator());
  std::vector<std::string> user_keys;
  for (iter->SeekToFirst(); iter->Valid(); iter->Next()) {
    user_keys.push_back(ExtractUserKey(iter->key()).ToString());
  }
  EXPECT_EQ((std::vector<std::string>{a, b, c, d, e}), user_keys);
}

TEST(MemTableTest, LongKeyLookup) {
  MemTableRef mem;
  const std::string key(10000, 'k');  // Longer than Get's stack buffer.
  mem->Add(1, ValueType::kValue, key, "long");
  mem->Add(2, ValueType::kValue, key.substr(0, 9999), "shorter");
  EXPECT_EQ("long", GetString(mem.get(), key, 1));
  EXPECT_EQ("shorter", GetString(mem.get(), key.substr(0, 9999), 2));
  EXPECT_EQ("NOT FOUND", GetString(mem.get(), key + "k", 2));
}

TEST(MemTableTest, IteratorBothDirectionsAndSeeks) {
  MemTableRef mem;
  mem->Add(5, ValueType::kValue, "b", "b5");
  mem->Add(7, ValueType::kDeletion, "b", "");
  mem->Add(3, ValueType::kValue, "a", "a3");
  mem->Add(9, ValueType::kValue, "c", "c9");
  // Internal key order: a@3, b@7(del), b@5, c@9.
  const std::vector<std::string> keys = {
      MakeInternalKey("a", 3, ValueType::kValue),
      MakeInternalKey("b", 7, ValueType::kDeletion),
      MakeInternalKey("b", 5, ValueType::kValue),
      MakeInternalKey("c", 9, ValueType::kValue)};
  const std::vector<std::string> values = {"a3", "", "b5", "c9"};

  std::unique_ptr<Iterator> iter(mem->NewIterator());
  EXPECT_FALSE(iter->Valid());
  size_t i = 0;
  for (iter->SeekToFirst(); iter->Valid(); iter->Next(), i++) {
    ASSERT_LT(i, keys.size());
    EXPECT_EQ(Slice(keys[i]), iter->key());
    EXPECT_EQ(Slice(values[i]), iter->value());
  }
  EXPECT_EQ(keys.size(), i);
  for (iter->SeekToLast(); iter->Valid(); iter->Prev()) {
    ASSERT_GT(i, 0u);
    i--;
    EXPECT_EQ(Slice(keys[i]), iter->key());
    EXPECT_EQ(Slice(values[i]), iter->value());
  }
  EXPECT_EQ(0u, i);

  // Seek with a snapshot: the newest entry of "b" visible at 6 is b@5.
  iter->Seek(MakeInternalKey("b", 6, kValueTypeForSeek));
  ASSERT_TRUE(iter->Valid());
  EXPECT_EQ(Slice(keys[2]), iter->key());
  iter->Seek(MakeInternalKey("b", kMaxSequenceNumber, kValueTypeForSeek));
  ASSERT_TRUE(iter->Valid());
  EXPECT_EQ(Slice(keys[1]), iter->key());
  iter->Seek(MakeInternalKey("c", 8, kValueTypeForSeek));
  EXPECT_FALSE(iter->Valid());

  // SeekForPrev: last entry <= target.
  iter->SeekForPrev(MakeInternalKey("b", 6, kValueTypeForSeek));
  ASSERT_TRUE(iter->Valid());
  EXPECT_EQ(Slice(keys[1]), iter->key());
  iter->SeekForPrev(keys[2]);
  ASSERT_TRUE(iter->Valid());
  EXPECT_EQ(Slice(keys[2]), iter->key());
  // a@4 sorts before a@3 (newer first), a@2 after it.
  iter->SeekForPrev(MakeInternalKey("a", 4, kValueTypeForSeek));
  EXPECT_FALSE(iter->Valid());
  iter->SeekForPrev(MakeInternalKey("a", 2, kValueTypeForSeek));
  ASSERT_TRUE(iter->Valid());
  EXPECT_EQ(Slice(keys[0]), iter->key());
  iter->SeekForPrev(MakeInternalKey("z", 0, ValueType::kDeletion));
  ASSERT_TRUE(iter->Valid());
  EXPECT_EQ(Slice(keys[3]), iter->key());
  iter->Prev();
  ASSERT_TRUE(iter->Valid());
  EXPECT_EQ(Slice(keys[2]), iter->key());
  EXPECT_TRUE(iter->status().ok());
}

TEST(MemTableTest, SeekWithNonInternalKeyIsAnError) {
  MemTableRef mem;
  mem->Add(1, ValueType::kValue, "a", "1");
  std::unique_ptr<Iterator> iter(mem->NewIterator());
  iter->SeekToFirst();
  ASSERT_TRUE(iter->Valid());
  iter->Seek("short");  // Fewer than 8 bytes: no trailer.
  EXPECT_FALSE(iter->Valid());
  EXPECT_TRUE(iter->status().IsInvalidArgument());
  iter->SeekForPrev("");
  EXPECT_FALSE(iter->Valid());
  EXPECT_TRUE(iter->status().IsInvalidArgument());
  // A good seek recovers.
  iter->Seek(MakeInternalKey("a", 1, ValueType::kValue));
  ASSERT_TRUE(iter->Valid());
  EXPECT_TRUE(iter->status().ok());
}

// An iterator keeps the memtable alive after its owner lets go (ASan would
// report a use after free otherwise).
TEST(MemTableTest, IteratorHoldsAReference) {
  MemTable* mem = new MemTable;
  mem->Ref();
  mem->Add(1, ValueType::kValue, "k", "v");
  Iterator* iter = mem->NewIterator();
  mem->Unref();
  iter->SeekToFirst();
  ASSERT_TRUE(iter->Valid());
  EXPECT_EQ(Slice("v"), iter->value());
  delete iter;  // Deletes the memtable.
}

TEST(MemTableTest, MemoryUsageGrows) {
  MemTableRef mem;
  const size_t initial = mem->ApproximateMemoryUsage();
  const std::string value(1000, 'v');
  for (int i = 0; i < 1000; i++) {
    mem->Add(i + 1, ValueType::kValue, "key" + std::to_string(i), value);
  }
  EXPECT_GE(mem->ApproximateMemoryUsage(), initial + 1000 * 1000);
  EXPECT_LT(mem->ApproximateMemoryUsage(), initial + 2 * 1000 * 1000);
  EXPECT_EQ(1000u, mem->NumEntries());
}

// ---------------------------------------------------------------------------
// Randomized comparison with a model that stores entries in a vector and
// answers by brute force.

struct ModelEntry {
  std::string user_key;
  SequenceNumber seq;
  ValueType type;
  std::string value;
  std::string InternalKey() const {
    return MakeInternalKey(user_key, seq, type);
  }
};

// Internal key order, written independently of CompareInternalKeys: user
// key bytewise ascending, then (seq, type) descending.
bool ModelLess(const ModelEntry& a, const ModelEntry& b) {
  if (a.user_key != b.user_key) return a.user_key < b.user_key;
  return PackSequenceAndType(a.seq, a.type) >
         PackSequenceAndType(b.seq, b.type);
}

std::string RandomBytes(std::mt19937* rnd, size_t max_len) {
  // A tiny alphabet with NUL and 0xff makes collisions and prefixes common.
  static const char kAlphabet[] = {'\0', 'a', 'b', '\xff'};
  std::string s((*rnd)() % (max_len + 1), '\0');
  for (char& c : s) c = kAlphabet[(*rnd)() % sizeof(kAlphabet)];
  return s;
}

std::string ModelGet(const std::vector<ModelEntry>& entries,
                     const std::string& key, SequenceNumber snap) {
  const ModelEntry* best = nullptr;
  for (const ModelEntry& e : entries) {
    if (e.user_key == key && e.seq <= snap && (!best || e.seq > best->seq)) {
      best = &e;
    }
  }
  if (best == nullptr) return "NOT FOUND";
  return best->type == ValueType::kDeletion ? "DELETED" : best->value;
}

TEST(MemTableTest, RandomizedAgainstModel) {
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u, 977u}) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937 rnd(seed);
    MemTableRef mem;
    std::vector<ModelEntry> entries;
    SequenceNumber seq = rnd() % 100;
    for (int i = 0; i < 1500; i++) {
      seq += 1 + rnd() % 3;
      ModelEntry e;
      e.user_key = RandomBytes(&rnd, 4);
      e.seq = seq;
      e.type = rnd() % 5 == 0 ? ValueType::kDeletion : ValueType::kValue;
      if (e.type == ValueType::kValue) e.value = RandomBytes(&rnd, 12);
      mem->Add(e.seq, e.type, e.user_key, e.value);
      entries.push_back(e);
    }
    ASSERT_EQ(entries.size(), mem->NumEntries());

    for (int i = 0; i < 2000; i++) {
      const std::string key = RandomBytes(&rnd, 4);
      const SequenceNumber snap = rnd() % (seq + 10);
      ASSERT_EQ(ModelGet(entries, key, snap), GetString(mem.get(), key, snap))
          << "key=" << Slice(key).ToEscapedString() << " snap=" << snap;
    }

    std::vector<ModelEntry> sorted = entries;
    std::sort(sorted.begin(), sorted.end(), ModelLess);
    std::unique_ptr<Iterator> iter(mem->NewIterator());
    size_t i = 0;
    for (iter->SeekToFirst(); iter->Valid(); iter->Next(), i++) {
      ASSERT_LT(i, sorted.size());
      ASSERT_EQ(Slice(sorted[i].InternalKey()), iter->key()) << i;
      ASSERT_EQ(Slice(sorted[i].value), iter->value()) << i;
    }
    ASSERT_EQ(sorted.size(), i);
    for (iter->SeekToLast(); iter->Valid(); iter->Prev()) {
      ASSERT_GT(i, 0u);
      i--;
      ASSERT_EQ(Slice(sorted[i].InternalKey()), iter->key()) << i;
    }
    ASSERT_EQ(0u, i);

    // Seeks to random targets, each followed by a step in a random
    // direction, against lower_bound/upper_bound on the sorted model.
    for (int n = 0; n < 500; n++) {
      ModelEntry target;
      target.user_key = RandomBytes(&rnd, 4);
      target.seq = rnd() % (seq + 10);
      target.type = rnd() % 2 ? ValueType::kValue : ValueType::kDeletion;
      const std::string ikey = target.InternalKey();
      auto ge =
          std::lower_bound(sorted.begin(), sorted.end(), target, ModelLess);
      iter->Seek(ikey);
      ASSERT_EQ(ge != sorted.end(), iter->Valid());
      if (ge != sorted.end()) {
        ASSERT_EQ(Slice(ge->InternalKey()), iter->key());
        if (rnd() % 2) {
          iter->Prev();
          ASSERT_EQ(ge != sorted.begin(), iter->Valid());
          if (ge != sorted.begin()) {
            ASSERT_EQ(Slice(std::prev(ge)->InternalKey()), iter->key());
          }
        } else {
          iter->Next();
          ASSERT_EQ(std::next(ge) != sorted.end(), iter->Valid());
        }
      }
      auto gt =
          std::upper_bound(sorted.begin(), sorted.end(), target, ModelLess);
      iter->SeekForPrev(ikey);
      ASSERT_EQ(gt != sorted.begin(), iter->Valid());
      if (gt != sorted.begin()) {
        ASSERT_EQ(Slice(std::prev(gt)->InternalKey()), iter->key());
      }
    }
  }
}

// Readers call Get while one writer adds (meaningful under
// ThreadSanitizer): every key whose Add completed must be found with its
// value, and memory usage may be polled meanwhile.
TEST(MemTableTest, ConcurrentGetDuringAdd) {
  constexpr int kEntries = 4000;
  MemTableRef mem;
  std::atomic<int> added{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; r++) {
    readers.emplace_back([&, r] {
      std::mt19937 rnd(r + 1);
      while (added.load(std::memory_order_acquire) < kEntries) {
        const int done = added.load(std::memory_order_acquire);
        if (done == 0) continue;
        const int i = static_cast<int>(rnd() % done);
        std::string value;
        bool deleted = false;
        if (!mem->Get("k" + std::to_string(i), kMaxSequenceNumber, &value,
                      &deleted) ||
            deleted || value != "v" + std::to_string(i)) {
          failed.store(true);
        }
        (void)mem->ApproximateMemoryUsage();
      }
    });
  }
  for (int i = 0; i < kEntries; i++) {
    mem->Add(i + 1, ValueType::kValue, "k" + std::to_string(i),
             "v" + std::to_string(i));
    added.store(i + 1, std::memory_order_release);
  }
  for (auto& t : readers) t.join();
  EXPECT_FALSE(failed.load());
}

}  // namespace
}  // namespace bloomkv
