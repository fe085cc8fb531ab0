// Report: table, comparison, JSON and gnuplot output.
#include "bench/kvbench/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace bloomkv::bench {
namespace {

const char* const kReadPhases[] = {"readhit", "readmiss", "mixed"};

std::optional<double> PerOp(const std::optional<uint64_t>& before,
                            const std::optional<uint64_t>& after,
                            uint64_t ops) {
  if (!before || !after || ops == 0) return std::nullopt;
  return double(*after - *before) / ops;
}

std::string Fmt(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}
std::string Opt(const std::optional<double>& v, const char* fmt = "%.3f") {
  return v ? Fmt(fmt, *v) : "-";
}
std::string Mib(uint64_t bytes) { return Fmt("%.1f MiB", bytes / 1048576.0); }
std::string FilterLabel(const RunResult& r) { return r.FilterLabel(); }
std::string SeriesName(const RunResult& r) {
  if (!r.filters_on()) return r.engine + " no-filter";
  return r.engine + " filters" +
         (r.deep_filter.empty() && !r.minimize_filter_fp && r.max_open_files == 0 &&
                  r.meta_limit_kib == 0 && r.range_tombstones == 0 &&
                  r.mmap_reads.empty()
              ? ""
              : " " + FilterLabel(r));
}

// Builds the JSON report with nlohmann/json, in the order the caller emits
// keys and values; nested containers are opened and closed like a stream.
class Json {
 public:
  using Node = nlohmann::ordered_json;

  Json() { stack_.push_back(&root_); }
  void BeginObject() { stack_.push_back(Put(Node::object())); }
  void EndObject() { stack_.pop_back(); }
  void BeginArray() { stack_.push_back(Put(Node::array())); }
  void EndArray() { stack_.pop_back(); }
  void Key(const std::string& k) { key_ = k; }
  template <typename T>
  void Value(const T& v) {
    Put(Node(v));
  }
  void Null() { Put(nullptr); }
  template <typename T>
  void Field(const std::string& k, const T& v) {
    Key(k);
    Value(v);
  }
  template <typename T>
  void Field(const std::string& k, const std::optional<T>& v) {
    Key(k);
    if (v) {
      Value(*v);
    } else {
      Null();
    }
  }
  // Non-finite numbers come out as null.
  std::string str() const { return root_.dump(2); }

 private:
  // Adds v to the innermost open container (under the last Key() in an
  // object). Only that container grows while it is open, so the pointers
  // on the stack stay valid.
  Node* Put(Node v) {
    Node& top = *stack_.back();
    if (stack_.size() == 1 && top.is_null()) {
      top = std::move(v);
      return &top;
    }
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    Node& slot = top[key_];
    slot = std::move(v);
    return &slot;
  }

  Node root_;
  std::vector<Node*> stack_;
  std::string key_;
};

void CounterFields(Json* j, const EngineCounters& c) {
  j->BeginObject();
  j->Field("file_reads", c.file_reads);
  j->Field("file_read_bytes", c.file_read_bytes);
  j->Field("file_bytes_written", c.file_bytes_written);
  j->Field("gets", c.gets);
  j->Field("segments_consulted", c.segments_consulted);
  j->Field("filter_negatives", c.filter_negatives);
  j->Field("filter_false_positives", c.filter_false_positives);
  j->Field("data_blocks_read", c.data_blocks_read);
  j->Field("data_bytes_read", c.data_bytes_read);
  j->EndObject();
}

std::string ReadFirstLine(const char* path, const char* prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) return line;
      size_t start = line.find_first_not_of(" \t", colon + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  }
  return "";
}

// Bytes per million links stored (the entries fill wrote), where known.
std::optional<double> PerMillionLinks(const RunResult& r,
                                      const std::optional<uint64_t>& bytes) {
  const PhaseResult* fill = r.Phase("fill");
  if (!bytes || fill == nullptr || fill->ops == 0) return std::nullopt;
  return double(*bytes) * 1e6 / double(fill->ops);
}

std::string MibOpt(const std::optional<double>& bytes) {
  return bytes ? Mib(static_cast<uint64_t>(*bytes)) : "-";
}

