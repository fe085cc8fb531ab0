// Sharded CLOCK cache; see cache.h.
//
// Each shard is a hash map from key to entry, the entries linked into a
// circular list swept by a clock hand. A lookup only sets its entry's
// referenced bit (when clear), so it changes nothing a writer's sweep or
// another reader depends on, and lookups run concurrently under a lock that
// writes only a per-thread counter: on a hit, two reader threads write no
// cache line in common (no lock word, no list head, no neighbouring
// entries), where a mutex and a move-to-front list made every lookup pull
// the shard's lock and list lines from the core that last used them.
// The key's hash picks the shard (high bits) and the map bucket (low bits).
#include "util/cache.h"

#include <algorithm>
#include <bit>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

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

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Readers get a counter each (threads are spread over this many), on its
// own cache line.
constexpr int kReaderStripes = 8;

// This thread's reader counter, the same in every shard.
int ReaderStripe() {
  static std::atomic<int> next{0};
  thread_local const int stripe =
      next.fetch_add(1, std::memory_order_relaxed) % kReaderStripes;
  return stripe;
}

// A readers-writer lock whose readers write nothing another thread's reader
// writes (a "big reader" lock): a reader increments its thread's counter,
// then checks that no writer is in; a writer takes the mutex, raises its
// flag, and waits until every counter is zero. Both sides use sequentially
// consistent operations, so either the reader sees the flag (and retries
// under the mutex) or the writer sees the reader's count (and waits).
// Readers never wait inside their section, so a writer waits at most for a
// hash lookup, unless a reader thread is descheduled mid-lookup: then it
// yields its CPU.
class ShardLock {
 public:
  // Takes the read side without blocking and returns the counter to pass
  // to UnlockShared, or nullptr while a writer is in (then the caller takes
  // the write side instead).
  std::atomic<uint32_t>* TryLockShared() {
    std::atomic<uint32_t>& count = readers_[ReaderStripe()].count;
    count.fetch_add(1);
    if (!writer_.load()) return &count;
    count.fetch_sub(1, std::memory_order_release);
    return nullptr;
  }
  static void UnlockShared(std::atomic<uint32_t>* count) {
    count->fetch_sub(1, std::memory_order_release);
  }

