// ExternalSorter: sorts key/value records by key within a memory budget,
// for `kvtool load --bulk`, and keeps one record per key: the one added
// last.
//
// Records are gathered in memory until the budget is used up; then they
// are sorted (by key, and among equal keys by the order they came in),
// reduced to the last record of each key, and spilled to a run file in the
// temporary directory. Finish sorts what is left in memory; the records
// then come out of a k-way merge of the runs and that remainder, in key
// order, each key once: where runs share a key the newest run's record
// wins, so the last record added for a key is the one kept, as a sequence
// of Puts would leave it. Input that fits the budget is never written to
// disk.
//
// Memory: the budget covers the record bytes and 16 bytes of bookkeeping
// per record; one record larger than the budget is held all the same. The
// merge holds one record and a 1 MiB read buffer per run.
// Run files: "run-NNNNNN" in the temporary directory, removed by the
// destructor (the directory itself is the caller's).
//
// Call pattern: (Add)* Finish (Valid, key, value, Next)*.
// Thread-safety: external synchronization required.
#ifndef BLOOMKV_TOOLS_KVTOOL_EXTERNAL_SORT_H_
#define BLOOMKV_TOOLS_KVTOOL_EXTERNAL_SORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv::kvtool {

class ExternalSorter {
 public:
  // REQUIRES: temp_dir exists and stays until the sorter is destroyed.
  ExternalSorter(std::string temp_dir, uint64_t memory_budget);
  ExternalSorter(const ExternalSorter&) = delete;
  ExternalSorter& operator=(const ExternalSorter&) = delete;
  ~ExternalSorter();

  // REQUIRES: Finish not called. An IO error (spilling a run) is returned
  // and is sticky.
  Status Add(const Slice& key, const Slice& value);

  // Ends the input and positions the output at its first record.
  Status Finish();

  // After Finish: the current record, in key order.
  bool Valid() const;
  Slice key() const;    // REQUIRES: Valid()
  Slice value() const;  // REQUIRES: Valid()
  // Moves to the next key. An IO error reading a run ends the output (Valid
  // turns false) and is returned here and by status().
  Status Next();
  Status status() const { return status_; }

  uint64_t records_added() const { return records_added_; }
  // Runs spilled to disk (0: everything fit in memory).
  uint64_t runs_spilled() const { return runs_.size(); }
  // Bytes written to run files.
  uint64_t bytes_spilled() const { return bytes_spilled_; }

 private:
  class Cursor;
  class MemoryCursor;
  class FileCursor;
  struct Entry {
    uint64_t offset;  // in buffer_; grows with the order of Add
    uint32_t key_size;
    uint32_t value_size;
  };

  Slice EntryKey(const Entry& e) const {
    return Slice(buffer_.data() + e.offset, e.key_size);
  }
  Slice EntryValue(const Entry& e) const {
    return Slice(buffer_.data() + e.offset + e.key_size, e.value_size);
  }
  // Sorts entries_ and drops all but the last record of each key.
  void SortBuffer();
  Status SpillBuffer();
  // Positions current_ at the smallest key among the cursors, skipping the
  // older records of that key.
  Status PickNext();

  const std::string temp_dir_;
  const uint64_t memory_budget_;
  std::string buffer_;  // key and value bytes of the records in memory
  std::vector<Entry> entries_;
  std::vector<std::string> runs_;  // paths, oldest first
  uint64_t records_added_ = 0;
  uint64_t bytes_spilled_ = 0;
  bool finished_ = false;
  Status status_;
  // The merge: cursors_[i] reads run i (the memory remainder is last, the
  // newest); current_ is the cursor holding the current record, or null.
  std::vector<std::unique_ptr<Cursor>> cursors_;
  Cursor* current_ = nullptr;
};

}  // namespace bloomkv::kvtool

#endif  // BLOOMKV_TOOLS_KVTOOL_EXTERNAL_SORT_H_