// "410.2-432.9" Kops/s over the repetitions; "-" with a single one.
std::string RepetitionRange(const PhaseResult& p) {
  if (p.repetitions.size() < 2) return "-";
  const auto [lo, hi] =
      std::minmax_element(p.repetitions.begin(), p.repetitions.end());
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f-%.1f", *lo / 1000, *hi / 1000);
  return buf;
}

// The phase's name, with its thread count when it ran on several.
std::string PhaseLabel(const PhaseResult& p) {
  return p.threads > 1 ? p.name + "/" + std::to_string(p.threads) + "t"
                       : p.name;
}

}  // namespace

std::string RunResult::FilterLabel() const {
  if (!filters_on()) return "off";
  // "10 bpk": the library's default deep filter; "10 bloom": bloom at every
  // level; "10+fuse8": bloom above deep_filter_level, fuse8 from there.
  std::string label = deep_filter.empty()        ? Fmt("%g bpk", bits_per_key)
                      : deep_filter == "bloom" ? Fmt("%g bloom", bits_per_key)
                                               : Fmt("%g+", bits_per_key) + deep_filter;
  if ((deep_filter == "fuse8" || deep_filter == "fuse16") &&
      deep_filter_level != 1) {
    label += "@L" + std::to_string(deep_filter_level);
  }
  if (minimize_filter_fp) label += "/min";
  if (max_open_files != 0) label += " " + MaxOpenFilesLabel(max_open_files);
  if (meta_limit_kib > 0) label += " meta" + std::to_string(meta_limit_kib) + "K";
  if (range_tombstones > 0) label += " rt" + std::to_string(range_tombstones);
  if (!mmap_reads.empty()) label += " mmap-" + mmap_reads;
  return label;
}

