// kvbench: the macro benchmark. Fills a store with short-code -> URL pairs
// the way a link shortener issues them, then measures lookups of real codes,
// of never-issued codes (a cache-penetration flood) and a Zipf-skewed mix of
// both, with and without filters, against bloomkv and (when built with
// them) LevelDB and RocksDB. Prints a table, and optionally writes every
// figure as JSON and gnuplot charts. See docs/benchmarks.md for commands.
//
//   kvbench --num=1000000 --benchmarks=fill,mixed --compare
//   kvbench --fp_sweep=1,2,4,6,8,10,12,16 --benchmarks=none
//   kvbench --threads=1,2 --benchmarks=fill,readhit,readhit,readmiss
//   kvbench --settle=compact --min_seconds=2 --repeat=5
//   kvbench --engines=bloomkv --filter_configs=10,10+fuse8
//
// All stores of a run (each engine, filters on and off) stay open together:
// each is filled and settled in turn, then each lookup phase runs --repeat
// times per store, the stores taking turns, and the median is reported.
// Every timed phase starts only once the process is idle, so that no
// store's background work (e.g. LevelDB's read-triggered compactions) takes
// a core from another's measurement.
//
// Thread-safety: main drives everything; phases use --threads workers. With
// a list of thread counts, each lookup phase runs once per count, back to
// back on the same store, so their ratio is measured under the same
// conditions; write phases use the first count.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cinttypes>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "bench/kvbench/engine.h"
#include "bench/kvbench/generators.h"
#include "bench/kvbench/process_stats.h"
#include "bench/kvbench/report.h"
#include "bench/kvbench/workload.h"

namespace bloomkv::bench {
namespace {

struct Flags {
  uint64_t num = 1000000;
  uint64_t reads = 200000;
  double min_seconds = 1.0;
  int repeat = 3;
  bool warmup = false;
  std::string settle = "background";
  // One store per value, side by side (0: the engine's default).
  std::vector<int> max_open_files = {0};
  std::vector<uint64_t> meta_limit_kib = {0};
  std::vector<uint64_t> range_tombstones = {0};
  uint64_t lmdb_map_gib = 1024;
  bool sync = false;
  // One bloomkv store per value, side by side: default, on or off.
  std::vector<std::string> mmap_reads = {"default"};
  std::string compression = "lz4-values";
  uint64_t writes = 0;
  uint64_t deletes = 0;
  uint64_t scans = 10000;
  uint64_t scan_length = 100;
  std::vector<int> threads = {1};
  double bits_per_key = 10;
  std::string filter = "on";
  std::vector<std::string> filter_configs;
  int deep_filter_level = 1;
  std::string filter_allocation = "uniform";
  bool compare = false;
  std::string engines;
  size_t cache_mb = 8;
  size_t row_cache_mb = 0;
  int64_t answer_cache_kb = -1;
  size_t write_buffer_mb = 4;
  size_t value_min = 40;
  size_t value_max = 120;
  double miss_ratio = 0.5;
  double zipf = 0.99;
  uint64_t seed = 301;
  std::string db;
  bool keep = false;
  bool use_existing_db = false;
  bool drop_caches = false;
  uint64_t batch = 1;
  std::string benchmarks = "fill,readhit,readmiss,mixed";
  std::string json;
  std::string plot_dir;
  std::vector<double> fp_sweep;
  uint64_t fp_num = 200000;
  uint64_t fp_probes = 200000;
};

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

template <typename Int>
std::string JoinInts(const std::vector<Int>& v) {
  std::vector<std::string> s;
  for (Int x : v) s.push_back(std::to_string(x));
  return Join(s);
}

// The filters of one store: bloom at bits_per_key (0: none), and, for
// bloomkv, a binary fuse filter from --deep_filter_level down.
struct FilterConfig {
  double bits_per_key = 0;
  // "" (the library's default), "bloom" (bloom everywhere), "fuse8" or
  // "fuse16"
  std::string deep_filter;
  // Not a filter setting, but the store's: its engine's max_open_files
  // (0: the default), one of --max_open_files.
  int max_open_files = 0;
  // bloomkv's filter_and_index_memory_limit in KiB (0: none), one of
  // --meta_limit_kib.
  uint64_t meta_limit_kib = 0;
  // Range deletions issued after the fill (bloomkv only), one of
  // --range_tombstones.
  uint64_t range_tombstones = 0;
  // How bloomkv reads segments, one of --mmap_reads: "default", "on" or
  // "off"; labelled only when --mmap_reads lists more than one.
  std::string mmap_reads = "default";
  bool label_mmap_reads = false;

