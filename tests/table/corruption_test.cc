// Exhaustive corruption tests: every single-byte corruption of a small
// segment, and every truncation, must give an error or exactly the right
// answers — never a crash, never a wrong value.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "bloomkv/env.h"
#include "table/format.h"
#include "table/segment_builder.h"
#include "table/segment_reader.h"
#include "table_test_util.h"
#include "util/hash.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using test::Entry;
using test::ExactFilterPolicy;
using test::MakeEntry;

const char kFileName[] = "000042.seg";

// ~20 user keys, some with two versions or a tombstone, in 3+ data blocks.
struct SmallSegment {
  std::vector<Entry> entries;
  std::vector<std::string> present;
  std::vector<std::string> absent;
  std::shared_ptr<const FilterPolicy> policy =
      std::make_shared<ExactFilterPolicy>();
  std::string file;

  explicit SmallSegment(CompressionType compression) {
    for (int i = 0; i < 20; i++) {
      const std::string k = "key" + std::to_string(100 + i * 2);
      present.push_back(k);
      absent.push_back("key" + std::to_string(101 + i * 2));
      const std::string v = std::string(12, static_cast<char>('a' + i)) + "!";
      if (i % 3 == 0) {
        entries.push_back(MakeEntry(k, 50, ValueType::kValue, v + "new"));
      }
      if (i % 5 == 4) {
        entries.push_back(MakeEntry(k, 40, ValueType::kDeletion, ""));
      }
      entries.push_back(MakeEntry(k, 10, ValueType::kValue, v));
    }
    SegmentBuilderOptions bo;
    bo.block_size = 200;
    bo.block_restart_interval = 3;
    bo.compression = compression;
    bo.filter_policy = policy;
    SegmentProperties props;
    Status s = test::BuildSegment(bo, entries, &file, &props);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_GE(props.num_data_blocks, 3u);
  }

  // The right answer at a snapshot, from the entries.
  LookupResult Expected(const std::string& k, SequenceNumber snap,
                        std::string* value) const {
    for (const Entry& e : entries) {
      ParsedInternalKey p;
      EXPECT_TRUE(ParseInternalKey(e.ikey, &p));
      if (p.user_key != Slice(k) || p.sequence > snap) continue;
      if (p.type == ValueType::kDeletion) return LookupResult::kDeleted;
      *value = e.value;
      return LookupResult::kFound;
    }
    return LookupResult::kNotFound;
  }
};

void ExpectNamesFile(const Status& s) {
  EXPECT_NE(s.message().find(kFileName), std::string::npos) << s.ToString();
}

