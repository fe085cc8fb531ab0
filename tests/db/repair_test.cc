// RepairDB, specified by what an operator gets back: a database is written in
// phases (each flushed to its own level-0 segment, the last left in the
// log), damaged in one way, repaired and reopened. Every key the damage did
// not touch must read its newest value; a key written in the damaged file
// may read that file's value or the value it had without that file, never
// anything else (no older value over a newer intact one, no deleted key
// brought back while its tombstone survives). Nothing is deleted: damaged
// files end up in lost/.
#include "bloomkv/repair.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "table/block.h"
#include "table/format.h"
#include "table/internal_key.h"
#include "table/segment_reader.h"
#include "tests/testutil/fault_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

namespace fs = std::filesystem;

using Phase = std::map<std::string, std::optional<std::string>>;

constexpr int kPhases = 4;  // the last one stays in the log
constexpr int kKeys = 600;

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%05d", i);
  return buf;
}

void FlipByte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

std::vector<std::string> FilesNamed(const std::string& dir,
                                    const std::string& part) {
  std::vector<std::string> r;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(part) != std::string::npos) {
      r.push_back(e.path().string());
    }
  }
  return r;
}

// One data block of a segment as written: where it lies and the user keys
// of its entries.
struct DataBlock {
  uint64_t offset = 0;
  uint64_t size = 0;  // the payload, without the trailer
  std::vector<std::string> keys;
};

// The data blocks of an intact segment, read through its footer and index.
std::vector<DataBlock> DataBlocksOf(const std::string& path) {
  std::vector<DataBlock> blocks;
  std::string data;
  EXPECT_TRUE(ReadFileToString(Env::Default(), path, &data).ok()) << path;
  if (data.size() < kFooterSize) {
    ADD_FAILURE() << path << " is too short";
    return blocks;
  }
  const uint64_t footer_offset = data.size() - kFooterSize;
  Footer footer;
  Status s = footer.DecodeFrom(Slice(data.data() + footer_offset, kFooterSize),
                               path, footer_offset);
  EXPECT_TRUE(s.ok()) << s.ToString();
  const BlockHandle ih = footer.index_handle;
  std::shared_ptr<const Block> index;
  s = Block::Parse(data.substr(ih.offset, ih.size), path, ih.offset, &index);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return blocks;
  std::unique_ptr<Iterator> it = Block::NewIterator(index);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    Slice v = it->value();
    DataBlock b;
    BlockHandle h;
    EXPECT_TRUE(h.DecodeFrom(&v));
    b.offset = h.offset;
    b.size = h.size;
    std::unique_ptr<RandomAccessFile> file;
    EXPECT_TRUE(Env::Default()->NewRandomAccessFile(path, &file).ok());
    BlockContents contents;
    s = ReadBlock(file.get(), path, h, /*verify_checksum=*/true, &contents,
                  nullptr);
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::shared_ptr<const Block> block;
    EXPECT_TRUE(
        Block::Parse(std::move(contents), path, h.offset, &block).ok());
    if (block == nullptr) continue;
    std::unique_ptr<Iterator> entries = Block::NewIterator(block);
    for (entries->SeekToFirst(); entries->Valid(); entries->Next()) {
      b.keys.push_back(ExtractUserKey(entries->key()).ToString());
    }
    EXPECT_TRUE(entries->status().ok());
    blocks.push_back(std::move(b));
  }
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return blocks;
}

