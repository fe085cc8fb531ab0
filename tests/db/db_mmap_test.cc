// Whole-database reads through a POSIX Env whose segment files are mapped
// into memory, read with pread, or both (more segments than may be mapped):
// every key written, overwritten and deleted reads back the same, before and
// after reopening, from a store with segments on several levels and a block
// cache far smaller than the data.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "tests/testutil/test_util.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

struct ReadMode {
  const char* name;
  bool use_mmap_reads;
  int max_mmap_files;
};

class DBMmapTest : public testing::TestWithParam<ReadMode> {
 protected:
  DBMmapTest() {
    EnvOptions eo;
    eo.use_mmap_reads = GetParam().use_mmap_reads;
    eo.max_mmap_files = GetParam().max_mmap_files;
    env_ = NewPosixEnv(eo);
    options_.create_if_missing = true;
    options_.env = env_.get();
    options_.write_buffer_size = 64 << 10;
    options_.block_cache_capacity = 32 << 10;
  }

  void Open() {
    db_.reset();
    ASSERT_TRUE(DB::Open(options_, dir_.path(), &db_).ok());
  }

  // Every key of the model reads back its value; deleted keys are NotFound.
  void CheckAll(const std::map<std::string, std::string>& model,
                const std::map<std::string, bool>& deleted) {
    for (const auto& [key, want] : model) {
      std::string value;
      const Status s = db_->Get(ReadOptions(), key, &value);
      ASSERT_TRUE(s.ok()) << key << ": " << s.ToString();
      ASSERT_EQ(value, want) << key;
    }
    for (const auto& [key, unused] : deleted) {
      std::string value;
      ASSERT_TRUE(db_->Get(ReadOptions(), key, &value).IsNotFound()) << key;
    }
  }

  std::unique_ptr<Env> env_;
  test::TempDir dir_;
  Options options_;
  std::unique_ptr<DB> db_;
};

INSTANTIATE_TEST_SUITE_P(Envs, DBMmapTest,
                         testing::Values(ReadMode{"Mmap", true, 1000},
                                         ReadMode{"Pread", false, 0},
                                         ReadMode{"MmapTwoFiles", true, 2}),
                         [](const testing::TestParamInfo<ReadMode>& info) {
                           return info.param.name;
                         });

TEST_P(DBMmapTest, EveryKeyReadsBack) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    db_.reset();
    ASSERT_TRUE(DestroyDB(dir_.path(), options_).ok());
    Open();
    std::mt19937_64 rng(seed);
    std::map<std::string, std::string> model;
    std::map<std::string, bool> deleted;
    auto value_for = [&rng](int i) {
      std::string v = "https://example.com/" + std::to_string(i) + "/";
      v.append(20 + rng() % 80, static_cast<char>('a' + rng() % 26));
      return v;
    };
    // Enough data for several flushes and a compaction into level 1, then a
    // few more flushes, so reads go through level 0 and deeper levels.
    for (int i = 0; i < 3000; i++) {
      const std::string key = "k" + std::to_string(rng() % 20000);
      model[key] = value_for(i);
      deleted.erase(key);
      ASSERT_TRUE(db_->Put(WriteOptions(), key, model[key]).ok());
      if (i % 7 == 0) {
        const std::string gone = "k" + std::to_string(rng() % 20000);
        model.erase(gone);
        deleted[gone] = true;
        ASSERT_TRUE(db_->Delete(WriteOptions(), gone).ok());
      }
      if (i == 1500) {
        ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
      }
    }
    ASSERT_TRUE(db_->Flush().ok());
    CheckAll(model, deleted);
    Open();
    CheckAll(model, deleted);
  }
}

// What a database opened with the default options does when an outside tool
// (a backup, a bad restore) cuts one of its segment files while it runs.
// Exit codes of the child that reads it; 0 when every read either answered
// exactly what was stored or failed with Corruption naming the file.
enum CutSegmentOutcome {
  kCutOk = 0,
  kCutSetupFailed = 10,
  kCutWrongAnswer = 11,
  kCutUnclearError = 12,
  kCutNothingFailed = 13,
};

// Writes 2,000 keys with values of value_size bytes into *model and db,
// and flushes them into what must be the database's only segment.
bool WriteOneSegment(DB* db, size_t value_size,
                     std::map<std::string, std::string>* model) {
  for (int i = 0; i < 2000; i++) {
    char key[16];
    std::snprintf(key, sizeof(key), "k%05d", i);
    (*model)[key] = std::string(value_size, static_cast<char>('a' + i % 26));
    if (!db->Put(WriteOptions(), key, (*model)[key]).ok()) return false;
  }
  return db->Flush().ok() && db->GetSegmentInfo().size() == 1;
}

