// Checkpoints: an openable copy of a live database in a new directory, made
// while writes go on.
//
//   bloomkv::Status s = bloomkv::CreateCheckpoint(db.get(), "/backup/links-1");
//   // later: bloomkv::DB::Open(options, "/backup/links-1", &copy);
//
// The copy holds every write that completed before CreateCheckpoint was
// called, and a prefix of the writes made during the call (never a later
// write without an earlier one). Segments are hard-linked when the
// filesystem allows it (they are immutable, so the source compacting or
// deleting its own names later cannot change the copy) and copied
// otherwise; the live logs are copied; a manifest describing exactly the
// copied segments and a CURRENT naming it are written. Every file and the
// directory are synced before success is returned.
//
// Thread-safety: safe to call while other threads use db.
#ifndef BLOOMKV_INCLUDE_CHECKPOINT_H_
#define BLOOMKV_INCLUDE_CHECKPOINT_H_

#include <string>

#include "bloomkv/status.h"

namespace bloomkv {

class DB;

struct CheckpointOptions {
  // Flush the memtable first, so that the copied log is small. Set to false
  // to leave the source's memtable alone and copy the whole live log.
  bool flush = true;
};

// Creates the checkpoint in dir, which must not exist yet (its parent must).
// On any error nothing is left behind at dir.
// REQUIRES: db was opened with DB::Open (not read-only).
Status CreateCheckpoint(DB* db, const std::string& dir,
                        const CheckpointOptions& options = CheckpointOptions());

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_CHECKPOINT_H_