class RepairTest : public testing::Test {
 protected:
  // Writes kPhases phases of puts and deletes (each key at most once per
  // phase); all but the last are flushed, one segment each.
  void Build(uint64_t seed) {
    Options options;
    options.create_if_missing = true;
    test::KeepEverythingInLevelZero(&options);
    options.compression_per_level = {level0_compression_};
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, db_, &db).ok());
    Random rnd(static_cast<uint32_t>(seed));
    for (int p = 0; p < kPhases; p++) {
      Phase phase;
      for (int i = 0; i < keys_; i++) {
        if (p > 0 && rnd.Uniform(3) != 0) continue;  // later phases: a third
        const std::string key = Key(i);
        if (p > 0 && rnd.Uniform(4) == 0) {
          phase[key] = std::nullopt;
          ASSERT_TRUE(db->Delete(WriteOptions(), key).ok());
        } else {
          phase[key] = "p" + std::to_string(p) + "-" +
                       test::RandomString(&rnd, 20 + rnd.Uniform(200));
          ASSERT_TRUE(db->Put(WriteOptions(), key, *phase[key]).ok());
        }
      }
      phases_.push_back(std::move(phase));
      if (p + 1 < kPhases) {
        ASSERT_TRUE(db->Flush().ok());
        for (const SegmentInfo& s : db->GetSegmentInfo()) {
          if (std::find(files_.begin(), files_.end(), s.file_name) ==
              files_.end()) {
            files_.push_back(s.file_name);
          }
        }
        ASSERT_EQ(static_cast<size_t>(p + 1), files_.size());
      }
    }
    files_.push_back(FilesNamed(db_, ".log").at(0));
  }

  // Damages three segments (a flipped byte in a middle data block, a
  // flipped footer, a cut to half the size) and repairs: see
  // DamagedSegmentsGiveBackEveryReadableBlock.
  void DamageThreeSegmentsAndRepair(uint64_t seed) {
    keys_ = 3000;
    ASSERT_NO_FATAL_FAILURE(Build(seed));
    constexpr int kFlippedBlock = 0, kFlippedFooter = 1, kTruncated = 2;
    std::map<int, std::set<std::string>> survivors;
    uint64_t lost = 0;
    for (int p : {kFlippedBlock, kFlippedFooter, kTruncated}) {
      const std::string& file = files_[static_cast<size_t>(p)];
      const std::vector<DataBlock> blocks = DataBlocksOf(file);
      ASSERT_GT(blocks.size(), 10u);
      const uint64_t size = fs::file_size(file);
      const DataBlock& middle = blocks[blocks.size() / 2];
      for (const DataBlock& b : blocks) {
        bool readable = true;  // a flipped footer spares every data block
        if (p == kFlippedBlock) readable = &b != &middle;
        if (p == kTruncated) {
          readable = b.offset + b.size + kBlockTrailerSize <= size / 2;
        }
        if (readable) {
          survivors[p].insert(b.keys.begin(), b.keys.end());
        } else {
          lost += b.keys.size();
        }
      }
      if (p == kFlippedBlock) FlipByte(file, middle.offset + middle.size / 2);
      if (p == kFlippedFooter) FlipByte(file, size - kFooterSize + 20);
      if (p == kTruncated) fs::resize_file(file, size / 2);
    }
    ASSERT_GT(lost, 100u);
    RepairReport report;
    Status s = RepairDB(Options(), db_, &report);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(3u, report.segments_salvaged);
    EXPECT_EQ(0u, report.segments_lost);
    EXPECT_EQ(lost, report.entries_dropped);
    EXPECT_EQ(0u, report.segments_with_unknown_loss);
    for (int p : {kFlippedBlock, kFlippedFooter, kTruncated}) {
      const std::string base =
          fs::path(files_[static_cast<size_t>(p)]).filename().string();
      EXPECT_TRUE(fs::exists(db_ + "/lost/" + base)) << base;
    }
    ASSERT_NO_FATAL_FAILURE(ExpectExactly(survivors));
  }

  // What a crash would leave of db's segments: copies into to_dir (created)
  // the segment files on disk that its current version does not list, the
  // ones only readers still hold; returns their names.
  std::vector<std::string> SaveLeftovers(DB* db, const std::string& to_dir) {
    std::set<std::string> live;
    for (const SegmentInfo& seg : db->GetSegmentInfo()) {
      live.insert(fs::path(seg.file_name).filename().string());
    }
    fs::create_directories(to_dir);
    std::vector<std::string> leftovers;
    for (const std::string& path : FilesNamed(db_, ".seg")) {
      const std::string name = fs::path(path).filename().string();
      if (live.count(name) != 0) continue;
      fs::copy_file(path, to_dir + "/" + name);
      leftovers.push_back(name);
    }
    return leftovers;
  }

  // Puts the saved leftovers back into the closed database, as the crash
  // would have left them, deletes CURRENT and repairs: every leftover must
  // be set aside.
  void RepairAfterCrash(const Options& options,
                        const std::vector<std::string>& leftovers,
                        const std::string& from_dir) {
    ASSERT_FALSE(leftovers.empty());
    for (const std::string& name : leftovers) {
      if (!fs::exists(db_ + "/" + name)) {
        fs::copy_file(from_dir + "/" + name, db_ + "/" + name);
      }
    }
    fs::remove(db_ + "/CURRENT");
    RepairReport report;
    Status s = RepairDB(options, db_, &report);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(leftovers.size(), report.segments_removed_by_manifest);
  }

  // The newest state of key over every phase but `skip`.
  std::optional<std::string> Expected(const std::string& key, int skip) const {
    for (int p = kPhases - 1; p >= 0; p--) {
      if (p == skip) continue;
      auto it = phases_[static_cast<size_t>(p)].find(key);
      if (it != phases_[static_cast<size_t>(p)].end()) return it->second;
    }
    return std::nullopt;
  }

  // Reopens the repaired database and checks every key; `damaged` is the
  // phase whose file was damaged, or -1. Returns how many keys read the
  // value they had without that phase.
  int CheckRepaired(int damaged) {
    std::unique_ptr<DB> db;
    Status s = DB::Open(Options(), db_, &db);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return 0;
    int fallbacks = 0;
    for (int i = 0; i < keys_; i++) {
      const std::string key = Key(i);
      std::string value;
      s = db->Get(ReadOptions(), key, &value);
      EXPECT_TRUE(s.ok() || s.IsNotFound()) << key << ": " << s.ToString();
      std::optional<std::string> got;
      if (s.ok()) got = value;
      const auto newest = Expected(key, -1);
      if (got == newest) continue;
      const bool touched =
          damaged >= 0 && phases_[static_cast<size_t>(damaged)].count(key) > 0;
      EXPECT_TRUE(touched && got == Expected(key, damaged))
          << key << " reads " << got.value_or("<none>") << ", newest is "
          << newest.value_or("<none>");
      fallbacks++;
    }
    // The repaired database takes new writes, and they win.
    EXPECT_TRUE(db->Put(WriteOptions(), Key(0), "after repair").ok());
    std::string value;
    EXPECT_TRUE(db->Get(ReadOptions(), Key(0), &value).ok());
    EXPECT_EQ("after repair", value);
    return fallbacks;
  }

  // Reopens the repaired database and checks that every key reads exactly
  // its newest version among the phases, counting from a damaged phase only
  // the keys in `survivors` (phase -> keys of its readable blocks).
  void ExpectExactly(const std::map<int, std::set<std::string>>& survivors) {
    std::unique_ptr<DB> db;
    Status s = DB::Open(Options(), db_, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (int i = 0; i < keys_; i++) {
      const std::string key = Key(i);
      std::optional<std::string> expected;
      for (int p = kPhases - 1; p >= 0; p--) {
        const Phase& phase = phases_[static_cast<size_t>(p)];
        auto it = phase.find(key);
        if (it == phase.end()) continue;
        auto damaged = survivors.find(p);
        if (damaged != survivors.end() && damaged->second.count(key) == 0) {
          continue;  // in an unreadable block of phase p's segment
        }
        expected = it->second;
        break;
      }
      std::string value;
      s = db->Get(ReadOptions(), key, &value);
      ASSERT_TRUE(s.ok() || s.IsNotFound()) << key << ": " << s.ToString();
      std::optional<std::string> got;
      if (s.ok()) got = value;
      EXPECT_EQ(expected, got) << key;
    }
  }

  int keys_ = kKeys;
  // How Build's segments store their data blocks.
  CompressionType level0_compression_ = CompressionType::kNone;
  test::TempDir dir_{"repair"};
  const std::string db_ = dir_.File("db");
  std::vector<Phase> phases_;
  std::vector<std::string> files_;  // per phase: segment, ..., then the log
};

