// SegmentLookup; see segment_lookup.h.
#include "db/segment_lookup.h"

#include <cstring>
#include <limits>

#include "db/table_cache.h"
#include "util/cache.h"

namespace bloomkv {

namespace {
// A segment's answer for one user key, in the row cache under (segment
// number, the key's KeyHash): this header, then the key (which tells two
// keys of one hash apart), then the value, in one allocation, so that a hit
// reads one object where it lies and copies the value out.
struct RowCacheHeader {
  SequenceNumber sequence;
  uint32_t key_size;
  uint32_t value_size;
  LookupResult result;  // kFound, kDeleted or kNotFound
};
// Charged per entry beyond its bytes, so that the capacity bounds memory:
// the allocation's shared-pointer header and malloc's rounding, the cache's
// own entry (64 bytes and malloc's), its index slot (16 bytes at a load of
// 3/8 to 3/4) and its record of recent misses (two words per entry). Set
// from the process's resident memory with and without a row cache
// (docs/benchmarks.md, "A row cache for popular keys").
constexpr size_t kRowCacheEntryOverhead = 200;

// Null when the key or value is too long for the header.
std::shared_ptr<const void> NewRowCacheEntry(const Slice& key,
                                             LookupResult result,
                                             SequenceNumber sequence,
                                             const Slice& value,
                                             size_t* charge) {
  constexpr size_t kMax = std::numeric_limits<uint32_t>::max();
  if (key.size() > kMax || value.size() > kMax) return nullptr;
  const RowCacheHeader header{sequence, static_cast<uint32_t>(key.size()),
                              static_cast<uint32_t>(value.size()), result};
  const size_t n = sizeof(header) + key.size() + value.size();
  auto entry = std::make_shared_for_overwrite<char[]>(n);
  char* p = entry.get();
  std::memcpy(p, &header, sizeof(header));
  std::memcpy(p + sizeof(header), key.data(), key.size());
  if (!value.empty()) {
    std::memcpy(p + sizeof(header) + key.size(), value.data(), value.size());
  }
  *charge = n + kRowCacheEntryOverhead;
  return entry;
}

// A row-cache hit's copy of an entry, made with the cache's shard locked.
struct RowCacheRead {
  Slice key;
  std::string* value;
  bool matched = false;
  LookupResult result = LookupResult::kNotFound;
  SequenceNumber sequence = 0;

