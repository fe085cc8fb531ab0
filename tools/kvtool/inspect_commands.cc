// kvtool info, segments, explain and filter-check: what the database looks
// like and what its filters do. All of them open the database read-only.
#include <cinttypes>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "bloomkv/db.h"
#include "bloomkv/statistics.h"
#include "tools/kvtool/commands.h"
#include "tools/kvtool/db_access.h"
#include "tools/kvtool/exit_codes.h"
#include "tools/kvtool/format.h"
#include "tools/kvtool/sampling.h"
#include "util/hash.h"

namespace bloomkv::kvtool {
namespace {

using json = nlohmann::ordered_json;

constexpr size_t kKeyColumnChars = 24;

// A measured rate is only a number when something was measured.
json RateOrNull(uint64_t hits, uint64_t trials) {
  if (trials == 0) return nullptr;
  return static_cast<double>(hits) / static_cast<double>(trials);
}
std::string RateText(uint64_t hits, uint64_t trials) {
  if (trials == 0) return "-";
  return Percent(static_cast<double>(hits) / static_cast<double>(trials));
}

// The filter kinds of a set of segments: their policies' names, sorted,
// joined by '+'; "-" for none.
std::string KindText(const std::set<std::string>& kinds) {
  std::string text;
  for (const std::string& k : kinds) text += (text.empty() ? "" : "+") + k;
  return text.empty() ? "-" : text;
}

// Bits of filter memory per entry; 0 without entries.
double BitsPerEntry(uint64_t filter_bytes, uint64_t entries) {
  return entries == 0 ? 0.0 : 8.0 * filter_bytes / entries;
}

// Sums over the segments of one level (or of all of them).
struct Aggregate {
  uint64_t segments = 0;
  uint64_t file_bytes = 0;
  uint64_t entries = 0;
  uint64_t filter_bytes = 0;
  uint64_t filtered_entries = 0;  // entries of segments that have a filter
  double theoretical_sum = 0;     // over all segments (1.0 without filter)
  uint64_t probes = 0;            // lookups of absent keys that met a filter
  uint64_t false_positives = 0;
  uint64_t unreadable = 0;
  std::set<std::string> kinds;  // filter policy names

