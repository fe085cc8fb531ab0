// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable
// with the capability annotations clang's -Wthread-safety checks
// (util/thread_annotations.h). libstdc++'s own types carry none, so code
// that locks them cannot be checked; every lock in the library is one of
// these instead.
//
// A thread role (ThreadRole) is a capability without a lock: it marks state
// that one thread at a time owns by protocol (the writer at the front of
// the write queue), so the compiler checks that only code that has taken
// the role touches that state.
// Thread-safety: Mutex and CondVar are thread-safe; MutexLock and
// ScopedRole belong to the thread that made them.
#ifndef BLOOMKV_UTIL_MUTEX_H_
#define BLOOMKV_UTIL_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "util/thread_annotations.h"

namespace bloomkv {

class CondVar;

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds *mu from construction to destruction.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// As MutexLock, but Release() may give the mutex up before the end of the
// scope (then the destructor does nothing).
class SCOPED_CAPABILITY ReleasableMutexLock {
 public:
  explicit ReleasableMutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~ReleasableMutexLock() RELEASE() {
    if (mu_ != nullptr) mu_->Unlock();
  }
  void Release() RELEASE() {
    mu_->Unlock();
    mu_ = nullptr;
  }
  ReleasableMutexLock(const ReleasableMutexLock&) = delete;
  ReleasableMutexLock& operator=(const ReleasableMutexLock&) = delete;

 private:
  Mutex* mu_;
};

// A condition variable. Every wait names the Mutex it releases while it
// waits, which the caller holds and holds again when the wait returns; all
// waiters of one CondVar use the same Mutex. Waits may wake spuriously:
// callers loop on their condition.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's, not this scope's
  }
  // As Wait, but returns false once `deadline` has passed (and true when
  // woken before it, spuriously or not).
  bool WaitUntil(Mutex* mu, std::chrono::steady_clock::time_point deadline)
      REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool woken = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

// A role that one thread at a time takes by protocol; see the file comment.
// Acquire and Release cost nothing at run time.
class CAPABILITY("role") ThreadRole {
 public:
  void Acquire() ACQUIRE() {}
  void Release() RELEASE() {}
};

// Holds *role from construction to destruction.
class SCOPED_CAPABILITY ScopedRole {
 public:
  explicit ScopedRole(ThreadRole* role) ACQUIRE(role) : role_(role) {
    role_->Acquire();
  }
  ~ScopedRole() RELEASE() { role_->Release(); }
  ScopedRole(const ScopedRole&) = delete;
  ScopedRole& operator=(const ScopedRole&) = delete;

 private:
  ThreadRole* const role_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_MUTEX_H_
