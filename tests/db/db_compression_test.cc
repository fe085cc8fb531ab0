// Per-level compression (Options::compression_per_level): the data blocks a
// flush or compaction writes into each level carry that level's compression,
// a segment moved between levels of different compression is rewritten, the
// data reads back after reopen, damaged blocks of either kind are
// Corruption, and Open rejects malformed settings.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "db/filename.h"
#include "table/block.h"
#include "table/format.h"
#include "table/segment_reader.h"
#include "table/value_codec.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Model = std::map<std::string, std::string>;

std::string Key(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%08llu",
                static_cast<unsigned long long>(i));
  return buf;
}

// The compression type byte of every data block of one segment file, read
// from the trailers the index points at.
std::vector<CompressionType> DataBlockCompression(const std::string& path) {
  std::vector<CompressionType> types;
  std::string data;
  EXPECT_TRUE(ReadFileToString(Env::Default(), path, &data).ok()) << path;
  if (data.size() < kFooterSize) {
    ADD_FAILURE() << path << " is too short";
    return types;
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
  if (!s.ok()) return types;
  std::unique_ptr<Iterator> it = Block::NewIterator(index);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    Slice v = it->value();
    BlockHandle h;
    EXPECT_TRUE(h.DecodeFrom(&v));
    EXPECT_LT(h.offset + h.size, data.size());
    types.push_back(static_cast<CompressionType>(
        static_cast<uint8_t>(data[h.offset + h.size])));
  }
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return types;
}

class DbCompressionTest : public testing::Test {
 protected:
  // Small levels, so that a few hundred KiB reach level 2 and deeper, sized
  // from level 1 down: each of levels 0, 1 and 2 then holds segments, which
  // is what the per-level settings below are checked against.
  static Options SmallOptions() {
    Options o = test::TinyCompactionOptions();
    o.compression = CompressionType::kLZ4;
    o.level_compaction_dynamic_level_bytes = false;
    return o;
  }

  void Open(const Options& o) { OpenAt(o, dir_.path()); }
  void OpenAt(const Options& o, const std::string& path) {
    db_.reset();
    path_ = path;
    ASSERT_TRUE(DB::Open(o, path_, &db_).ok());
  }

  // Values that LZ4 shrinks to about a quarter, so that a block written
  // with LZ4 keeps it (a block is stored raw unless compression saves 1/8).
  // sequential: keys in increasing order, which lets compaction move
  // segments down a level without rewriting them where nothing overlaps.
  void Fill(int n, bool sequential, uint64_t seed) {
    Random rnd(seed);
    for (int i = 0; i < n; i++) {
      const uint64_t k = sequential ? static_cast<uint64_t>(i)
                                    : rnd.Uniform(1u << 30);
      const std::string v = test::CompressibleString(&rnd, 0.25, 200);
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(k), v).ok());
      model_[Key(k)] = v;
    }
    ASSERT_TRUE(db_->Flush().ok());
    test::WaitForBackgroundWork(db_.get());
  }

  // Flushes a little more until a level-0 segment survives the settle: with
  // level0_compaction_trigger 2, a flush onto one level-0 segment is
  // compacted away at once, and the next one then stays.
  void FillUntilLevelZeroHoldsASegment(uint64_t seed) {
    for (int i = 0; i < 5; i++) {
      std::string n;
      ASSERT_TRUE(db_->GetProperty("bloomkv.num-files-at-level0", &n));
      if (n != "0") return;
      Fill(200, /*sequential=*/false, seed + i);
    }
    FAIL() << "no level-0 segment stayed";
  }

  // Every data block of every live segment has its level's compression;
  // returns the levels that hold segments.
  std::set<int> ExpectLevelsCompressed(
      const std::map<int, CompressionType>& want, CompressionType deeper) {
    std::set<int> levels;
    for (const SegmentInfo& seg : db_->GetSegmentInfo()) {
      levels.insert(seg.level);
      auto it = want.find(seg.level);
      const CompressionType expected = it == want.end() ? deeper : it->second;
      const std::string path = SegmentFileName(path_, seg.file_number);
      const std::vector<CompressionType> types = DataBlockCompression(path);
      EXPECT_FALSE(types.empty()) << path;
      for (size_t b = 0; b < types.size(); b++) {
        EXPECT_EQ(static_cast<int>(expected), static_cast<int>(types[b]))
            << path << " (level " << seg.level << "), data block " << b;
      }
    }
    return levels;
  }

  test::TempDir dir_{"bloomkv_compression"};
  std::string path_;  // of the open database
  std::unique_ptr<DB> db_;
  Model model_;
};

