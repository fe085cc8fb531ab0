// DBImpl: the database engine behind the DB interface.
//
// Writes: group commit. Concurrent writers queue up; the writer at the front
// appends every queued batch as one WAL record, syncs once if any of them
// asked for it, and inserts them into the memtable. When the memtable is
// full it becomes immutable, a new WAL is started, and the flush thread
// writes the immutable memtable into a level-0 segment. While level 0 is
// above the slowdown trigger, the front writer first sleeps off what its
// group's bytes cost at a rate that falls from Options::delayed_write_rate
// as level 0 grows (DelayedWriteRate, WriteDelay); at the
// stop trigger, writers wait for compaction.
//
// Background work: one thread flushes, max_background_compactions threads
// compact. A flush never waits for a compaction. Compactions that run at
// once never conflict (CompactionsConflict); running_compactions_ lists
// them, and their unfinished outputs are in pending_outputs_, so that
// DeleteObsoleteFiles, run by any of them, deletes nothing in use. A manual
// compaction starts once it conflicts with no running one, and no automatic
// one starts while it waits. Manifest edits are serialized by
// VersionSet::LogAndApply.
//
// Errors: a failed write or sync of the WAL or the manifest, and any failed
// flush or compaction, becomes the sticky bg_error_: from then on every
// write, Flush and CompactRange returns it, no file is deleted, and every
// waiter is woken at once. Reads go on (docs/durability.md).
//
// Reads: a Get pins the current read view (memtable, immutable memtable,
// version; db/read_view.h) without the mutex, then reads the memtable, the
// immutable memtable, then the candidate segments newest first
// (Version::ForEachCandidate), each skipped by key range or by filter
// before any IO (SegmentLookup; docs/design.md, "Read path"). Every change
// of those three installs a new view
// (InstallReadView). Read statistics are sharded per thread
// (util/sharded_counter.h), so concurrent Gets share no written cache line.
//
// The code is split by concern: db_impl.cc (open, recovery, close),
// db_impl_write.cc, db_impl_background.cc (flush and compaction threads),
// db_impl_compaction.cc, db_impl_read.cc, db_impl_properties.cc,
// db_impl_files.cc (obsolete files) and db_impl_checkpoint.cc.
//
// Thread-safety: thread-safe. mu_ guards the mutable state marked
// GUARDED_BY(mu_); the log and the write group belong to the writer at the
// front of the queue (the front_writer_ role). Clang checks both
// (util/mutex.h). Get and NewIterator never take mu_.
#ifndef BLOOMKV_DB_DB_IMPL_H_
#define BLOOMKV_DB_DB_IMPL_H_

#include <atomic>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/debug.h"
#include "bloomkv/env.h"
#include "bloomkv/write_batch.h"
#include "db/answer_cache.h"
#include "db/compaction.h"
#include "db/info_log.h"
#include "db/log_writer.h"
#include "db/memtable.h"
#include "db/read_view.h"
#include "db/segment_lookup.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "db/write_delay.h"
#include "table/segment_reader.h"
#include "util/cache.h"
#include "util/mutex.h"
#include "util/sharded_counter.h"

namespace bloomkv {

struct CheckpointFiles;

// Within kMaxKeySize / kMaxValueSize; InvalidArgument saying why otherwise.
Status ValidateKey(const Slice& key);
Status ValidateValue(const Slice& value);
// A DeleteRange's bounds: each within kMaxKeySize, begin <= end.
Status ValidateRange(const Slice& begin, const Slice& end);
// A new memtable, owned by the shared_ptr (MemTable is reference-counted by
// hand, its iterators holding references too; the pointer owns one).
std::shared_ptr<MemTable> NewMemTable();

class DBImpl final : public DB {
 public:
  DBImpl(const Options& options, std::string dbname, bool read_only);
  ~DBImpl() override;

