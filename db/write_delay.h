// WriteDelay: paces writes to a byte rate while level 0 is above the
// slowdown trigger, so that compaction catches up before writes must stop.
//
// A token bucket that starts empty and saves no credit: each write group
// is charged its bytes / rate, and the charges of successive groups add up
// to a debt, measured against the clock. A writer sleeps only once the
// debt reaches kMinSleepMicros, and then sleeps all of it: small groups pay
// in one sleep per millisecond of debt rather than one each, so the rate of
// write groups is not capped by the sleep granularity, and a group of many
// writers pays once for all of their bytes.
// Thread-safety: external synchronization required (the DB mutex).
#ifndef BLOOMKV_DB_WRITE_DELAY_H_
#define BLOOMKV_DB_WRITE_DELAY_H_

#include <algorithm>
#include <cstdint>

namespace bloomkv {

class WriteDelay {
 public:
  // Shorter sleeps are not worth a wakeup: the debt carries over instead.
  static constexpr uint64_t kMinSleepMicros = 1000;

  // REQUIRES: 0 < bytes_per_second <= 2^32.
  explicit WriteDelay(uint64_t bytes_per_second)
      : bytes_per_second_(bytes_per_second) {}

  // Charges a write of `bytes` made at now_micros; returns how long its
  // writer must sleep before writing (0: not yet).
  uint64_t Charge(uint64_t bytes, uint64_t now_micros) {
    const uint64_t now_nanos = now_micros * 1000;
    // Time spent below the rate is not saved up for a later burst.
    paid_until_nanos_ = std::max(paid_until_nanos_, now_nanos);
    // Nanoseconds, so that the cost of small writes is not rounded away;
    // in two parts, so that no product overflows.
    constexpr uint64_t kNanosPerSecond = 1'000'000'000;
    paid_until_nanos_ +=
        bytes / bytes_per_second_ * kNanosPerSecond +
        bytes % bytes_per_second_ * kNanosPerSecond / bytes_per_second_;
    const uint64_t debt_micros = (paid_until_nanos_ - now_nanos) / 1000;
    return debt_micros >= kMinSleepMicros ? debt_micros : 0;
  }

  // The slowdown is over: writes owe nothing any more.
  void Reset() { paid_until_nanos_ = 0; }

 private:
  const uint64_t bytes_per_second_;
  uint64_t paid_until_nanos_ = 0;  // when the bytes charged are paid for
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_WRITE_DELAY_H_
