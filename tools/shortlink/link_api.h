// The link API's JSON answers: a link with its clicks, the listing, PATCH.
//
//   GET   /api/links/{code}                 link + clicks (total, daily)
//   GET   /api/links?cursor=C&limit=N       newest first, paginated (admin)
//   PATCH /api/links/{code}                 new url and/or ttl (admin)
// Service::Route checks the admin token and calls these; each returns the
// status and JSON body to send (errors as {"error": "..."}).
//
// Cursors are the hex of the last listed link's list key (after "t:"),
// so a page continues exactly where the previous one ended whatever was
// created or removed in between; a malformed cursor is answered 400.
//
// Thread-safety: stateless functions; thread-safe as LinkStore is.
#ifndef BLOOMKV_TOOLS_SHORTLINK_LINK_API_H_
#define BLOOMKV_TOOLS_SHORTLINK_LINK_API_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tools/shortlink/link_record.h"
#include "tools/shortlink/link_store.h"

namespace shortlink {

// Links per listing page: the default, and the largest accepted.
constexpr size_t kDefaultListLimit = 50;
constexpr size_t kMaxListLimit = 1000;

struct ApiReply {
  int status = 200;
  nlohmann::json body;
};

// {"code", "short_url", "url", "created", "expires_at"?}
nlohmann::json LinkJson(const std::string& base_url, std::string_view code,
                        const LinkRecord& record);
// {"total", "last_access" (null if never), "daily"?: [{"day", "count"}]}
nlohmann::json ClicksJson(const ClickRecord& clicks, bool with_daily);
// "YYYY-MM-DD" of a day number (UTC days since 1970-01-01).
std::string FormatDay(int32_t day);

// True if `value` is an integer ttl_seconds in 1..kMaxTtlSeconds.
bool ParseTtlSeconds(const nlohmann::json& value, int64_t* ttl_seconds);

std::string EncodeListCursor(std::string_view list_key_suffix);
// False unless `cursor` is the hex of a time and a well-formed code.
bool DecodeListCursor(std::string_view cursor, std::string* list_key_suffix);

// GET /api/links/{code} for a live link.
ApiReply LinkInfo(LinkStore* store, const std::string& base_url,
                  const std::string& code, const LinkRecord& record);
// GET /api/links?<query>
ApiReply ListLinks(LinkStore* store, const std::string& base_url,
                   std::string_view query);
// PATCH /api/links/{code} with `body`.
ApiReply PatchLink(LinkStore* store, const std::string& base_url,
                   const std::string& code, const std::string& body);

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_LINK_API_H_
