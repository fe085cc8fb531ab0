// The short-link service's key layout and value encodings in bloomkv.
//
// Keys (docs/shortlinkd.md has the diagram):
//   "c:" + code            -> LinkRecord     the authoritative code -> URL map
//   "u:" + UrlHash(nurl)   -> IndexEntries   normalized URL -> codes, for dedup
//   "t:" + be64(~created) + code -> ListEntry  creation order, for listing
//   "s:" + code            -> ClickRecord    click counts of the link
//   "m:list-index"         -> [u8 version]   the "t:" keys are complete
// Code keys are kept short (2 + 7 bytes) because they are what every
// redirect looks up and what the segment filters guard.
//
// LinkRecord value (never change: on disk; a new layout gets a new version):
//   [u8 version = 2][fixed64 created][fixed64 expires_at][fixed64 incarnation]
//   [url bytes ...]
// Version 1, written before incarnations existed, is still read (as
// incarnation 0) and rewritten as version 2 only by a PATCH:
//   [u8 version = 1][fixed64 created][fixed64 expires_at][url bytes ...]
// IndexEntries value:
//   [u8 version = 1] then, one or more times,
//   [fixed64 expires_at][u8 code length][code bytes]
// ListEntry value:
//   [u8 version = 1][fixed64 expires_at]
// ClickRecord value:
//   [u8 version = 2][fixed64 link_created][fixed64 link_incarnation]
//   [fixed64 expires_at][fixed64 total][fixed64 last_access][u8 n] then n
//   times [fixed32 day][fixed64 count]     days ascending, n <= kClickDays
// Version 1 lacks link_incarnation (read as 0):
//   [u8 version = 1][fixed64 link_created][fixed64 expires_at]
//   [fixed64 total][fixed64 last_access][u8 n] ...
// fixed64/fixed32 are little-endian; be64 is big-endian (so newer links sort
// first); times are Unix seconds as int64 (two's complement); expires_at 0
// means "never"; a day is a count of UTC days since 1970-01-01. The index,
// the list entry and the click record repeat their link's expiry so the
// compaction filter can drop them without reading other keys.
//
// A link is told from every other link of its code by its creation time and
// its incarnation, a number the store gives each new link (unique within a
// process, randomly seeded at open; see LinkStore). The creation time alone
// is not enough: a link removed and created again under the same code in
// the same second would have the same one, and a click counted by a
// redirect that read the old link would go to the new one. Clicks (in
// memory and in a click record) name both, and count only for the link
// that has both: a record left behind by a link that is gone counts for
// nothing.
//
// Thread-safety: stateless functions; values are plain structs.
#ifndef BLOOMKV_TOOLS_SHORTLINK_LINK_RECORD_H_
#define BLOOMKV_TOOLS_SHORTLINK_LINK_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace shortlink {

// Never change: on disk.
constexpr std::string_view kCodeKeyPrefix = "c:";
constexpr std::string_view kIndexKeyPrefix = "u:";
constexpr std::string_view kListKeyPrefix = "t:";
constexpr std::string_view kClickKeyPrefix = "s:";
constexpr std::string_view kListIndexMarkerKey = "m:list-index";
constexpr uint8_t kLinkRecordVersion1 = 1;
constexpr uint8_t kLinkRecordVersion2 = 2;
constexpr uint8_t kIndexEntriesVersion1 = 1;
constexpr uint8_t kListEntryVersion1 = 1;
constexpr uint8_t kClickRecordVersion1 = 1;
constexpr uint8_t kClickRecordVersion2 = 2;
// The marker's value: bump it when the "t:" keys change, so that a store
// rebuilds them at open.
constexpr uint8_t kListIndexVersion1 = 1;
constexpr size_t kLinkRecordV1HeaderSize = 1 + 8 + 8;
constexpr size_t kLinkRecordHeaderSize = 1 + 8 + 8 + 8;  // version 2
constexpr size_t kUrlHashSize = 16;
constexpr size_t kListEntrySize = 1 + 8;
constexpr size_t kListKeyTimeSize = 8;
constexpr size_t kClickRecordV1HeaderSize = 1 + 8 + 8 + 8 + 8 + 1;
constexpr size_t kClickRecordHeaderSize = 1 + 8 + 8 + 8 + 8 + 8 + 1;  // v2
constexpr size_t kClickDaySize = 4 + 8;

