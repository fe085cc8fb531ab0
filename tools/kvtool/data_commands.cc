// kvtool get, scan, put, delete and compact: reading and changing data
// through the public DB API. get and scan open the database read-only.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>

#include "bloomkv/db.h"
#include "tools/kvtool/commands.h"
#include "tools/kvtool/db_access.h"
#include "tools/kvtool/exit_codes.h"
#include "tools/kvtool/format.h"

namespace bloomkv::kvtool {

using json = nlohmann::ordered_json;

int RunGet(const Context& ctx, const std::string& path,
           const std::string& key) {
  std::unique_ptr<DB> db;
  int code = OpenDbReadOnly(*ctx.err, path, &db);
  if (code != kExitOk) return code;
  std::string value;
  Status s = db->Get(ReadOptions(), key, &value);
  if (!s.ok() && !s.IsNotFound()) return FailWith(*ctx.err, s);
  if (ctx.json) {
    json j = {{"key", ctx.Bytes(key)}, {"found", s.ok()}};
    if (s.ok()) j["value"] = ctx.Bytes(value);
    *ctx.out << j.dump(2) << "\n";
  } else if (s.ok() && ctx.hex) {
    *ctx.out << Hex(value) << "\n";
  } else if (s.ok()) {
    // The raw bytes, so that `kvtool get` can feed other programs.
    ctx.out->write(value.data(), static_cast<std::streamsize>(value.size()));
    *ctx.out << "\n";
  }
  if (s.IsNotFound()) {
    return Fail(*ctx.err, kExitNotFoundOrDamaged,
                "key not found: " + ctx.Bytes(key));
  }
  return kExitOk;
}

int RunScan(const Context& ctx, const std::string& path,
            const ScanRange& range) {
  std::unique_ptr<DB> db;
  int code = OpenDbReadOnly(*ctx.err, path, &db);
  if (code != kExitOk) return code;
  ReadOptions ro;
  ro.fill_cache = false;  // a scan would only evict what it reads once
  std::unique_ptr<Iterator> it = db->NewIterator(ro);
  if (range.from.has_value()) {
    it->Seek(*range.from);
  } else {
    it->SeekToFirst();
  }
  std::ostream& out = *ctx.out;
  // JSON is streamed entry by entry, so that a scan of a large database
  // needs no more memory than a text scan.
  if (ctx.json) out << "{\n  \"entries\": [";
  uint64_t n = 0;
  for (; it->Valid(); it->Next()) {
    if (range.limit != 0 && n >= range.limit) break;
    if (range.to.has_value() && it->key().compare(*range.to) >= 0) break;
    if (ctx.json) {
      json e = {{"key", ctx.Bytes(it->key())},
                {"value", ctx.Bytes(it->value())}};
      out << (n == 0 ? "\n    " : ",\n    ") << e.dump();
    } else {
      out << ctx.Bytes(it->key()) << "\t" << ctx.Bytes(it->value()) << "\n";
    }
    n++;
  }
  Status s = it->status();
  if (ctx.json) {
    out << (n == 0 ? "]" : "\n  ]") << ",\n  \"count\": " << n
        << ",\n  \"complete\": " << (s.ok() ? "true" : "false") << "\n}\n";
  }
  out.flush();
  // A read that fails mid-scan is damage, whatever its status says; exit
  // code 1 would read as "not found".
  if (s.IsNotFound()) return Fail(*ctx.err, kExitCorruption, s.ToString());
  if (!s.ok()) return FailWith(*ctx.err, s);
  return kExitOk;
}

int RunApproxSize(const Context& ctx, const std::string& path,
                  const std::optional<std::string>& from,
                  const std::optional<std::string>& to) {
  if (from.has_value() && to.has_value() && *from > *to) {
    return Fail(*ctx.err, kExitUsage, "--from is after --to");
  }
  std::unique_ptr<DB> db;
  int code = OpenDbReadOnly(*ctx.err, path, &db);
  if (code != kExitOk) return code;
  // Without --to, the range ends just past the largest key of any segment.
  std::string end;
  if (to.has_value()) {
    end = *to;
  } else {
    for (const SegmentInfo& s : db->GetSegmentInfo()) {
      end = std::max(end, s.largest_key);
    }
    end.push_back('\0');
  }
  const std::string start = from.value_or("");
  uint64_t bytes = 0;
  const Range range(start, end);
  db->GetApproximateSizes(&range, 1, &bytes);
  if (ctx.json) {
    json j = {{"from", from.has_value() ? json(ctx.Bytes(*from)) : json()},
              {"to", to.has_value() ? json(ctx.Bytes(*to)) : json()},
              {"bytes", bytes}};
    *ctx.out << j.dump(2) << "\n";
  } else {
    *ctx.out << HumanBytes(bytes) << " (" << bytes << " bytes) on disk for ["
             << (from.has_value() ? ctx.Bytes(*from) : "first key") << ", "
             << (to.has_value() ? ctx.Bytes(*to) : "last key]")
             << (to.has_value() ? ")" : "") << "; memtables not counted\n";
  }
  return kExitOk;
}

int RunPut(const Context& ctx, const std::string& path, const std::string& key,
           const std::string& value, bool create) {
  std::unique_ptr<DB> db;
  int code = OpenDbForWrite(*ctx.err, path, create, &db);
  if (code != kExitOk) return code;
  WriteOptions wo;
  wo.sync = true;  // the tool exits right after: make the write durable
  Status s = db->Put(wo, key, value);
  if (!s.ok()) return FailWith(*ctx.err, s);
  return kExitOk;
}

int RunDelete(const Context& ctx, const std::string& path,
              const std::string& key) {
  std::unique_ptr<DB> db;
  int code = OpenDbForWrite(*ctx.err, path, /*create=*/false, &db);
  if (code != kExitOk) return code;
  WriteOptions wo;
  wo.sync = true;
  Status s = db->Delete(wo, key);
  if (!s.ok()) return FailWith(*ctx.err, s);
  return kExitOk;
}

int RunDeleteRange(const Context& ctx, const std::string& path,
                   const std::string& begin, const std::string& end) {
  // Checked before the database is opened (and its logs replayed): begin ==
  // end, which DeleteRange accepts as deleting nothing, is a mistake here.
  if (begin >= end) {
    return Fail(*ctx.err, kExitUsage,
                "BEGIN " + ctx.Bytes(begin) + " is not before END " +
                    ctx.Bytes(end));
  }
  std::unique_ptr<DB> db;
  int code = OpenDbForWrite(*ctx.err, path, /*create=*/false, &db);
  if (code != kExitOk) return code;
  WriteOptions wo;
  wo.sync = true;
  Status s = db->DeleteRange(wo, begin, end);
  if (!s.ok()) return FailWith(*ctx.err, s);
  return kExitOk;
}

int RunCompact(const Context& ctx, const std::string& path,
               const std::optional<std::string>& from,
               const std::optional<std::string>& to) {
  if (from && to && *from > *to) {
    return Fail(
        *ctx.err, kExitUsage,
        "--from " + ctx.Bytes(*from) + " is after --to " + ctx.Bytes(*to));
  }
  std::unique_ptr<DB> db;
  int code = OpenDbForWrite(*ctx.err, path, /*create=*/false, &db);
  if (code != kExitOk) return code;
  // Slices of the optionals' own strings (value_or would make temporaries
  // that die at the end of this statement).
  const Slice begin = from ? Slice(*from) : Slice();
  const Slice end = to ? Slice(*to) : Slice();
  Status s = db->CompactRange(from ? &begin : nullptr, to ? &end : nullptr);
  if (!s.ok()) return FailWith(*ctx.err, s);
  std::string files;
  *ctx.out << "compacted " << path << "; segments per level:";
  // Levels past the last one answer false, which ends the loop early.
  for (int level = 0;; level++) {
    if (!db->GetProperty("bloomkv.num-files-at-level" + std::to_string(level),
                         &files)) {
      break;
    }
    if (files != "0") *ctx.out << " L" << level << "=" << files;
  }
  *ctx.out << "\n";
  return kExitOk;
}

}  // namespace bloomkv::kvtool
