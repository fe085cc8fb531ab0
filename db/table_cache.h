// TableCache: the open segment files of one database, at most `capacity` of
// them at once, least recently used closed first.
//
// What stays in memory for every live segment, open or not, is what Load
// read and checked once: its properties, index block and filter
// (FileMetaData::meta and ::filter). A lookup asks the filter first and
// comes here only on a positive, so a lookup of an absent key costs exactly
// what it did when every file stayed open: no lock, no hash table, no file.
// A reopen for a hit is one open(2) and one stat: the reader is built on the
// kept metadata and reads only the data block the lookup needs, so a
// capacity far below the segment count costs descriptors' churn, not
// metadata reads (a reopen that re-read the index cost 2.9 reads per hit at
// 10^7 links with 54 files open). What the capacity bounds is descriptors.
//
// Reopens: a file that served fewer than kMapAfterPins pins the last time
// it was open is reopened with Env::NewShortLivedRandomAccessFile, which
// the default Env reads with pread(2) instead of mapping: it will most
// likely be closed again after a lookup or two, and a mapping costs an
// mmap, a page fault and an munmap that interrupts the process's other
// cores. Any other (re)open maps as the Env does. A file reopened this way
// that turns busy (kRemapAfterPins pins while open: the segments now
// fitting in the capacity, say) is closed at the next release that finds
// it unpinned, so that its next reopen maps it. With 10 of 32 segments
// open (1M links in tmpfs), the store read mapped against read with pread
// gave 49 against 129 k/s hits with one thread, 31 against 219 k/s with
// two; with every segment open, 837 k/s mapped and 316 with pread, 2 µs
// more per hit. A mapping pays for itself after about nine lookups on one
// thread, more on two; hence 16 (docs/benchmarks.md, "Reopened segments
// read with pread"). Pins are counted only once the cache tracks use
// (below), which it does before it closes any file for room.
//
// A Handle pins an open reader; a pinned file is never closed. Closing
// happens when a file must make room (the least recently used unpinned one
// goes), when the last pin of a file over the budget goes, and on Evict.
// Files are opened before they are counted and closed before they stop
// being counted, so open_files() is never below the descriptors held. When
// every open file is pinned (many level-0 segments under one iterator, a
// compaction and concurrent lookups), the cache opens one more rather than
// wait or fail, and shrinks back to the capacity as pins are released.
//
// Memory: with a meta_memory_limit, Load keeps a segment's index block
// and filter in memory (FileMetaData::meta, ::filter) only while the
// segments Loaded and not yet evicted hold at most that many bytes of
// them; the first come keep theirs. A segment past it keeps its filter
// alone if that fits (a filter saves a data block read for every lookup of
// an absent key; an index is read only by a lookup that reads a data block
// anyway), or nothing: it gets a paged SegmentMeta (everything was read and
// checked all the same). A lookup then pins its file and lets the reader
// read the index, and a paged filter (FileMetaData::filter null), through
// the block cache: at least a pin and, unless the cache holds them, a read
// of each paged block. It never fails for want of memory.
//
// Errors: a file that cannot be (re)opened gives Corruption or IOError
// naming it (a missing file, or one whose size differs from the manifest's,
// is Corruption), never NotFound; failures are not cached, the next use
// tries again. A segment whose Load failed (FileMetaData::open_status) is
// never opened here: its error is returned.
//
// A lookup of an open file takes no lock: Load leaves the file's entry in
// FileMetaData::table_cache_entry, and Acquire pins it with one atomic
// increment of its reference count, which counts the pins plus one while
// the cache keeps the file open. The cache closes a file only by taking
// that count from 1 (open, unpinned) to 0, so a pin and a close never both
// succeed.
//
// AcquireForLookup pins for the length of one lookup without writing the
// entry at all: it publishes the entry in one of kLookupSlots slots (the
// caller's thread index picks it; each slot has a cache line of its own),
// then checks that the file is open. A closer takes the count from 1 to 0
// and then reads the slots; if a slot names the entry it restores the
// count and leaves the file open. Both sides use sequentially consistent
// operations, so either the lookup sees the count at 0 (and takes the
// locked path) or the closer sees the slot. Reference-counted pins from
// two threads write one cache line per file; slot pins write only the
// caller's line, so lookups from several cores on a few hot files scale.
// A slot held by another thread (more threads than slots) falls back to
// the reference count.
// Measured against reference-counted pins only (1M links, all cached,
// `kvbench --cache_mb=256 --threads=1,2 --warmup --repeat=3`, 2-core VM):
// in two rounds one thread's cached hits ran at 567 and 565 k/s with slots
// against 489 and 746 k/s without, two threads' at 1,104 and 1,097 against
// 1,103 and 1,384 k/s; in four more rounds of 2 s phases, the two binaries
// taking turns, 485, 608, 484, 814 k/s against 554, 499, 572, 630 (one
// thread) and 872, 959, 853, 1,345 against 791, 829, 1,079, 1,089 (two).
// On two cores the processes spread far more than the variants differ:
// the shared count the slots avoid is written by at most two threads
// there, so what they are for, several cores reading a few hot files, is
// not measurable on this machine. They are kept for that case.
//
// Recency: once the open files have reached 7/8 of the capacity, each pin
// stamps the entry with the monotonic clock, and the file closed to make
// room is the unpinned one with the oldest stamp (least recently used).
// Until then nothing is closed for room and pins stamp nothing (a stamp is
// a write to a line every reader of the file shares), so the first closes
// after the cache fills see the stamps of when files were opened.
//
// Thread-safety: thread-safe. One mutex guards the table, opening, closing
// and eviction; a file closed under it is set aside and its descriptor
// released after the mutex is (with two lookup threads reopening most of
// their files, releasing it inside took hits from 210-232 to 135-139 k/s,
// 3M links, 10 files open). Such a file counts as open until then: a
// thread about to open a file while other threads' closes would take the
// open files past the capacity waits for those closes (a munmap and a
// close(2) each). That wait cost nothing measurable: with two lookup
// threads reopening most of their files (1M links on tmpfs, 10 of 32
// segments open, five processes each, taking turns) hits ran at a median
// of 34.0 k/s with it and 30.7 without (docs/benchmarks.md, "A file being
// closed counts until it is closed"). The
// mutex is never held while a file is opened or read, and not at all when
// a lookup pins or releases an open file (unless the release is the last
// pin of an evicted file, or of a file while the cache is over its
// capacity, or comes after a short-lived file turned busy).
// AcquireForLookup pins an open file with one exchange on the caller's
// slot and its release is one more; both take the lock in the same cases.
#ifndef BLOOMKV_DB_TABLE_CACHE_H_
#define BLOOMKV_DB_TABLE_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bloomkv/env.h"
#include "bloomkv/iterator.h"
#include "bloomkv/status.h"
#include "db/version_set.h"
#include "table/segment_reader.h"
#include "util/sharded_counter.h"
#include "util/mutex.h"

