// Tests for segments read from real files through the POSIX Env, mapped into
// memory and read with pread: every key and every block read back the same
// way, and a truncated or damaged file is Corruption, at open or at the read
// of the damaged block, never a crash or a wrong answer.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "table/format.h"
#include "table/segment_builder.h"
#include "table/segment_reader.h"
#include "table_test_util.h"
#include "tests/testutil/test_util.h"
#include "util/cache.h"
#include "util/hash.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using test::Entry;
using test::ExactFilterPolicy;
using test::MakeEntry;

// Sorted user keys with one value each, and absent keys between them.
struct Data {
  std::vector<Entry> entries;
  std::map<std::string, std::string> values;
  std::vector<std::string> absent;
};

Data MakeData(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  Data d;
  for (int i = 0; i < n; i++) {
    char key[16];
    std::snprintf(key, sizeof(key), "key%06d", 2 * i);
    std::string value(rng() % 200, '\0');
    for (char& c : value) c = static_cast<char>('a' + rng() % (1 + rng() % 26));
    d.entries.push_back(MakeEntry(key, static_cast<SequenceNumber>(i + 1),
                                  ValueType::kValue, value));
    d.values[key] = value;
    std::snprintf(key, sizeof(key), "key%06d", 2 * i + 1);
    d.absent.push_back(key);
  }
  return d;
}

// Looks up every key of d in key order, counting the reads in *stats.
void ExpectEveryKeyFound(const SegmentReader& reader, const Data& d,
                         SegmentReadStats* stats) {
  for (const auto& [key, want] : d.values) {
    LookupResult r;
    std::string value;
    ASSERT_TRUE(reader
                    .Get(SegmentReadOptions(), key, KeyHash(key),
                         kMaxSequenceNumber, &r, &value, stats)
                    .ok());
    ASSERT_EQ(r, LookupResult::kFound) << key;
    ASSERT_EQ(value, want) << key;
  }
}

class SegmentFileTest : public testing::TestWithParam<bool> {
 protected:
  SegmentFileTest() {
    EnvOptions eo;
    eo.use_mmap_reads = GetParam();
    env_ = NewPosixEnv(eo);
  }

  // Writes contents to a file and opens it as a segment of file_size bytes
  // (the size the database recorded, which may differ from the file's).
  Status WriteAndOpen(const std::string& contents, uint64_t file_size,
                      Cache* cache, std::unique_ptr<SegmentReader>* reader) {
    const std::string path = dir_.File("000007.seg");
    Status s = WriteStringToFile(env_.get(), contents, path, false);
    std::unique_ptr<RandomAccessFile> file;
    if (s.ok()) s = env_->NewRandomAccessFile(path, &file);
    if (!s.ok()) return s;
    SegmentReaderOptions ro;
    ro.filter_policy = policy_;
    ro.block_cache = cache;
    return SegmentReader::Open(ro, path, std::move(file), file_size, reader);
  }

  std::string Build(const Data& d, CompressionType compression) {
    SegmentBuilderOptions bo;
    bo.filter_policy = policy_;
    bo.block_size = 512;
    bo.compression = compression;
    std::string contents;
    EXPECT_TRUE(test::BuildSegment(bo, d.entries, &contents).ok());
    return contents;
  }

  std::shared_ptr<const FilterPolicy> policy_ =
      std::make_shared<ExactFilterPolicy>();
  std::unique_ptr<Env> env_;
  test::TempDir dir_;
};

INSTANTIATE_TEST_SUITE_P(ReadModes, SegmentFileTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Mmap" : "Pread";
                         });

TEST_P(SegmentFileTest, EveryKeyAndEveryEntry) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Data d = MakeData(seed, 1500);
    for (CompressionType c : {CompressionType::kNone, CompressionType::kLZ4}) {
      const std::string contents = Build(d, c);
      // Without a cache every lookup reads its block; with a small one most
      // do, and some are served from blocks read before.
      for (size_t cache_size : {size_t{0}, size_t{16} << 10}) {
        std::unique_ptr<Cache> cache;
        if (cache_size > 0) cache = std::make_unique<Cache>(cache_size, 0);
        std::unique_ptr<SegmentReader> reader;
        ASSERT_TRUE(
            WriteAndOpen(contents, contents.size(), cache.get(), &reader).ok());
        SegmentReadStats stats;
        for (int pass = 0; pass < 2; pass++) {
          for (const auto& [key, want] : d.values) {
            LookupResult r;
            std::string value;
            ASSERT_TRUE(reader
                            ->Get(SegmentReadOptions(), key, KeyHash(key),
                                  kMaxSequenceNumber, &r, &value, &stats)
                            .ok());
            ASSERT_EQ(r, LookupResult::kFound) << key;
            ASSERT_EQ(value, want) << key;
          }
        }
        EXPECT_GT(stats.data_blocks_read, 0u);
        for (const std::string& key : d.absent) {
          LookupResult r;
          std::string value;
          ASSERT_TRUE(reader
                          ->Get(SegmentReadOptions(), key, KeyHash(key),
                                kMaxSequenceNumber, &r, &value, nullptr)
                          .ok());
          ASSERT_EQ(r, LookupResult::kFilterNegative) << key;
        }
        auto it = reader->NewIterator(SegmentReadOptions(), nullptr);
        size_t i = 0;
        for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
          ASSERT_LT(i, d.entries.size());
          ASSERT_EQ(it->key(), Slice(d.entries[i].ikey));
          ASSERT_EQ(it->value(), Slice(d.entries[i].value));
        }
        ASSERT_TRUE(it->status().ok()) << it->status().ToString();
        EXPECT_EQ(i, d.entries.size());
      }
    }
  }
}

