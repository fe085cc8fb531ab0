// Compaction picking; see compaction.h.
#include "db/compaction.h"

#include <algorithm>

namespace bloomkv {
namespace {

Slice UserSmallest(const FileMetaData& f) { return ExtractUserKey(f.smallest); }
Slice UserLargest(const FileMetaData& f) { return ExtractUserKey(f.largest); }

bool Overlaps(const FileMetaData& f, const Slice* begin, const Slice* end) {
  if (begin != nullptr && UserLargest(f).compare(*begin) < 0) return false;
  if (end != nullptr && UserSmallest(f).compare(*end) > 0) return false;
  return true;
}

// Adds the files of `level` overlapping [begin, end] to *out.
void AddOverlapping(const Version& v, int level, const Slice& begin,
                    const Slice& end, Version::FileList* out) {
  for (const auto& f : v.files(level)) {
    if (Overlaps(*f, &begin, &end)) out->push_back(f);
  }
}

// The user-key range of a set of files. REQUIRES: !files.empty()
void Range(const Version::FileList& files, std::string* smallest,
           std::string* largest) {
  *smallest = UserSmallest(*files[0]).ToString();
  *largest = UserLargest(*files[0]).ToString();
  for (const auto& f : files) {
    if (UserSmallest(*f).compare(*smallest) < 0) {
      *smallest = UserSmallest(*f).ToString();
    }
    if (UserLargest(*f).compare(*largest) > 0) {
      *largest = UserLargest(*f).ToString();
    }
  }
}

// Level 0 files overlap one another: once one is chosen, every file whose
// range touches the growing range must come too, or an older version could
// end up below a newer one.
void ExpandLevel0(const Version& v, Version::FileList* inputs) {
  std::string smallest, largest;
  bool grew = true;
  while (grew) {
    grew = false;
    Range(*inputs, &smallest, &largest);
    const Slice b(smallest), e(largest);
    for (const auto& f : v.files(0)) {
      if (std::find(inputs->begin(), inputs->end(), f) == inputs->end() &&
          Overlaps(*f, &b, &e)) {
        inputs->push_back(f);
        grew = true;
      }
    }
  }
}

// A key range a compaction touches at one level.
struct Footprint {
  int level;
  std::string smallest, largest;  // user keys
};

// What c reads at level() and what it writes at output_level().
void GetFootprints(const Compaction& c, Footprint out[2]) {
  out[0].level = c.level();
  Range(c.inputs(0), &out[0].smallest, &out[0].largest);
  out[1] = out[0];
  out[1].level = c.output_level();
  if (c.inputs(1).empty()) return;
  std::string smallest, largest;
  Range(c.inputs(1), &smallest, &largest);
  if (Slice(smallest).compare(out[1].smallest) < 0) out[1].smallest = smallest;
  if (Slice(largest).compare(out[1].largest) > 0) out[1].largest = largest;
}

std::unique_ptr<Compaction> Finish(std::unique_ptr<Compaction> c) {
  const Version& v = c->version();
  if (c->level() == 0) ExpandLevel0(v, c->mutable_inputs(0));
  if (c->output_level() == c->level()) return c;  // in place
  std::string smallest, largest;
  Range(c->inputs(0), &smallest, &largest);
  AddOverlapping(v, c->output_level(), smallest, largest, c->mutable_inputs(1));
  return c;
}

}  // namespace

namespace {
// The largest level stands for the last one: in a settled tree it is the
// last one, and in a tree whose data still sits higher up (written with
// static sizing, or still draining) it is what the last level will hold.
uint64_t LargestLevelBytes(const Version& v) {
  uint64_t bottom = 0;
  for (int level = 1; level < kNumLevels; level++) {
    bottom = std::max(bottom, v.LevelBytes(level));
  }
  return bottom;
}
}  // namespace

LevelTargets::LevelTargets(const Options& options, const Version& v)
    : LevelTargets(options, LargestLevelBytes(v)) {}

LevelTargets::LevelTargets(const Options& options, uint64_t bottom)
    : level0_compaction_trigger_(options.level0_compaction_trigger),
      read_triggered_compaction_(options.read_triggered_compaction),
      target_file_size_(options.target_file_size),
      base_bytes_(options.max_bytes_for_level_base != 0
                      ? options.max_bytes_for_level_base
                      : static_cast<uint64_t>(
                            options.level0_compaction_trigger) *
                            options.write_buffer_size) {
  const auto multiplier =
      static_cast<uint64_t>(options.max_bytes_for_level_multiplier);
  if (!options.level_compaction_dynamic_level_bytes) {
    base_level_ = 1;
    uint64_t target = base_bytes_;
    for (int level = 1; level < kNumLevels; level++) {
      max_bytes_[level] = target;
      // Saturates instead of wrapping: a 100x multiplier from a 1 TiB base
      // would pass 2^64 by the last level.
      target = target > UINT64_MAX / multiplier ? UINT64_MAX
                                                : target * multiplier;
    }
    return;
  }
  base_level_ = kNumLevels - 1;
  max_bytes_[base_level_] = bottom;
  for (int level = kNumLevels - 2; level >= 1; level--) {
    const uint64_t target = max_bytes_[level + 1] / multiplier;
    if (target < base_bytes_) break;
    max_bytes_[level] = target;
    base_level_ = level;
  }
}

int LevelTargets::Level0OutputLevel(const Version& v) const {
  for (int level = 1; level < base_level_; level++) {
    if (v.NumFiles(level) > 0) return level;
  }
  return base_level_;
}

uint64_t LevelTargets::OutputFileSize(int level) const {
  // An eighth of the base size down to the base level, doubling with each
  // level below it.
  uint64_t size = base_bytes_ / 8;
  for (int l = base_level_ + 1; l <= level && size < target_file_size_; l++) {
    size *= 2;
  }
  return std::max<uint64_t>(16 << 10,
                            std::min<uint64_t>(target_file_size_, size));
}

CompressionType CompressionForLevel(const Options& options, int level) {
  const auto& per_level = options.compression_per_level;
  if (level >= 0 && static_cast<size_t>(level) < per_level.size()) {
    return per_level[level];
  }
  return options.compression;
}

double LevelTargets::Score(int level, uint64_t files, uint64_t bytes) const {
  if (level == 0) {
    return static_cast<double>(files) / level0_compaction_trigger_;
  }
  // The last level has nowhere to go.
  if (bytes == 0 || level == kNumLevels - 1) return 0;
  if (level < base_level_) {
    // Kept empty: whatever is here must move down before the level is
    // merely over its target elsewhere, the bigger the sooner (the deepest
    // such level drains first, mostly by moving segments, and the ones
    // above then move into an emptied level instead of merging).
    return 1.0 + static_cast<double>(bytes) / static_cast<double>(base_bytes_);
  }
  return static_cast<double>(bytes) / static_cast<double>(max_bytes_[level]);
}

uint64_t WastedConsults(const FileMetaData& f) {
  return f.counters.Sum(kSegmentFilterNegatives) +
         f.counters.Sum(kSegmentFalsePositives);
}

double LevelTargets::Level0Score(const Version& v, uint64_t files,
                                 uint64_t bytes,
                                 uint64_t wasted_consults) const {
  const double by_files = Score(0, files, bytes);
  if (!read_triggered_compaction_ || files == 0) return by_files;
  // Afterwards a lookup consults one segment of the output level instead of
  // every level-0 one: if that level is empty now, the one is new.
  const uint64_t output_bytes = v.LevelBytes(Level0OutputLevel(v));
  const double saved = output_bytes > 0 ? 1.0
                                        : static_cast<double>(files - 1) /
                                              static_cast<double>(files);
  const double by_reads = static_cast<double>(wasted_consults) * saved *
                          kBytesPerWastedLevel0Consult /
                          static_cast<double>(bytes + output_bytes + 1);
  return std::max(by_files, by_reads);
}

double LevelTargets::Level0Score(const Version& v) const {
  uint64_t wasted = 0;
  if (read_triggered_compaction_) {
    for (const auto& f : v.files(0)) wasted += WastedConsults(*f);
  }
  return Level0Score(v, v.files(0).size(), v.LevelBytes(0), wasted);
}

Compaction::Compaction(std::shared_ptr<const Version> version, int level,
                       int output_level)
    : version_(std::move(version)),
      level_(level),
      output_level_(output_level) {}

uint64_t Compaction::InputBytes() const {
  uint64_t total = 0;
  for (const auto& list : inputs_) {
    for (const auto& f : list) total += f->file_size;
  }
  return total;
}

bool Compaction::IsTrivialMove() const {
  return level_ > 0 && output_level_ == level_ + 1 && inputs_[0].size() == 1 &&
         inputs_[1].empty();
}

bool Compaction::IsBaseLevelForKey(const Slice& user_key) {
  for (int level = output_level() + 1; level < kNumLevels; level++) {
    const auto& files = version_->files(level);
    while (level_ptrs_[level] < files.size()) {
      const FileMetaData& f = *files[level_ptrs_[level]];
      if (user_key.compare(UserLargest(f)) <= 0) {
        if (user_key.compare(UserSmallest(f)) >= 0) return false;
        break;
      }
      level_ptrs_[level]++;  // keys only grow: this file is behind us
    }
  }
  return true;
}

void Compaction::AddInputDeletions(VersionEdit* edit) const {
  for (const auto& f : inputs_[0]) edit->RemoveFile(level_, f->number);
  for (const auto& f : inputs_[1]) edit->RemoveFile(output_level_, f->number);
}

bool CompactionsConflict(const Compaction& a, const Compaction& b) {
  Footprint fa[2], fb[2];
  GetFootprints(a, fa);
  GetFootprints(b, fb);
  for (const Footprint& x : fa) {
    for (const Footprint& y : fb) {
      if (x.level == y.level &&
          Slice(x.smallest).compare(Slice(y.largest)) <= 0 &&
          Slice(y.smallest).compare(Slice(x.largest)) <= 0) {
        return true;
      }
    }
  }
  return false;
}

std::unique_ptr<Compaction> PickCompaction(
    const Options& options, std::shared_ptr<const Version> version,
    std::string compact_pointers[kNumLevels],
    const std::vector<const Compaction*>& running, bool level0_for_reads) {
  auto busy = [&running](const FileMetaData& f) {
    for (const Compaction* r : running) {
      for (int which = 0; which < 2; which++) {
        for (const auto& g : r->inputs(which)) {
          if (g.get() == &f) return true;
        }
      }
    }
    return false;
  };
  const LevelTargets targets(options, *version);
  // Levels with a score >= 1, most urgent first (on a tie, the deeper).
  // The last level has nowhere to go.
  std::vector<std::pair<double, int>> urgent;
  bool read_triggered = false;
  for (int level = 0; level < kNumLevels - 1; level++) {
    uint64_t files = 0, bytes = 0, wasted = 0;
    for (const auto& f : version->files(level)) {
      if (busy(*f)) continue;
      files++;
      bytes += f->file_size;
      if (level == 0 && level0_for_reads) wasted += WastedConsults(*f);
    }
    double score = targets.Score(level, files, bytes);
    if (level == 0 && level0_for_reads && score < 1.0) {
      score = targets.Level0Score(*version, files, bytes, wasted);
      read_triggered = score >= 1.0;
    }
    if (score >= 1.0) urgent.emplace_back(score, level);
  }
  std::sort(urgent.begin(), urgent.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second > y.second;
  });

