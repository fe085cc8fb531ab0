// CuckooFilter (include/bloomkv/cuckoo_filter.h): partial-key cuckoo
// hashing over packed fingerprint slots, relocation with undo, and the
// serialization.
//
// Layout (never change: on disk). For a key hash h, a filter of n buckets
// of b slots and f-bit fingerprints:
//   bucket1 = ((h >> 32) * n) >> 32
//   fp      = 1 + (((h mod 2^32) * (2^f - 1)) >> 32)       in [1, 2^f - 1]
//   c       = (Fmix32(fp) * n) >> 32
//   bucket2 = (c - bucket1) mod n
// so bucket1 = (c - bucket2) mod n as well: either bucket and the
// fingerprint give the other, for any n (no power of two needed). Fmix32 is
// MurmurHash3's 32-bit finalizer.
//
// Serialization (little-endian):
//   offset  size  field
//   0       8     magic "BKVCUCKO"
//   8       1     format version (1)
//   9       1     fingerprint bits f (4..32)
//   10      1     bucket size b (1..8)
//   11      1     reserved, 0
//   12      4     max kicks (1..65535)
//   16      8     capacity (1..n*b)
//   24      8     number of buckets n (1..2^32)
//   32      8     items (= slots holding a fingerprint)
//   40      T     slots, T = ceil(n * b * f / 8): slot s is bits
//                 [s*f, (s+1)*f), bit i of the table = bit i%8 of byte i/8;
//                 0 = free; the bits after the last slot are 0
//   40+T    4     BlockChecksum of bytes [0, 40+T)
//
// Thread-safety: see the header.
#include "bloomkv/cuckoo_filter.h"

#include <cmath>
#include <cstring>
#include <utility>

#include "util/coding.h"
#include "util/hash.h"

