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
    const uint64_t sleep = d->Charge(bytes, now);
    if (sleep > 0) ++*sleeps;
    now += sleep;
  }
  return now - kStart;
}

TEST(WriteDelayTest, SmallWritesPayTheirBytesInFewSleeps) {
  WriteDelay d(kRate);
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
  WriteDelay d(kRate);
  EXPECT_EQ(500'000u, d.Charge(kRate / 2, kStart));
}

TEST(WriteDelayTest, IdleTimeIsNotSavedForABurst) {
  WriteDelay d(kRate);
  EXPECT_EQ(0u, d.Charge(100, kStart));
  // A second later the bucket is empty again, not full of credit.
  EXPECT_EQ(250'000u, d.Charge(kRate / 4, kStart + 1'000'000));
}

TEST(WriteDelayTest, DebtBelowTheMinimumCarriesOverUntilReset) {
  WriteDelay d(kRate);
  // 1000 bytes cost 953 us: not yet worth a sleep, but owed.
  EXPECT_EQ(0u, d.Charge(1000, kStart));
  EXPECT_EQ(1907u, d.Charge(1000, kStart));
  d.Reset();
  EXPECT_EQ(0u, d.Charge(1000, kStart));
}

}  // namespace
}  // namespace bloomkv
