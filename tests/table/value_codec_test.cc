// Values compressed one by one (table/value_codec.h): every value comes back
// as written, whatever the dictionary; malformed stored forms are refused,
// never decoded into something else or read out of bounds.
#include "table/value_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "table/format.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"

namespace bloomkv {
namespace {

std::string Url(std::mt19937* rng) {
  static const char* const kHosts[] = {"https://example.com/",
                                       "https://a.b.org/",
                                       "http://shop.example.net/item/"};
  std::string u = kHosts[(*rng)() % 3];
  const size_t n = 10 + (*rng)() % 80;
  for (size_t i = 0; i < n; i++) {
    u.push_back("abcdefghijklmnopqrstuvwxyz0123456789/-_"[(*rng)() % 39]);
  }
  return u;
}

std::string Encode(ValueCompressor* c, const std::string& v) {
  std::string stored;
  c->Encode(v, &stored);
  return stored;
}

TEST(ValueCodecTest, EveryValueComesBackAsWritten) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937 rng(static_cast<uint32_t>(seed));
    std::vector<std::string> values;
    for (int i = 0; i < 2000; i++) values.push_back(Url(&rng));
    values.push_back("");
    values.push_back("x");
    values.push_back(std::string(100000, 'a'));
    std::string random(3000, '\0');
    for (char& c : random) c = static_cast<char>(rng());
    values.push_back(random);
    std::string dictionary;
    for (const std::string& v : values) dictionary += v;
    // Empty, short, exactly the limit, and longer (cut to the limit).
    for (size_t dict_size :
         {size_t{0}, size_t{100}, kValueDictionaryBytes, dictionary.size()}) {
      SCOPED_TRACE("dictionary=" + std::to_string(dict_size));
      ValueCompressor compressor(Slice(dictionary.data(), dict_size));
      EXPECT_LE(compressor.dictionary().size(), kValueDictionaryBytes);
      const ValueDictionary reader(compressor.dictionary());
      size_t raw = 0, stored_bytes = 0;
      for (const std::string& v : values) {
        const std::string stored = Encode(&compressor, v);
        std::string back = "previous contents";
        ASSERT_TRUE(reader.Decode(stored, &back)) << v.size();
        ASSERT_EQ(back, v);
        // Never more than the value and its length.
        ASSERT_LE(stored.size(), v.size() + VarintLength(v.size()));
        if (v.size() < 200) {
          raw += v.size();
          stored_bytes += stored.size();
        }
      }
      if (dict_size >= kValueDictionaryBytes) {
        // The URLs share their hosts and alphabet with the dictionary.
        EXPECT_LT(stored_bytes, raw * 9 / 10);
      }
      // The incompressible value is stored as it is, after its length.
      const std::string stored = Encode(&compressor, random);
      EXPECT_EQ(stored.substr(stored.size() - random.size()), random);
    }
  }
}

TEST(ValueCodecTest, ValuesOverFourMiBAreStoredRaw) {
  ValueCompressor compressor("aaaa");
  const std::string big((4 << 20) + 1, 'a');
  const std::string stored = Encode(&compressor, big);
  EXPECT_EQ(stored.size(), big.size() + VarintLength(big.size()));
  std::string back;
  ASSERT_TRUE(ValueDictionary("aaaa").Decode(stored, &back));
  EXPECT_EQ(back, big);
}

// The format allows a dictionary of at most kValueDictionaryBytes; a
// longer one is damage, refused like a block without the magic.
TEST(ValueCodecTest, DictionaryBlockOverTheFormatsSizeIsRefused) {
  for (size_t size : {size_t{0}, size_t{1}, kValueDictionaryBytes,
                      kValueDictionaryBytes + 1, size_t{64} << 10}) {
    SCOPED_TRACE(size);
    const std::string dictionary(size, 'd');
    std::string block;
    EncodeValueDictionaryBlock(dictionary, &block);
    Slice got;
    const bool ok = DecodeValueDictionaryBlock(block, &got);
    EXPECT_EQ(ok, size <= kValueDictionaryBytes);
    if (ok) {
      EXPECT_EQ(got, Slice(dictionary));
    }
  }
  Slice got;
  EXPECT_FALSE(DecodeValueDictionaryBlock("BKVVDIC", &got));
  EXPECT_FALSE(DecodeValueDictionaryBlock("XKVVDICTabc", &got));
}