TEST_F(RepairTest, LostOrDamagedManifestLosesNothing) {
  const std::vector<std::string> damages = {
      "deleted CURRENT", "deleted manifest", "corrupt manifest", "none"};
  for (const std::string& damage : damages) {
    SCOPED_TRACE(damage);
    fs::remove_all(db_);
    phases_.clear();
    files_.clear();
    ASSERT_NO_FATAL_FAILURE(Build(301));
    const std::string manifest = FilesNamed(db_, "MANIFEST-").at(0);
    if (damage == "deleted CURRENT") fs::remove(db_ + "/CURRENT");
    if (damage == "deleted manifest") fs::remove(manifest);
    if (damage == "corrupt manifest") FlipByte(manifest, 20);
    if (damage != "none") {
      std::unique_ptr<DB> db;
      ASSERT_FALSE(DB::Open(Options(), db_, &db).ok());
    }
    RepairReport report;
    Status s = RepairDB(Options(), db_, &report);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(static_cast<uint64_t>(kPhases - 1), report.segments_kept);
    EXPECT_EQ(1u, report.logs_replayed);
    EXPECT_EQ(0u, report.segments_salvaged + report.segments_lost +
                      report.log_regions_dropped + report.entries_dropped);
    EXPECT_EQ(0, CheckRepaired(-1));
  }
}

