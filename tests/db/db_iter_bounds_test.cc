// ReadOptions::iterate_lower_bound and iterate_upper_bound: over a tree of
// memtable, level-0 and deeper segments with tombstones and a snapshot,
// random walks (seeks, steps both ways, direction changes) with random
// bounds must match a std::map restricted to [lower, upper); a scan stops
// at the upper bound without reading the segments beyond it.
#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "bloomkv/db.h"
#include "tests/testutil/test_util.h"
#include "util/counting_env.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

std::string Key(uint64_t i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%05llu", static_cast<unsigned long long>(i));
  return buf;
}

// The model iterator: a position in `visible`, which already holds only
// the keys within the bounds.
using Model = std::map<std::string, std::string>;

void ExpectAt(const Iterator& it, const Model& m, Model::const_iterator pos,
              const std::string& what) {
  if (pos == m.end()) {
    ASSERT_FALSE(it.Valid()) << what << ": expected the end, at "
                             << (it.Valid() ? it.key().ToString() : "");
    ASSERT_TRUE(it.status().ok()) << what << ": " << it.status().ToString();
    return;
  }
  ASSERT_TRUE(it.Valid()) << what << ": expected " << pos->first;
  ASSERT_EQ(pos->first, it.key().ToString()) << what;
  ASSERT_EQ(pos->second, it.value().ToString()) << what;
}

TEST(DBIterBoundsTest, RandomWalksMatchAModelWithinTheBounds) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    test::TempDir dir("iter-bounds");
    Options options = test::TinyCompactionOptions();
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    Random rnd(seed);
    constexpr uint64_t kKeys = 2000;
    Model model, at_snapshot;
    const Snapshot* snap = nullptr;
    for (int round = 0; round < 3; round++) {
      for (uint64_t n = 0; n < kKeys; n++) {
        const std::string k = Key(rnd.Uniform(kKeys));
        if (rnd.OneIn(4)) {
          ASSERT_TRUE(db->Delete(WriteOptions(), k).ok());
          model.erase(k);
        } else {
          const std::string v = k + "/" + std::to_string(round * kKeys + n);
          ASSERT_TRUE(db->Put(WriteOptions(), k, v).ok());
          model[k] = v;
        }
      }
      if (round == 1) {
        snap = db->GetSnapshot();
        at_snapshot = model;
      }
      if (round < 2) {
        ASSERT_TRUE(db->Flush().ok());
      }
    }

    for (int walk = 0; walk < 200; walk++) {
      const bool use_snapshot = rnd.OneIn(3);
      const Model& full = use_snapshot ? at_snapshot : model;
      std::optional<std::string> lower, upper;
      if (!rnd.OneIn(4)) lower = Key(rnd.Uniform(kKeys + 10));
      if (!rnd.OneIn(4)) upper = Key(rnd.Uniform(kKeys + 10));
      // Bounds that are not keys too, and an empty range.
      if (lower && rnd.OneIn(5)) *lower += "x";
      Model m;
      for (const auto& [k, v] : full) {
        if ((!lower || k >= *lower) && (!upper || k < *upper)) m[k] = v;
      }
      const std::string label = "lower=" + lower.value_or("-") +
                                " upper=" + upper.value_or("-") +
                                (use_snapshot ? " snapshot" : "");
      SCOPED_TRACE(label);
      const std::string lo_text = lower.value_or(""),
                        hi_text = upper.value_or("");
      const Slice lo(lo_text), hi(hi_text);
      ReadOptions ro;
      ro.snapshot = use_snapshot ? snap : nullptr;
      ro.iterate_lower_bound = lower ? &lo : nullptr;
      ro.iterate_upper_bound = upper ? &hi : nullptr;
      std::unique_ptr<Iterator> it = db->NewIterator(ro);

      auto pos = m.end();
      for (int step = 0; step < 30; step++) {
        const uint32_t op = rnd.Uniform(6);
        std::string what;
        if (op == 0) {
          it->SeekToFirst();
          pos = m.begin();
          what = "SeekToFirst";
        } else if (op == 1) {
          it->SeekToLast();
          pos = m.empty() ? m.end() : std::prev(m.end());
          what = "SeekToLast";
        } else if (op == 2) {
          const std::string t = Key(rnd.Uniform(kKeys + 10));
          it->Seek(t);
          pos = m.lower_bound(t);
          what = "Seek(" + t + ")";
        } else if (op == 3) {
          const std::string t = Key(rnd.Uniform(kKeys + 10));
          it->SeekForPrev(t);
          auto after = m.upper_bound(t);
          pos = after == m.begin() ? m.end() : std::prev(after);
          what = "SeekForPrev(" + t + ")";
        } else if (op == 4) {
          if (!it->Valid()) continue;
          it->Next();
          ++pos;
          what = "Next";
        } else {
          if (!it->Valid()) continue;
          it->Prev();
          pos = pos == m.begin() ? m.end() : std::prev(pos);
          what = "Prev";
        }
        ExpectAt(*it, m, pos, what);
        if (HasFatalFailure()) return;
      }
      // A whole scan each way.
      size_t n = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
      EXPECT_EQ(m.size(), n);
      n = 0;
      for (it->SeekToLast(); it->Valid(); it->Prev()) n++;
      EXPECT_EQ(m.size(), n);
    }
    db->ReleaseSnapshot(snap);
  }
}

TEST(DBIterBoundsTest, AScanStopsAtTheUpperBoundWithoutReadingBeyondIt) {
  test::TempDir dir("iter-bounds-stop");
  CountingEnv env(Env::Default());
  Options options;
  options.create_if_missing = true;
  options.env = &env;
  options.block_cache_capacity = 0;  // every block read reaches the file
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  for (uint64_t i = 0; i < 20000; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), std::string(100, 'v')).ok());
  }
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());

  auto blocks_read = [&] { return env.Total().random_reads; };
  const std::string upper_key = Key(100);  // the bound's bytes outlive it
  const Slice upper = upper_key;
  ReadOptions ro;
  ro.iterate_upper_bound = &upper;
  ro.fill_cache = false;
  const uint64_t before = blocks_read();
  std::unique_ptr<Iterator> it = db->NewIterator(ro);
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  ASSERT_TRUE(it->status().ok());
  EXPECT_EQ(100u, n);
  const uint64_t bounded = blocks_read() - before;

  ReadOptions unbounded_ro;
  unbounded_ro.fill_cache = false;
  std::unique_ptr<Iterator> all = db->NewIterator(unbounded_ro);
  const uint64_t before_all = blocks_read();
  n = 0;
  for (all->SeekToFirst(); all->Valid(); all->Next()) n++;
  EXPECT_EQ(20000u, n);
  const uint64_t everything = blocks_read() - before_all;
  // 100 entries of about 110 bytes fill 3 or 4 blocks of 4 KiB: the scan
  // read those and at most the one block the bound falls in, not the store.
  EXPECT_LE(bounded, 5u) << "of " << everything << " blocks";
  EXPECT_GT(everything, 100u);
}

}  // namespace
}  // namespace bloomkv
