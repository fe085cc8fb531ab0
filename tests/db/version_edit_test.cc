// VersionEdit: the manifest record encoding — round trips, the documented
// worked example byte for byte, and malformed input.
#include "db/version_edit.h"

#include <gtest/gtest.h>

#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

std::shared_ptr<FileMetaData> File(uint64_t number, uint64_t size,
                                   uint64_t entries, const std::string& small,
                                   SequenceNumber small_seq,
                                   const std::string& large,
                                   SequenceNumber large_seq) {
  auto f = std::make_shared<FileMetaData>();
  f->number = number;
  f->file_size = size;
  f->num_entries = entries;
  f->smallest = MakeInternalKey(small, small_seq, ValueType::kValue);
  f->largest = MakeInternalKey(large, large_seq, ValueType::kValue);
  return f;
}

std::string Hex(const std::string& s) {
  std::string out;
  char buf[4];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof(buf), "%02x ", c);
    out += buf;
  }
  if (!out.empty()) out.pop_back();
  return out;
}

// The example in docs/manifest_format.md.
TEST(VersionEditTest, WorkedExampleBytes) {
  VersionEdit edit;
  edit.SetLogNumber(13);
  edit.SetNextFileNumber(14);
  edit.SetLastSequence(104);
  edit.AddFile(0, File(12, 4180, 100, "a", 5, "z", 104));
  std::string encoded;
  edit.EncodeTo(&encoded);
  EXPECT_EQ(
      "01 0d 02 0e 03 68 05 00 0c d4 20 64 "
      "09 61 01 05 00 00 00 00 00 00 09 7a 01 68 00 00 00 00 00 00",
      Hex(encoded));
}

// The log example in docs/manifest_format.md: a synced write, during a
// flush, records log 15 and the 70,000 synced bytes of log 13 closed before.
TEST(VersionEditTest, LogRecordBytes) {
  VersionEdit edit;
  edit.AddLog(13, 70000);
  edit.AddLog(15, 0);
  std::string encoded;
  edit.EncodeTo(&encoded);
  EXPECT_EQ("06 0d f0 a2 04 06 0f 00", Hex(encoded));
  VersionEdit decoded;
  ASSERT_TRUE(decoded.DecodeFrom(encoded).ok());
  ASSERT_EQ(2u, decoded.logs().size());
  EXPECT_EQ(std::make_pair(uint64_t{13}, uint64_t{70000}), decoded.logs()[0]);
  EXPECT_EQ(std::make_pair(uint64_t{15}, uint64_t{0}), decoded.logs()[1]);
}

// The range-deletion example in docs/manifest_format.md.
TEST(VersionEditTest, RangeDeletionRecordBytes) {
  VersionEdit edit;
  auto f = File(20, 4180, 100, "a", 5, "z", 104);
  f->range_deletions_applied = 104;
  edit.AddFile(1, f);
  edit.AddRangeTombstone({"a", "m", 105});
  edit.RemoveRangeTombstone(90);
  std::string encoded;
  edit.EncodeTo(&encoded);
  EXPECT_EQ(
      "09 01 14 d4 20 64 "
      "09 61 01 05 00 00 00 00 00 00 09 7a 01 68 00 00 00 00 00 00 68 "
      "07 69 01 61 01 6d 08 5a",
      Hex(encoded));
  VersionEdit decoded;
  ASSERT_TRUE(decoded.DecodeFrom(encoded).ok());
  ASSERT_EQ(1u, decoded.new_files().size());
  EXPECT_EQ(104u, decoded.new_files()[0].second->range_deletions_applied);
  ASSERT_EQ(1u, decoded.range_tombstones().size());
  EXPECT_EQ((RangeTombstone{"a", "m", 105}), decoded.range_tombstones()[0]);
  EXPECT_EQ(std::set<SequenceNumber>{90}, decoded.removed_range_tombstones());
  // A tombstone whose range is empty or reversed is not one.
  EXPECT_TRUE(decoded.DecodeFrom(std::string("\x07\x69\x01m\x01a", 6))
                  .IsCorruption());
  EXPECT_TRUE(decoded.DecodeFrom(std::string("\x07\x69\x01m\x01m", 6))
                  .IsCorruption());
}

