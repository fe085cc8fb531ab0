// Tests for WriteBatch and WriteBatchInternal: the exact encoding, round
// trips, Append, copying, application to a memtable, and rejection of every
// truncated or damaged encoding without reading out of bounds.
#include "bloomkv/write_batch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "db/memtable.h"
#include "db/write_batch_internal.h"
#include "table/internal_key.h"
#include "util/coding.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// Records the handler calls as "Put(key,value)" and "Delete(key)", with
// non-printable bytes escaped.
class Recorder final : public WriteBatch::Handler {
 public:
  void Put(const Slice& key, const Slice& value) override {
    log_ +=
        "Put(" + key.ToEscapedString() + "," + value.ToEscapedString() + ")";
    calls_++;
  }
  void Delete(const Slice& key) override {
    log_ += "Delete(" + key.ToEscapedString() + ")";
    calls_++;
  }
  void DeleteRange(const Slice& begin, const Slice& end) override {
    log_ += "DeleteRange(" + begin.ToEscapedString() + "," +
            end.ToEscapedString() + ")";
    calls_++;
  }
  const std::string& log() const { return log_; }
  uint32_t calls() const { return calls_; }

 private:
  std::string log_;
  uint32_t calls_ = 0;
};

std::string Log(const WriteBatch& batch) {
  Recorder recorder;
  Status s = batch.Iterate(&recorder);
  if (!s.ok()) return "error: " + s.ToString();
  return recorder.log();
}

std::string Hex(const Slice& s) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s.view()) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// Parses `contents` from a heap buffer of exactly its size, so that
// AddressSanitizer reports any read past its end.
Status SetContentsExact(WriteBatch* batch, const std::string& contents) {
  std::unique_ptr<char[]> exact(new char[contents.size()]);
  std::copy(contents.begin(), contents.end(), exact.get());
  return WriteBatchInternal::SetContents(batch,
                                         Slice(exact.get(), contents.size()));
}

std::string Header(uint64_t sequence, uint32_t count) {
  std::string h;
  PutFixed64(&h, sequence);
  PutFixed32(&h, count);
  return h;
}

TEST(WriteBatchTest, Empty) {
  WriteBatch batch;
  EXPECT_EQ(0u, batch.Count());
  EXPECT_EQ(kWriteBatchHeaderSize, batch.ApproximateSize());
  EXPECT_EQ(std::string(12, '\0'),
            WriteBatchInternal::Contents(&batch).ToString());
  EXPECT_EQ("", Log(batch));
}

// The worked example of docs/write_batch_format.md, byte for byte.
TEST(WriteBatchTest, EncodingMatchesTheDocumentedExample) {
  WriteBatch batch;
  batch.Put("key", "val");
  batch.Delete(std::string("k\0", 2));
  batch.Put("", "");
  WriteBatchInternal::SetSequence(&batch, 100);
  EXPECT_EQ(
      "64 00 00 00 00 00 00 00 03 00 00 00 "
      "01 03 6b 65 79 03 76 61 6c "
      "00 02 6b 00 "
      "01 00 00",
      Hex(WriteBatchInternal::Contents(&batch)));
  EXPECT_EQ(3u, batch.Count());
  EXPECT_EQ(3u, WriteBatchInternal::Count(&batch));
  EXPECT_EQ(100u, WriteBatchInternal::Sequence(&batch));
  EXPECT_EQ(28u, WriteBatchInternal::ByteSize(&batch));
  EXPECT_EQ("Put(key,val)Delete(k\\x00)Put(,)", Log(batch));
}

TEST(WriteBatchTest, LongLengthsUseMultiByteVarints) {
  WriteBatch batch;
  const std::string value(300, 'v');
  batch.Put("k", value);
  const std::string contents = WriteBatchInternal::Contents(&batch).ToString();
  ASSERT_EQ(12u + 1 + 1 + 1 + 2 + 300, contents.size());
  EXPECT_EQ("01 01 6b ac 02", Hex(Slice(contents.data() + 12, 5)));
}

TEST(WriteBatchTest, ClearAndApproximateSize) {
  WriteBatch batch;
  size_t last = batch.ApproximateSize();
  batch.Put("a", "1");
  EXPECT_GT(batch.ApproximateSize(), last);
  last = batch.ApproximateSize();
  batch.Delete("a");
  EXPECT_GT(batch.ApproximateSize(), last);
  WriteBatchInternal::SetSequence(&batch, 7);
  batch.Clear();
  EXPECT_EQ(0u, batch.Count());
  EXPECT_EQ(0u, WriteBatchInternal::Sequence(&batch));
  EXPECT_EQ(kWriteBatchHeaderSize, batch.ApproximateSize());
  EXPECT_EQ("", Log(batch));
}

