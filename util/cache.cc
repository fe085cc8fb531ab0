// Sharded CLOCK cache; see cache.h.
//
// Each shard is an open-addressing index from key to entry, the entries
// linked into a circular list swept by a clock hand. A lookup only sets its
// entry's referenced bit (when clear), so it changes nothing a writer's
// sweep or another reader depends on, and lookups run concurrently under a
// lock that writes only a per-thread counter: on a hit, two reader threads
// write no cache line in common (no lock word, no list head, no
// neighbouring entries), where a mutex and a move-to-front list made every
// lookup pull the shard's lock and list lines from the core that last used
// them.
// The key's hash picks the shard (high bits) and the home slot in the
// shard's index (low bits).
#include "util/cache.h"

#include <algorithm>
#include <bit>
#include <mutex>
#include <thread>
#include <vector>

#include "util/sharded_counter.h"

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

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Readers get a counter each (threads are spread over this many by their
// ThisThreadIndex, as the statistics' shards are), on its own cache line.
constexpr size_t kReaderStripes = 8;

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
    std::atomic<uint32_t>& count =
        readers_[ThisThreadIndex() % kReaderStripes].count;
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
  struct alignas(kCacheLineSize) Counter {
    std::atomic<uint32_t> count{0};
  };
  Counter readers_[kReaderStripes];
  // Not a Mutex: clang's analysis cannot express a read side entered
  // without blocking, so the shard's fields carry no GUARDED_BY either.
  std::mutex mu_;
  std::atomic<bool> writer_{false};
};
}  // namespace

struct alignas(kCacheLineSize) Cache::Shard {
  // Allocated on its own (its address never changes), linked into the
  // shard's clock and named by one slot of the index.
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

  // One place of the index: the entry and its key's hash, or empty.
  struct Slot {
    uint64_t hash = 0;
    Entry* entry = nullptr;  // null: empty
  };

