// Tests for the merging iterator: every operation sequence must match a
// sorted model of all children's entries, and a failing child must stop the
// merge with its error instead of being skipped.
#include "db/merging_iterator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "table/internal_key.h"
#include "tests/testutil/vector_iterator.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using test::Entries;
using test::NewVectorIterator;
using test::VectorIterator;

// One entry of the model: the merged order is (internal key, child).
struct Item {
  std::string ikey;
  size_t child;
  std::string value;
};

bool ItemLess(const Item& a, const Item& b) {
  const int c = CompareInternalKeys(a.ikey, b.ikey);
  return c < 0 || (c == 0 && a.child < b.child);
}

// User keys chosen to collide often and to include NUL, 0xff and empty.
std::string RandomUserKey(std::mt19937_64* rng) {
  static const char kAlphabet[] = {'\0', 'a', 'b', '\xff'};
  std::string k;
  const size_t len = (*rng)() % 4;
  for (size_t i = 0; i < len; i++) k.push_back(kAlphabet[(*rng)() % 4]);
  return k;
}

std::string RandomInternalKey(std::mt19937_64* rng) {
  return MakeInternalKey(
      RandomUserKey(rng), (*rng)() % 50,
      (*rng)() % 2 ? ValueType::kValue : ValueType::kDeletion);
}

struct Data {
  std::vector<Entries> children;
  std::vector<Item> model;  // Sorted by ItemLess.
};

// num_entries internal keys spread over num_children children. Unless
// allow_duplicates, every internal key occurs once across all children.
Data RandomData(std::mt19937_64* rng, size_t num_children, size_t num_entries,
                bool allow_duplicates) {
  Data d;
  d.children.resize(num_children);
  std::set<std::pair<std::string, size_t>> used;  // (key, child)
  std::set<std::string> used_keys;
  for (size_t i = 0; i < num_entries; i++) {
    std::string ikey = RandomInternalKey(rng);
    const size_t child = (*rng)() % num_children;
    if (!used.insert({ikey, child}).second) continue;  // One per child.
    if (!used_keys.insert(ikey).second && !allow_duplicates) continue;
    std::string value = "v" + std::to_string(child) + "/" + std::to_string(i);
    d.children[child].emplace_back(ikey, value);
    d.model.push_back({ikey, child, value});
  }
  for (auto& c : d.children) test::SortEntries(&c);
  std::sort(d.model.begin(), d.model.end(), ItemLess);
  return d;
}

std::vector<std::unique_ptr<Iterator>> MakeChildren(const Data& d) {
  std::vector<std::unique_ptr<Iterator>> children;
  for (const auto& c : d.children) children.push_back(NewVectorIterator(c));
  return children;
}

// Model positions: [0, n) valid, -1 invalid.
long LowerBound(const std::vector<Item>& m, const std::string& target) {
  auto it = std::lower_bound(m.begin(), m.end(), target,
                             [](const Item& e, const std::string& t) {
                               return CompareInternalKeys(e.ikey, t) < 0;
                             });
  return it == m.end() ? -1 : it - m.begin();
}

long LastAtOrBefore(const std::vector<Item>& m, const std::string& target) {
  auto it = std::upper_bound(m.begin(), m.end(), target,
                             [](const std::string& t, const Item& e) {
                               return CompareInternalKeys(t, e.ikey) < 0;
                             });
  return it - m.begin() - 1;
}

std::string Describe(const Slice& ikey) {
  ParsedInternalKey p;
  if (!ParseInternalKey(ikey, &p))
    return "<bad " + ikey.ToEscapedString() + ">";
  return p.user_key.ToEscapedString() + "@" + std::to_string(p.sequence) +
         (p.type == ValueType::kValue ? "v" : "d");
}

