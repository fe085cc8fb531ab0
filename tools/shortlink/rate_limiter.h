// RateLimiter: token buckets keyed by a string (an API key's name, a client
// address), for shortlinkd's --rate-limit-* flags.
//
// Each key owns a bucket of `burst` tokens that refills at `rate_per_second`;
// a request takes one token or, if none is left, is refused with the time
// until one will be there. A bucket that has refilled completely carries no
// information (a new bucket would be the same), so it may be forgotten.
//
// Memory is bounded: at most `max_entries` buckets are kept. Buckets are
// kept in least-recently-used order; when a new key arrives at the bound the
// least recently used bucket is dropped, and any bucket found full at the
// LRU end is dropped whenever a key is added, so a quiet table shrinks back
// to the keys that are actually busy. An entry costs about 140 bytes for an
// IPv4 address and 170 for an IPv6 /64 (measured with mallinfo2), so the
// default 65,536 entries stay under 11 MiB.
// Dropping a bucket that was not full is generous to that key, never unfair
// to another one.
//
// Time is passed in by the caller (a steady clock in the service, a fake
// one in tests), so refill is testable without sleeping.
//
// Thread-safety: thread-safe. Keys are spread over shards with a mutex each,
// so concurrent requests from different clients rarely contend.
#ifndef BLOOMKV_TOOLS_SHORTLINK_RATE_LIMITER_H_
#define BLOOMKV_TOOLS_SHORTLINK_RATE_LIMITER_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>

#include "bloomkv/status.h"
#include "util/mutex.h"

namespace shortlink {

struct RateLimit {
  double rate_per_second = 0;  // 0: no limit
  double burst = 1;            // bucket size, >= 1

  bool enabled() const { return rate_per_second > 0; }
};

// Parses "R/s", "R/m" or "R/h" (R a positive decimal number, e.g. "2.5/s",
// "600/m") into tokens per second. Burst defaults to max(1, ceil(R/s)).
[[nodiscard]] bloomkv::Status ParseRateLimit(std::string_view spec,
                                             RateLimit* out);

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  static constexpr size_t kDefaultMaxEntries = 65'536;
  static constexpr size_t kShards = 8;

  // Keeps at most max_entries buckets (rounded down to a multiple of
  // kShards). REQUIRES: limit.enabled(), limit.burst >= 1,
  // max_entries >= kShards.
  explicit RateLimiter(RateLimit limit,
                       size_t max_entries = kDefaultMaxEntries);
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  // Takes a token from `key`'s bucket at time `now`. If there is none,
  // returns false and sets *retry_after_seconds to the whole seconds
  // (>= 1) until there will be one.
  bool Allow(std::string_view key, Clock::time_point now,
             int64_t* retry_after_seconds);

  // Buckets currently kept (at most max_entries).
  size_t size() const;

 private:
  struct Bucket {
    std::string key;
    double tokens;
    Clock::time_point updated;
  };
  struct Shard {
    mutable bloomkv::Mutex mu;
    // Most recently used first.
    std::list<Bucket> lru GUARDED_BY(mu);
    // Views into the keys held by `lru`'s nodes, which never move.
    std::unordered_map<std::string_view, std::list<Bucket>::iterator> index
        GUARDED_BY(mu);
  };

  // Tokens in `b` at `now`, capped at the burst.
  double Refilled(const Bucket& b, Clock::time_point now) const;

  const RateLimit limit_;
  const size_t max_per_shard_;
  std::array<Shard, kShards> shards_;
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_RATE_LIMITER_H_
