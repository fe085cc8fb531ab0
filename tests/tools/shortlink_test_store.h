// A LinkStore on a temporary directory with a settable clock and no
// flusher thread (clicks reach the database only through FlushClicks,
// Flush and close), for the store-layer tests of clicks, listing and PATCH.
//
// Thread-safety: the clock may be set from any thread; the rest is used by
// the test's thread.
#ifndef BLOOMKV_TESTS_TOOLS_SHORTLINK_TEST_STORE_H_
#define BLOOMKV_TESTS_TOOLS_SHORTLINK_TEST_STORE_H_

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "tests/testutil/test_util.h"
#include "tools/shortlink/link_store.h"

namespace shortlink {

class TestStoreFixture : public testing::Test {
 protected:
  // 2023-11-14 22:13:20 UTC.
  static constexpr int64_t kStart = 1'700'000'000;

  std::string path() const { return dir_.path() + "/db"; }

  // (Re)opens the store; the old one is closed first.
  void Open() {
    store_.reset();
    LinkStoreOptions options;
    options.now = [this] { return now_.load(); };
    options.stats_flush_ms = 0;
    ASSERT_TRUE(LinkStore::Open(options, path(), &store_).ok());
  }

  // Creates a link and returns its code ("" on failure).
  std::string Create(const std::string& url, const std::string& alias = "",
                     int64_t ttl = 0,
                     CreateOutcome expected = CreateOutcome::kCreated) {
    CreateOutcome outcome;
    std::string code;
    LinkRecord record;
    const bloomkv::Status s =
        store_->Create(url, alias, ttl, &outcome, &code, &record);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(static_cast<int>(expected), static_cast<int>(outcome)) << url;
    return s.ok() ? code : "";
  }

  // Clicks on a live link, as a redirect does.
  void Click(const std::string& code, int times = 1) {
    LinkRecord record;
    ASSERT_TRUE(store_->Lookup(code, &record).ok()) << code;
    for (int i = 0; i < times; i++) store_->RecordClick(code, record);
  }

  // The stored clicks of `code`.
  ClickRecord StoredClicks(const std::string& code) {
    LinkRecord record;
    ClickRecord clicks;
    EXPECT_TRUE(store_->Lookup(code, &record).ok()) << code;
    const bloomkv::Status s = store_->Clicks(code, record, &clicks);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return clicks;
  }

  bloomkv::test::TempDir dir_{"shortlink"};
  std::atomic<int64_t> now_{kStart};
  std::unique_ptr<LinkStore> store_;
};

}  // namespace shortlink

#endif  // BLOOMKV_TESTS_TOOLS_SHORTLINK_TEST_STORE_H_
