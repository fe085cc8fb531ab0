// ReadaheadFile: large sequential reads for one reader that scans a file
// from front to back (a compaction reading a segment).
//
// A read that the buffer holds is served from it; any other read refills
// the buffer with up to readahead_size bytes from its offset on (never past
// the end given), so a scan of N bytes costs about N / readahead_size reads
// of the underlying file instead of one per block. A read larger than the
// buffer goes straight to the file. A read that reaches the end frees the
// buffer.
// Thread-safety: external synchronization required (unlike other
// RandomAccessFiles): the buffer belongs to one reader, and a result
// pointing into it is valid only until the next Read.
#ifndef BLOOMKV_TABLE_READAHEAD_FILE_H_
#define BLOOMKV_TABLE_READAHEAD_FILE_H_

#include <cstdint>
#include <string>

#include "bloomkv/env.h"

namespace bloomkv {

class ReadaheadFile final : public RandomAccessFile {
 public:
  // Reads file, which must outlive this object, ahead up to offset `end`
  // (the end of the part to scan; reads past it are served unbuffered).
  // REQUIRES: readahead_size > 0.
  ReadaheadFile(const RandomAccessFile* file, size_t readahead_size,
                uint64_t end);

  Status Read(uint64_t offset, size_t n, Slice* result,
              char* scratch) const override;
  // Passed to the file: a read the buffer served was checked when it was
  // filled, so at worst this reports a loss its copy escaped.
  Status Recheck(uint64_t offset, size_t n) const override {
    return file_->Recheck(offset, n);
  }
  // Not passed on: each refill of the buffer asks the file for its whole
  // stretch, so a block read from the buffer needs no hint of its own (and
  // a system call per block would cost a scan more than it saves).
  void WillNeed(uint64_t /*offset*/, size_t /*n*/) const override {}

 private:
  const RandomAccessFile* const file_;
  const size_t readahead_size_;
  const uint64_t end_;
  mutable std::string buffer_;  // file bytes from buffer_offset_ on
  mutable uint64_t buffer_offset_ = 0;
  mutable size_t buffer_size_ = 0;  // valid bytes in buffer_
};

}  // namespace bloomkv

#endif  // BLOOMKV_TABLE_READAHEAD_FILE_H_