  static void From(const void* entry, void* arg) {
    auto* r = static_cast<RowCacheRead*>(arg);
    const char* p = static_cast<const char*>(entry);
    RowCacheHeader header;
    std::memcpy(&header, p, sizeof(header));
    p += sizeof(header);
    if (Slice(p, header.key_size) != r->key) return;
    r->matched = true;
    r->result = header.result;
    r->sequence = header.sequence;
    if (header.result == LookupResult::kFound) {
      r->value->assign(p + header.key_size, header.value_size);
    }
  }
};
}  // namespace

bool SegmentLookup::Consult(const FileMetaData& f, int level,
                            bool in_range) {
  SegmentTrace* t = nullptr;
  if (trace_ != nullptr) {
    t = &trace_->segments.emplace_back();
    t->file_number = f.number;
    t->level = level;
  }
  if (!in_range) {
    range_skips_++;
    return false;  // t->outcome defaults to kSkippedByRange
  }
  if (!f.open_status.ok()) {
    consulted_++;
    status_ = f.open_status;
    if (t != nullptr) t->outcome = SegmentOutcome::kError;
    return true;
  }
  SegmentCounters::Shard& fc = f.counters.ShardFor(thread_);
  // A filter in memory (f.filter) answers a negative with no open file and
  // without touching f.meta; a paged one (the database over its
  // filter_and_index_memory_limit) is read by the segment's reader.
  bool paged_filter = false;
  bool may_match = true;
  if (f.filter != nullptr) {
    if (t != nullptr) t->had_filter = true;
    may_match = f.filter->KeyMayMatch(hash_);
  } else {
    paged_filter = f.meta != nullptr && f.meta->filter != nullptr;
    if (t != nullptr) t->had_filter = paged_filter;
  }
  // A segment the answer cache answers for is not searched: it is left out
  // of the counters and the trace.
  if (may_match && answers_ != nullptr && !answers_asked_ &&
      AnsweredByCache()) {
    if (t != nullptr) trace_->segments.pop_back();
    return true;
  }
  consulted_++;
  fc.Add(kSegmentLookups, 1);
  if (!may_match) return FilterNegative(fc, t);
  const CacheKey row_key{f.number, hash_};
  bool admit = false;
  if (row_cache_ != nullptr) {
    RowCacheRead read{key_, value_};
    if (row_cache_->Read(row_key, &admit, &RowCacheRead::From, &read) &&
        read.matched) {
      row_cache_hits_++;
      if (t != nullptr) t->row_cache_hit = true;
      if (read.result != LookupResult::kNotFound) {
        found_sequence_ = read.sequence;
      }
      return Answer(read.result, fc, t);
    }
  }
  TableCache::Handle segment;
  status_ = table_cache_->AcquireForLookup(f, thread_, &segment);
  SegmentReadStats seg_io;
  LookupResult result = LookupResult::kNotFound;
  if (status_.ok()) {
    status_ =
        paged_filter
            ? segment.reader()->Get(options_, key_, hash_, snapshot_, &result,
                                    value_, &seg_io, &found_sequence_)
            : segment.reader()->Search(options_, key_, snapshot_, &result,
                                       value_, &seg_io, &found_sequence_);
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
  if (admit && options_.fill_cache) {
    size_t charge;
    std::shared_ptr<const void> e = NewRowCacheEntry(
        key_, result, found_sequence_,
        result == LookupResult::kFound ? Slice(*value_) : Slice(), &charge);
    if (e != nullptr) row_cache_->Insert(row_key, std::move(e), charge);
  }
  return Answer(result, fc, t);
}

bool SegmentLookup::Answer(LookupResult result, SegmentCounters::Shard& fc,
                           SegmentTrace* t) {
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

bool SegmentLookup::AnsweredByCache() {
  answers_asked_ = true;
  AnswerCache::Answer a;
  if (!answers_->Lookup(key_, hash_, answers_epoch_, &a, value_)) return false;
  answered_by_cache_ = true;
  found_ = a.result != LookupResult::kNotFound;
  deleted_ = a.result == LookupResult::kDeleted;
  found_sequence_ = a.sequence;
  if (trace_ != nullptr) trace_->answer_cache_hit = true;
  return true;
}

bool SegmentLookup::FilterNegative(SegmentCounters::Shard& fc,
                                   SegmentTrace* t) {
  negatives_++;
  fc.Add(kSegmentFilterNegatives, 1);
  if (t != nullptr) t->outcome = SegmentOutcome::kSkippedByFilter;
  return false;
}

void SegmentLookup::Finish(ReadCounters::Shard* c) {
  if (answered_by_cache_) {
    c->Add(kAnswerCacheHits, 1);
  } else if (answers_asked_ && status_.ok() && options_.fill_cache) {
    const AnswerCache::Answer a{!found_    ? LookupResult::kNotFound
                                : deleted_ ? LookupResult::kDeleted
                                           : LookupResult::kFound,
                                found_sequence_};
    answers_->Offer(
        key_, hash_, answers_epoch_, a,
        a.result == LookupResult::kFound ? Slice(*value_) : Slice());
  }
  c->Add(kSegmentsConsulted, consulted_);
  if (range_skips_) c->Add(kSkippedByRange, range_skips_);
  if (negatives_) c->Add(kFilterNegatives, negatives_);
  if (positives_) c->Add(kFilterPositives, positives_);
  if (false_positives_) c->Add(kFilterFalsePositives, false_positives_);
  if (row_cache_hits_) c->Add(kRowCacheHits, row_cache_hits_);
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
