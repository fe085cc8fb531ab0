// Listing and PATCH in the store layer: pages newest first, complete and
// without duplicates while links are created concurrently; the list index
// built once for a database written before it existed; PATCH keeping the
// URL index, the list entry and the click record consistent; and a seeded
// randomized comparison against a model of create/patch/remove/click/list.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/write_batch.h"
#include "tests/tools/shortlink_test_store.h"
#include "tools/shortlink/link_record.h"
#include "tools/shortlink/url.h"
#include "util/random.h"

namespace shortlink {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using bloomkv::Status;

using ListTest = TestStoreFixture;
using PatchTest = TestStoreFixture;

// Every live link, page by page of `limit`; each page must be non-empty
// unless it is the last.
std::vector<std::string> ListAll(LinkStore* store, size_t limit,
                                 const std::function<void()>& between = {}) {
  std::vector<std::string> codes;
  std::string after;
  for (int page = 0;; page++) {
    std::vector<ListedLink> links;
    std::string next;
    const Status s = store->List(after, limit, &links, &next);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) break;
    EXPECT_LE(links.size(), limit);
    for (const ListedLink& l : links) codes.push_back(l.code);
    if (next.empty()) break;
    EXPECT_FALSE(links.empty()) << "page " << page;
    after = next;
    if (between) between();
  }
  return codes;
}

// Codes in listing order: newest first, then by code.
std::vector<std::string> NewestFirst(
    std::vector<std::pair<int64_t, std::string>> links) {
  std::sort(links.begin(), links.end(), [](const auto& a, const auto& b) {
    return std::tie(b.first, a.second) < std::tie(a.first, b.second);
  });
  std::vector<std::string> out;
  for (auto& [created, code] : links) out.push_back(code);
  return out;
}

TEST_F(ListTest, PagesAreNewestFirstAndCompleteForEveryPageSize) {
  Open();
  std::vector<std::pair<int64_t, std::string>> links;
  for (int i = 0; i < 23; i++) {
    now_ = kStart + i / 3;  // three links a second: ties sort by code
    links.emplace_back(now_,
                       Create("https://example.com/" + std::to_string(i)));
  }
  const std::vector<std::string> expected = NewestFirst(links);
  for (size_t limit : {1, 2, 3, 7, 22, 23, 24, 1000}) {
    SCOPED_TRACE("limit=" + std::to_string(limit));
    EXPECT_EQ(expected, ListAll(store_.get(), limit));
  }
}

TEST_F(ListTest, ExpiredAndRemovedLinksAreNotListed) {
  Open();
  const std::string a = Create("https://example.com/a");
  const std::string b = Create("https://example.com/b", "", 10);
  const std::string c = Create("https://example.com/c");
  ASSERT_TRUE(store_->Remove(c).ok());
  EXPECT_EQ(2u, ListAll(store_.get(), 1).size());
  now_ = kStart + 10;
  EXPECT_EQ(std::vector<std::string>{a}, ListAll(store_.get(), 1));
}

