// MappedRegions; see mapped_regions.h.
#include "util/mapped_regions.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <vector>

#include "util/mutex.h"

namespace bloomkv {
namespace {

// The registry: slots in chunks allocated as registrations need them and
// never freed, so that the handler can read any slot it finds without a
// lock and without the chunk going away under it.
constexpr int kChunkSlots = 4096;
constexpr int kMaxChunks = 256;  // 2^20 regions at once

struct Slot {
  std::atomic<bool> live{false};
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  // The first address that reads zeros instead of the file; UINTPTR_MAX
  // while the region is intact.
  std::atomic<uintptr_t> lost_from{UINTPTR_MAX};
};
static_assert(std::atomic<uintptr_t>::is_always_lock_free &&
                  std::atomic<bool>::is_always_lock_free,
              "the signal handler may only use lock-free atomics");

struct Chunk {
  Slot slots[kChunkSlots];
};

std::atomic<Chunk*> chunks[kMaxChunks];
// Slots [0, handed_out) were given out at some time; the handler looks at
// no others.
std::atomic<int> handed_out{0};
uintptr_t page_size = 4096;
// The SIGBUS action found when the handler was installed. Written once,
// before the handler is.
struct sigaction previous_action;

// What registration changes besides the slots.
struct Registration {
  Mutex mu;
  bool handler_tried GUARDED_BY(mu) = false;
  bool handler_installed GUARDED_BY(mu) = false;
  std::vector<int> free_slots GUARDED_BY(mu);  // given back, for reuse
};
Registration& TheRegistration() {
  static auto* registration = new Registration;  // never destroyed
  return *registration;
}

Slot* SlotAt(int i) {
  Chunk* chunk = chunks[i / kChunkSlots].load(std::memory_order_acquire);
  return chunk == nullptr ? nullptr : &chunk->slots[i % kChunkSlots];
}

// Hands a SIGBUS that no registered region explains to the action that was
// there before.
void Forward(int sig, siginfo_t* info, void* context) {
  if ((previous_action.sa_flags & SA_SIGINFO) != 0) {
    if (previous_action.sa_sigaction != nullptr) {
      previous_action.sa_sigaction(sig, info, context);
      return;
    }
  } else if (previous_action.sa_handler != SIG_DFL &&
             previous_action.sa_handler != SIG_IGN) {
    previous_action.sa_handler(sig);
    return;
  }
  // The default action (an ignored SIGBUS would only repeat the faulting
  // load forever): restored, so that the fault, repeated when this handler
  // returns, ends the process as it would have. A SIGBUS sent with kill is
  // raised again instead.
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(sig, &default_action, nullptr);
  if (info->si_code <= 0) raise(sig);
}

void OnSigbus(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  const int n = info->si_code > 0 ? handed_out.load(std::memory_order_acquire)
                                  : 0;  // sent, not a fault
  for (int i = 0; i < n; i++) {
    Slot* slot = SlotAt(i);
    if (slot == nullptr || !slot->live.load(std::memory_order_acquire)) {
      continue;
    }
    const uintptr_t begin = slot->begin.load(std::memory_order_relaxed);
    const uintptr_t end = slot->end.load(std::memory_order_relaxed);
    if (addr < begin || addr >= end) continue;
    const uintptr_t from = addr & ~(page_size - 1);
    // Recorded before the zeros appear, so that a reader that meets them
    // without a fault of its own and asks afterwards learns of them.
    uintptr_t was = slot->lost_from.load(std::memory_order_relaxed);
    while (from < was && !slot->lost_from.compare_exchange_weak(was, from)) {
    }
    const uintptr_t to = (end + page_size - 1) & ~(page_size - 1);
    // The system call itself, not mmap(3): nothing else (a sanitizer's
    // interceptor) runs inside the handler.
    const long mapped = syscall(SYS_mmap, from, to - from, PROT_READ,
                                MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
    errno = saved_errno;
    if (mapped != -1) return;  // the load runs again and reads zeros
    break;
  }
  errno = saved_errno;
  Forward(sig, info, context);
}

bool InstallHandler() {
  page_size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  if (sigaction(SIGBUS, nullptr, &previous_action) != 0) return false;
  struct sigaction action = {};
  action.sa_sigaction = OnSigbus;
  // On the thread's alternate stack if it has one: a fault may come from
  // a thread whose stack is nearly used up.
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  return sigaction(SIGBUS, &action, nullptr) == 0;
}

}  // namespace

int MappedRegions::Register(const void* base, size_t length) {
  Registration& r = TheRegistration();
  MutexLock lock(&r.mu);
  if (!r.handler_tried) {
    r.handler_tried = true;
    r.handler_installed = InstallHandler();
  }
  if (!r.handler_installed) return -1;
  int index;
  if (!r.free_slots.empty()) {
    index = r.free_slots.back();
    r.free_slots.pop_back();
  } else {
    index = handed_out.load(std::memory_order_relaxed);
    if (index >= kChunkSlots * kMaxChunks) return -1;
    std::atomic<Chunk*>& chunk = chunks[index / kChunkSlots];
    if (chunk.load(std::memory_order_relaxed) == nullptr) {
      chunk.store(new Chunk, std::memory_order_release);
    }
    handed_out.store(index + 1, std::memory_order_release);
  }
  Slot* slot = SlotAt(index);
  const auto begin = reinterpret_cast<uintptr_t>(base);
  slot->begin.store(begin, std::memory_order_relaxed);
  slot->end.store(begin + length, std::memory_order_relaxed);
  slot->lost_from.store(UINTPTR_MAX, std::memory_order_relaxed);
  slot->live.store(true, std::memory_order_release);
  return index;
}

void MappedRegions::Unregister(int index) {
  Registration& r = TheRegistration();
  MutexLock lock(&r.mu);
  SlotAt(index)->live.store(false, std::memory_order_release);
  r.free_slots.push_back(index);
}

uint64_t MappedRegions::LostFrom(int index) {
  const Slot* slot = SlotAt(index);
  const uintptr_t from = slot->lost_from.load(std::memory_order_acquire);
  if (from == UINTPTR_MAX) return kIntact;
  return from - slot->begin.load(std::memory_order_relaxed);
}

}  // namespace bloomkv
