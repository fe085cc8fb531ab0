// Tests for the user-facing iterator: over random multi-version data with
// tombstones, spread across many merged children, every operation sequence
// must match a std::map of what a snapshot sees; malformed keys and failing
// children must surface as errors, never as wrong or missing data.
#include "db/db_iter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "db/merging_iterator.h"
#include "table/internal_key.h"
#include "tests/testutil/vector_iterator.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using test::Entries;
using test::NewVectorIterator;
using test::VectorIterator;

struct Version {
  std::string user_key;
  SequenceNumber seq;
  ValueType type;
  std::string value;
};

// What a reader at snapshot `snapshot` must see.
std::map<std::string, std::string> Visible(const std::vector<Version>& all,
                                           SequenceNumber snapshot) {
  std::map<std::string, const Version*> newest;
  for (const auto& v : all) {
    if (v.seq > snapshot) continue;
    auto [it, inserted] = newest.emplace(v.user_key, &v);
    if (!inserted && it->second->seq < v.seq) it->second = &v;
  }
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : newest) {
    if (v->type == ValueType::kValue) out[k] = v->value;
  }
  return out;
}

// User keys that collide, contain NUL and 0xff, and include the empty key.
std::string RandomUserKey(std::mt19937_64* rng) {
  static const char kAlphabet[] = {'\0', '\x01', 'a', 'b', '\xff'};
  std::string k;
  const size_t len = (*rng)() % 4;
  for (size_t i = 0; i < len; i++) k.push_back(kAlphabet[(*rng)() % 5]);
  return k;
}

struct Data {
  std::vector<Version> versions;
  std::vector<Entries> children;
  SequenceNumber max_seq = 0;
};

// num_keys user keys with 1..max_versions versions each (about a third of
// them tombstones), every sequence number distinct, spread over the
// children at random.
Data RandomData(std::mt19937_64* rng, size_t num_children, size_t num_keys,
                size_t max_versions) {
  Data d;
  std::vector<std::string> keys;
  for (size_t i = 0; i < num_keys; i++) keys.push_back(RandomUserKey(rng));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  size_t total = 0;
  std::vector<size_t> counts;
  for (size_t i = 0; i < keys.size(); i++) {
    counts.push_back(1 + (*rng)() % max_versions);
    total += counts.back();
  }
  std::vector<SequenceNumber> seqs(total);
  for (size_t i = 0; i < total; i++) seqs[i] = i + 1;
  std::shuffle(seqs.begin(), seqs.end(), *rng);
  d.max_seq = total;
  size_t next = 0;
  for (size_t i = 0; i < keys.size(); i++) {
    for (size_t j = 0; j < counts[i]; j++) {
      const SequenceNumber seq = seqs[next++];
      const ValueType type =
          (*rng)() % 3 == 0 ? ValueType::kDeletion : ValueType::kValue;
      d.versions.push_back(
          {keys[i], seq, type,
           type == ValueType::kValue ? "val" + std::to_string(seq) : ""});
    }
  }
  d.children.resize(num_children);
  for (const auto& v : d.versions) {
    d.children[(*rng)() % num_children].emplace_back(
        MakeInternalKey(v.user_key, v.seq, v.type), v.value);
  }
  for (auto& c : d.children) test::SortEntries(&c);
  return d;
}

std::unique_ptr<Iterator> MergeOf(const std::vector<Entries>& children) {
  std::vector<std::unique_ptr<Iterator>> its;
  for (const auto& c : children) its.push_back(NewVectorIterator(c));
  return NewMergingIterator(std::move(its));
}

