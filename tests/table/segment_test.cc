// Tests for SegmentBuilder and SegmentReader: round trips against a model,
// point lookups with snapshots and tombstones, iteration in both directions,
// the filter (no IO on a negative, never interpreted by a foreign policy),
// the block cache, builder argument checks and properties.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "table/format.h"
#include "table/segment_builder.h"
#include "table/segment_reader.h"
#include "table/value_codec.h"
#include "table_test_util.h"
#include "util/cache.h"
#include "util/hash.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using test::Entry;
using test::ExactFilterPolicy;
using test::MakeEntry;

struct Version {
  SequenceNumber seq;
  ValueType type;
  std::string value;
};

// A random data set: present user keys with 1-3 versions each (newest
// first), and absent user keys interleaved between them.
struct Dataset {
  std::vector<Entry> entries;
  std::map<std::string, std::vector<Version>> versions;
  std::vector<std::string> absent;
  SequenceNumber max_seq = 0;
};

Dataset MakeDataset(uint32_t seed, int num_user_keys, bool binary_keys,
                    size_t max_value = 40) {
  std::mt19937 rng(seed);
  std::set<std::string> keys;
  while (static_cast<int>(keys.size()) < num_user_keys) {
    std::string k;
    const int len = binary_keys ? static_cast<int>(rng() % 12)
                                : 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < len; i++) {
      k.push_back(binary_keys ? static_cast<char>(rng() % 4 == 0 ? 0 : rng())
                              : static_cast<char>('a' + rng() % 6));
    }
    keys.insert(k);
  }
  Dataset d;
  SequenceNumber seq = 1;
  for (const std::string& k : keys) {
    if (rng() % 4 == 0) {
      d.absent.push_back(k);
      continue;
    }
    std::vector<Version>& vs = d.versions[k];
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < n; i++) {
      const ValueType t =
          rng() % 4 == 0 ? ValueType::kDeletion : ValueType::kValue;
      std::string value;
      if (t == ValueType::kValue) {
        value.resize(rng() % (max_value + 1));
        for (char& c : value) c = static_cast<char>('A' + rng() % 26);
      }
      vs.push_back({seq, t, value});
      seq += 1 + rng() % 3;
    }
  }
  for (auto& [k, vs] : d.versions) {
    std::reverse(vs.begin(), vs.end());  // newest first
    for (const Version& v : vs) {
      d.entries.push_back(MakeEntry(k, v.seq, v.type, v.value));
    }
  }
  d.max_seq = seq;
  return d;
}

// What Get must answer without a filter.
LookupResult ModelGet(const Dataset& d, const std::string& k,
                      SequenceNumber snapshot, std::string* value) {
  auto it = d.versions.find(k);
  if (it == d.versions.end()) return LookupResult::kNotFound;
  for (const Version& v : it->second) {
    if (v.seq <= snapshot) {
      if (v.type == ValueType::kDeletion) return LookupResult::kDeleted;
      *value = v.value;
      return LookupResult::kFound;
    }
  }
  return LookupResult::kNotFound;
}

SegmentReaderOptions ReaderOptions(
    std::shared_ptr<const FilterPolicy> policy = nullptr,
    Cache* cache = nullptr) {
  SegmentReaderOptions o;
  o.filter_policy = std::move(policy);
  o.block_cache = cache;
  return o;
}

void CheckGets(const SegmentReader& reader, const Dataset& d,
               bool filter_used) {
  const SegmentReadOptions ro;
  std::mt19937 rng(99);
  for (const auto& [k, vs] : d.versions) {
    std::vector<SequenceNumber> snaps = {kMaxSequenceNumber, 0};
    for (const Version& v : vs) {
      snaps.push_back(v.seq);
      snaps.push_back(v.seq - 1);
      snaps.push_back(v.seq + 1);
    }
    for (SequenceNumber snap : snaps) {
      std::string want_value, value;
      const LookupResult want = ModelGet(d, k, snap, &want_value);
      LookupResult got;
      ASSERT_TRUE(
          reader.Get(ro, k, KeyHash(k), snap, &got, &value, nullptr).ok());
      ASSERT_EQ(static_cast<int>(got), static_cast<int>(want))
          << Slice(k).ToEscapedString() << " @" << snap;
      if (want == LookupResult::kFound) {
        ASSERT_EQ(value, want_value);
      }
    }
  }
  for (const std::string& k : d.absent) {
    LookupResult got;
    std::string value;
    ASSERT_TRUE(
        reader.Get(ro, k, KeyHash(k), kMaxSequenceNumber, &got, &value, nullptr)
            .ok());
    EXPECT_EQ(static_cast<int>(got),
              static_cast<int>(filter_used ? LookupResult::kFilterNegative
                                           : LookupResult::kNotFound))
        << Slice(k).ToEscapedString();
  }
}

void CheckIteration(const SegmentReader& reader, const Dataset& d) {
  const std::vector<Entry>& e = d.entries;
  auto it = reader.NewIterator(SegmentReadOptions(), nullptr);
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
    ASSERT_LT(i, e.size());
    ASSERT_EQ(it->key(), Slice(e[i].ikey));
    ASSERT_EQ(it->value(), Slice(e[i].value));
  }
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  ASSERT_EQ(i, e.size());
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    ASSERT_GT(i, 0u);
    i--;
    ASSERT_EQ(it->key(), Slice(e[i].ikey));
    ASSERT_EQ(it->value(), Slice(e[i].value));
  }
  ASSERT_TRUE(it->status().ok());
  ASSERT_EQ(i, 0u);

  // Seek and SeekForPrev to every entry, and between entries.
  std::vector<std::string> targets;
  for (const Entry& x : e) {
    ParsedInternalKey p;
    ASSERT_TRUE(ParseInternalKey(x.ikey, &p));
    targets.push_back(x.ikey);
    targets.push_back(
        MakeInternalKey(p.user_key, p.sequence + 1, ValueType::kValue));
    targets.push_back(
        MakeInternalKey(p.user_key, p.sequence, ValueType::kDeletion));
    targets.push_back(
        MakeInternalKey(p.user_key.ToString() + '\0', 0, ValueType::kValue));
  }
  for (const std::string& k : d.absent) {
    targets.push_back(MakeInternalKey(k, 5, ValueType::kValue));
  }
  targets.push_back(MakeInternalKey("", kMaxSequenceNumber, ValueType::kValue));
  targets.push_back(
      MakeInternalKey("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
                      "\xff\xff\xff",
                      0, ValueType::kDeletion));
  for (const std::string& t : targets) {
    size_t lb = 0;
    while (lb < e.size() && CompareInternalKeys(e[lb].ikey, t) < 0) lb++;
    it->Seek(t);
    if (lb == e.size()) {
      ASSERT_FALSE(it->Valid());
    } else {
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), Slice(e[lb].ikey));
      it->Prev();
      if (lb == 0) {
        ASSERT_FALSE(it->Valid());
      } else {
        ASSERT_TRUE(it->Valid());
        ASSERT_EQ(it->key(), Slice(e[lb - 1].ikey));
      }
    }
    const size_t le = (lb < e.size() && e[lb].ikey == t) ? lb + 1 : lb;
    it->SeekForPrev(t);
    if (le == 0) {
      ASSERT_FALSE(it->Valid());
    } else {
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), Slice(e[le - 1].ikey));
      it->Next();
      if (le == e.size()) {
        ASSERT_FALSE(it->Valid());
      } else {
        ASSERT_TRUE(it->Valid());
        ASSERT_EQ(it->key(), Slice(e[le].ikey));
      }
    }
    ASSERT_TRUE(it->status().ok());
  }
}

