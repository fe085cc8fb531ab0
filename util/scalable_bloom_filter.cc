// ScalableBloomFilter (include/bloomkv/scalable_bloom_filter.h): a chain of
// standalone BloomFilters with geometrically tightening rates, and its
// serialization.
//
// Serialization (all constants never change: on disk; little-endian):
//   offset  size  field
//   0       8     magic "BKVSCALE"
//   8       1     format version (1)
//   9       1     flags: bit 0 non-scaling, other bits 0
//   10      2     reserved, 0
//   12      4     expansion
//   16      8     capacity of the first sub-filter
//   24      8     target fp rate, IEEE-754 binary64 bits
//   32      8     items recorded
//   40      4     number of sub-filters S
//   44      ...   S records: u64 length N, then N bytes of
//                 BloomFilter::Serialize (with its own magic and checksum)
//   end-4   4     BlockChecksum of every byte before it
//
// Thread-safety: see the header.
#include "bloomkv/scalable_bloom_filter.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <utility>

#include "util/coding.h"
#include "util/hash.h"

namespace bloomkv {

namespace {

// never change: on disk.
constexpr char kMagic[8] = {'B', 'K', 'V', 'S', 'C', 'A', 'L', 'E'};
constexpr unsigned char kFormatVersion = 1;
constexpr size_t kVersionOffset = 8;
constexpr size_t kFlagsOffset = 9;
constexpr size_t kReservedOffset = 10;
constexpr size_t kExpansionOffset = 12;
constexpr size_t kCapacityOffset = 16;
constexpr size_t kFpRateOffset = 24;
constexpr size_t kItemsOffset = 32;
constexpr size_t kCountOffset = 40;
constexpr size_t kHeaderSize = 44;
constexpr size_t kLengthSize = 8;
constexpr size_t kChecksumSize = 4;
constexpr unsigned char kFlagNonScaling = 0x01;

// Each sub-filter gets this fraction of the previous one's rate. 1/2 is
// RedisBloom's tightening ratio; Almeida et al. find 0.8-0.9 best for
// memory when a chain grows a lot, 1/2 keeps chains that grow little (the
// common case when the capacity is sized roughly right) small and fast.
constexpr double kTighteningRatio = 0.5;
// The rate BloomFilter::ForCapacity still delivers (it clamps below).
constexpr double kMinSubFilterRate = 1e-9;
constexpr double kMinFpRate = 2 * kMinSubFilterRate;
constexpr double kMaxFpRate = 0.5;
constexpr uint32_t kMaxExpansion = 65536;
// Above this many keys a sub-filter could need more lines than the blocked
// layout addresses (2^32) at the largest bits per key.
constexpr uint64_t kMaxSubFilterCapacity = uint64_t{1} << 32;
// With the rate halving each time, the 1e-9 floor is reached after at most
// 29 sub-filters; more in a stored filter is corruption.
constexpr uint32_t kMaxSubFilters = 64;

Status Corrupt(const std::string& what, size_t offset) {
  return Status::Corruption("scalable bloom filter",
                            what + " at offset " + std::to_string(offset));
}

// What is wrong with the options, or "" if nothing.
std::string OptionsProblem(const ScalableBloomFilterOptions& o) {
  if (o.capacity == 0) return "capacity must be at least 1";
  if (!(o.fp_rate >= kMinFpRate && o.fp_rate <= kMaxFpRate)) {
    return "fp_rate " + std::to_string(o.fp_rate) + " is outside [2e-09, 0.5]";
  }
  if (o.expansion < 1 || o.expansion > kMaxExpansion) {
    return "expansion " + std::to_string(o.expansion) +
           " is outside [1, 65536]";
  }
  return "";
}

// The capacity and rate of sub-filter i, or Full if the chain cannot have
// an i-th sub-filter.
Status SubFilterShape(const ScalableBloomFilterOptions& o, size_t i,
                      uint64_t* capacity, double* rate) {
  if (o.non_scaling) {
    if (i > 0) {
      return Status::Full("scalable bloom filter",
                          "non-scaling filter is full (holds its capacity of " +
                              std::to_string(o.capacity) + " keys)");
    }
    *capacity = o.capacity;
    *rate = o.fp_rate;
    return Status::OK();
  }
  *rate = o.fp_rate * (1 - kTighteningRatio) *
          std::pow(kTighteningRatio, static_cast<double>(i));
  if (*rate < kMinSubFilterRate) {
    return Status::Full("scalable bloom filter",
                        "cannot grow within the target rate: sub-filter " +
                            std::to_string(i + 1) +
                            " would need a false-positive rate below " +
                            "1e-9 (use a larger capacity or expansion)");
  }
  uint64_t c = o.capacity;
  for (size_t j = 0; j < i && c <= kMaxSubFilterCapacity; j++) c *= o.expansion;
  if (c > kMaxSubFilterCapacity) {
    return Status::Full("scalable bloom filter",
                        "cannot grow: sub-filter " + std::to_string(i + 1) +
                            " would hold more than 2^32 keys");
  }
  *capacity = c;
  return Status::OK();
}

}  // namespace

Status ScalableBloomFilter::Create(const ScalableBloomFilterOptions& options,
                                   ScalableBloomFilter* out) {
  const std::string problem = OptionsProblem(options);
  if (!problem.empty()) {
    return Status::InvalidArgument("scalable bloom filter", problem);
  }
  ScalableBloomFilter f;
  f.options_ = options;
  Status s = f.Grow();
  if (!s.ok()) return s;  // Not reached: validated options allow one.
  *out = std::move(f);
  return Status::OK();
}

ScalableBloomFilter::ScalableBloomFilter(ScalableBloomFilter&& other) noexcept
    : options_(std::exchange(other.options_, ScalableBloomFilterOptions())),
      items_(std::exchange(other.items_, 0)),
      filters_(std::exchange(other.filters_, {})) {}

ScalableBloomFilter& ScalableBloomFilter::operator=(
    ScalableBloomFilter&& other) noexcept {
  if (this != &other) {
    options_ = std::exchange(other.options_, ScalableBloomFilterOptions());
    items_ = std::exchange(other.items_, 0);
    filters_ = std::exchange(other.filters_, {});
  }
  return *this;
}

ScalableBloomFilter::~ScalableBloomFilter() = default;

Status ScalableBloomFilter::Grow() {
  uint64_t capacity = 0;
  double rate = 0;
  Status s = SubFilterShape(options_, filters_.size(), &capacity, &rate);
  if (!s.ok()) return s;
  filters_.push_back(BloomFilter::ForCapacity(capacity, rate));
  return Status::OK();
}

Status ScalableBloomFilter::Add(const Slice& key, bool* added) {
  return AddHash(KeyHash(key), added);
}

Status ScalableBloomFilter::AddHash(uint64_t hash, bool* added) {
  if (added != nullptr) *added = false;
  if (MightContainHash(hash)) return Status::OK();
  if (filters_.empty() ||
      filters_.back().items_added() >= filters_.back().capacity()) {
    Status s = Grow();
    if (!s.ok()) return s;
  }
  filters_.back().AddHash(hash);
  items_++;
  if (added != nullptr) *added = true;
  return Status::OK();
}

bool ScalableBloomFilter::MightContain(const Slice& key) const {
  return MightContainHash(KeyHash(key));
}

bool ScalableBloomFilter::MightContainHash(uint64_t hash) const {
  // Newest first: the largest sub-filter holds the most keys.
  for (auto it = filters_.rbegin(); it != filters_.rend(); ++it) {
    if (it->MightContainHash(hash)) return true;
  }
  return false;
}

double ScalableBloomFilter::ApproximateElementCount() const {
  double n = 0;
  for (const BloomFilter& f : filters_) n += f.ApproximateElementCount();
  return n;
}

ScalableBloomFilterInfo ScalableBloomFilter::Info() const {
  ScalableBloomFilterInfo info;
  info.options = options_;
  info.items = items_;
  double pass = 1.0;  // probability that an absent key passes no sub-filter
  for (size_t i = 0; i < filters_.size(); i++) {
    ScalableBloomSubFilterInfo sub;
    uint64_t capacity = 0;
    Status s = SubFilterShape(options_, i, &capacity, &sub.target_fp_rate);
    s.PermitUncheckedError();  // Every stored sub-filter passed this check.
    sub.bloom = filters_[i].Info();
    sub.capacity = sub.bloom.capacity;
    info.total_capacity += sub.capacity;
    info.bytes += sub.bloom.bytes;
    info.approximate_element_count += sub.bloom.approximate_element_count;
    pass *= 1.0 - sub.bloom.estimated_fp_rate;
    info.filters.push_back(sub);
  }
  info.estimated_fp_rate = 1.0 - pass;
  return info;
}

void ScalableBloomFilter::Serialize(std::string* dst) const {
  const size_t start = dst->size();
  char header[kHeaderSize] = {};
  std::memcpy(header, kMagic, sizeof(kMagic));
  header[kVersionOffset] = static_cast<char>(kFormatVersion);
  header[kFlagsOffset] =
      static_cast<char>(options_.non_scaling ? kFlagNonScaling : 0);
  EncodeFixed32(header + kExpansionOffset, options_.expansion);
  EncodeFixed64(header + kCapacityOffset, options_.capacity);
  EncodeFixed64(header + kFpRateOffset,
                std::bit_cast<uint64_t>(options_.fp_rate));
  EncodeFixed64(header + kItemsOffset, items_);
  EncodeFixed32(header + kCountOffset, static_cast<uint32_t>(filters_.size()));
  dst->append(header, kHeaderSize);
  std::string sub;
  for (const BloomFilter& f : filters_) {
    sub.clear();
    f.Serialize(&sub);
    PutFixed64(dst, sub.size());
    dst->append(sub);
  }
  PutFixed32(dst, BlockChecksum(dst->data() + start, dst->size() - start));
}

Status ScalableBloomFilter::Deserialize(const Slice& input,
                                        ScalableBloomFilter* out) {
  const char* p = input.data();
  const size_t size = input.size();
  if (size < kHeaderSize + kChecksumSize) {
    return Corrupt("truncated: " + std::to_string(size) +
                       " bytes, an encoded filter takes at least " +
                       std::to_string(kHeaderSize + kChecksumSize),
                   0);
  }
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) {
    return Corrupt("bad magic (not a serialized ScalableBloomFilter)", 0);
  }
  const unsigned version = static_cast<unsigned char>(p[kVersionOffset]);
  if (version != kFormatVersion) {
    return Corrupt("unsupported format version " + std::to_string(version),
                   kVersionOffset);
  }
  const uint32_t count = DecodeFixed32(p + kCountOffset);
  if (count > kMaxSubFilters) {
    return Corrupt("too many sub-filters (" + std::to_string(count) + ")",
                   kCountOffset);
  }
  // The record lengths decide where the checksum is: walk them against the
  // input size first, so that a cut or extended input says so.
  const size_t body_end = size - kChecksumSize;
  std::vector<Slice> records;
  size_t pos = kHeaderSize;
  for (uint32_t i = 0; i < count; i++) {
    if (body_end - pos < kLengthSize) {
      return Corrupt("size mismatch: sub-filter " + std::to_string(i + 1) +
                         " of " + std::to_string(count) +
                         " is missing (truncated?)",
                     pos);
    }
    const uint64_t length = DecodeFixed64(p + pos);
    if (length > body_end - pos - kLengthSize) {
      return Corrupt("size mismatch: sub-filter " + std::to_string(i + 1) +
                         " declares " + std::to_string(length) + " bytes, " +
                         std::to_string(body_end - pos - kLengthSize) +
                         " remain (truncated?)",
                     pos);
    }
    records.emplace_back(p + pos + kLengthSize, static_cast<size_t>(length));
    pos += kLengthSize + static_cast<size_t>(length);
  }
  if (pos != body_end) {
    return Corrupt("size mismatch: " + std::to_string(body_end - pos) +
                       " bytes after the last sub-filter (trailing bytes?)",
                   pos);
  }
  const uint32_t stored = DecodeFixed32(p + body_end);
  const uint32_t actual = BlockChecksum(p, body_end);
  if (stored != actual) {
    return Corrupt("checksum mismatch (stored " + std::to_string(stored) +
                       ", computed " + std::to_string(actual) + ")",
                   body_end);
  }
  const unsigned flags = static_cast<unsigned char>(p[kFlagsOffset]);
  if ((flags & ~unsigned{kFlagNonScaling}) != 0) {
    return Corrupt("unknown flags " + std::to_string(flags), kFlagsOffset);
  }
  if (p[kReservedOffset] != 0 || p[kReservedOffset + 1] != 0) {
    return Corrupt("reserved bytes are not zero", kReservedOffset);
  }
  ScalableBloomFilter f;
  f.options_.non_scaling = (flags & kFlagNonScaling) != 0;
  f.options_.expansion = DecodeFixed32(p + kExpansionOffset);
  f.options_.capacity = DecodeFixed64(p + kCapacityOffset);
  f.options_.fp_rate = std::bit_cast<double>(DecodeFixed64(p + kFpRateOffset));
  f.items_ = DecodeFixed64(p + kItemsOffset);
  const std::string problem = OptionsProblem(f.options_);
  if (!problem.empty()) {
    return Corrupt("invalid options (" + problem + ")", kExpansionOffset);
  }