TEST_F(DbCompressionTest, DefaultLeavesLevelZeroUncompressed) {
  const Options defaults;
  ASSERT_EQ(1u, defaults.compression_per_level.size());
  EXPECT_EQ(CompressionType::kNone, defaults.compression_per_level[0]);
  EXPECT_EQ(CompressionType::kLZ4Values, defaults.compression);

  Options o = SmallOptions();  // per-level setting left at its default
  Open(o);
  Fill(6000, /*sequential=*/false, 301);
  FillUntilLevelZeroHoldsASegment(302);
  const std::set<int> levels = ExpectLevelsCompressed(
      {{0, CompressionType::kNone}}, CompressionType::kLZ4);
  EXPECT_TRUE(levels.count(0)) << "no level-0 segment to check";
  EXPECT_TRUE(levels.count(1)) << "no level-1 segment to check";
  EXPECT_TRUE(*levels.rbegin() >= 2) << "no deeper level to check";
  test::ExpectDbHolds(db_.get(), model_);

  Open(o);
  test::ExpectDbHolds(db_.get(), model_);
  // Reopened with every level compressed, old segments read as written.
  o.compression_per_level.clear();
  Open(o);
  test::ExpectDbHolds(db_.get(), model_);
}

TEST_F(DbCompressionTest, DefaultWithLevelsSizedFromTheBottom) {
  // Level 0 compacts straight into the base level, a deep one: still only
  // level 0 is raw.
  Options o = SmallOptions();
  o.level_compaction_dynamic_level_bytes = true;
  Open(o);
  Fill(6000, /*sequential=*/false, 311);
  FillUntilLevelZeroHoldsASegment(312);
  const std::set<int> levels = ExpectLevelsCompressed(
      {{0, CompressionType::kNone}}, CompressionType::kLZ4);
  EXPECT_TRUE(levels.count(0)) << "no level-0 segment to check";
  EXPECT_TRUE(*levels.rbegin() >= 2) << "no deeper level to check";
  Open(o);
  test::ExpectDbHolds(db_.get(), model_);
}

TEST_F(DbCompressionTest, EmptyListCompressesEveryLevel) {
  Options o = SmallOptions();
  o.compression_per_level.clear();
  Open(o);
  Fill(6000, /*sequential=*/false, 303);
  FillUntilLevelZeroHoldsASegment(304);
  const std::set<int> levels =
      ExpectLevelsCompressed({}, CompressionType::kLZ4);
  EXPECT_TRUE(levels.count(0));
  EXPECT_TRUE(*levels.rbegin() >= 2);
  Open(o);
  test::ExpectDbHolds(db_.get(), model_);
}

TEST_F(DbCompressionTest, ListedLevelsOverrideCompression) {
  // The reverse of the default: level 0 compressed, everything deeper raw.
  Options o = SmallOptions();
  o.compression = CompressionType::kNone;
  o.compression_per_level = {CompressionType::kLZ4};
  Open(o);
  Fill(6000, /*sequential=*/false, 305);
  FillUntilLevelZeroHoldsASegment(306);
  const std::set<int> levels = ExpectLevelsCompressed(
      {{0, CompressionType::kLZ4}}, CompressionType::kNone);
  EXPECT_TRUE(levels.count(0));
  EXPECT_TRUE(*levels.rbegin() >= 1);
  Open(o);
  test::ExpectDbHolds(db_.get(), model_);
}

TEST_F(DbCompressionTest, ZstdForTheDeepLevelsBesideLz4AndRaw) {
  // Raw level 0, LZ4 level 1, Zstandard below: three codecs in one tree,
  // every block as its level says, everything readable, before and after a
  // reopen, and smaller than the same data in LZ4.
  Options o = SmallOptions();
  o.compression_per_level = {CompressionType::kNone, CompressionType::kLZ4};
  o.compression = CompressionType::kZSTD;
  Open(o);
  Fill(6000, /*sequential=*/false, 313);
  FillUntilLevelZeroHoldsASegment(314);
  const std::set<int> levels = ExpectLevelsCompressed(
      {{0, CompressionType::kNone}, {1, CompressionType::kLZ4}},
      CompressionType::kZSTD);
  EXPECT_TRUE(levels.count(1)) << "no level-1 segment to check";
  EXPECT_TRUE(*levels.rbegin() >= 2) << "no deeper level to check";
  test::ExpectDbHolds(db_.get(), model_);
  Open(o);
  test::ExpectDbHolds(db_.get(), model_);
  // Read back by a database that would write LZ4 everywhere.
  o.compression_per_level.clear();
  o.compression = CompressionType::kLZ4;
  Open(o);
  test::ExpectDbHolds(db_.get(), model_);
}

