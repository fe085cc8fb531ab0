// LinkStore against a real bloomkv database: dedup (including forced hash
// collisions), aliases, code collisions, expiry and its compaction filter,
// removal, concurrency and reopening.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"
#include "tools/shortlink/link_store.h"

namespace shortlink {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using bloomkv::Status;

// Replays a fixed list of bytes, then repeats its last byte.
class ReplayRandom final : public RandomSource {
 public:
  explicit ReplayRandom(std::vector<uint8_t> bytes)
      : bytes_(std::move(bytes)) {}
  Status Fill(uint8_t* buf, size_t n) override {
    for (size_t i = 0; i < n; i++) {
      buf[i] = pos_ < bytes_.size() ? bytes_[pos_++] : bytes_.back();
    }
    return Status::OK();
  }

 private:
  std::vector<uint8_t> bytes_;
  size_t pos_ = 0;
};

class LinkStoreTest : public testing::Test {
 protected:
  void Open() {
    store_.reset();
    LinkStoreOptions options;
    options.now = [this] { return now_.load(); };
    options.random = random_.get();
    options.TEST_url_hash = url_hash_;
    ASSERT_TRUE(LinkStore::Open(options, dir_.path() + "/db", &store_).ok());
  }

  // Creates and expects `expected`; returns the code.
  std::string Create(const std::string& url, const std::string& alias = "",
                     int64_t ttl = 0,
                     CreateOutcome expected = CreateOutcome::kCreated) {
    CreateOutcome outcome;
    std::string code;
    LinkRecord record;
    const Status s = store_->Create(url, alias, ttl, &outcome, &code, &record);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(static_cast<int>(expected), static_cast<int>(outcome)) << url;
    return code;
  }

  std::string UrlOf(const std::string& code) {
    LinkRecord record;
    const Status s = store_->Lookup(code, &record);
    return s.ok() ? record.url : s.ToString();
  }

