// RepairDB: rebuilds a database whose manifest or CURRENT is lost or damaged
// from the segments and write-ahead logs that can still be read.
//
//   bloomkv::RepairReport report;
//   bloomkv::Status s = bloomkv::RepairDB(options, "/var/lib/links", &report);
//
// Every segment is read in full with checksums on; every log is replayed into
// new level-0 segments, skipping damaged records. Of a damaged segment, every
// data block whose checksum holds is rewritten, its entries keeping their
// sequence numbers. Damaged files are moved into <path>/lost/, never deleted.
// All segments end up in level 0, numbered so that newer data is searched
// first; a fresh manifest and CURRENT name them. See docs/operations.md for
// what is kept and what is dropped.
//
// Thread-safety: takes the database lock; fails if the database is open.
#ifndef BLOOMKV_INCLUDE_REPAIR_H_
#define BLOOMKV_INCLUDE_REPAIR_H_

#include <cstdint>
#include <string>

#include "bloomkv/options.h"
#include "bloomkv/status.h"

namespace bloomkv {

// What RepairDB did.
struct RepairReport {
  uint64_t segments_kept = 0;      // intact, kept as they are
  uint64_t segments_salvaged = 0;  // damaged; readable blocks rewritten
  // Damaged with no readable data block, or of a format this build does not
  // read: nothing rewritten.
  uint64_t segments_lost = 0;
  uint64_t logs_replayed = 0;      // logs converted into segments
  uint64_t log_records_replayed = 0;
  uint64_t log_regions_dropped = 0;  // damaged regions of logs skipped
  uint64_t log_bytes_dropped = 0;
  // Entries of damaged segments (salvaged or lost) that could not be read:
  // the count the segment's properties or the old manifest record, minus the
  // entries salvaged. Segments whose count is recorded nowhere readable are
  // not in it; they are counted in segments_with_unknown_loss.
  uint64_t entries_dropped = 0;
  // Damaged segments whose entry count is unknown (no readable properties and
  // no manifest record of the file): their loss is not in entries_dropped.
  uint64_t segments_with_unknown_loss = 0;
  // Segments still on disk that a readable manifest record removes (a
  // compaction's inputs left by a crash while a reader held them): moved to
  // lost/ unread, since their data, minus what the compaction dropped, is in
  // its outputs, and what it dropped (a value with the tombstone deleting
  // it) must not come back.
  uint64_t segments_removed_by_manifest = 0;
  uint64_t segments_written = 0;  // new segments (from logs and salvage)
  uint64_t files_moved_to_lost = 0;
  uint64_t last_sequence = 0;  // the largest sequence number found
};

// REQUIRES: the database at path is not open (its lock is taken).
Status RepairDB(const Options& options, const std::string& path,
                RepairReport* report = nullptr);

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_REPAIR_H_
