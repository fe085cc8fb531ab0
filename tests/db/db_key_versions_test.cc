// ForEachKeyVersion / GetAllKeyVersions (include/bloomkv/debug.h): every
// stored version, in internal-key order, across the memtable, level 0 and
// deeper levels; what compaction drops is gone; bad arguments are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/debug.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

std::string Key(uint64_t i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%04llu",
                static_cast<unsigned long long>(i));
  return buf;
}

using Version = std::tuple<std::string, uint64_t, bool, std::string>;

std::vector<Version> Flatten(const std::vector<KeyVersion>& versions) {
  std::vector<Version> r;
  for (const KeyVersion& v : versions) {
    r.emplace_back(v.user_key, v.sequence, v.deleted, v.value);
  }
  return r;
}

// Internal-key order: user key ascending, newest (highest sequence) first.
void SortInternalOrder(std::vector<Version>* v) {
  std::sort(v->begin(), v->end(), [](const Version& a, const Version& b) {
    if (std::get<0>(a) != std::get<0>(b))
      return std::get<0>(a) < std::get<0>(b);
    return std::get<1>(a) > std::get<1>(b);
  });
}

TEST(DBKeyVersionsTest, EveryVersionASnapshotKeepsIsListedInOrder) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    test::TempDir dir("key_versions");
    Options options = test::TinyCompactionOptions();
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    Random rnd(seed);
    // A snapshot before the first write and after every write keeps every
    // version from compaction (a deletion with nothing older is otherwise
    // dropped once no snapshot predates it), so the model is every write.
    std::vector<const Snapshot*> snapshots = {db->GetSnapshot()};
    std::vector<Version> model;
    constexpr int kWrites = 1500;
    for (int n = 1; n <= kWrites; n++) {
      const std::string key = Key(rnd.Uniform(150));
      if (rnd.OneIn(4)) {
        ASSERT_TRUE(db->Delete(WriteOptions(), key).ok());
        model.emplace_back(key, n, true, "");
      } else {
        const std::string value = test::RandomString(&rnd, rnd.Uniform(40));
        ASSERT_TRUE(db->Put(WriteOptions(), key, value).ok());
        model.emplace_back(key, n, false, value);
      }
      snapshots.push_back(db->GetSnapshot());
      if (n % 400 == 0) {
        ASSERT_TRUE(db->Flush().ok());
      }
    }
    test::WaitForBackgroundWork(db.get());
    SortInternalOrder(&model);

    std::vector<KeyVersion> all;
    ASSERT_TRUE(GetAllKeyVersions(db.get(), nullptr, nullptr, 0, &all).ok());
    const std::vector<Version> listed = Flatten(all);
    ASSERT_EQ(model.size(), listed.size());
    for (size_t i = 0; i < model.size(); i++) {
      ASSERT_EQ(model[i], listed[i]) << "version " << i;
    }

    // A range: [begin, end) of user keys, every version of each.
    const std::string begin = Key(40), end = Key(90);
    std::vector<Version> in_range;
    for (const Version& v : model) {
      if (std::get<0>(v) >= begin && std::get<0>(v) < end) {
        in_range.push_back(v);
      }
    }
    const Slice b(begin), e(end);
    std::vector<KeyVersion> got;
    ASSERT_TRUE(GetAllKeyVersions(db.get(), &b, &e, 0, &got).ok());
    EXPECT_EQ(in_range, Flatten(got));

    // At most max_versions, and fn returning false stops.
    got.clear();
    ASSERT_TRUE(GetAllKeyVersions(db.get(), &b, nullptr, 7, &got).ok());
    ASSERT_EQ(7u, got.size());
    EXPECT_EQ(std::vector<Version>(in_range.begin(), in_range.begin() + 7),
              Flatten(got));

    for (const Snapshot* s : snapshots) db->ReleaseSnapshot(s);
  }
}

TEST(DBKeyVersionsTest, AfterAFullCompactionOnlyTheLiveValuesAreLeft) {
  test::TempDir dir("key_versions");
  Options options;  // three flushes stay in level 0: nothing compacts yet
  options.create_if_missing = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  for (int round = 0; round < 3; round++) {
    for (uint64_t i = 0; i < 300; i++) {
      ASSERT_TRUE(
          db->Put(WriteOptions(), Key(i), "r" + std::to_string(round)).ok());
    }
    ASSERT_TRUE(db->Flush().ok());
  }
  for (uint64_t i = 0; i < 300; i += 3) {
    ASSERT_TRUE(db->Delete(WriteOptions(), Key(i)).ok());
  }
  std::vector<KeyVersion> before;
  ASSERT_TRUE(GetAllKeyVersions(db.get(), nullptr, nullptr, 0, &before).ok());
  EXPECT_EQ(1000u, before.size());  // 900 puts and 100 deletions

  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  std::vector<KeyVersion> after;
  ASSERT_TRUE(GetAllKeyVersions(db.get(), nullptr, nullptr, 0, &after).ok());
  ASSERT_EQ(200u, after.size());
  for (const KeyVersion& v : after) {
    EXPECT_FALSE(v.deleted) << v.user_key;
    EXPECT_EQ("r2", v.value) << v.user_key;
    std::string value;
    EXPECT_TRUE(db->Get(ReadOptions(), v.user_key, &value).ok());
  }
}

TEST(DBKeyVersionsTest, BadArgumentsAreRefused) {
  test::TempDir dir("key_versions");
  Options options;
  options.create_if_missing = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "a", "1").ok());
  const Slice b("z"), e("a");
  std::vector<KeyVersion> got;
  EXPECT_TRUE(GetAllKeyVersions(db.get(), &b, &e, 0, &got).IsInvalidArgument());
  EXPECT_TRUE(GetAllKeyVersions(db.get(), nullptr, nullptr, 0, nullptr)
                  .IsInvalidArgument());
  EXPECT_TRUE(ForEachKeyVersion(db.get(), nullptr, nullptr, nullptr)
                  .IsInvalidArgument());
  EXPECT_TRUE(got.empty());
  // An empty range is no error.
  ASSERT_TRUE(GetAllKeyVersions(db.get(), &e, &e, 0, &got).ok());
  EXPECT_TRUE(got.empty());
}

TEST(DBKeyVersionsTest, ReadOnlyDatabasesListTheirLogToo) {
  test::TempDir dir("key_versions");
  Options options;
  options.create_if_missing = true;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "a", "1").ok());
    ASSERT_TRUE(db->Flush().ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "a", "2").ok());  // only in the log
  }
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::OpenForReadOnly(Options(), dir.path(), &db).ok());
  std::vector<KeyVersion> got;
  ASSERT_TRUE(GetAllKeyVersions(db.get(), nullptr, nullptr, 0, &got).ok());
  EXPECT_EQ((std::vector<Version>{{"a", 2, false, "2"}, {"a", 1, false, "1"}}),
            Flatten(got));
}

}  // namespace
}  // namespace bloomkv