  bloomkv::test::TempDir dir_{"shortlink"};
  std::atomic<int64_t> now_{1'700'000'000};
  std::unique_ptr<RandomSource> random_;
  std::function<std::string(std::string_view)> url_hash_;
  std::unique_ptr<LinkStore> store_;
};

TEST_F(LinkStoreTest, CreateLookupAndDedup) {
  Open();
  const std::string code = Create("https://Example.com:443/a?b#c");
  EXPECT_EQ(kGeneratedCodeLength, code.size());
  EXPECT_EQ("https://Example.com:443/a?b#c", UrlOf(code));
  // The same link, written differently: deduplicated.
  EXPECT_EQ(code, Create("HTTPS://example.COM/a?b#c", "", 0,
                         CreateOutcome::kExisting));
  // Different path case, query or fragment: different links.
  EXPECT_NE(code, Create("https://example.com/A?b#c"));
  EXPECT_NE(code, Create("https://example.com/a?b#d"));
  EXPECT_NE(code, Create("http://example.com/a?b#c"));
}

TEST_F(LinkStoreTest, HashCollisionsNeverReturnTheWrongLink) {
  url_hash_ = [](std::string_view) { return std::string(16, 'x'); };
  Open();
  const std::string a = Create("https://a.example/");
  const std::string b = Create("https://b.example/");
  const std::string c = Create("https://c.example/");
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_EQ("https://b.example/", UrlOf(b));
  EXPECT_EQ(a, Create("https://a.example/", "", 0, CreateOutcome::kExisting));
  EXPECT_EQ(b, Create("https://b.example/", "", 0, CreateOutcome::kExisting));
  EXPECT_EQ(c, Create("https://c.example/", "", 0, CreateOutcome::kExisting));
  ASSERT_TRUE(store_->Remove(b).ok());
  LinkRecord record;
  EXPECT_TRUE(store_->Lookup(b, &record).IsNotFound());
  EXPECT_EQ(a, Create("https://a.example/", "", 0, CreateOutcome::kExisting));
  EXPECT_EQ(c, Create("https://c.example/", "", 0, CreateOutcome::kExisting));
  EXPECT_NE(b, Create("https://b.example/"));
}

TEST_F(LinkStoreTest, AliasesAreNeverOverwritten) {
  Open();
  EXPECT_EQ("my-link", Create("https://a.example/", "my-link"));
  Create("https://b.example/", "my-link", 0, CreateOutcome::kAliasTaken);
  EXPECT_EQ("https://a.example/", UrlOf("my-link"));
  // Aliases are case-sensitive.
  EXPECT_EQ("My-link", Create("https://b.example/", "My-link"));
  // An alias always makes a new link, even for a known URL.
  EXPECT_EQ("other", Create("https://a.example/", "other"));

  CreateOutcome outcome;
  std::string code;
  LinkRecord record;
  for (const char* bad : {"api", "metrics", "ab", "a/b", "x y"}) {
    EXPECT_TRUE(
        store_->Create("https://c.example/", bad, 0, &outcome, &code, &record)
            .IsInvalidArgument())
        << bad;
  }
  EXPECT_TRUE(
      store_->Create("ftp://c.example/", "", 0, &outcome, &code, &record)
          .IsInvalidArgument());
  EXPECT_TRUE(
      store_->Create("https://c.example/", "", -1, &outcome, &code, &record)
          .IsInvalidArgument());
  EXPECT_TRUE(store_
                  ->Create("https://c.example/", "", kMaxTtlSeconds + 1,
                           &outcome, &code, &record)
                  .IsInvalidArgument());
  // Refused requests store nothing; only the three links above exist.
  EXPECT_TRUE(store_->Lookup("other", &record).ok());
  auto it = store_->db()->NewIterator(bloomkv::ReadOptions());
  int code_keys = 0;
  for (it->Seek("c:"); it->Valid() && it->key().starts_with("c:"); it->Next()) {
    code_keys++;
  }
  EXPECT_EQ(3, code_keys);
}

TEST_F(LinkStoreTest, TakenGeneratedCodeIsRedrawn) {
  // Two draws of "AAAAAAA" (byte 10), then "BBBBBBB" (byte 11).
  std::vector<uint8_t> bytes(32, 10);
  bytes.resize(48, 11);
  random_ = std::make_unique<ReplayRandom>(bytes);
  Open();
  EXPECT_EQ("AAAAAAA", Create("https://a.example/"));
  EXPECT_EQ("BBBBBBB", Create("https://b.example/"));
  EXPECT_EQ("https://a.example/", UrlOf("AAAAAAA"));
}

TEST_F(LinkStoreTest, RandomSourceStuckOnTakenCodesFails) {
  random_ = std::make_unique<ReplayRandom>(std::vector<uint8_t>{10});
  Open();
  EXPECT_EQ("AAAAAAA", Create("https://a.example/"));
  CreateOutcome outcome;
  std::string code;
  LinkRecord record;
  EXPECT_TRUE(
      store_->Create("https://b.example/", "", 0, &outcome, &code, &record)
          .IsIOError());
}

TEST_F(LinkStoreTest, DedupOnlyReusesLinksThatLiveLongEnough) {
  Open();
  const std::string forever = Create("https://a.example/");
  // Any TTL is satisfied by a link that never expires.
  EXPECT_EQ(forever,
            Create("https://a.example/", "", 60, CreateOutcome::kExisting));

  const std::string hour = Create("https://b.example/", "", 3600);
  EXPECT_EQ(hour,
            Create("https://b.example/", "", 60, CreateOutcome::kExisting));
  // Asking for longer, or for forever, makes a new link.
  const std::string day = Create("https://b.example/", "", 86400);
  EXPECT_NE(hour, day);
  const std::string b_forever = Create("https://b.example/");
  EXPECT_NE(day, b_forever);
}

TEST_F(LinkStoreTest, ExpiredLinksAreNotReusedAndCompactionDropsThem) {
  Open();
  const std::string short_lived = Create("https://a.example/", "", 100);
  const std::string keeper = Create("https://b.example/");
  ASSERT_TRUE(store_->Flush().ok());

  now_ += 100;  // the first second short_lived is dead
  LinkRecord record;
  ASSERT_TRUE(store_->Lookup(short_lived, &record).ok());
  EXPECT_TRUE(IsExpired(record.expires_at, store_->Now()));
  // Dedup never hands out the dead link.
  const std::string fresh = Create("https://a.example/", "", 100);
  EXPECT_NE(short_lived, fresh);

  now_ += 100;  // fresh is dead too
  ASSERT_TRUE(store_->CompactAll().ok());
  EXPECT_TRUE(store_->Lookup(short_lived, &record).IsNotFound());
  EXPECT_TRUE(store_->Lookup(fresh, &record).IsNotFound());
  EXPECT_EQ("https://b.example/", UrlOf(keeper));
  // Two records, their list entries and the index entry listing them both.
  EXPECT_EQ(5u, store_->Stats().compaction_filter_drops);
  std::string value;
  EXPECT_TRUE(store_->db()
                  ->Get(bloomkv::ReadOptions(),
                        IndexKey(UrlHash("https://a.example/")), &value)
                  .IsNotFound());
}

TEST_F(LinkStoreTest, RemoveDeletesCodeAndIndexEntry) {
  Open();
  const std::string code = Create("https://a.example/x");
  ASSERT_TRUE(store_->Remove(code).ok());
  LinkRecord record;
  EXPECT_TRUE(store_->Lookup(code, &record).IsNotFound());
  EXPECT_TRUE(store_->Remove(code).IsNotFound());
  std::string value;
  EXPECT_TRUE(store_->db()
                  ->Get(bloomkv::ReadOptions(),
                        IndexKey(UrlHash("https://a.example/x")), &value)
                  .IsNotFound());
  EXPECT_NE(code, Create("https://a.example/x"));
}

TEST_F(LinkStoreTest, ConcurrentCreatesNeverShareACode) {
  Open();
  constexpr int kThreads = 4;
  std::atomic<int> created{0}, taken{0};
  std::vector<std::string> same_url_codes(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      CreateOutcome outcome;
      std::string code;
      LinkRecord record;
      for (int i = 0; i < 50; i++) {
        const std::string alias = "alias" + std::to_string(i);
        ASSERT_TRUE(store_
                        ->Create("https://t" + std::to_string(t) + ".example/",
                                 alias, 0, &outcome, &code, &record)
                        .ok());
        (outcome == CreateOutcome::kCreated ? created : taken)++;
      }
      ASSERT_TRUE(store_
                      ->Create("https://same.example/", "", 0, &outcome,
                               &same_url_codes[t], &record)
                      .ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(50, created.load());
  EXPECT_EQ(50 * (kThreads - 1), taken.load());
  for (const std::string& c : same_url_codes) EXPECT_EQ(same_url_codes[0], c);
}

TEST_F(LinkStoreTest, LinksSurviveReopen) {
  Open();
  const std::string a = Create("https://a.example/");
  Create("https://b.example/", "bee");
  Open();
  EXPECT_EQ("https://a.example/", UrlOf(a));
  EXPECT_EQ("https://b.example/", UrlOf("bee"));
  EXPECT_EQ(a, Create("https://a.example/", "", 0, CreateOutcome::kExisting));
}

}  // namespace
}  // namespace shortlink
