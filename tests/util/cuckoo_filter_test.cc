// Tests of bloomkv::CuckooFilter: a randomized property test against a
// std::multiset model (never a false negative for a key added and not
// deleted, Count never below the model's, Full leaves the filter exactly as
// it was), RedisBloom's CF.ADD / ADDNX / DEL / COUNT semantics, sizing and
// false-positive rate, and the serialization's layout and resistance to
// damaged input.
#include "bloomkv/cuckoo_filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

std::string Key(const char* prefix, uint64_t i) {
  return std::string(prefix) + std::to_string(i);
}

std::string Serialized(const CuckooFilter& f) {
  std::string s;
  f.Serialize(&s);
  return s;
}

CuckooFilter Make(uint64_t capacity, int bucket_size = 4,
                  int fingerprint_bits = 0, double fp_rate = 0.01,
                  int max_kicks = 500) {
  CuckooFilterOptions o;
  o.capacity = capacity;
  o.bucket_size = bucket_size;
  o.fingerprint_bits = fingerprint_bits;
  o.fp_rate = fp_rate;
  o.max_kicks = max_kicks;
  CuckooFilter f;
  const Status s = CuckooFilter::Create(o, &f);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return f;
}

void Reseal(std::string* enc) {
  const size_t body = enc->size() - 4;
  EncodeFixed32(enc->data() + body, BlockChecksum(enc->data(), body));
}

TEST(CuckooFilterTest, DefaultFilterHoldsNothingAndHasNoRoom) {
  CuckooFilter f;
  EXPECT_FALSE(f.MightContain("a"));
  EXPECT_EQ(f.Count("a"), 0u);
  EXPECT_FALSE(f.Delete("a"));
  EXPECT_TRUE(f.Add("a").IsFull());
  bool added = true;
  EXPECT_TRUE(f.AddIfAbsent("a", &added).IsFull());
  EXPECT_FALSE(added);
  const CuckooFilterInfo info = f.Info();
  EXPECT_EQ(info.capacity, 0u);
  EXPECT_EQ(info.slots, 0u);
  EXPECT_EQ(info.bytes, 0u);
  CuckooFilter g = Make(10);
  ASSERT_TRUE(CuckooFilter::Deserialize(Serialized(f), &g).ok());
  EXPECT_EQ(Serialized(g), Serialized(f));
  EXPECT_EQ(g.Info().slots, 0u);
}

TEST(CuckooFilterTest, CreateValidatesOptions) {
  CuckooFilter f = Make(10);
  ASSERT_TRUE(f.Add("kept").ok());
  const std::string before = Serialized(f);
  struct Case {
    uint64_t capacity;
    int bucket_size, fingerprint_bits;
    double fp_rate;
    int max_kicks;
    const char* needle;
  };
  const Case cases[] = {
      {0, 4, 0, 0.01, 500, "capacity must be at least 1"},
      {10, 0, 0, 0.01, 500, "bucket_size 0"},
      {10, 9, 0, 0.01, 500, "bucket_size 9"},
      {10, 4, 3, 0.01, 500, "fingerprint_bits 3"},
      {10, 4, 33, 0.01, 500, "fingerprint_bits 33"},
      {10, 4, 0, 0.0, 500, "fp_rate"},
      {10, 4, 0, 0.6, 500, "fp_rate"},
      {10, 4, 0, std::nan(""), 500, "fp_rate"},
      {10, 4, 0, 1e-12, 500, "more than 32 bits"},
      {10, 4, 0, 0.01, 0, "max_kicks 0"},
      {10, 4, 0, 0.01, 65536, "max_kicks 65536"},
      {uint64_t{1} << 40, 4, 0, 0.01, 500, "more than 2^32 buckets"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.needle);
    CuckooFilterOptions o;
    o.capacity = c.capacity;
    o.bucket_size = c.bucket_size;
    o.fingerprint_bits = c.fingerprint_bits;
    o.fp_rate = c.fp_rate;
    o.max_kicks = c.max_kicks;
    const Status s = CuckooFilter::Create(o, &f);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.ToString().find(c.needle), std::string::npos) << s.ToString();
    EXPECT_EQ(Serialized(f), before);
  }
}

