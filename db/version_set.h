// Version and VersionSet: which segments make up the database, and the
// manifest that makes that durable.
//
// A Version is an immutable list of segments per level; readers pin one with
// a shared_ptr and read its segments without locks while newer versions are
// installed. The VersionSet owns the current version and the manifest: every
// change is an edit, appended (and synced) to the manifest before the new
// version becomes current. On open, a fresh manifest is written with a
// snapshot of the recovered state and CURRENT is switched to it atomically.
//
// Thread-safety: Version is immutable. VersionSet methods require the DB
// mutex (the DB holds its VersionSet PT_GUARDED_BY that mutex, so clang
// checks every call); LogAndApply releases it during manifest IO.
// last_sequence() may also be called without it.
#ifndef BLOOMKV_DB_VERSION_SET_H_
#define BLOOMKV_DB_VERSION_SET_H_

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bloomkv/env.h"
#include "bloomkv/status.h"
#include "db/log_writer.h"
#include "db/version_edit.h"
#include "table/segment_reader.h"
#include "util/mutex.h"
#include "util/prefix_index.h"

namespace bloomkv {

// Writes a new manifest file `fname` holding the one record `edit`, synced
// and closed. On failure the file may be left behind: the caller removes it
// (unless CURRENT may already name it).
Status WriteManifestFile(Env* env, const std::string& fname,
                         const VersionEdit& edit);

class Version;

// Adds everything v holds (its segments, level by level, and its range
// tombstones) to *edit: the snapshot edit that starts a manifest.
void AddVersionContents(const Version& v, VersionEdit* edit);

class Version {
 public:
  using FileList = std::vector<std::shared_ptr<FileMetaData>>;

  // Level 0: newest first (files may overlap). Deeper levels: ordered by
  // key range, non-overlapping.
  const FileList& files(int level) const { return files_[level]; }
  int NumFiles(int level) const {
    return static_cast<int>(files_[level].size());
  }
  uint64_t LevelBytes(int level) const;

  // The range tombstones flushed so far and not yet retired; null if none.
  const std::shared_ptr<const RangeTombstoneSet>& range_tombstones() const {
    return range_tombstones_;
  }

  // Versions of one epoch give every user key the same latest answer from
  // their segments and range tombstones: a flush, an ingest, a compaction
  // with a compaction filter and a change of the live range tombstones
  // start a new epoch; other compactions keep it. Epochs grow with each new
  // one and start at 1. The answer cache (db/answer_cache.h) stamps its
  // entries with it.
  uint64_t answers_epoch() const { return answers_epoch_; }

  // Calls consult(f, level, in_range) for each segment a point lookup of
  // user key `key` must consult, in order, until it returns true: every
  // level-0 segment, newest first, then in each deeper level the only one
  // that can hold the key (levels do not overlap): the first whose largest
  // key is >= key, or past every range the last one, which then stands for
  // the level so that counters and traces record it as skipped by key
  // range. in_range: whether key lies within f's smallest and largest user
  // keys, told by their eight-byte prefixes where those differ from key's.
  // Before the first call it prefetches every candidate's filter line for
  // `hash`: in a store whose filters outgrow the CPU caches each is a cache
  // miss, and a lookup of an absent key asks them all.
  template <typename Consult>
  void ForEachCandidate(const Slice& key, uint64_t hash,
                        Consult&& consult) const;

  // A version holding files[level] at each level (level 0 newest first,
  // deeper levels in key order), for tests of what reads versions.
  static std::shared_ptr<const Version> TEST_New(
      const std::vector<FileList>& files);

 private:
  friend class VersionSet;
  // Fills the prefix arrays from files_. Called once files_ is final.
  void IndexLevels();
  // Whether user key `key` (its UserKeyPrefix `prefix`) is >= f's smallest
  // user key (whose prefix is `smallest`), comparing the keys only when
  // the prefixes are equal.
  static bool AtLeastSmallest(const Slice& key, uint64_t prefix,
                              const FileMetaData& f, uint64_t smallest) {
    return prefix != smallest
               ? prefix > smallest
               : key.compare(ExtractUserKey(f.smallest)) >= 0;
  }
  // The same for f's largest key (prefix `largest`): key <= it.
  static bool AtMostLargest(const Slice& key, uint64_t prefix,
                            const FileMetaData& f, uint64_t largest) {
    return prefix != largest ? prefix < largest
                             : key.compare(ExtractUserKey(f.largest)) <= 0;
  }

