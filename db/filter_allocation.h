// Filter allocation: which filter, of which kind and how many bits per key,
// each new segment gets.
//
// The configured filter of a level (ConfiguredFilterPolicy) is
// Options::filter_policy for level 0 and the levels above
// Options::deep_filter_level, and Options::deep_filter_policy, when set, for
// the others. Under FilterAllocation::kUniform a new segment gets exactly
// that.
//
// Under kMinimizeFalsePositives the memory is planned across the runs a
// lookup probes. A lookup of an absent key probes the filter of every sorted
// run whose key range covers the key: each level-0 segment, and one segment
// per deeper level. Its expected number of wasted block reads is the sum of
// those filters' false-positive rates. With each run's configured filter as
// it is, every run of one kind contributes the same rate, although the small
// runs (level 0, level 1) hold a tiny share of the keys and so of the filter
// memory. Spending the same total memory so that the sum of the rates is
// smallest (Dayan, Athanassoulis, Idreos: "Monkey", SIGMOD 2017) gives the
// small runs lower rates. PlanFilters solves that with each kind's real size
// and rate (util/filter_cost.h) and a menu of choices per run:
//   * a resizable policy (the bloom filter): any bits per key in
//     [kMinFilterBitsPerKey, kMaxFilterBitsPerKey], in steps of
//     kFilterBitsStep;
//   * a built-in binary fuse policy: 8- or 16-bit fingerprints, and the
//     write path's policy resized, if that can be (a bloom filter of fewer
//     bits, for a budget too tight for 8-bit fingerprints);
//   * any other policy, or none: as configured.
// The discrete widths are what one price of a bit would get wrong (a large
// level's step from 8 to 16 bits is worth taking or not as a whole), so
// every assignment of the fuse runs to 8 bits, 16 bits or the fallback curve
// is tried (at most 3^6: one fuse run per level); for each, the curve runs
// share what is left by minimising sum_r fp_r + lambda * sum_r n_r * bits_r
// run by run over each curve's lower convex hull (a Lagrangian relaxation;
// the bloom filter's rate is nearly convex in bits per key), with the least
// lambda whose plan fits found by bisection. What the steps leave unspent is
// then given, one move at a time, to the run whose false-positive rate it
// lowers most. A plan that does not beat the configured filters is not
// taken: the result is never worse than kUniform, by the model.
//
// Thread-safety: pure functions.
#ifndef BLOOMKV_DB_FILTER_ALLOCATION_H_
#define BLOOMKV_DB_FILTER_ALLOCATION_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "bloomkv/options.h"
#include "bloomkv/status.h"
#include "db/compaction.h"
#include "db/version_set.h"

namespace bloomkv {

// Bits per key of a resized filter never go below or above these, whatever
// the run sizes: a filter below one bit per key saves almost nothing, and
// one past 40 bits per key wastes memory on a rate no lookup mix can tell
// from zero. Plans choose them in steps of kFilterBitsStep.
constexpr double kMinFilterBitsPerKey = 1.0;
constexpr double kMaxFilterBitsPerKey = 40.0;
constexpr double kFilterBitsStep = 1.0 / 16;

// A filter_policy that is the built-in bloom filter at this many bits per
// key or more, up to the maximum, gets the built-in binary fuse filter with
// 8-bit fingerprints at deep_filter_level and below when deep_filter_policy
// is null: as selective (2^-8 = 0.39% false positives, against the bloom
// filter's 0.96% at 10 bits per key and 0.40% at 12) in no more memory
// (9.0-9.5 bits per key for segments of 10^5 keys and more; 10.3 at 10^4).
// Outside that range the fuse filter would be either larger or less
// selective than what was asked for, so filter_policy is kept.
constexpr double kAutoDeepFuseMinBitsPerKey = 10.0;
constexpr double kAutoDeepFuseMaxBitsPerKey = 12.0;

// What Options::deep_filter_policy stands for: itself when set; when null,
// the binary fuse filter above for a bloom filter_policy in that range,
// else null (filter_policy at every level).
std::shared_ptr<const FilterPolicy> DeepFilterPolicy(const Options& options);

// InvalidArgument unless deep_filter_level is in [1, kNumLevels - 1], and
// unless filter_policy and deep_filter_policy are readable side by side:
// at most one of them may be of a name that is not built in (the reader
// interprets built-in names without being configured with them, see
// ReaderFilterPolicy).
Status ValidateFilterOptions(const Options& options);

// The policy configured for segments written to `level` (see above); may
// be null (no filter).
std::shared_ptr<const FilterPolicy> ConfiguredFilterPolicy(
    const Options& options, int level);

// The policy the database's segment readers are configured with
// (SegmentReaderOptions::filter_policy): the one of filter_policy and
// DeepFilterPolicy(options) whose name is not built in, else filter_policy,
// else the deep one. Every built-in name is read with or without it.
// REQUIRES: ValidateFilterOptions(options) is OK.
std::shared_ptr<const FilterPolicy> ReaderFilterPolicy(const Options& options);

// A sorted run as the plan sees it.
struct FilterRun {
  uint64_t entries = 0;  // keys in the run
  // Keys in one of its segments (a fuse filter's size per key depends on
  // it); 0 counts as entries.
  uint64_t segment_entries = 0;
  // What kUniform gives it; null: no filter.
  std::shared_ptr<const FilterPolicy> policy;
};

// One run's filter in a plan.
struct FilterChoice {
  std::shared_ptr<const FilterPolicy> policy;  // null: no filter
  double bits_per_key = 0;                     // expected
  double fp_rate = 1.0;                        // expected
};

// The filters for `runs` that make the sum of their false-positive rates
// smallest while they take at most the memory their configured policies
// take (sum of entries * bits per key). write_policy: the write path's
// policy (Options::filter_policy), offered resized to runs configured with a
// binary fuse policy if it can be resized; may be null. Runs with no
// entries get their configured policy.
std::vector<FilterChoice> PlanFilters(
    const std::vector<FilterRun>& runs,
    const std::shared_ptr<const FilterPolicy>& write_policy);

// The filter policy for the segments a flush (c == nullptr, writing
// new_entries entries to level 0) or a compaction c writes. The runs are
// those of v once the output is in place: the compaction's inputs leave,
// its output level holds the inputs' entries. A level above the deepest
// one counts with at least its target size in v (LevelTargets; converted to
// entries at the version's bytes per entry), the size it has once it is
// full: a level's segments are rewritten rarely, so their filters should
// suit the tree that will be, not the young one. Levels with no target
// (above the base level, kept empty) count with what they hold. Under
// FilterAllocation::kUniform this is ConfiguredFilterPolicy of the output
// level.
std::shared_ptr<const FilterPolicy> FilterPolicyForOutput(
    const Options& options, const Version& v, const Compaction* c,
    uint64_t new_entries);

}  // namespace bloomkv

#endif  // BLOOMKV_DB_FILTER_ALLOCATION_H_
