// Version::ForEachCandidate against a linear scan of the levels: every
// level-0 segment newest first, then per deeper level the first segment whose
// largest key is >= the key (or the last one), for keys and segment bounds
// that share prefixes of every length, so that the search over the largest
// keys' eight-byte prefixes meets ties, zero padding and long keys.
#include <gtest/gtest.h>

#include <algorithm>
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

// The segments ForEachCandidate visits for key, by a scan of every level.
std::vector<std::pair<int, uint64_t>> ScanCandidates(
    const std::vector<Version::FileList>& files, const std::string& key) {
  std::vector<std::pair<int, uint64_t>> want;
  for (const auto& f : files[0]) want.emplace_back(0, f->number);
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
    want.emplace_back(level, pick->number);
  }
  return want;
}

TEST(VersionTest, ForEachCandidateMatchesAScanOfTheLevels) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Random rnd(seed);
    std::vector<Version::FileList> files(kNumLevels);
    uint64_t number = 1;
    files[0].push_back(Segment(number++, "", "\xff\xff"));
    for (int level = 1; level < kNumLevels; level++) {
      // An even number of distinct sorted keys, paired into the bounds of
      // non-overlapping segments (some a single key).
      std::set<std::string> bounds;
      const uint64_t n = rnd.Uniform(120);
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
    for (int level = 1; level < kNumLevels; level++) {
      for (const auto& f : files[level]) {
        keys.push_back(ExtractUserKey(f->smallest).ToString());
        keys.push_back(ExtractUserKey(f->largest).ToString());
      }
    }
    for (const std::string& key : keys) {
      std::vector<std::pair<int, uint64_t>> got;
      v->ForEachCandidate(key, 0, [&got](const FileMetaData& f, int level) {
        got.emplace_back(level, f.number);
        return false;
      });
      ASSERT_EQ(ScanCandidates(files, key), got)
          << Slice(key).ToEscapedString();
    }
  }
}

}  // namespace BLOOMKV_FILE_NAMESPACE
}  // namespace bloomkv