// A file cut anywhere loses its footer: opening it is Corruption, both with
// the size the file has now and with the size the database recorded (reads
// past the end of a mapping come back short, like pread's).
TEST_P(SegmentFileTest, TruncatedFileIsCorruptionAtOpen) {
  const std::string contents = Build(MakeData(1, 300), CompressionType::kLZ4);
  std::vector<size_t> cuts = {0,
                              1,
                              kFooterSize - 1,
                              kFooterSize,
                              contents.size() - kFooterSize - 1,
                              contents.size() - kFooterSize,
                              contents.size() - 1};
  for (size_t cut = 100; cut < contents.size(); cut += contents.size() / 17) {
    cuts.push_back(cut);
  }
  for (size_t cut : cuts) {
    const std::string prefix = contents.substr(0, cut);
    for (uint64_t size : {uint64_t{cut}, uint64_t{contents.size()}}) {
      std::unique_ptr<SegmentReader> reader;
      const Status s = WriteAndOpen(prefix, size, nullptr, &reader);
      EXPECT_TRUE(s.IsCorruption())
          << "cut " << cut << " size " << size << ": " << s.ToString();
      EXPECT_NE(s.message().find("000007.seg"), std::string::npos)
          << s.ToString();
    }
  }
}

// A flipped byte in a data block is Corruption for the lookups that read
// that block (naming the file and the block's offset), and every other
// lookup still gets its value, with and without a block cache.
TEST_P(SegmentFileTest, DamagedDataBlockIsCorruptionOnRead) {
  const Data d = MakeData(2, 400);
  for (CompressionType c : {CompressionType::kNone, CompressionType::kLZ4}) {
    const std::string contents = Build(d, c);
    // Data blocks come first; the properties block follows them.
    Footer footer;
    const Slice tail(contents.data() + contents.size() - kFooterSize,
                     kFooterSize);
    ASSERT_TRUE(footer.DecodeFrom(tail, "x", 0).ok());
    const size_t data_end = static_cast<size_t>(
        std::min({footer.properties_handle.offset, footer.index_handle.offset,
                  footer.filter_handle.offset}));
    for (size_t pos = 3; pos < data_end; pos += data_end / 13) {
      SCOPED_TRACE("compression " + std::to_string(static_cast<int>(c)) +
                   " flipped byte " + std::to_string(pos));
      std::string damaged = contents;
      damaged[pos] ^= 0x20;
      Cache cache(1 << 20);
      // With a cache, blocks are read into it; without one, each lookup
      // reads its block for itself (borrowed from a mapping), twice over:
      // a block that failed its checksum is never taken as verified.
      for (Cache* c : {&cache, static_cast<Cache*>(nullptr)}) {
        SCOPED_TRACE(c != nullptr ? "cache" : "no cache");
        std::unique_ptr<SegmentReader> reader;
        ASSERT_TRUE(WriteAndOpen(damaged, damaged.size(), c, &reader).ok());
        std::vector<int> corrupt;
        for (int pass = 0; pass < 2; pass++) {
          corrupt.push_back(0);
          for (const auto& [key, want] : d.values) {
            LookupResult r;
            std::string value;
            const Status s =
                reader->Get(SegmentReadOptions(), key, KeyHash(key),
                            kMaxSequenceNumber, &r, &value, nullptr);
            if (s.IsCorruption()) {
              EXPECT_NE(s.message().find("000007.seg"), std::string::npos);
              corrupt.back()++;
              continue;
            }
            ASSERT_TRUE(s.ok()) << s.ToString();
            ASSERT_EQ(r, LookupResult::kFound) << key;
            ASSERT_EQ(value, want) << key;
          }
        }
        EXPECT_GT(corrupt[0], 0);
        EXPECT_LT(corrupt[0], static_cast<int>(d.values.size()) / 2);
        EXPECT_EQ(corrupt[0], corrupt[1]);
      }
    }
  }
}