namespace bloomkv {

namespace {

// never change: on disk.
constexpr char kMagic[8] = {'B', 'K', 'V', 'C', 'U', 'C', 'K', 'O'};
constexpr unsigned char kFormatVersion = 1;
constexpr size_t kVersionOffset = 8;
constexpr size_t kBitsOffset = 9;
constexpr size_t kBucketSizeOffset = 10;
constexpr size_t kReservedOffset = 11;
constexpr size_t kMaxKicksOffset = 12;
constexpr size_t kCapacityOffset = 16;
constexpr size_t kNumBucketsOffset = 24;
constexpr size_t kItemsOffset = 32;
constexpr size_t kHeaderSize = 40;
constexpr size_t kChecksumSize = 4;
constexpr int kMinFingerprintBits = 4;
constexpr int kMaxFingerprintBits = 32;
constexpr int kMaxBucketSize = 8;
constexpr int kMaxKicks = 65535;
constexpr uint64_t kMaxBuckets = uint64_t{1} << 32;

// In memory only: zero bytes after the table so that every slot is read
// with one 8-byte load (a slot spans at most 5 bytes).
constexpr size_t kTablePadding = 8;

// Share of the slots a filter is sized to fill at its capacity, per bucket
// size: below the load at which inserts with 500 kicks start to fail
// (measured in docs/filters.md, "Cuckoo filter: load").
constexpr double kSizingLoad[kMaxBucketSize + 1] = {
    0, 0.42, 0.80, 0.90, 0.94, 0.95, 0.96, 0.96, 0.97};

uint32_t Fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// Probability that an absent key matches some of `occupied` fingerprints of
// f bits each.
double MatchRate(int f, double occupied) {
  const double per_slot = 1.0 / (std::ldexp(1.0, f) - 1.0);
  return -std::expm1(occupied * std::log1p(-per_slot));
}

uint64_t TableBytesFor(uint64_t buckets, int bucket_size, int bits) {
  return (buckets * static_cast<uint64_t>(bucket_size) *
              static_cast<uint64_t>(bits) +
          7) /
         8;
}

Status Corrupt(const std::string& what, size_t offset) {
  return Status::Corruption("cuckoo filter",
                            what + " at offset " + std::to_string(offset));
}

Status Invalid(const std::string& what) {
  return Status::InvalidArgument("cuckoo filter", what);
}

}  // namespace

struct CuckooFilter::Slots {
  uint64_t bucket1;
  uint64_t bucket2;
  uint32_t fingerprint;
};

Status CuckooFilter::Create(const CuckooFilterOptions& options,
                            CuckooFilter* out) {
  const CuckooFilterOptions& o = options;
  if (o.capacity == 0) return Invalid("capacity must be at least 1");
  if (o.bucket_size < 1 || o.bucket_size > kMaxBucketSize) {
    return Invalid("bucket_size " + std::to_string(o.bucket_size) +
                   " is outside [1, 8]");
  }
  if (o.fingerprint_bits != 0 && (o.fingerprint_bits < kMinFingerprintBits ||
                                  o.fingerprint_bits > kMaxFingerprintBits)) {
    return Invalid("fingerprint_bits " + std::to_string(o.fingerprint_bits) +
                   " is outside [4, 32] (or 0: from fp_rate)");
  }
  if (o.fingerprint_bits == 0 && !(o.fp_rate > 0 && o.fp_rate <= 0.5)) {
    return Invalid("fp_rate " + std::to_string(o.fp_rate) +
                   " is outside (0, 0.5]");
  }
  if (o.max_kicks < 1 || o.max_kicks > kMaxKicks) {
    return Invalid("max_kicks " + std::to_string(o.max_kicks) +
                   " is outside [1, 65535]");
  }
  // Small filters fill unevenly: the extra 4 sqrt(capacity) slots (0.4% at
  // 10^6 keys) let 3,600 fills of 1 to 500 keys reach their capacity with
  // 3 and more slots per bucket (docs/filters.md).
  const double cap = static_cast<double>(o.capacity);
  const double buckets =
      std::ceil((cap / kSizingLoad[o.bucket_size] + 4.0 * std::sqrt(cap)) /
                o.bucket_size);
  if (buckets > static_cast<double>(kMaxBuckets)) {
    return Invalid("capacity " + std::to_string(o.capacity) +
                   " needs more than 2^32 buckets");
  }
  const auto num_buckets = static_cast<uint64_t>(buckets);
  // The rate at capacity: both buckets of an absent key are about as full
  // as the filter.
  const double occupied =
      2.0 * static_cast<double>(o.capacity) / static_cast<double>(num_buckets);
  int bits = o.fingerprint_bits;
  if (bits == 0) {
    bits = kMinFingerprintBits;
    while (bits < kMaxFingerprintBits &&
           MatchRate(bits, occupied) > o.fp_rate) {
      bits++;
    }
    if (MatchRate(bits, occupied) > o.fp_rate) {
      return Invalid("fp_rate " + std::to_string(o.fp_rate) +
                     " needs fingerprints of more than 32 bits");
    }
  }
  CuckooFilter f;
  f.options_ = o;
  f.options_.fingerprint_bits = bits;
  f.num_buckets_ = num_buckets;
  f.fingerprint_bits_ = bits;
  f.table_.assign(f.TableBytes() + kTablePadding, 0);
  *out = std::move(f);
  return Status::OK();
}

CuckooFilter::CuckooFilter(CuckooFilter&& other) noexcept
    : options_(std::exchange(other.options_, CuckooFilterOptions())),
      num_buckets_(std::exchange(other.num_buckets_, 0)),
      fingerprint_bits_(std::exchange(other.fingerprint_bits_, 0)),
      items_(std::exchange(other.items_, 0)),
      table_(std::exchange(other.table_, {})),
      rng_(other.rng_) {}

CuckooFilter& CuckooFilter::operator=(CuckooFilter&& other) noexcept {
  if (this != &other) {
    options_ = std::exchange(other.options_, CuckooFilterOptions());
    num_buckets_ = std::exchange(other.num_buckets_, 0);
    fingerprint_bits_ = std::exchange(other.fingerprint_bits_, 0);
    items_ = std::exchange(other.items_, 0);
    table_ = std::exchange(other.table_, {});
    rng_ = other.rng_;
  }
  return *this;
}

CuckooFilter::~CuckooFilter() = default;

uint64_t CuckooFilter::TableBytes() const {
  return TableBytesFor(num_buckets_, options_.bucket_size, fingerprint_bits_);
}

uint64_t CuckooFilter::NextRandom() {
  // xorshift64*: victims only need to differ from one kick to the next.
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return rng_ * 0x2545F4914F6CDD1Dull;
}

CuckooFilter::Slots CuckooFilter::Locate(uint64_t hash) const {
  Slots s;
  s.bucket1 = ((hash >> 32) * num_buckets_) >> 32;
  const uint64_t max_fp = (uint64_t{1} << fingerprint_bits_) - 1;
  s.fingerprint =
      static_cast<uint32_t>(1 + (((hash & 0xFFFFFFFFu) * max_fp) >> 32));
  s.bucket2 = AltBucket(s.bucket1, s.fingerprint);
  return s;
}

uint64_t CuckooFilter::AltBucket(uint64_t bucket, uint32_t fingerprint) const {
  const uint64_t c = (uint64_t{Fmix32(fingerprint)} * num_buckets_) >> 32;
  return c >= bucket ? c - bucket : c + num_buckets_ - bucket;
}

uint32_t CuckooFilter::Slot(uint64_t bucket, int slot) const {
  const uint64_t bit = (bucket * static_cast<uint64_t>(options_.bucket_size) +
                        static_cast<uint64_t>(slot)) *
                       static_cast<uint64_t>(fingerprint_bits_);
  const uint64_t word = DecodeFixed64(table_.data() + (bit >> 3));
  const uint64_t mask = (uint64_t{1} << fingerprint_bits_) - 1;
  return static_cast<uint32_t>((word >> (bit & 7)) & mask);
}

void CuckooFilter::SetSlot(uint64_t bucket, int slot, uint32_t fingerprint) {
  const uint64_t bit = (bucket * static_cast<uint64_t>(options_.bucket_size) +
                        static_cast<uint64_t>(slot)) *
                       static_cast<uint64_t>(fingerprint_bits_);
  char* p = table_.data() + (bit >> 3);
  const unsigned shift = bit & 7;
  const uint64_t mask = ((uint64_t{1} << fingerprint_bits_) - 1) << shift;
  const uint64_t word =
      (DecodeFixed64(p) & ~mask) | (uint64_t{fingerprint} << shift);
  EncodeFixed64(p, word);
}

bool CuckooFilter::InsertIntoBucket(uint64_t bucket, uint32_t fingerprint) {
  for (int j = 0; j < options_.bucket_size; j++) {
    if (Slot(bucket, j) == 0) {
      SetSlot(bucket, j, fingerprint);
      return true;
    }
  }
  return false;
}

int CuckooFilter::CountInBucket(uint64_t bucket, uint32_t fingerprint) const {
  const auto b = static_cast<uint64_t>(options_.bucket_size);
  const auto f = static_cast<unsigned>(fingerprint_bits_);
  const uint64_t mask = (uint64_t{1} << f) - 1;
  const uint64_t bit = bucket * b * f;
  int n = 0;
  if (b * f <= 57) {
    // The whole bucket (with its start's offset in the byte) in one load:
    // the common geometries (4 slots of up to 14 bits) take this path.
    const uint64_t word =
        DecodeFixed64(table_.data() + (bit >> 3)) >> (bit & 7);
    for (unsigned j = 0; j < b; j++) {
      n += ((word >> (j * f)) & mask) == fingerprint;
    }
    return n;
  }
  for (int j = 0; j < options_.bucket_size; j++) {
    n += Slot(bucket, j) == fingerprint;
  }
  return n;
}

Status CuckooFilter::Add(const Slice& key) { return AddHash(KeyHash(key)); }

Status CuckooFilter::AddHash(uint64_t hash) {
  if (num_buckets_ == 0) {
    return Status::Full("cuckoo filter", "has no slots (default-constructed)");
  }
  const Slots s = Locate(hash);
  if (InsertIntoBucket(s.bucket1, s.fingerprint) ||
      InsertIntoBucket(s.bucket2, s.fingerprint)) {
    items_++;
    return Status::OK();
  }
  // Both buckets are full: move a random victim to its other bucket, and
  // so on, recording each swap so that a failed chain can be undone.
  kick_path_.clear();
  uint64_t bucket = (NextRandom() & 1) != 0 ? s.bucket1 : s.bucket2;
  uint32_t hand = s.fingerprint;
  for (int kick = 0; kick < options_.max_kicks; kick++) {
    const int j = static_cast<int>(
        ((NextRandom() >> 32) * static_cast<uint64_t>(options_.bucket_size)) >>
        32);
    const uint32_t victim = Slot(bucket, j);
    SetSlot(bucket, j, hand);
    kick_path_.push_back(bucket << 3 | static_cast<uint64_t>(j));
    hand = victim;
    bucket = AltBucket(bucket, hand);
    if (InsertIntoBucket(bucket, hand)) {
      items_++;
      return Status::OK();
    }
  }
  // Undo in reverse order: each slot gets back the fingerprint it held
  // before its swap, and the new fingerprint ends up in hand again.
  for (auto it = kick_path_.rbegin(); it != kick_path_.rend(); ++it) {
    const uint64_t b = *it >> 3;
    const int j = static_cast<int>(*it & 7);
    const uint32_t placed = Slot(b, j);
    SetSlot(b, j, hand);
    hand = placed;
  }
  return Status::Full(
      "cuckoo filter",
      "no room for the key after " + std::to_string(options_.max_kicks) +
          " relocations (" + std::to_string(items_) + " of " +
          std::to_string(num_buckets_ *
                         static_cast<uint64_t>(options_.bucket_size)) +
          " slots used, capacity " + std::to_string(options_.capacity) + ")");
}

Status CuckooFilter::AddIfAbsent(const Slice& key, bool* added) {
  return AddHashIfAbsent(KeyHash(key), added);
}

Status CuckooFilter::AddHashIfAbsent(uint64_t hash, bool* added) {
  if (added != nullptr) *added = false;
  if (MightContainHash(hash)) return Status::OK();
  Status s = AddHash(hash);
  if (s.ok() && added != nullptr) *added = true;
  return s;
}

bool CuckooFilter::Delete(const Slice& key) { return DeleteHash(KeyHash(key)); }

bool CuckooFilter::DeleteHash(uint64_t hash) {
  if (num_buckets_ == 0) return false;
  const Slots s = Locate(hash);
  for (uint64_t bucket : {s.bucket1, s.bucket2}) {
    for (int j = 0; j < options_.bucket_size; j++) {
      if (Slot(bucket, j) == s.fingerprint) {
        SetSlot(bucket, j, 0);
        items_--;
        return true;
      }
    }
  }
  return false;
}

uint64_t CuckooFilter::Count(const Slice& key) const {
  return CountHash(KeyHash(key));
}

uint64_t CuckooFilter::CountHash(uint64_t hash) const {
  if (num_buckets_ == 0) return 0;
  const Slots s = Locate(hash);
  uint64_t n = static_cast<uint64_t>(CountInBucket(s.bucket1, s.fingerprint));
  if (s.bucket2 != s.bucket1) {
    n += static_cast<uint64_t>(CountInBucket(s.bucket2, s.fingerprint));
  }
  return n;
}

bool CuckooFilter::MightContain(const Slice& key) const {
  return MightContainHash(KeyHash(key));
}

bool CuckooFilter::MightContainHash(uint64_t hash) const {
  if (num_buckets_ == 0) return false;
  const Slots s = Locate(hash);
  return CountInBucket(s.bucket1, s.fingerprint) +
             CountInBucket(s.bucket2, s.fingerprint) >
         0;
}

CuckooFilterInfo CuckooFilter::Info() const {
  CuckooFilterInfo info;
  if (num_buckets_ == 0) return info;  // default-constructed: nothing
  info.capacity = options_.capacity;
  info.num_buckets = num_buckets_;
  info.bucket_size = options_.bucket_size;
  info.fingerprint_bits = fingerprint_bits_;
  info.max_kicks = options_.max_kicks;
  info.slots = num_buckets_ * static_cast<uint64_t>(info.bucket_size);
  info.items = items_;
  info.bytes = TableBytes();
  info.bits_per_key = 8.0 * static_cast<double>(info.bytes) /
                      static_cast<double>(options_.capacity);
  info.load_factor =
      static_cast<double>(items_) / static_cast<double>(info.slots);
  const double buckets = static_cast<double>(num_buckets_);
  info.target_fp_rate =
      MatchRate(fingerprint_bits_,
                2.0 * static_cast<double>(options_.capacity) / buckets);
  info.estimated_fp_rate =
      MatchRate(fingerprint_bits_, 2.0 * static_cast<double>(items_) / buckets);
  return info;
}

void CuckooFilter::Serialize(std::string* dst) const {
  const size_t start = dst->size();
  char header[kHeaderSize] = {};
  std::memcpy(header, kMagic, sizeof(kMagic));
  header[kVersionOffset] = static_cast<char>(kFormatVersion);
  const bool empty = num_buckets_ == 0;
  header[kBitsOffset] = static_cast<char>(empty ? 0 : fingerprint_bits_);
  header[kBucketSizeOffset] =
      static_cast<char>(empty ? 0 : options_.bucket_size);
  EncodeFixed32(header + kMaxKicksOffset,
                empty ? 0 : static_cast<uint32_t>(options_.max_kicks));
  EncodeFixed64(header + kCapacityOffset, empty ? 0 : options_.capacity);
  EncodeFixed64(header + kNumBucketsOffset, num_buckets_);
  EncodeFixed64(header + kItemsOffset, items_);
  dst->append(header, kHeaderSize);
  if (!empty) dst->append(table_.data(), TableBytes());
  PutFixed32(dst, BlockChecksum(dst->data() + start, dst->size() - start));
}

Status CuckooFilter::Deserialize(const Slice& input, CuckooFilter* out) {
  const char* p = input.data();
  const size_t size = input.size();
  if (size < kHeaderSize + kChecksumSize) {
    return Corrupt("truncated: " + std::to_string(size) +
                       " bytes, an encoded filter takes at least " +
                       std::to_string(kHeaderSize + kChecksumSize),
                   0);
  }
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) {
    return Corrupt("bad magic (not a serialized CuckooFilter)", 0);
  }
  const unsigned version = static_cast<unsigned char>(p[kVersionOffset]);
  if (version != kFormatVersion) {
    return Corrupt("unsupported format version " + std::to_string(version),
                   kVersionOffset);
  }
  // The geometry decides the table's size and so where the checksum is:
  // checked against the input size first, so that a cut input says so.
  const int bits = static_cast<unsigned char>(p[kBitsOffset]);
  const int bucket_size = static_cast<unsigned char>(p[kBucketSizeOffset]);
  const uint64_t num_buckets = DecodeFixed64(p + kNumBucketsOffset);
  const bool empty = num_buckets == 0;
  if (empty ? bits != 0
            : (bits < kMinFingerprintBits || bits > kMaxFingerprintBits)) {
    return Corrupt("invalid fingerprint bits " + std::to_string(bits),
                   kBitsOffset);
  }
  if (empty ? bucket_size != 0
            : (bucket_size < 1 || bucket_size > kMaxBucketSize)) {
    return Corrupt("invalid bucket size " + std::to_string(bucket_size),
                   kBucketSizeOffset);
  }
  if (num_buckets > kMaxBuckets) {
    return Corrupt("invalid bucket count " + std::to_string(num_buckets),
                   kNumBucketsOffset);
  }
  const uint64_t table_bytes = TableBytesFor(num_buckets, bucket_size, bits);
  const uint64_t payload = size - kHeaderSize - kChecksumSize;
  if (table_bytes != payload) {
    return Corrupt(
        "size mismatch: header declares " + std::to_string(table_bytes) +
            " bytes of slots, input holds " + std::to_string(payload) +
            " (truncated or trailing bytes?)",
        kNumBucketsOffset);
  }
  const size_t checked = size - kChecksumSize;
  const uint32_t stored = DecodeFixed32(p + checked);
  const uint32_t actual = BlockChecksum(p, checked);
  if (stored != actual) {
    return Corrupt("checksum mismatch (stored " + std::to_string(stored) +
                       ", computed " + std::to_string(actual) + ")",
                   checked);
  }
  if (p[kReservedOffset] != 0) {
    return Corrupt("reserved byte is not zero", kReservedOffset);
  }
  const uint32_t max_kicks = DecodeFixed32(p + kMaxKicksOffset);
  if (empty ? max_kicks != 0
            : (max_kicks < 1 || max_kicks > static_cast<uint32_t>(kMaxKicks))) {
    return Corrupt("invalid max kicks " + std::to_string(max_kicks),
                   kMaxKicksOffset);
  }
  const uint64_t slots = num_buckets * static_cast<uint64_t>(bucket_size);
  const uint64_t capacity = DecodeFixed64(p + kCapacityOffset);
  if (empty ? capacity != 0 : (capacity < 1 || capacity > slots)) {
    return Corrupt("capacity " + std::to_string(capacity) + " does not fit " +
                       std::to_string(slots) + " slots",
                   kCapacityOffset);
  }

