// In-memory files; see mem_files.h.
#include "tests/testutil/mem_files.h"

#include <algorithm>
#include <string>

namespace bloomkv {
namespace test {

Status StringSink::Append(const Slice& data) {
  if (closed_) return Status::IOError("StringSink: append after close");
  append_calls_++;
  contents_.append(data.data(), data.size());
  return Status::OK();
}

Status StringSink::Flush() {
  if (closed_) return Status::IOError("StringSink: flush after close");
  return Status::OK();
}

Status StringSink::Sync() {
  if (closed_) return Status::IOError("StringSink: sync after close");
  sync_calls_++;
  return Status::OK();
}

Status StringSink::Close() {
  closed_ = true;
  return Status::OK();
}

Status StringSource::Read(size_t n, Slice* result, char* scratch) {
  Status s = Read(pos_, n, result, scratch);
  pos_ += result->size();
  return s;
}

Status StringSource::Skip(uint64_t n) {
  pos_ = std::min<uint64_t>(contents_.size(), pos_ + n);
  return Status::OK();
}

Status StringSource::Read(uint64_t offset, size_t n, Slice* result,
                          char* /*scratch*/) const {
  const uint64_t start = std::min<uint64_t>(contents_.size(), offset);
  const uint64_t end = std::min<uint64_t>(contents_.size(), offset + n);
  if (offset >= fail_at_ || end > fail_at_) {
    *result = Slice();
    return Status::IOError("StringSource: injected read error at offset " +
                           std::to_string(offset));
  }
  *result = Slice(contents_.data() + start, static_cast<size_t>(end - start));
  return Status::OK();
}

}  // namespace test
}  // namespace bloomkv
