// kvtool capacity: the capacity model (db/capacity_model.h) for a planned
// store, with the default options.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "bloomkv/filter_policy.h"
#include "bloomkv/options.h"
#include "db/capacity_model.h"
#include "db/table_cache.h"
#include "tools/kvtool/commands.h"
#include "tools/kvtool/exit_codes.h"
#include "tools/kvtool/format.h"

namespace bloomkv::kvtool {

int RunCapacity(const Context& ctx, const CapacityArgs& args) {
  CapacityInputs in;
  in.entries = args.entries;
  in.key_bytes = args.key_bytes;
  in.value_bytes = args.value_bytes;
  in.bits_per_key = args.bits_per_key;
  in.compression_ratio = args.compression_ratio;
  if (args.deep_filter == "bloom") {
    in.options.deep_filter_policy = NewBloomFilterPolicy(args.bits_per_key);
  } else if (args.deep_filter == "fuse8" || args.deep_filter == "fuse16") {
    in.options.deep_filter_policy =
        NewBinaryFuseFilterPolicy(args.deep_filter == "fuse8" ? 8 : 16);
  }
  CapacityPlan plan;
  Status s = PlanCapacity(in, &plan);
  if (!s.ok()) return FailWith(*ctx.err, s);
  // The max_open_files that keeps every segment open (-1 does too), and
  // whether the default does.
  const uint64_t keep_all_open = plan.segments + kNumNonSegmentFiles;
  const int default_max_open_files = Options().max_open_files;
  const bool default_keeps_all =
      keep_all_open <= static_cast<uint64_t>(default_max_open_files);

  if (ctx.json) {
    nlohmann::json levels = nlohmann::json::array();
    for (const CapacityLevel& lv : plan.levels) {
      levels.push_back({{"level", lv.level},
                        {"bytes", lv.bytes},
                        {"entries", lv.entries},
                        {"segments", lv.segments},
                        {"filter", lv.filter},
                        {"filter_bytes", lv.filter_bytes},
                        {"index_bytes", lv.index_bytes},
                        {"fp_rate", lv.fp_rate}});
    }
    nlohmann::json j = {
        {"entries", in.entries},
        {"key_bytes", in.key_bytes},
        {"value_bytes", in.value_bytes},
        {"bits_per_key", in.bits_per_key},
        {"deep_filter", args.deep_filter},
        {"compression_ratio", in.compression_ratio},
        {"levels", levels},
        {"segments", plan.segments},
        {"disk_bytes", plan.disk_bytes},
        {"filter_bytes", plan.filter_bytes},
        {"index_bytes", plan.index_bytes},
        {"probes_per_miss", plan.probes_per_miss},
        {"block_reads_per_miss", plan.block_reads_per_miss},
        {"block_reads_per_hit", plan.block_reads_per_hit},
        {"max_open_files_to_keep_all_open", keep_all_open}};
    *ctx.out << j.dump(2) << "\n";
    return kExitOk;
  }
  char line[256];
  std::snprintf(line, sizeof(line), "%-5s %14s %10s %12s %-24s %12s %12s %9s\n",
                "level", "entries", "segments", "bytes", "filter", "filters",
                "indexes", "fp/probe");
  *ctx.out << line;
  for (const CapacityLevel& lv : plan.levels) {
    std::snprintf(line, sizeof(line),
                  "L%-4d %14llu %10llu %12s %-24s %12s %12s %9.5f\n",
                  lv.level, static_cast<unsigned long long>(lv.entries),
                  static_cast<unsigned long long>(lv.segments),
                  HumanBytes(lv.bytes).c_str(), lv.filter,
                  HumanBytes(lv.filter_bytes).c_str(),
                  HumanBytes(lv.index_bytes).c_str(), lv.fp_rate);
    *ctx.out << line;
  }
  std::snprintf(
      line, sizeof(line),
      "total: %llu segments, %s on disk, %s of filters + %s of indexes in "
      "memory\n",
      static_cast<unsigned long long>(plan.segments),
      HumanBytes(plan.disk_bytes).c_str(),
      HumanBytes(plan.filter_bytes).c_str(),
      HumanBytes(plan.index_bytes).c_str());
  *ctx.out << line;
  std::snprintf(line, sizeof(line),
                "absent key: %.0f filter probes, %.4f block reads; present "
                "key: %.4f block reads\n",
                plan.probes_per_miss, plan.block_reads_per_miss,
                plan.block_reads_per_hit);
  *ctx.out << line;
  if (default_keeps_all) {
    std::snprintf(line, sizeof(line),
                  "open files: every segment stays open with the default "
                  "max_open_files (%d)\n",
                  default_max_open_files);
  } else {
    std::snprintf(line, sizeof(line),
                  "open files: max_open_files %llu (or -1) keeps every "
                  "segment open; with the default (%d) present keys may "
                  "reopen theirs\n",
                  static_cast<unsigned long long>(keep_all_open),
                  default_max_open_files);
  }
  *ctx.out << line;
  return kExitOk;
}

}  // namespace bloomkv::kvtool
