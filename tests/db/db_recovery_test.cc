// Open and recovery never lose or hide data: a failed step of Open leaves a
// database that the next Open recovers in full; a segment the manifest lists
// but that is missing or cut short is an error, never "not found"; a damaged
// last manifest record never makes Open delete live segments.
// (The damage of every file kind is covered by db_corruption_matrix_test.)
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "bloomkv/db.h"
#include "db/filename.h"
#include "db/log_reader.h"
#include "tests/testutil/fault_env.h"
#include "tests/testutil/test_util.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Model = std::map<std::string, std::string>;

std::vector<std::string> FilesOfType(const std::string& dir, FileType want) {
  std::vector<std::string> names;
  for (const auto& c : test::DatabaseFiles(dir)) {
    uint64_t n;
    FileType t;
    if (ParseFileName(c, &n, &t) && t == want) names.push_back(c);
  }
  return names;
}

void CopyDir(const std::string& from, const std::string& to) {
  std::filesystem::copy(from, to,
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::overwrite_existing);
}

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%05d", i);
  return buf;
}

// Writes keys [begin, end) with values tagged by round, into db and m.
void PutRange(DB* db, int begin, int end, int round, Model* m) {
  for (int i = begin; i < end; i++) {
    const std::string v = "r" + std::to_string(round) + "-" + Key(i) +
                          std::string(100, static_cast<char>('a' + i % 26));
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), v).ok());
    (*m)[Key(i)] = v;
  }
}

// Every key of m reads back exactly, and nothing else is there.
void ExpectExactly(DB* db, const Model& m) {
  for (const auto& [k, v] : m) {
    std::string got;
    Status s = db->Get(ReadOptions(), k, &got);
    ASSERT_TRUE(s.ok()) << k << ": " << s.ToString();
    ASSERT_EQ(v, got) << k;
  }
  Model seen;
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    seen[it->key().ToString()] = it->value().ToString();
  }
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  ASSERT_EQ(m, seen);
}

// A database with segments at level 0 and below and data in its WAL.
void BuildDb(const std::string& dir, Model* m) {
  Options options;
  options.create_if_missing = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir, &db).ok());
  PutRange(db.get(), 0, 200, 1, m);
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  PutRange(db.get(), 100, 300, 2, m);
  ASSERT_TRUE(db->Flush().ok());
  PutRange(db.get(), 250, 350, 3, m);
}

// Fails the k-th operation of one kind during Open, for every k until an
// Open meets no such operation. Whatever Open answered, a plain reopen must
// then find every key. A failed directory fsync after CURRENT was renamed
// used to delete the manifest CURRENT names.
TEST(RecoveryTest, AnyFailedOperationDuringOpenLeavesADatabaseThatOpens) {
  using FEnv = test::FaultInjectionEnv;
  test::TempDir base;
  Model model;
  BuildDb(base.path(), &model);
  ASSERT_FALSE(HasFatalFailure());

  for (uint32_t op : {FEnv::kSync, FEnv::kRename, FEnv::kWrite, FEnv::kOpen}) {
    for (uint64_t k = 0;; k++) {
      SCOPED_TRACE("op=" + std::to_string(op) + " k=" + std::to_string(k));
      ASSERT_LT(k, 100u) << "Open never stops doing these operations";
      test::TempDir trial;
      CopyDir(base.path(), trial.path());
      FEnv env(Env::Default());
      env.InjectErrors(op, nullptr, k, 1);
      Options options;
      options.env = &env;
      {
        std::unique_ptr<DB> db;
        Status s = DB::Open(options, trial.path(), &db);
        if (!s.ok()) {
          EXPECT_GT(env.injected_error_count(), 0u) << s.ToString();
        }
      }
      const bool injected = env.injected_error_count() > 0;
      std::unique_ptr<DB> db;
      Status s = DB::Open(Options(), trial.path(), &db);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ExpectExactly(db.get(), model);
      if (!injected) break;
    }
  }
}

// The same for the creation of a new database.
TEST(RecoveryTest, AnyFailedOperationCreatingADatabaseLeavesOneThatOpens) {
  using FEnv = test::FaultInjectionEnv;
  for (uint32_t op : {FEnv::kSync, FEnv::kRename, FEnv::kWrite, FEnv::kOpen}) {
    for (uint64_t k = 0;; k++) {
      SCOPED_TRACE("op=" + std::to_string(op) + " k=" + std::to_string(k));
      ASSERT_LT(k, 100u);
      test::TempDir trial;
      FEnv env(Env::Default());
      env.InjectErrors(op, nullptr, k, 1);
      Options options;
      options.create_if_missing = true;
      options.env = &env;
      {
        std::unique_ptr<DB> db;
        Status s = DB::Open(options, trial.path(), &db);
        env.ClearInjectedErrors();
        if (s.ok()) {
          ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
        }
      }
      const bool injected = env.injected_error_count() > 0;
      options.env = nullptr;
      std::unique_ptr<DB> db;
      Status s = DB::Open(options, trial.path(), &db);
      ASSERT_TRUE(s.ok()) << s.ToString();
      if (!injected) break;
    }
  }
}

