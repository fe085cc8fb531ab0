// SegmentWriter, the public writer of segments for ingestion: what it
// writes is an ordinary segment (sequence 0, the options' filter and the
// last level's compression), a bad Put changes nothing, and the file
// appears at its path only when finished.
#include "bloomkv/segment_writer.h"

#include <gtest/gtest.h>

#include <string>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "table/segment_reader.h"
#include "tests/testutil/test_util.h"
#include "util/hash.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%06d", i);
  return buf;
}

std::unique_ptr<SegmentReader> OpenReader(const Options& options,
                                          const std::string& path) {
  Env* env = Env::Default();
  uint64_t size = 0;
  std::unique_ptr<RandomAccessFile> file;
  EXPECT_TRUE(env->GetFileSize(path, &size).ok());
  EXPECT_TRUE(env->NewRandomAccessFile(path, &file).ok());
  SegmentReaderOptions ro;
  ro.filter_policy = options.filter_policy;
  std::unique_ptr<SegmentReader> reader;
  Status s = SegmentReader::Open(ro, path, std::move(file), size, &reader);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return reader;
}

TEST(SegmentWriterTest, WritesAnOrdinarySegmentWithSequenceZero) {
  test::TempDir dir;
  Options options;
  const std::string path = dir.File("a.seg");
  std::unique_ptr<SegmentWriter> w;
  ASSERT_TRUE(SegmentWriter::Open(options, path, &w).ok());
  EXPECT_FALSE(Env::Default()->FileExists(path));  // not before Finish
  for (int i = 0; i < 5000; i++) {
    ASSERT_TRUE(w->Put(Key(i), "value-" + std::to_string(i)).ok());
  }
  EXPECT_EQ(5000u, w->NumEntries());
  SegmentFileInfo info;
  ASSERT_TRUE(w->Finish(&info).ok());
  EXPECT_EQ(path, info.file_path);
  EXPECT_EQ(Key(0), info.smallest_key);
  EXPECT_EQ(Key(4999), info.largest_key);
  EXPECT_EQ(5000u, info.num_entries);
  uint64_t size = 0;
  ASSERT_TRUE(Env::Default()->GetFileSize(path, &size).ok());
  EXPECT_EQ(size, info.file_size);
  EXPECT_FALSE(Env::Default()->FileExists(path + ".tmp"));

  std::unique_ptr<SegmentReader> reader = OpenReader(options, path);
  ASSERT_NE(nullptr, reader);
  EXPECT_TRUE(reader->has_filter());
  // The last level's filter, as a database with these options writes it:
  // the default's 8-bit binary fuse filter.
  EXPECT_EQ("bloomkv.BinaryFuse8", reader->properties().filter_policy);
  EXPECT_EQ(5000u, reader->properties().num_filter_keys);
  auto it = reader->NewIterator(SegmentReadOptions(), nullptr);
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
    ParsedInternalKey k;
    ASSERT_TRUE(ParseInternalKey(it->key(), &k));
    EXPECT_EQ(Key(n), k.user_key.ToString());
    EXPECT_EQ(0u, k.sequence);
    EXPECT_EQ(ValueType::kValue, k.type);
    EXPECT_EQ("value-" + std::to_string(n), it->value().ToString());
  }
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(5000, n);
  // Every key passes the filter; an absent one almost never does.
  int positives = 0;
  for (int i = 0; i < 5000; i++) {
    EXPECT_TRUE(reader->KeyMayMatch(KeyHash(Key(i))));
    positives += reader->KeyMayMatch(KeyHash("absent" + Key(i))) ? 1 : 0;
  }
  EXPECT_LT(positives, 200);
}