TEST_F(DbCompressionTest, ValuesCompressedOneByOneBesideBlockCodecs) {
  // Raw level 0, LZ4 blocks in level 1, values compressed one by one below:
  // every block as its level says, everything readable before and after a
  // reopen, through a mapped Env too, and by a database that writes LZ4
  // blocks everywhere and compacts the whole tree into them.
  Options o = SmallOptions();
  o.compression_per_level = {CompressionType::kNone, CompressionType::kLZ4};
  o.compression = CompressionType::kLZ4Values;
  Open(o);
  Fill(6000, /*sequential=*/false, 321);
  FillUntilLevelZeroHoldsASegment(322);
  const std::set<int> levels = ExpectLevelsCompressed(
      {{0, CompressionType::kNone}, {1, CompressionType::kLZ4}},
      CompressionType::kLZ4Values);
  EXPECT_TRUE(*levels.rbegin() >= 2) << "no deeper level to check";
  // Only the segments of compressed values are format version 3, and their
  // dictionaries (at most 8 KiB each) are reported as memory.
  uint64_t version3 = 0;
  for (const SegmentInfo& seg : db_->GetSegmentInfo()) {
    version3 += seg.level >= 2;
    const std::string path = SegmentFileName(path_, seg.file_number);
    std::string data;
    ASSERT_TRUE(ReadFileToString(Env::Default(), path, &data).ok());
    ASSERT_GE(data.size(), kFooterSize);
    Footer footer;
    ASSERT_TRUE(footer
                    .DecodeFrom(Slice(data.data() + data.size() - kFooterSize,
                                      kFooterSize),
                                path, data.size() - kFooterSize)
                    .ok());
    EXPECT_EQ(seg.level >= 2 ? kSegmentFormatVersion3 : kSegmentFormatVersion2,
              footer.format_version)
        << path << " at level " << seg.level;
  }
  const uint64_t dictionaries =
      test::ResourceUsage(db_.get()).at("value_dictionary_bytes");
  EXPECT_GT(dictionaries, version3 * 100);
  EXPECT_LE(dictionaries, version3 * (16 << 10));
  test::ExpectDbHolds(db_.get(), model_);
  Open(o);
  test::ExpectDbHolds(db_.get(), model_);
  EnvOptions mapped;
  mapped.use_mmap_reads = true;
  std::unique_ptr<Env> mapped_env = NewPosixEnv(mapped);
  Options om = o;
  om.env = mapped_env.get();
  Open(om);
  test::ExpectDbHolds(db_.get(), model_);
  o.compression_per_level.clear();
  o.compression = CompressionType::kLZ4;
  Open(o);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  test::WaitForBackgroundWork(db_.get());
  ExpectLevelsCompressed({}, CompressionType::kLZ4);
  test::ExpectDbHolds(db_.get(), model_);
}

// The value dictionary of every live segment that has one.
std::set<std::string> ValueDictionaries(DB* db, const std::string& path) {
  std::set<std::string> dictionaries;
  Env* env = Env::Default();
  for (const SegmentInfo& seg : db->GetSegmentInfo()) {
    const std::string file = SegmentFileName(path, seg.file_number);
    uint64_t size = 0;
    std::unique_ptr<RandomAccessFile> f;
    EXPECT_TRUE(env->GetFileSize(file, &size).ok()) << file;
    EXPECT_TRUE(env->NewRandomAccessFile(file, &f).ok()) << file;
    std::unique_ptr<SegmentReader> reader;
    const Status s = SegmentReader::Open(SegmentReaderOptions(), file,
                                         std::move(f), size, &reader);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (reader != nullptr && reader->meta()->values != nullptr) {
      dictionaries.insert(reader->meta()->values->bytes().ToString());
    }
  }
  return dictionaries;
}

TEST_F(DbCompressionTest, CompactionsKeepTheirInputsValueDictionary) {
  // Values compressed one by one move through a compaction in their stored
  // form: its outputs take the dictionary of one of its inputs rather than
  // make one from their own first values (which would cost every value an
  // LZ4 decompression and compression), so compactions into levels that
  // hold segments bring no new dictionary.
  Options o = SmallOptions();
  o.compression = CompressionType::kLZ4Values;
  Open(o);
  Fill(6000, /*sequential=*/false, 331);
  const std::set<std::string> before = ValueDictionaries(db_.get(), path_);
  ASSERT_FALSE(before.empty());
  const uint64_t compactions = db_->GetStats().compactions;
  Fill(3000, /*sequential=*/false, 332);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  test::WaitForBackgroundWork(db_.get());
  EXPECT_GT(db_->GetStats().compactions, compactions + 2);
  const std::set<std::string> after = ValueDictionaries(db_.get(), path_);
  ASSERT_FALSE(after.empty());
  for (const std::string& d : after) {
    EXPECT_EQ(before.count(d), 1u)
        << "a compaction made a new dictionary of " << d.size() << " bytes";
  }
  ExpectLevelsCompressed({{0, CompressionType::kNone}},
                         CompressionType::kLZ4Values);
  test::ExpectDbHolds(db_.get(), model_);
  Open(o);
  test::ExpectDbHolds(db_.get(), model_);
}