  for (const auto& [score, level] : urgent) {
    const auto& files = version->files(level);
    // Level 0: the oldest segment first (Finish adds what overlaps it).
    // Deeper: rotate through the level, from the first segment after the
    // last one done.
    size_t start = 0;
    if (level > 0 && !compact_pointers[level].empty()) {
      while (start < files.size() &&
             UserLargest(*files[start]).compare(compact_pointers[level]) <= 0) {
        start++;
      }
    }
    for (size_t i = 0; i < files.size(); i++) {
      const auto& f = level == 0 ? files[files.size() - 1 - i]
                                 : files[(start + i) % files.size()];
      if (busy(*f)) continue;
      auto c = std::make_unique<Compaction>(
          version, level,
          level == 0 ? targets.Level0OutputLevel(*version) : level + 1);
      c->mutable_inputs(0)->push_back(f);
      c = Finish(std::move(c));
      if (std::any_of(running.begin(), running.end(), [&](const Compaction* r) {
            return CompactionsConflict(*c, *r);
          })) {
        continue;
      }
      if (level > 0) compact_pointers[level] = UserLargest(*f).ToString();
      if (level == 0 && read_triggered) c->set_read_triggered();
      return c;
    }
  }
  return nullptr;
}

std::unique_ptr<Compaction> CompactionForRange(
    const Options& options, std::shared_ptr<const Version> version, int level,
    const Slice* begin, const Slice* end, bool in_place) {
  int output_level = level;
  if (!in_place) {
    // Rewriting the range into each empty level on the way down would only
    // multiply the bytes written.
    output_level = level + 1;
    while (output_level < kNumLevels - 1 &&
           version->NumFiles(output_level) == 0) {
      output_level++;
    }
    if (version->NumFiles(output_level) == 0 &&
        !options.level_compaction_dynamic_level_bytes) {
      // Nothing below: static sizing fills the tree from level 1 down,
      // dynamic sizing from the last level up.
      output_level = level + 1;
    }
  }
  auto c = std::make_unique<Compaction>(version, level, output_level);
  for (const auto& f : version->files(level)) {
    if (Overlaps(*f, begin, end)) c->mutable_inputs(0)->push_back(f);
  }
  if (c->inputs(0).empty()) return nullptr;
  return Finish(std::move(c));
}

}  // namespace bloomkv