TEST(WriteBatchTest, CopiesAreIndependent) {
  WriteBatch a;
  a.Put("x", "1");
  WriteBatch b = a;
  a.Delete("y");
  EXPECT_EQ("Put(x,1)Delete(y)", Log(a));
  EXPECT_EQ("Put(x,1)", Log(b));
  b = a;
  EXPECT_EQ("Put(x,1)Delete(y)", Log(b));
  WriteBatch c = std::move(b);
  EXPECT_EQ("Put(x,1)Delete(y)", Log(c));
  EXPECT_EQ(2u, c.Count());
}

TEST(WriteBatchTest, MovedFromBatchIsEmptyAndUsable) {
  WriteBatch a;
  a.Put("x", "1");
  WriteBatch b(std::move(a));
  EXPECT_EQ(0u, a.Count());  // NOLINT(bugprone-use-after-move): specified.
  EXPECT_EQ(kWriteBatchHeaderSize, a.ApproximateSize());
  a.Put("y", "2");
  EXPECT_EQ("Put(y,2)", Log(a));
  WriteBatch c;
  c = std::move(b);
  EXPECT_EQ(0u, b.Count());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ("", Log(b));
  EXPECT_EQ("Put(x,1)", Log(c));
}

TEST(WriteBatchTest, Append) {
  WriteBatch a, b;
  WriteBatchInternal::SetSequence(&a, 200);
  WriteBatchInternal::SetSequence(&b, 300);
  a.Append(b);
  EXPECT_EQ("", Log(a));
  EXPECT_EQ(0u, a.Count());
  b.Put("a", "va");
  a.Append(b);
  EXPECT_EQ("Put(a,va)", Log(a));
  EXPECT_EQ(1u, a.Count());
  b.Clear();
  b.Put("b", "vb");
  b.Delete("foo");
  a.Append(b);
  EXPECT_EQ("Put(a,va)Put(b,vb)Delete(foo)", Log(a));
  EXPECT_EQ(3u, a.Count());
  EXPECT_EQ(200u, WriteBatchInternal::Sequence(&a));  // Keeps its own.
  a.Append(a);
  EXPECT_EQ("Put(a,va)Put(b,vb)Delete(foo)Put(a,va)Put(b,vb)Delete(foo)",
            Log(a));
  EXPECT_EQ(6u, a.Count());
}

// Random batches survive Contents -> SetContents unchanged.
TEST(WriteBatchTest, RandomRoundTrip) {
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937 rnd(seed);
    auto random_bytes = [&rnd](size_t max_len) {
      std::string s(rnd() % (max_len + 1), '\0');
      for (char& c : s) c = static_cast<char>(rnd());
      return s;
    };
    WriteBatch batch;
    const int n = static_cast<int>(rnd() % 200);
    for (int i = 0; i < n; i++) {
      if (rnd() % 3 == 0) {
        batch.Delete(random_bytes(20));
      } else {
        batch.Put(random_bytes(20), random_bytes(rnd() % 10 == 0 ? 500 : 20));
      }
    }
    const SequenceNumber seq = (uint64_t{rnd()} << 24) | rnd();
    WriteBatchInternal::SetSequence(&batch, seq);
    ASSERT_EQ(static_cast<uint32_t>(n), batch.Count());

    WriteBatch copy;
    ASSERT_TRUE(
        SetContentsExact(&copy, WriteBatchInternal::Contents(&batch).ToString())
            .ok());
    EXPECT_EQ(WriteBatchInternal::Contents(&batch),
              WriteBatchInternal::Contents(&copy));
    EXPECT_EQ(seq, WriteBatchInternal::Sequence(&copy));
    EXPECT_EQ(batch.Count(), copy.Count());
    EXPECT_EQ(Log(batch), Log(copy));
  }
}

// ---------------------------------------------------------------------------
// Application to a memtable.

