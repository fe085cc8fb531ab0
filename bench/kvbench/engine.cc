// Engine selection and the settling step shared by all engines.
#include "bench/kvbench/engine.h"

#include <chrono>
#include <thread>

#include "bench/kvbench/process_stats.h"

namespace bloomkv::bench {

Status SettleStore(Engine& engine, SettleMode mode) {
  Status s = engine.Flush();
  if (!s.ok()) return s;
  if (mode == SettleMode::kCompact) {
    s = engine.CompactAll();
    if (!s.ok() && !s.IsNotSupported()) return s;
  }
  return engine.WaitForCompactions(kSettleTimeoutSeconds);
}

Status PollUntil(const std::function<bool()>& settled, double timeout_seconds,
                 const std::string& what) {
  constexpr auto kPollInterval = std::chrono::milliseconds(20);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(timeout_seconds));
  while (!settled()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::IOError(what, ": background work did not finish in time");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return Status::OK();
}

Status WaitUntilProcessIdle(double timeout_seconds, double* waited_seconds) {
  constexpr auto kWindow = std::chrono::milliseconds(100);
  constexpr uint64_t kIdleCpuNanos = 5'000'000;  // 5% of the window
  const auto start = std::chrono::steady_clock::now();
  Status s = PollUntil(
      [&] {
        const uint64_t cpu = ProcessCpuNanos();
        std::this_thread::sleep_for(kWindow);
        return ProcessCpuNanos() - cpu < kIdleCpuNanos;
      },
      timeout_seconds, "process");
  *waited_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return s;
}

std::vector<std::string> AvailableEngines() {
  std::vector<std::string> names = {"bloomkv"};
#ifdef BLOOMKV_BENCH_HAVE_LEVELDB
  names.push_back("leveldb");
#endif
#ifdef BLOOMKV_BENCH_HAVE_ROCKSDB
  names.push_back("rocksdb");
#endif
#ifdef BLOOMKV_BENCH_HAVE_LMDB
  names.push_back("lmdb");
#endif
  return names;
}

Status OpenEngine(const std::string& name, const EngineOptions& options,
                  const std::string& path, std::unique_ptr<Engine>* engine) {
  if (name == "bloomkv") return OpenBloomkvEngine(options, path, engine);
#ifdef BLOOMKV_BENCH_HAVE_LEVELDB
  if (name == "leveldb") return OpenLevelDbEngine(options, path, engine);
#endif
#ifdef BLOOMKV_BENCH_HAVE_ROCKSDB
  if (name == "rocksdb") return OpenRocksDbEngine(options, path, engine);
#endif
#ifdef BLOOMKV_BENCH_HAVE_LMDB
  if (name == "lmdb") return OpenLmdbEngine(options, path, engine);
#endif
  return Status::NotSupported("engine not built into kvbench: ", name);
}

Status Engine::DeleteRange(const Slice&, const Slice&) {
  return Status::NotSupported(Name(), "no range deletion in kvbench");
}

Status Engine::MultiGet(const std::vector<Slice>& keys,
                        std::vector<std::string>* values,
                        std::vector<bool>* found) {
  values->resize(keys.size());
  found->resize(keys.size());
  for (size_t i = 0; i < keys.size(); i++) {
    bool f = false;
    Status s = Get(keys[i], &(*values)[i], &f);
    if (!s.ok()) return s;
    (*found)[i] = f;
  }
  return Status::OK();
}

}  // namespace bloomkv::bench
