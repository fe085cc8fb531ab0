// WriteDelay: the byte-rate pacing of writes during a level-0 slowdown.
#include "db/write_delay.h"

#include <gtest/gtest.h>

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

constexpr uint64_t kRate = 1 << 20;  // bytes per second
constexpr uint64_t kStart = 5'000'000;

// Runs `writes` writes of `bytes` each back to back on a simulated clock
// that only sleeping advances; returns the time slept.
uint64_t SleepFor(WriteDelay* d, int writes, uint64_t bytes, int* sleeps) {
  uint64_t now = kStart;
  *sleeps = 0;
  for (int i = 0; i < writes; i++) {
    const uint64_t sleep = d->Charge(bytes, kRate, now);
    if (sleep > 0) ++*sleeps;
    now += sleep;
  }
  return now - kStart;
}

TEST(WriteDelayTest, SmallWritesPayTheirBytesInFewSleeps) {
  WriteDelay d;
  int sleeps;
  // 10000 writes of 100 bytes: 1,000,000 bytes at 1 MiB/s is 953,674 us.
  const uint64_t slept = SleepFor(&d, 10000, 100, &sleeps);
  EXPECT_LE(953'674 - WriteDelay::kMinSleepMicros, slept);
  EXPECT_GE(953'674u, slept);
  // One sleep per millisecond of debt or more, not one per write.
  EXPECT_GE(954, sleeps);
  EXPECT_LE(100, sleeps);
}

TEST(WriteDelayTest, OneLargeGroupPaysOnceForAllItsBytes) {
  WriteDelay d;
  EXPECT_EQ(500'000u, d.Charge(kRate / 2, kRate, kStart));
}

TEST(WriteDelayTest, IdleTimeIsNotSavedForABurst) {
  WriteDelay d;
  EXPECT_EQ(0u, d.Charge(100, kRate, kStart));
  // A second later the bucket is empty again, not full of credit.
  EXPECT_EQ(250'000u, d.Charge(kRate / 4, kRate, kStart + 1'000'000));
}

TEST(WriteDelayTest, DebtBelowTheMinimumCarriesOverUntilReset) {
  WriteDelay d;
  // 1000 bytes cost 953 us: not yet worth a sleep, but owed.
  EXPECT_EQ(0u, d.Charge(1000, kRate, kStart));
  EXPECT_EQ(1907u, d.Charge(1000, kRate, kStart));
  d.Reset();
  EXPECT_EQ(0u, d.Charge(1000, kRate, kStart));
}

TEST(WriteDelayTest, TheRateHalvesForEachEighthOfTheWayToTheStop) {
  constexpr uint64_t kConfigured = 16 << 20;
  // The defaults: slowdown 20, stop 36, two segments per eighth.
  for (int level0 = 20; level0 < 36; level0++) {
    EXPECT_EQ(kConfigured >> ((level0 - 20) / 2),
              DelayedWriteRate(kConfigured, 20, 36, level0))
        << level0;
  }
  EXPECT_EQ(kConfigured / 2, DelayedWriteRate(kConfigured, 20, 36, 22));
  EXPECT_EQ(kConfigured / 128, DelayedWriteRate(kConfigured, 20, 36, 35));
  // At or past the stop trigger (a write group already in the memtable)
  // and far past it, never slower than 1/128.
  EXPECT_EQ(kConfigured / 128, DelayedWriteRate(kConfigured, 20, 36, 36));
  EXPECT_EQ(kConfigured / 128, DelayedWriteRate(kConfigured, 20, 36, 500));
  // Below the slowdown trigger (not asked in practice): the configured rate.
  EXPECT_EQ(kConfigured, DelayedWriteRate(kConfigured, 20, 36, 3));
  // A short way (LevelDB's 8 and 12): a halving per segment.
  EXPECT_EQ(kConfigured, DelayedWriteRate(kConfigured, 8, 12, 8));
  EXPECT_EQ(kConfigured / 2, DelayedWriteRate(kConfigured, 8, 12, 9));
  EXPECT_EQ(kConfigured / 8, DelayedWriteRate(kConfigured, 8, 12, 11));
  // A long way (100 to 1000): 113 segments per eighth.
  EXPECT_EQ(kConfigured, DelayedWriteRate(kConfigured, 100, 1000, 212));
  EXPECT_EQ(kConfigured / 2, DelayedWriteRate(kConfigured, 100, 1000, 213));
  // No way at all (slowdown == stop), and the least configurable rates.
  EXPECT_EQ(kConfigured, DelayedWriteRate(kConfigured, 12, 12, 12));
  EXPECT_EQ(128u, DelayedWriteRate(16 << 10, 20, 36, 35));
  EXPECT_EQ(1u, DelayedWriteRate(1, 20, 36, 33));
}

}  // namespace
}  // namespace bloomkv
