// The link API's handlers; see link_api.h.
#include "tools/shortlink/link_api.h"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include "tools/shortlink/code.h"

namespace shortlink {

using bloomkv::Status;
using nlohmann::json;

namespace {

ApiReply Error(int status, std::string_view message) {
  return ApiReply{status, json{{"error", std::string(message)}}};
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads "limit" and "cursor" from a raw query string; other parameters are
// ignored. Returns an error reply, or status 0 if the query is acceptable.
ApiReply ParseListQuery(std::string_view query, size_t* limit,
                        std::string* after) {
  *limit = kDefaultListLimit;
  after->clear();
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    const size_t eq = param.find('=');
    const std::string_view name = param.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? "" : param.substr(eq + 1);
    if (name == "limit") {
      size_t n = 0;
      const auto [end, ec] =
          std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size() || n < 1 ||
          n > kMaxListLimit) {
        return Error(400, "\"limit\" must be an integer from 1 to 1000");
      }
      *limit = n;
    } else if (name == "cursor") {
      if (!DecodeListCursor(value, after)) {
        return Error(400, "malformed cursor");
      }
    }
  }
  return ApiReply{0, {}};
}

}  // namespace

json LinkJson(const std::string& base_url, std::string_view code,
              const LinkRecord& record) {
  json j{{"code", code},
         {"short_url", base_url + "/" + std::string(code)},
         {"url", record.url},
         {"created", record.created}};
  if (record.expires_at != 0) j["expires_at"] = record.expires_at;
  return j;
}

json ClicksJson(const ClickRecord& clicks, bool with_daily) {
  json j{{"total", clicks.total}, {"last_access", nullptr}};
  if (clicks.last_access != 0) j["last_access"] = clicks.last_access;
  if (with_daily) {
    json daily = json::array();
    for (const DayCount& d : clicks.days) {
      daily.push_back(json{{"day", FormatDay(d.day)}, {"count", d.count}});
    }
    j["daily"] = std::move(daily);
  }
  return j;
}

std::string FormatDay(int32_t day) {
  const std::chrono::year_month_day ymd{
      std::chrono::sys_days{std::chrono::days{day}}};
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u", int{ymd.year()},
                unsigned{ymd.month()}, unsigned{ymd.day()});
  return buf;
}

bool ParseTtlSeconds(const json& value, int64_t* ttl_seconds) {
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    if (v < 1 || v > static_cast<uint64_t>(kMaxTtlSeconds)) return false;
    *ttl_seconds = static_cast<int64_t>(v);
    return true;
  }
  if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (v < 1 || v > kMaxTtlSeconds) return false;
    *ttl_seconds = v;
    return true;
  }
  return false;
}

std::string EncodeListCursor(std::string_view list_key_suffix) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * list_key_suffix.size());
  for (const char c : list_key_suffix) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xf]);
  }
  return out;
}

bool DecodeListCursor(std::string_view cursor, std::string* list_key_suffix) {
  list_key_suffix->clear();
  if (cursor.size() % 2 != 0) return false;
  for (size_t i = 0; i < cursor.size(); i += 2) {
    const int hi = HexDigit(cursor[i]), lo = HexDigit(cursor[i + 1]);
    if (hi < 0 || lo < 0) return false;
    list_key_suffix->push_back(static_cast<char>(hi << 4 | lo));
  }
  return list_key_suffix->size() > kListKeyTimeSize &&
         IsWellFormedCode(
             std::string_view(*list_key_suffix).substr(kListKeyTimeSize));
}

ApiReply LinkInfo(LinkStore* store, const std::string& base_url,
                  const std::string& code, const LinkRecord& record) {
  ClickRecord clicks;
  const Status s = store->Clicks(code, record, &clicks);
  if (!s.ok()) return Error(500, "store error");
  json j = LinkJson(base_url, code, record);
  j["clicks"] = ClicksJson(clicks, /*with_daily=*/true);
  return ApiReply{200, std::move(j)};
}

ApiReply ListLinks(LinkStore* store, const std::string& base_url,
                   std::string_view query) {
  size_t limit;
  std::string after;
  ApiReply refused = ParseListQuery(query, &limit, &after);
  if (refused.status != 0) return refused;
  std::vector<ListedLink> links;
  std::string next;
  const Status s = store->List(after, limit, &links, &next);
  if (!s.ok()) return Error(500, "store error");
  json items = json::array();
  for (const ListedLink& link : links) {
    json j = LinkJson(base_url, link.code, link.record);
    j["clicks"] = ClicksJson(link.clicks, /*with_daily=*/false);
    items.push_back(std::move(j));
  }
  json body{{"links", std::move(items)}, {"next_cursor", nullptr}};
  if (!next.empty()) body["next_cursor"] = EncodeListCursor(next);
  return ApiReply{200, std::move(body)};
}

ApiReply PatchLink(LinkStore* store, const std::string& base_url,
                   const std::string& code, const std::string& body) {
  if (!IsWellFormedCode(code)) return Error(404, "no such link");
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error(400, "body is not valid JSON");
  if (!j.is_object()) return Error(400, "body must be a JSON object");
  LinkPatch patch;
  const auto u = j.find("url");
  if (u != j.end()) {
    if (!u->is_string()) return Error(400, "\"url\" must be a string");
    patch.url = u->get<std::string>();
  }
  const auto t = j.find("ttl_seconds");
  if (t != j.end()) {
    int64_t ttl = 0;  // null: no expiry
    if (!t->is_null() && !ParseTtlSeconds(*t, &ttl)) {
      return Error(400,
                   "\"ttl_seconds\" must be null or an integer from 1 to "
                   "315360000");
    }
    patch.ttl_seconds = ttl;
  }
  if (!patch.url && !patch.ttl_seconds) {
    return Error(400, "body must set \"url\" or \"ttl_seconds\"");
  }
  PatchOutcome outcome;
  LinkRecord record;
  const Status s = store->Patch(code, patch, &outcome, &record);
  if (s.IsNotFound()) return Error(404, "no such link");
  if (s.IsInvalidArgument()) return Error(400, s.message());
  if (!s.ok()) return Error(500, "store error");
  if (outcome == PatchOutcome::kExpired) return Error(410, "link expired");
  return ApiReply{200, LinkJson(base_url, code, record)};
}

}  // namespace shortlink
