// Arena: a bump allocator for many small objects that all die together.
//
// The memtable copies every entry and every skiplist node into one Arena and
// frees them all at once when the memtable is dropped, so allocation is a
// pointer bump and there is no per-object free. Requests larger than a
// quarter of a block get a block of their own, so a big value never wastes
// the unused tail of the current block.
//
// Thread-safety: Allocate() and AllocateAligned() require external
// synchronization (one allocating thread at a time). MemoryUsage() may be
// called from any thread at any time, concurrently with allocation. Memory
// handed out stays valid, at a fixed address, until the Arena is destroyed.
#ifndef BLOOMKV_UTIL_ARENA_H_
#define BLOOMKV_UTIL_ARENA_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

namespace bloomkv {

class Arena {
 public:
  // Every block handed out by operator new[] is at least this aligned, which
  // bounds the alignment AllocateAligned() can offer without over-allocating.
  static constexpr size_t kMaxAlignment = __STDCPP_DEFAULT_NEW_ALIGNMENT__;
  static constexpr size_t kDefaultAlignment = alignof(void*);

  // block_size: size of the regular blocks. REQUIRES: block_size >= 64.
  explicit Arena(size_t block_size = kDefaultBlockSize);
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena();

  // Returns `bytes` bytes of uninitialized memory with no alignment promise.
  // REQUIRES: bytes > 0
  char* Allocate(size_t bytes);

  // Like Allocate, but the result is a multiple of `alignment`.
  // REQUIRES: bytes > 0; alignment is a power of two <= kMaxAlignment.
  char* AllocateAligned(size_t bytes, size_t alignment = kDefaultAlignment);

  // Bytes obtained from the system so far (blocks plus bookkeeping); never
  // decreases. This is what limits a memtable's size, so it counts the unused
  // tails of blocks too.
  size_t MemoryUsage() const {
    return memory_usage_.load(std::memory_order_relaxed);
  }

 private:
  static constexpr size_t kDefaultBlockSize = 4096;

  char* AllocateFallback(size_t bytes);
  char* AllocateNewBlock(size_t block_bytes);

  const size_t block_size_;
  // The unused part of the current block: [alloc_ptr_, alloc_ptr_ +
  // remaining_).
  char* alloc_ptr_ = nullptr;
  size_t alloc_bytes_remaining_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  // Written only by the allocating thread; atomic so readers may poll it.
  std::atomic<size_t> memory_usage_{0};
};

inline char* Arena::Allocate(size_t bytes) {
  // A zero-byte request has no sensible meaning (it could return the same
  // address twice), so callers must not make one.
  if (bytes <= alloc_bytes_remaining_ && bytes > 0) {
    char* result = alloc_ptr_;
    alloc_ptr_ += bytes;
    alloc_bytes_remaining_ -= bytes;
    return result;
  }
  return AllocateFallback(bytes);
}

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_ARENA_H_