// Checks it against the model through num_ops random operations. With
// errors_allowed, !Valid() where the model has an entry is accepted if
// status() is an error (the next operation is then a seek); *errors counts
// those.
void RunRandomOps(std::mt19937_64* rng, Iterator* it,
                  const std::map<std::string, std::string>& model,
                  const std::vector<Version>& versions, int num_ops,
                  bool errors_allowed, int* errors = nullptr) {
  auto pos = model.end();  // end() == invalid.
  std::string trace;
  for (int op_i = 0; op_i < num_ops; op_i++) {
    int op = static_cast<int>((*rng)() % 8);
    if (!it->Valid() && op >= 4) op = static_cast<int>((*rng)() % 4);
    const std::string target =
        (*rng)() % 2 == 0 ? versions[(*rng)() % versions.size()].user_key
                          : RandomUserKey(rng);
    switch (op) {
      case 0:
        it->SeekToFirst();
        pos = model.begin();
        trace += " First";
        break;
      case 1:
        it->SeekToLast();
        pos = model.empty() ? model.end() : std::prev(model.end());
        trace += " Last";
        break;
      case 2:
        it->Seek(target);
        pos = model.lower_bound(target);
        trace += " Seek(" + Slice(target).ToEscapedString() + ")";
        break;
      case 3:
        it->SeekForPrev(target);
        pos = model.upper_bound(target);
        pos = pos == model.begin() ? model.end() : std::prev(pos);
        trace += " SeekForPrev(" + Slice(target).ToEscapedString() + ")";
        break;
      case 4:
      case 5:
        it->Next();
        ++pos;
        trace += " Next";
        break;
      default:
        it->Prev();
        pos = pos == model.begin() ? model.end() : std::prev(pos);
        trace += " Prev";
        break;
    }
    SCOPED_TRACE("ops:" + trace);
    if (pos == model.end()) {
      ASSERT_FALSE(it->Valid()) << "extra key " << it->key().ToEscapedString();
      if (!errors_allowed) {
        ASSERT_TRUE(it->status().ok()) << it->status().ToString();
      }
      continue;
    }
    if (!it->Valid()) {
      ASSERT_TRUE(errors_allowed)
          << "missing key " << Slice(pos->first).ToEscapedString() << " "
          << it->status().ToString();
      ASSERT_FALSE(it->status().ok()) << "key dropped without an error: "
                                      << Slice(pos->first).ToEscapedString();
      if (errors != nullptr) ++*errors;
      continue;
    }
    ASSERT_EQ(it->key().ToEscapedString(), Slice(pos->first).ToEscapedString());
    ASSERT_EQ(it->value().ToString(), pos->second);
    if (!errors_allowed) {
      ASSERT_TRUE(it->status().ok());
    }
  }
}

void CheckScans(Iterator* it, const std::map<std::string, std::string>& model) {
  auto m = model.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
    ASSERT_NE(m, model.end()) << "extra " << it->key().ToEscapedString();
    ASSERT_EQ(it->key().ToString(), m->first);
    ASSERT_EQ(it->value().ToString(), m->second);
  }
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  ASSERT_EQ(m, model.end());
  auto r = model.rbegin();
  for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
    ASSERT_NE(r, model.rend()) << "extra " << it->key().ToEscapedString();
    ASSERT_EQ(it->key().ToString(), r->first);
    ASSERT_EQ(it->value().ToString(), r->second);
  }
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  ASSERT_EQ(r, model.rend());
}

SequenceNumber RandomSnapshot(std::mt19937_64* rng, const Data& d) {
  switch ((*rng)() % 6) {
    case 0:
      return 0;
    case 1:
      return kMaxSequenceNumber;
    default:
      return (*rng)() % (d.max_seq + 2);
  }
}

TEST(DBIterTest, RandomOperationsMatchSnapshotModel) {
  for (uint64_t seed = 1; seed <= 150; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Data d = RandomData(&rng, 1 + rng() % 20, 1 + rng() % 80, 1 + rng() % 8);
    const SequenceNumber snapshot = RandomSnapshot(&rng, d);
    SCOPED_TRACE("snapshot=" + std::to_string(snapshot));
    const auto model = Visible(d.versions, snapshot);
    auto it = NewDBIterator(MergeOf(d.children), snapshot);
    CheckScans(it.get(), model);
    if (HasFatalFailure()) return;
    RunRandomOps(&rng, it.get(), model, d.versions, 600, false);
    if (HasFatalFailure()) return;
  }
}

// One key with very many versions spread over every child, between two
// neighbours: each snapshot must see exactly the right version, however the
// iterator arrives at it.
TEST(DBIterTest, ManyVersionsOfOneKeySpanningChildren) {
  for (uint64_t seed = 1; seed <= 5; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Data d;
    const std::string k("k\0k", 3);
    SequenceNumber seq = 0;
    d.versions.push_back({"j", ++seq, ValueType::kValue, "j1"});
    for (int i = 0; i < 200; i++) {
      ++seq;
      const bool del = rng() % 4 == 0;
      d.versions.push_back({k, seq,
                            del ? ValueType::kDeletion : ValueType::kValue,
                            del ? "" : "k" + std::to_string(seq)});
    }
    d.versions.push_back({"l", ++seq, ValueType::kValue, "l1"});
    d.max_seq = seq;
    d.children.resize(12);
    for (const auto& v : d.versions) {
      d.children[rng() % 12].emplace_back(
          MakeInternalKey(v.user_key, v.seq, v.type), v.value);
    }
    for (auto& c : d.children) test::SortEntries(&c);
    for (SequenceNumber snap = 0; snap <= d.max_seq + 1; snap += 7) {
      SCOPED_TRACE("snapshot=" + std::to_string(snap));
      const auto model = Visible(d.versions, snap);
      auto it = NewDBIterator(MergeOf(d.children), snap);
      CheckScans(it.get(), model);
      if (HasFatalFailure()) return;
      RunRandomOps(&rng, it.get(), model, d.versions, 200, false);
      if (HasFatalFailure()) return;
    }
  }
}

