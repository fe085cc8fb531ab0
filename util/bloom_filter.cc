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
// Thread-safety: see the header. The lines are read and written as relaxed
// atomic 64-bit words everywhere except in Add (which has exclusive access),
// so every method the header allows to run concurrently is free of data
// races.
#include "bloomkv/bloom_filter.h"

#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
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

constexpr size_t kWordsPerLine = bb::kLineBytes / sizeof(uint64_t);

uint64_t LoadWord(const char* lines, uint64_t i) {
  auto* w = const_cast<uint64_t*>(reinterpret_cast<const uint64_t*>(lines));
  return std::atomic_ref<uint64_t>(w[i]).load(std::memory_order_relaxed);
}

// Copies `words` words of `src` to `dst` (not shared) with atomic loads, so
// that a copy may race with concurrent adds to src.
void CopyWords(const char* src, uint64_t words, char* dst) {
  for (uint64_t i = 0; i < words; i++) {
    const uint64_t w = LoadWord(src, i);
    std::memcpy(dst + i * sizeof(w), &w, sizeof(w));
  }
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
  items_added_.store(other.items_added_.load(std::memory_order_relaxed),
                     std::memory_order_relaxed);
  CopyWords(other.lines_.get(), num_lines_ * kWordsPerLine, lines_.get());
}

BloomFilter& BloomFilter::operator=(const BloomFilter& other) {
  if (this != &other) *this = BloomFilter(other);
  return *this;
}

BloomFilter::BloomFilter(BloomFilter&& other) noexcept
    : capacity_(std::exchange(other.capacity_, 0)),
      num_lines_(std::exchange(other.num_lines_, 0)),
      items_added_(other.items_added_.exchange(0, std::memory_order_relaxed)),
      num_probes_(std::exchange(other.num_probes_, 0)),
      lines_(std::move(other.lines_)) {}

