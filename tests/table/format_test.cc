// Tests for block handles, the footer, and block compression/checksums.
#include "table/format.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "table_test_util.h"
#include "util/coding.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

TEST(FormatTest, BlockHandleRoundTrip) {
  for (uint64_t off : {uint64_t{0}, uint64_t{1}, uint64_t{300},
                       uint64_t{1} << 40, ~uint64_t{0}}) {
    for (uint64_t size :
         {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{1} << 33}) {
      BlockHandle h{off, size};
      std::string enc;
      h.EncodeTo(&enc);
      enc.append("tail");
      Slice in(enc);
      BlockHandle d;
      ASSERT_TRUE(d.DecodeFrom(&in));
      EXPECT_EQ(d.offset, off);
      EXPECT_EQ(d.size, size);
      EXPECT_EQ(in, Slice("tail"));
      // Every truncation fails.
      for (size_t n = 0; n + 4 < enc.size(); n++) {
        Slice t(enc.data(), n);
        EXPECT_FALSE(d.DecodeFrom(&t)) << n;
      }
    }
  }
}

Footer SampleFooter() {
  Footer f;
  f.filter_handle = {100, 20};
  f.properties_handle = {125, 300};
  f.index_handle = {430, 77};
  return f;
}

TEST(FormatTest, FooterRoundTrip) {
  std::string enc;
  SampleFooter().EncodeTo(&enc);
  ASSERT_EQ(enc.size(), kFooterSize);
  // The file ends with the ASCII magic.
  EXPECT_EQ(enc.substr(kFooterSize - 8), "BLOOMSEG");
  Footer d;
  ASSERT_TRUE(d.DecodeFrom(enc, "f.seg", 1000).ok());
  EXPECT_EQ(d.filter_handle.offset, 100u);
  EXPECT_EQ(d.filter_handle.size, 20u);
  EXPECT_EQ(d.properties_handle.offset, 125u);
  EXPECT_EQ(d.properties_handle.size, 300u);
  EXPECT_EQ(d.index_handle.offset, 430u);
  EXPECT_EQ(d.index_handle.size, 77u);
  EXPECT_EQ(d.format_version, kLatestSegmentFormatVersion);
  EXPECT_EQ(d.checksum_type, ChecksumType::kXXH3Low32);
}

TEST(FormatTest, FooterBadMagic) {
  std::string enc;
  SampleFooter().EncodeTo(&enc);
  enc[kFooterSize - 1] ^= 1;
  Footer d;
  Status s = d.DecodeFrom(enc, "f.seg", 1000);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("f.seg"), std::string::npos);
  EXPECT_NE(s.message().find("magic"), std::string::npos);
}

TEST(FormatTest, FooterUnknownVersion) {
  Footer f = SampleFooter();
  f.format_version = 7;
  std::string enc;
  f.EncodeTo(&enc);
  Footer d;
  Status s = d.DecodeFrom(enc, "f.seg", 1000);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.message().find("version 7"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("f.seg"), std::string::npos);
}

TEST(FormatTest, FooterUnknownChecksumType) {
  Footer f = SampleFooter();
  f.checksum_type = static_cast<ChecksumType>(9);
  std::string enc;
  f.EncodeTo(&enc);
  Footer d;
  EXPECT_TRUE(d.DecodeFrom(enc, "f.seg", 0).IsNotSupported());
}

TEST(FormatTest, FooterEveryByteFlipDetected) {
  std::string good;
  SampleFooter().EncodeTo(&good);
  for (size_t i = 0; i < good.size(); i++) {
    std::string bad = good;
    bad[i] ^= 0x10;
    Footer d;
    EXPECT_FALSE(d.DecodeFrom(bad, "f.seg", 0).ok()) << i;
  }
  Footer d;
  EXPECT_TRUE(d.DecodeFrom(Slice(good.data(), good.size() - 1), "f.seg", 0)
                  .IsCorruption());
}

// The ReadBlock tests run against a file that copies what it reads (pread)
// and one that hands out its own bytes (a mapped file).
class ReadBlockTest : public testing::TestWithParam<test::ReadMode> {};

INSTANTIATE_TEST_SUITE_P(
    Modes, ReadBlockTest,
    testing::Values(test::ReadMode::kCopy, test::ReadMode::kInPlace),
    [](const testing::TestParamInfo<test::ReadMode>& info) {
      return test::ReadModeName(info.param);
    });