// A repair that fails part-way (any open, write, sync, rename in turn) never
// leaves CURRENT naming a manifest that is gone, and running it again
// brings every entry back.
TEST_F(RepairTest, AnyFailedCallLeavesCurrentValidAndARetryRepairs) {
  ASSERT_NO_FATAL_FAILURE(Build(17));
  fs::remove(db_ + "/CURRENT");
  const std::string pristine = dir_.File("pristine");
  fs::copy(db_, pristine, fs::copy_options::recursive);
  using FEnv = test::FaultInjectionEnv;
  for (FEnv::Op kind :
       {FEnv::kOpen, FEnv::kWrite, FEnv::kSync, FEnv::kRename}) {
    for (uint64_t i = 0;; i++) {
      SCOPED_TRACE("failing call " + std::to_string(i) + " of kind " +
                   std::to_string(kind));
      fs::remove_all(db_);
      fs::copy(pristine, db_, fs::copy_options::recursive);
      FEnv env(Env::Default());
      env.InjectErrors(kind, nullptr, /*succeed_first=*/i, /*fail_count=*/1);
      Options options;
      options.env = &env;
      const Status s = RepairDB(options, db_);
      const bool injected = env.injected_error_count() > 0;
      env.ClearInjectedErrors();
      if (!injected) {
        ASSERT_TRUE(s.ok()) << s.ToString();
        break;
      }
      if (fs::exists(db_ + "/CURRENT")) {
        std::ifstream in(db_ + "/CURRENT");
        std::string name;
        std::getline(in, name);
        EXPECT_TRUE(fs::exists(db_ + "/" + name))
            << "CURRENT names " << name << ", which is gone";
      }
      const Status retry = RepairDB(Options(), db_);
      ASSERT_TRUE(retry.ok()) << retry.ToString();
      EXPECT_EQ(0, CheckRepaired(-1));
    }
  }
}

