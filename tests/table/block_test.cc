// Tests for BlockBuilder, Block and BlockIter: round trips, seeks to every
// position, backward iteration, malformed blocks, and Block::Find (the point
// lookup without an iterator) against a std::map model.
#include "table/block.h"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "table/block_builder.h"
#include "table/internal_key.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

struct KV {
  std::string key;
  std::string value;
};

// Sorted internal keys with shared prefixes, several versions per user key.
std::vector<KV> MakeEntries(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<KV> kvs;
  int user = 0;
  while (static_cast<int>(kvs.size()) < n) {
    const std::string uk = "key" + std::to_string(100000 + user * 7);
    const int versions = 1 + static_cast<int>(rng() % 3);
    for (int v = versions; v >= 1 && static_cast<int>(kvs.size()) < n; v--) {
      const ValueType t =
          rng() % 4 == 0 ? ValueType::kDeletion : ValueType::kValue;
      kvs.push_back(
          {MakeInternalKey(uk, static_cast<SequenceNumber>(v * 10), t),
           std::string(rng() % 20, static_cast<char>('a' + v))});
    }
    user++;
  }
  return kvs;
}

std::shared_ptr<const Block> BuildBlock(const std::vector<KV>& kvs,
                                        int restart_interval,
                                        bool key_prefixes = false) {
  BlockBuilder builder(restart_interval, key_prefixes);
  for (const KV& kv : kvs) builder.Add(kv.key, kv.value);
  const size_t estimate = builder.CurrentSizeEstimate();
  std::string contents = builder.Finish().ToString();
  EXPECT_EQ(estimate, contents.size());
  std::shared_ptr<const Block> block;
  Status s = Block::Parse(contents, "test.seg", 100, &block);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return block;
}

// Index of the first entry >= target, or kvs.size().
size_t LowerBound(const std::vector<KV>& kvs, const Slice& target) {
  size_t i = 0;
  while (i < kvs.size() && CompareInternalKeys(kvs[i].key, target) < 0) i++;
  return i;
}

TEST(BlockTest, EmptyBlock) {
  auto block = BuildBlock({}, 16);
  ASSERT_NE(block, nullptr);
  BlockIter it(block.get());
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
  it.SeekToLast();
  EXPECT_FALSE(it.Valid());
  it.Seek(MakeInternalKey("a", 1, ValueType::kValue));
  EXPECT_FALSE(it.Valid());
  it.SeekForPrev(MakeInternalKey("a", 1, ValueType::kValue));
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().ok());
}

TEST(BlockTest, RoundTripForwardAndBackward) {
  for (int i = 0; i < 2 * 5 * 6; i++) {
    const bool key_prefixes = i % 2 == 1;
    const int interval = std::array{1, 2, 3, 16, 1000}[i / 2 % 5];
    const int n = std::array{1, 2, 15, 16, 17, 200}[i / 10];
    {
      SCOPED_TRACE("interval=" + std::to_string(interval) +
                   " n=" + std::to_string(n) +
                   " key_prefixes=" + std::to_string(key_prefixes));
      const auto kvs = MakeEntries(n, static_cast<uint32_t>(n));
      auto block = BuildBlock(kvs, interval, key_prefixes);
      ASSERT_NE(block, nullptr);
      BlockIter it(block.get());
      size_t i = 0;
      for (it.SeekToFirst(); it.Valid(); it.Next(), i++) {
        ASSERT_LT(i, kvs.size());
        EXPECT_EQ(it.key(), Slice(kvs[i].key));
        EXPECT_EQ(it.value(), Slice(kvs[i].value));
      }
      EXPECT_EQ(i, kvs.size());
      EXPECT_TRUE(it.status().ok());
      i = kvs.size();
      for (it.SeekToLast(); it.Valid(); it.Prev()) {
        ASSERT_GT(i, 0u);
        i--;
        EXPECT_EQ(it.key(), Slice(kvs[i].key));
        EXPECT_EQ(it.value(), Slice(kvs[i].value));
      }
      EXPECT_EQ(i, 0u);
      EXPECT_TRUE(it.status().ok());
    }
  }
}

