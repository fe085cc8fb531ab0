// WriteBatchInternal: the DB's access to a WriteBatch's encoding.
//
// The encoding (docs/write_batch_format.md) is what the write-ahead log
// stores, so it is an on-disk format. The public WriteBatch hides it; the DB
// uses these functions to stamp a batch with its first sequence number, log
// its bytes, rebuild a batch from a log record and apply it to a memtable.
// Thread-safety: as for WriteBatch (const access concurrent, mutation
// externally synchronized).
#ifndef BLOOMKV_DB_WRITE_BATCH_INTERNAL_H_
#define BLOOMKV_DB_WRITE_BATCH_INTERNAL_H_

#include <cstddef>
#include <cstdint>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"
#include "bloomkv/write_batch.h"
#include "table/internal_key.h"

namespace bloomkv {

class MemTable;

// Never change: on disk (the header of every batch in the write-ahead log).
// fixed64 first sequence number, then fixed32 number of records.
constexpr size_t kWriteBatchHeaderSize = 12;

class WriteBatchInternal {
 public:
  // The number of records, as stored in the header.
  static uint32_t Count(const WriteBatch* batch);
  static void SetCount(WriteBatch* batch, uint32_t n);

  // The sequence number of the first record; record i gets Sequence() + i.
  static SequenceNumber Sequence(const WriteBatch* batch);
  static void SetSequence(WriteBatch* batch, SequenceNumber seq);

  // The encoded batch: exactly the bytes to log.
  static Slice Contents(const WriteBatch* batch) { return Slice(batch->rep_); }
  static size_t ByteSize(const WriteBatch* batch) { return batch->rep_.size(); }

  // Replaces the batch with `contents` (a batch read back from the log)
  // after checking every byte of it: header present, every record tag
  // known, every length within the contents, the record count equal to the
  // header's, and the sequence numbers the records would take no larger than
  // kMaxSequenceNumber. On failure returns Corruption naming the offset
  // within the contents, and leaves the batch unchanged.
  static Status SetContents(WriteBatch* batch, const Slice& contents);

  // Adds every record to *memtable, record i with sequence Sequence() + i.
  // Checks the whole batch first, so it adds all records or none: returns
  // InvalidArgument if a record's sequence number would exceed
  // kMaxSequenceNumber, Corruption if the contents are malformed (possible
  // only after a bad SetCount()).
  // REQUIRES: external synchronization among memtable writers.
  static Status InsertInto(const WriteBatch* batch, MemTable* memtable);
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_WRITE_BATCH_INTERNAL_H_