std::string MemTableContents(MemTable* mem) {
  std::unique_ptr<Iterator> iter(mem->NewIterator());
  std::string out;
  for (iter->SeekToFirst(); iter->Valid(); iter->Next()) {
    ParsedInternalKey ikey;
    EXPECT_TRUE(ParseInternalKey(iter->key(), &ikey));
    out += (ikey.type == ValueType::kValue ? "Put(" : "Delete(") +
           ikey.user_key.ToString() +
           (ikey.type == ValueType::kValue ? "," + iter->value().ToString()
                                           : std::string()) +
           ")@" + std::to_string(ikey.sequence) + " ";
  }
  return out;
}

TEST(WriteBatchTest, InsertIntoAssignsConsecutiveSequences) {
  MemTable* mem = new MemTable;
  mem->Ref();
  WriteBatch batch;
  batch.Put("foo", "bar");
  batch.Delete("box");
  batch.Put("baz", "boo");
  batch.Put("foo", "newer");
  WriteBatchInternal::SetSequence(&batch, 100);
  ASSERT_TRUE(WriteBatchInternal::InsertInto(&batch, mem).ok());
  EXPECT_EQ(
      "Put(baz,boo)@102 Delete(box)@101 Put(foo,newer)@103 "
      "Put(foo,bar)@100 ",
      MemTableContents(mem));
  std::string value;
  bool deleted;
  ASSERT_TRUE(mem->Get("foo", kMaxSequenceNumber, &value, &deleted));
  EXPECT_EQ("newer", value);
  mem->Unref();
}

TEST(WriteBatchTest, InsertIntoRejectsSequenceOverflow) {
  MemTable* mem = new MemTable;
  mem->Ref();
  WriteBatch batch;
  batch.Put("a", "1");
  batch.Put("b", "2");
  // The second record would get kMaxSequenceNumber + 1.
  WriteBatchInternal::SetSequence(&batch, kMaxSequenceNumber);
  EXPECT_TRUE(WriteBatchInternal::InsertInto(&batch, mem).IsInvalidArgument());
  EXPECT_TRUE(mem->Empty());
  // One record fits exactly.
  WriteBatchInternal::SetSequence(&batch, kMaxSequenceNumber - 1);
  EXPECT_TRUE(WriteBatchInternal::InsertInto(&batch, mem).ok());
  EXPECT_EQ(2u, mem->NumEntries());
  mem->Unref();
}

TEST(WriteBatchTest, InsertIntoRejectsAMiscountedBatchWholly) {
  MemTable* mem = new MemTable;
  mem->Ref();
  WriteBatch batch;
  batch.Put("a", "1");
  batch.Put("b", "2");
  WriteBatchInternal::SetCount(&batch, 1);
  EXPECT_TRUE(WriteBatchInternal::InsertInto(&batch, mem).IsCorruption());
  EXPECT_TRUE(mem->Empty());
  mem->Unref();
}

// ---------------------------------------------------------------------------
// Damaged contents.

std::string SampleContents() {
  WriteBatch batch;
  batch.Put("key", "value");
  batch.Delete(std::string("del\0", 4));
  batch.Put("", std::string(200, 'x'));  // Two-byte length varint.
  batch.Put(std::string("k\0", 2), "");
  WriteBatchInternal::SetSequence(&batch, 12345);
  return WriteBatchInternal::Contents(&batch).ToString();
}

// A failed SetContents leaves the batch as it was.
void ExpectCorruptionAndUnchanged(const std::string& contents) {
  WriteBatch batch;
  batch.Put("before", "x");
  const Status s = SetContentsExact(&batch, contents);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_EQ("Put(before,x)", Log(batch));
}

TEST(WriteBatchTest, EveryTruncationIsCorruption) {
  const std::string contents = SampleContents();
  for (size_t n = 0; n < contents.size(); n++) {
    SCOPED_TRACE("length=" + std::to_string(n));
    ExpectCorruptionAndUnchanged(contents.substr(0, n));
  }
  WriteBatch batch;
  EXPECT_TRUE(SetContentsExact(&batch, contents).ok());
}

