// PlanCapacity: what a settled store of N entries will look like with given
// options, computed from the same level sizing the compactions use
// (LevelTargets) and the same filter arithmetic the filters use
// (util/blocked_bloom.h, util/binary_fuse.h), with the filter each level
// gets (ConfiguredFilterPolicy): levels, segments, bytes on disk, filter and index
// memory, filter probes and expected block reads per hit and per miss.
//
// "Settled" is the shape background compaction leaves: level 0 empty, every
// level above the last at its target size, the last holding the rest.
// Entry sizes on disk come from the caller (compression_ratio is the
// compressed size of a data block over its raw size; docs/operations.md
// gives the figure measured for short links with LZ4). Index entries are
// estimated as a separator (the key and its 8-byte tag), a block handle and
// the block format's varints and restart point. docs/operations.md compares
// the predictions with stores of 10^6 to 10^8 links.
// Thread-safety: a pure function.
#ifndef BLOOMKV_DB_CAPACITY_MODEL_H_
#define BLOOMKV_DB_CAPACITY_MODEL_H_

#include <cstdint>
#include <vector>

#include "bloomkv/options.h"
#include "bloomkv/status.h"

namespace bloomkv {

struct CapacityInputs {
  uint64_t entries = 0;
  double key_bytes = 7;     // average user key length
  double value_bytes = 80;  // average value length
  double bits_per_key = 10;  // of the bloom filter (Options::filter_policy)
  double compression_ratio = 0.63;  // 1.0 without compression
  // Level sizing, segment sizes, block size, and the deep levels' filter:
  // deep_filter_policy and deep_filter_level as a database applies them
  // (null: the default, 8-bit binary fuse filters below level 0 for
  // 10-12 bits per key); filter_policy is not used (bits_per_key sets it).
  Options options;
};

struct CapacityLevel {
  int level = 0;
  uint64_t bytes = 0;  // data blocks on disk
  uint64_t entries = 0;
  uint64_t segments = 0;
  uint64_t filter_bytes = 0;
  // In memory: index blocks with their separator prefixes and block offsets.
  uint64_t index_bytes = 0;
  double fp_rate = 0;  // per probe of one of its segments' filters
  const char* filter = "";  // the policy's Name(); "" without filters
};

struct CapacityPlan {
  std::vector<CapacityLevel> levels;  // non-empty levels, top down
  uint64_t disk_bytes = 0;            // data + filters + indexes
  uint64_t segments = 0;
  uint64_t filter_bytes = 0;
  uint64_t index_bytes = 0;
  // A lookup of an absent key probes one filter per level and reads a
  // block for each false positive.
  double probes_per_miss = 0;
  double block_reads_per_miss = 0;
  // A hit reads its own block plus the false positives of the levels above
  // its own, averaged over where the entries are.
  double block_reads_per_hit = 0;
};

// InvalidArgument for entries == 0, negative sizes, bits_per_key outside
// (0, 64] or compression_ratio outside (0, 2].
Status PlanCapacity(const CapacityInputs& in, CapacityPlan* plan);

}  // namespace bloomkv

#endif  // BLOOMKV_DB_CAPACITY_MODEL_H_
