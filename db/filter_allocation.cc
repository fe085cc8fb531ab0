// Filter allocation; see filter_allocation.h.
#include "db/filter_allocation.h"

#include <algorithm>
#include <cmath>

namespace bloomkv {

std::vector<double> AllocateFilterBits(const std::vector<uint64_t>& run_entries,
                                       double avg_bits_per_key) {
  const double ln2_squared = std::log(2.0) * std::log(2.0);
  double total = 0, weighted_log = 0;
  for (uint64_t n : run_entries) {
    if (n == 0) continue;
    total += static_cast<double>(n);
    weighted_log += static_cast<double>(n) * std::log(static_cast<double>(n));
  }
  std::vector<double> bits(run_entries.size(), avg_bits_per_key);
  if (total == 0) return bits;
  const double mean_log = weighted_log / total;
  for (size_t r = 0; r < run_entries.size(); r++) {
    if (run_entries[r] == 0) continue;
    const double b =
        avg_bits_per_key +
        (mean_log - std::log(static_cast<double>(run_entries[r]))) /
            ln2_squared;
    bits[r] = std::clamp(b, kMinFilterBitsPerKey, kMaxFilterBitsPerKey);
  }
  return bits;
}

std::shared_ptr<const FilterPolicy> FilterPolicyForOutput(
    const Options& options, const Version& v, const Compaction* c,
    uint64_t new_entries) {
  const auto& policy = options.filter_policy;
  if (policy == nullptr ||
      options.filter_allocation != FilterAllocation::kMinimizeFalsePositives) {
    return policy;
  }
  auto is_input = [c](const FileMetaData* f) {
    if (c == nullptr) return false;
    for (int which = 0; which < 2; which++) {
      for (const auto& in : c->inputs(which)) {
        if (in.get() == f) return true;
      }
    }
    return false;
  };
  const int output_level = c == nullptr ? 0 : c->output_level();
  if (c != nullptr) {
    new_entries = 0;
    for (int which = 0; which < 2; which++) {
      for (const auto& f : c->inputs(which)) new_entries += f->num_entries;
    }
  }

  // Entries per level once the output is in place; level 0 run by run.
  std::vector<uint64_t> runs;
  uint64_t level_entries[kNumLevels] = {};
  uint64_t total_entries = 0, total_bytes = 0;
  for (int level = 0; level < kNumLevels; level++) {
    for (const auto& f : v.files(level)) {
      total_entries += f->num_entries;
      total_bytes += f->file_size;
      if (is_input(f.get())) continue;
      if (level == 0) runs.push_back(f->num_entries);
      level_entries[level] += f->num_entries;
    }
  }
  size_t output_run = 0;
  if (output_level == 0) {
    output_run = runs.size();
    runs.push_back(new_entries);
  } else {
    level_entries[output_level] += new_entries;
  }
  int deepest = 0;
  for (int level = 1; level < kNumLevels; level++) {
    if (level_entries[level] > 0) deepest = level;
  }
  const double entries_per_byte = total_bytes == 0
                                      ? 0.0
                                      : static_cast<double>(total_entries) /
                                            static_cast<double>(total_bytes);
  const LevelTargets targets(options, v);
  for (int level = 1; level <= deepest; level++) {
    uint64_t entries = level_entries[level];
    if (level < deepest) {
      entries = std::max<uint64_t>(
          entries, static_cast<uint64_t>(
                       entries_per_byte *
                       static_cast<double>(targets.MaxBytes(level))));
    }
    if (level == output_level) output_run = runs.size();
    runs.push_back(entries);
  }
  const double bits =
      AllocateFilterBits(runs, policy->BitsPerKey())[output_run];
  auto resized = policy->Resized(bits);
  return resized != nullptr ? resized : policy;
}

}  // namespace bloomkv
