// Helpers shared by every bloomkv test: temporary directories, random data
// and the list of seeds that randomized tests loop over.
//
// Seeds: TestSeeds() returns a fixed list, so test runs are reproducible. To
// replay a failure, or to explore new seeds, set BLOOMKV_TEST_SEED to a
// comma-separated list of seeds (decimal or 0x-hex), e.g.
//   BLOOMKV_TEST_SEED=0x5eed,42 ./build/tests/util_tests
// Randomized tests should print the seed on failure:
//   for (uint64_t seed : test::TestSeeds()) {
//     SCOPED_TRACE("seed=" + std::to_string(seed));
//     Random rnd(seed); ...
//   }
// Thread-safety: TempDir is not shared between threads while being destroyed;
// the free functions are thread-safe given distinct Random objects.
#ifndef BLOOMKV_TESTS_TESTUTIL_TEST_UTIL_H_
#define BLOOMKV_TESTS_TESTUTIL_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "bloomkv/options.h"
#include "util/random.h"

namespace bloomkv::test {

// A fresh, empty directory (mkdtemp under $TMPDIR, or /tmp) removed with all
// its contents when the TempDir is destroyed. Set BLOOMKV_KEEP_TEMP=1 to keep
// it for inspection (its path is printed). Aborts the process if the
// directory cannot be created: no test can run meaningfully without it.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "bloomkv");
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  // The same, for a test that needs a disk's page cache (readahead, large
  // folios), not tmpfs's: under $BLOOMKV_TEST_DISK_TMPDIR where set (the
  // test command runs the suite on tmpfs and sets it, scripts/test.sh),
  // else where TempDir() would make it.
  static TempDir OnDisk(std::string_view prefix = "bloomkv");

  // Absolute path, without a trailing slash.
  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string File(std::string_view name) const;

 private:
  TempDir(std::string_view prefix, std::string base);

  std::string path_;
};

// Seeds for randomized tests: $BLOOMKV_TEST_SEED if set (a malformed value
// fails the current test and falls back to the defaults), else a fixed list.
std::vector<uint64_t> TestSeeds();

// A process-wide POSIX Env that reads segment files with pread(2), for the
// tests that run a path both mapped (Env::Default()) and not. Never deleted.
Env* PreadEnv();

// len printable ASCII characters (' ' to '~').
std::string RandomString(Random* rnd, size_t len);
// len arbitrary bytes, NUL and 0xff included.
std::string RandomBytes(Random* rnd, size_t len);
// len bytes that compress to roughly compressed_fraction of len: a random
// prefix repeated. REQUIRES: 0 < compressed_fraction <= 1.
std::string CompressibleString(Random* rnd, double compressed_fraction,
                               size_t len);

// The names in a database directory, sorted, without the info log (LOG,
// LOG.old...), which every Open rotates by design: for tests that check a
// failed or read-only Open changed no file.
std::vector<std::string> DatabaseFiles(const std::string& dir);

// Waits (up to 60 s) until db has no flush or compaction queued or running
// ("bloomkv.compaction-pending" is 0: background compaction has settled, as
// an application finds its store after a while); a gtest failure showing
// the levels table if it never does.
void WaitForBackgroundWork(DB* db);

// GetProperty("bloomkv.resource-usage") as a map from each line's name to
// its number.
std::map<std::string, uint64_t> ResourceUsage(DB* db);

// Every key of `model` reads its value from db (Get), and a full scan finds
// exactly the model: nothing missing, nothing else. Reports through gtest.
void ExpectDbHolds(DB* db, const std::map<std::string, std::string>& model);

// Database options with everything small (64 KiB memtables, 16 KiB
// segments, 1 KiB blocks, a 64 KiB level 1, compaction at two level-0
// segments), so that flushes and compactions interleave constantly with
// the operations of a test.
Options TinyCompactionOptions();

// How many Status::ToString() prefixes ("Corruption: ", "IO error: ", ...)
// text holds: an error message that wraps another status' ToString() holds
// two ("Corruption: CURRENT: ...: IO error: ..."), which reads as two errors.
int CountStatusPrefixes(const std::string& text);

// Raises the level-0 triggers to their maximum and turns off
// read-triggered compaction, so that level 0 simply accumulates segments:
// for tests of the read path across many of them.
void KeepEverythingInLevelZero(Options* options);

}  // namespace bloomkv::test

#endif  // BLOOMKV_TESTS_TESTUTIL_TEST_UTIL_H_