BloomFilter& BloomFilter::operator=(BloomFilter&& other) noexcept {
  if (this != &other) {
    capacity_ = std::exchange(other.capacity_, 0);
    num_lines_ = std::exchange(other.num_lines_, 0);
    items_added_.store(
        other.items_added_.exchange(0, std::memory_order_relaxed),
        std::memory_order_relaxed);
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

void BloomFilter::AddConcurrently(const Slice& key) {
  AddHashConcurrently(KeyHash(key));
}

void BloomFilter::AddHash(uint64_t hash) {
  // Exclusive access: a plain increment, not a locked read-modify-write.
  items_added_.store(items_added_.load(std::memory_order_relaxed) + 1,
                     std::memory_order_relaxed);
  if (num_lines_ == 0) return;  // Answers true for everything from now on.
  bb::AddToLine(bb::LineFor(lines_.get(), num_lines_, hash), hash, num_probes_);
}

void BloomFilter::AddHashConcurrently(uint64_t hash) {
  items_added_.fetch_add(1, std::memory_order_relaxed);
  if (num_lines_ == 0) return;
  bb::AddToLineAtomic(bb::LineFor(lines_.get(), num_lines_, hash), hash,
                      num_probes_);
}

bool BloomFilter::MightContainHash(uint64_t hash) const {
  if (num_lines_ == 0) {
    return items_added_.load(std::memory_order_relaxed) > 0;
  }
  return bb::LineMayContainAtomic(bb::LineFor(lines_.get(), num_lines_, hash),
                                  hash, num_probes_);
}

bool BloomFilter::IsCompatible(const BloomFilter& other) const {
  return num_lines_ == other.num_lines_ && num_probes_ == other.num_probes_;
}

Status BloomFilter::Merge(const BloomFilter& other) {
  if (&other == this) {
    return Status::InvalidArgument("bloom filter",
                                   "cannot merge a filter into itself");
  }
  if (!IsCompatible(other)) {
    return Status::InvalidArgument(
        "bloom filter",
        "cannot merge filters of different shapes (this: " +
            std::to_string(num_lines_ * bb::kLineBits) + " bits, " +
            std::to_string(num_probes_) + " probes per key; other: " +
            std::to_string(other.num_lines_ * bb::kLineBits) + " bits, " +
            std::to_string(other.num_probes_) + " probes per key)");
  }
  auto* dst = reinterpret_cast<uint64_t*>(lines_.get());
  for (uint64_t i = 0; i < num_lines_ * kWordsPerLine; i++) {
    const uint64_t w = LoadWord(other.lines_.get(), i);
    if (w != 0) {
      std::atomic_ref<uint64_t>(dst[i]).fetch_or(w, std::memory_order_relaxed);
    }
  }
  items_added_.fetch_add(other.items_added_.load(std::memory_order_relaxed),
                         std::memory_order_relaxed);
  return Status::OK();
}

uint64_t BloomFilter::CountSetBits() const {
  uint64_t set = 0;
  for (uint64_t i = 0; i < num_lines_ * kWordsPerLine; i++) {
    set += static_cast<uint64_t>(std::popcount(LoadWord(lines_.get(), i)));
  }
  return set;
}

// A key sets k bits of one line, drawn with replacement: a given bit of the
// filter stays clear with probability 1 - q per key, q = (1 - (1 -
// 1/512)^k) / L. After n keys the expected clear fraction is (1 - q)^n;
// solving for n at the observed fraction gives the estimate. For large L
// this is Swamidass and Baldi's -(m / k') ln(1 - X / m), with k' = 512 (1 -
// (511/512)^k) the expected distinct bits per key (slightly below k).
double BloomFilter::ApproximateElementCount() const {
  if (num_lines_ == 0) return 0.0;
  const uint64_t set = CountSetBits();
  const double m = static_cast<double>(num_lines_) * bb::kLineBits;
  if (static_cast<double>(set) >= m) {
    return std::numeric_limits<double>::infinity();
  }
  const double per_key_in_line =
      -std::expm1(num_probes_ * std::log1p(-1.0 / bb::kLineBits));
  const double q = per_key_in_line / static_cast<double>(num_lines_);
  return std::log1p(-static_cast<double>(set) / m) / std::log1p(-q);
}

void BloomFilter::Serialize(std::string* dst) const {
  const size_t start = dst->size();
  char header[kHeaderSize] = {};
  std::memcpy(header, kMagic, sizeof(kMagic));
  header[kVersionOffset] = static_cast<char>(kFormatVersion);
  header[kProbesOffset] = static_cast<char>(num_probes_);
  EncodeFixed64(header + kCapacityOffset, capacity_);
  EncodeFixed64(header + kItemsOffset,
                items_added_.load(std::memory_order_relaxed));
  EncodeFixed64(header + kNumLinesOffset, num_lines_);
  dst->append(header, kHeaderSize);
  const size_t lines_at = dst->size();
  dst->resize(lines_at + num_lines_ * bb::kLineBytes);
  CopyWords(lines_.get(), num_lines_ * kWordsPerLine, dst->data() + lines_at);
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
  filter.items_added_.store(DecodeFixed64(p + kItemsOffset),
                            std::memory_order_relaxed);
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
  const uint64_t items = items_added_.load(std::memory_order_relaxed);
  info.items_added = items;
  if (items == 0) {
    info.estimated_fp_rate = 0.0;
  } else if (num_lines_ == 0) {
    info.estimated_fp_rate = 1.0;
  } else {
    info.estimated_fp_rate =
        bb::TheoreticalFpRate(num_lines_, items, num_probes_);
  }
  info.approximate_element_count = ApproximateElementCount();
  info.fill_ratio = info.bit_count == 0
                        ? 0.0
                        : static_cast<double>(CountSetBits()) /
                              static_cast<double>(info.bit_count);
  return info;
}

}  // namespace bloomkv
