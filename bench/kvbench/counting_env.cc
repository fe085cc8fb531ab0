// CountingEnv: wrappers that count each read and append, then forward it.
#include "bench/kvbench/counting_env.h"

#include <utility>

namespace bloomkv::bench {

class CountingEnv::CountingRandomAccessFile : public RandomAccessFile {
 public:
  CountingRandomAccessFile(std::unique_ptr<RandomAccessFile> target,
                           CountingEnv* env)
      : target_(std::move(target)), env_(env) {}

  Status Read(uint64_t offset, size_t n, Slice* result,
              char* scratch) const override {
    Status s = target_->Read(offset, n, result, scratch);
    env_->random_reads_.fetch_add(1, std::memory_order_relaxed);
    if (s.ok()) {
      env_->random_read_bytes_.fetch_add(result->size(),
                                         std::memory_order_relaxed);
    }
    return s;
  }

 private:
  const std::unique_ptr<RandomAccessFile> target_;
  CountingEnv* const env_;
};

class CountingEnv::CountingWritableFile : public WritableFile {
 public:
  CountingWritableFile(std::unique_ptr<WritableFile> target, CountingEnv* env)
      : target_(std::move(target)), env_(env) {}

  Status Append(const Slice& data) override {
    Status s = target_->Append(data);
    if (s.ok()) {
      env_->bytes_appended_.fetch_add(data.size(), std::memory_order_relaxed);
    }
    return s;
  }
  Status Flush() override { return target_->Flush(); }
  Status Sync() override { return target_->Sync(); }
  Status Close() override { return target_->Close(); }

 private:
  const std::unique_ptr<WritableFile> target_;
  CountingEnv* const env_;
};

Status CountingEnv::NewRandomAccessFile(
    const std::string& fname, std::unique_ptr<RandomAccessFile>* result) {
  std::unique_ptr<RandomAccessFile> file;
  Status s = target()->NewRandomAccessFile(fname, &file);
  if (s.ok()) {
    *result = std::make_unique<CountingRandomAccessFile>(std::move(file), this);
  }
  return s;
}

Status CountingEnv::NewWritableFile(const std::string& fname,
                                    std::unique_ptr<WritableFile>* result) {
  std::unique_ptr<WritableFile> file;
  Status s = target()->NewWritableFile(fname, &file);
  if (s.ok()) {
    *result = std::make_unique<CountingWritableFile>(std::move(file), this);
  }
  return s;
}

Status CountingEnv::NewAppendableFile(const std::string& fname,
                                      std::unique_ptr<WritableFile>* result) {
  std::unique_ptr<WritableFile> file;
  Status s = target()->NewAppendableFile(fname, &file);
  if (s.ok()) {
    *result = std::make_unique<CountingWritableFile>(std::move(file), this);
  }
  return s;
}

}  // namespace bloomkv::bench
