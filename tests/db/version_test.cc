// Version::ForEachCandidate against a linear scan of the levels: every
// level-0 segment newest first, then per deeper level the first segment whose
// largest key is >= the key (or the last one), each said to hold the key in
// its range exactly when its bounds do, for keys and segment bounds that
// share prefixes of every length, so that the searches and range checks over
// the keys' eight-byte prefixes meet ties, zero padding and long keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "db/version_set.h"
#include "table/internal_key.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// Keys over {a, b, 0, 0xff}, 0 to 19 bytes long.
std::string RandomKey(Random* rnd) {
  std::string k;
  const uint64_t len = rnd->Uniform(20);
  for (uint64_t i = 0; i < len; i++) {
    k.push_back(static_cast<char>("ab\x00\xff"[rnd->Uniform(4)]));
  }
  return k;
}

std::shared_ptr<FileMetaData> Segment(uint64_t number, const std::string& lo,
                                      const std::string& hi) {
  auto f = std::make_shared<FileMetaData>();
  f->number = number;
  f->smallest = MakeInternalKey(lo, 100, ValueType::kValue);
  f->largest = MakeInternalKey(hi, 100, ValueType::kValue);
  return f;
}

struct Candidate {
  int level;
  uint64_t number;
  bool in_range;
  bool operator==(const Candidate&) const = default;
};

bool InRange(const FileMetaData& f, const std::string& key) {
  return ExtractUserKey(f.smallest).compare(key) <= 0 &&
         ExtractUserKey(f.largest).compare(key) >= 0;
}

// The segments ForEachCandidate visits for key, by a scan of every level.
std::vector<Candidate> ScanCandidates(
    const std::vector<Version::FileList>& files, const std::string& key) {
  std::vector<Candidate> want;
  for (const auto& f : files[0]) {
    want.push_back({0, f->number, InRange(*f, key)});
  }
  for (int level = 1; level < kNumLevels; level++) {
    const Version::FileList& list = files[level];
    if (list.empty()) continue;
    const FileMetaData* pick = list.back().get();
    for (const auto& f : list) {
      if (ExtractUserKey(f->largest).compare(key) >= 0) {
        pick = f.get();
        break;
      }
    }
    want.push_back({level, pick->number, InRange(*pick, key)});
  }
  return want;
}

std::ostream& operator<<(std::ostream& os, const Candidate& c) {
  return os << "{L" << c.level << " #" << c.number
            << (c.in_range ? " in range}" : " out of range}");
}

TEST(VersionTest, ForEachCandidateMatchesAScanOfTheLevels) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Random rnd(seed);
    std::vector<Version::FileList> files(kNumLevels);
    uint64_t number = 1;
    // Level 0: segments over any range, newest (highest number) first.
    for (int i = 0; i < 4; i++) {
      std::string a = RandomKey(&rnd), b = RandomKey(&rnd);
      if (b < a) std::swap(a, b);
      files[0].insert(files[0].begin(), Segment(number++, a, b));
    }
    for (int level = 1; level < kNumLevels; level++) {
      // An even number of distinct sorted keys, paired into the bounds of
      // non-overlapping segments (some a single key).
      std::set<std::string> bounds;
      // Levels empty (as in a young or a settled store), with one or two
      // segments, or with many.
      const uint64_t n = rnd.OneIn(3)   ? 0
                         : rnd.OneIn(2) ? 1 + rnd.Uniform(2)
                                        : rnd.Uniform(120);
      while (bounds.size() < n) bounds.insert(RandomKey(&rnd));
      std::vector<std::string> sorted(bounds.begin(), bounds.end());
      for (size_t i = 0; i < sorted.size(); i++) {
        const bool single = rnd.OneIn(4) || i + 1 == sorted.size();
        const std::string& hi = single ? sorted[i] : sorted[i + 1];
        files[level].push_back(Segment(number++, sorted[i], hi));
        if (!single) i++;
      }
    }
    const auto v = Version::TEST_New(files);
    std::vector<std::string> keys;
    for (int i = 0; i < 2000; i++) keys.push_back(RandomKey(&rnd));
    for (int level = 0; level < kNumLevels; level++) {
      for (const auto& f : files[level]) {
        keys.push_back(ExtractUserKey(f->smallest).ToString());
        keys.push_back(ExtractUserKey(f->largest).ToString());
      }
    }
    for (const std::string& key : keys) {
      std::vector<Candidate> got;
      v->ForEachCandidate(
          key, 0, [&got](const FileMetaData& f, int level, bool in_range) {
            got.push_back({level, f.number, in_range});
            return false;
          });
      ASSERT_EQ(ScanCandidates(files, key), got)
          << Slice(key).ToEscapedString();
    }
  }
}

}  // namespace BLOOMKV_FILE_NAMESPACE
}  // namespace bloomkv
