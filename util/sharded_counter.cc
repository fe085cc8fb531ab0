// Thread indices for sharded counters and per-thread cache slots.
// Thread-safety: thread-safe.
#include "util/sharded_counter.h"

#include <set>

#include "util/mutex.h"

namespace bloomkv {
namespace {

// The free numbers, shared by all threads. Never destroyed: threads may
// exit (and return their number) after static destructors have run.
struct IndexRegistry {
  Mutex mu;
  std::set<size_t> free GUARDED_BY(mu);  // returned by exited threads
  size_t next GUARDED_BY(mu) = 0;        // never handed out yet
};

IndexRegistry* Registry() {
  static IndexRegistry* registry = new IndexRegistry;
  return registry;
}

// Holds the thread's number from its first use until the thread exits.
class ThreadIndex {
 public:
  ThreadIndex() {
    IndexRegistry* r = Registry();
    MutexLock guard(&r->mu);
    if (r->free.empty()) {
      index_ = r->next++;
    } else {
      index_ = *r->free.begin();
      r->free.erase(r->free.begin());
    }
  }
  ~ThreadIndex() {
    IndexRegistry* r = Registry();
    MutexLock guard(&r->mu);
    r->free.insert(index_);
  }
  ThreadIndex(const ThreadIndex&) = delete;
  ThreadIndex& operator=(const ThreadIndex&) = delete;

  size_t index() const { return index_; }

 private:
  size_t index_;
};

}  // namespace

size_t ThisThreadIndex() {
  thread_local ThreadIndex index;
  return index.index();
}

}  // namespace bloomkv
