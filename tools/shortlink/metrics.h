// ServiceMetrics: the short-link service's counters, in Prometheus text.
//
// Requests are counted by route and HTTP status, their latencies go into a
// fixed-bucket histogram per route, and lookups are counted by outcome.
// Render() adds the store's bloomkv counters (filter negatives, false
// positives, data blocks and bytes read, ...) as they are at that moment.
//
// Thread-safety: thread-safe; every counter is a relaxed atomic, so
// recording costs no lock on the request path.
#ifndef BLOOMKV_TOOLS_SHORTLINK_METRICS_H_
#define BLOOMKV_TOOLS_SHORTLINK_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "bloomkv/statistics.h"

namespace shortlink {

enum class Route : int {
  kRedirect = 0,  // GET /{code}
  kCreate,        // POST /api/links
  kInfo,          // GET /api/links/{code}
  kDelete,        // DELETE /api/links/{code}
  kList,          // GET /api/links
  kPatch,         // PATCH /api/links/{code}
  kHealthz,
  kMetrics,
  kAdmin,  // /admin/...
  // The web page: GET /, /app.js, /app.css.
  kPage,
  // GET /openapi.json.
  kOpenapi,
  kOther,  // anything else, including unparseable requests
  kCount,
};
const char* RouteName(Route route);
// The route a request belongs to, from its method and path alone.
Route ClassifyRoute(std::string_view method, std::string_view path);

enum class LookupResult : int {
  kFound = 0,
  kNotFound,  // well-formed code, not in the store
  kExpired,
  kMalformed,  // refused without touching the store
  kCount,
};

class ServiceMetrics {
 public:
  // Upper bounds of the latency buckets, in seconds (+Inf is implied).
  static constexpr std::array<double, 14> kLatencyBuckets = {
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
      0.01,    0.025,  0.05,    0.1,    0.25,  0.5,    1.0};

  ServiceMetrics() = default;
  ServiceMetrics(const ServiceMetrics&) = delete;
  ServiceMetrics& operator=(const ServiceMetrics&) = delete;

  // A status outside 100..599 is counted under status="0". A negative
  // `seconds` (duration unknown) counts the request but not its latency.
  void RecordRequest(Route route, int status, double seconds);
  void RecordLookup(LookupResult result);
  void RecordLinkCreated() {
    links_created_.fetch_add(1, std::memory_order_relaxed);
  }

  // Prometheus text exposition format, version 0.0.4.
  std::string Render(const bloomkv::DbStats& stats) const;

  uint64_t requests(Route route, int status) const;

 private:
  static constexpr int kRoutes = static_cast<int>(Route::kCount);
  static constexpr int kStatuses = 600;  // index = status; 0 = out of range
  static constexpr int kBuckets = kLatencyBuckets.size() + 1;  // + +Inf

  struct PerRoute {
    std::array<std::atomic<uint64_t>, kStatuses> by_status{};
    std::array<std::atomic<uint64_t>, kBuckets> buckets{};  // not cumulative
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> sum_nanos{0};
  };

  std::array<PerRoute, kRoutes> routes_{};
  std::array<std::atomic<uint64_t>, static_cast<int>(LookupResult::kCount)>
      lookups_{};
  std::atomic<uint64_t> links_created_{0};
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_METRICS_H_
