// Filters chosen per level (Options::deep_filter_policy): flushes write
// level-0 segments with filter_policy, compactions write the levels from
// deep_filter_level down with the deep policy, ingested segments get the
// last level's; whatever policies a database is reopened with, it reads
// every kind, finds every key and keeps ruling segments out by filter.
// What a segment carries is read from its file's properties, not only from
// what the database reports.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "bloomkv/filter_policy.h"
#include "bloomkv/segment_writer.h"
#include "table/segment_reader.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

constexpr char kBloom[] = "bloomkv.BlockedBloom.v1";
constexpr char kFuse8[] = "bloomkv.BinaryFuse8";
constexpr char kFuse16[] = "bloomkv.BinaryFuse16";

constexpr int kKeys = 20000;
constexpr int kLevelZeroKeys = 500;
constexpr int kAbsentLookups = 20000;

// The filter policy name stored in a segment file's properties.
std::string StoredFilterPolicy(const std::string& file) {
  Env* env = Env::Default();
  uint64_t size = 0;
  std::unique_ptr<RandomAccessFile> f;
  EXPECT_TRUE(env->GetFileSize(file, &size).ok()) << file;
  EXPECT_TRUE(env->NewRandomAccessFile(file, &f).ok()) << file;
  std::unique_ptr<SegmentReader> reader;
  const Status s =
      SegmentReader::Open(SegmentReaderOptions(), file, std::move(f), size,
                          &reader);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return reader == nullptr ? "" : reader->properties().filter_policy;
}

// One row of GetProperty("bloomkv.levels").
struct LevelRow {
  std::string level;
  int segments = 0;
  std::string fp_measured;  // "-" before any lookup
  uint64_t probes = 0;
  std::string filter;
};

std::vector<LevelRow> ReadLevels(DB* db) {
  std::string table;
  EXPECT_TRUE(db->GetProperty("bloomkv.levels", &table));
  std::istringstream in(table);
  std::string line;
  std::getline(in, line);  // header
  EXPECT_NE(std::string::npos, line.find("fp_meas")) << line;
  std::vector<LevelRow> rows;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    LevelRow row;
    std::string entries, bytes, target, score, bits, fp;
    fields >> row.level >> row.segments >> entries >> bytes >> target >>
        score >> bits >> fp >> row.fp_measured >> row.probes >> row.filter;
    EXPECT_FALSE(fields.fail()) << line;
    rows.push_back(row);
  }
  return rows;
}

// A policy of the application's own, which the database must be configured
// with to read: the bloom filter under another name.
class RenamedBloom : public FilterPolicy {
 public:
  const char* Name() const override { return "test.RenamedBloom"; }
  void CreateFilter(const uint64_t* hashes, size_t n,
                    std::string* dst) const override {
    bloom_->CreateFilter(hashes, n, dst);
  }
  bool KeyMayMatch(uint64_t hash, const Slice& filter) const override {
    return bloom_->KeyMayMatch(hash, filter);
  }
  double BitsPerKey() const override { return bloom_->BitsPerKey(); }
  double TheoreticalFpRate(const Slice& filter,
                           uint64_t num_keys) const override {
    return bloom_->TheoreticalFpRate(filter, num_keys);
  }

 private:
  const std::shared_ptr<const FilterPolicy> bloom_ = NewBloomFilterPolicy(10);
};

class PerLevelFiltersTest : public testing::Test {
 protected:
  // Small levels, so that kKeys entries reach below level 0; level 0 is
  // compacted only once it holds four segments, so the last flush stays
  // there.
  static Options BaseOptions() {
    Options options = test::TinyCompactionOptions();
    options.level0_compaction_trigger = 4;
    options.level0_slowdown_writes_trigger = 8;
    options.level0_stop_writes_trigger = 12;
    options.block_cache_capacity = 0;  // every filter positive is a read
    return options;
  }

