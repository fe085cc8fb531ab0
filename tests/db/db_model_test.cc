// Model-based test: random sequences of put / delete / delete range / batch /
// get / iterate / snapshot / flush / compaction / reopen, checked step by
// step against a std::map.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "bloomkv/db.h"
#include "bloomkv/write_batch.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Model = std::map<std::string, std::string>;

class ModelTest : public testing::Test {
 protected:
  // Keys from a small space so that overwrites, deletes of live keys and
  // lookups of both present and absent keys are all common.
  static std::string RandomKey(Random* rnd) {
    std::string k = "k" + std::to_string(rnd->Uniform(300));
    if (rnd->Uniform(10) == 0) k.push_back('\0');  // binary keys too
    return k;
  }
  // [*begin, *end) from two random keys, sometimes empty or with an empty
  // begin.
  static void RandomRange(Random* rnd, std::string* begin, std::string* end) {
    *begin = rnd->Uniform(20) == 0 ? std::string() : RandomKey(rnd);
    *end = RandomKey(rnd);
    if (*end < *begin) std::swap(*begin, *end);
  }
  static void EraseRange(Model* model, const std::string& begin,
                         const std::string& end) {
    model->erase(model->lower_bound(begin), model->lower_bound(end));
  }
  static std::string RandomValue(Random* rnd) {
    return test::RandomBytes(rnd,
                             rnd->Uniform(8) == 0 ? 3000 : rnd->Uniform(40));
  }

  static void CheckIterator(DB* db, const Model& model, const Snapshot* snap,
                            Random* rnd) {
    ReadOptions ro;
    ro.snapshot = snap;
    auto it = db->NewIterator(ro);
    auto m = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
      ASSERT_NE(m, model.end());
      ASSERT_EQ(m->first, it->key().ToString());
      ASSERT_EQ(m->second, it->value().ToString());
    }
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    ASSERT_EQ(m, model.end());
    // A few random seeks in both directions.
    for (int i = 0; i < 10; i++) {
      const std::string target = RandomKey(rnd);
      auto lb = model.lower_bound(target);
      it->Seek(target);
      ASSERT_EQ(lb != model.end(), it->Valid());
      if (it->Valid()) {
        ASSERT_EQ(lb->first, it->key().ToString());
      }
      if (it->Valid()) {
        it->Prev();
        if (lb == model.begin()) {
          ASSERT_FALSE(it->Valid());
        } else {
          ASSERT_TRUE(it->Valid());
          ASSERT_EQ(std::prev(lb)->first, it->key().ToString());
        }
      }
      auto ub = model.upper_bound(target);
      it->SeekForPrev(target);
      ASSERT_EQ(ub != model.begin(), it->Valid());
      if (it->Valid()) {
        ASSERT_EQ(std::prev(ub)->first, it->key().ToString());
      }
    }
  }
};

// Runs the model test with flushes only (level 0 grows) and with tiny
// everything, so that flushes and compactions interleave with every kind of
// operation; each without and with an answer cache (of four slots, so that
// keys displace each other all the time, and of 256).
struct ModelParams {
  bool compaction;
  size_t answer_cache_capacity;
};

class ModelTestP : public ModelTest,
                   public testing::WithParamInterface<ModelParams> {};

