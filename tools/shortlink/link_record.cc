// Encodings of the short-link records; see link_record.h for the layout.
#include "tools/shortlink/link_record.h"

#include <xxhash.h>

namespace shortlink {

using bloomkv::Slice;
using bloomkv::Status;

namespace {

void PutFixed64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; i++) {
    out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) {
    v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  }
  return v;
}

void PutBigEndian64(std::string* out, uint64_t v) {
  for (int i = 7; i >= 0; i--) {
    out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

void PutFixed32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; i++) {
    out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    v |= uint32_t{static_cast<unsigned char>(p[i])} << (8 * i);
  }
  return v;
}

}  // namespace

std::string CodeKey(std::string_view code) {
  std::string key(kCodeKeyPrefix);
  key.append(code);
  return key;
}

std::string IndexKey(std::string_view url_hash) {
  std::string key(kIndexKeyPrefix);
  key.append(url_hash);
  return key;
}

std::string ClickKey(std::string_view code) {
  std::string key(kClickKeyPrefix);
  key.append(code);
  return key;
}

std::string ListKey(int64_t created, std::string_view code) {
  std::string key(kListKeyPrefix);
  PutBigEndian64(&key, ~static_cast<uint64_t>(created));
  key.append(code);
  return key;
}

bool CodeOfListKey(std::string_view key, std::string_view* code) {
  constexpr size_t kHeader = kListKeyPrefix.size() + kListKeyTimeSize;
  if (!key.starts_with(kListKeyPrefix) || key.size() <= kHeader) return false;
  *code = key.substr(kHeader);
  return true;
}

std::string UrlHash(std::string_view normalized_url) {
  const XXH128_hash_t h =
      XXH3_128bits(normalized_url.data(), normalized_url.size());
  std::string out;
  out.reserve(kUrlHashSize);
  PutBigEndian64(&out, h.high64);
  PutBigEndian64(&out, h.low64);
  return out;
}

void EncodeLinkRecord(const LinkRecord& record, std::string* out) {
  out->clear();
  out->reserve(kLinkRecordHeaderSize + record.url.size());
  out->push_back(static_cast<char>(kLinkRecordVersion2));
  PutFixed64(out, static_cast<uint64_t>(record.created));
  PutFixed64(out, static_cast<uint64_t>(record.expires_at));
  PutFixed64(out, record.incarnation);
  out->append(record.url);
}

Status DecodeLinkRecord(std::string_view code, const Slice& value,
                        LinkRecord* record) {
  const char* p = value.data();
  const uint8_t version = value.size() > 0 ? static_cast<uint8_t>(p[0]) : 0;
  if (value.size() > 0 && version != kLinkRecordVersion1 &&
      version != kLinkRecordVersion2) {
    return Status::Corruption("link record has an unknown version for code",
                              code);
  }
  const size_t header = version == kLinkRecordVersion1 ? kLinkRecordV1HeaderSize
                                                       : kLinkRecordHeaderSize;
  if (value.size() <= header) {
    return Status::Corruption("link record too short for code", code);
  }
  record->created = static_cast<int64_t>(DecodeFixed64(p + 1));
  record->expires_at = static_cast<int64_t>(DecodeFixed64(p + 9));
  record->incarnation =
      version == kLinkRecordVersion1 ? 0 : DecodeFixed64(p + 17);
  record->url.assign(p + header, value.size() - header);
  return Status::OK();
}

void EncodeIndexEntries(const std::vector<IndexEntry>& entries,
                        std::string* out) {
  out->clear();
  out->push_back(static_cast<char>(kIndexEntriesVersion1));
  for (const IndexEntry& e : entries) {
    PutFixed64(out, static_cast<uint64_t>(e.expires_at));
    out->push_back(static_cast<char>(e.code.size()));
    out->append(e.code);
  }
}