  uint64_t sum = 0;
  pos = kHeaderSize;
  for (uint32_t i = 0; i < count; i++) {
    const std::string which = "sub-filter " + std::to_string(i + 1);
    uint64_t capacity = 0;
    double rate = 0;
    if (!SubFilterShape(f.options_, i, &capacity, &rate).ok()) {
      return Corrupt(which + " is more than these options allow", kCountOffset);
    }
    BloomFilter sub;
    const Status s = BloomFilter::Deserialize(records[i], &sub);
    if (!s.ok()) return Corrupt(which + ": " + s.message(), pos + kLengthSize);
    // Full sub-filters before the last, none over its capacity.
    const uint64_t items = sub.items_added();
    const bool last = i + 1 == count;
    if (sub.capacity() != capacity || sub.bit_count() == 0 ||
        items > capacity || (!last && items != capacity)) {
      return Corrupt(which + " does not fit the chain (capacity " +
                         std::to_string(sub.capacity()) + ", expected " +
                         std::to_string(capacity) + "; " +
                         std::to_string(items) + " items)",
                     pos + kLengthSize);
    }
    sum += items;
    f.filters_.push_back(std::move(sub));
    pos += kLengthSize + records[i].size();
  }
  if (sum != f.items_) {
    return Corrupt("item count " + std::to_string(f.items_) +
                       " is not the sum over the sub-filters (" +
                       std::to_string(sum) + ")",
                   kItemsOffset);
  }
  *out = std::move(f);
  return Status::OK();
}

}  // namespace bloomkv