TEST_F(ListTest, PagingWhileOthersCreateHasNoGapsOrDuplicates) {
  Open();
  std::vector<std::pair<int64_t, std::string>> before;
  for (int i = 0; i < 200; i++) {
    now_ = kStart + i / 10;
    before.emplace_back(now_,
                        Create("https://example.com/old/" + std::to_string(i)));
  }
  const std::vector<std::string> expected = NewestFirst(before);

  // Creates run on other threads while the pages are read: each page lets
  // two more happen, so the work stays bounded. The clock stays at the
  // newest old links' second for a few pages (new links then sort among
  // them), then moves on, as a real clock does.
  std::atomic<bool> stop{false};
  std::atomic<int> allowed{0}, claimed{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; t++) {
    writers.emplace_back([&] {
      while (!stop) {
        int c = claimed;
        if (c >= allowed) {
          std::this_thread::yield();
          continue;
        }
        if (!claimed.compare_exchange_weak(c, c + 1)) continue;
        CreateOutcome outcome;
        std::string code;
        LinkRecord record;
        ASSERT_TRUE(store_
                        ->Create("https://example.com/new/" + std::to_string(c),
                                 "", 0, &outcome, &code, &record)
                        .ok());
      }
    });
  }
  int pages = 0;
  const std::vector<std::string> listed = ListAll(store_.get(), 7, [&] {
    now_ = kStart + 19 + std::max(0, ++pages - 3);
    allowed += 2;
  });
  stop = true;
  for (std::thread& w : writers) w.join();

  const std::set<std::string> unique(listed.begin(), listed.end());
  EXPECT_EQ(unique.size(), listed.size()) << "a link was listed twice";
  std::vector<std::string> old_in_order;
  const std::set<std::string> old(expected.begin(), expected.end());
  for (const std::string& code : listed) {
    if (old.count(code)) old_in_order.push_back(code);
  }
  EXPECT_EQ(expected, old_in_order);
}

TEST_F(ListTest, AnOldDatabaseGetsItsListIndexAtOpen) {
  // A database as written before listing existed: records and URL index
  // only.
  std::vector<std::pair<int64_t, std::string>> links;
  {
    bloomkv::Options options;
    options.create_if_missing = true;
    std::unique_ptr<bloomkv::DB> db;
    ASSERT_TRUE(bloomkv::DB::Open(options, path(), &db).ok());
    bloomkv::WriteBatch batch;
    for (int i = 0; i < 50; i++) {
      const std::string code = "old" + std::to_string(i);
      const std::string url = "https://example.com/" + std::to_string(i);
      LinkRecord record{url, kStart - 1000 + i % 13, 0};
      std::string value;
      EncodeLinkRecord(record, &value);
      batch.Put(CodeKey(code), value);
      EncodeIndexEntries({IndexEntry{code, 0}}, &value);
      batch.Put(IndexKey(UrlHash(url)), value);
      links.emplace_back(record.created, code);
    }
    ASSERT_TRUE(db->Write(bloomkv::WriteOptions(), &batch).ok());
  }
  Open();
  const std::vector<std::string> expected = NewestFirst(links);
  EXPECT_EQ(expected, ListAll(store_.get(), 9));
  std::string marker;
  ASSERT_TRUE(store_->db()
                  ->Get(bloomkv::ReadOptions(), kListIndexMarkerKey, &marker)
                  .ok());

  // New links join the index; reopening does not list anything twice.
  now_ = kStart + 5;
  const std::string fresh = Create("https://example.com/fresh");
  Open();
  std::vector<std::string> with_fresh = {fresh};
  with_fresh.insert(with_fresh.end(), expected.begin(), expected.end());
  EXPECT_EQ(with_fresh, ListAll(store_.get(), 1000));
}

TEST_F(ListTest, OpeningAnEmptyStoreWritesNothing) {
  Open();
  Open();
  EXPECT_EQ(0u, store_->Stats().user_bytes_written);
  const std::string code = Create("https://example.com/a");
  Open();  // the marker came with the first link: no rebuild needed
  EXPECT_EQ(0u, store_->Stats().user_bytes_written);
  EXPECT_EQ(std::vector<std::string>{code}, ListAll(store_.get(), 10));
}

TEST_F(PatchTest, NewUrlDedupsToThePatchedCodeAndTheOldOneNoLonger) {
  Open();
  const std::string code = Create("https://example.com/old");
  PatchOutcome outcome;
  LinkRecord record;
  ASSERT_TRUE(store_
                  ->Patch(code, LinkPatch{"https://Example.com/new", {}},
                          &outcome, &record)
                  .ok());
  EXPECT_EQ(PatchOutcome::kPatched, outcome);
  EXPECT_EQ("https://Example.com/new", record.url);
  EXPECT_EQ(code, Create("https://example.com:443/new", "", 0,
                         CreateOutcome::kExisting));
  // The old URL's index entry no longer lists the code (it held only this
  // code, so it is gone), and a request for the old URL makes a new link.
  std::string value;
  EXPECT_TRUE(store_->db()
                  ->Get(bloomkv::ReadOptions(),
                        IndexKey(UrlHash("https://example.com/old")), &value)
                  .IsNotFound());
  const std::string other = Create("https://example.com/old");
  EXPECT_NE(code, other);
  LinkRecord looked_up;
  ASSERT_TRUE(store_->Lookup(code, &looked_up).ok());
  EXPECT_EQ("https://Example.com/new", looked_up.url);
}

