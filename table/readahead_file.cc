// ReadaheadFile; see readahead_file.h.
#include "table/readahead_file.h"

#include <algorithm>

namespace bloomkv {

ReadaheadFile::ReadaheadFile(const RandomAccessFile* file,
                             size_t readahead_size, uint64_t end)
    : file_(file), readahead_size_(readahead_size), end_(end) {}

Status ReadaheadFile::Read(uint64_t offset, size_t n, Slice* result,
                           char* scratch) const {
  const bool buffered = offset >= buffer_offset_ &&
                        offset - buffer_offset_ <= buffer_size_ &&
                        n <= buffer_size_ - (offset - buffer_offset_);
  if (!buffered) {
    if (n >= readahead_size_ || offset >= end_) {
      return file_->Read(offset, n, result, scratch);
    }
    // No more than the file holds: a small file gets a small buffer.
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(readahead_size_, end_ - offset));
    const size_t size = std::max(want, n);
    if (buffer_.size() < size) buffer_.resize(size);
    buffer_size_ = 0;
    file_->WillNeed(offset, size);
    Slice got;
    Status s = file_->Read(offset, size, &got, buffer_.data());
    if (!s.ok()) return s;
    if (got.data() != buffer_.data()) {
      std::copy(got.data(), got.data() + got.size(), buffer_.data());
      s = file_->Recheck(offset, got.size());
      if (!s.ok()) return s;
    }
    buffer_offset_ = offset;
    buffer_size_ = got.size();
  }
  const size_t start = static_cast<size_t>(offset - buffer_offset_);
  const size_t size = std::min(n, buffer_size_ - start);  // short at the end
  if (offset + n < end_) {
    *result = Slice(buffer_.data() + start, size);
    return Status::OK();
  }
  // The scan is over: the buffer goes now rather than when the reader
  // does, which for a compaction is when its last input is done.
  std::copy(buffer_.data() + start, buffer_.data() + start + size, scratch);
  *result = Slice(scratch, size);
  std::string().swap(buffer_);
  buffer_size_ = 0;
  return Status::OK();
}

}  // namespace bloomkv
