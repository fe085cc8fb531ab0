// Counters that show what the filters save: DB-wide, per segment and per Get.
//
// DbStats is a snapshot of monotonically increasing counters since Open().
// GetTrace is filled by one Get() when ReadOptions::trace points at it.
// Thread-safety: plain values, copied out of the DB.
#ifndef BLOOMKV_INCLUDE_STATISTICS_H_
#define BLOOMKV_INCLUDE_STATISTICS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace bloomkv {

struct DbStats {
  uint64_t gets = 0;                // Get() calls
  uint64_t memtable_hits = 0;       // Gets answered by a memtable
  uint64_t segments_consulted = 0;  // segments whose key range covered a key
  uint64_t skipped_by_range = 0;    // key outside the segment's key range
  uint64_t filter_negatives = 0;    // skipped by filter: no IO at all
  uint64_t filter_positives = 0;    // filter said "maybe" (or no filter)
  uint64_t filter_false_positives = 0;  // positive, key not in the segment
  uint64_t data_blocks_read = 0;        // data blocks read from files
  // Index and filter blocks read from files: only segments whose index and
  // filter are paged (Options::filter_and_index_memory_limit) read them.
  uint64_t meta_blocks_read = 0;
  uint64_t bytes_read = 0;              // bytes of those blocks
  uint64_t block_cache_hits = 0;
  uint64_t block_cache_misses = 0;
  uint64_t row_cache_hits = 0;  // segments answered by the row cache
  // Lookups the answer cache answered (Options::answer_cache_capacity),
  // without consulting any segment.
  uint64_t answer_cache_hits = 0;
  uint64_t flushes = 0;  // memtables written to segments
  uint64_t bytes_flushed = 0;
  uint64_t user_bytes_written = 0;  // write batches (keys, values, tags)
  uint64_t compactions = 0;         // merges run (trivial moves excluded)
  uint64_t trivial_moves = 0;       // segments moved down unchanged
  // Level-0 compactions that lookups asked for
  // (Options::read_triggered_compaction); also counted in compactions.
  uint64_t read_triggered_compactions = 0;
  uint64_t compaction_bytes_read = 0;
  uint64_t compaction_bytes_written = 0;
  uint64_t compaction_filter_drops = 0;  // entries a CompactionFilter removed
  uint64_t compaction_range_drops = 0;   // entries a DeleteRange covered
  uint64_t stall_micros = 0;             // writers delayed or stopped
  // Of which: paced while level 0 was at the slowdown trigger...
  uint64_t write_delay_micros = 0;
  // ... and waiting for a flush or for level 0 to drop below the stop
  // trigger.
  uint64_t write_stop_micros = 0;

  // Bytes written to segments (flushes and compactions) per byte the
  // application wrote; the WAL adds one more.
  double WriteAmplification() const {
    return user_bytes_written == 0
               ? 0.0
               : static_cast<double>(bytes_flushed + compaction_bytes_written) /
                     static_cast<double>(user_bytes_written);
  }

  // "name: value" lines, as GetProperty("bloomkv.stats") returns.
  std::string ToString() const;
};

// One live segment: its shape, its filter and the filter's record so far.
struct SegmentInfo {
  int level = 0;
  uint64_t file_number = 0;
  std::string file_name;  // path of the segment file
  uint64_t file_size = 0;
  uint64_t num_entries = 0;  // tombstones included
  std::string smallest_key;  // user keys
  std::string largest_key;
  bool has_filter = false;  // a filter this DB's policy interprets
  // Name() of the policy that wrote it ("bloomkv.BlockedBloom.v1",
  // "bloomkv.BinaryFuse8", ...); empty without a filter.
  std::string filter_policy;
  double bits_per_key = 0;
  uint64_t filter_bytes = 0;  // in memory, unless paged
  double theoretical_fp_rate = 1.0;
  // The index block (and the filter) stay in the file and are read through
  // the block cache (Options::filter_and_index_memory_limit).
  bool index_paged = false;
  bool filter_paged = false;
  uint64_t lookups = 0;  // Gets whose key fell in the key range
  uint64_t filter_negatives = 0;
  uint64_t filter_positives = 0;
  uint64_t false_positives = 0;
  bool readable = true;  // false: opening the file failed
  std::string error;     // why, when !readable

  // Measured false-positive rate: false positives among lookups of keys
  // the segment does not hold (0 when there were none).
  double MeasuredFpRate() const {
    const uint64_t absent = filter_negatives + false_positives;
    return absent == 0 ? 0.0 : static_cast<double>(false_positives) / absent;
  }
};

// What happened to one candidate segment during one Get.
enum class SegmentOutcome {
  kSkippedByRange,       // key outside [smallest, largest]
  kSkippedByFilter,      // filter negative: nothing read
  kFilterFalsePositive,  // filter positive (or no filter), key not there
  kFound,                // the key's newest visible version is here
  kDeleted,              // the newest visible version is a tombstone
  kError,                // reading the segment failed
};
const char* SegmentOutcomeName(SegmentOutcome outcome);

struct SegmentTrace {
  uint64_t file_number = 0;
  int level = 0;
  SegmentOutcome outcome = SegmentOutcome::kSkippedByRange;
  bool had_filter = false;
  uint64_t data_blocks_read = 0;
  uint64_t bytes_read = 0;
  uint64_t cache_hits = 0;
  bool row_cache_hit = false;  // answered by Options::row_cache_capacity
};

struct GetTrace {
  uint64_t key_hash = 0;               // XXH3-64 of the key, computed once
  bool found_in_memtable = false;      // active memtable answered
  bool found_in_immutable = false;     // memtable being flushed answered
  // Options::answer_cache_capacity answered: no segment was consulted.
  bool answer_cache_hit = false;
  std::vector<SegmentTrace> segments;  // in the order considered
  uint64_t data_blocks_read = 0;
  uint64_t bytes_read = 0;
  // "found", "deleted", "deleted by a range" (DeleteRange), "not found" or
  // the error
  std::string result;

  // A human-readable multi-line account of the lookup.
  std::string ToString() const;
};

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_STATISTICS_H_
