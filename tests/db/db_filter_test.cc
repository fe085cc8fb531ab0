// Filters at work: the counters prove that absent-key lookups skip segments
// by filter instead of reading them.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <sstream>

#include "bloomkv/db.h"
#include "tests/testutil/test_util.h"
#include "util/counting_env.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

constexpr int kSegments = 10;
constexpr int kKeysPerSegment = 5000;
constexpr int kLookups = 20000;

std::string Code(Random* rnd) {
  static const char kAlphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string s(7, '0');
  for (char& c : s) c = kAlphabet[rnd->Uniform(62)];
  return s;
}

class FilterTest : public testing::Test {
 protected:
  // Builds kSegments level-0 segments, each holding random short codes
  // spread over the whole key space, so every segment's key range covers
  // almost every lookup and only the filter can rule a segment out.
  void Build(std::shared_ptr<const FilterPolicy> policy) {
    options_.create_if_missing = true;
    options_.filter_policy = std::move(policy);
    options_.block_cache_capacity = 0;  // every positive is a file read
    options_.env = &env_;
    test::KeepEverythingInLevelZero(&options_);
    ASSERT_TRUE(DB::Open(options_, dir_.path(), &db_).ok());
    Random rnd(301);
    for (int s = 0; s < kSegments; s++) {
      for (int i = 0; i < kKeysPerSegment; i++) {
        std::string code = Code(&rnd);
        present_.insert(code);
        ASSERT_TRUE(
            db_->Put(WriteOptions(), code, "https://example.com/" + code).ok());
      }
      ASSERT_TRUE(db_->Flush().ok());
    }
    std::string n;
    ASSERT_TRUE(db_->GetProperty("bloomkv.num-files-at-level0", &n));
    ASSERT_EQ(std::to_string(kSegments), n);
  }

  // Looks up kLookups codes that were never inserted.
  void LookUpAbsentKeys() {
    Random rnd(99);
    env_.Reset();
    before_ = db_->GetStats();
    std::string v;
    for (int i = 0; i < kLookups;) {
      std::string code = Code(&rnd);
      if (present_.count(code)) continue;
      ASSERT_TRUE(db_->Get(ReadOptions(), code, &v).IsNotFound());
      i++;
    }
    after_ = db_->GetStats();
  }

  double SumOfTheoreticalFpRates() {
    std::string text;
    EXPECT_TRUE(db_->GetProperty("bloomkv.segments", &text));
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);  // header
    double sum = 0;
    int rows = 0;
    while (std::getline(in, line)) {
      sum += std::stod(line.substr(line.find_last_of(' ') + 1));
      rows++;
    }
    EXPECT_EQ(kSegments, rows);
    return sum;
  }

  test::TempDir dir_;
  CountingEnv env_{Env::Default()};
  Options options_;
  std::unique_ptr<DB> db_;
  std::set<std::string> present_;
  DbStats before_, after_;
};

TEST_F(FilterTest, AbsentKeysReadAboutTheFalsePositiveRateInBlocks) {
  Build(NewBloomFilterPolicy(10));
  LookUpAbsentKeys();
  const double sum_fp = SumOfTheoreticalFpRates();
  EXPECT_GT(sum_fp, 0.05);  // ten ~1% filters
  EXPECT_LT(sum_fp, 0.15);
  const uint64_t blocks = after_.data_blocks_read - before_.data_blocks_read;
  const double per_get = static_cast<double>(blocks) / kLookups;
  EXPECT_LE(per_get, 1.5 * sum_fp) << "blocks per absent get " << per_get;
  // Every block read is a filter false positive, and the Env saw exactly
  // those reads.
  EXPECT_EQ(after_.filter_false_positives - before_.filter_false_positives,
            blocks);
  EXPECT_EQ(blocks, env_.Total().random_reads);
  EXPECT_EQ(after_.bytes_read - before_.bytes_read,
            env_.Total().random_read_bytes);
  const uint64_t consulted =
      after_.segments_consulted - before_.segments_consulted;
  EXPECT_EQ(consulted,
            (after_.filter_negatives - before_.filter_negatives) +
                (after_.filter_positives - before_.filter_positives));
  EXPECT_GT(consulted, static_cast<uint64_t>(kLookups) * (kSegments - 1));
}

