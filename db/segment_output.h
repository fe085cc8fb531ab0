// SegmentOutput: writes one new segment file for a flush or a compaction.
//
// Call pattern: Open (Add)* (Finish | Abandon). Finish syncs and closes the
// file; the caller syncs the directory once for all its outputs before any
// manifest edit names them, and opens their readers.
// Thread-safety: external synchronization required.
#ifndef BLOOMKV_DB_SEGMENT_OUTPUT_H_
#define BLOOMKV_DB_SEGMENT_OUTPUT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "bloomkv/env.h"
#include "bloomkv/options.h"
#include "db/version_edit.h"
#include "table/segment_builder.h"

namespace bloomkv {

class SegmentOutput {
 public:
  // filter_policy: the policy for this segment's filter (see
  // FilterPolicyForOutput); nullptr builds no filter. compression: of its
  // data blocks, for the level it is written into (CompressionForLevel).
  // encoded_values: with kLZ4Values, not null when the values given to Add
  // are already in their stored form against this dictionary (a
  // compaction's ValueRecoder's), which the segment then uses.
  SegmentOutput(const Options& options, const std::string& dbname,
                uint64_t number,
                std::shared_ptr<const FilterPolicy> filter_policy,
                CompressionType compression,
                std::shared_ptr<const ValueDictionary> encoded_values = nullptr);
  SegmentOutput(const SegmentOutput&) = delete;
  SegmentOutput& operator=(const SegmentOutput&) = delete;
  ~SegmentOutput();

  Status Open();
  // REQUIRES: Open() succeeded; keys in increasing internal-key order.
  Status Add(const Slice& internal_key, const Slice& value) {
    return builder_->Add(internal_key, value);
  }
  uint64_t NumEntries() const { return builder_->NumEntries(); }
  uint64_t FileSize() const { return builder_->FileSize(); }

  // Writes the segment's metadata blocks, syncs and closes the file, and
  // fills *meta's persistent fields (not its reader).
  Status Finish(std::shared_ptr<FileMetaData>* meta);
  // Finish in two steps, so that the sync can run on another thread: the
  // first writes everything and fills *meta, the second syncs and closes.
  // Either abandons the output (closes and deletes the file) when it fails.
  Status FinishUnsynced(std::shared_ptr<FileMetaData>* meta);
  Status SyncAndClose();
  // Closes and deletes the file.
  void Abandon();

 private:
  const Options& options_;
  Env* const env_;
  const std::string fname_;
  const uint64_t number_;
  const std::shared_ptr<const FilterPolicy> filter_policy_;
  const CompressionType compression_;
  const std::shared_ptr<const ValueDictionary> encoded_values_;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<SegmentBuilder> builder_;
  bool finished_ = false;
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_SEGMENT_OUTPUT_H_
