// WriteBatch: a group of updates applied to a database atomically.
//
//   WriteBatch batch;
//   batch.Delete("old-key");
//   batch.Put("new-key", value);
//   Status s = db->Write(write_options, &batch);
//
// The updates are applied in the order they were added, so a later Put of
// the same key wins. Keys and values are arbitrary bytes (NUL and empty
// values included); the database checks key limits when the batch is
// written. A batch is a plain value: copying it copies its updates.
//
// Thread-safety: const methods may be called concurrently; any non-const
// call requires external synchronization.
#ifndef BLOOMKV_INCLUDE_WRITE_BATCH_H_
#define BLOOMKV_INCLUDE_WRITE_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

class WriteBatch {
 public:
  // Receives the updates of a batch in order; see Iterate().
  class Handler {
   public:
    virtual ~Handler();
    virtual void Put(const Slice& key, const Slice& value) = 0;
    virtual void Delete(const Slice& key) = 0;
    // A DeleteRange(begin, end) of the batch.
    virtual void DeleteRange(const Slice& begin, const Slice& end) = 0;
  };

  WriteBatch();
  WriteBatch(const WriteBatch&) = default;
  WriteBatch& operator=(const WriteBatch&) = default;
  // A moved-from batch is empty (and usable).
  WriteBatch(WriteBatch&& other) noexcept;
  WriteBatch& operator=(WriteBatch&& other) noexcept;
  ~WriteBatch();

  // Stores key -> value. REQUIRES: key and value shorter than 4 GiB.
  void Put(const Slice& key, const Slice& value);
  // Removes key, if it exists. REQUIRES: key shorter than 4 GiB.
  void Delete(const Slice& key);
  // Removes every key in [begin, end) that exists when the batch is
  // written (DB::DeleteRange). Later updates of the batch are not affected.
  // REQUIRES: begin and end shorter than 4 GiB. The database refuses the
  // batch (InvalidArgument) if begin > end or either is over its key limit.
  void DeleteRange(const Slice& begin, const Slice& end);
  // Removes every update from the batch.
  void Clear();

  // The number of updates (Put, Delete and DeleteRange) in the batch.
  uint32_t Count() const;

  // The size of the batch's encoding, which is what it costs to log it;
  // grows with every update.
  size_t ApproximateSize() const;

  // Adds the updates of source after this batch's own. &source may be this.
  void Append(const WriteBatch& source);

  // Calls handler->Put, Delete or DeleteRange for each update, in order. Returns
  // Corruption (after calling the handler for the updates before the damage)
  // if the batch's contents are malformed, which can only happen to contents
  // installed from outside, and those are checked when installed.
  Status Iterate(Handler* handler) const;

 private:
  friend class WriteBatchInternal;

  // The encoded batch; see docs/write_batch_format.md.
  std::string rep_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_WRITE_BATCH_H_
