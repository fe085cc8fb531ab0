// RateLimiter; see rate_limiter.h.
#include "tools/shortlink/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

namespace shortlink {

using bloomkv::Status;

Status ParseRateLimit(std::string_view spec, RateLimit* out) {
  const size_t slash = spec.find('/');
  if (slash == std::string_view::npos || slash + 2 != spec.size()) {
    return Status::InvalidArgument("rate limit must be R/s, R/m or R/h", spec);
  }
  double per = 0;
  switch (spec.back()) {
    case 's':
      per = 1;
      break;
    case 'm':
      per = 60;
      break;
    case 'h':
      per = 3600;
      break;
    default:
      return Status::InvalidArgument("rate limit unit must be s, m or h", spec);
  }
  const std::string number(spec.substr(0, slash));
  char* end = nullptr;
  const double r = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() ||
      !std::isfinite(r) || r <= 0) {
    return Status::InvalidArgument("rate limit must be a positive number",
                                   spec);
  }
  out->rate_per_second = r / per;
  out->burst = std::max(1.0, std::ceil(out->rate_per_second));
  return Status::OK();
}

RateLimiter::RateLimiter(RateLimit limit, size_t max_entries)
    : limit_(limit),
      max_per_shard_(std::max<size_t>(1, max_entries / kShards)) {}

double RateLimiter::Refilled(const Bucket& b, Clock::time_point now) const {
  const double elapsed = std::chrono::duration<double>(now - b.updated).count();
  return std::min(limit_.burst,
                  b.tokens + std::max(0.0, elapsed) * limit_.rate_per_second);
}

bool RateLimiter::Allow(std::string_view key, Clock::time_point now,
                        int64_t* retry_after_seconds) {
  Shard& shard = shards_[std::hash<std::string_view>()(key) % kShards];
  bloomkv::MutexLock lock(&shard.mu);
  auto it = shard.index.find(key);
  if (it == shard.index.end()) {
    // Forget buckets that have refilled, then make room for this one.
    while (!shard.lru.empty() &&
           (shard.lru.size() >= max_per_shard_ ||
            Refilled(shard.lru.back(), now) >= limit_.burst)) {
      shard.index.erase(shard.lru.back().key);
      shard.lru.pop_back();
    }
    shard.lru.push_front(Bucket{std::string(key), limit_.burst, now});
    it = shard.index.emplace(shard.lru.front().key, shard.lru.begin()).first;
  } else {
    shard.lru.splice(shard.lru.begin(), shard.lru, it->second);
  }
  Bucket& b = *it->second;
  b.tokens = Refilled(b, now);
  b.updated = std::max(b.updated, now);
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return true;
  }
  const double wait = (1 - b.tokens) / limit_.rate_per_second;
  *retry_after_seconds = std::max<int64_t>(1, std::ceil(wait));
  return false;
}

size_t RateLimiter::size() const {
  size_t n = 0;
  for (const Shard& shard : shards_) {
    bloomkv::MutexLock lock(&shard.mu);
    n += shard.lru.size();
  }
  return n;
}

}  // namespace shortlink