TEST(ValueCodecTest, MalformedStoredValuesAreRefused) {
  const std::string dictionary = "https://example.com/some/path/";
  ValueCompressor compressor(dictionary);
  const ValueDictionary reader(dictionary);
  const std::string value = "https://example.com/some/path/again/and/again";
  const std::string stored = Encode(&compressor, value);
  uint32_t n;
  const char* body = GetVarint32Ptr(stored.data(),
                                    stored.data() + stored.size(), &n);
  ASSERT_NE(body, nullptr);
  ASSERT_EQ(n, value.size());
  ASSERT_LT(static_cast<size_t>(stored.data() + stored.size() - body), n)
      << "the value should have been compressed";
  std::string out;
  // A length that does not end.
  EXPECT_FALSE(reader.Decode(std::string(3, '\xff'), &out));
  // A body longer than the value it claims to be.
  std::string longer;
  PutVarint32(&longer, 2);
  longer += "abc";
  EXPECT_FALSE(reader.Decode(longer, &out));
  // A length far beyond what the body can expand to (no huge allocation).
  std::string huge;
  PutVarint32(&huge, 0xfffffff0u);
  huge += "ab";
  EXPECT_FALSE(reader.Decode(huge, &out));
  // The right body with a wrong length, either way.
  for (int delta : {-1, 1}) {
    std::string wrong;
    PutVarint32(&wrong, static_cast<uint32_t>(static_cast<int>(n) + delta));
    wrong.append(body, stored.data() + stored.size());
    EXPECT_FALSE(reader.Decode(wrong, &out)) << delta;
  }
  // Every truncation of the body, and every byte of it changed: refused or
  // decoded to exactly the claimed length, never past the buffers (the
  // sanitizer builds check that part).
  for (size_t cut = 1; cut < stored.size(); cut++) {
    std::string t = stored.substr(0, cut);
    if (reader.Decode(t, &out)) {
      EXPECT_EQ(out.size(), n);
    }
  }
  for (size_t i = static_cast<size_t>(body - stored.data()); i < stored.size();
       i++) {
    for (int bit = 0; bit < 8; bit++) {
      std::string flipped = stored;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      if (reader.Decode(flipped, &out)) {
        EXPECT_EQ(out.size(), n);
      }
    }
  }
}

// A fixed sequence of (key, stored value) pairs, as a block iterator gives.
class VectorIterator final : public Iterator {
 public:
  explicit VectorIterator(std::vector<std::pair<std::string, std::string>> v)
      : v_(std::move(v)) {}
  bool Valid() const override { return i_ < v_.size(); }
  void SeekToFirst() override { i_ = 0; }
  void SeekToLast() override { i_ = v_.empty() ? 0 : v_.size() - 1; }
  void Seek(const Slice& target) override {
    for (i_ = 0; i_ < v_.size() && Slice(v_[i_].first).compare(target) < 0;
         i_++) {
    }
  }
  void SeekForPrev(const Slice& target) override {
    Seek(target);
    if (!Valid() || Slice(v_[i_].first).compare(target) > 0) Prev();
  }
  void Next() override { i_++; }
  void Prev() override { i_ = i_ == 0 ? v_.size() : i_ - 1; }
  Slice key() const override { return v_[i_].first; }
  Slice value() const override { return v_[i_].second; }
  Status status() const override { return Status::OK(); }

 private:
  std::vector<std::pair<std::string, std::string>> v_;
  size_t i_ = 0;
};

TEST(ValueCodecTest, DecodingIteratorStopsAtABadValue) {
  const std::string dictionary = "https://example.com/";
  ValueCompressor compressor(dictionary);
  auto dict = std::make_shared<const ValueDictionary>(dictionary);
  std::vector<std::pair<std::string, std::string>> entries;
  for (const char* k : {"a", "b", "c", "d"}) {
    entries.emplace_back(
        k, Encode(&compressor, std::string("https://example.com/") + k));
  }
  entries[2].second = "\xff\xff\xff";  // "c" is damaged
  const std::string name = "000007.seg";
  std::unique_ptr<Iterator> it = NewValueDecodingIterator(
      std::make_unique<VectorIterator>(entries), dict, name, 4096);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "https://example.com/a");
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "https://example.com/b");
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  EXPECT_NE(it->status().ToString().find("000007.seg"), std::string::npos);
  EXPECT_NE(it->status().ToString().find("4096"), std::string::npos);
  it->Next();  // stays stopped
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  // Positioning again starts over: "d" reads back, from either side.
  it->Seek("d");
  ASSERT_TRUE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(it->value().ToString(), "https://example.com/d");
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "d");
  it->Prev();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  it->SeekForPrev("b");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "https://example.com/b");
}