  void Open(const Options& options) {
    db_.reset();
    const Status s = DB::Open(options, dir_.path(), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // kKeys random keys, settled below level 0, then one flush of
  // kLevelZeroKeys more that stays at level 0.
  void Fill(uint64_t seed) {
    Random rnd(seed);
    for (int i = 0; i < kKeys + kLevelZeroKeys; i++) {
      const std::string key = "k" + std::to_string(rnd.Next64());
      const std::string value = test::RandomString(&rnd, 20 + rnd.Uniform(40));
      ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
      model_[key] = value;
      if (i == kKeys - 1) {
        ASSERT_TRUE(db_->Flush().ok());
        test::WaitForBackgroundWork(db_.get());
        ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
      }
    }
    ASSERT_TRUE(db_->Flush().ok());
    test::WaitForBackgroundWork(db_.get());
  }

  // Every segment at a level below `deep_level` carries `shallow`, every
  // other one `deep`, in its file and as the database reports it; both
  // kinds are present.
  void ExpectKinds(int deep_level, const std::string& shallow,
                   const std::string& deep) {
    int shallow_segments = 0, deep_segments = 0;
    for (const SegmentInfo& s : db_->GetSegmentInfo()) {
      const std::string& want = s.level < deep_level ? shallow : deep;
      EXPECT_EQ(want, StoredFilterPolicy(s.file_name))
          << "L" << s.level << " " << s.file_name;
      EXPECT_TRUE(s.has_filter) << s.file_name;
      EXPECT_EQ(want, s.filter_policy) << s.file_name;
      (s.level < deep_level ? shallow_segments : deep_segments)++;
    }
    EXPECT_GT(shallow_segments, 0);
    EXPECT_GT(deep_segments, 0);
  }

  // Every written key is found with its value.
  void ExpectEveryKeyFound() { test::ExpectDbHolds(db_.get(), model_); }

  // Fraction of the segments consulted for absent keys that their filter
  // ruled out.
  double AbsentKeysSkippedByFilter() {
    const DbStats before = db_->GetStats();
    std::string value;
    Random rnd(4242);
    for (int i = 0; i < kAbsentLookups; i++) {
      const std::string key = "k" + std::to_string(rnd.Next64()) + "-absent";
      EXPECT_TRUE(db_->Get(ReadOptions(), key, &value).IsNotFound());
    }
    const DbStats after = db_->GetStats();
    const uint64_t consulted =
        after.segments_consulted - before.segments_consulted;
    EXPECT_GT(consulted, static_cast<uint64_t>(kAbsentLookups));
    return static_cast<double>(after.filter_negatives -
                               before.filter_negatives) /
           static_cast<double>(consulted);
  }

  test::TempDir dir_;
  std::unique_ptr<DB> db_;
  std::map<std::string, std::string> model_;
};

TEST_F(PerLevelFiltersTest, FlushesGetBloomAndCompactionsTheDeepFilter) {
  for (int width : {8, 16}) {
    for (uint64_t seed : test::TestSeeds()) {
      SCOPED_TRACE("fuse width " + std::to_string(width) +
                   ", seed=" + std::to_string(seed));
      db_.reset();
      model_.clear();
      ASSERT_TRUE(DestroyDB(dir_.path(), Options()).ok());
      Options options = BaseOptions();
      options.create_if_missing = true;
      options.deep_filter_policy = NewBinaryFuseFilterPolicy(width);
      Open(options);
      Fill(seed);
      const std::string fuse = width == 8 ? kFuse8 : kFuse16;
      ExpectKinds(1, kBloom, fuse);
      ExpectEveryKeyFound();
      EXPECT_GT(AbsentKeysSkippedByFilter(), 0.97);

      // bloomkv.levels names each level's kind and measures its rate.
      for (const LevelRow& row : ReadLevels(db_.get())) {
        if (row.segments == 0) {
          EXPECT_EQ("-", row.filter) << row.level;
          EXPECT_EQ("-", row.fp_measured) << row.level;
          continue;
        }
        EXPECT_EQ(row.level == "L0" ? std::string(kBloom) : fuse, row.filter)
            << row.level;
        if (row.probes > 0) {
          EXPECT_LT(std::stod(row.fp_measured), 0.05) << row.level;
        }
      }
      if (seed != test::TestSeeds().front()) continue;
      // Reopened with other policies configured: every kind is still read.
      for (auto reopen : {NewBinaryFuseFilterPolicy(24 - width),
                          NewBloomFilterPolicy(4)}) {
        SCOPED_TRACE(std::string("reopened with ") + reopen->Name());
        Options other = BaseOptions();
        other.filter_policy = reopen;
        Open(other);
        ExpectKinds(1, kBloom, fuse);
        ExpectEveryKeyFound();
        EXPECT_GT(AbsentKeysSkippedByFilter(), 0.97);
      }
    }
  }
}

// deep_filter_policy left null chooses from filter_policy: a bloom filter
// of 10 to 12 bits per key (the default 10) gets 8-bit binary fuse filters
// below level 0; any other filter_policy is kept everywhere, and
// deep_filter_policy = filter_policy keeps it everywhere too.
TEST_F(PerLevelFiltersTest, TheDefaultDeepFilterFollowsTheBloomFilter) {
  struct Case {
    const char* label;
    std::shared_ptr<const FilterPolicy> filter_policy;
    bool deep_same_as_filter;
    const char* deep;  // expected below level 0; nullptr: no filters at all
    double bits_per_key;  // of the level-0 bloom filters
  };
  const auto bloom12 = NewBloomFilterPolicy(12);
  const std::vector<Case> cases = {
      {"default", Options().filter_policy, false, kFuse8, 10.0},
      {"bloom 12", bloom12, false, kFuse8, 12.0},
      {"bloom 9", NewBloomFilterPolicy(9), false, kBloom, 9.0},
      {"bloom 16", NewBloomFilterPolicy(16), false, kBloom, 16.0},
      {"default, deep = filter_policy", Options().filter_policy, true, kBloom,
       10.0},
      {"none", nullptr, false, nullptr, 0.0},
  };
  const uint64_t seed = test::TestSeeds().front();
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.label) + ", seed=" + std::to_string(seed));
    db_.reset();
    model_.clear();
    ASSERT_TRUE(DestroyDB(dir_.path(), Options()).ok());
    Options options = BaseOptions();
    options.create_if_missing = true;
    options.filter_policy = c.filter_policy;
    if (c.deep_same_as_filter) options.deep_filter_policy = c.filter_policy;
    Open(options);
    Fill(seed);
    if (c.deep == nullptr) {
      for (const SegmentInfo& s : db_->GetSegmentInfo()) {
        EXPECT_FALSE(s.has_filter) << s.file_name;
        EXPECT_EQ("", StoredFilterPolicy(s.file_name)) << s.file_name;
      }
    } else {
      ExpectKinds(1, kBloom, c.deep);
      for (const SegmentInfo& s : db_->GetSegmentInfo()) {
        if (s.level == 0 || std::string(c.deep) == kBloom) {
          EXPECT_DOUBLE_EQ(c.bits_per_key, s.bits_per_key) << s.file_name;
        }
      }
    }
    ExpectEveryKeyFound();
  }
}