TEST_F(DbCompressionTest, SegmentMovedIntoCompressedLevelIsRewritten) {
  // Increasing keys never overlap the level below, so compaction would move
  // level-1 segments into level 2 as they are, uncompressed; with differing
  // compression it must rewrite them instead.
  Options o = SmallOptions();
  o.compression_per_level = {CompressionType::kNone, CompressionType::kNone};
  Open(o);
  Fill(8000, /*sequential=*/true, 307);
  const std::set<int> levels = ExpectLevelsCompressed(
      {{0, CompressionType::kNone}, {1, CompressionType::kNone}},
      CompressionType::kLZ4);
  EXPECT_TRUE(*levels.rbegin() >= 2);
  test::ExpectDbHolds(db_.get(), model_);
  const uint64_t moves_with_differing = db_->GetStats().trivial_moves;
  db_.reset();

  // The control: where every level compresses alike, the same writes do
  // move segments down without rewriting them, so the check above had
  // moves to refuse.
  test::TempDir same_dir{"bloomkv_compression_same"};
  o.compression_per_level.clear();
  OpenAt(o, same_dir.path());
  model_.clear();
  Fill(8000, /*sequential=*/true, 307);
  const uint64_t moves_with_same = db_->GetStats().trivial_moves;
  EXPECT_GT(moves_with_same, moves_with_differing);
  ExpectLevelsCompressed({}, CompressionType::kLZ4);
  db_.reset();
}

TEST_F(DbCompressionTest, DamagedBlocksAreCorruptionAtEveryLevel) {
  Options o = SmallOptions();
  o.compression_per_level = {CompressionType::kNone, CompressionType::kNone};
  Open(o);
  Fill(6000, /*sequential=*/false, 309);
  FillUntilLevelZeroHoldsASegment(310);
  // One segment of each compression: damage a byte in its first data
  // block's payload, and read everything back from a fresh open (no cached
  // blocks).
  std::map<CompressionType, uint64_t> victims;
  for (const SegmentInfo& seg : db_->GetSegmentInfo()) {
    const CompressionType c = seg.level < 2 ? CompressionType::kNone
                                            : CompressionType::kLZ4;
    victims.emplace(c, seg.file_number);
  }
  ASSERT_EQ(2u, victims.size());
  db_.reset();
  for (const auto& [compression, number] : victims) {
    SCOPED_TRACE(compression == CompressionType::kLZ4 ? "lz4" : "none");
    const std::string path = SegmentFileName(dir_.path(), number);
    ASSERT_EQ(compression, DataBlockCompression(path).at(0));
    std::string data;
    ASSERT_TRUE(ReadFileToString(Env::Default(), path, &data).ok());
    const std::string original = data;
    data[10] ^= 0x40;
    ASSERT_TRUE(WriteStringToFile(Env::Default(), data, path, /*sync=*/false).ok());

    ASSERT_TRUE(DB::Open(o, dir_.path(), &db_).ok());
    std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
    EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
    EXPECT_NE(std::string::npos, it->status().ToString().find(
                                     SegmentFileName("", number).substr(1)))
        << it->status().ToString();
    it.reset();
    db_.reset();
    ASSERT_TRUE(WriteStringToFile(Env::Default(), original, path, /*sync=*/false).ok());
  }
  Open(o);
  test::ExpectDbHolds(db_.get(), model_);
}

TEST_F(DbCompressionTest, OpenRejectsMalformedSettings) {
  Options o = SmallOptions();
  o.compression_per_level.assign(8, CompressionType::kNone);
  Status s = DB::Open(o, dir_.path(), &db_);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();

  o.compression_per_level.assign(7, CompressionType::kNone);
  s = DB::Open(o, dir_.path(), &db_);
  EXPECT_TRUE(s.ok()) << s.ToString();
  db_.reset();

  o.compression_per_level = {CompressionType::kNone,
                             static_cast<CompressionType>(7)};
  s = DB::Open(o, dir_.path(), &db_);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
}

}  // namespace
}  // namespace bloomkv
