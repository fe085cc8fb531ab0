// CheckpointFiles: what a checkpoint copies, pinned in the source database by
// DBImpl::PinCheckpointFiles (db_impl_checkpoint.cc) under its mutex.
//
// While this object lives, the pinned version keeps its segments out of
// obsolete-file deletion, and the logs are held open, so a log the source
// deletes after a flush can still be read to the pinned size.
// Thread-safety: external synchronization required.
#ifndef BLOOMKV_DB_CHECKPOINT_FILES_H_
#define BLOOMKV_DB_CHECKPOINT_FILES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/env.h"
#include "db/version_set.h"

namespace bloomkv {

struct CheckpointFiles {
  struct Log {
    uint64_t number = 0;
    // Bytes that existed when pinned: every write that had returned. A write
    // in progress may end in a partial record, which recovery drops as a
    // torn tail.
    uint64_t size = 0;
    std::unique_ptr<SequentialFile> file;
  };
  Env* env = nullptr;                      // the source database's
  std::string dbname;                      // the source database's directory
  std::shared_ptr<const Version> version;  // the segments to link
  std::vector<Log> logs;                   // oldest first
  uint64_t log_number = 0;       // oldest log the version does not cover
  uint64_t manifest_number = 0;  // reserved in the source for the copy
  SequenceNumber last_sequence = 0;
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_CHECKPOINT_FILES_H_