TEST_F(PerLevelFiltersTest, AMoveAcrossTheDeepLevelIsARewrite) {
  // Static level targets and keys in order: segments leave level 1 for
  // level 2 by moves (nothing there overlaps them) unless a move would carry
  // level 1's bloom filter below deep_filter_level.
  // A null deep policy here stands for filter_policy at every level.
  auto options_for = [](std::shared_ptr<const FilterPolicy> deep) {
    Options o = BaseOptions();
    o.create_if_missing = true;
    o.level_compaction_dynamic_level_bytes = false;
    o.compression_per_level.clear();  // no rewrite for compression's sake
    // LZ4 blocks: the tree this load was sized for, whose levels 2 and
    // deeper take no moves of their own.
    o.compression = CompressionType::kLZ4;
    o.deep_filter_policy = deep != nullptr ? std::move(deep) : o.filter_policy;
    o.deep_filter_level = 2;
    return o;
  };
  auto fill_in_order = [this] {
    for (int i = 0; i < 30000; i++) {
      char key[16];
      std::snprintf(key, sizeof(key), "k%08d", i);
      const std::string value(40, static_cast<char>('a' + i % 26));
      ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
      model_[key] = value;
    }
    ASSERT_TRUE(db_->Flush().ok());
    test::WaitForBackgroundWork(db_.get());
  };
  // The same load with the bloom filter at every level moves segments.
  Open(options_for(nullptr));
  fill_in_order();
  EXPECT_GT(db_->GetStats().trivial_moves, 0u);

  db_.reset();
  model_.clear();
  ASSERT_TRUE(DestroyDB(dir_.path(), Options()).ok());
  Open(options_for(NewBinaryFuseFilterPolicy(8)));
  fill_in_order();
  EXPECT_EQ(0u, db_->GetStats().trivial_moves);
  int level2_or_deeper = 0;
  for (const SegmentInfo& s : db_->GetSegmentInfo()) {
    EXPECT_EQ(s.level < 2 ? kBloom : kFuse8, StoredFilterPolicy(s.file_name))
        << "L" << s.level << " " << s.file_name;
    level2_or_deeper += s.level >= 2;
  }
  EXPECT_GT(level2_or_deeper, 0);
  ExpectEveryKeyFound();
}

