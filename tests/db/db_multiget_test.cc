// DB::MultiGet: the same answers as Get for every key of a batch, over
// memtables, level 0 and deeper levels, with snapshots, tombstones and bad
// keys.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/db.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

std::string Key(uint64_t i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%06llu", static_cast<unsigned long long>(i));
  return buf;
}

// Every answer of MultiGet is Get's, key by key.
void ExpectSameAsGet(DB* db, const ReadOptions& ro,
                     const std::vector<std::string>& batch) {
  std::vector<Slice> keys(batch.begin(), batch.end());
  std::vector<std::string> values;
  const std::vector<Status> got = db->MultiGet(ro, keys, &values);
  ASSERT_EQ(batch.size(), got.size());
  ASSERT_EQ(batch.size(), values.size());
  for (size_t i = 0; i < batch.size(); i++) {
    std::string want;
    const Status s = db->Get(ro, keys[i], &want);
    ASSERT_EQ(s.ToString(), got[i].ToString()) << "key " << batch[i];
    if (s.ok()) {
      ASSERT_EQ(want, values[i]) << "key " << batch[i];
    }
  }
}

TEST(DBMultiGetTest, AnswersAsGetDoesEverywhereInTheTree) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    test::TempDir dir("multiget");
    Options options = test::TinyCompactionOptions();
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    Random rnd(seed);
    constexpr uint64_t kKeys = 3000;
    const Snapshot* snap = nullptr;
    // Several generations of puts and deletes: deeper levels, level 0 and
    // the memtable all hold versions; a snapshot sees an older state.
    for (int round = 0; round < 4; round++) {
      for (uint64_t n = 0; n < kKeys; n++) {
        const uint64_t i = rnd.Uniform(kKeys);
        if (rnd.OneIn(5)) {
          ASSERT_TRUE(db->Delete(WriteOptions(), Key(i)).ok());
        } else {
          ASSERT_TRUE(db->Put(WriteOptions(), Key(i),
                              test::RandomString(&rnd, 20 + rnd.Uniform(80)))
                          .ok());
        }
      }
      if (round == 1) snap = db->GetSnapshot();
      if (round < 3) {
        ASSERT_TRUE(db->Flush().ok());
      }
    }
    ASSERT_GT(db->GetSegmentInfo().size(), 4u);

    for (int b = 0; b < 20; b++) {
      std::vector<std::string> batch;
      const size_t n = 1 + rnd.Uniform(200);
      for (size_t j = 0; j < n; j++) {
        switch (rnd.Uniform(8)) {
          case 0:
            batch.push_back(Key(kKeys + rnd.Uniform(kKeys)));  // never written
            break;
          case 1:
            batch.push_back(Key(rnd.Uniform(kKeys)) + "x");  // between keys
            break;
          case 2:
            if (!batch.empty()) {
              batch.push_back(batch[rnd.Uniform(batch.size())]);  // repeated
              break;
            }
            [[fallthrough]];
          default:
            batch.push_back(Key(rnd.Uniform(kKeys)));
        }
      }
      ExpectSameAsGet(db.get(), ReadOptions(), batch);
      ReadOptions at_snapshot;
      at_snapshot.snapshot = snap;
      ExpectSameAsGet(db.get(), at_snapshot, batch);
    }
    db->ReleaseSnapshot(snap);
  }
}

TEST(DBMultiGetTest, BadKeysFailAloneAndAnEmptyBatchIsEmpty) {
  test::TempDir dir("multiget");
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(test::TinyCompactionOptions(), dir.path(), &db).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "a", "1").ok());
  const std::string huge(1 << 20, 'k');
  std::vector<std::string> values = {"stale"};
  std::vector<Status> s = db->MultiGet(ReadOptions(), {}, &values);
  EXPECT_TRUE(s.empty());
  EXPECT_TRUE(values.empty());
  s = db->MultiGet(ReadOptions(), {Slice("a"), Slice(""), Slice(huge),
                                   Slice("b")},
                   &values);
  ASSERT_EQ(4u, s.size());
  EXPECT_TRUE(s[0].ok());
  EXPECT_EQ("1", values[0]);
  EXPECT_TRUE(s[1].IsInvalidArgument()) << s[1].ToString();
  EXPECT_TRUE(s[2].IsInvalidArgument()) << s[2].ToString();
  EXPECT_TRUE(s[3].IsNotFound()) << s[3].ToString();
}

}  // namespace
}  // namespace bloomkv
