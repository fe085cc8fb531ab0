// kvtool repair and kvtool checkpoint: the operator's recovery and backup
// commands. Both change the disk: repair takes the database lock and
// rewrites the manifest; checkpoint opens the database for writing (it
// flushes first) and fills a new directory.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "bloomkv/checkpoint.h"
#include "bloomkv/env.h"
#include "bloomkv/repair.h"
#include "tools/kvtool/commands.h"
#include "tools/kvtool/db_access.h"
#include "tools/kvtool/exit_codes.h"

namespace bloomkv::kvtool {

int RunRepair(const Context& ctx, const std::string& path) {
  Env* env = Env::Default();
  if (!env->FileExists(path)) {
    return Fail(*ctx.err, kExitNotADatabase,
                path + ": no such database (no such file or directory)");
  }
  if (!env->IsDirectory(path)) {
    return Fail(*ctx.err, kExitNotADatabase,
                path + ": not a bloomkv database (not a directory)");
  }
  Options options;
  options.filter_policy = ReaderFilterPolicy();
  RepairReport r;
  Status s = RepairDB(options, path, &r);
  if (!s.ok()) {
    const int code = ExitCodeForOpen(s);
    if (code == kExitLocked) {
      return Fail(*ctx.err, code,
                  path +
                      ": database is locked by another process (its LOCK "
                      "file is held); close it before repairing");
    }
    return Fail(*ctx.err, code, s.ToString());
  }
  std::ostream& out = *ctx.out;
  if (ctx.json) {
    nlohmann::ordered_json j = {
        {"path", path},
        {"segments_kept", r.segments_kept},
        {"segments_salvaged", r.segments_salvaged},
        {"segments_lost", r.segments_lost},
        {"logs_replayed", r.logs_replayed},
        {"log_records_replayed", r.log_records_replayed},
        {"log_regions_dropped", r.log_regions_dropped},
        {"log_bytes_dropped", r.log_bytes_dropped},
        {"entries_dropped", r.entries_dropped},
        {"segments_with_unknown_loss", r.segments_with_unknown_loss},
        {"segments_removed_by_manifest", r.segments_removed_by_manifest},
        {"segments_written", r.segments_written},
        {"files_moved_to_lost", r.files_moved_to_lost},
        {"last_sequence", r.last_sequence},
    };
    out << j.dump(2) << "\n";
  } else {
    out << "repaired " << path << "\n"
        << "  segments kept intact      " << r.segments_kept << "\n"
        << "  segments salvaged         " << r.segments_salvaged
        << " (readable blocks rewritten, " << r.entries_dropped
        << " entries unreadable"
        << (r.segments_with_unknown_loss > 0
                ? ", plus the unknown loss of " +
                      std::to_string(r.segments_with_unknown_loss) +
                      " segment(s) whose entry count is recorded nowhere"
                : std::string())
        << ")\n"
        << "  segments moved to lost/   " << r.segments_lost
        << " (no readable block)\n"
        << "  leftovers moved to lost/  " << r.segments_removed_by_manifest
        << " (segments a manifest records as removed)\n"
        << "  logs replayed             " << r.logs_replayed << " ("
        << r.log_records_replayed << " records; " << r.log_regions_dropped
        << " damaged regions, " << r.log_bytes_dropped << " bytes, skipped)\n"
        << "  new segments written      " << r.segments_written << "\n"
        << "  files moved to lost/      " << r.files_moved_to_lost << "\n"
        << "  last sequence             " << r.last_sequence << "\n";
  }
  out.flush();
  return kExitOk;
}

int RunCheckpoint(const Context& ctx, const std::string& path,
                  const std::string& dir, bool flush) {
  std::unique_ptr<DB> db;
  int code = OpenDbForWrite(*ctx.err, path, /*create=*/false, &db);
  if (code != kExitOk) return code;
  CheckpointOptions options;
  options.flush = flush;
  Status s = CreateCheckpoint(db.get(), dir, options);
  if (!s.ok()) return FailWith(*ctx.err, s);
  *ctx.out << "checkpoint of " << path << " created in " << dir << "\n";
  return kExitOk;
}

}  // namespace bloomkv::kvtool
