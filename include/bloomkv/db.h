// DB: the embeddable key-value store.
//
//   std::unique_ptr<bloomkv::DB> db;
//   bloomkv::Options options;
//   options.create_if_missing = true;
//   bloomkv::Status s = bloomkv::DB::Open(options, "/path/to/db", &db);
//   s = db->Put(bloomkv::WriteOptions(), "aZ3kQ9x", "https://example.com/");
//
// Keys are 1 to kMaxKeySize bytes, values 0 to kMaxValueSize bytes, both
// arbitrary (NUL included); larger or empty keys get InvalidArgument.
// Thread-safety: a DB is safe for concurrent use by many threads without
// external synchronization. Iterators and snapshots it hands out must be
// released before the DB is destroyed.
#ifndef BLOOMKV_INCLUDE_DB_H_
#define BLOOMKV_INCLUDE_DB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/iterator.h"
#include "bloomkv/options.h"
#include "bloomkv/slice.h"
#include "bloomkv/statistics.h"
#include "bloomkv/status.h"

namespace bloomkv {

class WriteBatch;

constexpr size_t kMaxKeySize = 64 << 10;    // 64 KiB
constexpr size_t kMaxValueSize = 32 << 20;  // 32 MiB

// An immutable point-in-time view of the database; see DB::GetSnapshot.
class Snapshot {
 protected:
  virtual ~Snapshot();
};

// Keys from start (included) to limit (not included); see
// DB::GetApproximateSizes.
struct Range {
  Range() = default;
  Range(const Slice& s, const Slice& l) : start(s), limit(l) {}
  Slice start;
  Slice limit;
};

class DB {
 public:
  // Opens (or, with create_if_missing, creates) the database in directory
  // `path`. Only one process may have a database open at a time.
  static Status Open(const Options& options, const std::string& path,
                     std::unique_ptr<DB>* db);

  // Opens an existing database without changing a byte of it: no lock is
  // taken, no file is written, unflushed log records are replayed into
  // memory only. Writes and Flush() return NotSupported. Meant for tools
  // that inspect a database; a writer changing it meanwhile may make reads
  // fail.
  static Status OpenForReadOnly(const Options& options, const std::string& path,
                                std::unique_ptr<DB>* db);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  // Waits for background work, then closes every file. A database opened
  // for writing first syncs the logs that still hold unflushed writes and
  // records their lengths in the manifest (one fsync of each and one of
  // the manifest), so that a later cut of, or damage to, their last
  // records is Corruption at the next Open instead of passing for a torn
  // write (docs/durability.md). Errors here are logged, not returned.
  virtual ~DB();

  virtual Status Put(const WriteOptions& options, const Slice& key,
                     const Slice& value) = 0;
  // Removing a key that does not exist is not an error.
  virtual Status Delete(const WriteOptions& options, const Slice& key) = 0;
  // Removes every key in [begin, end) that exists now: reads at this point
  // and later no longer find them (snapshots taken before still do), while
  // keys written afterwards are not affected. One record however many keys
  // it covers; the space they take is reclaimed as compactions reach them
  // (CompactRange(begin, end) does it at once). begin may be empty (from
  // the first key); begin == end deletes nothing. InvalidArgument if
  // begin > end or either is over the key-size limit.
  virtual Status DeleteRange(const WriteOptions& options, const Slice& begin,
                             const Slice& end) = 0;
  // Applies every update of the batch atomically.
  virtual Status Write(const WriteOptions& options, WriteBatch* updates) = 0;

  // On success stores the value in *value. NotFound if the key is absent.
  virtual Status Get(const ReadOptions& options, const Slice& key,
                     std::string* value) = 0;

  // Get for every key of a batch, as of one snapshot (options.snapshot, or
  // one taken for the whole batch): (*values)[i] and the returned status i
  // answer keys[i] exactly as Get would, and a batch pins the read state
  // once. options.trace is ignored. *values is resized to keys.size().
  virtual std::vector<Status> MultiGet(const ReadOptions& options,
                                       const std::vector<Slice>& keys,
                                       std::vector<std::string>* values) = 0;

  // An iterator over user keys and values, as of options.snapshot (or now).
  // The caller deletes it before the DB.
  virtual std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) = 0;

  // The current state, kept readable until ReleaseSnapshot.
  virtual const Snapshot* GetSnapshot() = 0;
  virtual void ReleaseSnapshot(const Snapshot* snapshot) = 0;

  // Writes the memtable to a new segment and waits until it is durable.
  virtual Status Flush() = 0;

  // Makes every write acknowledged so far durable (fsyncs the write-ahead
  // log), like a Write with WriteOptions::sync and an empty batch. Useful
  // after a run of non-synced writes. An error here is sticky, as for a
  // failed synced write: later writes return it until the DB is reopened.
  virtual Status SyncWAL() = 0;

  // Compacts every segment holding keys in the user-key range
  // [*begin, *end] down to the deepest level that holds data, dropping
  // overwritten values, tombstones and (with a compaction filter) filtered
  // entries, and rebuilding each output's filter for exactly the keys it
  // keeps. nullptr means unbounded: CompactRange(nullptr, nullptr) compacts
  // the whole database. Flushes the memtable first.
  virtual Status CompactRange(const Slice* begin, const Slice* end) = 0;

