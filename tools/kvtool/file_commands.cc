// kvtool segment and dump: one segment file opened directly with
// SegmentReader, no database needed (so they also work on a file copied out
// of a database, or one a database no longer lists).
#include <nlohmann/json.hpp>
#include <ostream>

#include "table/internal_key.h"
#include "table/segment_reader.h"
#include "tools/kvtool/commands.h"
#include "tools/kvtool/db_access.h"
#include "tools/kvtool/exit_codes.h"
#include "tools/kvtool/format.h"

namespace bloomkv::kvtool {
namespace {

using json = nlohmann::ordered_json;

const char* TypeName(ValueType type) {
  return type == ValueType::kDeletion ? "delete" : "put";
}

// An internal key as "key @ seq N".
std::string DescribeInternalKey(const Context& ctx, const std::string& ikey) {
  ParsedInternalKey parsed;
  if (ikey.empty()) return "-";
  if (!ParseInternalKey(ikey, &parsed)) return "(malformed) " + ctx.Bytes(ikey);
  return ctx.Bytes(parsed.user_key) + " @ seq " +
         std::to_string(parsed.sequence);
}

json InternalKeyJson(const Context& ctx, const std::string& ikey) {
  ParsedInternalKey parsed;
  if (!ParseInternalKey(ikey, &parsed)) return nullptr;
  return {{"key", ctx.Bytes(parsed.user_key)},
          {"sequence", parsed.sequence},
          {"type", TypeName(parsed.type)}};
}

}  // namespace

int RunSegment(const Context& ctx, const std::string& path) {
  std::unique_ptr<SegmentReader> reader;
  int code = OpenSegmentFile(*ctx.err, path, &reader);
  if (code != kExitOk) return code;
  const SegmentProperties& p = reader->properties();
  const uint64_t raw = p.raw_key_bytes + p.raw_value_bytes;
  const double ratio =
      p.data_size == 0 ? 0.0 : static_cast<double>(raw) / p.data_size;
  const double avg_block =
      p.num_data_blocks == 0
          ? 0.0
          : static_cast<double>(p.data_size) / p.num_data_blocks;
  const double actual_bits =
      p.num_filter_keys == 0 ? 0.0 : 8.0 * p.filter_size / p.num_filter_keys;

  std::ostream& out = *ctx.out;
  if (ctx.json) {
    json j = {{"file", path},
              {"file_bytes", reader->file_size()},
              {"format_version", p.format_version},
              {"entries", p.num_entries},
              {"deletions", p.num_deletions},
              {"data_blocks", p.num_data_blocks},
              {"data_bytes", p.data_size},
              {"average_block_bytes", avg_block},
              {"index_bytes", p.index_size},
              {"raw_key_bytes", p.raw_key_bytes},
              {"raw_value_bytes", p.raw_value_bytes},
              {"compression_ratio", ratio},
              {"filter",
               {{"policy", p.filter_policy},
                {"usable", reader->has_filter()},
                {"keys", p.num_filter_keys},
                {"bytes", p.filter_size},
                {"configured_bits_per_key", p.bits_per_key},
                {"bits_per_key", actual_bits},
                {"theoretical_fp_rate", reader->TheoreticalFpRate()}}},
              {"smallest", InternalKeyJson(ctx, p.smallest_key)},
              {"largest", InternalKeyJson(ctx, p.largest_key)}};
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  out << "file:               " << path << " ("
      << HumanBytes(reader->file_size()) << ")\n"
      << "format version:     " << p.format_version << "\n"
      << "entries:            " << p.num_entries << " (" << p.num_deletions
      << " tombstones)\n"
      << "data blocks:        " << p.num_data_blocks << ", "
      << HumanBytes(p.data_size) << " on disk, average "
      << HumanBytes(static_cast<uint64_t>(avg_block)) << "\n"
      << "index block:        " << HumanBytes(p.index_size) << "\n"
      << "raw keys + values:  " << HumanBytes(raw) << " (keys "
      << HumanBytes(p.raw_key_bytes) << ", values "
      << HumanBytes(p.raw_value_bytes) << ")\n"
      << "compression ratio:  " << Ratio(ratio)
      << " (raw key+value bytes / data size)\n";
  if (p.filter_policy.empty()) {
    out << "filter:             none\n";
  } else {
    out << "filter policy:      " << p.filter_policy
        << (reader->has_filter() ? "" : " (not interpreted by this kvtool)")
        << "\n"
        << "filter keys:        " << p.num_filter_keys << "\n"
        << "filter size:        " << HumanBytes(p.filter_size) << "\n"
        << "bits per key:       " << Fixed(actual_bits, 2) << " ("
        << Fixed(p.bits_per_key, 1) << " configured)\n"
        << "theoretical FP:     " << Percent(reader->TheoreticalFpRate())
        << "\n";
  }
  out << "smallest key:       " << DescribeInternalKey(ctx, p.smallest_key)
      << "\n"
      << "largest key:        " << DescribeInternalKey(ctx, p.largest_key)
      << "\n";
  return kExitOk;
}

int RunDump(const Context& ctx, const std::string& path, uint64_t limit) {
  std::unique_ptr<SegmentReader> reader;
  int code = OpenSegmentFile(*ctx.err, path, &reader);
  if (code != kExitOk) return code;
  SegmentReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<Iterator> it = reader->NewIterator(ro, nullptr);
  std::ostream& out = *ctx.out;
  if (ctx.json) {
    out << "{\n  \"file\": " << json(path).dump() << ",\n  \"entries\": [";
  }
  uint64_t n = 0, tombstones = 0;
  Status s;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (limit != 0 && n >= limit) break;
    ParsedInternalKey k;
    if (!ParseInternalKey(it->key(), &k)) {
      s = Status::Corruption(
          path, "malformed internal key in entry " + std::to_string(n));
      break;
    }
    const bool del = k.type == ValueType::kDeletion;
    if (del) tombstones++;
    if (ctx.json) {
      json e = {{"key", ctx.Bytes(k.user_key)},
                {"sequence", k.sequence},
                {"type", TypeName(k.type)}};
      if (!del) e["value"] = ctx.Bytes(it->value());
      out << (n == 0 ? "\n    " : ",\n    ") << e.dump();
    } else {
      out << ctx.Bytes(k.user_key) << "\t@" << k.sequence << "\t"
          << (del ? "DEL" : "PUT") << "\t"
          << (del ? "(tombstone)" : ctx.Bytes(it->value())) << "\n";
    }
    n++;
  }
  if (s.ok()) s = it->status();
  if (ctx.json) {
    out << (n == 0 ? "]" : "\n  ]") << ",\n  \"count\": " << n
        << ",\n  \"tombstones\": " << tombstones
        << ",\n  \"complete\": " << (s.ok() ? "true" : "false") << "\n}\n";
  } else {
    out << "# " << n << " entries (" << tombstones << " tombstones)\n";
  }
  out.flush();
  if (!s.ok()) return FailWith(*ctx.err, s);
  return kExitOk;
}

}  // namespace bloomkv::kvtool
