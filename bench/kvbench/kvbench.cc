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
//
// Thread-safety: main drives everything; phases use --threads workers. With
// a list of thread counts, each lookup phase runs once per count, back to
// back on the same store, so their ratio is measured under the same
// conditions; write phases use the first count.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "bench/kvbench/engine.h"
#include "bench/kvbench/generators.h"
#include "bench/kvbench/process_stats.h"
#include "bench/kvbench/report.h"
#include "bench/kvbench/workload.h"

namespace bloomkv::bench {
namespace {

struct Flags {
  uint64_t num = 1000000;
  uint64_t reads = 1000000;
  uint64_t writes = 0;
  uint64_t deletes = 0;
  uint64_t scans = 10000;
  uint64_t scan_length = 100;
  std::vector<int> threads = {1};
  double bits_per_key = 10;
  std::string filter = "on";
  bool compare = false;
  std::string engines;
  size_t cache_mb = 8;
  size_t write_buffer_mb = 4;
  size_t value_min = 40;
  size_t value_max = 120;
  double miss_ratio = 0.5;
  double zipf = 0.99;
  uint64_t seed = 301;
  std::string db;
  bool keep = false;
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

std::string JoinInts(const std::vector<int>& v) {
  std::vector<std::string> s;
  for (int x : v) s.push_back(std::to_string(x));
  return Join(s);
}

// Fills a fresh store of `engine` in `dir` and runs every phase.
RunResult RunOne(const std::string& engine_name, double bits_per_key,
                 const Flags& flags, const std::vector<std::string>& phases,
                 const ShortCodeSet& codes, const UrlGenerator& urls,
                 const std::string& dir) {
  RunResult r;
  r.engine = engine_name;
  r.bits_per_key = bits_per_key;
  ResetPeakRss();
  r.rss_at_start = CurrentRssBytes();

  EngineOptions eo;
  eo.bits_per_key = bits_per_key;
  eo.block_cache_bytes = flags.cache_mb << 20;
  eo.write_buffer_bytes = flags.write_buffer_mb << 20;
  std::unique_ptr<Engine> engine;
  Status s = OpenEngine(engine_name, eo, dir, &engine);
  if (!s.ok()) {
    r.error = s.ToString();
    return r;
  }
  r.description = engine->Describe();

  WorkloadConfig wc;
  wc.num = flags.num;
  wc.reads = flags.reads;
  wc.writes = flags.writes;
  wc.deletes = flags.deletes;
  wc.scans = flags.scans;
  wc.scan_length = flags.scan_length;
  wc.threads = flags.threads.front();
  wc.miss_ratio = flags.miss_ratio;
  wc.zipf = flags.zipf;
  wc.seed = flags.seed;
  Workload workload(wc, codes, urls);

  bool dirty = false;
  auto settle = [&]() -> Status {
    const auto start = std::chrono::steady_clock::now();
    Status st = SettleStore(*engine);
    r.settle_seconds += Seconds(start);
    std::fprintf(stderr, "  %-8s settle (flush + compact all): %.2f s\n",
                 engine_name.c_str(), Seconds(start));
    dirty = false;
    return st;
  };
  for (const std::string& phase : phases) {
    if (!IsWritePhase(phase) && dirty) {
      s = settle();
      if (!s.ok()) break;
    }
    const std::vector<int> counts =
        IsWritePhase(phase) ? std::vector<int>{flags.threads.front()}
                            : flags.threads;
    for (int threads : counts) {
      PhaseResult p;
      s = workload.RunPhase(phase, engine.get(), &p, threads);
      std::fprintf(stderr, "  %-8s %-7s %-9s %3d thr %9.0f ops/s  (%.2f s)\n",
                   engine_name.c_str(), bits_per_key > 0 ? "filters" : "none",
                   phase.c_str(), p.threads, p.ops_per_sec(), p.seconds);
      r.phases.push_back(std::move(p));
      if (!s.ok()) break;
    }
    if (!s.ok()) break;
    if (IsWritePhase(phase)) dirty = true;
  }
  if (s.ok() && dirty) s = settle();
  if (!s.ok()) r.error = s.ToString();

  r.filters = engine->Filters();
  r.engine_memory = engine->MemoryUsage();
  r.user_bytes_written = workload.user_bytes_written();
  r.file_bytes_written = engine->Counters().file_bytes_written;
  r.disk_bytes = DirectoryBytes(dir);
  r.peak_rss = PeakRssBytes();
  for (const PhaseResult& p : r.phases) {
    if (p.verify_errors > 0 && r.error.empty()) {
      r.error = "phase " + p.name + ": " + std::to_string(p.verify_errors) +
                " lookups returned a wrong result";
    }
  }
  return r;
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
    EngineOptions eo;
    eo.bits_per_key = bpk;
    eo.block_cache_bytes = flags.cache_mb << 20;
    eo.write_buffer_bytes = flags.write_buffer_mb << 20;
    std::unique_ptr<Engine> engine;
    Status s = OpenBloomkvEngine(eo, dir, &engine);
    for (size_t i = 0; s.ok() && i < codes.size(); i++) {
      s = engine->Put(EncodeShortCode(codes.code(i)),
                      urls.Url(codes.code(i), 0));
    }
    if (s.ok()) s = SettleStore(*engine);
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
  app.add_option("--reads", flags.reads, "lookups per read phase");
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
  app.add_option("--engines", flags.engines,
                 "comma-separated: bloomkv,leveldb,rocksdb (default: all "
                 "built in)");
  app.add_option("--cache_mb", flags.cache_mb, "block cache MiB");
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
  if (!phases.empty() && phases.front() != "fill") {
    std::fprintf(stderr, "the first benchmark must be fill\n");
    return 2;
  }
  std::vector<double> settings;
  if (flags.compare) {
    if (flags.bits_per_key <= 0) {
      std::fprintf(stderr, "--compare needs --bits_per_key > 0\n");
      return 2;
    }
    settings = {flags.bits_per_key, 0};
  } else {
    settings = {flags.filter == "off" ? 0 : flags.bits_per_key};
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

  ReportContext context;
  for (int i = 0; i < argc; i++) {
    context.command_line += (i ? " " : "") + std::string(argv[i]);
  }
  context.flags = {{"num", std::to_string(flags.num)},
                   {"reads", std::to_string(flags.reads)},
                   {"threads", JoinInts(flags.threads)},
                   {"bits_per_key", std::to_string(flags.bits_per_key)},
                   {"filter", flags.compare ? "compare" : flags.filter},
                   {"engines", Join(engines)},
                   {"cache_mb", std::to_string(flags.cache_mb)},
                   {"write_buffer_mb", std::to_string(flags.write_buffer_mb)},
                   {"value_min", std::to_string(flags.value_min)},
                   {"value_max", std::to_string(flags.value_max)},
                   {"miss_ratio", std::to_string(flags.miss_ratio)},
                   {"zipf", std::to_string(flags.zipf)},
                   {"seed", std::to_string(flags.seed)},
                   {"benchmarks", flags.benchmarks},
                   {"db", base}};

  std::printf(
      "kvbench: %llu entries, 7-char base62 codes, URLs %zu-%zu bytes, "
      "%s thread(s), block cache %zu MiB, write buffer %zu MiB, seed %llu\n"
      "mixed = %.0f%% never-issued codes + Zipf(%.2f) over real ones; "
      "benchmarks %s; engines %s; stores in %s\n\n",
      static_cast<unsigned long long>(flags.num), flags.value_min,
      flags.value_max, JoinInts(flags.threads).c_str(), flags.cache_mb,
      flags.write_buffer_mb, static_cast<unsigned long long>(flags.seed),
      flags.miss_ratio * 100, flags.zipf, flags.benchmarks.c_str(),
      Join(engines).c_str(), base.c_str());
  std::fflush(stdout);

  int rc = 0;
  std::vector<RunResult> runs;
  if (!phases.empty()) {
    const auto start = std::chrono::steady_clock::now();
    ShortCodeSet codes;
    codes.Issue(flags.num, flags.seed);
    const UrlGenerator urls(flags.seed, flags.value_min, flags.value_max);
    std::fprintf(stderr, "issued %llu codes in %.2f s\n",
                 static_cast<unsigned long long>(flags.num), Seconds(start));
    for (const std::string& e : engines) {
      for (double bpk : settings) {
        const std::string dir =
            base + "/" + e + (bpk > 0 ? "-filters" : "-nofilter");
        runs.push_back(RunOne(e, bpk, flags, phases, codes, urls, dir));
        if (!runs.back().error.empty()) {
          std::fprintf(stderr, "%s: %s\n", e.c_str(),
                       runs.back().error.c_str());
          rc = 1;
        }
        if (!flags.keep) std::filesystem::remove_all(dir, ec);
      }
    }
  }
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
    PrintThreadScaling(stdout, runs);
    PrintComparison(stdout, runs);
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