TEST_F(RepairTest, DamagedDataFilesLoseOnlyTheirOwnEntries) {
  struct Case {
    std::string name;
    int phase;  // whose file is damaged
  };
  const std::vector<Case> cases = {{"corrupt segment block", 0},
                                   {"corrupt segment block", 2},
                                   {"truncated segment", 1},
                                   {"corrupt log record", kPhases - 1}};
  for (uint64_t seed : test::TestSeeds()) {
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name + " of phase " + std::to_string(c.phase) + ", seed " +
                   std::to_string(seed));
      fs::remove_all(db_);
      phases_.clear();
      files_.clear();
      ASSERT_NO_FATAL_FAILURE(Build(seed));
      const std::string file = files_[static_cast<size_t>(c.phase)];
      const uint64_t size = fs::file_size(file);
      if (c.name == "truncated segment") {
        fs::resize_file(file, size / 2);
      } else {
        FlipByte(file, size / 3);
      }
      RepairReport report;
      Status s = RepairDB(Options(), db_, &report);
      ASSERT_TRUE(s.ok()) << s.ToString();
      // The damaged file is kept, in lost/.
      const std::string base = fs::path(file).filename().string();
      EXPECT_TRUE(fs::exists(db_ + "/lost/" + base));
      if (c.name == "corrupt segment block") {
        EXPECT_EQ(1u, report.segments_salvaged);
        EXPECT_GT(report.entries_dropped, 0u);
      } else if (c.name == "truncated segment") {
        // The blocks before the cut are salvaged, the rest counted.
        EXPECT_EQ(1u, report.segments_salvaged);
        EXPECT_EQ(0u, report.segments_lost);
        EXPECT_GT(report.entries_dropped, 0u);
      } else {
        EXPECT_GE(report.log_regions_dropped, 1u);
        EXPECT_GT(report.log_records_replayed, 0u);
      }
      const int fallbacks = CheckRepaired(c.phase);
      EXPECT_GT(fallbacks, 0);
      if (c.name != "corrupt log record") {
        EXPECT_LE(static_cast<uint64_t>(fallbacks), report.entries_dropped);
      }
    }
  }
}

// Three damaged segments: a byte flipped in a data block in the middle of
// one, a byte flipped in the footer of another (its index cannot be found),
// and the third cut to half its size (no footer, no index, the block at the
// cut incomplete). Every entry of every block whose checksum holds comes back
// with its own sequence number, so that newer versions in other segments
// still win, and the report counts exactly the entries of the other blocks.
TEST_F(RepairTest, DamagedSegmentsGiveBackEveryReadableBlock) {
  ASSERT_NO_FATAL_FAILURE(DamageThreeSegmentsAndRepair(29));
}

// The same with values compressed one by one (format version 3): the
// blocks found without the index are decoded with the dictionary the
// properties name.
TEST_F(RepairTest, DamagedSegmentsOfCompressedValuesGiveBackEveryReadableBlock) {
  level0_compression_ = CompressionType::kLZ4Values;
  ASSERT_NO_FATAL_FAILURE(DamageThreeSegmentsAndRepair(33));
}

