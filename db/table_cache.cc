// TableCache; see table_cache.h.
#include "db/table_cache.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

#include "db/filename.h"
#include "table/two_level_iterator.h"
#include "util/cache.h"
#include "util/coding.h"

namespace bloomkv {

// Fields marked (mu_) are guarded by the cache's mutex.
struct TableCacheEntry {
  // The pins, plus 1 while the cache keeps the file open and not evicted;
  // 0 when closed. reader is set before the count leaves 0 and reset only
  // after the cache took it from 1 to 0, under mu_.
  std::atomic<uint64_t> refs{0};
  // UseStamp() at the opening or the latest pin (pins stamp only once
  // the cache tracks use).
  std::atomic<uint64_t> last_use{0};
  // Pins since the file was opened, counted as last_use is stamped (only
  // once the cache tracks use; concurrent pins may count as one).
  std::atomic<uint32_t> pins{0};
  // pins when the file was last closed; UINT32_MAX if it never was (mu_).
  uint32_t pins_last_open = UINT32_MAX;
  // Open with Env::NewShortLivedRandomAccessFile (written under mu_).
  std::atomic<bool> short_lived{false};
  uint64_t number = 0;
  // Bytes of index block and filter the segment holds in memory, counted
  // against the limit until the segment is evicted (mu_).
  uint64_t meta_memory = 0;
  std::unique_ptr<SegmentReader> reader;  // null while closed
  // Neighbours in the open list while open and not evicted (mu_).
  // Intrusive, so that opening and closing a file allocate nothing more.
  TableCacheEntry* prev = nullptr;
  TableCacheEntry* next = nullptr;
};

// The readers a locked section closed, destroyed (their files closed) by
// Destroy() or at the end of the scope, after the caller released mu_: no
// close(2), munmap or reader's teardown under the lock. Declared before the
// section's MutexLock, so that it is destroyed after it.
class TableCache::ClosedReaders {
 public:
  explicit ClosedReaders(TableCache* cache) : cache_(cache) {}
  ClosedReaders(const ClosedReaders&) = delete;
  ClosedReaders& operator=(const ClosedReaders&) = delete;
  ~ClosedReaders() { Destroy(); }

  void Add(std::unique_ptr<SegmentReader> reader) {
    readers_.push_back(std::move(reader));
  }
  size_t size() const { return readers_.size(); }
  // Destroys the readers added, then stops counting them.
  // REQUIRES: mu_ not held.
  void Destroy() EXCLUDES(cache_->mu_) {
    if (readers_.empty()) return;
    const size_t n = readers_.size();
    readers_.clear();
    MutexLock guard(&cache_->mu_);
    cache_->closing_ -= n;
    cache_->closing_done_.SignalAll();
  }