TEST_F(PatchTest, ExpiryChangesReachTheIndexListEntryAndClicks) {
  Open();
  const std::string code = Create("https://example.com/a", "", 60);
  Click(code, 4);
  ASSERT_TRUE(store_->FlushClicks().ok());
  PatchOutcome outcome;
  LinkRecord record;
  // Expiry removed: a compaction after the old expiry keeps everything.
  ASSERT_TRUE(
      store_->Patch(code, LinkPatch{{}, int64_t{0}}, &outcome, &record).ok());
  EXPECT_EQ(0, record.expires_at);
  now_ = kStart + 3600;
  ASSERT_TRUE(store_->CompactAll().ok());
  EXPECT_EQ(4u, StoredClicks(code).total);
  EXPECT_EQ(std::vector<std::string>{code}, ListAll(store_.get(), 10));
  // A link without expiry dedups requests without TTL.
  EXPECT_EQ(code,
            Create("https://example.com/a", "", 0, CreateOutcome::kExisting));

  // A new expiry counts from now; past it, compaction drops it all.
  ASSERT_TRUE(
      store_->Patch(code, LinkPatch{{}, int64_t{100}}, &outcome, &record).ok());
  EXPECT_EQ(now_ + 100, record.expires_at);
  now_ = now_ + 100;
  ASSERT_TRUE(
      store_->Patch(code, LinkPatch{{}, int64_t{100}}, &outcome, &record).ok());
  EXPECT_EQ(PatchOutcome::kExpired, outcome);
  ASSERT_TRUE(store_->CompactAll().ok());
  EXPECT_TRUE(store_->Lookup(code, &record).IsNotFound());
  std::string value;
  EXPECT_TRUE(store_->db()
                  ->Get(bloomkv::ReadOptions(), ClickKey(code), &value)
                  .IsNotFound());
  EXPECT_EQ(std::vector<std::string>{}, ListAll(store_.get(), 10));
}

TEST_F(PatchTest, RefusedPatchesChangeNothing) {
  Open();
  const std::string code = Create("https://example.com/a");
  PatchOutcome outcome;
  LinkRecord record;
  EXPECT_TRUE(store_
                  ->Patch("nosuch1", LinkPatch{"https://example.com/b", {}},
                          &outcome, &record)
                  .IsNotFound());
  EXPECT_TRUE(
      store_
          ->Patch(code, LinkPatch{"javascript:alert(1)", {}}, &outcome, &record)
          .IsInvalidArgument());
  EXPECT_TRUE(
      store_->Patch(code, LinkPatch{{}, kMaxTtlSeconds + 1}, &outcome, &record)
          .IsInvalidArgument());
  ASSERT_TRUE(store_->Lookup(code, &record).ok());
  EXPECT_EQ("https://example.com/a", record.url);
  EXPECT_EQ(0, record.expires_at);
  EXPECT_EQ(code,
            Create("https://example.com/a", "", 0, CreateOutcome::kExisting));
}

// The model: what each live code should read as.
struct ModelLink {
  std::string url;
  int64_t created = 0;
  int64_t expires_at = 0;
  uint64_t clicks = 0;
};