// Without its value dictionary a segment's compressed values cannot be
// read: repair loses the segment's entries, counted, and takes none of them
// as they are stored.
TEST_F(RepairTest, SegmentWithoutItsValueDictionaryIsLostNotMisread) {
  level0_compression_ = CompressionType::kLZ4Values;
  ASSERT_NO_FATAL_FAILURE(Build(35));
  const std::string& file = files_[0];
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(Env::Default()->NewRandomAccessFile(file, &f).ok());
  std::unique_ptr<SegmentReader> reader;
  ASSERT_TRUE(SegmentReader::Open(SegmentReaderOptions(), file, std::move(f),
                                  fs::file_size(file), &reader)
                  .ok());
  const SegmentProperties props = reader->properties();
  reader.reset();
  ASSERT_TRUE(props.has_value_dictionary);
  ASSERT_GT(props.value_dictionary_size, 100u);
  FlipByte(file, props.value_dictionary_offset + 50);
  RepairReport report;
  Status s = RepairDB(Options(), db_, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(1u, report.segments_lost);
  EXPECT_EQ(props.num_entries, report.entries_dropped);
  // Nothing of phase 0 survives; the other phases are whole.
  ASSERT_NO_FATAL_FAILURE(ExpectExactly({{0, {}}}));
}

// With the manifest gone as well, nothing records how many entries a segment
// without its footer held: the report says so instead of guessing.
TEST_F(RepairTest, TruncatedSegmentWithNoManifestHasAnUnknownLoss) {
  ASSERT_NO_FATAL_FAILURE(Build(31));
  const std::string& file = files_[1];
  const uint64_t size = fs::file_size(file);
  std::map<int, std::set<std::string>> survivors;
  for (const DataBlock& b : DataBlocksOf(file)) {
    if (b.offset + b.size + kBlockTrailerSize <= size / 2) {
      survivors[1].insert(b.keys.begin(), b.keys.end());
    }
  }
  ASSERT_FALSE(survivors[1].empty());
  ASSERT_LT(survivors[1].size(), phases_[1].size());
  fs::resize_file(file, size / 2);
  for (const std::string& m : FilesNamed(db_, "MANIFEST-")) fs::remove(m);
  fs::remove(db_ + "/CURRENT");
  RepairReport report;
  Status s = RepairDB(Options(), db_, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(1u, report.segments_salvaged);
  EXPECT_EQ(1u, report.segments_with_unknown_loss);
  EXPECT_EQ(0u, report.entries_dropped);
  ASSERT_NO_FATAL_FAILURE(ExpectExactly(survivors));
}

// Compactions leave older data in newer-numbered files at deeper levels;
// repair must still let the newest value of every key win.
TEST_F(RepairTest, DatabaseWithManyLevelsKeepsNewestValues) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    fs::remove_all(db_);
    Options options = test::TinyCompactionOptions();
    options.create_if_missing = true;
    std::map<std::string, std::optional<std::string>> model;
    {
      std::unique_ptr<DB> db;
      ASSERT_TRUE(DB::Open(options, db_, &db).ok());
      Random rnd(static_cast<uint32_t>(seed));
      for (int i = 0; i < 6000; i++) {
        const std::string key = Key(static_cast<int>(rnd.Uniform(800)));
        if (rnd.Uniform(5) == 0) {
          model[key] = std::nullopt;
          ASSERT_TRUE(db->Delete(WriteOptions(), key).ok());
        } else {
          model[key] = "v" + std::to_string(i) + test::RandomString(&rnd, 40);
          ASSERT_TRUE(db->Put(WriteOptions(), key, *model[key]).ok());
        }
      }
      // Compactions run in the background: on a loaded machine none may
      // have run yet when the writes return.
      ASSERT_NO_FATAL_FAILURE(test::WaitForBackgroundWork(db.get()));
      int deep = 0;
      for (const SegmentInfo& s : db->GetSegmentInfo()) deep += s.level > 0;
      ASSERT_GT(deep, 0) << "the test needs segments below level 0";
    }
    fs::remove(db_ + "/CURRENT");
    RepairReport report;
    Status s = RepairDB(options, db_, &report);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::unique_ptr<DB> db;
    s = DB::Open(options, db_, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (const auto& [key, value] : model) {
      std::string got;
      s = db->Get(ReadOptions(), key, &got);
      if (value.has_value()) {
        EXPECT_TRUE(s.ok()) << key << ": " << s.ToString();
        EXPECT_EQ(*value, got) << key;
      } else {
        EXPECT_TRUE(s.IsNotFound()) << key << " was deleted, reads " << got;
      }
    }
  }
}

// A compaction that drops a tombstone with the value it deleted leaves the
// value's segment on disk while an iterator still reads the version holding
// it; a crash then leaves it there. The manifest records that segment as
// removed, and repair, which reads every segment in the directory, must set
// it aside rather than bring the deleted value back.
TEST_F(RepairTest, SegmentsTheManifestRemovedAreSetAside) {
  Options options;
  options.create_if_missing = true;
  std::vector<std::string> leftovers;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, db_, &db).ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "deleted", "old value").ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "kept", "value").ok());
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    std::unique_ptr<Iterator> pin(db->NewIterator(ReadOptions()));
    ASSERT_TRUE(db->Delete(WriteOptions(), "deleted").ok());
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    leftovers = SaveLeftovers(db.get(), dir_.File("leftovers"));
    pin.reset();
  }
  ASSERT_NO_FATAL_FAILURE(
      RepairAfterCrash(options, leftovers, dir_.File("leftovers")));
  for (const std::string& name : leftovers) {
    EXPECT_TRUE(fs::exists(db_ + "/lost/" + name)) << name;
  }
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, db_, &db).ok());
  std::string got;
  EXPECT_TRUE(db->Get(ReadOptions(), "deleted", &got).IsNotFound()) << got;
  ASSERT_TRUE(db->Get(ReadOptions(), "kept", &got).ok());
  EXPECT_EQ("value", got);
}

