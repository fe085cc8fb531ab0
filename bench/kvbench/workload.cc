// Workload: the phase loops. Only the engine call is timed; generating keys
// and verifying values happen outside the measured interval.
#include "bench/kvbench/workload.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace bloomkv::bench {
namespace {

const char* const kPhases[] = {"fill",      "readhit", "readmiss", "mixed",
                               "overwrite", "delete",  "scan"};

uint64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t PhaseSeed(uint64_t seed, const std::string& phase, int thread) {
  uint64_t h = seed;
  for (char c : phase) h = Mix64(h ^ static_cast<unsigned char>(c));
  return Mix64(h + static_cast<uint64_t>(thread) * 0x100000001b3ull);
}

}  // namespace

bool IsKnownPhase(const std::string& name) {
  return std::find(std::begin(kPhases), std::end(kPhases), name) !=
         std::end(kPhases);
}

bool IsWritePhase(const std::string& name) {
  return name == "fill" || name == "overwrite" || name == "delete";
}

// Aligned to a cache line: each client thread writes its state on every
// operation (latency histogram, counts), and two states sharing a line
// would slow the threads down in the benchmark itself.
struct alignas(64) Workload::ThreadState {
  explicit ThreadState(uint64_t seed) : rng(seed) {}
  Rng rng;
  std::unique_ptr<ZipfGenerator> zipf;
  Histogram latency_ns;
  uint64_t found = 0, not_found = 0, verify_errors = 0, user_bytes = 0;
  uint64_t cpu_ns = 0;
  Status status;
  std::string value;
  // Lookup phases: the probes (code, index of an issued code or -1), their
  // encoded keys, and what each lookup returned.
  struct Probe {
    uint64_t code;
    int64_t index;
    std::string key;
  };
  std::vector<Probe> probes;
  std::vector<std::string> values;
  std::vector<bool> founds;
  uint64_t passes = 0;
  uint64_t pass_found = 0;        // lookups that found their key, all passes
  uint64_t unstable_lookups = 0;  // found differed from the previous pass
};

bool IsLookupPhase(const std::string& name) {
  return name == "readhit" || name == "readmiss" || name == "mixed";
}

Workload::Workload(const WorkloadConfig& config, const ShortCodeSet& codes,
                   const UrlGenerator& urls)
    : config_(config), codes_(codes), urls_(urls), versions_(codes.size(), 0) {}

void Workload::PlanLookups(const std::string& phase, uint64_t ops,
                           ThreadState* st) {
  const uint64_t num = codes_.size();
  st->probes.reserve(ops);
  for (uint64_t n = 0; n < ops; n++) {
    uint64_t code;
    int64_t index = -1;
    const bool miss =
        phase == "readmiss" ||
        (phase == "mixed" && st->rng.NextDouble() < config_.miss_ratio);
    if (miss) {
      code = codes_.NeverIssued(&st->rng);
    } else {
      // Mixed traffic: codes are issued in random order, so rank k -> the
      // k-th code issued spreads the popular ones over the key space.
      const uint64_t i =
          phase == "mixed" ? st->zipf->Next() - 1 : st->rng.Uniform(num);
      code = codes_.code(i);
      index = static_cast<int64_t>(i);
    }
    st->probes.push_back({code, index, EncodeShortCode(code)});
  }
  st->values.assign(ops, std::string());
  st->founds.assign(ops, false);
}

void Workload::RunLookups(Engine* engine, ThreadState* st) {
  const uint64_t deadline =
      NowNanos() + static_cast<uint64_t>(config_.min_seconds * 1e9);
  do {
    const bool first = st->passes == 0;
    if (config_.batch > 1) {
      if (!RunBatches(engine, first, st)) return;
      st->passes++;
      continue;
    }
    for (size_t n = 0; n < st->probes.size(); n++) {
      bool found = false;
      const uint64_t start = NowNanos();
      Status s = engine->Get(st->probes[n].key, &st->values[n], &found);
      st->latency_ns.Add(NowNanos() - start);
      if (!s.ok()) {
        st->status = s;
        return;
      }
      if (!first && found != st->founds[n]) st->unstable_lookups++;
      st->founds[n] = found;
      st->pass_found += found;
    }
    st->passes++;
  } while (NowNanos() < deadline && !st->probes.empty());
}

