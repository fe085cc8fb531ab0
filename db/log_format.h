// The physical layout shared by log::Writer and log::Reader.
//
// A log (the write-ahead log, or the manifest's log of version edits) is a
// sequence of kBlockSize blocks; the last one may be partial. Each block holds
// physical records:
//
//   checksum : fixed32  BlockChecksum(type byte, then payload)
//   length   : fixed16  payload bytes
//   type     : uint8    RecordType
//   payload  : length bytes
//
// A logical record (one AddRecord call) that does not fit in the rest of the
// block is split into a FIRST, zero or more MIDDLE and a LAST fragment. A
// header never straddles a block boundary: a block tail shorter than
// kHeaderSize is filled with zeros. See docs/wal_format.md.
//
// Thread-safety: constants only.
#ifndef BLOOMKV_DB_LOG_FORMAT_H_
#define BLOOMKV_DB_LOG_FORMAT_H_

#include <cstddef>
#include <cstdint>

namespace bloomkv {
namespace log {

// Stored in every physical record header. Never change: on disk.
enum RecordType : uint8_t {
  // Reserved, never written. A zero-filled region (a file extended by the
  // file system but never written, preallocated space) then never parses
  // as a valid record, even with checksum verification turned off.
  kZeroType = 0,

  kFullType = 1,  // a whole logical record
  // Fragments of a logical record that spans blocks.
  kFirstType = 2,
  kMiddleType = 3,
  kLastType = 4,
};
constexpr uint8_t kMaxRecordType = kLastType;

// Never change: on disk. Every block boundary is a point where a reader can
// resynchronize after damage, because the writer always starts a block with
// a header.
constexpr size_t kBlockSize = 32768;

// checksum (4) + length (2) + type (1). Never change: on disk.
constexpr size_t kHeaderSize = 4 + 2 + 1;

// The fragment length must fit the 16-bit length field.
static_assert(kBlockSize - kHeaderSize <= 0xffff);

}  // namespace log
}  // namespace bloomkv

#endif  // BLOOMKV_DB_LOG_FORMAT_H_