TEST(SegmentTest, EmptySegment) {
  for (bool with_filter : {false, true}) {
    SegmentBuilderOptions bo;
    if (with_filter) bo.filter_policy = std::make_shared<ExactFilterPolicy>();
    std::string file;
    SegmentProperties props;
    ASSERT_TRUE(test::BuildSegment(bo, {}, &file, &props).ok());
    EXPECT_EQ(props.num_entries, 0u);
    EXPECT_EQ(props.num_data_blocks, 0u);
    EXPECT_EQ(props.smallest_key, "");
    std::unique_ptr<SegmentReader> reader;
    ASSERT_TRUE(
        test::OpenSegment(ReaderOptions(bo.filter_policy), file, &reader).ok());
    EXPECT_EQ(reader->has_filter(), with_filter);
    LookupResult r;
    std::string v;
    ASSERT_TRUE(
        reader
            ->Get(SegmentReadOptions(), "a", KeyHash("a"), 10, &r, &v, nullptr)
            .ok());
    EXPECT_EQ(r, with_filter ? LookupResult::kFilterNegative
                             : LookupResult::kNotFound);
    auto it = reader->NewIterator(SegmentReadOptions(), nullptr);
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
    it->SeekToLast();
    EXPECT_FALSE(it->Valid());
    it->Seek(MakeInternalKey("a", 1, ValueType::kValue));
    EXPECT_FALSE(it->Valid());
    it->SeekForPrev(MakeInternalKey("a", 1, ValueType::kValue));
    EXPECT_FALSE(it->Valid());
    EXPECT_TRUE(it->status().ok());
  }
}

TEST(SegmentTest, OneKey) {
  SegmentBuilderOptions bo;
  bo.filter_policy = std::make_shared<ExactFilterPolicy>();
  std::string file;
  ASSERT_TRUE(test::BuildSegment(
                  bo, {MakeEntry("only", 7, ValueType::kValue, "value")}, &file)
                  .ok());
  std::unique_ptr<SegmentReader> reader;
  ASSERT_TRUE(
      test::OpenSegment(ReaderOptions(bo.filter_policy), file, &reader).ok());
  LookupResult r;
  std::string v;
  const SegmentReadOptions ro;
  ASSERT_TRUE(
      reader->Get(ro, "only", KeyHash("only"), 7, &r, &v, nullptr).ok());
  EXPECT_EQ(r, LookupResult::kFound);
  EXPECT_EQ(v, "value");
  ASSERT_TRUE(
      reader->Get(ro, "only", KeyHash("only"), 6, &r, &v, nullptr).ok());
  EXPECT_EQ(r, LookupResult::kNotFound);
  ASSERT_TRUE(reader->Get(ro, "onl", KeyHash("onl"), 9, &r, &v, nullptr).ok());
  EXPECT_EQ(r, LookupResult::kFilterNegative);
}

// The main model check over many shapes of segment.
TEST(SegmentTest, RoundTripAgainstModel) {
  for (uint32_t seed = 1; seed <= 4; seed++) {
    for (CompressionType c : {CompressionType::kNone, CompressionType::kLZ4,
                               CompressionType::kLZ4Values}) {
      for (size_t block_size : {size_t{64}, size_t{512}, size_t{4096}}) {
        for (bool filter : {false, true}) {
          SCOPED_TRACE("seed=" + std::to_string(seed) +
                       " compression=" + CompressionTypeName(c) +
                       " block_size=" + std::to_string(block_size) +
                       " filter=" + std::to_string(filter));
          const Dataset d = MakeDataset(seed, 300, /*binary_keys=*/seed % 2);
          SegmentBuilderOptions bo;
          bo.compression = c;
          bo.block_size = block_size;
          bo.block_restart_interval = static_cast<int>(1 + seed * 5 % 17);
          if (filter) bo.filter_policy = std::make_shared<ExactFilterPolicy>();
          std::string file;
          SegmentProperties props;
          ASSERT_TRUE(test::BuildSegment(bo, d.entries, &file, &props).ok());
          if (block_size == 64) {
            EXPECT_GT(props.num_data_blocks, 20u);
          }
          std::unique_ptr<SegmentReader> reader;
          ASSERT_TRUE(
              test::OpenSegment(ReaderOptions(bo.filter_policy), file, &reader)
                  .ok());
          EXPECT_EQ(reader->has_filter(), filter);
          if (filter) {
            // Kept at a cache-line boundary, whatever the file offset.
            EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(
                              reader->filter()->data().data()) %
                              64);
          }
          CheckGets(*reader, d, filter);
          CheckIteration(*reader, d);
        }
      }
    }
  }
}

// Version 1 (no restart prefixes) is still written on request and read;
// version 2 puts restart prefixes in uncompressed data blocks only: eight
// bytes per restart point, none in a compressed segment.
TEST(SegmentTest, FormatVersionsRoundTrip) {
  for (uint32_t seed = 1; seed <= 3; seed++) {
    for (CompressionType c : {CompressionType::kNone, CompressionType::kLZ4}) {
      SCOPED_TRACE("seed=" + std::to_string(seed) +
                   " lz4=" + std::to_string(c == CompressionType::kLZ4));
      const Dataset d = MakeDataset(seed, 2000, /*binary_keys=*/seed % 2);
      uint64_t data_size[3] = {};
      uint64_t data_blocks = 0;
      for (uint32_t version : {kSegmentFormatVersion1, kSegmentFormatVersion2}) {
        SCOPED_TRACE("version=" + std::to_string(version));
        SegmentBuilderOptions bo;
        bo.compression = c;
        bo.block_size = 512;
        bo.block_restart_interval = 4;
        bo.format_version = version;
        bo.filter_policy = std::make_shared<ExactFilterPolicy>();
        std::string file;
        SegmentProperties props;
        ASSERT_TRUE(test::BuildSegment(bo, d.entries, &file, &props).ok());
        std::unique_ptr<SegmentReader> reader;
        ASSERT_TRUE(
            test::OpenSegment(ReaderOptions(bo.filter_policy), file, &reader)
                .ok());
        EXPECT_EQ(version, reader->properties().format_version);
        data_size[version] = reader->properties().data_size;
        data_blocks = reader->properties().num_data_blocks;
        CheckGets(*reader, d, /*filter=*/true);
        CheckIteration(*reader, d);
      }
      if (c == CompressionType::kNone) {
        // At least one restart point per four entries, each with a prefix.
        EXPECT_GE(data_size[2] - data_size[1],
                  8 * (d.entries.size() / 4 - data_blocks));
      } else {
        EXPECT_EQ(data_size[1], data_size[2]);
      }
    }
  }
}

TEST(SegmentTest, KeysStraddlingBlockBoundaries) {
  // Many versions of the same user key spread over several tiny blocks.
  std::vector<Entry> entries;
  for (int seq = 200; seq >= 1; seq--) {
    entries.push_back(
        MakeEntry("hot", static_cast<SequenceNumber>(seq),
                  seq % 7 == 0 ? ValueType::kDeletion : ValueType::kValue,
                  "v" + std::to_string(seq)));
  }
  entries.push_back(MakeEntry("hou", 1, ValueType::kValue, "next"));
  SegmentBuilderOptions bo;
  bo.block_size = 100;
  bo.filter_policy = std::make_shared<ExactFilterPolicy>();
  std::string file;
  SegmentProperties props;
  ASSERT_TRUE(test::BuildSegment(bo, entries, &file, &props).ok());
  EXPECT_GT(props.num_data_blocks, 10u);
  EXPECT_EQ(props.num_filter_keys, 2u);
  std::unique_ptr<SegmentReader> reader;
  ASSERT_TRUE(
      test::OpenSegment(ReaderOptions(bo.filter_policy), file, &reader).ok());
  for (SequenceNumber snap = 0; snap <= 210; snap++) {
    LookupResult r;
    std::string v;
    ASSERT_TRUE(reader
                    ->Get(SegmentReadOptions(), "hot", KeyHash("hot"), snap, &r,
                          &v, nullptr)
                    .ok());
    const SequenceNumber newest = std::min<SequenceNumber>(snap, 200);
    if (newest == 0) {
      EXPECT_EQ(r, LookupResult::kNotFound);
    } else if (newest % 7 == 0) {
      EXPECT_EQ(r, LookupResult::kDeleted) << snap;
    } else {
      ASSERT_EQ(r, LookupResult::kFound) << snap;
      EXPECT_EQ(v, "v" + std::to_string(newest));
    }
  }
}