bool Workload::RunBatches(Engine* engine, bool first, ThreadState* st) {
  std::vector<Slice> keys;
  std::vector<std::string> values;
  std::vector<bool> founds;
  const size_t batch = static_cast<size_t>(config_.batch);
  for (size_t begin = 0; begin < st->probes.size(); begin += batch) {
    const size_t end = std::min(st->probes.size(), begin + batch);
    keys.clear();
    for (size_t n = begin; n < end; n++) keys.emplace_back(st->probes[n].key);
    const uint64_t start = NowNanos();
    Status s = engine->MultiGet(keys, &values, &founds);
    const uint64_t per_key = (NowNanos() - start) / (end - begin);
    if (!s.ok()) {
      st->status = s;
      return false;
    }
    for (size_t n = begin; n < end; n++) {
      st->latency_ns.Add(per_key);
      const bool found = founds[n - begin];
      if (!first && found != st->founds[n]) st->unstable_lookups++;
      st->founds[n] = found;
      st->pass_found += found;
      st->values[n].swap(values[n - begin]);
    }
  }
  return true;
}

void Workload::VerifyLookups(ThreadState* st) {
  st->found += st->pass_found;
  st->not_found += st->passes * st->probes.size() - st->pass_found;
  st->verify_errors += st->unstable_lookups;
  for (size_t n = 0; n < st->probes.size(); n++) {
    const ThreadState::Probe& p = st->probes[n];
    const bool found = st->founds[n];
    const bool expected = p.index >= 0 && versions_[p.index] != kDeleted;
    if (found != expected) {
      st->verify_errors++;
    } else if (found &&
               st->values[n] != urls_.Url(p.code, versions_[p.index])) {
      st->verify_errors++;
    }
  }
  st->probes.clear();
  st->values.clear();
  st->founds.clear();
}

void Workload::RunThread(const std::string& phase, Engine* engine, int thread,
                         uint64_t ops, ThreadState* st) {
  const uint64_t cpu_start = ThreadCpuNanos();
  RunOps(phase, engine, thread, ops, st);
  st->cpu_ns = ThreadCpuNanos() - cpu_start;
}

void Workload::RunOps(const std::string& phase, Engine* engine, int thread,
                      uint64_t ops, ThreadState* st) {
  const uint64_t num = codes_.size();
  const uint64_t threads = static_cast<uint64_t>(config_.threads);
  // Writers of existing codes own the indices i with i % threads == thread,
  // so no two threads update one code and versions_ stays exact.
  auto owned_index = [&]() {
    const uint64_t slots = (num + threads - 1) / threads;
    while (true) {
      const uint64_t i = st->rng.Uniform(slots) * threads + thread;
      if (i < num) return i;
    }
  };
  auto timed = [&](auto&& op) {
    const uint64_t start = NowNanos();
    Status s = op();
    st->latency_ns.Add(NowNanos() - start);
    if (!s.ok() && st->status.ok()) st->status = s;
  };

  if (phase == "fill") {
    const uint64_t begin = num * thread / threads;
    const uint64_t end = num * (thread + 1) / threads;
    for (uint64_t i = begin; i < end && st->status.ok(); i++) {
      const std::string key = EncodeShortCode(codes_.code(i));
      const std::string url = urls_.Url(codes_.code(i), 0);
      versions_[i] = 0;
      st->user_bytes += key.size() + url.size();
      timed([&] { return engine->Put(key, url); });
    }
  } else if (phase == "overwrite") {
    for (uint64_t n = 0; n < ops && st->status.ok(); n++) {
      const uint64_t i = owned_index();
      const uint8_t v =
          versions_[i] == kDeleted
              ? 0
              : static_cast<uint8_t>((versions_[i] + 1) % kMaxVersion);
      versions_[i] = v;
      const std::string key = EncodeShortCode(codes_.code(i));
      const std::string url = urls_.Url(codes_.code(i), v);
      st->user_bytes += key.size() + url.size();
      timed([&] { return engine->Put(key, url); });
    }
  } else if (phase == "delete") {
    for (uint64_t n = 0; n < ops && st->status.ok(); n++) {
      const uint64_t i = owned_index();
      versions_[i] = kDeleted;
      const std::string key = EncodeShortCode(codes_.code(i));
      st->user_bytes += key.size();
      timed([&] { return engine->Delete(key); });
    }
  } else if (IsLookupPhase(phase)) {
    RunLookups(engine, st);
  } else if (phase == "scan") {
    for (uint64_t n = 0; n < ops && st->status.ok(); n++) {
      const std::string start =
          EncodeShortCode(st->rng.Uniform(kShortCodeSpace));
      uint64_t count = 0;
      timed([&] { return engine->Scan(start, config_.scan_length, &count); });
      st->found += count;
    }
  }
}

