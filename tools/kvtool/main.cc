// kvtool: the operator's command line for bloomkv databases. This file only
// maps the command line onto the functions in commands.h; every parse error
// and every exception ends as one "kvtool: error: ..." line and a documented
// exit code, never a crash.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "bloomkv/version.h"
#include "tools/kvtool/bulk_load.h"
#include "tools/kvtool/commands.h"
#include "tools/kvtool/exit_codes.h"
#include "tools/kvtool/sampling.h"

namespace bloomkv::kvtool {
namespace {

// Caps on user-supplied counts that size in-memory work.
constexpr uint64_t kMaxSamples = 10'000'000;
constexpr uint64_t kMaxBatchRecords = 1'000'000;
constexpr uint64_t kMaxMemoryMb = uint64_t{1} << 20;  // 1 TiB

constexpr char kDescription[] =
    "kvtool: inspect, verify, explain and edit bloomkv databases.\n"
    "DB is a database directory, FILE a single segment (.seg) file.\n"
    "Read-only subcommands (info, segments, segment, get, scan, dump, "
    "idump, manifest, wal, approxsize, explain, verify, filter-check) never "
    "change a byte on disk.\n"
    "'filter' works on standalone filter files (bloom, scalable, cuckoo, "
    "fuse) without a database.";

struct Args {
  std::string db;
  std::string file;
  std::string key;
  std::string value;
  std::string input;
  bool json = false;
  bool hex = false;
  bool raw = false;
  bool create = false;
  bool no_flush = false;
  std::string dir;
  uint64_t samples = kDefaultSamples;
  std::optional<uint64_t> seed;
  uint64_t limit = 0;
  uint64_t batch = 1000;
  bool bulk = false;
  uint64_t memory_mb = 256;
  std::optional<std::string> from;
  std::optional<std::string> to;
  CapacityArgs capacity;
  // filter subcommands
  std::string kind;
  std::string filter;
  std::string other_filter;
  std::string out;
  std::vector<std::string> keys;
  std::optional<std::string> keys_file;
  FilterBuildOptions filter_build;
};

void AddJson(CLI::App* sub, Args* a) {
  sub->add_flag("--json", a->json,
                "Print one JSON document instead of text (user bytes are "
                "escaped as in text output)");
}
void AddHex(CLI::App* sub, Args* a) {
  sub->add_flag("--hex", a->hex,
                "Keys and values as hex digits, in the arguments and the "
                "output");
}
// --from (inclusive) and --to (exclusive unless to_help says otherwise),
// and --limit when limit_what names what it counts.
void AddRange(CLI::App* sub, Args* a, const char* limit_what,
              const char* to_help = "End key (exclusive)") {
  sub->add_option("--from", a->from, "First key (inclusive)");
  sub->add_option("--to", a->to, to_help);
  if (limit_what != nullptr) {
    sub->add_option("--limit", a->limit,
                    std::string("At most N ") + limit_what + " (0: all)")
        ->check(CLI::NonNegativeNumber);
  }
}
void AddDb(CLI::App* sub, Args* a) {
  sub->add_option("DB", a->db, "Database directory")->required();
}
void AddSamples(CLI::App* sub, Args* a, const char* what) {
  sub->add_option("--samples", a->samples, what)
      ->check(CLI::Range(uint64_t{0}, kMaxSamples));
  sub->add_option("--seed", a->seed,
                  "Seed for the made-up keys (default: from the clock; the "
                  "seed used is printed)");
}

int Run(int argc, char** argv) {
  Args a;
  CLI::App app(kDescription, "kvtool");
  app.require_subcommand(1);
  app.footer(std::string("\n") + ExitCodeTable() +
             "\nSee docs/kvtool.md for examples of every subcommand.");
  app.get_formatter()->column_width(34);
  app.set_version_flag("--version",
                       std::string("kvtool ") + bloomkv::VersionString(),
                       "Print the bloomkv version and exit");

  CLI::App* info = app.add_subcommand(
      "info",
      "Levels: segments, sizes, entries, filter memory, bits per "
      "key, theoretical and measured false-positive rates");
  AddDb(info, &a);
  AddJson(info, &a);
  AddSamples(info, &a,
             "Absent-key lookups (inside the key ranges) run through the "
             "read path to measure false-positive rates; 0 skips (default "
             "1000)");

  CLI::App* segments =
      app.add_subcommand("segments",
                         "One row per live segment: level, size, entries, key "
                         "range, filter and its false-positive rates");
  AddDb(segments, &a);
  AddJson(segments, &a);
  AddHex(segments, &a);
  AddSamples(segments, &a,
             "Absent-key lookups used to measure false-positive rates; 0 "
             "skips (default 1000)");

  CLI::App* segment = app.add_subcommand(
      "segment",
      "One segment file opened directly: properties, blocks, "
      "compression ratio, filter parameters, key range");
  segment->add_option("FILE", a.file, "Segment file (.seg)")->required();
  AddJson(segment, &a);
  AddHex(segment, &a);

  CLI::App* get = app.add_subcommand(
      "get", "Print the value of KEY (exit code 1 if absent)");
  AddDb(get, &a);
  get->add_option("KEY", a.key, "Key")->required();
  AddJson(get, &a);
  AddHex(get, &a);

  CLI::App* put = app.add_subcommand("put", "Store KEY -> VALUE (synced)");
  AddDb(put, &a);
  put->add_option("KEY", a.key, "Key")->required();
  put->add_option("VALUE", a.value, "Value")->required();
  put->add_flag("--create", a.create, "Create the database if missing");
  AddHex(put, &a);

  CLI::App* del = app.add_subcommand("delete", "Delete KEY (synced)");
  AddDb(del, &a);
  del->add_option("KEY", a.key, "Key")->required();
  AddHex(del, &a);

  CLI::App* del_range = app.add_subcommand(
      "delete-range",
      "Delete every key in [BEGIN, END) (one synced range deletion)");
  AddDb(del_range, &a);
  del_range->add_option("BEGIN", a.key, "First key deleted")->required();
  del_range->add_option("END", a.value, "First key kept (after BEGIN)")
      ->required();
  AddHex(del_range, &a);

  CLI::App* scan =
      app.add_subcommand("scan",
                         "Print key<TAB>value lines in key order (escaped as "
                         "'load' reads them, see docs/kvtool.md)");
  AddDb(scan, &a);
  AddRange(scan, &a, "entries");
  AddJson(scan, &a);
  AddHex(scan, &a);

  CLI::App* dump = app.add_subcommand(
      "dump",
      "Every entry of one segment file with its sequence number and "
      "type, tombstones included");
  dump->add_option("FILE", a.file, "Segment file (.seg)")->required();
  dump->add_option("--limit", a.limit, "At most N entries (0: all)")
      ->check(CLI::NonNegativeNumber);
  AddJson(dump, &a);
  AddHex(dump, &a);

  CLI::App* idump = app.add_subcommand(
      "idump",
      "Every stored version of the keys in [--from, --to): puts, deletion "
      "markers and overwritten values not yet compacted away, newest first");
  AddDb(idump, &a);
  AddRange(idump, &a, "versions");
  AddJson(idump, &a);
  AddHex(idump, &a);

  CLI::App* manifest = app.add_subcommand(
      "manifest",
      "Every edit of the manifest (DB's current one, or FILE): logs, "
      "sequence, segments added and removed");
  manifest->add_option("PATH", a.db, "Database directory or MANIFEST file")
      ->required();
  AddJson(manifest, &a);
  AddHex(manifest, &a);

  CLI::App* wal = app.add_subcommand(
      "wal",
      "Every write batch of the database's logs (or of one log FILE): "
      "offset, sequence, puts and deletes");
  wal->add_option("PATH", a.db, "Database directory or .log file")->required();
  AddJson(wal, &a);
  AddHex(wal, &a);

  CLI::App* approxsize = app.add_subcommand(
      "approxsize",
      "Approximate bytes on disk of the keys in [--from, --to) "
      "(GetApproximateSizes; memtables not counted)");
  AddDb(approxsize, &a);
  AddRange(approxsize, &a, nullptr);
  AddJson(approxsize, &a);
  AddHex(approxsize, &a);

  CLI::App* explain =
      app.add_subcommand("explain",
                         "Trace one lookup of KEY: memtables, every segment "
                         "considered and its outcome, blocks and bytes read");
  AddDb(explain, &a);
  explain->add_option("KEY", a.key, "Key")->required();
  AddJson(explain, &a);
  AddHex(explain, &a);

  CLI::App* verify = app.add_subcommand(
      "verify",
      "Check every checksum of a database (segments, manifest, "
      "logs) or of one file; exit code 1 lists each problem");
  verify->add_option("PATH", a.db, "Database directory or one file")
      ->required();
  AddJson(verify, &a);

  CLI::App* filter_check = app.add_subcommand(
      "filter-check",
      "Probe random absent keys against every segment's "
      "filter: measured vs. theoretical false-positive rate");
  AddDb(filter_check, &a);
  AddJson(filter_check, &a);
  a.samples = kDefaultSamples;
  AddSamples(filter_check, &a,
             "Random keys confirmed absent, probed against every filter "
             "(default 1000)");

  CLI::App* compact =
      app.add_subcommand("compact",
                         "Compact the database (or the keys in [--from, "
                         "--to]): flush, merge every level down, drop "
                         "overwritten and deleted entries");
  AddDb(compact, &a);
  AddRange(compact, &a, nullptr, "Last key to compact (inclusive)");
  AddHex(compact, &a);

  CLI::App* load = app.add_subcommand(
      "load",
      "Load key<TAB>value lines from FILE ('-' = stdin), escaped as 'scan' "
      "prints them, in batches; stops at the first malformed line");
  AddDb(load, &a);
  load->add_option("FILE", a.input, "Input file, or - for stdin")->required();
  load->add_flag("--create", a.create, "Create the database if missing");
  CLI::Option* load_hex =
      load->add_flag("--hex", a.hex, "Keys and values as hex digits");
  load->add_flag("--raw", a.raw,
                 "Keys and values as raw bytes (no unescaping; the value is "
                 "everything after the first tab)")
      ->excludes(load_hex);
  load->add_option("--batch", a.batch, "Records per write batch (default 1000)")
      ->check(CLI::Range(uint64_t{1}, kMaxBatchRecords));
  load->add_flag("--bulk", a.bulk,
                 "Sort the input and add it as segments in one step (no log, "
                 "no compaction); all or nothing");
  load->add_option("--memory-mb", a.memory_mb,
                   "With --bulk: memory for sorting, in MiB; beyond it "
                   "sorted runs are spilled beside DB (default 256)")
      ->check(CLI::Range(uint64_t{1}, kMaxMemoryMb));

  CLI::App* repair = app.add_subcommand(
      "repair",
      "Rebuild the manifest from the readable segments and logs; what "
      "cannot be read moves to DB/lost/");
  AddDb(repair, &a);
  AddJson(repair, &a);

  CLI::App* checkpoint = app.add_subcommand(
      "checkpoint",
      "Copy the database into the new directory DIR, itself a database "
      "(segments hard-linked, the rest copied); takes the database lock");
  AddDb(checkpoint, &a);
  checkpoint->add_option("DIR", a.dir, "New directory (must not exist)")
      ->required();
  checkpoint->add_flag("--no-flush", a.no_flush,
                       "Copy the whole log instead of flushing the memtable "
                       "first");

  CLI::App* capacity = app.add_subcommand(
      "capacity",
      "Plan a store: the levels, segments, disk bytes, filter and index "
      "memory and block reads per lookup that N entries settle into with "
      "the default options (no database needed)");
  capacity->add_option("--entries", a.capacity.entries, "Number of entries")
      ->required()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50));
  capacity
      ->add_option("--key-bytes", a.capacity.key_bytes,
                   "Average key length (default 7)")
      ->check(CLI::Range(0.0, 1e6));
  capacity
      ->add_option("--value-bytes", a.capacity.value_bytes,
                   "Average value length (default 80)")
      ->check(CLI::Range(0.0, 1e9));
  capacity
      ->add_option("--bits-per-key", a.capacity.bits_per_key,
                   "Bits per key of the bloom filter (default 10)")
      ->check(CLI::Range(0.01, 64.0));
  capacity
      ->add_option("--deep-filter", a.capacity.deep_filter,
                   "Filter below level 0: default (binary fuse8 for a bloom "
                   "filter of 10-12 bits per key, else the bloom filter), "
                   "bloom, fuse8 or fuse16")
      ->check(CLI::IsMember({"default", "bloom", "fuse8", "fuse16"}));
  capacity
      ->add_option("--compression-ratio", a.capacity.compression_ratio,
                   "Compressed over raw data block size (default 0.63, "
                   "LZ4 on short-link URLs; 1 without compression)")
      ->check(CLI::Range(0.01, 2.0));
  AddJson(capacity, &a);

