// The standalone StaticFilter (include/bloomkv/static_filter.h): the binary
// fuse core of util/binary_fuse.h, holding one segment filter encoding, plus
// its own serialization.
//
// Serialization (all constants never change: on disk; little-endian):
//   offset  size  field
//   0       8     magic "BKVSTATF"
//   8       1     format version (1)
//   9       1     fingerprint bits (8 or 16)
//   10      2     reserved, 0
//   12      8     number of distinct keys
//   20      8     filter length F (0 iff there are no keys)
//   28      F     the binary fuse segment filter encoding
//   28+F    4     BlockChecksum of bytes [0, 28+F)
//
// Thread-safety: see the header.
#include "bloomkv/static_filter.h"

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "util/binary_fuse.h"
#include "util/coding.h"
#include "util/hash.h"

namespace bloomkv {

namespace {

namespace bf = binary_fuse;

// never change: on disk.
constexpr char kMagic[8] = {'B', 'K', 'V', 'S', 'T', 'A', 'T', 'F'};
constexpr unsigned char kFormatVersion = 1;
constexpr size_t kVersionOffset = 8;
constexpr size_t kBitsOffset = 9;
constexpr size_t kReservedOffset = 10;
constexpr size_t kNumKeysOffset = 12;
constexpr size_t kFilterLengthOffset = 20;
constexpr size_t kHeaderSize = 28;
constexpr size_t kChecksumSize = 4;

int RoundBits(int fingerprint_bits) { return fingerprint_bits <= 12 ? 8 : 16; }

Status Corrupt(const std::string& what, size_t offset) {
  return Status::Corruption("static filter",
                            what + " at offset " + std::to_string(offset));
}

}  // namespace

StaticFilter::StaticFilter(std::string filter, uint64_t num_keys,
                           int fingerprint_bits)
    : filter_(std::move(filter)),
      num_keys_(num_keys),
      fingerprint_bits_(fingerprint_bits) {}

StaticFilter StaticFilter::Build(const Slice* keys, size_t n,
                                 int fingerprint_bits) {
  std::vector<uint64_t> hashes(n);
  for (size_t i = 0; i < n; i++) hashes[i] = KeyHash(keys[i]);
  return BuildFromHashes(hashes.data(), n, fingerprint_bits);
}

StaticFilter StaticFilter::BuildFromHashes(const uint64_t* hashes, size_t n,
                                           int fingerprint_bits) {
  const int bits = RoundBits(fingerprint_bits);
  std::string filter;
  bf::BuildStats stats;
  bf::Build(hashes, n, bits, &filter, &stats);
  if (stats.distinct_keys == 0) filter.clear();
  return StaticFilter(std::move(filter), stats.distinct_keys, bits);
}

StaticFilter::StaticFilter(StaticFilter&& other) noexcept
    : filter_(std::exchange(other.filter_, std::string())),
      num_keys_(std::exchange(other.num_keys_, 0)),
      fingerprint_bits_(std::exchange(other.fingerprint_bits_, 8)) {}

StaticFilter& StaticFilter::operator=(StaticFilter&& other) noexcept {
  if (this != &other) {
    filter_ = std::exchange(other.filter_, std::string());
    num_keys_ = std::exchange(other.num_keys_, 0);
    fingerprint_bits_ = std::exchange(other.fingerprint_bits_, 8);
  }
  return *this;
}

StaticFilter::~StaticFilter() = default;

bool StaticFilter::MightContain(const Slice& key) const {
  return MightContainHash(KeyHash(key));
}

bool StaticFilter::MightContainHash(uint64_t hash) const {
  if (filter_.empty()) return false;
  bf::FilterView view;
  // Built or deserialized (and so parsed) by this class; the check only
  // guards the invariant.
  if (!bf::Parse(filter_, fingerprint_bits_, &view, nullptr)) return true;
  return bf::MayContain(view, hash);
}

double StaticFilter::bits_per_key() const {
  return num_keys_ == 0 ? 0.0
                        : 8.0 * static_cast<double>(filter_.size()) /
                              static_cast<double>(num_keys_);
}

double StaticFilter::fp_rate() const {
  if (filter_.empty()) return 0.0;
  bf::FilterView view;
  if (!bf::Parse(filter_, fingerprint_bits_, &view, nullptr) ||
      view.match_all) {
    return 1.0;
  }
  return view.empty ? 0.0 : std::ldexp(1.0, -fingerprint_bits_);
}

void StaticFilter::Serialize(std::string* dst) const {
  const size_t start = dst->size();
  char header[kHeaderSize] = {};
  std::memcpy(header, kMagic, sizeof(kMagic));
  header[kVersionOffset] = static_cast<char>(kFormatVersion);
  header[kBitsOffset] = static_cast<char>(fingerprint_bits_);
  EncodeFixed64(header + kNumKeysOffset, num_keys_);
  EncodeFixed64(header + kFilterLengthOffset, filter_.size());
  dst->append(header, kHeaderSize);
  dst->append(filter_);
  PutFixed32(dst, BlockChecksum(dst->data() + start, dst->size() - start));
}

Status StaticFilter::Deserialize(const Slice& input, StaticFilter* out) {
  const char* p = input.data();
  const size_t size = input.size();
  if (size < kHeaderSize + kChecksumSize) {
    return Corrupt("truncated: " + std::to_string(size) +
                       " bytes, an encoded filter takes at least " +
                       std::to_string(kHeaderSize + kChecksumSize),
                   0);
  }
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) {
    return Corrupt("bad magic (not a serialized StaticFilter)", 0);
  }
  const unsigned version = static_cast<unsigned char>(p[kVersionOffset]);
  if (version != kFormatVersion) {
    return Corrupt("unsupported format version " + std::to_string(version),
                   kVersionOffset);
  }
  // The filter length decides where the checksum is: checked against the
  // input size first, so a truncated input says so.
  const uint64_t length = DecodeFixed64(p + kFilterLengthOffset);
  const uint64_t payload = size - kHeaderSize - kChecksumSize;
  if (length != payload) {
    return Corrupt("size mismatch: header declares " + std::to_string(length) +
                       " bytes of filter, input holds " +
                       std::to_string(payload) +
                       " (truncated or trailing bytes?)",
                   kFilterLengthOffset);
  }
  const size_t checked = size - kChecksumSize;
  const uint32_t stored = DecodeFixed32(p + checked);
  const uint32_t actual = BlockChecksum(p, checked);
  if (stored != actual) {
    return Corrupt("checksum mismatch (stored " + std::to_string(stored) +
                       ", computed " + std::to_string(actual) + ")",
                   checked);
  }
  const int bits = static_cast<unsigned char>(p[kBitsOffset]);
  if (bits != 8 && bits != 16) {
    return Corrupt("invalid fingerprint bits " + std::to_string(bits),
                   kBitsOffset);
  }
  if (p[kReservedOffset] != 0 || p[kReservedOffset + 1] != 0) {
    return Corrupt("reserved bytes are not zero", kReservedOffset);
  }
  const uint64_t num_keys = DecodeFixed64(p + kNumKeysOffset);
  const Slice filter(p + kHeaderSize, length);
  if (length == 0) {
    if (num_keys != 0) {
      return Corrupt(std::to_string(num_keys) + " keys but no filter",
                     kNumKeysOffset);
    }
  } else {
    bf::FilterView view;
    std::string why;
    if (!bf::Parse(filter, bits, &view, &why)) {
      return Corrupt("invalid filter (" + why + ")", kHeaderSize);
    }
    // Every key is placed at a slot of its own.
    const uint64_t slots = view.empty
                               ? 0
                               : view.segment_count_length +
                                     (uint64_t{2} << view.segment_length_log2);
    if (num_keys == 0 || (!view.match_all && num_keys > slots)) {
      return Corrupt("key count " + std::to_string(num_keys) +
                         " does not fit a filter of " + std::to_string(slots) +
                         " slots",
                     kNumKeysOffset);
    }
  }
  *out = StaticFilter(filter.ToString(), num_keys, bits);
  return Status::OK();
}

}  // namespace bloomkv
