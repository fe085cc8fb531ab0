// Sharded LRU cache; see cache.h.
//
// Each shard is an intrusive LRU list plus a hash map from key to list node,
// guarded by the shard's own mutex, so readers of different blocks rarely
// contend.
#include "util/cache.h"

#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "util/hash.h"
#include "util/thread_annotations.h"

namespace bloomkv {

struct Cache::Shard {
  struct Entry {
    std::string key;
    std::shared_ptr<const void> value;
    size_t charge;
  };

  std::mutex mu;
  size_t capacity = 0;
  size_t usage GUARDED_BY(mu) = 0;
  std::list<Entry> lru GUARDED_BY(mu);  // front = most recent
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index
      GUARDED_BY(mu);  // views into lru keys

  void EraseLocked(std::list<Entry>::iterator it) REQUIRES(mu) {
    usage -= it->charge;
    index.erase(std::string_view(it->key));
    lru.erase(it);
  }
};

namespace {
// More shards than this only wastes memory, and a shift by 64 or more would
// be undefined.
constexpr int kMaxShardBits = 16;
}  // namespace

Cache::Cache(size_t capacity, int num_shard_bits)
    : capacity_(capacity),
      shard_bits_(num_shard_bits < 0               ? 0
                  : num_shard_bits > kMaxShardBits ? kMaxShardBits
                                                   : num_shard_bits),
      shards_(new Shard[size_t{1} << shard_bits_]) {
  const size_t n = size_t{1} << shard_bits_;
  // Rounds up without computing capacity + n - 1, which wraps for huge
  // capacities (e.g. SIZE_MAX meaning "unbounded") and would leave every
  // shard with capacity 0.
  const size_t per_shard = capacity / n + (capacity % n != 0 ? 1 : 0);
  for (size_t i = 0; i < n; i++) shards_[i].capacity = per_shard;
}

Cache::~Cache() = default;

namespace {
size_t ShardIndex(const Slice& key, int bits) {
  if (bits == 0) return 0;
  return static_cast<size_t>(KeyHash(key) >> (64 - bits));
}
}  // namespace

void Cache::Insert(const Slice& key, std::shared_ptr<const void> value,
                   size_t charge) {
  Shard& s = shards_[ShardIndex(key, shard_bits_)];
  std::lock_guard<std::mutex> guard(s.mu);
  auto found = s.index.find(key.view());
  if (found != s.index.end()) s.EraseLocked(found->second);
  if (charge > s.capacity) return;
  s.lru.push_front(Shard::Entry{key.ToString(), std::move(value), charge});
  s.index.emplace(std::string_view(s.lru.front().key), s.lru.begin());
  s.usage += charge;
  while (s.usage > s.capacity) s.EraseLocked(std::prev(s.lru.end()));
}

std::shared_ptr<const void> Cache::Lookup(const Slice& key) {
  Shard& s = shards_[ShardIndex(key, shard_bits_)];
  std::lock_guard<std::mutex> guard(s.mu);
  auto found = s.index.find(key.view());
  if (found == s.index.end()) return nullptr;
  s.lru.splice(s.lru.begin(), s.lru, found->second);
  return found->second->value;
}

void Cache::Erase(const Slice& key) {
  Shard& s = shards_[ShardIndex(key, shard_bits_)];
  std::lock_guard<std::mutex> guard(s.mu);
  auto found = s.index.find(key.view());
  if (found != s.index.end()) s.EraseLocked(found->second);
}

uint64_t Cache::NewId() {
  return next_id_.fetch_add(1, std::memory_order_relaxed);
}

size_t Cache::TotalCharge() const {
  size_t total = 0;
  const size_t n = size_t{1} << shard_bits_;
  for (size_t i = 0; i < n; i++) {
    std::lock_guard<std::mutex> guard(shards_[i].mu);
    total += shards_[i].usage;
  }
  return total;
}

size_t Cache::capacity() const { return capacity_; }

}  // namespace bloomkv