TEST(WriteBatchTest, MalformedContentsAreCorruption) {
  using namespace std::string_literals;
  const std::string put_k = "\x01\x01k\x01v"s;
  ExpectCorruptionAndUnchanged("");
  ExpectCorruptionAndUnchanged(Header(0, 0).substr(0, 11));
  // Unknown tags.
  ExpectCorruptionAndUnchanged(Header(0, 1) + "\x02\x01k"s);
  ExpectCorruptionAndUnchanged(Header(0, 1) + "\xff\x01k"s);
  // Count disagrees with the records.
  ExpectCorruptionAndUnchanged(Header(0, 0) + put_k);
  ExpectCorruptionAndUnchanged(Header(0, 2) + put_k);
  ExpectCorruptionAndUnchanged(Header(0, 0xffffffff) + put_k);
  // Lengths past the end.
  ExpectCorruptionAndUnchanged(Header(0, 1) +
                               "\x00\x05"
                               "ab"s);
  ExpectCorruptionAndUnchanged(Header(0, 1) +
                               "\x01\x01k\x05"
                               "ab"s);
  ExpectCorruptionAndUnchanged(Header(0, 1) + "\x00\xff\xff\xff\xff\x0f"s);
  // Malformed varints: too long, or a fifth byte overflowing 32 bits.
  ExpectCorruptionAndUnchanged(Header(0, 1) + "\x00\x80\x80\x80\x80\x80\x00"s);
  ExpectCorruptionAndUnchanged(Header(0, 1) + "\x00\x80\x80\x80\x80\x10"s);
  // Sequence numbers out of range.
  ExpectCorruptionAndUnchanged(Header(kMaxSequenceNumber + 1, 0));
  ExpectCorruptionAndUnchanged(Header(kMaxSequenceNumber, 2) + put_k + put_k);

  // The limits themselves are fine.
  WriteBatch batch;
  EXPECT_TRUE(SetContentsExact(&batch, Header(0, 0)).ok());
  EXPECT_TRUE(
      SetContentsExact(&batch, Header(kMaxSequenceNumber, 1) + put_k).ok());
  EXPECT_TRUE(SetContentsExact(
                  &batch, Header(kMaxSequenceNumber - 1, 2) + put_k + put_k)
                  .ok());
  EXPECT_EQ("Put(k,v)Put(k,v)", Log(batch));
}

TEST(WriteBatchTest, ErrorNamesTheOffset) {
  using namespace std::string_literals;
  WriteBatch batch;
  const Status s =
      SetContentsExact(&batch, Header(0, 2) + "\x01\x01k\x01v"s + "\x07\x01k"s);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(std::string::npos, s.ToString().find("tag 0x07 at offset 17"))
      << s.ToString();
}

// Damaged copies of a valid batch either parse into a consistent batch or
// are rejected; none crashes or reads out of bounds (run under ASan).
TEST(WriteBatchTest, RandomDamageNeverCrashes) {
  const std::string original = SampleContents();
  for (uint32_t seed = 1; seed <= 2000; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937 rnd(seed);
    std::string contents = original;
    const int flips = 1 + static_cast<int>(rnd() % 3);
    for (int i = 0; i < flips; i++) {
      const size_t pos = kWriteBatchHeaderSize / 2 +
                         rnd() % (contents.size() - kWriteBatchHeaderSize / 2);
      contents[pos] = static_cast<char>(contents[pos] ^ (1 + rnd() % 255));
    }
    if (rnd() % 4 == 0) contents.resize(rnd() % (contents.size() + 1));
    WriteBatch batch;
    const Status s = SetContentsExact(&batch, contents);
    if (s.ok()) {
      Recorder recorder;
      ASSERT_TRUE(batch.Iterate(&recorder).ok());
      EXPECT_EQ(batch.Count(), recorder.calls());
      EXPECT_EQ(Slice(contents), WriteBatchInternal::Contents(&batch));
    } else {
      ASSERT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_EQ(0u, batch.Count());
    }
  }
}

// Arbitrary bytes after a plausible header, likewise.
TEST(WriteBatchTest, RandomGarbageNeverCrashes) {
  int accepted = 0;
  for (uint32_t seed = 1; seed <= 2000; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937 rnd(seed);
    std::string body(rnd() % 40, '\0');
    for (char& c : body) {
      // Small bytes make tags and short lengths likely.
      c = static_cast<char>(rnd() % 4 == 0 ? rnd() : rnd() % 4);
    }
    const std::string contents = Header(rnd() % 1000, rnd() % 6) + body;
    WriteBatch batch;
    const Status s = SetContentsExact(&batch, contents);
    if (s.ok()) {
      accepted++;
      Recorder recorder;
      ASSERT_TRUE(batch.Iterate(&recorder).ok());
      EXPECT_EQ(batch.Count(), recorder.calls());
    } else {
      ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    }
  }
  EXPECT_GT(accepted, 0);  // The generator does reach valid batches.
}

}  // namespace
}  // namespace bloomkv