  Shard() {
    clock.prev = clock.next = &clock;
    hand = &clock;
  }
  ~Shard() {
    for (Entry* e = clock.next; e != &clock;) {
      Entry* next = e->next;
      delete e;
      e = next;
    }
  }
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  ShardLock lock;
  size_t capacity = 0;
  // Fields below change only under the lock's write side; lookups read them
  // under its read side.
  size_t usage = 0;
  // Sentinel of the circular list, which the hand skips. New and replaced
  // entries are linked just behind the hand, so the hand reaches them last.
  Entry clock;
  Entry* hand = nullptr;
  // The index: open addressing with linear probing over a power-of-two
  // array, at most 3/4 full. An entry sits at the slot its hash's low bits
  // pick or after it, with no empty slot in between. A hit reads the home
  // slot (four to a cache line, so a probe rarely leaves it) and then the
  // entry; a chained hash map read a bucket, the node before the entry's
  // and the entry's, one dependent cache miss after the other.
  std::unique_ptr<Slot[]> slots;
  size_t slot_mask = 0;  // slots' size - 1 (0 while there is no array)
  size_t count = 0;      // entries
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
  // The slot holding key (whose hash is h), or nullptr.
  Slot* FindSlot(const CacheKey& key, uint64_t h) const {
    if (slots == nullptr) return nullptr;
    for (size_t i = h & slot_mask;; i = (i + 1) & slot_mask) {
      Slot& slot = slots[i];
      if (slot.entry == nullptr) return nullptr;
      if (slot.hash == h && slot.entry->key == key) return &slot;
    }
  }
  // Read side: the entry for key (hash h), marked referenced, or nullptr.
  Entry* Find(const CacheKey& key, uint64_t h) {
    Slot* slot = FindSlot(key, h);
    if (slot == nullptr) return nullptr;
    Entry* e = slot->entry;
    // Only a clear bit is written: a hot entry's line stays shared between
    // the cores that read it.
    if (!e->referenced.load(std::memory_order_relaxed)) {
      e->referenced.store(true, std::memory_order_relaxed);
    }
    return e;
  }
  // Adds e, whose key (hash h) is not in the index.
  void IndexInsert(Entry* e, uint64_t h) {
    if (4 * (count + 1) > 3 * (slot_mask + 1)) {
      // Doubles the array (16 slots at first) and places every entry anew.
      const size_t size = slots == nullptr ? 16 : 2 * (slot_mask + 1);
      std::unique_ptr<Slot[]> old = std::move(slots);
      const size_t old_size = old == nullptr ? 0 : slot_mask + 1;
      slots = std::make_unique<Slot[]>(size);
      slot_mask = size - 1;
      for (size_t i = 0; i < old_size; i++) {
        if (old[i].entry != nullptr) Place(old[i]);
      }
    }
    Place(Slot{h, e});
    count++;
  }
  void Place(const Slot& slot) {
    size_t i = slot.hash & slot_mask;
    while (slots[i].entry != nullptr) i = (i + 1) & slot_mask;
    slots[i] = slot;
  }
  // Empties a slot, moving back the entries after it that may no longer
  // be reached past the hole (no tombstones, so probes stay short).
  void IndexErase(Slot* slot) {
    size_t hole = static_cast<size_t>(slot - slots.get());
    for (size_t i = (hole + 1) & slot_mask; slots[i].entry != nullptr;
         i = (i + 1) & slot_mask) {
      const size_t home = slots[i].hash & slot_mask;
      // The entry at i may fill the hole unless its home lies cyclically
      // in (hole, i]: then the hole is before its home.
      const bool home_after_hole =
          hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
      if (!home_after_hole) {
        slots[hole] = slots[i];
        hole = i;
      }
    }
    slots[hole] = Slot();
    count--;
  }
  void Erase(Entry* e) {
    if (hand == e) hand = e->next;
    usage -= e->charge;
    Unlink(e);
    IndexErase(FindSlot(e->key, HashCacheKey(e->key)));
    delete e;
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
}  // namespace

void Cache::Insert(const CacheKey& key, std::shared_ptr<const void> value,
                   size_t charge) {
  const uint64_t h = HashCacheKey(key);
  Shard& s = shards_[ShardIndex(h, shard_bits_)];
  std::shared_ptr<const void> old;  // released after the lock
  std::lock_guard<ShardLock> guard(s.lock);
  Shard::Slot* slot = s.FindSlot(key, h);
  if (charge > s.capacity) {
    if (slot != nullptr) s.Erase(slot->entry);
    return;
  }
  // A new entry, or the old one replaced in place.
  Shard::Entry* e;
  if (slot == nullptr) {
    e = new Shard::Entry;
    s.IndexInsert(e, h);
  } else {
    e = slot->entry;
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
    s.recent_miss_slots = std::bit_ceil(std::max<size_t>(64, 2 * s.count));
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
  const uint64_t h = HashCacheKey(key);
  Shard& s = shards_[ShardIndex(h, shard_bits_)];
  return WithReadLock(s.lock, [&]() -> std::shared_ptr<const void> {
    Shard::Entry* e = s.Find(key, h);
    return e != nullptr ? e->value : nullptr;
  });
}

std::shared_ptr<const void> Cache::Lookup(const CacheKey& key, bool* admit) {
  const uint64_t h = HashCacheKey(key);
  Shard& s = shards_[ShardIndex(h, shard_bits_)];
  return WithReadLock(s.lock, [&]() -> std::shared_ptr<const void> {
    if (Shard::Entry* e = s.Find(key, h)) return e->value;
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
  const uint64_t h = HashCacheKey(key);
  Shard& s = shards_[ShardIndex(h, shard_bits_)];
  std::lock_guard<ShardLock> guard(s.lock);
  if (Shard::Slot* slot = s.FindSlot(key, h)) s.Erase(slot->entry);
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