TEST(BlockTest, SeekToEveryKeyAndBetween) {
  for (uint32_t seed = 1; seed <= 3; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    for (int i = 0; i < 6; i++) {
      const int interval = std::array{1, 4, 16}[i / 2];
      const bool key_prefixes = i % 2 == 1;
      SCOPED_TRACE("interval=" + std::to_string(interval) +
                   " key_prefixes=" + std::to_string(key_prefixes));
      const auto kvs = MakeEntries(150, seed);
      auto block = BuildBlock(kvs, interval, key_prefixes);
      ASSERT_NE(block, nullptr);
      // Targets: every key, and keys just before/after every key.
      std::vector<std::string> targets;
      for (const KV& kv : kvs) {
        ParsedInternalKey p;
        ASSERT_TRUE(ParseInternalKey(kv.key, &p));
        targets.push_back(kv.key);
        targets.push_back(
            MakeInternalKey(p.user_key, p.sequence + 1, ValueType::kValue));
        targets.push_back(
            MakeInternalKey(p.user_key, p.sequence - 1, ValueType::kValue));
        targets.push_back(MakeInternalKey(p.user_key.ToString() + '\0', 5,
                                          ValueType::kValue));
      }
      targets.push_back(MakeInternalKey("", 0, ValueType::kDeletion));
      targets.push_back(MakeInternalKey("zzz", 1, ValueType::kValue));
      BlockIter it(block.get());
      for (const std::string& t : targets) {
        const size_t lb = LowerBound(kvs, t);
        it.Seek(t);
        if (lb == kvs.size()) {
          EXPECT_FALSE(it.Valid());
        } else {
          ASSERT_TRUE(it.Valid());
          EXPECT_EQ(it.key(), Slice(kvs[lb].key));
        }
        // SeekForPrev: last entry <= t.
        size_t le = lb < kvs.size() && kvs[lb].key == t ? lb + 1 : lb;
        it.SeekForPrev(t);
        if (le == 0) {
          EXPECT_FALSE(it.Valid());
        } else {
          ASSERT_TRUE(it.Valid());
          EXPECT_EQ(it.key(), Slice(kvs[le - 1].key));
          // Prev from a sought position.
          it.Prev();
          if (le >= 2) {
            ASSERT_TRUE(it.Valid());
            EXPECT_EQ(it.key(), Slice(kvs[le - 2].key));
          } else {
            EXPECT_FALSE(it.Valid());
          }
        }
        EXPECT_TRUE(it.status().ok());
      }
    }
  }
}

TEST(BlockTest, SharedPrefixesCompress) {
  std::vector<KV> kvs;
  for (int i = 0; i < 100; i++) {
    kvs.push_back(
        {MakeInternalKey("a-long-common-prefix-" + std::to_string(1000 + i), 1,
                         ValueType::kValue),
         ""});
  }
  BlockBuilder with(16), without(1);
  for (const KV& kv : kvs) {
    with.Add(kv.key, kv.value);
    without.Add(kv.key, kv.value);
  }
  EXPECT_LT(with.Finish().size() * 2, without.Finish().size());
}

TEST(BlockTest, SeekTargetMustBeInternalKey) {
  auto block = BuildBlock(MakeEntries(10, 1), 4);
  BlockIter it(block.get());
  it.Seek("short");
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().IsInvalidArgument());
  it.SeekToFirst();
  EXPECT_TRUE(it.Valid());
  EXPECT_TRUE(it.status().ok());
}

Status ParseContents(const std::string& contents,
                     std::shared_ptr<const Block>* block) {
  return Block::Parse(contents, "bad.seg", 4096, block);
}

TEST(BlockTest, BadRestartCount) {
  std::shared_ptr<const Block> block;
  EXPECT_TRUE(ParseContents("", &block).IsCorruption());
  EXPECT_TRUE(ParseContents("abc", &block).IsCorruption());
  std::string zero;
  PutFixed32(&zero, 0);
  EXPECT_TRUE(ParseContents(zero, &block).IsCorruption());
  std::string huge;
  PutFixed32(&huge, 0);
  PutFixed32(&huge, 1000);
  Status s = ParseContents(huge, &block);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("bad.seg"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("4096"), std::string::npos) << s.ToString();
  // An empty block: one restart offset (0) and the count. Flagged, the
  // count promises a restart prefix too, which has to fit.
  std::string flagged_short;
  PutFixed32(&flagged_short, 0);
  PutFixed32(&flagged_short, 1 | kBlockKeyPrefixesFlag);
  s = ParseContents(flagged_short, &block);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  std::string flagged;
  PutFixed32(&flagged, 0);
  PutFixed64(&flagged, 0);
  PutFixed32(&flagged, 1 | kBlockKeyPrefixesFlag);
  EXPECT_TRUE(ParseContents(flagged, &block).ok());
}