TEST_P(ModelTestP, RandomOperationsMatchAStdMap) {
  const bool compaction = GetParam().compaction;
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    test::TempDir dir;
    Options options = test::TinyCompactionOptions();
    if (!compaction) test::KeepEverythingInLevelZero(&options);
    options.answer_cache_capacity = GetParam().answer_cache_capacity;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    Random rnd(seed);
    Model model;
    struct Snap {
      const Snapshot* snapshot;
      Model model;
    };
    std::vector<Snap> snaps;
    uint64_t answer_cache_hits = 0;  // of the databases closed so far

    for (int step = 0; step < 3000; step++) {
      const uint64_t op = rnd.Uniform(100);
      if (op < 40) {
        const std::string k = RandomKey(&rnd), v = RandomValue(&rnd);
        ASSERT_TRUE(db->Put(WriteOptions(), k, v).ok());
        model[k] = v;
      } else if (op < 52) {
        const std::string k = RandomKey(&rnd);
        ASSERT_TRUE(db->Delete(WriteOptions(), k).ok());
        model.erase(k);
      } else if (op < 60) {
        WriteBatch batch;
        Model next = model;
        for (uint64_t i = 0, n = rnd.Uniform(10); i < n; i++) {
          const std::string k = RandomKey(&rnd);
          if (rnd.Uniform(12) == 0) {
            std::string begin, end;
            RandomRange(&rnd, &begin, &end);
            batch.DeleteRange(begin, end);
            EraseRange(&next, begin, end);
          } else if (rnd.Uniform(3) == 0) {
            batch.Delete(k);
            next.erase(k);
          } else {
            const std::string v = RandomValue(&rnd);
            batch.Put(k, v);
            next[k] = v;
          }
        }
        WriteOptions wo;
        wo.sync = rnd.Uniform(4) == 0;
        ASSERT_TRUE(db->Write(wo, &batch).ok());
        model = std::move(next);
      } else if (op < 63) {
        std::string begin, end;
        RandomRange(&rnd, &begin, &end);
        ASSERT_TRUE(db->DeleteRange(WriteOptions(), begin, end).ok());
        EraseRange(&model, begin, end);
      } else if (op < 85) {
        // Three times, so that an answer cache that took the key on its
        // second miss answers the third.
        const std::string k = RandomKey(&rnd);
        for (int read = 0; read < 3; read++) {
          std::string v;
          Status s = db->Get(ReadOptions(), k, &v);
          auto m = model.find(k);
          if (m == model.end()) {
            ASSERT_TRUE(s.IsNotFound()) << k << ": " << s.ToString();
          } else {
            ASSERT_TRUE(s.ok()) << s.ToString();
            ASSERT_EQ(m->second, v);
          }
        }
      } else if (op < 88) {
        CheckIterator(db.get(), model, nullptr, &rnd);
      } else if (op < 91) {
        if (snaps.size() < 4) {
          snaps.push_back({db->GetSnapshot(), model});
        } else {
          const size_t i = rnd.Uniform(snaps.size());
          CheckIterator(db.get(), snaps[i].model, snaps[i].snapshot, &rnd);
          const std::string k = RandomKey(&rnd);
          ReadOptions ro;
          ro.snapshot = snaps[i].snapshot;
          std::string v;
          Status s = db->Get(ro, k, &v);
          auto m = snaps[i].model.find(k);
          ASSERT_EQ(m == snaps[i].model.end(), s.IsNotFound());
          if (s.ok()) {
            ASSERT_EQ(m->second, v);
          }
          db->ReleaseSnapshot(snaps[i].snapshot);
          snaps.erase(snaps.begin() + static_cast<long>(i));
        }
      } else if (op < 95) {
        ASSERT_TRUE(db->Flush().ok());
      } else if (op < 96) {
        if (compaction && rnd.Uniform(2) == 0) {
          ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
        } else if (compaction) {
          std::string begin, end;
          RandomRange(&rnd, &begin, &end);
          const Slice b(begin), e(end);
          ASSERT_TRUE(db->CompactRange(&b, &e).ok());
        }
      } else if (op < 97) {
        for (auto& s : snaps) db->ReleaseSnapshot(s.snapshot);
        snaps.clear();
        answer_cache_hits += db->GetStats().answer_cache_hits;
        db.reset();
        ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
      }
      if (HasFatalFailure()) return;
    }
    CheckIterator(db.get(), model, nullptr, &rnd);
    for (auto& s : snaps) db->ReleaseSnapshot(s.snapshot);
    int deeper = 0;
    for (const auto& info : db->GetSegmentInfo()) deeper += info.level > 0;
    EXPECT_EQ(compaction, deeper > 0);
    if (options.answer_cache_capacity > 0) {
      EXPECT_GT(answer_cache_hits + db->GetStats().answer_cache_hits, 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FlushOnlyAndCompaction, ModelTestP,
                         testing::Values(ModelParams{false, 0},
                                         ModelParams{true, 0},
                                         ModelParams{false, 1024},
                                         ModelParams{true, 1024},
                                         ModelParams{true, 64 << 10}));

}  // namespace
}  // namespace bloomkv
