// ShardedCounters: counters that many threads add to at once, spread over
// cache-line-sized shards so that threads on different cores do not fight
// over one line. A thread always adds to the shard of its thread index, so
// in the common case (no more threads than shards) each line is written by
// one core only; the sum is only formed when somebody asks for it.
//
// ThisThreadIndex() hands each live thread a small number; a thread that
// exits returns it for reuse, so the numbers stay dense and threads map
// onto distinct shards and cache slots as long as there are few enough.
//
// A thread whose index is below kCounterShards is the only writer of its
// shard, so its Add is a plain load and store, not a locked instruction
// (on x86 also a full fence, which a lookup's eight or so counter updates
// each paid; the change measured within noise, docs/benchmarks.md "Hit
// path"). Threads beyond that many share one more shard, with fetch_add.
//
// Thread-safety: thread-safe. Add is wait-free. Sum adds up every shard:
// exact for additions that happen-before the call (e.g. of threads joined
// since), approximate while others still add.
#ifndef BLOOMKV_UTIL_SHARDED_COUNTER_H_
#define BLOOMKV_UTIL_SHARDED_COUNTER_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace bloomkv {

// Assumed size of a cache line: the unit of false sharing.
constexpr size_t kCacheLineSize = 64;
// Shards per counter group written by one thread each. Threads beyond this
// many live at once share one further shard: still exact, with some
// contention again.
constexpr size_t kCounterShards = 16;

// The calling thread's index: unique among live threads, smallest free
// number first. The first call in a thread takes a global lock; later
// calls read a thread-local variable.
size_t ThisThreadIndex();

// N counters, addressed by index (an enum in the user).
template <size_t N>
class ShardedCounters {
 public:
  class alignas(kCacheLineSize) Shard {
   public:
    // Returns this shard's part of `counter` with n added.
    [[gnu::always_inline]] uint64_t Add(size_t counter, uint64_t n) {
      std::atomic<uint64_t>& v = v_[counter];
      if (shared_) return v.fetch_add(n, std::memory_order_relaxed) + n;
      const uint64_t sum = v.load(std::memory_order_relaxed) + n;
      v.store(sum, std::memory_order_relaxed);
      return sum;
    }

   private:
    friend class ShardedCounters;
    bool shared_ = false;
    std::atomic<uint64_t> v_[N] = {};
  };

  ShardedCounters() { shards_[kCounterShards].shared_ = true; }
  ShardedCounters(const ShardedCounters&) = delete;
  ShardedCounters& operator=(const ShardedCounters&) = delete;

  // The shard of the thread with index thread_index; callers adding
  // several counters fetch ThisThreadIndex() once.
  Shard& ShardFor(size_t thread_index) {
    return shards_[std::min(thread_index, kCounterShards)];
  }
  void Add(size_t counter, uint64_t n) {
    ShardFor(ThisThreadIndex()).Add(counter, n);
  }
  uint64_t Sum(size_t counter) const {
    uint64_t sum = 0;
    for (const Shard& s : shards_) {
      sum += s.v_[counter].load(std::memory_order_relaxed);
    }
    return sum;
  }

 private:
  // One per thread index below kCounterShards, then the shared one.
  Shard shards_[kCounterShards + 1];
};

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_SHARDED_COUNTER_H_
