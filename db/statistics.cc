// Text forms of the statistics structs; see include/bloomkv/statistics.h.
#include "bloomkv/statistics.h"

#include <cinttypes>
#include <cstdio>

namespace bloomkv {

std::string DbStats::ToString() const {
  std::string r;
  char buf[128];
  auto add = [&](const char* name, uint64_t v) {
    std::snprintf(buf, sizeof(buf), "%s: %" PRIu64 "\n", name, v);
    r += buf;
  };
  add("gets", gets);
  add("memtable_hits", memtable_hits);
  add("segments_consulted", segments_consulted);
  add("skipped_by_range", skipped_by_range);
  add("filter_negatives", filter_negatives);
  add("filter_positives", filter_positives);
  add("filter_false_positives", filter_false_positives);
  add("data_blocks_read", data_blocks_read);
  add("meta_blocks_read", meta_blocks_read);
  add("bytes_read", bytes_read);
  add("block_cache_hits", block_cache_hits);
  add("row_cache_hits", row_cache_hits);
  add("answer_cache_hits", answer_cache_hits);
  add("block_cache_misses", block_cache_misses);
  add("flushes", flushes);
  add("bytes_flushed", bytes_flushed);
  add("user_bytes_written", user_bytes_written);
  add("compactions", compactions);
  add("trivial_moves", trivial_moves);
  add("read_triggered_compactions", read_triggered_compactions);
  add("compaction_bytes_read", compaction_bytes_read);
  add("compaction_bytes_written", compaction_bytes_written);
  add("compaction_filter_drops", compaction_filter_drops);
  add("compaction_range_drops", compaction_range_drops);
  add("stall_micros", stall_micros);
  add("write_delay_micros", write_delay_micros);
  add("write_stop_micros", write_stop_micros);
  std::snprintf(buf, sizeof(buf), "write_amplification: %.2f\n",
                WriteAmplification());
  r += buf;
  return r;
}

const char* SegmentOutcomeName(SegmentOutcome outcome) {
  switch (outcome) {
    case SegmentOutcome::kSkippedByRange:
      return "skipped by key range";
    case SegmentOutcome::kSkippedByFilter:
      return "skipped by filter";
    case SegmentOutcome::kFilterFalsePositive:
      return "filter false positive";
    case SegmentOutcome::kFound:
      return "found";
    case SegmentOutcome::kDeleted:
      return "deleted";
    case SegmentOutcome::kError:
      return "error";
  }
  return "unknown";
}

std::string GetTrace::ToString() const {
  std::string r;
  char buf[256];
  std::snprintf(buf, sizeof(buf), "key hash: %016" PRIx64 "\n", key_hash);
  r += buf;
  r +=
      std::string("memtable: ") + (found_in_memtable ? "found" : "miss") + "\n";
  r += std::string("immutable memtable: ") +
       (found_in_immutable ? "found" : "miss") + "\n";
  if (answer_cache_hit) r += "answer cache: hit\n";
  for (const auto& s : segments) {
    std::snprintf(buf, sizeof(buf),
                  "L%d segment %06" PRIu64 ": %s%s%s (blocks read %" PRIu64
                  ", bytes read %" PRIu64 ", cache hits %" PRIu64 ")\n",
                  s.level, s.file_number, SegmentOutcomeName(s.outcome),
                  s.had_filter ? "" : " [no filter]",
                  s.row_cache_hit ? " [row cache]" : "", s.data_blocks_read,
                  s.bytes_read, s.cache_hits);
    r += buf;
  }
  std::snprintf(buf, sizeof(buf),
                "total: %" PRIu64 " data blocks, %" PRIu64 " bytes read\n",
                data_blocks_read, bytes_read);
  r += buf;
  r += "result: " + result + "\n";
  return r;
}

}  // namespace bloomkv