TEST(VersionEditTest, RoundTrip) {
  Random rnd(test::TestSeeds()[0]);
  for (int iter = 0; iter < 200; iter++) {
    VersionEdit edit;
    if (rnd.OneIn(2)) edit.SetLogNumber(rnd.Next64() >> 1);
    if (rnd.OneIn(2)) edit.SetNextFileNumber(rnd.Next64() >> 1);
    if (rnd.OneIn(2)) edit.SetLastSequence(rnd.Uniform(kMaxSequenceNumber));
    for (uint64_t i = 0, n = rnd.Uniform(5); i < n; i++) {
      edit.RemoveFile(static_cast<int>(rnd.Uniform(kNumLevels)), rnd.Next64());
    }
    for (uint64_t i = 0, n = rnd.Uniform(5); i < n; i++) {
      edit.AddFile(
          static_cast<int>(rnd.Uniform(kNumLevels)),
          File(rnd.Uniform(1 << 20), rnd.Next64() >> 8, rnd.Uniform(1 << 30),
               test::RandomBytes(&rnd, rnd.Uniform(20)), rnd.Uniform(1000),
               test::RandomBytes(&rnd, 1 + rnd.Uniform(20)),
               rnd.Uniform(1000)));
    }
    for (uint64_t i = 0, n = rnd.Uniform(3); i < n; i++) {
      edit.AddLog(rnd.Next64() >> 1, rnd.OneIn(2) ? 0 : rnd.Next64() >> 4);
    }
    for (const auto& [level, f] : edit.new_files()) {
      if (rnd.OneIn(2)) f->range_deletions_applied = rnd.Uniform(1 << 30);
    }
    for (uint64_t i = 0, n = rnd.Uniform(3); i < n; i++) {
      std::string begin = test::RandomBytes(&rnd, rnd.Uniform(10));
      std::string end = begin + test::RandomBytes(&rnd, 1 + rnd.Uniform(10));
      edit.AddRangeTombstone({begin, end, rnd.Uniform(kMaxSequenceNumber)});
      if (rnd.OneIn(2)) edit.RemoveRangeTombstone(rnd.Uniform(1 << 20));
    }
    std::string a, b;
    edit.EncodeTo(&a);
    VersionEdit decoded;
    ASSERT_TRUE(decoded.DecodeFrom(a).ok());
    decoded.EncodeTo(&b);
    ASSERT_EQ(a, b);
    ASSERT_EQ(edit.DebugString(), decoded.DebugString());
  }
}

TEST(VersionEditTest, EveryTruncationAndBadTagIsCorruption) {
  VersionEdit edit;
  edit.SetLogNumber(300);
  edit.SetLastSequence(1 << 20);
  edit.RemoveFile(2, 77);
  edit.AddFile(1, File(12, 4180, 100, "apple", 5, "zebra", 104));
  edit.AddLog(301, 70000);
  auto ranged = File(13, 999, 9, "b", 6, "c", 7);
  ranged->range_deletions_applied = 7;
  edit.AddFile(2, ranged);
  edit.AddRangeTombstone({"b", "bb", 8});
  edit.RemoveRangeTombstone(3);
  std::string encoded;
  edit.EncodeTo(&encoded);
  // Every proper prefix that does not end on a field boundary is rejected;
  // the ones that do decode to fewer fields, never to garbage.
  for (size_t n = 0; n < encoded.size(); n++) {
    VersionEdit d;
    Status s = d.DecodeFrom(Slice(encoded.data(), n));
    if (s.ok()) {
      std::string again;
      d.EncodeTo(&again);
      EXPECT_EQ(encoded.substr(0, n), again) << n;
    } else {
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    }
  }
  VersionEdit d;
  EXPECT_TRUE(
      d.DecodeFrom(std::string("\x63\x01", 2)).IsCorruption());  // tag 99
  // A level beyond the last one.
  EXPECT_TRUE(d.DecodeFrom(std::string("\x04\x07\x01", 3)).IsCorruption());
  // A new-file entry whose key is too short to be an internal key.
  std::string bad;
  bad += "\x05\x00\x01\x02\x03";
  bad +=
      "\x01"
      "a";
  bad +=
      "\x01"
      "b";
  EXPECT_TRUE(d.DecodeFrom(bad).IsCorruption());
}

}  // namespace
}  // namespace bloomkv
