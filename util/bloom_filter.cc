// The standalone BloomFilter (include/bloomkv/bloom_filter.h): the blocked
// bloom core of util/blocked_bloom.h plus sizing, bookkeeping and its own
// serialization.
//
// Serialization (all constants never change: on disk; little-endian):
//   offset  size  field
//   0       8     magic "BKVBLOOM"
//   8       1     format version (1)
//   9       1     probes per key (1..kMaxProbes; 0 iff there are no lines)
//   10      2     reserved, 0
//   12      8     capacity (expected items)
//   20      8     items added
//   28      8     number of 64-byte lines L
//   36      64*L  line data
//   36+64L  4     BlockChecksum of bytes [0, 36+64L)
//
// Thread-safety: see the header.
#include "bloomkv/bloom_filter.h"

#include <cmath>
#include <cstring>
#include <utility>

#include "util/blocked_bloom.h"
#include "util/coding.h"
#include "util/hash.h"

namespace bloomkv {

namespace {

namespace bb = blocked_bloom;

// never change: on disk.
constexpr char kMagic[8] = {'B', 'K', 'V', 'B', 'L', 'O', 'O', 'M'};
constexpr unsigned char kFormatVersion = 1;
constexpr size_t kVersionOffset = 8;
constexpr size_t kProbesOffset = 9;
constexpr size_t kReservedOffset = 10;
constexpr size_t kCapacityOffset = 12;
constexpr size_t kItemsOffset = 20;
constexpr size_t kNumLinesOffset = 28;
constexpr size_t kHeaderSize = 36;
constexpr size_t kChecksumSize = 4;

constexpr double kMinFpRate = 1e-9;
constexpr double kMaxFpRate = 0.5;
constexpr double kDefaultFpRate = 0.01;
constexpr double kMinBitsPerKey = 1.0;
constexpr double kMaxBitsPerKey = 100.0;
constexpr double kDefaultBitsPerKey = 10.0;

Status Corrupt(const std::string& what, size_t offset) {
  return Status::Corruption("bloom filter",
                            what + " at offset " + std::to_string(offset));
}

}  // namespace

void BloomFilter::FreeLines::operator()(char* p) const {
  bb::AlignedLinesDeleter()(p);
}

BloomFilter::BloomFilter(uint64_t capacity, uint64_t num_lines, int num_probes)
    : capacity_(capacity),
      num_lines_(num_lines),
      num_probes_(num_lines == 0 ? 0 : num_probes),
      lines_(bb::AllocateLines(num_lines).release()) {}

BloomFilter BloomFilter::ForCapacity(uint64_t expected_items, double fp_rate) {
  if (std::isnan(fp_rate)) fp_rate = kDefaultFpRate;
  fp_rate = std::fmin(std::fmax(fp_rate, kMinFpRate), kMaxFpRate);
  return WithBitsPerKey(expected_items, bb::BitsPerKeyForFpRate(fp_rate));
}

BloomFilter BloomFilter::WithBitsPerKey(uint64_t expected_items,
                                        double bits_per_key) {
  if (std::isnan(bits_per_key)) bits_per_key = kDefaultBitsPerKey;
  bits_per_key =
      std::fmin(std::fmax(bits_per_key, kMinBitsPerKey), kMaxBitsPerKey);
  if (expected_items == 0) expected_items = 1;
  return BloomFilter(expected_items,
                     bb::NumLinesFor(expected_items, bits_per_key),
                     bb::ChooseNumProbes(bits_per_key));
}

BloomFilter::BloomFilter(const BloomFilter& other)
    : BloomFilter(other.capacity_, other.num_lines_, other.num_probes_) {
  items_added_ = other.items_added_;
  if (num_lines_ > 0) {
    std::memcpy(lines_.get(), other.lines_.get(), num_lines_ * bb::kLineBytes);
  }
}

BloomFilter& BloomFilter::operator=(const BloomFilter& other) {
  if (this != &other) *this = BloomFilter(other);
  return *this;
}

BloomFilter::BloomFilter(BloomFilter&& other) noexcept
    : capacity_(std::exchange(other.capacity_, 0)),
      num_lines_(std::exchange(other.num_lines_, 0)),
      items_added_(std::exchange(other.items_added_, 0)),
      num_probes_(std::exchange(other.num_probes_, 0)),
      lines_(std::move(other.lines_)) {}

BloomFilter& BloomFilter::operator=(BloomFilter&& other) noexcept {
  if (this != &other) {
    capacity_ = std::exchange(other.capacity_, 0);
    num_lines_ = std::exchange(other.num_lines_, 0);
    items_added_ = std::exchange(other.items_added_, 0);
    num_probes_ = std::exchange(other.num_probes_, 0);
    lines_ = std::move(other.lines_);
  }
  return *this;
}

BloomFilter::~BloomFilter() = default;

void BloomFilter::Add(const Slice& key) { AddHash(KeyHash(key)); }

bool BloomFilter::MightContain(const Slice& key) const {
  return MightContainHash(KeyHash(key));
}

void BloomFilter::AddHash(uint64_t hash) {
  items_added_++;
  if (num_lines_ == 0) return;  // Answers true for everything from now on.
  bb::AddToLine(bb::LineFor(lines_.get(), num_lines_, hash), hash, num_probes_);
}

bool BloomFilter::MightContainHash(uint64_t hash) const {
  if (num_lines_ == 0) return items_added_ > 0;
  return bb::LineMayContain(bb::LineFor(lines_.get(), num_lines_, hash), hash,
                            num_probes_);
}

void BloomFilter::Serialize(std::string* dst) const {
  const size_t start = dst->size();
  char header[kHeaderSize] = {};
  std::memcpy(header, kMagic, sizeof(kMagic));
  header[kVersionOffset] = static_cast<char>(kFormatVersion);
  header[kProbesOffset] = static_cast<char>(num_probes_);
  EncodeFixed64(header + kCapacityOffset, capacity_);
  EncodeFixed64(header + kItemsOffset, items_added_);
  EncodeFixed64(header + kNumLinesOffset, num_lines_);
  dst->append(header, kHeaderSize);
  if (num_lines_ > 0) {
    dst->append(lines_.get(), num_lines_ * bb::kLineBytes);
  }
  PutFixed32(dst, BlockChecksum(dst->data() + start, dst->size() - start));
}

Status BloomFilter::Deserialize(const Slice& input, BloomFilter* out) {
  const char* p = input.data();
  const size_t size = input.size();
  if (size < kHeaderSize + kChecksumSize) {
    return Corrupt("truncated: " + std::to_string(size) +
                       " bytes, an encoded filter takes at least " +
                       std::to_string(kHeaderSize + kChecksumSize),
                   0);
  }
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) {
    return Corrupt("bad magic (not a serialized BloomFilter)", 0);
  }
  const unsigned version = static_cast<unsigned char>(p[kVersionOffset]);
  if (version != kFormatVersion) {
    return Corrupt("unsupported format version " + std::to_string(version),
                   kVersionOffset);
  }
  // The line count decides where the checksum is, so check it against the
  // input size first: a truncated input then says so instead of reporting a
  // checksum mismatch.
  const uint64_t num_lines = DecodeFixed64(p + kNumLinesOffset);
  const uint64_t payload = size - kHeaderSize - kChecksumSize;
  if (num_lines > bb::kMaxLines || num_lines != payload / bb::kLineBytes ||
      payload % bb::kLineBytes != 0) {
    return Corrupt("size mismatch: header declares " +
                       std::to_string(num_lines) + " lines, input holds " +
                       std::to_string(payload) +
                       " bytes of lines (truncated or trailing bytes?)",
                   kNumLinesOffset);
  }
  const size_t checked = size - kChecksumSize;
  const uint32_t stored = DecodeFixed32(p + checked);
  const uint32_t actual = BlockChecksum(p, checked);
  if (stored != actual) {
    return Corrupt("checksum mismatch (stored " + std::to_string(stored) +
                       ", computed " + std::to_string(actual) + ")",
                   checked);
  }
  const int probes = static_cast<unsigned char>(p[kProbesOffset]);
  const bool probes_ok =
      num_lines == 0 ? probes == 0 : (probes >= 1 && probes <= bb::kMaxProbes);
  if (!probes_ok) {
    return Corrupt("invalid probe count " + std::to_string(probes),
                   kProbesOffset);
  }
  if (p[kReservedOffset] != 0 || p[kReservedOffset + 1] != 0) {
    return Corrupt("reserved bytes are not zero", kReservedOffset);
  }

  BloomFilter filter(DecodeFixed64(p + kCapacityOffset), num_lines, probes);
  filter.items_added_ = DecodeFixed64(p + kItemsOffset);
  if (num_lines > 0) {
    std::memcpy(filter.lines_.get(), p + kHeaderSize,
                num_lines * bb::kLineBytes);
  }
  *out = std::move(filter);
  return Status::OK();
}

BloomFilterInfo BloomFilter::Info() const {
  BloomFilterInfo info;
  info.capacity = capacity_;
  info.bit_count = num_lines_ * bb::kLineBits;
  info.bytes = num_lines_ * bb::kLineBytes;
  info.bits_per_key = capacity_ == 0 ? 0.0
                                     : static_cast<double>(info.bit_count) /
                                           static_cast<double>(capacity_);
  info.probes_per_key = num_probes_;
  info.items_added = items_added_;
  if (items_added_ == 0) {
    info.estimated_fp_rate = 0.0;
  } else if (num_lines_ == 0) {
    info.estimated_fp_rate = 1.0;
  } else {
    info.estimated_fp_rate =
        bb::TheoreticalFpRate(num_lines_, items_added_, num_probes_);
  }
  return info;
}

}  // namespace bloomkv