TEST(SegmentTest, LargeValues) {
  std::mt19937 rng(5);
  std::vector<Entry> entries;
  for (int i = 0; i < 4; i++) {
    std::string v(1 << 20, '\0');
    if (i % 2 == 0) {
      for (char& c : v) c = static_cast<char>(rng());
    } else {
      for (size_t j = 0; j < v.size(); j++) v[j] = static_cast<char>(j % 13);
    }
    entries.push_back(
        MakeEntry("big" + std::to_string(i), 1, ValueType::kValue, v));
  }
  for (CompressionType c : {CompressionType::kNone, CompressionType::kLZ4,
                               CompressionType::kLZ4Values}) {
    SegmentBuilderOptions bo;
    bo.compression = c;
    std::string file;
    SegmentProperties props;
    ASSERT_TRUE(test::BuildSegment(bo, entries, &file, &props).ok());
    EXPECT_EQ(props.num_data_blocks, 4u);
    if (c != CompressionType::kNone) {
      EXPECT_LT(file.size(), 3u << 20);  // the periodic values compress
    }
    std::unique_ptr<SegmentReader> reader;
    ASSERT_TRUE(test::OpenSegment(ReaderOptions(), file, &reader).ok());
    for (const Entry& e : entries) {
      const Slice uk = ExtractUserKey(e.ikey);
      LookupResult r;
      std::string v;
      ASSERT_TRUE(
          reader->Get(SegmentReadOptions(), uk, KeyHash(uk), 1, &r, &v, nullptr)
              .ok());
      ASSERT_EQ(r, LookupResult::kFound);
      EXPECT_TRUE(v == e.value);
    }
  }
}

// Values compressed one by one: the builder holds the first entries until
// their values make the dictionary, but not forever: with empty or tiny
// values (a key-only store) it starts writing blocks once the entries held
// take a bounded amount of memory.
TEST(SegmentTest, CompressedValuesDoNotHoldAKeyOnlySegment) {
  for (size_t value_size : {size_t{0}, size_t{1}}) {
    SCOPED_TRACE("value_size=" + std::to_string(value_size));
    std::string file;
    SegmentBuilderOptions bo;
    bo.compression = CompressionType::kLZ4Values;
    bo.filter_policy = std::make_shared<ExactFilterPolicy>();
    test::StringSink sink(&file);
    SegmentBuilder builder(bo, &sink);
    constexpr int kN = 100000;
    char key[32];
    for (int i = 0; i < kN; i++) {
      std::snprintf(key, sizeof(key), "code%08d", i);
      ASSERT_TRUE(builder
                      .Add(MakeInternalKey(key, 1, ValueType::kValue),
                           std::string(value_size, 'v'))
                      .ok());
      if (i == kN / 2) {
        // Half the entries (about 1.2 MB of keys) in: blocks are written.
        EXPECT_GT(builder.FileSize(), 500u << 10);
      }
    }
    ASSERT_TRUE(builder.Finish().ok());
    EXPECT_TRUE(builder.properties().has_value_dictionary);
    std::unique_ptr<SegmentReader> reader;
    ASSERT_TRUE(test::OpenSegment(ReaderOptions(bo.filter_policy), file,
                                  &reader)
                    .ok());
    for (int i = 0; i < kN; i += 997) {
      std::snprintf(key, sizeof(key), "code%08d", i);
      LookupResult r;
      std::string v = "x";
      ASSERT_TRUE(reader
                      ->Get(SegmentReadOptions(), key, KeyHash(key), 1, &r, &v,
                            nullptr)
                      .ok());
      ASSERT_EQ(LookupResult::kFound, r) << key;
      EXPECT_EQ(std::string(value_size, 'v'), v);
    }
  }
}

// A compaction's path for values compressed one by one: entries read
// through a ValueRecoder come in the recoder's stored form (copied as they
// are when the segment has its dictionary), and a builder given that
// dictionary writes them as they are; the segment reads back as the data
// set, with its value bytes counted raw.
TEST(SegmentTest, ValuesMoveInTheirStoredForm) {
  for (uint32_t seed = 1; seed <= 3; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const Dataset d = MakeDataset(seed, 400, /*binary_keys=*/false,
                                  /*max_value=*/120);
    SegmentBuilderOptions bo;
    bo.compression = CompressionType::kLZ4Values;
    bo.block_size = 512;
    bo.filter_policy = std::make_shared<ExactFilterPolicy>();
    std::string source_file;
    SegmentProperties source_props;
    ASSERT_TRUE(
        test::BuildSegment(bo, d.entries, &source_file, &source_props).ok());
    std::unique_ptr<SegmentReader> source;
    ASSERT_TRUE(
        test::OpenSegment(ReaderOptions(bo.filter_policy), source_file, &source)
            .ok());
    const std::shared_ptr<const ValueDictionary> own = source->meta()->values;
    ASSERT_NE(own, nullptr);
    const auto other = std::make_shared<const ValueDictionary>(
        std::string("QWERTYUIOPASDFGHJKLZXCVBNM") + "ZYXWVUTSRQ");
    for (const auto& target : {own, other}) {
      SCOPED_TRACE(target == own ? "the source's dictionary" : "another one");
      ValueRecoder recoder(target);
      SegmentReadOptions ro;
      ro.recoder = &recoder;
      std::vector<Entry> stored;
      auto it = source->NewIterator(ro, nullptr);
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        stored.push_back({it->key().ToString(), it->value().ToString()});
      }
      ASSERT_TRUE(it->status().ok()) << it->status().ToString();
      ASSERT_EQ(stored.size(), d.entries.size());
      SegmentBuilderOptions encoded = bo;
      encoded.value_dictionary = target;
      encoded.values_encoded = true;
      std::string file;
      SegmentProperties props;
      ASSERT_TRUE(test::BuildSegment(encoded, stored, &file, &props).ok());
      EXPECT_EQ(props.raw_value_bytes, source_props.raw_value_bytes);
      if (target == own) {
        // Nothing was recompressed: the same bytes as the source.
        EXPECT_EQ(file, source_file);
      }
      std::unique_ptr<SegmentReader> reader;
      ASSERT_TRUE(
          test::OpenSegment(ReaderOptions(bo.filter_policy), file, &reader)
              .ok());
      ASSERT_NE(reader->meta()->values, nullptr);
      EXPECT_EQ(reader->meta()->values->bytes(), target->bytes());
      CheckGets(*reader, d, /*filter_used=*/true);
      CheckIteration(*reader, d);
    }
    // Raw values with a given dictionary are compressed against it.
    SegmentBuilderOptions given = bo;
    given.value_dictionary = other;
    std::string file;
    ASSERT_TRUE(test::BuildSegment(given, d.entries, &file).ok());
    std::unique_ptr<SegmentReader> reader;
    ASSERT_TRUE(
        test::OpenSegment(ReaderOptions(bo.filter_policy), file, &reader).ok());
    EXPECT_EQ(reader->meta()->values->bytes(), other->bytes());
    CheckGets(*reader, d, /*filter_used=*/true);
    CheckIteration(*reader, d);
  }
  // A segment of no entries still carries the dictionary it was given.
  SegmentBuilderOptions bo;
  bo.compression = CompressionType::kLZ4Values;
  bo.value_dictionary = std::make_shared<const ValueDictionary>("dictionary");
  bo.values_encoded = true;
  std::string file;
  SegmentProperties props;
  ASSERT_TRUE(test::BuildSegment(bo, {}, &file, &props).ok());
  EXPECT_TRUE(props.has_value_dictionary);
  // Encoded values need a dictionary and a segment of compressed values.
  for (CompressionType c :
       {CompressionType::kLZ4Values, CompressionType::kNone}) {
    SegmentBuilderOptions bad = bo;
    bad.compression = c;
    if (c == CompressionType::kLZ4Values) bad.value_dictionary = nullptr;
    const Status s = test::BuildSegment(
        bad, {{MakeInternalKey("k", 1, ValueType::kValue), "v"}}, &file);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  }
}

