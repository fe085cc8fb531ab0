// The kvtool subcommands, one function each, independent of the command-line
// parser (main.cc maps parsed arguments onto these calls).
//
// Every Run* function writes its report to ctx.out (JSON when ctx.json is
// set, aligned text otherwise), writes at most one "kvtool: error: ..." line
// to ctx.err, and returns an exit code from exit_codes.h. Read-only commands
// open the database with DB::OpenForReadOnly or read files directly, so they
// never change a byte on disk.
// Thread-safety: each call is independent; ctx's streams must not be shared
// with concurrent calls.
#ifndef BLOOMKV_TOOLS_KVTOOL_COMMANDS_H_
#define BLOOMKV_TOOLS_KVTOOL_COMMANDS_H_

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "bloomkv/slice.h"
#include "tools/kvtool/format.h"

namespace bloomkv {
class DB;
class Status;
}  // namespace bloomkv

namespace bloomkv::kvtool {

struct Context {
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  bool json = false;  // machine-readable output on *out
  bool hex = false;   // keys and values printed as hex (--hex)

  // Keys and values as this command prints them: Hex() with --hex,
  // Printable() otherwise.
  std::string Bytes(const Slice& bytes) const {
    return hex ? Hex(bytes) : Printable(bytes);
  }
};

// Default number of made-up absent keys probed by info, segments and
// filter-check to measure false-positive rates.
constexpr uint64_t kDefaultSamples = 1000;

// ---- database inspection (inspect_commands.cc) ----------------------------

// Per level: segments, sizes, entries, filter memory, bits per key,
// theoretical and measured false-positive rates. `samples` absent keys from
// inside the segments' key ranges are looked up (read-only) to measure the
// filters on the real read path; 0 skips that.
int RunInfo(const Context& ctx, const std::string& db, uint64_t samples,
            uint64_t seed);

// One row per live segment, with the same measurement as RunInfo.
int RunSegments(const Context& ctx, const std::string& db, uint64_t samples,
                uint64_t seed);

// One lookup of key, traced: memtables, every segment considered and its
// outcome, blocks and bytes read, final answer.
int RunExplain(const Context& ctx, const std::string& db,
               const std::string& key);

// Probes `samples` random keys confirmed absent against every segment's
// filter, and compares measured with theoretical false-positive rates.
int RunFilterCheck(const Context& ctx, const std::string& db, uint64_t samples,
                   uint64_t seed);

// ---- planning (capacity_command.cc) ---------------------------------------

struct CapacityArgs {
  uint64_t entries = 0;
  double key_bytes = 7;
  double value_bytes = 80;
  double bits_per_key = 10;
  double compression_ratio = 0.63;
  // The deep levels' filter: "default" (the library's choice for a bloom
  // filter of bits_per_key), "bloom" (bloom everywhere), "fuse8", "fuse16".
  std::string deep_filter = "default";
};
// The settled shape of a planned store with the default options: levels,
// segments, disk bytes, filter and index memory, block reads per lookup.
int RunCapacity(const Context& ctx, const CapacityArgs& args);

// ---- reads and writes (data_commands.cc) ----------------------------------

// Prints the value (raw bytes, or hex with ctx.hex, followed by a newline;
// or JSON). A missing key is exit code 1 with an error line.
int RunGet(const Context& ctx, const std::string& db, const std::string& key);

struct ScanRange {
  std::optional<std::string> from;  // inclusive
  std::optional<std::string> to;    // exclusive
  uint64_t limit = 0;               // 0: no limit
};
// Key/value pairs in key order, one "key<TAB>value" line each (in
// ctx.Bytes(), which `load` reads back exactly) or a JSON document.
int RunScan(const Context& ctx, const std::string& db, const ScanRange& range);

// create: make the database if it does not exist.
int RunPut(const Context& ctx, const std::string& db, const std::string& key,
           const std::string& value, bool create);
int RunDelete(const Context& ctx, const std::string& db,
              const std::string& key);
// DB::DeleteRange(begin, end), synced: a usage error unless begin < end.
int RunDeleteRange(const Context& ctx, const std::string& db,
                   const std::string& begin, const std::string& end);

// The approximate bytes on disk of the keys in [from, to) (unset: from the
// first, to the last key), through DB::GetApproximateSizes.
int RunApproxSize(const Context& ctx, const std::string& db,
                  const std::optional<std::string>& from,
                  const std::optional<std::string>& to);

// Compacts the keys in [from, to] (unset: from the first, to the last key),
// through DB::CompactRange.
int RunCompact(const Context& ctx, const std::string& db,
               const std::optional<std::string>& from,
               const std::optional<std::string>& to);

// ---- bulk load (load_command.cc) ------------------------------------------

struct LoadOptions {
  bool create = false;  // make the database if it does not exist
  // Show a progress bar on *err. main.cc sets it when stdout is a terminal.
  bool progress = false;
  // Records per WriteBatch.
  uint64_t batch_records = 1000;
  // How each line's key and value are written: escaped as `scan` prints
  // them (the default), hex, or raw bytes.
  ByteEncoding encoding = ByteEncoding::kEscaped;
};
// Loads tab-separated "key<TAB>value" lines from `input` ("-" = stdin).
// Stops at the first malformed line (exit code 2, naming the line number and
// how many records were loaded before it; those stay loaded).
int RunLoad(const Context& ctx, const std::string& db, const std::string& input,
            const LoadOptions& options);

// ---- single segment files (file_commands.cc) ------------------------------

// Properties, block count and sizes, compression ratio, filter parameters
// and key range of one segment file.
int RunSegment(const Context& ctx, const std::string& file);

// Every entry of one segment file: key, sequence, type, value. limit 0 means
// all.
int RunDump(const Context& ctx, const std::string& file, uint64_t limit);

// ---- internal dumps (dump_commands.cc) -------------------------------------

// Every stored version of the keys in the range (puts, deletion markers and
// overwritten values compaction has not dropped yet), user keys in order
// and each key's newest version first; range.to is exclusive.
int RunIdump(const Context& ctx, const std::string& db, const ScanRange& range);

// Every edit of a manifest (the one CURRENT names when `path` is a
// database directory): logs, next file number, last sequence, segments
// added and removed; then what the edits leave. Damaged records are shown
// where met and end the command with exit code 4.
int RunManifest(const Context& ctx, const std::string& path);

// Every write batch of every log of a database (oldest first) or of one
// log file: offset, sequence, operations. Damage as for RunManifest.
int RunWal(const Context& ctx, const std::string& path);

// ---- integrity (verify_command.cc) ----------------------------------------

// Checks every checksum of a database (segments, manifest, logs) or of one
// file. Exit code 0 when clean, 1 with one line per problem otherwise.
int RunVerify(const Context& ctx, const std::string& path);

// ---- recovery and backup (operator_commands.cc) ---------------------------

// Rebuilds the manifest with RepairDB and prints its report. Takes the lock.
int RunRepair(const Context& ctx, const std::string& db);

// Copies the live database into the new directory `dir` (CreateCheckpoint);
// flush first unless told not to.
int RunCheckpoint(const Context& ctx, const std::string& db,
                  const std::string& dir, bool flush);

// ---- standalone filter files (filter_commands.cc) -------------------------
// A filter file holds one serialized BloomFilter, ScalableBloomFilter,
// CuckooFilter or StaticFilter (binary fuse); its magic says which.

// How `filter build` sizes the filter; unset fields take the kind's
// defaults (docs/kvtool.md). Fields that do not apply to the kind are a
// usage error.
struct FilterBuildOptions {
  std::optional<uint64_t> capacity;     // default: the number of keys read
  std::optional<double> fp_rate;        // bloom, scalable, cuckoo
  std::optional<double> bits_per_key;   // bloom, instead of fp_rate
  std::optional<uint32_t> expansion;    // scalable
  bool non_scaling = false;             // scalable
  std::optional<int> bucket_size;       // cuckoo
  std::optional<int> fingerprint_bits;  // cuckoo (4..32), fuse (8 or 16)
  std::optional<int> max_kicks;         // cuckoo
};

// Builds a filter of `kind` ("bloom", "scalable", "cuckoo", "fuse") from the
// keys in key_file ("-" = stdin; one key per line, empty lines rejected) and
// writes it to `out` (replaced atomically). A non-scaling or cuckoo filter
// that cannot hold every key is exit code 7 and writes nothing.
int RunFilterBuild(const Context& ctx, const std::string& kind,
                   const std::string& key_file, const std::string& out,
                   const FilterBuildOptions& options);

// Answers "maybe present" or "absent" for each key (the arguments, then the
// lines of keys_file if given). Exit code 0 if every key may be present, 1
// if some key is definitely absent (the answers are printed either way, no
// error line).
int RunFilterQuery(const Context& ctx, const std::string& filter,
                   const std::vector<std::string>& keys,
                   const std::optional<std::string>& keys_file);

// Kind, capacity, size, bits per key, items and estimated distinct items,
// target and estimated false-positive rates, and the kind's own geometry.
int RunFilterInfo(const Context& ctx, const std::string& filter);

// Writes the union of two bloom filters of the same shape to `out`
// (BloomFilter::Merge). Other kinds and other shapes are usage errors.
int RunFilterMerge(const Context& ctx, const std::string& a,
                   const std::string& b, const std::string& out);

}  // namespace bloomkv::kvtool

#endif  // BLOOMKV_TOOLS_KVTOOL_COMMANDS_H_