// With `env` (null: the default one). When `read_first`, every key is read
// before the cut as well, so that the blocks a lookup trusts without a
// checksum (mapped, verified once) are the ones that lose their pages.
int ReadACutSegment(const std::string& dir, Env* env = nullptr,
                    bool read_first = false) {
  Options options;
  options.create_if_missing = true;
  if (env != nullptr) options.env = env;
  // Every read goes to the file: none is answered from a copy.
  if (read_first) options.block_cache_capacity = 0;
  std::unique_ptr<DB> db;
  if (!DB::Open(options, dir, &db).ok()) return kCutSetupFailed;
  std::map<std::string, std::string> model;
  if (!WriteOneSegment(db.get(), 200, &model)) return kCutSetupFailed;
  const std::vector<SegmentInfo> segments = db->GetSegmentInfo();
  const std::string file = segments[0].file_name;
  for (const auto& [key, want] : model) {
    std::string value;
    if (read_first &&
        (!db->Get(ReadOptions(), key, &value).ok() || value != want)) {
      return kCutSetupFailed;
    }
  }
  std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
  const std::string name = file.substr(file.rfind('/') + 1);
  int failed = 0;
  for (const auto& [key, want] : model) {
    std::string value;
    const Status s = db->Get(ReadOptions(), key, &value);
    if (s.ok() && value != want) return kCutWrongAnswer;
    if (s.ok()) continue;
    if (!s.IsCorruption() || s.ToString().find(name) == std::string::npos) {
      return kCutUnclearError;
    }
    failed++;
  }
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (model[it->key().ToString()] != it->value().ToString()) {
      return kCutWrongAnswer;
    }
  }
  if (!it->status().IsCorruption()) return kCutUnclearError;
  return failed > 0 ? kCutOk : kCutNothingFailed;
}

// Ends a death test's child with `code`, after removing the directory the
// child made: the child runs the test from its start, so its TempDir is not
// the parent's, and std::exit runs no destructor.
[[noreturn]] void ExitRemoving(const test::TempDir& dir, int code) {
  std::filesystem::remove_all(dir.path());
  std::exit(code);
}

// A segment cut short under a live database fails the reads that need its
// lost part with Corruption; it never ends the process, mapped or not (a
// mapped page the file no longer backs raises SIGBUS, which the mapping's
// guard survives). Run in a child so that a crash fails this test, not the
// suite.
TEST(DBCutSegmentTest, DefaultOptionsFailTheReadsNotTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  test::TempDir dir;
  EXPECT_EXIT(ExitRemoving(dir, ReadACutSegment(dir.path())),
              testing::ExitedWithCode(kCutOk), "");
}

TEST(DBCutSegmentTest, PreadSegmentsFailTheReadsNotTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  test::TempDir dir;
  EXPECT_EXIT(ExitRemoving(dir, ReadACutSegment(dir.path(), test::PreadEnv())),
              testing::ExitedWithCode(kCutOk), "");
}

TEST(DBCutSegmentTest, MappedSegmentsFailTheReadsNotTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const bool read_first : {false, true}) {
    SCOPED_TRACE(read_first ? "blocks trusted before the cut" : "cold");
    test::TempDir dir;
    EXPECT_EXIT(
        {
          EnvOptions eo;
          eo.use_mmap_reads = true;
          std::unique_ptr<Env> env = NewPosixEnv(eo);
          const int code = ReadACutSegment(dir.path(), env.get(), read_first);
          env.reset();
          ExitRemoving(dir, code);
        },
        testing::ExitedWithCode(kCutOk), "");
  }
}

// A segment file read into memory and handed out in place, as a mapping
// hands out its pages, whose bytes a test can lose: zeroed, and reported
// by Recheck, as a mapped page the disk could not give back is (its guard
// maps zeros over it). With `whole`, it says where all its bytes lie
// (MappedBytes), as a mapped file does.
class LosableFile final : public RandomAccessFile {
 public:
  LosableFile(std::string data, bool whole)
      : data_(std::move(data)), whole_(whole) {}

  const char* MappedBytes() const override {
    return whole_ ? data_.data() : nullptr;
  }

  Status Read(uint64_t offset, size_t n, Slice* result,
              char* /*scratch*/) const override {
    if (offset >= data_.size()) {
      *result = Slice();
      return Status::OK();
    }
    const size_t at = static_cast<size_t>(offset);
    *result = Slice(data_.data() + at, std::min(n, data_.size() - at));
    return Status::OK();
  }

