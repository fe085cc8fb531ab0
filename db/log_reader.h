// log::Reader: reads back the logical records a log::Writer appended, for
// WAL recovery and for replaying the manifest.
//
// Damage is never fatal to reading: the reader drops what it cannot trust
// and resynchronizes, at the latest at the next block boundary. Every dropped
// region is classified (see docs/wal_format.md, "Torn tail or corruption"):
//  * Torn tail: the region runs to the end of the file and no record starts
//    after it — what a crash in the middle of an append leaves behind. It is
//    dropped silently and described by torn_tail() / torn_tail_bytes().
//  * Corruption: anything else (damage followed by a later record). It is
//    reported through Reporter::Corruption with a status naming the file and
//    the byte offset; the caller decides whether that fails recovery.
// A read error from the file ends reading: it is reported to the Reporter
// too, and status() returns it.
// Thread-safety: external synchronization required.
#ifndef BLOOMKV_DB_LOG_READER_H_
#define BLOOMKV_DB_LOG_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

class SequentialFile;

namespace log {

class Reader {
 public:
  // Receives the regions of the log that were dropped as corrupt.
  class Reporter {
   public:
    virtual ~Reporter();
    // `bytes` bytes of the file were dropped. `reason` is a Corruption
    // naming the file, the kind of damage and its byte offset (or the
    // IOError that ended reading).
    virtual void Corruption(size_t bytes, const Status& reason) = 0;
  };

  // Reads file from its start. file_name is used in messages only. With
  // verify_checksums false, only structural damage (bad type, bad length,
  // broken fragment sequence) is detected.
  // REQUIRES: file outlives this Reader; reporter is null or outlives it.
  Reader(SequentialFile* file, std::string file_name, Reporter* reporter,
         bool verify_checksums);

  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  ~Reader();

  // Reads the next logical record into *record and returns true, or returns
  // false at the end of the log (or after a read error: see status()).
  // *record stays valid until the next call or until *scratch changes; it
  // may point into *scratch.
  bool ReadRecord(Slice* record, std::string* scratch);

  // File offset of the first header of the record ReadRecord last returned.
  // For diagnostics (e.g. "edit at offset N of MANIFEST-000007").
  uint64_t LastRecordOffset() const { return last_record_offset_; }

  // Valid once ReadRecord has returned false. True when the log ended in a
  // torn tail that was dropped; the log then ends cleanly at
  // torn_tail_offset() and the torn_tail_bytes() after it were ignored.
  bool torn_tail() const { return torn_tail_; }
  uint64_t torn_tail_offset() const { return torn_tail_offset_; }
  uint64_t torn_tail_bytes() const { return torn_tail_bytes_; }
  // A torn tail that starts inside the first `synced` bytes (those a
  // manifest records as durable) was no interrupted write but damage:
  // Corruption naming the file and offset. OK when there is no torn tail or
  // it starts at or after `synced`.
  Status TornTailWithinSynced(uint64_t synced) const;

  // The read error that ended reading, or OK.
  const Status& status() const { return status_; }

 private:
  // ReadPhysicalRecord's results besides a RecordType.
  enum : int { kEof = 256, kBadRecord = 257 };

  // Returns a valid fragment's type with *payload and *offset set, or
  // kBadRecord with *offset and *reason describing the damage (the damaged
  // bytes have been skipped), or kEof.
  int ReadPhysicalRecord(Slice* payload, uint64_t* offset, const char** reason);
  // Loads the next block into buffer_; false on a read error.
  bool ReadBlock();
  // Skips a damaged physical record at the start of buffer_ whose header
  // claims `length`, up to the next place where reading can resume.
  // Moves buffer_ to the next intact record in this block, if any.
  bool FindNextRecord();
  void SkipDamaged(size_t length);
  // Size of the physical record with a good checksum at the start of s, or 0.
  size_t ValidRecordSize(const Slice& s) const;
  // Whether a record may end where `rest` (the rest of buffer_) begins.
  bool IsRecordBoundary(const Slice& rest) const;
  uint64_t CurrentOffset() const {
    return end_of_buffer_offset_ - buffer_.size();
  }

  // The dropped region being accumulated: it starts at `start`; whether it
  // is corruption or a torn tail is known only once a record starts after
  // it (corruption) or the file ends (torn tail).
  void BeginDrop(uint64_t start, const char* reason, uint64_t reason_offset);
  // A record starts at next_record: the pending region was corruption.
  void ReportDrop(uint64_t next_record);

  SequentialFile* const file_;
  const std::string file_name_;
  Reporter* const reporter_;
  const bool verify_checksums_;

  std::unique_ptr<char[]> backing_store_;  // kBlockSize bytes
  Slice buffer_;                           // unread bytes of the current block
  bool eof_ = false;                       // the last block read was partial
  uint64_t end_of_buffer_offset_ = 0;      // file offset just past buffer_
  // Without checksums: a damaged record was skipped by its length field in
  // this block; a second one in a row drops the rest of the block, since the
  // length that was trusted may itself have been the damage.
  bool skipped_by_length_ = false;

  bool dropping_ = false;
  uint64_t drop_start_ = 0;
  const char* drop_reason_ = nullptr;
  uint64_t drop_reason_offset_ = 0;

  uint64_t last_record_offset_ = 0;
  bool torn_tail_ = false;
  uint64_t torn_tail_offset_ = 0;
  uint64_t torn_tail_bytes_ = 0;
  Status status_;
  bool status_reported_ = false;
};

}  // namespace log
}  // namespace bloomkv

#endif  // BLOOMKV_DB_LOG_READER_H_