namespace bloomkv {

class Cache;

// One segment file's slot in the table cache; defined in table_cache.cc.
struct TableCacheEntry;

// Descriptors a database keeps outside the table cache: the WAL, the
// manifest, LOG, LOCK, the segment a flush or a compaction is writing, and
// the short-lived ones (directory syncs, CURRENT's temporary file, a
// checkpoint). The table cache gets max_open_files minus these.
constexpr int kNumNonSegmentFiles = 10;
// The smallest Options::max_open_files: leaves the table cache room for a
// few level-0 segments and one segment per deeper level.
constexpr int kMinMaxOpenFiles = 20;

class TableCache {
 public:
  class Handle;

  // filter_policy interprets the filters Load reads; block_cache (may be
  // null, not owned) is the readers' block cache. meta_memory_limit: bytes
  // of index blocks and filters Load keeps in memory (0: no limit); see
  // "Memory" above. REQUIRES: capacity >= 1.
  TableCache(std::string dbname, Env* env,
             std::shared_ptr<const FilterPolicy> filter_policy,
             Cache* block_cache, size_t capacity,
             uint64_t meta_memory_limit = 0);
  TableCache(const TableCache&) = delete;
  TableCache& operator=(const TableCache&) = delete;
  // REQUIRES: no Handle or iterator of this cache is left.
  ~TableCache();

  // Opens segment f as it enters the database (recovery, flush, compaction
  // output) and checks everything that can be checked without reading
  // data blocks: the size the manifest records, footer, properties, index
  // and filter (checksummed). Sets f->open_status (OK, or the error naming
  // the file), and, when OK, f->filter and f->cache_id. The reader stays
  // open as the most recently used file.
  // REQUIRES: f is not yet in a published version (its fields are set
  // without synchronization).
  void Load(FileMetaData* f);

