// Tests for CountingEnv: every read is counted in total and per file, from
// many threads at once, and Reset() starts over.
#include "util/counting_env.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

class CountingEnvTest : public testing::Test {
 protected:
  void SetUp() override {
    a_ = dir_.File("a.seg");
    b_ = dir_.File("b.seg");
    ASSERT_TRUE(
        WriteStringToFile(Env::Default(), std::string(1000, 'a'), a_, false)
            .ok());
    ASSERT_TRUE(
        WriteStringToFile(Env::Default(), std::string(500, 'b'), b_, false)
            .ok());
  }

  test::TempDir dir_;
  CountingEnv env_{Env::Default()};
  std::string a_;
  std::string b_;
};

TEST_F(CountingEnvTest, CountsRandomReadsPerFile) {
  std::unique_ptr<RandomAccessFile> a;
  std::unique_ptr<RandomAccessFile> b;
  ASSERT_TRUE(env_.NewRandomAccessFile(a_, &a).ok());
  ASSERT_TRUE(env_.NewRandomAccessFile(b_, &b).ok());
  char scratch[100];
  Slice r;
  ASSERT_TRUE(a->Read(0, 100, &r, scratch).ok());
  ASSERT_TRUE(a->Read(950, 100, &r, scratch).ok());  // short: 50 bytes
  ASSERT_TRUE(b->Read(10, 20, &r, scratch).ok());

  const CountingEnv::Counts ca = env_.ForFile(a_);
  EXPECT_EQ(1u, ca.random_opens);
  EXPECT_EQ(2u, ca.random_reads);
  EXPECT_EQ(150u, ca.random_read_bytes);
  const CountingEnv::Counts cb = env_.ForFile(b_);
  EXPECT_EQ(1u, cb.random_reads);
  EXPECT_EQ(20u, cb.random_read_bytes);
  const CountingEnv::Counts total = env_.Total();
  EXPECT_EQ(2u, total.random_opens);
  EXPECT_EQ(3u, total.random_reads);
  EXPECT_EQ(170u, total.random_read_bytes);
  EXPECT_EQ(3u, total.reads());
  EXPECT_EQ(0u, total.sequential_reads);
}

TEST_F(CountingEnvTest, UntouchedFileHasZeroCounts) {
  std::unique_ptr<RandomAccessFile> a;
  ASSERT_TRUE(env_.NewRandomAccessFile(a_, &a).ok());
  EXPECT_EQ(0u, env_.ForFile(a_).reads());  // opened but never read
  EXPECT_EQ(0u, env_.ForFile(b_).reads());
  EXPECT_EQ(0u, env_.ForFile(b_).random_opens);
  EXPECT_EQ(0u, env_.ForFile(dir_.File("never")).reads());
}

TEST_F(CountingEnvTest, CountsSequentialReads) {
  std::string data;
  ASSERT_TRUE(ReadFileToString(&env_, b_, &data).ok());
  EXPECT_EQ(500u, data.size());
  const CountingEnv::Counts c = env_.ForFile(b_);
  EXPECT_EQ(1u, c.sequential_opens);
  // One read returning the data, one returning nothing at end of file.
  EXPECT_EQ(2u, c.sequential_reads);
  EXPECT_EQ(500u, c.sequential_read_bytes);
  EXPECT_EQ(500u, env_.Total().read_bytes());
  EXPECT_EQ(0u, c.random_reads);
}

TEST_F(CountingEnvTest, CountsWrites) {
  const std::string f = dir_.File("out");
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_.NewWritableFile(f, &w).ok());
  ASSERT_TRUE(w->Append("12345").ok());
  ASSERT_TRUE(w->Append("678").ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Close().ok());
  const CountingEnv::Counts c = env_.ForFile(f);
  EXPECT_EQ(1u, c.writable_opens);
  EXPECT_EQ(2u, c.appends);
  EXPECT_EQ(8u, c.bytes_appended);
  EXPECT_EQ(1u, c.syncs);
  EXPECT_EQ(0u, c.reads());
}

TEST_F(CountingEnvTest, FailedOpenCountsNothing) {
  std::unique_ptr<RandomAccessFile> r;
  EXPECT_TRUE(env_.NewRandomAccessFile(dir_.File("missing"), &r).IsNotFound());
  EXPECT_EQ(0u, env_.Total().random_opens);
}