  CLI::App* filter = app.add_subcommand(
      "filter",
      "Standalone filter files: build from a key file, query, info, merge "
      "(see 'kvtool filter --help')");
  filter->require_subcommand(1);
  CLI::App* fbuild = filter->add_subcommand(
      "build",
      "Build a filter of KIND (bloom, scalable, cuckoo, fuse) from KEYFILE "
      "(one key per line, '-' = stdin) into OUT");
  fbuild->add_option("KIND", a.kind, "bloom, scalable, cuckoo or fuse")
      ->required();
  fbuild->add_option("KEYFILE", a.input, "Keys, one per line; - for stdin")
      ->required();
  fbuild->add_option("OUT", a.out, "Filter file to write (replaced)")
      ->required();
  FilterBuildOptions& fo = a.filter_build;
  fbuild
      ->add_option("--capacity", fo.capacity,
                   "Keys it is sized for (default: the keys read; "
                   "scalable: of the first sub-filter)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  fbuild
      ->add_option("--fp-rate", fo.fp_rate,
                   "Target false-positive rate (default 0.01)")
      ->check(CLI::Range(1e-9, 0.5));
  fbuild
      ->add_option("--bits-per-key", fo.bits_per_key,
                   "bloom: size by bits per key instead of --fp-rate")
      ->check(CLI::Range(1.0, 100.0));
  fbuild->add_option("--expansion", fo.expansion,
                     "scalable: capacity growth of each new sub-filter "
                     "(default 2)");
  fbuild->add_flag("--non-scaling", fo.non_scaling,
                   "scalable: never grow; fail when full");
  fbuild->add_option("--bucket-size", fo.bucket_size,
                     "cuckoo: slots per bucket, 1..8 (default 4)");
  fbuild->add_option("--fingerprint-bits", fo.fingerprint_bits,
                     "cuckoo: 4..32 (default: from --fp-rate); fuse: 8 or "
                     "16 (default 8)");
  fbuild->add_option("--max-kicks", fo.max_kicks,
                     "cuckoo: relocations per add, 1..65535 (default 500)");
  AddJson(fbuild, &a);
  CLI::App* fquery = filter->add_subcommand(
      "query",
      "Is each KEY maybe present or definitely absent? Exit code 1 if "
      "some key is absent");
  fquery->add_option("FILTER", a.filter, "Filter file")->required();
  fquery->add_option("KEY", a.keys, "Keys to look up");
  fquery->add_option("--keys-file", a.keys_file,
                     "More keys, one per line ('-' = stdin)");
  AddJson(fquery, &a);
  CLI::App* finfo = filter->add_subcommand(
      "info",
      "Kind, capacity, size, bits per key, items (recorded and "
      "estimated), target and estimated false-positive rate");
  finfo->add_option("FILTER", a.filter, "Filter file")->required();
  AddJson(finfo, &a);
  CLI::App* fmerge = filter->add_subcommand(
      "merge", "Write the union of two bloom filters of the same shape");
  fmerge->add_option("A", a.filter, "Bloom filter file")->required();
  fmerge->add_option("B", a.other_filter, "Bloom filter file")->required();
  fmerge->add_option("OUT", a.out, "Filter file to write (replaced)")
      ->required();
  AddJson(fmerge, &a);

  // CLI11 would call an unknown subcommand an unexpected argument, or say
  // that a subcommand is required; name the actual mistake instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == argv[1]) known = true;
    }
    if (!known) {
      return Fail(std::cerr, kExitUsage,
                  std::string("unknown subcommand '") + argv[1] +
                      "' (see 'kvtool --help')");
    }
  }

  if (argc > 2 && std::string(argv[1]) == "filter" && argv[2][0] != '-') {
    bool known = false;
    for (const CLI::App* sub : filter->get_subcommands({})) {
      if (sub->get_name() == argv[2]) known = true;
    }
    if (!known) {
      return Fail(std::cerr, kExitUsage,
                  std::string("unknown filter subcommand '") + argv[2] +
                      "' (see 'kvtool filter --help')");
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);  // help on stdout, exit code 0
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Fail(std::cerr, kExitUsage,
                std::string(e.what()) + " (see 'kvtool --help')");
  }

  Context ctx;
  ctx.out = &std::cout;
  ctx.err = &std::cerr;
  ctx.json = a.json;
  ctx.hex = a.hex;
  if (a.hex) {
    // Every key and value argument is hex; decode them all before any
    // command runs.
    auto decode = [&](const char* what, std::string* arg) {
      std::string bytes;
      const std::string why = Decode(*arg, ByteEncoding::kHex, &bytes);
      if (why.empty()) *arg = std::move(bytes);
      return why.empty() ? std::string() : std::string(what) + ": " + why;
    };
    const bool range = del_range->parsed();
    std::string why = decode(range ? "BEGIN" : "KEY", &a.key);
    if (why.empty()) why = decode(range ? "END" : "VALUE", &a.value);
    if (why.empty() && a.from.has_value()) why = decode("--from", &*a.from);
    if (why.empty() && a.to.has_value()) why = decode("--to", &*a.to);
    if (!why.empty()) {
      return Fail(std::cerr, kExitUsage, why + " (--hex takes hex digits)");
    }
  }
  const ByteEncoding load_encoding = a.hex   ? ByteEncoding::kHex
                                     : a.raw ? ByteEncoding::kRaw
                                             : ByteEncoding::kEscaped;
  const uint64_t seed = a.seed.has_value() ? *a.seed : SeedFromClock();

  if (info->parsed()) return RunInfo(ctx, a.db, a.samples, seed);
  if (capacity->parsed()) return RunCapacity(ctx, a.capacity);
  if (segments->parsed()) return RunSegments(ctx, a.db, a.samples, seed);
  if (segment->parsed()) return RunSegment(ctx, a.file);
  if (get->parsed()) return RunGet(ctx, a.db, a.key);
  if (put->parsed()) return RunPut(ctx, a.db, a.key, a.value, a.create);
  if (del->parsed()) return RunDelete(ctx, a.db, a.key);
  if (del_range->parsed()) return RunDeleteRange(ctx, a.db, a.key, a.value);
  const ScanRange range{a.from, a.to, a.limit};
  if (scan->parsed()) return RunScan(ctx, a.db, range);
  if (dump->parsed()) return RunDump(ctx, a.file, a.limit);
  if (idump->parsed()) return RunIdump(ctx, a.db, range);
  if (manifest->parsed()) return RunManifest(ctx, a.db);
  if (wal->parsed()) return RunWal(ctx, a.db);
  if (approxsize->parsed()) return RunApproxSize(ctx, a.db, a.from, a.to);
  if (explain->parsed()) return RunExplain(ctx, a.db, a.key);
  if (verify->parsed()) return RunVerify(ctx, a.db);
  if (filter_check->parsed()) {
    return RunFilterCheck(ctx, a.db, a.samples, seed);
  }
  if (compact->parsed()) return RunCompact(ctx, a.db, a.from, a.to);
  if (load->parsed() && a.bulk) {
    BulkLoadOptions bo;
    bo.create = a.create;
    bo.progress = ::isatty(STDOUT_FILENO) == 1;
    bo.memory_mb = a.memory_mb;
    bo.encoding = load_encoding;
    return RunBulkLoad(ctx, a.db, a.input, bo);
  }
  if (load->parsed()) {
    LoadOptions lo;
    lo.create = a.create;
    lo.progress = ::isatty(STDOUT_FILENO) == 1;
    lo.batch_records = a.batch;
    lo.encoding = load_encoding;
    return RunLoad(ctx, a.db, a.input, lo);
  }
  if (fbuild->parsed()) {
    return RunFilterBuild(ctx, a.kind, a.input, a.out, a.filter_build);
  }
  if (fquery->parsed())
    return RunFilterQuery(ctx, a.filter, a.keys, a.keys_file);
  if (finfo->parsed()) return RunFilterInfo(ctx, a.filter);
  if (fmerge->parsed()) {
    return RunFilterMerge(ctx, a.filter, a.other_filter, a.out);
  }
  if (repair->parsed()) return RunRepair(ctx, a.db);
  if (checkpoint->parsed()) {
    return RunCheckpoint(ctx, a.db, a.dir, /*flush=*/!a.no_flush);
  }
  return Fail(std::cerr, kExitUsage, "no subcommand (see 'kvtool --help')");
}

}  // namespace
}  // namespace bloomkv::kvtool

int main(int argc, char** argv) {
  try {
    return bloomkv::kvtool::Run(argc, argv);
  } catch (const std::exception& e) {
    return bloomkv::kvtool::Fail(std::cerr, bloomkv::kvtool::kExitIOError,
                                 std::string("internal error: ") + e.what());
  } catch (...) {
    return bloomkv::kvtool::Fail(std::cerr, bloomkv::kvtool::kExitIOError,
                                 "internal error");
  }
}
