// Made-up keys for filter measurements; see sampling.h.
#include "tools/kvtool/sampling.h"

#include <chrono>

namespace bloomkv::kvtool {
namespace {

constexpr size_t kRandomKeyLength = 16;
constexpr size_t kSuffixLength = 8;
constexpr char kAlphabet[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

void AppendRandomChars(Random* rnd, size_t n, std::string* dst) {
  for (size_t i = 0; i < n; i++) {
    dst->push_back(kAlphabet[rnd->Uniform(sizeof(kAlphabet) - 1)]);
  }
}

}  // namespace

uint64_t SeedFromClock() {
  return static_cast<uint64_t>(
      std::chrono::system_clock::now().time_since_epoch().count());
}

std::string RandomKey(Random* rnd) {
  std::string key;
  AppendRandomChars(rnd, kRandomKeyLength, &key);
  return key;
}

std::string KeyInsideRanges(const std::vector<SegmentInfo>& segments,
                            Random* rnd) {
  if (segments.empty()) return RandomKey(rnd);
  const SegmentInfo& s = segments[rnd->Uniform(segments.size())];
  if (s.smallest_key.size() + kSuffixLength > kMaxKeySize) {
    return RandomKey(rnd);
  }
  std::string key = s.smallest_key;
  AppendRandomChars(rnd, kSuffixLength, &key);
  return key;
}

void ProbeAbsentKeysThroughDb(DB* db, const std::vector<SegmentInfo>& segments,
                              uint64_t samples, uint64_t seed) {
  Random rnd(seed);
  ReadOptions ro;
  ro.fill_cache = false;
  std::string value;
  for (uint64_t i = 0; i < samples; i++) {
    db->Get(ro, KeyInsideRanges(segments, &rnd), &value).PermitUncheckedError();
  }
}

}  // namespace bloomkv::kvtool
