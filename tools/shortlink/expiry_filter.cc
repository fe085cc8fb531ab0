// The expiry compaction filter; see expiry_filter.h.
#include "tools/shortlink/expiry_filter.h"

#include <string_view>
#include <utility>
#include <vector>

#include "tools/shortlink/link_record.h"

namespace shortlink {

ExpiryFilter::ExpiryFilter(std::function<int64_t()> now)
    : now_(std::move(now)) {}

bool ExpiryFilter::Filter(int /*level*/, const bloomkv::Slice& key,
                          const bloomkv::Slice& value) const {
  const std::string_view k(key.data(), key.size());
  if (k.starts_with(kCodeKeyPrefix)) {
    LinkRecord record;
    if (!DecodeLinkRecord(k.substr(kCodeKeyPrefix.size()), value, &record)
             .ok()) {
      return false;
    }
    return IsExpired(record.expires_at, now_());
  }
  if (k.starts_with(kIndexKeyPrefix)) {
    std::vector<IndexEntry> entries;
    if (!DecodeIndexEntries(value, &entries).ok()) return false;
    const int64_t now = now_();
    for (const IndexEntry& e : entries) {
      if (!IsExpired(e.expires_at, now)) return false;
    }
    return true;
  }
  // A link's list entry and click record go with it: each repeats its
  // expiry.
  if (k.starts_with(kListKeyPrefix)) {
    int64_t expires_at = 0;
    return DecodeListEntry(value, &expires_at).ok() &&
           IsExpired(expires_at, now_());
  }
  if (k.starts_with(kClickKeyPrefix)) {
    ClickRecord record;
    return DecodeClickRecord(k.substr(kClickKeyPrefix.size()), value, &record)
               .ok() &&
           IsExpired(record.expires_at, now_());
  }
  return false;
}

}  // namespace shortlink