// Small fixed cases that read as a specification.
class DBIterFixedTest : public testing::Test {
 protected:
  void Add(size_t child, const std::string& user_key, SequenceNumber seq,
           ValueType type, const std::string& value = "") {
    if (children_.size() <= child) children_.resize(child + 1);
    children_[child].emplace_back(MakeInternalKey(user_key, seq, type), value);
  }
  std::unique_ptr<Iterator> Open(SequenceNumber snapshot) {
    for (auto& c : children_) test::SortEntries(&c);
    return NewDBIterator(MergeOf(children_), snapshot);
  }
  static std::string Scan(Iterator* it) {
    std::string out;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out += it->key().ToEscapedString() + "=" + it->value().ToString() + " ";
    }
    if (!it->status().ok()) out += it->status().ToString();
    return out;
  }
  std::vector<Entries> children_;
};

TEST_F(DBIterFixedTest, SnapshotsSeeTheirVersion) {
  Add(2, "a", 1, ValueType::kValue, "a1");
  Add(1, "a", 3, ValueType::kDeletion);
  Add(0, "a", 5, ValueType::kValue, "a5");
  Add(2, "b", 2, ValueType::kValue, "b2");
  Add(0, "b", 4, ValueType::kDeletion);
  EXPECT_EQ(Scan(Open(0).get()), "");
  EXPECT_EQ(Scan(Open(1).get()), "a=a1 ");
  EXPECT_EQ(Scan(Open(2).get()), "a=a1 b=b2 ");
  EXPECT_EQ(Scan(Open(3).get()), "b=b2 ");
  EXPECT_EQ(Scan(Open(4).get()), "");
  EXPECT_EQ(Scan(Open(5).get()), "a=a5 ");
  EXPECT_EQ(Scan(Open(~uint64_t{0}).get()), "a=a5 ");  // Clamped, not wrapped.
}

TEST_F(DBIterFixedTest, EmptyAndNulKeys) {
  Add(0, "", 1, ValueType::kValue, "empty");
  Add(1, std::string("\0", 1), 2, ValueType::kValue, "nul");
  Add(0, std::string("a\0b", 3), 3, ValueType::kValue, "a-nul-b");
  Add(1, "a", 4, ValueType::kValue, "a");
  auto it = Open(10);
  EXPECT_EQ(Scan(it.get()), "=empty \\x00=nul a=a a\\x00b=a-nul-b ");
  it->Seek("");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "empty");
  it->SeekForPrev("");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "empty");
  it->Prev();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  it->SeekForPrev(std::string("a\0a", 3));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "a");
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "a-nul-b");
  it->Prev();
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "nul");
}

TEST_F(DBIterFixedTest, MalformedTypeIsCorruption) {
  Add(0, "a", 1, ValueType::kValue, "a");
  Add(0, "c", 1, ValueType::kValue, "c");
  std::string bad = MakeInternalKey("b", 1, ValueType::kValue);
  bad[bad.size() - kInternalKeyTrailerSize] = '\x07';  // No such type.
  ParsedInternalKey parsed;
  ASSERT_FALSE(ParseInternalKey(bad, &parsed));
  children_[0].emplace_back(bad, "b");
  auto it = Open(10);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "a");
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  // Backward, "c" is settled only by reading the entry before it, which
  // might have been one of its versions.
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  it->Seek("b");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  it->Seek("c");  // A new seek that avoids it works again.
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "c");
  EXPECT_TRUE(it->status().ok());
  it->Prev();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
}

TEST(DBIterTest, KeyShorterThanTrailerIsCorruption) {
  // Directly over a child (as with a single memtable) and through a merge.
  Entries entries = {{"zz", "short"},
                     {MakeInternalKey("a", 1, ValueType::kValue), "a"}};
  test::SortEntries(&entries);
  for (bool merged : {false, true}) {
    SCOPED_TRACE(merged ? "merged" : "direct");
    std::unique_ptr<Iterator> internal;
    if (merged) {
      std::vector<std::unique_ptr<Iterator>> its;
      its.push_back(NewVectorIterator(entries));
      its.push_back(NewVectorIterator(
          {{MakeInternalKey("b", 2, ValueType::kValue), "b"}}));
      internal = NewMergingIterator(std::move(its));
    } else {
      internal = NewVectorIterator(entries);
    }
    auto it = NewDBIterator(std::move(internal), 10);
    it->SeekToLast();
    EXPECT_FALSE(it->Valid());
    EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
    it->SeekToFirst();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "a");
    while (it->Valid()) it->Next();
    EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  }
}