// Reads the block at handle into a string and into a BlockContents; both
// must give the same status and bytes, which are returned.
Status ReadBlockBothWays(const RandomAccessFile* src, const std::string& name,
                         const BlockHandle& handle, std::string* out) {
  Status s = ReadBlock(src, name, handle, true, out, nullptr);
  BlockContents contents;
  Status s2 = ReadBlock(src, name, handle, true, &contents, nullptr);
  EXPECT_EQ(s.ToString(), s2.ToString());
  if (s.ok()) {
    EXPECT_EQ(contents.slice().ToString(), *out);
  }
  return s;
}

// Writes raw as one block under `type` and reads it back through a file
// read in `mode`.
Status RoundTripBlock(const std::string& raw, CompressionType type,
                      test::ReadMode mode, CompressionType* used,
                      std::string* file, std::string* out) {
  std::string payload;
  *used = CompressBlock(raw, type, &payload);
  file->assign("xyz");  // the block does not start at offset 0
  file->append(payload);
  AppendBlockTrailer(payload, *used, file);
  test::StringSource src(*file, nullptr, mode);
  return ReadBlockBothWays(&src, "b.seg", BlockHandle{3, payload.size()}, out);
}

TEST_P(ReadBlockTest, CompressionRoundTrip) {
  const std::string compressible(10000, 'x');
  std::string random(10000, '\0');
  std::mt19937 rng(1);
  for (char& c : random) c = static_cast<char>(rng());
  for (CompressionType type : {CompressionType::kNone, CompressionType::kLZ4,
                               CompressionType::kZSTD}) {
    SCOPED_TRACE(CompressionTypeName(type));
    for (const std::string* raw :
         {&compressible, static_cast<const std::string*>(&random)}) {
      CompressionType used;
      std::string file, out;
      ASSERT_TRUE(
          RoundTripBlock(*raw, type, GetParam(), &used, &file, &out).ok());
      EXPECT_EQ(out, *raw);
      // Random bytes do not compress: they are stored raw.
      const bool expect_compressed =
          type != CompressionType::kNone && raw == &compressible;
      EXPECT_EQ(used, expect_compressed ? type : CompressionType::kNone);
      if (expect_compressed) {
        EXPECT_LT(file.size(), 1000u);
      }
    }
    CompressionType used;
    std::string file, out;
    ASSERT_TRUE(RoundTripBlock("", type, GetParam(), &used, &file, &out).ok());
    EXPECT_EQ(out, "");
  }
}

// A block of compressed values (kLZ4Values) is stored raw: CompressBlock
// leaves it so, a data block read marks it, and the metadata form of
// ReadBlock (a string) refuses it rather than pass it off as plain.
TEST_P(ReadBlockTest, BlocksOfCompressedValuesAreMarked) {
  const std::string raw = "a block whose values were compressed one by one";
  std::string payload;
  EXPECT_EQ(CompressionType::kNone,
            CompressBlock(raw, CompressionType::kLZ4Values, &payload));
  EXPECT_EQ(payload, raw);
  for (CompressionType type :
       {CompressionType::kNone, CompressionType::kLZ4Values}) {
    SCOPED_TRACE(CompressionTypeName(type));
    std::string file = "xyz" + payload;
    AppendBlockTrailer(payload, type, &file);
    test::StringSource src(file, nullptr, GetParam());
    const BlockHandle h{3, payload.size()};
    BlockContents contents;
    ASSERT_TRUE(ReadBlock(&src, "v.seg", h, true, &contents, nullptr).ok());
    EXPECT_EQ(contents.slice().ToString(), raw);
    EXPECT_EQ(contents.values_compressed(),
              type == CompressionType::kLZ4Values);
    char scratch[256];
    BlockContents transient;
    TransientSource source;
    ASSERT_TRUE(ReadTransientBlock(&src, "v.seg", h, true, scratch,
                                   sizeof(scratch), &transient, nullptr,
                                   &source)
                    .ok());
    EXPECT_EQ(transient.slice().ToString(), raw);
    EXPECT_EQ(transient.values_compressed(),
              type == CompressionType::kLZ4Values);
    std::string out;
    const Status s = ReadBlock(&src, "v.seg", h, true, &out, nullptr);
    if (type == CompressionType::kNone) {
      EXPECT_TRUE(s.ok()) << s.ToString();
    } else {
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(s.ToString().find("v.seg"), std::string::npos);
    }
  }
}

