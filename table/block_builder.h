// BlockBuilder: serializes sorted key/value pairs into one block.
//
//   entry    := varint32 shared, varint32 non_shared, varint32 value_len,
//               key_delta[non_shared], value[value_len]
//   block    := entry* restart_offset:fixed32* num_restarts:fixed32
//
// Every block_restart_interval-th entry is a restart point: it stores its
// whole key (shared == 0) and its offset is listed in the restart array, so a
// reader can binary-search the restarts. Used for data and index blocks.
// The format is documented in docs/segment_format.md.
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
  // restart_interval < 1 is treated as 1.
  explicit BlockBuilder(int restart_interval);
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
  std::string buffer_;
  std::vector<uint32_t> restarts_;
  int counter_ = 0;  // entries since the last restart
  uint64_t num_entries_ = 0;
  bool finished_ = false;
  std::string last_key_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_TABLE_BLOCK_BUILDER_H_
