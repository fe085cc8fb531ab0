// Several compaction threads: concurrent writers, manual compactions of
// random ranges and automatic compactions on up to four threads at once,
// checked against a model of every key after the writers stop and again
// after a reopen. Seeded (test::TestSeeds); built with
// -DBLOOMKV_SANITIZE=thread this is also the ThreadSanitizer check of
// compactions running side by side.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bloomkv/db.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Model = std::map<std::string, std::string>;

constexpr int kWriters = 3;
constexpr int kOpsPerWriter = 2000;
constexpr int kKeysPerWriter = 400;

std::string Key(int writer, uint64_t k) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "w%d-%05d", writer, static_cast<int>(k));
  return buf;
}

TEST(CompactionThreadsTest, ConcurrentWritersAndCompactionsKeepEveryKey) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    test::TempDir dir;
    Options options = test::TinyCompactionOptions();
    options.max_background_compactions = 4;
    // Small level targets: many levels, so compactions of different levels
    // have the chance to run side by side.
    options.max_bytes_for_level_multiplier = 2;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());

    // Each writer owns its keys, so its own model is exact.
    Model models[kWriters];
    std::atomic<bool> failed{false};
    std::atomic<int> writers_done{0};
    std::vector<std::thread> threads;
    for (int w = 0; w < kWriters; w++) {
      threads.emplace_back([&, w] {
        Random rnd(seed * kWriters + w);
        for (int i = 0; i < kOpsPerWriter && !failed; i++) {
          const std::string key = Key(w, rnd.Uniform(kKeysPerWriter));
          Status s;
          if (rnd.Uniform(8) == 0) {
            s = db->Delete(WriteOptions(), key);
            models[w].erase(key);
          } else {
            const std::string value =
                key + ":" + test::RandomString(&rnd, 20 + rnd.Uniform(200));
            s = db->Put(WriteOptions(), key, value);
            models[w][key] = value;
          }
          if (!s.ok()) failed = true;
        }
        writers_done++;
      });
    }
    // Manual compactions of random ranges while the writers run.
    threads.emplace_back([&] {
      Random rnd(seed ^ 0xc0);
      while (writers_done < kWriters && !failed) {
        const int w = static_cast<int>(rnd.Uniform(kWriters));
        const uint64_t a = rnd.Uniform(kKeysPerWriter);
        const std::string begin = Key(w, a);
        const std::string end = Key(w, a + rnd.Uniform(kKeysPerWriter / 2));
        const Slice b(begin), e(end);
        if (!db->CompactRange(&b, &e).ok()) failed = true;
      }
    });
    for (auto& t : threads) t.join();
    ASSERT_FALSE(failed);

    Model model;
    for (const Model& m : models) model.insert(m.begin(), m.end());
    test::ExpectDbHolds(db.get(), model);
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    test::ExpectDbHolds(db.get(), model);
    db.reset();
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    test::ExpectDbHolds(db.get(), model);
  }
}

}  // namespace
}  // namespace bloomkv