  Status Recheck(uint64_t offset, size_t n) const override {
    if (offset + n <= lost_from_.load() || offset >= lost_to_.load()) {
      return Status::OK();
    }
    return Status::Corruption("lost bytes at offset " + std::to_string(offset));
  }

  const std::string& data() const { return data_; }
  void Lose(size_t from, size_t to) {
    lost_to_ = to;
    lost_from_ = from;
    std::memset(data_.data() + from, 0, to - from);
  }

 private:
  std::string data_;
  const bool whole_;
  std::atomic<uint64_t> lost_from_{UINT64_MAX};
  std::atomic<uint64_t> lost_to_{0};
};

// Opens segment files as LosableFiles (`whole` ones or not), the last one
// kept for the test.
class LosableEnv final : public EnvWrapper {
 public:
  LosableEnv(Env* target, bool whole) : EnvWrapper(target), whole_(whole) {}

  Status NewRandomAccessFile(
      const std::string& fname,
      std::unique_ptr<RandomAccessFile>* result) override {
    if (fname.size() < 4 || fname.compare(fname.size() - 4, 4, ".seg") != 0) {
      return EnvWrapper::NewRandomAccessFile(fname, result);
    }
    std::string data;
    Status s = ReadFileToString(target(), fname, &data);
    if (!s.ok()) return s;
    auto file = std::make_unique<LosableFile>(std::move(data), whole_);
    last = file.get();
    *result = std::move(file);
    return Status::OK();
  }

  LosableFile* last = nullptr;

 private:
  const bool whole_;
};

// A one-segment database on LosableFiles, every key read once (so that
// lookups verified its blocks and now trust them where they lie), and
// then the middle of one value a third of the way into the file lost:
// entry headers, keys and block trailers stay whole, so only the bytes'
// owner can tell that the value is not the file's. The parameter: whether
// the files say where all their bytes lie (MappedBytes), so that lookups
// use trusted blocks there without reading them.
class DBLostBytesTest : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    Options options;
    options.create_if_missing = true;
    options.env = &env_;
    options.block_cache_capacity = 0;
    // The lookups below read their blocks again: no answer kept from the
    // reads that trusted them.
    options.answer_cache_capacity = 0;
    // Reads may then skip checksums where ReadOptions say so.
    options.paranoid_checks = false;
    ASSERT_TRUE(DB::Open(options, dir_.path(), &db_).ok());
    ASSERT_TRUE(WriteOneSegment(db_.get(), 100, &model_));
    for (const auto& [key, want] : model_) {
      std::string value;
      ASSERT_TRUE(db_->Get(ReadOptions(), key, &value).ok()) << key;
    }
    ASSERT_NE(env_.last, nullptr);
    const std::string& data = env_.last->data();
    size_t run = data.size() / 3;
    while (run + 100 <= data.size() &&
           (data[run] < 'a' || data[run] > 'z' ||
            data.compare(run, 100, std::string(100, data[run])) != 0)) {
      run++;
    }
    ASSERT_LE(run + 100, data.size());
    env_.last->Lose(run + 25, run + 75);
  }

  test::TempDir dir_;
  LosableEnv env_{Env::Default(), GetParam()};
  std::unique_ptr<DB> db_;
  std::map<std::string, std::string> model_;
};

// The lookups that meet the lost bytes fail with Corruption; none answers
// from the zeros.
TEST_P(DBLostBytesTest, LookupsOfTrustedBlocksAskAfterTheirBytes) {
  int failed = 0;
  for (const auto& [key, want] : model_) {
    std::string value;
    const Status s = db_->Get(ReadOptions(), key, &value);
    if (s.ok()) {
      ASSERT_EQ(value, want) << key;
    } else {
      ASSERT_TRUE(s.IsCorruption()) << key << ": " << s.ToString();
      failed++;
    }
  }
  EXPECT_GT(failed, 0);
}

// An iterator that copies blocks without checking their checksums
// (verify_checksums off) asks after the bytes it copied: it stops with
// Corruption where they were lost and yields no value from the zeros.
TEST_P(DBLostBytesTest, UncheckedBlockCopiesAskAfterTheirBytes) {
  ReadOptions ro;
  ro.verify_checksums = false;
  ro.fill_cache = false;
  std::unique_ptr<Iterator> it = db_->NewIterator(ro);
  size_t seen = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ASSERT_EQ(it->value().ToString(), model_[it->key().ToString()])
        << it->key().ToString();
    seen++;
  }
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  EXPECT_LT(seen, model_.size());
}

INSTANTIATE_TEST_SUITE_P(Files, DBLostBytesTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "UsedInPlace" : "ReadEachTime";
                         });

}  // namespace
}  // namespace bloomkv