TEST(SegmentTest, OneMillionKeys) {
  constexpr int kN = 1000000;
  std::string file;
  SegmentBuilderOptions bo;
  bo.filter_policy = std::make_shared<ExactFilterPolicy>();
  {
    test::StringSink sink(&file);
    SegmentBuilder builder(bo, &sink);
    char buf[32];
    for (int i = 0; i < kN; i++) {
      std::snprintf(buf, sizeof(buf), "user%09d", i * 2);
      ASSERT_TRUE(builder
                      .Add(MakeInternalKey(buf, static_cast<SequenceNumber>(i),
                                           ValueType::kValue),
                           std::to_string(i))
                      .ok());
    }
    ASSERT_TRUE(builder.Finish().ok());
    EXPECT_EQ(builder.NumEntries(), static_cast<uint64_t>(kN));
    EXPECT_EQ(builder.properties().num_filter_keys, static_cast<uint64_t>(kN));
  }
  std::unique_ptr<SegmentReader> reader;
  ASSERT_TRUE(
      test::OpenSegment(ReaderOptions(bo.filter_policy), file, &reader).ok());
  char buf[32];
  for (int i = 0; i < kN; i += 997) {
    for (int delta : {0, 1}) {
      std::snprintf(buf, sizeof(buf), "user%09d", i * 2 + delta);
      LookupResult r;
      std::string v;
      ASSERT_TRUE(reader
                      ->Get(SegmentReadOptions(), buf, KeyHash(buf),
                            kMaxSequenceNumber, &r, &v, nullptr)
                      .ok());
      if (delta == 0) {
        ASSERT_EQ(r, LookupResult::kFound) << buf;
        ASSERT_EQ(v, std::to_string(i));
      } else {
        ASSERT_EQ(r, LookupResult::kFilterNegative) << buf;
      }
    }
  }
  SegmentReadStats stats;
  auto it = reader->NewIterator(SegmentReadOptions(), &stats);
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(n, kN);
  EXPECT_EQ(stats.data_blocks_read, reader->properties().num_data_blocks);
}

TEST(SegmentTest, FilterNegativeDoesNoIO) {
  const Dataset d = MakeDataset(11, 200, false);
  SegmentBuilderOptions bo;
  bo.block_size = 256;
  bo.filter_policy = std::make_shared<ExactFilterPolicy>();
  std::string file;
  ASSERT_TRUE(test::BuildSegment(bo, d.entries, &file).ok());
  auto reads = std::make_shared<std::atomic<int>>(0);
  std::unique_ptr<SegmentReader> reader;
  ASSERT_TRUE(
      test::OpenSegment(ReaderOptions(bo.filter_policy), file, &reader, reads)
          .ok());
  EXPECT_GT(reads->load(), 0);  // Open read the footer and metadata
  reads->store(0);
  ASSERT_FALSE(d.absent.empty());
  for (const std::string& k : d.absent) {
    EXPECT_FALSE(reader->KeyMayMatch(KeyHash(k)));
    SegmentReadStats stats;
    LookupResult r;
    std::string v;
    ASSERT_TRUE(reader
                    ->Get(SegmentReadOptions(), k, KeyHash(k),
                          kMaxSequenceNumber, &r, &v, &stats)
                    .ok());
    EXPECT_EQ(r, LookupResult::kFilterNegative);
    EXPECT_EQ(stats.data_blocks_read, 0u);
    EXPECT_EQ(stats.bytes_read, 0u);
    EXPECT_EQ(stats.cache_misses, 0u);
  }
  EXPECT_EQ(reads->load(), 0);
  // A positive does read.
  const std::string& present = d.versions.begin()->first;
  SegmentReadStats stats;
  LookupResult r;
  std::string v;
  ASSERT_TRUE(reader
                  ->Get(SegmentReadOptions(), present, KeyHash(present),
                        kMaxSequenceNumber, &r, &v, &stats)
                  .ok());
  EXPECT_NE(r, LookupResult::kFilterNegative);
  EXPECT_EQ(reads->load(), 1);
  EXPECT_EQ(stats.data_blocks_read, 1u);
  EXPECT_GT(stats.bytes_read, kBlockTrailerSize);
}

TEST(SegmentTest, ForeignFilterIsNotInterpreted) {
  const Dataset d = MakeDataset(12, 200, true);
  SegmentBuilderOptions bo;
  bo.block_size = 300;
  bo.filter_policy = std::make_shared<ExactFilterPolicy>("test.PolicyA");
  std::string file;
  SegmentProperties props;
  ASSERT_TRUE(test::BuildSegment(bo, d.entries, &file, &props).ok());
  EXPECT_EQ(props.filter_policy, "test.PolicyA");
  EXPECT_GT(props.filter_size, 0u);

  std::unique_ptr<SegmentReader> same, other, none;
  ASSERT_TRUE(
      test::OpenSegment(
          ReaderOptions(std::make_shared<ExactFilterPolicy>("test.PolicyA")),
          file, &same)
          .ok());
  EXPECT_TRUE(same->has_filter());
  EXPECT_GT(same->filter_memory(), 0u);
  EXPECT_EQ(same->TheoreticalFpRate(), 0.0);

  ASSERT_TRUE(
      test::OpenSegment(
          ReaderOptions(std::make_shared<ExactFilterPolicy>("test.PolicyB")),
          file, &other)
          .ok());
  ASSERT_TRUE(test::OpenSegment(ReaderOptions(), file, &none).ok());
  for (const SegmentReader* r : {other.get(), none.get()}) {
    EXPECT_FALSE(r->has_filter());
    EXPECT_EQ(r->filter_memory(), 0u);
    EXPECT_EQ(r->TheoreticalFpRate(), 1.0);
    for (const std::string& k : d.absent)
      EXPECT_TRUE(r->KeyMayMatch(KeyHash(k)));
    CheckGets(*r, d, /*filter_used=*/false);
  }
  CheckGets(*same, d, /*filter_used=*/true);
}

TEST(SegmentTest, BuilderRejectsBadKeysAndStaysFailed) {
  const std::string good1 = MakeInternalKey("b", 5, ValueType::kValue);
  const std::string good2 = MakeInternalKey("c", 5, ValueType::kValue);
  std::string bad_type = MakeInternalKey("b", 5, ValueType::kValue);
  bad_type.back() = 0;                // high byte of the sequence: fine
  bad_type[bad_type.size() - 8] = 7;  // type byte 7: unknown
  const std::vector<std::vector<std::string>> cases = {
      {"short"},
      {bad_type},
      {good1, good1},                                       // duplicate
      {good1, MakeInternalKey("a", 9, ValueType::kValue)},  // user key back
      {good1, MakeInternalKey("b", 6, ValueType::kValue)},  // newer after older
      {good1, MakeInternalKey("b", 5, ValueType::kDeletion)},  // ok ...
  };
  for (size_t c = 0; c < cases.size(); c++) {
    SCOPED_TRACE("case " + std::to_string(c));
    std::string file;
    test::StringSink sink(&file);
    SegmentBuilder builder(SegmentBuilderOptions(), &sink);
    Status s;
    for (const std::string& k : cases[c]) {
      s = builder.Add(k, "v");
      if (!s.ok()) break;
    }
    if (c == cases.size() - 1) {
      // Same user key and sequence, deletion sorts after value: accepted.
      EXPECT_TRUE(s.ok()) << s.ToString();
      continue;
    }
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_TRUE(builder.status().IsInvalidArgument());
    EXPECT_TRUE(builder.Add(MakeInternalKey("zz", 1, ValueType::kValue), "v")
                    .IsInvalidArgument());
    EXPECT_TRUE(builder.Finish().IsInvalidArgument());
  }
}