// Days of per-day click counts kept: today and the 29 before it (UTC).
// Not on disk: older days are dropped whenever a record is rewritten.
constexpr int kClickDays = 30;
constexpr int64_t kSecondsPerDay = 86400;

struct LinkRecord {
  std::string url;           // as submitted; what redirects send
  int64_t created = 0;       // Unix seconds
  int64_t expires_at = 0;    // Unix seconds; 0 = never
  uint64_t incarnation = 0;  // with `created`, names this link; 0: version 1
};

// True if a link expiring at `expires_at` is dead at time `now`.
inline bool IsExpired(int64_t expires_at, int64_t now) {
  return expires_at != 0 && now >= expires_at;
}

struct IndexEntry {
  std::string code;
  int64_t expires_at = 0;
};

struct DayCount {
  int32_t day = 0;  // UTC days since 1970-01-01
  uint64_t count = 0;
};

struct ClickRecord {
  int64_t link_created = 0;       // the `created` of the link counted
  uint64_t link_incarnation = 0;  // and its `incarnation`
  int64_t expires_at = 0;         // the link's, for the compaction filter
  uint64_t total = 0;
  int64_t last_access = 0;     // Unix seconds; 0 = never clicked
  std::vector<DayCount> days;  // ascending, at most kClickDays
};

// True if clicks recorded for the link created at `created` with
// `incarnation` are `link`'s, not those of another link of its code.
inline bool IsSameLink(const LinkRecord& link, int64_t created,
                       uint64_t incarnation) {
  return link.created == created && link.incarnation == incarnation;
}

// The UTC day of Unix time `t`.
inline int32_t DayOf(int64_t t) {
  return static_cast<int32_t>(
      t >= 0 ? t / kSecondsPerDay : (t - kSecondsPerDay + 1) / kSecondsPerDay);
}

std::string CodeKey(std::string_view code);
std::string IndexKey(std::string_view url_hash);
std::string ClickKey(std::string_view code);
// Keys of newer links sort first; links created in the same second sort by
// code.
std::string ListKey(int64_t created, std::string_view code);

// XXH3-128 of the normalized URL, as 16 bytes (high half first, big-endian).
std::string UrlHash(std::string_view normalized_url);

// Writes version 2.
void EncodeLinkRecord(const LinkRecord& record, std::string* out);
// Corruption (naming `code`) if `value` is not a version-1 or version-2
// record with a non-empty URL.
bloomkv::Status DecodeLinkRecord(std::string_view code,
                                 const bloomkv::Slice& value,
                                 LinkRecord* record);

// REQUIRES: entries non-empty, every code 1..255 bytes.
void EncodeIndexEntries(const std::vector<IndexEntry>& entries,
                        std::string* out);
// Corruption if `value` is not a version-1 list of at least one entry.
bloomkv::Status DecodeIndexEntries(const bloomkv::Slice& value,
                                   std::vector<IndexEntry>* entries);

std::string EncodeListEntry(int64_t expires_at);
// Corruption unless `value` is a version-1 list entry.
bloomkv::Status DecodeListEntry(const bloomkv::Slice& value,
                                int64_t* expires_at);
// The code in a "t:" key; false if `key` is not one.
bool CodeOfListKey(std::string_view key, std::string_view* code);

// Writes version 2. REQUIRES: record.days ascending, at most kClickDays of
// them.
void EncodeClickRecord(const ClickRecord& record, std::string* out);
// Corruption (naming `code`) unless `value` is a version-1 or version-2
// click record.
bloomkv::Status DecodeClickRecord(std::string_view code,
                                  const bloomkv::Slice& value,
                                  ClickRecord* record);

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_LINK_RECORD_H_
