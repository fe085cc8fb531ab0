// Report: what kvbench measured, as a table on stdout, a JSON document and
// gnuplot charts.
//
// Thread-safety: plain functions over finished results; single-threaded.
#ifndef BLOOMKV_BENCH_KVBENCH_REPORT_H_
#define BLOOMKV_BENCH_KVBENCH_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/kvbench/engine.h"
#include "bench/kvbench/workload.h"
#include "bloomkv/status.h"

namespace bloomkv::bench {

// One engine in one filter setting: a fresh store, filled and measured.
struct RunResult {
  std::string engine;
  double bits_per_key = 0;  // 0: filters off (unless deep_filter is fuse)
  // bloomkv's per-level filters: the deep levels' kind as asked for ("" the
  // library's default, "bloom", "fuse8", "fuse16") from deep_filter_level
  // down, and whether filter memory was planned across levels
  // (FilterAllocation::kMinimizeFalsePositives).
  std::string deep_filter;
  int deep_filter_level = 1;
  bool minimize_filter_fp = false;
  int max_open_files = 0;  // the engine's option (0: its default)
  uint64_t meta_limit_kib = 0;  // bloomkv's filter_and_index_memory_limit
  // Range deletions kept in the store while it is read (bloomkv only): each
  // over no key, between two issued codes.
  uint64_t range_tombstones = 0;
  // bloomkv's reads, "on" (mapped) or "off" (pread), when --mmap_reads
  // listed more than one way; "" otherwise (the description says which).
  std::string mmap_reads;
  // As the engine reported them once they were flushed, before the reads.
  uint64_t range_tombstones_kept = 0;
  std::string description;
  std::vector<PhaseResult> phases;
  double settle_seconds = 0;  // flush + compaction before reads
  // Waited, before this store's timed phases, for the process to be idle
  // (background work of this or another store still running).
  double idle_wait_seconds = 0;
  std::string settle_mode;    // "background" or "compact"
  // Live files per level (level 0 first) in the shape reads were measured
  // in, i.e. after the first settle.
  std::vector<int> files_per_level;
  // The same after the last phase: an engine may reshape its store while
  // reads run (LevelDB compacts files that lookups probe in vain).
  std::vector<int> files_per_level_end;
  FilterSummary filters;      // after the last phase
  uint64_t disk_bytes = 0;    // files in the store's directory at the end
  uint64_t rss_at_start = 0;  // process RSS when the run began
  // VmHWM of the whole process, reset before each of this run's phases, at
  // its highest: other engines' stores are open at the same time, so it
  // includes their resident memory as well.
  uint64_t peak_rss = 0;
  uint64_t open_fds = 0;  // descriptors of files in its directory, at the end
  std::optional<uint64_t> engine_memory;
  uint64_t user_bytes_written = 0;  // keys + values given to the engine
  uint64_t file_bytes_written = 0;  // bytes appended to its files
  std::string error;                // empty when the run succeeded

  bool filters_on() const {
    return bits_per_key > 0 || deep_filter == "fuse8" || deep_filter == "fuse16";
  }
  // "10 bpk", "10+fuse8" (bloom at 10 bits above the deep level, fuse8
  // below), "off"; "/min" when memory was planned across levels.
  std::string FilterLabel() const;
  double write_amplification() const {
    return user_bytes_written ? double(file_bytes_written) / user_bytes_written
                              : 0;
  }
  const PhaseResult* Phase(const std::string& name) const;
};

// One bits-per-key setting of --fp_sweep.
struct SweepPoint {
  double bits_per_key = 0;
  uint64_t keys = 0;
  uint64_t probes = 0;  // absent-key lookups
  uint64_t segments = 0;
  uint64_t filter_bytes = 0;
  double measured_fp_rate = 0;
  double theoretical_fp_rate = 0;
};

// The invocation, for the JSON header and the table caption.
struct ReportContext {
  std::vector<std::pair<std::string, std::string>> flags;  // name, value
  std::string command_line;
  uint64_t peak_rss = 0;  // VmHWM of the process since start, at the end
  uint64_t open_fds = 0;  // all of the process's descriptors, at the end
};

// Figures derived from a phase's counter deltas, per operation.
struct PhaseFigures {
  std::optional<double> segments_consulted;
  std::optional<double> filter_negatives;
  std::optional<double> filter_false_positives;
  double blocks_read = 0;  // engine's data blocks, else Env reads
  double bytes_read = 0;   // engine's data bytes, else Env bytes
  double env_reads = 0;
  double env_bytes = 0;
  uint64_t rchar = 0;  // whole phase
  uint64_t read_bytes = 0;
};
PhaseFigures Figures(const PhaseResult& p);

// "L0 3, L1 5, L2 41" (trailing empty levels left out; "none" if empty).
std::string FormatFilesPerLevel(const std::vector<int>& files);

// A store's --max_open_files in labels: "mof100", or "mofall" for -1.
std::string MaxOpenFilesLabel(int max_open_files);

void PrintTable(FILE* out, const std::vector<RunResult>& runs);
// Lookups/s per thread count, per lookup phase that ran with several.
void PrintThreadScaling(FILE* out, const std::vector<RunResult>& runs);
// Filters on vs off, per engine that ran both.
void PrintComparison(FILE* out, const std::vector<RunResult>& runs);
// bloomkv (filters on) ÷ the fastest other engine, per phase and thread
// count: the summary the README quotes.
void PrintPeerSummary(FILE* out, const std::vector<RunResult>& runs);
void PrintSweep(FILE* out, const std::vector<SweepPoint>& sweep);

Status WriteJson(const std::string& path, const ReportContext& context,
                 const std::vector<RunResult>& runs,
                 const std::vector<SweepPoint>& sweep);
// Writes the data files and kvbench.gp into dir; `gnuplot kvbench.gp` run
// in dir draws lookups.png, blocks.png and (with a sweep) fp_rate.png.
Status WritePlotFiles(const std::string& dir,
                      const std::vector<RunResult>& runs,
                      const std::vector<SweepPoint>& sweep);

}  // namespace bloomkv::bench

#endif  // BLOOMKV_BENCH_KVBENCH_REPORT_H_