// Runs num_ops random operations on it and checks each against the model.
// If errors_allowed, a !Valid() iterator where the model has an entry is
// accepted when status() is an error (then the next operation is a seek);
// *errors counts those.
void RunRandomOps(std::mt19937_64* rng, Iterator* it,
                  const std::vector<Item>& model, int num_ops,
                  bool errors_allowed, int* errors = nullptr) {
  long pos = -1;
  std::string trace;
  for (int op_i = 0; op_i < num_ops; op_i++) {
    int op = static_cast<int>((*rng)() % 8);
    if (!it->Valid() && op >= 4) op = static_cast<int>((*rng)() % 4);
    std::string target = (*rng)() % 2 == 0 && !model.empty()
                             ? model[(*rng)() % model.size()].ikey
                             : RandomInternalKey(rng);
    switch (op) {
      case 0:
        it->SeekToFirst();
        pos = model.empty() ? -1 : 0;
        trace += " First";
        break;
      case 1:
        it->SeekToLast();
        pos = static_cast<long>(model.size()) - 1;
        trace += " Last";
        break;
      case 2:
        it->Seek(target);
        pos = LowerBound(model, target);
        trace += " Seek(" + Describe(target) + ")";
        break;
      case 3:
        it->SeekForPrev(target);
        pos = LastAtOrBefore(model, target);
        trace += " SeekForPrev(" + Describe(target) + ")";
        break;
      case 4:
      case 5:
        it->Next();
        pos = pos + 1 < static_cast<long>(model.size()) ? pos + 1 : -1;
        trace += " Next";
        break;
      default:
        it->Prev();
        pos = pos - 1;
        trace += " Prev";
        break;
    }
    SCOPED_TRACE("ops:" + trace);
    if (pos < 0) {
      ASSERT_FALSE(it->Valid());
      if (!errors_allowed) {
        ASSERT_TRUE(it->status().ok()) << it->status().ToString();
      }
      continue;
    }
    if (!it->Valid()) {
      ASSERT_TRUE(errors_allowed)
          << "model expects " << Describe(model[pos].ikey);
      ASSERT_FALSE(it->status().ok())
          << "entry dropped without an error: " << Describe(model[pos].ikey);
      if (errors != nullptr) ++*errors;
      continue;
    }
    ASSERT_EQ(Describe(it->key()), Describe(model[pos].ikey));
    ASSERT_EQ(it->value().ToString(), model[pos].value);
    if (!errors_allowed) {
      ASSERT_TRUE(it->status().ok());
    }
  }
}

// Full scans both ways must equal the model.
void CheckScans(Iterator* it, const std::vector<Item>& model) {
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
    ASSERT_LT(i, model.size());
    ASSERT_EQ(it->key().ToString(), model[i].ikey) << "at " << i;
    ASSERT_EQ(it->value().ToString(), model[i].value);
  }
  ASSERT_TRUE(it->status().ok());
  ASSERT_EQ(i, model.size());
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    ASSERT_GT(i, 0u);
    i--;
    ASSERT_EQ(it->key().ToString(), model[i].ikey) << "at " << i;
    ASSERT_EQ(it->value().ToString(), model[i].value);
  }
  ASSERT_TRUE(it->status().ok());
  ASSERT_EQ(i, 0u);
}

TEST(MergingIteratorTest, RandomOperationsMatchModel) {
  for (uint64_t seed = 1; seed <= 60; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const size_t num_children = 1 + rng() % 20;
    const size_t num_entries = rng() % 300;
    Data d = RandomData(&rng, num_children, num_entries, false);
    auto it = NewMergingIterator(MakeChildren(d));
    CheckScans(it.get(), d.model);
    if (HasFatalFailure()) return;
    RunRandomOps(&rng, it.get(), d.model, 1000, false);
    if (HasFatalFailure()) return;
  }
}

// Identical internal keys in several children come out in child order going
// forward and reverse child order going backward, even across direction
// switches (the model orders by (key, child)).
TEST(MergingIteratorTest, DuplicateKeysAcrossChildrenKeepATotalOrder) {
  for (uint64_t seed = 1; seed <= 30; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Data d = RandomData(&rng, 2 + rng() % 6, 200, true);
    auto it = NewMergingIterator(MakeChildren(d));
    CheckScans(it.get(), d.model);
    if (HasFatalFailure()) return;
    RunRandomOps(&rng, it.get(), d.model, 1000, false);
    if (HasFatalFailure()) return;
  }
}