TEST(CuckooFilterTest, FingerprintWidthFollowsTheRate) {
  // About 2 * 4 * 0.94 occupied slots per absent key's two buckets:
  // 2^f - 1 >= 7.5 / p.
  EXPECT_EQ(Make(100000, 4, 0, 0.01).Info().fingerprint_bits, 10);
  EXPECT_EQ(Make(100000, 4, 0, 0.001).Info().fingerprint_bits, 13);
  EXPECT_EQ(Make(100000, 2, 0, 0.001).Info().fingerprint_bits, 12);
  EXPECT_EQ(Make(100000, 4, 7).Info().fingerprint_bits, 7);
  for (double p : {0.1, 0.01, 0.001, 1e-5}) {
    const CuckooFilterInfo info = Make(50000, 4, 0, p).Info();
    EXPECT_LE(info.target_fp_rate, p);
    EXPECT_GT(info.target_fp_rate, p / 2.2);  // one bit fewer would not do
  }
  const CuckooFilterInfo info = Make(1000000, 4, 12).Info();
  EXPECT_EQ(info.slots, info.num_buckets * 4);
  EXPECT_EQ(info.bytes, (info.slots * 12 + 7) / 8);
  EXPECT_GT(info.slots, 1000000u / 0.95);
  EXPECT_LT(info.slots, 1000000u / 0.93);
}

// The model: a multiset of the keys added and not deleted. Keys come from a
// universe a bit larger than the capacity, so the filter runs full, and
// deletes and re-adds make room again; every operation is checked against
// the model and every Full against a snapshot.
TEST(CuckooFilterTest, NeverAFalseNegativeAgainstAMultisetModel) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed) +
                 " (rerun with BLOOMKV_TEST_SEED=" + std::to_string(seed) +
                 ")");
    Random rnd(seed);
    const int bucket_size = 1 + static_cast<int>(rnd.Uniform(8));
    const int bits = 4 + static_cast<int>(rnd.Uniform(29));
    const uint64_t capacity = 50 + rnd.Uniform(1500);
    const int max_kicks = 1 + static_cast<int>(rnd.Uniform(600));
    SCOPED_TRACE("bucket_size=" + std::to_string(bucket_size) +
                 " bits=" + std::to_string(bits) +
                 " capacity=" + std::to_string(capacity) +
                 " max_kicks=" + std::to_string(max_kicks));
    CuckooFilter f = Make(capacity, bucket_size, bits, 0.01, max_kicks);
    std::multiset<std::string> model;
    const uint64_t universe = capacity + capacity / 2;
    uint64_t fulls = 0;
    for (int op = 0; op < 20000; op++) {
      const std::string k = Key("p", rnd.Uniform(static_cast<int>(universe)));
      const uint32_t what = rnd.Uniform(100);
      if (what < 45) {
        const std::string before = Serialized(f);
        const Status s = f.Add(k);
        if (s.ok()) {
          model.insert(k);
        } else {
          ASSERT_TRUE(s.IsFull()) << s.ToString();
          ASSERT_EQ(Serialized(f), before) << "a failed Add changed the filter";
          fulls++;
        }
      } else if (what < 60) {
        bool added = false;
        const bool was_maybe = f.MightContain(k);
        const Status s = f.AddIfAbsent(k, &added);
        if (s.ok()) {
          ASSERT_EQ(added, !was_maybe);
          if (added) model.insert(k);
        } else {
          ASSERT_TRUE(s.IsFull()) << s.ToString();
          ASSERT_FALSE(added);
          fulls++;
        }
      } else if (what < 85) {
        // Only keys the model holds: deleting others may remove a
        // colliding key's fingerprint (documented).
        auto it = model.find(k);
        if (it != model.end()) {
          ASSERT_TRUE(f.Delete(k)) << k;
          model.erase(it);
        }
      } else {
        ASSERT_GE(f.Count(k), model.count(k)) << k;
      }
      ASSERT_EQ(f.items(), model.size());
      if (model.count(k) > 0) {
        ASSERT_TRUE(f.MightContain(k)) << k;
      }
      if (op % 2000 == 0) {
        for (const std::string& m : model) {
          ASSERT_TRUE(f.MightContain(m)) << m << " at op " << op;
        }
      }
    }
    for (const std::string& m : model) {
      ASSERT_TRUE(f.MightContain(m)) << m;
      ASSERT_GE(f.Count(m), model.count(m)) << m;
    }
    // Round-trips with everything it holds.
    CuckooFilter g;
    ASSERT_TRUE(CuckooFilter::Deserialize(Serialized(f), &g).ok());
    for (const std::string& m : model) ASSERT_TRUE(g.MightContain(m)) << m;
    EXPECT_GT(fulls, 0u) << "the test should run the filter full";
  }
}

