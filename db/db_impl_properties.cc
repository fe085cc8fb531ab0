// DBImpl, observability: DbStats, per-segment information and the
// "bloomkv.*" properties.
#include <cinttypes>
#include <cstdio>

#include "db/db_impl.h"
#include "db/filename.h"
#include "db/info_log.h"
#include "util/logging.h"

namespace bloomkv {

DbStats DBImpl::GetStats() {
  const auto& r = read_counters_;
  DbStats st;
  st.gets = r.Sum(kGets);
  st.memtable_hits = r.Sum(kMemtableHits);
  st.segments_consulted = r.Sum(kSegmentsConsulted);
  st.skipped_by_range = r.Sum(kSkippedByRange);
  st.filter_negatives = r.Sum(kFilterNegatives);
  st.filter_positives = r.Sum(kFilterPositives);
  st.filter_false_positives = r.Sum(kFilterFalsePositives);
  st.data_blocks_read = r.Sum(kDataBlocksRead);
  st.meta_blocks_read = r.Sum(kMetaBlocksRead);
  st.bytes_read = r.Sum(kBytesRead);
  st.block_cache_hits = r.Sum(kBlockCacheHits);
  st.row_cache_hits = r.Sum(kRowCacheHits);
  st.answer_cache_hits = r.Sum(kAnswerCacheHits);
  st.block_cache_misses = r.Sum(kBlockCacheMisses);
  const Counters& c = *counters_;
  st.flushes = c.flushes.load();
  st.bytes_flushed = c.bytes_flushed.load();
  st.user_bytes_written = c.user_bytes_written.load();
  st.compactions = c.compactions.load();
  st.trivial_moves = c.trivial_moves.load();
  st.read_triggered_compactions = c.read_triggered_compactions.load();
  st.compaction_bytes_read = c.compaction_bytes_read.load();
  st.compaction_bytes_written = c.compaction_bytes_written.load();
  st.compaction_filter_drops = c.compaction_filter_drops.load();
  st.compaction_range_drops = c.compaction_range_drops.load();
  st.stall_micros = c.stall_micros.load();
  st.write_delay_micros = c.write_delay_micros.load();
  st.write_stop_micros = c.write_stop_micros.load();
  return st;
}

void DBImpl::GetApproximateSizes(const Range* ranges, int n,
                                 uint64_t* sizes) {
  const size_t thread = ThisThreadIndex();
  ReadView* view = read_views_.Acquire(thread);
  const Version& v = view->version();
  for (int i = 0; i < n; i++) {
    sizes[i] = 0;
    if (ranges[i].start.compare(ranges[i].limit) >= 0) continue;
    // The first internal keys of start and of limit.
    const std::string start =
        MakeInternalKey(ranges[i].start, kMaxSequenceNumber, kValueTypeForSeek);
    const std::string limit =
        MakeInternalKey(ranges[i].limit, kMaxSequenceNumber, kValueTypeForSeek);
    for (int level = 0; level < kNumLevels; level++) {
      for (const auto& f : v.files(level)) {
        // Where in f the entries at or after ikey start.
        auto offset_of = [this, &f](const std::string& ikey) -> uint64_t {
          if (CompareInternalKeys(ikey, f->smallest) <= 0) return 0;
          if (CompareInternalKeys(ikey, f->largest) > 0 || f->meta == nullptr) {
            return f->meta != nullptr ? f->meta->props.data_size
                                      : f->file_size;
          }
          if (!f->meta->index_paged()) {
            return f->meta->ApproximateOffsetOf(ikey);
          }
          // The index is in the file: read it through the reader.
          TableCache::Handle segment;
          if (!table_cache_->Acquire(*f, &segment).ok()) {
            return f->meta->props.data_size;
          }
          return segment.reader()->ApproximateOffsetOf(ikey);
        };
        const uint64_t from = offset_of(start), to = offset_of(limit);
        if (to > from) sizes[i] += to - from;
      }
    }
  }
  read_views_.Release(thread, view);
}

std::vector<SegmentInfo> DBImpl::GetSegmentInfo() {
  const size_t thread = ThisThreadIndex();
  ReadView* view = read_views_.Acquire(thread);
  std::vector<SegmentInfo> result;
  for (int level = 0; level < kNumLevels; level++) {
    for (const auto& f : view->version().files(level)) {
      SegmentInfo& i = result.emplace_back();
      i.level = level;
      i.file_number = f->number;
      i.file_name = SegmentFileName(dbname_, f->number);
      i.file_size = f->file_size;
      i.num_entries = f->num_entries;
      i.smallest_key = ExtractUserKey(f->smallest).ToString();
      i.largest_key = ExtractUserKey(f->largest).ToString();
      i.readable = f->open_status.ok();
      if (!i.readable) i.error = f->open_status.ToString();
      const SegmentFilter* filter =
          f->meta != nullptr ? f->meta->filter.get() : nullptr;
      if (filter != nullptr) {
        i.has_filter = true;
        i.filter_policy = filter->policy().Name();
        i.bits_per_key = filter->bits_per_key();
        i.filter_bytes = filter->size();
        i.theoretical_fp_rate = filter->TheoreticalFpRate();
      }
      i.index_paged = f->meta != nullptr && f->meta->index_paged();
      i.filter_paged = f->meta != nullptr && f->meta->filter_paged();
      i.lookups = f->counters.Sum(kSegmentLookups);
      i.filter_negatives = f->counters.Sum(kSegmentFilterNegatives);
      i.filter_positives = f->counters.Sum(kSegmentFilterPositives);
      i.false_positives = f->counters.Sum(kSegmentFalsePositives);
    }
  }
  read_views_.Release(thread, view);
  return result;
}

bool DBImpl::GetProperty(const Slice& property, std::string* value) {
  value->clear();
  const std::string name = property.ToString();
  if (name == "bloomkv.stats") {
    *value = GetStats().ToString();
    return true;
  }
  if (name == "bloomkv.compaction-pending") {
    // "1" while a flush or compaction is queued or running, else "0".
    MutexLock guard(&mu_);
    *value = HasBackgroundWork() ? "1" : "0";
    return true;
  }
  std::shared_ptr<const Version> v;
  size_t mem_usage = 0;
  size_t memtable_range_tombstones = 0;
  {
    MutexLock guard(&mu_);
    v = versions_->current();
    mem_usage = mem_->ApproximateMemoryUsage() +
                (imm_ != nullptr ? imm_->ApproximateMemoryUsage() : 0);
    memtable_range_tombstones =
        mem_->NumRangeTombstones() +
        (imm_ != nullptr ? imm_->NumRangeTombstones() : 0);
  }
  if (name == "bloomkv.num-range-tombstones") {
    *value = std::to_string(
        memtable_range_tombstones +
        (v->range_tombstones() != nullptr
             ? v->range_tombstones()->tombstones().size()
             : 0));
    return true;
  }
  const std::string kFilesAtLevel = "bloomkv.num-files-at-level";
  if (name.compare(0, kFilesAtLevel.size(), kFilesAtLevel) == 0) {
    const std::string n = name.substr(kFilesAtLevel.size());
    if (n.size() != 1 || n[0] < '0' || n[0] >= '0' + kNumLevels) return false;
    *value = std::to_string(v->NumFiles(n[0] - '0'));
    return true;
  }
  if (name == "bloomkv.levels") {
    *value = LevelsTable();
    return true;
  }
  if (name == "bloomkv.approximate-memory-usage" ||
      name == "bloomkv.resource-usage") {
    uint64_t filter_bytes = 0, index_bytes = 0, dictionary_bytes = 0;
    uint64_t segments = 0;
    uint64_t paged_indexes = 0, paged_filters = 0;
    for (int level = 0; level < kNumLevels; level++) {
      for (const auto& f : v->files(level)) {
        segments++;
        if (f->filter != nullptr) filter_bytes += f->filter->memory();
        if (f->meta != nullptr) {
          index_bytes += f->meta->index_memory();
          dictionary_bytes += f->meta->value_dictionary_memory();
          if (f->meta->index_paged()) paged_indexes++;
          if (f->meta->filter_paged()) paged_filters++;
        }
      }
    }
    const uint64_t cache_bytes =
        block_cache_ != nullptr ? block_cache_->TotalCharge() : 0;
    const uint64_t row_cache_bytes =
        row_cache_ != nullptr ? row_cache_->TotalCharge() : 0;
    const uint64_t answer_cache_bytes =
        answer_cache_ != nullptr ? answer_cache_->memory() : 0;
    const uint64_t total = mem_usage + filter_bytes + index_bytes +
                           dictionary_bytes + cache_bytes + row_cache_bytes +
                           answer_cache_bytes;
    if (name == "bloomkv.approximate-memory-usage") {
      *value = std::to_string(total);
      return true;
    }
    auto add = [value](const char* key, uint64_t n) {
      *value += std::string(key) + ": " + std::to_string(n) + "\n";
    };
    add("memtable_bytes", mem_usage);
    add("filter_bytes", filter_bytes);
    add("index_bytes", index_bytes);
    add("value_dictionary_bytes", dictionary_bytes);
    add("block_cache_bytes", cache_bytes);
    add("row_cache_bytes", row_cache_bytes);
    add("answer_cache_bytes", answer_cache_bytes);
    add("total_bytes", total);
    add("segments", segments);
    add("paged_indexes", paged_indexes);
    add("paged_filters", paged_filters);
    add("filter_and_index_memory_limit",
        options_.filter_and_index_memory_limit);
    add("open_segment_files", table_cache_->open_files());
    if (table_cache_->capacity() == TableCache::kUnlimited) {
      *value += "max_open_segment_files: -1\n";  // every segment kept open
    } else {
      add("max_open_segment_files", table_cache_->capacity());
    }
    return true;
  }
  if (name == "bloomkv.segments") {
    char line[512];
    std::snprintf(line, sizeof(line),
                  "%-5s %-8s %10s %12s %6s %10s %10s %10s %10s %9s %9s\n",
                  "level", "segment", "entries", "bytes", "bits", "lookups",
                  "negatives", "positives", "false_pos", "fp_meas",
                  "fp_theory");
    *value += line;
    for (const SegmentInfo& i : GetSegmentInfo()) {
      std::snprintf(
          line, sizeof(line),
          "L%-4d %08" PRIu64 " %10" PRIu64 " %12" PRIu64 " %6.1f %10" PRIu64
          " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %9.5f %9.5f\n",
          i.level, i.file_number, i.num_entries, i.file_size, i.bits_per_key,
          i.lookups, i.filter_negatives, i.filter_positives, i.false_positives,
          i.MeasuredFpRate(), i.theoretical_fp_rate);
      *value += line;
    }
    return true;
  }
  return false;
}

}  // namespace bloomkv