// Checks that a reader over a (possibly corrupt) file answers every lookup
// and iteration with Corruption or exactly the right answer. With
// verify=false only memory safety and the error kind are checked.
void CheckReader(const SegmentReader& reader, const SmallSegment& seg,
                 bool verify, int* errors) {
  SegmentReadOptions ro;
  ro.verify_checksums = verify;
  for (const std::string& k : seg.present) {
    for (SequenceNumber snap : {SequenceNumber{45}, kMaxSequenceNumber}) {
      LookupResult r;
      std::string v;
      Status s = reader.Get(ro, k, KeyHash(k), snap, &r, &v, nullptr);
      if (!s.ok()) {
        ASSERT_TRUE(s.IsCorruption()) << s.ToString();
        ExpectNamesFile(s);
        ++*errors;
        continue;
      }
      if (!verify) continue;
      std::string want_v;
      const LookupResult want = seg.Expected(k, snap, &want_v);
      ASSERT_EQ(static_cast<int>(r), static_cast<int>(want)) << k;
      if (want == LookupResult::kFound) {
        ASSERT_EQ(v, want_v);
      }
    }
  }
  for (const std::string& k : seg.absent) {
    LookupResult r;
    std::string v;
    Status s =
        reader.Get(ro, k, KeyHash(k), kMaxSequenceNumber, &r, &v, nullptr);
    if (!s.ok()) {
      ASSERT_TRUE(s.IsCorruption()) << s.ToString();
      ++*errors;
      continue;
    }
    if (!verify) continue;
    ASSERT_TRUE(r == LookupResult::kNotFound ||
                r == LookupResult::kFilterNegative);
  }

  const std::vector<Entry>& e = seg.entries;
  auto it = reader.NewIterator(ro, nullptr);
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid() && i <= e.size(); it->Next(), i++) {
    if (!verify) continue;
    ASSERT_LT(i, e.size());
    ASSERT_EQ(it->key(), Slice(e[i].ikey));
    ASSERT_EQ(it->value(), Slice(e[i].value));
  }
  if (!it->status().ok()) {
    ASSERT_TRUE(it->status().IsCorruption()) << it->status().ToString();
    ExpectNamesFile(it->status());
    ++*errors;
  } else if (verify) {
    ASSERT_EQ(i, e.size());
  }
  i = e.size();
  for (it->SeekToLast(); it->Valid() && i > 0; it->Prev()) {
    i--;
    if (!verify) continue;
    ASSERT_EQ(it->key(), Slice(e[i].ikey));
    ASSERT_EQ(it->value(), Slice(e[i].value));
  }
  if (!it->status().ok()) {
    ASSERT_TRUE(it->status().IsCorruption());
  } else if (verify) {
    ASSERT_FALSE(it->Valid());
    ASSERT_EQ(i, 0u);
  }
  for (size_t j = 0; j < e.size(); j++) {
    it->Seek(e[j].ikey);
    if (verify && it->status().ok()) {
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), Slice(e[j].ikey));
      ASSERT_EQ(it->value(), Slice(e[j].value));
    }
    it->SeekForPrev(e[j].ikey);
    if (verify && it->status().ok()) {
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), Slice(e[j].ikey));
    }
  }
}

class CorruptionTest : public testing::TestWithParam<CompressionType> {};

TEST_P(CorruptionTest, IntactFileReadsCorrectly) {
  const SmallSegment seg(GetParam());
  std::unique_ptr<SegmentReader> reader;
  SegmentReaderOptions o;
  o.filter_policy = seg.policy;
  ASSERT_TRUE(test::OpenSegment(o, seg.file, &reader, nullptr, kFileName).ok());
  int errors = 0;
  CheckReader(*reader, seg, true, &errors);
  EXPECT_EQ(errors, 0);
  if (GetParam() == CompressionType::kLZ4) {
    // The LZ4 variant really exercises compressed blocks.
    EXPECT_LT(seg.file.size(),
              SmallSegment(CompressionType::kNone).file.size());
  }
}

TEST_P(CorruptionTest, EverySingleByteCorruption) {
  const SmallSegment seg(GetParam());
  int open_failures = 0;
  for (bool verify : {true, false}) {
    for (size_t pos = 0; pos < seg.file.size(); pos++) {
      for (uint8_t mask : {0x01, 0x04, 0x20, 0x80, 0xff}) {
        SCOPED_TRACE("offset=" + std::to_string(pos) +
                     " mask=" + std::to_string(mask) +
                     " verify=" + std::to_string(verify));
        std::string bad = seg.file;
        bad[pos] = static_cast<char>(bad[pos] ^ mask);
        SegmentReaderOptions o;
        o.filter_policy = seg.policy;
        std::unique_ptr<SegmentReader> reader;
        Status s = test::OpenSegment(o, bad, &reader, nullptr, kFileName);
        if (!s.ok()) {
          ASSERT_TRUE(s.IsCorruption() || s.IsNotSupported()) << s.ToString();
          ExpectNamesFile(s);
          open_failures++;
          continue;
        }
        int errors = 0;
        CheckReader(*reader, seg, verify, &errors);
        if (HasFatalFailure()) return;
        if (verify) {
          // Every byte is covered by a checksum, so a corruption that Open
          // does not notice must surface in the reads.
          ASSERT_GT(errors, 0);
        }
      }
    }
  }
  EXPECT_GT(open_failures, 0);
}