// Walking backward, a key's entries are read oldest first; if the read of a
// newer one fails, the older value must not be returned as if it were
// current.
TEST_F(DBIterFixedTest, ErrorWhileWalkingBackNeverYieldsAStaleValue) {
  Add(0, "b", 1, ValueType::kValue, "mid");
  Add(0, "c", 2, ValueType::kValue, "c");
  Add(1, "b", 9, ValueType::kValue, "new");
  Add(1, "b", 0, ValueType::kValue, "old");
  std::vector<std::unique_ptr<Iterator>> its;
  its.push_back(NewVectorIterator(children_[0]));
  auto bad = std::make_unique<VectorIterator>(children_[1]);
  bad->SetErrorAt(0, Status::IOError("b@9 unreadable"));  // "b"@9.
  its.push_back(std::move(bad));
  auto it = NewDBIterator(NewMergingIterator(std::move(its)), 100);
  it->SeekForPrev("c");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "c");
  it->Prev();
  EXPECT_FALSE(it->Valid())
      << it->key().ToString() << "=" << it->value().ToString();
  EXPECT_TRUE(it->status().IsIOError()) << it->status().ToString();
}

// Random data with failing children: the iterator is right whenever it is
// Valid(), and whenever it is not but should be, status() says why.
TEST(DBIterTest, ChildErrorsNeverDropKeysSilently) {
  int total_errors = 0;
  for (uint64_t seed = 1; seed <= 60; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Data d = RandomData(&rng, 2 + rng() % 10, 10 + rng() % 60, 1 + rng() % 5);
    const SequenceNumber snapshot = RandomSnapshot(&rng, d);
    SCOPED_TRACE("snapshot=" + std::to_string(snapshot));
    std::vector<std::unique_ptr<Iterator>> its;
    for (size_t i = 0; i < d.children.size(); i++) {
      auto child = std::make_unique<VectorIterator>(d.children[i]);
      if (i % 4 == 1 && !d.children[i].empty()) {
        child->SetErrorAt(rng() % d.children[i].size(),
                          Status::IOError("child", std::to_string(i)));
      }
      its.push_back(std::move(child));
    }
    auto it = NewDBIterator(NewMergingIterator(std::move(its)), snapshot);
    RunRandomOps(&rng, it.get(), Visible(d.versions, snapshot), d.versions, 400,
                 true, &total_errors);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(total_errors, 0);  // The injection must have been exercised.
}

// Records its destruction, to check the cleanup runs after it.
class TrackedIterator final : public Iterator {
 public:
  explicit TrackedIterator(bool* destroyed)
      : inner_(NewVectorIterator(
            {{MakeInternalKey("a", 1, ValueType::kValue), "a"}})),
        destroyed_(destroyed) {}
  ~TrackedIterator() override { *destroyed_ = true; }
  bool Valid() const override { return inner_->Valid(); }
  void SeekToFirst() override { inner_->SeekToFirst(); }
  void SeekToLast() override { inner_->SeekToLast(); }
  void Seek(const Slice& t) override { inner_->Seek(t); }
  void SeekForPrev(const Slice& t) override { inner_->SeekForPrev(t); }
  void Next() override { inner_->Next(); }
  void Prev() override { inner_->Prev(); }
  Slice key() const override { return inner_->key(); }
  Slice value() const override { return inner_->value(); }
  Status status() const override { return inner_->status(); }

 private:
  std::unique_ptr<Iterator> inner_;
  bool* destroyed_;
};

TEST(DBIterTest, CleanupRunsOnceAfterTheInternalIteratorIsGone) {
  bool destroyed = false;
  int cleanups = 0;
  bool destroyed_before_cleanup = false;
  auto pin = std::make_shared<int>(7);
  std::weak_ptr<int> weak_pin = pin;
  {
    auto it = NewDBIterator(std::make_unique<TrackedIterator>(&destroyed), 5,
                            [&, pin = std::move(pin)] {
                              cleanups++;
                              destroyed_before_cleanup = destroyed;
                            });
    it->SeekToFirst();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "a");
    EXPECT_FALSE(weak_pin.expired());  // Pinned while the iterator lives.
    EXPECT_EQ(cleanups, 0);
  }
  EXPECT_EQ(cleanups, 1);
  EXPECT_TRUE(destroyed_before_cleanup);
  EXPECT_TRUE(weak_pin.expired());
}

TEST(DBIterTest, NullInternalIteratorIsInvalidArgument) {
  int cleanups = 0;
  {
    auto it = NewDBIterator(nullptr, 5, [&] { cleanups++; });
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
    EXPECT_TRUE(it->status().IsInvalidArgument());
  }
  EXPECT_EQ(cleanups, 1);
}

}  // namespace
}  // namespace bloomkv
