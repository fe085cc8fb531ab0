// Compaction: which segments to merge next, and the facts a compaction
// needs about the levels below its output.
//
// A compaction merges segments from `level` with the overlapping segments of
// `level + 1` and writes the result to `level + 1` — or, to drop what the
// bottom level still holds (tombstones, filtered entries), rewrites segments
// of one level in place. Level 0 segments may
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

// Target size of a level (level >= 1).
uint64_t MaxBytesForLevel(const Options& options, int level);

// The size at which a compaction into `level` cuts its output: the
// configured target_file_size, but at most an eighth of level 1's target,
// doubled for each level below level 1. Small segments in small levels
// keep the part of the next level that one segment overlaps small.
uint64_t OutputFileSize(const Options& options, int level);

// The compression of data blocks written into `level`:
// compression_per_level[level], or Options::compression past its end.
CompressionType CompressionForLevel(const Options& options, int level);

// How urgently a level needs compaction: >= 1 means it should be compacted.
double LevelScore(const Options& options, const Version& v, int level);

class Compaction {
 public:
  // REQUIRES: output_level is level or level + 1, and below kNumLevels.
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

 private:
  const std::shared_ptr<const Version> version_;
  const int level_;
  const int output_level_;
  Version::FileList inputs_[2];
  size_t level_ptrs_[kNumLevels] = {};  // for IsBaseLevelForKey
};

// True when a and b must not run at the same time: some level where both
// read or write holds keys in both their ranges there. A compaction reads
// the key range of its inputs at level() and writes (and reads) the range
// of all its inputs at output_level(). So two compactions never share an
// input, never write overlapping segments into one level, and never write
// where the other reads; which also keeps every key's versions in order
// from level to level, and each one's IsBaseLevelForKey true for its
// version whatever the other installs.
bool CompactionsConflict(const Compaction& a, const Compaction& b);

// Picks the most urgent compaction that conflicts with none of `running`,
// or nullptr if no level needs one. A level's urgency leaves out the
// segments running compactions take from it. compact_pointers[level] is the
// largest key of the last segment compacted at that level, so that
// successive compactions rotate through the level; it is updated.
std::unique_ptr<Compaction> PickCompaction(
    const Options& options, std::shared_ptr<const Version> version,
    std::string compact_pointers[kNumLevels],
    const std::vector<const Compaction*>& running);

// A compaction of every segment at `level` overlapping the user-key range
// [begin, end] (nullptr: unbounded) into the next level — or, with
// in_place, into the same level — or nullptr if there is none.
std::unique_ptr<Compaction> CompactionForRange(
    std::shared_ptr<const Version> version, int level, const Slice* begin,
    const Slice* end, bool in_place);

}  // namespace bloomkv

#endif  // BLOOMKV_DB_COMPACTION_H_