// Blocks are read into a buffer on the stack or the heap depending on their
// size; every size around the switch, stored raw or compressed, reads back
// whole, also into an output string that held a larger block before.
TEST_P(ReadBlockTest, SizesAroundTheReadBufferSwitch) {
  std::mt19937 rng(5);
  std::string out(50000, '#');
  for (size_t size : {size_t{0}, size_t{1}, size_t{4096}, size_t{8180},
                      size_t{8186}, size_t{8187}, size_t{8188}, size_t{8192},
                      size_t{8200}, size_t{16384}, size_t{40000}}) {
    for (CompressionType type :
         {CompressionType::kNone, CompressionType::kLZ4}) {
      std::string raw(size, '\0');
      // Half random, half repeated: LZ4 keeps it, and the raw store works.
      for (size_t i = 0; i < size; i++) {
        raw[i] = i < size / 2 ? static_cast<char>(rng()) : 'r';
      }
      CompressionType used;
      std::string file;
      ASSERT_TRUE(
          RoundTripBlock(raw, type, GetParam(), &used, &file, &out).ok())
          << size;
      ASSERT_EQ(out, raw) << size << " " << static_cast<int>(type);
    }
  }
}

TEST_P(ReadBlockTest, ChecksumMismatchNamesFileAndOffset) {
  CompressionType used;
  std::string file, out;
  ASSERT_TRUE(RoundTripBlock(std::string(500, 'q'), CompressionType::kNone,
                             GetParam(), &used, &file, &out)
                  .ok());
  file[10] ^= 1;
  test::StringSource src(file, nullptr, GetParam());
  Status s =
      ReadBlock(&src, "000012.seg", BlockHandle{3, 500}, true, &out, nullptr);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.message(),
            "000012.seg: block checksum mismatch at offset 3 (size 500)");
  // Without verification the flipped byte goes unnoticed.
  EXPECT_TRUE(
      ReadBlock(&src, "000012.seg", BlockHandle{3, 500}, false, &out, nullptr)
          .ok());
}

TEST_P(ReadBlockTest, TruncatedBlockRead) {
  test::StringSource src("0123456789", nullptr, GetParam());
  std::string out;
  uint64_t bytes = 0;
  Status s = ReadBlock(&src, "t.seg", BlockHandle{4, 10}, true, &out, &bytes);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("t.seg"), std::string::npos);
  EXPECT_EQ(bytes, 6u);
}

// A well-checksummed block whose LZ4 payload lies: bad size header, bad
// stream, unknown compression type. All must be Corruption, not a crash.
TEST_P(ReadBlockTest, MalformedCompressedPayloads) {
  std::string lz4;
  ASSERT_EQ(CompressBlock(std::string(4000, 'a'), CompressionType::kLZ4, &lz4),
            CompressionType::kLZ4);
  auto read = [this](const std::string& payload, uint8_t type) {
    std::string file = payload;
    AppendBlockTrailer(payload, static_cast<CompressionType>(type), &file);
    test::StringSource src(file, nullptr, GetParam());
    std::string out;
    return ReadBlockBothWays(&src, "m.seg", BlockHandle{0, payload.size()},
                             &out);
  };
  EXPECT_TRUE(read(lz4, 1).ok());
  EXPECT_TRUE(read(lz4, 2).IsCorruption());  // LZ4 bytes taken for ZSTD
  EXPECT_TRUE(read(lz4, 4).IsCorruption());  // no such type
  std::string huge_header;
  PutVarint32(&huge_header, 0xffffffffu);
  EXPECT_TRUE(read(huge_header + lz4.substr(5), 1).IsCorruption());
  std::string wrong_size;
  PutVarint32(&wrong_size, 3999);
  EXPECT_TRUE(read(wrong_size + lz4.substr(2), 1).IsCorruption());
  for (size_t cut = 0; cut < lz4.size(); cut++) {
    EXPECT_TRUE(read(lz4.substr(0, cut), 1).IsCorruption()) << cut;
  }
  std::string garbage = lz4;
  for (size_t i = 2; i < garbage.size(); i++) garbage[i] = '\xff';
  EXPECT_TRUE(read(garbage, 1).IsCorruption());

  // The same damage to a ZSTD payload: every cut, a wrong or huge size
  // header, garbage after the header.
  std::string zstd;
  ASSERT_EQ(CompressBlock(std::string(4000, 'a'), CompressionType::kZSTD,
                          &zstd),
            CompressionType::kZSTD);
  EXPECT_TRUE(read(zstd, 2).ok());
  EXPECT_TRUE(read(zstd, 1).IsCorruption());
  EXPECT_TRUE(read(huge_header + zstd.substr(2), 2).IsCorruption());
  EXPECT_TRUE(read(wrong_size + zstd.substr(2), 2).IsCorruption());
  for (size_t cut = 0; cut < zstd.size(); cut++) {
    EXPECT_TRUE(read(zstd.substr(0, cut), 2).IsCorruption()) << cut;
  }
  garbage = zstd;
  for (size_t i = 2; i < garbage.size(); i++) garbage[i] = '\xff';
  EXPECT_TRUE(read(garbage, 2).IsCorruption());
}

}  // namespace
}  // namespace bloomkv