TEST(SegmentTest, AbandonStops) {
  std::string file;
  test::StringSink sink(&file);
  SegmentBuilder builder(SegmentBuilderOptions(), &sink);
  ASSERT_TRUE(
      builder.Add(MakeInternalKey("a", 1, ValueType::kValue), "v").ok());
  builder.Abandon();
  EXPECT_FALSE(
      builder.Add(MakeInternalKey("b", 1, ValueType::kValue), "v").ok());
  EXPECT_FALSE(builder.Finish().ok());
  EXPECT_EQ(file.size(), builder.FileSize());
}

TEST(SegmentTest, BlockCache) {
  const Dataset d = MakeDataset(13, 300, false);
  SegmentBuilderOptions bo;
  bo.block_size = 256;
  std::string file;
  ASSERT_TRUE(test::BuildSegment(bo, d.entries, &file).ok());
  const std::string& k = d.versions.begin()->first;
  Cache cache(1 << 20);
  {
    auto reads = std::make_shared<std::atomic<int>>(0);
    std::unique_ptr<SegmentReader> reader;
    ASSERT_TRUE(
        test::OpenSegment(ReaderOptions(nullptr, &cache), file, &reader, reads)
            .ok());
    reads->store(0);
    SegmentReadStats stats;
    LookupResult r;
    std::string v;
    ASSERT_TRUE(reader
                    ->Get(SegmentReadOptions(), k, KeyHash(k),
                          kMaxSequenceNumber, &r, &v, &stats)
                    .ok());
    EXPECT_EQ(stats.cache_misses, 1u);
    EXPECT_EQ(stats.cache_hits, 0u);
    EXPECT_EQ(stats.data_blocks_read, 1u);
    EXPECT_GT(cache.TotalCharge(), 0u);
    ASSERT_TRUE(reader
                    ->Get(SegmentReadOptions(), k, KeyHash(k),
                          kMaxSequenceNumber, &r, &v, &stats)
                    .ok());
    EXPECT_EQ(stats.cache_hits, 1u);
    EXPECT_EQ(stats.cache_misses, 1u);
    EXPECT_EQ(stats.data_blocks_read, 1u);
    EXPECT_EQ(reads->load(), 1);
    // Iteration reuses the cached blocks and fills the rest.
    auto it = reader->NewIterator(SegmentReadOptions(), &stats);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
    EXPECT_EQ(stats.cache_hits, 2u);
    EXPECT_EQ(stats.data_blocks_read, reader->properties().num_data_blocks);
  }
  {
    // A fresh reader gets a fresh cache id: nothing of the first reader's
    // is visible to it, and fill_cache=false leaves the cache alone.
    Cache cache2(1 << 20);
    std::unique_ptr<SegmentReader> reader;
    ASSERT_TRUE(
        test::OpenSegment(ReaderOptions(nullptr, &cache2), file, &reader).ok());
    SegmentReadOptions ro;
    ro.fill_cache = false;
    SegmentReadStats stats;
    LookupResult r;
    std::string v;
    for (int i = 0; i < 2; i++) {
      ASSERT_TRUE(
          reader->Get(ro, k, KeyHash(k), kMaxSequenceNumber, &r, &v, &stats)
              .ok());
    }
    EXPECT_EQ(stats.cache_misses, 2u);
    EXPECT_EQ(stats.cache_hits, 0u);
    EXPECT_EQ(stats.data_blocks_read, 2u);
    EXPECT_EQ(cache2.TotalCharge(), 0u);
  }
}

// Cached blocks are trusted, so a block is checksummed when it enters the
// cache even if the read did not ask for verification, and so is a block a
// point lookup reads without caching it. A damaged block never enters the
// cache.
TEST(SegmentTest, ChecksumVerifiedOnCacheFillAndOnRequest) {
  std::vector<test::Entry> entries;
  for (int i = 0; i < 200; i++) {
    char k[16];
    std::snprintf(k, sizeof(k), "k%03d", i);
    entries.push_back(test::MakeEntry(k, static_cast<SequenceNumber>(i + 1),
                                      ValueType::kValue,
                                      "value-" + std::to_string(i)));
  }
  SegmentBuilderOptions bo;
  bo.compression = CompressionType::kNone;  // damage would go unnoticed
  bo.block_size = 512;
  std::string file;
  ASSERT_TRUE(test::BuildSegment(bo, entries, &file).ok());
  // The first data block starts at offset 0 with the first entry: a 3-byte
  // header, the key, then the value. Damage a byte of that value.
  const size_t damaged = 3 + entries[0].ikey.size() + 1;
  std::string bad = file;
  bad[damaged] = static_cast<char>(bad[damaged] ^ 0x20);
  const std::string k = "k000";

  for (bool with_cache : {false, true}) {
    for (bool verify : {false, true}) {
      for (bool fill : {false, true}) {
        SCOPED_TRACE("cache=" + std::to_string(with_cache) + " verify=" +
                     std::to_string(verify) + " fill=" + std::to_string(fill));
        Cache cache(1 << 20);
        std::unique_ptr<SegmentReader> reader;
        ASSERT_TRUE(test::OpenSegment(
                        ReaderOptions(nullptr, with_cache ? &cache : nullptr),
                        bad, &reader)
                        .ok());
        SegmentReadOptions ro;
        ro.verify_checksums = verify;
        ro.fill_cache = fill;
        LookupResult r;
        std::string v;
        for (int attempt = 0; attempt < 2; attempt++) {
          const Status s = reader->Get(ro, k, KeyHash(k), kMaxSequenceNumber,
                                       &r, &v, nullptr);
          // A point lookup verifies whichever way its block comes: into
          // the cache, or read for this lookup only.
          ASSERT_TRUE(s.IsCorruption()) << s.ToString();
          EXPECT_NE(s.message().find("checksum"), std::string::npos);
          EXPECT_NE(s.message().find("000001.seg"), std::string::npos);
        }
        EXPECT_EQ(0u, cache.TotalCharge());
      }
    }
  }

  // The intact file: the block is verified once, on its way into the cache,
  // and later hits are served without reading it again.
  Cache cache(1 << 20);
  auto reads = std::make_shared<std::atomic<int>>(0);
  std::unique_ptr<SegmentReader> reader;
  ASSERT_TRUE(
      test::OpenSegment(ReaderOptions(nullptr, &cache), file, &reader, reads)
          .ok());
  reads->store(0);
  SegmentReadOptions ro;
  ro.verify_checksums = false;
  SegmentReadStats stats;
  for (int i = 0; i < 3; i++) {
    LookupResult r;
    std::string v;
    ASSERT_TRUE(
        reader->Get(ro, k, KeyHash(k), kMaxSequenceNumber, &r, &v, &stats)
            .ok());
    EXPECT_EQ(r, LookupResult::kFound);
    EXPECT_EQ(v, "value-0");
  }
  EXPECT_EQ(reads->load(), 1);
  EXPECT_EQ(stats.cache_hits, 2u);
}