Status Workload::RunPhase(const std::string& name, Engine* engine,
                          PhaseResult* result, int threads) {
  if (!IsKnownPhase(name)) {
    return Status::InvalidArgument("unknown benchmark: ", name);
  }
  const uint64_t num = codes_.size();
  if (num == 0) return Status::InvalidArgument("no codes issued");
  uint64_t ops = config_.reads;
  if (name == "fill") ops = num;
  if (name == "overwrite") ops = config_.writes ? config_.writes : num;
  if (name == "delete") ops = config_.deletes ? config_.deletes : num / 10;
  if (name == "scan") ops = config_.scans;
  if (threads <= 0 || IsWritePhase(name)) threads = config_.threads;
  threads = std::max(1, threads);

  std::vector<std::unique_ptr<ThreadState>> states;
  for (int t = 0; t < threads; t++) {
    states.push_back(
        std::make_unique<ThreadState>(PhaseSeed(config_.seed, name, t)));
    if (name == "mixed") {
      states.back()->zipf = std::make_unique<ZipfGenerator>(
          num, config_.zipf, PhaseSeed(config_.seed, "zipf", t));
    }
  }

  // Thread t does its share; the first ops % threads do one more.
  auto share = [&](int t) {
    return ops / threads + (t < int(ops % threads) ? 1 : 0);
  };
  if (IsLookupPhase(name)) {
    for (int t = 0; t < threads; t++) {
      PlanLookups(name, share(t), states[t].get());
    }
  }

  *result = PhaseResult();
  result->name = name;
  result->threads = threads;
  result->before = engine->Counters();
  result->io_before = ReadProcIo();
  const uint64_t start = NowNanos();
  if (threads == 1) {
    RunThread(name, engine, 0, ops, states[0].get());
  } else {
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; t++) {
      workers.emplace_back([&, t, n = share(t)] {
        RunThread(name, engine, t, n, states[t].get());
      });
    }
    for (auto& w : workers) w.join();
  }
  result->seconds = (NowNanos() - start) / 1e9;
  result->io_after = ReadProcIo();
  result->after = engine->Counters();

  Status s;
  if (IsLookupPhase(name)) result->passes = UINT64_MAX;
  for (const auto& st : states) {
    if (IsLookupPhase(name)) {
      VerifyLookups(st.get());
      result->passes = std::min(result->passes, st->passes);
    }
    result->latency_ns.Merge(st->latency_ns);
    result->cpu_seconds += st->cpu_ns / 1e9;
    result->found += st->found;
    result->not_found += st->not_found;
    result->verify_errors += st->verify_errors;
    result->user_bytes += st->user_bytes;
    if (s.ok() && !st->status.ok()) s = st->status;
  }
  result->ops = result->latency_ns.count();
  user_bytes_written_ += result->user_bytes;
  return s;
}

}  // namespace bloomkv::bench