// Overwrites restart point i of a built block.
std::string WithRestart(std::string contents, uint32_t i, uint32_t value) {
  const uint32_t n = DecodeFixed32(contents.data() + contents.size() - 4);
  EncodeFixed32(contents.data() + contents.size() - 4 - 4 * (n - i), value);
  return contents;
}

TEST(BlockTest, RestartOffsetsOutOfRange) {
  const auto kvs = MakeEntries(40, 7);
  BlockBuilder builder(4);
  for (const KV& kv : kvs) builder.Add(kv.key, kv.value);
  const std::string good = builder.Finish().ToString();
  std::shared_ptr<const Block> block;
  // Restart 0 must be 0.
  EXPECT_TRUE(ParseContents(WithRestart(good, 0, 1), &block).IsCorruption());
  // A later restart past the entries: seeks and SeekToLast report it.
  ASSERT_TRUE(ParseContents(WithRestart(good, 9, 0xffffff00), &block).ok());
  BlockIter it(block.get());
  it.SeekToLast();
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().IsCorruption()) << it.status().ToString();
  it.Seek(kvs.back().key);
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().IsCorruption());
  EXPECT_NE(it.status().message().find("bad.seg"), std::string::npos);
  // A restart pointing into the middle of an entry: no crash, and either an
  // error or some iteration; never a read out of bounds (ASan checks).
  ASSERT_TRUE(ParseContents(WithRestart(good, 3, 5), &block).ok());
  BlockIter it2(block.get());
  for (it2.SeekToLast(); it2.Valid(); it2.Prev()) {
  }
  for (const KV& kv : kvs) it2.Seek(kv.key);
}

TEST(BlockTest, KeyShorterThanInternalKeyIsCorruption) {
  BlockBuilder builder(16);
  builder.Add("short", "v");
  std::shared_ptr<const Block> block;
  ASSERT_TRUE(ParseContents(builder.Finish().ToString(), &block).ok());
  BlockIter it(block.get());
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().IsCorruption());
}