TEST(CuckooFilterTest, FullFilterFailsWithoutLosingAnything) {
  CuckooFilter f = Make(1000, 4, 16);
  std::vector<std::string> keys;
  Status s;
  for (uint64_t i = 0; s.ok(); i++) {
    const std::string k = Key("f", i);
    s = f.Add(k);
    if (s.ok()) keys.push_back(k);
  }
  ASSERT_TRUE(s.IsFull()) << s.ToString();
  EXPECT_NE(s.ToString().find("after 500 relocations"), std::string::npos)
      << s.ToString();
  const CuckooFilterInfo info = f.Info();
  EXPECT_GE(keys.size(), 1000u);  // its capacity
  EXPECT_GT(info.load_factor, 0.94);
  const std::string before = Serialized(f);
  for (int i = 0; i < 20; i++) {
    if (f.Add(Key("more", i)).ok()) {
      keys.push_back(Key("more", i));
      break;
    }
    EXPECT_EQ(Serialized(f), before);
  }
  for (const auto& k : keys) ASSERT_TRUE(f.MightContain(k)) << k;
  // A delete makes room again.
  ASSERT_TRUE(f.Delete(keys[0]));
  keys.erase(keys.begin());
  Status again = f.Add("after-delete");
  for (int i = 0; !again.ok() && i < 10; i++) {
    ASSERT_TRUE(f.Delete(keys.back()));
    keys.pop_back();
    again = f.Add("after-delete");
  }
  ASSERT_TRUE(again.ok()) << again.ToString();
  EXPECT_TRUE(f.MightContain("after-delete"));
  for (const auto& k : keys) ASSERT_TRUE(f.MightContain(k)) << k;
}

// CF.ADD stores duplicates, CF.COUNT counts them, CF.DEL removes one.
TEST(CuckooFilterTest, DuplicatesCountAndDeleteOneAtATime) {
  // A key has two buckets of 4 slots, or one if they coincide (about one
  // key in num_buckets); test one of each.
  int tested_two = 0, tested_one = 0;
  for (uint64_t i = 0; i < 2000 && (tested_two == 0 || tested_one == 0); i++) {
    CuckooFilter f = Make(100, 4, 16);
    const std::string k = Key("dup", i);
    int copies = 0;
    while (copies < 9 && f.Add(k).ok()) copies++;
    ASSERT_TRUE(copies == 8 || copies == 4) << k << ": " << copies;
    int& tested = copies == 8 ? tested_two : tested_one;
    if (tested > 0) continue;
    tested++;
    EXPECT_EQ(f.Count(k), static_cast<uint64_t>(copies));
    EXPECT_EQ(f.items(), static_cast<uint64_t>(copies));
    // Its buckets hold only this fingerprint: relocating cannot help.
    const std::string before = Serialized(f);
    EXPECT_TRUE(f.Add(k).IsFull());
    EXPECT_EQ(Serialized(f), before);
    for (int c = copies; c > 0; c--) {
      ASSERT_TRUE(f.Delete(k));
      EXPECT_EQ(f.Count(k), static_cast<uint64_t>(c - 1));
    }
    EXPECT_FALSE(f.Delete(k));
    EXPECT_FALSE(f.MightContain(k));
    EXPECT_EQ(f.items(), 0u);
  }
  EXPECT_EQ(tested_two, 1);
  EXPECT_EQ(tested_one, 1);
}

TEST(CuckooFilterTest, AddIfAbsentAndTheHashInterface) {
  CuckooFilter f = Make(100, 4, 16);
  bool added = false;
  ASSERT_TRUE(f.AddIfAbsent("once", &added).ok());
  EXPECT_TRUE(added);
  ASSERT_TRUE(f.AddIfAbsent("once", &added).ok());
  EXPECT_FALSE(added);
  EXPECT_EQ(f.Count("once"), 1u);
  ASSERT_TRUE(f.AddHashIfAbsent(KeyHash("once"), &added).ok());
  EXPECT_FALSE(added);
  ASSERT_TRUE(f.AddHash(KeyHash("h")).ok());
  EXPECT_TRUE(f.MightContain("h"));
  EXPECT_EQ(f.CountHash(KeyHash("h")), 1u);
  EXPECT_TRUE(f.DeleteHash(KeyHash("h")));
  EXPECT_FALSE(f.MightContainHash(KeyHash("h")));
}