  // Pins f's reader in *handle (releasing what *handle held), opening the
  // file again if it was closed. Lock-free when the file is open and f went
  // through Load.
  Status Acquire(const FileMetaData& f, Handle* handle);
  // The same for a pin held for the length of one lookup: pins an open
  // file through the slot of `thread` (ThisThreadIndex()) when that slot
  // is free, which writes no cache line another thread's lookup writes;
  // otherwise like Acquire. A pin held longer (an iterator's) would keep
  // the slot from the thread's next lookups, which would then pin by
  // count. REQUIRES, as for Acquire: f outlives the handle's pin.
  Status AcquireForLookup(const FileMetaData& f, size_t thread, Handle* handle);

  // An iterator over f's entries that keeps f open until it is destroyed;
  // an error iterator if f cannot be opened.
  std::unique_ptr<Iterator> NewIterator(const FileMetaData& f,
                                        const SegmentReadOptions& options);
  // An iterator over the entries of a sorted, non-overlapping run of
  // segments (one level >= 1), opening one segment at a time as it moves.
  // REQUIRES: files outlives the iterator.
  std::unique_ptr<Iterator> NewLevelIterator(const Version::FileList& files,
                                             const SegmentReadOptions& options);

  // The file of segment `number` is going away: close it now, or when its
  // last pin is released.
  void Evict(uint64_t number);

  // A capacity that closes nothing for room (Options::max_open_files -1).
  static constexpr size_t kUnlimited = SIZE_MAX / 8;
  // See "Reopens" above.
  static constexpr uint32_t kMapAfterPins = 16;
  static constexpr uint32_t kRemapAfterPins = 4 * kMapAfterPins;

  size_t capacity() const { return capacity_; }
  // Segment files open now (pinned or not, and those being opened or
  // closed).
  size_t open_files() const;
  // Bytes of index blocks and filters the segments Loaded and not evicted
  // hold in memory (what meta_memory_limit bounds).
  uint64_t meta_memory() const;

 private:
  using Entry = TableCacheEntry;

  // Opens f's file (Env::NewShortLivedRandomAccessFile if short_lived)
  // and reads its metadata. filter_policy is null when reopening: the
  // filter comes from f.
  Status OpenReader(const FileMetaData& f,
                    std::shared_ptr<const FilterPolicy> filter_policy,
                    bool short_lived, std::unique_ptr<SegmentReader>* reader);
  // A lookup's pin: the entry it reads, or null. Own cache line each.
  struct alignas(kCacheLineSize) LookupSlot {
    std::atomic<Entry*> entry{nullptr};
  };
  static constexpr size_t kLookupSlots = kCounterShards;

  // Pins e if it is open (one atomic step, no lock); false if it is closed.
  bool TryPin(Entry* e);
  // Records a pin of e for choosing the least recently used file.
  void Touch(Entry* e);
  // Whether a lookup slot holds e. The caller has already made e
  // unpinnable (count 0) with a sequentially consistent operation.
  bool LookupPinned(const Entry* e) const;
  // Ends the slot pin of e, doing the closes it may have held up.
  void ReleaseLookup(std::atomic<Entry*>* slot, Entry* e);
  // Closes the evicted files no pin holds any more. REQUIRES: mu_ held.
  void CloseEvictedLocked() REQUIRES(mu_);
  // Sets track_use_ once the open files reach 7/8 of the capacity.
  // REQUIRES: mu_ held.
  void UpdateTrackUseLocked() REQUIRES(mu_);
  class ClosedReaders;
  // Reserves a place for a file about to be opened, closing unpinned files
  // beyond the capacity first (into *closed, which the caller destroys
  // before it opens the file) and waiting for other threads' closes while
  // they stand between the open and the capacity. REQUIRES: mu_ held.
  void ReserveLocked(ClosedReaders* closed) REQUIRES(mu_);
  // Ends a reservation; makes reader (if non-null, opened short-lived or
  // not) number's open file unless one is already open. Returns the entry,
  // pinned when pin is set, or null when there is no reader.
  // REQUIRES: mu_ held.
  std::shared_ptr<Entry> InsertLocked(uint64_t number,
                                      std::unique_ptr<SegmentReader> reader,
                                      bool pin, bool short_lived)
      REQUIRES(mu_);
  void Release(Entry* e);
  // Closes the unpinned files used longest ago while more than the
  // capacity are open; a file a lookup slot holds counts as pinned.
  // REQUIRES: mu_ held.
  void ShrinkLocked() REQUIRES(mu_);
  // Closes e's file: takes its reader, to be destroyed (its file closed)
  // once mu_ is released (ClosedReaders). REQUIRES: mu_ held, e open and
  // no longer pinnable (reference count 0), out of the open list.
  void CloseLocked(Entry* e) REQUIRES(mu_);
  // Closes open entry e unless it is pinned, by count or by a lookup slot
  // (then *slot_held is set); true when closed. REQUIRES: mu_ held, e in
  // the open list.
  bool CloseIfUnpinnedLocked(Entry* e, bool* slot_held) REQUIRES(mu_);
  // When remap_pending_ is set, closes the unpinned files opened
  // short-lived that served kRemapAfterPins pins since, so that their next
  // reopen maps them. REQUIRES: mu_ held.
  void CloseBusyShortLivedLocked() REQUIRES(mu_);
  // Hands the readers CloseLocked took to *closed. REQUIRES: mu_ held.
  void TakeClosedLocked(ClosedReaders* closed) REQUIRES(mu_);
  void AppendToOpenList(Entry* e) REQUIRES(mu_);
  static void Unlink(Entry* e);  // from the open list; REQUIRES: mu_ held