// A segment that the manifest lists but that is gone, or shorter than
// recorded, fails Open with Corruption naming every such file; nothing is
// deleted. Without paranoid checks Open goes on, and reads that need the
// segment fail: a lost key never reads as absent.
TEST(RecoveryTest, MissingOrTruncatedSegmentsAreCorruptionNeverNotFound) {
  test::TempDir dir;
  Options options;
  options.create_if_missing = true;
  test::KeepEverythingInLevelZero(&options);
  Model m;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    for (int s = 0; s < 3; s++) {
      PutRange(db.get(), s * 100, s * 100 + 100, s, &m);
      ASSERT_TRUE(db->Flush().ok());
    }
  }
  const std::vector<std::string> segs =
      FilesOfType(dir.path(), FileType::kSegmentFile);
  ASSERT_EQ(3u, segs.size());
  ASSERT_TRUE(Env::Default()->RemoveFile(dir.File(segs[0])).ok());
  std::string data;
  ASSERT_TRUE(ReadFileToString(Env::Default(), dir.File(segs[1]), &data).ok());
  data.resize(data.size() - 1);
  ASSERT_TRUE(
      WriteStringToFile(Env::Default(), data, dir.File(segs[1]), false).ok());
  const std::vector<std::string> before = test::DatabaseFiles(dir.path());

  for (bool read_only : {false, true}) {
    SCOPED_TRACE(read_only ? "read-only" : "writable");
    std::unique_ptr<DB> db;
    Status s = read_only ? DB::OpenForReadOnly(options, dir.path(), &db)
                         : DB::Open(options, dir.path(), &db);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find(segs[0])) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find(segs[1])) << s.ToString();
    EXPECT_EQ(before, test::DatabaseFiles(dir.path()));
  }

  options.paranoid_checks = false;
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir.path(), &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::string v;
  for (int i : {0, 50, 99, 100, 150, 199}) {
    s = db->Get(ReadOptions(), Key(i), &v);
    EXPECT_TRUE(s.IsCorruption()) << Key(i) << ": " << s.ToString();
  }
  for (int i : {200, 299}) {
    s = db->Get(ReadOptions(), Key(i), &v);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(m[Key(i)], v);
  }
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
  }
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  std::vector<SegmentInfo> infos = db->GetSegmentInfo();
  EXPECT_EQ(2, std::count_if(infos.begin(), infos.end(),
                             [](const auto& i) { return !i.readable; }));
}

// Offset and size of the manifest's last record (header included).
void LastManifestRecord(const std::string& path, uint64_t* offset,
                        uint64_t* size) {
  std::unique_ptr<SequentialFile> file;
  ASSERT_TRUE(Env::Default()->NewSequentialFile(path, &file).ok());
  log::Reader reader(file.get(), path, nullptr, true);
  Slice record;
  std::string scratch;
  while (reader.ReadRecord(&record, &scratch)) {
    *offset = reader.LastRecordOffset();
  }
  ASSERT_TRUE(Env::Default()->GetFileSize(path, size).ok());
  *size -= *offset;
}

// A flipped byte anywhere in the last manifest record, whether that record
// is a compaction's (its inputs are gone) or a flush's (its log is gone),
// fails Open with Corruption naming the manifest and deletes nothing; a
// version whose files and logs are missing is never taken for the truth.
TEST(RecoveryTest, DamagedLastManifestRecordDeletesNothing) {
  for (bool compaction_last : {true, false}) {
    SCOPED_TRACE(compaction_last ? "compaction last" : "flush last");
    test::TempDir base;
    Model m;
    {
      Options options;
      options.create_if_missing = true;
      std::unique_ptr<DB> db;
      ASSERT_TRUE(DB::Open(options, base.path(), &db).ok());
      PutRange(db.get(), 0, 100, 1, &m);
      ASSERT_TRUE(db->Flush().ok());
      PutRange(db.get(), 50, 150, 2, &m);
      if (compaction_last) {
        ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
      } else {
        ASSERT_TRUE(db->Flush().ok());
      }
    }
    const std::vector<std::string> manifests =
        FilesOfType(base.path(), FileType::kManifestFile);
    ASSERT_EQ(1u, manifests.size());
    uint64_t offset = 0, size = 0;
    LastManifestRecord(base.File(manifests[0]), &offset, &size);
    ASSERT_FALSE(HasFatalFailure());
    std::string manifest;
    ASSERT_TRUE(
        ReadFileToString(Env::Default(), base.File(manifests[0]), &manifest)
            .ok());

    for (uint64_t i = 0; i < size; i++) {
      SCOPED_TRACE("byte " + std::to_string(i) + " of the last record");
      test::TempDir trial;
      CopyDir(base.path(), trial.path());
      std::string damaged = manifest;
      damaged[offset + i] ^= 0x01;
      ASSERT_TRUE(WriteStringToFile(Env::Default(), damaged,
                                    trial.File(manifests[0]), false)
                      .ok());
      const std::vector<std::string> before = test::DatabaseFiles(trial.path());
      std::unique_ptr<DB> db;
      Status s = DB::Open(Options(), trial.path(), &db);
      if (!s.ok()) {
        EXPECT_TRUE(s.IsCorruption()) << s.ToString();
        EXPECT_NE(std::string::npos, s.ToString().find(manifests[0]))
            << s.ToString();
        ASSERT_EQ(before, test::DatabaseFiles(trial.path()));
      } else {
        ExpectExactly(db.get(), m);
      }
    }
  }
}

}  // namespace
}  // namespace bloomkv
