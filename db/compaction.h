// Compaction: which segments to merge next, and the facts a compaction
// needs about the levels below its output.
//
// A compaction merges segments from `level` with the overlapping segments of
// its output level and writes the result there. The output level is
// `level + 1`, except that level 0 compacts into the base level (see
// LevelTargets) and a manual compaction skips empty levels: the levels in
// between are empty. To drop what the bottom level still holds (tombstones,
// filtered entries), a compaction rewrites segments of one level in place. Level 0 segments may
// overlap each other, so a level-0 compaction takes all of them. Deeper
// levels never share a user key between two segments (outputs are cut only
// between user keys), so overlap is decided by user-key ranges alone.
// Several compactions may run at once (Options::max_background_compactions)
// as long as no two conflict (CompactionsConflict): PickCompaction is given
// the running ones and never returns one that conflicts with any of them.
// Thread-safety: a Compaction is used by one thread; the Version it pins is
// immutable.
#ifndef BLOOMKV_DB_COMPACTION_H_
#define BLOOMKV_DB_COMPACTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/options.h"
#include "db/version_set.h"

namespace bloomkv {

// What a lookup that consults a level-0 segment in vain (a filter probe,
// and a block read on a false positive) is taken to cost, in bytes of
// compaction. Flushes and compactions write about 170 MB/s on the 2-core
// VM of docs/benchmarks.md (6 ns a byte), so 16 bytes is about 100 ns:
// what a consult in vain costs at 10^7 links, where the filter line it
// reads misses the CPU caches (16 ns at 10^6, where it does not; see
// "Level 0 compacted for reads" there). See
// Options::read_triggered_compaction.
constexpr uint64_t kBytesPerWastedLevel0Consult = 16;

// Lookups that consulted f and did not find their key there: its filter's
// negatives and false positives, counted by every thread so far.
uint64_t WastedConsults(const FileMetaData& f);

// The size each level should have, and the level that level 0 compacts
// into (the base level), for one version.
//
// Static sizing (Options::level_compaction_dynamic_level_bytes off): the
// base level is level 1, with max_bytes_for_level_base as its target, and
// each deeper level is max_bytes_for_level_multiplier times the one above.
//
// Dynamic sizing (the default): the targets are fixed from the bottom up.
// The last level (kNumLevels - 1) is given the size of the largest level,
// which is its own size once the tree has settled; each level above it gets
// 1/multiplier of the one below, for as long as that is still at least the
// base size (max_bytes_for_level_base); the highest such level is the base
// level. Levels above it get no target and are kept empty: level 0 compacts
// straight into the base level, so a tree of S bytes has about
// log_multiplier(S / base size) levels below level 0 instead of one more
// level for every multiplier of growth from level 1 down. As the data
// grows, the base level moves up. A level above the base level that holds
// data (one written with static sizing, or while the tree was bigger)
// drains down, level by level, ahead of levels that are merely full.
class LevelTargets {
 public:
  LevelTargets(const Options& options, const Version& v);
  // The targets of a tree whose largest level below level 0 holds
  // largest_level_bytes (for planning: db/capacity_model.h).
  LevelTargets(const Options& options, uint64_t largest_level_bytes);

  int base_level() const { return base_level_; }

  // Target size of `level`; 0 for level 0 and for the levels above the
  // base level.
  uint64_t MaxBytes(int level) const { return max_bytes_[level]; }

  // The level a compaction of level 0 writes to in v: the base level, or
  // the first non-empty level above it (data left above the base level must
  // stay below everything newer, so level 0 goes no deeper than that).
  int Level0OutputLevel(const Version& v) const;

  // The size at which a compaction into `level` cuts its output: the
  // configured target_file_size, but at most an eighth of the base size,
  // doubled for each level below the base level. Small segments in small
  // levels keep the part of the next level that one segment overlaps small.
  uint64_t OutputFileSize(int level) const;

  // How urgently a level holding `files` segments of `bytes` bytes in all
  // needs compaction: >= 1 means it should be compacted.
  double Score(int level, uint64_t files, uint64_t bytes) const;
  // The same for level 0 in v, whose segments (`files`, `bytes`) lookups
  // consulted in vain wasted_consults times: with
  // Options::read_triggered_compaction, at least the bytes those lookups
  // are worth over the bytes compacting level 0 would rewrite (its own and
  // the output level's). Into an empty output level, the consults a
  // compaction saves are files - 1 of every `files` (none for one
  // segment), and only those count.
  double Level0Score(const Version& v, uint64_t files, uint64_t bytes,
                     uint64_t wasted_consults) const;
  // Level0Score of level 0 in v with all its segments.
  double Level0Score(const Version& v) const;
  double Score(const Version& v, int level) const {
    return Score(level, v.files(level).size(), v.LevelBytes(level));
  }