// A file that hands out its own bytes (as a mapping does) and records the
// WillNeed hints it is given.
class HintedSource final : public RandomAccessFile {
 public:
  explicit HintedSource(std::string contents)
      : source_(std::move(contents), nullptr, test::ReadMode::kInPlace) {}
  Status Read(uint64_t offset, size_t n, Slice* result,
              char* scratch) const override {
    return source_.Read(offset, n, result, scratch);
  }
  void WillNeed(uint64_t offset, size_t n) const override {
    hints->emplace_back(offset, n);
  }
  std::shared_ptr<std::vector<std::pair<uint64_t, size_t>>> hints =
      std::make_shared<std::vector<std::pair<uint64_t, size_t>>>();

 private:
  test::StringSource source_;
};

// A metadata block, read whole once, is asked for whole before it is
// touched (a mapping would otherwise fault its pages in one by one); a data
// block is not (a lookup touches one or two of its pages, and a warm store
// would pay a system call for every block's first lookup).
TEST(SegmentTest, MetadataBlocksAreAskedForWholeDataBlocksAreNot) {
  const Dataset d = MakeDataset(41, 300, false);
  for (CompressionType c : {CompressionType::kNone, CompressionType::kLZ4,
                            CompressionType::kLZ4Values}) {
    SCOPED_TRACE(CompressionTypeName(c));
    SegmentBuilderOptions bo;
    bo.compression = c;
    bo.block_size = 512;
    bo.filter_policy = std::make_shared<ExactFilterPolicy>();
    std::string file;
    SegmentProperties props;
    ASSERT_TRUE(test::BuildSegment(bo, d.entries, &file, &props).ok());
    auto source = std::make_unique<HintedSource>(file);
    const auto hints = source->hints;
    std::unique_ptr<SegmentReader> reader;
    ASSERT_TRUE(SegmentReader::Open(ReaderOptions(bo.filter_policy),
                                    "000001.seg", std::move(source),
                                    file.size(), &reader)
                    .ok());
    // Properties, index, filter, and the value dictionary when there is
    // one: each asked for with its trailer.
    EXPECT_EQ(props.has_value_dictionary ? 4u : 3u, hints->size());
    for (const auto& [offset, n] : *hints) {
      EXPECT_LE(offset + n, file.size() - kFooterSize);
    }
    const std::string& key = d.versions.begin()->first;
    for (int pass = 0; pass < 3; pass++) {
      hints->clear();
      LookupResult r;
      std::string v;
      ASSERT_TRUE(reader
                      ->Get(SegmentReadOptions(), key, KeyHash(key),
                            kMaxSequenceNumber, &r, &v, nullptr)
                      .ok());
      ASSERT_EQ(LookupResult::kFound, r);
      EXPECT_EQ(0u, hints->size()) << "pass " << pass;
    }
    // A scan through a readahead buffer asks for each stretch it refills.
    hints->clear();
    SegmentReadOptions scan;
    scan.readahead_size = 2048;
    std::unique_ptr<Iterator> it = reader->NewIterator(scan, nullptr);
    size_t entries = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) entries++;
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    EXPECT_EQ(d.entries.size(), entries);
    EXPECT_GE(hints->size(), 2u);
    for (const auto& [offset, n] : *hints) {
      EXPECT_GE(n, 1024u) << offset;  // a stretch, not a block at a time
    }
  }
}

// An Env whose clock moves by step_micros at every reading, so that every
// timed read takes that long.
class SteppingClock final : public EnvWrapper {
 public:
  SteppingClock() : EnvWrapper(Env::Default()) {}
  uint64_t NowMicros() override { return now_ += step_micros; }
  uint64_t step_micros = 0;

 private:
  uint64_t now_ = 0;
};

// A mapped file's first read of a data block is timed. While such reads
// wait (the store is not in memory), a block that straddles a page boundary
// is asked for whole before it is touched, one device read instead of a
// page fault per page; quick first reads (a store in memory) stop the
// hints, and verified blocks are never hinted.
TEST(SegmentTest, FirstReadsThatWaitAskForTheirStraddlingBlocks) {
  const Dataset d = MakeDataset(43, 600, false);
  for (CompressionType c :
       {CompressionType::kNone, CompressionType::kLZ4Values}) {
    SCOPED_TRACE(CompressionTypeName(c));
    SegmentBuilderOptions bo;
    bo.compression = c;
    bo.block_size = 1024;
    std::string file;
    SegmentProperties props;
    ASSERT_TRUE(test::BuildSegment(bo, d.entries, &file, &props).ok());
    const uint64_t data_end = props.data_end();
    ASSERT_GT(data_end, 4u * 4096);  // blocks across several pages

    // Reads each key once in key order (each data block's first read comes
    // with its first key); returns the hints of data blocks given meanwhile.
    const auto read_all = [&](const SegmentReader& reader,
                              HintedSource* source) {
      source->hints->clear();
      for (const auto& [key, versions] : d.versions) {
        LookupResult r;
        std::string v;
        EXPECT_TRUE(reader
                        .Get(SegmentReadOptions(), key, KeyHash(key),
                             kMaxSequenceNumber, &r, &v, nullptr)
                        .ok());
      }
      return *source->hints;
    };
    // A reader of the file timed by a clock stepping step_micros per reading.
    struct Opened {
      SteppingClock clock;
      HintedSource* source = nullptr;
      std::unique_ptr<SegmentReader> reader;
    };
    const auto open = [&](uint64_t step_micros, Opened* o) {
      o->clock.step_micros = step_micros;
      auto f = std::make_unique<HintedSource>(file);
      o->source = f.get();
      SegmentReaderOptions ro = ReaderOptions();
      ro.clock = &o->clock;
      ASSERT_TRUE(SegmentReader::Open(ro, "000001.seg", std::move(f),
                                      file.size(), &o->reader)
                      .ok());
    };

    {
      SCOPED_TRACE("every first read waits");
      Opened o;
      open(100, &o);
      const auto hints = read_all(*o.reader, o.source);
      EXPECT_GE(hints.size(), 2u);
      for (const auto& [offset, n] : hints) {
        EXPECT_LE(offset + n, data_end);
        EXPECT_LE(n, 2 * bo.block_size);
        EXPECT_NE(offset / 4096, (offset + n - 1) / 4096)
            << "hinted a block within one page at " << offset;
      }
      // Every block is verified now: no first reads, no hints.
      EXPECT_EQ(0u, read_all(*o.reader, o.source).size());
    }
    {
      SCOPED_TRACE("no first read waits");
      Opened o;
      open(0, &o);
      EXPECT_EQ(0u, read_all(*o.reader, o.source).size());
    }
    {
      SCOPED_TRACE("a few waits, then none");
      Opened o;
      open(100, &o);
      SteppingClock& clock = o.clock;
      HintedSource* source = o.source;
      const std::unique_ptr<SegmentReader>& reader = o.reader;
      // Whether a lookup made the first read of a block (one not trusted
      // from before).
      SegmentReadStats stats;
      auto it = d.versions.begin();
      const auto first_read = [&]() {
        const SegmentReadStats before = stats;
        LookupResult r;
        std::string v;
        EXPECT_TRUE(reader
                        ->Get(SegmentReadOptions(), it->first,
                              KeyHash(it->first), kMaxSequenceNumber, &r, &v,
                              &stats)
                        .ok());
        ++it;
        return stats.data_blocks_read > before.data_blocks_read &&
               stats.checksums_trusted == before.checksums_trusted;
      };
      // The file's first block read (not timed: the reader learns there
      // that the file is mapped), then two timed ones that wait.
      for (int n = 0; n < 3 && it != d.versions.end();) n += first_read();
      // Quick from now on: each first read lowers the score by one, so the
      // hints stop within 2 * 4 first reads.
      clock.step_micros = 0;
      int blocks_after = 0;
      int last_hint_block = 0;
      while (it != d.versions.end()) {
        const size_t hints_before = source->hints->size();
        if (first_read()) blocks_after++;
        if (source->hints->size() > hints_before) {
          last_hint_block = blocks_after;
        }
      }
      EXPECT_GT(blocks_after, 20);
      EXPECT_LE(last_hint_block, 8);
    }
  }
}

