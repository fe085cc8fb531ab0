// ReadViewCache: lock-free pinning of the current read view; see
// read_view.h for the protocol.
#include "db/read_view.h"

namespace bloomkv {
namespace {

// Marks a slot whose view a read is using right now. Never dereferenced.
ReadView* const kInUse = reinterpret_cast<ReadView*>(alignof(ReadView));

}  // namespace

ReadViewCache::ReadViewCache() = default;

ReadViewCache::~ReadViewCache() {
  for (Slot& slot : slots_) {
    ReadView* v = slot.view.exchange(nullptr, std::memory_order_acquire);
    if (v != nullptr && v != kInUse) v->Unref();
  }
  MutexLock guard(&mu_);
  if (current_ != nullptr) current_->Unref();
}

void ReadViewCache::Install(ReadView* view) {
  ReadView* old;
  {
    MutexLock guard(&mu_);
    view->generation_ = generation_.load(std::memory_order_relaxed) + 1;
    old = current_;
    current_ = view;
    generation_.store(view->generation_, std::memory_order_release);
  }
  if (old != nullptr) old->Unref();
  // Take back every cached view. A slot in use becomes empty too, so the
  // read using it drops its view at Release instead of caching it again.
  for (Slot& slot : slots_) {
    ReadView* v = slot.view.exchange(nullptr, std::memory_order_acq_rel);
    if (v != nullptr && v != kInUse) v->Unref();
  }
}

ReadView* ReadViewCache::Acquire(size_t thread) {
  Slot& slot = SlotOf(thread);
  ReadView* v = slot.view.exchange(kInUse, std::memory_order_acquire);
  if (v != nullptr && v != kInUse) {
    if (v->generation_ == generation_.load(std::memory_order_acquire)) {
      return v;
    }
    v->Unref();  // installed over since this thread cached it
  }
  return AcquireCurrent();
}

ReadView* ReadViewCache::AcquireCurrent() {
  MutexLock guard(&mu_);
  current_->Ref();
  return current_;
}

void ReadViewCache::Release(size_t thread, ReadView* view) {
  ReadView* expected = kInUse;
  if (!SlotOf(thread).view.compare_exchange_strong(expected, view,
                                                   std::memory_order_acq_rel,
                                                   std::memory_order_relaxed)) {
    view->Unref();  // Install emptied the slot: the view may be stale
  }
}

}  // namespace bloomkv