  // Excludes readers and other writers.
  void lock() {
    mu_.lock();
    writer_.store(true);
    for (const Counter& r : readers_) {
      for (int spins = 0; r.count.load() != 0; spins++) {
        if (spins < 100) {
          CpuRelax();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() {
    writer_.store(false, std::memory_order_release);
    mu_.unlock();
  }

 private:
  struct alignas(64) Counter {
    std::atomic<uint32_t> count{0};
  };
  Counter readers_[kReaderStripes];
  std::mutex mu_;
  std::atomic<bool> writer_{false};
};
}  // namespace

struct alignas(64) Cache::Shard {
  // Lives inside its hash map node (whose address never changes), linked
  // into the shard's clock: a hit touches one node, not a map node plus a
  // separate list node.
  struct Entry {
    CacheKey key;
    std::shared_ptr<const void> value;
    size_t charge = 0;
    // Set by lookups, cleared by the hand: an entry the hand finds clear
    // was not read since the hand last passed it, and is evicted.
    std::atomic<bool> referenced{true};
    Entry* prev = nullptr;
    Entry* next = nullptr;
  };

  Shard() {
    clock.prev = clock.next = &clock;
    hand = &clock;
  }

  ShardLock lock;
  size_t capacity = 0;
  // Fields below change only under the lock's write side; lookups read them
  // under its read side.
  size_t usage = 0;
  // Sentinel of the circular list, which the hand skips. New and replaced
  // entries are linked just behind the hand, so the hand reaches them last.
  Entry clock;
  Entry* hand = nullptr;
  std::unordered_map<CacheKey, Entry, CacheKeyHash> index;
  // Tags (hash | 1) of keys that missed while the shard was full and were
  // not admitted, one per slot, the newest winning: empty until the shard
  // first evicts, then sized to about twice the entries it held. Lookups
  // write the slots concurrently: two misses racing on one slot at worst
  // admit or refuse one key more.
  std::unique_ptr<std::atomic<uint64_t>[]> recent_misses;
  size_t recent_miss_slots = 0;

  static void Unlink(Entry* e) {
    e->prev->next = e->next;
    e->next->prev = e->prev;
  }
  void LinkBehindHand(Entry* e) {
    e->next = hand;
    e->prev = hand->prev;
    hand->prev->next = e;
    hand->prev = e;
  }
  // Read side: the entry for key, marked referenced, or nullptr.
  Entry* Find(const CacheKey& key) {
    auto found = index.find(key);
    if (found == index.end()) return nullptr;
    Entry* e = &found->second;
    // Only a clear bit is written: a hot entry's line stays shared between
    // the cores that read it.
    if (!e->referenced.load(std::memory_order_relaxed)) {
      e->referenced.store(true, std::memory_order_relaxed);
    }
    return e;
  }
  void Erase(Entry* e) {
    if (hand == e) hand = e->next;
    usage -= e->charge;
    Unlink(e);
    index.erase(e->key);  // destroys *e
  }
  // Sweeps until usage fits: a referenced entry loses its bit and is
  // passed, the first one found clear is evicted. Ends within two turns.
  void EvictToCapacity() {
    while (usage > capacity) {
      Entry* e = hand;
      hand = e->next;
      if (e == &clock) continue;
      if (e->referenced.load(std::memory_order_relaxed)) {
        e->referenced.store(false, std::memory_order_relaxed);
      } else {
        Erase(e);
      }
    }
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
  std::shared_ptr<const void> old;  // released after the lock
  std::lock_guard<ShardLock> guard(s.lock);
  if (charge > s.capacity) {
    auto found = s.index.find(key);
    if (found != s.index.end()) s.Erase(&found->second);
    return;
  }
  // One hash lookup: a new node, or the old entry replaced in place.
  auto [it, inserted] = s.index.try_emplace(key);
  Shard::Entry* e = &it->second;
  if (!inserted) {
    s.usage -= e->charge;
    if (s.hand == e) s.hand = e->next;
    Shard::Unlink(e);
    old = std::move(e->value);
  }
  e->key = key;
  e->value = std::move(value);
  e->charge = charge;
  e->referenced.store(true, std::memory_order_relaxed);
  s.LinkBehindHand(e);
  s.usage += charge;
  if (s.usage > s.capacity && s.recent_miss_slots == 0) {
    s.recent_miss_slots =
        std::bit_ceil(std::max<size_t>(64, 2 * s.index.size()));
    s.recent_misses.reset(new std::atomic<uint64_t>[s.recent_miss_slots]());
  }
  s.EvictToCapacity();
}

namespace {
// Runs f (which reads the shard) under the read side of its lock, or under
// the write side while a writer is in.
template <typename F>
auto WithReadLock(ShardLock& lock, F&& f) {
  if (std::atomic<uint32_t>* count = lock.TryLockShared()) {
    auto result = f();
    ShardLock::UnlockShared(count);
    return result;
  }
  std::lock_guard<ShardLock> guard(lock);
  return f();
}
}  // namespace

std::shared_ptr<const void> Cache::Lookup(const CacheKey& key) {
  Shard& s = shards_[ShardIndex(key, shard_bits_)];
  return WithReadLock(s.lock, [&]() -> std::shared_ptr<const void> {
    Shard::Entry* e = s.Find(key);
    return e != nullptr ? e->value : nullptr;
  });
}

std::shared_ptr<const void> Cache::Lookup(const CacheKey& key, bool* admit) {
  const uint64_t h = HashCacheKey(key);
  Shard& s = shards_[ShardIndex(h, shard_bits_)];
  return WithReadLock(s.lock, [&]() -> std::shared_ptr<const void> {
    if (Shard::Entry* e = s.Find(key)) return e->value;
    if (s.recent_miss_slots == 0 || s.usage < s.capacity - s.capacity / 8) {
      *admit = true;
      return nullptr;
    }
    // The low bits pick the slot; the shard came from the high bits.
    std::atomic<uint64_t>& slot =
        s.recent_misses[h & (s.recent_miss_slots - 1)];
    const uint64_t tag = h | 1;
    *admit = slot.load(std::memory_order_relaxed) == tag;
    slot.store(*admit ? 0 : tag, std::memory_order_relaxed);
    return nullptr;
  });
}

void Cache::Erase(const CacheKey& key) {
  Shard& s = shards_[ShardIndex(key, shard_bits_)];
  std::lock_guard<ShardLock> guard(s.lock);
  auto found = s.index.find(key);
  if (found != s.index.end()) s.Erase(&found->second);
}

void Cache::EraseId(uint64_t id) {
  const size_t n = size_t{1} << shard_bits_;
  for (size_t i = 0; i < n; i++) {
    Shard& s = shards_[i];
    std::lock_guard<ShardLock> guard(s.lock);
    for (Shard::Entry* e = s.clock.next; e != &s.clock;) {
      Shard::Entry* next = e->next;
      if (e->key.id == id) s.Erase(e);
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
    Shard& s = shards_[i];
    std::lock_guard<ShardLock> guard(s.lock);
    total += s.usage;
  }
  return total;
}

size_t Cache::capacity() const { return capacity_; }

}  // namespace bloomkv
