// Tests for the log format: log::Writer, log::Reader and the torn-tail versus
// corruption rules of docs/wal_format.md.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bloomkv/env.h"
#include "db/log_format.h"
#include "db/log_reader.h"
#include "db/log_writer.h"
#include "tests/testutil/mem_files.h"
#include "util/coding.h"
#include "util/hash.h"

namespace bloomkv {
namespace log {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using test::StringSink;
using test::StringSource;

constexpr char kFileName[] = "000007.log";

class ReportCollector : public Reader::Reporter {
 public:
  void Corruption(size_t bytes, const Status& reason) override {
    dropped_bytes += bytes;
    reasons.push_back(reason);
  }
  size_t dropped_bytes = 0;
  std::vector<Status> reasons;
};

struct ReadResult {
  std::vector<std::string> records;
  std::vector<uint64_t> offsets;  // LastRecordOffset() after each record
  ReportCollector reports;
  bool torn_tail = false;
  uint64_t torn_tail_offset = 0;
  uint64_t torn_tail_bytes = 0;
  Status status;
};

ReadResult ReadLog(std::string contents, bool verify_checksums = true,
                   uint64_t fail_at = UINT64_MAX) {
  ReadResult r;
  StringSource source(std::move(contents));
  source.set_fail_at(fail_at);
  Reader reader(&source, kFileName, &r.reports, verify_checksums);
  Slice record;
  std::string scratch;
  while (reader.ReadRecord(&record, &scratch)) {
    r.records.push_back(record.ToString());
    r.offsets.push_back(reader.LastRecordOffset());
  }
  // Reading past the end stays at the end and reports nothing new.
  EXPECT_FALSE(reader.ReadRecord(&record, &scratch));
  r.torn_tail = reader.torn_tail();
  r.torn_tail_offset = reader.torn_tail_offset();
  r.torn_tail_bytes = reader.torn_tail_bytes();
  r.status = reader.status();
  return r;
}

// Where the writer will put the header of the next record in a log of
// `size` bytes: a block tail too short for a header is skipped.
uint64_t NextRecordOffset(uint64_t size) {
  const uint64_t leftover = kBlockSize - size % kBlockSize;
  return leftover < kHeaderSize ? size + leftover : size;
}

std::string RandomBytes(std::mt19937_64* rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>((*rng)() & 0xff);
  return s;
}

// Filler whose bytes depend on n and position, so swapped or shifted
// fragments are noticed.
std::string Filler(size_t n, char salt = 'a') {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i++) {
    s[i] = static_cast<char>(salt + (i * 7 + n) % 23);
  }
  return s;
}

// One physical record, built by hand to craft sequences the writer never
// produces.
std::string Physical(uint8_t type, const std::string& payload) {
  const char type_byte = static_cast<char>(type);
  std::string out(kHeaderSize, '\0');
  EncodeFixed32(out.data(),
                BlockChecksum2(&type_byte, 1, payload.data(), payload.size()));
  EncodeFixed16(out.data() + 4, static_cast<uint16_t>(payload.size()));
  out[6] = type_byte;
  return out + payload;
}

// Writes records into a string, remembering where each one starts and ends.
struct Log {
  StringSink sink;
  Writer writer{&sink};
  std::vector<uint64_t> starts;
  std::vector<uint64_t> ends;

