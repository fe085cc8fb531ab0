// A segment's filter is read by the policy of the name stored with it: the
// configured policy when the names agree, else the built-in policy of that
// name (util/filter_registry.h); a filter of an unknown name is ignored.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/filter_policy.h"
#include "tests/table/table_test_util.h"
#include "util/filter_registry.h"
#include "util/hash.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

constexpr int kKeys = 3000;

std::string PresentKey(int i) { return "present-" + std::to_string(i); }
std::string AbsentKey(int i) { return "absent-" + std::to_string(i); }

std::string BuildSegmentWith(std::shared_ptr<const FilterPolicy> policy) {
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; i++) keys.push_back(PresentKey(i));
  std::sort(keys.begin(), keys.end());
  std::vector<test::Entry> entries;
  for (const auto& k : keys) {
    entries.push_back(test::MakeEntry(k, 7, ValueType::kValue, "v-" + k));
  }
  SegmentBuilderOptions bo;
  bo.filter_policy = std::move(policy);
  std::string file;
  SegmentProperties props;
  EXPECT_TRUE(test::BuildSegment(bo, entries, &file, &props).ok());
  EXPECT_EQ(props.filter_policy, bo.filter_policy->Name());
  return file;
}

std::unique_ptr<SegmentReader> Open(
    const std::string& file, std::shared_ptr<const FilterPolicy> policy) {
  SegmentReaderOptions ro;
  ro.filter_policy = std::move(policy);
  std::unique_ptr<SegmentReader> reader;
  EXPECT_TRUE(test::OpenSegment(ro, file, &reader).ok());
  return reader;
}

// Every present key found; absent keys ruled out by the filter at about the
// given rate.
void CheckReader(const SegmentReader& reader, double max_fp_rate) {
  ASSERT_TRUE(reader.has_filter());
  std::string value;
  for (int i = 0; i < kKeys; i++) {
    const std::string k = PresentKey(i);
    LookupResult r;
    ASSERT_TRUE(reader
                    .Get(SegmentReadOptions(), k, KeyHash(k),
                         kMaxSequenceNumber, &r, &value, nullptr)
                    .ok());
    ASSERT_EQ(r, LookupResult::kFound) << k;
    ASSERT_EQ(value, "v-" + k);
  }
  int positives = 0;
  constexpr int kAbsent = 20000;
  for (int i = 0; i < kAbsent; i++) {
    positives += reader.KeyMayMatch(KeyHash(AbsentKey(i)));
  }
  EXPECT_LE(positives, max_fp_rate * kAbsent);
  EXPECT_LT(reader.TheoreticalFpRate(), max_fp_rate);
}

struct Kind {
  const char* label;
  std::shared_ptr<const FilterPolicy> policy;
  double max_fp_rate;
};

std::vector<Kind> Kinds() {
  return {{"bloom", NewBloomFilterPolicy(10), 0.02},
          {"bloom6", NewBloomFilterPolicy(6), 0.09},
          {"fuse8", NewBinaryFuseFilterPolicy(8), 0.008},
          {"fuse16", NewBinaryFuseFilterPolicy(16), 0.0005}};
}

TEST(SegmentFilterKindsTest, EveryBuiltinFilterIsReadWhateverThePolicy) {
  for (const Kind& written : Kinds()) {
    const std::string file = BuildSegmentWith(written.policy);
    for (const Kind& configured : Kinds()) {
      SCOPED_TRACE(std::string("written with ") + written.label +
                   ", read with " + configured.label);
      const auto reader = Open(file, configured.policy);
      ASSERT_NE(reader, nullptr);
      CheckReader(*reader, written.max_fp_rate);
    }
  }
}

TEST(SegmentFilterKindsTest, NoPolicyReadsNoFilter) {
  const std::string file = BuildSegmentWith(NewBinaryFuseFilterPolicy(8));
  const auto reader = Open(file, nullptr);
  EXPECT_FALSE(reader->has_filter());
  EXPECT_TRUE(reader->KeyMayMatch(KeyHash(AbsentKey(0))));
}

// SegmentFilter parses some kinds once instead of leaving every probe to the
// policy; it must answer exactly what the policy answers, for intact filters
// and for damaged ones (which the policy reads as "may match").
TEST(SegmentFilterKindsTest, ProbesAnswerWhatThePolicyAnswers) {
  for (const Kind& kind : Kinds()) {
    SCOPED_TRACE(kind.label);
    std::vector<uint64_t> hashes;
    for (int i = 0; i < kKeys; i++) hashes.push_back(KeyHash(PresentKey(i)));
    std::string intact;
    kind.policy->CreateFilter(hashes.data(), hashes.size(), &intact);
    std::vector<std::string> variants = {intact, intact.substr(0, 8), ""};
    for (size_t at : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{4},
                      size_t{8}, intact.size() - 1}) {
      std::string damaged = intact;
      damaged[at] = static_cast<char>(damaged[at] ^ 0x5A);
      variants.push_back(damaged);
    }
    for (size_t v = 0; v < variants.size(); v++) {
      SCOPED_TRACE("variant " + std::to_string(v));
      const SegmentFilter filter(kind.policy, variants[v], kKeys,
                                 kind.policy->BitsPerKey());
      for (int i = 0; i < 2 * kKeys; i++) {
        const uint64_t h =
            KeyHash(i < kKeys ? PresentKey(i) : AbsentKey(i - kKeys));
        ASSERT_EQ(filter.KeyMayMatch(h),
                  kind.policy->KeyMayMatch(h, Slice(variants[v])))
            << i;
        filter.Prefetch(h);  // must not read outside the filter (ASan)
      }
    }
  }
}

TEST(SegmentFilterKindsTest, RegistryKnowsTheBuiltinNames) {
  for (const Kind& k : Kinds()) {
    const auto p = BuiltinFilterPolicy(k.policy->Name());
    ASSERT_NE(p, nullptr) << k.label;
    EXPECT_STREQ(p->Name(), k.policy->Name());
  }
  EXPECT_EQ(BuiltinFilterPolicy("bloomkv.BinaryFuse32"), nullptr);
  EXPECT_EQ(BuiltinFilterPolicy(""), nullptr);
  EXPECT_EQ(BuiltinFilterPolicy("test.ExactFilter"), nullptr);
}

}  // namespace
}  // namespace bloomkv