// Calls check(kvs, block, &errors) for every single-byte corruption of a
// block of kvs, built with and without restart prefixes, that still parses,
// and expects some corruptions to be errors: those check counts, and with
// parse_errors_count those Parse reports.
template <typename Check>
void ForEachCorruptedBlock(bool parse_errors_count, const Check& check) {
  for (bool key_prefixes : {false, true}) {
    SCOPED_TRACE("key_prefixes=" + std::to_string(key_prefixes));
    const auto kvs = MakeEntries(30, 3);
    BlockBuilder builder(4, key_prefixes);
    for (const KV& kv : kvs) builder.Add(kv.key, kv.value);
    const std::string good = builder.Finish().ToString();
    int errors = 0;
    for (size_t pos = 0; pos < good.size(); pos++) {
      for (uint8_t mask : {0x01, 0x80, 0xff}) {
        std::string bad = good;
        bad[pos] = static_cast<char>(bad[pos] ^ mask);
        std::shared_ptr<const Block> block;
        if (!ParseContents(bad, &block).ok()) {
          if (parse_errors_count) errors++;
          continue;
        }
        check(kvs, *block, &errors);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
    EXPECT_GT(errors, 0);
  }
}

// Every single-byte corruption of a block: the iterator may report an error
// or produce entries, but never reads out of bounds or loops forever.
TEST(BlockTest, EveryByteCorruptedNoCrash) {
  ForEachCorruptedBlock(/*parse_errors_count=*/true, [](const std::vector<KV>& kvs, const Block& block,
                           int* errors) {
    BlockIter it(&block);
    size_t steps = 0;
    for (it.SeekToFirst(); it.Valid() && steps < 1000; it.Next()) steps++;
    ASSERT_LT(steps, 1000u);
    if (!it.status().ok()) ++*errors;
    steps = 0;
    for (it.SeekToLast(); it.Valid() && steps < 1000; it.Prev()) steps++;
    ASSERT_LT(steps, 1000u);
    for (const KV& kv : kvs) {
      it.Seek(kv.key);
      it.SeekForPrev(kv.key);
    }
  });
}

struct InternalKeyLess {
  bool operator()(const std::string& a, const std::string& b) const {
    return CompareInternalKeys(a, b) < 0;
  }
};
using Model = std::map<std::string, std::string, InternalKeyLess>;

// Random user keys over a small alphabet, so they share prefixes of every
// length; some longer than BlockKeyBuffer's inline storage, some empty.
std::string RandomUserKey(Random* rnd) {
  const uint64_t len =
      rnd->Uniform(8) == 0 ? 60 + rnd->Uniform(100) : rnd->Uniform(20);
  std::string k;
  for (uint64_t i = 0; i < len; i++) {
    k.push_back(static_cast<char>("ab\x00\xff"[rnd->Uniform(4)]));
  }
  return k;
}

// Asserts that Find and BlockIter::Seek give the model's lower bound for
// target, and that Find names the restart point that entry is (the block
// has one every `interval` entries), or none.
void ExpectFindMatchesModel(const Block& block, const Model& model,
                            const std::string& target, int interval,
                            BlockKeyBuffer* key_buf) {
  Slice key, value;
  bool found = true;
  uint32_t restart = 0;
  ASSERT_TRUE(
      block.Find(target, key_buf, &key, &value, &found, &restart).ok());
  BlockIter it(&block);
  it.Seek(target);
  ASSERT_TRUE(it.status().ok()) << it.status().ToString();
  auto lb = model.lower_bound(target);
  if (lb == model.end()) {
    EXPECT_FALSE(found);
    EXPECT_FALSE(it.Valid());
  } else {
    ASSERT_TRUE(found);
    EXPECT_EQ(key, Slice(lb->first));
    EXPECT_EQ(value, Slice(lb->second));
    const auto entry = static_cast<uint32_t>(std::distance(model.begin(), lb));
    EXPECT_EQ(entry % interval == 0 ? entry / interval
                                    : Block::kNotARestartPoint,
              restart)
        << "entry " << entry;
    ASSERT_TRUE(it.Valid());
    EXPECT_EQ(it.key(), Slice(lb->first));
    EXPECT_EQ(it.value(), Slice(lb->second));
  }
}

TEST(BlockFindTest, MatchesMapModelWithSeededRandomKeys) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    for (int i = 0; i < 8; i++) {
      const int interval = std::array{1, 2, 4, 16}[i / 2];
      const bool key_prefixes = i % 2 == 1;
      SCOPED_TRACE("interval=" + std::to_string(interval) +
                   " key_prefixes=" + std::to_string(key_prefixes));
      Model model;
      const int n = static_cast<int>(rnd.Uniform(300));
      while (static_cast<int>(model.size()) < n) {
        const std::string uk = RandomUserKey(&rnd);
        const int versions = 1 + static_cast<int>(rnd.Uniform(3));
        for (int v = 0; v < versions; v++) {
          const ValueType t =
              rnd.Uniform(4) == 0 ? ValueType::kDeletion : ValueType::kValue;
          model[MakeInternalKey(uk, rnd.Uniform(1000), t)] =
              std::string(rnd.Uniform(10), 'v');
        }
      }
      BlockBuilder builder(interval, key_prefixes);
      for (const auto& [k, v] : model) builder.Add(k, v);
      std::shared_ptr<const Block> block;
      ASSERT_TRUE(
          Block::Parse(builder.Finish().ToString(), "t.seg", 0, &block).ok());
      BlockKeyBuffer key_buf;  // reused across lookups, as Get does
      // Every stored key, its neighbours in sequence, and random targets.
      for (const auto& [k, v] : model) {
        ParsedInternalKey p;
        ASSERT_TRUE(ParseInternalKey(k, &p));
        ExpectFindMatchesModel(*block, model, k, interval, &key_buf);
        ExpectFindMatchesModel(
            *block, model,
            MakeInternalKey(p.user_key, p.sequence + 1, ValueType::kValue),
            interval, &key_buf);
        if (p.sequence > 0) {
          ExpectFindMatchesModel(
              *block, model,
              MakeInternalKey(p.user_key, p.sequence - 1, ValueType::kValue),
              interval, &key_buf);
        }
      }
      for (int i = 0; i < 200; i++) {
        ExpectFindMatchesModel(
            *block, model,
            MakeInternalKey(RandomUserKey(&rnd), rnd.Uniform(1000),
                            ValueType::kValue),
            interval, &key_buf);
      }
      if (HasFatalFailure()) return;
    }
  }
}

