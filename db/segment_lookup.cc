// SegmentLookup; see segment_lookup.h.
#include "db/segment_lookup.h"

#include "db/table_cache.h"

namespace bloomkv {

bool SegmentLookup::Consult(const FileMetaData& f, int level) {
  SegmentTrace* t = nullptr;
  if (trace_ != nullptr) {
    t = &trace_->segments.emplace_back();
    t->file_number = f.number;
    t->level = level;
  }
  if (key_.compare(ExtractUserKey(f.smallest)) < 0 ||
      key_.compare(ExtractUserKey(f.largest)) > 0) {
    range_skips_++;
    return false;  // t->outcome defaults to kSkippedByRange
  }
  consulted_++;
  if (!f.open_status.ok()) {
    status_ = f.open_status;
    if (t != nullptr) t->outcome = SegmentOutcome::kError;
    return true;
  }
  SegmentCounters::Shard& fc = f.counters.ShardFor(thread_);
  fc.Add(kSegmentLookups, 1);
  // A filter in memory (f.filter) answers a negative with no open file and
  // without touching f.meta; a paged one (the database over its
  // filter_and_index_memory_limit) is read by the segment's reader.
  bool paged_filter = false;
  if (f.filter != nullptr) {
    if (t != nullptr) t->had_filter = true;
    if (!f.filter->KeyMayMatch(hash_)) return FilterNegative(fc, t);
  } else {
    paged_filter = f.meta != nullptr && f.meta->filter != nullptr;
    if (t != nullptr) t->had_filter = paged_filter;
  }
  TableCache::Handle segment;
  status_ = table_cache_->AcquireForLookup(f, thread_, &segment);
  SegmentReadStats seg_io;
  LookupResult result = LookupResult::kNotFound;
  if (status_.ok()) {
    status_ = paged_filter
                  ? segment.reader()->Get(options_, key_, hash_, snapshot_,
                                          &result, value_, &seg_io,
                                          &found_sequence_)
                  : segment.reader()->Search(options_, key_, snapshot_,
                                             &result, value_, &seg_io,
                                             &found_sequence_);
  }
  io_.meta_blocks_read += seg_io.meta_blocks_read;
  io_.data_blocks_read += seg_io.data_blocks_read;
  io_.bytes_read += seg_io.bytes_read;
  io_.cache_hits += seg_io.cache_hits;
  io_.cache_misses += seg_io.cache_misses;
  if (t != nullptr) {
    t->data_blocks_read = seg_io.data_blocks_read;
    t->bytes_read = seg_io.bytes_read;
    t->cache_hits = seg_io.cache_hits;
  }
  if (!status_.ok()) {
    if (t != nullptr) t->outcome = SegmentOutcome::kError;
    return true;
  }
  if (result == LookupResult::kFilterNegative) return FilterNegative(fc, t);
  positives_++;
  fc.Add(kSegmentFilterPositives, 1);
  switch (result) {
    case LookupResult::kFound:
      found_ = true;
      if (t != nullptr) t->outcome = SegmentOutcome::kFound;
      return true;
    case LookupResult::kDeleted:
      found_ = deleted_ = true;
      if (t != nullptr) t->outcome = SegmentOutcome::kDeleted;
      return true;
    default:
      false_positives_++;
      fc.Add(kSegmentFalsePositives, 1);
      if (t != nullptr) t->outcome = SegmentOutcome::kFilterFalsePositive;
      return false;
  }
}

bool SegmentLookup::FilterNegative(SegmentCounters::Shard& fc,
                                   SegmentTrace* t) {
  negatives_++;
  fc.Add(kSegmentFilterNegatives, 1);
  if (t != nullptr) t->outcome = SegmentOutcome::kSkippedByFilter;
  return false;
}

void SegmentLookup::Finish(ReadCounters::Shard* c) {
  c->Add(kSegmentsConsulted, consulted_);
  if (range_skips_) c->Add(kSkippedByRange, range_skips_);
  if (negatives_) c->Add(kFilterNegatives, negatives_);
  if (positives_) c->Add(kFilterPositives, positives_);
  if (false_positives_) c->Add(kFilterFalsePositives, false_positives_);
  if (io_.data_blocks_read) c->Add(kDataBlocksRead, io_.data_blocks_read);
  if (io_.meta_blocks_read) c->Add(kMetaBlocksRead, io_.meta_blocks_read);
  if (io_.bytes_read) c->Add(kBytesRead, io_.bytes_read);
  if (io_.cache_hits) c->Add(kBlockCacheHits, io_.cache_hits);
  if (io_.cache_misses) c->Add(kBlockCacheMisses, io_.cache_misses);
  if (trace_ != nullptr) {
    trace_->data_blocks_read = io_.data_blocks_read;
    trace_->bytes_read = io_.bytes_read;
  }
}

}  // namespace bloomkv
