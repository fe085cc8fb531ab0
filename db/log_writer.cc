// log::Writer; see log_writer.h and docs/wal_format.md.
#include "db/log_writer.h"

#include <algorithm>
#include <cassert>

#include "bloomkv/env.h"
#include "db/log_format.h"
#include "util/coding.h"
#include "util/hash.h"

namespace bloomkv {
namespace log {

namespace {
// buffer_ is handed to the file once it holds this much, so a multi-MiB
// record is written block by block instead of being copied whole, while a
// typical record (a write batch) still costs a single Append.
constexpr size_t kAppendThreshold = kBlockSize;
}  // namespace

Writer::Writer(WritableFile* dest) : Writer(dest, 0) {}

Writer::Writer(WritableFile* dest, uint64_t dest_length)
    : dest_(dest),
      block_offset_(dest_length % kBlockSize),
      length_(dest_length) {
  buffer_.reserve(kAppendThreshold + kBlockSize);
}

Writer::~Writer() = default;

Status Writer::AddRecord(const Slice& payload) {
  if (!status_.ok()) return status_;
  const char* ptr = payload.data();
  size_t left = payload.size();
  bool begin = true;
  // An empty payload still produces one (empty) FULL record, so the loop
  // runs at least once.
  do {
    assert(block_offset_ <= kBlockSize);
    const size_t leftover = kBlockSize - block_offset_;
    if (leftover < kHeaderSize) {
      // A header never straddles blocks; readers expect zeros here.
      buffer_.append(leftover, '\0');
      block_offset_ = 0;
    }
    const size_t avail = kBlockSize - block_offset_ - kHeaderSize;
    const size_t n = std::min(left, avail);
    const bool end = (n == left);
    uint8_t type;
    if (begin && end) {
      type = kFullType;
    } else if (begin) {
      type = kFirstType;
    } else if (end) {
      type = kLastType;
    } else {
      type = kMiddleType;
    }
    EmitFragment(type, ptr, n);
    ptr += n;
    left -= n;
    begin = false;
    if (buffer_.size() >= kAppendThreshold) {
      AppendBuffer();
      if (!status_.ok()) return status_;
    }
  } while (left > 0);
  if (!buffer_.empty()) AppendBuffer();
  return status_;
}

void Writer::EmitFragment(uint8_t type, const char* data, size_t n) {
  assert(n <= 0xffff);
  assert(block_offset_ + kHeaderSize + n <= kBlockSize);
  const size_t start = buffer_.size();
  char header[kHeaderSize] = {};
  EncodeFixed16(header + 4, static_cast<uint16_t>(n));
  header[6] = static_cast<char>(type);
  buffer_.append(header, kHeaderSize);
  if (n > 0) buffer_.append(data, n);
  // The checksum covers the type byte and the payload, which follow each
  // other in buffer_: one pass of the one-shot hash.
  EncodeFixed32(buffer_.data() + start,
                BlockChecksum(buffer_.data() + start + 6, 1 + n));
  block_offset_ += kHeaderSize + n;
}

void Writer::AppendBuffer() {
  status_ = dest_->Append(buffer_);
  if (status_.ok()) length_ += buffer_.size();
  buffer_.clear();
}

}  // namespace log
}  // namespace bloomkv
