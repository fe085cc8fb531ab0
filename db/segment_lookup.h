// SegmentLookup: one point lookup's search through the segments of a
// version, one candidate at a time (Version::ForEachCandidate chooses them):
// key range, filter, then the segment itself through the table cache. It
// keeps the lookup's counters and, when asked for, its trace, and adds the
// counters to the database's once the search is over.
//
// Thread-safety: one object per lookup, used by one thread.
#ifndef BLOOMKV_DB_SEGMENT_LOOKUP_H_
#define BLOOMKV_DB_SEGMENT_LOOKUP_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "bloomkv/slice.h"
#include "bloomkv/statistics.h"
#include "bloomkv/status.h"
#include "db/answer_cache.h"
#include "db/version_edit.h"
#include "table/segment_reader.h"
#include "util/sharded_counter.h"

namespace bloomkv {

class Cache;
class TableCache;

// DB-wide counters of reads, bumped by every Get: sharded per thread.
enum ReadCounter : size_t {
  kGets,
  kMemtableHits,
  kSegmentsConsulted,
  kSkippedByRange,
  kFilterNegatives,
  kFilterPositives,
  kFilterFalsePositives,
  kDataBlocksRead,
  kMetaBlocksRead,  // index and filter blocks of paged segments
  kBytesRead,
  kBlockCacheHits,
  kBlockCacheMisses,
  kRowCacheHits,
  kAnswerCacheHits,
  kNumReadCounters
};
using ReadCounters = ShardedCounters<kNumReadCounters>;

class SegmentLookup {
 public:
  // Looks for user key `key` (its KeyHash `hash`) as of `snapshot`; a found
  // value goes to *value. trace: null, or where each segment's outcome is
  // recorded. thread: the caller's ThisThreadIndex(), for the counters.
  // row_cache: null, or the cache of segment answers
  // (Options::row_cache_capacity), for a snapshot no older than any entry
  // of any segment (a read of the latest state): each segment's answer is
  // then its newest entry for the key, whatever the snapshot.
  // answers: null, or the cache of whole-version answers
  // (Options::answer_cache_capacity) under the version's `answers_epoch`,
  // for such a read too. It is asked once, at the first segment whose
  // filter lets the key through: a key every filter rules out (a code never
  // issued) never touches it.
  // REQUIRES: every argument outlives the lookup.
  SegmentLookup(TableCache* table_cache, const SegmentReadOptions& options,
                const Slice& key, uint64_t hash, SequenceNumber snapshot,
                std::string* value, GetTrace* trace, size_t thread,
                Cache* row_cache = nullptr, AnswerCache* answers = nullptr,
                uint64_t answers_epoch = 0)
      : table_cache_(table_cache),
        options_(options),
        key_(key),
        hash_(hash),
        snapshot_(snapshot),
        value_(value),
        trace_(trace),
        thread_(thread),
        row_cache_(row_cache),
        answers_(answers),
        answers_epoch_(answers_epoch) {}

  SegmentLookup(const SegmentLookup&) = delete;
  SegmentLookup& operator=(const SegmentLookup&) = delete;

  // Consults segment f of `level`, whose key range holds the key if
  // in_range (Version::ForEachCandidate tells); true when the search is
  // over: the key was found (found()), is deleted there (deleted()), or the
  // segment could not be read (status()).
  bool Consult(const FileMetaData& f, int level, bool in_range);

  // Adds this lookup's counters to *counters (and totals to the trace).
  // Offers the answer found to the answer cache if it was asked and
  // missed, the search succeeded and options.fill_cache is set.
  void Finish(ReadCounters::Shard* counters);

  bool found() const { return found_; }
  bool deleted() const { return deleted_; }
  // The sequence of the entry found(); 0 otherwise.
  SequenceNumber found_sequence() const { return found_sequence_; }
  const Status& status() const { return status_; }

 private:
  TableCache* const table_cache_;
  const SegmentReadOptions& options_;
  const Slice key_;
  const uint64_t hash_;
  const SequenceNumber snapshot_;
  std::string* const value_;
  GetTrace* const trace_;
  const size_t thread_;
  Cache* const row_cache_;
  AnswerCache* const answers_;
  const uint64_t answers_epoch_;

  // Counts a filter negative of f (its counters fc, its trace t); false.
  bool FilterNegative(SegmentCounters::Shard& fc, SegmentTrace* t);
  // What the search of a consulted segment found (result, with *value_
  // and found_sequence_ set for a value or deletion): counted, traced;
  // true when the search is over.
  bool Answer(LookupResult result, SegmentCounters::Shard& fc,
              SegmentTrace* t);
  // Asks the answer cache, once per lookup; true when it answered.
  bool AnsweredByCache();

  bool found_ = false;
  bool deleted_ = false;
  SequenceNumber found_sequence_ = 0;
  Status status_;
  uint64_t consulted_ = 0;
  uint64_t range_skips_ = 0;
  uint64_t negatives_ = 0;
  uint64_t positives_ = 0;
  uint64_t false_positives_ = 0;
  uint64_t row_cache_hits_ = 0;
  bool answers_asked_ = false;
  bool answered_by_cache_ = false;
  SegmentReadStats io_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_DB_SEGMENT_LOOKUP_H_
