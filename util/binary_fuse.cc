// Binary fuse filter core; see binary_fuse.h and docs/filters.md.
//
// Construction, for a seed: every hash is remixed with the seed into m, the
// m are grouped by their top bits (and, after a failed attempt, sorted and
// deduplicated: Remix is bijective, so equal m are equal hashes), and then,
// for the n keys:
//   1. Count pass: every key adds itself to its three slots: count[s] += 1,
//      xors[s] ^= m (the remixed hash), so a slot used by one key names it.
//   2. Peeling: a slot with count 1 belongs to one remaining key; that key is
//      removed from its other two slots and recorded as "placed at s", and
//      every slot that drops to count 1 is peeled next. Slots are scanned in
//      index order and the chain of new singletons is followed at once, so
//      the work moves through the array front to back (a key's slots are in
//      three consecutive segments). All n keys peeled: success; otherwise
//      the key set has a 2-core under this seed, and the next seed is tried.
//   3. Assignment, in reverse peeling order: the key placed at s sets
//      F[s] = fp ^ F[a] ^ F[b] for its other slots a, b. Keys placed later in
//      this order (peeled earlier) never use s, so their equations hold.
// xors[s] is left at the placed key's m when s is peeled (no remaining key
// uses s any more), so the peeling order needs only the slot: 4 bytes a key.
// A key's first slot grows with m, so with the keys grouped by m the count
// pass and the assignment also move through the array front to back, and
// the slots they touch are in the caches.
//
// Thread-safety: see the header.
#include "util/binary_fuse.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "util/coding.h"

