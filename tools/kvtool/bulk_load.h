// kvtool load --bulk: loading a tab-separated file without the write path,
// through SegmentWriter and DB::IngestSegments (implemented in
// load_command.cc, beside the batched load it shares its input format
// with).
// Thread-safety: each call is independent; ctx's streams must not be shared
// with concurrent calls.
#ifndef BLOOMKV_TOOLS_KVTOOL_BULK_LOAD_H_
#define BLOOMKV_TOOLS_KVTOOL_BULK_LOAD_H_

#include <cstdint>
#include <string>

#include "tools/kvtool/commands.h"

namespace bloomkv::kvtool {

struct BulkLoadOptions {
  bool create = false;    // make the database if it does not exist
  bool progress = false;  // progress bar on *err while reading
  // Memory for sorting, in MiB: input beyond it is sorted in runs spilled
  // to a temporary directory beside the database, then merged.
  uint64_t memory_mb = 256;
  ByteEncoding encoding = ByteEncoding::kEscaped;  // as LoadOptions
};

// Reads "key<TAB>value" lines from `input` ("-" = stdin) as RunLoad does,
// sorts them by key (the last line of a key wins, as with RunLoad), writes
// segments of about Options::target_file_size and adds them to the
// database in one IngestSegments call. All or nothing: a malformed line
// (exit code 2) or any failure loads no record. The keys' range must hold
// nothing in the database yet (IngestSegments; exit code 2 otherwise).
int RunBulkLoad(const Context& ctx, const std::string& db,
                const std::string& input, const BulkLoadOptions& options);

}  // namespace bloomkv::kvtool

#endif  // BLOOMKV_TOOLS_KVTOOL_BULK_LOAD_H_