  Status Put(const WriteOptions& options, const Slice& key,
             const Slice& value) override;
  Status Delete(const WriteOptions& options, const Slice& key) override;
  Status DeleteRange(const WriteOptions& options, const Slice& begin,
                     const Slice& end) override;
  Status Write(const WriteOptions& options, WriteBatch* updates) override;
  Status Get(const ReadOptions& options, const Slice& key,
             std::string* value) override;
  std::vector<Status> MultiGet(const ReadOptions& options,
                               const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) override;
  const Snapshot* GetSnapshot() override;
  void ReleaseSnapshot(const Snapshot* snapshot) override;
  Status Flush() override;
  bool GetProperty(const Slice& property, std::string* value) override;
  void GetApproximateSizes(const Range* ranges, int n,
                           uint64_t* sizes) override;
  DbStats GetStats() override;
  std::vector<SegmentInfo> GetSegmentInfo() override;
  Status CompactRange(const Slice* begin, const Slice* end) override;
  Status SyncWAL() override;
  // db_impl_ingest.cc.
  Status IngestSegments(const std::vector<std::string>& files,
                        const IngestOptions& options) override
      EXCLUDES(mu_);

  // Pins the current version and opens the logs it does not cover, for a
  // checkpoint (db_impl_checkpoint.cc). Takes mu_.
  Status PinCheckpointFiles(CheckpointFiles* files);

  // include/bloomkv/debug.h (db_impl_read.cc). REQUIRES: begin <= end when
  // both are set.
  Status ForEachKeyVersion(const Slice* begin, const Slice* end,
                           const std::function<bool(const KeyVersion&)>& fn);

 private:
  friend class DB;
  struct Writer;
  struct SnapshotImpl;
  // A reference to the current read view, for a reader that outlives one
  // call (an iterator, a dump); Unref() it when done.
  ReadView* RefCurrentView();
  // The memtables' and segments' entries of view, merged in internal-key
  // order (every version and deletion marker), for NewIterator and
  // ForEachKeyVersion. The caller keeps view alive as long as the iterator.
  std::unique_ptr<Iterator> MergedIterator(const ReadView& view,
                                           const SegmentReadOptions& sro);
  // DB-wide counters of writes, flushes and compactions: bumped a few
  // times per write group or background job, never by a read.
  struct Counters {
    std::atomic<uint64_t> flushes{0};
    std::atomic<uint64_t> bytes_flushed{0};
    std::atomic<uint64_t> user_bytes_written{0};
    std::atomic<uint64_t> compactions{0};
    std::atomic<uint64_t> trivial_moves{0};
    std::atomic<uint64_t> read_triggered_compactions{0};
    std::atomic<uint64_t> compaction_bytes_read{0};
    std::atomic<uint64_t> compaction_bytes_written{0};
    std::atomic<uint64_t> compaction_filter_drops{0};
    // Entries compactions dropped because a range tombstone covers them.
    std::atomic<uint64_t> compaction_range_drops{0};
    std::atomic<uint64_t> stall_micros{0};  // the two below together
    std::atomic<uint64_t> write_delay_micros{0};
    std::atomic<uint64_t> write_stop_micros{0};
  };

  // Opens or creates the database; called once by DB::Open.
  Status Open() EXCLUDES(mu_);
  Status NewDB();
  // Replays one WAL into memtables, flushing them to level-0 segments
  // (recorded in *edit) as they fill. With edit == nullptr (read-only)
  // everything goes into mem_ and nothing is written. A torn tail is
  // dropped; *torn_end (else OK) says where, as the Corruption it is if a
  // later log holds the sync mark.
  Status ReplayLog(uint64_t number, SequenceNumber* max_sequence,
                   VersionEdit* edit, Status* torn_end) REQUIRES(mu_);
  // At close: syncs the logs still needed and records their lengths in the
  // manifest (best effort).
  void RecordLogsAtClose() EXCLUDES(mu_);
  // Replays logs in order. After a log that ends torn, the later ones are
  // dropped (their writes were not synced either), unless one of them holds
  // the sync mark: then the torn end is damage (Corruption with
  // paranoid_checks).
  Status ReplayLogs(const std::vector<uint64_t>& logs,
                    SequenceNumber* max_sequence, VersionEdit* edit)
      REQUIRES(mu_);
  // Whether log `number` holds the mark PrepareSyncedWrite writes.
  Status LogHoldsSyncMark(uint64_t number, bool* marked);
  Status OpenReadOnly(const std::vector<uint64_t>& logs) REQUIRES(mu_);
  // Each segment the table cache holds open may take a file descriptor
  // (pread): raises the process's soft descriptor limit to
  // max_open_files plus room for the application where the hard limit
  // allows, and logs what it did or could not do.
  void ReserveFileDescriptors() const;
  // Loads a segment entering the database (TableCache::Load), or records
  // in f why it cannot.
  void OpenSegment(FileMetaData* f) const;
  // Writes mem to segment `number`, syncs it and its directory entry, and
  // opens it. *meta is null when mem is empty.
  // filter_policy: from FilterPolicyForOutput, chosen under mu_.
  Status WriteLevel0Segment(MemTable* mem, uint64_t number,
                            std::shared_ptr<const FilterPolicy> filter_policy,
                            std::shared_ptr<FileMetaData>* meta);
  // The filter policy for flushing mem to level 0.
  std::shared_ptr<const FilterPolicy> FlushFilterPolicy(const MemTable& mem)
      REQUIRES(mu_);