TEST_P(CorruptionTest, EveryTruncation) {
  const SmallSegment seg(GetParam());
  for (size_t len = 0; len < seg.file.size(); len++) {
    SCOPED_TRACE("length=" + std::to_string(len));
    std::unique_ptr<SegmentReader> reader;
    SegmentReaderOptions o;
    o.filter_policy = seg.policy;
    Status s = test::OpenSegment(o, seg.file.substr(0, len), &reader, nullptr,
                                 kFileName);
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    ExpectNamesFile(s);
    EXPECT_EQ(reader, nullptr);
  }
}

INSTANTIATE_TEST_SUITE_P(Compression, CorruptionTest,
                         testing::Values(CompressionType::kNone,
                                         CompressionType::kLZ4));

// Real files through Env::Default(): a round trip, then the zero-length and
// truncated files.
class RealFileTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bloomkv_table_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    Env* env = Env::Default();
    std::vector<std::string> children;
    if (env->GetChildren(dir_, &children).ok()) {
      for (const std::string& c : children) {
        env->RemoveFile(dir_ + "/" + c).PermitUncheckedError();
      }
    }
    env->RemoveDir(dir_).PermitUncheckedError();
  }

  Status OpenFile(const std::string& path,
                  const std::shared_ptr<const FilterPolicy>& policy,
                  std::unique_ptr<SegmentReader>* reader) {
    Env* env = Env::Default();
    uint64_t size;
    Status s = env->GetFileSize(path, &size);
    std::unique_ptr<RandomAccessFile> file;
    if (s.ok()) s = env->NewRandomAccessFile(path, &file);
    if (!s.ok()) return s;
    SegmentReaderOptions o;
    o.filter_policy = policy;
    return SegmentReader::Open(o, path, std::move(file), size, reader);
  }

  std::string dir_;
};

TEST_F(RealFileTest, RoundTripAndTruncations) {
  const SmallSegment seg(CompressionType::kLZ4);
  Env* env = Env::Default();
  const std::string path = dir_ + "/" + kFileName;
  {
    std::unique_ptr<WritableFile> wf;
    ASSERT_TRUE(env->NewWritableFile(path, &wf).ok());
    SegmentBuilderOptions bo;
    bo.block_size = 200;
    bo.block_restart_interval = 3;
    bo.filter_policy = seg.policy;
    SegmentBuilder builder(bo, wf.get());
    for (const Entry& e : seg.entries) {
      ASSERT_TRUE(builder.Add(e.ikey, e.value).ok());
    }
    ASSERT_TRUE(builder.Finish().ok());
    ASSERT_TRUE(wf->Sync().ok());
    ASSERT_TRUE(wf->Close().ok());
  }
  std::string contents;
  ASSERT_TRUE(ReadFileToString(env, path, &contents).ok());
  EXPECT_EQ(contents, seg.file);
  std::unique_ptr<SegmentReader> reader;
  ASSERT_TRUE(OpenFile(path, seg.policy, &reader).ok());
  int errors = 0;
  CheckReader(*reader, seg, true, &errors);
  EXPECT_EQ(errors, 0);

  for (size_t len : {size_t{0}, size_t{1}, kFooterSize - 1, kFooterSize,
                     contents.size() / 2, contents.size() - 1}) {
    SCOPED_TRACE("length=" + std::to_string(len));
    const std::string tpath = dir_ + "/trunc" + std::to_string(len) + ".seg";
    ASSERT_TRUE(
        WriteStringToFile(env, Slice(contents.data(), len), tpath, false).ok());
    Status s = OpenFile(tpath, seg.policy, &reader);
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.message().find(tpath), std::string::npos) << s.ToString();
  }
}

TEST_F(RealFileTest, ZeroLengthFile) {
  const std::string path = dir_ + "/000007.seg";
  ASSERT_TRUE(WriteStringToFile(Env::Default(), "", path, false).ok());
  std::unique_ptr<SegmentReader> reader;
  Status s = OpenFile(path, nullptr, &reader);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("000007.seg"), std::string::npos);
  EXPECT_EQ(reader, nullptr);
}

}  // namespace
}  // namespace bloomkv
