// CountingEnv; see counting_env.h.
//
// Each wrapped file holds pointers to two Counters (its file's and the
// total), both owned by the Env and never freed before it, so counting is two
// relaxed atomic adds and takes no lock.
#include "util/counting_env.h"

namespace bloomkv {

struct CountingEnv::Counters {
  std::atomic<uint64_t> random_opens{0};
  std::atomic<uint64_t> random_reads{0};
  std::atomic<uint64_t> random_read_bytes{0};
  std::atomic<uint64_t> sequential_opens{0};
  std::atomic<uint64_t> sequential_reads{0};
  std::atomic<uint64_t> sequential_read_bytes{0};
  std::atomic<uint64_t> writable_opens{0};
  std::atomic<uint64_t> appends{0};
  std::atomic<uint64_t> bytes_appended{0};
  std::atomic<uint64_t> syncs{0};

  Counts Snapshot() const {
    constexpr auto r = std::memory_order_relaxed;
    Counts c;
    c.random_opens = random_opens.load(r);
    c.random_reads = random_reads.load(r);
    c.random_read_bytes = random_read_bytes.load(r);
    c.sequential_opens = sequential_opens.load(r);
    c.sequential_reads = sequential_reads.load(r);
    c.sequential_read_bytes = sequential_read_bytes.load(r);
    c.writable_opens = writable_opens.load(r);
    c.appends = appends.load(r);
    c.bytes_appended = bytes_appended.load(r);
    c.syncs = syncs.load(r);
    return c;
  }
  void Zero() {
    constexpr auto r = std::memory_order_relaxed;
    for (auto* a :
         {&random_opens, &random_reads, &random_read_bytes, &sequential_opens,
          &sequential_reads, &sequential_read_bytes, &writable_opens, &appends,
          &bytes_appended, &syncs}) {
      a->store(0, r);
    }
  }
};

namespace {

using Counters = CountingEnv::Counters;

void Add(std::atomic<uint64_t> Counters::*field, Counters* file,
         Counters* total, uint64_t n) {
  (file->*field).fetch_add(n, std::memory_order_relaxed);
  (total->*field).fetch_add(n, std::memory_order_relaxed);
}

class CountingSequentialFile final : public SequentialFile {
 public:
  CountingSequentialFile(std::unique_ptr<SequentialFile> target, Counters* file,
                         Counters* total)
      : target_(std::move(target)), file_(file), total_(total) {}

  Status Read(size_t n, Slice* result, char* scratch) override {
    Status s = target_->Read(n, result, scratch);
    Add(&Counters::sequential_reads, file_, total_, 1);
    Add(&Counters::sequential_read_bytes, file_, total_, result->size());
    return s;
  }
  Status Skip(uint64_t n) override { return target_->Skip(n); }

 private:
  const std::unique_ptr<SequentialFile> target_;
  Counters* const file_;
  Counters* const total_;
};

class CountingRandomAccessFile final : public RandomAccessFile {
 public:
  CountingRandomAccessFile(std::unique_ptr<RandomAccessFile> target,
                           Counters* file, Counters* total, bool pass_mapping)
      : target_(std::move(target)),
        file_(file),
        total_(total),
        mapped_(pass_mapping ? target_->MappedBytes() : nullptr) {}

  Status Read(uint64_t offset, size_t n, Slice* result,
              char* scratch) const override {
    Status s = target_->Read(offset, n, result, scratch);
    Add(&Counters::random_reads, file_, total_, 1);
    Add(&Counters::random_read_bytes, file_, total_, result->size());
    return s;
  }

  Status Recheck(uint64_t offset, size_t n) const override {
    return target_->Recheck(offset, n);
  }
  void WillNeed(uint64_t offset, size_t n) const override {
    target_->WillNeed(offset, n);
  }
  const char* MappedBytes() const override { return mapped_; }

 private:
  const std::unique_ptr<RandomAccessFile> target_;
  Counters* const file_;
  Counters* const total_;
  const char* const mapped_;
};

class CountingWritableFile final : public WritableFile {
 public:
  CountingWritableFile(std::unique_ptr<WritableFile> target, Counters* file,
                       Counters* total)
      : target_(std::move(target)), file_(file), total_(total) {}