 private:
  TableCache* const cache_;
  std::vector<std::unique_ptr<SegmentReader>> readers_;
};

void TableCache::Unlink(Entry* e) {
  e->prev->next = e->next;
  e->next->prev = e->prev;
  e->prev = e->next = nullptr;
}

void TableCache::AppendToOpenList(Entry* e) {
  e->next = open_list_.get();
  e->prev = open_list_->prev;
  e->prev->next = e;
  open_list_->prev = e;
}

TableCache::TableCache(std::string dbname, Env* env,
                       std::shared_ptr<const FilterPolicy> filter_policy,
                       Cache* block_cache, size_t capacity,
                       uint64_t meta_memory_limit)
    : dbname_(std::move(dbname)),
      env_(env),
      filter_policy_(std::move(filter_policy)),
      block_cache_(block_cache),
      capacity_(std::max<size_t>(capacity, 1)),
      meta_memory_limit_(meta_memory_limit),
      open_list_(std::make_unique<Entry>()) {
  open_list_->prev = open_list_->next = open_list_.get();
}

TableCache::~TableCache() {
  // Entries can outlive the cache in FileMetaData: close their files now.
  MutexLock guard(&mu_);
  for (auto& [number, e] : entries_) {
    e->refs.store(0);
    e->reader.reset();
  }
}

Status TableCache::OpenReader(const FileMetaData& f,
                              std::shared_ptr<const FilterPolicy> filter_policy,
                              bool short_lived,
                              std::unique_ptr<SegmentReader>* reader) {
  const std::string fname = SegmentFileName(dbname_, f.number);
  uint64_t size = 0;
  Status s = env_->GetFileSize(fname, &size);
  if (s.IsNotFound()) {
    // Never let "no such file" pass for "no such key".
    s = Status::Corruption(fname, "is missing: the manifest lists it");
  }
  if (s.ok() && size != f.file_size) {
    s = Status::Corruption(fname, "is " + std::to_string(size) +
                                      " bytes, the manifest says " +
                                      std::to_string(f.file_size));
  }
  std::unique_ptr<RandomAccessFile> file;
  if (s.ok()) {
    s = short_lived ? env_->NewShortLivedRandomAccessFile(fname, &file)
                    : env_->NewRandomAccessFile(fname, &file);
  }
  if (!s.ok()) return s;
  SegmentReaderOptions ro;
  ro.filter_policy = std::move(filter_policy);
  ro.meta = f.meta;
  ro.block_cache = block_cache_;
  ro.cache_id = f.cache_id;
  ro.clock = env_;
  return SegmentReader::Open(ro, fname, std::move(file), size, reader);
}

void TableCache::Load(FileMetaData* f) {
  ClosedReaders closed(this);
  {
    MutexLock guard(&mu_);
    ReserveLocked(&closed);
  }
  closed.Destroy();
  // The block cache id outlives this reader, so that the file reopened
  // later finds the blocks this reader cached.
  f->cache_id = block_cache_ != nullptr ? block_cache_->NewId() : 0;
  f->meta = nullptr;
  f->filter = nullptr;
  std::unique_ptr<SegmentReader> reader;
  Status s = OpenReader(*f, filter_policy_, /*short_lived=*/false, &reader);
  uint64_t meta_memory = 0;
  if (s.ok()) {
    f->meta = reader->meta();
    meta_memory = f->meta->memory();
    // All of it, else the filter alone (an index is read only for a
    // lookup that reads a data block anyway; the filter saves that read),
    // else nothing.
    const uint64_t filter_memory =
        f->meta->filter != nullptr ? f->meta->filter->memory() : 0;
    bool keep_all, keep_filter = false;
    {
      MutexLock guard(&mu_);
      const uint64_t room =
          meta_memory_limit_ == 0 ? UINT64_MAX
          : meta_memory_ < meta_memory_limit_
              ? meta_memory_limit_ - meta_memory_
              : 0;
      keep_all = meta_memory <= room;
      if (!keep_all) {
        keep_filter = filter_memory > 0 && filter_memory <= room;
        meta_memory = keep_filter ? filter_memory : 0;
      }
      meta_memory_ += meta_memory;
    }
    if (!keep_all) {
      // Everything was read and checked; now drop what is not kept and
      // read the file as any later reopen does.
      f->meta = f->meta->Paged(keep_filter);
      reader.reset();
      s = OpenReader(*f, nullptr, /*short_lived=*/false, &reader);
    }
    f->filter = f->meta->filter != nullptr && f->meta->filter->resident()
                    ? f->meta->filter
                    : nullptr;
  }
  f->open_status = s;
  MutexLock guard(&mu_);
  f->table_cache_entry =
      InsertLocked(f->number, s.ok() ? std::move(reader) : nullptr,
                   /*pin=*/false, /*short_lived=*/false);
  if (f->table_cache_entry != nullptr) {
    f->table_cache_entry->meta_memory = meta_memory;
  }
  TakeClosedLocked(&closed);
}

namespace {
// When an entry was last pinned, for closing the least recently used file:
// the monotonic clock, read without writing anything shared (a counter
// bumped by every pin was a cache line all reader threads wrote).
uint64_t UseStamp() {
  return static_cast<uint64_t>(
      std::chrono::steady_clock::now().time_since_epoch().count());
}
}  // namespace

void TableCache::Touch(Entry* e) {
  if (track_use_.load(std::memory_order_relaxed)) {
    e->last_use.store(UseStamp(), std::memory_order_relaxed);
    const uint32_t pins = e->pins.load(std::memory_order_relaxed) + 1;
    e->pins.store(pins, std::memory_order_relaxed);
    // A short-lived file turned busy: to be closed at a release and mapped
    // at its reopen (asked again every kRemapAfterPins pins while it stays
    // open).
    if (pins % kRemapAfterPins == 0 &&
        e->short_lived.load(std::memory_order_relaxed)) {
      remap_pending_.store(true);
    }
  }
}

void TableCache::UpdateTrackUseLocked() {
  if (8 * (open_ + opening_) >= 7 * capacity_) {
    track_use_.store(true, std::memory_order_relaxed);
  }
}

bool TableCache::TryPin(Entry* e) {
  uint64_t refs = e->refs.load(std::memory_order_acquire);
  do {
    if (refs == 0) return false;
  } while (!e->refs.compare_exchange_weak(refs, refs + 1));
  Touch(e);
  return true;
}

bool TableCache::LookupPinned(const Entry* e) const {
  for (const LookupSlot& slot : lookup_slots_) {
    if (slot.entry.load() == e) return true;
  }
  return false;
}

Status TableCache::AcquireForLookup(const FileMetaData& f, size_t thread,
                                    Handle* handle) {
  handle->Reset();
  // Null when Load failed: Acquire returns the error.
  Entry* e = f.table_cache_entry.get();
  if (e != nullptr) {
    std::atomic<Entry*>& slot = lookup_slots_[thread % kLookupSlots].entry;
    Entry* free_slot = nullptr;
    if (slot.compare_exchange_strong(free_slot, e)) {
      // Published before the count is read: a closer that took the count
      // to 0 reads the slot after, and backs off.
      if (e->refs.load() != 0) {
        Touch(e);
        handle->cache_ = this;
        handle->entry_ = e;
        handle->slot_ = &slot;
        return Status::OK();
      }
      ReleaseLookup(&slot, e);  // closed: the locked path reopens it
    }
  }
  return Acquire(f, handle);
}

void TableCache::ReleaseLookup(std::atomic<Entry*>* slot, Entry* e) {
  // Cleared before the flags are read: a closer that saw the slot set had
  // raised its flag first, so one of the two does the close.
  slot->store(nullptr);
  if (close_pending_.load() || remap_pending_.load() ||
      (over_capacity_.load() && e->refs.load() <= 1)) {
    ClosedReaders closed(this);
    MutexLock guard(&mu_);
    CloseEvictedLocked();
    ShrinkLocked();
    CloseBusyShortLivedLocked();
    TakeClosedLocked(&closed);
  }
}

Status TableCache::Acquire(const FileMetaData& f, Handle* handle) {
  handle->Reset();
  if (!f.open_status.ok()) return f.open_status;
  Entry* e = f.table_cache_entry.get();
  ClosedReaders closed(this);
  bool short_lived = false;
  if (e == nullptr || !TryPin(e)) {
    MutexLock guard(&mu_);
    auto it = entries_.find(f.number);
    e = it != entries_.end() ? it->second.get() : nullptr;
    // Under mu_ an entry in entries_ is either closed or stays open.
    if (e == nullptr || !TryPin(e)) {
      // See "Reopens" in table_cache.h.
      short_lived = e != nullptr && e->pins_last_open < kMapAfterPins;
      e = nullptr;
      ReserveLocked(&closed);
    }
  }
  if (e == nullptr) {
    closed.Destroy();  // before this thread opens a file of its own
    std::unique_ptr<SegmentReader> reader;
    Status s = OpenReader(f, nullptr, short_lived, &reader);
    MutexLock guard(&mu_);
    e = InsertLocked(f.number, s.ok() ? std::move(reader) : nullptr,
                     /*pin=*/true, short_lived)
            .get();
    TakeClosedLocked(&closed);
    if (e == nullptr) return s;
  }
  handle->cache_ = this;
  handle->entry_ = e;
  return Status::OK();
}

void TableCache::ReserveLocked(ClosedReaders* closed) {
  opening_++;
  UpdateTrackUseLocked();
  for (;;) {
    ShrinkLocked();
    TakeClosedLocked(closed);
    // What other threads closed and have not yet destroyed is still open;
    // what this thread closed it destroys before it opens.
    const size_t others = closing_ - closed->size();
    if (others == 0 || open_ + opening_ + others <= capacity_) return;
    if (closed->size() != 0) {
      // Never wait holding readers: two threads would wait for each other.
      mu_.Unlock();
      closed->Destroy();
      mu_.Lock();
    } else {
      closing_done_.Wait(&mu_);
    }
  }
}

std::shared_ptr<TableCache::Entry> TableCache::InsertLocked(
    uint64_t number, std::unique_ptr<SegmentReader> reader, bool pin,
    bool short_lived) {
  opening_--;
  std::shared_ptr<Entry> result;
  if (reader != nullptr) {
    std::shared_ptr<Entry>& slot = entries_[number];
    if (slot == nullptr) {
      slot = std::make_shared<Entry>();
      slot->number = number;
    }
    result = slot;
    Entry* e = result.get();
    if (e->refs.load() != 0) {
      // Another thread opened the file meanwhile: use its reader. Ours is
      // closed here, before it stops being counted.
      reader.reset();
      if (pin) TryPin(e);
    } else {
      e->reader = std::move(reader);
      e->pins.store(0, std::memory_order_relaxed);
      e->short_lived.store(short_lived, std::memory_order_relaxed);
      open_++;
      AppendToOpenList(e);
      e->last_use.store(UseStamp(), std::memory_order_relaxed);
      e->refs.store(pin ? 2 : 1, std::memory_order_release);
    }
  }
  ShrinkLocked();
  return result;
}

void TableCache::Release(Entry* e) {
  const uint64_t before = e->refs.fetch_sub(1);
  ClosedReaders closed(this);
  if (before == 1) {
    // The last reference-counted pin of an evicted file.
    MutexLock guard(&mu_);
    CloseEvictedLocked();
    TakeClosedLocked(&closed);
  } else if (before == 2 && (over_capacity_.load() || remap_pending_.load())) {
    MutexLock guard(&mu_);
    ShrinkLocked();
    CloseBusyShortLivedLocked();
    TakeClosedLocked(&closed);
  }
}

void TableCache::CloseEvictedLocked() {
  // Raised before the slots are read: a slot pin released meanwhile is
  // either seen released here or sees the flag and comes back.
  close_pending_.store(true);
  bool pending = false;
  for (auto it = evicted_.begin(); it != evicted_.end();) {
    Entry* e = it->first;
    if (e->refs.load() != 0) {
      ++it;  // reference-counted pins left: their last release comes here
    } else if (LookupPinned(e)) {
      pending = true;
      ++it;
    } else {
      CloseLocked(e);
      it = evicted_.erase(it);
    }
  }
  close_pending_.store(pending);
}

void TableCache::ShrinkLocked() {
  // Files a lookup slot held when they were to be closed: skipped in this
  // pass (rare, so the vector seldom allocates).
  std::vector<const Entry*> held;
  // The flag is set before the pins are read: a pin released during this
  // pass is either seen released here or sees the flag and shrinks again.
  while (open_ + opening_ > capacity_) {
    over_capacity_.store(true);
    Entry* victim = nullptr;
    for (Entry* e = open_list_->next; e != open_list_.get(); e = e->next) {
      if (e->refs.load() == 1 &&
          (victim == nullptr ||
           e->last_use.load(std::memory_order_relaxed) <
               victim->last_use.load(std::memory_order_relaxed)) &&
          std::find(held.begin(), held.end(), e) == held.end()) {
        victim = e;
      }
    }
    if (victim == nullptr) return;  // every open file is pinned
    bool slot_held = false;
    if (!CloseIfUnpinnedLocked(victim, &slot_held) && slot_held) {
      held.push_back(victim);
    }
  }
  over_capacity_.store(false);
}

bool TableCache::CloseIfUnpinnedLocked(Entry* e, bool* slot_held) {
  uint64_t unpinned = 1;
  if (!e->refs.compare_exchange_strong(unpinned, 0)) return false;
  if (LookupPinned(e)) {
    e->refs.store(1);  // no reference-counted pin came in at 0
    *slot_held = true;
    return false;
  }
  Unlink(e);
  CloseLocked(e);
  return true;
}

void TableCache::CloseBusyShortLivedLocked() {
  if (!remap_pending_.exchange(false)) return;
  for (Entry* e = open_list_->next; e != open_list_.get();) {
    Entry* next = e->next;
    bool slot_held = false;  // pinned: asked again after more pins
    if (e->short_lived.load(std::memory_order_relaxed) &&
        e->pins.load(std::memory_order_relaxed) >= kRemapAfterPins) {
      CloseIfUnpinnedLocked(e, &slot_held);
    }
    e = next;
  }
}

void TableCache::CloseLocked(Entry* e) {
  e->pins_last_open = e->pins.load(std::memory_order_relaxed);
  closed_.push_back(std::move(e->reader));
  open_--;
  closing_++;
}

void TableCache::TakeClosedLocked(ClosedReaders* closed) {
  for (auto& reader : closed_) closed->Add(std::move(reader));
  closed_.clear();
}

void TableCache::Evict(uint64_t number) {
  ClosedReaders closed(this);
  MutexLock guard(&mu_);
  auto it = entries_.find(number);
  if (it == entries_.end()) return;
  std::shared_ptr<Entry> e = std::move(it->second);
  entries_.erase(it);
  meta_memory_ -= e->meta_memory;
  e->meta_memory = 0;
  if (e->reader == nullptr) return;  // closed
  Unlink(e.get());
  // Drops the cache's own reference; pins keep the file open.
  e->refs.fetch_sub(1);
  Entry* raw = e.get();
  evicted_.emplace(raw, std::move(e));
  CloseEvictedLocked();
  TakeClosedLocked(&closed);
}

size_t TableCache::open_files() const {
  MutexLock guard(&mu_);
  return open_ + opening_ + closing_;
}

uint64_t TableCache::meta_memory() const {
  MutexLock guard(&mu_);
  return meta_memory_;
}


TableCache::Handle& TableCache::Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    Reset();
    cache_ = other.cache_;
    entry_ = other.entry_;
    slot_ = other.slot_;
    other.cache_ = nullptr;
    other.entry_ = nullptr;
    other.slot_ = nullptr;
  }
  return *this;
}

