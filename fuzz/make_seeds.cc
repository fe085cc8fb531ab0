// Writes the seed corpora of the fuzz targets: small valid inputs made by
// the real writers (SegmentBuilder, BlockBuilder, log::Writer,
// VersionEdit::EncodeTo, WriteBatch, the filters' Serialize) plus a few
// damaged copies.
//
//   fuzz_make_seeds <corpus dir>   (writes <corpus dir>/<target>/<name>)
//
// Output is deterministic, so regenerating the committed corpus changes no
// byte unless a format changed. Crash reproducers added to the corpus by
// hand are left alone.
// Thread-safety: single-threaded program.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/bloom_filter.h"
#include "bloomkv/cuckoo_filter.h"
#include "bloomkv/filter_policy.h"
#include "bloomkv/scalable_bloom_filter.h"
#include "bloomkv/static_filter.h"
#include "bloomkv/write_batch.h"
#include "db/log_writer.h"
#include "db/version_edit.h"
#include "db/write_batch_internal.h"
#include "table/block_builder.h"
#include "table/internal_key.h"
#include "table/segment_builder.h"
#include "tests/testutil/mem_files.h"
#include "util/coding.h"
#include "util/random.h"

namespace bloomkv::fuzz {
namespace {

std::filesystem::path g_root;

void Write(const std::string& target, const std::string& name,
           const std::string& contents) {
  const std::filesystem::path dir = g_root / target;
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) {
    std::fprintf(stderr, "cannot write %s/%s\n", dir.c_str(), name.c_str());
    std::exit(1);
  }
}

// A valid input, its first half, and copies with one byte flipped at the
// start, in the middle and near the end.
void WriteWithDamage(const std::string& target, const std::string& name,
                     const std::string& valid) {
  Write(target, "valid-" + name, valid);
  if (valid.size() < 4) return;
  Write(target, "damaged-" + name + "-truncated",
        valid.substr(0, valid.size() / 2));
  std::string flipped = valid;
  flipped[valid.size() / 2] ^= 0x10;
  Write(target, "damaged-" + name + "-flipped-middle", flipped);
  flipped = valid;
  flipped[valid.size() - 3] ^= 0x01;
  Write(target, "damaged-" + name + "-flipped-end", flipped);
}

std::string Key(Random* rnd, int i) {
  return "key" + std::to_string(1000 + i) + std::string(rnd->Uniform(3), 'x');
}

std::string Segment(int num_keys, CompressionType compression, bool with_filter,
                    bool tombstones, size_t block_size) {
  Random rnd(301 + num_keys);
  SegmentBuilderOptions options;
  options.block_size = block_size;
  options.block_restart_interval = 4;
  options.compression = compression;
  if (with_filter) options.filter_policy = NewBloomFilterPolicy(10.0);
  test::StringSink sink;
  SegmentBuilder builder(options, &sink);
  for (int i = 0; i < num_keys; i++) {
    const std::string user_key = "key" + std::to_string(1000 + i);
    // Two versions of every third key, the older one possibly a tombstone.
    const int versions = i % 3 == 0 ? 2 : 1;
    for (int v = versions; v > 0; v--) {
      const bool del = tombstones && v == 1 && versions == 2;
      const std::string value =
          del ? "" : std::string(8 + rnd.Uniform(24), 'a' + i % 26);
      Status s = builder.Add(
          MakeInternalKey(user_key, 10 * i + v,
                          del ? ValueType::kDeletion : ValueType::kValue),
          value);
      if (!s.ok()) std::exit(1);
    }
  }
  if (!builder.Finish().ok()) std::exit(1);
  return sink.contents();
}

std::string BlockOf(int num_keys, int restart_interval) {
  Random rnd(7 + num_keys);
  BlockBuilder b(restart_interval);
  for (int i = 0; i < num_keys; i++) {
    b.Add(MakeInternalKey(Key(&rnd, i), 5, ValueType::kValue),
          std::string(rnd.Uniform(12), 'v'));
  }
  return b.Finish().ToString();
}

std::string Log(const std::vector<std::string>& records) {
  test::StringSink sink;
  log::Writer w(&sink);
  for (const std::string& r : records) {
    if (!w.AddRecord(r).ok()) std::exit(1);
  }
  return sink.contents();
}

void SegmentSeeds() {
  const char* t = "segment_reader";
  WriteWithDamage(t, "lz4-filter",
                  Segment(60, CompressionType::kLZ4, true, true, 256));
  WriteWithDamage(t, "raw-filter",
                  Segment(12, CompressionType::kNone, true, false, 128));
  WriteWithDamage(t, "lz4-values-filter",
                  Segment(60, CompressionType::kLZ4Values, true, true, 256));
  Write(t, "valid-raw-no-filter",
        Segment(20, CompressionType::kNone, false, true, 4096));
  Write(t, "valid-empty",
        Segment(0, CompressionType::kNone, true, false, 4096));
}

void BlockSeeds() {
  const char* t = "block";
  WriteWithDamage(t, "restart-1", BlockOf(6, 1));
  WriteWithDamage(t, "restart-3", BlockOf(10, 3));
  Write(t, "valid-restart-16", BlockOf(40, 16));
  Write(t, "valid-empty", BlockOf(0, 16));
}

void LogSeeds() {
  const char* t = "log_reader";
  WriteWithDamage(t, "small-records", Log({"first", "", "third record", "4"}));
  // A record split over two blocks, then a small one.
  Write(t, "valid-fragmented", Log({std::string(32768 + 100, 'f'), "after"}));
}

void VersionEditSeeds() {
  const char* t = "version_edit";
  VersionEdit edit;
  edit.SetLogNumber(12);
  edit.SetNextFileNumber(15);
  edit.SetLastSequence(4321);
  edit.RemoveFile(0, 7);
  edit.RemoveFile(1, 9);
  for (int level : {0, 2}) {
    auto f = std::make_shared<FileMetaData>();
    f->number = 13 + level;
    f->file_size = 65536;
    f->num_entries = 800;
    f->smallest = MakeInternalKey("apple", 100, ValueType::kValue);
    f->largest = MakeInternalKey("pear", 90, ValueType::kDeletion);
    edit.AddFile(level, f);
  }
  std::string encoded;
  edit.EncodeTo(&encoded);
  WriteWithDamage(t, "full", encoded);
  VersionEdit small;
  small.SetLastSequence(1);
  encoded.clear();
  small.EncodeTo(&encoded);
  Write(t, "valid-last-sequence", encoded);
}

void WriteBatchSeeds() {
  const char* t = "write_batch";
  WriteBatch batch;
  batch.Put("key1", "value1");
  batch.Delete("key2");
  batch.Put("key1", "");
  batch.Put(std::string("k\0y", 3), "binary\xff");
  WriteBatchInternal::SetSequence(&batch, 100);
  WriteWithDamage(t, "mixed", WriteBatchInternal::Contents(&batch).ToString());
  WriteBatch empty;
  Write(t, "valid-empty", WriteBatchInternal::Contents(&empty).ToString());
}

}  // namespace
}  // namespace bloomkv::fuzz