TEST(MergingIteratorTest, TwoHundredChildren) {
  for (uint64_t seed = 1; seed <= 3; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Data d = RandomData(&rng, 200, 3000, false);
    auto it = NewMergingIterator(MakeChildren(d));
    CheckScans(it.get(), d.model);
    if (HasFatalFailure()) return;
    RunRandomOps(&rng, it.get(), d.model, 2000, false);
    if (HasFatalFailure()) return;
  }
}

TEST(MergingIteratorTest, InterleavesChildrenExactly) {
  // Alternating keys between two children make every step change child;
  // the third child holds the versions of one key.
  std::vector<Entries> c(3);
  for (int i = 0; i < 10; i++) {
    c[i % 2].emplace_back(
        MakeInternalKey(std::string(1, static_cast<char>('a' + i)), 1,
                        ValueType::kValue),
        std::to_string(i));
  }
  for (int s = 9; s >= 1; s--) {
    c[2].emplace_back(MakeInternalKey("c", static_cast<SequenceNumber>(s) * 10,
                                      ValueType::kValue),
                      "c" + std::to_string(s));
  }
  std::vector<Item> model;
  for (size_t i = 0; i < c.size(); i++) {
    for (const auto& [k, v] : c[i]) model.push_back({k, i, v});
  }
  std::sort(model.begin(), model.end(), ItemLess);
  std::vector<std::unique_ptr<Iterator>> children;
  for (const auto& e : c) children.push_back(NewVectorIterator(e));
  auto it = NewMergingIterator(std::move(children));
  CheckScans(it.get(), model);

  // Next/Prev zigzag from the middle.
  it->Seek(MakeInternalKey("c", 50, ValueType::kValue));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "c5");
  it->Prev();
  EXPECT_EQ(it->value().ToString(), "c6");
  it->Next();
  EXPECT_EQ(it->value().ToString(), "c5");
  it->SeekForPrev(MakeInternalKey("c", 5, ValueType::kValue));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "c1");  // "c"@10.
  it->Next();
  EXPECT_EQ(it->value().ToString(), "2");  // "c"@1, from the first child.
  it->Prev();
  EXPECT_EQ(it->value().ToString(), "c1");
  it->SeekForPrev(MakeInternalKey("c", 95, ValueType::kValue));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "1");  // "b"@1: every "c" sorts after.
  it->Next();
  EXPECT_EQ(it->value().ToString(), "c9");
}

TEST(MergingIteratorTest, NoChildrenOrOnlyEmptyChildren) {
  auto none = NewMergingIterator({});
  none->SeekToFirst();
  EXPECT_FALSE(none->Valid());
  EXPECT_TRUE(none->status().ok());

  std::vector<std::unique_ptr<Iterator>> children;
  for (int i = 0; i < 5; i++) children.push_back(NewVectorIterator({}));
  auto empty = NewMergingIterator(std::move(children));
  empty->SeekToFirst();
  EXPECT_FALSE(empty->Valid());
  empty->SeekToLast();
  EXPECT_FALSE(empty->Valid());
  empty->Seek(MakeInternalKey("a", 1, ValueType::kValue));
  EXPECT_FALSE(empty->Valid());
  empty->SeekForPrev(MakeInternalKey("a", 1, ValueType::kValue));
  EXPECT_FALSE(empty->Valid());
  EXPECT_TRUE(empty->status().ok());
}

TEST(MergingIteratorTest, NullChildIsInvalidArgument) {
  std::vector<std::unique_ptr<Iterator>> children;
  children.push_back(NewVectorIterator({}));
  children.push_back(nullptr);
  auto it = NewMergingIterator(std::move(children));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsInvalidArgument());
}

TEST(MergingIteratorTest, SeekTargetShorterThanTrailerIsInvalidArgument) {
  std::vector<std::unique_ptr<Iterator>> children;
  children.push_back(
      NewVectorIterator({{MakeInternalKey("a", 1, ValueType::kValue), "x"}}));
  children.push_back(NewVectorIterator({}));
  auto it = NewMergingIterator(std::move(children));
  it->Seek("abc");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsInvalidArgument());
  it->SeekForPrev("");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsInvalidArgument());
  it->SeekToFirst();  // A fresh positioning clears the error.
  EXPECT_TRUE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