  const std::string dbname_;
  Env* const env_;
  const std::shared_ptr<const FilterPolicy> filter_policy_;
  Cache* const block_cache_;
  const size_t capacity_;
  const uint64_t meta_memory_limit_;

  mutable Mutex mu_;
  // Every segment Loaded or reopened and not evicted, open or closed.
  std::unordered_map<uint64_t, std::shared_ptr<Entry>> entries_ GUARDED_BY(mu_);
  // Evicted while pinned: closed and dropped at their last release (the
  // last reference-counted pin, or the slot pin seen after it).
  std::unordered_map<Entry*, std::shared_ptr<Entry>> evicted_ GUARDED_BY(mu_);
  // Sentinel of the circular list of open, not evicted entries.
  const std::unique_ptr<Entry> open_list_ GUARDED_BY(mu_);
  uint64_t meta_memory_ GUARDED_BY(mu_) = 0;  // see meta_memory()
  size_t open_ GUARDED_BY(mu_) = 0;     // entries with a reader
  size_t opening_ GUARDED_BY(mu_) = 0;  // reserved, being opened
  // Readers CloseLocked took, not yet handed to a ClosedReaders (every
  // locked section that closes hands them over before it ends).
  std::vector<std::unique_ptr<SegmentReader>> closed_ GUARDED_BY(mu_);
  // Readers of closed files not yet destroyed: those in closed_ and those
  // a ClosedReaders holds. Their files are still open.
  size_t closing_ GUARDED_BY(mu_) = 0;
  // Signalled when closing_ drops.
  CondVar closing_done_;
  // open_ + opening_ > capacity_ as of the last ShrinkLocked: the release
  // of a pin takes the lock to shrink only then.
  std::atomic<bool> over_capacity_{false};
  // An evicted file waits for a slot pin: releasing one takes the lock
  // to close it.
  std::atomic<bool> close_pending_{false};
  // A file opened short-lived has turned busy (Touch): the next release
  // takes the lock to close it (CloseBusyShortLivedLocked).
  std::atomic<bool> remap_pending_{false};
  // Pins stamp their entries (see Recency above); never cleared.
  std::atomic<bool> track_use_{false};
  LookupSlot lookup_slots_[kLookupSlots];
};

// Pins one open segment reader while it exists. Move-only.
class TableCache::Handle {
 public:
  Handle() = default;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept { *this = std::move(other); }
  Handle& operator=(Handle&& other) noexcept;
  ~Handle() { Reset(); }

  // REQUIRES: a successful Acquire filled this handle.
  const SegmentReader* reader() const;
  void Reset();

 private:
  friend class TableCache;
  TableCache* cache_ = nullptr;
  Entry* entry_ = nullptr;
  // The lookup slot holding entry_, or null for a reference-counted pin.
  std::atomic<Entry*>* slot_ = nullptr;
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_TABLE_CACHE_H_
