// Env base classes and helpers that work with any Env.
#include "bloomkv/env.h"

#include <chrono>
#include <thread>

#include "util/logging.h"

namespace bloomkv {

SequentialFile::~SequentialFile() = default;
RandomAccessFile::~RandomAccessFile() = default;
Status RandomAccessFile::Recheck(uint64_t /*offset*/, size_t /*n*/) const {
  return Status::OK();
}

void RandomAccessFile::WillNeed(uint64_t /*offset*/, size_t /*n*/) const {}

const char* RandomAccessFile::MappedBytes() const { return nullptr; }

WritableFile::~WritableFile() = default;
FileLock::~FileLock() = default;
Logger::~Logger() = default;
Env::~Env() = default;

Status Env::NewLogger(const std::string& fname,
                      std::unique_ptr<Logger>* result) {
  std::unique_ptr<WritableFile> file;
  Status s = NewAppendableFile(fname, &file);
  if (s.ok()) *result = NewWritableFileLogger(std::move(file));
  return s;
}

Status Env::NewShortLivedRandomAccessFile(
    const std::string& fname, std::unique_ptr<RandomAccessFile>* result) {
  return NewRandomAccessFile(fname, result);
}

Status Env::LinkFile(const std::string& src, const std::string&) {
  return Status::NotSupported(src, "this Env cannot make hard links");
}

void Env::SleepForMicroseconds(uint64_t micros) {
  std::this_thread::sleep_for(std::chrono::microseconds(micros));
}

Status ReadFileToString(Env* env, const std::string& fname, std::string* data) {
  data->clear();
  std::unique_ptr<SequentialFile> file;
  Status s = env->NewSequentialFile(fname, &file);
  if (!s.ok()) return s;
  constexpr size_t kBufferSize = 64 << 10;
  std::string scratch(kBufferSize, '\0');
  while (true) {
    Slice fragment;
    s = file->Read(kBufferSize, &fragment, scratch.data());
    if (!s.ok() || fragment.empty()) break;
    data->append(fragment.data(), fragment.size());
  }
  return s;
}

Status WriteStringToFile(Env* env, const Slice& data, const std::string& fname,
                         bool sync) {
  std::unique_ptr<WritableFile> file;
  Status s = env->NewWritableFile(fname, &file);
  if (!s.ok()) return s;
  s = file->Append(data);
  if (s.ok() && sync) s = file->Sync();
  if (s.ok()) {
    s = file->Close();
  } else {
    file->Close().PermitUncheckedError();
  }
  if (!s.ok()) env->RemoveFile(fname).PermitUncheckedError();
  return s;
}

}  // namespace bloomkv