  bool on() const {
    return bits_per_key > 0 || deep_filter == "fuse8" || deep_filter == "fuse16";
  }
  // For directory names: "10" (bloom everywhere), "10+fuse8", "off";
  // "default-10" for the library's default deep filter.
  std::string Label() const {
    if (!on()) return "off";
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", bits_per_key);
    std::string label = deep_filter.empty() ? "default-" + std::string(buf)
                        : deep_filter == "bloom" ? std::string(buf)
                                                 : std::string(buf) + "+" + deep_filter;
    if (max_open_files != 0) label += "-" + MaxOpenFilesLabel(max_open_files);
    if (meta_limit_kib > 0) label += "-meta" + std::to_string(meta_limit_kib);
    if (range_tombstones > 0) label += "-rt" + std::to_string(range_tombstones);
    if (label_mmap_reads) label += "-mmap-" + mmap_reads;
    return label;
  }
};

// "<bits>" (bloom everywhere) or "<bits>+fuse8" / "<bits>+fuse16"; false if
// it is neither.
bool ParseFilterConfig(const std::string& text, FilterConfig* config) {
  const size_t plus = text.find('+');
  const std::string bits = text.substr(0, plus);
  char* end = nullptr;
  config->bits_per_key = std::strtod(bits.c_str(), &end);
  if (bits.empty() || end != bits.c_str() + bits.size() ||
      !(config->bits_per_key >= 0 && config->bits_per_key <= 100)) {
    return false;
  }
  config->deep_filter =
      plus == std::string::npos ? "bloom" : text.substr(plus + 1);
  return config->deep_filter == "bloom" || config->deep_filter == "fuse8" ||
         config->deep_filter == "fuse16";
}

EngineOptions MakeEngineOptions(const Flags& flags,
                                const FilterConfig& filter) {
  EngineOptions eo;
  eo.bits_per_key = filter.bits_per_key;
  eo.deep_filter = filter.deep_filter;
  eo.deep_filter_level = flags.deep_filter_level;
  eo.minimize_filter_fp = flags.filter_allocation == "minimize";
  eo.block_cache_bytes = flags.cache_mb << 20;
  eo.row_cache_bytes = flags.row_cache_mb << 20;
  eo.answer_cache_bytes =
      flags.answer_cache_kb < 0 ? -1 : flags.answer_cache_kb << 10;
  eo.write_buffer_bytes = flags.write_buffer_mb << 20;
  eo.max_open_files = filter.max_open_files;
  eo.meta_limit_bytes = filter.meta_limit_kib << 10;
  eo.lmdb_map_gib = flags.lmdb_map_gib;
  eo.sync_writes = flags.sync;
  eo.mmap_reads = filter.mmap_reads == "default" ? -1
                  : filter.mmap_reads == "on"    ? 1
                                                 : 0;
  eo.compression = flags.compression;
  return eo;
}

SettleMode ParseSettleMode(const std::string& name) {
  return name == "compact" ? SettleMode::kCompact : SettleMode::kBackground;
}

// One engine in one filter setting: a fresh store in its own directory, the
// workload that filled it, and what was measured on it.
struct Store {
  std::string dir;
  EngineOptions engine_options;  // as opened, to reopen it alike
  std::unique_ptr<Engine> engine;
  // Bytes the engine wrote to files before it was last reopened.
  uint64_t file_bytes_written_before = 0;
  std::unique_ptr<Workload> workload;
  const ShortCodeSet* codes = nullptr;  // the workload's
  RunResult result;
  bool range_tombstones_issued = false;

  bool ok() const { return result.error.empty(); }
};

// VmHWM is reset before each phase, so that each run's peak is its own;
// the process's peak since start is kept here.
struct PeakRss {
  uint64_t process = 0;