  void Add(const std::string& payload) {
    starts.push_back(NextRecordOffset(sink.contents().size()));
    ASSERT_TRUE(writer.AddRecord(payload).ok());
    ends.push_back(sink.contents().size());
  }
  const std::string& contents() const { return sink.contents(); }
};

void ExpectClean(const ReadResult& r) {
  EXPECT_TRUE(r.reports.reasons.empty())
      << r.reports.reasons.front().ToString();
  EXPECT_FALSE(r.torn_tail);
  EXPECT_TRUE(r.status.ok()) << r.status.ToString();
}

TEST(LogTest, EmptyLog) {
  ReadResult r = ReadLog("");
  EXPECT_TRUE(r.records.empty());
  ExpectClean(r);
}

// The worked example of docs/wal_format.md; it also pins the checksum
// definition, which is part of the on-disk format.
TEST(LogTest, WorkedExampleBytes) {
  Log log;
  log.Add("hello");
  const std::string expected(
      "\xc9\xec\x4e\x5f"  // checksum 0x5f4eecc9, little-endian
      "\x05\x00"          // length 5
      "\x01"              // kFullType
      "hello",
      12);
  EXPECT_EQ(Slice(log.contents()).ToEscapedString(),
            Slice(expected).ToEscapedString());
  const char type = kFullType;
  EXPECT_EQ(DecodeFixed32(log.contents().data()),
            BlockChecksum2(&type, 1, "hello", 5));
}

TEST(LogTest, StoredConstantsNeverChange) {
  EXPECT_EQ(kBlockSize, 32768u);
  EXPECT_EQ(kHeaderSize, 7u);
  EXPECT_EQ(kZeroType, 0);
  EXPECT_EQ(kFullType, 1);
  EXPECT_EQ(kFirstType, 2);
  EXPECT_EQ(kMiddleType, 3);
  EXPECT_EQ(kLastType, 4);
}

TEST(LogTest, RoundTripOfSizes) {
  const std::vector<size_t> sizes = {0,
                                     1,
                                     100,
                                     kBlockSize - kHeaderSize,  // fills a block
                                     kBlockSize - kHeaderSize + 1,
                                     kBlockSize,
                                     3 * kBlockSize + 17,
                                     5 << 20,
                                     0,
                                     10};
  Log log;
  for (size_t i = 0; i < sizes.size(); i++) {
    log.Add(Filler(sizes[i], static_cast<char>('a' + i)));
  }
  ReadResult r = ReadLog(log.contents());
  ExpectClean(r);
  ASSERT_EQ(r.records.size(), sizes.size());
  for (size_t i = 0; i < sizes.size(); i++) {
    SCOPED_TRACE("record " + std::to_string(i));
    EXPECT_EQ(r.records[i], Filler(sizes[i], static_cast<char>('a' + i)));
    EXPECT_EQ(r.offsets[i], log.starts[i]);
  }
}

TEST(LogTest, FragmentsOfABlockSizedRecord) {
  Log log;
  log.Add(Filler(kBlockSize));
  const std::string& c = log.contents();
  // FIRST fills block 0, LAST carries the remaining kHeaderSize bytes.
  ASSERT_EQ(c.size(), kBlockSize + kHeaderSize + kHeaderSize);
  EXPECT_EQ(c[6], kFirstType);
  EXPECT_EQ(DecodeFixed16(c.data() + 4), kBlockSize - kHeaderSize);
  EXPECT_EQ(c[kBlockSize + 6], kLastType);
  EXPECT_EQ(DecodeFixed16(c.data() + kBlockSize + 4), kHeaderSize);
}

TEST(LogTest, EmptyRecordsAcrossManyBlocks) {
  // 7-byte records leave a 1-byte tail in every block (32768 = 7 * 4681 + 1).
  Log log;
  const int n = 3 * static_cast<int>(kBlockSize / kHeaderSize) + 5;
  for (int i = 0; i < n; i++) log.Add("");
  ReadResult r = ReadLog(log.contents());
  ExpectClean(r);
  ASSERT_EQ(r.records.size(), static_cast<size_t>(n));
  for (const auto& rec : r.records) EXPECT_TRUE(rec.empty());
  EXPECT_EQ(r.offsets.back(), log.starts.back());
  EXPECT_EQ(log.contents()[kBlockSize - 1], '\0');  // padding
}

// A first record that leaves `tail` bytes in block 0, then more records.
TEST(LogTest, RecordsEndingNearBlockBoundaries) {
  for (size_t tail = 0; tail <= kHeaderSize + 4; tail++) {
    SCOPED_TRACE("tail=" + std::to_string(tail));
    Log log;
    log.Add(Filler(kBlockSize - kHeaderSize - tail));
    log.Add("foo");
    log.Add("");
    log.Add(Filler(2 * kBlockSize, 'b'));
    const std::string& c = log.contents();
    if (tail < kHeaderSize) {
      // Padded: the next header starts block 1, the tail is zeros.
      EXPECT_EQ(log.starts[1], kBlockSize);
      EXPECT_EQ(c.substr(kBlockSize - tail, tail), std::string(tail, '\0'));
    } else {
      // Room for a header: "foo" is FULL if it fits, else split (with an
      // empty FIRST fragment when tail == kHeaderSize).
      EXPECT_EQ(log.starts[1], kBlockSize - tail);
      EXPECT_EQ(static_cast<uint8_t>(c[kBlockSize - tail + 6]),
                tail >= kHeaderSize + 3 ? kFullType : kFirstType);
    }
    ReadResult r = ReadLog(c);
    ExpectClean(r);
    ASSERT_EQ(r.records.size(), 4u);
    EXPECT_EQ(r.records[0], Filler(kBlockSize - kHeaderSize - tail));
    EXPECT_EQ(r.records[1], "foo");
    EXPECT_EQ(r.records[2], "");
    EXPECT_EQ(r.records[3], Filler(2 * kBlockSize, 'b'));
    EXPECT_EQ(r.offsets, log.starts);
  }
}

TEST(LogTest, ManyRandomRecords) {
  for (uint64_t seed = 1; seed <= 5; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Log log;
    std::vector<std::string> written;
    for (int i = 0; i < 400; i++) {
      // Mostly write-batch sized, sometimes spanning several blocks.
      const size_t n = rng() % 8 == 0 ? rng() % (3 * kBlockSize) : rng() % 200;
      written.push_back(RandomBytes(&rng, n));
      log.Add(written.back());
    }
    ReadResult r = ReadLog(log.contents());
    ExpectClean(r);
    EXPECT_EQ(r.records, written);
    EXPECT_EQ(r.offsets, log.starts);
  }
}

TEST(LogTest, WriterAppendsOncePerSmallRecordAndNeverSyncs) {
  StringSink sink;
  Writer writer(&sink);
  for (int i = 0; i < 100; i++) {
    ASSERT_TRUE(writer.AddRecord(Filler(static_cast<size_t>(i * 50))).ok());
  }
  EXPECT_EQ(sink.append_calls(), 100u);
  const size_t before = sink.append_calls();
  ASSERT_TRUE(writer.AddRecord(Filler(4 << 20)).ok());
  // About one Append per block, never one per byte range or header.
  EXPECT_LE(sink.append_calls() - before, (4u << 20) / kBlockSize + 2);
  EXPECT_EQ(sink.sync_calls(), 0u);
  EXPECT_FALSE(sink.closed());
}

class FailingFile final : public WritableFile {
 public:
  Status Append(const Slice&) override {
    appends++;
    return Status::IOError("disk full");
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }
  int appends = 0;
};

TEST(LogTest, WriterErrorIsSticky) {
  FailingFile file;
  Writer writer(&file);
  Status s = writer.AddRecord("a");
  EXPECT_TRUE(s.IsIOError());
  s = writer.AddRecord("b");
  EXPECT_TRUE(s.IsIOError());
  EXPECT_EQ(file.appends, 1);  // the tail is unknown: nothing more is written
}

TEST(LogTest, ReopenAndContinue) {
  // First parts ending mid-block, exactly at a boundary, and in a block tail
  // too short for a header.
  const std::vector<size_t> first_sizes = {
      10, kBlockSize - kHeaderSize, kBlockSize - kHeaderSize - 3,
      kBlockSize - 2 * kHeaderSize, 2 * kBlockSize + 100};
  for (size_t first : first_sizes) {
    SCOPED_TRACE("first=" + std::to_string(first));
    std::string contents;
    {
      StringSink sink;
      Writer writer(&sink);
      ASSERT_TRUE(writer.AddRecord(Filler(first)).ok());
      contents = sink.contents();
    }
    const uint64_t length = contents.size();
    StringSink sink(contents);
    Writer writer(&sink, length);
    ASSERT_TRUE(writer.AddRecord("second").ok());
    ASSERT_TRUE(writer.AddRecord(Filler(kBlockSize + 5, 'x')).ok());
    ReadResult r = ReadLog(sink.contents());
    ExpectClean(r);
    ASSERT_EQ(r.records.size(), 3u);
    EXPECT_EQ(r.records[0], Filler(first));
    EXPECT_EQ(r.records[1], "second");
    EXPECT_EQ(r.records[2], Filler(kBlockSize + 5, 'x'));
    EXPECT_EQ(r.offsets[1], NextRecordOffset(length));
  }
}

// A crash in the middle of appending the last record can leave any prefix
// of it. Whatever the cut, the reader returns exactly the earlier records,
// calls no Reporter, and says the tail was torn.
TEST(LogTest, TornTailAtEveryOffsetOfTheLastRecord) {
  struct Case {
    const char* name;
    size_t before;  // bytes of the records before the last one
    size_t last;    // size of the last record
  };
  const std::vector<Case> cases = {
      {"small", 300, 200},
      {"spans a block boundary", 1000, kBlockSize + 500},
      // The last record starts with 3 bytes of block padding.
      {"starts with padding", kBlockSize - kHeaderSize - 3 - kHeaderSize - 50,
       100},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Log log;
    log.Add(Filler(50, 'p'));
    log.Add(Filler(c.before, 'q'));
    log.Add(Filler(c.last, 'r'));
    const uint64_t good_end = log.ends[1];
    const uint64_t full = log.ends[2];
    for (bool verify : {true, false}) {
      for (uint64_t cut = good_end; cut < full; cut++) {
        SCOPED_TRACE("cut=" + std::to_string(cut) +
                     " verify=" + std::to_string(verify));
        ReadResult r = ReadLog(log.contents().substr(0, cut), verify);
        ASSERT_EQ(r.records.size(), 2u);
        ASSERT_EQ(r.records[1], Filler(c.before, 'q'));
        ASSERT_TRUE(r.reports.reasons.empty())
            << r.reports.reasons.front().ToString();
        // Cutting inside the last record's block padding loses no data.
        ASSERT_EQ(r.torn_tail, cut > log.starts[2]);
        if (r.torn_tail) {
          ASSERT_EQ(r.torn_tail_offset, log.starts[2]);
          ASSERT_EQ(r.torn_tail_offset + r.torn_tail_bytes, cut);
        }
      }
    }
    ReadResult r = ReadLog(log.contents());
    ExpectClean(r);
    EXPECT_EQ(r.records.size(), 3u);
  }
}

// The final record's header made it to disk but its payload did not: the
// bytes read as zeros or as garbage. Nothing valid follows, so it is a torn
// tail, not corruption.
TEST(LogTest, DamagedFinalRecordIsATornTail) {
  for (uint64_t seed = 1; seed <= 4; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    for (size_t last : {size_t{40}, size_t{2 * kBlockSize + 3}}) {
      Log log;
      log.Add("first");
      log.Add("second");
      log.Add(Filler(last));
      std::string c = log.contents();
      const size_t payload_start = log.starts[2] + kHeaderSize + 5;
      for (size_t i = payload_start; i < c.size(); i++) {
        c[i] = seed % 2 == 0 ? '\0' : static_cast<char>(rng());
      }
      ReadResult r = ReadLog(c);
      ASSERT_EQ(r.records.size(), 2u);
      EXPECT_EQ(r.records[1], "second");
      EXPECT_TRUE(r.reports.reasons.empty())
          << r.reports.reasons.front().ToString();
      EXPECT_TRUE(r.torn_tail);
      EXPECT_EQ(r.torn_tail_offset, log.starts[2]);
      EXPECT_EQ(r.torn_tail_bytes, c.size() - log.starts[2]);
    }
  }
}

TEST(LogTest, ZeroFilledTail) {
  for (size_t zeros :
       {size_t{3}, kHeaderSize, size_t{100}, 2 * kBlockSize + 9}) {
    SCOPED_TRACE("zeros=" + std::to_string(zeros));
    Log log;
    log.Add("a");
    log.Add(Filler(kBlockSize / 2));
    const std::string c = log.contents() + std::string(zeros, '\0');
    for (bool verify : {true, false}) {
      ReadResult r = ReadLog(c, verify);
      ASSERT_EQ(r.records.size(), 2u);
      EXPECT_TRUE(r.reports.reasons.empty());
      EXPECT_TRUE(r.torn_tail);
      EXPECT_EQ(r.torn_tail_offset, log.contents().size());
      EXPECT_EQ(r.torn_tail_bytes, zeros);
    }
  }
}

// Zeros followed by a valid record cannot be a torn append.
TEST(LogTest, ZeroedRegionInTheMiddleIsCorruption) {
  Log log;
  log.Add("a");
  log.Add(Filler(3000));
  log.Add("c");
  std::string c = log.contents();
  std::fill(c.begin() + static_cast<long>(log.starts[1]),
            c.begin() + static_cast<long>(log.ends[1]), '\0');
  ReadResult r = ReadLog(c);
  EXPECT_EQ(r.records, (std::vector<std::string>{"a", "c"}));
  ASSERT_EQ(r.reports.reasons.size(), 1u);
  EXPECT_TRUE(r.reports.reasons[0].IsCorruption());
  EXPECT_NE(
      r.reports.reasons[0].message().find("zeroed record header at offset " +
                                          std::to_string(log.starts[1])),
      std::string::npos)
      << r.reports.reasons[0].ToString();
  EXPECT_EQ(r.reports.dropped_bytes, log.ends[1] - log.starts[1]);
  EXPECT_FALSE(r.torn_tail);

  // Without checksums nothing inside the block can be confirmed after the
  // damage: the reader gives up on the block, so here the damage reaches the
  // end of the file and counts as a torn tail.
  r = ReadLog(c, /*verify_checksums=*/false);
  EXPECT_EQ(r.records, std::vector<std::string>{"a"});
  EXPECT_TRUE(r.reports.reasons.empty());
  EXPECT_TRUE(r.torn_tail);
  EXPECT_EQ(r.torn_tail_offset, log.starts[1]);
}

// A flipped byte in the middle record of three: that record is reported with
// the file and the offset, the reader resynchronizes and returns the others.
TEST(LogTest, FlippedByteInMiddleRecordIsReported) {
  for (size_t size : {size_t{100}, 3 * kBlockSize}) {
    for (size_t where : {size_t{0}, size_t{4}, size_t{6}, size_t{7}, size_t{50},
                         size_t{kBlockSize + 20}}) {
      if (where >= size) continue;
      SCOPED_TRACE("size=" + std::to_string(size) +
                   " where=" + std::to_string(where));
      Log log;
      log.Add(Filler(size, 'a'));
      log.Add(Filler(size, 'b'));
      log.Add(Filler(size, 'c'));
      std::string c = log.contents();
      const uint64_t flipped = log.starts[1] + where;
      c[flipped] ^= 0x10;
      ReadResult r = ReadLog(c);
      ASSERT_EQ(r.records.size(), 2u);
      EXPECT_EQ(r.records[0], Filler(size, 'a'));
      EXPECT_EQ(r.records[1], Filler(size, 'c'));
      EXPECT_EQ(r.offsets[1], log.starts[2]);
      ASSERT_EQ(r.reports.reasons.size(), 1u);
      const Status& s = r.reports.reasons[0];
      EXPECT_TRUE(s.IsCorruption());
      EXPECT_NE(s.message().find(kFileName), std::string::npos) << s.ToString();
      // The damaged physical record is named by the offset of its header.
      const uint64_t fragment =
          size < kBlockSize
              ? log.starts[1]
              : flipped - flipped % kBlockSize +
                    (flipped / kBlockSize == log.starts[1] / kBlockSize
                         ? log.starts[1] % kBlockSize
                         : 0);
      EXPECT_NE(s.message().find("at offset " + std::to_string(fragment)),
                std::string::npos)
          << s.ToString();
      EXPECT_EQ(r.reports.dropped_bytes, log.starts[2] - log.starts[1]);
      EXPECT_FALSE(r.torn_tail);
    }
  }
}

// Single flipped bytes anywhere: the reader never crashes, never invents or
// reorders a record, and never loses one silently unless it lost only the
// end of the log.
TEST(LogTest, RandomFlipsNeverInventRecords) {
  for (uint64_t seed = 1; seed <= 20; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Log log;
    std::vector<std::string> written;
    for (int i = 0; i < 30; i++) {
      written.push_back(
          RandomBytes(&rng, rng() % 4 == 0 ? rng() % 70000 : rng() % 300));
      log.Add(written.back());
    }
    std::string c = log.contents();
    const size_t pos = rng() % c.size();
    c[pos] = static_cast<char>(c[pos] ^ (1 + rng() % 255));
    SCOPED_TRACE("pos=" + std::to_string(pos));
    ReadResult r = ReadLog(c);
    // A subsequence of what was written, in order.
    size_t w = 0;
    size_t first_missing = written.size();
    for (const auto& rec : r.records) {
      while (w < written.size() && written[w] != rec) {
        first_missing = std::min(first_missing, w);
        w++;
      }
      ASSERT_LT(w, written.size()) << "a record that was never written";
      w++;
    }
    if (w < written.size()) first_missing = std::min(first_missing, w);
    if (r.reports.reasons.empty()) {
      // Only a suffix may be gone, and only as a torn tail.
      EXPECT_EQ(r.records.size(), first_missing);
      EXPECT_EQ(r.torn_tail, first_missing < written.size());
    }
    // Damage before the last record's block is always reported.
    if (pos < log.starts.back() - log.starts.back() % kBlockSize) {
      EXPECT_FALSE(r.reports.reasons.empty());
    }
    ReadLog(c, /*verify_checksums=*/false);  // must not crash
  }
}

TEST(LogTest, ChecksumsVerifiedOnlyWhenAsked) {
  Log log;
  log.Add("first");
  log.Add("middle record");
  log.Add("third");
  std::string c = log.contents();
  c[log.starts[1] + kHeaderSize + 2] = 'X';  // payload byte

  ReadResult on = ReadLog(c, /*verify_checksums=*/true);
  EXPECT_EQ(on.records, (std::vector<std::string>{"first", "third"}));
  EXPECT_EQ(on.reports.reasons.size(), 1u);
  EXPECT_NE(on.reports.reasons[0].message().find("checksum mismatch"),
            std::string::npos);

  ReadResult off = ReadLog(c, /*verify_checksums=*/false);
  EXPECT_EQ(off.records,
            (std::vector<std::string>{"first", "miXdle record", "third"}));
  ExpectClean(off);
}

TEST(LogTest, BadLength) {
  Log log;
  log.Add("a");
  log.Add("b");
  log.Add("c");
  log.Add(Filler(kBlockSize));  // the rest of block 0 and part of block 1
  log.Add("e");
  std::string c = log.contents();
  EncodeFixed16(c.data() + log.starts[1] + 4, 0xffff);

  // With checksums the reader finds "c" by its checksum and goes on.
  ReadResult r = ReadLog(c);
  ASSERT_EQ(r.records.size(), 4u);
  EXPECT_EQ(r.records[0], "a");
  EXPECT_EQ(r.records[1], "c");
  EXPECT_TRUE(r.records[2] == Filler(kBlockSize));
  EXPECT_EQ(r.records[3], "e");
  ASSERT_EQ(r.reports.reasons.size(), 1u);
  EXPECT_NE(r.reports.reasons[0].message().find("bad record length at offset " +
                                                std::to_string(log.starts[1])),
            std::string::npos)
      << r.reports.reasons[0].ToString();
  EXPECT_EQ(r.reports.dropped_bytes, log.starts[2] - log.starts[1]);

  // Without, it drops the rest of the block and resumes at the next one,
  // where the big record's LAST fragment is dropped as well.
  r = ReadLog(c, /*verify_checksums=*/false);
  EXPECT_EQ(r.records, (std::vector<std::string>{"a", "e"}));
  ASSERT_EQ(r.reports.reasons.size(), 1u);
  EXPECT_EQ(r.reports.dropped_bytes, log.starts[4] - log.starts[1]);
}

// A damaged length in the last block that points past the end of the file
// looks like a torn append, but intact records follow it: that is damage,
// reported, and the records after it are read.
TEST(LogTest, BadLengthPastTheEndWithRecordsAfterIt) {
  Log log;
  for (int i = 0; i < 5; i++) log.Add(Filler(100, static_cast<char>('a' + i)));
  std::string c = log.contents();
  // Still within block 0, but beyond the end of the file.
  EncodeFixed16(c.data() + log.starts[1] + 4, 4000);
  ReadResult r = ReadLog(c);
  ASSERT_EQ(r.records.size(), 4u);
  EXPECT_EQ(r.records[0], Filler(100, 'a'));
  EXPECT_EQ(r.records[1], Filler(100, 'c'));
  EXPECT_EQ(r.records[3], Filler(100, 'e'));
  EXPECT_FALSE(r.torn_tail);
  ASSERT_EQ(r.reports.reasons.size(), 1u);
  EXPECT_NE(r.reports.reasons[0].message().find("bad record length"),
            std::string::npos)
      << r.reports.reasons[0].ToString();
}

TEST(LogTest, HandCraftedFragmentSequences) {
  struct Case {
    const char* name;
    std::vector<std::string> physical;
    std::vector<std::string> expected;
    size_t reports;  // with the offset of this physical record
    size_t reported_index;
    bool torn;
  };
  const std::string a = Physical(kFullType, "a");
  const std::string z = Physical(kFullType, "z");
  const std::vector<Case> cases = {
      {"FIRST without LAST mid-file",
       {a, Physical(kFirstType, "b1"), Physical(kMiddleType, "b2"), z},
       {"a", "z"},
       1,
       1,
       false},
      {"FIRST interrupted by FIRST",
       {a, Physical(kFirstType, "b1"), Physical(kFirstType, "c1"),
        Physical(kLastType, "c2")},
       {"a", "c1c2"},
       1,
       1,
       false},
      {"orphan LAST",
       {a, Physical(kLastType, "x"), z},
       {"a", "z"},
       1,
       1,
       false},
      {"orphan MIDDLE",
       {a, Physical(kMiddleType, "x"), z},
       {"a", "z"},
       1,
       1,
       false},
      {"unknown type", {a, Physical(5, "x"), z}, {"a", "z"}, 1, 1, false},
      {"type 255", {a, Physical(255, "x"), z}, {"a", "z"}, 1, 1, false},
      {"FIRST at the end", {a, Physical(kFirstType, "b1")}, {"a"}, 0, 0, true},
      {"FIRST MIDDLE at the end",
       {a, Physical(kFirstType, "b1"), Physical(kMiddleType, "b2")},
       {"a"},
       0,
       0,
       true},
      {"empty fragments",
       {Physical(kFirstType, ""), Physical(kMiddleType, ""),
        Physical(kLastType, ""), a},
       {"", "a"},
       0,
       0,
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string contents;
    std::vector<uint64_t> offsets;
    for (const auto& p : c.physical) {
      offsets.push_back(contents.size());
      contents += p;
    }
    ReadResult r = ReadLog(contents);
    EXPECT_EQ(r.records, c.expected);
    ASSERT_EQ(r.reports.reasons.size(), c.reports);
    if (c.reports > 0) {
      const std::string& m = r.reports.reasons[0].message();
      EXPECT_NE(
          m.find("at offset " + std::to_string(offsets[c.reported_index])),
          std::string::npos)
          << m;
    }
    EXPECT_EQ(r.torn_tail, c.torn);
  }
}

TEST(LogTest, NonZeroPaddingIsCorruption) {
  Log log;
  log.Add(Filler(kBlockSize - kHeaderSize - 3));
  log.Add("next");
  std::string c = log.contents();
  c[kBlockSize - 2] = 'x';
  ReadResult r = ReadLog(c);
  EXPECT_EQ(r.records.size(), 2u);
  ASSERT_EQ(r.reports.reasons.size(), 1u);
  EXPECT_NE(r.reports.reasons[0].message().find("padding at offset " +
                                                std::to_string(kBlockSize - 3)),
            std::string::npos)
      << r.reports.reasons[0].ToString();
}

TEST(LogTest, GarbageFiles) {
  for (uint64_t seed = 1; seed <= 8; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const size_t n = rng() % (3 * kBlockSize);
    const std::string garbage = RandomBytes(&rng, n);

    // Nothing valid anywhere: the whole file is one dropped tail.
    ReadResult r = ReadLog(garbage);
    EXPECT_TRUE(r.records.empty());
    EXPECT_TRUE(r.reports.reasons.empty());
    EXPECT_EQ(r.torn_tail, n > 0);
    EXPECT_EQ(r.torn_tail_bytes, n);

    // Without checksums garbage may parse as records; it must not crash.
    ReadLog(garbage, /*verify_checksums=*/false);

    // Garbage between valid records is corruption; the records around it
    // survive (the one after it starts a fresh block).
    Log log;
    log.Add("before");
    std::string c = log.contents() + garbage;
    c.resize((c.size() / kBlockSize + 1) * kBlockSize, '\0');
    const uint64_t after = c.size();
    StringSink tail(c);
    Writer writer(&tail, c.size());
    ASSERT_TRUE(writer.AddRecord("after").ok());
    r = ReadLog(tail.contents());
    EXPECT_EQ(r.records, (std::vector<std::string>{"before", "after"}));
    ASSERT_FALSE(r.reports.reasons.empty());
    EXPECT_LE(r.reports.dropped_bytes, after - log.contents().size());
    EXPECT_FALSE(r.torn_tail);
  }
}

TEST(LogTest, ReadErrorEndsReadingAndIsReported) {
  Log log;
  log.Add("a");
  log.Add(Filler(2 * kBlockSize));
  log.Add("c");
  ReadResult r = ReadLog(log.contents(), true, /*fail_at=*/kBlockSize + 10);
  EXPECT_EQ(r.records, std::vector<std::string>{"a"});
  EXPECT_TRUE(r.status.IsIOError());
  EXPECT_NE(r.status.message().find(kFileName), std::string::npos);
  ASSERT_EQ(r.reports.reasons.size(), 1u);
  EXPECT_TRUE(r.reports.reasons[0].IsIOError());
  EXPECT_FALSE(r.torn_tail);
}

TEST(LogTest, NullReporterIsAllowed) {
  Log log;
  log.Add("a");
  log.Add("b");
  log.Add("c");
  std::string c = log.contents();
  c[log.starts[1] + kHeaderSize] ^= 1;
  StringSource source(c);
  Reader reader(&source, kFileName, nullptr, true);
  Slice record;
  std::string scratch;
  std::vector<std::string> got;
  while (reader.ReadRecord(&record, &scratch)) got.push_back(record.ToString());
  EXPECT_EQ(got, (std::vector<std::string>{"a", "c"}));
}

// The real POSIX files, once: write, close, reopen for append, read back.
TEST(LogTest, PosixFilesRoundTripAndReopen) {
  Env* env = Env::Default();
  const std::string dir =
      ::testing::TempDir() + "/bloomkv_log_test_" + std::to_string(::getpid());
  ASSERT_TRUE(env->CreateDir(dir).ok());
  const std::string fname = dir + "/000001.log";
  {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(env->NewWritableFile(fname, &file).ok());
    Writer writer(file.get());
    ASSERT_TRUE(writer.AddRecord("one").ok());
    ASSERT_TRUE(writer.AddRecord(Filler(100000)).ok());
    ASSERT_TRUE(file->Sync().ok());
    ASSERT_TRUE(file->Close().ok());
  }
  {
    uint64_t size = 0;
    ASSERT_TRUE(env->GetFileSize(fname, &size).ok());
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(env->NewAppendableFile(fname, &file).ok());
    Writer writer(file.get(), size);
    ASSERT_TRUE(writer.AddRecord("three").ok());
    ASSERT_TRUE(file->Close().ok());
  }
  std::unique_ptr<SequentialFile> file;
  ASSERT_TRUE(env->NewSequentialFile(fname, &file).ok());
  ReportCollector reports;
  Reader reader(file.get(), fname, &reports, true);
  Slice record;
  std::string scratch;
  std::vector<std::string> got;
  while (reader.ReadRecord(&record, &scratch)) got.push_back(record.ToString());
  EXPECT_EQ(got, (std::vector<std::string>{"one", Filler(100000), "three"}));
  EXPECT_TRUE(reports.reasons.empty());
  EXPECT_FALSE(reader.torn_tail());
  EXPECT_TRUE(reader.status().ok());
  file.reset();
  EXPECT_TRUE(env->RemoveFile(fname).ok());
  EXPECT_TRUE(env->RemoveDir(dir).ok());
}

}  // namespace
}  // namespace log
}  // namespace bloomkv
