// Engine selection and the settling step shared by all engines.
#include "bench/kvbench/engine.h"

namespace bloomkv::bench {

Status SettleStore(Engine& engine) {
  Status s = engine.Flush();
  if (!s.ok()) return s;
  // Every engine is measured in its settled shape: fully compacted. An
  // engine without a full-range compaction is measured as flushed.
  s = engine.CompactAll();
  return s.IsNotSupported() ? Status::OK() : s;
}

std::vector<std::string> AvailableEngines() {
  std::vector<std::string> names = {"bloomkv"};
#ifdef BLOOMKV_BENCH_HAVE_LEVELDB
  names.push_back("leveldb");
#endif
#ifdef BLOOMKV_BENCH_HAVE_ROCKSDB
  names.push_back("rocksdb");
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
  return Status::NotSupported("engine not built into kvbench: ", name);
}

}  // namespace bloomkv::bench