// Random writes, readers holding versions across compactions, and a crash
// that leaves the segments only those readers still held: repair must give
// back exactly the last state, every deleted key absent, every kept one
// with its newest value.
TEST_F(RepairTest, ReadersCompactionsAndACrashNeverBringDeletedKeysBack) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    fs::remove_all(db_);
    fs::remove_all(dir_.File("leftovers"));
    Options options = test::TinyCompactionOptions();
    std::map<std::string, std::string> model;
    std::vector<std::string> leftovers;
    {
      std::unique_ptr<DB> db;
      ASSERT_TRUE(DB::Open(options, db_, &db).ok());
      Random rnd(static_cast<uint32_t>(seed));
      std::vector<std::unique_ptr<Iterator>> readers;
      for (int i = 0; i < 5000; i++) {
        const std::string key = Key(static_cast<int>(rnd.Uniform(600)));
        const uint32_t op = rnd.Uniform(1000);
        if (op < 200) {
          model.erase(key);
          ASSERT_TRUE(db->Delete(WriteOptions(), key).ok());
        } else if (op < 210 && readers.size() < 3) {
          readers.push_back(db->NewIterator(ReadOptions()));
        } else if (op < 220 && !readers.empty()) {
          const auto n = static_cast<int>(readers.size());
          readers.erase(readers.begin() + rnd.Uniform(n));
        } else if (op < 222) {
          ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
        } else {
          model[key] = "v" + std::to_string(i) + test::RandomString(&rnd, 30);
          ASSERT_TRUE(db->Put(WriteOptions(), key, model[key]).ok());
        }
      }
      // One more reader, then every tombstone dropped with what it deleted.
      readers.push_back(db->NewIterator(ReadOptions()));
      ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
      leftovers = SaveLeftovers(db.get(), dir_.File("leftovers"));
      readers.clear();
    }
    ASSERT_NO_FATAL_FAILURE(
        RepairAfterCrash(options, leftovers, dir_.File("leftovers")));
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, db_, &db).ok());
    test::ExpectDbHolds(db.get(), model);
  }
}

// A segment moved from one level to the next as it is is removed and added
// again by one manifest record: it stays part of the database.
TEST_F(RepairTest, SegmentsMovedBetweenLevelsAreKept) {
  Options options = test::TinyCompactionOptions();
  options.level_compaction_dynamic_level_bytes = false;
  options.compression_per_level.clear();  // no rewrite for compression's sake
  options.deep_filter_policy = options.filter_policy;  // nor for the filter's
  std::map<std::string, std::string> model;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, db_, &db).ok());
    Random rnd(311);
    // Increasing keys never overlap the level below: segments move down.
    for (int i = 0; i < 20000; i++) {
      model[Key(i)] = test::RandomString(&rnd, 60);
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), model[Key(i)]).ok());
    }
    test::WaitForBackgroundWork(db.get());
    ASSERT_GT(db->GetStats().trivial_moves, 0u);
  }
  fs::remove(db_ + "/CURRENT");
  RepairReport report;
  Status s = RepairDB(options, db_, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(0u, report.segments_removed_by_manifest);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, db_, &db).ok());
  test::ExpectDbHolds(db.get(), model);
}

