// SegmentProperties: facts about one segment, stored in its properties block.
//
// Written by SegmentBuilder, read back by SegmentReader::Open; kvtool and
// DB::GetProperty report them. The encoding is documented in
// docs/segment_format.md.
// Thread-safety: a plain value.
#ifndef BLOOMKV_TABLE_PROPERTIES_H_
#define BLOOMKV_TABLE_PROPERTIES_H_

#include <cstdint>
#include <string>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

struct SegmentProperties {
  uint32_t format_version = 0;
  uint64_t num_entries = 0;      // internal entries, tombstones included
  uint64_t num_deletions = 0;    // tombstones
  uint64_t num_filter_keys = 0;  // distinct user keys given to the filter
  uint64_t raw_key_bytes = 0;    // sum of internal key sizes
  uint64_t raw_value_bytes = 0;  // sum of value sizes
  uint64_t num_data_blocks = 0;
  uint64_t data_size = 0;  // data blocks on disk, trailers included
  uint64_t index_size = 0;
  uint64_t filter_size = 0;   // 0 when there is no filter
  std::string filter_policy;  // policy Name(); empty when no filter
  double bits_per_key = 0;    // as configured in the policy
  std::string smallest_key;   // internal key; empty if no entries
  std::string largest_key;    // internal key; empty if no entries
  // Format version 3 with compressed values: where the value dictionary
  // block lies (table/value_codec.h).
  bool has_value_dictionary = false;
  uint64_t value_dictionary_offset = 0;
  uint64_t value_dictionary_size = 0;

  // The offset just past the last data block: data_size, after the value
  // dictionary block when there is one (it comes first).
  uint64_t data_end() const;

  void EncodeTo(std::string* dst) const;
  // Corruption if the input cannot be parsed; unknown fields are skipped so
  // that newer writers stay readable.
  Status DecodeFrom(const Slice& input);
  // Multi-line "name: value" text for tools and tests.
  std::string ToString() const;
};

}  // namespace bloomkv

#endif  // BLOOMKV_TABLE_PROPERTIES_H_