const SegmentReader* TableCache::Handle::reader() const {
  return entry_->reader.get();
}

void TableCache::Handle::Reset() {
  if (slot_ != nullptr) {
    cache_->ReleaseLookup(slot_, entry_);
  } else if (entry_ != nullptr) {
    cache_->Release(entry_);
  }
  cache_ = nullptr;
  entry_ = nullptr;
  slot_ = nullptr;
}

namespace {

// A segment's iterator together with the pin that keeps the segment open.
class PinnedIterator final : public Iterator {
 public:
  PinnedIterator(TableCache::Handle handle, std::unique_ptr<Iterator> it)
      : handle_(std::move(handle)), it_(std::move(it)) {}

  bool Valid() const override { return it_->Valid(); }
  void SeekToFirst() override { it_->SeekToFirst(); }
  void SeekToLast() override { it_->SeekToLast(); }
  void Seek(const Slice& target) override { it_->Seek(target); }
  void SeekForPrev(const Slice& target) override { it_->SeekForPrev(target); }
  void Next() override { it_->Next(); }
  void Prev() override { it_->Prev(); }
  Slice key() const override { return it_->key(); }
  Slice value() const override { return it_->value(); }
  Status status() const override { return it_->status(); }

 private:
  TableCache::Handle handle_;  // declared first: released last
  std::unique_ptr<Iterator> it_;
};

// The segments of one level as an index for NewTwoLevelIterator: key is a
// segment's largest internal key, value its position in the list.
class FileListIterator final : public Iterator {
 public:
  explicit FileListIterator(const Version::FileList& files)
      : files_(files), pos_(files.size()) {}

