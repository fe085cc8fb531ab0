// Filter allocation; see filter_allocation.h.
#include "db/filter_allocation.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/filter_cost.h"
#include "util/filter_registry.h"

namespace bloomkv {
namespace {

bool IsBuiltin(const FilterPolicy& policy) {
  return BuiltinFilterKindOf(policy.Name()) != BuiltinFilterKind::kOther;
}

// A bloom-like filter of any bits per key, as one run would build it: the
// lower convex hull of its steps (the blocked layout's rate is nearly
// convex in bits per key, so the hull drops few of them), fewest bits
// first.
struct Curve {
  std::shared_ptr<const FilterPolicy> policy;  // to be resized
  std::vector<double> bits;                    // resize to these
  std::vector<FilterCost> cost;                // what that builds and gives

  // The point minimising fp + price * bits per key (price > 0: the price of
  // one bit per key of this run in false positives).
  size_t Best(double price) const {
    // Slopes rise along a convex hull: the first point whose step to the
    // next one gains less than it costs.
    size_t lo = 0, hi = cost.size() - 1;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      const double gain = cost[mid].fp_rate - cost[mid + 1].fp_rate;
      const double spend =
          price * (cost[mid + 1].bits_per_key - cost[mid].bits_per_key);
      if (gain > spend) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
};

int NumSteps() {
  return static_cast<int>(std::lround(
      (kMaxFilterBitsPerKey - kMinFilterBitsPerKey) / kFilterBitsStep));
}
double StepBits(int i) { return kMinFilterBitsPerKey + i * kFilterBitsStep; }

// The bloom filter's rate at every step, computed once: a plan builds a
// curve per run, and every flush and compaction plans under the DB mutex.
const std::vector<double>& BloomStepRates() {
  static const std::vector<double> rates = [] {
    std::vector<double> r;
    for (int i = 0; i <= NumSteps(); i++) r.push_back(BloomFpRate(StepBits(i)));
    return r;
  }();
  return rates;
}

Curve MakeCurve(const std::shared_ptr<const FilterPolicy>& policy,
                uint64_t segment_entries) {
  Curve c;
  c.policy = policy;
  const bool bloom =
      BuiltinFilterKindOf(policy->Name()) == BuiltinFilterKind::kBlockedBloom;
  const std::vector<double>* bloom_rates = bloom ? &BloomStepRates() : nullptr;
  for (int i = 0; i <= NumSteps(); i++) {
    const double bits = StepBits(i);
    FilterCost cost =
        bloom ? FilterCost{BloomBitsPerKey(bits, segment_entries),
                           (*bloom_rates)[static_cast<size_t>(i)]}
              : ExpectedResizedFilterCost(*policy, bits, segment_entries);
    // Andrew's monotone chain, lower hull (bits only grow; a point with no
    // lower rate than the last one is never worth its bits).
    if (!c.cost.empty() && cost.fp_rate >= c.cost.back().fp_rate) continue;
    while (c.cost.size() >= 2) {
      const FilterCost& p = c.cost[c.cost.size() - 2];
      const FilterCost& q = c.cost.back();
      const double cross =
          (q.bits_per_key - p.bits_per_key) * (cost.fp_rate - p.fp_rate) -
          (q.fp_rate - p.fp_rate) * (cost.bits_per_key - p.bits_per_key);
      if (cross > 0) break;  // q stays below the chord from p to cost
      c.cost.pop_back();
      c.bits.pop_back();
    }
    c.cost.push_back(cost);
    c.bits.push_back(bits);
  }
  return c;
}

bool CanResize(const std::shared_ptr<const FilterPolicy>& policy) {
  return policy != nullptr && policy->Resized(policy->BitsPerKey()) != nullptr;
}

// How a run may be filtered (see filter_allocation.h): fixed, any point of
// a curve, one of the two fuse widths or (with a fallback curve) any point
// of that.
struct Menu {
  enum Type { kFixed, kCurve, kFuse } type = kFixed;
  FilterChoice fixed;                                   // kFixed
  std::shared_ptr<const FilterPolicy> fuse[2];          // kFuse: 8, 16 bits
  FilterCost fuse_cost[2];                              // kFuse
  bool has_curve = false;                               // kCurve, kFuse
  Curve curve;
};

Menu MenuFor(const FilterRun& run,
             const std::shared_ptr<const FilterPolicy>& write) {
  const uint64_t seg =
      run.segment_entries == 0 ? run.entries : run.segment_entries;
  Menu m;
  if (run.policy == nullptr) return m;  // fixed: no filter
  if (CanResize(run.policy)) {
    m.type = Menu::kCurve;
    m.has_curve = true;
    m.curve = MakeCurve(run.policy, seg);
    return m;
  }
  const BuiltinFilterKind kind = BuiltinFilterKindOf(run.policy->Name());
  if (kind == BuiltinFilterKind::kBinaryFuse8 ||
      kind == BuiltinFilterKind::kBinaryFuse16) {
    m.type = Menu::kFuse;
    for (int w = 0; w < 2; w++) {
      const int bits = w == 0 ? 8 : 16;
      const bool configured =
          (kind == BuiltinFilterKind::kBinaryFuse8) == (bits == 8);
      m.fuse[w] = configured ? run.policy : BuiltinBinaryFusePolicy(bits);
      m.fuse_cost[w] = ExpectedFilterCost(*m.fuse[w], seg);
    }
    if (CanResize(write)) {
      m.has_curve = true;
      m.curve = MakeCurve(write, seg);
    }
    return m;
  }
  const FilterCost cost = ExpectedFilterCost(*run.policy, seg);
  m.fixed = FilterChoice{run.policy, cost.bits_per_key, cost.fp_rate};
  return m;
}

FilterChoice ConfiguredChoice(const FilterRun& run) {
  FilterChoice c;
  c.policy = run.policy;
  if (run.policy != nullptr) {
    const FilterCost cost = ExpectedFilterCost(
        *run.policy,
        run.segment_entries == 0 ? run.entries : run.segment_entries);
    c.bits_per_key = cost.bits_per_key;
    c.fp_rate = cost.fp_rate;
  }
  return c;
}

double EntriesOf(const FilterRun& run) {
  return static_cast<double>(run.entries);
}

// The points of the curve runs `on_curve` (indices into runs) with the
// fewest false positives in sum that take at most `budget` bits: the least
// price of a bit whose choices fit, found by bisection on its logarithm.
// False if even the fewest bits do not fit. Sets pick[r] and *fp_sum.
bool SolveCurves(const std::vector<FilterRun>& runs,
                 const std::vector<Menu>& menus,
                 const std::vector<size_t>& on_curve, double budget,
                 std::vector<size_t>* pick, double* fp_sum) {
  auto plan_at = [&](double lambda) {
    double memory = 0, fp = 0;
    for (size_t r : on_curve) {
      const Curve& c = menus[r].curve;
      const double n = EntriesOf(runs[r]);
      (*pick)[r] = lambda == 0 ? c.cost.size() - 1 : c.Best(lambda * n);
      memory += n * c.cost[(*pick)[r]].bits_per_key;
      fp += c.cost[(*pick)[r]].fp_rate;
    }
    *fp_sum = fp;
    return memory;
  };
  if (plan_at(0.0) <= budget) return true;
  // The rates lie in [1e-15, 1] and a run's memory below 10^13 bits, so the
  // price of one bit lies well inside this range.
  double lo = std::log(1e-40), hi = std::log(1e6);
  if (plan_at(std::exp(hi)) > budget) return false;
  // 48 halvings of a range of 106 in ln(lambda): lambda to 4e-13.
  for (int i = 0; i < 48; i++) {
    const double mid = 0.5 * (lo + hi);
    if (plan_at(std::exp(mid)) > budget) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  plan_at(std::exp(hi));
  return true;
}

}  // namespace

std::shared_ptr<const FilterPolicy> DeepFilterPolicy(const Options& options) {
  if (options.deep_filter_policy != nullptr) return options.deep_filter_policy;
  const auto& a = options.filter_policy;
  if (a != nullptr &&
      BuiltinFilterKindOf(a->Name()) == BuiltinFilterKind::kBlockedBloom &&
      a->BitsPerKey() >= kAutoDeepFuseMinBitsPerKey &&
      a->BitsPerKey() <= kAutoDeepFuseMaxBitsPerKey) {
    return BuiltinBinaryFusePolicy(8);
  }
  return nullptr;
}

Status ValidateFilterOptions(const Options& options) {
  if (options.deep_filter_level < 1 ||
      options.deep_filter_level > kNumLevels - 1) {
    return Status::InvalidArgument(
        "deep_filter_level must be in [1, " + std::to_string(kNumLevels - 1) +
        "], got " + std::to_string(options.deep_filter_level));
  }
  const auto& a = options.filter_policy;
  const auto b = DeepFilterPolicy(options);
  if (a != nullptr && b != nullptr && !IsBuiltin(*a) && !IsBuiltin(*b) &&
      std::string(a->Name()) != b->Name()) {
    return Status::InvalidArgument(
        "filter_policy (" + std::string(a->Name()) + ") and deep_filter_policy (" +
        b->Name() +
        ") are both not built in: segment readers interpret one such policy "
        "besides the built-in ones, so the other's filters would be ignored");
  }
  return Status::OK();
}

std::shared_ptr<const FilterPolicy> ConfiguredFilterPolicy(
    const Options& options, int level) {
  if (level >= options.deep_filter_level) {
    if (auto deep = DeepFilterPolicy(options)) return deep;
  }
  return options.filter_policy;
}

std::shared_ptr<const FilterPolicy> ReaderFilterPolicy(const Options& options) {
  const auto& a = options.filter_policy;
  const auto b = DeepFilterPolicy(options);
  if (a == nullptr) return b;
  if (b != nullptr && IsBuiltin(*a) && !IsBuiltin(*b)) return b;
  return a;
}

std::vector<FilterChoice> PlanFilters(
    const std::vector<FilterRun>& runs,
    const std::shared_ptr<const FilterPolicy>& write_policy) {
  std::vector<FilterChoice> configured;
  double budget = 0, configured_fp = 0;
  for (const FilterRun& run : runs) {
    configured.push_back(ConfiguredChoice(run));
    budget += EntriesOf(run) * configured.back().bits_per_key;
    if (run.entries > 0) configured_fp += configured.back().fp_rate;
  }
  // The configured plan fits by definition; rounding must not say otherwise.
  budget *= 1.0 + 1e-9;

  std::vector<Menu> menus;
  double fixed_memory = 0, fixed_fp = 0;
  std::vector<size_t> curves, fuses;
  for (size_t r = 0; r < runs.size(); r++) {
    menus.push_back(MenuFor(runs[r], write_policy));
    if (runs[r].entries == 0) continue;
    switch (menus[r].type) {
      case Menu::kFixed:
        fixed_memory += EntriesOf(runs[r]) * menus[r].fixed.bits_per_key;
        fixed_fp += menus[r].fixed.fp_rate;
        break;
      case Menu::kCurve:
        curves.push_back(r);
        break;
      case Menu::kFuse:
        fuses.push_back(r);
        break;
    }
  }

  // Every fuse run takes one of its widths or joins the curve runs: each
  // such assignment (at most 3^6, one fuse run per level) leaves the curve
  // runs a budget, solved near-exactly since their curves are convex. The
  // discrete widths are what a single price of a bit would get wrong: a
  // large level's step from 8 to 16 bits is worth taking or not as a whole.
  const size_t classes = 3;  // 8 bits, 16 bits, the fallback curve
  size_t assignments = 1;
  for (size_t i = 0; i < fuses.size(); i++) assignments *= classes;
  std::vector<size_t> pick(runs.size(), 0), best_pick;
  std::vector<int> cls(fuses.size(), 0), best_cls;
  double best_fp = configured_fp;
  for (size_t a = 0; a < assignments; a++) {
    size_t code = a;
    double memory = fixed_memory, fp = fixed_fp;
    std::vector<size_t> on_curve = curves;
    bool usable = true;
    for (size_t i = 0; i < fuses.size(); i++, code /= classes) {
      const size_t r = fuses[i];
      cls[i] = static_cast<int>(code % classes);
      if (cls[i] == 2) {
        if (!menus[r].has_curve) usable = false;
        on_curve.push_back(r);
        continue;
      }
      memory += EntriesOf(runs[r]) * menus[r].fuse_cost[cls[i]].bits_per_key;
      fp += menus[r].fuse_cost[cls[i]].fp_rate;
    }
    if (!usable || memory > budget || fp >= best_fp) continue;
    double curve_fp = 0;
    if (!SolveCurves(runs, menus, on_curve, budget - memory, &pick,
                     &curve_fp)) {
      continue;
    }
    if (fp + curve_fp < best_fp) {
      best_fp = fp + curve_fp;
      best_pick = pick;
      best_cls = cls;
    }
  }
  // Nothing beat the configured plan (in theory; e.g. a fuse-only tree, or
  // runs configured off the steps): that is the plan.
  if (best_pick.empty()) return configured;

  // Each run's selection: a point of its curve (>= 0) or a fuse width.
  constexpr long kFuse8 = -1, kFuse16 = -2;
  std::vector<long> sel(runs.size(), 0);
  std::vector<size_t> choosing = curves;
  for (size_t r : curves) sel[r] = static_cast<long>(best_pick[r]);
  for (size_t i = 0; i < fuses.size(); i++) {
    const size_t r = fuses[i];
    choosing.push_back(r);
    sel[r] = best_cls[i] == 2   ? static_cast<long>(best_pick[r])
             : best_cls[i] == 0 ? kFuse8
                                : kFuse16;
  }
  auto cost_of = [&](size_t r, long s) -> const FilterCost& {
    return s >= 0 ? menus[r].curve.cost[static_cast<size_t>(s)]
                  : menus[r].fuse_cost[s == kFuse8 ? 0 : 1];
  };
  double memory = fixed_memory;
  for (size_t r : choosing) {
    memory += EntriesOf(runs[r]) * cost_of(r, sel[r]).bits_per_key;
  }
  // The price of a bit leaves up to one step of some run unspent: spend it
  // on the move of one run that gains most and fits, while there is one.
  for (int round = 0; round < 1000; round++) {
    double best_gain = 0, best_extra = 0;
    size_t best_run = 0;
    long best_sel = 0;
    for (size_t r : choosing) {
      const FilterCost& now = cost_of(r, sel[r]);
      const double n = EntriesOf(runs[r]);
      auto consider = [&](long s) {
        const FilterCost& c = cost_of(r, s);
        const double extra = n * (c.bits_per_key - now.bits_per_key);
        const double gain = now.fp_rate - c.fp_rate;
        if (gain > best_gain && memory + extra <= budget) {
          best_gain = gain;
          best_extra = extra;
          best_run = r;
          best_sel = s;
        }
      };
      if (menus[r].has_curve) {
        // Along the hull the rate falls as the bits grow: the most bits
        // that fit gain most.
        const std::vector<FilterCost>& points = menus[r].curve.cost;
        const double most = now.bits_per_key + (budget - memory) / n;
        const auto fits = std::upper_bound(
            points.begin(), points.end(), most,
            [](double bits, const FilterCost& c) {
              return bits < c.bits_per_key;
            });
        if (fits != points.begin()) {
          consider(static_cast<long>(fits - points.begin()) - 1);
        }
      }
      if (menus[r].type == Menu::kFuse) {
        consider(kFuse8);
        consider(kFuse16);
      }
    }
    if (best_gain == 0) break;
    sel[best_run] = best_sel;
    memory += best_extra;
  }

  std::vector<FilterChoice> plan = configured;
  for (size_t r : choosing) {
    const FilterCost& cost = cost_of(r, sel[r]);
    const Menu& m = menus[r];
    plan[r].policy = sel[r] >= 0
                         ? m.curve.policy->Resized(
                               m.curve.bits[static_cast<size_t>(sel[r])])
                         : m.fuse[sel[r] == kFuse8 ? 0 : 1];
    plan[r].bits_per_key = cost.bits_per_key;
    plan[r].fp_rate = cost.fp_rate;
  }
  return plan;
}

std::shared_ptr<const FilterPolicy> FilterPolicyForOutput(
    const Options& options, const Version& v, const Compaction* c,
    uint64_t new_entries) {
  const int output_level = c == nullptr ? 0 : c->output_level();
  auto configured = ConfiguredFilterPolicy(options, output_level);
  if (options.filter_allocation != FilterAllocation::kMinimizeFalsePositives ||
      (options.filter_policy == nullptr &&
       DeepFilterPolicy(options) == nullptr)) {
    return configured;
  }
  auto is_input = [c](const FileMetaData* f) {
    if (c == nullptr) return false;
    for (int which = 0; which < 2; which++) {
      for (const auto& in : c->inputs(which)) {
        if (in.get() == f) return true;
      }
    }
    return false;
  };
  if (c != nullptr) {
    new_entries = 0;
    for (int which = 0; which < 2; which++) {
      for (const auto& f : c->inputs(which)) new_entries += f->num_entries;
    }
  }
  // The output is planned for at least one entry: a run without entries
  // would keep its configured filter.
  new_entries = std::max<uint64_t>(new_entries, 1);

  // Entries per level once the output is in place; level 0 run by run.
  std::vector<FilterRun> runs;
  uint64_t level_entries[kNumLevels] = {};
  uint64_t total_entries = 0, total_bytes = 0;
  for (int level = 0; level < kNumLevels; level++) {
    for (const auto& f : v.files(level)) {
      total_entries += f->num_entries;
      total_bytes += f->file_size;
      if (is_input(f.get())) continue;
      if (level == 0) {
        runs.push_back(FilterRun{f->num_entries, f->num_entries,
                                 ConfiguredFilterPolicy(options, 0)});
      }
      level_entries[level] += f->num_entries;
    }
  }
  size_t output_run = 0;
  if (output_level == 0) {
    output_run = runs.size();
    runs.push_back(FilterRun{new_entries, new_entries, configured});
  } else {
    level_entries[output_level] += new_entries;
  }
  int deepest = 0;
  for (int level = 1; level < kNumLevels; level++) {
    if (level_entries[level] > 0) deepest = level;
  }
  const double entries_per_byte = total_bytes == 0
                                      ? 0.0
                                      : static_cast<double>(total_entries) /
                                            static_cast<double>(total_bytes);
  const LevelTargets targets(options, v);
  for (int level = 1; level <= deepest; level++) {
    uint64_t entries = level_entries[level];
    if (level < deepest) {
      entries = std::max<uint64_t>(
          entries, static_cast<uint64_t>(
                       entries_per_byte *
                       static_cast<double>(targets.MaxBytes(level))));
    }
    // A segment of the level holds at most an output file's worth.
    const auto per_segment = static_cast<uint64_t>(
        entries_per_byte *
        static_cast<double>(targets.OutputFileSize(level)));
    const uint64_t segment_entries = std::max<uint64_t>(
        1, per_segment == 0 ? entries : std::min(entries, per_segment));
    if (level == output_level) output_run = runs.size();
    runs.push_back(FilterRun{entries, segment_entries,
                             ConfiguredFilterPolicy(options, level)});
  }
  return PlanFilters(runs, options.filter_policy)[output_run].policy;
}

}  // namespace bloomkv