  // Write() for a batch whose keys and values are known to be within the
  // limits (Put and Delete check their one key and value themselves, so
  // their batch is not parsed once more only to check it again).
  Status WriteValidated(const WriteOptions& options, WriteBatch* updates)
      EXCLUDES(mu_);

  // By the front writer (for all below): makes room in the memtable,
  // switching to a new one (and log) when it is full or force is set;
  // waits while the previous one is still being flushed or level 0 is full.
  Status MakeRoomForWrite(bool force) REQUIRES(mu_, front_writer_);
  WriteBatch* BuildBatchGroup(Writer** last_writer)
      REQUIRES(mu_, front_writer_);
  Status NewLogFile() REQUIRES(mu_, front_writer_);
  // Before a synced write, by the front writer with mu_ released: syncs the
  // current log's directory entry if need be, and the closed logs; records
  // in the manifest the current log (when record_log: the manifest does not
  // name it yet) and the closed logs' synced sizes, taking mu_ for that;
  // then appends to the current log an empty batch (sequence `sequence`)
  // that tells recovery the closed logs were synced.
  Status PrepareSyncedWrite(SequenceNumber sequence, bool record_log)
      REQUIRES(front_writer_) EXCLUDES(mu_);
  // Closes the closed logs a flush has made obsolete.
  void PruneClosedLogs() REQUIRES(mu_, front_writer_);
  // Makes s (not OK) the sticky background error, unless one is already
  // recorded, and wakes everything that waits on background work.
  void RecordBackgroundError(const Status& s) REQUIRES(mu_);
  // Sleeps off the delay a write group of `bytes` costs while level 0 is
  // above the slowdown trigger (mu_ released meanwhile).
  // Returns bg_error_ as it is after the sleep.
  Status DelayWrite(uint64_t bytes) REQUIRES(mu_);
  void FlushThread() EXCLUDES(mu_);
  void CompactionThread() EXCLUDES(mu_);
  // Logs a write slowdown or stop beginning or ending against what was last
  // logged, once a flush or a compaction has installed its change to level
  // 0 (before its obsolete files are deleted without mu_).
  void LogLevel0State() REQUIRES(mu_);
  // Releases mu_ while the segment is written.
  Status FlushImmutable() REQUIRES(mu_);
  // Releases mu_ while the files are deleted.
  void DeleteObsoleteFiles() REQUIRES(mu_);

  // Compaction (db_impl_compaction.cc). Each releases mu_ while it reads
  // and writes segments.
  Status RunCompaction(Compaction* c) REQUIRES(mu_);
  Status MergeCompactionInputs(Compaction* c, VersionEdit* edit)
      REQUIRES(mu_);
  // The value dictionary of c's first input segment that has one (the
  // output level's inputs first), or null; its outputs are written with it.
  std::shared_ptr<const ValueDictionary> InputValueDictionary(
      const Compaction& c) EXCLUDES(mu_);
  // True while a flush or compaction is queued or running (and no
  // background error stops them).
  bool HasBackgroundWork() const REQUIRES(mu_);
  // Runs the pending manual compaction, or the most urgent automatic one
  // that conflicts with no running compaction; false if there was none.
  bool BackgroundCompaction() REQUIRES(mu_);
  // Ends an ingest's claims on key ranges (registered as compactions) and
  // its reserved file numbers, and wakes whoever waits on either.
  void EndIngestClaims(const std::vector<std::unique_ptr<Compaction>>& claims,
                       const std::vector<uint64_t>& numbers) REQUIRES(mu_);
  // Registers c in running_compactions_ while it runs.
  Status RunRegisteredCompaction(Compaction* c) REQUIRES(mu_);
  Status RunManualCompaction(int level, const Slice* begin, const Slice* end,
                             bool in_place) EXCLUDES(mu_);
  std::string LevelsTable() EXCLUDES(mu_);