// Lookups without a cache read their block for themselves. From a mapping,
// a block's checksum is verified by the first lookup that reads it and
// trusted by the later ones (the mapping does not change while the file is
// open); with pread every read is verified.
TEST_P(SegmentFileTest, MappedBlocksAreVerifiedOnceThenTrusted) {
  const Data d = MakeData(3, 1500);
  for (CompressionType c : {CompressionType::kNone, CompressionType::kLZ4,
                            CompressionType::kLZ4Values}) {
    SCOPED_TRACE("compression " + std::to_string(static_cast<int>(c)));
    std::unique_ptr<SegmentReader> reader;
    const std::string contents = Build(d, c);
    ASSERT_TRUE(
        WriteAndOpen(contents, contents.size(), nullptr, &reader).ok());
    for (int pass = 0; pass < 2; pass++) {
      SegmentReadStats stats;
      ASSERT_NO_FATAL_FAILURE(ExpectEveryKeyFound(*reader, d, &stats));
      const uint64_t lookups = d.values.size();
      ASSERT_EQ(lookups, stats.data_blocks_read);
      if (!GetParam()) {
        EXPECT_EQ(0u, stats.checksums_trusted);
      } else if (pass == 0) {
        // Keys in order: each block is verified by its first key's lookup.
        const uint64_t num_blocks = reader->properties().num_data_blocks;
        ASSERT_LT(10u, num_blocks);
        EXPECT_EQ(lookups - num_blocks, stats.checksums_trusted);
      } else {
        EXPECT_EQ(lookups, stats.checksums_trusted);
      }
    }
  }
}

// With a cache that holds every block: a block stored raw in a mapping (of
// raw values, or of values compressed one by one) is
// searched where it lies, so it never takes room in the cache and, once
// verified, its lookups do not ask the cache; compressed blocks, and every
// block read with pread, go to the cache and are served from it.
TEST_P(SegmentFileTest, MappedRawBlocksStayOutOfTheCache) {
  // Values that compress, so that LZ4 blocks are stored compressed.
  Data d;
  for (int i = 0; i < 1500; i++) {
    char key[16];
    std::snprintf(key, sizeof(key), "key%06d", i);
    const std::string value(40 + i % 50, static_cast<char>('a' + i % 26));
    d.entries.push_back(MakeEntry(key, static_cast<SequenceNumber>(i + 1),
                                  ValueType::kValue, value));
    d.values[key] = value;
  }
  for (CompressionType c : {CompressionType::kNone, CompressionType::kLZ4,
                            CompressionType::kLZ4Values}) {
    SCOPED_TRACE("compression " + std::to_string(static_cast<int>(c)));
    // Values compressed one by one leave their blocks raw: in place too.
    const bool in_place = GetParam() && c != CompressionType::kLZ4;
    Cache cache(64 << 20, 0);
    std::unique_ptr<SegmentReader> reader;
    const std::string contents = Build(d, c);
    ASSERT_TRUE(WriteAndOpen(contents, contents.size(), &cache, &reader).ok());
    const uint64_t num_blocks = reader->properties().num_data_blocks;
    ASSERT_LT(10u, num_blocks);
    for (int pass = 0; pass < 2; pass++) {
      SCOPED_TRACE("pass " + std::to_string(pass));
      SegmentReadStats stats;
      ASSERT_NO_FATAL_FAILURE(ExpectEveryKeyFound(*reader, d, &stats));
      const uint64_t lookups = d.values.size();
      if (in_place) {
        EXPECT_EQ(0u, cache.TotalCharge());
        EXPECT_EQ(lookups, stats.data_blocks_read);
        // Keys in order: a block's first lookup asks the cache and
        // verifies it; the others trust it where it lies.
        EXPECT_EQ(pass == 0 ? num_blocks : 0u, stats.cache_misses);
        EXPECT_EQ(0u, stats.cache_hits);
        EXPECT_EQ(lookups - (pass == 0 ? num_blocks : 0u),
                  stats.checksums_trusted);
      } else {
        EXPECT_LT(0u, cache.TotalCharge());
        EXPECT_EQ(pass == 0 ? num_blocks : 0u, stats.data_blocks_read);
        EXPECT_EQ(pass == 0 ? num_blocks : 0u, stats.cache_misses);
        EXPECT_EQ(lookups - (pass == 0 ? num_blocks : 0u), stats.cache_hits);
      }
    }
  }
}

}  // namespace
}  // namespace bloomkv