TEST(CuckooFilterTest, FalsePositiveRateAtCapacityMeetsTheTarget) {
  for (double p : {0.01, 0.001}) {
    SCOPED_TRACE("p=" + std::to_string(p));
    CuckooFilter f = Make(100000, 4, 0, p);
    for (uint64_t i = 0; i < 100000; i++) {
      ASSERT_TRUE(f.Add(Key("present-", i)).ok()) << i;
    }
    uint64_t positives = 0;
    constexpr uint64_t kProbes = 1000000;
    for (uint64_t i = 0; i < kProbes; i++) {
      positives += f.MightContain(Key("absent-", i));
    }
    const double measured = static_cast<double>(positives) / kProbes;
    const CuckooFilterInfo info = f.Info();
    EXPECT_EQ(info.estimated_fp_rate, info.target_fp_rate);
    EXPECT_LE(measured, p);
    EXPECT_NEAR(measured, info.estimated_fp_rate,
                0.1 * info.estimated_fp_rate + 3e-5);
  }
}

TEST(CuckooFilterTest, CopyIsIndependentAndMoveLeavesADefaultFilter) {
  CuckooFilter f = Make(100);
  ASSERT_TRUE(f.Add("a").ok());
  CuckooFilter copy = f;
  ASSERT_TRUE(copy.Add("b").ok());
  EXPECT_EQ(f.items(), 1u);
  EXPECT_EQ(copy.items(), 2u);
  CuckooFilter moved = std::move(copy);
  EXPECT_EQ(moved.items(), 2u);
  EXPECT_EQ(copy.Info().slots, 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(copy.MightContain("a"));
}

// Header fields at their documented offsets (docs/filters.md), and the
// worked example's bytes.
TEST(CuckooFilterTest, EncodingLayout) {
  CuckooFilter f = Make(1, 4, 12);
  ASSERT_TRUE(f.AddHash(0x0123456789ABCDEFull).ok());
  const std::string enc = Serialized(f);
  const CuckooFilterInfo info = f.Info();
  // One key: ceil((1 / 0.94 + 4) / 4) = 2 buckets of 4 slots of 12 bits.
  ASSERT_EQ(info.num_buckets, 2u);
  ASSERT_EQ(enc.size(), 40u + 12u + 4u);
  EXPECT_EQ(enc.substr(0, 8), "BKVCUCKO");
  EXPECT_EQ(enc[8], 1);
  EXPECT_EQ(enc[9], 12);
  EXPECT_EQ(enc[10], 4);
  EXPECT_EQ(enc[11], 0);
  EXPECT_EQ(DecodeFixed32(enc.data() + 12), 500u);
  EXPECT_EQ(DecodeFixed64(enc.data() + 16), 1u);
  EXPECT_EQ(DecodeFixed64(enc.data() + 24), 2u);
  EXPECT_EQ(DecodeFixed64(enc.data() + 32), 1u);
  // h >> 32 = 0x01234567: bucket1 = (0x01234567 * 2) >> 32 = 0.
  // fp = 1 + (0x89ABCDEF * 4095) >> 32 = 2203 = 0x89B; Fmix32(fp) >= 2^31,
  // so c = 1 and bucket2 = 1. Slot 0 of bucket 0 takes it: table bits 0-11,
  // bytes 40, 41 = 9B 08.
  EXPECT_EQ(static_cast<unsigned char>(enc[40]), 0x9B);
  EXPECT_EQ(static_cast<unsigned char>(enc[41]), 0x08);
  for (size_t i = 42; i < 52; i++) EXPECT_EQ(enc[i], 0) << i;
  EXPECT_EQ(DecodeFixed32(enc.data() + 52), BlockChecksum(enc.data(), 52));
}

TEST(CuckooFilterTest, SerializationRoundTrips) {
  for (int bits : {4, 7, 8, 12, 16, 19, 32}) {
    SCOPED_TRACE("bits=" + std::to_string(bits));
    CuckooFilter f = Make(300, 3, bits, 0.01, 77);
    for (uint64_t i = 0; i < 250; i++) ASSERT_TRUE(f.Add(Key("r", i)).ok());
    const std::string enc = Serialized(f);
    CuckooFilter g;
    ASSERT_TRUE(CuckooFilter::Deserialize(enc, &g).ok());
    EXPECT_EQ(Serialized(g), enc);
    EXPECT_EQ(g.Info().max_kicks, 77);
    for (uint64_t i = 0; i < 250; i++) {
      ASSERT_TRUE(g.MightContain(Key("r", i)));
      ASSERT_EQ(g.Count(Key("r", i)), f.Count(Key("r", i)));
    }
    ASSERT_TRUE(g.Delete(Key("r", 0)));
    EXPECT_EQ(g.items(), 249u);
  }
}

TEST(CuckooFilterTest, EveryTruncationAndBitFlipIsCorruption) {
  CuckooFilter f = Make(40, 4, 12);
  for (uint64_t i = 0; i < 30; i++) ASSERT_TRUE(f.Add(Key("d", i)).ok());
  const std::string enc = Serialized(f);
  CuckooFilter out = Make(5);
  ASSERT_TRUE(out.Add("x").ok());
  const std::string out_before = Serialized(out);
  for (size_t len = 0; len < enc.size(); len++) {
    const Status s = CuckooFilter::Deserialize(enc.substr(0, len), &out);
    ASSERT_TRUE(s.IsCorruption()) << len << ": " << s.ToString();
  }
  for (size_t pos = 0; pos < enc.size(); pos++) {
    for (int bit = 0; bit < 8; bit++) {
      std::string bad = enc;
      bad[pos] = static_cast<char>(bad[pos] ^ (1 << bit));
      const Status s = CuckooFilter::Deserialize(bad, &out);
      ASSERT_TRUE(s.IsCorruption())
          << pos << "/" << bit << ": " << s.ToString();
    }
  }
  EXPECT_TRUE(CuckooFilter::Deserialize(enc + "x", &out).IsCorruption());
  EXPECT_EQ(Serialized(out), out_before);
}

TEST(CuckooFilterTest, CorruptionMessagesSayWhatIsWrong) {
  // 7-bit slots: the table ends inside a byte, so it has padding bits.
  CuckooFilter f = Make(20, 3, 7);
  for (uint64_t i = 0; i < 10; i++) ASSERT_TRUE(f.Add(Key("m", i)).ok());
  const CuckooFilterInfo info = f.Info();
  ASSERT_NE(info.slots * 7 % 8, 0u);
  const std::string enc = Serialized(f);
  CuckooFilter out;
  auto expect = [&](const std::string& input, const std::string& needle,
                    uint64_t offset) {
    SCOPED_TRACE(needle);
    const Status s = CuckooFilter::Deserialize(input, &out);
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_EQ(0u, s.ToString().rfind("Corruption: cuckoo filter: ", 0))
        << s.ToString();
    EXPECT_NE(s.ToString().find(needle), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find("at offset " + std::to_string(offset)),
              std::string::npos)
        << s.ToString();
  };
  expect("tiny", "truncated: 4 bytes", 0);
  std::string bad = enc;
  bad[3] = 'x';
  expect(bad, "bad magic", 0);
  bad = enc;
  bad[8] = 9;
  expect(bad, "unsupported format version 9", 8);
  bad = enc;
  bad[9] = 40;
  expect(bad, "invalid fingerprint bits 40", 9);
  bad = enc;
  bad[10] = 0;
  expect(bad, "invalid bucket size 0", 10);
  bad = enc;
  EncodeFixed64(bad.data() + 24, uint64_t{1} << 33);
  expect(bad, "invalid bucket count", 24);
  expect(enc.substr(0, enc.size() - 1), "size mismatch", 24);
  expect(enc + "zz", "size mismatch", 24);
  bad = enc;
  bad[42] ^= 4;
  expect(bad, "checksum mismatch", enc.size() - 4);

  bad = enc;
  bad[11] = 1;
  Reseal(&bad);
  expect(bad, "reserved byte", 11);
  bad = enc;
  EncodeFixed32(bad.data() + 12, 0);
  Reseal(&bad);
  expect(bad, "invalid max kicks 0", 12);
  bad = enc;
  EncodeFixed64(bad.data() + 16, info.slots + 1);
  Reseal(&bad);
  expect(bad, "does not fit", 16);
  bad = enc;
  EncodeFixed64(bad.data() + 32, 11);
  Reseal(&bad);
  expect(bad, "item count 11 but 10 slots are occupied", 32);
  bad = enc;
  bad[enc.size() - 5] = static_cast<char>(0x80);  // the last byte's top bit
  Reseal(&bad);
  expect(bad, "padding bits", enc.size() - 5);
}

// Fixed keys give fixed bytes: the layout formulas are part of the format.
// At 30% load no Add relocates anything, so the relocation order (not part
// of the format) does not enter.
TEST(CuckooFilterTest, EncodingIsStable) {
  CuckooFilter f = Make(1000, 4, 12);
  for (uint64_t i = 0; i < 300; i++) ASSERT_TRUE(f.Add(Key("stable-", i)).ok());
  const std::string enc = Serialized(f);
  EXPECT_EQ(enc.size(), 40u + (f.Info().slots * 12 + 7) / 8 + 4);
  EXPECT_EQ(BlockChecksum(enc.data(), enc.size()), 902324642u);
}

}  // namespace
}  // namespace bloomkv