namespace bloomkv::fuzz {
namespace {

// binary_fuse: hash sets to build from (byte 0 even), and encodings to
// decode (byte 0 odd): segment filters of both widths and StaticFilters.
void BinaryFuseSeeds() {
  Random rnd(17);
  auto hash_set = [&rnd](int n, unsigned char mode) {
    std::string s;
    s.push_back('\0');
    s.push_back(static_cast<char>(mode));
    for (int i = 0; i < n; i++) PutFixed64(&s, rnd.Next64());
    return s;
  };
  Write("binary_fuse", "build-empty", hash_set(0, 0));
  Write("binary_fuse", "build-one-16bit", hash_set(1, 1));
  Write("binary_fuse", "build-3-times-4", hash_set(3, 3 << 1));
  Write("binary_fuse", "build-100", hash_set(100, 0));
  Write("binary_fuse", "build-100-16bit-twice", hash_set(100, 1 | (1 << 1)));
  std::vector<uint64_t> hashes(60);
  for (auto& h : hashes) h = rnd.Next64();
  for (int bits : {8, 16}) {
    std::string filter = "\x01";
    NewBinaryFuseFilterPolicy(bits)->CreateFilter(hashes.data(), hashes.size(),
                                                  &filter);
    WriteWithDamage("binary_fuse", "segment-filter-" + std::to_string(bits),
                    filter);
    std::string serialized = "\x01";
    StaticFilter::BuildFromHashes(hashes.data(), hashes.size(), bits)
        .Serialize(&serialized);
    WriteWithDamage("binary_fuse", "static-filter-" + std::to_string(bits),
                    serialized);
  }
  std::string empty = "\x01";
  StaticFilter().Serialize(&empty);
  Write("binary_fuse", "valid-static-filter-empty", empty);
}

// bloom_filter: encodings to decode (byte 0 = 0 mod 3), scalable scripts
// (1 mod 3) and merge scripts (2 mod 3).
void BloomFilterSeeds() {
  const std::string t = "bloom_filter";
  BloomFilter bloom = BloomFilter::WithBitsPerKey(20, 10);
  for (int i = 0; i < 20; i++) bloom.Add("key" + std::to_string(i));
  std::string enc(1, '\0');
  bloom.Serialize(&enc);
  WriteWithDamage(t, "bloom", enc);
  enc.assign(1, '\0');
  BloomFilter().Serialize(&enc);
  Write(t, "valid-bloom-empty", enc);

  ScalableBloomFilterOptions o;
  o.capacity = 4;
  ScalableBloomFilter scalable;
  if (!ScalableBloomFilter::Create(o, &scalable).ok()) std::exit(1);
  for (int i = 0; i < 20; i++) {
    if (!scalable.Add("key" + std::to_string(i)).ok()) std::exit(1);
  }
  enc.assign(1, '\0');
  scalable.Serialize(&enc);
  WriteWithDamage(t, "scalable", enc);
  enc.assign(1, '\0');
  ScalableBloomFilter().Serialize(&enc);
  Write(t, "valid-scalable-default", enc);

  auto script = [](char mode, unsigned char b1, unsigned char b2, int keys) {
    std::string s;
    s.push_back(mode);
    s.push_back(static_cast<char>(b1));
    if (mode == 1) s.push_back(static_cast<char>(b2));
    for (int i = 0; i < keys; i++) {
      s.push_back(static_cast<char>(i * 7));
      s.push_back(static_cast<char>(i % 3 == 0 ? 0x80 | i : i >> 8));
    }
    return s;
  };
  Write(t, "script-scalable-grows", script(1, 3 | (1 << 6), 2, 60));
  Write(t, "script-scalable-non-scaling", script(1, 7 | 32, 1, 20));
  Write(t, "script-scalable-tight-rate", script(1, 0, 4, 12));
  Write(t, "script-merge", script(2, 40, 0, 50));
}

// cuckoo_filter: encodings to decode (byte 0 odd) and scripts (even).
void CuckooFilterSeeds() {
  const std::string t = "cuckoo_filter";
  for (int bits : {7, 12, 16}) {
    CuckooFilterOptions o;
    o.capacity = 30;
    o.fingerprint_bits = bits;
    o.bucket_size = bits == 7 ? 3 : 4;
    CuckooFilter f;
    if (!CuckooFilter::Create(o, &f).ok()) std::exit(1);
    for (int i = 0; i < 25; i++) {
      if (!f.Add("key" + std::to_string(i % 20)).ok()) std::exit(1);
    }
    std::string enc = "\x01";
    f.Serialize(&enc);
    WriteWithDamage(t, "filter-" + std::to_string(bits), enc);
  }
  std::string empty = "\x01";
  CuckooFilter().Serialize(&empty);
  Write(t, "valid-filter-default", empty);

  // Byte 1: bucket size and kicks, byte 2: bits, byte 3: capacity; then
  // (operation, key) pairs.
  auto script = [](unsigned char geometry, unsigned char bits,
                   unsigned char capacity, int ops, int universe) {
    std::string s;
    s.push_back('\0');
    s.push_back(static_cast<char>(geometry));
    s.push_back(static_cast<char>(bits));
    s.push_back(static_cast<char>(capacity));
    for (int i = 0; i < ops; i++) {
      s.push_back(static_cast<char>((i * 5) % 7 < 4 ? 0 : i % 4));
      s.push_back(static_cast<char>((i * 13) % universe));
    }
    return s;
  };
  Write(t, "script-fills", script(3 | (31 << 3), 8, 15, 200, 40));
  Write(t, "script-one-slot", script(0, 0, 9, 100, 30));
  Write(t, "script-duplicates", script(1 | (4 << 3), 28, 50, 120, 3));
}

}  // namespace
}  // namespace bloomkv::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  bloomkv::fuzz::g_root = argv[1];
  bloomkv::fuzz::SegmentSeeds();
  bloomkv::fuzz::BlockSeeds();
  bloomkv::fuzz::LogSeeds();
  bloomkv::fuzz::VersionEditSeeds();
  bloomkv::fuzz::WriteBatchSeeds();
  bloomkv::fuzz::BinaryFuseSeeds();
  bloomkv::fuzz::BloomFilterSeeds();
  bloomkv::fuzz::CuckooFilterSeeds();
  return 0;
}