Status DecodeIndexEntries(const Slice& value,
                          std::vector<IndexEntry>* entries) {
  entries->clear();
  if (value.size() < 1 ||
      static_cast<uint8_t>(value.data()[0]) != kIndexEntriesVersion1) {
    return Status::Corruption("url index entry has an unknown version");
  }
  size_t pos = 1;
  while (pos < value.size()) {
    if (value.size() - pos < 9) {
      return Status::Corruption("url index entry truncated at byte",
                                std::to_string(pos));
    }
    IndexEntry e;
    e.expires_at = static_cast<int64_t>(DecodeFixed64(value.data() + pos));
    const size_t len = static_cast<uint8_t>(value.data()[pos + 8]);
    pos += 9;
    if (len == 0 || value.size() - pos < len) {
      return Status::Corruption("url index entry has a bad code at byte",
                                std::to_string(pos - 1));
    }
    e.code.assign(value.data() + pos, len);
    pos += len;
    entries->push_back(std::move(e));
  }
  if (entries->empty()) {
    return Status::Corruption("url index entry lists no code");
  }
  return Status::OK();
}

std::string EncodeListEntry(int64_t expires_at) {
  std::string out;
  out.push_back(static_cast<char>(kListEntryVersion1));
  PutFixed64(&out, static_cast<uint64_t>(expires_at));
  return out;
}

Status DecodeListEntry(const Slice& value, int64_t* expires_at) {
  if (value.size() != kListEntrySize ||
      static_cast<uint8_t>(value.data()[0]) != kListEntryVersion1) {
    return Status::Corruption("list entry has an unknown version or size");
  }
  *expires_at = static_cast<int64_t>(DecodeFixed64(value.data() + 1));
  return Status::OK();
}

void EncodeClickRecord(const ClickRecord& record, std::string* out) {
  out->clear();
  out->reserve(kClickRecordHeaderSize + record.days.size() * kClickDaySize);
  out->push_back(static_cast<char>(kClickRecordVersion2));
  PutFixed64(out, static_cast<uint64_t>(record.link_created));
  PutFixed64(out, record.link_incarnation);
  PutFixed64(out, static_cast<uint64_t>(record.expires_at));
  PutFixed64(out, record.total);
  PutFixed64(out, static_cast<uint64_t>(record.last_access));
  out->push_back(static_cast<char>(record.days.size()));
  for (const DayCount& d : record.days) {
    PutFixed32(out, static_cast<uint32_t>(d.day));
    PutFixed64(out, d.count);
  }
}

Status DecodeClickRecord(std::string_view code, const Slice& value,
                         ClickRecord* record) {
  const char* p = value.data();
  const uint8_t version = value.size() > 0 ? static_cast<uint8_t>(p[0]) : 0;
  const bool v1 = version == kClickRecordVersion1;
  const size_t header = v1 ? kClickRecordV1HeaderSize : kClickRecordHeaderSize;
  if ((!v1 && version != kClickRecordVersion2) || value.size() < header) {
    return Status::Corruption("click record has an unknown version for code",
                              code);
  }
  const size_t n = static_cast<uint8_t>(p[header - 1]);
  if (n > static_cast<size_t>(kClickDays) ||
      value.size() != header + n * kClickDaySize) {
    return Status::Corruption("click record has a bad size for code", code);
  }
  // Version 2 has the incarnation after link_created; the rest follows.
  record->link_created = static_cast<int64_t>(DecodeFixed64(p + 1));
  record->link_incarnation = v1 ? 0 : DecodeFixed64(p + 9);
  const char* rest = p + (v1 ? 9 : 17);
  record->expires_at = static_cast<int64_t>(DecodeFixed64(rest));
  record->total = DecodeFixed64(rest + 8);
  record->last_access = static_cast<int64_t>(DecodeFixed64(rest + 16));
  record->days.clear();
  p += header;
  for (size_t i = 0; i < n; i++, p += kClickDaySize) {
    record->days.push_back(
        DayCount{static_cast<int32_t>(DecodeFixed32(p)), DecodeFixed64(p + 4)});
  }
  return Status::OK();
}

}  // namespace shortlink
