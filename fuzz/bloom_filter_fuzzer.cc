// Fuzz target for the standalone bloom filters: BloomFilter::Deserialize and
// ScalableBloomFilter::Deserialize on arbitrary bytes, and scripted adds,
// merges and growth checked against the set of keys added.
//
// Input: byte 0 selects what the rest is.
//   0 mod 3: arbitrary bytes, given to both decoders.
//   1 mod 3: a ScalableBloomFilter script. Byte 1: capacity 1..32 (bits
//            0-4), non-scaling (bit 5), expansion 1..4 (bits 6-7); byte 2
//            picks the rate; then 2 bytes per key added.
//   2 mod 3: a BloomFilter script. Byte 1: capacity 1..256; then 2 bytes
//            per key, whose top bit sends it to one of two filters of the
//            same shape, which are merged at the end.
// Invariants: no crash, no sanitizer report; a decoder either fails with
// Corruption and leaves its output alone or accepts an encoding that
// re-serializes to the same bytes; no false negative for a key added;
// Full from a scalable filter changes nothing; every filter built
// round-trips through its encoding.
// Thread-safety: single-threaded.
#include <cstddef>
#include <cstring>
#include <set>
#include <string>

#include "bloomkv/bloom_filter.h"
#include "bloomkv/scalable_bloom_filter.h"
#include "fuzz/fuzz_util.h"

namespace bloomkv::fuzz {
namespace {

std::string KeyFor(const uint8_t* p) {
  return "k" + std::to_string(p[0] | (p[1] << 8));
}

void CheckDecode(const Slice& input) {
  BloomFilter bloom = BloomFilter::WithBitsPerKey(3, 10);
  bloom.Add("sentinel");
  Status s = BloomFilter::Deserialize(input, &bloom);
  if (!s.ok()) {
    FUZZ_CHECK(s.IsCorruption(), "unexpected status: " + s.ToString());
    FUZZ_CHECK(bloom.MightContain("sentinel") && bloom.capacity() == 3,
               "failed Deserialize changed its output");
  } else {
    std::string again;
    bloom.Serialize(&again);
    FUZZ_CHECK(again == input.ToString(), "accepted input does not round-trip");
    for (uint64_t i = 0; i < 64; i++) bloom.MightContainHash(i * 0x9E37u);
    const double n = bloom.ApproximateElementCount();
    FUZZ_CHECK(n >= 0, "negative element count");
    BloomFilter copy = bloom;
    FUZZ_CHECK(copy.Merge(bloom).ok(), "merge with an equal copy failed");
  }

  ScalableBloomFilter scalable;
  s = ScalableBloomFilter::Deserialize(input, &scalable);
  if (!s.ok()) {
    FUZZ_CHECK(s.IsCorruption(), "unexpected status: " + s.ToString());
    FUZZ_CHECK(scalable.num_filters() == 0 && scalable.items() == 0,
               "failed Deserialize changed its output");
    return;
  }
  std::string again;
  scalable.Serialize(&again);
  FUZZ_CHECK(again == input.ToString(), "accepted input does not round-trip");
  for (uint64_t i = 0; i < 64; i++) scalable.MightContainHash(i * 0x9E37u);
  const Status add = scalable.Add("one more");
  FUZZ_CHECK(add.ok() || add.IsFull(), "unexpected status: " + add.ToString());
}

void CheckScalable(const uint8_t* data, size_t size) {
  if (size < 2) return;
  static constexpr double kRates[] = {0.5, 0.1, 0.01, 1e-4, 1e-8};
  ScalableBloomFilterOptions o;
  o.capacity = 1 + (data[0] & 31);
  o.non_scaling = (data[0] & 32) != 0;
  o.expansion = 1 + (data[0] >> 6);
  o.fp_rate = kRates[data[1] % 5];
  ScalableBloomFilter f;
  Status s = ScalableBloomFilter::Create(o, &f);
  FUZZ_CHECK(s.ok(), s.ToString());
  std::set<std::string> added;
  for (size_t off = 2; off + 2 <= size; off += 2) {
    const std::string k = KeyFor(data + off);
    std::string before;
    f.Serialize(&before);
    bool was_added = false;
    s = f.Add(k, &was_added);
    if (s.ok()) {
      added.insert(k);
      FUZZ_CHECK(f.MightContain(k), "false negative right after Add");
    } else {
      FUZZ_CHECK(s.IsFull(), "unexpected status: " + s.ToString());
      FUZZ_CHECK(!was_added, "failed Add reported added");
      std::string after;
      f.Serialize(&after);
      FUZZ_CHECK(after == before, "Full changed the filter");
    }
  }
  for (const std::string& k : added) {
    FUZZ_CHECK(f.MightContain(k), "false negative for " + k);
  }
  FUZZ_CHECK(f.items() <= added.size(), "more items than distinct keys");
  std::string enc;
  f.Serialize(&enc);
  ScalableBloomFilter g;
  s = ScalableBloomFilter::Deserialize(enc, &g);
  FUZZ_CHECK(s.ok(), "own encoding rejected: " + s.ToString());
  std::string again;
  g.Serialize(&again);
  FUZZ_CHECK(again == enc, "round trip changes the encoding");
}

void CheckBloomMerge(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const uint64_t capacity = 1 + data[0];
  BloomFilter left = BloomFilter::WithBitsPerKey(capacity, 10);
  BloomFilter right = BloomFilter::WithBitsPerKey(capacity, 10);
  std::set<std::string> keys;
  for (size_t off = 1; off + 2 <= size; off += 2) {
    const std::string k = KeyFor(data + off);
    ((data[off + 1] & 0x80) != 0 ? right : left).AddConcurrently(k);
    keys.insert(k);
  }
  FUZZ_CHECK(left.Merge(right).ok(), "same-shape merge failed");
  for (const std::string& k : keys) {
    FUZZ_CHECK(left.MightContain(k), "merged filter lost " + k);
  }
  BloomFilter other = BloomFilter::WithBitsPerKey(capacity + 600, 10);
  FUZZ_CHECK(left.Merge(other).IsInvalidArgument(),
             "merge of another shape accepted");
  std::string enc;
  left.Serialize(&enc);
  BloomFilter g;
  const Status s = BloomFilter::Deserialize(enc, &g);
  FUZZ_CHECK(s.ok(), "own encoding rejected: " + s.ToString());
}

}  // namespace
}  // namespace bloomkv::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  switch (data[0] % 3) {
    case 0:
      bloomkv::fuzz::CheckDecode(
          bloomkv::Slice(reinterpret_cast<const char*>(data + 1), size - 1));
      break;
    case 1:
      bloomkv::fuzz::CheckScalable(data + 1, size - 1);
      break;
    default:
      bloomkv::fuzz::CheckBloomMerge(data + 1, size - 1);
      break;
  }
  return 0;
}