  FileList files_[kNumLevels];
  // Below level 0, the UserKeyPrefix of each file's largest key: a lookup's
  // search of a level runs over these integers, through their bucket
  // table, and compares keys in the files only among those sharing its
  // prefix.
  PrefixIndex largest_prefixes_[kNumLevels];
  // The UserKeyPrefix of each file's smallest key, in files_ order, and
  // of each level-0 file's largest (in no key order: not a PrefixIndex).
  std::vector<uint64_t> smallest_prefixes_[kNumLevels];
  std::vector<uint64_t> level0_largest_prefixes_;
  // Bit `level` set for each level below 0 that holds files: the levels a
  // lookup searches.
  uint32_t deeper_levels_ = 0;
  std::shared_ptr<const RangeTombstoneSet> range_tombstones_;
  uint64_t answers_epoch_ = 1;
};

template <typename Consult>
void Version::ForEachCandidate(const Slice& key, uint64_t hash,
                               Consult&& consult) const {
  // Set for the levels in deeper_levels_ only.
  const FileMetaData* deeper[kNumLevels];
  bool deeper_in_range[kNumLevels];
  const uint64_t prefix = UserKeyPrefix(key);
  for (uint32_t m = deeper_levels_; m != 0; m &= m - 1) {
    const int level = std::countr_zero(m);
    const FileList& files = files_[level];
    // Files whose largest key has a smaller prefix end before key; the
    // first with a larger one ends after it.
    const auto [lo, hi] = largest_prefixes_[level].EqualRange(prefix);
    auto it =
        std::lower_bound(files.begin() + lo, files.begin() + hi, key,
                         [](const auto& f, const Slice& k) {
                           return ExtractUserKey(f->largest).compare(k) < 0;
                         });
    if (it == files.end()) {
      deeper[level] = files.back().get();  // past every range
      deeper_in_range[level] = false;
      continue;
    }
    deeper[level] = it->get();
    deeper_in_range[level] = AtLeastSmallest(
        key, prefix, **it, smallest_prefixes_[level][it - files.begin()]);
  }
  for (const auto& f : files_[0]) {
    if (f->filter != nullptr) f->filter->Prefetch(hash);
  }
  for (uint32_t m = deeper_levels_; m != 0; m &= m - 1) {
    const FileMetaData* f = deeper[std::countr_zero(m)];
    if (f->filter != nullptr) f->filter->Prefetch(hash);
  }
  for (size_t i = 0; i < files_[0].size(); i++) {
    const FileMetaData& f = *files_[0][i];
    const bool in_range =
        AtLeastSmallest(key, prefix, f, smallest_prefixes_[0][i]) &&
        AtMostLargest(key, prefix, f, level0_largest_prefixes_[i]);
    if (consult(f, 0, in_range)) return;
  }
  for (uint32_t m = deeper_levels_; m != 0; m &= m - 1) {
    const int level = std::countr_zero(m);
    if (consult(*deeper[level], level, deeper_in_range[level])) return;
  }
}

class VersionSet {
 public:
  // Called for every segment entering the set during recovery, before the
  // recovered version is published: opens its reader (or records why not).
  using SegmentOpener = std::function<void(FileMetaData*)>;

  VersionSet(std::string dbname, Env* env, SegmentOpener opener);
  VersionSet(const VersionSet&) = delete;
  VersionSet& operator=(const VersionSet&) = delete;
  ~VersionSet();

  // Reads CURRENT and replays the manifest it names.
  // NotFound if there is no CURRENT; Corruption naming the file otherwise.
  // A torn last record is dropped only when the version before it is whole;
  // any other damage is Corruption. Deletes and writes nothing.
  Status Recover();