 private:
  const int level0_compaction_trigger_;
  const bool read_triggered_compaction_;
  const uint64_t target_file_size_;
  const uint64_t base_bytes_;  // max_bytes_for_level_base, or a full level 0
  int base_level_ = 1;
  uint64_t max_bytes_[kNumLevels] = {};
};

// The compression of data blocks written into `level`:
// compression_per_level[level], or Options::compression past its end.
CompressionType CompressionForLevel(const Options& options, int level);

class Compaction {
 public:
  // REQUIRES: output_level >= level, below kNumLevels, and every level
  // strictly between the two is empty in version.
  Compaction(std::shared_ptr<const Version> version, int level,
             int output_level);

  int level() const { return level_; }
  int output_level() const { return output_level_; }
  const Version& version() const { return *version_; }
  // which 0: inputs from level(); which 1: from output_level().
  const Version::FileList& inputs(int which) const { return inputs_[which]; }
  Version::FileList* mutable_inputs(int which) { return &inputs_[which]; }
  uint64_t InputBytes() const;

  // One input segment and nothing to merge it with: move it down a level
  // without rewriting it.
  bool IsTrivialMove() const;

  // True if no level deeper than output_level() can hold user_key, so a
  // tombstone for it (or a filtered-out value) may vanish entirely.
  // REQUIRES: successive calls pass non-decreasing user keys.
  bool IsBaseLevelForKey(const Slice& user_key);

  // Records the removal of every input in *edit.
  void AddInputDeletions(VersionEdit* edit) const;

  // A level-0 compaction picked only because lookups consulted level 0 in
  // vain (LevelTargets::Level0Score), not for its number of segments.
  bool read_triggered() const { return read_triggered_; }
  void set_read_triggered() { read_triggered_ = true; }

 private:
  const std::shared_ptr<const Version> version_;
  const int level_;
  const int output_level_;
  Version::FileList inputs_[2];
  size_t level_ptrs_[kNumLevels] = {};  // for IsBaseLevelForKey
  bool read_triggered_ = false;
};

// True when a and b must not run at the same time: some level where both
// read or write holds keys in both their ranges there. A compaction reads
// the key range of its inputs at level() and writes (and reads) the range
// of all its inputs at output_level(). So two compactions never share an
// input, never write overlapping segments into one level, and never write
// where the other reads; which also keeps every key's versions in order
// from level to level, and each one's IsBaseLevelForKey true for its
// version whatever the other installs. A compaction from level 0 into a
// deeper base level also passes the levels in between, which are empty in
// its version: only another level-0 compaction, whose level-0 inputs then
// hold none of its keys, can write there while it runs.
bool CompactionsConflict(const Compaction& a, const Compaction& b);

// Picks the most urgent compaction that conflicts with none of `running`,
// or nullptr if no level needs one. A level's urgency leaves out the
// segments running compactions take from it. compact_pointers[level] is the
// largest key of the last segment compacted at that level, so that
// successive compactions rotate through the level; it is updated.
// level0_for_reads: lookups found level 0's Level0Score at 1 or more, so
// it is scored that way (else by its segments alone).
std::unique_ptr<Compaction> PickCompaction(
    const Options& options, std::shared_ptr<const Version> version,
    std::string compact_pointers[kNumLevels],
    const std::vector<const Compaction*>& running,
    bool level0_for_reads = false);

// A compaction of every segment at `level` overlapping the user-key range
// [begin, end] (nullptr: unbounded) into the first non-empty level below
// it (if all below are empty: the next level under static sizing, the last
// level under dynamic sizing) — or, with in_place, into the same level — or
// nullptr if there is none.
std::unique_ptr<Compaction> CompactionForRange(
    const Options& options, std::shared_ptr<const Version> version, int level,
    const Slice* begin, const Slice* end, bool in_place);

}  // namespace bloomkv

#endif  // BLOOMKV_DB_COMPACTION_H_
