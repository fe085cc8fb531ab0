// The short-link service's key layout and value encodings in bloomkv.
//
// Keys (docs/shortlinkd.md has the diagram):
//   "c:" + code            -> LinkRecord     the authoritative code -> URL map
//   "u:" + UrlHash(nurl)   -> IndexEntries   normalized URL -> codes, for dedup
// Code keys are kept short (2 + 7 bytes) because they are what every
// redirect looks up and what the segment filters guard.
//
// LinkRecord value (never change: on disk; a new layout gets a new version):
//   [u8 version = 1][fixed64 created][fixed64 expires_at][url bytes ...]
// IndexEntries value:
//   [u8 version = 1] then, one or more times,
//   [fixed64 expires_at][u8 code length][code bytes]
// fixed64 is little-endian; times are Unix seconds as int64 (two's
// complement); expires_at 0 means "never". The index repeats each link's
// expiry so the compaction filter can drop an index entry whose links have
// all expired without reading other keys.
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
constexpr uint8_t kLinkRecordVersion1 = 1;
constexpr uint8_t kIndexEntriesVersion1 = 1;
constexpr size_t kLinkRecordHeaderSize = 1 + 8 + 8;
constexpr size_t kUrlHashSize = 16;

struct LinkRecord {
  std::string url;         // as submitted; what redirects send
  int64_t created = 0;     // Unix seconds
  int64_t expires_at = 0;  // Unix seconds; 0 = never
};

// True if a link expiring at `expires_at` is dead at time `now`.
inline bool IsExpired(int64_t expires_at, int64_t now) {
  return expires_at != 0 && now >= expires_at;
}

struct IndexEntry {
  std::string code;
  int64_t expires_at = 0;
};

std::string CodeKey(std::string_view code);
std::string IndexKey(std::string_view url_hash);

// XXH3-128 of the normalized URL, as 16 bytes (high half first, big-endian).
std::string UrlHash(std::string_view normalized_url);

void EncodeLinkRecord(const LinkRecord& record, std::string* out);
// Corruption (naming `code`) if `value` is not a version-1 record with a
// non-empty URL.
bloomkv::Status DecodeLinkRecord(std::string_view code,
                                 const bloomkv::Slice& value,
                                 LinkRecord* record);

// REQUIRES: entries non-empty, every code 1..255 bytes.
void EncodeIndexEntries(const std::vector<IndexEntry>& entries,
                        std::string* out);
// Corruption if `value` is not a version-1 list of at least one entry.
bloomkv::Status DecodeIndexEntries(const bloomkv::Slice& value,
                                   std::vector<IndexEntry>* entries);

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_LINK_RECORD_H_
