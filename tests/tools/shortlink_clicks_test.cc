// Click statistics in the store layer: exact counts per UTC day, batching
// (a click never writes), durability across a close, retention, and that a
// link's counts go with the link (removal, expiry) and never pass to a later
// link of the same code.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bloomkv/iterator.h"
#include "tests/tools/shortlink_test_store.h"
#include "tools/shortlink/click_stats.h"
#include "tools/shortlink/link_record.h"

namespace shortlink {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using bloomkv::Status;

using ClicksTest = TestStoreFixture;

std::vector<std::pair<int32_t, uint64_t>> Days(const ClickRecord& clicks) {
  std::vector<std::pair<int32_t, uint64_t>> out;
  for (const DayCount& d : clicks.days) out.emplace_back(d.day, d.count);
  return out;
}

TEST(ClickRecordTest, DayOfCountsUtcDays) {
  EXPECT_EQ(0, DayOf(0));
  EXPECT_EQ(0, DayOf(86399));
  EXPECT_EQ(1, DayOf(86400));
  EXPECT_EQ(-1, DayOf(-1));
  EXPECT_EQ(19675, DayOf(1'700'000'000));  // 2023-11-14
}

TEST(ClickRecordTest, EncodingRoundTripsAndRejectsDamage) {
  ClickRecord record{1'700'000'000, 0x0102030405060708,
                     1'800'000'000, 12345,
                     1'700'000'500, {{19675, 5}, {19676, 12340}}};
  std::string value;
  EncodeClickRecord(record, &value);
  EXPECT_EQ(kClickRecordHeaderSize + 2 * kClickDaySize, value.size());
  ClickRecord decoded;
  ASSERT_TRUE(DecodeClickRecord("abc", value, &decoded).ok());
  EXPECT_EQ(record.link_created, decoded.link_created);
  EXPECT_EQ(record.link_incarnation, decoded.link_incarnation);
  EXPECT_EQ(record.expires_at, decoded.expires_at);
  EXPECT_EQ(record.total, decoded.total);
  EXPECT_EQ(record.last_access, decoded.last_access);
  EXPECT_EQ(Days(record), Days(decoded));
  // Every truncation, an extra byte and a wrong version are corruption.
  for (size_t n = 0; n < value.size(); n++) {
    EXPECT_TRUE(
        DecodeClickRecord("abc", value.substr(0, n), &decoded).IsCorruption())
        << n;
  }
  EXPECT_TRUE(DecodeClickRecord("abc", value + "x", &decoded).IsCorruption());
  value[0] = 3;
  EXPECT_TRUE(DecodeClickRecord("abc", value, &decoded).IsCorruption());
}

// docs/shortlinkd.md's worked example as version 1 wrote it: a link
// created at 1,700,000,000 without expiry, and its click record after three
// clicks on day 19675, the last at 1,700,000,100.
std::string VersionOneLink() {
  return std::string("\x01\x00\xf1\x53\x65\0\0\0\0", 9) + std::string(8, '\0') +
         "https://example.com/";
}
std::string VersionOneClicks() {
  return std::string("\x01\x00\xf1\x53\x65\0\0\0\0", 9) + std::string(8, '\0') +
         std::string("\x03\0\0\0\0\0\0\0", 8) +
         std::string("\x64\xf1\x53\x65\0\0\0\0", 8) + std::string("\x01", 1) +
         std::string("\xdb\x4c\0\0", 4) + std::string("\x03\0\0\0\0\0\0\0", 8);
}

// Records written before links had incarnations still read, as those of
// incarnation 0 (the incarnation of every version-1 link record).
TEST(ClickRecordTest, VersionOneRecordsStillRead) {
  const std::string v1 = VersionOneClicks();
  ClickRecord decoded;
  ASSERT_TRUE(DecodeClickRecord("aZ3kQ9x", v1, &decoded).ok());
  EXPECT_EQ(1'700'000'000, decoded.link_created);
  EXPECT_EQ(0u, decoded.link_incarnation);
  EXPECT_EQ(0, decoded.expires_at);
  EXPECT_EQ(3u, decoded.total);
  EXPECT_EQ(1'700'000'100, decoded.last_access);
  EXPECT_EQ((std::vector<std::pair<int32_t, uint64_t>>{{19675, 3}}),
            Days(decoded));
  EXPECT_TRUE(
      DecodeClickRecord("aZ3kQ9x", v1.substr(0, v1.size() - 1), &decoded)
          .IsCorruption());
}

TEST_F(ClicksTest, CountedExactlyPerUtcDayAcrossMidnight) {
  Open();
  const std::string code = Create("https://example.com/a");
  const int64_t midnight = (DayOf(kStart) + 1) * kSecondsPerDay;
  now_ = midnight - 10;
  Click(code, 5);
  now_ = midnight;  // the first second of the next day
  Click(code, 3);
  now_ = midnight + 7;
  Click(code, 1);
  ASSERT_TRUE(store_->FlushClicks().ok());
  ClickRecord clicks = StoredClicks(code);
  EXPECT_EQ(9u, clicks.total);
  EXPECT_EQ(midnight + 7, clicks.last_access);
  const int32_t day = DayOf(midnight - 10);
  EXPECT_EQ((std::vector<std::pair<int32_t, uint64_t>>{{day, 5}, {day + 1, 4}}),
            Days(clicks));

  // A second flush adds to what is stored.
  Click(code, 2);
  ASSERT_TRUE(store_->FlushClicks().ok());
  clicks = StoredClicks(code);
  EXPECT_EQ(11u, clicks.total);
  EXPECT_EQ((std::vector<std::pair<int32_t, uint64_t>>{{day, 5}, {day + 1, 6}}),
            Days(clicks));
}

TEST_F(ClicksTest, AClickNeverWritesAndAFlushWritesOnce) {
  Open();
  std::vector<std::string> codes;
  for (int i = 0; i < 20; i++) {
    codes.push_back(Create("https://example.com/" + std::to_string(i)));
  }
  const uint64_t written = store_->Stats().user_bytes_written;
  for (int round = 0; round < 50; round++) {
    for (const std::string& code : codes) Click(code);
  }
  EXPECT_EQ(written, store_->Stats().user_bytes_written);
  EXPECT_EQ(0u, StoredClicks(codes[0]).total);  // not merged yet

  ASSERT_TRUE(store_->FlushClicks().ok());
  const uint64_t after_flush = store_->Stats().user_bytes_written;
  EXPECT_GT(after_flush, written);
  for (const std::string& code : codes)
    EXPECT_EQ(50u, StoredClicks(code).total);
  // Nothing gathered: nothing written.
  ASSERT_TRUE(store_->FlushClicks().ok());
  EXPECT_EQ(after_flush, store_->Stats().user_bytes_written);
}

TEST_F(ClicksTest, GatheredClicksAreWrittenAtClose) {
  Open();
  const std::string a = Create("https://example.com/a");
  const std::string b = Create("https://example.com/b", "bee");
  Click(a, 7);
  ASSERT_TRUE(store_->FlushClicks().ok());
  Click(a, 2);
  Click(b, 4);
  Open();  // closes the store: the last clicks are merged then
  EXPECT_EQ(9u, StoredClicks(a).total);
  EXPECT_EQ(4u, StoredClicks(b).total);
}

TEST_F(ClicksTest, FlusherThreadWritesWithoutBeingAsked) {
  LinkStoreOptions options;
  options.now = [this] { return now_.load(); };
  options.stats_flush_ms = 5;
  ASSERT_TRUE(LinkStore::Open(options, path(), &store_).ok());
  const std::string code = Create("https://example.com/a");
  Click(code, 3);
  // No timing assumption: wait as long as it takes (the ctest timeout is
  // the bound), then check the count is exact.
  while (StoredClicks(code).total == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(3u, StoredClicks(code).total);
}

TEST_F(ClicksTest, DailyCountsKeepTheLastThirtyDays) {
  Open();
  const std::string code = Create("https://example.com/a");
  for (int day = 0; day < 40; day++) {
    now_ = kStart + day * kSecondsPerDay;
    Click(code, day + 1);
    ASSERT_TRUE(store_->FlushClicks().ok());
  }
  ClickRecord clicks = StoredClicks(code);
  EXPECT_EQ(40u * 41 / 2, clicks.total);
  ASSERT_EQ(static_cast<size_t>(kClickDays), clicks.days.size());
  EXPECT_EQ(DayOf(kStart) + 10, clicks.days.front().day);
  EXPECT_EQ(11u, clicks.days.front().count);
  EXPECT_EQ(40u, clicks.days.back().count);

  // Reading later shows only the days still inside the window, though the
  // record is rewritten only by the next click.
  now_ = kStart + 60 * kSecondsPerDay;
  clicks = StoredClicks(code);
  EXPECT_EQ(40u * 41 / 2, clicks.total);
  ASSERT_EQ(9u, clicks.days.size());
  EXPECT_EQ(DayOf(now_) - (kClickDays - 1), clicks.days.front().day);
}

TEST_F(ClicksTest, ALaterLinkOfTheSameCodeStartsFromZero) {
  Open();
  const std::string url = "https://example.com/a";
  Create(url, "mine");
  Click("mine", 5);
  ASSERT_TRUE(store_->FlushClicks().ok());
  Click("mine", 2);  // gathered, not yet written
  ASSERT_TRUE(store_->Remove("mine").ok());
  // Same second, same alias: a new link.
  Create("https://example.com/b", "mine");
  ASSERT_TRUE(store_->FlushClicks().ok());
  EXPECT_EQ(0u, StoredClicks("mine").total);

  // Clicks gathered for a link that is then removed are dropped, not
  // written for nobody.
  Click("mine", 3);
  ASSERT_TRUE(store_->Remove("mine").ok());
  ASSERT_TRUE(store_->FlushClicks().ok());
  std::string value;
  EXPECT_TRUE(store_->db()
                  ->Get(bloomkv::ReadOptions(), ClickKey("mine"), &value)
                  .IsNotFound());
}

// A redirect reads the link, then counts its click. When the link is
// removed and its code given to a new link within the same second in
// between, that click is the old link's: the new one starts at zero and
// counts only its own clicks, whatever order they arrive in.
TEST_F(ClicksTest, ALateClickOfARemovedLinkIsNotCountedForItsSuccessor) {
  Open();
  Create("https://example.com/old", "mine");
  Click("mine", 4);
  ASSERT_TRUE(store_->FlushClicks().ok());
  LinkRecord old_link;
  ASSERT_TRUE(store_->Lookup("mine", &old_link).ok());  // a redirect's read
  ASSERT_TRUE(store_->Remove("mine").ok());
  Create("https://example.com/new", "mine");  // the same second
  store_->RecordClick("mine", old_link);      // that redirect's click
  ASSERT_TRUE(store_->FlushClicks().ok());
  EXPECT_EQ(0u, StoredClicks("mine").total);

  Click("mine", 2);
  store_->RecordClick("mine", old_link);
  Click("mine", 1);
  ASSERT_TRUE(store_->FlushClicks().ok());
  EXPECT_EQ(3u, StoredClicks("mine").total);
  // The link is told apart from its predecessor after a reopen too.
  Open();
  Click("mine");
  ASSERT_TRUE(store_->FlushClicks().ok());
  EXPECT_EQ(4u, StoredClicks("mine").total);
}

// A database written before incarnations: its links keep their clicks and
// go on counting.
TEST_F(ClicksTest, VersionOneLinksKeepTheirClicks) {
  Open();
  ASSERT_TRUE(
      store_->db()
          ->Put(bloomkv::WriteOptions(), CodeKey("aZ3kQ9x"), VersionOneLink())
          .ok());
  ASSERT_TRUE(store_->db()
                  ->Put(bloomkv::WriteOptions(), ClickKey("aZ3kQ9x"),
                        VersionOneClicks())
                  .ok());
  Open();
  EXPECT_EQ(3u, StoredClicks("aZ3kQ9x").total);
  Click("aZ3kQ9x", 2);
  ASSERT_TRUE(store_->FlushClicks().ok());
  EXPECT_EQ(5u, StoredClicks("aZ3kQ9x").total);
  EXPECT_EQ((std::vector<std::pair<int32_t, uint64_t>>{{19675, 5}}),
            Days(StoredClicks("aZ3kQ9x")));
}

// Every key that names `code` (in its key or, for the URL index, in its
// value).
std::vector<std::string> KeysOf(bloomkv::DB* db, const std::string& code) {
  std::vector<std::string> out;
  std::unique_ptr<bloomkv::Iterator> it =
      db->NewIterator(bloomkv::ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string key = it->key().ToString();
    std::string_view listed;
    const bool names = key == CodeKey(code) || key == ClickKey(code) ||
                       (CodeOfListKey(key, &listed) && listed == code) ||
                       (key.starts_with(kIndexKeyPrefix) &&
                        it->value().ToString().find(code) != std::string::npos);
    if (names) out.push_back(key.substr(0, 2));
  }
  return out;
}

TEST_F(ClicksTest, CompactionDropsAnExpiredLinkWithItsClicksAndListEntry) {
  Open();
  const std::string dying = Create("https://example.com/dying", "dying", 60);
  const std::string lasting = Create("https://example.com/lasting", "lasting");
  Click(dying, 2);
  Click(lasting, 3);
  ASSERT_TRUE(store_->FlushClicks().ok());
  EXPECT_EQ((std::vector<std::string>{"c:", "s:", "t:", "u:"}),
            KeysOf(store_->db(), dying));

  now_ = kStart + 61;
  ASSERT_TRUE(store_->CompactAll().ok());
  EXPECT_EQ(std::vector<std::string>{}, KeysOf(store_->db(), dying));
  EXPECT_EQ((std::vector<std::string>{"c:", "s:", "t:", "u:"}),
            KeysOf(store_->db(), lasting));
  EXPECT_EQ(3u, StoredClicks(lasting).total);
}

TEST_F(ClicksTest, RemoveDeletesEveryKeyOfTheLink) {
  Open();
  const std::string code = Create("https://example.com/a");
  Click(code, 2);
  ASSERT_TRUE(store_->FlushClicks().ok());
  ASSERT_TRUE(store_->Remove(code).ok());
  EXPECT_EQ(std::vector<std::string>{}, KeysOf(store_->db(), code));
}

}  // namespace
}  // namespace shortlink