  // Starts a fresh manifest holding the whole current state and points
  // CURRENT at it; the previous manifest becomes obsolete.
  // REQUIRES: no other thread uses the set (during Open).
  Status WriteSnapshotManifest();

  // Appends edit to the manifest (synced) and installs the resulting
  // version as current. Fills in next file number and last sequence.
  // REQUIRES: mu is the DB mutex, held; it is released during IO and held
  // again on return. Calls from several threads (a flush, compactions) are
  // serialized: each waits until the previous one has returned, then
  // applies its edit to the version that one installed.
  // After a failed append or sync, whether the edit is in the manifest is
  // unknown: that call and every later one return the error.
  Status LogAndApply(VersionEdit* edit, Mutex* mu) REQUIRES(mu);

  // REQUIRES: DB mutex held (for all below).
  std::shared_ptr<const Version> current() const { return current_; }
  // current()->NumFiles(level) without copying the pointer.
  int NumFiles(int level) const { return current_->NumFiles(level); }
  uint64_t NewFileNumber() { return next_file_number_++; }
  // Marks number as used (e.g. by a log found on disk).
  void MarkFileNumberUsed(uint64_t number) {
    if (next_file_number_ <= number) next_file_number_ = number + 1;
  }
  uint64_t log_number() const { return log_number_; }
  // The logs the manifest records (VersionEdit::AddLog) not older than
  // log_number(): number -> bytes known synced (0: none yet).
  const std::map<uint64_t, uint64_t>& recorded_logs() const {
    return recorded_logs_;
  }
  // Whether the manifest names log `number`: as the log number, or as a
  // recorded log.
  bool KnowsLog(uint64_t number) const {
    return number == log_number_ || recorded_logs_.count(number) != 0;
  }
  uint64_t manifest_number() const { return manifest_number_; }
  // Readers also load it without the mutex: it is stored (release) only
  // once the writes it covers are in the memtable.
  SequenceNumber last_sequence() const {
    return last_sequence_.load(std::memory_order_acquire);
  }
  void SetLastSequence(SequenceNumber s) {
    last_sequence_.store(s, std::memory_order_release);
  }

  // Adds the numbers of all segments in any live version (current, or
  // pinned by a reader or iterator) to *live.
  void AddLiveFiles(std::set<uint64_t>* live);

 private:
  // Applies edit to base, producing a new version.
  // Corruption if the edit refers to files that do not exist.
  Status Apply(const Version& base, const VersionEdit& edit,
               std::shared_ptr<Version>* result) const;
  void Install(std::shared_ptr<Version> v);
  // Takes in the logs edit records, then forgets those older than
  // log_number_ (covered by segments).
  void RecordLogs(const VersionEdit& edit);
  // A damaged last manifest record is forgiven as a torn append only if the
  // version before it is still whole: every segment opens and its log
  // exists. Otherwise the edit was durable and the damage hides it.
  Status CheckTornTailVersion(const Version& v) const;

  const std::string dbname_;
  Env* const env_;
  const SegmentOpener opener_;

  uint64_t next_file_number_ = 2;
  uint64_t manifest_number_ = 0;
  uint64_t log_number_ = 0;
  std::map<uint64_t, uint64_t> recorded_logs_;
  std::atomic<SequenceNumber> last_sequence_{0};
  uint64_t last_answers_epoch_ = 1;  // the newest version's, or an older one's

  std::unique_ptr<WritableFile> manifest_file_;
  std::unique_ptr<log::Writer> manifest_log_;
  Status manifest_error_;  // sticky: set by a failed LogAndApply
  // A LogAndApply is writing the manifest (without the DB mutex); the next
  // one waits on manifest_cv_.
  bool writing_manifest_ = false;
  CondVar manifest_cv_;

  std::shared_ptr<const Version> current_;
  std::list<std::weak_ptr<const Version>> versions_;  // every version made
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_VERSION_SET_H_
