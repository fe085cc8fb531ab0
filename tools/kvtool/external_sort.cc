// ExternalSorter; see external_sort.h.
//
// Run file format (private to one sorter, never kept): records in key
// order, each a 4-byte key size and a 4-byte value size (host byte order),
// then the key and the value bytes.
#include "tools/kvtool/external_sort.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace bloomkv::kvtool {
namespace {

constexpr size_t kRunBufferSize = 1 << 20;
constexpr size_t kRecordHeaderSize = 8;

Status FileError(const std::string& path, const char* what) {
  return Status::IOError(path, std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

// One sorted source of records for the merge.
class ExternalSorter::Cursor {
 public:
  virtual ~Cursor() = default;
  virtual bool Valid() const = 0;
  virtual Slice key() const = 0;
  virtual Slice value() const = 0;
  virtual Status Next() = 0;
};

// The records left in memory at Finish, sorted in place.
class ExternalSorter::MemoryCursor final : public Cursor {
 public:
  explicit MemoryCursor(const ExternalSorter* sorter) : sorter_(sorter) {}
  bool Valid() const override { return pos_ < sorter_->entries_.size(); }
  Slice key() const override {
    return sorter_->EntryKey(sorter_->entries_[pos_]);
  }
  Slice value() const override {
    return sorter_->EntryValue(sorter_->entries_[pos_]);
  }
  Status Next() override {
    pos_++;
    return Status::OK();
  }

 private:
  const ExternalSorter* const sorter_;
  size_t pos_ = 0;
};

// A run file, read sequentially through a large buffer.
class ExternalSorter::FileCursor final : public Cursor {
 public:
  explicit FileCursor(std::string path) : path_(std::move(path)) {}
  ~FileCursor() override {
    if (file_ != nullptr) std::fclose(file_);
  }

  Status Open() {
    file_ = std::fopen(path_.c_str(), "rb");
    if (file_ == nullptr) return FileError(path_, "cannot open a sorted run");
    std::setvbuf(file_, nullptr, _IOFBF, kRunBufferSize);
    return Next();
  }
  bool Valid() const override { return valid_; }
  Slice key() const override { return Slice(record_.data(), key_size_); }
  Slice value() const override {
    return Slice(record_.data() + key_size_, record_.size() - key_size_);
  }
  Status Next() override {
    valid_ = false;
    char header[kRecordHeaderSize];
    const size_t got = std::fread(header, 1, sizeof(header), file_);
    if (got == 0 && std::feof(file_)) return Status::OK();  // the end
    if (got != sizeof(header)) return ReadError();
    uint32_t value_size;
    std::memcpy(&key_size_, header, 4);
    std::memcpy(&value_size, header + 4, 4);
    record_.resize(static_cast<size_t>(key_size_) + value_size);
    if (!record_.empty() && std::fread(record_.data(), 1, record_.size(),
                                       file_) != record_.size()) {
      return ReadError();
    }
    valid_ = true;
    return Status::OK();
  }

 private:
  Status ReadError() {
    if (std::ferror(file_)) return FileError(path_, "cannot read a sorted run");
    return Status::IOError(path_, "sorted run ends in the middle of a record");
  }

  const std::string path_;
  std::FILE* file_ = nullptr;
  std::string record_;  // key bytes, then value bytes
  uint32_t key_size_ = 0;
  bool valid_ = false;
};

ExternalSorter::ExternalSorter(std::string temp_dir, uint64_t memory_budget)
    : temp_dir_(std::move(temp_dir)), memory_budget_(memory_budget) {}

ExternalSorter::~ExternalSorter() {
  cursors_.clear();  // closes the run files
  for (const std::string& run : runs_) std::remove(run.c_str());
}

Status ExternalSorter::Add(const Slice& key, const Slice& value) {
  if (!status_.ok()) return status_;
  const uint64_t record = key.size() + value.size() + sizeof(Entry);
  if (!entries_.empty() &&
      buffer_.size() + entries_.size() * sizeof(Entry) + record >
          memory_budget_) {
    status_ = SpillBuffer();
    if (!status_.ok()) return status_;
  }
  // Reserved once: growing by doubling would copy, and hold twice the bytes
  // for a moment. Untouched reserved pages cost no memory.
  if (buffer_.capacity() < memory_budget_) {
    buffer_.reserve(static_cast<size_t>(memory_budget_));
  }
  entries_.push_back({buffer_.size(), static_cast<uint32_t>(key.size()),
                      static_cast<uint32_t>(value.size())});
  buffer_.append(key.data(), key.size());
  buffer_.append(value.data(), value.size());
  records_added_++;
  return Status::OK();
}

void ExternalSorter::SortBuffer() {
  // Equal keys keep the order they were added in (offsets grow with it),
  // so the last of each group is the newest.
  std::sort(entries_.begin(), entries_.end(),
            [this](const Entry& a, const Entry& b) {
              const int c = EntryKey(a).compare(EntryKey(b));
              return c < 0 || (c == 0 && a.offset < b.offset);
            });
  size_t kept = 0;
  for (size_t i = 0; i < entries_.size(); i++) {
    if (i + 1 < entries_.size() &&
        EntryKey(entries_[i]) == EntryKey(entries_[i + 1])) {
      continue;  // an older record of the same key
    }
    entries_[kept++] = entries_[i];
  }
  entries_.resize(kept);
}

Status ExternalSorter::SpillBuffer() {
  SortBuffer();
  char name[32];
  std::snprintf(name, sizeof(name), "/run-%06zu", runs_.size());
  const std::string path = temp_dir_ + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return FileError(path, "cannot create a sorted run");
  runs_.push_back(path);  // removed by the destructor from now on
  std::setvbuf(f, nullptr, _IOFBF, kRunBufferSize);
  bool ok = true;
  for (const Entry& e : entries_) {
    char header[kRecordHeaderSize];
    std::memcpy(header, &e.key_size, 4);
    std::memcpy(header + 4, &e.value_size, 4);
    ok = std::fwrite(header, 1, sizeof(header), f) == sizeof(header) &&
         std::fwrite(buffer_.data() + e.offset, 1, e.key_size + e.value_size,
                     f) == e.key_size + e.value_size;
    if (!ok) break;
    bytes_spilled_ += sizeof(header) + e.key_size + e.value_size;
  }
  Status s;
  if (!ok || std::fflush(f) != 0)
    s = FileError(path, "cannot write a sorted run");
  if (std::fclose(f) != 0 && s.ok()) {
    s = FileError(path, "cannot write a sorted run");
  }
  buffer_.clear();
  entries_.clear();
  return s;
}

Status ExternalSorter::Finish() {
  finished_ = true;
  if (!status_.ok()) return status_;
  SortBuffer();
  for (const std::string& run : runs_) {
    auto cursor = std::make_unique<FileCursor>(run);
    status_ = cursor->Open();
    if (!status_.ok()) return status_;
    cursors_.push_back(std::move(cursor));
  }
  cursors_.push_back(std::make_unique<MemoryCursor>(this));
  return PickNext();
}

Status ExternalSorter::PickNext() {
  // Few runs in practice (input size / budget): a linear scan of the
  // cursors per record costs less than the record's key comparisons in the
  // sort.
  current_ = nullptr;
  size_t best = 0;
  for (size_t i = 0; i < cursors_.size(); i++) {
    if (!cursors_[i]->Valid()) continue;
    // Among equal keys the later cursor (newer run) wins.
    if (current_ == nullptr ||
        cursors_[i]->key().compare(current_->key()) <= 0) {
      current_ = cursors_[i].get();
      best = i;
    }
  }
  if (current_ == nullptr) return Status::OK();
  // The older runs' records of the same key are dropped.
  for (size_t i = 0; i < best; i++) {
    Cursor* c = cursors_[i].get();
    if (c->Valid() && c->key() == current_->key()) {
      status_ = c->Next();
      if (!status_.ok()) {
        current_ = nullptr;
        return status_;
      }
    }
  }
  return Status::OK();
}

bool ExternalSorter::Valid() const {
  return finished_ && status_.ok() && current_ != nullptr;
}

Slice ExternalSorter::key() const { return current_->key(); }
Slice ExternalSorter::value() const { return current_->value(); }

Status ExternalSorter::Next() {
  status_ = current_->Next();
  if (!status_.ok()) {
    current_ = nullptr;
    return status_;
  }
  return PickNext();
}

}  // namespace bloomkv::kvtool