TEST_F(CountingEnvTest, Reset) {
  std::unique_ptr<RandomAccessFile> a;
  ASSERT_TRUE(env_.NewRandomAccessFile(a_, &a).ok());
  char scratch[10];
  Slice r;
  ASSERT_TRUE(a->Read(0, 10, &r, scratch).ok());
  env_.Reset();
  EXPECT_EQ(0u, env_.Total().reads());
  EXPECT_EQ(0u, env_.Total().random_opens);
  EXPECT_EQ(0u, env_.ForFile(a_).random_read_bytes);
  // Files opened before the reset keep counting.
  ASSERT_TRUE(a->Read(0, 4, &r, scratch).ok());
  EXPECT_EQ(1u, env_.ForFile(a_).random_reads);
  EXPECT_EQ(4u, env_.Total().random_read_bytes);
}

TEST_F(CountingEnvTest, ConcurrentReadsAreAllCounted) {
  std::unique_ptr<RandomAccessFile> a;
  std::unique_ptr<RandomAccessFile> b;
  ASSERT_TRUE(env_.NewRandomAccessFile(a_, &a).ok());
  ASSERT_TRUE(env_.NewRandomAccessFile(b_, &b).ok());
  constexpr int kThreads = 4;
  constexpr int kReads = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      const RandomAccessFile* f = (t % 2 == 0) ? a.get() : b.get();
      char scratch[8];
      Slice r;
      for (int i = 0; i < kReads; i++) {
        if (!f->Read(static_cast<uint64_t>(i % 100), 8, &r, scratch).ok()) {
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(uint64_t{kThreads} * kReads, env_.Total().random_reads);
  EXPECT_EQ(uint64_t{kThreads} * kReads * 8, env_.Total().random_read_bytes);
  EXPECT_EQ(uint64_t{kThreads / 2} * kReads, env_.ForFile(a_).random_reads);
  EXPECT_EQ(uint64_t{kThreads / 2} * kReads, env_.ForFile(b_).random_reads);
}

TEST_F(CountingEnvTest, OtherCallsPassThrough) {
  EXPECT_TRUE(env_.FileExists(a_));
  uint64_t size = 0;
  ASSERT_TRUE(env_.GetFileSize(a_, &size).ok());
  EXPECT_EQ(1000u, size);
  EXPECT_EQ(0u, env_.Total().reads());  // metadata calls are not reads
}

// A mapped file's bytes are offered in place only when asked for: by
// default every read must go through Read, to be counted.
TEST_F(CountingEnvTest, MappingsPassOnlyWhenAskedFor) {
  EnvOptions eo;
  eo.use_mmap_reads = true;
  std::unique_ptr<Env> posix = NewPosixEnv(eo);
  std::unique_ptr<RandomAccessFile> mapped;
  ASSERT_TRUE(posix->NewRandomAccessFile(a_, &mapped).ok());
  ASSERT_NE(mapped->MappedBytes(), nullptr);
  EXPECT_EQ(std::string(mapped->MappedBytes(), 1000), std::string(1000, 'a'));

  CountingEnv counted(posix.get());
  CountingEnv passing(posix.get(), /*pass_mappings=*/true);
  std::unique_ptr<RandomAccessFile> a;
  ASSERT_TRUE(counted.NewRandomAccessFile(a_, &a).ok());
  EXPECT_EQ(a->MappedBytes(), nullptr);
  ASSERT_TRUE(passing.NewRandomAccessFile(a_, &a).ok());
  ASSERT_NE(a->MappedBytes(), nullptr);
  EXPECT_EQ(std::string(a->MappedBytes(), 1000), std::string(1000, 'a'));
  char scratch[10];
  Slice r;
  ASSERT_TRUE(a->Read(990, 10, &r, scratch).ok());
  EXPECT_EQ(r.data(), a->MappedBytes() + 990);
  EXPECT_EQ(1u, passing.Total().random_reads);

  // The short-lived hint reaches the Env below, which then reads with
  // pread; the open and its reads are counted.
  const uint64_t opens = passing.Total().random_opens;
  ASSERT_TRUE(passing.NewShortLivedRandomAccessFile(a_, &a).ok());
  EXPECT_EQ(a->MappedBytes(), nullptr);
  EXPECT_EQ(opens + 1, passing.Total().random_opens);
  ASSERT_TRUE(a->Read(0, 10, &r, scratch).ok());
  EXPECT_EQ(Slice(std::string(10, 'a')), r);
  EXPECT_EQ(2u, passing.Total().random_reads);

  // A file read through pread has no mapping to offer.
  EnvOptions pread;
  pread.use_mmap_reads = false;
  std::unique_ptr<Env> copying = NewPosixEnv(pread);
  CountingEnv over_pread(copying.get(), /*pass_mappings=*/true);
  ASSERT_TRUE(over_pread.NewRandomAccessFile(a_, &a).ok());
  EXPECT_EQ(a->MappedBytes(), nullptr);
}

}  // namespace
}  // namespace bloomkv
