// SegmentProperties encoding; see properties.h and docs/segment_format.md.
//
//   properties := field*
//   field      := varint32 tag, varint32 length, value[length]
//
// Tags appear in strictly increasing order. Integer values are one varint64
// filling the whole value; strings are raw bytes; bits_per_key is the fixed64
// IEEE-754 bit pattern of the double. A reader skips tags it does not know,
// so new fields can be added without a format version change.
#include "table/properties.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "table/format.h"
#include "util/coding.h"

namespace bloomkv {

namespace {

// Never change: on disk. New fields get new, larger tags.
enum PropertyTag : uint32_t {
  kTagFormatVersion = 1,
  kTagNumEntries = 2,
  kTagNumDeletions = 3,
  kTagNumFilterKeys = 4,
  kTagRawKeyBytes = 5,
  kTagRawValueBytes = 6,
  kTagNumDataBlocks = 7,
  kTagDataSize = 8,
  kTagIndexSize = 9,
  kTagFilterSize = 10,
  kTagFilterPolicy = 11,
  kTagBitsPerKey = 12,
  kTagSmallestKey = 13,
  kTagLargestKey = 14,
  // Format version 3 with compressed values: the value dictionary block's
  // offset and size (two varint64s).
  kTagValueDictionary = 15,
};

void PutField(std::string* dst, uint32_t tag, const Slice& value) {
  PutVarint32(dst, tag);
  PutLengthPrefixedSlice(dst, value);
}

void PutIntField(std::string* dst, uint32_t tag, uint64_t v) {
  std::string buf;
  PutVarint64(&buf, v);
  PutField(dst, tag, buf);
}

bool DecodeInt(Slice value, uint64_t* out) {
  return GetVarint64(&value, out) && value.empty();
}

}  // namespace

uint64_t SegmentProperties::data_end() const {
  if (!has_value_dictionary) return data_size;
  return value_dictionary_offset + value_dictionary_size + kBlockTrailerSize +
         data_size;
}

void SegmentProperties::EncodeTo(std::string* dst) const {
  PutIntField(dst, kTagFormatVersion, format_version);
  PutIntField(dst, kTagNumEntries, num_entries);
  PutIntField(dst, kTagNumDeletions, num_deletions);
  PutIntField(dst, kTagNumFilterKeys, num_filter_keys);
  PutIntField(dst, kTagRawKeyBytes, raw_key_bytes);
  PutIntField(dst, kTagRawValueBytes, raw_value_bytes);
  PutIntField(dst, kTagNumDataBlocks, num_data_blocks);
  PutIntField(dst, kTagDataSize, data_size);
  PutIntField(dst, kTagIndexSize, index_size);
  PutIntField(dst, kTagFilterSize, filter_size);
  PutField(dst, kTagFilterPolicy, filter_policy);
  uint64_t bits;
  static_assert(sizeof(bits) == sizeof(bits_per_key));
  std::memcpy(&bits, &bits_per_key, sizeof(bits));
  std::string buf;
  PutFixed64(&buf, bits);
  PutField(dst, kTagBitsPerKey, buf);
  PutField(dst, kTagSmallestKey, smallest_key);
  PutField(dst, kTagLargestKey, largest_key);
  if (has_value_dictionary) {
    std::string handle;
    PutVarint64(&handle, value_dictionary_offset);
    PutVarint64(&handle, value_dictionary_size);
    PutField(dst, kTagValueDictionary, handle);
  }
}

Status SegmentProperties::DecodeFrom(const Slice& input) {
  *this = SegmentProperties();
  Slice in = input;
  uint64_t last_tag = 0;
  while (!in.empty()) {
    uint32_t tag;
    Slice value;
    if (!GetVarint32(&in, &tag) || !GetLengthPrefixedSlice(&in, &value)) {
      return Status::Corruption("properties: truncated field");
    }
    if (tag <= last_tag) {
      return Status::Corruption("properties: tag " + std::to_string(tag) +
                                " out of order");
    }
    last_tag = tag;
    uint64_t* int_field = nullptr;
    uint64_t version = 0;
    switch (tag) {
      case kTagFormatVersion:
        int_field = &version;
        break;
      case kTagNumEntries:
        int_field = &num_entries;
        break;
      case kTagNumDeletions:
        int_field = &num_deletions;
        break;
      case kTagNumFilterKeys:
        int_field = &num_filter_keys;
        break;
      case kTagRawKeyBytes:
        int_field = &raw_key_bytes;
        break;
      case kTagRawValueBytes:
        int_field = &raw_value_bytes;
        break;
      case kTagNumDataBlocks:
        int_field = &num_data_blocks;
        break;
      case kTagDataSize:
        int_field = &data_size;
        break;
      case kTagIndexSize:
        int_field = &index_size;
        break;
      case kTagFilterSize:
        int_field = &filter_size;
        break;
      case kTagFilterPolicy:
        filter_policy = value.ToString();
        break;
      case kTagBitsPerKey: {
        if (value.size() != sizeof(uint64_t)) {
          return Status::Corruption("properties: bad bits_per_key");
        }
        const uint64_t bits = DecodeFixed64(value.data());
        std::memcpy(&bits_per_key, &bits, sizeof(bits));
        break;
      }
      case kTagSmallestKey:
        smallest_key = value.ToString();
        break;
      case kTagLargestKey:
        largest_key = value.ToString();
        break;
      case kTagValueDictionary: {
        Slice in_value = value;
        if (!GetVarint64(&in_value, &value_dictionary_offset) ||
            !GetVarint64(&in_value, &value_dictionary_size) ||
            !in_value.empty()) {
          return Status::Corruption("properties: bad value dictionary handle");
        }
        has_value_dictionary = true;
        break;
      }
      default:
        break;  // a field from a newer writer
    }
    if (int_field != nullptr && !DecodeInt(value, int_field)) {
      return Status::Corruption("properties: bad integer for tag " +
                                std::to_string(tag));
    }
    if (tag == kTagFormatVersion) {
      if (version > UINT32_MAX) {
        return Status::Corruption("properties: bad format version");
      }
      format_version = static_cast<uint32_t>(version);
    }
  }
  return Status::OK();
}

std::string SegmentProperties::ToString() const {
  std::string r;
  auto line = [&r](const char* name, const std::string& v) {
    r.append(name);
    r.append(": ");
    r.append(v);
    r.push_back('\n');
  };
  line("format_version", std::to_string(format_version));
  line("num_entries", std::to_string(num_entries));
  line("num_deletions", std::to_string(num_deletions));
  line("num_filter_keys", std::to_string(num_filter_keys));
  line("raw_key_bytes", std::to_string(raw_key_bytes));
  line("raw_value_bytes", std::to_string(raw_value_bytes));
  line("num_data_blocks", std::to_string(num_data_blocks));
  line("data_size", std::to_string(data_size));
  line("index_size", std::to_string(index_size));
  line("filter_size", std::to_string(filter_size));
  line("filter_policy", filter_policy);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", bits_per_key);
  line("bits_per_key", buf);
  line("smallest_key", Slice(smallest_key).ToEscapedString());
  line("largest_key", Slice(largest_key).ToEscapedString());
  if (has_value_dictionary) {
    line("value_dictionary", std::to_string(value_dictionary_size) +
                                 " bytes at offset " +
                                 std::to_string(value_dictionary_offset));
  }
  return r;
}

}  // namespace bloomkv
