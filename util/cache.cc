// Sharded LRU cache; see cache.h.
//
// Each shard is a hash map from key to entry, the entries linked into an LRU
// list through the map nodes, guarded by the shard's own mutex, so readers
// of different blocks rarely contend.
// The key's hash picks the shard (high bits) and the map bucket (low bits).
#include "util/cache.h"

#include <algorithm>
#include <bit>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "util/thread_annotations.h"

namespace bloomkv {

namespace {
// Mixes both halves of the key so that neighbouring offsets and ids spread
// over shards and buckets (multiply-xorshift, as in splitmix64's finalizer).
uint64_t HashCacheKey(const CacheKey& key) {
  uint64_t h = key.id * 0x9e3779b97f4a7c15ull ^ key.offset;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ull;
  h ^= h >> 32;
  return h;
}

struct CacheKeyHash {
  size_t operator()(const CacheKey& key) const {
    return static_cast<size_t>(HashCacheKey(key));
  }
};

// The shard lock: held for a hash lookup and a list splice (a few hundred
// nanoseconds) by every reader that looks up a block. A waiter spins for a
// few microseconds before it sleeps: a futex sleep and wakeup costs tens of
// microseconds (more on a virtual machine, where waking an idle CPU exits
// to the hypervisor), far more than the section it waits for, and with two
// readers per core pair it made a lookup's 99th percentile 3x longer.
class ShardMutex {
 public:
  void lock() {
    for (int i = 0; i < kSpins; i++) {
      if (mu_.try_lock()) return;
      CpuRelax();
    }
    mu_.lock();
  }
  void unlock() { mu_.unlock(); }

 private:
  static constexpr int kSpins = 200;
  static void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  std::mutex mu_;
};
}  // namespace

// Aligned so that no two shards' locks and lists share a cache line.
struct alignas(64) Cache::Shard {
  // Lives inside its hash map node (whose address never changes), linked
  // into the shard's LRU list: a hit touches one node, not a map node plus a
  // separate list node.
  struct Entry {
    CacheKey key;
    std::shared_ptr<const void> value;
    size_t charge = 0;
    Entry* prev = nullptr;
    Entry* next = nullptr;
  };

  Shard() { lru.prev = lru.next = &lru; }

  ShardMutex mu;
  size_t capacity = 0;
  size_t usage GUARDED_BY(mu) = 0;
  // Sentinel of the circular LRU list: lru.next is the most recent entry,
  // lru.prev the least recent.
  Entry lru GUARDED_BY(mu);
  std::unordered_map<CacheKey, Entry, CacheKeyHash> index GUARDED_BY(mu);
  // Tags (hash | 1) of keys that missed while the shard was full and were
  // not admitted, one per slot, the newest winning: empty until the shard
  // first evicts, then sized to about twice the entries it held.
  std::vector<uint64_t> recent_misses GUARDED_BY(mu);

  static void Unlink(Entry* e) {
    e->prev->next = e->next;
    e->next->prev = e->prev;
  }
  void LinkFront(Entry* e) REQUIRES(mu) {
    e->next = lru.next;
    e->prev = &lru;
    lru.next->prev = e;
    lru.next = e;
  }
  // The entry for key, made the most recent, or nullptr.
  Entry* FindLocked(const CacheKey& key) REQUIRES(mu) {
    auto found = index.find(key);
    if (found == index.end()) return nullptr;
    Entry* e = &found->second;
    Unlink(e);
    LinkFront(e);
    return e;
  }
  void EraseLocked(Entry* e) REQUIRES(mu) {
    usage -= e->charge;
    Unlink(e);
    index.erase(e->key);  // destroys *e
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
size_t ShardIndex(uint64_t hash, int bits) {
  if (bits == 0) return 0;
  return static_cast<size_t>(hash >> (64 - bits));
}
size_t ShardIndex(const CacheKey& key, int bits) {
  return ShardIndex(HashCacheKey(key), bits);
}
}  // namespace

void Cache::Insert(const CacheKey& key, std::shared_ptr<const void> value,
                   size_t charge) {
  Shard& s = shards_[ShardIndex(key, shard_bits_)];
  std::lock_guard<ShardMutex> guard(s.mu);
  if (charge > s.capacity) {
    auto found = s.index.find(key);
    if (found != s.index.end()) s.EraseLocked(&found->second);
    return;
  }
  // One hash lookup: a new node, or the old entry replaced in place.
  auto [it, inserted] = s.index.try_emplace(key);
  Shard::Entry* e = &it->second;
  if (!inserted) {
    s.usage -= e->charge;
    Shard::Unlink(e);
  }
  e->key = key;
  e->value = std::move(value);
  e->charge = charge;
  s.LinkFront(e);
  s.usage += charge;
  if (s.usage > s.capacity && s.recent_misses.empty()) {
    s.recent_misses.assign(std::bit_ceil(std::max<size_t>(64, 2 * s.index.size())), 0);
  }
  while (s.usage > s.capacity) s.EraseLocked(s.lru.prev);
}

std::shared_ptr<const void> Cache::Lookup(const CacheKey& key) {
  Shard& s = shards_[ShardIndex(key, shard_bits_)];
  std::lock_guard<ShardMutex> guard(s.mu);
  Shard::Entry* e = s.FindLocked(key);
  return e != nullptr ? e->value : nullptr;
}

std::shared_ptr<const void> Cache::Lookup(const CacheKey& key, bool* admit) {
  const uint64_t h = HashCacheKey(key);
  Shard& s = shards_[ShardIndex(h, shard_bits_)];
  std::lock_guard<ShardMutex> guard(s.mu);
  if (Shard::Entry* e = s.FindLocked(key)) return e->value;
  if (s.recent_misses.empty() || s.usage < s.capacity - s.capacity / 8) {
    *admit = true;
    return nullptr;
  }
  // The low bits pick the slot; the shard came from the high bits.
  uint64_t& slot = s.recent_misses[h & (s.recent_misses.size() - 1)];
  const uint64_t tag = h | 1;
  *admit = slot == tag;
  slot = *admit ? 0 : tag;
  return nullptr;
}

void Cache::Erase(const CacheKey& key) {
  Shard& s = shards_[ShardIndex(key, shard_bits_)];
  std::lock_guard<ShardMutex> guard(s.mu);
  auto found = s.index.find(key);
  if (found != s.index.end()) s.EraseLocked(&found->second);
}

void Cache::EraseId(uint64_t id) {
  const size_t n = size_t{1} << shard_bits_;
  for (size_t i = 0; i < n; i++) {
    Shard& s = shards_[i];
    std::lock_guard<ShardMutex> guard(s.mu);
    for (Shard::Entry* e = s.lru.next; e != &s.lru;) {
      Shard::Entry* next = e->next;
      if (e->key.id == id) s.EraseLocked(e);
      e = next;
    }
  }
}

uint64_t Cache::NewId() {
  return next_id_.fetch_add(1, std::memory_order_relaxed);
}

size_t Cache::TotalCharge() const {
  size_t total = 0;
  const size_t n = size_t{1} << shard_bits_;
  for (size_t i = 0; i < n; i++) {
    std::lock_guard<ShardMutex> guard(shards_[i].mu);
    total += shards_[i].usage;
  }
  return total;
}

size_t Cache::capacity() const { return capacity_; }

}  // namespace bloomkv