  // The sequence a read sees: options.snapshot's, or the last published.
  // REQUIRES: the caller has pinned its read view first.
  SequenceNumber ReadSequence(const ReadOptions& options) const
      NO_THREAD_SAFETY_ANALYSIS;
  SegmentReadOptions SegmentOptionsFor(const ReadOptions& options) const;
  // One point lookup in a pinned view: memtables, then segments; the
  // status Get returns. trace may be null. latest: snapshot is the latest
  // sequence (no ReadOptions::snapshot), so the row cache may answer.
  Status LookUp(const ReadView& view, const SegmentReadOptions& sro,
                const Slice& key, uint64_t hash, SequenceNumber snapshot,
                bool latest, std::string* value, GetTrace* trace,
                size_t thread);
  // Each thread's Gets (and MultiGet keys) between two looks at whether the
  // lookups that consulted level 0 in vain call for its compaction
  // (Options::read_triggered_compaction).
  static constexpr uint64_t kLevel0ReadCheckInterval = 1 << 16;
  // Whether the n Gets that took this thread's count to `gets` crossed a
  // multiple of kLevel0ReadCheckInterval.
  static bool Level0ReadCheckDue(uint64_t gets, uint64_t n) {
    return gets / kLevel0ReadCheckInterval !=
           (gets - n) / kLevel0ReadCheckInterval;
  }
  // That look, at v (pinned by the caller's view): if they do, asks the
  // compaction threads for it. Takes mu_ only then.
  void MaybeCompactLevel0ForReads(const Version& v) EXCLUDES(mu_);

  // Range tombstones (db/range_tombstones.h). Whether an entry of key with
  // sequence `sequence` is deleted by a range tombstone of view, as seen at
  // snapshot.
  static bool CoveredByRangeTombstone(const ReadView& view, const Slice& key,
                                      SequenceNumber sequence,
                                      SequenceNumber snapshot);
  // The range tombstones of view's memtables and version with sequence <=
  // snapshot, as one set; null if none.
  static std::shared_ptr<const RangeTombstoneSet> RangeTombstonesOf(
      const ReadView& view, SequenceNumber snapshot);
  // Puts mem's range tombstones into *edit, the edit that records mem's
  // segment.
  static void AddFlushedRangeTombstones(const MemTable& mem,
                                        VersionEdit* edit);
  // Forgets (in one manifest edit) every flushed range tombstone that no
  // longer covers anything: each segment overlapping its range had it
  // applied (FileMetaData::range_deletions_applied). After each flush and
  // compaction.
  void RetireRangeTombstones() REQUIRES(mu_);

  // Publishes mem_, imm_ and the current version as the view new reads
  // pin. Called after every change of any of them.
  void InstallReadView() REQUIRES(mu_);

  Options options_;  // sanitized: env and cache set
  Env* const env_;
  const bool read_only_;
  const std::string dbname_;
  std::unique_ptr<Cache> block_cache_;
  std::unique_ptr<Cache> row_cache_;  // null unless row_cache_capacity > 0
  // Null unless answer_cache_capacity > 0.
  std::unique_ptr<AnswerCache> answer_cache_;
  std::unique_ptr<TableCache> table_cache_;  // uses block_cache_
  std::unique_ptr<FileLock> db_lock_;
  std::unique_ptr<Counters> counters_;
  // Where Log() lines go: options_.info_log, which the constructor points at
  // info_log_file_ (LOG, started by Open once it holds the lock) when the
  // application set none; null for a read-only open without one.
  Logger* info_log_ = nullptr;
  std::shared_ptr<InfoLogFile> info_log_file_;
  ReadCounters read_counters_;

