// WriteDelay: paces writes to a byte rate while level 0 is above the
// slowdown trigger, so that compaction catches up before writes must stop.
//
// The rate falls as level 0 grows (DelayedWriteRate): a writer that the
// configured rate still lets outrun compaction is slowed further before it
// reaches the stop trigger, instead of being stopped outright there for as
// long as a whole level-0 compaction takes.
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

// The rate writes may go at while level 0 has `level0` segments, given the
// configured rate and triggers: the configured rate for the first eighth
// of the way from the slowdown trigger to the stop trigger, halved for each
// further eighth (1/128 of it in the last), and never below 1 byte/s. With
// the defaults (20 and 36, 16 MiB/s): 16 MiB/s at 20 and 21 segments, 8 at
// 22 and 23, ..., 1 at 28 and 29, 128 KiB/s from 34 (and at or past the
// stop trigger). Level 0 then grows ever more slowly while a compaction
// runs: at 10^8 links one level-0 compaction rewrote the 1 GB base level
// for 21 s, and the configured rate alone let writes reach the stop trigger
// within 3 s of it (docs/benchmarks.md, "Scale").
// Level-0 segments per halving of the rate: an eighth of the way, rounded
// up, at least 1.
inline int SegmentsPerRateHalving(int slowdown, int stop) {
  return std::max(1, (stop - slowdown + 7) / 8);
}
inline uint64_t DelayedWriteRate(uint64_t configured_rate, int slowdown,
                                 int stop, int level0) {
  const int halvings = std::clamp(
      (level0 - slowdown) / SegmentsPerRateHalving(slowdown, stop), 0, 7);
  return std::max<uint64_t>(1, configured_rate >> halvings);
}

class WriteDelay {
 public:
  // Shorter sleeps are not worth a wakeup: the debt carries over instead.
  static constexpr uint64_t kMinSleepMicros = 1000;

  // Charges a write of `bytes` made at now_micros, at bytes_per_second;
  // returns how long its writer must sleep before writing (0: not yet).
  // REQUIRES: 0 < bytes_per_second <= 2^32.
  uint64_t Charge(uint64_t bytes, uint64_t bytes_per_second,
                  uint64_t now_micros) {
    const uint64_t now_nanos = now_micros * 1000;
    // Time spent below the rate is not saved up for a later burst.
    paid_until_nanos_ = std::max(paid_until_nanos_, now_nanos);
    // Nanoseconds, so that the cost of small writes is not rounded away;
    // in two parts, so that no product overflows.
    constexpr uint64_t kNanosPerSecond = 1'000'000'000;
    paid_until_nanos_ +=
        bytes / bytes_per_second * kNanosPerSecond +
        bytes % bytes_per_second * kNanosPerSecond / bytes_per_second;
    const uint64_t debt_micros = (paid_until_nanos_ - now_nanos) / 1000;
    return debt_micros >= kMinSleepMicros ? debt_micros : 0;
  }

  // The slowdown is over: writes owe nothing any more.
  void Reset() { paid_until_nanos_ = 0; }

 private:
  uint64_t paid_until_nanos_ = 0;  // when the bytes charged are paid for
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_WRITE_DELAY_H_