// A point lookup's data block comes one of three ways: a cache hit, a read
// admitted into the cache, or a read for that lookup only (no cache, a full
// cache that does not admit it, or fill_cache=false), which borrows a
// mapped file's bytes or decompresses into a buffer on the stack, or the
// heap when the block is larger. Every way must give the model's answers,
// for both kinds of file read, with and without compression.
TEST(SegmentTest, LookupsThroughEveryBlockPath) {
  for (size_t max_value : {size_t{40}, size_t{20000}}) {
    const Dataset d = MakeDataset(31, 400, true, max_value);
    for (CompressionType c : {CompressionType::kNone, CompressionType::kLZ4,
                               CompressionType::kLZ4Values}) {
      SegmentBuilderOptions bo;
      bo.compression = c;
      bo.block_size = max_value > 1000 ? 16 << 10 : 1024;
      std::string file;
      ASSERT_TRUE(test::BuildSegment(bo, d.entries, &file).ok());
      for (test::ReadMode mode : {test::ReadMode::kCopy,
                                  test::ReadMode::kInPlace}) {
        // No cache; one too small to hold more than a few blocks (so it
        // soon refuses blocks); one holding everything.
        for (size_t capacity : {size_t{0}, size_t{4} << 10, size_t{1} << 30}) {
          for (bool fill : {true, false}) {
            SCOPED_TRACE(std::string("compression=") +
                         CompressionTypeName(c) +
                         " max_value=" + std::to_string(max_value) +
                         " mode=" + test::ReadModeName(mode) +
                         " capacity=" + std::to_string(capacity) +
                         " fill=" + std::to_string(fill));
            std::unique_ptr<Cache> cache;
            if (capacity > 0) cache = std::make_unique<Cache>(capacity, 0);
            std::unique_ptr<SegmentReader> reader;
            ASSERT_TRUE(SegmentReader::Open(
                            ReaderOptions(nullptr, cache.get()), "000001.seg",
                            std::make_unique<test::StringSource>(
                                file, nullptr, mode),
                            file.size(), &reader)
                            .ok());
            SegmentReadOptions ro;
            ro.fill_cache = fill;
            ro.verify_checksums = false;
            SegmentReadStats stats;
            // Twice, so that the second pass meets cached blocks where the
            // cache kept them.
            for (int pass = 0; pass < 2; pass++) {
              for (const auto& [k, vs] : d.versions) {
                for (SequenceNumber snap : {kMaxSequenceNumber, vs[0].seq - 1}) {
                  std::string want_value, value;
                  const LookupResult want = ModelGet(d, k, snap, &want_value);
                  LookupResult got;
                  ASSERT_TRUE(reader
                                  ->Get(ro, k, KeyHash(k), snap, &got, &value,
                                        &stats)
                                  .ok());
                  ASSERT_EQ(static_cast<int>(got), static_cast<int>(want))
                      << Slice(k).ToEscapedString() << " @" << snap;
                  if (want == LookupResult::kFound) {
                    ASSERT_EQ(value, want_value);
                  }
                }
              }
            }
            if (cache != nullptr) {
              EXPECT_LE(cache->TotalCharge(), capacity);
              if (!fill) {
                EXPECT_EQ(0u, cache->TotalCharge());
              }
              // A cache that holds everything: a block misses it once, then
              // is served from it or (raw in a mapping) where it lies.
              if (fill && capacity > file.size()) {
                EXPECT_LE(stats.cache_misses,
                          reader->properties().num_data_blocks);
                if (mode == test::ReadMode::kCopy) {
                  EXPECT_GT(stats.cache_hits, stats.cache_misses);
                }
              }
            }
          }
        }
      }
    }
  }
}

// A point lookup takes its block's handle from SegmentMeta::block_offsets
// when no separator shares its key's eight-byte prefix: every placement must
// be the block the index block's own search names, and a key sharing a
// separator's prefix is left to that search.
TEST(SegmentTest, KeysPlacedByPrefixAloneFindTheIndexBlocksAnswer) {
  std::mt19937 rng(5);
  std::set<std::string> keys;
  while (keys.size() < 3000) {
    // Short codes, and long keys that share their first eight bytes.
    std::string k;
    const bool shared = rng() % 4 == 0;
    const size_t len = shared ? 12 : 7;
    for (size_t i = 0; i < len; i++) {
      k.push_back(shared && i < 8 ? 'm' : static_cast<char>('0' + rng() % 75));
    }
    keys.insert(k);
  }
  std::vector<Entry> entries;
  SequenceNumber seq = 1;
  for (const std::string& k : keys) {
    entries.push_back(MakeEntry(k, seq++, ValueType::kValue, "v" + k));
  }
  SegmentBuilderOptions bo;
  bo.block_size = 512;
  std::string file;
  SegmentProperties props;
  ASSERT_TRUE(test::BuildSegment(bo, entries, &file, &props).ok());
  std::unique_ptr<SegmentReader> reader;
  ASSERT_TRUE(test::OpenSegment(ReaderOptions(), file, &reader).ok());
  const SegmentMeta& meta = *reader->meta();
  ASSERT_EQ(meta.block_offsets.size(), props.num_data_blocks + 1);
  int placed = 0, undecided = 0, none = 0;
  auto check = [&](const std::string& k) {
    SCOPED_TRACE(Slice(k).ToEscapedString());
    BlockKeyBuffer key_buf;
    Slice key, index_value;
    bool found = false;
    uint32_t number = Block::kNotARestartPoint;
    const LookupKey lookup(k, kMaxSequenceNumber);
    ASSERT_TRUE(meta.index_block
                    ->Find(lookup.internal_key(), &key_buf, &key, &index_value,
                           &found, &number)
                    .ok());
    BlockHandle want;
    if (found) {
      ASSERT_TRUE(want.DecodeFrom(&index_value));
    }
    BlockHandle got;
    uint32_t got_number = Block::kNotARestartPoint;
    Block::PrefixRange range;
    switch (meta.PlaceKey(k, &got, &got_number, &range)) {
      case SegmentMeta::Placement::kBlock:
        placed++;
        ASSERT_TRUE(found);
        EXPECT_EQ(got.offset, want.offset);
        EXPECT_EQ(got.size, want.size);
        EXPECT_EQ(got_number, number);
        break;
      case SegmentMeta::Placement::kNone:
        none++;
        EXPECT_FALSE(found);
        break;
      case SegmentMeta::Placement::kUndecided:
        undecided++;
        break;
    }
    LookupResult r;
    std::string v;
    ASSERT_TRUE(reader
                    ->Search(SegmentReadOptions(), k, kMaxSequenceNumber, &r,
                             &v, nullptr)
                    .ok());
    if (keys.count(k) != 0) {
      EXPECT_EQ(r, LookupResult::kFound);
      EXPECT_EQ(v, "v" + k);
    } else {
      EXPECT_EQ(r, LookupResult::kNotFound);
    }
  };
  for (const std::string& k : keys) {
    check(k);
    std::string after = k;
    after.back()++;
    check(after);  // absent, or the next key
  }
  check("");
  check(std::string(9, '\xff'));  // past every separator
  EXPECT_GT(placed, 2000);
  EXPECT_GT(undecided, 0);
  EXPECT_EQ(none, 1);
}

