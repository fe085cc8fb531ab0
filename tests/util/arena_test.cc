// Tests for Arena: contents survive later allocations, alignment, block
// policy for large requests, and memory accounting.
#include "util/arena.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

TEST(ArenaTest, EmptyUsesNoMemory) {
  Arena arena;
  EXPECT_EQ(0u, arena.MemoryUsage());
}

TEST(ArenaTest, SmallAllocationsAreContiguousWithinABlock) {
  Arena arena(4096);
  char* a = arena.Allocate(10);
  char* b = arena.Allocate(20);
  EXPECT_EQ(a + 10, b);
  const size_t usage = arena.MemoryUsage();
  EXPECT_GE(usage, 4096u);
  arena.Allocate(30);
  EXPECT_EQ(usage, arena.MemoryUsage());  // Still in the first block.
}

TEST(ArenaTest, LargeAllocationGetsItsOwnBlock) {
  Arena arena(4096);
  char* a = arena.Allocate(8);
  const size_t before = arena.MemoryUsage();
  char* big = arena.Allocate(100000);
  ASSERT_NE(nullptr, big);
  EXPECT_GE(arena.MemoryUsage(), before + 100000);
  std::memset(big, 0xab, 100000);
  // The current block was kept for small requests.
  char* b = arena.Allocate(8);
  EXPECT_EQ(a + 8, b);
  // A request over a quarter block that no longer fits in the current block
  // also gets its own block rather than abandoning the current one.
  char* c = arena.Allocate(3000);
  EXPECT_EQ(b + 8, c);  // Still fits: served from the current block.
  char* d = arena.Allocate(4096 / 4 + 100);
  EXPECT_NE(c + 3000, d);
  EXPECT_EQ(c + 3000, arena.Allocate(8));
}

TEST(ArenaTest, AlignedAllocations) {
  Arena arena(4096);
  for (size_t alignment = 1; alignment <= Arena::kMaxAlignment;
       alignment *= 2) {
    SCOPED_TRACE("alignment=" + std::to_string(alignment));
    for (int i = 0; i < 200; i++) {
      arena.Allocate(1 + i % 7);  // Knock the bump pointer off alignment.
      const size_t size = 1 + (i * 37) % 1500;  // Some need a new block.
      char* p = arena.AllocateAligned(size, alignment);
      EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(p) % alignment);
      std::memset(p, 0x5a, size);
    }
  }
  char* p = arena.AllocateAligned(3);
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(p) % Arena::kDefaultAlignment);
}

// Allocations of random sizes, each filled with its own pattern, must all
// keep their contents to the end; usage covers at least what was asked.
TEST(ArenaTest, RandomAllocationsKeepTheirContents) {
  for (uint32_t seed : {1u, 2u, 3u, 301u}) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937 rnd(seed);
    Arena arena;
    std::vector<std::pair<char*, size_t>> allocated;
    size_t total = 0;
    size_t last_usage = 0;
    for (int i = 0; i < 3000; i++) {
      size_t size;
      const uint32_t r = rnd() % 100;
      if (r < 1) {
        size = 1 + rnd() % 50000;  // Large: own block.
      } else if (r < 10) {
        size = 1 + rnd() % 2000;
      } else {
        size = 1 + rnd() % 40;
      }
      char* p =
          (rnd() % 2 == 0) ? arena.Allocate(size) : arena.AllocateAligned(size);
      for (size_t j = 0; j < size; j++) p[j] = static_cast<char>(i + j);
      allocated.emplace_back(p, size);
      total += size;
      ASSERT_GE(arena.MemoryUsage(), total);
      ASSERT_GE(arena.MemoryUsage(), last_usage);
      last_usage = arena.MemoryUsage();
    }
    // No block is wasted wholesale: small requests fill their blocks.
    EXPECT_LE(arena.MemoryUsage(), total + total / 2 + 8192);
    for (size_t i = 0; i < allocated.size(); i++) {
      const auto [p, size] = allocated[i];
      for (size_t j = 0; j < size; j++) {
        ASSERT_EQ(static_cast<char>(i + j), p[j]) << "allocation " << i;
      }
    }
  }
}

// MemoryUsage() may be polled by other threads while one thread allocates
// (meaningful under ThreadSanitizer).
TEST(ArenaTest, MemoryUsageReadableConcurrently) {
  Arena arena;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    size_t last = 0;
    while (!done.load(std::memory_order_acquire)) {
      const size_t now = arena.MemoryUsage();
      EXPECT_GE(now, last);
      last = now;
    }
  });
  for (int i = 0; i < 20000; i++) arena.Allocate(1 + i % 300);
  done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_GT(arena.MemoryUsage(), 20000u);
}

}  // namespace
}  // namespace bloomkv
