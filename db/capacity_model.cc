// CapacityModel; see capacity_model.h.
#include "db/capacity_model.h"

#include <cmath>

#include "bloomkv/filter_policy.h"
#include "db/compaction.h"
#include "db/filter_allocation.h"
#include "db/version_edit.h"
#include "util/blocked_bloom.h"
#include "util/filter_cost.h"
#include "util/filter_registry.h"

namespace bloomkv {

namespace {
// Bytes a block entry adds besides its key and value: three varint
// lengths, and a restart point (4 bytes) every 16 entries.
constexpr double kEntryOverhead = 3 + 4.0 / 16;
constexpr double kTagBytes = 8;      // sequence number and type
constexpr double kBlockTrailer = 5;  // compression type and checksum
constexpr uint64_t kFilterTrailer = 4;  // the bloom filter's probe count etc.
// An index entry besides its separator key: varint lengths, a block
// handle (offset and size varints) and a restart point of its own.
constexpr double kIndexEntryOverhead = 3 + 6 + 4;
// What the reader keeps in memory per data block beside its index entry:
// the separator's prefix, the block's offset and a bucket-table share
// (SegmentMeta::index_prefixes and block_offsets).
constexpr double kIndexMemoryPerBlock = 8 + 8 + 0.5;
}  // namespace

Status PlanCapacity(const CapacityInputs& in, CapacityPlan* plan) {
  *plan = CapacityPlan();
  if (in.entries == 0) return Status::InvalidArgument("entries must be > 0");
  if (!(in.key_bytes >= 0) || !(in.value_bytes >= 0)) {
    return Status::InvalidArgument("key and value sizes must be >= 0");
  }
  if (!(in.bits_per_key > 0 && in.bits_per_key <= 64)) {
    return Status::InvalidArgument("bits_per_key must be in (0, 64]");
  }
  if (!(in.compression_ratio > 0 && in.compression_ratio <= 2)) {
    return Status::InvalidArgument("compression_ratio must be in (0, 2]");
  }
  const double raw_entry =
      in.key_bytes + kTagBytes + in.value_bytes + kEntryOverhead;
  const double block_size = static_cast<double>(in.options.block_size);
  // A block is cut once it reaches block_size: on average half an entry
  // over.
  const double entries_per_block =
      std::max(1.0, std::ceil((block_size + raw_entry / 2) / raw_entry));
  const double disk_per_entry =
      raw_entry * in.compression_ratio + kBlockTrailer / entries_per_block;
  const double data_bytes = disk_per_entry * static_cast<double>(in.entries);

  // The last level holds what the levels above it, each at its target,
  // leave; their targets follow from the last level's size.
  double bottom = data_bytes;
  for (int i = 0; i < 64; i++) {
    const LevelTargets t(in.options, static_cast<uint64_t>(bottom));
    double upper = 0;
    for (int l = 1; l < kNumLevels - 1; l++) {
      upper += static_cast<double>(t.MaxBytes(l));
    }
    const double next = std::max(data_bytes - upper, data_bytes / 2);
    if (std::abs(next - bottom) < 1) break;
    bottom = next;
  }
  const LevelTargets targets(in.options, static_cast<uint64_t>(bottom));
  double remaining = data_bytes;
  const int k = blocked_bloom::ChooseNumProbes(in.bits_per_key);
  Options filters = in.options;
  filters.filter_policy = NewBloomFilterPolicy(in.bits_per_key);
  const double index_entry = in.key_bytes + kTagBytes + kIndexEntryOverhead;
  for (int l = 1; l < kNumLevels && remaining > 0; l++) {
    const double want = l == kNumLevels - 1
                            ? remaining
                            : static_cast<double>(targets.MaxBytes(l));
    if (want <= 0) continue;
    const double bytes = std::min(want, remaining);
    remaining -= bytes;
    CapacityLevel lv;
    lv.level = l;
    lv.bytes = static_cast<uint64_t>(bytes);
    lv.entries = static_cast<uint64_t>(std::llround(bytes / disk_per_entry));
    // Compaction cuts an output once it has reached the target: on
    // average half a data block over it.
    const double segment_bytes =
        static_cast<double>(targets.OutputFileSize(l)) +
        block_size * in.compression_ratio / 2;
    lv.segments = std::max<uint64_t>(
        1, static_cast<uint64_t>(std::ceil(bytes / segment_bytes)));
    const uint64_t per_segment =
        std::max<uint64_t>(1, lv.entries / lv.segments);
    const auto policy = ConfiguredFilterPolicy(filters, l);
    lv.filter = policy->Name();
    const BuiltinFilterKind kind = BuiltinFilterKindOf(policy->Name());
    if (kind == BuiltinFilterKind::kBinaryFuse8 ||
        kind == BuiltinFilterKind::kBinaryFuse16) {
      const int bits = kind == BuiltinFilterKind::kBinaryFuse8 ? 8 : 16;
      lv.filter_bytes = static_cast<uint64_t>(std::ceil(
          BinaryFuseBitsPerKey(bits, per_segment) *
          static_cast<double>(per_segment) / 8 *
          static_cast<double>(lv.segments)));
      lv.fp_rate = std::ldexp(1.0, -bits);
    } else {
      // The bloom filter (an application's own deep policy is counted as
      // one too).
      const uint64_t lines =
          blocked_bloom::NumLinesFor(per_segment, in.bits_per_key);
      // Each filter rounds up to whole lines: half a line over on average
      // across segments of slightly different sizes.
      const double mean_lines = std::max(
          1.0, static_cast<double>(per_segment) * in.bits_per_key / 512 + 0.5);
      lv.filter_bytes = static_cast<uint64_t>(
          (mean_lines * 64 + kFilterTrailer) *
          static_cast<double>(lv.segments));
      lv.fp_rate = blocked_bloom::TheoreticalFpRate(lines, per_segment, k);
    }
    const double blocks =
        std::ceil(static_cast<double>(lv.entries) / entries_per_block);
    lv.index_bytes =
        static_cast<uint64_t>(blocks * (index_entry + kIndexMemoryPerBlock));
    plan->disk_bytes += static_cast<uint64_t>(blocks * index_entry);
    plan->levels.push_back(lv);
  }

  double fp_above = 0;
  for (const CapacityLevel& lv : plan->levels) {
    plan->segments += lv.segments;
    plan->filter_bytes += lv.filter_bytes;
    plan->index_bytes += lv.index_bytes;
    plan->disk_bytes += lv.bytes;
    plan->probes_per_miss += 1;
    plan->block_reads_per_hit +=
        (1 + fp_above) * static_cast<double>(lv.entries) /
        static_cast<double>(in.entries);
    fp_above += lv.fp_rate;
  }
  plan->block_reads_per_miss = fp_above;
  plan->disk_bytes += plan->filter_bytes;
  return Status::OK();
}

}  // namespace bloomkv