// Point lookups keep short keys off the heap; keys longer than those
// buffers (lookup key, assembled block key) must work just the same.
TEST(SegmentTest, LongKeysAroundInlineBufferSizes) {
  std::vector<std::string> user_keys;
  for (size_t len :
       {1, 55, 56, 57, 63, 64, 65, 119, 120, 121, 127, 128, 129, 300, 5000}) {
    user_keys.push_back(std::string(len, 'k'));
    user_keys.push_back(std::string(len - 1, 'k') + 'm');  // shares len - 1
  }
  std::sort(user_keys.begin(), user_keys.end());
  std::vector<test::Entry> entries;
  for (size_t i = 0; i < user_keys.size(); i++) {
    entries.push_back(test::MakeEntry(user_keys[i], 100, ValueType::kValue,
                                      "v" + std::to_string(i)));
  }
  SegmentBuilderOptions bo;
  bo.block_size = 1024;
  std::string file;
  ASSERT_TRUE(test::BuildSegment(bo, entries, &file).ok());
  Cache cache(1 << 20);
  std::unique_ptr<SegmentReader> reader;
  ASSERT_TRUE(
      test::OpenSegment(ReaderOptions(nullptr, &cache), file, &reader).ok());
  for (int pass = 0; pass < 2; pass++) {  // block read, then cached
    for (size_t i = 0; i < user_keys.size(); i++) {
      const std::string& k = user_keys[i];
      LookupResult r;
      std::string v;
      ASSERT_TRUE(reader
                      ->Get(SegmentReadOptions(), k, KeyHash(k),
                            kMaxSequenceNumber, &r, &v, nullptr)
                      .ok());
      EXPECT_EQ(r, LookupResult::kFound) << k.size();
      EXPECT_EQ(v, "v" + std::to_string(i));
      // Too old a snapshot, and an absent key one byte longer.
      ASSERT_TRUE(
          reader->Get(SegmentReadOptions(), k, KeyHash(k), 99, &r, &v, nullptr)
              .ok());
      EXPECT_EQ(r, LookupResult::kNotFound) << k.size();
      const std::string absent = k + 'a';
      ASSERT_TRUE(reader
                      ->Get(SegmentReadOptions(), absent, KeyHash(absent),
                            kMaxSequenceNumber, &r, &v, nullptr)
                      .ok());
      EXPECT_EQ(r, LookupResult::kNotFound) << absent.size();
    }
  }
}

TEST(SegmentTest, PropertiesFromBuilderAndReader) {
  const Dataset d = MakeDataset(14, 400, false);
  SegmentBuilderOptions bo;
  bo.block_size = 512;
  bo.filter_policy = std::make_shared<ExactFilterPolicy>();
  std::string file;
  SegmentProperties props;
  ASSERT_TRUE(test::BuildSegment(bo, d.entries, &file, &props).ok());
  uint64_t deletions = 0, key_bytes = 0, value_bytes = 0;
  for (const Entry& e : d.entries) {
    ParsedInternalKey p;
    ASSERT_TRUE(ParseInternalKey(e.ikey, &p));
    deletions += p.type == ValueType::kDeletion;
    key_bytes += e.ikey.size();
    value_bytes += e.value.size();
  }
  EXPECT_EQ(props.format_version, 2u);
  EXPECT_EQ(props.num_entries, d.entries.size());
  EXPECT_EQ(props.num_deletions, deletions);
  EXPECT_EQ(props.num_filter_keys, d.versions.size());
  EXPECT_EQ(props.raw_key_bytes, key_bytes);
  EXPECT_EQ(props.raw_value_bytes, value_bytes);
  EXPECT_EQ(props.filter_policy, "test.ExactFilter");
  EXPECT_EQ(props.bits_per_key, 64.0);
  EXPECT_EQ(props.filter_size, 8 * d.versions.size() + kBlockTrailerSize);
  EXPECT_EQ(props.smallest_key, d.entries.front().ikey);
  EXPECT_EQ(props.largest_key, d.entries.back().ikey);
  EXPECT_GT(props.num_data_blocks, 3u);
  std::string encoded;
  props.EncodeTo(&encoded);
  // Data, filter, properties, index and footer tile the file exactly.
  EXPECT_EQ(props.data_size + props.filter_size + encoded.size() +
                kBlockTrailerSize + props.index_size + kFooterSize,
            file.size());

  std::unique_ptr<SegmentReader> reader;
  ASSERT_TRUE(test::OpenSegment(ReaderOptions(), file, &reader).ok());
  EXPECT_EQ(reader->properties().ToString(), props.ToString());
  EXPECT_EQ(reader->file_size(), file.size());
  EXPECT_EQ(reader->file_name(), "000001.seg");
  EXPECT_NE(props.ToString().find(
                "num_entries: " + std::to_string(d.entries.size()) + "\n"),
            std::string::npos);
}

SegmentProperties SampleProperties() {
  SegmentProperties p;
  p.format_version = 1;
  p.num_entries = 1000;
  p.num_deletions = 10;
  p.num_filter_keys = 990;
  p.raw_key_bytes = 123456;
  p.raw_value_bytes = 1ull << 40;
  p.num_data_blocks = 7;
  p.data_size = 40000;
  p.index_size = 300;
  p.filter_size = 1200;
  p.filter_policy = "bloomkv.BlockedBloom";
  p.bits_per_key = 9.5;
  p.smallest_key = std::string("a\0b", 3) + "12345678";
  p.largest_key = "zzzzzzzzzzzz";
  return p;
}

TEST(PropertiesTest, RoundTrip) {
  const SegmentProperties p = SampleProperties();
  std::string enc;
  p.EncodeTo(&enc);
  SegmentProperties d;
  ASSERT_TRUE(d.DecodeFrom(enc).ok());
  EXPECT_EQ(d.ToString(), p.ToString());
  EXPECT_EQ(d.smallest_key, p.smallest_key);
  EXPECT_EQ(d.bits_per_key, 9.5);
  EXPECT_EQ(d.raw_value_bytes, 1ull << 40);
}

TEST(PropertiesTest, UnknownTagsAreSkipped) {
  std::string enc;
  SampleProperties().EncodeTo(&enc);
  // A field from a future writer: tag 1000 with an opaque value.
  PutVarint32(&enc, 1000);
  PutLengthPrefixedSlice(&enc, std::string("\x01\x02\x03", 3));
  SegmentProperties d;
  ASSERT_TRUE(d.DecodeFrom(enc).ok());
  EXPECT_EQ(d.ToString(), SampleProperties().ToString());
  // A reader ignores unknown tags between known ones too.
  std::string mid;
  PutVarint32(&mid, 1);
  PutLengthPrefixedSlice(&mid, "\x01");
  PutVarint32(&mid, 2);
  PutLengthPrefixedSlice(&mid, "\x05");
  PutVarint32(&mid, 99);
  PutLengthPrefixedSlice(&mid, "xyz");
  ASSERT_TRUE(d.DecodeFrom(mid).ok());
  EXPECT_EQ(d.num_entries, 5u);
}

TEST(PropertiesTest, MalformedIsCorruption) {
  std::string enc;
  SampleProperties().EncodeTo(&enc);
  SegmentProperties d;
  EXPECT_TRUE(d.DecodeFrom(Slice(enc.data(), enc.size() - 1)).IsCorruption());
  std::string dup;
  PutVarint32(&dup, 2);
  PutLengthPrefixedSlice(&dup, "\x05");
  PutVarint32(&dup, 2);
  PutLengthPrefixedSlice(&dup, "\x06");
  EXPECT_TRUE(d.DecodeFrom(dup).IsCorruption());
  std::string bad_int;
  PutVarint32(&bad_int, 2);
  PutLengthPrefixedSlice(&bad_int, "\x05\x05");
  EXPECT_TRUE(d.DecodeFrom(bad_int).IsCorruption());
  EXPECT_TRUE(d.DecodeFrom("").ok());
}

}  // namespace
}  // namespace bloomkv