// The built-in bloom encoding under a name of its own (a built-in name
// would be probed without calls to the policy), counting the hints and the
// questions it gets.
class CountingPolicy final : public FilterPolicy {
 public:
  const char* Name() const override { return "test.CountingBloom"; }
  void CreateFilter(const uint64_t* hashes, size_t n,
                    std::string* dst) const override {
    inner_->CreateFilter(hashes, n, dst);
  }
  bool KeyMayMatch(uint64_t hash, const Slice& filter) const override {
    questions++;
    return inner_->KeyMayMatch(hash, filter);
  }
  void Prefetch(uint64_t hash, const Slice& filter) const override {
    prefetches++;
    inner_->Prefetch(hash, filter);
  }
  double BitsPerKey() const override { return inner_->BitsPerKey(); }
  double TheoreticalFpRate(const Slice& filter,
                           uint64_t num_keys) const override {
    return inner_->TheoreticalFpRate(filter, num_keys);
  }

  mutable std::atomic<uint64_t> questions{0}, prefetches{0};

 private:
  const std::shared_ptr<const FilterPolicy> inner_ = NewBloomFilterPolicy(10);
};

TEST_F(FilterTest, AbsentKeyLookupHintsEveryFilterBeforeAskingIt) {
  auto policy = std::make_shared<CountingPolicy>();
  Build(policy);
  policy->questions = 0;
  policy->prefetches = 0;
  LookUpAbsentKeys();
  // Each lookup hints all ten level-0 filters up front, then asks those
  // whose key range covers the key.
  EXPECT_EQ(static_cast<uint64_t>(kLookups) * kSegments,
            policy->prefetches.load());
  EXPECT_EQ(after_.segments_consulted - before_.segments_consulted,
            policy->questions.load());
  EXPECT_GT(policy->questions.load(),
            static_cast<uint64_t>(kLookups) * (kSegments - 1));
}

TEST_F(FilterTest, WithoutFiltersEveryCoveringSegmentIsRead) {
  Build(nullptr);
  LookUpAbsentKeys();
  const uint64_t blocks = after_.data_blocks_read - before_.data_blocks_read;
  const uint64_t consulted =
      after_.segments_consulted - before_.segments_consulted;
  EXPECT_EQ(0u, after_.filter_negatives - before_.filter_negatives);
  EXPECT_EQ(consulted, blocks);  // one data block per covering segment
  EXPECT_GT(static_cast<double>(blocks) / kLookups, 0.9 * kSegments);
  EXPECT_EQ(blocks, env_.Total().random_reads);
}

TEST_F(FilterTest, PresentKeysReadOneBlockAndFilterNegativesNone) {
  Build(NewBloomFilterPolicy(10));
  env_.Reset();
  std::string v;
  GetTrace trace;
  ReadOptions ro;
  ro.trace = &trace;
  int checked = 0;
  for (const auto& code : present_) {
    if (checked++ == 500) break;
    ASSERT_TRUE(db_->Get(ro, code, &v).ok());
    ASSERT_EQ("https://example.com/" + code, v);
    uint64_t found = 0;
    for (const auto& s : trace.segments) {
      if (s.outcome == SegmentOutcome::kSkippedByFilter) {
        ASSERT_EQ(0u, s.data_blocks_read);
      }
      found += s.outcome == SegmentOutcome::kFound;
    }
    ASSERT_EQ(1u, found);
    ASSERT_GE(trace.data_blocks_read, 1u);
  }
}

}  // namespace
}  // namespace bloomkv
