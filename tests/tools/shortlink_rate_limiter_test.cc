// RateLimiter: token-bucket arithmetic on a fake clock (no sleeping), the
// Retry-After it computes, independence of keys, the bound on its table,
// and a seeded comparison against a one-line-per-rule model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "tests/testutil/test_util.h"
#include "tools/shortlink/rate_limiter.h"
#include "util/random.h"

namespace shortlink {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using bloomkv::Status;
using Clock = RateLimiter::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

const Clock::time_point kT0 = Clock::time_point() + std::chrono::hours(1);

RateLimit Limit(double rate, double burst) {
  RateLimit l;
  l.rate_per_second = rate;
  l.burst = burst;
  return l;
}

TEST(RateLimitTest, ParsesRatesPerSecondMinuteAndHour) {
  struct Case {
    const char* spec;
    double rate;
    double burst;
  };
  for (const Case& c : {Case{"10/s", 10, 10}, Case{"600/m", 10, 10},
                        Case{"2.5/s", 2.5, 3}, Case{"1/m", 1.0 / 60, 1},
                        Case{"3600/h", 1, 1}, Case{"0.5/s", 0.5, 1}}) {
    RateLimit l;
    ASSERT_TRUE(ParseRateLimit(c.spec, &l).ok()) << c.spec;
    EXPECT_DOUBLE_EQ(c.rate, l.rate_per_second) << c.spec;
    EXPECT_DOUBLE_EQ(c.burst, l.burst) << c.spec;
  }
  for (const char* bad :
       {"", "10", "/s", "10/", "10/x", "10/sec", "0/s", "-1/s", "abc/s",
        "inf/s", "nan/s", "1e999/s", "10 /s", "10/s/s"}) {
    RateLimit l;
    EXPECT_TRUE(ParseRateLimit(bad, &l).IsInvalidArgument()) << bad;
  }
}

TEST(RateLimiterTest, BurstThenRefusedUntilTheBucketRefills) {
  RateLimiter limiter(Limit(2, 4));
  int64_t retry = 0;
  for (int i = 0; i < 4; i++) EXPECT_TRUE(limiter.Allow("k", kT0, &retry));
  ASSERT_FALSE(limiter.Allow("k", kT0, &retry));
  EXPECT_EQ(1, retry);  // half a second, rounded up to whole seconds
  // Refused requests take nothing: half a second later one token is back.
  EXPECT_TRUE(limiter.Allow("k", kT0 + milliseconds(500), &retry));
  EXPECT_FALSE(limiter.Allow("k", kT0 + milliseconds(500), &retry));
  // A long pause refills only up to the burst.
  const auto later = kT0 + std::chrono::hours(1);
  for (int i = 0; i < 4; i++) EXPECT_TRUE(limiter.Allow("k", later, &retry));
  EXPECT_FALSE(limiter.Allow("k", later, &retry));
}

TEST(RateLimiterTest, RetryAfterIsTheWholeSecondsUntilTheNextToken) {
  RateLimiter limiter(Limit(1.0 / 60, 1));  // 1/m
  int64_t retry = 0;
  EXPECT_TRUE(limiter.Allow("k", kT0, &retry));
  EXPECT_FALSE(limiter.Allow("k", kT0, &retry));
  EXPECT_EQ(60, retry);
  EXPECT_FALSE(limiter.Allow("k", kT0 + seconds(30), &retry));
  EXPECT_EQ(30, retry);
  EXPECT_FALSE(limiter.Allow("k", kT0 + milliseconds(59'500), &retry));
  EXPECT_EQ(1, retry);
  EXPECT_TRUE(limiter.Allow("k", kT0 + seconds(60), &retry));
}

TEST(RateLimiterTest, KeysHaveIndependentBuckets) {
  RateLimiter limiter(Limit(1, 2));
  int64_t retry = 0;
  EXPECT_TRUE(limiter.Allow("a", kT0, &retry));
  EXPECT_TRUE(limiter.Allow("a", kT0, &retry));
  EXPECT_FALSE(limiter.Allow("a", kT0, &retry));
  EXPECT_TRUE(limiter.Allow("b", kT0, &retry));
  EXPECT_TRUE(limiter.Allow("b", kT0, &retry));
  EXPECT_FALSE(limiter.Allow("b", kT0, &retry));
  EXPECT_FALSE(limiter.Allow("a", kT0, &retry));
}

TEST(RateLimiterTest, TableStaysWithinItsBound) {
  constexpr size_t kMax = 64;
  RateLimiter limiter(Limit(1, 1), kMax);
  int64_t retry = 0;
  for (int i = 0; i < 10'000; i++) {
    limiter.Allow(
        "10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256), kT0,
        &retry);
    ASSERT_LE(limiter.size(), kMax);
  }
  EXPECT_GE(limiter.size(), kMax / 2);  // the bound is used, not undercut
}

TEST(RateLimiterTest, IdleBucketsThatRefilledAreForgotten) {
  RateLimiter limiter(Limit(1, 1), 1024);
  int64_t retry = 0;
  for (int i = 0; i < 100; i++) {
    EXPECT_TRUE(limiter.Allow("ip" + std::to_string(i), kT0, &retry));
  }
  EXPECT_EQ(100u, limiter.size());
  // A second later every bucket is full again: the first new key in each
  // shard sweeps that shard's old buckets out.
  const auto later = kT0 + seconds(1);
  for (int i = 0; i < 100; i++) {
    EXPECT_TRUE(limiter.Allow("new" + std::to_string(i), later, &retry));
  }
  EXPECT_EQ(100u, limiter.size());
}

// Against a model with the same arithmetic and no table bound: with room
// for every key, the limiter must decide every request the same way.
TEST(RateLimiterTest, MatchesTheTokenBucketModel) {
  for (uint64_t seed : bloomkv::test::TestSeeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    bloomkv::Random rnd(seed);
    const double rate = 0.5 + static_cast<double>(rnd.Uniform(40)) / 4;
    const double burst = 1 + static_cast<double>(rnd.Uniform(8));
    RateLimiter limiter(Limit(rate, burst), 1024);
    struct Model {
      double tokens;
      Clock::time_point at;
    };
    std::map<std::string, Model> model;
    auto now = kT0;
    for (int i = 0; i < 5'000; i++) {
      now += milliseconds(rnd.Uniform(300));
      const std::string key = "k" + std::to_string(rnd.Uniform(20));
      auto [it, fresh] = model.try_emplace(key, Model{burst, now});
      Model& m = it->second;
      m.tokens = std::min(
          burst,
          m.tokens + std::chrono::duration<double>(now - m.at).count() * rate);
      m.at = now;
      const bool expect = m.tokens >= 1;
      if (expect) m.tokens -= 1;
      int64_t retry = 0;
      ASSERT_EQ(expect, limiter.Allow(key, now, &retry)) << "request " << i;
      if (!expect) {
        ASSERT_EQ(std::max<int64_t>(1, static_cast<int64_t>(
                                           std::ceil((1 - m.tokens) / rate))),
                  retry);
      }
    }
  }
}

}  // namespace
}  // namespace shortlink
