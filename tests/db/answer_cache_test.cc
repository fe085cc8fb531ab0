// AnswerCache on its own: what it keeps and returns, which key a slot
// admits (a second miss in a row, an answer not read since the last
// knock), stale and newer epochs, answers too long for a slot, and readers
// that never see a torn answer while writers fight over the same slots.
#include "db/answer_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/hash.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Answer = AnswerCache::Answer;

class AnswerCacheTest : public testing::Test {
 protected:
  AnswerCacheTest() : cache_(4 * AnswerCache::kSlotBytes) {}

  // A key other than those in `taken` whose hash maps to `slot`.
  std::string KeyInSlot(size_t slot, const std::vector<std::string>& taken) {
    for (int i = 0;; i++) {
      std::string k = "key" + std::to_string(i);
      if (cache_.TEST_SlotIndex(KeyHash(k)) == slot &&
          std::find(taken.begin(), taken.end(), k) == taken.end()) {
        return k;
      }
    }
  }
  void Offer(const std::string& key, const std::string& value,
             uint64_t epoch = 1) {
    cache_.Offer(key, KeyHash(key), epoch, Answer{LookupResult::kFound, 7},
                 value);
  }
  // The value kept for key, or "" when it misses.
  std::string Read(const std::string& key, uint64_t epoch = 1) {
    Answer a;
    std::string value;
    if (!cache_.Lookup(key, KeyHash(key), epoch, &a, &value)) return "";
    EXPECT_EQ(LookupResult::kFound, a.result);
    EXPECT_EQ(7u, a.sequence);
    return value;
  }

  AnswerCache cache_;
};

TEST_F(AnswerCacheTest, CapacityIsRoundedDownToAPowerOfTwoSlots) {
  EXPECT_EQ(4 * AnswerCache::kSlotBytes, cache_.memory());
  AnswerCache odd(7 * AnswerCache::kSlotBytes + 100);
  EXPECT_EQ(4 * AnswerCache::kSlotBytes, odd.memory());
  AnswerCache two(2 * AnswerCache::kSlotBytes);
  EXPECT_EQ(2 * AnswerCache::kSlotBytes, two.memory());
  for (uint64_t h : {uint64_t{0}, ~uint64_t{0}, uint64_t{12345}}) {
    EXPECT_LT(two.TEST_SlotIndex(h), 2u);
  }
}

// Values, deletions and absences come back as kept, each with its
// sequence; a deletion or absence leaves *value alone.
TEST_F(AnswerCacheTest, KeepsEachKindOfAnswer) {
  const std::string a = KeyInSlot(0, {}), b = KeyInSlot(1, {}),
                    c = KeyInSlot(2, {});
  cache_.Offer(a, KeyHash(a), 3, Answer{LookupResult::kFound, 11}, "https://a");
  cache_.Offer(b, KeyHash(b), 3, Answer{LookupResult::kDeleted, 12}, "");
  cache_.Offer(c, KeyHash(c), 3, Answer{LookupResult::kNotFound, 0}, "");
  Answer got;
  std::string value = "untouched";
  ASSERT_TRUE(cache_.Lookup(a, KeyHash(a), 3, &got, &value));
  EXPECT_EQ(LookupResult::kFound, got.result);
  EXPECT_EQ(11u, got.sequence);
  EXPECT_EQ("https://a", value);
  value = "untouched";
  ASSERT_TRUE(cache_.Lookup(b, KeyHash(b), 3, &got, &value));
  EXPECT_EQ(LookupResult::kDeleted, got.result);
  EXPECT_EQ(12u, got.sequence);
  EXPECT_EQ("untouched", value);
  ASSERT_TRUE(cache_.Lookup(c, KeyHash(c), 3, &got, &value));
  EXPECT_EQ(LookupResult::kNotFound, got.result);
  EXPECT_EQ("untouched", value);
  // Another key of a slot misses, and so does an empty slot.
  const std::string a2 = KeyInSlot(0, {a});
  EXPECT_FALSE(cache_.Lookup(a2, KeyHash(a2), 3, &got, &value));
  const std::string d = KeyInSlot(3, {});
  EXPECT_FALSE(cache_.Lookup(d, KeyHash(d), 3, &got, &value));
}

