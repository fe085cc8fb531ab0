// BlockBuilder: serializes sorted key/value pairs into one block.
//
//   entry    := varint32 shared, varint32 non_shared, varint32 value_len,
//               key_delta[non_shared], value[value_len]
//   block    := entry* restart_offset:fixed32*n restart_prefix:fixed64*n?
//               count:fixed32
//   count    := n, with bit 31 set when the restart prefixes are present
//               (kBlockKeyPrefixesFlag, table/format.h)
//
// Every restart_interval-th entry is a restart point: it stores its whole
// key (shared == 0) and its offset is listed in the restart array, so a
// reader can binary-search the restarts. Built with key prefixes (data
// blocks of segment format version 2), the block also stores the
// UserKeyPrefix of each restart point's key (table/internal_key.h), so that
// a lookup chooses its restart interval by comparing integers in one
// contiguous array instead of loading restart keys scattered over the block.
// Used for data and index blocks. The format is documented in
// docs/segment_format.md.
// Thread-safety: external synchronization required.
#ifndef BLOOMKV_TABLE_BLOCK_BUILDER_H_
#define BLOOMKV_TABLE_BLOCK_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "bloomkv/slice.h"

namespace bloomkv {

class BlockBuilder {
 public:
  // restart_interval < 1 is treated as 1. With key_prefixes the keys added
  // must be internal keys (at least 8 bytes).
  explicit BlockBuilder(int restart_interval, bool key_prefixes = false);
  BlockBuilder(const BlockBuilder&) = delete;
  BlockBuilder& operator=(const BlockBuilder&) = delete;

  // REQUIRES: Finish() not called since the last Reset(); key greater than
  // every key added before (the caller checks the order); key.size() and
  // value.size() fit in 32 bits.
  void Add(const Slice& key, const Slice& value);

  // Appends the restart array and returns the whole block, valid until the
  // next Reset() or the builder's destruction. Calling it again returns the
  // same block.
  Slice Finish();

  void Reset();

  // Size of the block Finish() would return now.
  size_t CurrentSizeEstimate() const;
  bool empty() const { return num_entries_ == 0; }
  uint64_t num_entries() const { return num_entries_; }

 private:
  const int restart_interval_;
  const bool key_prefixes_;
  std::string buffer_;
  std::vector<uint32_t> restarts_;
  std::vector<uint64_t> prefixes_;  // with key_prefixes_, one per restart
  int counter_ = 0;                 // entries since the last restart
  uint64_t num_entries_ = 0;
  bool finished_ = false;
  std::string last_key_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_TABLE_BLOCK_BUILDER_H_