  // Adds segment files written by SegmentWriter (segment_writer.h) to the
  // database in one manifest edit: after a successful return every key of
  // every file reads back, durably; after a failure the database is as it
  // was (no segment added, no file left in its directory), unless the
  // manifest write itself failed: that is the sticky background error of
  // any failed manifest write, and the next Open finds the files either
  // listed or obsolete (and deletes them).
  //
  // Rules, checked before anything changes:
  //   * every file exists (InvalidArgument otherwise), opens and reads back
  //     whole with every checksum right and its keys in strictly increasing
  //     order (Corruption naming the file otherwise; a failed read is an
  //     IOError), all with sequence number 0 and type "value", as
  //     SegmentWriter writes them, within the key and value limits, with a
  //     filter the database's filter_policy reads when it has one
  //     (InvalidArgument otherwise);
  //   * the files' key ranges [smallest, largest] overlap neither one
  //     another nor anything the database holds (InvalidArgument naming
  //     what overlaps): any entry (value or tombstone) of the memtable or
  //     the immutable memtable, or the key range of any segment at any
  //     level. So an ingested key has no other
  //     version in the database, and sequence number 0 can neither shadow a
  //     newer write nor be shadowed by an older one.
  // Each file then goes to the last level (6): with nothing overlapping it
  // anywhere, that is the deepest level where it fits, and it is where a
  // compaction would have taken it. Empty files are accepted and add
  // nothing. In practice: ingest into a new database, or key ranges the
  // database does not use yet (e.g. a new prefix).
  //
  // The files are hard-linked into the database directory under new file
  // numbers (copied when linking fails, e.g. across filesystems), fsynced,
  // the directory fsynced, and only then is the manifest edit written: it
  // is the commit point. A crash before it leaves at most unreferenced
  // segment files, which the next Open deletes. options.move_files removes
  // the sources after the commit.
  //
  // Concurrency: safe with concurrent reads and writes. Reads see either
  // none of the ingested keys or all of them. A write into the files' key
  // ranges while IngestSegments runs either makes it fail (InvalidArgument,
  // nothing changed) or takes effect after the ingest (its value or
  // tombstone shadows the ingested entry, as any later write does): a
  // write concurrent with the call is never lost. Snapshots: an ingested
  // key has sequence number 0, so a snapshot taken before the ingest sees
  // the ingested keys too once it has committed. Nothing such a snapshot
  // has seen changes (no key it could read existed in those ranges); it
  // only gains keys. Waits for running compactions that read or write in a
  // file's range, and no compaction starts there until it returns.
  // NotSupported on a read-only database; a sticky background error is
  // returned as it is.
  virtual Status IngestSegments(const std::vector<std::string>& files,
                                const IngestOptions& options) = 0;

  // Properties, as text:
  //   "bloomkv.stats"     DB-wide read and filter counters (see DbStats)
  //   "bloomkv.segments"  one line per segment: level, number, entries,
  //                       size, filter bits per key, filter outcomes,
  //                       measured and theoretical false-positive rates
  //   "bloomkv.levels"    one line per level: segments, entries, bytes,
  //                       target size (0 for level 0 and for levels above
  //                       the base level, which are kept empty; see
  //                       Options::level_compaction_dynamic_level_bytes),
  //                       compaction score, filter bits per key, the
  //                       false-positive rate a lookup of an absent key
  //                       pays at that level in theory and as measured
  //                       since Open ("-" before any), the lookups of
  //                       absent keys its filters answered, and the
  //                       filter policies that wrote its segments (last
  //                       column; names joined by '+', "-" for none)
  //   "bloomkv.num-files-at-level<N>"
  //   "bloomkv.approximate-memory-usage"
  //   "bloomkv.resource-usage"  bytes of memtables, filters, index blocks,
  //                       block cache and row cache, segments and open
  //                       segment files
  //   "bloomkv.compaction-pending"  "1" while a flush or compaction is
  //                       queued or running, else "0"
  //   "bloomkv.num-range-tombstones"  DeleteRange records still kept (in
  //                       memtables and in the manifest): each is
  //                       forgotten once no segment holds a key it covers
  // False if the property is unknown.
  virtual bool GetProperty(const Slice& property, std::string* value) = 0;

  // For each of the n ranges, about how many bytes of segment files hold
  // its keys: sizes[i] for ranges[i], as stored (compressed). A segment
  // inside a range counts whole; one a range cuts counts its data blocks
  // from the one the range's start falls in to the one its limit falls in,
  // found in the segment's index in memory (no IO), so the estimate is
  // good to about a block per segment and level. The memtables are not
  // counted (as RocksDB's default). A range whose start is not below its
  // limit is 0.
  virtual void GetApproximateSizes(const Range* ranges, int n,
                                   uint64_t* sizes) = 0;

  // DB-wide counters since Open.
  virtual DbStats GetStats() = 0;

  // Every live segment, level by level (level 0 newest first).
  virtual std::vector<SegmentInfo> GetSegmentInfo() = 0;
};

// Deletes the database in `path`: its files and then the directory if empty.
// Fails if the database is open.
Status DestroyDB(const std::string& path, const Options& options);

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_DB_H_
