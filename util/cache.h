// Cache: a sharded CLOCK cache of immutable objects, charged in bytes.
//
// Used as the block cache: keys are a segment's cache id plus a block offset
// (a fixed-size CacheKey, hashed with a few multiplications: a lookup
// allocates nothing), values are uncompressed blocks. Values are shared_ptr,
// so an entry evicted while a reader still holds it stays alive until the
// reader lets go.
// Eviction is CLOCK (second chance): a lookup marks its entry referenced,
// and when a shard is over capacity its hand sweeps the entries in the order
// they were inserted, clearing marks, and evicts the first entry it finds
// unmarked. Close to LRU for a block cache, but a lookup changes no list.
// Thread-safety: thread-safe. Lookups of one shard run concurrently and
// write no cache line in common; inserts and erases exclude them.
#ifndef BLOOMKV_UTIL_CACHE_H_
#define BLOOMKV_UTIL_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace bloomkv {

// Names one cached object: the id of its owner (from Cache::NewId, one per
// open file) and its offset within the owner.
struct CacheKey {
  uint64_t id = 0;
  uint64_t offset = 0;

  bool operator==(const CacheKey&) const = default;
};

class Cache {
 public:
  // capacity: total charge kept before entries not read lately are
  // evicted, split evenly among 2^num_shard_bits shards.
  explicit Cache(size_t capacity, int num_shard_bits = 4);
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;
  ~Cache();

  // Inserts or replaces the entry for key, marked referenced and reached
  // last by the hand. An entry whose charge exceeds a shard's capacity is
  // not kept.
  void Insert(const CacheKey& key, std::shared_ptr<const void> value,
              size_t charge);
  // The value for key (and marks it referenced), or nullptr.
  std::shared_ptr<const void> Lookup(const CacheKey& key);
  // The same, and on a miss sets *admit to whether the caller should Insert
  // the value it is about to produce. While the key's shard is less than
  // 7/8 full, always. Once it is full, only a key that also missed a short
  // while ago (the shard remembers about twice as many recent misses as it
  // holds entries): a flood of reads spread over far more data than the
  // cache holds then neither evicts the entries that are read again and
  // again nor pays to insert and evict an entry per read, while an entry
  // read twice within the window of recent misses gets in.
  std::shared_ptr<const void> Lookup(const CacheKey& key, bool* admit);
  // Lookup(key, admit) for a caller that only copies something out of the
  // value: on a hit, calls read(value, arg) with the key's shard locked and
  // returns true, touching no reference count (a hot entry read by several
  // cores then has no count whose cache line they take turns to write).
  // read must be short and must not call into this cache.
  bool Read(const CacheKey& key, bool* admit,
            void (*read)(const void* value, void* arg), void* arg);
  void Erase(const CacheKey& key);
  // Erases every entry whose key has this id (all blocks of one file).
  // Walks every entry of the cache: for when a file goes away, not for hot
  // paths.
  void EraseId(uint64_t id);

  // A process-unique id, for building keys that never collide across
  // the users of one cache.
  uint64_t NewId();

  size_t TotalCharge() const;
  size_t capacity() const;

 private:
  struct Shard;
  const size_t capacity_;
  const int shard_bits_;
  std::unique_ptr<Shard[]> shards_;
  std::atomic<uint64_t> next_id_{1};
};

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_CACHE_H_