// An index block (a restart point per entry) gives the prefixes of its keys;
// Find with them gives the model's answer and the entry's restart point, as
// without them. Keys over {a, b, 0, 0xff} share prefixes of every length, and
// keys shorter than eight bytes meet the same keys with trailing zeros.
TEST(BlockFindTest, RestartKeyPrefixesNarrowTheSearch) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    Model model;
    const int n = 1 + static_cast<int>(rnd.Uniform(400));
    while (static_cast<int>(model.size()) < n) {
      model[MakeInternalKey(RandomUserKey(&rnd), rnd.Uniform(1000),
                            ValueType::kValue)] = std::to_string(model.size());
    }
    std::vector<std::string> keys;
    for (const auto& [k, v] : model) keys.push_back(k);
    for (int interval : {1, 3}) {
      BlockBuilder builder(interval);
      for (const auto& [k, v] : model) builder.Add(k, v);
      std::shared_ptr<const Block> block;
      ASSERT_TRUE(
          Block::Parse(builder.Finish().ToString(), "t.seg", 0, &block).ok());
      std::vector<uint64_t> prefixes{1, 2};
      const bool one_per_entry = interval == 1 || model.size() == 1;
      ASSERT_EQ(one_per_entry, block->RestartKeyPrefixes(&prefixes));
      if (!one_per_entry) {
        EXPECT_TRUE(prefixes.empty());
        continue;
      }
      ASSERT_EQ(keys.size(), prefixes.size());
      for (size_t i = 0; i < keys.size(); i++) {
        ASSERT_EQ(UserKeyPrefix(ExtractUserKey(keys[i])), prefixes[i]) << i;
      }
      const PrefixIndex index(prefixes);
      BlockKeyBuffer key_buf;
      std::vector<std::string> targets = keys;
      for (int i = 0; i < 300; i++) {
        targets.push_back(MakeInternalKey(
            RandomUserKey(&rnd), rnd.Uniform(1000), ValueType::kValue));
      }
      for (const std::string& target : targets) {
        Slice key, value;
        bool found = false;
        uint32_t restart = 0;
        const Block::PrefixRange range =
            index.EqualRange(UserKeyPrefix(ExtractUserKey(target)));
        ASSERT_TRUE(
            block
                ->Find(target, &key_buf, &key, &value, &found, &restart, &range)
                .ok());
        auto lb = model.lower_bound(target);
        if (lb == model.end()) {
          EXPECT_FALSE(found) << Slice(target).ToEscapedString();
          continue;
        }
        ASSERT_TRUE(found) << Slice(target).ToEscapedString();
        EXPECT_EQ(key, Slice(lb->first));
        EXPECT_EQ(value, Slice(lb->second));
        EXPECT_EQ(static_cast<uint32_t>(std::distance(model.begin(), lb)),
                  restart);
      }
    }
  }
}

TEST(BlockFindTest, EmptyBlockAndBadTarget) {
  auto block = BuildBlock({}, 16);
  ASSERT_NE(block, nullptr);
  BlockKeyBuffer key_buf;
  Slice key, value;
  bool found = true;
  EXPECT_TRUE(block
                  ->Find(MakeInternalKey("a", 1, ValueType::kValue), &key_buf,
                         &key, &value, &found)
                  .ok());
  EXPECT_FALSE(found);
  auto full = BuildBlock(MakeEntries(10, 1), 4);
  EXPECT_TRUE(
      full->Find("short", &key_buf, &key, &value, &found).IsInvalidArgument());
  EXPECT_FALSE(found);
}

// Every single-byte corruption of a block: Find either reports Corruption
// naming the file, or answers; it never reads out of bounds (ASan checks).
TEST(BlockFindTest, EveryByteCorruptedNoCrash) {
  ForEachCorruptedBlock(/*parse_errors_count=*/false, [](const std::vector<KV>& kvs, const Block& block,
                           int* errors) {
    BlockKeyBuffer key_buf;
    for (const KV& kv : kvs) {
      Slice key, value;
      bool found;
      const Status s = block.Find(kv.key, &key_buf, &key, &value, &found);
      if (!s.ok()) {
        ASSERT_TRUE(s.IsCorruption()) << s.ToString();
        EXPECT_NE(s.message().find("bad.seg"), std::string::npos);
        ++*errors;
      }
    }
  });
}

}  // namespace BLOOMKV_FILE_NAMESPACE
}  // namespace bloomkv