const PhaseResult* RunResult::Phase(const std::string& name) const {
  for (const PhaseResult& p : phases) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string MaxOpenFilesLabel(int max_open_files) {
  return max_open_files == -1 ? "mofall"
                              : "mof" + std::to_string(max_open_files);
}

std::string FormatFilesPerLevel(const std::vector<int>& files) {
  size_t levels = files.size();
  while (levels > 0 && files[levels - 1] == 0) levels--;
  if (levels == 0) return "none";
  std::string s;
  for (size_t level = 0; level < levels; level++) {
    s += (level ? ", L" : "L") + std::to_string(level) + " " +
         std::to_string(files[level]);
  }
  return s;
}

PhaseFigures Figures(const PhaseResult& p) {
  PhaseFigures f;
  const uint64_t ops = p.ops;
  f.segments_consulted =
      PerOp(p.before.segments_consulted, p.after.segments_consulted, ops);
  f.filter_negatives =
      PerOp(p.before.filter_negatives, p.after.filter_negatives, ops);
  f.filter_false_positives = PerOp(p.before.filter_false_positives,
                                   p.after.filter_false_positives, ops);
  if (ops > 0) {
    f.env_reads = double(p.after.file_reads - p.before.file_reads) / ops;
    f.env_bytes =
        double(p.after.file_read_bytes - p.before.file_read_bytes) / ops;
  }
  // The engines' block counters cover point lookups only; scans (and
  // engines without such counters) are measured at the Env.
  const bool lookups = p.is_read();
  f.blocks_read =
      lookups ? PerOp(p.before.data_blocks_read, p.after.data_blocks_read, ops)
                    .value_or(f.env_reads)
              : f.env_reads;
  f.bytes_read =
      lookups ? PerOp(p.before.data_bytes_read, p.after.data_bytes_read, ops)
                    .value_or(f.env_bytes)
              : f.env_bytes;
  f.rchar = p.io_after.rchar - p.io_before.rchar;
  f.read_bytes = p.io_after.read_bytes - p.io_before.read_bytes;
  return f;
}

void PrintTable(FILE* out, const std::vector<RunResult>& runs) {
  std::fprintf(out,
               "%-8s %-12s %-11s %9s %9s %13s %8s %8s %9s %6s %6s %6s %7s "
               "%8s %7s\n",
               "engine", "filter", "phase", "ops", "Kops/s", "min-max",
               "p50 us", "p99 us", "p99.9 us", "seg/op", "neg/op", "fp/op",
               "blk/op", "B/op", "envR/op");
  for (const RunResult& r : runs) {
    for (const PhaseResult& p : r.phases) {
      const PhaseFigures f = Figures(p);
      const bool lookups = p.is_read();
      std::fprintf(
          out,
          "%-8s %-12s %-11s %9llu %9.1f %13s %8.2f %8.2f %9.2f %6s %6s %6s "
          "%7.3f %8.1f %7.3f\n",
          r.engine.c_str(), FilterLabel(r).c_str(), PhaseLabel(p).c_str(),
          static_cast<unsigned long long>(p.ops), p.ops_per_sec() / 1000,
          RepetitionRange(p).c_str(), p.latency_ns.Percentile(50) / 1000,
          p.latency_ns.Percentile(99) / 1000,
          p.latency_ns.Percentile(99.9) / 1000,
          Opt(lookups ? f.segments_consulted : std::nullopt, "%.2f").c_str(),
          Opt(lookups ? f.filter_negatives : std::nullopt, "%.2f").c_str(),
          Opt(lookups ? f.filter_false_positives : std::nullopt, "%.3f")
              .c_str(),
          f.blocks_read, f.bytes_read, f.env_reads);
    }
  }
  std::fprintf(out,
               "(Kops/s: median of the repetitions; min-max: their range)\n"
               "\n");
  for (const RunResult& r : runs) {
    std::fprintf(out, "%s, filter %s: %s\n", r.engine.c_str(),
                 FilterLabel(r).c_str(), r.description.c_str());
    if (!r.error.empty()) {
      std::fprintf(out, "  FAILED: %s\n", r.error.c_str());
    }
    std::fprintf(
        out,
        "  files per level when reads began (settle %s): %s; at the end: "
        "%s\n  open files in its directory %llu; per million links: filters "
        "%s, filters+index %s\n",
        r.settle_mode.c_str(), FormatFilesPerLevel(r.files_per_level).c_str(),
        FormatFilesPerLevel(r.files_per_level_end).c_str(),
        static_cast<unsigned long long>(r.open_fds),
        MibOpt(PerMillionLinks(r, r.filters.filter_bytes)).c_str(),
        MibOpt(PerMillionLinks(r, r.filters.filter_and_index_bytes)).c_str());
    std::fprintf(
        out,
        "  files %llu (level 0: %llu), filter memory %s (%s bits/key), FP "
        "measured %s vs theoretical %s\n",
        static_cast<unsigned long long>(r.filters.files),
        static_cast<unsigned long long>(r.filters.files_at_level0),
        r.filters.filter_bytes ? Mib(*r.filters.filter_bytes).c_str() : "-",
        Opt(r.filters.bits_per_key, "%.2f").c_str(),
        r.filters_on()
            ? Opt(r.filters.measured_fp_rate
                      ? std::optional<double>(*r.filters.measured_fp_rate * 100)
                      : std::nullopt,
                  "%.3f%%")
                  .c_str()
            : "n/a (no filter)",
        Opt(r.filters.theoretical_fp_rate
                ? std::optional<double>(*r.filters.theoretical_fp_rate * 100)
                : std::nullopt,
            "%.3f%%")
            .c_str());
    std::fprintf(out,
                 "  disk %s, write amplification %.2f (%s to files / %s "
                 "user), settle %.2f s, idle wait %.2f s, peak RSS %s "
                 "(process, during its phases; %s when opened), engine "
                 "memory %s\n",
                 Mib(r.disk_bytes).c_str(), r.write_amplification(),
                 Mib(r.file_bytes_written).c_str(),
                 Mib(r.user_bytes_written).c_str(), r.settle_seconds,
                 r.idle_wait_seconds,
                 Mib(r.peak_rss).c_str(), Mib(r.rss_at_start).c_str(),
                 r.engine_memory ? Mib(*r.engine_memory).c_str() : "-");
    for (const PhaseResult& p : r.phases) {
      if (!p.is_read() && p.name != "scan") continue;
      const PhaseFigures f = Figures(p);
      std::fprintf(
          out,
          "  %-11s found %llu, not found %llu, verify errors %llu; reads at "
          "the Env %.0f (%.1f MiB) vs engine blocks %.0f; rchar %.1f MiB, "
          "storage read_bytes %.1f MiB\n",
          PhaseLabel(p).c_str(), static_cast<unsigned long long>(p.found),
          static_cast<unsigned long long>(p.not_found),
          static_cast<unsigned long long>(p.verify_errors), f.env_reads * p.ops,
          f.env_bytes * p.ops / 1048576.0, f.blocks_read * p.ops,
          f.rchar / 1048576.0, f.read_bytes / 1048576.0);
    }
  }
}

void PrintThreadScaling(FILE* out, const std::vector<RunResult>& runs) {
  bool header = false;
  for (const RunResult& r : runs) {
    for (const char* name : kReadPhases) {
      // The last run of each thread count: with a phase listed twice, the
      // second one measures a warm cache.
      std::vector<const PhaseResult*> by_count;
      for (const PhaseResult& p : r.phases) {
        if (p.name != name) continue;
        auto same =
            std::find_if(by_count.begin(), by_count.end(),
                         [&](auto* q) { return q->threads == p.threads; });
        if (same != by_count.end()) {
          *same = &p;
        } else {
          by_count.push_back(&p);
        }
      }
      if (by_count.size() < 2) continue;
      if (!header) {
        std::fprintf(out,
                     "\nthread scaling (lookups/s and its ratio to the "
                     "first thread count; lookups per CPU second of the "
                     "client threads, which other load does not lower):\n");
        header = true;
      }
      std::fprintf(out, "  %-8s %-12s %-9s", r.engine.c_str(),
                   FilterLabel(r).c_str(), name);
      const double base = by_count.front()->ops_per_sec();
      for (const PhaseResult* p : by_count) {
        std::fprintf(out, "  %d thr %9.0f (x%.2f, %9.0f/cpu-s)", p->threads,
                     p->ops_per_sec(), base > 0 ? p->ops_per_sec() / base : 0,
                     p->ops_per_cpu_sec());
      }
      std::fprintf(out, "\n");
    }
  }
}

void PrintComparison(FILE* out, const std::vector<RunResult>& runs) {
  bool header = false;
  for (const RunResult& on : runs) {
    if (!on.filters_on()) continue;
    for (const RunResult& off : runs) {
      if (off.engine != on.engine || off.filters_on()) continue;
      if (!header) {
        std::fprintf(out,
                     "\nFilters on vs off (same data, same probes)\n"
                     "%-21s %-9s %11s %11s %6s %9s %9s %7s %10s %10s %10s\n",
                     "engine, filter", "phase", "lookups/s+", "lookups/s-", "x",
                     "blk/op+", "blk/op-", "x", "MiB read+", "MiB read-",
                     "avoided");
        header = true;
      }
      for (const char* name : kReadPhases) {
        const PhaseResult* a = on.Phase(name);
        const PhaseResult* b = off.Phase(name);
        if (a == nullptr || b == nullptr) continue;
        const PhaseFigures fa = Figures(*a), fb = Figures(*b);
        const double mib_a = fa.bytes_read * a->ops / 1048576.0;
        const double mib_b = fb.bytes_read * b->ops / 1048576.0;
        std::fprintf(
            out,
            "%-21s %-9s %11.0f %11.0f %6.2f %9.3f %9.3f %7s %10.1f %10.1f "
            "%10.1f\n",
            (on.engine + " " + FilterLabel(on)).c_str(), name, a->ops_per_sec(), b->ops_per_sec(),
            b->ops_per_sec() > 0 ? a->ops_per_sec() / b->ops_per_sec() : 0,
            fa.blocks_read, fb.blocks_read,
            fa.blocks_read > 0
                ? Fmt("%.1f", fb.blocks_read / fa.blocks_read).c_str()
                : "inf",
            mib_a, mib_b, mib_b - mib_a);
      }
    }
  }
  if (header) {
    std::fprintf(out,
                 "(+ filters on, - off; lookups/s x = on/off, blocks x = "
                 "off/on; avoided = MiB not read thanks to filters)\n");
  }
}

void PrintPeerSummary(FILE* out, const std::vector<RunResult>& runs) {
  // bloomkv with filters on, and each peer's fastest configuration per
  // phase and thread count.
  const RunResult* ours = nullptr;
  for (const RunResult& r : runs) {
    if (r.engine == "bloomkv" && r.filters_on() && r.error.empty()) {
      ours = &r;
      break;
    }
  }
  if (ours == nullptr) return;
  bool header = false;
  for (const PhaseResult& p : ours->phases) {
    double best = 0;
    std::string best_engine;
    for (const RunResult& r : runs) {
      if (r.engine == "bloomkv" || !r.error.empty()) continue;
      for (const PhaseResult& q : r.phases) {
        if (q.name == p.name && q.threads == p.threads &&
            q.ops_per_sec() > best) {
          best = q.ops_per_sec();
          best_engine = r.engine;
        }
      }
    }
    if (best <= 0) continue;
    if (!header) {
      std::fprintf(out, "\nbloomkv %s against the faster peer:\n",
                   FilterLabel(*ours).c_str());
      header = true;
    }
    std::fprintf(out, "  %-9s %d thr  bloomkv %10.0f/s  %-8s %10.0f/s  %5.2fx\n",
                 p.name.c_str(), p.threads, p.ops_per_sec(),
                 best_engine.c_str(), best, p.ops_per_sec() / best);
  }
}

void PrintSweep(FILE* out, const std::vector<SweepPoint>& sweep) {
  if (sweep.empty()) return;
  std::fprintf(out,
               "\nFalse-positive rate by bits per key (bloomkv, absent "
               "keys)\n%6s %9s %9s %9s %12s %12s %12s\n",
               "bpk", "keys", "probes", "segments", "filter KiB", "measured %",
               "theory %");
  for (const SweepPoint& p : sweep) {
    std::fprintf(out, "%6g %9llu %9llu %9llu %12.1f %12.4f %12.4f\n",
                 p.bits_per_key, static_cast<unsigned long long>(p.keys),
                 static_cast<unsigned long long>(p.probes),
                 static_cast<unsigned long long>(p.segments),
                 p.filter_bytes / 1024.0, p.measured_fp_rate * 100,
                 p.theoretical_fp_rate * 100);
  }
}

Status WriteJson(const std::string& path, const ReportContext& context,
                 const std::vector<RunResult>& runs,
                 const std::vector<SweepPoint>& sweep) {
  Json j;
  j.BeginObject();
  j.Field("benchmark", "kvbench");
  j.Field("command_line", context.command_line);
  {
    char date[64];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    j.Field("date", date);
  }
  j.Key("machine");
  j.BeginObject();
  j.Field("cpus", static_cast<uint64_t>(std::thread::hardware_concurrency()));
  j.Field("cpu_model", ReadFirstLine("/proc/cpuinfo", "model name"));
  j.Field("mem_total", ReadFirstLine("/proc/meminfo", "MemTotal"));
  j.EndObject();
  j.Key("process");
  j.BeginObject();
  j.Field("peak_rss", context.peak_rss);
  j.Field("open_fds_after_reads", context.open_fds);
  j.EndObject();
  j.Key("flags");
  j.BeginObject();
  for (const auto& [k, v] : context.flags) j.Field(k, v);
  j.EndObject();

  j.Key("runs");
  j.BeginArray();
  for (const RunResult& r : runs) {
    j.BeginObject();
    j.Field("engine", r.engine);
    j.Field("filters", r.filters_on());
    j.Field("bits_per_key", r.bits_per_key);
    j.Field("deep_filter", r.deep_filter);
    j.Field("deep_filter_level", r.deep_filter_level);
    j.Field("filter_allocation",
            r.minimize_filter_fp ? "minimize" : "uniform");
    j.Field("filter_label", FilterLabel(r));
    j.Field("max_open_files", r.max_open_files);
    j.Field("meta_limit_kib", r.meta_limit_kib);
    j.Field("range_tombstones", r.range_tombstones);
    j.Field("range_tombstones_kept", r.range_tombstones_kept);
    j.Field("mmap_reads", r.mmap_reads);
    j.Field("description", r.description);
    j.Field("error", r.error);
    j.Field("settle_mode", r.settle_mode);
    j.Field("settle_seconds", r.settle_seconds);
    j.Field("idle_wait_seconds", r.idle_wait_seconds);
    j.Field("files_per_level", r.files_per_level);
    j.Field("files_per_level_end", r.files_per_level_end);
    j.Field("open_fds", r.open_fds);
    j.Field("disk_bytes", r.disk_bytes);
    j.Field("rss_at_start", r.rss_at_start);
    j.Field("peak_rss", r.peak_rss);
    j.Field("engine_memory", r.engine_memory);
    j.Field("user_bytes_written", r.user_bytes_written);
    j.Field("file_bytes_written", r.file_bytes_written);
    j.Field("write_amplification", r.write_amplification());
    j.Key("filter_summary");
    j.BeginObject();
    j.Field("files", r.filters.files);
    j.Field("files_at_level0", r.filters.files_at_level0);
    j.Field("filter_bytes", r.filters.filter_bytes);
    j.Field("filter_and_index_bytes", r.filters.filter_and_index_bytes);
    j.Field("filter_bytes_per_million_links",
            PerMillionLinks(r, r.filters.filter_bytes));
    j.Field("filter_and_index_bytes_per_million_links",
            PerMillionLinks(r, r.filters.filter_and_index_bytes));
    j.Field("bits_per_key", r.filters.bits_per_key);
    j.Field("measured_fp_rate", r.filters.measured_fp_rate);
    j.Field("theoretical_fp_rate", r.filters.theoretical_fp_rate);
    j.Field("levels", r.filters.levels);
    j.EndObject();
    j.Key("phases");
    j.BeginArray();
    for (const PhaseResult& p : r.phases) {
      const PhaseFigures f = Figures(p);
      j.BeginObject();
      j.Field("name", p.name);
      j.Field("threads", p.threads);
      j.Field("ops", p.ops);
      j.Field("seconds", p.seconds);
      j.Field("cpu_seconds", p.cpu_seconds);
      j.Field("passes", p.passes);
      j.Field("ops_per_sec", p.ops_per_sec());
      if (!p.repetitions.empty()) {
        j.Field("ops_per_sec_median", p.ops_per_sec());
        j.Field("ops_per_sec_min",
                *std::min_element(p.repetitions.begin(), p.repetitions.end()));
        j.Field("ops_per_sec_max",
                *std::max_element(p.repetitions.begin(), p.repetitions.end()));
        j.Field("repetitions", p.repetitions);
      }
      j.Key("latency_us");
      j.BeginObject();
      j.Field("mean", p.latency_ns.mean() / 1000);
      j.Field("p50", p.latency_ns.Percentile(50) / 1000);
      j.Field("p99", p.latency_ns.Percentile(99) / 1000);
      j.Field("p99.9", p.latency_ns.Percentile(99.9) / 1000);
      j.Field("max", p.latency_ns.max() / 1000.0);
      j.EndObject();
      // Operations of 1 ms or more: for writes, the stalls.
      const Histogram::Tail slow = p.latency_ns.TailAtLeast(1000000);
      j.Key("slow_ops");
      j.BeginObject();
      j.Field("threshold_us", uint64_t{1000});
      j.Field("count", slow.count);
      j.Field("seconds", slow.sum / 1e9);
      j.EndObject();
      j.Field("found", p.found);
      j.Field("not_found", p.not_found);
      j.Field("verify_errors", p.verify_errors);
      j.Field("user_bytes", p.user_bytes);
      j.Key("per_op");
      j.BeginObject();
      j.Field("segments_consulted", f.segments_consulted);
      j.Field("filter_negatives", f.filter_negatives);
      j.Field("filter_false_positives", f.filter_false_positives);
      j.Field("data_blocks_read", f.blocks_read);
      j.Field("bytes_read", f.bytes_read);
      j.Field("env_reads", f.env_reads);
      j.Field("env_read_bytes", f.env_bytes);
      j.EndObject();
      j.Key("proc_io");
      j.BeginObject();
      j.Field("rchar", f.rchar);
      j.Field("read_bytes", f.read_bytes);
      j.Field("compared", "rchar vs env_read_bytes * ops");
      j.EndObject();
      j.Key("counters_before");
      CounterFields(&j, p.before);
      j.Key("counters_after");
      CounterFields(&j, p.after);
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();

  j.Key("fp_sweep");
  j.BeginArray();
  for (const SweepPoint& p : sweep) {
    j.BeginObject();
    j.Field("bits_per_key", p.bits_per_key);
    j.Field("keys", p.keys);
    j.Field("probes", p.probes);
    j.Field("segments", p.segments);
    j.Field("filter_bytes", p.filter_bytes);
    j.Field("measured_fp_rate", p.measured_fp_rate);
    j.Field("theoretical_fp_rate", p.theoretical_fp_rate);
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();

  std::ofstream f(path);
  f << j.str() << "\n";
  f.close();
  if (!f) return Status::IOError("cannot write ", path);
  return Status::OK();
}

Status WritePlotFiles(const std::string& dir,
                      const std::vector<RunResult>& runs,
                      const std::vector<SweepPoint>& sweep) {
  // Clustered bars: one row per read phase, one column per run.
  std::ostringstream lookups, blocks;
  lookups << "phase";
  blocks << "phase";
  for (const RunResult& r : runs) {
    lookups << "\t\"" << SeriesName(r) << "\"";
    blocks << "\t\"" << SeriesName(r) << "\"";
  }
  lookups << "\n";
  blocks << "\n";
  int rows = 0;
  for (const char* name : kReadPhases) {
    bool any = false;
    for (const RunResult& r : runs) any = any || r.Phase(name) != nullptr;
    if (!any) continue;
    rows++;
    lookups << name;
    blocks << name;
    for (const RunResult& r : runs) {
      const PhaseResult* p = r.Phase(name);
      lookups << "\t" << (p ? p->ops_per_sec() : 0);
      blocks << "\t" << (p ? Figures(*p).blocks_read : 0);
    }
    lookups << "\n";
    blocks << "\n";
  }
  std::ostringstream fp;
  fp << "bits_per_key\tmeasured\ttheoretical\n";
  for (const SweepPoint& p : sweep) {
    fp << p.bits_per_key << "\t" << p.measured_fp_rate * 100 << "\t"
       << p.theoretical_fp_rate * 100 << "\n";
  }

  std::ostringstream gp;
  gp << "# Generated by kvbench: gnuplot kvbench.gp (in this directory)\n"
        "set terminal png size 1000,560\n"
        "set grid ytics\n"
        "set key outside right top\n";
  if (rows > 0 && !runs.empty()) {
    const size_t last = runs.size() + 1;
    gp << "set style data histogram\n"
          "set style histogram clustered gap 1\n"
          "set style fill solid 0.8 border -1\n"
          "set output 'lookups.png'\n"
          "set title 'Lookups per second (hit, miss, mixed traffic)'\n"
          "set ylabel 'lookups/s'\n"
          "set yrange [0:*]\n"
          "plot for [i=2:"
       << last
       << "] 'lookups.dat' using i:xtic(1) title columnheader(i)\n"
          "set output 'blocks.png'\n"
          "set title 'Data blocks read per lookup (log scale)'\n"
          "set ylabel 'blocks read / lookup'\n"
          "set logscale y\n"
          "set yrange [0.001:*]\n"
          "plot for [i=2:"
       << last << "] 'blocks.dat' using i:xtic(1) title columnheader(i)\n";
  }
  if (!sweep.empty()) {
    gp << "set style data linespoints\n"
          "set output 'fp_rate.png'\n"
          "set title 'False-positive rate vs bits per key (bloomkv)'\n"
          "set xlabel 'bits per key'\n"
          "set ylabel 'false positives (%)'\n"
          "set logscale y\n"
          "set yrange [*:*]\n"
          "plot 'fp.dat' using 1:3 title 'theoretical' with lines lw 2, "
          "'fp.dat' using 1:2 title 'measured' with points pt 7 ps 1.5\n";
  }
  const std::pair<const char*, std::string> files[] = {
      {"lookups.dat", lookups.str()},
      {"blocks.dat", blocks.str()},
      {"fp.dat", fp.str()},
      {"kvbench.gp", gp.str()}};
  for (const auto& [name, text] : files) {
    const std::string path = dir + "/" + name;
    std::ofstream f(path);
    f << text;
    f.close();
    if (!f) return Status::IOError("cannot write ", path);
  }
  return Status::OK();
}

}  // namespace bloomkv::bench
