// Service metrics and their Prometheus rendering; see metrics.h.
#include "tools/shortlink/metrics.h"

#include <cinttypes>
#include <cstdio>

namespace shortlink {

const char* RouteName(Route route) {
  switch (route) {
    case Route::kRedirect:
      return "redirect";
    case Route::kCreate:
      return "create";
    case Route::kInfo:
      return "info";
    case Route::kDelete:
      return "delete";
    case Route::kList:
      return "list";
    case Route::kPatch:
      return "patch";
    case Route::kHealthz:
      return "healthz";
    case Route::kMetrics:
      return "metrics";
    case Route::kAdmin:
      return "admin";
    case Route::kPage:
      return "page";
    case Route::kOpenapi:
      return "openapi";
    case Route::kOther:
    case Route::kCount:
      break;
  }
  return "other";
}

Route ClassifyRoute(std::string_view method, std::string_view path) {
  if (path == "/healthz") return Route::kHealthz;
  if (path == "/metrics") return Route::kMetrics;
  if (path.starts_with("/admin/")) return Route::kAdmin;
  if (path == "/" || path == "/app.js" || path == "/app.css") {
    return Route::kPage;
  }
  if (path == "/openapi.json") return Route::kOpenapi;
  if (path == "/api/links") {
    if (method == "GET") return Route::kList;
    return method == "POST" ? Route::kCreate : Route::kOther;
  }
  if (path.starts_with("/api/links/")) {
    if (method == "GET") return Route::kInfo;
    if (method == "DELETE") return Route::kDelete;
    if (method == "PATCH") return Route::kPatch;
    return Route::kOther;
  }
  if (method == "GET" && path.size() > 1 &&
      path.find('/', 1) == std::string_view::npos) {
    return Route::kRedirect;
  }
  return Route::kOther;
}

namespace {

const char* LookupResultName(int i) {
  switch (static_cast<LookupResult>(i)) {
    case LookupResult::kFound:
      return "found";
    case LookupResult::kNotFound:
      return "not_found";
    case LookupResult::kExpired:
      return "expired";
    case LookupResult::kMalformed:
      return "malformed";
    case LookupResult::kCount:
      break;
  }
  return "unknown";
}

void Appendf(std::string* out, const char* format, auto... args) {
  char buf[256];
  const int n = std::snprintf(buf, sizeof(buf), format, args...);
  if (n > 0) out->append(buf, std::min<size_t>(n, sizeof(buf) - 1));
}

void Header(std::string* out, const char* name, const char* type,
            const char* help) {
  Appendf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void Counter(std::string* out, const char* name, const char* help,
             uint64_t value) {
  Header(out, name, "counter", help);
  Appendf(out, "%s %" PRIu64 "\n", name, value);
}

}  // namespace

void ServiceMetrics::RecordRequest(Route route, int status, double seconds) {
  PerRoute& r = routes_[static_cast<int>(route)];
  r.by_status[(status >= 100 && status < kStatuses) ? status : 0].fetch_add(
      1, std::memory_order_relaxed);
  if (seconds < 0) return;  // answered before routing: duration unknown
  size_t b = 0;
  while (b < kLatencyBuckets.size() && seconds > kLatencyBuckets[b]) b++;
  r.buckets[b].fetch_add(1, std::memory_order_relaxed);
  r.count.fetch_add(1, std::memory_order_relaxed);
  const double nanos = seconds > 0 ? seconds * 1e9 : 0;
  r.sum_nanos.fetch_add(static_cast<uint64_t>(nanos),
                        std::memory_order_relaxed);
}

void ServiceMetrics::RecordLookup(LookupResult result) {
  lookups_[static_cast<int>(result)].fetch_add(1, std::memory_order_relaxed);
}

uint64_t ServiceMetrics::requests(Route route, int status) const {
  if (status < 100 || status >= kStatuses) status = 0;
  return routes_[static_cast<int>(route)].by_status[status].load(
      std::memory_order_relaxed);
}

std::string ServiceMetrics::Render(const bloomkv::DbStats& stats) const {
  std::string out;
  out.reserve(8192);

  Header(&out, "shortlinkd_http_requests_total", "counter",
         "HTTP requests answered, by route and status.");
  for (int route = 0; route < kRoutes; route++) {
    for (int status = 0; status < kStatuses; status++) {
      const uint64_t n =
          routes_[route].by_status[status].load(std::memory_order_relaxed);
      if (n == 0) continue;
      Appendf(&out,
              "shortlinkd_http_requests_total{route=\"%s\",status=\"%d\"} "
              "%" PRIu64 "\n",
              RouteName(static_cast<Route>(route)), status, n);
    }
  }

  Header(&out, "shortlinkd_http_request_duration_seconds", "histogram",
         "Time from routing a request to its response, by route.");
  for (int route = 0; route < kRoutes; route++) {
    const PerRoute& r = routes_[route];
    const uint64_t count = r.count.load(std::memory_order_relaxed);
    if (count == 0) continue;
    const char* name = RouteName(static_cast<Route>(route));
    uint64_t cumulative = 0;
    for (int b = 0; b < kBuckets; b++) {
      cumulative += r.buckets[b].load(std::memory_order_relaxed);
      if (b < static_cast<int>(kLatencyBuckets.size())) {
        Appendf(&out,
                "shortlinkd_http_request_duration_seconds_bucket{route=\"%s\","
                "le=\"%g\"} %" PRIu64 "\n",
                name, kLatencyBuckets[b], cumulative);
      } else {
        Appendf(&out,
                "shortlinkd_http_request_duration_seconds_bucket{route=\"%s\","
                "le=\"+Inf\"} %" PRIu64 "\n",
                name, cumulative);
      }
    }
    Appendf(&out,
            "shortlinkd_http_request_duration_seconds_sum{route=\"%s\"} %.9f\n",
            name, r.sum_nanos.load(std::memory_order_relaxed) / 1e9);
    Appendf(&out,
            "shortlinkd_http_request_duration_seconds_count{route=\"%s\"} "
            "%" PRIu64 "\n",
            name, cumulative);
  }

  Header(&out, "shortlinkd_lookups_total", "counter",
         "Short-code lookups by redirects and link queries, by result.");
  for (int i = 0; i < static_cast<int>(LookupResult::kCount); i++) {
    Appendf(&out, "shortlinkd_lookups_total{result=\"%s\"} %" PRIu64 "\n",
            LookupResultName(i), lookups_[i].load(std::memory_order_relaxed));
  }
  Counter(&out, "shortlinkd_links_created_total", "New links stored.",
          links_created_.load(std::memory_order_relaxed));

  Counter(&out, "bloomkv_gets_total", "Point lookups in the store.",
          stats.gets);
  Counter(&out, "bloomkv_memtable_hits_total",
          "Lookups answered by a memtable.", stats.memtable_hits);
  Counter(&out, "bloomkv_segments_consulted_total",
          "Segments whose key range covered a looked-up key.",
          stats.segments_consulted);
  Counter(&out, "bloomkv_filter_negatives_total",
          "Segments skipped because their bloom filter ruled the key out "
          "(no IO).",
          stats.filter_negatives);
  Counter(&out, "bloomkv_filter_positives_total",
          "Segments whose filter said maybe (or that have no filter).",
          stats.filter_positives);
  Counter(&out, "bloomkv_filter_false_positives_total",
          "Filter positives where the segment did not hold the key.",
          stats.filter_false_positives);
  Counter(&out, "bloomkv_data_blocks_read_total",
          "Data blocks read from segment files.", stats.data_blocks_read);
  Counter(&out, "bloomkv_meta_blocks_read_total",
          "Index and filter blocks read from segment files (segments past "
          "the filter and index memory limit).",
          stats.meta_blocks_read);
  Counter(&out, "bloomkv_bytes_read_total",
          "Bytes of blocks read from segment files.", stats.bytes_read);
  Counter(&out, "bloomkv_block_cache_hits_total", "Block cache hits.",
          stats.block_cache_hits);
  Counter(&out, "bloomkv_block_cache_misses_total", "Block cache misses.",
          stats.block_cache_misses);
  Counter(&out, "bloomkv_flushes_total", "Memtables written to segments.",
          stats.flushes);
  Counter(&out, "bloomkv_compactions_total", "Compactions run.",
          stats.compactions);
  Counter(&out, "bloomkv_compaction_filter_drops_total",
          "Entries dropped by the expiry compaction filter.",
          stats.compaction_filter_drops);
  return out;
}

}  // namespace shortlink
