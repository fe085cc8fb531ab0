// SegmentBuilder: writes one immutable segment file.
//
// Call pattern: (Add)* (Finish | Abandon). Add takes internal keys (see
// internal_key.h) in strictly increasing internal-key order; anything else is
// rejected with InvalidArgument and the builder stays in that error state.
// The builder writes through the WritableFile it is given but neither syncs
// nor closes it: the caller does, so it controls durability.
// Thread-safety: external synchronization required.
#ifndef BLOOMKV_TABLE_SEGMENT_BUILDER_H_
#define BLOOMKV_TABLE_SEGMENT_BUILDER_H_

#include <cstdint>
#include <memory>

#include "bloomkv/options.h"
#include "bloomkv/slice.h"
#include "bloomkv/status.h"
#include "table/format.h"
#include "table/properties.h"

namespace bloomkv {

class FilterPolicy;
class ValueDictionary;
class WritableFile;

struct SegmentBuilderOptions {
  // Target uncompressed data block size.
  size_t block_size = 4096;
  // Keys between restart points in a data block; 0 chooses: four in a data
  // block with restart prefixes (a lookup picks its interval from the
  // prefixes and walks two entries on average), sixteen in one without
  // (docs/benchmarks.md, "Restart prefixes in data blocks").
  int block_restart_interval = 0;
  // kSegmentFormatVersion1 writes data blocks without restart prefixes, for
  // readers of that version; any other value writes the latest version,
  // whose uncompressed segments carry restart prefixes in their data blocks.
  // (A compressed segment's blocks do without: LZ4 cannot shrink the
  // prefixes, so they would cost about 6% of its size.)
  uint32_t format_version = kLatestSegmentFormatVersion;
  CompressionType compression = CompressionType::kLZ4;
  // With kLZ4Values: not null, the dictionary every value is compressed
  // against, instead of one made from the segment's first values.
  std::shared_ptr<const ValueDictionary> value_dictionary;
  // With value_dictionary: the values given to Add are already in their
  // stored form against it (table/value_codec.h), as a compaction's
  // ValueRecoder gives them, and are written as they are.
  bool values_encoded = false;
  // nullptr: the segment carries no filter.
  std::shared_ptr<const FilterPolicy> filter_policy;
};

class SegmentBuilder {
 public:
  // REQUIRES: file outlives the builder.
  SegmentBuilder(const SegmentBuilderOptions& options, WritableFile* file);
  SegmentBuilder(const SegmentBuilder&) = delete;
  SegmentBuilder& operator=(const SegmentBuilder&) = delete;
  ~SegmentBuilder();

  // REQUIRES: Finish() and Abandon() not called.
  // InvalidArgument if internal_key is malformed or not strictly greater
  // than the previous key; an IO error from the file is returned as is.
  Status Add(const Slice& internal_key, const Slice& value);

  // Writes the last data block, the filter, properties and index blocks and
  // the footer. REQUIRES: Finish() and Abandon() not called.
  Status Finish();

  // Gives up on the segment; the caller deletes the file.
  void Abandon();

  // The first error seen, or OK.
  Status status() const;
  uint64_t NumEntries() const;
  // Bytes written so far (the file size after Finish()).
  uint64_t FileSize() const;
  // Complete after Finish().
  const SegmentProperties& properties() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_TABLE_SEGMENT_BUILDER_H_