  Mutex mu_;
  CondVar flush_cv_;    // wakes the flush thread
  CondVar bg_work_cv_;  // wakes the compaction threads
  // A flush or compaction finished (or failed).
  CondVar bg_done_cv_;
  // Held by the writer at the front of writers_ from the moment it gets
  // there until it has handed the queue on (and by Open, before any writer
  // can come): the one thread that appends to the log and inserts into the
  // memtable, partly without mu_.
  ThreadRole front_writer_;
  std::thread flush_thread_;
  std::vector<std::thread> compaction_threads_;
  bool shutting_down_ GUARDED_BY(mu_) = false;
  Status bg_error_ GUARDED_BY(mu_);
  // Level-0 segments when LogLevel0State last looked: flushes and
  // compactions run side by side, so each compares with this rather than
  // with what it saw when it started.
  int level0_logged_ GUARDED_BY(mu_) = 0;
  // Lookups found that level 0 has cost them more than compacting it would
  // (MaybeCompactLevel0ForReads): the next PickCompaction scores it so,
  // and clears this.
  bool level0_for_reads_ GUARDED_BY(mu_) = false;
  std::atomic<bool> has_bg_error_{false};  // !bg_error_.ok(), read lock-free

  // Replaced only by the front writer. It inserts into the memtable
  // without mu_ through a pointer taken under it.
  std::shared_ptr<MemTable> mem_ GUARDED_BY(mu_);
  std::shared_ptr<MemTable> imm_ GUARDED_BY(mu_);  // being flushed
  // The WAL: used by the front writer without mu_, replaced by it with mu_
  // held.
  std::unique_ptr<WritableFile> log_file_ GUARDED_BY(front_writer_);
  std::unique_ptr<log::Writer> log_ GUARDED_BY(front_writer_);
  uint64_t log_number_ GUARDED_BY(mu_) = 0;
  // Logs a memtable switch closed without syncing them, oldest first: only
  // unsynced writes went into them since their last sync. The next synced
  // write syncs them before its own log, and marks that log (see
  // PrepareSyncedWrite). Used like log_, and pruned (PruneClosedLogs) by the
  // front writer with mu_ held.
  struct ClosedLog {
    uint64_t number;
    uint64_t length;  // the log's bytes when it was closed
    std::unique_ptr<WritableFile> file;
  };
  std::vector<ClosedLog> closed_logs_ GUARDED_BY(front_writer_);
  // Whether the current log's directory entry is known durable.
  bool log_entry_synced_ GUARDED_BY(front_writer_) = true;

  std::deque<Writer*> writers_ GUARDED_BY(mu_);
  WriteBatch group_batch_ GUARDED_BY(front_writer_);  // the merged group
  std::list<SequenceNumber> snapshots_ GUARDED_BY(mu_);  // oldest first
  std::set<uint64_t> pending_outputs_ GUARDED_BY(mu_);
  // Numbers of the obsolete files a DeleteObsoleteFiles is deleting now.
  std::set<uint64_t> deleting_ GUARDED_BY(mu_);
  std::vector<const Compaction*> running_compactions_ GUARDED_BY(mu_);
  WriteDelay write_delay_ GUARDED_BY(mu_);
  // Every use of the version set is under mu_, except the lock-free load
  // of the last sequence (ReadSequence).
  std::unique_ptr<VersionSet> versions_ PT_GUARDED_BY(mu_);

  struct ManualCompaction {
    int level = 0;
    const Slice* begin = nullptr;
    const Slice* end = nullptr;
    bool in_place = false;
    // Set by the compaction thread while it works on the request without
    // mu_; the waiter may leave only when it is false.
    bool running = false;
    bool done = false;
    Status status;
  };
  ManualCompaction* manual_compaction_ GUARDED_BY(mu_) = nullptr;
  std::string compact_pointers_[kNumLevels] GUARDED_BY(mu_);
  std::atomic<bool> shutting_down_flag_{false};  // shutting_down_, lock-free

  // Last member: destroyed first, while the block cache its segments use is
  // still alive.
  ReadViewCache read_views_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_DB_IMPL_H_