TEST(ValueCodecTest, StoredValueSizeReadsTheLengthPrefix) {
  ValueCompressor compressor("https://example.com/");
  for (const std::string& v :
       {std::string(), std::string("x"), std::string("https://example.com/q"),
        std::string(300, 'z')}) {
    uint32_t size = 12345;
    ASSERT_TRUE(StoredValueSize(Encode(&compressor, v), &size));
    EXPECT_EQ(size, v.size());
  }
  uint32_t size;
  EXPECT_FALSE(StoredValueSize("\xff\xff", &size));
}

// A compaction's recoder: values of a segment with its dictionary are
// copied; raw values and values of another dictionary become its stored
// form, which its dictionary decodes into the values written.
TEST(ValueCodecTest, RecoderGivesEveryValueInItsDictionarysForm) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937 rng(static_cast<uint32_t>(seed));
    std::vector<std::string> values;
    for (int i = 0; i < 300; i++) values.push_back(Url(&rng));
    values.push_back("");
    std::string mine, other;
    for (int i = 0; i < 100; i++) mine += Url(&rng);
    for (int i = 0; i < 100; i++) other += "ftp://elsewhere.org/" + Url(&rng);
    mine.resize(std::min(mine.size(), kValueDictionaryBytes));
    other.resize(std::min(other.size(), kValueDictionaryBytes));
    auto target = std::make_shared<const ValueDictionary>(mine);
    ValueRecoder recoder(target);
    ValueCompressor same(mine);
    ValueCompressor different(other);
    const auto same_dict = std::make_shared<const ValueDictionary>(mine);
    const auto other_dict = std::make_shared<const ValueDictionary>(other);
    // The same bytes in another object are the same dictionary; asking
    // again after another answer does not reuse the last one.
    EXPECT_TRUE(recoder.SameDictionary(same_dict));
    EXPECT_FALSE(recoder.SameDictionary(other_dict));
    EXPECT_TRUE(recoder.SameDictionary(same_dict));
    EXPECT_FALSE(recoder.SameDictionary(nullptr));
    // A dictionary freed after its answer (a segment closed behind a
    // compaction) leaves no address for another to be taken for it: were
    // the answer remembered by address alone, the allocator could give
    // the next one the same address and the same answer.
    for (int i = 0; i < 20; i++) {
      auto gone = std::make_shared<const ValueDictionary>(mine);
      EXPECT_TRUE(recoder.SameDictionary(gone));
      gone.reset();
      auto next = std::make_shared<const ValueDictionary>(other);
      EXPECT_FALSE(recoder.SameDictionary(next));
    }

    std::vector<std::pair<std::string, std::string>> raw, foreign;
    for (size_t i = 0; i < values.size(); i++) {
      const std::string key = "k" + std::to_string(1000 + i);
      raw.emplace_back(key, values[i]);
      foreign.emplace_back(key, Encode(&different, values[i]));
    }
    const std::string name = "000009.seg";
    for (bool from_raw : {true, false}) {
      SCOPED_TRACE(from_raw ? "raw values" : "another dictionary");
      std::unique_ptr<Iterator> it = NewValueRecodingIterator(
          std::make_unique<VectorIterator>(from_raw ? raw : foreign),
          from_raw ? nullptr : other_dict, &recoder, name, 0);
      size_t i = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
        // Exactly what compressing against the target gives, which the
        // target decodes into the value written.
        EXPECT_EQ(it->value().ToString(), Encode(&same, values[i]));
        std::string decoded;
        ASSERT_TRUE(target->Decode(it->value(), &decoded));
        EXPECT_EQ(decoded, values[i]);
      }
      EXPECT_TRUE(it->status().ok());
      EXPECT_EQ(i, values.size());
    }
  }
}

TEST(ValueCodecTest, RecodingIteratorStopsAtABadValue) {
  const std::string dictionary = "https://example.com/";
  ValueCompressor compressor(dictionary);
  auto dict = std::make_shared<const ValueDictionary>(dictionary);
  ValueRecoder recoder(std::make_shared<const ValueDictionary>("other"));
  std::vector<std::pair<std::string, std::string>> entries = {
      {"a", Encode(&compressor, "https://example.com/a")},
      {"b", "\xff\xff\xff"}};
  const std::string name = "000008.seg";  // outlives the iterator
  std::unique_ptr<Iterator> it = NewValueRecodingIterator(
      std::make_unique<VectorIterator>(entries), dict, &recoder, name, 8192);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  EXPECT_NE(it->status().ToString().find("000008.seg"), std::string::npos);
  EXPECT_NE(it->status().ToString().find("8192"), std::string::npos);
}

}  // namespace
}  // namespace bloomkv
