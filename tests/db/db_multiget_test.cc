// DB::MultiGet: the same answers as Get for every key of a batch, over
// memtables, level 0 and deeper levels, with snapshots, tombstones and bad
// keys; and the device hints it gives before searching.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace {

// Counts RandomAccessFile::Prefetch hints to segment files.
class HintCountingEnv : public EnvWrapper {
 public:
  explicit HintCountingEnv(Env* target) : EnvWrapper(target) {}

  Status NewRandomAccessFile(
      const std::string& fname,
      std::unique_ptr<RandomAccessFile>* result) override {
    std::unique_ptr<RandomAccessFile> file;
    Status s = target()->NewRandomAccessFile(fname, &file);
    if (s.ok() && fname.ends_with(".seg")) {
      file = std::make_unique<Counted>(std::move(file), &hints_);
    }
    *result = std::move(file);
    return s;
  }
  uint64_t hints() const { return hints_.load(); }

 private:
  class Counted : public RandomAccessFile {
   public:
    Counted(std::unique_ptr<RandomAccessFile> file,
            std::atomic<uint64_t>* hints)
        : file_(std::move(file)), hints_(hints) {}
    Status Read(uint64_t offset, size_t n, Slice* result,
                char* scratch) const override {
      return file_->Read(offset, n, result, scratch);
    }
    void Prefetch(uint64_t offset, size_t n) const override {
      hints_->fetch_add(1);
      file_->Prefetch(offset, n);
    }

   private:
    std::unique_ptr<RandomAccessFile> file_;
    std::atomic<uint64_t>* hints_;
  };
  std::atomic<uint64_t> hints_{0};
};

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

// Each present key whose block is not cached gets its block hinted before
// the searches; keys the filters rule out get none, nor do cached blocks.
TEST(DBMultiGetTest, HintsTheBlocksOfFilterPositivesBeforeSearching) {
  test::TempDir dir("multiget");
  HintCountingEnv env(Env::Default());
  Options options = test::TinyCompactionOptions();
  options.env = &env;
  options.block_cache_capacity = 0;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  constexpr uint64_t kKeys = 5000;
  for (uint64_t i = 0; i < kKeys; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), std::string(100, 'v')).ok());
  }
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());

  std::vector<std::string> present, absent;
  for (uint64_t i = 0; i < kKeys; i += 50) {
    present.push_back(Key(i));
    absent.push_back(Key(i) + "x");
  }
  std::vector<Slice> keys(present.begin(), present.end());
  std::vector<std::string> values;
  uint64_t before = env.hints();
  for (const Status& s : db->MultiGet(ReadOptions(), keys, &values)) {
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  EXPECT_EQ(present.size(), env.hints() - before);

  keys.assign(absent.begin(), absent.end());
  before = env.hints();
  for (const Status& s : db->MultiGet(ReadOptions(), keys, &values)) {
    ASSERT_TRUE(s.IsNotFound()) << s.ToString();
  }
  // Only false positives (about 1% per probed filter) are hinted.
  EXPECT_LE(env.hints() - before, absent.size() / 10);
}

}  // namespace
}  // namespace bloomkv