  CuckooFilter f;
  if (!empty) {
    f.options_.capacity = capacity;
    f.options_.bucket_size = bucket_size;
    f.options_.fingerprint_bits = bits;
    f.options_.max_kicks = static_cast<int>(max_kicks);
  }
  f.num_buckets_ = num_buckets;
  f.fingerprint_bits_ = bits;
  f.table_.assign(p + kHeaderSize, p + kHeaderSize + table_bytes);
  f.table_.resize(table_bytes + kTablePadding, 0);
  // The bits after the last slot must be clear, and the item count must be
  // the number of occupied slots (Delete relies on it never underflowing).
  const uint64_t used_bits = slots * static_cast<uint64_t>(bits);
  if (used_bits % 8 != 0 &&
      (static_cast<unsigned char>(f.table_[table_bytes - 1]) >>
       (used_bits % 8)) != 0) {
    return Corrupt("padding bits after the last slot are not zero",
                   kHeaderSize + table_bytes - 1);
  }
  uint64_t occupied = 0;
  for (uint64_t b = 0; b < num_buckets; b++) {
    for (int j = 0; j < bucket_size; j++) occupied += f.Slot(b, j) != 0;
  }
  const uint64_t items = DecodeFixed64(p + kItemsOffset);
  if (items != occupied) {
    return Corrupt("item count " + std::to_string(items) + " but " +
                       std::to_string(occupied) + " slots are occupied",
                   kItemsOffset);
  }
  f.items_ = items;
  *out = std::move(f);
  return Status::OK();
}

}  // namespace bloomkv
