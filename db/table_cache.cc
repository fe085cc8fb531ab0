// TableCache; see table_cache.h.
#include "db/table_cache.h"

#include <algorithm>

#include "db/filename.h"
#include "table/two_level_iterator.h"
#include "util/cache.h"
#include "util/coding.h"

namespace bloomkv {

struct TableCache::Entry {
  uint64_t number = 0;
  std::unique_ptr<SegmentReader> reader;
  int pins = 0;
  bool evicted = false;  // Evict()ed while pinned
  // Neighbours in the LRU list while pins == 0. Intrusive, so that pinning
  // and releasing a file allocate nothing.
  Entry* prev = nullptr;
  Entry* next = nullptr;
};

void TableCache::Unlink(Entry* e) {
  e->prev->next = e->next;
  e->next->prev = e->prev;
}

void TableCache::AppendToLru(Entry* e) {
  e->next = lru_.get();
  e->prev = lru_->prev;
  e->prev->next = e;
  lru_->prev = e;
}

TableCache::TableCache(std::string dbname, Env* env,
                       std::shared_ptr<const FilterPolicy> filter_policy,
                       Cache* block_cache, size_t capacity)
    : dbname_(std::move(dbname)),
      env_(env),
      filter_policy_(std::move(filter_policy)),
      block_cache_(block_cache),
      capacity_(std::max<size_t>(capacity, 1)),
      lru_(std::make_unique<Entry>()) {
  lru_->prev = lru_->next = lru_.get();
}

TableCache::~TableCache() = default;

Status TableCache::OpenReader(const FileMetaData& f,
                              std::shared_ptr<const FilterPolicy> filter_policy,
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
  if (s.ok()) s = env_->NewRandomAccessFile(fname, &file);
  if (!s.ok()) return s;
  SegmentReaderOptions ro;
  ro.filter_policy = std::move(filter_policy);
  ro.filter = f.filter;
  ro.block_cache = block_cache_;
  ro.cache_id = f.cache_id;
  return SegmentReader::Open(ro, fname, std::move(file), size, reader);
}

void TableCache::Load(FileMetaData* f) {
  {
    std::lock_guard<std::mutex> guard(mu_);
    ReserveLocked();
  }
  // The block cache id outlives this reader, so that the file reopened
  // later finds the blocks this reader cached.
  f->cache_id = block_cache_ != nullptr ? block_cache_->NewId() : 0;
  f->filter = nullptr;
  std::unique_ptr<SegmentReader> reader;
  Status s = OpenReader(*f, filter_policy_, &reader);
  if (s.ok()) f->filter = reader->filter();
  f->open_status = s;
  std::lock_guard<std::mutex> guard(mu_);
  InsertLocked(f->number, s.ok() ? std::move(reader) : nullptr, false);
}

Status TableCache::Acquire(const FileMetaData& f, Handle* handle) {
  handle->Reset();
  if (!f.open_status.ok()) return f.open_status;
  {
    std::lock_guard<std::mutex> guard(mu_);
    auto it = entries_.find(f.number);
    if (it != entries_.end()) {
      Entry* e = it->second.get();
      if (e->pins++ == 0) Unlink(e);
      handle->cache_ = this;
      handle->entry_ = e;
      return Status::OK();
    }
    ReserveLocked();
  }
  std::unique_ptr<SegmentReader> reader;
  Status s = OpenReader(f, nullptr, &reader);
  std::lock_guard<std::mutex> guard(mu_);
  Entry* e = InsertLocked(f.number, s.ok() ? std::move(reader) : nullptr,
                          /*pin=*/true);
  if (e != nullptr) {
    handle->cache_ = this;
    handle->entry_ = e;
  }
  return s;
}

void TableCache::ReserveLocked() {
  opening_++;
  ShrinkLocked();
}

TableCache::Entry* TableCache::InsertLocked(
    uint64_t number, std::unique_ptr<SegmentReader> reader, bool pin) {
  opening_--;
  Entry* e = nullptr;
  if (reader != nullptr) {
    auto it = entries_.find(number);
    if (it != entries_.end()) {
      // Another thread opened the file meanwhile: use its reader. Ours is
      // closed here, before it stops being counted.
      e = it->second.get();
      reader.reset();
      if (pin && e->pins++ == 0) Unlink(e);
    } else {
      auto owned = std::make_unique<Entry>();
      e = owned.get();
      e->number = number;
      e->reader = std::move(reader);
      index_bytes_ += e->reader->index_memory();
      entries_.emplace(number, std::move(owned));
      if (pin) {
        e->pins = 1;
      } else {
        AppendToLru(e);
      }
    }
  }
  ShrinkLocked();
  return e;
}

void TableCache::Release(Entry* e) {
  std::lock_guard<std::mutex> guard(mu_);
  if (--e->pins > 0) return;
  AppendToLru(e);
  if (e->evicted) {
    CloseLocked(e);
  } else {
    ShrinkLocked();
  }
}

void TableCache::ShrinkLocked() {
  while (entries_.size() + opening_ > capacity_ && lru_->next != lru_.get()) {
    CloseLocked(lru_->next);
  }
}

void TableCache::CloseLocked(Entry* e) {
  // REQUIRES: e is unpinned (in the LRU list).
  Unlink(e);
  index_bytes_ -= e->reader->index_memory();
  entries_.erase(e->number);  // closes the file
}

void TableCache::Evict(uint64_t number) {
  std::lock_guard<std::mutex> guard(mu_);
  auto it = entries_.find(number);
  if (it == entries_.end()) return;
  Entry* e = it->second.get();
  if (e->pins == 0) {
    CloseLocked(e);
  } else {
    e->evicted = true;
  }
}

size_t TableCache::open_files() const {
  std::lock_guard<std::mutex> guard(mu_);
  return entries_.size() + opening_;
}

uint64_t TableCache::index_bytes() const {
  std::lock_guard<std::mutex> guard(mu_);
  return index_bytes_;
}

TableCache::Handle& TableCache::Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    Reset();
    cache_ = other.cache_;
    entry_ = other.entry_;
    other.cache_ = nullptr;
    other.entry_ = nullptr;
  }
  return *this;
}

const SegmentReader* TableCache::Handle::reader() const {
  return entry_->reader.get();
}

void TableCache::Handle::Reset() {
  if (entry_ != nullptr) cache_->Release(entry_);
  cache_ = nullptr;
  entry_ = nullptr;
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