TEST(SegmentWriterTest, CompressesAsTheLastLevel) {
  test::TempDir dir;
  // Values that compress well: the file is much smaller than its data with
  // LZ4 (the default for level 6), and is not without compression.
  auto write = [&](const Options& options, const std::string& name) {
    std::unique_ptr<SegmentWriter> w;
    EXPECT_TRUE(SegmentWriter::Open(options, dir.File(name), &w).ok());
    for (int i = 0; i < 2000; i++) {
      EXPECT_TRUE(w->Put(Key(i), std::string(200, 'x')).ok());
    }
    SegmentFileInfo info;
    EXPECT_TRUE(w->Finish(&info).ok());
    return info.file_size;
  };
  Options lz4;
  Options none;
  none.compression_per_level = {CompressionType::kLZ4, CompressionType::kLZ4,
                                CompressionType::kLZ4, CompressionType::kLZ4,
                                CompressionType::kLZ4, CompressionType::kLZ4,
                                CompressionType::kNone};
  const uint64_t compressed = write(lz4, "lz4.seg");
  const uint64_t raw = write(none, "none.seg");
  EXPECT_GT(raw, 2000u * 200);
  EXPECT_LT(compressed * 4, raw);
}

TEST(SegmentWriterTest, ABadPutIsRefusedAndChangesNothing) {
  test::TempDir dir;
  Options options;
  std::unique_ptr<SegmentWriter> w;
  ASSERT_TRUE(SegmentWriter::Open(options, dir.File("a.seg"), &w).ok());
  ASSERT_TRUE(w->Put("b", "1").ok());
  EXPECT_TRUE(w->Put("a", "x").IsInvalidArgument());  // out of order
  EXPECT_TRUE(w->Put("b", "x").IsInvalidArgument());  // not strictly greater
  EXPECT_TRUE(w->Put("", "x").IsInvalidArgument());
  EXPECT_TRUE(
      w->Put(std::string(kMaxKeySize + 1, 'z'), "x").IsInvalidArgument());
  EXPECT_TRUE(
      w->Put("z", std::string(kMaxValueSize + 1, 'v')).IsInvalidArgument());
  EXPECT_EQ(1u, w->NumEntries());
  // The writer goes on as if the bad calls never happened.
  ASSERT_TRUE(w->Put("c", "2").ok());
  SegmentFileInfo info;
  ASSERT_TRUE(w->Finish(&info).ok());
  EXPECT_EQ(2u, info.num_entries);
  EXPECT_EQ("b", info.smallest_key);
  EXPECT_EQ("c", info.largest_key);
  EXPECT_TRUE(w->Put("d", "3").IsInvalidArgument());  // after Finish
}

TEST(SegmentWriterTest, AbandonAndDestructionLeaveNoFile) {
  test::TempDir dir;
  Options options;
  {
    std::unique_ptr<SegmentWriter> w;
    ASSERT_TRUE(SegmentWriter::Open(options, dir.File("a.seg"), &w).ok());
    ASSERT_TRUE(w->Put("k", "v").ok());
    w->Abandon();
    w->Abandon();  // harmless twice
  }
  {
    std::unique_ptr<SegmentWriter> w;
    ASSERT_TRUE(SegmentWriter::Open(options, dir.File("b.seg"), &w).ok());
    ASSERT_TRUE(w->Put("k", "v").ok());
  }  // destroyed unfinished
  EXPECT_TRUE(test::DatabaseFiles(dir.path()).empty());
  std::vector<std::string> children;
  ASSERT_TRUE(Env::Default()->GetChildren(dir.path(), &children).ok());
  EXPECT_TRUE(children.empty());
}

TEST(SegmentWriterTest, AnEmptySegmentIsValid) {
  test::TempDir dir;
  Options options;
  std::unique_ptr<SegmentWriter> w;
  ASSERT_TRUE(SegmentWriter::Open(options, dir.File("e.seg"), &w).ok());
  SegmentFileInfo info;
  ASSERT_TRUE(w->Finish(&info).ok());
  EXPECT_EQ(0u, info.num_entries);
  EXPECT_TRUE(info.smallest_key.empty());
  EXPECT_NE(nullptr, OpenReader(options, dir.File("e.seg")));
}

TEST(SegmentWriterTest, OpenChecksItsArguments) {
  Options options;
  std::unique_ptr<SegmentWriter> w;
  EXPECT_TRUE(SegmentWriter::Open(options, "", &w).IsInvalidArgument());
  options.block_size = 10;
  EXPECT_TRUE(
      SegmentWriter::Open(options, "/tmp/x.seg", &w).IsInvalidArgument());
  EXPECT_EQ(nullptr, w);
  Options ok;
  EXPECT_FALSE(SegmentWriter::Open(ok, "/no/such/directory/x.seg", &w).ok());
}

}  // namespace
}  // namespace bloomkv