namespace bloomkv {
namespace binary_fuse {

namespace {

// The first seed and the step between seeds: builds are deterministic, so
// the same keys always give the same bytes. Not on disk (the seed used is
// stored).
constexpr uint64_t kFirstSeed = 0x726F6F6C62656B76ull;  // arbitrary
constexpr uint64_t kSeedStep = 0x9E3779B97F4A7C15ull;

void AppendHeader(int bits, int log2, unsigned char flags,
                  uint32_t segment_count, uint64_t seed, std::string* dst) {
  char header[kHeaderSize] = {};
  header[kVersionOffset] = static_cast<char>(kFormatVersion);
  header[kFingerprintBitsOffset] = static_cast<char>(bits);
  header[kSegmentLengthLog2Offset] = static_cast<char>(log2);
  header[kFlagsOffset] = static_cast<char>(flags);
  EncodeFixed32(header + kSegmentCountOffset, segment_count);
  EncodeFixed64(header + kSeedOffset, seed);
  dst->append(header, kHeaderSize);
}

template <typename T>
uint64_t Bytes(const std::vector<T>& v) {
  return static_cast<uint64_t>(v.capacity()) * sizeof(T);
}

// Orders *v by its top kGroupBits bits (one counting pass and one scatter
// through a scratch buffer of the same size, freed before the peeling arrays
// are allocated), which is all the locality the build needs: a group spans
// 1/2048 of the array. Equal values end up in the same group but not
// necessarily next to each other. Below kRadixMin elements a full std::sort.
void GroupByTopBits(std::vector<uint64_t>* v, uint64_t* peak_bytes) {
  constexpr size_t kRadixMin = 4096;
  constexpr int kGroupBits = 11;
  constexpr size_t kGroups = size_t{1} << kGroupBits;
  if (v->size() < kRadixMin) {
    std::sort(v->begin(), v->end());
    return;
  }
  std::vector<uint64_t> scratch(v->size());
  *peak_bytes = std::max<uint64_t>(*peak_bytes, Bytes(*v) + Bytes(scratch));
  std::vector<size_t> start(kGroups + 1, 0);
  for (uint64_t x : *v) start[(x >> (64 - kGroupBits)) + 1]++;
  for (size_t g = 0; g < kGroups; g++) start[g + 1] += start[g];
  for (uint64_t x : *v) scratch[start[x >> (64 - kGroupBits)]++] = x;
  v->swap(scratch);
}

// One attempt with one seed and layout, from the distinct remixed hashes
// `ms` of that seed in ascending order. On success appends the filter to
// *dst and returns true; *peak_bytes is raised to the working memory held.
bool TryBuild(const std::vector<uint64_t>& ms, const Layout& layout,
              uint64_t seed, int bits, std::string* dst, uint64_t* peak_bytes) {
  const uint64_t array_length = layout.array_length();
  if (array_length > (uint64_t{1} << 32)) return false;  // 32-bit slots
  const uint64_t scl = uint64_t{layout.segment_count}
                       << layout.segment_length_log2;
  const int log2 = layout.segment_length_log2;
  const size_t n = ms.size();

  std::vector<uint8_t> count(array_length, 0);
  std::vector<uint64_t> xors(array_length, 0);
  for (uint64_t m : ms) {
    const Slots slots = SlotsFor(m, scl, log2);
    for (uint64_t s : slots.s) {
      // 255 keys in one slot cannot be peeled apart anyway; another seed.
      if (count[s] == 255) return false;
      count[s]++;
      xors[s] ^= m;
    }
  }

  std::vector<uint32_t> order;  // slot each key was placed at, peeling order
  order.reserve(n);
  std::vector<uint32_t> pending;  // slots that reached count 1, to peel
  for (uint64_t i = 0; i < array_length; i++) {
    if (count[i] != 1) continue;
    pending.push_back(static_cast<uint32_t>(i));
    while (!pending.empty()) {
      const uint32_t s = pending.back();
      pending.pop_back();
      if (count[s] != 1) continue;  // emptied since it was queued
      const uint64_t m = xors[s];
      order.push_back(s);
      count[s] = 0;
      const Slots slots = SlotsFor(m, scl, log2);
      for (uint64_t t : slots.s) {
        if (t == s) continue;
        xors[t] ^= m;
        if (--count[t] == 1) pending.push_back(static_cast<uint32_t>(t));
      }
    }
  }
  *peak_bytes = std::max(*peak_bytes, Bytes(ms) + Bytes(count) + Bytes(xors) +
                                          Bytes(order) + Bytes(pending));
  if (order.size() != n) return false;
  count = std::vector<uint8_t>();

  AppendHeader(bits, log2, 0, layout.segment_count, seed, dst);
  const size_t start = dst->size();
  const size_t width = static_cast<size_t>(bits / 8);
  dst->resize(start + array_length * width, '\0');
  auto* f = reinterpret_cast<unsigned char*>(&(*dst)[start]);
  for (size_t i = n; i-- > 0;) {
    const uint32_t s = order[i];
    const uint64_t m = xors[s];
    const Slots slots = SlotsFor(m, scl, log2);
    if (bits == 8) {
      f[s] = static_cast<unsigned char>(Fingerprint(m, 8) ^ f[slots.s[0]] ^
                                        f[slots.s[1]] ^ f[slots.s[2]]);
    } else {
      // F[s] is still 0, so XOR-ing all three slots gives the other two.
      const uint32_t v =
          Fingerprint(m, 16) ^
          DecodeFixed16(reinterpret_cast<char*>(f) + 2 * slots.s[0]) ^
          DecodeFixed16(reinterpret_cast<char*>(f) + 2 * slots.s[1]) ^
          DecodeFixed16(reinterpret_cast<char*>(f) + 2 * slots.s[2]);
      EncodeFixed16(reinterpret_cast<char*>(f) + 2 * s,
                    static_cast<uint16_t>(v));
    }
  }
  return true;
}

}  // namespace

Layout LayoutFor(uint64_t num_keys, double growth) {
  Layout layout;
  if (num_keys == 0) return layout;
  const double n = static_cast<double>(num_keys);
  const int log2 =
      static_cast<int>(std::floor(std::log(n) / std::log(3.33) + 2.25));
  layout.segment_length_log2 = std::clamp(log2, 2, kMaxSegmentLengthLog2);
  // One key fills no more than one segment (12 slots in the array).
  const double factor =
      num_keys == 1
          ? 0.0
          : std::max(1.125, 0.875 + 0.25 * std::log(1e6) / std::log(n));
  const double slots = n * factor * (1.0 + growth);
  const auto segments = static_cast<uint64_t>(
      std::ceil(slots / static_cast<double>(layout.segment_length())));
  layout.segment_count = static_cast<uint32_t>(segments > 2 ? segments - 2 : 1);
  return layout;
}

bool Parse(const Slice& filter, int expected_bits, FilterView* view,
           std::string* why) {
  auto fail = [why](const std::string& what) {
    if (why != nullptr) *why = what;
    return false;
  };
  if (filter.size() < kHeaderSize) {
    return fail("truncated: " + std::to_string(filter.size()) +
                " bytes, the header takes " + std::to_string(kHeaderSize));
  }
  const auto* p = reinterpret_cast<const unsigned char*>(filter.data());
  if (p[kVersionOffset] != kFormatVersion) {
    return fail("unsupported format version " +
                std::to_string(p[kVersionOffset]));
  }
  const int bits = p[kFingerprintBitsOffset];
  if ((bits != 8 && bits != 16) ||
      (expected_bits != 0 && bits != expected_bits)) {
    return fail("fingerprint bits " + std::to_string(bits) +
                (expected_bits != 0
                     ? " (expected " + std::to_string(expected_bits) + ")"
                     : std::string(" (expected 8 or 16)")));
  }
  const int log2 = p[kSegmentLengthLog2Offset];
  if (log2 > kMaxSegmentLengthLog2) {
    return fail("segment length 2^" + std::to_string(log2) + " above 2^" +
                std::to_string(kMaxSegmentLengthLog2));
  }
  const unsigned flags = p[kFlagsOffset];
  if ((flags & ~unsigned{kFlagMatchAll}) != 0) {
    return fail("unknown flags " + std::to_string(flags));
  }
  const uint32_t segment_count =
      DecodeFixed32(filter.data() + kSegmentCountOffset);
  if (flags == kFlagMatchAll && segment_count != 0) {
    return fail("match-all filter with " + std::to_string(segment_count) +
                " segments");
  }
  Layout layout;
  layout.segment_length_log2 = log2;
  layout.segment_count = segment_count;
  // At most (2^32 + 1) * 2^18 * 2 bytes: no overflow.
  const uint64_t body = layout.array_length() * static_cast<uint64_t>(bits / 8);
  if (filter.size() - kHeaderSize != body) {
    return fail("size mismatch: header declares " + std::to_string(body) +
                " bytes of fingerprints, the filter holds " +
                std::to_string(filter.size() - kHeaderSize));
  }
  view->fingerprints = p + kHeaderSize;
  view->seed = DecodeFixed64(filter.data() + kSeedOffset);
  view->segment_count_length = uint64_t{segment_count} << log2;
  view->segment_length_log2 = log2;
  view->fingerprint_bits = bits;
  view->empty = segment_count == 0;
  view->match_all = flags == kFlagMatchAll;
  return true;
}

void Build(const uint64_t* hashes, size_t n, int fingerprint_bits,
           std::string* dst, BuildStats* stats, int max_attempts) {
  BuildStats st;
  st.distinct_keys = n;
  bool built = n == 0;
  if (built) AppendHeader(fingerprint_bits, 0, 0, 0, 0, dst);
  std::vector<uint64_t> ms;
  // Duplicates are removed only after an attempt fails: a segment's hashes
  // are of distinct user keys, so they repeat only when 64-bit hashes
  // collide, and a duplicate always makes an attempt fail (its two copies
  // share all three slots, so neither is ever alone in one). When removing
  // them shrinks the set, the seeds start again from the first, so a key
  // set gives the same filter however often its keys were repeated.
  bool deduplicated = false;
  uint64_t seed = kFirstSeed;
  int tries = 0;  // with this set of keys, for the growth schedule
  for (int attempt = 0; attempt < max_attempts && !built; attempt++) {
    ms.assign(hashes, hashes + n);
    for (uint64_t& m : ms) m = Remix(m, seed);
    st.peak_temp_bytes = std::max(st.peak_temp_bytes, Bytes(ms));
    if (deduplicated) {
      // Sorted is grouped too. A retry is rare, so std::sort will do.
      std::sort(ms.begin(), ms.end());
      ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
      st.distinct_keys = ms.size();
    } else {
      GroupByTopBits(&ms, &st.peak_temp_bytes);
    }
    if (ms.size() > kMaxKeys) break;
    const double growth = (tries / kAttemptsPerSize) * kGrowthPerStep;
    st.attempts++;
    tries++;
    built = TryBuild(ms, LayoutFor(ms.size(), growth), seed, fingerprint_bits,
                     dst, &st.peak_temp_bytes);
    seed += kSeedStep;
    if (!built && !deduplicated) {
      deduplicated = true;
      std::sort(ms.begin(), ms.end());
      if (std::adjacent_find(ms.begin(), ms.end()) != ms.end()) {
        seed = kFirstSeed;
        tries = 0;
      }
    }
  }
  if (!built) {
    // Matches every key: useless, but never a false negative.
    AppendHeader(fingerprint_bits, 0, kFlagMatchAll, 0, 0, dst);
    st.gave_up = true;
  }
  if (stats != nullptr) *stats = st;
}

}  // namespace binary_fuse
}  // namespace bloomkv