// A deep segment can hold an old version of one key and the newest version
// of another, so its largest sequence number beats that of a shallower
// segment holding a newer version of the first key. No order of the two is
// right for both keys; repair must still return the newest of each.
TEST_F(RepairTest, InterleavedSequenceRangesStillLetTheNewestWin) {
  Options options;
  options.create_if_missing = true;
  test::KeepEverythingInLevelZero(&options);
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, db_, &db).ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "b", "b-old").ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "z", "z-old").ok());
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());  // {b, z} deep
    ASSERT_TRUE(db->Put(WriteOptions(), "b", "b-new").ok());
    ASSERT_TRUE(db->Flush().ok());  // {b-new} in level 0
    ASSERT_TRUE(db->Put(WriteOptions(), "z", "z-new").ok());
    const Slice from("x"), to("z");
    ASSERT_TRUE(db->CompactRange(&from, &to).ok());  // {b-old, z-new} deep
    int deep = 0, shallow = 0;
    for (const SegmentInfo& s : db->GetSegmentInfo()) {
      (s.level > 0 ? deep : shallow)++;
    }
    ASSERT_EQ(1, deep);
    ASSERT_EQ(1, shallow);
  }
  fs::remove(db_ + "/CURRENT");
  RepairReport report;
  Status s = RepairDB(options, db_, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(2u, report.segments_kept);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, db_, &db).ok());
  std::string value;
  ASSERT_TRUE(db->Get(ReadOptions(), "b", &value).ok());
  EXPECT_EQ("b-new", value);
  ASSERT_TRUE(db->Get(ReadOptions(), "z", &value).ok());
  EXPECT_EQ("z-new", value);
}

TEST_F(RepairTest, RefusesAnOpenDatabase) {
  Options options;
  options.create_if_missing = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, db_, &db).ok());
  const Status s = RepairDB(Options(), db_);
  EXPECT_TRUE(s.IsIOError() && s.IsBusy()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("database is in use"))
      << s.ToString();
  EXPECT_FALSE(RepairDB(Options(), dir_.File("missing")).ok());
}

// An Env whose LockFile fails as it would on a full disk.
class FullDiskLockEnv final : public EnvWrapper {
 public:
  FullDiskLockEnv() : EnvWrapper(Env::Default()) {}
  Status LockFile(const std::string& fname,
                  std::unique_ptr<FileLock>*) override {
    return Status::IOError(fname, std::strerror(ENOSPC));
  }
};

// Only another holder of the LOCK makes a database "in use". Any other
// failure to take it (a read-only directory, a full disk, here a directory
// where LOCK should be, which fails even for root) is an IOError naming the
// cause. DB::Open, DestroyDB and RepairDB take the lock alike.
TEST_F(RepairTest, ALockThatCannotBeTakenIsAnIOErrorNotContention) {
  Options options;
  options.create_if_missing = true;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, db_, &db).ok());
  }
  const std::string lock = db_ + "/LOCK";
  ASSERT_TRUE(fs::remove(lock));
  ASSERT_TRUE(fs::create_directory(lock));
  FullDiskLockEnv full_disk;
  Options on_full_disk;
  on_full_disk.env = &full_disk;
  const std::vector<std::pair<Options, std::string>> cases = {
      {Options(), "Is a directory"}, {on_full_disk, "No space left on device"}};
  for (const auto& [opts, cause] : cases) {
    SCOPED_TRACE(cause);
    const std::string expected =
        "IO error: cannot create or lock " + lock + ": " + cause;
    std::unique_ptr<DB> db;
    Status s = DB::Open(opts, db_, &db);
    EXPECT_TRUE(s.IsIOError() && !s.IsBusy()) << s.ToString();
    EXPECT_EQ(expected, s.ToString());
    s = RepairDB(opts, db_);
    EXPECT_TRUE(s.IsIOError() && !s.IsBusy()) << s.ToString();
    EXPECT_EQ(expected, s.ToString());
    s = DestroyDB(db_, opts);
    EXPECT_TRUE(s.IsIOError() && !s.IsBusy()) << s.ToString();
    EXPECT_EQ(expected, s.ToString());
  }
  // Nothing was changed: with LOCK a file again, the database opens.
  ASSERT_TRUE(fs::remove(lock));
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(Options(), db_, &db).ok());
  // Contention is still "in use", through every entry point.
  std::unique_ptr<DB> second;
  for (const Status& s :
       {DB::Open(Options(), db_, &second), RepairDB(Options(), db_),
        DestroyDB(db_, Options())}) {
    EXPECT_TRUE(s.IsIOError() && s.IsBusy()) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find("database is in use"))
        << s.ToString();
  }
}

}  // namespace
}  // namespace bloomkv