TEST_F(ListTest, RandomizedAgainstAModel) {
  const std::vector<std::string> urls = {
      "https://a.example/", "https://b.example/x", "https://c.example/y?q",
      "https://d.example/", "https://e.example/z", "https://f.example/"};
  for (uint64_t seed : bloomkv::test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    bloomkv::Random rnd(seed);
    store_.reset();
    std::filesystem::remove_all(path());  // each seed starts empty
    now_ = kStart;
    Open();
    std::map<std::string, ModelLink> model;

    auto random_code = [&]() -> std::string {
      auto it = model.begin();
      std::advance(it, rnd.Uniform(model.size()));
      return it->first;
    };
    auto check = [&] {
      ASSERT_TRUE(store_->FlushClicks().ok());
      std::vector<std::pair<int64_t, std::string>> links;
      for (const auto& [code, m] : model) {
        LinkRecord record;
        ASSERT_TRUE(store_->Lookup(code, &record).ok()) << code;
        EXPECT_EQ(m.url, record.url) << code;
        EXPECT_EQ(m.expires_at, record.expires_at) << code;
        EXPECT_EQ(m.clicks, StoredClicks(code).total) << code;
        links.emplace_back(m.created, code);
      }
      EXPECT_EQ(NewestFirst(links), ListAll(store_.get(), 1 + rnd.Uniform(6)));
    };

    for (int op = 0; op < 400; op++) {
      const uint64_t kind = rnd.Uniform(100);
      const std::string& url = urls[rnd.Uniform(urls.size())];
      if (kind < 30 || model.empty()) {
        // Dedup: a live link to the URL without expiry is reused.
        std::set<std::string> reusable;
        for (const auto& [code, m] : model) {
          if (m.url == url && m.expires_at == 0) reusable.insert(code);
        }
        CreateOutcome outcome;
        std::string code;
        LinkRecord record;
        ASSERT_TRUE(store_->Create(url, "", 0, &outcome, &code, &record).ok());
        if (reusable.empty()) {
          ASSERT_EQ(CreateOutcome::kCreated, outcome);
          model[code] = ModelLink{url, now_, 0, 0};
        } else {
          ASSERT_EQ(CreateOutcome::kExisting, outcome);
          EXPECT_TRUE(reusable.count(code)) << code;
        }
      } else if (kind < 40) {
        const std::string alias = "alias" + std::to_string(rnd.Uniform(8));
        const bool taken = model.count(alias) > 0;
        Create(url, alias, 0,
               taken ? CreateOutcome::kAliasTaken : CreateOutcome::kCreated);
        if (!taken) model[alias] = ModelLink{url, now_, 0, 0};
      } else if (kind < 55) {
        const std::string code = random_code();
        LinkPatch patch;
        if (rnd.OneIn(2)) patch.url = url;
        if (!patch.url || rnd.OneIn(2)) {
          patch.ttl_seconds = rnd.OneIn(2) ? 0 : 100'000 + rnd.Uniform(1000);
        }
        PatchOutcome outcome;
        LinkRecord record;
        ASSERT_TRUE(store_->Patch(code, patch, &outcome, &record).ok());
        ASSERT_EQ(PatchOutcome::kPatched, outcome);
        if (patch.url) model[code].url = *patch.url;
        if (patch.ttl_seconds) {
          model[code].expires_at =
              *patch.ttl_seconds == 0 ? 0 : now_ + *patch.ttl_seconds;
        }
      } else if (kind < 65) {
        const std::string code = random_code();
        ASSERT_TRUE(store_->Remove(code).ok());
        model.erase(code);
      } else if (kind < 88) {
        const std::string code = random_code();
        Click(code);
        model[code].clicks++;
      } else if (kind < 93) {
        ASSERT_TRUE(store_->FlushClicks().ok());
      } else if (kind < 97) {
        now_ += rnd.Uniform(3);
      } else if (kind < 99) {
        Open();  // close: gathered clicks are merged
      } else {
        check();
      }
      if (HasFatalFailure()) return;
    }
    check();
  }
}

}  // namespace
}  // namespace shortlink