  bool Valid() const override { return pos_ < files_.size(); }
  void SeekToFirst() override { pos_ = 0; }
  void SeekToLast() override { pos_ = files_.empty() ? 0 : files_.size() - 1; }
  // The first segment whose largest key is >= target: the only one that
  // can hold target.
  void Seek(const Slice& target) override {
    pos_ = std::lower_bound(files_.begin(), files_.end(), target,
                            [](const auto& f, const Slice& t) {
                              return CompareInternalKeys(f->largest, t) < 0;
                            }) -
           files_.begin();
  }
  void SeekForPrev(const Slice& target) override {
    Seek(target);
    if (!Valid()) SeekToLast();
  }
  void Next() override { pos_++; }
  void Prev() override { pos_ = pos_ == 0 ? files_.size() : pos_ - 1; }
  Slice key() const override { return files_[pos_]->largest; }
  Slice value() const override {
    EncodeFixed64(value_buf_, pos_);
    return Slice(value_buf_, sizeof(value_buf_));
  }
  Status status() const override { return Status::OK(); }

 private:
  const Version::FileList& files_;
  size_t pos_;  // files_.size(): not positioned
  mutable char value_buf_[8];
};

}  // namespace

std::unique_ptr<Iterator> TableCache::NewIterator(
    const FileMetaData& f, const SegmentReadOptions& options) {
  Handle handle;
  Status s = Acquire(f, &handle);
  if (!s.ok()) return std::unique_ptr<Iterator>(NewErrorIterator(s));
  std::unique_ptr<Iterator> it = handle.reader()->NewIterator(options, nullptr);
  return std::make_unique<PinnedIterator>(std::move(handle), std::move(it));
}

std::unique_ptr<Iterator> TableCache::NewLevelIterator(
    const Version::FileList& files, const SegmentReadOptions& options) {
  auto open_file = [this, &files, options](const Slice& index_value) {
    return NewIterator(*files[DecodeFixed64(index_value.data())], options);
  };
  return NewTwoLevelIterator(std::make_unique<FileListIterator>(files),
                             std::move(open_file));
}

}  // namespace bloomkv
