// Filter allocation: how many bits per key each new segment's filter gets.
//
// A lookup of an absent key probes the filter of every sorted run whose key
// range covers the key: each level-0 segment, and one segment per deeper
// level. Its expected number of wasted block reads is the sum of those
// filters' false-positive rates. With equal bits per key everywhere, every
// run contributes the same rate, although the small runs (level 0, level 1)
// hold a tiny share of the keys and so of the filter memory. Spending the
// same total memory so that the sum of the rates is smallest (Dayan,
// Athanassoulis, Idreos: "Monkey", SIGMOD 2017) gives each run a rate
// proportional to its number of entries: with fp(b) ~ exp(-b ln^2 2), run r
// gets
//     b_r = b_avg + (mean over keys of ln n  -  ln n_r) / ln^2 2
// bits per key, so each level 10x smaller than the next gets about 4.8 more
// bits per key, and the deepest level a little fewer than the average.
//
// Thread-safety: pure functions.
#ifndef BLOOMKV_DB_FILTER_ALLOCATION_H_
#define BLOOMKV_DB_FILTER_ALLOCATION_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "bloomkv/options.h"
#include "db/compaction.h"
#include "db/version_set.h"

namespace bloomkv {

// Bits per key never go below or above these, whatever the run sizes: a
// filter below one bit per key saves almost nothing, and one past 40 bits
// per key wastes memory on a rate no lookup mix can tell from zero.
constexpr double kMinFilterBitsPerKey = 1.0;
constexpr double kMaxFilterBitsPerKey = 40.0;

// The bits per key for each run (entries per run in run_entries) that
// minimise the sum of the runs' false-positive rates while the filters
// together use avg_bits_per_key bits per entry (before clamping to the range
// above). Runs with no entries get avg_bits_per_key.
std::vector<double> AllocateFilterBits(const std::vector<uint64_t>& run_entries,
                                       double avg_bits_per_key);

// The filter policy for the segments a flush (c == nullptr, writing
// new_entries entries to level 0) or a compaction c writes. The runs are
// those of v once the output is in place: the compaction's inputs leave,
// its output level holds the inputs' entries. A level above the deepest
// one counts with at least its target size in v (LevelTargets; converted to
// entries at the version's bytes per entry), the size it has once it is
// full: a level's segments are rewritten rarely, so their bits should suit
// the tree that will be, not the young one. Levels with no target (above
// the base level, kept empty) count with what they hold. Under FilterAllocation::kUniform, or for
// a policy that cannot be resized, this is options.filter_policy itself.
std::shared_ptr<const FilterPolicy> FilterPolicyForOutput(
    const Options& options, const Version& v, const Compaction* c,
    uint64_t new_entries);

}  // namespace bloomkv

#endif  // BLOOMKV_DB_FILTER_ALLOCATION_H_