// A key the slot did not see miss just before knocks and waits; on its
// second miss in a row it displaces an answer nobody read meanwhile.
TEST_F(AnswerCacheTest, ASecondMissInARowDisplacesAnUnreadAnswer) {
  const std::string a = KeyInSlot(0, {});
  const std::string b = KeyInSlot(0, {a});
  const std::string c = KeyInSlot(0, {a, b});
  Offer(a, "A");  // an empty slot takes the first offer
  Offer(b, "B");
  EXPECT_EQ("A", Read(a));
  EXPECT_EQ("", Read(b));
  Offer(c, "C");  // another key knocked in between: b starts over
  Offer(b, "B");
  EXPECT_EQ("", Read(b));
  EXPECT_EQ("", Read(c));
  Offer(b, "B");  // read since the last knock: a keeps its slot, once
  EXPECT_EQ("", Read(b));
  Offer(b, "B");
  EXPECT_EQ("B", Read(b));
  EXPECT_EQ("", Read(a));
}

// An answer of an older epoch is a miss and gives way at once; an offer
// from a reader of an older version leaves a newer answer in place.
TEST_F(AnswerCacheTest, EpochsOrderTheAnswers) {
  const std::string a = KeyInSlot(0, {});
  const std::string b = KeyInSlot(0, {a});
  Offer(a, "A", 5);
  EXPECT_EQ("", Read(a, 6));
  EXPECT_EQ("A", Read(a, 5));
  Offer(b, "B", 6);  // a's answer is stale: no knock needed
  EXPECT_EQ("B", Read(b, 6));
  Offer(a, "A", 5);
  Offer(a, "A", 5);
  EXPECT_EQ("B", Read(b, 6));
  EXPECT_EQ("", Read(a, 5));
}

TEST_F(AnswerCacheTest, AnswersLongerThanASlotHoldsAreNotKept) {
  const std::string a = KeyInSlot(0, {});
  const std::string fits(AnswerCache::kMaxPayload - a.size(), 'v');
  Offer(a, fits + "x");
  EXPECT_EQ("", Read(a));
  Offer(a, fits);
  EXPECT_EQ(fits, Read(a));
}

// Writers offer ever-changing values for keys that share four slots while
// readers check that every answer they get is one that was offered for
// that key: never a torn mix of two writes.
TEST_F(AnswerCacheTest, ReadersNeverSeeATornAnswer) {
  constexpr int kKeys = 16;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; i++) keys.push_back("code" + std::to_string(i));
  // The value of key i at round r: its key, the round, then filler whose
  // length and bytes follow from both.
  auto value_of = [&](int i, uint64_t r) {
    std::string v = keys[i] + "#" + std::to_string(r) + "#";
    v.append(20 + (r * 7 + i) % 150, static_cast<char>('a' + (r + i) % 26));
    return v;
  };
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> hits{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; w++) {
    threads.emplace_back([&, w] {
      Random rnd(test::TestSeeds()[0] + w);
      for (uint64_t r = 0; !stop.load(std::memory_order_relaxed); r++) {
        const int i = static_cast<int>(rnd.Uniform(kKeys));
        cache_.Offer(keys[i], KeyHash(keys[i]), 1,
                     Answer{LookupResult::kFound, r}, value_of(i, r));
      }
    });
  }
  for (int t = 0; t < 2; t++) {
    threads.emplace_back([&, t] {
      Random rnd(test::TestSeeds()[0] + 100 + t);
      for (int n = 0; n < 1000000; n++) {
        const int i = static_cast<int>(rnd.Uniform(kKeys));
        Answer a;
        std::string value;
        if (!cache_.Lookup(keys[i], KeyHash(keys[i]), 1, &a, &value)) continue;
        hits.fetch_add(1, std::memory_order_relaxed);
        ASSERT_EQ(value_of(i, a.sequence), value) << keys[i];
      }
    });
  }
  threads[2].join();
  threads[3].join();
  stop.store(true);
  threads[0].join();
  threads[1].join();
  EXPECT_GT(hits.load(), 0u);
}

}  // namespace BLOOMKV_FILE_NAMESPACE
}  // namespace bloomkv