TEST_F(PerLevelFiltersTest, IngestedSegmentsGetTheLastLevelsFilter) {
  Options options = BaseOptions();
  options.create_if_missing = true;
  options.deep_filter_policy = NewBinaryFuseFilterPolicy(16);
  std::vector<std::string> files;
  for (int part = 0; part < 2; part++) {
    const std::string path =
        dir_.path() + "-ingest-" + std::to_string(part) + ".seg";
    std::unique_ptr<SegmentWriter> w;
    ASSERT_TRUE(SegmentWriter::Open(options, path, &w).ok());
    for (int i = 0; i < 3000; i++) {
      char key[32];
      std::snprintf(key, sizeof(key), "i%d-%06d", part, i);
      ASSERT_TRUE(w->Put(key, "ingested").ok());
      model_[key] = "ingested";
    }
    SegmentFileInfo info;
    ASSERT_TRUE(w->Finish(&info).ok());
    EXPECT_EQ(kFuse16, StoredFilterPolicy(path));
    files.push_back(path);
  }
  // A database configured with the bloom filter alone accepts the first
  // (it reads every built-in kind), one configured as the writer the other.
  Options bloom_only = BaseOptions();
  bloom_only.create_if_missing = true;
  Open(bloom_only);
  ASSERT_TRUE(db_->IngestSegments({files[0]}, IngestOptions()).ok());
  Open(options);
  ASSERT_TRUE(db_->IngestSegments({files[1]}, IngestOptions()).ok());
  for (const SegmentInfo& s : db_->GetSegmentInfo()) {
    EXPECT_EQ(6, s.level);
    EXPECT_EQ(kFuse16, s.filter_policy);
  }
  ExpectEveryKeyFound();
  for (const std::string& f : files) {
    Env::Default()->RemoveFile(f).PermitUncheckedError();
  }
}

TEST_F(PerLevelFiltersTest, AnApplicationsDeepPolicyIsReadByItsName) {
  const uint64_t seed = test::TestSeeds().front();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  Options options = BaseOptions();
  options.create_if_missing = true;
  options.deep_filter_policy = std::make_shared<RenamedBloom>();
  Open(options);
  Fill(seed);
  ExpectKinds(1, kBloom, "test.RenamedBloom");
  ExpectEveryKeyFound();
  EXPECT_GT(AbsentKeysSkippedByFilter(), 0.97);
  // Without it configured, its segments are searched without a filter, as
  // for any unknown name, and still answer every key.
  Open(BaseOptions());
  for (const SegmentInfo& s : db_->GetSegmentInfo()) {
    EXPECT_EQ(s.level == 0, s.has_filter) << s.file_name;
  }
  ExpectEveryKeyFound();
}

TEST_F(PerLevelFiltersTest, MinimizingFalsePositivesPlansAcrossKinds) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    db_.reset();
    model_.clear();
    ASSERT_TRUE(DestroyDB(dir_.path(), Options()).ok());
    Options options = BaseOptions();
    options.create_if_missing = true;
    options.deep_filter_policy = NewBinaryFuseFilterPolicy(8);
    options.filter_allocation = FilterAllocation::kMinimizeFalsePositives;
    Open(options);
    Fill(seed);
    for (const SegmentInfo& s : db_->GetSegmentInfo()) {
      EXPECT_TRUE(s.has_filter) << s.file_name;
      const std::string stored = StoredFilterPolicy(s.file_name);
      EXPECT_EQ(stored, s.filter_policy);
      EXPECT_TRUE(stored == kBloom || stored == kFuse8 || stored == kFuse16)
          << stored;
      if (s.level == 0) {
        EXPECT_EQ(kBloom, stored);
      }
    }
    ExpectEveryKeyFound();
    EXPECT_GT(AbsentKeysSkippedByFilter(), 0.97);
  }
}

TEST_F(PerLevelFiltersTest, FilterOptionsAreCheckedAtOpen) {
  Options options = BaseOptions();
  options.create_if_missing = true;
  options.deep_filter_policy = NewBinaryFuseFilterPolicy(8);
  for (int level : {0, 7}) {
    options.deep_filter_level = level;
    std::unique_ptr<DB> db;
    const Status s = DB::Open(options, dir_.path(), &db);
    EXPECT_TRUE(s.IsInvalidArgument()) << level << ": " << s.ToString();
    std::unique_ptr<SegmentWriter> w;
    EXPECT_TRUE(SegmentWriter::Open(options, dir_.path() + "-w.seg", &w)
                    .IsInvalidArgument());
  }
  options.deep_filter_level = 1;
  options.filter_policy = std::make_shared<RenamedBloom>();
  class OtherPolicy : public RenamedBloom {
    const char* Name() const override { return "test.Other"; }
  };
  options.deep_filter_policy = std::make_shared<OtherPolicy>();
  std::unique_ptr<DB> db;
  const Status s = DB::Open(options, dir_.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("test.Other"));
}

}  // namespace
}  // namespace bloomkv