  Status Append(const Slice& data) override {
    Status s = target_->Append(data);
    Add(&Counters::appends, file_, total_, 1);
    if (s.ok()) Add(&Counters::bytes_appended, file_, total_, data.size());
    return s;
  }
  Status Flush() override { return target_->Flush(); }
  Status Sync() override {
    Add(&Counters::syncs, file_, total_, 1);
    return target_->Sync();
  }
  Status Close() override { return target_->Close(); }

 private:
  const std::unique_ptr<WritableFile> target_;
  Counters* const file_;
  Counters* const total_;
};

}  // namespace

CountingEnv::CountingEnv(Env* target, bool pass_mappings)
    : EnvWrapper(target),
      total_(std::make_unique<Counters>()),
      pass_mappings_(pass_mappings) {}

CountingEnv::~CountingEnv() = default;

CountingEnv::Counters* CountingEnv::CountersFor(const std::string& fname) {
  MutexLock guard(&mu_);
  std::unique_ptr<Counters>& c = per_file_[fname];
  if (c == nullptr) c = std::make_unique<Counters>();
  return c.get();
}

CountingEnv::Counts CountingEnv::Total() const { return total_->Snapshot(); }

CountingEnv::Counts CountingEnv::ForFile(const std::string& fname) const {
  MutexLock guard(&mu_);
  auto it = per_file_.find(fname);
  if (it == per_file_.end()) return Counts();
  return it->second->Snapshot();
}

void CountingEnv::Reset() {
  MutexLock guard(&mu_);
  total_->Zero();
  for (auto& [name, counters] : per_file_) counters->Zero();
}

Status CountingEnv::NewSequentialFile(const std::string& fname,
                                      std::unique_ptr<SequentialFile>* result) {
  std::unique_ptr<SequentialFile> file;
  Status s = target()->NewSequentialFile(fname, &file);
  if (!s.ok()) return s;
  Counters* c = CountersFor(fname);
  Add(&Counters::sequential_opens, c, total_.get(), 1);
  *result = std::make_unique<CountingSequentialFile>(std::move(file), c,
                                                     total_.get());
  return s;
}

Status CountingEnv::NewRandomAccessFile(
    const std::string& fname, std::unique_ptr<RandomAccessFile>* result) {
  return CountRandomAccessFile(
      fname, target()->NewRandomAccessFile(fname, result), result);
}

Status CountingEnv::NewShortLivedRandomAccessFile(
    const std::string& fname, std::unique_ptr<RandomAccessFile>* result) {
  return CountRandomAccessFile(
      fname, target()->NewShortLivedRandomAccessFile(fname, result), result);
}

Status CountingEnv::CountRandomAccessFile(
    const std::string& fname, Status s,
    std::unique_ptr<RandomAccessFile>* result) {
  if (!s.ok()) return s;
  std::unique_ptr<RandomAccessFile> file = std::move(*result);
  Counters* c = CountersFor(fname);
  Add(&Counters::random_opens, c, total_.get(), 1);
  *result = std::make_unique<CountingRandomAccessFile>(
      std::move(file), c, total_.get(), pass_mappings_);
  return s;
}

Status CountingEnv::NewWritableFile(const std::string& fname,
                                    std::unique_ptr<WritableFile>* result) {
  std::unique_ptr<WritableFile> file;
  Status s = target()->NewWritableFile(fname, &file);
  if (!s.ok()) return s;
  Counters* c = CountersFor(fname);
  Add(&Counters::writable_opens, c, total_.get(), 1);
  *result =
      std::make_unique<CountingWritableFile>(std::move(file), c, total_.get());
  return s;
}

Status CountingEnv::NewAppendableFile(const std::string& fname,
                                      std::unique_ptr<WritableFile>* result) {
  std::unique_ptr<WritableFile> file;
  Status s = target()->NewAppendableFile(fname, &file);
  if (!s.ok()) return s;
  Counters* c = CountersFor(fname);
  Add(&Counters::writable_opens, c, total_.get(), 1);
  *result =
      std::make_unique<CountingWritableFile>(std::move(file), c, total_.get());
  return s;
}

}  // namespace bloomkv
