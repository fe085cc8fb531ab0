// Workload: kvbench's phases (fill, readhit, readmiss, mixed, overwrite,
// delete, scan) run against one Engine, with per-operation latency and the
// engine's and the process's counters before and after each phase.
//
// Every value written is a pure function of (seed, code, version), and the
// workload remembers each code's version (or that it was deleted), so reads
// verify what they get: a wrong value, a lost key or a resurrected one is
// counted in PhaseResult::verify_errors.
//
// Thread-safety: a Workload drives one engine from --threads threads inside
// RunPhase; RunPhase itself must not be called concurrently.
#ifndef BLOOMKV_BENCH_KVBENCH_WORKLOAD_H_
#define BLOOMKV_BENCH_KVBENCH_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "bench/kvbench/engine.h"
#include "bench/kvbench/generators.h"
#include "bench/kvbench/histogram.h"
#include "bench/kvbench/process_stats.h"
#include "bloomkv/status.h"

namespace bloomkv::bench {

struct WorkloadConfig {
  uint64_t num = 1000000;    // codes issued and written by fill
  uint64_t reads = 1000000;  // probes drawn per read phase
  // A lookup phase repeats its probes until it has run this long, so that a
  // fast phase is not over before the figures mean anything.
  double min_seconds = 0;
  uint64_t writes = 0;         // overwrite operations; 0: num
  uint64_t deletes = 0;        // delete operations; 0: num / 10
  uint64_t scans = 10000;      // range scans
  uint64_t scan_length = 100;  // entries per scan
  int threads = 1;  // write phases; lookup phases may be given their own
  double miss_ratio = 0.5;  // mixed: share of never-issued codes
  double zipf = 0.99;       // mixed: popularity exponent of real codes
  uint64_t seed = 301;
  // Lookup phases: > 1 looks keys up this many at a time through
  // Engine::MultiGet; each key's latency is then its batch's over its size.
  uint64_t batch = 1;
};

struct PhaseResult {
  std::string name;
  uint64_t ops = 0;
  uint64_t passes = 1;  // lookup phases: times the probes were run (min)
  double seconds = 0;
  double cpu_seconds = 0;  // CPU time of the client threads, summed
  Histogram latency_ns;
  uint64_t found = 0;      // lookups that found their key
  uint64_t not_found = 0;  // lookups that did not
  uint64_t verify_errors = 0;
  int threads = 1;          // client threads that ran the phase
  uint64_t user_bytes = 0;  // key + value bytes written by the phase
  EngineCounters before, after;
  ProcIo io_before, io_after;
  // Lookups/s of every repetition of this phase (--repeat), in run order;
  // the other figures are those of the median repetition.
  std::vector<double> repetitions;

  double ops_per_sec() const { return seconds > 0 ? ops / seconds : 0; }
  double ops_per_cpu_sec() const {
    return cpu_seconds > 0 ? ops / cpu_seconds : 0;
  }
  bool is_read() const {
    return name == "readhit" || name == "readmiss" || name == "mixed";
  }
};

// The phases kvbench knows, in the order they may be listed.
bool IsKnownPhase(const std::string& name);
bool IsWritePhase(const std::string& name);

class Workload {
 public:
  // REQUIRES: codes and urls outlive the Workload; codes.size() ==
  // config.num.
  Workload(const WorkloadConfig& config, const ShortCodeSet& codes,
           const UrlGenerator& urls);
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // Runs phase `name` on engine with `threads` client threads (0: the
  // configured number). The engine must have been filled by this Workload's
  // "fill" for reads to be verified. Write phases always use the configured
  // number, which partitions the codes between writers.
  Status RunPhase(const std::string& name, Engine* engine, PhaseResult* result,
                  int threads = 0);

  uint64_t user_bytes_written() const { return user_bytes_written_; }

 private:
  // kDeleted marks a deleted code; other values are the URL version.
  static constexpr uint8_t kDeleted = 255;
  static constexpr uint8_t kMaxVersion = 250;
  // What one thread does for operation number i of a phase.
  struct ThreadState;

  void RunThread(const std::string& phase, Engine* engine, int thread,
                 uint64_t ops, ThreadState* state);
  void RunOps(const std::string& phase, Engine* engine, int thread,
              uint64_t ops, ThreadState* state);
  // Lookup phases run in three steps, so that the phase's wall time (and so
  // its lookups/s) measures the engine, not the benchmark: draw every probe
  // first, then time the lookups back to back (repeating them until
  // min_seconds have passed), then verify what the last pass found; an
  // earlier pass that found a different set counts as a verify error.
  void PlanLookups(const std::string& phase, uint64_t ops, ThreadState* st);
  void RunLookups(Engine* engine, ThreadState* st);
  // RunLookups with config_.batch > 1: one pass in batches; false on an
  // engine error (in st->status).
  bool RunBatches(Engine* engine, bool first, ThreadState* st);
  void VerifyLookups(ThreadState* st);

  const WorkloadConfig config_;
  const ShortCodeSet& codes_;
  const UrlGenerator& urls_;
  std::vector<uint8_t> versions_;  // per issued code
  uint64_t user_bytes_written_ = 0;
};

}  // namespace bloomkv::bench

#endif  // BLOOMKV_BENCH_KVBENCH_WORKLOAD_H_