  void Reset() {
    process = std::max(process, PeakRssBytes());
    ResetPeakRss();
  }
  uint64_t Read() {
    const uint64_t peak = PeakRssBytes();
    process = std::max(process, peak);
    return peak;
  }
};

std::unique_ptr<Store> OpenStore(const std::string& engine_name,
                                 const FilterConfig& filter, const Flags& flags,
                                 const ShortCodeSet& codes,
                                 const UrlGenerator& urls,
                                 const std::string& dir) {
  auto store = std::make_unique<Store>();
  store->dir = dir;
  RunResult& r = store->result;
  r.engine = engine_name;
  r.bits_per_key = filter.bits_per_key;
  r.deep_filter = filter.deep_filter;
  r.deep_filter_level = flags.deep_filter_level;
  r.max_open_files = filter.max_open_files;
  r.meta_limit_kib = filter.meta_limit_kib;
  r.range_tombstones = filter.range_tombstones;
  if (filter.label_mmap_reads) r.mmap_reads = filter.mmap_reads;
  r.minimize_filter_fp =
      engine_name == "bloomkv" && flags.filter_allocation == "minimize";
  r.settle_mode = flags.settle;
  r.rss_at_start = CurrentRssBytes();
  store->engine_options = MakeEngineOptions(flags, filter);
  store->engine_options.reopen = flags.use_existing_db;
  if (flags.use_existing_db && !std::filesystem::is_directory(dir)) {
    r.error = "--use_existing_db: no store at " + dir;
    return store;
  }
  Status s =
      OpenEngine(engine_name, store->engine_options, dir, &store->engine);
  if (!s.ok()) {
    r.error = s.ToString();
    return store;
  }
  r.description = store->engine->Describe();
  // No write phase will settle it: its shape as the reads find it.
  if (flags.use_existing_db) r.files_per_level = store->engine->FilesPerLevel();

  WorkloadConfig wc;
  wc.num = flags.num;
  wc.reads = flags.reads;
  wc.min_seconds = flags.min_seconds;
  wc.batch = flags.batch;
  wc.writes = flags.writes;
  wc.deletes = flags.deletes;
  wc.scans = flags.scans;
  wc.scan_length = flags.scan_length;
  wc.threads = flags.threads.front();
  wc.miss_ratio = flags.miss_ratio;
  wc.zipf = flags.zipf;
  wc.seed = flags.seed;
  store->workload = std::make_unique<Workload>(wc, codes, urls);
  store->codes = &codes;
  return store;
}

// After the first write phase has settled: result.range_tombstones range
// deletions, each over no key ([code + 0x01, code + 0x02) for an issued
// code: codes all have the same length), spread over the issued codes, so
// that every hit searches them and none is hidden; then a flush puts them
// in the manifest, where reads find them. Issued after the settle so that
// no compaction has applied (and retired) them before the reads.
void IssueRangeTombstones(Store* store) {
  RunResult& r = store->result;
  store->range_tombstones_issued = true;
  const ShortCodeSet& codes = *store->codes;
  const uint64_t n = std::min<uint64_t>(r.range_tombstones, codes.size());
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; i++) {
    const std::string code = EncodeShortCode(codes.code(i * codes.size() / n));
    Status s = store->engine->DeleteRange(code + '\x01', code + '\x02');
    if (!s.ok()) {
      r.error = s.ToString();
      return;
    }
  }
  Status s = store->engine->Flush();
  if (!s.ok()) {
    r.error = s.ToString();
    return;
  }
  r.range_tombstones_kept = store->engine->KeptRangeTombstones().value_or(0);
  std::fprintf(stderr,
               "  %-8s %" PRIu64 " range deletions: %.2f s; %" PRIu64
               " kept after the flush\n",
               r.engine.c_str(), n, Seconds(start), r.range_tombstones_kept);
}

// Brings the store to the shape reads are measured in, after a write phase.
void Settle(Store* store, SettleMode mode) {
  RunResult& r = store->result;
  const auto start = std::chrono::steady_clock::now();
  Status s = SettleStore(*store->engine, mode);
  r.settle_seconds += Seconds(start);
  if (!s.ok()) {
    r.error = s.ToString();
    return;
  }
  const std::vector<int> shape = store->engine->FilesPerLevel();
  if (r.files_per_level.empty()) r.files_per_level = shape;
  std::fprintf(
      stderr, "  %-8s settle (flush + %s): %.2f s; files %s\n",
      r.engine.c_str(),
      mode == SettleMode::kCompact ? "compact all" : "background compaction",
      Seconds(start), FormatFilesPerLevel(shape).c_str());
}

// Empties the kernel's page cache (needs root), so that a lookup phase
// starts from the disk as a store larger than memory would: false if the
// kernel refused.
bool DropPageCache() {
  ::sync();
  FILE* f = std::fopen("/proc/sys/vm/drop_caches", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("3", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

bool g_drop_caches = false;

PhaseResult RunPhaseOn(Store* store, const std::string& phase, int threads,
                       PeakRss* peak) {
  RunResult& r = store->result;
  PhaseResult p;
  // No store's leftover background work may share the cores with this one.
  double waited = 0;
  Status s = WaitUntilProcessIdle(kSettleTimeoutSeconds, &waited);
  r.idle_wait_seconds += waited;
  if (waited >= 0.5) {
    std::fprintf(stderr, "  %-8s waited %.2f s for background work\n",
                 r.engine.c_str(), waited);
  }
  if (!s.ok()) {
    if (r.error.empty()) r.error = s.ToString();
    p.name = phase;
    return p;
  }
  if (g_drop_caches && phase != "fill") {
    // Pages a live mapping holds survive the drop: the store is closed
    // first and opened again after, as by a process started on a machine
    // whose page cache does not hold it.
    store->file_bytes_written_before +=
        store->engine->Counters().file_bytes_written;
    store->engine.reset();
    if (!DropPageCache()) {
      std::fprintf(stderr, "kvbench: cannot write /proc/sys/vm/drop_caches\n");
      std::exit(1);
    }
    store->engine_options.reopen = true;
    s = OpenEngine(r.engine, store->engine_options, store->dir,
                   &store->engine);
    if (!s.ok()) {
      if (r.error.empty()) r.error = s.ToString();
      p.name = phase;
      return p;
    }
  }
  peak->Reset();
  s = store->workload->RunPhase(phase, store->engine.get(), &p, threads);
  r.peak_rss = std::max(r.peak_rss, peak->Read());
  std::fprintf(
      stderr, "  %-8s %-12s %-9s %3d thr %9.0f ops/s  (%.2f s, %llu pass%s)\n",
      r.engine.c_str(), r.FilterLabel().c_str(), phase.c_str(),
      p.threads, p.ops_per_sec(), p.seconds,
      static_cast<unsigned long long>(p.passes), p.passes == 1 ? "" : "es");
  if (!s.ok() && r.error.empty()) r.error = s.ToString();
  return p;
}

// The repetition with the median lookups/s (the lower middle one of an even
// count), carrying every repetition's lookups/s.
PhaseResult MedianRepetition(std::vector<PhaseResult> reps) {
  std::vector<double> rates;
  for (const PhaseResult& p : reps) rates.push_back(p.ops_per_sec());
  std::sort(reps.begin(), reps.end(),
            [](const PhaseResult& a, const PhaseResult& b) {
              return a.ops_per_sec() < b.ops_per_sec();
            });
  PhaseResult median = std::move(reps[(reps.size() - 1) / 2]);
  median.repetitions = std::move(rates);
  return median;
}

// Runs every phase on every store. A write phase runs once per store, which
// is then settled before the next store writes (so no store's background
// compaction runs during another's measurement). A read phase runs
// flags.repeat times per store, the stores taking turns in alternating order
// (forward, then backward) so that order effects cancel out of the median;
// within a turn it runs once per thread count, back to back.
void RunPhases(const Flags& flags, const std::vector<std::string>& phases,
               const std::vector<std::unique_ptr<Store>>& stores,
               PeakRss* peak) {
  const SettleMode mode = ParseSettleMode(flags.settle);
  const size_t n = stores.size();
  for (const std::string& phase : phases) {
    if (IsWritePhase(phase)) {
      for (const auto& store : stores) {
        if (!store->ok()) continue;
        store->result.phases.push_back(
            RunPhaseOn(store.get(), phase, flags.threads.front(), peak));
        if (store->ok()) Settle(store.get(), mode);
        if (store->ok() && store->result.range_tombstones > 0 &&
            !store->range_tombstones_issued) {
          IssueRangeTombstones(store.get());
        }
      }
      continue;
    }
    const size_t counts = flags.threads.size();
    // reps[store][thread count]
    std::vector<std::vector<std::vector<PhaseResult>>> reps(
        n, std::vector<std::vector<PhaseResult>>(counts));
    // One untimed run per store and thread count first (each count draws
    // its own probes): the repetitions then all measure the cache as the
    // previous ones left it, none the cold cache.
    for (size_t i = 0; flags.warmup && i < n; i++) {
      for (size_t t = 0; t < counts && stores[i]->ok(); t++) {
        RunPhaseOn(stores[i].get(), phase, flags.threads[t], peak);
      }
    }
    for (int rep = 0; rep < flags.repeat; rep++) {
      for (size_t k = 0; k < n; k++) {
        const size_t i = rep % 2 == 0 ? k : n - 1 - k;
        for (size_t t = 0; t < counts && stores[i]->ok(); t++) {
          reps[i][t].push_back(
              RunPhaseOn(stores[i].get(), phase, flags.threads[t], peak));
        }
      }
    }
    for (size_t i = 0; i < n; i++) {
      for (size_t t = 0; t < counts; t++) {
        if (reps[i][t].empty()) continue;
        stores[i]->result.phases.push_back(
            MedianRepetition(std::move(reps[i][t])));
      }
    }
  }
}

// Takes the store's final figures; the engine is still open.
void Finish(Store* store) {
  RunResult& r = store->result;
  if (store->engine == nullptr) return;
  r.filters = store->engine->Filters();
  r.engine_memory = store->engine->MemoryUsage();
  r.user_bytes_written = store->workload->user_bytes_written();
  r.file_bytes_written = store->file_bytes_written_before +
                         store->engine->Counters().file_bytes_written;
  r.disk_bytes = DirectoryBytes(store->dir);
  r.files_per_level_end = store->engine->FilesPerLevel();
  r.open_fds = OpenFileDescriptors(store->dir);
  for (const PhaseResult& p : r.phases) {
    if (p.verify_errors > 0 && r.error.empty()) {
      r.error = "phase " + p.name + ": " + std::to_string(p.verify_errors) +
                " lookups returned a wrong result";
    }
  }
}

// Builds a bloomkv store per bits-per-key setting and measures the false
// positives of never-issued codes against the theory.
Status RunFpSweep(const Flags& flags, const std::string& base,
                  std::vector<SweepPoint>* sweep) {
  ShortCodeSet codes;
  codes.Issue(flags.fp_num, Mix64(flags.seed ^ 0xF5));
  const UrlGenerator urls(flags.seed, flags.value_min, flags.value_max);
  for (double bpk : flags.fp_sweep) {
    const std::string dir = base + "/fp-" + std::to_string(bpk);
    std::unique_ptr<Engine> engine;
    Status s = OpenBloomkvEngine(MakeEngineOptions(flags, FilterConfig{bpk, ""}),
                                 dir, &engine);
    for (size_t i = 0; s.ok() && i < codes.size(); i++) {
      s = engine->Put(EncodeShortCode(codes.code(i)),
                      urls.Url(codes.code(i), 0));
    }
    if (s.ok()) s = SettleStore(*engine, ParseSettleMode(flags.settle));
    Rng rng(Mix64(flags.seed ^ 0xAB5E17));
    std::string value;
    bool found = false;
    for (uint64_t i = 0; s.ok() && i < flags.fp_probes; i++) {
      s = engine->Get(EncodeShortCode(codes.NeverIssued(&rng)), &value, &found);
      if (s.ok() && found) s = Status::Corruption("never-issued code found");
    }
    if (!s.ok()) return s;
    const FilterSummary f = engine->Filters();
    SweepPoint p;
    p.bits_per_key = bpk;
    p.keys = codes.size();
    p.probes = flags.fp_probes;
    p.segments = f.files;
    p.filter_bytes = f.filter_bytes.value_or(0);
    p.measured_fp_rate = f.measured_fp_rate.value_or(0);
    p.theoretical_fp_rate = f.theoretical_fp_rate.value_or(1);
    sweep->push_back(p);
    std::fprintf(stderr, "  fp_sweep %5g bits/key: measured %.4f%%\n", bpk,
                 p.measured_fp_rate * 100);
    engine.reset();
    if (!flags.keep) std::filesystem::remove_all(dir);
  }
  return Status::OK();
}

int Main(int argc, char** argv) {
  Flags flags;
  CLI::App app{"kvbench: macro benchmark of bloomkv (and LevelDB, RocksDB)"};
  app.add_option("--num", flags.num, "entries written by fill")
      ->check(CLI::Range(uint64_t{1}, kShortCodeSpace / 2));
  app.add_option("--reads", flags.reads,
                 "probes drawn per read phase (repeated until --min_seconds)");
  app.add_option("--min_seconds", flags.min_seconds,
                 "a lookup phase repeats its probes until it has run this "
                 "long")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--repeat", flags.repeat,
                 "runs of each read phase per store, engines taking turns; "
                 "the median is reported, with the min-max")
      ->check(CLI::Range(1, 100));
  app.add_flag(
      "--warmup", flags.warmup,
      "run each read phase once untimed per store and thread count "
      "before its repetitions (for a cache that holds the working set)");
  app.add_option("--settle", flags.settle,
                 "shape before reads: background (flush, then wait for "
                 "background compaction; as an application leaves it) or "
                 "compact (full manual compaction)")
      ->check(CLI::IsMember({"background", "compact"}));
  app.add_option("--max_open_files", flags.max_open_files,
                 "table files each engine keeps open (0: its default; -1: "
                 "every one, bloomkv and RocksDB), or a list (0,100): one "
                 "store per value, side by side")
      ->check(CLI::Range(-1, 1 << 20))
      ->delimiter(',');
  app.add_option("--meta_limit_kib", flags.meta_limit_kib,
                 "bloomkv's filter_and_index_memory_limit in KiB (0: none), "
                 "or a list (0,8192): one store per value, side by side")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40))
      ->delimiter(',');
  app.add_option("--range_tombstones", flags.range_tombstones,
                 "range deletions (over no key) issued into each bloomkv "
                 "store after the fill, or a list (0,1000): one store per "
                 "value, side by side")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 24))
      ->delimiter(',');
  app.add_option("--lmdb_map_gib", flags.lmdb_map_gib,
                 "LMDB's map size in GiB (default 1024; smaller under "
                 "valgrind)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  app.add_flag("--sync", flags.sync,
               "every write synced to the engine's log before it returns");
  app.add_option("--mmap_reads", flags.mmap_reads,
                 "bloomkv: read segments through mappings (on), with pread "
                 "(off), or as its default Env does (default: mapped); or a "
                 "list (on,off): one bloomkv store per value, side by side")
      ->check(CLI::IsMember({"default", "on", "off"}))
      ->delimiter(',');
  app.add_option("--compression", flags.compression,
                 "bloomkv: compression below level 0: lz4-values (value by "
                 "value, the default), lz4 (blocks), zstd or none")
      ->check(CLI::IsMember({"lz4", "lz4-values", "zstd", "none"}));
  app.add_option("--writes", flags.writes, "overwrites (0: --num)");
  app.add_option("--deletes", flags.deletes, "deletes (0: --num / 10)");
  app.add_option("--scans", flags.scans, "range scans");
  app.add_option("--scan_length", flags.scan_length, "entries per scan");
  app.add_option("--threads", flags.threads,
                 "client threads, or a list (1,2): each lookup phase runs "
                 "once per count")
      ->delimiter(',')
      ->check(CLI::Range(1, 256));
  app.add_option("--bits_per_key", flags.bits_per_key,
                 "filter bits per key (0: no filter)")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--filter", flags.filter, "on or off")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_flag("--compare", flags.compare,
               "run filters on and off on identical data, side by side");
  app.add_option("--filter_configs", flags.filter_configs,
                 "stores with these filters instead of --bits_per_key (whose "
                 "store has the library's default: binary fuse8 below level 0 "
                 "for 10-12 bits), side "
                 "by side: <bits> (bloom everywhere) or <bits>+fuse8 / "
                 "<bits>+fuse16 (bloom above --deep_filter_level, binary "
                 "fuse from there down; bloomkv only), e.g. 10,10+fuse8")
      ->delimiter(',');
  app.add_option("--deep_filter_level", flags.deep_filter_level,
                 "first level of the +fuse filter configs")
      ->check(CLI::Range(1, 6));
  app.add_option("--filter_allocation", flags.filter_allocation,
                 "bloomkv: uniform, or minimize (filter memory planned "
                 "across levels and kinds)")
      ->check(CLI::IsMember({"uniform", "minimize"}));
  app.add_option("--engines", flags.engines,
                 "comma-separated: bloomkv,leveldb,rocksdb,lmdb (default: all "
                 "built in)");
  app.add_option("--cache_mb", flags.cache_mb, "block cache MiB");
  app.add_option("--row_cache_mb", flags.row_cache_mb,
                 "bloomkv: row cache MiB (Options::row_cache_capacity; 0: none)");
  app.add_option("--answer_cache_kb", flags.answer_cache_kb,
                 "bloomkv: answer cache KiB (Options::answer_cache_capacity; "
                 "0: none; default: the library's)")
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 30));
  app.add_option("--write_buffer_mb", flags.write_buffer_mb, "memtable MiB")
      ->check(CLI::Range(size_t{1}, size_t{1024}));
  app.add_option("--value_min", flags.value_min, "shortest URL")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  app.add_option("--value_max", flags.value_max, "longest URL")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  app.add_option("--miss_ratio", flags.miss_ratio,
                 "mixed: share of never-issued codes")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--zipf", flags.zipf, "mixed: Zipf exponent of popularity")
      ->check(CLI::Range(0.01, 10.0));
  app.add_option("--seed", flags.seed, "seed of codes, URLs and probes");
  app.add_option("--db", flags.db,
                 "directory for the stores (default: fresh under /tmp)");
  app.add_flag("--keep", flags.keep, "keep the stores afterwards");
  app.add_flag("--use_existing_db", flags.use_existing_db,
               "open the stores a run with the same --db, --num, --seed, "
               "URL lengths and engines kept (--keep) after its fill, "
               "instead of filling new ones; read phases only; the stores "
               "are kept");
  app.add_option("--batch", flags.batch,
                 "lookup phases: keys per MultiGet (1: one Get per key)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000}));
  app.add_flag("--drop_caches", flags.drop_caches,
               "close each store, empty the page cache (root) and open the "
               "store again before each lookup phase, so that its reads "
               "start from the disk as in a store larger than memory");
  app.add_option("--benchmarks", flags.benchmarks,
                 "fill,readhit,readmiss,mixed,overwrite,delete,scan, or "
                 "none (e.g. with --fp_sweep)");
  app.add_option("--json", flags.json, "write every figure to this file");
  app.add_option("--plot_dir", flags.plot_dir,
                 "write gnuplot data and kvbench.gp here");
  app.add_option("--fp_sweep", flags.fp_sweep,
                 "bits-per-key list: FP rate of a fresh store per setting")
      ->delimiter(',')
      ->check(CLI::Range(0.5, 100.0));
  app.add_option("--fp_num", flags.fp_num, "keys per fp_sweep store")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  app.add_option("--fp_probes", flags.fp_probes,
                 "absent-key lookups per fp_sweep store");
  CLI11_PARSE(app, argc, argv);
  g_drop_caches = flags.drop_caches;

  if (flags.value_min > flags.value_max) {
    std::fprintf(stderr, "--value_min must not exceed --value_max\n");
    return 2;
  }
  const std::vector<std::string> phases = flags.benchmarks == "none"
                                              ? std::vector<std::string>()
                                              : SplitCommas(flags.benchmarks);
  for (const std::string& p : phases) {
    if (!IsKnownPhase(p)) {
      std::fprintf(stderr, "unknown benchmark: %s\n", p.c_str());
      return 2;
    }
  }
  if (flags.use_existing_db) {
    // Lookups check every value against the fill's, so the stores must
    // hold exactly what the fill wrote: no write phase here or before.
    for (const std::string& p : phases) {
      if (IsWritePhase(p)) {
        std::fprintf(stderr,
                     "--use_existing_db runs read phases only, not %s\n",
                     p.c_str());
        return 2;
      }
    }
    if (flags.db.empty() || !std::filesystem::is_directory(flags.db)) {
      std::fprintf(stderr, "--use_existing_db needs --db naming a directory\n");
      return 2;
    }
    flags.keep = true;  // never delete a store this run did not create
  } else if (!phases.empty() && phases.front() != "fill") {
    std::fprintf(stderr, "the first benchmark must be fill\n");
    return 2;
  }
  std::vector<FilterConfig> settings;
  if (!flags.filter_configs.empty()) {
    for (const std::string& text : flags.filter_configs) {
      FilterConfig config;
      if (!ParseFilterConfig(text, &config)) {
        std::fprintf(stderr,
                     "--filter_configs: %s is not <bits>, <bits>+fuse8 or "
                     "<bits>+fuse16 with bits in [0, 100]\n",
                     text.c_str());
        return 2;
      }
      settings.push_back(config);
    }
    if (flags.compare) settings.push_back(FilterConfig{});
  } else if (flags.compare) {
    if (flags.bits_per_key <= 0) {
      std::fprintf(stderr, "--compare needs --bits_per_key > 0\n");
      return 2;
    }
    settings = {FilterConfig{flags.bits_per_key, ""}, FilterConfig{}};
  } else {
    settings = {
        FilterConfig{flags.filter == "off" ? 0 : flags.bits_per_key, ""}};
  }
  {
    // One store per filter setting and open-file budget.
    std::vector<FilterConfig> expanded;
    for (const FilterConfig& f : settings) {
      for (int m : flags.max_open_files) {
        for (uint64_t limit : flags.meta_limit_kib) {
          for (uint64_t rt : flags.range_tombstones) {
            for (const std::string& mmap : flags.mmap_reads) {
              expanded.push_back(f);
              expanded.back().max_open_files = m;
              expanded.back().meta_limit_kib = limit;
              expanded.back().range_tombstones = rt;
              expanded.back().mmap_reads = mmap;
              expanded.back().label_mmap_reads = flags.mmap_reads.size() > 1;
            }
          }
        }
      }
    }
    settings = std::move(expanded);
  }
  const std::vector<std::string> available = AvailableEngines();
  std::vector<std::string> engines;
  for (const std::string& e :
       flags.engines.empty() ? available : SplitCommas(flags.engines)) {
    if (std::find(available.begin(), available.end(), e) != available.end()) {
      engines.push_back(e);
    } else {
      std::fprintf(stderr,
                   "note: engine %s is not built into this kvbench "
                   "(available: %s); skipped\n",
                   e.c_str(), Join(available).c_str());
    }
  }
  if (engines.empty() && !phases.empty()) {
    std::fprintf(stderr, "no engine to run\n");
    return 2;
  }
  if (std::find(flags.max_open_files.begin(), flags.max_open_files.end(),
                -1) != flags.max_open_files.end() &&
      std::find(engines.begin(), engines.end(), "leveldb") != engines.end()) {
    std::fprintf(stderr,
                 "--max_open_files -1: LevelDB cannot keep every table file "
                 "open; leave leveldb out of --engines\n");
    return 2;
  }

  // The directory holding one sub-directory per run.
  std::string base = flags.db;
  bool created_base = false;
  std::error_code ec;
  if (base.empty()) {
    char tmpl[] = "/tmp/kvbench-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    base = tmpl;
    created_base = true;
  } else if (!std::filesystem::exists(base, ec)) {
    std::filesystem::create_directories(base, ec);
    if (ec) {
      std::fprintf(stderr, "cannot create %s: %s\n", base.c_str(),
                   ec.message().c_str());
      return 1;
    }
    created_base = true;
  }

  base = std::filesystem::absolute(base, ec).string();  // fds are matched on it

  ReportContext context;
  for (int i = 0; i < argc; i++) {
    context.command_line += (i ? " " : "") + std::string(argv[i]);
  }
  context.flags = {{"num", std::to_string(flags.num)},
                   {"reads", std::to_string(flags.reads)},
                   {"min_seconds", std::to_string(flags.min_seconds)},
                   {"repeat", std::to_string(flags.repeat)},
                   {"warmup", flags.warmup ? "1" : "0"},
                   {"settle", flags.settle},
                   {"drop_caches", flags.drop_caches ? "on" : "off"},
                   {"batch", std::to_string(flags.batch)},
                   {"max_open_files", JoinInts(flags.max_open_files)},
                   {"meta_limit_kib", JoinInts(flags.meta_limit_kib)},
                   {"range_tombstones", JoinInts(flags.range_tombstones)},
                   {"sync", flags.sync ? "true" : "false"},
                   {"mmap_reads", Join(flags.mmap_reads)},
                   {"compression", flags.compression},
                   {"threads", JoinInts(flags.threads)},
                   {"bits_per_key", std::to_string(flags.bits_per_key)},
                   {"filter", flags.compare ? "compare" : flags.filter},
                   {"filter_configs", Join(flags.filter_configs)},
                   {"deep_filter_level", std::to_string(flags.deep_filter_level)},
                   {"filter_allocation", flags.filter_allocation},
                   {"engines", Join(engines)},
                   {"cache_mb", std::to_string(flags.cache_mb)},
                   {"row_cache_mb", std::to_string(flags.row_cache_mb)},
                   {"answer_cache_kb", std::to_string(flags.answer_cache_kb)},
                   {"write_buffer_mb", std::to_string(flags.write_buffer_mb)},
                   {"value_min", std::to_string(flags.value_min)},
                   {"value_max", std::to_string(flags.value_max)},
                   {"miss_ratio", std::to_string(flags.miss_ratio)},
                   {"zipf", std::to_string(flags.zipf)},
                   {"seed", std::to_string(flags.seed)},
                   {"benchmarks", flags.benchmarks},
                   {"use_existing_db", flags.use_existing_db ? "1" : "0"},
                   {"db", base}};

  std::printf(
      "kvbench: %llu entries, 7-char base62 codes, URLs %zu-%zu bytes, "
      "%s thread(s), block cache %zu MiB, write buffer %zu MiB, seed %llu\n"
      "settle %s; lookup phases >= %g s, %d repetition(s), median shown\n"
      "mixed = %.0f%% never-issued codes + Zipf(%.2f) over real ones; "
      "benchmarks %s; engines %s; stores in %s\n\n",
      static_cast<unsigned long long>(flags.num), flags.value_min,
      flags.value_max, JoinInts(flags.threads).c_str(), flags.cache_mb,
      flags.write_buffer_mb, static_cast<unsigned long long>(flags.seed),
      flags.settle.c_str(), flags.min_seconds, flags.repeat,
      flags.miss_ratio * 100, flags.zipf, flags.benchmarks.c_str(),
      Join(engines).c_str(), base.c_str());
  std::fflush(stdout);

  int rc = 0;
  std::vector<RunResult> runs;
  PeakRss peak;
  if (!phases.empty()) {
    const auto start = std::chrono::steady_clock::now();
    ShortCodeSet codes;
    codes.Issue(flags.num, flags.seed);
    const UrlGenerator urls(flags.seed, flags.value_min, flags.value_max);
    std::fprintf(stderr, "issued %llu codes in %.2f s\n",
                 static_cast<unsigned long long>(flags.num), Seconds(start));
    // Every store stays open for the whole run, so that the read phases
    // can take turns between them.
    std::vector<std::unique_ptr<Store>> stores;
    for (const std::string& e : engines) {
      for (const FilterConfig& filter : settings) {
        if ((filter.deep_filter == "fuse8" || filter.deep_filter == "fuse16") &&
            e != "bloomkv") {
          std::fprintf(stderr, "note: %s has no per-level filters; %s skipped\n",
                       e.c_str(), filter.Label().c_str());
          continue;
        }
        if (filter.range_tombstones > 0 && e != "bloomkv") {
          std::fprintf(stderr, "note: --range_tombstones is bloomkv's; %s %s skipped\n",
                       e.c_str(), filter.Label().c_str());
          continue;
        }
        if (filter.mmap_reads != flags.mmap_reads.front() && e != "bloomkv") {
          // The peers read as they always do: one store each.
          continue;
        }
        if (filter.meta_limit_kib > 0 && e != "bloomkv") {
          std::fprintf(stderr, "note: --meta_limit_kib is bloomkv's; %s %s skipped\n",
                       e.c_str(), filter.Label().c_str());
          continue;
        }
        const std::string dir =
            base + "/" + e + (filter.on() ? "-filters" : "-nofilter") +
            (flags.filter_configs.empty() && flags.max_open_files.size() == 1 &&
                     flags.meta_limit_kib.size() == 1 &&
                     flags.range_tombstones.size() == 1 &&
                     flags.mmap_reads.size() == 1
                 ? ""
                 : "-" + filter.Label());
        stores.push_back(OpenStore(e, filter, flags, codes, urls, dir));
      }
    }
    RunPhases(flags, phases, stores, &peak);
    context.open_fds = OpenFileDescriptors();
    for (const auto& store : stores) {
      Finish(store.get());
      runs.push_back(std::move(store->result));
      if (!runs.back().error.empty()) {
        std::fprintf(stderr, "%s: %s\n", runs.back().engine.c_str(),
                     runs.back().error.c_str());
        rc = 1;
      }
      store->engine.reset();
      if (!flags.keep) std::filesystem::remove_all(store->dir, ec);
    }
  }
  peak.Read();
  context.peak_rss = peak.process;
  std::vector<SweepPoint> sweep;
  if (!flags.fp_sweep.empty()) {
    Status s = RunFpSweep(flags, base, &sweep);
    if (!s.ok()) {
      std::fprintf(stderr, "fp_sweep: %s\n", s.ToString().c_str());
      rc = 1;
    }
  }
  if (created_base && !flags.keep) std::filesystem::remove_all(base, ec);

  if (!runs.empty()) {
    PrintTable(stdout, runs);
    std::printf(
        "process: peak RSS %.1f MiB, %llu open file descriptors after the "
        "read phases (all stores open)\n",
        context.peak_rss / 1048576.0,
        static_cast<unsigned long long>(context.open_fds));
    PrintThreadScaling(stdout, runs);
    PrintComparison(stdout, runs);
    PrintPeerSummary(stdout, runs);
  }
  PrintSweep(stdout, sweep);
  if (!flags.json.empty()) {
    Status s = WriteJson(flags.json, context, runs, sweep);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      rc = 1;
    }
  }
  if (!flags.plot_dir.empty()) {
    std::filesystem::create_directories(flags.plot_dir, ec);
    Status s = WritePlotFiles(flags.plot_dir, runs, sweep);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace
}  // namespace bloomkv::bench

int main(int argc, char** argv) { return bloomkv::bench::Main(argc, argv); }