  void Add(const SegmentInfo& s) {
    segments++;
    file_bytes += s.file_size;
    entries += s.num_entries;
    if (s.has_filter) {
      filter_bytes += s.filter_bytes;
      filtered_entries += s.num_entries;
      kinds.insert(s.filter_policy);
    }
    theoretical_sum += s.has_filter ? s.theoretical_fp_rate : 1.0;
    probes += s.filter_negatives + s.false_positives;
    false_positives += s.false_positives;
    if (!s.readable) unreadable++;
  }
  double Theoretical() const {
    return segments == 0 ? 0.0 : theoretical_sum / segments;
  }
  json ToJson() const {
    return {{"segments", segments},
            {"file_bytes", file_bytes},
            {"entries", entries},
            {"filter_bytes", filter_bytes},
            {"filter_policies", kinds},
            {"bits_per_key", BitsPerEntry(filter_bytes, filtered_entries)},
            {"theoretical_fp_rate", Theoretical()},
            {"measured_fp_rate", RateOrNull(false_positives, probes)},
            {"filter_probes", probes},
            {"false_positives", false_positives}};
  }
  std::vector<std::string> Row(const std::string& name) const {
    return {name,
            std::to_string(segments),
            HumanBytes(file_bytes),
            std::to_string(entries),
            HumanBytes(filter_bytes),
            Fixed(BitsPerEntry(filter_bytes, filtered_entries), 1),
            Percent(Theoretical()),
            RateText(false_positives, probes),
            std::to_string(probes),
            KindText(kinds)};
  }
};

// Reports unreadable segments after the main output: one error line, exit 4.
int ReportUnreadable(const Context& ctx,
                     const std::vector<SegmentInfo>& segments) {
  for (const SegmentInfo& s : segments) {
    if (!s.readable) {
      return Fail(*ctx.err, kExitCorruption,
                  "segment " + s.file_name + " is unreadable: " + s.error);
    }
  }
  return kExitOk;
}

// Opens db read-only, probes `samples` absent keys and returns the segments
// with their counters.
int LoadSegments(const Context& ctx, const std::string& path, uint64_t samples,
                 uint64_t seed, std::unique_ptr<DB>* db,
                 std::vector<SegmentInfo>* segments) {
  int code = OpenDbReadOnly(*ctx.err, path, db);
  if (code != kExitOk) return code;
  ProbeAbsentKeysThroughDb(db->get(), (*db)->GetSegmentInfo(), samples, seed);
  *segments = (*db)->GetSegmentInfo();
  return kExitOk;
}

json SegmentJson(const Context& ctx, const SegmentInfo& s) {
  json j = {
      {"level", s.level},
      {"file_number", s.file_number},
      {"file", s.file_name},
      {"file_bytes", s.file_size},
      {"entries", s.num_entries},
      {"smallest_key", ctx.Bytes(s.smallest_key)},
      {"largest_key", ctx.Bytes(s.largest_key)},
      {"has_filter", s.has_filter},
      {"filter_policy", s.filter_policy},
      {"bits_per_key", s.bits_per_key},
      {"filter_bytes", s.filter_bytes},
      {"theoretical_fp_rate", s.theoretical_fp_rate},
      {"lookups", s.lookups},
      {"filter_negatives", s.filter_negatives},
      {"filter_positives", s.filter_positives},
      {"false_positives", s.false_positives},
      {"measured_fp_rate",
       RateOrNull(s.false_positives, s.filter_negatives + s.false_positives)},
      {"readable", s.readable}};
  if (!s.readable) j["error"] = s.error;
  return j;
}

}  // namespace

int RunInfo(const Context& ctx, const std::string& path, uint64_t samples,
            uint64_t seed) {
  std::unique_ptr<DB> db;
  std::vector<SegmentInfo> segments;
  int code = LoadSegments(ctx, path, samples, seed, &db, &segments);
  if (code != kExitOk) return code;

  std::map<int, Aggregate> levels;
  Aggregate total;
  for (const SegmentInfo& s : segments) {
    levels[s.level].Add(s);
    total.Add(s);
  }
  std::string mem;
  uint64_t memory_bytes = 0;
  if (db->GetProperty("bloomkv.approximate-memory-usage", &mem)) {
    memory_bytes = std::strtoull(mem.c_str(), nullptr, 10);
  }

  std::ostream& out = *ctx.out;
  if (ctx.json) {
    json j = {{"path", path},
              {"samples", samples},
              {"seed", seed},
              {"approximate_memory_bytes", memory_bytes},
              {"levels", json::array()},
              {"total", total.ToJson()}};
    for (const auto& [level, agg] : levels) {
      json l = agg.ToJson();
      l["level"] = level;
      j["levels"].push_back(l);
    }
    out << j.dump(2) << "\n";
  } else {
    out << "database:  " << path << "\n"
        << "segments:  " << total.segments << " in " << levels.size()
        << (levels.size() == 1 ? " level" : " levels") << ", "
        << HumanBytes(total.file_bytes) << ", " << total.entries << " entries\n"
        << "filters:   " << HumanBytes(total.filter_bytes) << " in memory\n"
        << "memory:    " << HumanBytes(memory_bytes)
        << " (memtable of replayed log records, block cache, filters)\n";
    if (samples > 0) {
      out << "measured:  " << samples
          << " lookups of made-up keys inside the key ranges (seed " << seed
          << ")\n";
    }
    out << "\n";
    Table t({"level", "segments", "size", "entries", "filter", "bits/key",
             "theoretical FP", "measured FP", "probes", "kind"},
            {false, true, true, true, true, true, true, true, true, false});
    for (const auto& [level, agg] : levels) t.AddRow(agg.Row(LevelName(level)));
    if (levels.size() > 1) t.AddRow(total.Row("total"));
    t.Print(out);
  }
  return ReportUnreadable(ctx, segments);
}

int RunSegments(const Context& ctx, const std::string& path, uint64_t samples,
                uint64_t seed) {
  std::unique_ptr<DB> db;
  std::vector<SegmentInfo> segments;
  int code = LoadSegments(ctx, path, samples, seed, &db, &segments);
  if (code != kExitOk) return code;

  std::ostream& out = *ctx.out;
  if (ctx.json) {
    json j = {{"path", path},
              {"samples", samples},
              {"seed", seed},
              {"segments", json::array()}};
    for (const SegmentInfo& s : segments)
      j["segments"].push_back(SegmentJson(ctx, s));
    out << j.dump(2) << "\n";
  } else {
    Table t({"level", "file", "size", "entries", "smallest key", "largest key",
             "filter", "bits/key", "theoretical FP", "measured FP", "probes",
             "kind"},
            {false, false, true, true, false, false, true, true, true, true,
             true, false});
    for (const SegmentInfo& s : segments) {
      const uint64_t probes = s.filter_negatives + s.false_positives;
      std::vector<std::string> row = {
          LevelName(s.level),
          FileNumber(s.file_number),
          HumanBytes(s.file_size),
          std::to_string(s.num_entries),
          Truncated(ctx.Bytes(s.smallest_key), kKeyColumnChars),
          Truncated(ctx.Bytes(s.largest_key), kKeyColumnChars),
          s.has_filter ? HumanBytes(s.filter_bytes) : "none",
          s.has_filter ? Fixed(s.bits_per_key, 1) : "-",
          Percent(s.theoretical_fp_rate),
          RateText(s.false_positives, probes),
          std::to_string(probes),
          s.has_filter ? s.filter_policy : "-"};
      if (!s.readable) row[6] = "UNREADABLE";
      t.AddRow(std::move(row));
    }
    t.Print(out);
    if (segments.empty()) out << "(no segments)\n";
  }
  return ReportUnreadable(ctx, segments);
}

int RunExplain(const Context& ctx, const std::string& path,
               const std::string& key) {
  std::unique_ptr<DB> db;
  int code = OpenDbReadOnly(*ctx.err, path, &db);
  if (code != kExitOk) return code;
  GetTrace trace;
  ReadOptions ro;
  ro.trace = &trace;
  std::string value;
  Status s = db->Get(ro, key, &value);
  if (!s.ok() && !s.IsNotFound()) {
    if (s.IsInvalidArgument()) return FailWith(*ctx.err, s);
    // A lookup that failed midway is still worth explaining: print the
    // trace, then the error.
  }
  std::map<uint64_t, std::string> file_names;
  for (const SegmentInfo& i : db->GetSegmentInfo()) {
    file_names[i.file_number] = i.file_name;
  }

  char hash[32];
  std::snprintf(hash, sizeof(hash), "%016" PRIx64, trace.key_hash);
  std::ostream& out = *ctx.out;
  if (ctx.json) {
    json j = {
        {"key", ctx.Bytes(key)},
        {"key_hash", hash},
        {"memtable", trace.found_in_memtable ? "found" : "miss"},
        {"immutable_memtable", trace.found_in_immutable ? "found" : "miss"},
        {"segments", json::array()},
        {"data_blocks_read", trace.data_blocks_read},
        {"bytes_read", trace.bytes_read},
        {"result", trace.result}};
    for (const SegmentTrace& t : trace.segments) {
      j["segments"].push_back({{"level", t.level},
                               {"file_number", t.file_number},
                               {"file", file_names[t.file_number]},
                               {"outcome", SegmentOutcomeName(t.outcome)},
                               {"had_filter", t.had_filter},
                               {"data_blocks_read", t.data_blocks_read},
                               {"bytes_read", t.bytes_read},
                               {"cache_hits", t.cache_hits}});
    }
    if (s.ok()) j["value"] = ctx.Bytes(value);
    out << j.dump(2) << "\n";
  } else {
    out << "key:                 " << ctx.Bytes(key) << " (hash " << hash
        << ")\n"
        << "memtable:            "
        << (trace.found_in_memtable ? "found" : "miss") << "\n"
        << "immutable memtable:  "
        << (trace.found_in_immutable ? "found" : "miss") << "\n";
    if (trace.segments.empty()) {
      out << "segments:            none consulted\n";
    } else {
      out << "segments, in the order considered:\n";
      Table t({"level", "file", "outcome", "filter", "blocks read",
               "bytes read", "cache hits"},
              {false, false, false, false, true, true, true});
      for (const SegmentTrace& st : trace.segments) {
        t.AddRow({LevelName(st.level), FileNumber(st.file_number),
                  SegmentOutcomeName(st.outcome),
                  st.outcome == SegmentOutcome::kSkippedByRange
                      ? "-"
                      : (st.had_filter ? "yes" : "none"),
                  std::to_string(st.data_blocks_read),
                  std::to_string(st.bytes_read),
                  std::to_string(st.cache_hits)});
      }
      t.Print(out);
    }
    out << "read:                " << trace.data_blocks_read
        << (trace.data_blocks_read == 1 ? " data block, " : " data blocks, ")
        << HumanBytes(trace.bytes_read) << "\n"
        << "result:              " << trace.result << "\n";
    if (s.ok()) out << "value:               " << ctx.Bytes(value) << "\n";
  }
  if (!s.ok() && !s.IsNotFound()) return FailWith(*ctx.err, s);
  return kExitOk;
}

int RunFilterCheck(const Context& ctx, const std::string& path,
                   uint64_t samples, uint64_t seed) {
  std::unique_ptr<DB> db;
  int code = OpenDbReadOnly(*ctx.err, path, &db);
  if (code != kExitOk) return code;
  const std::vector<SegmentInfo> infos = db->GetSegmentInfo();
  std::vector<std::unique_ptr<SegmentReader>> readers(infos.size());
  for (size_t i = 0; i < infos.size(); i++) {
    Status s = OpenSegment(infos[i].file_name, &readers[i]);
    if (!s.ok()) return FailWith(*ctx.err, s);
  }

  // Keys are drawn at random and kept only if the database confirms they
  // are absent, so every filter positive below is a false positive.
  Random rnd(seed);
  std::vector<uint64_t> hashes;
  hashes.reserve(samples);
  uint64_t present = 0;
  std::string value;
  while (hashes.size() < samples) {
    const std::string key = RandomKey(&rnd);
    Status s = db->Get(ReadOptions(), key, &value);
    if (s.ok()) {
      if (++present > samples) {
        return Fail(*ctx.err, kExitIOError,
                    "could not find enough absent keys to probe");
      }
      continue;
    }
    if (!s.IsNotFound()) return FailWith(*ctx.err, s);
    hashes.push_back(KeyHash(key));
  }

  struct Row {
    uint64_t false_positives = 0;
  };
  std::vector<Row> rows(readers.size());
  uint64_t total_fp = 0, total_probes = 0;
  double theoretical_sum = 0;
  uint64_t filtered = 0;
  for (size_t i = 0; i < readers.size(); i++) {
    if (!readers[i]->has_filter()) continue;
    for (uint64_t h : hashes) {
      if (readers[i]->KeyMayMatch(h)) rows[i].false_positives++;
    }
    total_fp += rows[i].false_positives;
    total_probes += hashes.size();
    theoretical_sum += readers[i]->TheoreticalFpRate();
    filtered++;
  }
  const double theoretical_mean =
      filtered == 0 ? 0 : theoretical_sum / filtered;

  std::ostream& out = *ctx.out;
  if (ctx.json) {
    json j = {{"path", path},
              {"samples", samples},
              {"seed", seed},
              {"segments", json::array()},
              {"total",
               {{"segments_with_filter", filtered},
                {"probes", total_probes},
                {"false_positives", total_fp},
                {"measured_fp_rate", RateOrNull(total_fp, total_probes)},
                {"theoretical_fp_rate", theoretical_mean}}}};
    for (size_t i = 0; i < readers.size(); i++) {
      const SegmentReader& r = *readers[i];
      const uint64_t keys = r.properties().num_filter_keys;
      j["segments"].push_back(
          {{"level", infos[i].level},
           {"file_number", infos[i].file_number},
           {"file", infos[i].file_name},
           {"has_filter", r.has_filter()},
           {"filter_keys", keys},
           {"filter_bytes", r.filter_memory()},
           {"bits_per_key", BitsPerEntry(r.filter_memory(), keys)},
           {"theoretical_fp_rate", r.TheoreticalFpRate()},
           {"probes", r.has_filter() ? samples : 0},
           {"false_positives", rows[i].false_positives},
           {"measured_fp_rate",
            r.has_filter() ? RateOrNull(rows[i].false_positives, samples)
                           : json(nullptr)}});
    }
    out << j.dump(2) << "\n";
  } else {
    out << "probed " << samples
        << " random keys confirmed absent against every filter (seed " << seed
        << ")\n\n";
    Table t({"level", "file", "filter keys", "filter", "bits/key",
             "theoretical FP", "measured FP", "false positives"},
            {false, false, true, true, true, true, true, true});
    for (size_t i = 0; i < readers.size(); i++) {
      const SegmentReader& r = *readers[i];
      const uint64_t keys = r.properties().num_filter_keys;
      if (!r.has_filter()) {
        t.AddRow({LevelName(infos[i].level), FileNumber(infos[i].file_number),
                  std::to_string(keys), "none", "-", "100%", "-", "-"});
        continue;
      }
      t.AddRow({LevelName(infos[i].level), FileNumber(infos[i].file_number),
                std::to_string(keys), HumanBytes(r.filter_memory()),
                Fixed(BitsPerEntry(r.filter_memory(), keys), 1),
                Percent(r.TheoreticalFpRate()),
                RateText(rows[i].false_positives, samples),
                std::to_string(rows[i].false_positives)});
    }
    if (readers.size() > 1) {
      t.AddRow({"total", "", "", "", "", Percent(theoretical_mean),
                RateText(total_fp, total_probes), std::to_string(total_fp)});
    }
    t.Print(out);
    if (readers.empty()) out << "(no segments)\n";
  }
  return kExitOk;
}

}  // namespace bloomkv::kvtool
