// log::Writer: appends logical records to a log file in the format of
// log_format.h (used for the write-ahead log and for the manifest).
//
// The writer only appends: it never flushes, syncs or closes the file, so the
// caller decides durability (e.g. Sync() after a group commit). A small
// record costs one WritableFile::Append; a record larger than a block costs
// about one Append per block.
// Once an Append fails, the file's tail is unknown, so every later AddRecord
// returns that same error: the caller must switch to a new log.
// Thread-safety: external synchronization required.
#ifndef BLOOMKV_DB_LOG_WRITER_H_
#define BLOOMKV_DB_LOG_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

class WritableFile;

namespace log {

class Writer {
 public:
  // Writes a new log into dest, which must be empty.
  // REQUIRES: dest outlives this Writer.
  explicit Writer(WritableFile* dest);

  // Continues an existing log of dest_length bytes (dest opened for append).
  // REQUIRES: dest outlives this Writer; dest_length is the file's exact
  // length; and the log ends cleanly: a Reader read it to the end without a
  // torn tail. Appending after torn bytes would leave them in the middle of
  // the log, where the next reader reports them as corruption.
  Writer(WritableFile* dest, uint64_t dest_length);

  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer();

  // Appends payload (any size, possibly empty) as one logical record.
  Status AddRecord(const Slice& payload);

  // Bytes of the log handed to dest so far (dest_length included): after
  // dest's next Sync, a reader finds at least this many.
  uint64_t length() const { return length_; }

 private:
  // Appends one physical record of type `type` to buffer_.
  void EmitFragment(uint8_t type, const char* data, size_t n);
  // Hands buffer_ to dest_ and records a failure in status_.
  void AppendBuffer();

  WritableFile* const dest_;
  size_t block_offset_;  // bytes already written in the current block
  std::string buffer_;   // physical bytes not yet handed to dest_
  uint64_t length_;      // bytes handed to dest_, with dest_length
  Status status_;        // first Append failure; sticky
};

}  // namespace log
}  // namespace bloomkv

#endif  // BLOOMKV_DB_LOG_WRITER_H_