TEST(MergingIteratorTest, ChildKeyShorterThanTrailerIsCorruption) {
  Entries bad = {{"\x01z", "short"},  // Sorts first: bytewise.
                 {MakeInternalKey("b", 1, ValueType::kValue), "b"}};
  test::SortEntries(&bad);
  std::vector<std::unique_ptr<Iterator>> children;
  children.push_back(
      NewVectorIterator({{MakeInternalKey("a", 1, ValueType::kValue), "a"}}));
  children.push_back(NewVectorIterator(bad));
  auto it = NewMergingIterator(std::move(children));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  it->SeekToLast();  // The child's last entry is well formed.
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "b");
  it->Prev();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
}

// A child failing at entry p: scans stop exactly where that entry would be
// needed, with the child's error, and never skip past it.
TEST(MergingIteratorTest, ChildErrorStopsScansWhereItsEntryIsNeeded) {
  for (uint64_t seed = 1; seed <= 40; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Data d = RandomData(&rng, 1 + rng() % 10, 1 + rng() % 200, false);
    // Pick a non-empty child and a failing position in it.
    size_t bad = rng() % d.children.size();
    while (d.children[bad].empty()) bad = (bad + 1) % d.children.size();
    const size_t p = rng() % d.children[bad].size();
    std::vector<std::unique_ptr<Iterator>> children;
    for (size_t i = 0; i < d.children.size(); i++) {
      auto child = std::make_unique<VectorIterator>(d.children[i]);
      if (i == bad) child->SetErrorAt(p, Status::IOError("disk", "on fire"));
      children.push_back(std::move(child));
    }
    auto it = NewMergingIterator(std::move(children));

    // Index in the model of the bad child's entry j.
    auto model_index = [&](size_t j) {
      for (size_t i = 0; i < d.model.size(); i++) {
        if (d.model[i].child == bad &&
            d.model[i].ikey == d.children[bad][j].first)
          return i;
      }
      ADD_FAILURE() << "entry not in model";
      return size_t{0};
    };

    // Forward: the bad child reaches p right after yielding entry p-1.
    const size_t forward_count = p == 0 ? 0 : model_index(p - 1) + 1;
    size_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
      ASSERT_LT(n, d.model.size());
      ASSERT_EQ(it->key().ToString(), d.model[n].ikey);
    }
    EXPECT_TRUE(it->status().IsIOError()) << it->status().ToString();
    EXPECT_EQ(n, forward_count);

    // Backward: it reaches p right after yielding entry p+1.
    const size_t last = d.children[bad].size() - 1;
    const size_t backward_first =
        p == last ? d.model.size() : model_index(p + 1);
    size_t i = d.model.size();
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      ASSERT_GT(i, 0u);
      i--;
      ASSERT_EQ(it->key().ToString(), d.model[i].ikey);
    }
    EXPECT_TRUE(it->status().IsIOError()) << it->status().ToString();
    EXPECT_EQ(i, backward_first);
  }
}

// Random operations with a failing child: whenever the merge is Valid() it
// matches the model, and whenever it is not although the model has an entry,
// status() carries the child's error.
TEST(MergingIteratorTest, ChildErrorNeverDropsEntriesSilently) {
  int total_errors = 0;
  for (uint64_t seed = 1; seed <= 40; seed++) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Data d = RandomData(&rng, 2 + rng() % 15, 50 + rng() % 200, false);
    std::vector<std::unique_ptr<Iterator>> children;
    for (size_t i = 0; i < d.children.size(); i++) {
      auto child = std::make_unique<VectorIterator>(d.children[i]);
      if (i % 3 == 0 && !d.children[i].empty()) {
        child->SetErrorAt(rng() % d.children[i].size(),
                          Status::Corruption("child", std::to_string(i)));
      }
      children.push_back(std::move(child));
    }
    auto it = NewMergingIterator(std::move(children));
    RunRandomOps(&rng, it.get(), d.model, 500, true, &total_errors);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(total_errors, 0);  // The injection must have been exercised.
}

}  // namespace
}  // namespace bloomkv
