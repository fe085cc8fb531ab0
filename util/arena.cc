// Arena block management; see arena.h.
#include "util/arena.h"

#include <cassert>
#include <cstdint>

namespace bloomkv {

Arena::Arena(size_t block_size) : block_size_(block_size) {
  assert(block_size >= 64);
}

Arena::~Arena() = default;

char* Arena::AllocateFallback(size_t bytes) {
  assert(bytes > 0);
  if (bytes > block_size_ / 4) {
    // Keeps the current block for the small requests that follow, so at most
    // a quarter of a block is ever wasted by switching blocks.
    return AllocateNewBlock(bytes);
  }
  // The tail of the current block (less than `bytes`) is abandoned.
  alloc_ptr_ = AllocateNewBlock(block_size_);
  alloc_bytes_remaining_ = block_size_;
  char* result = alloc_ptr_;
  alloc_ptr_ += bytes;
  alloc_bytes_remaining_ -= bytes;
  return result;
}

char* Arena::AllocateAligned(size_t bytes, size_t alignment) {
  assert(bytes > 0);
  assert(alignment > 0 && (alignment & (alignment - 1)) == 0);
  assert(alignment <= kMaxAlignment);
  const size_t misalignment =
      reinterpret_cast<uintptr_t>(alloc_ptr_) & (alignment - 1);
  const size_t slop = misalignment == 0 ? 0 : alignment - misalignment;
  if (alloc_bytes_remaining_ >= slop &&
      bytes <= alloc_bytes_remaining_ - slop) {
    char* result = alloc_ptr_ + slop;
    alloc_ptr_ += slop + bytes;
    alloc_bytes_remaining_ -= slop + bytes;
    return result;
  }
  // A fresh block starts at an operator new[] address, which is aligned to
  // at least kMaxAlignment.
  char* result = AllocateFallback(bytes);
  assert((reinterpret_cast<uintptr_t>(result) & (alignment - 1)) == 0);
  return result;
}

char* Arena::AllocateNewBlock(size_t block_bytes) {
  blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_bytes));
  // Counts the slot in blocks_ too: with many huge allocations it matters.
  memory_usage_.store(MemoryUsage() + block_bytes + sizeof(blocks_[0]),
                      std::memory_order_relaxed);
  return blocks_.back().get();
}

}  // namespace bloomkv
