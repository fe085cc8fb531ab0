// Sharded CLOCK cache; see cache.h.
//
// Each shard is an open-addressing index from key to entry, the entries
// linked into a circular list swept by a clock hand, under one Mutex. A
// lookup only sets its entry's referenced bit (when clear): no list splice,
// so a hit writes the lock word and nothing else of the shard.
//
// Why a plain mutex: lookups used to run under a readers-writer lock whose
// readers each wrote only their own thread's counter. Measured against this
// mutex (1M links, block cache holding the store, `kvbench --cache_mb=256
// --threads=1,2 --warmup --repeat=3`, 2-core VM, two rounds of each binary
// taking turns), cached hits ran at 565-567 k/s on one thread and
// 1,097-1,104 k/s on two with that lock, and at 702-781 k/s and
// 1,141-1,240 k/s with the mutex: the per-thread counter's lookup and two
// sequentially consistent operations cost more than an uncontended lock,
// and two threads rarely meet on one of the 16 shards.
// The key's hash picks the shard (high bits) and the home slot in the
// shard's index (low bits).
#include "util/cache.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "util/mutex.h"
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

  Mutex lock;
  size_t capacity = 0;  // set once, before any use
  size_t usage GUARDED_BY(lock) = 0;
  // Sentinel of the circular list, which the hand skips. New and replaced
  // entries are linked just behind the hand, so the hand reaches them last.
  Entry clock GUARDED_BY(lock);
  Entry* hand GUARDED_BY(lock) = nullptr;
  // The index: open addressing with linear probing over a power-of-two
  // array, at most 3/4 full. An entry sits at the slot its hash's low bits
  // pick or after it, with no empty slot in between. A hit reads the home
  // slot (four to a cache line, so a probe rarely leaves it) and then the
  // entry; a chained hash map read a bucket, the node before the entry's
  // and the entry's, one dependent cache miss after the other.
  std::unique_ptr<Slot[]> slots GUARDED_BY(lock);
  // slots' size - 1 (0 while there is no array)
  size_t slot_mask GUARDED_BY(lock) = 0;
  size_t count GUARDED_BY(lock) = 0;  // entries
  // Tags (hash | 1) of keys that missed while the shard was full and were
  // not admitted, one per slot, the newest winning: empty until the shard
  // first evicts, then sized to about twice the entries it held.
  std::unique_ptr<std::atomic<uint64_t>[]> recent_misses GUARDED_BY(lock);
  size_t recent_miss_slots GUARDED_BY(lock) = 0;

  static void Unlink(Entry* e) {
    e->prev->next = e->next;
    e->next->prev = e->prev;
  }
  void LinkBehindHand(Entry* e) REQUIRES(lock) {
    e->next = hand;
    e->prev = hand->prev;
    hand->prev->next = e;
    hand->prev = e;
  }
  // The slot holding key (whose hash is h), or nullptr.
  Slot* FindSlot(const CacheKey& key, uint64_t h) const REQUIRES(lock) {
    if (slots == nullptr) return nullptr;
    for (size_t i = h & slot_mask;; i = (i + 1) & slot_mask) {
      Slot& slot = slots[i];
      if (slot.entry == nullptr) return nullptr;
      if (slot.hash == h && slot.entry->key == key) return &slot;
    }
  }
  // Read side: the entry for key (hash h), marked referenced, or nullptr.
  Entry* Find(const CacheKey& key, uint64_t h) REQUIRES(lock) {
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
  // Find, and on a miss *admit: whether the caller should insert the value
  // (Cache::Lookup(key, admit)).
  Entry* FindOrAdmit(const CacheKey& key, uint64_t h, bool* admit)
      REQUIRES(lock) {
    if (Entry* e = Find(key, h)) return e;
    if (recent_miss_slots == 0 || usage < capacity - capacity / 8) {
      *admit = true;
      return nullptr;
    }
    // The low bits pick the slot; the shard came from the high bits.
    std::atomic<uint64_t>& slot = recent_misses[h & (recent_miss_slots - 1)];
    const uint64_t tag = h | 1;
    *admit = slot.load(std::memory_order_relaxed) == tag;
    slot.store(*admit ? 0 : tag, std::memory_order_relaxed);
    return nullptr;
  }
  // Adds e, whose key (hash h) is not in the index.
  void IndexInsert(Entry* e, uint64_t h) REQUIRES(lock) {
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
  void Place(const Slot& slot) REQUIRES(lock) {
    size_t i = slot.hash & slot_mask;
    while (slots[i].entry != nullptr) i = (i + 1) & slot_mask;
    slots[i] = slot;
  }
  // Empties a slot, moving back the entries after it that may no longer
  // be reached past the hole (no tombstones, so probes stay short).
  void IndexErase(Slot* slot) REQUIRES(lock) {
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
  void Erase(Entry* e) REQUIRES(lock) {
    if (hand == e) hand = e->next;
    usage -= e->charge;
    Unlink(e);
    IndexErase(FindSlot(e->key, HashCacheKey(e->key)));
    delete e;
  }
  // Sweeps until usage fits: a referenced entry loses its bit and is
  // passed, the first one found clear is evicted. Ends within two turns.
  void EvictToCapacity() REQUIRES(lock) {
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
  MutexLock guard(&s.lock);
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


std::shared_ptr<const void> Cache::Lookup(const CacheKey& key) {
  const uint64_t h = HashCacheKey(key);
  Shard& s = shards_[ShardIndex(h, shard_bits_)];
  MutexLock guard(&s.lock);
  Shard::Entry* e = s.Find(key, h);
  return e != nullptr ? e->value : nullptr;
}

std::shared_ptr<const void> Cache::Lookup(const CacheKey& key, bool* admit) {
  const uint64_t h = HashCacheKey(key);
  Shard& s = shards_[ShardIndex(h, shard_bits_)];
  MutexLock guard(&s.lock);
  Shard::Entry* e = s.FindOrAdmit(key, h, admit);
  return e != nullptr ? e->value : nullptr;
}

bool Cache::Read(const CacheKey& key, bool* admit,
                 void (*read)(const void* value, void* arg), void* arg) {
  const uint64_t h = HashCacheKey(key);
  Shard& s = shards_[ShardIndex(h, shard_bits_)];
  MutexLock guard(&s.lock);
  Shard::Entry* e = s.FindOrAdmit(key, h, admit);
  if (e == nullptr) return false;
  read(e->value.get(), arg);
  return true;
}

void Cache::Erase(const CacheKey& key) {
  const uint64_t h = HashCacheKey(key);
  Shard& s = shards_[ShardIndex(h, shard_bits_)];
  MutexLock guard(&s.lock);
  if (Shard::Slot* slot = s.FindSlot(key, h)) s.Erase(slot->entry);
}

void Cache::EraseId(uint64_t id) {
  const size_t n = size_t{1} << shard_bits_;
  for (size_t i = 0; i < n; i++) {
    Shard& s = shards_[i];
    MutexLock guard(&s.lock);
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
    MutexLock guard(&s.lock);
    total += s.usage;
  }
  return total;
}

size_t Cache::capacity() const { return capacity_; }

}  // namespace bloomkv
